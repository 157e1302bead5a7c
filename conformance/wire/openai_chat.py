"""The OpenAI Chat Completions API (`POST /v1/chat/completions`), as data.

Written from OpenAI's API reference (URLs in `DOCS`), not from the reference adapter:

- Request: `messages[]` with roles `developer`/`system` (content a string or text parts),
  `user` (a string or parts: `text`, `image_url` `{url, detail?}` where `url` is an
  `https:` URL or a `data:<media type>;base64,...` URL, `input_audio`, `file`),
  `assistant` (`content`, `refusal`, `tool_calls[]` of `{id, type: function, function:
  {name, arguments: JSON string}}`) and `tool` (`tool_call_id`, `content`). A tool message
  has no error flag, and the API has no thinking/signature field: reasoning models keep
  their reasoning server-side (`usage.completion_tokens_details.reasoning_tokens`).
  Compatible servers return theirs in replies only (`reasoning_content`, `reasoning`,
  Mistral's `thinking` parts: schemas/wire/openai-chat/response.json), and DeepSeek
  refuses it back, so `Carries.thinking_text` (what a request carries) stays False.
- Response: `choices[].finish_reason` is stop, length, tool_calls, content_filter or the
  deprecated function_call; `usage` has `prompt_tokens`, `completion_tokens`,
  `prompt_tokens_details.cached_tokens`. `prompt_tokens` INCLUDES the cached tokens
  ("Prompt caching": cached_tokens is the part of the prompt served from cache), so the
  canonical disjoint `input` bucket is `prompt_tokens - cached_tokens`.
- Streams are SSE `data:` lines ending `data: [DONE]` when `stream: true`; usage arrives
  in a last chunk with empty `choices` only when `stream_options.include_usage` is true.
- Tool call ids: the API rejects a `tool_call_id` longer than 40 characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from . import equivalence
from .api import (
    Access,
    Carries,
    Endpoint,
    ErrorSignals,
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
    schema_at,
    string_at,
)

DOCS = (
    "https://platform.openai.com/docs/api-reference/chat/create",
    "https://platform.openai.com/docs/api-reference/chat/object",
    "https://platform.openai.com/docs/api-reference/chat-streaming/streaming",
    "https://platform.openai.com/docs/guides/function-calling",
    "https://platform.openai.com/docs/guides/images-vision",
    "https://platform.openai.com/docs/guides/prompt-caching",
    "https://platform.openai.com/docs/guides/error-codes",
)

# raw `finish_reason` -> canonical StopReason. "stop" covers both a natural stop and a
# matched stop sequence: the API does not say which, so it reads as end_turn.
STOP_REASONS: dict[str, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",  # deprecated functions API
    "content_filter": "end_turn",  # content omitted by the filter; the turn still completed
}
# compatible servers' own finish reasons (issue 25), read by the adapter beside OpenAI's
# (the record's `stop_reasons` stays OpenAI's): Mistral's API spec adds `model_length`
# (the model's context length reached) and `error`; DeepSeek's chat completion reference
# adds `insufficient_system_resource` ("the request is interrupted due to insufficient
# resource of the inference system")
COMPATIBLE_STOP_REASONS: dict[str, str] = {
    "model_length": "max_tokens",
    "error": "error",
    "insufficient_system_resource": "error",
}

_DATA_URL = re.compile(r"data:(?P<media>[^;,]*)(?P<params>(;[^;,]*)*);base64,(?P<data>.*)\Z", re.S)


def parse_data_url(url: str) -> tuple[str, str] | None:
    """(media type, base64 payload) of a base64 `data:` URL (RFC 2397), else None."""
    m = _DATA_URL.match(url)
    if m is None:
        return None
    return m["media"].lower(), m["data"]


def chat_messages(body: JsonBody) -> Iterator[tuple[int, dict[str, Any]]]:
    messages = body.get("messages")
    if isinstance(messages, list):
        for i, m in enumerate(messages):
            if isinstance(m, dict):
                yield i, m


def _system(body: JsonBody) -> list[Located]:
    out: list[Located] = []
    for i, m in chat_messages(body):
        if m.get("role") not in ("system", "developer"):
            continue
        c = m.get("content")
        if isinstance(c, str):
            out.append(Located(f"/messages/{i}/content", c))
        elif isinstance(c, list):
            out += [
                Located(f"/messages/{i}/content/{j}/text", p["text"])
                for j, p in enumerate(c)
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            ]
    return out


def _tool_use_ids(body: JsonBody) -> list[Located]:
    out: list[Located] = []
    for i, m in chat_messages(body):
        calls = m.get("tool_calls") if m.get("role") == "assistant" else None
        for k, call in enumerate(calls if isinstance(calls, list) else []):
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                out.append(Located(f"/messages/{i}/tool_calls/{k}/id", call["id"]))
    return out


def _tool_result_ids(body: JsonBody) -> list[Located]:
    return [
        Located(f"/messages/{i}/tool_call_id", m["tool_call_id"])
        for i, m in chat_messages(body)
        if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str)
    ]


def _images(body: JsonBody) -> list[Located]:
    out: list[Located] = []
    for i, m in chat_messages(body):
        c = m.get("content")
        for j, p in enumerate(c if isinstance(c, list) else []):
            if not isinstance(p, dict) or p.get("type") != "image_url" or not isinstance(p.get("image_url"), dict):
                continue
            url = p["image_url"].get("url")
            if not isinstance(url, str):
                continue
            data = parse_data_url(url)
            value: dict[str, Any]
            if data is not None:
                value = {"kind": "base64", "media_type": data[0], "data": data[1]}
            else:
                value = {"kind": "url", "media_type": None, "url": url}
            out.append(Located(f"/messages/{i}/content/{j}/image_url/url", value))
    return out


def response_tool_calls(body: JsonBody) -> list[Located]:
    """The calls of the first choice's message (chat/create response: `choices[].message.
    tool_calls`, "The tool calls generated by the model, such as function calls")."""
    choices = body.get("choices")
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    msg = first.get("message")
    calls = msg.get("tool_calls") if isinstance(msg, dict) else None
    return [
        Located(f"/choices/0/message/tool_calls/{j}", c)
        for j, c in enumerate(calls if isinstance(calls, list) else [])
        if isinstance(c, dict)
    ]


def response_tool_ids(body: JsonBody) -> list[Located]:
    """The ids the API issued on a reply's calls (`choices[].message.tool_calls[].id`), or
    on one stream chunk's (`choices[].delta.tool_calls[].id`, a call's first fragment). The
    deprecated `function_call` carries none ("The name and arguments of a function that
    should be called"): the reader mints its id."""
    out: list[Located] = []
    choices = body.get("choices")
    for i, c in enumerate(choices if isinstance(choices, list) else []):
        if not isinstance(c, dict):
            continue
        key = "message" if isinstance(c.get("message"), dict) else "delta"
        calls = (c.get(key) or {}).get("tool_calls") if isinstance(c.get(key), dict) else None
        for j, call in enumerate(calls if isinstance(calls, list) else []):
            if isinstance(call, dict) and isinstance(call.get("id"), str) and call["id"]:
                out.append(Located(f"/choices/{i}/{key}/tool_calls/{j}/id", call["id"]))
    return out


def _stop_reason(body: JsonBody) -> Any:
    choices = body.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0].get("finish_reason")
    return None


USAGE = UsageFields(
    "/usage", (("prompt_tokens",),), (("completion_tokens",),), ("prompt_tokens_details", "cached_tokens")
)
"""Chat `usage`; the API does not report cache writes."""


def usage_of(usage: Any) -> dict[str, int] | None:
    """Chat `usage` -> the four canonical buckets; cached tokens taken out of `prompt_tokens`."""
    return USAGE.buckets(usage, cached_in_input=True)


def _usage(body: JsonBody) -> Any:
    return usage_of(body.get("usage"))


def _stream_stop_reason(events: list[Any]) -> Any:
    for e in events:
        choices = e.get("choices") if isinstance(e, dict) else None
        for c in choices if isinstance(choices, list) else []:
            if isinstance(c, dict) and c.get("finish_reason"):
                return c["finish_reason"]
    return None


def _stream_usage(events: list[Any]) -> Any:
    """The last chunk (empty `choices`) carries usage when `stream_options.include_usage` is set."""
    for e in events:
        if isinstance(e, dict) and isinstance(e.get("usage"), dict):
            return usage_of(e["usage"])
    return None


def _stream_tool_fragments(events: list[Any]) -> list[list[str]] | None:
    """`choices[0].delta.tool_calls[].function.arguments` fragments, one list per tool call
    (keyed by the call's `index`; its first chunk carries the `id`). A compatible server's
    calls without `index` are keyed by their `id`, and a fragment with neither continues
    the call before it (stream-event.json); the deprecated `delta.function_call` is one call."""
    calls: dict[Any, list[str]] = {}
    last: Any = None
    for e in events:
        choices = e.get("choices") if isinstance(e, dict) else None
        for c in choices if isinstance(choices, list) else []:
            if not isinstance(c, dict) or c.get("index", 0) != 0:
                continue
            delta = c.get("delta") or {}
            fc = delta.get("function_call") if isinstance(delta, dict) else None
            legacy = [{"index": "function_call", "function": fc}] if isinstance(fc, dict) else []
            for tc in [*(delta.get("tool_calls") or []), *legacy]:
                if not isinstance(tc, dict):
                    continue
                frag = (tc.get("function") or {}).get("arguments")
                key = tc.get("index")
                if key is None:
                    key = f"id:{tc['id']}" if isinstance(tc.get("id"), str) and tc["id"] else last
                last = key
                if key not in calls:
                    calls[key] = []
                if isinstance(frag, str):
                    calls[key].append(frag)
    return list(calls.values())


def _streaming(_url: str, body: JsonBody | None) -> bool:
    return isinstance(body, dict) and body.get("stream") is True


def _request_options(body: JsonBody) -> dict[str, Located]:
    """`max_completion_tokens` (or the deprecated `max_tokens`, which the API still takes),
    `stop` (a string or up to 4 strings) and `temperature` (chat/create)."""
    limit = "max_completion_tokens" if "max_completion_tokens" in body or "max_tokens" not in body else "max_tokens"
    return {
        "max_output_tokens": Located(f"/{limit}", body.get(limit)),
        "stop_sequences": Located("/stop", body.get("stop")),
        "temperature": Located("/temperature", body.get("temperature")),
    }


ERRORS = ErrorSignals(
    # contract §6.2 "OpenAI: Body has {error: {type, code, message}}": `error.code` first,
    # then `error.type == "server_error"`; the overflow comes as `context_length_exceeded`,
    # so no message wording is read
    body_fields=(
        (
            "/error/code",
            {
                "rate_limit_exceeded": "rate_limit",
                "context_length_exceeded": "context_overflow",
                "invalid_api_key": "auth",
            },
        ),
        ("/error/type", {"server_error": "server_error"}),
    ),
    overflow_message=None,
)
"""OpenAI's documented error signals (contract §6.2; Chat Completions and Responses)."""


# platform.openai.com "API reference, Authentication": `Authorization: Bearer OPENAI_API_KEY`;
# `OpenAI-Organization` and `OpenAI-Project` name the account
ACCESS = Access(
    base_url="https://api.openai.com",
    key_env="OPENAI_API_KEY",
    credential_headers=("authorization",),
    account_headers=("openai-organization", "openai-project"),
)


ENDPOINT = Endpoint(
    # under a base URL that ends in /v1 (OpenAI's) or another prefix (Azure, compatible servers)
    path="/chat/completions",
    stream_field=("/stream", True),
    model=ModelIn(
        "body",
        "/model",
        says="ID of the model to use.",
        source="https://platform.openai.com/docs/api-reference/chat/create",
    ),
    # a fine-tuned model's id holds `:` of its own (the fine-tuning guide's example)
    examples=("ft:gpt-4o-mini-2024-07-18:my-org:custom-suffix:9ABel2dg",),
    says=(
        "POST https://api.openai.com/v1/chat/completions; stream: If set to true, the model response data "
        "will be streamed to the client as it is generated using server-sent events."
    ),
    source="https://platform.openai.com/docs/api-reference/chat/create",
)
"""One endpoint; a stream is asked for in the body."""

OPENAI_CHAT = WireApi(
    name="openai-chat-completions",
    usage_fields=USAGE,
    access=ACCESS,
    errors=ERRORS,
    out_of_band_settings=("/reasoning_effort",),
    title="OpenAI Chat Completions API",
    docs=DOCS,
    # also Azure (`/openai/deployments/<d>/chat/completions`) and compatible servers
    request_paths=(re.compile(r"/chat/completions/?$"),),
    framing=Framing.SSE,
    is_streaming=_streaming,
    schema_dir="openai-chat",
    hosts=("api.openai.com",),
    # the API issues the id of every call in `tool_calls`, none on the deprecated
    # `function_call` (chat/object): ids the wire carries are kept exactly, the rest minted
    tool_ids=ToolIdRule(max_length=40, issued_by_provider=False),
    carries=Carries(
        system_prompt=True,
        thinking_text=False,
        thinking_signature=False,
        redacted_thinking=False,
        images_base64=True,
        images_url=True,
        tool_result_error=False,
        cache_read_tokens=True,
        cache_write_tokens=False,
        parallel_tool_calls=True,
    ),
    thinking_back=ThinkingBack(
        says=(
            "if the reasoning_content field is included in the sequence of input messages, "
            "the API will return a 400 error"
        ),
        source="https://api-docs.deepseek.com/guides/reasoning_model",
        because="Chat Completions has no request field for reasoning, and compatible servers refuse it back",
    ),
    probes=Probes(
        system=_system,
        tool_use_ids=_tool_use_ids,
        tool_result_ids=_tool_result_ids,
        images=_images,
        response_stop_reason=_stop_reason,
        response_usage=_usage,
        stream_stop_reason=_stream_stop_reason,
        stream_usage=_stream_usage,
        stream_tool_fragments=_stream_tool_fragments,
        response_model=string_at("/model"),
        response_tool_calls=response_tool_calls,
        response_tool_ids=response_tool_ids,
        stream_model=first_string_at("/model"),  # every chunk names it
        request_options=_request_options,
        # chat-streaming: a failure after the stream began is a `data:` event holding an
        # error body (`{"error": {message, type, param, code}}`) and no `choices`
        stream_error=error_event("choices"),
        # chat/create: `response_format: {"type": "json_schema", "json_schema": {..., "schema"}}`
        output_schema=schema_at("/response_format/json_schema/schema"),
    ),
    stop_reasons=STOP_REASONS,
    # "content_filter if content was omitted due to a flag from our content filters": a
    # generation cut by the filter may as well be read as failed (StopReason ERROR)
    stop_reasons_also={"content_filter": ("error",)},
    # "include_usage: If set, an additional chunk will be streamed before the data: [DONE]
    # message ... [with] the token usage statistics for the entire request" (chat/create,
    # stream_options); without it a stream reports no usage at all
    stream_usage_request=("/stream_options/include_usage", True),
    # "cached_tokens: Cached tokens present in the prompt" (prompt_tokens_details)
    cached_in_input=True,
    normalize_request=equivalence.openai_chat,
    accepted_differences=equivalence.OPENAI_CHAT_DIFFERENCES,
    # calibrated on the shared samples (20 recordings): |error| median 12%, p95 31%
    estimate_tolerance=(0.20, 35),
    endpoint=ENDPOINT,
)
