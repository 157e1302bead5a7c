"""A base test class adapter authors subclass in their own repository.

    from conformance.suite.testing import AdapterConformanceTests

    class TestMyAdapter(AdapterConformanceTests):
        @property
        def adapter(self):
            return MyAdapter()

        @property
        def supports_thinking(self) -> bool:   # an expectation, checked against the declaration
            return False

Every standard test runs one TC rule of the suite (one run per class, cached). A test whose
capability is off is skipped with that reason. A standard test overridden in a subclass
must say why with `@pytest.mark.xfail(reason=...)`; a silent override fails, so a
subclass cannot quietly switch a check off (the idea of langchain-tests' standard tests).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ..adapters.protocol import Adapter, capabilities_of
from ..core import escaping
from ..core.schemas import schema_set
from ..formats.canonical.markers import DEFAULT_CRITICAL_KEY
from .outcome import RuleResult
from .rules import CATALOG, NEEDS, SUITE_ONLY, TEST_SLUGS
from .runner import (
    Samples,
    SuiteConfig,
    SuiteReport,
    cassette_folders,
    default_cassette_root,
    local_cassette_root,
    project_folders,
    run,
    samples_asked,
)


def skip_or_warn(rule: str, result: RuleResult) -> None:
    """A pytest item's verdict for a skipped check (skip, with its first reasons) or an
    advisory one (pass, with a `UserWarning` saying why it warned); nothing otherwise. Shared
    by `AdapterConformanceTests` and the `--turnspec` plugin's items."""
    if result.status == "skip":
        pytest.skip(escaping.text("; ".join(result.reasons[:3])))
    if result.status == "warn":  # advisory: passes, and says why it warned
        warnings.warn(escaping.text(f"{rule} (advisory): " + "; ".join(result.reasons[:3])), UserWarning, stacklevel=1)


def _standard() -> list[tuple[str, str, str | None]]:
    """(rule, test name, capability the test needs or None): one per catalogue rule."""
    out = []
    for r in CATALOG:
        if r.id in SUITE_ONLY:
            continue
        slug = TEST_SLUGS.get(r.id)
        out.append((r.id, f"test_{r.id.lower()}_{slug}" if slug else f"test_{r.id.lower()}", NEEDS.get(r.id)))
    return out


def _capabilities() -> tuple[str, ...]:
    """The boolean capabilities of schemas/canonical/v1/adapter-capabilities.json."""
    props = schema_set("canonical", "v1")["adapter-capabilities.json"].get("properties", {})
    return tuple(k for k, v in props.items() if isinstance(v, dict) and v.get("type") == "boolean")


STANDARD: list[tuple[str, str, str | None]] = _standard()
CAPABILITIES: tuple[str, ...] = _capabilities()


def _xfail_reason(fn: Any) -> str | None:
    for mark in getattr(fn, "pytestmark", []):
        if mark.name == "xfail" and (mark.kwargs.get("reason") or (mark.args and isinstance(mark.args[-1], str))):
            return str(mark.kwargs.get("reason") or mark.args[-1])
    return None


def _silent_override(name: str) -> Callable[[Any], None]:
    def test(self: Any) -> None:
        pytest.fail(
            f"{type(self).__name__}.{name} overrides a turnspec standard test without "
            f"@pytest.mark.xfail(reason=...): say why the check does not apply"
        )

    test.__name__ = name
    return test


class AdapterConformanceTests:
    """Standard conformance tests; set `adapter` (and optionally expectations) in a subclass."""

    _reports: ClassVar[dict[type, SuiteReport]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for _, name, _ in STANDARD:
            if name in cls.__dict__ and _xfail_reason(cls.__dict__[name]) is None:
                setattr(cls, name, _silent_override(name))

    # -- what a subclass sets --------------------------------------------------------------

    @property
    def adapter(self) -> Adapter:
        raise NotImplementedError("set the `adapter` property to the adapter under test")

    @property
    def cassette_dirs(self) -> list[Path]:
        """Folders of this adapter's cassettes: turnspec's own for its adapters and for an
        adapter that asks for them (`cassette_folders`), never by a coincidence of names
        (`runner.project_folders`), then `./cassettes/<adapter>/` of the folder pytest runs
        in, as `turnspec conform` and the plugin read it (so the three run the same cases)."""
        root, local = default_cassette_root(), local_cassette_root()
        dirs = [root / n for n in project_folders(self.adapter)] if root is not None else []
        dirs += [local / n for n in cassette_folders(self.adapter)] if local is not None else []
        return [d for d in dict.fromkeys(dirs) if d.is_dir()]

    @property
    def samples(self) -> Samples | Path | None:
        """Third-party recordings to replay (cassettes of the adapter's wire API are used).

        The default is what `turnspec conform` and the pytest plugin replay without a flag
        (`[tool.turnspec] samples`, else `$TURNSPEC_SAMPLES`, else none), so the three entry
        points run the same cases; return a folder (or None) to choose here.
        """
        return samples_asked()

    @property
    def critical_key(self) -> str:
        """The metadata key the adapter reads to mark a block critical (spec §4.2.2 names
        none; TC203 plants it and passes it as `AdapterOptions.critical_key`)."""
        return DEFAULT_CRITICAL_KEY

    @property
    def cross_provider(self) -> bool:
        """Replay sessions of every registered adapter through this one (TC4xx)."""
        return True

    # capability expectations (one class attribute per boolean of adapter-capabilities.json,
    # set below): None takes the adapter's declaration; a bool must match it

    # -- machinery -------------------------------------------------------------------------

    def _report(self) -> SuiteReport:
        cls = type(self)
        report = AdapterConformanceTests._reports.get(cls)
        if report is None:
            config = SuiteConfig.for_adapter(
                self.adapter,
                cassette_dirs=self.cassette_dirs,
                samples=self.samples,
                peers=self.cross_provider,
                critical_key=self.critical_key,
            )
            report = AdapterConformanceTests._reports[cls] = run(config)
        return report

    def _capability(self, name: str) -> bool:
        declared = bool(capabilities_of(self.adapter).get(name))
        expected = getattr(self, name)
        return declared if expected is None else bool(expected)

    def _check(self, rule: str, capability: str | None) -> None:
        if capability is not None and not self._capability(capability):
            pytest.skip(f"{capability} is off for this adapter")
        report = self._report()
        result = report.result(rule, str(self.adapter.name))
        if result is None:
            pytest.skip(f"{rule} did not run")
        if result.status == "fail":
            pytest.fail(
                f"{rule} failed:\n"
                + "\n".join(
                    escaping.text_line(f"  - {line}" if line in result.reasons else f"    {line}")
                    for line in result.explained()
                ),
                pytrace=False,
            )
        skip_or_warn(rule, result)

    def test_capabilities_match_expectations(self) -> None:
        """Expectations the subclass states equal what the adapter declares (§7.2 honesty)."""
        caps = capabilities_of(self.adapter)
        wrong = [
            f"{n}: expected {getattr(self, n)}, declared {caps.get(n)}"
            for n in CAPABILITIES
            if getattr(self, n) is not None and bool(getattr(self, n)) != bool(caps.get(n))
        ]
        assert not wrong, "; ".join(wrong)


def _make(rule: str, name: str, capability: str | None) -> Callable[[AdapterConformanceTests], None]:
    def test(self: AdapterConformanceTests) -> None:
        self._check(rule, capability)

    test.__name__ = name
    test.__doc__ = f"{rule}: {CATALOG[rule].summary} ({CATALOG[rule].section})"
    return test


for _rule, _name, _cap in STANDARD:
    setattr(AdapterConformanceTests, _name, _make(_rule, _name, _cap))
for _capability_name in CAPABILITIES:
    setattr(AdapterConformanceTests, _capability_name, None)
