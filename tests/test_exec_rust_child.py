"""An outside author's exec child in Rust (tests/data/exec/rust_anthropic_child/): Anthropic's
Messages API on the standard library alone (no crate: JSON, base64, ULIDs and RFC 3339 time
written by hand), from docs/exec-protocol.md, schemas/exec/v1/, `turnspec wire show
anthropic-messages`, `turnspec rule` and Anthropic's own documentation, never the host's code.

It passes `turnspec exec smoke` and a whole `turnspec conform exec:... --validate-protocol`
as written, and the real recordings too; a defect planted with `RUST_CHILD_DEFECT` fails the
checks that exist for it, and only those. The crate is built once a session with
`cargo build --offline` from a copy under pytest's temporary folder (its `target/` and
`Cargo.lock` never land in the tree); every test skips with the reason when `cargo` is missing
or older than the crate's `rust-version`."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from outside_children import OFF_PROTOCOL, assert_fails_exactly, assert_refuses_in_one_line, conform_child, results_of

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]
CHILD = ROOT / "tests" / "data" / "exec" / "rust_anthropic_child"
CARGO = shutil.which("cargo")
BUILD_TIMEOUT_S = 600
DEFECT_ENV = "RUST_CHILD_DEFECT"


def _rust_version() -> tuple[int, int]:
    """The crate's `rust-version` (the oldest toolchain it builds with)."""
    found = re.search(r'^rust-version = "(\d+)\.(\d+)"', (CHILD / "Cargo.toml").read_text(), re.M)
    assert found is not None, "Cargo.toml names its rust-version"
    return int(found[1]), int(found[2])


def _cargo_too_old() -> str | None:
    if CARGO is None:
        return "the Rust child is built with cargo (none on PATH)"
    done = subprocess.run([CARGO, "--version"], capture_output=True, text=True, timeout=60, check=False)
    found = re.search(r"(\d+)\.(\d+)", done.stdout)
    if found is None or (int(found[1]), int(found[2])) < _rust_version():
        return (
            f"the Rust child needs cargo {'.'.join(map(str, _rust_version()))} or later (found {done.stdout.strip()!r})"
        )
    return None


@pytest.fixture(scope="session")
def rust_child(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The child's command line: the crate built once, from a copy, into a temporary target."""
    why = _cargo_too_old()
    if why is not None:
        pytest.skip(why)
    assert CARGO is not None
    work = tmp_path_factory.mktemp("rust-child")
    source = work / "src"
    shutil.copytree(CHILD, source, ignore=shutil.ignore_patterns("target", "Cargo.lock"))
    target = work / "target"
    done = subprocess.run(
        [CARGO, "build", "--offline", "-q"],
        cwd=source,
        env={**_env(), "CARGO_TARGET_DIR": str(target)},
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, f"cargo build: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    binary = target / "debug" / "rust-anthropic-child"
    assert binary.is_file(), sorted(p.name for p in (target / "debug").iterdir())
    return shlex.quote(str(binary))


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != DEFECT_ENV}


# the checks whose cases drive each operation and each sentence the author had to get right
EXERCISED = (
    "TC101",  # parse: routing, disjoint usage, the served model, status
    "TC102",  # read_request: tool messages split out of user turns, parent_tool_use_id
    "TC105",  # max_tokens, stop_sequences, temperature
    "TC109",  # POST /v1/messages, the model without its `anthropic:` prefix, `stream: true`
    "TC201",  # block_dropped records with their five fields
    "TC203",  # critical_key: a typed critical_block error
    "TC302",  # the wire's tool ids sent back as they came
    "TC303",
    "TC405",  # signatures kept by the parse and sent back, whoever parsed the message
    "TC502",  # output_schema: option_dropped (supports_structured_output is false)
    "TC601",
    "TC605",
    "TC606",  # the stream's aggregate equals the parse (server tool blocks kept whole)
    "TC607",  # SSE events cut anywhere, inside a UTF-8 sequence too
    "TC609",
    "TC610",  # signature_delta as the thinking block's final thinking_delta
    "TC611",  # cancel after redacted thinking, which no event carries
    "TC801",  # error.type before contract §6.2's status table; a stream's `error` event
    "TC802",  # round trip: a system prompt of blocks, cache_control, tool extras, `extra`
    "TC903",
    "TC904",
    "TC907",
)


def test_the_rust_child_passes_smoke_and_a_wholeconform_child(
    rust_child: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = main(["exec", "smoke", rust_child])
    lines = capsys.readouterr().out.splitlines()
    ops = {x.split()[1]: x for x in lines if x.split()}
    assert set(ops) >= {"hello", "render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"}
    assert "rust-anthropic (anthropic, anthropic-messages)" in ops["hello"], lines
    assert rc == 0 and all(x.startswith("ok") for x in lines), lines
    rc, report = conform_child(capsys, rust_child)
    results = results_of(report)
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail"}
    assert rc == 0 and not failed, failed
    for rule in EXERCISED:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, (rule, results[rule])
    assert report["summary"]["unexercised_capabilities"] == []
    # turnspec's cassettes are hand-written: no token count of theirs judges an estimate
    assert results["TC701"]["status"] == "skip", results["TC701"]


def test_the_rust_child_passes_conform_on_real_recordings(
    rust_child: str, samples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over the recordings no one here wrote: the estimate (the tool use system prompt, image
    sizes read from PNG/GIF/JPEG headers, earlier turns' thinking left out) is within TC701's
    band of every recorded input count."""
    rc = main(["conform", f"exec:{rust_child}", "--samples", str(samples / "wire"), "-o", "json"])
    results = results_of(json.loads(capsys.readouterr().out))
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail"}
    assert rc == 0 and not failed, failed
    assert results["TC701"]["status"] == "pass" and results["TC701"]["passed"] >= 20, results["TC701"]


@pytest.mark.parametrize(
    ("defect", "fails", "rule", "words"),
    [
        # max_tokens (and model_context_window_exceeded) read as end_turn
        ("stop", {"TC903"}, "TC903", "recorded 'max_tokens' = 'max_tokens'"),
        # cache reads and writes swapped: the caching probe sees it too
        ("usage", {"TC503", "TC904"}, "TC904", "cached_input_tokens: parsed 188086, recorded 0"),
        # a parsed call's provider id altered: it never goes back as the wire issued it
        (
            "toolid",
            {"TC102", "TC302", "TC305", "TC401", "TC402", "TC606", "TC802"},
            "TC302",
            "which is not the id in the recorded response",
        ),
        # a fresh canonical id at every parse of the same provider id: the map is not a bijection
        (
            "toolmap",
            {"TC102", "TC302", "TC303", "TC305", "TC401", "TC402", "TC606", "TC607"},
            "TC303",
            "map not injective",
        ),
        # no model in the request body
        ("model", {"TC104", "TC109", "TC802"}, "TC109", "/model is None"),
        # a parsed reply's first two blocks swapped: the stream (in order) no longer agrees
        ("order", {"TC606"}, "TC606", "stream content differs from the parse at /0"),
    ],
    ids=["stop", "usage", "toolid", "toolmap", "model", "order"],
)
def test_a_defect_planted_in_the_rust_child_fails_its_checks_and_only_those(
    rust_child: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    defect: str,
    fails: set[str],
    rule: str,
    words: str,
) -> None:
    monkeypatch.setenv(DEFECT_ENV, defect)  # the host starts the child with its environment
    assert_fails_exactly(*conform_child(capsys, rust_child), fails, rule, words)


@pytest.mark.parametrize(("line", "says"), OFF_PROTOCOL, ids=["not-json", "not-an-object"])
def test_the_rust_child_refuses_a_line_off_the_protocol_in_one_line(rust_child: str, line: bytes, says: str) -> None:
    assert_refuses_in_one_line(rust_child, line, says)
