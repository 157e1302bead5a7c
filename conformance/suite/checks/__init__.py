"""The conformance checks, one module per family; `CHECKS` runs them in this order.

Adding a check: a function decorated with `@check(rules...)` in its family module (or a
new module) and one line here. Rules live in `suite/rules.py` (the catalogue).
"""

from __future__ import annotations

from . import capabilities, cassette_apis, honesty, lossy, replay, requests, responses, semantics, streams, tool_ids
from .common import Check, Env
from .streams import aggregate, stream_invariants

CHECKS: tuple[Check, ...] = (
    capabilities.capabilities,
    responses.recorded_responses,
    streams.stream_equals_parse,
    requests.recorded_requests,
    cassette_apis.cassette_apis,
    lossy.lossy,
    tool_ids.tool_ids,
    replay.cross_provider,
    honesty.capability_honesty,
    *semantics.CHECKS,
)

__all__ = ["CHECKS", "Check", "Env", "aggregate", "stream_invariants"]
