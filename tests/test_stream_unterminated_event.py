"""A recorded SSE stream whose last event has no blank line after it (Azure OpenAI's chat
stream in the Azure SDK's session records ends `data: [DONE]\\n`): WHATWG HTML §9.2.6 says
an event is dispatched only at a blank line and "any pending data must be discarded" at the
end of the stream, so a reader holding to the standard never sees that `[DONE]` and ends the
stream as cut. That departure is the recording's: the turn-end check (TC903) skips naming it
rather than failing the adapter, and the same stream terminated as the standard says passes.

The stream is written by hand from the Chat Completions streaming docs ("data-only
server-sent events ... terminated by a `data: [DONE]` message"), in the Azure SDK test
proxy's session-record form (conformance/suite/recordings/azure.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.core.findings import Selection
from conformance.suite.runner import SuiteConfig, run

_CHUNK = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini"}


def _line(delta: dict[str, Any], finish: str | None = None) -> str:
    return (
        "data: " + json.dumps({**_CHUNK, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
    )


def _record(folder: Path, last: str) -> Path:
    lines = [_line({"role": "assistant", "content": ""}), _line({"content": "Hi"}), _line({}, "stop"), last]
    entry = {
        "RequestUri": "https://api.openai.com/v1/chat/completions",
        "RequestMethod": "POST",
        "RequestHeaders": {"Content-Type": "application/json"},
        "RequestBody": {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "Hi"}], "stream": True},
        "StatusCode": 200,
        "ResponseHeaders": {"Content-Type": "text/event-stream"},
        "ResponseBody": lines,
    }
    folder.mkdir()
    (folder / "stream.json").write_text(json.dumps({"Entries": [entry], "Variables": {}}))
    return folder


def _tc903(folder: Path) -> Any:
    adapter = OpenAIChatAdapter()
    report = run(
        SuiteConfig.for_adapter(adapter, cassette_dirs=[folder], samples=None, selection=Selection(select=("TC903",)))
    )
    return report.result("TC903", adapter.name)


def test_a_last_event_without_its_blank_line_is_a_skip_naming_it(tmp_path: Path) -> None:
    result = _tc903(_record(tmp_path / "cut", "data: [DONE]\n"))
    assert result.status != "fail", result.reasons
    named = [r for r in result.skip_reasons if "no blank line after it" in r]
    assert named and "data: [DONE]" in named[0], result.skip_reasons


def test_the_same_stream_terminated_as_the_standard_says_passes(tmp_path: Path) -> None:
    result = _tc903(_record(tmp_path / "whole", "data: [DONE]\n\n"))
    assert result.status == "pass" and result.passed > 0, (result.reasons, result.skip_reasons)
