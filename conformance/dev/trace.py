"""docs/traceability.md: a row for a new rule or check, then its count tables regenerated."""

from __future__ import annotations

import re

from ..cli.docsgen import traceability_with_counts
from .edit import Refused

DOC = "docs/traceability.md"
SPECS = (  # a section's prefix -> the spec whose table holds its rows (canonical: none)
    ("contract ", "provider-adapter-contract.md"),
    ("streaming ", "streaming-protocol.md"),
    ("pricing ", "pricing.md"),
    ("", "canonical-message-format.md"),
)


def spec_of(section: str) -> tuple[str, str]:
    """The spec a section cites (`contract §4.2` -> the contract) and the section within it."""
    for prefix, spec in SPECS:
        if section.startswith(prefix):
            return spec, section.removeprefix(prefix)
    raise AssertionError("unreachable: the last prefix is empty")


def with_row(text: str, section: str, rule_id: str, test: str) -> tuple[str, str]:
    """`text` with a `tested` row for `rule_id` at the end of its spec's table (the next ref
    of that table), and the count tables regenerated; the new row's ref."""
    spec, within = spec_of(section)
    head = text.find(f"\n## {spec}\n")
    if head < 0:
        raise Refused(f"{DOC}: no table `## {spec}`")
    end = text.find("\n## ", head + 1)
    end = len(text) if end < 0 else end
    lines = text[head:end].split("\n")
    rows = [i for i, x in enumerate(lines) if x.startswith("| ") and not x.startswith("| ref ")]
    if not rows:
        raise Refused(f"{DOC}: the table of {spec} has no rows")
    refs = [re.match(r"\| ([A-Z])(\d+)[a-z]? \|", lines[i]) for i in rows]
    numbered = [(m.group(1), int(m.group(2))) for m in refs if m]
    letter = max({x for x, _ in numbered}, key=[x for x, _ in numbered].count)
    ref = f"{letter}{max(n for x, n in numbered if x == letter) + 1}"
    statement = f"TODO({rule_id}): the sentence of {spec} {within} that {rule_id} enforces, quoted"
    row = f"| {ref} | {within.replace('|', '/')} | {statement} | tested | {rule_id} | {test} |"
    last = max(rows)
    lines.insert(last + 1, row)
    return traceability_with_counts(text[:head] + "\n".join(lines) + text[end:]), ref
