"""The bridge kit and the pydantic-ai bridges (issue 28 items 2 and 3).

Oracles: the request pydantic-ai builds is read from the capture transport (what the
library handed its HTTP client), the recorded bodies are the project's own cassettes
(written from the providers' docs), and the table's classifications are checked against a
fresh `turnspec conform` run.
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
from conformance.suite.outcome import Outcome

pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed (pip install -e '.[pydantic-ai]')")

from conformance.adapters import registry
from conformance.adapters.protocol import AdapterOptions, RequestContext, WireResponse
from conformance.bridges import Canned, Captured, CaptureTransport, Gap, run_sync
from conformance.bridges.table import KNOWN, TRIAGED
from conformance.suite.runner import AdapterUnderTest, declared_gaps

ROOT = Path(__file__).resolve().parent.parent
SID = "sess_bridge"


def _msg(
    i: int, role: str, content: list[dict[str, object]], meta: dict[str, object] | None = None
) -> dict[str, object]:
    return canonical_msg(SID, i, role, content, meta)


def test_capture_transport_records_then_stops_or_answers() -> None:
    import httpx2  # function-level: the client library pydantic-ai's SDKs use

    t = CaptureTransport(httpx2)

    async def post() -> int:
        async with t.client() as client:
            r = await client.post("https://x.test/v1/m?alt=sse", json={"a": 1}, headers={"x-api-key": "secret"})
            return int(r.status_code)

    with pytest.raises(Captured):
        run_sync(post)
    assert t.requests[0].path == "/v1/m?alt=sse"
    assert t.requests[0].body == {"a": 1}
    assert "x-api-key" not in t.requests[0].headers  # credentials are the harness's, never the adapter's
    t.reset([Canned(b"{}", 418)])
    assert run_sync(post) == 418


def test_registry_resolves_bridge_names_and_refuses_unknown_apis() -> None:
    a = registry.load("pydantic-ai:anthropic")
    assert a.name == "pydantic-ai:anthropic" and a.wire_api == "anthropic-messages"
    with pytest.raises(InputError, match=r"no pydantic-ai bridge for 'nope' \(known: anthropic, gemini"):
        registry.load("pydantic-ai:nope")


def test_to_wire_is_the_request_pydantic_ai_builds() -> None:
    a = registry.load("pydantic-ai:anthropic")
    msgs = [
        _msg(1, "system", [{"type": "text", "text": "be brief"}]),
        _msg(2, "user", [{"type": "text", "text": "hi"}]),
    ]
    tools = [{"name": "get_weather", "description": "d", "input_schema": {"type": "object", "properties": {}}}]
    req = a.to_wire(msgs, tools, AdapterOptions(model="anthropic:claude-x", max_output_tokens=7))
    assert req.path == "/v1/messages"
    assert req.body["model"] == "claude-x" and req.body["max_tokens"] == 7
    assert req.body["system"] == "be brief"
    assert req.body["messages"] == [{"role": "user", "content": [{"text": "hi", "type": "text"}]}]
    assert [t["name"] for t in req.body["tools"]] == ["get_weather"]


def test_from_wire_response_goes_through_pydantic_ai_parsing() -> None:
    a = registry.load("pydantic-ai:anthropic")
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-served",
        "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 30, "output_tokens": 9, "cache_read_input_tokens": 5},
    }
    m = a.from_wire_response(WireResponse(json.dumps(body).encode()), RequestContext(session_id=SID))
    assert m["metadata"]["model"] == "anthropic:claude-served"
    assert m["content"][0] == {"type": "text", "text": "Let me check."}
    call = m["content"][1]
    assert call["name"] == "get_weather" and call["input"] == {"city": "Paris"}
    assert call["id"].startswith("tu_") and a.tool_id_map(SID).get_provider(call["id"]) == "toolu_01A"
    # the Messages API's input_tokens excludes cache reads; pydantic-ai's includes them
    assert m["metadata"]["usage"]["input_tokens"] == 30
    assert m["metadata"]["usage"]["cached_input_tokens"] == 5


def test_declared_gaps_turn_only_their_cases_into_skips() -> None:
    class Bridged:
        name = "b"
        bridge_gaps = (Gap(("TC802",), ("cache.yaml#*",), "no cache_control field"),)

    subject = AdapterUnderTest("b", Bridged(), [])  # type: ignore[arg-type]
    outs = [
        Outcome("TC802", "b", "fail", "cache.yaml#0", "differs"),
        Outcome("TC802", "b", "fail", "text.yaml#0", "differs"),
        Outcome("TC801", "b", "fail", "cache.yaml#0", "wrong class"),
    ]
    got = declared_gaps([subject], outs)
    assert [o.status for o in got] == ["skip", "fail", "fail"]
    assert got[0].message == "bridge gap: no cache_control field (differs)"


def test_conform_anthropic_bridge_fails_only_classified_library_bugs(tmp_path: Path) -> None:
    """`turnspec conform pydantic-ai:anthropic --no-samples` runs offline, and each check it
    fails is in the checked-in table as a library bug with its evidence."""
    out = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "conform", "pydantic-ai:anthropic", "--no-samples", "-o", "json",
         "--report", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    report = json.loads(out.read_text())
    text = json.dumps(report)
    assert "bridge gap: " in text  # the declared gaps are reported as skips with their reason
    failed = failed_rules(report, "pydantic-ai:anthropic")
    assert failed == {"TC201", "TC202", "TC203", "TC401", "TC404"}, failed
    for rule in failed:
        known = KNOWN.get(("pydantic-ai:anthropic", rule))
        assert known is not None and known.kind == "library bug", f"{rule} failed and is not classified"
    assert "pydantic-ai:anthropic" in TRIAGED


def test_table_was_made_with_the_installed_library_version() -> None:
    table = (ROOT / "docs" / "bridges.md").read_text(encoding="utf-8")
    made = re.search(r"^pydantic-ai-slim version: (\S+)$", table, re.M)
    assert made is not None
    assert made.group(1) == importlib.metadata.version("pydantic-ai-slim"), "regenerate: nox -s bridges_table"
    pins = re.findall(r'"pydantic-ai-slim\[[^\]]*\]==([^"]+)"', (ROOT / "pyproject.toml").read_text())
    assert pins and set(pins) == {made.group(1)}


@pytest.mark.parametrize(
    ("bridge", "issuer", "on_the_wire"),
    [
        # another model's reasoning replayed as a user turn (Anthropic) or as the assistant's own text
        ("anthropic", "gemini", '{"role": "user", "content": [{"text": "<assistant_thinking>\\nFOREIGN-THOUGHT'),
        ("openai-chat", "anthropic", '"content": "<think>\\nFOREIGN-THOUGHT\\n</think>\\n\\n<think>\\n\\n</think>'),
        ("openai-responses", "anthropic", '{"role": "assistant", "content": "<think>\\n\\n</think>"}'),
        ("gemini", "anthropic", '{"text": "FOREIGN-THOUGHT", "thought": true}'),
    ],
)
def test_library_bug_evidence(bridge: str, issuer: str, on_the_wire: str) -> None:
    """The wire the table's TC401/TC404 evidence quotes, rendered by the pinned pydantic-ai:
    a turn another provider issued (signed thinking, and redacted thinking), then a user turn.
    When pydantic-ai fixes it, this fails and the table's classification must be revisited."""
    a = registry.load(f"pydantic-ai:{bridge}")
    meta = {"provider": issuer, "model": f"{issuer}:m"}
    thinking = [{"type": "thinking", "text": "FOREIGN-THOUGHT", "signature": "c2ln"}]
    redacted = [{"type": "redacted_thinking", "data": "REDACTED"}] if issuer == "anthropic" else []
    msgs = [
        _msg(1, "user", [{"type": "text", "text": "hi"}]),
        _msg(2, "assistant", [*thinking, *redacted, {"type": "text", "text": "answer"}], meta),
        _msg(3, "user", [{"type": "text", "text": "again"}]),
    ]
    body = json.dumps(a.to_wire(msgs, [], AdapterOptions(model="m")).body)
    assert on_the_wire in body


def test_declared_gap_with_when_covers_only_that_difference() -> None:
    class Bridged:
        name = "b"
        bridge_gaps = (Gap(("TC802",), ("*",), "always asks for X", when=r"^/include: only in rendered"),)

    subject = AdapterUnderTest("b", Bridged(), [])  # type: ignore[arg-type]
    outs = [
        Outcome("TC802", "b", "fail", "a.yaml#0", "/include: only in rendered ([1])"),
        Outcome("TC802", "b", "fail", "a.yaml#1", "/input: differs; /include: only in rendered ([1])"),
    ]
    assert [o.status for o in declared_gaps([subject], outs)] == ["skip", "fail"]


def test_tc501_finds_an_image_sent_in_the_other_base64_alphabet() -> None:
    """google-genai sends inlineData in URL-safe base64; Gemini accepts either alphabet (the
    record's GEMINI_BASE64 sentence), so TC501 finds the image by its bytes."""
    from conformance.core.findings import Selection  # function-level: only this test selects rules
    from conformance.suite.runner import SuiteConfig, run  # function-level: as above

    report = run(
        SuiteConfig.for_refs(["pydantic-ai:gemini"], samples=None, peers=False, selection=Selection(select=("TC501",)))
    )
    result = report.result("TC501", "pydantic-ai:gemini")
    assert result is not None and result.status == "pass", result


def test_a_bridge_without_its_library_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    real = registry.importlib.import_module

    def missing(name: str, *args: object) -> object:
        if name == "conformance.bridges.pydantic_ai":
            raise ModuleNotFoundError("No module named 'pydantic_ai'")
        return real(name, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(registry.importlib, "import_module", missing)
    with pytest.raises(InputError) as err:
        registry.load("pydantic-ai:anthropic")
    assert "\n" not in str(err.value)
    assert "pip install 'turnspec[pydantic-ai]'" in str(err.value)


def test_run_sync_works_inside_a_running_event_loop() -> None:
    """Adapter methods are synchronous; called from async code (a loop already running in
    this thread) the library call runs on a worker thread's loop instead of failing."""
    import asyncio  # function-level: only this test runs a loop

    async def answer() -> int:
        return 42

    async def caller() -> int:
        return run_sync(answer)

    assert asyncio.run(caller()) == 42


def test_a_body_the_library_cannot_parse_is_a_one_line_wire_format_error() -> None:
    # pydantic's ValidationError writes one line per error: the bridge's message stays one line
    from conformance.adapters.base import WireFormatError  # function-level: only this test raises it

    a = registry.load("pydantic-ai:openai-chat")
    body = {"id": 1, "choices": [{"message": {"role": "assistant", "content": 5}}]}
    with pytest.raises(WireFormatError) as caught:
        a.from_wire_response(WireResponse(json.dumps(body).encode()), RequestContext(session_id=SID))
    message = str(caught.value)
    assert message.startswith("pydantic-ai could not parse the response: ")
    assert "\n" not in message and len(message) < 400


@pytest.mark.parametrize("name", ["pydantic-ai:gemini", "langchain:anthropic", "pydantic-ai:openai-chat"])
def test_a_bridge_reads_a_request_and_estimates_it_as_its_reference_adapter_does(name: str) -> None:
    """The bridge leaves reading requests and the estimate to its reference adapter, which
    takes the request's URL (Gemini keeps the model there) and the model (Gemini counts
    thought signatures by model). Failed before: the bridge passed neither, so it read a
    Gemini request's model as unknown and its estimates failed TC701 on real recordings the
    reference adapter passes."""
    from conformance.adapters.estimate import estimate_for_model
    from conformance.suite.cassettes import iter_cassettes

    bridge = registry.load(name)
    reference = bridge.reference
    checked = 0
    for folder in bridge.cassette_folders:
        for cassette in iter_cassettes(ROOT / "cassettes" / folder):
            for it in cassette.interactions:
                if not isinstance(it.request_body, dict) or it.status >= 400:
                    continue
                try:
                    want = reference.from_wire_request(it.request_body, session_id="s", url=it.uri)
                except TypeError:  # a reader without the url extension
                    want = reference.from_wire_request(it.request_body, session_id="s")
                except Exception:
                    continue
                got = bridge.from_wire_request(it.request_body, session_id="s", url=it.uri)
                assert got.options.model == want.options.model, it.label
                model = got.options.model
                assert estimate_for_model(bridge, got.messages, got.tools, model) == estimate_for_model(
                    reference, want.messages, want.tools, model
                ), it.label
                checked += 1
    assert checked >= 5


def test_declared_gaps_meeting_in_one_request_cover_it_together_and_only_together() -> None:
    """Two `when` gaps each explaining one difference (pydantic-ai:gemini's VALIDATED mode and
    its dropped thinkingConfig, llm-gemini's recording): the case is the gaps', not a failure;
    an unexplained difference beside them still fails."""

    class Bridged:
        name = "b"
        bridge_gaps = (
            Gap(("TC802",), ("*",), "always asks for X", when=r"^/include: only in rendered \([^)]*\) \(compared"),
            Gap(("TC802",), ("*",), "drops Y", when=r"^/y: missing from rendered"),
        )

    subject = AdapterUnderTest("b", Bridged(), [])  # type: ignore[arg-type]
    tail = " (compared up to x's declared equivalences: a; b)"
    outs = [
        Outcome(
            "TC802", "b", "fail", "a.yaml#0", "/include: only in rendered ([1]); /y: missing from rendered (2)" + tail
        ),
        Outcome(
            "TC802", "b", "fail", "a.yaml#1", "/include: only in rendered ([1]); /z: recorded 1, rendered 2" + tail
        ),
        Outcome("TC801", "b", "fail", "a.yaml#0", "/include: only in rendered ([1]); /y: missing from rendered (2)"),
    ]
    got = declared_gaps([subject], outs)
    assert [o.status for o in got] == ["skip", "fail", "fail"]
    assert got[0].message.startswith("bridge gaps: always asks for X; drops Y (/include")
    many = "; ".join(f"/include: only in rendered ([{i}]); /y: missing from rendered ({i})" for i in range(10)) + tail
    assert declared_gaps([subject], [Outcome("TC802", "b", "fail", "a.yaml#2", many)])[0].status == "fail"


@pytest.mark.parametrize("spelling", ["url-safe unpadded", "standard padded"])
def test_gemini_bridge_sends_a_url_safe_signature_back_as_its_bytes(spelling: str) -> None:
    """google-genai records thoughtSignature in the URL-safe alphabet (proto3 JSON takes either,
    GEMINI_BASE64); GoogleModel decodes signatures with `base64.b64decode`, so the bridge hands
    it the standard spelling: the same bytes go back (before: 'Invalid base64-encoded string',
    or other bytes where the dropped `-`/`_` left a valid length)."""
    import base64  # function-level: only this test spells payloads

    payload = bytes(range(248, 256)) * 3 + b"\xfb\xef"  # URL-safe and standard spellings differ
    sig = (
        base64.urlsafe_b64encode(payload).decode().rstrip("=")
        if spelling[0] == "u"
        else base64.b64encode(payload).decode()
    )
    a = registry.load("pydantic-ai:gemini")
    meta = {"provider": "gemini", "model": "gemini:gemini-2.5-flash"}
    msgs = [
        _msg(1, "user", [{"type": "text", "text": "hi"}]),
        _msg(
            2, "assistant", [{"type": "thinking", "text": "hmm", "signature": sig}, {"type": "text", "text": "a"}], meta
        ),
        _msg(3, "user", [{"type": "text", "text": "again"}]),
    ]
    body = a.to_wire(msgs, [], AdapterOptions(model="gemini-2.5-flash")).body
    sent = [p["thoughtSignature"] for c in body["contents"] for p in c["parts"] if "thoughtSignature" in p]
    # google-genai writes bytes in the URL-safe alphabet: read either, strictly
    std = [s.replace("-", "+").replace("_", "/") for s in sent]
    assert sent and all(base64.b64decode(s + "=" * (-len(s) % 4), validate=True) == payload for s in std), sent


@pytest.mark.parametrize(
    ("bridge", "differences", "covered"),
    [
        # llm's recording: pydantic-ai's strict rewrite of a tool schema (both fields)
        (
            "pydantic-ai:openai-chat",
            "/tools/0/function/parameters/additionalProperties: only in rendered (false); "
            "/tools/0/function/strict: only in rendered (true)",
            True,
        ),
        (
            "pydantic-ai:openai-chat",
            "/tools/0/function/strict: only in rendered (true); /model: recorded 1, rendered 2",
            False,
        ),
        # a server tool the bridge does not map, and a function tool it must render
        (
            "pydantic-ai:anthropic",
            '/tools: missing from rendered (recorded [{"type": "web_search_20250305", "name": "w"}])',
            True,
        ),
        (
            "pydantic-ai:anthropic",
            '/tools: missing from rendered (recorded [{"name": "get_weather", "description": "x"}])',
            False,
        ),
        # GoogleModel's own mode beside a dropped thinkingConfig (llm-gemini), but not a changed tool result
        (
            "pydantic-ai:gemini",
            '/generationConfig: missing from rendered (recorded {"thinkingConfig": {"includeThoughts": true}}); '
            '/toolConfig: only in rendered ({"functionCallingConfig": {"mode": "VALIDATED"}})',
            True,
        ),
        (
            "pydantic-ai:gemini",
            '/contents/2/parts/0/functionResponse/response/return_value: recorded "M", rendered "{}"; '
            '/toolConfig: only in rendered ({"functionCallingConfig": {"mode": "VALIDATED"}})',
            False,
        ),
    ],
)
def test_sample_gaps_cover_their_differences_and_nothing_else(bridge: str, differences: str, covered: bool) -> None:
    subject = AdapterUnderTest(bridge, registry.load(bridge), [])
    msg = differences + " (compared up to x's declared equivalences: a)"
    got = declared_gaps([subject], [Outcome("TC802", bridge, "fail", "owner__repo/tests/cassettes/t.yaml#0", msg)])
    assert got[0].status == ("skip" if covered else "fail"), got[0].message


def test_library_bug_evidence_chat_refusal_left_out_of_the_parts() -> None:
    """TC903's evidence: cassettes/openai-chat/refusal.yaml, read by the pinned pydantic-ai.
    OpenAIChatModel answers a `message.refusal` (and streamed `delta.refusal` pieces) with a
    ModelResponse of no parts, the text only in `provider_details['refusal']`, so the reply has
    no text. When pydantic-ai gives it a part, this fails and the classification must be revisited."""
    from conformance.suite.cassettes import load_cassette  # function-level: only this evidence reads one

    a = registry.load("pydantic-ai:openai-chat")
    reply, streamed = load_cassette(ROOT / "cassettes/openai-chat/refusal.yaml").interactions[:2]
    refusal = reply.response_json["choices"][0]["message"]["refusal"]
    parsed = a.from_wire_response(WireResponse(reply.response_json), RequestContext(session_id=SID))
    assert refusal not in json.dumps(parsed["content"])
    end = list(a.stream_response([streamed.response_body], RequestContext(session_id=SID)))[-1]
    assert end["type"] == "message_complete" and refusal not in json.dumps(end["final_content"])
