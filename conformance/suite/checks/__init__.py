"""The conformance checks, one module per family; `CHECKS` runs them in this order.

Adding a check: a function decorated with `@check(rules...)` in its family module (or a
new module) and one line here. Rules live in `suite/rules.py` (the catalogue).
"""

from __future__ import annotations

from . import (
    cancel,
    capabilities,
    capability_probes,
    cassette_apis,
    core_fields,
    honesty,
    lossy,
    options,
    provider_raw,
    replay,
    requests,
    responses,
    scripted,
    semantics,
    streams,
    tool_ids,
)
from .common import HISTORY_IGNORE, RECORDED_TRAFFIC_IGNORE, Check, Env, crash, ctx_for, parse_stream
from .streams import stream_invariants

CHECKS: tuple[Check, ...] = (
    capabilities.capabilities,
    responses.recorded_responses,
    streams.stream_equals_parse,
    requests.recorded_requests,
    core_fields.core_fields,
    options.request_options,
    cassette_apis.cassette_apis,
    lossy.lossy,
    tool_ids.tool_ids,
    replay.cross_provider,
    replay.recorded_thinking_sent_back,
    replay.tool_result_texts,
    honesty.capability_honesty,
    *semantics.CHECKS,
    scripted.scripted_cases,
    cancel.cancellation,
    provider_raw.provider_raw,
    capability_probes.capability_probes,
    semantics.reply_text,
    semantics.reply_tool_calls,
)

# what the runner and the tests read from the package (the other helpers live in their family
# modules and in `common`, imported from there)
__all__ = [
    "CHECKS",
    "HISTORY_IGNORE",
    "RECORDED_TRAFFIC_IGNORE",
    "Check",
    "Env",
    "crash",
    "ctx_for",
    "parse_stream",
    "stream_invariants",
]
