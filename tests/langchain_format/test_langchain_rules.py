"""langchain validation: planted defects are found where they are, clean conversations
pass, standard input is read as --format says, and detection claims only unambiguous
LangChain message lists (issue 28)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from conformance.api import validate
from conformance.cli import main
from conformance.formats import detect_format, get_format
from conformance.formats.langchain import LangChainFormat

FIX = Path(__file__).parent / "fixtures"
NAME = "langchain"


def _findings(path: Path, fmt: str | None = NAME) -> list[tuple[str, int | None, str]]:
    return [(f.rule, f.line, f.pointer) for f in validate([path], fmt=fmt).findings]


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("LC101_unpaired.json", ("LC101", 4, "/2/data/tool_call_id")),
        ("LC005_tool_calls.jsonl", ("LC005", 2, "/1/data/tool_calls/0")),
        ("LC002_type.json", ("LC002", 3, "/1/type")),
        ("LC006_status.json", ("LC006", 4, "/2/data/status")),
        ("LC004_block.json", ("LC004", 2, "/0/data/content/0")),
    ],
)
def test_planted_defect_is_found_where_it_is(fixture: str, expected: tuple[str, int, str]) -> None:
    assert _findings(FIX / fixture) == [expected]


@pytest.mark.parametrize("fixture", ["valid_conversation.json", "valid_dumpd.jsonl"])
def test_documented_shapes_pass(fixture: str) -> None:
    assert _findings(FIX / fixture) == []
    assert _findings(FIX / fixture, fmt=None) == []  # detected


def _write(tmp_path: Path, messages: object, name: str = "m.json") -> Path:
    p = tmp_path / name
    p.write_bytes(orjson.dumps(messages))
    return p


_HUMAN = {"type": "human", "data": {"content": "hi"}}
_CALL = {"type": "ai", "data": {"content": "", "tool_calls": [{"name": "f", "args": {}, "id": "c1"}]}}


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ({"type": "human", "data": {}}, ("LC001", "")),
        ([], ("LC001", "")),
        (["hello"], ("LC001", "/0")),
        ([{"type": "human", "data": []}], ("LC001", "/0/data")),
        ([{"lc": 1, "type": "constructor", "id": ["x", "HumanMessage"], "kwargs": 3}], ("LC001", "/0/kwargs")),
        ([{"data": {}}], ("LC002", "/0")),
        ([{"type": "bot", "data": {}}], ("LC002", "/0/type")),
        ([{"lc": 1, "type": "constructor", "id": ["x", "BotMessage"], "kwargs": {}}], ("LC002", "/0/id")),
        ([{"type": "human", "data": {"content": 3}}], ("LC003", "/0/data/content")),
        ([{"type": "human", "data": {}}], ("LC003", "/0/data")),
        ([{"type": "human", "data": {"content": [{"text": "x"}]}}], ("LC003", "/0/data/content/0")),
        ([{"type": "human", "data": {"content": [{"type": "text"}]}}], ("LC004", "/0/data/content/0")),
        ([{"type": "human", "data": {"content": [{"type": "image"}]}}], ("LC004", "/0/data/content/0")),
        ([_HUMAN, {"type": "ai", "data": {"content": [{"type": "reasoning", "reasoning": {}}]}}], ("LC004", "/1/data/content/0")),
        ([_HUMAN, {"type": "ai", "data": {"content": [{"type": "tool_call", "name": "f"}]}}], ("LC004", "/1/data/content/0")),
        ([_HUMAN, {"type": "ai", "data": {"content": "", "tool_calls": {}}}], ("LC005", "/1/data/tool_calls")),
        ([_HUMAN, {"type": "ai", "data": {"content": "", "tool_calls": [{"args": {}}]}}], ("LC005", "/1/data/tool_calls/0")),
        ([_HUMAN, {"type": "ai", "data": {"content": "", "tool_calls": [{"name": "f", "args": {}, "id": 3}]}}],
         ("LC005", "/1/data/tool_calls/0")),
        ([_HUMAN, _CALL, {"type": "tool", "data": {"content": "x"}}], ("LC006", "/2/data")),
        ([_HUMAN, _CALL, {"type": "tool", "data": {"content": "x", "tool_call_id": "c1", "status": None}}],
         ("LC006", "/2/data/status")),
    ],
)  # fmt: skip
def test_each_rule_fires_on_its_defect(tmp_path: Path, messages: object, expected: tuple[str, str]) -> None:
    """LC001 LC002 LC003 LC004 LC005 LC006: one defect, one finding, where it is."""
    assert [(r, p) for r, _, p in _findings(_write(tmp_path, messages))] == [expected]


def test_a_tool_message_answers_only_an_earlier_call_of_its_own_conversation(tmp_path: Path) -> None:
    """LC101: pairing is scoped to one conversation (one .jsonl line); a content tool_call block is a call too."""
    ret = {"type": "tool", "data": {"content": "ok", "tool_call_id": "c1"}}
    block = {"type": "ai", "data": {"content": [{"type": "tool_call", "name": "f", "args": {}, "id": "c1"}]}}
    p = tmp_path / "h.jsonl"
    p.write_bytes(
        b"\n".join(orjson.dumps(c) for c in ([_HUMAN, _CALL, ret], [_HUMAN, ret, _CALL], [_HUMAN, block, ret])) + b"\n"
    )
    assert _findings(p) == [("LC101", 2, "/1/data/tool_call_id")]


def test_the_cli_reports_file_line_pointer_and_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--format", NAME, str(FIX / "LC101_unpaired.json")])
    out = capsys.readouterr().out
    assert code != 0
    assert "LC101_unpaired.json:4: /2/data/tool_call_id LC101" in out


def test_standard_input_is_read_as_format_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-` has no suffix: a JSON array on stdin is one conversation, lines are one each."""
    import io  # function-level: only this test fakes standard input

    data = (FIX / "LC101_unpaired.json").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert main(["validate", "--format", NAME, "-"]) == 1
    assert "-:4: /2/data/tool_call_id LC101" in capsys.readouterr().out
    lines = (FIX / "LC005_tool_calls.jsonl").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(lines)))
    assert main(["validate", "--format", NAME, "-"]) == 1
    assert "-:2: /1/data/tool_calls/0 LC005" in capsys.readouterr().out


def test_rules_cite_langchain_core() -> None:
    own = [info for info in get_format(NAME).rules if info.id.startswith(("LC0", "LC1"))]
    assert own and all("messages/" in info.section or "content.py" in info.section for info in own)


def test_detection_claims_only_unambiguous_lists(tmp_path: Path) -> None:
    assert isinstance(detect_format(FIX / "valid_conversation.json"), LangChainFormat)
    assert isinstance(detect_format(FIX / "valid_dumpd.jsonl"), LangChainFormat)
    assert not LangChainFormat().detect(_write(tmp_path, [_HUMAN, {"type": "human"}]))
    assert not LangChainFormat().detect(_write(tmp_path, [_HUMAN, {"type": "bot", "data": {}}]))
    assert not LangChainFormat().detect(_write(tmp_path, []))
    assert not LangChainFormat().detect(_write(tmp_path, [{"role": "user", "content": "hi"}]))
    assert not LangChainFormat().detect(_write(tmp_path, [{"kind": "request", "parts": []}]))
    assert not LangChainFormat().detect(_write(tmp_path, [_HUMAN], name="m.txt"))
    assert not LangChainFormat().detect(_write(tmp_path, [{"type": ["human"], "data": {}}], name="m.jsonl"))
