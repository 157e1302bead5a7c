"""Converters gpt2099 <-> canonical: round trips, lossy reports, valid output."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.benchmarks.synthetic import messages
from conformance.convert import convert
from conformance.core.errors import InputError
from conformance.formats.gpt2099.convert import iter_turns

from .conftest import FIXTURES, findings

ULID = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}\Z")


def _docs(path: Path) -> list[Any]:
    return list(iter_turns(path))


def _roundtrip(src: Path, tmp: Path, back_suffix: str | None = None) -> tuple[Path, Path, list, list]:
    mid = tmp / "canonical.jsonl"
    back = tmp / f"back{back_suffix or src.suffix}"
    there = convert("gpt2099", "canonical", src, mid)
    again = convert("canonical", "gpt2099", mid, back)
    return mid, back, there, again


@pytest.mark.parametrize(
    ("name", "suffix"),
    [
        ("thread-valid.jsonl", None),
        ("thread-valid.nuon", ".json"),
        ("window-valid.json", None),
        ("response-valid.json", None),
    ],
)
def test_round_trip_restores_the_file(tmp_path: Path, name: str, suffix: str | None) -> None:
    src = FIXTURES / name
    _, back, _, again = _roundtrip(src, tmp_path, suffix)
    assert _docs(back) == _docs(src)
    assert again == []  # nothing is lost on the way back


def test_canonical_side_has_fresh_ids_and_keeps_originals(tmp_path: Path) -> None:
    mid, _, _, _ = _roundtrip(FIXTURES / "thread-valid.jsonl", tmp_path)
    assert [f for f in findings(mid, "canonical") if f.severity == "error"] == []
    msgs = [json.loads(line) for line in mid.read_text().splitlines()]
    # turn C (one tool_result) becomes a tool message; the other turns one message each
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "assistant"]
    assert all(ULID.match(m["id"]) for m in msgs)
    assert len({m["session_id"] for m in msgs}) == 1
    use = msgs[1]["content"][1]
    assert use["id"].startswith("tu_") and ULID.match(use["id"][3:])
    assert msgs[2]["content"][0]["tool_use_id"] == use["id"] == msgs[2]["metadata"]["parent_tool_use_id"]
    raw = msgs[1]["metadata"]["provider_raw"]["gpt2099"]
    assert raw["envelope"]["id"] == "03f0aaaaaaaaaaaaaaaaaaab2"
    assert raw["blocks"]["1"] == {"set": {"id": "toolu_1"}}
    # the SCRU128 timestamp becomes created_at (03f0aaaa... encodes a 2026 millisecond)
    assert msgs[0]["created_at"].startswith("20")
    assert msgs[1]["metadata"]["model"] == "gpt2099:claude-3-5-haiku-20241022"
    assert msgs[1]["metadata"]["usage"]["input_tokens"] == 10


def test_each_lossy_step_is_reported_once_with_its_location(tmp_path: Path) -> None:
    md = base64.b64encode(b"# title").decode()
    window = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "text/markdown", "data": md},
                    }
                ],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "ok", "citations": []}]},
        ],
        "options": {"provider_ptr": "p"},
    }
    src = tmp_path / "w.json"
    src.write_text(json.dumps(window))
    every = convert("gpt2099", "canonical", src, tmp_path / "c.jsonl")
    # issue 9: a context window carries no time; that created_at is invented is said once
    timeless = [f for f in every if "carry no time" in f.message]
    assert [(f.pointer, f.line) for f in timeless] == [("/messages/0", 1)]
    lossy = [f for f in every if f not in timeless]
    by_ptr = {f.pointer: f for f in lossy}
    assert sorted(by_ptr) == ["/messages/0/content/0", "/messages/1", "/messages/1/content/0"]
    assert len(lossy) == 3
    assert all(f.rule == "TS900" and f.severity == "warning" and f.line == 1 for f in lossy)
    assert "text/markdown" in by_ptr["/messages/0/content/0"].message
    assert "citations" in by_ptr["/messages/1/content/0"].message


def test_native_canonical_to_gpt2099(tmp_path: Path) -> None:
    msgs = list(messages(80, seed=3))
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in msgs))
    out = tmp_path / "out.jsonl"
    lossy = convert("canonical", "gpt2099", src, out)
    assert [f for f in findings(out) if f.severity == "error"] == []
    thinking = [(i, j) for i, m in enumerate(msgs) for j, b in enumerate(m["content"]) if b["type"] == "thinking"]
    reported = [f for f in lossy if "thinking block" in f.message]
    assert {(f.line, f.pointer) for f in reported} == {(i + 1, f"/content/{j}") for i, j in thinking}
    frames = _docs(out)
    assert all(len(f["id"]) == 25 for f in frames)
    assert [f["id"] for f in frames] == sorted(f["id"] for f in frames)
    # tool messages join the user turn gpt2099 keeps tool results in
    assert {f["meta"]["role"] for f in frames} <= {"user", "assistant", "system"}
    n_results = sum(1 for m in msgs if m["role"] == "tool")
    assert sum(1 for f in frames for b in f["content"] if b["type"] == "tool_result") == n_results


def test_refusals(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not valid gpt2099"):
        convert("gpt2099", "canonical", FIXTURES / "GP203-cycle.jsonl", tmp_path / "x.jsonl")
    mid = tmp_path / "c.jsonl"
    convert("gpt2099", "canonical", FIXTURES / "thread-valid.nuon", mid)
    with pytest.raises(InputError, match="does not write"):
        convert("canonical", "gpt2099", mid, tmp_path / "back.nuon")
    assert not (tmp_path / "back.nuon").exists()


# -- property: gpt2099 -> canonical -> gpt2099 is the identity -------------------------

_ID_CHARS = "0123456789abcdefghijklmnopqrstuvwxyz"
_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)
_name = st.from_regex(r"[a-z]{1,8}___[a-z_]{1,10}", fullmatch=True)
_png = base64.b64encode(b"\x89PNG fake").decode()


def _scru(i: int) -> str:
    v = ((1_700_000_000_000 + i * 1000) << 80) | i
    out = ""
    for _ in range(25):
        v, r = divmod(v, 36)
        out = _ID_CHARS[r] + out
    return out


@st.composite
def threads(draw: st.DrawFn) -> tuple[str, Any]:
    shape = draw(st.sampled_from(["frames", "records", "window"]))
    n = draw(st.integers(1, 7))
    turns: list[dict[str, Any]] = []
    open_uses: list[tuple[int, dict[str, Any]]] = []  # (turn, tool_use) not yet answered
    needs: dict[int, set[int]] = {}  # frames: turns a result's turn must continue
    for i in range(n):
        role = draw(st.sampled_from(["user", "assistant", "system"]))
        blocks: list[dict[str, Any]] = []
        for _ in range(draw(st.integers(0, 3))):
            kind = draw(st.sampled_from(["text", "cite", "doc", "pdf", "use", "result", "provider"]))
            if kind == "text":
                blocks.append({"type": "text", "text": draw(_text)})
            elif kind == "cite":
                blocks.append({"type": "text", "text": draw(_text), "citations": [{"url": "u"}]})
            elif kind == "doc":
                blocks.append(
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "image/png", "data": _png},
                    }
                )
            elif kind == "pdf":
                blocks.append(
                    {
                        "type": "document",
                        "source": {"type": "base64", "media_type": "application/pdf", "data": _png},
                    }
                )
            elif kind == "use":
                use: dict[str, Any] = {
                    "type": "tool_use",
                    "name": f"{draw(_name)}{len(open_uses)}{i}",
                    "input": {"k": draw(_text)},
                }
                if draw(st.booleans()):
                    use["id"] = f"call_{i}_{len(blocks)}"
                blocks.append(use)
                open_uses.append((i, use))
            elif kind == "result" and open_uses:
                at, use = open_uses.pop(draw(st.integers(0, len(open_uses) - 1)))
                if at != i:
                    needs.setdefault(i, set()).add(at)
                res: dict[str, Any] = {
                    "type": "tool_result",
                    "name": use["name"],
                    "content": [{"type": "text", "text": draw(_text)}],
                }
                if "id" in use:
                    res["tool_use_id"] = use["id"]
                if draw(st.booleans()):
                    res["is_error"] = draw(st.booleans())
                if draw(st.booleans()):
                    res["content"].append({"type": "text", "text": "x", "mimeType": "text/plain"})
                blocks.append(res)
            elif kind == "provider":
                blocks.append({"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}})
        turn: dict[str, Any] = {"role": role, "content": blocks}
        if draw(st.booleans()):
            turn["cache"] = True
        turns.append(turn)
    if shape == "window":
        opts = draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "provider_ptr": st.sampled_from(["nano", "milli"]),
                    "search": st.booleans(),
                },
            )
        )
        return "json", {"messages": turns, "options": opts}
    out = []
    for i, t in enumerate(turns):
        if shape == "records":
            out.append({"id": _scru(i), **t})
            continue
        meta: dict[str, Any] = {"role": t["role"], "content_type": "application/json"}
        parents = sorted(needs.get(i, set()))
        if i and draw(st.booleans()):
            parents += [p for p in draw(st.lists(st.integers(0, i - 1), max_size=2)) if p not in parents]
        if len(parents) == 1 and draw(st.booleans()):
            meta["continues"] = _scru(parents[0])
        elif parents:
            meta["continues"] = [_scru(p) for p in parents]
        if draw(st.booleans()):
            meta["options"] = {"provider_ptr": "milli", "servers": ["fs"]}
        if draw(st.booleans()):
            meta["head"] = draw(st.sampled_from(["main", "side"]))
        if t.get("cache"):
            meta["cache"] = True
        if t["role"] == "assistant" and draw(st.booleans()):
            meta["message"] = {
                "model": "m-1",
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 4},
            }
        out.append({"id": _scru(i), "topic": "gpt.turn", "meta": meta, "content": t["content"]})
    return "jsonl", out


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(threads())
def test_property_round_trip(tmp_path: Path, case: tuple[str, Any]) -> None:
    suffix, doc = case
    src = tmp_path / f"in.{suffix}"
    if suffix == "jsonl":
        src.write_bytes(b"".join(orjson.dumps(d) + b"\n" for d in doc))
    else:
        src.write_bytes(orjson.dumps(doc))
    mid, back = tmp_path / "mid.jsonl", tmp_path / f"back.{suffix}"
    for p in (mid, back):
        p.unlink(missing_ok=True)
    convert("gpt2099", "canonical", src, mid)  # raises unless the output validates
    convert("canonical", "gpt2099", mid, back)
    assert _docs(back) == _docs(src)


def test_native_canonical_ids_and_session_are_reported_where_they_are_dropped(tmp_path: Path) -> None:
    # issue 17: a canonical message id and its session id have no gpt2099 field (turn ids
    # are SCRU128s of the time; a session is a `continues` chain): said once each, located
    msgs = list(messages(12, seed=5))
    src = tmp_path / "in.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in msgs))
    lossy = [f for f in convert("canonical", "gpt2099", src, tmp_path / "out.jsonl") if f.pointer == "/metadata"]
    assert len(lossy) == len(msgs) and [f.line for f in lossy] == list(range(1, len(msgs) + 1))
    assert all(f"message id {m['id']!r}" in f.message for f, m in zip(lossy, msgs, strict=True))
    first = {}
    for i, m in enumerate(msgs):
        first.setdefault(m["session_id"], i)
    said = [i for i, f in enumerate(lossy) if "session_id" in f.message]
    assert said == sorted(first.values())
