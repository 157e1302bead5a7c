"""Ollama's native chat API (`POST /api/chat`) and, for attribution only, `POST /api/generate`.

Facts from Ollama's documentation, not from any adapter:

- https://github.com/ollama/ollama/blob/main/docs/api.md ("Generate a chat completion":
  messages with role system/user/assistant/tool, base64 `images`, `tool_calls` whose
  `function.arguments` is a JSON object and carries no id, `done_reason` values `stop`,
  `length`, `load`, `unload`; `prompt_eval_count` / `eval_count`; streaming on by default)
- https://docs.ollama.com/api/chat (OpenAPI: `think`, `message.thinking`, `stream` default true)
- https://docs.ollama.com/capabilities/thinking (thinking text, no signature or opaque state)
- https://docs.ollama.com/capabilities/tool-calling (`tool_name` on tool messages, parallel
  calls answered in order, streamed tool calls arrive whole)
- https://docs.ollama.com/capabilities/streaming (NDJSON, `application/x-ndjson`)
- https://docs.ollama.com/api/errors (`{"error": "..."}` bodies; a mid-stream error is an
  NDJSON line with only `error`; status codes 400, 404, 429, 500, 502)

`/api/generate` is a completion endpoint (a `prompt` string, no message list): it is
recorded so recordings of it are attributed to Ollama and skipped with a reason, never
forced onto the chat adapter.
"""

from __future__ import annotations

import re
from typing import Any

from . import equivalence
from .api import (
    Access,
    Carries,
    Endpoint,
    Framing,
    JsonBody,
    Located,
    ModelIn,
    Probes,
    ThinkingBack,
    ToolIdRule,
    UsageFields,
    WireApi,
    error_event,
    first_string_at,
    json_object,
    option_fields,
    schema_at,
    string_at,
)

DOCS = (
    "https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion",
    "https://docs.ollama.com/api/chat",
    "https://docs.ollama.com/capabilities/thinking",
    "https://docs.ollama.com/capabilities/tool-calling",
    "https://docs.ollama.com/capabilities/streaming",
    "https://docs.ollama.com/api/errors",
)


def _streaming(_url: str, body: JsonBody | None) -> bool:
    """`stream` defaults to true in Ollama (docs: "Streaming can be disabled using `"stream": false`")."""
    if not isinstance(body, dict):
        return True
    value = body.get("stream", True)
    return value is not False


def _messages(body: JsonBody) -> list[tuple[int, dict[str, Any]]]:
    msgs = body.get("messages")
    if not isinstance(msgs, list):
        return []
    return [(i, m) for i, m in enumerate(msgs) if isinstance(m, dict)]


def _system(body: JsonBody) -> list[Located]:
    return [
        Located(f"/messages/{i}/content", m.get("content"))
        for i, m in _messages(body)
        if m.get("role") == "system" and isinstance(m.get("content"), str)
    ]


def _thinking(body: JsonBody) -> list[Located]:
    return [
        Located(f"/messages/{i}/thinking", m["thinking"])
        for i, m in _messages(body)
        if isinstance(m.get("thinking"), str) and m["thinking"]
    ]


def _calls(body: JsonBody) -> list[tuple[int, int, dict[str, Any]]]:
    out = []
    for i, m in _messages(body):
        if m.get("role") != "assistant":
            continue
        for j, c in enumerate(m.get("tool_calls") or []):
            if isinstance(c, dict):
                out.append((i, j, c))
    return out


def _tool_use_ids(body: JsonBody) -> list[Located]:
    """Ids of tool calls: `id` when the call carries one (newer servers), else the call's
    position, which is how Ollama itself pairs a tool message with its call."""
    return [
        Located(f"/messages/{i}/tool_calls/{j}" + ("/id" if "id" in c else ""), c.get("id") or f"{i}.{j}")
        for i, j, c in _calls(body)
    ]


def _response_call_ids(body: JsonBody) -> list[Located]:
    """Ids a reply's tool calls carry (newer servers issue them; older ones none). A streamed
    NDJSON line has the reply's shape."""
    msg = body.get("message") if isinstance(body, dict) else None
    calls = msg.get("tool_calls") if isinstance(msg, dict) else None
    if not isinstance(calls, list):
        return []
    return [
        Located(f"/message/tool_calls/{j}/id", c["id"])
        for j, c in enumerate(calls)
        if isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"]
    ]


def _response_calls(body: JsonBody) -> list[Located]:
    """The calls of a reply's `message.tool_calls`, with or without ids (api/chat; Ollama's
    tool support announcement, https://ollama.com/blog/tool-support: "Supported models will
    now answer with a tool_calls response")."""
    msg = body.get("message") if isinstance(body, dict) else None
    calls = msg.get("tool_calls") if isinstance(msg, dict) else None
    return [
        Located(f"/message/tool_calls/{j}", c)
        for j, c in enumerate(calls if isinstance(calls, list) else [])
        if isinstance(c, dict)
    ]


def _tool_result_ids(body: JsonBody) -> list[Located]:
    """What each tool message answers: `tool_call_id` when present, else the pending call
    of the latest assistant message in order (Ollama's documented pairing)."""
    out: list[Located] = []
    pending: list[str] = []
    for i, m in _messages(body):
        role = m.get("role")
        if role == "assistant":
            pending = [
                c.get("id") or f"{i}.{j}" for j, c in enumerate(m.get("tool_calls") or []) if isinstance(c, dict)
            ]
        elif role == "tool":
            if isinstance(m.get("tool_call_id"), str):
                out.append(Located(f"/messages/{i}/tool_call_id", m["tool_call_id"]))
                if m["tool_call_id"] in pending:
                    pending.remove(m["tool_call_id"])
            else:
                out.append(Located(f"/messages/{i}", pending.pop(0) if pending else None))
    return out


def _images(body: JsonBody) -> list[Located]:
    out = []
    for i, m in _messages(body):
        for k, img in enumerate(m.get("images") or []):
            if isinstance(img, str):
                out.append(Located(f"/messages/{i}/images/{k}", {"kind": "base64", "media_type": None, "data": img}))
    return out


def _stop_reason(body: JsonBody) -> Any:
    return body.get("done_reason") if isinstance(body, dict) else None


USAGE = UsageFields("", (("prompt_eval_count",),), (("eval_count",),))
"""Ollama's counts sit on the response itself (a stream's on its `done` line); no cache counts."""


def _usage(body: JsonBody) -> Any:
    if not isinstance(body, dict) or ("prompt_eval_count" not in body and "eval_count" not in body):
        return None
    return USAGE.buckets(body)


def _stream_stop_reason(events: list[Any]) -> Any:
    """done_reason of the final line (`done: true`); a turn that streamed `tool_calls` ends
    with `stop` too, and is reported as `stop (with tool_calls)` (the client runs the calls)."""
    finish = None
    calls = False
    for ev in events:
        if not isinstance(ev, dict):
            continue
        msg = ev.get("message")
        calls = calls or bool(isinstance(msg, dict) and msg.get("tool_calls"))
        if ev.get("done") is True:
            finish = ev.get("done_reason")
    return "stop (with tool_calls)" if finish == "stop" and calls else finish


def _response_text(body: JsonBody) -> list[Located]:
    """The answer of a reply: `message.content` (api/chat: "the content of the message";
    the model's thinking is `message.thinking`, apart)."""
    msg = body.get("message") if isinstance(body, dict) else None
    content = msg.get("content") if isinstance(msg, dict) else None
    return [Located("/message/content", content)] if isinstance(content, str) else []


def _stream_text(events: list[Any]) -> list[str] | None:
    """The answer a stream spells: each line's `message.content`, joined in order."""
    pieces = []
    for ev in events:
        msg = ev.get("message") if isinstance(ev, dict) else None
        if isinstance(msg, dict) and isinstance(msg.get("content"), str):
            pieces.append(msg["content"])
    return ["".join(pieces)]


def _call_of(call: Any) -> tuple[str, Any] | None:
    """A `tool_calls` entry's `function.name` and `function.arguments` (an object on Ollama's
    wire; a JSON string read as the object it spells)."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        return None
    return fn["name"], json_object(fn["arguments"]) if "arguments" in fn else {}


def _stream_tool_calls(events: list[Any]) -> list[tuple[str, Any]] | None:
    """Each call of the stream's lines (`message.tool_calls`, whole on the line that has it)."""
    out: list[tuple[str, Any]] = []
    for ev in events:
        msg = ev.get("message") if isinstance(ev, dict) else None
        for call in (msg.get("tool_calls") or []) if isinstance(msg, dict) else []:
            found = _call_of(call)
            if found is not None:
                out.append(found)
    return out


def _stream_usage(events: list[Any]) -> Any:
    """The counts of the final line (`done: true`)."""
    last = next((ev for ev in reversed(events) if isinstance(ev, dict) and ev.get("done") is True), None)
    return _usage(last) if last is not None else None


# docs.ollama.com: a local server needs no key; ollama.com's API takes
# `Authorization: Bearer OLLAMA_API_KEY`
ACCESS = Access(base_url="http://localhost:11434", credential_headers=("authorization",))


ENDPOINT = Endpoint(
    path="/api/chat",
    stream_field=("/stream", True),
    streams_by_default=True,
    model=ModelIn(
        "body",
        "/model",
        says=(
            "Model names follow a model:tag format, where model can have an optional namespace such as "
            "example/model. Some examples are orca-mini:3b-q8_0 and llama3:70b."
        ),
        source="https://github.com/ollama/ollama/blob/main/docs/api.md#model-names",
    ),
    examples=("orca-mini:3b-q8_0", "llama3:70b"),
    says=(
        "POST /api/chat; stream: if false the response will be returned as a single response object, "
        "rather than a stream of objects"
    ),
    source="https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion",
)
"""One endpoint; Ollama streams unless the body says `stream: false`."""

OLLAMA_CHAT = WireApi(
    name="ollama-chat",
    usage_fields=USAGE,
    access=ACCESS,
    title="Ollama chat API (/api/chat)",
    docs=DOCS,
    request_paths=(re.compile(r"/api/chat/?$"),),
    framing=Framing.NDJSON,
    is_streaming=_streaming,
    schema_dir="ollama-chat",
    hosts=("localhost:11434", "127.0.0.1:11434", "ollama.com"),
    chat=True,
    # the documented tool_calls carry no id; newer servers may add `id`, any string
    tool_ids=ToolIdRule(pattern=None, max_length=None, issued_by_provider=False),
    carries=Carries(
        system_prompt=True,
        thinking_text=True,
        thinking_signature=False,
        redacted_thinking=False,
        images_base64=True,
        images_url=False,
        tool_result_error=False,
        cache_read_tokens=False,
        cache_write_tokens=False,
        parallel_tool_calls=True,
    ),
    thinking_back=ThinkingBack(
        says="thinking: (for thinking models) the model's thinking process",
        source="https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion",
        because="the message object's `thinking` is optional on input; no signature or state rides on it",
    ),
    probes=Probes(
        system=_system,
        thinking_text=_thinking,
        tool_use_ids=_tool_use_ids,
        tool_result_ids=_tool_result_ids,
        images=_images,
        response_stop_reason=_stop_reason,
        response_usage=_usage,
        response_tool_ids=_response_call_ids,
        response_tool_calls=_response_calls,
        response_text=_response_text,
        stream_text=_stream_text,
        call_of=_call_of,
        stream_tool_calls=_stream_tool_calls,
        stream_stop_reason=_stream_stop_reason,
        stream_usage=_stream_usage,
        response_model=string_at("/model"),
        stream_model=first_string_at("/model"),
        # `options` holds the Modelfile parameters: `num_predict`, `stop`, `temperature`
        request_options=option_fields(
            max_output_tokens="/options/num_predict", stop_sequences="/options/stop", temperature="/options/temperature"
        ),
        # api/errors: "If an error occurs mid-stream, the error will be returned as an object
        # in the application/x-ndjson format with an error property" (no `message`)
        stream_error=error_event("message", "done"),
        # api/chat: `format`, "the format to return a response in": "json" or a JSON schema
        output_schema=schema_at("/format"),
    ),
    # `stop` also ends a turn with tool calls and one cut by a stop sequence: the wire does
    # not tell these apart (a reply with tool_calls is mapped to tool_use by the adapter)
    stop_reasons={
        "stop": "end_turn",
        "stop (with tool_calls)": "tool_use",
        "length": "max_tokens",
        "load": "end_turn",
        "unload": "end_turn",
    },
    # object member order, number spellings, documented defaults, the two documented
    # spellings of an assistant tool-call turn
    accepted_differences=equivalence.OLLAMA_CHAT_DIFFERENCES,
    normalize_request=equivalence.ollama_chat,
    endpoint=ENDPOINT,
)

OLLAMA_GENERATE = WireApi(
    name="ollama-generate",
    access=ACCESS,
    title="Ollama completion API (/api/generate, not a chat turn)",
    docs=("https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-completion",),
    request_paths=(re.compile(r"/api/generate/?$"),),
    framing=Framing.NDJSON,
    is_streaming=_streaming,
    schema_dir="ollama-generate",
    hosts=("localhost:11434", "127.0.0.1:11434", "ollama.com"),
    chat=False,
    stop_reasons={"stop": "end_turn", "length": "max_tokens", "load": "end_turn", "unload": "end_turn"},
)
