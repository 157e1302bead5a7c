"""Issue 25 items 3, 6 and 7: tool errors in band (TC902), unexercised capabilities (TC002)
and scripted cases, errors declared in the wire records (TC801) and out-of-band estimate
tokens (TC701)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.protocol import Message
from conformance.findings import Selection
from conformance.suite.runner import SuiteConfig, SuiteReport, run

ROOT = Path(__file__).resolve().parents[1]


def run_rules(adapter: Any, *rules: str, cassettes: str | None = None) -> SuiteReport:
    return run(
        SuiteConfig.for_adapter(
            adapter,
            cassette_dirs=[ROOT / (cassettes or f"cassettes/{adapter.name}")],
            selection=Selection(select=rules),
        )
    )


class ChatErrorInBand(OpenAIChatAdapter):
    """Honest: Chat Completions tool messages have no error flag, so an error result's text
    is sent prefixed "Error: " (declared), nothing is dropped and nothing is logged."""

    tool_errors_in_band = "text prefixed 'Error: '"

    def tool_to_wire_message(self, message: Message) -> list[Any]:
        out = []
        for b in message.get("content", []):
            if b.get("type") == "tool_result" and b.get("is_error"):
                texts = [{**x, "text": f"Error: {x['text']}"} if x.get("type") == "text" else x for x in b["content"]]
                b = {**b, "content": texts, "is_error": False}
            out.append(b)
        return super().tool_to_wire_message({**message, "content": out})


def test_tc902_accepts_a_tool_error_kept_in_band_without_the_warn_line() -> None:
    report = run_rules(ChatErrorInBand(), "TC902", cassettes="cassettes/openai-chat")
    result = report.result("TC902", "openai-chat")
    assert result is not None and result.status == "pass", result
    assert result.passed == 1 and not result.reasons, result
