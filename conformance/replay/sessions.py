"""Sessions out of stored transcripts, one at a time, for the replay check.

Canonical JSONL is read with the validator's line reader (`jsonio.read_jsonl`: bounded
lines, located parse errors). A session is handed on as soon as the input moves to
another session, so grouped input (every store this project writes, and a SQLite store
read `ORDER BY session_id, id`) costs the memory of one session. A session that
continues after another began is checked as a further part, and that is reported, never
merged silently.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..core.findings import Finding
from ..core.jsonio import DEFAULT_LOCK_WAIT, Record, is_stdin, parse, read_json, read_jsonl, reads_as_lines
from .rules import INPUT_UNREADABLE


@dataclass(frozen=True, slots=True)
class Located:
    """A canonical message and where it is stored (`path:line`, JSON pointer of the record).
    `converted`: the place is the source message of another format this one was converted
    from, so a pointer inside the canonical message does not extend it."""

    message: dict[str, Any]
    path: str
    line: int | None
    pointer: str
    converted: bool = False


@dataclass
class Session:
    id: str
    messages: list[Located] = field(default_factory=list)
    part: int = 1  # >1 when the input interleaves this session with others


def _problem(path: str, line: int | None, pointer: str, message: str) -> Finding:
    return Finding(path, line, pointer, INPUT_UNREADABLE.id, INPUT_UNREADABLE.severity, message)


class SessionReader:
    """Groups messages into sessions; collects tool definitions and unreadable records."""

    def __init__(self, lock_wait: float = DEFAULT_LOCK_WAIT) -> None:
        self.lock_wait = lock_wait  # how long a store another process holds locked is waited for
        self.problems: list[Finding] = []
        self.tools: list[dict[str, Any]] = []
        self._seen: dict[str, int] = {}  # session id -> parts handed on so far

    def _group(self, records: Iterator[Located]) -> Iterator[Session]:
        current: Session | None = None
        for rec in records:
            sid = rec.message.get("session_id")
            if not isinstance(sid, str):
                self.problems.append(_problem(rec.path, rec.line, rec.pointer + "/session_id", "no session_id"))
                continue
            if current is None or current.id != sid:
                if current is not None:
                    yield current
                part = self._seen.get(sid, 0) + 1
                self._seen[sid] = part
                current = Session(sid, part=part)
            current.messages.append(rec)
        if current is not None:
            yield current

    def read(self, path: Path) -> Iterator[Session]:
        """The sessions of one canonical `.jsonl`/`.json` file (or standard input, `-`) or a
        §9.1 SQLite store."""
        if is_stdin(path):
            yield from self._group(self._json(path))
            return
        with path.open("rb") as f:
            head = f.read(16)
        if head == b"SQLite format 3\x00":
            yield from self._group(self._sqlite(path))
        else:
            yield from self._group(self._json(path))

    def _json(self, path: Path) -> Iterator[Located]:
        items = read_jsonl(path) if reads_as_lines(path) else read_json(path)
        for item in items:
            if isinstance(item, Finding):
                if item.severity == "error":
                    self.problems.append(_problem(item.path, item.line, item.pointer, f"{item.rule}: {item.message}"))
                continue
            yield from self._record(item)

    def _record(self, item: Record) -> Iterator[Located]:
        v = item.value
        if not isinstance(v, dict):
            self.problems.append(_problem(item.path, item.line, item.pointer, "not a JSON object"))
        elif "input_schema" in v and "role" not in v:
            self.tools.append(v)  # a ToolDefinition given beside the messages
        elif not isinstance(v.get("content"), list) or not isinstance(v.get("role"), str):
            self.problems.append(_problem(item.path, item.line, item.pointer, "not a canonical message"))
        else:
            yield Located(v, item.path, item.line, item.pointer)

    def _sqlite(self, path: Path) -> Iterator[Located]:
        """The messages of a §9.1 store, at a committed state even while another process
        writes it (`formats.sqlite.open_store`: a `-wal`'s committed frames are seen, a
        writer's lock is waited for `lock_wait` seconds). A store that cannot be read now
        (locked past the wait, a failing read) is a problem naming why (exit 2)."""
        # function-level import: sqlite is a peer format; only this reader needs its opener
        from ..formats.sqlite import micros_to_timestamp, open_store

        where = f"{path}#messages"
        try:
            with open_store(path, self.lock_wait) as con:
                rows = con.execute(
                    "SELECT rowid, id, session_id, role, content_json, metadata_json, created_at, schema_version "
                    "FROM messages ORDER BY session_id, id"
                )
                for rowid, mid, sid, role, content_json, metadata_json, created, version in rows:
                    try:
                        content = parse(str(content_json).encode("utf-8", "surrogatepass"))
                        metadata = parse(str(metadata_json).encode("utf-8", "surrogatepass"))
                        created_at = micros_to_timestamp(created) if isinstance(created, int) else created
                    except (ValueError, OverflowError) as exc:
                        self.problems.append(_problem(where, rowid, "", f"row cannot be read: {exc}"))
                        continue
                    msg = {"id": mid, "session_id": sid, "role": role, "content": content, "metadata": metadata,
                           "created_at": created_at, "schema_version": version}  # fmt: skip
                    yield from self._record(Record(where, rowid, "", msg, 0))
        except InputError as exc:
            self.problems.append(_problem(str(path), None, "", str(exc).removeprefix(f"{path}: ")))
        except sqlite3.DatabaseError as exc:
            self.problems.append(_problem(str(path), None, "", f"cannot read as a §9.1 SQLite store: {exc}"))
