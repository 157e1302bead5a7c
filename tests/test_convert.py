"""conformance.convert: refusals, atomic replacement, directory outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.convert import ConvertContext, convert
from conformance.errors import InputError
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
