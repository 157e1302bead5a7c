"""Checks judge honest-but-unusual adapter output; none raises out of `turnspec conform`.

The runner does not catch what a check function raises (`suite/runner.py: run`), so one
exception stops the whole run. Each test here gives an adapter a shape the contract or the
schemas allow, or that another check judges, and asks for verdicts, not a traceback."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters.anthropic import AnthropicAdapter
from conformance.adapters.gemini import GeminiAdapter
from conformance.adapters.protocol import Message, RequestContext, StreamEvent, WireResponse
from conformance.core.findings import Selection
from conformance.suite import checks
from conformance.suite import rules as R
from conformance.suite.outcome import Outcome
from conformance.suite.runner import SuiteConfig, SuiteReport, run

ROOT = Path(__file__).resolve().parents[1]


def _run(adapter: AnthropicAdapter, *rules: str) -> SuiteReport:
    return run(
        SuiteConfig.for_adapter(
            adapter,
            cassette_dirs=[ROOT / "cassettes" / "anthropic"],
            samples=None,
            selection=Selection(select=rules),
        )
    )


def _status(report: SuiteReport, rule: str, name: str) -> str | None:
    result = report.result(rule, name)
    return None if result is None else result.status


class NullCacheCounts(AnthropicAdapter):
    """Streams usage whose cache counts are null (TokenUsage's defaults, written as null)."""

    def stream_response(self, chunks: Iterable[bytes | str], request_context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, request_context):
            if e.get("type") == "message_complete" and isinstance(e.get("usage"), dict):
                e = {**e, "usage": {**e["usage"], "cached_input_tokens": None, "cache_creation_input_tokens": None}}
            yield e


def test_null_usage_counts_in_a_stream_are_judged_not_a_crash() -> None:
    """Failed before: the message a harness stores after the stream was built with
    `int(None)`, a TypeError out of TC101's check that stopped the run."""
    report = _run(NullCacheCounts(), "TC101", "TC103")
    assert _status(report, "TC103", "anthropic") == "fail"  # null is no integer (token-usage.json)
    result = report.result("TC103", "anthropic")
    assert result is not None and any("message_complete" in why for why in result.reasons), result.reasons


@dataclasses.dataclass
class TokenUsage:
    """Contract §3.3 / §7.1 write TokenUsage as a class."""

    input_tokens: int
    output_tokens: int
    cached_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


def _as_object(usage: Any) -> Any:
    if not isinstance(usage, dict):
        return usage
    return TokenUsage(**{f.name: usage.get(f.name, 0) for f in dataclasses.fields(TokenUsage)})


class UsageObjects(AnthropicAdapter):
    """Reports usage as a TokenUsage object, in parsed messages and in message_complete."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        msg = super().from_wire_response(response, request_context)
        meta: Any = msg["metadata"]
        if "usage" in meta:
            meta["usage"] = _as_object(meta["usage"])
        return msg

    def stream_response(self, chunks: Iterable[bytes | str], request_context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, request_context):
            if e.get("type") == "message_complete":
                e = {**e, "usage": _as_object(e.get("usage"))}
            yield e


def test_usage_objects_are_judged_not_a_crash() -> None:
    """Failed before: the schema validators raised on the object (TC101, TC103), TC606 and
    TC904 called `.get` on it. The counts are right, so the checks comparing counts pass;
    the messages and events are no JSON data, which TC101 and TC103 fail, located."""
    report = _run(UsageObjects(), "TC101", "TC103", "TC606", "TC904", "TC503", "TC906")
    assert _status(report, "TC904", "anthropic") == "pass"
    assert _status(report, "TC606", "anthropic") == "pass"
    for rule in ("TC101", "TC103"):
        result = report.result(rule, "anthropic")
        assert result is not None and result.status == "fail", (rule, result)
        assert any("/usage (a TokenUsage): not JSON data" in why for why in result.reasons), result.reasons


def test_non_ascii_provider_tool_ids_are_restored_not_misread(tmp_path: Path) -> None:
    """A provider id with non-ASCII characters (Gemini's `functionCall.id` is any string) goes
    back unchanged. Failed before: TC302 looked for the id's ASCII-escaped JSON spelling in
    bodies serialized without escapes, and reported the id as lost."""
    for f in (ROOT / "cassettes" / "gemini").glob("tools.yaml"):
        text = f.read_text(encoding="utf-8").replace("fc_7b0d2f61", "fc_é工具_7b0d")
        (tmp_path / f.name).write_text(text, encoding="utf-8")
    adapter = GeminiAdapter()
    report = run(
        SuiteConfig.for_adapter(
            adapter, cassette_dirs=[tmp_path], samples=None, selection=Selection(select=("TC302", "TC305"))
        )
    )
    result = report.result("TC302", adapter.name)
    assert result is not None and result.status == "pass", result
    assert result.passed >= 1


class NoEventIds(AnthropicAdapter):
    """Streams events without `message_id` (TC103 judges the events' shape)."""

    def stream_response(self, chunks: Iterable[bytes | str], request_context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, request_context):
            yield {k: v for k, v in e.items() if k != "message_id"}


def test_events_without_message_ids_are_judged_not_a_crash() -> None:
    """Failed before: TC607 read `events[0]["message_id"]`, a KeyError out of the check."""
    report = _run(NoEventIds(), "TC103", "TC607")
    assert _status(report, "TC607", "anthropic") == "pass"  # the same events however the bytes are cut
    assert _status(report, "TC103", "anthropic") == "fail"


def _tuples(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


class TupleBodies(AnthropicAdapter):
    """Renders its arrays as tuples (`AdapterOptions.stop_sequences` is one): json.dumps
    writes them as the same JSON arrays, so the provider receives the same request."""

    def to_wire(self, messages: Any, tools: Any, options: Any) -> Any:
        wire = super().to_wire(messages, tools, options)
        return dataclasses.replace(wire, body=_tuples(wire.body))


def test_tuples_in_a_rendered_body_are_the_json_arrays_they_are_sent_as() -> None:
    """Failed before: the checks compared and probed the Python containers, so a tuple was
    no list (TC802 saw every array differ, the record's probes found no images, options or
    tool ids) and a request the provider receives byte for byte alike failed seven checks."""
    rules = ("TC105", "TC405", "TC501", "TC503", "TC802", "TC901", "TC902")
    report = _run(TupleBodies(), *rules)
    assert {r: _status(report, r, "anthropic") for r in rules} == dict.fromkeys(rules, "pass")


class ContentlessReplies(AnthropicAdapter):
    """A defective parse: `content` null. TC101 judges it; the checks that only use a parse
    skip or fail their case with that reason."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        msg: Any = super().from_wire_response(response, request_context)
        msg["content"] = None
        return msg  # type: ignore[no-any-return]


def test_a_parse_that_is_no_message_is_judged_by_tc101_not_a_crash_of_other_checks() -> None:
    """Failed before: TC302, TC405, TC606 and others indexed `msg["content"]` outside their
    try blocks, and the exception stopped the run."""
    rules = ("TC101", "TC302", "TC405", "TC503", "TC606", "TC904", "TC903", "TC907", "TC406", "TC802")
    report = _run(ContentlessReplies(), *rules)
    tc101 = report.result("TC101", "anthropic")
    assert tc101 is not None and tc101.status == "fail"
    assert any("/0/content" in why for why in tc101.reasons), tc101.reasons
    assert not [o for o in report.outcomes if o.subject.endswith("(stopped)")]


def test_a_check_that_raises_is_one_failing_case_and_the_run_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's last resort. Failed before: the exception left `run` and no report was
    made (`turnspec conform` stopped with a traceback)."""

    def broken(env: checks.Env) -> Iterator[Outcome]:
        yield Outcome(R.STREAM_ORDER.id, env.subjects[0].name, "pass", "first")
        raise KeyError("content")

    monkeypatch.setattr(checks, "CHECKS", (checks.Check("broken", (R.STREAM_ORDER.id,), broken), *checks.CHECKS[:1]))
    report = _run(AnthropicAdapter(), "TC601", "TC001")
    assert _status(report, "TC001", "anthropic") == "pass"  # the next check ran
    result = report.result("TC601", "anthropic")
    assert result is not None and result.status == "fail", result
    assert result.reasons == [
        "broken (stopped): the check stopped on adapter output it could not read (crashed: KeyError: 'content'); "
        "its remaining cases were not run"
    ]


class DeltasWithoutIds(AnthropicAdapter):
    """Text deltas without `message_id` (stream-event.json requires it: TC103's to fail)."""

    def stream_response(self, chunks: Iterable[bytes | str], request_context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, request_context):
            yield {k: v for k, v in e.items() if k != "message_id" or e.get("type") != "text_delta"}


def test_an_event_without_a_message_id_is_tc103s_not_a_tc601_id_mismatch() -> None:
    """Failed before: TC601 counted the missing id as a second message id ("events carry
    different message_ids"), failing a check for another check's defect."""
    report = _run(DeltasWithoutIds(), "TC103", "TC601")
    assert _status(report, "TC103", "anthropic") == "fail"
    assert _status(report, "TC601", "anthropic") == "pass"


class IdlessCalls(GeminiAdapter):
    """A defective parse: tool_use blocks without `id` (TC301 fails them)."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        msg: Any = super().from_wire_response(response, request_context)
        msg["content"] = [
            {k: v for k, v in b.items() if k != "id"} if b.get("type") == "tool_use" else b for b in msg["content"]
        ]
        return msg  # type: ignore[no-any-return]


def test_tool_calls_without_ids_fail_tc301_and_stop_no_other_check() -> None:
    """Failed before: TC405 and TC302 answered every parsed call by `u["id"]`, a KeyError out
    of the check."""
    rules = ("TC301", "TC302", "TC303", "TC405", "TC606")
    report = run(
        SuiteConfig.for_adapter(
            IdlessCalls(),
            cassette_dirs=[ROOT / "cassettes" / "gemini"],
            samples=None,
            selection=Selection(select=rules),
        )
    )
    assert _status(report, "TC301", "gemini") == "fail"
    assert not [o for o in report.outcomes if o.subject.endswith("(stopped)")]


class OddStreams(AnthropicAdapter):
    """A defective stream: a string among the events of one recording, a final_content that
    is an object in the others."""

    def stream_response(self, chunks: Iterable[bytes | str], request_context: RequestContext) -> Iterator[Any]:
        for e in super().stream_response(chunks, request_context):
            if e.get("type") == "message_complete":
                e = {**e, "final_content": {"text": "not a list"}}
            yield e


class StringEvents(AnthropicAdapter):
    def stream_response(self, chunks: Iterable[bytes | str], request_context: RequestContext) -> Iterator[Any]:
        for e in super().stream_response(chunks, request_context):
            if e.get("type") == "text_delta":
                yield "oops"
            yield e


def test_odd_stream_output_is_judged_not_a_crash() -> None:
    """Failed before: TC605 indexed a final_content object (`final[0]`) and several checks
    called `.get` on a string event; each exception stopped the run."""
    rules = ("TC101", "TC103", "TC601", "TC605", "TC606", "TC903", "TC503", "TC611")
    for adapter in (OddStreams(), StringEvents()):
        report = _run(adapter, *rules)
        assert not [o for o in report.outcomes if o.subject.endswith("(stopped)")], type(adapter).__name__
    tc605 = _run(OddStreams(), "TC605").result("TC605", "anthropic")
    assert tc605 is not None and tc605.status == "fail"
    assert any("final_content is a dict, not a list of blocks" in why for why in tc605.reasons), tc605.reasons
    tc101 = _run(StringEvents(), "TC101").result("TC101", "anthropic")
    assert tc101 is not None and tc101.status == "fail"
    assert any("stream_response gave event" in why and "a str, not an event" in why for why in tc101.reasons)
