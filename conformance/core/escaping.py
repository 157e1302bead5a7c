"""Escaping for every output: one function per sink, so data from transcripts, cassettes
and file names reaches a terminal, a CI log, Markdown or XML as inert, visible text.

Data (metadata keys, block types, cassette URIs, file names, messages quoting them) is
untrusted. Each sink has its own hazards:

- `text_line`: a line of a terminal or CI log (text reports, stderr messages). Control
  characters, line breaks (also U+0085, U+2028, U+2029), bidi overrides and lone
  surrogates become visible escapes (`\\n`, `\\x1b`, `\\u2028`, `\\xff`), so data never
  starts a line, moves the cursor or recolours the log. On a GitHub Actions runner a line
  that starts with `::` after leading spaces is a workflow command, and `##[` anywhere in a
  line is one too (the runner's legacy syntax, `ActionCommand.TryParse` in actions/runner);
  both are defused here, whatever the line holds.
- `md`: inline Markdown (a table cell, a list item) for `$GITHUB_STEP_SUMMARY` and the
  conform report. Raw HTML, cell breaks, code spans, links and a leading `#` are escaped.
- `xml`: a string ElementTree can write as well-formed XML 1.0 (ElementTree escapes the
  markup, not the characters XML 1.0 forbids).
- `name`: a file name as text; a non-UTF-8 name (surrogateescape) shows its bytes as
  `\\xff`, so a UTF-8 JSON, SARIF or XML writer never raises on it.
- `json_safe`: the same for every string in a JSON (or SARIF) document, before it is
  serialised; `json_text`, after: what JSON leaves raw and a log would act on (C1
  controls, separators, bidi controls, the runner's `##[`) becomes a `\\uXXXX` escape,
  which decodes to the same data.

The escapes are for reading, not for round trips: a backslash in the data is not doubled
(the exact data is in the JSON and SARIF outputs).
"""

from __future__ import annotations

import functools
import os
import re
from typing import Any, TypeVar, cast

# Characters no text sink shows raw: C0 and C1 controls and DEL (ESC starts ANSI and OSC
# sequences; NEL, VT, FF split lines for some readers), line and paragraph separators,
# the bidi controls of "Trojan Source" (CVE-2021-42574), lone surrogates (non-UTF-8 names)
# and the two noncharacters XML 1.0 forbids. Hand-written: the stdlib has no
# terminal-safe escaper (`repr` also quotes and escapes the backslash and every non-ASCII
# space, and `unicode_escape` escapes all of non-ASCII).
# Every one of them is "Other" or "Separator" to Unicode, so a string `str.isprintable`
# accepts holds none. Each class is compiled at its first use (a class of wide ranges
# costs about 10 ms to compile: a start-up that writes only plain lines needs none).
_TEXT_UNSAFE = "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]"
# what XML 1.0 forbids (its `Char` production, §2.2); `xml.sax.saxutils` escapes markup only
_XML_UNSAFE = "[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
_SURROGATE = "[\ud800-\udfff]"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(ch: str) -> str:
    """One character as a Python-style escape; a surrogateescape byte as `\\xNN`."""
    short = _SHORT.get(ch)
    if short is not None:
        return short
    cp = ord(ch)
    if 0xDC80 <= cp <= 0xDCFF:  # os.fsdecode's stand-in for the undecodable byte cp - 0xDC00
        return f"\\x{cp - 0xDC00:02x}"
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def _sub_visible(m: re.Match[str]) -> str:
    return _visible(m.group())


def text(s: str) -> str:
    """`s` as inert text for a terminal or log line (see the module docstring)."""
    if not s.isprintable():
        s = _compiled(_TEXT_UNSAFE).sub(_sub_visible, s)
    if "##[" in s:  # the runner's legacy command prefix, honoured anywhere in a line
        s = s.replace("##[", "##\\x5b")
    return s


def text_line(s: str) -> str:
    """A whole output line: `text(s)`, and never a workflow command (`::` first, once the
    runner has trimmed leading spaces)."""
    s = text(s)
    body = s.lstrip()
    if body.startswith("::"):
        s = s[: len(s) - len(body)] + "\\x3a" + body[1:]
    return s


def lines(s: str) -> str:
    """Text already split into lines by the renderer (`\\n`): each line made a `text_line`;
    the final newline, if any, is kept."""
    end = "\n" if s.endswith("\n") else ""
    body = s[: len(s) - len(end)]
    return "\n".join(text_line(part) for part in body.split("\n")) + end


# Inline Markdown: `\` first (so the escapes added below stay escapes), then HTML's three
# through `html.escape`, then GFM's cell separator, the link brackets, and the backtick
# as an entity (a backslash does not escape inside a code span, an entity is not parsed
# as one).
_MD_ESCAPES = str.maketrans({"\\": "\\\\", "|": "\\|", "[": "\\[", "]": "\\]", "`": "&#96;"})


def md(s: str) -> str:
    """`s` as inline Markdown text: a table cell or list item that stays one, with no raw
    HTML, code span, link or heading from the data."""
    import html  # loaded only when Markdown or HTML is written

    out = html.escape(text(s), quote=False).translate(_MD_ESCAPES)
    if out.lstrip().startswith("#"):
        i = len(out) - len(out.lstrip())
        out = out[:i] + "\\" + out[i:]
    return out


def xml(s: str) -> str:
    """`s` with every character XML 1.0 forbids shown as a visible escape (markup itself
    is escaped by the serialiser: ElementTree)."""
    if s.isprintable() or _compiled(_XML_UNSAFE).search(s) is None:
        return s
    return _compiled(_XML_UNSAFE).sub(_sub_visible, s)


def unsurrogate(s: str) -> str:
    """`s` with every lone surrogate shown as an escape (`\\xff` for a surrogateescape
    byte): a string every UTF-8 encoder accepts."""
    if s.isascii() or _compiled(_SURROGATE).search(s) is None:
        return s
    return _compiled(_SURROGATE).sub(_sub_visible, s)


def name(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """A file name as text: non-UTF-8 bytes shown as `\\xNN`, never a lone surrogate."""
    return unsurrogate(os.fsdecode(path))


# what `json.dumps(..., ensure_ascii=False)` and orjson leave raw that a terminal or the
# runner would act on; only ever inside JSON strings, so a `\uXXXX` escape is lossless
_JSON_UNSAFE = "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"


def _sub_json(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def json_text(serialised: str) -> str:
    """Serialised JSON made safe for a log, decoding to the same data: the raw characters
    JSON allows but a terminal obeys, and the runner's legacy `##[` prefix (which can only
    occur inside a string), become `\\uXXXX` escapes."""
    # (every character of the class but DEL is outside ASCII)
    if ("\x7f" in serialised or not serialised.isascii()) and _compiled(_JSON_UNSAFE).search(serialised):
        serialised = _compiled(_JSON_UNSAFE).sub(_sub_json, serialised)
    return serialised.replace("##[", "##\\u005b")


_J = TypeVar("_J")


def json_safe(value: _J) -> _J:
    """`value` (JSON data: dicts, lists, strings, numbers) with `unsurrogate` applied to
    every string, keys too (a tuple comes back a list); the rest is returned as it is."""
    out: Any = value
    if isinstance(value, str):
        out = unsurrogate(value)
    elif isinstance(value, dict):
        out = {json_safe(k): json_safe(v) for k, v in value.items()}
    elif isinstance(value, list | tuple):
        out = [json_safe(v) for v in value]
    return cast(_J, out)
