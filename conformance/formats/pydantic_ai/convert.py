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

from pathlib import Path

from ...core.convertkit import ConvertContext, FromCanonical, IdMint, Mapped, ToCanonical, convert_units, write_sessions
from ..base import FileStats, Options
from ..canonical import sessions_of
from . import rules as R
from .checker import PydanticAIRun
from .mapping import Session, from_pydantic_ai, to_pydantic_ai
from .reader import History


def _mapped(h: History, session_id: str, mint: IdMint) -> Mapped:
    messages, origin, losses = from_pydantic_ai([m.value for m in h.messages], session_id, Session(mint, 0))
    return Mapped(messages, [h.messages[k] for k in origin], h.messages, losses)


def _placeholders(session_id: str, first: str) -> str:
    return (
        f"pydantic-ai messages carry no session or message id: session_id {session_id} is derived from the "
        f"input, and created_at is a placeholder counting up from {first} (one "
        "millisecond per message; part and response timestamps are not read), which message ids carry; "
        "assistant messages get placeholder routing and usage cost (model and provider from model_name and "
        "provider_name, else unknown)"
    )


TO_CANONICAL = ToCanonical(R.NAME, _mapped, R.SYNTHESIZED, _placeholders)


def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    convert_units(src, dst, ctx, PydanticAIRun(Options()), FileStats(str(src), R.NAME), TO_CANONICAL)


FROM_CANONICAL = FromCanonical(
    to_pydantic_ai,
    "a .json pydantic-ai file holds one history",
    "one array of messages per line, per session",
    "message ids, session_id and schema_version have no pydantic-ai field; dropped",
    R.LOSSY,
)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    write_sessions(src, dst, ctx, sessions_of(src, ctx, "pydantic-ai message", R.LOSSY), FROM_CANONICAL)
