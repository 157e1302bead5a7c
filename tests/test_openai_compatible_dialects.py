"""OpenAI-compatible servers' documented replies, read by the openai-chat adapter (issue 25).

Each fixture is written by hand from the server's documented shape (URL beside it), not
copied from a recording. The rule the wire schemas follow: a response or a stream event may
carry members the API or a compatible server adds; a request stays as strict as the docs.
Reasoning the servers return beside the answer (`reasoning_content`, `reasoning`, Mistral's
`thinking` parts) reads as canonical thinking, placed before the text.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
import shared_paths
from wire_content import write_cassette
from wire_measure import PROBLEMS, figures, measure

from conformance.adapters import OpenAIChatAdapter, RequestContext, WireResponse
from conformance.adapters.base import AdapterOptions, WireFormatError
from conformance.adapters.openrouter import OpenRouterChatAdapter
from conformance.cli import main
from conformance.formats.canonical.memory import validate_messages
from conformance.suite.cassettes import load_cassette
from conformance.wire import schemas as wire_schemas
from conformance.wire.openai_chat import OPENAI_CHAT

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = shared_paths.WIRE


def _reply(message: dict[str, Any], **choice: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "m-1",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop", **choice}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **top: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m-1",
        "choices": choices,
        **top,
    }


def _sse(*events: dict[str, Any], done: bool = True) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + ("data: [DONE]\n\n" if done else "")


_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}


# -- the dialects -------------------------------------------------------------------------------
# name -> (reply, stream, thinking text expected, answer text expected)

DIALECTS: dict[str, tuple[dict[str, Any], str, str | None, str]] = {
    # https://api-docs.deepseek.com/guides/reasoning_model: `reasoning_content` beside `content`,
    # streamed as `delta.reasoning_content`; tool calls carry `index` in replies too
    "deepseek": (
        _reply({"content": "Paris.", "reasoning_content": "The user asks for a capital."}),
        _sse(
            _chunk({"role": "assistant", "content": None, "reasoning_content": ""}),
            _chunk({"content": None, "reasoning_content": "The user asks "}),
            _chunk({"content": None, "reasoning_content": "for a capital."}),
            _chunk({"content": "Paris.", "reasoning_content": None}),
            _chunk({"content": ""}, "stop"),
        ),
        "The user asks for a capital.",
        "Paris.",
    ),
    # https://www.alibabacloud.com/help/en/model-studio/deep-thinking (Qwen): the same field
    "qwen": (
        _reply({"content": "Paris.", "reasoning_content": "Capital question."}),
        _sse(_chunk({"reasoning_content": "Capital question."}), _chunk({"content": "Paris."}, "stop")),
        "Capital question.",
        "Paris.",
    ),
    # https://docs.ollama.com/api/openai-compatibility and vLLM's reasoning outputs
    # (https://docs.vllm.ai/en/latest/features/reasoning_outputs.html): `reasoning`
    "ollama-v1": (
        _reply({"content": "Paris.", "reasoning": "We need to answer."}),
        _sse(
            _chunk({"role": "assistant", "content": "", "reasoning": "We need "}),
            _chunk({"content": "", "reasoning": "to answer."}),
            _chunk({"content": "Paris."}),
            _chunk({"content": ""}, "stop"),
        ),
        "We need to answer.",
        "Paris.",
    ),
    # https://console.groq.com/docs/reasoning (reasoning_format "parsed"): `message.reasoning`
    "groq": (
        _reply({"content": "4", "reasoning": "2 plus 2."}),
        _sse(_chunk({"reasoning": "2 plus 2."}), _chunk({"content": "4"}, "stop")),
        "2 plus 2.",
        "4",
    ),
    # https://docs.mistral.ai/capabilities/reasoning/: `content` as typed parts, thinking nested
    "mistral": (
        _reply(
            {
                "content": [
                    {"type": "thinking", "thinking": [{"type": "text", "text": "Short question."}]},
                    {"type": "text", "text": "Paris."},
                ]
            }
        ),
        _sse(
            _chunk(
                {
                    "role": "assistant",
                    "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Short "}]}],
                }
            ),
            _chunk({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "question."}]}]}),
            _chunk({"content": [{"type": "text", "text": "Paris."}]}),
            _chunk({"content": ""}, "stop"),
        ),
        "Short question.",
        "Paris.",
    ),
    # Azure OpenAI content filtering
    # (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/content-filter):
    # `prompt_filter_results` first (in a chunk of its own, `object: ""`, `choices: []`) and
    # `content_filter_results` on each choice
    "azure": (
        {
            **_reply({"content": "Hello."}, content_filter_results={"hate": {"filtered": False, "severity": "safe"}}),
            "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
        },
        _sse(
            {
                "choices": [],
                "created": 0,
                "id": "",
                "model": "",
                "object": "",
                "prompt_filter_results": [
                    {"prompt_index": 0, "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}}}
                ],
            },
            _chunk({"role": "assistant", "content": "Hello."}),
            {
                **_chunk({}, "stop"),
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "content_filter_results": {}}],
            },
        ),
        None,
        "Hello.",
    ),
    # Azure's asynchronous filter
    # (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/content-streaming):
    # the text streams at once, and annotation chunks follow it ("Annotations and content
    # moderation messages are continuously returned during the stream"): a choice with
    # `content_filter_results` and `content_filter_offsets` and no `delta`, `object: ""`
    "azure-async": (
        _reply({"content": "Hello there."}, content_filter_results={"hate": {"filtered": False, "severity": "safe"}}),
        _sse(
            {"choices": [], "created": 0, "id": "", "model": "", "object": "", "prompt_filter_results": []},
            _chunk({"role": "assistant", "content": "Hello"}),
            {
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": None,
                        "content_filter_offsets": {"check_offset": 0, "start_offset": 0, "end_offset": 5},
                        "content_filter_results": {"hate": {"filtered": False, "severity": "safe"}},
                    }
                ],
                "created": 0,
                "id": "",
                "model": "",
                "object": "",
            },
            _chunk({"content": " there."}),
            _chunk({}, "stop"),
            {
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": None,
                        "content_filter_offsets": {"check_offset": 5, "start_offset": 5, "end_offset": 12},
                        "content_filter_results": {"violence": {"filtered": False, "severity": "safe"}},
                    }
                ],
                "created": 0,
                "id": "",
                "model": "",
                "object": "",
            },
        ),
        None,
        "Hello there.",
    ),
    # https://docs.perplexity.ai/api-reference/chat-completions-post: the last chunk is a
    # `chat.completion.done` carrying the finish_reason and the whole message
    "perplexity": (
        _reply({"content": "Paris."}),
        _sse(
            _chunk({"role": "assistant", "content": "Paris."}),
            {
                **_chunk(),
                "object": "chat.completion.done",
                "choices": [
                    {
                        "index": 0,
                        "delta": {"role": "assistant", "content": ""},
                        "message": {"role": "assistant", "content": "Paris."},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            },
        ),
        None,
        "Paris.",
    ),
    # https://docs.x.ai/docs/guides/reasoning: grok-3-mini returns its thinking as
    # `message.reasoning_content` (streamed as `delta.reasoning_content`), counted in
    # `usage.completion_tokens_details.reasoning_tokens`
    "xai": (
        {
            **_reply({"content": "101 * 3 = 303.", "reasoning_content": "101 times 3 is 303."}),
            "usage": {
                "prompt_tokens": 12,
                "completion_tokens": 40,
                "total_tokens": 52,
                "completion_tokens_details": {"reasoning_tokens": 33},
            },
        },
        _sse(
            _chunk({"role": "assistant", "reasoning_content": "101 times "}),
            _chunk({"reasoning_content": "3 is 303."}),
            _chunk({"content": "101 * 3 = 303."}),
            _chunk({}, "stop"),
        ),
        "101 times 3 is 303.",
        "101 * 3 = 303.",
    ),
    # https://docs.vllm.ai/en/latest/features/reasoning_outputs.html: "Reasoning models return
    # an additional reasoning field ... reasoning used to be called reasoning_content. For now,
    # reasoning_content will continue to work": both names, one text (read once)
    "vllm": (
        _reply(
            {"content": "9.8 is greater.", "reasoning": "Compare decimals.", "reasoning_content": "Compare decimals."}
        ),
        _sse(
            _chunk({"role": "assistant", "content": ""}),
            _chunk({"reasoning": "Compare ", "reasoning_content": "Compare "}),
            _chunk({"reasoning": "decimals.", "reasoning_content": "decimals."}),
            _chunk({"content": "9.8 is greater."}),
            _chunk({}, "stop"),
        ),
        "Compare decimals.",
        "9.8 is greater.",
    ),
    # https://openrouter.ai/docs/use-cases/reasoning-tokens: "Reasoning tokens will appear in
    # the reasoning field of each message", beside the structured `reasoning_details`
    # (`reasoning.text` here); streamed as `delta.reasoning` / `delta.reasoning_details`
    "openrouter": (
        _reply(
            {
                "content": "Paris.",
                "reasoning": "A capital question.",
                "reasoning_details": [
                    {"type": "reasoning.text", "text": "A capital question.", "format": "unknown", "index": 0}
                ],
            }
        ),
        _sse(
            _chunk(
                {
                    "role": "assistant",
                    "content": "",
                    "reasoning": "A capital question.",
                    "reasoning_details": [
                        {"type": "reasoning.text", "text": "A capital question.", "format": "unknown", "index": 0}
                    ],
                }
            ),
            _chunk({"content": "Paris."}),
            _chunk({}, "stop"),
        ),
        "A capital question.",
        "Paris.",
    ),
}


def _ctx() -> RequestContext:
    return RequestContext(session_id="sess_dialects")


def _parse_cli(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    p = tmp_path / "body.txt"
    p.write_text(text, encoding="utf-8")
    rc = main(["wire", "parse", "--adapter", "openai-chat", *extra, str(p)])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _expect(content: list[dict[str, Any]], thinking: str | None, text: str) -> None:
    kinds = [b["type"] for b in content]
    if thinking is None:
        assert "thinking" not in kinds
    else:
        assert content[0] == {"type": "thinking", "text": thinking, "signature": None}
    assert "".join(b["text"] for b in content if b["type"] == "text") == text
    assert kinds.index("text") > (0 if thinking else -1)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_reply_is_parsed_with_its_reasoning_first(dialect, tmp_path, capsys):
    reply, _, thinking, text = DIALECTS[dialect]
    rc, out, err = _parse_cli(tmp_path, json.dumps(reply), capsys)
    assert rc == 0, err
    msg = json.loads(out)
    _expect(msg["content"], thinking, text)
    assert validate_messages([msg], finish=False) == []
    direct = OpenAIChatAdapter().from_wire_response(WireResponse(reply), _ctx())
    _expect(direct["content"], thinking, text)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_stream_is_parsed_with_its_reasoning_as_thinking_deltas(dialect, tmp_path, capsys):
    _, stream, thinking, text = DIALECTS[dialect]
    rc, out, err = _parse_cli(tmp_path, stream, capsys, "--stream")
    assert rc == 0, err
    lines = [json.loads(x) for x in out.splitlines()]
    _expect(lines[-1]["content"], thinking, text)
    events = list(OpenAIChatAdapter().stream_response([stream.encode()], _ctx()))
    done = events[-1]
    assert done["type"] == "message_complete" and done["stop_reason"] == "end_turn"
    _expect(done["final_content"], thinking, text)
    deltas = "".join(e["text"] for e in events if e["type"] == "thinking_delta")
    assert deltas == (thinking or "")
    first_text = next(i for i, e in enumerate(events) if e["type"] == "text_delta")
    assert all(i < first_text for i, e in enumerate(events) if e["type"] == "thinking_delta")


def test_reasoning_is_not_kept_twice_nor_sent_back(caplog):
    """DeepSeek: "if the reasoning_content field is included in the sequence of input
    messages, the API will return a 400 error" (reasoning_model guide): the thinking block is
    dropped with the §7.3 WARN line, and the raw field is not echoed from `provider_raw`."""
    reply = DIALECTS["deepseek"][0]
    a = OpenAIChatAdapter()
    msg = a.from_wire_response(WireResponse(reply), _ctx())
    assert "reasoning_content" not in json.dumps(msg["metadata"].get("provider_raw") or {})
    with caplog.at_level(logging.WARNING):
        body = a.to_wire([msg], [], AdapterOptions(model="openai:m-1")).body
    assert "reasoning_content" not in json.dumps(body) and "capital" not in json.dumps(body)
    assert [r.block_type for r in caplog.records if getattr(r, "event", None) == "block_dropped"] == ["thinking"]


# -- members compatible servers add or omit in replies -------------------------------------------


@pytest.mark.parametrize(
    ("case", "message"),
    [
        # tool_calls[].index in a non-streamed reply: Alibaba, Azure, DeepSeek, Mistral,
        # Ollama /v1, OpenRouter, Together, Z.ai
        ("tool-call-index", {"content": None, "tool_calls": [{**_CALL, "index": 0}]}),
        ("tool-calls-null", {"content": "Hi.", "tool_calls": None}),
        ("tool-call-without-type", {"content": None, "tool_calls": [{k: v for k, v in _CALL.items() if k != "type"}]}),
    ],
)
def test_tool_call_members_of_compatible_replies(case, message, tmp_path, capsys):
    reply = _reply(message)
    rc, out, err = _parse_cli(tmp_path, json.dumps(reply), capsys)
    assert rc == 0, err
    content = json.loads(out)["content"]
    if case == "tool-calls-null":
        assert content == [{"type": "text", "text": "Hi."}]
    else:
        assert [(b["type"], b.get("name"), b.get("input")) for b in content] == [
            ("tool_use", "get_weather", {"city": "Paris"})
        ]


def test_choice_without_finish_reason(tmp_path, capsys):
    reply = _reply({"content": "Hi."})
    del reply["choices"][0]["finish_reason"]
    rc, out, err = _parse_cli(tmp_path, json.dumps(reply), capsys)
    assert rc == 0, err
    assert json.loads(out)["content"] == [{"type": "text", "text": "Hi."}]


def test_stream_without_finish_reason_but_with_done(tmp_path, capsys):
    """A choice that never carries `finish_reason`, in a stream the server ends with
    `data: [DONE]`: read as end_turn with the adapter's WARN line, not refused as cut."""
    rc, out, err = _parse_cli(tmp_path, _sse(_chunk({"role": "assistant", "content": "Hi."})), capsys, "--stream")
    assert rc == 0, err
    assert "finish_reason" in err
    assert json.loads(out.splitlines()[-1])["content"] == [{"type": "text", "text": "Hi."}]
    # without [DONE] too, it was cut: read as a partial message, the warning naming what
    # never came (issue 41: it was refused outright, with nothing read)
    rc, out, err = _parse_cli(tmp_path, _sse(_chunk({"role": "assistant", "content": "Hi."}), done=False), capsys)
    assert rc == 0 and "cut before its end" in err and "finish_reason" in err and "[DONE]" in err
    message = json.loads(out.splitlines()[-1])
    assert message["metadata"]["status"] == "partial" and message["content"] == [{"type": "text", "text": "Hi."}]


def test_streamed_tool_calls_without_index(tmp_path, capsys):
    """Each call arrives with its id (a new call), its fragments after it without one."""
    stream = _sse(
        _chunk(
            {
                "role": "assistant",
                "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "f", "arguments": ""}}],
            }
        ),
        _chunk({"tool_calls": [{"function": {"arguments": '{"x":'}}]}),
        _chunk({"tool_calls": [{"function": {"arguments": " 1}"}}]}),
        _chunk({"tool_calls": [{"id": "call_b", "type": "function", "function": {"name": "g", "arguments": "{}"}}]}),
        _chunk({}, "tool_calls"),
    )
    rc, out, err = _parse_cli(tmp_path, stream, capsys, "--stream")
    assert rc == 0, err
    content = json.loads(out.splitlines()[-1])["content"]
    assert [(b["name"], b["input"]) for b in content] == [("f", {"x": 1}), ("g", {})]
    assert OPENAI_CHAT.probes.stream_tool_fragments(
        [json.loads(e.removeprefix("data: ")) for e in stream.split("\n\n") if e.startswith("data: {")]
    ) == [["", '{"x":', " 1}"], ["{}"]]


def test_groq_usage_in_x_groq_is_read_with_a_warning(tmp_path, capsys):
    """Groq's streams put the counts in the last chunk's `x_groq.usage` (GroqCloud's API
    reference, streamed chunk). Without a top-level `usage` they were lost: the message got
    an estimate. Read there with a warning naming the field; a top-level `usage` wins."""
    groq = {"queue_time": 0.01, "prompt_tokens": 38, "prompt_time": 0.002, "completion_tokens": 4,
            "completion_time": 0.02, "total_tokens": 42, "total_time": 0.03}  # fmt: skip
    calls = [{"id": "call_a", "type": "function", "function": {"name": "f", "arguments": "{}"}, "index": 0}]
    first = _chunk({"role": "assistant", "content": None}, x_groq={"id": "req_1"})
    stream = _sse(first, _chunk({"tool_calls": calls}), _chunk({}, "tool_calls", x_groq={"id": "req_1", "usage": groq}))
    rc, out, err = _parse_cli(tmp_path, stream, capsys, "--stream")
    assert rc == 0, err
    usage = json.loads(out.splitlines()[-1])["metadata"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (38, 4)
    assert "x_groq.usage" in err and "estimated" not in err
    top = {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    both = _sse(first, _chunk({"tool_calls": calls}), _chunk({}, "tool_calls", usage=top, x_groq={"usage": groq}))
    rc, out, err = _parse_cli(tmp_path, both, capsys, "--stream")
    usage = json.loads(out.splitlines()[-1])["metadata"]["usage"]
    assert rc == 0 and (usage["input_tokens"], usage["output_tokens"]) == (7, 3) and "x_groq" not in err


def test_stream_ending_after_its_finish_reason_and_usage_without_done(tmp_path, capsys, caplog):
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    stream = _sse(_chunk({"role": "assistant", "content": "Hi."}), _chunk({}, "stop"), _chunk(usage=usage), done=False)
    rc, out, err = _parse_cli(tmp_path, stream, capsys, "--stream")
    assert rc == 0, err
    assert "[DONE]" in err  # a warning names what was missing
    assert json.loads(out.splitlines()[-1])["content"] == [{"type": "text", "text": "Hi."}]
    with caplog.at_level(logging.WARNING):
        events = list(OpenAIChatAdapter().stream_response([stream.encode()], _ctx()))
    assert events[-1]["stop_reason"] == "end_turn" and events[-1]["final_content"] == [{"type": "text", "text": "Hi."}]
    assert any(getattr(r, "event", None) == "done_missing" for r in caplog.records)


@pytest.mark.parametrize("finish", [None, "stop"])
def test_a_cut_stream_is_still_refused(finish):
    """Without [DONE], and without the finish_reason or the usage chunk the docs put before
    it: the stream was cut (contract §6.5), whatever the server."""
    stream = _sse(_chunk({"role": "assistant", "content": "Hi"}, finish), done=False)
    with pytest.raises(WireFormatError, match=r"\[DONE\]"):
        list(OpenAIChatAdapter().stream_response([stream.encode()], _ctx()))


# -- what stays refused, and where ---------------------------------------------------------------


def _event_error(event: dict[str, Any]) -> str:
    v = wire_schemas.validator(OPENAI_CHAT, "stream-event")
    assert v is not None
    errors = v.errors(event)
    assert errors, "the schema must refuse this event"
    return f"{errors[0].pointer}: {errors[0].message}"


def test_a_bad_chunk_is_named_by_the_member_at_fault(tmp_path, capsys):
    bad = {**_chunk({"content": "x"}), "object": "chat.completion.chunky"}
    assert _event_error(bad).startswith("/object:")
    rc, _, err = _parse_cli(tmp_path, _sse(bad, _chunk({}, "stop")), capsys, "--stream")
    assert rc == 1 and "/object" in err and "missing `type`" not in err


@pytest.mark.parametrize(
    ("where", "event"),
    [
        ("/choices/0/finish_reason", _chunk({"content": "x"}, "halted")),
        (
            "/choices/0/delta/tool_calls/0/function/arguments",
            _chunk({"tool_calls": [{"index": 0, "function": {"arguments": {}}}]}),
        ),
        ("/choices/0/index", {**_chunk({}), "choices": [{"index": -1, "delta": {}}]}),
        # a choice without `delta` is only Azure's annotation, which carries its filter results
        ("/choices/0/delta", {**_chunk({}), "choices": [{"index": 0, "finish_reason": None}]}),
    ],
)
def test_documented_rules_still_refuse_events(where, event):
    assert _event_error(event).startswith(where)


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            "/choices/0/message/tool_calls/0/function/arguments",
            {"tool_calls": [{**_CALL, "function": {"name": "f", "arguments": {}}}]},
        ),
        ("/choices/0/message/content", {"content": 5}),
        ("/choices/0/message/content/0/thinking", {"content": [{"type": "thinking", "thinking": 5}]}),
    ],
)
def test_documented_rules_still_refuse_replies(where, message):
    v = wire_schemas.validator(OPENAI_CHAT, "response")
    assert v is not None
    errors = v.errors(_reply(message))
    assert errors and errors[0].pointer.startswith(where), errors


def test_requests_stay_closed():
    """The request schema is as strict as the docs: an assistant message may not carry
    `reasoning_content` (DeepSeek answers 400 to it)."""
    v = wire_schemas.validator(OPENAI_CHAT, "request")
    assert v is not None
    body = {"model": "m", "messages": [{"role": "assistant", "content": "x", "reasoning_content": "y"}]}
    assert not v.is_valid(body)


# -- error bodies in a foreign shape --------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "error_class"),
    [
        (422, json.dumps({"detail": [{"loc": ["body", "messages"], "msg": "field required"}]}), "invalid_request"),
        (400, json.dumps({"detail": "model not found"}), "invalid_request"),
        (429, json.dumps({"error": "rate limited, slow down"}), "rate_limit"),
        (401, json.dumps({"error": "invalid api key"}), "auth"),
        (500, "", "server_error"),
        (502, "<html>Bad Gateway</html>", "server_error"),
    ],
)
def test_foreign_error_bodies_are_classified_by_status(status, body, error_class, tmp_path, capsys):
    rc, out, err = _parse_cli(tmp_path, body, capsys, "--status", str(status))
    assert rc == 1, err
    assert json.loads(out)["error_class"] == error_class
    assert f"HTTP {status}" in err


def test_foreign_error_message_keeps_the_servers_text():
    exc = OpenAIChatAdapter().classify_error(429, {"error": "rate limited, slow down"})
    assert "rate limited, slow down" in str(exc) and "{" not in str(exc)
    exc = OpenAIChatAdapter().classify_error(400, {"detail": "model not found"})
    assert "model not found" in str(exc)


# -- OpenRouter keeps its own reasoning reading (no block twice) ------------------------------------


def test_openrouter_subclass_reads_reasoning_once():
    reply = _reply({"content": "Paris.", "reasoning": "We need to answer."})
    m = OpenRouterChatAdapter().from_wire_response(WireResponse(reply), _ctx())
    assert [b["type"] for b in m["content"]] == ["thinking", "text"]
    stream = DIALECTS["ollama-v1"][1]
    done = list(OpenRouterChatAdapter().stream_response([stream.encode()], _ctx()))[-1]
    assert [b["type"] for b in done["final_content"]] == ["thinking", "text"]


# -- a real recording, when present ------------------------------------------------------------------

OLLAMA_V1 = SAMPLES / "pydantic__pydantic-ai/tests/models/cassettes/test_ollama/test_ollama_cloud_tool_output.yaml"


def test_real_ollama_v1_replies_read_with_their_reasoning():
    if not OLLAMA_V1.is_file():
        pytest.skip(f"shared sample not present at {OLLAMA_V1}")
    a = OpenAIChatAdapter()
    v = wire_schemas.validator(OPENAI_CHAT, "response")
    assert v is not None
    for it in load_cassette(OLLAMA_V1).interactions:
        body = it.response_json
        assert v.errors(body) == []
        m = a.from_wire_response(WireResponse(body, it.status), _ctx())
        assert m["content"][0]["type"] == "thinking"
        assert m["content"][0]["text"] == body["choices"][0]["message"]["reasoning"]


def test_a_union_that_every_branch_rejects_outright_is_an_error_not_a_crash() -> None:
    """The untagged-union reading (a chunk without `type`) must not run on a union none of
    whose branches is left (found by the migration and schema-diff fuzzers: max() of none):
    a revision-2 AudioBlock whose `transcript` is an object and `source` is missing."""
    from conformance.core.schema_validation import SchemaValidator  # function-level: only this test
    from conformance.core.schemas import schema_set

    v = SchemaValidator(schema_set("canonical", "v2"), "audio-block.json")
    for block in ({"transcript": {}, "type": "audio"}, {"audio": [1, "x"], "transcript": {}, "type": "audio"}):
        errors = v.errors(block)
        assert errors and all(isinstance(e.message, str) and e.message for e in errors)


# -- the corpus as recordings: read by the samples measurement and by `conform --samples` -----------

# each server's documented endpoint (the pages cited beside DIALECTS)
URLS = {
    "deepseek": "https://api.deepseek.com/chat/completions",
    "qwen": "https://dashscope-intl.aliyuncs.com/compatible-mode/v1/chat/completions",
    "ollama-v1": "http://localhost:11434/v1/chat/completions",
    "groq": "https://api.groq.com/openai/v1/chat/completions",
    "mistral": "https://api.mistral.ai/v1/chat/completions",
    "azure": "https://my-resource.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
    "azure-async": "https://my-resource.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
    "perplexity": "https://api.perplexity.ai/chat/completions",
    "xai": "https://api.x.ai/v1/chat/completions",
    "vllm": "http://localhost:8000/v1/chat/completions",
    "openrouter": "https://openrouter.ai/api/v1/chat/completions",
}
# the nine servers issue 25 names, beside Qwen
NINE = {"azure", "mistral", "deepseek", "openrouter", "perplexity", "groq", "xai", "vllm", "ollama-v1"}


def write_corpus(folder: Path) -> Path:
    """Each dialect's reply and stream as two recordings (cassettes) under `folder`."""
    ask = {"model": "m-1", "messages": [{"role": "user", "content": "What is the capital of France?"}]}
    streamed = {**ask, "stream": True, "stream_options": {"include_usage": True}}
    for name, (reply, stream, _, _) in DIALECTS.items():
        write_cassette(folder, name, URLS[name], ask, reply)
        write_cassette(folder, f"{name}-stream", URLS[name], streamed, stream, content_type="text/event-stream")
    return folder


def test_the_corpus_covers_the_nine_servers():
    assert set(DIALECTS) >= NINE and set(URLS) == set(DIALECTS)


def test_the_corpus_reads_without_false_rejection_or_silent_loss(tmp_path):
    cases = measure(write_corpus(tmp_path))
    assert [c for c in cases if c.outcome in PROBLEMS] == [], figures(cases)
    assert [c.outcome for c in cases].count("ok") == 2 * len(DIALECTS), figures(cases)
    with_reasoning = {c.label.split("#")[0].removesuffix(".yaml") for c in cases if "reasoning" in c.detail}
    assert with_reasoning == {
        f"{n}{s}" for n, (_, _, thinking, _) in DIALECTS.items() if thinking for s in ("", "-stream")
    }


def test_conform_replays_the_corpus(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "wire")
    refs = ["openai-chat", "conformance.adapters.openrouter:OpenRouterChatAdapter"]

    def cases(*samples: str) -> dict[tuple[str, str], int]:
        rc = main(["conform", *refs, *samples, "--select", "TC1,TC6,TC8", "-o", "json"])
        report = json.loads(capsys.readouterr().out)
        failed = [(r["rule"], r["adapter"], r["reasons"][:2]) for r in report["results"] if r["status"] == "fail"]
        assert rc == 0, failed
        return {(r["rule"], r["adapter"]): r["cases_run"] for r in report["results"]}

    without, with_corpus = cases("--no-samples"), cases("--samples", str(corpus))
    # every recording of the corpus was replayed: its replies through TC101, its streams through TC601
    others = len(DIALECTS) - 1  # OpenRouter's recordings are its adapter's
    for (rule, adapter), more in {
        ("TC101", "openai-chat"): 2 * others,
        ("TC101", "openrouter"): 2,
        ("TC601", "openai-chat"): others,
        ("TC601", "openrouter"): 1,
    }.items():
        assert with_corpus[rule, adapter] - without[rule, adapter] == more, (rule, adapter)


# -- finish reasons compatible servers add -----------------------------------------------------------


@pytest.mark.parametrize(
    ("finish", "stop", "status"),
    [
        # Mistral's API spec: `model_length` (the model's context length reached), `error`
        ("model_length", "max_tokens", "complete"),
        ("error", "error", "error"),
        # DeepSeek's chat completion reference: "insufficient_system_resource: the request is
        # interrupted due to insufficient resource of the inference system"
        ("insufficient_system_resource", "error", "error"),
    ],
)
def test_finish_reasons_compatible_servers_document(finish, stop, status, tmp_path, capsys):
    reply = _reply({"content": "Partial"}, finish_reason=finish)
    rc, out, err = _parse_cli(tmp_path, json.dumps(reply), capsys)
    assert rc == 0, err
    assert json.loads(out)["metadata"]["status"] == status
    rc, out, err = _parse_cli(
        tmp_path, _sse(_chunk({"role": "assistant", "content": "Partial"}), _chunk({}, finish)), capsys
    )
    assert rc == 0, err
    lines = [json.loads(x) for x in out.splitlines()]
    assert lines[-2]["stop_reason"] == stop and lines[-1]["metadata"]["status"] == status
    assert lines[-1]["content"] == [{"type": "text", "text": "Partial"}]


# -- optional members sent as null ------------------------------------------------------------------

# vLLM's OpenAI-compatible server (https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html)
# serializes its reply models whole: members it does not fill come as null
VLLM_NULLS = {
    **_reply(
        {
            "content": "Hi",
            "refusal": None,
            "annotations": None,
            "audio": None,
            "function_call": None,
            "tool_calls": [],
            "reasoning_content": None,
        },
        stop_reason=None,
        logprobs=None,
    ),
    "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6, "prompt_tokens_details": None},
    "prompt_logprobs": None,
}
# a later fragment of a streamed call repeats its members as null (only `index` and the
# arguments carry anything)
NULL_FRAGMENTS = _sse(
    _chunk(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{**_CALL, "index": 0, "function": {"name": "f", "arguments": ""}}],
        }
    ),
    _chunk(
        {
            "role": None,
            "content": None,
            "tool_calls": [{"index": 0, "id": None, "type": None, "function": {"name": None, "arguments": '{"x": 1}'}}],
        }
    ),
    _chunk({}, "tool_calls"),
)


def test_optional_members_sent_as_null_are_read(tmp_path, capsys):
    rc, out, err = _parse_cli(tmp_path, json.dumps(VLLM_NULLS), capsys)
    assert rc == 0, err
    assert json.loads(out)["content"] == [{"type": "text", "text": "Hi"}]
    rc, out, err = _parse_cli(tmp_path, NULL_FRAGMENTS, capsys)
    assert rc == 0, err
    assert [(b["name"], b["input"]) for b in json.loads(out.splitlines()[-1])["content"]] == [("f", {"x": 1})]


def test_a_documented_member_of_another_type_is_still_refused():
    v = wire_schemas.validator(OPENAI_CHAT, "response")
    assert v is not None
    bad = _reply({"content": "Hi", "annotations": "none"})
    assert v.errors(bad)[0].pointer == "/choices/0/message/annotations"
