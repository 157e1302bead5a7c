"""Format conversion: `turnspec convert --from A --to B IN OUT`.

A converter is a function `(src, dst, ctx) -> None` that a format exposes in its
`converters` mapping, keyed by `(from, to)`. It writes `dst` (a path in a private
staging folder; the caller renames it into place only when the converter and the output
validation succeed, so a failed conversion never leaves a partial file) and reports every lossy step through
`ctx.lossy(...)`, once per occurrence, with its location.
"""

from __future__ import annotations

import errno
from pathlib import Path

from .core.convertkit import LOSSY, ConvertContext, Converter
from .core.errors import InputError
from .core.findings import Finding, Severity
from .core.jsonio import check_input
from .core.outputs import WRITE_ERRNOS, cannot_write, check_output, staged


def converters() -> dict[tuple[str, str], Converter]:
    """Every registered converter, from all formats."""
    from .formats import all_formats  # the engine sits above the formats; imported when used (cheap CLI start)

    out: dict[tuple[str, str], Converter] = {}
    for f in all_formats():
        out.update(f.converters)
    return out


def _validate_output(fmt: str, path: Path) -> list[Finding]:
    """The target format's own findings on the staged output (what `turnspec validate
    --format FMT` reports), run through the format registry, not the API above."""
    # function-level import: the engine sits above the formats; imported when used (cheap CLI start)
    from .formats import FileStats, Options, get_format

    run = get_format(fmt).start(Options())
    try:
        return [*run.validate(path, FileStats(str(path), fmt)), *run.finish()]
    except InputError as exc:
        raise InputError(f"converted output cannot be read back: {exc}; nothing written") from None


def convert(
    src_format: str,
    dst_format: str,
    src: Path,
    dst: Path,
    *,
    force: bool = False,
    validate_output: bool = True,
    context: ConvertContext | None = None,
) -> list[Finding]:
    """Convert `src` to `dst`; return the lossy-step warnings and output findings
    (`context`, when given, is the one the converter reports into: its `origins` say where
    each written message came from).

    The output goes through `conformance.core.outputs`: never the input, inside it or around
    it, never over an existing path without `force`, built in a staging folder beside
    `dst` and renamed into place only after it validated.
    """
    table = converters()
    fn = table.get((src_format, dst_format))
    if fn is None:
        pairs = ", ".join(f"{a}->{b}" for a, b in sorted(table))
        raise InputError(f"no converter from {src_format} to {dst_format} (available: {pairs})")
    check_input(src, allow_dir=True)
    check_output(dst, [src], force=force)
    ctx = context if context is not None else ConvertContext()
    with staged(dst) as tmp:
        try:
            fn(src, tmp, ctx)
        except OSError as exc:  # e.g. a folder where the source format wants a file
            in_output = exc.filename is None or str(exc.filename).startswith(str(tmp))
            if in_output and exc.errno in WRITE_ERRNOS | {errno.EIO}:  # a full disk: the output's fault
                raise cannot_write(dst, exc) from None
            where = exc.filename if exc.filename and not str(exc.filename).startswith(str(tmp)) else src
            raise InputError(f"{where}: cannot read as {src_format}: {exc.strerror or exc}") from None
        if validate_output:
            out_findings = [f for f in _validate_output(dst_format, tmp) if f.severity == Severity.ERROR]
            if out_findings:
                first = out_findings[0]
                raise InputError(
                    f"converted output does not validate as {dst_format}: {first.rule} {first.pointer} {first.message} "
                    f"({len(out_findings)} error(s)); nothing written"
                )
    return ctx.findings


__all__ = ["LOSSY", "ConvertContext", "Converter", "convert", "converters"]
