"""Witnesses for `turnspec schema diff`: per change, a document that shows that very change.

A witness for a direction that fails is a document one revision accepts and the other
rejects. It is built, not hunted for:

1. a *base*: a document both revisions accept that reaches the change (sampled from
   either side, steered along the change's route: that property present, that array
   non-empty, that union branch chosen);
2. one edit at the change's place, chosen from what changed: a value past the new bound,
   the enum member that was removed, the required field taken out, an unknown key on an
   object that was closed, a value of the branch that was added, a word of the other
   revision's vocabulary (an unknown block typed `audio`), then values sampled from the
   accepting side's schema there and values other sampled documents hold there.

Since both revisions accept the base and the witness differs from it at one place only,
the rejection is that change's, and each change gets its own witness. A witness is
then shrunk (keys and items dropped) while it still shows the same thing: the accepting
side accepts it, the rejecting side rejects it, and with the edited place put back both
accept it.

When no base exists (a field renamed on a closed object: no document has both names
right), a sampled document of the accepting side that the other rejects near the change
is taken instead, and the evidence says it meets other changes too. When nothing is
found within the budget (`--examples` documents), the direction is taken to hold and
labelled as not a proof.

Sampling uses the seeded sampler (`conformance.strategies.sampler`), not hypothesis: a
witness is found in a few dozen documents, and hypothesis costs more to import than a
small diff takes. Seeds derive from the route, so the same schemas give the same
witnesses on every run; documents sampled for one change are kept and serve the next.
"""

from __future__ import annotations

import copy
import json
import math
import random
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..core import pointers
from ..core.schema_validation import SchemaError, SchemaValidator
from ..core.schemas import SchemaSet
from ..strategies.ir import JSON_TYPES, Node, SchemaGraph, UnsupportedSchema, json_equal, json_key
from ..strategies.plain import EXTRA_KEY, SAFE_INT, SAMPLE_OF_TYPE, Plain, string_check
from ..strategies.sampler import Sampler

Route = tuple[tuple[str, str, str], ...]
Path = tuple[str | int, ...]
Schema = Node | bool | None  # a node, a boolean schema, or nothing there (None)

DELETE: Any = object()  # the edit that removes a key
SHRINK_TRIALS = 300  # validations spent shrinking one witness
LOOSE_ERRORS = 12  # rejected sampled documents whose errors are read, per direction
SMALL_VALUES: tuple[Any, ...] = (0, "x", None, True, [], {}, 0.5, -1)

# what a change's kind says about where the witness edits and what it puts there
_NUMERIC = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
_LENGTH = frozenset({"minLength", "maxLength"})
_ITEMS = frozenset({"minItems", "maxItems"})
_SIZE = frozenset({"minProperties", "maxProperties"})
_KEYED = frozenset({"property-added", "property-removed"})
_REQUIRED = frozenset({"required-added", "required-removed"})
_REST = frozenset({"closed", "opened", "additional-changed"})


@dataclass(frozen=True)
class Witness:
    """A document the accepting side accepts and the rejecting side rejects; `place`
    (a pointer) is where it was edited, `errors` what the rejecting side says, and
    `isolated` is False for a sampled document that meets other changes too."""

    document: Any
    place: str
    errors: tuple[SchemaError, ...]
    isolated: bool

    def describe(self, limit: int = 2) -> str:
        said = "; ".join(f"{e.pointer or '/'}: {e.message}" for e in self.errors[:limit])
        more = f" (and {len(self.errors) - limit} more)" if len(self.errors) > limit else ""
        return said + more


class Side:
    """One revision of one root: its validator and sampler, and the documents sampled so
    far per route (every change of the root draws on them)."""

    def __init__(self, schemas: SchemaSet, root: str, graph: SchemaGraph, words: tuple[str, ...]) -> None:
        self.validator = SchemaValidator(schemas, root)
        self.root = root
        self.source = Plain(schemas, graph=graph, dictionary=words)
        self._pools: dict[Route, list[Any]] = {}
        self._samplers: dict[Route, tuple[Sampler, Sampler, random.Random] | None] = {}
        self._values: dict[int, list[Any]] = {}

    def accepts(self, doc: Any) -> bool:
        return self.validator.is_valid(doc)

    def document(self, route: Route, i: int) -> Any:
        """The `i`-th document sampled along `route` (None when the schema has no more):
        lean ones (no optional field, no unknown key) and rich ones, alternately."""
        pool = self._pools.setdefault(route, [])
        while len(pool) <= i:
            if route not in self._samplers:
                seed = zlib.crc32(json.dumps([self.root, list(route)]).encode())
                self._samplers[route] = (
                    Sampler(self.source, extras=0.0, optional=0.0, route=route),
                    Sampler(self.source, route=route),
                    random.Random(seed),
                )
            samplers = self._samplers[route]
            if samplers is None:
                return None
            lean, rich, r = samplers
            try:
                pool.append((lean if len(pool) % 2 == 0 else rich).sample(self.root, r))
            except UnsupportedSchema:  # no finite document within the recursion bound
                self._samplers[route] = None
                return None
        return pool[i]

    def values(self, node: Node, k: int = 6) -> list[Any]:
        """Up to `k` values `node` accepts on its own (sampled once, then kept)."""
        got = self._values.get(id(node))  # by identity: a merged branch shares its branch's loc
        if got is None:
            r = random.Random(zlib.crc32(node.loc.encode()))
            sampler = Sampler(self.source, extras=0.0, optional=0.0)
            got = _unique(v for v in (sampler.value(node, r) for _ in range(k)) if v is not None)
            self._values[id(node)] = got
        return got[:k]

    def words(self) -> tuple[str, ...]:
        return (*self.source.dictionary, *self.source.focus)


@dataclass
class Change:
    """What `find` needs of one change: its kind, its pointer (instance path, `*` for
    any item or other property) and the schema each side has there."""

    kind: str
    pointer: str
    accepting: Schema
    rejecting: Schema


class _Budget:
    def __init__(self, n: int) -> None:
        self.left, self.used = n, 0

    def take(self) -> bool:
        if self.left <= 0:
            return False
        self.left -= 1
        self.used += 1
        return True


def find(
    change: Change, accepts: Side, rejects: Side, routes: tuple[Route, Route], examples: int
) -> tuple[Witness | None, int]:
    """A witness that `accepts` takes and `rejects` refuses because of `change`, and how
    many documents were tried (at most `examples`)."""
    budget = _Budget(examples)
    loose: list[Any] = []
    tokens = _tokens(change.pointer)
    i = 0
    while budget.left > 0:
        drawn = [(accepts, routes[0]), (rejects, routes[1])] + ([(accepts, ())] if i % 4 == 3 else [])
        docs = [(side, side.document(route, i)) for side, route in drawn]
        docs = [(side, d) for side, d in docs if d is not None]
        if not docs:
            break
        for side, doc in docs:
            if not budget.take():
                break
            ok_a = side is accepts or accepts.accepts(doc)
            ok_r = side is rejects or rejects.accepts(doc)
            if ok_a and ok_r:
                found = _from_base(change, tokens, doc, accepts, rejects, budget)
                if found is not None:
                    return found, budget.used
            elif ok_a and len(loose) < LOOSE_ERRORS:
                loose.append(doc)
        i += 1
    for doc in loose:
        errors = tuple(rejects.validator.errors(doc))
        if errors and any(_near(change.pointer, e.pointer) for e in errors):
            isolated = all(_at(tokens, _tokens(e.pointer)) for e in errors)
            return Witness(doc, change.pointer, errors, isolated), budget.used
    return None, budget.used


def _from_base(
    change: Change, tokens: list[str], base: Any, accepts: Side, rejects: Side, budget: _Budget
) -> Witness | None:
    for path in _places(change.kind, tokens, base):
        old = _get(base, path)
        for value in _candidates(change, path, base, accepts, rejects):
            if value is not DELETE and old is not _ABSENT and json_equal(value, old):
                continue
            if not budget.take():
                return None
            doc = _put(base, path, value)
            if accepts.accepts(doc) and not rejects.accepts(doc):
                doc = _shrink(doc, path, old, accepts, rejects)
                return Witness(doc, pointers.pointer(path), tuple(rejects.validator.errors(doc)), isolated=True)
    return None


# -- where to edit -----------------------------------------------------------------


def _tokens(pointer: str) -> list[str]:
    return [pointers.unescape(t) for t in pointer.split("/")[1:]] if pointer not in ("", "/") else []


def _match(doc: Any, tokens: list[str], path: Path = ()) -> Iterator[Path]:
    """Concrete paths of `doc` the pattern `tokens` names (`*`: any item or key)."""
    if not tokens:
        yield path
        return
    head, rest = tokens[0], tokens[1:]
    if isinstance(doc, dict):
        keys: list[str | int] = list(doc) if head == "*" else [head] if head in doc else []
    elif isinstance(doc, list):
        keys = list(range(len(doc))) if head == "*" else [int(head)] if head.isdigit() and int(head) < len(doc) else []
    else:
        return
    for k in keys:
        yield from _match(doc[k], rest, (*path, k))


def _places(kind: str, tokens: list[str], base: Any) -> Iterator[Path]:
    """Where in `base` the edit for a change of `kind` at `tokens` goes."""
    if not tokens:
        yield ()
        return
    holder, last = tokens[:-1], tokens[-1]
    for h in _match(base, holder):
        container = _get(base, h)
        if kind in _REST or (last == "*" and isinstance(container, dict)):
            if isinstance(container, dict):
                yield (*h, next(k for k in (EXTRA_KEY, *(f"{EXTRA_KEY}{i}" for i in range(9))) if k not in container))
            continue
        if isinstance(container, list):
            if last == "*":
                yield from ((*h, j) for j in range(len(container) + 1))
            elif last.isdigit() and int(last) <= len(container):
                yield (*h, int(last))
        elif isinstance(container, dict) and (kind not in _REQUIRED or last in container):
            yield (*h, last)


# -- what to put there ---------------------------------------------------------------


def _candidates(change: Change, path: Path, base: Any, accepts: Side, rejects: Side) -> Iterator[Any]:
    """Values for the edit, the ones the change's kind points at first, then generic ones."""
    a, r = change.accepting, change.rejecting
    kind = change.kind
    label = kind.rsplit("-", 1)[0]
    current = _get(base, path)
    if kind in _REQUIRED:
        yield DELETE
        return
    if isinstance(a, Node) and isinstance(r, Node):
        if label in _NUMERIC:
            yield from _numbers(a, r)
        elif label in _LENGTH:
            yield from _strings(a, r, current)
        elif label in _ITEMS or label.startswith("uniqueItems"):
            yield from _arrays(a, current, accepts)
        elif label in _SIZE:
            yield from _objects(a, r, current, accepts)
        elif label.startswith(("enum", "const")) and a.enum is not None:
            yield from (v for v in a.enum if r.enum is None or not any(json_equal(v, x) for x in r.enum))
        elif label.startswith("type"):
            yield from (SAMPLE_OF_TYPE[t] for t in JSON_TYPES if a.allows(t) and not r.allows(t))
        elif label.startswith("pattern"):
            check_a, check_r = string_check(a), string_check(r)
            yield from (w for w in accepts.words() if check_a(w) and not check_r(w))
    if isinstance(a, Node):
        yield from accepts.values(a)
    elif a is True or a is None:
        yield from SMALL_VALUES
    if isinstance(r, Node):
        yield from _violating(r)
    for i in range(4):  # what documents sampled there hold
        doc = accepts.document((), i)
        if doc is not None and _get(doc, path) is not _ABSENT:
            yield _get(doc, path)


def _numbers(a: Node, r: Node) -> Iterator[Any]:
    """Numbers around every bound either side has, integers first."""
    bounds = [
        x
        for n in (r, a)
        for x in (n.minimum, n.maximum, n.exclusive_minimum, n.exclusive_maximum, n.multiple_of)
        if x is not None
    ]
    out: list[Any] = []
    for x in bounds:
        for v in (x, x + 1, x - 1, math.floor(x), math.ceil(x), x + 0.5, x - 0.5, 2 * x, 3 * x, x / 2):
            if math.isfinite(v):
                out.append(int(v) if float(v).is_integer() and abs(v) <= SAFE_INT else v)
    yield from _unique([*out, 0, 1, -1, SAFE_INT, -SAFE_INT])


def _strings(a: Node, r: Node, current: Any) -> Iterator[str]:
    """Strings one past, and at, every length bound, made of the current value's text."""
    seed = current if isinstance(current, str) and current else "a"
    lengths = sorted({
        k for n in (r, a) for x in (n.min_length or None, n.max_length) if x is not None for k in (x - 1, x, x + 1)
        if 0 <= k <= 100_000
    })  # fmt: skip
    for k in lengths:
        yield (seed * (k // len(seed) + 1))[:k]
        yield "a" * k


def _arrays(a: Node, current: Any, accepts: Side) -> Iterator[list[Any]]:
    """The current array trimmed, grown by repeating an item, and with a duplicate."""
    items = list(current) if isinstance(current, list) else []
    item: Any = items[0] if items else None
    if item is None and isinstance(a.items, Node):
        got = accepts.values(a.items, 1)
        item = got[0] if got else None
    if item is None:
        item = 0
    bounds = [x for x in (a.min_items or None, a.max_items) if x is not None]
    for k in sorted({k for x in bounds for k in (x - 1, x, x + 1) if 0 <= k <= 10_000} | {0, 1, 2}):
        yield (items + [copy.deepcopy(item) for _ in range(max(0, k - len(items)))])[:k]
    yield [*items, copy.deepcopy(item)] if items else [item, copy.deepcopy(item)]


def _objects(a: Node, r: Node, current: Any, accepts: Side) -> Iterator[dict[str, Any]]:
    """The current object with keys dropped, or grown with unknown keys."""
    obj = dict(current) if isinstance(current, dict) else {}
    for n in (r, a):
        for x in (n.min_properties or None, n.max_properties):
            if x is None:
                continue
            for k in (x - 1, x, x + 1):
                if 0 <= k <= len(obj):
                    yield dict(list(obj.items())[:k])
                elif k <= 1000:
                    extra = {f"{EXTRA_KEY}{i}": 0 for i in range(k - len(obj))}
                    yield {**obj, **extra}


def _violating(n: Node) -> Iterator[Any]:
    """Values `n` rejects, one reason each (the wrong type, outside the enum, past a bound)."""
    yield from (SAMPLE_OF_TYPE[t] for t in JSON_TYPES if not n.allows(t))
    if n.enum is not None:
        yield from ("x", "", 0, f"not-{json.dumps(n.enum[0])[:20]}")
    for x in (n.minimum, n.exclusive_minimum):
        if x is not None:
            yield from (x - 1, x)
    for x in (n.maximum, n.exclusive_maximum):
        if x is not None:
            yield from (x + 1, x)
    if n.max_length is not None:
        yield "a" * (n.max_length + 1)
    if n.min_length:
        yield "a" * (n.min_length - 1)
    if n.pattern is not None:
        yield from ("", " ", "~")
    if n.required or n.additional is False:
        yield {}
        yield {EXTRA_KEY: 0}


def _unique(values: Any) -> list[Any]:
    seen: set[Any] = set()
    out: list[Any] = []
    for v in values:
        k = json_key(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


# -- documents ------------------------------------------------------------------------

_ABSENT: Any = object()


def _get(doc: Any, path: Path) -> Any:
    for p in path:
        if not _holds(doc, p):
            return _ABSENT
        doc = doc[p]
    return doc


def _holds(doc: Any, key: str | int) -> bool:
    if isinstance(doc, dict):
        return key in doc
    return isinstance(doc, list) and isinstance(key, int) and key < len(doc)


def _put(doc: Any, path: Path, value: Any) -> Any:
    """A copy of `doc` with `value` at `path` (appended at an array's end; DELETE or
    _ABSENT removes the key or item)."""
    if not path:
        return copy.deepcopy(value)
    out = copy.deepcopy(doc)
    parent = _get(out, path[:-1])
    key = path[-1]
    if value is DELETE or value is _ABSENT:
        if isinstance(parent, dict):
            parent.pop(key, None)
        elif isinstance(key, int) and key < len(parent):
            del parent[key]
    elif isinstance(parent, list) and isinstance(key, int) and key == len(parent):
        parent.append(copy.deepcopy(value))
    else:
        parent[key] = copy.deepcopy(value)
    return out


def _shrink(doc: Any, place: Path, old: Any, accepts: Side, rejects: Side) -> Any:
    """Greedy delta debugging: drop keys and items beside `place` while the document
    still shows the same thing (see the module docstring)."""

    def fits(d: Any) -> bool:
        if not accepts.accepts(d) or rejects.accepts(d):
            return False
        back = _put(d, place, old)
        return accepts.accepts(back) and rejects.accepts(back)

    trials = SHRINK_TRIALS
    changed = True
    while changed and trials > 0:  # drop keys and items
        changed = False
        for path in list(_paths(doc)):
            if not _beside(path, place):
                continue
            trials -= 1
            trial = _put(doc, path, DELETE)
            if fits(trial):
                doc, changed = trial, True
                break
            if trials <= 0:
                break
    for path in list(_paths(doc)):  # then shorten the strings and numbers left beside it
        value = _get(doc, path)
        if trials <= 0 or not _beside(path, place):
            continue
        for simpler in _simpler(value):
            trials -= 1
            trial = _put(doc, path, simpler)
            if fits(trial):
                doc = trial
                break
    return doc


def _simpler(value: Any) -> Iterator[Any]:
    """Smaller values of the same type: an empty or short string, a small number."""
    if isinstance(value, str) and len(value) > 1:
        yield from dict.fromkeys(("", value[:1], value[:4], value[:12]))
    elif isinstance(value, int | float) and not isinstance(value, bool) and value not in (0, 1):
        yield from (0, 1)


def _beside(path: Path, place: Path) -> bool:
    """True when deleting `path` leaves `place` where it is (not an ancestor of it, nor
    an item before it in one of its arrays)."""
    if place[: len(path)] == path:
        return False
    k = len(path) - 1
    mine, theirs = path[k], place[k] if k < len(place) else None
    if path[:k] == place[:k] and isinstance(mine, int) and isinstance(theirs, int):
        return mine > theirs
    return True


def _paths(doc: Any, base: Path = ()) -> Iterator[Path]:
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield (*base, k)
            yield from _paths(v, (*base, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield (*base, i)
            yield from _paths(v, (*base, i))


def _at(change: list[str], error: list[str]) -> bool:
    """True when an error lies at the change's place or inside it (`*` matches any token)."""
    return len(error) >= len(change) and all(c in ("*", e) for c, e in zip(change, error, strict=False))


def _near(change: str, error: str) -> bool:
    """An error is near a change when it lies inside the object that holds the change."""
    parts = change.strip("/").split("/")[:-1] if change != "/" else []
    eparts = error.strip("/").split("/") if error not in ("", "/") else []
    if len(eparts) < len(parts):
        return False
    return all(p == "*" or p == e for p, e in zip(parts, eparts, strict=False))
