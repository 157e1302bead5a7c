"""msgspec Structs generated from the canonical schemas: the typed decode of the fast path.

The fast model is built at first use from the schema files (`conformance.core.schemas`), never
written by hand, so it cannot drift from them silently: a keyword this generator does not
know raises when the model is built (tests/test_fast_path.py builds every revision).

The model may be *narrower* than the schema, never wider: a line it accepts must be one
on which no schema check and no one-message rule can report anything, because such a
line skips them (`fast/`). Narrowing, each one a place where the exact path takes over:

- every object is closed (`forbid_unknown_fields`): an additive field is TS010's warning;
- a union of several non-null branches keeps its first (`content-block` keeps the known
  blocks, since an unknown block is TS011's warning; `cost_usd` keeps the plain decimal
  string, since the other forms are TS118's);
- a `$ref` back into a definition being built (a tool_result inside a tool_result) is
  cut, and so is its branch of the union;
- integers are 64-bit JSON integers (`1.0` and ints past 64 bits go the exact way).

The *raw* variant of the model (`raw_model`) differs in one way: the string fields the
caller names as opaque (no rule reads them: the text of a text block, say) decode as
`msgspec.Raw`, the value's JSON bytes, not a Python string. msgspec still proves them
well-formed JSON (escapes, control characters, lone surrogates); what it no longer proves
is that the value is a string and that its bytes are UTF-8, which the fast path checks
per batch (`fast.OpaqueCheck`). Skipping the string's decoding and re-encoding halves
the cost of the batch proof on text-heavy lines. Only required plain strings (no pattern,
no length, not nullable) in blocks of `content` or of a block's own `content` become
raw: those are the places the check looks.

Field order follows the schema's `properties` order, which is the order the canonical
writers use, so re-encoding a decoded line gives back its exact bytes (the duplicate-key
proof of `fast/`). Optional fields default to `UNSET`, so an absent field stays absent
when re-encoded and a field written with its default value stays written.
"""

from __future__ import annotations

import functools
import operator
import re
import typing
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

import msgspec

from ...core import pointers
from ...core.schema_validation import ecma_regex
from ...core.schemas import SchemaSet, schema_set

# keywords that only document (or that the generator reads elsewhere): no constraint
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "examples", "default", "discriminator", "deprecated"}
)
_CONSTRAINTS = {"minLength": "min_length", "maxLength": "max_length", "minimum": "ge", "maximum": "le"}


class _Cut(Exception):
    """A `$ref` back into a definition being built (a recursive schema): cut here."""


# where a raw field may sit: in a block of the message's `content`, or in a block of the
# `content` of such a block (a tool_result's): the places `fast.OpaqueCheck` gathers from
RAW_SHAPES = frozenset({("content", "[]"), ("content", "[]", "content", "[]")})


class _Builder:
    def __init__(self, schemas: SchemaSet, opaque: frozenset[str] = frozenset()) -> None:
        self.s = schemas
        self.opaque = opaque  # "Title.field" of the plain strings to decode as raw JSON
        self.shape: list[str] = []  # field names and "[]" from the message to the value being built
        self.raw: dict[Any, list[str]] = {}  # struct class -> its raw fields
        self.holds_raw: dict[Any, tuple[str, ...]] = {}  # struct class with raw fields deeper in -> its shape
        self.raw_seen = 0  # raw fields made or met so far (a struct holds one when this grows)
        self.raw_misplaced = False  # a raw field that would sit outside `RAW_SHAPES`
        self.building: list[str] = []
        self.structs: dict[str, Any] = {}
        self.count = 0
        self.formats: list[tuple[tuple[str, ...], re.Pattern[str]]] = []
        self.open: list[str] = []  # "Title.field" of every field holding arbitrary JSON

    def _resolve(self, ref: str, doc: str) -> tuple[str, dict[str, Any]]:
        file, _, frag = ref.partition("#")
        name = file or doc
        node: Any = self.s[name]
        for part in [p for p in frag.split("/") if p]:
            node = node[pointers.unescape(part)]
        return f"{name}#{frag}", node

    def unknown(self, schema: dict[str, Any], allowed: set[str], where: str) -> None:
        extra = set(schema) - allowed - _ANNOTATIONS - {k for k in schema if k.startswith("x-")}
        if extra:
            raise ValueError(f"fast model: {where} uses {sorted(extra)}, which the generator does not translate")

    def type_of(self, schema: Any, doc: str, where: str, path: tuple[str, ...] | None = None) -> Any:
        """The msgspec type of `schema`; `path` is the attribute path from the message when
        no list or union lies on the way (a pattern there is lifted, see `Model.formats`)."""
        if schema is True or schema == {}:
            return Any
        if not isinstance(schema, dict):
            raise ValueError(f"fast model: {where}: unsupported schema {schema!r}")
        if "$ref" in schema:
            self.unknown(schema, {"$ref"}, where)
            key, target = self._resolve(schema["$ref"], doc)
            # a recursive object is cut where it recurs; a union on the way (content-block)
            # is entered once more, so only the recursing branch is left out
            entered = self.building.count(key)
            if entered and (target.get("type") == "object" or entered > 1):
                raise _Cut(key)
            file = key.split("#")[0]
            self.building.append(key)
            try:
                return self.type_of(target, file, key, path)
            finally:
                self.building.pop()
        if "anyOf" in schema or "oneOf" in schema:
            return self.union(schema, doc, where, path)
        if "enum" in schema:
            self.unknown(schema, {"enum", "type"}, where)
            if not all(isinstance(v, str) for v in schema["enum"]):
                raise ValueError(f"fast model: {where}: only string enums are translated")
            return Literal[tuple(schema["enum"])]
        if "const" in schema:
            self.unknown(schema, {"const", "type"}, where)
            if not isinstance(schema["const"], str):
                raise ValueError(f"fast model: {where}: only string consts are translated")
            return Literal[schema["const"]]
        t = schema.get("type")
        if t == "object":
            return self.struct(schema, doc, where, path)
        if t == "array":
            self.unknown(schema, {"type", "items"}, where)
            self.shape.append("[]")
            try:
                return list[self.type_of(schema.get("items", True), doc, where + "/items")]  # type: ignore[misc]
            finally:
                self.shape.pop()
        if t in ("string", "integer", "number"):
            self.unknown(schema, {"type", "pattern", *_CONSTRAINTS}, where)
            meta = {_CONSTRAINTS[k]: v for k, v in schema.items() if k in _CONSTRAINTS}
            if "pattern" in schema:
                # the schema's ECMA-262 pattern read the way the exact path reads it; on a
                # field every message reaches by attributes alone it is checked once per
                # batch (fast/batch.py), elsewhere by msgspec on each value
                regex = ecma_regex(schema["pattern"])
                if path is not None:
                    self.formats.append((path, regex))
                else:
                    meta["pattern"] = "(?a)" + regex.pattern  # ecma_regex compiles ASCII-only
            base = {"string": str, "integer": int, "number": float}[t]
            return Annotated[base, msgspec.Meta(**meta)] if meta else base
        if t == "boolean":
            self.unknown(schema, {"type"}, where)
            return bool
        if t == "null":
            self.unknown(schema, {"type"}, where)
            return None
        raise ValueError(f"fast model: {where}: unsupported type {t!r}")

    def union(self, schema: dict[str, Any], doc: str, where: str, path: tuple[str, ...] | None) -> Any:
        kw = "anyOf" if "anyOf" in schema else "oneOf"
        self.unknown(schema, {kw}, where)
        branches: list[Any] = []
        real = [b for b in schema[kw] if not (isinstance(b, dict) and b.get("type") == "null")]
        nullable = len(real) < len(schema[kw])
        if "discriminator" not in schema:
            real = real[:1]  # narrowing: the first branch (see module doc)
        sub = path if len(real) == 1 else None
        for i, branch in enumerate(real):
            try:
                branches.append(self.type_of(branch, doc, f"{where}/{kw}/{i}", sub))
            except _Cut:
                continue  # the recursive branch is left to the exact path
        if not branches:
            raise _Cut(where)
        disc = schema.get("discriminator")
        if disc is not None and disc.get("propertyName") != "type":
            raise ValueError(f"fast model: {where}: only a `type` discriminator is translated")
        t: Any = branches[0] if len(branches) == 1 else Union[tuple(branches)]  # noqa: UP007
        return t | None if nullable else t

    def struct(self, schema: dict[str, Any], doc: str, where: str, path: tuple[str, ...] | None) -> Any:
        self.unknown(schema, {"type", "properties", "required", "additionalProperties"}, where)
        props: dict[str, Any] = schema.get("properties", {})
        if not props:
            if schema.get("additionalProperties", True) is not True:
                raise ValueError(f"fast model: {where}: a closed object without properties")
            return dict[str, Any]
        shape = tuple(self.shape)
        if where in self.structs and path is None:
            known = self.structs[where]
            if known in self.raw:
                self.raw_seen += 1
                self.raw_misplaced |= shape not in RAW_SHAPES
            if known in self.holds_raw:  # its raw fields sit deeper: they move with it
                self.raw_seen += 1
                self.raw_misplaced |= shape != self.holds_raw[known]
            return known
        seen_before = self.raw_seen
        required = set(schema.get("required", ()))
        title = str(schema.get("title", "Object")).replace(" ", "")
        raw: list[str] = []
        tag: str | None = None
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        for name, sub in props.items():
            if name == "type" and isinstance(sub, dict) and "const" in sub and name in required:
                tag = sub["const"]  # a tagged-union member: msgspec writes the tag first
                continue
            self.shape.append(name)
            try:
                t = self.type_of(sub, doc, f"{where}/properties/{name}", None if path is None else (*path, name))
            finally:
                self.shape.pop()
            if t is str and name in required and f"{title}.{name}" in self.opaque:
                self.raw_misplaced |= shape not in RAW_SHAPES
                t = msgspec.Raw
                raw.append(name)
            if _opens(t):
                self.open.append(f"{schema.get('title', 'Object')}.{name}")
            fields.append((name, t) if name in required else (name, t | msgspec.UnsetType, msgspec.UNSET))
        self.count += 1
        options: dict[str, Any] = {"tag_field": "type", "tag": tag} if tag is not None else {}
        if self.opaque:
            options["namespace"] = self.namespace(raw, {f[0] for f in fields})
        cls = msgspec.defstruct(
            f"Fast{title}",
            fields,
            kw_only=True,
            forbid_unknown_fields=True,
            omit_defaults=True,
            gc=False,  # no cycles: decoded structs never need the cycle collector
            **options,
        )
        if path is None:  # a struct on an attribute path has its patterns lifted: not shared
            self.structs[where] = cls
        if self.raw_seen > seen_before:
            self.holds_raw[cls] = shape
        if raw:
            self.raw[cls] = raw
            self.raw_seen += 1
        return cls

    def namespace(self, raw: list[str], names: set[str]) -> dict[str, Any]:
        """The class attributes of a struct of the raw model, read by `fast.OpaqueCheck`
        in one pass over any blocks: `opaque`, its raw field (None when it has none),
        and `content` when it has no such field, an empty tuple (no blocks inside). They
        are not fields: the decoder and the encoder never see them."""
        if len(raw) > 1:
            self.raw_misplaced = True  # one `opaque` per struct: no raw model then
        out: dict[str, Any] = {"opaque": property(operator.attrgetter(raw[0])) if raw else None}
        if "content" not in names:
            out["content"] = ()
        return out


@dataclass(frozen=True)
class Model:
    """The fast model of one revision: the Message Struct, and the string formats lifted
    out of it (attribute path from the message, the schema's pattern), which the fast
    path checks per batch (a value on the path may be UNSET or None: nothing to check)."""

    message: Any
    formats: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...]
    # fields holding arbitrary JSON ("Title.field"), the only places a line can nest deep
    open_fields: frozenset[str]


@functools.lru_cache(maxsize=8)
def message_model(revision: str) -> Model:
    """The fast model of canonical `revision`, generated from its schema files."""
    return _model(_Builder(schema_set("canonical", revision)))


@dataclass(frozen=True)
class RawModel:
    """The raw variant of a revision's fast model: `model`, and for each Struct class
    with raw fields, their names (each sits where `RAW_SHAPES` says)."""

    model: Model
    raw: tuple[tuple[Any, tuple[str, ...]], ...]


@functools.lru_cache(maxsize=8)
def raw_model(revision: str, opaque: frozenset[str]) -> RawModel | None:
    """The fast model of `revision` with the plain string fields named in `opaque`
    ("Title.field") decoded as `msgspec.Raw`; None when none is, when a struct with
    one is reached somewhere `RAW_SHAPES` does not name (the check would miss it), or
    when a struct would have two (its `opaque` attribute names one)."""
    return _raw(_Builder(schema_set("canonical", revision), opaque))


def _raw(b: _Builder) -> RawModel | None:
    model = _model(b)
    if not b.raw or b.raw_misplaced:
        return None
    return RawModel(model, tuple((cls, tuple(names)) for cls, names in b.raw.items()))


def _model(b: _Builder) -> Model:
    b.building.append("message.json#")
    root = b.type_of(b.s["message.json"], "message.json", "message.json#", ())
    return Model(root, tuple(b.formats), frozenset(b.open))


def _opens(t: Any) -> bool:
    """True when `t` takes arbitrary JSON (Any, or a dict or list of it) at some level."""
    if t is Any:
        return True
    return any(_opens(a) for a in typing.get_args(t))
