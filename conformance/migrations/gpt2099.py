"""gpt2099 revision 1 <-> 2: the planned `options` -> `inherited` rename.

gpt2099's schema doc says the turn attribute "currently named options" (the options
deep-merged down a thread) will be renamed `inherited`, and its closing note scopes the
rename: "the field currently named "options" in stored frames" (gpt2099 schemas.md,
"Conversation Turn Schema" and the final note). So the function renames inside the `meta`
of a stored `gpt.turn` frame and leaves everything else alone: thread records (ctx.nu's
internal `{id, role, content, options, cache}`) and context windows keep `options`,
which names the delta or the merged record there, not the stored attribute. The rename
is lossless both ways; a frame holding both names is refused, since either direction
would have to drop one.
"""

from __future__ import annotations

from typing import Any

from .registry import Change, Migration, MigrationError

OLD, NEW = "options", "inherited"


def _meta(turn: Any) -> dict[str, Any] | None:
    """The meta record of a stored frame, or None for anything that is not a frame."""
    meta = turn.get("meta") if isinstance(turn, dict) else None
    return meta if isinstance(meta, dict) else None


def _rename(turn: Any, old: str, new: str) -> Any:
    meta = _meta(turn)
    if meta is None or old not in meta:
        return turn
    if new in meta:
        raise MigrationError(f"/meta/{new}", f"frame has both `{old}` and `{new}`; renaming would drop one")
    renamed = {(new if k == old else k): v for k, v in meta.items()}  # keeps key order
    return {**turn, "meta": renamed}


def forward(turn: Any) -> Any:
    """Revision 1 -> 2: `options` becomes `inherited` (key order kept)."""
    return _rename(turn, OLD, NEW)


def backward(turn: Any) -> Any:
    """Revision 2 -> 1: `inherited` becomes `options` again."""
    return _rename(turn, NEW, OLD)


def detect(turn: Any) -> int:
    """2 when the frame says `inherited`, else 1 (a turn with neither reads the same in both)."""
    meta = _meta(turn)
    return 2 if meta is not None and NEW in meta and OLD not in meta else 1


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
            "`options` -> `inherited` in stored frames (thread records and windows keep `options`)",
        ),
    ),
)
