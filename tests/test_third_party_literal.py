"""A spec-literal honest adapter (tests/third_party/literal_openai_chat.py: streaming §5.3's
dotted event names, contract §3.4's twelve-field `AdapterCapabilities` object, contract
§7.2's literal usage mapping, §6 error classes, §6.5 failing streams) passes `turnspec
conform`, and the false failures it met are fixed for the sentence each cites while the
defect each check exists for still fails:

- TC403: a contract §3.4 declaration has no `supports_system_messages_in_list` (only
  canonical §7.2 lists it), so its absence is no claim of a hoisted system prompt: the
  placement is contract §4.1.2's table (OpenAI: "First message in messages with role: system");
- TC801: the recording's headers reach `from_wire_response` as `WireResponse.headers` types
  them (`Mapping[str, str]`; RFC 9110 §5.3 joins several field lines with ", "), not as
  vcrpy's lists, so an adapter written to the protocol reads `x-request-id` and
  `retry-after-ms`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.cli import main
from conformance.suite.checks.responses import wire_headers

ROOT = Path(__file__).resolve().parents[1]
THIRD = ROOT / "tests" / "third_party"
LITERAL = f"{THIRD / 'literal_openai_chat.py'}:LiteralOpenAIChatAdapter"
DEFECTS = THIRD / "literal_defects.py"
CASSETTES = ROOT / "cassettes" / "openai-chat"
STREAM_RULES = ("TC103", "TC601", "TC602", "TC603", "TC604", "TC605", "TC606", "TC607", "TC608", "TC609", "TC903")


def _conform(capsys: Any, ref: str, *extra: str) -> tuple[int, dict[str, Any], dict[str, dict[str, Any]]]:
    rc = main(["conform", ref, "--cassettes", str(CASSETTES), "--output", "json", *extra])
    report = json.loads(capsys.readouterr().out)
    return rc, report, {r["rule"]: r for r in report["results"] if r["adapter"] != "(cassettes)"}


def test_the_spec_literal_adapter_passes_conform(capsys: Any) -> None:
    rc, _, results = _conform(capsys, LITERAL, "--no-samples")
    failed = {k: r for k, r in results.items() if r["status"] not in ("pass", "skip")}
    assert rc == 0 and not failed, failed
    for rule in STREAM_RULES:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, rule
    # the spec-literal choices were judged, not skipped
    for rule in ("TC001", "TC403", "TC801", "TC201", "TC203", "TC301", "TC701", "TC904"):
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, rule


def test_the_spec_literal_adapter_passes_conform_on_real_samples(samples: Path, capsys: Any) -> None:
    rc, _, results = _conform(capsys, LITERAL, "--samples", str(samples / "wire"))
    failed = {k: r for k, r in results.items() if r["status"] not in ("pass", "skip")}
    assert rc == 0 and not failed, failed
    assert results["TC701"]["cases_run"] > 10 and results["TC802"]["cases_run"] > 20
    for rule in STREAM_RULES:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, rule


def test_a_contract_declaration_still_fails_a_misplaced_system_prompt(capsys: Any) -> None:
    rc, _, results = _conform(capsys, f"{DEFECTS}:SystemLastLiteral", "--no-samples", "--select", "TC403")
    assert rc == 1 and results["TC403"]["status"] == "fail", results["TC403"]
    assert any("contract §4.1.2" in c.get("message", "") for c in results["TC403"]["cases"]), results["TC403"]


def test_error_checks_still_fail_a_lost_request_id(capsys: Any) -> None:
    rc, _, results = _conform(capsys, f"{DEFECTS}:LostRequestIdLiteral", "--no-samples", "--select", "TC801")
    assert rc == 1 and results["TC801"]["status"] == "fail", results["TC801"]


def test_recorded_header_lines_reach_the_adapter_as_strings() -> None:
    got = wire_headers({"x-request-id": ["req_1"], "vary": ["a", "b"], "retry-after-ms": "200"})
    assert got == {"x-request-id": "req_1", "vary": "a, b", "retry-after-ms": "200"}
