"""TC503: the capabilities TC501/TC502 do not render are probed against what the adapter does
(canonical §7.2 "Declarations MUST be honest", contract §3.4, §4.4).

- `supports_parallel_tool_calls` true: two tool calls of one assistant turn reach the wire
  (the record's id probes; an API whose record says it cannot carry them fails the
  declaration) and read back as one assistant message holding both; a recording whose
  reply holds two or more calls (counted by the record's `response_tool_calls` probe, not
  by the parse) shows it too, its parse holding every one of them. False: the same history renders with
  every call paired with its result, or fails with an `AdapterError` (contract §4.4 "Drop
  cleanly or fail"), never a crash or a half-sent turn.
- `supports_streaming_tool_calls` true: every tool call of a recorded stream arrives as
  `tool_use_start`, at least one `tool_use_input_delta` (unless every fragment the provider
  streamed for it is empty: §5.2.2 "zero or more"), `tool_use_end` (contract §3.4:
  "whether tool_use_input_delta is meaningful"). False: the calls still arrive whole
  (start and end with `final_input`) or the stream fails with an `AdapterError`.
- `supports_prompt_caching` true: a recording whose usage (located by the record's
  probes) shows cache reads or writes is parsed with those counts.
- `max_context_tokens` / `max_output_tokens`: positive integers, the output limit within
  the context window, and consistent with the adapter's own `estimate_input_tokens`: a
  short exchange fits the window, a history of `max_context_tokens + 1` words does not
  (the routing engine and `replay-check` refuse by that comparison; no tokenizer counts
  a space-separated word as less than one token).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...adapters.errors import AdapterError
from ...adapters.protocol import Adapter, Message, StreamEvent, WireResponse, capabilities_of
from ...wire.api import WireApi
from .. import rules as R
from ..capture import capture_warnings
from ..interactions import Interaction
from ..outcome import AdapterUnderTest, Outcome
from ..scripts import Builder, conversation, mark
from .common import (
    Env,
    check,
    crash,
    ctx_for,
    opts,
    outcome,
    parse_response,
    parse_stream,
    read_back,
    render,
    session_for,
    token_counts,
    wire_api_of,
    wire_name,
)
from .streams import wire_values

PARALLEL = "supports_parallel_tool_calls"
STREAM_TOOLS = "supports_streaming_tool_calls"
CACHING = "supports_prompt_caching"
# the overflow probe builds max_context_tokens + 1 words (~6 bytes each): bounded memory
OVERFLOW_PROBE_MAX = 4_194_304
CACHE_KEYS = (("cache_read", "cached_input_tokens"), ("cache_write", "cache_creation_input_tokens"))


def _kind(e: StreamEvent) -> str:
    """An event's type, read in either spelling the specs use (`tool_use_end`, `tool.use_end`)."""
    return str(e.get("type", "")).replace(".", "_")


def _parallel_history(a: Adapter) -> tuple[list[Message], list[dict[str, Any]]]:
    """user, one assistant turn with two tool calls, their two results."""
    msgs, tools = conversation(a.provider, thinking=False, images=False, tools=True)
    keep = [m for m in msgs if m["role"] != "system"]
    # user-1, assistant (text + two calls), two tool results
    return keep[:4], tools


def _parallel_render(s: AdapterUnderTest, a: Adapter) -> Iterator[Outcome]:
    declared = bool(capabilities_of(a).get(PARALLEL))
    api = wire_api_of(a)
    msgs, tools = _parallel_history(a)
    calls = [b["id"] for b in msgs[1]["content"] if b["type"] == "tool_use"]
    try:
        with capture_warnings():
            wire = render(a, msgs, tools, opts(a))
    except AdapterError as exc:
        if declared:
            yield outcome(
                R.CAPS_PROBED, s, "fail", "parallel calls rendered", f"declared true, but {crash(exc)}", PARALLEL
            )
        else:
            yield outcome(R.CAPS_PROBED, s, "pass", "parallel calls declared false (failed cleanly)")
        return
    except Exception as exc:
        yield outcome(R.CAPS_PROBED, s, "fail", "parallel calls rendered", crash(exc), PARALLEL if declared else None)
        return
    if api is None or not isinstance(wire.body, dict):
        why = f"no WireApi record named {a.wire_api!r} locates tool calls"
        yield outcome(R.CAPS_PROBED, s, "skip", "parallel calls rendered", why)
        return
    uses = [str(x.value) for x in api.probes.tool_use_ids(wire.body)]
    results = [str(x.value) for x in api.probes.tool_result_ids(wire.body)]
    if not declared:
        ok = sorted(uses) == sorted(results)
        why = "" if ok else f"calls {uses} and results {results} on the wire do not pair up (a half-sent turn)"
        yield outcome(R.CAPS_PROBED, s, "pass" if ok else "fail", "parallel calls declared false", why)
        return
    problems = []
    if not api.carries.parallel_tool_calls:
        problems.append(f"{api.name} cannot carry parallel tool calls (its record), yet declared true")
    if len(uses) != len(calls) or len(results) != len(calls):
        problems.append(f"{len(uses)} calls and {len(results)} results in {api.name}'s fields, want {len(calls)} each")
    try:
        back = read_back(a, wire, msgs[0]["session_id"])
    except Exception as exc:
        problems.append(f"reading back {crash(exc)}")
        back = None
    if back is not None:
        try:
            turns = [
                [b for b in m["content"] if b.get("type") == "tool_use"]
                for m in back.messages
                if m["role"] == "assistant" and any(b.get("type") == "tool_use" for b in m["content"])
            ]
        except (AttributeError, KeyError, TypeError) as exc:
            problems.append(f"read back malformed messages: {crash(exc)}")
            turns = [[None] * len(calls)]
        if [len(t) for t in turns] != [len(calls)]:
            problems.append(
                f"read back as assistant turns holding {[len(t) for t in turns]} calls, want one with {len(calls)}"
            )
    yield outcome(
        R.CAPS_PROBED, s, "fail" if problems else "pass", "parallel calls rendered", "; ".join(problems), PARALLEL
    )


def _recorded(s: AdapterUnderTest, env: Env) -> Iterator[Outcome]:
    """Recordings that show parallel calls, streamed tool calls or cache accounting."""
    a = s.adapter
    caps = capabilities_of(a)
    shown = {PARALLEL: 0, STREAM_TOOLS: 0, CACHING: 0}
    for it in env.recorded(s):
        api = it.wire
        if it.status >= 400 or api is None or api.name != wire_name(a):
            continue
        sid = session_for("probe", it.label)
        if it.is_stream:
            try:
                events, err = parse_stream(a, it.response_body, ctx_for(sid))
            except Exception:
                continue  # the stream checks report crashes
            values = wire_values(it)
            frags = api.probes.stream_tool_fragments(values) if values is not None else None
            yield from _stream_case(s, a, it.label, events, err, shown, frags)
            usage = api.probes.stream_usage(values) if values is not None else None
            if usage is not None and caps.get(CACHING):
                done = next((e for e in events if _kind(e) == "message_complete"), None)
                yield from _cache_case(s, it.label, usage, done.get("usage") if done else None, shown)
            continue
        if not isinstance(it.response_json, dict):
            continue
        try:
            msg = parse_response(a, WireResponse(it.response_json), ctx_for(sid))
        except Exception:
            continue  # TC101 reports it
        if not isinstance(msg, dict) or not isinstance(msg.get("content"), list):
            continue  # TC101 reports a malformed message
        if caps.get(PARALLEL):
            yield from _parallel_recorded(s, api, it, msg, shown)
        usage = api.probes.response_usage(it.response_json)
        if usage is not None and caps.get(CACHING):
            yield from _cache_case(s, it.label, usage, (msg.get("metadata") or {}).get("usage"), shown)
    for cap, n in shown.items():
        if caps.get(cap) and not n:
            yield outcome(R.CAPS_PROBED, s, "skip", f"{cap} recorded", "no recording shows it")
    if not caps.get(CACHING):
        why = "canonical requests carry no cache marker to drop; usage is TC904's"
        yield outcome(R.CAPS_PROBED, s, "skip", f"{CACHING} declared false", why)


def _parallel_recorded(
    s: AdapterUnderTest, api: WireApi, it: Interaction, msg: dict[str, Any], shown: dict[str, int]
) -> Iterator[Outcome]:
    """A recorded reply holding two or more tool calls, counted in the recording by the
    record's `response_tool_calls` probe (never by the parse under test: an adapter that
    split one call in two would show parallel calls it never parsed): its parse holds every
    one of them as a tool_use block (contract §3.4 `supports_parallel_tool_calls`; canonical
    §7.2 "Declarations MUST be honest")."""
    recorded = len(api.probes.response_tool_calls(it.response_json)) if isinstance(it.response_json, dict) else 0
    if recorded < 2:
        return
    shown[PARALLEL] += 1
    n = sum(1 for b in msg["content"] if isinstance(b, dict) and b.get("type") == "tool_use")
    why = (
        ""
        if n >= recorded
        else f"the recording holds {recorded} tool calls in one reply ({api.name} record), the parse {n} "
        'tool_use blocks (contract §3.4 supports_parallel_tool_calls; canonical §7.2: "Declarations MUST be honest")'
    )
    yield outcome(
        R.CAPS_PROBED, s, "fail" if why else "pass", f"{it.label} ({recorded} calls in one reply)", why, PARALLEL
    )


def _stream_case(
    s: AdapterUnderTest,
    a: Adapter,
    label: str,
    events: list[StreamEvent],
    err: AdapterError | None,
    shown: dict[str, int],
    wire_fragments: list[list[str]] | None = None,
) -> Iterator[Outcome]:
    starts = [e for e in events if _kind(e) == "tool_use_start"]
    if not starts:
        return
    declared = bool(capabilities_of(a).get(STREAM_TOOLS))
    problems = []
    # contract §5.2.2 allows "zero or more tool.use_input_delta": a call whose recorded
    # fragments (the record's probe) are all empty streamed nothing a delta could carry (as
    # TC609, which sets empty fragments aside). Counted, not paired by position: the
    # adapter's calls need not open in the order the wire's first fragments came
    silent_calls = sum(1 for f in wire_fragments if not any(f)) if wire_fragments is not None else 0
    no_deltas: list[Any] = []
    for st in starts:
        k = st.get("content_block_index")
        mine = [e for e in events if e.get("content_block_index") == k]
        ends = [e for e in mine if _kind(e) == "tool_use_end"]
        if not any(_kind(e) == "tool_use_input_delta" for e in mine):
            no_deltas.append(k)
        if err is None and (len(ends) != 1 or not isinstance(ends[0].get("final_input"), dict)):
            problems.append(f"block {k}: {len(ends)} tool_use_end events with a final_input object, want 1")
    if declared and len(no_deltas) > silent_calls:
        blocks = ", ".join(map(str, no_deltas))
        recorded = f"; {silent_calls} recorded call(s) streamed no input" if silent_calls else ""
        problems.insert(
            0,
            f"block(s) {blocks}: no tool_use_input_delta although supports_streaming_tool_calls is true{recorded}",
        )
    if declared:
        shown[STREAM_TOOLS] += 1
    sub = f"{label} (streamed tool calls)"
    yield outcome(
        R.CAPS_PROBED,
        s,
        "fail" if problems else "pass",
        sub,
        "; ".join(problems[:3]),
        STREAM_TOOLS if declared else None,
    )


def _count(v: Any) -> int | None:
    """A token count (absent is 0); None for anything else, so it never equals a count."""
    if v is None:
        return 0
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _cache_case(s: AdapterUnderTest, label: str, recorded: Any, usage: Any, shown: dict[str, int]) -> Iterator[Outcome]:
    """The parsed usage (a message's, or message_complete's) against the recorded cache counts."""
    if not isinstance(recorded, dict) or not (recorded.get("cache_read") or recorded.get("cache_write")):
        return
    shown[CACHING] += 1
    usage = token_counts(usage)  # a mapping or a TokenUsage object; its shape is TC101's / TC103's
    if usage is None:
        yield outcome(
            R.CAPS_PROBED, s, "fail", f"{label} (cache)", "the recording shows caching, the parse no usage", CACHING
        )
        return
    wrong = [
        f"{mine} {usage.get(mine, 0)}, recorded {recorded.get(theirs, 0)}"
        for theirs, mine in CACHE_KEYS
        if _count(usage.get(mine)) != _count(recorded.get(theirs))
    ]
    yield outcome(R.CAPS_PROBED, s, "fail" if wrong else "pass", f"{label} (cache)", "; ".join(wrong), CACHING)


def _limits(s: AdapterUnderTest, a: Adapter) -> Iterator[Outcome]:
    caps = capabilities_of(a)
    ctx_max, out_max = caps.get("max_context_tokens"), caps.get("max_output_tokens")
    ints = all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (ctx_max, out_max))
    if not ints:
        yield outcome(
            R.CAPS_PROBED,
            s,
            "fail",
            "limits",
            f"max_context_tokens={ctx_max!r}, max_output_tokens={out_max!r}: want positive integers",
        )
        return
    assert isinstance(ctx_max, int) and isinstance(out_max, int)
    problems = []
    if out_max > ctx_max:
        problems.append(f"max_output_tokens {out_max} exceeds max_context_tokens {ctx_max}")
    b = Builder()
    b.add("user", [{"type": "text", "text": mark("hello")}])
    big: Any = None
    try:
        small = a.estimate_input_tokens(b.messages, [])
        if ctx_max <= OVERFLOW_PROBE_MAX:
            big_b = Builder()
            big_b.add("user", [{"type": "text", "text": " ".join(["lorem"] * (ctx_max + 1))}])
            big = a.estimate_input_tokens(big_b.messages, [])
    except Exception as exc:
        yield outcome(R.CAPS_PROBED, s, "fail", "limits", f"estimate_input_tokens {crash(exc)}")
        return
    if not (isinstance(small, int) and 0 < small <= ctx_max):
        problems.append(f"a one-line message is estimated at {small!r} tokens, outside 1..max_context_tokens {ctx_max}")
    if ctx_max <= OVERFLOW_PROBE_MAX and not (isinstance(big, int) and big > ctx_max):
        problems.append(f"{ctx_max + 1} words are estimated at {big!r} tokens, within max_context_tokens {ctx_max}")
    yield outcome(R.CAPS_PROBED, s, "fail" if problems else "pass", "limits", "; ".join(problems))
    if ctx_max > OVERFLOW_PROBE_MAX:
        why = f"max_context_tokens {ctx_max} is over {OVERFLOW_PROBE_MAX}: no overflowing history is built that large"
        yield outcome(R.CAPS_PROBED, s, "skip", "limits (overflow)", why)


@check(R.CAPS_PROBED)
def capability_probes(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        if not capabilities_of(a).get("supports_tools"):
            yield outcome(R.CAPS_PROBED, s, "skip", "parallel calls", "supports_tools is false")
        else:
            yield from _parallel_render(s, a)
        yield from _recorded(s, env)
        yield from _limits(s, a)
