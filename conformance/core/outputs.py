"""Writing outputs safely: the one place every command that writes goes through.

The rules (issue 9, "nothing lost"):

- an output is never the input, never inside an input, and never contains one
  (`convert --force d/t.jsonl d` must not delete `d` and the input with it); paths are
  compared after resolving symlinks, so a link cannot smuggle an input in;
- an existing output is only replaced when the user said `--force`;
- the new output is built beside its destination, in a private staging folder this run
  creates, and moved into place with one rename once it is complete: a reader sees the
  old output or the new one, never half of one; a failed run leaves the destination as
  it was; a folder replacing a folder is swapped in one `renameat2(RENAME_EXCHANGE)` on
  Linux (elsewhere: two renames, undone on failure);
- a run stopped while writing by SIGINT, SIGTERM or SIGHUP removes its staging folder
  first (SIGTERM and SIGHUP, which would end the process before any clean-up, are
  caught while a stage exists, and delivered again once it is gone, so the process still
  ends by that signal); the destination keeps the old output, or stays absent;
- a run killed while writing (SIGKILL, power loss) leaves its staging folder, named
  `.{name}.{host}.{pid}.XXXXXXXX.turnspec`; the next run that checks an output of the
  same name removes the stages of dead processes of this host, and first restores the
  old output from one (`.replaced`) when a kill between the two renames left the
  destination missing (`recover`);
- only what this run created is ever removed (the staging folder; with `--force`, the
  old output being replaced);
- files get the usual mode (`0o666 & ~umask`, or the mode of the file they replace),
  not the 0600 of `mkstemp`;
- a missing or read-only output folder, and a write that fails (a full disk, a quota, a
  file-size limit), is a one-line `InputError` naming the output, not a traceback; the
  destination is then left as it was.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import shutil
import signal
import socket
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .errors import InputError

# what only a write can fail with: an OSError carrying one of these (or raised while an
# output is written) is the output's fault, never the input's
WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS})


def cannot_write(dst: Path | str, exc: OSError) -> InputError:
    """The one-line error of a failed write to `dst`."""
    return InputError(f"{dst}: cannot write: {exc.strerror or exc}")


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
    recover(target)
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


STAGE_SUFFIX = ".turnspec"


def host_name() -> str:
    """This host's name as it appears in a stage's name: no dots (they separate the
    parts), at most 32 characters (the stage's name must fit in NAME_MAX)."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname())[:32] or "host"


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, another user's
        return True
    return True


def recover(target: Path) -> None:
    """Clean up after runs that were killed while writing `target` (best effort, never
    raises): remove the staging folders beside it that belong to dead processes of this
    host, and if `target` is missing while one of them holds the old output
    (`.replaced`: killed between the two renames of `_install`), move it back first.
    Stages of live processes, of other hosts (a shared folder) and of names this module
    did not write are left alone."""
    prefix = f".{target.name}."
    try:
        names = [p.name for p in target.parent.iterdir() if p.name.startswith(prefix) and p.name.endswith(STAGE_SUFFIX)]
    except OSError:
        return
    host = host_name()
    for name in sorted(names):
        parts = name[len(prefix) : -len(STAGE_SUFFIX)].split(".")
        if len(parts) != 3 or parts[0] != host or not parts[1].isdigit() or pid_alive(int(parts[1])):
            continue
        stage = target.parent / name
        aside = stage / ".replaced"
        with contextlib.suppress(OSError):
            if not os.path.lexists(target) and os.path.lexists(aside):
                aside.rename(target)
        shutil.rmtree(stage, ignore_errors=True)


class _Stopped(BaseException):
    """SIGTERM or SIGHUP met while a stage exists (`_stoppable`): raised where the process
    is, so the stage's clean-up runs before the signal ends it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


_STOPPING = (signal.SIGTERM, *((signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ()))


@contextlib.contextmanager
def _stoppable() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into `_Stopped` for the block, where they would end the
    process at once (their default); a signal someone else handles is left to them, and
    outside the main thread (no handler can be set there) nothing changes. A `_Stopped`
    leaving the block is the signal again, with its default action: the process ends as
    it was told to, after the block's clean-up."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        for sig in installed:  # one is enough: a second one must not cut the clean-up short
            signal.signal(sig, signal.SIG_IGN)
        raise _Stopped(signum)

    installed = {sig: signal.signal(sig, stop) for sig in _STOPPING if signal.getsignal(sig) == signal.SIG_DFL}
    try:
        yield
    except _Stopped as stopped:
        for sig, old in installed.items():
            signal.signal(sig, old)
        installed.clear()
        os.kill(os.getpid(), stopped.signum)  # ends the process here (the default action)
        raise SystemExit(128 + stopped.signum) from None  # the signal is blocked: exit as a shell reports it
    finally:
        for sig, old in installed.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def staged(dst: Path) -> Iterator[Path]:
    """Yield a path to build the output at (nothing exists there yet: the writer creates
    a file or a folder); on a clean exit move it over `dst` in one rename.

    The staging folder is created beside `dst` (a rename is atomic only within one file
    system), named with this host and process (so a later run can tell it is stale, see
    `recover`), and removed on every way out, with whatever the writer left in it (also
    when SIGTERM or SIGHUP stops the run meanwhile: `_stoppable`).
    """
    with _stoppable(), _staged(dst) as built:
        yield built


@contextlib.contextmanager
def _staged(dst: Path) -> Iterator[Path]:
    target = real(dst)
    try:
        stage = Path(
            tempfile.mkdtemp(
                prefix=f".{target.name}.{host_name()}.{os.getpid()}.", suffix=STAGE_SUFFIX, dir=target.parent
            )
        )
    except OSError as exc:
        raise InputError(f"{dst}: cannot write in {target.parent}: {exc.strerror or exc}") from None
    try:
        built = stage / target.name
        try:
            yield built
        except OSError as exc:
            if exc.filename is not None and stage not in Path(os.fsdecode(exc.filename)).parents:
                raise  # about another file (an input): the caller names it
            raise cannot_write(dst, exc) from None
        if not os.path.lexists(built):
            raise InputError(f"{dst}: the writer produced no output")
        try:
            if built.is_file() and not built.is_symlink():
                built.chmod(file_mode(target if target.is_file() else None))
                _fsync(built)
            _install(built, target, stage)
        except OSError as exc:
            raise cannot_write(dst, exc) from None
        _fsync(target.parent)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _install(built: Path, target: Path, stage: Path) -> None:
    """Move `built` to `target`. A file replaces a file in one `os.replace`; otherwise
    both are swapped in one `renameat2(RENAME_EXCHANGE)` (the old output, now at
    `built`, goes away with the staging folder). Where the swap is not supported, the
    old output is first moved into the staging folder (`.replaced`: whole until the new
    one is in place; moved back if that fails, or by `recover` after a kill)."""
    old_is_dir = target.is_dir() and not target.is_symlink()
    if not os.path.lexists(target) or (built.is_file() and not old_is_dir):
        built.replace(target)
        return
    if _exchange(built, target):
        return
    aside = stage / ".replaced"
    target.rename(aside)
    try:
        built.rename(target)
    except OSError:
        aside.rename(target)
        raise


AT_FDCWD = -100
RENAME_EXCHANGE = 2  # linux/fs.h


def _libc_renameat2() -> Any:
    """glibc's `renameat2` (2.28+), or None (another OS or C library). The standard
    library has no `renameat2`, so it is called through ctypes."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_renameat2: Any = _libc_renameat2()


def _exchange(a: Path, b: Path) -> bool:
    """Swap `a` and `b` (both exist) in one atomic step; False where the kernel or the
    file system cannot (no `renameat2`, EINVAL, ENOSYS, ENOTSUP): use two renames."""
    if _renameat2 is None:
        return False
    if _renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fsync(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def append_text(path: Path | str, text: str) -> None:
    """Append `text` to `path` (`$GITHUB_STEP_SUMMARY`: appending is GitHub's protocol),
    whole or not at all: a write that fails midway (a full disk) is cut back to where
    the file ended, and is a one-line `InputError` naming `path`."""
    data = memoryview(text.encode("utf-8"))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    end: int | None = None  # where a regular file ended (a device cannot be cut back)
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            end = os.lseek(fd, 0, os.SEEK_END)
        while data:
            data = data[os.write(fd, data) :]
    except OSError as exc:
        if end is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, end)
        raise cannot_write(path, exc) from None
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
