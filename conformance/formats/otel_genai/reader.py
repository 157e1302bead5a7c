"""Reading OpenTelemetry GenAI message records, and recognising them cheaply.

Accepted files: a `.json` record, or a `.jsonl` of one record per line (standard input as
`--format otel-genai -`, `convertkit.read_documents`). A record is either

- an object of one call's attributes, as a span or event holds them:
  `gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages`
  (each an array, or the JSON text of one: "on spans it MAY be recorded as a JSON
  string"), with optionally `gen_ai.provider.name`, `gen_ai.response.model` (or
  `gen_ai.request.model`) and `gen_ai.usage.input_tokens`/`output_tokens`; or
- a bare array of ChatMessages (the value of `gen_ai.input.messages`).

Every message keeps its location: the file, its line (the record's line in a `.jsonl`, or
inside a JSON-text attribute), and its JSON pointer (`/gen_ai.input.messages/2`; inside a
JSON-text attribute the pointer continues into the JSON the string holds).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.convertkit import Document, Item, member_lines, peek_value, read_documents
from ...core.findings import Finding
from ...core.jsonio import parse
from .rules import ATTRIBUTES, INPUT, PART_TYPES


@dataclass
class Record:
    """One record: its message attributes' items (each located), the other attributes,
    and what makes it no record (a pointer and a message for OT001)."""

    path: str
    line: int
    pointer: str
    sections: dict[str, list[Item]] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)
    problems: list[tuple[str, str]] = field(default_factory=list)

    def messages(self) -> list[tuple[str, Item]]:
        """(attribute, item) of every input and output message, in order."""
        return [(name, it) for name in ATTRIBUTES[1:] for it in self.sections.get(name, ())]


def read_records(path: Path, max_line_bytes: int, data: bytes | None = None) -> Iterator[Record | Finding]:
    """The file's records (each document, `convertkit.read_documents`, read as one, its
    JSON-text attributes parsed once) and the reader's findings."""
    for doc in read_documents(path, max_line_bytes, data):
        yield doc if isinstance(doc, Finding) else record_of(doc)


def record_of(doc: Document) -> Record:
    rec = Record(doc.path, doc.line, doc.pointer)
    if doc.items is not None:
        rec.sections[INPUT] = doc.items
        if not doc.items:
            rec.problems.append((doc.pointer, "a record of messages is a non-empty array, not an empty one"))
        return rec
    value = doc.value
    if not isinstance(value, dict) or not any(k in value for k in ATTRIBUTES):
        rec.problems.append((doc.pointer, "a record is an array of messages or an object holding gen_ai.input.messages, "
                             "gen_ai.output.messages or gen_ai.system_instructions"))  # fmt: skip
        return rec
    for key, v in value.items():
        if key not in ATTRIBUTES:
            rec.attrs[key] = v
            continue
        ptr = f"{doc.pointer}/{key}"
        lines = member_lines(doc.raw, key) if isinstance(v, list) and doc.raw else []
        if isinstance(v, str):
            try:
                v = parse(v.encode("utf-8", "surrogatepass"))
            except ValueError:
                rec.problems.append((ptr, f"{key} is a string that does not hold JSON"))
                continue
        if not isinstance(v, list):
            rec.problems.append((ptr, f"{key} is an array (or the JSON text of one), not {type(v).__name__}"))
            continue
        at = lines if len(lines) == len(v) else [doc.line] * len(v)
        rec.sections[key] = [Item(doc.path, at[i], f"{ptr}/{i}", x) for i, x in enumerate(v)]
    return rec


def looks_like_record(value: Any) -> bool:
    """Unambiguous: an object holding a gen_ai message attribute, or a non-empty array
    whose every element has a string `role` and an array of `parts`, every part an object
    whose `type` the schemas define (Gemini's parts have no `type`, pydantic-ai's messages
    a `kind`)."""
    if isinstance(value, dict):
        return any(k in value for k in ATTRIBUTES)
    return (
        isinstance(value, list) and bool(value)
        and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and "kind" not in m
            and isinstance(m.get("parts"), list) and bool(m["parts"])
            and all(isinstance(p, dict) and isinstance(p.get("type"), str) and p["type"] in PART_TYPES for p in m["parts"])
            for m in value
        )
    )  # fmt: skip


def looks_like(path: Path) -> bool:
    """Detection: a `.json` (at most `convertkit.PEEK_BYTES`) or the first line of a
    `.jsonl` is a record (`looks_like_record`). A longer `.json` needs `--format`."""
    return looks_like_record(peek_value(path))
