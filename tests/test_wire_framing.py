"""The stream decoders (SSE, NDJSON, streamed JSON array), the wire registry's attribution
and bounded cassette loading: strict, located, the same whatever the chunking."""

from __future__ import annotations

import json
import re

import pytest

from conformance.adapters.errors import WireFormatError
from conformance.adapters.streams import ndjson_events
from conformance.suite.cassettes import load_cassette
from conformance.wire import registry
from conformance.wire.api import Framing, WireApi
from conformance.wire.framing import (
    FramingError,
    JsonArrayDecoder,
    NdjsonDecoder,
    json_events,
    loads_strict,
    sse_events,
)

ARRAY = '[{"a": [1, 2, "x]},"]},\n {"b": "\\"}"}\n, 3, "s", [4]]  '
NDJSON = '{"a": 1}\n\n{"b": "}\\n"}\r\n{"c": [1]}\n'
SSE = 'event: a\ndata: {"x"\ndata: :1}\r\n\r\n: comment\ndata: [DONE]\n\n'


def _chunked(text: str, n: int) -> list[bytes]:
    raw = text.encode()
    return [raw[i : i + n] for i in range(0, len(raw), n)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 64, 10_000])
def test_decoders_give_the_same_events_whatever_the_chunking(n):
    assert [e.value for e in json_events(Framing.JSON_ARRAY, _chunked(ARRAY, n))] == [
        {"a": [1, 2, "x]},"]},
        {"b": '"}'},
        3,
        "s",
        [4],
    ]
    assert [e.value for e in json_events(Framing.NDJSON, _chunked(NDJSON, n))] == [{"a": 1}, {"b": "}\n"}, {"c": [1]}]
    evs = list(sse_events(_chunked(SSE, n)))
    assert [(e.event, e.data, e.index, e.line) for e in evs] == [
        ("a", '{"x"\n:1}', 0, 1),
        ("message", "[DONE]", 1, 6),
    ]


@pytest.mark.parametrize(
    ("framing", "text", "event", "line", "why"),
    [
        (Framing.JSON_ARRAY, "[1,]", 1, 1, "after ','"),
        (Framing.JSON_ARRAY, '{"a": 1}', 0, 1, "must start with '['"),
        (Framing.JSON_ARRAY, "[1,\n2", 1, 2, "before the array's closing"),
        (Framing.JSON_ARRAY, "[1]\nx", 1, 2, "after the end of the array"),
        (Framing.JSON_ARRAY, "", 0, 1, "empty body"),
        (Framing.JSON_ARRAY, "[NaN]", 0, 1, "NaN is not JSON"),
        (Framing.JSON_ARRAY, "[" * 100_000 + "]" * 100_000, 0, 1, "nested deeper"),
        (Framing.NDJSON, '{"a":1}\n[1]\n', 1, 2, "not an object"),
        (Framing.NDJSON, '{"a":1}\n{"b"', 1, 2, "not a JSON line"),
        (Framing.NDJSON, '{"a": Infinity}\n', 0, 1, "Infinity is not JSON"),
    ],
)
def test_malformed_streams_are_located(framing, text, event, line, why):
    with pytest.raises(FramingError) as exc:
        list(json_events(framing, [text.encode()]))
    assert (exc.value.event, exc.value.line) == (event, line) and why in str(exc.value)
    assert str(exc.value).startswith(f"event {event}, line {line}: ")


def test_sse_rejects_bytes_that_are_not_utf8():
    with pytest.raises(FramingError, match="event 1, line 3: not UTF-8"):
        list(sse_events([b"data: {}\n\ndata: \xff\xfe\n\n"]))


def test_adapters_get_a_located_wire_format_error():
    with pytest.raises(WireFormatError) as exc:
        list(ndjson_events([b'{"a":1}\n', b"oops\n"]))
    assert exc.value.location == "event 1, line 2" and exc.value.error_class == "other"


def test_decoders_are_incremental():
    dec = JsonArrayDecoder()
    assert [e.value for e in dec.feed('[{"a": 1}, {"b"')] == [{"a": 1}]
    assert [e.value for e in dec.feed(": 2}]")] == [{"b": 2}]
    assert dec.close() == []
    nd = NdjsonDecoder()
    assert nd.feed('{"a"') == [] and [e.value for e in nd.feed(": 1}\n")] == [{"a": 1}]


def test_loads_strict():
    assert loads_strict('{"a": [1.5, null]}') == {"a": [1.5, None]}
    for bad in ("NaN", '{"a": -Infinity}', "[" * 600 + "]" * 600):
        with pytest.raises(ValueError):
            loads_strict(bad)


def _record(name: str, pattern: str) -> WireApi:
    return WireApi(
        name=name,
        title=name,
        docs=(),
        request_paths=(re.compile(pattern),),
        framing=Framing.NDJSON,
        is_streaming=lambda _u, b: bool(b and b.get("stream", True)),
        schema_dir=name,
    )


def test_api_for_url_never_forces_a_near_match(monkeypatch):
    chat = _record("ollama-chat", r"/api/chat/?$")
    monkeypatch.setattr(registry, "APIS", (chat,))
    assert registry.api_for_url("http://127.0.0.1:11434/api/chat") is chat
    assert registry.api_for_url("http://127.0.0.1:11434/api/chat?x=1") is chat
    assert registry.api_for_url("http://127.0.0.1:11434/api/generate") is None
    assert registry.api_for_url("http://127.0.0.1:11434/api/chatty") is None
    with pytest.raises(KeyError, match="unknown wire API"):
        registry.get("gemini")


def _cassette(uri: str, body: str, ctype: str, request: dict | None = None) -> str:
    req = json.dumps(request or {"model": "m", "messages": [], "stream": True})
    return (
        "interactions:\n- request:\n    body: " + json.dumps(req) + "\n    headers: {}\n    method: POST\n"
        f"    uri: {uri}\n  response:\n    body:\n      string: {json.dumps(body)}\n"
        f"    headers:\n      content-type: [{ctype}]\n    status: {{code: 200, message: OK}}\nversion: 1\n"
    )


def test_ndjson_stream_is_recognised_by_the_record_framing(monkeypatch, tmp_path):
    monkeypatch.setattr(registry, "APIS", (_record("ollama-chat", r"/api/chat/?$"),))
    body = '{"message": {"role": "assistant", "content": "Hi"}, "done": false}\n{"done": true, "done_reason": "stop"}\n'
    p = tmp_path / "o.yaml"
    p.write_text(_cassette("http://localhost:11434/api/chat", body, "application/json; charset=utf-8"))
    it = load_cassette(p).interactions[0]
    assert it.api == "ollama-chat" and it.is_stream and it.framing is Framing.NDJSON
    gen = tmp_path / "g.yaml"
    gen.write_text(_cassette("http://localhost:11434/api/generate", body, "application/x-ndjson"))
    assert load_cassette(gen).interactions[0].api is None


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
    for i in range(8)
)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (BOMB + "interactions: []\n", "aliases expand to more than"),
        ("interactions:\n" + "- " * 400 + "x\n", "nested deeper than"),
        ("interactions: [\n", "line 2: not YAML"),
        ("interactions:\n- !!python/object/apply:os.system ['true']\n", "cannot read cassette"),
    ],
)
def test_hostile_cassettes_are_one_line_errors(tmp_path, text, why):
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    c = load_cassette(p)
    assert c.error is not None and why in c.error and "\n" not in c.error and c.interactions == []


@pytest.mark.parametrize("text", ["- 1\n- 2\n", "name: ci\non: [push]\n", "just text\n"])
def test_yaml_of_no_recorders_layout_is_skipped_with_the_reason(tmp_path, text):
    """As a JSON file of no format is (a `package.json`): a reader refuses only what it cannot read."""
    p = tmp_path / "c.yaml"
    p.write_text(text, encoding="utf-8")
    c = load_cassette(p)
    assert c.error is None and c.interactions == [] and c.skipped is not None
    assert c.skipped.startswith("not a recording of a format read here (vcrpy, go-vcr")


def test_nan_and_deep_bodies_are_not_json(tmp_path):
    p = tmp_path / "c.yaml"
    p.write_text(_cassette("https://api.example.com/v1/x", "[" * 100_000 + "]" * 100_000, "application/json"))
    it = load_cassette(p).interactions[0]
    assert it.response_json is None
    p.write_text(_cassette("https://api.example.com/v1/x", '{"a": NaN}', "application/json"))
    assert load_cassette(p).interactions[0].response_json is None


def test_cassette_walk_reads_only_regular_files(tmp_path):
    import os

    from conformance.suite.cassettes import iter_cassettes

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "ok.yaml").write_text("interactions: []\nversion: 1\n", encoding="utf-8")
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "dev.yaml").symlink_to("/dev/zero")
    got = {c.label: c.error for c in iter_cassettes(tmp_path)}
    assert got == {
        "dev.yaml": f"cannot read cassette {tmp_path / 'dev.yaml'}: not a regular file",
        "fifo.yaml": f"cannot read cassette {tmp_path / 'fifo.yaml'}: not a regular file",
        "sub/ok.yaml": None,
    }
