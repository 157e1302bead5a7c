"""Baselines for `turnspec validate`: the findings a store already had when the gate was
adopted, so that only new ones are reported (data files cannot carry inline suppressions).

A baseline is a JSON document written by `validate --write-baseline FILE`:

    {"turnspec_baseline": 1,
     "findings": [{"path": "logs/a.jsonl", "rule": "TS020", "pointer": "/content/0/text",
                   "message": "TextBlock: expected string, got integer", "count": 2}, ...]}

An entry is keyed by path, rule id, JSON pointer and message, with how many findings of
that key there were; never by line, so inserting or removing lines elsewhere in a file
keeps it. Line references inside a message (`first at line 12`, `first at b.jsonl:12`) are
stored as `line N` (`b.jsonl:N`) for the same reason. Paths are relative to the baseline file's folder (with `/`), so the
baseline matches from any working directory; URLs are kept as they are.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import Any

from . import escaping
from .errors import InputError
from .findings import Finding
from .outputs import check_output, write_bytes

FORMAT_KEY = "turnspec_baseline"
FORMAT_VERSION = 1

Key = tuple[str, str, str, str]  # path, rule, pointer, message

_LINE_REF = re.compile(r"\bline \d+(?:, column \d+)?")
_FIRST_AT = re.compile(r"(\bfirst at \S+):\d+\)")  # TS202's `(first at other.jsonl:12)`


def _absolute(path: str | Path) -> str:
    """`path` made absolute and normalised (`..` removed) as text, without resolving links
    (`Path.resolve` would): the names are the ones the user gave."""
    return os.path.normpath(Path(path).absolute())


class Baseline:
    """The keys of a baseline with their counts; `take(finding)` consumes one."""

    def __init__(self, folder: Path, counts: Counter[Key] | None = None) -> None:
        self.folder = _absolute(folder)
        self.counts: Counter[Key] = counts if counts is not None else Counter()
        self.matched = 0

    def key(self, f: Finding) -> Key:
        message = _FIRST_AT.sub(r"\1:N)", _LINE_REF.sub("line N", f.message))
        return (
            escaping.unsurrogate(self._path(f.path)),
            f.rule,
            escaping.unsurrogate(f.pointer),
            escaping.unsurrogate(message),
        )

    def add(self, f: Finding) -> None:
        """Record `f` (for `write`)."""
        self.counts[self.key(f)] += 1

    def _path(self, path: str) -> str:
        if "://" in path:
            return path
        return PurePath(os.path.relpath(_absolute(path), self.folder)).as_posix()

    def take(self, f: Finding) -> bool:
        """True when `f` is recorded in the baseline (and one of its key's count is used)."""
        k = self.key(f)
        left = self.counts.get(k, 0)
        if left <= 0:
            return False
        self.counts[k] = left - 1
        self.matched += 1
        return True

    @property
    def unmatched(self) -> int:
        """Recorded findings this run did not find (fixed since the baseline was written)."""
        return sum(n for n in self.counts.values() if n > 0)


def load(path: Path) -> Baseline:
    """The baseline at `path`; a missing, unreadable or malformed file is a one-line `InputError`."""
    where = f"--baseline {escaping.name(path)}"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{where}: no such file (write one with --write-baseline)") from None
    except OSError as exc:
        raise InputError(f"{where}: cannot read: {exc.strerror or exc}") from None
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise InputError(f"{where}: not a turnspec baseline: invalid JSON ({exc})") from None
    counts = _parse(doc)
    if counts is None:
        raise InputError(
            f"{where}: not a turnspec baseline (expected {{{FORMAT_KEY!r}: {FORMAT_VERSION}, 'findings': [...]}})"
        )
    return Baseline(path.parent, counts)


def _parse(doc: Any) -> Counter[Key] | None:
    if not isinstance(doc, dict) or doc.get(FORMAT_KEY) != FORMAT_VERSION or not isinstance(doc.get("findings"), list):
        return None
    counts: Counter[Key] = Counter()
    for e in doc["findings"]:
        if not isinstance(e, dict):
            return None
        path, rule, pointer, message, n = (e.get(k) for k in ("path", "rule", "pointer", "message", "count"))
        if not (isinstance(path, str) and isinstance(rule, str) and isinstance(pointer, str)):
            return None
        if not isinstance(message, str) or type(n) is not int or n < 1:
            return None
        counts[(path, rule, pointer, message)] += n
    return counts


def check_destination(dst: Path, inputs: Iterable[str]) -> None:
    """Refuse a `--write-baseline` path that is, holds or sits inside an input, or that
    holds anything but a turnspec baseline (which is replaced): checked before the run."""
    local = [Path(p) for p in inputs if p != "-" and "://" not in p]
    if os.path.lexists(dst):
        try:
            ours = _parse(json.loads(dst.read_bytes())) is not None
        except (OSError, ValueError, RecursionError):
            ours = False
        if not ours:
            raise InputError(
                f"--write-baseline {escaping.name(dst)}: exists and is not a turnspec baseline; not replacing it"
            )
    try:
        check_output(dst, local, force=True)
    except InputError as exc:
        raise InputError(f"--write-baseline {exc}") from None


def write(dst: Path, baseline: Baseline) -> int:
    """Write `baseline` (its keys sorted) to `dst` atomically (`outputs`), once
    `check_destination` has passed; return how many findings it records."""
    entries = [
        {"path": p, "rule": r, "pointer": ptr, "message": m, "count": n}
        for (p, r, ptr, m), n in sorted(baseline.counts.items())
        if n > 0
    ]
    body = json.dumps({FORMAT_KEY: FORMAT_VERSION, "findings": entries}, indent=1, ensure_ascii=False)
    write_bytes(dst, [body.encode("utf-8") + b"\n"])
    return sum(n for n in baseline.counts.values() if n > 0)
