"""One conversation through one adapter and back: the property fuzzers run per session.

`round_trip(adapter, messages)` renders `messages` with `to_wire`, reads the request back
with the adapter's `from_wire_request` and reports, as findings with the suite's rule
ids, what a conversation must keep (seed 003 §2.1.1-§2.1.2, §8.3): every text, every
tool call (when the adapter declares tools), a valid message list with each tool_result
paired to its call. Blocks the adapter declares it cannot carry are expected to drop.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from ..adapters.base import Adapter, Message, ToolDefinition
from ..findings import Finding, RuleInfo
from ..formats.canonical.memory import validate_messages
from . import rules as R
from .checks import HISTORY_IGNORE, _calls, _texts, crash, has_request_reader, opts
from .runner import capture_warnings


def round_trip(adapter: Adapter, messages: list[Message], tools: Sequence[ToolDefinition] = ()) -> list[Finding]:
    """Findings (empty when the conversation survives) for `messages` through `adapter`."""
    out: list[Finding] = []
    where = f"round-trip:{adapter.name}"

    def fail(rule: RuleInfo, message: str) -> None:
        out.append(Finding(where, None, "", rule.id, rule.severity, message))

    try:
        with capture_warnings():
            wire = adapter.to_wire(copy.deepcopy(messages), list(tools), opts(adapter))
    except Exception as exc:
        fail(R.REPLAY_PRESERVED, f"to_wire {crash(exc)}")
        return out
    if not has_request_reader(adapter):
        return out  # nothing to read back; the cassette and replay checks cover such adapters
    try:
        read: Any = adapter.from_wire_request(wire.body, session_id=messages[0]["session_id"])  # type: ignore[attr-defined]
        back: list[Message] = read.messages
    except Exception as exc:
        fail(R.REPLAY_PRESERVED, f"from_wire_request {crash(exc)}")
        return out
    if _texts(back) != _texts(messages):
        fail(R.REPLAY_PRESERVED, f"texts differ after the round trip: {_texts(back)[:3]} != {_texts(messages)[:3]}")
    if adapter.capabilities.get("supports_tools") and _calls(back) != _calls(messages):
        fail(R.REPLAY_PRESERVED, f"tool calls differ after the round trip: {_calls(back)} != {_calls(messages)}")
    for f in validate_messages(back, selection=HISTORY_IGNORE):
        if f.severity == "error":
            fail(R.REQUEST_VALID, f"{f.rule} {f.pointer}: {f.message}")
    return out
