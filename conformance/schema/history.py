"""A schema as it stood at a git revision, for `turnspec schema diff --against REV PATH`.

The pre-commit hook `turnspec-schema-diff` compares each staged schema with the last
commit, so a change that makes the schema BREAKING is stopped before it is committed.
The old side is the whole schema folder at REV (cross-file `$ref`s need the siblings),
materialised into a private temporary folder that is always removed; the working tree is
only read. Git is asked with `git show`, never with a command that writes.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import InputError

MAX_FILE_BYTES = 16 * 1024 * 1024


def _git(cwd: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"git {' '.join(args)}: {exc}") from None
    if done.returncode != 0:
        msg = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise InputError(f"git {' '.join(args)}: {msg[-1] if msg else f'exit {done.returncode}'}")
    return done.stdout


@contextlib.contextmanager
def at_revision(rev: str, path: Path) -> Iterator[Path | None]:
    """The counterpart of `path` (a schema file or folder) at `rev`, or None when `path` did
    not exist there (a new schema has nothing to break)."""
    path = path.resolve()
    folder = path if path.is_dir() else path.parent
    if not folder.is_dir():
        raise InputError(f"{path}: no such file or directory")
    top = Path(_git(folder, "rev-parse", "--show-toplevel").decode().strip())
    rel_folder = folder.relative_to(top).as_posix()
    names = _git(top, "ls-tree", "--name-only", f"{rev}:{rel_folder}" if rel_folder != "." else f"{rev}:").decode()
    with tempfile.TemporaryDirectory(prefix="turnspec-schema-") as tmp:
        old_folder = Path(tmp) / folder.name
        old_folder.mkdir()
        for name in names.splitlines():
            if not name.endswith(".json"):
                continue
            blob = _git(top, "show", f"{rev}:{rel_folder}/{name}" if rel_folder != "." else f"{rev}:{name}")
            if len(blob) > MAX_FILE_BYTES:
                raise InputError(f"{rel_folder}/{name} at {rev}: larger than {MAX_FILE_BYTES} bytes")
            (old_folder / name).write_bytes(blob)
        old = old_folder if path.is_dir() else old_folder / path.name
        yield old if old.exists() else None
