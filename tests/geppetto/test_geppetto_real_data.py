"""Issue 17, geppetto: geppetto ignores `version`; a value other than 1 is a warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.api import validate

TURN = "version: {v}\nblocks:\n  - kind: user\n    role: user\n    payload:\n      text: hi\n"


@pytest.mark.parametrize("v", ["2", "0", "'1'", "two", "null", "[1]"])
def test_version_other_than_1_is_a_warning(v: str, tmp_path: Path) -> None:
    src = tmp_path / "t.yaml"
    src.write_text(TURN.format(v=v))
    findings = validate([src], fmt="geppetto").findings
    assert [f for f in findings if f.severity == "error"] == []
    assert [(f.rule, f.severity, f.pointer) for f in findings] == [("GE012", "warning", "/version")]


def test_version_1_is_silent(tmp_path: Path) -> None:
    src = tmp_path / "t.yaml"
    src.write_text(TURN.format(v="1"))
    assert validate([src], fmt="geppetto").findings == []


CUT = """\
blocks:
  - kind: user
    role: user
    payload: {text: hi}
  - kind: llm_text
    role: assistant
    payload: {text: "cut"}
    metadata:
      geppetto.inference_result@v1: {provider: gemini, model: gemini-2.5-flash, %s}
"""


@pytest.mark.parametrize("result", ["finish_class: max_tokens", "finish_class: completed, truncated: true"])
def test_cut_off_output_is_reported(result: str, tmp_path: Path) -> None:
    from conformance.convert import convert  # the conversion engine, only for this test

    src = tmp_path / "t.yaml"
    src.write_text(CUT % result)
    lossy = convert("geppetto", "canonical", src, tmp_path / "c.jsonl")
    assert [(f.line, f.pointer) for f in lossy if "cut off" in f.message] == [(5, "/blocks/1")]


def test_completed_output_is_not_reported_as_cut(tmp_path: Path) -> None:
    from conformance.convert import convert  # the conversion engine, only for this test

    src = tmp_path / "t.yaml"
    src.write_text(CUT % "finish_class: completed")
    assert not [f for f in convert("geppetto", "canonical", src, tmp_path / "c.jsonl") if "cut off" in f.message]


DATA = "blocks:\n  - kind: user\n    role: user\n    payload: {text: hi}\ndata:\n  %s\n"


@pytest.mark.parametrize(
    ("data", "pointer"),
    [
        (
            "geppetto.tool_config@v1: {enabled: true, tool_choice: auto, max_parallel_tools: 3, execution_timeout: 2s}",
            None,
        ),
        ("geppetto.tool_config@v1: {enabled: 'yes'}", "/data/geppetto.tool_config@v1/enabled"),
        ("geppetto.tool_config@v1: {max_parallel_tools: -1}", "/data/geppetto.tool_config@v1/max_parallel_tools"),
        (
            "geppetto.tool_config@v1: {execution_timeout: two seconds}",
            "/data/geppetto.tool_config@v1/execution_timeout",
        ),
        (
            "geppetto.structured_output_config@v1: {mode: json_schema, name: p, schema: {type: object}, strict: true}",
            None,
        ),
        ("geppetto.structured_output_config@v1: {schema: [1]}", "/data/geppetto.structured_output_config@v1/schema"),
        ("geppetto.structured_output_config@v1: {strict: 1}", "/data/geppetto.structured_output_config@v1/strict"),
    ],
)
def test_tool_and_structured_output_config_types(data: str, pointer: str | None, tmp_path: Path) -> None:
    src = tmp_path / "t.yaml"
    src.write_text(DATA % data)
    errors = [(f.rule, f.pointer) for f in validate([src], fmt="geppetto").findings if f.severity == "error"]
    assert errors == ([] if pointer is None else [("GE020", pointer)])


# -- field-level constraints enforced only through the schema rule (GE020) ---------------

FIELDS = """\
blocks:
  - kind: user
    role: {role}
    payload:
      text: hi
      images: [{image}]
  - kind: llm_text
    role: assistant
    payload: {{text: ok}}
    metadata:
      geppetto.inference_result@v1: {{provider: p, model: m, finish_class: {finish}}}
"""
GOOD = {"role": "user", "image": "{media_type: image/png, url: 'https://example.com/a.png'}", "finish": "completed"}


@pytest.mark.parametrize(
    ("field", "value", "pointer"),
    [
        ("role", "wizard", "/blocks/0/role"),
        ("finish", "done", "/blocks/1/metadata/geppetto.inference_result@v1/finish_class"),
        ("image", "{media_type: image/png}", "/blocks/0/payload/images/0"),
    ],
)
def test_schema_only_field_constraints(field: str, value: str, pointer: str, tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(FIELDS.format(**GOOD))
    assert [f for f in validate([good], fmt="geppetto").findings if f.severity == "error"] == []
    bad = tmp_path / "bad.yaml"
    bad.write_text(FIELDS.format(**{**GOOD, field: value}))
    errors = [f for f in validate([bad], fmt="geppetto").findings if f.severity == "error"]
    assert errors and all(f.rule in ("GE020", "GE101") for f in errors)
    assert any(f.pointer.startswith(pointer) for f in errors), [f.pointer for f in errors]
