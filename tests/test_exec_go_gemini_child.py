"""A ninth outside author's child: a Gemini generateContent adapter in Go, the standard library
only (tests/data/exec/go_gemini_child/), written from docs/exec-protocol.md, `turnspec wire show
gemini-generate-content`, `turnspec schema export` (exec and canonical), smoke, `conform -v` and
Google's Gemini API reference alone (never the host's code, the reference adapter or the other
children). The model and the stream choice travel in the URL path; streams come as SSE or as a
JSON array; function calls without an id get one minted from the reply's responseId.

It passes `turnspec exec smoke` and `turnspec conform exec:... --validate-protocol` as written,
on turnspec's cassettes and on the real recordings (`--samples`); each defect `GOGEM_DEFECT`
plants (defects.go) fails exactly the checks that exist for it and no other. What the author
met that the published pages did not say is on them now (docs/exec-protocol.md, `wire show`'s
Errors section, the generateContent record's equivalences)."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]
CHILD = ROOT / "tests" / "data" / "exec" / "go_gemini_child"
GO = shutil.which("go")
BUILD_TIMEOUT_S = 300
needs_go = pytest.mark.skipif(GO is None, reason="go is not installed (apt-get install golang-go)")

EXERCISED = (
    "TC101",
    "TC102",
    "TC105",  # maxOutputTokens, temperature, stopSequences in generationConfig
    "TC109",  # the model and :generateContent / :streamGenerateContent?alt=sse in the path
    "TC201",
    "TC202",
    "TC203",
    "TC301",  # ids minted from responseId for calls the API sent without one
    "TC305",  # the minted id on functionCall.id and functionResponse.id
    "TC405",  # thought parts sent back with their thoughtSignature, to Gemini only
    "TC601",
    "TC605",
    "TC606",  # the last chunk's empty text part adds no block, as the parse has none
    "TC607",  # SSE events and JSON-array elements cut across chunks
    "TC611",  # an open call's final_input is what its delivered deltas spell
    "TC801",  # the 400 whose message says the token count exceeds the maximum: context_overflow
    "TC802",
    "TC901",
    "TC903",
    "TC904",
    "TC907",
    "TC908",
    "TC909",
)


def _build(out_dir: Path) -> Path:
    binary = out_dir / "go-gemini-child"
    done = subprocess.run(
        [str(GO), "build", "-o", str(binary), "."],
        cwd=CHILD,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"go build: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return binary


@pytest.fixture(scope="module")
def binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if GO is None:
        pytest.skip("go is not installed (apt-get install golang-go)")
    return _build(tmp_path_factory.mktemp("go-gemini-child"))


def _conform(capsys: pytest.CaptureFixture[str], command: str, *extra: str) -> tuple[int, dict[str, Any]]:
    rc = main(["conform", f"exec:{command}", "--validate-protocol", "-o", "json", *extra])
    return rc, json.loads(capsys.readouterr().out)


def _results(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["rule"]: r for r in report["results"] if r["adapter"] != "(cassettes)"}


def test_the_child_imports_the_standard_library_only() -> None:
    for source in CHILD.glob("*.go"):
        text = source.read_text()
        block = text.split("import (", 1)[1].split(")", 1)[0] if "import (" in text else ""
        single = [line.split('"')[1] for line in text.splitlines() if line.startswith('import "')]
        imports = [line.strip().strip('"') for line in block.splitlines() if line.strip()] + single
        assert all("." not in i.split("/")[0] for i in imports), (source.name, imports)
    assert "require" not in (CHILD / "go.mod").read_text()


@needs_go
def test_the_go_gemini_child_passes_smoke_and_conform(binary: Path, capsys: pytest.CaptureFixture[str]) -> None:
    command = shlex.quote(str(binary))
    rc = main(["exec", "smoke", command])
    lines = capsys.readouterr().out.splitlines()
    assert rc == 0 and all(x.startswith("ok") for x in lines), lines
    assert {x.split()[1] for x in lines} >= {"render", "parse", "stream", "cancel", "read_request", "estimate"}
    rc, report = _conform(capsys, command, "--no-samples")
    results = _results(report)
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail"}
    assert rc == 0 and not failed, failed
    for rule in EXERCISED:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, (rule, results[rule])
    assert report["summary"]["unexercised_capabilities"] == []


@needs_go
def test_the_go_gemini_child_passes_conform_on_real_recordings(
    binary: Path, samples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """llm-gemini's and pydantic-ai's recordings: proto field names (`file_uri`,
    `function_declarations`), one Tool object where the docs have a list, Gemini 3's
    thoughtSignatures on functionCall parts, TC701's counts."""
    rc, report = _conform(capsys, shlex.quote(str(binary)), "--samples", str(samples / "wire"))
    results = _results(report)
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail"}
    assert rc == 0 and not failed, failed
    for rule, least in (("TC701", 10), ("TC802", 60), ("TC904", 30), ("TC908", 30)):
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] >= least, (rule, results[rule])


@needs_go
@pytest.mark.parametrize(
    ("defect", "rules", "words"),
    [
        # every finishReason read as STOP: a reply cut at maxOutputTokens streams end_turn
        ("ignore-finish", {"TC903"}, "streamed stop_reason 'end_turn', recorded 'MAX_TOKENS' = 'max_tokens'"),
        # a streamed functionCall's args lost (the parse keeps them)
        ("lose-stream-args", {"TC606", "TC909"}, "has input {}, the recording's"),
        # the model sent in the body, a fixed name in the URL path
        ("model-in-body", {"TC109", "TC802"}, "the path names model 'gemini', the request's model is"),
        # thought parts dropped, parsed and streamed alike (the two agree, so TC606 cannot see
        # it): the replayed turn lacks the thought it had (TC405), and the recorded thinking
        # text is in no thinking block (TC908, which once read the answer text only)
        ("drop-thinking", {"TC405", "TC908"}, "the recorded thinking text"),
        # a thoughtSignature on a functionCall or text part kept in the parse's provider_raw,
        # which no stream event carries, so a streamed reply loses it (the parse and the stream
        # then agree on the blocks: TC606 cannot see it); TC405's stream case, once missing
        ("raw-signatures", {"TC405"}, "signature(s) the stream carries are in none of its events"),
    ],
    ids=["finish-reason-ignored", "stream-args-lost", "model-in-body", "thinking-dropped", "signatures-unstreamed"],
)
def test_a_defect_planted_in_the_go_gemini_child_fails_exactly_its_checks(
    binary: Path, capsys: pytest.CaptureFixture[str], defect: str, rules: set[str], words: str
) -> None:
    rc, report = _conform(capsys, f"env GOGEM_DEFECT={defect} {shlex.quote(str(binary))}", "--no-samples")
    results = _results(report)
    failed = {k for k, r in results.items() if r["status"] == "fail"}
    assert rc == 1 and failed == rules, (failed, {k: results[k]["reasons"][:2] for k in failed})
    reasons = [why for k in rules for why in results[k]["reasons"]]
    assert any(words in why for why in reasons), reasons
