"""Issue 17: canonical -> geppetto -> canonical keeps message ids, created_at and tool ids;
geppetto -> canonical reports the times and session it has to invent."""

from __future__ import annotations

from pathlib import Path

import orjson

from conformance.benchmarks.synthetic import messages
from conformance.convert import convert


def _session(tmp_path: Path) -> tuple[Path, list[dict[str, object]]]:
    msgs = list(messages(30, seed=11))
    session = [m for m in msgs if m["session_id"] == msgs[0]["session_id"]]
    src = tmp_path / "s.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
    return src, session


def test_ids_and_times_survive_a_round_trip(tmp_path: Path) -> None:
    src, session = _session(tmp_path)
    convert("canonical", "geppetto", src, tmp_path / "t.yaml")
    lossy = convert("geppetto", "canonical", tmp_path / "t.yaml", tmp_path / "back.jsonl")
    back = [orjson.loads(line) for line in (tmp_path / "back.jsonl").read_bytes().splitlines()]
    original = {m["id"]: m for m in session}
    assert back and all(m["id"] in original for m in back)
    for m in back:
        assert m["created_at"] == original[m["id"]]["created_at"]
        assert m["session_id"] == original[m["id"]]["session_id"]
        want = [b["id"] for b in original[m["id"]]["content"] if b["type"] == "tool_use"]  # type: ignore[index]
        assert [b["id"] for b in m["content"] if b["type"] == "tool_use"] == want
    assert not [f for f in lossy if "placeholder" in f.message or "names no session" in f.message]
