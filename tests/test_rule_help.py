"""Issue 29: `turnspec rule ID` explains a rule as `ruff rule` does (the statements it
enforces with their sections, a failing and a passing example from its test fixture, the
bugs a suite check catches, how to fix, the docs page), and the same text is SARIF's
`help`/`helpUri` and the HTML report's. Oracles: the fixtures and the traceability table,
read here directly, and the hand-written defect lines of tests/test_rules_canonical.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from test_reporting import sarif_schema
from test_rules_canonical import CASES

from conformance.cli import every_rule, main
from conformance.core import ruledocs
from conformance.core.findings import Finding, RuleCatalog, Severity
from conformance.core.reporting import to_sarif

FIXTURES = Path(__file__).parent / "rules" / "canonical"
TRACE = Path(__file__).parent.parent / "docs" / "traceability.md"


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    assert main(["rule", *args, "-o", "json"]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def _within(part: object, whole: object) -> bool:
    """`part` is `whole` with members left out, items summarized and long strings cut (`…`)."""
    if isinstance(part, dict) and isinstance(whole, dict):
        return all(k in whole and _within(v, whole[k]) for k, v in part.items())
    if isinstance(part, list) and isinstance(whole, list):
        return len(part) == len(whole) and all(_within(a, b) for a, b in zip(part, whole, strict=True))
    if isinstance(part, str) and isinstance(whole, str) and part.endswith("…"):
        return whole.startswith(part[:-1])
    return part == whole and type(part) is type(whole)


def _at(doc: object, pointer: str) -> object:
    for key in pointer.split("/")[1:] if pointer else []:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]  # type: ignore[index]
    return doc


@pytest.mark.parametrize("rule", [r for r, case in CASES.items() if case[0].endswith(".jsonl")])
def test_each_canonical_rule_shows_the_smallest_fragments_around_its_defect(
    rule: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 39: the examples are the differing part, not two whole one-line documents: the
    value at one pointer of the fixture's line (and of the valid line it replaces), with what
    is the same on both sides left out, pretty-printed."""
    fixture, line, pointer, _needs = CASES[rule]
    doc = _json(capsys, rule)
    examples = doc["examples"]
    assert isinstance(examples, list) and examples
    bad = (FIXTURES / fixture).read_text(encoding="utf-8").splitlines()
    valid = (FIXTURES / "valid.jsonl").read_text(encoding="utf-8").splitlines()
    # the line the test table says the defect is on is shown, around the place its finding names
    [ex] = [x for x in examples if x["line"] == line]
    assert ex["fixture"] == fixture and ex["base"] == "valid.jsonl"
    at = ex["pointer"]
    assert at == "" or pointer == at or pointer.startswith(at + "/"), (at, pointer)
    for x in examples:
        failing = json.loads(x["failing"])
        assert x["failing"] == json.dumps(failing, indent=2, ensure_ascii=False)  # pretty-printed
        full = json.loads(bad[x["line"] - 1])
        assert _within(failing, _at(full, x["pointer"])), x
        assert len(json.dumps(failing)) < len(bad[x["line"] - 1])  # smaller than the whole line
        if x["passing"] is not None:
            passing = json.loads(x["passing"])
            assert _within(passing, _at(json.loads(valid[x["line"] - 1]), x["pointer"])), x
            assert passing != failing


def test_text_output_has_requires_examples_fix_and_docs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "TS020"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    valid = (FIXTURES / "valid.jsonl").read_text(encoding="utf-8").splitlines()
    bad = (FIXTURES / "TS020.jsonl").read_text(encoding="utf-8").splitlines()
    assert bad[1] not in out and valid[1] not in out  # never the whole one-line documents
    start = lines.index("  failing:  TS020.jsonl line 2, at /content/0:")
    shown = "\n".join(
        line.strip() for line in lines[start + 1 : lines.index("  passing:  valid.jsonl line 2, at /content/0:")]
    )
    assert json.loads(shown) == {"type": "text", "text": 5}
    assert "  fix:      make the value at the pointer what the schema says" in out
    assert "fixture" not in out.split("  fix:")[1]
    assert "  docs:     https://turnspec.dev/docs/reference/rules/ts020/" in lines
    # C05 of docs/traceability.md names TS020 for `role`'s enumeration
    row = next(line for line in TRACE.read_text(encoding="utf-8").splitlines() if line.startswith("| C05 |"))
    statement = row.split("|")[3].strip()
    assert f"  requires: {statement} (canonical-message-format.md §4.1, traceability row C05)" in lines


def test_a_suite_check_shows_the_bugs_its_mutants_plant(capsys: pytest.CaptureFixture[str]) -> None:
    doc = _json(capsys, "TC405")
    caught = {m["mutant"]: m["bug"] for m in doc["catches"]}  # type: ignore[union-attr]
    assert caught["ForeignSignatureSent"].startswith("Sends thinking signed by another provider back to Anthropic")
    assert "--select TC405 -v" in str(doc["fix"])
    assert doc["help_uri"] == "https://turnspec.dev/docs/reference/checks/tc405/"
    assert any(r["ref"] == "C72" for r in doc["requires"])  # type: ignore[union-attr]


def test_every_rule_has_a_fix_and_a_docs_page() -> None:
    from conformance.cli import docsgen

    pages = docsgen.pages()
    for info in every_rule():
        text = ruledocs.help_text(info)
        assert "How to fix: " in text and text.endswith(ruledocs.help_uri(info.id)), info.id
        assert ruledocs.page_path(info.id) in pages, info.id


def test_every_rule_has_a_fix_of_its_own_in_the_users_terms() -> None:
    """Issue 39: no fix talks about the test fixture, and none is a line shared by rules
    that have no fixture."""
    fixes: dict[str, str] = {}
    for info in every_rule():
        fix = ruledocs.fix_text(info)
        assert "fixture" not in fix and "passing example" not in fix, (info.id, fix)
        assert not fix.startswith("see what the statements above require"), info.id  # the fallback
        fixes[info.id] = fix
    shared = [f for f in set(fixes.values()) if list(fixes.values()).count(f) > 1]
    assert shared == [], shared


def test_sarif_rules_carry_help_text_markdown_and_uri() -> None:
    every = every_rule()
    catalog = RuleCatalog([every["TS020"], every["TC405"]])
    log = to_sarif(
        [
            Finding("a.jsonl", 2, "/content/0/text", "TS020", Severity.ERROR, "5 is not a string"),
            Finding("b.yaml", 1, "", "TC405", Severity.ERROR, "signature sent to openai"),
        ],
        catalog,
    )
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["TS020"]["helpUri"] == "https://turnspec.dev/docs/reference/rules/ts020/"
    assert rules["TS020"]["help"]["text"] == ruledocs.help_text(every["TS020"])
    assert "**Failing example** (`TS020.jsonl` line 2 at `/content/0`):" in rules["TS020"]["help"]["markdown"]
    assert "ForeignSignatureSent" in rules["TC405"]["help"]["markdown"]


def test_html_report_links_each_check_to_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "tests.mutants:SilentDrop", "--no-samples", "--select", "TC201", "-o", "html"]) == 1
    page = capsys.readouterr().out
    assert '<a href="#help-tc201">TC201</a>' in page
    assert '<details id="help-tc201"><summary>TC201: ' in page
    assert re.search(r"Caught bug \(SilentDrop, from \w+\): Drops thinking without the WARN line", page)
    assert 'href="https://turnspec.dev/docs/reference/checks/tc201/"' in page


def test_every_check_has_troubleshooting_text_in_its_fix(capsys: pytest.CaptureFixture[str]) -> None:
    """As langchain-tests gives each standard test a "Troubleshooting" note."""
    from conformance.suite.rules import CATALOG, TROUBLESHOOTING

    assert set(TROUBLESHOOTING) == {i.id for i in CATALOG}
    doc = _json(capsys, "TC604")
    assert str(doc["fix"]).startswith("If this check fails, check that `tool_use_end.final_input` is the object")
    for info in CATALOG:
        assert ruledocs.fix_text(info).startswith(f"If this check fails, {TROUBLESHOOTING[info.id]}"), info.id


def test_a_checks_troubleshooting_is_read_from_its_own_declaration() -> None:
    """The help of a check is its `CheckInfo`'s, whatever was imported. Failed before:
    `suite/rules.py` copied each catalogued check's `fix` into `ruledocs.TROUBLESHOOTING` when
    it was imported, so a check declared anywhere else had no troubleshooting line."""
    from conformance.suite.rules import CheckInfo

    info = CheckInfo("TC998", Severity.ERROR, "contract §3.1", "A check of another catalogue", fix="look at the x.")
    assert ruledocs.fix_text(info).startswith("If this check fails, look at the x. `turnspec conform ADAPTER")
    assert "How to fix: If this check fails, look at the x. " in ruledocs.help_text(info)
    assert "If this check fails, look at the x. " in ruledocs.help_markdown(info)


def test_an_installed_wheel_reads_the_shipped_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wheel's layout (pyproject force-include): conformance/_ruledocs/{traceability.md,
    rules/canonical/, mutants.py.txt, rule_cases.py.txt}; a checkout's files are not consulted."""
    import shutil

    shipped = tmp_path / "_ruledocs"
    (shipped / "rules").mkdir(parents=True)
    shutil.copytree(FIXTURES, shipped / "rules" / "canonical")
    shutil.copy(TRACE, shipped / "traceability.md")
    shutil.copy(Path(__file__).parent / "mutants.py", shipped / "mutants.py.txt")
    checkout = (ruledocs.help_text(every_rule()["TS020"]), ruledocs.help_text(every_rule()["TC405"]))
    shutil.copy(Path(__file__).parent / "test_rules_canonical.py", shipped / "rule_cases.py.txt")
    for fn in (ruledocs._statements, ruledocs.example, ruledocs._mutants, ruledocs._case_pointers):
        fn.cache_clear()
    monkeypatch.setattr(ruledocs, "_root", lambda: shipped)
    try:
        assert (ruledocs.help_text(every_rule()["TS020"]), ruledocs.help_text(every_rule()["TC405"])) == checkout
        (shipped / "mutants.py.txt").unlink()
        ruledocs._mutants.cache_clear()
        assert ruledocs.mutants("TC405") == ()
    finally:
        for fn in (ruledocs._statements, ruledocs.example, ruledocs._mutants, ruledocs._case_pointers):
            fn.cache_clear()
