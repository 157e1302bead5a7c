"""pytest plugin: the conformance suite as test items, one per (adapter, TC rule).

Registered through the `pytest11` entry point, so it is present wherever turnspec is
installed, and inert unless asked. Two ways to ask:

- a test file that names its adapters, `turnspec_adapter = "my_pkg.adapter:MyAdapter"` (or
  a list) at module level: its items are collected under that file,
  `tests/test_conformance.py::turnspec[mine-TC105]`;
- `pytest --turnspec-adapter REF` (repeatable): the items are collected under the
  configuration file pytest found (`pyproject.toml::turnspec[mine-TC105]`, or
  `pytest.ini`, ...), or the rootdir's `conftest.py`, else at the session's top.

Either way they are real collected items: `pytest NODEID` selects one, `--lf` reruns the
failed ones, `--collect-only` counts them. The suite runs once per set of adapters, on the
first item, and every item reports its rule's result (failed with the reasons, skipped
with the reason, or passed).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

from ..adapters import registry
from ..adapters.exec.manifest import ExecSettings, check_timeout
from ..core import escaping
from ..core.findings import Selection
from ..formats.canonical.markers import DEFAULT_CRITICAL_KEY
from .rules import CATALOG
from .runner import SuiteConfig, SuiteReport, local_cassette_root, run, samples_asked
from .testing import skip_or_warn


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("turnspec", "turnspec adapter conformance")
    group.addoption(
        "--turnspec-adapter",
        action="append",
        default=[],
        metavar="REF",
        help="Adapter to check: a registered name, module:attr or 'exec:COMMAND ARG...' (repeatable)",
    )
    group.addoption(
        "--turnspec-cassettes",
        action="append",
        default=[],
        metavar="DIR",
        help="Cassette folder (<DIR>/<adapter>/*.yaml or one adapter's folder)",
    )
    group.addoption(
        "--turnspec-samples",
        default=None,
        metavar="DIR",
        help="Third-party recordings to replay; 'none' for none (default: [tool.turnspec] samples, else $TURNSPEC_SAMPLES, else none)",
    )
    group.addoption(
        "--turnspec-select",
        default="",
        metavar="IDS",
        help="Only these TC ids or prefixes (comma-separated)",
    )
    group.addoption(
        "--turnspec-exec-timeout",
        default=None,
        type=float,
        metavar="SECONDS",
        help="exec: adapters: seconds per call before the child is stopped and restarted (default: the manifest's, else 30)",
    )
    group.addoption(
        "--turnspec-validate-protocol",
        action="store_true",
        default=False,
        help="exec: adapters: validate every message, both ways, against the exec protocol's schemas "
        "(turnspec schema export --format exec)",
    )
    group.addoption(
        "--turnspec-critical-key",
        default=DEFAULT_CRITICAL_KEY,
        metavar="KEY",
        help="Metadata key that marks a block critical (spec §4.2.2 names none; TC203 plants it)",
    )


class TurnspecFailure(Exception):
    pass


MODULE_ATTRIBUTE = "turnspec_adapter"
"""The module-level name a test file sets to the adapters whose items it holds."""

_REPORTS = pytest.StashKey[dict[tuple[str, ...], SuiteReport]]()


class TurnspecItem(pytest.Item):
    """`turnspec[ADAPTER-TCnnn]`: one check for one adapter, named as a parametrized test
    (`FILE::turnspec` selects them all, `-k TC105` one rule)."""

    def __init__(self, *, rule: str, adapter: str, refs: tuple[str, ...], **kw: Any) -> None:
        parent = kw["parent"]
        if hasattr(parent, "id"):  # pytest >= 9: the structured id a parametrized test has (`--lf` matches it)
            kw["nodeid"] = parent.id.child("turnspec").with_params(f"{adapter}-{rule}")
        super().__init__(**kw)
        self.rule = rule
        self.adapter_name = adapter
        self.refs = refs  # the adapters checked together (one suite run, one replay matrix)

    def runtest(self) -> None:
        reports = self.config.stash.setdefault(_REPORTS, {})
        report = reports.get(self.refs)
        if report is None:
            report = reports[self.refs] = run(_config(self.config, self.refs))
        result = report.result(self.rule, self.adapter_name)
        if result is None:
            pytest.skip(f"{self.rule} was not selected")
        if result.status == "fail":
            raise TurnspecFailure("\n".join(map(escaping.text_line, result.explained())))
        skip_or_warn(self.rule, result)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, TurnspecFailure):
            info = CATALOG[self.rule]
            return f"{self.rule} ({info.section}) {info.summary}\n{excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"turnspec {self.adapter_name} {self.rule}"


def _items(parent: pytest.Collector, refs: tuple[str, ...]) -> list[pytest.Item]:
    """One item per (adapter, selected TC rule), children of `parent`."""
    sel = _selection(parent.config)
    out: list[pytest.Item] = []
    for ref in refs:
        # an exec adapter's name comes from its child's hello
        name = str(registry.load(ref, exec_settings=_exec_settings(parent.config)).name)
        for info in CATALOG:
            if info.id == "TC800" or not sel.enabled(info.id):
                continue
            out.append(
                TurnspecItem.from_parent(
                    parent, name=f"turnspec[{name}-{info.id}]", rule=info.id, adapter=name, refs=refs
                )
            )
    return out


class TurnspecFile(pytest.File):
    """The `--turnspec-adapter` items, under the file that configures pytest."""

    def collect(self) -> list[pytest.Item]:
        return _items(self, _cli_refs(self.config))


class TurnspecSession(pytest.Collector):
    """The `--turnspec-adapter` items when pytest has no configuration file to hold them."""

    def collect(self) -> list[pytest.Item]:
        return _items(self, _cli_refs(self.config))


def _cli_refs(config: pytest.Config) -> tuple[str, ...]:
    return tuple(config.getoption("turnspec_adapter") or ())


def _anchor(config: pytest.Config) -> Path | None:
    """The file the `--turnspec-adapter` items are collected under: pytest's configuration
    file, else the rootdir's conftest.py (None: neither)."""
    if config.inipath is not None:
        return Path(config.inipath)
    conftest = Path(config.rootpath) / "conftest.py"
    return conftest if conftest.is_file() else None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if _cli_refs(parent.config) and file_path == _anchor(parent.config):
        return TurnspecFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """The session's own collection: the `--turnspec-adapter` items join it when the walk
    of the paths asked for will not meet their file (`pytest tests/` and a pyproject.toml
    at the root), so they are collected (and counted) as every other item."""
    rep = yield
    if not isinstance(collector, pytest.Session) or not rep.passed or not _cli_refs(collector.config):
        return rep
    anchor = _anchor(collector.config)
    if anchor is None:
        rep.result.append(TurnspecSession.from_parent(collector, name="turnspec"))
    elif not any(collector.isinitpath(p) for p in (anchor, *anchor.parents)):
        rep.result.append(TurnspecFile.from_parent(collector, path=anchor))
    return rep


def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> list[pytest.Item] | None:
    """A test file's `turnspec_adapter = REF` (or a list of REFs): its items, under that file."""
    if name != MODULE_ATTRIBUTE or not isinstance(collector, pytest.Module):
        return None
    refs = (obj,) if isinstance(obj, str) else tuple(obj) if isinstance(obj, list | tuple) else ()
    if not refs or not all(isinstance(r, str) and r for r in refs):
        raise pytest.UsageError(f"{collector.path}: {MODULE_ATTRIBUTE} names adapters: a string or a list of strings")
    return _items(collector, refs)


def _selection(config: pytest.Config) -> Selection:
    raw = str(config.getoption("turnspec_select") or "")
    return Selection(select=tuple(x.strip() for x in raw.split(",") if x.strip()))


def _config(config: pytest.Config, refs: tuple[str, ...]) -> SuiteConfig:
    samples_opt = config.getoption("turnspec_samples")
    samples = samples_asked(None if samples_opt in (None, "none") else Path(samples_opt), none=samples_opt == "none")
    cassettes = [Path(p) for p in config.getoption("turnspec_cassettes")]
    local = local_cassette_root()  # ./cassettes/<adapter>/, as `turnspec conform` reads it
    return SuiteConfig.for_refs(
        refs,
        cassettes=cassettes,
        samples=samples,
        selection=_selection(config),
        critical_key=str(config.getoption("turnspec_critical_key") or DEFAULT_CRITICAL_KEY),
        roots=[local] if local is not None else [],
        exec_settings=_exec_settings(config),
    )


def _exec_settings(config: pytest.Config) -> ExecSettings:
    timeout = config.getoption("turnspec_exec_timeout")
    if timeout is not None:
        check_timeout(timeout, "--turnspec-exec-timeout")
    return ExecSettings(timeout, bool(config.getoption("turnspec_validate_protocol")))
