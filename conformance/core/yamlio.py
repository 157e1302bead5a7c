"""A bounded YAML reader for small configuration files (price tables, cassettes, ...).

PyYAML's constructor cannot be pointed at a file a user did not write: it expands aliases
without bound (a "billion laughs" file reaches gigabytes), recurses on nesting, silently
keeps the last of two equal keys and resolves scalars by YAML 1.1 (`190:20:30.15` is a
sexagesimal float, `yes` is True). This reader uses only PyYAML's event stream (libyaml's
C parser when available, no recursion) and builds the value here, iteratively:

- nesting deeper than `max_depth`, aliases adding more than `alias_budget` nodes, and
  more than `max_nodes` nodes of the document's own, stop the read with an error
  (aliases are shared, never copied, and counted by the size of what they stand for, so
  later walks stay bounded too; a flow-style `[1,1,1,...]` is a node per two bytes, and
  a node built here takes about 50 bytes, so without the node limit 16 MiB of input
  took about 1 GB);
- a duplicate mapping key is an error (YAML 1.2.2 §3.2.1.1: keys are unique);
- untagged plain scalars resolve by the YAML 1.2 core schema (§10.3.2); numbers with a
  fraction or exponent become `Decimal` from their text (`decimal=True`, never a float),
  and `.nan`/`.inf` are refused, since they are no amount of anything.

Every problem is a `YamlError` with the 1-based line and the JSON pointer of the node.
The same approach, with findings instead of exceptions and per-pointer lines, is the
geppetto reader (`formats/geppetto/yamlio.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import yaml

from . import pointers

try:  # libyaml's parser when PyYAML was built with it
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader

MAX_DEPTH = 200
ALIAS_BUDGET = 100_000
MAX_NODES = 1_000_000  # a price table or cassette has thousands; the limit keeps a read near 100 MB
MAX_BYTES = 16 * 1024 * 1024

_NULL = re.compile(r"(?:~|null|Null|NULL|)\Z")
_BOOL = re.compile(r"(?:true|True|TRUE|false|False|FALSE)\Z")
_INT10 = re.compile(r"[-+]?[0-9]+\Z")
_INT8 = re.compile(r"0o[0-7]+\Z")
_INT16 = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_NONFINITE = re.compile(r"[-+]?(?:\.inf|\.Inf|\.INF)\Z|(?:\.nan|\.NaN|\.NAN)\Z")
_MAX_INT_DIGITS = 4000  # below CPython's int/str conversion limit


class YamlError(ValueError):
    """A YAML problem at `line` (1-based) and JSON `pointer`."""

    def __init__(self, line: int, pointer: str, message: str) -> None:
        super().__init__(f"line {line}: {pointer or '/'}: {message}")
        self.line, self.pointer, self.reason = line, pointer, message


_esc = pointers.token


def resolve(text: str, *, decimal: bool) -> Any:
    """An untagged plain scalar under the YAML 1.2 core schema (raises ValueError)."""
    if _NULL.match(text):
        return None
    if _BOOL.match(text):
        return text[0] in "tT"
    if _INT10.match(text):
        if len(text) > _MAX_INT_DIGITS:
            raise ValueError(f"integer of {len(text)} digits is out of range")
        return int(text)
    if _INT8.match(text):
        return int(text[2:], 8)
    if _INT16.match(text):
        return int(text[2:], 16)
    if _FLOAT.match(text):
        if not decimal:
            return float(text)
        try:
            return Decimal(text)
        except InvalidOperation:  # pragma: no cover - the regex admits only decimal text
            raise ValueError(f"{text!r} is not a number") from None
    if _NONFINITE.match(text):
        raise ValueError(f"{text!r} is not a finite number")
    return text


@dataclass
class _Frame:
    value: Any  # dict or list being filled
    pointer: str
    key: Any = None  # pending mapping key (None: the next scalar is a key)
    key_set: bool = False
    size: int = 1  # nodes in this collection so far (for anchors)


def load(
    text: str,
    *,
    decimal: bool = True,
    max_depth: int = MAX_DEPTH,
    alias_budget: int = ALIAS_BUDGET,
    max_nodes: int = MAX_NODES,
) -> Any:
    """The first document of `text` (None when there is none); problems -> YamlError."""
    stack: list[_Frame] = []
    anchors: dict[str, tuple[Any, int]] = {}
    anchored: list[tuple[str, _Frame]] = []
    budget = alias_budget
    nodes = max_nodes  # the document's own nodes still allowed
    root: Any = None
    done = False
    line = 1

    def place(value: Any, size: int, ev_line: int) -> None:
        nonlocal root, done
        if not stack:
            root, done = value, True
            return
        top = stack[-1]
        top.size += size
        if isinstance(top.value, list):
            top.value.append(value)
            return
        if not top.key_set:
            if isinstance(value, (dict, list)):
                raise YamlError(ev_line, top.pointer, "a mapping key must be a scalar")
            if value in top.value:
                raise YamlError(ev_line, top.pointer, f"duplicate key {value!r} (YAML keys are unique)")
            top.key, top.key_set = value, True
            return
        top.value[top.key] = value
        top.key, top.key_set = None, False

    def child_pointer() -> str:
        if not stack:
            return ""
        top = stack[-1]
        if isinstance(top.value, list):
            return f"{top.pointer}/{len(top.value)}"
        return f"{top.pointer}/{_esc(str(top.key))}" if top.key_set else top.pointer

    try:
        for ev in yaml.parse(text, Loader=_Loader):
            if done:
                break
            line = ev.start_mark.line + 1 if ev.start_mark is not None else line
            if isinstance(ev, yaml.AliasEvent):
                hit = anchors.get(ev.anchor or "")
                if hit is None:
                    raise YamlError(line, child_pointer(), f"alias *{ev.anchor} names no earlier anchor")
                budget -= hit[1]
                if budget < 0:
                    raise YamlError(line, child_pointer(), f"aliases expand to more than {alias_budget} nodes")
                place(hit[0], hit[1], line)
            elif isinstance(ev, yaml.ScalarEvent):
                ptr = child_pointer()
                nodes -= 1
                if nodes < 0:
                    raise YamlError(line, ptr, f"more than {max_nodes} nodes; refused")
                tag = ev.tag
                if tag in (None, "!") and ev.implicit[0] and not ev.style:
                    try:
                        value = resolve(ev.value, decimal=decimal)
                    except ValueError as exc:
                        raise YamlError(line, ptr, str(exc)) from None
                elif tag in (None, "!", "tag:yaml.org,2002:str"):
                    value = ev.value
                else:
                    raise YamlError(line, ptr, f"tag {tag} is not supported here")
                if ev.anchor:
                    anchors[ev.anchor] = (value, 1)
                place(value, 1, line)
            elif isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                ptr = child_pointer()
                if ev.tag not in (None, "!", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"):
                    raise YamlError(line, ptr, f"tag {ev.tag} is not supported here")
                if len(stack) >= max_depth:
                    raise YamlError(line, ptr, f"nested deeper than {max_depth} levels")
                nodes -= 1
                if nodes < 0:
                    raise YamlError(line, ptr, f"more than {max_nodes} nodes; refused")
                frame = _Frame({} if isinstance(ev, yaml.MappingStartEvent) else [], ptr)
                if ev.anchor:
                    anchored.append((ev.anchor, frame))
                stack.append(frame)
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                frame = stack.pop()
                for name, f in anchored:
                    if f is frame:
                        anchors[name] = (frame.value, frame.size)
                place(frame.value, frame.size, line)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = mark.line + 1 if mark is not None else line
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlError(where, child_pointer(), f"not valid YAML: {problem}") from None
    return root
