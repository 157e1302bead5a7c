"""`--resume` never answers for bytes it did not read (issue 30, item 1), and range tasks
read no more than their range when it holds no newline (item 3).

The oracle is always a fresh run with no store (`validate(..., jobs=1)`), which shares
nothing with the store: whatever is done to the input or to the store between runs, a
resumed run's report is the fresh run's, byte for byte.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import Options, validate
from conformance.api import Report, expand
from conformance.benchmarks.synthetic import messages
from conformance.core import outputs
from conformance.core.errors import InputError
from conformance.formats.canonical import CanonicalFormat
from conformance.parallel import chunks
from conformance.parallel.engine import validate_units
from conformance.parallel.store import ResumeStore, read_entry
from conformance.parallel.store import content_hash_of as store_digest

HERE = Path(__file__).parent
RULES = HERE / "rules" / "canonical"
ALL_RULES = Options(tools=RULES / "tools.json", pricing=RULES / "pricing.yaml")
CHUNK = 1500


def report_bytes(r: Report) -> bytes:
    return orjson.dumps(r.as_dict())


def fresh(f: Path) -> bytes:
    return report_bytes(validate([f], ALL_RULES, jobs=1))


def resumed(f: Path, store: Path, notes: list[str] | None = None) -> bytes:
    # function-level import: the engine's entry point with a notify hook

    r = Report()
    units = expand([f], None, [], r.problems)
    for finding in validate_units(
        units, ALL_RULES, jobs=1, resume=store, chunk_bytes=CHUNK, files=r.files, problems=r.problems,
        inputs=[str(f)], notify=None if notes is None else notes.append,
    ):  # fmt: skip
        r.add(finding)
    return report_bytes(r)


def corpus(n: int, seed: int) -> bytes:
    return b"".join(orjson.dumps(m) + b"\n" for m in messages(n, seed=seed, session_len=7))


def _keep_mtime(f: Path, data: bytes) -> None:
    st = f.stat()
    f.write_bytes(data)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # as `touch -r`, `cp -p`, `rsync -a` and tar do


# -- the reported cases, one by one ---------------------------------------------------------


def test_an_in_place_edit_keeping_size_and_mtime_is_recomputed_and_named(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(80, 1))
    store = tmp_path / "store"
    assert resumed(f, store) == fresh(f)
    data = f.read_bytes()
    at = data.index(b'"role":"user"', len(data) // 2)
    _keep_mtime(f, data[:at] + b'"role":"usex"' + data[at + 13 :])
    notes: list[str] = []
    got = resumed(f, store, notes)
    assert got == fresh(f)
    assert b"TS020" in got  # the edit is a schema violation, and it is reported
    assert len(notes) == 1 and "changed since the entry was stored" in notes[0] and str(f) in notes[0]


def test_the_cli_reports_an_edit_that_kept_size_and_mtime(tmp_path: Path) -> None:
    """The issue's reproduction: `-j2 --resume R` OK, edit in place, `touch -r`, rerun."""
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(300, 2))
    store = tmp_path / "R"
    main = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
    cmd = [sys.executable, "-c", main, "validate", "-j", "2", "--chunk-bytes", "4000", "--resume", str(store)]
    first = subprocess.run([*cmd, str(f)], capture_output=True, check=False)
    assert first.returncode == 0, first.stderr
    data = f.read_bytes()
    at = data.index(b'"role":"user"', len(data) // 3)
    _keep_mtime(f, data[:at] + b'"role":"usex"' + data[at + 13 :])
    again = subprocess.run([*cmd, str(f)], capture_output=True, check=False)
    assert again.returncode == 1, again.stdout
    assert b"TS020" in again.stdout and b"recomputed" in again.stderr


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda q: q.write_bytes(b'{"lines":0,"items":[]}'), id="an empty result"),
        pytest.param(lambda q: q.write_bytes(q.read_bytes()[:40]), id="truncated"),
        pytest.param(lambda q: q.write_bytes(q.read_bytes().replace(b'"TS020"', b'"TS021"', 1)), id="an edited result"),
    ],
)
def test_a_tampered_entry_is_recomputed_and_named(tmp_path: Path, damage: Any) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(60, 3).replace(b'"role":"user"', b'"role":"usex"', 2))
    store = tmp_path / "store"
    want = resumed(f, store)
    assert want == fresh(f) and b"TS020" in want
    hit = [q for q in store.glob("*.tsr") if b'"TS020"' in q.read_bytes()]
    assert hit
    for q in hit:
        damage(q)
    notes: list[str] = []
    assert resumed(f, store, notes) == want
    assert len(notes) == len(hit) and all("recomputed" in n for n in notes)


def test_a_dropped_finding_is_not_believed(tmp_path: Path) -> None:
    """An entry whose result was edited to drop its findings (the header kept) fails its digest."""
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(60, 4).replace(b'"role":"user"', b'"role":"usex"', 1))
    store = tmp_path / "store"
    want = resumed(f, store)
    for q in store.glob("*.tsr"):
        head, _, body = q.read_bytes().partition(b"\n")
        doc = orjson.loads(body)
        doc["items"] = [it for it in doc["items"] if it[0] != "m" or not it[4]]
        q.write_bytes(head + b"\n" + orjson.dumps(doc))
    assert resumed(f, store) == want == fresh(f)


def test_swapped_entries_are_not_believed(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(80, 5))
    store = tmp_path / "store"
    want = resumed(f, store)
    a, b, *_ = sorted(store.glob("*.tsr"))
    da, db = a.read_bytes(), b.read_bytes()
    a.write_bytes(db)
    b.write_bytes(da)
    notes: list[str] = []
    assert resumed(f, store, notes) == want
    assert len(notes) == 2 and all("another part" in n for n in notes)


def test_an_entry_that_is_a_symlink_is_neither_read_nor_written_through(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(40, 6))
    store = tmp_path / "store"
    want = resumed(f, store)
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"outside the store\n")
    entry = sorted(store.glob("*.tsr"))[0]
    good = entry.read_bytes()
    entry.unlink()
    other = tmp_path / "other.tsr"  # a link to a valid entry elsewhere is refused too
    other.write_bytes(good)
    entry.symlink_to(victim)
    notes: list[str] = []
    assert resumed(f, store, notes) == want
    assert victim.read_bytes() == b"outside the store\n"
    assert not entry.is_symlink() and entry.is_file()  # replaced by a regular entry
    assert any("symbolic link" in n for n in notes)
    entry.unlink()
    entry.symlink_to(other)
    notes.clear()
    assert resumed(f, store, notes) == want
    assert any("symbolic link" in n for n in notes)


def test_an_entry_that_is_a_fifo_does_not_hang(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(30, 7))
    store = tmp_path / "store"
    want = resumed(f, store)
    entry = sorted(store.glob("*.tsr"))[0]
    entry.unlink()
    os.mkfifo(entry)
    notes: list[str] = []
    assert resumed(f, store, notes) == want
    assert any("not a regular file" in n for n in notes)


def test_what_killed_runs_left_is_cleaned(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(30, 8))
    store = tmp_path / "store"
    resumed(f, store)
    host = outputs.host_name()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    key = "0" * 64
    stale = store / f".{key}.{host}.{int(dead.stdout)}.abcd.tmp"
    live = store / f".{key}.{host}.{os.getpid()}.abcd.tmp"
    elsewhere = store / f".{key}.another-host.{int(dead.stdout)}.abcd.tmp"
    old_stage = store / f".{key}.tsr.x1y2.turnspec"
    for p in (stale, live, elsewhere):
        p.write_bytes(b"half")
    old_stage.mkdir()
    (old_stage / f"{key}.tsr").write_bytes(b"half")
    resumed(f, store)
    assert not stale.exists() and not old_stage.exists()
    assert live.exists() and elsewhere.exists()  # a run still going, or on another machine


def test_a_store_write_that_fails_is_one_line_naming_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(30, 9))
    store = ResumeStore(tmp_path / "store", ALL_RULES, [str(f)])
    real_fsync = os.fsync

    def full(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(InputError, match=r"--resume .*store: cannot write .*No space left on device"):
        store.put(chunks.Task(str(f), 0, 10), 10, b"{}", [0, 10], "x")
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert list((tmp_path / "store").iterdir()) == []  # no temporary file left


# -- any change between runs, at random -------------------------------------------------------


@st.composite
def changes(draw: st.DrawFn) -> list[tuple[str, int, int]]:
    kinds = st.sampled_from(["edit", "flip", "truncate", "append", "swap", "empty", "drop", "cut", "rewrite"])
    return draw(st.lists(st.tuples(kinds, st.integers(0, 10**9), st.integers(0, 10**9)), min_size=1, max_size=4))


def _apply(f: Path, store: Path, change: tuple[str, int, int]) -> None:
    kind, a, b = change
    data = f.read_bytes()
    entries = sorted(store.glob("*.tsr"))
    if kind == "edit" and b'"role":"user"' in data:  # same size, same mtime
        starts = [i for i in range(len(data)) if data.startswith(b'"role":"user"', i)]
        at = starts[a % len(starts)]
        _keep_mtime(f, data[:at] + b'"role":"usex"' + data[at + 13 :])
    elif kind == "flip" and data:  # one byte changed in place, mtime kept
        at = a % len(data)
        _keep_mtime(f, data[:at] + bytes([(data[at] + 1 + b % 254) % 256]) + data[at + 1 :])
    elif kind == "truncate" and data:
        f.write_bytes(data[: a % len(data)])
    elif kind == "append":
        f.write_bytes(data + corpus(3, b % 50))
    elif kind == "rewrite":  # the same bytes written again: a new mtime, nothing else
        f.write_bytes(data)
    elif kind == "swap" and len(entries) >= 2:
        p, q = entries[a % len(entries)], entries[b % len(entries)]
        dp, dq = p.read_bytes(), q.read_bytes()
        p.write_bytes(dq)
        q.write_bytes(dp)
    elif kind == "empty" and entries:
        entries[a % len(entries)].write_bytes(b'{"lines":0,"items":[]}')
    elif kind == "drop" and entries:
        entries[a % len(entries)].unlink()
    elif kind == "cut" and entries:
        q = entries[a % len(entries)]
        raw = q.read_bytes()
        q.write_bytes(raw[: b % max(1, len(raw))])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000), rounds=st.lists(changes(), min_size=1, max_size=2))
def test_a_resumed_run_always_reports_what_a_fresh_run_reports(
    tmp_path_factory: pytest.TempPathFactory, seed: int, rounds: list[list[tuple[str, int, int]]]
) -> None:
    tmp = tmp_path_factory.mktemp("resume")
    f = tmp / "c.jsonl"
    f.write_bytes(corpus(50, seed).replace(b'"role":"user"', b'"role":"usex"', seed % 3))
    store = tmp / "store"
    assert resumed(f, store) == fresh(f)
    for round_ in rounds:
        for change in round_:
            _apply(f, store, change)
        assert resumed(f, store) == fresh(f)


def test_every_entry_is_read_back_without_recomputing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checks cost a read of the part's bytes, not a recomputation, and pass on an
    untouched file (a test that damage is caught is only half the proof)."""
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(80, 10))
    store = tmp_path / "store"
    want = resumed(f, store)
    f.write_bytes(f.read_bytes())  # a new mtime: still the same bytes
    monkeypatch.setattr(
        "conformance.parallel.engine.task_result", lambda *a, **k: pytest.fail("recomputed a stored part")
    )
    notes: list[str] = []
    assert resumed(f, store, notes) == want and notes == []
    assert all(read_entry(q)["lines"] >= 0 for q in store.glob("*.tsr"))


# -- a range with no newline (item 3) ----------------------------------------------------------


class _Counting(io.BufferedReader):
    read_total = 0

    def read(self, size: int | None = -1) -> bytes:
        out = super().read(size)
        _Counting.read_total += len(out)
        return out

    def readline(self, size: int | None = -1) -> bytes:
        out = super().readline(size)
        _Counting.read_total += len(out)
        return out


def _counting_open(path: str) -> IO[bytes]:
    return _Counting(io.FileIO(path, "r"))


@pytest.mark.parametrize("fast", [True, False], ids=["fast path", "exact path"])
def test_ranges_without_a_newline_read_only_their_own_bytes(tmp_path: Path, fast: bool) -> None:
    f = tmp_path / "one-line.jsonl"
    size = 400_000
    f.write_bytes(b'{"a":"' + b"x" * (size - 8) + b'"}')  # one line, no newline at all
    options = (
        Options(max_line_bytes=1 << 20) if fast else Options(selection=ALL_RULES.selection, max_line_bytes=1 << 20)
    )
    tasks = chunks.plan(str(f), size, True, 10_000)
    run = None if fast else CanonicalFormat().start(options)
    if run is not None:
        run.fast = None  # the exact reader
    _Counting.read_total = 0
    lines = []
    for t in tasks:
        doc = chunks.task_result(t, options, _counting_open, run)
        assert "error" not in doc
        lines.append(doc["lines"])
    # the first task reads the line; every other reads at most its own range and one byte
    assert _Counting.read_total <= size + len(tasks) * (10_000 + 1)
    assert sum(lines) == 0
    got = validate([f], options, jobs=1, chunk_bytes=10_000)
    want = validate([f], options, jobs=1)
    assert report_bytes(got) == report_bytes(want)


@pytest.mark.parametrize("forge", ["span", "payload"])
def test_an_entry_whose_digests_hold_but_whose_contents_do_not_fit_its_part_is_recomputed(
    tmp_path: Path, forge: str
) -> None:
    """Digests prove bytes, not meaning: an entry naming a span its part does not read (an
    empty one, whose digest anyone can compute), or holding no task result, is not used."""
    f = tmp_path / "c.jsonl"
    f.write_bytes(corpus(60, 11).replace(b'"role":"user"', b'"role":"usex"', 1))
    store = tmp_path / "store"
    want = resumed(f, store)
    for q in store.glob("*.tsr"):
        head, _, body = q.read_bytes().partition(b"\n")
        header = orjson.loads(head)
        if forge == "span":
            header["read"], header["digest"] = [0, 0], store_digest(b"")
            body = b'{"lines":0,"items":[]}'
        else:
            body = b"[1, 2, 3]"
        header["result"] = store_digest(body)
        q.write_bytes(orjson.dumps(header) + b"\n" + body)
    notes: list[str] = []
    assert resumed(f, store, notes) == want == fresh(f)
    assert notes and all("recomputed" in n for n in notes)
