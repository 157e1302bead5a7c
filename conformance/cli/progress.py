"""The byte progress bar `validate` shows on a terminal for a large input."""

from __future__ import annotations

import contextlib
import sys
import time
import typing
from collections.abc import Iterator

__all__ = ["PROGRESS_MIN_BYTES", "Bar", "progress_bar", "wanted"]

PROGRESS_MIN_BYTES = 32 * 1024 * 1024


def wanted(total: int) -> bool:
    """Whether a run over `total` bytes shows a bar: standard error is a terminal and the
    input is large enough (`PROGRESS_MIN_BYTES`) for one to be worth its line."""
    return sys.stderr.isatty() and total >= PROGRESS_MIN_BYTES


class Bar:
    """A one-line byte progress bar on a terminal (standard error), drawn from `advance`.

    rich's `Progress` keeps the counts and renders the columns, but is never started: a
    started one (`Live`) redraws from a thread of its own, which would keep `--jobs` from
    forking its workers (`parallel.engine._start_method`), and takes over `sys.stdout`.
    The bar is the first line of the render, cropped to the terminal's width, so one
    carriage return and one erase-line take it off the screen: `clear()` before anything
    else is written to that terminal, and when the run ends."""

    ERASE = "\r\x1b[2K"  # to the start of the line, then erase it (ECMA-48 CR, EL 2)

    def __init__(self, stream: typing.TextIO, total: int) -> None:
        # function-level import: rich costs ~25 ms of start-up and only a terminal shows a bar
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self.stream = stream
        # names come from users' files: printed literally (no markup, emoji or highlighting)
        self.console = Console(file=stream, markup=False, emoji=False, highlight=False)
        self.progress = Progress(
            TextColumn("{task.description}", style="progress.description", markup=False), BarColumn(),
            DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
            console=self.console, auto_refresh=False, redirect_stdout=False, redirect_stderr=False,
        )  # fmt: skip
        self.task = self.progress.add_task("validating", total=total)
        self.due = 0.0
        self.drawn = False

    def advance(self, n: int) -> None:
        """Count `n` more bytes; redraw at most ten times a second."""
        self.progress.advance(self.task, n)
        now = time.monotonic()
        if now >= self.due:
            self.due = now + 0.1
            self.draw()

    def draw(self) -> None:
        # function-level import: rich is loaded only once a bar shows (`__init__`), never at start-up
        from rich.segment import Segments

        width = max(self.console.width - 1, 1)  # never the last column: no pending wrap
        table = self.progress.make_tasks_table(self.progress.tasks)
        lines = self.console.render_lines(table, self.console.options.update_width(width), pad=False)
        self.stream.write(self.ERASE)
        if lines:
            self.console.print(Segments(lines[0]), end="", no_wrap=True, overflow="crop", crop=True)
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        """Take the bar off the screen (it comes back at the next `advance` that redraws)."""
        if self.drawn:
            self.stream.write(self.ERASE)
            self.stream.flush()
            self.drawn = False


@contextlib.contextmanager
def progress_bar(show: bool, total: int, stream: typing.TextIO | None = None) -> Iterator[Bar | None]:
    """A byte progress bar on `stream` (standard error) while the block runs, removed when
    it ends, or None when there is none to show (`show` false, or not a terminal)."""
    stream = stream if stream is not None else sys.stderr
    if not show or not stream.isatty():
        yield None
        return
    bar = Bar(stream, total)
    try:
        yield bar
    finally:
        bar.clear()
