"""conformance.convert: refusals, atomic replacement, directory outputs."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from conformance.api import validate
from conformance.convert import ConvertContext, convert, converters
from conformance.core.errors import InputError
from conformance.formats.chibi import ChibiFormat

VALID = Path(__file__).parent / "rules" / "canonical" / "valid.jsonl"


def test_unknown_pair_lists_available(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"available: .*canonical->sqlite"):
        convert("sqlite", "geppetto", VALID, tmp_path / "x")


def test_output_inside_input_or_missing_folder_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="overwrite"):
        convert("canonical", "sqlite", VALID, VALID)
    with pytest.raises(InputError, match="does not exist"):
        convert("canonical", "sqlite", VALID, tmp_path / "nope" / "out.db")


def test_directory_output_replaced_with_force_and_no_leftovers(tmp_path: Path) -> None:
    assert ("canonical", "chibi") in ChibiFormat().converters
    out = tmp_path / "ctx"
    convert("canonical", "chibi", VALID, out)
    assert out.is_dir()
    marker = out / "stale.txt"
    marker.write_text("old")
    with pytest.raises(InputError, match="--force"):
        convert("canonical", "chibi", VALID, out)
    convert("canonical", "chibi", VALID, out, force=True)
    assert out.is_dir() and not marker.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx"]


def test_failed_converter_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import conformance.convert as c

    def boom(src: Path, dst: Path, ctx: ConvertContext) -> None:
        dst.mkdir()
        (dst / "half.jsonl").write_text("{")
        raise InputError("converter gave up")

    monkeypatch.setattr(c, "converters", lambda: {("canonical", "chibi"): boom})
    with pytest.raises(InputError, match="gave up"):
        convert("canonical", "chibi", VALID, tmp_path / "ctx")
    assert list(tmp_path.iterdir()) == []


# -- output safety (issue 9: nothing lost) ----------------------------------------------


def _tree(root: Path) -> dict[str, tuple[bytes | None, int]]:
    """Every path under `root` with its bytes (None for a folder) and mtime."""
    out: dict[str, tuple[bytes | None, int]] = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = (None if p.is_dir() else p.read_bytes(), p.stat().st_mtime_ns)
    return out


@pytest.mark.parametrize("to", ["sqlite", "chibi", "canonical-from-sqlite"])
def test_output_that_contains_the_input_is_refused_even_with_force(tmp_path: Path, to: str) -> None:
    d = tmp_path / "d"
    d.mkdir()
    if to == "canonical-from-sqlite":
        src, pair = d / "s.db", ("sqlite", "canonical")
        convert("canonical", "sqlite", VALID, src)
    else:
        src, pair = d / "t.jsonl", ("canonical", to)
        src.write_bytes(VALID.read_bytes())
    before = _tree(tmp_path)
    for dst in (d, tmp_path, src, src / "x", d / "." / src.name):
        with pytest.raises(InputError, match=r"contains the input|inside the input|overwrite"):
            convert(*pair, src, dst, force=True)
    assert _tree(tmp_path) == before


def test_symlinked_output_cannot_smuggle_the_input_in(tmp_path: Path) -> None:
    d = tmp_path / "d"
    d.mkdir()
    src = d / "t.jsonl"
    src.write_bytes(VALID.read_bytes())
    (tmp_path / "alias").symlink_to(d)
    (tmp_path / "same.jsonl").symlink_to(src)
    before = _tree(tmp_path)
    with pytest.raises(InputError, match="contains the input"):
        convert("canonical", "sqlite", src, tmp_path / "alias", force=True)
    with pytest.raises(InputError, match="overwrite"):
        convert("canonical", "chibi", src, tmp_path / "same.jsonl", force=True)
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("umask", [0o022, 0o027])
def test_outputs_get_the_umask_mode(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        convert("canonical", "sqlite", VALID, tmp_path / "s.db")
        convert("sqlite", "canonical", tmp_path / "s.db", tmp_path / "back.jsonl")
    finally:
        os.umask(old)
    for name in ("s.db", "back.jsonl"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask


def test_output_folder_problems_are_one_line_errors(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    with pytest.raises(InputError, match="is not a folder"):
        convert("canonical", "sqlite", VALID, afile / "out.db")
    with pytest.raises(InputError, match="does not exist"):
        convert("canonical", "sqlite", VALID, tmp_path / "no" / "out.db")
    if os.geteuid() != 0:  # root writes anywhere
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        try:
            with pytest.raises(InputError, match="not writable"):
                convert("canonical", "sqlite", VALID, ro / "out.db")
        finally:
            ro.chmod(0o755)


def test_output_over_a_fifo_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "out.db"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="not a regular file or a folder"):
        convert("canonical", "sqlite", VALID, fifo, force=True)


def test_non_regular_input_is_refused_without_opening_it(tmp_path: Path) -> None:
    fifo = tmp_path / "in.jsonl"
    os.mkfifo(fifo)  # opening it for reading would block forever
    with pytest.raises(InputError, match="FIFO"):
        convert("canonical", "sqlite", fifo, tmp_path / "out.db")
    (tmp_path / "zero.jsonl").symlink_to("/dev/zero")
    with pytest.raises(InputError, match="character device"):
        convert("canonical", "sqlite", tmp_path / "zero.jsonl", tmp_path / "out.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "zero.jsonl"]


def test_sqlite_round_trip_is_byte_identical_and_deterministic(tmp_path: Path) -> None:
    convert("canonical", "sqlite", VALID, tmp_path / "s.db")
    assert convert("sqlite", "canonical", tmp_path / "s.db", tmp_path / "a.jsonl") == []
    convert("sqlite", "canonical", tmp_path / "s.db", tmp_path / "b.jsonl")
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes() == VALID.read_bytes()


def test_impossible_date_is_a_located_refusal(tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    src.write_text(VALID.read_text().replace("2026-05-08T12:00:02.000000Z", "2026-02-30T12:00:02.000000Z"))
    with pytest.raises(InputError, match=r"t\.jsonl:2"):
        convert("canonical", "sqlite", src, tmp_path / "s.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]


def test_sqlite_output_is_byte_identical_across_runs(tmp_path: Path) -> None:
    convert("canonical", "sqlite", VALID, tmp_path / "a.db")
    convert("canonical", "sqlite", VALID, tmp_path / "b.db")
    assert (tmp_path / "a.db").read_bytes() == (tmp_path / "b.db").read_bytes()


# -- what validate accepts, every converter accepts (issue 41) -------------------------------

RESPELLED = {  # schema-valid created_at spellings other than the canonical encoding (TS117 warns)
    "2026-05-08T12:00:02.000000Z": "2026-05-08T12:00:02+00:00",
    "2026-05-08T12:00:03.000000Z": "2026-05-08T12:00:03.5Z",
    "2026-05-08T12:00:04.000000Z": "2026-05-08T12:00:04.123+00:00",
}


def _respelled(tmp_path: Path) -> Path:
    text = VALID.read_text()
    for old, new in RESPELLED.items():
        assert old in text
        text = text.replace(old, new)
    src = tmp_path / "in" / "t.jsonl"
    src.parent.mkdir()
    src.write_text(text)
    return src


def _instants(path: Path) -> list[dt.datetime]:
    return [
        dt.datetime.fromisoformat(json.loads(x)["created_at"].replace("Z", "+00:00"))
        for x in path.read_text().splitlines()
    ]


def test_created_at_spellings_validate_accepts_are_read_by_every_converter(tmp_path: Path) -> None:
    """`+00:00` and fewer fraction digits are valid (TS117 is a warning), so every converter
    from canonical takes them; the one-way SQLite store (microseconds) reports the spelling
    it cannot give back as a lossy step at its line, and gives back the same instants."""
    src = _respelled(tmp_path)
    report = validate([src])
    assert report.errors == 0 and {f.rule for f in report.findings} == {"TS117"}
    targets = sorted(b for a, b in converters() if a == "canonical")
    assert {"sqlite", "chibi", "gpt2099", "geppetto"} <= set(targets)
    for target in targets:
        out = tmp_path / f"out-{target}"
        try:
            convert("canonical", target, src, out)
        except InputError as exc:
            pytest.fail(f"--to {target} refuses what validate accepts: {exc}")
    lossy = convert("canonical", "sqlite", src, tmp_path / "s.db")
    assert sorted((f.line, f.pointer) for f in lossy) == [(2, "/created_at"), (3, "/created_at"), (4, "/created_at")]
    convert("sqlite", "canonical", tmp_path / "s.db", tmp_path / "back.jsonl")
    assert _instants(tmp_path / "back.jsonl") == _instants(src)
