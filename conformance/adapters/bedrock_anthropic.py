"""Claude on Amazon Bedrock InvokeModel: an opt-in variant of the anthropic adapter.

Not registered by default (the reference adapters speak the providers' own APIs, and the
bedrock adapter speaks Converse); use it as
`conformance.adapters.bedrock_anthropic:BedrockAnthropicAdapter` (for example `turnspec
conform conformance.adapters.bedrock_anthropic:BedrockAnthropicAdapter`, whose own cassettes
are `cassettes/bedrock-anthropic/`). The wire facts are the record
`conformance.wire.bedrock_anthropic_messages.BEDROCK_ANTHROPIC_MESSAGES`, written from AWS's
InvokeModel references and its "Request and Response" page for Claude; the body, the reply
and the stream's events are Anthropic's, so everything else is the anthropic adapter's:

- The model and the stream choice go in the URL (`POST /model/{modelId}/invoke`,
  `/invoke-with-response-stream`, the id percent-encoded), `anthropic_version:
  "bedrock-2023-05-31"` in the body, and neither `model` nor `stream` there
  (`anthropic_hosted.HostedAnthropicAdapter`, shared with Claude on Vertex AI).
- Images by URL do not travel (the Claude page documents base64 sources only): dropped
  with the §7.3 WARN line.
- The stream is an AWS event stream whose `chunk`s carry Anthropic's stream events, base64
  in `bytes` (the record's nested `FRAMING`): decoded, they are read as the anthropic
  adapter reads Anthropic's SSE. An exception frame (`throttlingException`, ...) is the
  stream's error event in its place, classed by AWS's error name.
- Errors: Bedrock Runtime's (`x-amzn-ErrorType`, the bedrock adapter's `classify_aws_error`);
  an Anthropic `error` event of the model's, Anthropic's `error.type`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from ..wire.api import WireApi
from ..wire.bedrock import EXCEPTION_HINTS
from ..wire.bedrock_anthropic_messages import ANTHROPIC_VERSION, BEDROCK_ANTHROPIC_MESSAGES, FRAMING
from ..wire.framing import FramingError, ProviderStreamError
from .anthropic import AnthropicAdapter
from .anthropic_hosted import HostedAnthropicAdapter
from .base import AdapterError, Block, Message, RequestContext, StreamEvent, WireFormatError
from .bedrock import aws_error_name, classify_aws_error


def _sse(event: Any) -> bytes:
    return b"data: " + json.dumps(event).encode() + b"\n\n"


def anthropic_sse(chunks: Iterable[bytes | str]) -> Iterator[bytes]:
    """The Anthropic events inside an InvokeModelWithResponseStream body, as the SSE the
    anthropic adapter reads; an exception frame becomes an Anthropic `error` event naming
    AWS's error (and ends the stream), a body cut inside a frame ends where it was cut (the
    anthropic adapter reports a stream without `message_stop` as cut), a broken frame is a
    located WireFormatError."""
    dec = FRAMING.decoder()

    def events(frames: Iterable[Any]) -> Iterator[bytes]:
        for frame in frames:
            ev = FRAMING.to_json(frame)
            if ev is not None:
                yield _sse(ev.value)

    try:
        for chunk in chunks:
            yield from events(dec.feed(chunk))
        try:
            tail = dec.close()
        except FramingError:
            return  # cut inside a frame
        yield from events(tail)
    except ProviderStreamError as exc:
        yield _sse({"type": "error", "error": {"type": exc.kind, "message": exc.message}})
    except FramingError as exc:
        raise WireFormatError(f"Bedrock InvokeModel stream: {exc}", event=exc.event, offset=exc.offset) from None


class BedrockAnthropicAdapter(HostedAnthropicAdapter):
    """Canonical <-> Claude on Bedrock InvokeModel (`/model/{modelId}/invoke[-with-response-stream]`)."""

    name: ClassVar[str] = "bedrock-anthropic"
    # Bedrock's, as the Converse adapter's: one service issues the thinking signatures of both
    provider: ClassVar[str] = "bedrock"
    wire_api: ClassVar[str] = "bedrock-anthropic-messages"
    provider_tool_id: ClassVar[re.Pattern[str]] = AnthropicAdapter.provider_tool_id
    record: ClassVar[WireApi] = BEDROCK_ANTHROPIC_MESSAGES
    anthropic_version: ClassVar[str] = ANTHROPIC_VERSION
    stream_in_body: ClassVar[bool] = False

    def image_to_wire(self, message: Message, index: int, block: Block, extra: Mapping[str, Any]) -> Block | None:
        wire = super().image_to_wire(message, index, block, extra)
        if wire is not None and (wire.get("source") or {}).get("type") == "url":
            self.drop(message, index, "image", "Claude on Bedrock InvokeModel takes base64 image sources only")
            return None
        return wire

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        """An AWS error (its `x-amzn-ErrorType`, a body's `__type`, or an exception frame read
        as an error event naming it) by Bedrock's table; the model's own Anthropic error body
        or event by Anthropic's `error.type`."""
        err = body.get("error") if isinstance(body, dict) else None
        kind = str(err.get("type", "")) if isinstance(err, dict) else ""
        if kind.lower() in EXCEPTION_HINTS:  # an exception frame, read as the stream's error event
            return classify_aws_error(status, {"__type": kind, "message": str(err.get("message", ""))}, headers)  # type: ignore[union-attr]
        if aws_error_name(body, headers):
            return classify_aws_error(status, body, headers)
        return super().classify_error(status, body, headers)

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        """The event stream's chunks are Anthropic's stream events, read as the anthropic adapter reads them."""
        return super().stream_response(anthropic_sse(chunks), context)
