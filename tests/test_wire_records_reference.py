"""The wire records of the two reference APIs: probes locate the documented fields.

Bodies here are written by hand from the providers' documentation examples, never rendered
by an adapter, so a probe that looks in the wrong place (or searches text) fails.
"""

from __future__ import annotations

import json

import pytest

from conformance.wire import registry
from conformance.wire.anthropic_messages import ANTHROPIC_COUNT_TOKENS, ANTHROPIC_MESSAGES
from conformance.wire.bedrock import BEDROCK_CONVERSE
from conformance.wire.openai_chat import OPENAI_CHAT, parse_data_url

ANTHROPIC_REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
                {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
                {"type": "text", "text": "What is the weather in Paris and London?"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Two cities: two calls.", "signature": "EqQBCkYIARgCIkA="},
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
                {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "London"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "15 C"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_01B",
                    "is_error": True,
                    "content": [
                        {"type": "text", "text": "ConnectionError: service unavailable"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": "R0lGOD=="}},
                    ],
                },
            ],
        },
    ],
}


def test_anthropic_request_probes_locate_documented_fields():
    p = ANTHROPIC_MESSAGES.probes
    assert [(x.pointer, x.value) for x in p.system(ANTHROPIC_REQUEST)] == [("/system/0/text", "You are terse.")]
    assert [x.pointer for x in p.thinking_text(ANTHROPIC_REQUEST)] == ["/messages/1/content/0/thinking"]
    assert [x.value for x in p.signatures(ANTHROPIC_REQUEST)] == ["EqQBCkYIARgCIkA="]
    assert [(x.pointer, x.value) for x in p.redacted_thinking(ANTHROPIC_REQUEST)] == [
        ("/messages/1/content/1/data", "EmwKAhgBEgy3va3pzix/LafPsn4a")
    ]
    assert [x.value for x in p.tool_use_ids(ANTHROPIC_REQUEST)] == ["toolu_01A", "toolu_01B"]
    assert [(x.pointer, x.value) for x in p.tool_result_ids(ANTHROPIC_REQUEST)] == [
        ("/messages/2/content/0/tool_use_id", "toolu_01A"),
        ("/messages/2/content/1/tool_use_id", "toolu_01B"),
    ]
    assert [(x.pointer, x.value) for x in p.tool_result_errors(ANTHROPIC_REQUEST)] == [
        ("/messages/2/content/0", False),
        ("/messages/2/content/1/is_error", True),
    ]
    images = p.images(ANTHROPIC_REQUEST)
    assert [x.pointer for x in images] == [
        "/messages/0/content/0/source",
        "/messages/0/content/1/source",
        "/messages/2/content/1/content/1/source",
    ]
    assert images[0].value == {"kind": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    assert images[1].value == {"kind": "url", "media_type": None, "url": "https://example.com/cat.jpg"}
    assert images[2].value["media_type"] == "image/gif"


def test_anthropic_probes_do_not_search_text():
    """A marker inside a text block is not a signature, a system prompt or an id."""
    body = {
        "system": "plain",
        "messages": [
            {"role": "user", "content": "signature toolu_01A is_error redacted_thinking"},
            {"role": "assistant", "content": [{"type": "text", "text": '{"signature": "x"}'}]},
        ],
    }
    p = ANTHROPIC_MESSAGES.probes
    for probe in (p.thinking_text, p.signatures, p.redacted_thinking, p.tool_use_ids, p.tool_result_ids):
        assert probe(body) == []
    assert [(x.pointer, x.value) for x in p.system(body)] == [("/system", "plain")]
    assert p.system({"messages": []}) == []


RESPONSE_CACHED = {
    "id": "msg_01",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5",
    "content": [{"type": "text", "text": "Hi"}],
    "stop_reason": "pause_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 21,
        "cache_creation_input_tokens": 188086,
        "cache_read_input_tokens": 0,
        "output_tokens": 393,
    },
}


def test_anthropic_response_probes_and_stop_map():
    p = ANTHROPIC_MESSAGES.probes
    assert p.response_stop_reason(RESPONSE_CACHED) == "pause_turn"
    assert p.response_usage(RESPONSE_CACHED) == {"input": 21, "output": 393, "cache_read": 0, "cache_write": 188086}
    assert p.response_usage({"usage": None}) is None
    stops = ANTHROPIC_MESSAGES.stop_reasons
    assert set(stops) == {
        "end_turn",
        "max_tokens",
        "stop_sequence",
        "tool_use",
        "pause_turn",
        "refusal",
        "model_context_window_exceeded",
    }
    assert stops["stop_sequence"] == "stop_sequence" and stops["model_context_window_exceeded"] == "max_tokens"
    assert set(stops.values()) <= {"end_turn", "max_tokens", "stop_sequence", "tool_use", "cancelled", "error"}


def test_anthropic_record_facts():
    a = ANTHROPIC_MESSAGES
    assert a.carries.tool_result_error and a.carries.thinking_signature and a.carries.redacted_thinking
    assert a.carries.cache_write_tokens and a.carries.images_url
    assert a.tool_ids.accepts("toolu_01A09q90qw90lq917835lq9") and not a.tool_ids.accepts("call:1")
    assert not a.tool_ids.accepts("") and not a.tool_ids.accepts("tu.1")
    assert a.is_streaming("https://api.anthropic.com/v1/messages", {"stream": True})
    assert not a.is_streaming("https://api.anthropic.com/v1/messages", {"stream": "yes"})
    assert not a.is_streaming("https://api.anthropic.com/v1/messages", None)
    assert ANTHROPIC_COUNT_TOKENS.chat is False
    assert not ANTHROPIC_COUNT_TOKENS.is_streaming("", {"stream": True})


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://api.anthropic.com/v1/messages", "anthropic-messages"),
        ("https://api.anthropic.com/v1/messages?beta=true", "anthropic-messages"),
        ("https://api.anthropic.com/v1/messages/count_tokens", "anthropic-count-tokens"),
        ("https://api.openai.com/v1/chat/completions", "openai-chat-completions"),
        ("https://x.openai.azure.com/openai/deployments/d/chat/completions?api-version=1", "openai-chat-completions"),
        ("https://api.anthropic.com/v1/messages/batches", None),
        ("https://api.openai.com/v1/completions", None),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-lite-v1%3A0/converse", "bedrock-converse"),
        ("https://bedrock-runtime.eu-west-1.amazonaws.com/model/m/converse-stream", "bedrock-converse"),
        ("https://bedrock-runtime.us-east-1.amazonaws.com/model/m/count-tokens", "bedrock-count-tokens"),
        (
            "https://bedrock-runtime.us-east-1.amazonaws.com/guardrail/g1/version/1/apply",
            None,
        ),  # ApplyGuardrail: no record
    ],
)
def test_registry_attributes_urls(url, name):
    api = registry.api_for_url(url)
    assert (api.name if api else None) == name


def test_registry_order_most_specific_first():
    names = [a.name for a in registry.APIS]
    assert names.index("anthropic-count-tokens") < names.index("anthropic-messages")


OPENAI_REQUEST = {
    "model": "gpt-4o",
    "messages": [
        {"role": "developer", "content": "You are terse."},
        {"role": "system", "content": [{"type": "text", "text": "Answer in French."}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is in these images?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png", "detail": "low"}},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/4AAQ"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_abc", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}},
                {"id": "call_def", "type": "function", "function": {"name": "f", "arguments": '{"a": 2}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "call_abc", "content": "error: failed"},
        {"role": "tool", "tool_call_id": "call_def", "content": "ok"},
    ],
}


def test_openai_request_probes_locate_documented_fields():
    p = OPENAI_CHAT.probes
    assert [(x.pointer, x.value) for x in p.system(OPENAI_REQUEST)] == [
        ("/messages/0/content", "You are terse."),
        ("/messages/1/content/0/text", "Answer in French."),
    ]
    assert [(x.pointer, x.value) for x in p.tool_use_ids(OPENAI_REQUEST)] == [
        ("/messages/3/tool_calls/0/id", "call_abc"),
        ("/messages/3/tool_calls/1/id", "call_def"),
    ]
    assert [(x.pointer, x.value) for x in p.tool_result_ids(OPENAI_REQUEST)] == [
        ("/messages/4/tool_call_id", "call_abc"),
        ("/messages/5/tool_call_id", "call_def"),
    ]
    images = p.images(OPENAI_REQUEST)
    assert [x.value for x in images] == [
        {"kind": "url", "media_type": None, "url": "https://example.com/cat.png"},
        {"kind": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"},
    ]
    # the API has no error flag, no thinking and no signatures
    for probe in (p.tool_result_errors, p.thinking_text, p.signatures, p.redacted_thinking):
        assert probe(OPENAI_REQUEST) == []
    assert not OPENAI_CHAT.carries.tool_result_error and not OPENAI_CHAT.carries.thinking_signature


def test_openai_usage_takes_cached_tokens_out_of_prompt_tokens():
    body = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "x"}, "finish_reason": "length"}],
        "usage": {
            "prompt_tokens": 2006,
            "completion_tokens": 300,
            "total_tokens": 2306,
            "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
        },
    }
    p = OPENAI_CHAT.probes
    assert p.response_usage(body) == {"input": 86, "output": 300, "cache_read": 1920, "cache_write": 0}
    assert p.response_stop_reason(body) == "length"
    assert p.response_stop_reason({"choices": []}) is None
    assert OPENAI_CHAT.stop_reasons == {
        "stop": "end_turn",
        "length": "max_tokens",
        "tool_calls": "tool_use",
        "function_call": "tool_use",
        "content_filter": "end_turn",
    }


def test_openai_tool_id_rule_and_data_urls():
    assert OPENAI_CHAT.tool_ids.accepts("call_" + "x" * 35) and not OPENAI_CHAT.tool_ids.accepts("x" * 41)
    assert parse_data_url("data:image/PNG;base64,AAAA") == ("image/png", "AAAA")
    assert parse_data_url("data:image/png;name=a.png;base64,AAAA") == ("image/png", "AAAA")
    assert parse_data_url("data:image/png,AAAA") is None  # not base64
    assert parse_data_url("https://example.com/data:image/png;base64,AAAA") is None


def test_records_are_json_facts():
    for api in (ANTHROPIC_MESSAGES, OPENAI_CHAT, BEDROCK_CONVERSE):
        assert api.docs and all(d.startswith("https://") for d in api.docs)
        json.dumps(dict(api.stop_reasons))


def test_reference_adapters_declare_what_their_wire_api_can_carry():
    """An adapter's declared capabilities never exceed what the documented wire format carries."""
    from conformance.adapters import AnthropicAdapter, OpenAIChatAdapter
    from conformance.adapters.bedrock import BedrockAdapter

    paths = {
        "anthropic-messages": "/v1/messages",
        "openai-chat-completions": "/v1/chat/completions",
        "bedrock-converse": "/model/m/converse",
    }
    for adapter in (AnthropicAdapter(), OpenAIChatAdapter(), BedrockAdapter()):
        api = registry.get(adapter.wire_api)
        caps, carries = adapter.capabilities, api.carries
        assert api.chat and api.matches(paths[api.name])
        if caps["supports_thinking"]:
            assert carries.thinking_text and carries.thinking_signature
        if caps["supports_images"]:
            assert carries.images_base64
        if caps["supports_parallel_tool_calls"]:
            assert carries.parallel_tool_calls
        if caps["supports_prompt_caching"]:
            assert carries.cache_read_tokens
        assert caps["supports_system_prompt"] == carries.system_prompt
        for tool_id in (adapter.new_provider_tool_id() for _ in range(5)):
            assert api.tool_ids.accepts(tool_id), tool_id
