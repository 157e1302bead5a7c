"""TC611: cancellation mid-stream (contract §3.1 `cancel`, §5.3, §9.4, §10.1.12; streaming §6.2.1).

`cancel(request_id)` is optional in this project's adapter protocol (adapters own no
transport, so the contract's abort is the harness's; what is left to observe is what the
stream iterator does after the cancel). Each recorded stream of the adapter is replayed in
small chunks with a `request_id`; after the first tool-input delta (the contract's §9.4
case: a tool call in flight), or else the first text delta, the suite calls `cancel` and
reads on. What must follow: one `tool_use_end` per tool call still open, whose
`final_input` is what its deltas spell as a JSON object, else `{}` (contract §5.3.3); then
one `message_complete` with `stop_reason: cancelled` whose content is what the deltas built
(§5.3.2); then the end of iteration, no error, no hang. The message a harness stores from
it validates with `status: cancelled` (§5.1.5), and `cancel` answers False once the stream
is over (idempotent, §3.1).

A block no event carries (redacted thinking: Anthropic's `redacted_thinking`, Bedrock's
`redactedContent`, OpenRouter's `reasoning.encrypted`; it is only in `message_complete`'s
`final_content`) is part of what was built once the stream has read past it: a stream that
holds one is cancelled a second time, right after the first event of a later block, and the
`final_content` after every cancel keeps each such block read before it, as the whole
stream's `final_content` has it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from ...adapters.errors import AdapterError
from ...adapters.protocol import Adapter, CancellableAdapter, StreamEvent, capabilities_of
from ...adapters.streams import parse_json_object, to_canonical_names
from .. import rules as R
from ..outcome import AdapterUnderTest, Outcome
from .common import (
    Env,
    check,
    crash,
    ctx_for,
    errors_of,
    message_from_events,
    outcome,
    parse_stream,
    session_for,
    wire_name,
)
from .streams import aggregate

CHUNK = 16  # bytes per chunk: several reads per provider event, as a socket delivers them
NO_HOOK = (
    "adapter has no cancel(request_id) hook (adapter contract §3.1), so cancellation "
    "(contract §5.3, streaming §6.2.1) cannot be observed"
)


def _silent(events: list[StreamEvent]) -> dict[int, Any]:
    """The blocks of the whole stream's `final_content` that no event before it carries (by
    `content_block_index`): redacted thinking, which has no delta event."""
    done = events[-1] if events and events[-1].get("type") == "message_complete" else {}
    final = done.get("final_content")
    carried = {e.get("content_block_index") for e in events[:-1]}
    blocks = final if isinstance(final, list) else []
    return {k: b for k, b in enumerate(blocks) if isinstance(b, dict) and k not in carried}


def _cut_after_silent(events: list[StreamEvent], silent: dict[int, Any]) -> int | None:
    """How many events to read to be past the first block no event carries: through the
    first event of a block after it (before the last event)."""
    if not silent:
        return None
    first = min(silent)
    for i, e in enumerate(events):
        k = e.get("content_block_index")
        if isinstance(k, int) and k > first and i + 1 < len(events) - 1:
            return i + 1
    return None


def _read_past(before: list[StreamEvent], silent: dict[int, Any]) -> dict[int, Any]:
    """The silent blocks the events before the cancel read past (a later block began)."""
    seen = [k for e in before if isinstance(k := e.get("content_block_index"), int)]
    last = max(seen, default=-1)
    return {k: b for k, b in silent.items() if k < last}


def _cut(events: list[StreamEvent]) -> int | None:
    """How many events to read before cancelling: through the first tool-input delta (a
    tool call in flight), else through the first text or thinking delta."""
    for kinds in (("tool_use_input_delta",), ("text_delta", "thinking_delta")):
        for i, e in enumerate(events):
            if e.get("type") in kinds and i + 1 < len(events) - 1:
                return i + 1
    return None


@check(R.STREAM_CANCEL)
def cancellation(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        if not capabilities_of(a).get("supports_streaming"):
            continue
        if not isinstance(a, CancellableAdapter):
            yield outcome(R.STREAM_CANCEL, s, "skip", "-", NO_HOOK)
            continue
        cancel = a.cancel
        n = 0
        for it in env.recorded(s):
            if not it.is_stream or it.status >= 400 or (it.wire is not None and it.wire.name != wire_name(a)):
                continue
            sid = session_for("cancel", it.label)
            try:
                full, err = parse_stream(a, it.response_body, ctx_for(sid))
            except Exception:
                continue  # TC601 reports streams the adapter cannot read
            if err is not None:
                continue
            silent = _silent(full)
            cut, past = _cut(full), _cut_after_silent(full, silent)
            cuts = [(cut, it.label)] if cut is not None else []
            if past is not None and past != cut:
                cuts.append((past, f"{it.label} (after {silent[min(silent)].get('type')})"))
            for at, label in cuts:
                n += 1
                yield _case(s, a, cancel, label, it.response_body, sid, at, n, silent)
        if not n:
            yield outcome(
                R.STREAM_CANCEL, s, "skip", "-", "no recorded stream with a delta before its end to cancel at"
            )


def _case(
    s: AdapterUnderTest,
    a: Adapter,
    cancel: Callable[[str], Any],
    label: str,
    raw: bytes,
    sid: str,
    cut: int,
    n: int,
    silent: dict[int, Any],
) -> Outcome:
    rid = f"req_conform_cancel_{n}"
    ctx = replace(ctx_for(sid), request_id=rid)
    try:
        stream = iter(a.stream_response((raw[i : i + CHUNK] for i in range(0, len(raw), CHUNK)), ctx))
        before = [next(stream) for _ in range(cut)]
    except Exception as exc:
        return outcome(R.STREAM_CANCEL, s, "fail", label, crash(exc))
    try:
        answered = cancel(rid)
    except Exception as exc:
        return outcome(R.STREAM_CANCEL, s, "fail", label, f"cancel({rid!r}) {crash(exc)}")
    after: list[StreamEvent] = []
    limit = len(before) + 64
    try:
        for ev in stream:
            after.append(ev)
            if len(after) > limit:
                return outcome(
                    R.STREAM_CANCEL, s, "fail", label, f"still yielding {limit} events after cancel (must terminate)"
                )
    except AdapterError as exc:
        return outcome(R.STREAM_CANCEL, s, "fail", label, f"raised {type(exc).__name__} after cancel: {exc}")
    except Exception as exc:
        return outcome(R.STREAM_CANCEL, s, "fail", label, crash(exc))
    named = to_canonical_names(before)
    problems = _judge(named, to_canonical_names(after), _read_past(named, silent))
    if answered is not True:
        problems.insert(0, f"cancel({rid!r}) returned {answered!r} for a stream in flight (want True)")
    try:
        again = cancel(rid)
    except Exception as exc:
        again = crash(exc)
    if again is not False:
        problems.append(f"cancel after the stream ended returned {again!r}, not False (contract §3.1)")
    msg = message_from_events(a, before + after, ctx)
    if msg is not None and not problems:
        if (msg.get("metadata") or {}).get("status") != "cancelled":
            problems.append("the stored message is not status: cancelled")
        problems += errors_of([msg])[:2]
    return outcome(
        R.STREAM_CANCEL, s, "fail" if problems else "pass", label, "; ".join(problems[:3]), "supports_streaming"
    )


def _judge(before: list[StreamEvent], after: list[StreamEvent], kept: dict[int, Any] | None = None) -> list[str]:
    """What the events after the cancel must be, given the events before it and the blocks
    no event carries that were read before it (`kept`, as the whole stream ends with them)."""
    open_tools: dict[str, str] = {}
    for e in before:
        tid = str(e.get("tool_use_id"))
        if e.get("type") == "tool_use_start":
            open_tools[tid] = ""
        elif e.get("type") == "tool_use_input_delta" and tid in open_tools:
            open_tools[tid] += str(e.get("partial_json", ""))
        elif e.get("type") == "tool_use_end":
            open_tools.pop(tid, None)
    if not after or after[-1].get("type") != "message_complete":
        got = after[-1].get("type") if after else "nothing"
        return [f"after cancel the last event is {got}, not message_complete (contract §5.3.2)"]
    problems: list[str] = []
    done = after[-1]
    if done.get("stop_reason") != "cancelled":
        problems.append(f"message_complete.stop_reason is {done.get('stop_reason')!r}, not 'cancelled'")
    ends: dict[str, int] = {}
    for e in after[:-1]:
        if e.get("type") != "tool_use_end":
            problems.append(f"{e.get('type')} after cancel (only tool_use_end and message_complete may follow)")
            continue
        tid = str(e.get("tool_use_id"))
        ends[tid] = ends.get(tid, 0) + 1
        if tid not in open_tools:
            problems.append(f"tool_use_end for {tid}, which was not in flight")
            continue
        want = parse_json_object(open_tools[tid]) or {}
        if e.get("final_input") != want:
            problems.append(
                f"{tid}: final_input {e.get('final_input')!r} after cancel, want {want!r} "
                "(what its deltas spell, else {})"
            )
    for tid in open_tools:
        if ends.get(tid) != 1:
            problems.append(f"in-flight tool call {tid} got {ends.get(tid, 0)} tool_use_end events, want 1")
    final = done.get("final_content")
    if not isinstance(final, list):
        return [*problems, "message_complete.final_content is not a list"]
    for k, blk in aggregate(before + after).items():
        got = final[k] if k < len(final) and isinstance(final[k], dict) else {}
        wrong = [key for key, val in blk.items() if got.get(key) != val]
        if wrong:
            problems.append(f"final_content[{k}] {', '.join(wrong)} differ from what was streamed before the cancel")
    for k, blk in (kept or {}).items():
        got = final[k] if k < len(final) else None
        if got != blk:
            what = "is missing" if got is None else f"is {str(got)[:60]}"
            problems.append(
                f"final_content[{k}] {what}: the {blk.get('type')} block read before the cancel, which no event "
                "carries, must stay (contract §5.3.2: the content built so far)"
            )
    return problems
