"""Loading a thread for `resolve`: the validator's reader, stopping at the first error."""

from __future__ import annotations

from pathlib import Path

from ...core.errors import InputError
from ...core.findings import Finding, Selection, Severity
from ..base import FileStats, Options
from .checker import Gpt2099Run
from .reader import TurnItem, artefact_of_file, build_thread, classify, read_items, turn_kind
from .thread import Shape, Thread

# Only what makes the turns unreadable or unlinkable stops resolution; the other findings
# (an unpaired tool result, a missing provider_ptr) do not change what gpt2099 would build.
_BLOCKING = ("TS0", "GP0", "GP101", "GP102", "GP2")


def load_thread(path: Path) -> Thread:
    """Validate `path` as gpt2099 and return its thread; `InputError` names the first error."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    run = Gpt2099Run(Options(selection=Selection(select=_BLOCKING)))
    for f in run.validate(path, FileStats(str(path), "gpt2099")):
        if f.severity == Severity.ERROR:
            raise InputError(f"{f.format()}\n(`turnspec validate --format gpt2099 {path}` lists every problem)")
    recs = [r for r in read_items(path, Options().max_line_bytes) if not isinstance(r, Finding)]
    artefact = artefact_of_file([r.value for r in recs])
    if artefact is not None:
        raise InputError(f"{path}: holds {artefact}, not a thread of turns; nothing to resolve")
    for r in recs:
        shape = classify(r.value)
        if shape in (Shape.WINDOW, Shape.RESPONSE):
            raise InputError(f"{path}: holds a {shape}, not a thread of turns; nothing to resolve")
    if not recs:
        raise InputError(f"{path}: holds no turns")
    kind = turn_kind([r.value for r in recs])
    return build_thread([TurnItem(r, kind, True) for r in recs])
