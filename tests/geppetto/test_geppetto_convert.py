"""Conversion between geppetto Turn YAML and canonical messages (GE900, GE901)."""

from __future__ import annotations

import base64
import functools
import json
import random
import re
import string
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.api import validate
from conformance.benchmarks import synthetic
from conformance.cli import main
from conformance.convert import convert
from conformance.core.errors import InputError
from conformance.core.findings import Finding, Severity
from conformance.core.jsonio import Record
from conformance.formats import Options
from conformance.formats.canonical import CanonicalRun
from conformance.formats.geppetto.checker import GeppettoRun
from conformance.formats.geppetto.mapping import (
    CANONICAL_KEY,
    RESULT_KEY,
    SIGNATURE_KEY,
    IdSource,
    messages_to_turn,
    turn_to_messages,
)
from conformance.formats.geppetto.yamlio import Document, dump, read_yaml

TU = re.compile(r"tu_[0-7][0-9A-HJKMNP-TV-Z]{25}\Z")
PNG = base64.b64encode(bytes.fromhex("89504e470d0a1a0a0000000d49484452")).decode()


def ids(seed: int = 0) -> IdSource:
    return IdSource(random.Random(seed), now_us=1_778_241_600_000_000)


@functools.cache
def geppetto_run() -> GeppettoRun:
    return GeppettoRun(Options())  # keeps no state between documents


def geppetto_errors(turn: dict[str, Any]) -> list[str]:
    run = geppetto_run()
    return [f.format() for f in run.check_document(Document("mem", turn, {}, 1)) if f.severity == Severity.ERROR]


def canonical_findings(messages: list[dict[str, Any]]) -> list[Finding]:
    run = CanonicalRun(Options())
    out: list[Finding] = []
    for i, m in enumerate(messages):
        out += run.check_message(Record("mem", i + 1, "", m, 0))
    return out + list(run.finish())


def load_yaml(path: Path) -> Any:
    return next(d for d in read_yaml(path, max_bytes=1 << 26) if isinstance(d, Document)).value


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


TOOL_TURN = """\
id: t1
blocks:
  - id: b1
    kind: user
    role: user
    payload:
      text: Weather in Zurich?
  - id: b2
    kind: reasoning
    role: assistant
    payload:
      text: I should call the tool.
      encrypted_content: gAAAAA-opaque
    metadata:
      geppetto.inference_result@v1: &r1
        provider: openai
        model: gpt-5
        finish_class: tool_calls_pending
        usage: {input_tokens: 10, output_tokens: 5}
        duration_ms: 120
        cost: 0.00015
  - id: call-7
    kind: tool_call
    payload:
      id: call-7
      name: lookup_weather
      args: '{"city": "Zurich"}'
    metadata:
      geppetto.inference_result@v1: *r1
  - id: b4
    kind: tool_use
    payload:
      id: call-7
      result: {temperature: 21 C}
      error: ""
  - kind: other
    payload: {note: an app-specific block}
"""


# -- geppetto -> canonical ------------------------------------------------------------


def test_tool_turn_to_canonical_groups_one_inference_and_reports_each_lossy_step(
    tmp_path: Path,
) -> None:
    src = write(tmp_path, "turn.yaml", TOOL_TURN)
    dst = tmp_path / "out.jsonl"
    findings = convert("geppetto", "canonical", src, dst)
    lossy = [(f.rule, f.line, f.pointer) for f in findings if f.rule == "GE900"]
    assert lossy == [
        ("GE900", 13, "/blocks/1/payload/encrypted_content"),
        ("GE900", 36, "/blocks/4"),
    ]
    synth = [f for f in findings if f.rule == "GE901" and f.pointer.startswith("/blocks")]
    assert len(synth) == 1 and synth[0].pointer == "/blocks/1" and "pricing_version" in synth[0].message
    # issue 17: the invented created_at and session_id are reported (the turn has neither)
    invented = [f.message for f in findings if f.rule == "GE901" and not f.pointer.startswith("/blocks")]
    assert len(invented) == 2 and "created_at is a placeholder" in invented[0] and "names no session" in invented[1]
    messages = [orjson.loads(line) for line in dst.read_bytes().splitlines()]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assistant = messages[1]
    assert [c["type"] for c in assistant["content"]] == ["thinking", "tool_use"]
    meta = assistant["metadata"]
    assert meta["model"] == "openai:gpt-5" and meta["provider"] == "openai"
    assert meta["usage"]["cost_usd"] == "0.00015" and meta["usage"]["latency_ms"] == 120
    tool_use = assistant["content"][1]
    assert TU.match(tool_use["id"]) and tool_use["input"] == {"city": "Zurich"}
    assert messages[2]["metadata"]["parent_tool_use_id"] == tool_use["id"]
    assert messages[2]["content"][0]["tool_use_id"] == tool_use["id"]
    raw = assistant["metadata"]["provider_raw"]["geppetto"]
    assert raw["blocks"][1]["block"]["payload"]["id"] == "call-7"  # original id kept
    assert validate([dst], fmt="canonical").errors == 0


def test_round_trip_restores_the_file(tmp_path: Path) -> None:
    src = write(tmp_path, "turn.yaml", TOOL_TURN)
    mid, back = tmp_path / "mid.jsonl", tmp_path / "back.yaml"
    convert("geppetto", "canonical", src, mid)
    assert convert("canonical", "geppetto", mid, back) == []
    assert load_yaml(back) == load_yaml(src)


def test_canonical_edits_win_over_the_round_trip_store(tmp_path: Path) -> None:
    src = write(tmp_path, "turn.yaml", TOOL_TURN)
    mid, back = tmp_path / "mid.jsonl", tmp_path / "back.yaml"
    convert("geppetto", "canonical", src, mid)
    messages = [orjson.loads(line) for line in mid.read_bytes().splitlines()]
    messages[0]["content"][0]["text"] = "Weather in Bern?"
    mid.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages))
    convert("canonical", "geppetto", mid, back)
    turn = load_yaml(back)
    assert turn["blocks"][0]["payload"]["text"] == "Weather in Bern?"
    assert turn["blocks"][0]["id"] == "b1"


def test_json_suffix_writes_an_array(tmp_path: Path) -> None:
    src = write(tmp_path, "turn.yaml", TOOL_TURN)
    dst = tmp_path / "out.json"
    convert("geppetto", "canonical", src, dst)
    assert isinstance(orjson.loads(dst.read_bytes()), list)


def test_images_map_to_canonical_and_back_exactly() -> None:
    turn = {
        "blocks": [
            {
                "kind": "user",
                "role": "user",
                "payload": {
                    "text": "look",
                    "images": [
                        {"content": f"data:image/png;base64,{PNG}"},
                        {"media_type": "image/PNG", "content": PNG, "detail": "high"},
                        {"url": "https://example.com/a/b.jpg"},
                        {"media_type": "image/png", "file_id": "file-123"},
                    ],
                },
            },
        ]
    }
    messages, losses = turn_to_messages(turn, ids())
    content = messages[0]["content"]
    assert [c["type"] for c in content] == ["text", "image", "image", "image"]
    assert content[1] == {
        "type": "image",
        "source": {"kind": "base64", "data": PNG},
        "media_type": "image/png",
    }
    assert content[2]["media_type"] == "image/png"
    assert content[3] == {
        "type": "image",
        "source": {"kind": "url", "data": "https://example.com/a/b.jpg"},
        "media_type": "image/jpeg",
    }
    assert [loss.pointer for loss in losses] == ["/blocks/0/payload/images/3"]
    assert not [f for f in canonical_findings(messages) if f.severity == Severity.ERROR]
    back, _ = messages_to_turn(messages, ids())
    assert back == turn


def test_an_image_url_that_is_not_a_url_is_dropped_and_reported() -> None:
    """Canonical §4.2 holds URLs only (TS120): a relative geppetto image url is a reported
    loss, never a canonical message that fails validation."""
    turn = {
        "blocks": [
            {
                "kind": "user",
                "role": "user",
                "payload": {"text": "look", "images": [{"url": "images/cat.png"}, {"url": "https://x.test/a.png"}]},
            },
        ]
    }
    messages, losses = turn_to_messages(turn, ids())
    assert [c["type"] for c in messages[0]["content"]] == ["text", "image"]
    assert messages[0]["content"][1]["source"] == {"kind": "url", "data": "https://x.test/a.png"}
    assert [(loss.pointer, "absolute URL" in loss.message) for loss in losses] == [
        ("/blocks/0/payload/images/0/url", True)
    ]
    assert not [f for f in canonical_findings(messages) if f.severity == Severity.ERROR]


def test_gemini_thought_signature_becomes_the_thinking_signature() -> None:
    ir = {"provider": "gemini", "model": "gemini-2.5-flash", "finish_class": "completed"}
    turn = {
        "blocks": [
            {
                "kind": "reasoning",
                "role": "assistant",
                "payload": {"text": "hmm"},
                "metadata": {SIGNATURE_KEY: "c2lnLTE=", RESULT_KEY: ir},
            },
            {
                "kind": "llm_text",
                "role": "assistant",
                "payload": {"text": "done"},
                "metadata": {RESULT_KEY: ir},
            },
        ]
    }
    messages, losses = turn_to_messages(turn, ids())
    assert len(messages) == 1
    assert messages[0]["content"][0] == {"type": "thinking", "text": "hmm", "signature": "c2lnLTE="}
    assert [loss.rule.id for loss in losses] == ["GE901"]
    assert messages_to_turn(messages, ids())[0] == turn


def test_summary_only_reasoning_and_non_object_args() -> None:
    turn = {
        "blocks": [
            {
                "kind": "reasoning",
                "payload": {
                    "summary": [
                        {"type": "summary_text", "text": "a"},
                        {"type": "summary_text", "text": "b"},
                    ]
                },
            },
            {"kind": "tool_call", "payload": {"id": "c1", "name": "f", "args": [1, 2]}},
            {"kind": "tool_use", "payload": {"id": "c1", "error": "boom"}},
        ]
    }
    messages, losses = turn_to_messages(turn, ids())
    assert messages[0]["content"][0]["text"] == "a\n\nb"
    assert messages[0]["content"][1]["input"] == {}
    assert messages[1]["content"][0]["is_error"] is True
    assert messages[1]["content"][0]["content"] == [{"type": "text", "text": "boom"}]
    assert [loss.pointer for loss in losses if loss.rule.id == "GE900"] == ["/blocks/1/payload/args"]
    assert messages_to_turn(messages, ids())[0] == turn


def test_a_turn_without_blocks_keeps_its_metadata_in_a_placeholder() -> None:
    turn = {"id": "t", "blocks": [], "metadata": {"geppetto.session_id@v1": "s-1"}}
    messages, losses = turn_to_messages(turn, ids())
    assert [(m["role"], m["content"], m["session_id"]) for m in messages] == [("system", [], "s-1")]
    assert losses == []
    assert messages_to_turn(messages, ids())[0] == turn


def test_refuses_invalid_input_and_fixtures_and_writes_nothing(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.yaml", "blocks:\n  - kind: tool_use\n    payload: {id: x}\n")
    dst = tmp_path / "out.jsonl"
    with pytest.raises(InputError, match=r"does not validate as geppetto.*GE301"):
        convert("geppetto", "canonical", bad, dst)
    fixture = write(tmp_path, "fx.yaml", "version: 1\nturn:\n  blocks: []\nfollowups: []\n")
    with pytest.raises(InputError, match="llm-runner fixture"):
        convert("geppetto", "canonical", fixture, dst)
    assert not dst.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "fx.yaml"]


# -- canonical -> geppetto ------------------------------------------------------------


def synthetic_session(n: int, seed: int) -> list[dict[str, Any]]:
    msgs = list(synthetic.messages(400, seed=seed, session_len=n))
    first = msgs[0]["session_id"]
    return [m for m in msgs if m["session_id"] == first]


def test_canonical_session_to_geppetto_validates_and_reports_signatures(tmp_path: Path) -> None:
    for seed in range(3):
        session = synthetic_session(40, seed)
        src = tmp_path / f"s{seed}.jsonl"
        src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        dst = tmp_path / f"s{seed}.yaml"
        findings = convert("canonical", "geppetto", src, dst)
        signed = [
            (i + 1, f"/content/{j}/signature")
            for i, m in enumerate(session)
            for j, c in enumerate(m["content"])
            if c["type"] == "thinking" and c.get("signature")
        ]
        assert [(f.line, f.pointer) for f in findings if f.rule == "GE900"] == signed
        report = validate([dst], fmt="geppetto")
        assert report.errors == 0, [f.format() for f in report.findings]


def test_canonical_to_geppetto_and_back_keeps_content_and_metadata() -> None:
    session = synthetic_session(40, 3)
    turn, _ = messages_to_turn(session, ids())
    assert geppetto_errors(turn) == []
    again, _ = turn_to_messages(turn, ids(1))
    assert [m["role"] for m in again] == [m["role"] for m in session]
    tool_map: dict[str, str] = {}
    for old, new in zip(session, again, strict=True):
        for a, b in zip(old["content"], new["content"], strict=True):
            if a["type"] == "tool_use":
                tool_map[a["id"]] = b["id"]
                a = {**a, "id": b["id"]}
            if a["type"] == "tool_result":
                a = {**a, "tool_use_id": tool_map[a["tool_use_id"]]}
            if a["type"] == "thinking" and a.get("signature"):
                a = {k: v for k, v in a.items() if k != "signature"}  # reported lossy above
            assert a == b
        meta_old = {k: v for k, v in old["metadata"].items() if k not in ("provider_raw", "parent_tool_use_id")}
        meta_new = {k: v for k, v in new["metadata"].items() if k not in ("provider_raw", "parent_tool_use_id")}
        assert meta_new == meta_old
    assert [f for f in canonical_findings(again) if f.severity == Severity.ERROR] == []


def test_native_canonical_maps_to_geppetto_shapes() -> None:
    session = synthetic_session(12, 5)
    turn, _ = messages_to_turn(session, ids())
    kinds = [b["kind"] for b in turn["blocks"]]
    assert kinds[0] == "system" and "tool_call" in kinds and "tool_use" in kinds
    call = next(b for b in turn["blocks"] if b["kind"] == "tool_call")
    assert call["id"] == call["payload"]["id"] and TU.match(call["payload"]["id"])
    assert RESULT_KEY in call["metadata"]
    assert turn["metadata"] == {"geppetto.session_id@v1": session[0]["session_id"]}
    first_of_message = [b for b in turn["blocks"] if CANONICAL_KEY in (b.get("metadata") or {})]
    assert len(first_of_message) == len(session)


def test_unknown_blocks_and_empty_messages_are_dropped_and_reported() -> None:
    session = synthetic_session(6, 2)
    session[1]["content"].insert(0, {"type": "video", "data": "..."})  # unknown to every revision
    session.append(
        {
            **session[-1],
            "id": "7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
            "content": [],
            "metadata": {**session[-1]["metadata"], "status": "partial"},
        }
    )
    assert [f for f in canonical_findings(session) if f.severity == Severity.ERROR] == []
    turn, losses = messages_to_turn(session, ids())
    dropped = [(x.record, x.pointer) for x in losses if not x.pointer.endswith("/signature")]
    assert dropped == [
        (1, "/content/0"),
        (len(session) - 1, ""),
    ]
    assert geppetto_errors(turn) == []


def test_refuses_several_sessions(tmp_path: Path) -> None:
    msgs = list(synthetic.messages(80, seed=1, session_len=40))
    assert len({m["session_id"] for m in msgs}) == 2
    src = tmp_path / "two.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in msgs))
    with pytest.raises(InputError, match="2 sessions"):
        convert("canonical", "geppetto", src, tmp_path / "out.yaml")
    assert not (tmp_path / "out.yaml").exists()


def test_cli_convert_and_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = write(tmp_path, "turn.yaml", TOOL_TURN)
    dst = tmp_path / "out.jsonl"
    assert main(["convert", "--from", "geppetto", "--to", "canonical", str(src), str(dst)]) == 0
    err = capsys.readouterr().err
    assert "GE900" in err and "wrote" in err
    assert main(["convert", "--from", "geppetto", "--to", "canonical", str(src), str(dst)]) == 2  # exists
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.samples
def test_real_turns_round_trip_exactly(samples: Path, tmp_path: Path) -> None:
    for src in sorted((samples / "geppetto").glob("*-turn.yaml")):
        mid, back = tmp_path / f"{src.stem}.jsonl", tmp_path / f"{src.stem}.yaml"
        findings = convert("geppetto", "canonical", src, mid)
        assert all(f.severity == Severity.WARNING for f in findings)
        canon = validate([mid], fmt="canonical")
        assert canon.errors == 0
        convert("canonical", "geppetto", mid, back)
        assert load_yaml(back) == load_yaml(src), src.name


# -- property: geppetto -> canonical -> geppetto is the identity ----------------------

TEXT = st.text(max_size=30)
KEY = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=8)
# canonical tool names are snake_case (spec §4.2, TS306)
TOOL_NAME = st.from_regex(r"\A[a-z][a-z0-9]{0,5}(?:_[a-z0-9]{1,4}){0,2}\Z")
ID = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=1, max_size=10)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.floats(allow_nan=False, allow_infinity=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
APP_META = st.dictionaries(KEY.map(lambda k: f"app.{k}@v1"), JSON, max_size=2)
USAGE = st.fixed_dictionaries(
    {},
    optional={
        "input_tokens": st.integers(0, 10**6),
        "output_tokens": st.integers(0, 10**6),
        "cached_tokens": st.integers(0, 10**4),
        "cache_creation_input_tokens": st.integers(0, 10**4),
        "cache_read_input_tokens": st.integers(0, 10**4),
    },
)
RESULT = st.fixed_dictionaries(
    {},
    optional={
        "provider": st.sampled_from(["gemini", "openai", "claude", "My Provider"]),
        "model": st.sampled_from(["gemini-2.5-flash", "gpt-5", "openai:gpt-5", "claude sonnet"]),
        "stop_reason": TEXT,
        "truncated": st.booleans(),
        "finish_class": st.sampled_from(
            ["completed", "max_tokens", "tool_calls_pending", "interrupted", "error", "unknown"]
        ),
        "usage": USAGE,
        "max_tokens": st.integers(0, 10**5),
        "duration_ms": st.integers(0, 10**6),
        "cost": st.floats(0, 100, allow_nan=False),
        "request_id": TEXT,
        "response_id": TEXT,
        "extra": st.dictionaries(TEXT, JSON, max_size=2),
    },
)
IMAGE = st.one_of(
    st.builds(
        lambda b: {"content": "data:image/png;base64," + base64.b64encode(b"\x89PNG" + b).decode()},
        st.binary(max_size=12),
    ),
    st.builds(
        lambda b: {
            "media_type": "image/jpeg",
            "content": base64.b64encode(b).decode(),
            "detail": "low",
        },
        st.binary(max_size=12),
    ),
    st.builds(lambda p: {"url": f"https://example.com/{p}.png"}, KEY),
    st.just({"media_type": "image/png", "file_id": "file-1"}),
    st.just({"media_type": "image/png", "content": "not base64!"}),
)


@st.composite
def turns(draw: st.DrawFn) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    pending: list[str] = []
    n_calls = 0
    for i in range(draw(st.integers(0, 9))):
        kind = draw(
            st.sampled_from(
                [
                    "system",
                    "user",
                    "llm_text",
                    "reasoning",
                    "tool_call",
                    "tool_use",
                    "tool_use",
                    "other",
                ]
            )
        )
        if kind == "tool_use" and not pending:
            kind = "llm_text"
        b: dict[str, Any] = {}
        if draw(st.booleans()):
            b["id"] = f"b{i}-" + draw(ID)
        b["kind"] = kind
        roles = {
            "system": ["system"],
            "user": ["user"],
            "llm_text": [None, "assistant"],
            "reasoning": [None, "assistant"],
            "tool_call": [None, "assistant"],
            "tool_use": [None, "tool", "user"],
            "other": [None, "assistant", "user"],
        }[kind]
        role = draw(st.sampled_from(roles))
        if role is not None:
            b["role"] = role
        p: dict[str, Any] = {}
        if kind in ("system", "llm_text", "user"):
            p["text"] = draw(TEXT)
            if kind == "llm_text" and draw(st.booleans()):
                p["item_id"] = "msg_" + draw(ID)
            if kind == "user" and draw(st.booleans()):
                p["images"] = draw(st.lists(IMAGE, max_size=3))
        elif kind == "reasoning":
            if draw(st.booleans()):
                p["text"] = draw(TEXT)
            if draw(st.booleans()):
                p["summary"] = draw(
                    st.lists(st.builds(lambda t: {"type": "summary_text", "text": t}, TEXT), max_size=2)
                )
            if draw(st.booleans()):
                p["encrypted_content"] = draw(TEXT)
        elif kind == "tool_call":
            n_calls += 1
            cid = f"call{n_calls}-" + draw(ID)
            pending.append(cid)
            p.update(id=cid, name=draw(TOOL_NAME))
            args = draw(st.sampled_from(["dict", "json", "list", "absent", "null", "text"]))
            if args != "absent":
                p["args"] = {
                    "dict": draw(st.dictionaries(TEXT, JSON, max_size=3)),
                    "json": json.dumps(draw(st.dictionaries(TEXT, JSON, max_size=2))),
                    "list": draw(st.lists(JSON, max_size=2)),
                    "null": None,
                    "text": draw(TEXT),
                }[args]
            if draw(st.booleans()):
                p["correlation"] = {"run_id": draw(ID), "tool_call_id": cid}
        elif kind == "tool_use":
            p["id"] = pending.pop(draw(st.integers(0, len(pending) - 1)))
            result = draw(st.sampled_from(["text", "json", "absent", "null"]))
            if result != "absent":
                p["result"] = {"text": draw(TEXT), "json": draw(JSON), "null": None}[result]
            error = draw(st.sampled_from(["", "boom", None]))
            if error is not None:
                p["error"] = error
        else:
            b["kind"] = draw(st.sampled_from(["other", "widget"]))
            p = draw(st.dictionaries(KEY, JSON, max_size=2))
        if kind == "reasoning" and not p and draw(st.booleans()):
            b["payload"] = None
        elif p or kind != "other" or draw(st.booleans()):
            b["payload"] = p
        meta: dict[str, Any] = draw(APP_META)
        if kind in ("llm_text", "reasoning", "tool_call") and draw(st.booleans()):
            meta[RESULT_KEY] = draw(RESULT)
        if kind == "reasoning" and draw(st.booleans()):
            meta[SIGNATURE_KEY] = base64.b64encode(draw(st.binary(min_size=1, max_size=8))).decode()
        if meta:
            b["metadata"] = meta
        blocks.append(b)
    turn: dict[str, Any] = {"blocks": blocks}
    if draw(st.booleans()):
        turn["id"] = draw(ID)
    if draw(st.booleans()):
        turn = {"version": 1, **turn}
    meta = draw(APP_META)
    if draw(st.booleans()):
        meta["geppetto.session_id@v1"] = draw(ID)
    if draw(st.booleans()):
        meta[RESULT_KEY] = draw(RESULT)
    if meta:
        turn["metadata"] = meta
    if draw(st.booleans()):
        turn["data"] = {"geppetto.agent_mode@v1": draw(TEXT), **draw(APP_META)}
    return turn


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns(), st.integers(0, 2**32))
def test_geppetto_to_canonical_and_back_is_the_identity(turn: dict[str, Any], seed: int) -> None:
    assert geppetto_errors(turn) == []
    messages, losses = turn_to_messages(turn, ids(seed))
    errors = [f.format() for f in canonical_findings(messages) if f.severity == Severity.ERROR]
    assert errors == []
    # each lossy step once per occurrence
    encrypted = [
        f"/blocks/{i}/payload/encrypted_content"
        for i, b in enumerate(turn["blocks"])
        if isinstance(b.get("payload"), dict) and b["payload"].get("encrypted_content")
    ]
    assert [loss.pointer for loss in losses if loss.pointer.endswith("/encrypted_content")] == encrypted
    others = [f"/blocks/{i}" for i, b in enumerate(turn["blocks"]) if b["kind"] in ("other", "widget")]
    assert [loss.pointer for loss in losses if loss.rule.id == "GE900" and loss.pointer in others] == others
    wire = [orjson.loads(orjson.dumps(m)) for m in messages]
    back, back_losses = messages_to_turn(wire, ids(seed + 1))
    assert back_losses == []
    assert back == turn
    reread = list(read_yaml("mem.yaml", max_bytes=1 << 26, data=dump(back).encode()))
    assert [d.value for d in reread if isinstance(d, Document)] == [turn]


def test_turn_data_and_metadata_only_provider_raw_keeps_are_reported_once(tmp_path: Path) -> None:
    # issue 17: like gpt2099's inherited options, a turn's tool config and annotations
    # have no canonical field; the session id (session_id) and inference result are mapped
    src = tmp_path / "t.yaml"
    src.write_text(
        "blocks:\n  - kind: user\n    role: user\n    payload: {text: hi}\n"
        "metadata:\n  geppetto.session_id@v1: s1\n  geppetto.trace_id@v1: tr-1\n"
        "data:\n  geppetto.tool_config@v1: {enabled: true}\n"
    )
    found = [
        f for f in convert("geppetto", "canonical", src, tmp_path / "c.jsonl") if "no canonical field" in f.message
    ]
    assert [(f.rule, f.pointer) for f in found] == [("GE900", "/data")]
    assert "turn data.geppetto.tool_config@v1, metadata.geppetto.trace_id@v1 have" in found[0].message
    bare = tmp_path / "bare.yaml"
    bare.write_text(
        "blocks:\n  - kind: user\n    role: user\n    payload: {text: hi}\nmetadata:\n  geppetto.session_id@v1: s1\n"
    )
    assert not [
        f for f in convert("geppetto", "canonical", bare, tmp_path / "b.jsonl") if "no canonical field" in f.message
    ]


def test_an_interrupted_inference_the_turn_goes_on_after_is_written_complete_and_reported() -> None:
    """Canonical lets no cancelled turn resume (streaming §6.3, TS209); a geppetto turn may
    go on after an interrupted inference. Failed before: the first message was cancelled and
    the next assistant message made the converted output invalid (TS209), so the
    conversion refused honest geppetto data. An interrupted inference that ends the turn
    stays cancelled."""
    stopped = {"provider": "openai", "model": "gpt-4o", "finish_class": "interrupted"}
    done = {"provider": "openai", "model": "gpt-4o", "finish_class": "completed"}

    def text(t: str, ir: dict[str, Any]) -> dict[str, Any]:
        return {"kind": "llm_text", "role": "assistant", "payload": {"text": t}, "metadata": {RESULT_KEY: ir}}

    user = {"kind": "user", "role": "user", "payload": {"text": "hi"}}
    turn = {"blocks": [user, text("Let me", stopped), text("Here it is.", done)]}
    messages, losses = turn_to_messages(turn, ids())
    assert [m["metadata"].get("status") for m in messages] == [None, None, None]
    assert [f.format() for f in canonical_findings(messages) if f.severity == Severity.ERROR] == []
    resumed = [loss for loss in losses if "interrupted" in loss.message]
    assert [(loss.pointer, loss.rule.id) for loss in resumed] == [("/blocks/1", "GE900")]
    assert "streaming §6.3" in resumed[0].message
    assert messages_to_turn([orjson.loads(orjson.dumps(m)) for m in messages], ids(1))[0] == turn
    # the turn ends on the interrupted inference, or a user block comes first: cancelled stays
    for blocks in ([user, text("Let me", stopped)], [user, text("Let me", stopped), user, text("Ok.", done)]):
        messages, losses = turn_to_messages({"blocks": blocks}, ids())
        assert messages[1]["metadata"].get("status") == "cancelled"
        assert not [loss for loss in losses if "interrupted" in loss.message]
        assert [f.format() for f in canonical_findings(messages) if f.severity == Severity.ERROR] == []
