"""`turnspec` on a terminal (issue 29 items 2-3): the progress bar (standard error only,
drawn only on a terminal, never mixed with the report, removed at the end), and colour
(`--color auto|always|never`, NO_COLOR)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.cli import main, progress

RULES = Path(__file__).parent / "rules" / "canonical"


class FakeTerminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


_TOKEN = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+")


def screen(raw: str) -> list[str]:
    """What a terminal shows after `raw`: carriage return, line feed and erase-in-line
    (`ESC[K`, `ESC[2K`) obeyed, other control sequences (colours) dropped."""
    rows, col = [""], 0
    for token in _TOKEN.findall(raw):
        if token == "\n":
            rows.append("")
            col = 0
        elif token == "\r":
            col = 0
        elif token == "\x1b[2K":
            rows[-1] = ""
        elif token in ("\x1b[K", "\x1b[0K"):
            rows[-1] = rows[-1][:col]
        elif token.startswith("\x1b["):
            continue
        else:
            row = rows[-1].ljust(col)
            rows[-1] = row[:col] + token + row[col + len(token) :]
            col += len(token)
    return rows


def test_progress_bar_helper_shows_its_description_as_text_and_is_removed() -> None:
    term = FakeTerminal()
    with progress.progress_bar(True, 1000, term) as bar:
        assert bar is not None
        bar.advance(250)
        drawn = term.getvalue()
    assert "[progress.description]" not in drawn
    assert screen(drawn)[-1].startswith("validating ") and "0.2/1.0 kB" in screen(drawn)[-1]
    assert screen(term.getvalue()) == [""]  # nothing left on the screen once the run ends


def test_progress_bar_draws_only_on_a_terminal() -> None:
    pipe = io.StringIO()
    with progress.progress_bar(True, 1000, pipe) as bar:
        assert bar is None
    assert pipe.getvalue() == ""


def test_findings_never_share_the_bar_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard output and error on one terminal, as in an interactive shell: the screen
    shows the report and nothing of the bar, which was drawn before the findings."""
    term = FakeTerminal()
    monkeypatch.setattr(progress, "PROGRESS_MIN_BYTES", 1)
    monkeypatch.setattr(sys, "stdout", term)
    monkeypatch.setattr(sys, "stderr", term)
    monkeypatch.setenv("NO_COLOR", "1")
    path = RULES / "TS205.jsonl"
    assert main(["validate", str(path)]) == 1
    raw = term.getvalue()
    assert "validating" in raw.split(str(path), 1)[0]  # the bar was on the screen before the first finding
    assert "[progress.description]" not in raw
    assert screen(raw) == [  # by line (issue 39): TS208, found at the end of input, is on line 3
        f"{path}:3: /content/2 TS208 warning: tool_use tu_01JZ0000000000000000000T01 in session sess_42"
        " was never answered by a tool_result",
        f"{path}:4: /content/0/tool_use_id TS205 error: tool_result answers tu_01JZ0000000000000000000T02"
        " but no earlier tool_use has that id",
        "FAIL: 1 error(s), 1 warning(s) in 1 file(s), 5 record(s)",
        "",
    ]


# -- colour: --color auto|always|never, NO_COLOR (item 3) ---------------------------------

SGR = re.compile(r"\x1b\[[0-9;]*m")


def _on_a_pty(argv: list[str], env: dict[str, str]) -> str:
    """What `turnspec argv` writes to standard output when it is a pseudo-terminal."""
    primary, secondary = os.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "conformance.cli", *argv],
            stdin=subprocess.DEVNULL, stdout=secondary, stderr=subprocess.PIPE, env=env, timeout=120, check=False,
        )  # fmt: skip
        os.close(secondary)
        secondary = -1
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:  # EIO: the other side is closed and everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(primary)
        if secondary >= 0:
            os.close(secondary)
    assert proc.returncode == 1, proc.stderr
    return b"".join(chunks).decode()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TERM")}
    return {**env, "TERM": "xterm-256color", **extra}


def test_validate_color_always_colours_severity_rule_and_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(RULES / "TS205.jsonl")
    assert main(["validate", "--color", "never", path]) == 1
    plain = capsys.readouterr().out
    assert main(["validate", "--color", "always", path]) == 1
    coloured = capsys.readouterr().out
    assert "\x1b[" not in plain
    assert "\x1b[1;31merror\x1b[0m" in coloured and "\x1b[1;33mwarning\x1b[0m" in coloured
    assert "\x1b[36mTS205\x1b[0m" in coloured and coloured.splitlines()[-1].startswith("\x1b[1;31mFAIL\x1b[0m: ")
    assert SGR.sub("", coloured) == plain


def test_colour_goes_around_escaped_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Data that holds escape sequences and a workflow command is escaped first: the only
    codes in the output are turnspec's, and without them the line is the uncoloured one."""
    p = tmp_path / "::warning \x1b[32mx\x1b[0m.jsonl"
    p.write_bytes(b'{"id": "\x1b]0;title\x07", "x": ' + b"\n")
    assert main(["validate", "--color", "never", str(p)]) == 1
    plain = capsys.readouterr().out
    assert main(["validate", "--color", "always", str(p)]) == 1
    coloured = capsys.readouterr().out
    assert "\x1b" not in plain and "\\x1b[32mx\\x1b[0m" in plain
    assert SGR.sub("", coloured) == plain and coloured != plain


def test_validate_colour_auto_on_a_terminal_but_never_with_no_color_or_a_pipe() -> None:
    argv = ["validate", str(RULES / "TS205.jsonl")]
    assert "\x1b[1;31merror\x1b[0m" in _on_a_pty([*argv, "--color", "auto"], _env())
    assert "\x1b[" not in _on_a_pty([*argv, "--color", "auto"], _env(NO_COLOR="1"))
    assert "\x1b[" not in _on_a_pty(argv, _env(NO_COLOR="1"))  # auto is the default
    piped = subprocess.run(
        [sys.executable, "-m", "conformance.cli", *argv], capture_output=True, text=True, env=_env(), timeout=120
    )
    assert piped.returncode == 1 and "TS205" in piped.stdout and "\x1b[" not in piped.stdout


def test_conform_colour(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["conform", "ollama", "--no-samples", "--select", "TC101"]
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert main([*argv, "--color", "always"]) == 0
    coloured = capsys.readouterr().out
    assert "\x1b[36mTC101\x1b[0m \x1b[32mpass\x1b[0m" in coloured and "\x1b[1;32mOK\x1b[0m: " in coloured
    assert main([*argv, "--color", "never"]) == 0
    plain = capsys.readouterr().out
    assert "\x1b[" not in plain
    assert SGR.sub("", coloured).splitlines()[:-1] == plain.splitlines()[:-1]  # the last line says how long it took
    term = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", term)
    assert main(argv) == 0
    assert "\x1b[32mpass\x1b[0m" in term.getvalue()
    term.truncate(0)
    term.seek(0)
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(argv) == 0
    assert "TC101 pass" in term.getvalue() and "\x1b[" not in term.getvalue()
