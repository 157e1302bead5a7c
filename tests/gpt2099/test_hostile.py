"""Issue 9, gpt2099: hostile NUON is a located finding, and every `--to` refuses an
impossible date the same way (one date check)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from conformance.api import validate
from conformance.benchmarks.synthetic import messages
from conformance.cli import main
from conformance.convert import convert
from conformance.core.errors import InputError

TURN = '[{{id: "03d4q1qhbhm9bkl8pqvn2bqv1", role: "user", content: [{{type: "text", text: "hi"}}], n: {n}}}]\n'


@pytest.mark.parametrize("number", ["9" * 5000, "-" + "9" * 4500, "1e999", "-1e999", "1" + "0" * 4001 + ".5"])
def test_huge_nuon_numbers_are_located_errors(number: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "big.nuon"
    src.write_text(TURN.format(n=number))
    report = validate([src], fmt="gpt2099")
    errors = [f for f in report.findings if f.severity == "error"]
    assert len(errors) == 1 and errors[0].line == 1 and "column" in errors[0].message
    assert main(["validate", str(src)]) == 1
    assert main(["convert", "--from", "gpt2099", "--to", "canonical", str(src), str(tmp_path / "o.jsonl")]) in (1, 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err


def test_big_but_holdable_numbers_still_read(tmp_path: Path) -> None:
    src = tmp_path / "ok.nuon"
    src.write_text(TURN.format(n="9" * 300))
    report = validate([src], fmt="gpt2099")
    assert report.files[0].records == 1  # read: only the schema speaks (an unknown field `n`)
    assert {f.pointer for f in report.findings if f.severity == "error"} == {"/0/n"}


@pytest.mark.parametrize("target", ["gpt2099", "chibi", "geppetto", "sqlite"])
def test_one_date_check_for_every_target(target: str, tmp_path: Path) -> None:
    msgs = list(messages(6, seed=2))
    session = [m for m in msgs if m["session_id"] == msgs[0]["session_id"]]
    session[0]["created_at"] = "2026-02-30T10:00:00.000000Z"
    src = tmp_path / "bad-date.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
    out = tmp_path / ("out.db" if target == "sqlite" else "out")
    with pytest.raises(InputError, match=r"TS115|not a real date"):
        convert("canonical", target, src, out)
    assert not out.exists()


# -- a thread whose every turn also continues the last one (issue 41) ------------------------


def _turn_id(i: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    tail = ""
    for _ in range(6):
        tail, i = digits[i % 36] + tail, i // 36
    return "03f0" + "a" * 15 + tail


def _looping_thread(path: Path, n: int) -> Path:
    """n turns, each continuing the one before it and the last one (the first: the last
    one only): every turn is on a cycle through the last, and a depth-first walk meets one
    back link per turn, each closing a cycle as long as the walk is deep."""
    lines = []
    for i in range(n):
        cont = [_turn_id(n - 1)] if i == 0 else [_turn_id(i - 1), _turn_id(n - 1)]
        turn = {"id": _turn_id(i), "topic": "gpt.turn", "meta": {"role": "user", "continues": cont},
                "content": [{"type": "text", "text": "hi"}]}  # fmt: skip
        lines.append(orjson.dumps(turn) + b"\n")
    path.write_bytes(b"".join(lines))
    return path


def test_a_thread_looping_through_every_turn_is_one_cycle_found_in_linear_work(tmp_path: Path) -> None:
    """One GP203 for the group of turns on cycles, its message naming a few of them and
    how many (it was one finding per turn, each naming the whole depth: 1000 turns gave
    ~15 MB of findings, 100,000 would give hundreds of GB)."""
    reports = {n: validate([_looping_thread(tmp_path / f"t{n}.jsonl", n)]) for n in (100, 400)}
    for n, report in reports.items():
        cycles = [f for f in report.findings if f.rule == "GP203"]
        assert len(cycles) == 1 and cycles[0].line == 1, [f.format()[:200] for f in cycles[:3]]
        assert f"({n} turns)" in cycles[0].message and len(cycles[0].message) < 600, cycles[0].message
    size = {n: sum(len(f.message) for f in r.findings) for n, r in reports.items()}
    assert size[400] / size[100] <= 4 * 1.1, size  # the report grows with the thread, not its square
