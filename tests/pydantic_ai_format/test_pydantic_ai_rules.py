"""pydantic-ai validation: planted defects are found where they are, clean histories
pass, and detection claims only unambiguous ModelMessage arrays (issue 28)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from conformance.api import validate
from conformance.cli import main
from conformance.formats import detect_format, get_format
from conformance.formats.pydantic_ai import PydanticAIFormat

FIX = Path(__file__).parent / "fixtures"
NAME = "pydantic-ai"


def _findings(path: Path, fmt: str | None = NAME) -> list[tuple[str, int | None, str]]:
    return [(f.rule, f.line, f.pointer) for f in validate([path], fmt=fmt).findings]


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("PA101_unpaired.json", ("PA101", 4, "/2/parts/0/tool_call_id")),
        ("PA006_args.jsonl", ("PA006", 2, "/1/parts/0/args")),
        ("PA002_kind.json", ("PA002", 3, "/1/kind")),
        ("PA003_part_kind.json", ("PA003", 3, "/1/parts/1/part_kind")),
        ("PA004_required.json", ("PA004", 3, "/1/parts/0")),
    ],
)
def test_planted_defect_is_found_where_it_is(fixture: str, expected: tuple[str, int, str]) -> None:
    assert _findings(FIX / fixture) == [expected]


@pytest.mark.parametrize("fixture", ["valid_history.json", "valid_retry.jsonl"])
def test_documented_shapes_pass(fixture: str) -> None:
    assert _findings(FIX / fixture) == []


def _write(tmp_path: Path, messages: object, name: str = "m.json") -> Path:
    p = tmp_path / name
    p.write_bytes(orjson.dumps(messages))
    return p


_USER = {"parts": [{"content": "hi", "part_kind": "user-prompt"}], "kind": "request"}
_CALL = {
    "parts": [{"tool_name": "f", "args": None, "tool_call_id": "c1", "part_kind": "tool-call"}],
    "kind": "response",
}


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ({"kind": "request", "parts": []}, ("PA001", "")),
        ([], ("PA001", "")),
        (["hello"], ("PA001", "/0")),
        ([{"kind": "request", "parts": {}}], ("PA001", "/0/parts")),
        ([{"kind": "request", "parts": ["x"]}], ("PA001", "/0/parts/0")),
        ([{"parts": []}], ("PA002", "/0")),
        ([{"kind": ["request"], "parts": []}], ("PA002", "/0/kind")),
        ([{"kind": "request", "parts": [{"part_kind": {}}]}], ("PA003", "/0/parts/0/part_kind")),
        ([{"kind": "request", "parts": [{"content": [{"kind": []}], "part_kind": "user-prompt"}]}],
         ("PA005", "/0/parts/0/content/0/kind")),
        ([{"kind": "request", "parts": [{"content": "x"}]}], ("PA003", "/0/parts/0")),
        ([{"kind": "request", "parts": [{"content": 3, "part_kind": "system-prompt"}]}], ("PA004", "/0/parts/0/content")),
        ([_USER, _CALL, {"kind": "request", "parts": [{"tool_name": "f", "tool_call_id": "c1", "part_kind": "tool-return"}]}],
         ("PA004", "/2/parts/0")),
        ([{"kind": "response", "parts": [{"part_kind": "thinking", "signature": "s"}]}], ("PA004", "/0/parts/0")),
        ([{"kind": "request", "parts": [{"content": [{"kind": "sound"}], "part_kind": "user-prompt"}]}],
         ("PA005", "/0/parts/0/content/0/kind")),
        ([{"kind": "request", "parts": [{"content": [{"kind": "binary", "data": "AA=="}], "part_kind": "user-prompt"}]}],
         ("PA005", "/0/parts/0/content/0")),
        ([{"kind": "request", "parts": [{"content": [{"kind": "image-url"}], "part_kind": "user-prompt"}]}],
         ("PA005", "/0/parts/0/content/0")),
        ([_USER, {"kind": "response", "parts": [{"tool_name": "f", "args": "{", "tool_call_id": "c", "part_kind": "tool-call"}]}],
         ("PA006", "/1/parts/0/args")),
        ([_USER, {"kind": "response", "parts": [{"tool_name": "f", "args": 7, "tool_call_id": "c", "part_kind": "tool-call"}]}],
         ("PA006", "/1/parts/0/args")),
    ],
)  # fmt: skip
def test_each_rule_fires_on_its_defect(tmp_path: Path, messages: object, expected: tuple[str, str]) -> None:
    """PA001 PA002 PA003 PA004 PA005 PA006: one defect, one finding, where it is."""
    assert [(r, p) for r, _, p in _findings(_write(tmp_path, messages))] == [expected]


def test_a_tool_return_answers_only_an_earlier_call_of_its_own_history(tmp_path: Path) -> None:
    """PA101: pairing is scoped to one history (one .jsonl line), and a return before its call is unpaired."""
    ret = {"kind": "request", "parts": [{"tool_name": "f", "content": "ok", "tool_call_id": "c1", "part_kind": "tool-return"}]}  # fmt: skip
    p = tmp_path / "h.jsonl"
    p.write_bytes(orjson.dumps([_USER, _CALL, ret]) + b"\n" + orjson.dumps([_USER, ret, _CALL]) + b"\n")
    assert _findings(p) == [("PA101", 2, "/1/parts/0/tool_call_id")]


def test_the_cli_reports_file_line_pointer_and_rule(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--format", NAME, str(FIX / "PA101_unpaired.json")])
    out = capsys.readouterr().out
    assert code != 0
    assert "PA101_unpaired.json:4: /2/parts/0/tool_call_id PA101" in out


def test_rules_cite_pydantic_ai() -> None:
    fmt = get_format(NAME)
    own = [info for info in fmt.rules if info.id.startswith("PA0") or info.id.startswith("PA1")]
    assert own and all("messages.py" in info.section for info in own)


def test_detection_claims_only_unambiguous_histories(tmp_path: Path) -> None:
    assert isinstance(detect_format(FIX / "valid_history.json"), PydanticAIFormat)
    assert isinstance(detect_format(FIX / "valid_retry.jsonl"), PydanticAIFormat)
    # one element without `parts`, or with another kind: not claimed (give --format)
    assert not PydanticAIFormat().detect(_write(tmp_path, [_USER, {"kind": "response"}]))
    assert not PydanticAIFormat().detect(_write(tmp_path, [_USER, {"kind": "reply", "parts": []}]))
    assert not PydanticAIFormat().detect(_write(tmp_path, []))
    assert not PydanticAIFormat().detect(_write(tmp_path, [{"role": "user", "content": "hi"}]))
    assert not PydanticAIFormat().detect(_write(tmp_path, {"messages": [_USER]}))
    assert not PydanticAIFormat().detect(_write(tmp_path, [_USER], name="m.txt"))
    # a Chat file is still openai-messages'
    assert detect_format(_write(tmp_path, [{"role": "user", "content": "hi"}])) is not None
    assert not isinstance(detect_format(_write(tmp_path, [{"role": "user", "content": "hi"}])), PydanticAIFormat)


def test_detection_survives_odd_values(tmp_path: Path) -> None:
    assert not PydanticAIFormat().detect(_write(tmp_path, [{"kind": ["request"], "parts": []}]))
    assert not PydanticAIFormat().detect(_write(tmp_path, [{"kind": {}, "parts": []}], name="m.jsonl"))


def test_standard_input_is_read_as_format_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-` has no suffix: JSON Lines on stdin (one history per line) are read as lines, not refused as one document."""
    import io  # function-level: only this test fakes standard input

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO((FIX / "PA006_args.jsonl").read_bytes())))
    assert main(["validate", "--format", NAME, "-"]) == 1
    assert "-:2: /1/parts/0/args PA006" in capsys.readouterr().out


@pytest.mark.parametrize("args", ["", None, {}])
def test_empty_args_are_no_arguments_as_the_library_reads_them(tmp_path: Path, args: object) -> None:
    """`ToolCallPart.args_as_dict` reads any falsy `args` as `{}`, and a streamed call with no
    argument fragments keeps `""`. Failed before: `""` was PA006 and converted to a tool_use
    whose input was null (the pydantic-ai bridges then failed TC101/TC103/TC604 on real
    Anthropic streams of argument-less calls)."""
    from pydantic_ai.messages import ToolCallPart

    from conformance.formats.pydantic_ai.checker import args_object

    assert ToolCallPart("f", args=args).args_as_dict() == {}  # type: ignore[arg-type]  # the library's own reading
    assert args_object(args) == {}
    history = [_USER, {"kind": "response", "parts": [{"tool_name": "f", "args": args, "tool_call_id": "c", "part_kind": "tool-call"}]}]  # fmt: skip
    assert [r for r, _, _ in _findings(_write(tmp_path, history))] == []
    assert args_object(" ") is None and args_object("[]") is None  # no object: PA006 as before
