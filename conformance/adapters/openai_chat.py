"""The OpenAI Chat Completions adapter (adapter contract §4.3, §5.1; seed 003 §7, §8.3).

Wire format as documented at platform.openai.com/docs/api-reference/chat:

- SYSTEM messages become the first `role: system` message (concatenated with a blank line;
  `developer` when the recorded request used that role).
- Tool calls are `tool_calls[]` on the assistant message with `function.arguments` a
  JSON string; results are `role: tool` messages with `tool_call_id`.
- Images are `image_url` parts (base64 as a `data:` URL). Chat Completions tool messages
  take text only, so an image inside a tool_result is dropped with the §7.3 WARN line.
- Thinking and redacted thinking are always dropped with WARN (contract §4.3: OpenAI
  reasoning is not mapped in v1); `is_error` has no wire field and is reported the same way.
  DeepSeek's reasoning guide says the same of its `reasoning_content`: "if the
  reasoning_content field is included in the sequence of input messages, the API will
  return a 400 error", so nothing is sent back in its place.
- OpenAI-compatible servers' reasoning in replies (`REASONING_FIELDS` on `message` and
  on a stream's `delta`, and Mistral's `thinking` content parts) reads as one unsigned
  thinking block before the text (streamed: `thinking_delta`s); it is not also kept in
  `provider_raw`, so it never goes back.
- Streaming requests ask for usage (`stream_options.include_usage`, contract §7.2; TC905
  checks it through the record's `stream_usage_request`), also when the caller passes other
  `stream_options`.
- Usage (contract §7.2): `completion_tokens` -> output_tokens, `prompt_tokens_details.
  cached_tokens` -> cached_input_tokens, cache creation 0. The contract maps `prompt_tokens`
  -> input_tokens, but OpenAI counts cached tokens inside `prompt_tokens` and §7.1's cost
  formula prices input and cached tokens apart, so the literal mapping bills cached tokens
  twice: this adapter reports input_tokens = prompt_tokens - cached_tokens (disjoint
  buckets, as Anthropic's usage already is). TC904 accepts either reading, one per adapter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from ..wire.openai_chat import COMPATIBLE_STOP_REASONS, OPENAI_CHAT, parse_data_url
from . import overrides
from ._shared import (
    CUSTOM_INPUT,
    URL_IMAGE_MEDIA_TYPE,
    StreamState,
    UrlMediaMemory,
    finish_error,
    function_tool,
    function_tools_from_wire,
    header,
    json_object,
    json_value,
    stop_reason,
    tolerated,
    tool_extra,
)
from .base import (
    AdapterError,
    AdapterOptions,
    BaseAdapter,
    Block,
    CancellableStreams,
    Message,
    ParsedRequest,
    RequestContext,
    StreamCutError,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireFormatError,
    WireRequest,
    WireResponse,
    error_for_status,
    estimated_usage,
    new_ulid,
    request_message,
    sse_events,
)
from .estimate import json_tokens, openai_image_tokens, text_tokens

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
# raw finish_reason -> canonical StopReason: the wire record's table, written from the docs
_STOP = {**OPENAI_CHAT.stop_reasons, **COMPATIBLE_STOP_REASONS}
_ERROR_CODE = {
    "rate_limit_exceeded": "rate_limit",
    "insufficient_quota": "rate_limit",
    "context_length_exceeded": "context_overflow",
    "invalid_api_key": "auth",
}
_MESSAGE_KEYS = {"role", "content", "tool_calls", "tool_call_id"}
# the reasoning text compatible servers return beside the answer, first found wins (vLLM
# sends both while renaming one to the other): `reasoning_content` (DeepSeek's reasoning
# model guide, Qwen on Alibaba Model Studio, older vLLM) and `reasoning` (Ollama's OpenAI
# compatibility, vLLM's reasoning outputs, Groq's reasoning_format "parsed", OpenRouter, xAI)
REASONING_FIELDS = ("reasoning_content", "reasoning")


class OpenAIChatAdapter(UrlMediaMemory, CancellableStreams, BaseAdapter):
    """Canonical <-> OpenAI Chat Completions (`POST /v1/chat/completions`)."""

    name: ClassVar[str] = "openai-chat"
    provider: ClassVar[str] = "openai"
    wire_api: ClassVar[str] = "openai-chat-completions"
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^.{1,40}$", re.S)
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": False,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        "supports_structured_output": True,
        "supports_streaming": True,
        "supports_streaming_tool_calls": True,
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": True,
        "supports_system_messages_in_list": True,
        "max_context_tokens": 128_000,
        "max_output_tokens": 16_384,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def new_provider_tool_id(self) -> str:
        return "call_" + new_ulid()

    # -- canonical -> wire --------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        body: WireBody = {"model": options.wire_model, "messages": self.messages_to_wire(messages)}
        if tools and (options.provider_raw.get(self.name) or {}).get("functions") is True:
            # the deprecated `functions` the request was read from ("Deprecated in favor of tools")
            body["functions"] = [self.tool_to_wire(t, options)["function"] for t in tools]
            if options.provider_tools:
                body["tools"] = [dict(t) for t in options.provider_tools]
        elif tools:
            body["tools"] = [self.tool_to_wire(t, options) for t in tools] + [dict(t) for t in options.provider_tools]
        elif options.provider_tools:
            body["tools"] = [dict(t) for t in options.provider_tools]
        if options.max_output_tokens is not None:
            body["max_completion_tokens"] = options.max_output_tokens
        if options.stop_sequences:
            body["stop"] = list(options.stop_sequences)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        if options.output_schema is not None:
            fmt = (options.provider_raw.get(self.name) or {}).get("json_schema") or {
                "name": "output",
                "strict": True,
            }
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {**fmt, "schema": dict(options.output_schema)},
            }
        for k, v in options.extra.items():
            if k == "stream_options" and options.stream:
                body[k] = {**v, "include_usage": True}
            else:
                body.setdefault(k, v)
        return WireRequest("POST", "/v1/chat/completions", {"content-type": "application/json"}, body)

    def messages_to_wire(self, messages: list[Message]) -> list[WireBody]:
        out: list[WireBody] = []
        system = self.system_to_wire(messages)
        if system is not None:
            out.append(system)
        legacy: dict[str, str] = {}  # provider id of a deprecated `function_call` -> its name
        for m in messages:
            role = m.get("role")
            if role == "system":
                continue
            wire = {
                "user": self.user_to_wire,
                "assistant": self.assistant_to_wire,
                "tool": self.tool_to_wire_message,
            }.get(str(role))
            if wire is None:
                continue
            out.extend(self.restyle(m, w, legacy) for w in wire(m))
        return out

    def restyle(self, message: Message, wire: WireBody, legacy: dict[str, str]) -> WireBody:
        """A rendered message back in the form its reading recorded (`provider_raw`): the
        calls of custom tools (`type: custom`, free-text `custom.input`), the deprecated
        `function_call` of an assistant message, and the `role: function` message that
        answers it (chat/create: "Deprecated", `{role: function, name, content}`)."""
        raw = self.own_raw(message)
        customs = set(raw.get("custom_tool_calls") or ())
        calls = wire.get("tool_calls")
        if customs and isinstance(calls, list):
            wire["tool_calls"] = [_custom_call(c) if c.get("id") in customs else c for c in calls]
        if raw.get("function_call") is True and isinstance(calls, list) and len(calls) == 1:
            fn = calls[0].get("function") or {}
            del wire["tool_calls"]
            wire["function_call"] = {"name": fn.get("name"), "arguments": fn.get("arguments")}
            legacy[str(calls[0].get("id"))] = str(fn.get("name"))
        answered = (
            legacy.get(str(wire.get("tool_call_id"))) or raw.get("function_name")
            if wire.get("role") == "tool"
            else None
        )
        if isinstance(answered, str):
            wire = {"role": "function", "name": answered, "content": wire.get("content")}
        return wire

    def system_to_wire(self, messages: list[Message]) -> WireBody | None:
        """Every SYSTEM message, concatenated into the first message (contract §4.3)."""
        texts: list[str] = []
        role = "system"
        extra: dict[str, Any] = {}
        for m in messages:
            if m.get("role") != "system":
                continue
            raw = self.own_raw(m)
            role = raw.get("role", role)
            extra.update(raw.get("message", {}))
            for i, b in enumerate(m.get("content", [])):
                if b.get("type") == "text":
                    texts.append(b["text"])
                else:
                    self.drop(m, i, str(b.get("type")), "system prompts carry text only")
        if not texts:
            return None
        return {"role": role, "content": "\n\n".join(texts), **extra}

    def user_to_wire(self, message: Message) -> list[WireBody]:
        parts: list[Block] = []
        raw = self.own_raw(message)
        for i, b in enumerate(message.get("content", [])):
            t = b.get("type")
            if t == "text":
                parts.append({"type": "text", "text": b["text"]})
            elif t == "image":
                part = self.image_to_wire(message, i, b)
                if part is not None:
                    parts.append(part)
            elif isinstance(t, str) and t.startswith(f"{self.name}:") and isinstance(b.get("raw"), dict):
                parts.append(dict(b["raw"]))
            else:
                self.drop(
                    message,
                    i,
                    str(t),
                    f"no Chat Completions equivalent for a {t} block in a user message",
                )
        if not parts:
            return []
        content: Any = (
            parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" and not raw.get("parts") else parts
        )
        return [{"role": "user", "content": content, **raw.get("message", {})}]

    def image_to_wire(self, message: Message, index: int, block: Block) -> Block | None:
        source, media = block["source"], str(block["media_type"]).lower()  # IANA types are case-insensitive
        if source["kind"] == "file_ref":
            self.drop(
                message,
                index,
                "image",
                "file_ref images must be inlined by the harness (adapters do no I/O)",
            )
            return None
        if source["kind"] == "base64" and media not in IMAGE_TYPES:
            self.drop(
                message,
                index,
                "image",
                f"media type {media} is not accepted (accepted: {', '.join(IMAGE_TYPES)})",
            )
            return None
        if source["kind"] == "url":
            url = str(source["data"])
            self._url_media[(str(message.get("session_id", "")), url)] = media
        else:
            url = f"data:{media};base64,{source['data']}"
        detail = (self.own_raw(message).get("image_detail") or {}).get(str(index))
        return {
            "type": "image_url",
            "image_url": {"url": url, **({"detail": detail} if detail else {})},
        }

    def assistant_to_wire(self, message: Message) -> list[WireBody]:
        texts: list[str] = []
        calls: list[WireBody] = []
        sid = str(message.get("session_id", ""))
        for i, b in enumerate(message.get("content", [])):
            t = b.get("type")
            if t == "text":
                texts.append(b["text"])
            elif t == "tool_use":
                calls.append(self.tool_call_to_wire(sid, b))
            elif t in ("thinking", "redacted_thinking"):
                self.drop(
                    message,
                    i,
                    str(t),
                    "Chat Completions has no thinking blocks (adapter contract §4.3)",
                )
            else:
                self.drop(
                    message,
                    i,
                    str(t),
                    f"no Chat Completions equivalent for a {t} block in an assistant message",
                )
        if not texts and not calls:
            return []
        raw = self.own_raw(message)
        wire: WireBody = {"role": "assistant"}
        if len(texts) > 1:
            wire["content"] = [{"type": "text", "text": t} for t in texts]
        else:
            wire["content"] = texts[0] if texts else None
        if calls:
            wire["tool_calls"] = calls
        wire.update(raw.get("message", {}))
        return [wire]

    def tool_call_to_wire(self, session_id: str, block: Block) -> WireBody:
        pid = self.tool_id_map(session_id).provider_for(block["id"])
        return {
            "id": pid,
            "type": "function",
            "function": {"name": block["name"], "arguments": self.arguments(block["input"])},
        }

    def arguments(self, value: Mapping[str, Any]) -> str:
        """`function.arguments` is a JSON string (contract §4.1.1)."""
        return json.dumps(value, ensure_ascii=False)

    def tool_to_wire_message(self, message: Message) -> list[WireBody]:
        out: list[WireBody] = []
        sid = str(message.get("session_id", ""))
        for i, block in enumerate(message.get("content", [])):
            if block.get("type") != "tool_result":
                self.drop(
                    message,
                    i,
                    str(block.get("type")),
                    "a tool message carries tool_result blocks only",
                )
                continue
            texts: list[str] = []
            for b in block.get("content", []):
                if b.get("type") == "text":
                    texts.append(b["text"])
                else:
                    self.drop(
                        message,
                        i,
                        str(b.get("type")),
                        f"Chat Completions tool messages take text only, not {b.get('type')}",
                    )
            if block.get("is_error"):
                self.log.warning(
                    "%s: tool_result is_error of message %s has no wire field",
                    self.name,
                    message.get("id"),
                    extra={
                        "event": "field_dropped",
                        "adapter": self.name,
                        "session_id": sid,
                        "message_id": message.get("id"),
                        "field": "is_error",
                        "reason": "Chat Completions tool messages have no error flag",
                    },
                )
            # a string, or a non-empty list of text parts (the API rejects `[]`)
            content: Any = texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts] or ""
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": self.tool_id_map(sid).provider_for(block["tool_use_id"]),
                    "content": content,
                }
            )
        return out

    def tool_to_wire(self, tool: ToolDefinition, options: AdapterOptions) -> WireBody:
        return function_tool(tool, tool_extra(options.provider_raw.get(self.name) or {}, tool["name"]))

    # -- wire -> canonical (responses) --------------------------------------------------

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or (isinstance(body, dict) and "error" in body and "choices" not in body):
            raise self.classify_error(resp.status if resp.status >= 400 else 500, body, resp.headers)
        if not isinstance(body, dict) or not isinstance(body.get("choices"), list) or not body["choices"]:
            raise WireFormatError("Chat Completions response has no choices", provider_status=resp.status)
        if len(body["choices"]) > 1:
            self.log.warning(
                "%s: %d choices; the canonical message keeps choice 0",
                self.name,
                len(body["choices"]),
                extra={"event": "choices_dropped", "adapter": self.name},
            )
        choice = body["choices"][0]
        msg = choice.get("message") or {}
        sid = request_context.session_id
        legacy = f"function_call:{body.get('id') or request_context.message_id or ''}"
        content = self.content_from_wire(sid, msg, reasoning=True) + self.function_call_from_wire(sid, msg, legacy)
        raw: dict[str, Any] = {k: body[k] for k in ("id", "system_fingerprint") if body.get(k) is not None}
        if choice.get("finish_reason") is not None:
            raw["finish_reason"] = choice["finish_reason"]
        # the reasoning was read as thinking: kept here too, it would go back to a server
        # that refuses it (DeepSeek answers 400)
        extra = _extras(msg, REASONING_FIELDS)
        if extra:
            raw["message"] = extra
        raw.update(_call_forms(msg))
        # canonical §4.3: a generation the server reports as failed (a compatible server's
        # `error`, `insufficient_system_resource`) is an `error` message, not a complete one
        failed = _STOP.get(str(choice.get("finish_reason"))) == "error"
        return self.assemble(
            request_context,
            content,
            wire_model=body.get("model"),
            token_usage=self.usage_from_wire(body.get("usage")),
            provider_raw=raw,
            status="error" if failed else "complete",
        )

    def content_from_wire(self, session_id: str, msg: Mapping[str, Any], *, reasoning: bool = False) -> list[Block]:
        """A wire message's blocks: with `reasoning` (a reply), its reasoning fields first as
        thinking; then its content (a string, or parts: `text`, and Mistral's `thinking`
        holding text parts, in their order; one object, as a compatible server sends it: that
        part, else its JSON text, with a WARN line); then its tool calls (a deprecated
        `function_call` is `function_call_from_wire`'s). A request's assistant messages keep
        their reasoning fields verbatim (`provider_raw`), as requests are read."""
        content: list[Block] = self.reasoning_from_wire(msg) if reasoning else []
        c = msg.get("content")
        if isinstance(c, dict):
            c = [self.content_object(c)]
        if isinstance(c, str) and c:
            content.append({"type": "text", "text": c})
        elif isinstance(c, list):
            for p in c:
                kind, text = content_part(p)
                if kind == "text":
                    content.append({"type": "text", "text": text})
                elif kind == "thinking":
                    content.append({"type": "thinking", "text": text, "signature": None})
        for call in msg.get("tool_calls") or []:
            content.append(self.tool_call_from_wire(session_id, call))
        return content

    def function_call_from_wire(self, session_id: str, msg: Mapping[str, Any], key: str) -> list[Block]:
        """The deprecated `function_call` of a message ("Deprecated and replaced by
        tool_calls", chat/object: `{name, arguments}`, one call and no id) as a tool call;
        `key` stands for the id the wire does not carry, so the same call keeps its
        canonical id in the session."""
        fc = msg.get("function_call")
        return [self.tool_call_from_wire(session_id, {"id": key, "function": fc})] if isinstance(fc, dict) else []

    def content_object(self, part: Mapping[str, Any]) -> dict[str, Any]:
        """`content` sent as one object (a compatible server's; the docs say a string or an
        array of parts): a typed part reads as that part, anything else as its JSON text."""
        kind, _ = content_part(part)
        read = part if kind is not None else {"type": "text", "text": json.dumps(part, ensure_ascii=False)}
        self.log.warning(
            "%s: message content is an object, not a string or an array of parts; read as %s",
            self.name,
            f"its {kind} part" if kind is not None else "its JSON text",
            extra={"event": "content_object", "adapter": self.name, "field": "content"},
        )
        return dict(read)

    def reasoning_from_wire(self, msg: Mapping[str, Any]) -> list[Block]:
        """The reasoning text of a reply's message (the first non-empty of REASONING_FIELDS)
        as one unsigned thinking block: these servers issue no signature."""
        for key in REASONING_FIELDS:
            text = msg.get(key)
            if isinstance(text, str) and text:
                return [{"type": "thinking", "text": text, "signature": None}]
        return []

    def tool_call_from_wire(self, session_id: str, call: Mapping[str, Any]) -> Block:
        cid = self.tool_id_map(session_id).canonical_for(str(call.get("id")))
        if call.get("type") == "custom":
            # a custom tool's call (chat/object: `custom: {name, input}`, the input free text
            # the model wrote): canonical input is an object, so the text is its `input`
            custom = call.get("custom") or {}
            text = custom.get("input")
            return {
                "type": "tool_use",
                "id": cid,
                "name": str(custom.get("name") or ""),
                "input": {CUSTOM_INPUT: text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)},
            }
        fn = call.get("function") or {}
        args = fn.get("arguments")
        parsed = args if isinstance(args, dict) else json_object(str(args or ""))
        if parsed is None:
            raise WireFormatError(f"tool call {call.get('id')} arguments are not a JSON object: {str(args)[:80]!r}")
        return {"type": "tool_use", "id": cid, "name": str(fn.get("name", "")), "input": parsed}

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        """Chat usage -> TokenUsage (contract §7.2; disjoint buckets: input = prompt - cached)."""
        if not isinstance(usage, dict):
            return None
        cached = int(((usage.get("prompt_tokens_details") or {}).get("cached_tokens")) or 0)
        return {
            "input_tokens": max(0, int(usage.get("prompt_tokens") or 0) - cached),
            "output_tokens": int(usage.get("completion_tokens") or 0),
            "cached_input_tokens": cached,
            "cache_creation_input_tokens": 0,
        }

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        """Adapter contract §6.2-§6.3: the most specific subclass from the HTTP status refined by
        `error.code` / `error.type`, with `retryable` by class, the provider status, the
        `x-request-id` header and a `retry-after` / `retry-after-ms` hint."""
        err = body.get("error") if isinstance(body, dict) else None
        code = err.get("code") if isinstance(err, dict) else None
        etype = err.get("type") if isinstance(err, dict) else None
        msg = _error_text(body, err)
        hint = _ERROR_CODE.get(str(code)) or ("server_error" if etype == "server_error" else None)
        exc = error_for_status(status, f"{code or etype or 'error'}: {msg}", hint=hint)
        h = {str(k).lower(): v for k, v in (headers or {}).items()}
        retry = header(h, "retry-after")
        ms = header(h, "retry-after-ms")
        if retry is None and ms is not None:
            try:
                retry = str(float(ms) / 1000)
            except ValueError:
                retry = None
        finish_error(exc, status, header(h, "x-request-id"), retry)
        return exc

    def stop_reason_of(self, raw: Any) -> str:
        """A finish_reason -> canonical (the wire record's table); an undocumented value reads
        as end_turn with a WARN line."""
        return stop_reason(self.log, self.name, _STOP, raw, "finish_reason")

    # -- streaming --------------------------------------------------------------------------

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        """SSE `data:` chunks ending `[DONE]` -> canonical events (contract §5.1 table).

        A tool call's `tool_use_end` is emitted when the next block starts or at the end of
        the stream, not all together at `finish_reason`: with parallel calls that would move
        `content_block_index` backwards (contract §5.2 invariant 5).
        """
        st = _ChatStream(self, context)
        return self.cancellable(context, st.run(chunks), lambda: st.content)

    # -- wire -> canonical (requests) -----------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        sid = session_id or "sess_" + new_ulid().lower()
        model = f"{self.provider}:{body.get('model', 'unknown')}"
        out: list[Message] = []
        legacy: dict[str, str] = {}  # function name -> the canonical id of its latest `function_call`
        for position, wm in enumerate(body.get("messages", [])):
            role = wm.get("role")
            extra = _extras(wm, ("name",) if role == "function" else ())
            raw: dict[str, Any] = {"message": extra} if extra else {}
            c = wm.get("content")
            if role in ("system", "developer"):
                text = c if isinstance(c, str) else "".join(str(p.get("text", "")) for p in c or [])
                if role == "developer":
                    raw["role"] = "developer"
                out.append(_message(sid, "system", [{"type": "text", "text": text}], raw, self.name))
            elif role == "user":
                blocks: list[Block] = []
                details: dict[str, str] = {}
                parts: list[dict[str, Any]] = [{"type": "text", "text": c}] if isinstance(c, str) else list(c or [])
                for p in parts:
                    if p.get("type") == "text":
                        blocks.append({"type": "text", "text": p["text"]})
                    elif p.get("type") == "image_url":
                        blocks.append(overrides.call(self.image_from_wire, p["image_url"], session_id=sid))
                        if p["image_url"].get("detail"):
                            details[str(len(blocks) - 1)] = p["image_url"]["detail"]
                    else:
                        blocks.append({"type": f"{self.name}:{p.get('type')}", "raw": p})
                if details:
                    raw["image_detail"] = details
                if isinstance(c, list) and len(blocks) == 1 and blocks[0]["type"] == "text":
                    raw["parts"] = True
                out.append(_message(sid, "user", blocks, raw, self.name))
            elif role == "assistant":
                blocks = self.content_from_wire(sid, wm) + self.function_call_from_wire(
                    sid, wm, f"function_call:{position}"
                )
                raw.update(_call_forms(wm))
                if raw.get("function_call"):
                    legacy[str(blocks[-1]["name"])] = str(blocks[-1]["id"])
                meta_extra = {"model": model, "provider": self.provider}
                if not blocks:
                    blocks = [{"type": "text", "text": ""}]
                out.append(_message(sid, "assistant", blocks, raw, self.name, meta_extra))
            elif role == "tool":
                cid = self.tool_id_map(sid).canonical_for(str(wm.get("tool_call_id")))
                # a list of text parts is how to_wire sends several text blocks: one block each
                parts = (
                    ([{"type": "text", "text": c}] if c else [])
                    if isinstance(c, str)
                    else [{"type": "text", "text": str(p.get("text", ""))} for p in c or [] if isinstance(p, dict)]
                )
                result = {
                    "type": "tool_result",
                    "tool_use_id": cid,
                    "content": parts,
                }
                out.append(_message(sid, "tool", [result], raw, self.name, {"parent_tool_use_id": cid}))
            elif role == "function":
                # the deprecated answer to a `function_call` (chat/create: "Deprecated",
                # `{role: function, name, content}`): the result of that name's latest call
                name = str(wm.get("name") or "")
                cid = legacy.get(name) or self.tool_id_map(sid).canonical_for(f"function:{position}")
                text = c if isinstance(c, str) else json.dumps(c, ensure_ascii=False) if c is not None else ""
                result = {
                    "type": "tool_result",
                    "tool_use_id": cid,
                    "content": [{"type": "text", "text": text}] if text else [],
                }
                raw["function_name"] = name
                out.append(_message(sid, "tool", [result], raw, self.name, {"parent_tool_use_id": cid}))
        tools, native, opt_raw = self.tools_from_wire(body)
        legacy_tools = opt_raw.get("functions") is True
        output_schema = None
        rf = body.get("response_format")
        if isinstance(rf, dict) and rf.get("type") == "json_schema" and isinstance(rf.get("json_schema"), dict):
            js = dict(rf["json_schema"])
            output_schema = js.pop("schema", None)
            opt_raw["json_schema"] = js
        known = {
            "model",
            "messages",
            "tools",
            "max_completion_tokens",
            "stop",
            "temperature",
            "stream",
        }
        if output_schema is not None:
            known.add("response_format")
        if legacy_tools:
            known.add("functions")
        extra_opts = {k: v for k, v in body.items() if k not in known}
        stop = body.get("stop")
        return ParsedRequest(
            out,
            tools,
            AdapterOptions(
                model=model,
                max_output_tokens=body.get("max_completion_tokens"),
                temperature=body.get("temperature"),
                stop_sequences=(stop,) if isinstance(stop, str) else tuple(stop or ()),
                stream=bool(body.get("stream")),
                output_schema=output_schema,
                extra=extra_opts,
                provider_tools=tuple(native),
                provider_raw={self.name: opt_raw} if opt_raw else {},
            ),
        )

    def tools_from_wire(self, body: WireBody) -> tuple[list[ToolDefinition], list[Mapping[str, Any]], dict[str, Any]]:
        """A request's function tools (canonical definitions), its other tools (kept as
        provider tools) and the `provider_raw` that renders them back: each function's extra
        members, and whether they came as the deprecated `functions` ("Deprecated in favor
        of tools", chat/create), function tools all the same."""
        functions = body.get("functions")
        legacy = not any(isinstance(t, dict) and t.get("type") == "function" for t in body.get("tools") or [])
        legacy = legacy and isinstance(functions, list) and bool(functions)
        wrapped = [{"type": "function", "function": f} for f in functions or []] if legacy else []
        tools, native, tool_extras = function_tools_from_wire([*wrapped, *(body.get("tools", []) or [])])
        opt_raw: dict[str, Any] = {"tool_extras": tool_extras} if tool_extras else {}
        if legacy:
            opt_raw["functions"] = True
        return tools, native, opt_raw

    def image_from_wire(self, image_url: Mapping[str, Any], session_id: str = "") -> Block:
        """A base64 `data:` URL reads back as a base64 image (RFC 2397; parameters allowed).
        Any other URL is a url-kind image whose media type is the one this adapter rendered
        it with in this session, else the documented placeholder: never a guess from the
        URL's file extension (the wire does not carry one)."""
        url = str(image_url.get("url", ""))
        data = parse_data_url(url)
        if data is not None:
            return {"type": "image", "source": {"kind": "base64", "data": data[1]}, "media_type": data[0]}
        media = self._url_media.get((session_id, url), URL_IMAGE_MEDIA_TYPE)
        return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": media}

    # -- estimates ------------------------------------------------------------------------

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        """Heuristic (conformance.adapters.estimate): 4 tokens framing per message, images by
        OpenAI's 512 px tiles (85 + 170 per tile), tools as their JSON plus framing."""
        n = 3
        for m in messages:
            n += 4
            for b in m.get("content", []):
                n += self._block_tokens(b)
        if tools:
            # the model sees tools as a compact TypeScript-like namespace, about 60% of
            # their JSON, plus name and description
            n += 8 + sum(
                json_tokens(t["input_schema"]) * 3 // 5 + text_tokens(t["name"] + " " + t["description"]) for t in tools
            )
        return n

    def _block_tokens(self, b: Block) -> int:
        t = b.get("type")
        if t == "text":
            return text_tokens(b["text"])
        if t == "tool_use":
            return 10 + json_tokens(b["input"])
        if t == "tool_result":
            return 4 + sum(self._block_tokens(x) for x in b.get("content", []))
        if t == "image":
            return openai_image_tokens(b)
        return 0


class _ChatStream(StreamState[OpenAIChatAdapter]):
    """State of one Chat Completions SSE stream being translated.

    Strict about the documented stream ("Streaming" in the API reference): chunks of one
    choice (index 0), a `finish_reason` on the last content chunk, an optional usage chunk
    with empty `choices`, then `data: [DONE]`. Several choices, `[DONE]` with no chunk before
    it, a stream cut before `[DONE]`, data after `[DONE]`, content after `finish_reason`, a
    tool call that starts without an id or continues after the next one started, and
    arguments that are not a JSON object are `WireFormatError`s naming the event's position,
    raised after `message_complete` with `stop_reason: error` (contract §6.5). A complete
    stream (`[DONE]` seen) without any `finish_reason`, as some compatible routers send, is
    read as tool_use/end_turn with a WARN line; so is a stream a compatible server closes
    without `[DONE]` after its `finish_reason` and its usage chunk (the last chunk the docs
    put before `[DONE]`); without either it was cut.

    Compatible servers' chunks (issue 25): `delta.reasoning_content` / `delta.reasoning`
    and Mistral's `thinking` parts in a `delta.content` list are `thinking_delta`s of an
    unsigned thinking block; tool calls without `index` start with their `id` and continue
    without one; a chunk with no choice, usage nor model (Azure's content-filter results
    first) does not open the message, so `message_start` names the model of the next one.
    """

    def __init__(self, adapter: OpenAIChatAdapter, ctx: RequestContext) -> None:
        super().__init__(adapter, ctx)
        self.text_at: int | None = None
        self.calls: dict[int | str, int] = {}  # wire tool_calls index (or "id:<id>") -> canonical block index
        self.open_key: int | str | None = None  # the key of the open call
        self.think_at: int | None = None
        self.args: dict[int, str] = {}
        self.open_call: int | None = None
        self.closed: set[int] = set()
        self.usage: dict[str, int] | None = None
        self.stop_reason: str | None = None
        self.started = self.finished = False
        self.chunks = 0
        self.position = 0
        self.raw_finish: Any = None  # the last finish_reason as sent
        self.repeated = False  # a finish_reason came again between parallel calls
        self.dropped: set[str] = set()  # the indexes of the choices past 0

    def error(self, what: str, cls: type[WireFormatError] = WireFormatError) -> WireFormatError:
        return cls(f"Chat Completions stream event {self.position}: {what}")

    def fail(self, what: str, cls: type[WireFormatError] = WireFormatError) -> Iterator[StreamEvent]:
        if self.started and not self.finished:
            self.finished = True
            yield overrides.call(self.complete, "error", final=False)
        raise self.error(what, cls)

    def run(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        done, done_at = False, 0
        for ev in sse_events(chunks):
            self.position += 1
            data = ev.data.strip()
            if not data:
                continue
            if done:
                yield from self.fail("data after [DONE]")
            if data == "[DONE]":
                done = True
                done_at = self.position
                continue
            try:
                obj = json_value(data)
            except ValueError:
                yield from self.fail(f"SSE data is not JSON: {data[:80]!r}")
                return
            if not isinstance(obj, dict):
                yield from self.fail("SSE data is not a JSON object")
                return
            err = self.error_in(obj)
            if err is not None:
                yield from self.start()
                yield {
                    "type": "error",
                    "message_id": self.mid,
                    "error_class": err.error_class,
                    "message": str(err),
                    "provider_status": None,
                }
                self.finished = True
                yield overrides.call(self.complete, "error", final=False)
                raise err
            try:
                yield from self.chunk(obj)
            except _Malformed as exc:
                yield from self.fail(str(exc))
                return
        self.position += 1
        if not done and (self.stop_reason is None or self.usage is None):
            lacks = ["a finish_reason"] if self.stop_reason is None else []
            lacks += ["the usage chunk"] if self.stop_reason is not None else []
            if self.chunks:
                yield from self.start()  # what arrived is still a message (contract §6.5)
            yield from self.fail(
                f"stream ended before data: [DONE], without {', '.join(lacks)}: cut before its end", StreamCutError
            )
        if not done:
            # the finish_reason and the usage chunk arrived ("an additional chunk will be
            # streamed before the data: [DONE] message", chat/create stream_options, which
            # this adapter always asks for): nothing is missing but `[DONE]`, which some
            # compatible servers do not send
            self.adapter.log.warning(
                "%s: stream ended after its finish_reason without data: [DONE]",
                self.adapter.name,
                extra={"event": "done_missing", "adapter": self.adapter.name, "session_id": self.ctx.session_id},
            )
        elif not self.chunks:
            self.position = done_at
            raise self.error("data: [DONE] with no chunk before it")
        if self.stop_reason is None:
            # complete ([DONE] arrived) but no finish_reason: some compatible routers omit it
            self.stop_reason = "tool_use" if self.calls else "end_turn"
            self.adapter.log.warning(
                "%s: stream ended with [DONE] but no finish_reason; read as %s",
                self.adapter.name,
                self.stop_reason,
                extra={
                    "event": "finish_reason_missing",
                    "adapter": self.adapter.name,
                    "session_id": self.ctx.session_id,
                },
            )
        try:
            end = list(self.end_call())
        except _Malformed as exc:
            yield from self.fail(str(exc))
            return
        yield from self.start()  # a stream of content-filter chunks only still opens
        yield from end
        self.finished = True
        yield self.complete(self.stop_reason or "end_turn")

    def error_in(self, obj: Mapping[str, Any]) -> AdapterError | None:
        """The error a chunk reports: chat-streaming's error body, `{"error": ...}` in place of
        a chunk (no `choices`); None for a chunk of the reply."""
        return self.adapter.classify_error(500, obj) if "error" in obj and "choices" not in obj else None

    def start(self) -> Iterator[StreamEvent]:
        if not self.started:
            self.started = True
            yield {"type": "message_start", "message_id": self.mid, "role": "assistant", "model": self.model}

    def chunk(self, obj: dict[str, Any]) -> Iterator[StreamEvent]:
        self.chunks += 1
        if obj.get("model") and not self.started:
            self.model = f"{self.adapter.provider}:{obj['model']}"
        choices = obj.get("choices")
        if choices is None:
            choices = []
        if not isinstance(choices, list):
            raise _Malformed("`choices` is not a list")
        if not choices and not obj.get("model") and obj.get("usage") is None:
            return  # Azure's `prompt_filter_results` chunk: nothing canonical, no model yet
        yield from self.start()
        for choice in choices:
            if not isinstance(choice, dict):
                raise _Malformed("a choice is not an object")
            if choice.get("index", 0) != 0:
                # several choices (n > 1): the canonical message keeps choice 0, as a reply's
                self.dropped.add(str(choice.get("index")))
                continue
            delta = choice.get("delta") or {}
            fc = delta.get("function_call")
            if self.stop_reason is not None and (delta.get("content") or delta.get("tool_calls") or fc):
                self.after_finish(delta)
            yield from self.reasoning(delta)
            text = delta.get("content")
            if isinstance(text, dict):
                text = [self.adapter.content_object(text)]
            if isinstance(text, str) and text:
                yield from self.text(text)
            elif isinstance(text, list):
                for part in text:
                    kind, piece = content_part(part)
                    if kind == "thinking" and piece:
                        yield from self.thinking(piece)
                    elif kind == "text" and piece:
                        yield from self.text(piece)
            calls = delta.get("tool_calls") or []
            if not isinstance(calls, list):
                raise _Malformed("delta.tool_calls is not a list")
            for call in calls:
                yield from self.tool_call(call)
            if isinstance(fc, dict):
                # the deprecated `function_call` delta: one call, without id nor index
                pid = f"function_call:{obj.get('id') or self.mid}"
                yield from self.tool_call({"id": pid, "function": fc}, key="function_call")
            if choice.get("finish_reason"):
                self.raw_finish = choice["finish_reason"]
                self.stop_reason = self.adapter.stop_reason_of(choice["finish_reason"])
                yield from self.end_call()  # contract §5.1: tool.use_end at finish_reason
        usage = self.adapter.usage_from_wire(obj.get("usage") if obj.get("usage") is not None else self.groq_usage(obj))
        if usage is not None:
            self.usage = usage
            yield {"type": "usage_update", "message_id": self.mid, "usage": dict(usage)}

    def groq_usage(self, obj: Mapping[str, Any]) -> Any:
        """Groq's streams carry the usage in the last chunk's `x_groq.usage` (its API reference's
        streamed chunk; newer servers send a top-level `usage` beside it, read first). Read
        there when no `usage` came, reported as a departure naming the field, so the
        counts are neither lost nor estimated."""
        groq = obj.get("x_groq")
        found = groq.get("usage") if isinstance(groq, dict) else None
        if not isinstance(found, dict):
            return None
        self.adapter.log.warning(
            "%s: stream event %d: usage read from x_groq.usage (no `usage` member in the chunk)",
            self.adapter.name,
            self.position,
            extra={"event": "wire_departure", "adapter": self.adapter.name, "field": "x_groq.usage", "value": None},
        )
        return found

    def after_finish(self, delta: Mapping[str, Any]) -> None:
        """Content after a finish_reason: refused, unless it is the next tool call after a
        `tool_calls` finish reason and the stream-event schema tolerates that finish reason
        `repeated` (a compatible server ends each parallel call so): then read on, once
        reported."""
        more_calls = bool(delta.get("tool_calls") or delta.get("function_call")) and not delta.get("content")
        why = tolerated(self.adapter.wire_api, "stream-event", ("choices", "*", "finish_reason"), "repeated")
        if not (more_calls and self.raw_finish == "tool_calls" and why):
            raise _Malformed("content after finish_reason")
        if not self.repeated:
            self.adapter.log.warning(
                "%s: stream event %d: finish_reason %r came before more tool calls; read on (%s)",
                self.adapter.name,
                self.position,
                self.raw_finish,
                why,
                extra={
                    "event": "wire_departure",
                    "adapter": self.adapter.name,
                    "field": "finish_reason",
                    "value": self.raw_finish,
                },
            )
        self.repeated = True
        self.stop_reason = None

    def reasoning(self, delta: Mapping[str, Any]) -> Iterator[StreamEvent]:
        """A delta's reasoning text (the first non-empty of REASONING_FIELDS)."""
        for key in REASONING_FIELDS:
            piece = delta.get(key)
            if isinstance(piece, str) and piece:
                yield from self.thinking(piece)
                return

    def thinking(self, text: str) -> Iterator[StreamEvent]:
        if self.think_at is None or self.think_at != len(self.content) - 1:
            yield from self.end_call()
            self.think_at = len(self.content)
            self.content.append({"type": "thinking", "text": "", "signature": None})
        self.content[self.think_at]["text"] += text
        yield {
            "type": "thinking_delta",
            "message_id": self.mid,
            "content_block_index": self.think_at,
            "text": text,
            "signature": None,  # these servers issue none
        }

    def text(self, text: str) -> Iterator[StreamEvent]:
        if self.text_at is None or self.text_at != len(self.content) - 1:
            yield from self.end_call()
            self.text_at = len(self.content)
            self.content.append({"type": "text", "text": ""})
        self.content[self.text_at]["text"] += text
        yield {"type": "text_delta", "message_id": self.mid, "content_block_index": self.text_at, "text": text}

    def tool_call(self, call: Any, key: str | None = None) -> Iterator[StreamEvent]:
        if not isinstance(call, dict):
            raise _Malformed("a tool call delta is not an object")
        wi: int | str | None = key if key is not None else call.get("index")
        if wi is None:
            # a compatible server's calls without `index` (issue 25): one with an id names
            # its call, one without continues the open call
            if isinstance(call.get("id"), str) and call["id"]:
                wi = f"id:{call['id']}"
            elif self.open_key is not None:
                wi = self.open_key
            else:
                raise _Malformed("a tool call delta without index nor id continues no call")
        elif key is None and (not isinstance(wi, int) or isinstance(wi, bool) or wi < 0):
            raise _Malformed(f"tool call index {wi!r} is not a non-negative integer")
        fn = call.get("function") or {}
        k = self.calls.get(wi)
        if k is None:
            if not isinstance(call.get("id"), str) or not call["id"]:
                raise _Malformed(f"tool call {wi} starts without an id")
            yield from self.end_call()
            k = self.calls[wi] = len(self.content)
            cid = self.adapter.tool_id_map(self.ctx.session_id).canonical_for(call["id"])
            self.content.append({"type": "tool_use", "id": cid, "name": str(fn.get("name") or ""), "input": {}})
            self.args[k] = ""
            self.open_call = k
            self.open_key = wi
            yield {
                "type": "tool_use_start",
                "message_id": self.mid,
                "content_block_index": k,
                "tool_use_id": cid,
                "tool_name": self.content[k]["name"],
            }
        frag = fn.get("arguments")
        if frag is None or frag == "":
            return
        if not isinstance(frag, str):
            raise _Malformed(f"tool call {wi} arguments fragment is not a string")
        if k != self.open_call:
            raise _Malformed(f"tool call {wi} continues after the next content started")
        self.args[k] += frag
        yield {
            "type": "tool_use_input_delta",
            "message_id": self.mid,
            "content_block_index": k,
            "tool_use_id": self.content[k]["id"],
            "partial_json": frag,  # the literal fragment (contract §5.4)
        }

    def end_call(self) -> Iterator[StreamEvent]:
        k = self.open_call
        if k is None:
            return
        block = self.content[k]
        parsed = json_object(self.args[k])
        if parsed is None:
            raise _Malformed(f"tool call {block['name']!r} arguments are not a JSON object: {self.args[k][:80]!r}")
        self.open_call = None
        self.open_key = None
        self.closed.add(k)
        block["input"] = parsed
        yield {
            "type": "tool_use_end",
            "message_id": self.mid,
            "content_block_index": k,
            "tool_use_id": block["id"],
            "final_input": block["input"],
        }

    def complete(self, stop_reason: str, *, final: bool = True) -> StreamEvent:
        if self.dropped:
            self.adapter.log.warning(
                "%s: the stream carries %d choices (n > 1); the canonical message keeps choice 0",
                self.adapter.name,
                len(self.dropped) + 1,
                extra={"event": "choices_dropped", "adapter": self.adapter.name, "choices": sorted(self.dropped)},
            )
        content = [dict(b) for b in self.content]
        if not final:  # tool calls whose arguments never completed are not invented as {}
            content = [b for k, b in enumerate(content) if not (b["type"] == "tool_use" and k not in self.closed)]
        usage = self.usage or estimated_usage(self.adapter.name, self.adapter.log, self.ctx, self.content)
        return {
            "type": "message_complete",
            "message_id": self.mid,
            "stop_reason": stop_reason,
            "final_content": content,
            "usage": dict(usage) if usage else None,
        }


def content_part(part: Any) -> tuple[str | None, str]:
    """(kind, text) of one typed content part: `text` {text}; Mistral's `thinking` {thinking:
    [text parts]} (docs.mistral.ai, "Reasoning"); anything else (None, "")."""
    if not isinstance(part, dict):
        return None, ""
    if part.get("type") == "text":
        return "text", str(part.get("text") or "")
    if part.get("type") == "thinking":
        inner = part.get("thinking")
        if isinstance(inner, str):
            return "thinking", inner
        texts = [str(q.get("text") or "") for q in inner or [] if isinstance(q, dict) and q.get("type") == "text"]
        return "thinking", "".join(texts)
    return None, ""


def _error_text(body: Any, err: Any) -> str:
    """The server's words in an error body: OpenAI's `error.message`; else a compatible
    server's `error` string or FastAPI-style `detail` (vLLM, proxies); else the body's
    first 200 characters (the HTTP status still classifies it, contract §6.2)."""
    if isinstance(err, dict):
        return str(err.get("message"))
    if isinstance(err, str):
        return err
    detail = body.get("detail") if isinstance(body, dict) else None
    if isinstance(detail, str):
        return detail
    if detail is not None:
        return json.dumps(detail, ensure_ascii=False)[:200]
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
    return text[:200] if text.strip() else "(empty body)"


class _Malformed(Exception):
    """A chunk that breaks the documented stream (becomes a located WireFormatError)."""


def _message(
    sid: str,
    role: str,
    content: list[Block],
    raw: dict[str, Any],
    name: str,
    meta: dict[str, Any] | None = None,
) -> Message:
    metadata: dict[str, Any] = dict(meta or {})
    if raw:
        metadata["provider_raw"] = {name: raw}
    return request_message(sid, role, content, metadata)


def _extras(msg: Mapping[str, Any], skip: Iterable[str] = ()) -> dict[str, Any]:
    """The members of a wire message kept verbatim (`provider_raw.message`): not those the
    reader maps (role, content, tool calls, a deprecated `function_call` object) nor `skip`."""
    skipped = set(skip)
    return {
        k: v
        for k, v in msg.items()
        if k not in _MESSAGE_KEYS and k not in skipped and not (k == "function_call" and isinstance(v, dict))
    }


def _call_forms(msg: Mapping[str, Any]) -> dict[str, Any]:
    """The `provider_raw` marks of the forms a message's calls took, for `restyle`: the
    provider ids of its custom tools' calls, and whether it used the deprecated
    `function_call` ("Deprecated and replaced by tool_calls", chat/create)."""
    out: dict[str, Any] = {}
    given = msg.get("tool_calls")
    calls: list[Any] = given if isinstance(given, list) else []
    customs = [
        c["id"] for c in calls if isinstance(c, dict) and c.get("type") == "custom" and isinstance(c.get("id"), str)
    ]
    if customs:
        out["custom_tool_calls"] = customs
    if isinstance(msg.get("function_call"), dict):
        out["function_call"] = True
    return out


def _custom_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A rendered function call back as the custom tool call it was read from."""
    fn = call.get("function") or {}
    args = str(fn.get("arguments") or "")
    parsed = json_object(args)
    text = parsed[CUSTOM_INPUT] if parsed is not None and set(parsed) == {CUSTOM_INPUT} else args
    return {"id": call.get("id"), "type": "custom", "custom": {"name": fn.get("name"), "input": text}}
