"""TC800: interactions no adapter serves are skipped with a reason, never silently."""

from __future__ import annotations

from collections.abc import Iterator

from ...wire import registry
from .. import rules as R
from ..outcome import SUITE_SUBJECT, Outcome
from .common import Env, check, o, wire_name


@check(R.CASSETTE_API)
def cassette_apis(env: Env) -> Iterator[Outcome]:
    served = {wire_name(s.adapter) for s in env.subjects} | {wire_name(p) for p in env.peers}
    for c in env.samples:
        if c.error:
            yield o(R.CASSETTE_API, SUITE_SUBJECT, "fail", c.label, c.error)
        for it in c.interactions:
            if it.api in served:
                yield o(R.CASSETTE_API, SUITE_SUBJECT, "pass", it.label)
                continue
            wire = registry.get(it.api) if it.api is not None else None
            path = it.uri.split("?")[0][:80]
            if wire is None:
                why = f"unknown endpoint {path}: no WireApi record matches it"
            elif not wire.chat:
                why = f"{wire.name}: not an LLM chat turn ({path})"
            else:
                why = f"{wire.name}: no registered adapter serves it"
            yield o(R.CASSETTE_API, SUITE_SUBJECT, "skip", it.label, why)
    for cs in env.own.values():
        for c in cs:
            if c.error:
                yield o(R.CASSETTE_API, SUITE_SUBJECT, "fail", c.label, c.error)
    for s in env.subjects:
        for it, why in env.unclaimed(s):
            yield o(R.CASSETTE_API, SUITE_SUBJECT, "skip", it.label, why)
