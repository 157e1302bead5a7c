"""`turnspec schema diff OLD NEW`: a shell over conformance.schemadiff."""

from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import Annotated

import typer


class DiffOutput(enum.StrEnum):
    text = "text"
    json = "json"


def register(app: typer.Typer) -> None:
    schema = typer.Typer(help="Schema maintenance: compare revisions.", no_args_is_help=True)

    @schema.command("diff")
    def diff_cmd(
        old: Annotated[Path, typer.Argument(help="Old schema file, or folder of schema files")],
        new: Annotated[Path, typer.Argument(help="New schema file, or folder")],
        output: Annotated[DiffOutput, typer.Option("--output", "-o", help="Report format")] = DiffOutput.text,
        examples: Annotated[
            int, typer.Option(help="Documents generated per undecided direction", min=0, max=100_000)
        ] = 200,
    ) -> None:
        """Classify changes as FULL, BACKWARD, FORWARD or BREAKING (exit 1 on BREAKING)."""
        from ..schemadiff import Compat, diff_paths, render_text  # hypothesis loads only here

        result = diff_paths(old, new, examples=examples)
        if output == DiffOutput.json:
            json.dump(result.as_dict(), sys.stdout, indent=2, ensure_ascii=False)
            sys.stdout.write("\n")
        else:
            sys.stdout.write(render_text(result))
        raise typer.Exit(1 if result.verdict == Compat.BREAKING else 0)

    app.add_typer(schema, name="schema")
