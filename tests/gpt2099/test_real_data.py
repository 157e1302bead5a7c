"""Issue 17, gpt2099: file order is not time order, and hash-only frames are frames."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.api import validate
from conformance.convert import convert

IDS = ["03d4q1qhbhm9bkl8pqvn2bqv1", "03d4q1qhbhm9bkl8pqvn2bqv2", "03d4q1qhbhm9bkl8pqvn2bqv3"]


def _frames() -> list[dict[str, object]]:
    return [
        {"id": IDS[0], "topic": "gpt.turn", "meta": {"role": "user", "inherited": {"provider_ptr": "m"}},
         "content": [{"type": "text", "text": "hi"}]},
        {"id": IDS[1], "topic": "gpt.turn", "meta": {"role": "assistant", "continues": [IDS[0]]},
         "content": [{"type": "text", "text": "hello"}]},
        {"id": IDS[2], "topic": "gpt.turn", "meta": {"role": "user", "continues": [IDS[1]]},
         "content": [{"type": "text", "text": "bye"}]},
    ]  # fmt: skip


def _write(path: Path, frames: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(f) + "\n" for f in frames))
    return path


def _errors(path: Path) -> list[str]:
    return [f.rule for f in validate([path], fmt="gpt2099").findings if f.severity == "error"]


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 1, 0], [1, 2, 0]])
def test_a_head_first_export_validates_and_converts_in_time_order(order: list[int], tmp_path: Path) -> None:
    frames = _frames()
    src = _write(tmp_path / "t.jsonl", [frames[i] for i in order])
    assert _errors(src) == []
    out = tmp_path / "c.jsonl"
    convert("gpt2099", "canonical", src, out)
    texts = [json.loads(line)["content"][0]["text"] for line in out.read_text().splitlines()]
    assert texts == ["hi", "hello", "bye"]


def test_a_continues_to_a_later_id_is_still_an_error(tmp_path: Path) -> None:
    frames = _frames()
    frames[0]["meta"] = {"role": "user", "continues": [IDS[2]]}
    assert "GP202" in _errors(_write(tmp_path / "t.jsonl", frames))


def test_hash_only_frames_are_valid(tmp_path: Path) -> None:
    frames = _frames()
    del frames[1]["content"]
    frames[1]["hash"] = "sha256-Ey6dWr1Kuh9X3Yk7Hqf+2WrC7gX6aHqJ3e4sJm9sN8I="
    assert _errors(_write(tmp_path / "t.jsonl", frames)) == []


def test_a_frame_with_neither_content_nor_hash_is_an_error(tmp_path: Path) -> None:
    frames = _frames()
    del frames[1]["content"]
    assert "GP020" in _errors(_write(tmp_path / "t.jsonl", frames))


# -- conversions report what only provider_raw keeps (issue 17) --------------------------


def _lossy(tmp_path: Path, frames: list[dict[str, object]]) -> list[tuple[int | None, str, str]]:
    src = _write(tmp_path / "t.jsonl", frames)
    return [(f.line, f.pointer, f.message) for f in convert("gpt2099", "canonical", src, tmp_path / "c.jsonl")]


def test_inherited_options_and_cache_are_reported(tmp_path: Path) -> None:
    frames = _frames()
    frames[2]["meta"] = {"role": "user", "continues": [IDS[1]], "cache": True}
    lossy = _lossy(tmp_path, frames)
    assert [(ln, ptr) for ln, ptr, msg in lossy if "inherited options (provider_ptr)" in msg] == [(1, "/meta")]
    assert [(ln, ptr) for ln, ptr, msg in lossy if "cache flag" in msg] == [(3, "/meta/cache")]


def test_a_branching_thread_is_reported(tmp_path: Path) -> None:
    frames = _frames()
    frames[2]["meta"] = {"role": "user", "continues": [IDS[0]]}  # a second continuation of turn 1
    lossy = _lossy(tmp_path, frames)
    assert [(ln, ptr) for ln, ptr, msg in lossy if "branches here (2 turns" in msg] == [(1, "")]
    linear = tmp_path / "linear"
    linear.mkdir()
    assert not [m for _, _, m in _lossy(linear, _frames()) if "branches" in m]


def test_stop_reason_other_than_end_turn_is_reported(tmp_path: Path) -> None:
    frames = _frames()
    frames[1]["meta"] = {"role": "assistant", "continues": [IDS[0]],
                         "message": {"model": "claude", "stop_reason": "max_tokens"}}  # fmt: skip
    lossy = _lossy(tmp_path, frames)
    assert [ln for ln, _, msg in lossy if "stop_reason 'max_tokens'" in msg] == [2]


# -- document turns and MIME syntax (issue 17) -------------------------------------------

DOC_BLOCK = {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "aGk="}}


@pytest.mark.parametrize(
    ("meta", "content", "rules"),
    [
        ({"type": "document", "content_type": "application/pdf"}, [DOC_BLOCK], []),
        ({"type": "document"}, [DOC_BLOCK], []),  # was GP105: content_type is optional (issue 25 item 9)
        ({"type": "document", "content_type": "application/pdf"}, [DOC_BLOCK, DOC_BLOCK], ["GP105"]),
        ({"type": "document", "content_type": "application/pdf"}, [{"type": "text", "text": "x"}], ["GP105"]),
        ({"content_type": "application json"}, [{"type": "text", "text": "x"}], ["GP106"]),
        ({"content_type": "text/markdown; charset=utf-8"}, [{"type": "text", "text": "x"}], []),
        ({}, [{**DOC_BLOCK, "source": {**DOC_BLOCK["source"], "media_type": "/pdf"}}], ["GP106"]),
    ],
)
def test_document_turns(meta: dict[str, object], content: list[object], rules: list[str], tmp_path: Path) -> None:
    frame = {"id": IDS[0], "topic": "gpt.turn", "meta": {"role": "user", "inherited": {"provider_ptr": "m"}, **meta},
             "content": content}  # fmt: skip
    assert _errors(_write(tmp_path / "t.jsonl", [frame])) == rules


def test_a_document_turn_needs_no_content_type(tmp_path: Path) -> None:
    """schemas.md, "Conversation Turn Schema": "Required Fields" lists `role` alone;
    `content_type` is one of the "Document-Specific Fields", optional, and the document
    block's `source.media_type` carries the MIME type ("determines provider-specific
    handling"). A document turn without it has no finding of any severity (was GP105)."""
    frame = {"id": IDS[0], "topic": "gpt.turn", "meta": {"role": "user", "type": "document",
             "document_name": "a.pdf", "inherited": {"provider_ptr": "m"}}, "content": [DOC_BLOCK]}  # fmt: skip
    path = _write(tmp_path / "t.jsonl", [frame])
    assert [(f.rule, f.pointer) for f in validate([path], fmt="gpt2099").findings] == []


def test_a_hash_only_document_turn_needs_no_inline_block(tmp_path: Path) -> None:
    frame = {"id": IDS[0], "topic": "gpt.turn", "hash": "sha256-x",
             "meta": {"role": "user", "type": "document", "content_type": "application/pdf"}}  # fmt: skip
    assert _errors(_write(tmp_path / "t.jsonl", [frame])) == []


# -- field-level constraints enforced only through the schema rule (GP020) ---------------


@pytest.mark.parametrize(
    ("block", "pointer"),
    [
        ({"type": "tool_use", "id": "t1", "name": "read", "input": "path=x"}, "/content/0/input"),
        ({"type": "tool_use", "id": "t1", "input": {}}, "/content/0"),
        ({"type": "document", "source": {"type": "url", "media_type": "image/png", "data": "aGk="}},
         "/content/0/source/type"),
        ({"type": "text"}, "/content/0"),
    ],
)  # fmt: skip
def test_schema_only_field_constraints(block: dict[str, object], pointer: str, tmp_path: Path) -> None:
    frames = _frames()
    frames[1]["content"] = [block]
    src = _write(tmp_path / "t.jsonl", frames)
    hits = [f for f in validate([src], fmt="gpt2099").findings if f.rule == "GP020"]
    assert hits and any(f.pointer.startswith(pointer) for f in hits), [f.pointer for f in hits]


def test_role_outside_the_enum_is_a_schema_error(tmp_path: Path) -> None:
    frames = _frames()
    frames[1]["meta"] = {"role": "model", "continues": [IDS[0]]}
    assert "GP020" in _errors(_write(tmp_path / "t.jsonl", frames))


def test_turn_fields_only_provider_raw_keeps_are_reported_once_per_turn(tmp_path: Path) -> None:
    frames = _frames()
    frames[0]["ttl"] = "forever"
    frames[0]["meta"] = {**frames[0]["meta"], "head": "work", "document_name": "a.pdf"}  # type: ignore[dict-item]
    frames[1]["meta"] = {"role": "assistant", "continues": [IDS[0]],
                         "message": {"id": "msg_1", "model": "claude", "stop_reason": "end_turn",
                                     "usage": {"input_tokens": 1, "output_tokens": 2, "service_tier": "standard"}}}  # fmt: skip
    lossy = [(ln, ptr, msg) for ln, ptr, msg in _lossy(tmp_path, frames) if "kept only in provider_raw" in msg]
    lossy = [x for x in lossy if "inherited options" not in x[2]]
    # every frame's `topic` is reported too (issue 17: only provider_raw keeps it)
    assert [(ln, ptr) for ln, ptr, _ in lossy] == [(1, ""), (2, ""), (3, "")]
    assert "meta.document_name, meta.head, topic, ttl have no canonical field" in lossy[0][2]
    assert "message.id, message.usage.service_tier, topic have no canonical field" in lossy[1][2]
    assert "topic has no canonical field" in lossy[2][2]
    # a turn with nothing but mapped fields (and its topic) reports nothing else of the kind
    plain = tmp_path / "plain"
    plain.mkdir()
    plain_msgs = [m for _, _, m in _lossy(plain, _frames()) if "no canonical field" in m]
    assert plain_msgs and all(m.startswith(("inherited options", "topic has")) for m in plain_msgs)
