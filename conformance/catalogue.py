"""Every rule and check turnspec can report, across its domains: the input rules
(`core.reporting`: TS000, TS013), the formats' rules, the migrations', the suite's checks,
replay-check's rules, cassette lint's and schema diff's.

Each domain declares its own catalogue (`formats.catalog`, `migrations.rules`, `suite.rules`,
`replay.rules`, `wire.cassette_lint`, `schema.diff_rules`); this module only puts them
together, for `turnspec rules`/`rule`, `validate --statistics` and SARIF, and the docs
pages (`cli.docsgen`). It reads the suite and replay-check, so it sits in the lowest layer
allowed to import them: one of its own, just above `suite | replay` (`.importlinter`).
"""

from __future__ import annotations

from collections.abc import Iterator

from .core.findings import RuleCatalog
from .core.reporting import SKIPPED, UNREADABLE
from .formats import catalog
from .migrations.rules import CATALOG as MIGRATION_RULES

__all__ = ["each_rule_part", "every_rule", "rule_parts"]


def rule_parts() -> list[tuple[str, RuleCatalog]]:
    """Every catalogue turnspec reports from, with what reports its rules."""
    return list(each_rule_part())


def each_rule_part() -> Iterator[tuple[str, RuleCatalog]]:
    """`rule_parts`, each catalogue's package loaded as its turn comes (`turnspec rule`
    stops at the one that holds the rule)."""
    yield "input (validate)", RuleCatalog([UNREADABLE, SKIPPED])
    yield "format rule (validate)", catalog()

    yield "migration rule (migrate, validate)", MIGRATION_RULES
    # function-level imports: each catalogue's package is loaded only when rules are listed
    from .suite.rules import CATALOG as SUITE_CATALOG

    yield "conformance suite check (conform)", SUITE_CATALOG
    from .replay.rules import CATALOG as REPLAY_CATALOG

    yield "replay rule (replay-check)", REPLAY_CATALOG
    from .wire.cassette_lint import CATALOG as CASSETTE_CATALOG

    yield "cassette lint (cassettes lint)", CASSETTE_CATALOG
    from .schema.diff_rules import CATALOG as SCHEMA_DIFF_CATALOG

    yield "schema change (schema diff)", SCHEMA_DIFF_CATALOG


def every_rule() -> RuleCatalog:
    """Every rule and check turnspec can report: formats, suite, replay-check, cassette lint, schema diff."""
    out = RuleCatalog()
    for _, part in rule_parts():
        for info in part:
            out.add(info)
    return out
