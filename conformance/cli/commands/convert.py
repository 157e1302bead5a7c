"""`turnspec convert`: a shell over conformance.convert."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer

from ...convert import convert as do_convert
from ...convert import converters
from ...core import escaping
from ...core.convertkit import ConvertContext
from ..options import LOCK_WAIT, resolved_lock_wait

_PAIRS = sorted(converters())
# the formats a conversion can start from / end in, listed as choices in --help
FromFormat = enum.StrEnum("FromFormat", {a: a for a in dict.fromkeys(a for a, _ in _PAIRS)})  # type: ignore[misc]
ToFormat = enum.StrEnum("ToFormat", {b: b for b in dict.fromkeys(b for _, b in _PAIRS)})  # type: ignore[misc]

_CANONICAL = FromFormat("canonical")


def _choices(kind: type[enum.StrEnum]) -> str:
    return "one of " + ", ".join(m.value for m in kind)


def register(app: typer.Typer) -> None:
    @app.command()
    def convert(
        src: Annotated[Path, typer.Argument(help="Input file or directory")],
        dst: Annotated[Path, typer.Argument(help="Output path (never the input, inside it or around it)")],
        to: Annotated[ToFormat, typer.Option("--to", metavar="FORMAT", help=f"Target format: {_choices(ToFormat)}")],
        from_: Annotated[
            FromFormat, typer.Option("--from", metavar="FORMAT", help=f"Source format: {_choices(FromFormat)}")
        ] = _CANONICAL,
        force: Annotated[bool, typer.Option("--force", help="Replace an existing output")] = False,
        lock_wait: Annotated[float | None, LOCK_WAIT] = None,
    ) -> None:
        """Convert between formats; every lossy step is reported with its location."""
        context = ConvertContext(lock_wait=resolved_lock_wait(lock_wait))
        findings = do_convert(from_.value, to.value, src, dst, force=force, context=context)
        for f in findings:
            sys.stderr.write(escaping.text_line(f.format()) + "\n")
        sys.stderr.write(escaping.text_line(f"wrote {dst} ({len(findings)} lossy step(s) reported)") + "\n")
