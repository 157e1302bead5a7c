"""gpt2099 revision 1 <-> 2: the planned `options` -> `inherited` rename.

gpt2099's schema doc says the turn attribute "currently named options" (the options
deep-merged down a thread) will be renamed `inherited` (gpt2099 schemas.md, "Conversation
Turn Schema"; note at its end). The function works on one stored turn: a `gpt.turn`
frame (`{id, topic, meta: {...}}`, renamed inside `meta`) or a thread record / meta
record (`{id, role, content, options, ...}`, renamed at top level). The rename is
lossless both ways; a turn holding both names is refused, since either direction
would have to drop one.
"""

from __future__ import annotations

from typing import Any

from .registry import Change, Migration, MigrationError

OLD, NEW = "options", "inherited"


def _record(turn: dict[str, Any]) -> tuple[dict[str, Any], str]:
    meta = turn.get("meta")
    if isinstance(meta, dict):
        return meta, "/meta"
    return turn, ""


def _rename(turn: Any, old: str, new: str) -> Any:
    if not isinstance(turn, dict):
        return turn
    rec, where = _record(turn)
    if old not in rec:
        return turn
    if new in rec:
        raise MigrationError(f"{where}/{new}", f"turn has both `{old}` and `{new}`; renaming would drop one")
    renamed = {(new if k == old else k): v for k, v in rec.items()}  # keeps key order
    return {**turn, "meta": renamed} if where else renamed


def forward(turn: Any) -> Any:
    """Revision 1 -> 2: `options` becomes `inherited` (key order kept)."""
    return _rename(turn, OLD, NEW)


def backward(turn: Any) -> Any:
    """Revision 2 -> 1: `inherited` becomes `options` again."""
    return _rename(turn, NEW, OLD)


def detect(turn: Any) -> int:
    """2 when the turn says `inherited`, else 1 (a turn with neither reads the same in both)."""
    if isinstance(turn, dict):
        rec, _ = _record(turn)
        if NEW in rec and OLD not in rec:
            return 2
    return 1


MIGRATION = Migration(
    format="gpt2099",
    source=1,
    forward=forward,
    backward=backward,
    lossless=True,
    summary="rename the turn attribute `options` to `inherited` (gpt2099 schemas.md)",
    changes=(
        Change(
            "/meta/options",
            "field-renamed",
            "`options` -> `inherited` (thread records: top-level `options`)",
        ),
    ),
)
