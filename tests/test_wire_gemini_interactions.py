"""The gemini-interactions wire record and schemas, checked against Google's documentation
(the Interactions API: https://ai.google.dev/gemini-api/docs/interactions, its streaming page
and API reference), never against an adapter: the cassettes are the documented examples,
the schemas refuse what the docs refuse, URLs route to the record, and a recording of the
API among third-party samples is judged against its schemas (TC800) instead of skipped as
an endpoint no record matches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.core.findings import Selection
from conformance.suite.cassettes import load_cassette
from conformance.suite.interactions import Interaction
from conformance.suite.runner import SuiteConfig, run
from conformance.wire import registry, schemas
from conformance.wire.framing import Framing
from conformance.wire.gemini_interactions import GEMINI_INTERACTIONS as API

ROOT = Path(__file__).resolve().parents[1]
CASSETTES = ROOT / "cassettes" / "gemini-interactions"
URL = "https://generativelanguage.googleapis.com/v1beta/interactions"


def its(name: str) -> list[Interaction]:
    cas = load_cassette(CASSETTES / name, name)
    assert cas.error is None, cas.error
    return cas.interactions


def events(it: Interaction) -> list[Any]:
    return [json.loads(ev.data) for ev in Framing.SSE.decoder().feed(it.response_body)]


def test_the_cassettes_are_the_documented_shapes() -> None:
    """Every request, response, stream event and error body of the cassettes validates against
    the wire schemas written from Google's docs (an oracle independent of any adapter)."""
    v = {k: schemas.validator(API, k) for k in ("request", "response", "stream-event", "error")}
    assert all(x is not None for x in v.values()), v
    seen = {"request": 0, "response": 0, "stream-event": 0, "error": 0}
    for it in its("text.yaml") + its("tools.yaml") + its("errors.yaml"):
        assert it.api == "gemini-interactions", it.label
        assert v["request"].errors(it.request_body) == [], it.label  # type: ignore[union-attr]
        seen["request"] += 1
        if it.status >= 400:
            assert v["error"].errors(it.response_json) == [], it.label  # type: ignore[union-attr]
            assert it.response_json["error"]["code"] == it.status, (
                it.label
            )  # google.rpc.Status: code is the HTTP status
            seen["error"] += 1
        elif it.is_stream:
            for ev in events(it):
                assert v["stream-event"].errors(ev) == [], (it.label, ev)  # type: ignore[union-attr]
                seen["stream-event"] += 1
        else:
            assert v["response"].errors(it.response_json) == [], it.label  # type: ignore[union-attr]
            seen["response"] += 1
    assert all(seen.values()), seen


def test_the_cassettes_are_what_their_script_writes(tmp_path: Path) -> None:
    """cassettes/gemini-interactions/*.yaml are _author.py's output, byte for byte (edit the
    script and run it again, never the YAML)."""
    import importlib.util  # function-level: only this test loads the script

    spec = importlib.util.spec_from_file_location("interactions_author", CASSETTES / "_author.py")
    assert spec is not None and spec.loader is not None
    author = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(author)
    for name, items in author.cassettes().items():
        author.write(tmp_path / name, author.HEADERS[name], items)
        assert (tmp_path / name).read_bytes() == (CASSETTES / name).read_bytes(), name


def test_the_sse_event_field_names_the_events_event_type() -> None:
    """Streaming interactions: `event: interaction.created` / `data: {..., "event_type":
    "interaction.created"}` (the documented stream's first event): the two name the same event."""
    for it in its("text.yaml") + its("tools.yaml"):
        if it.is_stream:
            for ev in Framing.SSE.decoder().feed(it.response_body):
                assert ev.event == json.loads(ev.data)["event_type"], it.label


REFUSED: list[tuple[str, dict[str, Any]]] = [
    ("no input (input: required)", {"model": "gemini-3-flash-preview"}),
    ("neither model nor agent", {"input": "Hello"}),
    (
        "both model and agent (agent: mutually exclusive with model)",
        {"model": "gemini-3-flash-preview", "agent": "deep-research-pro-preview-12-2025", "input": "Hello"},
    ),
    ("input a number", {"model": "m", "input": 42}),
    ("stream a string (stream: boolean)", {"model": "m", "input": "Hello", "stream": "true"}),
    ("store a string", {"model": "m", "input": "Hello", "store": "false"}),
    ("previous_interaction_id a number", {"model": "m", "input": "Hello", "previous_interaction_id": 7}),
    ("system_instruction an object (a string)", {"model": "m", "input": "Hi", "system_instruction": {"parts": []}}),
    (
        "function_result without call_id (Required)",
        {"model": "m", "input": [{"type": "function_result", "name": "get_weather", "result": "sunny"}]},
    ),
    (
        "function_call without id (Required)",
        {"model": "m", "input": [{"type": "function_call", "name": "get_weather", "arguments": {}}]},
    ),
    ("a text content without text", {"model": "m", "input": [{"type": "text"}]}),
    ("an item with neither type nor role", {"model": "m", "input": [{"text": "Hello"}]}),
    ("max_output_tokens a string", {"model": "m", "input": "Hi", "generation_config": {"max_output_tokens": "9"}}),
]


@pytest.mark.parametrize(("why", "body"), REFUSED, ids=[w for w, _ in REFUSED])
def test_the_request_schema_refuses_a_body_the_docs_refuse(why: str, body: dict[str, Any]) -> None:
    validator = schemas.validator(API, "request")
    assert validator is not None
    assert not validator.is_valid(body), why


ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("a string input", {"model": "gemini-3.5-flash", "input": "Explain how AI works in a few words"}),
    (
        "a content list (text and an image by uri)",
        {
            "model": "gemini-3-flash-preview",
            "input": [
                {"type": "text", "text": "Describe the image."},
                {"type": "image", "uri": "https://example.com/cat.png", "mime_type": "image/png"},
            ],
        },
    ),
    (
        "steps of a stateless conversation",
        {
            "model": "gemini-3-flash-preview",
            "store": False,
            "input": [
                {"type": "user_input", "content": [{"type": "text", "text": "What is the weather in Paris?"}]},
                {"type": "function_call", "id": "c1", "name": "get_weather", "arguments": {"location": "Paris"}},
                {
                    "type": "function_result",
                    "call_id": "c1",
                    "name": "get_weather",
                    "result": "sunny",
                    "is_error": False,
                },
            ],
        },
    ),
    (
        "the launch-era {role, content} turns",
        {"model": "gemini-3-flash-preview", "input": [{"role": "user", "content": "What are the largest cities?"}]},
    ),
    (
        "an agent in the background",
        {"agent": "deep-research-pro-preview-12-2025", "input": "Research the history of TPUs.", "background": True},
    ),
]


@pytest.mark.parametrize(("why", "body"), ACCEPTED, ids=[w for w, _ in ACCEPTED])
def test_the_request_schema_takes_the_documented_forms(why: str, body: dict[str, Any]) -> None:
    validator = schemas.validator(API, "request")
    assert validator is not None
    assert validator.errors(body) == [], why


def test_the_response_and_event_schemas_hold_what_the_reference_requires() -> None:
    response, event = schemas.validator(API, "response"), schemas.validator(API, "stream-event")
    assert response is not None and event is not None
    assert not response.is_valid({"id": "v1_x"})  # status: "Required. Output only."
    assert not response.is_valid({"status": "completed"})  # id: "Required. Output only."
    assert response.is_valid({"id": "v1_x", "status": "queued", "later_field": 1})  # open to what the API adds
    bad_call = {"id": "v1_x", "status": "requires_action", "steps": [{"type": "function_call", "name": "f"}]}
    assert not response.is_valid(bad_call)  # FunctionCallStep: id, name, arguments required
    assert not event.is_valid({"index": 0})  # every event names its event_type
    assert not event.is_valid({"event_type": "step.delta", "index": 0})  # StepDelta: delta
    assert not event.is_valid({"event_type": "step.delta", "index": 0, "delta": {"type": "text"}})
    assert not event.is_valid({"event_type": "interaction.status_update", "status": "completed"})
    assert event.is_valid({"event_type": "content.delta", "index": 0, "delta": {"type": "text", "text": "x"}})
    assert event.is_valid({"event_type": "step.future", "anything": True})


@pytest.mark.parametrize(
    ("url", "name"),
    [
        (URL, "gemini-interactions"),
        (URL + "?alt=sse", "gemini-interactions"),
        ("https://proxy.example.com/gemini/v1beta/interactions/", "gemini-interactions"),
        (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
            "gemini-generate-content",
        ),
        (
            "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            "gemini-generate-content",
        ),
        ("https://generativelanguage.googleapis.com/v1beta/interactions/v1_ChdpQUFv", None),  # get/cancel by id
        ("https://api.example.com/v4/interactions", None),  # another vendor's "interactions"
    ],
)
def test_api_for_url_routes_interactions_to_the_record_and_generate_content_to_gemini(url: str, name: str) -> None:
    api = registry.api_for_url(url)
    assert (api.name if api is not None else None) == name


def test_the_record_reads_the_documented_statuses_usage_and_calls() -> None:
    (text, stream), (call, result, call_stream) = its("text.yaml"), its("tools.yaml")
    p = API.probes
    assert API.stop_reasons[p.response_stop_reason(text.response_json)] == "end_turn"
    assert p.response_usage(text.response_json) == {"input": 8, "output": 12, "cache_read": 0, "cache_write": 0}
    assert API.stop_reasons[p.stream_stop_reason(events(stream))] == "end_turn"
    assert p.stream_usage(events(stream)) == {"input": 11, "output": 29, "cache_read": 0, "cache_write": 0}
    assert p.stream_model(events(stream)) == "gemini-3-flash-preview"
    assert API.stop_reasons[p.response_stop_reason(call.response_json)] == "tool_use"
    assert [loc.value for loc in p.response_tool_ids(call.response_json)] == ["gth23981"]
    assert [loc.pointer for loc in p.response_tool_calls(call.response_json)] == ["/steps/0"]
    assert [loc.value for loc in p.tool_result_ids(result.request_body)] == ["gth23981"]
    assert [loc.value for loc in p.tool_result_errors(result.request_body)] == [False]
    assert API.stop_reasons[p.stream_stop_reason(events(call_stream))] == "tool_use"
    # a completed interaction whose steps hold calls is a tool-use turn too
    done = dict(call.response_json, status="completed")
    assert API.stop_reasons[p.response_stop_reason(done)] == "tool_use"
    # thoughts are output; cached tokens are "the cached part of the prompt" (taken out of input)
    usage = {"total_input_tokens": 100, "total_cached_tokens": 40, "total_output_tokens": 5, "total_thought_tokens": 3}
    assert p.response_usage({"usage": usage}) == {"input": 60, "output": 8, "cache_read": 40, "cache_write": 0}
    assert API.is_streaming(URL, stream.request_body) and not API.is_streaming(URL, text.request_body)
    assert API.state_fields == ("/previous_interaction_id",)
    assert p.system({"system_instruction": "Be terse."})[0].pointer == "/system_instruction"


def test_the_record_locates_the_reply_text_and_calls_parsed_and_streamed() -> None:
    """TC908/TC909/TC609 read the recording through these probes: the `text` parts of the
    `model_output` steps (the quickstart's response), the `text` deltas of a streamed
    `model_output` step, a `function_call` step's name and arguments, and a streamed call's
    `arguments_delta` strings (ArgumentsDelta: "arguments?: string; type: "arguments_delta"")."""
    (text, stream), (call, _result, call_stream) = its("text.yaml"), its("tools.yaml")
    p = API.probes
    assert [loc.value for loc in p.response_text(text.response_json)] == [
        "AI learns patterns from data to make predictions."
    ]
    assert [loc.pointer for loc in p.response_text(text.response_json)] == ["/steps/1/content/0/text"]
    assert p.stream_text(events(stream)) == ["1, 2, 3, 4, 5, 6, 7, 8, 9, 10"]
    assert [p.call_of(loc.value) for loc in p.response_tool_calls(call.response_json)] == [
        ("get_weather", {"location": "Paris"})
    ]
    assert p.stream_tool_calls(events(call_stream)) == [("get_weather", {"location": "Paris"})]
    assert p.stream_tool_fragments(events(call_stream)) == [['{"location": ', '"Paris"}']]
    # a call opened whole by step.start (no deltas) reads from the step's own arguments
    whole = [{"event_type": "step.start", "index": 2, "step": call.response_json["steps"][0]}]
    assert p.stream_tool_calls(whole) == [("get_weather", {"location": "Paris"})]
    assert p.stream_tool_fragments(whole) == [[]]
    # the streamed call is the same reply as its non-streamed twin (TC606 pairs them): its id
    streamed = next(ev["step"] for ev in events(call_stream) if ev["event_type"] == "step.start")
    assert streamed["id"] == call.response_json["steps"][0]["id"] == "gth23981"


def test_a_stream_error_event_is_googles_error_body() -> None:
    evs = [
        {"event_type": "interaction.created", "interaction": {"id": "v1_x", "status": "in_progress"}},
        {"event_type": "error", "error": {"code": 503, "message": "The model is overloaded."}},
    ]
    assert API.probes.stream_error(evs) == {"error": {"code": 503, "message": "The model is overloaded."}}
    assert API.probes.stream_stop_reason(evs) == "failed" and API.stop_reasons["failed"] == "error"
    assert API.errors.status_in_body == "/error/code"  # gemini.ERRORS: the HTTP status the error stands for


def test_wire_show_prints_the_record(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["wire", "show", "gemini-interactions"]) == 0
    page = capsys.readouterr().out
    assert "Gemini Interactions API" in page
    for want in ("requires_action", "total_input_tokens", "total_cached_tokens", "previous_interaction_id"):
        assert want in page, want
    assert "`gemini-interactions`: 9 exchanges" in page


def _cassette(folder: Path, name: str, response: dict[str, Any]) -> None:
    request = json.dumps({"model": "gemini-3-flash-preview", "input": "Hello"})
    doc = {
        "interactions": [
            {
                "request": {"body": request, "headers": {}, "method": "POST", "uri": URL},
                "response": {
                    "body": {"string": json.dumps(response)},
                    "headers": {"content-type": ["application/json"]},
                    "status": {"code": 200, "message": "OK"},
                },
            }
        ],
        "version": 1,
    }
    (folder / name).write_text(json.dumps(doc), encoding="utf-8")  # JSON is YAML


def test_a_sampled_recording_of_the_api_is_judged_against_its_schemas(tmp_path: Path) -> None:
    """A third-party recording of the Interactions API is attributed to the record and judged
    by its schemas (TC800): an honest one is skipped as served by no adapter (it was "unknown
    endpoint ...: no WireApi record matches it" before the record), one off the response
    schema fails as a recording problem."""
    samples = tmp_path / "wire"
    samples.mkdir()
    _cassette(samples, "honest.yaml", {"id": "v1_a", "status": "completed", "steps": []})
    _cassette(samples, "damaged.yaml", {"id": "v1_b", "steps": []})  # no status: "Required"
    config = SuiteConfig.for_refs(["anthropic"], samples=samples, selection=Selection(select=("TC800",)))
    report = run(config)
    by = {o.subject.rsplit("/", 1)[-1]: (o.status, o.message) for o in report.outcomes if o.rule == "TC800"}
    assert by["honest.yaml#0"] == ("skip", "gemini-interactions: no registered adapter serves it"), by
    status, message = by["damaged.yaml#0"]
    assert status == "fail", by
    assert "off its API's wire schema at /" in message and "schemas/wire/gemini-interactions/response.json" in message
