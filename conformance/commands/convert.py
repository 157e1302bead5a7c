"""`turnspec convert`: a shell over conformance.convert."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..convert import convert as do_convert


def register(app: typer.Typer) -> None:
    @app.command()
    def convert(
        src: Annotated[Path, typer.Argument(help="Input file or directory")],
        dst: Annotated[Path, typer.Argument(help="Output path (never the input)")],
        to: Annotated[str, typer.Option("--to", help="Target format")],
        from_: Annotated[str, typer.Option("--from", help="Source format")] = "canonical",
        force: Annotated[bool, typer.Option(help="Overwrite an existing output")] = False,
    ) -> None:
        """Convert between formats; every lossy step is reported with its location."""
        findings = do_convert(from_, to, src, dst, force=force)
        for f in findings:
            sys.stderr.write(f.format() + "\n")
        sys.stderr.write(f"wrote {dst} ({len(findings)} lossy step(s) reported)\n")
