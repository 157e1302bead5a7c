"""Authoring helper for issue 37's cassettes (hand-written bodies; imports no adapter).

These folders (`openai-chat-issue37/`, `openai-responses-issue37/`) are not any adapter's
default cassettes: `turnspec conform openai-chat --cassettes cassettes/openai-chat-issue37`
replays them (tests/test_wire_departures.py does, for both reference adapters), and the
samples measurement reads them with the rest of `cassettes/`. The third-party adapters and
bridges this repository tests replay `openai-chat/` and `openai-responses/`, and none of them
reads custom tools or the deprecated functions API yet.

Written by hand, each from what its server documents, with the one departure issue 37's
recorded traffic shows beside it where the server departs from OpenAI's reference:

- `openai-chat-issue37/custom_tools.yaml`: GPT-5 custom tools (function-calling guide, "Custom
  tools": `tools: [{"type": "custom", "custom": {name, description}}]`; the call is
  `{"id", "type": "custom", "custom": {"name", "input"}}` with free-text `input`, chat/object),
  then the next turn sending the call and its `role: tool` result back.
- `openai-chat-issue37/legacy_functions.yaml`: the deprecated functions API (chat/create:
  `functions` "Deprecated in favor of tools", `function_call`; chat/object: `message.
  function_call: {name, arguments}` "Deprecated and replaced by tool_calls",
  `finish_reason: function_call`), streamed as `delta.function_call` fragments, then the
  next turn with the `role: function` answer.
- `openai-chat-issue37/compatible_departures.yaml`: a reply whose `finish_reason` is Together AI's
  `eos` (reported in openai/openai-dotnet#267 and vibrantlabsai/ragas#1548 against
  api.together.xyz); a stream asked for `n: 2` (chat/create `n`: "How many chat completion
  choices to generate"; each chunk's choice carries its `index`); and, from issue 37's
  recordings of compatible servers (no public docs describe them; at a local server's
  address): chunks without `id` whose `usage.completion_tokens` is null in every chunk, a
  `finish_reason: tool_calls` after each of two parallel calls, a reply whose `content` is
  one text part object.
- `openai-responses-issue37/custom_tools.yaml`: the Responses API's custom tools (a `custom` tool,
  the `custom_tool_call` output item with `call_id`, `name`, `input`; streamed as
  `response.custom_tool_call_input.delta`/`.done`), then the `custom_tool_call_output`.

Token counts are invented (every response says `x-turnspec-synthetic: true`).
Run from the checkout root: .venv/bin/python cassettes/openai-chat-issue37/_author.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
CHAT = "https://api.openai.com/v1/chat/completions"
RESPONSES = "https://api.openai.com/v1/responses"
TOGETHER = "https://api.together.xyz/v1/chat/completions"
LOCAL = "http://localhost:8000/v1/chat/completions"


def interaction(uri: str, request: dict[str, Any], body: dict[str, Any] | str) -> dict[str, Any]:
    stream = isinstance(body, str)
    return {
        "request": {
            "body": json.dumps(request),
            "headers": {"content-type": ["application/json"]},
            "method": "POST",
            "uri": uri,
        },
        "response": {
            "body": {"string": body if stream else json.dumps(body)},
            "headers": {
                "content-type": ["text/event-stream; charset=utf-8" if stream else "application/json"],
                "x-turnspec-synthetic": ["true"],
            },
            "status": {"code": 200, "message": "OK"},
        },
    }


def write(path: Path, interactions: list[dict[str, Any]]) -> None:
    text = yaml.safe_dump(
        {"interactions": interactions, "version": 1}, sort_keys=False, allow_unicode=True, width=10**6
    )
    path.write_text(text, encoding="utf-8")


def usage(prompt: int, completion: int | None) -> dict[str, Any]:
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + (completion or 0)}


def completion(cid: str, model: str, message: dict[str, Any], finish: str, use: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": cid,
        "object": "chat.completion",
        "created": 1754000000,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish, "logprobs": None}
        ],
        "usage": use,
    }


def chunk(cid: str | None, model: str, choices: list[dict[str, Any]], use: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk", "created": 1754000000, "model": model}
    if cid is None:
        del out["id"]
    return {**out, "choices": choices, "usage": use}


def choice(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> dict[str, Any]:
    return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}


def sse(events: list[dict[str, Any]], *, done: bool = True, named: bool = False) -> str:
    out = ""
    for e in events:
        out += (f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n"
    return out + ("data: [DONE]\n\n" if done else "")


# -- custom tools (Chat) ---------------------------------------------------------------------------

CODE_EXEC = {"type": "custom", "custom": {"name": "code_exec", "description": "Executes arbitrary Python code."}}
ASK = {"role": "user", "content": "Use the code_exec tool to print hello world to the console."}
CUSTOM_CALL = {
    "id": "call_CustomAbCdEf123",
    "type": "custom",
    "custom": {"name": "code_exec", "input": 'print("hello world")'},
}


def custom_tools() -> list[dict[str, Any]]:
    first = {"model": "gpt-5", "messages": [ASK], "tools": [CODE_EXEC]}
    reply = completion(
        "chatcmpl-Custom01",
        "gpt-5-2025-08-07",
        {"content": None, "tool_calls": [CUSTOM_CALL]},
        "tool_calls",
        usage(62, 18),
    )
    then = {
        "model": "gpt-5",
        "messages": [
            ASK,
            {"role": "assistant", "content": None, "tool_calls": [CUSTOM_CALL]},
            {"role": "tool", "tool_call_id": CUSTOM_CALL["id"], "content": "hello world"},
        ],
        "tools": [CODE_EXEC],
    }
    answer = completion(
        "chatcmpl-Custom02", "gpt-5-2025-08-07", {"content": "It printed: hello world"}, "stop", usage(95, 9)
    )
    return [interaction(CHAT, first, reply), interaction(CHAT, then, answer)]


# -- the deprecated functions API (Chat) -----------------------------------------------------------

WEATHER_FN = {
    "name": "get_current_weather",
    "description": "Get the current weather in a given location",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}},
        "required": ["location"],
    },
}
BOSTON = {"role": "user", "content": "What is the weather like in Boston?"}
FN_CALL = {"name": "get_current_weather", "arguments": '{"location": "Boston, MA"}'}


def legacy_functions() -> list[dict[str, Any]]:
    ask = {"model": "gpt-3.5-turbo-0613", "messages": [BOSTON], "functions": [WEATHER_FN], "function_call": "auto"}
    reply = completion(
        "chatcmpl-Legacy01",
        "gpt-3.5-turbo-0613",
        {"content": None, "function_call": FN_CALL},
        "function_call",
        usage(82, 18),
    )
    model = "gpt-3.5-turbo-0613"
    frags = ['{"location"', ': "Boston', ', MA"}']
    streamed = sse(
        [
            chunk(
                "chatcmpl-Legacy02",
                model,
                [
                    choice(
                        {
                            "role": "assistant",
                            "content": None,
                            "function_call": {"name": FN_CALL["name"], "arguments": ""},
                        }
                    )
                ],
            ),
            *[chunk("chatcmpl-Legacy02", model, [choice({"function_call": {"arguments": f}})]) for f in frags],
            chunk("chatcmpl-Legacy02", model, [choice({}, "function_call")]),
            chunk("chatcmpl-Legacy02", model, [], usage(82, 18)),
        ]
    )
    ask_stream = {**ask, "stream": True, "stream_options": {"include_usage": True}}
    then = {
        "model": "gpt-3.5-turbo-0613",
        "messages": [
            BOSTON,
            {"role": "assistant", "content": None, "function_call": FN_CALL},
            {
                "role": "function",
                "name": "get_current_weather",
                "content": '{"temperature": "72", "unit": "fahrenheit"}',
            },
        ],
        "functions": [WEATHER_FN],
    }
    answer = completion(
        "chatcmpl-Legacy03", model, {"content": "It is 72 degrees Fahrenheit in Boston, MA."}, "stop", usage(120, 14)
    )
    return [interaction(CHAT, ask, reply), interaction(CHAT, ask_stream, streamed), interaction(CHAT, then, answer)]


# -- compatible servers' departures (Chat) ---------------------------------------------------------

CAPITAL = {"role": "user", "content": "What is the capital of France?"}


def compatible_departures() -> list[dict[str, Any]]:
    together = {"model": "meta-llama/Llama-3.3-70B-Instruct-Turbo", "messages": [CAPITAL]}
    eos = completion(
        "o7Mj8GX-2j9zxn-8e5a1b2c3d4e5f60",
        together["model"],
        {"content": "The capital of France is Paris."},
        "eos",
        usage(45, 8),
    )
    ask_n = {
        "model": "gpt-4o-mini",
        "messages": [CAPITAL],
        "n": 2,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    m = "gpt-4o-mini-2024-07-18"
    two = sse(
        [
            chunk("chatcmpl-N2", m, [choice({"role": "assistant", "content": "Paris"}, index=0)]),
            chunk("chatcmpl-N2", m, [choice({"role": "assistant", "content": "It is Paris"}, index=1)]),
            chunk("chatcmpl-N2", m, [choice({"content": "."}, index=0)]),
            chunk("chatcmpl-N2", m, [choice({"content": "."}, index=1)]),
            chunk("chatcmpl-N2", m, [choice({}, "stop", index=0)]),
            chunk("chatcmpl-N2", m, [choice({}, "stop", index=1)]),
            chunk("chatcmpl-N2", m, [], usage(14, 7)),
        ]
    )
    local = "Qwen/Qwen2.5-7B-Instruct"
    no_id = sse(
        [
            chunk(None, local, [choice({"role": "assistant", "content": "The capital"})], usage(14, None)),
            chunk(None, local, [choice({"content": " of France is Paris."})], usage(14, None)),
            chunk(None, local, [choice({}, "stop")], usage(14, None)),
        ]
    )
    ask_stream = {"model": local, "messages": [CAPITAL], "stream": True, "stream_options": {"include_usage": True}}
    weather = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get current temperature for a given location.",
            "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
        },
    }
    both = {"role": "user", "content": "What is the weather like in Paris today and in Bogota?"}
    ask_tools = {**ask_stream, "messages": [both], "tools": [weather]}

    def call(index: int, cid: str, where: str) -> dict[str, Any]:
        fn = {"name": "get_weather", "arguments": json.dumps({"location": where})}
        return choice({"tool_calls": [{"index": index, "id": cid, "type": "function", "function": fn}]})

    repeated = sse(
        [
            chunk("chatcmpl-Rep", local, [choice({"role": "assistant", "content": None})]),
            chunk("chatcmpl-Rep", local, [call(0, "chatcmpl-tool-a1", "Paris, France")]),
            chunk("chatcmpl-Rep", local, [choice({}, "tool_calls")]),
            chunk("chatcmpl-Rep", local, [call(1, "chatcmpl-tool-b2", "Bogota, Colombia")]),
            chunk("chatcmpl-Rep", local, [choice({}, "tool_calls")]),
            chunk("chatcmpl-Rep", local, [], usage(160, 44)),
        ]
    )
    obj = completion(
        "chatcmpl-Obj",
        local,
        {"content": {"type": "text", "text": "The capital of France is Paris."}},
        "stop",
        usage(14, 8),
    )
    return [
        interaction(TOGETHER, together, eos),
        interaction(CHAT, ask_n, two),
        interaction(LOCAL, ask_stream, no_id),
        interaction(LOCAL, ask_tools, repeated),
        interaction(
            LOCAL, {"model": local, "messages": [{"role": "user", "content": "Name the capital of France."}]}, obj
        ),
    ]


# -- custom tools (Responses) ----------------------------------------------------------------------

R_TOOL = {"type": "custom", "name": "code_exec", "description": "Executes arbitrary Python code."}
R_ASK = "Use the code_exec tool to print hello world to the console."
R_CALL = {
    "type": "custom_tool_call",
    "id": "ctc_6890e975e86c819c9338825b3e1994810694874912ae0ea6",
    "status": "completed",
    "call_id": "call_aGiFQkRWSWAIsMQ19fKqxUgb",
    "name": "code_exec",
    "input": 'print("hello world")',
}


def response(rid: str, status: str, output: list[dict[str, Any]], inp: int, out: int) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "created_at": 1754000000,
        "status": status,
        "model": "gpt-5-2025-08-07",
        "output": output,
        "tools": [R_TOOL],
        "usage": {"input_tokens": inp, "output_tokens": out, "total_tokens": inp + out},
    }


def responses_custom_tools() -> list[dict[str, Any]]:
    ask = {"model": "gpt-5", "input": R_ASK, "tools": [R_TOOL]}
    reply = response("resp_Custom01", "completed", [R_CALL], 62, 18)
    started = {k: v for k, v in R_CALL.items()} | {"status": "in_progress", "input": ""}
    events = [
        {"type": "response.created", "response": response("resp_Custom02", "in_progress", [], 0, 0)},
        {"type": "response.output_item.added", "output_index": 0, "item": started},
        *[
            {"type": "response.custom_tool_call_input.delta", "output_index": 0, "item_id": R_CALL["id"], "delta": d}
            for d in ("print(", '"hello', ' world")')
        ],
        {
            "type": "response.custom_tool_call_input.done",
            "output_index": 0,
            "item_id": R_CALL["id"],
            "input": R_CALL["input"],
        },
        {"type": "response.output_item.done", "output_index": 0, "item": R_CALL},
        {"type": "response.completed", "response": response("resp_Custom02", "completed", [R_CALL], 62, 18)},
    ]
    streamed = sse([{**e, "sequence_number": n} for n, e in enumerate(events)], done=False, named=True)
    then = {
        "model": "gpt-5",
        "input": [
            {"role": "user", "content": R_ASK},
            R_CALL,
            {"type": "custom_tool_call_output", "call_id": R_CALL["call_id"], "output": "hello world"},
        ],
        "tools": [R_TOOL],
    }
    text = {
        "type": "message",
        "id": "msg_Custom03",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "It printed: hello world", "annotations": []}],
    }
    answer = response("resp_Custom03", "completed", [text], 95, 9)
    return [
        interaction(RESPONSES, ask, reply),
        interaction(RESPONSES, {**ask, "stream": True}, streamed),
        interaction(RESPONSES, then, answer),
    ]


if __name__ == "__main__":
    write(HERE / "custom_tools.yaml", custom_tools())
    write(HERE / "legacy_functions.yaml", legacy_functions())
    write(HERE / "compatible_departures.yaml", compatible_departures())
    write(HERE.parent / "openai-responses-issue37" / "custom_tools.yaml", responses_custom_tools())
