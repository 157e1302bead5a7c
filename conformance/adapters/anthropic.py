"""The Anthropic Messages API adapter (adapter contract §4.2, §5.1; seed 003 §7).

Wire format as documented at platform.claude.com/docs (Messages API, streaming, extended
thinking, vision, tool use):

- SYSTEM messages are hoisted into the top-level `system` parameter (spec §3.3, contract
  §4.1.2), concatenated with a blank line.
- TOOL messages become `tool_result` blocks inside a `user` message; consecutive tool
  messages share one user message, as parallel tool results must.
- `thinking` blocks go back with their `signature` and `redacted_thinking` with its `data`
  byte for byte, but only on messages this provider issued (`metadata.provider ==
  "anthropic"`): the API answers a foreign or missing signature with a 400, so those
  blocks are dropped with the §7.3 WARN line.
- Fields with no canonical home (`cache_control`, text `citations`, the message id and
  stop reason, server-tool blocks) ride in `metadata.provider_raw["anthropic"]` and are
  restored when this adapter serializes the message again (spec §6.5).
- Usage (contract §7.2, "map directly"): `input_tokens`, `output_tokens`,
  `cache_read_input_tokens` -> `cached_input_tokens`, `cache_creation_input_tokens` as is.
  Difference upstream since the contract: Anthropic now also splits cache writes by TTL
  (`usage.cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`, priced
  1.25x and 2x the input rate); the canonical TokenUsage has one cache-write bucket, so
  `cache_creation_input_tokens` (their sum) is what is reported and the split is not kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from ..wire.anthropic_messages import ANTHROPIC_MESSAGES
from ..wire.openai_chat import parse_data_url
from . import overrides
from ._shared import (
    URL_IMAGE_MEDIA_TYPE,
    StreamState,
    UrlMediaMemory,
    finish_error,
    header,
    json_object,
    json_value,
    lay_out_tools,
    stop_reason,
    tool_extra,
    tool_layout,
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
from .estimate import image_block_size, json_tokens, text_tokens
from .streams import cut_input

ANTHROPIC_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 4096
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
# raw stop_reason -> canonical StopReason: the wire record's table, written from the docs
_STOP = ANTHROPIC_MESSAGES.stop_reasons
# error.type hints of adapter contract §6.2
_ERROR_HINT = {
    "overloaded_error": "rate_limit",
    "rate_limit_error": "rate_limit",
    "authentication_error": "auth",
    "permission_error": "auth",
    "api_error": "server_error",
    "not_found_error": "invalid_request",
    "request_too_large": "context_overflow",
}
_CANONICAL_KEYS = {
    "text": {"type", "text"},
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
    "tool_use": {"type", "id", "name", "input"},
    "image": {"type", "source"},
    "tool_result": {"type", "tool_use_id", "content", "is_error"},
}


class AnthropicAdapter(UrlMediaMemory, CancellableStreams, BaseAdapter):
    """Canonical <-> Anthropic Messages API (`POST /v1/messages`)."""

    name: ClassVar[str] = "anthropic"
    provider: ClassVar[str] = "anthropic"
    wire_api: ClassVar[str] = "anthropic-messages"
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^[a-zA-Z0-9_-]+$")
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": True,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        # Anthropic has no strict response schema in this adapter (contract §11.6): declared false
        "supports_structured_output": False,
        "supports_streaming": True,
        "supports_streaming_tool_calls": True,
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": True,
        "supports_system_messages_in_list": False,
        "max_context_tokens": 200_000,
        "max_output_tokens": 64_000,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def new_provider_tool_id(self) -> str:
        return "toolu_" + new_ulid()

    # -- canonical -> wire --------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        body: WireBody = {
            "model": options.wire_model,
            "max_tokens": options.max_output_tokens or DEFAULT_MAX_TOKENS,
        }
        system = self.system_to_wire(messages, options)
        if system is not None:
            body["system"] = system
        body["messages"] = self.messages_to_wire(messages)
        wire_tools = lay_out_tools(
            [self.tool_to_wire(t, options) for t in tools],
            [dict(t) for t in options.provider_tools],
            options.provider_raw.get(self.name) or {},
        )
        if wire_tools:
            body["tools"] = wire_tools
        if options.stop_sequences:
            body["stop_sequences"] = list(options.stop_sequences)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.stream:
            body["stream"] = True
        if options.output_schema is not None:
            self.warn_option("output_schema", "supports_structured_output is false for the Anthropic adapter")
        for k, v in options.extra.items():
            body.setdefault(k, v)
        return WireRequest(
            "POST",
            "/v1/messages",
            {"anthropic-version": ANTHROPIC_VERSION, "content-type": "application/json"},
            body,
        )

    def system_to_wire(self, messages: list[Message], options: AdapterOptions) -> str | list[Block] | None:
        """Hoist every SYSTEM message (contract §4.1.2); as blocks when the request had blocks."""
        blocks: list[Block] = []
        for m in messages:
            if m.get("role") != "system":
                continue
            extras = self.own_raw(m).get("blocks", {})
            for i, b in enumerate(m.get("content", [])):
                if b.get("type") != "text":
                    self.drop(m, i, str(b.get("type")), "system prompts carry text only")
                    continue
                blocks.append({"type": "text", "text": b["text"], **extras.get(str(i), {})})
        if not blocks:
            return None
        if (options.provider_raw.get(self.name) or {}).get("system_as_blocks"):
            return blocks
        if any(len(b) > 2 for b in blocks):
            return blocks  # cache_control or other block fields need the block form
        return "\n\n".join(b["text"] for b in blocks)

    def messages_to_wire(self, messages: list[Message]) -> list[WireBody]:
        out: list[WireBody] = []
        for m in messages:
            role = m.get("role")
            if role == "system":
                continue
            if role == "tool":
                content = self.tool_message_to_wire(m)
                wire_role = "user"
                # parallel tool results share one user message (consecutive tool messages)
                if content and out and out[-1]["role"] == "user" and out[-1].get("_tools"):
                    out[-1]["content"].extend(content)
                    continue
            else:
                content = [
                    w for i, b in enumerate(m.get("content", [])) if (w := self.block_to_wire(m, i, b)) is not None
                ]
                wire_role = "assistant" if role == "assistant" else "user"
            if not content:
                continue  # every block was dropped (and logged): never send an empty message
            wire: WireBody = {"role": wire_role, "content": content}
            if role == "tool":
                wire["_tools"] = True
            out.append(wire)
        for w in out:
            w.pop("_tools", None)
        return out

    def block_to_wire(self, message: Message, index: int, block: Block) -> Block | None:
        t = block.get("type")
        extra = self.own_raw(message).get("blocks", {}).get(str(index), {})
        sid = str(message.get("session_id", ""))
        if t == "text":
            return {"type": "text", "text": block["text"], **extra}
        if t == "image":
            return self.image_to_wire(message, index, block, extra)
        if t == "tool_use":
            pid = self.tool_id_map(sid).provider_for(block["id"])
            return {
                "type": "tool_use",
                "id": pid,
                "name": block["name"],
                "input": block["input"],
                **extra,
            }
        if t == "thinking":
            why = self.foreign_reason(message, "thinking")
            if why is None and not block.get("signature"):
                why = "unsigned thinking block (the API requires the signature it issued)"
            if why:
                self.drop(message, index, "thinking", why)
                return None
            return {
                "type": "thinking",
                "thinking": block["text"],
                "signature": block["signature"],
                **extra,
            }
        if t == "redacted_thinking":
            why = self.foreign_reason(message, "redacted_thinking")
            if why:
                self.drop(message, index, "redacted_thinking", why)
                return None
            return {"type": "redacted_thinking", "data": block["data"], **extra}
        if isinstance(t, str) and t.startswith(f"{self.name}:") and isinstance(block.get("raw"), dict):
            return dict(block["raw"])  # a native block this adapter parsed earlier (document, server tools)
        self.drop(
            message,
            index,
            str(t),
            f"no Anthropic Messages equivalent for a {t} block in a {message.get('role')} message",
        )
        return None

    def foreign_reason(self, message: Message, what: str) -> str | None:
        provider = (message.get("metadata") or {}).get("provider")
        if provider != self.provider:
            who = provider or "an unknown provider"
            return f"{what} issued by {who}; Anthropic rejects signatures it did not issue"
        return None

    def url_media_type(self, session_id: str, url: str) -> str:
        """The media type a URL image had when this adapter rendered it in this session
        (the wire drops it), else the documented placeholder: never a guess from the URL."""
        return self._url_media.get((session_id, url), URL_IMAGE_MEDIA_TYPE)

    def image_to_wire(self, message: Message, index: int, block: Block, extra: Mapping[str, Any]) -> Block | None:
        source, media = dict(block["source"]), str(block["media_type"]).lower()  # IANA types are case-insensitive
        if source["kind"] == "url":
            data = parse_data_url(str(source["data"]))
            if data is not None:  # inline bytes in a data: URL go as base64 (the API fetches only http(s))
                source, media = {"kind": "base64", "data": data[1]}, data[0]
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
            self._url_media[(str(message.get("session_id", "")), str(source["data"]))] = media
            return {"type": "image", "source": {"type": "url", "url": source["data"]}, **extra}
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": media, "data": source["data"]},
            **extra,
        }

    def tool_message_to_wire(self, message: Message) -> list[Block]:
        out: list[Block] = []
        sid = str(message.get("session_id", ""))
        extras = self.own_raw(message).get("blocks", {})
        for i, block in enumerate(message.get("content", [])):
            if block.get("type") != "tool_result":
                self.drop(
                    message,
                    i,
                    str(block.get("type")),
                    "a tool message carries tool_result blocks only",
                )
                continue
            inner: list[Block] = []
            for j, b in enumerate(block.get("content", [])):
                if b.get("type") == "text":
                    inner.append({"type": "text", "text": b["text"]})
                elif b.get("type") == "image":
                    img = self.image_to_wire(message, i, b, {})
                    if img is not None:
                        inner.append(img)
                elif str(b.get("type")).startswith(f"{self.name}:") and isinstance(b.get("raw"), dict):
                    inner.append(dict(b["raw"]))
                else:
                    self.drop(
                        message,
                        i,
                        str(b.get("type")),
                        f"tool_result content {j} has no Anthropic equivalent",
                    )
            wire: Block = {
                "type": "tool_result",
                "tool_use_id": self.tool_id_map(sid).provider_for(block["tool_use_id"]),
                "content": inner,
            }
            if block.get("is_error"):
                wire["is_error"] = True
            wire.update(extras.get(str(i), {}))
            out.append(wire)
        return out

    def tool_to_wire(self, tool: ToolDefinition, options: AdapterOptions) -> WireBody:
        extra = tool_extra(options.provider_raw.get(self.name) or {}, tool["name"])
        return {
            "name": tool["name"],
            "description": tool["description"],
            "input_schema": tool["input_schema"],
            **extra,
        }

    # -- wire -> canonical (responses) --------------------------------------------------

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or (isinstance(body, dict) and body.get("type") == "error"):
            raise self.classify_error(resp.status if resp.status >= 400 else 500, body, resp.headers)
        if not isinstance(body, dict) or not isinstance(body.get("content"), list):
            raise WireFormatError("Anthropic response has no `content` list", provider_status=resp.status)
        sid = request_context.session_id
        content: list[Block] = []
        extras: dict[str, Any] = {}
        for block in body["content"]:
            canon, extra = self.block_from_wire(sid, block)
            if canon is None:
                continue
            if extra:
                extras[str(len(content))] = extra
            content.append(canon)
        raw: dict[str, Any] = {k: body[k] for k in ("id", "stop_reason", "stop_sequence") if body.get(k) is not None}
        if extras:
            raw["blocks"] = extras
        usage = self.usage_from_wire(body.get("usage"))
        return self.assemble(
            request_context,
            content,
            wire_model=body.get("model"),
            token_usage=usage,
            provider_raw=raw,
        )

    def block_from_wire(self, session_id: str, block: Any) -> tuple[Block | None, dict[str, Any]]:
        """One wire block -> (canonical block, fields to keep in provider_raw)."""
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise WireFormatError(f"content block is not an object with a type: {block!r:.80}")
        t = block["type"]
        extra = {k: v for k, v in block.items() if k not in _CANONICAL_KEYS.get(t, block.keys())}
        if t == "text":
            return {"type": "text", "text": str(block.get("text", ""))}, extra
        if t == "thinking":
            return {
                "type": "thinking",
                "text": str(block.get("thinking", "")),
                "signature": block.get("signature") or None,
            }, extra
        if t == "redacted_thinking":
            return {"type": "redacted_thinking", "data": str(block.get("data", ""))}, extra
        if t == "tool_use":
            inp = block.get("input")
            if not isinstance(inp, dict):  # never invent {} for input the API documents as an object
                raise WireFormatError(f"tool_use {block.get('id')!r} input is not a JSON object: {inp!r:.80}")
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise WireFormatError(f"tool_use block without a string id and name: {block!r:.80}")
            cid = self.tool_id_map(session_id).canonical_for(block["id"])
            return {"type": "tool_use", "id": cid, "name": block["name"], "input": inp}, extra
        if t == "image":
            src = block.get("source") or {}
            if src.get("type") == "base64":
                return {
                    "type": "image",
                    "source": {"kind": "base64", "data": src["data"]},
                    "media_type": str(src["media_type"]).lower(),
                }, extra
            if src.get("type") == "url":
                url = str(src["url"])
                data = parse_data_url(url)
                if data is not None:  # a data: URL is inline bytes, whatever field carried it
                    return {
                        "type": "image",
                        "source": {"kind": "base64", "data": data[1]},
                        "media_type": data[0],
                    }, extra
                return {
                    "type": "image",
                    "source": {"kind": "url", "data": url},
                    "media_type": self.url_media_type(session_id, url),
                }, extra
        # documents, server tools, search results: kept whole as a namespaced unknown block (§10.3)
        return {"type": f"{self.name}:{t}", "raw": block}, {}

    def stop_reason_of(self, raw: Any) -> str:
        """A provider stop_reason -> canonical (the wire record's table); an undocumented value
        reads as end_turn with a WARN line, since the docs say new values may be added."""
        return stop_reason(self.log, self.name, _STOP, raw, "stop_reason")

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        """Anthropic usage -> TokenUsage (contract §7.2): cache_read -> cached_input_tokens."""
        if not isinstance(usage, dict):
            return None
        return {
            "input_tokens": int(usage.get("input_tokens") or 0),
            "output_tokens": int(usage.get("output_tokens") or 0),
            "cached_input_tokens": int(usage.get("cache_read_input_tokens") or 0),
            "cache_creation_input_tokens": int(usage.get("cache_creation_input_tokens") or 0),
        }

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        """Adapter contract §6.2-§6.3: the most specific subclass from the HTTP status refined by
        Anthropic's `error.type`, with `retryable` by class, the provider status, the request id
        (the body's `request_id` or the `request-id` header) and a `retry-after` hint."""
        err = body.get("error") if isinstance(body, dict) else None
        etype = err.get("type") if isinstance(err, dict) else None
        msg = str(err.get("message")) if isinstance(err, dict) else str(body)[:200]
        hint = _ERROR_HINT.get(str(etype))
        if etype == "invalid_request_error" and re.search(r"context|tokens exceeds|too long", msg, re.I):
            hint = "context_overflow"
        exc = error_for_status(status, f"{etype or 'error'}: {msg}", hint=hint)
        h = {str(k).lower(): v for k, v in (headers or {}).items()}
        rid = body.get("request_id") if isinstance(body, dict) else None
        finish_error(exc, status, rid or header(h, "request-id"), header(h, "retry-after"))
        return exc

    # -- streaming --------------------------------------------------------------------------

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        """SSE bytes -> canonical events (contract §5.1 table, streaming-protocol §5.3).

        The canonical `content_block_index` is the block's position in `final_content`, so it
        never decreases whatever the provider sends. A thinking block's signature arrives as
        `signature_delta`; it is emitted on a final `thinking_delta` at the block's stop.
        """
        st = _AnthropicStream(self, context)
        return self.cancellable(context, st.run(chunks), lambda: st.content)

    # -- wire -> canonical (requests) -----------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        """A recorded request body -> canonical messages, tools and options.

        History messages get fresh ids and timestamps (the wire has none), assistant turns
        are attributed to this provider and the request's model, and tool ids go through the
        session map so rendering back restores the provider's ids.
        """
        sid = session_id or "sess_" + new_ulid().lower()
        model = f"{self.provider}:{body.get('model', 'unknown')}"
        out: list[Message] = []
        system = body.get("system")
        opt_raw: dict[str, Any] = {}
        if isinstance(system, str):
            out.append(_message(sid, "system", [{"type": "text", "text": system}], {}))
        elif isinstance(system, list):
            sysx = {str(i): {k: v for k, v in b.items() if k not in ("type", "text")} for i, b in enumerate(system)}
            meta = (
                {"provider_raw": {self.name: {"blocks": {k: v for k, v in sysx.items() if v}}}}
                if any(sysx.values())
                else {}
            )
            out.append(
                _message(
                    sid,
                    "system",
                    [{"type": "text", "text": str(b.get("text", ""))} for b in system],
                    meta,
                )
            )
            opt_raw["system_as_blocks"] = True
        for wm in body.get("messages", []):
            role, content = wm.get("role"), wm.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
            if role == "assistant":
                canon: list[Block] = []
                extras: dict[str, Any] = {}
                for b in blocks:
                    c, extra = self.block_from_wire(sid, b)
                    if c is not None:
                        if extra:
                            extras[str(len(canon))] = extra
                        canon.append(c)
                ameta: dict[str, Any] = {"model": model, "provider": self.provider}
                if extras:
                    ameta["provider_raw"] = {self.name: {"blocks": extras}}
                out.append(_message(sid, "assistant", canon, ameta))
                continue
            pending: list[Block] = []
            pending_extra: dict[str, Any] = {}
            for b in blocks:
                if b.get("type") == "tool_result":
                    if pending:
                        out.append(_user(sid, pending, pending_extra, self.name))
                        pending, pending_extra = [], {}
                    out.append(self.tool_result_from_wire(sid, b))
                else:
                    c, extra = self.block_from_wire(sid, b)
                    if c is not None:
                        if extra:
                            pending_extra[str(len(pending))] = extra
                        pending.append(c)
            if pending:
                out.append(_user(sid, pending, pending_extra, self.name))
        tools: list[ToolDefinition] = []
        native: list[Mapping[str, Any]] = []
        tool_extras: dict[str, Any] = {}
        slots: list[str] = []
        for t in body.get("tools", []) or []:
            slots.append("s" if "input_schema" in t and t.get("type") in (None, "custom") else "n")
            if slots[-1] == "s":
                tools.append(
                    {
                        "name": t["name"],
                        "description": t.get("description", ""),
                        "input_schema": t["input_schema"],
                        "side_effects": "execute",
                    }
                )
                extra = {k: v for k, v in t.items() if k not in ("name", "description", "input_schema")}
                if extra:
                    tool_extras[t["name"]] = extra
            else:
                native.append(t)
        if tool_extras:
            opt_raw["tool_extras"] = tool_extras
        layout = tool_layout(slots)
        if layout is not None:
            opt_raw["tool_layout"] = layout
        known = {
            "model",
            "max_tokens",
            "system",
            "messages",
            "tools",
            "stop_sequences",
            "temperature",
            "stream",
        }
        options = AdapterOptions(
            model=model,
            max_output_tokens=body.get("max_tokens"),
            temperature=body.get("temperature"),
            stop_sequences=tuple(body.get("stop_sequences") or ()),
            stream=bool(body.get("stream")),
            extra={k: v for k, v in body.items() if k not in known},
            provider_tools=tuple(native),
            provider_raw={self.name: opt_raw} if opt_raw else {},
        )
        return ParsedRequest(out, tools, options)

    def tool_result_from_wire(self, sid: str, block: Block) -> Message:
        cid = self.tool_id_map(sid).canonical_for(str(block["tool_use_id"]))
        raw = block.get("content", "")
        inner: list[Block] = []
        for b in [{"type": "text", "text": raw}] if isinstance(raw, str) else raw:
            c, _ = self.block_from_wire(sid, b)
            if c is not None:
                inner.append(c)
        result: Block = {"type": "tool_result", "tool_use_id": cid, "content": inner}
        if block.get("is_error"):
            result["is_error"] = True
        extra = {k: v for k, v in block.items() if k not in _CANONICAL_KEYS["tool_result"]}
        meta: dict[str, Any] = {"parent_tool_use_id": cid}
        if extra:
            meta["provider_raw"] = {self.name: {"blocks": {"0": extra}}}
        return _message(sid, "tool", [result], meta)

    # -- estimates ------------------------------------------------------------------------

    # docs.anthropic.com "Tool use pricing and tokens": with `tools` the API adds a system prompt
    # of its own, whose size the docs give per model (tool_choice auto): Claude 3 Opus 530,
    # Claude 3 Sonnet 159, Claude 3 Haiku 264. Claude 3.5 Haiku counts as Claude 3 Haiku does
    # (ruby_llm's recording of one small tool request: 350 input tokens for about 72 of
    # content). Any other model (or none given): 390, calibrated on the newer models'
    # recordings (their prompt and the tools' framing).
    TOOL_PROMPTS: ClassVar[tuple[tuple[str, int], ...]] = (
        ("claude-3-opus", 530),
        ("claude-3-sonnet", 159),
        ("claude-3-haiku", 264),
        ("claude-3-5-haiku", 264),
    )
    TOOL_PROMPT_DEFAULT = 390
    # the same table's `any` / `tool` rows (a request that forces a tool call): Claude 3 Opus
    # 281 tokens, Claude 3 Sonnet 235, Claude 3 Haiku 340, Claude Haiku 3.5 340
    _TOOL_PROMPTS_FORCED: ClassVar[tuple[tuple[str, int], ...]] = (
        ("claude-3-opus", 281),
        ("claude-3-sonnet", 235),
        ("claude-3-haiku", 340),
        ("claude-3-5-haiku", 340),
    )

    def estimate_input_tokens(
        self,
        messages: list[Message],
        tools: list[ToolDefinition],
        *,
        model: str | None = None,
        tool_choice: Any = None,
    ) -> int:
        """Heuristic (see conformance.adapters.estimate). Images: (w*h)/750 after the API's
        resize to a 1568 px long edge; tools add the hidden tool-use system prompt, its size
        the model's (`TOOL_PROMPTS`, when `model` is given: the suite passes the request's)
        and the request's `tool_choice`'s (`any` and `tool` have their own sizes, when given:
        the suite passes the request's)."""
        n = 0
        last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        for i, m in enumerate(messages):
            n += 4
            for b in m.get("content", []):
                if b.get("type") == "thinking" and i == last_assistant:
                    # the turn being continued with tool results keeps its thinking in context
                    n += text_tokens(b.get("text", ""))
                n += self._block_tokens(b)
        if tools:
            name = (model or "").lower()
            forced = isinstance(tool_choice, Mapping) and tool_choice.get("type") in ("any", "tool")
            table = self._TOOL_PROMPTS_FORCED if forced else self.TOOL_PROMPTS
            prompt = next((c for family, c in self.TOOL_PROMPTS if family in name), self.TOOL_PROMPT_DEFAULT)
            prompt = next((c for family, c in table if family in name), prompt)
            n += prompt + sum(json_tokens({k: t[k] for k in ("name", "description", "input_schema")}) for t in tools)
        return n

    def _block_tokens(self, b: Block) -> int:
        t = b.get("type")
        if t == "text":
            return text_tokens(b["text"])
        if t == "thinking":
            return 0  # earlier turns' thinking is stripped from the context window by the API
        if t == "tool_use":
            return 12 + json_tokens(b["input"])
        if t == "tool_result":
            return 8 + sum(self._block_tokens(x) for x in b.get("content", []))
        if t == "image":
            size = image_block_size(b)
            if size is None:
                return 1200
            w, h = size
            scale = min(1.0, 1568 / max(w, h, 1))
            return max(1, int(w * scale) * int(h * scale) // 750)
        return 0


class _AnthropicStream(StreamState[AnthropicAdapter]):
    """State of one Anthropic SSE stream being translated.

    Strict about the documented event flow ("Streaming messages"): one message_start first;
    content blocks started once at a non-negative index, then deltas of their own kind, then
    a stop; message_delta; message_stop last. Anything else (an event after message_stop, a
    second message_start, an unknown delta type, a negative index, tool input that is not a
    JSON object, a stream that ends before message_stop) is a `WireFormatError` naming the
    event's position, raised after `message_complete` with `stop_reason: error` (contract §6.5).
    Unknown *event* types are skipped: the docs say new ones may be added.
    """

    def __init__(self, adapter: AnthropicAdapter, ctx: RequestContext) -> None:
        super().__init__(adapter, ctx)
        self.by_wire_index: dict[int, int] = {}
        self.stopped: set[int] = set()
        self.partial: dict[int, str] = {}
        self.usage: dict[str, int] | None = None
        self.stop_reason = "end_turn"
        self.stop_seen = False  # message_delta carried a stop_reason
        self.started = self.done = False
        self.position = 0  # 1-based number of the SSE event being handled
        # tool_use blocks stopped with input that is no JSON object, held until the next event
        # says whether the token limit cut them (`cut_calls`): block index -> (its text, the
        # position of its content_block_stop)
        self.cut: dict[int, tuple[str, int]] = {}

    def run(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        for ev in sse_events(chunks):
            self.position += 1
            if not ev.data.strip():
                continue
            try:
                data = json_value(ev.data)
            except ValueError:
                yield from self.fail(f"SSE data is not JSON: {ev.data[:80]!r}")
                return
            if not isinstance(data, dict) or not isinstance(data.get("type"), str):
                yield from self.fail("SSE data is not an event object with a `type`")
                return
            if data["type"] == "ping":
                continue
            if self.done:
                raise self.error(f"{data['type']} after message_stop")
            try:
                yield from self.cut_calls(data)
                yield from self.handle(data)
            except _Malformed as exc:
                yield from self.fail(str(exc))
                return
        if not self.done:
            self.position += 1
            if self.cut:  # the stream ended right after a call whose input is no JSON object
                yield from self.fail(self.cut_error())
                return
            yield from self.ended_early()

    def ended_early(self) -> Iterator[StreamEvent]:
        """A stream without message_stop. After message_delta's stop_reason (every block
        stopped) nothing is lost but the end marker: read as complete with a WARN line; else
        it was cut (contract §6.5's partial message, then StreamCutError)."""
        open_blocks = sorted(set(self.by_wire_index) - {i for i, k in self.by_wire_index.items() if k in self.stopped})
        if self.stop_seen and not open_blocks:
            self.adapter.log.warning(
                "%s: stream ended after message_delta's stop_reason without message_stop",
                self.adapter.name,
                extra={
                    "event": "message_stop_missing",
                    "adapter": self.adapter.name,
                    "session_id": self.ctx.session_id,
                },
            )
            self.done = True
            yield self.complete(self.stop_reason)
            return
        lacks = f"with block(s) {open_blocks} open" if open_blocks else "without message_delta's stop_reason"
        yield from self.start_implicitly()
        yield from self.fail(f"stream ended before message_stop, {lacks}: cut before its end", StreamCutError)

    def error(self, what: str, cls: type[WireFormatError] = WireFormatError) -> WireFormatError:
        return cls(f"Anthropic stream event {self.position}: {what}")

    def fail(self, what: str, cls: type[WireFormatError] = WireFormatError) -> Iterator[StreamEvent]:
        """Contract §6.5: close with message_complete(stop_reason=error), then raise."""
        if self.started and not self.done:
            self.done = True
            yield overrides.call(self.complete, "error", final=False)
        raise self.error(what, cls)

    def index(self, data: Mapping[str, Any]) -> int:
        i = data.get("index")
        if not isinstance(i, int) or isinstance(i, bool) or i < 0:
            raise _Malformed(f"{data.get('type')} has index {i!r}, not a non-negative integer")
        return i

    def open_block(self, data: Mapping[str, Any]) -> int:
        i = self.index(data)
        k = self.by_wire_index.get(i)
        if k is None:
            raise _Malformed(f"{data.get('type')} for block {i}, which never started")
        if k in self.stopped:
            raise _Malformed(f"{data.get('type')} for block {i}, which already stopped")
        return k

    def handle(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        t = data["type"]
        mid = self.mid
        if t == "message_start":
            if self.started:
                raise _Malformed("a second message_start")
            msg = data.get("message")
            if not isinstance(msg, dict):
                raise _Malformed("message_start has no `message` object")
            if msg.get("model"):
                self.model = f"{self.adapter.provider}:{msg['model']}"
            self.usage = self.adapter.usage_from_wire(msg.get("usage"))
            self.started = True
            yield {"type": "message_start", "message_id": mid, "role": "assistant", "model": self.model}
            return
        if t == "error":
            err = self.adapter.classify_error(500, data)
            yield from self.start_implicitly()
            yield {
                "type": "error",
                "message_id": mid,
                "error_class": err.error_class,
                "message": str(err),
                "provider_status": None,
            }
            self.done = True
            yield overrides.call(self.complete, "error", final=False)
            raise err
        if t not in _EVENTS:
            return  # a newer event type: the docs ask clients to tolerate them
        if not self.started:
            raise _Malformed(f"{t} before message_start")
        if t == "content_block_start":
            i = self.index(data)
            if i in self.by_wire_index:
                raise _Malformed(f"content_block_start for block {i}, which already started")
            block = data.get("content_block")
            if not isinstance(block, dict):
                raise _Malformed("content_block_start has no `content_block` object")
            canon, _ = self.adapter.block_from_wire(self.ctx.session_id, block)
            if canon is None:
                raise _Malformed(f"content_block_start of an unreadable {block.get('type')} block")
            k = len(self.content)
            self.by_wire_index[i] = k
            self.content.append(canon)
            yield from self.block_started(k, canon)
        elif t == "content_block_delta":
            k = self.open_block(data)
            delta = data.get("delta")
            if not isinstance(delta, dict):
                raise _Malformed("content_block_delta has no `delta` object")
            yield from self.delta(k, delta)
        elif t == "content_block_stop":
            k = self.open_block(data)
            self.stopped.add(k)
            yield from self.stop(k)
        elif t == "message_delta":
            delta = data.get("delta") or {}
            if delta.get("stop_reason"):
                self.stop_reason = self.adapter.stop_reason_of(delta["stop_reason"])
                self.stop_seen = True
            u = data.get("usage")
            if isinstance(u, dict):
                # message_delta usage is cumulative and may repeat or omit the input counts
                merged = {**_raw_usage(self.usage), **{k: v for k, v in u.items() if v is not None}}
                self.usage = self.adapter.usage_from_wire(merged)
                yield {"type": "usage_update", "message_id": mid, "usage": dict(self.usage or {})}
        elif t == "message_stop":
            unclosed = sorted(set(self.by_wire_index) - {i for i, k in self.by_wire_index.items() if k in self.stopped})
            if unclosed:
                raise _Malformed(f"message_stop with block(s) {unclosed} never stopped")
            self.done = True
            yield self.complete(self.stop_reason)

    def start_implicitly(self) -> Iterator[StreamEvent]:
        if not self.started:
            self.started = True
            yield {"type": "message_start", "message_id": self.mid, "role": "assistant", "model": self.model}

    def block_started(self, k: int, canon: Block) -> Iterator[StreamEvent]:
        mid = self.mid
        if canon["type"] == "tool_use":
            self.partial[k] = ""
            yield {
                "type": "tool_use_start",
                "message_id": mid,
                "content_block_index": k,
                "tool_use_id": canon["id"],
                "tool_name": canon["name"],
            }
        elif canon["type"] == "text" and canon["text"]:
            yield {"type": "text_delta", "message_id": mid, "content_block_index": k, "text": canon["text"]}
        elif canon["type"] == "thinking":
            canon["signature"] = canon.get("signature") or None
            if canon["text"]:
                yield {
                    "type": "thinking_delta",
                    "message_id": mid,
                    "content_block_index": k,
                    "text": canon["text"],
                    "signature": None,
                }
        elif canon["type"].startswith(f"{self.adapter.name}:"):
            self.partial[k] = ""

    def delta(self, k: int, delta: dict[str, Any]) -> Iterator[StreamEvent]:
        block = self.content[k]
        bt, dt = block["type"], delta.get("type")
        field = _DELTA_FIELD.get(str(dt))
        if field is None:
            raise _Malformed(f"unknown delta type {dt!r}")
        raw_value = delta.get(field)
        if dt == "citations_delta":
            raw_value = ""  # a citation object: not streamed as text
        if not isinstance(raw_value, str):
            raise _Malformed(f"{dt} without a string `{field}`")
        value: str = raw_value
        mid = self.mid
        native = bt.startswith(f"{self.adapter.name}:")
        if dt == "text_delta" and bt == "text":
            block["text"] += value
            yield {"type": "text_delta", "message_id": mid, "content_block_index": k, "text": value}
        elif dt == "thinking_delta" and bt == "thinking":
            block["text"] += value
            yield {
                "type": "thinking_delta",
                "message_id": mid,
                "content_block_index": k,
                "text": value,
                "signature": None,
            }
        elif dt == "signature_delta" and bt == "thinking":
            block["signature"] = (block.get("signature") or "") + value
        elif dt == "input_json_delta" and (bt == "tool_use" or native):
            self.partial[k] = self.partial.get(k, "") + value
            if bt == "tool_use":
                yield {
                    "type": "tool_use_input_delta",
                    "message_id": mid,
                    "content_block_index": k,
                    "tool_use_id": block["id"],
                    "partial_json": value,  # the literal fragment (contract §5.4)
                }
        elif dt == "citations_delta" and bt == "text":
            pass  # no canonical field or event; non-streaming parses keep them in provider_raw
        elif native:
            pass  # a server-tool or other native block: kept whole in `raw`
        else:
            raise _Malformed(f"{dt} for a {bt} block")

    def stop(self, k: int) -> Iterator[StreamEvent]:
        block = self.content[k]
        if block["type"] == "tool_use" and k in self.partial:
            text = self.partial[k]
            parsed = json_object(text) if text.strip() else dict(block["input"])
            if parsed is None:
                self.cut[k] = (text, self.position)  # the next event says whether the limit cut it
                return
            del self.partial[k]
            block["input"] = parsed
            yield {
                "type": "tool_use_end",
                "message_id": self.mid,
                "content_block_index": k,
                "tool_use_id": block["id"],
                "final_input": block["input"],
            }
        elif block["type"] == "thinking":
            # the signature rides only on the block's final delta (streaming-protocol §5.3)
            yield {
                "type": "thinking_delta",
                "message_id": self.mid,
                "content_block_index": k,
                "text": "",
                "signature": block.get("signature"),
            }
        elif block["type"].startswith(f"{self.adapter.name}:") and self.partial.get(k):
            text = self.partial.pop(k)
            parsed = json_object(text)
            if parsed is None:
                raise _Malformed(f"{block['type']} input is not a JSON object: {text[:80]!r}")
            block["raw"] = {**block["raw"], "input": parsed}

    def cut_calls(self, data: Mapping[str, Any]) -> Iterator[StreamEvent]:
        """Held tool_use blocks (`self.cut`) met by the next event: a message_delta whose
        stop_reason is `max_tokens` ("the response reached the max_tokens limit": the docs'
        event flow stops the open block, then message_delta) says the token limit cut their
        input, which reads as `{}`, as contract §9.4 closes a call whose JSON did not
        complete ("final_input = {} (nothing parses cleanly from partial JSON)"), named in a
        WARN line (event `tool_input_cut`); any other event makes it the malformed input it
        looked like, located at its content_block_stop."""
        if not self.cut:
            return
        delta = data.get("delta") if data.get("type") == "message_delta" else None
        if not (isinstance(delta, dict) and delta.get("stop_reason") == "max_tokens"):
            raise _Malformed(self.cut_error())
        for k, (text, _at) in sorted(self.cut.items()):
            block = self.content[k]
            block["input"] = cut_input(
                self.adapter.log, self.adapter.name, block["id"], text, "stop_reason max_tokens", "input"
            )
            del self.partial[k]
            yield {
                "type": "tool_use_end",
                "message_id": self.mid,
                "content_block_index": k,
                "tool_use_id": block["id"],
                "final_input": {},
            }
        self.cut.clear()

    def cut_error(self) -> str:
        """The first held block's malformed input, said as at its content_block_stop."""
        k, (text, at) = min(self.cut.items())
        self.position = at  # the event the error names
        return f"tool_use {self.content[k]['id']} input is not a JSON object: {text[:80]!r}"

    def complete(self, stop_reason: str, *, final: bool = True) -> StreamEvent:
        content = [dict(b) for b in self.content]
        if not final:
            # a failed stream: tool calls whose input never completed are not invented as {}
            content = [b for k, b in enumerate(content) if not (b["type"] == "tool_use" and k in self.partial)]
        usage = self.usage or estimated_usage(self.adapter.name, self.adapter.log, self.ctx, self.content)
        return {
            "type": "message_complete",
            "message_id": self.mid,
            "stop_reason": stop_reason,
            "final_content": content,
            "usage": dict(usage) if usage else None,
        }


class _Malformed(Exception):
    """A stream event that breaks the documented flow (becomes a located WireFormatError)."""


_EVENTS = frozenset(
    {"content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
)
# documented delta types -> the field carrying their payload
_DELTA_FIELD = {
    "text_delta": "text",
    "thinking_delta": "thinking",
    "signature_delta": "signature",
    "input_json_delta": "partial_json",
    "citations_delta": "citation",
}


def _raw_usage(usage: Mapping[str, int] | None) -> dict[str, int]:
    """TokenUsage back to Anthropic's names, so a message_delta can be merged over it."""
    if not usage:
        return {}
    return {
        "input_tokens": usage.get("input_tokens", 0),
        "output_tokens": usage.get("output_tokens", 0),
        "cache_read_input_tokens": usage.get("cached_input_tokens", 0),
        "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
    }


_message = request_message  # the shared reader-side constructor (base.request_message)


def _user(sid: str, blocks: list[Block], extras: dict[str, Any], name: str) -> Message:
    return _message(sid, "user", blocks, {"provider_raw": {name: {"blocks": extras}}} if extras else {})
