"""Run pytest node ids with one rule switched off, for many rules, cheaply.

    python tests/mutation_runner.py UNITS.json OUT.json [--jobs N]

UNITS.json is `[[rule_id, [node_id, ...]], ...]`. For each unit a child process switches
the rule off (`conformance.core.findings.switch_off_for_mutation_testing`, the testing-only
entry point: no production code path reaches it), runs the unit's tests and records each
node's outcome; OUT.json gets
`{rule_id: {"exit": code, "outcomes": {node_id: "passed"|"failed"|"skipped"}}}`.

One pytest session collects every unit's tests once; its run loop then forks one child per
unit (at most N at a time) from the collected session, before any fixture is set up, so each
unit starts from the same untouched state (nothing one rule's run caches reaches another's)
and costs its tests' time only, not an interpreter start, the imports and a collection
(about 0.3 s instead of 3 to 5). Used by tests/test_traceability_mutation.py.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _base(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def items_of(rule: str, nodes: list[str], items: list[Any]) -> list[Any]:
    """The collected items a unit runs: each named node (a node without a parameter stands for
    each of its cases), and of a parametrized test some of whose cases name the rule switched
    off (`[TS201]`, `[CB101_bad]`) only those cases: the others are about other rules.
    Dropping cases can only keep a row green, never make it pass this harness."""
    named = [i for i in items if any(i.nodeid == n or i.nodeid.startswith(n + "[") for n in nodes)]
    about = {_base(i.nodeid) for i in named if "[" in i.nodeid and rule in i.nodeid.split("[", 1)[1]}
    return [i for i in named if _base(i.nodeid) not in about or rule in i.nodeid.split("[", 1)[-1]]


class _Units:
    """A pytest plugin: its run loop forks one child per unit from the collected session."""

    def __init__(self, units: list[tuple[str, list[str]]], work: Path, jobs: int) -> None:
        self.units, self.work, self.jobs = units, work, jobs
        self.out: dict[str, str] = {}

    def pytest_runtestloop(self, session: Any) -> bool:
        running: dict[int, str] = {}
        pending = list(self.units)
        while pending or running:
            while pending and len(running) < self.jobs:
                rule, nodes = pending.pop(0)
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the child never returns
                    try:
                        self._child(session, rule, nodes)
                    finally:
                        os._exit(3)
                running[pid] = rule
            pid, _ = os.wait()
            running.pop(pid, None)
        return True

    def _child(self, session: Any, rule: str, nodes: list[str]) -> None:
        """In the forked child: switch `rule` off, run its items, write the outcomes, exit."""
        from _pytest.runner import runtestprotocol

        from conformance.core.findings import switch_off_for_mutation_testing

        result = self.work / f"{rule}.json"
        log = os.open(str(result.with_suffix(".log")), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(log, 1)
        os.dup2(log, 2)
        switch_off_for_mutation_testing([rule])
        started = time.perf_counter()
        todo = items_of(rule, nodes, session.items)
        for n, item in enumerate(todo):
            for report in runtestprotocol(item, nextitem=todo[n + 1] if n + 1 < len(todo) else None, log=False):
                self._record(report)
        code = 1 if "failed" in self.out.values() else 0 if self.out else 5
        result.write_text(
            json.dumps({"exit": code, "seconds": round(time.perf_counter() - started, 2), "outcomes": self.out}),
            encoding="utf-8",
        )
        os._exit(0)

    def _record(self, report: Any) -> None:
        """Each node's outcome (a failing setup or teardown fails it)."""
        if report.failed:
            self.out[report.nodeid] = "failed"
        elif report.skipped:
            self.out.setdefault(report.nodeid, "skipped")
        elif report.when == "call":
            self.out.setdefault(report.nodeid, "passed")


def main(argv: list[str]) -> int:
    units_file, out_file = Path(argv[0]), Path(argv[1])
    jobs = int(argv[3]) if len(argv) > 3 and argv[2] == "--jobs" else 2
    units: list[tuple[str, list[str]]] = [(u[0], u[1]) for u in json.loads(units_file.read_text(encoding="utf-8"))]
    work = out_file.parent / (out_file.name + ".d")
    work.mkdir(exist_ok=True)
    os.chdir(ROOT)
    nodes = sorted({n for _, ns in units for n in ns})
    with (work / "session.log").open("w", encoding="utf-8") as log:
        saved = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = log
        try:
            pytest.main(["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(ROOT), *nodes],
                        [_Units(units, work, jobs)])  # fmt: skip
        finally:
            sys.stdout, sys.stderr = saved
    results: dict[str, Any] = {}
    for rule, _ in units:
        f = work / f"{rule}.json"
        results[rule] = json.loads(f.read_text(encoding="utf-8")) if f.is_file() else {"exit": -1, "outcomes": {}}
    out_file.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
