"""TC101, TC103, TC301, TC801 over recorded responses; recorded streams go through the stream checks
(TC601-TC605, TC607-TC610)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ...adapters.errors import AdapterError
from ...adapters.protocol import Adapter, RequestContext, StreamEvent, WireResponse
from ...adapters.streams import stream_vocabulary, to_canonical_names
from ...adapters.toolids import is_canonical_tool_id
from ...core import ids
from ...core.findings import Selection
from ...core.schema_validation import SchemaValidator
from .. import rules as R
from ..interactions import Interaction
from ..outcome import AdapterUnderTest, Outcome
from . import errors as error_oracle
from .common import (
    Env,
    check,
    crash,
    ctx_for,
    errors_of,
    estimate_of,
    locates,
    message_from_events,
    non_json,
    outcome,
    parse_stream,
    read_recorded,
    recorded_selection,
    session_for,
    wire_api_of,
)
from .minted import WireIds, deterministic, fixed_ids, match_ids
from .streams import literal_fragments, signature_on_final_delta, stream_invariants, strip_ids, wire_values

# the sentence TC607 enforces: how the bytes were cut is no part of the provider's stream
SAME_EVENTS = 'contract §5.1: "Provider stream chunks are translated to the canonical streaming events"'


@check(
    R.RESPONSE_VALID,
    R.EVENTS_VALID,
    R.TOOL_ID_CANONICAL,
    R.ERROR_CLASSIFIED,
    R.STREAM_ORDER,
    R.STREAM_INDEX,
    R.STREAM_TOOL,
    R.STREAM_FINAL_INPUT,
    R.STREAM_AGGREGATE,
    R.STREAM_CHUNKING,
    R.STREAM_VOCABULARY,
    R.STREAM_SIGNATURE_LAST,
    R.STREAM_LITERAL_JSON,
    R.TOOL_ID_DETERMINISTIC,
)
def recorded_responses(env: Env) -> Iterator[Outcome]:
    """Recorded responses and streams. Troubleshooting: TC607 compares a stream parsed whole
    and cut into 7-byte chunks; tool ids the adapter minted may differ if they rename
    consistently (TC306 advises), ids the wire issued may not."""
    ev_validator = env.validator("stream-event.json")
    for s in env.subjects:
        a = s.adapter
        seen = 0
        for it in env.recorded(s):
            seen += 1
            ctx = ctx_for(session_for("conform", it.label))
            ctx = replace(ctx, estimated_input_tokens=_preflight(a, it))
            if it.status >= 400:
                # the core's id of the call (contract §3.3), the same for the same cassette
                rid = ids.derived(0, "request", it.label)
                yield from _error_response(s, it, replace(ctx, request_id=rid))
                continue
            if it.is_stream:
                yield from _stream(env, s, it, ctx, ev_validator)
                continue
            try:
                msg = a.from_wire_response(WireResponse(it.response_json, it.status), ctx)
            except Exception as exc:
                yield outcome(R.RESPONSE_VALID, s, "fail", it.label, crash(exc))
                continue
            errs = errors_of(
                [msg], recorded_selection(it, _usage_selection(it, msg) if isinstance(msg, dict) else None)
            )
            yield outcome(R.RESPONSE_VALID, s, "fail" if errs else "pass", it.label, "; ".join(errs[:5]))
            content = msg.get("content") if isinstance(msg, dict) else None  # a non-message failed TC101 above
            yield from _tool_ids_canonical(s, it.label, content if isinstance(content, list) else [])
        if not seen:
            yield outcome(R.RESPONSE_VALID, s, "skip", "-", "no cassettes for this adapter's wire API")


# contract §7.2: "If usage is unavailable for some reason (provider didn't send it; rare), the
# adapter MAY set input_tokens and output_tokens to estimate_input_tokens()'s output": a reply
# recorded without usage (the record's probe finds none) that the adapter parses without any is
# not a TS106 defect of the adapter (TC906 judges that choice; TC904 a usage lost)
_NO_USAGE_RECORDED = Selection(ignore=("TS106",))


def _usage_selection(it: Interaction, msg: dict[str, Any]) -> Selection | None:
    api = it.wire
    if (msg.get("metadata") or {}).get("usage") is not None or api is None:
        return None
    if it.is_stream:
        values = wire_values(it) if locates(api, "stream_usage") else None
        recorded = api.probes.stream_usage(values) if values is not None else True
    else:
        body = it.response_json
        ok = isinstance(body, dict) and locates(api, "response_usage")
        recorded = api.probes.response_usage(body) if ok else True
    return _NO_USAGE_RECORDED if recorded is None else None


def _preflight(a: Adapter, it: Interaction) -> int | None:
    """What a harness estimates before sending the recorded request (None when it cannot)."""
    if not isinstance(it.request_body, dict):
        return None
    try:
        parsed = read_recorded(a, it, "sess_preflight")
        return estimate_of(a, parsed) if parsed is not None else None
    except Exception:
        return None


def _tool_ids_canonical(s: AdapterUnderTest, label: str, content: list[dict[str, Any]]) -> Iterator[Outcome]:
    ids = [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
    if ids:
        bad = [i for i in ids if not (isinstance(i, str) and is_canonical_tool_id(i))]
        yield outcome(
            R.TOOL_ID_CANONICAL,
            s,
            "fail" if bad else "pass",
            label,
            f"not tu_<ULID>: {bad}" if bad else "",
            "supports_parallel_tool_calls" if len(ids) > 1 else "supports_tools",
        )


def wire_headers(headers: dict[str, Any]) -> dict[str, str]:
    """A recording's headers as `WireResponse.headers` types them (`Mapping[str, str]`):
    vcrpy stores each value as a list of field lines, which RFC 9110 §5.3 combines into one
    value joined by ", ". An adapter written to the protocol reads strings."""
    out: dict[str, str] = {}
    for k, v in headers.items():
        out[str(k)] = ", ".join(str(x) for x in v) if isinstance(v, list | tuple) else str(v)
    return out


def _error_response(s: AdapterUnderTest, it: Interaction, ctx: RequestContext) -> Iterator[Outcome]:
    """TC801: the exact §6.3 subclass and fields the contract's table gives (see `errors`)."""
    api = it.wire or wire_api_of(s.adapter) or str(s.adapter.wire_api)
    try:
        s.adapter.from_wire_response(WireResponse(it.response_json, it.status, wire_headers(it.headers)), ctx)
    except AdapterError as exc:
        p = error_oracle.problems(exc, api, it.status, it.response_json, it.headers, ctx.request_id)
        yield outcome(
            R.ERROR_CLASSIFIED, s, "fail" if p else "pass", it.label, f"HTTP {it.status}: " + "; ".join(p) if p else ""
        )
    except Exception as exc:
        yield outcome(R.ERROR_CLASSIFIED, s, "fail", it.label, crash(exc))
    else:
        yield outcome(
            R.ERROR_CLASSIFIED,
            s,
            "fail",
            it.label,
            f"HTTP {it.status} parsed as a message instead of raising AdapterError",
        )


def _stream_error(s: AdapterUnderTest, it: Interaction, err: AdapterError | None) -> Iterator[Outcome]:
    """TC801 on a recorded stream that reports an error after it began (the record's
    `stream_error` probe): contract §6.5.3 asks the adapter to raise "the appropriate
    AdapterError subclass" after the final event. The stream began with HTTP 200, so the
    class is what the error signals of the API's record (`WireApi.errors`: §6.2's
    provider-body adjustments) give the error body (Gemini's: the HTTP status its
    `error.code` names); a body they give no class (Ollama's bare `{"error":
    "..."}`) may take any §6.1 class, held to its §6.3 subclass and §6.4 `retryable`, never
    a `WireFormatError`. Either way the exception carries the provider's message (§6.3)."""
    api = wire_api_of(s.adapter)
    if api is None or (it.wire is not None and it.wire.name != api.name):
        return
    values = wire_values(it)
    body = api.probes.stream_error(values) if values is not None else None
    if body is None:
        return
    if err is None:
        yield outcome(
            R.ERROR_CLASSIFIED,
            s,
            "fail",
            it.label,
            "the recorded stream reports an error mid-stream, and the adapter raised no AdapterError (contract §6.5.3)",
        )
        return
    want = error_oracle.hinted_class(api, body)
    if want is not None and getattr(err, "error_class", None) in error_oracle.also_accepted(api, body):
        want = str(err.error_class)  # another class the record allows this error (`AlsoAccepted`)
    # no §6.2 hint (Ollama's bare `{"error": "..."}`): any one of §6.1's classes, consistently
    p = error_oracle.unhinted_stream_problems(err) if want is None else error_oracle.stream_problems(err, want)
    p += error_oracle.message_problems(err, body)
    yield outcome(
        R.ERROR_CLASSIFIED, s, "fail" if p else "pass", it.label, "mid-stream error: " + "; ".join(p) if p else ""
    )


def _event_problem(v: SchemaValidator, event: StreamEvent) -> str | None:
    """TC103 on one event: the schema's first error, or where it holds a value that is no
    JSON data (an object for `usage`), which the schema validators refuse by raising."""
    where = non_json(event)
    if where is not None:
        return f"{where}: not JSON data (canonical §7.4 events are JSON objects)"
    return None if v.is_valid(event) else v.errors(event)[0].message


def _stream(
    env: Env, s: AdapterUnderTest, it: Interaction, ctx: RequestContext, v: SchemaValidator
) -> Iterator[Outcome]:
    a = s.adapter
    try:
        named, err = parse_stream(a, it.response_body, ctx, raw_names=True)
    except Exception as exc:
        for rule in (R.RESPONSE_VALID, R.STREAM_ORDER):
            yield outcome(rule, s, "fail", it.label, crash(exc))
        return
    # TC608: one vocabulary per stream (canonical §7.4 or streaming §5.3); then one spelling
    vocab, mixed = stream_vocabulary(named)
    if vocab is not None:
        yield outcome(R.STREAM_VOCABULARY, s, "fail" if mixed else "pass", it.label, "; ".join(mixed[:3]))
    events = to_canonical_names(named)
    bad = [f"event {i} ({e.get('type')}): {why}" for i, e in enumerate(events) if (why := _event_problem(v, e))]
    yield outcome(R.EVENTS_VALID, s, "fail" if bad else "pass", it.label, "; ".join(bad[:3]))
    yield from _stream_error(s, it, err)
    if err is not None:
        # contract §6.5: a failing stream yields message_complete(stop_reason: error), then
        # raises; an `error` event (canonical §7.4) may come before it but is not required
        last = events[-1] if events else None
        if last is not None and (last.get("type") != "message_complete" or last.get("stop_reason") != "error"):
            got = f"{last.get('type')} (stop_reason {last.get('stop_reason')!r})" if last else "nothing"
            yield outcome(
                R.STREAM_ORDER,
                s,
                "fail",
                it.label,
                f"stream raised {type(err).__name__} after {got}, not after message_complete with "
                f"stop_reason error (contract §6.5): {err}",
            )
            return
        if last is None:
            yield outcome(R.STREAM_ORDER, s, "pass", it.label)  # failed before any event: nothing to close
            return
    yield from stream_invariants(s, it.label, events, vocab)
    yield from signature_on_final_delta(s, it.label, events)
    if err is None:
        yield from literal_fragments(s, a, it, events)
    msg = message_from_events(a, events, ctx)
    if msg is not None:
        errs = errors_of([msg], recorded_selection(it, _usage_selection(it, msg)))
        yield outcome(R.RESPONSE_VALID, s, "fail" if errs else "pass", it.label, "; ".join(errs[:5]))
        yield from _tool_ids_canonical(s, it.label, msg["content"])
    # TC607: the same bytes cut into 7-byte chunks must give the same events; then cut one
    # byte before each frame's end (the framing says where frames end), so every frame's
    # last byte (a blank line's LF, a CRC's last byte) arrives with the next frame's start.
    # Equal means equal up to a consistent renaming of the tool ids the adapter minted (the
    # API issued none); ids the wire issued must match exactly
    again_ctx = replace(ctx, message_id=events[0].get("message_id") if events else None)
    framing = it.framing
    cuts = sorted({e - 1 for e in framing.frame_ends(it.response_body) if e > 1}) if framing is not None else []
    ways: list[tuple[str, int | None, list[int]]] = [("7-byte chunks", 7, [])]
    if cuts:
        ways.append(("chunks cut one byte before each frame's end", None, cuts))
    ids = WireIds.of(wire_api_of(a) or it.wire, wire_values(it) or [])
    first_ren = None
    for how, chunk, at in ways:
        try:
            again, _ = parse_stream(a, it.response_body, again_ctx, chunk, cuts=at)
        except Exception as exc:
            yield outcome(R.STREAM_CHUNKING, s, "fail", it.label, crash(exc))
            return
        ren = match_ids(strip_ids(events), strip_ids(again), fixed_ids(a, ctx.session_id, ids))
        why = "; ".join(ren.problems[:3])
        if not why and ren.apply(strip_ids(events)) != strip_ids(again):
            why = f"{how} gave different events than one chunk ({SAME_EVENTS})"
        if why:
            yield outcome(R.STREAM_CHUNKING, s, "fail", it.label, why)
            return
        first_ren = first_ren or ren
    yield outcome(R.STREAM_CHUNKING, s, "pass", it.label)
    if first_ren is not None and not first_ren.problems and first_ren.pairs:
        yield deterministic(s, it.label, first_ren.renamed, "parsing the stream cut into 7-byte chunks")
