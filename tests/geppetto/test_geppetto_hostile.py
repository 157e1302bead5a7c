"""Issue 9, geppetto: a `!!binary` scalar is a string to the validator, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.api import validate
from conformance.cli import main

TURN = """\
blocks:
  - kind: user
    role: user
    payload:
      text: {text}
"""


@pytest.mark.parametrize("text", ["!!binary aGVsbG8=", "!!binary |\n        aGVs\n        bG8=", "!!binary ''"])
def test_binary_scalars_validate_and_convert(text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "turn.yaml"
    src.write_text(TURN.format(text=text))
    report = validate([src], fmt="geppetto")
    assert [f for f in report.findings if f.severity == "error"] == []
    assert main(["convert", "--from", "geppetto", "--to", "canonical", str(src), str(tmp_path / "o.jsonl")]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err


def test_binary_where_an_object_belongs_is_a_located_error(tmp_path: Path) -> None:
    src = tmp_path / "turn.yaml"
    src.write_text("blocks:\n  - kind: user\n    role: user\n    payload: !!binary aGVsbG8=\n")
    errors = [f for f in validate([src], fmt="geppetto").findings if f.severity == "error"]
    assert errors and errors[0].line is not None and errors[0].pointer.startswith("/blocks/0")
