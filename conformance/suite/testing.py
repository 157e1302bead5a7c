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

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ..adapters.base import Adapter
from .runner import SuiteConfig, SuiteReport, default_cassette_root, run

# (rule, test name, capability the test needs or None)
STANDARD: list[tuple[str, str, str | None]] = [
    ("TC001", "test_tc001_capabilities_declared", None),
    ("TC101", "test_tc101_responses_validate", None),
    ("TC102", "test_tc102_requests_read_back_validate", None),
    ("TC103", "test_tc103_stream_events_validate", "supports_streaming"),
    ("TC104", "test_tc104_wire_request_shape", None),
    ("TC201", "test_tc201_dropped_block_warns", None),
    ("TC202", "test_tc202_dropped_block_absent", None),
    ("TC203", "test_tc203_critical_block_fails", None),
    ("TC301", "test_tc301_parsed_tool_ids_canonical", "supports_tools"),
    ("TC302", "test_tc302_provider_tool_ids_restored", "supports_tools"),
    ("TC303", "test_tc303_tool_id_map_injective", "supports_tools"),
    ("TC304", "test_tc304_provider_tool_id_rules", "supports_tools"),
    ("TC305", "test_tc305_tool_use_and_result_paired", "supports_tools"),
    ("TC401", "test_tc401_replay_preserves_content", None),
    ("TC402", "test_tc402_replay_pairs_results", None),
    ("TC403", "test_tc403_replay_system_placement", None),
    ("TC404", "test_tc404_replay_drops_with_warn", None),
    ("TC405", "test_tc405_thinking_signatures", None),
    ("TC501", "test_tc501_declared_capabilities_carried", None),
    ("TC502", "test_tc502_undeclared_capabilities_dropped", None),
    ("TC601", "test_tc601_stream_order", "supports_streaming"),
    ("TC602", "test_tc602_stream_index_monotonic", "supports_streaming"),
    ("TC603", "test_tc603_stream_tool_events", "supports_streaming_tool_calls"),
    ("TC604", "test_tc604_stream_final_input", "supports_streaming_tool_calls"),
    ("TC605", "test_tc605_stream_aggregate", "supports_streaming"),
    ("TC606", "test_tc606_stream_equals_parse", "supports_streaming"),
    ("TC607", "test_tc607_stream_chunking", "supports_streaming"),
    ("TC701", "test_tc701_token_estimate", None),
    ("TC801", "test_tc801_errors_classified", None),
    ("TC802", "test_tc802_request_round_trip", None),
]
CAPABILITIES = (
    "supports_thinking",
    "supports_images",
    "supports_tools",
    "supports_system_prompt",
    "supports_structured_output",
    "supports_streaming",
    "supports_streaming_tool_calls",
    "supports_parallel_tool_calls",
)


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
        """Folders of this adapter's cassettes (vcrpy YAML); turnspec's own for its adapters."""
        root = default_cassette_root()
        own = root / str(self.adapter.name) if root is not None else None
        return [own] if own is not None and own.is_dir() else []

    @property
    def samples(self) -> Path | None:
        """Third-party recordings to replay (cassettes of the adapter's wire API are used)."""
        return None

    @property
    def cross_provider(self) -> bool:
        """Replay sessions of every registered adapter through this one (TC4xx)."""
        return True

    # capability expectations: None takes the adapter's declaration; a bool must match it
    supports_thinking: bool | None = None
    supports_images: bool | None = None
    supports_tools: bool | None = None
    supports_system_prompt: bool | None = None
    supports_structured_output: bool | None = None
    supports_streaming: bool | None = None
    supports_streaming_tool_calls: bool | None = None
    supports_parallel_tool_calls: bool | None = None

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
            )
            report = AdapterConformanceTests._reports[cls] = run(config)
        return report

    def _capability(self, name: str) -> bool:
        declared = bool(self.adapter.capabilities.get(name))
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
            pytest.fail(f"{rule} failed:\n" + "\n".join(f"  - {r}" for r in result.reasons), pytrace=False)
        if result.status == "skip":
            pytest.skip("; ".join(result.reasons[:3]))

    def test_capabilities_match_expectations(self) -> None:
        """Expectations the subclass states equal what the adapter declares (§7.2 honesty)."""
        caps = self.adapter.capabilities
        wrong = [
            f"{n}: expected {getattr(self, n)}, declared {caps.get(n)}"
            for n in CAPABILITIES
            if getattr(self, n) is not None and bool(getattr(self, n)) != bool(caps.get(n))
        ]
        assert not wrong, "; ".join(wrong)


def _make(rule: str, name: str, capability: str | None) -> Callable[[AdapterConformanceTests], None]:
    def test(self: AdapterConformanceTests) -> None:
        self._check(rule, capability)

    from .rules import CATALOG

    test.__name__ = name
    test.__doc__ = f"{rule}: {CATALOG[rule].summary} ({CATALOG[rule].section})"
    return test


for _rule, _name, _cap in STANDARD:
    setattr(AdapterConformanceTests, _name, _make(_rule, _name, _cap))
