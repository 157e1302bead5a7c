"""Rule-level mutation testing of docs/traceability.md (issue 26, item 3).

For every row classed `tested` (the metis tables and every peer format's table) whose test
cell names a test that makes the rule fail (not a `(passes)` allowance), each rule the row
cites is switched off in turn (`findings.switch_off_for_mutation_testing`, the testing-only
entry point every driver honours through `Selection.enabled`: the rule then reports
nothing) and the cited test is
run: at least one of its cases must fail. A row whose cited test stays green with its rule
off does not test that rule, and fails here.

The cited tests are run as named, except `tests/test_mutants.py::test_mutant_is_killed_by_expected_rule`,
which is narrowed to the mutants whose expected rule is the one switched off (the others
select other rules, so switching this one off cannot change them). A row whose cited cases
all skipped (real samples absent) skips with that reason.

One child process per rule, forked from a runner that has imported the library once
(tests/mutation_runner.py), runs every test that cites the rule; `-j` is the cores this
process may use, at most 4.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mutants import MUTANTS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "traceability.md"
RULE_ID = re.compile(r"\b(?:TS|TC|TM|RC|GP|GE|CB|OM|PA)\d{3}\b")
REF = re.compile(r"[A-Z]\d+[a-z]?|(?:GPT|GPA|CHB|GEP|OAM|PAI)-\d{2}")
MUTANT_TEST = "tests/test_mutants.py::test_mutant_is_killed_by_expected_rule"


@dataclass(frozen=True)
class Row:
    ref: str
    rules: tuple[str, ...]
    test: str  # the cited test: path::function or path::function[param]


def rows_classed_tested() -> list[Row]:
    """Every `tested` row of the document's tables whose test makes its rules fail."""
    out = []
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not REF.fullmatch(cells[0]) or cells[3] != "tested":
            continue
        rules = tuple(RULE_ID.findall(cells[4]))
        if rules and cells[5].startswith("tests/") and not cells[5].endswith("(passes)"):
            out.append(Row(cells[0], rules, cells[5]))
    return out


ROWS = rows_classed_tested()


def nodes_for(test: str, rule: str) -> list[str]:
    """The pytest node ids of `test` that can notice `rule` switched off."""
    if test == MUTANT_TEST:
        return [f"{MUTANT_TEST}[{cls.__name__}]" for cls, r in MUTANTS.items() if r == rule]
    return [test]


def units() -> dict[str, list[str]]:
    """rule -> every node id citing it (one child run per rule)."""
    out: dict[str, list[str]] = {}
    for row in ROWS:
        for rule in row.rules:
            nodes = out.setdefault(rule, [])
            nodes += [n for n in nodes_for(row.test, rule) if n not in nodes]
    return out


def _jobs() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


@pytest.fixture(scope="module")
def mutated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    """rule -> {"exit": pytest's exit code, "outcomes": {node id: outcome}} with that rule off.

    Computed once per test session: under pytest-xdist every worker that runs a row would
    otherwise run every child again, so the first takes a lock in the folder the workers
    share, computes and writes the result, and the others wait for it and read it."""
    if not hasattr(os, "fork"):
        pytest.skip("the runner forks its children (tests/mutation_runner.py): no os.fork here")
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the session's folder, above each worker's own
    out = shared / "mutation-out.json"
    with (shared / "mutation.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not out.is_file():
            _compute(shared, out)
    result: dict[str, dict[str, object]] = json.loads(out.read_text(encoding="utf-8"))
    return result


def _compute(work: Path, out: Path) -> None:
    todo = [[rule, nodes] for rule, nodes in sorted(units().items()) if nodes]
    (work / "mutation-units.json").write_text(json.dumps(todo), encoding="utf-8")
    partial = work / "mutation-out.json.part"
    subprocess.run(
        [sys.executable, str(ROOT / "tests" / "mutation_runner.py"), str(work / "mutation-units.json"),
         str(partial), "--jobs", str(_jobs())],
        check=True, cwd=ROOT, timeout=3000,
    )  # fmt: skip
    partial.replace(out)  # whole, or not there: a worker never reads half a result


def _cases(outcomes: dict[str, str], nodes: list[str]) -> Iterator[tuple[str, str]]:
    """The outcomes of `nodes` (a node without a parameter stands for each of its cases)."""
    for node, outcome in outcomes.items():
        if any(node == n or node.startswith(n + "[") for n in nodes):
            yield node, outcome


def test_the_tables_have_rows_to_mutate() -> None:
    refs = {r.ref for r in ROWS}
    assert len(ROWS) > 250 and len(refs) == len(ROWS)
    assert {"C61", "A08", "S22", "GPT-05", "CHB-01", "GEP-01", "OAM-01", "PAI-01"} <= refs


def test_the_switch_silences_exactly_the_rules_it_names() -> None:
    """`switch_off_for_mutation_testing` switches off the ids it is given, exact ids only:
    the validator then reports the fixture's other rules, never those."""
    from conformance import validate
    from conformance.core.findings import switch_off_for_mutation_testing

    fixture = ROOT / "tests" / "rules" / "canonical" / "TS303.json"

    def rules(switch: list[str]) -> set[str]:
        switch_off_for_mutation_testing(switch)
        try:
            return {f.rule for f in validate([fixture]).findings}
        finally:
            switch_off_for_mutation_testing([])

    assert "TS303" in rules([])
    assert "TS303" not in rules(["TS303"]) and rules(["TS303"]) == rules([]) - {"TS303"}
    assert rules(["TS30", "TS999"]) == rules([])  # a prefix switches nothing off


def test_a_production_run_never_reads_a_switch_from_the_environment() -> None:
    """The switch is a testing entry point only. Failed before: every run read
    `TURNSPEC_DISABLE_RULES` and silently reported nothing for the rules it named."""
    fixture = ROOT / "tests" / "rules" / "canonical" / "TS303.json"
    code = "import sys, json; from conformance import validate; print(json.dumps(sorted({f.rule for f in validate([sys.argv[1]]).findings})))"
    env = {**os.environ, "TURNSPEC_DISABLE_RULES": "TS303"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(fixture)], env=env, capture_output=True, text=True, check=True
    )
    assert "TS303" in json.loads(out.stdout)
    sources = [
        p for p in (ROOT / "conformance").rglob("*.py") if "TURNSPEC_DISABLE_RULES" in p.read_text(encoding="utf-8")
    ]
    assert sources == []


@pytest.mark.slow
@pytest.mark.parametrize("ref", [r.ref for r in ROWS])
def test_switching_the_rule_off_fails_a_cited_test(ref: str, mutated: dict[str, dict[str, object]]) -> None:
    row = next(r for r in ROWS if r.ref == ref)
    skipped = []
    for rule in row.rules:
        nodes = nodes_for(row.test, rule)
        assert nodes, f"{ref}: no mutant in tests/mutants.py expects {rule}"
        run = mutated[rule]
        outcomes = run["outcomes"]
        assert isinstance(outcomes, dict)
        cases = dict(_cases(outcomes, nodes))
        assert cases, f"{ref}: with {rule} off, {row.test} ran no case (pytest exit {run['exit']})"
        if "failed" in cases.values():
            continue
        if set(cases.values()) == {"skipped"}:
            skipped.append(rule)
            continue
        pytest.fail(f"{ref}: with {rule} switched off, every case of {row.test} still passes")
    if skipped:
        pytest.skip(f"{ref}: the cases citing {', '.join(skipped)} skipped (real samples absent?)")
