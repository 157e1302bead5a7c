"""`[tool.turnspec]` in `pyproject.toml`: defaults for `turnspec validate` (and, with
`samples`, for `turnspec conform`, the pytest plugin and the base test class).

The file is found as ruff finds its own: the closest `pyproject.toml` holding a
`[tool.turnspec]` table, from the current folder up to the root. A flag given on the
command line overrides the key. A key this module does not know, or a value of the wrong
type, is a one-line `InputError` naming the file and the key (exit 2).

    [tool.turnspec]
    select = ["TS0", "TS2"]              # rule ids or prefixes, as --select
    ignore = ["TS208"]                   # as --ignore
    strict = true                        # as --strict
    output = "github"                    # as --output
    format = "canonical"                 # as --format
    per-file-ignores = { "legacy/*" = ["TS020"] }   # glob (fnmatch, relative to the file's folder) -> ids
    samples = "../recordings"            # conform: third-party recordings to replay (relative to the file's folder)
    lock-wait = 5                        # as --lock-wait: seconds to wait for a store another process locked
"""

from __future__ import annotations

import contextlib
import fnmatch
import functools
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError

KEYS = ("select", "ignore", "per-file-ignores", "strict", "output", "format", "samples", "lock-wait")


@dataclass(frozen=True)
class Config:
    """The keys of one `[tool.turnspec]` table (None: not set there)."""

    path: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    strict: bool | None = None
    output: str | None = None
    format: str | None = None
    samples: Path | None = None  # resolved against the file's folder
    lock_wait: float | None = None
    _root: Path = field(default_factory=Path, repr=False)

    def _names(self, path: str) -> set[str]:
        rel = _relative(path, self._root)
        return {path} if rel is None else {path, rel}

    def ignored(self, path: str, rule_id: str) -> bool:
        """Whether `per-file-ignores` leaves out `rule_id` in the file at `path`."""
        if not self.per_file_ignores:
            return False
        names = self._names(path)
        return any(
            rule_id.startswith(ids) and any(fnmatch.fnmatch(n, glob) for n in names)
            for glob, ids in self.per_file_ignores
        )


@functools.lru_cache(maxsize=256)
def _relative(path: str, root: Path) -> str | None:
    """`path` relative to `root`, resolved once per path (`ignored` asks for every finding)."""
    with contextlib.suppress(ValueError):  # another drive (Windows): the path as given only
        return Path(os.path.relpath(Path(path).resolve(), root)).as_posix()
    return None


def find(start: Path | None = None) -> Path | None:
    """The closest `pyproject.toml` with a `[tool.turnspec]` table, from `start` (the
    current folder) up."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and "turnspec" in _tool(candidate):
            return candidate
    return None


def _tool(path: Path) -> Mapping[str, Any]:
    try:
        with path.open("rb") as f:
            doc = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    tool = doc.get("tool")
    return tool if isinstance(tool, dict) else {}


def _ids(path: Path, key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{path}: [tool.turnspec] {key}: expected a list of rule ids or prefixes")
    return tuple(value)


def load(path: Path | None) -> Config:
    """The `[tool.turnspec]` table of `path` (an empty `Config` for None)."""
    if path is None:
        return Config()
    table = _tool(path).get("turnspec")
    if not isinstance(table, dict):
        raise InputError(f"{path}: [tool.turnspec] is not a table")
    for key in table:
        if key not in KEYS:
            raise InputError(f"{path}: [tool.turnspec]: unknown key {key!r} (known: {', '.join(KEYS)})")
    values: dict[str, Any] = {"path": path, "_root": path.parent.resolve()}
    for key in ("select", "ignore"):
        if key in table:
            values[key] = _ids(path, key, table[key])
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise InputError(f"{path}: [tool.turnspec] per-file-ignores: expected a table of glob = [ids]")
        values["per_file_ignores"] = tuple(
            (glob, _ids(path, f"per-file-ignores {glob!r}", ids)) for glob, ids in pfi.items()
        )
    if "strict" in table:
        if not isinstance(table["strict"], bool):
            raise InputError(f"{path}: [tool.turnspec] strict: expected true or false")
        values["strict"] = table["strict"]
    for key in ("output", "format"):
        if key in table:
            if not isinstance(table[key], str):
                raise InputError(f"{path}: [tool.turnspec] {key}: expected a string")
            values[key] = table[key]
    if "samples" in table:
        if not isinstance(table["samples"], str) or not table["samples"]:
            raise InputError(f"{path}: [tool.turnspec] samples: expected a folder path (a string)")
        values["samples"] = path.parent / table["samples"]
    if "lock-wait" in table:
        wait = table["lock-wait"]
        if isinstance(wait, bool) or not isinstance(wait, int | float) or not 0 <= wait < float("inf"):
            raise InputError(f"{path}: [tool.turnspec] lock-wait: expected a number of seconds, 0 or more")
        values["lock_wait"] = float(wait)
    return Config(**values)
