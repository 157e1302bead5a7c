"""`turnspec convert --from ai-sdk --to canonical` and back: files around mapping.py.

Both directions refuse input that does not validate as its own format (nothing is
written); the engine (`conformance.convert.convert`) validates the output as the target
format before moving it into place.

- ai-sdk -> canonical: each conversation becomes one session (its id derived from the
  input's bytes and the conversation's place); message ids and created_at are minted,
  counting up from the Unix epoch one millisecond per message (reported once per
  conversation, AS901); each UIMessage's id and metadata ride in provider_raw. A
  conversation of ModelMessages is read by `model_mapping`.
  Output: JSON Lines, or a JSON array when `dst` ends in `.json`.
- canonical -> ai-sdk: always UIMessages (what apps store and `useChat` loads; a model
  conversation is `convertToModelMessages` of them). `.json` output is the array of one session's UIMessages (what
  `saveChat` writes and `validateUIMessages` reads); `.jsonl` output is one array per line,
  one line per session. session ids, created_at and schema_version have no UIMessage field
  (reported once per file); message ids are the UIMessages' ids.
"""

from __future__ import annotations

from pathlib import Path

from ...core.convertkit import ConvertContext, FromCanonical, IdMint, Mapped, ToCanonical, convert_units, write_sessions
from ..base import FileStats, Options
from ..canonical import sessions_of
from . import rules as R
from .checker import AISDKRun
from .mapping import Session, from_ai_sdk, to_ai_sdk
from .model_checks import is_model_conversation
from .model_mapping import from_model_messages
from .reader import Conversation


def _mapped(c: Conversation, session_id: str, mint: IdMint) -> Mapped:
    values = [m.value for m in c.messages]
    read = from_model_messages if is_model_conversation(values) else from_ai_sdk
    messages, origin, losses = read(values, session_id, Session(mint, 0))
    return Mapped(messages, [c.messages[k] for k in origin], c.messages, losses)


def _placeholders(session_id: str, first: str) -> str:
    return (
        f"AI SDK messages carry no session id or times: session_id {session_id} is derived from the input, "
        f"message ids are minted (a UIMessage's id kept in provider_raw), and created_at is a placeholder counting up "
        f"from {first} (one millisecond per message); assistant messages get placeholder model, routing and usage "
        "(unknown)"
    )


TO_CANONICAL = ToCanonical(R.NAME, _mapped, R.SYNTHESIZED, _placeholders)


def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    convert_units(src, dst, ctx, AISDKRun(Options()), FileStats(str(src), R.NAME), TO_CANONICAL)


FROM_CANONICAL = FromCanonical(
    to_ai_sdk,
    "a .json AI SDK file holds one conversation",
    "one array of UIMessages per line, per session",
    "session_id, created_at and schema_version have no UIMessage field; dropped",
    R.LOSSY,
)


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    write_sessions(src, dst, ctx, sessions_of(src, ctx, "UIMessage", R.LOSSY), FROM_CANONICAL)
