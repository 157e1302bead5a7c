"""Reading LangChain message lists, and recognising them cheaply.

Accepted files: a `.json` array of messages (what `messages_to_dict` or `[dumpd(m) ...]`
writes: one conversation), or a `.jsonl` of one such array per line (one conversation per
line); standard input as `--format langchain -` (`convertkit.read_documents`). Every
message keeps its location: the file, the line it starts on (its record's line in a
`.jsonl`), and its JSON pointer (`/3`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.convertkit import peek_value
from .rules import BASE_TYPES, CHUNKS, CLASSES


@dataclass(frozen=True, slots=True)
class Shaped:
    """A message's type (the base type: "ai" for an AIMessageChunk) and its fields (`data`
    of messages_to_dict, `kwargs` of dumpd) with the pointer of those fields inside it."""

    type: str
    data: dict[str, Any]
    at: str  # "/data" or "/kwargs"


def shaped(value: Any) -> Shaped | str:
    """The message's type and fields, or why it has none (a message for LC001/LC002)."""
    if not isinstance(value, dict):
        return "not an object"
    if value.get("lc") == 1 and value.get("type") == "constructor":
        ident = value.get("id")
        name = ident[-1] if isinstance(ident, list) and ident and isinstance(ident[-1], str) else None
        if name not in CLASSES:
            return "type"
        kwargs = value.get("kwargs")
        return Shaped(CLASSES[str(name)], kwargs, "/kwargs") if isinstance(kwargs, dict) else "data"
    kind = value.get("type")
    if not isinstance(kind, str) or (kind not in BASE_TYPES and kind not in CHUNKS):
        return "type"
    data = value.get("data")
    return Shaped(CHUNKS.get(kind, kind), data, "/data") if isinstance(data, dict) else "data"


def looks_like_messages(value: Any) -> bool:
    """Unambiguous: a non-empty array whose every element is a message dict of
    messages_to_dict (`type` and object `data`) or of dumpd (`lc`, `kwargs`)."""
    return isinstance(value, list) and bool(value) and all(isinstance(shaped(m), Shaped) for m in value)


def looks_like(path: Path) -> bool:
    """Detection: a `.json` (at most `convertkit.PEEK_BYTES`) or the first line of a `.jsonl`
    is an array of LangChain messages (`looks_like_messages`). A longer `.json` needs `--format`."""
    return looks_like_messages(peek_value(path))
