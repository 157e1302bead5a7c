"""With pydantic-ai installed (it is no dependency of turnspec): what the converter writes
is what `ModelMessagesTypeAdapter.validate_json` reads, and what `dump_json` writes
validates and converts (issue 28). Skipped without the library."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from conformance.api import validate
from conformance.convert import convert
from conformance.strategies.conversations import conversations

pa = pytest.importorskip("pydantic_ai.messages", reason="pydantic-ai is not installed (not a test dependency)")
FIX = Path(__file__).parent / "fixtures"
NAME = "pydantic-ai"


def _parts(messages: list[object]) -> list[str]:
    return [type(p).__name__ for m in messages for p in m.parts]  # type: ignore[attr-defined]


def test_what_the_converter_writes_is_what_pydantic_ai_reads(tmp_path: Path) -> None:
    convert(NAME, "canonical", FIX / "valid_history.json", tmp_path / "c.jsonl")
    convert("canonical", NAME, tmp_path / "c.jsonl", tmp_path / "back.json")
    msgs = pa.ModelMessagesTypeAdapter.validate_json((tmp_path / "back.json").read_bytes())
    assert _parts(msgs) == [
        "SystemPromptPart", "UserPromptPart", "ThinkingPart", "TextPart", "ToolCallPart", "ToolReturnPart", "TextPart",
    ]  # fmt: skip
    assert msgs[1].parts[0].signature == "c2lnbmF0dXJl" and msgs[1].parts[0].provider_name == "anthropic"


def test_what_pydantic_ai_dumps_validates_and_converts(tmp_path: Path) -> None:
    for n, line in enumerate((FIX / "valid_retry.jsonl").read_bytes().splitlines()):
        dumped = tmp_path / f"d{n}.json"
        dumped.write_bytes(pa.ModelMessagesTypeAdapter.dump_json(pa.ModelMessagesTypeAdapter.validate_json(line)))
        assert validate([dumped]).findings == []  # detected, and clean
        convert(NAME, "canonical", dumped, tmp_path / f"c{n}.jsonl")
        roles = [orjson.loads(x)["role"] for x in (tmp_path / f"c{n}.jsonl").read_bytes().splitlines()]
        assert roles == (
            ["user", "assistant", "tool", "assistant", "tool", "user", "assistant"]
            if n == 0
            else ["system", "user", "assistant"]
        )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(blocks={"text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result"}))
def test_any_converted_session_is_read_by_pydantic_ai(session: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "s.jsonl", Path(d) / "h.json"
        src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        convert("canonical", NAME, src, dst)
        msgs = pa.ModelMessagesTypeAdapter.validate_json(dst.read_bytes())
    calls = [b["id"] for m in session for b in m["content"] if b["type"] == "tool_use"]
    assert [p.tool_call_id for m in msgs for p in m.parts if type(p).__name__ == "ToolCallPart"] == calls
    assert len([m for m in msgs if m.kind == "response"]) == len([m for m in session if m["role"] == "assistant"])
