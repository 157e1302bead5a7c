# Run from the checkout root: python tests/third_party/write_bedrock_invoke_cassettes.py
"""Writes tests/third_party/cassettes/their-bedrock-invoke/*.yaml: Claude through Amazon
Bedrock InvokeModel and InvokeModelWithResponseStream, typed by hand from AWS's and
Anthropic's documentation (it imports no adapter):

- requests: the Messages body of AWS's "Request and Response" page for Claude
  (`anthropic_version: "bedrock-2023-05-31"`, no `model`, no `stream`), the model id
  percent-encoded in the path (`/model/{modelId}/invoke`, `/invoke-with-response-stream`),
  `Content-Type: application/json`;
- replies: Anthropic's Messages response; streams: an AWS event stream whose `chunk` events
  carry, base64 in `bytes`, Anthropic's stream events in the documented order (message_start,
  content_block_start/delta/stop, message_delta, message_stop with Bedrock's
  `amazon-bedrock-invocationMetrics`), framed as AWS's "Event stream encoding" says (prelude,
  headers, payload, two CRC32s computed here);
- errors: the exceptions of the InvokeModel reference with their statuses and
  `x-amzn-ErrorType`, and streams that end in an exception frame of ResponseStream's members.

Token counts are invented: every response says `x-turnspec-synthetic`.
"""

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

from vcr import serialize
from vcr.request import Request
from vcr.serializers import yamlserializer

from conformance.suite.scripts import PNG_2PX  # a real 2x2 PNG (base64)

OUT = Path("tests/third_party/cassettes/their-bedrock-invoke")
HOST = "https://bedrock-runtime.us-east-1.amazonaws.com"
HAIKU = "anthropic.claude-3-haiku-20240307-v1%3A0"
SONNET = "anthropic.claude-3-7-sonnet-20250219-v1%3A0"
VERSION = "bedrock-2023-05-31"
SIG = "EqQBCkgIAxABGAIiQL4c0Q2mDw8Fz6vHq5mFJ3bFkY5c1g2x7y3xWvQeAn6n1p3o6kQvGm5w4eXk8a6b2u1y0z9sH4jR8tA1b3c2dE"
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj"


def _str_header(name: str, value: str) -> bytes:
    n, v = name.encode(), value.encode()
    return bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    raw = b"".join(_str_header(k, v) for k, v in headers.items())
    prelude = struct.pack(">II", 12 + len(raw) + len(payload) + 4, len(raw))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + raw + payload
    return message + struct.pack(">I", zlib.crc32(message))


def chunk(event: dict[str, Any]) -> bytes:
    """One `chunk` of the ResponseStream: PayloadPart `bytes`, base64 of one Anthropic event."""
    data = base64.b64encode(json.dumps(event, separators=(",", ":")).encode()).decode()
    payload = json.dumps({"bytes": data}, separators=(",", ":")).encode()
    return frame({":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload)


def exception(name: str, message: str) -> bytes:
    payload = json.dumps({"message": message}).encode()
    return frame({":exception-type": name, ":content-type": "application/json", ":message-type": "exception"}, payload)


def usage(inp: int, out: int, write: int = 0, read: int = 0) -> dict[str, int]:
    u = {"input_tokens": inp, "output_tokens": out}
    if write or read:
        u |= {"cache_creation_input_tokens": write, "cache_read_input_tokens": read}
    return u


def reply(rid: str, model: str, content: list[dict[str, Any]], stop: str, use: dict[str, int], seq: str | None = None):
    return {
        "id": rid,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": stop,
        "stop_sequence": seq,
        "usage": use,
    }


def pieces(text: str, n: int = 3) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def block_events(i: int, b: dict[str, Any]) -> list[dict[str, Any]]:
    """content_block_start, its deltas and content_block_stop (Anthropic's streaming docs)."""
    t = b["type"]
    if t == "text":
        start, deltas = {"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in pieces(b["text"])]
    elif t == "tool_use":
        start = {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}
        args = json.dumps(b["input"], separators=(",", ":"))
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in ["", *pieces(args)]]
    elif t == "thinking":
        start = {"type": "thinking", "thinking": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(b["thinking"])]
        deltas.append({"type": "signature_delta", "signature": b["signature"]})
    else:  # redacted_thinking arrives whole in its start
        start, deltas = dict(b), []
    out = [{"type": "content_block_start", "index": i, "content_block": start}]
    out += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
    return [*out, {"type": "content_block_stop", "index": i}]


def stream_of(final: dict[str, Any], tail: bytes = b"", cut_after: int | None = None) -> bytes:
    start = {**final, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {"input_tokens": final["usage"]["input_tokens"], "output_tokens": 1} | {
        k: v for k, v in final["usage"].items() if k.startswith("cache_")
    }
    events = [{"type": "message_start", "message": start}]
    for i, b in enumerate(final["content"]):
        if cut_after is not None and i == cut_after:
            return b"".join(map(chunk, events)) + tail
        events += block_events(i, b)
    if cut_after is not None:
        return b"".join(map(chunk, events)) + tail
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": final["stop_reason"], "stop_sequence": final["stop_sequence"]},
            "usage": {"output_tokens": final["usage"]["output_tokens"]},
        }
    )
    metrics = {
        "inputTokenCount": final["usage"]["input_tokens"],
        "outputTokenCount": final["usage"]["output_tokens"],
        "invocationLatency": 1204,
        "firstByteLatency": 312,
    }
    events.append({"type": "message_stop", "amazon-bedrock-invocationMetrics": metrics})
    return b"".join(map(chunk, events)) + tail


def synth(extra: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    return {
        "x-amzn-requestid": ["5b7e3c1a-9d2f-4e6b-8a1c-3f2e1d0c9b8a"],
        "x-turnspec-synthetic": ["written from AWS's InvokeModel and Anthropic's Messages docs"],
        **(extra or {}),
    }


def json_resp(body: Any, status: int = 200, extra: dict[str, list[str]] | None = None) -> dict[str, Any]:
    return {
        "status": {"code": status, "message": "OK" if status == 200 else "Error"},
        "headers": {"content-type": ["application/json"], **synth(extra)},
        "body": {"string": json.dumps(body)},
    }


def es_resp(body: bytes) -> dict[str, Any]:
    return {
        "status": {"code": 200, "message": "OK"},
        "headers": {
            "content-type": ["application/vnd.amazon.eventstream"],
            **synth({"x-amzn-bedrock-content-type": ["application/json"]}),
        },
        "body": {"string": body},
    }


def err(status: int, kind: str, message: str) -> dict[str, Any]:
    return json_resp(
        {"message": message},
        status,
        {"x-amzn-ErrorType": [f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"]},
    )


def write(name: str, pairs: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> None:
    reqs = []
    for where, body, _ in pairs:
        streamed = where.endswith("-stream")
        accept = {"x-amzn-bedrock-accept": ["application/json"]} if streamed else {"accept": ["application/json"]}
        headers = {"content-type": ["application/json"], **accept}
        reqs.append(Request("POST", f"{HOST}/model/{where}", json.dumps(body), headers))
    data = serialize.serialize({"requests": reqs, "responses": [r for _, _, r in pairs]}, yamlserializer)
    (OUT / name).write_text(data, encoding="utf-8")


def both(
    req: dict[str, Any], final: dict[str, Any], model: str = HAIKU
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The request and its reply, then the same request streamed (TC606 compares the two)."""
    return [
        (f"{model}/invoke", req, json_resp(final)),
        (f"{model}/invoke-with-response-stream", req, es_resp(stream_of(final))),
    ]


def body(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"anthropic_version": VERSION, "max_tokens": extra.pop("max_tokens", 512), **extra, "messages": messages}


def user(*content: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(content)}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


OUT.mkdir(parents=True, exist_ok=True)

# -- text, system, stop reasons ---------------------------------------------------------------
hello = body([user(text("Hello, Claude"))], system="You are a concise assistant.", temperature=0.5)
hello_final = reply(
    "msg_bdrk_01Hn2aVb3",
    "claude-3-haiku-20240307",
    [text("Hello! How can I help you today?")],
    "end_turn",
    usage(18, 12),
)
cut = body([user(text("Write a haiku about the sea."))], max_tokens=6)
cut_final = reply(
    "msg_bdrk_01Kq7dWx4", "claude-3-haiku-20240307", [text("Waves fold into foam")], "max_tokens", usage(15, 6)
)
stop = body([user(text("Count from one to ten, in words."))], stop_sequences=["five"])
stop_final = reply(
    "msg_bdrk_01Lr8eXy5",
    "claude-3-haiku-20240307",
    [text("one, two, three, four, ")],
    "stop_sequence",
    usage(17, 9),
    "five",
)
write("text.yaml", [*both(hello, hello_final), *both(cut, cut_final), *both(stop, stop_final)])

# -- tools: two calls in one turn, streamed in fragments; the results, one an error ---------
WEATHER = {
    "name": "get_weather",
    "description": "Get the current weather in a given location",
    "input_schema": {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}},
        "required": ["location"],
    },
}
ask = user(text("What is the weather in San Francisco and in New York?"))
calls = [
    text("I'll check both cities."),
    {
        "type": "tool_use",
        "id": "toolu_bdrk_01A09q90qw90lq917835lq9",
        "name": "get_weather",
        "input": {"location": "San Francisco, CA"},
    },
    {
        "type": "tool_use",
        "id": "toolu_bdrk_01B17r28xa38nt028946mr0",
        "name": "get_weather",
        "input": {"location": "New York, NY"},
    },
]
tools_req = body([ask], tools=[WEATHER])
tools_final = reply("msg_bdrk_01Mt9fZa6", "claude-3-haiku-20240307", calls, "tool_use", usage(384, 92))
results = user(
    {"type": "tool_result", "tool_use_id": calls[1]["id"], "content": "15 degrees, fog"},
    {
        "type": "tool_result",
        "tool_use_id": calls[2]["id"],
        "content": "Error: the station is offline",
        "is_error": True,
    },
)
answer_req = body([ask, {"role": "assistant", "content": calls}, results], tools=[WEATHER])
answer_final = reply(
    "msg_bdrk_01Nu0gAb7",
    "claude-3-haiku-20240307",
    [text("San Francisco is 15 degrees and foggy; New York's station is offline.")],
    "end_turn",
    usage(512, 21),
)
write("tools.yaml", [*both(tools_req, tools_final), *both(answer_req, answer_final)])

# -- extended thinking: a signature streamed last, redacted thinking, thinking sent back -----
THINK = {"type": "enabled", "budget_tokens": 1024}
reason_q = user(text("Is 1009 a prime number?"))
thought = {"type": "thinking", "thinking": "Check divisors up to 31: none divide 1009.", "signature": SIG}
think_req = body([reason_q], max_tokens=2048, thinking=THINK)
think_final = reply(
    "msg_bdrk_01Pv1hBc8",
    "claude-3-7-sonnet-20250219",
    [thought, text("Yes, 1009 is prime.")],
    "end_turn",
    usage(46, 88),
)
redacted_final = reply(
    "msg_bdrk_01Qw2iCd9",
    "claude-3-7-sonnet-20250219",
    [{"type": "redacted_thinking", "data": REDACTED}, text("Yes, 1009 is prime.")],
    "end_turn",
    usage(46, 70),
)
call = {
    "type": "tool_use",
    "id": "toolu_bdrk_01C28s39yb49ou139057ns1",
    "name": "get_weather",
    "input": {"location": "Paris"},
}
think_tool_req = body(
    [user(text("Should I take an umbrella in Paris?"))], max_tokens=2048, thinking=THINK, tools=[WEATHER]
)
think_tool_final = reply(
    "msg_bdrk_01Rx3jDe0", "claude-3-7-sonnet-20250219", [thought, call], "tool_use", usage(402, 64)
)
back_req = body(
    [
        user(text("Should I take an umbrella in Paris?")),
        {"role": "assistant", "content": [thought, call]},
        user({"type": "tool_result", "tool_use_id": call["id"], "content": "rain, 12 degrees"}),
    ],
    max_tokens=2048,
    thinking=THINK,
    tools=[WEATHER],
)
back_final = reply(
    "msg_bdrk_01Sy4kEf1",
    "claude-3-7-sonnet-20250219",
    [text("Yes, take an umbrella: it is raining.")],
    "end_turn",
    usage(470, 14),
)
write(
    "thinking.yaml",
    [
        *both(think_req, think_final, SONNET),
        (f"{SONNET}/invoke", think_req, json_resp(redacted_final)),
        *both(think_tool_req, think_tool_final, SONNET),
        *both(back_req, back_final, SONNET),
    ],
)

# -- an image by its bytes; prompt caching ----------------------------------------------------
image_req = body(
    [
        user(
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_2PX}},
            text("What is in this image?"),
        )
    ]
)
image_final = reply(
    "msg_bdrk_01Tz5lFg2",
    "claude-3-haiku-20240307",
    [text("A tiny image of a few coloured pixels.")],
    "end_turn",
    usage(22, 11),
)
write("image.yaml", both(image_req, image_final))
manual = "You answer questions about the tide tables below.\n" + "High water 06:12, low water 12:25. " * 120
cached = [{"type": "text", "text": manual, "cache_control": {"type": "ephemeral"}}]
cache_req = body([user(text("When is high water?"))], system=cached)
write_final = reply(
    "msg_bdrk_01Ua6mGh3",
    "claude-3-haiku-20240307",
    [text("High water is at 06:12.")],
    "end_turn",
    usage(12, 9, write=1460),
)
again_req = body([user(text("And low water?"))], system=cached)
read_final = reply(
    "msg_bdrk_01Vb7nHi4",
    "claude-3-haiku-20240307",
    [text("Low water is at 12:25.")],
    "end_turn",
    usage(11, 9, read=1460),
)
write("cache.yaml", [*both(cache_req, write_final), *both(again_req, read_final)])

# -- errors: the InvokeModel reference's exceptions; streams ending in an exception frame ----
errors = [
    (400, "ValidationException", "Input is too long for requested model."),
    (
        400,
        "ValidationException",
        "Malformed input request: #: extraneous key [model] is not permitted, please reformat your input and try again.",
    ),
    (403, "AccessDeniedException", "You don't have access to the model with the specified model ID."),
    (404, "ResourceNotFoundException", "The specified resource ARN was not found."),
    (
        408,
        "ModelTimeoutException",
        "The request took too long to process. Processing time exceeded the model timeout length.",
    ),
    (424, "ModelErrorException", "The request failed due to an error while processing the model."),
    (429, "ThrottlingException", "Too many requests, please wait before trying again."),
    (500, "InternalServerException", "An internal server error occurred. Retry your request."),
    (503, "ServiceUnavailableException", "The service isn't currently available. Please try again later."),
]
partial = reply("msg_bdrk_01Wc8oIj5", "claude-3-haiku-20240307", [text("Hello! How can I")], "end_turn", usage(18, 5))
mid = [
    ("throttlingException", "Too many tokens, please wait before trying again."),
    ("modelStreamErrorException", "An error occurred while streaming the response. Retry your request."),
    (
        "modelTimeoutException",
        "The request took too long to process. Processing time exceeded the model timeout length.",
    ),
]
write(
    "errors.yaml",
    [(f"{HAIKU}/invoke", hello, err(*e)) for e in errors]
    + [
        (f"{HAIKU}/invoke-with-response-stream", hello, es_resp(stream_of(partial, exception(k, m), cut_after=1)))
        for k, m in mid
    ],
)
