"""Reading openai-messages files into conversations, and recognising them cheaply.

Accepted files (what gateways store; README of the package: `__init__`):

- `.json`: an array of Chat messages (one conversation), or one object
  `{"messages": [...]}` (a request body, or a LiteLLM spend-log `messages` record);
- `.jsonl`: one Chat message per line (the lines form one conversation), or one
  `{"messages": [...]}` conversation per line (fine-tuning and batch files, gateway
  logs). A file may mix both: message lines form one conversation, each wrapper line
  its own.

Every message keeps its location: the file, the line its record starts on, and the
JSON pointer of the message inside that record (`/3` in a `.json` array, `/messages/2`
in a wrapper line, "" for a message line).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.convertkit import peek_value
from ...core.findings import Finding
from ...core.jsonio import Record, read_json, read_jsonl

PEEK_BYTES = 64 * 1024
# keys of a canonical message that no Chat message has
_CANONICAL_KEYS = ("session_id", "schema_version", "created_at")


@dataclass(frozen=True, slots=True)
class Message:
    """One Chat message and where it is."""

    path: str
    line: int
    pointer: str
    value: Any


@dataclass
class Conversation:
    """The messages of one conversation; `pointer` locates its `messages` array."""

    path: str
    line: int
    pointer: str
    messages: list[Message] = field(default_factory=list)


def _wrapper(value: Any) -> bool:
    return isinstance(value, dict) and "messages" in value and "role" not in value


def _conversation(rec: Record) -> Conversation:
    conv = Conversation(rec.path, rec.line, f"{rec.pointer}/messages")
    msgs = rec.value["messages"]
    if isinstance(msgs, list):
        conv.messages = [Message(rec.path, rec.line, f"{rec.pointer}/messages/{i}", m) for i, m in enumerate(msgs)]
    return conv


def read_conversations(path: Path, max_line_bytes: int, data: bytes | None = None) -> Iterator[Conversation | Finding]:
    """The file's conversations, and the reader's findings (bad JSON, BOM, ...). A
    wrapper whose `messages` is not an array yields an empty conversation (OM001 is the
    checker's). `data`: the file's bytes, already read (the convert driver), else it is read."""
    items = (
        read_jsonl(path, max_line_bytes=max_line_bytes, stream=None if data is None else io.BytesIO(data))
        if path.suffix == ".jsonl"
        else read_json(path, data=data)
    )
    loose: Conversation | None = None
    for item in items:
        if isinstance(item, Finding):
            yield item
            continue
        if _wrapper(item.value):
            yield _conversation(item)
            continue
        if item.pointer == "" and path.suffix != ".jsonl" and not isinstance(item.value, list):
            # a `.json` document that is neither an array nor a wrapper: one bad message
            yield Conversation(item.path, item.line, "", [Message(item.path, item.line, "", item.value)])
            continue
        if loose is None:
            # a `.json` array is the conversation (line 1); `.jsonl` message lines start theirs
            loose = Conversation(item.path, item.line if path.suffix == ".jsonl" else 1, "")
        loose.messages.append(Message(item.path, item.line, item.pointer, item.value))
    if loose is not None:
        yield loose


def _looks_like_message(value: Any) -> bool:
    """A Chat message that no canonical message could be: a `role`, no canonical keys,
    and a string or null content, a `tool_calls`/`tool_call_id`, or the developer role
    (canonical content is always an array, and has none of those fields)."""
    if not isinstance(value, dict) or "role" not in value:
        return False
    if any(k in value for k in _CANONICAL_KEYS):
        return False
    content = value.get("content")
    return (
        isinstance(content, str) or ("content" in value and content is None)
        or "tool_calls" in value or "tool_call_id" in value or value.get("role") == "developer"
    )  # fmt: skip


def _first_message(value: Any) -> Any:
    if _wrapper(value):
        if "model" in value:
            return None  # a provider request body, not a stored conversation (--format reads it)
        msgs = value["messages"]
        return msgs[0] if isinstance(msgs, list) and msgs else None
    if isinstance(value, list):
        return value[0] if value else None
    return value


def looks_like(path: Path) -> bool:
    """Detection: a `.json`/`.jsonl` whose first message (the first line of a `.jsonl`,
    the first element of a `.json` array, or the first of a `{"messages": [...]}`
    wrapper that names no `model`: that is a provider request body) is unmistakably a Chat
    message (`_looks_like_message`). Reads at most
    `PEEK_BYTES`; a `.json` longer than that is not claimed (give `--format`)."""
    return _looks_like_message(_first_message(peek_value(path, PEEK_BYTES)))  # NOTHING is no message
