"""The library API under `turnspec validate`: paths in, findings and a report out.

from conformance.api import validate
report = validate(["transcripts/"])
for f in report.findings: print(f.format())
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .findings import Finding, Severity
from .formats import FileStats, Format, FormatRun, Options, detect_format, get_format
from .formats.base import ProgressHook


def expand(
    paths: Iterable[str | Path], fmt: str | None = None, skipped: list[Path] | None = None
) -> list[tuple[Path, Format]]:
    """Files (and directory units, such as a chibi context) to validate, with their format.

    Directories are walked top-down in sorted order; a directory some format claims as
    one unit is not descended into, and files no format claims go to `skipped` (the
    report lists them, so nothing is passed over silently). A `.json`/`.jsonl` file named
    explicitly is validated as canonical when no format claims it.
    """
    try:
        forced = get_format(fmt) if fmt else None
    except KeyError as exc:
        raise InputError(str(exc.args[0])) from None

    def claim(p: Path) -> Format | None:
        """The format of a path met in a directory walk (one `detect` per format asked)."""
        if forced is not None:
            return forced if forced.detect(p) else None
        return detect_format(p)

    out: list[tuple[Path, Format]] = []
    for top in map(Path, paths):
        if not top.exists():
            raise InputError(f"{top}: no such file or directory")
        # a path named explicitly: a forced format takes any file; canonical is the fallback
        unit = forced if forced is not None and top.is_file() else claim(top)
        if unit is None and top.is_file() and top.suffix in (".json", ".jsonl"):
            unit = get_format("canonical")
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
                if u is not None:
                    out.append((here / d, u))
                else:
                    keep.append(d)
            dirs[:] = keep
            for n in sorted(names):
                f = here / n
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
        return 1 if self.errors else 0

    def summary(self) -> dict[str, object]:
        return {
            "files": len(self.files),
            "skipped_files": len(self.skipped),
            "records": sum(s.records for s in self.files),
            "errors": self.errors,
            "warnings": self.warnings,
            "by_rule": dict(sorted(_by_rule(self.counts).items())),
        }

    def as_dict(self) -> dict[str, object]:
        return {
            "files": [{"path": s.path, "format": s.format, "records": s.records, **s.extra} for s in self.files],
            "violations": [f.as_dict() for f in self.findings],
            "summary": {**self.summary(), "skipped": self.skipped},
        }


def _by_rule(counts: Counter[tuple[str, Severity]]) -> dict[str, int]:
    out: Counter[str] = Counter()
    for (rule, _), n in counts.items():
        out[rule] += n
    return dict(out)


def iter_validate(
    paths: Iterable[str | Path],
    options: Options | None = None,
    *,
    fmt: str | None = None,
    files: list[FileStats] | None = None,
    progress: ProgressHook | None = None,
    skipped: list[Path] | None = None,
) -> Iterator[Finding]:
    """Stream the findings of every input; `files` (if given) receives per-file stats."""
    options = options or Options()
    units = expand(paths, fmt, skipped)
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
    skipped: list[Path] = []
    for finding in iter_validate(paths, options, fmt=fmt, files=report.files, skipped=skipped):
        report.add(finding)
    report.skipped = [str(p) for p in skipped]
    return report
