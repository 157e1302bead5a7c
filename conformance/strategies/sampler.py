"""Fast, seeded sampling of valid documents from the same schema graph.

The hypothesis strategies are for properties: they shrink failures to small examples,
but every choice passes through hypothesis' engine (about 80 µs each, some 6 ms for a
message). Bulk uses (a corpus of a million messages for a validator benchmark, a
migration proof at volume) need plain random sampling; this walks the same `Node`
graph with `random.Random`, so both backends honour exactly the same keywords.

Patterns are sampled by walking Python's own parse of the regex (`re._parser`), then
checked with the ECMA reading the validators use; rstr/xeger were measured at 0.4-2 ms
per string here and ignore look-arounds, so they would dominate the budget.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import math
import random
import re
import string
import uuid
from collections.abc import Callable, Sequence

# Python >= 3.11 keeps the regex parser under `re` (sre_parse is deprecated)
from re import _constants as sre_c  # type: ignore[attr-defined]
from re import _parser as sre_p  # type: ignore[attr-defined]
from typing import Any

from ..core.schema_validation import ecma_regex, oracle_for, oracle_registry
from .ir import JSON_TYPES, Node, UnsupportedSchema, json_key
from .plain import SAFE_INT, Source, disjoint, string_check

_PRINTABLE = string.ascii_letters + string.digits + " _-.:/!#$&^+@~"
_EXTRA_CHARS = "äéßü—☃中𝄞"
_CATEGORIES = {
    sre_c.CATEGORY_DIGIT: string.digits,
    sre_c.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    sre_c.CATEGORY_SPACE: " \t\n",
}


def _datetime(r: random.Random) -> str:
    d = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=r.randrange(32_503_680_000_000_000))
    return d.isoformat().replace("+00:00", "Z")


_FORMATS: dict[str, Callable[[random.Random], str]] = {
    "date-time": _datetime,
    "date": lambda r: _datetime(r)[:10],
    "time": lambda r: _datetime(r)[11:],
    "email": lambda r: f"{_text(r, 1, 8).strip() or 'a'}@example.com".replace(" ", "_").replace(":", "_"),
    "uuid": lambda r: str(uuid.UUID(int=r.getrandbits(128), version=4)),
    "ipv4": lambda r: ".".join(str(r.randrange(256)) for _ in range(4)),
    "ipv6": lambda r: str(ipaddress.IPv6Address(r.getrandbits(128))),
    "uri": lambda r: "https://example.com/" + "".join(r.choices(string.ascii_lowercase, k=r.randint(0, 10))),
}


class _Impossible(Exception):
    """This node cannot be sampled within the recursion bound."""


class _Regex:
    """Random strings for one pattern (None from `sample` when the sample missed)."""

    def __init__(self, pattern: str) -> None:
        self.check = ecma_regex(pattern)
        try:
            self.parsed = sre_p.parse(pattern)
        except re.error as exc:
            raise UnsupportedSchema(pattern, f"pattern does not compile: {exc}") from exc
        self.free_start = not pattern.startswith("^")
        # `$`, or `(?![\s\S])` (end of input in ECMA-262 and Python alike, issue 14)
        end_anchored = (pattern.endswith("$") and not pattern.endswith("\\$")) or pattern.endswith(r"(?![\s\S])")
        self.free_end = not end_anchored

    def sample(self, r: random.Random) -> str:
        out: list[str] = []
        if self.free_start and r.random() < 0.3:
            out.append(_text(r, 0, 4))
        self._emit(self.parsed, r, out)
        if self.free_end:
            out.append(_text(r, 0, 8))
        return "".join(out)

    def _emit(self, items: Any, r: random.Random, out: list[str]) -> None:
        for op, av in items:
            if op is sre_c.LITERAL:
                out.append(chr(av))
            elif op is sre_c.NOT_LITERAL:
                out.append(r.choice([c for c in _PRINTABLE if ord(c) != av]))
            elif op is sre_c.ANY:
                out.append(r.choice(_PRINTABLE))
            elif op is sre_c.IN:
                out.append(self._in(av, r))
            elif op in (
                sre_c.MAX_REPEAT,
                sre_c.MIN_REPEAT,
                getattr(sre_c, "POSSESSIVE_REPEAT", None),
            ):
                lo, hi, sub = av
                hi = lo + 6 if hi is sre_c.MAXREPEAT else hi
                for _ in range(r.randint(lo, max(lo, min(hi, lo + 6)))):
                    self._emit(sub, r, out)
            elif op is sre_c.SUBPATTERN:
                self._emit(av[-1], r, out)
            elif op is sre_c.BRANCH:
                self._emit(r.choice(av[1]), r, out)
            elif op in (sre_c.AT, sre_c.ASSERT, sre_c.ASSERT_NOT):
                pass  # anchors and look-arounds: the final ECMA check enforces them
            else:
                raise UnsupportedSchema(str(op), "regex construct not supported by the sampler")

    def _in(self, items: Any, r: random.Random) -> str:
        chars: list[str] = []
        negate = False
        for op, av in items:
            if op is sre_c.NEGATE:
                negate = True
            elif op is sre_c.LITERAL:
                chars.append(chr(av))
            elif op is sre_c.RANGE:
                lo, hi = av
                chars.extend(chr(c) for c in range(lo, min(hi, lo + 200) + 1))
            elif op is sre_c.CATEGORY:
                chars.extend(_CATEGORIES.get(av, ""))
        if negate:
            pool = [c for c in _PRINTABLE + _EXTRA_CHARS if c not in set(chars) and c.strip()]
            return r.choice(pool)
        return r.choice(chars) if chars else "a"


def _text(r: random.Random, lo: int, hi: int) -> str:
    n = r.randint(lo, hi)
    if r.random() < 0.8:
        return "".join(r.choices(_PRINTABLE, k=n))
    return "".join(r.choices(_PRINTABLE + _EXTRA_CHARS, k=n))


def _json(r: random.Random, depth: int = 0) -> Any:
    k = r.randrange(7 if depth < 2 else 5)
    if k == 0:
        return None
    if k == 1:
        return r.random() < 0.5
    if k == 2:
        return r.randint(-1000, 10**6)
    if k == 3:
        return round(r.uniform(-1e6, 1e6), 3)
    if k == 4:
        return _text(r, 0, 10)
    if k == 5:
        return [_json(r, depth + 1) for _ in range(r.randint(0, 3))]
    return {_text(r, 1, 6): _json(r, depth + 1) for _ in range(r.randint(0, 3))}


class Sampler:
    """`Sampler(compiler).sample("message.json", rng)`: one valid document.

    The source is a `Compiler` or, to sample without importing hypothesis, a
    `plain.Plain`. `route` steers sampling as the compiler's does: `(loc, "property",
    name)` makes that property present, `(loc, "items", "")` that array non-empty,
    `(loc, "branch", branch_loc)` picks that union branch when it can be built."""

    def __init__(
        self,
        compiler: Source,
        *,
        extras: float = 0.1,
        optional: float = 0.5,
        route: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        self.c = compiler
        self.extras = extras
        self.optional = optional
        self._route_props: dict[str, set[str]] = {}
        self._route_arrays: set[str] = set()
        self._route_branches: dict[str, str] = {}
        for loc, kind, key in route:
            if kind == "property":
                self._route_props.setdefault(loc, set()).add(key)
            elif kind == "items":
                self._route_arrays.add(loc)
            elif kind == "branch":
                self._route_branches[loc] = key
        self._regex: dict[str, _Regex] = {}
        self._words: dict[str, tuple[str, ...]] = {}
        self._checks: dict[str, Callable[[Any], bool]] = {}
        self._oracles: dict[str, Callable[[Any], bool]] = {}
        self._registry: Any = None

    def sample(self, root: str, r: random.Random) -> Any:
        node = self.c.node(root)
        for _ in range(50):
            try:
                return self._node(node, r, ())
            except _Impossible:
                continue
        raise UnsupportedSchema(node.loc, "could not sample a finite document within the recursion bound")

    def value(self, node: Node, r: random.Random) -> Any:
        """One value `node` accepts (on its own, out of any document), or None when
        none was found within the recursion bound."""
        for _ in range(10):
            try:
                return self._node(node, r, ())
            except _Impossible:
                continue
        return None

    def _node(self, n: Node, r: random.Random, stack: tuple[Node, ...]) -> Any:
        if sum(1 for x in stack if x is n) > self.c.max_recursion + 1:
            raise _Impossible
        stack = (*stack, n)
        if n.never:
            raise _Impossible
        if n.union is not None:
            branches = list(n.union)
            r.shuffle(branches)
            chosen = self._route_branches.get(n.loc)
            branches.sort(key=lambda b: b.loc != chosen)  # the routed branch first (a stable sort)
            for b in branches:
                try:
                    v = self._node(b, r, stack)
                except _Impossible:
                    continue
                if n.one_of is not None and not disjoint(n) and not self._exactly_one(n, v):
                    continue
                return v
            raise _Impossible
        if n.enum is not None:
            return r.choice(n.enum)
        types = sorted(n.types) if n.types is not None else list(JSON_TYPES)
        t = r.choice(types)
        if t == "null":
            return None
        if t == "boolean":
            return r.random() < 0.5
        if t in ("integer", "number"):
            return self._number(n, r, t)
        if t == "string":
            return self._string(n, r)
        if t == "array":
            return self._array(n, r, stack)
        return self._object(n, r, stack)

    def _exactly_one(self, n: Node, v: Any) -> bool:
        assert n.union is not None
        if self._registry is None:
            self._registry = oracle_registry(*self.c.sets)
        hits = 0
        for b in n.union:
            check = self._oracles.get(b.loc)
            if check is None:
                check = self._oracles[b.loc] = oracle_for({"$ref": b.loc}, registry=self._registry).is_valid
            hits += bool(check(v))
        return hits == 1

    def _number(self, n: Node, r: random.Random, t: str) -> int | float:
        lo = n.minimum if n.minimum is not None else -SAFE_INT
        hi = n.maximum if n.maximum is not None else SAFE_INT
        if n.exclusive_minimum is not None:
            lo = max(lo, n.exclusive_minimum + (1 if t == "integer" else 1e-9))
        if n.exclusive_maximum is not None:
            hi = min(hi, n.exclusive_maximum - (1 if t == "integer" else 1e-9))
        if n.multiple_of is not None:
            m = n.multiple_of
            k = r.randint(math.ceil(lo / m), math.floor(hi / m))
            v = k * m
            return int(v) if float(v).is_integer() else v
        ilo, ihi = math.ceil(lo), math.floor(hi)
        if t == "integer" or r.random() < 0.5:
            if ilo > ihi:
                raise _Impossible
            # small values mostly, the bounds sometimes
            x = r.random()
            if x < 0.1:
                return ilo
            if x < 0.2:
                return ihi
            return r.randint(max(ilo, -10_000), min(ihi, 10**9)) if max(ilo, -10_000) <= min(ihi, 10**9) else ilo
        v = r.uniform(lo, hi)
        return v if lo <= v <= hi else lo

    def _string(self, n: Node, r: random.Random) -> str:
        check = self._checks.get(n.loc)
        if check is None:
            check = self._checks[n.loc] = string_check(n)
            vocabulary = () if n.format in _FORMATS else (*self.c.dictionary, *self.c.focus)
            self._words[n.loc] = tuple(w for w in vocabulary if check(w))
        words = self._words[n.loc]
        if words and r.random() < 0.15:
            return r.choice(words)
        lo, hi = n.min_length, n.max_length
        for _ in range(40):
            if n.format in _FORMATS:
                s = _FORMATS[n.format](r)
            elif n.pattern is not None:
                rx = self._regex.get(n.pattern)
                if rx is None:
                    rx = self._regex[n.pattern] = _Regex(n.pattern)
                s = rx.sample(r)
            else:
                top = hi if hi is not None else max(lo, 40)
                s = _text(r, lo, min(top, lo + 60)) if r.random() < 0.95 else "a" * top
            if check(s):
                return s
        raise _Impossible

    def _array(self, n: Node, r: random.Random, stack: tuple[Node, ...]) -> list[Any]:
        lo = max(n.min_items, 1) if n.loc in self._route_arrays else n.min_items
        hi = n.max_items if n.max_items is not None else max(lo, 4)
        size = r.randint(lo, max(lo, min(hi, lo + 4)))
        out: list[Any] = []
        seen: set[Any] = set()
        for i in range(size):
            item: Node | bool = n.prefix_items[i] if i < len(n.prefix_items) else n.items
            if item is False:
                break
            try:
                v = _json(r) if item is True else self._node(item, r, stack)
            except _Impossible:
                if len(out) >= n.min_items:
                    break
                raise
            if n.unique_items:
                k = json_key(v)
                if k in seen:
                    continue
                seen.add(k)
            out.append(v)
        if len(out) < n.min_items:
            raise _Impossible
        return out

    def _object(self, n: Node, r: random.Random, stack: tuple[Node, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        wanted = n.required | self._route_props.get(n.loc, set())
        for k, sub in n.properties.items():
            if k in wanted:
                out[k] = self._node(sub, r, stack)
            elif r.random() < self.optional:
                with contextlib.suppress(_Impossible):
                    out[k] = self._node(sub, r, stack)
        for k in sorted(wanted - out.keys()):
            if n.additional is False:
                raise _Impossible
            out[k] = _json(r) if n.additional is True else self._node(n.additional, r, stack)
        if n.additional is not False and self.c.extras and r.random() < self.extras:
            key = _text(r, 1, 8)
            if key not in n.properties and n.property_names is None:
                out[key] = _json(r) if n.additional is True else self._node(n.additional, r, stack)
        for k, deps in n.dependent_required.items():
            if k in out and any(d not in out for d in deps):
                raise _Impossible
        if len(out) < n.min_properties or (n.max_properties is not None and len(out) > n.max_properties):
            raise _Impossible
        return out
