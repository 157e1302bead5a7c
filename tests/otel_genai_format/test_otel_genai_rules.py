"""otel-genai validation: planted defects are found where they are (the element's own
line, also inside an object record), clean records pass, standard input is read as
--format says, and detection claims only unambiguous records (issue 28)."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from conformance.api import validate
from conformance.cli import main
from conformance.formats import detect_format, get_format
from conformance.formats.otel_genai import OtelGenAIFormat

FIX = Path(__file__).parent / "fixtures"
NAME = "otel-genai"


def _findings(path: Path, fmt: str | None = NAME) -> list[tuple[str, int | None, str]]:
    return [(f.rule, f.line, f.pointer) for f in validate([path], fmt=fmt).findings]


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("OT101_unpaired.json", ("OT101", 4, "/2/parts/0/id")),
        ("OT004_part.jsonl", ("OT004", 2, "/0/parts/0")),
        ("OT002_role.json", ("OT002", 3, "/1")),
        ("OT005_finish.json", ("OT005", 3, "/gen_ai.output.messages/0")),
    ],
)
def test_planted_defect_is_found_where_it_is(fixture: str, expected: tuple[str, int, str]) -> None:
    assert _findings(FIX / fixture) == [expected]


@pytest.mark.parametrize("fixture", ["valid_span.json", "valid_records.jsonl"])
def test_documented_shapes_pass(fixture: str) -> None:
    assert _findings(FIX / fixture) == []
    assert _findings(FIX / fixture, fmt=None) == []  # detected


def _write(tmp_path: Path, value: object, name: str = "m.json") -> Path:
    p = tmp_path / name
    p.write_bytes(orjson.dumps(value))
    return p


_USER = {"role": "user", "parts": [{"type": "text", "content": "hi"}]}
_CALL = {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": None}]}
_IN = "gen_ai.input.messages"


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        ({"messages": []}, ("OT001", "")),
        ([], ("OT001", "")),
        (3, ("OT001", "")),
        ({_IN: {}}, ("OT001", f"/{_IN}")),
        ({_IN: "[{"}, ("OT001", f"/{_IN}")),
        ({"gen_ai.system_instructions": 3}, ("OT001", "/gen_ai.system_instructions")),
        (["hello"], ("OT001", "/0")),
        ([{"role": 3, "parts": []}], ("OT002", "/0/role")),
        ([{"role": "user"}], ("OT003", "/0")),
        ([{"role": "user", "parts": {}}], ("OT003", "/0/parts")),
        ([{"role": "user", "parts": [{"content": "x"}]}], ("OT003", "/0/parts/0")),
        ([{"role": "user", "parts": [{"type": "text"}]}], ("OT004", "/0/parts/0")),
        ([{"role": "user", "parts": [{"type": "text", "content": 3}]}], ("OT004", "/0/parts/0/content")),
        ([{"role": "user", "parts": [{"type": "uri", "modality": "image"}]}], ("OT004", "/0/parts/0")),
        ([{"role": "user", "parts": [{"type": "file", "file_id": "f"}]}], ("OT004", "/0/parts/0")),
        ([{"role": "assistant", "parts": [{"type": "reasoning"}]}], ("OT004", "/0/parts/0")),
        ([{"role": "assistant", "parts": [{"type": "tool_call", "id": "c"}]}], ("OT004", "/0/parts/0")),
        ([{"role": "assistant", "parts": [{"type": "tool_call", "name": "f", "id": 7}]}], ("OT004", "/0/parts/0/id")),
        ([_USER, _CALL, {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1"}]}], ("OT004", "/2/parts/0")),
        ({_IN: [_USER], "gen_ai.output.messages": [{"role": "assistant", "parts": [], "finish_reason": 1}]},
         ("OT005", "/gen_ai.output.messages/0/finish_reason")),
        ({_IN: orjson.dumps([_USER, {"parts": []}]).decode()}, ("OT002", f"/{_IN}/1")),
    ],
)  # fmt: skip
def test_each_rule_fires_on_its_defect(tmp_path: Path, record: object, expected: tuple[str, str]) -> None:
    """OT001 OT002 OT003 OT004 OT005: one defect, one finding, where it is (inside a JSON-text attribute too)."""
    assert [(r, p) for r, _, p in _findings(_write(tmp_path, record))] == [expected]


def test_a_response_answers_an_earlier_call_of_its_own_record_else_a_warning(tmp_path: Path) -> None:
    """OT101: pairing is scoped to one record (one .jsonl line); the schemas do not require it, so it warns."""
    ret = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "ok"}]}
    p = tmp_path / "r.jsonl"
    p.write_bytes(orjson.dumps([_USER, _CALL, ret]) + b"\n" + orjson.dumps([_USER, ret, _CALL]) + b"\n")
    found = validate([p], fmt=NAME).findings
    assert [(f.rule, f.line, f.pointer, f.severity.name) for f in found] == [("OT101", 2, "/1/parts/0/id", "WARNING")]


def test_the_cli_reports_file_line_pointer_and_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--format", NAME, str(FIX / "OT005_finish.json")])
    assert code == 1
    assert "OT005_finish.json:3: /gen_ai.output.messages/0 OT005" in capsys.readouterr().out


def test_standard_input_is_read_as_format_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-` has no suffix: one JSON document on stdin is one record, else each line is one."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO((FIX / "OT005_finish.json").read_bytes())))
    assert main(["validate", "--format", NAME, "-"]) == 1
    assert "-:3: /gen_ai.output.messages/0 OT005" in capsys.readouterr().out
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO((FIX / "OT004_part.jsonl").read_bytes())))
    assert main(["validate", "--format", NAME, "-"]) == 1
    assert "-:2: /0/parts/0 OT004" in capsys.readouterr().out


def test_rules_cite_the_semantic_conventions() -> None:
    own = [info for info in get_format(NAME).rules if info.id.startswith(("OT0", "OT1"))]
    assert own and all(".json ›" in info.section or "registry ›" in info.section for info in own)


def test_detection_claims_only_unambiguous_records(tmp_path: Path) -> None:
    assert isinstance(detect_format(FIX / "valid_span.json"), OtelGenAIFormat)
    assert isinstance(detect_format(FIX / "valid_records.jsonl"), OtelGenAIFormat)
    assert isinstance(detect_format(_write(tmp_path, {"gen_ai.output.messages": "[]"})), OtelGenAIFormat)
    assert not OtelGenAIFormat().detect(_write(tmp_path, [_USER, {"role": "user", "parts": [{"text": "gemini"}]}]))
    assert not OtelGenAIFormat().detect(_write(tmp_path, [{"role": "user", "parts": []}]))
    assert not OtelGenAIFormat().detect(
        _write(tmp_path, [{"kind": "request", "role": "user", "parts": [{"type": "text"}]}])
    )
    assert not OtelGenAIFormat().detect(_write(tmp_path, [{"role": "user", "content": "hi"}]))
    assert not OtelGenAIFormat().detect(_write(tmp_path, []))
    assert not OtelGenAIFormat().detect(_write(tmp_path, [_USER], name="m.txt"))
    assert not OtelGenAIFormat().detect(
        _write(tmp_path, [{"role": "user", "parts": [{"type": ["text"]}]}], name="m.jsonl")
    )
