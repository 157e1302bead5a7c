"""Reading geppetto's YAML defensively: values, line numbers per JSON pointer, findings.

PyYAML is used for what it is good at, scanning and parsing: its event stream (libyaml's
C parser when available) has no recursion and carries a line mark per node. The values
are built here, iteratively, from those events instead of by PyYAML's constructor,
because the constructor cannot do what a validator needs:

- it silently keeps the last of two equal mapping keys (YAML 1.2.2 §3.2.1.1 says keys are
  unique, and geppetto's go-yaml v3 refuses such a file), so duplicates must be seen while
  building;
- it resolves scalars by YAML 1.1 (`yes` -> True, `2024-01-01` -> date, `012` -> 10), while
  geppetto's go-yaml v3 decodes into `any` by the YAML 1.2 core schema; the resolver
  below is the 1.2 core schema, so a value reads here as geppetto reads it;
- it expands aliases into shared objects without bound and recurses on nesting, so a
  "billion laughs" file or ten thousand nested brackets would hang or crash later walks;
  here nesting depth and alias expansion are bounded and reported as findings;
- it keeps no JSON pointer -> line map, which every finding needs.

Bad input never raises: each problem becomes a located `Finding` (rules GE001-GE007).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ...core import pointers
from ...core.findings import Finding, RuleInfo
from . import rules as R

try:  # libyaml's parser when PyYAML was built with it (much faster on large files)
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader

MAX_DEPTH = 200
"""Deepest nesting accepted (jiter's limit for JSON input is the same order)."""
ALIAS_BUDGET = 100_000
"""Nodes that aliases may add beyond the document's own node count (bounds billion laughs)."""
MAX_NODES = 1_000_000
"""The document's own nodes: each costs about 150 bytes here (its value and its pointer's
line), and a flow-style `[1,1,1,...]` is a node per two bytes, so without this limit a
16 MiB file took about 1.1 GB; with it a read stays near 200 MB."""

TAG = "tag:yaml.org,2002:"

# YAML 1.2.2 §10.3.2 core schema (what go-yaml v3 applies when decoding into `any`)
_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
_BOOL = re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")
_INT10 = re.compile(r"[-+]?[0-9]+\Z")
_INT8 = re.compile(r"0o[0-7]+\Z")
_INT16 = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?(?:\.inf|\.Inf|\.INF)\Z")
_NAN = re.compile(r"(?:\.nan|\.NaN|\.NAN)\Z")


def _line(ev: yaml.Event) -> int:
    """1-based line where an event's node starts."""
    return ev.start_mark.line + 1 if ev.start_mark is not None else 0


escape = pointers.token  # one JSON pointer reference token (RFC 6901 §3)


_NOT_STR_FIRST = frozenset("0123456789+-.~nNtTfF")


def resolve_plain(text: str) -> Any:
    """The value of an untagged plain scalar under the YAML 1.2 core schema."""
    if text and text[0] not in _NOT_STR_FIRST:
        return text  # fast path: no core-schema form starts with another character
    if _NULL.match(text):
        return None
    if _BOOL.match(text):
        return text[0] in "tT"
    if _INT10.match(text):
        return int(text)
    if _INT8.match(text):
        return int(text[2:], 8)
    if _INT16.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        return float(text)
    if _INF.match(text):
        return -math.inf if text.startswith("-") else math.inf
    if _NAN.match(text):
        return math.nan
    return text


class _BadScalar(ValueError):
    """An explicitly tagged scalar whose text does not fit its tag (`!!int abc`)."""


def _tagged(tag: str, text: str) -> Any:
    """The value of a scalar with an explicit standard tag (go-yaml v3 refuses mismatches)."""
    kind = tag[len(TAG) :]
    if kind == "str":
        return text
    if kind == "binary":
        try:
            base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise _BadScalar(f"!!binary value is not base64 ({exc})") from None
        return Binary("".join(text.split()))
    if kind in ("null", "bool", "int", "float"):
        value = resolve_plain(text)
        want = {"null": type(None), "bool": bool, "int": int, "float": float}[kind]
        if kind == "float" and type(value) is int:
            return float(value)
        if type(value) is not want:
            raise _BadScalar(f"{text!r} is not a valid !!{kind}")
        return value
    return text  # !!timestamp and other tags: go-yaml v3 keeps the text when decoding into `any`


class Binary(str):
    """A `!!binary` scalar: the base64 text (a `str`, so JSON tools see a string)."""

    __slots__ = ()


def plain(value: Any) -> Any:
    """`value` with every `Binary` as a plain `str`, for validators that accept only exact
    JSON types (jsonschema-rs). Depth is bounded by the reader (MAX_DEPTH)."""
    if type(value) is Binary:
        return str(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


@dataclass(slots=True)
class Document:
    """The first YAML document of a file, with a line for every JSON pointer in it."""

    path: str
    value: Any
    lines: dict[str, int]
    first_line: int

    def line(self, pointer: str) -> int:
        """The line of the value at `pointer`, or of its nearest enclosing value."""
        p = pointer
        while True:
            hit = self.lines.get(p)
            if hit is not None:
                return hit
            if not p:
                return self.first_line
            p = p[: p.rfind("/")]


class _Abort(Exception):
    def __init__(self, finding: Finding) -> None:
        self.finding = finding


@dataclass(slots=True)
class _Frame:
    """A collection being built: a mapping or a sequence."""

    value: dict[str, Any] | list[Any]
    pointer: str | None  # None inside a mapping key (not addressable)
    anchor: str | None
    line: int
    weight: int = 1
    key: str | None = None  # mapping: the key waiting for its value
    key_line: int = 0
    key_is_merge: bool = False
    key_pending: bool = False
    key_dup: bool = False
    merges: list[Any] = field(default_factory=list)


class _Builder:
    """Builds values from parser events without recursion, checking as it goes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lines: dict[str, int] = {}
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.stack: list[_Frame] = []
        self.nodes = 0
        self.alias_nodes = 0
        self.findings: list[Finding] = []
        self.root: Any = None
        self.done = False

    def finding(self, info: RuleInfo, line: int, pointer: str, message: str) -> Finding:
        return Finding(self.path, line, pointer, info.id, info.severity, message)

    # -- where the next node goes ---------------------------------------------------

    def _mark(self, pointer: str | None, line: int) -> None:
        """Record where `pointer` is: a mapping value at its key's line, else its own."""
        if pointer is None:
            return
        top = self.stack[-1] if self.stack else None
        keyed = top is not None and isinstance(top.value, dict)
        self.lines[pointer] = top.key_line if keyed and top is not None else line

    def _slot(self) -> tuple[str | None, bool]:
        """(pointer of the next node, whether it is a mapping key)."""
        if not self.stack:
            return "", False
        top = self.stack[-1]
        if isinstance(top.value, list):
            return (None if top.pointer is None else f"{top.pointer}/{len(top.value)}"), False
        if not top.key_pending:
            return None, True
        if top.pointer is None or top.key_is_merge or top.key_dup:
            return None, False
        return f"{top.pointer}/{escape(top.key or '')}", False

    def _put(self, value: Any, weight: int, line: int) -> None:
        """Attach a finished node to its parent (or make it the document root)."""
        if not self.stack:
            self.root = value
            self.done = True
            return
        top = self.stack[-1]
        top.weight += weight
        if isinstance(top.value, list):
            top.value.append(value)
            return
        if not top.key_pending:
            raise AssertionError("key handled by _key")  # pragma: no cover
        top.key_pending = False
        if top.key_is_merge:
            top.merges.append((value, line))
            return
        if top.key_dup:
            return  # reported when the key was read; the first value stays
        top.value[top.key or ""] = value

    def _key(self, text: str, is_string: bool, plain: bool, line: int, *, report: bool = True) -> None:
        top = self.stack[-1]
        assert isinstance(top.value, dict)
        where = "" if top.pointer is None else top.pointer
        if not is_string and report:
            self.findings.append(
                self.finding(
                    R.NOT_JSON,
                    line,
                    where,
                    f"mapping key {text!r} is not a string; quote it "
                    "(geppetto cannot JSON-encode maps with non-string keys)",
                )
            )
        top.key = text
        top.key_line = line
        top.key_is_merge = plain and text == "<<"
        top.key_pending = True
        top.key_dup = not top.key_is_merge and text in top.value
        if top.key_dup:
            ptr = f"{where}/{escape(text)}"
            first = self.lines.get(ptr)
            since = f" (first at line {first})" if first is not None else ""
            self.findings.append(
                self.finding(
                    R.DUPLICATE_KEY,
                    line,
                    ptr,
                    f"mapping key {text!r} appears more than once{since}; geppetto's YAML reader refuses the file",
                )
            )

    def _count(self, n: int, line: int, pointer: str, alias: bool) -> None:
        self.nodes += n
        if not alias and self.nodes - self.alias_nodes > MAX_NODES:
            raise _Abort(self.finding(R.TOO_LARGE, line, pointer, f"more than {MAX_NODES} nodes; refused"))
        if alias:
            self.alias_nodes += n
            if self.alias_nodes > ALIAS_BUDGET + self.nodes - self.alias_nodes:
                raise _Abort(
                    self.finding(
                        R.TOO_LARGE,
                        line,
                        pointer,
                        "aliases expand to too many nodes (a billion-laughs document?); refused",
                    )
                )

    # -- events -----------------------------------------------------------------------

    def scalar(self, ev: yaml.ScalarEvent) -> None:
        line = _line(ev)
        pointer, is_key = self._slot()
        tag, text = ev.tag, ev.value
        try:
            if tag is None or tag == "!":
                value: Any = resolve_plain(text) if (ev.implicit[0] and tag is None) else text
            elif tag.startswith(TAG):
                value = _tagged(tag, text)
            else:
                value = text  # local tags (`!foo`) carry no meaning for geppetto's reader
        except _BadScalar as exc:
            raise _Abort(self.finding(R.INVALID_YAML, line, pointer or "", str(exc))) from None
        if is_key:
            plain = bool(ev.implicit[0]) and tag is None
            self._key(text if not isinstance(value, str) else value, isinstance(value, str), plain, line)
            self._count(1, line, "", False)
            return
        if isinstance(value, float) and not math.isfinite(value):
            self.findings.append(
                self.finding(
                    R.NOT_JSON,
                    line,
                    pointer or "",
                    f"{text} is not a JSON number (geppetto's typed keys cannot store NaN or Infinity)",
                )
            )
        self._mark(pointer, line)
        if ev.anchor:
            self.anchors[ev.anchor] = (value, 1)
        self._count(1, line, pointer or "", False)
        self._put(value, 1, line)

    def alias(self, ev: yaml.AliasEvent) -> None:
        line = _line(ev)
        pointer, is_key = self._slot()
        hit = self.anchors.get(ev.anchor or "")
        if hit is None:
            open_anchor = any(f.anchor == ev.anchor for f in self.stack)
            why = (
                "refers to a node that contains it (recursive alias)"
                if open_anchor
                else "is not defined before this point"
            )
            raise _Abort(self.finding(R.INVALID_YAML, line, pointer or "", f"alias *{ev.anchor} {why}"))
        value, weight = hit
        if is_key:
            if not isinstance(value, str):
                raise _Abort(
                    self.finding(
                        R.NOT_JSON,
                        line,
                        "",
                        f"alias *{ev.anchor} used as a mapping key is not a string",
                    )
                )
            self._key(value, True, False, line)
            return
        self._mark(pointer, line)
        self._count(weight, line, pointer or "", True)
        self._put(value, weight, line)

    def start(self, ev: yaml.MappingStartEvent | yaml.SequenceStartEvent) -> None:
        line = _line(ev)
        pointer, is_key = self._slot()
        if len(self.stack) >= MAX_DEPTH:
            raise _Abort(
                self.finding(
                    R.TOO_LARGE,
                    line,
                    pointer or "",
                    f"nested deeper than {MAX_DEPTH} levels; refused",
                )
            )
        if is_key:
            self.findings.append(
                self.finding(
                    R.NOT_JSON,
                    line,
                    self.stack[-1].pointer or "",
                    "a mapping or sequence used as a mapping key cannot be read by geppetto",
                )
            )
        self._mark(pointer, line)
        container: dict[str, Any] | list[Any] = {} if isinstance(ev, yaml.MappingStartEvent) else []
        self.stack.append(_Frame(container, None if is_key else pointer, ev.anchor, line))
        self._count(1, line, pointer or "", False)

    def end(self) -> None:
        frame = self.stack.pop()
        value = frame.value
        if isinstance(value, dict) and frame.merges:
            self._merge(frame, value)
        if frame.anchor:
            self.anchors[frame.anchor] = (value, frame.weight)
        if self.stack and self.stack[-1].key_pending is False and isinstance(self.stack[-1].value, dict):
            # the finished collection was a mapping key: keep its text form, reported above
            self._key(
                "<mapping>" if isinstance(value, dict) else "<sequence>",
                False,
                False,
                frame.line,
                report=False,
            )
            return
        self._put(value, frame.weight, frame.line)

    def _merge(self, frame: _Frame, value: dict[str, Any]) -> None:
        """YAML merge keys (`<<: *base`), which go-yaml v3 applies: explicit keys win."""
        explicit = set(value)
        for source, line in frame.merges:
            sources = source if isinstance(source, list) else [source]
            for s in sources:
                if not isinstance(s, dict):
                    self.findings.append(
                        self.finding(
                            R.INVALID_YAML,
                            line,
                            frame.pointer or "",
                            "merge key `<<` needs a mapping or a list of mappings",
                        )
                    )
                    continue
                for k, v in s.items():
                    if k not in explicit and k not in value:
                        value[k] = v


def _decode(name: str, data: bytes) -> str | Finding:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as u:
        before = data[: u.start]
        line = before.count(b"\n") + 1
        col = u.start - (before.rfind(b"\n") + 1) + 1
        return Finding(
            name,
            line,
            "",
            R.INVALID_UTF8.id,
            R.INVALID_UTF8.severity,
            f"invalid UTF-8 byte 0x{data[u.start]:02x} at column {col}",
            col,
        )


def _syntax_finding(name: str, text: str, exc: yaml.YAMLError) -> Finding:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    if line is None and isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    msg = f"{context}: {problem}" if context else str(problem)
    if "'\\t'" in msg or "\t" in msg:
        msg += " (YAML forbids tabs in indentation; use spaces)"
    if isinstance(exc, yaml.reader.ReaderError):
        msg = f"character {exc.character!r} is not allowed in YAML ({exc.reason})"
    col = f", column {mark.column + 1}" if mark is not None else ""
    column = mark.column + 1 if mark is not None and line is not None else None
    return Finding(name, line, "", R.INVALID_YAML.id, R.INVALID_YAML.severity, f"{msg}{col}", column)


def read_yaml(path: Path | str, *, max_bytes: int, data: bytes | None = None) -> Iterator[Document | Finding]:
    """Yield the findings of reading `path`, then its first document (if it has one).

    geppetto's serde (go-yaml `Unmarshal`) reads only a file's first document, so further
    documents are reported (GE006) and not built. A file larger than `max_bytes` is
    refused without being read.
    """
    name = str(path)
    if data is None:
        p = Path(path)
        size = p.stat().st_size
        if size > max_bytes:
            yield Finding(
                name,
                None,
                "",
                R.TOO_LARGE.id,
                R.TOO_LARGE.severity,
                f"file is {size} bytes, more than the {max_bytes}-byte limit; not read",
            )
            return
        data = p.read_bytes()
    text = _decode(name, data)
    if isinstance(text, Finding):
        yield text
        return
    b = _Builder(name)
    first_line = 1
    docs = 0
    events = yaml.parse(text, Loader=_Loader)
    close = getattr(events, "close", None)  # a generator: closing it disposes the parser
    try:
        for ev in events:
            if isinstance(ev, yaml.DocumentStartEvent):
                docs += 1
                if docs == 2:
                    yield b.finding(
                        R.EXTRA_DOCUMENTS,
                        _line(ev),
                        "",
                        "more than one YAML document; geppetto reads only the first",
                    )
                    break
                first_line = _line(ev)
            elif isinstance(ev, yaml.ScalarEvent):
                b.scalar(ev)
            elif isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                b.start(ev)
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                b.end()
            elif isinstance(ev, yaml.AliasEvent):
                b.alias(ev)
    except _Abort as stop:
        yield from b.findings
        yield stop.finding
        return
    except yaml.YAMLError as exc:
        yield from b.findings
        yield _syntax_finding(name, text, exc)
        return
    finally:
        if close is not None:
            close()
    yield from b.findings
    if docs == 0 or not b.done or b.root is None:
        yield b.finding(R.EMPTY, first_line, "", "the file holds no YAML document (an empty file is not a Turn)")
        return
    yield Document(name, b.root, b.lines, first_line)


# -- writing ---------------------------------------------------------------------------


_DumperBase: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's emitter if built


class Dumper(_DumperBase):  # type: ignore[misc]
    """A SafeDumper that quotes every string a YAML 1.1 *or* 1.2 reader would not read back
    as a string (`0o17`, `.NaN`, `yes`, ...), so geppetto (go-yaml v3, YAML 1.2) and
    PyYAML both read the written file exactly. Shared values are written in full, never
    as anchors and aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


for _first, _regex, _tag in (
    ("0123456789-+", _INT10, "int"),
    ("0", _INT8, "int"),
    ("0", _INT16, "int"),
    ("0123456789-+.", _FLOAT, "float"),
    ("-+.", _INF, "float"),
    (".", _NAN, "float"),
    ("~nN", _NULL, "null"),
    ("tTfF", _BOOL, "bool"),
):
    Dumper.add_implicit_resolver(TAG + _tag, re.compile(_regex.pattern.replace(r"\Z", "$")), list(_first))


_BREAKS = frozenset("\x85\u2028\u2029\ufeff")


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # PyYAML writes NEL, LS, PS (and a BOM) raw in plain and single-quoted scalars,
    # where a reader folds them into spaces; double quotes escape them (\N, \L, \P).
    style = '"' if not _BREAKS.isdisjoint(data) else None
    return dumper.represent_scalar(TAG + "str", data, style=style)


Dumper.add_representer(str, _represent_str)


def _represent_binary(dumper: yaml.SafeDumper, data: Binary) -> yaml.ScalarNode:
    return dumper.represent_scalar(TAG + "binary", str(data), style="|")


Dumper.add_representer(Binary, _represent_binary)


def dump(value: Any) -> str:
    """YAML text for `value`, block style, keys in the given order, never folded."""
    return yaml.dump(
        value,
        Dumper=Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=2**31 - 1,
    )
