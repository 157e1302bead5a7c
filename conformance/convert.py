"""Format conversion: `turnspec convert --from A --to B IN OUT`.

A converter is a function `(src, dst, ctx) -> None` that a format exposes in its
`converters` mapping, keyed by `(from, to)`. It writes `dst` (a temporary path; the
caller renames it into place only when the converter and the output validation succeed,
so a failed conversion never leaves a partial file) and reports every lossy step through
`ctx.lossy(...)`, once per occurrence, with its location.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .findings import Finding, RuleInfo, Severity

LOSSY = RuleInfo("TS900", Severity.WARNING, "§7.3", "Conversion dropped or changed information")


@dataclass
class ConvertContext:
    """What a converter may report. `lossy` is a warning; `fail` aborts the conversion."""

    findings: list[Finding] = field(default_factory=list)

    def lossy(self, path: str, line: int | None, pointer: str, message: str, rule: RuleInfo = LOSSY) -> None:
        self.findings.append(Finding(path, line, pointer, rule.id, rule.severity, message))


Converter = Callable[[Path, Path, ConvertContext], None]


def converters() -> dict[tuple[str, str], Converter]:
    """Every registered converter, from all formats."""
    from .formats import all_formats

    out: dict[tuple[str, str], Converter] = {}
    for f in all_formats():
        out.update(getattr(f, "converters", {}))
    return out


def convert(src_format: str, dst_format: str, src: Path, dst: Path, *, force: bool = False, validate_output: bool = True) -> list[Finding]:
    """Convert `src` to `dst`; return the lossy-step warnings and output findings.

    Refuses to overwrite `dst` without `force`. The output is written next to `dst`
    under a temporary name and renamed into place atomically, after it validated.
    """
    table = converters()
    fn = table.get((src_format, dst_format))
    if fn is None:
        pairs = ", ".join(f"{a}->{b}" for a, b in sorted(table))
        raise InputError(f"no converter from {src_format} to {dst_format} (available: {pairs})")
    if not src.exists():
        raise InputError(f"{src}: no such file or directory")
    if dst.exists() and not force:
        raise InputError(f"{dst}: exists; pass --force to overwrite")
    if dst.resolve() == src.resolve():
        raise InputError(f"{dst}: output would overwrite the input")
    ctx = ConvertContext()
    parent = dst.parent if str(dst.parent) else Path(".")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=dst.suffix, dir=parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        tmp.unlink()  # converters create the file themselves (sqlite wants a fresh path)
        fn(src, tmp, ctx)
        out_findings: list[Finding] = []
        if validate_output:
            from .api import validate

            report = validate([tmp], fmt=dst_format)
            out_findings = [f for f in report.findings if f.severity == Severity.ERROR]
            if out_findings:
                first = out_findings[0]
                raise InputError(
                    f"converted output does not validate as {dst_format}: {first.rule} {first.pointer} {first.message} "
                    f"({len(out_findings)} error(s)); nothing written"
                )
        os.replace(tmp, dst)
    finally:
        if tmp.exists():
            tmp.unlink()
    return ctx.findings
