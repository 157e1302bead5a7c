"""The SQLite store of spec §9.1: tables, index, per-row validation and tool_calls.

Validating never creates or modifies a file, and still sees every committed transaction,
also while another process writes the store (`open_store`): a store with a rollback
journal (the default) is read through a snapshot that SQLite's backup API takes under a
shared lock from a `mode=ro` connection (a rollback-mode reader creates no file); a
WAL-mode store with no `-wal`/`-journal` beside it is opened `mode=ro&immutable=1`
(SQLite then takes no lock and creates no `-wal`/`-shm`); one with a sidecar (and a
rollback-mode store with a hot journal left by a crashed writer) is copied, with its
sidecar, into a private temporary folder, and the copy is opened, so SQLite replays the
committed frames of the write-ahead log (or rolls back the journal) there and never
beside the user's file. Message rows are assembled into canonical messages and checked by the
same schemas and rules as JSONL (reported as `<db>#messages:<rowid>` plus a JSON pointer
into the assembled message), a session's rows in id order (§6.1: "ULIDs. Monotonic per
session."; created_at may go back, a TS204 warning as in JSONL). `created_at` columns
hold microseconds since the Unix epoch (UTC), the precision §4.1 asks for.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

from ...core.convertkit import ConvertContext, created_at_micros, rfc3339
from ...core.errors import InputError
from ...core.findings import Finding, RuleCatalog, RuleInfo, Selection, Severity
from ...core.jsonio import DEFAULT_LOCK_WAIT, Record, check_input, parse, parse_error, read_json, read_jsonl
from ..base import FileStats, Options, ProgressHook
from ..canonical.checker import CanonicalRun
from ..canonical.rules import CATALOG as CANONICAL_RULES

E, W = Severity.ERROR, Severity.WARNING
STORE_SCHEMA = RuleInfo("TS501", E, "§9.1", "Store lacks a table, column or index of the §9.1 schema")
STORE_JSON = RuleInfo("TS502", E, "§9.1, §9.2", "content_json/metadata_json is not a JSON array/object")
STORE_COLUMN = RuleInfo("TS503", E, "§9.1", "Column value has the wrong type or disagrees with the message")
TOOLCALL_MISSING = RuleInfo("TS504", E, "§9.1, §9.2", "tool_use has no tool_calls row")
TOOLCALL_FIELDS = RuleInfo("TS505", E, "§9.1", "tool_calls row disagrees with its tool_use (session, message, name)")
TOOLCALL_RESULT = RuleInfo("TS506", E, "§9.1", "tool_calls.result_message_id is not the tool message answering it")
TOOLCALL_STATUS = RuleInfo("TS507", E, "§9.1, streaming §6.2.6", "tool_calls.status disagrees with the messages")
TOOLCALL_ORPHAN = RuleInfo("TS508", E, "§9.1", "tool_calls row has no tool_use in messages")
FOREIGN_KEY = RuleInfo("TS509", E, "§9.1", "Foreign key does not resolve")
STORE_OPEN = RuleInfo("TS510", E, "§9.1", "File is not a readable SQLite database")

RULES = (STORE_SCHEMA, STORE_JSON, STORE_COLUMN, TOOLCALL_MISSING, TOOLCALL_FIELDS, TOOLCALL_RESULT, TOOLCALL_STATUS,
         TOOLCALL_ORPHAN, FOREIGN_KEY, STORE_OPEN)  # fmt: skip

# §9.1, verbatim: the DDL the converter writes and the validator expects
DDL = """\
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  workspace_path TEXT NOT NULL,
  active_model TEXT,
  routing_policy_json TEXT,
  schema_version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  role TEXT NOT NULL,
  content_json TEXT NOT NULL,
  metadata_json TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  schema_version INTEGER NOT NULL,
  FOREIGN KEY (session_id) REFERENCES sessions(id)
);
CREATE INDEX idx_messages_session_created ON messages(session_id, created_at);
CREATE TABLE tool_calls (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  message_id TEXT NOT NULL,
  result_message_id TEXT,
  name TEXT NOT NULL,
  status TEXT NOT NULL,
  provider_id TEXT,
  provider TEXT,
  created_at INTEGER NOT NULL,
  completed_at INTEGER,
  FOREIGN KEY (session_id) REFERENCES sessions(id),
  FOREIGN KEY (message_id) REFERENCES messages(id),
  FOREIGN KEY (result_message_id) REFERENCES messages(id)
);
CREATE INDEX idx_tool_calls_session_status ON tool_calls(session_id, status);
"""

# table -> column -> (declared type, not null, primary key)
EXPECTED: dict[str, dict[str, tuple[str, bool, bool]]] = {
    "sessions": {
        "id": ("TEXT", False, True), "workspace_path": ("TEXT", True, False), "active_model": ("TEXT", False, False),
        "routing_policy_json": ("TEXT", False, False), "schema_version": ("INTEGER", True, False),
        "created_at": ("INTEGER", True, False), "updated_at": ("INTEGER", True, False),
    },
    "messages": {
        "id": ("TEXT", False, True), "session_id": ("TEXT", True, False), "role": ("TEXT", True, False),
        "content_json": ("TEXT", True, False), "metadata_json": ("TEXT", True, False),
        "created_at": ("INTEGER", True, False), "schema_version": ("INTEGER", True, False),
    },
    "tool_calls": {
        "id": ("TEXT", False, True), "session_id": ("TEXT", True, False), "message_id": ("TEXT", True, False),
        "result_message_id": ("TEXT", False, False), "name": ("TEXT", True, False), "status": ("TEXT", True, False),
        "provider_id": ("TEXT", False, False), "provider": ("TEXT", False, False),
        "created_at": ("INTEGER", True, False), "completed_at": ("INTEGER", False, False),
    },
}  # fmt: skip
INDEXES = {"idx_messages_session_created": ("messages", ["session_id", "created_at"]),
           "idx_tool_calls_session_status": ("tool_calls", ["session_id", "status"])}  # fmt: skip
FOREIGN_KEYS = {("messages", "session_id", "sessions"), ("tool_calls", "session_id", "sessions"),
                ("tool_calls", "message_id", "messages"), ("tool_calls", "result_message_id", "messages")}  # fmt: skip
STATUSES = ("pending", "succeeded", "failed", "cancelled")
MAGIC = b"SQLite format 3\x00"


def micros_to_timestamp(value: int) -> str:
    """§4.1 text of a microsecond count (`MIN_MICROS <= value <= MAX_MICROS`)."""
    t = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=value)
    return f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond:06d}Z"


# the range of microsecond timestamps a §4.1 timestamp can spell (years 0001-9999)
MIN_MICROS = -62_135_596_800_000_000
MAX_MICROS = 253_402_300_799_999_999
SIDECARS = ("-wal", "-journal")


def _text(raw: bytes) -> str | bytes:
    """TEXT columns: a str, or the raw bytes when they are not UTF-8 (reported, not raised)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


def _uri(path: Path, query: str) -> str:
    """A `file:` URI naming `path` by its bytes (percent-encoded), so a file name that is
    not UTF-8 (surrogate escapes in Python) names the same file to SQLite."""
    return f"file:{quote(os.fsencode(path))}?{query}"


def _connect(uri: str) -> sqlite3.Connection:
    con = sqlite3.connect(uri, uri=True)
    con.text_factory = _text
    con.execute("PRAGMA query_only = ON")
    return con


# how often a copy is retried when a writer removes a sidecar while it is being copied (how
# long a snapshot waits for a writer's lock, SQLite's busy timeout, is `Options.lock_wait`)
COPY_ATTEMPTS = 20
SNAPSHOT_ATTEMPTS = 5  # a journal seen mid-commit is gone by the next try; a crashed writer's is not


def _is_wal(real: Path) -> bool:
    """Whether the header says WAL mode (bytes 18-19, the file format versions, are 2)."""
    with real.open("rb") as f:
        header = f.read(20)
    return len(header) == 20 and 2 in (header[18], header[19])


# SQLite's primary result codes that say the store could not be read now (another
# process's lock, the disk, the file's permissions, memory), not that its bytes are bad
_CONDITIONS = {
    sqlite3.SQLITE_BUSY: "locked by another process",
    sqlite3.SQLITE_LOCKED: "locked by another process",
    sqlite3.SQLITE_IOERR: "cannot read: disk I/O error",
    sqlite3.SQLITE_CANTOPEN: "cannot open",
    sqlite3.SQLITE_PERM: "cannot read: permission denied",
    sqlite3.SQLITE_FULL: "cannot copy for reading: the disk is full",
    sqlite3.SQLITE_NOMEM: "cannot read: out of memory",
}


def io_condition(path: Path | str, exc: sqlite3.Error, wait: float) -> InputError | None:
    """The one-line `InputError` (exit 2) of a SQLite error that says the store could not
    be read now (`_CONDITIONS`; a lock names how long it was waited for), else None: the
    error is then about the file's contents (TS510)."""
    code = getattr(exc, "sqlite_errorcode", None)  # an error raised by Python itself has no code
    what = _CONDITIONS.get(code & 0xFF) if isinstance(code, int) else None
    if what is None:
        return None
    if code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return InputError(
            f"{path}: {what} (SQLite: {exc}); waited {wait:g} s for the lock; not read "
            "(--lock-wait SECONDS, or lock-wait in [tool.turnspec], waits longer)"
        )
    return InputError(f"{path}: {what} (SQLite: {exc}); not read")


def _backup(real: Path, copy: Path, wait: float) -> bool:
    """Copy the last committed state of a rollback-journal store to `copy` with SQLite's
    backup API: one step under a shared lock, which a writer's commit cannot hold at the
    same time, so the snapshot is consistent however often the writer commits (its
    `-journal` comes and goes). A `mode=ro` connection to a rollback-mode store creates
    no file. False when a crashed writer left a hot journal (rolling it back would
    write): then the files are copied and rolled back in the copy (`_copy_files`). A
    writer's lock is waited for `wait` seconds (SQLite's busy timeout)."""
    src = sqlite3.connect(_uri(real, "mode=ro"), uri=True, timeout=wait)
    try:
        # the shared lock first, within the busy timeout: Python's `backup` itself retries
        # a busy source forever (a store locked exclusively would hang the run)
        src.execute("BEGIN")
        src.execute("SELECT count(*) FROM sqlite_master").fetchone()
        dst = sqlite3.connect(os.fsencode(copy))
        try:
            src.backup(dst)
        finally:
            dst.close()
    except sqlite3.OperationalError as exc:
        # a hot journal: a writer crashed mid-transaction (getattr: an error raised by Python itself has no code)
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_READONLY_ROLLBACK:
            return False
        raise
    finally:
        src.close()
    return True


def _snapshot(real: Path, copy: Path, wait: float) -> bool:
    """`_backup`, tried again a few times when it meets a journal it would have to roll back:
    a live writer's journal is such a one only for the instant its commit takes, while a
    crashed writer's stays (then False, and the files are copied and rolled back in the
    copy)."""
    for attempt in range(SNAPSHOT_ATTEMPTS):
        copy.unlink(missing_ok=True)
        if _backup(real, copy, wait):
            return True
        time.sleep(0.02 * (attempt + 1))
    return False


def _copy_files(real: Path, copy: Path) -> None:
    """Copy the store and its sidecars (`-wal`, `-journal`) as they are now. A writer
    that commits or closes meanwhile removes a sidecar: the copy is then started again
    (at most `COPY_ATTEMPTS` times) with the files there are by then."""
    for attempt in range(COPY_ATTEMPTS):
        sidecars = [Path(f"{real}{s}") for s in SIDECARS if os.path.lexists(f"{real}{s}")]
        pairs = [(real, copy), *((p, Path(f"{copy}{p.name[len(real.name) :]}")) for p in sidecars)]
        try:
            for source, target in pairs:
                check_input(source)
                shutil.copyfile(source, target)
            return
        except (InputError, OSError):
            if attempt + 1 == COPY_ATTEMPTS or all(os.path.lexists(p) for p in sidecars):
                raise  # not a sidecar that went away: the store itself cannot be read
            for _, target in pairs:
                target.unlink(missing_ok=True)


@contextlib.contextmanager
def open_store(path: Path, wait: float = DEFAULT_LOCK_WAIT) -> Iterator[sqlite3.Connection]:
    """Open a store for reading without creating or changing any file beside it, at a
    consistent committed state even while another process writes it (see the module
    docstring); committed transactions still in a `-wal` file are seen. A store another
    process keeps locked for more than `wait` seconds, and one whose bytes cannot be read
    now, is a one-line `InputError` (`io_condition`), never a finding."""
    real = path.resolve()
    try:
        with _opened(real, wait) as con:
            yield con
    except sqlite3.Error as exc:
        cause = io_condition(path, exc, wait)
        if cause is None:
            raise
        raise cause from None


@contextlib.contextmanager
def _opened(real: Path, wait: float) -> Iterator[sqlite3.Connection]:
    wal = _is_wal(real)
    if wal and not any(os.path.lexists(f"{real}{s}") for s in SIDECARS):
        con = _connect(_uri(real, "mode=ro&immutable=1"))
        try:
            yield con
        finally:
            con.close()
        return
    with tempfile.TemporaryDirectory(prefix="turnspec-sqlite-") as tmp:
        copy = Path(tmp) / "store.db"
        if wal or not _snapshot(real, copy, wait):
            copy.unlink(missing_ok=True)
            _copy_files(real, copy)
        con = _connect(_uri(copy, "mode=rw"))
        try:
            yield con
        finally:
            con.close()


class SqliteRun:
    def __init__(self, options: Options) -> None:
        self.options = options
        self.sel: Selection = options.selection
        self.canonical = CanonicalRun(options)

    def finding(self, path: str, line: int | None, pointer: str, info: RuleInfo, message: str) -> Finding | None:
        if not self.sel.enabled(info.id):
            return None
        return Finding(path, line, pointer, info.id, self.sel.severity(info), message)

    def validate(self, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
        """The store's findings. A store that cannot be read now (locked by another process
        past `Options.lock_wait`, a read that fails) raises the one-line `InputError` of
        `io_condition` (an `OSError` goes up as itself): the run reports it as an input it
        could not read (exit 2), since nothing is known about the data; TS510 is a file
        SQLite reads and finds no database in."""
        name = str(path)
        check_input(path)
        step = "cannot open as SQLite read-only"
        try:
            with open_store(path, self.options.lock_wait) as con:
                con.execute("SELECT count(*) FROM sqlite_master").fetchone()
                step = "database error while reading"
                yield from self._validate(con, name, stats)
        except sqlite3.DatabaseError as exc:  # open_store raised the I/O conditions as InputError
            f = self.finding(name, None, "", STORE_OPEN, f"{step}: {exc}")
            if f:
                yield f

    def finish(self) -> Iterator[Finding]:
        yield from self.canonical.finish()

    # -- structure --------------------------------------------------------------------

    def _structure(self, con: sqlite3.Connection, name: str) -> Iterator[Finding | None]:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        for table, columns in EXPECTED.items():
            if table not in tables:
                yield self.finding(name, None, f"/{table}", STORE_SCHEMA, f"table {table!r} is missing")
                continue
            info = {
                r[1]: (str(r[2]).upper(), bool(r[3]), bool(r[5])) for r in con.execute(f"PRAGMA table_info({table})")
            }
            for col, (typ, notnull, pk) in columns.items():
                got = info.get(col)
                if got is None:
                    yield self.finding(name, None, f"/{table}/{col}", STORE_SCHEMA, f"column {table}.{col} is missing")
                elif got[0] != typ or got[2] != pk or (notnull and not got[1]):
                    yield self.finding(name, None, f"/{table}/{col}", STORE_SCHEMA,
                                  f"column {table}.{col} is {got[0]}{' NOT NULL' if got[1] else ''}{' PRIMARY KEY' if got[2] else ''}; §9.1 says {typ}{' NOT NULL' if notnull else ''}{' PRIMARY KEY' if pk else ''}")  # fmt: skip
            fks = {(table, r[3], r[2]) for r in con.execute(f"PRAGMA foreign_key_list({table})")}
            for fk in FOREIGN_KEYS:
                if fk[0] == table and fk not in fks:
                    yield self.finding(
                        name,
                        None,
                        f"/{table}/{fk[1]}",
                        STORE_SCHEMA,
                        f"{table}.{fk[1]} lacks FOREIGN KEY REFERENCES {fk[2]}(id)",
                    )
        for idx, (table, cols) in INDEXES.items():
            if table not in tables:
                continue
            got_cols = [r[2] for r in con.execute(f"PRAGMA index_info({idx})")]
            if got_cols != cols:
                yield self.finding(
                    name, None, f"/{table}", STORE_SCHEMA, f"index {idx} on {table}({', '.join(cols)}) is missing"
                )

    def _validate(self, con: sqlite3.Connection, name: str, stats: FileStats) -> Iterator[Finding]:
        problems = [f for f in self._structure(con, name)]
        yield from (f for f in problems if f is not None)
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"messages", "sessions", "tool_calls"} <= tables or any(
            f and f.pointer.count("/") == 2 and "missing" in f.message for f in problems
        ):
            return  # without the §9.1 columns the rows cannot be read meaningfully
        session_ids = {r[0] for r in con.execute("SELECT id FROM sessions")}
        where = f"{name}#messages"
        uses: dict[str, tuple[str, str, str, int]] = {}  # tool id -> session, message, name, rowid
        answers: dict[str, tuple[str, bool]] = {}  # tool id -> answering message id, is_error
        cancelled: set[str] = set()  # tool ids of tool_use blocks in cancelled messages (streaming §6.2.6)
        message_ids: set[str] = set()
        partial: set[str] = set()  # ids of partial messages (§5.1.5)
        # A session's order is its ids' order: §6.1 "ULIDs. Monotonic per session." (the store
        # has no sequence column; created_at may go back, TS204, as in JSONL). Read by created_at,
        # a spec-valid session going back in time drew TS203/TS205 here but only TS204 as JSONL.
        rows = con.execute("SELECT rowid, id, session_id, role, content_json, metadata_json, created_at, schema_version "
                           "FROM messages ORDER BY session_id, id, rowid")  # fmt: skip
        for rowid, mid, sid, role, content_json, metadata_json, created, version in rows:
            stats.records += 1
            message_ids.add(mid)
            odd = [
                (col, v)
                for col, v in (("id", mid), ("session_id", sid), ("role", role), ("schema_version", version))
                if isinstance(v, bytes)
            ]
            if odd:
                for col, v in odd:
                    f = self.finding(
                        where, rowid, f"/{col}", STORE_COLUMN, f"{col} is a BLOB ({len(v)} bytes), not TEXT"
                    )
                    if f:
                        yield f
                continue
            if sid not in session_ids:
                f = self.finding(where, rowid, "/session_id", FOREIGN_KEY, f"session {sid!r} is not in sessions")
                if f:
                    yield f
            parsed: dict[str, Any] = {}
            ok = True
            for col, text in (("content", content_json), ("metadata", metadata_json)):
                if not isinstance(text, str):
                    kind = "not UTF-8 text or a BLOB" if isinstance(text, bytes) else type(text).__name__
                    f = self.finding(where, rowid, f"/{col}", STORE_COLUMN, f"{col}_json is {kind}, not TEXT")
                    ok = False
                else:
                    try:
                        parsed[col] = parse(text.encode("utf-8", "surrogatepass"))
                    except ValueError as exc:
                        pe = parse_error(where, rowid, text.encode("utf-8", "surrogatepass"), exc, at_eof=False)
                        f = (
                            Finding(where, rowid, f"/{col}", pe.rule, pe.severity, f"{col}_json: {pe.message}")
                            if self.sel.enabled(pe.rule)
                            else None
                        )
                        ok = False
                    else:
                        want = list if col == "content" else dict
                        f = None
                        if not isinstance(parsed[col], want):
                            f = self.finding(
                                where,
                                rowid,
                                f"/{col}",
                                STORE_JSON,
                                f"{col}_json holds a JSON {type(parsed[col]).__name__}, not an {'array' if want is list else 'object'}",
                            )
                            ok = False
                if f:
                    yield f
            if not isinstance(created, int):
                shown = f"a BLOB ({len(created)} bytes)" if isinstance(created, bytes) else repr(created)
                f = self.finding(
                    where, rowid, "/created_at", STORE_COLUMN, f"created_at is {shown}, not integer microseconds"
                )
                if f:
                    yield f
                continue
            if not MIN_MICROS <= created <= MAX_MICROS:
                f = self.finding(
                    where, rowid, "/created_at", STORE_COLUMN,
                    f"created_at {created} is outside years 0001-9999 in microseconds since 1970",
                )  # fmt: skip
                if f:
                    yield f
                continue
            if not ok:
                continue
            msg = {"id": mid, "session_id": sid, "role": role, "content": parsed["content"], "metadata": parsed["metadata"],
                   "created_at": micros_to_timestamp(created), "schema_version": version}  # fmt: skip
            yield from self.canonical.check_message(Record(where, rowid, "", msg, 0))
            if parsed["metadata"].get("status") == "partial":
                # §5.1.5: "`status: PARTIAL` messages may violate other invariants ...
                # Validation runs only at `status: COMPLETE`", and streaming §6.3: "partial
                # assistant messages may have inconsistent tool-call state": a partial
                # message's tool_use needs no row yet, and a row may already name it
                partial.add(mid)
            for block in parsed["content"]:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    uses[block["id"]] = (sid, mid, str(block.get("name")), rowid)
                    if parsed["metadata"].get("status") == "cancelled":
                        cancelled.add(block["id"])
                elif block.get("type") == "tool_result" and isinstance(block.get("tool_use_id"), str):
                    answers.setdefault(block["tool_use_id"], (mid, bool(block.get("is_error", False))))
        found = self._tool_calls(con, name, uses, answers, message_ids, session_ids, cancelled, partial)
        yield from (f for f in found if f is not None)

    def _tool_calls(self, con: sqlite3.Connection, name: str, uses: dict[str, tuple[str, str, str, int]],
                    answers: dict[str, tuple[str, bool]], message_ids: set[str], session_ids: set[str],
                    cancelled: set[str], partial: set[str]) -> Iterator[Finding | None]:  # fmt: skip
        where = f"{name}#tool_calls"
        seen: set[str] = set()
        for rowid, tid, sid, mid, rid, tname, status in con.execute(
            "SELECT rowid, id, session_id, message_id, result_message_id, name, status FROM tool_calls ORDER BY rowid"
        ):
            seen.add(tid)
            for col, ref, pool in (
                ("session_id", sid, session_ids),
                ("message_id", mid, message_ids),
                ("result_message_id", rid, message_ids),
            ):
                if ref is not None and ref not in pool:
                    yield self.finding(where, rowid, f"/{col}", FOREIGN_KEY, f"{col} {ref!r} does not resolve")
            use = uses.get(tid)
            if use is None and mid in partial:
                continue  # §5.1.5, streaming §6.3: a partial message's content may lag its tool calls
            if use is None:
                yield self.finding(
                    where, rowid, "/id", TOOLCALL_ORPHAN, f"tool call {tid} has no tool_use block in messages"
                )
                continue
            for col, want, got in (("session_id", use[0], sid), ("message_id", use[1], mid), ("name", use[2], tname)):
                if want != got:
                    yield self.finding(
                        where, rowid, f"/{col}", TOOLCALL_FIELDS, f"{col} is {got!r} but the tool_use says {want!r}"
                    )
            answer = answers.get(tid)
            if (answer[0] if answer else None) != rid:
                yield self.finding(where, rowid, "/result_message_id", TOOLCALL_RESULT,
                              f"result_message_id is {rid!r} but {'message ' + repr(answer[0]) + ' answers it' if answer else 'no tool message answers it'}")  # fmt: skip
            expected = "pending" if answer is None else ("failed" if answer[1] else "succeeded")
            if answer is None and tid in cancelled:
                # streaming §6.2.6: "Any cancelled tool calls get `status: cancelled` in the
                # `tool_calls` table": a call of a cancelled message never answered is
                # cancelled, not pending (nor failed)
                expected = "cancelled"
                ok = status == "cancelled"
            else:
                ok = (
                    status == expected
                    or (status == "cancelled" and answer is None)
                    or (status == "failed" and answer is None)  # a failed call may have no result (issue 16)
                    or (status == "cancelled" and answer is not None and answer[1])
                )
            if status not in STATUSES or not ok:
                yield self.finding(
                    where, rowid, "/status", TOOLCALL_STATUS, f"status is {status!r}; the messages say {expected!r}"
                )
        for tid, (_sid, mid, _name, rowid) in uses.items():
            if tid not in seen and mid not in partial:
                yield self.finding(
                    f"{name}#messages", rowid, "/content", TOOLCALL_MISSING, f"tool_use {tid} has no row in tool_calls"
                )


def convert_canonical_to_sqlite(src: Path, dst: Path, ctx: ConvertContext) -> None:
    """Write a conforming §9.1 store from canonical JSON/JSONL (fails on invalid input).
    `created_at` is read as `validate` reads it (`convertkit.created_at_micros`); one the
    store cannot spell back as written (`+00:00`, fewer fraction digits) is a lossy step."""
    # one pass: each record is checked by the canonical rules as it is read
    run = CanonicalRun(Options())
    msgs: list[dict[str, Any]] = []
    errors: list[Finding] = []
    times: dict[int, int] = {}  # id(message) -> created_at in microseconds
    for item in read_jsonl(src) if src.suffix == ".jsonl" else read_json(src):
        if isinstance(item, Record):
            msgs.append(item.value)
            found = list(run.check_message(item))
            if isinstance(item.value, dict) and not any(f.severity == Severity.ERROR for f in found):
                times[id(item.value)] = _stored_time(item, ctx)
        else:
            found = [item]
        errors += [f for f in found if f.severity == Severity.ERROR]
    errors += [f for f in run.finish() if f.severity == Severity.ERROR]
    if errors:
        raise InputError(f"{src} is not valid canonical input ({len(errors)} error(s)); first: {errors[0].format()}")
    try:
        _write_store(dst, msgs, times)
    except sqlite3.Error as exc:  # SQLite reports a full disk as its own error: an OSError for the caller
        full = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
        raise OSError(errno.ENOSPC if full else errno.EIO, str(exc), str(dst)) from None


def _stored_time(item: Record, ctx: ConvertContext) -> int:
    """The created_at column of a valid message: microseconds (§9.1 INTEGER)."""
    where = f"{item.pointer}/created_at"
    created = item.value.get("created_at")
    try:
        micros = created_at_micros(created)
    except ValueError as exc:
        raise InputError(f"{item.path}:{item.line}: {where}: {exc}") from None
    if rfc3339(micros) != created:
        ctx.lossy(item.path, item.line, where,
                  f"created_at {created!r} is stored as microseconds; read back it is {rfc3339(micros)!r}, "
                  "the same instant in the canonical encoding")  # fmt: skip
    return micros


def _write_store(dst: Path, msgs: list[dict[str, Any]], times: dict[int, int]) -> None:
    con = sqlite3.connect(os.fsencode(dst))  # bytes: a file name need not be UTF-8
    try:
        con.executescript(DDL)
        sessions: dict[str, dict[str, Any]] = {}
        calls: dict[str, list[Any]] = {}
        for m in msgs:
            t = times[id(m)]
            s = sessions.setdefault(
                m["session_id"], {"created": t, "updated": t, "model": None, "version": m["schema_version"]}
            )
            s["created"], s["updated"] = min(s["created"], t), max(s["updated"], t)
            if m["role"] == "assistant" and m["metadata"].get("model"):
                s["model"] = m["metadata"]["model"]
            for b in m["content"]:
                if b["type"] == "tool_use":
                    calls[b["id"]] = [
                        b["id"],
                        m["session_id"],
                        m["id"],
                        None,
                        b["name"],
                        # streaming §6.2.6: a call of a cancelled message is cancelled
                        "cancelled" if m["metadata"].get("status") == "cancelled" else "pending",
                        None,
                        m["metadata"].get("provider"),
                        t,
                        None,
                    ]
                elif b["type"] == "tool_result" and b["tool_use_id"] in calls:
                    c = calls[b["tool_use_id"]]
                    c[3], c[5], c[9] = m["id"], "failed" if b.get("is_error") else "succeeded", t
        con.executemany("INSERT INTO sessions VALUES (?, ?, ?, NULL, ?, ?, ?)",
                        [(sid, ".", s["model"], s["version"], s["created"], s["updated"]) for sid, s in sessions.items()])  # fmt: skip
        con.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [(m["id"], m["session_id"], m["role"], json.dumps(m["content"], ensure_ascii=False),
                          json.dumps(m["metadata"], ensure_ascii=False), times[id(m)], m["schema_version"]) for m in msgs])  # fmt: skip
        con.executemany("INSERT INTO tool_calls VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", list(calls.values()))
        con.commit()
    finally:
        con.close()


def convert_sqlite_to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    """Read a §9.1 store back as canonical JSON Lines, one message per row in insertion
    (rowid) order, so the same store always gives the same bytes. The store must
    validate; what the messages cannot hold (a session's workspace path and routing
    policy, a tool call's provider id) is reported as a lossy step."""
    run = SqliteRun(Options(lock_wait=ctx.lock_wait))
    stats = FileStats(str(src), "sqlite")
    errors = [f for f in [*run.validate(src, stats), *run.finish()] if f.severity == Severity.ERROR]
    if errors:
        raise InputError(f"{src} is not a valid §9.1 store ({len(errors)} error(s)); first: {errors[0].format()}")
    with open_store(src, ctx.lock_wait) as con, dst.open("x", encoding="utf-8", newline="\n") as out:
        for rowid, sid, workspace, policy in con.execute(
            "SELECT rowid, id, workspace_path, routing_policy_json FROM sessions ORDER BY rowid"
        ):
            if workspace not in (".", ""):
                ctx.lossy(f"{src}#sessions", rowid, "/workspace_path",
                          f"session {sid}: workspace_path {workspace!r} has no place in a canonical message")  # fmt: skip
            if policy is not None:
                ctx.lossy(f"{src}#sessions", rowid, "/routing_policy_json",
                          f"session {sid}: routing_policy_json has no place in a canonical message")  # fmt: skip
        for rowid, tid, provider_id in con.execute(
            "SELECT rowid, id, provider_id FROM tool_calls WHERE provider_id IS NOT NULL ORDER BY rowid"
        ):
            ctx.lossy(f"{src}#tool_calls", rowid, "/provider_id",
                      f"tool call {tid}: provider_id {provider_id!r} has no place in a canonical message")  # fmt: skip
        for mid, sid, role, content_json, metadata_json, created, version in con.execute(
            "SELECT id, session_id, role, content_json, metadata_json, created_at, schema_version "
            "FROM messages ORDER BY rowid"
        ):
            msg = {"id": mid, "session_id": sid, "role": role, "content": parse(content_json.encode("utf-8", "surrogatepass")),
                   "metadata": parse(metadata_json.encode("utf-8", "surrogatepass")),
                   "created_at": micros_to_timestamp(created), "schema_version": version}  # fmt: skip
            out.write(json.dumps(msg, ensure_ascii=False) + "\n")


class SqliteFormat:
    name = "sqlite"
    rules = RuleCatalog([*RULES, *CANONICAL_RULES])
    converters: ClassVar[dict[tuple[str, str], Any]] = {
        ("canonical", "sqlite"): convert_canonical_to_sqlite,
        ("sqlite", "canonical"): convert_sqlite_to_canonical,
    }
    schema_family = None  # the §9.1 DDL is its schema; rows hold canonical messages
    migrations = False

    def detect(self, path: Path) -> bool:
        try:
            check_input(path)
        except InputError:
            return False
        try:
            with path.open("rb") as f:
                return f.read(16) == MAGIC
        except OSError:
            return False

    def start(self, options: Options) -> SqliteRun:
        return SqliteRun(options)
