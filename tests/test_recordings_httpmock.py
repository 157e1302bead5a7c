"""httpmock (Rust) recordings (conformance/suite/recordings/httpmock.py): one `{when, then}`
mock a YAML document, several a stream of documents, as `Recording::save` writes them and
`MockServer::playback` reads them (httpmock.rs, "Record and Playback"; `StaticMockDefinition`,
`StaticRequestRequirements` and `StaticHTTPResponse` in its source). The recordings here are
hand-written in that layout (0xPlaygrounds/rig's `rig-cassette` files are such recordings).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from conformance.suite.cassettes import load_cassette

CHAT = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Say hi."}]}
REPLY = {
    "id": "chatcmpl-httpmock1",
    "object": "chat.completion",
    "created": 1741570000,
    "model": "gpt-4o-mini-2024-07-18",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11},
}
STREAM = (
    'data: {"id":"chatcmpl-httpmock2","object":"chat.completion.chunk","created":1741570001,'
    '"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi."},'
    '"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)


def _mock(body: str, stream: bool, then_body: str) -> str:
    accept = "text/event-stream" if stream else "'*/*'"
    ctype = "text/event-stream; charset=utf-8" if stream else "application/json"
    return (
        "when:\n  path: /v1/chat/completions\n  method: POST\n  query_param: []\n  header:\n"
        f"  - name: accept\n    value: {accept}\n  - name: content-type\n    value: application/json\n"
        f"  body: {json.dumps(body)}\n"
        f"then:\n  status: 200\n  header:\n  - name: content-type\n    value: {ctype}\n{then_body}"
    )


def _recording(tmp_path: Path) -> Path:
    streamed = json.dumps({**CHAT, "stream": True})
    stream_body = "  body: |+\n" + "".join(f"    {line}\n" if line else "\n" for line in STREAM.split("\n")[:-1])
    text = _mock(json.dumps(CHAT), False, f"  body: {json.dumps(json.dumps(REPLY))}\n") + "---\n"
    text += _mock(streamed, True, stream_body)
    path = tmp_path / "chat.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_stream_of_mock_documents_reads_one_interaction_each_at_its_line(tmp_path):
    path = _recording(tmp_path)
    cas = load_cassette(path)
    assert cas.error is None and cas.skipped is None, cas.error or cas.skipped
    assert cas.format == "httpmock" and len(cas.interactions) == 2
    reply, stream = cas.interactions
    for it in cas.interactions:
        assert it.method == "POST" and it.status == 200 and it.uri == "/v1/chat/completions"
        assert it.api == "openai-chat-completions"
    assert reply.request_body == CHAT and reply.response_json == REPLY and not reply.is_stream
    assert reply.request_headers == {"accept": "*/*", "content-type": "application/json"}
    assert stream.request_body == {**CHAT, "stream": True} and stream.is_stream
    assert stream.response_body == STREAM.encode()
    lines = path.read_text().split("\n")
    assert [it.line for it in cas.interactions] == [i + 1 for i, t in enumerate(lines) if t == "when:"]
    assert cas.warnings == []


def test_one_mock_a_file_reads_as_one_interaction(tmp_path):
    path = tmp_path / "one.yaml"
    path.write_text(_mock(json.dumps(CHAT), False, f"  body: {json.dumps(json.dumps(REPLY))}\n"), encoding="utf-8")
    cas = load_cassette(path)
    assert cas.error is None and cas.format == "httpmock" and len(cas.interactions) == 1
    assert cas.interactions[0].response_json == REPLY


def test_base64_and_json_bodies_a_host_and_the_query_are_read(tmp_path):
    """`body_base64` is the body's bytes, `json_body` a JSON value served as its text;
    `host`, `scheme` and `query_param` make the URL."""
    raw = base64.b64encode(json.dumps(REPLY).encode()).decode()
    path = tmp_path / "gem.yaml"
    path.write_text(
        "when:\n  scheme: https\n  host: generativelanguage.googleapis.com\n"
        "  path: /v1beta/models/gemini-2.5-flash:generateContent\n  method: POST\n"
        "  query_param:\n  - name: key\n    value: '[REDACTED]'\n"
        f"  json_body: {json.dumps({'contents': [{'role': 'user', 'parts': [{'text': 'hi'}]}]})}\n"
        f"then:\n  status: 400\n  body_base64: {raw}\n",
        encoding="utf-8",
    )
    (it,) = load_cassette(path).interactions
    assert (
        it.uri
        == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent?key=%5BREDACTED%5D"
    )
    assert it.api == "gemini-generate-content" and it.status == 400
    assert it.request_body == {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    assert it.response_json == REPLY


def test_a_loose_matcher_and_a_delay_are_warnings_naming_them(tmp_path):
    path = tmp_path / "loose.yaml"
    path.write_text(
        _mock(json.dumps(CHAT), False, f"  body: {json.dumps(json.dumps(REPLY))}\n  delay: 200\n").replace(
            "  query_param: []\n", "  query_param: []\n  header_exists:\n  - authorization\n"
        ),
        encoding="utf-8",
    )
    cas = load_cassette(path)
    assert cas.error is None and len(cas.interactions) == 1
    said = [w for _, w in cas.warnings]
    assert any("`when.header_exists`" in w for w in said) and any("`then.delay`" in w for w in said)


def test_a_body_from_file_is_set_aside_and_a_mock_of_no_path_is_refused(tmp_path):
    path = tmp_path / "file.yaml"
    path.write_text("when:\n  path: /v1/messages\n  method: POST\nthen:\n  status: 200\n  body_from_file: reply.json\n")
    cas = load_cassette(path)
    assert cas.error is None and cas.interactions == [] and "body_from_file" in cas.set_aside[0][1]
    path.write_text("when:\n  path_prefix:\n  - /v1\n  method: POST\nthen:\n  status: 200\n  body: '{}'\n")
    cas = load_cassette(path)
    assert cas.error is not None and "`when.path` names no path (matched only by `when.path_prefix`)" in cas.error


def test_another_tools_when_then_yaml_is_not_taken_for_an_httpmock_mock(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("when:\n  branch: main\nthen:\n  deploy: true\n")
    cas = load_cassette(path)
    assert cas.error is None and cas.skipped is not None and "not a recording of a format read here" in cas.skipped


def test_an_empty_document_closing_the_stream_holds_no_mock(tmp_path):
    """A `---` after the last mock starts an empty document (YAML: a null one), not a mock."""
    path = _recording(tmp_path)
    path.write_text(path.read_text(encoding="utf-8") + "---\n", encoding="utf-8")
    cas = load_cassette(path)
    assert cas.error is None and cas.skipped is None and len(cas.interactions) == 2, cas.skipped
