"""Recordings of other applications' traffic, read as a third party's would be (issue 25
item 10): what the application chose, or what the provider keeps server-side, is not the
adapter's fault.

The cassettes are written here by hand from the providers' documented shapes (URLs beside
each), never copied from a recording; they carry no `x-turnspec-synthetic` header, so the
suite reads them as recorded traffic, the way it reads ../shared/samples.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from wire_content import write_cassette

from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.openai_responses import OpenAIResponsesAdapter
from conformance.cli import main
from conformance.core.findings import Selection
from conformance.suite.runner import RuleResult, SuiteConfig, run
from conformance.wire import schemas as wire_schemas
from conformance.wire.openai_chat import OPENAI_CHAT


def _result(adapter: Any, folder: Path, rule: str) -> RuleResult:
    report = run(SuiteConfig.for_adapter(adapter, cassette_dirs=[folder], selection=Selection(select=(rule,))))
    result = report.result(rule, adapter.name)
    assert result is not None, rule
    return result


# -- tool names the application chose -------------------------------------------------------------

# https://platform.openai.com/docs/guides/function-calling: a function's `name` is the
# application's ("a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64")
_TOOL = {
    "type": "function",
    "function": {
        "name": "OpenMeteoTool",
        "description": "Current weather from Open-Meteo",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
_CALL: dict[str, Any] = {
    "id": "call_m1",
    "type": "function",
    "function": {"name": "OpenMeteoTool", "arguments": '{"city":"Oslo"}'},
}
CHAT_REQUEST = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "user", "content": "Weather in Oslo, then in Bergen?"},
        {"role": "assistant", "content": None, "tool_calls": [_CALL]},
        {"role": "tool", "tool_call_id": "call_m1", "content": "4 C, cloudy"},
    ],
    "tools": [_TOOL],
}
CHAT_REPLY = {
    "id": "chatcmpl-m2",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {**_CALL, "id": "call_m2", "function": {**_CALL["function"], "arguments": '{"city":"Bergen"}'}}
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 80, "completion_tokens": 17, "total_tokens": 97},
}
CHAT_URL = "https://api.openai.com/v1/chat/completions"


def _streamed_call() -> str:
    """CHAT_REPLY's call streamed: "data: "-prefixed chunks, the call's `index`, `id` and
    name first, its arguments after, the finish_reason, then `data: [DONE]`."""
    head = {"id": "chatcmpl-m3", "object": "chat.completion.chunk", "created": 1_700_000_000, "model": "gpt-4o-mini"}
    call = {"index": 0, "id": "call_m3", "type": "function", "function": {"name": "OpenMeteoTool", "arguments": ""}}
    deltas: list[tuple[dict[str, Any], str | None]] = [
        ({"role": "assistant", "content": None, "tool_calls": [call]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":"Bergen"}'}}]}, None),
        ({}, "tool_calls"),
    ]
    chunks = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": f}]} for d, f in deltas]
    usage = {**head, "choices": [], "usage": {"prompt_tokens": 80, "completion_tokens": 17, "total_tokens": 97}}
    return "".join(f"data: {json.dumps(c)}\n\n" for c in [*chunks, usage]) + "data: [DONE]\n\n"


def test_an_applications_tool_names_in_a_recording_are_not_the_adapters_fault(tmp_path: Path) -> None:
    folder = write_cassette(tmp_path / "rec", "open_meteo", CHAT_URL, CHAT_REQUEST, CHAT_REPLY)
    streamed = {**CHAT_REQUEST, "stream": True, "stream_options": {"include_usage": True}}
    write_cassette(folder, "open_meteo_stream", CHAT_URL, streamed, _streamed_call(), content_type="text/event-stream")
    for rule, cases in (("TC101", 2), ("TC102", 2), ("TC601", 1)):
        result = _result(OpenAIChatAdapter(), folder, rule)
        assert result.status == "pass" and result.passed == cases, (rule, result)
    # kept verbatim, so the next request calls the tool the application defined
    tc802 = _result(OpenAIChatAdapter(), folder, "TC802")
    assert tc802.status == "pass", tc802


def test_a_hand_written_cassette_still_owes_canonical_tool_names(tmp_path: Path) -> None:
    """The project's own (synthetic) cassettes choose their names: TS306 still binds them."""
    folder = write_cassette(tmp_path / "own", "open_meteo", CHAT_URL, CHAT_REQUEST, CHAT_REPLY, synthetic=True)
    for rule in ("TC101", "TC102"):
        result = _result(OpenAIChatAdapter(), folder, rule)
        assert result.status == "fail" and any("TS306" in r for r in result.reasons), (rule, result)


# -- a tool result whose call lives server-side ---------------------------------------------------

# https://platform.openai.com/docs/api-reference/responses/create: "previous_response_id:
# The unique ID of the previous response to the model. Use this to create multi-turn
# conversations." The function-calling guide then sends only the `function_call_output`
# items: the `function_call` they answer is in the stored previous response.
RESPONSES_URL = "https://api.openai.com/v1/responses"
RESPONSES_REQUEST = {
    "model": "gpt-4.1",
    "previous_response_id": "resp_prev1",
    "input": [{"type": "function_call_output", "call_id": "call_w1", "output": '{"temperature": 4}'}],
    "tools": [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Current temperature for a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "strict": False,
        }
    ],
}
RESPONSES_REPLY = {
    "id": "resp_next2",
    "object": "response",
    "created_at": 1_700_000_100,
    "status": "completed",
    "model": "gpt-4.1-2025-04-14",
    "previous_response_id": "resp_prev1",
    "output": [
        {
            "type": "message",
            "id": "msg_2",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "It is 4 degrees in Oslo.", "annotations": []}],
        }
    ],
    "usage": {
        "input_tokens": 120,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 9,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 129,
    },
}


def test_a_tool_result_answering_a_server_side_call_is_valid_history(tmp_path: Path) -> None:
    folder = write_cassette(tmp_path / "prev", "chained", RESPONSES_URL, RESPONSES_REQUEST, RESPONSES_REPLY)
    result = _result(OpenAIResponsesAdapter(), folder, "TC102")
    assert result.status == "pass" and result.passed == 1, result
    # rendered again, the result still answers `call_w1` on the same previous response
    tc802 = _result(OpenAIResponsesAdapter(), folder, "TC802")
    assert tc802.status == "pass" and tc802.passed == 2, tc802


def test_without_the_state_field_an_unanswered_result_is_still_refused(tmp_path: Path) -> None:
    request = {k: v for k, v in RESPONSES_REQUEST.items() if k != "previous_response_id"}
    folder = write_cassette(tmp_path / "alone", "alone", RESPONSES_URL, request, RESPONSES_REPLY)
    result = _result(OpenAIResponsesAdapter(), folder, "TC102")
    assert result.status == "fail" and any("TS205" in r for r in result.reasons), result


# -- a stream recorded without usage ----------------------------------------------------------------


def test_wire_parse_says_a_stream_carried_no_usage(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """https://platform.openai.com/docs/api-reference/chat/create: `stream_options.include_usage`
    "If set, an additional chunk will be streamed before the data: [DONE] message" with the
    usage; an application that did not set it recorded a stream without one. `wire parse`
    reads it, and says on stderr what the wire lacked and what the message then breaks."""
    chunk = {"id": "chatcmpl-u", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}
    stream = "".join(
        f"data: {json.dumps({**chunk, 'choices': [{'index': 0, 'delta': d, 'finish_reason': f}]})}\n\n"
        for d, f in (({"role": "assistant", "content": "Hi."}, None), ({}, "stop"))
    )
    body = tmp_path / "stream.txt"
    body.write_text(stream + "data: [DONE]\n\n", encoding="utf-8")
    assert main(["wire", "parse", "-a", "openai-chat", str(body)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out.splitlines()[-1])["content"] == [{"type": "text", "text": "Hi."}]
    assert "the stream carried no usage" in err and "/stream_options/include_usage" in err and "TS106" in err


# -- what the API accepted in recorded requests -----------------------------------------------------

# An application that sends a reply's message back as it came (the chat completion object's
# `message`, with its `annotations`), and leaves `response_format` unset as null; the API
# answered 200 to both in recorded third-party traffic.
ECHOED_REQUEST: dict[str, Any] = {
    "model": "gpt-4o-mini",
    "response_format": None,
    "messages": [
        {"role": "user", "content": "Latest Python release?"},
        {"role": "assistant", "content": "Python 3.13.", "refusal": None, "annotations": []},
        {"role": "user", "content": "And before it?"},
    ],
}
ECHOED_REPLY = {
    **CHAT_REPLY,
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "3.12."}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 30, "completion_tokens": 3, "total_tokens": 33},
}


def test_requests_the_api_accepted_pass_its_request_schema(tmp_path: Path) -> None:
    v = wire_schemas.validator(OPENAI_CHAT, "request")
    assert v is not None
    assert v.errors(ECHOED_REQUEST) == []
    # what the docs bound stays bound: a response_format of another shape, an annotation list that is not one
    assert not v.is_valid({**ECHOED_REQUEST, "response_format": "json"})
    bad = [*ECHOED_REQUEST["messages"][:1], {"role": "assistant", "content": "x", "annotations": "none"}]
    assert not v.is_valid({**ECHOED_REQUEST, "messages": bad})
    folder = write_cassette(tmp_path / "echo", "echo", CHAT_URL, ECHOED_REQUEST, ECHOED_REPLY)
    for rule in ("TC101", "TC102"):
        result = _result(OpenAIChatAdapter(), folder, rule)
        assert result.status == "pass", (rule, result)


# -- an error the provider reports inside a stream --------------------------------------------------

# https://docs.anthropic.com/en/docs/build-with-claude/streaming ("Error events": "we may
# occasionally send errors in the event stream. For example, during periods of high usage,
# you may receive an overloaded_error"), and Chat Completions' `{"error": {...}}` chunk
ANTHROPIC_CUT_BY_ERROR = (
    'event: message_start\ndata: {"type": "message_start", "message": {"id": "msg_1", "type": "message", '
    '"role": "assistant", "model": "claude-sonnet-4-5", "content": [], "stop_reason": null, '
    '"stop_sequence": null, "usage": {"input_tokens": 9, "output_tokens": 1}}}\n\n'
    'event: content_block_start\ndata: {"type": "content_block_start", "index": 0, '
    '"content_block": {"type": "text", "text": ""}}\n\n'
    'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, '
    '"delta": {"type": "text_delta", "text": "Once upon"}}\n\n'
    'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}\n\n'
)
CHAT_CUT_BY_ERROR = (
    'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o", '
    '"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Once upon"}, "finish_reason": null}]}\n\n'
    'data: {"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}\n\n'
)


@pytest.mark.parametrize(
    ("adapter", "stream", "said"),
    [
        ("anthropic", ANTHROPIC_CUT_BY_ERROR, "RateLimitError (rate_limit): overloaded_error: Overloaded"),
        ("openai-chat", CHAT_CUT_BY_ERROR, "ServerError (server_error): server_error: The server had an error"),
    ],
)
def test_wire_parse_reports_the_providers_error_in_a_stream_with_its_partial_content(
    adapter: str, stream: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Contract §6.5: the partial content (a `message_complete` with stop_reason error), then
    the error; never "cut before its end", which is not what went on the wire."""
    body = tmp_path / "stream.txt"
    body.write_text(stream, encoding="utf-8")
    assert main(["wire", "parse", "-a", adapter, str(body)]) == 1
    out, err = capsys.readouterr()
    message = json.loads(out.splitlines()[-1])
    assert message["content"] == [{"type": "text", "text": "Once upon"}]
    assert message["metadata"]["status"] == "error"
    assert "the provider reported an error in the stream" in err and said in err and "cut" not in err
