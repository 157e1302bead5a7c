"""The suite catches planted bugs: every mutant adapter fails its expected rule (kill rate 100%).

Every mutant runs on the project's own cassettes only (`conform --no-samples`, what a user who
installed turnspec has): nothing here reads ../shared."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from mutants import (
    CASSETTES,
    MUTANTS,
    GeminiMintedIdsShared,
    GeminiMintedResultsShifted,
    GeminiWireIdAltered,
    GeminiWireIdReminted,
)

from conformance.adapters import registry
from conformance.adapters.bedrock_anthropic import BedrockAnthropicAdapter
from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.openrouter import OpenRouterChatAdapter
from conformance.adapters.vertex_anthropic import VertexAnthropicAdapter
from conformance.core.findings import Selection
from conformance.suite.runner import SuiteConfig, SuiteReport, run

ROOT = Path(__file__).resolve().parents[1]
OPT_IN: dict[str, type] = {
    "openrouter": OpenRouterChatAdapter,
    "vertex-anthropic": VertexAnthropicAdapter,
    "bedrock-anthropic": BedrockAnthropicAdapter,
}
"""The opt-in adapters this project ships unregistered, by name."""


_CACHE: dict[type, SuiteReport] = {}


def run_mutant(cls: type, rule: str) -> SuiteReport:
    if cls in _CACHE:
        return _CACHE[cls]
    m = cls()
    report = run(
        SuiteConfig.for_adapter(
            m,
            cassette_dirs=[ROOT / CASSETTES.get(m.name, f"cassettes/{m.name}")],
            samples=None,
            selection=Selection(select=(rule,)),
        )
    )
    _CACHE[cls] = report
    return report


@pytest.mark.parametrize(("cls", "rule"), list(MUTANTS.items()), ids=[c.__name__ for c in MUTANTS])
def test_mutant_is_killed_by_expected_rule(cls, rule):
    report = run_mutant(cls, rule)
    result = report.result(rule, cls.name)
    assert result is not None and result.status == "fail", f"{cls.__name__} survived {rule}: {result}"
    assert result.reasons, "a failure must say why"
    # one reason per failing case (the runner keeps the first 50), each naming its case first
    assert len(result.reasons) == min(result.failed, 50), (result.failed, result.reasons)
    assert all(re.match(r"\S[^:]*: \S", why) for why in result.reasons), result.reasons


def test_the_mutants_cover_every_reference_api():
    """At least 30 mutants over every reference adapter's wire API. The kill rate is total
    when every case of test_mutant_is_killed_by_expected_rule passes (one case per mutant:
    a survivor fails its own case); running them all again here cost a worker minutes."""
    assert len(MUTANTS) >= 30 and len({c.wire_api for c in MUTANTS}) >= 3
    per_api = Counter(c.wire_api for c in MUTANTS)
    opt_in = {cls.wire_api for cls in OPT_IN.values()}
    reference_apis = opt_in | {registry.load(n).wire_api for n in registry.available()}
    assert all(per_api[api] >= 1 for api in reference_apis), per_api
    assert per_api["openai-responses"] >= 10 and per_api["gemini-generate-content"] >= 10, per_api


@pytest.mark.parametrize(
    "name",
    [
        "anthropic",
        "openai-chat",
        "openai-responses",
        "gemini",
        "ollama",
        "openrouter",
        "vertex-anthropic",
        "bedrock-anthropic",
        "bedrock",
        "cohere-chat",
        "their-bedrock-invoke",
    ],
)
def test_reference_adapters_pass_what_kills_mutants(name):
    """The same selections on the unmutated adapters pass (no rule fails everything)."""
    rules = sorted({r for c, r in MUTANTS.items() if c.name == name})
    if name == "cohere-chat":
        from third_party.cohere_adapter import CohereAdapter

        config = SuiteConfig.for_adapter(
            CohereAdapter(), cassette_dirs=[ROOT / CASSETTES[name]], selection=Selection(select=tuple(rules))
        )
    elif name == "their-bedrock-invoke":  # a third party's, of an API turnspec does not ship (issue 43)
        from mutants import TheirBedrockInvoke

        config = SuiteConfig.for_adapter(
            TheirBedrockInvoke(),
            cassette_dirs=[ROOT / CASSETTES[name]],
            samples=None,
            selection=Selection(select=tuple(rules)),
        )
    elif name in OPT_IN:  # not registered: their own cassettes, as `conform module:attr` reads them
        config = SuiteConfig.for_adapter(
            OPT_IN[name](),
            cassette_dirs=[ROOT / f"cassettes/{name}"],
            samples=None,
            selection=Selection(select=tuple(rules)),
        )
    else:
        config = SuiteConfig.for_refs([name], samples=None, selection=Selection(select=tuple(rules)))
    report = run(config)
    assert {r.rule: r.status for r in report.results if r.adapter == name} == dict.fromkeys(rules, "pass")


def test_tc904_accepts_the_contracts_literal_usage_mapping():
    """Contract §7.2 maps OpenAI `prompt_tokens` to `input_tokens` (cached tokens inside);
    §7.1's cost formula wants disjoint buckets. The reference adapters keep them disjoint, and
    TC904 accepts an adapter that follows the contract's text instead, as long as it keeps to it."""
    from mutants import LiteralContractUsage  # the one non-defect in that module

    report = run(
        SuiteConfig.for_adapter(
            LiteralContractUsage(),
            cassette_dirs=[ROOT / "cassettes/openai-chat"],
            samples=None,
            selection=Selection(select=("TC904",)),
        )
    )
    result = report.result("TC904", "openai-chat")
    assert result is not None and result.status == "pass", result
    assert result.capabilities.get("supports_prompt_caching", 0) >= 1, "a case with cached tokens ran"


def test_minted_id_defects_fail_for_their_reason_quoting_the_contract():
    """Renaming minted ids is allowed, so the defects it could hide are planted: each fails
    its rule for the reason it is a defect, and the reason quotes the sentence it breaks."""
    want = {
        GeminiMintedIdsShared: ("TC303", "share id", "canonical §6.2"),
        GeminiMintedResultsShifted: ("TC302", "answers a different call than on the wire", "canonical §6.2"),
        GeminiWireIdReminted: ("TC303", "the wire issued this call's id", "contract §4.1.1"),
        GeminiWireIdAltered: ("TC302", "fc_7b0d2f61", "contract §4.1.1"),
    }
    for cls, (rule, why, cited) in want.items():
        result = run_mutant(cls, rule).result(rule, cls.name)
        assert result is not None and result.status == "fail", cls.__name__
        assert any(why in r and cited in r for r in result.reasons), (cls.__name__, result.reasons)


def test_estimates_are_held_to_counts_the_providers_published():
    """TC701 needs no third-party recording: the project's counted cassettes carry a request
    whose input tokens the provider counted and published (x-turnspec-usage-source), and the
    failing reason names that count and the contract sentence."""
    from mutants import EstimateZero, GeminiEstimateZero

    for cls, count in ((EstimateZero, "101"), (GeminiEstimateZero, "194")):
        result = run_mutant(cls, "TC701").result("TC701", cls.name)
        assert result is not None and result.status == "fail", cls.__name__
        why = result.reasons[0]
        # the case label carries its cassette folder (issue 43 item 7)
        assert re.match(
            r"turnspec/[a-z-]+/counted\.yaml#0: estimate 0 vs " + count + " counted by the provider, https://", why
        ), why
        assert "contract §3.1" in why and "Accuracy: ±10% is acceptable" in why, why


def test_tc701_measures_estimates_against_the_recording_not_the_adapters_own_parse():
    """TC701's yardstick is the usage the wire record reads in the recording. Failed before:
    it was the adapter's own parse, so an adapter that misread usage (TC904's defect) had
    its estimate judged against the wrong count: a right estimate failed, and an estimate
    as wrong as the parse passed."""
    from conformance.adapters.openai_chat import OpenAIChatAdapter

    class UsageTripled(OpenAIChatAdapter):
        def from_wire_response(self, response, request_context):  # type: ignore[no-untyped-def]
            msg = super().from_wire_response(response, request_context)
            usage = msg["metadata"].get("usage")
            if usage:
                usage["input_tokens"] *= 3
            return msg

    class EstimateTripled(OpenAIChatAdapter):
        def estimate_input_tokens(self, messages, tools):  # type: ignore[no-untyped-def]
            return 3 * super().estimate_input_tokens(messages, tools)

    def verdict(adapter: OpenAIChatAdapter) -> str | None:
        report = run(
            SuiteConfig.for_adapter(
                adapter,
                cassette_dirs=[ROOT / "cassettes" / "openai-chat"],
                samples=None,
                selection=Selection(select=("TC701",)),
            )
        )
        result = report.result("TC701", adapter.name)
        return None if result is None else result.status

    assert verdict(OpenAIChatAdapter()) == "pass"
    assert verdict(UsageTripled()) == "pass"  # the parse is TC904's to fail, not the estimate
    assert verdict(EstimateTripled()) == "fail"


def _tc503(adapter: OpenAIChatAdapter) -> SuiteReport:
    return run(
        SuiteConfig.for_adapter(
            adapter,
            cassette_dirs=[ROOT / "cassettes" / "openai-chat"],
            samples=None,
            selection=Selection(select=("TC503",)),
        )
    )


def test_tc503_counts_parallel_calls_in_the_recording_not_in_the_adapters_own_parse():
    """TC503's recorded parallel-call cases count the calls in the recording (the record's
    `response_tool_calls` probe). Failed before: they counted the parse under test, so an
    adapter that lost one of two recorded calls was never judged on it (TC503 passed), and
    one that split every call in two was credited with parallel replies the recordings
    do not hold."""

    class DropsSecondCall(OpenAIChatAdapter):
        def from_wire_response(self, response, request_context):  # type: ignore[no-untyped-def]
            msg = super().from_wire_response(response, request_context)
            calls = [i for i, b in enumerate(msg["content"]) if b.get("type") == "tool_use"]
            if len(calls) > 1:
                del msg["content"][calls[1]]
            return msg

    class SplitsEveryCall(OpenAIChatAdapter):
        def from_wire_response(self, response, request_context):  # type: ignore[no-untyped-def]
            msg = super().from_wire_response(response, request_context)
            out = []
            for b in msg["content"]:
                out.append(b)
                if b.get("type") == "tool_use":
                    out.append({**b, "id": b["id"][:-1] + ("0" if b["id"][-1] != "0" else "1")})
            msg["content"] = out
            return msg

    def parallel_cases(report: SuiteReport) -> list[str]:
        return sorted(o.subject for o in report.outcomes if o.rule == "TC503" and "calls in one reply" in o.subject)

    honest = _tc503(OpenAIChatAdapter())
    assert honest.result("TC503", "openai-chat").status == "pass"
    recorded = parallel_cases(honest)
    assert recorded, "the project's openai-chat cassettes hold a reply with two calls"
    dropped = _tc503(DropsSecondCall()).result("TC503", "openai-chat")
    assert dropped is not None and dropped.status == "fail", dropped
    assert any("the recording holds 2 tool calls in one reply" in why for why in dropped.reasons), dropped.reasons
    assert parallel_cases(_tc503(SplitsEveryCall())) == recorded


def test_tc609_holds_a_stream_to_the_tool_calls_the_recording_streamed():
    """TC609's yardstick is the recorded stream's tool-input fragments (the record's
    `stream_tool_fragments` probe). Failed before: the check ran only where the adapter itself
    streamed a tool_use_start, so an adapter that streamed none of the recorded calls passed."""

    class StreamsNoToolEvents(OpenAIChatAdapter):
        def stream_response(self, chunks, request_context):  # type: ignore[no-untyped-def]
            tool_events = ("tool_use_start", "tool_use_input_delta", "tool_use_end")
            for e in super().stream_response(chunks, request_context):
                if e.get("type") not in tool_events:
                    yield e

    def tc609(adapter: OpenAIChatAdapter) -> object:
        report = run(
            SuiteConfig.for_adapter(
                adapter,
                cassette_dirs=[ROOT / "cassettes" / "openai-chat"],
                samples=None,
                selection=Selection(select=("TC609",)),
            )
        )
        return report.result("TC609", adapter.name)

    honest = tc609(OpenAIChatAdapter())
    assert honest is not None and honest.status == "pass", honest
    silent = tc609(StreamsNoToolEvents())
    assert silent is not None and silent.status == "fail", silent
    assert any("tool calls streamed on the wire, 0 tool_use_start events" in why for why in silent.reasons)


def test_tc302_holds_a_parse_to_the_tool_calls_the_recording_holds():
    """TC302's yardstick is the recorded response's calls (the record's `response_tool_calls`
    probe). Failed before: a response was judged only when the adapter parsed a call out of
    it, so an adapter that dropped every recorded call had no TC302 case to fail."""

    class DropsToolCalls(OpenAIChatAdapter):
        def from_wire_response(self, response, request_context):  # type: ignore[no-untyped-def]
            msg = super().from_wire_response(response, request_context)
            msg["content"] = [b for b in msg["content"] if b.get("type") != "tool_use"] or [
                {"type": "text", "text": ""}
            ]
            return msg

    report = run(
        SuiteConfig.for_adapter(
            DropsToolCalls(),
            cassette_dirs=[ROOT / "cassettes" / "openai-chat"],
            samples=None,
            selection=Selection(select=("TC302",)),
        )
    )
    result = report.result("TC302", "openai-chat")
    assert result is not None and result.status == "fail", result
    assert any("the parse none: their ids cannot go back" in why for why in result.reasons), result.reasons


def test_tc605_holds_final_content_to_the_deltas_both_ways():
    """Streaming §11.2: the deltas accumulated equal `message.complete.final_content`. Failed
    before: only blocks some delta built were compared, so a stream that sent no text deltas
    at all (everything in message_complete) passed."""

    class NoTextDeltas(OpenAIChatAdapter):
        def stream_response(self, chunks, request_context):  # type: ignore[no-untyped-def]
            for e in super().stream_response(chunks, request_context):
                if e.get("type") != "text_delta":
                    yield e

    report = run(
        SuiteConfig.for_adapter(
            NoTextDeltas(),
            cassette_dirs=[ROOT / "cassettes" / "openai-chat"],
            samples=None,
            selection=Selection(select=("TC605",)),
        )
    )
    result = report.result("TC605", "openai-chat")
    assert result is not None and result.status == "fail", result
    assert any("(text) was never streamed (streaming §11.2" in why for why in result.reasons), result.reasons
