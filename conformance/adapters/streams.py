"""Stream helpers adapters share: framing decoders that fail as `WireFormatError` (so a
malformed stream is an adapter error with the event's position, never a crash), tolerant
JSON-object parsing of fragments, and the message a harness stores after a stream.

The decoders themselves live in `conformance.wire.framing` and `conformance.wire.eventstream`
(provider-neutral, below the adapters); this module only turns their `FramingError` into
the adapter contract's error, and a frame in which the provider reports an error (an AWS
event-stream `exception` frame) into the error class of contract §6.1. Chunks are bytes:
a text framing decodes them, an adapter never has to.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import Any, Protocol

from ..formats.canonical.status import status_of_stop
from ..wire.api import ErrorSignals, Framing
from ..wire.bedrock import BEDROCK_CONVERSE
from ..wire.eventstream import EVENT_STREAM, EventStreamMessage
from ..wire.framing import FramingError, JsonEvent, ProviderStreamError, SseDecoder, SseEvent, json_events
from ..wire.framing import sse_events as _sse_events
from .errors import (
    BY_CLASS,
    AdapterError,
    NetworkError,
    RateLimitError,
    ServerError,
    StreamCutError,
    WireFormatError,
)
from .protocol import Block, Message, RequestContext, StreamEvent
from .toolids import new_ulid

__all__ = [
    "CancelToken",
    "JsonEvent",
    "SseDecoder",
    "SseEvent",
    "cancellable_events",
    "cut_input",
    "event_stream_events",
    "event_stream_messages",
    "framed_events",
    "json_array_events",
    "message_from_stream",
    "ndjson_events",
    "parse_json_object",
    "provider_stream_error",
    "sse_events",
    "stream_vocabulary",
    "to_canonical_names",
]

# -- the two spellings of the event names ------------------------------------------------
#
# Canonical §7.4 spells the events `text_delta`, `tool_use_start`, ..., `message_complete`,
# `usage_update`, `error` (and has no start event); the adapter contract (§5.1-§5.4) and the
# streaming protocol (§5.3) spell them `message.start`, `text.delta`, `tool.use_start`, ...,
# `message.complete` (and have no usage or error event). The specs conflict; an adapter may
# follow either, consistently within one stream. `message_start` is the underscore spelling
# of the streaming protocol's `message.start` (what stream-event.json and the reference
# adapters emit): accepted in the underscore vocabulary, required by neither.

UNDERSCORE = "canonical §7.4"
DOTTED = "streaming §5.3"
DOTTED_NAMES: dict[str, str] = {
    "message.start": "message_start",
    "text.delta": "text_delta",
    "thinking.delta": "thinking_delta",
    "tool.use_start": "tool_use_start",
    "tool.use_input_delta": "tool_use_input_delta",
    "tool.use_end": "tool_use_end",
    "message.complete": "message_complete",
}
"""Streaming §5.3 name -> the canonical §7.4 (underscore) name of the same event."""
UNDERSCORE_NAMES = frozenset(DOTTED_NAMES.values())
"""The underscore spellings of the events both specs name. `usage_update` and `error` have
one spelling only (canonical §7.4; the streaming protocol names no such event), so they
tell no vocabulary and are accepted in either."""


def stream_vocabulary(events: Iterable[StreamEvent]) -> tuple[str | None, list[str]]:
    """Which spelling a stream follows (None when no event tells) and the events that use
    the other one: `(DOTTED, ["event 3 (text_delta) in a stream that began with message.start (...)"])`."""
    vocab: str | None = None
    first = ""
    mixed: list[str] = []
    for i, e in enumerate(events):
        t = e.get("type") if isinstance(e, dict) else None
        kind = DOTTED if t in DOTTED_NAMES else UNDERSCORE if t in UNDERSCORE_NAMES else None
        if kind is None:
            continue
        if vocab is None:
            vocab, first = kind, str(t)
        elif kind != vocab:
            mixed.append(f"event {i} ({t}) in a stream that began with {first} ({vocab})")
    return vocab, mixed


def to_canonical_names(events: Iterable[StreamEvent]) -> list[StreamEvent]:
    """The events with streaming §5.3 names respelled as canonical §7.4 names (payloads kept)."""
    out: list[StreamEvent] = []
    for e in events:
        t = e.get("type") if isinstance(e, dict) else None
        out.append({**e, "type": DOTTED_NAMES[t]} if isinstance(t, str) and t in DOTTED_NAMES else e)
    return out


def _located(exc: FramingError, cls: type[WireFormatError] = WireFormatError) -> WireFormatError:
    return cls(exc.reason, event=exc.event, line=exc.line, offset=exc.offset)


def provider_stream_error(exc: ProviderStreamError, errors: ErrorSignals | None = None) -> AdapterError:
    """The adapter contract's error for a frame in which the provider reports an error
    mid-stream (an AWS `exception` frame): classed by the provider's error name in the
    API's own tables (`errors`, a record's `ErrorSignals.frame_class`: its `frames`, then
    its header and body tables), a validation error about the input's length being context
    overflow; an unknown name is `other`. The message names the frame. Without `errors`,
    the Bedrock Converse record's (the table earlier releases read for every frame)."""
    signals = errors if errors is not None else BEDROCK_CONVERSE.errors
    cls = BY_CLASS.get(signals.frame_class(exc.kind, exc.message) or "", AdapterError)
    where = f"event {exc.event}: " if exc.event is not None else ""
    return cls(f"{where}{exc}", retryable=cls in (RateLimitError, ServerError, NetworkError))


def framed_events(
    framing: Framing, chunks: Iterable[bytes | str], *, errors: ErrorSignals | None = None
) -> Iterator[JsonEvent]:
    """The JSON events of a stream in any framing (a record's nested one included); a
    framing error is a located WireFormatError (a `StreamCutError` when the body stops
    inside a frame: the decoder refuses only at its end), a provider's error frame the error
    of its class (contract §6.1) by `errors`, the API record's table (`provider_stream_error`)."""
    dec = framing.decoder()

    def events(frames: Iterable[Any]) -> Iterator[JsonEvent]:
        for frame in frames:
            ev = framing.to_json(frame)
            if ev is not None:
                yield ev

    try:
        for chunk in chunks:
            yield from events(dec.feed(chunk))
        try:
            tail = dec.close()
        except FramingError as exc:
            raise _located(exc, StreamCutError) from None
        yield from events(tail)
    except FramingError as exc:
        raise _located(exc) from None
    except ProviderStreamError as exc:
        raise provider_stream_error(exc, errors) from None


def event_stream_messages(chunks: Iterable[bytes]) -> Iterator[EventStreamMessage]:
    """The messages of an AWS event-stream body (headers and raw payload), exception frames
    included; a broken CRC or a truncated frame is a located WireFormatError."""
    try:
        yield from EVENT_STREAM.frames(chunks)
    except FramingError as exc:
        raise _located(exc) from None


def event_stream_events(chunks: Iterable[bytes], *, errors: ErrorSignals | None = None) -> Iterator[JsonEvent]:
    """The JSON events (`{event-type: payload}`) of an AWS event-stream body (Bedrock
    ConverseStream); an exception frame raises the provider's error (contract §6.1), classed
    by `errors` (default: the Bedrock Converse record's)."""
    return framed_events(EVENT_STREAM, chunks, errors=errors)


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


def cut_input(log: Any, adapter: str, call: str, text: Any, signal: str, field: str) -> dict[str, Any]:
    """The input of a tool call the token limit cut short (`signal`: how the API says so),
    whose JSON never completed: `{}`, as contract §9.4 closes such a call ("final_input = {}
    (nothing parses cleanly from partial JSON)"), the text the wire carried named in a WARN
    line (event `tool_input_cut`, its `field`), never the reply refused with its other
    content. One reading for every reference adapter."""
    log.warning(
        "%s: tool call %s was cut short by the token limit (%s); its %s %r are no JSON object: read as {}",
        adapter,
        call,
        signal,
        field,
        str(text)[:200],
        extra={"event": "tool_input_cut", "adapter": adapter, "field": field, "value": text},
    )
    return {}


class Assembler(Protocol):
    """What `message_from_stream` needs of an adapter: `BaseAdapter.assemble` (declared
    here, not imported, so this module stays below `base`, which builds on it)."""

    def assemble(
        self,
        ctx: RequestContext,
        content: list[Block],
        *,
        wire_model: str | None,
        token_usage: Mapping[str, int] | None,
        provider_raw: Mapping[str, Any] | None = None,
        status: str = "complete",
    ) -> Message: ...


def message_from_stream(events: Iterable[StreamEvent], ctx: RequestContext, adapter: Assembler) -> Message:
    """The canonical message a harness stores after a stream (message_complete is authoritative)."""
    model: str | None = ctx.model
    for ev in to_canonical_names(events):
        if ev["type"] == "message_start":
            model = ev.get("model")
            ctx = replace(ctx, message_id=ev["message_id"])
        elif ev["type"] == "message_complete":
            if ctx.message_id is None and ev.get("message_id"):
                ctx = replace(ctx, message_id=ev["message_id"])  # canonical §7.4 has no start event
            wire_model = model.split(":", 1)[1] if model and ":" in model else model
            status = status_of_stop(ev["stop_reason"])
            return adapter.assemble(
                ctx,
                list(ev["final_content"]),
                wire_model=wire_model,
                token_usage=ev.get("usage"),
                status=status,
            )
    raise WireFormatError("stream ended without message_complete")


# -- cancellation (contract §3.1 `cancel`, §5.3; streaming §6.2.1) -------------------------


class CancelToken:
    """The cancel state of one in-flight stream, shared by the adapter's `cancel` and the
    stream iterator. A flag, read between events: setting it from another thread is safe."""

    __slots__ = ("cancelled", "done")

    def __init__(self) -> None:
        self.cancelled = False
        self.done = False

    def is_cancelled(self) -> bool:
        """The flag, read afresh (another thread may set it while the stream waits)."""
        return self.cancelled


def cancellable_events(
    events: Iterator[StreamEvent],
    token: CancelToken,
    ctx: RequestContext,
    usage_if_none: Callable[[list[Block]], dict[str, int] | None] | None = None,
    snapshot: Callable[[], list[Block]] | None = None,
) -> Iterator[StreamEvent]:
    """`events` (an adapter's canonical events) until `token` is cancelled, then the closing
    sequence of contract §5.3 / streaming §6.2.1: one `tool_use_end` per tool call started
    and not ended (`final_input` is the JSON object its deltas spell, or `{}`), then one
    `message_complete` with `stop_reason: cancelled` and the content the deltas built, then
    the end of iteration (no error is raised: the cancel was asked for).

    The partial content is rebuilt from the canonical deltas alone (streaming §5.4), so
    this works over any adapter's events; a block that reached the client without a delta
    (e.g. Anthropic's redacted thinking) is taken from `snapshot()` (the adapter's own
    content so far) when given, else left out. Nothing the inner iterator yields or
    raises after the cancel is passed on. `usage_if_none(content)` gives the usage when no
    `usage_update` arrived (the reference adapters' estimate, contract §7.2)."""
    mid = ctx.message_id
    blocks: dict[int, Block] = {}
    partial: dict[int, str] = {}
    open_tools: dict[int, Block] = {}
    usage: Any = None
    try:
        while True:
            if token.is_cancelled():
                break
            try:
                ev = next(events)
            except StopIteration:
                return
            except Exception:
                if token.is_cancelled():
                    break
                raise
            if token.is_cancelled():
                break
            t = ev.get("type")
            mid = ev.get("message_id") or mid
            k = ev.get("content_block_index")
            if t == "usage_update":
                usage = ev.get("usage")
            elif t == "text_delta" and isinstance(k, int):
                b = blocks.setdefault(k, {"type": "text", "text": ""})
                b["text"] = str(b.get("text", "")) + str(ev.get("text", ""))
            elif t == "thinking_delta" and isinstance(k, int):
                b = blocks.setdefault(k, {"type": "thinking", "text": "", "signature": None})
                b["text"] = str(b.get("text", "")) + str(ev.get("text", ""))
                if ev.get("signature"):
                    b["signature"] = ev["signature"]
            elif t == "tool_use_start" and isinstance(k, int):
                blocks[k] = open_tools[k] = {"type": "tool_use", "id": ev.get("tool_use_id"), "name": ev.get("tool_name"), "input": {}}  # fmt: skip
                partial[k] = ""
            elif t == "tool_use_input_delta" and isinstance(k, int):
                partial[k] = partial.get(k, "") + str(ev.get("partial_json", ""))
            elif t == "tool_use_end" and isinstance(k, int):
                if k in blocks and isinstance(ev.get("final_input"), dict):
                    blocks[k]["input"] = ev["final_input"]
                open_tools.pop(k, None)
            elif t == "message_complete":
                token.done = True
            yield ev
    finally:
        close = getattr(events, "close", None)
        if callable(close):
            close()
    token.done = True
    mid = mid or new_ulid()
    for k, b in sorted(open_tools.items()):
        b["input"] = parse_json_object(partial.get(k, "")) or {}
        yield {
            "type": "tool_use_end",
            "message_id": mid,
            "content_block_index": k,
            "tool_use_id": b["id"],
            "final_input": b["input"],
        }
    if snapshot is not None and blocks:
        have = snapshot()
        for k in range(max(blocks)):
            if k not in blocks and k < len(have):
                blocks[k] = dict(have[k])
    content = [blocks[k] for k in sorted(blocks)]
    if usage is None and usage_if_none is not None:
        usage = usage_if_none(content)
    yield {
        "type": "message_complete",
        "message_id": mid,
        "stop_reason": "cancelled",
        "final_content": content,
        "usage": dict(usage) if usage else None,
    }
