"""Claude on Google Vertex AI: an opt-in variant of the anthropic adapter.

Not registered by default (the reference adapters speak the providers' own APIs); use it as
`conformance.adapters.vertex_anthropic:VertexAnthropicAdapter` (for example `turnspec
conform conformance.adapters.vertex_anthropic:VertexAnthropicAdapter`, whose own cassettes
are `cassettes/vertex-anthropic/`). The wire facts are the record
`conformance.wire.vertex_anthropic_messages.VERTEX_ANTHROPIC_MESSAGES`, written from
Anthropic's "Claude on Vertex AI" page and Google's "Request predictions with Claude
models"; everything else is the anthropic adapter's, since the body, the response and the
stream are Anthropic's:

- The model goes in the URL, not the body: `POST /publishers/anthropic/models/{model}:rawPredict`
  under the caller's `https://{LOCATION-}aiplatform.googleapis.com/v1/projects/{project}/locations/{location}`,
  `...:streamRawPredict` for a stream ("In Vertex, model is not passed in the request body.
  Instead, it is specified in the Google Cloud endpoint URL.").
- The API version goes in the body, not a header: `"anthropic_version": "vertex-2023-10-16"`
  ("In Vertex, anthropic_version is passed in the request body (rather than as a header),
  and must be set to the value vertex-2023-10-16").
- A streamed request keeps `stream: true` in its body as well, as Anthropic's SDKs for
  Vertex AI send it; the URL's method is what asks for the stream.
- Read back (`from_wire_request`), the model and the stream choice come from the URL.
- Errors: Anthropic's error body is classified as the anthropic adapter does; Google's error
  model of Vertex AI's front end (`{error: {code, message, status}}`) has no `error.type`,
  so its HTTP status decides (contract §6.2's table).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, ClassVar

from ..wire import endpoint
from ..wire.vertex_anthropic_messages import ANTHROPIC_VERSION, VERTEX_ANTHROPIC_MESSAGES, is_streaming
from .anthropic import AnthropicAdapter
from .base import AdapterOptions, Message, ParsedRequest, ToolDefinition, WireBody, WireRequest

VERSION_FIELD = "anthropic_version"


def vertex_path(model: str, *, stream: bool) -> str:
    """The endpoint's path for `model` (spelled as the record's `ModelIn` says) and the stream choice."""
    ep = VERTEX_ANTHROPIC_MESSAGES.endpoint
    assert ep is not None and ep.stream_path is not None
    template = ep.stream_path if stream else ep.path
    return template.replace("{model}", endpoint.spelled(model, ep.model.encoding))


class VertexAnthropicAdapter(AnthropicAdapter):
    """Canonical <-> Claude on Vertex AI (`:rawPredict` / `:streamRawPredict`)."""

    name: ClassVar[str] = "vertex-anthropic"
    provider: ClassVar[str] = "vertex-anthropic"
    wire_api: ClassVar[str] = "vertex-anthropic-messages"
    provider_tool_id: ClassVar[re.Pattern[str]] = AnthropicAdapter.provider_tool_id

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        messages_api = super().to_wire(messages, tools, options)
        body: WireBody = {VERSION_FIELD: ANTHROPIC_VERSION}
        body.update((k, v) for k, v in messages_api.body.items() if k not in ("model", VERSION_FIELD))
        headers = {k: v for k, v in messages_api.headers.items() if k.lower() != "anthropic-version"}
        return WireRequest("POST", vertex_path(options.wire_model, stream=options.stream), headers, body)

    def from_wire_request(
        self, body: WireBody, *, session_id: str | None = None, url: str | None = None
    ) -> ParsedRequest:
        """A recorded request -> canonical messages, tools and options. The model and the
        stream choice are in the URL: pass `url` to recover them (without it the model is
        `vertex-anthropic:unknown` and the stream the body's `stream`)."""
        model = endpoint.model_of(VERTEX_ANTHROPIC_MESSAGES, url, None) if url else None
        as_messages: dict[str, Any] = {k: v for k, v in body.items() if k != VERSION_FIELD}
        as_messages["model"] = model or "unknown"
        parsed = super().from_wire_request(as_messages, session_id=session_id)
        stream = is_streaming(url) if url else parsed.options.stream
        return ParsedRequest(parsed.messages, parsed.tools, dataclasses.replace(parsed.options, stream=stream))
