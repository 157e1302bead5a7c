"""Authoring helper for cassettes/openai-responses (hand-written bodies; imports no adapter).

Every request and response body below is written by hand from OpenAI's documented examples
(API reference "Create a model response", "The response object", "Streaming events", the
reasoning, function-calling, images and error-codes guides). Streams follow the documented
event order: response.created, response.in_progress, per output item output_item.added ->
(content_part.added, output_text.delta..., output_text.done, content_part.done |
function_call_arguments.delta..., .done | reasoning_summary_part.added,
reasoning_summary_text.delta..., .done, reasoning_summary_part.done) -> output_item.done,
then response.completed / response.incomplete / response.failed.
"""

import copy
import json
from pathlib import Path
from typing import Any

from vcr import serialize
from vcr.request import Request
from vcr.serializers import yamlserializer

OUT = Path(__file__).parent  # run: .venv/bin/python cassettes/openai-responses/_author.py
URI = "https://api.openai.com/v1/responses"
MODEL = "gpt-5-2025-08-07"
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
ENC1 = (
    "gAAAAABo9Xq1Rz3kT0d9cJ6q1bX0nqkE7wXv3m2Yw8Z1K4S0p8oVQ2b5cJ7H3d0eF9g6hKj4Lm2nPq7rSt8uVw3xYz1A5bC6dE0fG2hI4jK8lM1nO5pQ9rS3tU7vW0xY4zA2bC6dE0fG"
    * 3
)
ENC2 = (
    "gAAAAABo9Xq2Tt7mU1n3pQ5rS9tV0wX2yZ4aB6cD8eF0gH2iJ4kL6mN8oP0qR2sT4uV6wX8yZ0aB2cD4eF6gH8iJ0kL2mN4oP6qR8sT0uV2wX4yZ6aB8cD0eF2gH4iJ6kL8mN0oP2"
    * 2
)


def synth() -> dict[str, list[str]]:
    return {"x-turnspec-synthetic": ["true"]}


def hdr(ctype: str, extra: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    return {
        "content-type": [ctype],
        "x-request-id": ["req_7c0d1a4e2b9f4c6d8e1f2a3b4c5d6e7f"],
        **synth(),
        **(extra or {}),
    }


def json_resp(body: Any, status: int = 200, extra: dict[str, list[str]] | None = None) -> dict[str, Any]:
    return {
        "status": {"code": status, "message": "OK" if status == 200 else "Error"},
        "headers": hdr("application/json", extra),
        "body": {"string": json.dumps(body)},
    }


def response(
    rid: str,
    output: list[dict[str, Any]],
    usage: dict[str, Any] | None,
    status: str = "completed",
    incomplete: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    **over: Any,
) -> dict[str, Any]:
    body = {
        "id": rid,
        "object": "response",
        "created_at": 1741476542,
        "status": status,
        "error": error,
        "incomplete_details": incomplete,
        "instructions": None,
        "max_output_tokens": None,
        "model": MODEL,
        "output": output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": True,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": {},
    }
    body.update(over)
    return body


def usage(inp: int, out: int, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": inp + out,
    }


def msg(mid: str, *texts: str, status: str = "completed") -> dict[str, Any]:
    return {
        "type": "message",
        "id": mid,
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": t, "annotations": []} for t in texts],
    }


def call(fid: str, cid: str, name: str, args: str) -> dict[str, Any]:
    return {"type": "function_call", "id": fid, "call_id": cid, "name": name, "arguments": args, "status": "completed"}


def reasoning(rid: str, summaries: list[str], enc: str | None = None) -> dict[str, Any]:
    item = {"type": "reasoning", "id": rid, "summary": [{"type": "summary_text", "text": s} for s in summaries]}
    if enc is not None:
        item["encrypted_content"] = enc
    return item


def chunks(text: str, n: int) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def sse(
    final: dict[str, Any],
    terminal: str | None = None,
    cut_after: int | None = None,
    tail: list[tuple[str, dict[str, Any]]] | None = None,
) -> dict[str, Any]:
    """The documented event flow for `final` (a Response object)."""
    evs = []
    seq = [0]

    def add(t: str, **payload: Any) -> None:
        evs.append({"type": t, "sequence_number": seq[0], **payload})
        seq[0] += 1

    start = {
        **copy.deepcopy(final),
        "status": "in_progress",
        "output": [],
        "usage": None,
        "incomplete_details": None,
        "error": None,
    }
    add("response.created", response=start)
    add("response.in_progress", response=start)
    for oi, item in enumerate(final["output"]):
        t = item["type"]
        if t == "message":
            add("response.output_item.added", output_index=oi, item={**item, "status": "in_progress", "content": []})
            for ci, part in enumerate(item["content"]):
                add(
                    "response.content_part.added",
                    item_id=item["id"],
                    output_index=oi,
                    content_index=ci,
                    part={"type": "output_text", "text": "", "annotations": []},
                )
                for d in chunks(part["text"], 3):
                    add(
                        "response.output_text.delta",
                        item_id=item["id"],
                        output_index=oi,
                        content_index=ci,
                        delta=d,
                        logprobs=[],
                    )
                add(
                    "response.output_text.done",
                    item_id=item["id"],
                    output_index=oi,
                    content_index=ci,
                    text=part["text"],
                    logprobs=[],
                )
                add("response.content_part.done", item_id=item["id"], output_index=oi, content_index=ci, part=part)
        elif t == "function_call":
            add("response.output_item.added", output_index=oi, item={**item, "arguments": "", "status": "in_progress"})
            for d in chunks(item["arguments"], 4):
                add("response.function_call_arguments.delta", item_id=item["id"], output_index=oi, delta=d)
            add(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=oi,
                arguments=item["arguments"],
            )
        elif t == "reasoning":
            add(
                "response.output_item.added",
                output_index=oi,
                item={"type": "reasoning", "id": item["id"], "summary": []},
            )
            for si, part in enumerate(item["summary"]):
                add(
                    "response.reasoning_summary_part.added",
                    item_id=item["id"],
                    output_index=oi,
                    summary_index=si,
                    part={"type": "summary_text", "text": ""},
                )
                for d in chunks(part["text"], 3):
                    add(
                        "response.reasoning_summary_text.delta",
                        item_id=item["id"],
                        output_index=oi,
                        summary_index=si,
                        delta=d,
                    )
                add(
                    "response.reasoning_summary_text.done",
                    item_id=item["id"],
                    output_index=oi,
                    summary_index=si,
                    text=part["text"],
                )
                add(
                    "response.reasoning_summary_part.done",
                    item_id=item["id"],
                    output_index=oi,
                    summary_index=si,
                    part=part,
                )
        add("response.output_item.done", output_index=oi, item=item)
    if tail:
        for t, payload in tail:
            add(t, **payload)
    else:
        add(
            terminal
            or {"completed": "response.completed", "incomplete": "response.incomplete", "failed": "response.failed"}[
                final["status"]
            ],
            response=final,
        )
    if cut_after is not None:
        evs = evs[:cut_after]
    text = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in evs)
    return {
        "status": {"code": 200, "message": "OK"},
        "headers": hdr("text/event-stream; charset=utf-8"),
        "body": {"string": text},
    }


def write(name: str, pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> None:
    reqs = [Request("POST", URI, json.dumps(body), {"content-type": ["application/json"]}) for body, _ in pairs]
    data = serialize.serialize({"requests": reqs, "responses": [r for _, r in pairs]}, yamlserializer)
    (OUT / name).write_text(data, encoding="utf-8")


def both(req: dict[str, Any], final: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """The request and its documented answer, then the same request streamed."""
    return [(req, json_resp(final)), ({**req, "stream": True}, sse(final))]


# -- text (instructions + a string input; a list-form input message) -------------------------
text_req = {
    "model": "gpt-5",
    "instructions": "You are a concise assistant.",
    "input": "Tell a three-sentence bedtime story about a unicorn.",
}
text_final = response(
    "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
    [
        msg(
            "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
            "On a peaceful moonlit night, a unicorn named Lumina discovered a hidden pool reflecting the stars. "
            "When she dipped her horn into the water, the pool began to shimmer. Filled with wonder, Lumina made a wish for all dreamers.",
        )
    ],
    usage(36, 87),
    instructions="You are a concise assistant.",
)
multi_req = {
    "model": "gpt-5",
    "input": [
        {"role": "developer", "content": "Answer in two short paragraphs."},
        {"role": "user", "content": [{"type": "input_text", "text": "What is a haiku?"}]},
    ],
    "max_output_tokens": 400,
    "temperature": 0.2,
}
multi_final = response(
    "resp_68a1b2c3d4e5f60718293a4b5c6d7e8f",
    [
        msg(
            "msg_68a1b2c3d4e5f60718293a4b5c6d7e90",
            "A haiku is a short Japanese poem.",
            "It has three lines of five, seven and five syllables.",
        )
    ],
    usage(29, 26),
    max_output_tokens=400,
    temperature=0.2,
)
write("text.yaml", both(text_req, text_final) + both(multi_req, multi_final))

# -- cached-token usage --------------------------------------------------------------------------
long_instr = "You are a support agent for Acme Corp. " * 60
cache_req = {
    "model": "gpt-5",
    "instructions": long_instr.strip(),
    "input": "How do I reset my password?",
    "prompt_cache_key": "acme-support",
}
cache_final = response(
    "resp_68b0c1d2e3f40516273849a5b6c7d8e9",
    [msg("msg_68b0c1d2e3f40516273849a5b6c7d8f0", "Open Settings, choose Security, then select Reset password.")],
    usage(1326, 15, cached=1280),
    instructions=long_instr.strip(),
    prompt_cache_key="acme-support",
)
write("cache.yaml", both(cache_req, cache_final))

# -- tools: parallel calls, then results (one an error) ---------------------------------------
tools = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Get current temperature for a given location.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "City and country e.g. Bogota, Colombia"}},
            "required": ["location"],
            "additionalProperties": False,
        },
        "strict": True,
    },
    {
        "type": "function",
        "name": "send_email",
        "description": "Send an email to a given recipient with a subject and message.",
        "parameters": {
            "type": "object",
            "properties": {"to": {"type": "string"}, "subject": {"type": "string"}, "body": {"type": "string"}},
            "required": ["to", "subject", "body"],
            "additionalProperties": False,
        },
        "strict": True,
    },
]
q = "What is the weather like in Paris and Bogota today? Email the answer to ilan@example.com."
tools_req = {"model": "gpt-4.1", "input": [{"role": "user", "content": q}], "tools": tools, "parallel_tool_calls": True}
calls = [
    call("fc_12345xyz", "call_12345xyz", "get_weather", '{"location":"Paris, France"}'),
    call("fc_67890abc", "call_67890abc", "get_weather", '{"location":"Bogot\\u00e1, Colombia"}'),
]
tools_final = response(
    "resp_681fe1f0a1d88191b7e1c1a4a8b1c2d3", calls, usage(291, 41), tools=tools, model="gpt-4.1-2025-04-14"
)
results_req = {
    **tools_req,
    "input": [
        {"role": "user", "content": q},
        *calls,
        {"type": "function_call_output", "call_id": "call_12345xyz", "output": '{"temperature_c": 14}'},
        {
            "type": "function_call_output",
            "call_id": "call_67890abc",
            "output": "Error: weather service timed out for Bogota, Colombia",
        },
    ],
}
results_final = response(
    "resp_681fe1f8b2c4819184f2d3e4f5a6b7c8",
    [
        calls[0]
        | {
            "id": "fc_24680ace",
            "call_id": "call_24680ace",
            "name": "send_email",
            "arguments": '{"to":"ilan@example.com","subject":"Weather","body":"Paris is 14\\u00b0C; Bogota is unavailable."}',
        },
    ],
    usage(366, 52),
    tools=tools,
    model="gpt-4.1-2025-04-14",
)
write("tools.yaml", both(tools_req, tools_final) + both(results_req, results_final))

# -- images: base64 data URL and http URL -------------------------------------------------------
img_req = {
    "model": "gpt-4.1-mini",
    "input": [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in these two images?"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_1PX}", "detail": "auto"},
                {
                    "type": "input_image",
                    "image_url": "https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg",
                    "detail": "low",
                },
            ],
        }
    ],
}
img_final = response(
    "resp_6820a1b2c3d4e5f6a7b8c9d0e1f2a3b4",
    [
        msg(
            "msg_6820a1b2c3d4e5f6a7b8c9d0e1f2a3b5",
            "The first image is a single white pixel; the second shows a wooden boardwalk through a green meadow.",
        )
    ],
    usage(187, 27),
    model="gpt-4.1-mini-2025-04-14",
)
write("image.yaml", both(img_req, img_final))

# -- reasoning with summaries and encrypted_content, sent back with the call's result ----------
r_tools = [
    {
        "type": "function",
        "name": "get_weather",
        "description": "Get current temperature for a given location.",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}},
            "required": ["location"],
            "additionalProperties": False,
        },
        "strict": True,
    }
]
r_req = {
    "model": "gpt-5",
    "input": [{"role": "user", "content": "Should I bring an umbrella in Paris today?"}],
    "tools": r_tools,
    "reasoning": {"effort": "medium", "summary": "auto"},
    "include": ["reasoning.encrypted_content"],
    "store": False,
}
r_item = reasoning(
    "rs_6890a1b2c3d4e5f60718293a4b5c6d7e",
    [
        "**Checking the forecast**\n\nThe user wants to know about rain in Paris, so I need the current weather.",
        "**Calling the tool**\n\nI will look up Paris with get_weather before answering.",
    ],
    ENC1,
)
r_call = call(
    "fc_6890a1b2c3d4e5f60718293a4b5c6d80",
    "call_Wc3Fj8qLm2Nx7Pz4Rt6Yv1Bd",
    "get_weather",
    '{"location":"Paris, France"}',
)
r_final = response(
    "resp_6890a1b2c3d4e5f60718293a4b5c6d70",
    [r_item, r_call],
    usage(84, 212, reasoning=192),
    reasoning={"effort": "medium", "summary": "detailed"},
    store=False,
    tools=r_tools,
)
r2_req = {
    **r_req,
    "input": [
        r_req["input"][0],
        r_item,
        r_call,
        {"type": "function_call_output", "call_id": "call_Wc3Fj8qLm2Nx7Pz4Rt6Yv1Bd", "output": "Light rain, 12 C"},
    ],
}
r2_item = reasoning("rs_6890a1b2c3d4e5f60718293a4b5c6e01", [], ENC2)
r2_final = response(
    "resp_6890a1b2c3d4e5f60718293a4b5c6e00",
    [
        r2_item,
        msg(
            "msg_6890a1b2c3d4e5f60718293a4b5c6e02",
            "Yes, bring an umbrella: light rain is expected in Paris today, around 12 C.",
        ),
    ],
    usage(310, 88, reasoning=64),
    reasoning={"effort": "medium", "summary": "detailed"},
    store=False,
    tools=r_tools,
)
write("reasoning.yaml", both(r_req, r_final) + both(r2_req, r2_final))

# -- stop reasons: max_output_tokens, content_filter (incomplete), failed, error event, cut ------
cut_req = {"model": "gpt-5", "input": "Write a long essay about the history of the bicycle.", "max_output_tokens": 16}
cut_final = response(
    "resp_68c1a2b3c4d5e6f708192a3b4c5d6e7f",
    [
        msg(
            "msg_68c1a2b3c4d5e6f708192a3b4c5d6e80",
            "The bicycle began in 1817 with Karl Drais's running machine, a",
            status="incomplete",
        )
    ],
    usage(19, 16),
    status="incomplete",
    incomplete={"reason": "max_output_tokens"},
    max_output_tokens=16,
)
filt_req = {"model": "gpt-5", "input": "Describe the scene in detail."}
filt_final = response(
    "resp_68c1a2b3c4d5e6f708192a3b4c5d6f00",
    [msg("msg_68c1a2b3c4d5e6f708192a3b4c5d6f01", "The scene opens on", status="incomplete")],
    usage(12, 5),
    status="incomplete",
    incomplete={"reason": "content_filter"},
)
failed_final = response(
    "resp_68c1a2b3c4d5e6f708192a3b4c5d7000",
    [],
    None,
    status="failed",
    error={"code": "server_error", "message": "The model failed to generate a response."},
)
fail_req = {"model": "gpt-5", "input": "Hello", "stream": True}
write(
    "stops.yaml",
    both(cut_req, cut_final)
    + both(filt_req, filt_final)
    + [
        (fail_req, sse(failed_final)),
        (
            fail_req,
            sse(
                {**failed_final, "status": "in_progress", "error": None},
                tail=[
                    (
                        "error",
                        {
                            "code": "rate_limit_exceeded",
                            "message": "Rate limit reached for gpt-5 on tokens per min (TPM).",
                            "param": None,
                        },
                    )
                ],
            ),
        ),
    ],
)


# -- HTTP errors ---------------------------------------------------------------------------------
def err(
    status: int,
    message: str,
    etype: str,
    code: str | None,
    param: str | None = None,
    extra: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    return json_resp({"error": {"message": message, "type": etype, "param": param, "code": code}}, status, extra)


e_req = {"model": "gpt-5", "input": "Hello"}
write(
    "errors.yaml",
    [
        (
            e_req,
            err(
                400,
                "Your input exceeds the context window of this model. Please adjust your input and try again.",
                "invalid_request_error",
                "context_length_exceeded",
                "input",
            ),
        ),
        (
            e_req,
            err(
                400,
                "Invalid value: 'imagee'. Supported values are: 'input_text', 'input_image' and 'input_file'.",
                "invalid_request_error",
                "invalid_value",
                "input[0].content[0].type",
            ),
        ),
        (
            e_req,
            err(
                401,
                "Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.",
                "invalid_request_error",
                "invalid_api_key",
            ),
        ),
        (
            e_req,
            err(
                429,
                "Rate limit reached for gpt-5 in organization org-abc on tokens per min (TPM): Limit 30000, Used 30000, Requested 120. Please try again in 240ms.",
                "tokens",
                "rate_limit_exceeded",
                extra={"retry-after-ms": ["240"]},
            ),
        ),
        (
            e_req,
            err(
                429,
                "You exceeded your current quota, please check your plan and billing details.",
                "insufficient_quota",
                "insufficient_quota",
            ),
        ),
        (
            e_req,
            err(500, "The server had an error while processing your request. Sorry about that!", "server_error", None),
        ),
    ],
)
