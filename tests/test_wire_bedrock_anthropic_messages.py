"""The bedrock-anthropic-messages wire record and schemas, checked against AWS's documentation:
the "Request and Response" page for Claude
(https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html)
and the InvokeModel / InvokeModelWithResponseStream references. The planted defects of the
opt-in adapter (TC109: the stream asked for in the body, the model id not percent-encoded;
TC104; TC606; TC801) are in tests/mutants.py (`BedrockAnthropic*`), killed by
tests/test_mutants.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import registry as adapter_registry
from conformance.adapters.base import AdapterOptions, RateLimitError, RequestContext
from conformance.adapters.bedrock_anthropic import BedrockAnthropicAdapter
from conformance.core.findings import Selection
from conformance.suite.cassettes import iter_cassettes
from conformance.suite.runner import SuiteConfig, run
from conformance.wire import registry, schemas
from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES
from conformance.wire.api import WireApi
from conformance.wire.bedrock import BEDROCK_CONVERSE, BEDROCK_COUNT_TOKENS
from conformance.wire.bedrock_anthropic_messages import BEDROCK_ANTHROPIC_MESSAGES as BEDROCK
from conformance.wire.bedrock_anthropic_messages import FRAMING

ROOT = Path(__file__).resolve().parents[1]
WIRE = ROOT / "schemas" / "wire"
CASSETTES = ROOT / "cassettes" / "bedrock-anthropic"
HOST = "https://bedrock-runtime.us-east-1.amazonaws.com"
HAIKU = "anthropic.claude-3-haiku-20240307-v1%3A0"
PROFILE = (
    "arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-haiku-20240307-v1%3A0"
)
# the page's request: anthropic_version, max_tokens, messages (required), no model, no stream
EXAMPLE: dict[str, Any] = {
    "anthropic_version": "bedrock-2023-05-31",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": [{"type": "text", "text": "Hello, Claude"}]}],
}


def request_problems(body: Any) -> list[str]:
    v = schemas.validator(BEDROCK, "request")
    assert v is not None
    return [e.pointer for e in v.errors(body)]


def shipped_api_for_url(url: str) -> WireApi | None:
    """`registry.api_for_url` over the records this project ships (a test module may have
    registered a third party's record for the same paths before them)."""
    path = url.split("?")[0].split("amazonaws.com", 1)[-1]
    return next((a for a in registry.APIS if a.name in registry.SHIPPED and a.matches(path)), None)


def test_the_request_schema_accepts_the_documented_body() -> None:
    assert request_problems(EXAMPLE) == []
    assert request_problems({**EXAMPLE, "anthropic_beta": ["computer-use-2024-10-22"], "system": "Be brief."}) == []


@pytest.mark.parametrize(
    ("extra", "pointer"),
    [({"model": "anthropic.claude-3-haiku-20240307-v1:0"}, "/model"), ({"stream": True}, "/stream")],
)
def test_the_request_schema_refuses_what_the_url_carries(extra: dict[str, Any], pointer: str) -> None:
    """The model is the operation's modelId label, the stream its own operation: neither is a body field."""
    assert request_problems({**EXAMPLE, **extra}) == [pointer]


@pytest.mark.parametrize("version", [None, "vertex-2023-10-16", "2023-06-01"])
def test_the_request_schema_refuses_a_body_without_the_bedrock_anthropic_version(version: str | None) -> None:
    """ "anthropic_version – (Required) The anthropic version. The value must be bedrock-2023-05-31"."""
    body = {k: v for k, v in EXAMPLE.items() if k != "anthropic_version"}
    if version is not None:
        body["anthropic_version"] = version
    assert request_problems(body) == ["/anthropic_version"]


# Anthropic's MCP connector page: "This feature is not supported on Amazon Bedrock and Google
# Vertex": its top-level `mcp_servers` is Anthropic's API's alone
NOT_HOSTED = {"mcp_servers"}


def test_the_request_schema_lists_anthropics_parameters_by_ref_not_by_copy() -> None:
    mine = json.loads((WIRE / "bedrock-anthropic-messages" / "request.json").read_text(encoding="utf-8"))
    anthropic = json.loads((WIRE / "anthropic-messages" / "request.json").read_text(encoding="utf-8"))
    props = mine["properties"]
    assert set(props) == set(anthropic["properties"]) - NOT_HOSTED | {"anthropic_version", "anthropic_beta"}
    base = anthropic["$id"] + "#/properties/"
    assert all(
        props[k] == {"$ref": base + k} for k in anthropic["properties"] if k not in ("model", "stream", *NOT_HOSTED)
    )
    assert request_problems({**EXAMPLE, "messages": [{"role": "system", "content": "x"}]}) != []


def test_responses_stream_events_and_errors_are_declared_once_elsewhere() -> None:
    assert schemas.owner(BEDROCK, "response") is ANTHROPIC_MESSAGES
    assert schemas.owner(BEDROCK, "stream-event") is ANTHROPIC_MESSAGES
    errors = schemas.validator(BEDROCK, "error")
    assert errors is not None
    assert errors.is_valid({"message": "Too many requests, please wait before trying again."})
    assert not errors.is_valid({"message": 429})


@pytest.mark.parametrize(
    ("path", "name"),
    [
        (f"/model/{HAIKU}/invoke", BEDROCK.name),
        (f"/model/{PROFILE}/invoke-with-response-stream", BEDROCK.name),
        # InvokeModel of another family takes that family's body: not this record's
        ("/model/meta.llama3-8b-instruct-v1%3A0/invoke", None),
        (f"/model/{HAIKU}/converse-stream", BEDROCK_CONVERSE.name),
        (f"/model/{HAIKU}/count-tokens", BEDROCK_COUNT_TOKENS.name),
    ],
)
def test_the_shipped_records_tell_invoke_model_from_converse(path: str, name: str | None) -> None:
    found = shipped_api_for_url(HOST + path)
    assert (found.name if found is not None else None) == name
    assert BEDROCK.matches(path) is (name == BEDROCK.name)


def test_the_stream_choice_is_the_operation() -> None:
    assert BEDROCK.is_streaming(f"{HOST}/model/{HAIKU}/invoke-with-response-stream", EXAMPLE)
    assert not BEDROCK.is_streaming(f"{HOST}/model/{HAIKU}/invoke", {**EXAMPLE, "stream": True})


def _interactions(name: str) -> list[Any]:
    [cassette] = [c for c in iter_cassettes(CASSETTES) if c.label == name]
    return cassette.interactions


def test_the_nested_framing_reads_anthropic_events_out_of_the_chunks() -> None:
    streamed = _interactions("text.yaml")[1]
    events = [e.value for e in FRAMING.json_events([streamed.response_body])]
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    assert BEDROCK.probes.stream_stop_reason(events) == "end_turn"
    assert BEDROCK.probes.stream_usage(events) == {"input": 10, "output": 25, "cache_read": 0, "cache_write": 0}


def test_the_adapter_puts_the_model_and_the_stream_in_the_url() -> None:
    a = BedrockAnthropicAdapter()
    user = {
        "id": "msg_01",
        "session_id": "sess_b",
        "role": "user",
        "content": [{"type": "text", "text": "Hello, Claude"}],
        "created_at": "2026-01-01T00:00:00Z",
        "metadata": {},
    }
    opts = AdapterOptions(model="bedrock:anthropic.claude-3-haiku-20240307-v1:0", max_output_tokens=64, stream=True)
    wire = a.to_wire([user], [], opts)  # type: ignore[list-item]
    assert wire.path == f"/model/{HAIKU}/invoke-with-response-stream"
    assert wire.body["anthropic_version"] == "bedrock-2023-05-31"
    assert "model" not in wire.body and "stream" not in wire.body
    parsed = a.from_wire_request(wire.body, url=HOST + wire.path)
    assert parsed.options.model == opts.model and parsed.options.stream is True


def test_an_exception_frame_ends_the_stream_with_its_class() -> None:
    """A `throttlingException` frame (ResponseStream's member) is ThrottlingException: a rate limit."""
    it = _interactions("errors.yaml")[9]
    a = BedrockAnthropicAdapter()
    events: list[Any] = []
    with pytest.raises(RateLimitError):
        for ev in a.stream_response([it.response_body], RequestContext(session_id="sess_b")):
            events.append(ev)
    assert [e["type"] for e in events][-2:] == ["error", "message_complete"]
    assert events[-1]["stop_reason"] == "error"


def test_the_adapter_passes_the_suite_even_with_a_third_partys_record_for_the_same_paths() -> None:
    """tests/third_party/their_bedrock_invoke.py registers its own record for `/model/*/invoke`
    before the shipped ones: the adapter's own cassettes are still read by the record it names."""
    adapter_registry.load(f"{ROOT / 'tests' / 'third_party' / 'their_bedrock_invoke.py'}:TheirBedrockInvokeAdapter")
    first = registry.api_for_url(f"{HOST}/model/{HAIKU}/invoke")
    assert first is not None and first.name == "bedrock-invoke-anthropic"
    report = run(
        SuiteConfig.for_adapter(
            BedrockAnthropicAdapter(), cassette_dirs=[CASSETTES], samples=None, selection=Selection()
        )
    )
    failed = {r.rule: r.reasons[:2] for r in report.results if r.status == "fail"}
    assert failed == {}
    ran = {r.rule: r.passed for r in report.results if r.status == "pass"}
    assert all(ran.get(rule, 0) > 0 for rule in ("TC104", "TC109", "TC606", "TC607", "TC801", "TC802")), ran
