"""What every format plugs into: options, and the `Format` protocol.

Formats are peers (canonical, sqlite, gpt2099, chibi, geppetto, openai-messages, pydantic-ai,
langchain, otel-genai): each package exposes one `Format` value that declares everything
the engines above need, so none of them asks a format anything with `getattr` or names a
format by hand:

- `name`, `detect` (the detector) and `start` (the reader and validator, one run);
- `rules`: its rule catalogue (every rule it can emit, with its spec section);
- `converters`: its converters, keyed by `(from, to)` (see `conformance.core.convertkit`);
- `schema_family`: the folder under `schemas/` that holds its schemas (None: none);
- `migrations`: whether the migration engine holds migrations between its schema
  revisions. Migrations register per format in `conformance.migrations` (the engine,
  above the formats), keyed by this format's `name`; a format never imports them.

A format imports core (`conformance.core.jsonio`, `findings`, `schemas`, `schema_validation`,
`ids`, `convertkit`), the canonical format (core: everything speaks it) and this module;
never another peer format, an engine, the API or the CLI. Adding a format = one package
plus one line in `formats/__init__.py`; a peer whose checker and converters should load only
when used declares its `Format` as a `PeerFormat` (the lazy shell, declared here once).
"""

from __future__ import annotations

import abc
import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from ..core.convertkit import ConvertContext, Converter, Located
from ..core.findings import Finding, RuleCatalog, RuleInfo, Selection
from ..core.jsonio import DEFAULT_LOCK_WAIT, DEFAULT_MAX_LINE_BYTES, os_error

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
    # True: every line takes the exact path (the canonical fast path off); the report is
    # the same either way (tests/test_fast_path.py), only slower
    exact: bool = False
    # seconds to wait for an input another process holds locked (a SQLite store), then an
    # I/O condition naming the wait (exit 2), never a finding about the data
    lock_wait: float = DEFAULT_LOCK_WAIT


@dataclass
class FileStats:
    """What one input contained, for the report's summary."""

    path: str
    format: str
    records: int = 0
    extra: dict[str, object] = field(default_factory=dict)
    unread: bool = False  # it could not be read (an input error was reported): no "holds no record" note


class FormatRun(Protocol):
    """One validation run of a format: state shared across the files of the run."""

    def validate(self, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
        """Validate one file (or directory unit) and yield its findings."""

    def finish(self) -> Iterator[Finding]:
        """Findings only known at end of input (e.g. tool calls never answered)."""


class Format(Protocol):
    """One format, as the engines, the API and the CLI see it (module docstring)."""

    @property
    def name(self) -> str:
        """The name users give `--format`, `--from` and `--to`."""

    @property
    def rules(self) -> RuleCatalog:
        """Every rule this format can emit."""

    @property
    def converters(self) -> Mapping[tuple[str, str], Converter]:
        """`(from, to) -> converter`; empty when the format converts nothing."""

    @property
    def schema_family(self) -> str | None:
        """The `schemas/<family>/` folder of this format's schemas, or None."""

    @property
    def migrations(self) -> bool:
        """True when `conformance.migrations` registers migrations for this format."""

    def detect(self, path: Path) -> bool:
        """True when `path` looks like this format (cheap: name and first bytes); a
        function of the path alone, the same for every instance of a class."""

    def start(self, options: Options) -> FormatRun:
        """Begin a run; the run keeps cross-file state (sessions, ids)."""


def lazy_converter(module: str, function: str) -> Converter:
    """The converter `function` of `module`, which is imported when a conversion first runs:
    `turnspec validate` detects every format on each run, and a format's converters (and
    what they import) load only when one is asked for."""

    def convert(src: Path, dst: Path, ctx: ConvertContext) -> None:
        run: Converter = getattr(importlib.import_module(module), function)
        run(src, dst, ctx)

    convert.__name__ = convert.__qualname__ = function
    convert.__module__ = module
    return convert


class PeerFormat(abc.ABC):
    """The shell of a peer format whose checker and converters load when first used.

    A subclass, declared in the `__init__.py` of the format's package, names the format
    (`name`, `rules`, `detect`, and `schema_family`/`migrations` where it has them) and
    `run_class`, the class of the package's `checker` module that validates its files
    (`start` imports it); `converters` are the package's `convert.to_canonical` and
    `convert.from_canonical`, each imported when a conversion runs (`lazy_converter`).
    `turnspec validate` detects every format on each run and starts one only on its files,
    so neither module is imported by a run that meets none."""

    name: ClassVar[str]
    rules: ClassVar[RuleCatalog]
    run_class: ClassVar[str]
    schema_family: ClassVar[str | None] = None
    migrations: ClassVar[bool] = False
    converters: ClassVar[Mapping[tuple[str, str], Converter]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        convert = f"{cls.__module__}.convert"
        cls.converters = {
            (cls.name, "canonical"): lazy_converter(convert, "to_canonical"),
            ("canonical", cls.name): lazy_converter(convert, "from_canonical"),
        }

    @abc.abstractmethod
    def detect(self, path: Path) -> bool:
        """`Format.detect`: cheap, from the path's name and first bytes."""

    def start(self, options: Options) -> FormatRun:
        run: Callable[[Options], FormatRun] = getattr(
            importlib.import_module(f"{type(self).__module__}.checker"), self.run_class
        )
        return run(options)


U = TypeVar("U", bound=Located)


class PeerRun(abc.ABC, Generic[U]):
    """The run of a peer format read as independent units (conversations, histories,
    records): the reader's findings, then each unit's rules, nothing carried across units
    or files. A subclass gives `read` (the units of a file, from its bytes when the convert
    driver read them: `convertkit.convert_units`), `check` (one unit's findings, None for a
    rule switched off) and `size` (the messages a unit counts for the summary); `units` names
    the summary's count."""

    units: ClassVar[str]

    def __init__(self, options: Options) -> None:
        self.options = options
        self.sel: Selection = options.selection

    @abc.abstractmethod
    def read(self, path: Path, data: bytes | None = None) -> Iterator[U | Finding]:
        """The units of `path` and the reader's findings."""

    @abc.abstractmethod
    def check(self, unit: U) -> Iterator[Finding | None]:
        """The findings of one unit."""

    @abc.abstractmethod
    def size(self, unit: U) -> int:
        """What the unit adds to `FileStats.records`."""

    def finding(self, at: Located, pointer: str, info: RuleInfo, message: str) -> Finding | None:
        """A finding of `info` at `at`'s file and line and `pointer`; None when the
        selection leaves the rule out."""
        if not self.sel.enabled(info.id):
            return None
        return Finding(at.path, at.line, pointer, info.id, self.sel.severity(info), message)

    def validate(self, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
        return self.check_units(self.read(path), stats)

    def check_units(self, units: Iterable[U | Finding], stats: FileStats) -> Iterator[Finding]:
        """The findings of the units read (and of the reader), counted into `stats`."""
        count = 0
        for unit in units:
            if isinstance(unit, Finding):
                if self.sel.enabled(unit.rule):
                    yield unit
                continue
            count += 1
            stats.records += self.size(unit)
            for f in self.check(unit):
                if f is not None:
                    yield f
        stats.extra[self.units] = count

    def finish(self) -> Iterator[Finding]:
        return iter(())


def read_unit(run: FormatRun, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
    """`run.validate(path)`, with any `OSError` met inside the unit (a denied folder or
    file, a file gone meanwhile) turned into the one-line `InputError` naming the path it
    met it on: every reader's I/O failure reaches the caller the same way, which records
    it and validates the other inputs."""
    try:
        yield from run.validate(path, stats, progress)
    except OSError as exc:
        raise os_error(path, exc) from None
