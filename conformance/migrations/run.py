"""Migrating whole files: `turnspec migrate IN --to N [-o OUT | --in-place]`.

Records are read defensively (conformance.core.jsonio: every bad line is a located finding),
each is migrated by the registry's steps and validated under the target revision, and
the output is written to a temporary file first. A record no step changes is written as
it was read, byte for byte; a changed one (counted in `changed`) is written anew, its
numbers spelled as they were (`1E2` stays `1E2`, never `100.0`: `jsonio.number_spellings`). Only when no record failed is it moved
into place (`OUT`, or `IN` itself with `in_place`); otherwise nothing is written and the
findings say why. Without an output path the result is returned as bytes (the CLI
prints it), so the input is never rewritten by accident.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from ..core.findings import Finding, RuleInfo, Severity, switched_off
from ..core.jsonio import Record, check_input, dumps, number_spellings, read_json, read_jsonl
from ..core.outputs import check_output, real, write_bytes
from ..core.schema_validation import SchemaValidator
from ..core.schemas import schema_set
from . import rules as R
from .registry import MigrationError, MigrationRegistry
from .shipped import default_registry

RootChooser = Callable[[Any], str]

# which schema file a record of each format is validated against after migration;
# formats without schemas for the target revision skip that check
ROOTS: dict[str, RootChooser] = {
    "canonical": lambda doc: (
        "tool-definition.json"
        if isinstance(doc, dict) and "input_schema" in doc and "role" not in doc
        else "message.json"
    ),
    # a stored turn is a gpt.turn frame (meta inside); a thread record carries role/content at the top
    "gpt2099": lambda doc: (
        "turn-frame.json" if isinstance(doc, dict) and ("meta" in doc or "topic" in doc) else "thread-record.json"
    ),
}


@dataclass
class MigrationResult:
    findings: list[Finding] = field(default_factory=list)
    records: int = 0
    changed: int = 0
    written: Path | None = None
    output: bytes | None = None  # the migrated file, when no path was given

    @property
    def ok(self) -> bool:
        return not any(f.severity == Severity.ERROR for f in self.findings)


@functools.cache
def _validator(fmt: str, revision: int, root: str) -> SchemaValidator | None:
    try:
        return SchemaValidator(schema_set(fmt, f"v{revision}"), root)
    except KeyError:
        return None


def _finding(rec: Record, pointer: str, info: RuleInfo, message: str) -> Finding:
    return Finding(rec.path, rec.line, rec.pointer + pointer, info.id, info.severity, message)


def migrate_record(
    registry: MigrationRegistry, fmt: str, rec: Record, target: int, source: int | None
) -> tuple[Any, list[Finding]]:
    """One record migrated (or the findings that stop it)."""
    doc = rec.value
    try:
        src = registry.detect(fmt, doc) if source is None else source
        steps = registry.path(fmt, src, target)
    except LookupError as exc:
        return None, [_finding(rec, "", R.NO_PATH, str(exc))]
    try:
        for step in steps:
            doc = step.apply(doc)
    except MigrationError as exc:
        return None, [_finding(rec, exc.pointer, R.REFUSED, exc.message)]
    chooser = ROOTS.get(fmt)
    v = _validator(fmt, target, chooser(doc)) if chooser else None
    # TM003 is the one check here (TM001/TM002 say a record could not be migrated at all);
    # `findings.switched_off` is the mutation-testing hook
    if v is not None and R.INVALID_OUTPUT.id not in switched_off() and not v.is_valid(doc):
        return None, [_finding(rec, e.pointer, R.INVALID_OUTPUT, e.message) for e in v.errors(doc)]
    return doc, []


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (`1 == 1.0 == True` in Python)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)  # the same keys, in the same order
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _lines(migrated: list[tuple[Record, Any, bool]]) -> list[bytes]:
    """JSON Lines: an unchanged record's own text, a changed one anew with its numbers' spellings."""
    return [
        (dumps(doc, spellings=number_spellings(rec.value, rec.raw)) if changed else rec.raw) + b"\n"
        for rec, doc, changed in migrated
    ]


def _document(migrated: list[tuple[Record, Any, bool]], single: bool) -> bytes:
    """A `.json` file: its own text when no record changed, else the document anew (indented),
    its numbers as they were spelled."""
    whole = migrated[0][0].raw if migrated else b""  # every record of a .json holds the whole text
    if whole and not any(changed for _, _, changed in migrated):
        return whole if whole.endswith(b"\n") else whole + b"\n"
    values = [rec.value for rec, _, _ in migrated]
    spellings = number_spellings(values[0] if single else values, whole) if whole else {}
    docs = [doc for _, doc, _ in migrated]
    return dumps(docs[0] if single else docs, indent=True, spellings=spellings) + b"\n"


def migrate_file(
    src: Path,
    target: int,
    *,
    fmt: str = "canonical",
    out: Path | None = None,
    in_place: bool = False,
    source: int | None = None,
    force: bool = False,
    registry: MigrationRegistry | None = None,
) -> MigrationResult:
    """Migrate every record of `src` to revision `target` (see the module docstring)."""
    reg = registry or default_registry()
    if fmt not in reg.formats():
        raise InputError(f"no migrations for format {fmt!r} (known: {', '.join(reg.formats())})")
    check_input(src)
    if in_place and out is not None:
        raise InputError("give either -o OUT or --in-place, not both")
    if out is not None:
        if real(out) == real(src):
            raise InputError(f"{out}: is the input; pass --in-place to rewrite it (atomically)")
        check_output(out, [src], force=force)
    elif in_place:
        check_output(src, [src], in_place=True)
    result = MigrationResult()
    jsonl = src.suffix != ".json"
    items: Iterator[Record | Finding] = read_jsonl(src) if jsonl else read_json(src)
    migrated: list[tuple[Record, Any, bool]] = []  # each record, its migrated value, whether a step changed it
    single = False
    for item in items:
        if isinstance(item, Finding):
            result.findings.append(item)
            continue
        result.records += 1
        single = single or item.pointer == ""
        doc, problems = migrate_record(reg, fmt, item, target, source)
        result.findings += problems
        if not problems:
            changed = not _same(doc, item.value)
            result.changed += changed
            migrated.append((item, doc, changed))
    if not result.ok:
        return result
    chunks = _lines(migrated) if jsonl else [_document(migrated, single)]
    dest = src if in_place else out
    if dest is None:
        result.output = b"".join(chunks)
        return result
    write_bytes(dest, chunks)
    result.written = dest
    return result
