"""The OpenAI Chat Completions reference adapter against the shapes the API documents."""

from __future__ import annotations

import json
import logging

import pytest

from conformance.adapters import AdapterOptions, OpenAIChatAdapter, RequestContext, WireResponse
from conformance.adapters.base import AuthError, ContextOverflowError, is_canonical_tool_id
from conformance.formats.canonical.memory import validate_messages
from conformance.suite.scripts import PNG_2PX, conversation, mark

OPTS = AdapterOptions(model="openai:gpt-4o")


def test_request_shape(caplog):
    a = OpenAIChatAdapter()
    msgs, tools = conversation("anthropic")
    with caplog.at_level(logging.WARNING):
        body = a.to_wire(msgs, tools, OPTS).body
    wm = body["messages"]
    assert wm[0] == {"role": "system", "content": mark("system-1") + "\n\n" + mark("system-2")}
    assert wm[1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": f"data:image/png;base64,{PNG_2PX}"},
    }
    calls = wm[2]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["read_file", "search_code"]
    assert all(isinstance(c["function"]["arguments"], str) for c in calls)
    assert json.loads(calls[0]["function"]["arguments"]) == {"path": mark("path"), "limit": 3}
    assert [m["tool_call_id"] for m in wm[3:5]] == [c["id"] for c in calls]
    assert all(len(c["id"]) <= 40 for c in calls) and wm[3]["role"] == "tool" and wm[3]["content"] == mark("result-1")
    assert body["tools"][0] == {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file of the workspace",
            "parameters": tools[0]["input_schema"],
        },
    }
    text = json.dumps(body)
    assert mark("thinking") not in text and mark("redacted-anthropic") not in text
    drops = sorted((r.block_type, r.adapter) for r in caplog.records if getattr(r, "event", None) == "block_dropped")
    assert drops == [("redacted_thinking", "openai-chat"), ("thinking", "openai-chat")]


def test_streaming_request_asks_for_usage():
    body = OpenAIChatAdapter().to_wire([], [], AdapterOptions(model="openai:gpt-4o", stream=True)).body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_structured_output_is_carried():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    body = OpenAIChatAdapter().to_wire([], [], AdapterOptions(model="openai:gpt-4o", output_schema=schema)).body
    assert (
        body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["schema"] == schema
    )


RESPONSE = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o-2024-08-06",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "b"}'},
                    },
                ],
            },
        }
    ],
    "usage": {
        "prompt_tokens": 100,
        "completion_tokens": 20,
        "total_tokens": 120,
        "prompt_tokens_details": {"cached_tokens": 64},
    },
}


def test_response_parse_and_usage_buckets():
    a = OpenAIChatAdapter()
    msg = a.from_wire_response(RESPONSE, RequestContext("sess_1"))
    assert validate_messages([msg], finish=False) == []
    assert [b["type"] for b in msg["content"]] == ["tool_use", "tool_use"]
    assert all(is_canonical_tool_id(b["id"]) for b in msg["content"])
    u = msg["metadata"]["usage"]
    assert (u["input_tokens"], u["cached_input_tokens"], u["output_tokens"]) == (36, 64, 20)
    back = a.to_wire([msg], [], OPTS).body["messages"][0]
    assert [c["id"] for c in back["tool_calls"]] == ["call_a", "call_b"]
    assert back["refusal"] is None


def test_bad_arguments_are_a_wire_error_not_a_crash():
    bad = json.loads(json.dumps(RESPONSE))
    bad["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = "{not json"
    with pytest.raises(Exception) as e:
        OpenAIChatAdapter().from_wire_response(bad, RequestContext("s"))
    assert e.value.error_class == "other"  # type: ignore[attr-defined]


def test_errors_are_classified():
    a = OpenAIChatAdapter()
    with pytest.raises(AuthError):
        a.from_wire_response(
            WireResponse({"error": {"code": "invalid_api_key", "message": "no"}}, 401),
            RequestContext("s"),
        )
    with pytest.raises(ContextOverflowError):
        a.from_wire_response(
            WireResponse({"error": {"code": "context_length_exceeded", "message": "no"}}, 400),
            RequestContext("s"),
        )


def _sse(chunks):
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


PARALLEL = _sse(
    [
        {
            "id": "c",
            "model": "gpt-4o",
            "choices": [{"index": 0, "delta": {"role": "assistant", "content": None}}],
        },
        {
            "id": "c",
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "read_file", "arguments": ""},
                            }
                        ]
                    },
                }
            ],
        },
        {
            "id": "c",
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '{"path": '}}]},
                }
            ],
        },
        {
            "id": "c",
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "delta": {"tool_calls": [{"index": 0, "function": {"arguments": '"a"}'}}]},
                }
            ],
        },
        {
            "id": "c",
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 1,
                                "id": "call_b",
                                "type": "function",
                                "function": {"name": "read_file", "arguments": '{"path": "b"}'},
                            }
                        ]
                    },
                }
            ],
        },
        {
            "id": "c",
            "model": "gpt-4o",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
        },
        {
            "id": "c",
            "model": "gpt-4o",
            "choices": [],
            "usage": {
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "total_tokens": 120,
                "prompt_tokens_details": {"cached_tokens": 64},
            },
        },
    ]
)


def test_parallel_tool_stream_keeps_index_order_and_matches_non_streaming():
    a = OpenAIChatAdapter()
    ctx = RequestContext("sess_1", message_id="01KZZZZZZZZZZZZZZZZZZZZZZZ")
    events = list(a.stream_response([PARALLEL], ctx))
    idx = [e["content_block_index"] for e in events if "content_block_index" in e]
    assert idx == sorted(idx)
    kinds = [e["type"] for e in events]
    assert kinds.count("tool_use_start") == 2 and kinds.count("tool_use_end") == 2 and kinds[-1] == "message_complete"
    assert events[-1]["final_content"] == a.from_wire_response(RESPONSE, ctx)["content"]
    assert events[-1]["usage"]["cached_input_tokens"] == 64 and events[-1]["stop_reason"] == "tool_use"


def test_request_round_trip():
    a = OpenAIChatAdapter()
    body = {
        "model": "gpt-4o",
        "n": 1,
        "tool_choice": "auto",
        "messages": [
            {"role": "developer", "content": "Be brief."},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "https://x/y.png", "detail": "low"}},
                ],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "f", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "done"},
        ],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "f",
                    "description": "",
                    "parameters": {"type": "object"},
                    "strict": True,
                },
            }
        ],
    }
    parsed = a.from_wire_request(body)
    assert [m["role"] for m in parsed.messages] == ["system", "user", "assistant", "tool"]
    assert a.to_wire(parsed.messages, parsed.tools, parsed.options).body == body


def test_tool_result_with_several_text_blocks_survives_the_round_trip():
    # found by tests/test_adapter_fuzz.py: text parts were joined into one block on the way back
    a = OpenAIChatAdapter()
    tid = "tu_01JZ0000000000000000000T01"
    base = {"session_id": "s", "schema_version": 1}
    meta = {"model": "openai:gpt-5", "provider": "openai"}
    msgs = [
        {**base, "id": "01JZ0000000000000000000001", "role": "user", "content": [{"type": "text", "text": "go"}],
         "metadata": {}, "created_at": "2026-05-08T12:00:01.000000Z"},
        {**base, "id": "01JZ0000000000000000000002", "role": "assistant",
         "content": [{"type": "tool_use", "id": tid, "name": "f", "input": {}}], "metadata": meta,
         "created_at": "2026-05-08T12:00:02.000000Z"},
        {**base, "id": "01JZ0000000000000000000003", "role": "tool",
         "content": [{"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": "0"}, {"type": "text", "text": "0"}]}],
         "metadata": {"parent_tool_use_id": tid}, "created_at": "2026-05-08T12:00:03.000000Z"},
    ]  # fmt: skip
    wire = a.to_wire(msgs, [], AdapterOptions(model="openai:gpt-5", max_output_tokens=10))
    tool = wire.body["messages"][-1]
    assert tool["content"] == [{"type": "text", "text": "0"}, {"type": "text", "text": "0"}]
    back = a.from_wire_request(wire.body, session_id="s").messages
    assert back[-1]["content"][0]["content"] == [{"type": "text", "text": "0"}, {"type": "text", "text": "0"}]
