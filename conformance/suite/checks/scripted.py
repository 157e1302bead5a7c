"""Scripted cases for what recordings rarely hold (issue 43 item 5): every stop reason of the
record's table (TC903), every error signal of its error table (TC801) and the usage buckets
its probe reads (TC904) are driven through the adapter, so no mapping of a record goes
unjudged for want of a recording (an adapter reading Bedrock's
`model_context_window_exceeded` as `end_turn` fails: the record maps it to `max_tokens`).

Each scripted answer is a recording of the API (the adapter's own, else this project's,
attributed to the API by its record) with one field rewritten where the record's own probe
reads it. It is kept only when the probe then reads the scripted value and TC800's judgment
passes it (the API's wire schemas accept the body, the framing decodes it); a value the
suite cannot write that way is a skip naming why. Everything else stays as recorded, so an
honest adapter reads it as it reads the recording, and the checks judge it as they judge a
recording (`semantics`, `responses`).
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import struct
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

from ...adapters.protocol import RequestContext, WireResponse
from ...core import ids, pointers
from ...wire.api import WireApi, value_at
from ...wire.eventstream import EventStreamMessage
from ...wire.framing import FramingError, JsonEvent, ProviderStreamError, SseEvent
from .. import rules as R
from ..interactions import Interaction
from ..outcome import AdapterUnderTest, Outcome
from . import errors as error_oracle
from .cassette_apis import recording_problem
from .common import Env, check, ctx_for, outcome, parse_response, session_for, wire_api_of
from .responses import _error_response
from .semantics import _status, _stream_semantics, _usage_problems
from .streams import wire_values

# a §6.1 class's status (contract §6.2's table read backwards): the HTTP status a scripted
# error of that class is answered with, so no status contradicts the signal it carries
CLASS_STATUS = {
    "rate_limit": 429,
    "auth": 401,
    "server_error": 500,
    "network": 408,
    "context_overflow": 400,
    "invalid_request": 400,
}


@dataclass
class Scripted(Interaction):
    """A recording with one field rewritten: labelled by what was scripted and from what."""

    what: str = ""

    @property
    def label(self) -> str:
        return f"scripted {self.what} (from {self.cassette}#{self.index})"


def _scripted(template: Interaction, what: str, **changes: Any) -> Scripted:
    kept = {f.name: getattr(template, f.name) for f in fields(Interaction)}
    return Scripted(**{**kept, **changes}, what=what)


@check(R.STOP_REASON, R.ERROR_CLASSIFIED, R.USAGE_RECORDED)
def scripted_cases(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        api = wire_api_of(s.adapter)
        if api is None or not api.chat:
            continue  # TC001 fails a wire_api that names no record
        mine = [it for it in [*env.recorded(s), *_project(env, api)] if it.api == api.name]
        yield from _stop_reasons(s, api, mine)
        yield from _error_signals(s, api, mine)
        yield from _usage_buckets(s, api, mine)


def _project(env: Env, api: WireApi) -> Iterator[Interaction]:
    """This project's recordings of `api` (attributed by the record, never by a folder's name)."""
    for c in env.project:
        for it in c.interactions:
            if it.api == api.name and recording_problem(it) is None:
                yield it


# -- where a value sits ---------------------------------------------------------------------


def _leaves(value: Any, at: str = "") -> Iterator[tuple[str, Any]]:
    """Every scalar of a JSON value with its RFC 6901 pointer."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from _leaves(v, f"{at}/{pointers.token(str(k))}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{at}/{i}")
    else:
        yield at, value


def _set(value: Any, at: str, new: Any) -> Any:
    """A copy of `value` with the scalar at pointer `at` replaced by `new`."""
    out = copy.deepcopy(value)
    parts = [pointers.unescape(p) for p in at.split("/")[1:]]
    node = out
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    if isinstance(node, list):
        node[int(parts[-1])] = new
    else:
        node[parts[-1]] = new
    return out


def _get(value: Any, at: str) -> Any:
    """The value at pointer `at` (objects and arrays), None where there is none."""
    node = value
    for p in (pointers.unescape(x) for x in at.split("/")[1:]):
        if isinstance(node, list) and p.isdigit() and int(p) < len(node):
            node = node[int(p)]
        elif isinstance(node, Mapping):
            node = node.get(p)
        else:
            return None
    return node


# -- stop reasons (TC903) -------------------------------------------------------------------


def _has_calls(api: WireApi, it: Interaction, values: list[Any] | None) -> bool:
    if it.is_stream:
        return bool(api.probes.stream_tool_fragments(values or []))
    return isinstance(it.response_json, dict) and bool(api.probes.response_tool_calls(it.response_json))


def _stop_reasons(s: AdapterUnderTest, api: WireApi, mine: list[Interaction]) -> Iterator[Outcome]:
    """Every raw value of the record's stop-reason table, written where the template's own
    stop reason is (the one field holding the value the probe reads), in a non-streamed and
    a streamed template without tool calls: TC903 judges each as it judges a recording."""
    for streamed in (False, True):
        template = next((it for it in mine if _stop_template(api, it, streamed) is not None), None)
        kind = "stream" if streamed else "response"
        if template is None:
            why = f"no recording of {api.name} to script stop reasons from (a {kind} without tool calls)"
            yield outcome(R.STOP_REASON, s, "skip", f"scripted stop reasons ({kind})", why)
            continue
        spots, recorded = _stop_template(api, template, streamed) or ([], "")
        where = _stop_fields(api, mine, streamed)
        field = _shape(spots[0][1] if streamed else spots[0])
        for raw, want in api.stop_reasons.items():
            if raw == recorded:
                continue  # the recording itself is judged
            what = f"{kind} stop reason {raw!r}"
            seen = [f for f, values in where.items() if raw in values]
            why = ""
            if want == "tool_use":
                why = f"a {want} stop needs a tool call, which the template does not make"
            elif seen and field not in seen:
                why = f"recordings carry it in another field ({', '.join(seen)}), not the template's {field}"
            elif not seen and len(where) > 1:
                why = f"the {api.name} record's values sit in more than one field ({', '.join(where)}), and no recording says which holds this one"
            if why:
                yield outcome(R.STOP_REASON, s, "skip", f"scripted {what}", why)
                continue
            it = next((x for spot in spots if (x := _with_stop(api, template, spot, raw, what)) is not None), None)
            if it is None:
                why = f"no one field of the template the {api.name} record reads it from takes it (or its schema refuses it)"
                yield outcome(R.STOP_REASON, s, "skip", f"scripted {what}", why)
                continue
            yield from _judge_stop(s, api, it)


_KIND_KEYS = frozenset({"type", "event", "object"})


def _spelled_elsewhere(value: Any, raw: str) -> bool:
    """Whether a field naming the kind of an answer or event (`type`, `event`, `object`)
    spells `raw` as one of its words (Responses' `response.completed` event beside its
    `status: completed`): rewriting the stop field alone would contradict it."""
    for p, v in _leaves(value):
        if p.rsplit("/", 1)[-1] in _KIND_KEYS and isinstance(v, str) and raw in re.split(r"[^A-Za-z0-9]+", v):
            return True
    return False


def _shape(pointer: str) -> str:
    """A pointer with its array indices as `*`: the field it names in any answer."""
    return re.sub(r"/\d+(?=/|$)", "/*", pointer)


def _stop_fields(api: WireApi, recorded: list[Interaction], streamed: bool) -> dict[str, set[str]]:
    """Which field of an answer holds which of the record's stop-reason values, as the
    recordings show it (the fields holding the value the probe reads): a value is only
    ever written where a recording has it, or, never recorded, where the record keeps all of
    its values (Bedrock's one `stopReason`; not Responses', whose `status` and
    `incomplete_details.reason` each hold some)."""
    out: dict[str, set[str]] = {}
    for it in recorded:
        if it.status >= 400 or it.is_stream != streamed:
            continue
        if streamed:
            values = wire_values(it) or []
            raw = api.probes.stream_stop_reason(values)
            spots = [p for e in values for p, v in _leaves(e) if isinstance(raw, str) and v == raw]
        else:
            body = it.response_json
            raw = api.probes.response_stop_reason(body) if isinstance(body, dict) else None
            spots = [p for p, v in _leaves(body) if isinstance(raw, str) and v == raw]
        if raw in api.stop_reasons:  # each field holding it (an item's status too: it is not told apart)
            for p in spots:
                out.setdefault(_shape(p), set()).add(str(raw))
    return out


def _stop_template(api: WireApi, it: Interaction, streamed: bool) -> tuple[list[Any], str] | None:
    """(the one place holding the value the probe reads as the stop reason, that value) in
    a usable template, else None: a template spelling its stop reason in more than one
    field (an item's `status` beside the response's), or naming it in the kind of its
    event, is not rewritten in one field (the others would contradict it)."""
    if it.status >= 400 or it.is_stream != streamed:
        return None
    spots: list[Any]
    if streamed:
        values = wire_values(it)
        if not values or _has_calls(api, it, values):
            return None
        raw = api.probes.stream_stop_reason(values)
        spots = [(i, p) for i, e in enumerate(values) for p, v in _leaves(e) if isinstance(raw, str) and v == raw]
        kind_of = values[spots[0][0]] if len(spots) == 1 else None
    else:
        body = it.response_json
        if not isinstance(body, dict) or _has_calls(api, it, None):
            return None
        raw = api.probes.response_stop_reason(body)
        spots = [p for p, v in _leaves(body) if isinstance(raw, str) and v == raw]
        kind_of = body
    if len(spots) != 1 or raw not in api.stop_reasons or _spelled_elsewhere(kind_of, str(raw)):
        return None
    return spots, str(raw)


def _with_stop(api: WireApi, template: Interaction, spot: Any, raw: str, what: str) -> Scripted | None:
    if template.is_stream:
        index, at = spot
        body = _rewrite_event(template, index, lambda ev: _set(ev, at, raw))
        if body is None:
            return None
        it = _scripted(template, what, response_body=body, response_json=None)
        ok = api.probes.stream_stop_reason(wire_values(it) or []) == raw
    else:
        new = _set(template.response_json, spot, raw)
        it = _scripted(template, what, response_body=json.dumps(new).encode(), response_json=new)
        ok = api.probes.response_stop_reason(new) == raw
    return it if ok and recording_problem(it) is None else None


def _judge_stop(s: AdapterUnderTest, api: WireApi, it: Scripted) -> Iterator[Outcome]:
    sid = session_for("scripted", it.label)
    if it.is_stream:
        for out in _stream_semantics(s, s.adapter, api, it, sid, set()):
            if out.rule == R.STOP_REASON.id and out.subject == it.label:
                yield out
        return
    try:
        msg = parse_response(s.adapter, WireResponse(it.response_json), ctx_for(sid))
    except Exception:
        why = "the adapter could not parse the scripted response (TC101 judges the recording it came from)"
        yield outcome(R.STOP_REASON, s, "skip", f"{it.label} (status)", why)
        return
    yield from _status(s, api, it, msg)


# -- rewriting one event of a recorded stream ---------------------------------------------


def _rewrite_event(it: Interaction, index: int, change: Callable[[Any], Any]) -> bytes | None:
    """The recorded stream's bytes with its `index`-th JSON event replaced by `change(event)`,
    every other byte as recorded; None where this framing's frame cannot be written back."""
    framing = it.framing
    if framing is None:
        return None
    decoder = framing.decoder()
    try:
        frames = [*decoder.feed(it.response_body), *decoder.close()]
    except FramingError:
        return None
    k = -1
    start = 0
    body = it.response_body
    for frame in frames:
        try:
            ev = framing.to_json(frame)
        except (FramingError, ProviderStreamError):
            return None
        end = int(getattr(frame, "end", 0) or 0)
        if ev is not None:
            k += 1
            if k == index:
                new = _encode(frame, ev, change(ev.value), body[start:end])
                return None if new is None else body[:start] + new + body[end:]
        start = end
    return None


def _encode(frame: Any, ev: JsonEvent, value: Any, raw: bytes) -> bytes | None:
    """One frame written back with `value` as its JSON: the frame's own bytes (`raw`) with
    the JSON replaced, or an event-stream message encoded anew (both CRCs)."""
    text = json.dumps(value, ensure_ascii=False).encode()
    if isinstance(frame, EventStreamMessage):
        return _event_message(frame, value)
    if isinstance(frame, SseEvent):
        lines = raw.split(b"\n")
        data = [i for i, line in enumerate(lines) if line.startswith(b"data:")]
        if len(data) != 1:
            return None
        cr = b"\r" if lines[data[0]].endswith(b"\r") else b""
        lines[data[0]] = b"data: " + text + cr
        return b"\n".join(lines)
    first, last = raw.find(b"{"), raw.rfind(b"}")  # an NDJSON line or a JSON-array element
    if first < 0 or last < first:
        return None
    return raw[:first] + text + raw[last + 1 :]


def _event_message(frame: EventStreamMessage, value: Any) -> bytes | None:
    name = frame.event_type
    if not name or not isinstance(value, Mapping) or list(value) != [name]:
        return None
    if not all(isinstance(v, str) for v in frame.headers.values()):
        return None
    headers = b""
    for k, v in frame.headers.items():
        kb, vb = k.encode(), str(v).encode()
        headers += bytes([len(kb)]) + kb + b"\x07" + struct.pack(">H", len(vb)) + vb
    payload = json.dumps(value[name], ensure_ascii=False).encode()
    prelude = struct.pack(">II", 12 + len(headers) + len(payload) + 4, len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


# -- error signals (TC801) ------------------------------------------------------------------


def _error_signals(s: AdapterUnderTest, api: WireApi, mine: list[Interaction]) -> Iterator[Outcome]:
    """Every value of the record's error tables (headers, body fields, Google's detail
    reasons), written into a recorded error answer of the API where it carries that signal,
    with the status of the value's class: TC801 holds the adapter to the class the record's
    table gives it (its §6.3 subclass, §6.4 retryable, the status and the message)."""
    template = next((it for it in mine if it.status >= 400 and isinstance(it.response_json, dict)), None)
    if template is None:
        why = f"no recorded error answer of {api.name} to script its error signals from"
        yield outcome(R.ERROR_CLASSIFIED, s, "skip", "scripted error signals", why)
        return
    done: set[str] = set()
    for value, cls in _signals(api):
        if value in done or cls not in CLASS_STATUS:
            continue
        done.add(value)
        what = f"error signal {value!r}"
        it = _with_signal(api, template, value, cls, what)
        if it is None:
            why = f"{cls}: the recorded error answer carries no field or header the record reads it from"
            yield outcome(R.ERROR_CLASSIFIED, s, "skip", f"scripted {what}", why)
            continue
        want = error_oracle.expected_class(api, it.status, it.response_json, it.headers)
        if want != cls and cls not in error_oracle.also_accepted(api, it.response_json, it.headers):
            why = f"{cls}: another signal of the recorded answer decides ({want})"
            yield outcome(R.ERROR_CLASSIFIED, s, "skip", f"scripted {what}", why)
            continue
        ctx = RequestContext(
            session_id=session_for("scripted", it.label), request_id=ids.derived(0, "request", it.label)
        )
        yield from _error_response(s, it, ctx)


def _signals(api: WireApi) -> Iterator[tuple[str, str]]:
    for table in api.errors.headers.values():
        yield from table.items()
    for _, table in api.errors.body_fields:
        yield from table.items()
    yield from api.errors.detail_reasons.items()


def _with_signal(api: WireApi, template: Interaction, value: str, cls: str, what: str) -> Scripted | None:
    body: Any = template.response_json
    headers = dict(template.headers)
    carried = False
    for name, table in api.errors.headers.items():
        if value in table and name.lower() in headers:
            headers[name.lower()] = [value]
            carried = True
    for at, table in api.errors.body_fields:
        if value in table and isinstance(value_at(body, at), str):
            body = _set(body, at, value)
            carried = True
    if value in api.errors.detail_reasons:
        spot = next(
            (p for p, v in _leaves(body) if p.endswith("/reason") and "/details/" in p and isinstance(v, str)), None
        )
        if spot is not None:
            body, carried = _set(body, spot, value), True
    if not carried:
        return None
    # a neutral message: the one the recording had may word another class (an overflow)
    said = error_oracle.provider_text(body)
    spot = next((p for p, v in _leaves(body) if said and v == said), None)
    if spot is not None:
        body = _set(body, spot, f"turnspec scripted {value}")
    status = CLASS_STATUS[cls]
    code_at = api.errors.status_in_body
    if code_at is not None and isinstance(value_at(body, code_at), int):
        body = _set(body, code_at, status)
    return _scripted(
        template, what, status=status, response_json=body, response_body=json.dumps(body).encode(), headers=headers
    )


# -- usage buckets (TC904) ------------------------------------------------------------------

# distinct counts per bucket, input the largest (an input that includes cache reads stays
# above them): a bucket read from another's field shows
_BASE = {"input": 5000, "output": 700, "cache_read": 300, "cache_write": 90}


def _usage_buckets(s: AdapterUnderTest, api: WireApi, mine: list[Interaction]) -> Iterator[Outcome]:
    """The usage of a recorded response rewritten with a distinct count in each field the
    record's usage probe reads (found by moving each count and seeing which bucket moves),
    a total the recording kept equal to a sum of them kept equal: TC904 holds the parse to
    the buckets the probe reads from the scripted body."""
    for template in mine:
        body = template.response_json
        if template.status >= 400 or template.is_stream or not isinstance(body, dict):
            continue
        base = api.probes.response_usage(body)
        if not isinstance(base, dict):
            continue
        new = _distinct_usage(api, body, base)
        if new is None:
            continue
        it = _scripted(template, "usage buckets", response_json=new, response_body=json.dumps(new).encode())
        recorded = api.probes.response_usage(new)
        if recording_problem(it) is not None or not isinstance(recorded, dict):
            continue
        try:
            msg = parse_response(s.adapter, WireResponse(new), ctx_for(session_for("scripted", it.label)))
        except Exception:
            continue  # TC101 judges the recording it came from
        p = _usage_problems(recorded, (msg.get("metadata") or {}).get("usage"), api)
        yield outcome(R.USAGE_RECORDED, s, "fail" if p else "pass", it.label, "; ".join(p))
        return
    why = f"no recorded response of {api.name} with usage the record reads to script counts in"
    yield outcome(R.USAGE_RECORDED, s, "skip", "scripted usage buckets", why)


def _distinct_usage(api: WireApi, body: dict[str, Any], base: dict[str, Any]) -> dict[str, Any] | None:
    """`body` with each count the probe reads into exactly one bucket set to a count of its
    own (above every count that moves several buckets, which stays as recorded), and each
    other count of the same object that equalled a sum of those set to the new sum; None
    when no count moves exactly one bucket."""
    counts = [(p, v) for p, v in _leaves(body) if type(v) is int and v >= 0]
    moves: dict[str, str] = {}
    kept = [0]  # counts that move more than one bucket, left as recorded
    for p, v in counts[:200]:
        moved = api.probes.response_usage(_set(body, p, v + 1009))
        if isinstance(moved, dict):
            changed = [b for b in _BASE if moved.get(b) != base.get(b)]
            if len(changed) == 1:
                moves[p] = changed[0]
            elif len(changed) > 1:
                kept.append(v)
    if not moves:
        return None
    new = body
    step = itertools.count()
    # a count left as recorded is one another count contains (Gemini's cachedContentTokenCount,
    # part of promptTokenCount, moves input and cache_read): the fresh counts start above it,
    # so the scripted body stays one the API could send (a part never larger than its whole)
    floor = max(kept)
    fresh = {p: floor + _BASE[b] + 13 * next(step) for p, b in moves.items()}
    for p, v in fresh.items():
        new = _set(new, p, v)
    for p, v in counts:  # totals: a count of the same object equal to a sum of moved siblings
        if p in moves:
            continue
        parent = p.rsplit("/", 1)[0]
        sibs = [q for q in moves if q.rsplit("/", 1)[0] == parent]
        olds = {q: _get(body, q) for q in sibs}
        for n in range(2, len(sibs) + 1):
            combo = next((c for c in itertools.combinations(sibs, n) if sum(olds[q] for q in c) == v), None)
            if combo is not None:
                new = _set(new, p, sum(fresh[q] for q in combo))
                break
    return new
