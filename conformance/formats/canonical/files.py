"""Reading the side files a run is given (`--tools`, `--pricing`).

`jsonio.read_input` does the work (regular files only, `stat`ed before opening, bounded);
this only says which flag the file came from.
"""

from __future__ import annotations

from pathlib import Path

from ...core.errors import InputError
from ...core.jsonio import read_input

SIDE_FILE_LIMIT = 64 * 1024 * 1024


def read_regular(path: Path, what: str, limit: int = SIDE_FILE_LIMIT) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes; else InputError naming `what`."""
    try:
        return read_input(path, limit=limit)
    except InputError as exc:
        raise InputError(f"{what} {exc}") from None
