"""Findings as data: what is wrong, where, and which rule says so.

Every check in turnspec (schema, rule, conformance check) reports through `Finding`, so
the CLI, the JSON report and the pytest plugin all speak one shape. A `RuleInfo` is the
catalogue entry users look up and select or ignore by ID (like ruff's rule codes).
"""

from __future__ import annotations

import enum
import functools
import heapq
import pickle
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO

_switched_off: frozenset[str] = frozenset()


def switched_off() -> frozenset[str]:
    """The rule and check ids this process treats as switched off, as if their code reported
    nothing: empty in every production run, where nothing sets it. Only rule-level mutation
    testing does, through `switch_off_for_mutation_testing`. Every driver asks
    `Selection.enabled`, which says no for them; the conversion report
    (`convertkit.ConvertContext.lossy`) drops their steps, replay-check its findings, and a
    migration skips its output check (TM003, `migrations.run.migrate_record`)."""
    return _switched_off


def switch_off_for_mutation_testing(ids: Iterable[str]) -> None:
    """Testing only (tests/mutation_runner.py, tests/test_traceability_mutation.py): switch off
    `ids` (exact ids, never prefixes) in this process and in the `--jobs` workers it starts,
    replacing what was switched off before (empty: nothing). Not a user option (`--ignore`
    is); no command, option or environment variable reaches it."""
    global _switched_off
    _switched_off = frozenset(ids)


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """A stable, documented check.

    `id` never changes meaning once released; `section` names the spec section the rule
    enforces so a user can read why it exists. `strict` rules are warnings that
    `--strict` turns into errors (spec §10.3 tolerance is a reader's choice).
    """

    id: str
    severity: Severity
    section: str
    summary: str
    strict: bool = False

    @property
    def troubleshooting(self) -> str:
        """What to look at when it fails, where the declaration itself carries it (a suite
        check's `CheckInfo.fix`); "" for a rule whose fix is its line of `rulefixes.FIXES`.
        `ruledocs` reads it from the value it is given, so no help text depends on which
        catalogue was imported first."""
        return ""


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation: file, line, JSON pointer, rule, severity, message; `column` (1-based,
    on `line`) where the reader knows it (a JSON parse error), else None."""

    path: str
    line: int | None
    pointer: str
    rule: str
    severity: Severity
    message: str
    column: int | None = None

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "line": self.line,
            "pointer": self.pointer,
            "rule": self.rule,
            "severity": str(self.severity),
            "message": self.message,
        }
        if self.column is not None:
            out["column"] = self.column
        return out

    @property
    def location(self) -> str:
        """`file`, `file:line` or `file:line:column`, as compilers and ruff print them."""
        if self.line is None:
            return self.path
        if self.column is None:
            return f"{self.path}:{self.line}"
        return f"{self.path}:{self.line}:{self.column}"

    def format(self) -> str:
        loc = self.location
        ptr = f" {self.pointer}" if self.pointer else ""
        return f"{loc}:{ptr} {self.rule} {self.severity}: {self.message}"


Location = tuple[tuple[str, ...], int, int]


@functools.lru_cache(maxsize=4096)
def path_key(path: str) -> tuple[str, ...]:
    # component by component, as ruff and pytest order paths: `a/b.jsonl` before `a-c.jsonl`
    return tuple(path.replace("\\", "/").split("/"))


def location_key(f: Finding) -> Location:
    """The order findings are reported in, in every output: by path (component by
    component), line, then column; a finding on no line (the whole file) comes first."""
    return path_key(f.path), f.line or 0, f.column or 0


SPILL_AFTER = 100_000
"""Findings `in_order` keeps in memory before it spills a sorted run to a temporary file."""


def _spill(run: list[Finding]) -> IO[bytes]:
    """`run`, sorted, in an anonymous temporary file (unlinked at once: nothing is left behind)."""
    run.sort(key=location_key)
    spool = tempfile.TemporaryFile()  # noqa: SIM115  # closed by `_unspill` or `in_order`
    pickler = pickle.Pickler(spool, protocol=pickle.HIGHEST_PROTOCOL)
    for f in run:
        pickler.dump(f)
        pickler.clear_memo()
    spool.seek(0)
    return spool


def _unspill(spool: IO[bytes]) -> Iterator[Finding]:
    try:
        while True:
            try:
                yield pickle.load(spool)  # our own file, written just above
            except EOFError:
                return
    finally:
        spool.close()


def in_order(findings: Iterable[Finding], *, spill_after: int = SPILL_AFTER) -> Iterator[Finding]:
    """`findings` sorted by `location_key`, stably (findings at one place keep the order they
    were found in, so `--jobs` and the fast path stay byte-identical). Memory stays bounded:
    past `spill_after` findings a sorted run goes to an anonymous temporary file, and the runs
    are merged at the end (`heapq.merge` keeps ties in run order, so the sort stays stable)."""
    runs: list[IO[bytes]] = []
    held: list[Finding] = []
    try:
        for f in findings:
            held.append(f)
            if len(held) >= spill_after:
                runs.append(_spill(held))
                held = []
        held.sort(key=location_key)
        if not runs:
            yield from held
            return
        yield from heapq.merge(*map(_unspill, runs), iter(held), key=location_key)
    finally:
        for spool in runs:
            spool.close()


class RuleCatalog:
    """An ordered set of `RuleInfo`, indexed by id."""

    def __init__(self, rules: Iterable[RuleInfo] = ()) -> None:
        self._rules: dict[str, RuleInfo] = {}
        for r in rules:
            self.add(r)

    def add(self, info: RuleInfo) -> RuleInfo:
        if info.id in self._rules and self._rules[info.id] != info:
            raise ValueError(f"rule id {info.id} registered twice with different meanings")
        self._rules[info.id] = info
        return info

    def __getitem__(self, rule_id: str) -> RuleInfo:
        return self._rules[rule_id]

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._rules

    def __iter__(self) -> Iterator[RuleInfo]:
        return iter(sorted(self._rules.values(), key=lambda r: r.id))

    def __len__(self) -> int:
        return len(self._rules)


@dataclass(frozen=True)
class Selection:
    """Which rules run, ruff style: `select`/`ignore` take ids or id prefixes.

    An empty `select` means every rule. `strict` promotes `RuleInfo.strict` warnings
    to errors.
    """

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    strict: bool = False
    _cache: dict[str, bool] = field(default_factory=dict, compare=False, repr=False)

    def enabled(self, rule_id: str) -> bool:
        hit = self._cache.get(rule_id)
        if hit is None:
            best_sel = max((len(p) for p in self.select if rule_id.startswith(p)), default=-1)
            best_ign = max((len(p) for p in self.ignore if rule_id.startswith(p)), default=-1)
            if not self.select:
                best_sel = 0
            # The longer (more specific) prefix wins, as in ruff; ties go to ignore.
            hit = best_sel >= 0 and best_sel > best_ign and rule_id not in switched_off()
            self._cache[rule_id] = hit
        return hit

    def severity(self, info: RuleInfo) -> Severity:
        if self.strict and info.strict:
            return Severity.ERROR
        return info.severity
