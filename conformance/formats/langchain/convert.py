"""`turnspec convert --from langchain --to canonical` and back: files around mapping.py.

Both directions refuse input that does not validate as its own format (nothing is
written); the engine (`conformance.convert.convert`) validates the output as the target
format before moving it into place.

- langchain -> canonical: each conversation becomes one session (its id derived from the
  input's bytes and the conversation's place); message ids are kept where they are ULIDs
  in order, else minted; created_at counts up from the Unix epoch one millisecond per
  message (reported once per conversation, LC901). Output: JSON Lines, or a JSON array
  when `dst` ends in `.json`.
- canonical -> langchain: `.json` output is the array of one session's messages (what
  `messages_from_dict` reads); `.jsonl` output is one array per line, one line per
  session. Session ids, created_at and schema_version have no LangChain field (reported
  once per file).
"""

from __future__ import annotations

from pathlib import Path

from ...core.convertkit import (
    ConvertContext,
    Document,
    FromCanonical,
    IdMint,
    Mapped,
    ToCanonical,
    convert_units,
    write_sessions,
)
from ..base import FileStats, Options
from ..canonical import sessions_of
from . import rules as R
from .checker import LangChainRun
from .mapping import Session, from_langchain, to_langchain


def _mapped(doc: Document, session_id: str, mint: IdMint) -> Mapped:
    items = doc.items or []
    messages, origin, losses = from_langchain([m.value for m in items], session_id, Session(mint, 0))
    return Mapped(messages, [items[k] for k in origin], items, losses)


def _placeholders(session_id: str, first: str) -> str:
    return (
        f"LangChain messages carry no session or time: session_id {session_id} is derived from the input, and "
        f"created_at is a placeholder counting up from {first} (one millisecond per "
        "message); message ids are kept where they are ULIDs in order, else minted; assistant messages get "
        "placeholder routing and usage cost (model and provider from response_metadata, else unknown)"
    )


TO_CANONICAL = ToCanonical(R.NAME, _mapped, R.SYNTHESIZED, _placeholders)


def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    convert_units(src, dst, ctx, LangChainRun(Options()), FileStats(str(src), R.NAME), TO_CANONICAL)


FROM_CANONICAL = FromCanonical(
    to_langchain,
    "a .json LangChain file holds one conversation",
    "one array of messages per line, per session",
    "session_id, created_at and schema_version have no LangChain field; dropped (message ids are kept as `id`)",
    R.LOSSY,
)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    write_sessions(src, dst, ctx, sessions_of(src, ctx, "LangChain message", R.LOSSY), FROM_CANONICAL)
