"""The anthropic adapter for a cloud platform that serves Anthropic's Messages body under
its own URL: Claude on Google Vertex AI (`vertex_anthropic`) and on Amazon Bedrock
InvokeModel (`bedrock_anthropic`).

Each such platform, as its documentation says, takes the Messages body with the model and
the stream choice in the URL (its record's `Endpoint`: `path`, `stream_path`, `ModelIn`)
and the API version as an `anthropic_version` body field of its own, and answers with
Anthropic's response. So a subclass names its record and its version; what differs beyond
that (Bedrock's `stream` field, its event stream and error names) it overrides itself.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from ..wire import endpoint
from ..wire.api import WireApi
from .anthropic import AnthropicAdapter
from .base import AdapterOptions, Message, ParsedRequest, ToolDefinition, WireBody, WireRequest

VERSION_FIELD = "anthropic_version"


def platform_path(api: WireApi, model: str, *, stream: bool) -> str:
    """The record's endpoint path for `model` (spelled as its `ModelIn` says) and the stream choice."""
    ep = api.endpoint
    if ep is None or ep.stream_path is None or ep.model.where != "path":
        raise ValueError(f"{api.name}: its record names no model-in-path endpoint with a stream path")
    template = ep.stream_path if stream else ep.path
    return template.replace("{model}", endpoint.spelled(model, ep.model.encoding))


class HostedAnthropicAdapter(AnthropicAdapter):
    """Canonical <-> the Messages body on a platform whose URL names the model and the stream."""

    record: ClassVar[WireApi]  # the platform's wire record (its endpoint)
    anthropic_version: ClassVar[str]  # the body's `anthropic_version`, as the platform's docs fix it
    # whether a streamed request keeps `stream: true` in its body (Vertex AI, as Anthropic's
    # SDKs send it) or the URL alone asks for the stream (Bedrock refuses the field)
    stream_in_body: ClassVar[bool] = True

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        messages_api = super().to_wire(messages, tools, options)
        dropped = {"model", VERSION_FIELD} | (set() if self.stream_in_body else {"stream"})
        body: WireBody = {VERSION_FIELD: self.anthropic_version}
        body.update((k, v) for k, v in messages_api.body.items() if k not in dropped)
        headers = {k: v for k, v in messages_api.headers.items() if k.lower() != "anthropic-version"}
        return WireRequest("POST", platform_path(self.record, options.wire_model, stream=options.stream), headers, body)

    def from_wire_request(
        self, body: WireBody, *, session_id: str | None = None, url: str | None = None
    ) -> ParsedRequest:
        """A recorded request -> canonical messages, tools and options. The model and the
        stream choice are in the URL: pass `url` to recover them (without it the model is
        `<provider>:unknown` and the stream the body's `stream`)."""
        model = endpoint.model_of(self.record, url, None) if url else None
        as_messages: dict[str, Any] = {k: v for k, v in body.items() if k != VERSION_FIELD}
        as_messages["model"] = model or "unknown"
        parsed = super().from_wire_request(as_messages, session_id=session_id)
        stream = self.record.is_streaming(url, body) if url else parsed.options.stream
        return ParsedRequest(parsed.messages, parsed.tools, dataclasses.replace(parsed.options, stream=stream))
