"""Reading the NUON subset that gpt2099 exports threads in.

NUON (Nushell Object Notation, `to nuon` / `from nuon`) is JSON plus Nushell literals:
barewords as strings, optional commas, `#` comments, quoted record keys optional, and
tables written as `[[col, ...]; [cell, ...], ...]`. gpt2099's thread listing
(`threads-messages.nuon`) uses exactly that much.

Why hand-written: there is no maintained Python NUON reader (PyPI's `nuon` is an unrelated
cloud SDK). `tree-sitter-nuon` would give a concrete syntax tree, but turning it into
values still needs the same string, number and table handling as this module, plus two
native dependencies for one input shape of one format. This reader is small, bounded
(explicit depth limit, no recursion beyond it), and reports every problem with its line
and column instead of raising.

Supported: records, lists, tables, double-quoted strings (JSON escapes, `\\u{...}`),
single-quoted and backtick strings, raw strings `r#'...'#`, barewords, decimal integers
and floats, `true`/`false`/`null`, comments. Values JSON cannot hold (durations, file sizes,
dates, binary `0x[...]`, ranges, `inf`/`NaN`) and anything outside NUON are reported, never
guessed at.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 200

# Python refuses to parse integers of more than 4300 digits; no JSON reader holds one either
MAX_NUMBER_CHARS = 4000
_NUMBER = re.compile(r"[+-]?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
_NON_FINITE = frozenset({"inf", "-inf", "+inf", "NaN", "nan", "-nan", "infinity", "-infinity"})
_DELIM = frozenset(" \t\r\n,;[]{}()\"'`")
_KEY_DELIM = _DELIM | {":"}
_SIMPLE_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "'": "'",
}


class NuonError(Exception):
    """A located problem; `kind` is one of syntax, unsupported, duplicate, depth, non_finite."""

    def __init__(self, kind: str, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Parsed:
    """The value, and the line each element of a top-level list (or table row) starts on."""

    value: Any
    item_lines: list[int]


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.n = len(text)
        self.item_offsets: list[int] = []

    # -- positions and errors ---------------------------------------------------------

    def where(self, pos: int) -> tuple[int, int]:
        line = self.s.count("\n", 0, pos) + 1
        col = pos - (self.s.rfind("\n", 0, pos) + 1) + 1
        return line, col

    def fail(self, kind: str, message: str, pos: int | None = None) -> NuonError:
        line, col = self.where(self.i if pos is None else pos)
        return NuonError(kind, f"{message} at line {line}, column {col}", line, col)

    def skip(self, commas: bool = True) -> None:
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c in " \t\r\n" or (commas and c == ","):
                self.i += 1
            elif c == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end + 1
            else:
                return

    # -- values -----------------------------------------------------------------------

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail("depth", f"value nested deeper than {MAX_DEPTH} levels")
        self.skip(commas=False)
        if self.i >= self.n:
            raise self.fail("eof", "text ends where a value was expected")
        c = self.s[self.i]
        if c == "{":
            return self.record(depth)
        if c == "[":
            return self.list_or_table(depth)
        if c in "\"'`":
            return self.string()
        if c == "r" and self.s.startswith("r#", self.i):
            return self.raw_string()
        if c in "]},;:),":
            raise self.fail("syntax", f"unexpected {c!r}")
        if c in "($":
            raise self.fail("unsupported", f"{c!r} starts a Nushell expression, which NUON data cannot hold")
        return self.bare_value()

    def record(self, depth: int) -> dict[str, Any]:
        start = self.i
        self.i += 1
        out: dict[str, Any] = {}
        while True:
            self.skip()
            if self.i >= self.n:
                raise self.fail("eof", "record never closed; it opens", start)
            if self.s[self.i] == "}":
                self.i += 1
                return out
            key_pos = self.i
            key = self.key()
            self.skip(commas=False)
            if self.i >= self.n or self.s[self.i] != ":":
                raise self.fail("syntax", f"expected ':' after record key {key!r}")
            self.i += 1
            if key in out:
                raise self.fail("duplicate", f"record key {key!r} appears twice", key_pos)
            out[key] = self.value(depth + 1)

    def key(self) -> str:
        c = self.s[self.i]
        if c in "\"'`":
            return self.string()
        if c == "r" and self.s.startswith("r#", self.i):
            return self.raw_string()
        start = self.i
        while self.i < self.n and self.s[self.i] not in _KEY_DELIM:
            self.i += 1
        if self.i == start:
            raise self.fail("syntax", f"expected a record key, found {c!r}")
        return self.s[start : self.i]

    def items(self, depth: int, top: bool) -> list[Any]:
        """Values up to the closing `]` (the `[` is consumed)."""
        out: list[Any] = []
        while True:
            self.skip()
            if self.i >= self.n:
                raise self.fail("eof", "text ends inside a list")
            if self.s[self.i] == "]":
                self.i += 1
                return out
            if top:
                self.item_offsets.append(self.i)
            out.append(self.value(depth + 1))

    def list_or_table(self, depth: int) -> list[Any]:
        top = depth == 0
        self.i += 1
        self.skip()
        if self.i < self.n and self.s[self.i] == "[":
            first_pos = self.i
            first = self.value(depth + 1)
            self.skip(commas=False)
            if self.i < self.n and self.s[self.i] == ";":
                self.i += 1
                return self.table(first, first_pos, depth, top)
            if top:
                self.item_offsets.append(first_pos)
            return [first, *self.items(depth, top)]
        return self.items(depth, top)

    def table(self, header: list[Any], header_pos: int, depth: int, top: bool) -> list[Any]:
        if not all(isinstance(h, str) for h in header):
            raise self.fail("syntax", "table header must be a list of column names", header_pos)
        if len(set(header)) != len(header):
            raise self.fail("duplicate", "table header names a column twice", header_pos)
        rows: list[Any] = []
        while True:
            self.skip()
            if self.i >= self.n:
                raise self.fail("eof", "text ends inside a table")
            if self.s[self.i] == "]":
                self.i += 1
                return rows
            if self.s[self.i] != "[":
                raise self.fail("syntax", "expected a table row `[...]`")
            row_pos = self.i
            if top:
                self.item_offsets.append(row_pos)
            self.i += 1
            cells = self.items(depth + 1, False)
            if len(cells) != len(header):
                raise self.fail("syntax", f"table row has {len(cells)} cells for {len(header)} columns", row_pos)
            rows.append(dict(zip(header, cells, strict=True)))

    def string(self) -> str:
        quote = self.s[self.i]
        start = self.i
        self.i += 1
        if quote in "'`":
            end = self.s.find(quote, self.i)
            if end < 0:
                raise self.fail("eof", "string never closed; it opens", start)
            self.i = end + 1
            return self.s[start + 1 : end]
        parts: list[str] = []
        s = self.s
        while True:
            j = self.i
            while j < self.n and s[j] not in '"\\':
                j += 1
            parts.append(s[self.i : j])
            if j >= self.n:
                raise self.fail("eof", "string never closed; it opens", start)
            if s[j] == '"':
                self.i = j + 1
                return "".join(parts)
            self.i = j + 1
            parts.append(self.escape(j))

    def escape(self, at: int) -> str:
        s = self.s
        if self.i >= self.n:
            raise self.fail("eof", "text ends inside an escape", at)
        c = s[self.i]
        self.i += 1
        if c in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[c]
        if c == "u":
            if self.i < self.n and s[self.i] == "{":
                end = s.find("}", self.i)
                digits = s[self.i + 1 : end] if end > 0 else ""
                if not re.fullmatch(r"[0-9a-fA-F]{1,6}", digits):
                    raise self.fail("syntax", "bad \\u{...} escape", at)
                self.i = end + 1
            else:
                digits = s[self.i : self.i + 4]
                if not re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                    raise self.fail("syntax", "bad \\u escape", at)
                self.i += 4
            code = int(digits, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise self.fail("syntax", f"\\u escape {digits} is not a Unicode scalar value", at)
            return chr(code)
        raise self.fail("syntax", f"unknown escape \\{c}", at)

    def raw_string(self) -> str:
        start = self.i
        j = self.i + 1
        while j < self.n and self.s[j] == "#":
            j += 1
        hashes = j - self.i - 1
        if j >= self.n or self.s[j] != "'":
            return str(self.bare_value())  # a bareword that happens to start with r#
        close = "'" + "#" * hashes
        end = self.s.find(close, j + 1)
        if end < 0:
            raise self.fail("eof", "raw string never closed; it opens", start)
        self.i = end + len(close)
        return self.s[j + 1 : end]

    def bare_value(self) -> Any:
        start = self.i
        while self.i < self.n and self.s[self.i] not in _DELIM:
            self.i += 1
        word = self.s[start : self.i]
        if word.startswith("0x") and self.i < self.n and self.s[self.i] == "[":
            raise self.fail("unsupported", "binary literal 0x[...] cannot be held in JSON", start)
        if word == "true":
            return True
        if word == "false":
            return False
        if word == "null":
            return None
        if _NUMBER.match(word):
            if len(word) > MAX_NUMBER_CHARS:
                raise self.fail(
                    "unsupported",
                    f"number of {len(word)} characters is longer than any JSON reader holds (at most {MAX_NUMBER_CHARS})",
                    start,
                )
            number = float(word) if any(ch in word for ch in ".eE") else int(word)
            if number in (float("inf"), float("-inf")):
                raise self.fail("non_finite", f"{word} is beyond the range of a JSON number (a 64-bit float)", start)
            return number
        if word in _NON_FINITE:
            raise self.fail("non_finite", f"{word} is not a JSON number", start)
        head = word.lstrip("+-")
        if head[:1].isdigit() or ".." in word:
            raise self.fail(
                "unsupported",
                f"{word!r} is a Nushell literal (duration, file size, date or range) that JSON cannot hold",
                start,
            )
        return word


def parse(text: str) -> Parsed:
    """Parse one NUON document; raise `NuonError` (located) on anything else."""
    p = _Parser(text)
    value = p.value(0)
    p.skip()
    if p.i < p.n:
        raise p.fail("syntax", f"unexpected {p.s[p.i]!r} after the value")
    lines: list[int] = []
    if isinstance(value, list):
        line, pos = 1, 0
        for off in p.item_offsets:  # offsets are increasing: count newlines once
            line += text.count("\n", pos, off)
            pos = off
            lines.append(line)
    return Parsed(value, lines)
