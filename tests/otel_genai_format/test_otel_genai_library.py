"""With opentelemetry-util-genai installed (the test extra; no dependency of turnspec
itself): what its message types serialize validates and converts, and what the converter
writes builds those types field for field and serializes back to the same JSON (issue 28).
Skipped without the library."""

from __future__ import annotations

import base64
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

from conformance.api import validate
from conformance.convert import convert
from conformance.strategies.conversations import conversations

t = pytest.importorskip("opentelemetry.util.genai.types", reason="opentelemetry-util-genai is not installed")
utils = pytest.importorskip("opentelemetry.util.genai.utils")
NAME = "otel-genai"
IN, OUT = "gen_ai.input.messages", "gen_ai.output.messages"
_CLASSES = {"text": "Text", "reasoning": "Reasoning", "tool_call": "ToolCallRequest",
            "tool_call_response": "ToolCallResponse", "blob": "Blob", "uri": "Uri", "file": "File"}  # fmt: skip


def _typed(part: dict[str, Any]) -> Any:
    """The library's part for one part of ours: every field we write is a field of its class."""
    fields = {k: v for k, v in part.items() if k != "type"}
    if part["type"] == "blob":
        fields["content"] = base64.b64decode(fields["content"])  # the library holds bytes
    return getattr(t, _CLASSES[part["type"]])(**fields)


def _dumps(messages: list[Any]) -> list[Any]:
    """The library's own JSON of its messages (`gen_ai_json_dumps`), without its null names."""
    out = orjson.loads(utils.gen_ai_json_dumps([asdict(m) for m in messages]))
    return [{k: v for k, v in m.items() if not (k == "name" and v is None)} for m in out]


def test_what_the_library_writes_validates_and_converts(tmp_path: Path) -> None:
    inputs = [
        t.InputMessage("system", [t.Text("Be brief.")]),
        t.InputMessage("user", [t.Text("Roll"), t.Blob("image/png", "image", b"\x89PNG\r\n\x1a\n")]),
        t.InputMessage("assistant", [t.Reasoning("roll it"), t.ToolCallRequest({"n": 6}, "roll", "c1")]),
        t.InputMessage("tool", [t.ToolCallResponse("jammed", "c1")]),
    ]
    outputs = [t.OutputMessage("assistant", [t.Text("Jammed.")], "stop")]
    record = {IN: utils.gen_ai_json_dumps([asdict(m) for m in inputs]),  # JSON text, as on a span
              OUT: utils.gen_ai_json_dumps([asdict(m) for m in outputs])}  # fmt: skip
    src = tmp_path / "span.json"
    src.write_bytes(orjson.dumps(record))
    assert validate([src]).findings == []  # detected, and clean
    findings = convert(NAME, "canonical", src, tmp_path / "c.jsonl")
    assert {f.rule for f in findings} == {"OT901"}
    msgs = [orjson.loads(x) for x in (tmp_path / "c.jsonl").read_bytes().splitlines()]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant"]
    assert msgs[1]["content"][1]["source"]["data"] == base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(blocks={"text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result"}))
def test_any_converted_session_builds_the_library_types(session: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, dst = Path(d) / "s.jsonl", Path(d) / "r.json"
        src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        convert("canonical", NAME, src, dst)
        record = orjson.loads(dst.read_bytes())
    inputs = [t.InputMessage(m["role"], [_typed(p) for p in m["parts"]]) for m in record[IN]]
    outputs = [
        t.OutputMessage(m["role"], [_typed(p) for p in m["parts"]], m["finish_reason"]) for m in record.get(OUT, [])
    ]
    assert _dumps(inputs) == record[IN]
    assert _dumps(outputs) == record.get(OUT, [])
