"""Colour for text reports on a terminal: severities, rule ids, verdicts (OK/FAIL).

Plain ANSI SGR sequences (ECMA-48), not rich: colouring a report must not cost rich's
start-up. `--color auto` (the default) colours only when the stream is a terminal, `TERM`
is not `dumb` and `NO_COLOR` is unset or empty (https://no-color.org); `--color always`
and `--color never` are the user's explicit choice, which no-color.org lets override
`NO_COLOR`.

Colour wraps text that is already escaped (`escaping.text`, `escaping.text_line`): the
escapes make data inert first, then the codes go around the result, so data can never
open, close or move a colour, and removing the codes gives back the uncoloured line.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from typing import TextIO


class ColorChoice(enum.StrEnum):
    auto = "auto"
    always = "always"
    never = "never"


def wanted(choice: ColorChoice | str, stream: TextIO) -> bool:
    """Whether output to `stream` is coloured under `choice` (see the module docstring)."""
    if choice == ColorChoice.always:
        return True
    if choice == ColorChoice.never or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


RESET = "\x1b[0m"
_STYLES = {
    "error": "\x1b[1;31m",  # bold red
    "warning": "\x1b[1;33m",  # bold yellow
    "rule": "\x1b[36m",  # cyan
    "ok": "\x1b[1;32m",  # bold green
    "fail": "\x1b[1;31m",
    "pass": "\x1b[32m",
    "skip": "\x1b[2m",  # faint
    "warn": "\x1b[33m",
}


@dataclass(frozen=True)
class Palette:
    """Colours text when `on`; otherwise returns it unchanged. Every argument is text
    already escaped for its line."""

    on: bool = False

    def paint(self, style: str, text: str) -> str:
        code = _STYLES.get(style)
        if not self.on or code is None or not text:
            return text
        return f"{code}{text}{RESET}"

    def severity(self, text: str, severity: str) -> str:
        """`error` or `warning` (a `Severity`'s value) in its colour."""
        return self.paint(str(severity), text)

    def rule(self, text: str) -> str:
        return self.paint("rule", text)

    def verdict(self, ok: bool) -> str:
        """`OK` or `FAIL`, in green or red."""
        return self.paint("ok", "OK") if ok else self.paint("fail", "FAIL")

    def status(self, text: str, status: str) -> str:
        """A suite cell's mark (`pass`, `FAIL`, `skip`, `warn`) for its `status`."""
        return self.paint(status, text)


PLAIN = Palette(False)
