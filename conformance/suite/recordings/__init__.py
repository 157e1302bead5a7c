"""The recording formats the suite reads, one module each, and the one list of them
(`FORMATS`) that `cassettes.load_cassette` and `iter_cassettes` read.

A file is parsed by its suffix (`.json` and `.har` as JSON, the rest as YAML; both bounded:
`cassettes.check_yaml_bounds` for YAML nesting and aliases, `loads_strict` for JSON
nesting) and its format told by its content, the first of `FORMATS` whose `detect` accepts
the parsed document: vcrpy, go-vcr (Go), VCR (Ruby and R), HAR (browsers, Polly.js), nock
(Node), ExVCR (Elixir), php-vcr (PHP), the Azure SDK test-proxy (Azure SDKs), Betamax (Java,
OkReplay on Android), WireMock (stub mappings, one a file or a `mappings` list) and Hoverfly
(simulations, `{data: {pairs}, meta}`) and httpmock (Rust: `{when, then}` mocks, one a YAML
document); an httprr trace (Go, `*.httprr`) is no JSON or
YAML and is told by its suffix, read as bytes (`httprr.parse`). A reader turns each interaction into a `Recorded`;
`base.interaction_of` makes the suite's `Interaction` of it, so every format is attributed
and decoded alike. What a reader reads another way than its recorder's layout, losing
nothing, is a warning naming the field (`Recorded.warnings`), said on that interaction's
TC800 case.

Adding a format: a module here with `detect` and `read` and its `FORMAT`, listed in
`FORMATS`, a hand-written recording under tests/data/recordings/, and its name in the docs.
"""

from __future__ import annotations

import bisect
import json
import re
import zlib
from typing import Any

from ...wire.content_coding import MissingDecoder
from ...wire.framing import loads_strict
from ...wire.recording_files import load_yaml_documents
from ..interactions import Cassette, CassetteError
from . import azure, betamax, exvcr, go_vcr, har, hoverfly, httpmock, httprr, nock, php_vcr, vcr, vcrpy, wiremock
from .base import RecordingFormat, interaction_of

FORMATS: tuple[RecordingFormat, ...] = (
    vcrpy.FORMAT,
    go_vcr.FORMAT,
    vcr.FORMAT,
    har.FORMAT,
    nock.FORMAT,
    exvcr.FORMAT,
    php_vcr.FORMAT,
    azure.FORMAT,
    betamax.FORMAT,
    wiremock.FORMAT,
    wiremock.SINGLE,
    hoverfly.FORMAT,
    httpmock.FORMAT,
    httpmock.SINGLE,
    httprr.FORMAT,
)


def names() -> str:
    return ", ".join(dict.fromkeys(f.name for f in FORMATS))  # a format of two layouts once


def detect(doc: Any) -> RecordingFormat | None:
    """The format of a parsed recording, by its content (top-level keys), or None."""
    return next((f for f in FORMATS if f.detect(doc)), None)


def parse_yaml(text: str) -> Any:
    """A YAML recording (already bounded by `check_yaml_bounds`), read by
    `recording_files.load_yaml_documents` (safe: builds data only): its one document, or a
    stream of several (httpmock's, one mock a document) as the list of them."""
    docs = load_yaml_documents(text)
    if len(docs) > 1:  # an empty document (a `---` closing the stream) holds nothing
        docs = [d for d in docs if d is not None]
    return docs[0] if len(docs) == 1 else docs or None


def parse_json(text: str) -> Any:
    """A JSON recording: strict (no NaN), nesting bounded (`loads_strict`); a syntax error
    names its line."""
    try:
        return loads_strict(text)
    except json.JSONDecodeError as exc:
        raise CassetteError(f"line {exc.lineno}: not JSON: {exc.msg}") from None
    except ValueError as exc:
        raise CassetteError(f"not JSON: {exc}") from None


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},:]')


def json_lines(text: str, fmt: RecordingFormat) -> list[int]:
    """The 1-based line on which each interaction of a JSON recording starts (at the array
    `fmt.items_at` names), found by one scan of its tokens (nothing built; the document was
    parsed, bounded, before). Empty when the array is not where the format says."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    if fmt.single:  # the document is the one interaction: it starts where its object does
        start = len(text) - len(text.lstrip())
        return [bisect.bisect_right(newlines, start) + 1] if start < len(text) else []
    stack: list[list[Any]] = []  # per open container: its kind and, in an object, the last key
    key: str | None = None
    target: int | None = None  # the stack depth of the interactions' array
    lines: list[int] = []

    def element_after(end: int) -> None:
        i = end
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i < len(text) and text[i] != "]":
            lines.append(bisect.bisect_right(newlines, i) + 1)

    for m in _JSON_TOKEN.finditer(text):
        t = m.group()
        if t[0] == '"':
            key = t
        elif t == ":":
            if stack and stack[-1][0] == "{" and key is not None:
                stack[-1][1] = json.loads(key)
        elif t in "[{":
            here = tuple(k for _, k in stack)
            stack.append([t, None])
            if t == "[" and target is None and all(c == "{" for c, _ in stack[:-1]) and here == fmt.items_at:
                target = len(stack)
                element_after(m.end())
        elif t in "]}":
            if target is not None and len(stack) == target:
                break
            if stack:
                stack.pop()
        elif t == "," and target is not None and len(stack) == target:
            element_after(m.end())
    return lines


def where_in(cas: Cassette, line: int | None) -> str:
    """`PATH:LINE` of an interaction (the path alone where the format gives no line)."""
    return f"{cas.path}:{line}" if line else str(cas.path)


def first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def read(fmt: RecordingFormat, cas: Cassette, doc: Any, lines: list[int]) -> Cassette:
    """Every interaction of `doc` (of format `fmt`) into `cas`; one that cannot be read is
    the cassette's `error` (the first, with its line where the format gives one), the others
    are read on; one the recorder kept no response of (`Recorded.absent`) is set aside with
    its reason (`Cassette.set_aside`). A body whose decoder is not installed stops the run
    (MissingDecoder, exit 2), located the same way."""
    assert fmt.read is not None
    for i, item in enumerate(fmt.items(doc)):
        line = lines[i] if i < len(lines) else None
        try:
            rec = fmt.read(item)
            if rec.absent is not None:  # nothing the recorder kept to replay: said, never judged
                cas.set_aside.append((f"{cas.label}#{i}", f"{rec.absent} ({where_in(cas, line)})"))
                continue
            inter = interaction_of(cas.label, i, rec, cas.path)
        except MissingDecoder as exc:
            raise MissingDecoder(
                f"cannot read cassette {where_in(cas, line)}: {fmt.name} interaction {i}: {exc}"
            ) from None
        except (CassetteError, ValueError, KeyError, TypeError, zlib.error) as exc:
            if cas.error is None:
                cas.error = f"cannot read cassette {where_in(cas, line)}: {fmt.name} interaction {i}: {first_line(exc)}"
            continue
        inter.path, inter.line = cas.path, line
        cas.interactions.append(inter)
        cas.warnings += [(inter.label, f"{w} ({where_in(cas, line)})") for w in rec.warnings]
    return cas


__all__ = [
    "FORMATS",
    "RecordingFormat",
    "detect",
    "first_line",
    "httprr",
    "json_lines",
    "names",
    "parse_json",
    "parse_yaml",
    "read",
    "where_in",
]
