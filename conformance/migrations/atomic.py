"""Write a file completely, then move it into place: readers see the old file or the
new one, never a half-written one (also the guarantee `--in-place` needs)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def atomic_write(path: Path, chunks: Iterable[bytes]) -> None:
    """Write `chunks` to a temporary file beside `path`, fsync it, rename it over `path`.

    The temporary file lives in the same directory (a rename is only atomic within a
    file system) and takes the old file's permission bits when there is one. On any
    error the temporary file is removed and `path` is left as it was.
    """
    parent = path.parent if str(path.parent) else Path()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            tmp.chmod(path.stat().st_mode & 0o7777)
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable (POSIX)
        dir_fd = os.open(parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
