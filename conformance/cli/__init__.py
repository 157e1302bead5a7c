"""`turnspec`: a thin shell over the library API (conformance.api and friends).

Exit codes: 0 valid (warnings allowed), 1 violations, 2 usage or I/O error.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import enum
import functools
import io
import json
import os
import re
import sys
import time
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from typer import _click as click  # typer vendors click: its classes are the ones typer builds
from typer.core import DEFAULT_MARKUP_MODE, TyperArgument, TyperCommand, TyperGroup, TyperOption

from .. import __version__
from ..api import Report, default_jobs, expand, iter_validate
from ..core import escaping, ruledocs
from ..core.baseline import Baseline
from ..core.baseline import check_destination as check_baseline_destination
from ..core.baseline import load as load_baseline
from ..core.baseline import write as write_baseline_file
from ..core.color import ColorChoice, Palette
from ..core.color import wanted as colour_wanted
from ..core.config import Config
from ..core.config import find as find_config
from ..core.config import load as load_config
from ..core.errors import InputError
from ..core.findings import Finding, RuleCatalog, RuleInfo, Selection, Severity, in_order, location_key
from ..core.jsonio import check_input, forget_stdin
from ..core.reporting import FindingsReport, findings_output, output_choices, write_findings
from ..core.schemas import versions
from ..formats import Format, Options, all_formats, catalog
from ..migrations.rules import CATALOG as MIGRATION_RULES
from . import plain_help
from .coerce import PASS, plain
from .options import LOCK_WAIT, resolved_lock_wait


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


def _tidy(cmd: click.Command) -> None:
    """Give every parameter of `cmd` (and of its sub-commands) the plain help display."""
    for p in cmd.params:
        if isinstance(p, TyperArgument | TyperOption) and type(p) in (TyperArgument, TyperOption):
            p.__class__ = _Argument if type(p) is TyperArgument else _Option
            setattr(p, plain_help.RAW_HELP, p.help)
            p.help = _literal_help(p.help)
    if type(cmd) is TyperCommand:
        cmd.__class__ = _Command
    elif type(cmd) is TyperGroup:
        cmd.__class__ = _Group
    for sub in getattr(cmd, "commands", {}).values():
        _tidy(sub)


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


class _Group(TyperGroup):
    """Tidies the help of whichever command is asked for (and its own `--help`)."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            _tidy(cmd)
        return cmd

    def get_help_option(self, ctx: click.Context) -> TyperOption | None:
        return _bare_help(super().get_help_option(ctx))

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        _tidy(self)
        return super().get_params(ctx)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        if not plain_help.wanted():
            return super().format_help(ctx, formatter)
        with plain_help.plain(self):
            return super().format_help(ctx, formatter)


app = typer.Typer(
    name="turnspec",
    help="Validate LLM conversation transcripts and check provider adapters against the canonical format.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_Group,
)


class _Bar:
    """A one-line byte progress bar on a terminal (standard error), drawn from `advance`.

    rich's `Progress` keeps the counts and renders the columns, but is never started: a
    started one (`Live`) redraws from a thread of its own, which would keep `--jobs` from
    forking its workers (`parallel.engine._start_method`), and takes over `sys.stdout`.
    The bar is the first line of the render, cropped to the terminal's width, so one
    carriage return and one erase-line take it off the screen: `clear()` before anything
    else is written to that terminal, and when the run ends."""

    ERASE = "\r\x1b[2K"  # to the start of the line, then erase it (ECMA-48 CR, EL 2)

    def __init__(self, stream: typing.TextIO, total: int) -> None:
        # function-level import: rich costs ~25 ms of start-up and only a terminal shows a bar
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self.stream = stream
        # names come from users' files: printed literally (no markup, emoji or highlighting)
        self.console = Console(file=stream, markup=False, emoji=False, highlight=False)
        self.progress = Progress(
            TextColumn("{task.description}", style="progress.description", markup=False), BarColumn(),
            DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
            console=self.console, auto_refresh=False, redirect_stdout=False, redirect_stderr=False,
        )  # fmt: skip
        self.task = self.progress.add_task("validating", total=total)
        self.due = 0.0
        self.drawn = False

    def advance(self, n: int) -> None:
        """Count `n` more bytes; redraw at most ten times a second."""
        self.progress.advance(self.task, n)
        now = time.monotonic()
        if now >= self.due:
            self.due = now + 0.1
            self.draw()

    def draw(self) -> None:
        # function-level import: rich is loaded only once a bar shows (`__init__`), never at start-up
        from rich.segment import Segments

        width = max(self.console.width - 1, 1)  # never the last column: no pending wrap
        table = self.progress.make_tasks_table(self.progress.tasks)
        lines = self.console.render_lines(table, self.console.options.update_width(width), pad=False)
        self.stream.write(self.ERASE)
        if lines:
            self.console.print(Segments(lines[0]), end="", no_wrap=True, overflow="crop", crop=True)
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        """Take the bar off the screen (it comes back at the next `advance` that redraws)."""
        if self.drawn:
            self.stream.write(self.ERASE)
            self.stream.flush()
            self.drawn = False


@contextlib.contextmanager
def _progress_bar(show: bool, total: int, stream: typing.TextIO | None = None) -> Iterator[_Bar | None]:
    """A byte progress bar on `stream` (standard error) while the block runs, removed when
    it ends, or None when there is none to show (`show` false, or not a terminal)."""
    stream = stream if stream is not None else sys.stderr
    if not show or not stream.isatty():
        yield None
        return
    bar = _Bar(stream, total)
    try:
        yield bar
    finally:
        bar.clear()


FormatName = enum.StrEnum("FormatName", {f.name: f.name for f in all_formats()})  # type: ignore[misc]


def _choices(kind: type[enum.StrEnum]) -> str:
    """`one of a, b, c`: the choices of an option, in its help text (wrapped at spaces)."""
    return "one of " + ", ".join(m.value for m in kind)


def error(message: str) -> None:
    """One line on stderr, `turnspec: <message>`, whatever the message holds (line breaks
    and control characters in it are shown as escapes: `escaping.text_line`)."""
    sys.stderr.write(escaping.text_line(f"turnspec: {message}") + "\n")


def _note(message: str) -> None:
    """A note on stderr that changes neither the report nor the exit code (e.g. a
    `--resume` entry that is recomputed)."""
    error(f"note: {message}")


PROGRESS_MIN_BYTES = 32 * 1024 * 1024

_Choice = typing.TypeVar("_Choice", bound=enum.StrEnum)


class OutputFormat(enum.StrEnum):
    text = "text"
    json = "json"


class Engine(enum.StrEnum):
    local = "local"
    ray = "ray"


# validate's own renderings, then every findings output (`reporting.FINDINGS_OUTPUTS`)
ValidateOutput = output_choices("ValidateOutput", "text", "json")


def _split(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def _check_rule_ids(ids: tuple[str, ...]) -> None:
    if not ids:
        return
    # function-level import: the migration engine loads only when rule ids are given

    _check_prefixes("--select/--ignore", ids, [r.id for r in catalog()] + [r.id for r in MIGRATION_RULES])


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"turnspec {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", help="Print the version and exit", callback=_version, is_eager=True)
    ] = False,
) -> None:
    """Validate LLM conversation transcripts and check provider adapters against the canonical format."""


@app.command()
def validate(
    paths: Annotated[
        list[str],
        typer.Argument(
            help="Files or directories (.json, .jsonl, ...); '-' reads standard input; URLs with --engine ray",
            show_default=False,
        ),
    ],
    output: Annotated[
        ValidateOutput | None,  # type: ignore[valid-type]  # the choices are read from the outputs' registry
        typer.Option("--output", "-o", help="Report format (default: text, or `output` in [tool.turnspec])"),
    ] = None,
    strict: Annotated[
        bool | None, typer.Option("--strict/--no-strict", help="Treat tolerated unknowns (§10.3) as errors")
    ] = None,
    select: Annotated[list[str] | None, typer.Option(help="Only these rule ids or prefixes (comma-separated)")] = None,
    ignore: Annotated[list[str] | None, typer.Option(help="Skip these rule ids or prefixes")] = None,
    fmt: Annotated[
        FormatName | None,
        typer.Option(
            "--format", metavar="FORMAT", help=f"Force a format instead of detecting it: {_choices(FormatName)}"
        ),
    ] = None,
    stdin_filename: Annotated[
        str | None,
        typer.Option(
            "--stdin-filename",
            metavar="NAME",
            help="The name of '-' in findings; its suffix says how standard input is read"
            " (.json one document, .jsonl lines; without it, a first '[' means one document)",
        ),
    ] = None,
    tools: Annotated[Path | None, typer.Option(help="ToolDefinition file: check tool_use names and input")] = None,
    pricing: Annotated[Path | None, typer.Option(help="Price table (YAML/JSON): recompute cost_usd")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the summary")] = False,
    revision: Annotated[
        list[str] | None,
        typer.Option(help="Canonical schema revision to read with (default: v1, the spec as published; v2 is drafted)"),
    ] = None,
    show_skipped: Annotated[
        bool, typer.Option("--show-skipped", help="List every file the walk skipped (no known format)")
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", min=1, help="Processes: this one and N-1 workers (default: the cores this process may use)"
        ),
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option(help="Keep each finished part of the run in this folder; a rerun continues from it"),
    ] = None,
    chunk_bytes: Annotated[
        int | None, typer.Option("--chunk-bytes", min=1, help="Bytes of a large file per task (default 4 MiB)")
    ] = None,
    engine: Annotated[
        Engine, typer.Option("--engine", help="Where to run: local processes, or Ray (the [ray] extra)")
    ] = Engine.local,
    ray_address: Annotated[
        str | None, typer.Option("--ray-address", help="A Ray cluster to join (default: start Ray locally)")
    ] = None,
    fail_on_skip: Annotated[
        bool, typer.Option("--fail-on-skip", help="Exit 1 when any file was skipped (in no known format)")
    ] = False,
    skip_unknown: Annotated[
        bool,
        typer.Option(
            "--skip-unknown",
            help="A file named here that no format claims is skipped, as in a folder walk (a .jsonl is still"
            " read as canonical); what the pre-commit hook passes: every file of a commit",
        ),
    ] = False,
    exit_zero: Annotated[
        bool,
        typer.Option("--exit-zero", help="Exit 0 even when violations are found (input errors still exit 2)"),
    ] = False,
    statistics: Annotated[
        bool,
        typer.Option(
            "--statistics",
            help="After the report, the count of findings per rule, most frequent first"
            " (on standard error with a machine-readable --output)",
        ),
    ] = False,
    color: Annotated[
        ColorChoice,
        typer.Option(
            "--color",
            help="Colour the text report: auto (on a terminal, unless NO_COLOR is set), always, never",
        ),
    ] = ColorChoice.auto,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            metavar="FILE",
            help="Report only findings not recorded in FILE (written by --write-baseline); only they set the exit code",
        ),
    ] = None,
    write_baseline: Annotated[
        Path | None,
        typer.Option(
            "--write-baseline",
            metavar="FILE",
            help="Record every finding of this run in FILE (replacing an older baseline) and exit 0",
        ),
    ] = None,
    lock_wait: Annotated[float | None, LOCK_WAIT] = None,
) -> None:
    """Validate transcripts; report each violation with file, line, JSON pointer and rule."""
    forget_stdin()  # each run reads standard input afresh
    cfg = load_config(find_config())  # [tool.turnspec] of the closest pyproject.toml; flags override it
    output = output or _config_choice(cfg, "output", ValidateOutput) or ValidateOutput("text")
    fmt = fmt or _config_choice(cfg, "format", FormatName)
    if strict is None:
        strict = bool(cfg.strict)
    select = select if select is not None else list(cfg.select or ()) or None
    ignore = ignore if ignore is not None else list(cfg.ignore or ()) or None
    for _glob, ids in cfg.per_file_ignores:
        _check_rule_ids(ids)
    if stdin_filename is not None and "-" not in paths:
        raise InputError("--stdin-filename: only with '-' (standard input) among the paths")
    sel = Selection(select=_split(select), ignore=_split(ignore), strict=strict)
    _check_rule_ids(sel.select + sel.ignore)
    for flag, given in (("--tools", tools), ("--pricing", pricing)):
        if given is not None:
            try:
                check_input(given)  # a regular file: never a FIFO or device (read later, once)
            except InputError as exc:
                raise InputError(f"{flag} {exc}") from None
    revisions = _split(revision)
    for rev in revisions:
        if rev not in versions("canonical"):
            raise InputError(
                f"--revision: unknown canonical revision {rev!r} (known: {', '.join(versions('canonical'))})"
            )
    if ray_address is not None and engine != Engine.ray:
        raise InputError("--ray-address: only with --engine ray")
    if baseline is not None and write_baseline is not None:
        raise InputError("--baseline and --write-baseline: give one (--write-baseline records every finding anew)")
    known: Baseline | None = None
    if baseline is not None:
        known = load_baseline(baseline)
    elif write_baseline is not None:
        check_baseline_destination(write_baseline, paths)
    recorded = Baseline(write_baseline.parent) if write_baseline is not None else None
    options = Options(
        selection=sel, tools=tools, pricing=pricing, revisions=revisions, lock_wait=resolved_lock_wait(lock_wait, cfg)
    )
    fmt_name = fmt.value if fmt is not None else None
    skipped: list[Path] = []
    report = Report()
    units: list[tuple[Any, Format]] = []
    for top in paths:
        if engine == Engine.ray and "://" in top:
            # function-level import: fsspec (and Ray) are loaded only when --engine ray is asked
            from ..parallel.ray_engine import expand_urls

            units += expand_urls([top], fmt_name, skipped, report.problems)
        else:
            units += expand(
                [top], fmt_name, skipped, report.problems, stdin_name=stdin_filename, skip_unknown=skip_unknown
            )
    report.skipped = [str(p) for p in skipped]
    for message in report.problems:
        error(message)
    seen = len(report.problems)
    if not units:
        if skip_unknown and not report.problems:  # nothing to validate among the files named: not an error
            sys.stdout.write(escaping.text_line(f"OK: no file in a known format ({len(skipped)} skipped)") + "\n")
            raise typer.Exit(1 if fail_on_skip and skipped else 0)
        if not report.problems:
            error(
                f"no file in a known format in {', '.join(map(str, paths))}"
                f" ({len(skipped)} file(s) skipped); pass --format to choose one"
            )
        raise typer.Exit(2)
    total = sum(p.stat().st_size for p, _ in units if isinstance(p, Path) and p.is_file())
    show_progress = sys.stderr.isatty() and total >= PROGRESS_MIN_BYTES
    out = sys.stdout
    palette = Palette(output == "text" and colour_wanted(color, out))
    with _progress_bar(show_progress, total) as bar:
        advance = bar.advance if bar is not None else None
        # the bar's line is cleared before a line of the report or a message reaches the terminal
        above = bar.clear if bar is not None and out.isatty() else None

        def say(message: str) -> None:
            if bar is not None:
                bar.clear()
            error(message)

        def notify(message: str) -> None:
            say(f"note: {message}")

        if engine == Engine.ray:
            # function-level import: Ray and fsspec are loaded only when --engine ray is asked
            from ..parallel.ray_engine import validate_ray

            found = validate_ray(
                units, options, inputs=paths, address=ray_address, jobs=jobs, resume=resume, chunk_bytes=chunk_bytes,
                files=report.files, progress=advance, problems=report.problems, notify=notify, summary=notify,
            )  # fmt: skip
        else:
            found = iter_validate(
                paths, options, fmt=fmt_name, files=report.files, progress=advance,
                problems=report.problems, units=units, jobs=jobs or default_jobs(), resume=resume,
                chunk_bytes=chunk_bytes, notify=notify,
            )  # fmt: skip
        keep, echo = output != "text", output == "text" and not quiet
        found_in: set[str] = set()  # the paths findings were reported at

        def admitted() -> Iterator[Finding]:
            nonlocal seen
            for finding in found:  # text and -q keep only the counts (text sorts them in bounded memory)
                found_in.add(finding.path)
                if cfg.ignored(finding.path, finding.rule):
                    continue
                if known is not None and known.take(finding):
                    continue  # recorded in the baseline: neither shown nor counted
                if recorded is not None:
                    recorded.add(finding)
                report.add(finding, keep=keep)
                if len(report.problems) > seen:
                    for message in report.problems[seen:]:
                        say(message)
                    seen = len(report.problems)
                yield finding

        if echo:
            for finding in in_order(admitted()):  # by path, line, column, as every output
                if above is not None:
                    above()
                out.write(_finding_line(finding, palette) + "\n")
                if above is not None:
                    out.flush()  # on the screen before the bar is drawn again
        else:
            collections.deque(admitted(), maxlen=0)
    for message in report.problems[seen:]:
        error(message)
    for stats in report.files:
        if (
            stats.records == 0 and stats.path not in found_in and not stats.unread
        ):  # an empty file passes: say that nothing was read
            _note(f"{stats.path}: holds no record; nothing in it was validated")
    report.findings.sort(key=location_key)
    skip_fails = fail_on_skip and bool(report.skipped)
    if output == "json":
        doc = report.as_dict()
        if known is not None:
            doc["summary"] = {**typing.cast(dict[str, Any], doc["summary"]), "baselined": known.matched}
        body = json.dumps(escaping.json_safe(doc), indent=2, ensure_ascii=False)
        out.write(escaping.json_text(body) + "\n")
    elif findings_output(output) is not None:
        _ci_output(output, report)
    else:
        s = report.summary()
        unreadable = f", {len(report.problems)} unreadable" if report.problems else ""
        if known is not None:
            gone = f" ({known.unmatched} no longer found)" if known.unmatched else ""
            unreadable += f", {known.matched} baselined{gone}"
        out.write(
            f"{palette.verdict(not (report.exit_code or skip_fails))}: {s['errors']} error(s), {s['warnings']} warning(s) "
            f"in {s['files']} file(s), {s['records']} record(s){unreadable}\n"
        )
        if report.skipped and show_skipped:
            out.writelines(escaping.text_line(f"skipped (no known format): {p}") + "\n" for p in report.skipped)
        elif report.skipped:
            out.write(
                escaping.text_line(
                    f"skipped {len(report.skipped)} file(s) in no known format, e.g. {report.skipped[0]}"
                    " (--show-skipped lists them)"
                )
                + "\n"
            )
    if statistics:
        (out if output == "text" else sys.stderr).writelines(_statistics(report))
    rc = report.exit_code
    if recorded is not None and write_baseline is not None:
        if report.problems:
            error(f"--write-baseline {escaping.name(write_baseline)}: not written: some inputs could not be read")
        else:
            n = write_baseline_file(write_baseline, recorded)
            _note(f"wrote {n} finding(s) to the baseline {escaping.name(write_baseline)}")
            rc = 0 if rc == 1 else rc
    if exit_zero and rc == 1:
        rc = 0
    if skip_fails and rc == 0:
        rc = 1
    raise typer.Exit(rc)


def _finding_line(f: Finding, palette: Palette) -> str:
    """`Finding.format()` as one `escaping.text_line`, its rule id and severity coloured
    when `palette` is on (each part escaped first, the colour put around it after)."""
    if not palette.on:
        return escaping.text_line(f.format())
    loc = f.location
    ptr = f" {f.pointer}" if f.pointer else ""
    rule = palette.rule(escaping.text(f.rule))
    sev = palette.severity(escaping.text(str(f.severity)), f.severity)
    return f"{escaping.text_line(f'{loc}:{ptr}')} {rule} {sev}: {escaping.text(f.message)}"


def _config_choice(cfg: Config, key: str, kind: type[_Choice]) -> _Choice | None:
    """The value of `key` in [tool.turnspec] as one of `kind`'s choices (None: not set)."""
    value = getattr(cfg, key)
    if value is None:
        return None
    try:
        return kind(value)
    except ValueError:
        raise InputError(
            f"{cfg.path}: [tool.turnspec] {key}: {value!r} is not one of {', '.join(m.value for m in kind)}"
        ) from None


def _statistics(report: Report) -> list[str]:
    """`  12  TS020  <summary>`: one line per rule id with findings, by count (most first)
    then id, as ruff's --statistics."""
    known = every_rule()
    per_rule: dict[str, int] = {}
    for (rule_id, _), n in report.counts.items():
        per_rule[rule_id] = per_rule.get(rule_id, 0) + n
    rows = sorted(per_rule.items(), key=lambda kv: (-kv[1], kv[0]))
    width = max((len(str(n)) for _, n in rows), default=1)
    return [
        escaping.text_line(f"  {n:>{width}}  {rule_id}  {known[rule_id].summary if rule_id in known else ''}".rstrip())
        + "\n"
        for rule_id, n in rows
    ]


# an input that could not be read at all (missing, not a regular file, unreadable): exit 2
UNREADABLE = RuleInfo(
    "TS000", Severity.ERROR, "§9", "Input cannot be read (missing, not a regular file, or unreadable)"
)


def _ci_output(output: str, report: Report) -> None:
    """A findings output (SARIF, GitHub annotations and step summary, JUnit, ...) of a
    validation report: its unreadable inputs are TS000 findings, its skipped files notes."""
    problems = [Finding(p.split(": ", 1)[0], None, "", UNREADABLE.id, UNREADABLE.severity, p) for p in report.problems]
    found = [*report.findings, *problems]
    files = [f.path for f in report.files]
    summary = FindingsReport("turnspec validate", found, every_rule(), files=files, skipped=report.skipped)
    write_findings(output, summary, sys.stdout)


def _rule_parts() -> list[tuple[str, RuleCatalog]]:
    """Every catalogue turnspec reports from, with what reports its rules."""
    return list(_each_rule_part())


def _each_rule_part() -> Iterator[tuple[str, RuleCatalog]]:
    """`_rule_parts`, each catalogue's package loaded as its turn comes (`turnspec rule`
    stops at the one that holds the rule)."""
    # function-level imports: each catalogue's package is loaded only when rules are listed
    from ..core.reporting import SKIPPED

    yield "input (validate)", RuleCatalog([UNREADABLE, SKIPPED])
    yield "format rule (validate)", catalog()

    yield "migration rule (migrate, validate)", MIGRATION_RULES
    from ..suite.rules import CATALOG as SUITE_CATALOG

    yield "conformance suite check (conform)", SUITE_CATALOG
    from ..replay.rules import CATALOG as REPLAY_CATALOG

    yield "replay rule (replay-check)", REPLAY_CATALOG
    from ..wire.cassette_lint import CATALOG as CASSETTE_CATALOG

    yield "cassette lint (cassettes lint)", CASSETTE_CATALOG
    from ..schema.diff_rules import CATALOG as SCHEMA_DIFF_CATALOG

    yield "schema change (schema diff)", SCHEMA_DIFF_CATALOG


def every_rule() -> RuleCatalog:
    """Every rule and check turnspec can report: formats, suite, replay-check, cassette lint, schema diff."""
    out = RuleCatalog()
    for _, part in _rule_parts():
        for info in part:
            out.add(info)
    return out


def _check_prefixes(flag: str, prefixes: tuple[str, ...], known: list[str]) -> None:
    """A usage error (exit 2, one line) for the first id or prefix no rule id starts with."""
    for prefix in prefixes:
        if not any(k.startswith(prefix) for k in known):
            raise InputError(f"{flag}: no rule id starts with {prefix!r} (see `turnspec rules`)")


def _rule_row(r: RuleInfo) -> dict[str, Any]:
    return {"id": r.id, "severity": str(r.severity), "section": r.section, "summary": r.summary, "strict": r.strict}


@app.command()
def rules(
    ids: Annotated[
        list[str] | None,
        typer.Argument(help="Only these rule ids or prefixes (as --select)", show_default=False),
    ] = None,
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="Report format")] = OutputFormat.text,
    select: Annotated[list[str] | None, typer.Option(help="Only ids with these prefixes")] = None,
) -> None:
    """List every rule: id, severity, spec section, summary."""
    every = list(every_rule())
    given = tuple(i.upper() for i in _split(ids))
    prefixes = (*given, *_split(select))
    _check_prefixes("rules", given, [r.id for r in every])
    _check_prefixes("--select", _split(select), [r.id for r in every])
    infos = [r for r in every if not prefixes or r.id.startswith(prefixes)]
    if output == OutputFormat.json:
        json.dump([_rule_row(r) for r in infos], sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return
    for r in infos:
        sev = f"{r.severity}{'*' if r.strict else ''}"
        sys.stdout.write(f"{r.id}  {sev:8}  {r.section:22}  {r.summary}\n")
    sys.stdout.write("(* a warning that --strict makes an error)\n")


def _first_paragraph(doc: str | None) -> str | None:
    """A docstring's first paragraph on one line (None when there is no docstring)."""
    if not doc:
        return None
    return " ".join(doc.strip().split("\n\n", 1)[0].split()) or None


def _rule_details(rule_id: str, kind: str) -> dict[str, Any]:
    """What else is known of a rule: the docstring of the function that checks it, and for
    a suite check the capability it needs and its standard test."""
    out: dict[str, Any] = {"kind": kind}
    docs: list[str | None] = []
    if kind.startswith("format"):
        # function-level import: the rule functions are loaded only for `turnspec rule`
        from ..formats.canonical.engine import FAMILIES

        docs += [fn.__doc__ for fam in FAMILIES for info, _, fn in fam.rules if info.id == rule_id]
    if kind.startswith("conformance suite"):
        # function-level imports: the checks (adapters, wire records) are loaded only for a suite check
        from ..suite.checks import CHECKS
        from ..suite.rules import NEEDS, TEST_SLUGS

        docs += [c.fn.__doc__ for c in CHECKS if rule_id in c.rules]
    checks = [d for d in map(_first_paragraph, docs) if d]
    if checks:
        out["checks"] = checks[0]
    if kind.startswith("conformance suite"):
        if rule_id in NEEDS:
            out["needs"] = NEEDS[rule_id]
        slug = TEST_SLUGS.get(rule_id)
        if slug is not None:
            out["test"] = f"test_{rule_id.lower()}_{slug}"
    return out


@app.command()
def rule(
    rule_id: Annotated[str, typer.Argument(metavar="ID", help="A rule id, e.g. TS202 or TC405", show_default=False)],
    output: Annotated[OutputFormat, typer.Option("--output", "-o", help="Report format")] = OutputFormat.text,
) -> None:
    """Explain one rule: id, severity, spec section, summary, what reports it."""
    wanted = rule_id.strip().upper()
    found = next(((kind, part[wanted]) for kind, part in _each_rule_part() if wanted in part), None)
    if found is None:
        raise InputError(f"unknown rule {rule_id!r} (see `turnspec rules`)")
    kind, info = found
    doc = {**_rule_row(info), **_rule_details(info.id, kind), **_rule_help(info)}
    if output == OutputFormat.json:
        body = json.dumps(escaping.json_safe(doc), indent=2, ensure_ascii=False)
        sys.stdout.write(escaping.json_text(body) + "\n")
        return
    strict = " (an error with --strict)" if info.strict else ""
    lines = [
        f"{info.id}: {info.summary}",
        f"  severity: {info.severity}{strict}",
        f"  section:  {info.section}",
        f"  kind:     {kind}",
    ]
    if "checks" in doc:
        lines.append(f"  checks:   {doc['checks']}")
    if "needs" in doc:
        lines.append(f"  needs:    the adapter capability {doc['needs']} (skipped when declared false)")
    if "test" in doc:
        lines.append(f"  test:     {doc['test']} (suite.testing.AdapterConformanceTests)")
    if kind.startswith(("format", "migration")):
        lines.append(f"  select:   validate --select {info.id}, or --ignore {info.id} to leave it out")
    elif kind.startswith("conformance suite"):
        lines.append(f"  select:   conform --select {info.id}, or --ignore {info.id} to leave it out")
    for s in doc["requires"]:
        lines.append(f"  requires: {s['text']} ({s['spec']} {s['section']}, traceability row {s['ref']})")
    for x in doc.get("examples", []):
        where = f", at {x['pointer']}" if x["pointer"] else ""
        lines.append(f"  failing:  {x['fixture']} line {x['line']}{where}:")
        lines += [f"              {row}" for row in x["failing"].splitlines()]
        if x["passing"] is not None:
            lines.append(f"  passing:  {x['base']} line {x['line']}{where}:")
            lines += [f"              {row}" for row in x["passing"].splitlines()]
    for m in doc.get("catches", []):
        lines.append(f"  catches:  {m['bug']} ({m['mutant']})")
    lines.append(f"  fix:      {doc['fix']}")
    lines.append(f"  docs:     {doc['help_uri']}")
    sys.stdout.writelines(escaping.text_line(line) + "\n" for line in lines)


def _rule_help(info: RuleInfo) -> dict[str, Any]:
    """The statements a rule enforces, its fixture's examples, the bugs it catches, how to
    fix it and its docs page (`ruledocs`: the same text as SARIF `help` and the docs site)."""
    out: dict[str, Any] = {
        "requires": [
            {"ref": s.ref, "spec": s.spec, "section": s.section, "text": s.text} for s in ruledocs.statements(info.id)
        ]
    }
    ex = ruledocs.example(info.id)
    if ex is not None:
        out["examples"] = [
            {"fixture": ex.fixture, "base": ex.base, "line": x.line, "pointer": x.pointer,
             "failing": x.failing_fragment, "passing": x.passing_fragment}
            for x in ex.lines
        ]  # fmt: skip
    caught = ruledocs.mutants(info.id)
    if caught:
        out["catches"] = [{"mutant": m.name, "base": m.base, "bug": m.bug} for m in caught]
    out["fix"] = ruledocs.fix_text(info)
    out["help_uri"] = ruledocs.help_uri(info.id)
    return out


@app.command()
def version() -> None:
    """Print the turnspec version."""
    sys.stdout.write(f"turnspec {__version__}\n")


@functools.cache
def command() -> click.Command:
    """The click command of the whole CLI, built once per process (sub-commands registered
    here: `commands` imports this module's app; building it from the typer app is the
    slow part of a call, so repeated `main()` calls, as in tests, share it)."""
    from .commands import register_all  # the sub-command modules sit above this one

    register_all(app)
    return typer.main.get_command(app)


@functools.cache
def _own_command(name: str) -> click.Command:
    """The CLI with only `name`, one of the commands this module declares (`validate`,
    `rules`, `rule`, `version`), for a call that runs it: building every command
    evaluates every command's annotations and imports every command module, which such
    a call needs not (its usage and help are the same)."""
    one = copy.copy(app)
    one.registered_commands = [c for c in app.registered_commands[:_OWN] if _command_name(c) == name]
    one.registered_groups = []
    return typer.main.get_command(one)


def _command_name(info: typer.models.CommandInfo) -> str:
    return info.name or typer.main.get_command_name(info.callback.__name__)  # type: ignore[union-attr]


def _command_for(argv: list[str] | None) -> click.Command:
    """The click command that runs `argv`: one of this module's own commands alone
    (`_own_command`), or the whole CLI (`command`)."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in _OWN_NAMES:
        return _own_command(args[0])
    return command()


# the commands this module declares (`_own_command`): the sub-command modules add theirs later
_OWN = len(app.registered_commands)
_OWN_NAMES = frozenset(_command_name(c) for c in app.registered_commands)


def _tolerant_streams() -> None:
    """Standard output and error never fail a run on a character their encoding lacks
    (`PYTHONIOENCODING=ascii`, a latin-1 terminal): it is written as a `\\uXXXX` escape."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)  # a TextIOWrapper; a replaced stream may not be
        if callable(reconfigure):
            with contextlib.suppress(ValueError, io.UnsupportedOperation):
                reconfigure(errors="backslashreplace")


class StdoutError(OSError):
    """A write to standard output failed (a full disk, `> /dev/full`): exit 2, one line."""


class _MarkedStdout(io.RawIOBase):
    """File descriptor 1, whose failed writes raise `StdoutError`. Python's own stdout
    raises a bare OSError, which cannot be told from any other file's (and its buffer
    drops what it failed to write, so a second flush does not tell either); this layer
    is the one place that knows the error is standard output's. It never closes fd 1."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self.fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return os.isatty(self.fd)

    def write(self, data: Any) -> int:
        try:
            return os.write(self.fd, data)
        except BrokenPipeError:
            raise  # `| head`: handled as such
        except OSError as exc:
            raise StdoutError(exc.errno, exc.strerror) from None


@contextlib.contextmanager
def _marked_stdout() -> Iterator[None]:
    """While the command runs, the process's standard output (when `sys.stdout` is it,
    not a test's capture) writes through `_MarkedStdout`, with the same encoding."""
    original = sys.stdout
    if original is None or original is not sys.__stdout__ or not isinstance(original, io.TextIOWrapper):
        yield
        return
    try:
        fd = original.fileno()
    except (OSError, ValueError):
        yield
        return
    original.flush()
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(_MarkedStdout(fd)), encoding=original.encoding, errors=original.errors,
        line_buffering=bool(original.line_buffering),
    )  # fmt: skip
    try:
        yield
    finally:
        marked, sys.stdout = sys.stdout, original
        with contextlib.suppress(OSError, ValueError):
            marked.flush()  # already done by main (or failed there, and fd 1 is /dev/null now)


def _discard_stdout() -> None:
    """Send what is left for standard output nowhere, so the interpreter's final flush
    neither fails again nor prints a traceback-like 'Exception ignored' message."""
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _stdout_failed(exc: StdoutError) -> int:
    error(f"standard output: cannot write: {exc.strerror or exc}")
    _discard_stdout()
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning every expected failure into a message and exit 2.
    Standard output is flushed here, so a failing one (a full disk) is such a failure too."""
    _tolerant_streams()
    with _marked_stdout():
        rc = _main(argv)
        try:
            sys.stdout.flush()
        except StdoutError as exc:
            return _stdout_failed(exc)
        except BrokenPipeError:  # `turnspec ... | head`: stop quietly
            _discard_stdout()
        return rc


def _main(argv: list[str] | None) -> int:
    try:
        rc = _command_for(argv).main(args=argv, prog_name="turnspec", standalone_mode=False)
        if rc == 130:  # typer's answer to a KeyboardInterrupt (Ctrl-C) inside a command
            return _interrupted(argv)
        return rc if isinstance(rc, int) else 0
    except typer.Exit as e:
        return int(e.exit_code)
    except InputError as e:
        error(str(e))
        return 2
    except KeyboardInterrupt:
        return _interrupted(argv)
    except BrokenPipeError:  # `turnspec ... | head`: stop quietly, and let exit's final flush go nowhere
        _discard_stdout()
        return 0
    except StdoutError as e:
        return _stdout_failed(e)
    except Exception as e:  # usage errors and anything unexpected: a message, never a traceback
        # typer vendors click; its usage errors are recognised by their interface
        choice = _choice_error(e)
        if choice is not None:
            error(choice)
            return 2
        show = getattr(e, "show", None)
        if callable(show) and isinstance(getattr(e, "exit_code", None), int):
            shown = io.StringIO()
            show(file=shown)  # click quotes what it echoes; escaped all the same, as every stderr line
            sys.stderr.write(escaping.lines(shown.getvalue()))
            return 2
        if type(e).__name__ == "Abort":
            return _interrupted(argv)
        return _internal(e)


def _interrupted(argv: list[str] | None) -> int:
    """Ctrl-C (SIGINT): one line saying so (and, for a run keeping its parts, that the same
    command goes on from them), exit 130 as shells do (128 + SIGINT)."""
    args = sys.argv[1:] if argv is None else argv
    kept = any(a == "--resume" or a.startswith("--resume=") for a in args)
    more = "; the parts finished so far are kept: run the same command again to go on" if kept else ""
    error(f"interrupted{more}")
    return 130


def _choice_error(e: Exception) -> str | None:
    """`--output: 'xml' is not one of text, json`: one line for a value an option of fixed
    choices (an enum) does not take, naming the real choices; None for any other error."""
    param = getattr(e, "param", None)
    if type(e).__name__ != "BadParameter" or not isinstance(param, TyperOption):
        return None
    kind = param.type_descriptor.annotation
    if not (isinstance(kind, type) and issubclass(kind, enum.Enum)):
        return None
    # typer checks the value with pydantic: the error it raises from holds the value given
    errors = getattr(e.__cause__, "errors", None)
    given = [x.get("input") for x in errors()] if callable(errors) else []
    if not given or not isinstance(given[0], str):
        return None
    flag = max((o for o in param.opts if o.startswith("--")), key=len, default=param.opts[0])
    return f"{flag}: {given[0]!r} is not one of {', '.join(str(m.value) for m in kind)}"


def _internal(e: Exception) -> int:
    error(f"internal error: {type(e).__name__}: {e} (please report this)")
    return 3
