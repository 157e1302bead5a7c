"""Issue 29: the column of a JSON parse error (TS001 and the reader's other located
findings) is part of the location in every output, not only of the message: text
`file:line:col`, GitHub `col=`, SARIF `region.startColumn`, JSON `column`, and `--jobs`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conformance.cli import main

# `{"a": 1, "b": }`: the value after "b" is missing; the 15th character is the `}`
BAD = '{"ok": true}\n{"a": 1, "b": }\n'


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, Path]:
    path = tmp_path / "bad.jsonl"
    path.write_text(BAD, encoding="utf-8")
    main(["validate", str(path), "--select", "TS001", "--color", "never", *args])
    return capsys.readouterr().out, path


def test_text_location_is_file_line_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, path = _run(tmp_path, capsys)
    assert f"{path}:2:15: TS001 error: expected value (column 15)" in out.splitlines()


def test_text_location_is_the_same_with_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, path = _run(tmp_path, capsys, "--jobs", "2")
    assert f"{path}:2:15: TS001 error: expected value (column 15)" in out.splitlines()


def test_github_annotation_has_col(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = _run(tmp_path, capsys, "-o", "github")
    [line] = [x for x in out.splitlines() if x.startswith("::error ")]
    assert re.search(r",line=2,col=15,", line), line


def test_sarif_region_has_start_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = _run(tmp_path, capsys, "-o", "sarif")
    [result] = json.loads(out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 15}


def test_json_finding_has_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = _run(tmp_path, capsys, "-o", "json")
    [finding] = json.loads(out)["violations"]
    assert (finding["line"], finding["column"]) == (2, 15)


def test_a_finding_without_a_column_keeps_file_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "blank.jsonl"
    path.write_text('{"ok": true}\n\n', encoding="utf-8")
    main(["validate", str(path), "--select", "TS0", "--color", "never"])
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith(str(path))]
    assert lines and all(re.match(re.escape(str(path)) + r":\d+: ", x) for x in lines), lines


def test_yaml_and_nuon_parse_errors_carry_their_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a flow sequence never closed: PyYAML marks line 4, column 1 (the end of the input)
    yml = tmp_path / "turn.yaml"
    yml.write_text("turn:\n  blocks:\n    - kind: [\n", encoding="utf-8")
    # NUON: the value after `b:` is missing; the `}` is the 12th character
    nuon = tmp_path / "thread.nuon"
    nuon.write_text("[{a: 1, b: }\n", encoding="utf-8")
    main(["validate", str(yml), "--format", "geppetto", "--color", "never"])
    assert f"{yml}:4:1: GE001 error: " in capsys.readouterr().out
    main(["validate", str(nuon), "--color", "never"])
    assert f"{nuon}:1:12: GP001 error: " in capsys.readouterr().out
