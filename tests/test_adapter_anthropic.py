"""The Anthropic reference adapter against the Messages API shapes it documents."""

from __future__ import annotations

import json
import logging

import pytest

from conformance.adapters import (
    AdapterOptions,
    AnthropicAdapter,
    CriticalBlockError,
    RequestContext,
    WireResponse,
)
from conformance.adapters.base import RateLimitError, is_canonical_tool_id
from conformance.formats.canonical.memory import validate_messages
from conformance.suite.scripts import conversation, mark

OPTS = AdapterOptions(model="anthropic:claude-sonnet-4-5", max_output_tokens=512)


def wire(messages, tools=(), adapter=None, opts=OPTS):
    return (adapter or AnthropicAdapter()).to_wire(list(messages), list(tools), opts).body


def test_system_is_hoisted_and_concatenated():
    msgs, tools = conversation("anthropic")
    body = wire(msgs, tools)
    assert body["system"] == mark("system-1") + "\n\n" + mark("system-2")
    assert all(m["role"] in ("user", "assistant") for m in body["messages"])
    assert body["max_tokens"] == 512 and body["model"] == "claude-sonnet-4-5"


def test_tool_results_share_one_user_message_with_mapped_ids():
    a = AnthropicAdapter()
    msgs, tools = conversation("anthropic")
    body = wire(msgs, tools, a)
    uses = [b for m in body["messages"] for b in m["content"] if b["type"] == "tool_use"]
    results_msg = [m for m in body["messages"] if any(b["type"] == "tool_result" for b in m["content"])]
    assert len(results_msg) == 1 and results_msg[0]["role"] == "user"
    assert [b["tool_use_id"] for b in results_msg[0]["content"]] == [u["id"] for u in uses]
    for u in uses:
        assert a.provider_tool_id.match(u["id"]) and u["id"].startswith("toolu_")
    assert json.loads(json.dumps(uses[1]["input"])) == {"query": mark("query"), "flags": ["i", "w"]}


def test_own_thinking_and_redacted_thinking_restored_exactly():
    msgs, tools = conversation("anthropic")
    body = wire(msgs, tools)
    blocks = [b for m in body["messages"] for b in m["content"]]
    thinking = [b for b in blocks if b["type"] == "thinking"]
    assert thinking == [{"type": "thinking", "thinking": mark("thinking"), "signature": mark("signature-anthropic")}]
    assert [b for b in blocks if b["type"] == "redacted_thinking"] == [
        {"type": "redacted_thinking", "data": mark("redacted-anthropic")}
    ]


def test_foreign_thinking_dropped_with_one_warn_each(caplog):
    msgs, tools = conversation("openai")
    with caplog.at_level(logging.WARNING):
        body = wire(msgs, tools)
    text = json.dumps(body)
    assert mark("thinking") not in text and mark("redacted-openai") not in text
    drops = [r for r in caplog.records if getattr(r, "event", None) == "block_dropped"]
    assert sorted(r.block_type for r in drops) == ["redacted_thinking", "thinking"]
    for r in drops:
        assert r.levelno == logging.WARNING and r.adapter == "anthropic" and r.session_id == msgs[0]["session_id"]
        assert r.message_id in {m["id"] for m in msgs} and "openai" in r.reason


def test_critical_block_fails_with_specific_error():
    msgs, tools = conversation("openai")
    msgs[3]["metadata"]["critical"] = [0]
    with pytest.raises(CriticalBlockError) as e:
        wire(msgs, tools)
    assert e.value.block_type == "thinking" and e.value.message_id == msgs[3]["id"]


RESPONSE = {
    "id": "msg_01A",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [
        {"type": "thinking", "thinking": "Let me look.", "signature": "EqQBsig=="},
        {
            "type": "text",
            "text": "Reading it.",
            "citations": [{"type": "char_location", "cited_text": "x"}],
        },
        {
            "type": "tool_use",
            "id": "toolu_01XYZ",
            "name": "read_file",
            "input": {"path": "README.md"},
        },
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 120,
        "output_tokens": 40,
        "cache_read_input_tokens": 7,
        "cache_creation_input_tokens": 3,
    },
}


def test_response_parses_to_valid_message_and_ids_round_trip():
    a = AnthropicAdapter()
    ctx = RequestContext(session_id="sess_1")
    msg = a.from_wire_response(RESPONSE, ctx)
    assert validate_messages([msg], finish=False) == []
    tu = msg["content"][2]
    assert is_canonical_tool_id(tu["id"]) and tu["input"] == {"path": "README.md"}
    assert msg["content"][0] == {
        "type": "thinking",
        "text": "Let me look.",
        "signature": "EqQBsig==",
    }
    assert msg["metadata"]["usage"]["cached_input_tokens"] == 7 and msg["metadata"]["usage"]["input_tokens"] == 120
    assert msg["metadata"]["model"] == "anthropic:claude-sonnet-4-5-20250929"
    # serializing back restores the provider id, the signature and the citation
    result = {
        "id": "01KZZZZZZZZZZZZZZZZZZZZZZZ",
        "session_id": "sess_1",
        "role": "tool",
        "created_at": msg["created_at"],
        "schema_version": 1,
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": tu["id"],
                "content": [{"type": "text", "text": "hi"}],
            }
        ],
        "metadata": {"parent_tool_use_id": tu["id"]},
    }
    body = a.to_wire([msg, result], [], OPTS).body
    assert body["messages"][0]["content"] == RESPONSE["content"]
    assert body["messages"][1]["content"][0]["tool_use_id"] == "toolu_01XYZ"
    assert a.from_wire_response(RESPONSE, ctx)["content"][2]["id"] == tu["id"]  # stable across calls


def test_errors_are_classified():
    a = AnthropicAdapter()
    with pytest.raises(RateLimitError):
        a.from_wire_response(
            WireResponse(
                {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                529,
            ),
            RequestContext("s"),
        )
    with pytest.raises(Exception) as e:
        a.from_wire_response(
            WireResponse(
                {
                    "type": "error",
                    "error": {
                        "type": "invalid_request_error",
                        "message": "prompt is too long: 210000 tokens > 200000 maximum; context",
                    },
                },
                400,
            ),
            RequestContext("s"),
        )
    assert e.value.error_class == "context_overflow"  # type: ignore[attr-defined]


SSE = """event: message_start
data: {"type":"message_start","message":{"id":"msg_01A","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"usage":{"input_tokens":120,"output_tokens":1,"cache_read_input_tokens":7,"cache_creation_input_tokens":3}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me "}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"look."}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBsig=="}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: ping
data: {"type": "ping"}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Reading it."}}

event: content_block_stop
data: {"type":"content_block_stop","index":1}

event: content_block_start
data: {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_01XYZ","name":"read_file","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\\"path\\": \\"READ"}}

event: content_block_delta
data: {"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"ME.md\\"}"}}

event: content_block_stop
data: {"type":"content_block_stop","index":2}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":40}}

event: message_stop
data: {"type":"message_stop"}

"""


@pytest.mark.parametrize("size", [7, 4096])
def test_stream_events_and_aggregate(size):
    a = AnthropicAdapter()
    ctx = RequestContext(session_id="sess_1", message_id="01KZZZZZZZZZZZZZZZZZZZZZZZ")
    raw = SSE.encode()
    events = list(a.stream_response([raw[i : i + size] for i in range(0, len(raw), size)], ctx))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-1] == "message_complete"
    assert kinds.count("tool_use_start") == kinds.count("tool_use_end") == 1
    idx = [e["content_block_index"] for e in events if "content_block_index" in e]
    assert idx == sorted(idx)
    assert [e["partial_json"] for e in events if e["type"] == "tool_use_input_delta"] == [
        '{"path": "READ',
        'ME.md"}',
    ]
    final = events[-1]
    parsed = a.from_wire_response(RESPONSE, ctx)
    assert final["final_content"] == parsed["content"]
    assert final["usage"] == {
        "input_tokens": 120,
        "output_tokens": 40,
        "cached_input_tokens": 7,
        "cache_creation_input_tokens": 3,
    }
    sig = [e for e in events if e["type"] == "thinking_delta" and e.get("signature")]
    assert sig == [
        {
            "type": "thinking_delta",
            "message_id": ctx.message_id,
            "content_block_index": 0,
            "text": "",
            "signature": "EqQBsig==",
        }
    ]


def test_request_round_trip_keeps_provider_fields():
    a = AnthropicAdapter()
    body = {
        "model": "claude-haiku-4-5",
        "max_tokens": 100,
        "temperature": 0.5,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "messages": [
            {"role": "user", "content": "Hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_A", "name": "t", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_A", "content": "ok"},
                    {"type": "text", "text": "and?"},
                ],
            },
        ],
        "tools": [
            {"name": "t", "description": "", "input_schema": {"type": "object"}},
            {"type": "web_search_20250305", "name": "web_search"},
        ],
    }
    parsed = a.from_wire_request(body)
    assert [m["role"] for m in parsed.messages] == ["system", "user", "assistant", "tool", "user"]
    back = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    assert back["system"] == body["system"] and back["thinking"] == body["thinking"] and back["tools"] == body["tools"]
    assert back["messages"][2] == {
        "role": "user",
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_A",
                "content": [{"type": "text", "text": "ok"}],
            }
        ],
    }
    assert back["messages"][3] == {"role": "user", "content": [{"type": "text", "text": "and?"}]}


def test_estimate_counts_tools_and_images():
    a = AnthropicAdapter()
    msgs, tools = conversation("anthropic")
    plain = a.estimate_input_tokens(msgs, [])
    assert a.estimate_input_tokens(msgs, tools) > plain + 300
    assert plain > 0
