"""Reading the side files a run is given (`--tools`, `--pricing`): regular files only, bounded.

A FIFO, a character device (`/dev/zero`) or a directory behind the name would hang the
read or grow without bound; the file is `stat`ed before it is opened (and the opened
descriptor checked again, so a swap in between changes nothing), and at most `limit`
bytes are read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ...errors import InputError

SIDE_FILE_LIMIT = 64 * 1024 * 1024


def read_regular(path: Path, what: str, limit: int = SIDE_FILE_LIMIT) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes; else InputError."""
    try:
        st = path.stat()
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what} file: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file (FIFO, device or socket)"
        raise InputError(f"{path}: {what} file is {kind}")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what} file: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise InputError(f"{path}: {what} file is not a regular file")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{path}: {what} file is larger than {limit} bytes")
    return data
