"""Every recording reader decodes a br-, zstd- or deflate-coded body end to end, through the
public reader (`load_cassette`), each cassette written in its recorder's own layout with a
body compressed by the real compressor and kept as that recorder keeps bytes (YAML `!!binary`
in vcrpy, go-vcr, php-vcr and Betamax tapes, base64 in VCR, HAR, WireMock's `base64Body` and
Hoverfly's `encodedBody`, hex chunks in nock, an Erlang term in ExVCR); a body that cannot be
read is one line naming the cassette, its line, the interaction and the coding; R's vcr `file: true` bodies are read from
`<cassette>-files/` and from nowhere else; Ruby VCR's `encoding` is honoured."""

from __future__ import annotations

import base64
import gzip
import json
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from conformance.cli import main
from conformance.suite.cassettes import load_cassette
from conformance.suite.content_coding import MissingDecoder

brotli = pytest.importorskip("brotli", reason="the [recordings] extra (brotli) is not installed")
zstandard = pytest.importorskip("zstandard", reason="the [recordings] extra (zstandard) is not installed")

URL = "https://api.openai.com/v1/chat/completions"
REQUEST = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Say hello."}]}
REPLY = {
    "id": "chatcmpl-Bodies0001",
    "object": "chat.completion",
    "created": 1741570000,
    "model": "gpt-4o-2024-08-06",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "Grüße."}, "logprobs": None, "finish_reason": "stop"}
    ],
    "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12},
}
PLAIN = json.dumps(REPLY).encode("utf-8")


def _raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


CODERS: dict[str, Callable[[bytes], bytes]] = {
    "br": brotli.compress,
    "zstd": lambda b: zstandard.ZstdCompressor().compress(b),
    "deflate": zlib.compress,
    "deflate-raw": _raw_deflate,  # the header still says `deflate`
    "gzip, br": lambda b: brotli.compress(gzip.compress(b)),
}


def _header(kind: str) -> str:
    return kind.removesuffix("-raw")


def _vcrpy(coded: bytes, coding: str) -> tuple[str, str]:
    doc = {
        "version": 1,
        "interactions": [
            {
                "request": {"uri": URL, "method": "POST", "body": json.dumps(REQUEST), "headers": {}},
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"Content-Type": ["application/json"], "Content-Encoding": [coding]},
                    "body": {"string": coded},  # bytes: PyYAML writes !!binary, as vcrpy does
                },
            }
        ],
    }
    return "vcrpy.yaml", yaml.safe_dump(doc, sort_keys=False)


def _go_vcr(coded: bytes, coding: str) -> tuple[str, str]:
    doc = {
        "version": 2,
        "interactions": [
            {
                "id": 0,
                "request": {
                    "proto": "HTTP/1.1",
                    "body": json.dumps(REQUEST),
                    "url": URL,
                    "method": "POST",
                    "headers": {"Content-Type": ["application/json"]},
                },
                "response": {
                    "proto": "HTTP/2.0",
                    "body": coded,
                    "status": "200 OK",
                    "code": 200,
                    "headers": {"Content-Type": ["application/json"], "Content-Encoding": [coding]},
                    "uncompressed": False,
                },
            }
        ],
    }
    return "go-vcr.yaml", yaml.safe_dump(doc, sort_keys=False)


def _ruby_vcr(coded: bytes, coding: str) -> tuple[str, str]:
    doc = {
        "http_interactions": [
            {
                "request": {
                    "method": "post",
                    "uri": URL,
                    "body": {"encoding": "UTF-8", "string": json.dumps(REQUEST)},
                    "headers": {"Content-Type": ["application/json"]},
                },
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {"Content-Type": ["application/json"], "Content-Encoding": [coding]},
                    "body": {"encoding": "ASCII-8BIT", "base64_string": base64.encodebytes(coded).decode()},
                    "http_version": None,
                },
                "recorded_at": "Mon, 10 Mar 2025 01:26:40 GMT",
            }
        ],
        "recorded_with": "VCR 6.3.1",
    }
    return "ruby-vcr.json", json.dumps(doc, indent=2)


def _r_vcr(coded: bytes, coding: str) -> tuple[str, str]:
    doc = {
        "http_interactions": [
            {
                "request": {
                    "method": "post",
                    "uri": URL,
                    "body": {"encoding": "", "string": json.dumps(REQUEST)},
                    "headers": {"content-type": "application/json"},
                },
                "response": {
                    "status": 200,
                    "headers": {"content-type": "application/json", "content-encoding": coding},
                    "body": {"encoding": "", "base64_string": base64.b64encode(coded).decode()},
                },
                "recorded_at": "2025-03-10 01:26:40 GMT",
            }
        ],
        "recorded_with": "vcr/2.0.0",
    }
    return "r-vcr.yml", yaml.safe_dump(doc, sort_keys=False)


def _har(coded: bytes, coding: str) -> tuple[str, str]:
    entry = {
        "request": {
            "method": "POST",
            "url": URL,
            "headers": [{"name": "content-type", "value": "application/json"}],
            "postData": {"mimeType": "application/json", "text": json.dumps(REQUEST)},
        },
        "response": {
            "status": 200,
            "headers": [
                {"name": "content-type", "value": "application/json"},
                {"name": "content-encoding", "value": coding},
            ],
            "content": {"mimeType": "application/json", "encoding": "base64", "text": base64.b64encode(coded).decode()},
        },
    }
    return "polly.har", json.dumps({"log": {"version": "1.2", "entries": [entry]}}, indent=2)


def _nock(coded: bytes, coding: str) -> tuple[str, str]:
    half = len(coded) // 2
    rec = {
        "scope": "https://api.openai.com:443",
        "method": "POST",
        "path": "/v1/chat/completions",
        "body": REQUEST,
        "status": 200,
        "response": [coded[:half].hex(), coded[half:].hex()],  # the chunks as received
        "rawHeaders": ["Content-Type", "application/json", "Content-Encoding", coding],
        "responseIsBinary": False,
    }
    return "nock.json", json.dumps([rec], indent=2)


def _exvcr(coded: bytes, coding: str) -> tuple[str, str]:
    """ExVCR keeps bytes that are no UTF-8 as base64 of the Erlang term of the binary."""
    term = bytes([131, ord("m")]) + len(coded).to_bytes(4, "big") + coded
    rec = {
        "request": {"body": json.dumps(REQUEST), "headers": {"Content-Type": "application/json"}, "method": "post",
                    "options": [], "request_body": "", "url": URL},
        "response": {"binary": True, "body": base64.b64encode(term).decode(), "status_code": 200, "type": "ok",
                     "headers": {"Content-Type": "application/json", "Content-Encoding": coding}},
    }  # fmt: skip
    return "exvcr.json", json.dumps([rec], indent=2)


def _php_vcr(coded: bytes, coding: str) -> tuple[str, str]:
    """php-vcr stores the body as the PHP string it got: bytes that are no UTF-8 are dumped as
    `!!binary` by Symfony's YAML dumper."""
    doc = [
        {
            "request": {"method": "POST", "url": URL, "headers": {"Content-Type": "application/json"},
                        "body": json.dumps(REQUEST)},
            "response": {"status": {"http_version": "1.1", "code": "200", "message": "OK"},
                         "headers": {"Content-Type": "application/json", "Content-Encoding": coding}, "body": coded},
        }
    ]  # fmt: skip
    return "php-vcr.yml", yaml.safe_dump(doc, sort_keys=False)


def _betamax(coded: bytes, coding: str) -> tuple[str, str]:
    """Betamax/OkReplay keep a body that is no text as YAML `!!binary` (SnakeYAML's bytes), under
    the tape's `!tape` tag."""
    doc = {
        "name": "bodies",
        "interactions": [
            {
                "recorded": "2025-03-10T01:26:40.000Z",
                "request": {"method": "POST", "uri": URL, "headers": {"Content-Type": "application/json"},
                            "body": json.dumps(REQUEST)},
                "response": {"status": 200, "headers": {"Content-Type": "application/json", "Content-Encoding": coding},
                             "body": coded},  # bytes: PyYAML writes !!binary, as SnakeYAML does
            }
        ],
    }  # fmt: skip
    return "tape.yaml", "!tape\n" + yaml.safe_dump(doc, sort_keys=False)


def _wiremock(coded: bytes, coding: str) -> tuple[str, str]:
    """A WireMock stub mapping: bytes as `base64Body`, the coding its `Content-Encoding` names."""
    stub = {
        "request": {"method": "POST", "url": "/v1/chat/completions", "host": {"equalTo": "api.openai.com"},
                    "bodyPatterns": [{"equalToJson": REQUEST}]},
        "response": {"status": 200, "headers": {"Content-Type": "application/json", "Content-Encoding": coding},
                     "base64Body": base64.b64encode(coded).decode()},
    }  # fmt: skip
    return "stub.json", json.dumps(stub, indent=2)


def _hoverfly(coded: bytes, coding: str) -> tuple[str, str]:
    """Hoverfly's capture keeps a coded body coded, base64 with `encodedBody: true`, and its
    `Content-Encoding` (SpectoLabs/hoverfly issue 787)."""

    def ex(value: str) -> list[dict[str, str]]:
        return [{"matcher": "exact", "value": value}]

    pair = {
        "request": {"path": ex("/v1/chat/completions"), "method": ex("POST"), "destination": ex("api.openai.com"),
                    "scheme": ex("https"), "body": [{"matcher": "json", "value": json.dumps(REQUEST)}]},
        "response": {"status": 200, "body": base64.b64encode(coded).decode(), "encodedBody": True,
                     "headers": {"Content-Type": ["application/json"], "Content-Encoding": [coding]}, "templated": False},
    }  # fmt: skip
    doc = {"data": {"pairs": [pair], "globalActions": {"delays": []}}, "meta": {"schemaVersion": "v5.2"}}
    return "simulation.json", json.dumps(doc, indent=2)


FORMAT_NAMES = {"vcrpy": "vcrpy", "go-vcr": "go-vcr", "ruby-vcr": "vcr", "r-vcr": "vcr", "har": "har", "nock": "nock",
                "exvcr": "exvcr", "php-vcr": "php-vcr", "betamax": "betamax", "wiremock": "wiremock",
                "hoverfly": "hoverfly"}  # fmt: skip
# the line each writer's first interaction starts on (a YAML sequence item, a JSON array element)
FIRST_LINES = {"vcrpy": 3, "go-vcr": 3, "ruby-vcr": 3, "r-vcr": 2, "har": 5, "nock": 2, "exvcr": 2, "php-vcr": 1,
               "betamax": 4, "wiremock": 1, "hoverfly": 4}  # fmt: skip

WRITERS = {"vcrpy": _vcrpy, "go-vcr": _go_vcr, "ruby-vcr": _ruby_vcr, "r-vcr": _r_vcr, "har": _har, "nock": _nock,
           "exvcr": _exvcr, "php-vcr": _php_vcr, "betamax": _betamax, "wiremock": _wiremock,
           "hoverfly": _hoverfly}  # fmt: skip


def _write(tmp_path: Path, writer: str, coded: bytes, coding: str) -> Path:
    name, text = WRITERS[writer](coded, coding)
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


@pytest.mark.parametrize("kind", sorted(CODERS))
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_each_reader_decodes_each_coding_end_to_end(tmp_path, writer, kind):
    p = _write(tmp_path, writer, CODERS[kind](PLAIN), _header(kind))
    c = load_cassette(p)
    assert c.error is None, c.error
    [it] = c.interactions
    assert it.response_body == PLAIN and it.response_json == REPLY
    assert it.request_body == REQUEST and it.api == "openai-chat-completions" and it.status == 200
    assert "content-encoding" not in it.headers and it.headers["content-length"] == [str(len(PLAIN))]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_truncated_body_is_one_line_naming_cassette_interaction_and_coding(tmp_path, writer):
    p = _write(tmp_path, writer, brotli.compress(PLAIN)[:-3], "br")
    c = load_cassette(p)
    assert c.error is not None and "\n" not in c.error and c.interactions == []
    where = f"cannot read cassette {p}:{FIRST_LINES[writer]}: {FORMAT_NAMES[writer]} interaction 0:"
    assert c.error.startswith(f"{where} response body (br): the stream is truncated"), c.error


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_an_unknown_coding_is_refused_naming_it(tmp_path, writer):
    p = _write(tmp_path, writer, b"\x1f\x9d\x90compressed", "compress")
    c = load_cassette(p)
    assert c.error is not None and "\n" not in c.error
    where = f"cannot read cassette {p}:{FIRST_LINES[writer]}: {FORMAT_NAMES[writer]} interaction 0:"
    assert c.error.startswith(f"{where} response body: content coding 'compress' is not one read here"), c.error


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_missing_decoder_stops_the_read_saying_what_to_install(tmp_path, monkeypatch, writer):
    p = _write(tmp_path, writer, zstandard.ZstdCompressor().compress(PLAIN), "zstd")
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(MissingDecoder) as exc:
        load_cassette(p)
    msg = str(exc.value)
    where = f"cannot read cassette {p}:{FIRST_LINES[writer]}: {FORMAT_NAMES[writer]} interaction 0:"
    assert msg.startswith(f"{where} response body is zstd-coded"), msg
    assert "pip install 'turnspec[recordings]'" in msg and "\n" not in msg


def test_conform_exits_2_when_a_recording_needs_a_decoder_not_installed(tmp_path, monkeypatch, capsys):
    samples = tmp_path / "samples"
    samples.mkdir()
    _write(samples, "har", brotli.compress(PLAIN), "br")
    monkeypatch.setitem(sys.modules, "brotli", None)
    rc = main(["conform", "openai-chat", "--samples", str(samples), "--select", "TC800"])
    out, err = capsys.readouterr()
    assert rc == 2, (out, err)
    [line] = [x for x in err.splitlines() if x.strip()]
    assert "needs the Python package 'brotli'" in line and "Traceback" not in err


def test_a_request_body_is_decoded_by_its_own_content_encoding(tmp_path):
    name, text = _vcrpy(gzip.compress(PLAIN), "gzip")
    doc = yaml.safe_load(text)
    doc["interactions"][0]["request"]["body"] = zstandard.ZstdCompressor().compress(json.dumps(REQUEST).encode())
    doc["interactions"][0]["request"]["headers"] = {"Content-Encoding": ["zstd"]}
    p = tmp_path / name
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    [it] = load_cassette(p).interactions
    assert it.request_body == REQUEST and it.response_json == REPLY


@pytest.mark.parametrize("writer", ["vcrpy", "har", "r-vcr", "betamax"])
def test_a_br_body_the_client_already_decoded_is_read_as_it_is(tmp_path, writer):
    """A browser's HAR ("the HTTP response is decoded"), curl under R's vcr, httpx under vcrpy,
    Betamax (which stores a coded body as its text, robfletcher/betamax issue 3):
    the header still says br, the text is the body; no brotli decoder is asked."""
    p = _write(tmp_path, writer, PLAIN, "br")
    [it] = load_cassette(p).interactions
    assert it.response_json == REPLY and "content-encoding" not in it.headers


def test_a_decoded_body_needs_no_decoder_installed(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "brotli", None)
    [it] = load_cassette(_write(tmp_path, "har", PLAIN, "br")).interactions
    assert it.response_json == REPLY


# R's vcr: `file: true`, the response body in `<cassette name>-files/NAME` beside the cassette


def _r_file_cassette(tmp_path: Path, name: object) -> Path:
    _, text = _r_vcr(b"", "identity")
    doc = yaml.safe_load(text)
    doc["http_interactions"][0]["response"]["headers"].pop("content-encoding")
    doc["http_interactions"][0]["response"]["body"] = {"encoding": "", "file": True, "string": name}
    p = tmp_path / "fixtures" / "chat.yml"
    p.parent.mkdir(exist_ok=True)
    p.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return p


def test_r_vcr_file_bodies_are_read_from_the_cassettes_files_folder(tmp_path):
    p = _r_file_cassette(tmp_path, "reply.json")
    (p.parent / "chat-files").mkdir()
    (p.parent / "chat-files" / "reply.json").write_bytes(PLAIN)
    c = load_cassette(p)
    assert c.error is None, c.error
    assert c.interactions[0].response_json == REPLY and c.interactions[0].response_body == PLAIN
    nested = _r_file_cassette(tmp_path, "sub/reply.json")
    (p.parent / "chat-files" / "sub").mkdir()
    (p.parent / "chat-files" / "sub" / "reply.json").write_bytes(PLAIN)
    assert load_cassette(nested).interactions[0].response_json == REPLY


def test_an_r_vcr_file_body_is_decoded_by_its_content_encoding(tmp_path):
    p = _r_file_cassette(tmp_path, "reply.json.br")
    doc = yaml.safe_load(p.read_text())
    doc["http_interactions"][0]["response"]["headers"]["content-encoding"] = "br"
    p.write_text(yaml.safe_dump(doc), encoding="utf-8")
    (p.parent / "chat-files").mkdir()
    (p.parent / "chat-files" / "reply.json.br").write_bytes(brotli.compress(PLAIN))
    assert load_cassette(p).interactions[0].response_json == REPLY


def _escapes(tmp_path: Path) -> dict[str, str]:
    outside = tmp_path / "secret.json"
    outside.write_bytes(PLAIN)
    return {
        "../../secret.json": "leads out of",
        "../chat.yml": "leads out of",
        str(outside): "is not a name inside",
        "missing.json": "does not exist",
        "": "is not a name inside",
        "link.json": "leads out of",  # a symlink pointing out of the folder
        ".": "is not a regular file",
    }


@pytest.mark.parametrize("case", ["../../secret.json", "../chat.yml", "absolute", "missing.json", "", "link.json", "."])
def test_an_r_vcr_file_body_outside_its_folder_is_refused(tmp_path, case):
    escapes = _escapes(tmp_path)
    name = str(tmp_path / "secret.json") if case == "absolute" else case
    p = _r_file_cassette(tmp_path, name)
    folder = p.parent / "chat-files"
    folder.mkdir()
    (folder / "link.json").symlink_to(tmp_path / "secret.json")
    c = load_cassette(p)
    assert c.error is not None and "\n" not in c.error and c.interactions == []
    assert c.error.startswith(f"cannot read cassette {p}:2: vcr interaction 0: body file ")
    assert escapes[name] in c.error, c.error


def test_an_r_vcr_files_folder_that_is_a_symlink_is_refused(tmp_path):
    p = _r_file_cassette(tmp_path, "reply.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "reply.json").write_bytes(PLAIN)
    (p.parent / "chat-files").symlink_to(elsewhere)
    c = load_cassette(p)
    assert c.error is not None and "is a symlink; not read" in c.error


# Ruby VCR's `encoding` (lib/vcr/structs.rb `body_from`): `string` is encoded into the named
# charset; `base64_string` and ASCII-8BIT keep the bytes


def _ruby_text_body(tmp_path: Path, body: dict[str, object], ctype: str) -> Path:
    _, text = _ruby_vcr(b"", "identity")
    doc = json.loads(text)
    resp = doc["http_interactions"][0]["response"]
    resp["headers"] = {"Content-Type": [ctype]}
    resp["body"] = body
    p = tmp_path / "ruby.json"
    p.write_text(json.dumps(doc), encoding="utf-8")
    return p


@pytest.mark.parametrize(
    "encoding,want",
    [
        ("ISO-8859-1", "Grüße.".encode("latin-1")),
        ("Windows-1252", "Grüße.".encode("cp1252")),
        ("Shift_JIS", "Grüße.".encode()),  # ü is no Shift_JIS character: Ruby keeps the UTF-8 string
        ("UTF-8", "Grüße.".encode()),
        ("ASCII-8BIT", "Grüße.".encode()),  # binary: the bytes as they are
        ("No-Such-Charset", "Grüße.".encode()),
        ("", "Grüße.".encode()),
    ],
)
def test_ruby_vcr_string_bodies_are_in_the_charset_their_encoding_names(tmp_path, encoding, want):
    p = _ruby_text_body(tmp_path, {"encoding": encoding, "string": "Grüße."}, "text/plain")
    [it] = load_cassette(p).interactions
    assert it.response_body == want


def test_ruby_vcr_base64_bodies_keep_their_bytes_whatever_the_encoding(tmp_path):
    raw = "Grüße.".encode("latin-1")
    body = {"encoding": "ISO-8859-1", "base64_string": base64.b64encode(raw).decode()}
    [it] = load_cassette(_ruby_text_body(tmp_path, body, "text/plain; charset=iso-8859-1")).interactions
    assert it.response_body == raw
    shift = "こんにちは".encode("shift_jis")
    body = {"encoding": "Shift_JIS", "string": "こんにちは"}
    [it] = load_cassette(_ruby_text_body(tmp_path, body, "text/plain; charset=shift_jis")).interactions
    assert it.response_body == shift
