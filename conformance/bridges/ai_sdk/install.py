"""Where the AI SDK bridge's Node packages live, and `turnspec ai-sdk install` (`npm ci`).

The bridge's program (`bridge.mjs`, `lib/`) and its pinned `package.json` and
`package-lock.json` ship inside turnspec; the packages themselves are installed once, with
`npm ci` from that lock, into a folder of the user's: `$TURNSPEC_AI_SDK_DIR`, else
`$XDG_CACHE_HOME/turnspec/ai-sdk` (`~/.cache/turnspec/ai-sdk`). `turnspec conform
ai-sdk:<api>` reads them from there and never touches the network; when node or the
packages are missing (or were installed from another lock) it says so in one line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ...core.errors import InputError

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "bridge.mjs"
PACKAGE_FILES = ("package.json", "package-lock.json")
ENV_DIR = "TURNSPEC_AI_SDK_DIR"
INSTALL = "turnspec ai-sdk install"


def default_dir() -> Path:
    """`$TURNSPEC_AI_SDK_DIR`, else the user cache's `turnspec/ai-sdk`."""
    named = os.environ.get(ENV_DIR)
    if named:
        return Path(named).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "turnspec" / "ai-sdk"


def node() -> str | None:
    """The `node` executable on PATH (None when there is none)."""
    return shutil.which("node")


def problem(folder: Path) -> str | None:
    """Why the bridge cannot run from `folder` (one line, with the command that fixes it),
    or None when node is there and `folder` holds the packages of the shipped lock."""
    if node() is None:
        return f"node is not on PATH (the AI SDK bridge runs on Node.js >= 18; then run `{INSTALL}`)"
    shipped = (HERE / "package-lock.json").read_bytes()
    try:
        installed = (folder / "package-lock.json").read_bytes()
    except OSError:
        installed = None
    if installed is None or not (folder / "node_modules").is_dir():
        return f"the AI SDK packages are not installed in {folder} (run `{INSTALL}`)"
    if installed != shipped:
        return f"the AI SDK packages in {folder} are from another turnspec release (run `{INSTALL}` again)"
    return None


def require(folder: Path | None = None) -> Path:
    """The packages' folder, or an `InputError` (exit 2) saying what is missing."""
    where = folder or default_dir()
    why = problem(where)
    if why is not None:
        raise InputError(f"ai-sdk: {why}")
    return where


def install(folder: Path | None = None, *, npm: str | None = None) -> Path:
    """Copy the pinned package files into `folder` and run `npm ci` there (the only step
    that uses the network: the npm registry). Returns the folder."""
    where = folder or default_dir()
    exe = npm or shutil.which("npm")
    if exe is None:
        raise InputError("ai-sdk install: npm is not on PATH (install Node.js >= 18, which ships npm)")
    try:
        where.mkdir(parents=True, exist_ok=True)
        for name in PACKAGE_FILES:
            staged = where / f".{name}.turnspec-tmp"
            shutil.copyfile(HERE / name, staged)
            staged.replace(where / name)
    except OSError as exc:
        raise InputError(f"ai-sdk install: cannot write {where}: {exc.strerror or exc}") from None
    done = subprocess.run(
        [exe, "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=where,
        check=False,
    )
    if done.returncode != 0:
        raise InputError(f"ai-sdk install: `npm ci` in {where} failed (exit {done.returncode})")
    return where
