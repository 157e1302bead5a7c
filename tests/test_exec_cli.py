"""The exec host from the command line: `turnspec conform 'exec:...'` in every output format,
`turnspec exec smoke`, and the pytest plugin and base class with an exec adapter
(docs/exec-protocol.md)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conformance.cli import main
from conformance.suite.smoke import _hello

ROOT = Path(__file__).resolve().parents[1]
PY = shlex.quote(sys.executable)
SERVE = f"{PY} -m conformance.adapters.exec.serve"
CHILD = f"{PY} {shlex.quote(str(ROOT / 'tests' / 'exec_child.py'))}"

pytest_plugins = ["pytester"]

# what differs between two runs of one adapter: the time a run took
_TIMES = re.compile(r"\d+(\.\d+)?\s?(s|ms)\b|\"elapsed_s\": [0-9.]+|time=\"[0-9.]+\"|duration[^,}\n]*")


def _conform(capsys: pytest.CaptureFixture[str], ref: str, *args: str) -> tuple[int, str]:
    rc = main(["conform", ref, "--no-samples", "--select", "TC10,TC2", *args])
    return rc, _TIMES.sub("T", capsys.readouterr().out)


@pytest.mark.parametrize("fmt", ["text", "json", "junit", "md", "html", "sarif", "github"])
def test_every_output_format_reads_as_the_imported_adapters(capsys: pytest.CaptureFixture[str], fmt: str) -> None:
    rc, direct = _conform(capsys, "openai-chat", "-o", fmt)
    rc2, through = _conform(capsys, f"exec:{SERVE} openai-chat", "-o", fmt)
    assert (rc, rc2) == (0, 0)
    if fmt == "sarif":
        # a finding of no recording sits at the imported adapter's class (its source file); an
        # exec child named by a command line has no file to point at, and is never placed in
        # the host's own code
        assert "conformance/adapters/exec/" not in through
        direct = _unplaced(direct, "conformance/adapters/openai_chat.py")
    assert through == direct
    assert len(direct) > 200 or fmt == "github"  # github annotations: failures only, and none failed


def _unplaced(sarif: str, source: str) -> str:
    """The SARIF log with the physical locations in `source` taken out of its results."""
    log = json.loads(sarif)
    for run in log["runs"]:
        for result in run["results"]:
            for loc in result.get("locations", []):
                if loc.get("physicalLocation", {}).get("artifactLocation", {}).get("uri") == source:
                    del loc["physicalLocation"]
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def test_conform_refuses_a_bad_exec_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", f"exec:{SERVE} anthropic", "--exec-timeout", "0"]) == 2
    assert "--exec-timeout" in capsys.readouterr().err


def test_conform_names_an_exec_adapter_that_cannot_start(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["conform", f"exec:{tmp_path / 'nothing-here'}"]) == 2
    err = capsys.readouterr().err
    assert "could not start the adapter" in err and err.count("\n") == 1


# -- exec smoke ------------------------------------------------------------------------------


def _smoke(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, list[str]]:
    rc = main(["exec", "smoke", command])
    return rc, capsys.readouterr().out.splitlines()


def test_smoke_passes_a_served_reference_adapter(capsys: pytest.CaptureFixture[str]) -> None:
    rc, lines = _smoke(capsys, f"{SERVE} anthropic")
    ops = [line.split()[1] for line in lines]
    assert ops == [
        "hello",
        "render",
        "parse",
        "stream",
        "cancel",
        "read_request",
        "estimate",
        "tool_id_map",
        "shutdown",
    ]
    assert rc == 0 and all(line.startswith("ok ") for line in lines), lines
    assert "in flight True" in lines[4]


@pytest.mark.parametrize("name", ["anthropic", "openai-chat", "openai-responses", "gemini", "ollama", "bedrock"])
def test_smoke_passes_every_served_reference_adapter(capsys: pytest.CaptureFixture[str], name: str) -> None:
    # smoke feeds a recorded stream that reports no error (an Ollama stream ending in its
    # documented `{"error": ...}` line must fail to parse: smoke once fed it, failing all)
    rc, lines = _smoke(capsys, f"{SERVE} {name}")
    assert rc == 0 and all(line.startswith("ok ") for line in lines), lines


def test_smoke_fails_an_operation_that_crashes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, lines = _smoke(capsys, f"{CHILD} crash render {shlex.quote(str(tmp_path / 'flag'))}")
    assert rc == 1
    [bad] = [line for line in lines if line.startswith("FAIL")]
    assert bad.split()[1] == "render" and "exit status 3" in bad


def test_smoke_validates_every_answer(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, lines = _smoke(capsys, f"{CHILD} off-schema parse {shlex.quote(str(tmp_path / 'flag'))}")
    assert rc == 1
    [bad] = [line for line in lines if line.startswith("FAIL")]
    assert bad.split()[1] == "parse" and "at /result/unexpected" in bad


def test_smoke_skips_what_the_child_does_not_offer(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc, lines = _smoke(capsys, f"{CHILD} drop-op estimate {shlex.quote(str(tmp_path / 'flag'))}")
    assert rc == 0
    assert [line for line in lines if line.startswith("skip")] == [
        "skip  estimate      not offered (the hello does not list it)"
    ]


def test_smoke_exits_2_when_the_child_cannot_start(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["exec", "smoke", f"{PY} -c 'import sys; sys.exit(7)'"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "exit status 7" in captured.err


# -- the pytest plugin and the base class ------------------------------------------------------


def test_the_plugin_runs_an_exec_adapter(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--turnspec-adapter", f"exec:{SERVE} openai-chat", "--turnspec-samples", "none",
        "--turnspec-select", "TC2,TC30", "--turnspec-validate-protocol", "--turnspec-exec-timeout", "20", "-v",
    )  # fmt: skip
    result.assert_outcomes(passed=9)
    result.stdout.fnmatch_lines(["*openai-chat-TC201* PASSED*"])


def test_the_base_class_runs_an_exec_adapter(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        f"""
import functools
from conformance.adapters import registry
from conformance.suite.testing import AdapterConformanceTests

@functools.cache
def served():
    return registry.load({f"exec:{SERVE} ollama"!r})

class TestServed(AdapterConformanceTests):
    @property
    def adapter(self):
        return served()

    @property
    def samples(self):
        return None
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-q", "-k", "tc101 or tc201 or tc104")
    result.assert_outcomes(passed=3)


@pytest.mark.parametrize(
    ("info", "line"),
    [
        ({"language": "go", "language_version": "go1.22"}, "a (p, w), go go1.22; offers parse, render"),
        ({"language": "go"}, "a (p, w), go; offers parse, render"),
        ({}, "a (p, w); offers parse, render"),  # no language: no stray comma or space
        ({"language": " ", "language_version": ""}, "a (p, w); offers parse, render"),
    ],
)
def test_the_smoke_hello_line_leaves_out_what_the_hello_does_not_name(info: dict[str, str], line: str) -> None:
    child = SimpleNamespace(client=SimpleNamespace(info=info), name="a", provider="p", wire_api="w")
    child.operations = frozenset({"render", "parse"})
    assert _hello(child) == line  # type: ignore[arg-type]
