"""The Azure SDK test-proxy, Betamax/OkReplay and WireMock readers
(conformance/suite/recordings/azure.py, betamax.py, wiremock.py): what each reads beyond
the twin test of test_recordings.py, what it warns of, and what it refuses."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from conformance.suite.cassettes import load_cassette

CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Say hello."}]}
REPLY = {"id": "chatcmpl-1", "object": "chat.completion", "choices": []}


def _azure(tmp_path: Path, **entry: object) -> Path:
    base = {
        "RequestUri": "https://myres.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21",
        "RequestMethod": "POST",
        "RequestHeaders": {"Content-Type": "application/json"},
        "RequestBody": CHAT,
        "StatusCode": 200,
        "ResponseHeaders": {"Content-Type": "application/json"},
        "ResponseBody": REPLY,
    }
    base.update(entry)
    path = tmp_path / "rec.json"
    path.write_text(json.dumps({"Entries": [base], "Variables": {}}, indent=2))
    return path


def test_azure_reads_base64_bodies_of_binary_types_and_header_lists(tmp_path):
    raw = b"\x00\x01binary"
    path = _azure(
        tmp_path,
        ResponseHeaders={"Content-Type": "application/octet-stream", "X-Ms-Region": ["eastus", "westus"]},
        ResponseBody=base64.b64encode(raw).decode(),
    )
    cas = load_cassette(path)
    assert cas.error is None, cas.error
    (it,) = cas.interactions
    assert it.response_body == raw
    assert it.headers["x-ms-region"] == ["eastus", "westus"]
    assert it.request_body == CHAT and cas.warnings == []


def test_azure_a_json_value_under_a_binary_type_is_read_with_a_warning_naming_the_field(tmp_path):
    cas = load_cassette(_azure(tmp_path, ResponseHeaders={"Content-Type": "application/octet-stream"}))
    assert cas.error is None, cas.error
    assert json.loads(cas.interactions[0].response_body) == REPLY
    assert len(cas.warnings) == 1 and "`ResponseBody`" in cas.warnings[0][1]


def test_azure_refuses_an_entry_without_its_url_naming_the_line(tmp_path):
    cas = load_cassette(_azure(tmp_path, RequestUri=None))
    assert cas.error is not None and "RequestUri" in cas.error and "rec.json:3: " in cas.error


def test_azure_refuses_a_bad_base64_body(tmp_path):
    cas = load_cassette(_azure(tmp_path, ResponseHeaders={"Content-Type": "image/png"}, ResponseBody="@@not base64@@"))
    assert cas.error is not None and "ResponseBody" in cas.error


def test_betamax_binary_bodies_are_read_and_a_tape_tag_builds_no_object(tmp_path):
    raw = base64.b64encode(b"\x89PNG\r\n").decode()
    path = tmp_path / "tape.yaml"
    path.write_text(
        "!tape\nname: t\ninteractions:\n- recorded: 2025-01-01T00:00:00.000Z\n  request:\n    method: GET\n"
        "    uri: https://api.example.com/img\n  response:\n    status: {code: 200, message: OK}\n"
        f"    headers:\n      Content-Type: image/png\n    body: !!binary |-\n      {raw}\n"
    )
    cas = load_cassette(path)
    assert cas.error is None, cas.error
    (it,) = cas.interactions
    assert it.status == 200 and it.response_body == b"\x89PNG\r\n" and it.line == 4


def test_betamax_tape_tag_on_a_list_is_refused(tmp_path):
    path = tmp_path / "tape.yaml"
    path.write_text("!tape\n- a\n- b\n")
    cas = load_cassette(path)
    assert cas.error is not None and "\n" not in cas.error


def _wiremock(tmp_path: Path, response: dict[str, object]) -> Path:
    (tmp_path / "mappings").mkdir()
    (tmp_path / "__files").mkdir()
    stub = {
        "request": {"method": "POST", "url": "/v1/chat/completions", "bodyPatterns": [{"equalToJson": CHAT}]},
        "response": {"status": 200, "headers": {"Content-Type": "application/json"}, **response},
    }
    path = tmp_path / "mappings" / "chat.json"
    path.write_text(json.dumps(stub, indent=2))
    return path


def test_wiremock_reads_a_json_body_and_the_request_of_its_exact_matchers(tmp_path):
    cas = load_cassette(_wiremock(tmp_path, {"jsonBody": REPLY}))
    assert cas.error is None, cas.error
    (it,) = cas.interactions
    assert it.method == "POST" and it.uri.endswith("/v1/chat/completions") and it.api == "openai-chat-completions"
    assert it.request_body == CHAT and json.loads(it.response_body) == REPLY


def test_wiremock_reads_a_body_file_from_files_beside_the_mappings(tmp_path):
    path = _wiremock(tmp_path, {"bodyFileName": "reply.json"})
    (tmp_path / "__files" / "reply.json").write_text(json.dumps(REPLY))
    cas = load_cassette(path)
    assert cas.error is None, cas.error
    assert json.loads(cas.interactions[0].response_body) == REPLY


def test_wiremock_refuses_a_body_file_outside_files(tmp_path):
    path = _wiremock(tmp_path, {"bodyFileName": "../mappings/chat.json"})
    cas = load_cassette(path)
    assert cas.error is not None and "\n" not in cas.error


def test_wiremock_a_delay_is_a_warning_naming_it(tmp_path):
    cas = load_cassette(_wiremock(tmp_path, {"jsonBody": REPLY, "fixedDelayMilliseconds": 200}))
    assert cas.error is None, cas.error
    assert any("fixedDelayMilliseconds" in w for _, w in cas.warnings)


def test_another_tools_request_response_json_is_not_taken_for_a_wiremock_stub(tmp_path):
    """An exchange dump with `request` and `response` whose fields WireMock does not define
    (here `status_code`, `content`) is no stub: it stays a file of no format read here."""
    path = tmp_path / "exchange.json"
    path.write_text(
        json.dumps(
            {"request": {"method": "POST", "url": "https://x/v1"}, "response": {"status_code": 200, "content": "{}"}}
        )
    )
    cas = load_cassette(path)
    assert cas.error is None and cas.skipped is not None and "not a recording of a format read here" in cas.skipped
