"""Framings as plug-ins, bytes end to end: AWS event-stream frames built by hand from the
AWS spec (CRCs computed here with zlib.crc32, not by the decoder), the WHATWG SSE rules,
recorded binary bodies that reach a stream parser byte for byte, `wire parse` of a stream
that is not UTF-8, and a framing registered from outside the package."""

from __future__ import annotations

import base64
import gzip
import json
import struct
import uuid
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.adapters.anthropic import AnthropicAdapter
from conformance.adapters.errors import RateLimitError, WireFormatError
from conformance.adapters.protocol import RequestContext, StreamEvent
from conformance.adapters.streams import event_stream_events, event_stream_messages, framed_events
from conformance.cli import main
from conformance.suite.cassettes import load_cassette
from conformance.suite.checks.common import parse_stream
from conformance.wire import registry
from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES
from conformance.wire.api import Framing
from conformance.wire.eventstream import EVENT_STREAM, EventStreamMessage
from conformance.wire.framing import FramingError, JsonEvent, ProviderStreamError, json_events, sse_events

ROOT = Path(__file__).resolve().parents[1]

# -- AWS event-stream, encoded by hand from the spec -----------------------------------------


def _header(name: str, kind: int, value: bytes) -> bytes:
    n = name.encode()
    return bytes([len(n)]) + n + bytes([kind]) + value


def _str_header(name: str, value: str) -> bytes:
    v = value.encode()
    return _header(name, 7, struct.pack(">H", len(v)) + v)


def _message(headers: bytes, payload: bytes) -> bytes:
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def _event(event_type: str | None, payload: Any, extra: bytes = b"") -> bytes:
    headers = _str_header(":message-type", "event") + _str_header(":content-type", "application/json")
    if event_type is not None:
        headers += _str_header(":event-type", event_type)
    return _message(headers + extra, json.dumps(payload).encode())


ALL_TYPES = (
    _header("t", 0, b"")
    + _header("f", 1, b"")
    + _header("byte", 2, struct.pack(">b", -2))
    + _header("short", 3, struct.pack(">h", -300))
    + _header("int", 4, struct.pack(">i", 70000))
    + _header("long", 5, struct.pack(">q", 2**40))
    + _header("bytes", 6, struct.pack(">H", 3) + b"\xff\x00\xfe")
    + _header("time", 8, struct.pack(">q", 1_700_000_000_123))
    + _header("id", 9, uuid.UUID(int=7).bytes)
)
STREAM = (
    _event("messageStart", {"role": "assistant"}, ALL_TYPES)
    + _event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hé"}})
    + _message(b"", b"")  # no headers, no payload: an event (the default type) carrying {}
    + _event("messageStop", {"stopReason": "end_turn"})
)


def _values(chunks: Iterable[bytes]) -> list[Any]:
    return [e.value for e in json_events(EVENT_STREAM, chunks)]


WANT = [
    {"messageStart": {"role": "assistant"}},
    {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Hé"}}},
    {},
    {"messageStop": {"stopReason": "end_turn"}},
]


def test_event_stream_decodes_every_header_type():
    msgs = list(EVENT_STREAM.frames([STREAM]))
    assert [m.event_type for m in msgs] == ["messageStart", "contentBlockDelta", None, "messageStop"]
    h = msgs[0].headers
    assert (h["t"], h["f"], h["byte"], h["short"], h["int"], h["long"]) == (True, False, -2, -300, 70000, 2**40)
    assert h["bytes"] == b"\xff\x00\xfe" and h["id"] == uuid.UUID(int=7)
    assert h["time"] == datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)
    assert [m.end for m in msgs] == EVENT_STREAM.frame_ends(STREAM)
    assert msgs[-1].end == len(STREAM) and msgs[1].offset == msgs[0].end
    assert _values([STREAM]) == WANT


def test_event_stream_split_at_every_byte_boundary_gives_the_same_events():
    for k in range(1, len(STREAM)):
        assert _values([STREAM[:k], STREAM[k:]]) == WANT, k
    assert _values([STREAM[i : i + 1] for i in range(len(STREAM))]) == WANT


def test_a_corrupted_crc_is_located():
    second = len(_event("messageStart", {"role": "assistant"}, ALL_TYPES))
    bad_prelude = bytearray(STREAM)
    bad_prelude[second + 9] ^= 0x01  # the second message's prelude CRC
    with pytest.raises(FramingError) as exc:
        _values([bytes(bad_prelude)])
    assert (exc.value.event, exc.value.offset) == (1, second + 8) and "prelude CRC32" in str(exc.value)
    assert str(exc.value).startswith(f"event 1, byte {second + 8}: ")
    bad_payload = bytearray(STREAM)
    bad_payload[second + 60] ^= 0x20  # inside the second message's payload
    with pytest.raises(WireFormatError) as wexc:
        list(event_stream_messages([bytes(bad_payload)]))
    end = EVENT_STREAM.frame_ends(STREAM)[1]
    assert wexc.value.location == f"event 1, byte {end - 4}" and "message CRC32" in str(wexc.value)


@pytest.mark.parametrize("cut", [3, 11, 40])
def test_a_truncated_frame_is_located(cut):
    first = EVENT_STREAM.frame_ends(STREAM)[0]
    with pytest.raises(FramingError) as exc:
        _values([STREAM[: first + cut]])
    assert (exc.value.event, exc.value.offset) == (1, first)
    assert "body ends inside a message" in str(exc.value)


def test_an_exception_frame_is_a_provider_error():
    exc_frame = _message(
        _str_header(":message-type", "exception") + _str_header(":exception-type", "throttlingException"),
        json.dumps({"message": "Too many tokens, please wait."}).encode(),
    )
    body = _event("messageStart", {"role": "assistant"}) + exc_frame
    with pytest.raises(ProviderStreamError) as raw:
        _values([body])
    assert (raw.value.kind, raw.value.event) == ("throttlingException", 1)
    with pytest.raises(RateLimitError) as err:
        list(event_stream_events([body[:5], body[5:]]))
    assert err.value.error_class == "rate_limit" and "Too many tokens" in str(err.value)
    assert "event 1" in str(err.value)


def test_event_stream_is_found_by_media_type_and_by_its_prelude():
    assert registry.framing_for_content_type("application/vnd.amazon.eventstream") is EVENT_STREAM
    assert registry.detect_framing(STREAM) is EVENT_STREAM
    assert registry.detect_framing(b'{"a": 1}\n{"b": 2}\n') is None
    assert registry.detect_framing(b"data: {}\n\n") is Framing.SSE


# -- SSE, as WHATWG HTML §9.2.6 says ----------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "want"),
    [
        ("\ufeffdata: x\n\n", [("message", "x")]),  # a leading BOM is dropped
        ("\ufeffevent: e\r\ndata: x\r\n\r\n", [("e", "x")]),
        ("data:\n\n", [("message", "")]),  # an empty data line still makes an event
        ("event: e\ndata\n\n", [("e", "")]),  # a field without a colon: empty value
        ("data:\ndata:\n\n", [("message", "\n")]),
        ("event: only\n\n", []),  # no data: nothing dispatched
        ("data: a\n\ndata: b", [("message", "a")]),  # unterminated final event: discarded
        ("data: a\n\ndata: b\n", [("message", "a")]),  # one line break is not a blank line
        ("data: a\r\r", [("message", "a")]),  # a final lone CR still ends its line
    ],
)
def test_sse_follows_the_whatwg_rules(body, want):
    raw = body.encode()
    for n in (1, 2, len(raw)):
        got = list(sse_events([raw[i : i + n] for i in range(0, len(raw), n)]))
        assert [(e.event, e.data) for e in got] == want, n


def test_frame_ends_of_the_text_framings():
    assert Framing.SSE.frame_ends(b"data: 1\n\n: c\ndata: 2\r\n\r\ndata: 3") == [9, 24]
    assert Framing.NDJSON.frame_ends(b'{"a":1}\n\n{"b":2}') == [8, 16]
    assert Framing.JSON_ARRAY.frame_ends(b'[{"a":1}, 2 ,[3]]') == [
        8,
        12,
        16,
    ]  # a scalar ends where the "," after it is seen


# -- bytes end to end: cassettes ------------------------------------------------------------


def _binary_cassette(body: bytes, ctype: str, extra_headers: str = "") -> str:
    b64 = base64.b64encode(body).decode()
    return (
        "interactions:\n- request:\n    body: '{\"stream\": true}'\n    headers: {}\n    method: POST\n"
        "    uri: https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse-stream\n"
        f"  response:\n    body:\n      string: !!binary |\n        {b64}\n"
        f"    headers:\n      content-type: [{ctype}]\n{extra_headers}"
        "    status: {code: 200, message: OK}\nversion: 1\n"
    )


class _Recorder:
    """Records the bytes a stream parser is given (the adapter side of parse_stream)."""

    got: ClassVar[list[bytes]] = []

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for c in chunks:
            assert isinstance(c, bytes)
            self.got.append(c)
        return iter(())


def test_a_binary_cassette_body_reaches_the_stream_parser_byte_identical(tmp_path):
    p = tmp_path / "es.yaml"
    p.write_text(_binary_cassette(STREAM, "application/vnd.amazon.eventstream"), encoding="utf-8")
    cas = load_cassette(p)
    assert cas.error is None
    it = cas.interactions[0]
    assert it.framing is EVENT_STREAM and it.is_stream
    assert it.response_body == STREAM and len(it.response_body) == len(STREAM)
    _Recorder.got.clear()
    parse_stream(_Recorder(), it.response_body, RequestContext(session_id="s"), chunk=7)  # type: ignore[arg-type]
    assert b"".join(_Recorder.got) == STREAM and len(_Recorder.got) == -(-len(STREAM) // 7)
    assert [e.value for e in framed_events(it.framing, [it.response_body])] == WANT


def test_gzip_is_undone_only_where_content_encoding_says(tmp_path):
    packed = gzip.compress(STREAM)
    p = tmp_path / "gz.yaml"
    p.write_text(
        _binary_cassette(packed, "application/vnd.amazon.eventstream", "      content-encoding: [gzip]\n"),
        encoding="utf-8",
    )
    assert load_cassette(p).interactions[0].response_body == STREAM
    p.write_text(_binary_cassette(packed, "application/octet-stream"), encoding="utf-8")
    assert load_cassette(p).interactions[0].response_body == packed


# -- `wire parse`: binary input, a framing registered from this module -----------------------


def _anthropic_stream_events() -> list[Any]:
    it = load_cassette(ROOT / "cassettes/anthropic/stops.yaml").interactions[1]
    assert it.is_stream and it.status == 200
    return [e.value for e in json_events(Framing.SSE, [it.response_body])]


class FramedAnthropic(AnthropicAdapter):
    """Anthropic's stream events carried in another framing, the way Bedrock carries them in
    event-stream frames: the frames are decoded here from the bytes, and the events handed
    on as the SSE text the Anthropic adapter reads (the one place text is made)."""

    wire_api: ClassVar[str] = "test-anthropic-framed"
    framing: ClassVar[Framing] = EVENT_STREAM

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        def sse() -> Iterator[bytes]:
            for ev in framed_events(self.framing, chunks):
                yield f"event: {ev.value['type']}\ndata: {json.dumps(ev.value)}\n\n".encode()

        return super().stream_response(sse(), context)


@pytest.fixture
def framed_api(monkeypatch):
    api = replace(ANTHROPIC_MESSAGES, name=FramedAnthropic.wire_api, framing=EVENT_STREAM, request_paths=())
    monkeypatch.setattr(registry, "APIS", (*registry.APIS, api))
    return api


def test_wire_parse_reads_a_binary_event_stream_that_is_not_utf8(tmp_path, capsys, framed_api):
    noise = _header("pad", 6, struct.pack(">H", 2) + b"\xff\xfe")
    body = b"".join(_event(None, v, noise) for v in _anthropic_stream_events())
    with pytest.raises(UnicodeDecodeError):
        body.decode("utf-8")
    p = tmp_path / "stream.bin"
    p.write_bytes(body)
    assert main(["wire", "parse", "-a", "test_framing_plugins:FramedAnthropic", "--stream", str(p)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[-2]["type"] == "message_complete" and lines[-1]["role"] == "assistant"
    # a broken CRC is reported where it is
    bad = bytearray(body)
    bad[20] ^= 0xFF
    p.write_bytes(bytes(bad))
    assert main(["wire", "parse", "-a", "test_framing_plugins:FramedAnthropic", "--stream", str(p)]) == 1
    assert "event 0, byte" in capsys.readouterr().err


class _LengthPrefixed:
    """A test framing: each frame is a u32 big-endian length, then that many bytes of JSON."""

    def __init__(self) -> None:
        self._buf = b""
        self._base = 0
        self._count = 0

    def feed(self, chunk: bytes | str) -> list[JsonEvent]:
        self._buf += chunk if isinstance(chunk, bytes) else chunk.encode()
        out = []
        while len(self._buf) >= 4 and len(self._buf) >= 4 + (n := struct.unpack(">I", self._buf[:4])[0]):
            out.append(JsonEvent(json.loads(self._buf[4 : 4 + n]), self._count, 0, self._base + 4 + n))
            self._buf, self._base, self._count = self._buf[4 + n :], self._base + 4 + n, self._count + 1
        return out

    def close(self) -> list[JsonEvent]:
        if self._buf:
            raise FramingError("truncated", event=self._count, offset=self._base)
        return []


LENGTH_PREFIXED = Framing("test-length-prefixed", _LengthPrefixed, media_types=("application/x-test-lp",))


class LengthPrefixedAnthropic(FramedAnthropic):
    framing: ClassVar[Framing] = LENGTH_PREFIXED


def test_a_framing_registered_outside_the_package_is_used_by_wire_parse(tmp_path, capsys, monkeypatch, framed_api):
    monkeypatch.setattr(registry, "FRAMINGS", registry.FRAMINGS)
    body = b"".join(struct.pack(">I", len(j)) + j for v in _anthropic_stream_events() if (j := json.dumps(v).encode()))
    p = tmp_path / "stream.lp"
    p.write_bytes(body)
    args = ["wire", "parse", "-a", "test_framing_plugins:LengthPrefixedAnthropic", "--framing", LENGTH_PREFIXED.name]
    assert main([*args, str(p)]) != 0
    assert "unknown framing 'test-length-prefixed'" in capsys.readouterr().err
    assert registry.register_framing(LENGTH_PREFIXED) is LENGTH_PREFIXED
    assert registry.register_framing(LENGTH_PREFIXED) is LENGTH_PREFIXED  # again: a no-op
    with pytest.raises(ValueError, match="already registered"):
        registry.register_framing(replace(LENGTH_PREFIXED))
    assert main([*args, str(p)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[-2]["type"] == "message_complete" and lines[-1]["role"] == "assistant"
    assert registry.framing_for_content_type("application/x-test-lp; q=1") is LENGTH_PREFIXED


def test_a_framing_from_an_entry_point_is_registered(monkeypatch):
    monkeypatch.setattr(registry, "FRAMINGS", registry.FRAMINGS)
    monkeypatch.setattr(registry, "_entry_points_loaded", False)
    ep = EntryPoint("lp", "test_framing_plugins:LENGTH_PREFIXED", registry.FRAMING_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep] if group == registry.FRAMING_GROUP else [])
    assert registry.get_framing("test-length-prefixed") is LENGTH_PREFIXED


def test_event_stream_message_type():
    msg = next(iter(EVENT_STREAM.frames([STREAM])))
    assert (
        isinstance(msg, EventStreamMessage) and msg.message_type == "event" and msg.content_type == "application/json"
    )
