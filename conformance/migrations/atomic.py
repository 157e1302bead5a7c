"""Write a file completely, then move it into place: readers see the old file or the
new one, never a half-written one (also the guarantee `--in-place` needs).

A thin name for `conformance.core.outputs.write_bytes`, which every command that writes uses.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..core.outputs import write_bytes


def atomic_write(path: Path, chunks: Iterable[bytes]) -> None:
    """Write `chunks` beside `path` (in a private staging folder), then rename it over
    `path`. The file keeps the mode of the file it replaces, else gets `0o666 & ~umask`;
    on any error the staging folder is removed and `path` is left as it was."""
    write_bytes(path, chunks)
