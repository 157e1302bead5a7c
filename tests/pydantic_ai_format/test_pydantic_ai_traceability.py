"""docs/traceability.md's pydantic-ai table stays true: its rule ids exist, its tests
exist and test those rules, every PA rule enforces a row, and the counts are the rows'.

The same checks as tests/openai_messages/test_openai_messages_traceability.py, over this
table's refs and rule ids (`PAI-nn`, `PAnnn`).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from conformance.formats import get_format

ROOT = Path(__file__).parent.parent.parent
DOC = ROOT / "docs" / "traceability.md"
HEADING = "## Peer format pydantic-ai"
CLASSES = ("tested", "untested", "partial", "open", "n/c", "todo")
RULE_ID = re.compile(r"\bPA\d{3}\b")
REF = re.compile(r"PAI-\d{2}")


def _section() -> str:
    text = DOC.read_text(encoding="utf-8")
    assert HEADING in text
    return text.split(HEADING, 1)[1].split("\n## ", 1)[0]


def _rows() -> list[dict[str, str]]:
    out = []
    for line in _section().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and REF.fullmatch(cells[0]):
            out.append(dict(zip(("ref", "section", "statement", "class", "rules", "test"), cells, strict=True)))
    return out


ROWS = _rows()


def test_rows_are_unique_and_classed() -> None:
    assert len(ROWS) >= 11
    assert len({r["ref"] for r in ROWS}) == len(ROWS)
    for r in ROWS:
        assert r["class"] in CLASSES, r
        if r["class"] in ("tested", "partial"):
            assert r["test"].startswith("tests/"), r
        if r["class"] == "n/c":
            assert not RULE_ID.findall(r["rules"]) and r["test"] and not r["test"].startswith("tests/"), r


@pytest.mark.parametrize("ref", [r["ref"] for r in ROWS if r["test"].startswith("tests/")])
def test_every_test_named_exists_and_names_its_rules(ref: str) -> None:
    row = next(r for r in ROWS if r["ref"] == ref)
    path, _, func = row["test"].partition("::")
    text = (ROOT / path).read_text(encoding="utf-8")
    assert re.search(rf"^def {re.escape(func)}\(", text, re.M), f"{ref}: no {func} in {path}"
    body = (
        text.split(f"def {func}(", 1)[0].rsplit("\n\n\n", 1)[-1]
        + text.split(f"def {func}(", 1)[1].split("\n\n\n", 1)[0]
    )
    for rule in RULE_ID.findall(row["rules"]):
        assert rule in body, f"{ref}: {func} (with its parameters) never mentions {rule}"


def test_every_rule_named_exists_and_every_rule_enforces_a_row() -> None:
    own = {info.id for info in get_format("pydantic-ai").rules if RULE_ID.fullmatch(info.id)}
    named = {rule for r in ROWS for rule in RULE_ID.findall(r["rules"])}
    assert named <= own, named - own
    assert own <= named, f"rules enforcing no row: {sorted(own - named)}"


def test_counts_match_the_rows() -> None:
    block = _section().split("<!-- pydantic-ai counts: begin -->")[1].split("<!-- pydantic-ai counts: end -->")[0]
    line = block.strip().splitlines()[2]
    stated = [int(c.strip()) for c in line.strip().strip("|").split("|")[1:]]
    counts = Counter(r["class"] for r in ROWS)
    assert stated == [counts[k] for k in CLASSES]
