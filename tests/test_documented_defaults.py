"""Request forms the providers' docs say are the same (issue 28: what the pydantic-ai bridges
found to be suite issues, fixed in the wire records with the sentence that says so).

Each case is a pair of request bodies the documentation makes equal, and a near miss it does
not; `equivalence.compare` is what TC802 (and TC606, TC405, TC901) compare with.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.wire import equivalence
from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES
from conformance.wire.gemini import GEMINI
from conformance.wire.openai_chat import OPENAI_CHAT
from conformance.wire.openai_responses import OPENAI_RESPONSES

TOOLS_A = [{"name": "f", "description": "d", "input_schema": {"type": "object"}}]
TOOLS_O = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
TOOLS_R = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]
MSGS = [{"role": "user", "content": "hi"}]

SAME: list[tuple[Any, dict[str, Any], dict[str, Any]]] = [
    # "auto ... This is the default value when tools are provided."
    (ANTHROPIC_MESSAGES, {"messages": MSGS, "tools": TOOLS_A}, {"messages": MSGS, "tools": TOOLS_A, "tool_choice": {"type": "auto"}}),
    # "auto is the default if tools are present."
    (OPENAI_CHAT, {"messages": MSGS, "tools": TOOLS_O}, {"messages": MSGS, "tools": TOOLS_O, "tool_choice": "auto"}),
    # Responses: stream defaults to false; "Auto: (Default)"; a text input is a user message;
    # instructions are a system message first; content string is one input_text part
    (OPENAI_RESPONSES, {"input": "hi"}, {"input": [{"role": "user", "content": "hi"}], "stream": False}),
    (OPENAI_RESPONSES, {"input": "hi", "tools": TOOLS_R}, {"input": "hi", "tools": TOOLS_R, "tool_choice": "auto"}),
    (
        OPENAI_RESPONSES,
        {"instructions": "be brief", "input": "hi"},
        {"input": [{"role": "system", "content": "be brief"}, {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}]},
    ),
    (
        OPENAI_RESPONSES,
        {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"city":"Bogot\\u00e1"}'}]},
        {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": '{"city": "Bogotá"}'}]},
    ),
    # Gemini: proto names, responseModalities TEXT (= the empty list), systemInstruction role
    (
        GEMINI,
        {"contents": [{"role": "user", "parts": [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}]},
        {"contents": [{"role": "user", "parts": [{"inline_data": {"mime_type": "image/png", "data": "AAAA"}}]}], "generationConfig": {"responseModalities": ["TEXT"]}},
    ),
    (
        GEMINI,
        {"systemInstruction": {"parts": [{"text": "be brief"}]}, "contents": []},
        {"systemInstruction": {"role": "user", "parts": [{"text": "be brief"}]}, "contents": []},
    ),
]  # fmt: skip

DIFFERENT: list[tuple[Any, dict[str, Any], dict[str, Any]]] = [
    (ANTHROPIC_MESSAGES, {"messages": MSGS}, {"messages": MSGS, "tool_choice": {"type": "auto"}}),  # no tools
    (ANTHROPIC_MESSAGES, {"messages": MSGS, "tools": TOOLS_A}, {"messages": MSGS, "tools": TOOLS_A, "tool_choice": {"type": "any"}}),
    (OPENAI_CHAT, {"messages": MSGS, "tools": TOOLS_O}, {"messages": MSGS, "tools": TOOLS_O, "tool_choice": "required"}),
    (OPENAI_RESPONSES, {"input": "hi"}, {"input": [{"role": "developer", "content": "hi"}]}),
    (OPENAI_RESPONSES, {"input": "hi"}, {"input": "hi", "stream": True}),
    (GEMINI, {"contents": []}, {"contents": [], "generationConfig": {"responseModalities": ["IMAGE"]}}),
    # a key inside a function's arguments is the caller's, never renamed
    (
        GEMINI,
        {"contents": [{"parts": [{"functionCall": {"name": "f", "args": {"mime_type": 1}}}]}]},
        {"contents": [{"parts": [{"functionCall": {"name": "f", "args": {"mimeType": 1}}}]}]},
    ),
]  # fmt: skip


@pytest.mark.parametrize(("api", "recorded", "rendered"), SAME)
def test_documented_forms_compare_equal(api: Any, recorded: dict[str, Any], rendered: dict[str, Any]) -> None:
    assert equivalence.compare(api, recorded, rendered) == []


@pytest.mark.parametrize(("api", "recorded", "rendered"), DIFFERENT)
def test_other_forms_still_differ(api: Any, recorded: dict[str, Any], rendered: dict[str, Any]) -> None:
    assert equivalence.compare(api, recorded, rendered) != []


def test_every_new_equivalence_quotes_its_sentence() -> None:
    for api in (ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES, GEMINI):
        for e in api.accepted_differences:
            if isinstance(e, equivalence.Equivalence):
                assert e.says and e.source.startswith("https://"), e
