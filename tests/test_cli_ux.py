"""Issue 29, "a CI gate people enjoy": what `turnspec` prints when a run goes wrong or is
asked for help (skips in every output, one-line usage errors, help that shows brackets,
rule look-ups, `--exit-zero` and `--statistics`)."""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Iterator

import pytest
from typer import _click as click  # typer vendors click: its classes are the ones typer builds

from conformance.cli import command, main


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
