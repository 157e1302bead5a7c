"""`turnspec convert --from pydantic-ai --to canonical` and back: files around mapping.py.

Both directions refuse input that does not validate as its own format (nothing is
written); the engine (`conformance.convert.convert`) validates the output as the target
format before moving it into place.

- pydantic-ai -> canonical: each history becomes one session (its id derived from the
  input's bytes and the history's place); message ids and created_at are minted, counting
  up from the Unix epoch one millisecond per message (reported once per history, PA901).
  Output: JSON Lines, or a JSON array when `dst` ends in `.json`.
- canonical -> pydantic-ai: `.json` output is the array of one session's ModelMessages
  (what `ModelMessagesTypeAdapter.validate_json` reads); `.jsonl` output is one array per
  line, one line per session. Message ids, session ids and schema_version have no
  pydantic-ai field (reported once per file); created_at is written as each part's and
  response's `timestamp`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ...convertkit import ConvertContext, IdMint, is_tool_definition, validated
from ...errors import InputError
from ...jsonio import Record, dumps, read_json, read_jsonl
from ..base import FileStats, Options
from ..canonical.checker import CanonicalRun
from . import rules as R
from .checker import PydanticAIRun
from .mapping import Session, from_pydantic_ai, to_pydantic_ai
from .reader import History, read_histories


def _write(dst: Path, values: list[Any], array: bool) -> None:
    if array:
        dst.write_bytes(dumps(values, indent=True) + b"\n")
    else:
        dst.write_bytes(b"".join(dumps(v) + b"\n" for v in values))


def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    validated(src, R.NAME, PydanticAIRun(Options()), FileStats(str(src), R.NAME))
    digest = hashlib.blake2b(src.read_bytes(), digest_size=16).hexdigest()
    histories = [h for h in read_histories(src, Options().max_line_bytes) if isinstance(h, History)]
    out: list[dict[str, Any]] = []
    for n, h in enumerate(histories):
        s = Session(IdMint(digest, n), 0)
        session_id = s.mint.ulid(0, "session")
        messages, _, losses = from_pydantic_ai([m.value for m in h.messages], session_id, s)
        for loss in losses.items:
            m = h.messages[loss.message]
            ctx.lossy(m.path, m.line, m.pointer + loss.pointer, loss.text, loss.rule)
        if messages:
            ctx.lossy(
                h.path, h.line, h.pointer,
                f"pydantic-ai messages carry no session or message id: session_id {session_id} is derived from the "
                f"input, and created_at is a placeholder counting up from {messages[0]['created_at']} (one "
                "millisecond per message; part and response timestamps are not read), which message ids carry; "
                "assistant messages get placeholder routing and usage cost (model and provider from model_name and "
                "provider_name, else unknown)",
                R.SYNTHESIZED,
            )  # fmt: skip
        out += messages
    _write(dst, out, dst.suffix == ".json")


def _canonical_records(src: Path) -> list[Record]:
    validated(src, "canonical", CanonicalRun(Options()), FileStats(str(src), "canonical"))
    items = read_jsonl(src) if src.suffix == ".jsonl" else read_json(src)
    return [r for r in items if isinstance(r, Record)]


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    sessions: dict[str, list[Record]] = {}
    for rec in _canonical_records(src):
        v: Any = rec.value
        if is_tool_definition(v):
            ctx.lossy(
                rec.path, rec.line, rec.pointer,
                f"tool definition {v.get('name')!r} is not a pydantic-ai message; dropped",
                R.LOSSY,
            )  # fmt: skip
            continue
        sessions.setdefault(v["session_id"], []).append(rec)
    array = dst.suffix == ".json"
    if array and len(sessions) > 1:
        raise InputError(
            f"{src} holds {len(sessions)} sessions; a .json pydantic-ai file holds one history: "
            "write .jsonl (one array of messages per line, per session) or split the file by session_id"
        )
    if sessions:
        ctx.lossy(
            str(src), None, "",
            "message ids, session_id and schema_version have no pydantic-ai field; dropped",
            R.LOSSY,
        )  # fmt: skip
    out: list[Any] = []
    for records in sessions.values():
        history, losses = to_pydantic_ai([r.value for r in records])
        for loss in losses.items:
            rec = records[loss.message]
            ctx.lossy(rec.path, rec.line, rec.pointer + loss.pointer, loss.text, loss.rule)
        if array:
            out = history
        else:
            out.append(history)
    _write(dst, out, array)
