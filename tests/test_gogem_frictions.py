"""What the outside author of tests/data/exec/go_gemini_child/ met that the published pages
did not say, or where the host was stricter than they are (tests/test_exec_go_gemini_child.py
runs the child itself)."""

from __future__ import annotations

from conformance.suite.checks.requests import departures_not_required
from conformance.wire import registry
from conformance.wire.describe import describe


def test_wire_show_says_which_400_message_is_a_context_overflow_for_a_record_with_signals_of_its_own() -> None:
    """TC801 holds Gemini's 400 "The input token count (1250000) exceeds the maximum number of
    tokens allowed (1048576)." (cassettes/gemini/errors.yaml#2) to context_overflow, yet `wire
    show gemini-generate-content` printed the overflow wording only for records with no signal
    of their own: Gemini's `error.details[].reason` table hid it."""
    text = describe(registry.GEMINI)
    errors = text.split("## Errors", 1)[1].split("\n## ", 1)[0]
    pattern = registry.GEMINI.errors.overflow_message
    assert pattern is not None and pattern.search("The input token count (1250000) exceeds the maximum")
    assert f"`{pattern.pattern}`" in errors and "`context_overflow`" in errors, errors


def test_tc802_skips_a_recorded_tools_object_an_adapter_renders_back_as_the_documented_list() -> None:
    """pydantic-ai's test_multiple_agent_tool_calls.yaml sends `"tools": {"function_declarations":
    [...]}` (one Tool, where the reference has a list) and the API answers it; an adapter that
    reads it and renders the documented list failed TC802 ("/tools: recorded {...}, rendered
    [...]"). The departure is now named in a skip; other differences still fail."""
    recorded = {"contents": [], "tools": {"function_declarations": [{"name": "get_capital"}]}}
    diffs = ['/tools: recorded {"functionDeclarations": [...]}, rendered [{"functionDeclarations": [...]}]']
    kept, why = departures_not_required(registry.GEMINI, recorded, diffs)
    assert kept == [] and "/tools: `tools` is one Tool object" in why and "the API took it" in why, why
    other = [*diffs, "/contents/0/parts: 2 items recorded, 1 rendered"]
    kept, why = departures_not_required(registry.GEMINI, recorded, other)
    assert kept == other[1:], kept
    listed = {**recorded, "tools": [recorded["tools"]]}
    assert departures_not_required(registry.GEMINI, listed, diffs) == (diffs, "")
