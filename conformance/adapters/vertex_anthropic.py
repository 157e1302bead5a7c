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
- Read back (`from_wire_request`), the model and the stream choice come from the URL
  (`anthropic_hosted.HostedAnthropicAdapter`, shared with Claude on Bedrock InvokeModel).
- Errors: Anthropic's error body is classified as the anthropic adapter does; Google's error
  model of Vertex AI's front end (`{error: {code, message, status}}`) has no `error.type`,
  so its HTTP status decides (contract §6.2's table).
"""

from __future__ import annotations

import re
from typing import ClassVar

from ..wire.api import WireApi
from ..wire.vertex_anthropic_messages import ANTHROPIC_VERSION, VERTEX_ANTHROPIC_MESSAGES
from .anthropic import AnthropicAdapter
from .anthropic_hosted import HostedAnthropicAdapter


class VertexAnthropicAdapter(HostedAnthropicAdapter):
    """Canonical <-> Claude on Vertex AI (`:rawPredict` / `:streamRawPredict`)."""

    name: ClassVar[str] = "vertex-anthropic"
    provider: ClassVar[str] = "vertex-anthropic"
    wire_api: ClassVar[str] = "vertex-anthropic-messages"
    provider_tool_id: ClassVar[re.Pattern[str]] = AnthropicAdapter.provider_tool_id
    record: ClassVar[WireApi] = VERTEX_ANTHROPIC_MESSAGES
    anthropic_version: ClassVar[str] = ANTHROPIC_VERSION
