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


def test_the_history_is_ordered_by_which_turn_extends_which_not_by_size(tmp_path: Path) -> None:
    # A fork (b.yaml) as long as a real turn would be: block count alone would put it second
    # and blame c.yaml, the turn that really follows a.yaml; the extends relation blames the fork.
    _turn(tmp_path / "d.yaml", "s1", ["a", "b", "c", "d", "e", "f", "g", "h", "i"])
    _turn(tmp_path / "a.yaml", "s1", ["a", "b", "c"])
    fork = _turn(tmp_path / "b.yaml", "s1", ["a", "b", "c", "d", "x"])
    _turn(tmp_path / "c.yaml", "s1", ["a", "b", "c", "d", "e", "f", "g"])
    hits = [f for f in validate([tmp_path]).findings if f.rule == "GE306"]
    assert [(f.path, f.pointer) for f in hits] == [(str(fork), "/blocks/4")]
    history = " -> ".join(str(tmp_path / n) for n in ("a.yaml", "c.yaml", "d.yaml"))
    assert f"({history}, ordered by which turn extends which)" in hits[0].message
    assert f"shares its first 4 block(s) with {tmp_path / 'c.yaml'}" in hits[0].message


def test_a_turn_extending_no_other_turn_of_its_session_is_reported(tmp_path: Path) -> None:
    _turn(tmp_path / "t1.yaml", "s1", ["a"])
    _turn(tmp_path / "t2.yaml", "s1", ["a", "b"])
    stray = _turn(tmp_path / "t3.yaml", "s1", ["q", "r", "s"])
    hits = [f for f in validate([tmp_path]).findings if f.rule == "GE306"]
    assert [(f.path, f.pointer) for f in hits] == [(str(stray), "/blocks/0")]


def test_session_order_does_not_depend_on_the_order_files_are_given(tmp_path: Path) -> None:
    names = {"p.yaml": ["a", "b", "c", "d"], "q.yaml": ["a", "b"], "r.yaml": ["a", "b", "z"]}
    for name, blocks in names.items():
        _turn(tmp_path / name, "s1", blocks)
    forward = validate([tmp_path / n for n in sorted(names)]).findings
    backward = validate([tmp_path / n for n in sorted(names, reverse=True)]).findings
    assert [f.format() for f in forward] == [f.format() for f in backward]
    assert [(f.path, f.pointer) for f in forward if f.rule == "GE306"] == [(str(tmp_path / "r.yaml"), "/blocks/2")]
