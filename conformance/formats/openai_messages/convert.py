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

from pathlib import Path

from ...core.convertkit import ConvertContext, FromCanonical, IdMint, Mapped, ToCanonical, convert_units, write_sessions
from ..base import FileStats, Options
from ..canonical import sessions_of
from . import rules as R
from .checker import OpenAIMessagesRun
from .mapping import Session, from_chat, to_chat
from .reader import Conversation


def _mapped(conv: Conversation, session_id: str, mint: IdMint) -> Mapped:
    messages, losses = from_chat([m.value for m in conv.messages], session_id, Session(mint, 0))
    # one canonical message per Chat message but the dropped function messages
    kept = [m for m in conv.messages if m.value.get("role") != "function"]
    # else not one for one: the conversation's place for each (the origins stay in step)
    origins = kept if len(kept) == len(messages) else [conv] * len(messages)
    return Mapped(messages, origins, conv.messages, losses)


def _placeholders(session_id: str, first: str) -> str:
    return (
        f"Chat messages carry no session, id or time: session_id {session_id} is derived from the input, "
        f"and created_at is a placeholder counting up from {first} "
        "(one millisecond per message), which message ids carry; assistant messages get placeholder "
        "model, provider, routing and usage (unknown:unknown, zero usage)"
    )


TO_CANONICAL = ToCanonical(R.NAME, _mapped, R.SYNTHESIZED, _placeholders)


def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    convert_units(src, dst, ctx, OpenAIMessagesRun(Options()), FileStats(str(src), R.NAME), TO_CANONICAL)


FROM_CANONICAL = FromCanonical(
    to_chat,
    "a .json openai-messages file holds one conversation",
    'one {"messages": [...]} line per session',
    "message ids, session_id, created_at and schema_version have no Chat field; dropped",
    R.LOSSY,
    line=lambda chat: {"messages": chat},
)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    write_sessions(src, dst, ctx, sessions_of(src, ctx, "Chat message"), FROM_CANONICAL)
