"""`turnspec conform`: a shell over conformance.suite.runner."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ...core import escaping
from ...core.color import ColorChoice, Palette
from ...core.color import wanted as colour_wanted
from ...core.errors import InputError
from ...core.findings import Selection
from ...core.outputs import real
from ...core.reporting import FindingsReport, output_choices, render_findings
from ...formats.canonical.markers import DEFAULT_CRITICAL_KEY
from ...migrations.atomic import atomic_write
from ..options import split

if TYPE_CHECKING:  # the suite is loaded only when conform runs
    from ...suite.runner import SuiteConfig, SuiteReport

# conform's own renderings, then every findings output (`reporting.FINDINGS_OUTPUTS`)
ConformOutput = output_choices("ConformOutput", "text", "json", "junit", "md", "html")
TEXT = ConformOutput("text")


def _check_report_path(report: Path, inputs: list[Path], *, force: bool) -> None:
    """Refuse a report path that is, holds or sits inside an input, and an existing file
    unless --force: a report must never replace a cassette or anything else unasked."""
    target = real(report)  # realpath: a symlink loop is named below, not a RuntimeError
    for root in inputs:
        r = real(root)
        if target == r or r in target.parents or target in r.parents:
            raise InputError(f"--report {report}: inside or around the input {root}; write the report elsewhere")
    if report.is_dir():
        raise InputError(f"--report {report}: is a directory")
    if (report.exists() or report.is_symlink()) and not force:
        raise InputError(f"--report {report}: exists; pass --force to replace it")
    if report.exists() and not report.is_file():
        raise InputError(f"--report {report}: not a regular file")
    if not real(report.parent).is_dir():
        raise InputError(f"--report {report}: its folder does not exist")


def register(app: typer.Typer) -> None:
    app.command()(conform)


def conform(
    refs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Adapters: registered names, module:attr, or 'exec:COMMAND ARG...' / exec:MANIFEST.toml "
            "(a process speaking the exec protocol; default: all registered)",
            show_default=False,
        ),
    ] = None,
    output: Annotated[ConformOutput, typer.Option("--output", "-o", help="Report format")] = TEXT,  # type: ignore[valid-type]
    cassettes: Annotated[
        list[Path] | None,
        typer.Option(
            help="Cassettes: <DIR>/<adapter>/*.yaml, or one adapter's folder (./cassettes/<adapter>/ is always read)"
        ),
    ] = None,
    samples: Annotated[
        Path | None,
        typer.Option(
            help="Third-party recordings to replay (default: [tool.turnspec] samples, else $TURNSPEC_SAMPLES, else none)"
        ),
    ] = None,
    no_samples: Annotated[bool, typer.Option("--no-samples", help="Do not replay the third-party recordings")] = False,
    select: Annotated[list[str] | None, typer.Option(help="Only these TC ids or prefixes")] = None,
    ignore: Annotated[list[str] | None, typer.Option(help="Skip these TC ids or prefixes")] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            help="Write the --output report to this file and show the text one (Markdown with -o text);"
            " never an input; --force to replace one"
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing --report file")] = False,
    fail_on_skip: Annotated[
        bool, typer.Option("--fail-on-skip", help="Exit 1 when any rule of an adapter was skipped (CI gate)")
    ] = False,
    strict: Annotated[
        bool,
        typer.Option(
            help="A capability declared true that no case exercised fails TC002, and advisory checks "
            "(TC306) fail like any other (exit 1: findings)"
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", "-v", help="Text output lists skip reasons and every crash's traceback too"),
    ] = False,
    failures_only: Annotated[
        bool,
        typer.Option("--failures-only", help="Text output lists only the failing checks, then the summary"),
    ] = False,
    color: Annotated[
        ColorChoice,
        typer.Option(
            "--color",
            help="Colour the text report: auto (on a terminal, unless NO_COLOR is set), always, never",
        ),
    ] = ColorChoice.auto,
    critical_key: Annotated[
        str,
        typer.Option(help="Metadata key that marks a block critical (§4.2.2 names none; TC203 plants it)"),
    ] = DEFAULT_CRITICAL_KEY,
    exec_timeout: Annotated[
        float | None,
        typer.Option(
            "--exec-timeout",
            help="exec: adapters: seconds per call before the child is stopped and restarted "
            "(default: the manifest's timeout, else 30)",
            show_default=False,
        ),
    ] = None,
    validate_protocol: Annotated[
        bool,
        typer.Option(
            "--validate-protocol",
            help="exec: adapters: validate every message, both ways, against the exec protocol's schemas "
            "(turnspec schema export --format exec; an off-schema answer fails its case)",
        ),
    ] = False,
) -> None:
    """Run the adapter conformance suite; exit 0 when no check fails, 1 when one does (findings),
    2 when it could not run (a usage or input error)."""
    # imported when the command runs: the suite (vcrpy, the checks) is not loaded for other commands
    from ...adapters.exec.manifest import ExecSettings
    from ...suite.runner import SuiteConfig, default_cassette_root, local_cassette_root, run, samples_asked

    sel = Selection(select=split(select), ignore=split(ignore), strict=strict)
    _check_options(sel, critical_key, cassettes or [], exec_timeout)
    asked = samples_asked(samples, none=no_samples)
    local = local_cassette_root()
    inputs = [p for p in (*(cassettes or []), asked.path, default_cassette_root(), local) if p is not None]
    if report is not None:
        _check_report_path(report, inputs, force=force)
    config = SuiteConfig.for_refs(
        refs or [],
        cassettes=cassettes or [],
        samples=asked,
        selection=sel,
        critical_key=critical_key,
        roots=[local] if local is not None else [],
        exec_settings=ExecSettings(exec_timeout, validate_protocol),
    )
    _say_renamed(config)
    result = run(config, fail_on_skip=fail_on_skip)
    palette = Palette(colour_wanted(color, sys.stdout))
    _write(result, output, report, palette=palette, verbose=verbose, failures_only=failures_only)
    if strict and result.unexercised:  # TC002 failed them: a finding like any other (exit 1)
        sys.stderr.write(
            escaping.text_line(
                "turnspec: --strict: capabilities declared true that no case exercised: "
                + ", ".join(f"{a}.{c}" for a, c in result.unexercised)
            )
            + "\n"
        )
    raise typer.Exit(result.exit_code)


def _check_options(sel: Selection, critical_key: str, cassettes: list[Path], exec_timeout: float | None) -> None:
    """conform's flags checked in turn: the first wrong one is a usage error (exit 2)."""
    # function-level imports: the suite is loaded only when conform runs
    from ...adapters.exec.manifest import check_timeout
    from ...suite.rules import CATALOG

    for prefix in sel.select + sel.ignore:
        if not any(r.id.startswith(prefix) for r in CATALOG):
            raise InputError(f"--select/--ignore: no TC rule starts with {prefix!r} (see `turnspec rules --select TC`)")
    if not critical_key:
        raise InputError("--critical-key: an empty key marks nothing")
    for c in cassettes:
        if not c.is_dir():
            raise InputError(f"--cassettes {c}: not a directory")
    if exec_timeout is not None:
        check_timeout(exec_timeout, "--exec-timeout")


def _say_renamed(config: SuiteConfig) -> None:
    """A record name an earlier release used: kept, and said to be old (one line each)."""
    from ...wire import registry as wire_registry  # function-level: loaded only when conform runs

    for s in config.subjects:
        named = str(getattr(s.adapter, "wire_api", ""))
        if wire_registry.canonical_name(named) != named:
            sys.stderr.write(
                escaping.text_line(
                    f"turnspec: {s.name}: wire_api {named!r} was renamed {wire_registry.canonical_name(named)!r} "
                    "(deprecated; read as the new name)"
                )
                + "\n"
            )


def _write(
    result: SuiteReport, output: str, report: Path | None, *, palette: Palette, verbose: bool, failures_only: bool
) -> None:
    """The report: `--output`'s on standard output, or with --report written to that file
    and the text one (Markdown with -o text) shown, as pytest --junitxml."""
    # function-level imports: the suite's renderers are loaded only when conform runs
    from ...suite.report import RENDERERS, skipped_findings
    from ...suite.report import findings as suite_findings
    from ...suite.rules import CATALOG

    terminal = RENDERERS["text"](result, verbose=verbose, failures_only=failures_only, palette=palette)  # type: ignore[call-arg]
    if output == "text":
        text = terminal
    elif output in RENDERERS:
        text = RENDERERS[output](result)
    else:  # a findings output: the failing and skipped cases as findings
        found = FindingsReport("turnspec conform", suite_findings(result), CATALOG, notes=skipped_findings(result))
        text = render_findings(output, found)
    # with --report the file gets the report and the terminal the text one (as pytest --junitxml)
    sys.stdout.write(text if report is None else terminal)
    if report is not None:
        body = text if output != "text" else RENDERERS["md"](result)
        try:
            atomic_write(report, [body.encode("utf-8")])
        except OSError as exc:
            raise InputError(f"--report {report}: cannot write: {exc.strerror or exc}") from None
