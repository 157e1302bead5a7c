"""The message status a finished call's stop reason implies, declared once.

Canonical §4.3 `MessageStatus`: `CANCELLED` "user cancelled mid-generation", `ERROR`
"generation failed", and `COMPLETE` for a call that ended otherwise (`end_turn`,
`tool_use`, `max_tokens`, `stop_sequence`). The adapters' stream assembly
(`adapters.streams`), `wire parse` (`adapters.debug`), the bridges and TC903 read it here.
"""

from __future__ import annotations

from types import MappingProxyType

STATUS_OF_STOP = MappingProxyType({"error": "error", "cancelled": "cancelled"})
"""Stop reasons whose message status is not `complete`: that status."""


def status_of_stop(stop_reason: object) -> str:
    """The status of a finished call whose stop reason is `stop_reason` (any value: one no
    table names, or none, finished too)."""
    return STATUS_OF_STOP.get(stop_reason, "complete") if isinstance(stop_reason, str) else "complete"
