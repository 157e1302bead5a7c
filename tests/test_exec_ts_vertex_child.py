"""An outside author's exec child in TypeScript (tests/data/exec/ts_vertex_child/): Claude on
Google Vertex AI (`vertex-anthropic-messages`), the model and the stream choice in the URL
(`.../publishers/anthropic/models/{model}:rawPredict` / `:streamRawPredict`) and
`anthropic_version: "vertex-2023-10-16"` in a body that names no model. Written from
docs/exec-protocol.md, `turnspec schema export --format exec`, `turnspec wire show
vertex-anthropic-messages`, `turnspec rule` and Anthropic's and Google's own pages, never the
host's code nor turnspec's own Vertex adapter; Node's standard library only at run time.

It passes `turnspec exec smoke` and a whole `turnspec conform exec:... --validate-protocol` on
turnspec's `cassettes/vertex-anthropic/` (which its `hello` names in `cassette_folders`); a
defect planted with `TS_VERTEX_DEFECT` fails the checks that exist for it, and only those. The
child is compiled once a session with the tsc of TURNSPEC_TSC (or PATH) into pytest's temporary
folder, against the @types/node installed beside that tsc (.ci/run installs typescript@5 and
@types/node@20 under .ci/node); every test skips with the reason when node, tsc or
@types/node is missing."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from outside_children import OFF_PROTOCOL, assert_fails_exactly, assert_refuses_in_one_line, conform_child, results_of

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]
CHILD = ROOT / "tests" / "data" / "exec" / "ts_vertex_child"
NODE = shutil.which("node")
TSC = os.environ.get("TURNSPEC_TSC") or shutil.which("tsc")
BUILD_TIMEOUT_S = 300
DEFECT_ENV = "TS_VERTEX_DEFECT"


def _node_modules() -> Path | None:
    """A node_modules holding @types/node beside the tsc used (.ci/run's .ci/node)."""
    candidates = [ROOT / ".ci" / "node" / "node_modules"]
    if TSC is not None:
        candidates.insert(0, Path(TSC).resolve().parent.parent)  # node_modules/.bin/tsc -> node_modules
        candidates.insert(0, Path(TSC).parent.parent)
    return next((c for c in candidates if (c / "@types" / "node" / "package.json").is_file()), None)


NODE_MODULES = _node_modules()


@pytest.fixture(scope="session")
def ts_child(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The child's command line: src/main.ts compiled once, from a copy, into a temporary folder."""
    if NODE is None or TSC is None or NODE_MODULES is None:
        pytest.skip(
            "the TypeScript child is compiled with tsc against @types/node and run with node "
            "(.ci/run installs typescript@5 and @types/node@20 under .ci/node and sets TURNSPEC_TSC)"
        )
    work = tmp_path_factory.mktemp("ts-vertex-child")
    shutil.copytree(CHILD, work, dirs_exist_ok=True, ignore=shutil.ignore_patterns("dist", "node_modules"))
    (work / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    done = subprocess.run(
        [TSC, "-p", "."], cwd=work, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False
    )
    assert done.returncode == 0, f"tsc: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    program = work / "dist" / "main.js"
    assert program.is_file(), sorted(p.name for p in (work / "dist").iterdir())
    return f"{shlex.quote(NODE)} {shlex.quote(str(program))}"


@pytest.fixture(autouse=True)
def _no_defect(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(DEFECT_ENV, raising=False)


# the checks whose cases drive each operation and each sentence the author had to get right
EXERCISED = (
    "TC101",  # parse: routing, disjoint usage, the served model (`claude-sonnet-4-5-20250929`)
    "TC102",  # read_request: the model read off the URL, tool messages split out of user turns
    "TC104",  # the body: `anthropic_version` in it, no `model`
    "TC109",  # the model and :rawPredict / :streamRawPredict in the path
    "TC201",
    "TC203",
    "TC302",
    "TC405",  # thinking signatures sent back
    "TC502",  # output_schema: option_dropped
    "TC606",  # a stream's aggregate equals the parse (a server tool's blocks kept whole)
    "TC607",  # SSE events cut anywhere
    "TC610",  # signature_delta as the final thinking_delta
    "TC611",  # cancel after redacted thinking
    "TC801",  # error.type first, then the status table; Google's own error body (401)
    "TC802",  # round trip: the project and location of the URL, cache_control, server tools
    "TC903",
    "TC904",
    "TC907",
    "TC908",
    "TC909",
)


def test_the_ts_vertex_child_passes_smoke_and_a_wholeconform_child(
    ts_child: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["exec", "smoke", ts_child])
    lines = capsys.readouterr().out.splitlines()
    ops = {x.split()[1]: x for x in lines if x.split()}
    assert set(ops) >= {"hello", "render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"}
    assert "ts-vertex (anthropic, vertex-anthropic-messages)" in ops["hello"], lines
    assert ":rawPredict" in ops["render"] and "/models/conformance-model:" in ops["render"], ops["render"]
    assert rc == 0 and all(x.startswith("ok") for x in lines), lines
    rc, report = conform_child(capsys, ts_child)
    results = results_of(report)
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail"}
    assert rc == 0 and not failed, failed
    assert report["recordings"]["folders"] == {"turnspec/vertex-anthropic": 8}, report["recordings"]
    for rule in EXERCISED:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, (rule, results[rule])
    assert report["summary"]["unexercised_capabilities"] == []


@pytest.mark.parametrize(
    ("defect", "fails", "rule", "words"),
    [
        # a stream asked by `stream: true` in the body alone, every request sent to :rawPredict
        ("stream", {"TC109", "TC802"}, "TC109", "a streaming request sent to the non-streaming endpoint"),
        # the model named in the body too, as Anthropic's own API takes it
        ("model", {"TC104", "TC802"}, "TC104", "/model"),
        # every reply's text upper-cased, parsed and streamed alike: only the recording tells
        ("text", {"TC908"}, "TC908", "is not in the reply's text blocks"),
        # every reply's tool call renamed, parsed and streamed alike
        ("toolname", {"TC909"}, "TC909", "the recording's 'get_weather'"),
        # max_tokens read as end_turn
        ("stop", {"TC903"}, "TC903", "recorded 'max_tokens' = 'max_tokens'"),
        # cache reads and writes swapped: the caching probe sees it too
        ("usage", {"TC503", "TC904"}, "TC904", "cached_input_tokens: parsed 188086, recorded 0"),
    ],
    ids=["stream", "model", "text", "toolname", "stop", "usage"],
)
def test_a_defect_planted_in_the_ts_vertex_child_fails_its_checks_and_only_those(
    ts_child: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    defect: str,
    fails: set[str],
    rule: str,
    words: str,
) -> None:
    monkeypatch.setenv(DEFECT_ENV, defect)  # the host starts the child with its environment
    assert_fails_exactly(*conform_child(capsys, ts_child), fails, rule, words)


@pytest.mark.parametrize(("line", "says"), OFF_PROTOCOL, ids=["not-json", "not-an-object"])
def test_the_ts_vertex_child_refuses_a_line_off_the_protocol_in_one_line(ts_child: str, line: bytes, says: str) -> None:
    assert_refuses_in_one_line(ts_child, line, says)
