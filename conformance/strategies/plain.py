"""What the hypothesis compiler and the seeded sampler share, without hypothesis.

`Plain(schemas)` is the schema graph and vocabulary the sampler reads (the same
attributes a `Compiler` has), so a caller that only samples (`turnspec schema diff`)
never imports hypothesis: it costs a few hundred milliseconds to import, more than a
whole diff of a small schema.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from referencing import Registry

from ..core.schema_validation import ecma_regex
from ..core.schemas import SchemaSet
from .ir import Node, SchemaGraph, branch_tag

# RFC 7493 (I-JSON) §2.2: integers outside ±(2**53 - 1) are not interoperable, and
# orjson refuses integers wider than 64 bits; unbounded integer schemas stay inside.
SAFE_INT = 2**53 - 1
EXTRA_KEY = "x_extra"  # the key generated for an unknown field where a content model is open
# one value of each JSON type
SAMPLE_OF_TYPE: dict[str, Any] = {
    "null": None,
    "boolean": True,
    "integer": 7,
    "number": 0.5,
    "string": "x",
    "array": [],
    "object": {},
}


def dictionary_of(*sets: SchemaSet) -> tuple[str, ...]:
    """String constants, enum members and property names found in schema sets."""
    out: dict[str, None] = {}

    def visit(x: Any) -> None:
        if isinstance(x, dict):
            for k, v in x.items():
                if k in ("const", "enum"):
                    for e in v if k == "enum" and isinstance(v, list) else [v]:
                        if isinstance(e, str):
                            out[e] = None
                elif k in ("properties", "dependentRequired") and isinstance(v, dict):
                    out.update(dict.fromkeys(v))
                elif k == "required" and isinstance(v, list):
                    out.update(dict.fromkeys(x for x in v if isinstance(x, str)))
                if k not in ("description", "title", "$comment", "$id", "$schema"):
                    visit(v)
        elif isinstance(x, list):
            for e in x:
                visit(e)

    for s in sets:
        for doc in s.documents.values():
            visit(doc)
    return tuple(out)


def string_check(n: Node) -> Callable[[Any], bool]:
    """True for a string `n`'s length bounds and pattern (ECMA reading) accept."""
    lo, hi, pat = n.min_length, n.max_length, n.pattern
    rx = ecma_regex(pat) if pat is not None else None

    def check(s: Any) -> bool:
        return (
            isinstance(s, str)
            and len(s) >= lo
            and (hi is None or len(s) <= hi)
            and (rx is None or rx.search(s) is not None)
        )

    return check


def disjoint(n: Node) -> bool:
    """True when every branch of a union is selected by a distinct discriminator const."""
    if n.discriminator is None or n.union is None:
        return False
    tags = [branch_tag(b, n.discriminator) for b in n.union]
    return None not in tags and len({repr(t) for t in tags}) == len(tags)


class Plain:
    """The schema graph and vocabulary of one set (with `extra` sets for cross-set
    `$ref`s), as the sampler reads them: `dictionary` holds the set's own words,
    `focus` the given words it lacks (drawn as often: a newer revision's vocabulary is
    the boundary a caller looks for)."""

    def __init__(
        self,
        schemas: SchemaSet,
        *extra: SchemaSet,
        registry: Registry[Any] | None = None,
        graph: SchemaGraph | None = None,
        max_recursion: int = 1,
        dictionary: Iterable[str] = (),
        extras: bool = True,
    ) -> None:
        self.graph = graph or SchemaGraph(schemas, *extra, registry=registry)
        self.schemas = schemas
        self.sets = (schemas, *extra)
        self.max_recursion = max_recursion
        self.dictionary = dictionary_of(schemas, *extra)
        own = set(self.dictionary)
        self.focus = tuple(w for w in dict.fromkeys(dictionary) if w not in own)
        self.extras = extras

    def node(self, root: str) -> Node:
        return self.graph.root(root)


class Source(Protocol):
    """What the sampler reads of a `Plain` or a `Compiler`."""

    sets: tuple[SchemaSet, ...]
    max_recursion: int
    dictionary: tuple[str, ...]
    focus: tuple[str, ...]
    extras: bool

    def node(self, root: str) -> Node: ...
