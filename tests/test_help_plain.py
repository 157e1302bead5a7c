"""`--help` into a pipe or a file is whole (issue 39, item 8): the rich table, laid out for an
80-column terminal when there is none, cut help strings short (`(default
../shared/samples/w...`); without a terminal the help is click's plain layout, every word
of every help string shown."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer import _click as click

from conformance.cli import command, main

ROOT = Path(__file__).resolve().parents[1]


def _commands(cmd: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    yield path, cmd
    for name, sub in sorted(getattr(cmd, "commands", {}).items()):
        yield from _commands(sub, (*path, name))


def _words(text: str) -> str:
    """The words of `text`, however wrapped (a line may break after a hyphen)."""
    return re.sub(r"-\s+", "-", " ".join(text.replace("\\[", "[").split()))


def _help(path: tuple[str, ...]) -> str:
    """`turnspec PATH --help` as a pipe receives it (a child process, standard output a pipe)."""
    done = subprocess.run(
        [sys.executable, "-m", "conformance.cli", *path, "--help"],
        capture_output=True, text=True, cwd=ROOT, check=False, env=None,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


PATHS = [p for p, _ in _commands(command())]


def test_every_command_is_looked_at() -> None:
    assert {(), ("conform",), ("validate",), ("schema", "export")} <= set(PATHS)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "turnspec")
def test_help_into_a_pipe_shows_every_help_string_whole(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*path, "--help"]) == 0  # captured: standard output is not a terminal
    out = capsys.readouterr().out
    assert "…" not in out and "╭" not in out  # neither cut nor drawn as a table
    flat = _words(out)
    cmd = dict(_commands(command()))[path]
    for p in cmd.params:
        text = getattr(p, "_turnspec_raw_help", None) or getattr(p, "help", None)
        if text:
            assert _words(text) in flat, (path, p.name)
    for name, sub in getattr(cmd, "commands", {}).items():
        first = (sub.help or "").strip().split("\n\n", 1)[0]
        assert _words(first) in flat, (path, name)


def test_conform_samples_default_is_shown_whole() -> None:
    assert "(default: [tool.turnspec] samples, else $TURNSPEC_SAMPLES, else none)" in _words(_help(("conform",)))


def test_a_terminal_still_gets_the_rich_layout(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["conform", "--help"]) == 0
    assert "╭" in capsys.readouterr().out


# a path of turnspec's checkout, which an installed turnspec (a wheel, a git URL) does not have
_CHECKOUT_PATH = re.compile(
    r"(?<![\w./-])(?:docs|schemas|tests|generated|conformance)/[\w./<>-]*|\b(?!README\.md)[\w-]+\.md\b"
)  # README.md: a file init writes


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "turnspec")
def test_help_points_at_nothing_only_a_checkout_has(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    """Read by someone who installed turnspec into another repository's CI: a page is named by
    its docs-site URL, a schema by the command that exports it, never by a checkout's file
    (`turnspec exec --help` said docs/exec-protocol.md, `conform --help` schemas/exec/v1)."""
    assert main([*path, "--help"]) == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert not [m.group(0) for m in _CHECKOUT_PATH.finditer(flat)], (path, flat)
