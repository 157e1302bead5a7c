"""TC503 on a streamed reply with tool calls (`capability_probes._stream_case`).

Contract §5.2.2 allows "zero or more tool.use_input_delta" per call, so a call whose recorded
fragments are all empty may stream none. Failed before: the calls the adapter opened were
paired with the recorded ones by position, so an honest adapter that opened a silent call
first (its start before the other call's, say on Anthropic, where a `{}` input may stream
only an empty fragment) was failed for the other call's fragments.
"""

from __future__ import annotations

from typing import Any

from conformance.adapters.anthropic import AnthropicAdapter
from conformance.suite.checks.capability_probes import _stream_case
from conformance.suite.outcome import AdapterUnderTest


def _events(with_deltas: dict[int, bool]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"type": "message_start", "message_id": "m"}]
    for k, streamed in with_deltas.items():
        out.append({"type": "tool_use_start", "content_block_index": k, "id": f"tu_{k}", "name": "f"})
        if streamed:
            out.append({"type": "tool_use_input_delta", "content_block_index": k, "partial_json": '{"a":1}'})
        out.append({"type": "tool_use_end", "content_block_index": k, "final_input": {"a": 1} if streamed else {}})
    return out


def _verdict(with_deltas: dict[int, bool], fragments: list[list[str]] | None) -> tuple[str, str]:
    s = AdapterUnderTest("anthropic", AnthropicAdapter())
    assert s.adapter.capabilities["supports_streaming_tool_calls"] is True
    shown = {"supports_parallel_tool_calls": 0, "supports_streaming_tool_calls": 0, "supports_prompt_caching": 0}
    (got,) = list(_stream_case(s, s.adapter, "case", _events(with_deltas), None, shown, fragments))
    return got.status, got.message


def test_a_silent_call_opened_first_is_not_paired_with_the_streamed_one() -> None:
    # the wire streamed call A's input, then call B's empty one; the adapter opened B first
    assert _verdict({0: False, 1: True}, [['{"a":', "1}"], [""]]) == ("pass", "")
    assert _verdict({0: True, 1: False}, [['{"a":', "1}"], [""]]) == ("pass", "")


def test_more_calls_without_deltas_than_silent_recorded_calls_fail() -> None:
    status, message = _verdict({0: False, 1: False}, [['{"a":', "1}"], [""]])
    assert status == "fail" and "block(s) 0, 1" in message and "1 recorded call(s) streamed no input" in message
    status, message = _verdict({0: False}, None)  # the record cannot locate fragments: every call must stream
    assert status == "fail" and "block(s) 0" in message
