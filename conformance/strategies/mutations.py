"""Targeted invalid documents: one constraint broken at a known pointer, labelled.

A valid document is drawn from the compiled strategy, walked against the schema graph
to learn which schema node produced each value (and which branch of every union), and
one constraint at one place is broken: a required field removed, an enum value
replaced, a bound crossed by one, a closed object given an unknown key, and so on.

Unions need care: breaking a value inside one branch must not make it valid under
another (`{"type": "txt"}` is a perfectly good *unknown* block). Every mutation is
therefore checked against the enclosing unions' other branches, through the reference
validator (python-jsonschema) on those branch schemas alone; a mutation another branch
would accept is not used. That check guards the generator, it is not the thing under
test: the properties then ask the project's validator and models about the whole
document.

A broken discriminator (the `type` of a block removed or of the wrong type) is
labelled `discriminator` at the union's location: the document no longer says which
kind of block it holds, and that is where readers report it.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from hypothesis import reject
from hypothesis import strategies as st

from ..core.schema_validation import ecma_regex, oracle_for, oracle_registry, pointer_of
from .compiler import Compiler
from .ir import JSON_TYPES, Node, branch_tag, json_equal, json_type, union_discriminator
from .plain import SAMPLE_OF_TYPE

Path = tuple[str | int, ...]
_DELETE = object()


@dataclass(frozen=True)
class Invalid:
    """A document that breaks exactly one constraint, and which one.

    `pointer` is where a reader reports the violation (the missing or unknown key for
    `required` / `additionalProperties`, the value otherwise, the block for a broken
    `discriminator`); `keyword` names the broken constraint; `schema` is the location
    (`uri#pointer`) of the schema that holds it.
    """

    document: Any
    pointer: str
    keyword: str
    detail: str
    schema: str
    ambiguous: str | None = None

    # `ambiguous`: the location of the innermost enclosing union that no discriminator
    # tells apart (`anyOf: [TokenUsage, Usage]`), when there is one below the root. A
    # reader cannot know which branch was meant and may fairly report the union there.

    def __repr__(self) -> str:
        return f"Invalid({self.keyword} at {self.pointer!r}: {self.detail})"


@dataclass(frozen=True)
class _Site:
    path: Path
    node: Node
    value: Any
    unions: tuple[tuple[Path, Node, int], ...]


@dataclass(frozen=True)
class _Mutation:
    path: Path  # the value replaced (or key deleted)
    new: Any  # the replacement, or _DELETE
    pointer: str
    keyword: str
    detail: str
    schema: str
    site: _Site


class Mutator:
    """Builds labelled invalid documents for one root schema."""

    def __init__(self, compiler: Compiler, root: str) -> None:
        self.compiler = compiler
        self.root = compiler.node(root)
        self.valid = compiler.for_node(self.root)
        self._checks: dict[str, Callable[[Any], bool]] = {}
        self._registry = oracle_registry(*compiler.sets)

    def strategy(self) -> st.SearchStrategy[Invalid]:
        valid = self.valid

        @st.composite
        def invalid(draw: st.DrawFn) -> Invalid:
            doc = draw(valid)
            sites = list(self.annotate(self.root, doc))
            by_kind: dict[str, list[_Mutation]] = {}
            for site in sites:
                for m in self.mutations(site):
                    by_kind.setdefault(m.keyword, []).append(m)
            if not by_kind:
                reject()
            # the kind of break first, then the place: rare kinds (a crossed bound) are
            # drawn as often as common ones (a removed field)
            kinds = sorted(by_kind)
            first = draw(st.integers(0, len(kinds) - 1))
            for i in range(len(kinds)):
                cands = by_kind[kinds[(first + i) % len(kinds)]]
                start = draw(st.integers(0, len(cands) - 1))
                for k in range(min(len(cands), 8)):
                    m = cands[(start + k) % len(cands)]
                    out = _apply(doc, m.path, m.new)
                    if self._guarded(out, m):
                        return Invalid(out, m.pointer, m.keyword, m.detail, m.schema, self._ambiguous(m))
            reject()

        return invalid()

    def each(self, doc: Any) -> Iterator[Invalid]:
        """Every one-constraint break of the valid `doc` the catalogue has (the guarded
        ones), in a fixed order: a deterministic mutant corpus without hypothesis."""
        for site in self.annotate(self.root, doc):
            for m in self.mutations(site):
                out = _apply(doc, m.path, m.new)
                if self._guarded(out, m):
                    yield Invalid(out, m.pointer, m.keyword, m.detail, m.schema, self._ambiguous(m))

    # -- which node produced each value ---------------------------------------------

    def annotate(
        self,
        node: Node,
        value: Any,
        path: Path = (),
        unions: tuple[tuple[Path, Node, int], ...] = (),
    ) -> Iterator[_Site]:
        while node.union is not None:
            idx = self._branch_of(node, value)
            if idx is None:
                return
            unions = (*unions, (path, node, idx))
            node = node.union[idx]
        yield _Site(path, node, value, unions)
        if isinstance(value, dict):
            for k, v in value.items():
                sub = node.properties.get(k)
                if sub is None and isinstance(node.additional, Node):
                    sub = node.additional
                if sub is not None:
                    yield from self.annotate(sub, v, (*path, k), unions)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                item: Node | bool = node.prefix_items[i] if i < len(node.prefix_items) else node.items
                if isinstance(item, Node):
                    yield from self.annotate(item, v, (*path, i), unions)

    def _branch_of(self, node: Node, value: Any) -> int | None:
        assert node.union is not None
        if node.discriminator is not None and isinstance(value, dict):
            for i, b in enumerate(node.union):
                tag = branch_tag(b, node.discriminator)
                if tag is not None and json_equal(tag, value.get(node.discriminator, _DELETE)):
                    return i
        for i, b in enumerate(node.union):
            if self._accepts(b, value):
                return i
        return None

    def _accepts(self, node: Node, value: Any) -> bool:
        check = self._checks.get(node.loc)
        if check is None:
            v = oracle_for({"$ref": node.loc}, registry=self._registry)
            check = self._checks[node.loc] = v.is_valid
        return check(value)

    def _guarded(self, doc: Any, m: _Mutation) -> bool:
        """True when no other branch of an enclosing union accepts the mutated value."""
        for upath, unode, idx in m.site.unions:
            if len(upath) > len(m.path) or m.path[: len(upath)] != upath:
                continue
            sub = _get(doc, upath)
            assert unode.union is not None
            for j, b in enumerate(unode.union):
                if j != idx and self._accepts(b, sub):
                    return False
        return True

    # -- the catalogue of one-constraint breaks -------------------------------------

    def mutations(self, site: _Site) -> Iterator[_Mutation]:
        n, v, path = site.node, site.value, site.path
        here = pointer_of(path)

        def mk(at: Path, new: Any, keyword: str, detail: str, pointer: str | None = None) -> _Mutation:
            disc = self._discriminated(site, at)
            if disc is not None:
                return _Mutation(
                    at,
                    new,
                    pointer_of(disc),
                    "discriminator",
                    f"{detail} (the union's discriminator)",
                    n.loc,
                    site,
                )
            return _Mutation(
                at,
                new,
                pointer if pointer is not None else pointer_of(at),
                keyword,
                detail,
                n.loc,
                site,
            )

        # wrong JSON type
        if n.types is not None or n.enum is not None:
            for t in JSON_TYPES:
                if n.types is not None and n.allows(t):
                    continue
                wrong = SAMPLE_OF_TYPE[t]
                if n.enum is not None and any(json_equal(wrong, e) for e in n.enum):
                    continue
                kw = "type" if n.types is not None else ("const" if n.is_const else "enum")
                yield mk(path, copy.deepcopy(wrong), kw, f"{json_type(v)} replaced by a {t}")
                break  # one wrong type per site keeps the catalogue small
        # a same-type value outside the enum
        if n.enum is not None:
            other = _outside_enum(v, n.enum)
            if other is not _DELETE:
                yield mk(
                    path,
                    other,
                    "const" if n.is_const else "enum",
                    f"{_short(v)} replaced by {_short(other)}",
                )
        if isinstance(v, str):
            yield from self._string(site, mk)
        elif isinstance(v, int | float) and not isinstance(v, bool):
            yield from self._number(site, mk)
        elif isinstance(v, list):
            yield from self._array(site, mk)
        elif isinstance(v, dict):
            for k in sorted(n.required):
                if k in v:
                    yield mk((*path, k), _DELETE, "required", f"required field {k!r} removed")
            if n.additional is False:
                key = "x_turnspec_unknown"
                if n.property_names is None and key not in n.properties:
                    yield mk((*path, key), 1, "additionalProperties", f"unknown field {key!r} added")
            for k, deps in n.dependent_required.items():
                for d in deps:
                    if k in v and d in v and d not in n.required:
                        yield mk(
                            (*path, d),
                            _DELETE,
                            "dependentRequired",
                            f"{d!r} removed though {k!r} is present",
                            pointer=here,
                        )

    def _ambiguous(self, m: _Mutation) -> str | None:
        for upath, unode, _ in reversed(m.site.unions):
            assert unode.union is not None
            objects = [b for b in unode.union if b.types is None or "object" in b.types]
            if len(objects) > 1 and union_discriminator(unode) is None and upath:
                return pointer_of(upath)
        return None

    def _discriminated(self, site: _Site, at: Path) -> Path | None:
        """The union path when `at` is the discriminator property of an enclosing branch."""
        if not at:
            return None
        for upath, unode, _ in reversed(site.unions):
            disc = union_discriminator(unode)
            if disc is not None and at == (*upath, disc):
                return upath
        return None

    def _string(self, site: _Site, mk: Callable[..., _Mutation]) -> Iterator[_Mutation]:
        n, v, path = site.node, site.value, site.path
        if n.enum is not None:
            return
        if n.min_length > 0:
            yield mk(
                path,
                v[: n.min_length - 1],
                "minLength",
                f"shortened to {n.min_length - 1} (minLength {n.min_length})",
            )
        if n.max_length is not None:
            yield mk(
                path,
                (v + "a" * (n.max_length + 1))[: n.max_length + 1],
                "maxLength",
                f"lengthened to {n.max_length + 1} (maxLength {n.max_length})",
            )
        if n.pattern is not None:
            rx = ecma_regex(n.pattern)
            hi = n.max_length if n.max_length is not None else 10**9
            for cand in (
                v + "\n",
                "!" + v,
                v + "!",
                "!" * max(1, n.min_length),
                " " * max(1, n.min_length),
                v[:-1],
            ):
                if not rx.search(cand) and n.min_length <= len(cand) <= hi:
                    yield mk(path, cand, "pattern", f"{_short(cand)} does not match {n.pattern}")
                    break

    def _number(self, site: _Site, mk: Callable[..., _Mutation]) -> Iterator[_Mutation]:
        n, path = site.node, site.path
        if n.enum is not None:
            return
        integral = n.types is not None and "number" not in n.types

        def below(b: float) -> float:
            return math.ceil(b) - 1 if integral else math.nextafter(b, -math.inf)

        def above(b: float) -> float:
            return math.floor(b) + 1 if integral else math.nextafter(b, math.inf)

        if n.minimum is not None:
            yield mk(path, _num(below(n.minimum)), "minimum", f"crossed minimum {n.minimum} by one")
        if n.maximum is not None:
            yield mk(path, _num(above(n.maximum)), "maximum", f"crossed maximum {n.maximum} by one")
        if n.exclusive_minimum is not None and (not integral or float(n.exclusive_minimum).is_integer()):
            yield mk(
                path,
                _num(n.exclusive_minimum),
                "exclusiveMinimum",
                f"equal to exclusiveMinimum {n.exclusive_minimum}",
            )
        if n.exclusive_maximum is not None and (not integral or float(n.exclusive_maximum).is_integer()):
            yield mk(
                path,
                _num(n.exclusive_maximum),
                "exclusiveMaximum",
                f"equal to exclusiveMaximum {n.exclusive_maximum}",
            )

    def _array(self, site: _Site, mk: Callable[..., _Mutation]) -> Iterator[_Mutation]:
        n, v, path = site.node, site.value, site.path
        if n.min_items > 0:
            yield mk(
                path,
                copy.deepcopy(v[: n.min_items - 1]),
                "minItems",
                f"cut to {n.min_items - 1} items (minItems {n.min_items})",
            )
        if n.max_items is not None and v:
            longer = copy.deepcopy(v) + [copy.deepcopy(v[-1]) for _ in range(n.max_items + 1 - len(v))]
            yield mk(
                path,
                longer,
                "maxItems",
                f"grown to {n.max_items + 1} items (maxItems {n.max_items})",
            )
        if n.unique_items and v and (n.max_items is None or len(v) < n.max_items):
            yield mk(path, [*copy.deepcopy(v), copy.deepcopy(v[0])], "uniqueItems", "first item repeated")
        if n.items is False and len(v) == len(n.prefix_items) and (n.max_items is None or len(v) < n.max_items):
            yield mk(path, [*copy.deepcopy(v), 0], "items", f"item {len(v)} added past the closed tuple")


def _num(x: float) -> int | float:
    return int(x) if isinstance(x, float) and x.is_integer() and abs(x) < 2**53 else x


def _outside_enum(v: Any, enum: tuple[Any, ...]) -> Any:
    t = json_type(v)
    cands: list[Any]
    if t == "string":
        cands = [v + "_x", v + "x", "x" + v, "zz"]
    elif t in ("integer", "number"):
        top = max((e for e in enum if isinstance(e, int | float) and not isinstance(e, bool)), default=0)
        cands = [top + 1, -1]
    elif t == "boolean":
        cands = [not v]
    else:
        return _DELETE
    for c in cands:
        if not any(json_equal(c, e) for e in enum):
            return c
    return _DELETE


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 40 else r[:37] + "..."


def _get(doc: Any, path: Path) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _apply(doc: Any, path: Path, new: Any) -> Any:
    out = copy.deepcopy(doc)
    if not path:
        return new
    parent = _get(out, path[:-1])
    if new is _DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return out
