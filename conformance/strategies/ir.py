"""JSON Schema documents as a small graph of normalized nodes.

The strategy compiler, the invalid-document mutator and `turnspec schema diff` all need
the same view of a schema: `$ref`s resolved (offline, through the project's `referencing`
registry), siblings of `$ref`/`allOf` merged, `const` and `enum` unified, and every
keyword either understood or rejected. Building that view once keeps the three in
agreement, and it is where unsupported keywords are refused: a keyword this module does
not understand raises `UnsupportedSchema` at build time, so no strategy can silently
generate data the schema rejects (the failure mode of hypothesis-jsonschema with
2020-12 `prefixItems`, `unevaluatedProperties` and `dependentRequired`).

The graph may be cyclic (a tool_result block holds content blocks); a `Node` is created
and cached before its children are built, so a cycle refers back to the same object.
A cycle must pass through a keyword that descends into the instance (`properties`,
`items`, `prefixItems`, `additionalProperties`, `propertyNames`): one made only of
`$ref`, `allOf`, `anyOf` and `oneOf` (`{"$ref": "#"}`, two `$defs` aliasing each other,
`{"anyOf": [{"type": "string"}, {"$ref": "#"}]}`) applies the schema to the same value
again and again, so no validator can finish evaluating it, and it is refused
(`UnsupportedSchema`) at the `$ref` that closes it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

from referencing import Registry

from ..core import pointers
from ..core.schemas import SchemaSet, registry_for

JSON_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")

# Keywords that never constrain an instance (2020-12 annotations and the metadata
# vocabulary); `discriminator` is the OpenAPI hint the project's unions carry.
ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$defs",
        "definitions",
        "$anchor",
        "$vocabulary",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "discriminator",
        "format",
    }
)
# `format` is listed with the annotations because 2020-12 makes it one by default (and
# the project validates with formats off); the compiler still uses it to generate
# well-formed strings.

SUPPORTED = frozenset(
    {
        "$ref",
        "type",
        "const",
        "enum",
        "allOf",
        "anyOf",
        "oneOf",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "items",
        "prefixItems",
        "minItems",
        "maxItems",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
        "dependentRequired",
    }
)


class UnsupportedSchema(ValueError):
    """The schema uses something the strategies cannot honour; raised at build time."""

    def __init__(self, location: str, message: str) -> None:
        super().__init__(f"{location}: {message}")
        self.location = location
        self.reason = message

    def located(self, *sets: SchemaSet, files: dict[str, Path] | None = None) -> str:
        """`file: /pointer: reason`, the file found among `sets` by its `$id` (or registry
        URI) and named as in `files` (by document name) when given."""
        uri, _, pointer = self.location.partition("#")
        for s in sets:
            for name, doc in s.documents.items():
                if doc.get("$id", s.uri(name)) == uri:
                    path = (files or {}).get(name, s.folder / name)
                    return f"{path}: {pointer or '/'}: {self.reason}"
        return f"{sets[0].folder if sets else uri}: {self}"


class UnevaluableSchema(UnsupportedSchema):
    """A schema no validator can finish evaluating (a `$ref` cycle that never descends
    into the document): refused by every tool, whatever it generates."""


@dataclass(eq=False)
class Node:
    """One schema, normalized. `None` on a constraint means "not constrained".

    `loc` is the absolute `uri#json-pointer` of the schema, resolvable through the
    registry (the mutator validates sub-instances against it).
    """

    loc: str
    title: str | None = None
    types: frozenset[str] | None = None
    enum: tuple[Any, ...] | None = None  # `const` is an enum of one
    is_const: bool = False
    # strings
    min_length: int = 0
    max_length: int | None = None
    pattern: str | None = None
    format: str | None = None
    # numbers
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    multiple_of: float | None = None
    # arrays
    prefix_items: list[Node] = field(default_factory=list)
    items: Node | bool = True
    min_items: int = 0
    max_items: int | None = None
    unique_items: bool = False
    # objects
    properties: dict[str, Node] = field(default_factory=dict)
    required: frozenset[str] = frozenset()
    additional: Node | bool = True
    property_names: Node | None = None
    min_properties: int = 0
    max_properties: int | None = None
    dependent_required: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # unions (siblings already merged into each branch)
    any_of: list[Node] | None = None
    one_of: list[Node] | None = None
    discriminator: str | None = None
    never: bool = False  # the `false` schema
    raw: Any = None

    @property
    def union(self) -> list[Node] | None:
        return self.one_of if self.one_of is not None else self.any_of

    def allows(self, json_type: str) -> bool:
        if self.types is None:
            return True
        return json_type in self.types or (json_type == "integer" and "number" in self.types)

    def is_trivial(self) -> bool:
        """True for the empty schema (accepts every instance)."""
        return (
            not self.never
            and self.types is None
            and self.enum is None
            and self.union is None
            and self.pattern is None
            and self.min_length == 0
            and self.max_length is None
            and self.minimum is None
            and self.maximum is None
            and self.exclusive_minimum is None
            and self.exclusive_maximum is None
            and self.multiple_of is None
            and not self.prefix_items
            and self.items is True
            and self.min_items == 0
            and self.max_items is None
            and not self.unique_items
            and not self.properties
            and not self.required
            and self.additional is True
            and self.property_names is None
            and self.min_properties == 0
            and self.max_properties is None
            and not self.dependent_required
        )

    def __repr__(self) -> str:
        return f"Node({self.loc})"


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


escape_pointer_token = pointers.token


class SchemaGraph:
    """Builds (and caches) the `Node` of every schema location of some schema sets."""

    def __init__(self, schemas: SchemaSet, *extra: SchemaSet, registry: Registry[Any] | None = None) -> None:
        self.schemas = schemas
        self.registry = registry or registry_for(schemas, *extra)
        self._nodes: dict[str, Node] = {}
        self._building: set[str] = set()
        # the locations being built, outermost first, each with how it was entered:
        # True through `$ref`/`allOf`/`anyOf`/`oneOf` (same instance), False through a
        # keyword that descends into the instance (or as a root)
        self._trail: list[tuple[str, bool]] = []

    def root(self, name: str) -> Node:
        """The node of a whole schema file of the main set (e.g. `message.json`)."""
        uri = self.schemas.uri(name)
        doc = self.schemas[name]
        return self.node(doc, doc.get("$id", uri), "")

    def at(self, loc: str) -> Node:
        """The node at an absolute `uri#pointer` location."""
        uri, fragment = urldefrag(loc)
        resolved = self.registry.resolver().lookup(loc)
        base = uri
        return self.node(resolved.contents, base, fragment)

    # -- building ---------------------------------------------------------------------

    def node(self, schema: Any, base: str, pointer: str, *, inplace: bool = False) -> Node:
        """The node of `schema` at `base#pointer`; `inplace` when it applies to the same
        instance as the schema that leads to it (`$ref`, `allOf`, `anyOf`, `oneOf`)."""
        if isinstance(schema, dict) and isinstance(schema.get("$id"), str) and pointer:
            base, pointer = urljoin(base, schema["$id"]), ""
        loc = f"{base}#{pointer}"
        self._refuse_inplace_cycle(loc, inplace)
        hit = self._nodes.get(loc)
        if hit is not None:
            return hit
        self._trail.append((loc, inplace))
        try:
            return self._build(schema, base, pointer, loc)
        finally:
            self._trail.pop()

    def _refuse_inplace_cycle(self, loc: str, inplace: bool) -> None:
        """Raise when entering `loc` closes a cycle that never descends into the instance."""
        if not inplace:
            return
        for i in range(len(self._trail) - 1, -1, -1):
            if self._trail[i][0] == loc:
                chain = [_short_loc(x) for x, _ in self._trail[i:]] + [_short_loc(loc)]
                raise UnevaluableSchema(
                    self._trail[-1][0],
                    f"$ref cycle {' -> '.join(chain)} never descends into the document: "
                    "no validator can finish evaluating it",
                )
            if not self._trail[i][1]:
                return  # a descending step lies between: each turn of the cycle goes one level down

    def _build(self, schema: Any, base: str, pointer: str, loc: str) -> Node:
        if schema is True or schema == {}:
            n = self._nodes[loc] = Node(loc, raw=schema)
            return n
        if schema is False:
            n = self._nodes[loc] = Node(loc, never=True, raw=schema)
            return n
        if not isinstance(schema, dict):
            raise UnsupportedSchema(loc, f"a schema must be an object or a boolean, not {type(schema).__name__}")
        for key in schema:
            if key not in SUPPORTED and key not in ANNOTATIONS and not key.startswith("x-"):
                raise UnsupportedSchema(
                    loc,
                    f"keyword {key!r} is not supported by turnspec strategies; generated data could violate it",
                )
        if "$ref" in schema and all(k == "$ref" or k in ANNOTATIONS or k.startswith("x-") for k in schema):
            # a bare $ref (plus annotations) is an alias: share the target node, so a
            # cycle closes on the same object
            target = self._ref(schema["$ref"], base, loc)
            self._nodes[loc] = target
            return target
        n = Node(loc, title=schema.get("title"), raw=schema)
        self._nodes[loc] = n
        self._building.add(loc)
        try:
            self._fill(n, schema, base, pointer)
            parts: list[Node] = []
            if "$ref" in schema:
                parts.append(self._ref(schema["$ref"], base, loc))
            for i, sub in enumerate(schema.get("allOf", ())):
                parts.append(self.node(sub, base, f"{pointer}/allOf/{i}", inplace=True))
            for part in parts:
                _merge_into(n, part)
            for kw in ("anyOf", "oneOf"):
                if kw in schema:
                    branches = [
                        self.node(sub, base, f"{pointer}/{kw}/{i}", inplace=True) for i, sub in enumerate(schema[kw])
                    ]
                    if n.union is not None:
                        raise UnsupportedSchema(loc, "both anyOf and oneOf (or a union under $ref/allOf) on one schema")
                    own = _constraints_only(n)
                    if not own.is_trivial():
                        branches = [_merged(own, b) for b in branches]
                    if kw == "anyOf":
                        n.any_of = branches
                    else:
                        n.one_of = branches
            disc = schema.get("discriminator")
            if isinstance(disc, dict) and isinstance(disc.get("propertyName"), str):
                n.discriminator = disc["propertyName"]
        finally:
            self._building.discard(loc)
        return n

    def _ref(self, ref: str, base: str, loc: str) -> Node:
        target = urljoin(base, ref)
        uri, fragment = urldefrag(target)
        if fragment and not fragment.startswith("/"):
            raise UnsupportedSchema(loc, f"$ref to an anchor ({ref!r}) is not supported; use a JSON pointer")
        try:
            resolved = self.registry.resolver(base_uri=base).lookup(ref)
        except Exception as exc:  # referencing raises several Unresolvable subclasses
            raise UnsupportedSchema(loc, f"$ref {ref!r} does not resolve offline ({type(exc).__name__})") from exc
        tloc = f"{uri}#{fragment}"
        self._refuse_inplace_cycle(tloc, True)
        if tloc in self._building and loc not in self._building:
            return self._nodes[tloc]  # a bare $ref closing a cycle: the node being built
        if tloc in self._building:
            # merging needs the target's final constraints, which a cycle cannot give
            raise UnsupportedSchema(loc, f"$ref {ref!r} with sibling constraints closes a cycle")
        return self.node(resolved.contents, uri, fragment, inplace=True)

    def _fill(self, n: Node, s: dict[str, Any], base: str, ptr: str) -> None:
        loc = n.loc
        if "type" in s:
            t = s["type"]
            ts = [t] if isinstance(t, str) else list(t)
            for x in ts:
                if x not in JSON_TYPES:
                    raise UnsupportedSchema(loc, f"unknown type {x!r}")
            n.types = frozenset(ts)
        if "const" in s:
            n.enum, n.is_const = (s["const"],), True
        if "enum" in s:
            vals = tuple(s["enum"])
            n.enum = vals if n.enum is None else tuple(v for v in n.enum if _json_in(v, vals))
            n.is_const = n.is_const or len(vals) == 1
        n.min_length = int(s.get("minLength", 0))
        n.max_length = s.get("maxLength")
        n.pattern = s.get("pattern")
        n.format = s.get("format")
        for kw, attr in (
            ("minimum", "minimum"),
            ("maximum", "maximum"),
            ("exclusiveMinimum", "exclusive_minimum"),
            ("exclusiveMaximum", "exclusive_maximum"),
            ("multipleOf", "multiple_of"),
        ):
            if kw in s:
                v = s[kw]
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                    raise UnsupportedSchema(loc, f"{kw} must be a finite number (2020-12), got {v!r}")
                setattr(n, attr, v)
        n.prefix_items = [self.node(x, base, f"{ptr}/prefixItems/{i}") for i, x in enumerate(s.get("prefixItems", ()))]
        if "items" in s:
            it = s["items"]
            if isinstance(it, list):
                raise UnsupportedSchema(loc, "array-form `items` is draft 2019-09 and earlier; use prefixItems")
            n.items = self._sub_or_bool(it, base, f"{ptr}/items")
        n.min_items = int(s.get("minItems", 0))
        n.max_items = s.get("maxItems")
        n.unique_items = bool(s.get("uniqueItems", False))
        n.properties = {
            k: self.node(v, base, f"{ptr}/properties/{escape_pointer_token(k)}")
            for k, v in s.get("properties", {}).items()
        }
        n.required = frozenset(s.get("required", ()))
        if "additionalProperties" in s:
            n.additional = self._sub_or_bool(s["additionalProperties"], base, f"{ptr}/additionalProperties")
        if "propertyNames" in s:
            n.property_names = self.node(s["propertyNames"], base, f"{ptr}/propertyNames")
        n.min_properties = int(s.get("minProperties", 0))
        n.max_properties = s.get("maxProperties")
        n.dependent_required = {k: tuple(v) for k, v in s.get("dependentRequired", {}).items()}

    def _sub_or_bool(self, sub: Any, base: str, ptr: str) -> Node | bool:
        if sub is True or sub == {}:
            return True
        if sub is False:
            return False
        return self.node(sub, base, ptr)

    def walk(self, start: Node) -> Iterator[Node]:
        """Every node reachable from `start` (each once)."""
        seen: set[int] = set()
        todo = [start]
        while todo:
            n = todo.pop()
            if id(n) in seen:
                continue
            seen.add(id(n))
            yield n
            todo.extend(children(n))


def _short_loc(loc: str) -> str:
    """`file.json#/pointer` of an absolute location (the file name without its base)."""
    uri, _, fragment = loc.partition("#")
    return f"{uri.rsplit('/', 1)[-1]}#{fragment}"


def children(n: Node) -> Iterator[Node]:
    yield from n.prefix_items
    if isinstance(n.items, Node):
        yield n.items
    yield from n.properties.values()
    if isinstance(n.additional, Node):
        yield n.additional
    if n.property_names is not None:
        yield n.property_names
    yield from n.union or ()


def _json_in(v: Any, vals: tuple[Any, ...]) -> bool:
    return any(json_equal(v, x) for x in vals)


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true != 1 (Python says otherwise)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b


def json_key(v: Any) -> Any:
    """A hashable key with JSON equality (for uniqueItems)."""
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return (type(v).__name__, v)
    if isinstance(v, int | float):
        return ("n", float(v) if not isinstance(v, int) or abs(v) < 2**53 else v)
    if isinstance(v, list):
        return ("a", tuple(json_key(x) for x in v))
    return ("o", tuple(sorted((k, json_key(x)) for k, x in v.items())))


def _constraints_only(n: Node) -> Node:
    """A copy of `n` without its union, title and location (its sibling constraints)."""
    c = Node(n.loc)
    for f in _FIELDS:
        setattr(c, f, getattr(n, f))
    return c


_FIELDS = (
    "types",
    "enum",
    "is_const",
    "min_length",
    "max_length",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusive_minimum",
    "exclusive_maximum",
    "multiple_of",
    "prefix_items",
    "items",
    "min_items",
    "max_items",
    "unique_items",
    "properties",
    "required",
    "additional",
    "property_names",
    "min_properties",
    "max_properties",
    "dependent_required",
    "never",
)


def _merged(a: Node, b: Node) -> Node:
    """A new node accepting what both accept (branch `b` with the siblings `a`)."""
    c = Node(b.loc, title=b.title, raw=b.raw)
    for f in _FIELDS:
        setattr(c, f, getattr(b, f))
    c.any_of, c.one_of, c.discriminator = b.any_of, b.one_of, b.discriminator
    _merge_into(c, a)
    return c


def _merge_into(n: Node, other: Node) -> None:
    """Intersect `other` into `n` where the intersection is simple; refuse otherwise.

    Refusing is deliberate: a general allOf intersection (two patterns, two object
    shapes with different additionalProperties) would need a constraint solver, and a
    wrong guess would generate invalid data.
    """
    if other.is_trivial():
        if n.title is None:
            n.title = other.title
        return
    if other.never:
        n.never = True
        return
    if n.title is None:
        n.title = other.title
    if other.types is not None:
        n.types = other.types if n.types is None else _meet_types(n.types, other.types)
    if other.enum is not None:
        n.enum = other.enum if n.enum is None else tuple(v for v in n.enum if _json_in(v, other.enum))
        n.is_const = n.is_const or other.is_const
    n.min_length = max(n.min_length, other.min_length)
    n.max_length = _min_opt(n.max_length, other.max_length)
    n.pattern = _one(n, "pattern", n.pattern, other.pattern)
    n.format = n.format or other.format
    n.minimum = _max_opt(n.minimum, other.minimum)
    n.maximum = _min_opt(n.maximum, other.maximum)
    n.exclusive_minimum = _max_opt(n.exclusive_minimum, other.exclusive_minimum)
    n.exclusive_maximum = _min_opt(n.exclusive_maximum, other.exclusive_maximum)
    n.multiple_of = _one(n, "multipleOf", n.multiple_of, other.multiple_of)
    if other.prefix_items or n.prefix_items:
        n.prefix_items = _one(n, "prefixItems", n.prefix_items or None, other.prefix_items or None) or []
    if other.items is not True:
        n.items = other.items if n.items is True else _one(n, "items", n.items, other.items)
    n.min_items = max(n.min_items, other.min_items)
    n.max_items = _min_opt(n.max_items, other.max_items)
    n.unique_items = n.unique_items or other.unique_items
    if other.properties:
        if n.properties and (n.additional is not True or other.additional is not True):
            raise UnsupportedSchema(n.loc, "allOf/$ref merging two object shapes with closed content models")
        for k, v in other.properties.items():
            n.properties[k] = v if k not in n.properties else _one(n, f"properties/{k}", n.properties[k], v)
    n.required = n.required | other.required
    if other.additional is not True:
        n.additional = (
            other.additional
            if n.additional is True
            else _one(n, "additionalProperties", n.additional, other.additional)
        )
    n.property_names = _one(n, "propertyNames", n.property_names, other.property_names)
    n.min_properties = max(n.min_properties, other.min_properties)
    n.max_properties = _min_opt(n.max_properties, other.max_properties)
    for k, deps in other.dependent_required.items():
        n.dependent_required[k] = tuple(dict.fromkeys((*n.dependent_required.get(k, ()), *deps)))
    if other.union is not None:
        if n.union is not None:
            raise UnsupportedSchema(n.loc, "two unions meet through $ref/allOf")
        own = _constraints_only(n)
        branches = [_merged(own, b) for b in other.union] if not own.is_trivial() else list(other.union)
        if other.one_of is not None:
            n.one_of = branches
        else:
            n.any_of = branches
        n.discriminator = n.discriminator or other.discriminator


def _meet_types(a: frozenset[str], b: frozenset[str]) -> frozenset[str]:
    out = a & b
    if ("integer" in a and "number" in b) or ("integer" in b and "number" in a):
        out |= {"integer"}
    return frozenset(out)


def _one(n: Node, what: str, a: Any, b: Any) -> Any:
    if a is None:
        return b
    if b is None or a is b or a == b:
        return a
    raise UnsupportedSchema(n.loc, f"allOf/$ref with two different `{what}` constraints cannot be intersected")


def _min_opt(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else min(a, b)


def _max_opt(a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else max(a, b)


def branch_tag(branch: Node, disc: str) -> Any:
    """The discriminator value that selects `branch` (its property's const), or None."""
    prop = branch.properties.get(disc)
    if prop is not None and prop.enum is not None and len(prop.enum) == 1 and disc in branch.required:
        return prop.enum[0]
    return None


def union_discriminator(n: Node) -> str | None:
    """The property that tells a union's branches apart: the `discriminator` hint, or
    else a property every (nested) branch requires, as `type` in `anyOf[known, unknown]`."""
    if n.discriminator is not None:
        return n.discriminator
    if n.union is None:
        return None
    common: set[str] | None = None
    todo = list(n.union)
    seen = {id(n)}
    while todo:
        b = todo.pop()
        if id(b) in seen:
            continue
        seen.add(id(b))
        if b.union is not None and not b.required:
            todo.extend(b.union)
            continue
        if b.types is not None and "object" not in b.types:
            return None
        common = set(b.required) if common is None else common & b.required
    if common and len(common) == 1:
        return next(iter(common))
    return None
