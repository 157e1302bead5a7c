"""`turnspec convert --from geppetto --to canonical` and back: file handling around mapping.py.

Both directions refuse input that does not validate as its own format (nothing is
written), so the mapping only ever sees well-formed data; the caller
(`conformance.convert.convert`) validates the output as the target format before moving
it into place. Canonical output is JSON Lines, or a JSON array when `dst` ends in `.json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from ...convert import ConvertContext
from ...errors import InputError
from ...findings import Finding, Severity
from ...jsonio import Record, read_json, read_jsonl
from ..base import FileStats, Options
from .checker import GeppettoRun, is_fixture
from .mapping import IdSource, messages_to_turn, turn_to_messages
from .yamlio import Document, dump, read_yaml


def _refuse(src: Path, fmt: str, errors: list[Finding]) -> InputError:
    first = errors[0]
    return InputError(
        f"{src} does not validate as {fmt} ({len(errors)} error(s); first: line {first.line} "
        f"{first.pointer} {first.rule} {first.message}); fix it or run `turnspec validate` first"
    )


def load_turn(src: Path) -> Document:
    """The first document of a valid geppetto Turn file, or InputError."""
    run = GeppettoRun(Options())
    doc: Document | None = None
    errors: list[Finding] = []
    for item in read_yaml(src, max_bytes=Options().max_line_bytes):
        if isinstance(item, Finding):
            if item.severity == Severity.ERROR:
                errors.append(item)
            continue
        doc = item
        errors += [f for f in run.check_document(item, FileStats(str(src), "geppetto")) if f.severity == Severity.ERROR]
    if errors:
        raise _refuse(src, "geppetto", errors)
    assert doc is not None
    if is_fixture(doc.value):
        raise InputError(
            f"{src} is an llm-runner fixture (a seed turn plus follow-up prompts the runner "
            "interleaves with model output), not a conversation; convert a Turn file"
        )
    return doc


def to_canonical(src: Path, dst: Path, ctx: ConvertContext, ids: IdSource | None = None) -> None:
    doc = load_turn(src)
    messages, losses = turn_to_messages(doc.value, ids)
    for loss in losses:
        ctx.lossy(str(src), doc.line(loss.pointer), loss.pointer, loss.message, loss.rule)
    if dst.suffix == ".json":
        dst.write_bytes(orjson.dumps(messages, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        dst.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))


def load_messages(src: Path) -> list[Record]:
    """The records of a valid canonical file holding one session, or InputError."""
    from ...api import validate

    report = validate([src], fmt="canonical")
    errors = [f for f in report.findings if f.severity == Severity.ERROR]
    if errors:
        raise _refuse(src, "canonical", errors)
    items = read_jsonl(src) if src.suffix == ".jsonl" else read_json(src)
    return [r for r in items if isinstance(r, Record)]


def from_canonical(src: Path, dst: Path, ctx: ConvertContext, ids: IdSource | None = None) -> None:
    records = load_messages(src)
    messages: list[Record] = []
    for rec in records:
        v: Any = rec.value
        if isinstance(v, dict) and "input_schema" in v and "role" not in v:
            ctx.lossy(
                rec.path,
                rec.line,
                rec.pointer,
                f"tool definition {v.get('name')!r} is not part of a geppetto turn; dropped",
            )
            continue
        messages.append(rec)
    sessions = list(dict.fromkeys(r.value["session_id"] for r in messages))
    if len(sessions) > 1:
        raise InputError(
            f"{src} holds {len(sessions)} sessions ({', '.join(sessions[:3])}"
            f"{', ...' if len(sessions) > 3 else ''}); "
            "a geppetto Turn file holds one: split the file by session_id first"
        )
    turn, losses = messages_to_turn([r.value for r in messages], ids)
    for loss in losses:
        rec = messages[loss.record]
        ctx.lossy(rec.path, rec.line, rec.pointer + loss.pointer, loss.message, loss.rule)
    dst.write_text(dump(turn), encoding="utf-8")
