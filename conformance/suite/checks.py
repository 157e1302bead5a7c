"""The checks. Each is a generator of `Outcome`s over an `Env` (adapters plus cassettes).

Checks judge adapters from the outside: what reached the wire (marker strings of
`scripts.conversation` searched in the serialized body), what the validator says about
parsed messages, the WARNING records logged, the events streamed. Where a wire API is one
the suite knows (`wire_semantics`), placement is also read straight from the body.
"""

from __future__ import annotations

import base64
import copy
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ..adapters.base import (
    ERROR_CLASSES,
    Adapter,
    AdapterError,
    AdapterOptions,
    Message,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireResponse,
    harness_usage,
    is_canonical_tool_id,
    parse_json_object,
)
from ..findings import RuleInfo, Selection
from ..formats.canonical.memory import validate_messages
from ..schema_validation import SchemaValidator
from ..schemas import schema_set
from . import rules as R
from . import wire_semantics as W
from .cassettes import Cassette, Interaction
from .runner import SUITE_SUBJECT, AdapterUnderTest, Outcome, Status, capture_warnings
from .scripts import PNG_2PX, Builder, conversation, mark

CheckFn = Callable[["Env"], Iterator[Outcome]]
# TC701 compares estimates with the provider's own tokenizer, not with compatible servers
PROVIDER_HOSTS = {
    "anthropic-messages": "api.anthropic.com",
    "openai-chat-completions": "api.openai.com",
}
DROP_FIELDS = ("session_id", "message_id", "block_type", "adapter", "reason")
# what a request read back from the wire cannot have: routing and usage of past turns
HISTORY_IGNORE = Selection(ignore=("TS105", "TS106"))


@dataclass
class Check:
    name: str
    rules: tuple[str, ...]
    fn: CheckFn


CHECKS: list[Check] = []


def check(*rules: RuleInfo) -> Callable[[CheckFn], CheckFn]:
    def deco(fn: CheckFn) -> CheckFn:
        CHECKS.append(Check(fn.__name__, tuple(r.id for r in rules), fn))
        return fn

    return deco


@dataclass
class Env:
    subjects: list[AdapterUnderTest]
    peers: list[Adapter]
    own: dict[str, list[Cassette]]
    samples: list[Cassette]
    sel: Selection
    pairs: dict[str, dict[str, Status]] = field(default_factory=dict)
    _validators: dict[str, SchemaValidator] = field(default_factory=dict)

    def recorded(self, s: AdapterUnderTest) -> Iterator[Interaction]:
        """Own cassettes (any API) then samples of the adapter's wire API."""
        for c in self.own.get(s.name, []):
            yield from c.interactions
        for c in self.samples:
            for it in c.interactions:
                if it.api == getattr(s.adapter, "wire_api", None):
                    yield it

    def validator(self, name: str) -> SchemaValidator:
        v = self._validators.get(name)
        if v is None:
            v = self._validators[name] = SchemaValidator(schema_set("canonical", "v1"), name)
        return v


def _o(rule: RuleInfo, s: AdapterUnderTest | str, status: Status, subject: str, message: str = "") -> Outcome:
    return Outcome(rule.id, s if isinstance(s, str) else s.name, status, subject, message)


def opts(a: Adapter, **kw: Any) -> AdapterOptions:
    return AdapterOptions(model=f"{a.provider}:conformance-model", max_output_tokens=256, **kw)


def body_text(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False)


def crash(exc: BaseException) -> str:
    return f"crashed: {type(exc).__name__}: {exc}"


def has_request_reader(a: Adapter) -> bool:
    return callable(getattr(a, "from_wire_request", None))


def errors_of(messages: list[Message], sel: Selection | None = None, finish: bool = False) -> list[str]:
    return [f.format() for f in validate_messages(messages, selection=sel, finish=finish) if f.severity == "error"]


def drop_records(
    records: list[logging.LogRecord], block_type: str, message_id: str | None = None
) -> list[logging.LogRecord]:
    return [
        r
        for r in records
        if r.levelno == logging.WARNING
        and getattr(r, "block_type", None) == block_type
        and (message_id is None or getattr(r, "message_id", None) == message_id)
    ]


def drop_problem(records: list[logging.LogRecord], block_type: str, msg: Message, adapter: Adapter) -> str | None:
    """None when exactly one well-formed WARNING record reports dropping this block."""
    found = [r for r in drop_records(records, block_type) if getattr(r, "message_id", msg["id"]) == msg["id"]]
    if len(found) != 1:
        n, mid = len(found), msg["id"]
        return f"{n} WARNING records with block_type={block_type!r} for message {mid} (want exactly 1)"
    r = found[0]
    missing = [f for f in DROP_FIELDS if not getattr(r, f, None)]
    if missing:
        return f"WARNING record lacks {', '.join(missing)}"
    want = {"session_id": msg["session_id"], "message_id": msg["id"], "adapter": adapter.name}
    wrong = [f"{k}={getattr(r, k)!r} (want {v!r})" for k, v in want.items() if getattr(r, k) != v]
    return "; ".join(wrong) or None


def ctx_for(session_id: str, model: str | None = None) -> RequestContext:
    return RequestContext(session_id=session_id, model=model)


def parse_stream(
    a: Adapter, text: str | bytes, ctx: RequestContext, chunk: int | None = None
) -> tuple[list[StreamEvent], AdapterError | None]:
    raw = text.encode() if isinstance(text, str) else text
    pieces = [raw] if chunk is None else [raw[i : i + chunk] for i in range(0, len(raw), chunk)]
    events: list[StreamEvent] = []
    try:
        for ev in a.stream_response(pieces, ctx):
            events.append(ev)
    except AdapterError as exc:
        return events, exc
    return events, None


def message_from_events(a: Adapter, events: list[StreamEvent], ctx: RequestContext) -> Message | None:
    """The message a harness stores after a stream (generic: uses no adapter internals)."""
    start = next((e for e in events if e.get("type") == "message_start"), None)
    done = next((e for e in events if e.get("type") == "message_complete"), None)
    if start is None or done is None:
        return None
    model = str(start.get("model") or f"{a.provider}:unknown")
    content = list(done.get("final_content") or []) or [{"type": "text", "text": ""}]
    usage = done.get("usage")
    meta: dict[str, Any] = {
        "model": model,
        "provider": a.provider,
        "routing": {"mode": "default", "chosen_model": model, "reason": "turnspec conform"},
        "usage": harness_usage(usage, model, ctx) if usage is not None else None,
    }
    if done.get("stop_reason") in ("cancelled", "error"):
        meta["status"] = done["stop_reason"]
    return {
        "id": str(start["message_id"]),
        "session_id": ctx.session_id,
        "role": "assistant",
        "content": content,
        "metadata": meta,
        "created_at": "2026-05-08T12:00:00.000000Z",
        "schema_version": 1,
    }


def shape(s: AdapterUnderTest, a: Adapter, label: str, body: Any) -> Iterator[Outcome]:
    """TC104 on one rendered body (only for wire APIs the suite knows)."""
    if getattr(a, "wire_api", None) not in W.REQUEST_SHAPES:
        return
    problems = W.shape_problems(a.wire_api, body)
    yield _o(
        R.WIRE_SHAPE,
        s,
        "fail" if problems else "pass",
        f"{label} ({a.name})",
        "; ".join(problems[:3]),
    )


# ------------------------------------------------------------------------------------------
# TC001


@check(R.CAPABILITIES)
def capabilities(env: Env) -> Iterator[Outcome]:
    v = env.validator("adapter-capabilities.json")
    for s in env.subjects:
        a = s.adapter
        caps = dict(getattr(a, "capabilities", {}) or {})
        errs = v.errors(caps) if not v.is_valid(caps) else []
        problems = [f"capabilities{e.pointer}: {e.message}" for e in errs]
        for attr in ("name", "provider", "wire_api"):
            if not isinstance(getattr(a, attr, None), str) or not getattr(a, attr):
                problems.append(f"adapter.{attr} is not a non-empty string")
        if not hasattr(getattr(a, "provider_tool_id", None), "match"):
            problems.append("adapter.provider_tool_id is not a compiled regex")
        yield _o(R.CAPABILITIES, s, "fail" if problems else "pass", "capabilities", "; ".join(problems))


# ------------------------------------------------------------------------------------------
# TC101, TC103, TC301, TC801 over recorded responses; TC6xx over recorded streams


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
)
def recorded_responses(env: Env) -> Iterator[Outcome]:
    ev_validator = env.validator("stream-event.json")
    for s in env.subjects:
        a = s.adapter
        seen = 0
        for it in env.recorded(s):
            seen += 1
            ctx = ctx_for(f"sess_conform_{abs(hash(it.label)) % 10**9}")
            ctx = replace(ctx, estimated_input_tokens=_preflight(a, it))
            if it.status >= 400:
                yield from _error_response(s, it, ctx)
                continue
            if it.is_stream:
                yield from _stream(env, s, it, ctx, ev_validator)
                continue
            try:
                msg = a.from_wire_response(WireResponse(it.response_json, it.status), ctx)
            except Exception as exc:
                yield _o(R.RESPONSE_VALID, s, "fail", it.label, crash(exc))
                continue
            errs = errors_of([msg])
            yield _o(R.RESPONSE_VALID, s, "fail" if errs else "pass", it.label, "; ".join(errs[:5]))
            yield from _tool_ids_canonical(s, it.label, msg.get("content", []))
        if not seen:
            yield _o(R.RESPONSE_VALID, s, "skip", "-", "no cassettes for this adapter's wire API")


def _preflight(a: Adapter, it: Interaction) -> int | None:
    """What a harness estimates before sending the recorded request (None when it cannot)."""
    if not has_request_reader(a) or not isinstance(it.request_body, dict):
        return None
    try:
        parsed = a.from_wire_request(it.request_body, session_id="sess_preflight")  # type: ignore[attr-defined]
        return int(a.estimate_input_tokens(parsed.messages, parsed.tools))
    except Exception:
        return None


def _tool_ids_canonical(s: AdapterUnderTest, label: str, content: list[dict[str, Any]]) -> Iterator[Outcome]:
    ids = [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
    if ids:
        bad = [i for i in ids if not (isinstance(i, str) and is_canonical_tool_id(i))]
        yield _o(
            R.TOOL_ID_CANONICAL,
            s,
            "fail" if bad else "pass",
            label,
            f"not tu_<ULID>: {bad}" if bad else "",
        )


def _error_response(s: AdapterUnderTest, it: Interaction, ctx: RequestContext) -> Iterator[Outcome]:
    want = {
        401: {"auth"},
        403: {"auth"},
        408: {"network"},
        413: {"context_overflow"},
        429: {"rate_limit"},
    }.get(it.status)
    if want is None:
        want = (
            {"server_error", "rate_limit"}
            if it.status >= 500
            else {"invalid_request", "context_overflow", "auth", "rate_limit"}
        )
    try:
        s.adapter.from_wire_response(WireResponse(it.response_json, it.status), ctx)
    except AdapterError as exc:
        cls = getattr(exc, "error_class", None)
        ok = cls in ERROR_CLASSES and cls in want
        yield _o(
            R.ERROR_CLASSIFIED,
            s,
            "pass" if ok else "fail",
            it.label,
            "" if ok else f"HTTP {it.status} raised error_class {cls!r}, want one of {sorted(want)}",
        )
    except Exception as exc:
        yield _o(R.ERROR_CLASSIFIED, s, "fail", it.label, crash(exc))
    else:
        yield _o(
            R.ERROR_CLASSIFIED,
            s,
            "fail",
            it.label,
            f"HTTP {it.status} parsed as a message instead of raising AdapterError",
        )


def _stream(
    env: Env, s: AdapterUnderTest, it: Interaction, ctx: RequestContext, v: SchemaValidator
) -> Iterator[Outcome]:
    a = s.adapter
    try:
        events, err = parse_stream(a, it.response_text, ctx)
    except Exception as exc:
        for rule in (R.RESPONSE_VALID, R.STREAM_ORDER):
            yield _o(rule, s, "fail", it.label, crash(exc))
        return
    bad = [f"event {i} ({e.get('type')}): {v.errors(e)[0].message}" for i, e in enumerate(events) if not v.is_valid(e)]
    yield _o(R.EVENTS_VALID, s, "fail" if bad else "pass", it.label, "; ".join(bad[:3]))
    if err is not None and not any(e.get("type") == "error" for e in events):
        yield _o(
            R.STREAM_ORDER,
            s,
            "fail",
            it.label,
            f"stream raised {type(err).__name__} without an error event: {err}",
        )
        return
    yield from stream_invariants(s, it.label, events)
    msg = message_from_events(a, events, ctx)
    if msg is not None:
        errs = errors_of([msg])
        yield _o(R.RESPONSE_VALID, s, "fail" if errs else "pass", it.label, "; ".join(errs[:5]))
        yield from _tool_ids_canonical(s, it.label, msg["content"])
    # TC607: the same bytes cut into 7-byte chunks must give the same events
    try:
        again, _ = parse_stream(
            a,
            it.response_text,
            replace(ctx, message_id=events[0]["message_id"] if events else None),
            chunk=7,
        )
    except Exception as exc:
        yield _o(R.STREAM_CHUNKING, s, "fail", it.label, crash(exc))
        return
    same = _strip_ids(again) == _strip_ids(events)
    yield _o(
        R.STREAM_CHUNKING,
        s,
        "pass" if same else "fail",
        it.label,
        "" if same else "7-byte chunks gave different events than one chunk",
    )


def _strip_ids(events: list[StreamEvent]) -> list[StreamEvent]:
    return [{k: v for k, v in e.items() if k != "message_id"} for e in events]


def stream_invariants(s: AdapterUnderTest | str, label: str, events: list[StreamEvent]) -> Iterator[Outcome]:
    """TC601-TC605 on one event sequence."""
    kinds = [e.get("type") for e in events]
    problems = []
    if not events or kinds[0] != "message_start":
        problems.append(f"first event is {kinds[0] if kinds else 'nothing'}, not message_start")
    if kinds.count("message_start") != 1:
        problems.append(f"{kinds.count('message_start')} message_start events")
    if kinds.count("message_complete") != 1 or (kinds and kinds[-1] != "message_complete"):
        problems.append("message_complete is not the one last event")
    if len({e.get("message_id") for e in events}) > 1:
        problems.append("events carry different message_ids")
    yield _o(R.STREAM_ORDER, s, "fail" if problems else "pass", label, "; ".join(problems))
    last = -1
    back = []
    for i, e in enumerate(events):
        k = e.get("content_block_index")
        if isinstance(k, int):
            if k < last:
                back.append(f"event {i} ({e['type']}) index {k} after {last}")
            last = max(last, k)
    yield _o(R.STREAM_INDEX, s, "fail" if back else "pass", label, "; ".join(back[:3]))
    tools: dict[str, dict[str, Any]] = {}
    tproblems: list[str] = []
    for i, e in enumerate(events):
        t = e.get("type")
        if t not in ("tool_use_start", "tool_use_input_delta", "tool_use_end"):
            continue
        tid = str(e.get("tool_use_id"))
        st = tools.setdefault(
            tid,
            {
                "start": 0,
                "end": 0,
                "index": e.get("content_block_index"),
                "json": "",
                "final": None,
            },
        )
        if e.get("content_block_index") != st["index"]:
            tproblems.append(f"{tid}: events at different content_block_index")
        if t == "tool_use_start":
            st["start"] += 1
            if st["start"] > 1 or st["end"]:
                tproblems.append(f"{tid}: extra tool_use_start at event {i}")
        elif t == "tool_use_input_delta":
            if not st["start"] or st["end"]:
                tproblems.append(f"{tid}: input delta outside start..end at event {i}")
            st["json"] += str(e.get("partial_json", ""))
        else:
            st["end"] += 1
            if not st["start"] or st["end"] > 1:
                tproblems.append(f"{tid}: tool_use_end without one start before it (event {i})")
            st["final"] = e.get("final_input")
    for tid, st in tools.items():
        if st["start"] != 1 or st["end"] != 1:
            tproblems.append(f"{tid}: {st['start']} starts and {st['end']} ends")
    if tools:
        yield _o(R.STREAM_TOOL, s, "fail" if tproblems else "pass", label, "; ".join(tproblems[:3]))
        fproblems = []
        for tid, st in tools.items():
            if not isinstance(st["final"], dict):
                fproblems.append(f"{tid}: final_input is {type(st['final']).__name__}, not an object")
            elif st["json"].strip():
                spelled = parse_json_object(st["json"])
                if spelled is not None and spelled != st["final"]:
                    fproblems.append(f"{tid}: final_input differs from the JSON its deltas spell")
        yield _o(
            R.STREAM_FINAL_INPUT,
            s,
            "fail" if fproblems else "pass",
            label,
            "; ".join(fproblems[:3]),
        )
    done = next((e for e in events if e.get("type") == "message_complete"), None)
    if done is not None:
        agg = aggregate(events)
        final = done.get("final_content") or []
        mism = []
        for k, blk in agg.items():
            if k >= len(final):
                mism.append(f"block {k} streamed but absent from final_content")
                continue
            want = final[k]
            for key, val in blk.items():
                if want.get(key) != val:
                    mism.append(
                        f"block {k} {key}: deltas give {json.dumps(val)[:50]}, final_content has "
                        f"{json.dumps(want.get(key))[:50]}"
                    )
        yield _o(R.STREAM_AGGREGATE, s, "fail" if mism else "pass", label, "; ".join(mism[:3]))


def aggregate(events: list[StreamEvent]) -> dict[int, dict[str, Any]]:
    """What a client reconstructs from the deltas alone (streaming §5.4)."""
    out: dict[int, dict[str, Any]] = {}
    for e in events:
        t, k = e.get("type"), e.get("content_block_index")
        if not isinstance(k, int):
            continue
        if t == "text_delta":
            b = out.setdefault(k, {"type": "text", "text": ""})
            b["text"] = b.get("text", "") + str(e.get("text", ""))
        elif t == "thinking_delta":
            b = out.setdefault(k, {"type": "thinking", "text": ""})
            b["text"] = b.get("text", "") + str(e.get("text", ""))
            if e.get("signature"):
                b["signature"] = e["signature"]
        elif t == "tool_use_start":
            out[k] = {"type": "tool_use", "id": e.get("tool_use_id"), "name": e.get("tool_name")}
        elif t == "tool_use_end":
            out.setdefault(k, {})["input"] = e.get("final_input")
    return out


# ------------------------------------------------------------------------------------------
# TC606: own cassettes hold the same content streamed and not streamed


@check(R.STREAM_EQUALS_PARSE)
def stream_equals_parse(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        found = False
        for c in env.own.get(s.name, []):
            plain = [it for it in c.interactions if not it.is_stream and it.status < 400]
            streams = [it for it in c.interactions if it.is_stream and it.status < 400]
            for st in streams:
                twin = next((p for p in plain if _same_request(st.request_body, p.request_body)), None)
                if twin is None:
                    continue
                found = True
                sid = f"sess_pair_{abs(hash(st.label)) % 10**9}"
                try:
                    msg = a.from_wire_response(WireResponse(twin.response_json), ctx_for(sid))
                    events, _ = parse_stream(a, st.response_text, ctx_for(sid))
                except Exception as exc:
                    yield _o(R.STREAM_EQUALS_PARSE, s, "fail", st.label, crash(exc))
                    continue
                done = next((e for e in events if e.get("type") == "message_complete"), {})
                problems = []
                if done.get("final_content") != msg["content"]:
                    problems.append(
                        f"stream content {json.dumps(done.get('final_content'))[:120]} != parse "
                        f"{json.dumps(msg['content'])[:120]}"
                    )
                usage = msg["metadata"].get("usage") or {}
                su = done.get("usage") or {}
                for k in (
                    "input_tokens",
                    "output_tokens",
                    "cached_input_tokens",
                    "cache_creation_input_tokens",
                ):
                    if su.get(k, 0) != usage.get(k, 0):
                        problems.append(f"usage.{k}: stream {su.get(k)} != parse {usage.get(k)}")
                yield _o(
                    R.STREAM_EQUALS_PARSE,
                    s,
                    "fail" if problems else "pass",
                    st.label,
                    "; ".join(problems[:3]),
                )
        if not found:
            yield _o(
                R.STREAM_EQUALS_PARSE,
                s,
                "skip",
                "-",
                "no cassette records the same content streamed and not streamed",
            )


def _same_request(a: Any, b: Any) -> bool:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    drop = ("stream", "stream_options")
    return {k: v for k, v in a.items() if k not in drop} == {k: v for k, v in b.items() if k not in drop}


# ------------------------------------------------------------------------------------------
# TC102, TC802, TC701 over recorded requests


@check(R.REQUEST_VALID, R.REQUEST_ROUND_TRIP, R.ESTIMATE, R.WIRE_SHAPE)
def recorded_requests(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        if not has_request_reader(a):
            for rule in (R.REQUEST_VALID, R.REQUEST_ROUND_TRIP):
                yield _o(rule, s, "skip", "-", "adapter has no from_wire_request (optional extension)")
        api = getattr(a, "wire_api", None)
        for it in env.recorded(s):
            if not isinstance(it.request_body, dict) or it.status >= 400:
                continue
            yield from _estimate(env, s, it)
            if not has_request_reader(a):
                continue
            sid = f"sess_req_{abs(hash(it.label)) % 10**9}"
            try:
                parsed = a.from_wire_request(it.request_body, session_id=sid)  # type: ignore[attr-defined]
            except Exception as exc:
                yield _o(R.REQUEST_VALID, s, "fail", it.label, crash(exc))
                continue
            errs = errors_of(parsed.messages, HISTORY_IGNORE)
            yield _o(R.REQUEST_VALID, s, "fail" if errs else "pass", it.label, "; ".join(errs[:5]))
            try:
                rendered = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
            except Exception as exc:
                yield _o(R.REQUEST_ROUND_TRIP, s, "fail", it.label, crash(exc))
                continue
            yield from shape(s, a, it.label, rendered)
            d = W.diff(W.normalize(api, it.request_body), W.normalize(api, rendered))
            yield _o(R.REQUEST_ROUND_TRIP, s, "fail" if d else "pass", it.label, "; ".join(d[:4]))


def _estimate(env: Env, s: AdapterUnderTest, it: Interaction) -> Iterator[Outcome]:
    a = s.adapter
    sid = f"sess_est_{abs(hash(it.label)) % 10**9}"
    try:
        if it.is_stream:
            events, _ = parse_stream(a, it.response_text, ctx_for(sid))
            done = next((e for e in events if e.get("type") == "message_complete"), {})
            usage = done.get("usage")
        else:
            usage = a.from_wire_response(WireResponse(it.response_json), ctx_for(sid))["metadata"].get("usage")
    except Exception:
        return
    if not usage:
        yield _o(R.ESTIMATE, s, "skip", it.label, "response records no usage")
        return
    if it.synthetic:
        yield _o(
            R.ESTIMATE,
            s,
            "skip",
            it.label,
            "hand-written cassette: its token counts are not a recording",
        )
        return
    actual = (
        int(usage.get("input_tokens", 0))
        + int(usage.get("cached_input_tokens", 0))
        + int(usage.get("cache_creation_input_tokens", 0))
    )
    if not has_request_reader(a):
        yield _o(
            R.ESTIMATE,
            s,
            "skip",
            it.label,
            "adapter has no from_wire_request to read the recorded request",
        )
        return
    try:
        parsed = a.from_wire_request(it.request_body, session_id=sid)  # type: ignore[attr-defined]
        est = a.estimate_input_tokens(parsed.messages, parsed.tools)
    except Exception as exc:
        yield _o(R.ESTIMATE, s, "fail", it.label, crash(exc))
        return
    opaque = [
        b
        for m in parsed.messages
        for b in m["content"]
        if b.get("type") not in ("text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking")
    ]
    url_images = [
        b for m in parsed.messages for b in m["content"] if b.get("type") == "image" and b["source"]["kind"] == "url"
    ]
    host = it.uri.split("/")[2] if it.uri.count("/") >= 2 else ""
    home = PROVIDER_HOSTS.get(str(getattr(a, "wire_api", "")))
    if home and host != home:
        yield _o(
            R.ESTIMATE,
            s,
            "skip",
            it.label,
            f"served by {host}, whose models tokenize differently from {home}'s",
        )
        return
    if opaque or url_images or parsed.options.provider_tools:
        yield _o(
            R.ESTIMATE,
            s,
            "skip",
            it.label,
            "request holds documents, server tools or URL images whose token cost is not knowable offline",
        )
        return
    tol = max(R.ESTIMATE_REL_TOLERANCE * actual, R.ESTIMATE_ABS_TOLERANCE)
    ok = abs(est - actual) <= tol
    yield _o(
        R.ESTIMATE,
        s,
        "pass" if ok else "fail",
        it.label,
        "" if ok else f"estimate {est} vs recorded {actual} (tolerance ±{tol:.0f})",
    )


# ------------------------------------------------------------------------------------------
# TC800: interactions no adapter serves are skipped with a reason, never silently


@check(R.CASSETTE_API)
def cassette_apis(env: Env) -> Iterator[Outcome]:
    served = {getattr(s.adapter, "wire_api", None) for s in env.subjects} | {
        getattr(p, "wire_api", None) for p in env.peers
    }
    for c in env.samples:
        if c.error:
            yield _o(R.CASSETTE_API, SUITE_SUBJECT, "fail", c.label, c.error)
        for it in c.interactions:
            if it.api in served:
                yield _o(R.CASSETTE_API, SUITE_SUBJECT, "pass", it.label)
            else:
                what = it.api or f"not an LLM API ({it.uri.split('?')[0][:60]})"
                yield _o(
                    R.CASSETTE_API,
                    SUITE_SUBJECT,
                    "skip",
                    it.label,
                    f"{what}: no registered adapter serves it",
                )
    for cs in env.own.values():
        for c in cs:
            if c.error:
                yield _o(R.CASSETTE_API, SUITE_SUBJECT, "fail", c.label, c.error)


# ------------------------------------------------------------------------------------------
# TC2xx lossy projection


def lossy_probes(a: Adapter) -> list[tuple[str, str, dict[str, Any], str]]:
    """(block_type, role, block, marker) the adapter's declarations say it cannot carry."""
    caps = a.capabilities
    probes: list[tuple[str, str, dict[str, Any], str]] = [
        (
            "x-turnspec-probe",
            "user",
            {"type": "x-turnspec-probe", "payload": mark("probe")},
            mark("probe"),
        )
    ]
    if not caps.get("supports_thinking"):
        probes.append(
            (
                "thinking",
                "assistant",
                {
                    "type": "thinking",
                    "text": mark("probe-thinking"),
                    "signature": mark("probe-sig"),
                },
                mark("probe-thinking"),
            )
        )
        probes.append(
            (
                "redacted_thinking",
                "assistant",
                {"type": "redacted_thinking", "data": mark("probe-redacted")},
                mark("probe-redacted"),
            )
        )
    if not caps.get("supports_images"):
        probes.append(
            (
                "image",
                "user",
                {
                    "type": "image",
                    "source": {"kind": "base64", "data": PNG_2PX},
                    "media_type": "image/png",
                },
                PNG_2PX,
            )
        )
    else:
        data = base64.b64encode(mark("probe-image").encode()).decode()
        probes.append(
            (
                "image",
                "user",
                {
                    "type": "image",
                    "source": {"kind": "base64", "data": data},
                    "media_type": "image/x-turnspec-probe",
                },
                data,
            )
        )
    return probes


@check(R.LOSSY_WARN, R.LOSSY_ABSENT, R.LOSSY_CRITICAL)
def lossy(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        caps = a.capabilities
        for btype, role, block, marker in lossy_probes(a):
            msgs, tools = conversation(
                a.provider,
                thinking=bool(caps.get("supports_thinking")),
                images=bool(caps.get("supports_images")),
                tools=bool(caps.get("supports_tools")),
            )
            target = [m for m in msgs if m["role"] == role][-1]
            target["content"].append(copy.deepcopy(block))
            index = len(target["content"]) - 1
            label = f"{btype} in a {role} message"
            try:
                with capture_warnings() as recs:
                    req = a.to_wire(msgs, tools, opts(a))
            except Exception as exc:
                yield _o(R.LOSSY_WARN, s, "fail", label, crash(exc))
                continue
            problem = drop_problem(recs, btype, target, a)
            yield _o(R.LOSSY_WARN, s, "fail" if problem else "pass", label, problem or "")
            leaked = marker in body_text(req.body)
            yield _o(
                R.LOSSY_ABSENT,
                s,
                "fail" if leaked else "pass",
                label,
                f"{marker[:40]} reached the wire" if leaked else "",
            )
            crit = copy.deepcopy(msgs)
            tgt = next(m for m in crit if m["id"] == target["id"])
            tgt["metadata"]["critical"] = [index]
            try:
                with capture_warnings():
                    a.to_wire(crit, tools, opts(a))
            except AdapterError as exc:
                ok = getattr(exc, "block_type", None) == btype and getattr(exc, "message_id", None) == target["id"]
                yield _o(
                    R.LOSSY_CRITICAL,
                    s,
                    "pass" if ok else "fail",
                    label,
                    "" if ok else f"{type(exc).__name__} lacks block_type={btype!r} or the message_id",
                )
            except Exception as exc:
                yield _o(R.LOSSY_CRITICAL, s, "fail", label, crash(exc))
            else:
                yield _o(
                    R.LOSSY_CRITICAL,
                    s,
                    "fail",
                    label,
                    "critical block dropped and the request still rendered",
                )


# ------------------------------------------------------------------------------------------
# TC3xx tool ids


@check(R.TOOL_ID_RESTORED, R.TOOL_ID_INJECTIVE, R.TOOL_ID_RULES, R.TOOL_ID_PAIRED, R.TOOL_ID_CANONICAL)
def tool_ids(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        if not a.capabilities.get("supports_tools"):
            for rule in (
                R.TOOL_ID_RESTORED,
                R.TOOL_ID_INJECTIVE,
                R.TOOL_ID_RULES,
                R.TOOL_ID_PAIRED,
            ):
                yield _o(rule, s, "skip", "-", "supports_tools is false")
            continue
        yield from _script_ids(s)
        yield from _recorded_ids(env, s)


def _script_ids(s: AdapterUnderTest) -> Iterator[Outcome]:
    a = s.adapter
    api = getattr(a, "wire_api", None)
    msgs, tools = conversation(a.provider)
    sid = msgs[0]["session_id"]
    cids = [b["id"] for m in msgs for b in m["content"] if b["type"] == "tool_use"]
    try:
        with capture_warnings():
            first = a.to_wire(msgs, tools, opts(a))
            second = a.to_wire(copy.deepcopy(msgs), tools, opts(a))
    except Exception as exc:
        yield _o(R.TOOL_ID_RULES, s, "fail", "script", crash(exc))
        return
    m = a.tool_id_map(sid)
    pids = [m.get_provider(c) for c in cids]
    text = body_text(first.body)
    problems = []
    for c, p in zip(cids, pids, strict=True):
        if p is None:
            problems.append(f"{c} has no provider id in the session map after to_wire")
            continue
        if not a.provider_tool_id.match(p):
            problems.append(f"{p!r} does not match the adapter's own provider_tool_id")
        known = W.provider_id_problem(api, p)
        if known:
            problems.append(known)
    if len(set(pids)) != len(pids):
        problems.append(f"two canonical ids got the same provider id: {pids}")
    yield _o(R.TOOL_ID_RULES, s, "fail" if problems else "pass", "script", "; ".join(problems[:3]))
    # TC303: stable across calls and injective
    inj = []
    if body_text(second.body) != text:
        inj.append("serializing the same conversation twice gave different wire bodies")
    pairs = m.pairs()
    if len({c for c, _ in pairs}) != len(pairs) or len({p for _, p in pairs}) != len(pairs):
        inj.append(f"map is not injective: {pairs}")
    yield _o(R.TOOL_ID_INJECTIVE, s, "fail" if inj else "pass", "script", "; ".join(inj))
    # TC305: use and result carry the same id
    paired = []
    for c, p in zip(cids, pids, strict=True):
        if p is not None and text.count(json.dumps(p)) < 2:
            paired.append(
                f"provider id {p} of {c} appears {text.count(json.dumps(p))} time(s) on the wire, want use + result"
            )
    facts = W.inspect(api, first.body)
    if facts is not None and facts.unpaired_results:
        paired.append(f"tool results answer ids no earlier call carries: {facts.unpaired_results}")
    if has_request_reader(a):
        try:
            back = a.from_wire_request(first.body, session_id=sid)  # type: ignore[attr-defined]
        except Exception as exc:
            paired.append(crash(exc))
        else:
            got_uses = [b["id"] for mm in back.messages for b in mm["content"] if b["type"] == "tool_use"]
            got_results = [
                b["tool_use_id"] for mm in back.messages for b in mm["content"] if b["type"] == "tool_result"
            ]
            if got_uses != cids or got_results != cids:
                paired.append(f"read back: uses {got_uses}, results {got_results}, want {cids} for both")
    yield _o(R.TOOL_ID_PAIRED, s, "fail" if paired else "pass", "script", "; ".join(paired[:3]))


def _recorded_ids(env: Env, s: AdapterUnderTest) -> Iterator[Outcome]:
    """Parse recorded tool calls, serialize them back: the provider's ids must return."""
    a = s.adapter
    for it in env.recorded(s):
        if it.status >= 400 or it.is_stream or not isinstance(it.response_json, dict):
            continue
        sid = f"sess_ids_{abs(hash(it.label)) % 10**9}"
        try:
            msg = a.from_wire_response(WireResponse(it.response_json), ctx_for(sid))
            again = a.from_wire_response(WireResponse(it.response_json), ctx_for(sid))
        except Exception:
            continue
        uses = [b for b in msg["content"] if b.get("type") == "tool_use"]
        if not uses:
            continue
        m = a.tool_id_map(sid)
        b = Builder(session_id=sid)
        b.add("user", [{"type": "text", "text": "go"}])
        msg["id"] = b.add("assistant", [])["id"]
        b.messages[-1] = msg
        for u in uses:
            b.add(
                "tool",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": u["id"],
                        "content": [{"type": "text", "text": "ok"}],
                    }
                ],
                parent_tool_use_id=u["id"],
            )
        try:
            with capture_warnings():
                wire = a.to_wire(b.messages, [], opts(a))
        except Exception as exc:
            yield _o(R.TOOL_ID_RESTORED, s, "fail", it.label, crash(exc))
            continue
        text, raw = body_text(wire.body), json.dumps(it.response_json, ensure_ascii=False)
        problems = []
        for u in uses:
            p = m.get_provider(u["id"])
            if p is None or json.dumps(p) not in raw:
                problems.append(f"{u['id']} maps to {p!r}, which is not the id in the recorded response")
            elif text.count(json.dumps(p)) < 2:
                problems.append(f"provider id {p} not restored on both the call and its result")
        yield _o(R.TOOL_ID_RESTORED, s, "fail" if problems else "pass", it.label, "; ".join(problems[:3]))
        stable = [u["id"] for u in uses] == [x["id"] for x in again["content"] if x.get("type") == "tool_use"]
        pairs = m.pairs()
        inj = len({c for c, _ in pairs}) == len(pairs) == len({p for _, p in pairs})
        yield _o(
            R.TOOL_ID_INJECTIVE,
            s,
            "pass" if stable and inj else "fail",
            it.label,
            ""
            if stable and inj
            else ("parsing twice gave other canonical ids" if not stable else f"map not injective: {pairs}"),
        )


# ------------------------------------------------------------------------------------------
# TC4xx cross-provider replay (N x N)


def produced_through(a: Adapter) -> tuple[list[Message], list[ToolDefinition]]:
    """A session whose assistant turns provider `a` issued (seed 003 §8.3).

    The script is stamped with `a`'s provider and model, thinking signed by it included
    (what `a`'s provider returns, whether or not adapter `a` can send thinking back), and
    it has been serialized through `a` once, so `a`'s tool-id map holds its calls as a live
    session's would.
    """
    msgs, tools = conversation(a.provider)
    with capture_warnings():
        a.to_wire(copy.deepcopy(msgs), tools, opts(a))
    return msgs, tools


def _texts(messages: list[Message]) -> list[str]:
    out = []
    for m in messages:
        if m["role"] == "system":
            continue
        for b in m["content"]:
            if b.get("type") == "text":
                out.append(b["text"])
            elif b.get("type") == "tool_result":
                out.extend(x.get("text", "") for x in b.get("content", []) if x.get("type") == "text")
    return [t for t in out if t]


def _calls(messages: list[Message]) -> list[tuple[str, str, str]]:
    return [
        (b["id"], b["name"], json.dumps(b["input"], sort_keys=True))
        for m in messages
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]


@check(
    R.REPLAY_PRESERVED,
    R.REPLAY_PAIRED,
    R.REPLAY_SYSTEM,
    R.REPLAY_DROPPED,
    R.REPLAY_SIGNATURE,
    R.WIRE_SHAPE,
)
def cross_provider(env: Env) -> Iterator[Outcome]:
    under = {s.name: s for s in env.subjects}
    everyone: list[Adapter] = [s.adapter for s in env.subjects] + list(env.peers)
    for src in everyone:
        for dst in everyone:
            if src.name not in under and dst.name not in under:
                continue
            owner = under.get(dst.name) or under[src.name]
            pair = f"{src.name}→{dst.name}"
            results = list(_replay(src, dst, owner, pair))
            env.pairs[pair] = {}
            for o in results:
                if not env.sel.enabled(o.rule):
                    continue
                prev = env.pairs[pair].get(o.rule)
                env.pairs[pair][o.rule] = (
                    "fail" if "fail" in (prev, o.status) else o.status if prev in (None, "skip") else prev
                )
                yield o


def _replay(src: Adapter, dst: Adapter, owner: AdapterUnderTest, pair: str) -> Iterator[Outcome]:
    try:
        conv, tools = produced_through(src)
    except Exception as exc:
        yield _o(
            R.REPLAY_PRESERVED,
            owner,
            "fail",
            pair,
            f"producing the conversation through {src.name} {crash(exc)}",
        )
        return
    api = getattr(dst, "wire_api", None)
    try:
        with capture_warnings() as recs:
            wire = dst.to_wire(conv, tools, opts(dst))
    except Exception as exc:
        yield _o(R.REPLAY_PRESERVED, owner, "fail", pair, crash(exc))
        return
    text = body_text(wire.body)
    yield from shape(owner, dst, pair, wire.body)
    back = None
    if has_request_reader(dst):
        try:
            back = dst.from_wire_request(wire.body, session_id=conv[0]["session_id"]).messages  # type: ignore[attr-defined]
        except Exception as exc:
            yield _o(R.REPLAY_PRESERVED, owner, "fail", pair, f"reading the wire back {crash(exc)}")
    caps = dst.capabilities
    # TC401
    problems = []
    want_texts = _texts(conv)
    if back is not None:
        if _texts(back) != want_texts:
            problems.append(f"texts {_texts(back)[:4]}... != {want_texts[:4]}...")
        if caps.get("supports_tools") and _calls(back) != _calls(conv):
            problems.append(f"tool calls {_calls(back)} != {_calls(conv)}")
    else:
        pos = [text.find(json.dumps(t)[1:-1]) for t in want_texts]
        if -1 in pos or pos != sorted(pos):
            problems.append("texts missing from the wire or out of order")
    yield _o(R.REPLAY_PRESERVED, owner, "fail" if problems else "pass", pair, "; ".join(problems))
    # TC402
    facts = W.inspect(api, wire.body)
    paired = []
    if facts is not None and (facts.unpaired_results or sorted(facts.tool_result_ids) != sorted(facts.tool_use_ids)):
        paired.append(f"wire calls {facts.tool_use_ids} vs results {facts.tool_result_ids}")
    if back is not None:
        errs = [
            f.format()
            for f in validate_messages(back, selection=Selection(select=("TS205", "TS206", "TS208", "TS111")))
        ]
        paired += errs
    if facts is None and back is None:
        yield _o(R.REPLAY_PAIRED, owner, "skip", pair, "unknown wire API and no from_wire_request")
    else:
        yield _o(R.REPLAY_PAIRED, owner, "fail" if paired else "pass", pair, "; ".join(paired[:3]))
    # TC403
    systems = [b["text"] for m in conv if m["role"] == "system" for b in m["content"] if b.get("type") == "text"]
    want_sys = "\n\n".join(systems)
    sp = []
    if back is not None and caps.get("supports_system_prompt"):
        got = [m for m in back if m["role"] == "system"]
        got_text = "\n\n".join(b["text"] for m in got for b in m["content"] if b.get("type") == "text")
        if got_text != want_sys or (got and back[0]["role"] != "system"):
            sp.append(
                f"system read back as {got_text[:60]!r} (first message "
                f"{back[0]['role'] if back else None}), want {want_sys[:60]!r} first"
            )
    if facts is not None and caps.get("supports_system_prompt"):
        if caps.get("supports_system_messages_in_list"):
            if facts.system_in_messages != [0]:
                sp.append(f"system messages at wire positions {facts.system_in_messages}, want [0]")
        else:
            if facts.system_in_messages:
                sp.append(
                    f"role system left in messages at {facts.system_in_messages}; {dst.name} "
                    "takes a hoisted system prompt"
                )
            if facts.system_top_level != want_sys:
                sp.append(f"top-level system is {str(facts.system_top_level)[:60]!r}, want {want_sys[:60]!r}")
    yield _o(R.REPLAY_SYSTEM, owner, "fail" if sp else "pass", pair, "; ".join(sp[:3]))
    # TC404 / TC405
    dropped = []
    sig = []
    same = src.provider == dst.provider
    for m in conv:
        for b in m["content"]:
            t = b.get("type")
            if t in ("thinking", "redacted_thinking"):
                carried = bool(caps.get("supports_thinking")) and same
                marker = b.get("signature") if t == "thinking" else b.get("data")
                present = bool(marker) and str(marker) in text
                if carried and not present:
                    sig.append(f"{t} issued by {src.provider} not sent back to {dst.name}")
                if not carried:
                    if present:
                        sig.append(f"{t} signed by {src.provider} sent to {dst.name}")
                    p = drop_problem(recs, t, m, dst)
                    if p:
                        dropped.append(f"{t}: {p}")
            elif t == "image" and not caps.get("supports_images"):
                if b["source"]["data"] in text:
                    dropped.append("image reached a wire that declares supports_images false")
                p = drop_problem(recs, "image", m, dst)
                if p:
                    dropped.append(f"image: {p}")
    yield _o(R.REPLAY_DROPPED, owner, "fail" if dropped else "pass", pair, "; ".join(dropped[:3]))
    yield _o(R.REPLAY_SIGNATURE, owner, "fail" if sig else "pass", pair, "; ".join(sig[:3]))


# ------------------------------------------------------------------------------------------
# TC5xx capability honesty


def _feature(
    s: AdapterUnderTest,
    a: Adapter,
    text: str,
    recs: list[logging.LogRecord],
    by_type: dict[str, list[tuple[Message, dict[str, Any]]]],
    cap: str,
    markers: list[str],
    blocks: list[str],
) -> Iterator[Outcome]:
    """TC501 when `cap` is declared true (markers on the wire), else TC502 (absent, WARNed)."""
    if a.capabilities.get(cap):
        missing = [mk for mk in markers if mk not in text]
        why = f"declared true but not on the wire: {missing[:3]}" if missing else ""
        yield _o(R.CAPS_CARRIED, s, "fail" if missing else "pass", cap, why)
        return
    leaked = [mk for mk in markers if mk in text]
    problems = [f"declared false but on the wire: {leaked[:3]}"] if leaked else []
    for t in blocks:
        for m, _ in by_type.get(t, []):
            p = drop_problem(recs, t, m, a)
            if p:
                problems.append(f"{t}: {p}")
    yield _o(R.CAPS_DROPPED, s, "fail" if problems else "pass", cap, "; ".join(problems[:3]))


@check(R.CAPS_CARRIED, R.CAPS_DROPPED, R.WIRE_SHAPE)
def capability_honesty(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        caps = a.capabilities
        msgs, tools = conversation(a.provider)
        schema = {"type": "object", "description": mark("schema"), "properties": {}}
        try:
            with capture_warnings() as recs:
                wire = a.to_wire(msgs, tools, opts(a, output_schema=schema))
        except Exception as exc:
            yield _o(R.CAPS_CARRIED, s, "fail", "script", crash(exc))
            continue
        text = body_text(wire.body)
        yield from shape(s, a, "script", wire.body)
        by_type: dict[str, list[tuple[Message, dict[str, Any]]]] = {}
        for m in msgs:
            for b in m["content"]:
                by_type.setdefault(b["type"], []).append((m, b))

        def feature(cap: str, markers: list[str], blocks: list[str]) -> Iterator[Outcome]:
            return _feature(s, a, text, recs, by_type, cap, markers, blocks)  # noqa: B023 - used at once

        yield from feature(
            "supports_thinking",
            [mark("thinking"), mark(f"signature-{a.provider}"), mark(f"redacted-{a.provider}")],
            ["thinking", "redacted_thinking"],
        )
        yield from feature("supports_images", [PNG_2PX], ["image"])
        yield from feature(
            "supports_tools",
            [mark("path"), mark("query"), mark("result-1"), "read_file"],
            ["tool_use", "tool_result"],
        )
        yield from feature("supports_system_prompt", [mark("system-1"), mark("system-2")], ["system"])
        if caps.get("supports_structured_output"):
            ok = mark("schema") in text
            yield _o(
                R.CAPS_CARRIED,
                s,
                "pass" if ok else "fail",
                "supports_structured_output",
                "" if ok else "output_schema not on the wire",
            )
        else:
            leaked = mark("schema") in text
            warned = any(
                r.levelno == logging.WARNING and "output_schema" in (str(getattr(r, "option", "")) + r.getMessage())
                for r in recs
            )
            ok = not leaked and warned
            yield _o(
                R.CAPS_DROPPED,
                s,
                "pass" if ok else "fail",
                "supports_structured_output",
                ""
                if ok
                else (
                    "output_schema sent although declared false"
                    if leaked
                    else "output_schema dropped without a WARNING"
                ),
            )
        if caps.get("supports_images"):
            for media in caps.get("accepted_image_media_types") or []:
                b = Builder(session_id=msgs[0]["session_id"] + "_img")
                data = base64.b64encode(mark(f"image {media}").encode()).decode()
                b.add(
                    "user",
                    [
                        {"type": "text", "text": "look"},
                        {
                            "type": "image",
                            "source": {"kind": "base64", "data": data},
                            "media_type": media,
                        },
                    ],
                )
                try:
                    with capture_warnings():
                        w = a.to_wire(b.messages, [], opts(a))
                except Exception as exc:
                    yield _o(R.CAPS_CARRIED, s, "fail", f"image {media}", crash(exc))
                    continue
                ok = data in body_text(w.body)
                yield _o(
                    R.CAPS_CARRIED,
                    s,
                    "pass" if ok else "fail",
                    f"image {media}",
                    "" if ok else f"{media} is declared accepted but the image did not reach the wire",
                )
        if caps.get("supports_streaming"):
            try:
                w1 = a.to_wire(msgs[:3], [], opts(a, stream=True))
                w0 = a.to_wire(msgs[:3], [], opts(a, stream=False))
            except Exception as exc:
                yield _o(R.CAPS_CARRIED, s, "fail", "supports_streaming", crash(exc))
            else:
                ok = (
                    body_text(w1.body) != body_text(w0.body)
                    or dict(w1.headers) != dict(w0.headers)
                    or w1.path != w0.path
                )
                yield _o(
                    R.CAPS_CARRIED,
                    s,
                    "pass" if ok else "fail",
                    "supports_streaming",
                    "" if ok else "stream=True renders the same request as stream=False",
                )
