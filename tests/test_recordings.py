"""Recordings in other recorders' formats read as vcrpy's do (conformance/suite/recordings/).

tests/data/recordings/ holds one set of four exchanges (an OpenAI chat reply and SSE stream,
an Anthropic reply gzip-encoded and an SSE stream), hand-written in each recorder's
documented layout: vcrpy (the reference), go-vcr versions 1 and 2, Ruby VCR's YAML and JSON
serializers, R's vcr, Polly.js's HAR, a nock.back fixture, ExVCR's JSON, php-vcr's YAML, an Azure SDK
test-proxy recording, a Betamax/OkReplay tape, a Hoverfly simulation (v5, as capture writes it) and an httprr trace (Go; CRLF heads, three responses chunked, the gzip one sized). Each must read into the
interactions vcrpy's gives, and the suite must judge and replay them alike.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance.core.findings import Selection
from conformance.suite import cassettes
from conformance.suite.cassettes import Interaction, iter_cassettes, load_cassette
from conformance.suite.runner import SuiteConfig, run
from conformance.wire import content_coding

DATA = Path(__file__).parent / "data" / "recordings"
FORMATS = {
    "go-vcr-v1.yaml": "go-vcr",
    "go-vcr-v2.yaml": "go-vcr",
    "ruby-vcr.yml": "vcr",
    "ruby-vcr.json": "vcr",
    "r-vcr.yml": "vcr",
    "polly.har": "har",
    "nock.json": "nock",
    "exvcr.json": "exvcr",
    "php-vcr.yml": "php-vcr",
    "azure.json": "azure",
    "betamax.yaml": "betamax",
    "hoverfly.json": "hoverfly",
    "httprr.httprr": "httprr",
}
# what a recorder always writes of the wire beyond the twin's headers: Go's `Request.WriteProxy`
# (under httprr) sends Host, User-Agent and Content-Length on every request
WIRE_HEADERS = {"httprr": ("host", "user-agent", "content-length")}


def _view(it: Interaction, *, exact_bytes: bool = True) -> dict[str, object]:
    return {
        "uri": it.uri,
        "api": it.api,
        "method": it.method,
        "status": it.status,
        "content_type": it.content_type,
        "stream": it.is_stream,
        "framing": it.framing.name if it.framing is not None else None,
        "request": it.request_body,
        "response_json": it.response_json,
        "response": it.response_body if exact_bytes or it.is_stream else None,
        "content-type": it.headers.get("content-type"),
        "content-encoding": it.headers.get("content-encoding"),
        # the length of the bytes compared: of a re-serialized body, its own
        "content-length": it.headers.get("content-length") if exact_bytes else None,
        "x-request-id": it.headers.get("x-request-id"),
    }


@pytest.fixture(scope="module")
def reference() -> list[Interaction]:
    ref = load_cassette(DATA / "vcrpy.yaml")
    assert ref.error is None and len(ref.interactions) == 4
    return ref.interactions


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_each_format_reads_as_vcrpy_reads_its_twin(name, reference):
    """Same URL and API, method, status, content type, stream framing, request JSON, response
    bytes (gzip undone, content-encoding dropped and content-length set as vcrpy's
    decode_response does) and the request headers recorded."""
    got = load_cassette(DATA / name)
    assert got.error is None and got.skipped is None, got.error
    assert len(got.interactions) == 4
    # nock stores a JSON response as a JSON value: its bytes are re-serialized, its value is the same
    # so does the Azure test-proxy (a JSON body under a JSON Content-Type is kept as its value)
    exact = FORMATS[name] not in ("nock", "azure")
    for mine, ref in zip(got.interactions, reference, strict=True):
        assert _view(mine, exact_bytes=exact) == _view(ref, exact_bytes=exact), (name, mine.index)
        if FORMATS[name] != "nock":  # nock records request headers only when asked (enable_reqheaders_recording)
            extra = WIRE_HEADERS.get(FORMATS[name], ())
            assert {k: v for k, v in mine.request_headers.items() if k not in extra} == ref.request_headers
        assert mine.path == DATA / name and mine.label == f"{DATA / name}#{mine.index}"


# where an interaction starts: a YAML sequence item, or a JSON element at its array's indent
STARTS = {
    "nock.json": "  {",
    "ruby-vcr.json": "    {",
    "polly.har": "      {",
    "exvcr.json": "  {",
    "php-vcr.yml": "    request:",
    "azure.json": "    {",
    "hoverfly.json": "      {",
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_gives_each_interaction_its_line(name):
    lines = (DATA / name).read_bytes().decode("latin-1").split("\n")  # httprr's trace holds gzip bytes
    got = load_cassette(DATA / name).interactions
    start = STARTS.get(name)
    if FORMATS[name] == "httprr":  # a record starts at its `N1 N2` line, right after a sized body's last byte
        want = [i + 1 for i, t in enumerate(lines) if re.search(r"\d+ \d+$", t)]
    else:
        want = [i + 1 for i, t in enumerate(lines) if (t == start if start else t.startswith("- "))]
    assert len(want) == 4 and [it.line for it in got] == want


def test_a_bad_json_interaction_is_located_at_its_line(tmp_path):
    p = _edit("polly.har", '"status": 200', '"status": "none"', tmp_path)
    c = load_cassette(p)
    line = next(i + 1 for i, t in enumerate(p.read_text().splitlines()) if t == "      {")
    assert (
        c.error
        == f"cannot read cassette {p}:{line}: har interaction 0: `response.status` is 'none', not an HTTP status code"
    )


def test_conform_judges_and_replays_every_format():
    """TC800 reads every recording (the JSON file of no format is a skip, not a failure) and
    the replay checks pass on each format's interactions, streams included."""
    rules = ("TC800", "TC101", "TC103", "TC601", "TC605", "TC606", "TC802", "TC903", "TC907")
    report = run(
        SuiteConfig.for_refs(["openai-chat", "anthropic"], samples=DATA, peers=False, selection=Selection(select=rules))
    )
    tc800 = report.result("TC800", "(cassettes)")
    assert tc800 is not None and tc800.status == "pass" and tc800.failed == 0
    samples = {o.subject for o in report.outcomes if o.rule == "TC800" and o.status == "pass"}
    for name in [*FORMATS, "vcrpy.yaml"]:
        assert {f"{name}#{i}" for i in range(4)} <= samples, name
    skipped = [(o.subject, o.message) for o in report.outcomes if o.rule == "TC800" and o.status == "skip"]
    rendered = "no response was recorded: the body is a template {} renders for each request it serves ({}:{})"
    assert skipped == [
        ("hoverfly-templated.json#1", rendered.format("Hoverfly (`templated`)", DATA / "hoverfly-templated.json", 60)),
        (
            "recordings/package.json",
            "not a recording of a format read here (vcrpy, go-vcr, vcr, har, nock, exvcr, php-vcr, azure, betamax, wiremock, hoverfly, httpmock, httprr)",
        ),
        ("r-vcr2-bedrock.yml#0", "bedrock-converse: no registered adapter serves it"),  # neither of the two run here
        ("wiremock-stubs.json#1", rendered.format("WireMock (`response-template`)", DATA / "wiremock-stubs.json", 27)),
    ]
    for adapter in ("openai-chat", "anthropic"):
        for rule in rules[1:]:
            r = report.result(rule, adapter)
            assert r is not None and r.status == "pass" and r.failed == 0, (rule, adapter)
    replayed = {o.subject.split("#")[0] for o in report.outcomes if o.rule == "TC605" and o.status == "pass"}
    assert set(FORMATS) <= replayed  # every format's stream was replayed


def test_iter_cassettes_finds_json_and_har_and_sets_aside_other_json(tmp_path):
    for name in ("polly.har", "nock.json", "package.json", "go-vcr-v1.yaml"):
        (tmp_path / name).write_bytes((DATA / name).read_bytes())
    (tmp_path / "notes.txt").write_text("not read", encoding="utf-8")
    got = {c.label: (len(c.interactions), c.error, c.skipped) for c in iter_cassettes(tmp_path)}
    assert got == {
        "go-vcr-v1.yaml": (4, None, None),
        "nock.json": (4, None, None),
        "package.json": (
            0,
            None,
            "not a recording of a format read here (vcrpy, go-vcr, vcr, har, nock, exvcr, php-vcr, azure, betamax, wiremock, hoverfly, httpmock, httprr)",
        ),
        "polly.har": (4, None, None),
    }


def test_vcrpy_json_serializer_is_read_by_vcrpy(tmp_path, reference):
    """vcrpy's `serializer="json"` writes the YAML cassette's structure as JSON."""
    import yaml

    data = yaml.safe_load((DATA / "vcrpy.yaml").read_text(encoding="utf-8"))
    data["interactions"] = data["interactions"][:2]  # the JSON serializer holds text bodies
    (tmp_path / "c.json").write_text(json.dumps(data), encoding="utf-8")
    got = load_cassette(tmp_path / "c.json")
    assert got.error is None and [_view(i) for i in got.interactions] == [_view(i) for i in reference[:2]]


RUBY_BINARY = """---
http_interactions:
- request:
    method: post
    uri: https://api.anthropic.com/v1/messages
    body:
      encoding: UTF-8
      string: '{"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]}'
    headers:
      Content-Type:
      - application/json
  response:
    status:
      code: 200
      message: OK
    headers:
      Content-Type:
      - application/json
    body:
      encoding: ASCII-8BIT
      string: !binary |-
        eyJ0eXBlIjogIm1lc3NhZ2UifQ==
    http_version:
  recorded_at: Mon, 10 Mar 2025 01:26:40 GMT
recorded_with: VCR 2.9.3
"""


def test_old_ruby_vcr_binary_tag_is_read(tmp_path):
    p = tmp_path / "old.yml"
    p.write_text(RUBY_BINARY, encoding="utf-8")
    c = load_cassette(p)
    assert c.error is None and c.interactions[0].response_body == b'{"type": "message"}'
    assert c.interactions[0].api == "anthropic-messages" and c.interactions[0].line == 3


# vcrpy's httpx stub before vcrpy 6 wrote httpx's own names (`status_code`, `http_version`,
# `content`, the body httpx had decoded); vcrpy still plays them back
# (`httpx_stubs._deserialize_response`). The stream is OpenAI's documented chunk form.
HTTPX_LEGACY = """interactions:
- request:
    body: '{"model": "gpt-4o-mini", "stream": true, "messages": [{"role": "user", "content": "Hi"}]}'
    headers:
      content-type:
      - application/json
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    content: 'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":null}]}


      data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}


      data: [DONE]


      '
    headers:
      Content-Encoding:
      - gzip
      Content-Type:
      - text/event-stream
    http_version: HTTP/1.1
    status_code: 200
version: 1
"""


def test_an_httpx_cassette_of_old_vcrpy_is_read_as_vcrpy_plays_it(tmp_path):
    p = tmp_path / "old_httpx.yaml"
    p.write_text(HTTPX_LEGACY, encoding="utf-8")
    c = load_cassette(p)
    assert c.error is None, c.error
    [it] = c.interactions
    assert (it.status, it.api, it.is_stream) == (200, "openai-chat-completions", True)
    assert it.response_body.startswith(b"data: {") and "content-encoding" not in it.headers


def test_a_body_already_decoded_is_read_as_it_is(tmp_path):
    """go-vcr's `uncompressed: true`, and a client that decoded the body before R's vcr saw
    it while the header still says gzip: the recorded text is the body."""
    go = (DATA / "go-vcr-v1.yaml").read_text(encoding="utf-8")
    go = go.replace("    status: 200 OK\n", "    status: 200 OK\n    uncompressed: true\n", 1)
    go = go.replace("      Content-Type:\n      - application/json\n      X-Request-Id", "      Content-Encoding:\n      - gzip\n      Content-Type:\n      - application/json\n      X-Request-Id", 1)  # fmt: skip
    (tmp_path / "go.yaml").write_text(go, encoding="utf-8")
    it = load_cassette(tmp_path / "go.yaml").interactions[0]
    assert it.response_json["id"] == "chatcmpl-RecFmt0001" and it.headers["content-encoding"] == ["gzip"]
    r = (DATA / "r-vcr.yml").read_text(encoding="utf-8").replace("      x-request-id:", "      content-encoding: gzip\n      x-request-id:", 1)  # fmt: skip
    (tmp_path / "r.yml").write_text(r, encoding="utf-8")
    it = load_cassette(tmp_path / "r.yml").interactions[0]
    assert it.response_json["id"] == "chatcmpl-RecFmt0001" and "content-encoding" not in it.headers


def _edit(name: str, old: str, new: str, tmp_path: Path) -> Path:
    text = (DATA / name).read_text(encoding="utf-8")
    assert old in text
    p = tmp_path / name
    p.write_text(text.replace(old, new, 1), encoding="utf-8")
    return p


@pytest.mark.parametrize(
    ("name", "old", "new", "why"),
    [
        (
            "go-vcr-v2.yaml",
            "    code: 200\n",
            "    code: two hundred\n",
            "go-vcr interaction 0: `response.code` is 'two hundred'",
        ),
        (
            "ruby-vcr.yml",
            "      code: 200\n",
            "      code: [200]\n",
            "vcr interaction 0: `response.status.code` is [200]",
        ),
        (
            "r-vcr.yml",
            "      file: no\n",
            "      file: yes\n",
            'r-vcr-files/{"id": "chatcmpl-RecFmt0001", "object":  ... does not exist',
        ),
        (
            "ruby-vcr.json",
            '"base64_string": "H4sI',
            '"base64_string": "%%%',
            "vcr interaction 2: `response.body.base64_string` is not base64",
        ),
        ("polly.har", '"status": 200', '"status": null', "har interaction 0: `response.status` is None"),
        ("nock.json", '"1f8b08', '"zz8b08', "nock interaction 2: `response[0]` is not hex"),
        (
            "nock.json",
            '"scope": "https://api.openai.com:443"',
            '"scope": "https://x:99999"',
            "`scope` 'https://x:99999' is no origin",
        ),
    ],
)
def test_a_bad_interaction_is_one_line_naming_file_and_line(tmp_path, name, old, new, why):
    p = _edit(name, old, new, tmp_path)
    c = load_cassette(p)
    assert c.error is not None and why in c.error and "\n" not in c.error, c.error
    assert c.error.startswith(f"cannot read cassette {p}")
    assert c.error.startswith(f"cannot read cassette {p}:")  # with the interaction's line
    assert len(c.interactions) == 3  # the others are read on


BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]\n" for i in range(8)
)


@pytest.mark.parametrize(
    ("name", "text", "why"),
    [
        ("t.har", '{"log": {"entries": [\n{"request": ', "line 2: not JSON"),
        ("t.json", "[" * 600 + "]" * 600, "JSON nested deeper than"),
        ("t.json", '{"http_interactions": [], "x": NaN}', "not JSON"),
        ("t.yml", "http_interactions:\n" + "- " * 400 + "x\n", "nested deeper than"),
        ("t.yml", BOMB + "http_interactions: []\n", "aliases expand to more than"),
        ("t.yml", "http_interactions:\n- !ruby/object:VCR::HTTPInteraction {}\n", "cannot read cassette"),
        ("t.har", '{"log": {"entries": [{"request": 1}]}}', "`request` is a int, not a mapping"),
    ],
)
def test_hostile_recordings_are_one_line_errors(tmp_path, name, text, why):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    c = load_cassette(p)
    assert c.error is not None and why in c.error and "\n" not in c.error and c.interactions == [], c.error
    assert str(p) in c.error


def test_huge_and_inflating_recordings_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(cassettes, "MAX_CASSETTE_BYTES", 1000)
    c = load_cassette(DATA / "polly.har")
    assert c.error == f"cannot read cassette {DATA / 'polly.har'}: larger than 1000 bytes"
    monkeypatch.setattr(cassettes, "MAX_CASSETTE_BYTES", 256 * 1024 * 1024)
    monkeypatch.setattr(content_coding, "MAX_INFLATED", 100)  # the gzip reply inflates to 266 bytes
    for name in ("go-vcr-v1.yaml", "ruby-vcr.json", "polly.har", "nock.json"):
        c = load_cassette(DATA / name)
        assert c.error is not None and "response body (gzip) inflates past 100 bytes; not read" in c.error, name
        assert len(c.interactions) == 3


def test_har_pseudo_headers_are_the_request_line_not_headers(tmp_path, reference):
    har = json.loads((DATA / "polly.har").read_text(encoding="utf-8"))
    har["log"]["entries"][0]["request"]["headers"][:0] = [
        {"name": ":authority", "value": "api.openai.com"},
        {"name": ":path", "value": "/v1/chat/completions"},
    ]
    (tmp_path / "h2.har").write_text(json.dumps(har), encoding="utf-8")
    it = load_cassette(tmp_path / "h2.har").interactions[0]
    assert it.request_headers == reference[0].request_headers == {"content-type": "application/json"}


def test_a_har_form_body_given_as_params_is_kept(tmp_path):
    har = json.loads((DATA / "polly.har").read_text(encoding="utf-8"))
    post = har["log"]["entries"][0]["request"]["postData"]
    post.update(mimeType="application/x-www-form-urlencoded", params=[{"name": "q", "value": "a b"}, {"name": "n", "value": "1"}])  # fmt: skip
    del post["text"]
    (tmp_path / "form.har").write_text(json.dumps(har), encoding="utf-8")
    assert load_cassette(tmp_path / "form.har").interactions[0].request_raw == b"q=a+b&n=1"


def test_a_polly_har_body_kept_as_base64_chunks_is_their_concatenation(tmp_path):
    """Polly.js (node-http adapter, v6) keeps a content-encoded body as the chunks received,
    each base64, in a JSON array (Netflix/pollyjs#249, #420): `content.text` is
    `["H4sI…", "…"]`, the body the chunks' bytes joined."""
    import base64

    har = json.loads((DATA / "polly.har").read_text(encoding="utf-8"))
    content = har["log"]["entries"][2]["response"]["content"]
    raw = base64.b64decode(content["text"])
    content["text"] = json.dumps([base64.b64encode(raw[:10]).decode(), base64.b64encode(raw[10:]).decode()])
    (tmp_path / "chunks.har").write_text(json.dumps(har), encoding="utf-8")
    got = load_cassette(tmp_path / "chunks.har")
    want = load_cassette(DATA / "polly.har")
    assert got.error is None and want.error is None
    assert got.interactions[2].response_body == want.interactions[2].response_body
    assert got.interactions[2].response_json == want.interactions[2].response_json is not None
    content["text"] = '["H4sI", 7]'
    (tmp_path / "bad.har").write_text(json.dumps(har), encoding="utf-8")
    assert "`response.content.text` chunk 1 is a int, not base64 text" in (
        load_cassette(tmp_path / "bad.har").error or ""
    )
