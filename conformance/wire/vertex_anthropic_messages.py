"""Claude on Google Vertex AI (`rawPredict` / `streamRawPredict`), as data.

Written from Anthropic's and Google's documentation (URLs in `DOCS`), not from an adapter:

- `POST https://{LOCATION-}aiplatform.googleapis.com/v1/projects/{project}/locations/{location}
  /publishers/anthropic/models/{model}:rawPredict` answers one reply,
  `...:streamRawPredict` a stream (Google's REST reference: "rawPredict: Perform an online
  prediction with an arbitrary HTTP payload"; "streamRawPredict: Perform a streaming online
  prediction with an arbitrary HTTP payload"). The stream choice is the URL's method, as
  Gemini's `:streamGenerateContent` is; `stream: true` may ride in the body as well (the
  Anthropic SDKs send it), which the URL decides nothing against.
- The body is the Anthropic Messages request with two differences, as Anthropic's "Claude
  on Vertex AI" page says: "In Vertex, model is not passed in the request body. Instead,
  it is specified in the Google Cloud endpoint URL." and "In Vertex, anthropic_version is
  passed in the request body (rather than as a header), and must be set to the value
  vertex-2023-10-16."
- The response, its SSE stream, stop reasons, usage, tool ids, thinking and the model's
  own errors are Anthropic's: every such fact is the `ANTHROPIC_MESSAGES` record's value,
  imported (declared once there), and the response and stream-event schemas are Anthropic's
  (`inner`). Vertex AI's own front end answers with Google's error model
  (`{error: {code, message, status}}`: authentication, quota), whose `code` is the HTTP
  status (`status_in_body`, as Gemini's record reads it).
"""

from __future__ import annotations

import dataclasses
import re
from urllib.parse import urlsplit

from .anthropic_messages import ANTHROPIC_MESSAGES
from .api import Access, Endpoint, Framing, JsonBody, ModelIn, WireApi
from .gemini import ERRORS as GOOGLE_ERRORS

ANTHROPIC_VERTEX_DOCS = "https://docs.anthropic.com/en/api/claude-on-vertex-ai"
GOOGLE_USE_CLAUDE = "https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude"
GOOGLE_REST = "https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.publishers.models"
DOCS = (ANTHROPIC_VERTEX_DOCS, GOOGLE_USE_CLAUDE, GOOGLE_REST, *ANTHROPIC_MESSAGES.docs)

ANTHROPIC_VERSION = "vertex-2023-10-16"
"""The body's `anthropic_version` ("must be set to the value vertex-2023-10-16")."""

_METHOD = re.compile(r"/publishers/anthropic/models/[^/]+:(rawPredict|streamRawPredict)/?$")


def method_of(url: str) -> str | None:
    """`rawPredict` or `streamRawPredict`, the method a Claude-on-Vertex URL names (None: neither)."""
    m = _METHOD.search(urlsplit(url).path or url)
    return m.group(1) if m else None


def is_streaming(url: str, _body: JsonBody | None = None) -> bool:
    """A stream is asked for by the URL's method (`:streamRawPredict`), whatever the body says."""
    return method_of(url) == "streamRawPredict"


# Google's OAuth access token (`Authorization: Bearer $(gcloud auth print-access-token)`, the
# use-claude page's curl examples), which no environment variable holds (the record names
# none); the global endpoint's host, under which a base URL adds the caller's project and
# location (`https://aiplatform.googleapis.com/v1/projects/{project}/locations/global`, or a
# region's `https://{LOCATION}-aiplatform.googleapis.com/v1/projects/{project}/locations/{LOCATION}`);
# `x-goog-user-project` names the billed project
ACCESS = Access(
    base_url="https://aiplatform.googleapis.com",
    credential_headers=("authorization",),
    account_headers=("x-goog-user-project",),
)

ENDPOINT = Endpoint(
    # under `/v1/projects/{project}/locations/{location}`: the base URL's
    path="/publishers/anthropic/models/{model}:rawPredict",
    stream_path="/publishers/anthropic/models/{model}:streamRawPredict",
    model=ModelIn(
        "path",
        # the ids hold `@` (`claude-sonnet-4-5@20250929`), a pchar the docs' URLs spell as it is
        encoding="raw",
        says="In Vertex, model is not passed in the request body. Instead, it is specified in the Google Cloud "
        "endpoint URL.",
        source=ANTHROPIC_VERTEX_DOCS,
    ),
    examples=("claude-sonnet-4-5@20250929", "claude-haiku-4-5@20251001", "claude-3-5-haiku@20241022"),
    says=(
        "rawPredict: Perform an online prediction with an arbitrary HTTP payload. "
        "streamRawPredict: Perform a streaming online prediction with an arbitrary HTTP payload."
    ),
    source=GOOGLE_REST,
    notes=(
        "the base URL's prefix is the caller's project and location: "
        "`/v1/projects/{project}/locations/{location}` (`global`, or a region)",
        "a streamed request's body carries `stream: true` as well, as Anthropic's SDKs send it and turnspec's "
        "recordings hold it: the path decides the stream, and TC802 compares the body, so a request read back "
        "renders it again",
    ),
)
"""Two methods: the stream is asked for by the URL, the model is its path segment; the API
version rides in the body (`anthropic_version`, the request schema's), not in a header."""

ERRORS = dataclasses.replace(ANTHROPIC_MESSAGES.errors, status_in_body=GOOGLE_ERRORS.status_in_body)
"""Anthropic's error signals, and Google's `error.code` (the HTTP status an error of Vertex
AI's front end stands for)."""

VERTEX_ANTHROPIC_MESSAGES = WireApi(
    name="vertex-anthropic-messages",
    access=ACCESS,
    title="Claude on Vertex AI (rawPredict / streamRawPredict)",
    docs=DOCS,
    request_paths=(_METHOD,),
    framing=Framing.SSE,
    is_streaming=is_streaming,
    schema_dir="vertex-anthropic-messages",
    # the global endpoint, and a region's `{LOCATION}-aiplatform.googleapis.com` (the module
    # doc's URL: Claude models are served in the regions the Vertex AI page lists)
    hosts=("aiplatform.googleapis.com", "*-aiplatform.googleapis.com"),
    endpoint=ENDPOINT,
    errors=ERRORS,
    # the body, the response and the stream are Anthropic's: its record's facts, imported
    inner=ANTHROPIC_MESSAGES,
    tool_ids=ANTHROPIC_MESSAGES.tool_ids,
    carries=ANTHROPIC_MESSAGES.carries,
    probes=ANTHROPIC_MESSAGES.probes,
    stop_reasons=ANTHROPIC_MESSAGES.stop_reasons,
    stop_reasons_also=ANTHROPIC_MESSAGES.stop_reasons_also,
    usage_fields=ANTHROPIC_MESSAGES.usage_fields,
    thinking_back=ANTHROPIC_MESSAGES.thinking_back,
    normalize_request=ANTHROPIC_MESSAGES.normalize_request,
    accepted_differences=ANTHROPIC_MESSAGES.accepted_differences,
    estimate_tolerance=ANTHROPIC_MESSAGES.estimate_tolerance,
    cached_in_input=ANTHROPIC_MESSAGES.cached_in_input,
)
