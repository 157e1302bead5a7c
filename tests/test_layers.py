"""The import-linter contracts (.importlinter) hold, and they catch an upward import.

The layering is a property of the whole package, so the check runs `lint-imports` on the
checkout; the second test plants an upward import in a copy and proves the contract fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")

pytestmark = pytest.mark.skipif(LINT is None, reason="import-linter is not installed (pip install -e '.[test]')")


def _lint(pkg_parent: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{pkg_parent}{os.pathsep}{ROOT / 'generated'}"}
    assert LINT is not None
    return subprocess.run(
        [LINT, "--config", str(ROOT / ".importlinter"), "--no-cache"],
        cwd=pkg_parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_layers_hold_on_the_checkout() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@pytest.mark.parametrize(
    ("module", "upward"),
    [
        ("findings.py", "from . import cli"),  # core importing the CLI
        ("formats/chibi/__init__.py", "from .. import geppetto"),  # one format importing a peer
        ("adapters/__init__.py", "from .. import suite"),  # adapters importing the suite above
    ],
)
def test_an_upward_import_breaks_the_contract(tmp_path: Path, module: str, upward: str) -> None:
    shutil.copytree(ROOT / "conformance", tmp_path / "conformance", ignore=shutil.ignore_patterns("__pycache__"))
    target = tmp_path / "conformance" / module
    target.write_text(target.read_text() + f"\n{upward}  # planted\n")
    done = _lint(tmp_path)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "BROKEN" in done.stdout or "broken" in done.stdout.lower()
