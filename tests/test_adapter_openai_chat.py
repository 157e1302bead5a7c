"""The OpenAI Chat Completions reference adapter against the shapes the API documents."""

from __future__ import annotations

import copy
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


# -- the project's own cassettes (hand-written from OpenAI's documented examples) --------------

from pathlib import Path  # noqa: E402

from conformance.adapters.base import (  # noqa: E402
    InvalidRequestError,
    RateLimitError,
    ServerError,
    WireFormatError,
)
from conformance.suite.cassettes import load_cassette  # noqa: E402
from conformance.wire.openai_chat import OPENAI_CHAT  # noqa: E402

CASSETTES = Path(__file__).resolve().parent.parent / "cassettes" / "openai-chat"


def it(name, i):
    return load_cassette(CASSETTES / f"{name}.yaml").interactions[i]


def ctx(sid="sess_c"):
    return RequestContext(session_id=sid, message_id="01KZZZZZZZZZZZZZZZZZZZZZZZ")


def stream(text, sid="sess_c", adapter=None):
    return list((adapter or OpenAIChatAdapter()).stream_response([text.encode()], ctx(sid)))


@pytest.mark.parametrize(
    ("name", "i", "raw", "canonical"),
    [
        ("text", 0, "stop", "end_turn"),
        ("text", 2, "length", "max_tokens"),
        ("text", 4, "stop", "end_turn"),  # a matched stop sequence also reads "stop"
        ("text", 6, "content_filter", "end_turn"),
        ("tools", 0, "tool_calls", "tool_use"),
    ],
)
def test_every_finish_reason_parsed_and_streamed(name, i, raw, canonical):
    a = OpenAIChatAdapter()
    msg = a.from_wire_response(WireResponse(it(name, i).response_json), ctx())
    assert msg["metadata"]["provider_raw"]["openai-chat"]["finish_reason"] == raw
    assert a.stop_reason_of(raw) == canonical == OPENAI_CHAT.stop_reasons[raw]
    done = stream(it(name, i + 1).response_text)[-1]
    assert done["type"] == "message_complete" and done["stop_reason"] == canonical
    assert [b["type"] for b in done["final_content"]] == [b["type"] for b in msg["content"]]


def test_parallel_tool_call_stream_gives_literal_fragments_and_the_parsed_calls():
    a = OpenAIChatAdapter()
    msg = a.from_wire_response(WireResponse(it("tools", 0).response_json), ctx())
    events = stream(it("tools", 1).response_text, adapter=a)
    assert [e["partial_json"] for e in events if e["type"] == "tool_use_input_delta"] == [
        '{"location":',
        '"Paris, France"}',
        '{"location":"Bogota,',
        ' Colombia"}',
    ]
    ends = [e["final_input"] for e in events if e["type"] == "tool_use_end"]
    assert ends == [{"location": "Paris, France"}, {"location": "Bogota, Colombia"}]
    assert events[-1]["final_content"] == msg["content"]  # same session, same canonical ids


def test_tool_error_result_has_no_wire_flag_and_is_logged(caplog):
    a = OpenAIChatAdapter()
    parsed = a.from_wire_request(it("tools", 2).request_body, session_id="sess_t")
    results = [m for m in parsed.messages if m["role"] == "tool"]
    assert results[1]["content"][0]["content"] == [
        {"type": "text", "text": "Error: the weather service is unavailable (HTTP 503)"}
    ]
    results[1]["content"][0]["is_error"] = True
    with caplog.at_level(logging.WARNING):
        body = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    assert OPENAI_CHAT.probes.tool_result_errors(body) == [] and not OPENAI_CHAT.carries.tool_result_error
    assert any(getattr(r, "field", None) == "is_error" for r in caplog.records)
    assert body["messages"][3] == {
        "role": "tool",
        "tool_call_id": "call_67890abc",
        "content": "Error: the weather service is unavailable (HTTP 503)",
    }


def test_cached_tokens_are_taken_out_of_prompt_tokens():
    """Upstream: `prompt_tokens` includes `cached_tokens` (prompt caching guide). The contract
    §7.2 text maps prompt_tokens -> input_tokens directly, which counts the cached tokens twice
    when the core prices input + cached; this adapter follows upstream (disjoint buckets)."""
    a = OpenAIChatAdapter()
    u = a.from_wire_response(WireResponse(it("cache", 0).response_json), ctx())["metadata"]["usage"]
    assert (u["input_tokens"], u["cached_input_tokens"], u["cache_creation_input_tokens"], u["output_tokens"]) == (
        86,
        1920,
        0,
        300,
    )
    assert stream(it("cache", 1).response_text)[-1]["usage"] == {
        "input_tokens": 86,
        "output_tokens": 300,
        "cached_input_tokens": 1920,
        "cache_creation_input_tokens": 0,
    }
    reasoning = a.from_wire_response(WireResponse(it("cache", 2).response_json), ctx())
    assert reasoning["metadata"]["usage"]["output_tokens"] == 205  # reasoning tokens are output tokens
    assert [b["type"] for b in reasoning["content"]] == ["text"]  # no thinking on this wire


def test_streaming_requests_ask_for_usage_even_with_other_stream_options():
    opts = AdapterOptions(model="openai:gpt-4o", stream=True, extra={"stream_options": {"include_obfuscation": False}})
    body = OpenAIChatAdapter().to_wire([], [], opts).body
    assert body["stream_options"] == {"include_obfuscation": False, "include_usage": True}


def test_image_cassettes_url_and_data_url():
    a = OpenAIChatAdapter()
    url = a.from_wire_request(it("image", 0).request_body, session_id="s1").messages[0]["content"][1]
    assert url["source"]["kind"] == "url" and url["media_type"] == "image/jpeg"  # placeholder, not a guess
    b64 = a.from_wire_request(it("image", 2).request_body, session_id="s2")
    img = b64.messages[0]["content"][1]
    assert img["source"]["kind"] == "base64" and img["media_type"] == "image/png"
    back = a.to_wire(b64.messages, [], b64.options).body
    assert back["messages"][0]["content"][1]["image_url"]["detail"] == "low"
    assert stream(it("image", 3).response_text)[-1]["final_content"] == [
        {"type": "text", "text": "A single red pixel."}
    ]


def test_data_url_with_parameters_reads_back_as_base64_and_url_media_is_kept():
    a = OpenAIChatAdapter()
    parsed = a.from_wire_request(
        {
            "model": "gpt-4o",
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "image_url", "image_url": {"url": "data:image/png;name=a.png;base64,AAAA"}}],
                }
            ],
        },
        session_id="s",
    )
    assert parsed.messages[0]["content"][0] == {
        "type": "image",
        "source": {"kind": "base64", "data": "AAAA"},
        "media_type": "image/png",
    }
    msg = {
        "id": "01KZZZZZZZZZZZZZZZZZZZZZZ0",
        "session_id": "s",
        "role": "user",
        "created_at": "2026-01-01T00:00:00.000000Z",
        "schema_version": 1,
        "metadata": {},
        "content": [
            {"type": "image", "source": {"kind": "url", "data": "https://example.com/0.m"}, "media_type": "image/gif"}
        ],
    }
    body = a.to_wire([msg], [], OPTS).body
    back = a.from_wire_request(body, session_id="s").messages[0]["content"][0]
    assert back["media_type"] == "image/gif"  # as rendered; `.m` would guess a Mathematica type


def test_empty_tool_result_renders_a_string_not_an_empty_list():
    a = OpenAIChatAdapter()
    msgs, tools = conversation("openai")
    for m in msgs:
        if m["role"] == "tool":
            m["content"][0]["content"] = []
    body = a.to_wire(msgs, tools, OPTS).body
    assert [m["content"] for m in body["messages"] if m["role"] == "tool"] == ["", ""]


@pytest.mark.parametrize(
    ("i", "cls", "error_class", "retryable"),
    [
        (0, InvalidRequestError, "invalid_request", False),
        (1, ContextOverflowError, "context_overflow", False),
        (2, AuthError, "auth", False),
        (3, AuthError, "auth", False),
        (4, InvalidRequestError, "invalid_request", False),
        (5, RateLimitError, "rate_limit", True),
        (6, RateLimitError, "rate_limit", True),
        (7, ServerError, "server_error", True),
        (8, ServerError, "server_error", True),
    ],
)
def test_http_errors_raise_the_documented_subclass_with_fields(i, cls, error_class, retryable):
    rec = it("errors", i)
    headers = {k: v[0] for k, v in rec.headers.items()}
    with pytest.raises(cls) as e:
        OpenAIChatAdapter().from_wire_response(WireResponse(rec.response_json, rec.status, headers), ctx())
    err = e.value
    assert type(err) is cls and err.error_class == error_class and err.retryable is retryable
    assert err.provider_status == rec.status and err.request_id == f"req_{rec.status}c0ffee0123456789abcdef0123"
    if i == 5:
        assert err.retry_after_seconds == 0.2  # retry-after-ms: 200


def test_mid_stream_error_closes_then_raises():
    events = []
    with pytest.raises(ServerError):
        for ev in OpenAIChatAdapter().stream_response([it("errors", 9).response_text], ctx()):
            events.append(ev)
    assert [e["type"] for e in events][-2:] == ["error", "message_complete"]
    assert events[-1]["stop_reason"] == "error" and events[-1]["final_content"] == [
        {"type": "text", "text": "Once upon a time"}
    ]


# -- strict stream parsing -------------------------------------------------------------------


def _chunk(delta=None, finish=None, index=0, usage=None, choices=True):
    body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    body["choices"] = [{"index": index, "delta": delta or {}, "finish_reason": finish}] if choices else []
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body)}\n\n"


_DONE = "data: [DONE]\n\n"
_HI = _chunk({"role": "assistant", "content": "Hi"})


def _call(index, id_=None, name=None, args=None):
    fn = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    call = {"index": index, **({"id": id_, "type": "function"} if id_ else {}), "function": fn}
    return _chunk({"tool_calls": [call]})


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (_DONE, "event 1", "[DONE] with no chunk"),
        ("\n\n" + _DONE, "event 1", "[DONE] with no chunk"),
        (_HI, "event 2", "ended before data: [DONE]"),
        (_HI + _chunk(finish="stop"), "event 3", "ended before data: [DONE]"),
        (_HI + _chunk(finish="stop") + _DONE + _HI, "event 4", "after [DONE]"),
        (_call(0, "call_1", "f", '{"a": ') + _chunk(finish="tool_calls") + _DONE, "event 2", "not a JSON object"),
        (_call(0, "call_1", "f", "[1]") + _call(1, "call_2", "g", "{}"), "event 2", "not a JSON object"),
        (_call(0, None, "f", "{}"), "event 1", "without an id"),
        (_call(-1, "call_1", "f", "{}"), "event 1", "index -1"),
        (
            _call(0, "call_1", "f", '{"a"') + _call(1, "call_2", "g", "{}"),
            "event 2",
            "not a JSON object",
        ),
        (_HI + _chunk(finish="stop") + _chunk({"content": "more"}) + _DONE, "event 3", "after finish_reason"),
        ("data: {not json}\n\n", "event 1", "not JSON"),
    ],
)
def test_malformed_streams_are_located_wire_errors(text, where, what):
    events = []
    with pytest.raises(WireFormatError) as e:
        for ev in OpenAIChatAdapter().stream_response([text.encode()], ctx()):
            events.append(ev)
    assert where in str(e.value) and what in str(e.value), str(e.value)
    if events:
        assert events[-1]["type"] == "message_complete" and events[-1]["stop_reason"] == "error"
        # broken arguments are never turned into {}
        assert all(b["input"] != {} for b in events[-1]["final_content"] if b["type"] == "tool_use")


def test_a_call_the_token_limit_cut_short_reads_with_empty_input_and_a_warning(caplog):
    """finish_reason `length` ("the maximum number of tokens specified in the request was
    reached") may end a reply inside a call's arguments: the reply is read, not refused; the
    cut call's input is `{}` as contract §9.4 closes a call whose JSON did not complete, and
    a WARN line names it with the text the reply carried (streamed and not)."""
    cut = '{"city": "Par'
    stream = _HI + _call(0, "call_1", "weather", cut) + _chunk(finish="length") + _DONE
    with caplog.at_level(logging.WARNING):
        events = list(OpenAIChatAdapter().stream_response([stream.encode()], ctx()))
        reply = {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "gpt-4o",
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": "Hi",
                        "tool_calls": [
                            {"id": "call_2", "type": "function", "function": {"name": "weather", "arguments": cut}}
                        ],
                    },
                    "finish_reason": "length",
                }
            ],
            "usage": {"prompt_tokens": 9, "completion_tokens": 12, "total_tokens": 21},
        }
        msg = OpenAIChatAdapter().from_wire_response(reply, ctx())
    done = events[-1]
    assert done["type"] == "message_complete" and done["stop_reason"] == "max_tokens"
    ends = [e for e in events if e["type"] == "tool_use_end"]
    assert [e["final_input"] for e in ends] == [{}]
    for content in (done["final_content"], msg["content"]):
        assert [b["type"] for b in content] == ["text", "tool_use"]
        assert content[0]["text"] == "Hi" and content[1]["name"] == "weather" and content[1]["input"] == {}
    warned = [r for r in caplog.records if getattr(r, "event", None) == "tool_input_cut"]
    assert len(warned) == 2 and all(r.value == cut and r.field == "arguments" for r in warned)
    # a call that is not cut short is still refused (the stream's `tool_calls` case above)
    reply["choices"][0]["finish_reason"] = "tool_calls"
    with pytest.raises(WireFormatError, match="not a JSON object"):
        OpenAIChatAdapter().from_wire_response(reply, ctx())


def test_complete_stream_without_finish_reason_is_read_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        events = stream(_call(0, "call_1", "f", '{"a": 1}') + _DONE)
    assert events[-1]["stop_reason"] == "tool_use"
    assert events[-1]["final_content"][0]["input"] == {"a": 1}
    assert any(getattr(r, "event", None) == "finish_reason_missing" for r in caplog.records)


def test_tool_call_continuing_after_the_next_started_is_an_error():
    text = _call(0, "call_1", "f", '{"a":') + _call(1, "call_2", "g", "{}") + _call(0, None, None, " 1}")
    with pytest.raises(WireFormatError) as e:
        stream(text)
    # the first call's arguments were already incomplete when the second call started
    assert "event 2" in str(e.value)


def test_fragment_for_a_closed_tool_call_is_an_error():
    text = _call(0, "call_1", "f", '{"a": 1}') + _call(1, "call_2", "g", "{}") + _call(0, None, None, " ")
    with pytest.raises(WireFormatError) as e:
        stream(text)
    assert "event 3" in str(e.value) and "continues after" in str(e.value)


@pytest.mark.parametrize(
    "hostile",
    [
        "data: " + "[" * 100_000 + "]" * 100_000 + "\n\n",
        'data: {"id": "c", "choices": [], "usage": {"prompt_tokens": NaN}}\n\n',
        _call(0, "call_1", "f", "[" * 100_000) + _chunk(finish="tool_calls") + _DONE,
        _call(0, "call_1", "f", '{"a": 1, "a": 2}') + _chunk(finish="tool_calls") + _DONE,
    ],
    ids=["deep-data", "nan", "deep-arguments", "duplicate-key-arguments"],
)
def test_hostile_stream_bodies_are_wire_errors_not_crashes(hostile):
    with pytest.raises(WireFormatError) as e:
        stream(hostile)
    assert "event 1" in str(e.value) or "event 2" in str(e.value), str(e.value)


# -- refusals (chat/object `message.refusal`, chat-streaming `delta.refusal`) ---------------------


def test_a_refusal_is_the_reply_text_streamed_and_not_and_goes_back_in_its_field():
    """cassettes/openai-chat/refusal.yaml: the refusal is a text block of its own (the
    canonical format has no refusal block), streamed as its pieces, and the next turn read
    back renders it in the assistant message's `refusal` again, `content` null."""
    a = OpenAIChatAdapter()
    reply, streamed, then = (it("refusal", i) for i in range(3))
    refusal = reply.response_json["choices"][0]["message"]["refusal"]
    msg = a.from_wire_response(WireResponse(reply.response_json), ctx())
    assert msg["content"] == [{"type": "text", "text": refusal}]
    assert msg["metadata"]["provider_raw"]["openai-chat"]["refusal"] == 0
    assert "refusal" not in msg["metadata"]["provider_raw"]["openai-chat"].get("message", {})
    assert validate_messages([msg], finish=False) == []
    events = list(a.stream_response([streamed.response_body], ctx("sess_s")))
    assert [e["text"] for e in events if e["type"] == "text_delta"] == [
        "I'm sorry, ",
        "but I can't help ",
        "with that request.",
    ]
    assert events[-1]["final_content"] == msg["content"]
    parsed = a.from_wire_request(then.request_body)
    assert [b["text"] for b in parsed.messages[1]["content"]] == [refusal]
    body = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    assert body["messages"][1] == {"role": "assistant", "content": None, "refusal": refusal}
    # the reply as the next turn's history: the refusal goes back in its field, not as content
    turn = a.to_wire([*parsed.messages[:1], msg], [], OPTS).body["messages"][1]
    assert turn["content"] is None and turn["refusal"] == refusal


def test_a_refusal_beside_content_and_an_edited_or_foreign_turn():
    """A reply holding both `content` and `refusal` keeps both, the refusal last; a turn whose
    refusal block another adapter holds (no own provider_raw) goes back as plain text."""
    a = OpenAIChatAdapter()
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "No.", "refusal": "No."}, "finish_reason": "stop"}
        ],
    }
    msg = a.from_wire_response(WireResponse(body), ctx())
    assert msg["content"] == [{"type": "text", "text": "No."}, {"type": "text", "text": "No."}]
    assert msg["metadata"]["provider_raw"]["openai-chat"]["refusal"] == 1
    wire = a.to_wire([msg], [], OPTS).body["messages"][0]
    assert wire["content"] == "No." and wire["refusal"] == "No."
    foreign = {**msg, "metadata": {k: v for k, v in msg["metadata"].items() if k != "provider_raw"}}
    wire = a.to_wire([foreign], [], OPTS).body["messages"][0]
    assert "refusal" not in wire and wire["content"] == [{"type": "text", "text": "No."}] * 2


def test_a_refusal_content_part_in_a_request_is_read_and_renders_back_as_equal():
    """An assistant message's content may be "exactly one of type `refusal`" (chat/create): a
    request read back keeps its text (it was dropped), and what the adapter renders of it is
    equal to the recorded message under the declared equivalences (TC802)."""
    from conformance.wire import registry
    from conformance.wire.equivalence import compare

    a = OpenAIChatAdapter()
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "Help me pick a lock."},
            {"role": "assistant", "content": [{"type": "refusal", "refusal": "I can't help with that."}]},
            {"role": "user", "content": "Why not?"},
        ],
    }
    parsed = a.from_wire_request(body)
    assert parsed.messages[1]["content"] == [{"type": "text", "text": "I can't help with that."}]
    rendered = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    api = registry.get("openai-chat-completions")
    assert compare(api, body, rendered) == []
    dropped = {
        **rendered,
        "messages": [rendered["messages"][0], {"role": "assistant", "content": ""}, rendered["messages"][2]],
    }
    assert compare(api, body, dropped) != []  # the refusal's text lost is still a difference


def test_a_streamed_refusal_after_the_finish_reason_is_content_after_it():
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    text = _sse(
        [
            {**chunk, "choices": [{"index": 0, "delta": {"refusal": "No"}, "finish_reason": "stop"}]},
            {**chunk, "choices": [{"index": 0, "delta": {"refusal": "pe"}, "finish_reason": None}]},
        ]
    )
    with pytest.raises(WireFormatError, match="content after finish_reason"):
        list(OpenAIChatAdapter().stream_response([text], ctx()))


def test_the_refusal_cassette_is_what_its_script_writes(tmp_path):
    """cassettes/openai-chat/refusal.yaml is _author.py's output, byte for byte (edit the
    script and run it again, never the YAML)."""
    import importlib.util  # function-level: only this test loads the script

    spec = importlib.util.spec_from_file_location("chat_author", CASSETTES / "_author.py")
    assert spec is not None and spec.loader is not None
    author = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(author)
    author.write(tmp_path / "refusal.yaml", author.refusal())
    assert (tmp_path / "refusal.yaml").read_bytes() == (CASSETTES / "refusal.yaml").read_bytes()


def test_a_gpt_5_reasoning_model_offered_tools_counts_the_hidden_preamble():
    """GPT-5 reasoning models on Chat Completions count about 80 input tokens more once the
    request offers tools (a recorded gpt-5.4-nano exchange: 161 where its content is 81, the
    same prompt and tool 88 on /v1/responses); the estimate adds them for such a model,
    told by the canonical id the suite passes (`openai:gpt-5.4-nano`, canonical §6.3) or
    the wire's, and for no other model, nor without tools."""
    a = OpenAIChatAdapter()
    msgs = [{"role": "user", "content": [{"type": "text", "text": "What is the weather in Paris?"}]}]
    tools = [{"name": "lookup_weather", "description": "Look up the current weather in a city.",
              "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]  # fmt: skip
    bare = a.estimate_input_tokens(msgs, tools)
    extra = OpenAIChatAdapter.REASONING_TOOL_PREAMBLE
    assert extra == 80
    assert a.estimate_input_tokens(msgs, tools, model="openai:gpt-5.4-nano") == bare + extra
    assert a.estimate_input_tokens(msgs, tools, model="gpt-5-mini") == bare + extra
    assert a.estimate_input_tokens(msgs, tools, model="openai:gpt-4.1-nano") == bare
    assert a.estimate_input_tokens(msgs, tools, model="gpt-5-chat-latest") == bare
    assert a.estimate_input_tokens(msgs, [], model="openai:gpt-5") == a.estimate_input_tokens(msgs, [])


def test_a_custom_tool_listed_first_renders_back_first() -> None:
    """Chat Completions `tools` lists function and custom tools (`{"type": "custom",
    "custom": {"name": ...}}`) in the caller's order; a custom tool listed first renders
    back first, not after the function tools."""
    a = OpenAIChatAdapter()
    fn = {"type": "function", "function": {"name": "get_time", "description": "Time", "parameters": {"type": "object"}}}
    body = {
        "model": "gpt-5",
        "messages": [{"role": "user", "content": "Run it."}],
        "tools": [{"type": "custom", "custom": {"name": "code_exec"}}, fn],
    }
    parsed = OpenAIChatAdapter().from_wire_request(body)
    assert a.to_wire(parsed.messages, parsed.tools, parsed.options).body["tools"] == body["tools"]


def test_a_deprecated_function_call_read_back_renders_equal_whatever_its_arguments_spacing():
    """A deprecated assistant `function_call` (chat/create: "The arguments to call the function
    with, as generated by the model in JSON format") holds the same JSON as a `tool_calls`
    entry's `function.arguments`: a request read back and rendered is equal to the recorded one
    however the model spaced that JSON (TC802), and different arguments are still a difference."""
    from conformance.wire import registry
    from conformance.wire.equivalence import compare

    a = OpenAIChatAdapter()
    body = {
        "model": "gpt-3.5-turbo",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "w", "arguments": '{\n  "city": "Paris"\n}'},
            },
            {"role": "function", "name": "w", "content": "sunny"},
        ],
        "functions": [{"name": "w", "description": "weather", "parameters": {"type": "object", "properties": {}}}],
    }
    parsed = a.from_wire_request(body)
    rendered = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    api = registry.get("openai-chat-completions")
    assert compare(api, body, rendered) == []
    other = copy.deepcopy(body)
    other["messages"][1]["function_call"]["arguments"] = '{"city": "Rome"}'
    assert compare(api, other, rendered) != []
