"""What `turnspec wire` does, as functions: render a canonical conversation to a provider's
request, and parse a provider's response body or SSE text into canonical form.

Adapter authors use these to see what their adapter sends and reads; the tests use them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..core.findings import Finding, Severity
from ..core.jsonio import read_json, read_jsonl
from ..core.schema_validation import SchemaValidator
from ..core.schemas import schema_set, versions
from ..formats.canonical.status import status_of_stop
from ..wire import registry as wire_registry
from ..wire import schemas as wire_schemas
from ..wire.api import Framing, Probes, WireApi
from ..wire.framing import FramingError, JsonEvent, ProviderStreamError, loads_strict, looks_framed
from ..wire.tolerance import Departure
from .base import (
    LOGGER_NAME,
    Adapter,
    AdapterError,
    AdapterOptions,
    Message,
    RequestContext,
    StreamCutError,
    StreamEvent,
    ToolDefinition,
    WireFormatError,
    WireResponse,
    harness_usage,
    now_timestamp,
    sse_events,
)
from .streams import DOTTED, provider_stream_error, stream_vocabulary, to_canonical_names

_log = logging.getLogger("turnspec.adapters.debug")


@dataclass
class Conversation:
    """The messages and tool definitions of one canonical file, with where each message is."""

    path: Path
    messages: list[Message]
    tools: list[ToolDefinition]
    lines: list[int]  # the line of each message

    def where(self, index: int | None) -> str:
        """`path:line` of message `index`; line 1 (where the file starts) for None."""
        return f"{self.path}:{self.lines[index] if index is not None else 1}"

    def first_failing(self, fails: Callable[[list[Message]], bool]) -> int | None:
        """The index of a message whose conversation so far (it and the messages before it)
        `fails` as the whole one does while the one before it does not: the message a
        refusal is located at (the first such one when failing, once met, goes on, as a
        message that cannot be rendered does). Found by bisection: a few renders, not one
        per message. None when no message is to blame (the empty conversation fails)."""
        if not self.messages or fails([]):
            return None
        ok, failing = 0, len(self.messages)  # the whole conversation fails: that is why we are here
        while failing - ok > 1:
            mid = (ok + failing) // 2
            if fails(self.messages[:mid]):
                failing = mid
            else:
                ok = mid
        return failing - 1


def read_conversation(path: Path) -> Conversation:
    """Messages and tool definitions of a canonical .jsonl/.json file; bad input -> InputError."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    items = read_jsonl(path) if path.suffix == ".jsonl" else read_json(path)
    messages: list[Message] = []
    tools: list[ToolDefinition] = []
    lines: list[int] = []
    for item in items:
        if isinstance(item, Finding):
            if item.severity == Severity.ERROR:
                raise InputError(item.format())
            continue
        v = item.value
        if not isinstance(v, dict):
            raise InputError(f"{path}:{item.line}: {item.pointer or '/'}: not a message object")
        is_tool = "input_schema" in v and "role" not in v
        content = v.get("content")
        if not is_tool and not (isinstance(content, list) and all(isinstance(b, dict) for b in content)):
            raise InputError(
                f"{path}:{item.line}: {item.pointer}/content: not a list of content blocks; "
                "run `turnspec validate` on the file"
            )
        _check_schema(path, item.line, item.pointer, v, "tool-definition.json" if is_tool else "message.json")
        if is_tool:
            tools.append(v)
        else:
            messages.append(v)
            lines.append(item.line)
    return Conversation(path, messages, tools, lines)


@functools.cache
def _canonical_validators(root: str) -> tuple[SchemaValidator, ...]:
    """`root` of every canonical revision, newest first (a message may be read by any)."""
    return tuple(SchemaValidator(schema_set("canonical", rev), root) for rev in reversed(versions("canonical")))


def _check_schema(path: Path, line: int, pointer: str, value: dict[str, Any], root: str) -> None:
    """The adapters render schema-valid canonical input only: anything else (a negative
    count, a tool_use `input` that is a list) is refused as `validate` reports it, at its
    file, line and pointer, before an adapter sees it."""
    validators = _canonical_validators(root)
    if any(v.is_valid(value) for v in validators):
        return
    oldest = validators[-1]  # the spec as published: its errors are the ones `validate` reports
    errors = oldest.errors(value)
    e = errors[0] if errors else None
    where = f"{pointer}{e.pointer}" if e is not None else pointer or "/"
    what = e.message if e is not None else f"not a valid canonical {root.removesuffix('.json')}"
    raise InputError(f"{path}:{line}: {where or '/'}: {what} (TS020); run `turnspec validate` on the file")


def default_model(adapter: Adapter, messages: list[Message]) -> str:
    """The model of the latest assistant turn of this provider, else `<provider>:default`."""
    for m in reversed(messages):
        meta = m.get("metadata") or {}
        if m.get("role") == "assistant" and meta.get("provider") == adapter.provider and meta.get("model"):
            return str(meta["model"])
    return f"{adapter.provider}:default"


# the request field each option of `wire render` becomes, per API: a schema error there is that option's
_FLAGS = {
    **dict.fromkeys(("max_tokens", "max_output_tokens", "max_completion_tokens", "maxOutputTokens"), "--max-tokens: "),
    "model": "--model: ",
}


@contextlib.contextmanager
def _quiet_drops() -> Iterator[None]:
    """The adapters' WARN lines off while a refusal is located: the conversations so far are
    rendered again, and their drops were said once already."""
    logger = logging.getLogger(LOGGER_NAME)
    old = logger.disabled
    logger.disabled = True
    try:
        yield
    finally:
        logger.disabled = old


# what an adapter's `to_wire` raises on input it cannot render: its classified refusal
# (AdapterError), or a mistake on input the schemas accept (the adapter's bug, named)
RENDER_ERRORS = (AdapterError, KeyError, TypeError, ValueError, AttributeError, IndexError)


class RenderRefused(Exception):
    """`to_wire` refused a conversation: `where` (`path:line` of the message at which the
    conversation so far starts failing the same way) and `error`, what it raised."""

    def __init__(self, where: str, error: Exception) -> None:
        super().__init__(f"{where}: {error}")
        self.where = where
        self.error = error


def to_wire(adapter: Adapter, conv: Conversation, options: AdapterOptions) -> Any:
    """`adapter.to_wire` of the whole conversation; what it raises (`RENDER_ERRORS`) comes
    back as `RenderRefused`, located at the message it first fails on."""
    try:
        return adapter.to_wire(conv.messages, conv.tools, options)
    except RENDER_ERRORS as exc:
        kind = type(exc)

        def fails(messages: list[Message]) -> bool:
            try:
                adapter.to_wire(messages, conv.tools, options)
            except RENDER_ERRORS as again:
                return type(again) is kind
            return False

        with _quiet_drops():
            at = conv.first_failing(fails)
        raise RenderRefused(conv.where(at), exc) from None


def render(
    adapter: Adapter,
    conv: Conversation,
    *,
    model: str | None = None,
    stream: bool = False,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The request `wire render` prints. A request the API's request schema refuses is an
    InputError naming the option it comes from, or else the file and the line of the message
    at which the conversation so far starts breaking the schema at the same place (line 1
    when the file holds none, e.g. an empty `messages`)."""
    options = AdapterOptions(
        model=model or default_model(adapter, conv.messages), stream=stream, max_output_tokens=max_tokens
    )
    req = to_wire(adapter, conv, options)
    api = _record(adapter)
    v = wire_schemas.validator(api, "request") if api is not None else None
    if api is not None and v is not None and not v.is_valid(req.body):
        # the options (--max-tokens, --model) are checked where the API defines them: its
        # request schema; an adapter's own mistake is caught the same way
        e = v.errors(req.body)[0]
        arg = _FLAGS.get(e.pointer.rsplit("/", 1)[-1], "")
        if not arg:

            def fails(messages: list[Message]) -> bool:
                try:
                    body = adapter.to_wire(messages, conv.tools, options).body
                except RENDER_ERRORS:
                    return False
                return any(x.pointer == e.pointer and x.message == e.message for x in v.errors(body))

            with _quiet_drops():
                arg = f"{conv.where(conv.first_failing(fails))}: "
        raise InputError(f"{arg}the request breaks the {api.name} request schema at {e.pointer or '/'}: {e.message}")
    return {"method": req.method, "path": req.path, "headers": dict(req.headers), "body": req.body}


@dataclass
class Parsed:
    message: Message | None
    events: list[StreamEvent]
    # a stream in which the provider reported an error: contract §6.5's partial message
    # (stop_reason error) and events came first, then this error
    error: AdapterError | None = None


def looks_like_sse(body: str | bytes) -> bool:
    raw = body.encode() if isinstance(body, str) else body
    return raw.lstrip().startswith((b"event:", b"data:", b":"))


def _record(adapter: Adapter) -> WireApi | None:
    try:
        return wire_registry.get(str(adapter.wire_api))
    except KeyError:
        return None


@dataclass(frozen=True)
class StreamShape:
    """What `check_stream_framing` found in a stream it did not refuse."""

    # the departures the API's stream-event schema tolerates (`x-tolerate`), by event index
    departures: tuple[tuple[int, Departure], ...] = ()
    # what a stream cut before its end lacks (None: it reached its stop reason or end marker)
    missing: str | None = None
    lines: tuple[int, ...] = ()  # the line of each event (0 where the framing has none)


def check_stream_framing(body: str | bytes, api: WireApi | None, framing: Framing | None = None) -> StreamShape:
    """The wire-level strictness `wire parse` applies before the adapter sees a stream.

    Raises a located `WireFormatError` when the body is not the API's framing (a JSON body
    given --stream decodes to no event), an event is not JSON (SSE `[DONE]` excepted), an
    event breaks the API's stream-event schema in a way it does not tolerate (`x-tolerate`:
    the departures it does are returned), or an event follows the stream's closing event.
    A stream that ends without the stop reason every complete stream of the API carries
    (and without SSE `data: [DONE]`) was cut: that is returned as `missing`, for a partial
    reading, not refused. `framing` (default: the API's) may be any registered one; a frame
    in which the provider reports an error (an event-stream `exception`) raises that
    error's AdapterError.
    """
    framing = framing or (api.framing if api is not None else Framing.SSE)
    chunks = [body.encode() if isinstance(body, str) else body]
    values: list[Any] = []
    lines: list[int] = []  # the line of each value's event
    done = False  # SSE `data: [DONE]` seen: the API's own end marker (Chat Completions)
    inside: FramingError | None = None  # the body stops inside a frame (a cut)
    try:
        if framing is Framing.SSE:
            sse = list(sse_events(chunks))
            if not sse:
                raise WireFormatError("no server-sent event in the body (a JSON body given --stream?)")
            for ev in sse:
                if ev.data.strip() == "[DONE]":
                    done = True
                    continue
                try:
                    values.append(loads_strict(ev.data))
                    lines.append(ev.line)
                except ValueError as exc:
                    raise WireFormatError(f"event data is not JSON: {exc}", event=ev.index, line=ev.line) from None
        else:
            decoded, inside = _frames(framing, chunks[0])
            values, lines = [e.value for e in decoded], [e.line for e in decoded]
            if not values:
                raise inside or WireFormatError(f"no {framing.value} event in the body")
    except FramingError as exc:
        raise WireFormatError(exc.reason, event=exc.event, line=exc.line, offset=exc.offset) from None
    except ProviderStreamError as exc:
        raise provider_stream_error(exc, api.errors if api is not None else None) from None
    cut_inside = f"the body stops inside event {len(values)} ({inside.reason})" if inside is not None else None
    if api is None:
        return StreamShape(missing=cut_inside, lines=tuple(lines))

    def at(k: int) -> dict[str, int | None]:
        return {"event": k, "line": lines[k] if 0 <= k < len(lines) else None}

    departures: list[tuple[int, Departure]] = []
    r = wire_schemas.reader(api, "stream-event")
    schema = wire_schemas.owner(api, "stream-event") or api
    if r is not None:
        for k, value in enumerate(values):
            reading = r.read(value)
            if reading.error is not None:
                e = reading.error
                raise WireFormatError(f"{e.pointer or '/'}: {e.message} ({schema.name} stream-event schema)", **at(k))
            departures += [(k, d) for d in reading.departures]
    for k, value in enumerate(values):
        # the schema bounds an event's `index` below only; each block (or choice, or tool
        # call) an index names takes an event of its own, so an index past the stream's
        # event count names nothing (10**18 would make an adapter grow its block list)
        index = value.get("index") if isinstance(value, dict) else None
        if type(index) is int and index >= len(values):
            raise WireFormatError(
                f"/index: {index} is past the stream's {len(values)} event(s): it names no block", **at(k)
            )
    opens = [k for k, value in enumerate(values) if api.probes.stream_opens(value)]
    if opens and opens[0] != 0:
        raise WireFormatError("the stream's opening event is not its first", **at(opens[0]))
    if len(opens) > 1:
        raise WireFormatError("a second opening event", **at(opens[1]))
    shape = StreamShape(tuple(departures), cut_inside, tuple(lines))
    if api.probes.stream_error(values) is not None:
        # the provider reported an error in the stream (Anthropic's `error` event, an
        # `{"error": ...}` chunk, Responses' `response.failed`): the stream ended there, not
        # cut, and the adapter classifies that error (contract §6.5)
        return shape
    closes = [k for k, value in enumerate(values) if api.probes.stream_closes(value)]
    if closes and closes[0] != len(values) - 1:
        raise WireFormatError("an event after the stream's closing event", **at(closes[0] + 1))
    probe = api.probes.stream_stop_reason
    knows_stop = probe is not Probes().stream_stop_reason
    knows_close = api.probes.stream_closes is not Probes().stream_closes
    # a stream that reached `data: [DONE]` was not cut: a compatible server that sends no
    # finish_reason is the adapter's to read (with its WARN line); one that carries its
    # stop reason but lacks its closing event lost nothing the adapter cannot say (its WARN)
    end_marker = done and not knows_close  # `[DONE]` ends the APIs that have no closing event
    stopped = bool(values) and (
        end_marker or (probe(values) is not None if knows_stop else bool(closes) or not knows_close)
    )
    if stopped:
        # whatever follows the stop reason (a closing event, the end of a frame) is the
        # adapter's to report: the content is whole
        return replace(shape, missing=None)
    what = " and its closing event" if knows_stop and knows_close else ""
    missing = f"its {'stop reason' if knows_stop else 'closing event'}{what} never arrived ({api.name})"
    if not values:
        raise WireFormatError(f"stream ended before any event: cut before its end; {missing}")
    return replace(shape, missing=missing)


def _frames(framing: Framing, body: bytes) -> tuple[list[JsonEvent], FramingError | None]:
    """The JSON events of a non-SSE body, and the error its decoder raised at the end of the
    body when the body stops inside a frame (a cut stream: the events before it are read).
    A frame that breaks the framing before the end raises."""
    dec = framing.decoder()
    frames = list(dec.feed(body))
    inside: FramingError | None = None
    try:
        frames += list(dec.close())
    except FramingError as exc:
        inside = exc
    events = [ev for ev in (framing.to_json(f) for f in frames) if ev is not None]
    return events, inside


def _warn_departures(
    api: WireApi | None, kind: str, found: list[tuple[int | None, Departure]], lines: tuple[int, ...]
) -> None:
    """One WARN line per tolerated departure (a field and a value), however many events
    carry it: the field, the server's value, the documented rule and the schema's sentence."""
    if api is None or not found:
        return
    groups: dict[tuple[str, str, str], list[int | None]] = {}
    first: dict[tuple[str, str, str], Departure] = {}
    for k, d in found:
        key = (d.pointer, d.departure, repr(d.value))
        groups.setdefault(key, []).append(k)
        first.setdefault(key, d)
    for key, where in groups.items():
        d = first[key]
        k = where[0]
        place = ""
        if k is not None:
            line = lines[k] if 0 <= k < len(lines) else 0
            place = f" in {len(where)} event(s) (first: event {k}{f', line {line}' if line else ''})"
        _log.warning(
            "%s %s departs from %s's documented schema%s: %s",
            api.name,
            kind,
            api.title,
            place,
            d.describe(),
            extra={
                "event": "wire_departure",
                "field": d.pointer,
                "value": d.value,
                "departure": d.departure,
                "events": len(where),
            },
        )


def check_event_sequence(events: list[StreamEvent]) -> None:
    """The canonical events an adapter made from a stream (either vocabulary, respelled in
    the canonical §7.4 names): one start event first when there is one (required with the
    streaming §5.3 names, contract §5.2.1), one message_complete last; anything else is a
    located WireFormatError."""
    vocab, mixed = stream_vocabulary(events)
    if mixed:
        raise WireFormatError(f"event names of two vocabularies: {mixed[0]}")
    kinds = [e.get("type") for e in to_canonical_names(events)]
    if not kinds:
        raise WireFormatError("the adapter made no canonical event from the stream")
    starts = kinds.count("message_start")
    if starts > 1 or (starts and kinds[0] != "message_start") or (vocab == DOTTED and not starts):
        raise WireFormatError(f"canonical events do not start with exactly one message_start: {kinds[:3]}")
    if kinds[-1] != "message_complete" or kinds.count("message_complete") != 1:
        at = kinds.index("message_complete") if "message_complete" in kinds else None
        raise WireFormatError("canonical events do not end with exactly one message_complete", event=at)


def parse(
    adapter: Adapter,
    body: str | bytes,
    *,
    stream: bool = False,
    status: int = 200,
    session_id: str = "sess_wire_parse",
    framing: Framing | None = None,
) -> Parsed:
    """A response body (JSON) or a stream -> canonical message (and events).

    The body is bytes (text is encoded as UTF-8): a stream reaches the adapter as those
    bytes, decoded only by a framing whose frames are text. Its framing: `framing` when
    given (the body is then a stream), else the API's (or another framing the API's record
    lists, when the body starts as that one does), else the one the body's first bytes
    identify (SSE fields, an event-stream prelude), else SSE.

    Strict: a malformed stream raises a `WireFormatError` locating the offending event; a
    body that is not JSON (or JSON with NaN, or nested past the bound) is an InputError.
    """
    raw = body.encode() if isinstance(body, str) else body
    ctx = RequestContext(session_id=session_id)
    api = _record(adapter)
    stream = stream or framing is not None
    # the API's framing, or another it serves streams in whose start the body has (a Gemini
    # JSON array: streamGenerateContent without `alt=sse`)
    framing = framing or (api.framing_of(raw) if api is not None else None)
    framing = framing or wire_registry.detect_framing(raw) or Framing.SSE
    if stream or (status < 400 and looks_framed(framing, raw)) or looks_like_sse(raw):
        shape = check_stream_framing(raw, api, framing)
        _warn_departures(api, "stream-event", list(shape.departures), shape.lines)
        events: list[StreamEvent] = []
        error: AdapterError | None = None
        cut = shape.missing
        try:
            for event in adapter.stream_response([raw], ctx):
                events.append(event)
        except AdapterError as exc:
            # contract §6.5: an error mid-stream ends with `message_complete` (stop_reason
            # error, the partial content), then the error: both are what the wire said
            if not events or to_canonical_names(events[-1:])[0].get("type") != "message_complete":
                if cut is not None and isinstance(exc, WireFormatError):
                    # the record says the stream was cut; the adapter made no partial message of it
                    raise WireFormatError(
                        f"stream cut before its end: {cut}; the adapter ended it without contract §6.5's "
                        f"message_complete: {exc}",
                        event=exc.event,
                        line=exc.line,
                        offset=exc.offset,
                    ) from None
                raise
            if isinstance(exc, StreamCutError):
                cut = str(exc)  # the adapter names what it waited for
            elif isinstance(exc, WireFormatError) and cut is None:
                raise  # the adapter refuses the bytes (the event it names): not the provider's error
            elif cut is None:
                error = exc
        check_event_sequence(events)
        named = to_canonical_names(events)
        start, done = named[0], named[-1]
        if start.get("type") != "message_start":  # canonical §7.4 has no start event
            start = {"message_id": done.get("message_id"), "model": default_model(adapter, [])}
        model = str(start["model"])
        usage = done.get("usage")
        message = {
            "id": start["message_id"],
            "session_id": session_id,
            "role": "assistant",
            "content": done["final_content"] or [{"type": "text", "text": ""}],
            "metadata": {
                "model": model,
                "provider": adapter.provider,
                "routing": {
                    "mode": "default",
                    "chosen_model": model,
                    "reason": "turnspec wire parse",
                },
                "usage": harness_usage(usage, model, ctx) if usage else None,
                # canonical §4.3: a message that did not complete says so (its invariants,
                # usage among them, are enforced only at `complete`, §5.1.5); a stream cut
                # before its end is one whose streaming never completed: `partial`
                "status": "partial" if cut else status_of_stop(done.get("stop_reason")),
            },
            "created_at": now_timestamp(),
            "schema_version": 1,
        }
        if cut:
            _log.warning(
                "the stream was cut before its end: %s; what arrived is read as a partial message "
                "(canonical §4.3 status partial: its streaming never completed)",
                cut,
                extra={"event": "stream_cut", "missing": cut},
            )
        if not usage and message["metadata"]["status"] == "complete":
            _no_usage(api, stream=True)
        return Parsed(message, events, error)
    if status >= 400:
        return Parsed(adapter.from_wire_response(WireResponse(_error_body(raw, api), status), ctx), [])
    try:
        value = loads_strict(raw)
    except ValueError as exc:  # UnicodeDecodeError included: a JSON body is UTF-8 text
        raise InputError(f"response is neither JSON nor a stream: {exc}") from None
    if api is not None:
        # the independent oracle: the body must be what the provider documents, but for
        # the departures its schema tolerates (`x-tolerate`), each a WARN line
        r = wire_schemas.reader(api, "response")
        reading = r.read(value) if r is not None else None
        if reading is not None and reading.error is not None:
            e = reading.error
            raise WireFormatError(f"{e.pointer or '/'}: {e.message} ({api.name} response schema)")
        _warn_departures(api, "response", [(None, d) for d in (reading.departures if reading else ())], ())
    message = adapter.from_wire_response(WireResponse(value, status), ctx)
    meta = message.get("metadata") or {}
    if not meta.get("usage") and meta.get("status", "complete") == "complete":
        _no_usage(api, stream=False)
    return Parsed(message, [])


def _no_usage(api: WireApi | None, *, stream: bool) -> None:
    """The WARN line for a reply that carried no usage: `wire parse` has no request to
    estimate from (contract §7.2's fallback), so the message it prints keeps `usage` null,
    which a complete assistant message may not have (canonical §5.3.3, TS106)."""
    asked = api.stream_usage_request if api is not None and stream else None
    why = ""
    if api is not None and asked is not None:
        why = f" ({api.name} reports it on a stream only when the request sets {asked[0]} to {json.dumps(asked[1])})"
    _log.warning(
        "the %s carried no usage%s; the message's metadata.usage is null, which canonical §5.3.3 requires "
        "on a complete assistant message (TS106)",
        "stream" if stream else "reply",
        why,
        extra={"event": "usage_missing"},
    )


def _error_body(raw: bytes, api: WireApi | None) -> Any:
    """The body of an HTTP error, for the adapter to classify. Adapter contract §6.2 maps
    the HTTP status to an error class whatever the body says, so a body in another shape
    than the API's error schema (a proxy's `{"detail": ...}`, `"error": "text"`, an HTML
    page, nothing at all) is not refused: a WARN line names the first member off the
    schema, and a body that is not JSON reaches the adapter as its text."""
    text = raw.decode("utf-8", errors="replace")
    try:
        body = loads_strict(raw)
    except ValueError:
        _log.warning("HTTP error body is not JSON (%d characters); classified by its status", len(text))
        return text
    v = wire_schemas.validator(api, "error") if api is not None else None
    if api is not None and v is not None and not v.is_valid(body):
        e = v.errors(body)[0]
        _log.warning(
            "HTTP error body is not the %s error shape at %s (%s); classified by its status",
            api.name,
            e.pointer or "/",
            e.message,
        )
    return body


__all__ = [
    "Conversation",
    "Parsed",
    "RenderRefused",
    "StreamShape",
    "check_event_sequence",
    "check_stream_framing",
    "default_model",
    "looks_like_sse",
    "parse",
    "read_conversation",
    "render",
    "to_wire",
]
