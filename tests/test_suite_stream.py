"""Stream checks read the specs as written (issue 16): either event vocabulary, the §6.5
close of a failing stream, literal partial_json, the signature on the final delta, and
cancellation through the optional `cancel(request_id)` hook (TC601, TC608-TC611)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from mutants import MixedEventNames
from third_party.cohere_adapter import CohereAdapter

from conformance.adapters import debug
from conformance.adapters.anthropic import AnthropicAdapter
from conformance.adapters.errors import InvalidRequestError, WireFormatError
from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.protocol import Message, RequestContext, StreamEvent
from conformance.adapters.streams import DOTTED, DOTTED_NAMES, UNDERSCORE, stream_vocabulary
from conformance.core.findings import Selection
from conformance.suite import checks
from conformance.suite.cassettes import load_cassette
from conformance.suite.checks.cancel import NO_HOOK
from conformance.suite.checks.common import ctx_for, parse_stream
from conformance.suite.runner import SuiteConfig, SuiteReport, run
from conformance.wire.openai_chat import OPENAI_CHAT

ROOT = Path(__file__).resolve().parents[1]
STREAM_RULES = (
    "TC103",
    "TC601",
    "TC602",
    "TC603",
    "TC604",
    "TC605",
    "TC606",
    "TC607",
    "TC608",
    "TC609",
    "TC610",
    "TC611",
    "TC903",
)
TO_DOTTED = {v: k for k, v in DOTTED_NAMES.items()}


def _run(adapter: object, rules: Iterable[str], cassettes: str | None = None) -> SuiteReport:
    name = str(adapter.name)  # type: ignore[attr-defined]
    return run(
        SuiteConfig.for_adapter(
            adapter,  # type: ignore[arg-type]
            cassette_dirs=[ROOT / (cassettes or f"cassettes/{name}")],
            selection=Selection(select=tuple(rules)),
            peers=False,
        )
    )


def _statuses(report: SuiteReport, name: str) -> dict[str, str]:
    return {r.rule: r.status for r in report.results if r.adapter == name}


# -- TC608 / TC601: the two vocabularies -------------------------------------------------


class DottedAnthropic(AnthropicAdapter):
    """Follows the adapter contract and streaming protocol names throughout."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "type": TO_DOTTED.get(e["type"], e["type"])}


class DottedOpenAIChat(OpenAIChatAdapter):
    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "type": TO_DOTTED.get(e["type"], e["type"])}


class CanonicalNoStart(AnthropicAdapter):
    """Follows canonical §7.4 to the letter: no start event (it defines none)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return (e for e in super().stream_response(chunks, context) if e["type"] != "message_start")


class DottedNoStart(DottedAnthropic):
    """Streaming §5.3 names without `message.start`, which that vocabulary requires."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return (e for e in super().stream_response(chunks, context) if e["type"] != "message.start")


class ClosesWithoutErrorEvent(AnthropicAdapter):
    """A failing stream: message_complete(stop_reason: error) then the raise, no `error` event."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return (e for e in super().stream_response(chunks, context) if e["type"] != "error")


@pytest.mark.parametrize("cls", [DottedAnthropic, DottedOpenAIChat])
def test_an_adapter_following_the_streaming_protocol_names_passes_every_stream_check(cls):
    report = _run(cls(), STREAM_RULES)
    got = _statuses(report, cls.name)
    assert got.get("TC608") == got.get("TC601") == got.get("TC103") == got.get("TC611") == "pass"
    assert "fail" not in got.values(), [r.reasons for r in report.results if r.status == "fail"]


def test_an_adapter_following_canonical_7_4_needs_no_start_event():
    assert _statuses(_run(CanonicalNoStart(), ("TC601", "TC605", "TC611")), "anthropic") == {
        "TC601": "pass",
        "TC605": "pass",
        "TC611": "pass",
    }


def test_the_streaming_protocol_names_require_message_start():
    result = _run(DottedNoStart(), ("TC601",)).result("TC601", "anthropic")
    assert result is not None and result.status == "fail"
    assert any("no message.start" in r for r in result.reasons)


def test_a_failing_stream_closed_by_message_complete_error_needs_no_error_event():
    """Contract §6.5: message_complete(stop_reason: error), then the raise; TC601 passes."""
    report = _run(ClosesWithoutErrorEvent(), ("TC601",))
    assert report.result("TC601", "anthropic").status == "pass"  # type: ignore[union-attr]


def test_vocabulary_detection_and_mixing():
    under = [{"type": "text_delta"}, {"type": "error"}, {"type": "message_complete"}]
    dotted = [{"type": "message.start"}, {"type": "text.delta"}, {"type": "error"}, {"type": "message.complete"}]
    assert stream_vocabulary(under) == (UNDERSCORE, [])
    assert stream_vocabulary(dotted) == (DOTTED, [])
    assert stream_vocabulary([{"type": "error"}]) == (None, [])
    assert stream_vocabulary([{"type": "message.start"}, {"type": "usage_update"}]) == (DOTTED, [])
    vocab, mixed = stream_vocabulary([{"type": "message.start"}, {"type": "text_delta"}, {"type": "tool.use_end"}])
    assert vocab == DOTTED and mixed == [
        "event 1 (text_delta) in a stream that began with message.start (streaming §5.3)"
    ]


def test_tc601_start_event_rules_per_vocabulary():
    start = {"type": "message_start", "message_id": "m"}
    done = {"type": "message_complete", "message_id": "m", "final_content": []}

    def tc601(events: list[StreamEvent], vocab: str | None) -> list[str]:
        return [o.status for o in checks.stream_invariants("x", "s", events, vocab) if o.rule == "TC601"]

    assert tc601([done], UNDERSCORE) == ["pass"]
    assert tc601([start, done], UNDERSCORE) == ["pass"]
    assert tc601([done], DOTTED) == ["fail"]
    assert tc601([done, start], UNDERSCORE) == ["fail"]
    assert tc601([start, start, done], UNDERSCORE) == ["fail"]


# -- TC609 / TC610 ---------------------------------------------------------------------


def test_partial_json_is_compared_with_the_recorded_fragments():
    """The reference adapter's deltas equal the fragments the record's probe reads."""
    cassette = load_cassette(ROOT / "cassettes/openai-chat/tools.yaml")
    streams = [it for it in cassette.interactions if it.is_stream]
    assert streams
    wire = checks.streams.wire_values(streams[0])
    assert wire is not None
    fragments = OPENAI_CHAT.probes.stream_tool_fragments(wire)
    assert fragments and all(isinstance(f, str) for call in fragments for f in call)
    events, _ = checks.parse_stream(OpenAIChatAdapter(), streams[0].response_text, checks.ctx_for("s"))
    mine = [e["partial_json"] for e in events if e["type"] == "tool_use_input_delta" and e["partial_json"]]
    assert mine == [f for call in fragments for f in call if f]


def test_signature_only_on_the_final_thinking_delta():
    def ev(k: int, sig: str | None) -> StreamEvent:
        return {"type": "thinking_delta", "message_id": "m", "content_block_index": k, "text": "t", "signature": sig}

    def tc610(events: list[StreamEvent]) -> list[str]:
        return [o.status for o in checks.streams.signature_on_final_delta("x", "s", events)]

    assert tc610([ev(0, None), ev(0, None), ev(0, "sig")]) == ["pass"]
    assert tc610([ev(0, "sig"), ev(0, "sig")]) == ["fail"]
    assert tc610([ev(0, None), ev(1, "sig"), ev(0, "sig")]) == ["pass"]
    assert tc610([]) == []


# -- TC611: cancellation ---------------------------------------------------------------


def test_an_adapter_without_a_cancel_hook_is_skipped_with_the_reason():
    report = _run(CohereAdapter(), ("TC611",), "tests/third_party/cassettes/cohere")
    result = report.result("TC611", "cohere-chat")
    assert result is not None and result.status == "skip"
    assert any(NO_HOOK in r for r in result.skip_reasons)


def _tool_stream() -> str:
    cassette = load_cassette(ROOT / "cassettes/anthropic/tools.yaml")
    return next(
        it.response_text for it in cassette.interactions if it.is_stream and "input_json_delta" in it.response_text
    )


def test_cancel_mid_tool_input_closes_the_call_with_empty_input_and_stops():
    """Contract §9.4: a tool call in flight whose partial JSON does not parse ends with {}."""
    a = AnthropicAdapter()
    ctx = replace(checks.ctx_for("sess_cancel"), request_id="req_1")
    text = _tool_stream().encode()
    events = a.stream_response((text[i : i + 16] for i in range(0, len(text), 16)), ctx)
    seen: list[StreamEvent] = []
    for e in events:
        seen.append(e)
        if e["type"] == "tool_use_input_delta" and e["partial_json"].strip():
            break
    assert a.cancel("req_1") is True
    assert a.cancel("req_1") is True  # idempotent while the stream is in flight
    rest = list(events)
    assert [e["type"] for e in rest] == ["tool_use_end", "message_complete"]
    assert rest[0]["final_input"] == {} and rest[0]["tool_use_id"] == seen[-1]["tool_use_id"]
    done = rest[-1]
    assert done["stop_reason"] == "cancelled"
    tool = next(b for b in done["final_content"] if b["type"] == "tool_use")
    assert tool["input"] == {} and tool["id"] == seen[-1]["tool_use_id"]
    assert a.cancel("req_1") is False  # completed
    assert a.cancel("req_unknown") is False


def test_a_stream_without_request_id_or_never_cancelled_is_unchanged():
    a = AnthropicAdapter()
    text = _tool_stream()
    plain = list(a.stream_response([text], checks.ctx_for("s", None)))
    ctx = replace(checks.ctx_for("s"), request_id="req_2", message_id=plain[0]["message_id"])
    with_id = list(a.stream_response([text], ctx))
    assert with_id == plain
    assert plain[-1]["stop_reason"] != "cancelled"


# -- contract §4.4: a declared-false capability may be dropped cleanly or fail --------------


class ThinkingRejectedCleanly(OpenAIChatAdapter):
    """Declares thinking false and refuses it with the documented error instead of dropping it."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        if block_type in ("thinking", "redacted_thinking"):
            raise InvalidRequestError(f"{self.name} cannot carry {block_type}: {reason}")
        super().drop(message, index, block_type, reason)


def test_a_declared_false_capability_that_fails_cleanly_is_not_a_crash():
    report = _run(ThinkingRejectedCleanly(), ("TC501", "TC502", "TC104"))
    got = _statuses(report, "openai-chat")
    assert got == {"TC501": "pass", "TC502": "pass", "TC104": "pass"}, [r.reasons for r in report.results]
    tc502 = report.result("TC502", "openai-chat")
    assert tc502 is not None and tc502.capabilities.get("supports_thinking")


def test_wire_parse_reads_either_vocabulary_and_refuses_a_mix():
    text = _tool_stream()
    plain = debug.parse(AnthropicAdapter(), text, stream=True)
    dotted = debug.parse(DottedAnthropic(), text, stream=True)
    no_start = debug.parse(CanonicalNoStart(), text, stream=True)

    def content(parsed: debug.Parsed) -> list[dict[str, object]]:
        return [{k: v for k, v in b.items() if k != "id"} for b in parsed.message["content"]]  # fresh tool ids

    assert content(dotted) == content(plain) == content(no_start)
    assert dotted.message["id"] == dotted.events[-1]["message_id"]
    with pytest.raises(WireFormatError, match="two vocabularies"):
        debug.parse(MixedEventNames(), text, stream=True)


class CancelRaises(AnthropicAdapter):
    def cancel(self, request_id: str) -> bool:
        raise RuntimeError("boom")


def test_a_cancel_hook_that_raises_fails_tc611_and_never_crashes_the_suite():
    result = _run(CancelRaises(), ("TC611",)).result("TC611", "anthropic")
    assert result is not None and result.status == "fail"
    assert all("crashed: RuntimeError: boom" in r for r in result.reasons)


class CancelNeverStops(AnthropicAdapter):
    """After cancel, the iterator never ends: text deltas forever (contract §5.3: it must terminate)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "message_complete" and e.get("stop_reason") == "cancelled":
                while True:
                    yield {"type": "text_delta", "message_id": e["message_id"], "content_block_index": 0, "text": "."}
            yield e


class CancelAnswersFalse(AnthropicAdapter):
    """Cancels, but answers False for a stream in flight (contract §3.1: True when it cancelled)."""

    def cancel(self, request_id: str) -> bool:
        super().cancel(request_id)
        return False


class CancelAnswersTrueWhenDone(AnthropicAdapter):
    """Answers True for a stream that already completed (contract §3.1: False when completed)."""

    def cancel(self, request_id: str) -> bool:
        super().cancel(request_id)
        return True


def test_tc611_fails_a_stream_that_does_not_terminate_after_cancel():
    result = _run(CancelNeverStops(), ("TC611",)).result("TC611", "anthropic")
    assert result is not None and result.status == "fail"
    assert any("must terminate" in r for r in result.reasons), result.reasons


def test_tc611_holds_cancel_to_its_answers():
    """Contract §3.1: `cancel` returns True when it cancelled a stream in flight, False once
    the stream completed (idempotent); the suite's TC611 checks both answers."""
    result = _run(CancelAnswersFalse(), ("TC611",)).result("TC611", "anthropic")
    assert result is not None and result.status == "fail"
    assert any("returned False for a stream in flight" in r for r in result.reasons), result.reasons
    result = _run(CancelAnswersTrueWhenDone(), ("TC611",)).result("TC611", "anthropic")
    assert result is not None and result.status == "fail"
    assert any("after the stream ended returned True" in r for r in result.reasons), result.reasons
    assert _statuses(_run(AnthropicAdapter(), ("TC611",)), "anthropic") == {"TC611": "pass"}


def _edited_stream(edit: Callable[[StreamEvent], StreamEvent]) -> AnthropicAdapter:
    class EditsEvents(AnthropicAdapter):
        def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
            for e in super().stream_response(chunks, context):
                yield edit(e)

    return EditsEvents()


def _on(kind: str, **changes: object) -> Callable[[StreamEvent], StreamEvent]:
    def edit(e: StreamEvent) -> StreamEvent:
        if e["type"] != kind:
            return e
        out = {**e, **changes}
        return {k: v for k, v in out.items() if v is not DROP}  # type: ignore[return-value]

    return edit


DROP = object()


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (_on("message_complete", stop_reason="finished"), "stop_reason outside the six"),
        (_on("message_complete", stop_reason=None), "no stop_reason"),
        (_on("message_complete", usage={"input_tokens": "8", "output_tokens": 1}), "usage counts as text"),
        (_on("message_complete", usage=[8, 1]), "usage neither token counts nor a Usage"),
        (_on("tool_use_start", tool_name=DROP), "tool_use_start without its tool_name"),
        (_on("tool_use_start", tool_use_id=DROP), "tool_use_start without its tool id"),
        (_on("tool_use_end", final_input="{}"), "final_input as text"),
        (_on("text_delta", text=5), "a text delta that is no text"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_tc103_fails_each_event_field_streaming_5_3_types(edit: Callable[[StreamEvent], StreamEvent], why: str) -> None:
    """Streaming §5.3 (with contract §3.3's six stop reasons and §7.1's token counts): each
    event carries its fields with their types; TC103 fails a stream whose one field is off."""
    a = _edited_stream(edit)
    result = _run(a, ("TC103",)).result("TC103", "anthropic")
    assert result is not None and result.status == "fail", (why, result)
    assert _statuses(_run(_edited_stream(lambda e: e), ("TC103",)), "anthropic") == {"TC103": "pass"}


def test_cancel_before_the_first_event_closes_an_empty_message():
    a = OpenAIChatAdapter()
    ctx = replace(checks.ctx_for("s"), request_id="req_early", message_id="01JZ0000000000000000000009")
    events = a.stream_response([_tool_stream()], ctx)
    assert a.cancel("req_early") is True
    assert list(events) == [
        {
            "type": "message_complete",
            "message_id": "01JZ0000000000000000000009",
            "stop_reason": "cancelled",
            "final_content": [],
            "usage": None,
        }
    ]


def test_cancel_while_the_adapter_waits_for_bytes_then_the_harness_aborts():
    """The harness calls cancel while the adapter is blocked reading, then aborts the HTTP
    stream (the chunk source ends early): the cut stream is not reported as a failure."""
    a = AnthropicAdapter()
    text = _tool_stream().encode()
    cut = text.index(b"input_json_delta") + 40  # inside the first tool-input delta's event

    def chunks() -> Iterator[bytes]:
        yield text[:cut]
        assert a.cancel("req_wait") is True  # arrives while the adapter asks for more bytes
        # ...and the harness aborts: no more bytes

    ctx = replace(checks.ctx_for("s"), request_id="req_wait")
    events = list(a.stream_response(chunks(), ctx))
    assert events[-1]["type"] == "message_complete" and events[-1]["stop_reason"] == "cancelled"
    assert [e["type"] for e in events].count("tool_use_start") == [e["type"] for e in events].count("tool_use_end")


class ErrorEventOfItsOwnShape(AnthropicAdapter):
    """Sends canonical §7.4's `error` event with fields of its own choosing: §7.4 names the
    event and gives it no payload ("type-specific payload fields"; streaming §5.3 has none)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "error":
                yield {"type": "error", "error": {"kind": e.get("error_class"), "text": e.get("message")}}
            else:
                yield e


class ErrorEventOfNoContractClass(AnthropicAdapter):
    """An `error` event whose `error_class` is not one of contract §6.1's classes."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "error_class": "timeout"} if e["type"] == "error" else e


def test_an_error_event_needs_only_its_type_and_a_class_it_names_is_a_contract_class():
    """Failed before: stream-event.json required `message_id`, `error_class` and `message`
    on an `error` event and forbade other fields, which no spec sentence asks."""
    report = _run(ErrorEventOfItsOwnShape(), ("TC103",))
    cases = report.result("TC103", "anthropic")
    assert cases is not None and cases.status == "pass", cases
    sent = [
        e
        for it in load_cassette(ROOT / "cassettes/anthropic/errors.yaml").interactions
        if it.is_stream
        for e in parse_stream(ErrorEventOfItsOwnShape(), it.response_body, ctx_for("s"))[0]
        if e.get("type") == "error"
    ]
    assert sent, "the cassette must make the adapter send an error event"
    wrong = _run(ErrorEventOfNoContractClass(), ("TC103",)).result("TC103", "anthropic")
    assert wrong is not None and wrong.status == "fail"
    assert any("timeout" in r for r in wrong.reasons), wrong.reasons


class UsageWithAnotherCount(AnthropicAdapter):
    """Reports one more count beside TokenUsage's four in message_complete.usage."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "message_complete" and isinstance(e.get("usage"), dict):
                yield {**e, "usage": {**e["usage"], "reasoning_tokens": 0}}
            else:
                yield e


class UsageCountAsText(AnthropicAdapter):
    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "message_complete" and isinstance(e.get("usage"), dict):
                yield {**e, "usage": {**e["usage"], "input_tokens": str(e["usage"]["input_tokens"])}}
            else:
                yield e


def test_a_usage_count_beside_token_usages_four_is_tolerated_a_count_as_text_is_not():
    """Failed before: token-usage.json forbade any other key, while a stored message's
    Usage tolerates them (canonical §10.2, §10.3) and no contract sentence forbids one."""
    ok = _run(UsageWithAnotherCount(), ("TC103",)).result("TC103", "anthropic")
    assert ok is not None and ok.status == "pass", ok
    bad = _run(UsageCountAsText(), ("TC103",)).result("TC103", "anthropic")
    assert bad is not None and bad.status == "fail"


# Anthropic's event flow (Streaming Messages): each content block opens with
# content_block_start, then its deltas, then content_block_stop. A recording whose deltas
# reach a block no start opened departs from it; a reader keeping to the docs ends the stream
# in error (contract §6.5), so TC903 and TC904 skip naming the departure, never fail.
_UNOPENED_BLOCK = [
    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
     "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 9, "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Checking."}},
    {"type": "content_block_stop", "index": 0},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
    {"type": "content_block_stop", "index": 1},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 7}},
    {"type": "message_stop"},
]  # fmt: skip


def test_a_recorded_stream_about_a_block_never_opened_is_a_named_skip(tmp_path):
    import json

    import yaml

    from conformance.core.findings import Selection
    from conformance.suite.runner import SuiteConfig, run
    from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES

    assert "index 1" in (ANTHROPIC_MESSAGES.probes.stream_departure(_UNOPENED_BLOCK) or "")
    assert ANTHROPIC_MESSAGES.probes.stream_departure(_UNOPENED_BLOCK[:4] + _UNOPENED_BLOCK[6:]) is None
    sse = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in _UNOPENED_BLOCK)
    request = {"model": "claude-x", "max_tokens": 64, "stream": True, "messages": [{"role": "user", "content": "Hi"}]}
    cassette = {"version": 1, "interactions": [{
        "request": {"method": "POST", "uri": "https://api.anthropic.com/v1/messages", "body": json.dumps(request),
                    "headers": {"content-type": ["application/json"]}},
        "response": {"status": {"code": 200, "message": "OK"},
                     "headers": {"content-type": ["text/event-stream"]}, "body": {"string": sse}}}]}  # fmt: skip
    (tmp_path / "unopened.yaml").write_text(yaml.safe_dump(cassette), encoding="utf-8")
    report = run(
        SuiteConfig.for_refs(
            ["anthropic"], samples=tmp_path, peers=False, selection=Selection(select=("TC800", "TC903", "TC904"))
        )
    )
    cases = {o.rule: o for o in report.outcomes if o.subject == "unopened.yaml#0"}
    assert cases["TC800"].status == "pass"
    for rule in ("TC903", "TC904"):
        assert cases[rule].status == "skip" and "content_block_start" in cases[rule].message, cases[rule]
