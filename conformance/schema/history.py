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


class Revision:
    """The schema folders of one git revision, each read from git once (the hook checks
    several files of one folder) into one private temporary folder, removed on exit."""

    def __init__(self, rev: str) -> None:
        self.rev = rev
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._folders: dict[Path, Path] = {}

    def __enter__(self) -> Revision:
        self._tmp = tempfile.TemporaryDirectory(prefix="turnspec-schema-")
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._tmp is not None
        self._tmp.cleanup()

    def counterpart(self, path: Path) -> Path | None:
        """`path` (a schema file or folder) at this revision, or None when it did not
        exist there (a new schema has nothing to break)."""
        path = path.resolve()
        folder = path if path.is_dir() else path.parent
        if not folder.is_dir():
            raise InputError(f"{path}: no such file or directory")
        old_folder = self._folders.get(folder)
        if old_folder is None:
            old_folder = self._folders[folder] = self._materialise(folder)
        old = old_folder if path.is_dir() else old_folder / path.name
        return old if old.exists() else None

    def _materialise(self, folder: Path) -> Path:
        assert self._tmp is not None
        rev = self.rev
        top = Path(_git(folder, "rev-parse", "--show-toplevel").decode().strip())
        rel_folder = folder.relative_to(top).as_posix()
        names = _git(top, "ls-tree", "--name-only", f"{rev}:{rel_folder}" if rel_folder != "." else f"{rev}:").decode()
        old_folder = Path(self._tmp.name) / str(len(self._folders)) / folder.name
        old_folder.mkdir(parents=True)
        for name in names.splitlines():
            if not name.endswith(".json"):
                continue
            blob = _git(top, "show", f"{rev}:{rel_folder}/{name}" if rel_folder != "." else f"{rev}:{name}")
            if len(blob) > MAX_FILE_BYTES:
                raise InputError(f"{rel_folder}/{name} at {rev}: larger than {MAX_FILE_BYTES} bytes")
            (old_folder / name).write_bytes(blob)
        return old_folder


@contextlib.contextmanager
def at_revision(rev: str, path: Path) -> Iterator[Path | None]:
    """The counterpart of `path` (a schema file or folder) at `rev`, or None when `path` did
    not exist there (a new schema has nothing to break)."""
    with Revision(rev) as revision:
        yield revision.counterpart(path)
