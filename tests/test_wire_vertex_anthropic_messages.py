"""The vertex-anthropic-messages wire record and schemas, checked against the documentation:
Anthropic's "Claude on Vertex AI" (https://docs.anthropic.com/en/api/claude-on-vertex-ai) and
Google's "Request predictions with Claude models" and REST reference. The planted defects of
the opt-in adapter (TC109: the stream asked for in the body, the model not in the URL; TC104;
TC802) are in tests/mutants.py (`Vertex*`), killed by tests/test_mutants.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.base import AdapterOptions
from conformance.adapters.vertex_anthropic import VertexAnthropicAdapter
from conformance.core.findings import Selection
from conformance.suite.runner import SuiteConfig, run
from conformance.wire import endpoint, registry, schemas
from conformance.wire.anthropic_messages import ANTHROPIC_COUNT_TOKENS, ANTHROPIC_MESSAGES
from conformance.wire.gemini import GEMINI
from conformance.wire.vertex_anthropic_messages import VERTEX_ANTHROPIC_MESSAGES as VERTEX
from conformance.wire.vertex_anthropic_messages import is_streaming

ROOT = Path(__file__).resolve().parents[1]
WIRE = ROOT / "schemas" / "wire"
GLOBAL = "https://aiplatform.googleapis.com/v1/projects/p/locations/global"
REGIONAL = "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5"
# the pages' own example: "Hey Claude!", max_tokens 100, anthropic_version vertex-2023-10-16
EXAMPLE: dict[str, Any] = {
    "anthropic_version": "vertex-2023-10-16",
    "messages": [{"role": "user", "content": "Hey Claude!"}],
    "max_tokens": 100,
}


def request_problems(body: Any) -> list[str]:
    v = schemas.validator(VERTEX, "request")
    assert v is not None
    return [f"{e.pointer}: {e.message}" for e in v.errors(body)]


def test_the_request_schema_accepts_the_documented_example_streamed_or_not() -> None:
    assert request_problems(EXAMPLE) == []
    assert request_problems({**EXAMPLE, "stream": True}) == []


def test_the_request_schema_refuses_a_body_naming_the_model() -> None:
    """Anthropic: "In Vertex, model is not passed in the request body."."""
    problems = request_problems({**EXAMPLE, "model": "claude-sonnet-4-5@20250929"})
    assert [p.split(":")[0] for p in problems] == ["/model"], problems


@pytest.mark.parametrize("version", [None, "2023-06-01", "bedrock-2023-05-31"])
def test_the_request_schema_refuses_a_body_without_the_vertex_anthropic_version(version: str | None) -> None:
    """Anthropic: "anthropic_version is passed in the request body ... and must be set to the value
    vertex-2023-10-16"."""
    body = {k: v for k, v in EXAMPLE.items() if k != "anthropic_version"}
    if version is not None:
        body["anthropic_version"] = version
    problems = request_problems(body)
    assert [p.split(":")[0] for p in problems] == ["/anthropic_version"], problems


def test_the_request_schema_holds_messages_to_anthropics_schema() -> None:
    """The other parameters are Anthropic's, by $ref into its folder: its rules apply."""
    problems = request_problems({**EXAMPLE, "messages": [{"role": "system", "content": "Be brief."}]})
    assert any(p.startswith("/messages/0/role") for p in problems), problems
    assert request_problems({**EXAMPLE, "max_tokens": 0}) != []


# Anthropic's MCP connector page: "This feature is not supported on Amazon Bedrock and Google
# Vertex": its top-level `mcp_servers` is Anthropic's API's alone
NOT_HOSTED = {"mcp_servers"}


def test_the_request_schema_lists_anthropics_parameters_by_ref_not_by_copy() -> None:
    """Declared once: every parameter but `model` is a $ref to Anthropic's own, and none is missing."""
    vertex = json.loads((WIRE / "vertex-anthropic-messages" / "request.json").read_text(encoding="utf-8"))
    anthropic = json.loads((WIRE / "anthropic-messages" / "request.json").read_text(encoding="utf-8"))
    props = vertex["properties"]
    assert set(props) == set(anthropic["properties"]) - NOT_HOSTED | {"anthropic_version"}
    base = anthropic["$id"] + "#/properties/"
    assert all(props[k] == {"$ref": base + k} for k in anthropic["properties"] if k != "model" and k not in NOT_HOSTED)
    assert set(vertex["required"]) == set(anthropic["required"]) - {"model"} | {"anthropic_version"}


def test_a_ref_into_another_wire_folder_resolves_offline() -> None:
    """count_tokens' request names Anthropic's message by $id: it validates (it raised
    Unresolvable before the validator was given the folders its $refs reach)."""
    v = schemas.validator(ANTHROPIC_COUNT_TOKENS, "request")
    assert v is not None
    assert v.is_valid({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
    assert not v.is_valid({"model": "m", "messages": [{"role": "narrator", "content": 3}]})


def test_responses_and_stream_events_are_anthropics() -> None:
    assert schemas.owner(VERTEX, "response") is ANTHROPIC_MESSAGES
    assert schemas.owner(VERTEX, "stream-event") is ANTHROPIC_MESSAGES
    r = schemas.validator(VERTEX, "response")
    assert r is not None and not r.is_valid({"type": "message", "content": "not a list"})


def test_the_error_schema_takes_anthropics_body_and_googles_error_model() -> None:
    v = schemas.validator(VERTEX, "error")
    assert v is not None
    assert v.is_valid({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    assert v.is_valid({"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED"}})
    assert not v.is_valid({"error": "Quota exceeded"})
    assert not v.is_valid({"message": "Quota exceeded"})


@pytest.mark.parametrize(
    ("url", "name"),
    [
        (f"{GLOBAL}/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict", VERTEX.name),
        (f"{REGIONAL}/publishers/anthropic/models/claude-3-7-sonnet@20250219:streamRawPredict", VERTEX.name),
        (f"{REGIONAL}/publishers/google/models/gemini-2.0-flash:generateContent", GEMINI.name),
        (f"{REGIONAL}/publishers/google/models/gemini-2.0-flash:streamGenerateContent?alt=sse", GEMINI.name),
        # a Vertex AI path neither record describes is none of them, never a near match
        (f"{REGIONAL}/publishers/google/models/gemini-2.0-flash:rawPredict", None),
        ("https://api.anthropic.com/v1/messages", ANTHROPIC_MESSAGES.name),
    ],
)
def test_api_for_url_tells_claude_on_vertex_from_gemini_on_vertex(url: str, name: str | None) -> None:
    api = registry.api_for_url(url)
    assert (api.name if api is not None else None) == name
    path = url.split("?")[0]
    # and by each record's own paths, whatever the registry's order
    assert VERTEX.matches(path) is (name == VERTEX.name)
    assert GEMINI.matches(path) is (name == GEMINI.name)


def test_the_stream_choice_is_the_urls_method() -> None:
    at = f"{GLOBAL}/publishers/anthropic/models/claude-sonnet-4-5@20250929"
    assert VERTEX.is_streaming(f"{at}:streamRawPredict", EXAMPLE) is True
    assert VERTEX.is_streaming(f"{at}:rawPredict", {**EXAMPLE, "stream": True}) is False
    assert is_streaming(f"{at}:streamRawPredict") is True


def test_the_endpoint_names_the_model_in_the_path() -> None:
    url = f"{GLOBAL}/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict"
    assert endpoint.model_of(VERTEX, url, {"model": "other"}) == "claude-sonnet-4-5@20250929"
    assert VERTEX.endpoint is not None and VERTEX.endpoint.model.where == "path"


def test_anthropics_facts_are_imported_not_copied() -> None:
    """Stop reasons, probes, thinking and usage are the ANTHROPIC_MESSAGES record's values."""
    for fact in ("stop_reasons", "probes", "thinking_back", "usage_fields", "carries", "tool_ids"):
        assert getattr(VERTEX, fact) is getattr(ANTHROPIC_MESSAGES, fact), fact


def test_the_adapter_renders_the_model_and_stream_into_the_url_and_reads_them_back() -> None:
    a = VertexAnthropicAdapter()
    user = {
        "id": "msg_01",
        "session_id": "sess_v",
        "role": "user",
        "content": [{"type": "text", "text": "Hey Claude!"}],
        "created_at": "2026-01-01T00:00:00Z",
        "metadata": {},
    }
    opts = AdapterOptions(model="vertex-anthropic:claude-sonnet-4-5@20250929", max_output_tokens=100, stream=True)
    wire = a.to_wire([user], [], opts)  # type: ignore[list-item]
    assert wire.path == "/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"
    assert "model" not in wire.body and wire.body["anthropic_version"] == "vertex-2023-10-16"
    assert "anthropic-version" not in {k.lower() for k in wire.headers}
    parsed = a.from_wire_request({**wire.body, "stream": False}, url=wire.path)
    assert parsed.options.model == opts.model and parsed.options.stream is True


def test_the_adapter_passes_the_suite_on_its_cassettes() -> None:
    """`turnspec conform conformance.adapters.vertex_anthropic:VertexAnthropicAdapter --no-samples`."""
    report = run(
        SuiteConfig.for_adapter(
            VertexAnthropicAdapter(),
            cassette_dirs=[ROOT / "cassettes" / "vertex-anthropic"],
            samples=None,
            selection=Selection(),
        )
    )
    failed = {r.rule: r.reasons[:2] for r in report.results if r.status == "fail"}
    assert failed == {}
    assert {r.rule for r in report.results if r.status == "pass"} >= {"TC104", "TC109", "TC606", "TC801", "TC802"}
