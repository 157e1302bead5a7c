"""Issue 25 item 4: TC405/TC501 ask an assistant turn's thinking back on the wire only where
the API's docs require it and canonical form can carry what it needs, as each API's wire
record declares (`WireApi.thinking_back`, with the documentation sentence); elsewhere the
thinking an adapter does not send back is a skip with that reason (a silent drop, without
canonical §7.3's WARN line, still fails)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mutants import (
    AnthropicSignatureDroppedOnToolUse,
    AnthropicThinkingDroppedWithWarn,
    GeminiSignatureNotSentBack,
    OllamaThinkingNotSentBack,
)
from third_party.ollama_no_thinking_back import OllamaNoThinkingBackAdapter

from conformance.cli import main
from conformance.core.findings import Selection
from conformance.suite.runner import SuiteConfig, SuiteReport, run
from conformance.wire.anthropic_messages import ANTHROPIC_MESSAGES
from conformance.wire.api import ThinkingBack
from conformance.wire.gemini import GEMINI
from conformance.wire.ollama import OLLAMA_CHAT
from conformance.wire.openai_chat import OPENAI_CHAT
from conformance.wire.openai_responses import OPENAI_RESPONSES
from conformance.wire.registry import APIS

ROOT = Path(__file__).resolve().parents[1]
RULES = ("TC405", "TC501")


def _run(adapter: object, cassettes: str, *more: str) -> SuiteReport:
    return run(
        SuiteConfig.for_adapter(
            adapter,  # type: ignore[arg-type]
            cassette_dirs=[ROOT / cassettes],
            selection=Selection(select=(*RULES, "TC404", *more)),
        )
    )


def test_honest_adapter_not_sending_thinking_back_to_ollama_passes_with_skip_reasons():
    """Failed before (TC405: "thinking text issued by ollama not sent back"; TC501: "declared
    true but not in the fields ollama-chat carries it in"): Ollama's docs make `thinking`
    optional on input."""
    a = OllamaNoThinkingBackAdapter()
    report = _run(a, "cassettes/ollama", "TC802")
    for rule in (*RULES, "TC404", "TC802"):
        r = report.result(rule, a.name)
        assert r is not None and r.status == "pass", (rule, r)
    why = "ollama-chat does not require thinking text sent back"
    tc405, tc501 = report.result("TC405", a.name), report.result("TC501", a.name)
    assert tc405 is not None and tc501 is not None
    same = [x for x in tc405.skip_reasons if x.startswith(f"{a.name}→{a.name}: ")]
    assert same and why in same[0] and OLLAMA_CHAT.thinking_back.source in same[0], tc405.skip_reasons
    assert any(x.startswith("supports_thinking: ") and why in x for x in tc501.skip_reasons), tc501.skip_reasons
    tc802 = report.result("TC802", a.name)  # the recorded request's round trip skips the same thinking
    assert tc802 is not None and any(why in x for x in tc802.skip_reasons), tc802.skip_reasons


@pytest.mark.parametrize(
    ("cls", "cassettes", "said"),
    [
        (
            AnthropicSignatureDroppedOnToolUse,
            "cassettes/anthropic",
            "During tool use, you must pass thinking and redacted_thinking blocks",
        ),
        (
            AnthropicThinkingDroppedWithWarn,
            "cassettes/anthropic",
            "During tool use, you must pass thinking and redacted_thinking blocks",
        ),
        (GeminiSignatureNotSentBack, "cassettes/gemini", "pass it back exactly as received"),
    ],
)
def test_where_the_docs_require_thinking_back_not_sending_it_fails_citing_them(cls, cassettes, said):
    """A logged drop (AnthropicThinkingDroppedWithWarn) is no excuse where the docs require it."""
    a = cls()
    report = _run(a, cassettes)
    for rule in RULES:
        r = report.result(rule, a.name)
        assert r is not None and r.status == "fail", (rule, r)
        assert any(said in x for x in r.reasons), (rule, r.reasons)


def test_silent_drop_where_the_docs_do_not_require_it_still_fails():
    """Not sending thinking back is allowed on Ollama; dropping it without the §7.3 WARN line is not."""
    a = OllamaThinkingNotSentBack()
    r = _run(a, "cassettes/ollama").result("TC405", a.name)
    assert r is not None and r.status == "fail"
    assert any("drop not logged" in x and "§7.3" in x for x in r.reasons), r.reasons


def test_records_declare_what_thinking_goes_back_with_the_doc_sentence():
    assert ANTHROPIC_MESSAGES.thinking_back.needs == {"text", "signature", "redacted"}
    assert GEMINI.thinking_back.needs == {"text", "signature"}
    # optional on input (Ollama), refused back (DeepSeek on Chat), needs an item id canonical
    # does not carry (Responses)
    for api in (OLLAMA_CHAT, OPENAI_CHAT, OPENAI_RESPONSES):
        assert api.thinking_back.needs == frozenset() and api.thinking_back.because, api.name
    assert "reasoning_content" in OPENAI_CHAT.thinking_back.says and "deepseek" in OPENAI_CHAT.thinking_back.source
    assert "`id`" in OPENAI_RESPONSES.thinking_back.because
    for api in APIS:
        c = api.carries
        if api.chat and (c.thinking_text or c.thinking_signature or c.redacted_thinking):
            tb = api.thinking_back
            assert tb.says and tb.source.startswith("https://"), api.name


def test_thinking_back_names_only_parts_it_knows():
    with pytest.raises(ValueError, match="unknown parts"):
        ThinkingBack(needs=frozenset({"summary"}))
    none = ThinkingBack()
    assert not none.requires("text")
    assert (
        none.skip_reason("x", "text")
        == "x does not require thinking text sent back (its record quotes no documentation sentence)"
    )


def test_honest_adapter_passes_conform_and_tc802_skips_the_thinking_it_leaves_out(capsys):
    """Failed before (exit 1; TC802: "/messages/1/thinking: missing from rendered"): the
    recorded request's optional thinking, dropped with its WARN line, is a skip with the
    record's reason; a silent drop (OllamaThinkingNotSentBack) still differs."""
    rc = main(
        [
            "conform",
            "third_party.ollama_no_thinking_back:OllamaNoThinkingBackAdapter",
            "--cassettes",
            str(ROOT / "cassettes/ollama"),
            "--no-samples",
            "--output",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    results = {r["rule"]: r for r in report["results"] if r["adapter"] == OllamaNoThinkingBackAdapter.name}
    assert rc == 0, [r for r in results.values() if r["status"] == "fail"]
    assert any(
        "the rest matches; ollama-chat does not require thinking text sent back" in x
        for x in results["TC802"]["skip_reasons"]
    ), results["TC802"]
    silent = OllamaThinkingNotSentBack()
    r = run(
        SuiteConfig.for_adapter(
            silent, cassette_dirs=[ROOT / "cassettes/ollama"], selection=Selection(select=("TC802",))
        )
    ).result("TC802", silent.name)
    assert r is not None and r.status == "fail" and any("/thinking: missing from rendered" in x for x in r.reasons)
