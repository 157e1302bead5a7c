"""Where a turn keeps its inherited options: the one place that knows `options` vs `inherited`.

gpt2099 stores the options that are deep-merged down a thread under `meta.options`, and
plans to rename the key `inherited` (schemas.md "Conversation Turn Schema"). v1 accepts
both; every reader, rule and converter asks this module, so the v2 schema (only
`inherited`) and its migration change this file and nothing else.

Context windows and thread records are not affected: they carry the merged or delta record
under `options`, which is not part of the rename.
"""

from __future__ import annotations

from typing import Any

CURRENT = "options"
"""The name gpt2099 writes today (add-turn: `# options should be renamed to "inherited"`)."""
PLANNED = "inherited"
"""The name after the planned rename."""


def present(meta: dict[str, Any]) -> list[str]:
    """Which of the two names a turn meta uses (none, one, or both: GP012)."""
    return [k for k in (PLANNED, CURRENT) if k in meta]


def delta(meta: dict[str, Any]) -> dict[str, Any]:
    """This turn's options delta; `inherited` wins when both are present.

    A missing or null record is `{}`, as in ctx.nu (`get options? | default {}`).
    """
    for key in (PLANNED, CURRENT):
        value = meta.get(key)
        if isinstance(value, dict):
            return value
    return {}


def key_for_write(meta: dict[str, Any]) -> str:
    """The name to write a delta under: the one the turn already uses, else today's name."""
    return PLANNED if PLANNED in meta else CURRENT
