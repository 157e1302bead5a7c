"""Issue 25 item 10, "Done when": every chat recording under ../shared/samples/wire reads
through `wire parse` and the adapters with no false rejection and no silently lost content
(the measurement: tests/wire_measure.py; `python tests/wire_measure.py` prints its figures),
and the measurement finds what it counts (hand-written recordings below)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from wire_content import write_cassette
from wire_measure import GPT2099_STREAMS, PROBLEMS, WIRE, figures, measure, measure_streams

from conformance.adapters.base import WireFormatError
from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.protocol import Message, ParsedRequest, RequestContext, WireResponse


@pytest.mark.samples
def test_every_chat_recording_reads_without_false_rejection_or_silent_loss() -> None:
    if not WIRE.is_dir():
        pytest.skip(f"real samples not present at {WIRE}")
    cases = measure()
    streams = measure_streams() if GPT2099_STREAMS.is_dir() else []
    counts = Counter(c.outcome for c in cases)
    assert counts["ok"] + counts["classified"] >= 120, figures(cases)  # the samples were all read
    assert [c for c in streams if c.outcome in PROBLEMS] == [], figures(streams)
    assert [c for c in cases if c.outcome in PROBLEMS] == [], figures(cases)


def test_the_projects_own_cassettes_read_without_false_rejection_or_silent_loss() -> None:
    """The same measurement over cassettes/ (written from the providers' docs): every reply,
    the error streams included (the provider's error after the partial content), reads."""
    cases = measure(Path(__file__).resolve().parents[1] / "cassettes")
    assert [c for c in cases if c.outcome in PROBLEMS] == [], figures(cases)
    in_stream = [c for c in cases if c.outcome == "classified" and c.detail.endswith("in the stream")]
    assert len(in_stream) >= 5, figures(cases)


# -- the measurement itself finds what it counts (hand-written recordings, from the docs) ----------

CHAT_URL = "https://api.openai.com/v1/chat/completions"
# https://api-docs.deepseek.com/guides/reasoning_model: `reasoning_content` beside `content`
DEEPSEEK_URL = "https://api.deepseek.com/chat/completions"
DEEPSEEK_REPLY: dict[str, Any] = {
    "id": "c1",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "deepseek-reasoner",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "9.11 < 9.8", "reasoning_content": "Compare 0.11 and 0.8."},
            "finish_reason": "stop",
        }
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 30, "total_tokens": 42},
}
ASK = {"model": "deepseek-reasoner", "messages": [{"role": "user", "content": "9.11 or 9.8, which is greater?"}]}


class ForgetsReasoning(OpenAIChatAdapter):
    """Drops the thinking it read, silently."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], ctx: RequestContext) -> Message:
        m = super().from_wire_response(response, ctx)
        return {**m, "content": [b for b in m["content"] if b["type"] != "thinking"]}


class RefusesReasoning(OpenAIChatAdapter):
    def from_wire_response(self, response: WireResponse | dict[str, Any], ctx: RequestContext) -> Message:
        if "reasoning_content" in json.dumps(response.body if isinstance(response, WireResponse) else response):
            raise WireFormatError("/choices/0/message/reasoning_content: unknown member")
        return super().from_wire_response(response, ctx)


def _chat(adapter: Any) -> dict[str, Any]:
    return {"openai-chat-completions": adapter}


def test_the_measurement_counts_silent_losses_and_false_rejections(tmp_path: Path) -> None:
    write_cassette(tmp_path, "deepseek", DEEPSEEK_URL, ASK, DEEPSEEK_REPLY)
    assert [c.outcome for c in measure(tmp_path, _chat(OpenAIChatAdapter()))] == ["ok"]
    lost_case = measure(tmp_path, _chat(ForgetsReasoning()))
    assert [(c.outcome, c.detail) for c in lost_case] == [("lost", "reasoning 'Compare 0.11 and 0.8.'")]
    rejected = measure(tmp_path, _chat(RefusesReasoning()))
    assert [c.outcome for c in rejected] == ["rejected"] and "reasoning_content" in rejected[0].detail
    assert "1 falsely rejected" in figures(rejected) and "1 with content silently lost" in figures(lost_case)


def test_a_loss_the_adapter_declares_is_not_silent(tmp_path: Path) -> None:
    class DropsReasoningAloud(ForgetsReasoning):
        def from_wire_response(self, response: WireResponse | dict[str, Any], ctx: RequestContext) -> Message:
            m = super().from_wire_response(response, ctx)
            self.drop(m, 0, "thinking", "not kept")
            return m

    write_cassette(tmp_path, "deepseek", DEEPSEEK_URL, ASK, DEEPSEEK_REPLY)
    assert [c.outcome for c in measure(tmp_path, _chat(DropsReasoningAloud()))] == ["ok"]


# https://platform.openai.com/docs/guides/function-calling: the history sends the call and
# the `tool` message answering it
WITH_RESULT = {
    "model": "gpt-4o-mini",
    "messages": [
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "4 C and cloudy"},
    ],
}


class ForgetsToolResults(OpenAIChatAdapter):
    """Reads a history's tool results back empty, silently."""

    def from_wire_request(self, body: Any, *, session_id: str | None = None) -> ParsedRequest:
        parsed = super().from_wire_request(body, session_id=session_id)
        for m in parsed.messages:
            for b in m["content"]:
                if b["type"] == "tool_result":
                    b["content"] = [{"type": "text", "text": ""}]
        return parsed


def test_the_measurement_counts_history_a_request_loses(tmp_path: Path) -> None:
    reply = {**DEEPSEEK_REPLY, "model": "gpt-4o-mini", "choices": [{**DEEPSEEK_REPLY["choices"][0]}]}
    write_cassette(tmp_path, "tool", CHAT_URL, WITH_RESULT, reply)
    assert [c.outcome for c in measure(tmp_path, _chat(OpenAIChatAdapter()))] == ["ok"]
    cases = measure(tmp_path, _chat(ForgetsToolResults()))
    assert [(c.outcome, c.detail) for c in cases if c.outcome != "ok"] == [("request-lost", "text '4 C and cloudy'")]


# Chat Completions' error chunk mid-stream (https://platform.openai.com/docs/guides/error-codes
# lists the `server_error` type; the chunk carries the error object)
ERROR_STREAM = (
    'data: {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o", '
    '"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Once"}, "finish_reason": null}]}\n\n'
    'data: {"error": {"message": "The server had an error", "type": "server_error", "param": null, "code": null}}\n\n'
)


class CallsErrorsCuts(OpenAIChatAdapter):
    """Refuses a stream the provider ended with its error, as if it were cut."""

    def stream_response(self, chunks: Any, context: RequestContext) -> Any:
        raise WireFormatError("stream ended without a stop reason: cut before its end")


def test_the_providers_error_in_a_stream_is_classified_and_a_refusal_of_it_is_not(tmp_path: Path) -> None:
    ask = {**ASK, "model": "gpt-4o", "stream": True}
    write_cassette(tmp_path, "err", CHAT_URL, ask, ERROR_STREAM, content_type="text/event-stream")
    assert [(c.outcome, c.detail) for c in measure(tmp_path, _chat(OpenAIChatAdapter()))] == [
        ("classified", "server_error in the stream")
    ]
    assert [c.outcome for c in measure(tmp_path, _chat(CallsErrorsCuts()))] == ["rejected"]
