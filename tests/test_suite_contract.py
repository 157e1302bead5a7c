"""Issue 16 (part B): the suite's reading of the contract and canonical §6.5, §7.2.

- TC001 accepts both capability lists (contract §3.4: 12 fields; canonical §7.2: 13) and
  says which one an adapter follows;
- the critical-block marker of §4.2.2 ("marked critical via metadata", no key named) is
  configurable everywhere it is read, and the default key is no TS010;

Each expectation comes from the spec text; adapters that break it are planted here or in
tests/mutants.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest
from test_replay_check import msg, rules_of, text, write

from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.protocol import AdapterOptions, Message, ToolDefinition, WireRequest
from conformance.cli import main
from conformance.findings import Selection
from conformance.formats.canonical.markers import DEFAULT_CRITICAL_KEY
from conformance.formats.canonical.memory import validate_messages
from conformance.replay import REFUSED, replay_check, target
from conformance.replay.check import LOSSY
from conformance.suite.checks.capabilities import CANONICAL_DECLARATION, CONTRACT_DECLARATION
from conformance.suite.report import as_dict
from conformance.suite.runner import SuiteConfig, SuiteReport, run

pytest_plugins = ["pytester"]


def _run(adapter: Any, *rules: str, **kw: Any) -> SuiteReport:
    return run(SuiteConfig.for_adapter(adapter, samples=None, selection=Selection(select=rules), **kw))


def _status(report: SuiteReport, rule: str) -> str:
    r = report.results and next(x for x in report.results if x.rule == rule)
    assert r
    return r.status


# -- TC001: the contract's 12 fields or canonical §7.2's 13 ------------------------------


class ContractCapabilities(OpenAIChatAdapter):
    """Declares the adapter contract §3.4 list: no supports_system_messages_in_list."""

    capabilities: ClassVar[Mapping[str, Any]] = {
        k: v for k, v in OpenAIChatAdapter.capabilities.items() if k != "supports_system_messages_in_list"
    }


class ContractCapabilitiesWrongType(ContractCapabilities):
    """The contract's 12 fields, one of them the wrong type: still TC001's failure."""

    capabilities: ClassVar[Mapping[str, Any]] = {**ContractCapabilities.capabilities, "supports_tools": "yes"}


def test_tc001_accepts_the_contracts_12_fields_and_says_so() -> None:
    assert len(ContractCapabilities.capabilities) == 12
    report = _run(ContractCapabilities(), "TC001")
    assert _status(report, "TC001") == "pass"
    assert report.declarations == {"openai-chat": CONTRACT_DECLARATION}
    d = as_dict(report)
    assert d["capability_declaration"] == {"openai-chat": CONTRACT_DECLARATION}
    [case] = d["results"][0]["cases"]
    assert case["message"] == f"follows {CONTRACT_DECLARATION}"


def test_tc001_accepts_canonical_13_fields_and_says_so() -> None:
    assert len(OpenAIChatAdapter.capabilities) == 13
    report = _run(OpenAIChatAdapter(), "TC001")
    assert _status(report, "TC001") == "pass"
    assert report.declarations == {"openai-chat": CANONICAL_DECLARATION}


def test_tc001_still_holds_the_12_fields_to_the_schema() -> None:
    report = _run(ContractCapabilitiesWrongType(), "TC001")
    assert _status(report, "TC001") == "fail"
    assert any("supports_tools" in why for r in report.results for why in r.reasons)


def test_conform_text_and_json_name_the_declaration(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["conform", "openai-chat", "--no-samples", "--select", "TC001", "-o", "json"])
    out = capsys.readouterr().out
    assert rc == 0 and json.loads(out)["capability_declaration"] == {"openai-chat": CANONICAL_DECLARATION}
    main(["conform", "openai-chat", "--no-samples", "--select", "TC001"])
    assert f"capabilities declared per {CANONICAL_DECLARATION}" in capsys.readouterr().out


# -- §4.2.2: the critical-block marker ---------------------------------------------------


class CriticalKeyHardCoded(OpenAIChatAdapter):
    """Reads `metadata.critical` whatever key the harness says marks critical blocks."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        return super().to_wire(messages, tools, replace(options, critical_key=DEFAULT_CRITICAL_KEY))


def test_tc203_plants_the_configured_key_and_passes_it_to_the_adapter() -> None:
    assert _status(_run(OpenAIChatAdapter(), "TC203", critical_key="x_must_send"), "TC203") == "pass"
    assert _status(_run(CriticalKeyHardCoded(), "TC203"), "TC203") == "pass"
    report = _run(CriticalKeyHardCoded(), "TC203", critical_key="x_must_send")
    assert _status(report, "TC203") == "fail"
    assert any("metadata.x_must_send" in why for r in report.results for why in r.reasons)


def test_conform_critical_key_option(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["conform", "openai-chat", "--no-samples", "--select", "TC203", "--critical-key", "x_must_send"])
    assert rc == 0, capsys.readouterr().out
    capsys.readouterr()
    rc = main(["conform", "openai-chat", "--no-samples", "--select", "TC203", "--critical-key", ""])
    assert rc == 2 and "--critical-key" in capsys.readouterr().err


def test_pytest_plugin_and_base_class_take_the_key(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_key="""
        from conformance.adapters.openai_chat import OpenAIChatAdapter
        from conformance.suite.testing import AdapterConformanceTests
        from conformance.adapters.protocol import AdapterOptions
        from dataclasses import replace

        class HardCoded(OpenAIChatAdapter):
            def to_wire(self, messages, tools, options):
                return super().to_wire(messages, tools, replace(options, critical_key="critical"))

        class TestKeyed(AdapterConformanceTests):
            adapter = HardCoded()
            samples = None
            cross_provider = False
            critical_key = "x_must_send"
        """
    )
    result = pytester.runpytest("-p", "no:randomly", "-k", "tc203", "-q")
    result.assert_outcomes(failed=1)
    result = pytester.runpytest(
        "-p", "no:randomly", "--turnspec-adapter", "openai-chat", "--turnspec-samples", "none",
        "--turnspec-select", "TC203", "--turnspec-critical-key", "x_must_send", "-q", "-k", "turnspec",
    )  # fmt: skip
    result.assert_outcomes(passed=1)


def _critical_session(key: str, mark: Any = True) -> dict[str, Any]:
    m = msg("user", text(), {"type": "hologram", "data": "..."})
    m["metadata"][key] = mark
    return m


def test_replay_check_reads_the_configured_key(tmp_path: Path) -> None:
    t = target("openai-chat")
    p = write(tmp_path, _critical_session("x_must_send"))
    [v] = list(replay_check([p], [t]))
    assert v.verdict == LOSSY  # the default key marks nothing here
    [v] = list(replay_check([p], [t], critical_key="x_must_send"))
    assert rules_of(v) == ["RC006"] and v.verdict == REFUSED


def test_replay_check_cli_critical_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(tmp_path, _critical_session("x_must_send"))
    assert main(["replay-check", str(p), "--to", "openai-chat"]) == 0
    assert main(["replay-check", str(p), "--to", "openai-chat", "--critical-key", "x_must_send"]) == 1
    assert "RC006" in capsys.readouterr().out


def test_the_default_marker_is_no_unknown_field_but_others_are() -> None:
    m = msg("user", text(), text("b"))
    m["metadata"][DEFAULT_CRITICAL_KEY] = [1]
    assert [f.rule for f in validate_messages([m])] == []
    m["metadata"]["x_must_send"] = [1]
    assert [(f.rule, f.pointer.rsplit("/", 1)[-1]) for f in validate_messages([m])] == [("TS010", "x_must_send")]
