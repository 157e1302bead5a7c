"""TC908 (contract §3.3, CanonicalResponse.content: "the assistant's reply blocks, in order"):
the reply's text as the recording carries it, located by the record's `response_text` /
`stream_text` probes (read from the wire, never from the adapter), is in the parsed and the
streamed message's text blocks, in order.

Each test runs the suite's TC908 alone on turnspec's own cassettes of an API with an adapter
whose reading of the reply's text is changed one way: the ways that lose nothing a reader
sees pass, the ways that lose or move text fail, and a recording that departs from its
API's docs is a skip naming the departure."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.adapters.anthropic import AnthropicAdapter
from conformance.adapters.base import RequestContext, StreamEvent
from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.core.findings import Selection
from conformance.suite.runner import SuiteConfig, run
from conformance.wire.registry import APIS

ROOT = Path(__file__).resolve().parents[1]
ANTHROPIC = ROOT / "cassettes" / "anthropic"
CHAT_DEPARTURES = ROOT / "cassettes" / "openai-chat-issue37"


def _texts(blocks: list[dict[str, Any]], change: Any) -> list[dict[str, Any]]:
    return [{**b, "text": change(b["text"])} if b.get("type") == "text" else b for b in blocks]


def _reading(change: Any, *, order: bool = False) -> type[AnthropicAdapter]:
    """The Anthropic adapter with each text block's text passed through `change`, in the
    parse and in the stream's final content alike (so TC606 cannot tell); with `order`,
    the parse's blocks reversed too."""

    class Changed(AnthropicAdapter):
        def from_wire_response(self, response: Any, request_context: RequestContext) -> Any:
            m = super().from_wire_response(response, request_context)
            m["content"] = _texts(m["content"], change)
            if order:
                m["content"] = list(reversed(m["content"]))
            return m

        def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
            for e in super().stream_response(chunks, context):
                if e.get("type") == "message_complete":
                    e = {**e, "final_content": _texts(list(e.get("final_content") or []), change)}
                yield e

    return Changed


def _tc908(adapter: Any, folder: Path) -> Any:
    report = run(
        SuiteConfig.for_adapter(adapter, cassette_dirs=[folder], samples=None, selection=Selection(select=("TC908",)))
    )
    result = report.result("TC908", adapter.name)
    assert result is not None
    return result


def test_the_reference_reading_passes_on_every_text_reply() -> None:
    result = _tc908(AnthropicAdapter(), ANTHROPIC)
    assert result.status == "pass" and result.passed >= 20, result.reasons


@pytest.mark.parametrize(
    "change",
    [str.strip, lambda t: f"  {t}\n", lambda t: t.replace(" ", "\n")],
    ids=["trimmed", "padded", "spaces-as-lines"],
)
def test_a_reading_that_changes_only_whitespace_passes(change: Any) -> None:
    result = _tc908(_reading(change)(), ANTHROPIC)
    assert result.status == "pass", result.reasons


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda t: t[: len(t) // 2], "is not in the reply's text blocks"),
        (lambda t: "", "is not in the reply's text blocks"),
        (lambda t: t.replace("a", "e"), "is not in the reply's text blocks"),
    ],
    ids=["cut", "dropped", "altered"],
)
def test_a_reading_that_loses_text_in_parse_and_stream_alike_fails(change: Any, said: str) -> None:
    result = _tc908(_reading(change)(), ANTHROPIC)
    assert result.status == "fail"
    assert any(said in r and "contract §3.3" in r for r in result.reasons), result.reasons


def _several_text_blocks(folder: Path) -> Path:
    """One exchange whose reply is three text blocks, as Anthropic's citations guide shows a
    cited answer ("the response ... split into multiple text blocks"), citations left out."""
    reply = {
        "id": "msg_01Cited",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": [
            {"type": "text", "text": "According to the document, "},
            {"type": "text", "text": "the grass is green"},
            {"type": "text", "text": " and the sky is blue."},
        ],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 610, "output_tokens": 22},
    }
    request = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 1024,
        "messages": [{"role": "user", "content": "What colors?"}],
    }
    cassette = {
        "interactions": [
            {
                "request": {
                    "body": json.dumps(request),
                    "headers": {"content-type": ["application/json"]},
                    "method": "POST",
                    "uri": "https://api.anthropic.com/v1/messages",
                },
                "response": {
                    "body": {"string": json.dumps(reply)},
                    "headers": {"content-type": ["application/json"], "x-turnspec-synthetic": ["true"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ]
    }
    folder.mkdir()
    (folder / "cited.yaml").write_text(yaml.safe_dump(cassette), encoding="utf-8")
    return folder


def test_text_blocks_moved_out_of_order_fail(tmp_path: Path) -> None:
    """A reply of several text blocks parsed in reverse order: every piece is there, but not
    in the order the wire has them; in order, the same reading passes."""
    folder = _several_text_blocks(tmp_path / "anthropic")
    assert _tc908(_reading(lambda t: t)(), folder).status == "pass"
    result = _tc908(_reading(lambda t: t, order=True)(), folder)
    assert result.status == "fail", result.reasons
    assert any("before the text that precedes it" in r for r in result.reasons), result.reasons


class _ObjectContentDropped(OpenAIChatAdapter):
    """Reads a message's `content` only when it is what the docs say (a string or a list of
    parts): the compatible server's content sent as one object reads as empty text."""

    def from_wire_response(self, response: Any, request_context: RequestContext) -> Any:
        m = super().from_wire_response(response, request_context)
        body = getattr(response, "body", response)
        choice = (body.get("choices") or [{}])[0] if isinstance(body, dict) else {}
        if isinstance((choice.get("message") or {}).get("content"), dict):
            m["content"] = [{"type": "text", "text": ""}]
        return m


def test_a_recording_that_departs_from_the_docs_is_a_skip_naming_the_departure() -> None:
    """issue 37's compatible departures: `content` sent as one object (tolerated by the
    schema's x-tolerate, read by turnspec's adapter) is no shape the docs define, so an
    adapter that does not read it is not failed for it: the case is skipped with both
    reasons, and the documented replies of the same folder still pass."""
    result = _tc908(_ObjectContentDropped(), CHAT_DEPARTURES)
    assert result.status != "fail", result.reasons
    assert result.passed > 0
    skipped = [r for r in result.skip_reasons if "departs from its API's docs" in r]
    assert skipped and "is not in the reply's text blocks" in skipped[0], result.skip_reasons


def test_every_record_of_a_chat_api_with_an_adapter_locates_reply_text() -> None:
    """The records the reference adapters speak each say where a reply's text is, so TC908
    judges them rather than skipping."""
    from conformance.adapters.registry import load
    from conformance.suite.checks.common import locates

    served = {
        load(name).wire_api for name in ("anthropic", "openai-chat", "openai-responses", "gemini", "ollama", "bedrock")
    }
    for api in APIS:
        if api.name in served:
            assert locates(api, "response_text") and locates(api, "stream_text"), api.name


# -- TC909: the reply's tool calls, names and inputs, as the recording carries them --------

GEMINI = ROOT / "cassettes" / "gemini"


def _tc909(adapter: Any, folder: Path) -> Any:
    report = run(
        SuiteConfig.for_adapter(adapter, cassette_dirs=[folder], samples=None, selection=Selection(select=("TC909",)))
    )
    result = report.result("TC909", adapter.name)
    assert result is not None
    return result


def _gemini_calls(change: Any) -> Any:
    """The Gemini adapter with each functionCall part's block passed through `change`: its
    reading of a part serves the reply, the stream and the recorded history alike."""
    from conformance.adapters.gemini import GeminiAdapter

    class Changed(GeminiAdapter):
        def part_to_block(self, sid: str, part: Any, kind: str | None, key: tuple[Any, ...]) -> Any:
            b = super().part_to_block(sid, part, kind, key)
            return change(b) if b.get("type") == "tool_use" else b

    return Changed()


def test_the_reference_readings_of_tool_calls_pass() -> None:
    from conformance.adapters.gemini import GeminiAdapter

    for adapter, folder in ((AnthropicAdapter(), ANTHROPIC), (GeminiAdapter(), GEMINI)):
        result = _tc909(adapter, folder)
        assert result.status == "pass" and result.passed >= 2, (adapter.name, result.passed, result.reasons)


def test_an_input_read_without_a_member_fails_where_no_fragment_streams() -> None:
    """Gemini sends a call's args whole (no fragments for TC609 to hold to the wire): an input
    that loses a member, parsed and streamed alike, fails here."""
    adapter = _gemini_calls(lambda b: {**b, "input": dict(list(b["input"].items())[:-1])})
    result = _tc909(adapter, GEMINI)
    assert result.status == "fail"
    assert any("has input" in r and "the recording's" in r for r in result.reasons), result.reasons


def test_a_call_under_another_name_fails() -> None:
    adapter = _gemini_calls(lambda b: {**b, "name": b["name"] + "_v2"})
    result = _tc909(adapter, GEMINI)
    assert result.status == "fail"
    assert any("is named" in r for r in result.reasons), result.reasons


def test_a_call_dropped_fails_naming_the_count() -> None:
    adapter = _gemini_calls(lambda b: {"type": "text", "text": ""})
    result = _tc909(adapter, GEMINI)
    assert result.status == "fail"
    assert any("tool call(s)" in r and "the reply 0" in r for r in result.reasons), result.reasons


def test_arguments_that_spell_no_object_are_held_to_the_name_only() -> None:
    """Chat's `arguments` is JSON text "as generated by the model" (chat/object): text that
    spells no object leaves the input to the adapter (the contract's `{}` if unparsable, or
    its own reading), and only the name is compared."""
    from conformance.wire.openai_chat import call_of

    assert call_of({"type": "function", "function": {"name": "f", "arguments": '{"a": 1'}}) == ("f", None)
    assert call_of({"type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}) == ("f", {"a": 1})
    assert call_of({"type": "custom", "custom": {"name": "g", "input": "free text"}}) == ("g", None)
