"""Anthropic's Claude through Amazon Bedrock's InvokeModel and InvokeModelWithResponseStream:
a wire API turnspec does not ship, with its own `WireApi` record and an adapter, written by a
third party from AWS's documentation with only turnspec's public API (issue 43).

The API, as AWS documents it:

- `POST /model/{modelId}/invoke` answers one reply; `POST
  /model/{modelId}/invoke-with-response-stream` answers a stream (API reference, Request
  Syntax). The model id (`anthropic.claude-3-haiku-20240307-v1:0`, an inference profile's
  ARN) is a URI label of a restJson1 operation: percent-encoded, its `:` and `/` included.
  `Content-Type: application/json` ("You must specify application/json").
- The body is Anthropic's Messages body with `anthropic_version: "bedrock-2023-05-31"`
  ("(Required) ... The value must be bedrock-2023-05-31") and without `model` or `stream`
  (the URL carries both); the reply is Anthropic's Messages response ("Request and
  Response", model-parameters-anthropic-claude-messages-request-response.html).
- The stream is an AWS event stream of `ResponseStream` members: `chunk` (PayloadPart,
  `bytes`: a Blob, base64 in JSON, of one Anthropic stream event), or one of the exceptions
  internalServerException, modelStreamErrorException, validationException,
  throttlingException, modelTimeoutException, serviceUnavailableException.
- Errors: `x-amzn-ErrorType` names the exception; its HTTP status is the exception shape's
  (400 ValidationException, 403 AccessDeniedException, 404 ResourceNotFoundException, 408
  ModelTimeoutException, 424 ModelErrorException, 429 ThrottlingException and
  ModelNotReadyException, 500 InternalServerException, 503 ServiceUnavailableException).

The record reuses turnspec's public Anthropic Messages record for what the bodies share (its
probes read the inner events, its schemas validate the reply and the inner events:
`WireApi.inner`) and states what differs: the endpoint, the nested framing, the error table.

The adapter is turnspec's reference Anthropic adapter (`AnthropicAdapter`, subclassed as
`turnspec init adapter --api anthropic-messages` writes it) with the Bedrock transport:
`to_wire` moves the model and the stream choice to the URL, `from_wire_request` reads them
back from it, `stream_response` decodes the event stream's chunks into the Anthropic events
the reference reads, and `classify_error` reads AWS's error names. Images by URL do not
travel (the Bedrock page documents base64 sources only): dropped with the §7.3 WARN line.

Sources: docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html,
API_runtime_InvokeModelWithResponseStream.html, API_runtime_ResponseStream.html,
API_runtime_PayloadPart.html, userguide/model-parameters-anthropic-claude-messages-request-response.html,
smithy.io/2.0/spec/http-bindings.html#httplabel-trait.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote, unquote, urlsplit

from conformance.adapters.anthropic import AnthropicAdapter
from conformance.adapters.errors import BY_CLASS, AdapterError, WireFormatError, error_for_status
from conformance.adapters.protocol import (
    AdapterOptions,
    Block,
    Message,
    ParsedRequest,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireRequest,
)
from conformance.wire import registry
from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES
from conformance.wire.api import (
    Access,
    AlsoAccepted,
    Endpoint,
    ErrorSignals,
    Header,
    JsonBody,
    ModelIn,
    WireApi,
)
from conformance.wire.eventstream import EVENT_STREAM
from conformance.wire.framing import FramingError, ProviderStreamError, base64_at, nested

API_REF = "https://docs.aws.amazon.com/bedrock/latest/APIReference/"
CLAUDE_PAGE = "https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html"
DOCS = (
    API_REF + "API_runtime_InvokeModel.html",
    API_REF + "API_runtime_InvokeModelWithResponseStream.html",
    API_REF + "API_runtime_ResponseStream.html",
    API_REF + "API_runtime_PayloadPart.html",
    CLAUDE_PAGE,
)
ANTHROPIC_VERSION = "bedrock-2023-05-31"

# -- the wire API record (from the docs above, independent of the adapter below) ------------

_PATH = re.compile(r"/model/([^/]+)/(invoke|invoke-with-response-stream)/?$")

# the ResponseStream members that are exceptions (API_runtime_ResponseStream.html), as the
# HTTP error each stands for
STREAM_EXCEPTIONS = {
    "internalServerException": "InternalServerException",
    "modelStreamErrorException": "ModelStreamErrorException",
    "validationException": "ValidationException",
    "throttlingException": "ThrottlingException",
    "modelTimeoutException": "ModelTimeoutException",
    "serviceUnavailableException": "ServiceUnavailableException",
}

# the exceptions InvokeModel and InvokeModelWithResponseStream document -> contract §6.1.
# ValidationException is left to its status (400: invalid request, remapped to overflow by
# the wording), so it is named for stream frames only, which have no status
CLASSES = {
    "AccessDeniedException": "auth",
    "ResourceNotFoundException": "invalid_request",
    "ServiceQuotaExceededException": "rate_limit",
    "ThrottlingException": "rate_limit",
    "ModelNotReadyException": "rate_limit",
    "ModelTimeoutException": "network",
    "ModelErrorException": "server_error",
    "ModelStreamErrorException": "server_error",
    "InternalServerException": "server_error",
    "ServiceUnavailableException": "server_error",
}
ERRORS = ErrorSignals(
    headers={"x-amzn-ErrorType": CLASSES},
    body_fields=(("/__type", CLASSES),),
    frames={"validationException": "invalid_request"},
    # "Input is too long for requested model." (Bedrock), "prompt is too long" (Claude)
    overflow_message=re.compile(r"input is too long|prompt is too long|too many input tokens", re.I),
    also_accepted=(
        AlsoAccepted(
            "ModelTimeoutException",
            frozenset({"server_error"}),
            says="The request took too long to process. Processing time exceeded the model timeout length.",
            source=API_REF + "API_runtime_InvokeModel.html",
        ),
    ),
)


def _stream_error(events: list[Any]) -> Any:
    """An Anthropic `error` event inside the chunks, else an exception member of the event
    stream as the restJson1 error body it stands for (`{"__type": "ThrottlingException",
    "message": ...}`)."""
    inner = ANTHROPIC_MESSAGES.probes.stream_error(events)
    if inner is not None:
        return inner
    for e in events:
        if isinstance(e, dict) and len(e) == 1:
            ((name, payload),) = e.items()
            if name in STREAM_EXCEPTIONS:
                return {"__type": STREAM_EXCEPTIONS[name], **(payload if isinstance(payload, dict) else {})}
    return None


def is_streaming(url: str, _body: JsonBody | None = None) -> bool:
    found = _PATH.search(urlsplit(url).path or url)
    return found is not None and found.group(2) == "invoke-with-response-stream"


FRAMING = nested(
    "aws-event-stream/chunk-bytes",
    EVENT_STREAM,
    base64_at("/chunk/bytes"),
    title="Anthropic stream events, each the base64 `bytes` of an AWS event-stream `chunk`",
)

ENDPOINT = Endpoint(
    path="/model/{model}/invoke",
    stream_path="/model/{model}/invoke-with-response-stream",
    model=ModelIn(
        "path",
        encoding="percent",
        says="Characters not defined as unreserved by RFC 3986 section 2.3 MUST be percent-encoded.",
        source="https://smithy.io/2.0/spec/http-bindings.html#httplabel-trait",
    ),
    headers=(
        Header(
            "content-type",
            "application/json",
            says="The MIME type of the input data in the request. You must specify application/json.",
            source=API_REF + "API_runtime_InvokeModel.html",
        ),
    ),
    examples=(
        "anthropic.claude-3-haiku-20240307-v1:0",
        "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0",
    ),
    says=(
        "POST /model/modelId/invoke HTTP/1.1 (InvokeModel); "
        "POST /model/modelId/invoke-with-response-stream HTTP/1.1 (InvokeModelWithResponseStream)"
    ),
    source=API_REF + "API_runtime_InvokeModelWithResponseStream.html",
)

BEDROCK_INVOKE_ANTHROPIC: WireApi = replace(
    ANTHROPIC_MESSAGES,
    name="bedrock-invoke-anthropic",
    title="Anthropic Claude on Amazon Bedrock InvokeModel",
    docs=DOCS,
    request_paths=(_PATH,),
    framing=FRAMING,
    is_streaming=is_streaming,
    schema_dir="bedrock-invoke-anthropic",
    schema_path=str(Path(__file__).resolve().parent / "schemas" / "bedrock-invoke-anthropic"),
    hosts=(),  # bedrock-runtime.<region>.amazonaws.com
    # the Claude page documents base64 image sources only
    carries=replace(ANTHROPIC_MESSAGES.carries, images_url=False),
    probes=replace(ANTHROPIC_MESSAGES.probes, stream_error=_stream_error),
    errors=ERRORS,
    access=Access(
        base_url="https://bedrock-runtime.us-east-1.amazonaws.com",
        key_env="AWS_BEARER_TOKEN_BEDROCK",
        credential_headers=("authorization", "x-amz-security-token"),
    ),
    endpoint=ENDPOINT,
    inner=ANTHROPIC_MESSAGES,
)
registry.register(BEDROCK_INVOKE_ANTHROPIC)


# -- the adapter ----------------------------------------------------------------------------


def _header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    for k, v in (headers or {}).items():
        if str(k).lower() == name:
            return str(v[0] if isinstance(v, list) and v else v)
    return None


class TheirBedrockInvokeAdapter(AnthropicAdapter):
    """Canonical <-> Claude on Bedrock InvokeModel (`/model/{modelId}/invoke[-with-response-stream]`)."""

    name: ClassVar[str] = "their-bedrock-invoke"
    provider: ClassVar[str] = "bedrock"
    wire_api: ClassVar[str] = BEDROCK_INVOKE_ANTHROPIC.name

    # -- canonical -> wire ------------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        body = dict(super().to_wire(messages, tools, options).body)
        body.pop("model", None)  # the URL names it
        body.pop("stream", None)  # the operation asks for it
        body = {"anthropic_version": body.pop("anthropic_version", ANTHROPIC_VERSION), **body}
        operation = "invoke-with-response-stream" if options.stream else "invoke"
        path = f"/model/{quote(options.model_for(self.provider), safe='')}/{operation}"
        return WireRequest("POST", path, {"content-type": "application/json", "accept": "application/json"}, body)

    def image_to_wire(self, message: Message, index: int, block: Block, extra: Mapping[str, Any]) -> Block | None:
        wire = super().image_to_wire(message, index, block, extra)
        if wire is not None and (wire.get("source") or {}).get("type") == "url":
            self.drop(message, index, "image", "Claude on Bedrock InvokeModel takes base64 image sources only")
            return None
        return wire

    # -- wire -> canonical (requests) ---------------------------------------------------------

    def from_wire_request(
        self, body: WireBody, *, session_id: str | None = None, url: str | None = None
    ) -> ParsedRequest:
        """The body as Anthropic's, the model and the stream choice from the URL."""
        if not isinstance(body, dict):
            raise WireFormatError("an InvokeModel body is a JSON object")
        found = _PATH.search(urlsplit(url).path) if url else None
        model = unquote(found.group(1)) if found else "unknown"
        parsed = super().from_wire_request({**body, "model": model}, session_id=session_id)
        extra = {k: v for k, v in parsed.options.extra.items() if k != "anthropic_version"}
        if body.get("anthropic_version") not in (None, ANTHROPIC_VERSION):
            extra["anthropic_version"] = body["anthropic_version"]
        options = replace(parsed.options, stream=is_streaming(url or ""), extra=extra)
        return ParsedRequest(parsed.messages, parsed.tools, options)

    # -- errors -------------------------------------------------------------------------------

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        """AWS's error name (`x-amzn-ErrorType`, a body's `__type`, an exception frame's
        `:exception-type` carried as an error event) refines contract §6.2's status default;
        an invalid request saying the input is too long is a context overflow."""
        err = body.get("error") if isinstance(body, dict) else None
        name = (_header(headers, "x-amzn-errortype") or "").split(":", 1)[0]
        name = name or (str(body.get("__type", "")) if isinstance(body, dict) else "")
        name = name or (str(err.get("type", "")) if isinstance(err, dict) else "")
        message = str(body.get("message") or "") if isinstance(body, dict) else str(body)[:200]
        message = message or (str(err.get("message", "")) if isinstance(err, dict) else "")
        key = name[:1].upper() + name[1:]
        hint = _OWN_CLASSES.get(key)
        if hint in (None, "invalid_request") and _TOO_LONG.search(message):
            hint = "context_overflow"
        cls = BY_CLASS.get(hint, AdapterError) if hint else type(error_for_status(status, message))
        return cls(
            f"{key or 'error'}: {message}",
            provider_status=status,
            request_id=_header(headers, "x-amzn-requestid"),
            retryable=cls.error_class in ("rate_limit", "server_error", "network"),  # contract §6.4
        )

    # -- streaming ----------------------------------------------------------------------------

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        """The event stream's chunks are Anthropic's stream events, read as the reference
        reads them; an exception frame is the stream's error event, in its place."""
        return super().stream_response(_as_sse(chunks), context)


# this adapter's own reading of AWS's error names (the API reference's Errors sections)
_OWN_CLASSES = {
    "AccessDeniedException": "auth",
    "ResourceNotFoundException": "invalid_request",
    "ValidationException": "invalid_request",
    "ServiceQuotaExceededException": "rate_limit",
    "ThrottlingException": "rate_limit",
    "ModelNotReadyException": "rate_limit",
    "ModelTimeoutException": "server_error",  # the model timed out processing: a response, not a network failure
    "ModelErrorException": "server_error",
    "ModelStreamErrorException": "server_error",
    "InternalServerException": "server_error",
    "ServiceUnavailableException": "server_error",
}
_TOO_LONG = re.compile(r"input is too long|prompt is too long|too many input tokens", re.I)


def _as_sse(chunks: Iterable[bytes | str]) -> Iterator[bytes]:
    """The Anthropic events inside an event stream's chunks, as the SSE the reference reads;
    an exception frame becomes an Anthropic `error` event naming AWS's error, and ends it."""
    try:
        for ev in FRAMING.json_events(chunks):
            yield b"data: " + json.dumps(ev.value).encode() + b"\n\n"
    except ProviderStreamError as exc:
        error = {"type": "error", "error": {"type": exc.kind, "message": exc.message}}
        yield b"data: " + json.dumps(error).encode() + b"\n\n"
    except FramingError as exc:
        raise WireFormatError(exc.reason, event=exc.event, offset=exc.offset) from None


__all__ = ["BEDROCK_INVOKE_ANTHROPIC", "TheirBedrockInvokeAdapter"]
