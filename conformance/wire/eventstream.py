"""AWS event-stream (`application/vnd.amazon.eventstream`): the binary framing of Bedrock's
ConverseStream / InvokeModelWithResponseStream, Transcribe and S3 Select streams.

Each message, from the AWS spec ("Event stream encoding", Amazon Transcribe and S3
developer guides): a 12-byte prelude (total length u32, headers length u32, CRC32 of those
8 bytes), the headers, the payload, and a CRC32 of everything before it. A header is a
name (u8 length, bytes), a value type (u8) and a value whose size the type fixes. Both
CRCs are checked (`zlib.crc32`); a frame that breaks them, or a body that ends inside a
frame, is a `FramingError` with the frame's index and byte offset.

`:message-type` says what a frame is: `event` (its `:event-type` names it; the payload is
JSON for the APIs turnspec knows), `exception` (`:exception-type`, a modelled error of the
service, e.g. Bedrock's `throttlingException`) or `error` (`:error-code`,
`:error-message`). The JSON event of an `event` frame is `{event-type: payload}`, the
shape boto3 gives (`{"contentBlockDelta": {...}}`); an exception or error frame raises
`ProviderStreamError`, which `adapters.streams` turns into the adapter contract's error.

Written here rather than taken from botocore (`botocore.eventstream.EventStreamBuffer`),
which is not a dependency of turnspec and would pull the whole AWS client in for 150 lines.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .framing import Framing, FramingError, JsonEvent, ProviderStreamError, loads_strict

MEDIA_TYPE = "application/vnd.amazon.eventstream"
PRELUDE_BYTES = 12  # total length, headers length, prelude CRC
MIN_MESSAGE_BYTES = PRELUDE_BYTES + 4  # an empty message: prelude and message CRC
MAX_HEADERS_BYTES = 128 * 1024  # the bounds botocore applies
MAX_PAYLOAD_BYTES = 16 * 1024 * 1024

HeaderValue = bool | int | bytes | str | datetime | uuid.UUID

# value type -> fixed size in bytes (None: a u16 length prefix, then that many bytes)
_FIXED: dict[int, int | None] = {0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 6: None, 7: None, 8: 8, 9: 16}
_INTS = {2: ">b", 3: ">h", 4: ">i", 5: ">q"}


@dataclass(frozen=True)
class EventStreamMessage:
    """One decoded event-stream message: its headers, raw payload and place in the body."""

    headers: Mapping[str, HeaderValue]
    payload: bytes
    index: int  # position among the stream's messages, from 0
    offset: int  # offset in the body of its first byte
    end: int  # offset in the body just past its message CRC
    line: int = field(default=0, repr=False)  # a binary framing has no lines

    def _str(self, name: str) -> str | None:
        value = self.headers.get(name)
        return value if isinstance(value, str) else None

    @property
    def message_type(self) -> str:
        return self._str(":message-type") or "event"

    @property
    def event_type(self) -> str | None:
        return self._str(":event-type")

    @property
    def exception_type(self) -> str | None:
        return self._str(":exception-type")

    @property
    def content_type(self) -> str | None:
        return self._str(":content-type")


def _prelude(head: bytes | bytearray) -> tuple[int, int, int, int]:
    total, headers_len, crc = struct.unpack_from(">III", head, 0)
    return total, headers_len, crc, zlib.crc32(bytes(head[:8]))


def parse_headers(raw: bytes, *, event: int | None = None, offset: int = 0) -> dict[str, HeaderValue]:
    """The headers block of one message (`offset`: where it starts in the body, for errors)."""
    out: dict[str, HeaderValue] = {}
    i = 0

    def need(n: int, what: str) -> None:
        if i + n > len(raw):
            raise FramingError(f"header block ends inside {what}", event=event, offset=offset + i)

    while i < len(raw):
        need(1, "a header name length")
        name_len = raw[i]
        i += 1
        need(name_len, "a header name")
        try:
            name = raw[i : i + name_len].decode("utf-8")
        except UnicodeDecodeError:
            raise FramingError("header name is not UTF-8", event=event, offset=offset + i) from None
        i += name_len
        need(1, f"the value type of header {name!r}")
        kind = raw[i]
        i += 1
        if kind not in _FIXED:
            raise FramingError(f"header {name!r}: unknown value type {kind}", event=event, offset=offset + i - 1)
        size = _FIXED[kind]
        if size is None:
            need(2, f"the value length of header {name!r}")
            (size,) = struct.unpack_from(">H", raw, i)
            i += 2
        need(size, f"the value of header {name!r}")
        chunk = raw[i : i + size]
        value: HeaderValue
        if kind in (0, 1):
            value = kind == 0
        elif kind in _INTS:
            (value,) = struct.unpack(_INTS[kind], chunk)
        elif kind == 6:
            value = bytes(chunk)
        elif kind == 7:
            try:
                value = chunk.decode("utf-8")
            except UnicodeDecodeError:
                raise FramingError(
                    f"header {name!r}: string value is not UTF-8", event=event, offset=offset + i
                ) from None
        elif kind == 8:
            (ms,) = struct.unpack(">q", chunk)
            value = datetime.fromtimestamp(ms / 1000, tz=UTC)
        else:
            value = uuid.UUID(bytes=bytes(chunk))
        i += size
        out[name] = value
    return out


class EventStreamDecoder:
    """Incremental AWS event-stream decoder: bytes in (any chunking), messages out."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._base = 0  # offset in the body of _buf[0]
        self._count = 0
        self._checked = False  # the prelude of the message at _buf[0] was checked

    def _err(self, message: str, at: int = 0) -> FramingError:
        return FramingError(message, event=self._count, offset=self._base + at)

    def feed(self, chunk: bytes | str) -> list[EventStreamMessage]:
        if isinstance(chunk, str):
            raise self._err("a binary framing got text: chunks must be the recorded bytes")
        self._buf += chunk
        out: list[EventStreamMessage] = []
        while len(self._buf) >= PRELUDE_BYTES:
            total, headers_len, crc, want = _prelude(self._buf)
            if not self._checked:
                if crc != want:
                    raise self._err(f"prelude CRC32 is {crc:#010x}, its bytes give {want:#010x}", 8)
                if total < MIN_MESSAGE_BYTES or headers_len > total - MIN_MESSAGE_BYTES:
                    raise self._err(f"total length {total} cannot hold a {headers_len}-byte header block")
                if headers_len > MAX_HEADERS_BYTES or total - headers_len - MIN_MESSAGE_BYTES > MAX_PAYLOAD_BYTES:
                    raise self._err(
                        f"message larger than the bounds ({MAX_HEADERS_BYTES} header, {MAX_PAYLOAD_BYTES} payload bytes)"
                    )
                self._checked = True
            if len(self._buf) < total:
                break
            msg = bytes(self._buf[:total])
            (crc,) = struct.unpack_from(">I", msg, total - 4)
            want = zlib.crc32(msg[: total - 4])
            if crc != want:
                raise self._err(f"message CRC32 is {crc:#010x}, its bytes give {want:#010x}", total - 4)
            headers = parse_headers(
                msg[PRELUDE_BYTES : PRELUDE_BYTES + headers_len], event=self._count, offset=self._base + PRELUDE_BYTES
            )
            payload = msg[PRELUDE_BYTES + headers_len : total - 4]
            out.append(EventStreamMessage(headers, payload, self._count, self._base, self._base + total))
            del self._buf[:total]
            self._base += total
            self._count += 1
            self._checked = False
        return out

    def close(self) -> list[EventStreamMessage]:
        if self._buf:
            have = len(self._buf)
            if have < PRELUDE_BYTES:
                raise self._err(f"body ends inside a message prelude ({have} of {PRELUDE_BYTES} bytes)")
            total = _prelude(self._buf)[0]
            raise self._err(f"body ends inside a message ({have} of its {total} bytes): a truncated frame")
        return []


def _error_message(payload: Any, headers: Mapping[str, HeaderValue]) -> str:
    if isinstance(payload, Mapping):
        for key in ("message", "Message", "errorMessage"):
            if isinstance(payload.get(key), str):
                return str(payload[key])
    text = headers.get(":error-message")
    return text if isinstance(text, str) else ""


def to_json(frame: Any) -> JsonEvent | None:
    """The JSON event of an `event` frame (`{event-type: payload}`); an `exception` or
    `error` frame raises `ProviderStreamError`; a frame whose payload is declared to be
    something other than JSON carries no JSON event."""
    if not isinstance(frame, EventStreamMessage):
        return None
    payload: Any = None
    ctype = frame.content_type
    if frame.payload and (ctype is None or "json" in ctype):
        try:
            payload = loads_strict(frame.payload)
        except (ValueError, UnicodeDecodeError) as exc:
            if frame.message_type == "event":
                raise FramingError(f"payload is not JSON: {exc}", event=frame.index, offset=frame.offset) from None
    kind = frame.message_type
    if kind in ("exception", "error"):
        name = frame.exception_type if kind == "exception" else frame.headers.get(":error-code")
        raise ProviderStreamError(
            str(name or kind),
            _error_message(payload, frame.headers),
            event=frame.index,
            payload=payload,
            offset=frame.offset,
        )
    if kind != "event":
        raise FramingError(f"unknown :message-type {kind!r}", event=frame.index, offset=frame.offset)
    if ctype is not None and "json" not in ctype:
        return None
    value = {} if payload is None else payload
    name = frame.event_type
    return JsonEvent({name: value} if name else value, frame.index, 0, frame.end)


def looks(head: bytes) -> bool:
    """A body that starts with a consistent prelude whose CRC32 holds (1 in 2**32 by chance)."""
    if len(head) < PRELUDE_BYTES:
        return False
    total, headers_len, crc, want = _prelude(head)
    return crc == want and total >= MIN_MESSAGE_BYTES and headers_len <= total - MIN_MESSAGE_BYTES


EVENT_STREAM = Framing(
    "aws-event-stream",
    EventStreamDecoder,
    to_json,
    media_types=(MEDIA_TYPE,),
    looks=looks,
    detect=looks,
    text=False,
    title="AWS event-stream (application/vnd.amazon.eventstream, binary)",
)
