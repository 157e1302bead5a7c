"""Issue 37: what OpenAI-compatible servers send beside the docs, read right.

A departure that loses nothing reads on, reported as a WARN line naming the field and the
server's value; the wire schemas say which ones, per field (`x-tolerate`,
conformance.wire.tolerance), and the strict validators TC104 judges rendered requests with
never read that annotation. Content no reader may lose: custom tool calls, the deprecated
`function_call`, object-valued `content`, several choices in a stream.

Each body is written by hand from the server's documented shape (the OpenAI API reference,
chat/object and chat-streaming, and the function-calling guide's custom tools) with the one
departure issue 37's recordings show, never from the adapter.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from conformance.adapters import OpenAIChatAdapter, RequestContext, WireResponse, debug
from conformance.adapters.base import AdapterOptions, WireFormatError
from conformance.adapters.openai_responses import OpenAIResponsesAdapter
from conformance.core.schemas import load_set
from conformance.suite.checks.common import shape
from conformance.suite.outcome import AdapterUnderTest
from conformance.wire import registry as wire_registry
from conformance.wire import schemas as wire_schemas
from conformance.wire import tolerance
from conformance.wire.openai_chat import OPENAI_CHAT
from conformance.wire.openai_responses import OPENAI_RESPONSES

ROOT = Path(__file__).resolve().parents[1]
SID = "sess_departures"


def _ctx() -> RequestContext:
    return RequestContext(session_id=SID)


def _chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, index: int = 0, **top: Any
) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": index, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": choices,
        **top,
    }


def _sse(*events: dict[str, Any], done: bool = True) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events) + ("data: [DONE]\n\n" if done else "")


def _reply(message: dict[str, Any], finish: str | None = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


def _departures(records: list[logging.LogRecord]) -> list[tuple[str, Any]]:
    return [(r.field, r.value) for r in records if getattr(r, "event", None) == "wire_departure"]


def _parse(body: str | dict[str, Any], caplog: pytest.LogCaptureFixture, adapter: Any = None) -> debug.Parsed:
    text = body if isinstance(body, str) else json.dumps(body)
    with caplog.at_level(logging.WARNING):
        return debug.parse(adapter or OpenAIChatAdapter(), text, session_id=SID)


# -- the departures the schemas tolerate -----------------------------------------------------------


def test_a_null_count_in_every_chunk_reads_with_one_warning_naming_field_and_value(caplog):
    usage = {"prompt_tokens": 3, "completion_tokens": None, "total_tokens": 3}
    stream = _sse(
        _chunk({"role": "assistant", "content": "Hi"}, usage=usage),
        _chunk({"content": " there"}, "stop", usage=usage),
    )
    parsed = _parse(stream, caplog)
    assert parsed.message is not None and parsed.message["content"] == [{"type": "text", "text": "Hi there"}]
    assert _departures(caplog.records) == [("/usage/completion_tokens", None)]
    line = next(r.getMessage() for r in caplog.records if getattr(r, "event", None) == "wire_departure")
    assert "in 2 event(s)" in line and "null" in line and "tolerated" in line


def test_chunks_without_id_read_with_a_warning(caplog):
    first, last = _chunk({"role": "assistant", "content": "Hi"}), _chunk({}, "stop")
    del first["id"], last["id"]
    parsed = _parse(_sse(first, last), caplog)
    assert parsed.message is not None and parsed.message["content"] == [{"type": "text", "text": "Hi"}]
    assert _departures(caplog.records) == [("/id", None)]


def test_an_unknown_finish_reason_reads_as_the_fallback_with_the_raw_value_kept(caplog):
    parsed = _parse(_reply({"content": "Hi"}, finish="eos"), caplog)
    assert parsed.message is not None
    assert parsed.message["metadata"]["provider_raw"]["openai-chat"]["finish_reason"] == "eos"
    assert _departures(caplog.records) == [("/choices/0/finish_reason", "eos")]
    caplog.clear()
    parsed = _parse(_sse(_chunk({"role": "assistant", "content": "Hi"}), _chunk({}, "eos")), caplog)
    assert parsed.events[-1]["stop_reason"] == "end_turn"
    assert _departures(caplog.records) == [("/choices/0/finish_reason", "eos")]
    assert any(getattr(r, "event", None) == "unknown_stop_reason" and r.stop_reason == "eos" for r in caplog.records)


def test_object_content_reads_as_its_part_or_its_json_text(caplog):
    parsed = _parse(_reply({"content": {"type": "text", "text": "Paris."}}), caplog)
    assert parsed.message is not None and parsed.message["content"] == [{"type": "text", "text": "Paris."}]
    assert _departures(caplog.records) == [("/choices/0/message/content", {"type": "text", "text": "Paris."})]
    caplog.clear()
    parsed = _parse(_reply({"content": {"city": "Paris"}}), caplog)
    assert parsed.message is not None and parsed.message["content"] == [{"type": "text", "text": '{"city": "Paris"}'}]
    assert any(getattr(r, "event", None) == "content_object" for r in caplog.records)


def _call(index: int, cid: str | None, name: str | None, args: str) -> dict[str, Any]:
    fn = {"arguments": args} if name is None else {"name": name, "arguments": args}
    call: dict[str, Any] = {"index": index, "function": fn}
    if cid is not None:
        call |= {"id": cid, "type": "function"}
    return _chunk({"tool_calls": [call]})


def test_a_finish_reason_after_each_parallel_call_reads_every_call(caplog):
    stream = _sse(
        _chunk({"role": "assistant", "content": None}),
        _call(0, "call_a", "get_weather", '{"city": "Oslo"}'),
        _chunk({}, "tool_calls"),
        _call(1, "call_b", "get_time", '{"tz": "CET"}'),
        _chunk({}, "tool_calls"),
    )
    parsed = _parse(stream, caplog)
    assert parsed.message is not None
    calls = [(b["name"], b["input"]) for b in parsed.message["content"]]
    assert calls == [("get_weather", {"city": "Oslo"}), ("get_time", {"tz": "CET"})]
    assert parsed.events[-1]["stop_reason"] == "tool_use"
    assert ("finish_reason", "tool_calls") in _departures(caplog.records)
    # text after a finish reason is still content after the end: refused, named
    with pytest.raises(WireFormatError, match="after finish_reason"):
        list(
            OpenAIChatAdapter().stream_response(
                [_sse(_chunk({"content": "a"}), _chunk({}, "stop"), _chunk({"content": "b"})).encode()], _ctx()
            )
        )


def test_a_stream_of_several_choices_keeps_choice_0_and_says_so(caplog):
    stream = _sse(
        _chunk({"role": "assistant", "content": "One"}),
        _chunk({"role": "assistant", "content": "Two"}, index=1),
        _chunk({}, "stop"),
        _chunk({}, "stop", index=1),
    )
    parsed = _parse(stream, caplog)
    assert parsed.message is not None and parsed.message["content"] == [{"type": "text", "text": "One"}]
    dropped = [r for r in caplog.records if getattr(r, "event", None) == "choices_dropped"]
    assert len(dropped) == 1 and dropped[0].choices == ["1"] and "choice 0" in dropped[0].getMessage()


# -- what stays refused, named by field, rule and kind of recording ---------------------------------


def test_an_untolerated_departure_is_refused_naming_field_rule_and_stream_or_reply(caplog):
    usage = {"prompt_tokens": 3, "completion_tokens": "two", "total_tokens": 5}
    with pytest.raises(WireFormatError) as e:
        _parse(_sse(_chunk({"content": "Hi"}, "stop", usage=usage)), caplog)
    assert "/usage/completion_tokens" in str(e.value) and "expected integer, got string" in str(e.value)
    assert "stream-event schema" in str(e.value) and e.value.event == 0
    assert "non-streaming" not in str(e.value)  # a chunk is not called a reply (issue 37)
    with pytest.raises(
        WireFormatError, match=r"/usage/completion_tokens: .*\(openai-chat-completions response schema\)"
    ):
        _parse({**_reply({"content": "Hi"}), "usage": usage}, caplog)


def test_the_strict_validators_ignore_the_annotation():
    """`validator` (TC104, `wire render`) refuses each tolerated departure; `reader` reads it."""
    strict, lenient = wire_schemas.validator(OPENAI_CHAT, "response"), wire_schemas.reader(OPENAI_CHAT, "response")
    assert strict is not None and lenient is not None
    for body in (_reply({"content": "x"}, finish="eos"), _reply({"content": {"type": "text", "text": "x"}})):
        assert not strict.is_valid(body)
        reading = lenient.read(body)
        assert reading.error is None and reading.departures
    assert lenient.read(_reply({"content": 5})).error is not None


# a request schema of a test record whose `model` tolerates null: TC104 must still fail it
_TOLERANT_REQUEST = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://turnspec.dev/schemas/wire/test-tolerant/request.json",
    "title": "a test request",
    "x-sources": ["https://example.org/docs"],
    "type": "object",
    "properties": {"model": {"type": "string", "x-tolerate": {"null": "a test server sends null"}}},
    "required": ["model"],
}


def test_tc104_judges_a_rendered_request_strictly_whatever_the_schema_tolerates(tmp_path, monkeypatch):
    (tmp_path / "request.json").write_text(json.dumps(_TOLERANT_REQUEST), encoding="utf-8")
    api = replace(OPENAI_CHAT, name="test-tolerant", schema_dir="test-tolerant", schema_path=str(tmp_path))
    monkeypatch.setattr(wire_registry, "APIS", (api, *wire_registry.APIS))

    class Tolerant(OpenAIChatAdapter):
        wire_api: ClassVar[str] = "test-tolerant"

    a = Tolerant()
    subject = AdapterUnderTest("t", a, [])
    outcomes = list(shape(subject, a, "rendered", {"model": None}))
    assert [o.status for o in outcomes] == ["fail"] and "/model" in outcomes[0].message
    reading = wire_schemas.reader(api, "request")
    assert reading is not None and reading.read({"model": None}).error is None


def test_every_annotation_of_the_wire_schemas_is_well_formed_and_reachable():
    """Each `x-tolerate` is well formed and reachable from a root document (an annotation
    no body's path leads to would tolerate nothing, silently)."""
    found = 0
    for folder in sorted(p for p in (ROOT / "schemas" / "wire").iterdir() if p.is_dir()):
        schemas = load_set(folder)
        reached = [dict(a.departures) for name in schemas.documents for a in tolerance.annotations_of(schemas, name)]
        for name, doc in schemas.documents.items():
            for node in _nodes(doc):
                if tolerance.KEYWORD in node:
                    found += 1
                    assert tolerance.check_annotation(node[tolerance.KEYWORD]) == [], (folder.name, name, node)
                    assert node[tolerance.KEYWORD] in reached, (folder.name, name, node)
    assert found >= 6  # the openai-chat departures of issue 37


def _nodes(value: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if isinstance(value, dict):
        out.append(value)
        for k, v in value.items():
            if k not in ("enum", "const", "examples", "default"):
                out += _nodes(v)
    elif isinstance(value, list):
        for v in value:
            out += _nodes(v)
    return out


def test_a_malformed_annotation_is_named():
    assert tolerance.check_annotation({"nul": "x"}) and tolerance.check_annotation({"null": ""})
    assert tolerance.check_annotation([]) and tolerance.check_annotation({"null": "ok"}) == []


# -- content no reader may lose ---------------------------------------------------------------------

# chat/object: `tool_calls[]` of `{id, type: custom, custom: {name, input}}` ("The input for
# the custom tool call generated by the model"), GPT-5's free-form tools
CUSTOM_REPLY = _reply(
    {
        "content": None,
        "tool_calls": [{"id": "call_c1", "type": "custom", "custom": {"name": "code_exec", "input": "print('hello')"}}],
    },
    finish="tool_calls",
)


def _user(text: str) -> dict[str, Any]:
    return {
        "id": "01J00000000000000000000000",
        "session_id": SID,
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "metadata": {},
        "created_at": "2026-05-08T12:00:00.000000Z",
        "schema_version": 1,
    }


def test_a_custom_tool_call_reads_with_its_name_and_free_text_and_renders_back(caplog):
    a = OpenAIChatAdapter()
    m = a.from_wire_response(WireResponse(CUSTOM_REPLY), _ctx())
    assert [(b["type"], b["name"], b["input"]) for b in m["content"]] == [
        ("tool_use", "code_exec", {"input": "print('hello')"})
    ]
    body = a.to_wire([_user("run it"), m], [], AdapterOptions(model="openai:gpt-5")).body
    assert body["messages"][-1]["tool_calls"] == CUSTOM_REPLY["choices"][0]["message"]["tool_calls"]


# chat/object, deprecated: `function_call: {name, arguments}` ("Deprecated and replaced by
# tool_calls"); its answer a `role: function` message with the function's `name`
LEGACY_REQUEST = {
    "model": "gpt-3.5-turbo",
    "messages": [
        {"role": "user", "content": "Weather in Boston?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_weather", "arguments": '{"city": "Boston"}'},
        },
        {"role": "function", "name": "get_weather", "content": '{"temperature": 22}'},
    ],
    "functions": [
        {"name": "get_weather", "description": "Current weather", "parameters": {"type": "object", "properties": {}}}
    ],
}


def test_a_legacy_function_call_reads_as_a_tool_call(caplog):
    reply = _reply(
        {"content": None, "function_call": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}, "function_call"
    )
    m = _parse(reply, caplog).message
    assert m is not None
    assert [(b["type"], b["name"], b["input"]) for b in m["content"]] == [("tool_use", "get_weather", {"city": "Oslo"})]
    assert m["metadata"]["provider_raw"]["openai-chat"]["function_call"] is True
    stream = _sse(
        _chunk({"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": ""}}),
        _chunk({"function_call": {"arguments": '{"city":'}}),
        _chunk({"function_call": {"arguments": ' "Oslo"}'}}),
        _chunk({}, "function_call"),
    )
    done = _parse(stream, caplog).events[-1]
    assert [(b["name"], b["input"]) for b in done["final_content"]] == [("get_weather", {"city": "Oslo"})]
    assert done["stop_reason"] == "tool_use"


def test_a_legacy_request_reads_as_tool_calls_and_results_and_renders_back():
    a = OpenAIChatAdapter()
    parsed = a.from_wire_request(LEGACY_REQUEST, session_id=SID)
    call = parsed.messages[1]["content"][0]
    result = parsed.messages[2]["content"][0]
    assert (call["type"], call["name"], call["input"]) == ("tool_use", "get_weather", {"city": "Boston"})
    assert result["type"] == "tool_result" and result["tool_use_id"] == call["id"]
    assert result["content"] == [{"type": "text", "text": '{"temperature": 22}'}]
    assert [t["name"] for t in parsed.tools] == ["get_weather"]
    again = a.to_wire(parsed.messages, parsed.tools, parsed.options).body
    assert again["messages"] == LEGACY_REQUEST["messages"] and again["functions"] == LEGACY_REQUEST["functions"]


# Responses API: a `custom_tool_call` output item (call_id, name, input) and its streamed
# input (`response.custom_tool_call_input.delta` / `.done`); the answer a
# `custom_tool_call_output` ("Custom tools", function-calling guide)
CUSTOM_ITEM = {
    "type": "custom_tool_call",
    "id": "ctc_1",
    "call_id": "call_c1",
    "name": "code_exec",
    "input": "print(1)",
}


def _response(output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": "gpt-5",
        "output": output,
        "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8},
    }


def _responses_sse(*events: dict[str, Any]) -> str:
    out = ""
    for n, e in enumerate(events):
        out += f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n"
    return out


def test_a_responses_custom_tool_call_reads_and_renders_back(caplog):
    a = OpenAIResponsesAdapter()
    parsed = _parse(_response([CUSTOM_ITEM]), caplog, a)
    m = parsed.message
    assert m is not None and [(b["name"], b["input"]) for b in m["content"]] == [("code_exec", {"input": "print(1)"})]
    body = a.to_wire([_user("run"), m], [], AdapterOptions(model="openai:gpt-5")).body
    assert body["input"][-1] == CUSTOM_ITEM
    request = {
        "model": "gpt-5",
        "input": [
            {"role": "user", "content": "run"},
            CUSTOM_ITEM,
            {"type": "custom_tool_call_output", "call_id": "call_c1", "output": "1"},
        ],
        "tools": [{"type": "custom", "name": "code_exec", "description": "Runs Python"}],
    }
    read = a.from_wire_request(request, session_id=SID)
    assert read.messages[-1]["content"][0]["tool_use_id"] == read.messages[-2]["content"][0]["id"]
    assert a.to_wire(read.messages, read.tools, read.options).body["input"] == request["input"]
    v = wire_schemas.validator(OPENAI_RESPONSES, "request")
    assert v is not None and v.errors(request) == []


def test_a_streamed_responses_custom_tool_call_reads_whole(caplog):
    added = {**CUSTOM_ITEM, "input": ""}
    stream = _responses_sse(
        {"type": "response.created", "response": {**_response([]), "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
        {"type": "response.custom_tool_call_input.delta", "output_index": 0, "item_id": "ctc_1", "delta": "print("},
        {"type": "response.custom_tool_call_input.delta", "output_index": 0, "item_id": "ctc_1", "delta": "1)"},
        {"type": "response.custom_tool_call_input.done", "output_index": 0, "item_id": "ctc_1", "input": "print(1)"},
        {"type": "response.output_item.done", "output_index": 0, "item": CUSTOM_ITEM},
        {"type": "response.completed", "response": _response([CUSTOM_ITEM])},
    )
    parsed = _parse(stream, caplog, OpenAIResponsesAdapter())
    done = parsed.events[-1]
    assert done["stop_reason"] == "tool_use"
    assert [(b["name"], b["input"]) for b in done["final_content"]] == [("code_exec", {"input": "print(1)"})]
    # the free text is no JSON fragment of the input: no partial_json (contract §5.4)
    assert [e for e in parsed.events if e["type"] == "tool_use_input_delta"] == []
    end = next(e for e in parsed.events if e["type"] == "tool_use_end")
    assert end["final_input"] == {"input": "print(1)"}


# -- the cassettes of these classes, replayed by the suite --------------------------------------


@pytest.mark.parametrize(
    ("adapter", "folder", "rules"),
    [
        (
            "openai-chat",
            "openai-chat-issue37",
            ("TC101", "TC102", "TC302", "TC305", "TC601", "TC606", "TC609", "TC802"),
        ),
        ("openai-responses", "openai-responses-issue37", ("TC101", "TC102", "TC601", "TC606", "TC802")),
    ],
)
def test_the_reference_adapters_pass_conform_on_issue_37s_cassettes(adapter, folder, rules, tmp_path, capsys):
    """Written from the docs (cassettes/openai-chat-issue37/_author.py): every check passes,
    and the checks that read what these replies carry ran on them (more cases than without)."""
    from conformance.cli import main  # function-level: the CLI only for this test

    def run(cassettes: Path) -> dict[str, dict[str, Any]]:
        rc = main(["conform", adapter, "--cassettes", str(cassettes), "--no-samples", "-o", "json"])
        report = json.loads(capsys.readouterr().out)
        results = {r["rule"]: r for r in report["results"] if r["adapter"] == adapter}
        failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] not in ("pass", "skip")}
        assert rc == 0 and not failed, failed
        return results

    with_them, without = run(ROOT / "cassettes" / folder), run(tmp_path)
    more = {r: with_them[r]["cases_run"] - without[r]["cases_run"] for r in rules}
    assert all(n > 0 for n in more.values()), more


def test_a_reply_without_object_reads_with_a_warning(caplog):
    """A compatible server (Z.ai) leaves out `object`, which OpenAI's chat/object documents
    as "The object type, which is always chat.completion": the schema tolerates it missing
    (TC800 failed the recording before), the reply reads on and the WARN line names it."""
    reply = _reply({"content": "Hi"})
    del reply["object"]
    parsed = _parse(reply, caplog)
    assert parsed.message is not None and parsed.message["content"] == [{"type": "text", "text": "Hi"}]
    assert _departures(caplog.records) == [("/object", None)]
    # another value of `object` is still refused
    reply["object"] = "chat.completion.chunk"
    assert wire_schemas.reader(OPENAI_CHAT, "response").read(reply).error is not None


def test_tc104_a_departure_the_recorded_request_makes_too_is_the_recordings_and_a_new_one_still_fails():
    """OpenAI's FunctionDefinition is `{name, description, parameters, strict}`: a recorded tool
    with `required` beside them (sublayerapp/sublayer spec/vcr_cassettes/openai/empty_response.yml
    sends one) rendered back as it came is the recording's departure, a skip naming it; a
    departure the recording does not make fails as before."""
    s = AdapterUnderTest("openai-chat", OpenAIChatAdapter(), [])
    tool = {"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}
    odd = {**tool, "function": {**tool["function"], "required": ["x"]}}
    recorded = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "tools": [odd]}
    (same,) = shape(s, s.adapter, "rec#0", recorded, recorded=recorded)
    assert same.status == "skip" and "/tools/0/function/required" in same.message, same
    assert "only where the recorded one does" in same.message
    clean = {**recorded, "tools": [tool]}
    (new,) = shape(s, s.adapter, "rec#0", recorded, recorded=clean)
    assert new.status == "fail" and "/tools/0/function/required" in new.message, new
    (alone,) = shape(s, s.adapter, "script", recorded)
    assert alone.status == "fail"
