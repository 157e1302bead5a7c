"""Forms an API treats alike (issue 25 item 2): one declaration per wire record
(`accepted_differences`, `wire.equivalence`), applied by TC802, TC606, TC405 and TC901."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.core.findings import Selection
from conformance.suite.runner import SuiteConfig, run
from conformance.wire import equivalence
from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES
from conformance.wire.api import Equivalence
from conformance.wire.gemini import GEMINI
from conformance.wire.ollama import OLLAMA_CHAT
from conformance.wire.openai_chat import OPENAI_CHAT
from conformance.wire.openai_responses import OPENAI_RESPONSES
from conformance.wire.openrouter import OPENROUTER_CHAT

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from mutants import (  # noqa: E402  (tests/ on the path first, as test_mutants has it)
    ChatToolContentAbsent,
    GeminiUrlSafeOtherBytesRoundTrip,
    GeminiUrlSafeOtherImageBytes,
    GeminiUrlSafeParsedSignatureAltered,
    GeminiUrlSafeSignatureAltered,
)
from third_party.equivalent_forms import EmptyContentChatAdapter, UrlSafeGeminiAdapter  # noqa: E402

PAYLOAD = bytes(range(250, 256)) + b"\xfb\xff\x00"  # bytes whose two alphabets differ
STD = base64.b64encode(PAYLOAD).decode()
URL = base64.urlsafe_b64encode(PAYLOAD).decode().rstrip("=")
BUILT_IN = (ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES, GEMINI, OLLAMA_CHAT, OPENROUTER_CHAT)
RULES = ("TC802", "TC606", "TC405", "TC901")


def gemini_body(data: str, sig: str, temperature: Any = 1) -> dict[str, Any]:
    return {
        "contents": [
            {
                "role": "user",
                "parts": [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": data}}],
            },
            {"role": "model", "parts": [{"text": "ok", "thoughtSignature": sig}]},
        ],
        "generationConfig": {"temperature": temperature, "maxOutputTokens": 64},
    }


def test_both_alphabets_padded_or_not_spell_the_same_bytes():
    assert set(STD) & set("+/=") and set(URL) & set("-_") and "=" not in URL
    for spelled in (STD, URL, STD.rstrip("="), base64.urlsafe_b64encode(PAYLOAD).decode()):
        assert equivalence.decode_base64(spelled) == PAYLOAD
    # stray trailing bits, a lone character, too much padding: no spelling of any bytes
    assert equivalence.decode_base64("QR") is None and equivalence.decode_base64("QUJDR") is None
    assert equivalence.decode_base64("QQ===") is None and equivalence.decode_base64("not base64!") is None


def test_gemini_base64_fields_compare_as_bytes_and_other_bytes_still_differ():
    recorded = gemini_body(STD, STD)
    assert equivalence.compare(GEMINI, recorded, gemini_body(URL, URL)) == []
    other = base64.urlsafe_b64encode(b"\x00" + PAYLOAD[1:]).decode().rstrip("=")
    d = equivalence.compare(GEMINI, recorded, gemini_body(other, URL))
    assert d == [f'/contents/0/parts/1/inlineData/data: recorded "{STD}", rendered "{other}"']
    assert equivalence.compare(GEMINI, recorded, gemini_body(URL, other))[0].startswith(
        "/contents/1/parts/0/thoughtSignature"
    )
    # only declared fields: a text that happens to be base64 is compared as text
    assert equivalence.compare(GEMINI, {"text": STD}, {"text": URL}) != []


def test_an_api_that_declares_no_base64_equivalence_compares_the_text():
    body = {"messages": [{"role": "user", "content": [{"type": "image", "source": {"data": STD}}]}]}
    urlsafe = json.loads(json.dumps(body).replace(STD, URL))
    assert equivalence.base64_at(ANTHROPIC_MESSAGES, "/messages/0/content/0/source/data") is None
    assert equivalence.compare(ANTHROPIC_MESSAGES, body, urlsafe) != []


def test_key_order_and_number_spellings_are_not_differences_booleans_are():
    a = gemini_body(STD, STD, temperature=json.loads("1"))
    b = dict(reversed(list(gemini_body(STD, STD, temperature=json.loads("1e0")).items())))
    c = gemini_body(STD, STD, temperature=json.loads("1.0"))
    assert list(a) != list(b) and equivalence.compare(GEMINI, a, b) == [] == equivalence.compare(GEMINI, a, c)
    assert equivalence.compare(GEMINI, a, gemini_body(STD, STD, temperature=1.5)) != []
    assert equivalence.compare(GEMINI, a, gemini_body(STD, STD, temperature=True)) == [
        "/generationConfig/temperature: recorded 1, rendered true"
    ]


def test_chat_content_beside_tool_calls_is_optional_and_only_there():
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}

    def turn(**content: Any) -> dict[str, Any]:
        return {"messages": [{"role": "assistant", "tool_calls": [call], **content}]}

    for a, b in ((turn(), turn(content=None)), (turn(), turn(content="")), (turn(content=None), turn(content=""))):
        assert equivalence.compare(OPENAI_CHAT, a, b) == []
    assert equivalence.compare(OPENAI_CHAT, turn(), turn(content="thinking aloud")) != []
    tool = {"messages": [{"role": "tool", "tool_call_id": "c1", "content": "42"}]}
    assert equivalence.compare(OPENAI_CHAT, tool, {"messages": [{"role": "tool", "tool_call_id": "c1"}]}) != []


def test_every_declared_equivalence_quotes_its_documentation():
    for api in BUILT_IN:
        declared = equivalence.declared(api)
        assert equivalence.KEY_ORDER in declared and equivalence.NUMBERS in declared, api.name
        for e in declared:
            assert isinstance(e, Equivalence) and e.forms and len(e.says.split()) >= 5, e
            assert e.source.startswith("https://") and e.says in str(e), e
    chat = equivalence.declared(OPENAI_CHAT)
    assert any("Required unless `tool_calls`" in e.says for e in chat)
    assert equivalence.GEMINI_BASE64 in equivalence.declared(GEMINI)
    assert "URL-safe" in equivalence.GEMINI_BASE64.says


def _conform(adapter: Any, cassettes: str, rules: tuple[str, ...]) -> dict[str, Any]:
    report = run(
        SuiteConfig.for_adapter(
            adapter, cassette_dirs=[ROOT / cassettes], samples=None, selection=Selection(select=rules)
        )
    )
    return {r: report.result(r, adapter.name) for r in rules}


def test_url_safe_reordered_gemini_adapter_passes_the_four_checks():
    """Failed TC802, TC606, TC405 and TC901 before: each compared base64 text literally."""
    results = _conform(UrlSafeGeminiAdapter(), "cassettes/gemini", RULES)
    for rule, r in results.items():
        assert r is not None and r.status == "pass" and r.passed > 0, (rule, r)


def test_empty_content_reordered_chat_adapter_passes_the_four_checks():
    results = _conform(EmptyContentChatAdapter(), "cassettes/openai-chat", RULES)
    for rule, r in results.items():
        assert r is not None and r.status == "pass", (rule, r)
    assert all(results[r].passed > 0 for r in ("TC802", "TC606", "TC901"))  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("cls", "rule", "names"),
    [
        (GeminiUrlSafeOtherImageBytes, "TC901", "URL-safe alphabet"),
        (GeminiUrlSafeOtherBytesRoundTrip, "TC802", "URL-safe alphabet"),
        (GeminiUrlSafeSignatureAltered, "TC405", "URL-safe alphabet"),
        (GeminiUrlSafeParsedSignatureAltered, "TC606", "URL-safe alphabet"),
        (ChatToolContentAbsent, "TC802", "when the message has tool_calls"),
    ],
)
def test_real_changes_still_fail_and_the_reason_names_the_equivalences_and_the_rule(cls, rule, names):
    m = cls()
    cassettes = "cassettes/gemini" if m.wire_api == GEMINI.name else "cassettes/openai-chat"
    r = _conform(m, cassettes, (rule,))[rule]
    assert r is not None and r.status == "fail", r
    why = r.reasons[0]
    assert "declared equivalences:" in why and names in why and "object members in any order" in why, why
    sentence = {
        "TC901": "image source kind, media type and bytes survive",
        "TC802": "recorded request read and rendered back matches semantically",
        "TC405": "thinking signatures go back only to the provider",
        "TC606": "Streaming events are 100% reconstructible",
    }[rule]
    assert sentence in why, why


# -- Ollama /api/chat: documented defaults, and the two documented spellings of a tool-call turn


def _ollama(**top: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "qwen3", "messages": [{"role": "user", "content": "Weather in Paris?"}]}
    return {**body, **top}


def _ollama_turn(*calls: dict[str, Any], **content: Any) -> dict[str, Any]:
    return _ollama(messages=[{"role": "assistant", **content, "tool_calls": list(calls)}])


def _call(name: str, **extra: Any) -> dict[str, Any]:
    fn = {k: v for k, v in extra.items() if k == "index"}
    rest = {k: v for k, v in extra.items() if k != "index"}
    return {**rest, "function": {**fn, "name": name, "arguments": {"city": "Paris"}}}


def test_ollama_documented_defaults_equal_absent_fields():
    # ChatRequest.stream "default: true"; an empty `options` overrides nothing; no tools
    assert equivalence.compare(OLLAMA_CHAT, _ollama(), _ollama(stream=True)) == []
    assert equivalence.compare(OLLAMA_CHAT, _ollama(options={}), _ollama()) == []
    assert equivalence.compare(OLLAMA_CHAT, _ollama(tools=[]), _ollama()) == []


def test_ollama_defaults_that_say_something_still_differ():
    assert equivalence.compare(OLLAMA_CHAT, _ollama(), _ollama(stream=False)) == ["/stream: only in rendered (false)"]
    assert equivalence.compare(OLLAMA_CHAT, _ollama(stream=True), _ollama(stream=False)) != []
    assert equivalence.compare(OLLAMA_CHAT, _ollama(options={"num_predict": 64}), _ollama()) != []
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    assert equivalence.compare(OLLAMA_CHAT, _ollama(tools=[tool]), _ollama()) != []


def test_ollama_tool_call_turn_in_either_documented_spelling():
    # the tool-calling guide's history turn (no content; type and index 0..n) equals the
    # reply's own spelling ("content": "", bare calls)
    guide = _ollama_turn(_call("get_temperature", type="function", index=0), _call("get_conditions", index=1))
    reply = _ollama_turn(_call("get_temperature"), _call("get_conditions"), content="")
    assert equivalence.compare(OLLAMA_CHAT, guide, reply) == []


def test_ollama_tool_call_turn_differences_that_matter_still_fail():
    bare = _ollama_turn(_call("get_temperature"), _call("get_conditions"))
    # an index other than the call's position (calls swapped or renumbered)
    renumbered = _ollama_turn(_call("get_temperature", index=1), _call("get_conditions", index=0))
    assert equivalence.compare(OLLAMA_CHAT, renumbered, bare) != []
    # text the turn said is not an absent content; a type other than function is kept
    assert (
        equivalence.compare(
            OLLAMA_CHAT, bare, _ollama_turn(_call("get_temperature"), _call("get_conditions"), content="Let me look.")
        )
        != []
    )
    assert equivalence.compare(OLLAMA_CHAT, _ollama_turn(_call("f", type="other")), _ollama_turn(_call("f"))) != []
    # an empty content without tool calls is not the turn the guide shows
    assert (
        equivalence.compare(
            OLLAMA_CHAT,
            _ollama(messages=[{"role": "assistant"}]),
            _ollama(messages=[{"role": "assistant", "content": ""}]),
        )
        != []
    )


def _schema(**top: Any) -> dict[str, Any]:
    # a property *named* title beside the annotation: the property is data, the annotation is not
    return {
        "type": "object",
        "properties": {
            "title": {"type": "string", "title": "Title"},
            "city": {"anyOf": [{"type": "string", "title": "Name"}, {"type": "null"}]},
        },
        "required": ["title", "city"],
        **top,
    }


def _bare_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"title": {"type": "string"}, "city": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "required": ["title", "city"],
    }


def _tool_bodies(schema: dict[str, Any]) -> dict[str, tuple[Any, dict[str, Any]]]:
    return {
        "anthropic": (ANTHROPIC_MESSAGES, {"tools": [{"name": "f", "input_schema": schema}]}),
        "chat": (OPENAI_CHAT, {"tools": [{"type": "function", "function": {"name": "f", "parameters": schema}}]}),
        "responses": (OPENAI_RESPONSES, {"tools": [{"type": "function", "name": "f", "parameters": schema}]}),
        "gemini": (GEMINI, {"tools": [{"functionDeclarations": [{"name": "f", "parametersJsonSchema": schema}]}]}),
    }


def test_a_tool_schemas_title_annotations_equal_their_absence():
    # pydantic-ai's AnthropicModel sends pydantic's `"title": "CityLocation"`, the recording
    # (another client) had none: JSON Schema's annotations are not required and validate nothing
    titled, bare = _tool_bodies(_schema(title="CityLocation")), _tool_bodies(_bare_schema())
    for name, (api, body) in titled.items():
        assert equivalence.compare(api, body, bare[name][1]) == [], name
        assert equivalence.SCHEMA_TITLE in equivalence.declared(api), name


def test_a_schema_title_that_is_a_property_or_a_real_schema_change_still_differs():
    bare = _tool_bodies(_bare_schema())
    no_title_property = _bare_schema()
    del no_title_property["properties"]["title"]
    no_title_property["required"] = ["city"]
    changed = _bare_schema()
    changed["properties"]["city"]["anyOf"][0]["type"] = "integer"
    for other in (no_title_property, changed, {**_bare_schema(), "title": 3}):
        for name, (api, body) in _tool_bodies(other).items():
            assert equivalence.compare(api, body, bare[name][1]) != [], (name, other)


def _responses(description: Any = "f does it", status: Any = "completed") -> dict[str, Any]:
    tool: dict[str, Any] = {"type": "function", "name": "f", "parameters": {"type": "object"}}
    if description != "absent":
        tool["description"] = description
    call: dict[str, Any] = {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}
    if status != "absent":
        call["status"] = status
    return {"input": [{"role": "user", "content": "hi"}, call], "tools": [tool]}


def test_responses_null_status_and_null_or_empty_tool_description_equal_absent():
    # pydantic-ai's recordings replay `"status": null` and send `"description": null`
    for a, b in (
        (_responses(status=None), _responses(status="absent")),
        (_responses(description=None), _responses(description="")),
        (_responses(description=None), _responses(description="absent")),
    ):
        assert equivalence.compare(OPENAI_RESPONSES, a, b) == [], (a, b)


def test_responses_a_status_or_description_that_says_something_still_differs():
    assert equivalence.compare(OPENAI_RESPONSES, _responses(status="incomplete"), _responses(status="absent")) != []
    assert equivalence.compare(OPENAI_RESPONSES, _responses(), _responses(description=None)) != []
    assert equivalence.compare(OPENAI_RESPONSES, _responses(status=None), _responses(status="completed")) != []


def _openrouter(**top: Any) -> dict[str, Any]:
    return {"model": "google/gemini-2.5-flash", "messages": [{"role": "user", "content": "Hi"}], "stream": True, **top}


def test_openrouter_stream_usage_option_is_no_difference():
    """openrouter.ai ChatStreamOptions: include_usage "has no effect. Full usage details are
    always included": a stream recorded without it (logfire's OpenRouter cassettes) equals the
    reference adapter's rendering with it, and the other way round."""
    asked = _openrouter(stream_options={"include_usage": True})
    assert equivalence.compare(OPENROUTER_CHAT, _openrouter(), asked) == []
    assert equivalence.compare(OPENROUTER_CHAT, asked, _openrouter()) == []
    assert (
        equivalence.compare(OPENROUTER_CHAT, _openrouter(), _openrouter(stream_options={"include_usage": False})) == []
    )
    # any other stream option, or the stream itself, still differs
    assert equivalence.compare(OPENROUTER_CHAT, _openrouter(), _openrouter(stream_options={"other": 1})) != []
    assert equivalence.compare(OPENROUTER_CHAT, _openrouter(), _openrouter(stream=False)) != []


def test_openrouter_stream_false_equals_an_absent_stream_and_true_still_differs():
    """openrouter.ai's request schema, `stream?: boolean; // Enable streaming`: a non-streamed
    request recorded with `stream: false` (maruel/genai's OpenRouter cassettes) equals the
    reference adapter's rendering without it; a stream is still no non-stream."""
    plain = {k: v for k, v in _openrouter().items() if k != "stream"}
    assert equivalence.compare(OPENROUTER_CHAT, _openrouter(stream=False), plain) == []
    assert equivalence.compare(OPENROUTER_CHAT, plain, _openrouter(stream=False)) == []
    assert equivalence.compare(OPENROUTER_CHAT, _openrouter(), plain) != []
    assert equivalence.compare(OPENROUTER_CHAT, plain, _openrouter()) != []


def _anthropic(**top: Any) -> dict[str, Any]:
    return {"model": "claude-haiku-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}], **top}


def test_anthropic_empty_tools_list_equals_absent_tools():
    """messages/create `tools`, "Definitions of tools that the model may use": an empty list
    defines none, as no list does (chatlas records `tools: []`, which the API answers; the
    reference adapter renders no `tools`). A list holding a tool still differs."""
    assert equivalence.compare(ANTHROPIC_MESSAGES, _anthropic(tools=[]), _anthropic()) == []
    assert equivalence.compare(ANTHROPIC_MESSAGES, _anthropic(), _anthropic(tools=[])) == []
    tool = {"name": "t", "description": "d", "input_schema": {"type": "object"}}
    assert equivalence.compare(ANTHROPIC_MESSAGES, _anthropic(tools=[tool]), _anthropic()) != []
    assert equivalence.compare(ANTHROPIC_MESSAGES, _anthropic(tools=[]), _anthropic(tools=[tool])) != []


def test_a_gemini_part_thought_false_equals_its_absence_and_true_still_differs():
    """Part.thought is a proto3 bool ("Optional. Indicates if the part is thought from the
    model."): `false` is its default, so a part sent with `thought: false` (0xPlaygrounds/rig
    sends it on every part, the system instruction's too) is a part sent without it; a
    `thought: true` dropped is still a difference."""

    def body(**part: Any) -> dict[str, Any]:
        return {
            "contents": [{"role": "user", "parts": [{"text": "hi", **part}]}],
            "systemInstruction": {"parts": [{"text": "be brief", **part}]},
        }

    assert equivalence.compare(GEMINI, body(thought=False), body()) == []
    assert equivalence.compare(GEMINI, body(thought=True), body()) == [
        "/contents/0/parts/0/thought: missing from rendered (recorded true)",
        "/systemInstruction/parts/0/thought: missing from rendered (recorded true)",
    ]


def test_a_gemini_request_or_tool_field_set_to_null_equals_its_absence_a_null_argument_does_not():
    """proto3 JSON: "if its value is null, it will be interpreted as the appropriate default
    value"; every GenerateContentRequest and Tool field is a message, list or string (0xPlaygrounds/rig
    sends `systemInstruction`, `toolConfig`, `safetySettings` and a tool's `codeExecution` as
    null). A null inside a Struct (a call's `args`) is a value: still compared."""
    c = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    nulls = {**c, "systemInstruction": None, "toolConfig": None, "safetySettings": None}
    assert equivalence.compare(GEMINI, nulls, c) == []
    decl = {"name": "f", "parameters": {"type": "object"}}
    assert (
        equivalence.compare(
            GEMINI,
            {**c, "tools": [{"codeExecution": None, "functionDeclarations": [decl]}]},
            {**c, "tools": [{"functionDeclarations": [decl]}]},
        )
        == []
    )
    call = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {"x": None}}}]}
    bare = {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]}
    assert equivalence.compare(GEMINI, {"contents": [call]}, {"contents": [bare]}) == [
        "/contents/0/parts/0/functionCall/args/x: missing from rendered (recorded null)"
    ]
