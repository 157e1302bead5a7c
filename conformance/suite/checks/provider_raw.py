"""TC406: `provider_raw` (spec §6.5) is read only by the adapter that wrote it.

§6.5: "Only the adapter that wrote provider_raw reads it. Cross-provider serialization
ignores provider_raw entirely." and "When that adapter later serializes the message back
to the same provider, it consults provider_raw if present."

Judged by differential rendering, never by searching serialized text. The messages are
the adapter's own reading of its recordings (`from_wire_request` of recorded requests,
`from_wire_response` of recorded responses), so their `provider_raw` has the shape the
adapter itself writes and consults:

- isolation: the same messages with each `provider_raw` entry re-keyed to another
  adapter's name must render exactly the request the messages render with no
  `provider_raw` at all; so must another subject's messages with the entries that adapter
  wrote, and the request-level entry (`AdapterOptions.provider_raw`) re-keyed; a
  difference is a field of the body (reported by JSON pointer) that another adapter's
  round-trip data changed;
- the adapter's own entry survives storage: §9.1 stores metadata as JSON, so the entry is
  JSON data and the message read back from its JSON renders the same request.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from ...adapters.protocol import Adapter, AdapterOptions, Message, ToolDefinition, WireResponse
from ...core import pointers
from .. import rules as R
from ..capture import capture_warnings
from ..interactions import Interaction
from ..outcome import AdapterUnderTest, Outcome
from .common import Env, check, crash, ctx_for, opts, outcome, read_recorded, render, session_for, wire_name

MAX_CASES = 12  # recordings per adapter whose messages carry provider_raw
SCAN = 400  # recordings read to find them
# label, messages, tools, options, and the adapter's own request-level entry
# (`AdapterOptions.provider_raw[name]`, what `from_wire_request` read off the recording)
Case = tuple[str, list[Message], list[ToolDefinition], AdapterOptions, dict[str, Any]]
OTHER = "x-turnspec-other-adapter"  # a name no adapter has, when there are no peers


def first_difference(a: Any, b: Any, ptr: str = "") -> str | None:
    """The JSON pointer of the first place two JSON values differ (None when equal)."""
    if type(a) is not type(b):
        return ptr or "/"
    if isinstance(a, dict):
        for k in sorted(a.keys() | b.keys()):
            sub = f"{ptr}/{pointers.token(k)}"
            if k not in a or k not in b:
                return sub
            d = first_difference(a[k], b[k], sub)
            if d is not None:
                return d
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            d = first_difference(x, y, f"{ptr}/{i}")
            if d is not None:
                return d
        return None if len(a) == len(b) else f"{ptr}/{min(len(a), len(b))}"
    return None if a == b else (ptr or "/")


def _raw(m: Message) -> dict[str, Any]:
    raw = (m.get("metadata") or {}).get("provider_raw")
    return raw if isinstance(raw, dict) else {}


def _with_raw(msgs: list[Message], raw_of: Any) -> list[Message]:
    out = []
    for m in msgs:
        c = copy.deepcopy(m)
        meta = dict(c.get("metadata") or {})
        new = raw_of(_raw(m))
        if new:
            meta["provider_raw"] = new
        else:
            meta.pop("provider_raw", None)
        c["metadata"] = meta
        out.append(c)
    return out


def _render(a: Adapter, msgs: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> Any:
    """The request body as the wire sees it (JSON: a tuple and a list are the same bytes)."""
    with capture_warnings():
        body = render(a, msgs, tools, options).body
    return json.loads(json.dumps(body, default=repr))


def _cases(s: AdapterUnderTest, env: Env) -> list[Case]:
    """Cases read from the adapter's recordings: up to MAX_CASES whose messages carry
    provider_raw (those where the adapter's own entry changes the request first: they are
    what a foreign reader would get wrong), and up to MAX_CASES more whose request carries a
    request-level entry that changes the request (one that changes nothing cannot show a
    foreign reader)."""
    a = s.adapter
    consulted: list[Case] = []
    other: list[Case] = []
    with_options: list[Case] = []
    for n, it in enumerate(env.recorded(s)):
        if n >= SCAN or (len(consulted) >= MAX_CASES and len(with_options) >= MAX_CASES):
            break
        try:
            case = _case(a, it)
        except (AttributeError, KeyError, TypeError, ValueError):
            continue  # a malformed reading: TC101 / TC802 report it
        if case is None:
            continue
        _, msgs, tools, options, req_raw = case
        if req_raw and len(with_options) < MAX_CASES:
            try:
                own = replace(options, provider_raw={a.name: req_raw})
                if _render(a, msgs, tools, own) != _render(a, msgs, tools, options):
                    with_options.append(case)  # the adapter consults this entry
            except Exception:
                with_options.append(case)  # the check reports the crash
        if not any(_raw(m) for m in msgs) or len(consulted) >= MAX_CASES:
            continue
        try:
            changed = _render(a, msgs, tools, options) != _render(a, _with_raw(msgs, lambda r: {}), tools, options)
        except Exception:
            changed = True  # the check reports the crash
        (consulted if changed else other).append(case)
    picked = (consulted + other)[:MAX_CASES]
    return picked + [c for c in with_options if c not in picked]


def _case(a: Adapter, it: Interaction) -> Case | None:
    api = it.wire
    if api is None or api.name != wire_name(a):
        return None
    sid = session_for("raw", it.label)
    try:
        parsed = read_recorded(a, it, sid) if isinstance(it.request_body, dict) else None
    except Exception:
        return None  # TC802 reports what cannot be read
    msgs = list(parsed.messages) if parsed is not None else []
    if not all(isinstance(m, dict) and isinstance(m.get("metadata", {}), dict) for m in msgs):
        return None  # not messages: TC102 reports it
    tools = list(parsed.tools) if parsed is not None else []
    options = parsed.options if parsed is not None else opts(a)
    mine = options.provider_raw.get(a.name) if isinstance(options.provider_raw, Mapping) else None
    req_raw = dict(mine) if isinstance(mine, Mapping) else {}
    # the messages' provider_raw is what is judged: request-level options (and their own
    # provider_raw, TC802's business) are left out so they cannot mask a difference
    options = AdapterOptions(model=options.model, max_output_tokens=options.max_output_tokens or 256)
    if it.status < 400 and not it.is_stream and isinstance(it.response_json, dict):
        try:
            reply: Any = a.from_wire_response(WireResponse(it.response_json, it.status), ctx_for(sid))
        except Exception:
            return None  # TC101 reports it
        if not isinstance(reply, dict) or not isinstance(reply.get("metadata", {}), dict):
            return None  # TC101 reports it
        if not msgs:
            user = {
                "id": "01KR3QB0000000000000000000",
                "session_id": sid,
                "role": "user",
                "content": [{"type": "text", "text": "hi"}],
                "metadata": {},
                "created_at": "2026-05-08T12:00:00.000000Z",
                "schema_version": 1,
            }
            msgs = [user]
        msgs = [*msgs, {**reply, "session_id": sid}]
    return it.label, msgs, tools, options, req_raw


PEER_CASES = 3  # another subject's recordings rendered through this adapter


def _options_isolated(
    s: AdapterUnderTest,
    a: Adapter,
    label: str,
    msgs: list[Message],
    tools: list[ToolDefinition],
    options: AdapterOptions,
    req_raw: dict[str, Any],
    others: list[str],
) -> Iterator[Outcome]:
    """The request-level entry (`AdapterOptions.provider_raw`, keyed by adapter name) re-keyed
    to another adapter changes nothing either."""
    if not req_raw:
        return
    try:
        bare = _render(a, msgs, tools, options)
    except Exception as exc:
        yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail", f"{label} options", crash(exc))
        return
    for other in others:
        sub = f"{label} options as {other}'s"
        try:
            got = _render(a, msgs, tools, replace(options, provider_raw={other: copy.deepcopy(req_raw)}))
        except Exception as exc:
            yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail", sub, crash(exc))
            continue
        d = first_difference(bare, got)
        msg = f"AdapterOptions.provider_raw keyed {other!r} changed the request at {d}" if d else ""
        yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail" if d else "pass", sub, msg)


@check(R.PROVIDER_RAW_ISOLATED)
def provider_raw(env: Env) -> Iterator[Outcome]:
    names = sorted({str(p.name) for p in env.peers} | {s.name for s in env.subjects})
    cases = {s.name: _cases(s, env) for s in env.subjects}
    for s in env.subjects:
        a = s.adapter
        others = [n for n in names if n != a.name] or [OTHER]
        ran = False
        # another subject's messages, with the provider_raw that adapter wrote, change nothing here
        for peer in env.subjects:
            if peer.name == a.name:
                continue
            for label, msgs, tools, _, _ in cases[peer.name][:PEER_CASES]:
                ran = True
                subject = f"{peer.name}'s {label}"
                try:
                    bare = _render(a, _with_raw(msgs, lambda r: {}), tools, opts(a))
                    got = _render(a, msgs, tools, opts(a))
                except Exception as exc:
                    yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail", subject, crash(exc))
                    continue
                d = first_difference(bare, got)
                msg = f"{peer.name}'s provider_raw changed the request at {d}" if d else ""
                yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail" if d else "pass", subject, msg)
        for label, msgs, tools, options, req_raw in cases[s.name]:
            ran = True
            yield from _options_isolated(s, a, label, msgs, tools, options, req_raw, others)
            try:
                bare = _render(a, _with_raw(msgs, lambda r: {}), tools, options)
                own = _render(a, msgs, tools, options)
            except Exception as exc:
                yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail", label, crash(exc))
                continue
            # the adapter's own entry is JSON data and survives a JSON round trip (§9.1)
            try:
                stored = _with_raw(msgs, lambda r: json.loads(json.dumps(r, allow_nan=False)))
            except (TypeError, ValueError) as exc:
                yield outcome(
                    R.PROVIDER_RAW_ISOLATED, s, "fail", f"{label} stored", f"provider_raw is not JSON data: {exc}"
                )
            else:
                try:
                    back = _render(a, stored, tools, options)
                except Exception as exc:
                    yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail", f"{label} stored", crash(exc))
                else:
                    d = first_difference(own, back)
                    msg = f"the request differs at {d} once provider_raw went through JSON" if d else ""
                    yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail" if d else "pass", f"{label} stored", msg)
            # another adapter's entries (in this adapter's own shape, and its own) change nothing
            for other in others:

                def foreign(r: dict[str, Any], other: str = other, me: str = a.name) -> dict[str, Any]:
                    mine = r.get(me)
                    return {other: copy.deepcopy(mine)} if mine is not None else {}

                try:
                    got = _render(a, _with_raw(msgs, foreign), tools, options)
                except Exception as exc:
                    yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail", f"{label} as {other}'s", crash(exc))
                    continue
                d = first_difference(bare, got)
                msg = f"provider_raw keyed {other!r} changed the request at {d}" if d else ""
                yield outcome(R.PROVIDER_RAW_ISOLATED, s, "fail" if d else "pass", f"{label} as {other}'s", msg)
        if not ran:
            yield outcome(R.PROVIDER_RAW_ISOLATED, s, "skip", "-", "no recording reads back with provider_raw")
