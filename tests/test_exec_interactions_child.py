"""An outside author's exec child for Google's Gemini Interactions API
(tests/data/exec/interactions_child.py): POST /v1beta/interactions, the stream asked for by
`"stream": true` in the body, SSE events named by `event_type`. A standalone Python 3 script
on the standard library alone, run with `-I -S` (no site-packages: no turnspec to import even
by accident), written from docs/exec-protocol.md, `turnspec schema export --format exec`,
`turnspec wire show gemini-interactions`, `turnspec rule` and Google's documentation, never
the host's code, the record's module or another adapter.

turnspec had a record and cassettes for the API but no reference adapter: this child is the
proof that an outsider can gate one with turnspec today. It passes `turnspec exec smoke` and a
whole `turnspec conform exec:... --validate-protocol` as written (hello's `cassette_folders`
names `gemini-interactions`, since its name is none of turnspec's folders); a defect planted
with INTERACTIONS_CHILD_DEFECT fails the checks that exist for it, and only those.

What skips, and why (asserted below): TC610 (no thinking: `supports_thinking` is false), TC701
(the cassettes are hand-written, no token count of theirs judges an estimate), TC901
(`supports_images` is false), TC905 (the API reports usage on every stream: no field to ask
for it) and TC906 (every recording carries usage)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from outside_children import conform_child, results_of

from conformance.cli import main

ROOT = Path(__file__).resolve().parents[1]
CHILD = ROOT / "tests" / "data" / "exec" / "interactions_child.py"
COMMAND = shlex.join([sys.executable, "-I", "-S", str(CHILD)])
DEFECT_ENV = "INTERACTIONS_CHILD_DEFECT"


# the checks whose cases drive each operation and each sentence the author had to get right
EXERCISED = (
    "TC101",  # parse: routing, disjoint usage (cached taken out of total_input_tokens), status
    "TC102",  # read_request: every message with metadata, parallel calls as one assistant turn
    "TC109",  # POST /v1beta/interactions, the model in the body without `gemini:`, stream: true
    "TC403",  # system messages joined with a blank line into system_instruction
    "TC502",  # output_schema: option_dropped (supports_structured_output is false)
    "TC503",  # consecutive function_call steps read back as one turn of parallel calls
    "TC606",  # the streamed call is its twin's reply (same id gth23981)
    "TC607",
    "TC609",  # arguments_delta strings as the literal partial_json fragments
    "TC611",
    "TC801",  # API_KEY_INVALID before the status table; RetryInfo.retryDelay
    "TC802",  # a string `input` and an object `result` round-trip through provider_raw
    "TC903",
    "TC904",
    "TC907",
    "TC908",  # the model_output steps' text, parsed and streamed
    "TC909",  # the function_call steps' name and arguments, parsed and streamed
)

SKIPPED = {
    "TC610": "no case applies to this adapter",
    "TC701": "hand-written cassette",
    "TC901": "supports_images is false",
    "TC905": "reports usage on every stream",
    "TC906": "every recording carries usage",
}


def test_the_interactions_child_passes_smoke_and_a_whole_conform(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(DEFECT_ENV, raising=False)
    rc = main(["exec", "smoke", COMMAND])
    lines = capsys.readouterr().out.splitlines()
    ops = {x.split()[1]: x for x in lines if x.split()}
    assert set(ops) >= {"hello", "render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"}
    assert "interactions-child (gemini, gemini-interactions)" in ops["hello"], lines
    assert "POST /v1beta/interactions" in ops["render"], lines
    assert rc == 0 and all(x.startswith("ok") for x in lines), lines
    rc, report = conform_child(capsys, COMMAND)
    results = results_of(report)
    failed = {k: r["reasons"][:2] for k, r in results.items() if r["status"] == "fail"}
    assert rc == 0 and not failed, failed
    for rule in EXERCISED:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, (rule, results[rule])
    skipped = {k: r for k, r in results.items() if r["status"] == "skip"}
    assert set(skipped) == set(SKIPPED), sorted(skipped)
    for rule, words in SKIPPED.items():
        assert any(words in why for why in skipped[rule]["reasons"]), (rule, skipped[rule]["reasons"])
    assert report["summary"]["unexercised_capabilities"] == []


@pytest.mark.parametrize(
    ("defect", "fails", "rule", "words"),
    [
        # requires_action (and incomplete) read as end_turn: only a stream shows it, a parse's
        # status is `complete` either way
        ("status", {"TC903"}, "TC903", "streamed stop_reason 'end_turn', recorded 'requires_action' = 'tool_use'"),
        # output_tokens one more than total_output_tokens + total_thought_tokens
        ("usage", {"TC904"}, "TC904", "output_tokens: parsed 30, recorded 29"),
        # no model in the request body: off the documented shape, the endpoint's model, the round trip
        ("model", {"TC104", "TC109", "TC802"}, "TC109", "/model is None"),
        # the response's `model` ignored: the requested model reported as the one that served
        ("served", {"TC907"}, "TC907", "the response names 'gemini-3.5-flash' as the model that served the call"),
        # the reply's text upper-cased, parsed and streamed
        ("text", {"TC908"}, "TC908", "the recorded text 'AI learns patterns from data to make predictions.' is not"),
        # a reply's call renamed, parsed and streamed
        ("call", {"TC909"}, "TC909", "tool call 0 is named 'get_weather_renamed', the recording's 'get_weather'"),
        # the streamed arguments_delta strings held back and sent joined at step.stop
        ("fragments", {"TC609"}, "TC609", "1 partial_json fragments, provider sent 2"),
        # HTTP 429 classified as a server error
        ("error", {"TC801"}, "TC801", "HTTP 429: error_class 'server_error', want 'rate_limit'"),
    ],
    ids=["status", "usage", "model", "served", "text", "call", "fragments", "error"],
)
def test_a_defect_planted_in_the_interactions_child_fails_its_checks_and_only_those(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    defect: str,
    fails: set[str],
    rule: str,
    words: str,
) -> None:
    monkeypatch.setenv(DEFECT_ENV, defect)  # the host starts the child with its environment
    rc, report = conform_child(capsys, COMMAND)
    results = results_of(report)
    assert rc == 1 and {k for k, r in results.items() if r["status"] == "fail"} == fails, {
        k: r["reasons"][:1] for k, r in results.items() if r["status"] == "fail"
    }
    assert any(words in why for why in results[rule]["reasons"]), results[rule]["reasons"]


def test_the_protocol_page_says_what_the_interactions_author_learnt_from_failing_cases() -> None:
    """What the author met only as a failing case is on the page now: every read-back message
    carries `metadata` (TC102's TS020), a model turn's calls are one assistant message (TC503's
    parallel calls), several system messages join with a blank line (TC403), and which
    `provider` key a Gemini API's adapter names (the author guessed `google`)."""
    page = " ".join((ROOT / "docs" / "exec-protocol.md").read_text(encoding="utf-8").split())
    assert "Every message carries `metadata` (an object, `{}` for a user or system message" in page
    assert "TC503 renders two and wants them read back as one turn of two" in page
    assert "an adapter of the Gemini Interactions API is `gemini`, as the generateContent one is" in page
    assert 'several of them concatenated with a blank line (`"\\n\\n"`, contract §4.1.2), as TC403 reads' in page
