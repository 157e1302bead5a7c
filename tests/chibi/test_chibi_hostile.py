"""Issue 9, chibi: hostile contexts are located findings or one-line refusals, and a
conversion refuses what validation rejects (it never drops data silently)."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path

import pytest
from chibi_helpers import check, read_lines, write_lines

from conformance.cli import main
from conformance.convert import convert
from conformance.core.errors import InputError


def _errors(path: Path) -> list[str]:
    return [f.rule for f in check(path).findings if f.severity == "error"]


def test_manifest_that_is_an_empty_array(ctx_copy: Callable[[str], Path], tmp_path: Path) -> None:
    ctx = ctx_copy("default")
    (ctx / "transcript" / "manifest.json").write_text("[]")
    report = check(ctx)
    hit = [f for f in report.findings if f.path.endswith("manifest.json")]
    assert hit and hit[0].rule == "CB021" and "array" in hit[0].message
    with pytest.raises(InputError, match="CB021"):
        convert("chibi", "canonical", ctx, tmp_path / "out.jsonl")
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("seed", range(5))
def test_random_bytes_bloom_fails_validation(ctx_copy: Callable[[str], Path], seed: int) -> None:
    ctx = ctx_copy("default")
    bloom = next((ctx / "transcript" / "partitions").glob("*.bloom"))
    bloom.write_bytes(random.Random(seed).randbytes(512))
    located = [f for f in check(ctx).findings if f.path == str(bloom) and f.severity == "error"]
    assert located and located[0].line is not None


@pytest.mark.parametrize(
    "value",
    [
        {"bits": "not words", "hasher": {}},
        {"bits": [-1], "hasher": {}},
        {"bits": [2**64], "hasher": {}},
        {"hasher": {}},
        {"bits": [1, 2]},
        [1, 2, 3],
        "bloom",
    ],
)
def test_bloom_of_the_wrong_shape_fails(ctx_copy: Callable[[str], Path], value: object) -> None:
    ctx = ctx_copy("default")
    bloom = next((ctx / "transcript" / "partitions").glob("*.bloom"))
    bloom.write_text(json.dumps(value))
    assert any(f.path == str(bloom) and f.severity == "error" for f in check(ctx).findings)


def test_convert_refuses_a_context_validation_rejects(ctx_copy: Callable[[str], Path], tmp_path: Path) -> None:
    cases: dict[str, Callable[[Path], None]] = {
        "partition missing": lambda c: next((c / "transcript" / "partitions").glob("*.jsonl")).unlink(),
        "duplicate ids": lambda c: _duplicate_id(c),
        "partition is a folder": lambda c: _replace_partition(c, "dir"),
        "partition is a FIFO": lambda c: _replace_partition(c, "fifo"),
        "partition listed twice": lambda c: _list_twice(c),
    }
    for name, damage in cases.items():
        ctx = ctx_copy("default")
        target = ctx.with_name(name.replace(" ", "-"))
        ctx.rename(target)
        damage(target)
        assert _errors(target), name
        out = tmp_path / f"{target.name}.jsonl"
        with pytest.raises(InputError, match="does not validate as chibi"):
            convert("chibi", "canonical", target, out)
        assert not out.exists(), name
        assert main(["convert", "--from", "chibi", "--to", "canonical", str(target), str(out)]) in (1, 2)


def _duplicate_id(ctx: Path) -> None:
    path = ctx / "transcript" / "active.jsonl"
    lines = read_lines(path)
    lines[-1]["id"] = lines[0]["id"]
    write_lines(path, lines)


def _replace_partition(ctx: Path, kind: str) -> None:
    part = next((ctx / "transcript" / "partitions").glob("*.jsonl"))
    part.unlink()
    if kind == "dir":
        part.mkdir()
    else:
        os.mkfifo(part)


def _list_twice(ctx: Path) -> None:
    path = ctx / "transcript" / "manifest.json"
    m = json.loads(path.read_text())
    m["partitions"].append(dict(m["partitions"][0]))
    path.write_text(json.dumps(m))


@pytest.mark.parametrize("where", ["partition", "active"])
def test_provenance_naming_a_path_out_of_the_context_is_refused_at_its_line(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """canonical -> chibi writes the partitions its provenance names: one that leaves
    transcript/ is refused naming the file, line and pointer that holds it (issue 41: the
    refusal named none), and nothing is written."""
    from chibi_helpers import FIXTURES

    canon = tmp_path / "c.jsonl"
    convert("chibi", "canonical", FIXTURES / "default", canon)
    text = canon.read_text()
    if where == "partition":  # the manifest's entry and every message's partition provenance
        text = text.replace('"partitions/1767225600-1767225666.jsonl"', '"../../evil.jsonl"')
        pointer = "/metadata/provider_raw/chibi/context/manifest/partitions/0/file"
    else:
        text = text.replace('"active_partition":"active.jsonl"', '"active_partition":"../evil.jsonl"')
        text = text.replace('"active_partition": "active.jsonl"', '"active_partition": "../evil.jsonl"')
        pointer = "/metadata/provider_raw/chibi/context/manifest/active_partition"
    assert "evil" in text
    canon.write_text(text)
    out = tmp_path / "out"
    assert main(["convert", "--to", "chibi", str(canon), str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert f"{canon}:1: {pointer}: provenance names" in err[-1], err[-1]
    assert not out.exists() and not (tmp_path / "evil.jsonl").exists()
