"""Hypothesis strategies compiled from the project's JSON Schemas.

`Compiler(schema_set).valid("message.json")` is a strategy of documents the schema
accepts; a schema change changes the data with no hand edits. hypothesis-jsonschema is
not used: its last release fails on every object schema with current hypothesis, and
even pinned it ignores 2020-12 `prefixItems` and `dependentRequired`. Keywords this
compiler cannot honour raise `UnsupportedSchema` when the strategy is built (see ir.py).

Recursive schemas (content blocks inside tool results) are unrolled: a node may appear
at most `max_recursion + 1` times on one path; past that, the branches, optional
properties and array items that lead back into it are left out, and whatever cannot
be left out makes its parent impossible (`None`), which unions and optional slots
absorb.

Strings mix in a *dictionary*: string constants and property names found in the schema
sets (plus any given), filtered by each node's own constraints. Random text essentially
never hits a boundary such as an unknown block whose type is `audio`; a dictionary entry
does, which is what lets migration proofs and `schema diff` find such boundaries.
"""

from __future__ import annotations

import copy
import datetime as dt
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy
from referencing import Registry

from ..core.schemas import SchemaSet
from .ir import Node, SchemaGraph, UnsupportedSchema, children, json_key
from .plain import EXTRA_KEY, SAFE_INT, dictionary_of, disjoint, string_check

__all__ = ["EXTRA_KEY", "SAFE_INT", "Compiler", "dictionary_of", "disjoint", "json_values", "string_check"]

DEFAULT_MAX_ITEMS = 4
DEFAULT_MAX_TEXT = 40

Strategy = SearchStrategy[Any]


def json_values(max_leaves: int = 6) -> Strategy:
    """Arbitrary JSON values (for `{}` / `true` schemas): small and finite."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-SAFE_INT, SAFE_INT),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=12),
    )
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=max_leaves,
    )


_FORMATS: dict[str, Callable[[], Strategy]] = {
    "date-time": lambda: st.datetimes(
        min_value=dt.datetime(1970, 1, 1),
        max_value=dt.datetime(2999, 12, 31),
        timezones=st.just(dt.UTC),
    ).map(lambda d: d.isoformat().replace("+00:00", "Z")),
    "date": lambda: st.dates().map(lambda d: d.isoformat()),
    "time": lambda: st.times().map(lambda t: t.isoformat() + "Z"),
    "email": lambda: st.emails(),
    "uuid": lambda: st.uuids().map(str),
    "ipv4": lambda: st.ip_addresses(v=4).map(str),
    "ipv6": lambda: st.ip_addresses(v=6).map(str),
    "uri": lambda: st.from_regex(r"\Ahttps://[a-z]{1,12}\.example/[a-z0-9/]{0,12}\Z"),
}


class Compiler:
    """Strategies for the schemas of one set (with `extra` sets for cross-set `$ref`s)."""

    def __init__(
        self,
        schemas: SchemaSet,
        *extra: SchemaSet,
        registry: Registry[Any] | None = None,
        max_recursion: int = 1,
        dictionary: Iterable[str] = (),
        extras: bool = True,
        overrides: dict[str, Strategy] | None = None,
        route: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        """`extras` generates unknown keys where the content model is open (§10.3
        tolerance is part of the format); `overrides` maps a schema location
        (`uri#pointer`) to a strategy used instead of the compiled one; `route` steers
        generation towards one place of the schema: `(loc, "property", name)` makes that
        property present, `(loc, "items", "")` that array non-empty, `(loc, "branch",
        branch_loc)` picks that union branch (schema diff uses it to reach a change)."""
        self.graph = SchemaGraph(schemas, *extra, registry=registry)
        self.schemas = schemas
        self.sets = (schemas, *extra)
        self.max_recursion = max_recursion
        self.dictionary = dictionary_of(schemas, *extra)
        # given words are drawn as often as the schema's own: they are the boundary a
        # caller is looking for (a newer revision's vocabulary, say)
        self.focus = tuple(w for w in dict.fromkeys(dictionary) if w not in set(self.dictionary))
        self.extras = extras
        self.overrides = overrides or {}
        self.route_props: dict[str, set[str]] = {}
        self.route_arrays: set[str] = set()
        self.route_branches: dict[str, str] = {}
        for loc, kind, key in route:
            if kind == "property":
                self.route_props.setdefault(loc, set()).add(key)
            elif kind == "items":
                self.route_arrays.add(loc)
            elif kind == "branch":
                self.route_branches[loc] = key
        self._memo: dict[tuple[int, tuple[tuple[int, int], ...]], Strategy | None] = {}
        self._cyclic: set[int] | None = None
        self._root: Node | None = None

    # -- public -----------------------------------------------------------------------

    def node(self, root: str) -> Node:
        return self.graph.root(root)

    def valid(self, root: str) -> Strategy:
        """Documents valid under `root` (a file name of the set, e.g. `message.json`)."""
        return self.for_node(self.node(root))

    def for_node(self, node: Node) -> Strategy:
        self._cyclic = _cyclic_nodes(self.graph, node)
        s = self._build(node, ())
        if s is None:
            raise UnsupportedSchema(node.loc, "no finite document satisfies this schema within the recursion bound")
        return s

    # -- building ---------------------------------------------------------------------

    def _build(self, n: Node, stack: tuple[Node, ...]) -> Strategy | None:
        assert self._cyclic is not None
        # only nodes on a cycle are counted on the path; the memo key is the node plus
        # how often each of them has been entered, so unrolled copies stay distinct
        if id(n) in self._cyclic:
            if sum(1 for x in stack if x is n) > self.max_recursion:
                return None
            stack = (*stack, n)
        counts = tuple(sorted((id(x), sum(1 for y in stack if y is x)) for x in set(stack)))
        key = (id(n), counts)
        if key in self._memo:
            return self._memo[key]
        self._memo[key] = None  # a cycle not through a cyclic node cannot happen; guard anyway
        s = self._compile(n, stack)
        self._memo[key] = s
        return s

    def _compile(self, n: Node, stack: tuple[Node, ...]) -> Strategy | None:
        if n.loc in self.overrides:
            return self.overrides[n.loc]
        if n.never:
            return None
        if n.union is not None:
            return self._union(n, stack)
        if n.enum is not None:
            vals = [v for v in n.enum if _scalar_ok(n, v)]
            if not vals:
                return None
            if all(isinstance(v, str | int | float | bool) or v is None for v in vals):
                return st.sampled_from(vals) if len(vals) > 1 else st.just(vals[0])
            return st.sampled_from(vals).map(copy.deepcopy)
        types = sorted(n.types) if n.types is not None else None
        if types is None:
            if n.is_trivial():
                return json_values()
            # untyped but constrained: each constraint only applies to its own type
            types = ["null", "boolean", "integer", "number", "string", "array", "object"]
        options = [s for t in types if (s := self._typed(n, t, stack)) is not None]
        if not options:
            return None
        return options[0] if len(options) == 1 else st.one_of(options)

    def _typed(self, n: Node, t: str, stack: tuple[Node, ...]) -> Strategy | None:
        if t == "null":
            return st.none()
        if t == "boolean":
            return st.booleans()
        if t == "integer":
            return self._integer(n)
        if t == "number":
            ints = self._integer(n)
            floats = self._float(n)
            opts = [s for s in (ints, floats) if s is not None]
            return st.one_of(opts) if opts else None
        if t == "string":
            return self._string(n)
        if t == "array":
            return self._array(n, stack)
        return self._object(n, stack)

    def _integer(self, n: Node) -> Strategy | None:
        lo, hi = -SAFE_INT, SAFE_INT
        if n.minimum is not None:
            lo = max(lo, math.ceil(n.minimum))
        if n.exclusive_minimum is not None:
            lo = max(lo, math.floor(n.exclusive_minimum) + 1)
        if n.maximum is not None:
            hi = min(hi, math.floor(n.maximum))
        if n.exclusive_maximum is not None:
            hi = min(hi, math.ceil(n.exclusive_maximum) - 1)
        if lo > hi:
            return None
        m = n.multiple_of
        if m is not None:
            if m != int(m):
                return st.integers(lo, hi).filter(lambda v: _multiple(v, m))
            k = int(m)
            klo, khi = -(-lo // k), hi // k
            return None if klo > khi else st.integers(klo, khi).map(lambda v: v * k)
        return st.integers(lo, hi)

    def _float(self, n: Node) -> Strategy | None:
        if n.multiple_of is not None:
            return None  # multiples are generated as integers * multipleOf by _integer
        lo = n.minimum if n.minimum is not None else n.exclusive_minimum
        hi = n.maximum if n.maximum is not None else n.exclusive_maximum
        if n.minimum is not None and n.exclusive_minimum is not None:
            lo = max(n.minimum, n.exclusive_minimum)
        if n.maximum is not None and n.exclusive_maximum is not None:
            hi = min(n.maximum, n.exclusive_maximum)
        excl_lo = lo is not None and lo == n.exclusive_minimum
        excl_hi = hi is not None and hi == n.exclusive_maximum
        if lo is not None and hi is not None and (lo > hi or (lo == hi and (excl_lo or excl_hi))):
            return None
        return st.floats(
            min_value=lo,
            max_value=hi,
            exclude_min=excl_lo,
            exclude_max=excl_hi,
            allow_nan=False,
            allow_infinity=False,
        ).filter(lambda v: not v.is_integer())  # integral values come from _integer

    def _string(self, n: Node) -> Strategy | None:
        lo, hi = n.min_length, n.max_length
        if hi is not None and lo > hi:
            return None
        check = string_check(n)
        base: Strategy
        if n.format in _FORMATS:
            base = _FORMATS[n.format]().filter(check)
        elif n.pattern is not None:
            base = _regex_strategy(n.pattern).filter(check)
        else:
            base = st.text(min_size=lo, max_size=hi if hi is not None else max(lo, DEFAULT_MAX_TEXT))
            if hi is not None and hi > 4 * DEFAULT_MAX_TEXT:
                # reach the upper bound sometimes: boundaries are where schemas differ
                edge = st.integers(max(lo, hi - 2), hi).map(lambda k: "a" * k)
                base = st.one_of(base, edge)
        options = [base]
        # dictionary words are not checked against `format`, so formatted strings skip them
        for vocabulary in () if n.format in _FORMATS else (self.dictionary, self.focus):
            words = [w for w in vocabulary if check(w)]
            if words:
                options.append(st.sampled_from(words))
        return st.one_of(options) if len(options) > 1 else base

    def _array(self, n: Node, stack: tuple[Node, ...]) -> Strategy | None:
        prefix: list[Strategy] = []
        for sub in n.prefix_items:
            s = self._build(sub, stack)
            if s is None:
                break  # a prefix item that cannot be built caps the array before it
            prefix.append(s)
        lo, hi = n.min_items, n.max_items
        if n.loc in self.route_arrays:
            lo = max(lo, 1)
        if len(prefix) < len(n.prefix_items):
            hi = len(prefix) if hi is None else min(hi, len(prefix))
        if lo > (hi if hi is not None else lo):
            return None
        fixed_lo = min(lo, len(prefix))
        rest: Strategy | None
        if n.items is False:
            rest = None
        elif n.items is True:
            rest = json_values()
        else:
            rest = self._build(n.items, stack)
        max_rest = 0 if rest is None else (DEFAULT_MAX_ITEMS if hi is None else max(0, hi - len(prefix)))
        min_rest = max(0, lo - len(prefix))
        if min_rest > max_rest:
            return None
        unique = n.unique_items

        @st.composite
        def arrays(draw: st.DrawFn) -> list[Any]:
            k = draw(st.integers(fixed_lo, len(prefix)))
            out = [draw(s) for s in prefix[:k]]
            if k == len(prefix) and rest is not None and max_rest:
                out += draw(st.lists(rest, min_size=min_rest, max_size=max_rest))
            return out

        if not prefix:
            if rest is None:
                return st.just([]).map(list) if lo == 0 else None
            return st.lists(rest, min_size=lo, max_size=max_rest, unique_by=json_key if unique else None)
        s = arrays()
        if unique:
            s = s.filter(lambda xs: len({json_key(x) for x in xs}) == len(xs))
        return s

    def _object(self, n: Node, stack: tuple[Node, ...]) -> Strategy | None:
        required: dict[str, Strategy] = {}
        optional: dict[str, Strategy] = {}
        wanted = n.required | {
            k for k in self.route_props.get(n.loc, ()) if k in n.properties or n.additional is not False
        }
        for k in sorted(wanted):
            sub = n.properties.get(k)
            s = self._additional_value(n, k, stack) if sub is None else self._build(sub, stack)
            if s is None:
                return None
            required[k] = s
        for k, sub in n.properties.items():
            if k in required:
                continue
            s = self._build(sub, stack)
            if s is not None:
                optional[k] = s
            elif any(k in deps for deps in n.dependent_required.values()):
                return None  # too rare to be worth the bookkeeping; none of our schemas do it
        base = st.fixed_dictionaries(required, optional=optional) if optional else st.fixed_dictionaries(required)
        extra = self._extras(n, stack)
        s = base if extra is None else st.builds(_joined, base, extra)
        if n.dependent_required:
            deps = n.dependent_required
            s = s.filter(lambda d: all(all(x in d for x in deps[k]) for k in deps if k in d))
        if n.min_properties or n.max_properties is not None:
            lo, hi = n.min_properties, n.max_properties
            s = s.filter(lambda d: len(d) >= lo and (hi is None or len(d) <= hi))
        return s

    def _additional_value(self, n: Node, key: str, stack: tuple[Node, ...]) -> Strategy | None:
        if n.additional is False:
            return None
        if n.additional is True:
            return json_values()
        return self._build(n.additional, stack)

    def _extras(self, n: Node, stack: tuple[Node, ...]) -> Strategy | None:
        if n.additional is False or (n.additional is True and not self.extras):
            return None
        values = self._additional_value(n, EXTRA_KEY, stack)
        if values is None:
            return None
        known = set(n.properties)
        if n.property_names is not None:
            keys = self._build(n.property_names, stack)
            if keys is None:
                return None
        else:
            keys = st.text(min_size=1, max_size=12)
            for vocabulary in (self.dictionary, self.focus):
                words = [w for w in vocabulary if w not in known]
                if words:
                    keys = st.one_of(keys, st.sampled_from(words))
        keys = keys.filter(lambda k: isinstance(k, str) and k not in known)
        return st.dictionaries(keys, values, max_size=2)

    def _union(self, n: Node, stack: tuple[Node, ...]) -> Strategy | None:
        assert n.union is not None
        built = [(b, s) for b in n.union if (s := self._build(b, stack)) is not None]
        if not built:
            return None
        chosen = self.route_branches.get(n.loc)
        if chosen is not None and any(b.loc == chosen for b, _ in built):
            built = [(b, s) for b, s in built if b.loc == chosen]
        s = st.one_of([x for _, x in built]) if len(built) > 1 else built[0][1]
        if n.one_of is not None and len(built) > 1 and not disjoint(n):
            # oneOf without provably disjoint branches: keep values exactly one accepts
            from ..core.schema_validation import oracle_for, oracle_registry

            reg = oracle_registry(*self.sets)
            checks = [oracle_for({"$ref": b.loc}, registry=reg) for b in n.union]
            s = s.filter(lambda v: sum(1 for c in checks if c.is_valid(v)) == 1)
        return s


def _joined(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {**b, **a}


def _multiple(v: float, m: float) -> bool:
    q = v / m
    return math.isfinite(q) and abs(q - round(q)) < 1e-9


def _scalar_ok(n: Node, v: Any) -> bool:
    # a const/enum member must also meet the node's type, if any
    from .ir import json_type

    return n.types is None or n.allows(json_type(v)) or (json_type(v) == "integer" and "number" in n.types)


def _regex_strategy(pattern: str) -> Strategy:
    """Strings matching an ECMA pattern, generated by hypothesis' `from_regex`.

    A pattern anchored at both ends is generated with `fullmatch` (no stray prefix or
    trailing newline); the compiler's filter then applies the ECMA reading of the
    pattern (ecma_regex), which is what the validators use.
    """
    body = pattern
    if body.startswith("^") and body.endswith("$") and not body.endswith("\\$"):
        try:
            return st.from_regex(re.compile(body[1:-1]), fullmatch=True)
        except re.error:
            pass
    return st.from_regex(re.compile(pattern))


def _cyclic_nodes(graph: SchemaGraph, start: Node) -> set[int]:
    """Ids of the nodes that lie on a cycle reachable from `start` (Tarjan's SCCs)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[Node] = []
    out: set[int] = set()
    counter = [0]

    def strong(v: Node) -> None:
        # iterative Tarjan: schemas can nest deeper than Python's recursion limit
        work: list[tuple[Node, Sequence[Node], int]] = [(v, list(children(v)), 0)]
        index[id(v)] = low[id(v)] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(id(v))
        while work:
            node, kids, i = work[-1]
            if i < len(kids):
                work[-1] = (node, kids, i + 1)
                w = kids[i]
                if id(w) not in index:
                    index[id(w)] = low[id(w)] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(id(w))
                    work.append((w, list(children(w)), 0))
                elif id(w) in on:
                    low[id(node)] = min(low[id(node)], index[id(w)])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[id(parent)] = min(low[id(parent)], low[id(node)])
            if low[id(node)] == index[id(node)]:
                comp: list[Node] = []
                while True:
                    w = stack.pop()
                    on.discard(id(w))
                    comp.append(w)
                    if w is node:
                        break
                if len(comp) > 1 or any(c is node for c in children(node)):
                    out.update(id(c) for c in comp)

    strong(start)
    return out
