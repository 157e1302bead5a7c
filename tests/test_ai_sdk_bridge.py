"""The Vercel AI SDK bridges (issue 42 item 3): `ai-sdk:anthropic`, `:openai-chat`,
`:openai-responses`, `:gemini`, `:bedrock`, the AI SDK's own LanguageModelV3 providers run
by turnspec's Node program under the exec host.

Oracles: the requests are what the pinned provider packages build (read from the capture),
judged against the providers' API references; the bodies and streams are this project's
cassettes (written from those references) or written here from them; the table's
classifications are checked against a fresh `turnspec conform` run, and each library bug's
evidence is rendered again here, so a release of the packages that fixes one fails its test
and the classification must be revisited. Tests that need node and the packages skip with the
reason (`turnspec ai-sdk install`); CI installs them (`.ci/run`).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bridge_helpers import canonical_msg, failed_rules

from conformance.adapters import registry
from conformance.adapters.errors import (
    AdapterError,
    ContextOverflowError,
    CriticalBlockError,
    InvalidRequestError,
    RateLimitError,
    ServerError,
)
from conformance.adapters.protocol import AdapterOptions, RequestContext, WireResponse
from conformance.bridges import ai_sdk
from conformance.bridges.ai_sdk import install
from conformance.bridges.table import KNOWN, TRIAGED, versions
from conformance.core.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
CASSETTES = ROOT / "cassettes"
SID = "sess_aisdkbridge"
MODELS = {
    "anthropic": "anthropic:claude-sonnet-4-5",
    "openai-chat": "openai:gpt-4o",
    "openai-responses": "openai:gpt-4o",
    "gemini": "gemini:gemini-2.5-flash",
    "bedrock": "bedrock:anthropic.claude-3-7-sonnet-20250219-v1:0",
}
PROVIDER = {"anthropic": "anthropic", "openai-chat": "openai", "openai-responses": "openai", "gemini": "gemini"}
PROVIDER["bedrock"] = "bedrock"
TOOL = {"name": "read_file", "description": "d", "input_schema": {"type": "object", "properties": {}}}
MISSING = install.problem(install.default_dir())
needs_packages = pytest.mark.skipif(MISSING is not None, reason=f"ai-sdk: {MISSING}")


@pytest.fixture(scope="module")
def bridges() -> Iterator[dict[str, Any]]:
    """One started bridge per API, reused by the module's tests (each test its own session)."""

    class Lazy(dict[str, Any]):
        def __missing__(self, api: str) -> Any:
            self[api] = registry.load(f"ai-sdk:{api}")
            return self[api]

    made = Lazy()
    yield made
    for b in made.values():
        b.close()


def _msg(i: int, role: str, content: list[dict[str, object]], meta: dict[str, object] | None = None) -> Any:
    return canonical_msg(SID, i, role, content, meta)


def _opts(api: str, **kw: Any) -> AdapterOptions:
    return AdapterOptions(model=MODELS[api], max_output_tokens=256, **kw)


def _render(bridges: dict[str, Any], api: str, msgs: list[Any], tools: list[Any] | None = None) -> Any:
    return bridges[api].to_wire(msgs, tools if tools is not None else [], _opts(api)).body


def _interaction(folder: str, name: str, n: int) -> dict[str, Any]:
    return yaml.safe_load((CASSETTES / folder / name).read_text(encoding="utf-8"))["interactions"][n]  # type: ignore[no-any-return]


def _body(folder: str, name: str, n: int) -> bytes:
    raw = _interaction(folder, name, n)["response"]["body"]["string"]
    return raw.encode() if isinstance(raw, str) else bytes(raw)


def _stream(a: Any, data: bytes, step: int = 0, model: str = "x:requested") -> list[Any]:
    ctx = RequestContext(session_id=SID, message_id="01KR3QB2D20000000000000099", request_id="r1", model=model)
    chunks = [data[i : i + step] for i in range(0, len(data), step)] if step else [data]
    return list(a.stream_response(chunks, ctx))


def _warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


# -- the bridge's own machinery ---------------------------------------------------------------


def test_the_packages_are_pinned_exactly_and_the_lock_is_their_lock() -> None:
    """package.json pins each package exactly, on the LanguageModelV3 line (@ai-sdk/provider
    3.x), and package-lock.json resolves each to that version: `npm ci` installs exactly it."""
    pkg = json.loads((install.HERE / "package.json").read_text(encoding="utf-8"))
    lock = json.loads((install.HERE / "package-lock.json").read_text(encoding="utf-8"))
    deps = pkg["dependencies"]
    for name in ("ai", "@ai-sdk/provider", "@ai-sdk/anthropic", "@ai-sdk/openai", "@ai-sdk/google"):
        assert name in deps
    assert "@ai-sdk/amazon-bedrock" in deps
    for name, version in deps.items():
        assert version[0].isdigit() and not any(c in version for c in "^~<>=* "), (name, version)
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    assert lock["packages"][""]["dependencies"] == deps
    assert deps["@ai-sdk/provider"].startswith("3.")
    assert versions()["@ai-sdk/anthropic"] == deps["@ai-sdk/anthropic"]  # the table names the pins


def test_install_copies_the_pinned_files_and_runs_npm_ci_there(tmp_path: Path) -> None:
    """`turnspec ai-sdk install --dir DIR`: the shipped package files land in DIR and `npm ci`
    runs in DIR (a stand-in npm records its arguments and folder; nothing touches the network)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text('#!/bin/sh\necho "$PWD $*" > npm-called\nmkdir -p node_modules\n', encoding="utf-8")
    npm.chmod(0o755)
    target = tmp_path / "aisdk"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "ai-sdk", "install", "--dir", str(target)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (target / "npm-called").read_text().split()[:2] == [str(target), "ci"]
    for name in install.PACKAGE_FILES:
        assert (target / name).read_bytes() == (install.HERE / name).read_bytes()
    assert str(target) in done.stderr


def test_missing_node_or_packages_is_a_one_line_hint_and_exit_2(tmp_path: Path) -> None:
    no_node = {**os.environ, "PATH": str(tmp_path)}  # no node on PATH
    empty = {**os.environ, install.ENV_DIR: str(tmp_path / "empty")}
    for env, said in ((no_node, "node is not on PATH"), (empty, "are not installed in")):
        done = subprocess.run(
            [sys.executable, "-m", "conformance.cli", "conform", "ai-sdk:anthropic", "--no-samples"],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120,
        )  # fmt: skip
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and "turnspec ai-sdk install" in lines[0], lines


@needs_packages
def test_registry_resolves_ai_sdk_names_and_refuses_unknown_apis(bridges: dict[str, Any]) -> None:
    a = bridges["openai-responses"]
    assert (a.name, a.provider, a.wire_api) == ("ai-sdk:openai-responses", "openai", "openai-responses")
    with pytest.raises(InputError, match=r"no ai-sdk bridge for 'nope' \(known: anthropic, bedrock, gemini"):
        registry.load("ai-sdk:nope")


@needs_packages
@pytest.mark.parametrize("api", list(ai_sdk.BRIDGES))
def test_the_child_declares_what_the_named_bridge_declares(bridges: dict[str, Any], api: str) -> None:
    """The hello of the Node program carries the Python declarations (capabilities, gaps,
    cassette folders) and names the provider package it runs, at the pinned version."""
    a = bridges[api]
    info = a.child.client.info
    assert info["name"] == a.name and info["capabilities"] == dict(a.capabilities)
    assert [g["reason"] for g in info["gaps"]] == [g.reason for g in a.bridge_gaps]
    assert info["cassette_folders"] == list(a.cassette_folders)
    pins = json.loads((install.HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]
    assert info["library"] == {"name": a.package, "version": pins[a.package]}
    assert info["language"] == "javascript" and "read_request" not in info["operations"]


@needs_packages
def test_to_wire_is_the_messages_request_the_package_builds(bridges: dict[str, Any]) -> None:
    """Messages API: system hoisted to `system`, the tool call and result with the provider
    id the session's map gives, the version header, and no credential."""
    tu = {"type": "tool_use", "id": "tu_01KR3QB2D20000000000000009", "name": "read_file", "input": {"path": "a"}}
    res = {"type": "tool_result", "tool_use_id": tu["id"], "content": [{"type": "text", "text": "ok"}]}
    msgs = [
        _msg(1, "system", [{"type": "text", "text": "be brief"}]),
        _msg(2, "user", [{"type": "text", "text": "hi"}]),
        _msg(3, "assistant", [tu], {"provider": "anthropic", "model": "anthropic:m"}),
        _msg(4, "tool", [res], {"parent_tool_use_id": tu["id"]}),
    ]
    a = bridges["anthropic"]
    wire = a.to_wire(msgs, [TOOL], _opts("anthropic", temperature=0.5, stop_sequences=("END",)))
    pid = a.tool_id_map(SID).get_provider(tu["id"])
    assert pid is not None and pid.startswith("toolu_")
    assert (wire.method, wire.path, wire.headers["anthropic-version"]) == ("POST", "/v1/messages", "2023-06-01")
    assert "x-api-key" not in wire.headers
    body = wire.body
    assert body["system"] == [{"type": "text", "text": "be brief"}]
    assert (body["max_tokens"], body["temperature"], body["stop_sequences"]) == (256, 0.5, ["END"])
    assert body["messages"][1]["content"][0] == {
        "type": "tool_use",
        "id": pid,
        "name": "read_file",
        "input": {"path": "a"},
    }
    assert body["messages"][2]["content"][0]["tool_use_id"] == pid


@needs_packages
def test_a_part_the_package_drops_with_a_warning_gets_the_five_fields_or_fails_when_critical(
    bridges: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """@ai-sdk/openai's Responses model skips another provider's reasoning with a warning
    that names no message: the bridge finds the part that warning went with (the request is
    the same without it) and writes canonical §7.3's line for its block; marked critical, the
    request fails instead."""
    thinking = {"type": "thinking", "text": "FOREIGN-THOUGHT", "signature": "c2ln"}
    assistant = _msg(2, "assistant", [thinking, {"type": "text", "text": "answer"}], {"provider": "anthropic"})
    msgs = [
        _msg(1, "user", [{"type": "text", "text": "hi"}]),
        assistant,
        _msg(3, "user", [{"type": "text", "text": "again"}]),
    ]
    with caplog.at_level(logging.WARNING):
        body = _render(bridges, "openai-responses", msgs)
    assert "FOREIGN-THOUGHT" not in json.dumps(body)
    drops = [r for r in _warnings(caplog) if getattr(r, "event", None) == "block_dropped"]
    assert len(drops) == 1
    d = drops[0]
    assert (d.adapter, d.session_id, d.message_id, d.block_type) == (  # type: ignore[attr-defined]
        "ai-sdk:openai-responses",
        SID,
        assistant["id"],
        "thinking",
    )
    assert "Non-OpenAI reasoning parts are not supported" in d.reason  # type: ignore[attr-defined]
    critical = {**assistant, "metadata": {**assistant["metadata"], "critical": [0]}}
    with pytest.raises(CriticalBlockError) as err:
        _render(bridges, "openai-responses", [msgs[0], critical, msgs[2]])
    assert err.value.block_type == "thinking" and err.value.message_id == assistant["id"]


@needs_packages
def test_stream_events_are_answered_per_chunk(bridges: dict[str, Any]) -> None:
    """Each feed is answered with the events its chunk completed: the first text delta of a
    Messages stream is out before its last chunk has been read (a cancel can land between)."""
    data = _body("anthropic", "text.yaml", 1)
    chunks = [data[i : i + 40] for i in range(0, len(data), 40)]
    read = 0

    def feed() -> Iterator[bytes]:
        nonlocal read
        for c in chunks:
            read += 1
            yield c

    ctx = RequestContext(session_id=SID, message_id="01KR3QB2D20000000000000098")
    events = iter(bridges["anthropic"].stream_response(feed(), ctx))
    first_text = next(e for e in events if e["type"] == "text_delta")
    assert first_text["content_block_index"] == 0 and read < len(chunks)
    rest = list(events)
    assert rest[-1]["type"] == "message_complete" and read == len(chunks)


@needs_packages
def test_http_errors_are_classified_by_the_record_signals(bridges: dict[str, Any]) -> None:
    """The AI SDK raises an APICallError and classifies nothing; the bridge reads the
    record's signals: Anthropic's `error.type`, its overflow wording, retry-after."""
    a = bridges["anthropic"]
    ctx = RequestContext(session_id=SID)
    limited = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    with pytest.raises(RateLimitError) as err:
        a.from_wire_response(WireResponse(limited, 429, {"retry-after": "20", "request-id": "req_1"}), ctx)
    assert (err.value.retryable, err.value.retry_after_seconds, err.value.request_id) == (True, 20.0, "req_1")
    assert "slow down" in str(err.value)
    # 529 is a server error by the status alone; Anthropic's `error.type` says overloaded (rate_limit)
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    with pytest.raises(RateLimitError):
        a.from_wire_response(WireResponse(overloaded, 529), ctx)
    long = {"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 1 > 0"}}
    with pytest.raises(ContextOverflowError):
        a.from_wire_response(WireResponse(long, 400), ctx)


# -- the library bugs the table classifies: their evidence, rendered again ------------------------

PROBE_IMAGE = base64.b64encode(b"MARK-probe-image").decode()


@needs_packages
@pytest.mark.parametrize(
    ("api", "on_the_wire"),
    [
        ("anthropic", '"media_type": "image/x-turnspec-probe"'),
        ("openai-chat", '"url": "data:image/x-turnspec-probe;base64,'),
        ("openai-responses", '"image_url": "data:image/x-turnspec-probe;base64,'),
        ("gemini", '"mimeType": "image/x-turnspec-probe"'),
    ],
)
def test_ai_sdk_library_bug_evidence_unsupported_image_type_reaches_the_wire(
    bridges: dict[str, Any], api: str, on_the_wire: str, caplog: pytest.LogCaptureFixture
) -> None:
    """TC201-TC203: an image of a media type the API does not take goes out, unannounced."""
    image = {"type": "image", "source": {"kind": "base64", "data": PROBE_IMAGE}, "media_type": "image/x-turnspec-probe"}
    with caplog.at_level(logging.WARNING):
        body = json.dumps(_render(bridges, api, [_msg(1, "user", [{"type": "text", "text": "look"}, image])]))
    assert on_the_wire in body and PROBE_IMAGE in body
    assert not _warnings(caplog)
    assert KNOWN[(f"ai-sdk:{api}", "TC201")].kind == "library bug"


@needs_packages
@pytest.mark.parametrize(
    "image",
    [
        {"type": "image", "source": {"kind": "base64", "data": PROBE_IMAGE}, "media_type": "image/x-turnspec-probe"},
        {"type": "image", "source": {"kind": "url", "data": "https://example.com/a.png"}, "media_type": "image/png"},
    ],
)
def test_ai_sdk_library_bug_evidence_bedrock_refuses_the_request_instead_of_dropping(
    bridges: dict[str, Any], image: dict[str, Any]
) -> None:
    """TC201 (bedrock): the whole request is refused for an image Converse cannot take."""
    with pytest.raises(InvalidRequestError, match="UnsupportedFunctionalityError") as err:
        _render(bridges, "bedrock", [_msg(1, "user", [{"type": "text", "text": "look"}, image])])
    assert not isinstance(err.value, CriticalBlockError)


def _replay(issuer: str, thinking: bool = True) -> list[Any]:
    blocks = [
        {"type": "thinking", "text": "FOREIGN-THOUGHT", "signature": "c2ln"},
        {"type": "redacted_thinking", "data": "FOREIGN-REDACTED"},
    ]
    return [
        _msg(1, "user", [{"type": "text", "text": "hi"}]),
        _msg(2, "assistant", [*(blocks if thinking else []), {"type": "text", "text": "answer"}], {"provider": issuer}),
        _msg(3, "user", [{"type": "text", "text": "again"}]),
    ]


@needs_packages
@pytest.mark.parametrize("api", ["openai-chat", "bedrock"])
def test_ai_sdk_library_bug_evidence_foreign_thinking_vanishes_unannounced(
    bridges: dict[str, Any], api: str, caplog: pytest.LogCaptureFixture
) -> None:
    """TC201/TC404/TC502 (openai-chat), TC404 (bedrock): the replayed reasoning parts are left
    out, and the package says nothing (no warning the bridge could attach the block to)."""
    with caplog.at_level(logging.WARNING):
        with_thinking = _render(bridges, api, _replay("anthropic"))
    assert not _warnings(caplog)
    assert "FOREIGN" not in json.dumps(with_thinking)
    assert with_thinking == _render(bridges, api, _replay("anthropic", thinking=False))


@needs_packages
def test_ai_sdk_library_bug_evidence_gemini_sends_foreign_thinking_as_a_thought(
    bridges: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """TC404 (gemini): another provider's thinking goes out as a `thought: true` part, its
    redacted thinking vanishes, neither with a warning."""
    with caplog.at_level(logging.WARNING):
        body = _render(bridges, "gemini", _replay("anthropic"))
    assert {"text": "FOREIGN-THOUGHT", "thought": True} in body["contents"][1]["parts"]
    assert "FOREIGN-REDACTED" not in json.dumps(body) and not _warnings(caplog)


def _tool_turn(api: str, is_error: bool, result: list[dict[str, Any]] | None = None) -> list[Any]:
    tu = {"type": "tool_use", "id": "tu_01KR3QB2D2000000000000000A", "name": "read_file", "input": {}}
    res = {"type": "tool_result", "tool_use_id": tu["id"], "content": result or [{"type": "text", "text": "boom"}]}
    return [
        _msg(1, "user", [{"type": "text", "text": "hi"}]),
        _msg(2, "assistant", [tu], {"provider": PROVIDER[api], "model": MODELS[api]}),
        _msg(3, "tool", [{**res, "is_error": is_error}], {"parent_tool_use_id": tu["id"]}),
    ]


@needs_packages
@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "gemini", "bedrock"])
def test_ai_sdk_library_bug_evidence_tool_error_sent_as_a_success(
    bridges: dict[str, Any], api: str, caplog: pytest.LogCaptureFixture
) -> None:
    """TC902 (and TC802 for bedrock's missing `status`): an error result renders the same
    request as a success, unannounced."""
    with caplog.at_level(logging.WARNING):
        failed = _render(bridges, api, _tool_turn(api, True), [TOOL])
    assert not _warnings(caplog)
    assert failed == _render(bridges, api, _tool_turn(api, False), [TOOL])


@needs_packages
def test_ai_sdk_library_bug_evidence_gemini_function_response_wraps_name_and_content(bridges: dict[str, Any]) -> None:
    """TC401/TC802 (gemini): the result goes back as `{"name", "content"}`, not `{"output"}`."""
    body = _render(bridges, "gemini", _tool_turn("gemini", False), [TOOL])
    response = body["contents"][2]["parts"][0]["functionResponse"]["response"]
    assert response == {"name": "read_file", "content": "boom"}


@needs_packages
def test_ai_sdk_library_bug_evidence_tool_result_images(bridges: dict[str, Any]) -> None:
    """TC901: Chat Completions gets the JSON of the V3 parts as the tool message's text;
    Gemini gets the image outside the functionResponse and a text part nobody wrote."""
    png = {"type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png"}
    result = [{"type": "text", "text": "see"}, png]
    chat = _render(bridges, "openai-chat", _tool_turn("openai-chat", False, result), [TOOL])
    text = chat["messages"][2]["content"]
    assert json.loads(text) == [
        {"type": "text", "text": "see"},
        {"type": "image-data", "data": "iVBORw0KGgo=", "mediaType": "image/png"},
    ]
    gemini = _render(bridges, "gemini", _tool_turn("gemini", False, result), [TOOL])
    parts = gemini["contents"][2]["parts"]
    assert [next(iter(p)) for p in parts] == ["functionResponse", "inlineData", "text"]
    assert parts[2]["text"] == "Tool executed successfully and returned this image as a response"


@needs_packages
def test_ai_sdk_library_bug_evidence_gemini_names_no_served_model(bridges: dict[str, Any]) -> None:
    """TC907 (gemini): `modelVersion` is not read, so the requested model is all there is."""
    body = json.loads(_body("gemini", "text.yaml", 0))
    assert body["modelVersion"]
    ctx = RequestContext(session_id=SID, model="gemini:requested-model")
    msg = bridges["gemini"].from_wire_response(WireResponse(body), ctx)
    assert msg["metadata"]["model"] == "gemini:requested-model"


@needs_packages
def test_ai_sdk_library_bug_evidence_gemini_signature_position_differs(bridges: dict[str, Any]) -> None:
    """TC606 (gemini): a trailing signature-only part is read before the text by doGenerate
    and after it by doStream."""
    a = bridges["gemini"]
    parse = a.from_wire_response(WireResponse(json.loads(_body("gemini", "thinking.yaml", 6))), RequestContext(SID))
    streamed = _stream(a, _body("gemini", "thinking.yaml", 7))[-1]["final_content"]
    assert [b["type"] for b in parse["content"]] == ["thinking", "text"]
    assert [b["type"] for b in streamed] == ["text", "thinking"]


@needs_packages
def test_ai_sdk_library_bug_evidence_responses_stream_merges_output_text_parts(bridges: dict[str, Any]) -> None:
    """TC606 (openai-responses): two output_text parts: two texts parsed, one streamed."""
    a = bridges["openai-responses"]
    parse = a.from_wire_response(
        WireResponse(json.loads(_body("openai-responses", "text.yaml", 2))), RequestContext(SID)
    )
    streamed = _stream(a, _body("openai-responses", "text.yaml", 3))[-1]["final_content"]
    assert len([b for b in parse["content"] if b["type"] == "text"]) == 2
    assert [b["type"] for b in streamed] == ["text"]
    assert streamed[0]["text"] == "".join(b["text"] for b in parse["content"])


@needs_packages
def test_ai_sdk_library_bug_evidence_responses_stream_failing_first_hides_the_model(bridges: dict[str, Any]) -> None:
    """TC907 (openai-responses): doStream rejects on the first failure, so the model that
    `response.created` named is never seen."""
    data = _body("openai-responses", "stops.yaml", 5)
    assert b'"model": "gpt-5-2025-08-07"' in data
    events: list[Any] = []
    with pytest.raises(AdapterError):
        for e in bridges["openai-responses"].stream_response([data], RequestContext(SID, model="openai:requested")):
            events.append(e)
    assert events[0]["type"] == "message_start" and events[0]["model"] == "openai:requested"


@needs_packages
def test_ai_sdk_library_bug_evidence_anthropic_mid_stream_error_loses_usage(bridges: dict[str, Any]) -> None:
    """TC904 (anthropic): no `finish` after an `error` part, so the usage of message_start
    never arrives."""
    data = _body("anthropic", "errors.yaml", 11)
    assert b'"input_tokens": 13' in data
    events: list[Any] = []
    with pytest.raises(AdapterError):
        for e in bridges["anthropic"].stream_response([data], RequestContext(SID)):
            events.append(e)
    assert events[-1]["type"] == "message_complete" and events[-1]["usage"] is None


@needs_packages
def test_ai_sdk_library_bug_evidence_bedrock_redacted_reasoning_field(bridges: dict[str, Any]) -> None:
    """TC104/TC405/TC501 (bedrock): redacted thinking goes out as `redactedReasoning`, a field
    Converse's ReasoningContentBlock does not have (`reasoningText` | `redactedContent`)."""
    body = _render(bridges, "bedrock", _replay("bedrock"))
    reasoning = [p["reasoningContent"] for p in body["messages"][1]["content"] if "reasoningContent" in p]
    assert {"redactedReasoning": {"data": "FOREIGN-REDACTED"}} in reasoning
    assert not any("redactedContent" in r for r in reasoning)


@needs_packages
def test_ai_sdk_library_bug_evidence_bedrock_mid_stream_exception_loses_its_type(bridges: dict[str, Any]) -> None:
    """TC801 (bedrock): a `throttlingException` frame reaches the caller as its payload alone,
    so the bridge can only call it the provider's failure (server_error), not rate_limit."""
    data = _body("bedrock", "errors.yaml", 9)
    assert b"throttlingException" in data
    with pytest.raises(ServerError) as err:
        _stream(bridges["bedrock"], data)
    assert not isinstance(err.value, RateLimitError) and "Too many tokens" in str(err.value)


# -- the whole suite, per named bridge --------------------------------------------------------


@needs_packages
@pytest.mark.slow
@pytest.mark.parametrize("api", list(ai_sdk.BRIDGES))
def test_conform_ai_sdk_bridge_fails_only_classified_library_bugs(tmp_path: Path, api: str) -> None:
    """`turnspec conform ai-sdk:<api> --no-samples` runs offline through the exec host, and the
    checks it fails are exactly the table's library bugs for that bridge."""
    bridge = f"ai-sdk:{api}"
    out = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "conform", bridge, "--no-samples", "-o", "json",
         "--report", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert "bridge gap" in json.dumps(report)  # the declared gaps are reported as skips with their reason
    failed = failed_rules(report, bridge)
    bugs = {rule for (b, rule), k in KNOWN.items() if b == bridge and k.kind == "library bug"}
    assert failed == bugs, failed ^ bugs
    assert bridge in TRIAGED


def test_the_table_names_the_pinned_packages() -> None:
    table = (ROOT / "docs" / "bridges.md").read_text(encoding="utf-8")
    for name, version in ai_sdk.versions(install.HERE).items():
        assert f"\n{name} version: {version}\n" in table, f"regenerate: nox -s bridges_table ({name})"
    for b in ai_sdk.BRIDGES.values():
        assert f"`{b.name}`" in table
