"""Issue 37 item 2, for every reader: whatever a reply or a stream carries in text,
thinking, tool names and arguments appears in the canonical message, or a WARN line names it.

The replies and streams are generated in each API's documented shapes (tests/reader_turns.py,
written by hand from the providers' references, never through an adapter) and read as
`turnspec wire parse` reads them (`adapters.debug.parse`: framing, wire schema, adapter).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reader_turns import STREAMS, Turn, carried, missing, reply, stream, turns

from conformance.adapters import debug, registry
from conformance.suite.capture import capture_warnings

ADAPTERS = {api: api for api in STREAMS}  # the reference adapter of each API has the API's name
SETTINGS = settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))


def _read(api: str, body: bytes, *, streamed: bool) -> tuple[dict[str, Any], list[logging.LogRecord]]:
    adapter = registry.load(ADAPTERS[api])
    with capture_warnings() as records:
        parsed = debug.parse(adapter, body, stream=streamed)
    assert parsed.message is not None and parsed.error is None
    return parsed.message, records


@pytest.mark.parametrize("api", sorted(STREAMS))
def test_a_reply_loses_nothing_silently(api: str) -> None:
    @SETTINGS
    @given(turns(custom=True), st.integers(0, 11))
    def check(turn: Turn, form: int) -> None:
        message, records = _read(api, json.dumps(reply(api, turn, form), ensure_ascii=False).encode(), streamed=False)
        assert missing(carried(api, turn, streamed=False), message, records) == []

    check()


@pytest.mark.parametrize("api", sorted(STREAMS))
def test_a_stream_loses_nothing_silently(api: str) -> None:
    @SETTINGS
    @given(turns(custom=True), st.integers(1, 9))
    def check(turn: Turn, cut: int) -> None:
        message, records = _read(api, stream(api, turn, cut), streamed=True)
        assert message["metadata"]["status"] == "complete"
        assert missing(carried(api, turn, streamed=True), message, records) == []

    check()


def test_the_oracle_finds_what_a_reader_loses() -> None:
    """`missing` is not vacuous: content the message lacks, with no WARN line, is named."""
    turn = Turn(thinking=["why"], texts=["Hello"], tools=[("get_weather", {"city": "Oslo"}), ("code", "print(1)")])
    empty = {"content": []}
    assert missing(turn, empty, []) == [
        "text 'Hello'",
        "thinking 'why'",
        'tool call get_weather({"city": "Oslo"})',
        "tool call code(print(1))",
    ]
    whole = {
        "content": [
            {"type": "thinking", "text": "why"},
            {"type": "text", "text": "Hello"},
            {"type": "tool_use", "name": "get_weather", "input": {"city": "Oslo"}},
            {"type": "tool_use", "name": "code", "input": {"input": "print(1)"}},
        ]
    }
    assert missing(turn, whole, []) == []
    dropped = logging.LogRecord("x", logging.WARNING, "", 0, "dropped", (), None)
    dropped.block_type = "thinking"
    assert missing(Turn(thinking=["why"]), empty, [dropped]) == []
