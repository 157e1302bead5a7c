"""Cutting a streamed response body into frames: one `Framing` value per framing, in one registry.

A framing is a small frozen value (`Framing`): its name, the media types that announce it,
how a body that uses it starts (and, where the bytes alone identify it, a detector), an
incremental decoder from bytes to frames, and how one frame reads as a JSON event. The
built-in ones are here (SSE, NDJSON, a streamed JSON array) and in `wire.eventstream`
(AWS event-stream, binary); `wire.registry` lists them, and a third party adds its own
with `registry.register_framing(...)` or an entry point in the `turnspec.framings` group.

Bodies are bytes end to end: a decoder gets the bytes that were recorded, and only a
framing whose frames are text (SSE, NDJSON, JSON) decodes them, as UTF-8, frame by frame.

Every decoder is incremental (chunks may split lines, fields, JSON values, binary
preludes and UTF-8 sequences anywhere), strict (a body that is not the framing it claims
is a `FramingError` naming the event and the line, or the byte offset, where it went
wrong) and bounded (no event may exceed `MAX_EVENT_BYTES`, no JSON value may nest deeper
than `MAX_DEPTH`, and NaN/Infinity are not JSON). The decoders know nothing of any
provider: what an event *means* is the adapter's business; the `WireApi` record says which
framing an API uses. Every frame carries `end`, the offset in the body just past it (TC607
cuts the body there).

Written here rather than taken from a library because the maintained SSE packages
(httpx-sse, sseclient) wrap an HTTP response object, while an adapter receives bytes from
a harness that owns the transport; and no maintained package decodes a JSON array
element by element from arbitrary chunks.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

MAX_EVENT_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 512


class FramingError(ValueError):
    """A stream body that breaks its framing; `event`, `line` and `offset` locate the
    offending event (0-based event index, 1-based line, 0-based byte offset in the body),
    when known."""

    def __init__(
        self, message: str, *, event: int | None = None, line: int | None = None, offset: int | None = None
    ) -> None:
        parts = (
            f"event {event}" if event is not None else "",
            f"line {line}" if line else "",
            f"byte {offset}" if offset is not None else "",
        )
        where = ", ".join(p for p in parts if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
        self.event = event
        self.line = line
        self.offset = offset


class ProviderStreamError(Exception):
    """A frame in which the provider reports an error instead of an event (AWS event-stream
    `:message-type` `exception` or `error`): not a framing defect but the provider's error,
    which `adapters.streams` turns into the adapter contract's error class."""

    def __init__(
        self, kind: str, message: str, *, event: int | None = None, payload: Any = None, offset: int | None = None
    ) -> None:
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind  # the provider's name for the error (`:exception-type`, `:error-code`)
        self.message = message
        self.event = event
        self.payload = payload
        self.offset = offset


@dataclass(frozen=True)
class SseEvent:
    """One Server-Sent Event: its `event:` name ("message" when absent) and joined `data:`."""

    event: str
    data: str
    index: int = 0  # position among the stream's events, from 0
    line: int = 0  # line of the event's first field, from 1
    end: int = 0  # offset in the body just past the blank line that dispatched it


@dataclass(frozen=True)
class JsonEvent:
    """One decoded JSON value of a stream (an NDJSON line, a JSON-array element, the JSON
    payload of an SSE or event-stream frame)."""

    value: Any
    index: int
    line: int
    end: int = 0  # offset in the body just past the frame that carried it


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth_ok(text: str) -> bool:
    """False when brackets outside strings nest deeper than MAX_DEPTH (checked before
    json.loads, whose recursion would otherwise hit the interpreter's limit)."""
    depth = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def loads_strict(text: str | bytes) -> Any:
    """JSON as the RFC defines it: no NaN/Infinity, bounded nesting. Raises ValueError."""
    s = text.decode("utf-8") if isinstance(text, bytes) else text
    if not _depth_ok(s):
        raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return json.loads(s, parse_constant=_reject_constant)


class FrameDecoder(Protocol):
    """Bytes in, frames out: `feed` any chunk of the body, `close` at its end (a body that
    stops inside a frame is a `FramingError` where the framing says so)."""

    def feed(self, chunk: bytes | str) -> list[Any]: ...

    def close(self) -> list[Any]: ...


Decoder = FrameDecoder


def _line_end(buf: bytes | bytearray, start: int = 0) -> tuple[int, int] | None:
    """(end of line, start of next) for the first CR, LF or CRLF at or after `start`."""
    lf = buf.find(b"\n", start)
    cr = buf.find(b"\r", start, lf if lf != -1 else len(buf))
    if cr != -1:
        if cr + 1 == len(buf):
            return None  # a CR at the end may be the first half of CRLF
        return cr, cr + 2 if buf[cr + 1] == 0x0A else cr + 1
    if lf != -1:
        return lf, lf + 1
    return None


class _Lines:
    """Bytes in, complete lines out (CR, LF or CRLF), each with its 1-based number and the
    offset in the body just past its line break."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._base = 0  # offset in the body of _buf[0]
        self.line = 0

    def feed(self, chunk: bytes | str) -> Iterator[tuple[int, bytes, int]]:
        self._buf += chunk.encode() if isinstance(chunk, str) else chunk
        while True:
            cut = _line_end(self._buf)
            if cut is None:
                if len(self._buf) > MAX_EVENT_BYTES:
                    raise FramingError(f"a line longer than {MAX_EVENT_BYTES} bytes", line=self.line + 1)
                return
            end, nxt = cut
            text = bytes(self._buf[:end])
            del self._buf[:nxt]
            self._base += nxt
            self.line += 1
            yield self.line, text, self._base

    def rest(self) -> tuple[int, bytes, int, bool] | None:
        """The last line, at the end of the body: (number, text, end, whether a line break
        ended it: only a CR, held back as the possible first half of a CRLF, can)."""
        if not self._buf:
            return None
        terminated = self._buf.endswith(b"\r")
        text = bytes(self._buf.rstrip(b"\r"))
        self._base += len(self._buf)
        self._buf.clear()
        self.line += 1
        return self.line, text, self._base, terminated


class SseDecoder:
    """Incremental Server-Sent Events decoder (WHATWG HTML §9.2.6 "event stream interpretation").

    As the standard says: a leading U+FEFF BOM is dropped; lines that are neither a field
    nor a comment are ignored; a `data` field appends its value and a line feed to the data
    buffer (so an empty `data:` still makes an event, whose data is ""); a blank line
    dispatches the event unless its data buffer is empty (an `event:` alone is no event);
    and at the end of the body a pending event is discarded: one with no blank line after
    it is never dispatched (a cut stream loses its last event, which the adapter notices
    as a missing terminal event). Strict about what the standard leaves no room for: bytes
    that are not UTF-8, an event too big.
    """

    def __init__(self) -> None:
        self._lines = _Lines()
        self._event = ""
        self._data: list[str] = []
        self._size = 0
        self._first_line = 0
        self._count = 0

    def feed(self, chunk: bytes | str) -> list[SseEvent]:
        out: list[SseEvent] = []
        for n, raw, end in self._lines.feed(chunk):
            self._line(n, raw, end, out)
        return out

    def close(self) -> list[SseEvent]:
        out: list[SseEvent] = []
        rest = self._lines.rest()
        if rest is not None:
            n, raw, end, terminated = rest
            if terminated:  # a final lone CR ends its line: the line counts
                self._line(n, raw, end, out)
        return out  # WHATWG: at the end of the body "any pending data must be discarded"

    def _line(self, n: int, raw: bytes, end: int, out: list[SseEvent]) -> None:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FramingError(f"not UTF-8 ({exc.reason} at byte {exc.start})", event=self._count, line=n) from None
        if n == 1:
            line = line.removeprefix("\ufeff")
        if not line:
            if self._data:
                data = "\n".join(self._data)
                out.append(SseEvent(self._event or "message", data, self._count, self._first_line, end))
                self._count += 1
            self._event, self._data, self._size, self._first_line = "", [], 0, 0
            return
        if line.startswith(":"):
            return
        if not self._first_line:
            self._first_line = n
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._size += len(value)
            if self._size > MAX_EVENT_BYTES:
                raise FramingError(f"event larger than {MAX_EVENT_BYTES} bytes", event=self._count, line=n)
            self._data.append(value)


class NdjsonDecoder:
    """Newline-delimited JSON (one JSON object per line; blank lines ignored), as Ollama streams."""

    def __init__(self) -> None:
        self._lines = _Lines()
        self._count = 0

    def feed(self, chunk: bytes | str) -> list[JsonEvent]:
        return [e for n, raw, end in self._lines.feed(chunk) if (e := self._one(n, raw, end)) is not None]

    def close(self) -> list[JsonEvent]:
        rest = self._lines.rest()
        if rest is None:
            return []
        n, raw, end, _terminated = rest
        e = self._one(n, raw, end)
        return [e] if e is not None else []

    def _one(self, n: int, raw: bytes, end: int) -> JsonEvent | None:
        if not raw.strip():
            return None
        try:
            value = loads_strict(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise FramingError(f"not a JSON line: {exc}", event=self._count, line=n) from None
        if not isinstance(value, dict):
            raise FramingError(f"a JSON {type(value).__name__}, not an object", event=self._count, line=n)
        ev = JsonEvent(value, self._count, n, end)
        self._count += 1
        return ev


class JsonArrayDecoder:
    """A JSON array streamed element by element (Gemini's streamGenerateContent without
    `alt=sse`): yields each top-level element as soon as it is complete."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._pos = 0  # scan position in _buf
        self._started = False
        self._ended = False
        self._depth = 0
        self._in_str = False
        self._esc = False
        self._elem_start: int | None = None
        self._line = 1
        self._elem_line = 1
        self._count = 0
        self._expect_value = True  # after '[' or ',': a value must come (no `[,` nor `,]`)
        self._base = 0  # offset in the body of _buf[0]

    def _err(self, message: str) -> FramingError:
        return FramingError(message, event=self._count, line=self._line)

    def feed(self, chunk: bytes | str) -> list[JsonEvent]:
        self._buf += chunk.encode() if isinstance(chunk, str) else chunk
        out: list[JsonEvent] = []
        buf = self._buf
        i = self._pos
        while i < len(buf):
            c = buf[i]
            if c == 0x0A:
                self._line += 1
            if self._ended:
                if c not in b" \t\r\n":
                    raise self._err("data after the end of the array")
            elif not self._started:
                if c == ord("["):
                    self._started = True
                elif c not in b" \t\r\n":
                    raise self._err("a JSON-array stream must start with '['")
            elif self._in_str:
                if self._esc:
                    self._esc = False
                elif c == ord("\\"):
                    self._esc = True
                elif c == ord('"'):
                    self._in_str = False
            elif self._elem_start is None:
                if c == ord("]"):
                    if self._expect_value and self._count:
                        raise self._err("']' after ','")
                    self._ended = True
                elif c == ord(","):
                    if self._expect_value:
                        raise self._err("',' where an element should be")
                    self._expect_value = True
                elif c not in b" \t\r\n":
                    if not self._expect_value:
                        raise self._err("two elements without ',' between them")
                    self._elem_start, self._elem_line = i, self._line
                    self._depth = 0
                    continue  # rescan this byte as part of the element
            elif c == ord('"'):
                self._in_str = True
            elif c in b"[{":
                self._depth += 1
                if self._depth > MAX_DEPTH:
                    raise self._err(f"JSON nested deeper than {MAX_DEPTH} levels")
            elif c in b"]}":
                if self._depth == 0:  # the array's own ']' right after a scalar element
                    out.append(self._emit(i))
                    continue  # rescan the ']' between elements
                self._depth -= 1
                if self._depth == 0:
                    out.append(self._emit(i + 1))
            elif c == ord(",") and self._depth == 0:
                out.append(self._emit(i))
                continue  # rescan the ',' between elements
            i += 1
            if self._elem_start is not None and i - self._elem_start > MAX_EVENT_BYTES:
                raise self._err(f"element larger than {MAX_EVENT_BYTES} bytes")
        keep = self._elem_start if self._elem_start is not None else i
        del buf[:keep]
        self._base += keep
        if self._elem_start is not None:
            self._elem_start = 0
        self._pos = i - keep
        return out

    def _emit(self, end: int) -> JsonEvent:
        assert self._elem_start is not None
        raw = bytes(self._buf[self._elem_start : end])
        try:
            value = loads_strict(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise FramingError(f"element is not JSON: {exc}", event=self._count, line=self._elem_line) from None
        ev = JsonEvent(value, self._count, self._elem_line, self._base + end)
        self._count += 1
        self._elem_start = None
        self._expect_value = False
        self._depth = 0
        return ev

    def close(self) -> list[JsonEvent]:
        if not self._started:
            raise self._err("empty body: a JSON-array stream must start with '['")
        if not self._ended:
            raise self._err("stream ended before the array's closing ']'")
        return []


def _never(_head: bytes) -> bool:
    return False


def _as_is(frame: Any) -> JsonEvent | None:
    return frame if isinstance(frame, JsonEvent) else None


@dataclass(frozen=True, eq=False)
class Framing:
    """One framing of streamed bodies, declared once and registered in `wire.registry`.

    `decoder()` makes a fresh incremental decoder (bytes in, frames out; a frame has
    `index` and `end`, the offset in the body just past it); `to_json(frame)` is the JSON
    event a frame carries (None: it carries none, as SSE `[DONE]`; it raises
    `ProviderStreamError` for a frame in which the provider reports an error);
    `media_types` announce it in a Content-Type; `looks(head)` says whether a body starts
    as this framing does (asked only when the API's record names this framing); `detect`,
    when given, recognises it from the bytes alone (no record, no content type). `text`:
    the frames are UTF-8 text (only such a framing decodes bytes to `str`)."""

    name: str
    decoder: Callable[[], FrameDecoder]
    to_json: Callable[[Any], JsonEvent | None] = _as_is
    media_types: tuple[str, ...] = ()
    looks: Callable[[bytes], bool] = _never
    detect: Callable[[bytes], bool] | None = None
    text: bool = True
    title: str = ""
    # a nested framing's outer framing (`nested`): what the bytes on the wire are
    outer: Framing | None = None

    # the built-in text framings, spelled as the enum this class replaced spelled them
    SSE: ClassVar[Framing]
    NDJSON: ClassVar[Framing]
    JSON_ARRAY: ClassVar[Framing]

    @property
    def value(self) -> str:
        """The name (the enum this class replaced called it its value)."""
        return self.name

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Framing({self.name!r})"

    def frames(self, chunks: Iterable[bytes | str]) -> Iterator[Any]:
        dec = self.decoder()
        for c in chunks:
            yield from dec.feed(c)
        yield from dec.close()

    def json_events(self, chunks: Iterable[bytes | str]) -> Iterator[JsonEvent]:
        for frame in self.frames(chunks):
            ev = self.to_json(frame)
            if ev is not None:
                yield ev

    def frame_ends(self, body: bytes) -> list[int]:
        """The offsets in `body` just past each frame (TC607 cuts the body there); none
        past the point where the body breaks the framing."""
        ends: list[int] = []
        try:
            for frame in self.frames([body]):
                end = getattr(frame, "end", None)
                # a nested framing's events share the end of the outer frame they came in
                if isinstance(end, int) and 0 < end <= len(body) and (not ends or ends[-1] != end):
                    ends.append(end)
        except (FramingError, ProviderStreamError):
            pass
        return ends

    def announced_by(self, content_type: str) -> bool:
        """Whether a Content-Type header value names one of this framing's media types."""
        media = content_type.split(";", 1)[0].strip().lower()
        return bool(media) and media in self.media_types


def _sse_json(frame: Any) -> JsonEvent | None:
    if not isinstance(frame, SseEvent):
        return None
    try:
        value = loads_strict(frame.data)
    except ValueError:
        return None  # data that is not JSON, such as `[DONE]`
    return JsonEvent(value, frame.index, frame.line, frame.end)


def _sse_looks(head: bytes) -> bool:
    text = head[:400].decode("utf-8", errors="replace").removeprefix("\ufeff").lstrip()
    return text.startswith(("event:", "data:", "id:", ":"))


def _array_looks(head: bytes) -> bool:
    return head.lstrip()[:1] == b"["


def _ndjson_looks(head: bytes) -> bool:
    lines = [ln for ln in head.strip().splitlines() if ln.strip()]
    return len(lines) > 1 and all(ln.lstrip().startswith(b"{") for ln in lines[:3])


Framing.SSE = Framing(
    "sse",
    SseDecoder,
    _sse_json,
    media_types=("text/event-stream",),
    looks=_sse_looks,
    detect=_sse_looks,
    title="Server-Sent Events (WHATWG HTML §9.2)",
)
Framing.NDJSON = Framing(
    "ndjson",
    NdjsonDecoder,
    media_types=("application/x-ndjson", "application/ndjson"),
    looks=_ndjson_looks,
    title="newline-delimited JSON (Ollama)",
)
Framing.JSON_ARRAY = Framing(
    "json-array",
    JsonArrayDecoder,
    looks=_array_looks,
    title="a JSON array streamed element by element (Gemini without alt=sse)",
)
SSE, NDJSON, JSON_ARRAY = Framing.SSE, Framing.NDJSON, Framing.JSON_ARRAY


# -- framings composed: a framing applied to the payload of another ---------------------

Payload = Callable[[Any], bytes | None]
"""What a nested framing reads out of one JSON event of its outer framing: the payload bytes
the inner framing decodes (None: the event carries none)."""


def base64_at(pointer: str) -> Payload:
    """A `nested` payload: the bytes a string at `pointer` (RFC 6901, object keys) of an outer
    event spells in base64 (AWS `chunk.bytes`: a Smithy Blob is "base64-encoded binary
    data" in JSON); None when the event has no such member. A value that is not base64
    (standard alphabet, padded) is a `FramingError`."""
    keys = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]

    def payload(value: Any) -> bytes | None:
        for k in keys:
            if not isinstance(value, dict) or k not in value:
                return None
            value = value[k]
        if not isinstance(value, str):
            raise FramingError(f"{pointer} is a {type(value).__name__}, not a base64 string")
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise FramingError(f"{pointer} is not base64 ({exc})") from None

    return payload


@dataclass(frozen=True)
class Raised:
    """A frame of a nested stream that is an error (the outer framing's, or the provider's),
    kept in its place: `nested` framings raise it when their `to_json` reaches it."""

    error: FramingError | ProviderStreamError
    end: int = 0


def _nested_json(frame: Any) -> JsonEvent | None:
    if isinstance(frame, Raised):
        raise frame.error
    return frame if isinstance(frame, JsonEvent) else None


class NestedDecoder:
    """The events of a stream inside a stream: each JSON event of `outer` yields the bytes
    `payload` reads from it, which are either one JSON value each (`inner` None) or, in
    order, a byte stream in the `inner` framing. Every event it gives carries the offset in
    the *outer* body just past the frame its payload came in (TC607 cuts the body there);
    an outer frame in which the provider reports an error raises `ProviderStreamError` as
    the outer framing does, in its place among the inner events."""

    def __init__(self, outer: Framing, payload: Payload, inner: Framing | None) -> None:
        self._outer, self._payload, self._inner = outer, payload, inner
        self._frames = outer.decoder()
        self._inner_dec = inner.decoder() if inner is not None else None
        self._count = 0
        self._end = 0
        self._failed = False

    def _one(self, frame: Any) -> list[Any]:
        try:
            ev = self._outer.to_json(frame)
            if ev is None:
                return []
            self._end = ev.end
            try:
                data = self._payload(ev.value)
            except FramingError as exc:
                raise FramingError(exc.reason, event=ev.index, offset=getattr(frame, "offset", None)) from None
            return [] if data is None else self._inner_events(data, ev)
        except (FramingError, ProviderStreamError) as exc:
            # in its place among the events: those decoded before it in the same chunk are
            # still given (its framing's `to_json` raises it when it comes to it)
            self._failed = True
            return [Raised(exc)]

    def _many(self, frames: list[Any]) -> list[Any]:
        out: list[Any] = []
        for f in frames:
            if self._failed:
                break
            out += self._one(f)
        return out

    def _inner_events(self, data: bytes, ev: JsonEvent) -> list[JsonEvent]:
        if self._inner is None or self._inner_dec is None:
            try:
                value = loads_strict(data)
            except (ValueError, UnicodeDecodeError) as exc:
                raise FramingError(f"payload is not JSON: {exc}", event=ev.index, offset=None) from None
            out = [JsonEvent(value, self._count, 0, ev.end)]
        else:
            found = self._inner_json(self._inner_dec.feed(data))
            out = [JsonEvent(j.value, self._count + k, j.line, ev.end) for k, j in enumerate(found)]
        self._count += len(out)
        return out

    def _inner_json(self, frames: list[Any]) -> list[JsonEvent]:
        assert self._inner is not None
        return [e for e in map(self._inner.to_json, frames) if e is not None]

    def feed(self, chunk: bytes | str) -> list[Any]:
        if self._failed:
            return []
        try:
            return self._many(self._frames.feed(chunk))
        except FramingError as exc:
            self._failed = True
            return [Raised(exc)]

    def close(self) -> list[Any]:
        if self._failed:
            return []
        try:
            out = self._many(self._frames.close())
        except FramingError as exc:
            self._failed = True
            return [Raised(exc)]
        if not self._failed and self._inner is not None and self._inner_dec is not None:
            tail = self._inner_json(self._inner_dec.close())
            out += [JsonEvent(j.value, self._count + k, j.line, self._end) for k, j in enumerate(tail)]
            self._count += len(tail)
        return out


def nested(name: str, outer: Framing, payload: Payload, inner: Framing | None = None, *, title: str = "") -> Framing:
    """A framing applied to the payload of another (AWS event stream -> the base64 JSON of
    `chunk.bytes` -> the inner API's events: Anthropic models through Bedrock
    InvokeModelWithResponseStream). A record names it as its `framing`, which decodes its
    cassettes whatever else claims their media type (the outer's, announced on the wire);
    it is not registered under that media type (`registry.register_framing` refuses a
    second framing of one media type), nor detected from bytes alone."""
    return Framing(
        name,
        lambda: NestedDecoder(outer, payload, inner),
        _nested_json,
        media_types=outer.media_types,
        looks=outer.looks,
        text=outer.text,
        title=title or f"{inner.name if inner is not None else 'JSON'} in the payloads of {outer.name}",
        outer=outer,
    )


def decoder_for(framing: Framing) -> FrameDecoder:
    return framing.decoder()


def sse_events(chunks: Iterable[bytes | str]) -> Iterator[SseEvent]:
    dec = SseDecoder()
    for c in chunks:
        yield from dec.feed(c)
    yield from dec.close()


def json_events(framing: Framing, chunks: Iterable[bytes | str]) -> Iterator[JsonEvent]:
    """The JSON events of a stream in `framing`: NDJSON lines, JSON-array elements, the
    `data:` of SSE events decoded as JSON (events whose data is not JSON, such as
    `[DONE]`, are skipped), the payloads of event-stream frames."""
    return framing.json_events(chunks)


def looks_framed(framing: Framing, body: bytes | str) -> bool:
    """Whether a recorded body's start is that of a stream in `framing` (for cassettes whose
    content-type does not say): SSE starts with a field, NDJSON with an object line followed
    by another line, a JSON array with '['."""
    return framing.looks(body.encode() if isinstance(body, str) else body)
