"""Issue 17, gpt2099 provider-api.md: tool lists (`prepare-request`, GPA-03) and the
streamer view (`response_stream_streamer`, GPA-06) are read and their shape checked, as
the doc writes it and as gpt2099's own recorded fixtures use it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.api import expand, validate
from conformance.convert import convert
from conformance.core.errors import InputError
from conformance.formats.gpt2099 import resolve

TOOL = {"name": "read_file", "description": "Read a file",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}  # fmt: skip


def _tools(tmp_path: Path, entries: list[object]) -> list[tuple[str, str, str]]:
    src = tmp_path / "tools.json"
    src.write_text(json.dumps(entries, indent=1))
    return [(f.rule, f.severity, f.pointer) for f in validate([src], fmt="gpt2099").findings]


def _streamer(tmp_path: Path, lines: list[object]) -> list[tuple[str, str, int | None, str]]:
    src = tmp_path / "expected-streamer.jsonl"
    src.write_text("".join(json.dumps(v) + "\n" for v in lines))
    return [(f.rule, f.severity, f.line, f.pointer) for f in validate([src], fmt="gpt2099").findings]


def test_a_documented_tool_list_is_clean(tmp_path: Path) -> None:
    assert _tools(tmp_path, [TOOL]) == []
    # MCP fields gpt2099 passes through, and a schema without `required`
    mcp = {**TOOL, "title": "Read", "outputSchema": {"type": "object"},
           "inputSchema": {"type": "object", "properties": {}}}  # fmt: skip
    assert _tools(tmp_path, [mcp]) == []


@pytest.mark.parametrize(
    ("entry", "pointer"),
    [
        ({**TOOL, "inputSchema": {"type": "array"}}, "/1/inputSchema/type"),
        ({**TOOL, "inputSchema": {"properties": {}}}, "/1/inputSchema/type"),  # a missing key: its pointer
        ({**TOOL, "inputSchema": {"type": "object", "properties": []}}, "/1/inputSchema/properties"),
        ({**TOOL, "inputSchema": {"type": "object", "required": "path"}}, "/1/inputSchema/required"),
        ({**TOOL, "inputSchema": {"type": "object", "required": [1]}}, "/1/inputSchema/required/0"),
        ({**TOOL, "name": ""}, "/1/name"),
        ({**TOOL, "description": 3}, "/1/description"),
        ({"name": "x", "description": "no schema"}, "/1/inputSchema"),
        ({k: v for k, v in TOOL.items() if k != "description"}, "/1/description"),
    ],
)  # fmt: skip
def test_a_tool_entry_off_the_documented_shape_is_a_schema_error(
    entry: dict[str, object], pointer: str, tmp_path: Path
) -> None:
    got = _tools(tmp_path, [TOOL, entry])
    assert got and {(r, s) for r, s, _ in got} == {("GP020", "error")}
    assert pointer in {p for _, _, p in got}


def test_a_documented_streamer_view_is_clean(tmp_path: Path) -> None:
    lines: list[object] = [{"type": "text", "content": ""}, {"content": "Hi"}, None, {},
                           {"type": "tool_use", "name": "read_file", "id": "t1"}, {"content": "{}"}]  # fmt: skip
    assert _streamer(tmp_path, lines) == []


@pytest.mark.parametrize(
    ("event", "pointer"),
    [
        ({"type": "text", "content": "x", "delta": "y"}, "/delta"),
        ({"type": "tool_use", "name": 3}, "/name"),
        ({"type": "", "content": "x"}, "/type"),
        ({"type": 1, "content": "x"}, "/type"),
        ({"type": "tool_use", "name": "read", "id": 7}, "/id"),
    ],
)
def test_a_streamer_event_off_the_documented_shape_is_a_schema_error(
    event: dict[str, object], pointer: str, tmp_path: Path
) -> None:
    got = _streamer(tmp_path, [{"type": "text", "content": ""}, event])
    assert ("GP020", "error", 2, pointer) in got
    assert {r for r, _, _, _ in got} == {"GP020"}


def test_content_that_is_not_a_string_is_a_warning(tmp_path: Path) -> None:
    got = _streamer(tmp_path, [{"type": "tool_use", "name": "read", "content": {"path": "x"}}, {"content": 3}])
    assert got == [("GP015", "warning", 1, "/content"), ("GP015", "warning", 2, "/content")]


def test_content_before_any_block_is_a_warning_once_a_block_started_it_is_not(tmp_path: Path) -> None:
    got = _streamer(tmp_path, [None, {}, {"content": "a"}, {"type": "text", "content": "b"}, {"content": "c"}])
    assert got == [("GP016", "warning", 3, "")]


@pytest.mark.samples
def test_the_real_tool_lists_and_streamer_views_are_read_and_valid(samples: Path) -> None:
    root = samples / "gpt2099/providers"
    tools = sorted((root / "tools").glob("*.json"))
    views = sorted((root / "response-stream").glob("*/*/expected-streamer.jsonl"))
    assert len(tools) == 3 and len(views) == 24
    claimed = {p for p, f in expand([root]) if f.name == "gpt2099"}
    assert set(tools) | set(views) <= claimed
    assert not {p for p in claimed if p.name == "events.jsonl"}  # raw provider events stay set aside
    report = validate([*tools, *views])
    assert report.errors == 0
    # the one deviation from the doc: gpt2099's Gemini streamer writes tool arguments as a record
    assert [(Path(f.path).parent.name, f.rule, f.pointer) for f in report.findings] == [
        ("tool-use", "GP015", "/content")
    ]
    assert "gemini" in report.findings[0].path


@pytest.mark.parametrize(
    ("name", "lines", "what"),
    [
        ("tools.json", None, "an MCP tool list"),
        ("expected-streamer.jsonl", [{"type": "text", "content": ""}, {"content": "Hi"}], "streamer view"),
        ("events.jsonl", [{"type": "message_start", "message": {}}, {"type": "ping"}], "provider stream events"),
    ],
)
def test_an_artefact_is_neither_converted_nor_resolved(
    name: str, lines: list[object] | None, what: str, tmp_path: Path
) -> None:
    src = tmp_path / name
    if lines is None:
        src.write_text(json.dumps([TOOL]))
    else:
        src.write_text("".join(json.dumps(v) + "\n" for v in lines))
    with pytest.raises(InputError, match=what):
        convert("gpt2099", "canonical", src, tmp_path / "c.jsonl")
    assert not (tmp_path / "c.jsonl").exists()
    with pytest.raises(InputError, match=what):
        resolve(src)
