"""openai-messages validation: planted defects are found where they are, clean files
pass, and detection claims only unmistakable Chat messages (issue 28)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.api import validate
from conformance.cli import main
from conformance.formats import detect_format, get_format
from conformance.formats.openai_messages import OpenAIMessagesFormat

FIX = Path(__file__).parent / "fixtures"
NAME = "openai-messages"


def _findings(path: Path) -> list[tuple[str, int | None, str]]:
    return [(f.rule, f.line, f.pointer) for f in validate([path], fmt=NAME).findings]


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("OM101_unpaired.json", ("OM101", 7, "/3/tool_call_id")),
        ("OM006_arguments.jsonl", ("OM006", 2, "/tool_calls/0/function/arguments")),
        ("OM002_role.jsonl", ("OM002", 2, "/role")),
        ("OM004_part.json", ("OM004", 3, "/1/content/1/type")),
        ("OM003_content.jsonl", ("OM003", 2, "/messages/1")),
    ],
)
def test_planted_defect_is_found_where_it_is(fixture: str, expected: tuple[str, int, str]) -> None:
    assert _findings(FIX / fixture) == [expected]


@pytest.mark.parametrize("fixture", ["valid_tools.json", "valid_conversations.jsonl"])
def test_documented_shapes_pass(fixture: str) -> None:
    assert _findings(FIX / fixture) == []


def _write(tmp_path: Path, messages: list[object], name: str = "m.json") -> Path:
    p = tmp_path / name
    p.write_bytes(orjson.dumps(messages))
    return p


_CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        (["hello"], ("OM001", "/0")),
        ([{"role": "user", "content": 3}], ("OM005", "/0/content")),
        ([{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}], ("OM005", "/0/content/0/image_url")),
        (
            [{"role": "user", "content": [{"type": "input_audio", "input_audio": {"data": "AA==", "format": "ogg"}}]}],
            ("OM005", "/0/content/0/input_audio"),
        ),
        ([{"role": "system", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}], ("OM004", "/0/content/0/type")),
        ([{"role": "assistant", "content": None}], ("OM003", "/0/content")),
        ([{"role": "assistant", "content": None, "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}], ("OM007", "/0/tool_calls/0/id")),
        ([{"role": "assistant", "content": None, "tool_calls": [{**_CALL, "function": {"arguments": "{}"}}]}], ("OM007", "/0/tool_calls/0/function")),
        ([{"role": "assistant", "content": None, "tool_calls": [{**_CALL, "function": {"name": "f", "arguments": "{"}}]}], ("OM006", "/0/tool_calls/0/function/arguments")),
        ([{"role": "tool", "content": "x"}], ("OM008", "/0")),
        (
            [{"role": "assistant", "content": None, "tool_calls": [_CALL]}, {"role": "tool", "tool_call_id": "call_1", "content": "a"}, {"role": "tool", "tool_call_id": "call_1", "content": "b"}],
            ("OM102", "/2/tool_call_id"),
        ),
        (
            [{"role": "assistant", "content": None, "tool_calls": [_CALL, _CALL]}, {"role": "tool", "tool_call_id": "call_1", "content": "a"}],
            ("OM103", "/0/tool_calls/1/id"),
        ),
        ([{"role": "tool", "tool_call_id": "call_1", "content": "a"}], ("OM101", "/0/tool_call_id")),
    ],
)  # fmt: skip
def test_each_rule_fires_on_its_defect(tmp_path: Path, messages: list[object], expected: tuple[str, str]) -> None:
    found = [(f.rule, f.pointer) for f in validate([_write(tmp_path, messages)], fmt=NAME).findings]
    assert found == [expected]


def test_tool_pairing_is_scoped_to_a_conversation(tmp_path: Path) -> None:
    call = {
        "messages": [
            {"role": "assistant", "content": None, "tool_calls": [_CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": "a"},
        ]
    }
    answer_elsewhere = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "tool", "tool_call_id": "call_1", "content": "a"}]
    }
    p = tmp_path / "c.jsonl"
    p.write_bytes(orjson.dumps(call) + b"\n" + orjson.dumps(answer_elsewhere) + b"\n")
    assert _findings(p) == [("OM101", 2, "/messages/1/tool_call_id")]


def test_every_rule_cites_the_chat_docs() -> None:
    for info in get_format(NAME).rules:
        if info.id.startswith("OM0") or info.id.startswith("OM1"):
            assert info.section.startswith(("Chat §", "FC §")), info


def test_detection_claims_unmistakable_chat_messages_only(tmp_path: Path) -> None:
    assert isinstance(detect_format(FIX / "valid_tools.json"), OpenAIMessagesFormat)
    # `{"messages": [...]}` lines: ours when the first message is unmistakably Chat (asked
    # before gpt2099); a gpt2099 context window (array contents) stays gpt2099's
    assert isinstance(detect_format(FIX / "valid_conversations.jsonl"), OpenAIMessagesFormat)
    window = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "options": {}}
    assert detect_format(_write(tmp_path, window, "window.json")).name == "gpt2099"  # type: ignore[arg-type,union-attr]
    tools = {"messages": [{"role": "user", "content": "hi"}], "tools": []}
    assert isinstance(detect_format(_write(tmp_path, tools, "ft.jsonl")), OpenAIMessagesFormat)  # type: ignore[arg-type]
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}  # a provider request body
    assert not OpenAIMessagesFormat().detect(_write(tmp_path, request, "req.json"))  # type: ignore[arg-type]
    assert isinstance(detect_format(FIX / "OM006_arguments.jsonl"), OpenAIMessagesFormat)
    # contents that are arrays of parts could be a broken canonical file: not claimed
    parts = _write(tmp_path, [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], "parts.json")
    assert not isinstance(detect_format(parts), OpenAIMessagesFormat)
    canonical = {"id": "01", "session_id": "s", "role": "user", "content": "hi", "created_at": "x", "schema_version": 1}
    assert detect_format(_write(tmp_path, [canonical], "canon.json")).name == "canonical"  # type: ignore[union-attr]
    assert not OpenAIMessagesFormat().detect(_write(tmp_path, {"model": "gpt-4o"}, "cfg.json"))  # type: ignore[arg-type]


def test_cli_reports_located_findings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--format", NAME, str(FIX / "OM101_unpaired.json")]) == 1
    out = capsys.readouterr().out
    assert f"{FIX / 'OM101_unpaired.json'}:7: /3/tool_call_id OM101 error:" in out


def test_big_integers_in_arguments_are_json(tmp_path: Path) -> None:
    args = '{"n": 123456789012345678901234567890}'  # valid JSON; past 64 bits
    call = {**_CALL, "function": {"name": "f", "arguments": args}}
    p = _write(tmp_path, [{"role": "assistant", "content": None, "tool_calls": [call]}])
    assert _findings(p) == []


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-9, 9) | st.sampled_from(["", "x", "user", "assistant", "tool", "text", "image_url", "function", "call_1", "{}"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["role", "content", "type", "text", "tool_calls", "tool_call_id", "id", "function", "name", "arguments", "image_url", "url", "input_audio", "messages"]), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_JSON, max_size=4))
def test_any_json_is_reported_never_crashes(tmp_path: Path, messages: list[object]) -> None:
    report = validate([_write(tmp_path, messages)], fmt=NAME)
    assert report.problems == []
    assert all(f.rule.startswith(("OM", "TS0")) for f in report.findings)
