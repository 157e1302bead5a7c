"""`turnspec conform`, the runner and the report formats, plus the checks mutants cannot reach."""

from __future__ import annotations

import json
import socket
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.streams import DOTTED
from conformance.cli import main
from conformance.core.findings import Selection
from conformance.suite import checks
from conformance.suite.cassettes import load_cassette
from conformance.suite.report import to_markdown
from conformance.suite.runner import NetworkBlockedError, SuiteConfig, network_blocked, run

ROOT = Path(__file__).resolve().parents[1]


def test_full_suite_on_both_adapters_and_all_cassettes(samples, capsys):
    """The acceptance run: both reference adapters pass every rule over every cassette."""
    rc = main(
        [
            "conform",
            "anthropic",
            "openai-chat",
            "--output",
            "json",
            "--samples",
            str(samples / "wire"),
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert rc == 0, [r for r in report["results"] if r["status"] == "fail"]
    assert report["summary"]["failed"] == 0 and report["summary"]["cassettes"] >= 90
    not_passed = {
        (rule, a): st
        for rule, row in report["matrix"].items()
        for a, st in row.items()
        if rule != "TC800" and st != "pass"
    }
    # Chat Completions streams no thinking (supports_thinking is false): TC610 has no case;
    # Anthropic streams always report usage: TC905 has no field to look for, and TC906 no
    # response without usage to estimate
    assert not_passed == {
        ("TC610", "openai-chat"): "skip",
        ("TC905", "anthropic"): "skip",
        ("TC906", "anthropic"): "skip",
    }, not_passed
    # Chat Completions has no tool-result error flag (its record says so): TC902 wants the WARN line
    tc902 = next(r for r in report["results"] if r["rule"] == "TC902" and r["adapter"] == "openai-chat")
    assert tc902["status"] == "pass" and tc902["cases_run"] == 1
    assert set(report["cross_provider"]) >= {
        "anthropic→anthropic",
        "anthropic→openai-chat",
        "openai-chat→anthropic",
        "openai-chat→openai-chat",
    }
    # every skipped recording names its API record and why, or says no record matches it
    for s in report["skipped_interactions"]:
        assert (
            ": no registered adapter serves it" in s["reason"]
            or "not an LLM chat turn" in s["reason"]
            or (s["reason"].startswith("unknown endpoint "))
        ), s


def test_exit_1_and_reasons_for_a_failing_adapter(capsys):
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    rc = main(["conform", "mutants:UnpairedAfterSwap", "--no-samples", "--select", "TC305"])
    out = capsys.readouterr().out
    assert rc == 1 and "TC305 FAIL" in out and "FAIL:" in out.splitlines()[-1]


def test_unknown_rule_prefix_and_adapter_are_usage_errors(capsys):
    assert main(["conform", "anthropic", "--select", "XX9"]) == 2
    assert main(["conform", "no-such-adapter"]) == 2
    assert main(["conform", "json:dumps"]) == 2
    assert "not a turnspec adapter" in capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["junit", "md", "text"])
def test_report_formats(fmt, capsys):
    rc = main(["conform", "openai-chat", "--no-samples", "--select", "TC2,TC3", "--output", fmt])
    out = capsys.readouterr().out
    assert rc == 0
    if fmt == "junit":
        root = ET.fromstring(out.split("?>", 1)[1])
        suite = root.find("testsuite")
        assert suite is not None and suite.get("name") == "openai-chat" and suite.get("failures") == "0"
        assert {c.get("name", "")[:5] for c in suite.iter("testcase")} >= {"TC201", "TC305"}
    elif fmt == "md":
        assert "| TC201 |" in out and "✅ pass" in out and "## Cross-provider replay" not in out
    else:
        assert "TC203 pass" in out


def test_markdown_lists_reasons_for_failures():
    import sys

    sys.path.insert(0, str(ROOT / "tests"))
    from mutants import SystemLeftInMessages

    report = run(SuiteConfig.for_adapter(SystemLeftInMessages(), samples=None, selection=Selection(select=("TC403",))))
    md = to_markdown(report)
    assert "❌ fail [1]" in md and "role system left in messages" in md
    assert "| openai-chat | ❌ TC403 |" in md  # cross-provider row: openai-chat's session into the mutant


def test_network_is_blocked_during_replay():
    with network_blocked(), pytest.raises(NetworkBlockedError):
        socket.create_connection(("127.0.0.1", 9))
    s = socket.socket()
    s.close()  # restored afterwards


def test_tc601_stream_order_violations():
    good = [
        {"type": "message_start", "message_id": "m"},
        {"type": "message_complete", "message_id": "m", "final_content": []},
    ]
    assert {o.status for o in checks.stream_invariants("x", "s", good) if o.rule == "TC601"} == {"pass"}
    # no start event: canonical §7.4 defines none; the streaming §5.3 names require message.start
    assert [o.status for o in checks.stream_invariants("x", "s", good[1:]) if o.rule == "TC601"] == ["pass"]
    assert [o.status for o in checks.stream_invariants("x", "s", good[1:], DOTTED) if o.rule == "TC601"] == ["fail"]
    for bad in (
        [good[1], good[0]],
        [
            *good,
            {"type": "text_delta", "message_id": "m", "content_block_index": 0, "text": "late"},
        ],
        [good[0], {**good[1], "message_id": "other"}],
    ):
        assert [o.status for o in checks.stream_invariants("x", "s", bad) if o.rule == "TC601"] == ["fail"]


def test_tc800_broken_cassette_fails_and_unknown_api_is_skipped(tmp_path, monkeypatch):
    import re as _re

    from conformance.wire import registry as wire_registry
    from conformance.wire.api import Framing, WireApi

    acme = WireApi(
        name="acme-chat",
        title="Acme chat",
        docs=(),
        request_paths=(_re.compile(r"/acme/chat$"),),
        framing=Framing.SSE,
        is_streaming=lambda _u, b: bool(b and b.get("stream")),
        schema_dir="acme-chat",
    )
    monkeypatch.setattr(wire_registry, "APIS", (*wire_registry.APIS, acme))
    (tmp_path / "wire").mkdir()
    (tmp_path / "wire" / "broken.yaml").write_text("interactions: [ {request: ", encoding="utf-8")
    (tmp_path / "wire" / "acme.yaml").write_text(
        "interactions:\n- request: {body: '{}', headers: {}, method: POST, uri: 'https://x/acme/chat'}\n"
        "  response: {body: {string: '{}'}, headers: {}, status: {code: 200, message: OK}}\nversion: 1\n",
        encoding="utf-8",
    )
    assert load_cassette(tmp_path / "wire" / "broken.yaml").error
    report = run(SuiteConfig.for_refs(["anthropic"], samples=tmp_path / "wire", selection=Selection(select=("TC800",))))
    r = report.result("TC800", "(cassettes)")
    assert r is not None and r.status == "fail" and "broken.yaml" in r.reasons[0]
    skipped = [o for o in report.outcomes if o.status == "skip"]
    assert [o.message for o in skipped] == ["acme-chat: no registered adapter serves it"]


def test_sample_variants_are_read(samples):
    """Plain vcrpy, gzip !!binary, parsed_body and SSE bodies all decode to JSON or SSE text."""
    wire = samples / "wire"
    gz = load_cassette(wire / "simonw__llm/tests/cassettes/test_tools/test_tool_use_chain_of_two_calls.yaml")
    parsed = load_cassette(
        wire / "pydantic__pydantic-ai/tests/models/cassettes/test_anthropic/test_anthropic_tool_with_thinking.yaml"
    )
    sse = load_cassette(wire / "simonw__llm-anthropic/tests/cassettes/test_anthropic/test_thinking_prompt.yaml")
    assert gz.error is None and isinstance(gz.interactions[0].response_json, dict)
    assert parsed.interactions[1].request_body["messages"][1]["content"][0]["type"] == "thinking"
    assert sse.interactions[0].is_stream and "message_start" in sse.interactions[0].response_text


def test_rules_command_lists_tc_rules(capsys):
    assert main(["rules", "--select", "TC"]) == 0
    out = capsys.readouterr().out
    assert "TC201" in out and "§4.2.2, §7.3" in out and "TS101" not in out


def test_broken_own_cassette_fails_the_run(tmp_path, capsys):
    (tmp_path / "anthropic").mkdir()
    (tmp_path / "anthropic" / "x.yaml").write_text("interactions: [ {request: \n", encoding="utf-8")
    rc = main(["conform", "anthropic", "--cassettes", str(tmp_path), "--no-samples", "--select", "TC8"])
    out = capsys.readouterr().out
    assert rc == 1 and "anthropic/x.yaml: cannot read cassette" in out


def _gemini_and_generate(folder: Path) -> None:
    folder.mkdir()
    for name, uri in (
        ("gen.yaml", "http://127.0.0.1:11434/api/generate"),
        ("odd.yaml", "https://example.com/v2/complete"),
    ):
        (folder / name).write_text(
            "interactions:\n- request: {body: '{}', headers: {}, method: POST, uri: '" + uri + "'}\n"
            "  response: {body: {string: '{}'}, headers: {}, status: {code: 200, message: OK}}\nversion: 1\n",
            encoding="utf-8",
        )


def test_unknown_endpoints_are_skipped_with_a_reason_never_a_near_match(tmp_path):
    _gemini_and_generate(tmp_path / "wire")
    report = run(SuiteConfig.for_refs(["anthropic"], samples=tmp_path / "wire", selection=Selection(select=("TC800",))))
    reasons = sorted(o.message for o in report.outcomes if o.rule == "TC800")
    # /api/generate is Ollama's completion endpoint: its own record says it is no chat turn
    assert reasons == [
        "ollama-generate: not an LLM chat turn (http://127.0.0.1:11434/api/generate)",
        "unknown endpoint https://example.com/v2/complete: no WireApi record matches it",
    ]


def test_report_never_overwrites_an_input_or_an_existing_file(tmp_path, capsys):
    own = tmp_path / "own"
    (own / "anthropic").mkdir(parents=True)
    cassette = own / "anthropic" / "text.yaml"
    cassette.write_bytes((ROOT / "cassettes/anthropic/text.yaml").read_bytes())
    before = cassette.read_bytes()
    args = ["conform", "anthropic", "--cassettes", str(own), "--no-samples", "--select", "TC101"]
    assert main([*args, "--report", str(cassette), "--force"]) == 2
    assert "inside or around the input" in capsys.readouterr().err.replace("\n", " ")
    assert cassette.read_bytes() == before
    out = tmp_path / "report.md"
    out.write_text("mine", encoding="utf-8")
    assert main([*args, "--report", str(out)]) == 2
    assert "exists; pass --force" in capsys.readouterr().err.replace("\n", " ")
    assert out.read_text(encoding="utf-8") == "mine"
    assert main([*args, "--report", str(out), "--force"]) == 0
    assert out.read_text(encoding="utf-8").startswith("# turnspec conform")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["own", "report.md"]  # no temporary file left


def test_a_declared_capability_no_case_exercised_is_skipped_or_errors_when_strict(tmp_path, capsys, monkeypatch):
    """Anthropic declares prompt caching; a cassette set without cached tokens cannot show it.
    No sentence makes the declaration wrong, so it is a skip naming the cassette to add
    (issue 25 item 6): exit 0, 1 with --fail-on-skip, and 1 with --strict, which fails TC002
    (a finding; it exited 2, a usage error's code, issue 43 item 4)."""
    import conformance.suite.runner as runner

    (tmp_path / "anthropic").mkdir()
    (tmp_path / "anthropic" / "image.yaml").write_bytes((ROOT / "cassettes/anthropic/image.yaml").read_bytes())
    assert "cache_read_input_tokens" not in (tmp_path / "anthropic" / "image.yaml").read_text()
    monkeypatch.setattr(runner, "default_cassette_root", lambda: None)
    args = ["conform", "anthropic", "--cassettes", str(tmp_path), "--no-samples", "--select", "TC002,TC904,TC503"]
    assert main([*args, "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    gate = next(r for r in report["results"] if r["rule"] == "TC002")
    # TC002 runs the rules exercising the other capabilities too (issue 43 item 4): they pass
    assert [c["status"] for c in gate["cases"] if c["subject"] == "supports_prompt_caching"] == ["skip"]
    assert [r for r in gate["skip_reasons"] if "prompt_caching" in r] == [
        "supports_prompt_caching: declared true, but no case exercised it (cases come from TC503, TC904): add a "
        "cassette of a response whose usage reports cache reads or writes to anthropic's cassettes "
        "(`turnspec wire record` makes one)"
    ]
    # image.yaml streams no tool call either, which the selection no longer hides
    assert report["summary"]["unexercised_capabilities"] == [
        "anthropic.supports_streaming_tool_calls",
        "anthropic.supports_prompt_caching",
    ]
    assert main([*args, "--fail-on-skip"]) == 1
    capsys.readouterr()
    assert main([*args, "--strict"]) == 1
    assert "--strict" in capsys.readouterr().err


def test_json_report_says_cases_run_skipped_and_capabilities_per_check(capsys):
    assert main(["conform", "openai-chat", "--no-samples", "--select", "TC1,TC3,TC9", "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    by_rule = {r["rule"]: r for r in report["results"]}
    t301 = by_rule["TC301"]
    assert t301["cases_run"] == t301["passed"] + t301["failed"] > 0
    assert set(t301["capabilities_exercised"]) <= {"supports_tools", "supports_parallel_tool_calls"}
    t902 = by_rule["TC902"]
    assert t902["status"] == "pass" and t902["cases_run"] == 1 and t902["cases_skipped"] == 0
    assert by_rule["TC901"]["capabilities_exercised"] == {"supports_images": 3}
    assert [c["capability"] for c in by_rule["TC901"]["cases"]] == ["supports_images"] * 3
    # Chat Completions has no tool-result error flag (its record says so): the one WARN line is judged
    assert by_rule["TC902"]["cases"] == [
        {"subject": "tool errors warned", "status": "pass", "capability": "supports_tools"}
    ]


def test_fail_on_skip_gates_ci(capsys):
    args = ["conform", "openai-chat", "--no-samples", "--select", "TC610"]
    assert main(args) == 0
    assert main([*args, "--fail-on-skip"]) == 1


def test_base_class_capabilities_and_tests_come_from_the_catalogue():
    from conformance.core.schemas import schema_set
    from conformance.suite import rules as R
    from conformance.suite import testing

    props = schema_set("canonical", "v1")["adapter-capabilities.json"]["properties"]
    booleans = tuple(k for k, v in props.items() if v.get("type") == "boolean")
    assert testing.CAPABILITIES == booleans == R.BOOLEAN_CAPABILITIES
    assert {rule for rule, _, _ in testing.STANDARD} == {r.id for r in R.CATALOG} - set(R.SUITE_ONLY)
    for rule, name, cap in testing.STANDARD:
        assert name.startswith(f"test_{rule.lower()}") and hasattr(testing.AdapterConformanceTests, name)
        assert cap is None or cap in booleans


def test_html_report_is_self_contained_with_the_replay_matrix(capsys):
    """`--output html`: one page, no external asset or script, a cell per ordered pair."""
    from html.parser import HTMLParser

    assert main(["conform", "anthropic", "openai-chat", "--no-samples", "--output", "html"]) in (0, 1)
    page = capsys.readouterr().out

    class Cells(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.tags: list[tuple[str, dict[str, str | None]]] = []

        def handle_starttag(self, tag, attrs):
            self.tags.append((tag, dict(attrs)))

    p = Cells()
    p.feed(page)
    assert not [t for t, a in p.tags if t == "script" or (t in ("link", "img") and a)]
    matrix = page.split("<h2>Cross-provider replay</h2>", 1)[1].split("</table>", 1)[0]
    rows = matrix.count("<tr>") - 1  # less the header row
    names = ("anthropic", "openai-chat")
    assert rows >= len(names)
    for a in names:
        assert f"<th>{a}</th>" in matrix
    # a pair is run when the adapter under test is on either side (the others are peers)
    assert matrix.count('class="pass"') + matrix.count('class="fail"') == rows * rows - (rows - len(names)) ** 2
    for anchor in {a["href"] for t, a in p.tags if t == "a" and a.get("href", "").startswith("#r")}:
        assert f'id="{anchor[1:]}"' in page


SIX = ["anthropic", "bedrock", "gemini", "ollama", "openai-chat", "openai-responses"]


def test_full_suite_on_all_six_reference_adapters(samples, capsys):
    """Issue 12's acceptance run, with issue 27's Bedrock adapter: the six reference adapters
    pass every rule over every cassette and recording; what skips, skips for a reason that
    is not the adapter's. (Its speed is `nox -s bench`'s to measure, never a timed assertion.)"""
    rc = main(["conform", *SIX, "--output", "json", "--samples", str(samples / "wire")])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0, [(r["rule"], r["adapter"], r["reasons"][:2]) for r in report["results"] if r["status"] == "fail"]
    not_passed = {
        (rule, a): st
        for rule, row in report["matrix"].items()
        for a, st in row.items()
        if rule != "TC800" and st != "pass"
    }
    assert not_passed == {
        # (TC302 runs for Ollama: ollama/issued_ids.yaml carries ids the API issued, v0.12.10)
        # every boolean capability is declared true: nothing is declared false to drop
        ("TC502", "gemini"): "skip",
        ("TC502", "ollama"): "skip",
        ("TC502", "openai-responses"): "skip",
        # these APIs report usage on every stream: there is no field to ask for it with
        ("TC905", "anthropic"): "skip",
        ("TC905", "bedrock"): "skip",
        ("TC905", "gemini"): "skip",
        ("TC905", "ollama"): "skip",
        ("TC905", "openai-responses"): "skip",
        # every Anthropic and Gemini recording carries usage: nothing to estimate
        ("TC906", "anthropic"): "skip",
        ("TC906", "gemini"): "skip",
        # a Converse response names no model (ConverseResponse has no model member)
        ("TC907", "bedrock"): "skip",
        # Gemini and Ollama send tool input whole: no partial_json fragments to compare
        ("TC609", "gemini"): "skip",
        ("TC609", "ollama"): "skip",
        # Chat Completions streams no thinking (supports_thinking is false): no signature to place
        ("TC610", "openai-chat"): "skip",
    }, not_passed
    # the replay matrix is 6 x 6 and all green
    assert {f"{x}→{y}" for x in SIX for y in SIX} <= set(report["cross_provider"])
    cells = {k: v for k, v in report["cross_provider"].items() if k.split("→")[0] in SIX}
    assert len(cells) == 36 and all(set(v.values()) == {"pass"} for v in cells.values()), cells


def test_tc701_skips_recordings_whose_usage_is_not_comparable_and_only_those(samples):
    """The two March-2025 gpt-4o Responses recordings skip TC701 with their evidence (never a
    pass); every other real Responses recording with usage is estimated."""
    from conformance.suite.checks.requests import USAGE_NOT_COMPARABLE  # the exclusion table under test

    report = run(
        SuiteConfig.for_refs(["openai-responses"], samples=samples / "wire", selection=Selection(select=("TC701",)))
    )
    result = report.result("TC701", "openai-responses")
    assert result is not None and result.status == "pass"
    skipped = {r.split(": ", 1)[0]: r.split(": ", 1)[1] for r in result.skip_reasons}
    for label in USAGE_NOT_COMPARABLE:
        assert skipped[label].startswith("recorded usage is not comparable to the request: "), skipped.get(label)
        assert "205 input tokens that no part of the request carries" in skipped[label]
    excluded = [r for r in skipped.values() if r.startswith("recorded usage is not comparable")]
    assert len(excluded) == len(USAGE_NOT_COMPARABLE) == 2


def test_the_not_comparable_evidence_holds_in_the_recordings(samples):
    """The facts TC701's exclusion reason states, read from the recordings themselves: the
    same gpt-4o snapshot, the same strict tool and a same-sized question counted 255 in
    March 2025 and 40 in October 2025, while the bodies sent are what the recorded
    content-length says (nothing was edited after recording)."""
    import yaml  # the raw cassettes, to read headers and parsed bodies as recorded

    from conformance.adapters.openai_responses import OpenAIResponsesAdapter

    base = samples / "wire/pydantic__pydantic-ai/tests/models/cassettes/test_openai_responses"
    march = yaml.safe_load((base / "test_openai_responses_stream.yaml").read_text())["interactions"][0]
    october = yaml.safe_load((base / "test_openai_responses_model_simple_response_with_tool_call.yaml").read_text())[
        "interactions"
    ][0]
    bodies = [march["request"]["parsed_body"], october["request"]["parsed_body"]]
    for it, body in zip((march, october), bodies, strict=True):
        compact = json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()
        assert int(it["request"]["headers"]["content-length"][0]) == len(compact)
    tool = [{k: t[k] for k in ("name", "parameters", "strict", "type")} for t in bodies[0]["tools"]]
    assert tool == [{k: t[k] for k in ("name", "parameters", "strict", "type")} for t in bodies[1]["tools"]]
    assert march["response"]["body"]["string"].count('"model":"gpt-4o-2024-08-06"') >= 1
    assert october["response"]["parsed_body"]["model"] == "gpt-4o-2024-08-06"
    assert '"input_tokens":255' in march["response"]["body"]["string"]
    assert october["response"]["parsed_body"]["usage"]["input_tokens"] == 40
    # the adapter's own estimates of the two requests differ by a few tokens, not by 215
    a = OpenAIResponsesAdapter()
    est = [a.estimate_input_tokens(*_read(a, b)) for b in bodies]
    assert abs(est[0] - est[1]) <= 5, est


def _read(a: Any, body: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    parsed = a.from_wire_request(body, session_id="sess_evidence")
    return parsed.messages, parsed.tools


# -- the author's path (issue 27 item 4) ---------------------------------------------------

CRASHY = """
from conformance.adapters.openai_chat import OpenAIChatAdapter


class Crashy(OpenAIChatAdapter):
    cassette_folders = ("openai-chat",)  # asks for turnspec's own Chat Completions cassettes

    def from_wire_response(self, *args, **kwargs):
        return _lookup({})


def _lookup(table):
    return table["oops"]
"""


@pytest.fixture
def crashy(tmp_path, monkeypatch):
    """An adapter whose response reader raises KeyError('oops') from a helper of its own."""
    (tmp_path / "crashy_adapter.py").write_text(CRASHY)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "crashy_adapter", raising=False)
    return "crashy_adapter:Crashy"


def _conform(capsys, *args: str) -> tuple[int, str]:
    rc = main(["conform", *args])
    return rc, capsys.readouterr().out


def test_conform_reads_cassettes_of_the_current_folder_by_default(tmp_path, monkeypatch, capsys):
    """`./cassettes/<adapter>/` is read without --cassettes, beside turnspec's own."""
    mine = tmp_path / "cassettes" / "openai-chat"
    mine.mkdir(parents=True)
    (mine / "local_text.yaml").write_bytes((ROOT / "cassettes/openai-chat/text.yaml").read_bytes())
    args = ("openai-chat", "--no-samples", "--select", "TC101", "-o", "json")
    _, before = _conform(capsys, *args)
    monkeypatch.chdir(tmp_path)
    rc, after = _conform(capsys, *args)
    own = len(list((ROOT / "cassettes/openai-chat").glob("*.yaml")))
    assert json.loads(before)["summary"]["cassettes"] == own
    report = json.loads(after)
    assert rc == 0 and report["summary"]["cassettes"] == own + 1
    subjects = {c["subject"] for r in report["results"] for c in r["cases"]}
    # labelled with its folder (issue 43 item 7), apart from turnspec's own cassettes
    assert any(s.startswith("cassettes/openai-chat/local_text.yaml#") for s in subjects), subjects


def test_conform_in_the_checkout_reads_its_cassettes_once(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # ./cassettes is turnspec's own root: not read twice
    _, out = _conform(capsys, "openai-chat", "--no-samples", "--select", "TC101", "-o", "json")
    assert json.loads(out)["summary"]["cassettes"] == len(list((ROOT / "cassettes/openai-chat").glob("*.yaml")))


def test_a_crash_shows_the_adapters_traceback_in_text(crashy, capsys):
    rc, out = _conform(capsys, crashy, "--no-samples", "--select", "TC101")
    assert rc == 1 and "crashed: KeyError: 'oops'" in out
    assert "Traceback (most recent call last):" in out
    assert 'crashy_adapter.py", line 9, in from_wire_response' in out and "in _lookup" in out
    assert "conformance/suite/" not in out  # trimmed to the adapter's frames
    assert out.count("Traceback (most recent call last):") == 1  # the first of the check, once
    _, verbose = _conform(capsys, crashy, "--no-samples", "--select", "TC101", "-v")
    assert "(traceback as above)" in verbose


def test_a_crash_shows_the_traceback_in_json_and_junit(crashy, capsys):
    _, out = _conform(capsys, crashy, "--no-samples", "--select", "TC101", "-o", "json")
    cases = [c for r in json.loads(out)["results"] for c in r["cases"] if c["status"] == "fail"]
    assert cases and all("KeyError: 'oops'" in c["traceback"] and "in _lookup" in c["traceback"] for c in cases)
    _, out = _conform(capsys, crashy, "--no-samples", "--select", "TC101", "-o", "junit")
    failure = ET.fromstring(out.split("?>", 1)[1]).find(".//failure")
    assert failure is not None and failure.text is not None
    assert "Traceback (most recent call last):" in failure.text and "in _lookup" in failure.text


def test_failures_only_prints_the_failing_checks_and_the_summary(crashy, capsys):
    rc, out = _conform(capsys, crashy, "--no-samples", "--select", "TC1,TC2", "--failures-only")
    lines = out.splitlines()
    assert rc == 1 and lines[0] == "openai-chat" and lines[-1].startswith("FAIL: ")
    checks = [line.split()[0] for line in lines if line.startswith("  TC")]
    assert checks and all(f"{c} FAIL" in out for c in checks)
    assert " pass " not in out and " skip " not in out and "capabilities declared" not in out
    _, full = _conform(capsys, crashy, "--no-samples", "--select", "TC1,TC2")
    assert "TC201 pass" in full and full.splitlines()[-1].rsplit(" in ", 1)[0] == lines[-1].rsplit(" in ", 1)[0]


def test_sarif_and_github_locate_a_failure_at_the_cassette_line(crashy, tmp_path, monkeypatch, capsys):
    """Locations carry the cassette's path relative to the repository (the working folder)
    and the line its interaction starts on, so the annotations attach to the file."""
    mine = tmp_path / "repo" / "cassettes" / "openai-chat"
    mine.mkdir(parents=True)
    text = (ROOT / "cassettes/openai-chat/text.yaml").read_text()
    (mine / "local_text.yaml").write_text(text)
    starts = [n for n, line in enumerate(text.splitlines(), 1) if line.startswith("- request:")]
    monkeypatch.chdir(tmp_path / "repo")
    import conformance.suite.runner as runner

    monkeypatch.setattr(runner, "default_cassette_root", lambda: None)  # only ./cassettes: 4 annotations
    _, out = _conform(capsys, crashy, "--cassettes", "cassettes", "--no-samples", "--select", "TC101", "-o", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    local = [r for r in results if "local_text.yaml#" in r["message"]["text"]]
    assert local and len(local) == len(results)
    for r in local:
        physical = r["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == "cassettes/openai-chat/local_text.yaml"
        index = int(r["properties"]["jsonPointer"].rsplit("/", 1)[1])
        assert physical["region"]["startLine"] == starts[index]
    _, out = _conform(capsys, crashy, "--cassettes", "cassettes", "--no-samples", "--select", "TC101", "-o", "github")
    annotations = [line for line in out.splitlines() if "local_text.yaml#2:" in line]
    assert annotations and annotations[0].startswith(
        f"::error file=cassettes/openai-chat/local_text.yaml,line={starts[2]},"
    )


def test_interaction_lines_follow_the_top_level_sequence_only():
    from conformance.suite.cassettes import check_yaml_bounds

    text = (
        "version: 1\n"
        "meta: {interactions: [a, b]}\n"  # a nested `interactions` is not the cassette's
        "interactions:\n"
        "  - request: {uri: 'x', interactions: [1]}\n"
        "    response: {}\n"
        "  -\n"
        "    request: {}\n"
        "  - &again {request: {}}\n"
        "  - *again\n"
    )
    assert check_yaml_bounds(text) == [4, 7, 8, 9]  # where each item's node starts
    assert check_yaml_bounds("- interactions: [1]\n- b\n") == [
        1,
        2,
    ]  # a top-level sequence is the interactions (php-vcr)


def test_the_checks_package_exports_only_what_something_imports_from_it() -> None:
    """`suite/checks/__init__.py` re-exports only names the code, the tests or the docs read
    from the package (`checks.Env`, `from conformance.suite.checks import HISTORY_IGNORE`);
    every other helper is imported from its module. Failed before: 15 of the 24 names kept
    "for code written against the former suite/checks.py" were read by nothing."""
    import re

    used: set[str] = set()
    attribute = re.compile(r"\bchecks\.([A-Za-z_]\w*)")
    imported = re.compile(r"from (?:conformance\.suite|\.\.?)\.?checks import \(?([^)\n]+)")
    sources = [*(ROOT / "conformance").rglob("*.py"), *(ROOT / "tests").rglob("*.py"), *(ROOT / "docs").glob("*.md")]
    for path in sources:
        if path == ROOT / "conformance" / "suite" / "checks" / "__init__.py":
            continue
        text = path.read_text(encoding="utf-8")
        used.update(attribute.findall(text))
        for names in imported.findall(text):
            used.update(n.split(" as ")[0].strip() for n in names.split(","))
    assert set(checks.__all__) - used == set()


def test_samples_and_no_samples_together_are_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # an outside author passed both and got a run with no samples, said only in the summary
    rc = main(["conform", "anthropic", "--samples", str(tmp_path), "--no-samples", "--select", "TC101"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "contradict" in err and "--no-samples" in err


def test_an_adapter_whose_cassette_folders_exist_nowhere_is_told_why_its_checks_skip(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an outside author's exec child left `cassette_folders` out: the default, its own name,
    # matched no folder, 26 checks skipped and the report said only "cassette folders none"
    module = tmp_path / "mine.py"
    module.write_text(
        "from conformance.adapters.anthropic import AnthropicAdapter\n\n\n"
        "class Mine(AnthropicAdapter):\n"
        "    name = 'mine'\n"
        "    cassette_folders = ('no-such-folder',)\n",
        encoding="utf-8",
    )
    main(["conform", f"{module}:Mine", "--no-samples", "--select", "TC901"])
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("recordings:"))
    assert "mine asks for no-such-folder: no such folder" in line and "cassette_folders" in line, line
    main(["conform", f"{module}:Mine", "--no-samples", "--select", "TC901", "-o", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["recordings"]["folders_not_found"] == {"mine": ["no-such-folder"]}
    # an adapter whose folders are found names none
    main(["conform", "anthropic", "--no-samples", "--select", "TC901", "-o", "json"])
    assert json.loads(capsys.readouterr().out)["recordings"]["folders_not_found"] == {}
