"""httprr traces (Go: rsc.io/httprr, LangChainGo's internal/httprr) are read and linted.

The layout, from httprr's own reader and writer (`open`, `writeLog`): the line
`httprr trace v1`, then per exchange a line `N1 N2` and N1 bytes of the request as
`Request.WriteProxy` writes it, N2 bytes of the response as `Response.Write` writes it (CRLF
heads; a response of unknown length chunked; a sized body ends no line, so the next record's
`N1 N2` follows its last byte). The messages below are written here by hand in that layout.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from conformance.core.errors import InputError
from conformance.suite.cassettes import iter_cassettes, load_cassette
from conformance.wire import cassette_lint

ANTHROPIC_REQ = b'{"model":"claude-sonnet-4-5","max_tokens":64,"messages":[{"role":"user","content":"Say hello."}]}'
SSE = (
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_01HttprrFixture0001","type":"message",'
    b'"role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,"stop_sequence":null,'
    b'"usage":{"input_tokens":10,"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello."}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n'
)
REPLY = (
    b'{"id":"msg_01HttprrFixture0002","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",'
    b'"content":[{"type":"text","text":"Hello."}],"stop_reason":"end_turn","stop_sequence":null,'
    b'"usage":{"input_tokens":10,"output_tokens":3}}'
)


def _request(body: bytes, *headers: str, target: str = "https://api.anthropic.com/v1/messages") -> bytes:
    head = [f"POST {target} HTTP/1.1", "Host: api.anthropic.com", "User-Agent: Go-http-client/1.1",
            f"Content-Length: {len(body)}", "Anthropic-Version: 2023-06-01", "Content-Type: application/json", *headers]  # fmt: skip
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def _response(body: bytes, *headers: str, status: str = "HTTP/1.1 200 OK", sized: bool = True) -> bytes:
    framing = [f"Content-Length: {len(body)}"] if sized else []
    return ("\r\n".join([status, *framing, *headers]) + "\r\n\r\n").encode() + body


def _trace(tmp_path: Path, *records: tuple[bytes, bytes], name: str = "TestX.httprr") -> Path:
    raw = b"httprr trace v1\n" + b"".join(b"%d %d\n" % (len(q), len(r)) + q + r for q, r in records)
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    return path


def test_a_folder_of_httprr_traces_is_read_compressed_ones_too(tmp_path):
    """LangChainGo keeps its recordings as testdata/*.httprr (and *.httprr.gz): none was read before."""
    sse = _response(SSE, "Content-Type: text/event-stream; charset=utf-8")
    _trace(tmp_path, (_request(ANTHROPIC_REQ), sse), name="TestA.httprr")
    _trace(
        tmp_path, (_request(ANTHROPIC_REQ), _response(REPLY, "Content-Type: application/json")), name="TestB.httprr.gz"
    )
    got = {c.label: (c.format, c.error, len(c.interactions)) for c in iter_cassettes(tmp_path)}
    assert got == {"TestA.httprr": ("httprr", None, 1), "TestB.httprr.gz": ("httprr", None, 1)}


def test_a_sized_stream_over_http2_with_repeated_headers_back_to_back_records(tmp_path):
    """What real traces hold: an SSE body sized by Content-Length (Go read it whole), an
    `HTTP/2.0` status line, `Vary` once per value, and the second record's `N1 N2` right
    after the first response's last byte (a JSON body ends no line)."""
    reply = _response(REPLY, "Content-Type: application/json")
    stream = _response(
        SSE, "Content-Type: text/event-stream", "Vary: Origin", "Vary: X-Origin", status="HTTP/2.0 200 OK"
    )
    path = _trace(tmp_path, (_request(ANTHROPIC_REQ), reply), (_request(ANTHROPIC_REQ), stream))
    cas = load_cassette(path)
    assert cas.error is None and cas.warnings == []
    a, b = cas.interactions
    assert a.response_json == json.loads(REPLY)
    assert (b.uri, b.api, b.status, b.is_stream, b.response_body) == (
        "https://api.anthropic.com/v1/messages", "anthropic-messages", 200, True, SSE)  # fmt: skip
    assert b.headers["vary"] == ["Origin", "X-Origin"]
    assert b.request_body == json.loads(ANTHROPIC_REQ) and b.request_headers["anthropic-version"] == "2023-06-01"
    sizes = b"}%d %d" % (len(_request(ANTHROPIC_REQ)), len(stream))
    second = next(i + 1 for i, t in enumerate(path.read_bytes().split(b"\n")) if t.endswith(sizes))
    assert [it.line for it in cas.interactions] == [2, second]


def test_a_chunked_body_is_the_bytes_its_chunks_carry_and_a_trailer_is_a_warning(tmp_path):
    body = b'{"model":"gemma3:1b","message":{"role":"assistant","content":"Hi"},"done":false}\n'
    last = b'{"model":"gemma3:1b","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"prompt_eval_count":5,"eval_count":2}\n'
    chunks = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\nX-Trace-Id: t1\r\n\r\n" % (len(body), body, len(last), last)
    resp = _response(chunks, "Transfer-Encoding: chunked", "Content-Type: application/x-ndjson", sized=False)
    req = b'{"model":"gemma3:1b","messages":[{"role":"user","content":"Hi"}],"stream":true}'
    path = _trace(tmp_path, (_request(req, target="http://localhost:11434/api/chat"), resp))
    cas = load_cassette(path)
    (it,) = cas.interactions
    assert cas.error is None and it.api == "ollama-chat" and it.response_body == body + last
    assert it.headers["x-trace-id"] == ["t1"]
    assert [w for _, w in cas.warnings] == [
        f"httprr: the response's trailer field 'X-Trace-Id' after its last chunk is read as a header ({path}:2)"
    ]


def test_a_content_length_that_disagrees_with_the_record_is_a_warning_and_every_byte_is_read(tmp_path):
    """A scrubber that pads or rewrites a body (LangChainGo's embedding formatter) leaves the header behind."""
    resp = _response(REPLY, "Content-Type: application/json").replace(
        f"Content-Length: {len(REPLY)}".encode(), f"Content-Length: {len(REPLY) - 7}".encode()
    )
    cas = load_cassette(_trace(tmp_path, (_request(ANTHROPIC_REQ), resp)))
    assert cas.interactions[0].response_json == json.loads(REPLY)
    assert [w.split(" (")[0] for _, w in cas.warnings] == [
        f"httprr: the response's Content-Length says {len(REPLY) - 7} bytes, the record holds {len(REPLY)}: all {len(REPLY)} are read"
    ]


def test_a_gzip_body_the_client_asked_for_is_decoded_and_lf_heads_are_read(tmp_path):
    """A client that sets Accept-Encoding itself gets the body coded (Go's transport then
    leaves it so); httprr's reader allows LF without CR."""
    coded = gzip.compress(REPLY)
    resp = _response(coded, "Content-Encoding: gzip", "Content-Type: application/json").replace(b"\r\n", b"\n")
    cas = load_cassette(
        _trace(tmp_path, (_request(ANTHROPIC_REQ, "Accept-Encoding: gzip").replace(b"\r\n", b"\n"), resp))
    )
    (it,) = cas.interactions
    assert cas.error is None and it.response_json == json.loads(REPLY) and "content-encoding" not in it.headers


def test_a_request_line_of_a_path_is_read_against_its_host_with_a_warning(tmp_path):
    req = _request(ANTHROPIC_REQ, target="/v1/messages")
    cas = load_cassette(_trace(tmp_path, (req, _response(REPLY, "Content-Type: application/json"))))
    (it,) = cas.interactions
    assert it.uri == "https://api.anthropic.com/v1/messages" and it.api == "anthropic-messages"
    assert [w.split(" (")[0] for _, w in cas.warnings] == [
        "httprr: the request line names only a path; read as https://api.anthropic.com/v1/messages"
    ]


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b"httprr trace v2\n", "line 1: not an httprr trace (the first line is not 'httprr trace v1')"),
        (
            b"httprr trace v1\n10 99999\nPOST",
            "line 2: corrupt httprr trace (the record says 10 + 99999 bytes, 4 follow)",
        ),
        (
            b"httprr trace v1\nten 5\n",
            "line 2: corrupt httprr trace (a record starts with 'N1 N2', its request's and response's sizes)",
        ),
    ],
)
def test_what_httprr_refuses_is_one_located_line(tmp_path, raw, error):
    path = tmp_path / "bad.httprr"
    path.write_bytes(raw)
    assert load_cassette(path).error == f"cannot read cassette {path}: {error}"
    with pytest.raises(InputError) as exc:
        cassette_lint.lint(path)
    assert str(exc.value) == f"{path}: {error}"


def test_a_record_of_no_http_message_is_located_and_the_others_are_read(tmp_path):
    good = (_request(ANTHROPIC_REQ), _response(REPLY, "Content-Type: application/json"))
    path = _trace(tmp_path, (b"not http at all", b"nor this"), good)
    cas = load_cassette(path)
    assert (
        cas.error
        == f"cannot read cassette {path}:2: httprr interaction 0: line 3: the request has no blank line after its headers"
    )
    assert len(cas.interactions) == 1 and cas.interactions[0].response_json == json.loads(REPLY)


def test_lint_finds_secrets_in_a_trace_at_their_lines_and_fix_refuses_to_rewrite_it(tmp_path):
    key = "sk-ant-api03-" + "Q7vK2mX9pL4nR8sT1wY6zB3cF5hJ0dG" * 3
    req = _request(ANTHROPIC_REQ, f"X-Api-Key: {key}")
    resp = _response(
        REPLY, "Anthropic-Organization-Id: 2b7c9e41-6d3a-4f58-a0e2-9c1d7b5f3a86", "Content-Type: application/json"
    )
    path = _trace(tmp_path, (req, resp))
    hits = cassette_lint.lint(path)
    lines = path.read_bytes().split(b"\n")
    where = {h.finding.rule: h.finding.line for h in hits}
    assert where["CL001"] == next(i + 1 for i, t in enumerate(lines) if t.startswith(b"X-Api-Key"))
    assert where["CL004"] == next(i + 1 for i, t in enumerate(lines) if t.startswith(b"Anthropic-Organization-Id"))
    before = path.read_bytes()
    assert cassette_lint.fix(path, hits) == [
        f"{path}:{where[rule]}: {rule} in an httprr trace, which --fix does not rewrite (its records' sizes frame it); "
        "scrub it with httprr's ScrubReq/ScrubResp and re-record"
        for rule in ("CL001", "CL004")
    ]
    assert path.read_bytes() == before


def test_lint_reads_a_coded_body_of_a_trace(tmp_path):
    key = "sk-proj-" + "T3bK8wQ1zL6nV4cR9xF2hJ7mP5sD0gY" * 2
    body = gzip.compress(json.dumps({"echo": key}).encode())
    resp = _response(body, "Content-Encoding: gzip", "Content-Type: application/json")
    hits = cassette_lint.lint(_trace(tmp_path, (_request(ANTHROPIC_REQ), resp)))
    assert [(h.finding.rule, h.binary) for h in hits] == [("CL002", True)]


def test_a_head_of_crlf_lines_with_one_bare_lf_line_is_read(tmp_path):
    """LangChainGo rewrites the serialized `User-Agent` line with a multi-line regexp whose
    `.*$` takes the line's CR too, so that one line of a CRLF head ends in a bare LF (its
    traces' request sizes count one byte fewer than Go wrote)."""
    req = _request(ANTHROPIC_REQ).replace(b"User-Agent: Go-http-client/1.1\r\n", b"User-Agent: langchaingo-httprr\n")
    cas = load_cassette(_trace(tmp_path, (req, _response(REPLY, "Content-Type: application/json"))))
    (it,) = cas.interactions
    assert cas.error is None and cas.warnings == []
    assert it.request_headers["user-agent"] == "langchaingo-httprr" and it.request_body == json.loads(ANTHROPIC_REQ)
    assert it.request_headers["anthropic-version"] == "2023-06-01"
