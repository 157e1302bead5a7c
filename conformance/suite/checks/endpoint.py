"""TC109 on the whole request: its method, URL and headers against what the API's record
says its endpoint carries (`WireApi.endpoint`: the path of a streamed and of a single reply,
the model id and how it is spelled, the stream choice, the required headers).

Judged on every request rendered from a recording (`recorded`: with the options the adapter
read off it, so a reading that loses the URL is TC802's to report) and on requests the
suite renders itself (`probes`): one reply and a stream of one user turn, and one per model
id the record's docs show (`Endpoint.examples`, whose `:` and `/` an adapter must keep), each
asked for as the canonical id `<provider>:<model>` (canonical §6.3).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...adapters.protocol import AdapterOptions, Message, WireRequest
from ...core import ids
from ...wire import endpoint
from ...wire.api import WireApi
from .. import rules as R
from ..capture import capture_warnings
from ..outcome import AdapterUnderTest, Outcome
from .common import crash, outcome, render, session_for

ENDPOINTS = f'{R.ENDPOINT.section}: "{R.ENDPOINT.summary}"'
_PROBE_MS = 1_778_241_600_000  # a fixed clock: the probe's message is the same on every run


def _headers(wire: Any) -> Mapping[str, str]:
    headers = getattr(wire, "headers", None)
    return {str(k): str(v) for k, v in headers.items()} if isinstance(headers, Mapping) else {}


def judge(api: WireApi, wire: WireRequest, *, stream: bool, model: str | None) -> list[str]:
    """`wire.endpoint.problems` of an adapter's rendered request (an untrusted value)."""
    method, path = getattr(wire, "method", ""), getattr(wire, "path", "")
    return endpoint.problems(
        api,
        str(method),
        str(path),
        _headers(wire),
        getattr(wire, "body", None),
        stream=stream,
        model=model,
    )


def reason(problems: list[str]) -> str:
    return f"{'; '.join(problems[:3])} ({ENDPOINTS})" if problems else ""


def recorded(s: AdapterUnderTest, api: WireApi, label: str, wire: WireRequest, options: Any) -> Iterator[Outcome]:
    """TC109 on a request rendered from a recording's reading: the endpoint its own options
    ask for (the stream they choose; the model id spelled as the record says)."""
    stream = bool(getattr(options, "stream", False))
    found = judge(api, wire, stream=stream, model=None)
    yield outcome(R.ENDPOINT, s, "fail" if found else "pass", label, reason(found))


def _one_turn(sid: str) -> list[Message]:
    return [
        {
            "id": ids.of(_PROBE_MS, 0),
            "session_id": sid,
            "role": "user",
            "content": [{"type": "text", "text": "Say hello."}],
            "metadata": {},
            "created_at": "2026-05-08T12:00:01.000000Z",
            "schema_version": 1,
        }
    ]


def probes(s: AdapterUnderTest, api: WireApi, streams: bool) -> Iterator[Outcome]:
    """TC109 on requests the suite renders: one reply and (when the adapter streams) a
    stream, and each of the record's example model ids, judged against the record's
    endpoint with the model id the options name."""
    a = s.adapter
    ep = api.endpoint
    if ep is None:
        return
    base = f"{a.provider}:conformance-model"
    cases: list[tuple[str, AdapterOptions]] = [("one reply", AdapterOptions(model=base, max_output_tokens=64))]
    if streams:
        cases.append(("streamed", AdapterOptions(model=base, max_output_tokens=64, stream=True)))
    cases += [(f"model {m}", AdapterOptions(model=f"{a.provider}:{m}", max_output_tokens=64)) for m in ep.examples]
    for what, options in cases:
        label = f"endpoint: {what}"
        try:
            with capture_warnings():
                wire = render(a, _one_turn(session_for("endpoint", label)), [], options)
        except Exception as exc:
            yield outcome(R.ENDPOINT, s, "fail", label, crash(exc))
            continue
        found = judge(api, wire, stream=options.stream, model=options.model_for(str(a.provider)))
        yield outcome(R.ENDPOINT, s, "fail" if found else "pass", label, reason(found))
