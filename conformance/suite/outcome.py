"""The suite's bottom layer: what a check yields and what a run folds it into.

Checks import this module and `capture`; the runner imports the checks. Nothing here
imports a check or the runner, so the suite has no import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..adapters.protocol import Adapter

Status = Literal["pass", "fail", "skip"]
# a (rule, adapter) cell: an advisory rule (severity warning, `RuleInfo.strict`) whose cases
# failed is "warn", which fails the run only under --strict (then it folds to "fail")
Verdict = Literal["pass", "fail", "skip", "warn"]
SUITE_SUBJECT = "(cassettes)"


@dataclass(frozen=True)
class Outcome:
    """One case of one rule: an interaction, an adapter pair, a dropped block.

    `capability` names the declared capability (`supports_*`) the case exercises, when it
    exercises one; the report counts cases per capability from it, and a capability
    declared true that no case ran is a TC002 skip (see `runner.capability_gate`).
    """

    rule: str
    adapter: str
    status: Status
    subject: str
    message: str = ""
    capability: str | None = None
    measure: float | None = None  # a number the case measured (TC701: relative estimate error)


@dataclass
class RuleResult:
    """One (rule, adapter) cell: failed when any case failed (warned, for an advisory rule),
    passed when any passed, skipped (with the reasons) otherwise. `passed + failed` is the
    number of cases run."""

    rule: str
    adapter: str
    status: Verdict
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    reasons: list[str] = field(default_factory=list)
    skip_reasons: list[str] = field(default_factory=list)  # why cases were skipped, even when others ran
    capabilities: dict[str, int] = field(default_factory=dict)  # capability -> cases run exercising it

    @property
    def cases_run(self) -> int:
        return self.passed + self.failed


@dataclass
class AdapterUnderTest:
    ref: str
    adapter: Adapter
    cassette_dirs: list[Path] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.adapter.name)
