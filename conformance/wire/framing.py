"""Cutting a streamed response body into events: SSE, NDJSON and a streamed JSON array.

Every decoder is incremental (chunks may split lines, fields, JSON values and UTF-8
sequences anywhere), strict (a body that is not the framing it claims is a `FramingError`
naming the event and line where it went wrong) and bounded (no event may exceed
`MAX_EVENT_BYTES`, no JSON value may nest deeper than `MAX_DEPTH`, and NaN/Infinity are
not JSON). The decoders know nothing of any provider: what an event *means* is the
adapter's business; the `WireApi` record says which framing an API uses.

Written here rather than taken from a library because the maintained SSE packages
(httpx-sse, sseclient) wrap an HTTP response object, while an adapter receives bytes from
a harness that owns the transport; and no maintained package decodes a JSON array
element by element from arbitrary chunks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from .api import Framing

MAX_EVENT_BYTES = 32 * 1024 * 1024
MAX_DEPTH = 512


class FramingError(ValueError):
    """A stream body that breaks its framing; `event` and `line` locate the offending event
    (0-based event index, 1-based line), when known."""

    def __init__(self, message: str, *, event: int | None = None, line: int | None = None) -> None:
        where = ", ".join(
            p for p in (f"event {event}" if event is not None else "", f"line {line}" if line else "") if p
        )
        super().__init__(f"{where}: {message}" if where else message)
        self.reason = message
        self.event = event
        self.line = line


@dataclass(frozen=True)
class SseEvent:
    """One Server-Sent Event: its `event:` name ("message" when absent) and joined `data:`."""

    event: str
    data: str
    index: int = 0  # position among the stream's events, from 0
    line: int = 0  # line of the event's first field, from 1


@dataclass(frozen=True)
class JsonEvent:
    """One decoded JSON value of an NDJSON or JSON-array stream."""

    value: Any
    index: int
    line: int


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


class Decoder(Protocol):
    def feed(self, chunk: bytes | str) -> list[Any]: ...

    def close(self) -> list[Any]: ...


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
    """Bytes in, complete lines out (CR, LF or CRLF), each with its 1-based number."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self.line = 0

    def feed(self, chunk: bytes | str) -> Iterator[tuple[int, bytes]]:
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
            self.line += 1
            yield self.line, text

    def rest(self) -> tuple[int, bytes] | None:
        if not self._buf:
            return None
        text = bytes(self._buf.rstrip(b"\r"))
        self._buf.clear()
        self.line += 1
        return self.line, text


class SseDecoder:
    """Incremental Server-Sent Events decoder (WHATWG HTML §9.2.6 "event stream interpretation").

    Lines that are neither a field nor a comment are ignored, as the standard says; strict
    about what the standard leaves no room for: bytes that are not UTF-8, an event too big.
    A stream that ends inside an event (no blank line after its last field) still yields
    that event, as browsers do; whether the stream was complete is for the adapter to judge
    from the events (a missing terminal event).
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
        for n, raw in self._lines.feed(chunk):
            self._line(n, raw, out)
        return out

    def close(self) -> list[SseEvent]:
        out: list[SseEvent] = []
        rest = self._lines.rest()
        if rest is not None:
            self._line(*rest, out)
        self._line(self._lines.line + 1, b"", out)
        return out

    def _line(self, n: int, raw: bytes, out: list[SseEvent]) -> None:
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FramingError(f"not UTF-8 ({exc.reason} at byte {exc.start})", event=self._count, line=n) from None
        if not line:
            if self._data:
                out.append(SseEvent(self._event or "message", "\n".join(self._data), self._count, self._first_line))
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
        return [e for n, raw in self._lines.feed(chunk) if (e := self._one(n, raw)) is not None]

    def close(self) -> list[JsonEvent]:
        rest = self._lines.rest()
        if rest is None:
            return []
        e = self._one(*rest)
        return [e] if e is not None else []

    def _one(self, n: int, raw: bytes) -> JsonEvent | None:
        if not raw.strip():
            return None
        try:
            value = loads_strict(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            raise FramingError(f"not a JSON line: {exc}", event=self._count, line=n) from None
        if not isinstance(value, dict):
            raise FramingError(f"a JSON {type(value).__name__}, not an object", event=self._count, line=n)
        ev = JsonEvent(value, self._count, n)
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
        ev = JsonEvent(value, self._count, self._elem_line)
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


def decoder_for(framing: Framing) -> SseDecoder | NdjsonDecoder | JsonArrayDecoder:
    if framing is Framing.SSE:
        return SseDecoder()
    if framing is Framing.NDJSON:
        return NdjsonDecoder()
    return JsonArrayDecoder()


def sse_events(chunks: Iterable[bytes | str]) -> Iterator[SseEvent]:
    dec = SseDecoder()
    for c in chunks:
        yield from dec.feed(c)
    yield from dec.close()


def json_events(framing: Framing, chunks: Iterable[bytes | str]) -> Iterator[JsonEvent]:
    """The JSON values of an NDJSON or JSON-array stream, or the `data:` of an SSE stream
    decoded as JSON (events whose data is not JSON, such as `[DONE]`, are skipped)."""
    if framing is Framing.SSE:
        for ev in sse_events(chunks):
            try:
                value = loads_strict(ev.data)
            except ValueError:
                continue
            yield JsonEvent(value, ev.index, ev.line)
        return
    dec: NdjsonDecoder | JsonArrayDecoder = NdjsonDecoder() if framing is Framing.NDJSON else JsonArrayDecoder()
    for c in chunks:
        yield from dec.feed(c)
    yield from dec.close()


def looks_framed(framing: Framing, text: str) -> bool:
    """Whether a recorded body's start is that of a stream in `framing` (for cassettes whose
    content-type does not say): SSE starts with a field, NDJSON with an object line followed
    by another line, a JSON array with '['."""
    head = text.lstrip()[:400]
    if framing is Framing.SSE:
        return head.startswith(("event:", "data:", "id:", ":"))
    if framing is Framing.JSON_ARRAY:
        return head.startswith("[")
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return len(lines) > 1 and all(ln.lstrip().startswith("{") for ln in lines[:3])
