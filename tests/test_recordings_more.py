"""The Azure SDK test-proxy, Betamax/OkReplay and WireMock readers
(conformance/suite/recordings/azure.py, betamax.py, wiremock.py): what each reads beyond
the twin test of test_recordings.py, what it warns of, and what it refuses."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

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


# Hoverfly simulations (docs.hoverfly.io, "Simulation schema" and "Request matchers"): a pair's
# request is its matchers, `encodedBody: true` a base64 body
def _ex(value: str) -> list[dict[str, str]]:
    return [{"matcher": "exact", "value": value}]


def _pair(**request: object) -> dict[str, object]:
    req: dict[str, object] = {
        "path": _ex("/v1/chat/completions"),
        "method": _ex("POST"),
        "destination": _ex("api.openai.com"),
        "scheme": _ex("https"),
        "body": [{"matcher": "json", "value": json.dumps(CHAT)}],
        "headers": {"Content-Type": _ex("application/json")},
    }
    req.update(request)
    resp = {"status": 200, "body": json.dumps(REPLY), "encodedBody": False,
            "headers": {"Content-Type": ["application/json"]}, "templated": False}  # fmt: skip
    return {"request": req, "response": resp}


def _hoverfly(tmp_path: Path, *pairs: dict[str, object], version: str = "v5.2") -> Path:
    doc = {
        "data": {"pairs": list(pairs), "globalActions": {"delays": []}},
        "meta": {"schemaVersion": version, "hoverflyVersion": "v1.5.3", "timeExported": "2025-03-10T01:24:00Z"},
    }
    path = tmp_path / "simulation.json"
    path.write_text(json.dumps(doc, indent=2))
    return path


def test_hoverfly_reads_a_base64_body(tmp_path):
    raw = b"\x89PNG\r\n\x1a\n\x00\x00"
    pair = _pair(path=_ex("/v1/images/1"), method=_ex("GET"), body=_ex(""))
    pair["response"] = {"status": 200, "body": base64.b64encode(raw).decode(), "encodedBody": True,
                        "headers": {"Content-Type": ["image/png"]}}  # fmt: skip
    cas = load_cassette(_hoverfly(tmp_path, pair))
    assert cas.error is None, cas.error
    (it,) = cas.interactions
    assert it.response_body == raw and it.method == "GET" and it.uri == "https://api.openai.com/v1/images/1"
    assert it.request_raw == b"" and cas.warnings == []


def test_hoverfly_a_bad_base64_body_is_one_located_line(tmp_path):
    pair = _pair()
    pair["response"] = {"status": 200, "body": "@@ not base64 @@", "encodedBody": True}
    path = _hoverfly(tmp_path, pair)
    cas = load_cassette(path)
    where = f"cannot read cassette {path}:4: hoverfly interaction 0: "
    assert cas.error is not None and cas.error.startswith(f"{where}`response.body` is not base64"), cas.error
    assert "\n" not in cas.error and cas.interactions == []


def test_hoverfly_reads_every_pair_each_at_its_line(tmp_path):
    second = _pair(path=_ex("/v1/chat/completions"), query={"api-version": _ex("2024-10-21")})
    third = _pair(destination=_ex("api.anthropic.com"), path=_ex("/v1/messages"))
    path = _hoverfly(tmp_path, _pair(), second, third)
    cas = load_cassette(path)
    assert cas.error is None and cas.warnings == [], (cas.error, cas.warnings)
    assert [it.uri for it in cas.interactions] == [
        "https://api.openai.com/v1/chat/completions",
        "https://api.openai.com/v1/chat/completions?api-version=2024-10-21",
        "https://api.anthropic.com/v1/messages",
    ]
    assert [it.api for it in cas.interactions] == ["openai-chat-completions"] * 2 + ["anthropic-messages"]
    assert all(it.request_body == CHAT and json.loads(it.response_body) == REPLY for it in cas.interactions)
    lines = path.read_text().splitlines()
    assert [it.line for it in cas.interactions] == [i + 1 for i, t in enumerate(lines) if t == "      {"]


def test_hoverfly_a_body_matched_loosely_is_left_out_with_a_warning_naming_it(tmp_path):
    pair = _pair(body=[{"matcher": "jsonPartial", "value": json.dumps({"model": "gpt-4o"})}])
    cas = load_cassette(_hoverfly(tmp_path, pair))
    assert cas.error is None, cas.error
    (it,) = cas.interactions
    assert it.request_raw == b"" and it.request_body is None
    [(label, warning)] = cas.warnings
    assert label == it.label and "`request.body` is matched by `jsonPartial`, not a value: left out" in warning


def test_hoverfly_loose_headers_query_and_host_are_warnings_and_an_exact_one_beside_them_is_read(tmp_path):
    pair = _pair(
        headers={"Content-Type": _ex("application/json"), "Authorization": [{"matcher": "glob", "value": "Bearer *"}]},
        query={"api-version": [{"matcher": "regex", "value": "2024-.*"}]},
        destination=[{"matcher": "glob", "value": "*.openai.com"}],
        body=[{"matcher": "jsonpath", "value": "$.model"}, {"matcher": "exact", "value": json.dumps(CHAT)}],
    )
    cas = load_cassette(_hoverfly(tmp_path, pair))
    assert cas.error is None, cas.error
    (it,) = cas.interactions
    assert it.uri == "/v1/chat/completions" and it.request_body == CHAT
    assert it.request_headers == {"content-type": "application/json"}
    said = " | ".join(w for _, w in cas.warnings)
    for field in ("`request.headers.Authorization`", "`request.query.api-version`", "`request.destination`"):
        assert f"{field} is matched by" in said, said
    assert "`request.body`" not in said  # the exact matcher beside the jsonpath one names it


def test_hoverfly_a_path_matched_only_by_a_pattern_is_refused(tmp_path):
    path = _hoverfly(tmp_path, _pair(path=[{"matcher": "glob", "value": "/v1/*"}]), _pair())
    cas = load_cassette(path)
    assert cas.error is not None and "`request.path` is matched by `glob`, not the path that was sent" in cas.error
    assert cas.error.startswith(f"cannot read cassette {path}:4: hoverfly interaction 0:") and "\n" not in cas.error
    assert len(cas.interactions) == 1  # the other pair is read on


def test_hoverfly_templates_delays_and_state_are_warnings_naming_them(tmp_path):
    pair = _pair(requiresState={"sequence:1": "1"})
    pair["response"].update(templated=True, fixedDelay=500, transitionsState={"sequence:1": "2"})  # type: ignore[attr-defined]
    cas = load_cassette(_hoverfly(tmp_path, pair))
    assert cas.error is None, cas.error
    said = " | ".join(w for _, w in cas.warnings)
    for field in (
        "`response.templated`",
        "`response.fixedDelay`",
        "`request.requiresState`",
        "`response.transitionsState`",
    ):
        assert field in said, said


def test_hoverfly_older_schemas_are_read_too(tmp_path):
    """v1: plain values (capture's `requestType: recording`); v3: `{exactMatch: ...}` objects."""
    v1 = {"request": {"requestType": "recording", "path": "/v1/chat/completions", "method": "POST",
                      "destination": "api.openai.com", "scheme": "https", "query": "", "body": json.dumps(CHAT),
                      "headers": {"Content-Type": ["application/json"]}},
          "response": {"status": 200, "body": json.dumps(REPLY), "encodedBody": False,
                       "headers": {"Content-Type": ["application/json"]}}}  # fmt: skip
    v3 = {"request": {"path": {"exactMatch": "/v1/chat/completions"}, "method": {"exactMatch": "POST"},
                      "destination": {"exactMatch": "api.openai.com"}, "scheme": {"exactMatch": "https"},
                      "body": {"jsonMatch": json.dumps(CHAT)}, "headers": {"Content-Type": ["application/json"]}},
          "response": v1["response"]}  # fmt: skip
    for version, pair in (("v1", v1), ("v3", v3)):
        cas = load_cassette(_hoverfly(tmp_path, pair, version=version))
        assert cas.error is None and cas.warnings == [], (version, cas.error, cas.warnings)
        (it,) = cas.interactions
        assert it.uri == "https://api.openai.com/v1/chat/completions" and it.request_body == CHAT, version
        assert it.request_headers == {"content-type": "application/json"} and json.loads(it.response_body) == REPLY


def test_another_tools_data_pairs_json_is_not_taken_for_a_hoverfly_simulation(tmp_path):
    """`{data: {pairs: [...]}}` of another shape, or without the `meta.schemaVersion` Hoverfly
    needs, stays a file of no format read here."""
    others = [
        {"data": {"pairs": [{"key": "a", "value": 1}]}, "meta": {"schemaVersion": "v5"}},
        {"data": {"pairs": [{"request": {"url": "https://x/v1"}, "response": {"status_code": 200}}]},
         "meta": {"schemaVersion": "v5"}},
        {"data": {"pairs": [_pair()]}, "meta": {"version": 2}},
        {"data": {"pairs": [_pair()]}, "meta": {"schemaVersion": "2.1"}},
        {"data": {"pairs": [_pair()]}},
    ]  # fmt: skip
    for i, doc in enumerate(others):
        path = tmp_path / f"other{i}.json"
        path.write_text(json.dumps(doc))
        cas = load_cassette(path)
        assert cas.error is None and cas.skipped is not None, (i, cas.error)
        assert "not a recording of a format read here" in cas.skipped


def test_wiremock_further_exact_body_patterns_are_warnings_naming_them(tmp_path):
    """WireMock requires every `bodyPatterns` entry to match; the first exact one is the body
    read, each further `equalToJson`/`equalTo` a warning naming it, a loose one beside them none."""
    path = _wiremock(tmp_path, {"jsonBody": REPLY})
    stub = json.loads(path.read_text())
    other = {**CHAT, "temperature": 0}
    stub["request"]["bodyPatterns"] = [
        {"equalToJson": CHAT},
        {"matchesJsonPath": "$.model"},
        {"equalToJson": other},
        {"equalTo": json.dumps(other)},
    ]
    path.write_text(json.dumps(stub, indent=2))
    cas = load_cassette(path)
    assert cas.error is None, cas.error
    (it,) = cas.interactions
    assert it.request_body == CHAT
    said = [w for _, w in cas.warnings]
    assert len(said) == 2, said
    assert said[0].startswith("`request.bodyPatterns[2].equalToJson` is another exact body: only `request.bodyPatterns[0].equalToJson` is read")  # fmt: skip
    assert said[1].startswith("`request.bodyPatterns[3].equalTo` is another exact body")


def test_wiremock_one_exact_body_pattern_beside_loose_ones_is_no_warning(tmp_path):
    path = _wiremock(tmp_path, {"jsonBody": REPLY})
    stub = json.loads(path.read_text())
    stub["request"]["bodyPatterns"] = [{"matchesJsonPath": "$.messages"}, {"equalToJson": CHAT}]
    path.write_text(json.dumps(stub, indent=2))
    cas = load_cassette(path)
    assert cas.error is None and cas.warnings == [] and cas.interactions[0].request_body == CHAT


def test_hoverfly_further_exact_matchers_on_one_field_are_warnings_naming_them(tmp_path):
    other = json.dumps({**CHAT, "temperature": 0})
    pair = _pair(body=[{"matcher": "json", "value": json.dumps(CHAT)}, {"matcher": "exact", "value": other}])
    cas = load_cassette(_hoverfly(tmp_path, pair))
    assert cas.error is None, cas.error
    assert cas.interactions[0].request_body == CHAT
    [(_, warning)] = cas.warnings
    assert warning.startswith("`request.body[1]` is another exact value: only `request.body[0]` is read"), warning


@pytest.mark.parametrize(
    ("request_", "response", "why"),
    [
        ({"path": 5}, {"status": 200}, "`request.path` is a int, not a list of matchers"),
        ({"path": [{"matcher": "exact"}]}, {"status": 200}, "`request.path[0]` is an `exact` matcher with no value"),
        ({"path": _ex("/x"), "headers": [1]}, {"status": 200}, "`request.headers` is a list, not a mapping"),
        ({"path": _ex("/x"), "query": {"a": [5]}}, {"status": 200}, "`request.query.a[0]` is a int, not a mapping"),
        ({"path": _ex("/x")}, {"status": "abc"}, "`response.status` is 'abc', not an HTTP status code"),
        ({"path": _ex("/x")}, {}, "`response.status` is None, not an HTTP status code"),
        ({"path": _ex("/x")}, {"status": 200, "body": {"a": 1}}, "`response.body` is a dict, not text"),
        ({"path": _ex("/x")}, {"status": 200, "bodyFile": "missing.json"}, "missing.json does not exist"),
    ],
)
def test_hoverfly_a_bad_pair_is_one_located_line_and_the_others_are_read(tmp_path, request_, response, why):
    path = _hoverfly(tmp_path, _pair(), {"request": request_, "response": response})
    cas = load_cassette(path)
    line = [i + 1 for i, t in enumerate(path.read_text().splitlines()) if t == "      {"][1]
    assert cas.error is not None and "\n" not in cas.error, cas.error
    assert cas.error.startswith(f"cannot read cassette {path}:{line}: hoverfly interaction 1: ") and why in cas.error
    assert len(cas.interactions) == 1


def test_hoverfly_a_body_file_is_read_from_beside_the_simulation_with_a_warning(tmp_path):
    pair = _pair()
    pair["response"] = {"status": 200, "bodyFile": "reply.json", "headers": {"Content-Type": ["application/json"]}}
    path = _hoverfly(tmp_path, pair)
    (tmp_path / "reply.json").write_text(json.dumps(REPLY))
    cas = load_cassette(path)
    assert cas.error is None, cas.error
    assert json.loads(cas.interactions[0].response_body) == REPLY
    [(_, warning)] = cas.warnings
    assert warning.startswith("`response.bodyFile`: read from beside the simulation")


def test_hoverfly_a_body_file_outside_the_simulations_folder_is_refused(tmp_path):
    (tmp_path / "secret.json").write_text(json.dumps(REPLY))
    (tmp_path / "sim").mkdir()
    pair = _pair()
    pair["response"] = {"status": 200, "bodyFile": "../secret.json"}
    path = _hoverfly(tmp_path / "sim", pair)
    cas = load_cassette(path)
    assert cas.error is not None and "leads out of" in cas.error and "\n" not in cas.error, cas.error
    assert cas.interactions == []


def test_hoverfly_a_body_file_beside_a_body_is_left_out_and_a_remote_one_sets_the_pair_aside(tmp_path):
    """Hoverfly serves `body` when both are set (`readResponseBodyFiles`: a warning) and fetches a
    `bodyFile` URL at import: no body was recorded."""
    both, remote = _pair(), _pair()
    both["response"] = {"status": 200, "body": json.dumps(REPLY), "bodyFile": "other.json"}
    remote["response"] = {"status": 200, "bodyFile": "https://example.com/reply.json"}
    cas = load_cassette(_hoverfly(tmp_path, both, remote))
    assert cas.error is None, cas.error
    (it,) = cas.interactions
    assert json.loads(it.response_body) == REPLY
    [(_, warning)] = cas.warnings
    assert warning.startswith("`response.bodyFile` beside `response.body`: left out")
    [(label, reason)] = cas.set_aside
    assert label.endswith("#1") and "Hoverfly fetches it from https://example.com/reply.json" in reason


def test_hoverfly_a_matcher_of_no_name_is_exact_and_labels_are_no_obstacle(tmp_path):
    """Hoverfly's matcher registry maps the empty name to `exact`; v5 pairs may carry `labels`."""
    pair = _pair(path=[{"value": "/v1/chat/completions"}], method=[{"matcher": "", "value": "POST"}])
    pair["labels"] = ["chat"]
    cas = load_cassette(_hoverfly(tmp_path, pair))
    assert cas.error is None and cas.skipped is None and cas.warnings == [], (cas.error, cas.skipped, cas.warnings)
    (it,) = cas.interactions
    assert it.uri == "https://api.openai.com/v1/chat/completions" and it.method == "POST"


def test_hoverfly_a_v1_template_pair_is_read_as_globs(tmp_path):
    """v1 `requestType: template` values are patterns (Hoverfly upgrades them to `glob`): the
    path names no path sent, so the pair is refused; a recorded pair beside it is read."""
    template = {"request": {"requestType": "template", "path": "/v1/*", "method": "POST", "destination": None},
                "response": {"status": 200, "body": "{}", "encodedBody": False}}  # fmt: skip
    recorded = {"request": {"requestType": "recording", "path": "/v1/chat/completions", "method": "POST",
                            "destination": "api.openai.com", "scheme": "https", "body": json.dumps(CHAT)},
                "response": {"status": 200, "body": json.dumps(REPLY), "encodedBody": False}}  # fmt: skip
    cas = load_cassette(_hoverfly(tmp_path, template, recorded, version="v1"))
    assert cas.error is not None and "`request.path` is matched by `glob`, not the path that was sent" in cas.error
    (it,) = cas.interactions
    assert it.uri == "https://api.openai.com/v1/chat/completions" and it.request_body == CHAT


def test_wiremock_an_xml_body_the_recorder_wrote_as_equal_to_xml_is_read(tmp_path):
    """WireMock's recorder writes `equalToXml` for an XML body (`RequestBodyAutomaticPatternFactory`)."""
    xml = '<?xml version="1.0"?><request><q>hello</q></request>'
    path = _wiremock(tmp_path, {"jsonBody": REPLY})
    stub = json.loads(path.read_text())
    stub["request"]["bodyPatterns"] = [{"equalToXml": xml}]
    path.write_text(json.dumps(stub, indent=2))
    cas = load_cassette(path)
    assert cas.error is None and cas.warnings == [], (cas.error, cas.warnings)
    assert cas.interactions[0].request_raw == xml.encode()


DATA = Path(__file__).parent / "data" / "recordings"


def test_wiremock_a_path_template_of_no_parameter_is_read_as_its_path_with_a_warning():
    """wiremock.org "Request Matching": `urlPathTemplate` matches a path whose `{parameters}`
    vary; one without a parameter matches one path (quarkus-langchain4j's OpenAI stubs give
    `/v1/chat/completions` so), read as that path, with a warning naming the field."""
    path = DATA / "wiremock-stubs.json"
    cas = load_cassette(path)
    assert cas.error is None, cas.error
    (it,) = cas.interactions
    assert it.uri == "/v1/chat/completions" and it.api == "openai-chat-completions" and it.status == 200
    assert it.request_body == {"model": "gpt-4o", "messages": [{"role": "user", "content": "Say hello."}]}
    assert cas.warnings == [
        (
            f"{path}#0",
            f"`request.urlPathTemplate` '/v1/chat/completions' names no path parameter: read as the path it matches ({path}:3)",
        )
    ]


def test_wiremock_a_path_template_with_a_parameter_is_still_refused(tmp_path):
    stub = {"request": {"method": "POST", "urlPathTemplate": "/v1/threads/{thread_id}/runs"},
            "response": {"status": 200, "jsonBody": REPLY}}  # fmt: skip
    path = tmp_path / "stub.json"
    path.write_text(json.dumps(stub))
    assert load_cassette(path).error == (
        f"cannot read cassette {path}:1: wiremock interaction 0: `request.urlPathTemplate` is "
        "'/v1/threads/{thread_id}/runs', a pattern, not the URL that was sent; not read"
    )


@pytest.mark.parametrize(
    ("name", "by", "line"),
    [
        ("wiremock-stubs.json", "WireMock (`response-template`)", 27),
        ("hoverfly-templated.json", "Hoverfly (`templated`)", 60),
    ],
)
def test_a_body_the_mock_renders_per_request_is_set_aside_and_a_plain_template_read(name, by, line):
    """A response template holding a Handlebars expression (WireMock's `response-template`,
    Hoverfly's `templated`) is rendered for each request: no response was recorded, so it is
    set aside with the reason, never failed as a body that is not JSON; one of no expression
    is served as written, and read."""
    path = DATA / name
    cas = load_cassette(path)
    assert cas.error is None, cas.error
    assert cas.set_aside == [
        (
            f"{path}#1",
            f"no response was recorded: the body is a template {by} renders for each request it serves ({path}:{line})",
        )
    ]
    (it,) = cas.interactions
    assert it.response_json is not None and it.response_json["choices"][0]["message"]["content"] == "Hello there."


def test_a_request_to_azure_openai_names_its_model_by_the_deployment_not_the_body():
    """Azure OpenAI takes the model from the deployment in its URL
    (`/openai/deployments/<deployment>/chat/completions`, learn.microsoft.com "Azure OpenAI
    REST API reference"), so a recorded body without `model` is honest there: the `model`
    the reference adapter renders for api.openai.com is no TC802 failure, but a skip naming
    it; the rest of the request is still compared."""
    from conformance.core.findings import Selection
    from conformance.suite.runner import SuiteConfig, run

    path = DATA / "azure-openai-deployment.yaml"
    report = run(
        SuiteConfig.for_refs(["openai-chat"], samples=path, peers=False, selection=Selection(select=("TC802",)))
    )
    got = [(o.status, o.message) for o in report.outcomes if o.rule == "TC802" and o.subject.startswith(path.name)]
    assert got == [
        (
            "skip",
            "the rest matches; /model: recorded against recfmt-resource.openai.azure.com with no model in the body "
            "(a compatible server may name it elsewhere, as Azure OpenAI's deployment URL does); "
            "OpenAI Chat Completions API takes it there",
        )
    ]


def test_a_bedrock_model_id_sent_with_its_colon_raw_round_trips():
    """R's vcr 2 (ellmer's cassettes) records the URL as httr2 sent it, the model id's `:` raw
    in its path segment (RFC 3986 §3.3 allows it; Bedrock answered 200); the reference adapter
    percent-encodes it (`%3A`), which names the same id: TC802 passes."""
    from conformance.core.findings import Selection
    from conformance.suite.runner import SuiteConfig, run

    path = DATA / "r-vcr2-bedrock.yml"
    report = run(SuiteConfig.for_refs(["bedrock"], samples=path, peers=False, selection=Selection(select=("TC802",))))
    got = [(o.status, o.message) for o in report.outcomes if o.rule == "TC802" and o.subject.startswith(path.name)]
    assert got == [("pass", "")]


# -- vcr-but-better's typed bodies ----------------------------------------------------------

# vcr-but-better's README, "Cassette format": "JSON bodies are stored as structured YAML - not
# escaped strings" (body: {type: json, content}); an SSE stream "is recorded as readable text"
# (body: {type: text, content}); the response's status is the code alone
_VBB = """version: 1
interactions:
  - request:
      method: POST
      uri: https://api.openai.com/v1/chat/completions
      headers:
        content-type:
          - application/json
      body:
        type: json
        content:
          model: gpt-4o
          stream: {stream}
          messages:
            - role: user
              content: Hello!
    response:
      status: 200
      headers:
        content-type:
          - {ctype}
      body:
{body}
    recorded_at: '2026-02-20T10:30:01Z'
"""
_VBB_JSON = """        type: json
        content:
          id: chatcmpl-abc123
          object: chat.completion
          created: 1
          model: gpt-4o
          choices:
            - index: 0
              message: {role: assistant, content: Hi there!}
              finish_reason: stop"""
_VBB_SSE = """        type: text
        content: |+
          data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"gpt-4o","choices":[{"index":0,"delta":{"role":"assistant","content":"Hello"},"finish_reason":"stop"}]}

          data: [DONE]
"""


def test_vcr_but_better_typed_bodies_are_read(tmp_path):
    """A vcr-but-better cassette (vcrpy's layout, bodies `{type: json|text, content}`, a bare
    `status: 200`) is read: the JSON body as its JSON, the text body as the SSE it holds."""
    plain = tmp_path / "plain.yaml"
    plain.write_text(_VBB.format(stream="false", ctype="application/json", body=_VBB_JSON), encoding="utf-8")
    sse = tmp_path / "sse.yaml"
    sse.write_text(_VBB.format(stream="true", ctype="text/event-stream", body=_VBB_SSE), encoding="utf-8")
    a, b = load_cassette(plain), load_cassette(sse)
    assert a.error is None and b.error is None, (a.error, b.error)
    (x,), (y,) = a.interactions, b.interactions
    assert x.status == 200 and x.request_body["messages"] == [{"role": "user", "content": "Hello!"}]
    assert x.response_json["choices"][0]["message"]["content"] == "Hi there!"
    assert y.is_stream and y.request_body["stream"] is True and "data: [DONE]" in y.response_text


def test_a_vcr_but_better_body_of_another_type_is_refused_naming_it(tmp_path):
    path = tmp_path / "odd.yaml"
    odd = "        type: msgpack\n        content: AAAA"
    path.write_text(_VBB.format(stream="false", ctype="application/json", body=odd), encoding="utf-8")
    cas = load_cassette(path)
    assert cas.error is not None and "typed body of type 'msgpack'" in cas.error and not cas.interactions
