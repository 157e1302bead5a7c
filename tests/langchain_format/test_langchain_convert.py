"""langchain <-> canonical: documented shapes convert, every loss is reported once where
it happens, and canonical -> langchain -> canonical keeps everything a LangChain message
list can carry, losing exactly what was reported (issue 28)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_convert import BASE, META, TID, convert_additive_block_field, damaged, jsonl, reported_or_converts

from conformance.api import validate
from conformance.convert import convert
from conformance.core.errors import InputError
from conformance.strategies.conversations import conversations

FIX = Path(__file__).parent / "fixtures"
NAME = "langchain"


def test_documented_shapes_become_canonical(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_conversation.json", dst)
    msgs = jsonl(dst)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant"]
    assert msgs[1]["content"][1] == {
        "type": "image", "source": {"kind": "url", "data": "https://example.com/cat.png"}, "media_type": "image/png",
    }  # fmt: skip
    thinking, text, call = msgs[2]["content"]
    assert thinking == {"type": "thinking", "text": "A cat; then the weather tool.", "signature": "c2lnbmF0dXJl"}
    assert text == {"type": "text", "text": "A cat."}
    assert call["name"] == "get_weather" and call["input"] == {"city": "Paris"} and call["id"].startswith("tu_")
    meta = msgs[2]["metadata"]
    assert (meta["model"], meta["provider"]) == ("anthropic:claude-sonnet-4-5", "anthropic")
    assert (meta["usage"]["input_tokens"], meta["usage"]["output_tokens"]) == (57, 23)
    assert msgs[3]["content"] == [
        {"type": "tool_result", "tool_use_id": call["id"], "content": [{"type": "text", "text": "Sunny, 22 C"}]}
    ]
    assert msgs[3]["metadata"]["parent_tool_use_id"] == call["id"]
    got = sorted((f.rule, f.line, f.pointer) for f in findings)
    assert got == [("LC900", 4, "/2/data/response_metadata"), ("LC901", 1, "")]  # stop_reason; ids, times


def test_dumpd_errors_chunks_and_base64_convert_and_each_loss_is_located(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_dumpd.jsonl", dst)
    msgs = jsonl(dst)
    first = [m for m in msgs if m["session_id"] == msgs[0]["session_id"]]
    second = [m for m in msgs if m["session_id"] != msgs[0]["session_id"]]
    assert [m["role"] for m in first] == ["user", "assistant", "tool", "assistant"]
    # content "" beside tool_calls is no text block; status "error" is an error result
    assert [b["type"] for b in first[1]["content"]] == ["tool_use"]
    assert first[2]["content"][0]["is_error"] is True
    assert first[2]["content"][0]["tool_use_id"] == first[1]["content"][0]["id"]
    assert second[0]["content"] == [
        {"type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png"}
    ]
    assert [m["role"] for m in second] == ["user", "assistant"]  # an AIMessageChunk is an ai message
    assert sorted((f.rule, f.line, f.pointer) for f in findings) == [
        ("LC900", 2, "/0/data/content/1"),  # the file block
        ("LC901", 1, ""),  # once per conversation
        ("LC901", 2, ""),
    ]


def test_odd_metadata_is_a_located_loss_never_a_crash(tmp_path: Path) -> None:
    """What LangChain does not type (response_metadata, usage_metadata values) converts; what canonical cannot take is reported."""
    ai = {"type": "ai", "data": {"content": "x", "response_metadata": ["x"],
                                 "usage_metadata": {"input_tokens": True, "output_tokens": -1}}}  # fmt: skip
    src = tmp_path / "m.json"
    src.write_bytes(orjson.dumps([{"type": "human", "data": {"content": "hi"}}, ai]))
    findings = convert(NAME, "canonical", src, tmp_path / "c.jsonl")
    assert sorted((f.rule, f.pointer) for f in findings) == [("LC900", "/1/data/response_metadata"), ("LC901", "")]
    usage = jsonl(tmp_path / "c.jsonl")[1]["metadata"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (0, 0)  # not a count: the placeholder


def test_provider_blocks_langchain_passes_through_convert(tmp_path: Path) -> None:
    """OpenAI's image_url (a URL, or a data: URL) and Anthropic's thinking, as stored histories hold them."""
    human = {"type": "human", "data": {"content": [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
        {"type": "image_url", "image_url": {"url": "https://example.com/b.webp", "detail": "high"}},
        {"type": "image_url", "image_url": "data:text/plain,hi"},
    ]}}  # fmt: skip
    ai = {"type": "ai", "data": {"content": [{"type": "thinking", "thinking": "hm", "signature": "c2ln"}, "ok"]}}
    src = tmp_path / "m.json"
    src.write_bytes(orjson.dumps([human, ai]))
    findings = convert(NAME, "canonical", src, tmp_path / "c.jsonl")
    user, assistant = jsonl(tmp_path / "c.jsonl")
    assert user["content"] == [
        {"type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png"},
        {"type": "image", "source": {"kind": "url", "data": "https://example.com/b.webp"}, "media_type": "image/webp"},
    ]
    assert assistant["content"] == [
        {"type": "thinking", "text": "hm", "signature": "c2ln"}, {"type": "text", "text": "ok"},
    ]  # fmt: skip
    assert sorted((f.rule, f.pointer) for f in findings) == [
        ("LC900", "/0/data/content/1/image_url/detail"),
        ("LC900", "/0/data/content/2"),  # not an image
        ("LC901", ""),
    ]


def test_a_refusal_block_is_the_replys_text_with_a_located_loss(tmp_path: Path) -> None:
    """LangChain's standard `refusal` block (langchain_core.messages.content: "An explicit
    refusal reported by the model provider"; ChatOpenAI's `message.refusal`) is the reply's
    text: canonical has no refusal block, so the marker is the loss, reported where it is."""
    ai = {"type": "ai", "data": {"content": [{"type": "refusal", "refusal": "I can't help with that."}]}}
    src = tmp_path / "m.json"
    src.write_bytes(orjson.dumps([{"type": "human", "data": {"content": "pick the lock"}}, ai]))
    findings = convert(NAME, "canonical", src, tmp_path / "c.jsonl")
    _, assistant = jsonl(tmp_path / "c.jsonl")
    assert assistant["content"] == [{"type": "text", "text": "I can't help with that."}]
    assert [(f.rule, f.pointer) for f in findings if f.rule == "LC900"] == [("LC900", "/1/data/content/0")]
    assert any("refusal block read as text" in f.message for f in findings)


def test_additive_block_fields_are_reported_dropped(tmp_path: Path) -> None:
    """§10.2: a field a canonical v1 block does not define is carried by no peer: reported where it is."""
    findings = convert_additive_block_field(NAME, tmp_path)
    assert [(f.rule, f.line, f.pointer) for f in findings if f.line is not None] == [("LC900", 1, "/content/1")]
    assert "cache_control" in next(f.message for f in findings if f.line is not None)


def test_a_file_that_does_not_validate_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="LC101"):
        convert(NAME, "canonical", FIX / "LC101_unpaired.json", tmp_path / "c.jsonl")
    assert not (tmp_path / "c.jsonl").exists()


def test_canonical_losses_are_reported_once_where_they_are(tmp_path: Path) -> None:
    session = [
        {**BASE, "id": "01J00000000000000000000001", "created_at": "2024-06-01T00:00:00.000001Z", "role": "user",
         "content": [{"type": "image", "source": {"kind": "file_ref", "data": "a/b.png"}, "media_type": "image/png"},
                     {"type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png"},
                     {"type": "text", "text": "hi"}]},
        {**BASE, "id": "01J00000000000000000000002", "created_at": "2024-06-01T00:00:00.000002Z", "role": "assistant",
         "metadata": META,
         "content": [{"type": "thinking", "text": "t", "signature": "sig"}, {"type": "redacted_thinking", "data": "x"},
                     {"type": "tool_use", "id": TID, "name": "roll", "input": {"n": 1}}, {"type": "text", "text": "after"}]},
        {**BASE, "id": "01J00000000000000000000003", "created_at": "2024-06-01T00:00:00.000003Z", "role": "tool",
         "metadata": {"parent_tool_use_id": TID},
         "content": [{"type": "tool_result", "tool_use_id": TID, "content": [{"type": "text", "text": "bo"}, {"type": "text", "text": "om"}], "is_error": True}]},
    ]  # fmt: skip
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
    dst = tmp_path / "o.json"
    findings = convert("canonical", NAME, src, dst)
    got = sorted((f.rule, f.line or 0, f.pointer) for f in findings)
    assert got == [
        ("LC900", 0, ""),  # session, times: once per file
        ("LC900", 1, "/content/0"),  # the file_ref image
        ("LC900", 2, "/content/1"),  # redacted thinking
        ("LC900", 2, "/metadata"),  # routing, usage cost
    ]
    msgs = orjson.loads(dst.read_bytes())
    assert [m["type"] for m in msgs] == ["human", "ai", "tool"]
    assert msgs[0]["data"]["content"] == [
        {"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}, {"type": "text", "text": "hi"},
    ]  # fmt: skip
    ai = msgs[1]["data"]
    assert ai["content"] == [
        {"type": "reasoning", "reasoning": "t", "extras": {"signature": "sig"}},
        {"type": "tool_call", "id": TID, "name": "roll", "args": {"n": 1}},
        {"type": "text", "text": "after"},
    ]  # v1 standard blocks, the call in its place
    assert ai["tool_calls"] == [{"name": "roll", "args": {"n": 1}, "id": TID, "type": "tool_call"}]
    assert ai["response_metadata"] == {"output_version": "v1", "model_name": "gpt-4o", "model_provider": "openai"}
    assert ai["usage_metadata"] == {"input_tokens": 3, "output_tokens": 5, "total_tokens": 8}
    tool = msgs[2]["data"]
    assert (tool["tool_call_id"], tool["status"], tool["id"]) == (TID, "error", "01J00000000000000000000003")
    assert tool["content"] == [{"type": "text", "text": "bo"}, {"type": "text", "text": "om"}]
    assert validate([dst], fmt=NAME).findings == []


def test_several_sessions_need_jsonl(tmp_path: Path) -> None:
    a = {**BASE, "id": "01J00000000000000000000001", "role": "user", "content": [{"type": "text", "text": "x"}],
         "created_at": "2024-06-01T00:00:00.000001Z"}  # fmt: skip
    b = {**a, "session_id": "b", "id": "01J00000000000000000000002"}
    src = tmp_path / "s.jsonl"
    src.write_bytes(orjson.dumps(a) + b"\n" + orjson.dumps(b) + b"\n")
    with pytest.raises(InputError, match="2 sessions"):
        convert("canonical", NAME, src, tmp_path / "o.json")
    convert("canonical", NAME, src, tmp_path / "o.jsonl")
    assert [c[0]["data"]["content"] for c in jsonl(tmp_path / "o.jsonl")] == ["x", "x"]


# -- the round trip --------------------------------------------------------------------


def _dropped(b: dict[str, Any]) -> bool:
    return b["type"] == "redacted_thinking" or (b["type"] == "image" and b["source"]["kind"] == "file_ref")


def _expected_losses(session: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """Where converting `session` to LangChain must report a loss (line = message index
    + 1), worked out here from what LangChain messages hold, not by the converter's code."""
    out: list[tuple[int, str]] = []
    for i, m in enumerate(session, 1):
        dropped = [
            k for k, v in m["metadata"].items()
            if v is not None and not (k == "status" and v == "complete")
            and not (m["role"] == "tool" and k == "parent_tool_use_id")
            and not (m["role"] == "assistant" and k in ("model", "provider"))
        ]  # fmt: skip
        if dropped:
            out.append((i, "/metadata"))
        for j, b in enumerate(m["content"]):
            if _dropped(b):
                out.append((i, f"/content/{j}"))
    return sorted(out)


def _carried(m: dict[str, Any]) -> dict[str, Any]:
    """What of a canonical message a LangChain list carries: id, role and content, with
    each reported loss applied."""
    blocks: list[dict[str, Any]] = []
    for b in m["content"]:
        if _dropped(b):
            continue
        if b["type"] == "thinking" and b.get("signature") is None:
            b = {"type": "thinking", "text": b["text"]}
        if b["type"] == "tool_result" and b.get("is_error") is not True:
            b = {k: v for k, v in b.items() if k != "is_error"}
        blocks.append(b)
    if not blocks and m["role"] in ("user", "assistant"):
        blocks = [{"type": "text", "text": ""}]  # what reading it back writes (TS101, reported LC901)
    return {"id": m["id"], "role": m["role"], "content": blocks}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(blocks={"text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result"}))
def test_round_trip_keeps_what_langchain_carries_and_reports_exactly_the_rest(session: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, mid, back = Path(d) / "s.jsonl", Path(d) / "m.json", Path(d) / "b.jsonl"
        src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        findings = convert("canonical", NAME, src, mid)
        assert sorted((f.line, f.pointer) for f in findings if f.line is not None) == _expected_losses(session)
        assert [f.pointer for f in findings if f.line is None] == [""]  # session, times: once per file
        again_findings = convert(NAME, "canonical", mid, back)
        assert {f.rule for f in again_findings} <= {"LC901"}  # nothing more lost on the way back
        again = jsonl(back)
    assert [_carried(m) for m in again] == [_carried(m) for m in session]

    def usage(ms: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
        return [(m["metadata"]["model"], m["metadata"]["provider"], m["metadata"]["usage"]["input_tokens"],
                 m["metadata"]["usage"]["output_tokens"]) for m in ms if m["role"] == "assistant"]  # fmt: skip

    assert usage(again) == usage(session)


# -- from LangChain: any valid conversation converts, and converting back keeps it ---------

_TEXT = st.text(max_size=8)
_ARGS = st.dictionaries(st.sampled_from(["a", "b"]), st.integers(-5, 5) | _TEXT, max_size=2)
_BLOCK = st.one_of(
    _TEXT.map(lambda t: {"type": "text", "text": t}),
    st.sampled_from(["https://example.com/a.png", "https://x.test/c.jpeg?s=1"]).map(
        lambda u: {"type": "image", "url": u, "mime_type": "image/png" if u.endswith("png") else "image/jpeg"}
    ),
    st.just({"type": "image", "base64": "R0lGODlh", "mime_type": "image/gif"}),
)


@st.composite
def _conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"type": "system", "data": {"content": t, "type": "system"}} for t in draw(st.lists(_TEXT, max_size=1))
    ]
    serial = 0
    for _ in range(draw(st.integers(1, 3))):
        content = draw(_TEXT | st.lists(_BLOCK, min_size=1, max_size=3))
        out.append({"type": "human", "data": {"content": content, "type": "human"}})
        blocks: list[dict[str, Any]] = []
        if draw(st.booleans()):
            block = {"type": "reasoning", "reasoning": draw(_TEXT)}
            if draw(st.booleans()):
                block["extras"] = {"signature": draw(_TEXT)}
            blocks.append(block)
        blocks += [{"type": "text", "text": t} for t in draw(st.lists(_TEXT, max_size=2))]
        calls = []
        for _ in range(draw(st.integers(0 if blocks else 1, 2))):
            serial += 1
            calls.append({"name": draw(st.from_regex(r"\A[a-z][a-z0-9_]{0,8}\Z")), "args": draw(_ARGS),
                          "id": f"call_{serial}", "type": "tool_call"})  # fmt: skip
        out.append({"type": "ai", "data": {
            "content": blocks, "type": "ai", "tool_calls": calls,
            "response_metadata": {"model_name": "gpt-4o", "model_provider": "openai"},
        }})  # fmt: skip
        if calls:
            for c in calls:
                out.append({"type": "tool", "data": {
                    "content": draw(_TEXT), "type": "tool", "tool_call_id": c["id"],
                    "status": draw(st.sampled_from(["success", "error"])),
                }})  # fmt: skip
            out.append({"type": "ai", "data": {"content": draw(_TEXT), "type": "ai"}})
    return out


def _shape(conversation: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """Each message's type, content as blocks, and tool calls (names and args; the ids
    left out: canonical mints its own) or tool status."""
    out = []
    for m in conversation:
        d = m["data"]
        content = d["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        blocks = [b for b in blocks if b.get("type") != "tool_call"]  # the calls: compared as tool_calls
        extra: Any = None
        if m["type"] == "ai":
            extra = [(c["name"], c["args"]) for c in d.get("tool_calls") or ()]
        elif m["type"] == "tool":
            extra = d.get("status", "success")
        out.append((m["type"], blocks, extra))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_conversation())
def test_any_valid_conversation_converts_and_back_keeps_it(conversation: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, mid, back = Path(d) / "h.json", Path(d) / "c.jsonl", Path(d) / "b.json"
        src.write_bytes(orjson.dumps(conversation))
        assert validate([src]).findings == []  # detected without --format, and clean
        findings = convert(NAME, "canonical", src, mid)  # the engine validates the canonical output
        assert {f.rule for f in findings} == {"LC901"} and all(f.line is not None for f in findings)
        convert("canonical", NAME, mid, back)
        again = orjson.loads(back.read_bytes())
    assert _shape(again) == _shape(conversation)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "ai", "text", "tool", "image", "error"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["type", "data", "content", "args", "id"]), inner, max_size=2),
    max_leaves=6,
)  # fmt: skip


_damaged = damaged(_conversation(), _JSON, max_depth=6)  # a valid conversation, one value replaced by arbitrary JSON


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged)
def test_a_damaged_conversation_is_reported_or_converts_never_crashes(conversation: list[dict[str, Any]]) -> None:
    reported_or_converts(NAME, "LC", "h.json", conversation)
