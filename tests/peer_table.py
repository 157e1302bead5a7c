"""The checks a peer format's table in docs/traceability.md gets (openai-messages,
pydantic-ai, langchain, otel-genai): its rule ids exist, its tests exist and name those rules, every rule of the
format enforces a row, and the stated counts are the rows'. Each format's test module
builds one `PeerTable` and runs its checks; the table names its own refs and rule ids."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from conformance.formats import get_format

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "traceability.md"
CLASSES = ("tested", "untested", "partial", "open", "n/c", "todo")


@dataclass(frozen=True)
class PeerTable:
    fmt: str  # the format's name, as `--format` takes it; the heading is "## Peer format <fmt>"
    rule_id: re.Pattern[str]  # the format's own rule ids (`\bOM\d{3}\b`)
    ref: re.Pattern[str]  # the table's refs (`OAM-\d{2}`)
    min_rows: int

    @cached_property
    def section(self) -> str:
        heading = f"## Peer format {self.fmt}"
        text = DOC.read_text(encoding="utf-8")
        assert heading in text
        return text.split(heading, 1)[1].split("\n## ", 1)[0]

    @cached_property
    def rows(self) -> list[dict[str, str]]:
        out = []
        for line in self.section.splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 6 and self.ref.fullmatch(cells[0]):
                out.append(dict(zip(("ref", "section", "statement", "class", "rules", "test"), cells, strict=True)))
        return out

    def refs_with_tests(self) -> list[str]:
        return [r["ref"] for r in self.rows if r["test"].startswith("tests/")]

    def check_rows(self) -> None:
        rows = self.rows
        assert len(rows) >= self.min_rows
        assert len({r["ref"] for r in rows}) == len(rows)
        for r in rows:
            assert r["class"] in CLASSES, r
            if r["class"] in ("tested", "partial"):
                assert r["test"].startswith("tests/"), r
            if r["class"] == "n/c":
                assert not self.rule_id.findall(r["rules"]) and r["test"] and not r["test"].startswith("tests/"), r

    def check_test(self, ref: str) -> None:
        row = next(r for r in self.rows if r["ref"] == ref)
        path, _, func = row["test"].partition("::")
        text = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {re.escape(func)}\(", text, re.M), f"{ref}: no {func} in {path}"
        body = (
            text.split(f"def {func}(", 1)[0].rsplit("\n\n\n", 1)[-1]
            + text.split(f"def {func}(", 1)[1].split("\n\n\n", 1)[0]
        )
        for rule in self.rule_id.findall(row["rules"]):
            assert rule in body, f"{ref}: {func} (with its parameters) never mentions {rule}"

    def check_rules(self) -> None:
        own = {info.id for info in get_format(self.fmt).rules if self.rule_id.fullmatch(info.id)}
        named = {rule for r in self.rows for rule in self.rule_id.findall(r["rules"])}
        assert named <= own, named - own
        assert own <= named, f"rules enforcing no row: {sorted(own - named)}"

    def check_counts(self) -> None:
        begin, end = f"<!-- {self.fmt} counts: begin -->", f"<!-- {self.fmt} counts: end -->"
        block = self.section.split(begin)[1].split(end)[0]
        line = block.strip().splitlines()[2]
        stated = [int(c.strip()) for c in line.strip().strip("|").split("|")[1:]]
        counts = Counter(r["class"] for r in self.rows)
        assert stated == [counts[k] for k in CLASSES]
