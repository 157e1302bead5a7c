"""Command-line values that need no conversion, taken as they are.

typer converts every parameter's value through a pydantic TypeAdapter it builds at the
first use (`typer._coercion`), and importing pydantic for it is most of the start-up of
a command that runs at once (`turnspec rule TS202`, `validate` of one line). A value of
the plainest kinds is converted here the way the adapter would, without it: nothing
given (None, or an empty tuple for a parameter of several values), a string for a
`str`, strings for a `list[str]`, a value that already has the parameter's type (its
default), a choice of an enum named exactly, decimal digits for an `int` within its
`min` and `max`, a non-empty string for a `Path` (made a `Path` here, then checked on
disk by typer's own `coerce_cli_path`, which converts no `Path` again). Anything else,
and every value that fails, goes through typer's own conversion, so its messages are
typer's.
"""

from __future__ import annotations

import enum
import typing
from pathlib import Path
from typing import Any

PASS: Any = object()
"""`plain` of a value it leaves to typer."""


def plain(param: Any, value: Any, ctx: Any = None) -> Any:
    """The converted value of typer parameter `param` (a `typer.core._TyperParameter`) when
    it is of a kind converted without an adapter, else `PASS`; `ctx` (the click context)
    is what a path check names when it fails."""
    desc = getattr(param, "type_descriptor", None)
    if desc is None or desc.file_annotation is not None:
        return PASS
    info, kind = desc.parameter_info, desc.annotation
    if getattr(info, "parser", None) is not None:
        return PASS
    if param.multiple or param.nargs == -1:
        if value is None:
            return ()
        if (
            typing.get_origin(kind) is list
            and typing.get_args(kind) == (str,)
            and isinstance(value, (list, tuple))
            and all(type(v) is str for v in value)
        ):
            return list(value)
        return PASS
    if value is None:
        return None
    if kind is str:
        return value if type(value) is str else PASS
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        if isinstance(value, kind):
            return value
        if type(value) is str and getattr(info, "case_sensitive", True):
            return next((m for m in kind if m.value == value), PASS)
        return PASS
    if kind is int:
        digits = type(value) is str and value.isdigit() and value.isascii()
        number = value if type(value) is int else int(value) if digits else None
        if number is None or getattr(info, "clamp", False):
            return PASS
        low, high = getattr(info, "min", None), getattr(info, "max", None)
        return number if (low is None or number >= low) and (high is None or number <= high) else PASS
    if kind is Path and type(value) is str and value and getattr(info, "path_type", None) is None:
        from typer._param_types import coerce_cli_path  # typer's own checks on disk (exists, readable, ...)

        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    return PASS
