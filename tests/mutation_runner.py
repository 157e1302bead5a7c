"""Run pytest node ids with one rule switched off, for many rules, cheaply.

    python tests/mutation_runner.py UNITS.json OUT.json [--jobs N]

UNITS.json is `[[rule_id, [node_id, ...]], ...]`. For each unit a child process switches
the rule off (`conformance.core.findings.switch_off_for_mutation_testing`, the testing-only
entry point: no production code path reaches it), runs `pytest <node ids>` and records each
node's outcome; OUT.json gets
`{rule_id: {"exit": code, "outcomes": {node_id: "passed"|"failed"|"skipped"}}}`.

The children are forked from this process after it has imported the library (not the test
modules), so a unit costs its tests' time plus a collection, not an interpreter start and
every import (about 1 s instead of 3 to 5). Used by tests/test_traceability_mutation.py.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


class _Outcomes:
    """A pytest plugin recording each node's outcome (a failing setup or teardown fails it).

    A parametrized test some of whose cases name the rule switched off (`[TS201]`,
    `[CB101_bad]`) runs only those cases: the others are about other rules. Dropping cases
    can only keep a row green, never make it pass this harness."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        self.out: dict[str, str] = {}

    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        about = {i.nodeid.split("[", 1)[0] for i in items if "[" in i.nodeid and self.rule in i.nodeid.split("[", 1)[1]}
        keep = [i for i in items if i.nodeid.split("[", 1)[0] not in about or self.rule in i.nodeid.split("[", 1)[-1]]
        if len(keep) < len(items):
            config.hook.pytest_deselected(items=[i for i in items if i not in keep])
            items[:] = keep

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            self.out[report.nodeid] = "failed"
        elif report.skipped:
            self.out.setdefault(report.nodeid, "skipped")
        elif report.when == "call":
            self.out.setdefault(report.nodeid, "passed")


def _child(rule: str, nodes: list[str], result: Path) -> None:
    """In the forked child: switch `rule` off, run `nodes`, write the outcomes, exit."""
    from conformance.core.findings import switch_off_for_mutation_testing

    switch_off_for_mutation_testing([rule])
    log = os.open(str(result.with_suffix(".log")), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(log, 1)
    os.dup2(log, 2)
    plugin = _Outcomes(rule)
    started = time.perf_counter()
    code = pytest.main(["-q", "-p", "no:cacheprovider", "-o", "addopts=", "--rootdir", str(ROOT), *nodes], [plugin])
    result.write_text(
        json.dumps({"exit": int(code), "seconds": round(time.perf_counter() - started, 2), "outcomes": plugin.out}),
        encoding="utf-8",
    )
    os._exit(0)


def main(argv: list[str]) -> int:
    units_file, out_file = Path(argv[0]), Path(argv[1])
    jobs = int(argv[3]) if len(argv) > 3 and argv[2] == "--jobs" else 2
    units: list[tuple[str, list[str]]] = [(u[0], u[1]) for u in json.loads(units_file.read_text(encoding="utf-8"))]
    work = out_file.parent / (out_file.name + ".d")
    work.mkdir(exist_ok=True)
    # function-level import and preload (see the module doc): done once here, after the
    # arguments are read, and shared by every forked child (copy on write)
    from conformance.formats import all_formats

    for name in ("conformance.api", "conformance.cli", "conformance.suite.runner"):
        importlib.import_module(name)

    list(all_formats())
    os.chdir(ROOT)
    running: dict[int, str] = {}
    pending = list(units)
    while pending or running:
        while pending and len(running) < jobs:
            rule, nodes = pending.pop(0)
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child never returns
                try:
                    _child(rule, nodes, work / f"{rule}.json")
                finally:
                    os._exit(3)
            running[pid] = rule
        pid, _ = os.wait()
        running.pop(pid, None)
    results: dict[str, Any] = {}
    for rule, _ in units:
        f = work / f"{rule}.json"
        results[rule] = json.loads(f.read_text(encoding="utf-8")) if f.is_file() else {"exit": -1, "outcomes": {}}
    out_file.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
