"""`turnspec convert --from otel-genai --to canonical` and back: files around mapping.py.

Both directions refuse input that does not validate as its own format (nothing is
written); the engine (`conformance.convert.convert`) validates the output as the target
format before moving it into place.

- otel-genai -> canonical: each record becomes one session (its id derived from the
  input's bytes and the record's place); message ids and created_at are minted, counting
  up from the Unix epoch one millisecond per message (reported once per record, OT901).
  Output: JSON Lines, or a JSON array when `dst` ends in `.json`.
- canonical -> otel-genai: one record per session (`mapping.to_otel`); `.json` output
  holds one session's record, `.jsonl` one record per line. Message ids, session ids,
  created_at and schema_version have no OTel GenAI field (reported once per file).
"""

from __future__ import annotations

from pathlib import Path

from ...core.convertkit import ConvertContext, FromCanonical, IdMint, Mapped, ToCanonical, convert_units, write_sessions
from ..base import FileStats, Options
from ..canonical import sessions_of
from . import rules as R
from .checker import OtelGenAIRun
from .mapping import Session, from_otel, to_otel
from .reader import Record


def _mapped(rec: Record, session_id: str, mint: IdMint) -> Mapped:
    messages, origin, losses, places = from_otel(rec, session_id, Session(mint, 0))
    return Mapped(messages, origin, places, losses)


def _placeholders(session_id: str, first: str) -> str:
    return (
        f"OTel GenAI records carry no session, message id or time: session_id {session_id} is derived from "
        f"the input, message ids are minted, and created_at is a placeholder counting up from "
        f"{first} (one millisecond per message); assistant messages get placeholder "
        "routing and usage cost (provider from gen_ai.provider.name, the output message's model and tokens "
        "from gen_ai.response.model and gen_ai.usage.*, else unknown)"
    )


TO_CANONICAL = ToCanonical(R.NAME, _mapped, R.SYNTHESIZED, _placeholders)


def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    convert_units(src, dst, ctx, OtelGenAIRun(Options()), FileStats(str(src), R.NAME), TO_CANONICAL)


FROM_CANONICAL = FromCanonical(
    to_otel,
    "a .json OTel GenAI file holds one record",
    "one record per line, per session",
    "message ids, session_id, created_at and schema_version have no OTel GenAI field; dropped",
    R.LOSSY,
)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    write_sessions(src, dst, ctx, sessions_of(src, ctx, "OTel GenAI message", R.LOSSY), FROM_CANONICAL)
