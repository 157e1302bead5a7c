"""Issue 43 items 1 and 6: the request is the method, the URL and the headers as well as the
body, and model ids are opaque.

- `wire.endpoint` judges a rendered request against what its record says the endpoint
  carries (TC109) and against the recording (TC802): each planted defect names the docs'
  sentence it breaks;
- every place the suite reads a request back gives a reader that takes them the URL and the
  headers (docs/new-wire-api.md: "the suite passes it to readers that take it");
- `AdapterOptions.model_for` / `wire_model` never cut a model id at a `:` of its own, while
  `provider:model` reads as before.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.adapters.bedrock import BedrockAdapter
from conformance.adapters.protocol import AdapterOptions, WireBody, WireRequest, known_providers, read_wire_request
from conformance.core.findings import Selection
from conformance.replay import target
from conformance.suite.runner import SuiteConfig, run
from conformance.wire import endpoint
from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES
from conformance.wire.bedrock import BEDROCK_CONVERSE
from conformance.wire.ollama import OLLAMA_CHAT
from conformance.wire.openai_chat import OPENAI_CHAT

ROOT = Path(__file__).resolve().parents[1]
HAIKU = "anthropic.claude-3-haiku-20240307-v1:0"
ARN = "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0"
JSON = {"content-type": "application/json"}


def _problems(api: Any, path: str, *, stream: bool, model: str | None, body: Any = None, headers: Any = None) -> str:
    return "; ".join(endpoint.problems(api, "POST", path, headers or JSON, body or {}, stream=stream, model=model))


# -- TC109's reading: a rendered request against the record's endpoint ----------------------


def test_a_bedrock_request_names_its_model_percent_encoded_on_the_operation_its_stream_asks_for() -> None:
    ok = f"/model/{HAIKU.replace(':', '%3A')}/converse"
    assert _problems(BEDROCK_CONVERSE, ok, stream=False, model=HAIKU) == ""
    assert _problems(BEDROCK_CONVERSE, ok + "-stream", stream=True, model=HAIKU) == ""
    # %3a and %3A are one URI (RFC 3986 §6.2.2.1); a base URL may add a prefix
    assert _problems(BEDROCK_CONVERSE, "/v2" + ok.replace("%3A", "%3a"), stream=False, model=HAIKU) == ""
    arn = "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-3-haiku-20240307-v1%3A0/converse"
    assert _problems(BEDROCK_CONVERSE, arn, stream=False, model=ARN) == ""


@pytest.mark.parametrize(
    ("path", "stream", "model", "says"),
    [
        # a streamed request sent to the non-streaming operation
        (
            "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse",
            True,
            HAIKU,
            "a streaming request sent to the non-streaming endpoint /model/{model}/converse",
        ),
        ("/model/x/converse-stream", False, "x", "a request for one reply sent to the streaming endpoint"),
        # the model id cut at its first ':' (or where its last one is)
        ("/model/anthropic.claude-3-haiku-20240307-v1/converse", False, HAIKU, "(cut at a ':')"),
        ("/model/0/converse", False, HAIKU, "(cut at a ':')"),
        # every request to one path
        ("/model/x/converse", False, HAIKU, "the path names model 'x'"),
        # not percent-encoded: ':' raw, an ARN's '/' splitting the path
        (f"/model/{HAIKU}/converse", False, HAIKU, "not percent-encoded as 'anthropic.claude-3-haiku-20240307-v1%3A0'"),
        (f"/model/{ARN}/converse", False, ARN, "not percent-encoded as one segment"),
        ("/v1/messages", False, HAIKU, "not the endpoint /model/{model}/converse"),
    ],
    ids=["stream-to-one", "one-to-stream", "cut-first", "cut-last", "fixed-path", "raw-colon", "raw-arn", "other"],
)
def test_each_endpoint_defect_fails_naming_the_docs_sentence(path: str, stream: bool, model: str, says: str) -> None:
    found = _problems(BEDROCK_CONVERSE, path, stream=stream, model=model)
    assert says in found, found
    # the sentence it breaks: the record's (AWS's request syntax, Smithy's label encoding) or
    # canonical §6.3's model id
    assert any(s in found for s in ("API_runtime_Converse.html", "httplabel-trait", "canonical §6.3")), found


def test_a_body_carried_model_and_stream_choice_and_a_version_header() -> None:
    """Anthropic: `/model`, `/stream` and anthropic-version ("you must send an
    anthropic-version request header"); Ollama streams unless told `stream: false`."""
    body = {"model": "claude-sonnet-4-5", "max_tokens": 8, "messages": []}
    headers = {"anthropic-version": "2023-06-01", **JSON}
    assert (
        _problems(
            ANTHROPIC_MESSAGES, "/v1/messages", stream=False, model="claude-sonnet-4-5", body=body, headers=headers
        )
        == ""
    )
    missing = _problems(ANTHROPIC_MESSAGES, "/v1/messages", stream=False, model="claude-sonnet-4-5", body=body)
    assert "no anthropic-version header" in missing and "docs.anthropic.com/en/api/versioning" in missing
    unstreamed = _problems(
        ANTHROPIC_MESSAGES, "/v1/messages", stream=True, model="claude-sonnet-4-5", body=body, headers=headers
    )
    assert "a streaming request without /stream: True" in unstreamed
    ft = "ft:gpt-4o-mini-2024-07-18:my-org:custom-suffix:9ABel2dg"
    cut = _problems(OPENAI_CHAT, "/v1/chat/completions", stream=False, model=ft, body={"model": ft.split(":", 1)[1]})
    assert "(cut at a ':')" in cut and "canonical §6.3" in cut
    assert "streams by default" in _problems(OLLAMA_CHAT, "/api/chat", stream=False, model="m", body={"model": "m"})
    assert _problems(OLLAMA_CHAT, "/api/chat", stream=True, model="m", body={"model": "m"}) == ""


def test_a_request_rendered_back_is_compared_with_the_recording_outside_its_body() -> None:
    """TC802: the operation and model segment of the path (the base URL's prefix aside), under
    RFC 3986 §6.2.2; a path layout the record does not describe is not compared."""
    rec = (
        "POST",
        f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{HAIKU.replace(':', '%3A')}/converse-stream",
        {},
    )
    assert (
        endpoint.differences(
            BEDROCK_CONVERSE, rec, ("POST", "/model/anthropic.claude-3-haiku-20240307-v1%3a0/converse-stream", {})
        )
        == []
    )
    lost = endpoint.differences(BEDROCK_CONVERSE, rec, ("POST", "/model/unknown/converse", {}))
    assert lost == [f"URL path: rendered /model/unknown/converse, recorded {rec[1].split('.com', 1)[1]}"]
    assert endpoint.differences(BEDROCK_CONVERSE, rec, ("GET", rec[1], {})) == ["method: rendered GET, recorded POST"]
    # a header whose value is part of the request must come back; a version of the client's choice need not
    versioned = replace(ANTHROPIC_MESSAGES.endpoint.headers[0], round_trip=True)
    api = replace(ANTHROPIC_MESSAGES, endpoint=replace(ANTHROPIC_MESSAGES.endpoint, headers=(versioned,)))
    old = ("POST", "https://api.anthropic.com/v1/messages", {"anthropic-version": "2023-06-01"})
    new = ("POST", "/v1/messages", {"anthropic-version": "2026-10-21"})
    assert endpoint.differences(ANTHROPIC_MESSAGES, old, new) == []
    assert endpoint.differences(api, old, new) == [
        "header anthropic-version: rendered '2026-10-21', recorded '2023-06-01'"
    ]


def test_a_model_segment_names_the_same_id_with_its_colon_raw_or_percent_encoded() -> None:
    """RFC 3986 §3.3: a path segment may carry `:` as it is (pchar); Bedrock reads the model id
    from the decoded segment, so `...-v1:0` (R's httr2, under ellmer) and `...-v1%3A0`
    (botocore) name one model; another id is still a difference."""
    raw = ("POST", f"https://bedrock-runtime.us-east-1.amazonaws.com/model/{HAIKU}/converse", {})
    encoded = f"/model/{HAIKU.replace(':', '%3A')}/converse"
    assert endpoint.differences(BEDROCK_CONVERSE, raw, ("POST", encoded, {})) == []
    other = encoded.replace("v1%3A0", "v2%3A0")
    assert endpoint.differences(BEDROCK_CONVERSE, raw, ("POST", other, {})) == [
        f"URL path: rendered {other}, recorded /model/{HAIKU}/converse"
    ]


# -- the reader gets the URL and the headers everywhere --------------------------------------


class Spy(BedrockAdapter):
    """Bedrock's reference adapter, noting what each `from_wire_request` call was given."""

    calls: ClassVar[list[tuple[str | None, Any]]] = []

    def from_wire_request(
        self, body: WireBody, *, session_id: str | None = None, url: str | None = None, headers: Any = None
    ) -> Any:
        Spy.calls.append((url, headers))
        return super().from_wire_request(body, session_id=session_id, url=url)


def test_every_read_back_gives_a_reader_that_takes_them_the_url_and_headers() -> None:
    Spy.calls = []
    report = run(SuiteConfig.for_adapter(Spy(), cassette_dirs=[ROOT / "cassettes/bedrock"], samples=None))
    assert report.result("TC802", "bedrock").status == "pass"
    assert len(Spy.calls) > 50  # recorded requests, and requests rendered by every family of checks
    assert [c for c in Spy.calls if c[0] is None or c[1] is None] == []
    assert all(isinstance(h, dict) and "content-type" in h for _, h in Spy.calls)


def test_a_reader_written_against_an_earlier_release_is_called_as_it_was() -> None:
    """The protocol grows by optional keywords a reader names (`accepts_keyword`), never a
    required parameter: a reader taking neither `url` nor `headers` is called without them."""
    seen: list[dict[str, Any]] = []

    class Old:
        def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> Any:
            seen.append({"session_id": session_id})

    class New:
        def from_wire_request(self, body: WireBody, *, session_id: str | None = None, headers: Any = None) -> Any:
            seen.append({"headers": headers})

    read_wire_request(Old(), {}, session_id="s", url="/u", headers={"a": "b"})
    read_wire_request(New(), {}, session_id="s", url="/u", headers={"a": "b"})
    assert seen == [{"session_id": "s"}, {"headers": {"a": "b"}}]


# -- model ids are opaque (item 6) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "provider", "wire"),
    [
        ("bedrock:" + HAIKU, "bedrock", HAIKU),
        (HAIKU, "bedrock", HAIKU),  # earlier releases' wire_model gave "0"
        (ARN, "bedrock", ARN),
        ("ollama:llama3.2:latest", "ollama", "llama3.2:latest"),
        ("llama3.2:latest", "ollama", "llama3.2:latest"),  # earlier: "latest"
        ("anthropic:claude-sonnet-4-6", "anthropic", "claude-sonnet-4-6"),  # canonical §6.3, as before
        ("openai:ft:gpt-4o-mini:org::abc", "openai", "ft:gpt-4o-mini:org::abc"),
        ("openrouter:deepseek/deepseek-v3", "openrouter", "deepseek/deepseek-v3"),
    ],
)
def test_a_model_id_is_never_cut_at_a_colon_of_its_own(model: str, provider: str, wire: str) -> None:
    options = AdapterOptions(model=model)
    assert options.model_for(provider) == wire
    assert options.wire_model == wire


def test_wire_model_strips_the_prefix_of_every_provider_turnspec_loaded() -> None:
    """A third party's `provider` (Cohere's here) is a prefix `wire_model` strips once its
    adapter is loaded, as the documented `provider:model` did before."""
    from conformance.adapters import registry

    registry.load(f"{ROOT / 'tests/third_party/cohere_adapter.py'}:CohereAdapter")
    assert "cohere" in known_providers()
    assert AdapterOptions(model="cohere:command-a-03-2025").wire_model == "command-a-03-2025"
    assert AdapterOptions(model="command-a-03-2025").model_for("cohere") == "command-a-03-2025"


def test_replay_check_keeps_a_model_holding_a_colon_whole() -> None:
    t = target(f"bedrock:{HAIKU}")
    assert t.model == f"bedrock:{HAIKU}" and t.label == f"bedrock:{HAIKU}"
    wire = t.adapter.to_wire([], [], AdapterOptions(model=t.model))
    assert wire.path == "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
    assert target("ollama:llama3.2:latest").model == "ollama:llama3.2:latest"


def test_tc109_probes_the_stream_and_each_documented_model_id() -> None:
    """The suite renders one reply, a stream and each of the record's example ids itself:
    an adapter rendering one fixed path fails on the stream and on the models."""

    class OnePath(BedrockAdapter):
        def to_wire(self, *a: Any, **kw: Any) -> WireRequest:
            return replace(super().to_wire(*a, **kw), path="/model/x/converse")

    reasons = run(SuiteConfig.for_adapter(OnePath(), samples=None, selection=Selection(select=("TC109",))))
    result = reasons.result("TC109", "bedrock")
    assert result.status == "fail"
    probes = [r for r in result.reasons if r.startswith("endpoint: ")]
    assert any(r.startswith("endpoint: streamed: POST /model/x/converse: a streaming request sent to") for r in probes)
    assert any(r.startswith(f"endpoint: model {HAIKU}: the path names model 'x'") for r in probes), probes
