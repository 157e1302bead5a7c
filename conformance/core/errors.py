"""Exceptions that mean "the run cannot proceed" (exit 2), as opposed to findings."""

from __future__ import annotations


class InputError(Exception):
    """A usage or I/O problem: a missing file, an unreadable --tools or --pricing file.

    The message names the file (and line/pointer when known); the CLI prints it and
    exits 2 without a traceback.
    """
