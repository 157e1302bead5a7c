"""Standard output and error as every command writes them.

- one-line messages on standard error (`error`, `note`), escaped whatever they hold;
- streams that never fail a run on a character their encoding lacks (`tolerant_streams`);
- standard output marked (`marked_stdout`): a failed write to it raises `StdoutError`
  (exit 2, one line), told apart from any other file's OSError; `discard_stdout` sends
  what is left nowhere once it failed or its reader went away (`| head`).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import Any

from ..core import escaping

__all__ = ["StdoutError", "discard_stdout", "error", "marked_stdout", "note", "stdout_failed", "tolerant_streams"]


def error(message: str) -> None:
    """One line on stderr, `turnspec: <message>`, whatever the message holds (line breaks
    and control characters in it are shown as escapes: `escaping.text_line`)."""
    sys.stderr.write(escaping.text_line(f"turnspec: {message}") + "\n")


def note(message: str) -> None:
    """A note on stderr that changes neither the report nor the exit code (e.g. a
    `--resume` entry that is recomputed)."""
    error(f"note: {message}")


def tolerant_streams() -> None:
    """Standard output and error never fail a run on a character their encoding lacks
    (`PYTHONIOENCODING=ascii`, a latin-1 terminal): it is written as a `\\uXXXX` escape."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # a TextIOWrapper; a replaced stream may not be
        if callable(reconfigure):
            with contextlib.suppress(ValueError, io.UnsupportedOperation):
                reconfigure(errors="backslashreplace")


class StdoutError(OSError):
    """A write to standard output failed (a full disk, `> /dev/full`): exit 2, one line."""


class _MarkedStdout(io.RawIOBase):
    """File descriptor 1, whose failed writes raise `StdoutError`. Python's own stdout
    raises a bare OSError, which cannot be told from any other file's (and its buffer
    drops what it failed to write, so a second flush does not tell either); this layer
    is the one place that knows the error is standard output's. It never closes fd 1."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return os.isatty(self.fd)

    def write(self, data: Any) -> int:
        try:
            return os.write(self.fd, data)
        except BrokenPipeError:
            raise  # `| head`: handled as such
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None


@contextlib.contextmanager
def marked_stdout() -> Iterator[None]:
    """While the command runs, the process's standard output (when `sys.stdout` is it,
    not a test's capture) writes through `_MarkedStdout`, with the same encoding."""
    original = sys.stdout
    if original is None or original is not sys.__stdout__ or not isinstance(original, io.TextIOWrapper):
        yield
        return
    try:
        fd = original.fileno()
    except (OSError, ValueError):
        yield
        return
    original.flush()
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(_MarkedStdout(fd)), encoding=original.encoding, errors=original.errors,
        line_buffering=bool(original.line_buffering),
    )  # fmt: skip
    try:
        yield
    finally:
        marked, sys.stdout = sys.stdout, original
        with contextlib.suppress(OSError, ValueError):
            marked.flush()  # already done by main (or failed there, and fd 1 is /dev/null now)


def discard_stdout() -> None:
    """Send what is left for standard output nowhere, so the interpreter's final flush
    neither fails again nor prints a traceback-like 'Exception ignored' message."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def stdout_failed(exc: StdoutError) -> int:
    error(f"standard output: cannot write: {exc.strerror or exc}")
    discard_stdout()
    return 2
