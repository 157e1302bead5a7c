"""`turnspec`: a thin shell over the library API (conformance.api and friends).

Exit codes: 0 valid (warnings allowed), 1 violations, 2 usage or I/O error.

This module only wires the commands: each lives in `commands/` (`validate`, `rules`,
`version` and one module per group), typer's classes as the CLI shows them in
`typer_classes`, the progress bar in `progress`, standard output and error in `streams`,
how a run ends in `exits`; the rule catalogue is `conformance.catalogue`.
"""

from __future__ import annotations

import copy
import functools
import sys
from typing import Annotated

import typer
from typer import _click as click  # typer vendors click: its classes are the ones typer builds

from ..catalogue import every_rule
from . import exits
from .commands import OWN, register_all
from .commands.version import version_flag
from .streams import StdoutError, discard_stdout, marked_stdout, stdout_failed, tolerant_streams
from .typer_classes import Group

__all__ = ["app", "command", "every_rule", "main"]  # every_rule: read here by code written before `catalogue`

app = typer.Typer(
    name="turnspec",
    help="Validate LLM conversation transcripts and check provider adapters against the canonical format.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=Group,
)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit", callback=version_flag, is_eager=True)
    ] = False,
) -> None:
    """Validate LLM conversation transcripts and check provider adapters against the canonical format."""


register_all(app, OWN)  # the CLI's own commands, first in --help; the others when `command()` builds it


@functools.cache
def command() -> click.Command:
    """The click command of the whole CLI, built once per process (the sub-command groups
    registered here; building it from the typer app is the slow part of a call, so
    repeated `main()` calls, as in tests, share it)."""
    register_all(app)
    return typer.main.get_command(app)


@functools.cache
def _own_command(name: str) -> click.Command:
    """The CLI with only `name`, one of the CLI's own commands (`validate`, `rules`,
    `rule`, `version`), for a call that runs it: building every command evaluates every
    command's annotations and imports every command module, which such a call needs not
    (its usage and help are the same)."""
    one = copy.copy(app)
    one.registered_commands = [c for c in app.registered_commands[:_OWN] if _command_name(c) == name]
    one.registered_groups = []
    return typer.main.get_command(one)


def _command_name(info: typer.models.CommandInfo) -> str:
    return info.name or typer.main.get_command_name(info.callback.__name__)  # type: ignore[union-attr]


def _command_for(argv: list[str] | None) -> click.Command:
    """The click command that runs `argv`: one of the CLI's own commands alone
    (`_own_command`), or the whole CLI (`command`)."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in _OWN_NAMES:
        return _own_command(args[0])
    return command()


# the CLI's own commands (`_own_command`): the sub-command groups add theirs later
_OWN = len(app.registered_commands)
_OWN_NAMES = frozenset(_command_name(c) for c in app.registered_commands)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning every expected failure into a message and exit 2.
    Standard output is flushed here, so a failing one (a full disk) is such a failure too."""
    tolerant_streams()
    with marked_stdout():
        rc = exits.run(_command_for, argv)
        try:
            sys.stdout.flush()
        except StdoutError as exc:
            return stdout_failed(exc)
        except BrokenPipeError:  # `turnspec ... | head`: stop quietly
            discard_stdout()
        return rc
