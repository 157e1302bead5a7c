"""Checks that render a tool history render it with its tools, and the scripted usage body
stays one the API could send (both found by the AI SDK bridges, issue 42)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import yaml

from conformance.adapters.bedrock import BedrockAdapter
from conformance.adapters.errors import InvalidRequestError
from conformance.core.findings import Selection
from conformance.suite.checks.scripted import _distinct_usage
from conformance.suite.runner import SuiteConfig, run
from conformance.suite.scripts import tools_named
from conformance.wire import registry

ROOT = Path(__file__).resolve().parents[1]


class StrictConverse(BedrockAdapter):
    """Bedrock Converse as the service answers: `ValidationException: The toolConfig field
    must be defined when using toolUse and toolResult content blocks.`"""

    name: ClassVar[str] = "strict-converse"

    def to_wire(self, messages: list[Any], tools: list[Any], options: Any) -> Any:
        blocks = {b.get("type") for m in messages for b in m.get("content") or []}
        if blocks & {"tool_use", "tool_result"} and not tools and not options.provider_tools:
            raise InvalidRequestError("The toolConfig field must be defined when using toolUse and toolResult")
        return super().to_wire(messages, tools, options)


def test_tool_histories_are_rendered_with_their_tools() -> None:
    """TC302, TC305, TC901 and TC902 render a history holding tool calls: with no tool
    defined, an adapter that keeps to Converse's rule could only refuse it (they failed)."""
    report = run(
        SuiteConfig.for_adapter(
            StrictConverse(),
            cassette_dirs=[ROOT / "cassettes" / "bedrock"],
            selection=Selection(select=("TC302", "TC305", "TC901", "TC902")),
        )
    )
    bad = [(o.rule, o.subject, o.message) for o in report.outcomes if o.status == "fail"]
    assert not bad, bad
    assert {o.rule for o in report.outcomes if o.status == "pass"} == {"TC302", "TC305", "TC901", "TC902"}


def test_tools_named_defines_each_called_tool_once_in_order() -> None:
    msgs = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "b_tool", "input": {}}]},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, {"type": "tool_use", "name": "a_tool"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "name": "b_tool"}]},
    ]
    tools = tools_named(msgs)
    assert [t["name"] for t in tools] == ["b_tool", "a_tool"]
    assert all(t["input_schema"] == {"type": "object", "properties": {}} for t in tools)


def test_scripted_usage_never_makes_cached_tokens_exceed_the_prompt() -> None:
    """Gemini's cachedContentTokenCount is part of promptTokenCount; the scripted body moved
    the prompt to a fresh 5000 and left the cache at 323392, a body no API sends, where the
    disjoint reading clipped input to 0 and no parse could agree with both readings."""
    api = registry.get("gemini-generate-content")
    doc = yaml.safe_load((ROOT / "cassettes" / "gemini" / "cached.yaml").read_text(encoding="utf-8"))
    body = json.loads(doc["interactions"][0]["response"]["body"]["string"])
    new = _distinct_usage(api, body, api.probes.response_usage(body))
    assert new is not None
    usage = new["usageMetadata"]
    assert usage["cachedContentTokenCount"] == body["usageMetadata"]["cachedContentTokenCount"]
    assert usage["promptTokenCount"] > usage["cachedContentTokenCount"]
    read = api.probes.response_usage(new)
    assert read["input"] == usage["promptTokenCount"] - usage["cachedContentTokenCount"] > 0
