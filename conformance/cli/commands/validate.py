"""`turnspec validate`: a shell over `conformance.api` (expand, iter_validate), in four steps.

1. option resolution (`resolve`): the flags over `[tool.turnspec]`, each checked, into a `Plan`;
2. the inputs (`expand_inputs`): every path walked into units, each with its format;
3. running (`run`): findings streamed from the engine (this process, `--jobs` workers or
   Ray), filtered by per-file ignores and the baseline, each text line written as it
   comes, under a progress bar on a terminal;
4. rendering (`render`) and the exit code (`exit_code`, which writes `--write-baseline`).
"""

from __future__ import annotations

import collections
import enum
import json
import sys
import typing
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ...api import Report, default_jobs, expand, iter_validate
from ...catalogue import every_rule
from ...core import escaping
from ...core.baseline import Baseline
from ...core.baseline import check_destination as check_baseline_destination
from ...core.baseline import load as load_baseline
from ...core.baseline import write as write_baseline_file
from ...core.color import ColorChoice, Palette
from ...core.color import wanted as colour_wanted
from ...core.config import Config
from ...core.config import find as find_config
from ...core.config import load as load_config
from ...core.errors import InputError
from ...core.findings import Finding, Selection, in_order, location_key
from ...core.jsonio import check_input, forget_stdin
from ...core.reporting import UNREADABLE, FindingsReport, findings_output, output_choices, write_findings
from ...core.schemas import versions
from ...formats import Format, Options, all_formats, catalog
from ...migrations.rules import CATALOG as MIGRATION_RULES
from .. import progress
from ..options import LOCK_WAIT, check_prefixes, resolved_lock_wait, split
from ..streams import error, note

FormatName = enum.StrEnum("FormatName", {f.name: f.name for f in all_formats()})  # type: ignore[misc]

# validate's own renderings, then every findings output (`reporting.FINDINGS_OUTPUTS`)
ValidateOutput = output_choices("ValidateOutput", "text", "json")

_Choice = typing.TypeVar("_Choice", bound=enum.StrEnum)


class Engine(enum.StrEnum):
    local = "local"
    ray = "ray"


def _choices(kind: type[enum.StrEnum]) -> str:
    """`one of a, b, c`: the choices of an option, in its help text (wrapped at spaces)."""
    return "one of " + ", ".join(m.value for m in kind)


# validate's arguments and options, each declared once (the signature gives its type and default)
PATHS = typer.Argument(
    help="Files or directories (.json, .jsonl, ...); '-' reads standard input; URLs with --engine ray",
    show_default=False,
)
OUTPUT = typer.Option("--output", "-o", help="Report format (default: text, or `output` in [tool.turnspec])")
STRICT = typer.Option("--strict/--no-strict", help="Treat tolerated unknowns (§10.3) as errors")
SELECT = typer.Option(help="Only these rule ids or prefixes (comma-separated)")
IGNORE = typer.Option(help="Skip these rule ids or prefixes")
FORMAT = typer.Option(
    "--format", metavar="FORMAT", help=f"Force a format instead of detecting it: {_choices(FormatName)}"
)
STDIN_FILENAME = typer.Option(
    "--stdin-filename",
    metavar="NAME",
    help="The name of '-' in findings; its suffix says how standard input is read"
    " (.json one document, .jsonl lines; without it, a first '[' means one document)",
)
TOOLS = typer.Option(help="ToolDefinition file: check tool_use names and input")
PRICING = typer.Option(help="Price table (YAML/JSON): recompute cost_usd")
QUIET = typer.Option("--quiet", "-q", help="Print only the summary")
REVISION = typer.Option(
    help="Canonical schema revision to read with (default: v1, the spec as published; v2 is drafted)"
)
SHOW_SKIPPED = typer.Option("--show-skipped", help="List every file the walk skipped (no known format)")
JOBS = typer.Option(
    "--jobs", "-j", min=1, help="Processes: this one and N-1 workers (default: the cores this process may use)"
)
RESUME = typer.Option(help="Keep each finished part of the run in this folder; a rerun continues from it")
CHUNK_BYTES = typer.Option("--chunk-bytes", min=1, help="Bytes of a large file per task (default 4 MiB)")
ENGINE = typer.Option("--engine", help="Where to run: local processes, or Ray (the [ray] extra)")
RAY_ADDRESS = typer.Option("--ray-address", help="A Ray cluster to join (default: start Ray locally)")
FAIL_ON_SKIP = typer.Option("--fail-on-skip", help="Exit 1 when any file was skipped (in no known format)")
SKIP_UNKNOWN = typer.Option(
    "--skip-unknown",
    help="A file named here that no format claims is skipped, as in a folder walk (a .jsonl is still"
    " read as canonical); what the pre-commit hook passes: every file of a commit",
)
EXIT_ZERO = typer.Option("--exit-zero", help="Exit 0 even when violations are found (input errors still exit 2)")
STATISTICS = typer.Option(
    "--statistics",
    help="After the report, the count of findings per rule, most frequent first"
    " (on standard error with a machine-readable --output)",
)
COLOR = typer.Option(
    "--color",
    help="Colour the text report: auto (on a terminal, unless NO_COLOR is set), always, never",
)
BASELINE = typer.Option(
    "--baseline",
    metavar="FILE",
    help="Report only findings not recorded in FILE (written by --write-baseline); only they set the exit code",
)
WRITE_BASELINE = typer.Option(
    "--write-baseline",
    metavar="FILE",
    help="Record every finding of this run in FILE (replacing an older baseline) and exit 0",
)


def register(app: typer.Typer) -> None:
    app.command()(validate)


def validate(
    paths: Annotated[list[str], PATHS],
    output: Annotated[ValidateOutput | None, OUTPUT] = None,  # type: ignore[valid-type]  # the choices are read from the outputs' registry
    strict: Annotated[bool | None, STRICT] = None,
    select: Annotated[list[str] | None, SELECT] = None,
    ignore: Annotated[list[str] | None, IGNORE] = None,
    fmt: Annotated[FormatName | None, FORMAT] = None,
    stdin_filename: Annotated[str | None, STDIN_FILENAME] = None,
    tools: Annotated[Path | None, TOOLS] = None,
    pricing: Annotated[Path | None, PRICING] = None,
    quiet: Annotated[bool, QUIET] = False,
    revision: Annotated[list[str] | None, REVISION] = None,
    show_skipped: Annotated[bool, SHOW_SKIPPED] = False,
    jobs: Annotated[int | None, JOBS] = None,
    resume: Annotated[Path | None, RESUME] = None,
    chunk_bytes: Annotated[int | None, CHUNK_BYTES] = None,
    engine: Annotated[Engine, ENGINE] = Engine.local,
    ray_address: Annotated[str | None, RAY_ADDRESS] = None,
    fail_on_skip: Annotated[bool, FAIL_ON_SKIP] = False,
    skip_unknown: Annotated[bool, SKIP_UNKNOWN] = False,
    exit_zero: Annotated[bool, EXIT_ZERO] = False,
    statistics: Annotated[bool, STATISTICS] = False,
    color: Annotated[ColorChoice, COLOR] = ColorChoice.auto,
    baseline: Annotated[Path | None, BASELINE] = None,
    write_baseline: Annotated[Path | None, WRITE_BASELINE] = None,
    lock_wait: Annotated[float | None, LOCK_WAIT] = None,
) -> None:
    """Validate transcripts; report each violation with file, line, JSON pointer and rule."""
    forget_stdin()  # each run reads standard input afresh
    flags = Flags(
        paths=paths, output=output, strict=strict, select=select, ignore=ignore, fmt=fmt,
        stdin_filename=stdin_filename, tools=tools, pricing=pricing, quiet=quiet, revision=revision,
        show_skipped=show_skipped, jobs=jobs, resume=resume, chunk_bytes=chunk_bytes, engine=engine,
        ray_address=ray_address, fail_on_skip=fail_on_skip, skip_unknown=skip_unknown, exit_zero=exit_zero,
        statistics=statistics, color=color, baseline=baseline, write_baseline=write_baseline, lock_wait=lock_wait,
    )  # fmt: skip
    plan = resolve(flags)
    units, report = expand_inputs(plan)
    found_in = run(plan, units, report)
    render(plan, report, found_in)
    raise typer.Exit(exit_code(plan, report))


# 1. option resolution


@dataclass(frozen=True)
class Flags:
    """What the command line gave `validate` (None: not given; `[tool.turnspec]` or the default then)."""

    paths: list[str]
    output: str | None
    strict: bool | None
    select: list[str] | None
    ignore: list[str] | None
    fmt: enum.StrEnum | None
    stdin_filename: str | None
    tools: Path | None
    pricing: Path | None
    quiet: bool
    revision: list[str] | None
    show_skipped: bool
    jobs: int | None
    resume: Path | None
    chunk_bytes: int | None
    engine: Engine
    ray_address: str | None
    fail_on_skip: bool
    skip_unknown: bool
    exit_zero: bool
    statistics: bool
    color: ColorChoice
    baseline: Path | None
    write_baseline: Path | None
    lock_wait: float | None


@dataclass(frozen=True)
class Plan:
    """A run as the flags and `[tool.turnspec]` settle it: what to read with, what to write."""

    flags: Flags
    cfg: Config
    output: str  # a `ValidateOutput`
    fmt_name: str | None  # a forced format (--format), else None: detected per file
    options: Options
    known: Baseline | None  # --baseline: findings recorded there are neither shown nor counted
    recorded: Baseline | None  # --write-baseline: every finding of the run, written at the end
    palette: Palette  # the text report's colours (--color), off for every other output


def resolve(flags: Flags) -> Plan:
    """The run `flags` ask for: each flag over its `[tool.turnspec]` setting (the closest
    pyproject.toml's), every flag checked in turn (the first wrong one is a usage error)."""
    cfg = load_config(find_config())  # [tool.turnspec] of the closest pyproject.toml; flags override it
    output = flags.output or _config_choice(cfg, "output", ValidateOutput) or ValidateOutput("text")
    fmt = flags.fmt or _config_choice(cfg, "format", FormatName)
    strict = bool(cfg.strict) if flags.strict is None else flags.strict
    select = flags.select if flags.select is not None else list(cfg.select or ()) or None
    ignore = flags.ignore if flags.ignore is not None else list(cfg.ignore or ()) or None
    for _glob, ids in cfg.per_file_ignores:
        _check_rule_ids(ids)
    if flags.stdin_filename is not None and "-" not in flags.paths:
        raise InputError("--stdin-filename: only with '-' (standard input) among the paths")
    sel = Selection(select=split(select), ignore=split(ignore), strict=strict)
    _check_rule_ids(sel.select + sel.ignore)
    revisions = _check_inputs(flags)
    known: Baseline | None = None
    if flags.baseline is not None:
        known = load_baseline(flags.baseline)
    elif flags.write_baseline is not None:
        check_baseline_destination(flags.write_baseline, flags.paths)
    recorded = Baseline(flags.write_baseline.parent) if flags.write_baseline is not None else None
    options = Options(
        selection=sel, tools=flags.tools, pricing=flags.pricing, revisions=revisions,
        lock_wait=resolved_lock_wait(flags.lock_wait, cfg),
    )  # fmt: skip
    fmt_name = fmt.value if fmt is not None else None
    palette = Palette(output == "text" and colour_wanted(flags.color, sys.stdout))
    return Plan(flags, cfg, output, fmt_name, options, known, recorded, palette)


def _check_inputs(flags: Flags) -> tuple[str, ...]:
    """The flags naming inputs and engines checked, in turn: --tools and --pricing regular
    files, each --revision a known one (returned), --ray-address with Ray, one baseline flag."""
    for flag, given in (("--tools", flags.tools), ("--pricing", flags.pricing)):
        if given is not None:
            try:
                check_input(given)  # a regular file: never a FIFO or device (read later, once)
            except InputError as exc:
                raise InputError(f"{flag} {exc}") from None
    revisions = split(flags.revision)
    for rev in revisions:
        if rev not in versions("canonical"):
            raise InputError(
                f"--revision: unknown canonical revision {rev!r} (known: {', '.join(versions('canonical'))})"
            )
    if flags.ray_address is not None and flags.engine != Engine.ray:
        raise InputError("--ray-address: only with --engine ray")
    if flags.baseline is not None and flags.write_baseline is not None:
        raise InputError("--baseline and --write-baseline: give one (--write-baseline records every finding anew)")
    return revisions


def _check_rule_ids(ids: tuple[str, ...]) -> None:
    if not ids:
        return
    check_prefixes("--select/--ignore", ids, [r.id for r in catalog()] + [r.id for r in MIGRATION_RULES])


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


# 2. the inputs

Unit = tuple[Any, Format]  # a path (or a URL's file, with --engine ray) and the format that reads it


def expand_inputs(plan: Plan) -> tuple[list[Unit], Report]:
    """Every path walked into units (each file with its format), the report started with
    the files skipped and the inputs that cannot be read (each said on standard error).
    With no unit to validate, the run ends here (`typer.Exit`)."""
    flags = plan.flags
    skipped: list[Path] = []
    report = Report()
    units: list[Unit] = []
    for top in flags.paths:
        if flags.engine == Engine.ray and "://" in top:
            # function-level import: fsspec (and Ray) are loaded only when --engine ray is asked
            from ...parallel.ray_engine import expand_urls

            units += expand_urls([top], plan.fmt_name, skipped, report.problems)
        else:
            units += expand(
                [top], plan.fmt_name, skipped, report.problems, stdin_name=flags.stdin_filename,
                skip_unknown=flags.skip_unknown,
            )  # fmt: skip
    report.skipped = [str(p) for p in skipped]
    for message in report.problems:
        error(message)
    if not units:
        if flags.skip_unknown and not report.problems:  # nothing to validate among the files named: not an error
            sys.stdout.write(escaping.text_line(f"OK: no file in a known format ({len(skipped)} skipped)") + "\n")
            raise typer.Exit(1 if flags.fail_on_skip and skipped else 0)
        if flags.show_skipped:  # asked for: the files the walk set aside, before the error that names none
            sys.stderr.writelines(escaping.text_line(f"skipped (no known format): {p}") + "\n" for p in report.skipped)
        if not report.problems:
            error(
                f"no file in a known format in {', '.join(map(str, flags.paths))}"
                f" ({len(skipped)} file(s) skipped); pass --format to choose one"
            )
        raise typer.Exit(2)
    return units, report


# 3. running


class _Admission:
    """The findings the report takes, in the order the engine yields them: those a per-file
    ignore or the baseline leaves out are dropped (a baselined one is neither shown nor
    counted), the rest recorded for --write-baseline and counted (kept for a rendering that
    needs them all); a problem the run met on the way is said as it comes (`say`)."""

    def __init__(self, plan: Plan, report: Report, say: Callable[[str], None]) -> None:
        self.plan, self.report, self.say = plan, report, say
        self.seen = len(report.problems)  # the problems already said
        self.found_in: set[str] = set()  # the paths findings were reported at
        self.keep = plan.output != "text"  # text and -q keep only the counts (text sorts them in bounded memory)

    def admitted(self, found: Iterable[Finding]) -> Iterator[Finding]:
        plan, report = self.plan, self.report
        for finding in found:
            self.found_in.add(finding.path)
            if plan.cfg.ignored(finding.path, finding.rule):
                continue
            if plan.known is not None and plan.known.take(finding):
                continue  # recorded in the baseline: neither shown nor counted
            if plan.recorded is not None:
                plan.recorded.add(finding)
            report.add(finding, keep=self.keep)
            if len(report.problems) > self.seen:
                for message in report.problems[self.seen :]:
                    self.say(message)
                self.seen = len(report.problems)
            yield finding


def run(plan: Plan, units: list[Unit], report: Report) -> set[str]:
    """Validate `units` into `report`, each text line written as its finding comes (by
    path, line, column), under a byte progress bar on a terminal for a large input.
    Returns the paths findings were reported at."""
    total = sum(p.stat().st_size for p, _ in units if isinstance(p, Path) and p.is_file())
    out = sys.stdout
    with progress.progress_bar(progress.wanted(total), total) as bar:
        # the bar's line is cleared before a line of the report or a message reaches the terminal
        above = bar.clear if bar is not None and out.isatty() else None

        def say(message: str) -> None:
            if bar is not None:
                bar.clear()
            error(message)

        admission = _Admission(plan, report, say)
        found = _findings(plan, units, report, bar.advance if bar is not None else None, say)
        if plan.output == "text" and not plan.flags.quiet:
            for finding in in_order(admission.admitted(found)):  # by path, line, column, as every output
                if above is not None:
                    above()
                out.write(_finding_line(finding, plan.palette) + "\n")
                if above is not None:
                    out.flush()  # on the screen before the bar is drawn again
        else:
            collections.deque(admission.admitted(found), maxlen=0)
    for message in report.problems[admission.seen :]:
        error(message)
    return admission.found_in


def _findings(
    plan: Plan, units: list[Unit], report: Report, advance: Callable[[int], None] | None, say: Callable[[str], None]
) -> Iterable[Finding]:
    """The engine's findings over `units`: Ray's with --engine ray, else this process's and
    its --jobs workers' (`api.iter_validate`); notes said through `say`."""
    flags = plan.flags

    def notify(message: str) -> None:
        say(f"note: {message}")

    if flags.engine == Engine.ray:
        # function-level import: Ray and fsspec are loaded only when --engine ray is asked
        from ...parallel.ray_engine import validate_ray

        return validate_ray(
            units, plan.options, inputs=flags.paths, address=flags.ray_address, jobs=flags.jobs,
            resume=flags.resume, chunk_bytes=flags.chunk_bytes, files=report.files, progress=advance,
            problems=report.problems, notify=notify, summary=notify,
        )  # fmt: skip
    return iter_validate(
        flags.paths, plan.options, fmt=plan.fmt_name, files=report.files, progress=advance,
        problems=report.problems, units=units, jobs=flags.jobs or default_jobs(), resume=flags.resume,
        chunk_bytes=flags.chunk_bytes, notify=notify,
    )  # fmt: skip


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


# 4. rendering and the exit code


def render(plan: Plan, report: Report, found_in: set[str]) -> None:
    """After the run: a note for each file that held no record, then the report (`--output`:
    JSON, a findings output, or the text summary) and `--statistics`."""
    for stats in report.files:
        if (
            stats.records == 0 and stats.path not in found_in and not stats.unread
        ):  # an empty file passes: say that nothing was read
            note(f"{stats.path}: holds no record; nothing in it was validated")
    report.findings.sort(key=location_key)
    out = sys.stdout
    if plan.output == "json":
        doc = report.as_dict()
        if plan.known is not None:
            doc["summary"] = {**typing.cast(dict[str, Any], doc["summary"]), "baselined": plan.known.matched}
        body = json.dumps(escaping.json_safe(doc), indent=2, ensure_ascii=False)
        out.write(escaping.json_text(body) + "\n")
    elif findings_output(plan.output) is not None:
        _ci_output(plan.output, report)
    else:
        out.writelines(_summary(plan, report))
    if plan.flags.statistics:
        (out if plan.output == "text" else sys.stderr).writelines(_statistics(report))


def _skip_fails(plan: Plan, report: Report) -> bool:
    """--fail-on-skip, and a file was skipped: the run fails (exit 1) for it."""
    return plan.flags.fail_on_skip and bool(report.skipped)


def _summary(plan: Plan, report: Report) -> list[str]:
    """The text report's last lines: the verdict and counts, then the files skipped."""
    s = report.summary()
    unreadable = f", {len(report.problems)} unreadable" if report.problems else ""
    known = plan.known
    if known is not None:
        gone = f" ({known.unmatched} no longer found)" if known.unmatched else ""
        unreadable += f", {known.matched} baselined{gone}"
    verdict = plan.palette.verdict(not (report.exit_code or _skip_fails(plan, report)))
    lines = [
        f"{verdict}: {s['errors']} error(s), {s['warnings']} warning(s) "
        f"in {s['files']} file(s), {s['records']} record(s){unreadable}\n"
    ]
    if report.skipped and plan.flags.show_skipped:
        lines += [escaping.text_line(f"skipped (no known format): {p}") + "\n" for p in report.skipped]
    elif report.skipped:
        lines.append(
            escaping.text_line(
                f"skipped {len(report.skipped)} file(s) in no known format, e.g. {report.skipped[0]}"
                " (--show-skipped lists them)"
            )
            + "\n"
        )
    return lines


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


def _ci_output(output: str, report: Report) -> None:
    """A findings output (SARIF, GitHub annotations and step summary, JUnit, ...) of a
    validation report: its unreadable inputs are TS000 findings, its skipped files notes."""
    problems = [Finding(p.split(": ", 1)[0], None, "", UNREADABLE.id, UNREADABLE.severity, p) for p in report.problems]
    found = [*report.findings, *problems]
    files = [f.path for f in report.files]
    summary = FindingsReport("turnspec validate", found, every_rule(), files=files, skipped=report.skipped)
    write_findings(output, summary, sys.stdout)


def exit_code(plan: Plan, report: Report) -> int:
    """0 valid, 1 findings, 2 an input could not be read; --write-baseline writes the
    baseline (a run that records its findings passes), --exit-zero and --fail-on-skip last."""
    rc = report.exit_code
    flags = plan.flags
    if plan.recorded is not None and flags.write_baseline is not None:
        if report.problems:
            error(f"--write-baseline {escaping.name(flags.write_baseline)}: not written: some inputs could not be read")
        else:
            n = write_baseline_file(flags.write_baseline, plan.recorded)
            note(f"wrote {n} finding(s) to the baseline {escaping.name(flags.write_baseline)}")
            rc = 0 if rc == 1 else rc
    if flags.exit_zero and rc == 1:
        rc = 0
    if _skip_fails(plan, report) and rc == 0:
        rc = 1
    return rc
