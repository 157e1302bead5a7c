"""Stream helpers adapters share: framing decoders that fail as `WireFormatError` (so a
malformed stream is an adapter error with the event's position, never a crash), tolerant
JSON-object parsing of fragments, and the message a harness stores after a stream.

The decoders themselves live in `conformance.wire.framing` (provider-neutral, below the
adapters); this module only turns their `FramingError` into the adapter contract's error.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..wire.api import Framing
from ..wire.framing import FramingError, JsonEvent, SseDecoder, SseEvent, json_events
from ..wire.framing import sse_events as _sse_events
from .errors import WireFormatError
from .protocol import Message, RequestContext, StreamEvent

if TYPE_CHECKING:
    from .base import BaseAdapter

__all__ = [
    "JsonEvent",
    "SseDecoder",
    "SseEvent",
    "json_array_events",
    "message_from_stream",
    "ndjson_events",
    "parse_json_object",
    "sse_events",
]


def _located(exc: FramingError) -> WireFormatError:
    return WireFormatError(exc.reason, event=exc.event, line=exc.line)


def sse_events(chunks: Iterable[bytes | str]) -> Iterator[SseEvent]:
    """Server-Sent Events of a byte stream; a framing error is a located WireFormatError."""
    try:
        yield from _sse_events(chunks)
    except FramingError as exc:
        raise _located(exc) from None


def ndjson_events(chunks: Iterable[bytes | str]) -> Iterator[JsonEvent]:
    """The JSON objects of an NDJSON stream (Ollama); a bad line is a located WireFormatError."""
    try:
        yield from json_events(Framing.NDJSON, chunks)
    except FramingError as exc:
        raise _located(exc) from None


def json_array_events(chunks: Iterable[bytes | str]) -> Iterator[JsonEvent]:
    """The elements of a streamed JSON array (Gemini without alt=sse), located on error."""
    try:
        yield from json_events(Framing.JSON_ARRAY, chunks)
    except FramingError as exc:
        raise _located(exc) from None


def parse_json_object(text: str) -> dict[str, Any] | None:
    """`text` as a JSON object, or None when it is not one (tool arguments, stream fragments)."""
    try:
        value = json.loads(text) if text.strip() else {}
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def message_from_stream(events: Iterable[StreamEvent], ctx: RequestContext, adapter: BaseAdapter) -> Message:
    """The canonical message a harness stores after a stream (message_complete is authoritative)."""
    model: str | None = None
    for ev in events:
        if ev["type"] == "message_start":
            model = ev.get("model")
            ctx = replace(ctx, message_id=ev["message_id"])
        elif ev["type"] == "message_complete":
            wire_model = model.split(":", 1)[1] if model and ":" in model else model
            status = {"cancelled": "cancelled", "error": "error"}.get(ev["stop_reason"], "complete")
            return adapter.assemble(
                ctx,
                list(ev["final_content"]),
                wire_model=wire_model,
                token_usage=ev.get("usage"),
                status=status,
            )
    raise WireFormatError("stream ended without message_complete")
