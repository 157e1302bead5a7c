"""Findings are listed by path, line and column in every output (issue 39, item 1), as ruff
and every linter list them, whatever order the readers found them in: a folder's files
before its subfolders' in the walk, a gpt2099 thread resolved from its head back, geppetto
session rules after the turns they read, run-wide rules at the end."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.core.findings import Finding, Severity, in_order, location_key

HERE = Path(__file__).parent
CANONICAL = HERE / "rules" / "canonical"
GPT2099 = HERE / "gpt2099" / "fixtures"
GEPPETTO = HERE / "geppetto" / "fixtures"


def _corpus(root: Path) -> Path:
    """A folder whose readers find findings out of order: a file beside a subfolder (the
    walk reads the file first, but `a/` sorts before `b.jsonl`), gpt2099 frames of several
    threads (resolved from their heads back) and geppetto turns of several sessions."""
    (root / "a").mkdir()
    (root / "a" / "x.jsonl").write_bytes((CANONICAL / "TS020.jsonl").read_bytes())
    (root / "b.jsonl").write_bytes((CANONICAL / "TS203.jsonl").read_bytes())
    frames = b"".join(
        (GPT2099 / name).read_bytes() for name in sorted(p.name for p in GPT2099.glob("GP*.jsonl")) if name[2] in "1234"
    )
    (root / "frames.jsonl").write_bytes(frames)
    turns = b"".join((GEPPETTO / name).read_bytes() for name in sorted(p.name for p in GEPPETTO.glob("GE3*_bad.yaml")))
    (root / "turns.yaml").write_bytes(turns)
    return root


Key = tuple[tuple[str, ...], int, int]


def _key(path: str, line: int | None, column: int | None) -> Key:
    return location_key(Finding(path, line, "", "", Severity.ERROR, "", column))


def _text_keys(out: str) -> list[Key]:
    keys = []
    for line in out.splitlines():
        m = re.match(r"^(.+?):(\d+)(?::(\d+))?: ", line)
        if m:
            keys.append(_key(m[1], int(m[2]), int(m[3]) if m[3] else None))
    return keys


def _keys(output: str, out: str) -> list[Key]:
    if output == "text":
        return _text_keys(out)
    if output == "json":
        return [_key(v["path"], v["line"], v.get("column")) for v in json.loads(out)["violations"]]
    if output == "sarif":
        results = json.loads(out)["runs"][0]["results"]
        return [
            _key(
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                r["locations"][0]["physicalLocation"].get("region", {}).get("startLine"),
                r["locations"][0]["physicalLocation"].get("region", {}).get("startColumn"),
            )
            for r in results
            if r["ruleId"] != "TS013"
        ]
    if output == "github":
        keys = []
        for line in out.splitlines():
            m = re.match(r"^::(?:error|warning) file=([^,]+)(?:,line=(\d+))?(?:,col=(\d+))?", line)
            if m and "title=TS013" not in line:
                keys.append(_key(m[1], int(m[2]) if m[2] else None, int(m[3]) if m[3] else None))
        return keys
    assert output == "junit"
    keys = []
    for case in ET.fromstring(out).iter("testcase"):
        for node in (*case.iter("failure"), *case.iter("system-out")):
            keys += _text_keys(node.text or "")
        keys.append(_key(case.get("name") or "", None, None))
    return keys


def test_the_corpus_is_read_out_of_order(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The premise: the library streams findings in reading order, which is not sorted."""
    from conformance import validate

    found = validate([_corpus(tmp_path)]).findings
    keys = [location_key(f) for f in found]
    assert keys != sorted(keys)


@pytest.mark.parametrize("output", ["text", "json", "sarif", "github", "junit"])
def test_validate_lists_findings_by_path_line_column(
    output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.chdir(_corpus(tmp_path))
    main(["validate", ".", "-o", output, "-j", "1"])
    keys = _keys(output, capsys.readouterr().out)
    assert len(keys) >= 10
    if output == "junit":  # the cases by path; inside each, the findings by line
        files = [k for k in keys if k[1] == 0]
        assert files == sorted(files)
        return
    assert keys == sorted(keys)


@pytest.mark.parametrize("output", ["text", "json", "sarif"])
def test_the_sorted_report_is_the_same_with_jobs_and_on_the_exact_path(
    output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(_corpus(tmp_path))
    main(["validate", ".", "-o", output, "-j", "1"])
    one = capsys.readouterr().out
    main(["validate", ".", "-o", output, "-j", "2", "--chunk-bytes", "2000"])
    assert capsys.readouterr().out == one


def test_in_order_is_a_stable_sort_in_bounded_memory() -> None:
    found = [
        Finding(f"d{i % 7}/f{i % 3}.jsonl", (i * 37) % 11 or None, f"/{i}", "TS010", Severity.WARNING, str(i), i % 2)
        for i in range(500)
    ]
    want = sorted(found, key=location_key)  # sorted() is stable: ties keep the order found
    assert list(in_order(found)) == want
    assert list(in_order(found, spill_after=16)) == want  # spilled runs merged back, still stable


def test_paths_sort_component_by_component() -> None:
    names = ["a-c.jsonl", "a/b.jsonl", "a/b/c.jsonl", "a.jsonl"]
    ordered = [f.path for f in in_order(Finding(n, 1, "", "X", Severity.ERROR, "") for n in names)]
    assert ordered == ["a/b/c.jsonl", "a/b.jsonl", "a-c.jsonl", "a.jsonl"]


def test_cassette_lint_lists_findings_by_path_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = (
        "interactions:\n"
        "- request:\n"
        "    body: '{{}}'\n"
        "    headers:\n"
        "      x-api-key: [{key}]\n"
        "      authorization: [Bearer {bearer}]\n"
        "    method: POST\n"
        "    uri: https://api.anthropic.com/v1/messages\n"
        "  response:\n"
        "    body: {{string: '{{}}'}}\n"
        "    headers: {{}}\n"
        "    status: {{code: 200, message: OK}}\n"
        "version: 1\n"
    )
    for name in ("b.yaml", "a.yaml"):
        (tmp_path / name).write_text(
            body.format(key="sk-ant-api03-" + "A" * 90, bearer="sk-proj-" + "B" * 48), encoding="utf-8"
        )
    for output in ("text", "json"):
        main(["cassettes", "lint", str(tmp_path / "b.yaml"), str(tmp_path / "a.yaml"), "-o", output])
        keys = (
            _keys(output, capsys.readouterr().out)
            if output == "text"
            else [_key(f["path"], f["line"], f.get("column")) for f in json.loads(capsys.readouterr().out)["findings"]]
        )
        assert len(keys) >= 2 and keys == sorted(keys), output
