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

from ...core.convertkit import ConvertContext, is_tool_definition, refuse_invalid, validated
from ...core.errors import InputError
from ...core.findings import Finding, Severity
from ...core.jsonio import Record, read_json, read_jsonl
from ..base import FileStats, Options
from ..canonical.checker import CanonicalRun
from . import rules as R
from .checker import GeppettoRun, is_fixture
from .mapping import SESSION_KEY, IdSource, messages_to_turn, turn_to_messages
from .yamlio import Document, dump, read_yaml


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
    refuse_invalid(src, "geppetto", errors)
    assert doc is not None
    if is_fixture(doc.value):
        raise InputError(
            f"{src} is an llm-runner fixture (a seed turn plus follow-up prompts the runner "
            "interleaves with model output), not a conversation; convert a Turn file"
        )
    return doc


def _derived_ids(src: Path) -> IdSource:
    """Ids and times derived from the input's bytes (same input, same output)."""
    return IdSource.of(src.read_bytes())


def to_canonical(src: Path, dst: Path, ctx: ConvertContext, ids: IdSource | None = None) -> None:
    doc = load_turn(src)
    ids = ids if ids is not None else _derived_ids(src)
    messages, losses = turn_to_messages(doc.value, ids)
    for loss in losses:
        ctx.lossy(str(src), doc.line(loss.pointer), loss.pointer, loss.message, loss.rule)
    if ids.derived and ids.minted_time and messages:
        ctx.lossy(
            str(src),
            None,
            "",
            f"geppetto records no time: created_at is a placeholder counting up from {messages[0]['created_at']} "
            "(one microsecond per message) and message ids carry that time",
            R.SYNTHESIZED,
        )
    if ids.minted_session and messages:
        ctx.lossy(
            str(src),
            None,
            "/metadata",
            f"the turn names no session ({SESSION_KEY}); session_id {messages[0]['session_id']} is derived from the input",
            R.SYNTHESIZED,
        )
    if dst.suffix == ".json":
        dst.write_bytes(orjson.dumps(messages, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        dst.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))


def load_messages(src: Path) -> list[Record]:
    """The records of a valid canonical file holding one session, or InputError."""
    validated(src, "canonical", CanonicalRun(Options()), FileStats(str(src), "canonical"))
    items = read_jsonl(src) if src.suffix == ".jsonl" else read_json(src)
    return [r for r in items if isinstance(r, Record)]


def from_canonical(src: Path, dst: Path, ctx: ConvertContext, ids: IdSource | None = None) -> None:
    records = load_messages(src)
    messages: list[Record] = []
    for rec in records:
        v: Any = rec.value
        if is_tool_definition(v):
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
    turn, losses = messages_to_turn([r.value for r in messages], ids if ids is not None else _derived_ids(src))
    for loss in losses:
        rec = messages[loss.record]
        ctx.lossy(rec.path, rec.line, rec.pointer + loss.pointer, loss.message, loss.rule)
    dst.write_text(dump(turn), encoding="utf-8")
