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
