"""The library API under `turnspec validate`: paths in, findings and a report out.

    from conformance.api import validate
    report = validate(["transcripts/"])
    for f in report.findings: print(f.format())
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
import os
from pathlib import Path

from .errors import InputError
from .findings import Finding, Severity
from .formats import FileStats, Format, FormatRun, Options, detect_format, get_format
from .formats.base import ProgressHook


def expand(paths: Iterable[str | Path], fmt: str | None = None) -> list[tuple[Path, Format]]:
    """Files (and directory units, such as a chibi context) to validate, with their format.

    Directories are walked top-down in sorted order; a directory some format claims as
    one unit is not descended into.
    """
    forced = get_format(fmt) if fmt else None

    def claim(p: Path) -> Format | None:
        if forced is not None:
            # a forced format takes any file given by name, and directories it claims
            return forced if p.is_file() or forced.detect(p) else None
        return detect_format(p)

    out: list[tuple[Path, Format]] = []
    for top in map(Path, paths):
        if not top.exists():
            raise InputError(f"{top}: no such file or directory")
        unit = claim(top)
        if unit is not None:
            out.append((top, unit))
            continue
        if not top.is_dir():
            raise InputError(f"{top}: cannot tell which format this is; pass --format")
        for root, dirs, names in os.walk(top):
            dirs.sort()
            here = Path(root)
            keep = []
            for d in dirs:
                u = claim(here / d)
                if u is not None and u.detect(here / d):
                    out.append((here / d, u))
                else:
                    keep.append(d)
            dirs[:] = keep
            for n in sorted(names):
                f = here / n
                u = forced if forced is not None and forced.detect(f) else (None if forced else detect_format(f))
                if u is not None:
                    out.append((f, u))
    return out


@dataclass
class Report:
    files: list[FileStats] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == Severity.ERROR)

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == Severity.WARNING)

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0

    def summary(self) -> dict[str, object]:
        return {
            "files": len(self.files),
            "records": sum(s.records for s in self.files),
            "errors": self.errors,
            "warnings": self.warnings,
            "by_rule": dict(sorted(Counter(f.rule for f in self.findings).items())),
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "files": [{"path": s.path, "format": s.format, "records": s.records, **s.extra} for s in self.files],
            "violations": [f.as_dict() for f in self.findings],
            "summary": self.summary(),
        }


def iter_validate(
    paths: Iterable[str | Path],
    options: Options | None = None,
    *,
    fmt: str | None = None,
    files: list[FileStats] | None = None,
    progress: ProgressHook | None = None,
) -> Iterator[Finding]:
    """Stream the findings of every input; `files` (if given) receives per-file stats."""
    options = options or Options()
    units = expand(paths, fmt)
    runs: dict[str, FormatRun] = {}
    for path, f in units:
        run = runs.get(f.name)
        if run is None:
            run = runs[f.name] = f.start(options)
        stats = FileStats(str(path), f.name)
        if files is not None:
            files.append(stats)
        yield from run.validate(path, stats, progress)
    for run in runs.values():
        yield from run.finish()


def validate(paths: Iterable[str | Path], options: Options | None = None, *, fmt: str | None = None) -> Report:
    """Validate `paths` and collect everything into a `Report`."""
    report = Report()
    report.findings = list(iter_validate(paths, options, fmt=fmt, files=report.files))
    return report
