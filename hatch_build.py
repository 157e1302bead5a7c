"""The build hook of the wheel (hatchling's custom hook, pyproject.toml): compiles the
fast path's batch loop, `conformance/formats/canonical/fast/_walk.c`, when it can.

The compiled loop is optional: wherever it cannot be built (no C compiler, no Python
headers, Windows, `TURNSPEC_PURE_PYTHON=1`) the install goes on without it, says so in
one line, and `mirror._walk_py`, the same loop in Python, runs. Hatchling has no C
compilation of its own and setuptools is not in the build environment, so this calls
the compiler the way the interpreter was built to (`sysconfig`'s LDSHARED, CCSHARED and
include directory), which is what setuptools' build_ext does on POSIX."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

PACKAGE = "conformance/formats/canonical/fast"
SOURCE = f"{PACKAGE}/_walk.c"


def compile_walk(root: Path, out_dir: Path) -> Path:
    """`_walk.c` of `root` compiled into `out_dir`; raises with the reason when it cannot be."""
    if os.environ.get("TURNSPEC_PURE_PYTHON"):
        raise RuntimeError("TURNSPEC_PURE_PYTHON is set")
    ldshared, ccshared = sysconfig.get_config_var("LDSHARED"), sysconfig.get_config_var("CCSHARED")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if not ldshared or not suffix or sys.platform == "win32":
        raise RuntimeError("this interpreter has no POSIX shared-library build settings")
    src = root / SOURCE
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    out = out_dir / f"_walk{suffix}"
    tmp = out_dir / f".{out.name}.tmp"  # renamed into place: an import never meets half a file
    cmd = [
        *shlex.split(ldshared),
        *shlex.split(ccshared or ""),
        "-O2",
        f"-I{sysconfig.get_paths()['include']}",
        f'-DWALK_SOURCE_HASH="{digest}"',
        str(src),
        "-o",
        str(tmp),
    ]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["exit status " + str(done.returncode)])[-1]
            raise RuntimeError(f"the C compiler failed: {last}")
        tmp.replace(out)
    finally:
        tmp.unlink(missing_ok=True)  # a failed or timed-out build leaves nothing behind
    return out


class CustomBuildHook(BuildHookInterface):  # type: ignore[type-arg]  # hatchling's own generic
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        try:
            if version == "editable":  # beside its source, where the editable install imports it
                compile_walk(root, root / PACKAGE)
                return
            out_dir = Path(tempfile.mkdtemp(prefix="turnspec-walk-"))
            built = compile_walk(root, out_dir)
        except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
            print(
                f"turnspec: the fast path's compiled loop was not built ({exc}); the Python loop runs", file=sys.stderr
            )
            return
        build_data["force_include"][str(built)] = f"{PACKAGE}/{built.name}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
