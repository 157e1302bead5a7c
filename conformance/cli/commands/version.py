"""`turnspec version` (and the `--version` flag): the package's version.

The console script answers both before the CLI is imported (`conformance.entry`); these
answer them when the CLI runs them itself (`python -m conformance.cli`, `cli.main`)."""

from __future__ import annotations

import sys

import typer

from ... import __version__


def register(app: typer.Typer) -> None:
    app.command()(version)


def version() -> None:
    """Print the turnspec version."""
    sys.stdout.write(f"turnspec {__version__}\n")


def version_flag(value: bool) -> None:
    """The `--version` flag's callback: the version, then exit 0."""
    if value:
        version()
        raise typer.Exit(0)
