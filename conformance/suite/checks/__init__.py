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
from .common import (
    DROP_FIELDS,
    HISTORY_IGNORE,
    RECORDED_TRAFFIC_IGNORE,
    SERVER_SIDE_IGNORE,
    Check,
    Env,
    body_text,
    calls_of,
    check,
    crash,
    ctx_for,
    drop_problem,
    drop_records,
    errors_of,
    message_from_events,
    opts,
    parse_stream,
    read_back,
    read_recorded,
    read_request,
    shape,
    texts_of,
)
from .lossy import lossy_probes
from .replay import produced_through
from .streams import aggregate, stream_invariants

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
)

# the public names of the former suite/checks.py module, for code written against it
__all__ = [
    "CHECKS",
    "DROP_FIELDS",
    "HISTORY_IGNORE",
    "RECORDED_TRAFFIC_IGNORE",
    "SERVER_SIDE_IGNORE",
    "Check",
    "Env",
    "aggregate",
    "body_text",
    "calls_of",
    "check",
    "crash",
    "ctx_for",
    "drop_problem",
    "drop_records",
    "errors_of",
    "lossy_probes",
    "message_from_events",
    "opts",
    "parse_stream",
    "produced_through",
    "read_back",
    "read_recorded",
    "read_request",
    "shape",
    "stream_invariants",
    "texts_of",
]
