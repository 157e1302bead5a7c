"""With langchain-core installed (the test extra; no dependency of turnspec itself): what
the converter writes is what `messages_from_dict` reads, and what `messages_to_dict` and
`dumpd` write validates and converts (issue 28). Skipped without the library."""

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

lc = pytest.importorskip(
    "langchain_core.messages", reason="langchain-core is not installed (pip install '.[langchain]')"
)
load = pytest.importorskip("langchain_core.load")
FIX = Path(__file__).parent / "fixtures"
NAME = "langchain"


def test_what_the_converter_writes_is_what_langchain_reads(tmp_path: Path) -> None:
    convert(NAME, "canonical", FIX / "valid_conversation.json", tmp_path / "c.jsonl")
    convert("canonical", NAME, tmp_path / "c.jsonl", tmp_path / "back.json")
    msgs = lc.messages_from_dict(orjson.loads((tmp_path / "back.json").read_bytes()))
    assert [type(m).__name__ for m in msgs] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "AIMessage",
    ]
    ai = msgs[2]
    assert [b["type"] for b in ai.content_blocks] == ["reasoning", "text", "tool_call"]
    assert ai.tool_calls[0]["name"] == "get_weather" and ai.tool_calls[0]["args"] == {"city": "Paris"}
    assert msgs[3].tool_call_id == ai.tool_calls[0]["id"] and msgs[3].status == "success"
    assert ai.usage_metadata == {"input_tokens": 57, "output_tokens": 23, "total_tokens": 80}


def _real_messages() -> list[Any]:
    return [
        lc.SystemMessage("Be brief."),
        lc.HumanMessage(
            content=[{"type": "text", "text": "Roll"}, {"type": "image", "url": "https://example.com/d.png"}]
        ),
        lc.AIMessage(
            content=[{"type": "reasoning", "reasoning": "roll it"}],
            tool_calls=[{"name": "roll", "args": {"n": 6}, "id": "c1"}],
            usage_metadata={"input_tokens": 4, "output_tokens": 2, "total_tokens": 6},
            response_metadata={"model_name": "gpt-4o", "model_provider": "openai"},
        ),
        lc.ToolMessage("jammed", tool_call_id="c1", status="error"),
        lc.AIMessage("Jammed."),
    ]


@pytest.mark.parametrize("form", ["messages_to_dict", "dumpd"])
def test_what_langchain_writes_validates_and_converts(tmp_path: Path, form: str) -> None:
    msgs = _real_messages()
    dumped = lc.messages_to_dict(msgs) if form == "messages_to_dict" else [load.dumpd(m) for m in msgs]
    src = tmp_path / "lc.json"
    src.write_bytes(orjson.dumps(dumped))
    assert validate([src]).findings == []  # detected, and clean
    findings = convert(NAME, "canonical", src, tmp_path / "c.jsonl")
    assert {f.rule for f in findings} == {"LC901"}
    out = [orjson.loads(x) for x in (tmp_path / "c.jsonl").read_bytes().splitlines()]
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool", "assistant"]
    assert out[3]["content"][0]["is_error"] is True
    assert out[2]["metadata"]["model"] == "openai:gpt-4o"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(blocks={"text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result"}))
def test_any_converted_session_is_read_by_langchain(session: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "s.jsonl", Path(d) / "h.json"
        src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        convert("canonical", NAME, src, dst)
        msgs = lc.messages_from_dict(orjson.loads(dst.read_bytes()))
    calls = [b["id"] for m in session for b in m["content"] if b["type"] == "tool_use"]
    assert [c["id"] for m in msgs if isinstance(m, lc.AIMessage) for c in m.tool_calls] == calls
    assert [m.id for m in msgs] == [m["id"] for m in session]
    assert [type(m).__name__ for m in msgs] == [
        {"system": "SystemMessage", "user": "HumanMessage", "assistant": "AIMessage", "tool": "ToolMessage"}[m["role"]]
        for m in session
    ]
