"""The opt-in OpenRouter variant of the openai-chat adapter: reasoning / reasoning_details.

Expectations are written by hand from cassettes/openrouter (themselves written from
OpenRouter's documented shapes, "Reasoning Tokens"), never copied from the adapter.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from conformance.adapters.anthropic import AnthropicAdapter
from conformance.adapters.base import AdapterOptions, RequestContext, ServerError, WireResponse, message_from_stream
from conformance.adapters.openrouter import OpenRouterChatAdapter
from conformance.core.findings import Selection, Severity
from conformance.strategies import blocks_for, conversations
from conformance.suite import round_trip
from conformance.suite.cassettes import Interaction, load_cassette
from conformance.suite.runner import SuiteConfig, run
from conformance.suite.scripts import Builder

ROOT = Path(__file__).resolve().parents[1]
CASSETTES = ROOT / "cassettes" / "openrouter"
OPTS = AdapterOptions(model="openrouter:anthropic/claude-sonnet-4")
SIG_PREFIX = "ErUBCkYIBRgCIkCo4wbs"
ENC_PREFIX = "gAAAAABoZ2Uj"


def its(name: str) -> list[Interaction]:
    cas = load_cassette(CASSETTES / name, name)
    assert cas.error is None, cas.error
    return cas.interactions


def ctx() -> RequestContext:
    return RequestContext(session_id="sess_openrouter", message_id="01KR3QB1DS0W3GE1R70W3GE1R7")


def stream(a: OpenRouterChatAdapter, it: Interaction) -> list[dict[str, Any]]:
    raw = it.response_text.encode()
    return list(a.stream_response([raw[i : i + 11] for i in range(0, len(raw), 11)], ctx()))


def test_reasoning_text_with_signature_becomes_signed_thinking_before_the_call() -> None:
    m = OpenRouterChatAdapter().from_wire_response(WireResponse(its("reasoning.yaml")[0].response_json), ctx())
    thinking, call = m["content"]
    assert thinking["type"] == "thinking"
    assert (
        thinking["text"] == "The user wants the weather in Boston. I should call get_weather with location Boston, MA."
    )
    assert thinking["signature"].startswith(SIG_PREFIX)
    assert call["type"] == "tool_use" and call["name"] == "get_weather" and call["input"] == {"location": "Boston, MA"}
    assert m["metadata"]["provider"] == "openrouter"
    # the detail's format and index are kept for the way back; the reasoning fields are not
    # duplicated in the verbatim message extras
    raw = m["metadata"]["provider_raw"]["openrouter"]
    assert raw["reasoning"]["details"] == [{"type": "reasoning.text", "format": "anthropic-claude-v1", "index": 0}]
    assert "reasoning" not in raw.get("message", {}) and "reasoning_details" not in raw.get("message", {})


def test_summary_and_encrypted_become_thinking_and_redacted_thinking() -> None:
    m = OpenRouterChatAdapter().from_wire_response(WireResponse(its("reasoning.yaml")[2].response_json), ctx())
    summary, redacted, text = m["content"]
    assert summary == {
        "type": "thinking",
        "text": "**Reporting the weather**\n\nThe tool says 22 degrees and sunny; I will say so.",
        "signature": None,
    }
    assert redacted["type"] == "redacted_thinking" and redacted["data"].startswith(ENC_PREFIX)
    assert text == {"type": "text", "text": "It is sunny in Boston today, 22 °C."}


def test_plain_reasoning_string_is_one_unsigned_thinking_block_and_goes_back_as_a_string() -> None:
    a = OpenRouterChatAdapter()
    m = a.from_wire_response(WireResponse(its("reasoning.yaml")[4].response_json), ctx())
    assert m["content"] == [
        {"type": "thinking", "text": "2 plus 2 is 4.", "signature": None},
        {"type": "text", "text": "4"},
    ]
    b = Builder(session_id="sess_openrouter")
    b.add("user", [{"type": "text", "text": "What is 2+2?"}])
    wire = a.to_wire([*b.messages, m], [], OPTS).body["messages"][-1]
    assert wire == {"role": "assistant", "content": "4", "reasoning": "2 plus 2 is 4."}


def test_reasoning_details_go_back_unmodified_in_the_next_request() -> None:
    """OpenRouter's "Preserving reasoning blocks": the recorded second request carries the
    first answer's reasoning_details as they came; reading it and rendering it back
    gives the same entries (type, text, signature, format, index)."""
    a = OpenRouterChatAdapter()
    recorded = its("reasoning.yaml")[2].request_body
    parsed = a.from_wire_request(recorded, session_id="sess_rt")
    body = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    assert body["messages"][1]["reasoning_details"] == recorded["messages"][1]["reasoning_details"]
    assert "reasoning" not in body["messages"][1]


def test_foreign_thinking_is_dropped_with_the_warn_line(caplog: pytest.LogCaptureFixture) -> None:
    anthropic_turn = AnthropicAdapter().from_wire_response(
        WireResponse(
            {
                "id": "msg_01",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [
                    {"type": "thinking", "thinking": "Let me think.", "signature": "EqQBCgIYAhIM1gbcDa9GJwZA"},
                    {"type": "text", "text": "Hi."},
                ],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        ),
        ctx(),
    )
    b = Builder(session_id="sess_openrouter")
    b.add("user", [{"type": "text", "text": "Hello"}])
    with caplog.at_level(logging.WARNING):
        wire = OpenRouterChatAdapter().to_wire([*b.messages, anthropic_turn], [], OPTS).body["messages"][-1]
    assert wire == {"role": "assistant", "content": "Hi."}
    drops = [r for r in caplog.records if getattr(r, "block_type", None) == "thinking"]
    assert len(drops) == 1 and "issued by anthropic" in drops[0].getMessage()


def test_stream_puts_the_signature_on_the_thinking_blocks_final_delta_only() -> None:
    a = OpenRouterChatAdapter()
    events = stream(a, its("reasoning.yaml")[1])
    thinking = [e for e in events if e["type"] == "thinking_delta"]
    assert "".join(e["text"] for e in thinking) == (
        "The user wants the weather in Boston. I should call get_weather with location Boston, MA."
    )
    assert [e["signature"] is not None for e in thinking] == [False] * (len(thinking) - 1) + [True]
    assert thinking[-1]["text"] == "" and thinking[-1]["signature"].startswith(SIG_PREFIX)
    # the thinking block closes before the tool call starts
    order = [e["type"] for e in events]
    assert order.index("tool_use_start") > max(i for i, t in enumerate(order) if t == "thinking_delta")


def test_stream_aggregate_equals_the_parse_for_summary_and_encrypted() -> None:
    a = OpenRouterChatAdapter()
    streamed = message_from_stream(iter(stream(a, its("reasoning.yaml")[3])), ctx(), a)
    parsed = a.from_wire_response(WireResponse(its("reasoning.yaml")[2].response_json), ctx())
    assert streamed["content"] == parsed["content"]
    assert [b["type"] for b in streamed["content"]] == ["thinking", "redacted_thinking", "text"]


@pytest.mark.parametrize(
    ("index", "text", "status", "words"),
    [
        # the streaming page's example: code `server_error`, the stream began with a 200
        (0, "Start with a deep foundation of", None, "Provider disconnected unexpectedly"),
        # error.code is the HTTP status the error stands for ("Errors": ErrorResponse)
        (1, "The tallest", 502, "Network connection lost."),
    ],
)
def test_a_unified_mid_stream_error_chunk_raises_a_server_error_after_the_text(
    index: int, text: str, status: int | None, words: str
) -> None:
    """stream_errors.yaml (OpenRouter's "Handling Errors During Streaming": `error` beside a
    choice whose finish_reason is `error`): the text streamed before it is kept in a
    message_complete with stop_reason error, then a retryable ServerError carrying the
    provider's message (contract §6.5; the chunk has `choices`, so the openai-chat reading
    of an error event, one without them, read it as a stream cut before [DONE])."""
    a = OpenRouterChatAdapter()
    raw = its("stream_errors.yaml")[index].response_text.encode()
    events: list[dict[str, Any]] = []
    with pytest.raises(ServerError) as caught:
        for e in a.stream_response([raw[i : i + 11] for i in range(0, len(raw), 11)], ctx()):
            events.append(e)
    assert caught.value.retryable is True
    if status is not None:
        assert caught.value.provider_status == status
    assert words in caught.value.provider_message
    done = events[-1]
    assert done["type"] == "message_complete" and done["stop_reason"] == "error"
    assert done["final_content"] == [{"type": "text", "text": text}]


def test_conform_passes_on_its_own_cassettes() -> None:
    report = run(SuiteConfig.for_adapter(OpenRouterChatAdapter(), cassette_dirs=[CASSETTES], samples=None))
    failed = [(r.rule, r.reasons[:2]) for r in report.results if r.status == "fail"]
    assert failed == []
    thinking = report.capabilities.get("openrouter", {}).get("supports_thinking", 0)
    assert thinking > 0, "thinking was exercised"


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(conversations(blocks=blocks_for(OpenRouterChatAdapter.capabilities), max_turns=3))
def test_conversations_survive_the_round_trip(session: list[dict[str, Any]]) -> None:
    errors = [f for f in round_trip(OpenRouterChatAdapter(), session) if f.severity == Severity.ERROR]
    assert not errors, [f.format() for f in errors]


# -- planted defects: each variant fails the suite rule aimed at it ------------------------


class ReasoningIgnored(OpenRouterChatAdapter):
    """Reads messages as plain Chat Completions: reasoning_details never become blocks."""

    def content_from_wire(self, session_id: str, msg: Any) -> Any:
        return super(OpenRouterChatAdapter, self).content_from_wire(session_id, msg)


class SignatureNotSentBack(OpenRouterChatAdapter):
    """Sends reasoning.text entries back without their signature."""

    def assistant_to_wire(self, message: Any) -> Any:
        out = super().assistant_to_wire(message)
        for m in out:
            for d in m.get("reasoning_details") or []:
                d.pop("signature", None)
        return out


class EncryptedReadAsText(OpenRouterChatAdapter):
    """Reads reasoning.encrypted data as thinking text (it then goes back as reasoning.text)."""

    def content_from_wire(self, session_id: str, msg: Any) -> Any:
        out = super().content_from_wire(session_id, msg)
        return [
            {"type": "thinking", "text": b["data"], "signature": None} if b["type"] == "redacted_thinking" else b
            for b in out
        ]


class StreamSignatureLost(OpenRouterChatAdapter):
    """Streams never carry the signature (the streamed message cannot go back)."""

    def stream_response(self, chunks: Any, context: RequestContext) -> Any:
        for e in super().stream_response(chunks, context):
            if e["type"] == "thinking_delta":
                e = {**e, "signature": None}
            elif e["type"] == "message_complete":
                e = {
                    **e,
                    "final_content": [
                        {**b, "signature": None} if b["type"] == "thinking" else b for b in e["final_content"]
                    ],
                }
            yield e


class ForeignReasoningSent(OpenRouterChatAdapter):
    """Sends any provider's thinking as reasoning_details (another issuer's signature leaks)."""

    def assistant_to_wire(self, message: Any) -> Any:
        own = {**message, "metadata": {**(message.get("metadata") or {}), "provider": "openrouter"}}
        return super().assistant_to_wire(own)


SUITE_KILLS: dict[type[OpenRouterChatAdapter], str] = {
    ReasoningIgnored: "TC802",
    SignatureNotSentBack: "TC802",
    EncryptedReadAsText: "TC802",
    StreamSignatureLost: "TC606",
    ForeignReasoningSent: "TC405",
}


@pytest.mark.parametrize(("cls", "rule"), list(SUITE_KILLS.items()), ids=[c.__name__ for c in SUITE_KILLS])
def test_planted_defect_is_killed_by_the_suite(cls: type[OpenRouterChatAdapter], rule: str) -> None:
    mutant = cls()
    report = run(
        SuiteConfig.for_adapter(mutant, cassette_dirs=[CASSETTES], samples=None, selection=Selection(select=(rule,)))
    )
    result = report.result(rule, mutant.name)
    assert result is not None and result.status == "fail", f"{cls.__name__} survived {rule}"
    assert result.reasons


def test_unmutated_adapter_passes_what_kills_the_mutants() -> None:
    rules = tuple(sorted(set(SUITE_KILLS.values())))
    a = OpenRouterChatAdapter()
    report = run(SuiteConfig.for_adapter(a, cassette_dirs=[CASSETTES], samples=None, selection=Selection(select=rules)))
    assert {r.rule: r.status for r in report.results if r.adapter == a.name} == dict.fromkeys(rules, "pass")


def test_the_cassettes_are_the_documented_shapes() -> None:
    """Every OpenRouter response body and stream chunk of the cassettes validates against
    the wire schemas written from OpenRouter's docs (an oracle independent of the adapter)."""
    from conformance.wire import schemas as wire_schemas  # the wire schema loader, only here
    from conformance.wire.openrouter import OPENROUTER_CHAT

    response = wire_schemas.validator(OPENROUTER_CHAT, "response")
    chunk = wire_schemas.validator(OPENROUTER_CHAT, "stream-event")
    request = wire_schemas.validator(OPENROUTER_CHAT, "request")
    assert response is not None and chunk is not None and request is not None
    error = wire_schemas.validator(OPENROUTER_CHAT, "error")
    assert error is not None
    for it in its("reasoning.yaml") + its("tools.yaml") + its("stream_errors.yaml") + its("error_codes.yaml"):
        assert request.errors(it.request_body) == [], it.label
        if it.status >= 400:
            assert error.errors(it.response_json) == [], it.label
            assert it.response_json["error"]["code"] == it.status, it.label  # "the same status code as error.code"
        elif it.is_stream:
            for line in it.response_text.splitlines():
                if line.startswith("data: {"):
                    assert chunk.errors(json.loads(line[6:])) == [], it.label
        else:
            assert response.errors(it.response_json) == [], it.label


def test_a_refusal_is_the_reply_text_and_goes_back_in_its_field() -> None:
    """OpenRouter relays OpenAI's refusal (its SDK's AssistantMessage `refusal`): the reply's text
    beside the reasoning, and the next turn sends it back in `refusal`, `content` null, with the
    reasoning details as they came."""
    a = OpenRouterChatAdapter()
    body = {
        "id": "gen-1",
        "object": "chat.completion",
        "created": 1,
        "model": "openai/gpt-4o",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "refusal": "I can't help with that.",
                    "reasoning_details": [{"type": "reasoning.text", "text": "Unsafe.", "format": "unknown"}],
                },
            }
        ],
    }
    m = a.from_wire_response(WireResponse(body), ctx())
    assert [b["type"] for b in m["content"]] == ["thinking", "text"]
    assert m["content"][1]["text"] == "I can't help with that."
    user = {**m, "role": "user", "content": [{"type": "text", "text": "hi"}], "metadata": {}}
    wire = a.to_wire([user, m], [], OPTS).body["messages"][1]
    assert wire["content"] is None and wire["refusal"] == "I can't help with that."
    assert wire["reasoning_details"] == [{"type": "reasoning.text", "text": "Unsafe.", "format": "unknown"}]


def test_a_reply_whose_choice_reports_an_error_is_read_with_its_text_and_error_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """OpenRouter's API reference (Responses: NonStreamingChoice `finish_reason`, which it
    normalizes to tool_calls, stop, length, content_filter or error, `native_finish_reason`,
    `error?: ErrorResponse`) and its errors page ("any error occurred while the LLM is
    producing the output will be emitted in the response body"): such a reply is an honest
    one (the schema takes it), read as an `error` message with the text that arrived, its
    error kept in provider_raw and named in a WARN line (nothing dropped silently)."""
    from conformance.wire import schemas as wire_schemas
    from conformance.wire.openrouter import OPENROUTER_CHAT

    body = {
        "id": "gen-1735000000-abc",
        "object": "chat.completion",
        "created": 1735000000,
        "model": "openai/gpt-4o",
        "choices": [
            {
                "index": 0,
                "finish_reason": "error",
                "native_finish_reason": "error",
                "message": {"role": "assistant", "content": "The capital of"},
                "error": {"code": 502, "message": "Provider returned error", "metadata": {"provider_name": "OpenAI"}},
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }
    response = wire_schemas.validator(OPENROUTER_CHAT, "response")
    assert response is not None and response.errors(body) == []
    with caplog.at_level(logging.WARNING):
        m = OpenRouterChatAdapter().from_wire_response(WireResponse(body), ctx())
    assert m["metadata"]["status"] == "error"
    assert m["content"] == [{"type": "text", "text": "The capital of"}]
    raw = m["metadata"]["provider_raw"]["openrouter"]
    assert raw["error"]["code"] == 502 and raw["native_finish_reason"] == "error"
    assert any(
        getattr(r, "event", None) == "choice_error" and "Provider returned error" in r.getMessage()
        for r in caplog.records
    )
    # a finish reason outside the documented set is still refused by the schema
    body["choices"][0]["finish_reason"] = "exploded"
    assert response.errors(body) != []


def test_a_non_streamed_tool_call_with_its_index_is_an_honest_reply() -> None:
    """OpenRouter documents a non-streamed tool call as ChatMessageToolCall {id, type,
    function} and a streamed one with `index: number`; its server sends `index` on
    non-streamed calls too (recorded traffic). The schema takes the member (it refused the
    reply, so TC800 failed a real recording), an integer and nothing else, and the reply
    reads as its text and call."""
    from conformance.wire import schemas as wire_schemas
    from conformance.wire.openrouter import OPENROUTER_CHAT

    call = {
        "type": "function",
        "index": 0,
        "id": "toolu_1",
        "function": {"name": "weather", "arguments": '{"location": "Florence"}'},
    }
    body = {
        "id": "gen-1735000000-abc",
        "object": "chat.completion",
        "created": 1735000000,
        "model": "anthropic/claude-sonnet-4",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "native_finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": "Checking.", "tool_calls": [call]},
            }
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }
    response = wire_schemas.validator(OPENROUTER_CHAT, "response")
    assert response is not None and response.errors(body) == []
    m = OpenRouterChatAdapter().from_wire_response(WireResponse(body), ctx())
    assert [b["type"] for b in m["content"]] == ["text", "tool_use"]
    assert m["content"][1]["input"] == {"location": "Florence"}
    # the member is an integer position: anything else is still refused
    call["index"] = "first"
    assert response.errors(body) != []


def test_tc701_skips_openrouter_usage_counted_by_the_routed_models_tokenizer(tmp_path: Path) -> None:
    """OpenRouter's usage accounting: 'Prompt and completion token counts using the model's
    native tokenizer', the routed model's. An Anthropic model counts its tool-use system
    prompt in (hundreds of tokens no request carries): TC701 failed an honest adapter on
    such a recording; it skips, naming the sentence, and never fails or passes it."""
    request = {
        "model": "anthropic/claude-sonnet-4",
        "messages": [{"role": "user", "content": "What's the weather in Florence?"}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "weather",
                    "description": "Get weather information for a location",
                    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}},
                },
            }
        ],
    }
    reply = {
        "id": "gen-1",
        "object": "chat.completion",
        "created": 1735000000,
        "model": "anthropic/claude-4-sonnet-20250522",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "native_finish_reason": "stop",
                "message": {"role": "assistant", "content": "It is 40 C."},
            }
        ],
        "usage": {"prompt_tokens": 394, "completion_tokens": 6, "total_tokens": 400},
    }
    (tmp_path / "or.yaml").write_text(
        "interactions:\n- request:\n"
        f"    body: {json.dumps(json.dumps(request))}\n"
        "    headers: {}\n    method: POST\n    uri: https://openrouter.ai/api/v1/chat/completions\n"
        "  response:\n"
        f"    body: {{string: {json.dumps(json.dumps(reply))}}}\n"
        "    headers: {Content-Type: [application/json]}\n    status: {code: 200, message: OK}\nversion: 1\n",
        encoding="utf-8",
    )
    refs = ["conformance.adapters.openrouter:OpenRouterChatAdapter"]
    report = run(SuiteConfig.for_refs(refs, samples=tmp_path, selection=Selection(select=("TC701",))))
    outcomes = [o for o in report.outcomes if o.rule == "TC701" and o.subject.startswith("or.yaml")]
    assert [o.status for o in outcomes] == ["skip"], [(o.status, o.message) for o in outcomes]
    assert "native tokenizer" in outcomes[0].message


def test_a_recorded_turn_of_calls_without_content_renders_back_equivalent() -> None:
    """OpenRouter's AssistantMessage makes `content` optional, and call arguments are a JSON
    string (OpenAI's shape): a recorded assistant turn of tool_calls and reasoning_details
    with no `content` and compact arguments reads and renders back as the same request
    (TC802 failed it: the render writes `content: null` and spaced arguments)."""
    from conformance.wire import equivalence
    from conformance.wire.openrouter import OPENROUTER_CHAT

    call = {"id": "tool_1", "type": "function", "function": {"name": "weather", "arguments": '{"location":"Rome"}'}}
    body = {
        "model": "google/gemini-3-pro-preview",
        "messages": [
            {"role": "user", "content": "Weather in Rome?"},
            {
                "role": "assistant",
                "tool_calls": [call],
                "reasoning_details": [{"type": "reasoning.encrypted", "data": "abc", "format": "google-gemini-v1"}],
            },
            {"role": "tool", "tool_call_id": "tool_1", "content": "20 C"},
        ],
    }
    a = OpenRouterChatAdapter()
    parsed = a.from_wire_request(body, session_id="sess_or")
    rendered = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    assert equivalence.compare(OPENROUTER_CHAT, body, rendered) == []
    # other arguments are still a difference
    changed = json.loads(json.dumps(body))
    changed["messages"][1]["tool_calls"][0]["function"]["arguments"] = '{"location":"Milan"}'
    assert equivalence.compare(OPENROUTER_CHAT, changed, rendered) != []
