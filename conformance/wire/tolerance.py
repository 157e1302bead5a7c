"""Departures a reader tolerates, as data: the `x-tolerate` annotation of the wire schemas.

A wire schema says what the provider documents. Real servers depart from it in ways that
lose nothing (issue 37): a count sent as `null`, a chunk without its `id`, a finish reason
outside the documented list. The schema node of such a field carries

    "x-tolerate": {"<departure>": "<who sends it, and how the reader reads on>"}

with a departure among `DEPARTURES`:

- a JSON type name (`null`, `object`, ...): a value of that type is read although the
  node does not allow it;
- `other`: a value outside the node's `enum`/`const` (of the same JSON type) is read;
- `missing`: the member is absent although its object requires it (on the member's node);
- `repeated` (a sequence, not a value: never applied here): the event carrying the field
  may come again where the docs send it once; the adapter that reads the stream asks
  `annotation(...)` for it.

JSON Schema ignores keywords it does not know, so the strict validators (`schemas.validator`,
which TC104 judges rendered requests with, and `wire render`) never see these: only
`reader()` reads them. It validates strictly first; a value the strict schema refuses is
validated again by the *tolerant* schema, the same documents with each annotated departure
allowed (`relaxed`). A value that passes only the tolerant one is read, and each strict
error becomes a `Departure` naming the field, the server's value and the annotation's
sentence; a value the tolerant schema refuses too is refused, named by its first error.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import pointers
from ..core.schema_validation import SchemaError, SchemaValidator, json_type
from ..core.schemas import SchemaSet

KEYWORD = "x-tolerate"
JSON_TYPES = ("null", "boolean", "object", "array", "number", "integer", "string")
VALUE_DEPARTURES = (*JSON_TYPES, "other", "missing")
SEQUENCE_DEPARTURES = ("repeated",)
DEPARTURES = (*VALUE_DEPARTURES, *SEQUENCE_DEPARTURES)
# keywords whose values are data, not schemas: never walked
_DATA = frozenset({"enum", "const", "examples", "default", "description", "title"})


@dataclass(frozen=True)
class Annotation:
    """One `x-tolerate` node: the instance path it applies to (`*` for an array item or a
    map value) and its departures -> sentences."""

    path: tuple[str, ...]
    departures: Mapping[str, str]

    def matches(self, tokens: list[str]) -> bool:
        return len(tokens) == len(self.path) and all(p in ("*", t) for p, t in zip(self.path, tokens, strict=True))


@dataclass(frozen=True)
class Departure:
    """A tolerated departure found in one value."""

    pointer: str
    value: Any  # the server's value (None for a missing member)
    departure: str  # one of VALUE_DEPARTURES
    rule: str  # the strict schema's message
    reason: str  # the annotation's sentence

    def describe(self) -> str:
        shown = "absent" if self.departure == "missing" else f"the server sent {_short(self.value)}"
        why = f"; {self.reason}" if self.reason else ""
        return f"{self.pointer or '/'}: {shown} ({self.rule}): tolerated{why}"


@dataclass(frozen=True)
class Reading:
    """What `TolerantReader.read` found: the first departure it does not tolerate (None:
    the value reads), and the tolerated ones."""

    error: SchemaError | None
    departures: tuple[Departure, ...] = ()


def check_annotation(value: Any) -> list[str]:
    """What is wrong with one `x-tolerate` value (empty when it is well formed)."""
    if not isinstance(value, dict) or not value:
        return ["x-tolerate must be a non-empty object of departure -> sentence"]
    out = [f"unknown departure {k!r} (known: {', '.join(DEPARTURES)})" for k in value if k not in DEPARTURES]
    out += [f"{k}: the sentence must be a non-empty string" for k, v in value.items() if not (isinstance(v, str) and v)]
    return out


# -- the tolerant variant of a schema set -----------------------------------------------------


def _relax_node(node: dict[str, Any]) -> dict[str, Any]:
    """One schema node with its own annotated value departures allowed."""
    marks = node.get(KEYWORD)
    out = {k: v for k, v in node.items() if k != KEYWORD}
    if not isinstance(marks, dict):
        return out
    if "other" in marks:
        values = out.pop("enum", None)
        if "const" in out:
            values = [out.pop("const")]
        if values is not None and "type" not in out:
            out["type"] = sorted({json_type(v) for v in values})
    extra = [t for t in JSON_TYPES if t in marks]
    if extra and isinstance(out.get("type"), str | list) and not {"enum", "const"} & set(out):
        # the type widened in place: errors of another type still read "expected ..."
        have = [out["type"]] if isinstance(out["type"], str) else list(out["type"])
        out["type"] = [*have, *(t for t in extra if t not in have)]
    elif extra:
        out = {"anyOf": [out, {"type": extra[0] if len(extra) == 1 else extra}]}
    return out


def _relax(value: Any) -> Any:
    """`value` (a schema, or any part of one) with every annotated departure allowed."""
    if isinstance(value, list):
        return [_relax(v) for v in value]
    if not isinstance(value, dict):
        return value
    node = {k: (v if k in _DATA or k.startswith("x-") else _relax(v)) for k, v in value.items()}
    props, required = value.get("properties"), node.get("required")
    if isinstance(props, dict) and isinstance(required, list):
        # `missing` sits on the member's node; its object's `required` lets it go
        node["required"] = [
            r for r in required if not (isinstance(props.get(r), dict) and "missing" in (props[r].get(KEYWORD) or {}))
        ]
    if KEYWORD in node or KEYWORD in value:
        node[KEYWORD] = value.get(KEYWORD)
        node = _relax_node(node)
    return node


def relaxed(schemas: SchemaSet) -> SchemaSet:
    """The same documents, each annotated departure allowed (same `$id`s: its own registry)."""
    docs = {name: _relax(copy.deepcopy(doc)) for name, doc in schemas.documents.items()}
    return SchemaSet(schemas.format, schemas.version, schemas.folder, docs)


# -- where each annotation applies --------------------------------------------------------------


def _resolve(schemas: SchemaSet, doc: str, ref: str) -> tuple[str, Any] | None:
    """A `$ref` of document `doc` -> (document name, node), within the set only."""
    target, _, fragment = ref.partition("#")
    name = Path(target).name if target else doc
    node: Any = schemas.documents.get(name)
    for tok in [t for t in fragment.split("/") if t]:
        node = node.get(pointers.unescape(tok)) if isinstance(node, dict) else None
    return (name, node) if node is not None else None


def _walk(
    schemas: SchemaSet, doc: str, node: Any, path: tuple[str, ...], chain: frozenset[int]
) -> Iterator[Annotation]:
    if not isinstance(node, dict) or id(node) in chain or len(path) > 16:
        return
    chain = chain | {id(node)}
    marks = node.get(KEYWORD)
    if isinstance(marks, dict) and marks:
        yield Annotation(path, {str(k): str(v) for k, v in marks.items()})
    ref = node.get("$ref")
    if isinstance(ref, str):
        found = _resolve(schemas, doc, ref)
        if found is not None:
            yield from _walk(schemas, found[0], found[1], path, chain)
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(key) or []:
            yield from _walk(schemas, doc, sub, path, chain)
    for key in ("if", "then", "else", "not"):
        yield from _walk(schemas, doc, node.get(key), path, chain)
    for name, sub in (node.get("properties") or {}).items():
        yield from _walk(schemas, doc, sub, (*path, str(name)), chain)
    for key in ("items", "additionalProperties"):
        yield from _walk(schemas, doc, node.get(key), (*path, "*"), chain)


def annotations_of(schemas: SchemaSet, root: str) -> tuple[Annotation, ...]:
    """Every `x-tolerate` reachable from document `root`, with the instance path it applies to."""
    return tuple(_walk(schemas, root, schemas.documents.get(root), (), frozenset()))


# -- reading ------------------------------------------------------------------------------------


def _tokens(pointer: str) -> list[str]:
    return [pointers.unescape(t) for t in pointer.split("/")[1:]] if pointer else []


def _at(value: Any, tokens: list[str]) -> tuple[bool, Any]:
    for tok in tokens:
        if isinstance(value, dict) and tok in value:
            value = value[tok]
        elif isinstance(value, list) and tok.isdigit() and int(tok) < len(value):
            value = value[int(tok)]
        else:
            return False, None
    return True, value


class TolerantReader:
    """Reads values of one wire schema, tolerating its annotated departures."""

    def __init__(self, schemas: SchemaSet, root: str, *extra: SchemaSet) -> None:
        # `extra`: the sets the `$ref`s of `schemas` reach into (another wire API's folder)
        self.strict = SchemaValidator(schemas, root, *extra)
        self._schemas = schemas
        self._extra = extra
        self._root = root
        self.annotations = annotations_of(schemas, root)
        # the titles a message may start with (the root's, a union branch's): stripped off
        # a rule, which names the field by its pointer already
        self._titles = sorted(set(_titles(schemas.documents)), key=len, reverse=True)

    @functools.cached_property
    def tolerant(self) -> SchemaValidator:
        return SchemaValidator(relaxed(self._schemas), self._root, *(relaxed(e) for e in self._extra))

    def read(self, value: Any) -> Reading:
        if self.strict.is_valid(value):
            return Reading(None)
        if not self.annotations or not self.tolerant.is_valid(value):
            errors = (self.tolerant if self.annotations else self.strict).errors(value)
            first = errors[0] if errors else SchemaError("", f"{self.strict.title}: invalid", "?")
            # named by the documented rule (the strict schema's) where one is broken there
            strict = [e for e in self.strict.errors(value) if e.pointer == first.pointer] if self.annotations else []
            return Reading(strict[0] if strict else first)
        return Reading(None, tuple(self._departure(value, e) for e in self.strict.errors(value)))

    def _departure(self, value: Any, error: SchemaError) -> Departure:
        tokens = _tokens(error.pointer)
        found, at = _at(value, tokens)
        if error.keyword == "required" or not found:
            kind = "missing"
        elif error.keyword in ("enum", "const") and at is not None:
            kind = "other"
        else:
            kind = json_type(at)
        reason = next((a.departures[kind] for a in self.annotations if kind in a.departures and a.matches(tokens)), "")
        rule = next(
            (error.message[len(t) + 2 :] for t in self._titles if error.message.startswith(t + ": ")), error.message
        )
        return Departure(error.pointer, at if found else None, kind, rule, reason)

    def tolerates(self, path: tuple[str, ...], departure: str) -> str | None:
        """The sentence of the annotation tolerating `departure` at instance `path` (array
        items as any token), or None: for a sequence departure such as `repeated`."""
        tokens = list(path)
        return next(
            (a.departures[departure] for a in self.annotations if departure in a.departures and a.matches(tokens)), None
        )


def _titles(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if isinstance(value.get("title"), str):
            yield value["title"]
        for k, v in value.items():
            if k not in _DATA:
                yield from _titles(v)
    elif isinstance(value, list):
        for v in value:
            yield from _titles(v)


def _short(value: Any, limit: int = 60) -> str:
    """A value as JSON (what the server sent), cut at `limit` characters."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[: limit - 3] + "..."
