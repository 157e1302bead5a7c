"""The §9.1 SQLite store: structure, rows through the canonical rules, tool_calls."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance import validate
from conformance.cli import main
from conformance.convert import convert
from conformance.core.errors import InputError

VALID = Path(__file__).parent / "rules" / "canonical" / "valid.jsonl"
TOOL_ID = "tu_01JZ0000000000000000000T01"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "store.db"
    assert convert("canonical", "sqlite", VALID, db) == []
    return db


def mutate(db: Path, *sql: str) -> Path:
    con = sqlite3.connect(db)
    con.execute("PRAGMA foreign_keys = OFF")
    for s in sql:
        con.execute(s)
    con.commit()
    con.close()
    return db


def found(db: Path, **kw: object) -> list[tuple[str, str]]:
    return [(f.rule, f.pointer) for f in validate([db], **kw).findings]  # type: ignore[arg-type]


def test_converted_store_is_valid_and_detected(store: Path) -> None:
    report = validate([store])
    assert report.findings == [] and report.files[0].format == "sqlite" and report.files[0].records == 5


MUTATIONS = {
    "TS501": (["DROP INDEX idx_messages_session_created"], "/messages"),
    "TS502": (["UPDATE messages SET content_json = '{}' WHERE id = '01JZ0000000000000000000002'"], "/content"),
    "TS503": (["UPDATE messages SET created_at = 'yesterday' WHERE id = '01JZ0000000000000000000002'"], "/created_at"),
    "TS504": ([f"DELETE FROM tool_calls WHERE id = '{TOOL_ID}'"], "/content"),
    "TS505": ([f"UPDATE tool_calls SET name = 'write_file' WHERE id = '{TOOL_ID}'"], "/name"),
    "TS506": (
        [f"UPDATE tool_calls SET result_message_id = '01JZ0000000000000000000005' WHERE id = '{TOOL_ID}'"],
        "/result_message_id",
    ),
    "TS507": ([f"UPDATE tool_calls SET status = 'pending' WHERE id = '{TOOL_ID}'"], "/status"),
    "TS508": (
        [
            "INSERT INTO tool_calls VALUES ('tu_01JZ0000000000000000000T09', 'sess_42', '01JZ0000000000000000000003', NULL,"
            " 'ghost', 'pending', NULL, NULL, 0, NULL)"
        ],
        "/id",
    ),
    "TS509": (["UPDATE messages SET session_id = 'sess_404' WHERE id = '01JZ0000000000000000000001'"], "/session_id"),
    "TS001": (["UPDATE messages SET metadata_json = '{\"a\": ' WHERE id = '01JZ0000000000000000000002'"], "/metadata"),
    "TS020": (
        [
            'UPDATE messages SET content_json = \'[{"type": "text", "text": 5}]\' WHERE id = \'01JZ0000000000000000000002\''
        ],
        "/content/0/text",
    ),
}


@pytest.mark.parametrize("rule", list(MUTATIONS))
def test_store_rule_fires(store: Path, rule: str) -> None:
    sql, pointer = MUTATIONS[rule]
    assert (rule, pointer) in found(mutate(store, *sql))


def test_missing_table(store: Path) -> None:
    assert ("TS501", "/tool_calls") in found(mutate(store, "DROP TABLE tool_calls"))


def test_not_a_database(tmp_path: Path) -> None:
    p = tmp_path / "x.db"
    p.write_bytes(b"SQLite format 3\x00" + b"\x00garbage" * 100)
    assert [r for r, _ in found(p)] == ["TS510"]


def test_validation_never_writes(store: Path) -> None:
    before = hashlib.sha256(store.read_bytes()).hexdigest(), store.stat().st_mtime_ns, sorted(store.parent.iterdir())
    validate([store])
    assert (
        hashlib.sha256(store.read_bytes()).hexdigest(),
        store.stat().st_mtime_ns,
        sorted(store.parent.iterdir()),
    ) == before


def test_convert_refuses_to_overwrite(store: Path) -> None:
    with pytest.raises(InputError, match="--force"):
        convert("canonical", "sqlite", VALID, store)
    convert("canonical", "sqlite", VALID, store, force=True)


def test_convert_refuses_invalid_input_and_leaves_nothing(tmp_path: Path) -> None:
    bad = Path(__file__).parent / "rules" / "canonical" / "TS020.jsonl"
    with pytest.raises(InputError):
        convert("canonical", "sqlite", bad, tmp_path / "out.db")
    assert list(tmp_path.iterdir()) == []


# -- WAL stores, hostile values (issue 9) ---------------------------------------------


def _listing(folder: Path) -> list[tuple[str, str, int]]:
    return [
        (p.name, hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in sorted(folder.iterdir())
    ]


def _wal_snapshot(store: Path, dest: Path, *sql: str) -> Path:
    """A copy of `store` in WAL mode whose last committed transaction lives only in the
    -wal file (as after a crash, or while a writer holds the store open)."""
    con = sqlite3.connect(store)
    assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    con.execute("PRAGMA wal_autocheckpoint=0")
    for s in sql:
        con.execute(s)
    con.commit()
    dest.mkdir()
    for side in ("", "-wal", "-shm"):
        src = Path(f"{store}{side}")
        if src.exists():
            (dest / src.name).write_bytes(src.read_bytes())
    con.close()
    assert (dest / "store.db-wal").stat().st_size > 0
    return dest / "store.db"


@pytest.mark.parametrize("keep_shm", [True, False])
def test_wal_store_committed_data_seen_and_nothing_created(store: Path, tmp_path: Path, keep_shm: bool) -> None:
    sql = "UPDATE messages SET content_json = '{}' WHERE id = '01JZ0000000000000000000002'"
    db = _wal_snapshot(store, tmp_path / "snap", sql)
    if not keep_shm:
        Path(f"{db}-shm").unlink()
    # the main file alone still holds the old, valid row: the change is only in the -wal
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    assert (
        con.execute("SELECT content_json FROM messages WHERE id = '01JZ0000000000000000000002'").fetchone()[0] != "{}"
    )
    con.close()
    before = _listing(db.parent)
    assert ("TS502", "/content") in found(db)
    assert _listing(db.parent) == before


def test_wal_mode_store_without_wal_file_creates_nothing(store: Path) -> None:
    con = sqlite3.connect(store)
    con.execute("PRAGMA journal_mode=WAL")
    con.close()  # a clean close checkpoints and removes -wal/-shm; the header says WAL
    assert sorted(p.name for p in store.parent.iterdir()) == ["store.db"]
    before = _listing(store.parent)
    assert main(["validate", "-q", str(store)]) == 0
    assert _listing(store.parent) == before


HOSTILE_VALUES = {
    "created_at 2**62": ("UPDATE messages SET created_at = 4611686018427387904 WHERE rowid = 2", "/created_at"),
    "created_at int64 max": ("UPDATE messages SET created_at = 9223372036854775807 WHERE rowid = 2", "/created_at"),
    "created_at int64 min": ("UPDATE messages SET created_at = -9223372036854775808 WHERE rowid = 2", "/created_at"),
    "created_at year 12000": ("UPDATE messages SET created_at = 316559692800000000 WHERE rowid = 2", "/created_at"),
    "created_at BLOB": ("UPDATE messages SET created_at = x'00ff' WHERE rowid = 2", "/created_at"),
    "id BLOB": ("UPDATE messages SET id = x'0102' WHERE rowid = 2", "/id"),
    "role BLOB": ("UPDATE messages SET role = x'ff' WHERE rowid = 2", "/role"),
    "session BLOB": ("UPDATE messages SET session_id = x'ff' WHERE rowid = 2", "/session_id"),
    "content not UTF-8": ("UPDATE messages SET content_json = CAST(x'5bff5d' AS TEXT) WHERE rowid = 2", "/content"),
}


@pytest.mark.parametrize("case", list(HOSTILE_VALUES))
def test_out_of_range_and_blob_values_are_located_findings(store: Path, case: str) -> None:
    sql, pointer = HOSTILE_VALUES[case]
    findings = validate([mutate(store, sql)]).findings
    assert any(f.rule == "TS503" and f.pointer == pointer and f.line == 2 for f in findings), findings


def test_year_one_and_year_9999_round_trip(store: Path, tmp_path: Path) -> None:
    from conformance.core.convertkit import created_at_micros
    from conformance.formats.sqlite import MAX_MICROS, MIN_MICROS, micros_to_timestamp

    assert micros_to_timestamp(MIN_MICROS) == "0001-01-01T00:00:00.000000Z"
    assert micros_to_timestamp(MAX_MICROS) == "9999-12-31T23:59:59.999999Z"
    assert created_at_micros(micros_to_timestamp(MIN_MICROS)) == MIN_MICROS
    assert created_at_micros(micros_to_timestamp(MAX_MICROS)) == MAX_MICROS


def test_convert_reads_wal_store_back(store: Path, tmp_path: Path) -> None:
    sql = "UPDATE messages SET metadata_json = '{\"x\": 1}' WHERE id = '01JZ0000000000000000000002'"
    db = _wal_snapshot(store, tmp_path / "snap", sql)
    before = _listing(db.parent)
    convert("sqlite", "canonical", db, tmp_path / "back.jsonl")
    assert '"metadata": {"x": 1}' in (tmp_path / "back.jsonl").read_text().splitlines()[1]
    assert _listing(db.parent) == before


# -- cancelled tool calls (streaming §6.2.6, issue 16) -------------------------------------


def _cancelled_session(tmp_path: Path) -> Path:
    """valid.jsonl with one more turn: an assistant message cancelled mid tool input
    (contract §5.3.3: the in-flight call keeps `{}`), never answered."""
    import json

    lines = VALID.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    extra = {
        **last,
        "id": "01JZ0000000000000000000006",
        "content": [
            {"type": "text", "text": "Let me also read"},
            {"type": "tool_use", "id": "tu_01JZ0000000000000000000T06", "name": "read_file", "input": {}},
        ],
        "metadata": {**last["metadata"], "status": "cancelled"},
        "created_at": "2026-05-08T12:00:06.000000Z",
    }
    src = tmp_path / "cancelled.jsonl"
    src.write_text("\n".join([*lines, json.dumps(extra)]) + "\n", encoding="utf-8")
    return src


def test_converter_writes_cancelled_for_a_cancelled_messages_tool_call(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    assert convert("canonical", "sqlite", _cancelled_session(tmp_path), db) == []
    con = sqlite3.connect(db)
    status = con.execute("SELECT status FROM tool_calls WHERE id = 'tu_01JZ0000000000000000000T06'").fetchone()
    con.close()
    assert status == ("cancelled",)
    assert found(db) == []


@pytest.mark.parametrize("status", ["pending", "failed"])
def test_ts507_a_cancelled_tool_call_stored_as_pending_is_an_error(tmp_path: Path, status: str) -> None:
    """streaming §6.2.6: "Any cancelled tool calls get `status: cancelled` in the tool_calls table"."""
    db = tmp_path / "c.db"
    convert("canonical", "sqlite", _cancelled_session(tmp_path), db)
    mutate(db, f"UPDATE tool_calls SET status = '{status}' WHERE id = 'tu_01JZ0000000000000000000T06'")
    assert ("TS507", "/status") in found(db)


def test_ts119_applies_to_store_rows(store: Path) -> None:
    """streaming §6.2.6 through the row's canonical rules: a stop_reason of cancelled on a
    message whose status is not cancelled is reported at the row."""
    db = mutate(
        store,
        "UPDATE messages SET metadata_json = json_set(metadata_json, '$.stop_reason', 'cancelled')"
        " WHERE id = '01JZ0000000000000000000005'",
    )
    assert ("TS119", "/metadata/status") in found(db)


# -- a live writer (issue 30.5) --------------------------------------------------------


def _open_writer(db: Path, wal: bool) -> sqlite3.Connection:
    """A writer in the middle of a transaction: its `-journal` (or `-wal`) is beside the store."""
    con = sqlite3.connect(db, timeout=30, isolation_level=None)
    if wal:
        assert con.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
        con.execute("PRAGMA wal_autocheckpoint=0")
    con.execute("BEGIN IMMEDIATE")
    con.execute("UPDATE sessions SET workspace_path = 'w'")  # an app's change: still a valid store
    if wal:
        con.execute("COMMIT")  # WAL: the -wal stays while the connection is open
    assert any(Path(f"{db}{s}").exists() for s in ("-journal", "-wal"))
    return con


@pytest.mark.parametrize("wal", [False, True], ids=["journal", "wal"])
def test_a_writer_finishing_while_validate_copies_is_not_an_error(
    store: Path, monkeypatch: pytest.MonkeyPatch, wal: bool
) -> None:
    """The writer commits (its -journal goes) or closes (its -wal goes) between the step
    that sees the sidecar and the step that copies it: validate still reads the store."""
    writer = _open_writer(store, wal)
    copyfile = shutil.copyfile

    def writer_finishes_first(src: Any, dst: Any, **kw: Any) -> Any:
        if writer is not None and str(src) == str(store):
            if not wal:
                writer.execute("COMMIT")
            writer.close()
        return copyfile(src, dst, **kw)

    monkeypatch.setattr(shutil, "copyfile", writer_finishes_first)
    try:
        assert main(["validate", "-q", str(store)]) == 0
    finally:
        writer.close()
    assert sorted(p.name for p in store.parent.iterdir()) == ["store.db"]


WRITER = """
import sqlite3, sys
from pathlib import Path
con = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
n = 0
while not Path(sys.argv[2]).exists():
    con.execute("BEGIN IMMEDIATE")
    con.execute("UPDATE sessions SET workspace_path = ?", (f"w{n}",))
    con.execute("INSERT INTO app_log VALUES (?)", (n,))
    con.execute("COMMIT")
    n += 1
    if n == 1:
        print("committing", flush=True)
con.close()
"""


def test_validate_while_a_writer_commits_in_a_loop(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another process commits as fast as it can while validate runs 20 times: every run
    reads a committed state (the store is valid in each), none fails, none creates a file."""
    mutate(store, "CREATE TABLE app_log (n INTEGER)")  # the app's own table (§9.1 allows others)
    stop = tmp_path / "stop"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(stop)], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "committing\n"
        codes, said = [], []
        for _ in range(20):
            codes.append(main(["validate", str(store)]))
            said.append(capsys.readouterr())
    finally:
        stop.touch()
        writer.wait()
    assert writer.returncode == 0
    assert codes == [0] * 20, [(c, o.out[-400:], o.err[-400:]) for c, o in zip(codes, said, strict=True) if c]
    assert sorted(p.name for p in store.parent.iterdir()) == ["stop", "store.db"]


def test_a_hot_journal_of_a_crashed_writer_is_rolled_back_in_the_copy(store: Path) -> None:
    script = (
        "import os, sqlite3, sys\n"
        "con = sqlite3.connect(sys.argv[1]); con.execute('PRAGMA cache_size=1'); con.execute('BEGIN')\n"
        "con.execute(\"UPDATE messages SET content_json = 'not json'\"); os._exit(1)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(store)], check=False)
    assert Path(f"{store}-journal").exists()  # hot: nobody holds a lock on it
    before = _listing(store.parent)
    assert main(["validate", "-q", str(store)]) == 0
    assert _listing(store.parent) == before


def test_a_session_going_back_in_time_round_trips(tmp_path: Path) -> None:
    """A message dated before the one it follows (year 1 here, a TS204 warning in the input)
    keeps its place: the store orders a session by id (§6.1), so the store holds it
    faithfully, with the same TS204 warning, and reads back to the same bytes (it was
    refused before writing while the store was read by created_at; issue 25 item 9)."""
    src = tmp_path / "in.jsonl"
    src.write_text(VALID.read_text().replace('"2026-05-08T12:00:03.000000Z"', '"0001-01-01T00:00:00.000000Z"'))
    assert "0001-01-01" in src.read_text()
    convert("canonical", "sqlite", src, tmp_path / "out.db")
    assert [(f.rule, f.line) for f in validate([tmp_path / "out.db"]).findings] == [("TS204", 3)]
    convert("sqlite", "canonical", tmp_path / "out.db", tmp_path / "back.jsonl")
    assert (tmp_path / "back.jsonl").read_bytes() == src.read_bytes()


# -- a session's order is its ids' order (§6.1; issue 25 item 9) ----------------------------

BACKDATED = {
    # the assistant's tool_use half a second before the user message it follows
    "half-second": ('"2026-05-08T12:00:03.000000Z"', '"2026-05-08T12:00:01.500000Z"'),
    # the tool result before the tool_use it answers
    "result-first": ('"2026-05-08T12:00:04.000000Z"', '"2026-05-08T12:00:02.500000Z"'),
    "year-1": ('"2026-05-08T12:00:03.000000Z"', '"0001-01-01T00:00:00.000000Z"'),
}


@pytest.mark.parametrize("case", list(BACKDATED))
def test_store_and_jsonl_of_the_same_messages_give_the_same_findings(case: str, tmp_path: Path) -> None:
    """Differential: ids increase while created_at goes back. §6.1: "ULIDs. Monotonic per
    session."; created_at may go back (TS204, a warning). The JSONL and `convert --to
    sqlite` of it give the same rules at the same places (the store read by created_at
    gave TS203/TS205 errors, and the converter refused the input)."""
    old, new = BACKDATED[case]
    src = tmp_path / "in.jsonl"
    src.write_text(VALID.read_text().replace(old, new))
    jsonl = [(f.rule, f.severity, f.line, f.pointer) for f in validate([src]).findings]
    assert [r for r, *_ in jsonl] == ["TS204"]
    convert("canonical", "sqlite", src, tmp_path / "out.db")
    store = [(f.rule, f.severity, f.line, f.pointer) for f in validate([tmp_path / "out.db"]).findings]
    assert store == jsonl


def test_a_store_is_read_in_id_order_not_created_at_order(store: Path) -> None:
    """The same reading on a store no converter wrote: the assistant message's created_at
    moved before the user message it follows is TS204 at its row, not TS203 at the next."""
    sql = "UPDATE messages SET created_at = created_at - 1500000 WHERE id = '01JZ0000000000000000000003'"
    assert found(mutate(store, sql)) == [("TS204", "/created_at")]


# -- partial messages' tool calls (§5.1.5, streaming §6.3; issue 25 item 9) -----------------


def _partial_session(tmp_path: Path, content: list[dict[str, Any]]) -> Path:
    """valid.jsonl with one more assistant message still streaming (`status: partial`)."""
    lines = VALID.read_text(encoding="utf-8").splitlines()
    extra = {**json.loads(lines[-1]), "id": "01JZ0000000000000000000006", "content": content,
             "metadata": {"status": "partial"}, "created_at": "2026-05-08T12:00:06.000000Z"}  # fmt: skip
    src = tmp_path / "partial.jsonl"
    src.write_text("\n".join([*lines, json.dumps(extra)]) + "\n", encoding="utf-8")
    return src


PARTIAL_USE = {"type": "tool_use", "id": "tu_01JZ0000000000000000000T06", "name": "read_file", "input": {"path": "a"}}


def test_a_partial_messages_pending_tool_call_is_valid(tmp_path: Path) -> None:
    """§5.1.5: a partial message "may violate other invariants"; streaming §6.3: "partial
    assistant messages may have inconsistent tool-call state". Its tool_use with a pending
    row is what a store holds mid-stream (was TS508: partial content was skipped)."""
    db = tmp_path / "p.db"
    assert convert("canonical", "sqlite", _partial_session(tmp_path, [PARTIAL_USE]), db) == []
    con = sqlite3.connect(db)
    status = con.execute("SELECT status FROM tool_calls WHERE id = 'tu_01JZ0000000000000000000T06'").fetchone()
    con.close()
    assert status == ("pending",)
    assert found(db) == []


def test_a_partial_messages_row_may_precede_its_content(tmp_path: Path) -> None:
    """The row of a call whose tool_use the partial content does not hold yet is no TS508;
    the same row naming a complete message is."""
    db = tmp_path / "p.db"
    assert convert("canonical", "sqlite", _partial_session(tmp_path, [{"type": "text", "text": "Let"}]), db) == []
    row = ("INSERT INTO tool_calls VALUES ('tu_01JZ0000000000000000000T06', 'sess_42', '{}', NULL,"
           " 'read_file', 'pending', NULL, NULL, 0, NULL)")  # fmt: skip
    assert found(mutate(db, row.format("01JZ0000000000000000000006"))) == []
    mutate(db, "DELETE FROM tool_calls WHERE id = 'tu_01JZ0000000000000000000T06'")
    assert found(mutate(db, row.format("01JZ0000000000000000000005"))) == [("TS508", "/id")]


def test_a_partial_messages_tool_call_keeps_its_row_checks(tmp_path: Path) -> None:
    """The row of a partial message's tool_use still agrees with it (TS505) and, unanswered,
    is pending (TS507): §9.1's columns say what the row holds whatever the message's status."""
    db = tmp_path / "p.db"
    convert("canonical", "sqlite", _partial_session(tmp_path, [PARTIAL_USE]), db)
    mutate(
        db, "UPDATE tool_calls SET name = 'write_file', status = 'succeeded' WHERE id = 'tu_01JZ0000000000000000000T06'"
    )
    assert sorted(found(db)) == [("TS505", "/name"), ("TS507", "/status")]


# -- a store another process holds locked is an I/O condition, never a defect (issue 41) ---

LOCKER = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()  # held until the test closes our standard input
con.execute("ROLLBACK")
"""


@pytest.fixture
def locked(store: Path) -> Any:
    """`store` held under an EXCLUSIVE lock by another process for as long as the test runs."""
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCKER, str(store)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        yield store
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def _one_locked_line(err: str, store: Path, waited: str) -> None:
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert str(store) in lines[0] and "locked by another process" in lines[0], err
    assert f"waited {waited} s" in lines[0] and "TS510" not in lines[0], err


def test_a_locked_store_is_an_io_condition_with_the_wait_named(
    locked: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`validate` waits `--lock-wait` seconds for the lock, then exits 2 with one line
    saying the store is locked and how long it waited: not TS510, a defect in the data."""
    assert main(["validate", "--lock-wait", "0.2", str(locked)]) == 2
    cap = capsys.readouterr()
    _one_locked_line(cap.err, locked, "0.2")
    assert "TS510" not in cap.out


def test_the_lock_wait_is_a_config_key(
    locked: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.turnspec]\nlock-wait = 0.1\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "-q", str(locked)]) == 2
    _one_locked_line(capsys.readouterr().err, locked, "0.1")
    assert main(["validate", "-q", "--lock-wait", "0.3", str(locked)]) == 2  # the flag wins over the key
    _one_locked_line(capsys.readouterr().err, locked, "0.3")


def test_convert_from_a_locked_store_is_an_io_condition(
    locked: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    argv = ["convert", "--from", "sqlite", "--to", "canonical", "--lock-wait", "0.2", str(locked), str(out)]
    assert main(argv) == 2
    _one_locked_line(capsys.readouterr().err, locked, "0.2")
    assert not out.exists()


@pytest.mark.parametrize("err", [errno.EACCES, errno.EIO])
def test_a_store_that_cannot_be_read_is_an_io_condition(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], err: int
) -> None:
    """A store whose bytes cannot be read once it was detected (no read permission, a
    failing disk) is not known to be bad: exit 2 and one line naming it, never TS510.
    (The test runs as root, whom no mode keeps out, so the first read of the store's
    header fails instead.)"""
    from conformance.formats import sqlite as sqlite_format

    def failing(path: Path) -> bool:
        raise OSError(err, os.strerror(err), str(path))

    monkeypatch.setattr(sqlite_format, "_is_wal", failing)
    assert main(["validate", str(store)]) == 2
    cap = capsys.readouterr()
    assert "TS510" not in cap.out and str(store) in cap.err and os.strerror(err) in cap.err, (cap.out, cap.err)


@pytest.mark.parametrize("value", ['"soon"', "-1", "true", "inf"])
def test_a_lock_wait_that_is_no_number_of_seconds_is_refused(
    value: str, store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.turnspec]\nlock-wait = {value}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "-q", str(store)]) == 2
    err = capsys.readouterr().err
    assert "pyproject.toml: [tool.turnspec] lock-wait: expected a number of seconds" in err, err


def test_replay_check_of_a_locked_store_is_an_io_condition(locked: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """replay-check reads a store as validate does (open_store): another process's lock is
    waited for --lock-wait seconds, then exit 2 saying it is locked (it read the file with
    no lock at all, past a writer mid-transaction)."""
    assert main(["replay-check", "--to", "anthropic", "--lock-wait", "0.2", str(locked)]) == 2
    out = capsys.readouterr().out
    assert f"{locked}: RC900 error: locked by another process" in out and "waited 0.2 s" in out, out


def test_replay_check_sees_what_a_wal_holds(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A committed message still in the `-wal` (a writer keeps the store open) is a session
    replay-check reads: opened immutable, the store showed only what the main file held."""
    writer = sqlite3.connect(store, isolation_level=None)
    try:
        assert writer.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
        writer.execute("PRAGMA wal_autocheckpoint=0")
        row = writer.execute("SELECT * FROM messages WHERE id = '01JZ0000000000000000000001'").fetchone()
        writer.execute("INSERT INTO sessions SELECT 'sess_wal', workspace_path, active_model, routing_policy_json, "
                       "schema_version, created_at, updated_at FROM sessions")  # fmt: skip
        writer.execute(
            "INSERT INTO messages VALUES (?, 'sess_wal', ?, ?, ?, ?, ?)", ("01JZ00000000000000000000W1", *row[2:])
        )
        assert Path(f"{store}-wal").exists()
        assert main(["replay-check", "--to", "anthropic", "-v", str(store)]) == 0
    finally:
        writer.close()
    assert "session sess_wal" in capsys.readouterr().out
