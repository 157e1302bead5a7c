"""Reading gpt2099 files: which shapes exist on disk, how to recognise them, how to load them.

Accepted files (the encoding is chosen by suffix, the shape by content):

| encoding | holds |
|---|---|
| `.json` | one document (a context window, a response, one turn) or an array of turns |
| `.jsonl` | one document per line; turn lines together form one thread |
| `.nuon` | the same documents written in NUON (gpt2099's thread export), e.g. a table of turns |

Shapes, recognised by content, each with its root schema in `schemas/gpt2099/v1/`:

- turn frames (a thread): objects with `meta` or `topic: "gpt.turn"` (`turn-frame.json`);
- thread records: objects with a 25-character `id` and `content`, no canonical keys
  (`thread-record.json`);
- context window: an object with `messages` (a list) and at most `options` besides
  (`context-window.json`);
- normalized response: an object whose `message` is an object, with at most `role` and
  `mime_type` besides (`response.json`).

Detection never claims a canonical file: canonical messages have `session_id`,
`metadata`, `schema_version` and 26-character ULIDs, none of which a gpt2099 turn has,
and no canonical document has `meta`, `messages` or `message`. Only the first 64 KiB are
read, parsed in jiter's partial mode so a large file can still be recognised.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jiter

from ...core.findings import Finding, RuleInfo
from ...core.jsonio import (
    BOM,
    DUPLICATE_KEY,
    INVALID_UTF8,
    NON_FINITE,
    TOO_LARGE,
    Record,
    read_json,
    read_jsonl,
)
from . import inherited
from . import rules as R
from .nuon import NuonError
from .nuon import parse as parse_nuon
from .thread import Shape, Thread, Turn, scru128_value

PEEK_BYTES = 64 * 1024
SUFFIXES = (".json", ".jsonl", ".nuon")
CANONICAL_KEYS = frozenset({"session_id", "metadata", "schema_version", "created_at"})
FRAME_KEYS = frozenset({"meta", "topic", "hash", "ttl", "context_id"})
RECORD_KEYS = frozenset({"role", "options", "cache"})
WINDOW_KEYS = frozenset({"messages", "options"})
RESPONSE_KEYS = frozenset({"message", "role", "mime_type"})
_TURN_ID = re.compile(r"[0-9A-Za-z]{25}\Z")


def classify(value: Any) -> Shape | None:
    """The shape of one document or turn, or None when it is no gpt2099 shape."""
    if not isinstance(value, dict) or value.keys() & CANONICAL_KEYS:
        return None
    if value.keys() & {"meta", "topic"} and (isinstance(value.get("meta"), dict) or value.get("topic") == "gpt.turn"):
        return Shape.FRAMES
    # Provider wire requests also have `messages` (next to `model`, `max_tokens`, ...) and
    # are not ours; a context window has nothing but `messages` and `options`.
    if isinstance(value.get("messages"), list) and value.keys() <= WINDOW_KEYS:
        return Shape.WINDOW
    if isinstance(value.get("message"), dict) and value.keys() <= RESPONSE_KEYS:
        return Shape.RESPONSE
    if isinstance(value.get("id"), str) and _TURN_ID.match(value["id"]) and "content" in value:
        return Shape.RECORDS
    return None


# -- provider-API artefacts ------------------------------------------------------------

# a raw provider event's `type` (Anthropic, Cohere); gpt2099's streamer types are others
_STREAM_TYPES = re.compile(r"(message|content)[_-]|ping\Z|error\Z|citation|tool[_-]")
STREAMER_KEYS = frozenset({"type", "content", "name", "id"})
ARTEFACTS = {
    "tools": "an MCP tool list",
    "streamer": "gpt2099's streamer view (incremental deltas)",
    "events": "recorded provider stream events",
}


def _streamer_event(v: Any) -> bool:
    return isinstance(v, dict) and v.keys() <= STREAMER_KEYS


def artefact_kind(values: list[Any]) -> str | None:
    """What a file of gpt2099's provider tests holds when it is not a conversation (a key
    of ARTEFACTS): a tool list `prepare-request` takes (`{name, inputSchema}`), gpt2099's
    streamer view (`{type?, name?, content?}` or null, provider-api.md
    `response_stream_streamer`), or recorded provider stream events (Anthropic and Cohere
    `type` events, OpenAI-style `chat.completion.chunk`s, Gemini `candidates`)."""
    if not values:
        return None
    # a tool list: every entry has a `name` or an `inputSchema` (a missing one is then a
    # schema error at that entry, not a reason to read the file as something else)
    if all(isinstance(v, dict) and v.keys() & {"name", "inputSchema"} for v in values) and any(
        "name" in v and "inputSchema" in v for v in values
    ):
        return "tools"
    if all(
        isinstance(v, dict) and (("choices" in v and "id" in v) or "candidates" in v or _raw_event_type(v.get("type")))
        for v in values
    ):
        return "events"
    # a streamer view: events or nulls, each with a key of the documented shape (or none);
    # a key beside them is then a schema error at that event (GP020)
    if all(v is None or (isinstance(v, dict) and (not v or v.keys() & STREAMER_KEYS)) for v in values) and any(
        isinstance(v, dict) and v.get("type") in ("text", "tool_use", "thinking") for v in values
    ):
        return "streamer"
    return None


def artefact_of_file(values: list[Any]) -> str | None:
    """The ARTEFACTS description when a file's documents are a provider-API artefact (no
    document has a conversation shape), else None: converters and `resolve` refuse it."""
    if any(classify(v) is not None for v in values):
        return None
    kind = artefact_kind(values)
    return ARTEFACTS[kind] if kind is not None else None


def _raw_event_type(t: Any) -> bool:
    return isinstance(t, str) and t != "tool_use" and _STREAM_TYPES.match(t) is not None


def _artefact_start(value: Any) -> bool:
    """A first document that starts a tool list or a streamer view (detection)."""
    if isinstance(value, dict) and "name" in value and "inputSchema" in value:
        return True
    return _streamer_event(value) and isinstance(value.get("type"), str) and not _raw_event_type(value["type"])


def _peek_value(path: Path) -> Any:
    with path.open("rb") as f:
        data = f.read(PEEK_BYTES)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if path.suffix == ".jsonl":
        data = data.split(b"\n", 1)[0]
    try:
        value = jiter.from_json(data, partial_mode="trailing-strings")
    except ValueError:
        return None
    if isinstance(value, list):
        return value[0] if value else None
    return value


def detect(path: Path) -> bool:
    """True for `.nuon` files and for JSON/JSONL whose first document has a gpt2099 shape
    or starts a tool list or streamer view (provider-api.md gives both a shape)."""
    if path.suffix == ".nuon":
        return path.is_file()
    if path.suffix not in (".json", ".jsonl") or not path.is_file():
        return False
    try:
        first = _peek_value(path)
    except OSError:
        return False
    return classify(first) is not None or _artefact_start(first)


# -- reading ----------------------------------------------------------------------------

_NUON_RULES: dict[str, RuleInfo] = {
    "syntax": R.NUON_SYNTAX,
    "eof": R.NUON_SYNTAX,
    "unsupported": R.NUON_UNSUPPORTED,
    "duplicate": DUPLICATE_KEY,
    "depth": TOO_LARGE,
    "non_finite": NON_FINITE,
}


def read_nuon(path: Path) -> Iterator[Record | Finding]:
    """The records of a `.nuon` file: each element of a top-level list, or the document."""
    name = str(path)
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        yield Finding(name, 1, "", BOM.id, BOM.severity, "UTF-8 byte order mark at start of file; ignored")
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as u:
        line = data.count(b"\n", 0, u.start) + 1
        yield Finding(
            name,
            line,
            "",
            INVALID_UTF8.id,
            INVALID_UTF8.severity,
            f"invalid UTF-8 byte 0x{data[u.start]:02x}",
        )
        return
    try:
        parsed = parse_nuon(text)
    except NuonError as e:
        info = _NUON_RULES[e.kind]
        yield Finding(name, e.line, "", info.id, info.severity, e.message, e.column or None)
        return
    if isinstance(parsed.value, list):
        for i, (item, line) in enumerate(zip(parsed.value, parsed.item_lines, strict=True)):
            yield Record(name, line, f"/{i}", item, 0)
    else:
        yield Record(name, 1, "", parsed.value, len(data))


def read_items(path: Path, max_line_bytes: int) -> Iterator[Record | Finding]:
    if path.suffix == ".nuon":
        return read_nuon(path)
    if path.suffix == ".jsonl":
        return read_jsonl(path, max_line_bytes=max_line_bytes)
    return read_json(path)


# -- turns --------------------------------------------------------------------------------


@dataclass
class TurnItem:
    """A turn document and the shape it was validated as."""

    rec: Record
    shape: Shape
    valid: bool


def turn_kind(values: list[Any]) -> Shape:
    """Frames if any turn has a frame key; records if any has a record-only key; else frames.

    A bare `{id, content}` is valid as either, so the file's other turns decide.
    """
    if any(isinstance(v, dict) and v.keys() & FRAME_KEYS for v in values):
        return Shape.FRAMES
    if any(isinstance(v, dict) and v.keys() & RECORD_KEYS for v in values):
        return Shape.RECORDS
    return Shape.FRAMES


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _continues(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def make_turn(index: int, item: TurnItem) -> Turn:
    """A `Turn` from a frame or a record (schema-invalid ones keep what can be read)."""
    v = _dict(item.rec.value)
    tid = v.get("id") if isinstance(v.get("id"), str) else None
    content = _list(v.get("content"))
    if item.shape is Shape.FRAMES:
        meta = _dict(v.get("meta"))
        role = meta.get("role", "user")
        head = meta.get("head") if isinstance(meta.get("head"), str) else None
        return Turn(
            index,
            tid,
            role if isinstance(role, str) else "user",
            content,
            inherited.delta(meta),
            meta.get("cache") is True,
            head,
            _continues(meta.get("continues")),
            path=item.rec.path,
            line=item.rec.line,
            pointer=item.rec.pointer,
            valid=item.valid,
            source=v,
        )
    opts = _dict(v.get("options"))
    role = v.get("role", "user")
    return Turn(
        index,
        tid,
        role if isinstance(role, str) else "user",
        content,
        opts,
        v.get("cache") is True,
        path=item.rec.path,
        line=item.rec.line,
        pointer=item.rec.pointer,
        valid=item.valid,
        source=v,
    )


def build_thread(items: list[TurnItem]) -> Thread:
    """The turns of a file in time order. File order is not time order (an export may list
    the head first); SCRU128 ids are time-ordered, so when every turn has one the thread is
    ordered by them (ties keep file order). Otherwise the file's order is all there is."""
    shape = items[0].shape if items else Shape.FRAMES
    keys = [_time_key(it) for it in items]
    if items and all(k is not None for k in keys):
        order = sorted(range(len(items)), key=lambda i: (keys[i], i))
        items = [items[i] for i in order]
    return Thread(shape, [make_turn(i, it) for i, it in enumerate(items)])


def _time_key(item: TurnItem) -> int | None:
    v = item.rec.value
    tid = v.get("id") if isinstance(v, dict) else None
    return scru128_value(tid) if isinstance(tid, str) else None


def window_thread(rec: Record) -> Thread:
    """A context window as a linear thread of its messages (for the block and pairing rules)."""
    v = rec.value
    turns = []
    for i, m in enumerate(v.get("messages", [])):
        m = m if isinstance(m, dict) else {}
        turns.append(
            Turn(
                i,
                None,
                str(m.get("role", "user")),
                _list(m.get("content")),
                {},
                m.get("cache") is True,
                path=rec.path,
                line=rec.line,
                pointer=f"{rec.pointer}/messages/{i}",
                source=m,
            )
        )
    opts = v.get("options")
    return Thread(Shape.WINDOW, turns, options=opts if isinstance(opts, dict) else {})


def response_thread(rec: Record) -> Thread:
    msg = _dict(rec.value["message"])
    content = _list(msg.get("content"))
    turn = Turn(
        0,
        None,
        "assistant",
        content,
        {},
        False,
        path=rec.path,
        line=rec.line,
        pointer=f"{rec.pointer}/message",
        source=msg,
    )
    return Thread(Shape.RESPONSE, [turn])


class LoadError(Exception):
    """A file that cannot be loaded as a gpt2099 thread (first finding attached)."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.format())
        self.finding = finding
