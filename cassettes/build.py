"""Writes the project's own cassettes (cassettes/<adapter>/*.yaml) with vcrpy's serializer.

These are hand-written, not recordings: each request is what the reference adapter renders
for a canonical scenario, each response follows the provider's documented wire format
(Anthropic: platform.claude.com/docs "Messages", "Streaming messages", "Extended thinking",
"Errors"; OpenAI: platform.openai.com/docs/api-reference/chat "The chat completion object",
"The chat completion chunk object", error codes). Every non-streaming answer is also
written as the SSE stream that documentation says carries the same content, so the suite
can compare the two parses (TC606). Responses carry `x-turnspec-synthetic: true`: their
token counts are invented and TC701 does not hold estimates to them.

    .venv/bin/python cassettes/build.py        # rewrites the YAML files

`turnspec conform --record` replaces a cassette with a real recording (see
conformance/suite/record.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vcr import serialize
from vcr.request import Request
from vcr.serializers import yamlserializer

from conformance.adapters import AdapterOptions, AnthropicAdapter, OpenAIChatAdapter, RequestContext
from conformance.suite.scripts import PNG_2PX, TOOLS, Builder

HERE = Path(__file__).parent


def _synth() -> dict[str, list[str]]:
    return {"x-turnspec-synthetic": ["true"]}  # a fresh list each time: no YAML anchors


def _json_response(body: Any, status: int = 200) -> dict[str, Any]:
    return {
        "status": {"code": status, "message": "OK" if status == 200 else "Error"},
        "headers": {"content-type": ["application/json"], **_synth()},
        "body": {"string": json.dumps(body)},
    }


def _sse_response(text: str) -> dict[str, Any]:
    return {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["text/event-stream; charset=utf-8"], **_synth()},
        "body": {"string": text},
    }


def write(path: Path, pairs: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> None:
    reqs = [Request("POST", uri, json.dumps(body), {"content-type": ["application/json"]}) for uri, body, _ in pairs]
    data = serialize.serialize({"requests": reqs, "responses": [r for _, _, r in pairs]}, yamlserializer)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data, encoding="utf-8")


# -- Anthropic ----------------------------------------------------------------------------


def anthropic_sse(resp: dict[str, Any]) -> str:
    """The documented event flow for `resp`: message_start, per block start/delta(s)/stop,
    message_delta (stop_reason, usage), message_stop; a ping after the first block start."""
    out: list[tuple[str, dict[str, Any]]] = []
    start = {
        **resp,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**resp["usage"], "output_tokens": 1},
    }
    out.append(("message_start", {"type": "message_start", "message": start}))
    for i, b in enumerate(resp["content"]):
        if b["type"] == "text":
            out.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                )
            )
            words = b["text"].split(" ")
            for j, w in enumerate(words):
                piece = w if j == 0 else " " + w
                out.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": piece},
                        },
                    )
                )
        elif b["type"] == "thinking":
            out.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                    },
                )
            )
            half = len(b["thinking"]) // 2
            for piece in (b["thinking"][:half], b["thinking"][half:]):
                out.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "thinking_delta", "thinking": piece},
                        },
                    )
                )
            out.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": i,
                        "delta": {"type": "signature_delta", "signature": b["signature"]},
                    },
                )
            )
        elif b["type"] == "redacted_thinking":
            out.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": i, "content_block": b},
                )
            )
        elif b["type"] == "tool_use":
            out.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {
                            "type": "tool_use",
                            "id": b["id"],
                            "name": b["name"],
                            "input": {},
                        },
                    },
                )
            )
            js = json.dumps(b["input"])
            for k in range(0, len(js), 9):
                out.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": js[k : k + 9]},
                        },
                    )
                )
        out.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        if i == 0:
            out.append(("ping", {"type": "ping"}))
    out.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": resp["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": resp["usage"]["output_tokens"]},
            },
        )
    )
    out.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in out)


def anthropic_message(
    mid: str,
    content: list[dict[str, Any]],
    stop: str,
    usage_in: int,
    usage_out: int,
    cache_read: int = 0,
) -> dict[str, Any]:
    return {
        "id": mid,
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage_in,
            "output_tokens": usage_out,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": cache_read,
        },
    }


def build_anthropic() -> None:
    a = AnthropicAdapter()
    uri = "https://api.anthropic.com/v1/messages"
    opts = AdapterOptions(model="anthropic:claude-sonnet-4-5", max_output_tokens=1024)

    def pair(
        conv: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        resp: dict[str, Any],
        o: AdapterOptions = opts,
    ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        body = a.to_wire(conv, tools, o).body
        sbody = a.to_wire(conv, tools, AdapterOptions(**{**o.__dict__, "stream": True})).body
        return [(uri, body, _json_response(resp)), (uri, sbody, _sse_response(anthropic_sse(resp)))]

    # text
    b = Builder(session_id="sess_cassette_anthropic_text")
    b.add("system", [{"type": "text", "text": "You are a concise assistant."}])
    b.add("user", [{"type": "text", "text": "What is a ULID, in one sentence?"}])
    resp = anthropic_message(
        "msg_01TextAbCdEfGhIjKlMnOpQr",
        [
            {
                "type": "text",
                "text": "A ULID is a 128-bit, lexicographically sortable identifier: a 48-bit millisecond timestamp followed by 80 random bits, written as 26 Crockford base32 characters.",
            }
        ],
        "end_turn",
        27,
        38,
    )
    write(HERE / "anthropic" / "text.yaml", pair(b.messages, [], resp))

    # parallel tools, then the follow-up turn with both results
    b = Builder(session_id="sess_cassette_anthropic_tools")
    b.add("user", [{"type": "text", "text": "Read README.md and search the code for TODO."}])
    resp = anthropic_message(
        "msg_01ToolsAbCdEfGhIjKlMnOp",
        [
            {"type": "text", "text": "I'll read the file and search in parallel."},
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "read_file",
                "input": {"path": "README.md", "limit": 200},
            },
            {
                "type": "tool_use",
                "id": "toolu_01B19r91rx91mr928946mr0",
                "name": "search_code",
                "input": {"query": "TODO", "flags": ["i"]},
            },
        ],
        "tool_use",
        690,
        121,
    )
    pairs = pair(b.messages, TOOLS, resp)
    msg = a.from_wire_response(resp, RequestContext(b.session_id))
    b.messages.append({**msg, "id": b.add("assistant", [])["id"]})
    b.messages.pop(-2)
    for blk, text in zip(
        [x for x in msg["content"] if x["type"] == "tool_use"],
        ["# Project Foo\nA tool for bars.", "src/a.py:3: TODO speed up"],
        strict=True,
    ):
        b.add(
            "tool",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": blk["id"],
                    "content": [{"type": "text", "text": text}],
                }
            ],
            parent_tool_use_id=blk["id"],
        )
    follow = anthropic_message(
        "msg_01FollowAbCdEfGhIjKlMnO",
        [
            {
                "type": "text",
                "text": "README.md describes Project Foo; one TODO is in src/a.py line 3.",
            }
        ],
        "end_turn",
        861,
        24,
        cache_read=512,
    )
    pairs += pair(b.messages, TOOLS, follow)
    write(HERE / "anthropic" / "tools.yaml", pairs)

    # thinking with signature, then redacted thinking replayed
    b = Builder(session_id="sess_cassette_anthropic_thinking")
    b.add("user", [{"type": "text", "text": "Is 1013 prime? Think first."}])
    think = {
        **opts.__dict__,
        "extra": {"thinking": {"type": "enabled", "budget_tokens": 1024}},
        "max_output_tokens": 2048,
    }
    topts = AdapterOptions(**think)
    resp = anthropic_message(
        "msg_01ThinkAbCdEfGhIjKlMnOp",
        [
            {
                "type": "thinking",
                "thinking": "Check divisibility by primes up to 31: 1013 is odd, digit sum 5, not divisible by 7, 11, 13, 17, 19, 23, 29 or 31.",
                "signature": "ErUBCkYIBRgCIkCL7mZ1uQ4w0TtJ0Fq3k5sHnTf9ZUu0nZ3qN6b8eB0aR2kz7QyCk0yTz1Q4oA5Bv8vN9dR2w3Y6aH8dEgxsGM/71Y3P0MXKjXUaDHkHCRdukfBjp1m8",
            },
            {"type": "text", "text": "Yes, 1013 is prime."},
        ],
        "end_turn",
        52,
        88,
    )
    pairs = pair(b.messages, [], resp, topts)
    msg = a.from_wire_response(resp, RequestContext(b.session_id))
    b.messages.append({**msg, "id": b.add("assistant", [])["id"]})
    b.messages.pop(-2)
    b.add(
        "user",
        [
            {
                "type": "text",
                "text": "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253",
            }
        ],
    )
    red = anthropic_message(
        "msg_01RedactAbCdEfGhIjKlMnO",
        [
            {
                "type": "redacted_thinking",
                "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8URj2pLmKJbCqGv5+TzEIqFHwAIbfNhMXYHZ2Q7a9sV1nGiE0rTnSzD4oAa6K8hF1p3sJ6c2UGkCf0u7mQ=",
            },
            {
                "type": "text",
                "text": "I can't share my reasoning for that, but here is the answer: nothing to do.",
            },
        ],
        "end_turn",
        176,
        95,
    )
    pairs += pair(b.messages, [], red, topts)
    write(HERE / "anthropic" / "thinking.yaml", pairs)

    # image input
    b = Builder(session_id="sess_cassette_anthropic_image")
    b.add(
        "user",
        [
            {
                "type": "image",
                "source": {"kind": "base64", "data": PNG_2PX},
                "media_type": "image/png",
            },
            {"type": "text", "text": "What colour is this image?"},
        ],
    )
    resp = anthropic_message(
        "msg_01ImageAbCdEfGhIjKlMnOp",
        [{"type": "text", "text": "It is a tiny, almost fully transparent image."}],
        "end_turn",
        19,
        14,
    )
    write(HERE / "anthropic" / "image.yaml", pair(b.messages, [], resp)[:1])

    # documented error bodies (platform.claude.com/docs "Errors")
    b = Builder(session_id="sess_cassette_anthropic_errors")
    b.add("user", [{"type": "text", "text": "Hello"}])
    body = a.to_wire(b.messages, [], opts).body
    errs = [
        (
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute rate limit",
        ),
        (529, "overloaded_error", "Overloaded"),
        (401, "authentication_error", "invalid x-api-key"),
        (400, "invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum"),
    ]
    write(
        HERE / "anthropic" / "errors.yaml",
        [
            (
                uri,
                body,
                _json_response(
                    {
                        "type": "error",
                        "error": {"type": t, "message": m},
                        "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
                    },
                    st,
                ),
            )
            for st, t, m in errs
        ],
    )


# -- OpenAI Chat Completions ---------------------------------------------------------------


def openai_sse(resp: dict[str, Any]) -> str:
    """The documented chunk flow: role chunk, content deltas, tool_calls deltas (id and
    name first, then argument fragments), finish_reason chunk, usage chunk (include_usage),
    `[DONE]`."""
    base = {
        "id": resp["id"],
        "object": "chat.completion.chunk",
        "created": resp["created"],
        "model": resp["model"],
        "system_fingerprint": resp.get("system_fingerprint"),
    }
    msg = resp["choices"][0]["message"]
    chunks: list[dict[str, Any]] = [
        {
            **base,
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "role": "assistant",
                        "content": "" if msg.get("content") else None,
                        "refusal": None,
                    },
                    "logprobs": None,
                    "finish_reason": None,
                }
            ],
        }
    ]
    if msg.get("content"):
        words = msg["content"].split(" ")
        for j, w in enumerate(words):
            chunks.append(
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"content": w if j == 0 else " " + w},
                            "logprobs": None,
                            "finish_reason": None,
                        }
                    ],
                }
            )
    for i, call in enumerate(msg.get("tool_calls") or []):
        chunks.append(
            {
                **base,
                "choices": [
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": i,
                                    "id": call["id"],
                                    "type": "function",
                                    "function": {"name": call["function"]["name"], "arguments": ""},
                                }
                            ]
                        },
                        "logprobs": None,
                        "finish_reason": None,
                    }
                ],
            }
        )
        args = call["function"]["arguments"]
        for k in range(0, len(args), 7):
            chunks.append(
                {
                    **base,
                    "choices": [
                        {
                            "index": 0,
                            "delta": {"tool_calls": [{"index": i, "function": {"arguments": args[k : k + 7]}}]},
                            "logprobs": None,
                            "finish_reason": None,
                        }
                    ],
                }
            )
    chunks.append(
        {
            **base,
            "choices": [
                {
                    "index": 0,
                    "delta": {},
                    "logprobs": None,
                    "finish_reason": resp["choices"][0]["finish_reason"],
                }
            ],
        }
    )
    chunks.append({**base, "choices": [], "usage": resp["usage"]})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


def openai_completion(
    cid: str, message: dict[str, Any], finish: str, prompt: int, completion: int, cached: int = 0
) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": 1778241600,
        "model": "gpt-4o-2024-08-06",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "refusal": None, "annotations": [], **message},
                "logprobs": None,
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": 0,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        },
        "service_tier": "default",
        "system_fingerprint": "fp_07871e2ad8",
    }


def build_openai() -> None:
    a = OpenAIChatAdapter()
    uri = "https://api.openai.com/v1/chat/completions"
    opts = AdapterOptions(model="openai:gpt-4o", max_output_tokens=1024)

    def pair(
        conv: list[dict[str, Any]], tools: list[dict[str, Any]], resp: dict[str, Any]
    ) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        body = a.to_wire(conv, tools, opts).body
        sbody = a.to_wire(conv, tools, AdapterOptions(**{**opts.__dict__, "stream": True})).body
        return [(uri, body, _json_response(resp)), (uri, sbody, _sse_response(openai_sse(resp)))]

    b = Builder(session_id="sess_cassette_openai_text")
    b.add("system", [{"type": "text", "text": "You are a concise assistant."}])
    b.add("user", [{"type": "text", "text": "What is a ULID, in one sentence?"}])
    resp = openai_completion(
        "chatcmpl-CTextAbCdEfGhIjKlMnOpQrStUvWx",
        {
            "content": "A ULID is a 128-bit sortable identifier: a millisecond timestamp plus randomness, in 26 base32 characters."
        },
        "stop",
        27,
        27,
    )
    write(HERE / "openai-chat" / "text.yaml", pair(b.messages, [], resp))

    b = Builder(session_id="sess_cassette_openai_tools")
    b.add("system", [{"type": "text", "text": "Use the tools."}])
    b.add("user", [{"type": "text", "text": "Read README.md and search the code for TODO."}])
    resp = openai_completion(
        "chatcmpl-CToolsAbCdEfGhIjKlMnOpQrStUvW",
        {
            "content": None,
            "tool_calls": [
                {
                    "id": "call_Qx4pN2sVb8LmT1aYc9eRw3Zk",
                    "type": "function",
                    "function": {
                        "name": "read_file",
                        "arguments": '{"path":"README.md","limit":200}',
                    },
                },
                {
                    "id": "call_H7uJ5kWq0ZyXe2rTb6nMv1Pd",
                    "type": "function",
                    "function": {
                        "name": "search_code",
                        "arguments": '{"query":"TODO","flags":["i"]}',
                    },
                },
            ],
        },
        "tool_calls",
        118,
        58,
    )
    pairs = pair(b.messages, TOOLS, resp)
    msg = a.from_wire_response(resp, RequestContext(b.session_id))
    b.messages.append({**msg, "id": b.add("assistant", [])["id"]})
    b.messages.pop(-2)
    for blk, text in zip(
        [x for x in msg["content"] if x["type"] == "tool_use"],
        ["# Project Foo\nA tool for bars.", "src/a.py:3: TODO speed up"],
        strict=True,
    ):
        b.add(
            "tool",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": blk["id"],
                    "content": [{"type": "text", "text": text}],
                }
            ],
            parent_tool_use_id=blk["id"],
        )
    follow = openai_completion(
        "chatcmpl-CFollowAbCdEfGhIjKlMnOpQrStUv",
        {"content": "README.md describes Project Foo; one TODO is in src/a.py line 3."},
        "stop",
        210,
        22,
        cached=128,
    )
    pairs += pair(b.messages, TOOLS, follow)
    write(HERE / "openai-chat" / "tools.yaml", pairs)

    b = Builder(session_id="sess_cassette_openai_image")
    b.add(
        "user",
        [
            {"type": "text", "text": "What colour is this image?"},
            {
                "type": "image",
                "source": {"kind": "base64", "data": PNG_2PX},
                "media_type": "image/png",
            },
        ],
    )
    resp = openai_completion(
        "chatcmpl-CImageAbCdEfGhIjKlMnOpQrStUvW",
        {"content": "It is a tiny, nearly transparent image."},
        "stop",
        265,
        10,
    )
    write(HERE / "openai-chat" / "image.yaml", pair(b.messages, [], resp)[:1])

    b = Builder(session_id="sess_cassette_openai_errors")
    b.add("user", [{"type": "text", "text": "Hello"}])
    body = a.to_wire(b.messages, [], opts).body
    errs = [
        (
            401,
            "invalid_request_error",
            "invalid_api_key",
            "Incorrect API key provided: sk-proj-****.",
        ),
        (
            429,
            "requests",
            "rate_limit_exceeded",
            "Rate limit reached for gpt-4o in organization org-xxxx on tokens per min (TPM).",
        ),
        (
            400,
            "invalid_request_error",
            "context_length_exceeded",
            "This model's maximum context length is 128000 tokens.",
        ),
        (500, "server_error", None, "The server had an error while processing your request."),
    ]
    write(
        HERE / "openai-chat" / "errors.yaml",
        [
            (
                uri,
                body,
                _json_response({"error": {"message": m, "type": t, "param": None, "code": c}}, st),
            )
            for st, t, c, m in errs
        ],
    )


if __name__ == "__main__":
    build_anthropic()
    build_openai()
