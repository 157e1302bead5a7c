"""The library API under `turnspec validate`: paths in, findings and a report out.

from conformance.api import validate
report = validate(["transcripts/"])
for f in report.findings: print(f.format())
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .core.errors import InputError
from .core.findings import Finding, Severity
from .core.jsonio import StdinPath, check_input, is_stdin, links_leaving, os_error
from .formats import FileStats, Format, FormatRun, Options, detect_format, get_format, read_unit
from .formats.base import ProgressHook
from .parallel import DEFAULT_CHUNK_BYTES, default_jobs, worth_sharing

STDIN = "-"

__all__ = ["Report", "default_jobs", "expand", "iter_validate", "validate"]


def _problem(problems: list[str] | None, message: str) -> None:
    """Record an input that cannot be read; without a list to record it in, stop."""
    if problems is None:
        raise InputError(message)
    problems.append(message)


def _readable(p: Path, problems: list[str] | None) -> bool:
    """True for a regular file or a folder; anything else is recorded as a problem
    (FIFOs, devices, sockets, dangling links, symlink loops), never opened."""
    try:
        check_input(p, allow_dir=True)
    except InputError as exc:
        _problem(problems, str(exc))
        return False
    return True


def _is_dir(p: Path) -> bool:
    try:
        return p.is_dir()
    except OSError:
        return False


def expand(
    paths: Iterable[str | Path],
    fmt: str | None = None,
    skipped: list[Path] | None = None,
    problems: list[str] | None = None,
    stdin_name: str | None = None,
    *,
    skip_unknown: bool = False,
) -> list[tuple[Path, Format]]:
    """Files (and directory units, such as a chibi context) to validate, with their format.

    Directories are walked top-down in sorted order; a directory some format claims as
    one unit is not descended into, and files no format claims go to `skipped` (the
    report lists them, so nothing is passed over silently). A `.json`/`.jsonl` file named
    explicitly is validated as canonical when no format claims it; `-` is standard input
    (canonical unless `fmt` says otherwise; with `stdin_name`, a `StdinPath` reported
    under that name and read as its suffix says, see `jsonio.reads_as_lines`).

    With `skip_unknown`, a file named explicitly that no format claims goes to `skipped`, as
    in a walk (a pre-commit hook names every file of a commit, `package.json` included),
    but for a `.jsonl`, still read as canonical: JSON Lines are transcripts, and a broken
    one must fail.

    Only regular files and folders are looked at. A path that cannot be read (missing,
    a FIFO or device, a symlink loop, an unreadable folder) goes to `problems`, and the
    rest is still expanded; without a `problems` list the first one raises `InputError`.
    """
    try:
        forced = get_format(fmt) if fmt else None
    except KeyError as exc:
        raise InputError(str(exc.args[0])) from None

    def detect(p: Path) -> Format | None:
        if forced is not None:
            return forced if forced.detect(p) else None
        return detect_format(p)

    def claim(p: Path) -> Format | None:
        """The format of a path met in a directory walk (one `detect` per format asked);
        a path that cannot be looked into (a denied folder or file) is recorded as a
        problem and claimed by none. A folder claimed as one unit is read inside itself
        only: each link in it that leaves it is recorded, and the format does not follow it."""
        try:
            unit = detect(p)
            if unit is not None and p.is_dir():
                for link, target in links_leaving(p):
                    _problem(problems, f"{link}: a link to {target}, outside {p} (read as one unit); not followed")
        except OSError as exc:
            if not _is_dir(p):
                _problem(problems, str(os_error(p, exc)))
            # else a folder no format can look into is walked, and the walk says where it cannot read
            return None
        return unit

    out: list[tuple[Path, Format]] = []
    for top in map(Path, paths):
        if str(top) == STDIN:
            out.append((StdinPath(stdin_name) if stdin_name else top, forced or get_format("canonical")))
            continue
        if not _readable(top, problems):
            continue
        # a path named explicitly: a forced format takes any file; canonical is the fallback
        unit = forced if forced is not None and top.is_file() else claim(top)
        if unit is None and top.is_file() and top.suffix in ((".jsonl",) if skip_unknown else (".json", ".jsonl")):
            unit = get_format("canonical")
        if unit is not None:
            out.append((top, unit))
            continue
        if skip_unknown and not top.is_dir():
            if skipped is not None:
                skipped.append(top)
            continue
        if not top.is_dir():
            _problem(problems, f"{top}: cannot tell which format this is; pass --format")
            continue

        def unreadable(exc: OSError) -> None:
            _problem(problems, f"{exc.filename}: cannot read folder: {exc.strerror or exc}")

        for root, dirs, names in os.walk(top, onerror=unreadable):
            dirs.sort()
            here = Path(root)
            keep = []
            for d in dirs:
                try:
                    linked = (here / d).is_symlink()
                except OSError as exc:  # a folder without search permission above it
                    _problem(problems, str(os_error(here / d, exc)))
                    continue
                if linked:  # a linked folder is not walked (os.walk's default); say so
                    names.append(d)
                    continue
                u = claim(here / d)
                if u is not None:
                    out.append((here / d, u))
                else:
                    keep.append(d)
            dirs[:] = keep
            for n in sorted(names):
                f = here / n
                if not _readable(f, problems):
                    continue
                u = claim(f)
                if u is not None:
                    out.append((f, u))
                elif skipped is not None:
                    skipped.append(f)
    return out


@dataclass
class Report:
    """What a run found. `add(finding, keep=False)` counts without storing, which is how the
    CLI's streaming text output keeps memory flat on huge inputs."""

    files: list[FileStats] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # inputs that could not be read (exit 2)
    counts: Counter[tuple[str, Severity]] = field(default_factory=Counter)

    def add(self, finding: Finding, *, keep: bool = True) -> None:
        self.counts[(finding.rule, finding.severity)] += 1
        if keep:
            self.findings.append(finding)

    def _count(self, severity: Severity) -> int:
        return sum(n for (_, sev), n in self.counts.items() if sev == severity)

    @property
    def errors(self) -> int:
        return self._count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        return self._count(Severity.WARNING)

    @property
    def exit_code(self) -> int:
        """2 when an input could not be read, else 1 on any error, else 0."""
        return 2 if self.problems else 1 if self.errors else 0

    def summary(self) -> dict[str, object]:
        return {
            "files": len(self.files),
            "skipped_files": len(self.skipped),
            "unreadable": len(self.problems),
            "records": sum(s.records for s in self.files),
            "errors": self.errors,
            "warnings": self.warnings,
            "by_rule": dict(sorted(_by_rule(self.counts).items())),
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "files": [{"path": s.path, "format": s.format, "records": s.records, **s.extra} for s in self.files],
            "violations": [f.as_dict() for f in self.findings],
            "summary": {**self.summary(), "skipped": self.skipped, "problems": self.problems},
        }


def _by_rule(counts: Counter[tuple[str, Severity]]) -> dict[str, int]:
    out: Counter[str] = Counter()
    for (rule, _), n in counts.items():
        out[rule] += n
    return dict(out)


def _canonical_bytes(units: list[tuple[Path, Format]]) -> int:
    """The bytes of the canonical files among `units` (what `--jobs` would share)."""
    n = 0
    for path, f in units:
        if f.name == "canonical" and not is_stdin(path):
            with contextlib.suppress(OSError):
                n += Path(path).stat().st_size
    return n


def iter_validate(
    paths: Iterable[str | Path],
    options: Options | None = None,
    *,
    fmt: str | None = None,
    files: list[FileStats] | None = None,
    progress: ProgressHook | None = None,
    skipped: list[Path] | None = None,
    problems: list[str] | None = None,
    units: list[tuple[Path, Format]] | None = None,
    jobs: int = 1,
    resume: Path | None = None,
    chunk_bytes: int | None = None,
    notify: Callable[[str], None] | None = None,
) -> Iterator[Finding]:
    """Stream the findings of every input; `files` (if given) receives per-file stats.

    With a `problems` list, an input that cannot be read (see `expand`) is recorded
    there and the others are still validated; without one it raises `InputError`.
    `units` skips the expansion when the caller already made it.

    `jobs > 1` validates canonical files (and byte ranges of large ones, `chunk_bytes`
    each) in that many processes (that many workers less one, and this one); `resume`
    keeps each finished part in that folder and reuses it on the next run, once it has
    checked that the part's bytes are the ones it was computed from (`notify` receives a
    line for each stored part that is recomputed, and why, and at the end one saying how
    many parts the folder answered). The findings are the same, in the same order
    (`conformance.parallel`).
    """
    options = options or Options()
    paths = list(paths)
    if units is None:
        units = expand(paths, fmt, skipped, problems)
    chunk_bytes = chunk_bytes or DEFAULT_CHUNK_BYTES
    if jobs > 1 and resume is None and not worth_sharing(_canonical_bytes(units), chunk_bytes):
        jobs = 1  # too little to share: the engine would run it here too, with the same report
    if jobs > 1 or resume is not None:
        # function-level import: the task engine (multiprocessing, the result codec) is
        # loaded only for a run that shares work or keeps results (startup, issue 13)
        from .parallel.engine import validate_units

        yield from validate_units(
            units, options, jobs=jobs, resume=resume, chunk_bytes=chunk_bytes,
            files=files, progress=progress, problems=problems, inputs=[str(p) for p in paths], notify=notify,
            summary=notify,
        )  # fmt: skip
        return
    runs: dict[str, FormatRun] = {}
    for path, f in units:
        run = runs.get(f.name)
        if run is None:
            run = runs[f.name] = f.start(options)
        stats = FileStats(str(path), f.name)
        if files is not None:
            files.append(stats)
        try:
            yield from read_unit(run, path, stats, progress)
        except InputError as exc:
            stats.unread = True
            _problem(problems, str(exc))
    for run in runs.values():
        yield from run.finish()


def validate(
    paths: Iterable[str | Path],
    options: Options | None = None,
    *,
    fmt: str | None = None,
    jobs: int = 1,
    resume: Path | None = None,
    chunk_bytes: int | None = None,
) -> Report:
    """Validate `paths` and collect everything into a `Report` (unreadable inputs in
    `report.problems`, and exit code 2). `jobs`, `resume`: see `iter_validate`."""
    report = Report()
    skipped: list[Path] = []
    for finding in iter_validate(
        paths, options, fmt=fmt, files=report.files, skipped=skipped, problems=report.problems,
        jobs=jobs, resume=resume, chunk_bytes=chunk_bytes,
    ):  # fmt: skip
        report.add(finding)
    report.skipped = [str(p) for p in skipped]
    return report
