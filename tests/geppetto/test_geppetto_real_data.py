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
