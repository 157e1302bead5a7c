"""A full disk is a one-line error naming the output, exit 2, nothing left behind (issue 30.7).

Files: the command runs in a child process whose file-size limit (RLIMIT_FSIZE, with
SIGXFSZ ignored) makes the kernel refuse a write past a few hundred bytes, as a full disk
does (EFBIG instead of ENOSPC), also inside SQLite. Standard output and the GitHub step
summary: `/dev/full`, whose every write fails with ENOSPC.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

VALID = Path(__file__).parent / "rules" / "canonical" / "valid.jsonl"

CHILD = """
import resource, signal, sys
from conformance.cli import main
limit = int(sys.argv[1])
if limit:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.exit(main(sys.argv[2:]))
"""

needs_dev_full = pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")


def _run(
    args: list[str], *, limit: int = 0, stdout: int | None = subprocess.PIPE, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(limit), *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _one_line_naming(p: subprocess.CompletedProcess[str], what: str) -> None:
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"turnspec: {what}"), p.stderr


@pytest.mark.skipif(not hasattr(os, "setrlimit") and sys.platform == "win32", reason="POSIX only")
@pytest.mark.parametrize(
    "args",
    [
        ["convert", str(VALID), "{out}", "--to", "sqlite"],
        ["convert", str(VALID), "{out}", "--to", "gpt2099"],
        ["convert", str(VALID), "{out}", "--to", "chibi"],
        ["models", "{out}", "--target", "typeddict"],
        ["schema", "export", "{out}"],
        ["schema", "export", "--bundle", "{out}"],
    ],
    ids=["convert-sqlite", "convert-gpt2099", "convert-chibi", "models", "schema-export", "schema-export-bundle"],
)
@pytest.mark.parametrize("existing", [False, True], ids=["new", "force"])
def test_a_full_disk_is_one_line_naming_the_output(tmp_path: Path, args: list[str], existing: bool) -> None:
    out = tmp_path / "out"
    if existing:
        out.write_text("old\n")
        args = [*args, "--force"]
    p = _run([a.replace("{out}", str(out)) for a in args], limit=600)
    _one_line_naming(p, f"{out}: cannot write: ")
    # nothing partial at the destination: the old output or nothing, and no staging folder
    assert sorted(x.name for x in tmp_path.iterdir()) == (["out"] if existing else [])
    if existing:
        assert out.read_text() == "old\n"


@needs_dev_full
def test_a_full_step_summary_is_one_line_naming_it(tmp_path: Path) -> None:
    p = _run(["validate", "-o", "github", str(VALID)], env={"GITHUB_STEP_SUMMARY": "/dev/full"})
    _one_line_naming(p, "/dev/full: cannot write")


def test_a_step_summary_that_fails_midway_is_left_as_it_was(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier steps\n" * 30)
    before = summary.read_bytes()
    p = _run(
        ["validate", "-o", "github", str(VALID)], limit=len(before) + 10, env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    _one_line_naming(p, f"{summary}: cannot write")
    assert summary.read_bytes() == before


@needs_dev_full
@pytest.mark.parametrize(
    "args",
    [["rules"], ["rules", "-o", "json"], ["validate", "-o", "sarif", str(VALID)], ["validate", str(VALID)]],
    ids=["rules", "rules-json", "validate-sarif", "validate-text"],
)
def test_standard_output_on_a_full_disk_is_one_line(args: list[str]) -> None:
    with open("/dev/full", "w") as full:  # noqa: PTH123 - a device, opened as the child's stdout
        p = _run(args, stdout=full.fileno())
    _one_line_naming(p, "standard output: cannot write: No space left on device")
