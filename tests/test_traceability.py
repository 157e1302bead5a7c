"""docs/traceability.md stays true: its rule ids exist, its tests exist and test them,
its counts are the counts of its rows."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "traceability.md"
CLASSES = ("tested", "untested", "partial", "open", "n/c", "todo")
RULE_ID = re.compile(r"\b(?:TS|TC|TM|RC|GP|GE|CH)\d{3}\b")
REF = re.compile(r"[A-Z]\d+[a-z]?")


def _rows() -> list[tuple[str, dict[str, str]]]:
    """(spec file, row) for every statement row of the per-spec tables."""
    spec = ""
    out: list[tuple[str, dict[str, str]]] = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## ") and line.endswith(".md"):
            spec = line[3:]
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if spec and len(cells) == 6 and REF.fullmatch(cells[0]):
            out.append((spec, dict(zip(("ref", "section", "statement", "class", "rules", "test"), cells, strict=True))))
    return out


ROWS = _rows()


def _listed_rules() -> set[str]:
    result = CliRunner().invoke(app, ["rules", "--output", "json"])
    assert result.exit_code == 0
    return {r["id"] for r in json.loads(result.stdout)}


def test_the_table_covers_the_four_specs() -> None:
    specs = {s for s, _ in ROWS}
    assert specs == {
        "canonical-message-format.md",
        "pricing.md",
        "provider-adapter-contract.md",
        "streaming-protocol.md",
    }
    assert len(ROWS) > 100
    assert len({r["ref"] for _, r in ROWS}) == len(ROWS), "row refs are unique"


def test_every_row_has_a_known_class_and_reasons_where_needed() -> None:
    for _, r in ROWS:
        assert r["class"] in CLASSES, r
        if r["class"] in ("tested", "partial"):
            assert r["test"], f"{r['ref']}: a {r['class']} row names the test that makes it fail"
        if r["class"] == "n/c":
            assert r["test"] and not r["rules"], f"{r['ref']}: say why it is not checkable"
        if r["class"] == "untested":
            assert r["rules"], r


def test_every_rule_named_exists() -> None:
    listed = _listed_rules()
    for _, r in ROWS:
        for rule in RULE_ID.findall(r["rules"]):
            assert rule in listed, f"{r['ref']} names {rule}, which `turnspec rules` does not list"


def _module_text(test_file: Path) -> str:
    """The test module and the sibling test modules it imports (e.g. tests/mutants.py)."""
    text = test_file.read_text(encoding="utf-8")
    more = [text]
    for m in re.finditer(r"^(?:from|import) (\w+)", text, re.M):
        sibling = test_file.parent / f"{m.group(1)}.py"
        if sibling.is_file():
            more.append(sibling.read_text(encoding="utf-8"))
    return "\n".join(more)


@pytest.mark.parametrize("ref", [r["ref"] for _, r in ROWS if r["test"].startswith("tests/")])
def test_every_test_named_exists_and_tests_its_rules(ref: str) -> None:
    row = next(r for _, r in ROWS if r["ref"] == ref)
    cell = row["test"]
    passes = cell.endswith("(passes)")
    path, _, func = cell.removesuffix("(passes)").strip().partition("::")
    file = ROOT / path
    assert file.is_file(), f"{ref}: no {path}"
    assert re.search(rf"^def {re.escape(func)}\(", file.read_text(encoding="utf-8"), re.M), f"{ref}: no {func}"
    if row["class"] == "tested" and not passes:
        text = _module_text(file)
        for rule in RULE_ID.findall(row["rules"]):
            assert rule in text, f"{ref}: {path} never mentions {rule}: which test makes it fail?"


def test_every_tested_rule_of_the_canonical_catalogue_has_a_row() -> None:
    from conformance.formats.canonical.rules import CATALOG

    named = {rule for _, r in ROWS for rule in RULE_ID.findall(r["rules"])}
    reader_rules = {r.id for r in CATALOG if r.id < "TS010"}  # RFC 8259 / JSON Lines, not the metis specs
    missing = {r.id for r in CATALOG} - reader_rules - {"TS900"} - named
    assert not missing, f"rules enforcing no statement of the table: {sorted(missing)}"


def test_counts_match_the_rows() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- counts: begin -->")[1].split("<!-- counts: end -->")[0]
    stated: dict[str, list[int]] = {}
    for line in block.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        stated[cells[0]] = [int(c) for c in cells[1:]]
    counts: dict[str, Counter[str]] = {}
    for spec, r in ROWS:
        counts.setdefault(spec, Counter())[r["class"]] += 1
    actual = {spec: [c[k] for k in CLASSES] for spec, c in counts.items()}
    assert stated == actual


def test_the_count_tables_are_the_generated_ones(tmp_path: Path) -> None:
    """The Counts and Peer counts tables are written by `docsgen --counts` from the rows,
    never by hand: a stale one is reported (exit 1) and rewritten to the document as it is."""
    from conformance.cli import docsgen

    text = DOC.read_text(encoding="utf-8")
    assert docsgen.traceability_with_counts(text) == text, "run python -m conformance.cli.docsgen --counts"
    stale = tmp_path / "traceability.md"
    stale.write_text(text.replace("| pricing.md | 0 | 0 | 1 |", "| pricing.md | 0 | 0 | 2 |"), encoding="utf-8")
    assert docsgen.main(["--check-counts", str(stale)]) == 1
    assert docsgen.main(["--counts", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == text
    # a row added is counted: one more tested row of the pricing table
    row = "| P99 | §1 | a statement | tested | TS401 | tests/test_rules_canonical.py::test_rule_fires_at_the_defect |\n"
    at = text.index("| ref |", text.index("## pricing.md"))
    at = text.index("\n\n", at) + 1
    grown = docsgen.traceability_with_counts(text[:at] + row + text[at:])
    assert "| pricing.md | 1 | 0 | 1 | 0 | 8 | 0 |" in grown
