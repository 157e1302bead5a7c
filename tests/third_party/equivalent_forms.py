"""Third-party-style adapters that render forms their API documents as equal to the
reference adapter's, and nothing else differently (issue 25 item 2).

- `UrlSafeGeminiAdapter`: base64 payloads (`inlineData.data`, `thoughtSignature`) in the
  URL-safe alphabet without padding, as Google's SDK writes them (proto3 JSON accepts both
  alphabets, padded or not), object keys in reverse order, integral floats spelled `1.0`.
- `EmptyContentChatAdapter`: an assistant turn with tool_calls carries `content: ""` (the
  reference sends null; the Chat docs make content optional there), keys in reverse order.

`turnspec conform` passes them on TC802, TC606, TC405 and TC901.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import Any, ClassVar

from conformance.adapters.gemini import GeminiAdapter
from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.protocol import (
    AdapterOptions,
    Message,
    RequestContext,
    ToolDefinition,
    WireBody,
    WireRequest,
    WireResponse,
)

BASE64_KEYS = ("data", "thoughtSignature")


def url_safe(value: str) -> str:
    """The same bytes in the URL-safe alphabet, unpadded (the value itself if it is not base64)."""
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def reordered(value: Any, parent: str = "", *, floats: bool = False) -> Any:
    """Keys in reverse order at every level, integers spelled as floats (`1.0`) if `floats`; base64
    fields re-spelled URL-safe under Gemini's `inlineData` and on any part's `thoughtSignature`."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k in reversed(list(value)):
            v = value[k]
            b64 = k == "thoughtSignature" or (k == "data" and parent in ("inlineData", "inline_data"))
            out[k] = url_safe(v) if b64 and isinstance(v, str) else reordered(v, k, floats=floats)
        return out
    if isinstance(value, list):
        return [reordered(v, parent, floats=floats) for v in value]
    if floats and isinstance(value, int) and not isinstance(value, bool):
        return float(value)  # `1` spelled `1.0` (proto3 JSON: "Exponent notation ... is also accepted")
    return value


class UrlSafeGeminiAdapter(GeminiAdapter):
    """The reference Gemini adapter, writing base64 URL-safe and unpadded, keys reversed; a
    non-streamed response is read after a round trip through an SDK-style model that holds
    bytes and writes them URL-safe (so its thoughtSignatures reach canonical form in that
    alphabet, streamed ones as the wire spelled them)."""

    name: ClassVar[str] = "gemini-urlsafe"

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        if isinstance(response, WireResponse):
            response = WireResponse(reordered(response.body), response.status)
        else:
            response = reordered(response)
        return super().from_wire_response(response, request_context)

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        return WireRequest(req.method, req.path, req.headers, reordered(req.body, floats=True))


class EmptyContentChatAdapter(OpenAIChatAdapter):
    """The reference Chat Completions adapter, `content: ""` beside tool_calls, keys reversed."""

    name: ClassVar[str] = "openai-chat-empty-content"

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        body = dict(req.body)
        body["messages"] = [
            {**m, "content": ""} if m.get("role") == "assistant" and m.get("tool_calls") and not m.get("content") else m
            for m in body.get("messages") or []
        ]
        return WireRequest(req.method, req.path, req.headers, reordered(body))
