"""Issue 41 and its sweep: a stream cut before its final event is never read as complete.

For each reference reader (Anthropic, OpenAI Chat, OpenAI Responses, Gemini in both framings,
Ollama, Bedrock), a stream written from the docs' shapes (tests/reader_turns.py) is cut:

- before its stop reason: the adapter ends with contract §6.5's partial message
  (`message_complete`, stop_reason `error`, what arrived) and raises `StreamCutError` naming
  what never came; `wire parse` reads it as a `partial` message (canonical §4.3) with a
  warning naming it;
- after its stop reason, only the trailing event missing (Anthropic `message_stop`, Bedrock
  `metadata`, Chat `data: [DONE]` after the usage chunk, a Gemini array's `]`): nothing is
  lost, the message is complete and a WARN line names what did not come.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from reader_turns import Turn, _frame, stream

from conformance.adapters import RequestContext, debug, registry
from conformance.adapters.base import StreamCutError, WireFormatError
from conformance.suite.capture import capture_warnings

TURN = Turn(thinking=[], texts=["Hello there"], tools=[])
CALL = Turn(thinking=[], texts=[], tools=[("get_weather", {"city": "Oslo"})])


def _sse_events(body: bytes) -> list[bytes]:
    return [e + b"\n\n" for e in body.split(b"\n\n") if e]


def _ndjson(body: bytes) -> list[bytes]:
    return [line + b"\n" for line in body.split(b"\n") if line]


def _frames(body: bytes) -> list[bytes]:
    out, i = [], 0
    while i < len(body):
        n = int.from_bytes(body[i : i + 4], "big")
        out.append(body[i : i + n])
        i += n
    return out


def _array(body: bytes) -> bytes:
    """Gemini's streamGenerateContent without `alt=sse`: one JSON array of the chunks."""
    return json.dumps([json.loads(e.removeprefix(b"data: ")) for e in body.split(b"\n\n") if e]).encode()


SPLIT = {"ollama": _ndjson, "bedrock": _frames}
# what a stream cut just before its stop reason lacks, as the adapter names it
CUT_NAMES = {
    "anthropic": "before message_stop",
    "openai-chat": "without a finish_reason",
    "openai-responses": "before response.completed",
    "gemini": "without a finishReason",
    "ollama": "without a final `done: true` line",
    "bedrock": "before messageStop",
}
# events after the stop reason's (the cut keeps the stop reason)
TRAILING = {"anthropic": 1, "bedrock": 1, "openai-chat": 1}
# where each stream's stop reason is: the event index from the end
STOP_FROM_END = {"anthropic": 2, "openai-chat": 3, "openai-responses": 1, "gemini": 1, "ollama": 1, "bedrock": 2}


def _events(api: str, turn: Turn) -> list[bytes]:
    return SPLIT.get(api, _sse_events)(stream(api, turn, 4))


def _run(api: str, body: bytes) -> tuple[list[dict[str, Any]], Exception | None, list[logging.LogRecord]]:
    events: list[dict[str, Any]] = []
    with capture_warnings() as records:
        try:
            for e in registry.load(api).stream_response([body], RequestContext(session_id="sess_cut")):
                events.append(e)
        except Exception as exc:  # the error is what is judged
            return events, exc, records
    return events, None, records


@pytest.mark.parametrize("api", sorted(CUT_NAMES))
@pytest.mark.parametrize("turn", [TURN, CALL], ids=["text", "tool"])
def test_a_stream_cut_before_its_stop_reason_is_partial_and_says_what_is_missing(api: str, turn: Turn) -> None:
    events = _events(api, turn)
    cut = b"".join(events[: len(events) - STOP_FROM_END[api]])
    got, exc, _ = _run(api, cut)
    assert isinstance(exc, StreamCutError) and CUT_NAMES[api] in str(exc) and "cut before its end" in str(exc), exc
    assert got and got[-1]["type"] == "message_complete" and got[-1]["stop_reason"] == "error"
    if turn is TURN:  # what arrived is kept
        assert "".join(b["text"] for b in got[-1]["final_content"]) == "Hello there"
    with capture_warnings() as records:
        parsed = debug.parse(registry.load(api), cut, stream=True)
    assert parsed.message is not None and parsed.message["metadata"]["status"] == "partial"
    assert parsed.error is None
    warned = [r.getMessage() for r in records if getattr(r, "event", None) == "stream_cut"]
    assert len(warned) == 1 and CUT_NAMES[api] in warned[0]


@pytest.mark.parametrize("api", sorted(TRAILING))
def test_a_stream_missing_only_what_follows_its_stop_reason_is_complete_with_a_warning(api: str) -> None:
    events = _events(api, TURN)
    cut = b"".join(events[: len(events) - TRAILING[api]])
    got, exc, records = _run(api, cut)
    assert exc is None and got[-1]["stop_reason"] == "end_turn"
    assert got[-1]["final_content"] == [{"type": "text", "text": "Hello there"}]
    assert [r for r in records if r.levelno >= logging.WARNING]
    parsed = debug.parse(registry.load(api), cut, stream=True)
    assert parsed.message is not None and parsed.message["metadata"]["status"] == "complete"


def test_a_gemini_array_cut_inside_an_element_or_before_its_end() -> None:
    body = _array(stream("gemini", TURN, 4))
    inside = body[: body.rindex(b"{") + 5]  # inside the last chunk (the finishReason's)
    got, exc, _ = _run("gemini", inside)
    assert isinstance(exc, StreamCutError) and "cut inside this element" in str(exc)
    assert got[-1]["stop_reason"] == "error" and got[-1]["final_content"] == [{"type": "text", "text": "Hello there"}]
    parsed = debug.parse(registry.load("gemini"), inside, stream=True)
    assert parsed.message is not None and parsed.message["metadata"]["status"] == "partial"
    got, exc, records = _run("gemini", body[:-1])  # only the `]` missing
    assert exc is None and got[-1]["stop_reason"] == "end_turn"
    assert any("closing `]`" in r.getMessage() for r in records)


def test_an_ndjson_stream_cut_inside_its_last_line() -> None:
    body = stream("ollama", TURN, 4)
    cut = body[: body.rindex(b'"done": true') - 3]
    got, exc, _ = _run("ollama", cut)
    assert isinstance(exc, StreamCutError) and "inside line" in str(exc)
    assert got[-1]["stop_reason"] == "error" and got[-1]["final_content"] == [{"type": "text", "text": "Hello there"}]
    parsed = debug.parse(registry.load("ollama"), cut, stream=True)
    assert parsed.message is not None and parsed.message["metadata"]["status"] == "partial"


def test_a_bedrock_stream_cut_inside_a_frame() -> None:
    frames = _events("bedrock", TURN)
    cut = b"".join(frames[:2]) + frames[2][:9]
    got, exc, _ = _run("bedrock", cut)
    assert isinstance(exc, StreamCutError)
    assert got[-1]["stop_reason"] == "error"
    parsed = debug.parse(registry.load("bedrock"), cut, stream=True)
    assert parsed.message is not None and parsed.message["metadata"]["status"] == "partial"


def test_nothing_arrived_is_refused_not_read() -> None:
    """A stream cut before its first event carries nothing to read: a located refusal."""
    with pytest.raises(WireFormatError, match=r"cut before its end|no server-sent event"):
        debug.parse(registry.load("anthropic"), b"event: message_start\n", stream=True)
    assert _frame("messageStart", {"role": "assistant"})  # the helper encodes a frame
