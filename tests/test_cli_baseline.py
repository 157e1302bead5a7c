"""`turnspec validate --baseline/--write-baseline` (issue 29 item 1): adopt the gate on a
store that already has findings, and fail only on new ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main

RULES = Path(__file__).parent / "rules" / "canonical"

# a second session whose user message has a text block that is not a string (TS020)
NEW_DEFECT = (
    '{"id": "01JZ0000000000000000000009", "session_id": "sess_99", "role": "user", "content": '
    '[{"type": "text", "text": "ok"}, {"type": "text", "text": 7}], "metadata": {}, '
    '"created_at": "2026-05-08T12:00:09.000000Z", "schema_version": 1}\n'
)
VALID_LINE = (
    '{"id": "01JZ0000000000000000000000", "session_id": "sess_00", "role": "user", "content": '
    '[{"type": "text", "text": "hello"}], "metadata": {}, '
    '"created_at": "2026-05-08T12:00:00.000000Z", "schema_version": 1}\n'
)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store with one finding (TS020 on line 2), in its own folder."""
    data = tmp_path / "data"
    data.mkdir()
    t = data / "t.jsonl"
    t.write_bytes((RULES / "TS020.jsonl").read_bytes())
    return t


def test_a_baseline_reports_only_new_findings(store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "baseline.json"
    assert main(["validate", str(store)]) == 1
    assert main(["validate", "--write-baseline", str(base), str(store)]) == 0
    assert "wrote 1 finding(s) to the baseline" in capsys.readouterr().err
    doc = json.loads(base.read_text())
    assert doc["findings"] == [
        {
            "path": "data/t.jsonl",
            "rule": "TS020",
            "pointer": "/content/0/text",
            "message": "TextBlock: expected string, got integer",
            "count": 1,
        }
    ]

    assert main(["validate", "--baseline", str(base), str(store)]) == 0
    out = capsys.readouterr().out
    assert " TS020 " not in out
    assert out.strip().endswith("OK: 0 error(s), 0 warning(s) in 1 file(s), 5 record(s), 1 baselined")

    with store.open("a") as f:
        f.write(NEW_DEFECT)
    assert main(["validate", "--baseline", str(base), str(store)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{store}:6: /content/1/text TS020 error: TextBlock: expected string, got integer",
        "FAIL: 1 error(s), 0 warning(s) in 1 file(s), 6 record(s), 1 baselined",
    ]


@pytest.mark.parametrize("fixture", ["TS020", "TS202"])  # TS202's message names the line of the first id
def test_a_baseline_survives_inserted_lines(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fixture: str
) -> None:
    store.write_bytes((RULES / f"{fixture}.jsonl").read_bytes())
    base = tmp_path / "baseline.json"
    assert main(["validate", "--write-baseline", str(base), str(store)]) == 0
    n = len(json.loads(base.read_text())["findings"])
    store.write_text(VALID_LINE + store.read_text())
    assert main(["validate", str(store)]) == 1  # the findings are there, one line lower
    capsys.readouterr()
    assert main(["validate", "--baseline", str(base), str(store)]) == 0
    assert capsys.readouterr().out.strip().endswith(f" record(s), {n} baselined")


def test_a_baseline_matches_from_another_working_directory(
    store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "baseline.json"
    monkeypatch.chdir(tmp_path)
    assert main(["validate", "--write-baseline", "baseline.json", "data/t.jsonl"]) == 0
    monkeypatch.chdir(store.parent)
    assert main(["validate", "--baseline", str(base), "t.jsonl"]) == 0
    capsys.readouterr()
    assert main(["validate", "--baseline", str(base), "-o", "json", "t.jsonl"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["violations"] == [] and doc["summary"]["baselined"] == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such file"),
        (b"{", "invalid JSON"),
        (b'{"findings": []}', "not a turnspec baseline"),
        (b'{"turnspec_baseline": 1, "findings": [{"path": "t.jsonl", "rule": "TS020"}]}', "not a turnspec baseline"),
    ],
)
def test_a_missing_or_malformed_baseline_is_one_line(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes | None, expected: str
) -> None:
    base = tmp_path / "baseline.json"
    if content is not None:
        base.write_bytes(content)
    assert main(["validate", "--baseline", str(base), str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"turnspec: --baseline {base}: ") and expected in err


def test_write_baseline_never_writes_over_or_inside_an_input(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = store.read_bytes()
    assert main(["validate", "--write-baseline", str(store), str(store)]) == 2
    assert main(["validate", "--write-baseline", str(store.parent / "b.json"), str(store.parent)]) == 2
    other = tmp_path / "notes.json"
    other.write_text('{"mine": true}')
    assert main(["validate", "--write-baseline", str(other), str(store)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 3
    assert err[0] == f"turnspec: --write-baseline {store}: exists and is not a turnspec baseline; not replacing it"
    assert "is inside the input" in err[1] and "not a turnspec baseline" in err[2]
    assert store.read_bytes() == before and other.read_text() == '{"mine": true}'
    assert not (store.parent / "b.json").exists()


def test_write_baseline_writes_nothing_when_an_input_cannot_be_read(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "baseline.json"
    assert main(["validate", "--write-baseline", str(base), str(store), str(tmp_path / "missing.jsonl")]) == 2
    assert "not written: some inputs could not be read" in capsys.readouterr().err
    assert not base.exists()


def test_baseline_and_write_baseline_are_exclusive(store: Path, tmp_path: Path) -> None:
    base = tmp_path / "baseline.json"
    assert main(["validate", "--write-baseline", str(base), str(store)]) == 0
    before = base.read_bytes()
    assert main(["validate", "--baseline", str(base), "--write-baseline", str(base), str(store)]) == 2
    assert base.read_bytes() == before
