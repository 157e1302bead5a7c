"""docs/traceability.md's peer-format tables (issue 17) stay true: their rule ids exist,
their tests exist and test those rules, every peer rule enforces a row, and the counts
are the counts of the rows.

Kept apart from tests/test_traceability.py, which reads the metis tables: these rows use
refs of their own (`GPT-01`, `GPA-01`, `CHB-01`, `GEP-01`) under `## Peer format ...`
headings, so neither test reads the other's rows.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conformance.cli import app
from conformance.formats import catalog

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "traceability.md"
CLASSES = ("tested", "untested", "partial", "open", "n/c", "todo")
RULE_ID = re.compile(r"\b(?:GP|CB|GE)\d{3}\b")
REF = re.compile(r"(?:GPT|GPA|CHB|GEP)-\d{2}")
HEADING = "## Peer format "
PARAM = re.compile(r"(?P<func>\w+)\[(?P<param>[\w.-]+)\]")

# rules that enforce another document than the three formats' own (named in the doc)
OTHER_DOCUMENTS = {"GP001", "GP002", "GE001", "GE002", "GE003", "GE004", "GE006"}
OTHER_DOCUMENTS |= {"GE900", "GE901", "CB313"}


def _rows() -> list[tuple[str, dict[str, str]]]:
    """(document heading, row) for every statement row of the peer tables."""
    doc = ""
    out: list[tuple[str, dict[str, str]]] = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            doc = line[len(HEADING) :] if line.startswith(HEADING) else ""
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if doc and len(cells) == 6 and REF.fullmatch(cells[0]):
            out.append((doc, dict(zip(("ref", "section", "statement", "class", "rules", "test"), cells, strict=True))))
    return out


ROWS = _rows()


def test_the_tables_cover_the_three_formats_documents() -> None:
    docs = {d for d, _ in ROWS}
    assert {d.split(":")[0] for d in docs} == {"gpt2099", "chibi", "geppetto"}
    assert len(docs) == 4  # gpt2099 schemas.md and provider-api.md, chibi, geppetto
    assert len({r["ref"] for _, r in ROWS}) == len(ROWS), "row refs are unique"
    assert len(ROWS) > 100


def test_every_row_has_a_known_class_and_reasons_where_needed() -> None:
    for _, r in ROWS:
        assert r["class"] in CLASSES, r
        if r["class"] in ("tested", "partial"):
            assert r["test"].startswith("tests/"), f"{r['ref']}: a {r['class']} row names the test that makes it fail"
        if r["class"] in ("n/c", "open"):
            assert r["test"] and not r["test"].startswith("tests/"), f"{r['ref']}: say why"
        if r["class"] == "n/c":
            assert not RULE_ID.findall(r["rules"]), f"{r['ref']}: an n/c row names no rule"
        if r["class"] == "untested":
            assert RULE_ID.findall(r["rules"]), r


def test_every_rule_named_exists() -> None:
    result = CliRunner().invoke(app, ["rules", "--output", "json"])
    assert result.exit_code == 0
    listed = {r["id"] for r in json.loads(result.stdout)}
    for _, r in ROWS:
        for rule in RULE_ID.findall(r["rules"]):
            assert rule in listed, f"{r['ref']} names {rule}, which `turnspec rules` does not list"


def _fixture_expects(test_file: Path, param: str) -> set[str]:
    """Rules the fixture `param` (beside the test module, under fixtures/) declares it
    must produce on its first line (`# expect: GE105 11 /blocks/1/role`)."""
    hits = sorted((test_file.parent / "fixtures").glob(f"{param}.*"))
    assert hits, f"no fixture {param}.* beside {test_file}"
    first = hits[0].read_text(encoding="utf-8").split("\n", 1)[0]
    return set(RULE_ID.findall(first)) if first.startswith("# expect:") else set()


@pytest.mark.parametrize("ref", [r["ref"] for _, r in ROWS if r["test"].startswith("tests/")])
def test_every_test_named_exists_and_tests_its_rules(ref: str) -> None:
    row = next(r for _, r in ROWS if r["ref"] == ref)
    cell = row["test"]
    passes = cell.endswith("(passes)")
    path, _, target = cell.removesuffix("(passes)").strip().partition("::")
    file = ROOT / path
    assert file.is_file(), f"{ref}: no {path}"
    m = PARAM.fullmatch(target)
    func = m["func"] if m else target
    text = file.read_text(encoding="utf-8")
    assert re.search(rf"^def {re.escape(func)}\(", text, re.M), f"{ref}: no {func} in {path}"
    if row["class"] != "tested" or passes:
        return
    rules = RULE_ID.findall(row["rules"])
    if m:
        expected = _fixture_expects(file, m["param"])
        for rule in rules:
            assert rule in expected, f"{ref}: fixture {m['param']} does not expect {rule}"
        return
    for rule in rules:
        assert rule in text, f"{ref}: {path} never mentions {rule}: which test makes it fail?"


def test_every_peer_rule_enforces_a_row() -> None:
    named = {rule for _, r in ROWS for rule in RULE_ID.findall(r["rules"])}
    own = {info.id for info in catalog() if RULE_ID.fullmatch(info.id)}
    missing = own - OTHER_DOCUMENTS - named
    assert not missing, f"rules enforcing no statement of the peer tables: {sorted(missing)}"
    assert not (OTHER_DOCUMENTS & named), "a rule of another document is listed as enforcing these"


def test_counts_match_the_rows() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text.split("<!-- peer counts: begin -->")[1].split("<!-- peer counts: end -->")[0]
    stated: dict[str, list[int]] = {}
    for line in block.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        stated[cells[0]] = [int(c) for c in cells[1:]]
    counts: dict[str, Counter[str]] = {}
    for doc, r in ROWS:
        counts.setdefault(doc, Counter())[r["class"]] += 1
    actual = {doc: [c[k] for k in CLASSES] for doc, c in counts.items()}
    assert stated == actual
