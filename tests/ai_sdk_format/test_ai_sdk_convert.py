"""ai-sdk <-> canonical: the documented shapes convert, every loss is reported where it
happens, what canonical has no block for rides in provider_raw and comes back, and a
round trip through canonical validates both ways (`turnspec validate`). Oracle: the AI
SDK's UIMessage reference (which field means what); test_ai_sdk_oracle.py has the SDK
load what these conversions write."""

from __future__ import annotations

import copy
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from peer_convert import BASE, META, TID, damaged, jsonl, reported_or_converts

from conformance.api import validate
from conformance.cli import main
from conformance.convert import convert
from conformance.core.errors import InputError
from conformance.strategies.conversations import conversations

FIX = Path(__file__).parent / "fixtures"
NAME = "ai-sdk"
VALID = orjson.loads((FIX / "valid_chat.json").read_bytes())


def test_documented_shapes_become_canonical(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_chat.json", dst)
    msgs = jsonl(dst)
    roles = [m["role"] for m in msgs]
    assert roles == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert msgs[1]["content"] == [
        {"type": "text", "text": "What is the weather in Berlin? Here is a photo."},
        {"type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png"},
    ]
    thinking, weather, station = msgs[2]["content"]
    assert thinking == {"type": "thinking", "text": "I should call the weather tool.", "signature": "c2lnbmF0dXJl"}
    assert (weather["name"], weather["input"]) == ("get_weather", {"city": "Berlin"})
    assert (station["name"], station["input"]) == ("lookup_station", {"city": "Berlin"})
    assert msgs[3]["content"] == [
        {"type": "tool_result", "tool_use_id": weather["id"], "content": [{"type": "text", "text": '{"temperature":18,"sky":"cloudy"}'}]}
    ]  # fmt: skip
    assert msgs[4]["content"][0]["is_error"] is True
    assert msgs[4]["content"][0]["content"] == [{"type": "text", "text": "station offline"}]
    assert msgs[4]["metadata"]["parent_tool_use_id"] == station["id"]
    assert msgs[5]["content"] == [{"type": "text", "text": "It is 18 degrees and cloudy in Berlin."}]
    # the UIMessage's id, metadata, and the parts canonical has no block for: provider_raw
    raw = msgs[1]["metadata"]["provider_raw"]["ai-sdk"]
    assert raw["id"] == "u-1" and raw["metadata"] == {"createdAt": "2025-06-01T10:00:00Z"}
    assert [k["part"]["type"] for k in raw["kept"]] == ["file"]
    raw = msgs[2]["metadata"]["provider_raw"]["ai-sdk"]
    assert [k["part"]["type"] for k in raw["kept"]] == ["source-url", "source-document", "data-weather"]
    assert raw["names"][weather["id"]] == "tool-getWeather"
    got = {(f.rule, f.line, f.pointer) for f in findings}
    assert ("AS900", 3, "/1/parts/2") in got  # the PDF file
    assert ("AS900", 13, "/2/parts/2/output") in got  # an object output as JSON text
    assert ("AS900", 13, "/2/parts/6") in got  # source-url
    assert ("AS900", 33, "/4/parts/1/state") in got  # input-streaming
    assert ("AS900", 33, "/4/parts/5/state") in got  # output-denied
    assert ("AS901", 1, "") in got  # ids, times, session
    assert all(f.line is not None for f in findings)
    assert validate([dst]).findings and not [f for f in validate([dst]).findings if f.severity.name == "ERROR"]


def test_a_file_that_does_not_validate_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="AS007"):
        convert(NAME, "canonical", FIX / "AS007_no_error_text.json", tmp_path / "c.jsonl")
    assert not (tmp_path / "c.jsonl").exists()


def _norm(conversation: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation with text and reasoning `state: "done"` left out (a finished part,
    what canonical holds)."""
    out = copy.deepcopy(conversation)
    for m in out:
        for p in m["parts"]:
            if p["type"] in ("text", "reasoning") and p.get("state") == "done":
                del p["state"]
    return out


def test_a_round_trip_through_canonical_gives_the_same_ui_messages(tmp_path: Path) -> None:
    mid, back = tmp_path / "c.jsonl", tmp_path / "b.jsonl"
    convert(NAME, "canonical", FIX / "valid_chats.jsonl", mid)
    assert main(["validate", str(mid)]) == 0
    convert("canonical", NAME, mid, back)
    assert main(["validate", str(back)]) == 0
    original = [orjson.loads(line) for line in (FIX / "valid_chats.jsonl").read_bytes().splitlines()]
    assert jsonl(back) == [_norm(c) for c in original]


def test_every_part_comes_back_in_its_place_and_the_losses_are_the_reported_ones(tmp_path: Path) -> None:
    mid, back = tmp_path / "c.jsonl", tmp_path / "b.json"
    convert(NAME, "canonical", FIX / "valid_chat.json", mid)
    convert("canonical", NAME, mid, back)
    again = orjson.loads(back.read_bytes())
    assert validate([back]).findings == []
    assert [m["id"] for m in again] == [m["id"] for m in VALID]
    assert again[1]["metadata"] == VALID[1]["metadata"]
    for a, b in zip(again, VALID, strict=True):
        assert [p["type"] for p in a["parts"]] == [p["type"] for p in b["parts"]] or b["id"] in ("a-2", "a-3")
    a1 = again[2]["parts"]
    assert a1[2]["state"] == "output-available" and a1[2]["output"] == '{"temperature":18,"sky":"cloudy"}'
    assert a1[3] == {**VALID[2]["parts"][3]}
    # reported on the way in: input-streaming and approvals read as calls, a denial as an error
    assert [p["state"] for p in again[4]["parts"][1:]] == ["input-available"] * 4 + ["output-error"]
    assert again[5]["parts"] == [{"type": "step-start"}, {"type": "text", "text": ""}]


def test_canonical_losses_are_reported_once_where_they_are(tmp_path: Path) -> None:
    session = [
        {**BASE, "id": "01J00000000000000000000001", "created_at": "2024-06-01T00:00:00.000001Z", "role": "user",
         "content": [{"type": "image", "source": {"kind": "file_ref", "data": "a/b.png"}, "media_type": "image/png"},
                     {"type": "image", "source": {"kind": "url", "data": "https://example.com/a.png"}, "media_type": "image/png"},
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
        ("AS900", 0, ""),  # session, times: once per file
        ("AS900", 1, "/content/0"),  # the file_ref image
        ("AS900", 2, "/content/0/signature"),  # an openai turn's signature, written as anthropic's
        ("AS900", 2, "/content/1"),  # redacted thinking
    ]
    ui = orjson.loads(dst.read_bytes())
    assert [(m["id"], m["role"]) for m in ui] == [
        ("01J00000000000000000000001", "user"),
        ("01J00000000000000000000002", "assistant"),
    ]
    assert ui[0]["parts"][0] == {"type": "file", "mediaType": "image/png", "url": "https://example.com/a.png"}
    assert ui[1]["parts"] == [
        {"type": "step-start"},
        {"type": "reasoning", "text": "t", "providerMetadata": {"anthropic": {"signature": "sig"}}},
        {"type": "tool-roll", "toolCallId": TID, "state": "output-error", "input": {"n": 1}, "errorText": "boom"},
    ]
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
    assert [c[0]["parts"][0]["text"] for c in jsonl(tmp_path / "o.jsonl")] == ["x", "x"]


def _texts(session: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [
        (m["role"], b["text"]) for m in session for b in m["content"] if b["type"] == "text" and m["role"] != "tool"
    ]


def _calls(session: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [(b["id"], b["input"]) for m in session for b in m["content"] if b["type"] == "tool_use"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(blocks={"text", "image", "thinking", "tool_use", "tool_result"}))
def test_any_canonical_session_converts_and_back_validates_keeping_texts_and_calls(
    session: list[dict[str, Any]],
) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, mid, back = Path(d) / "s.jsonl", Path(d) / "m.json", Path(d) / "b.jsonl"
        src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        convert("canonical", NAME, src, mid)  # the engine validates the UIMessages written
        assert not [f for f in validate([mid], fmt=NAME).findings if f.severity.name == "ERROR"]
        convert(NAME, "canonical", mid, back)  # and the canonical written back
        again = jsonl(back)
    assert [t for t in _texts(again) if t[1]] == [t for t in _texts(session) if t[1]]
    assert _calls(again) == _calls(session)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3)
    | st.sampled_from(["", "x", "text", "tool-x", "data-x", "output-available", "input-available", "user"]),
    lambda inner: st.lists(inner, max_size=2)
    | st.dictionaries(st.sampled_from(["type", "state", "text", "input", "output", "errorText", "parts"]), inner, max_size=2),
    max_leaves=6,
)  # fmt: skip
_damaged = damaged(st.builds(lambda: copy.deepcopy(VALID)), _JSON, max_depth=5)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged)
def test_a_damaged_conversation_is_reported_or_converts_never_crashes(conversation: list[dict[str, Any]]) -> None:
    reported_or_converts(NAME, "AS", "c.json", conversation)


# -- ModelMessages (convertToModelMessages output) ------------------------------------------


MODEL = orjson.loads((FIX / "valid_model_messages.json").read_bytes())


def test_the_model_fixture_holds_every_part_and_output_type() -> None:
    from conformance.formats.ai_sdk.model_checks import OUTPUT_FIELDS
    from conformance.formats.ai_sdk.rules import ALL_MODEL_PARTS

    parts = [p for m in MODEL if isinstance(m["content"], list) for p in m["content"]]
    assert {p["type"] for p in parts} == ALL_MODEL_PARTS
    outputs = {p["output"]["type"] for p in parts if p["type"] == "tool-result"}
    assert outputs == set(OUTPUT_FIELDS) - {"text", "error-json"}  # those two: the .jsonl and oracle cases


def test_model_messages_become_canonical(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_model_messages.json", dst)
    msgs = jsonl(dst)
    assert [m["role"] for m in msgs] == [
        "system", "user", "assistant", "tool", "tool", "assistant", "user", "assistant", "tool", "tool", "assistant",
    ]  # fmt: skip
    assert msgs[0]["content"] == [{"type": "text", "text": "You are a weather assistant."}]
    assert msgs[1]["content"][1] == {
        "type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png",
    }  # fmt: skip
    thinking, weather, station = msgs[2]["content"]
    assert thinking["signature"] == "c2lnbmF0dXJl" and weather["name"] == "get_weather"
    assert msgs[3]["content"][0]["content"] == [{"type": "text", "text": '{"temperature":18,"sky":"cloudy"}'}]
    assert msgs[4]["content"][0]["is_error"] is True and msgs[4]["metadata"]["parent_tool_use_id"] == station["id"]
    assert msgs[5]["content"] == [{"type": "text", "text": "It is 18 degrees and cloudy in Berlin."}]
    # the provider-executed search's result follows its assistant message; a denial is an error result
    assert msgs[8]["content"][0]["content"] == [{"type": "text", "text": "Berlin is the capital."}]
    assert msgs[9]["content"][0]["is_error"] is True
    assert msgs[9]["content"][0]["content"] == [{"type": "text", "text": "denied: too far"}]
    assert [k["part"]["type"] for k in msgs[7]["metadata"]["provider_raw"]["ai-sdk"]["model_kept"]] == [
        "tool-approval-request"
    ]
    got = {(f.rule, f.line, f.pointer) for f in findings}
    assert ("AS900", 3, "/1/content/2") in got  # the PDF: kept in provider_raw
    assert ("AS900", 13, "/3/content/0/output") in got  # json output as JSON text
    assert ("AS900", 19, "/6/content/4/output/value") in got  # an image-url item of a content output
    assert ("AS900", 26, "/7/content/0") in got  # the approval response
    assert ("AS901", 1, "") in got
    assert not [f for f in validate([dst]).findings if f.severity.name == "ERROR"]


def test_model_messages_convert_back_as_ui_messages_reporting_what_they_cannot_hold(tmp_path: Path) -> None:
    mid, back, lines = tmp_path / "c.jsonl", tmp_path / "b.json", tmp_path / "b.jsonl"
    convert(NAME, "canonical", FIX / "valid_model_messages.jsonl", mid)
    findings = convert("canonical", NAME, mid, lines)
    assert [f.rule for f in findings] == ["AS900"]  # session_id, created_at: once
    assert main(["validate", str(lines)]) == 0
    convert(NAME, "canonical", FIX / "valid_model_messages.json", mid, force=True)
    findings = convert("canonical", NAME, mid, back)
    assert sorted((f.line, f.pointer) for f in findings if f.line) == [
        (2, "/metadata/provider_raw"), (8, "/metadata/provider_raw"), (11, "/metadata/provider_raw"),
    ]  # fmt: skip
    ui = orjson.loads(back.read_bytes())
    assert [m["role"] for m in ui] == ["system", "user", "assistant", "user", "assistant"]
    assert [(p["type"], p.get("state")) for p in ui[2]["parts"] if p["type"].startswith("tool-")] == [
        ("tool-get_weather", "output-available"), ("tool-lookup_station", "output-error"),
    ]  # fmt: skip


_damaged_model = damaged(st.builds(lambda: copy.deepcopy(MODEL)), _JSON, max_depth=5)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged_model)
def test_damaged_model_messages_are_reported_or_convert_never_crash(conversation: list[dict[str, Any]]) -> None:
    reported_or_converts(NAME, "AS", "c.json", conversation)
