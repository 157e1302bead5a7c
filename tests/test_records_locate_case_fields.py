"""The records locate what the suite's cases read (refusals, a blocked Gemini prompt,
mid-stream error bodies, the structured-output field), from the providers' documented
shapes written here by hand, never from an adapter (issue 26 item 1)."""

from __future__ import annotations

from conformance.adapters.anthropic import AnthropicAdapter
from conformance.adapters.errors import CriticalBlockError, ServerError, WireFormatError
from conformance.adapters.ollama import OllamaAdapter
from conformance.adapters.protocol import Message
from conformance.core.findings import Selection
from conformance.suite.checks import errors as oracle
from conformance.suite.checks.lossy import image_source_probes
from conformance.suite.checks.tool_ids import FOREIGN_IDS
from conformance.suite.runner import SuiteConfig, run
from conformance.wire import schemas as wire_schemas
from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES
from conformance.wire.gemini import GEMINI, PROMPT_BLOCKED
from conformance.wire.ollama import OLLAMA_CHAT
from conformance.wire.openai_chat import OPENAI_CHAT
from conformance.wire.openai_responses import OPENAI_RESPONSES


def test_responses_refusals_are_located_streamed_and_not() -> None:
    body = {"output": [{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}]}
    assert [x.value for x in OPENAI_RESPONSES.probes.response_refusals(body)] == ["No."]
    events = [
        {"type": "response.refusal.delta", "item_id": "m", "content_index": 0, "delta": "N"},
        {"type": "response.refusal.delta", "item_id": "m", "content_index": 0, "delta": "o."},
    ]
    assert OPENAI_RESPONSES.probes.stream_refusals(events) == ["No."]
    done = {"type": "response.refusal.done", "item_id": "m", "content_index": 0, "refusal": "No."}
    assert OPENAI_RESPONSES.probes.stream_refusals([*events[:1], done]) == ["No."]


def test_a_blocked_gemini_prompt_maps_to_error_and_a_finished_candidate_decides() -> None:
    blocked = {"promptFeedback": {"blockReason": "SAFETY"}}
    assert GEMINI.probes.response_stop_reason(blocked) == PROMPT_BLOCKED
    assert GEMINI.stop_reasons[PROMPT_BLOCKED] == "error"
    assert GEMINI.probes.stream_stop_reason([blocked]) == PROMPT_BLOCKED
    finished = {"candidates": [{"content": {"parts": [{"text": "hi"}]}, "finishReason": "STOP"}]}
    assert GEMINI.probes.stream_stop_reason([finished, blocked]) == "STOP"


def test_mid_stream_error_bodies_are_located_for_every_api() -> None:
    assert OLLAMA_CHAT.probes.stream_error([{"message": {"content": "a"}, "done": False}, {"error": "boom"}]) == {
        "error": "boom"
    }
    assert GEMINI.probes.stream_error([{"candidates": []}, {"error": {"code": 503, "message": "m"}}]) is not None
    assert OPENAI_CHAT.probes.stream_error([{"choices": [], "error": None}]) is None
    assert oracle.hinted_class("gemini-generate-content", {"error": {"code": 503, "message": "m"}}) == "server_error"


def test_an_unhinted_mid_stream_error_is_classified_and_carries_the_message() -> None:
    body = {"error": "an error was encountered while running the model"}
    ok = ServerError("ollama 500: an error was encountered while running the model", retryable=True)
    assert oracle.unhinted_stream_problems(ok) == [] and oracle.message_problems(ok, body) == []
    wire = WireFormatError("unexpected NDJSON line")
    assert oracle.unhinted_stream_problems(wire) and oracle.message_problems(wire, body)
    assert oracle.unhinted_stream_problems(ServerError("x", retryable=False))  # §6.4


def test_structured_output_field_is_the_apis_own() -> None:
    schema = {"type": "object"}
    assert OLLAMA_CHAT.probes.output_schema({"format": schema})
    assert not OLLAMA_CHAT.probes.output_schema({"messages": [{"role": "system", "content": str(schema)}]})
    assert GEMINI.probes.output_schema({"generationConfig": {"responseSchema": schema}})
    assert OPENAI_RESPONSES.probes.output_schema({"text": {"format": {"type": "json_schema", "schema": schema}}})
    assert OPENAI_CHAT.probes.output_schema({"response_format": {"json_schema": {"schema": schema}}})


def test_stop_sequences_have_no_field_on_the_responses_api_and_one_on_chat() -> None:
    located = OPENAI_RESPONSES.probes.request_options({"max_output_tokens": 5, "temperature": 0.0})
    assert located is not None and "stop_sequences" not in located
    responses = wire_schemas.documented_fields(OPENAI_RESPONSES, "request")
    chat = wire_schemas.documented_fields(OPENAI_CHAT, "request")
    assert responses is not None and "max_output_tokens" in responses
    assert not {"stop", "max_tokens", "max_completion_tokens"} & responses
    assert chat is not None and {"stop", "max_completion_tokens"} <= chat


def test_image_sources_the_api_cannot_carry_are_probed_else_skipped_with_the_reason() -> None:
    probes, skipped = image_source_probes(OllamaAdapter())
    kinds = [block["source"]["kind"] for _, block, _ in probes]
    assert kinds == ["file_ref", "url"] and skipped == []
    probes, skipped = image_source_probes(AnthropicAdapter())
    assert [block["source"]["kind"] for _, block, _ in probes] == ["file_ref"]
    assert len(skipped) == 1 and "takes images by URL" in skipped[0]


def test_foreign_tool_ids_break_the_rules_of_the_apis_that_have_one() -> None:
    ids = {kind: template.format(j=0) for kind, template in FOREIGN_IDS}
    assert not OPENAI_CHAT.tool_ids.accepts(ids["long"]) and not OPENAI_RESPONSES.tool_ids.accepts(ids["long"])
    assert not ANTHROPIC_MESSAGES.tool_ids.accepts(ids["composite"])
    assert not ANTHROPIC_MESSAGES.tool_ids.accepts(ids["non-ASCII"])
    assert GEMINI.tool_ids.accepts(ids["composite"])  # no documented rule: TC304 skips there


class _RefusingOllama(OllamaAdapter):
    """Refuses an image it cannot carry with the documented error instead of dropping it."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        if block_type != "image":
            super().drop(message, index, block_type, reason)
            return
        raise CriticalBlockError(
            adapter=self.name,
            session_id=str(message.get("session_id", "")),
            message_id=str(message.get("id", "")),
            block_type=block_type,
            reason=reason,
        )


def test_an_image_source_refused_with_the_documented_error_is_a_clean_failure() -> None:
    report = run(SuiteConfig.for_adapter(_RefusingOllama(), selection=Selection(select=("TC202",))))
    result = report.result("TC202", "ollama")
    assert result is not None and result.status == "pass", result
    refused = [x for x in report.outcomes if x.rule == "TC202" and "refused with CriticalBlockError" in x.message]
    assert {x.subject.split(" (")[0] for x in refused} == {
        "file_ref image in a user message",
        "url image in a user message",
    }
