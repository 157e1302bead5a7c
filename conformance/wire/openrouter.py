"""OpenRouter's Chat Completions (`POST https://openrouter.ai/api/v1/chat/completions`), as data.

OpenRouter speaks OpenAI's Chat Completions (the record `conformance.wire.openai_chat`
holds those facts and its probes are reused here) plus reasoning, written from OpenRouter's
docs (URLs in `DOCS`), not from the adapter:

- Response `choices[].message` (and stream `choices[].delta`) may carry `reasoning` (the
  reasoning text as one string) and `reasoning_details`: an array of objects typed
  `reasoning.text` (`text`, optional `signature`), `reasoning.summary` (`summary`) or
  `reasoning.encrypted` (`data`), each with optional `id`, `format` (which provider's
  reasoning it is, e.g. `anthropic-claude-v1`, `openai-responses-v1`, `google-gemini-v1`,
  `unknown`) and `index` (its position; stream deltas of one detail share it).
- "Preserving reasoning blocks": to continue a conversation with reasoning (tool use with
  Anthropic or Gemini models), send the assistant message's `reasoning_details` back
  unmodified, in the order received.
- Requests may add OpenRouter's own top-level fields (`reasoning` config, `usage`,
  `provider`, `models`, `transforms`, `plugins`, ...).
- Usage is OpenAI's shape; `prompt_tokens` includes `prompt_tokens_details.cached_tokens`.
- A refusal is OpenAI's: the SDK's AssistantMessage carries `refusal` (a string) beside
  `content`, and its ChatStreamDelta `refusal`, "Refusal message delta".
- Options ("Create a chat completion"): `max_completion_tokens` (and `max_tokens`, "Maximum
  tokens (deprecated, use max_completion_tokens)"), `stop` (a string or up to 4 strings) and
  `temperature`, where OpenAI's Chat Completions keeps them.
- `model` names the model that served the call, in a reply and in every stream chunk
  (the upstream model's id, `anthropic/claude-sonnet-4`).
- Errors ("Errors"): `{"error": {"code": <number>, "message", "metadata"?}}` and "The HTTP
  Response will have the same status code as error.code" (400, 401, 402, 403, 408, 429,
  502, 503; `Retry-After` on 429 and 503). After a stream began, "Errors that occur after
  streaming has begun are sent as Server-Sent Events (SSE) with a unified structure that
  includes both the error details and a completion choice": a chunk with a top-level
  `error` whose `choices` carry `finish_reason: "error"` (the streaming page's example
  spells its code `server_error`), the HTTP status staying 200.
"""

from __future__ import annotations

import re
from typing import Any

from . import equivalence
from .api import (
    Access,
    Carries,
    ErrorSignals,
    Framing,
    JsonBody,
    Located,
    Probes,
    ThinkingBack,
    ToolIdRule,
    WireApi,
)
from .openai_chat import DOCS as OPENAI_DOCS
from .openai_chat import OPENAI_CHAT, STOP_REASONS, chat_messages

DOCS = (
    "https://openrouter.ai/docs/guides/best-practices/reasoning-tokens",
    "https://openrouter.ai/docs/client-sdks/python/components/reasoningdetail",
    "https://openrouter.ai/docs/agent-sdk/typescript/api-reference/models/reasoningdetailunion",
    "https://openrouter.ai/docs/api-reference/streaming",
    "https://openrouter.ai/docs/api-reference/errors",
    "https://openrouter.ai/docs/agent-sdk/typescript/models/assistantmessage",
    "https://openrouter.ai/docs/agent-sdk/typescript/api-reference/models/chatstreamdelta",
    "https://openrouter.ai/docs/api-reference/overview",
    "https://openrouter.ai/docs/api-reference/chat-completion",
    *OPENAI_DOCS,
)
DETAIL_TYPES = ("reasoning.text", "reasoning.summary", "reasoning.encrypted")


def _details(body: JsonBody, kind: str, field: str) -> list[Located]:
    """`field` of every `kind` entry of an assistant message's `reasoning_details`."""
    out: list[Located] = []
    for i, m in chat_messages(body):
        if m.get("role") != "assistant" or not isinstance(m.get("reasoning_details"), list):
            continue
        for j, d in enumerate(m["reasoning_details"]):
            if isinstance(d, dict) and d.get("type") == kind and isinstance(d.get(field), str) and d[field]:
                out.append(Located(f"/messages/{i}/reasoning_details/{j}/{field}", d[field]))
    return out


def _thinking_text(body: JsonBody) -> list[Located]:
    return _details(body, "reasoning.text", "text") + _details(body, "reasoning.summary", "summary")


def _signatures(body: JsonBody) -> list[Located]:
    return _details(body, "reasoning.text", "signature")


def _redacted(body: JsonBody) -> list[Located]:
    return _details(body, "reasoning.encrypted", "data")


def _streaming(_url: str, body: JsonBody | None) -> bool:
    return isinstance(body, dict) and body.get("stream") is True


def _stream_error(events: list[Any]) -> Any:
    """The first chunk with an `error` object (streaming: "errors that occur mid-generation
    still arrive as regular data: events with an error field"), its `choices` (finish_reason
    `error`) beside it or not (OpenAI's error event has none)."""
    return next((dict(e) for e in events if isinstance(e, dict) and isinstance(e.get("error"), dict)), None)


# openrouter.ai/docs/api-reference/streaming, "Handling Errors During Streaming": the unified
# error chunk's "choices array is included with finish_reason: "error" to properly terminate
# the stream"; the generation failed
OPENROUTER_STOP_REASONS: dict[str, str] = {**STOP_REASONS, "error": "error"}

ERRORS = ErrorSignals(
    # "Errors": `error.code` is a number, the HTTP status ("The HTTP Response will have the same
    # status code as error.code"), so §6.2's status table classifies an answer, and a
    # mid-stream error (HTTP 200) by the status its `error.code` names; the streaming page's
    # mid-stream example spells it `server_error` instead
    body_fields=(("/error/code", {"server_error": "server_error"}),),
    status_in_body="/error/code",
)
"""OpenRouter's documented error signals (its errors and streaming pages)."""


_chat: Any = OPENAI_CHAT.probes

# openrouter.ai/docs "Authentication": `Authorization: Bearer <OPENROUTER_API_KEY>` under
# https://openrouter.ai/api
ACCESS = Access(
    base_url="https://openrouter.ai/api", key_env="OPENROUTER_API_KEY", credential_headers=("authorization",)
)


OPENROUTER_CHAT = WireApi(
    name="openrouter-chat-completions",
    usage_fields=OPENAI_CHAT.usage_fields,
    access=ACCESS,
    errors=ERRORS,
    title="OpenRouter Chat Completions API (OpenAI's, plus reasoning)",
    docs=DOCS,
    request_paths=(re.compile(r"/api/v1/chat/completions/?$"),),
    framing=Framing.SSE,
    is_streaming=_streaming,
    schema_dir="openrouter-chat",
    hosts=("openrouter.ai",),
    # ids are the upstream provider's (toolu_..., call_...), passed through
    tool_ids=ToolIdRule(pattern=None, max_length=None),
    carries=Carries(
        system_prompt=True,
        thinking_text=True,
        thinking_signature=True,
        redacted_thinking=True,  # reasoning.encrypted
        images_base64=True,
        images_url=True,
        tool_result_error=False,
        cache_read_tokens=True,
        cache_write_tokens=False,
        parallel_tool_calls=True,
    ),
    thinking_back=ThinkingBack(
        needs=frozenset({"text", "signature", "redacted"}),
        says=(
            "Preserving reasoning blocks: to continue a conversation with reasoning (tool use with Anthropic "
            "or Gemini models), send the assistant message's reasoning_details back unmodified"
        ),
        source="https://openrouter.ai/docs/guides/best-practices/reasoning-tokens",
    ),
    probes=Probes(
        system=_chat.system,
        thinking_text=_thinking_text,
        signatures=_signatures,
        redacted_thinking=_redacted,
        tool_use_ids=_chat.tool_use_ids,
        tool_result_ids=_chat.tool_result_ids,
        images=_chat.images,
        response_stop_reason=_chat.response_stop_reason,
        response_usage=_chat.response_usage,
        response_tool_calls=_chat.response_tool_calls,
        stream_stop_reason=_chat.stream_stop_reason,
        stream_usage=_chat.stream_usage,
        # streamed `tool_calls[].function.arguments` fragments, as OpenAI's chat-streaming
        stream_tool_fragments=_chat.stream_tool_fragments,
        response_model=_chat.response_model,
        stream_model=_chat.stream_model,  # every chunk names it
        # max_completion_tokens (or the deprecated max_tokens), stop, temperature
        request_options=_chat.request_options,
        stream_error=_stream_error,
        # OpenRouter's structured outputs take OpenAI's `response_format` json_schema
        output_schema=_chat.output_schema,
        # OpenAI's refusal fields, relayed: the SDK's AssistantMessage has `refusal` (string)
        # and its ChatStreamDelta `refusal`, "Refusal message delta"
        response_refusals=_chat.response_refusals,
        stream_refusals=_chat.stream_refusals,
        response_text=_chat.response_text,
        stream_text=_chat.stream_text,
        call_of=_chat.call_of,
        stream_tool_calls=_chat.stream_tool_calls,
    ),
    stop_reasons=OPENROUTER_STOP_REASONS,
    stop_reasons_also=OPENAI_CHAT.stop_reasons_also,  # content_filter: end_turn or error, as for OpenAI's
    cached_in_input=True,
    # openrouter.ai/docs/use-cases/usage-accounting, "Usage Information": each response
    # returns "Prompt and completion token counts using the model's native tokenizer", the
    # routed model's (Anthropic's counts its tool-use system prompt in, Google's its own)
    usage_tokenizer=(
        "OpenRouter returns prompt token counts 'using the model's native tokenizer' "
        "(openrouter.ai/docs/use-cases/usage-accounting), the routed model's, not one an "
        "offline estimate is calibrated on"
    ),
    normalize_request=equivalence.openrouter_chat,
    accepted_differences=equivalence.OPENROUTER_CHAT_DIFFERENCES,  # JSON's forms, the ignored stream option
)
