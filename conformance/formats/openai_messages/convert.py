"""`turnspec convert --from openai-messages --to canonical` and back: files around mapping.py.

Both directions refuse input that does not validate as its own format (nothing is
written); the engine (`conformance.convert.convert`) validates the output as the target
format before moving it into place.

- openai-messages -> canonical: each conversation becomes one session (its id derived
  from the input's bytes and the conversation's place); Chat messages carry no id or
  time, so created_at counts up from the Unix epoch, one millisecond per message
  (reported once per conversation, OM901). Output: JSON Lines, or a JSON array when
  `dst` ends in `.json`.
- canonical -> openai-messages: `.json` output is an array of the messages of one
  session; `.jsonl` output is one `{"messages": [...]}` line per session. Message ids,
  session ids and created_at have no Chat field (reported once per file).
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
from .checker import OpenAIMessagesRun
from .mapping import Session, from_chat, to_chat
from .reader import Conversation, read_conversations


def _write(dst: Path, values: list[Any], array: bool) -> None:
    if array:
        dst.write_bytes(dumps(values, indent=True) + b"\n")
    else:
        dst.write_bytes(b"".join(dumps(v) + b"\n" for v in values))


def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    validated(src, R.NAME, OpenAIMessagesRun(Options()), FileStats(str(src), R.NAME))
    digest = hashlib.blake2b(src.read_bytes(), digest_size=16).hexdigest()
    convs = [c for c in read_conversations(src, Options().max_line_bytes) if isinstance(c, Conversation)]
    out: list[dict[str, Any]] = []
    for n, conv in enumerate(convs):
        s = Session(IdMint(digest, n), 0)
        session_id = s.mint.ulid(0, "session")
        messages, losses = from_chat([m.value for m in conv.messages], session_id, s)
        for loss in losses.items:
            m = conv.messages[loss.message]
            ctx.lossy(m.path, m.line, m.pointer + loss.pointer, loss.text, loss.rule)
        if messages:
            ctx.lossy(
                conv.path, conv.line, conv.pointer,
                f"Chat messages carry no session, id or time: session_id {session_id} is derived from the input, "
                f"and created_at is a placeholder counting up from {messages[0]['created_at']} "
                "(one millisecond per message), which message ids carry; assistant messages get placeholder "
                "model, provider, routing and usage (unknown:unknown, zero usage)",
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
                rec.path, rec.line, rec.pointer, f"tool definition {v.get('name')!r} is not a Chat message; dropped"
            )
            continue
        sessions.setdefault(v["session_id"], []).append(rec)
    array = dst.suffix == ".json"
    if array and len(sessions) > 1:
        raise InputError(
            f"{src} holds {len(sessions)} sessions; a .json openai-messages file holds one conversation: "
            'write .jsonl (one {"messages": [...]} line per session) or split the file by session_id'
        )
    if sessions:
        ctx.lossy(
            str(src), None, "",
            "message ids, session_id, created_at and schema_version have no Chat field; dropped",
            R.LOSSY,
        )  # fmt: skip
    out: list[Any] = []
    for records in sessions.values():
        chat, losses = to_chat([r.value for r in records])
        for loss in losses.items:
            rec = records[loss.message]
            ctx.lossy(rec.path, rec.line, rec.pointer + loss.pointer, loss.text, loss.rule)
        if array:
            out = chat
        else:
            out.append({"messages": chat})
    _write(dst, out, array)
