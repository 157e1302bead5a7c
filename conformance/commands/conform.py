"""`turnspec conform`: a shell over conformance.suite.runner."""

from __future__ import annotations

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..errors import InputError
from ..findings import Selection


class ConformOutput(enum.StrEnum):
    text = "text"
    json = "json"
    junit = "junit"
    md = "md"


def _split(values: list[str] | None) -> tuple[str, ...]:
    return tuple(x.strip() for v in values or [] for x in v.split(",") if x.strip())


def register(app: typer.Typer) -> None:
    @app.command()
    def conform(
        refs: Annotated[
            list[str] | None,
            typer.Argument(
                help="Adapters: registered names or module:attr (default: all registered)",
                show_default=False,
            ),
        ] = None,
        output: Annotated[ConformOutput, typer.Option("--output", "-o", help="Report format")] = ConformOutput.text,
        cassettes: Annotated[
            list[Path] | None,
            typer.Option(help="Cassettes: <DIR>/<adapter>/*.yaml, or one adapter's folder"),
        ] = None,
        samples: Annotated[
            Path | None,
            typer.Option(help="Third-party recordings to replay (default ../shared/samples/wire)"),
        ] = None,
        no_samples: Annotated[
            bool, typer.Option("--no-samples", help="Do not replay the third-party recordings")
        ] = False,
        select: Annotated[list[str] | None, typer.Option(help="Only these TC ids or prefixes")] = None,
        ignore: Annotated[list[str] | None, typer.Option(help="Skip these TC ids or prefixes")] = None,
        report: Annotated[Path | None, typer.Option(help="Also write the report to this file")] = None,
        verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Text output lists skip reasons too")] = False,
    ) -> None:
        """Run the adapter conformance suite; exit 0 when every check passes, 1 otherwise."""
        # imported when the command runs: the suite (vcrpy, the checks) is not loaded for other commands
        from ..suite.report import RENDERERS
        from ..suite.rules import CATALOG
        from ..suite.runner import SuiteConfig, run

        sel = Selection(select=_split(select), ignore=_split(ignore))
        for prefix in sel.select + sel.ignore:
            if not any(r.id.startswith(prefix) for r in CATALOG):
                raise InputError(
                    f"--select/--ignore: no TC rule starts with {prefix!r} (see `turnspec rules --select TC`)"
                )
        for c in cassettes or []:
            if not c.is_dir():
                raise InputError(f"--cassettes {c}: not a directory")
        if samples is not None and not samples.is_dir():
            raise InputError(f"--samples {samples}: not a directory")
        config = SuiteConfig.for_refs(
            refs or [],
            cassettes=cassettes or [],
            samples=None if no_samples else (samples or "default"),
            selection=sel,
        )
        result = run(config)
        if output == ConformOutput.text:
            text = RENDERERS["text"](result, verbose=verbose)  # type: ignore[call-arg]
        else:
            text = RENDERERS[output.value](result)
        sys.stdout.write(text)
        if report is not None:
            report.write_text(text if output != ConformOutput.text else RENDERERS["md"](result), encoding="utf-8")
        raise typer.Exit(result.exit_code)
