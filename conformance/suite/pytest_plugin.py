"""pytest plugin: `pytest --turnspec-adapter REF` runs the conformance suite as test items.

Registered through the `pytest11` entry point, so it is present wherever turnspec is
installed, and inert unless `--turnspec-adapter` is given. Each (adapter, TC rule) becomes
one item; the suite runs once, on the first item, and every item reports its rule's result
(failed with the reasons, skipped with the reason, or passed).
"""

from __future__ import annotations

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

_REPORT = pytest.StashKey[SuiteReport]()


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
        help="exec: adapters: validate every message, both ways, against schemas/exec/v1",
    )
    group.addoption(
        "--turnspec-critical-key",
        default=DEFAULT_CRITICAL_KEY,
        metavar="KEY",
        help="Metadata key that marks a block critical (spec §4.2.2 names none; TC203 plants it)",
    )


class TurnspecFailure(Exception):
    pass


class TurnspecItem(pytest.Item):
    def __init__(self, *, rule: str, adapter: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.rule = rule
        self.adapter_name = adapter

    def runtest(self) -> None:
        report = self.config.stash.get(_REPORT, None)
        if report is None:
            report = self.config.stash[_REPORT] = run(_config(self.config))
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
        return Path(str(self.config.rootpath)), None, f"turnspec {self.adapter_name} {self.rule}"


def _selection(config: pytest.Config) -> Selection:
    raw = str(config.getoption("turnspec_select") or "")
    return Selection(select=tuple(x.strip() for x in raw.split(",") if x.strip()))


def _config(config: pytest.Config) -> SuiteConfig:
    samples_opt = config.getoption("turnspec_samples")
    samples = samples_asked(None if samples_opt in (None, "none") else Path(samples_opt), none=samples_opt == "none")
    cassettes = [Path(p) for p in config.getoption("turnspec_cassettes")]
    local = local_cassette_root()  # ./cassettes/<adapter>/, as `turnspec conform` reads it
    return SuiteConfig.for_refs(
        config.getoption("turnspec_adapter"),
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


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    refs = config.getoption("turnspec_adapter")
    if not refs:
        return

    sel = _selection(config)
    for ref in refs:
        name = str(registry.load(ref, exec_settings=_exec_settings(config)).name)
        for info in CATALOG:
            if info.id == "TC800" or not sel.enabled(info.id):
                continue
            items.append(
                TurnspecItem.from_parent(session, name=f"turnspec[{name}-{info.id}]", rule=info.id, adapter=name)
            )
