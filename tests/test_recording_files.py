"""Recording files as other projects write them: gzip-compressed cassettes (LangChain's
integration tests), vcrpy's in-memory `{requests, responses}` layout, the data-only Python
tags of old vcrpy cassettes, and no tag that builds an object, whatever vcrpy is installed.

The LangChain cassettes are made here as `langchain_tests.conftest.CustomSerializer`
documents it: vcrpy's cassette dict (`requests`: method, uri, body, headers with each value
in a list; `responses`: vcrpy's response dicts), `yaml.safe_dump`, then `gzip.compress`;
partner packages name them `*.yaml.gz`, the base config's path transformer `*.yaml`.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.cli import main
from conformance.suite import cassettes
from conformance.suite.cassettes import Interaction, iter_cassettes, load_cassette
from conformance.wire import recording_files

DATA = Path(__file__).parent / "data" / "recordings"


def _view(it: Interaction) -> tuple[Any, ...]:
    return (it.uri, it.api, it.method, it.status, it.content_type, it.is_stream, it.request_body, it.response_body)


@pytest.fixture(scope="module")
def reference() -> list[Interaction]:
    ref = load_cassette(DATA / "vcrpy.yaml")
    assert ref.error is None and len(ref.interactions) == 4
    return ref.interactions


def _langchain_bytes() -> bytes:
    """tests/data/recordings/vcrpy.yaml as LangChain's CustomSerializer writes the same cassette."""
    doc = yaml.safe_load((DATA / "vcrpy.yaml").read_text(encoding="utf-8"))
    requests, responses = [], []
    for it in doc["interactions"]:
        q = it["request"]
        requests.append(
            {
                "method": q["method"],
                "uri": q["uri"],
                "body": q["body"],
                "headers": {k: [v[0] if isinstance(v, list) else v] for k, v in (q.get("headers") or {}).items()},
            }
        )
        responses.append(it["response"])
    return gzip.compress(yaml.safe_dump({"requests": requests, "responses": responses}).encode("utf-8"))


@pytest.mark.parametrize("name", ["chat.yaml.gz", "chat.yaml"])
def test_a_langchain_cassette_reads_as_its_vcrpy_twin(tmp_path, reference, name):
    p = tmp_path / name
    p.write_bytes(_langchain_bytes())
    got = load_cassette(p)
    assert got.error is None and got.format == "vcrpy", got.error
    assert [_view(i) for i in got.interactions] == [_view(i) for i in reference]
    # each interaction located at its request's sequence item in the decompressed YAML
    lines = gzip.decompress(p.read_bytes()).decode().splitlines()
    starts = [i + 1 for i, t in enumerate(lines) if t.startswith("- body:") or t.startswith("- headers:")]
    assert [i.line for i in got.interactions] == starts[:4]


def test_a_folder_walk_takes_compressed_recordings(tmp_path):
    (tmp_path / "a.yaml.gz").write_bytes(_langchain_bytes())
    (tmp_path / "b.json.gz").write_bytes(gzip.compress((DATA / "nock.json").read_bytes()))
    (tmp_path / "notes.txt.gz").write_bytes(gzip.compress(b"hello"))
    got = {c.label: (len(c.interactions), c.format, c.error) for c in iter_cassettes(tmp_path)}
    assert got == {"a.yaml.gz": (4, "vcrpy", None), "b.json.gz": (4, "nock", None)}


def test_unequal_requests_and_responses_are_one_line_error(tmp_path):
    doc = yaml.safe_load(gzip.decompress(_langchain_bytes()))
    doc["responses"] = doc["responses"][:3]
    p = tmp_path / "c.yaml.gz"
    p.write_bytes(gzip.compress(yaml.safe_dump(doc).encode()))
    c = load_cassette(p)
    assert c.error == f"cannot read cassette {p}: 4 requests but 3 responses: they must pair one to one"


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (lambda b: b[: len(b) // 2], "truncated"),
        (lambda b: b + b"junk", "bytes after the end of the gzip stream"),
        (lambda b: b[:10] + b"\x00" * 40, "the file is not gzip"),
    ],
)
def test_a_broken_gzip_recording_is_one_line_error(tmp_path, make, why):
    p = tmp_path / "c.yaml.gz"
    p.write_bytes(make(_langchain_bytes()))
    c = load_cassette(p)
    assert c.error is not None and why in c.error and str(p) in c.error and "\n" not in c.error, c.error


def test_a_gzip_bomb_is_refused_before_it_is_held(tmp_path, monkeypatch):
    p = tmp_path / "bomb.yaml.gz"
    p.write_bytes(gzip.compress(b"#" * 5_000_000))  # ~5 KB on disk
    monkeypatch.setattr(cassettes, "MAX_CASSETTE_BYTES", 1_000_000)
    c = load_cassette(p)
    assert (
        c.error == f"cannot read cassette {p}: gzip-compressed: the file (gzip) inflates past 1000000 bytes; not read"
    )


def test_multi_member_gzip_is_read_whole():
    raw = b"interactions:\n" + b"- a\n" * 3
    assert recording_files.unwrap(gzip.compress(raw[:10]) + gzip.compress(raw[10:]), 1000) == raw


OLD_VCRPY = """interactions:
- request:
    body: !!python/unicode '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}]}'
    headers:
      Content-Type: [!!python/unicode application/json]
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body: {string: !!python/unicode '{"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-4o-mini", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"}, "finish_reason": "stop"}]}'}
    headers:
      Content-Type: [application/json]
    status: {code: 200, message: OK}
version: 1
"""


def test_old_vcrpy_python_tags_read_as_data(tmp_path):
    p = tmp_path / "old.yaml"
    p.write_text(OLD_VCRPY, encoding="utf-8")
    c = load_cassette(p)
    assert c.error is None, c.error
    assert (
        c.interactions[0].api == "openai-chat-completions" and c.interactions[0].request_body["model"] == "gpt-4o-mini"
    )
    assert json.loads(c.interactions[0].response_body)["choices"][0]["message"]["content"] == "Hello"


@pytest.mark.parametrize(
    "tag",
    ["!!python/object/apply:os.system ['touch {marker}']", "!!python/object/new:os.system ['touch {marker}']",
     "!!python/name:os.system", "!!python/module:os"],
)  # fmt: skip
def test_no_tag_that_builds_an_object_is_ever_constructed(tmp_path, tag):
    marker = tmp_path / "ran"
    p = tmp_path / "evil.yaml"
    p.write_text(f"interactions:\n- request: {tag.format(marker=marker)}\n  response: {{}}\n", encoding="utf-8")
    c = load_cassette(p)
    assert c.error is not None and "could not determine a constructor" in c.error and "\n" not in c.error
    assert not marker.exists()


def test_the_linter_finds_a_secret_in_a_compressed_cassette_and_fixes_it_compressed(tmp_path, capsys):
    key = "sk-ant-api03-" + "A1b2C3d4E5" * 9 + "xyz"
    doc = yaml.safe_load(gzip.decompress(_langchain_bytes()))
    doc["requests"][0]["headers"]["x-api-key"] = [key]
    p = tmp_path / "c.yaml.gz"
    p.write_bytes(gzip.compress(yaml.safe_dump(doc).encode()))
    assert main(["cassettes", "lint", str(p)]) == 1
    assert str(p) in capsys.readouterr().out
    assert main(["cassettes", "lint", "--fix", "--in-place", str(p)]) == 0
    capsys.readouterr()
    fixed = p.read_bytes()
    assert recording_files.gzipped(fixed) and key.encode() not in gzip.decompress(fixed)
    assert main(["cassettes", "lint", str(p)]) == 0
    assert load_cassette(p).error is None


def _exvcr(response: dict[str, Any]) -> str:
    req = {"body": "{}", "headers": [], "method": "post", "options": [], "request_body": "", "url": "https://api.openai.com/v1/chat/completions"}  # fmt: skip
    return json.dumps([{"request": req, "response": {"headers": [], "status_code": 200, "type": "ok", **response}}])


def _term(data: bytes) -> bytes:
    """`term_to_binary(data)` for a binary, as the Erlang external term format documents it."""
    import struct

    return bytes([131, ord("m")]) + struct.pack(">I", len(data)) + data


def test_exvcr_binary_bodies_are_erlang_terms_compressed_or_not(tmp_path):
    import base64
    import struct
    import zlib

    body = b'{"id": "c", "object": "chat.completion"}'
    inner = _term(body)[1:]  # the term without its version byte, as COMPRESSED wraps it
    compressed = bytes([131, ord("P")]) + struct.pack(">I", len(inner)) + zlib.compress(inner)
    for term in (_term(body), compressed):
        p = tmp_path / "c.json"
        p.write_text(_exvcr({"binary": True, "body": base64.b64encode(term).decode()}))
        c = load_cassette(p)
        assert c.error is None and c.format == "exvcr" and c.interactions[0].response_body == body, c.error


@pytest.mark.parametrize(
    ("response", "why"),
    [
        ({"binary": True, "body": "g2sAA2FiYw=="}, "is an Erlang term of tag 107, not a binary"),  # a charlist 'abc'
        ({"binary": True, "body": "g20AAAAKYWJj"}, "binary term of 3 bytes where it says 10"),
        ({"type": "error", "body": "timeout"}, "a transport error, no HTTP response to read"),
        ({"headers": [["a"]]}, "`response.headers`[0] is not a [name, value] pair"),
    ],
)
def test_an_exvcr_interaction_it_cannot_read_is_one_line_error(tmp_path, response, why):
    p = tmp_path / "c.json"
    p.write_text(_exvcr(response))
    c = load_cassette(p)
    assert c.error is not None and why in c.error and f"{p}:1:" in c.error and "\n" not in c.error, c.error


PHP_GZIP = """-
    request:
        method: POST
        url: 'https://api.openai.com/v1/chat/completions'
        headers:
            Content-Type: application/x-www-form-urlencoded
        post_fields:
            model: gpt-4o
    response:
        status: 200
        headers:
            Content-Type: application/x-gzip
        body: {body}
"""


def test_php_vcr_base64_bodies_and_form_fields(tmp_path):
    import base64

    raw = gzip.compress(b"archive")
    p = tmp_path / "c.yml"
    p.write_text(PHP_GZIP.format(body=base64.b64encode(raw).decode()))
    c = load_cassette(p)
    assert c.error is None and c.format == "php-vcr", c.error
    it = c.interactions[0]
    assert it.response_body == raw and it.request_raw == b"model=gpt-4o" and it.status == 200 and it.line == 2


def _playwright_har(tmp_path: Path, name: str) -> Path:
    """A HAR as Playwright's `routeFromHAR(..., {update: true})` writes it with `content:
    'attach'`: the body in a file beside the HAR, named by `content._file`."""
    entry = {
        "startedDateTime": "2025-03-10T01:26:40.000Z",
        "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                    "headers": [{"name": "content-type", "value": "application/json"}],
                    "postData": {"mimeType": "application/json", "text": '{"model": "gpt-4o", "messages": []}'}},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1",
                     "headers": [{"name": "content-type", "value": "application/json"}],
                     "content": {"size": 62, "mimeType": "application/json", "_file": name}},
    }  # fmt: skip
    p = tmp_path / "api.har"
    p.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "Playwright"}, "entries": [entry]}}))
    return p


def test_a_playwright_har_body_attached_beside_it_is_read(tmp_path):
    body = b'{"id": "c", "object": "chat.completion", "choices": []}'
    (tmp_path / "0a1b2c.json").write_bytes(body)
    c = load_cassette(_playwright_har(tmp_path, "0a1b2c.json"))
    assert c.error is None, c.error
    assert c.interactions[0].response_body == body and c.interactions[0].response_json["id"] == "c"


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("missing.json", "does not exist (HAR `_file`"),
        ("../outside.json", "leads out of"),
        ("/etc/passwd", "is not a name"),
    ],
)
def test_a_playwright_har_body_file_outside_its_folder_is_refused(tmp_path, name, why):
    (tmp_path.parent / "outside.json").write_text("{}")
    c = load_cassette(_playwright_har(tmp_path, name))
    assert c.error is not None and why in c.error and "\n" not in c.error, c.error


def _browser_entry(status: int, content: dict[str, Any], **extra: Any) -> dict[str, Any]:
    req = {"method": "POST", "url": "https://api.openai.com/v1/chat/completions", "headers": [],
           "postData": {"mimeType": "application/json", "text": '{"model": "gpt-4o", "stream": true, "messages": []}'}}  # fmt: skip
    headers = [{"name": "content-type", "value": "text/event-stream"}] if status else []
    return {"request": req, "response": {"status": status, "headers": headers, "content": content, **extra}}


def test_a_browser_har_entry_with_no_response_kept_is_set_aside_with_the_reason(tmp_path):
    """Chrome keeps no event-stream body (HAR: `text` is left out "if the information is not
    available"), and a request the browser aborted has status 0: neither is a recording to
    judge or replay, and neither is hidden."""
    from conformance.core.findings import Selection
    from conformance.suite.runner import SuiteConfig, run

    entries = [
        _browser_entry(200, {"size": 0, "mimeType": "text/event-stream"}),
        _browser_entry(0, {"size": 0, "mimeType": "x-unknown"}, _error="net::ERR_ABORTED"),
    ]
    p = tmp_path / "chrome.har"
    p.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}, indent=1))
    c = load_cassette(p)
    assert c.error is None and c.interactions == []
    assert [why.split(" (")[0] for _label, why in c.set_aside] == [
        "the recorder kept no response body", "no HTTP response was recorded",
    ]  # fmt: skip
    report = run(
        SuiteConfig.for_refs(["openai-chat"], samples=tmp_path, peers=False, selection=Selection(select=("TC800",)))
    )
    skips = sorted((o.subject, o.message) for o in report.outcomes if o.rule == "TC800" and o.status == "skip")
    assert [s for s, _ in skips] == ["chrome.har#0", "chrome.har#1"]  # labelled relative to the samples folder
    assert "HAR status 0: net::ERR_ABORTED" in skips[1][1] and f"{p}:" in skips[1][1]
    assert not [o for o in report.outcomes if o.rule == "TC800" and o.status == "fail"]
