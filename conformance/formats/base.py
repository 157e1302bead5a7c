"""What every format plugs into: options, and the per-file validation protocol.

Formats are peers (canonical, sqlite, gpt2099, chibi, geppetto): each module exposes a
`Format` with its rules, a `detect` that recognises its files, and a `validate` that
yields findings for one input path. `conformance.api` drives them; the CLI is a shell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..findings import Finding, RuleCatalog, Selection
from ..jsonio import DEFAULT_MAX_LINE_BYTES

ProgressHook = Callable[[int], None]


@dataclass(frozen=True)
class Options:
    """Everything a validation run can be told (the CLI's flags, as data)."""

    selection: Selection = field(default_factory=Selection)
    tools: Path | None = None
    pricing: Path | None = None
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    # schema revisions to read with (e.g. ("v2",)); empty = the spec as published (v1)
    revisions: tuple[str, ...] = ()


@dataclass
class FileStats:
    """What one input contained, for the report's summary."""

    path: str
    format: str
    records: int = 0
    extra: dict[str, object] = field(default_factory=dict)


class FormatRun(Protocol):
    """One validation run of a format: state shared across the files of the run."""

    def validate(self, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
        """Validate one file (or directory unit) and yield its findings."""

    def finish(self) -> Iterator[Finding]:
        """Findings only known at end of input (e.g. tool calls never answered)."""


class Format(Protocol):
    name: str
    rules: RuleCatalog

    def detect(self, path: Path) -> bool:
        """True when `path` looks like this format (cheap: name and first bytes)."""

    def start(self, options: Options) -> FormatRun:
        """Begin a run; the run keeps cross-file state (sessions, ids)."""
