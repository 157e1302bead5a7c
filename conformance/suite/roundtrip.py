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

from ..adapters.base import Adapter, Message, ToolDefinition
from ..adapters.protocol import capabilities_of
from ..core.findings import Finding, RuleInfo
from ..formats.canonical.memory import validate_messages
from . import rules as R
from .capture import capture_warnings
from .checks.common import HISTORY_IGNORE, calls_of, crash, opts, read_back, texts_of


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
    try:
        read = read_back(adapter, wire, messages[0]["session_id"])
    except Exception as exc:
        fail(R.REPLAY_PRESERVED, f"from_wire_request {crash(exc)}")
        return out
    if read is None:
        return out  # nothing to read back; the cassette and replay checks cover such adapters
    back: list[Message] = read.messages
    if texts_of(back) != texts_of(messages):
        fail(R.REPLAY_PRESERVED, f"texts differ after the round trip: {texts_of(back)[:3]} != {texts_of(messages)[:3]}")
    if capabilities_of(adapter).get("supports_tools") and calls_of(back) != calls_of(messages):
        fail(R.REPLAY_PRESERVED, f"tool calls differ after the round trip: {calls_of(back)} != {calls_of(messages)}")
    for f in validate_messages(back, selection=HISTORY_IGNORE):
        if f.severity == "error":
            fail(R.REQUEST_VALID, f"{f.rule} {f.pointer}: {f.message}")
    return out
