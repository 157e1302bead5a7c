"""`turnspec migrate`: a shell over conformance.migrations.migrate_file."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer

from ...core import escaping
from ...core.errors import InputError
from ...migrations import default_registry, migrate_file

MigrateFormat = enum.StrEnum("MigrateFormat", {f: f for f in default_registry().formats()})  # type: ignore[misc]

_CANONICAL = MigrateFormat("canonical")


def register(app: typer.Typer) -> None:
    @app.command()
    def migrate(
        src: Annotated[Path | None, typer.Argument(help="Input .json or .jsonl file")] = None,
        to: Annotated[int | None, typer.Option("--to", help="Target schema revision (e.g. 2)", min=1)] = None,
        out: Annotated[
            Path | None,
            typer.Option("--output", "-o", help="Write here (default: print to stdout)"),
        ] = None,
        in_place: Annotated[
            bool, typer.Option("--in-place", help="Rewrite the input, atomically, once complete")
        ] = False,
        fmt: Annotated[
            MigrateFormat,
            typer.Option(
                "--format", metavar="FORMAT", help="Format of the records: one of " + ", ".join(MigrateFormat)
            ),
        ] = _CANONICAL,
        from_: Annotated[
            int | None,
            typer.Option("--from", help="Source revision (default: detected per record)", min=1),
        ] = None,
        force: Annotated[bool, typer.Option("--force", help="Replace an existing OUT")] = False,
        list_: Annotated[bool, typer.Option("--list", help="List the registered migrations and exit")] = False,
    ) -> None:
        """Migrate records between schema revisions; writes nothing unless all records migrate."""
        if list_:
            for m in default_registry():
                back = "lossless both ways" if m.lossless else ("reversible" if m.backward else "one way")
                sys.stdout.write(f"{m.format} {m.source} -> {m.target} ({back}): {m.summary}\n")
                for c in m.changes:
                    sys.stdout.write(f"    {c.kind:18} {c.pointer:24} {c.description}\n")
            return
        if src is None or to is None:
            raise InputError("give an input file and --to N (or --list)")
        result = migrate_file(src, to, fmt=fmt.value, out=out, in_place=in_place, source=from_, force=force)
        for f in result.findings:
            sys.stderr.write(escaping.text_line(f.format()) + "\n")  # a file name or value may hold anything
        if not result.ok:
            sys.stderr.write(
                f"FAIL: nothing written ({len(result.findings)} finding(s) in {result.records} record(s))\n"
            )
            raise typer.Exit(1)
        if result.output is not None:
            sys.stdout.buffer.write(result.output)
            sys.stdout.flush()
        where = f"wrote {escaping.name(result.written)}" if result.written else "printed"
        sys.stderr.write(f"{where}: {result.records} record(s) at revision {to}, {result.changed} changed\n")
