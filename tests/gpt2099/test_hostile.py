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
