# Run from the checkout root: python tests/third_party/write_cassettes.py
"""Writes tests/third_party/cassettes/cohere/*.yaml: request/response bodies typed from the
examples of https://docs.cohere.com/reference/chat and .../chat-stream (hand-written, not
produced by the adapter under test)."""

import json
from pathlib import Path

import yaml

from conformance.suite.scripts import PNG_2PX as PNG  # a real 2x2 PNG

OUT = Path("tests/third_party/cassettes/cohere")
URI = "https://api.cohere.com/v2/chat"


def inter(req, status, body, stream=False):
    ctype = "text/event-stream" if stream else "application/json"
    return {
        "request": {
            "body": json.dumps(req),
            "headers": {"Content-Type": ["application/json"]},
            "method": "POST",
            "uri": URI,
        },
        "response": {
            "body": {"string": body if isinstance(body, str) else json.dumps(body)},
            "headers": {"content-type": [ctype], "x-turnspec-synthetic": ["written from docs.cohere.com examples"]},
            "status": {"code": status, "message": "OK" if status == 200 else "Error"},
        },
    }


def sse(*events):
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def usage(i, o):
    return {
        "billed_units": {"input_tokens": i, "output_tokens": o},
        "tokens": {"input_tokens": i + 200, "output_tokens": o},
    }


def write(name, interactions):
    (OUT / name).write_text(yaml.safe_dump({"interactions": interactions, "version": 1}, sort_keys=False, width=100))


OUT.mkdir(parents=True, exist_ok=True)
text_req = {
    "model": "command-a-03-2025",
    "messages": [
        {"role": "system", "content": "You respond in concise sentences."},
        {"role": "user", "content": "Hello, what is an LLM?"},
    ],
    "max_tokens": 256,
}
text_resp = {
    "id": "c14c80c3-18eb-4519-9460-6c92edd8cfb4",
    "finish_reason": "COMPLETE",
    "message": {
        "role": "assistant",
        "content": [{"type": "text", "text": "A large language model is a neural network trained on text."}],
    },
    "usage": usage(12, 13),
}
text_stream = sse(
    {
        "id": "29f14a5a-11de-4cae-9800-25e4747408ea",
        "type": "message-start",
        "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}},
    },
    {"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text", "text": ""}}}},
    {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "A large language model"}}}},
    {
        "type": "content-delta",
        "index": 0,
        "delta": {"message": {"content": {"text": " is a neural network trained on text."}}},
    },
    {"type": "content-end", "index": 0},
    {"type": "message-end", "delta": {"finish_reason": "COMPLETE", "usage": usage(12, 13)}},
)
max_stream = sse(
    {"id": "3f0b", "type": "message-start", "delta": {"message": {"role": "assistant", "content": []}}},
    {"type": "content-start", "index": 0, "delta": {"message": {"content": {"type": "text", "text": ""}}}},
    {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "A large"}}}},
    {"type": "content-end", "index": 0},
    {"type": "message-end", "delta": {"finish_reason": "MAX_TOKENS", "usage": usage(12, 2)}},
)
write(
    "text.yaml",
    [
        inter(text_req, 200, text_resp),
        inter({**text_req, "stream": True}, 200, text_stream, stream=True),
        inter({**text_req, "max_tokens": 2, "stream": True}, 200, max_stream, stream=True),
    ],
)

tools = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "gets the weather of a given location",
            "parameters": {
                "type": "object",
                "properties": {
                    "location": {
                        "type": "string",
                        "description": "the location to get weather, example: San Francisco, CA",
                    }
                },
                "required": ["location"],
            },
        },
    }
]
tool_req = {
    "model": "command-a-03-2025",
    "messages": [{"role": "user", "content": "What's the weather in Toronto and in Madrid?"}],
    "tools": tools,
}
calls = [
    {
        "id": "get_weather_1byjy32y4hvq",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"location":"Toronto"}'},
    },
    {
        "id": "get_weather_xzrk8h7rt0ys",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"location":"Madrid"}'},
    },
]
tool_resp = {
    "id": "7f2c",
    "finish_reason": "TOOL_CALL",
    "message": {
        "role": "assistant",
        "tool_plan": "I will look up the weather in Toronto and Madrid.",
        "tool_calls": calls,
    },
    "usage": usage(37, 28),
}
tool_stream = sse(
    {
        "id": "7f2d",
        "type": "message-start",
        "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [], "citations": []}},
    },
    {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will look up the weather"}}},
    {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": " in Toronto and Madrid."}}},
    {
        "type": "tool-call-start",
        "index": 0,
        "delta": {
            "message": {
                "tool_calls": {
                    "id": "get_weather_1byjy32y4hvq",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            }
        },
    },
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": '{"location":'}}}},
    },
    {
        "type": "tool-call-delta",
        "index": 0,
        "delta": {"message": {"tool_calls": {"function": {"arguments": '"Toronto"}'}}}},
    },
    {"type": "tool-call-end", "index": 0},
    {
        "type": "tool-call-start",
        "index": 1,
        "delta": {
            "message": {
                "tool_calls": {
                    "id": "get_weather_xzrk8h7rt0ys",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": ""},
                }
            }
        },
    },
    {
        "type": "tool-call-delta",
        "index": 1,
        "delta": {"message": {"tool_calls": {"function": {"arguments": '{"location":"Madrid"}'}}}},
    },
    {"type": "tool-call-end", "index": 1},
    {"type": "message-end", "delta": {"finish_reason": "TOOL_CALL", "usage": usage(37, 28)}},
)
follow_req = {
    "model": "command-a-03-2025",
    "messages": [
        {"role": "user", "content": "What's the weather in Toronto and in Madrid?"},
        {"role": "assistant", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "get_weather_1byjy32y4hvq", "content": '{"temperature": "20C"}'},
        {"role": "tool", "tool_call_id": "get_weather_xzrk8h7rt0ys", "content": '{"temperature": "31C"}'},
    ],
    "tools": tools,
}
follow_resp = {
    "id": "8a1e",
    "finish_reason": "COMPLETE",
    "message": {"role": "assistant", "content": [{"type": "text", "text": "It is 20C in Toronto and 31C in Madrid."}]},
    "usage": usage(80, 15),
}
write(
    "tools.yaml",
    [
        inter(tool_req, 200, tool_resp),
        inter({**tool_req, "stream": True}, 200, tool_stream, stream=True),
        inter(follow_req, 200, follow_resp),
    ],
)

img_req = {
    "model": "command-a-vision-07-2025",
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Describe both images."},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {"type": "image_url", "image_url": {"url": "https://cohere.com/images/robot.png"}},
            ],
        }
    ],
    "max_tokens": 300,
}
img_resp = {
    "id": "9b",
    "finish_reason": "COMPLETE",
    "message": {"role": "assistant", "content": [{"type": "text", "text": "A tiny square and a robot."}]},
    "usage": usage(2100, 9),
}
json_req = {
    "model": "command-a-03-2025",
    "messages": [{"role": "user", "content": "Name one city as JSON."}],
    "response_format": {
        "type": "json_object",
        "json_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
json_resp = {
    "id": "9c",
    "finish_reason": "COMPLETE",
    "message": {"role": "assistant", "content": [{"type": "text", "text": '{"city": "Toronto"}'}]},
    "usage": usage(20, 6),
}
write("image.yaml", [inter(img_req, 200, img_resp), inter(json_req, 200, json_resp)])

errs = [
    (401, {"message": "invalid api token"}),
    (429, {"message": "You are using a Trial key, which is limited to 10 API calls / minute."}),
    (400, {"message": "invalid request: message must be at least 1 token long or tool results must be specified."}),
    (500, {"message": "internal server error, this has been reported to our developers"}),
]
write("errors.yaml", [inter(text_req, s, b) for s, b in errs])
print(sorted(p.name for p in OUT.iterdir()))
