"""`turnspec` on a terminal (issue 29 items 2-3): the progress bar (standard error only,
drawn only on a terminal, never mixed with the report, removed at the end)."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

import conformance.cli as cli
from conformance.cli import main

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
    with cli._progress_bar(True, 1000, term) as bar:
        assert bar is not None
        bar.advance(250)
        drawn = term.getvalue()
    assert "[progress.description]" not in drawn
    assert screen(drawn)[-1].startswith("validating ") and "0.2/1.0 kB" in screen(drawn)[-1]
    assert screen(term.getvalue()) == [""]  # nothing left on the screen once the run ends


def test_progress_bar_draws_only_on_a_terminal() -> None:
    pipe = io.StringIO()
    with cli._progress_bar(True, 1000, pipe) as bar:
        assert bar is None
    assert pipe.getvalue() == ""


def test_findings_never_share_the_bar_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard output and error on one terminal, as in an interactive shell: the screen
    shows the report and nothing of the bar, which was drawn before the findings."""
    term = FakeTerminal()
    monkeypatch.setattr(cli, "PROGRESS_MIN_BYTES", 1)
    monkeypatch.setattr(cli.sys, "stdout", term)
    monkeypatch.setattr(cli.sys, "stderr", term)
    monkeypatch.setenv("NO_COLOR", "1")
    path = RULES / "TS205.jsonl"
    assert main(["validate", str(path)]) == 1
    raw = term.getvalue()
    assert "validating" in raw.split(str(path), 1)[0]  # the bar was on the screen before the first finding
    assert "[progress.description]" not in raw
    assert screen(raw) == [
        f"{path}:4: /content/0/tool_use_id TS205 error: tool_result answers tu_01JZ0000000000000000000T02"
        " but no earlier tool_use has that id",
        f"{path}:3: /content/2 TS208 warning: tool_use tu_01JZ0000000000000000000T01 in session sess_42"
        " was never answered by a tool_result",
        "FAIL: 1 error(s), 1 warning(s) in 1 file(s), 5 record(s)",
        "",
    ]
