"""`turnspec` as a user runs it: exit codes, output formats, rule selection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main

RULES = Path(__file__).parent / "rules" / "canonical"
EXAMPLES = Path(__file__).resolve().parents[1] / "conformance" / "data" / "examples"


def test_bundled_example_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLES)]) == 0
    assert capsys.readouterr().out.startswith("OK: 0 error(s), 0 warning(s) in 1 file(s)")


def test_violations_exit_1_with_located_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(RULES / "TS020.jsonl")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{RULES / 'TS020.jsonl'}:2: /content/0/text TS020 error: TextBlock: expected string, got integer"
    assert out[-1].startswith("FAIL: 1 error(s)")


def test_warnings_alone_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(RULES / "TS010.jsonl")]) == 0
    assert main(["validate", "--strict", str(RULES / "TS010.jsonl")]) == 1


def test_json_output_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--output", "json", str(RULES / "TS205.jsonl"), str(RULES / "valid.jsonl")]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"files", "violations", "summary"}
    assert [f["path"] for f in doc["files"]] == [str(RULES / "TS205.jsonl"), str(RULES / "valid.jsonl")]
    v = next(x for x in doc["violations"] if x["rule"] == "TS205")
    assert set(v) == {"path", "line", "pointer", "rule", "severity", "message"}
    assert (v["line"], v["pointer"], v["severity"]) == (4, "/content/0/tool_use_id", "error")
    assert doc["summary"]["records"] == 10 and doc["summary"]["errors"] >= 1


def test_select_and_ignore_by_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    # the TS205 fixture also leaves its tool_use unanswered (TS208); both are TS2xx
    assert main(["validate", str(RULES / "TS205.jsonl")]) == 1
    assert main(["validate", "--ignore", "TS2", str(RULES / "TS205.jsonl")]) == 0
    out = capsys.readouterr().out
    assert " TS205 " in out and out.strip().endswith("OK: 0 error(s), 0 warning(s) in 1 file(s), 5 record(s)")
    assert main(["validate", "--select", "TS208", str(RULES / "TS205.jsonl")]) == 0
    out = capsys.readouterr().out
    assert " TS208 " in out and " TS205 " not in out and " TS111 " not in out


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "/no/such/file.jsonl"],
        ["validate", "--select", "ZZ9", str(RULES / "valid.jsonl")],
        ["validate", "--output", "xml", str(RULES / "valid.jsonl")],
        ["validate", "--format", "nope", str(RULES / "valid.jsonl")],
        ["validate", "--tools", "/no/tools.json", str(RULES / "valid.jsonl")],
        ["validate", "--pricing", str(RULES / "valid.jsonl"), str(RULES / "valid.jsonl")],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(argv: list[str]) -> None:
    assert main(argv) == 2


def test_rules_lists_every_rule_with_section(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--output", "json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    ids = [r["id"] for r in rules]
    assert ids == sorted(ids) and len(ids) == len(set(ids))
    assert all(r["section"] and r["summary"] and r["severity"] in ("error", "warning") for r in rules)
    assert {"TS101", "TS208", "TS305", "TS401", "TS501"} <= set(ids)


def test_console_script_runs_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "x.jsonl"
    bad.write_bytes(b"{")
    r = subprocess.run([sys.executable, "-m", "conformance.cli", "validate", str(bad)], capture_output=True, text=True)
    assert r.returncode == 1 and "TS009" in r.stdout and "Traceback" not in r.stderr


def test_directory_walk_skips_unrelated_json_visibly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "config.json").write_text('{"theme": "dark"}')
    (tmp_path / "openai-request.json").write_text('{"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}')
    (tmp_path / "broken.json").write_text('{"role": ')
    (tmp_path / "t.jsonl").write_bytes((RULES / "valid.jsonl").read_bytes())
    assert main(["validate", "--output", "json", str(tmp_path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [Path(f["path"]).name for f in doc["files"]] == ["broken.json", "t.jsonl"]
    assert sorted(Path(p).name for p in doc["summary"]["skipped"]) == ["config.json", "openai-request.json"]
    # named explicitly, an unrelated .json is validated as canonical (and fails)
    assert main(["validate", str(tmp_path / "config.json")]) == 1


def test_progress_bar_on_a_terminal_for_large_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import threading

    from rich.progress import Progress

    import conformance.cli as cli
    from conformance.cli import progress

    advanced: list[int] = []
    real = Progress.advance

    def spy(self: object, task: object, n: float = 1) -> None:
        advanced.append(int(n))
        # the bar draws from here, with no thread of its own (one would keep --jobs
        # from forking its workers)
        assert threading.active_count() == 1
        real(self, task, n)  # type: ignore[arg-type]

    monkeypatch.setattr(progress, "PROGRESS_MIN_BYTES", 1)
    monkeypatch.setattr(cli.sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(Progress, "advance", spy)
    assert main(["validate", str(RULES / "valid.jsonl")]) == 0
    assert sum(advanced) == (RULES / "valid.jsonl").stat().st_size
    monkeypatch.setattr(cli.sys.stderr, "isatty", lambda: False)
    advanced.clear()
    assert main(["validate", str(RULES / "valid.jsonl")]) == 0
    assert advanced == []


def test_a_run_without_a_bar_does_not_load_rich(tmp_path: Path) -> None:
    """rich is loaded only when a progress bar shows (start-up, issue 13)."""
    code = (
        "import sys\nfrom conformance.cli import main\n"
        f"rc = main(['validate', {str(RULES / 'valid.jsonl')!r}])\n"
        "assert not [m for m in sys.modules if m == 'rich' or m.startswith('rich.')], 'rich loaded'\n"
        "sys.exit(rc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


# -- hostile names, unreadable inputs, friction (issue 9) -------------------------------


@pytest.mark.parametrize("name", ["[/x].jsonl", "[red]r.jsonl", "a:b:c.jsonl", ":smile:.jsonl"])
def test_names_are_printed_literally(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    p = tmp_path / name
    p.parent.mkdir(exist_ok=True)  # `[/x].jsonl` is `x].jsonl` in a folder named `[`
    p.write_bytes(b"{\n")
    assert main(["validate", str(p)]) == 1
    assert capsys.readouterr().out.startswith(f"{p}:1:1: ")  # file:line:column (issue 29)
    missing = tmp_path / ("gone-" + name)
    assert main(["validate", str(missing)]) == 2
    assert capsys.readouterr().err == f"turnspec: {missing}: no such file or directory\n"


def test_error_lines_are_not_wrapped(tmp_path: Path) -> None:
    deep = tmp_path / ("x" * 120) / ("y" * 120)
    r = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "validate", str(deep / "t.jsonl")], capture_output=True, text=True
    )
    assert r.returncode == 2 and r.stderr == f"turnspec: {deep / 't.jsonl'}: no such file or directory\n"


def test_missing_and_unreadable_paths_reported_rest_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "d" / "t.jsonl"
    good.parent.mkdir()
    good.write_bytes((RULES / "TS020.jsonl").read_bytes())
    os.mkfifo(tmp_path / "d" / "pipe.jsonl")
    (tmp_path / "d" / "zero.jsonl").symlink_to("/dev/zero")
    (tmp_path / "d" / "loop.jsonl").symlink_to(tmp_path / "d" / "loop.jsonl")
    assert main(["validate", str(tmp_path / "nope.jsonl"), str(tmp_path / "d")]) == 2
    cap = capsys.readouterr()
    assert " TS020 " in cap.out  # the readable file was still checked
    err = cap.err.splitlines()
    assert err[0] == f"turnspec: {tmp_path / 'nope.jsonl'}: no such file or directory"
    assert any(line.startswith(f"turnspec: {tmp_path / 'd' / 'pipe.jsonl'}: is a FIFO") for line in err)
    assert any(line.startswith(f"turnspec: {tmp_path / 'd' / 'zero.jsonl'}: is a character device") for line in err)
    assert any(line.startswith(f"turnspec: {tmp_path / 'd' / 'loop.jsonl'}: cannot read") for line in err)


def test_stdin_dash(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    class Stdin:
        buffer = io.BytesIO((RULES / "TS020.jsonl").read_bytes())

    monkeypatch.setattr(sys, "stdin", Stdin)
    assert main(["validate", "-"]) == 1
    assert capsys.readouterr().out.splitlines()[0].startswith("-:2: /content/0/text TS020 error")


def test_walk_recognising_nothing_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    assert main(["validate", str(tmp_path)]) == 2
    assert "no file in a known format" in capsys.readouterr().err
    # --show-skipped lists what the walk set aside even when that is everything
    assert main(["validate", "--show-skipped", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"skipped (no known format): {tmp_path / 'notes.txt'}" in err and "no file in a known format" in err


def test_skipped_files_counted_and_listed_on_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "b.txt").write_text("x")
    (tmp_path / "t.jsonl").write_bytes((RULES / "valid.jsonl").read_bytes())
    assert main(["validate", str(tmp_path)]) == 0
    assert "skipped 2 file(s)" in capsys.readouterr().out
    assert main(["validate", "--show-skipped", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"skipped (no known format): {tmp_path / 'a.txt'}" in out and str(tmp_path / "b.txt") in out


def test_version_flag_and_help_choices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("turnspec ")
    for argv, must in (
        (["validate", "--help"], ["canonical", "sqlite", "text|json"]),
        (["convert", "--help"], ["--from", "--to", "sqlite", "chibi"]),
        (["migrate", "--help"], ["gpt2099"]),
        (["schema", "diff", "--help"], ["text|json"]),
    ):
        assert main(argv) == 0
        out = capsys.readouterr().out
        flat = "".join(c for c in out if not c.isspace() and c != "│")  # the help table wraps long cells
        assert all(m in flat for m in must), (argv, out)
        assert "<bool>" not in out and "{" not in out and "<list[" not in out and "<path>" not in out, out


def test_unreadable_subfolder_is_reported_and_the_rest_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "t.jsonl").write_bytes((RULES / "TS020.jsonl").read_bytes())
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:  # what os.walk meets in a folder it may not list (root may)
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(locked))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    assert main(["validate", str(tmp_path)]) == 2
    cap = capsys.readouterr()
    assert " TS020 " in cap.out
    assert cap.err == f"turnspec: {locked}: cannot read folder: Permission denied\n"


def _feed(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    import io

    class Stdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", Stdin)


def _session_array(broken: bool) -> bytes:
    records = [json.loads(line) for line in (EXAMPLES / "session.jsonl").read_text().splitlines()[:3]]
    if broken:
        records.append({k: v for k, v in records[2].items() if k != "role"})
    return json.dumps(records).encode()


def test_stdin_holding_a_json_array_is_read_as_one_document(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _feed(monkeypatch, _session_array(broken=False))
    assert main(["validate", "-", "--select", "TS020"]) == 0
    assert capsys.readouterr().out.startswith("OK: 0 error(s), 0 warning(s) in 1 file(s), 3 record(s)")
    _feed(monkeypatch, _session_array(broken=True))
    assert main(["validate", "-", "--select", "TS020"]) == 1
    assert capsys.readouterr().out.splitlines()[0].startswith("-:1: /3/role TS020 error")


def test_stdin_filename_names_the_findings_and_its_suffix_decides_the_reading(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    _feed(monkeypatch, _session_array(broken=True))
    assert main(["validate", "-", "--stdin-filename", "dir/t.json", "--select", "TS020"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("dir/t.json:1: /3/role TS020 error") and len(out) == 2, out
    # the same array named .jsonl is read as lines: one line holding an array, not a message
    _feed(monkeypatch, _session_array(broken=False))
    assert main(["validate", "-", "--stdin-filename", "t.jsonl", "--select", "TS020"]) == 1
    assert capsys.readouterr().out.startswith("t.jsonl:1: TS020 error: Message: expected object, got array")
    _feed(monkeypatch, (RULES / "TS020.jsonl").read_bytes())
    assert main(["validate", "-", "--stdin-filename", "t.jsonl"]) == 1
    assert capsys.readouterr().out.startswith("t.jsonl:2: /content/0/text TS020 error")
    assert list(tmp_path.iterdir()) == []  # the name is a label: nothing opened or written there


def test_stdin_filename_without_dash_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(EXAMPLES), "--stdin-filename", "t.json"]) == 2
    assert "--stdin-filename: only with '-'" in capsys.readouterr().err


def _project(tmp_path: Path, table: str) -> Path:
    (tmp_path / "pyproject.toml").write_text(f"[tool.turnspec]\n{table}")
    sub = tmp_path / "sub" / "legacy"
    sub.mkdir(parents=True)
    (sub / "a.jsonl").write_bytes((RULES / "TS020.jsonl").read_bytes())
    (tmp_path / "sub" / "b.jsonl").write_bytes((RULES / "TS020.jsonl").read_bytes())
    return tmp_path / "sub"


def test_config_in_a_parent_pyproject_applies_and_flags_override_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    table = 'select = ["TS020"]\nper-file-ignores = { "sub/legacy/*" = ["TS020"] }\noutput = "json"\n'
    sub = _project(tmp_path, table)
    monkeypatch.chdir(sub)  # found by walking up, as ruff does
    assert main(["validate", "."]) == 1
    report = json.loads(capsys.readouterr().out)
    assert {v["path"] for v in report["violations"]} == {"b.jsonl"}
    assert main(["validate", ".", "--output", "text", "--ignore", "TS020"]) == 0
    assert capsys.readouterr().out.startswith("OK:")


def test_config_select_and_strict_are_defaults(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = _project(tmp_path, 'select = ["TS208"]\n')
    monkeypatch.chdir(sub)
    assert main(["validate", "."]) == 0  # TS020 (and the duplicate ids, TS202) not selected
    capsys.readouterr()
    assert main(["validate", ".", "--select", "TS020"]) == 1


def test_config_unknown_key_is_one_line_naming_file_and_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = _project(tmp_path, 'selct = ["TS0"]\n')
    monkeypatch.chdir(sub)
    assert main(["validate", "."]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(tmp_path / "pyproject.toml") in err and "'selct'" in err, err
