"""Facts about a request body read through its record's probes: where the system prompt
went, which tool ids the calls and results carry, which results answer no earlier call.

Generic over records: the probes locate the fields (JSON pointers), this module only
reads positions, so the suite judges placement without an adapter's own reading of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .api import WireApi

_INDEX = re.compile(r"/(\d+)(?:/|$)")


@dataclass
class WireFacts:
    """Facts read from one request body."""

    system_top_level: str | None = None  # system text outside the history (None: none there)
    system_in_messages: list[int] = field(default_factory=list)  # history positions carrying system text
    tool_use_ids: list[str] = field(default_factory=list)
    tool_result_ids: list[str] = field(default_factory=list)
    unpaired_results: list[str] = field(default_factory=list)  # result ids no earlier call carries


def history_index(api: WireApi, pointer: str) -> int | None:
    """The history position a pointer sits in (`/messages/3/...` -> 3), or None outside it."""
    prefix = "/" + api.history_key
    if not pointer.startswith(prefix + "/"):
        return None
    m = _INDEX.match(pointer, len(prefix))
    return int(m.group(1)) if m else None


def inspect(api: WireApi, body: Any) -> WireFacts | None:
    """Facts of `body`, or None when it is not a JSON object."""
    if not isinstance(body, dict):
        return None
    facts = WireFacts()
    top: list[str] = []
    for loc in api.probes.system(body):
        k = history_index(api, loc.pointer)
        if k is None:
            top.append(str(loc.value))
        elif k not in facts.system_in_messages:
            facts.system_in_messages.append(k)
    facts.system_top_level = "\n\n".join(top) if top else None
    uses = [(history_index(api, x.pointer), str(x.value)) for x in api.probes.tool_use_ids(body)]
    facts.tool_use_ids = [v for _, v in uses]
    for loc in api.probes.tool_result_ids(body):
        tid, k = str(loc.value), history_index(api, loc.pointer)
        facts.tool_result_ids.append(tid)
        earlier = any(u == tid and (ku is None or k is None or ku < k) for ku, u in uses)
        if not earlier:
            facts.unpaired_results.append(tid)
    return facts
