"""Issue 43 items 3, 4, 5, 7 and 8, and the false failures it measured: recordings judged
before adapters, every case counted, scripted cases from the records, cassettes named by
where they come from, public names kept as a contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.adapters.errors import RateLimitError, error_for_status
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
