"""Each GE rule against a violating and a passing fixture.

Every fixture's first line says what it must produce: `# expect: GE003 14 /blocks/1/payload/text`
(rule, and where known the line and JSON pointer, counted by hand from the fixture), or
`# expect: none` for a file that must validate without a single finding.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.api import validate
from conformance.core.findings import Selection, Severity
from conformance.formats import Options
from conformance.formats.geppetto import CATALOG

FIXTURES = Path(__file__).parent / "fixtures"
ALL = sorted(FIXTURES.glob("GE*.yaml"))


def expectation(path: Path) -> tuple[str | None, int | None, str | None]:
    first = path.read_bytes().split(b"\n", 1)[0].decode()
    assert first.startswith("# expect: "), f"{path.name}: first line must be `# expect: ...`"
    parts = first[len("# expect: ") :].split()
    if parts == ["none"]:
        return None, None, None
    rule = parts[0]
    line = int(parts[1]) if len(parts) > 1 else None
    pointer = parts[2] if len(parts) > 2 else None
    return rule, line, pointer


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.stem)
def test_fixture(path: Path) -> None:
    rule, line, pointer = expectation(path)
    report = validate([path], fmt="geppetto")
    if rule is None:
        assert report.findings == [], [f.format() for f in report.findings]
        return
    hits = [f for f in report.findings if f.rule == rule]
    assert hits, f"expected {rule}, got {[f.format() for f in report.findings]}"
    located = [f for f in hits if (line is None or f.line == line) and (pointer is None or f.pointer == pointer)]
    assert located, f"{rule} expected at line {line} {pointer}, got {[f.format() for f in hits]}"
    assert located[0].severity == CATALOG[rule].severity


def test_every_rule_has_a_violating_and_a_passing_fixture() -> None:
    names = {p.stem for p in ALL}
    for info in CATALOG:
        if info.id.startswith("GE9"):
            continue  # conversion rules: tests/geppetto/test_geppetto_convert.py
        if info.id == "GE306":
            continue  # a rule across turn files: tests/geppetto/test_geppetto_sessions.py
        assert f"{info.id}_bad" in names, f"no violating fixture for {info.id}"
        assert f"{info.id}_good" in names, f"no passing fixture for {info.id}"


def test_strict_promotes_tolerated_unknowns_to_errors() -> None:
    path = FIXTURES / "GE010_bad.yaml"
    lenient = validate([path], fmt="geppetto")
    strict = validate([path], Options(selection=Selection(strict=True)), fmt="geppetto")
    assert [f.severity for f in lenient.findings if f.rule == "GE010"] == [Severity.WARNING]
    assert [f.severity for f in strict.findings if f.rule == "GE010"] == [Severity.ERROR]
    assert lenient.exit_code == 0 and strict.exit_code == 1


def test_ignore_drops_a_rule() -> None:
    path = FIXTURES / "GE304_bad.yaml"
    report = validate([path], Options(selection=Selection(ignore=("GE304",))), fmt="geppetto")
    assert not [f for f in report.findings if f.rule == "GE304"]


def test_unknown_kind_is_validated_as_other_and_known_spelling_as_its_kind(tmp_path: Path) -> None:
    # `image` reads as `other` (no payload schema), so only GE011 is reported ...
    unknown = validate([FIXTURES / "GE011_unknown.yaml"], fmt="geppetto")
    assert {f.rule for f in unknown.findings} == {"GE011"}
    # ... while `LLM_Text` reads as llm_text, whose payload needs `text`
    text = (FIXTURES / "GE011_bad.yaml").read_text().replace("      text: hello\n", "      words: hello\n")
    tmp = tmp_path / "kind.yaml"
    tmp.write_text(text)
    report = validate([tmp], fmt="geppetto")
    assert any(f.rule == "GE020" and f.pointer == "/blocks/1/payload/text" for f in report.findings)


def test_rules_cite_sections_and_have_stable_prefixes() -> None:
    for info in CATALOG:
        assert info.id.startswith("GE") and len(info.id) == 5
        assert info.section and info.summary


def test_cli_detects_the_format_and_can_be_forced(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    assert main(["validate", str(FIXTURES / "GE101_good.yaml")]) == 0
    assert main(["validate", str(FIXTURES / "GE101_bad.yaml")]) == 1
    out = capsys.readouterr().out
    assert "GE101_bad.yaml:11: /blocks/1/role GE101 error" in out
    # comments only: no `blocks:` to detect, so only --format reads it
    assert main(["validate", str(FIXTURES / "GE005_bad.yaml")]) == 2
    assert main(["validate", "--format", "geppetto", str(FIXTURES / "GE005_bad.yaml")]) == 1
    assert "Traceback" not in capsys.readouterr().err
