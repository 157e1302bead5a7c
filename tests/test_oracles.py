"""The record probes that give checks their yardsticks agree with the reference adapters on
the project's own cassettes (the probes are written from the providers' docs, the adapters
separately: where they agree, neither moved to meet the other)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.adapters import registry
from conformance.adapters.protocol import WireResponse
from conformance.suite.checks.common import ctx_for
from conformance.suite.runner import load_cassettes

ROOT = Path(__file__).resolve().parents[1]
ADAPTERS = ("anthropic", "openai-chat", "openai-responses", "gemini", "ollama", "bedrock")


@pytest.mark.parametrize("name", ADAPTERS)
def test_response_tool_calls_probe_counts_the_calls_the_reference_adapter_parses(name: str) -> None:
    adapter = registry.load(name)
    judged = 0
    for cassette in load_cassettes([ROOT / "cassettes" / name]):
        for it in cassette.interactions:
            api = it.wire
            if api is None or it.is_stream or it.status >= 400 or not isinstance(it.response_json, dict):
                continue
            located = api.probes.response_tool_calls(it.response_json)
            msg = adapter.from_wire_response(WireResponse(it.response_json), ctx_for("sess_probe"))
            parsed = [b for b in msg["content"] if b.get("type") == "tool_use"]
            assert len(located) == len(parsed), (it.label, [x.pointer for x in located])
            judged += len(located)
    assert judged >= 1, f"no cassette of {name} holds a tool call"
