"""The pre-commit hooks in .pre-commit-hooks.yaml, run by pre-commit itself on a scratch
repository whose .pre-commit-config.yaml names this checkout (at its HEAD commit), as
another project would use them.

pre-commit builds the hooks' environment by pip-installing this checkout once (shared by
the tests through one PRE_COMMIT_HOME; `try-repo` would rebuild it on every call); that
needs the package index, as any pre-commit user's first run does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRE_COMMIT = shutil.which("pre-commit", path=str(Path(sys.executable).parent))
EXAMPLE = ROOT / "conformance" / "data" / "examples" / "session.jsonl"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(PRE_COMMIT is None or shutil.which("git") is None, reason="pre-commit or git is not installed"),
]


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True
    )


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    p = tmp_path / "proj"
    (p / "schemas").mkdir(parents=True)
    (p / "cassettes").mkdir()
    (p / "schemas" / "s.json").write_text(json.dumps({"type": "string", "maxLength": 10}))
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    hooks = "".join(f"      - id: {h}\n" for h in ("turnspec-validate", "turnspec-schema-diff", "turnspec-cassettes"))
    (p / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {head.stdout.strip()}\n    hooks:\n{hooks}"
    )
    git(p, "init", "-q")
    git(p, "add", ".")
    git(p, "commit", "-qm", "start")
    yield p


def hook(home: Path, project: Path, hook_id: str, *files: str) -> subprocess.CompletedProcess[str]:
    assert PRE_COMMIT is not None
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return subprocess.run(
        [PRE_COMMIT, "run", hook_id, "--files", *files],
        cwd=project, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def test_validate_hook_passes_a_valid_transcript_and_fails_a_broken_one(home: Path, project: Path) -> None:
    shutil.copy(EXAMPLE, project / "ok.jsonl")
    (project / "bad.jsonl").write_text('{"role": "user"}\n')
    assert hook(home, project, "turnspec-validate", "ok.jsonl").returncode == 0
    done = hook(home, project, "turnspec-validate", "bad.jsonl")
    assert done.returncode == 1 and "bad.jsonl:1" in done.stdout, done.stdout[-2000:]


def test_schema_diff_hook_stops_a_breaking_change_only(home: Path, project: Path) -> None:
    s = project / "schemas" / "s.json"
    s.write_text(json.dumps({"type": "string", "maxLength": 20}))  # relaxed: old data still valid
    relaxed = hook(home, project, "turnspec-schema-diff", "schemas/s.json")
    s.write_text(json.dumps({"type": "integer"}))
    breaking = hook(home, project, "turnspec-schema-diff", "schemas/s.json")
    assert breaking.returncode == 1 and "verdict: BREAKING" in breaking.stdout, breaking.stdout[-2000:]
    assert relaxed.returncode == 0 and "verdict: BREAKING" not in relaxed.stdout, relaxed.stdout[-2000:]


def test_schema_diff_hook_stops_a_change_that_rejects_stored_data(home: Path, project: Path) -> None:
    s = project / "schemas" / "o.json"
    s.write_text(json.dumps({"type": "object", "properties": {"a": {"type": "string"}}}))
    git(project, "add", ".")
    git(project, "commit", "-qm", "open object")
    # a new required field and a closed object: every stored {"a": ...} is now invalid
    closed = {"properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["b"]}
    s.write_text(json.dumps({"type": "object", **closed, "additionalProperties": False}))
    done = hook(home, project, "turnspec-schema-diff", "schemas/o.json")
    assert done.returncode == 1 and "verdict: FORWARD" in done.stdout, done.stdout[-2000:]
    assert "Failed" in done.stdout, done.stdout[-2000:]


def test_cassettes_hook_finds_a_planted_key(home: Path, project: Path) -> None:
    key = "sk-ant-api03-" + "Ab3x" * 24
    c = project / "cassettes" / "c.yaml"
    c.write_text(f"interactions:\n- request:\n    headers:\n      x-api-key:\n      - {key}\n")
    done = hook(home, project, "turnspec-cassettes", "cassettes/c.yaml")
    assert done.returncode == 1 and "CL001" in done.stdout, done.stdout[-2000:]
    c.write_text("interactions:\n- request:\n    headers:\n      x-api-key:\n      - REDACTED\n")
    assert hook(home, project, "turnspec-cassettes", "cassettes/c.yaml").returncode == 0
