"""What the tests of outside authors' exec children share (tests/test_exec_rust_child.py,
tests/test_exec_ts_vertex_child.py, tests/test_exec_interactions_child.py): a whole conform
of a child with every message validated, its results by check, the assertion that a planted
defect fails exactly its checks, and the one-line refusal of a line off the protocol."""

from __future__ import annotations

import json
import shlex
import subprocess
from typing import Any

import pytest

from conformance.cli import main


def conform_child(capsys: pytest.CaptureFixture[str], command: str, *extra: str) -> tuple[int, dict[str, Any]]:
    """`turnspec conform exec:COMMAND --no-samples --validate-protocol -o json`: its exit
    status and its report."""
    rc = main(["conform", f"exec:{command}", "--no-samples", "--validate-protocol", "-o", "json", *extra])
    return rc, json.loads(capsys.readouterr().out)


def results_of(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The child's result of each check (the cassettes' own TC800 row left out)."""
    return {r["rule"]: r for r in report["results"] if r["adapter"] != "(cassettes)"}


def assert_fails_exactly(rc: int, report: dict[str, Any], fails: set[str], rule: str, words: str) -> None:
    """The run failed, on the checks `fails` and no other, and `rule` says `words`."""
    results = results_of(report)
    assert rc == 1 and {k for k, r in results.items() if r["status"] == "fail"} == fails, {
        k: r["reasons"][:1] for k, r in results.items() if r["status"] == "fail"
    }
    assert any(words in why for why in results[rule]["reasons"]), results[rule]["reasons"]


OFF_PROTOCOL = [
    (b"not json\n", "standard input line 1 is not JSON"),
    (b"[1, 2]\n", "standard input line 1 is not a JSON object"),
]


def assert_refuses_in_one_line(command: str, line: bytes, says: str) -> None:
    """docs/exec-protocol.md, Framing: a line with no `id` to answer is one standard error
    line naming it and exit status 2, nothing on standard output."""
    done = subprocess.run(shlex.split(command), input=line, capture_output=True, timeout=60, check=False)
    err = done.stderr.decode()
    assert done.returncode == 2 and done.stdout == b"", (done.returncode, done.stdout)
    assert err.startswith(says) and err.count("\n") == 1, err
