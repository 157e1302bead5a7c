"""The LangChain bridges (issue 28 item 3): `langchain:anthropic`, `langchain:openai-chat`.

Oracles: the request LangChain builds is read from the capture transport (what the library
handed its HTTP client); the bodies and streams are written here from the providers' API
references (Messages: `message_start` / `content_block_*` / `message_delta` events; Chat
Completions: `chat.completion` and `chat.completion.chunk` objects); the table's
classifications are checked against a fresh `turnspec conform` run.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from bridge_helpers import canonical_msg, failed_rules

from conformance.core.errors import InputError

pytest.importorskip("langchain_anthropic", reason="pip install -e '.[langchain-bridges]'")
pytest.importorskip("langchain_openai", reason="pip install -e '.[langchain-bridges]'")

from conformance.adapters import registry
from conformance.adapters.errors import RateLimitError, ServerError
from conformance.adapters.protocol import AdapterOptions, RequestContext, WireResponse
from conformance.bridges.table import KNOWN, TRIAGED

ROOT = Path(__file__).resolve().parent.parent
SID = "sess_lcbridge"
TOOL = {"name": "get_weather", "description": "d", "input_schema": {"type": "object", "properties": {}}}


def _msg(
    i: int, role: str, content: list[dict[str, object]], meta: dict[str, object] | None = None
) -> dict[str, object]:
    return canonical_msg(SID, i, role, content, meta)


def _sse(events: list[dict[str, object]], named: bool) -> bytes:
    out = []
    for e in events:
        head = f"event: {e['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(e)}\n\n")
    return "".join(out).encode()


def test_registry_resolves_langchain_names_and_refuses_unknown_apis() -> None:
    a = registry.load("langchain:openai-chat")
    assert a.name == "langchain:openai-chat" and a.wire_api == "openai-chat-completions"
    with pytest.raises(InputError, match=r"no langchain bridge for 'nope' \(known: anthropic, openai-chat\)"):
        registry.load("langchain:nope")


def test_to_wire_is_the_request_chat_anthropic_builds() -> None:
    a = registry.load("langchain:anthropic")
    msgs = [
        _msg(1, "system", [{"type": "text", "text": "be brief"}]),
        _msg(2, "user", [{"type": "text", "text": "hi"}]),
    ]
    opts = AdapterOptions(model="anthropic:claude-x", max_output_tokens=7, stop_sequences=("END",), stream=True)
    req = a.to_wire(msgs, [TOOL], opts)  # type: ignore[list-item]
    assert req.path == "/v1/messages"
    b = req.body
    assert b["model"] == "claude-x" and b["max_tokens"] == 7 and b["stop_sequences"] == ["END"]
    assert b["stream"] is True
    assert b["system"] == "be brief"
    assert b["messages"] == [{"role": "user", "content": "hi"}]
    assert [t["name"] for t in b["tools"]] == ["get_weather"]
    assert "x-api-key" not in req.headers  # the dummy key is the harness's, never the adapter's


def test_to_wire_maps_tool_ids_both_ways_through_the_session_map() -> None:
    a = registry.load("langchain:openai-chat")
    tu = {"type": "tool_use", "id": "tu_01KR3QB2D20000000000000009", "name": "get_weather", "input": {"c": 1}}
    res = {"type": "tool_result", "tool_use_id": tu["id"], "content": [{"type": "text", "text": "sunny"}]}
    msgs = [
        _msg(1, "user", [{"type": "text", "text": "hi"}]),
        _msg(2, "assistant", [tu], {"provider": "openai", "model": "openai:m"}),
        _msg(3, "tool", [res], {"parent_tool_use_id": tu["id"]}),
    ]
    body = a.to_wire(msgs, [TOOL], AdapterOptions(model="openai:gpt-x")).body  # type: ignore[list-item]
    call_id = body["messages"][1]["tool_calls"][0]["id"]
    assert call_id == a.tool_id_map(SID).get_provider(tu["id"]) and call_id.startswith("call_")
    assert body["messages"][2] == {"content": "sunny", "role": "tool", "tool_call_id": call_id}


def test_from_wire_response_goes_through_chat_anthropic_parsing() -> None:
    a = registry.load("langchain:anthropic")
    body = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-served",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "c2ln"},
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 30, "output_tokens": 9, "cache_read_input_tokens": 5},
    }  # fmt: skip
    m = a.from_wire_response(WireResponse(json.dumps(body).encode()), RequestContext(session_id=SID))
    assert m["metadata"]["model"] == "anthropic:claude-served"
    assert m["content"][0] == {"type": "thinking", "text": "hmm", "signature": "c2ln"}
    assert m["content"][1] == {"type": "text", "text": "Let me check."}
    call = m["content"][2]
    assert call["name"] == "get_weather" and call["input"] == {"city": "Paris"}
    assert call["id"].startswith("tu_") and a.tool_id_map(SID).get_provider(call["id"]) == "toolu_01A"
    # Messages' input_tokens excludes cache reads; LangChain's UsageMetadata input_tokens includes them
    assert m["metadata"]["usage"]["input_tokens"] == 30
    assert m["metadata"]["usage"]["cached_input_tokens"] == 5


def test_stream_tool_arguments_are_langchains_chunk_fragments() -> None:
    """Each tool_use_input_delta is one fragment ChatOpenAI's tool_call_chunks carried (the
    provider's literal fragments, TC609), not one re-serialised object."""
    a = registry.load("langchain:openai-chat")
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-served"}
    call = {"index": 0, "id": "call_A", "type": "function", "function": {"name": "get_weather", "arguments": ""}}
    chunks = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}, "finish_reason": None}]},
        *[
            {**head, "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": part}}]},
                                  "finish_reason": None}]}
            for part in ('{"ci', 'ty": "Pa', 'ris"}')
        ],
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {**head, "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}},
    ]  # fmt: skip
    data = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"
    events = list(a.stream_response([data], RequestContext(session_id=SID)))
    deltas = [e["partial_json"] for e in events if e["type"] == "tool_use_input_delta"]
    assert deltas == ['{"ci', 'ty": "Pa', 'ris"}']
    end = events[-1]
    assert end["type"] == "message_complete" and end["stop_reason"] == "tool_use"
    assert end["usage"]["input_tokens"] == 5 and end["usage"]["output_tokens"] == 3
    assert events[0]["model"] == "openai:gpt-served"


@pytest.mark.parametrize(
    ("bridge", "stream", "error"),
    [
        (
            "anthropic",
            _sse(
                [
                    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                     "model": "claude-x", "content": [], "stop_reason": None, "stop_sequence": None,
                     "usage": {"input_tokens": 3, "output_tokens": 1}}},
                    {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                ],
                named=True,
            ),
            RateLimitError,  # the contract's §6.2 table: overloaded_error is rate_limit (retryable)
        ),
        (
            "openai-chat",
            b'data: {"error": {"message": "The server had an error", "type": "server_error", "param": null, '
            b'"code": null}}\n\n',
            ServerError,
        ),
    ],
)  # fmt: skip
def test_an_error_event_mid_stream_raises_the_classified_error(bridge: str, stream: bytes, error: type) -> None:
    a = registry.load(f"langchain:{bridge}")
    events = []
    with pytest.raises(error):
        for e in a.stream_response([stream], RequestContext(session_id=SID)):
            events.append(e)
    assert events[-1]["type"] == "message_complete" and events[-1]["stop_reason"] == "error"


@pytest.mark.parametrize(
    ("bridge", "bugs"),
    [
        ("langchain:anthropic", {"TC201", "TC202", "TC203", "TC404", "TC606", "TC904"}),
        ("langchain:openai-chat", {"TC201", "TC202", "TC203", "TC404", "TC502", "TC606", "TC902", "TC903", "TC907"}),
    ],
)
def test_conform_bridge_fails_only_classified_library_bugs(tmp_path: Path, bridge: str, bugs: set[str]) -> None:
    """`turnspec conform langchain:<api> --no-samples` runs offline, and each check it fails
    is in the checked-in table as a library bug with its evidence."""
    out = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "conform", bridge, "--no-samples", "-o", "json",
         "--report", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert "bridge gap: " in json.dumps(report)  # the declared gaps are reported as skips with their reason
    failed = failed_rules(report, bridge)
    assert failed == bugs, failed
    for rule in failed:
        known = KNOWN.get((bridge, rule))
        assert known is not None and known.kind == "library bug", f"{rule} failed and is not classified"
    assert bridge in TRIAGED


@pytest.mark.parametrize("package", ["langchain-anthropic", "langchain-openai", "langchain-core"])
def test_table_was_made_with_the_installed_langchain_versions(package: str) -> None:
    table = (ROOT / "docs" / "bridges.md").read_text(encoding="utf-8")
    made = re.search(rf"^{re.escape(package)} version: (\S+)$", table, re.M)
    assert made is not None, f"docs/bridges.md names no {package} version"
    assert made.group(1) == importlib.metadata.version(package), "regenerate: nox -s bridges_table"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    extra = re.search(r"^langchain-bridges = \[(.*?)^\]", pyproject, re.M | re.S)
    assert extra is not None
    assert f'"{package}=={made.group(1)}"' in extra.group(1)


def test_the_one_reach_inside_langchain_is_pinned_to_the_release_it_was_written_against() -> None:
    """`route_chat_anthropic_through` sets ChatAnthropic's private cached client: it names the
    langchain-anthropic release it read, the one the extra pins and the one installed, and a
    model without the private attribute it reads is a one-line error naming the function."""
    from conformance.bridges.langchain import LANGCHAIN_ANTHROPIC, route_chat_anthropic_through

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'"langchain-anthropic=={LANGCHAIN_ANTHROPIC}"' in pyproject
    assert importlib.metadata.version("langchain-anthropic") == LANGCHAIN_ANTHROPIC
    with pytest.raises(RuntimeError, match=r"route_chat_anthropic_through"):
        route_chat_anthropic_through(object(), dict, None)
    import inspect

    rest = inspect.getsource(sys.modules[route_chat_anthropic_through.__module__])
    rest = rest.replace(inspect.getsource(route_chat_anthropic_through), "")
    assert "_client_params" not in rest and not re.search(r"(?<!http)_async_client", rest)


def _replay(issuer: str, thinking: bool = True) -> list[dict[str, object]]:
    meta = {"provider": issuer, "model": f"{issuer}:m"}
    blocks = [{"type": "thinking", "text": "FOREIGN-THOUGHT", "signature": "c2ln"}] if thinking else []
    return [
        _msg(1, "user", [{"type": "text", "text": "hi"}]),
        _msg(2, "assistant", [*blocks, {"type": "text", "text": "answer"}], meta),
        _msg(3, "user", [{"type": "text", "text": "again"}]),
    ]


@pytest.mark.parametrize(("bridge", "issuer"), [("anthropic", "gemini"), ("openai-chat", "anthropic")])
def test_langchain_library_bug_evidence_thinking_vanishes_unannounced(
    bridge: str, issuer: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The wire the table's TC404 evidence quotes, rendered by the pinned LangChain: the
    replayed thinking is left out, and neither LangChain nor the bridge says so (the bridge
    hands it over: the mapping keeps thinking as a `reasoning` block). When LangChain starts
    saying so (or sending it), this fails and the classification must be revisited."""
    a = registry.load(f"langchain:{bridge}")
    with_thinking = a.to_wire(_replay(issuer), [], AdapterOptions(model="m")).body
    without = a.to_wire(_replay(issuer, thinking=False), [], AdapterOptions(model="m")).body
    assert "FOREIGN-THOUGHT" not in json.dumps(with_thinking)
    assert with_thinking["messages"] == without["messages"]
    assert not [r for r in caplog.records if r.levelname == "WARNING"]


def test_langchain_library_bug_evidence_tool_error_status_dropped() -> None:
    """TC902's evidence: ChatOpenAI sends a ToolMessage of status "error" like a success."""
    a = registry.load("langchain:openai-chat")
    tu = {"type": "tool_use", "id": "tu_01KR3QB2D20000000000000009", "name": "get_weather", "input": {}}

    def render(is_error: bool) -> object:
        res = {"type": "tool_result", "tool_use_id": tu["id"], "content": [{"type": "text", "text": "boom"}]}
        msgs = [
            _msg(1, "user", [{"type": "text", "text": "hi"}]),
            _msg(2, "assistant", [tu], {"provider": "openai", "model": "openai:m"}),
            _msg(3, "tool", [{**res, "is_error": is_error}], {"parent_tool_use_id": tu["id"]}),
        ]
        return a.to_wire(msgs, [TOOL], AdapterOptions(model="m")).body  # type: ignore[list-item]

    assert render(True) == render(False)


def test_langchain_library_bug_evidence_streamed_usage_skips_message_start() -> None:
    """TC606/TC904's evidence: a Messages stream whose `message_delta.usage` holds only
    `output_tokens` (as the API reference's example stream) is read with input_tokens 0,
    though `message_start.usage` says 12."""
    a = registry.load("langchain:anthropic")
    stream = _sse(
        [
            {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
             "model": "claude-x", "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 12, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": 4}},
            {"type": "message_stop"},
        ],
        named=True,
    )  # fmt: skip
    end = list(a.stream_response([stream], RequestContext(session_id=SID)))[-1]
    assert end["final_content"] == [{"type": "text", "text": "Hi"}]
    assert end["usage"]["output_tokens"] == 4
    assert end["usage"]["input_tokens"] == 0  # message_start's 12 is not read


@pytest.mark.parametrize(
    ("bridge", "on_the_wire"),
    [
        ("anthropic", '"source": {"type": "base64", "media_type": "image/x-turnspec-probe", "data": "TUFSSy1w"}'),
        ("openai-chat", '"image_url": {"url": "data:image/x-turnspec-probe;base64,TUFSSy1w"}'),
    ],
)
def test_langchain_library_bug_evidence_unknown_image_type_sent(bridge: str, on_the_wire: str) -> None:
    """TC201-TC203's evidence: an image of a media type neither API takes goes out as given."""
    a = registry.load(f"langchain:{bridge}")
    img = {"type": "image", "source": {"kind": "base64", "data": "TUFSSy1w"}, "media_type": "image/x-turnspec-probe"}
    body = a.to_wire([_msg(1, "user", [img])], [], AdapterOptions(model="m")).body
    assert on_the_wire in json.dumps(body)


def test_langchain_library_bug_evidence_stream_model_only_on_the_last_chunk() -> None:
    """TC907's evidence: each chunk names `model`, yet a stream cut by an error event reads
    with no model name (ChatOpenAI keeps `model_name` for the last chunk)."""
    a = registry.load("langchain:openai-chat")
    head = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-served"}
    chunk = {
        **head,
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Once"}, "finish_reason": None}],
    }
    error = {"error": {"message": "The server had an error", "type": "server_error", "param": None, "code": None}}
    data = f"data: {json.dumps(chunk)}\n\ndata: {json.dumps(error)}\n\n".encode()
    events = []
    with pytest.raises(ServerError):
        for e in a.stream_response([data], RequestContext(session_id=SID)):
            events.append(e)
    assert events[0]["type"] == "message_start" and events[0]["model"] == "openai:unknown"
    assert events[-1]["final_content"] == [{"type": "text", "text": "Once"}]  # the text before the error is kept


@pytest.mark.parametrize("bridge", ["anthropic", "openai-chat"])
@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b'{"id": 1, "choices": null, "content": null}',
        b"[]",
        # a text that is a number: LangChain's pydantic ValidationError is several lines
        b'{"id": "m", "type": "message", "role": "assistant", "model": "x", "content": [{"type": "text", "text": 5}], '
        b'"object": "chat.completion", "created": 1, "choices": [{"index": 0, "message": {"role": "assistant", '
        b'"content": 5}, "finish_reason": "stop"}]}',
    ],
)
def test_a_body_langchain_cannot_parse_is_a_one_line_wire_format_error(bridge: str, body: bytes) -> None:
    from conformance.adapters.errors import WireFormatError  # function-level: only these cases raise it

    a = registry.load(f"langchain:{bridge}")
    with pytest.raises(WireFormatError) as err:
        a.from_wire_response(WireResponse(body), RequestContext(session_id=SID))
    assert "\n" not in str(err.value) and str(err.value).startswith("LangChain could not parse the response: ")


def test_a_streamed_call_without_arguments_sends_no_fragment_and_keeps_the_next_calls() -> None:
    """A tool_use streamed with no input_json_delta (an empty input) has no partial_json; the
    next call's fragments stay its own (TC609 on llm-anthropic's recordings)."""
    a = registry.load("langchain:anthropic")
    start = {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
             "model": "claude-x", "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": 3, "output_tokens": 1}}}  # fmt: skip
    events = [start]
    for i, (tid, parts) in enumerate([("toolu_01", []), ("toolu_02", ['{"ci', 'ty": "Paris"}'])]):
        events.append({"type": "content_block_start", "index": i,
                       "content_block": {"type": "tool_use", "id": tid, "name": "get_weather", "input": {}}})  # fmt: skip
        events += [{"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta",
                    "partial_json": p}} for p in parts]  # fmt: skip
        events.append({"type": "content_block_stop", "index": i})
    events += [
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    ]  # fmt: skip
    out = list(a.stream_response([_sse(events, named=True)], RequestContext(session_id=SID)))
    starts = [e["tool_use_id"] for e in out if e["type"] == "tool_use_start"]
    deltas = [(e["tool_use_id"], e["partial_json"]) for e in out if e["type"] == "tool_use_input_delta"]
    assert deltas == [(starts[1], '{"ci'), (starts[1], 'ty": "Paris"}')]
    ends = {e["tool_use_id"]: e["final_input"] for e in out if e["type"] == "tool_use_end"}
    assert ends == {starts[0]: {}, starts[1]: {"city": "Paris"}}


def test_langchain_library_bug_evidence_streamed_refusal_dropped() -> None:
    """TC903/TC606's evidence: cassettes/openai-chat/refusal.yaml. Not streamed, ChatOpenAI keeps
    `message.refusal` (`additional_kwargs.refusal`, a standard `refusal` content block), which
    the mapping reads as the reply's text; streamed, its chunk conversion reads a delta's
    `content`, `function_call` and `tool_calls` only, so the `delta.refusal` pieces vanish.
    When LangChain keeps them, this fails and the classification must be revisited."""
    from conformance.suite.cassettes import load_cassette  # function-level: only this evidence reads one

    a = registry.load("langchain:openai-chat")
    reply, streamed = load_cassette(ROOT / "cassettes/openai-chat/refusal.yaml").interactions[:2]
    refusal = reply.response_json["choices"][0]["message"]["refusal"]
    parsed = a.from_wire_response(WireResponse(reply.response_json), RequestContext(session_id=SID))
    assert [b.get("text") for b in parsed["content"]] == [refusal]
    end = list(a.stream_response([streamed.response_body], RequestContext(session_id=SID)))[-1]
    assert end["type"] == "message_complete" and refusal not in json.dumps(end["final_content"])
