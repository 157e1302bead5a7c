"""`turnspec models`: typed models for other repositories (a shell over conformance.schema.models)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    @app.command("models")
    def models_cmd(
        out: Annotated[Path, typer.Argument(help="The package folder to write (its name is the import name)")],
        target: Annotated[
            str, typer.Option("--target", help="pydantic | typeddict | dataclasses | msgspec | typescript")
        ] = "pydantic",
        fmt: Annotated[
            str, typer.Option("--format", help="Schema family: canonical, gpt2099, chibi, geppetto, exec")
        ] = "canonical",
        revision: Annotated[
            str | None, typer.Option("--revision", help="e.g. v1 (default: the published revision)", show_default=False)
        ] = None,
        force: Annotated[bool, typer.Option("--force", help="Replace an existing output")] = False,
    ) -> None:
        """Write models of one schema revision as a Python package, for another repository.

        pydantic needs datamodel-code-generator 0.89.0; typeddict and dataclasses validate
        with jsonschema; msgspec needs msgspec. The README lists each target's known
        differences from the schema."""
        # function-level imports: the generator and the schema IR load only when this runs
        from ...core.outputs import check_output, staged
        from ...schema.models import TARGETS, generate, resolve, source_folder, write_tree

        if target not in TARGETS:
            raise typer.BadParameter(f"{target}: known targets are {', '.join(TARGETS)}", param_hint="--target")
        rev = resolve(fmt, revision)
        check_output(out, [source_folder(fmt, rev)], force=force)
        files = generate(target, fmt, rev)
        with staged(out) as tmp:
            write_tree(tmp, files)
        sys.stderr.write(f"wrote {target} models of {fmt} {rev} to {out}\n")
