"""ai-sdk validation: planted defects are found where they are, the documented shapes
pass, detection claims only unambiguous UIMessage arrays, and hostile input gets one-line
located findings, never a traceback. Oracle: the AI SDK's UIMessage reference and
`validateUIMessages` (test_ai_sdk_oracle.py runs the SDK itself on these fixtures)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from conformance.api import validate
from conformance.formats import all_formats, detect_format, get_format
from conformance.formats.ai_sdk import AISDKFormat

FIX = Path(__file__).parent / "fixtures"
TESTS = Path(__file__).parent.parent
NAME = "ai-sdk"


def _findings(path: Path, fmt: str | None = NAME) -> list[tuple[str, int | None, str]]:
    return [(f.rule, f.line, f.pointer) for f in validate([path], fmt=fmt).findings]


@pytest.mark.parametrize(
    ("fixture", "expected"),
    [
        ("AS001_empty.json", [("AS001", 1, "")]),
        ("AS001_shape.json", [("AS001", 1, "/0/parts")]),
        ("AS002_id.json", [("AS002", 1, "/0/id")]),
        ("AS002_role.json", [("AS002", 1, "/0/role")]),
        ("AS003_empty_parts.json", [("AS003", 1, "/0/parts")]),
        ("AS004_part_type.json", [("AS004", 1, "/0/parts/0")]),
        ("AS005_unknown_part.json", [("AS005", 2, "/1/parts/0/type")]),
        ("AS006_field.json", [("AS006", 1, "/0/parts/0")]),
        ("AS006_state_null.json", [("AS006", 1, "/0/parts/0/state")]),
        ("AS006_data.json", [("AS006", 1, "/0/parts/0")]),
        ("AS007_state.json", [("AS007", 1, "/0/parts/0/state")]),
        ("AS007_output_before_result.json", [("AS007", 1, "/0/parts/0/output")]),
        ("AS007_no_error_text.json", [("AS007", 1, "/0/parts/0")]),
        ("AS007_no_output.jsonl", [("AS007", 2, "/0/parts/0")]),
        ("AS010_extra.json", [("AS010", 1, "/0/createdAt"), ("AS010", 1, "/0/parts/0/annotations")]),
        ("AS101_duplicate_id.json", [("AS101", 2, "/1/id")]),
        ("AS102_unanswered.json", [("AS102", 1, "/1/content/0/toolCallId")]),
        ("AS201_role.json", [("AS201", 1, "/1/role")]),
        ("AS202_content.json", [("AS202", 1, "/0/content")]),
        ("AS203_part.json", [("AS203", 1, "/0/content/0/type")]),
        ("AS204_unknown.json", [("AS204", 1, "/1/content/0/type")]),
        ("AS205_field.json", [("AS205", 1, "/1/content/0")]),
        ("AS205_output.json", [("AS205", 1, "/2/content/0/output")]),
    ],
)
def test_planted_defect_is_found_where_it_is(fixture: str, expected: list[tuple[str, int, str]]) -> None:
    assert _findings(FIX / fixture) == expected


@pytest.mark.parametrize(
    "fixture", ["valid_chat.json", "valid_chats.jsonl", "valid_model_messages.json", "valid_model_messages.jsonl"]
)
def test_documented_shapes_pass(fixture: str) -> None:
    """valid_chat.json holds every part type and every tool state the UIMessage reference
    documents (and output-denied, dynamic-tool); valid_model_messages.json every
    ModelMessage part type and every tool result output type."""
    assert _findings(FIX / fixture) == []
    assert _findings(FIX / fixture, None) == []  # detected as ai-sdk


def test_every_part_type_and_tool_state_is_in_the_valid_fixture() -> None:
    from conformance.formats.ai_sdk.rules import FIXED_PARTS, TOOL_STATES

    parts = [p for m in orjson.loads((FIX / "valid_chat.json").read_bytes()) for p in m["parts"]]
    types = {p["type"] for p in parts}
    assert types >= FIXED_PARTS
    assert any(t.startswith("tool-") for t in types) and any(t.startswith("data-") for t in types)
    assert {p["state"] for p in parts if p["type"].startswith("tool-") or p["type"] == "dynamic-tool"} == set(
        TOOL_STATES
    )


def _write(tmp_path: Path, value: object, name: str = "m.json") -> Path:
    p = tmp_path / name
    p.write_bytes(orjson.dumps(value))
    return p


_TOOL = {"type": "tool-f", "toolCallId": "c", "state": "input-available", "input": {}}


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ({"id": "m", "role": "user", "parts": []}, ("AS001", "")),
        ([{"id": "m", "role": "user"}], ("AS001", "/0")),
        ([{"id": "m", "role": "user", "parts": ["hi"]}], ("AS001", "/0/parts/0")),
        ([{"role": "user", "parts": [{"type": "text", "text": "x"}]}], ("AS002", "/0")),
        ([{"id": "m", "role": "system", "parts": []}], ("AS003", "/0/parts")),
        ([{"id": "m", "role": "user", "parts": [{"type": 3}]}], ("AS004", "/0/parts/0/type")),
        ([{"id": "m", "role": "user", "parts": [{"type": "text", "text": 1}]}], ("AS006", "/0/parts/0/text")),
        ([{"id": "m", "role": "assistant", "parts": [{"type": "source-url", "sourceId": "s", "url": "u", "title": None}]}],
         ("AS006", "/0/parts/0/title")),
        ([{"id": "m", "role": "assistant", "parts": [{"type": "reasoning", "text": "t", "providerMetadata": {"a": 1}}]}],
         ("AS006", "/0/parts/0/providerMetadata")),
        ([{"id": "m", "role": "assistant", "parts": [{"type": "dynamic-tool", "toolCallId": "c", "state": "input-available", "input": {}}]}],
         ("AS006", "/0/parts/0")),
        ([{"id": "m", "role": "assistant", "parts": [{**_TOOL, "toolCallId": 5}]}], ("AS006", "/0/parts/0/toolCallId")),
        ([{"id": "m", "role": "assistant", "parts": [{**_TOOL, "state": "output-available", "output": 1, "errorText": None}]}],
         ("AS007", "/0/parts/0/errorText")),
        ([{"id": "m", "role": "assistant", "parts": [{**_TOOL, "state": "approval-requested"}]}], ("AS007", "/0/parts/0")),
        ([{"id": "m", "role": "assistant", "parts": [{**_TOOL, "state": "output-denied", "approval": {"id": "a", "approved": True}}]}],
         ("AS007", "/0/parts/0/approval")),
        ([{"id": "m", "role": "assistant", "parts": [{"type": "step-start", "at": 1}]}], ("AS010", "/0/parts/0/at")),
    ],
)  # fmt: skip
def test_each_rule_fires_on_its_defect(tmp_path: Path, messages: object, expected: tuple[str, str]) -> None:
    got = [(f.rule, f.pointer) for f in validate([_write(tmp_path, messages)], fmt=NAME).findings]
    assert got == [expected]


_CALL = {"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {}}


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([{"role": "user", "content": 3}], ("AS202", "/0/content")),
        ([{"role": "tool", "content": "done"}], ("AS202", "/0/content")),
        ([{"role": "user", "content": [{"text": "x"}]}], ("AS203", "/0/content/0")),
        ([{"role": "tool", "content": [_CALL]}], ("AS203", "/0/content/0/type")),
        ([{"role": "user", "content": [{"type": "image"}]}], ("AS205", "/0/content/0")),
        ([{"role": "user", "content": [{"type": "file", "data": "x"}]}], ("AS205", "/0/content/0")),
        ([{"role": "assistant", "content": [{**_CALL, "toolCallId": 1}]}], ("AS205", "/0/content/0/toolCallId")),
        ([{"role": "assistant", "content": [_CALL, {"type": "tool-result", "toolCallId": "c", "toolName": "t",
          "output": {"type": "content", "value": [{"type": "media", "data": "x"}]}}]}],
         ("AS205", "/0/content/1/output/value")),
        ([{"role": "tool", "content": [{"type": "tool-approval-response", "approvalId": "a", "approved": "yes"}]}],
         ("AS205", "/0/content/0/approved")),
        ([{"role": "user", "content": "hi", "providerOptions": {"a": 1}}], ("AS205", "/0/providerOptions")),
        ([{"role": "user", "content": "hi", "id": "m1"}], ("AS010", "/0/id")),
    ],
)  # fmt: skip
def test_each_model_message_rule_fires_on_its_defect(
    tmp_path: Path, messages: object, expected: tuple[str, str]
) -> None:
    got = [(f.rule, f.pointer) for f in validate([_write(tmp_path, messages)], fmt=NAME).findings]
    assert got == [expected]


def test_model_messages_are_detected_only_when_no_chat_reading_fits(tmp_path: Path) -> None:
    fmt = AISDKFormat()
    assert isinstance(detect_format(FIX / "valid_model_messages.json"), AISDKFormat)
    assert isinstance(detect_format(FIX / "valid_model_messages.jsonl"), AISDKFormat)
    assert fmt.detect(_write(tmp_path, [{"role": "user", "content": "x"}, {"role": "assistant", "content": [_CALL]}]))
    # strings and text parts alone are also Chat messages: --format ai-sdk
    assert not fmt.detect(_write(tmp_path, [{"role": "user", "content": [{"type": "text", "text": "x"}]}]))
    # Chat: tool_calls, tool_call_id, a tool message's string content, image_url parts
    chat_call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function"}]}
    assert not fmt.detect(_write(tmp_path, [chat_call, {"role": "tool", "tool_call_id": "c", "content": "4"}]))
    assert not fmt.detect(
        _write(tmp_path, [{"role": "assistant", "content": [_CALL]}, {"role": "tool", "content": "4"}])
    )
    img = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
    assert not fmt.detect(_write(tmp_path, [{"role": "user", "content": [img, {"type": "image", "image": "x"}]}]))
    assert not fmt.detect(_write(tmp_path, [{"role": "user", "content": [{"type": "file", "file": {"file_id": "f"}}]}]))


def test_an_assistant_message_may_have_no_parts_yet(tmp_path: Path) -> None:
    """validateUIMessages asks parts only of system and user messages (an assistant message
    can be stored before its first part arrives)."""
    msgs = [
        {"id": "u", "role": "user", "parts": [{"type": "text", "text": "hi"}]},
        {"id": "a", "role": "assistant", "parts": []},
    ]
    assert _findings(_write(tmp_path, msgs)) == []


def test_rules_cite_the_ai_sdk_docs() -> None:
    for info in get_format(NAME).rules:
        if not info.id.startswith("AS9") and info.id.startswith("AS"):
            assert any(ref in info.section for ref in ("UIM", "VUM", "CMP", "MM ›")), info.id
            assert "\n" not in info.summary


def test_detection_claims_only_unambiguous_conversations(tmp_path: Path) -> None:
    assert isinstance(detect_format(FIX / "valid_chat.json"), AISDKFormat)
    assert isinstance(detect_format(FIX / "valid_chats.jsonl"), AISDKFormat)
    fmt = AISDKFormat()
    ok = {"id": "m", "role": "user", "parts": [{"type": "text", "text": "hi"}]}
    assert fmt.detect(_write(tmp_path, [ok]))
    assert not fmt.detect(_write(tmp_path, []))
    assert not fmt.detect(_write(tmp_path, ok))
    assert not fmt.detect(_write(tmp_path, [{**ok, "id": 1}]))
    assert not fmt.detect(_write(tmp_path, [{**ok, "role": "tool"}]))
    assert not fmt.detect(_write(tmp_path, [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]))
    # OpenTelemetry GenAI ChatMessages: role and parts, text parts with `content`
    assert not fmt.detect(_write(tmp_path, [{"id": "m", "role": "user", "parts": [{"type": "text", "content": "hi"}]}]))
    assert not fmt.detect(_write(tmp_path, [{"id": "m", "role": "user", "parts": [{"type": "tool_call", "id": "c"}]}]))
    assert not fmt.detect(_write(tmp_path, [{"role": "user", "content": "hi"}]))
    assert not fmt.detect(_write(tmp_path, [ok], name="m.txt"))
    assert not fmt.detect(_write(tmp_path, [{"id": ["m"], "role": {}, "parts": [[]]}], name="m.jsonl"))


def _peer_fixtures() -> list[Path]:
    out = []
    for d in [*sorted(TESTS.glob("*_format")), TESTS / "openai_messages"]:
        if d.name != "ai_sdk_format":
            out += sorted(p for p in (d / "fixtures").rglob("*") if p.suffix in (".json", ".jsonl"))
    out += sorted((TESTS / "rules" / "canonical").glob("*.jsonl"))
    return out


def test_no_other_formats_fixture_is_claimed() -> None:
    files = _peer_fixtures()
    assert len(files) > 30
    claimed = [p for p in files if AISDKFormat().detect(p)]
    assert claimed == []


def test_the_ai_sdk_is_detected_before_the_formats_that_could_misread_it() -> None:
    names = [f.name for f in all_formats()]
    assert names.index(NAME) < names.index("otel-genai") < names.index("canonical")
    for f in all_formats():
        if f.name != NAME:
            assert not f.detect(FIX / "valid_chat.json") or names.index(f.name) > names.index(NAME), f.name


@pytest.mark.parametrize(
    "data",
    [
        b'[{"id": "a", "role": "user", "parts": [{"type": "text", "text": "x"}]}',  # cut short
        b"\xff\xfe[]",
        b'[{"id": "a", "role": "user", "parts": [' + b"[" * 5000 + b"]" * 5000 + b"]}]",
        b'{"id": "a", "role": "user", "parts": []}\n[1, "x", null]\n[{"id": "a", "role": "assistant", "parts": [{"type": "tool-x"}]}]\n',
    ],
)
def test_hostile_input_gets_one_line_located_errors_never_a_traceback(tmp_path: Path, data: bytes) -> None:
    src = tmp_path / ("bad.jsonl" if data.count(b"\n") > 1 else "bad.json")
    src.write_bytes(data)
    out = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "validate", "--format", NAME, str(src)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode in (1, 2), out
    assert "Traceback" not in out.stderr + out.stdout
    errors = [ln for ln in out.stdout.splitlines() if " error: " in ln]
    assert errors and all(ln.startswith(f"{src}:") for ln in errors), out.stdout + out.stderr


@pytest.mark.parametrize("fixture", ["valid_chat.json", "valid_chats.jsonl", "AS007_no_output.jsonl"])
def test_standard_input_is_read_as_format_says(fixture: str) -> None:
    """`-` with --format ai-sdk: one JSON document when it parses as one, else JSON Lines,
    with the same findings as the file (pointers and lines alike)."""
    data = (FIX / fixture).read_bytes()
    out = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "validate", "--format", NAME, "-"],
        input=data, capture_output=True, timeout=120,
    )  # fmt: skip
    want = [(f.rule, f.line, f.pointer) for f in validate([FIX / fixture], fmt=NAME).findings]
    got = [ln for ln in out.stdout.decode().splitlines() if " error: " in ln or " warning: " in ln]
    assert len(got) == len(want) and all(f"{p} {r} " in ln for ln, (r, _, p) in zip(got, want, strict=True))
    assert out.returncode == (1 if want else 0)
