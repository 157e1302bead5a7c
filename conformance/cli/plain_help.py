"""`--help` when standard output is not a terminal (a pipe, a file, a CI log): click's plain
layout, every word of every help string shown and wrapped at spaces, never cut. The rich
layout is a table that fits the terminal, so without one (80 columns) its cells end in
`...` (issue 39, item 8)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

RAW_HELP = "_turnspec_raw_help"
"""The attribute holding a parameter's help as written, before it was escaped for rich."""


def wanted() -> bool:
    """Plain help: standard output is not a terminal."""
    isatty = getattr(sys.stdout, "isatty", None)
    return not (callable(isatty) and isatty())


@contextlib.contextmanager
def plain(cmd: Any) -> Iterator[None]:
    """While the help of `cmd` is written: no rich markup (typer then lays it out as click
    does), and each parameter's help as written (rich's bracket escapes taken off)."""
    params = [p for p in getattr(cmd, "params", []) if hasattr(p, RAW_HELP)]
    saved = [(p, p.help) for p in params]
    subs = [c for c in getattr(cmd, "commands", {}).values() if not c.short_help and c.help]
    mode = cmd.rich_markup_mode
    try:
        cmd.rich_markup_mode = None
        for p in params:
            p.help = getattr(p, RAW_HELP)
        for c in subs:  # a sub-command's line: its first paragraph whole (click cuts it at 45 characters)
            c.short_help = " ".join(c.help.strip().split("\n\n", 1)[0].split())
        yield
    finally:
        cmd.rich_markup_mode = mode
        for p, text in saved:
            p.help = text
        for c in subs:
            c.short_help = None
