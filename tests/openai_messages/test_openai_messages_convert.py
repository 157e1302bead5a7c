"""openai-messages <-> canonical: documented shapes convert, every loss is reported once
where it happens, and canonical -> openai-messages -> canonical keeps everything Chat
messages can carry, losing exactly what was reported (issue 28)."""

from __future__ import annotations

import mimetypes
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_convert import damaged, jsonl, reported_or_converts

from conformance.api import validate
from conformance.convert import convert
from conformance.core.errors import InputError
from conformance.strategies.conversations import conversations

FIX = Path(__file__).parent / "fixtures"
NAME = "openai-messages"


def test_documented_shapes_become_canonical(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_tools.json", dst)
    msgs = jsonl(dst)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant"]
    image = msgs[1]["content"][1]
    assert image == {
        "type": "image",
        "source": {"kind": "url", "data": image["source"]["data"]},
        "media_type": "image/jpeg",
    }
    thinking, call = msgs[2]["content"]
    assert thinking == {"type": "thinking", "text": "The user wants the weather."}
    assert call["name"] == "get_weather" and call["input"] == {"location": "Paris, France"}
    assert call["id"].startswith("tu_")  # a Chat id (call_abc123) becomes a canonical tool id
    assert msgs[3]["content"][0]["tool_use_id"] == call["id"] == msgs[3]["metadata"]["parent_tool_use_id"]
    got = sorted((f.rule, f.line, f.pointer) for f in findings)
    assert got == [("OM900", 2, "/0/role"), ("OM901", 1, "")]  # developer read as system; ids, times


def test_conversations_each_become_a_session_and_losses_are_located(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_conversations.jsonl", dst)
    msgs = jsonl(dst)
    assert len({m["session_id"] for m in msgs}) == 2
    assert msgs[-1]["content"] == [{"type": "thinking", "text": "It says hello."}, {"type": "text", "text": "Hello"}]
    losses = [(f.line, f.pointer) for f in findings if f.rule == "OM900"]
    assert losses == [(2, "/messages/0/content/0")]  # the input_audio part, once


def test_a_file_that_does_not_validate_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="OM101"):
        convert(NAME, "canonical", FIX / "OM101_unpaired.json", tmp_path / "c.jsonl")
    assert not (tmp_path / "c.jsonl").exists()


def test_canonical_losses_are_reported_once_where_they_are(tmp_path: Path) -> None:
    tid = "tu_01J0000000000000000000000A"
    base = {"session_id": "s1", "metadata": {}, "schema_version": 1}
    meta = {"model": "openai:gpt-4o", "provider": "openai", "routing": {"mode": "default", "chosen_model": "openai:gpt-4o", "reason": "default"},
            "usage": {"input_tokens": 1, "output_tokens": 1, "cost_usd": "0", "pricing_version": "v1", "latency_ms": 1}}  # fmt: skip
    session = [
        {**base, "id": "01J00000000000000000000001", "created_at": "2024-06-01T00:00:00.000001Z", "role": "user",
         "content": [{"type": "image", "source": {"kind": "file_ref", "data": "a/b.png"}, "media_type": "image/png"},
                     {"type": "text", "text": "hi"}]},
        {**base, "id": "01J00000000000000000000002", "created_at": "2024-06-01T00:00:00.000002Z", "role": "assistant",
         "metadata": meta,
         "content": [{"type": "thinking", "text": "t", "signature": "sig"}, {"type": "tool_use", "id": tid, "name": "f", "input": {}}]},
        {**base, "id": "01J00000000000000000000003", "created_at": "2024-06-01T00:00:00.000003Z", "role": "tool",
         "metadata": {"parent_tool_use_id": tid},
         "content": [{"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": "boom"}], "is_error": True}]},
    ]  # fmt: skip
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
    dst = tmp_path / "o.json"
    findings = convert("canonical", NAME, src, dst)
    got = sorted((f.rule, f.line or 0, f.pointer) for f in findings)
    assert got == [
        ("OM900", 0, ""),  # ids, session, times: once per file
        ("OM900", 1, "/content/0"),  # the file_ref image
        ("OM900", 2, "/content/0/signature"),
        ("OM900", 2, "/metadata"),
        ("OM900", 3, "/content/0/is_error"),
    ]
    chat = orjson.loads(dst.read_bytes())
    assert chat[0] == {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    assert chat[2] == {"role": "tool", "tool_call_id": tid, "content": "boom"}
    assert validate([dst], fmt=NAME).findings == []


def test_several_sessions_need_jsonl(tmp_path: Path) -> None:
    a = {"id": "01J00000000000000000000001", "session_id": "a", "role": "user", "content": [{"type": "text", "text": "x"}],
         "metadata": {}, "created_at": "2024-06-01T00:00:00.000001Z", "schema_version": 1}  # fmt: skip
    b = {**a, "session_id": "b", "id": "01J00000000000000000000002"}
    src = tmp_path / "s.jsonl"
    src.write_bytes(orjson.dumps(a) + b"\n" + orjson.dumps(b) + b"\n")
    with pytest.raises(InputError, match="2 sessions"):
        convert("canonical", NAME, src, tmp_path / "o.json")
    convert("canonical", NAME, src, tmp_path / "o.jsonl")
    assert [line["messages"] for line in jsonl(tmp_path / "o.jsonl")] == [[{"role": "user", "content": "x"}]] * 2


# -- the round trip --------------------------------------------------------------------


def _guess(url: str) -> str:
    guess = mimetypes.guess_type(urlsplit(url).path, strict=False)[0] or ""
    return guess if guess.startswith("image/") else "image/jpeg"  # what reading it back assumes (reported)


_RANK = {"thinking": 0, "text": 1, "tool_use": 2}


def _expected_losses(session: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """Where converting `session` to Chat must report a loss (line = message index + 1),
    worked out here from what Chat messages hold, not by the converter's code."""
    out: list[tuple[int, str]] = []
    for i, m in enumerate(session, 1):
        kept_meta = {
            k: v for k, v in m["metadata"].items() if v is not None and not (k == "status" and v == "complete")
        }
        if m["role"] == "tool":
            kept_meta.pop("parent_tool_use_id", None)
        if kept_meta:
            out.append((i, "/metadata"))
        kinds = []
        for j, b in enumerate(m["content"]):
            if b["type"] == "image" and b["source"]["kind"] == "file_ref":
                out.append((i, f"/content/{j}"))
            elif (
                b["type"] == "image" and b["source"]["kind"] == "url" and _guess(b["source"]["data"]) != b["media_type"]
            ):
                out.append((i, f"/content/{j}/media_type"))
            elif b["type"] == "redacted_thinking":
                out.append((i, f"/content/{j}"))
            elif b["type"] == "tool_result" and b.get("is_error") is True:
                out.append((i, f"/content/{j}/is_error"))
            if b["type"] == "thinking" and b.get("signature") is not None:
                out.append((i, f"/content/{j}/signature"))
            if m["role"] == "assistant" and b["type"] in _RANK:
                kinds.append(b["type"])
        if kinds.count("thinking") > 1:
            out.append((i, "/content"))
        ranks = [_RANK[k] for k in kinds]
        if ranks != sorted(ranks):
            out.append((i, "/content"))
    return sorted(out)


def _carried(m: dict[str, Any]) -> dict[str, Any]:
    """What of a canonical message Chat carries: role and content, with each reported
    loss applied (and `signature: null`, `is_error: false`, the defaults, left out)."""
    blocks: list[dict[str, Any]] = []
    for b in m["content"]:
        if b["type"] == "image":
            if b["source"]["kind"] == "file_ref":
                continue
            if b["source"]["kind"] == "url":
                b = {**b, "media_type": _guess(b["source"]["data"])}
        if b["type"] == "redacted_thinking":
            continue
        if b["type"] == "thinking":
            b = {"type": "thinking", "text": b["text"]}
        if b["type"] == "tool_result":
            b = {k: v for k, v in b.items() if k != "is_error"}
        blocks.append(b)
    if m["role"] == "assistant":
        thinking = [b["text"] for b in blocks if b["type"] == "thinking"]
        blocks = ([{"type": "thinking", "text": "".join(thinking)}] if thinking else []) + sorted(
            (b for b in blocks if b["type"] != "thinking"), key=lambda b: _RANK[b["type"]]
        )
    if not blocks and m["role"] in ("user", "assistant"):
        blocks = [{"type": "text", "text": ""}]  # what reading it back writes (TS101)
    return {"role": m["role"], "content": blocks}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(blocks={"text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result"}))
def test_round_trip_keeps_what_chat_carries_and_reports_exactly_the_rest(session: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, mid, back = Path(d) / "s.jsonl", Path(d) / "m.json", Path(d) / "b.jsonl"
        src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        findings = convert("canonical", NAME, src, mid)
        reported = sorted((f.line, f.pointer) for f in findings if f.line is not None)
        assert reported == _expected_losses(session)
        assert [f.pointer for f in findings if f.line is None] == [""]  # ids, session, times: once per file
        convert(NAME, "canonical", mid, back)
        again = jsonl(back)
    assert [_carried(m) for m in again] == [_carried(m) for m in session]
    for m in again:
        if m["role"] == "tool":
            assert m["metadata"]["parent_tool_use_id"] == m["content"][0]["tool_use_id"]


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("get_weather", "get_weather"), ("getWeather", "get_weather"), ("get-weather", "get_weather"), ("functions.Run", "functions_run"), ("2fa", "tool_2fa")],
)  # fmt: skip
def test_tool_names_become_canonical_names_and_the_change_is_reported(
    tmp_path: Path, name: str, canonical: str
) -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}
    src = tmp_path / "m.json"
    src.write_bytes(
        orjson.dumps(
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            ]
        )
    )
    findings = convert(NAME, "canonical", src, tmp_path / "c.jsonl")
    assert jsonl(tmp_path / "c.jsonl")[1]["content"][0]["name"] == canonical
    renamed = [f.pointer for f in findings if f.rule == "OM900"]
    assert renamed == ([] if name == canonical else ["/1/tool_calls/0/function/name"])


# -- from Chat: any valid conversation converts, and converting back keeps its text -------

_TEXT = st.text(max_size=8)
_NAMES = st.from_regex(r"\A[A-Za-z][A-Za-z0-9_.-]{0,10}\Z")
_URLS = st.sampled_from(
    [
        "https://example.com/a.png",
        "https://example.com/b",
        "data:image/gif;base64,R0lGODlh",
        "https://x.test/c.jpeg?s=1",
    ]
)
_USER_PART = st.one_of(
    _TEXT.map(lambda t: {"type": "text", "text": t}),
    st.builds(lambda u: {"type": "image_url", "image_url": {"url": u}}, _URLS),
    st.just({"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}}),
)


@st.composite
def _chat(draw: st.DrawFn) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        out.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(_TEXT)})
    serial = 0
    for _ in range(draw(st.integers(1, 3))):
        out.append({"role": "user", "content": draw(_TEXT | st.lists(_USER_PART, min_size=1, max_size=3))})
        calls = []
        for _ in range(draw(st.integers(0, 2))):
            serial += 1
            args = draw(st.dictionaries(st.sampled_from(["a", "b"]), st.integers(-5, 5) | _TEXT, max_size=2))
            calls.append(
                {
                    "id": f"call_{serial}",
                    "type": "function",
                    "function": {"name": draw(_NAMES), "arguments": orjson.dumps(args).decode()},
                }
            )
        msg: dict[str, Any] = {"role": "assistant", "content": None if calls and draw(st.booleans()) else draw(_TEXT)}
        if draw(st.booleans()):
            msg[draw(st.sampled_from(["reasoning_content", "reasoning"]))] = draw(_TEXT)
        if calls:
            msg["tool_calls"] = calls
        out.append(msg)
        out += [{"role": "tool", "tool_call_id": c["id"], "content": draw(_TEXT)} for c in calls]
    return out


def _texts(chat: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """Each message's role (developer read as system) and its texts, in Chat's order."""
    out = []
    for m in chat:
        c = m.get("content")
        texts = [c] if isinstance(c, str) else [p["text"] for p in c or [] if p["type"] == "text"]
        reasoning = [m[k] for k in ("reasoning_content", "reasoning") if k in m]
        calls = [orjson.loads(c["function"]["arguments"]) for c in m.get("tool_calls", [])]
        out.append(("system" if m["role"] == "developer" else m["role"], [*reasoning, *texts, *map(str, calls)]))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_chat())
def test_any_valid_chat_converts_and_back_keeps_its_texts(chat: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, mid, back = Path(d) / "m.json", Path(d) / "c.jsonl", Path(d) / "b.json"
        src.write_bytes(orjson.dumps(chat))
        assert validate([src], fmt=NAME).findings == []
        findings = convert(NAME, "canonical", src, mid)  # the engine validates the canonical output
        assert all(f.line is not None for f in findings)
        convert("canonical", NAME, mid, back)
        again = orjson.loads(back.read_bytes())

    # an all-audio user message reads back as one empty text (canonical needs a block)
    def audio_only(m: dict[str, Any]) -> bool:
        return isinstance(m["content"], list) and all(p["type"] == "input_audio" for p in m["content"])

    expected = [([r, [""]] if audio_only(m) else [r, t]) for m, (r, t) in zip(chat, _texts(chat), strict=True)]
    assert [list(x) for x in _texts(again)] == expected


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "user", "tool", "text", "image_url", "{}"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["role", "content", "type", "tool_calls", "id"]), inner, max_size=2),
    max_leaves=6,
)  # fmt: skip
_damaged = damaged(_chat(), _JSON, max_depth=6)  # a valid chat, one value replaced by arbitrary JSON


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged)
def test_a_damaged_chat_is_reported_or_converts_never_crashes(chat: list[dict[str, Any]]) -> None:
    reported_or_converts(NAME, "OM", "m.json", chat)
