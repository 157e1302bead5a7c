"""TC601-TC605, TC609, TC610: stream invariants on one event sequence; TC606 (the same content
streamed and not streamed)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ...adapters.protocol import Adapter, StreamEvent, WireResponse
from ...adapters.streams import DOTTED, parse_json_object
from ...wire import equivalence
from ...wire.api import Framing, WireApi
from ...wire.framing import FramingError, ProviderStreamError, json_events
from .. import rules as R
from ..interactions import Interaction
from ..outcome import AdapterUnderTest, Outcome
from .common import (
    USAGE_FIELDS,
    Env,
    check,
    crash,
    ctx_for,
    outcome,
    parse_response,
    parse_stream,
    session_for,
    token_counts,
    wire_api_of,
)
from .minted import WireIds, fixed_ids, match_ids

# the sentences TC606 enforces (content, usage)
STREAM_EQUALS = 'streaming §5.1: "Streaming events are 100% reconstructible from the persisted `Message` content"'
USAGE_EQUALS = 'contract §10.1.14: "verify final `message.complete.usage` matches non-streaming equivalent"'


def strip_ids(events: list[StreamEvent]) -> list[StreamEvent]:
    return [{k: v for k, v in e.items() if k != "message_id"} for e in events]


def stream_invariants(
    s: AdapterUnderTest | str, label: str, events: list[StreamEvent], vocabulary: str | None = None
) -> Iterator[Outcome]:
    """TC601-TC605 on one event sequence (canonical §7.4 names; `vocabulary` is the one the
    adapter used). A start event is required in the streaming §5.3 names (`message.start`,
    contract §5.2.1) and optional in the canonical §7.4 names, which define none; when
    present it comes first, once."""
    kinds = [e.get("type") for e in events]
    problems = []
    starts = kinds.count("message_start")
    if vocabulary == DOTTED and not starts:
        problems.append("no message.start (streaming §5.3, contract §5.2.1: it precedes every delta)")
    if starts > 1:
        problems.append(f"{starts} start events")
    if starts and kinds[0] != "message_start":
        problems.append(f"first event is {kinds[0]}, not the start event")
    if kinds.count("message_complete") != 1 or (kinds and kinds[-1] != "message_complete"):
        problems.append("message_complete is not the one last event")
    # ids the events carry (an event without one is TC103's: stream-event.json requires it)
    if len({e.get("message_id") for e in events if e.get("message_id") is not None}) > 1:
        problems.append("events carry different message_ids")
    yield outcome(R.STREAM_ORDER, s, "fail" if problems else "pass", label, "; ".join(problems))
    last = -1
    back = []
    for i, e in enumerate(events):
        k = e.get("content_block_index")
        if isinstance(k, int):
            if k < last:
                back.append(f"event {i} ({e['type']}) index {k} after {last}")
            last = max(last, k)
    yield outcome(R.STREAM_INDEX, s, "fail" if back else "pass", label, "; ".join(back[:3]))
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
        yield outcome(R.STREAM_TOOL, s, "fail" if tproblems else "pass", label, "; ".join(tproblems[:3]))
        fproblems = []
        for tid, st in tools.items():
            if not isinstance(st["final"], dict):
                fproblems.append(f"{tid}: final_input is {type(st['final']).__name__}, not an object")
            elif st["json"].strip():
                spelled = parse_json_object(st["json"])
                if spelled is not None and spelled != st["final"]:
                    fproblems.append(f"{tid}: final_input differs from the JSON its deltas spell")
        yield outcome(
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
        if not isinstance(final, list):
            mism.append(f"final_content is a {type(final).__name__}, not a list of blocks")
            final = []
        for k, blk in agg.items():
            if k >= len(final):
                mism.append(f"block {k} streamed but absent from final_content")
                continue
            want = final[k]
            if not isinstance(want, dict):
                mism.append(f"final_content block {k} is a {type(want).__name__}, not a block object")
                continue
            for key, val in blk.items():
                if want.get(key) != val:
                    mism.append(
                        f"block {k} {key}: deltas give {json.dumps(val)[:50]}, final_content has "
                        f"{json.dumps(want.get(key))[:50]}"
                    )
        # the other direction: a block of final_content that has a delta event (text,
        # thinking, tool_use) and content, yet no delta built it
        mism += [
            f"final_content block {k} ({b.get('type')}) was never streamed ({RECONSTRUCTED})"
            for k, b in enumerate(final if isinstance(final, list) else [])
            if k not in agg and isinstance(b, dict) and _streamable(b)
        ]
        yield outcome(R.STREAM_AGGREGATE, s, "fail" if mism else "pass", label, "; ".join(mism[:3]))


# the sentence TC605's second direction enforces
RECONSTRUCTED = (
    'streaming §11.2: "For any assistant message produced by streaming, the deltas accumulated by the client '
    'equal `message.complete.final_content`"'
)


def _streamable(block: dict[str, Any]) -> bool:
    """A final_content block some delta event carries, with content to carry: text or thinking
    with text (or a signature), a tool_use (it has start and end events)."""
    t = block.get("type")
    if t == "tool_use":
        return True
    if t == "text":
        return bool(block.get("text"))
    if t == "thinking":
        return bool(block.get("text") or block.get("signature"))
    return False


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


@check(R.STREAM_EQUALS_PARSE)
def stream_equals_parse(env: Env) -> Iterator[Outcome]:
    """TC606. Troubleshooting: the reason quotes the contract sentence; tool ids the adapter
    minted (the API issued none) may differ between the two parses if they rename
    consistently, ids the wire issued may not."""
    for s in env.subjects:
        a = s.adapter
        api = wire_api_of(a)
        found = False
        for c in env.own.get(s.name, []):
            mine = list(env.claimed(s, c.interactions))
            plain = [it for it in mine if not it.is_stream and it.status < 400]
            streams = [it for it in mine if it.is_stream and it.status < 400]
            for st in streams:
                # without a record of the adapter's, the recording's: never a stricter comparison
                rec = api or st.wire
                twin = next((p for p in plain if same_request(st.request_body, p.request_body, rec)), None)
                if twin is None:
                    continue
                found = True
                sid = session_for("pair", st.label)
                try:
                    msg = parse_response(a, WireResponse(twin.response_json), ctx_for(sid))
                    events, _ = parse_stream(a, st.response_body, ctx_for(sid))
                except Exception as exc:
                    yield outcome(R.STREAM_EQUALS_PARSE, s, "fail", st.label, crash(exc))
                    continue
                done = next((e for e in events if e.get("type") == "message_complete"), {})
                final = done.get("final_content")
                ids = WireIds.of(rec, [twin.response_json, *(wire_values(st) or [])])
                ren = match_ids(msg["content"], final, fixed_ids(a, sid, ids))
                problems = list(ren.problems)
                parsed = equivalence.normalize_blocks(rec, ren.apply(msg["content"]))
                streamed = equivalence.normalize_blocks(rec, final)
                first = None if problems else equivalence.first_difference(streamed, parsed)
                if first is not None:  # the differing part, whole JSON either side, then why
                    where, got, want = first
                    shown, expected = equivalence.excerpts(got, want)
                    more = len(equivalence.diff(parsed, streamed)) - 1
                    others = f"; {more}{'+' if more >= 19 else ''} more difference(s)" if more > 0 else ""
                    problems.append(
                        f"stream content differs from the parse at {where or '/'}: stream {shown}, parse {expected}"
                        f" ({equivalence.applied_to(rec, streamed, where)}{others}; {STREAM_EQUALS})"
                    )
                # the counts as contract §7.1's TokenUsage reads them (absent: 0); usage of
                # another shape is TC101's / TC103's to judge, compared here as no counts
                usage = token_counts((msg.get("metadata") or {}).get("usage")) or {}
                su = token_counts(done.get("usage")) or {}
                for k in USAGE_FIELDS:
                    if su.get(k, 0) != usage.get(k, 0):
                        problems.append(f"usage.{k}: stream {su.get(k)} != parse {usage.get(k)} ({USAGE_EQUALS})")
                yield outcome(
                    R.STREAM_EQUALS_PARSE,
                    s,
                    "fail" if problems else "pass",
                    st.label,
                    "; ".join(problems[:3]),
                )
        if not found:
            yield outcome(
                R.STREAM_EQUALS_PARSE,
                s,
                "skip",
                "-",
                "no cassette records the same content streamed and not streamed",
            )


def same_request(a: Any, b: Any, api: WireApi | None = None) -> bool:
    """Whether two recorded requests ask for the same content (streamed or not), up to the
    record's declared equivalences."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return False
    drop = ("stream", "stream_options")
    return not equivalence.compare(
        api, {k: v for k, v in a.items() if k not in drop}, {k: v for k, v in b.items() if k not in drop}
    )


def signature_on_final_delta(s: AdapterUnderTest | str, label: str, events: list[StreamEvent]) -> Iterator[Outcome]:
    """TC610 (streaming §5.3 thinking.delta): `signature` is populated only on the final
    delta of its block; an earlier delta carries null (or nothing)."""
    by_block: dict[int, list[int]] = {}
    for i, e in enumerate(events):
        k = e.get("content_block_index")
        if e.get("type") == "thinking_delta" and isinstance(k, int):
            by_block.setdefault(k, []).append(i)
    if not by_block:
        return
    early = [
        f"block {k}: event {i} carries a signature but is not the block's final thinking_delta"
        for k, idx in by_block.items()
        for i in idx[:-1]
        if events[i].get("signature")
    ]
    yield outcome(
        R.STREAM_SIGNATURE_LAST, s, "fail" if early else "pass", label, "; ".join(early[:3]), "supports_thinking"
    )


def wire_values(it: Interaction) -> list[Any] | None:
    """The decoded JSON events of a recorded stream (None when it cannot be decoded). A frame
    in which the provider reports an error (an AWS event-stream `exception` frame) ends them
    as the union member it is in the API's stream shape, `{kind: payload}` (Bedrock's
    ConverseStreamOutput lists `throttlingException` beside `messageStart`), which the
    record's `stream_error` probe reads."""
    out: list[Any] = []
    try:
        for e in json_events(it.framing or Framing.SSE, [it.response_body]):
            out.append(e.value)
    except FramingError:
        return None
    except ProviderStreamError as exc:
        out.append({exc.kind: exc.payload if exc.payload is not None else {"message": exc.message}})
    return out


def literal_fragments(s: AdapterUnderTest, a: Adapter, it: Interaction, events: list[StreamEvent]) -> Iterator[Outcome]:
    """TC609 (contract §5.4, §10.1.7): each tool call's `partial_json` deltas are the
    fragments the provider streamed for it, as the record's `stream_tool_fragments` probe
    reads them from the recorded stream (empty fragments aside: they carry nothing)."""
    order: list[str] = []
    mine: dict[str, list[str]] = {}
    for e in events:
        tid = str(e.get("tool_use_id"))
        if e.get("type") == "tool_use_start":
            order.append(tid)
            mine[tid] = []
        elif e.get("type") == "tool_use_input_delta":
            mine.setdefault(tid, []).append(str(e.get("partial_json", "")))
    api = wire_api_of(a)
    if api is None or (it.wire is not None and it.wire.name != api.name):
        return
    values = wire_values(it)
    wire = api.probes.stream_tool_fragments(values) if values is not None else None
    # judged where either side has tool calls: the recording's calls are the yardstick, so
    # an adapter that streams none of them is held to them, not excused by its own silence
    if not order and not wire:
        return
    if wire is None:
        why = (
            "stream not decodable"
            if values is None
            else f"{api.name}'s record locates no tool-input fragments (the API sends input whole, or no probe)"
        )
        yield outcome(R.STREAM_LITERAL_JSON, s, "skip", it.label, why)
        return
    problems = []
    if len(wire) != len(order):
        problems.append(f"{len(wire)} tool calls streamed on the wire, {len(order)} tool_use_start events")
    for n, (tid, frags) in enumerate(zip(order, wire, strict=False)):
        got, want = [f for f in mine[tid] if f], [f for f in frags if f]
        if got != want:
            first = next(
                (i for i, (x, y) in enumerate(zip(got, want, strict=False)) if x != y), min(len(got), len(want))
            )
            problems.append(
                f"call {n} ({tid}): {len(got)} partial_json fragments, provider sent {len(want)}; first difference "
                f"at fragment {first}: {json.dumps(got[first : first + 1])[:60]} vs {json.dumps(want[first : first + 1])[:60]}"
            )
    yield outcome(
        R.STREAM_LITERAL_JSON,
        s,
        "fail" if problems else "pass",
        it.label,
        "; ".join(problems[:3]),
        "supports_streaming_tool_calls",
    )
