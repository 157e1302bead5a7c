"""typer's parameter and command classes as the CLI shows and converts them.

`tidy` turns every parameter typer builds into `_Argument`/`_Option` (a plain value is
converted without typer's pydantic adapter, `coerce.plain`; usage shows `PATH...`, an
option its choices or metavar, a flag bare) and every command into `_Command`/`Group`,
whose help is printed plain when not on a terminal (`plain_help`). The app's own class is
`Group`, which tidies whichever command is asked for.
"""

from __future__ import annotations

import re
import typing
from typing import Any

from typer import _click as click  # typer vendors click: its classes are the ones typer builds
from typer.core import DEFAULT_MARKUP_MODE, TyperArgument, TyperCommand, TyperGroup, TyperOption

from . import plain_help
from .coerce import PASS, plain

__all__ = ["Group", "tidy"]


def _process_value(param: TyperArgument | TyperOption, ctx: click.Context, value: Any, typer_way: Any) -> Any:
    """A parameter's value: a plain one converted without typer's pydantic adapter
    (`coerce.plain`), anything else (and every flag) by typer (`typer_way`)."""
    got = plain(param, value, ctx)
    if got is PASS or isinstance(value, bool):  # a flag: typer takes it as it is
        return typer_way(ctx, value)
    if param.required and param.value_is_missing(got):
        raise click.exceptions.MissingParameter(ctx=ctx, param=param)
    if param.callback is not None:
        got = param.callback(ctx, param, got)
    return got


class _Argument(TyperArgument):
    """An argument shown as `PATH...` in usage and help, without a type column."""

    def process_value(self, ctx: click.Context, value: Any) -> Any:
        return _process_value(self, ctx, value, super().process_value)

    def _usage_display_name(self) -> str:
        name = self.display_name_raw.upper()
        name = name if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")

    def _rich_display_name(self) -> str:
        return self._usage_display_name()

    def display_type_rich(self, ctx: click.Context) -> str | None:
        return None


class _Option(TyperOption):
    """An option shown with its choices (`<text|json>`) or a plain metavar; flags bare."""

    def process_value(self, ctx: click.Context, value: Any) -> Any:
        return _process_value(self, ctx, value, super().process_value)

    def display_type_rich(self, ctx: click.Context) -> str | None:
        if self.is_flag or self.count:
            return None
        if self.metavar is not None or self.type_descriptor.is_choice:
            return super().display_type_rich(ctx)
        desc = self.type_descriptor
        element: Any = desc.annotation
        if typing.get_origin(element) is list:
            element = typing.get_args(element)[0]
        return "PATH" if desc.is_path else "N" if element is int else "TEXT"


def _no_type(ctx: click.Context) -> str | None:
    return None


# a `[word]` rich would read as a markup tag (rich.markup's own `escape` pattern); rich is
# not imported for it: it costs start-up, and the help strings are tidied on every call
_RICH_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def _literal_help(text: str | None) -> str | None:
    """Help text shown as written: when typer renders help with rich markup, a bracketed
    word (`the [ray] extra`) is escaped so rich shows it instead of eating it as a tag."""
    if not text or "[" not in text or DEFAULT_MARKUP_MODE != "rich":
        return text
    return _RICH_TAG.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", text)


def tidy(cmd: click.Command) -> None:
    """Give every parameter of `cmd` (and of its sub-commands) the plain help display."""
    for p in cmd.params:
        if isinstance(p, TyperArgument | TyperOption) and type(p) in (TyperArgument, TyperOption):
            p.__class__ = _Argument if type(p) is TyperArgument else _Option
            setattr(p, plain_help.RAW_HELP, p.help)
            p.help = _literal_help(p.help)
    if type(cmd) is TyperCommand:
        cmd.__class__ = _Command
    elif type(cmd) is TyperGroup:
        cmd.__class__ = Group
    for sub in getattr(cmd, "commands", {}).values():
        tidy(sub)


def _bare_help(option: TyperOption | None) -> TyperOption | None:
    if option is not None:
        if type(option) is TyperOption:
            option.__class__ = _Option  # its value converted without pydantic, as every option's
        option.display_type_rich = _no_type  # type: ignore[method-assign]
    return option


class _Command(TyperCommand):
    def get_help_option(self, ctx: click.Context) -> TyperOption | None:
        return _bare_help(super().get_help_option(ctx))

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if not plain_help.wanted():
            return super().format_help(ctx, formatter)
        with plain_help.plain(self):  # not a terminal: every word shown, never cut at 80 columns
            return super().format_help(ctx, formatter)


class Group(TyperGroup):
    """Tidies the help of whichever command is asked for (and its own `--help`)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            tidy(cmd)
        return cmd

    def get_help_option(self, ctx: click.Context) -> TyperOption | None:
        return _bare_help(super().get_help_option(ctx))

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        tidy(self)
        return super().get_params(ctx)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if not plain_help.wanted():
            return super().format_help(ctx, formatter)
        with plain_help.plain(self):
            return super().format_help(ctx, formatter)
