"""`schema diff --against REV`: the old side read from git, the working tree only read."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance.core.errors import InputError
from conformance.schema.history import at_revision

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True
    )


def repo(tmp_path: Path) -> Path:
    d = tmp_path / "r" / "schemas"
    d.mkdir(parents=True)
    (d / "a.json").write_text(json.dumps({"type": "object", "properties": {"b": {"$ref": "b.json"}}}))
    (d / "b.json").write_text(json.dumps({"type": "string", "maxLength": 10}))
    git(tmp_path / "r", "init", "-q")
    git(tmp_path / "r", "add", ".")
    git(tmp_path / "r", "commit", "-qm", "one")
    return d


def test_the_old_file_comes_with_its_siblings_and_is_removed_after(tmp_path: Path) -> None:
    d = repo(tmp_path)
    (d / "b.json").write_text(json.dumps({"type": "string", "maxLength": 5}))
    with at_revision("HEAD", d / "a.json") as old:
        assert old is not None and old.name == "a.json"
        assert json.loads((old.parent / "b.json").read_text())["maxLength"] == 10
        kept = old.parent
    assert not kept.exists()
    assert json.loads((d / "b.json").read_text())["maxLength"] == 5  # the working tree untouched


def test_a_new_file_has_no_old_side_and_a_bad_revision_is_one_line(tmp_path: Path) -> None:
    d = repo(tmp_path)
    (d / "c.json").write_text("{}")
    with at_revision("HEAD", d / "c.json") as old:
        assert old is None
    with pytest.raises(InputError, match="git"), at_revision("no-such-rev", d / "a.json"):
        pass


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from conformance.cli import main

    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_diff_against_head_fails_a_breaking_change_and_passes_a_full_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = repo(tmp_path)
    rc, out, _ = cli(capsys, "schema", "diff", "--against", "HEAD", str(d / "a.json"), str(d / "b.json"))
    assert rc == 0, out
    (d / "b.json").write_text(json.dumps({"type": "integer"}))  # string -> integer: nothing carries over
    rc, out, _ = cli(capsys, "schema", "diff", "--against", "HEAD", str(d / "b.json"), "-o", "sarif")
    assert rc == 1, out
    results = json.loads(out)["runs"][0]["results"]
    breaking = [r for r in results if r["ruleId"] == "SD001"]
    assert breaking, results
    assert breaking[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("b.json")
    (d / "new.json").write_text(json.dumps({"type": "string"}))
    rc, out, _ = cli(capsys, "schema", "diff", "--against", "HEAD", str(d / "new.json"))
    assert rc == 0


def test_export_files_and_bundle_atomically(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.core.schemas import schema_set
    from conformance.schema.bundle import bundle

    rc, _, err = cli(capsys, "schema", "export", str(tmp_path / "out"))
    assert rc == 0, err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(schema_set("canonical", "v1").documents)
    source = {k: v for k, v in schema_set("canonical", "v1")["message.json"].items() if k != "$id"}
    assert json.loads((tmp_path / "out" / "message.json").read_text()) == source  # no $id: resolves offline (issue 39)
    rc, _, err = cli(capsys, "schema", "export", "--bundle", str(tmp_path / "b.json"))
    assert rc == 0 and json.loads((tmp_path / "b.json").read_text()) == bundle("canonical", "v1")
    rc, _, err = cli(capsys, "schema", "export", "--bundle", str(tmp_path / "b.json"))
    assert rc == 2 and "--force" in err
    rc, _, err = cli(capsys, "schema", "export", "--format", "nope", str(tmp_path / "x"))
    assert rc == 2 and "canonical" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json", "out"]


def test_files_of_one_folder_are_read_from_git_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the pre-commit hook passes every staged schema: their folder is materialised once
    from conformance.schema import history

    d = repo(tmp_path)
    calls: list[tuple[str, ...]] = []
    real = history._git
    monkeypatch.setattr(history, "_git", lambda cwd, *args: calls.append(args) or real(cwd, *args))
    with history.Revision("HEAD") as revision:
        a, b = revision.counterpart(d / "a.json"), revision.counterpart(d / "b.json")
        assert a is not None and b is not None and a.parent == b.parent
        assert json.loads(b.read_text())["maxLength"] == 10
        assert revision.counterpart(d / "new.json") is None
    assert [c[0] for c in calls].count("ls-tree") == 1 and [c[0] for c in calls].count("show") == 2
    assert not a.parent.exists()
