"""Reading pydantic-ai message histories, and recognising them cheaply.

Accepted files: a `.json` array of `ModelMessage`s (what
`ModelMessagesTypeAdapter.dump_json` writes: one history), or a `.jsonl` of one such
array per line (one history per line). Every message keeps its location: the file, the
line it starts on (its record's line in a `.jsonl`), and its JSON pointer (`/3`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.convertkit import peek_value, read_documents
from ...core.findings import Finding
from .rules import KINDS

PEEK_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Message:
    """One ModelMessage and where it is."""

    path: str
    line: int
    pointer: str
    value: Any


@dataclass
class History:
    """The messages of one history; `array` is False when the record is not an array."""

    path: str
    line: int
    pointer: str
    array: bool = True
    messages: list[Message] = field(default_factory=list)


def read_histories(path: Path, max_line_bytes: int, data: bytes | None = None) -> Iterator[History | Finding]:
    """The file's histories, and the reader's findings (bad JSON, BOM, ...): the documents
    `convertkit.read_documents` reads (`.jsonl` and standard input as it says; `data`, the
    bytes already read, as there)."""
    for doc in read_documents(path, max_line_bytes, data):
        if isinstance(doc, Finding):
            yield doc
        else:
            items = doc.items or []
            msgs = [Message(i.path, i.line, i.pointer, i.value) for i in items]
            yield History(items[0].path if items else doc.path, doc.line, "", doc.items is not None, msgs)


def looks_like_history(value: Any) -> bool:
    """Unambiguous: a non-empty array whose every element has `kind` request or response
    and `parts` (no canonical, Chat or other peer record has both)."""
    return (
        isinstance(value, list) and bool(value)
        and all(isinstance(m, dict) and isinstance(m.get("kind"), str) and m["kind"] in KINDS and "parts" in m for m in value)
    )  # fmt: skip


def looks_like(path: Path) -> bool:
    """Detection: a `.json` (at most `PEEK_BYTES`) or the first line of a `.jsonl` is an
    array of pydantic-ai messages (`looks_like_history`). A longer `.json` needs `--format`."""
    return looks_like_history(peek_value(path, PEEK_BYTES))
