"""Issue 25: two honest adapters nobody here wrote (tests/third_party/their_anthropic.py,
their_openai_chat.py, written from the providers' docs and the metis contract without
reading the reference adapters) pass `turnspec conform` with no xfail, and each false
failure they met is fixed in the suite for the sentence it cites, while the defect the check
exists for still fails:

- TC503: a streamed tool call whose recorded fragments are all empty needs no input delta
  (contract §5.2.2 "zero or more tool.use_input_delta");
- TC802 (Chat Completions): a `developer` message equals a `system` one, an assistant
  `content` string equals one text part (OpenAI's API reference); a compatible server's
  field the API does not define is not asked back (canonical §2.1.1 "for primary providers");
- TC101: a reply recorded without usage, parsed without any, is no TS106 defect (contract
  §7.2: the adapter "MAY" estimate);
- a `conform` adapter file may import its sibling modules, as `python file.py` can.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from conformance.adapters import registry
from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.protocol import (
    AdapterOptions,
    Message,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireRequest,
)
from conformance.cli import main
from conformance.suite.checks.requests import extensions_not_required
from conformance.wire import equivalence
from conformance.wire import registry as wire_registry

ROOT = Path(__file__).resolve().parents[1]
THIRD = ROOT / "tests" / "third_party"
ANTHROPIC = f"{THIRD / 'their_anthropic.py'}:TheirAnthropicAdapter"
CHAT = f"{THIRD / 'their_openai_chat.py'}:TheirOpenAIChatAdapter"
STREAM_RULES = ("TC103", "TC601", "TC602", "TC603", "TC604", "TC605", "TC606", "TC607", "TC609", "TC903")
CHAT_API = next(a for a in wire_registry.APIS if a.name == "openai-chat-completions")


def _conform(capsys: Any, ref: str, cassettes: Path, *extra: str) -> tuple[int, dict[str, dict[str, Any]]]:
    rc = main(["conform", ref, "--cassettes", str(cassettes), "--output", "json", *extra])
    report = json.loads(capsys.readouterr().out)
    return rc, {r["rule"]: r for r in report["results"] if r["adapter"] != "(cassettes)"}


@pytest.mark.parametrize(
    ("ref", "folder"), [(ANTHROPIC, "anthropic"), (CHAT, "openai-chat")], ids=["anthropic", "openai-chat"]
)
def test_an_honest_third_party_adapter_passes_conform(ref: str, folder: str, capsys: Any) -> None:
    rc, results = _conform(capsys, ref, ROOT / "cassettes" / folder, "--no-samples")
    failed = {k: r for k, r in results.items() if r["status"] not in ("pass", "skip")}
    assert rc == 0 and not failed, failed
    for rule in STREAM_RULES:
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, rule


@pytest.mark.parametrize(
    ("ref", "folder"), [(ANTHROPIC, "anthropic"), (CHAT, "openai-chat")], ids=["anthropic", "openai-chat"]
)
def test_an_honest_third_party_adapter_passes_conform_on_real_samples(
    ref: str, folder: str, samples: Path, capsys: Any
) -> None:
    rc, results = _conform(capsys, ref, ROOT / "cassettes" / folder, "--samples", str(samples / "wire"))
    failed = {k: r for k, r in results.items() if r["status"] not in ("pass", "skip")}
    assert rc == 0 and not failed, failed
    assert results["TC701"]["cases_run"] > 10 and results["TC802"]["cases_run"] > 20


# -- TC503: tool calls streamed with empty fragments only ----------------------------------


def _cassette(path: Path, interactions: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}), encoding="utf-8")
    return path.parent


def _interaction(uri: str, request: dict[str, Any], body: str, content_type: str) -> dict[str, Any]:
    return {
        "request": {
            "body": json.dumps(request),
            "headers": {"content-type": ["application/json"]},
            "method": "POST",
            "uri": uri,
        },
        "response": {
            "body": {"string": body},
            "headers": {"content-type": [content_type]},
            "status": {"code": 200, "message": "OK"},
        },
    }


def _sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _empty_input_call(tmp_path: Path) -> Path:
    """An Anthropic stream whose one tool call has input {} streamed as one "" fragment (the
    shape of a recorded claude-haiku-4-5 call to a tool without parameters)."""
    tool = {"name": "pelican_name", "description": "", "input_schema": {"type": "object", "properties": {}}}
    req = {
        "model": "claude-haiku-4-5",
        "max_tokens": 64,
        "tools": [tool],
        "stream": True,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "Name a pelican"}]}],
    }
    body = _sse(
        {
            "type": "message_start",
            "message": {
                "id": "msg_1",
                "type": "message",
                "role": "assistant",
                "model": "claude-haiku-4-5",
                "content": [],
                "usage": {"input_tokens": 5, "output_tokens": 1},
            },
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_01Empty", "name": "pelican_name", "input": {}},
        },
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": ""}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}},
        {"type": "message_stop"},
    )
    it = _interaction("https://api.anthropic.com/v1/messages", req, body, "text/event-stream")
    return _cassette(tmp_path / "empty" / "empty_input.yaml", [it])


def test_tc503_a_call_streamed_with_empty_fragments_needs_no_delta(tmp_path: Path, capsys: Any) -> None:
    # the honest adapter emits no tool_use_input_delta for an empty fragment (§5.2.2: zero or more)
    _, results = _conform(capsys, ANTHROPIC, _empty_input_call(tmp_path), "--no-samples", "--select", "TC503")
    assert results["TC503"]["status"] == "pass", results["TC503"]


class NoInputDeltas:
    """Declares streamed tool calls but never emits a tool_use_input_delta: the defect TC503
    exists for."""

    @staticmethod
    def wrap(events: Iterable[StreamEvent]) -> Iterator[StreamEvent]:
        return (e for e in events if e.get("type") != "tool_use_input_delta")


def _no_deltas_adapter() -> type:
    sys.path.insert(0, str(THIRD))
    try:
        from their_anthropic import TheirAnthropicAdapter  # the adapter file's own module name
    finally:
        sys.path.remove(str(THIRD))

    class NoDeltasAnthropic(TheirAnthropicAdapter):  # type: ignore[misc, valid-type]
        name = "no-deltas-anthropic"

        def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
            return NoInputDeltas.wrap(super().stream_response(chunks, context))

    return NoDeltasAnthropic


NoDeltasAnthropic = _no_deltas_adapter()


def test_tc503_a_call_whose_fragments_carried_input_still_needs_deltas(capsys: Any) -> None:
    rc, results = _conform(
        capsys, f"{__name__}:NoDeltasAnthropic", ROOT / "cassettes" / "anthropic", "--no-samples", "--select", "TC503"
    )
    assert rc == 1 and results["TC503"]["status"] == "fail"
    assert any("no tool_use_input_delta" in c.get("message", "") for c in results["TC503"]["cases"])


# -- TC802: forms OpenAI's reference documents as the same ---------------------------------


def test_tc802_developer_equals_system_and_user_does_not() -> None:
    recorded = {"model": "gpt-4o", "messages": [{"role": "system", "content": "Be brief."}]}
    as_developer = {
        "model": "gpt-4o",
        "messages": [{"role": "developer", "content": [{"type": "text", "text": "Be brief."}]}],
    }
    as_user = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Be brief."}]}
    assert equivalence.compare(CHAT_API, recorded, as_developer) == []
    assert any("/messages/0/role" in d for d in equivalence.compare(CHAT_API, recorded, as_user))


def test_tc802_an_assistant_string_equals_one_text_part_and_other_text_does_not() -> None:
    recorded = {"model": "gpt-4o", "messages": [{"role": "assistant", "content": "Paris."}]}
    parts = {"model": "gpt-4o", "messages": [{"role": "assistant", "content": [{"type": "text", "text": "Paris."}]}]}
    other = {"model": "gpt-4o", "messages": [{"role": "assistant", "content": [{"type": "text", "text": "Rome."}]}]}
    assert equivalence.compare(CHAT_API, recorded, parts) == []
    assert equivalence.compare(CHAT_API, recorded, other) != []


class DeveloperRoleChat(OpenAIChatAdapter):
    """The reference Chat adapter, sending instructions as `developer` messages."""

    name = "developer-role-chat"

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        body = dict(req.body)
        body["messages"] = [{**m, "role": "developer"} if m.get("role") == "system" else m for m in body["messages"]]
        return WireRequest(req.method, req.path, req.headers, body)


class SystemAsUserChat(OpenAIChatAdapter):
    """Sends the instructions as a user message: a real change of meaning."""

    name = "system-as-user-chat"

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        body = dict(req.body)
        body["messages"] = [
            {**m, "role": "user"} if m.get("role") in ("system", "developer") else m for m in body["messages"]
        ]
        return WireRequest(req.method, req.path, req.headers, body)


def test_tc802_a_developer_rendering_of_a_recorded_system_message_passes(capsys: Any) -> None:
    folder = ROOT / "cassettes" / "openai-chat"
    _, ok = _conform(capsys, f"{__name__}:DeveloperRoleChat", folder, "--no-samples", "--select", "TC802")
    assert ok["TC802"]["status"] == "pass", ok["TC802"]
    _, bad = _conform(capsys, f"{__name__}:SystemAsUserChat", folder, "--no-samples", "--select", "TC802")
    assert bad["TC802"]["status"] == "fail"


def test_tc802_a_compatible_servers_undocumented_field_is_not_asked_back() -> None:
    recorded = {
        "model": "gpt-oss:120b",
        "messages": [
            {"role": "user", "content": "Capital of France?"},
            {"role": "assistant", "content": "Paris.", "reasoning": "The user asks for a capital."},
        ],
    }
    gone = '/messages/1/reasoning: missing from rendered (recorded "The user asks for a capital.")'
    other = '/messages/1/content: recorded "Paris.", rendered "Rome."'
    kept, why = extensions_not_required(CHAT_API, "ollama.com", recorded, [gone])
    assert kept == [] and "/messages/1/reasoning" in why and "canonical §2.1.1" in why
    # a documented field that moved still fails, and OpenAI's own hosts are judged whole
    assert extensions_not_required(CHAT_API, "ollama.com", recorded, [gone, other])[0] == [other]
    assert extensions_not_required(CHAT_API, "api.openai.com", recorded, [gone]) == ([gone], "")


# -- TC101: a reply recorded without usage ------------------------------------------------


def _chat_stream_without_usage(tmp_path: Path) -> Path:
    req = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hello!"}], "stream": True}
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-2024-08-06"}
    body = "".join(
        f"data: {json.dumps({**chunk, 'choices': [c]})}\n\n"
        for c in (
            {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None},
            {"index": 0, "delta": {"content": "Hi!"}, "finish_reason": None},
            {"index": 0, "delta": {}, "finish_reason": "stop"},
        )
    )
    it = _interaction("https://api.openai.com/v1/chat/completions", req, body + "data: [DONE]\n\n", "text/event-stream")
    return _cassette(tmp_path / "nousage" / "no_usage.yaml", [it])


def test_tc101_no_usage_parsed_from_a_reply_recorded_without_it_passes(tmp_path: Path, capsys: Any) -> None:
    _, results = _conform(capsys, CHAT, _chat_stream_without_usage(tmp_path), "--no-samples", "--select", "TC101")
    assert results["TC101"]["status"] == "pass", results["TC101"]


class UsageLosingChat(OpenAIChatAdapter):
    """Drops the usage the stream carried: TS106 still fails it."""

    name = "usage-losing-chat"

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "usage": None} if e.get("type") == "message_complete" else e


def test_tc101_usage_lost_from_a_reply_that_carried_it_still_fails(capsys: Any) -> None:
    folder = ROOT / "cassettes" / "openai-chat"
    rc, results = _conform(capsys, f"{__name__}:UsageLosingChat", folder, "--no-samples", "--select", "TC101")
    assert rc == 1 and any("TS106" in c.get("message", "") for c in results["TC101"]["cases"])


# -- loading an adapter file that imports its sibling module ------------------------------


def test_an_adapter_file_may_import_its_sibling_module(tmp_path: Path) -> None:
    pkg = tmp_path / "vendor_adapters"
    pkg.mkdir()
    (pkg / "sibling_helpers_x25.py").write_text("NAME = 'sibling-ok'\n", encoding="utf-8")
    (pkg / "sibling_adapter_x25.py").write_text(
        "from sibling_helpers_x25 import NAME\n"
        "from conformance.adapters.openai_chat import OpenAIChatAdapter\n"
        "class SiblingAdapter(OpenAIChatAdapter):\n"
        "    name = NAME\n",
        encoding="utf-8",
    )
    before = list(sys.path)
    try:
        adapter = registry.load(f"{pkg / 'sibling_adapter_x25.py'}:SiblingAdapter")
        assert adapter.name == "sibling-ok"
        assert sys.path == before  # the folder is searched only while the file imports
    finally:
        for mod in ("sibling_adapter_x25", "sibling_helpers_x25"):
            sys.modules.pop(mod, None)


# -- TC405 / TC501: Anthropic thinking of earlier turns may be omitted ----------------------


def _earlier_thinking_variants() -> tuple[type, type]:
    sys.path.insert(0, str(THIRD))
    try:
        from their_anthropic import TheirAnthropicAdapter  # the adapter file's own module name
    finally:
        sys.path.remove(str(THIRD))

    def without_thinking(adapter: Any, messages: list[Message], keep: int) -> list[Message]:
        """`messages` with the thinking of assistant turns other than `keep` dropped (WARNed)."""
        out = []
        for i, m in enumerate(messages):
            if m.get("role") == "assistant" and i != keep:
                content = []
                for k, b in enumerate(m["content"]):
                    if b.get("type") in ("thinking", "redacted_thinking"):
                        adapter.drop(m, k, b["type"], "thinking of an earlier turn is omitted")
                    else:
                        content.append(b)
                m = {**m, "content": content or [{"type": "text", "text": ""}]}
            out.append(m)
        return out

    class EarlierThinkingOmitted(TheirAnthropicAdapter):  # type: ignore[misc, valid-type]
        """Sends back only the last assistant turn's thinking (the docs allow omitting the rest)."""

        name = "earlier-thinking-omitted"

        def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
            last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
            return super().to_wire(without_thinking(self, messages, last), tools, options)

    class AllThinkingOmitted(TheirAnthropicAdapter):  # type: ignore[misc, valid-type]
        """Drops every turn's thinking, also the turn continued during tool use (a defect)."""

        name = "all-thinking-omitted"

        def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
            return super().to_wire(without_thinking(self, messages, -1), tools, options)

    return EarlierThinkingOmitted, AllThinkingOmitted


EarlierThinkingOmitted, AllThinkingOmitted = _earlier_thinking_variants()


def test_thinking_of_earlier_turns_may_be_omitted_with_its_warn_line(capsys: Any) -> None:
    folder = ROOT / "cassettes" / "anthropic"
    rc, results = _conform(
        capsys, f"{__name__}:EarlierThinkingOmitted", folder, "--no-samples", "--select", "TC405,TC501"
    )
    assert rc == 0, {k: r["reasons"] for k, r in results.items()}
    assert any("prior assistant role turns" in r for r in results["TC405"]["skip_reasons"])


def test_thinking_of_the_turn_continued_during_tool_use_is_still_required(capsys: Any) -> None:
    folder = ROOT / "cassettes" / "anthropic"
    rc, results = _conform(capsys, f"{__name__}:AllThinkingOmitted", folder, "--no-samples", "--select", "TC405")
    assert rc == 1 and results["TC405"]["status"] == "fail"
    assert any("during tool use" in c.get("message", "") for c in results["TC405"]["cases"])


# -- TC903: a stop reason no contract StopReason names may map to either defensible value ---


def _stop_variants() -> tuple[type, type]:
    sys.path.insert(0, str(THIRD))
    try:
        from their_openai_chat import STOPS, TheirOpenAIChatAdapter  # the adapter file's own module
    finally:
        sys.path.remove(str(THIRD))

    class FilteredIsError(TheirOpenAIChatAdapter):  # type: ignore[misc, valid-type]
        """Reads `content_filter` (content omitted by the filter) as a failed generation."""

        name = "filtered-is-error"
        stops: ClassVar[Mapping[str, str]] = {**STOPS, "content_filter": "error"}

    class FilteredIsToolUse(TheirOpenAIChatAdapter):  # type: ignore[misc, valid-type]
        """Reads `content_filter` as a tool call: no reading of the docs gives that."""

        name = "filtered-is-tool-use"
        stops: ClassVar[Mapping[str, str]] = {**STOPS, "content_filter": "tool_use"}

    return FilteredIsError, FilteredIsToolUse


FilteredIsError, FilteredIsToolUse = _stop_variants()


def test_tc903_content_filter_read_as_error_passes_and_as_a_tool_call_fails(capsys: Any) -> None:
    folder = ROOT / "cassettes" / "openai-chat"
    rc, ok = _conform(capsys, f"{__name__}:FilteredIsError", folder, "--no-samples", "--select", "TC903")
    assert rc == 0 and ok["TC903"]["status"] == "pass", ok["TC903"]
    rc, bad = _conform(capsys, f"{__name__}:FilteredIsToolUse", folder, "--no-samples", "--select", "TC903")
    assert rc == 1 and any("'content_filter'" in c.get("message", "") for c in bad["TC903"]["cases"])


def test_tc802_a_field_the_docs_do_not_define_sent_to_the_apis_own_host_is_a_named_skip() -> None:
    """A Chat Completions tool message is `role`, `content` and `tool_call_id` (the reference's
    ChatCompletionToolMessageParam); a recording whose tool message also sends `name` departs
    from the docs: the adapter that drops it is not failed for it, a documented field still is."""
    from conformance.suite.checks.requests import undocumented_not_required

    call = {"name": "f", "arguments": "{}"}
    recorded = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "Call it."},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": call}]},
            {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "done"},
        ],
    }
    gone = '/messages/2/name: missing from rendered (recorded "f")'
    other = '/messages/0/content: recorded "Call it.", rendered "Call."'
    kept, why = undocumented_not_required(CHAT_API, "api.openai.com", recorded, [gone])
    assert kept == [] and why.startswith("/messages/2/name: a field OpenAI Chat Completions API's documentation")
    assert undocumented_not_required(CHAT_API, "api.openai.com", recorded, [gone, other])[0] == [other]
    # a compatible server's extensions are extensions_not_required's to judge
    assert undocumented_not_required(CHAT_API, "ollama.com", recorded, [gone]) == ([gone], "")
