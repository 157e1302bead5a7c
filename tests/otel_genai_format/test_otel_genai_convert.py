"""otel-genai <-> canonical: the semantic conventions' documented example converts, every
loss is reported once where it happens, and canonical -> otel-genai -> canonical keeps
everything a record can carry, losing exactly what was reported (issue 28)."""

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
NAME = "otel-genai"
IN, OUT, SYS = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"


def test_documented_shapes_become_canonical(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_span.json", dst)
    msgs = jsonl(dst)
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant"]
    assert msgs[0]["content"] == [{"type": "text", "text": "You are a helpful bot"}]
    assert msgs[1]["content"][1] == {
        "type": "image", "source": {"kind": "url", "data": "https://example.com/paris.png"}, "media_type": "image/png",
    }  # fmt: skip
    (call,) = msgs[2]["content"]
    assert call["name"] == "get_weather" and call["input"] == {"location": "Paris"} and call["id"].startswith("tu_")
    assert msgs[3]["content"] == [
        {"type": "tool_result", "tool_use_id": call["id"], "content": [{"type": "text", "text": "rainy, 57°F"}]}
    ]
    assert msgs[4]["content"][0] == {"type": "thinking", "text": "It said rainy."}
    meta = msgs[4]["metadata"]  # the output message has the call's model and tokens
    assert (meta["model"], meta["provider"]) == ("openai:gpt-4o-2024-08-06", "openai")
    assert (meta["usage"]["input_tokens"], meta["usage"]["output_tokens"]) == (97, 52)
    assert msgs[2]["metadata"]["model"] == "openai:unknown"  # an input message's model is not recorded
    got = sorted((f.rule, f.line, f.pointer) for f in findings)
    assert got == [("OT900", 1, ""), ("OT901", 1, "")]  # gen_ai.operation.name; ids, times


def test_json_text_attributes_blobs_and_finish_reasons_convert_and_each_loss_is_located(tmp_path: Path) -> None:
    dst = tmp_path / "c.jsonl"
    findings = convert(NAME, "canonical", FIX / "valid_records.jsonl", dst)
    msgs = jsonl(dst)
    assert [m["role"] for m in msgs] == ["user", "user", "assistant"]
    assert msgs[0]["content"][1] == {
        "type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png",
    }  # fmt: skip
    assert msgs[2]["content"] == [{"type": "text", "text": "hello"}]
    assert sorted((f.rule, f.line, f.pointer) for f in findings) == [
        ("OT900", 1, "/0/parts/2"),  # the file part
        ("OT900", 2, "/gen_ai.output.messages/0/finish_reason"),  # length
        ("OT901", 1, ""),
        ("OT901", 2, ""),
    ]


def test_attributes_that_are_no_token_counts_are_a_located_loss(tmp_path: Path) -> None:
    record = {IN: [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}],
              OUT: [{"role": "assistant", "parts": [{"type": "text", "content": "yo"}], "finish_reason": "stop"}],
              "gen_ai.usage.input_tokens": True, "gen_ai.usage.output_tokens": 4}  # fmt: skip
    src = tmp_path / "r.json"
    src.write_bytes(orjson.dumps(record))
    findings = convert(NAME, "canonical", src, tmp_path / "c.jsonl")
    assert [(f.rule, f.message.split(" ")[0]) for f in findings if f.rule == "OT900"] == [
        ("OT900", "gen_ai.usage.input_tokens")
    ]
    usage = jsonl(tmp_path / "c.jsonl")[1]["metadata"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (0, 4)


def test_additive_block_fields_are_reported_dropped(tmp_path: Path) -> None:
    """§10.2: a field a canonical v1 block does not define is carried by no peer: reported where it is."""
    findings = convert_additive_block_field(NAME, tmp_path)
    assert [(f.rule, f.line, f.pointer) for f in findings if f.line is not None] == [("OT900", 1, "/content/1")]
    assert "cache_control" in next(f.message for f in findings if f.line is not None)


def test_a_file_that_does_not_validate_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="OT005"):
        convert(NAME, "canonical", FIX / "OT005_finish.json", tmp_path / "c.jsonl")
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
         "content": [{"type": "tool_result", "tool_use_id": TID, "content": [{"type": "text", "text": "boom"}], "is_error": True}]},
        {**BASE, "id": "01J00000000000000000000004", "created_at": "2024-06-01T00:00:00.000004Z", "role": "assistant",
         "metadata": META, "content": [{"type": "text", "text": "jammed"}]},
    ]  # fmt: skip
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
    dst = tmp_path / "o.json"
    findings = convert("canonical", NAME, src, dst)
    got = sorted((f.rule, f.line or 0, f.pointer) for f in findings)
    assert got == [
        ("OT900", 0, ""),  # ids, session, times: once per file
        ("OT900", 1, "/content/0"),  # the file_ref image
        ("OT900", 2, "/content/0/signature"),
        ("OT900", 2, "/content/1"),  # redacted thinking
        ("OT900", 2, "/metadata"),  # an input message keeps no model, provider, usage
        ("OT900", 3, "/content/0/is_error"),
        ("OT900", 4, "/metadata"),  # routing, usage cost
    ]
    record = orjson.loads(dst.read_bytes())
    assert [m["role"] for m in record[IN]] == ["user", "assistant", "tool"]
    assert record[IN][0]["parts"][0] == {
        "type": "blob",
        "modality": "image",
        "mime_type": "image/png",
        "content": "iVBORw0KGgo=",
    }
    assert record[IN][1]["parts"] == [
        {"type": "reasoning", "content": "t"}, {"type": "tool_call", "id": TID, "name": "roll", "arguments": {"n": 1}},
    ]  # fmt: skip
    assert record[IN][2]["parts"] == [{"type": "tool_call_response", "id": TID, "response": "boom"}]
    assert record[OUT] == [
        {"role": "assistant", "parts": [{"type": "text", "content": "jammed"}], "finish_reason": "stop"}
    ]
    assert (record["gen_ai.response.model"], record["gen_ai.provider.name"]) == ("gpt-4o", "openai")
    assert (record["gen_ai.usage.input_tokens"], record["gen_ai.usage.output_tokens"]) == (3, 5)
    assert validate([dst], fmt=NAME).findings == []


# -- the round trip --------------------------------------------------------------------


def _dropped(b: dict[str, Any]) -> bool:
    return b["type"] == "redacted_thinking" or (b["type"] == "image" and b["source"]["kind"] == "file_ref")


def _expected_losses(session: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """Where converting `session` to a record must report a loss (line = message index
    + 1), worked out here from what the schemas hold, not by the converter's code: only
    a final assistant message (the output message) keeps its model, provider and tokens."""
    out: list[tuple[int, str]] = []
    final = len(session) if session[-1]["role"] == "assistant" else None
    for i, m in enumerate(session, 1):
        dropped = [
            k for k, v in m["metadata"].items()
            if v is not None and not (k == "status" and v == "complete")
            and not (m["role"] == "tool" and k == "parent_tool_use_id")
            and not (i == final and k in ("model", "provider"))
        ]  # fmt: skip
        if dropped:
            out.append((i, "/metadata"))
        for j, b in enumerate(m["content"]):
            if _dropped(b):
                out.append((i, f"/content/{j}"))
            if b["type"] == "thinking" and b.get("signature") is not None:
                out.append((i, f"/content/{j}/signature"))
            if b["type"] == "tool_result" and b.get("is_error") is True:
                out.append((i, f"/content/{j}/is_error"))
    return sorted(out)


def _carried(m: dict[str, Any]) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    for b in m["content"]:
        if _dropped(b):
            continue
        if b["type"] == "thinking":
            b = {"type": "thinking", "text": b["text"]}
        if b["type"] == "tool_result":
            b = {k: v for k, v in b.items() if k != "is_error"}
        blocks.append(b)
    if not blocks and m["role"] in ("user", "assistant"):
        blocks = [{"type": "text", "text": ""}]  # what reading it back writes (TS101, reported OT901)
    return {"role": m["role"], "content": blocks}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(conversations(blocks={"text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result"}))
def test_round_trip_keeps_what_a_record_carries_and_reports_exactly_the_rest(session: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, mid, back = Path(d) / "s.jsonl", Path(d) / "m.json", Path(d) / "b.jsonl"
        src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        findings = convert("canonical", NAME, src, mid)
        assert sorted((f.line, f.pointer) for f in findings if f.line is not None) == _expected_losses(session)
        assert [f.pointer for f in findings if f.line is None] == [""]  # ids, session, times: once per file
        again_findings = convert(NAME, "canonical", mid, back)
        assert {f.rule for f in again_findings} <= {"OT901"}  # nothing more lost on the way back
        again = jsonl(back)
    assert [_carried(m) for m in again] == [_carried(m) for m in session]
    last, back_last = session[-1], again[-1]
    if last["role"] == "assistant":  # the output message keeps its model, provider and tokens
        keep = ("model", "provider")
        assert [back_last["metadata"][k] for k in keep] == [last["metadata"][k] for k in keep]
        tokens = ("input_tokens", "output_tokens")
        assert [back_last["metadata"]["usage"][k] for k in tokens] == [last["metadata"]["usage"][k] for k in tokens]


# -- from OTel: any valid record converts, and converting back keeps its messages ---------

_TEXT = st.text(max_size=8)
_ARGS = st.dictionaries(st.sampled_from(["a", "b"]), st.integers(-5, 5) | _TEXT, max_size=2)
_USER_PART = st.one_of(
    _TEXT.map(lambda t: {"type": "text", "content": t}),
    st.sampled_from(["https://example.com/a.png", "https://x.test/c.jpeg?s=1"]).map(
        lambda u: {
            "type": "uri",
            "modality": "image",
            "mime_type": "image/png" if u.endswith("png") else "image/jpeg",
            "uri": u,
        }
    ),
    st.just({"type": "blob", "modality": "image", "mime_type": "image/gif", "content": "R0lGODlh"}),
)


@st.composite
def _record(draw: st.DrawFn) -> dict[str, Any] | list[dict[str, Any]]:
    system = [{"type": "text", "content": t} for t in draw(st.lists(_TEXT, max_size=2))]
    msgs: list[dict[str, Any]] = []
    serial = 0
    for _ in range(draw(st.integers(1, 3))):
        msgs.append({"role": "user", "parts": draw(st.lists(_USER_PART, min_size=1, max_size=3))})
        parts: list[dict[str, Any]] = [{"type": "reasoning", "content": t} for t in draw(st.lists(_TEXT, max_size=1))]
        parts += [{"type": "text", "content": t} for t in draw(st.lists(_TEXT, max_size=2))]
        calls = []
        for _ in range(draw(st.integers(0 if parts else 1, 2))):
            serial += 1
            calls.append({"type": "tool_call", "id": f"call_{serial}", "name": draw(st.from_regex(r"\A[a-z][a-z0-9_]{0,8}\Z")),
                          "arguments": draw(_ARGS)})  # fmt: skip
        msgs.append({"role": "assistant", "parts": parts + calls})
        for c in calls:
            msgs.append(
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": c["id"], "response": draw(_TEXT)}]}
            )
    if draw(st.booleans()):  # a bare array: the value of gen_ai.input.messages
        return msgs
    record: dict[str, Any] = {IN: msgs, OUT: [{"role": "assistant", "parts": [{"type": "text", "content": draw(_TEXT)}],
                                               "finish_reason": "stop"}]}  # fmt: skip
    if system:
        record[SYS] = system
    if draw(st.booleans()):
        record = {k: orjson.dumps(v).decode() for k, v in record.items()}  # JSON text, as spans may hold them
    record.update({"gen_ai.provider.name": "openai", "gen_ai.response.model": "gpt-4o", "gen_ai.usage.input_tokens": 3})
    return record


def _flat(record: Any) -> list[tuple[str, list[Any]]]:
    """Every message of a record in order (system instructions first, as a system
    message), each part's payload; tool call ids left out (canonical mints its own)."""
    if isinstance(record, list):
        record = {IN: record}
    section = {k: orjson.loads(v) if isinstance(v, str) else v for k, v in record.items() if k in (IN, OUT, SYS)}
    msgs = (
        ([{"role": "system", "parts": section[SYS]}] if section.get(SYS) else [])
        + section.get(IN, [])
        + section.get(OUT, [])
    )
    out = []
    for m in msgs:
        parts: list[Any] = []
        for p in m["parts"]:
            if p["type"] == "tool_call":
                parts.append(("tool_call", p["name"], p["arguments"]))
            elif p["type"] == "tool_call_response":
                r = p["response"]
                parts.append(("tool_call_response", [r] if isinstance(r, str) else r))
            else:
                parts.append(p)
        out.append((m["role"], parts))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_record())
def test_any_valid_record_converts_and_back_keeps_its_messages(record: Any) -> None:
    with tempfile.TemporaryDirectory() as d:
        src, mid, back = Path(d) / "r.json", Path(d) / "c.jsonl", Path(d) / "b.json"
        src.write_bytes(orjson.dumps(record))
        assert validate([src]).findings == []  # detected without --format, and clean
        findings = convert(NAME, "canonical", src, mid)  # the engine validates the canonical output
        assert {f.rule for f in findings} == {"OT901"} and all(f.line is not None for f in findings)
        convert("canonical", NAME, mid, back)
        again = orjson.loads(back.read_bytes())
    assert _flat(again) == _flat(record)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "x", "user", "text", "tool_call", "blob", "image"]),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["type", "role", "parts", "content", "id"]), inner, max_size=2),
    max_leaves=6,
)  # fmt: skip


_damaged = damaged(_record(), _JSON, max_depth=6)  # a valid record, one value replaced by arbitrary JSON


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_damaged)
def test_a_damaged_record_is_reported_or_converts_never_crashes(record: Any) -> None:
    reported_or_converts(NAME, "OT", "r.json", record)
