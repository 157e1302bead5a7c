"""pydantic-ai <-> canonical: documented shapes convert, every loss is reported once
where it happens, and canonical -> pydantic-ai -> canonical keeps everything a
ModelMessage list can carry, losing exactly what was reported (issue 28)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_convert import BASE, META, TID, damaged, jsonl, reported_or_converts

from conformance.api import validate
from conformance.convert import convert
from conformance.core.errors import InputError
from conformance.strategies.conversations import conversations

FIX = Path(__file__).parent / "fixtures"
NAME = "pydantic-ai"


def test_documented_shapes_become_canonical(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_history.json", dst)
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
    assert (meta["model"], meta["provider"]) == ("anthropic:claude-sonnet-4-0", "anthropic")
    assert (meta["usage"]["input_tokens"], meta["usage"]["output_tokens"]) == (57, 23)
    assert msgs[3]["content"] == [
        {"type": "tool_result", "tool_use_id": call["id"], "content": [{"type": "text", "text": "Sunny, 22 C"}]}
    ]
    assert msgs[3]["metadata"]["parent_tool_use_id"] == call["id"]
    got = sorted((f.rule, f.line, f.pointer) for f in findings)
    assert got == [("PA900", 10, "/1"), ("PA901", 1, "")]  # finish_reason; ids, times


def test_retries_binary_and_urls_convert_and_each_loss_is_located(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_retry.jsonl", dst)
    msgs = jsonl(dst)
    first = [m for m in msgs if m["session_id"] == msgs[0]["session_id"]]
    second = [m for m in msgs if m["session_id"] != msgs[0]["session_id"]]
    assert [m["role"] for m in first] == ["user", "assistant", "tool", "assistant", "tool", "user", "assistant"]
    # a RetryPromptPart answering a call: an error result; its validation errors as JSON text
    retry = first[2]["content"][0]
    assert retry["is_error"] is True and retry["tool_use_id"] == first[1]["content"][0]["id"]
    assert orjson.loads(retry["content"][0]["text"])[0]["type"] == "int_parsing"
    # a tool return of another JSON value: its JSON text; a retry answering no call: user text
    assert first[4]["content"][0]["content"] == [{"type": "text", "text": "4"}]
    assert first[5]["content"] == [{"type": "text", "text": "Answer in French."}]
    # BinaryContent (URL-safe base64, as pydantic writes bytes) becomes a standard base64 image
    assert second[1]["content"] == [
        {"type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo+/w=="}, "media_type": "image/png"}
    ]
    losses = sorted((f.line, f.pointer) for f in findings if f.rule == "PA900")
    assert losses == [
        (1, "/2/parts/0/content"),  # error details as JSON text
        (1, "/4/parts/0/content"),  # a tool return value as JSON text
        (1, "/4/parts/1"),  # a retry answering no call, read as user text
        (2, "/0/parts/1/content/1"),  # the document URL, dropped
    ]
    assert sorted(f.line for f in findings if f.rule == "PA901") == [1, 2]  # once per history


def test_a_file_that_does_not_validate_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="PA101"):
        convert(NAME, "canonical", FIX / "PA101_unpaired.json", tmp_path / "c.jsonl")
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
                     {"type": "tool_use", "id": TID, "name": "roll", "input": {"n": 1}}]},
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
        ("PA900", 0, ""),  # ids, session: once per file
        ("PA900", 1, "/content/0"),  # the file_ref image
        ("PA900", 2, "/content/1"),  # redacted thinking
        ("PA900", 2, "/metadata"),  # routing, usage cost
        ("PA900", 3, "/content/0/content"),  # two error texts joined into one retry prompt
    ]
    history = orjson.loads(dst.read_bytes())
    assert [m["kind"] for m in history] == ["request", "response", "request"]
    assert history[0]["parts"][0]["content"] == [
        {"data": "iVBORw0KGgo=", "media_type": "image/png", "kind": "binary"},
        "hi",
    ]
    assert history[1]["parts"][0] == {
        "part_kind": "thinking", "content": "t", "id": None, "signature": "sig", "provider_name": "openai"
    }  # fmt: skip
    assert (history[1]["model_name"], history[1]["provider_name"]) == ("gpt-4o", "openai")
    assert history[1]["usage"] == {"input_tokens": 3, "output_tokens": 5}
    assert history[2]["parts"][0] == {
        "part_kind": "retry-prompt", "content": "boom", "tool_name": "roll", "tool_call_id": TID,
        "timestamp": "2024-06-01T00:00:00.000003Z",
    }  # fmt: skip
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
    assert [h[0]["parts"][0]["content"] for h in jsonl(tmp_path / "o.jsonl")] == ["x", "x"]


# -- the round trip --------------------------------------------------------------------

_DROPPED_BLOCKS = ("redacted_thinking",)


def _expected_losses(session: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """Where converting `session` to pydantic-ai must report a loss (line = message index
    + 1), worked out here from what ModelMessages hold, not by the converter's code."""
    out: list[tuple[int, str]] = []
    for i, m in enumerate(session, 1):
        kept = {"status": "complete"}
        dropped = [
            k for k, v in m["metadata"].items()
            if v is not None and kept.get(k) != v
            and not (m["role"] == "tool" and k == "parent_tool_use_id")
            and not (m["role"] == "assistant" and k in ("model", "provider"))
        ]  # fmt: skip
        if dropped:
            out.append((i, "/metadata"))
        if m["role"] == "system" and not m["content"]:
            out.append((i, ""))
        for j, b in enumerate(m["content"]):
            if b["type"] in _DROPPED_BLOCKS or (b["type"] == "image" and b["source"]["kind"] == "file_ref"):
                out.append((i, f"/content/{j}"))
            if b["type"] == "tool_result" and b.get("is_error") is True and len(b["content"]) != 1:
                out.append((i, f"/content/{j}/content"))
    return sorted(out)


def _carried(m: dict[str, Any]) -> dict[str, Any] | None:
    """What of a canonical message a ModelMessage list carries: role and content, with
    each reported loss applied (and `signature: null`, `is_error: false` left out)."""
    blocks: list[dict[str, Any]] = []
    for b in m["content"]:
        if b["type"] in _DROPPED_BLOCKS or (b["type"] == "image" and b["source"]["kind"] == "file_ref"):
            continue
        if b["type"] == "thinking" and b.get("signature") is None:
            b = {"type": "thinking", "text": b["text"]}
        if b["type"] == "tool_result":
            b = {k: v for k, v in b.items() if k != "is_error"}
            if m["content"][0].get("is_error") is True:
                b = {
                    **b,
                    "content": [{"type": "text", "text": "".join(x["text"] for x in b["content"])}],
                    "is_error": True,
                }
        blocks.append(b)
    if not blocks and m["role"] == "system":
        return None  # no SystemPromptPart (reported)
    if not blocks and m["role"] in ("user", "assistant"):
        blocks = [{"type": "text", "text": ""}]  # what reading it back writes (TS101, reported PA901)
    return {"role": m["role"], "content": blocks}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(blocks={"text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result"}))
def test_round_trip_keeps_what_pydantic_ai_carries_and_reports_exactly_the_rest(session: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, mid, back = Path(d) / "s.jsonl", Path(d) / "m.json", Path(d) / "b.jsonl"
        src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        findings = convert("canonical", NAME, src, mid)
        assert sorted((f.line, f.pointer) for f in findings if f.line is not None) == _expected_losses(session)
        assert [f.pointer for f in findings if f.line is None] == [""]  # ids, session: once per file
        again_findings = convert(NAME, "canonical", mid, back)
        assert {f.rule for f in again_findings} == {"PA901"}  # nothing more lost on the way back
        again = jsonl(back)
    assert [_carried(m) for m in again] == [c for c in map(_carried, session) if c is not None]
    models = [(m["metadata"]["model"], m["metadata"]["provider"], m["metadata"]["usage"]["input_tokens"],
               m["metadata"]["usage"]["output_tokens"]) for m in session if m["role"] == "assistant"]  # fmt: skip
    assert models == [
        (m["metadata"]["model"], m["metadata"]["provider"], m["metadata"]["usage"]["input_tokens"],
         m["metadata"]["usage"]["output_tokens"]) for m in again if m["role"] == "assistant"
    ]  # fmt: skip
    for m in again:
        if m["role"] == "tool":
            assert m["metadata"]["parent_tool_use_id"] == m["content"][0]["tool_use_id"]


# -- from pydantic-ai: any valid history converts, and converting back keeps its parts ---

_TEXT = st.text(max_size=8)
_ARGS = st.dictionaries(st.sampled_from(["a", "b"]), st.integers(-5, 5) | _TEXT, max_size=2)
_ITEM = st.one_of(
    _TEXT,
    st.sampled_from(["https://example.com/a.png", "https://x.test/c.jpeg?s=1"]).map(
        lambda u: {"url": u, "kind": "image-url", "media_type": "image/png" if u.endswith("png") else "image/jpeg"}
    ),
    st.just({"data": "R0lGODlh", "media_type": "image/gif", "kind": "binary"}),
)


@st.composite
def _history(draw: st.DrawFn) -> list[dict[str, Any]]:
    first: list[dict[str, Any]] = [
        {"part_kind": "system-prompt", "content": t} for t in draw(st.lists(_TEXT, max_size=2))
    ]
    out: list[dict[str, Any]] = []
    serial = 0
    for _ in range(draw(st.integers(1, 3))):
        content = draw(_TEXT | st.lists(_ITEM, min_size=1, max_size=3))
        out.append({"kind": "request", "parts": [*first, {"part_kind": "user-prompt", "content": content}]})
        first = []
        parts: list[dict[str, Any]] = []
        if draw(st.booleans()):
            parts.append({"part_kind": "thinking", "content": draw(_TEXT), "signature": draw(st.none() | _TEXT),
                          "provider_name": None})  # fmt: skip
        parts += [{"part_kind": "text", "content": t} for t in draw(st.lists(_TEXT, max_size=2))]
        calls = []
        for _ in range(draw(st.integers(0 if parts else 1, 2))):
            serial += 1
            args = draw(_ARGS)
            calls.append({"part_kind": "tool-call", "tool_name": draw(st.from_regex(r"\A[a-z][a-z0-9_]{0,8}\Z")),
                          "args": orjson.dumps(args).decode() if draw(st.booleans()) else args,
                          "tool_call_id": f"call_{serial}"})  # fmt: skip
        out.append({"kind": "response", "parts": parts + calls, "provider_name": "openai", "model_name": "gpt-4o"})
        if calls:
            answers = [
                {"part_kind": draw(st.sampled_from(["tool-return", "retry-prompt"])), "tool_name": c["tool_name"],
                 "content": draw(_TEXT), "tool_call_id": c["tool_call_id"]}
                for c in calls
            ]  # fmt: skip
            out.append({"kind": "request", "parts": answers})
            out.append({"kind": "response", "parts": [{"part_kind": "text", "content": draw(_TEXT)}]})
    return out


def _shape(history: list[dict[str, Any]]) -> list[tuple[str, list[tuple[str, Any]]]]:
    """Each message's kind and its parts' kinds and payloads (call args as objects, the
    call ids left out: canonical mints its own)."""
    out = []
    for m in history:
        parts = []
        for p in m["parts"]:
            if p["part_kind"] == "tool-call":
                args = p["args"] if isinstance(p["args"], dict) else orjson.loads(p["args"])
                parts.append(("tool-call", (p["tool_name"], args)))
            elif p["part_kind"] == "thinking":
                parts.append(("thinking", (p["content"], p.get("signature"))))
            elif (
                p["part_kind"] == "user-prompt"
                and isinstance(p["content"], list)
                and len(p["content"]) == 1
                and isinstance(p["content"][0], str)
            ):
                parts.append(("user-prompt", p["content"][0]))  # one string item: the same prompt as that string
            else:
                parts.append((p["part_kind"], p["content"]))
        out.append((m["kind"], parts))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_history())
def test_any_valid_history_converts_and_back_keeps_its_parts(history: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, mid, back = Path(d) / "h.json", Path(d) / "c.jsonl", Path(d) / "b.json"
        src.write_bytes(orjson.dumps(history))
        assert validate([src]).findings == []  # detected without --format, and clean
        findings = convert(NAME, "canonical", src, mid)  # the engine validates the canonical output
        assert {f.rule for f in findings} == {"PA901"} and all(f.line is not None for f in findings)
        convert("canonical", NAME, mid, back)
        again = orjson.loads(back.read_bytes())
    assert _shape(again) == _shape(history)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "request", "text", "{}", "binary"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["kind", "part_kind", "content", "args"]), inner, max_size=2),
    max_leaves=6,
)  # fmt: skip


_damaged = damaged(_history(), _JSON, max_depth=5)  # a valid history, one value replaced by arbitrary JSON


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged)
def test_a_damaged_history_is_reported_or_converts_never_crashes(history: list[dict[str, Any]]) -> None:
    reported_or_converts(NAME, "PA", "h.json", history)
