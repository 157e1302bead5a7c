"""A third-party OpenAI Chat Completions adapter written to the letter of the metis specs.

Written from OpenAI's Chat Completions API reference (request `messages`/`tools`/
`stream_options`, response `choices[0].message`, `chat.completion.chunk` deltas, the
`{error: {type, code, message}}` body) and the metis documents, without reading turnspec's
reference adapters. Wherever the specs give a choice or a shape, it takes the spec's own:

- stream events use streaming-protocol §5.3's dotted names and exactly its payload fields;
- `capabilities` is an `AdapterCapabilities` object with contract §3.4's twelve fields;
- usage follows contract §7.2 literally: `prompt_tokens` -> `input_tokens` (cached included);
- errors are contract §6.3 classes with `provider_status` and `request_id`, `retryable`
  per §6.4's list; a failing stream ends with `message.complete` stop_reason `error`, then
  raises (§6.5);
- a dropped block is one WARN record with the five fields of canonical §7.3 as `extra=`;
- tool ids are canonical `tu_<ULID>` through a per-session bidirectional map (canonical
  §6.2, contract §4.1.1); message ids come from `RequestContext.message_id`.
"""

from __future__ import annotations

import json
import logging
import math
import mimetypes
import re
import secrets
import string
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.adapters.base import harness_usage, now_timestamp
from conformance.adapters.errors import (
    AdapterError,
    AuthError,
    ContextOverflowError,
    CriticalBlockError,
    InvalidRequestError,
    NetworkError,
    RateLimitError,
    ServerError,
    WireFormatError,
)
from conformance.adapters.protocol import (
    AdapterOptions,
    Message,
    ParsedRequest,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireRequest,
    WireResponse,
)
from conformance.adapters.toolids import ToolIdMap, new_ulid

log = logging.getLogger("literal_openai_chat")

PATH = "/v1/chat/completions"
_ALNUM = string.ascii_letters + string.digits


@dataclass(frozen=True)
class AdapterCapabilities:
    """Contract §3.4's class, field for field (it has no `supports_system_messages_in_list`,
    which only canonical §7.2 lists)."""

    supports_images: bool
    supports_thinking: bool
    supports_tools: bool
    supports_system_prompt: bool
    supports_structured_output: bool
    supports_streaming: bool
    supports_streaming_tool_calls: bool
    supports_parallel_tool_calls: bool
    supports_prompt_caching: bool
    max_context_tokens: int
    max_output_tokens: int
    accepted_image_media_types: list[str] = field(default_factory=list)


# OpenAI `finish_reason` -> contract §3.3 StopReason. `content_filter` names no StopReason;
# the reply ended without the model finishing, which §3.3 calls `error`.
_STOP = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "error",
}

# contract §6.4: the retryable classes
_RETRYABLE = frozenset({"rate_limit", "server_error", "network"})


def _error(status: int | None, body: Any, headers: Mapping[str, str], request_id: str | None) -> AdapterError:
    """Contract §6.2's status table, then OpenAI's body conventions (same section)."""
    err = body.get("error") if isinstance(body, dict) else None
    err = err if isinstance(err, dict) else {}
    code, etype = err.get("code"), err.get("type")
    message = str(err.get("message") or f"HTTP {status}")
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    rid = lower.get("x-request-id") or request_id
    cls: type[AdapterError]
    if code == "rate_limit_exceeded":
        cls = RateLimitError
    elif code == "context_length_exceeded":
        cls = ContextOverflowError
    elif code == "invalid_api_key":
        cls = AuthError
    elif etype == "server_error":
        cls = ServerError
    elif status in (401, 403):
        cls = AuthError
    elif status == 408:
        cls = NetworkError
    elif status == 413:
        cls = ContextOverflowError
    elif status == 429:
        cls = RateLimitError
    elif status is not None and status >= 500:
        cls = ServerError
    elif status is not None and 400 <= status < 500:
        cls = InvalidRequestError
    else:
        cls = ServerError if etype in ("server_error", "api_error") else InvalidRequestError
    kw: dict[str, Any] = {
        "provider_status": status,
        "request_id": rid,
        "retryable": cls.error_class in _RETRYABLE,
    }
    if cls is RateLimitError:
        # contract §6.3 "if provider provided a hint": OpenAI sends `retry-after-ms` (and the
        # HTTP `retry-after`, in seconds)
        kw["retry_after_seconds"] = None
        for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
            try:
                kw["retry_after_seconds"] = float(lower[name]) / scale
                break
            except (KeyError, ValueError):
                continue
    return cls(message, **kw)


def _critical(message: Message, index: int, key: str) -> bool:
    marks = (message.get("metadata") or {}).get(key)
    return marks is True or (isinstance(marks, list) and index in marks)


def _text_of(blocks: Iterable[Any]) -> str:
    return "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text")


class LiteralOpenAIChatAdapter:
    name = "literal-openai-chat"
    provider = "openai"
    wire_api = "openai-chat-completions"
    provider_tool_id = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
    capabilities = AdapterCapabilities(
        supports_images=True,
        # contract §4.3: reasoning content is not mapped to thinking blocks in v1
        supports_thinking=False,
        supports_tools=True,
        supports_system_prompt=True,
        supports_structured_output=True,
        supports_streaming=True,
        supports_streaming_tool_calls=True,
        supports_parallel_tool_calls=True,
        # contract §4.3: OpenAI caches automatically; the adapter reports cached tokens
        supports_prompt_caching=True,
        max_context_tokens=128000,
        max_output_tokens=16384,
        accepted_image_media_types=["image/png", "image/jpeg", "image/gif", "image/webp"],
    )

    def __init__(self) -> None:
        self._maps: dict[str, ToolIdMap] = {}
        self._raw_detail: str | None = None

    def _own_raw(self, message: Message) -> dict[str, Any]:
        """This adapter's entry of a message's `provider_raw` (canonical §6.5: read only by
        the adapter that wrote it)."""
        raw = (message.get("metadata") or {}).get("provider_raw")
        mine = raw.get(self.name) if isinstance(raw, dict) else None
        return mine if isinstance(mine, dict) else {}

    # -- tool ids (canonical §6.2, contract §4.1.1) ---------------------------------------

    def tool_id_map(self, session_id: str) -> ToolIdMap:
        found = self._maps.get(session_id)
        if found is None:
            found = self._maps[session_id] = ToolIdMap(
                self.provider, lambda: "call_" + "".join(secrets.choice(_ALNUM) for _ in range(24))
            )
        return found

    # -- lossy projection (canonical §7.3, contract §4.4) ---------------------------------

    def _drop(self, message: Message, index: int, block_type: str, reason: str, key: str) -> None:
        sid, mid = str(message.get("session_id", "")), str(message.get("id", ""))
        if _critical(message, index, key):
            raise CriticalBlockError(
                adapter=self.name, session_id=sid, message_id=mid, block_type=block_type, reason=reason
            )
        log.warning(
            "%s: dropped %s block %d of message %s: %s",
            self.name,
            block_type,
            index,
            mid,
            reason,
            extra={
                "lossy_session_id": sid,
                "lossy_message_id": mid,
                "lossy_block_type": block_type,
                "lossy_adapter": self.name,
                "lossy_reason": reason,
            },
        )

    # -- canonical -> wire ----------------------------------------------------------------

    def _image_part(self, block: dict[str, Any]) -> dict[str, Any] | None:
        """OpenAI's `image_url` part (a URL or a base64 data URL) for an image of a media type
        contract §3.4's `accepted_image_media_types` lists; None for one it cannot carry."""
        src = block.get("source") or {}
        if str(block.get("media_type", "")).lower() not in self.capabilities.accepted_image_media_types:
            return None
        detail = self._raw_detail
        if src.get("kind") == "base64":
            url = f"data:{block.get('media_type')};base64,{src['data']}"
        elif src.get("kind") == "url":
            url = str(src["data"])
        else:
            return None
        image: dict[str, Any] = {"url": url}
        if detail is not None:
            image["detail"] = detail
        return {"type": "image_url", "image_url": image}

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        key = options.critical_key
        system: list[str] = []
        out: list[dict[str, Any]] = []
        for m in messages:
            role, blocks = m.get("role"), list(m.get("content") or [])
            sid = str(m.get("session_id", ""))
            if role == "system":
                for i, b in enumerate(blocks):
                    if b.get("type") == "text":
                        system.append(str(b.get("text", "")))
                    else:
                        self._drop(m, i, str(b.get("type")), "a system message carries text only", key)
            elif role == "user":
                parts: list[dict[str, Any]] = []
                details = self._own_raw(m).get("image_detail") or {}
                for i, b in enumerate(blocks):
                    t = b.get("type")
                    self._raw_detail = details.get(str(i)) if isinstance(details, dict) else None
                    part = (
                        {"type": "text", "text": b.get("text", "")}
                        if t == "text"
                        else self._image_part(b)
                        if t == "image"
                        else None
                    )
                    if part is None:
                        self._drop(m, i, str(t), "OpenAI user content has no such part", key)
                    else:
                        parts.append(part)
                out.append({"role": "user", "content": parts})
            elif role == "assistant":
                texts: list[str] = []
                calls: list[dict[str, Any]] = []
                for i, b in enumerate(blocks):
                    t = b.get("type")
                    if t == "text":
                        texts.append(str(b.get("text", "")))
                    elif t == "tool_use":
                        calls.append(
                            {
                                "id": self.tool_id_map(sid).provider_for(str(b["id"])),
                                "type": "function",
                                "function": {"name": b["name"], "arguments": json.dumps(b.get("input", {}))},
                            }
                        )
                    elif t in ("thinking", "redacted_thinking"):
                        # contract §4.3: "The adapter MUST drop canonical ThinkingBlock and
                        # RedactedThinkingBlock on the way out (with a WARN-level log entry)"
                        self._drop(m, i, str(t), "OpenAI Chat Completions carries no thinking (contract §4.3)", key)
                    else:
                        self._drop(m, i, str(t), "an OpenAI assistant message has no such part", key)
                msg: dict[str, Any] = {"role": "assistant"}
                if len(texts) == 1:
                    msg["content"] = texts[0]
                elif texts:
                    msg["content"] = [{"type": "text", "text": s} for s in texts]
                else:
                    msg["content"] = None
                if calls:
                    msg["tool_calls"] = calls
                out.append(msg)
            elif role == "tool":
                for i, b in enumerate(blocks):
                    if b.get("type") != "tool_result":
                        self._drop(m, i, str(b.get("type")), "an OpenAI tool message carries one tool result", key)
                        continue
                    inner = list(b.get("content") or [])
                    for c in inner:
                        if c.get("type") != "text":
                            # contract §4.3: "Content is the tool result text"
                            self._drop(
                                m, i, str(c.get("type")), "only a tool result's text is sent (contract §4.3)", key
                            )
                    if b.get("is_error"):
                        self._drop(m, i, "tool_result", "is_error: OpenAI tool messages have no error flag", key)
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": self.tool_id_map(sid).provider_for(str(b["tool_use_id"])),
                            "content": _text_of(inner),
                        }
                    )
        if system:
            # contract §4.1.2: several SYSTEM messages are concatenated with "\n\n", placed first
            out.insert(0, {"role": "system", "content": "\n\n".join(system)})
        body: dict[str, Any] = {"model": options.wire_model, "messages": out}
        mine = options.provider_raw.get(self.name)
        strict = (mine.get("tool_strict") if isinstance(mine, Mapping) else None) or {}
        wire_tools: list[Any] = []
        for t in tools:
            fn: dict[str, Any] = {
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t["input_schema"],
            }
            if isinstance(strict, Mapping) and t["name"] in strict:
                fn["strict"] = strict[t["name"]]
            wire_tools.append({"type": "function", "function": fn})
        wire_tools += [dict(t) for t in options.provider_tools]
        if wire_tools:
            body["tools"] = wire_tools
        if options.max_output_tokens is not None:
            body["max_completion_tokens"] = options.max_output_tokens
        if options.stop_sequences:
            body["stop"] = list(options.stop_sequences)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.output_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": dict(options.output_schema)},
            }
        if options.stream:
            body["stream"] = True
            # contract §7.2: "Adapters MUST request usage in streaming mode"
            body["stream_options"] = {"include_usage": True}
        for k, v in options.extra.items():
            if k == "stream_options" and isinstance(v, Mapping) and options.stream:
                body["stream_options"] = {**v, "include_usage": True}
            else:
                body[k] = v
        return WireRequest("POST", PATH, {"content-type": "application/json"}, body)

    # -- wire -> canonical ----------------------------------------------------------------

    def _usage(self, usage: Any) -> dict[str, int] | None:
        """Contract §7.2, literally: prompt_tokens -> input_tokens (cached ones included)."""
        if not isinstance(usage, dict):
            return None
        details = usage.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        return {
            "input_tokens": int(usage.get("prompt_tokens") or 0),
            "output_tokens": int(usage.get("completion_tokens") or 0),
            "cached_input_tokens": int(cached or 0),
            "cache_creation_input_tokens": 0,
        }

    def _estimated(self, ctx: RequestContext, content: list[dict[str, Any]]) -> dict[str, int] | None:
        """Contract §7.2 last paragraph: the pre-flight estimate and the streamed output, WARN."""
        if ctx.estimated_input_tokens is None:
            return None
        out = sum(math.ceil(len(json.dumps(b)) / 4) for b in content)
        log.warning(
            "%s: no usage in the response; estimated %d input / %d output tokens",
            self.name,
            ctx.estimated_input_tokens,
            out,
            extra={"event": "usage_estimated"},
        )
        return {
            "input_tokens": ctx.estimated_input_tokens,
            "output_tokens": out,
            "cached_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }

    def _model(self, wire_model: Any, ctx: RequestContext) -> str:
        return (
            f"{self.provider}:{wire_model}"
            if isinstance(wire_model, str) and wire_model
            else ctx.model or "openai:unknown"
        )

    def _message(
        self, ctx: RequestContext, content: list[dict[str, Any]], model: str, usage: dict[str, int] | None, status: str
    ) -> Message:
        return {
            "id": ctx.message_id or new_ulid(),
            "session_id": ctx.session_id,
            "role": "assistant",
            "content": content or [{"type": "text", "text": ""}],
            "metadata": {
                "model": model,
                "provider": self.provider,
                "routing": {"mode": "default", "chosen_model": model, "reason": "no routing engine"},
                "usage": harness_usage(usage, model, ctx) if usage is not None else None,
                "status": status,
            },
            "created_at": ctx.created_at or now_timestamp(),
            "schema_version": 1,
        }

    def _arguments(self, raw: Any, where: str) -> dict[str, Any]:
        if isinstance(raw, dict):
            return raw
        try:
            value = json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
        except json.JSONDecodeError as exc:
            raise WireFormatError(f"{where}: function.arguments is not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise WireFormatError(f"{where}: function.arguments is not a JSON object")
        return value

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        ctx = request_context
        if isinstance(response, WireResponse):
            body, status, headers = response.body, response.status, response.headers
        else:
            body, status, headers = response, 200, {}
        if status >= 400 or (isinstance(body, dict) and "error" in body and "choices" not in body):
            raise _error(status, body, headers, ctx.request_id)
        if not isinstance(body, dict):
            raise WireFormatError("response body is not a JSON object")
        choices = body.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise WireFormatError("response has no choices[0]")
        msg = choices[0].get("message")
        if not isinstance(msg, dict):
            raise WireFormatError("choices[0].message is not an object")
        content: list[dict[str, Any]] = []
        text = msg.get("content")
        if isinstance(text, str) and text:
            content.append({"type": "text", "text": text})
        elif isinstance(text, list):
            content += [{"type": "text", "text": str(p.get("text", ""))} for p in text if isinstance(p, dict)]
        if isinstance(msg.get("refusal"), str) and msg["refusal"]:
            content.append({"type": "text", "text": msg["refusal"]})
        calls = msg.get("tool_calls") or []
        if not isinstance(calls, list):
            raise WireFormatError("choices[0].message.tool_calls is not a list")
        tmap = self.tool_id_map(ctx.session_id)
        for n, c in enumerate(calls):
            fn = c.get("function") if isinstance(c, dict) else None
            if not isinstance(fn, dict) or not isinstance(c.get("id"), str):
                raise WireFormatError(f"choices[0].message.tool_calls[{n}] has no id or function")
            content.append(
                {
                    "type": "tool_use",
                    "id": tmap.canonical_for(c["id"]),
                    "name": str(fn.get("name", "")),
                    "input": self._arguments(fn.get("arguments"), f"choices[0].message.tool_calls[{n}]"),
                }
            )
        usage = self._usage(body.get("usage"))
        if usage is None:
            usage = self._estimated(ctx, content)
        return self._message(ctx, content, self._model(body.get("model"), ctx), usage, "complete")

    # -- streaming (streaming-protocol §5.3, contract §5) ---------------------------------

    @staticmethod
    def _sse(chunks: Iterable[bytes | str]) -> Iterator[str]:
        """The `data:` payloads of an SSE body fed in arbitrary pieces."""
        buf = b""
        for piece in chunks:
            buf += piece.encode() if isinstance(piece, str) else piece
            buf = buf.replace(b"\r\n", b"\n")
            while b"\n\n" in buf:
                frame, buf = buf.split(b"\n\n", 1)
                data = [ln[5:].lstrip() for ln in frame.split(b"\n") if ln.startswith(b"data:")]
                if data:
                    yield b"\n".join(data).decode("utf-8", "replace")
        tail = [ln[5:].lstrip() for ln in buf.split(b"\n") if ln.startswith(b"data:")]
        if tail:
            yield b"\n".join(tail).decode("utf-8", "replace")

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        ctx = context
        mid = ctx.message_id or new_ulid()
        tmap = self.tool_id_map(ctx.session_id)
        content: list[dict[str, Any]] = []
        started = False
        text_index: int | None = None
        calls: dict[int, dict[str, Any]] = {}  # wire tool_calls[].index -> state
        stop: str | None = None
        usage: dict[str, int] | None = None
        model = ctx.model or "openai:unknown"
        done = False

        def complete(reason: str) -> StreamEvent:
            final = [dict(b) for b in content]
            u = usage if usage is not None else self._estimated(ctx, final)
            # streaming §5.3 message.complete: message_id, stop_reason, final_content, usage
            return {
                "type": "message.complete",
                "message_id": mid,
                "stop_reason": reason,
                "final_content": final,
                "usage": harness_usage(u, model, ctx) if u is not None else None,
            }

        def end_calls() -> Iterator[StreamEvent]:
            for st in calls.values():
                if st["ended"]:
                    continue
                st["ended"] = True
                try:
                    final = json.loads(st["args"]) if st["args"].strip() else {}
                except json.JSONDecodeError:
                    final = None
                if not isinstance(final, dict):
                    # contract §5.3.3: "or {} if nothing parses"
                    final = {}
                content[st["block"]]["input"] = final
                yield {
                    "type": "tool.use_end",
                    "message_id": mid,
                    "content_block_index": st["block"],
                    "tool_use_id": st["id"],
                    "final_input": final,
                }

        def fail(exc: AdapterError) -> Iterator[StreamEvent]:
            # contract §6.5: complete the current event, message.complete stop_reason error, raise
            nonlocal started
            if not started:
                # streaming §5.2 invariant 1: message.start precedes the rest
                started = True
                yield {"type": "message.start", "message_id": mid, "role": "assistant", "model": model}
            yield from end_calls()
            yield complete("error")
            raise exc

        for n, payload in enumerate(self._sse(chunks)):
            if payload.strip() == "[DONE]":
                done = True
                break
            try:
                chunk = json.loads(payload)
            except json.JSONDecodeError as exc:
                yield from fail(WireFormatError(f"stream event {n}: not JSON: {exc}", request_id=ctx.request_id))
                return
            if not isinstance(chunk, dict):
                yield from fail(WireFormatError(f"stream event {n}: not a JSON object", request_id=ctx.request_id))
                return
            if "error" in chunk:
                yield from fail(_error(None, chunk, {}, ctx.request_id))
                return
            if isinstance(chunk.get("model"), str) and chunk["model"]:
                model = self._model(chunk["model"], ctx)
            if not started:
                started = True
                # streaming §5.3 message.start: message_id, role, model
                yield {"type": "message.start", "message_id": mid, "role": "assistant", "model": model}
            if chunk.get("usage") is not None:
                usage = self._usage(chunk["usage"])
            choices = chunk.get("choices") or []
            choice = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
            delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
            for key in ("content", "refusal"):
                piece = delta.get(key)
                if isinstance(piece, str) and piece:
                    if text_index is None or text_index != len(content) - 1:
                        content.append({"type": "text", "text": ""})
                        text_index = len(content) - 1
                    content[text_index]["text"] += piece
                    yield {
                        "type": "text.delta",
                        "message_id": mid,
                        "content_block_index": text_index,
                        "text": piece,
                    }
            for tc in delta.get("tool_calls") or []:
                if not isinstance(tc, dict):
                    continue
                idx = tc.get("index", len(calls))
                fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
                st = calls.get(idx)
                if st is None:
                    # contract §5.2 invariant 5: indexes never decrease, so the calls before
                    # this one end now (OpenAI streams them one after another)
                    yield from end_calls()
                    if not isinstance(tc.get("id"), str):
                        yield from fail(WireFormatError(f"stream event {n}: tool call {idx} starts without an id"))
                        return
                    canonical = tmap.canonical_for(tc["id"])
                    content.append({"type": "tool_use", "id": canonical, "name": str(fn.get("name", "")), "input": {}})
                    st = calls[idx] = {"id": canonical, "block": len(content) - 1, "args": "", "ended": False}
                    text_index = None
                    yield {
                        "type": "tool.use_start",
                        "message_id": mid,
                        "content_block_index": st["block"],
                        "tool_use_id": canonical,
                        "tool_name": content[st["block"]]["name"],
                    }
                frag = fn.get("arguments")
                if isinstance(frag, str) and frag:
                    st["args"] += frag
                    # contract §5.4: the literal fragment received
                    yield {
                        "type": "tool.use_input_delta",
                        "message_id": mid,
                        "content_block_index": st["block"],
                        "tool_use_id": st["id"],
                        "partial_json": frag,
                    }
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                stop = _STOP.get(reason, "end_turn")
                # contract §5.1: finish_reason -> tool.use_end for each accumulated call
                yield from end_calls()
        if stop is None:
            why = "[DONE] came without a finish_reason" if done else "the stream ended without a finish_reason"
            yield from fail(WireFormatError(why, request_id=ctx.request_id))
            return
        if not started:
            yield {"type": "message.start", "message_id": mid, "role": "assistant", "model": model}
        yield from end_calls()
        yield complete(stop)

    # -- wire request -> canonical ----------------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        sid = session_id or f"sess_{new_ulid().lower()}"
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            raise WireFormatError("request body has no messages list")
        tmap = self.tool_id_map(sid)
        messages: list[Message] = []

        model = f"openai:{body.get('model', 'unknown')}"

        def add(role: str, content: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> None:
            messages.append(
                {
                    "id": new_ulid(),
                    "session_id": sid,
                    "role": role,
                    "content": content or [{"type": "text", "text": ""}],
                    "metadata": meta or {},
                    "created_at": now_timestamp(),
                    "schema_version": 1,
                }
            )

        for n, m in enumerate(body["messages"]):
            if not isinstance(m, dict):
                raise WireFormatError(f"messages[{n}] is not an object")
            role, c = m.get("role"), m.get("content")
            parts: list[dict[str, Any]] = []
            details: dict[str, str] = {}
            if isinstance(c, str):
                parts.append({"type": "text", "text": c})
            elif isinstance(c, list):
                for p in c:
                    if not isinstance(p, dict):
                        continue
                    if p.get("type") == "text":
                        parts.append({"type": "text", "text": str(p.get("text", ""))})
                    elif p.get("type") == "image_url":
                        image = p.get("image_url") if isinstance(p.get("image_url"), dict) else {}
                        url = str(image.get("url", ""))
                        if isinstance(image.get("detail"), str):
                            details[str(len(parts))] = image["detail"]
                        hit = re.match(r"^data:([^;,]+);base64,(.*)$", url, re.S)
                        if hit:
                            parts.append(
                                {
                                    "type": "image",
                                    "source": {"kind": "base64", "data": hit.group(2)},
                                    "media_type": hit.group(1),
                                }
                            )
                        else:
                            guessed = mimetypes.guess_type(url.split("?", 1)[0])[0]
                            # the wire names no media type for a URL: the file extension's, else JPEG
                            media = guessed if guessed and guessed.startswith("image/") else "image/jpeg"
                            parts.append({"type": "image", "source": {"kind": "url", "data": url}, "media_type": media})
            if role in ("system", "developer"):
                add("system", parts)
            elif role == "user":
                add("user", parts, {"provider_raw": {self.name: {"image_detail": details}}} if details else None)
            elif role == "assistant":
                if isinstance(m.get("refusal"), str) and m["refusal"]:  # the message's refusal field
                    parts.append({"type": "text", "text": m["refusal"]})
                for k, tc in enumerate(m.get("tool_calls") or []):
                    fn = tc.get("function") if isinstance(tc, dict) else None
                    if not isinstance(fn, dict) or not isinstance(tc.get("id"), str):
                        raise WireFormatError(f"messages[{n}].tool_calls[{k}] has no id or function")
                    parts.append(
                        {
                            "type": "tool_use",
                            "id": tmap.canonical_for(tc["id"]),
                            "name": str(fn.get("name", "")),
                            "input": self._arguments(fn.get("arguments"), f"messages[{n}].tool_calls[{k}]"),
                        }
                    )
                # canonical §4.3: a complete assistant message names its model and provider;
                # the request names only the model it is sent to
                add("assistant", parts, {"model": model, "provider": self.provider, "status": "complete"})
            elif role == "tool":
                call = m.get("tool_call_id")
                if not isinstance(call, str):
                    raise WireFormatError(f"messages[{n}] (tool) has no tool_call_id")
                tu = tmap.canonical_for(call)
                # canonical §5.1 invariant 4: parent_tool_use_id is set on every TOOL message
                add("tool", [{"type": "tool_result", "tool_use_id": tu, "content": parts}], {"parent_tool_use_id": tu})
            else:
                raise WireFormatError(f"messages[{n}]: unknown role {role!r}")
        tools: list[ToolDefinition] = []
        strict: dict[str, Any] = {}
        for t in body.get("tools") or []:
            fn = t.get("function") if isinstance(t, dict) else None
            if isinstance(fn, dict) and t.get("type") == "function":
                if "strict" in fn:
                    strict[str(fn.get("name", ""))] = fn["strict"]
                tools.append(
                    {
                        "name": str(fn.get("name", "")),
                        "description": str(fn.get("description", "")),
                        "input_schema": fn.get("parameters") or {"type": "object", "properties": {}},
                        # the wire says nothing of side effects; canonical §4.4 requires one
                        "side_effects": "none",
                    }
                )
        stop = body.get("stop")
        rf = body.get("response_format")
        schema = (rf.get("json_schema") or {}).get("schema") if isinstance(rf, dict) else None
        known = {"model", "messages", "tools", "max_completion_tokens", "max_tokens", "stop", "temperature"}
        known |= {"stream", "response_format"}
        options = AdapterOptions(
            model=f"openai:{body.get('model', 'unknown')}",
            max_output_tokens=body.get("max_completion_tokens", body.get("max_tokens")),
            temperature=body.get("temperature"),
            stop_sequences=tuple([stop] if isinstance(stop, str) else stop or ()),
            stream=bool(body.get("stream")),
            output_schema=schema if isinstance(schema, dict) else None,
            extra={k: v for k, v in body.items() if k not in known},
            provider_raw={self.name: {"tool_strict": strict}} if strict else {},
        )
        return ParsedRequest(messages, tools, options)

    # -- pre-flight estimate (contract §3.1: a heuristic, ±10%) ---------------------------

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        """A heuristic (contract §3.1 "uses local tokenizer or heuristic"): characters / 4 of
        every text, 4 tokens of framing per message and 3 priming the reply; a tool call costs
        its name and compact JSON arguments / 4 plus 10; an image 85 (OpenAI's low-detail tile
        cost); the tool definitions 10, plus per tool 5, its name and description / 4 and
        its compact parameter schema / 6."""
        total = 3
        for m in messages:
            total += 4
            for b in m.get("content") or []:
                t = b.get("type")
                if t in ("text", "thinking"):
                    total += math.ceil(len(str(b.get("text", ""))) / 4)
                elif t == "image":
                    total += 85
                elif t == "tool_use":
                    total += 10 + math.ceil((len(str(b.get("name", ""))) + len(_compact(b.get("input", {})))) / 4)
                elif t == "tool_result":
                    total += math.ceil(len(_text_of(b.get("content") or [])) / 4)
        if tools:
            total += 10
        for t in tools:
            chars = len(str(t.get("name", ""))) + len(str(t.get("description", "")))
            # the schema's JSON punctuation and keywords tokenize densely: / 6, not / 4
            total += 5 + math.ceil(chars / 4) + math.ceil(len(_compact(t.get("input_schema"))) / 6)
        return total


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
