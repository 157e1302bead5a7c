"""Format conversion: `turnspec convert --from A --to B IN OUT`.

A converter is a function `(src, dst, ctx) -> None` that a format exposes in its
`converters` mapping, keyed by `(from, to)`. It writes `dst` (a temporary path; the
caller renames it into place only when the converter and the output validation succeed,
so a failed conversion never leaves a partial file) and reports every lossy step through
`ctx.lossy(...)`, once per occurrence, with its location.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from .convertkit import LOSSY, ConvertContext, Converter
from .errors import InputError
from .findings import Finding, Severity


def converters() -> dict[tuple[str, str], Converter]:
    """Every registered converter, from all formats."""
    from .formats import all_formats  # the engine sits above the formats; imported when used (cheap CLI start)

    out: dict[tuple[str, str], Converter] = {}
    for f in all_formats():
        out.update(f.converters)
    return out


def convert(
    src_format: str, dst_format: str, src: Path, dst: Path, *, force: bool = False, validate_output: bool = True
) -> list[Finding]:
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
    if dst.resolve() == src.resolve() or src.resolve() in dst.resolve().parents:
        raise InputError(f"{dst}: output would overwrite (or sit inside) the input")
    if not dst.parent.exists():
        raise InputError(f"{dst.parent}: output folder does not exist")
    ctx = ConvertContext()
    parent = dst.parent if str(dst.parent) else Path()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dst.name}.", suffix=dst.suffix, dir=parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        tmp.unlink()  # converters create the file themselves (sqlite wants a fresh path)
        fn(src, tmp, ctx)
        out_findings: list[Finding] = []
        if validate_output:
            from .api import validate  # output validation runs the whole API; imported when used

            report = validate([tmp], fmt=dst_format)
            out_findings = [f for f in report.findings if f.severity == Severity.ERROR]
            if out_findings:
                first = out_findings[0]
                raise InputError(
                    f"converted output does not validate as {dst_format}: {first.rule} {first.pointer} {first.message} "
                    f"({len(out_findings)} error(s)); nothing written"
                )
        _replace(tmp, dst)
    finally:
        _remove(tmp)
    return ctx.findings


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _replace(new: Path, dst: Path) -> None:
    """Move `new` to `dst`; an existing directory at `dst` is moved aside first, so the
    old output stays whole until the new one is in place (rename cannot replace a
    non-empty directory)."""
    if dst.is_dir() and not dst.is_symlink():
        aside = dst.with_name(f".{dst.name}.old-{os.getpid()}")
        dst.rename(aside)
        try:
            new.rename(dst)
        except OSError:
            aside.rename(dst)
            raise
        shutil.rmtree(aside)
    else:
        new.replace(dst)


__all__ = ["LOSSY", "ConvertContext", "Converter", "convert", "converters"]
