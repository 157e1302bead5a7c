"""Issue 17: the turn files of one geppetto session each extend the previous one (GE306)."""

from __future__ import annotations

from pathlib import Path

from conformance.api import validate


def _turn(path: Path, session: str, blocks: list[str]) -> Path:
    lines = ["metadata:", f"  geppetto.session_id@v1: {session}", "blocks:"]
    for bid in blocks:
        lines += [f"  - id: {bid}", "    kind: user", "    role: user", "    payload:", f"      text: {bid}"]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_growing_turn_files_are_one_session(tmp_path: Path) -> None:
    _turn(tmp_path / "t2.yaml", "s1", ["a", "b", "c"])
    _turn(tmp_path / "t1.yaml", "s1", ["a", "b"])
    _turn(tmp_path / "other.yaml", "s2", ["x"])
    assert [f for f in validate([tmp_path]).findings if f.rule == "GE306"] == []


def test_a_turn_that_rewrites_history_is_reported(tmp_path: Path) -> None:
    _turn(tmp_path / "t1.yaml", "s1", ["a", "b"])
    bad = _turn(tmp_path / "t2.yaml", "s1", ["a", "z", "c"])
    hits = [f for f in validate([tmp_path]).findings if f.rule == "GE306"]
    assert [(f.path, f.pointer, f.severity) for f in hits] == [(str(bad), "/blocks/1", "warning")]
    assert hits[0].line is not None
