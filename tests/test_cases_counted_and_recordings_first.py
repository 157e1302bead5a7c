"""Recordings judged before adapters, every case counted, scripted cases from the records,
cassettes named by where they come from, public names kept as a contract (issue 43 items
3, 4, 5, 7 and 8, and the false failures it measured)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.adapters.errors import RateLimitError, error_for_status
from conformance.adapters.ollama import OllamaAdapter
from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.protocol import Message
from conformance.core.findings import Selection
from conformance.suite.runner import SuiteConfig, SuiteReport, run

ROOT = Path(__file__).resolve().parents[1]


def run_rules(adapter: Any, *rules: str, cassettes: str | None = None, **kw: Any) -> SuiteReport:
    return run(
        SuiteConfig.for_adapter(
            adapter,
            cassette_dirs=[ROOT / (cassettes or f"cassettes/{adapter.name}")],
            selection=Selection(select=rules),
            **kw,
        )
    )


# -- the false failures -------------------------------------------------------------------


def test_error_for_status_with_a_class_hint_keeps_the_class_retryable() -> None:
    """Contract §6.4: "Retryable classes: RATE_LIMIT, SERVER_ERROR, NETWORK", whichever way
    the class was found (the hint path skipped the class's default)."""
    err = error_for_status(429, "slow down", hint="rate_limit")
    assert isinstance(err, RateLimitError) and err.retryable is True and err.provider_status == 429
    assert error_for_status(400, "busy", hint="server_error").retryable is True
    assert error_for_status(503, "too long", hint="context_overflow").retryable is False
    assert error_for_status(429, "x", hint="nonsense").retryable is True  # an unknown hint: the status decides


class ChatErrorAsJson(OpenAIChatAdapter):
    """Honest, and written without knowing `tool_errors_in_band`: Chat Completions tool
    messages have no error flag, so an error result goes as the JSON object
    `{"error": <text>}` (pydantic-ai's documented wrapping for providers without an error
    channel). Nothing is dropped, so nothing is logged."""

    def tool_to_wire_message(self, message: Message) -> list[Any]:
        out = []
        for b in message.get("content", []):
            if b.get("type") == "tool_result" and b.get("is_error"):
                text = " ".join(x.get("text", "") for x in b["content"] if x.get("type") == "text")
                b = {**b, "content": [{"type": "text", "text": json.dumps({"error": text})}], "is_error": False}
            out.append(b)
        return super().tool_to_wire_message({**message, "content": out})


def test_tc902_a_tool_error_carried_in_band_owes_no_warn_line_declared_or_not() -> None:
    report = run_rules(ChatErrorAsJson(), "TC902", cassettes="cassettes/openai-chat")
    result = report.result("TC902", "openai-chat")
    assert result is not None and result.status == "pass", result
    case = next(o for o in report.outcomes if o.rule == "TC902")
    assert case.subject == "tool errors in band" and "asks a WARN only for a drop" in case.message


def test_tc801_a_bedrock_400_saying_input_tokens_exceeded_is_context_overflow() -> None:
    """Contract §6.2, 413 row: "Some providers use 400 with body indicating overflow; remap."
    The shipped record's wording missed Bedrock's "Input Tokens Exceeded"."""
    from conformance.adapters.bedrock import BedrockAdapter
    from conformance.adapters.errors import ContextOverflowError
    from conformance.suite.checks.errors import expected_class
    from conformance.wire.bedrock import BEDROCK_CONVERSE

    headers = {"x-amzn-errortype": ["ValidationException:http://internal.amazon.com/coral/com.amazon.coral.validate/"]}
    body = {"message": "Input Tokens Exceeded"}
    assert expected_class(BEDROCK_CONVERSE, 400, body, headers) == "context_overflow"
    assert expected_class(BEDROCK_CONVERSE, 400, {"message": "Malformed input request"}, headers) == "invalid_request"
    err = BedrockAdapter().classify_error(400, body, headers)
    assert isinstance(err, ContextOverflowError) and err.retryable is False


def _bedrock_cassette(tmp_path: Path, request: dict[str, Any], input_tokens: int) -> Path:
    """One recorded (no x-turnspec-synthetic header) Converse call answering JSON text."""
    response = {
        "output": {"message": {"role": "assistant", "content": [{"text": '{"city": "Paris"}'}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": input_tokens, "outputTokens": 9, "totalTokens": input_tokens + 9},
        "metrics": {"latencyMs": 300},
    }
    uri = "https://bedrock-runtime.us-east-1.amazonaws.com/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse"
    interaction = {
        "request": {"body": json.dumps(request), "headers": {}, "method": "POST", "uri": uri},
        "response": {
            "body": {"string": json.dumps(response)},
            "headers": {"content-type": ["application/json"]},
            "status": {"code": 200, "message": "OK"},
        },
    }
    folder = tmp_path / "bedrock"
    folder.mkdir(parents=True)
    (folder / "structured.yaml").write_text(json.dumps({"interactions": [interaction], "version": 1}))
    return folder


def test_tc701_bedrock_structured_output_is_out_of_band(tmp_path: Path) -> None:
    """Bedrock: "For Converse APIs, use the `outputConfig.textFormat` request field" (Bedrock's
    structured-output guide): the tokens the service adds for it reach no input of
    `estimate_input_tokens` (contract §3.1), so TC701 reports the case, never fails it."""
    from conformance.adapters.bedrock import BedrockAdapter

    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    plain = {"messages": [{"role": "user", "content": [{"text": "Capital of France?"}]}]}
    structured = {
        **plain,
        "outputConfig": {
            "textFormat": {
                "type": "json_schema",
                "structure": {"jsonSchema": {"schema": json.dumps(schema), "name": "capital"}},
            }
        },
    }
    report = run(
        SuiteConfig.for_adapter(
            BedrockAdapter(),
            cassette_dirs=[_bedrock_cassette(tmp_path / "a", structured, 400)],
            selection=Selection(select=("TC701",)),
        )
    )
    result = report.result("TC701", "bedrock")
    assert result is not None and result.status == "skip", result
    assert any(
        "out of band" in r and "structured output at /outputConfig/textFormat/structure/jsonSchema/schema" in r
        for r in result.skip_reasons
    ), result.skip_reasons
    # the same gap without the setting is the estimate's own
    report = run(
        SuiteConfig.for_adapter(
            BedrockAdapter(),
            cassette_dirs=[_bedrock_cassette(tmp_path / "b", plain, 400)],
            selection=Selection(select=("TC701",)),
        )
    )
    assert report.result("TC701", "bedrock").status == "fail"  # type: ignore[union-attr]


# -- item 4: every case counted and visible -----------------------------------------------


def _cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    from conformance.cli import main

    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_the_summary_counts_cases_as_well_as_checks(capsys: Any, monkeypatch: Any) -> None:
    """With the API's request schema missing every TC104 case is skipped: the summary must
    say so (it read `1 passed, 0 failed, 0 skipped` either way)."""
    import conformance.wire.schemas as wire_schemas

    args = ("conform", "openai-chat", "--no-samples", "--select", "TC104")
    rc, out, _ = _cli(capsys, *args, "-o", "json")
    summary = json.loads(out)["summary"]
    ran = summary["cases_run"]
    assert rc == 0 and ran > 5 and summary["cases_skipped"] == 0 and summary["checks"] == 1
    rc, out, _ = _cli(capsys, *args)
    assert out.splitlines()[-1].startswith(f"OK: 1 checks: 1 passed, 0 failed, 0 skipped; {ran} cases, 0 skipped over ")

    real = wire_schemas.validator
    monkeypatch.setattr(wire_schemas, "validator", lambda api, kind: None if kind == "request" else real(api, kind))
    rc, out, _ = _cli(capsys, *args)
    last = out.splitlines()[-1]
    # every case skipped: nothing of the adapter was checked, and the line says it
    assert last.startswith(f"NOTHING CHECKED: 1 checks: 0 passed, 0 failed, 1 skipped; {ran} cases, {ran} skipped"), (
        last
    )


def test_the_text_report_says_how_many_reasons_it_left_out(capsys: Any) -> None:
    from conformance.adapters.ollama import OllamaAdapter

    class Crashes(OllamaAdapter):
        def from_wire_response(self, response: Any, request_context: Any) -> Any:
            raise RuntimeError("planted")

    report = run(
        SuiteConfig.for_adapter(
            Crashes(), cassette_dirs=[ROOT / "cassettes/ollama"], peers=False, selection=Selection(select=("TC101",))
        )
    )
    from conformance.suite.report import to_text

    r = report.result("TC101", "ollama")
    assert r is not None and r.failed > 10
    text = to_text(report)
    listed = [line for line in text.splitlines() if line.startswith("      - ")]
    assert len(listed) == 10
    assert f"      ... and {r.failed - 10} more (-o json lists every case)" in text.splitlines()


def test_verbose_and_the_ci_outputs_list_skipped_cases_with_their_reasons(capsys: Any) -> None:
    args = ("conform", "bedrock", "--no-samples", "--select", "TC904")
    rc, out, _ = _cli(capsys, *args, "-v")
    assert rc == 0
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  TC904 pass"))
    assert lines[at + 1].startswith("      skipped (") and lines[at + 2].startswith("      - ")
    rc, out, _ = _cli(capsys, *args, "-o", "junit")
    assert "case(s) skipped:" in out
    rc, out, _ = _cli(capsys, *args, "-o", "sarif")
    results = json.loads(out)["runs"][0]["results"]
    notes = [r for r in results if r["level"] == "note"]
    assert notes and all(r["ruleId"] == "TC904" for r in notes)
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".yaml") for r in notes)


def test_strict_verdict_agrees_with_its_exit_code_which_means_findings(
    tmp_path: Path, capsys: Any, monkeypatch: Any
) -> None:
    """A capability declared true no case exercised fails TC002 under --strict: exit 1 and a
    FAIL line (it printed OK and exited 2, a usage error's code)."""
    import conformance.suite.runner as runner

    (tmp_path / "anthropic").mkdir()
    (tmp_path / "anthropic" / "image.yaml").write_bytes((ROOT / "cassettes/anthropic/image.yaml").read_bytes())
    monkeypatch.setattr(runner, "default_cassette_root", lambda: None)
    args = ("conform", "anthropic", "--cassettes", str(tmp_path), "--no-samples", "--select", "TC002", "--strict")
    rc, out, err = _cli(capsys, *args)
    assert rc == 1 and out.splitlines()[-1].startswith("FAIL: "), out
    assert "TC002 FAIL" in out and "supports_prompt_caching: declared true, but no case exercised it" in out
    assert "--strict" in err


def test_select_tc002_alone_judges_the_declarations(capsys: Any) -> None:
    """TC002 counts the cases of the rules that exercise each capability: `--select TC002`
    alone runs them (reporting only TC002), never "OK" over no case."""
    rc, out, _ = _cli(capsys, "conform", "bedrock", "--no-samples", "--select", "TC002", "-o", "json")
    report = json.loads(out)
    gate = next(r for r in report["results"] if r["rule"] == "TC002")
    assert rc == 0 and gate["status"] == "pass" and gate["cases_run"] == 8, gate
    assert {r["rule"] for r in report["results"]} == {"TC002"}


def test_a_selection_that_runs_no_case_does_not_say_ok(capsys: Any) -> None:
    rc, out, _ = _cli(capsys, "conform", "openai-chat", "--no-samples", "--select", "TC610")
    assert rc == 0 and out.splitlines()[-1].startswith("NOTHING CHECKED: ")
    assert "no case of an adapter ran" in out
    rc, _, _ = _cli(capsys, "conform", "openai-chat", "--no-samples", "--select", "TC610", "--fail-on-skip")
    assert rc == 1


class UnknownApi(OpenAIChatAdapter):
    name = "unknown-api"
    wire_api = "openai-chat-completion"  # a typo: no record has this name


def test_an_unknown_wire_api_fails_tc001_naming_the_registered_records() -> None:
    report = run_rules(UnknownApi(), "TC001", "TC104", cassettes="cassettes/openai-chat")
    r = report.result("TC001", "unknown-api")
    assert r is not None and r.status == "fail", r
    assert "'openai-chat-completion' names no registered WireApi record" in r.reasons[0]
    assert "openai-chat-completions" in r.reasons[0] and "bedrock-converse" in r.reasons[0]
    assert report.exit_code == 1


# -- item 8: public names are a contract ---------------------------------------------------


def test_a_record_name_of_an_earlier_release_still_names_its_record(capsys: Any) -> None:
    """An adapter written when the Ollama record was `ollama-native` (renamed `ollama-chat`):
    its record is found (with a DeprecationWarning naming the new name), so the checks are
    those of the record, not the exact comparisons of no record (TC302, TC303, TC405, TC802
    failed it falsely, 16 checks skipped)."""
    import warnings

    from conformance.wire import registry

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.get("ollama-native") is registry.get("ollama-chat")
    assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [
        "the wire API 'ollama-native' was renamed 'ollama-chat': declare wire_api = 'ollama-chat'"
    ]
    report = run_rules(
        EarlierOllamaAdapter(), "TC001", "TC104", "TC302", "TC303", "TC405", "TC802", cassettes="cassettes/ollama"
    )
    got = {r.rule: r.status for r in report.results if r.adapter == "earlier-ollama"}
    assert got == dict.fromkeys(("TC001", "TC104", "TC302", "TC303", "TC405", "TC802"), "pass"), report.failed
    tc001 = next(o for o in report.outcomes if o.rule == "TC001")
    assert "wire_api 'ollama-native' is the former name of 'ollama-chat'" in tc001.message
    rc, _, err = _cli(
        capsys,
        "conform",
        f"{__file__}:EarlierOllamaAdapter",
        "--cassettes",
        str(ROOT / "cassettes/ollama"),
        "--no-samples",
        "--select",
        "TC001",
    )
    assert rc == 0 and "wire_api 'ollama-native' was renamed 'ollama-chat'" in err


class EarlierOllamaAdapter(OllamaAdapter):
    """Written when the Ollama record was `ollama-native` (an earlier release's name)."""

    name = "earlier-ollama"
    wire_api = "ollama-native"


def test_a_third_party_record_under_a_shipped_name_is_a_choice_not_a_crash(monkeypatch: Any) -> None:
    """A package that registered its own `bedrock-converse` before this project shipped one
    must still import: the shipped record is kept with a warning saying how to choose theirs,
    and `replace=True` chooses theirs, with a warning naming the record it replaces."""
    import dataclasses
    import warnings

    import pytest

    from conformance.wire import registry
    from conformance.wire.bedrock import BEDROCK_CONVERSE

    monkeypatch.setattr(registry, "APIS", registry.APIS)
    theirs = dataclasses.replace(BEDROCK_CONVERSE, title="their Converse record")
    with pytest.warns(registry.ReplacedRecordWarning, match="'bedrock-converse' this project ships.*replace=True"):
        kept = registry.register(theirs)
    assert kept is BEDROCK_CONVERSE and registry.get("bedrock-converse") is BEDROCK_CONVERSE
    with pytest.warns(registry.ReplacedRecordWarning, match="is replaced"):
        assert registry.register(theirs, replace=True) is theirs
    assert registry.get("bedrock-converse") is theirs
    assert [a.name for a in registry.APIS].count("bedrock-converse") == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert registry.register(theirs) is theirs  # the same record again: a no-op, no warning


# -- item 7: cassettes are named by where they come from ----------------------------------


class ThirdPartyOllama(OllamaAdapter):
    """A third party's adapter that happens to be named like the shipped one."""

    name = "ollama"


def test_an_adapter_named_like_a_shipped_one_gets_only_its_own_recordings(tmp_path: Path, monkeypatch: Any) -> None:
    """`ollama` by coincidence of names got turnspec's `cassettes/ollama/` as well as its own,
    and `tools.yaml#0` appeared twice in one report with no folder to tell them apart."""
    mine = tmp_path / "cassettes" / "ollama"
    mine.mkdir(parents=True)
    (mine / "tools.yaml").write_bytes((ROOT / "cassettes/ollama/tools.yaml").read_bytes())
    monkeypatch.chdir(tmp_path)
    from conformance.suite.runner import local_cassette_root

    local = local_cassette_root()
    assert local is not None
    theirs = SuiteConfig.for_refs([f"{__file__}:ThirdPartyOllama"], samples=None, peers=False, roots=[local])
    assert [d.as_posix() for d in theirs.subjects[0].cassette_dirs] == ["cassettes/ollama"]
    ours = SuiteConfig.for_refs(["ollama"], samples=None, peers=False, roots=[local])
    assert sorted(d.name for d in ours.subjects[0].cassette_dirs) == ["ollama", "ollama"]  # the project's, and ./
    report = run(replace_selection(ours, ("TC101",)))
    subjects = [o.subject for o in report.outcomes if o.rule == "TC101"]
    assert "cassettes/ollama/tools.yaml#0" in subjects and "turnspec/ollama/tools.yaml#0" in subjects
    assert len(subjects) == len(set(subjects)), "a case label appears twice"


def replace_selection(config: SuiteConfig, rules: tuple[str, ...]) -> SuiteConfig:
    config.selection = Selection(select=rules)
    return config


class NoRecordOllama(OllamaAdapter):
    name = "no-record-ollama"
    wire_api = "ollama-v0"  # no record has this name


def test_a_missing_record_never_makes_the_comparisons_stricter() -> None:
    """With no record of the adapter's own, the recordings are judged by their own record
    (or not at all): ids an adapter minted where the API issued none are not held as
    provider ids (TC302), thinking is not required back on a wire no record describes (TC405).
    TC001 fails the missing record itself."""
    rules = ("TC001", "TC302", "TC303", "TC405", "TC606", "TC607", "TC802")
    report = run_rules(NoRecordOllama(), *rules, cassettes="cassettes/ollama")
    got = {r.rule: r.status for r in report.results}
    assert got == {"TC001": "fail", **dict.fromkeys(rules[1:], "pass")}, report.failed
    tc405 = report.result("TC405", "no-record-ollama")
    assert tc405 is not None and any("says whether thinking must go back" in r for r in tc405.skip_reasons)


# -- item 3: recordings are judged before adapters -----------------------------------------


def _damaged_chat_cassettes(tmp_path: Path) -> Path:
    """turnspec's Chat Completions text.yaml with three recordings damaged: #0's body cut (no
    JSON), #2's finish_reason a number (off response.json), #3's second chunk with `choices`
    a string (off stream-event.json)."""
    import yaml

    data = yaml.safe_load((ROOT / "cassettes/openai-chat/text.yaml").read_text(encoding="utf-8"))
    items = data["interactions"]
    body0 = items[0]["response"]["body"]["string"]
    items[0]["response"]["body"]["string"] = body0[: len(body0) // 2]
    reply = json.loads(items[2]["response"]["body"]["string"])
    reply["choices"][0]["finish_reason"] = 42
    items[2]["response"]["body"]["string"] = json.dumps(reply)
    lines = items[3]["response"]["body"]["string"].split("\n\n")
    chunk = json.loads(lines[1].removeprefix("data: "))
    chunk["choices"] = "oops"
    lines[1] = "data: " + json.dumps(chunk)
    items[3]["response"]["body"]["string"] = "\n\n".join(lines)
    folder = tmp_path / "openai-chat"
    folder.mkdir()
    (folder / "text.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return folder


def test_a_damaged_recording_is_reported_once_as_the_recordings_and_replayed_to_no_adapter(tmp_path: Path) -> None:
    folder = _damaged_chat_cassettes(tmp_path)
    rules = ("TC800", "TC101", "TC103", "TC601", "TC605", "TC606", "TC903", "TC904", "TC802")
    report = run(
        SuiteConfig.for_adapter(
            OpenAIChatAdapter(), cassette_dirs=[folder], selection=Selection(select=rules), peers=False
        )
    )
    tc800 = [o for o in report.outcomes if o.rule == "TC800" and o.status == "fail"]
    by = {o.subject.rsplit("/", 1)[-1]: o.message for o in tc800}
    assert sorted(by) == ["text.yaml#0", "text.yaml#2", "text.yaml#3"], by
    assert "the recorded response body is not JSON" in by["text.yaml#0"]
    assert "recorded response is off its API's wire schema at /choices/0/finish_reason" in by["text.yaml#2"]
    assert "recorded stream event 1" in by["text.yaml#3"] and "at /choices" in by["text.yaml#3"]
    assert all("not replayed to any adapter" in m for m in by.values())
    # the adapter is judged on the rest and failed for none of it
    assert [r for r in report.failed if r.adapter == "openai-chat"] == []
    judged = {o.subject.split(" ")[0] for o in report.outcomes if o.adapter == "openai-chat"}
    assert not {s for s in judged if s.endswith(("text.yaml#0", "text.yaml#2", "text.yaml#3"))}, judged
    # located for CI at the cassette and the interaction's line
    assert all(report.locations.get(("(cassettes)", o.subject)) for o in tc800)
    assert report.exit_code == 1  # the recording is a finding: fix or re-record it


# -- item 5: scripted cases for what recordings rarely hold --------------------------------


def test_a_stop_reason_no_recording_carries_is_judged_in_a_scripted_stream() -> None:
    """No Bedrock cassette records `model_context_window_exceeded`; the record maps it to
    max_tokens, so an adapter reading it as end_turn fails TC903 on a scripted stream (it
    passed), while the reference adapter passes every scripted stop reason."""
    import mutants

    assert "model_context_window_exceeded" not in "".join(
        p.read_text(encoding="utf-8", errors="replace") for p in (ROOT / "cassettes/bedrock").glob("*.yaml")
    )
    bad = run_rules(mutants.BedrockContextWindowAsEndTurn(), "TC903", cassettes="cassettes/bedrock")
    r = bad.result("TC903", "bedrock")
    assert r is not None and r.status == "fail", r
    assert r.reasons == [
        next(x for x in r.reasons if x.startswith("scripted stream stop reason 'model_context_window_exceeded'"))
    ]
    assert "streamed stop_reason 'end_turn', recorded 'model_context_window_exceeded' = 'max_tokens'" in r.reasons[0]

    from conformance.adapters.bedrock import BedrockAdapter

    good = run_rules(BedrockAdapter(), "TC903", "TC801", "TC904", cassettes="cassettes/bedrock")
    scripted = [o for o in good.outcomes if o.subject.startswith("scripted")]
    ran = {(o.rule, o.status) for o in scripted}
    assert ("TC903", "pass") in ran and ("TC801", "pass") in ran and ("TC904", "pass") in ran
    assert not [o for o in scripted if o.status == "fail"]


def test_an_error_class_no_recording_carries_is_judged_in_a_scripted_answer() -> None:
    """No Bedrock cassette records a ModelNotReadyException (the record: rate_limit)."""
    import mutants

    report = run_rules(mutants.BedrockModelNotReadyAsServerError(), "TC801", cassettes="cassettes/bedrock")
    r = report.result("TC801", "bedrock")
    assert r is not None and r.status == "fail" and len(r.reasons) == 1, r
    assert r.reasons[0].startswith("scripted error signal 'ModelNotReadyException'")
    assert "error_class 'server_error', want 'rate_limit'" in r.reasons[0]


def test_scripted_answers_are_valid_recordings_of_their_api() -> None:
    """A scripted body is one TC800 passes (the API's wire schemas accept it, its framing
    decodes it, both CRCs of a rewritten event-stream frame hold) and differs from the
    recording in the one value scripted: an honest adapter reads it as it reads a recording."""
    from conformance.suite.checks import scripted
    from conformance.suite.checks.cassette_apis import recording_problem
    from conformance.suite.checks.streams import wire_values
    from conformance.suite.runner import load_own
    from conformance.wire.bedrock import BEDROCK_CONVERSE

    recorded = [it for c in load_own([ROOT / "cassettes/bedrock"]) for it in c.interactions]
    stream = next(it for it in recorded if scripted._stop_template(BEDROCK_CONVERSE, it, True))
    spots, _ = scripted._stop_template(BEDROCK_CONVERSE, stream, True) or ([], "")
    it = next(
        x for spot in spots if (x := scripted._with_stop(BEDROCK_CONVERSE, stream, spot, "content_filtered", "t"))
    )
    assert recording_problem(it) is None
    before, after = wire_values(stream) or [], wire_values(it) or []
    changed = [(x, y) for x, y in zip(before, after, strict=True) if x != y]
    assert changed == [
        ({"messageStop": {"stopReason": "end_turn"}}, {"messageStop": {"stopReason": "content_filtered"}})
    ]
