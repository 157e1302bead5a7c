"""Migrations as data: registered pure functions between schema revisions.

A `Migration` turns one document valid under revision N of a format into one valid
under N+1 (and back, where declared), and says what it changes. It is a plain function
over JSON values: no I/O, no clock, and it never mutates its argument, so it can be
unit-tested on dicts and fuzzed (conformance/migrations/proof.py). A document the
target revision cannot represent is refused with a located `MigrationError`, never
silently altered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

Transform = Callable[[Any], Any]


class MigrationError(Exception):
    """This document cannot be migrated: `pointer` says where, the message why."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(message)
        self.pointer = pointer
        self.message = message


@dataclass(frozen=True)
class Change:
    """One declared change: where in a document, what kind, in words."""

    pointer: str
    kind: str
    description: str


@dataclass(frozen=True)
class Migration:
    """From revision `source` of `format` to `source + 1`.

    `lossless` declares that `backward(forward(doc)) == doc` for every document valid
    under `source` that `forward` does not refuse; the fuzz proof holds it to that.
    """

    format: str
    source: int
    forward: Transform
    changes: tuple[Change, ...]
    summary: str
    backward: Transform | None = None
    lossless: bool = False

    @property
    def target(self) -> int:
        return self.source + 1

    def __post_init__(self) -> None:
        if self.lossless and self.backward is None:
            raise ValueError(f"{self.format} {self.source}->{self.target}: lossless needs a backward function")


@dataclass(frozen=True)
class Step:
    migration: Migration
    forward: bool

    @property
    def source(self) -> int:
        return self.migration.source if self.forward else self.migration.target

    @property
    def target(self) -> int:
        return self.migration.target if self.forward else self.migration.source

    def apply(self, doc: Any) -> Any:
        fn = self.migration.forward if self.forward else self.migration.backward
        assert fn is not None
        return fn(doc)


@dataclass
class MigrationRegistry:
    """Migrations and revision detectors, by format. No global state: build one, or
    use `default_registry()` for the migrations turnspec ships."""

    migrations: dict[tuple[str, int], Migration] = field(default_factory=dict)
    detectors: dict[str, Callable[[Any], int]] = field(default_factory=dict)

    def register(self, m: Migration) -> Migration:
        key = (m.format, m.source)
        if key in self.migrations and self.migrations[key] is not m:
            raise ValueError(f"two migrations from {m.format} revision {m.source}")
        self.migrations[key] = m
        return m

    def register_detector(self, fmt: str, detect: Callable[[Any], int]) -> None:
        """`detect(doc)` names the revision a document is at (its version field, or its shape)."""
        self.detectors[fmt] = detect

    def __iter__(self) -> Iterator[Migration]:
        return iter(sorted(self.migrations.values(), key=lambda m: (m.format, m.source)))

    def formats(self) -> list[str]:
        return sorted({m.format for m in self.migrations.values()})

    def revisions(self, fmt: str) -> list[int]:
        found = {r for m in self.migrations.values() if m.format == fmt for r in (m.source, m.target)}
        return sorted(found)

    def detect(self, fmt: str, doc: Any) -> int:
        if fmt not in self.detectors:
            raise LookupError(f"no revision detector for format {fmt!r}; pass the source revision")
        return self.detectors[fmt](doc)

    def path(self, fmt: str, source: int, target: int) -> list[Step]:
        """The steps from `source` to `target`; raises LookupError when there are none."""
        steps: list[Step] = []
        n = source
        while n != target:
            if n < target:
                m = self.migrations.get((fmt, n))
                if m is None:
                    raise LookupError(f"no {fmt} migration from revision {n} to {n + 1}")
                steps.append(Step(m, True))
                n += 1
            else:
                m = self.migrations.get((fmt, n - 1))
                if m is None or m.backward is None:
                    raise LookupError(f"no {fmt} migration back from revision {n} to {n - 1}")
                steps.append(Step(m, False))
                n -= 1
        return steps

    def migrate(self, fmt: str, doc: Any, target: int, source: int | None = None) -> Any:
        """`doc` migrated to revision `target` (MigrationError when refused)."""
        src = self.detect(fmt, doc) if source is None else source
        for step in self.path(fmt, src, target):
            doc = step.apply(doc)
        return doc
