"""Writing outputs safely: the one place every command that writes goes through.

The rules (issue 9, "nothing lost"):

- an output is never the input, never inside an input, and never contains one
  (`convert --force d/t.jsonl d` must not delete `d` and the input with it); paths are
  compared after resolving symlinks, so a link cannot smuggle an input in;
- an existing output is only replaced when the user said `--force`;
- the new output is built beside its destination, in a private staging folder this run
  creates, and moved into place with one rename once it is complete: a reader sees the
  old output or the new one, never half of one; a failed run leaves the destination as
  it was;
- only what this run created is ever removed (the staging folder; with `--force`, the
  old output being replaced);
- files get the usual mode (`0o666 & ~umask`, or the mode of the file they replace),
  not the 0600 of `mkstemp`;
- a missing or read-only output folder is a one-line `InputError`, not a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from .errors import InputError


def real(path: Path | str) -> Path:
    """`path` with every symlink resolved (also when the last parts do not exist yet)."""
    return Path(os.path.realpath(path))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(existing: Path | None = None) -> int:
    """The mode a new output file gets: the replaced file's, else `0o666 & ~umask`."""
    if existing is not None:
        with contextlib.suppress(OSError):
            st = existing.stat()
            if stat.S_ISREG(st.st_mode):
                return st.st_mode & 0o7777
    return 0o666 & ~_umask()


def check_output(dst: Path, inputs: Iterable[Path], *, force: bool = False, in_place: bool = False) -> Path:
    """Refuse an output that would lose data; return the resolved destination.

    `in_place` allows `dst` to be exactly the (single) input, which is then replaced
    atomically; it still may not contain or sit inside another input.
    """
    target = real(dst)
    for src in inputs:
        source = real(src)
        if target == source:
            if in_place:
                continue
            raise InputError(f"{dst}: is the input {src}; writing it would overwrite the input")
        if target in source.parents:
            raise InputError(f"{dst}: contains the input {src}; choose an output outside it")
        if source in target.parents:
            raise InputError(f"{dst}: is inside the input {src}; choose an output outside it")
    if os.path.lexists(target) and not in_place:
        if not force:
            raise InputError(f"{dst}: exists; pass --force to overwrite")
        mode = os.lstat(target).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise InputError(f"{dst}: exists and is not a regular file or a folder; not replacing it")
    parent = target.parent
    if not parent.is_dir():
        what = "does not exist" if not os.path.lexists(parent) else "is not a folder"
        raise InputError(f"{dst}: output folder {parent} {what}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise InputError(f"{dst}: output folder {parent} is not writable")
    return target


@contextlib.contextmanager
def staged(dst: Path) -> Iterator[Path]:
    """Yield a path to build the output at (nothing exists there yet: the writer creates
    a file or a folder); on a clean exit move it over `dst` in one rename.

    The staging folder is created beside `dst` (a rename is atomic only within one file
    system) and removed on every way out, with whatever the writer left in it.
    """
    target = real(dst)
    try:
        stage = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".turnspec", dir=target.parent))
    except OSError as exc:
        raise InputError(f"{dst}: cannot write in {target.parent}: {exc.strerror or exc}") from None
    try:
        built = stage / target.name
        yield built
        if not os.path.lexists(built):
            raise InputError(f"{dst}: the writer produced no output")
        if built.is_file() and not built.is_symlink():
            built.chmod(file_mode(target if target.is_file() else None))
            _fsync(built)
        _install(built, target, stage)
        _fsync(target.parent)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _install(built: Path, target: Path, stage: Path) -> None:
    """Move `built` to `target`. A file replaces a file in one `os.replace`; otherwise
    the old output is first moved into the staging folder (so it stays whole until the
    new one is in place, and goes away with the staging folder)."""
    old_is_dir = target.is_dir() and not target.is_symlink()
    if not os.path.lexists(target) or (built.is_file() and not old_is_dir):
        built.replace(target)
        return
    aside = stage / ".replaced"
    target.rename(aside)
    try:
        built.rename(target)
    except OSError:
        aside.rename(target)
        raise


def _fsync(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_bytes(dst: Path, chunks: Iterable[bytes]) -> None:
    """Write `chunks` to `dst` atomically (see `staged`); the caller has run `check_output`."""
    with staged(dst) as tmp:
        try:
            with tmp.open("xb") as f:
                for chunk in chunks:
                    f.write(chunk)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES):
                raise InputError(f"{dst}: cannot write: {exc.strerror}") from None
            raise
