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


def test_a_server_tool_listed_first_renders_back_first():
    """The tool search docs (platform.claude.com, "Tool search tool") list the search tool in
    `tools` beside the caller's deferred tools; `tools` is the caller's array, so a request
    that lists the server tool before its own tools reads and renders back in that order."""
    a = AnthropicAdapter()
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Weather in Tokyo?"}],
        "tools": [
            {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
            {
                "name": "get_weather",
                "description": "Weather",
                "input_schema": {"type": "object"},
                "defer_loading": True,
            },
            {"type": "web_search_20250305", "name": "web_search"},
            {"name": "get_time", "description": "Time", "input_schema": {"type": "object"}},
        ],
    }
    parsed = a.from_wire_request(body)
    assert a.to_wire(parsed.messages, parsed.tools, parsed.options).body["tools"] == body["tools"]
    # a layout that no longer fits the tools (one dropped) renders defined tools first
    back = a.to_wire(parsed.messages, parsed.tools[:1], parsed.options).body["tools"]
    assert [t["name"] for t in back] == ["get_weather", "tool_search_tool_bm25", "web_search"]


def test_estimate_counts_tools_and_images():
    a = AnthropicAdapter()
    msgs, tools = conversation("anthropic")
    plain = a.estimate_input_tokens(msgs, [])
    assert a.estimate_input_tokens(msgs, tools) > plain + 300
    assert plain > 0


def test_the_hidden_tool_prompt_is_the_models_own():
    """docs.anthropic.com "Tool use pricing and tokens" (tool_choice auto): Claude 3 Opus adds
    530 tokens, Claude 3 Sonnet 159, Claude 3 Haiku 264; the estimate differs by exactly that
    when told the model (the suite passes the request's), and is unchanged without one."""
    a = AnthropicAdapter()
    msgs, tools = conversation("anthropic")

    def est(model: str | None) -> int:
        return a.estimate_input_tokens(msgs, tools, model=model)

    assert est("claude-3-opus-20240229") - est("claude-3-sonnet-20240229") == 530 - 159
    assert est("claude-3-haiku-20240307") - est("claude-3-sonnet-20240229") == 264 - 159
    assert est("claude-3-5-haiku-20241022") == est("claude-3-haiku-20240307")
    assert est(None) == a.estimate_input_tokens(msgs, tools) == est("claude-sonnet-4-5")
    assert a.estimate_input_tokens(msgs, [], model="claude-3-opus-20240229") == a.estimate_input_tokens(msgs, [])


def test_a_forced_tool_choice_has_its_own_hidden_prompt():
    """docs.anthropic.com "Tool use pricing and tokens": the tool-use system prompt is 530
    tokens for Claude 3 Opus with tool_choice `auto` and 281 with `any` or `tool` (Sonnet 159
    and 235, Haiku 264 and 340). The estimate follows the request's tool_choice, and the suite
    passes it from the recorded request (estimate_of reads it from the request's options)."""
    from conformance.suite.checks.common import estimate_of

    a = AnthropicAdapter()
    msgs, tools = conversation("anthropic")
    opus = "claude-3-opus-20240229"

    def est(model: str, choice: object) -> int:
        return a.estimate_input_tokens(msgs, tools, model=model, tool_choice=choice)

    auto = a.estimate_input_tokens(msgs, tools, model=opus)
    assert est(opus, {"type": "auto"}) == est(opus, None) == auto
    assert auto - est(opus, {"type": "any"}) == auto - est(opus, {"type": "tool", "name": "t"}) == 530 - 281
    assert est("claude-3-sonnet-20240229", {"type": "any"}) - est("claude-3-sonnet-20240229", None) == 235 - 159
    assert est("claude-3-haiku-20240307", {"type": "any"}) - est("claude-3-haiku-20240307", None) == 340 - 264
    assert est("claude-sonnet-4-5", {"type": "any"}) == est("claude-sonnet-4-5", None)  # no documented row here
    body = {
        "model": opus,
        "max_tokens": 64,
        "messages": [{"role": "user", "content": "Sum 1 and 2."}],
        "tools": [{"name": "plus", "description": "", "input_schema": {"type": "object"}}],
    }
    free = estimate_of(a, a.from_wire_request(body))
    assert free - estimate_of(a, a.from_wire_request({**body, "tool_choice": {"type": "any"}})) == 530 - 281


# -- the project's own cassettes (hand-written from Anthropic's documented examples) -----------

from pathlib import Path  # noqa: E402

from conformance.adapters.base import (  # noqa: E402
    AuthError,
    ContextOverflowError,
    InvalidRequestError,
    ServerError,
    WireFormatError,
)
from conformance.suite.cassettes import load_cassette  # noqa: E402
from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES  # noqa: E402

CASSETTES = Path(__file__).resolve().parent.parent / "cassettes" / "anthropic"


def it(name, i):
    return load_cassette(CASSETTES / f"{name}.yaml").interactions[i]


def ctx(sid="sess_c"):
    return RequestContext(session_id=sid, message_id="01KZZZZZZZZZZZZZZZZZZZZZZZ")


def stream(interaction, sid="sess_c", adapter=None):
    return list((adapter or AnthropicAdapter()).stream_response([interaction.response_text.encode()], ctx(sid)))


@pytest.mark.parametrize(
    ("name", "i", "raw", "canonical"),
    [
        ("text", 0, "end_turn", "end_turn"),
        ("text", 2, "max_tokens", "max_tokens"),
        ("text", 4, "stop_sequence", "stop_sequence"),
        ("tools", 0, "tool_use", "tool_use"),
        ("stops", 0, "pause_turn", "end_turn"),
        ("stops", 2, "refusal", "end_turn"),
        ("stops", 4, "model_context_window_exceeded", "max_tokens"),
    ],
)
def test_every_stop_reason_parsed_and_streamed(name, i, raw, canonical):
    a = AnthropicAdapter()
    msg = a.from_wire_response(WireResponse(it(name, i).response_json), ctx())
    assert msg["metadata"]["provider_raw"]["anthropic"]["stop_reason"] == raw
    assert a.stop_reason_of(raw) == canonical == ANTHROPIC_MESSAGES.stop_reasons[raw]
    done = stream(it(name, i + 1))[-1]  # every answer has its streamed twin
    assert done["type"] == "message_complete" and done["stop_reason"] == canonical


def test_parallel_tool_calls_cassette_parse_and_stream():
    a = AnthropicAdapter()
    msg = a.from_wire_response(WireResponse(it("tools", 0).response_json), ctx())
    assert [b["type"] for b in msg["content"]] == ["text", "tool_use", "tool_use"]
    assert [b["input"] for b in msg["content"][1:]] == [
        {"location": "San Francisco, CA", "unit": "celsius"},
        {"location": "New York, NY", "unit": "celsius"},
    ]
    events = stream(it("tools", 1), adapter=a)
    # literal fragments, in order, including the empty first one the API sends
    assert [e["partial_json"] for e in events if e["type"] == "tool_use_input_delta"] == [
        "",
        '{"location": "San Fra',
        'ncisco, CA", "unit": "celsius"}',
        '{"location": "New York, NY", ',
        '"unit": "celsius"}',
    ]
    assert events[-1]["final_content"] == msg["content"]  # same session: same canonical ids
    assert events[-1]["usage"] == {
        "input_tokens": 472,
        "output_tokens": 121,
        "cached_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }


def test_tool_result_is_error_reaches_the_wire_and_survives_read_back():
    a = AnthropicAdapter()
    body = it("tools", 2).request_body
    parsed = a.from_wire_request(body, session_id="sess_err")
    results = [m["content"][0] for m in parsed.messages if m["role"] == "tool"]
    assert [r.get("is_error", False) for r in results] == [False, True]
    assert results[1]["content"] == [
        {"type": "text", "text": "ConnectionError: the weather service API is not available (HTTP 500)"}
    ]
    back = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    located = ANTHROPIC_MESSAGES.probes.tool_result_errors(back)
    assert [x.value for x in located] == [False, True]
    assert located[1].pointer == "/messages/2/content/1/is_error"


def test_thinking_signature_and_redacted_thinking_cassettes():
    a = AnthropicAdapter()
    msg = a.from_wire_response(WireResponse(it("thinking", 0).response_json), ctx())
    sig = it("thinking", 0).response_json["content"][0]["signature"]
    assert msg["content"][0]["type"] == "thinking" and msg["content"][0]["signature"] == sig
    events = stream(it("thinking", 1))
    thinking = [e for e in events if e["type"] == "thinking_delta"]
    # the signature only on the block's final delta (streaming-protocol §5.3)
    assert [e["signature"] for e in thinking] == [None, None, sig]
    assert "".join(e["text"] for e in thinking) == msg["content"][0]["text"]
    red = a.from_wire_response(WireResponse(it("thinking", 2).response_json), ctx())
    assert red["content"][0] == {
        "type": "redacted_thinking",
        "data": it("thinking", 2).response_json["content"][0]["data"],
    }
    assert stream(it("thinking", 3))[-1]["final_content"][0] == red["content"][0]
    # history with a signed thinking block and redacted thinking goes back byte for byte
    body = it("thinking", 4).request_body
    parsed = a.from_wire_request(body, session_id="sess_think")
    back = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    assert [x.value for x in ANTHROPIC_MESSAGES.probes.signatures(back)] == [sig]
    assert ANTHROPIC_MESSAGES.probes.redacted_thinking(back)[0].value == body["messages"][1]["content"][1]["data"]


def test_cached_token_usage_is_mapped_not_double_counted():
    a = AnthropicAdapter()
    write = a.from_wire_response(WireResponse(it("cache", 0).response_json), ctx())["metadata"]["usage"]
    read = a.from_wire_response(WireResponse(it("cache", 1).response_json), ctx())["metadata"]["usage"]
    assert (write["input_tokens"], write["cached_input_tokens"], write["cache_creation_input_tokens"]) == (
        21,
        0,
        188086,
    )
    assert (read["input_tokens"], read["cached_input_tokens"], read["cache_creation_input_tokens"]) == (19, 188086, 0)
    done = stream(it("cache", 2))[-1]
    assert done["usage"] == {
        "input_tokens": 19,
        "output_tokens": 27,
        "cached_input_tokens": 188086,
        "cache_creation_input_tokens": 0,
    }


def test_image_cassettes_base64_url_and_tool_result_image():
    a = AnthropicAdapter()
    b64 = a.from_wire_request(it("image", 0).request_body, session_id="s1").messages[0]["content"][0]
    assert b64["source"]["kind"] == "base64" and b64["media_type"] == "image/png"
    assert stream(it("image", 1))[-1]["final_content"] == [{"type": "text", "text": "The image is a single red pixel."}]
    url = a.from_wire_request(it("image", 2).request_body, session_id="s2").messages[0]["content"][0]
    assert url["source"] == {
        "kind": "url",
        "data": "https://upload.wikimedia.org/wikipedia/commons/a/a7/Camponotus_flavomarginatus_ant.jpg",
    }
    tool = a.from_wire_request(it("image", 4).request_body, session_id="s3").messages[-1]
    assert [b["type"] for b in tool["content"][0]["content"]] == ["text", "image"]


@pytest.mark.parametrize(
    ("i", "cls", "error_class", "retryable"),
    [
        (0, InvalidRequestError, "invalid_request", False),
        (1, ContextOverflowError, "context_overflow", False),
        (2, AuthError, "auth", False),
        (3, InvalidRequestError, "invalid_request", False),  # 402 billing_error
        (4, AuthError, "auth", False),
        (5, InvalidRequestError, "invalid_request", False),
        (6, ContextOverflowError, "context_overflow", False),  # 413 request_too_large
        (7, RateLimitError, "rate_limit", True),
        (8, ServerError, "server_error", True),
        (9, ServerError, "server_error", True),  # 504 timeout_error
        (10, RateLimitError, "rate_limit", True),  # 529 overloaded_error
    ],
)
def test_http_errors_raise_the_documented_subclass_with_fields(i, cls, error_class, retryable):
    rec = it("errors", i)
    with pytest.raises(cls) as e:
        AnthropicAdapter().from_wire_response(WireResponse(rec.response_json, rec.status), ctx())
    err = e.value
    assert type(err) is cls and err.error_class == error_class and err.retryable is retryable
    assert err.provider_status == rec.status
    assert err.request_id == f"req_011CErr{rec.status}AbCdEfGhIjKlMn"  # from the documented body field


def test_retry_after_header_and_request_id_header():
    rec = it("errors", 7)
    body = {k: v for k, v in rec.response_json.items() if k != "request_id"}
    with pytest.raises(RateLimitError) as e:
        AnthropicAdapter().from_wire_response(
            WireResponse(body, 429, {"Retry-After": "17", "request-id": "req_hdr"}), ctx()
        )
    assert e.value.retry_after_seconds == 17.0 and e.value.request_id == "req_hdr"


def test_mid_stream_error_event_closes_then_raises():
    events = []
    with pytest.raises(RateLimitError):
        for ev in AnthropicAdapter().stream_response([it("errors", 11).response_text], ctx()):
            events.append(ev)
    assert [e["type"] for e in events][-2:] == ["error", "message_complete"]
    assert events[-1]["stop_reason"] == "error"
    assert events[-1]["final_content"] == [{"type": "text", "text": "Once upon a time"}]


# -- strict stream parsing -------------------------------------------------------------------

_START = 'event: message_start\ndata: {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "model": "claude-x", "content": [], "stop_reason": null, "usage": {"input_tokens": 3, "output_tokens": 1}}}\n\n'


def _ev(obj):
    return f"event: {obj['type']}\ndata: {json.dumps(obj)}\n\n"


_TEXT = (
    _ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    + _ev({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}})
    + _ev({"type": "content_block_stop", "index": 0})
)
_END = _ev({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}) + _ev(
    {"type": "message_stop"}
)


def _tool(partials):
    out = _ev(
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}},
        }
    )
    for p in partials:
        out += _ev(
            {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": p}}
        )
    return out + _ev({"type": "content_block_stop", "index": 0})


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (_START + _TEXT + _END + _ev({"type": "message_stop"}), "event 7", "after message_stop"),
        (_START + _TEXT + _END + _TEXT, "event 7", "after message_stop"),
        (_START + _START + _TEXT + _END, "event 2", "second message_start"),
        (
            _START
            + _ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
            + _ev({"type": "content_block_delta", "index": 0, "delta": {"type": "shout_delta", "text": "x"}}),
            "event 3",
            "unknown delta type",
        ),
        (
            _START + _ev({"type": "content_block_start", "index": -1, "content_block": {"type": "text", "text": ""}}),
            "event 2",
            "index -1",
        ),
        (_START + _TEXT, "event 5", "ended before message_stop"),
        (_START + _tool(['{"a": ', "1"]) + _END, "event 5", "not a JSON object"),
        (_START + _tool(["[1, 2]"]) + _END, "event 4", "not a JSON object"),
        (_TEXT + _END, "event 1", "before message_start"),
        (
            _START
            + _ev({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
            + _ev(
                {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{}"}}
            ),
            "event 3",
            "input_json_delta for a text block",
        ),
        (
            _START + _ev({"type": "content_block_delta", "index": 4, "delta": {"type": "text_delta", "text": "x"}}),
            "event 2",
            "never started",
        ),
        (_START + _TEXT + _ev({"type": "content_block_stop", "index": 0}), "event 5", "already stopped"),
    ],
)
def test_malformed_streams_are_located_wire_errors(text, where, what):
    events = []
    with pytest.raises(WireFormatError) as e:
        for ev in AnthropicAdapter().stream_response([text.encode()], ctx()):
            events.append(ev)
    assert where in str(e.value) and what in str(e.value), str(e.value)
    if events:  # contract §6.5: a started stream closes with message_complete(error) first
        assert events[-1]["type"] == "message_complete"
        # trailing events after a complete message fail without rewriting it
        assert events[-1]["stop_reason"] == ("end_turn" if "after message_stop" in what else "error")
        assert all(b.get("input") != {} for b in events[-1]["final_content"] if b["type"] == "tool_use")


def test_unknown_event_types_and_pings_are_tolerated():
    text = _START + _ev({"type": "ping"}) + _ev({"type": "future_event", "x": 1}) + _TEXT + _END
    events = list(AnthropicAdapter().stream_response([text], ctx()))
    assert events[-1]["final_content"] == [{"type": "text", "text": "Hi"}]


# -- images -----------------------------------------------------------------------------------


def _img(source, media):
    return {
        "id": "01KZZZZZZZZZZZZZZZZZZZZZZ0",
        "session_id": "sess_img",
        "role": "user",
        "created_at": "2026-01-01T00:00:00.000000Z",
        "schema_version": 1,
        "metadata": {},
        "content": [{"type": "image", "source": source, "media_type": media}],
    }


def test_url_image_media_type_is_kept_not_guessed_from_the_extension():
    a = AnthropicAdapter()
    msg = _img({"kind": "url", "data": "https://example.com/0.m"}, "image/webp")
    body = a.to_wire([msg], [], OPTS).body
    assert body["messages"][0]["content"][0]["source"] == {"type": "url", "url": "https://example.com/0.m"}
    back = a.from_wire_request(body, session_id="sess_img").messages[0]["content"][0]
    assert back["media_type"] == "image/webp"  # as rendered, not a Mathematica type from `.m`
    fresh = AnthropicAdapter().from_wire_request(body, session_id="sess_img").messages[0]["content"][0]
    assert fresh["media_type"] == "image/jpeg"  # the documented placeholder for an unseen URL
    other = a.from_wire_request(
        {
            **body,
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "image", "source": {"type": "url", "url": "https://e.com/x.png"}}],
                }
            ],
        },
        session_id="sess_img",
    )
    assert other.messages[0]["content"][0]["media_type"] == "image/jpeg"  # not image/png from `.png`


def test_data_url_image_goes_as_base64_and_media_types_are_case_insensitive():
    a = AnthropicAdapter()
    body = a.to_wire([_img({"kind": "url", "data": "data:image/PNG;base64,iVBORw0KGgo="}, "image/png")], [], OPTS).body
    assert body["messages"][0]["content"][0]["source"] == {
        "type": "base64",
        "media_type": "image/png",
        "data": "iVBORw0KGgo=",
    }
    body = a.to_wire([_img({"kind": "base64", "data": "iVBORw0KGgo="}, "image/PNG")], [], OPTS).body
    assert body["messages"][0]["content"][0]["source"]["media_type"] == "image/png"


@pytest.mark.parametrize("bad_input", ['{"path": "README.md"}', None, [1]])
def test_tool_use_input_that_is_not_an_object_is_a_wire_error(bad_input):
    body = json.loads(json.dumps(RESPONSE))
    body["content"][2]["input"] = bad_input
    with pytest.raises(WireFormatError) as e:
        AnthropicAdapter().from_wire_response(body, RequestContext("s"))
    assert "toolu_01XYZ" in str(e.value)


@pytest.mark.parametrize(
    "hostile",
    [
        _START + "event: x\ndata: " + "[" * 100_000 + "]" * 100_000 + "\n\n",
        _START
        + 'event: message_delta\ndata: {"type": "message_delta", "delta": {}, "usage": {"output_tokens": NaN}}\n\n',
        _START + _tool(["[" * 100_000]) + _END,
    ],
    ids=["deep-data", "nan", "deep-input"],
)
def test_hostile_stream_bodies_are_wire_errors_not_crashes(hostile):
    with pytest.raises(WireFormatError) as e:
        list(AnthropicAdapter().stream_response([hostile], ctx()))
    assert "event 2" in str(e.value) or "event 4" in str(e.value), str(e.value)


def test_a_tool_use_the_token_limit_cut_short_reads_with_empty_input_and_a_warning(caplog):
    """The docs' event flow stops the open block, then message_delta: when its stop_reason is
    `max_tokens`, a tool_use block whose input JSON never completed was cut by the limit, not
    malformed: read as `{}` (contract §9.4 closes such a call so), its tool_use_end after the
    block's stop, a WARN line naming it; the same block before another stop reason, or at the
    end of the stream, is still the located error of the malformed-streams test above."""
    cut = _ev({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 9}})
    stream = _START + _tool(['{"city": ', '"Par']) + cut + _ev({"type": "message_stop"})
    with caplog.at_level(logging.WARNING):
        events = list(AnthropicAdapter().stream_response([stream.encode()], ctx()))
    done = events[-1]
    assert done["type"] == "message_complete" and done["stop_reason"] == "max_tokens"
    assert [e["final_input"] for e in events if e["type"] == "tool_use_end"] == [{}]
    assert done["final_content"][0]["input"] == {}
    warned = [r for r in caplog.records if getattr(r, "event", None) == "tool_input_cut"]
    assert len(warned) == 1 and warned[0].value == '{"city": "Par' and warned[0].field == "input"
    for rest, where in ((_END, "event 5"), ("", "event 5")):
        with pytest.raises(WireFormatError, match=f"{where}: tool_use \\S+ input is not a JSON object"):
            list(AnthropicAdapter().stream_response([(_START + _tool(['{"a": ', "1"]) + rest).encode()], ctx()))
