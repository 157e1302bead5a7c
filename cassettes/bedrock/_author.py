"""Authoring helper for cassettes/bedrock (hand-written bodies; imports no adapter).

Every request and response below is written by hand from AWS's documentation: the Converse
and ConverseStream API references (request syntax, response elements, the ConverseStreamOutput
events), the Converse user guide (tool use with `toolConfig`/`toolUse`/`toolResult` and
`status: "error"`, images by bytes, prompt caching with `cachePoint` and
`cacheReadInputTokens`/`cacheWriteInputTokens`, reasoning with `reasoningContent`),
botocore's `bedrock-runtime` service model for the shapes and the error names, and AWS's
"Event stream encoding" for the binary framing. Streams are real event-stream messages:
prelude (total length, headers length, CRC32 of both), headers (`:event-type`,
`:content-type`, `:message-type`), a JSON payload and a CRC32 of the message, computed here
with zlib. Errors carry the `x-amzn-ErrorType` header and the status of their exception
shape. Token counts are invented (every response says `x-turnspec-synthetic: true`).

Run from the checkout root: .venv/bin/python cassettes/bedrock/_author.py
"""

import json
import struct
import zlib
from pathlib import Path
from typing import Any

from vcr import serialize
from vcr.request import Request
from vcr.serializers import yamlserializer

from conformance.suite.scripts import PNG_2PX  # a real 2x2 PNG (base64)

OUT = Path(__file__).parent
HOST = "https://bedrock-runtime.us-east-1.amazonaws.com"
MODEL = "anthropic.claude-3-7-sonnet-20250219-v1%3A0"  # the model id, percent-encoded in the path
NOVA = "amazon.nova-lite-v1%3A0"
SIG1 = "EqQBCkgIAxABGAIiQL4c0Q2mDw8Fz6vHq5mFJ3bFkY5c1+g2x7y3xWvQeAn6n1p3o6kQvGm5w4eXk8a6b2u1y0z9sH4jR8tA1b3c2dESDKxkq7wGfh2jHn4rZRoMt0zYqZ8Q"
SIG2 = "ErUBCkgIAxABGAIiQBh9xZ2y1k3jv0f8m6q4n2o1p7r5s3t9u0w8x6y4z2a1b3c5d7e9f1g3h5i7j9k1l3m5n7o9p1q3r5s7t9u1v3w5x7y9zEgzN8vQ2b4d6f8h0j2l4GgxFk3p5r7t9v1x3z5b7"
REDACTED = (
    "RXVRRkNrZ0lCeEFCR0FJcVFOVjg5eXExUjgrODJieWNLWi84ZVZyRFBCMUVzZk1uL1NrQWQ5TzlWS3k2cUt6N1BYbW5jOS9xZDJz"
    "VUdBWFBrSW0zdW5veDFzYTBibTVEVHBIR2Ywb1NEUFpCZ1hpMFRJUTVjNFY3WnhvTUxFMzlTM0NvQTA2SFpSeEhJams9"
)


# -- AWS event-stream encoding -----------------------------------------------------------------


def _str_header(name: str, value: str) -> bytes:
    n, v = name.encode(), value.encode()
    return bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    raw_headers = b"".join(_str_header(k, v) for k, v in headers.items())
    total = 12 + len(raw_headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(raw_headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + raw_headers + payload
    return message + struct.pack(">I", zlib.crc32(message))


def event(name: str, payload: dict[str, Any]) -> bytes:
    return frame(
        {":event-type": name, ":content-type": "application/json", ":message-type": "event"},
        json.dumps(payload, separators=(",", ":")).encode(),
    )


def exception(name: str, message: str) -> bytes:
    return frame(
        {":exception-type": name, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": message}).encode(),
    )


# -- bodies ------------------------------------------------------------------------------------


def synth(extra: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    return {
        "x-amzn-requestid": ["7c0d1a4e-2b9f-4c6d-8e1f-2a3b4c5d6e7f"],
        "x-turnspec-synthetic": ["true"],
        **(extra or {}),
    }


def usage(inp: int, out: int, read: int | None = None, write: int | None = None) -> dict[str, int]:
    u = {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out + (read or 0) + (write or 0)}
    if read is not None:
        u["cacheReadInputTokens"] = read
    if write is not None:
        u["cacheWriteInputTokens"] = write
    return u


def reply(content: list[dict[str, Any]], stop: str, use: dict[str, int]) -> dict[str, Any]:
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": use,
        "metrics": {"latencyMs": 812},
    }


def json_resp(body: Any, status: int = 200, extra: dict[str, list[str]] | None = None) -> dict[str, Any]:
    return {
        "status": {"code": status, "message": "OK" if status == 200 else "Error"},
        "headers": {"content-type": ["application/json"], **synth(extra)},
        "body": {"string": json.dumps(body)},
    }


def chunks(text: str, n: int) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def stream_of(final: dict[str, Any], tail: bytes = b"", stop_at: int | None = None) -> bytes:
    """The documented event flow for a Converse response: messageStart; per block a
    contentBlockStart (tool use only), its deltas and a contentBlockStop; messageStop;
    metadata. `stop_at`: the number of blocks after which the stream is cut and `tail` sent."""
    out = [event("messageStart", {"role": "assistant"})]
    blocks = final["output"]["message"]["content"]
    for i, b in enumerate(blocks):
        if stop_at is not None and i == stop_at:
            return b"".join(out) + tail
        if "text" in b:
            for piece in chunks(b["text"], 3):
                out.append(event("contentBlockDelta", {"contentBlockIndex": i, "delta": {"text": piece}}))
        elif "toolUse" in b:
            use = b["toolUse"]
            start = {"toolUseId": use["toolUseId"], "name": use["name"]}
            out.append(event("contentBlockStart", {"contentBlockIndex": i, "start": {"toolUse": start}}))
            for piece in chunks(json.dumps(use["input"], separators=(",", ":")), 3):
                out.append(event("contentBlockDelta", {"contentBlockIndex": i, "delta": {"toolUse": {"input": piece}}}))
        elif "reasoningContent" in b:
            rc = b["reasoningContent"]
            if "redactedContent" in rc:
                delta = {"reasoningContent": {"redactedContent": rc["redactedContent"]}}
                out.append(event("contentBlockDelta", {"contentBlockIndex": i, "delta": delta}))
            else:
                for piece in chunks(rc["reasoningText"]["text"], 3):
                    delta = {"reasoningContent": {"text": piece}}
                    out.append(event("contentBlockDelta", {"contentBlockIndex": i, "delta": delta}))
                sig = {"reasoningContent": {"signature": rc["reasoningText"]["signature"]}}
                out.append(event("contentBlockDelta", {"contentBlockIndex": i, "delta": sig}))
        out.append(event("contentBlockStop", {"contentBlockIndex": i}))
    if stop_at is not None:  # cut after the last block, before messageStop
        return b"".join(out) + tail
    out.append(event("messageStop", {"stopReason": final["stopReason"]}))
    out.append(event("metadata", {"usage": final["usage"], "metrics": {"latencyMs": 812}}))
    return b"".join(out) + tail


def es_resp(body: bytes) -> dict[str, Any]:
    return {
        "status": {"code": 200, "message": "OK"},
        "headers": {"content-type": ["application/vnd.amazon.eventstream"], **synth()},
        "body": {"string": body},
    }


def err(status: int, kind: str, message: str) -> dict[str, Any]:
    extra = {"x-amzn-ErrorType": [f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"]}
    return json_resp({"message": message}, status, extra)


def write(name: str, pairs: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> None:
    reqs = [
        Request("POST", f"{HOST}/model/{model}", json.dumps(body), {"content-type": ["application/json"]})
        for model, body, _ in pairs
    ]
    data = serialize.serialize({"requests": reqs, "responses": [r for _, _, r in pairs]}, yamlserializer)
    (OUT / name).write_text(data, encoding="utf-8")


def both(
    req: dict[str, Any], final: dict[str, Any], model: str = MODEL
) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The request and its documented answer, then the same request streamed."""
    return [
        (f"{model}/converse", req, json_resp(final)),
        (f"{model}/converse-stream", req, es_resp(stream_of(final))),
    ]


# -- text: system list, inference parameters, every stop reason of a text reply ----------------
text_req = {
    "messages": [{"role": "user", "content": [{"text": "Write one sentence about the sea."}]}],
    "system": [{"text": "You are a concise assistant."}],
    "inferenceConfig": {"maxTokens": 512, "temperature": 0.5, "topP": 0.9},
}
text_final = reply([{"text": "The sea keeps the oldest stories of the world in its tides."}], "end_turn", usage(19, 16))
cut_req = {**text_req, "inferenceConfig": {"maxTokens": 8}}
cut_final = reply([{"text": "The sea keeps the oldest"}], "max_tokens", usage(19, 8))
stop_req = {**text_req, "inferenceConfig": {"maxTokens": 512, "stopSequences": ["tides"]}}
stop_final = reply([{"text": "The sea keeps the oldest stories of the world in its "}], "stop_sequence", usage(19, 13))
filtered_final = reply([{"text": "Sorry, I can't help with that."}], "guardrail_intervened", usage(19, 9))
write(
    "text.yaml",
    [
        *both(text_req, text_final),
        *both(cut_req, cut_final),
        *both(stop_req, stop_final),
        *both(
            {**text_req, "guardrailConfig": {"guardrailIdentifier": "gr1abc2def3", "guardrailVersion": "1"}},
            filtered_final,
        ),
    ],
)

# -- tools: parallel calls, results (one an error), the answer ---------------------------------
tool_config = {
    "tools": [
        {
            "toolSpec": {
                "name": "top_song",
                "description": "Get the most popular song played on a radio station.",
                "inputSchema": {
                    "json": {
                        "type": "object",
                        "properties": {"sign": {"type": "string", "description": "The call sign, such as WZPZ."}},
                        "required": ["sign"],
                    }
                },
            }
        },
        {
            "toolSpec": {
                "name": "get_weather",
                "description": "Get the current weather in a city.",
                "inputSchema": {
                    "json": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
                },
            }
        },
    ]
}
ask = {"role": "user", "content": [{"text": "What is the most popular song on WZPZ, and the weather in Seattle?"}]}
tools_req = {"messages": [ask], "toolConfig": tool_config, "inferenceConfig": {"maxTokens": 1024}}
calls = [
    {"text": "I'll look both up."},
    {"toolUse": {"toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", "name": "top_song", "input": {"sign": "WZPZ"}}},
    {"toolUse": {"toolUseId": "tooluse_8nF0cWgURQmS3-hC9vz6GA", "name": "get_weather", "input": {"city": "Seattle"}}},
]
tools_final = reply(calls, "tool_use", usage(412, 96))
results_req = {
    "messages": [
        ask,
        {"role": "assistant", "content": calls},
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q",
                        "content": [{"json": {"song": "Elemental Hotel", "artist": "8 Storey Hike"}}],
                    }
                },
                {
                    "toolResult": {
                        "toolUseId": "tooluse_8nF0cWgURQmS3-hC9vz6GA",
                        "content": [{"text": "Weather service unavailable: upstream timeout"}],
                        "status": "error",
                    }
                },
            ],
        },
    ],
    "toolConfig": tool_config,
    "inferenceConfig": {"maxTokens": 1024},
}
answer = reply(
    [{"text": "The top song on WZPZ is Elemental Hotel by 8 Storey Hike. I couldn't get Seattle's weather."}],
    "end_turn",
    usage(530, 31),
)
write("tools.yaml", [*both(tools_req, tools_final), *both(results_req, answer)])

# -- reasoning: text with a signature, redacted content, and reasoning sent back ---------------
think = {"thinking": {"type": "enabled", "budget_tokens": 2048}}
think_req = {
    "messages": [{"role": "user", "content": [{"text": "Is 1001 prime?"}]}],
    "inferenceConfig": {"maxTokens": 4096},
    "additionalModelRequestFields": think,
}
reasoned = [
    {"reasoningContent": {"reasoningText": {"text": "1001 = 7 x 11 x 13, so it has divisors.", "signature": SIG1}}},
    {"text": "No. 1001 = 7 x 11 x 13."},
]
think_final = reply(reasoned, "end_turn", usage(41, 88))
# Anthropic's documented test string that makes Claude answer with redacted thinking
MAGIC = (
    "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB"
)
redact_req = {**think_req, "messages": [{"role": "user", "content": [{"text": MAGIC}]}]}
redacted_final = reply(
    [{"reasoningContent": {"redactedContent": REDACTED}}, {"text": "No, 1001 is 7 x 11 x 13."}],
    "end_turn",
    usage(41, 102),
)
tool_think_req = {
    "messages": [
        {"role": "user", "content": [{"text": "What is the weather in Paris?"}]},
        {
            "role": "assistant",
            "content": [
                {
                    "reasoningContent": {
                        "reasoningText": {"text": "I should call get_weather for Paris.", "signature": SIG2}
                    }
                },
                {
                    "toolUse": {
                        "toolUseId": "tooluse_Qm3a9VqzT0uHk1WbX2cYdA",
                        "name": "get_weather",
                        "input": {"city": "Paris"},
                    }
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "toolResult": {
                        "toolUseId": "tooluse_Qm3a9VqzT0uHk1WbX2cYdA",
                        "content": [{"text": "18 C, clear"}],
                        "status": "success",
                    }
                }
            ],
        },
    ],
    "toolConfig": {"tools": [tool_config["tools"][1]]},
    "inferenceConfig": {"maxTokens": 4096},
    "additionalModelRequestFields": think,
}
tool_think_final = reply([{"text": "It is 18 C and clear in Paris."}], "end_turn", usage(380, 14))
write(
    "thinking.yaml",
    [*both(think_req, think_final), *both(redact_req, redacted_final), *both(tool_think_req, tool_think_final)],
)

# -- image by bytes ----------------------------------------------------------------------------
image_req = {
    "messages": [
        {
            "role": "user",
            "content": [
                {"text": "What colour is this image?"},
                {"image": {"format": "png", "source": {"bytes": PNG_2PX}}},
            ],
        }
    ],
    "inferenceConfig": {"maxTokens": 256},
}
image_final = reply([{"text": "It is a tiny red square."}], "end_turn", usage(1580, 9))
write("image.yaml", both(image_req, image_final, NOVA))

# -- prompt caching: a cache point after the system prompt; write, then read -------------------
long_system = "You are an assistant for the Example Corp handbook. " * 40
cache_req = {
    "messages": [{"role": "user", "content": [{"text": "How many vacation days do new employees get?"}]}],
    "system": [{"text": long_system}, {"cachePoint": {"type": "default"}}],
    "inferenceConfig": {"maxTokens": 256},
}
cache_write = reply([{"text": "New employees get 20 vacation days a year."}], "end_turn", usage(12, 12, 0, 421))
cache_read = reply([{"text": "New employees get 20 vacation days a year."}], "end_turn", usage(12, 12, 421, 0))
cache_again = {**cache_req, "messages": [{"role": "user", "content": [{"text": "And after five years?"}]}]}
write("cache.yaml", [*both(cache_req, cache_write), *both(cache_again, cache_read)])

# -- errors: documented exceptions, and failures inside the event stream -----------------------
e_req = text_req
write(
    "errors.yaml",
    [
        (f"{MODEL}/converse", e_req, err(400, "ValidationException", "The provided model identifier is invalid.")),
        (f"{MODEL}/converse", e_req, err(400, "ValidationException", "Input is too long for requested model.")),
        (
            f"{MODEL}/converse",
            e_req,
            err(403, "AccessDeniedException", "You don't have access to the model with the specified model ID."),
        ),
        (
            f"{MODEL}/converse",
            e_req,
            err(
                404,
                "ResourceNotFoundException",
                "Could not resolve the foundation model from the provided model identifier.",
            ),
        ),
        (
            f"{MODEL}/converse",
            e_req,
            err(408, "ModelTimeoutException", "Model has timed out in processing the request."),
        ),
        (
            f"{MODEL}/converse",
            e_req,
            err(424, "ModelErrorException", "The request failed due to an error while processing the model."),
        ),
        (
            f"{MODEL}/converse",
            e_req,
            err(429, "ThrottlingException", "Too many requests, please wait before trying again."),
        ),
        (
            f"{MODEL}/converse",
            e_req,
            err(500, "InternalServerException", "An internal server error occurred. Retry your request."),
        ),
        (
            f"{MODEL}/converse",
            e_req,
            err(503, "ServiceUnavailableException", "The service isn't currently available. Try again later."),
        ),
        (
            f"{MODEL}/converse-stream",
            e_req,
            es_resp(
                stream_of(
                    text_final,
                    exception("throttlingException", "Too many tokens, please wait before trying again."),
                    stop_at=1,
                )
            ),
        ),
        (
            f"{MODEL}/converse-stream",
            e_req,
            es_resp(
                stream_of(
                    text_final,
                    exception("modelStreamErrorException", "The model stream ended unexpectedly."),
                    stop_at=0,
                )
            ),
        ),
    ],
)
