"""Claude on Amazon Bedrock `InvokeModel` / `InvokeModelWithResponseStream`, as data.

Written from AWS's documentation (URLs in `DOCS`), not from an adapter:

- `POST /model/{modelId}/invoke` answers one reply, `POST /model/{modelId}/invoke-with-response-stream`
  a stream (the API reference's Request Syntax); the model id is a URI label, percent-encoded
  as Bedrock's Converse takes it (`bedrock.MODEL_IN_PATH`). InvokeModel serves every model
  family with that family's body: this record claims the paths whose model id names an
  Anthropic model (`anthropic.claude-...`, a cross-region `us.anthropic.claude-...`, an
  inference profile's ARN ending in one), whose body is Anthropic's.
- The body: "The request body is passed in the body field of a request to InvokeModel or
  InvokeModelWithResponseStream"; it is Anthropic's Messages body with "anthropic_version –
  (Required) The anthropic version. The value must be bedrock-2023-05-31." (and the optional
  `anthropic_beta` list), without `model` or `stream`, which the URL carries.
- The reply is Anthropic's Messages response; the stream is an AWS event stream whose `chunk`
  events (PayloadPart: `bytes`, "Base64-encoded bytes of payload data") carry one Anthropic
  stream event each (`FRAMING`, nested; `inner`: Anthropic's schemas and probes read them),
  or one of ResponseStream's exception members.
- Errors are Bedrock Runtime's (`x-amzn-ErrorType`, the Converse record's table); an
  Anthropic `error` event inside the chunks is read by Anthropic's `error.type` table.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any
from urllib.parse import urlsplit

from . import bedrock
from .anthropic_messages import ANTHROPIC_MESSAGES
from .api import Endpoint, Header, JsonBody, WireApi
from .eventstream import EVENT_STREAM
from .framing import base64_at, nested

API_REF = "https://docs.aws.amazon.com/bedrock/latest/APIReference/"
CLAUDE_PAGE = "https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html"
DOCS = (
    CLAUDE_PAGE,
    API_REF + "API_runtime_InvokeModel.html",
    API_REF + "API_runtime_InvokeModelWithResponseStream.html",
    API_REF + "API_runtime_ResponseStream.html",
    API_REF + "API_runtime_PayloadPart.html",
    *ANTHROPIC_MESSAGES.docs,
)

ANTHROPIC_VERSION = "bedrock-2023-05-31"
"""The body's `anthropic_version` ("The value must be bedrock-2023-05-31")."""

# an Anthropic model's id, as it is or percent-encoded (an ARN's `/` and `:` as %2F, %3A)
_PATH = re.compile(r"/model/([^/]*anthropic\.claude[^/]*)/(invoke|invoke-with-response-stream)/?$")


def is_streaming(url: str, _body: JsonBody | None = None) -> bool:
    """A stream is asked for by the operation (`invoke-with-response-stream`); the body has no stream flag."""
    found = _PATH.search(urlsplit(url).path or url)
    return found is not None and found.group(2) == "invoke-with-response-stream"


FRAMING = nested(
    "aws-event-stream/anthropic-chunks",
    EVENT_STREAM,
    base64_at("/chunk/bytes"),
    title="Anthropic stream events, each the base64 `bytes` of an AWS event-stream `chunk`",
)
"""InvokeModelWithResponseStream's body: ResponseStream's `chunk` members, each PayloadPart's
`bytes` one Anthropic stream event (its JSON), in an AWS event stream."""


def _stream_error(events: list[Any]) -> Any:
    """An Anthropic `error` event inside the chunks, else an exception member of the event
    stream as the restJson1 error body it stands for (the Converse record's reading)."""
    found = ANTHROPIC_MESSAGES.probes.stream_error(events)
    return found if found is not None else bedrock.BEDROCK_CONVERSE.probes.stream_error(events)


ERRORS = dataclasses.replace(
    bedrock.ERRORS, body_fields=(*bedrock.ERRORS.body_fields, *ANTHROPIC_MESSAGES.errors.body_fields)
)
"""Bedrock Runtime's error signals, and Anthropic's `error.type` for an error event of the model's."""

ENDPOINT = Endpoint(
    path="/model/{model}/invoke",
    stream_path="/model/{model}/invoke-with-response-stream",
    model=bedrock.MODEL_IN_PATH,
    examples=bedrock.MODEL_EXAMPLES,
    headers=(
        Header(
            "content-type",
            "application/json",
            says="The MIME type of the input data in the request. You must specify application/json.",
            source=API_REF + "API_runtime_InvokeModel.html",
        ),
    ),
    says=(
        "POST /model/modelId/invoke HTTP/1.1 (InvokeModel); "
        "POST /model/modelId/invoke-with-response-stream HTTP/1.1 (InvokeModelWithResponseStream)"
    ),
    source=API_REF + "API_runtime_InvokeModelWithResponseStream.html",
)
"""Two operations: the stream is asked for by the URL, the model is its path segment."""

BEDROCK_ANTHROPIC_MESSAGES = WireApi(
    name="bedrock-anthropic-messages",
    access=bedrock.ACCESS,
    title="Claude on Amazon Bedrock InvokeModel / InvokeModelWithResponseStream",
    docs=DOCS,
    request_paths=(_PATH,),
    framing=FRAMING,
    is_streaming=is_streaming,
    schema_dir="bedrock-anthropic-messages",
    hosts=bedrock.BEDROCK_CONVERSE.hosts,
    endpoint=ENDPOINT,
    errors=ERRORS,
    # the body, the reply and the stream's inner events are Anthropic's: its record's facts
    inner=ANTHROPIC_MESSAGES,
    # the Claude page documents base64 image sources only
    carries=dataclasses.replace(ANTHROPIC_MESSAGES.carries, images_url=False),
    probes=dataclasses.replace(ANTHROPIC_MESSAGES.probes, stream_error=_stream_error),
    tool_ids=ANTHROPIC_MESSAGES.tool_ids,
    stop_reasons=ANTHROPIC_MESSAGES.stop_reasons,
    stop_reasons_also=ANTHROPIC_MESSAGES.stop_reasons_also,
    usage_fields=ANTHROPIC_MESSAGES.usage_fields,
    thinking_back=ANTHROPIC_MESSAGES.thinking_back,
    normalize_request=ANTHROPIC_MESSAGES.normalize_request,
    accepted_differences=ANTHROPIC_MESSAGES.accepted_differences,
    estimate_tolerance=ANTHROPIC_MESSAGES.estimate_tolerance,
    cached_in_input=ANTHROPIC_MESSAGES.cached_in_input,
)
