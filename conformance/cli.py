"""`turnspec`: a thin shell over the library API (conformance.api and friends).

Exit codes: 0 valid (warnings allowed), 1 violations, 2 usage or I/O error.
"""

from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn

from . import __version__
from .api import Report, expand, iter_validate
from .errors import InputError
from .findings import Selection
from .formats import Options, catalog
from .migrations.rules import CATALOG as MIGRATION_RULES

app = typer.Typer(
    name="turnspec",
    help="Validate LLM conversation transcripts and check provider adapters against the canonical format.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err_console = Console(stderr=True)

PROGRESS_MIN_BYTES = 32 * 1024 * 1024


class OutputFormat(enum.StrEnum):
    text = "text"
    json = "json"


def _split(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def _check_rule_ids(ids: tuple[str, ...]) -> None:
    known = [r.id for r in catalog()] + [r.id for r in MIGRATION_RULES]
    for prefix in ids:
        if not any(k.startswith(prefix) for k in known):
            raise InputError(f"--select/--ignore: no rule id starts with {prefix!r} (see `turnspec rules`)")


@app.command()
def validate(
    paths: Annotated[list[Path], typer.Argument(help="Files or directories (.json, .jsonl, ...)", show_default=False)],
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="Report format")] = OutputFormat.text,
    strict: Annotated[bool, typer.Option(help="Treat tolerated unknowns (§10.3) as errors")] = False,
    select: Annotated[list[str] | None, typer.Option(help="Only these rule ids or prefixes (comma-separated)")] = None,
    ignore: Annotated[list[str] | None, typer.Option(help="Skip these rule ids or prefixes")] = None,
    fmt: Annotated[str | None, typer.Option("--format", help="Force a format instead of detecting it")] = None,
    tools: Annotated[Path | None, typer.Option(help="ToolDefinition file: check tool_use names and input")] = None,
    pricing: Annotated[Path | None, typer.Option(help="Price table (YAML/JSON): recompute cost_usd")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the summary")] = False,
) -> None:
    """Validate transcripts; report each violation with file, line, JSON pointer and rule."""
    sel = Selection(select=_split(select), ignore=_split(ignore), strict=strict)
    _check_rule_ids(sel.select + sel.ignore)
    options = Options(selection=sel, tools=tools, pricing=pricing)
    skipped: list[Path] = []
    units = expand(paths, fmt, skipped)
    report = Report(skipped=[str(p) for p in skipped])
    total = sum(p.stat().st_size for p, _ in units if p.is_file())
    show_progress = sys.stderr.isatty() and total >= PROGRESS_MIN_BYTES
    out = sys.stdout
    with Progress(
        "[progress.description]{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
        console=err_console, disable=not show_progress, transient=True,
    ) as bar:  # fmt: skip
        task = bar.add_task("validating", total=total)

        def advance(n: int) -> None:
            bar.advance(task, n)

        for finding in iter_validate(
            [p for p, _ in units], options, fmt=fmt, files=report.files, progress=advance if show_progress else None
        ):
            report.add(finding, keep=output == OutputFormat.json)
            if output == OutputFormat.text and not quiet:
                out.write(finding.format() + "\n")
    if output == OutputFormat.json:
        json.dump(report.as_dict(), out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        s = report.summary()
        out.write(
            f"{'FAIL' if report.exit_code else 'OK'}: {s['errors']} error(s), {s['warnings']} warning(s) "
            f"in {s['files']} file(s), {s['records']} record(s)\n"
        )
        if report.skipped:
            out.write(f"skipped {len(report.skipped)} file(s) in no known format, e.g. {report.skipped[0]}\n")
    raise typer.Exit(report.exit_code)


@app.command()
def rules(
    output: Annotated[OutputFormat, typer.Option("--output", "-o")] = OutputFormat.text,
    select: Annotated[list[str] | None, typer.Option(help="Only ids with these prefixes")] = None,
) -> None:
    """List every rule: id, severity, spec section, summary."""
    prefixes = _split(select)
    from .suite.rules import CATALOG as SUITE_CATALOG

    every = sorted([*catalog(), *MIGRATION_RULES, *SUITE_CATALOG], key=lambda r: r.id)
    infos = [r for r in every if not prefixes or r.id.startswith(prefixes)]
    if output == OutputFormat.json:
        json.dump(
            [
                {
                    "id": r.id,
                    "severity": str(r.severity),
                    "section": r.section,
                    "summary": r.summary,
                    "strict": r.strict,
                }
                for r in infos
            ],
            sys.stdout,
            indent=2,
            ensure_ascii=False,
        )
        sys.stdout.write("\n")
        return
    for r in infos:
        sev = f"{r.severity}{'*' if r.strict else ''}"
        sys.stdout.write(f"{r.id}  {sev:8}  {r.section:22}  {r.summary}\n")
    sys.stdout.write("(* a warning that --strict makes an error)\n")


@app.command()
def version() -> None:
    """Print the turnspec version."""
    sys.stdout.write(f"turnspec {__version__}\n")


def _register_commands() -> None:
    from .commands import register_all

    register_all(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning every expected failure into a message and exit 2."""
    _register_commands()
    try:
        rc = app(args=argv, standalone_mode=False)
        return rc if isinstance(rc, int) else 0
    except typer.Exit as e:
        return int(e.exit_code)
    except InputError as e:
        err_console.print(f"[bold red]turnspec:[/] {e}", highlight=False, markup=True)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # usage errors and anything unexpected: a message, never a traceback
        # typer vendors click; its usage errors are recognised by their interface
        show = getattr(e, "show", None)
        if callable(show) and isinstance(getattr(e, "exit_code", None), int):
            show()
            return 2
        if type(e).__name__ == "Abort":
            return 130
        err_console.print(f"[bold red]turnspec: internal error:[/] {type(e).__name__}: {e}", highlight=False)
        return 3


if __name__ == "__main__":
    sys.exit(main())
