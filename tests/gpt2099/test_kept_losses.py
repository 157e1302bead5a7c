"""Issue 17, gpt2099 -> canonical: a frame's `topic` and `hash`, a `continues` that named a
bookmark rather than an id, and a response's top-level `role`/`mime_type` are kept only in
provider_raw and reported once each, with their location."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.convert import convert

IDS = ["03d4q1r2s3t4u5v6w7x8y9z0a", "03d4q1r2s3t4u5v6w7x8y9z0b", "03d4q1r2s3t4u5v6w7x8y9z0c"]


def _lossy(tmp_path: Path, docs: list[dict[str, object]]) -> list[tuple[int | None, str, str]]:
    src = tmp_path / "t.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in docs))
    found = convert("gpt2099", "canonical", src, tmp_path / "c.jsonl", force=True)
    return [(f.line, f.pointer, f.message) for f in found]


def _thread(continues_1: object, continues_2: object) -> list[dict[str, object]]:
    return [
        {"id": IDS[0], "topic": "gpt.turn", "hash": "sha256-aGk=",
         "meta": {"role": "user", "head": "work"}, "content": [{"type": "text", "text": "hi"}]},
        {"id": IDS[1], "topic": "gpt.turn", "meta": {"role": "assistant", "continues": continues_1},
         "content": [{"type": "text", "text": "hello"}]},
        {"id": IDS[2], "topic": "gpt.turn", "meta": {"role": "user", "continues": continues_2},
         "content": [{"type": "text", "text": "bye"}]},
    ]  # fmt: skip


def test_a_continues_naming_a_bookmark_is_reported_where_it_is(tmp_path: Path) -> None:
    got = [(ln, ptr, m) for ln, ptr, m in _lossy(tmp_path, _thread("work", [IDS[1], "work"])) if "bookmark" in m]
    assert [(ln, ptr) for ln, ptr, _ in got] == [(2, "/meta/continues"), (3, "/meta/continues/1")]
    assert all(f"'work' (turn {IDS[0]})" in m for _, _, m in got)


def test_a_continues_naming_ids_reports_no_bookmark(tmp_path: Path) -> None:
    assert [m for _, _, m in _lossy(tmp_path, _thread(IDS[0], [IDS[1]])) if "bookmark" in m] == []


def test_topic_and_hash_are_reported_once_per_frame(tmp_path: Path) -> None:
    kept = [(ln, m) for ln, ptr, m in _lossy(tmp_path, _thread(IDS[0], [IDS[1]])) if "no canonical field" in m]
    assert [ln for ln, _ in kept] == [1, 2, 3]
    assert kept[0][1].startswith("hash, meta.head, topic have no canonical field")
    assert kept[1][1].startswith("topic has no canonical field")


def test_a_response_s_top_level_role_and_mime_type_are_reported(tmp_path: Path) -> None:
    message: dict[str, object] = {"role": "assistant", "content": [{"type": "text", "text": "hi"}],
                                  "model": "claude-sonnet-4", "stop_reason": "end_turn"}  # fmt: skip
    response: dict[str, object] = {"message": message, "role": "assistant", "mime_type": "application/json"}
    kept = [(ln, ptr, m) for ln, ptr, m in _lossy(tmp_path, [response]) if "no canonical field" in m]
    assert [(ln, ptr) for ln, ptr, _ in kept] == [(1, "")]  # beside the message, at the document
    assert kept[0][2].startswith("mime_type, role have no canonical field")
    with_id = {**response, "message": {**message, "id": "msg_1"}}
    kept = [(ln, ptr, m) for ln, ptr, m in _lossy(tmp_path, [with_id]) if "no canonical field" in m]
    assert [(ptr, m.split(" ha")[0]) for _, ptr, m in kept] == [("", "mime_type, role"), ("/message", "message.id")]
    bare: dict[str, object] = {"message": message}
    assert [m for _, _, m in _lossy(tmp_path, [bare]) if "no canonical field" in m] == []


def test_the_report_is_deterministic(tmp_path: Path) -> None:
    docs = _thread("work", [IDS[1], "work"])
    assert _lossy(tmp_path, docs) == _lossy(tmp_path, docs)
