"""`turnspec schema diff OLD NEW`: how compatible are two schema revisions?

Each change is classified the way Confluent Schema Registry and `buf breaking` do:

- BACKWARD: new readers read old data (every document OLD accepts, NEW accepts);
- FORWARD: old readers read new data (every document NEW accepts, OLD accepts);
- FULL: both; BREAKING: neither.

The overall verdict is the weakest class over all changes (BACKWARD and FORWARD
together are BREAKING). Every answer carries evidence, per direction:

- `structure`: a proof from the schemas' shape, for the directions a change cannot
  break (a relaxed maxLength keeps every old string valid). Content models matter:
  adding an optional property keeps new readers reading old data only where the old
  object was closed (`additionalProperties: false`); on an open object old data may
  already hold that name with any value.
- `witness`: a document one side accepts and the other rejects because of that very
  change (`conformance.schema.witness`): a document both sides accept with one edit at
  the change's place, such as a value past the new bound or the field that became
  required taken out; the evidence quotes what the rejecting side says there
  (`/age: 151 violates maximum 150`). Where no document satisfies both sides (a field
  renamed on a closed object), a sampled document is taken and said to meet other
  changes too.
- `fuzz`: where the shape alone cannot prove a direction and no witness turned up in
  `--examples` documents, the direction is taken to hold, and the evidence says how
  many documents were tried. That is not a proof, and it is labelled as such.

Changes are compared node by node, `$ref`s resolved, union branches matched by their
discriminator value (or title, or position); a `oneOf` whose branches are not told
apart by a discriminator is never proved by structure. Recursive schemas (a tree's
`"$ref": "#"`, files or definitions holding each other) are compared node pair by node
pair, each pair once, so a cycle closes on the pair already compared; a `$ref` cycle
that never descends into the document cannot be evaluated by any validator and is a
located one-line error (see `conformance.strategies.ir`).
"""

from __future__ import annotations

import enum
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema_rs

from ..core import pointers
from ..core.errors import InputError
from ..core.findings import Finding, Severity
from ..core.jsonio import check_input
from ..core.outputs import real
from ..core.schemas import SchemaSet, load_set
from ..strategies.ir import (
    Node,
    SchemaGraph,
    UnsupportedSchema,
    branch_tag,
    json_equal,
    union_discriminator,
)
from ..strategies.plain import dictionary_of
from . import witness
from .diff_rules import SD_BACKWARD, SD_BREAKING, SD_FORWARD
from .witness import Schema, Side


class Compat(enum.StrEnum):
    FULL = "FULL"
    BACKWARD = "BACKWARD"
    FORWARD = "FORWARD"
    BREAKING = "BREAKING"

    @staticmethod
    def of(backward: bool, forward: bool) -> Compat:
        if backward and forward:
            return Compat.FULL
        if backward:
            return Compat.BACKWARD
        return Compat.FORWARD if forward else Compat.BREAKING

    @property
    def backward(self) -> bool:
        return self in (Compat.FULL, Compat.BACKWARD)

    @property
    def forward(self) -> bool:
        return self in (Compat.FULL, Compat.FORWARD)


def weakest(classes: list[Compat]) -> Compat:
    return Compat.of(all(c.backward for c in classes), all(c.forward for c in classes))


@dataclass
class Evidence:
    """Why one direction holds or fails."""

    holds: bool
    by: str  # "structure" | "witness" | "fuzz"
    detail: str
    witness: Any = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"holds": self.holds, "by": self.by, "detail": self.detail}
        if self.by == "witness":
            out["witness"] = self.witness
        return out


@dataclass
class Change:
    root: str
    pointer: str
    kind: str
    detail: str
    backward: Evidence | None = None  # None until decided
    forward: Evidence | None = None
    # structural claims: None = the shape alone cannot prove the direction
    proof_backward: str | None = None
    proof_forward: str | None = None
    # how to reach the change in each schema (see Compiler's `route`)
    route_old: tuple[tuple[str, str, str], ...] = ()
    route_new: tuple[tuple[str, str, str], ...] = ()
    # the schema each side has at the change (None: nothing there), for its witnesses
    old_node: Schema = None
    new_node: Schema = None

    @property
    def compat(self) -> Compat:
        assert self.backward is not None and self.forward is not None
        return Compat.of(self.backward.holds, self.forward.holds)

    def as_dict(self) -> dict[str, Any]:
        assert self.backward is not None and self.forward is not None
        return {
            "pointer": self.pointer,
            "kind": self.kind,
            "class": str(self.compat),
            "evidence": {
                "root": self.root,
                "detail": self.detail,
                "backward": self.backward.as_dict(),
                "forward": self.forward.as_dict(),
            },
        }


@dataclass
class DiffResult:
    changes: list[Change] = field(default_factory=list)

    @property
    def verdict(self) -> Compat:
        return weakest([c.compat for c in self.changes])

    def as_dict(self) -> dict[str, Any]:
        return {"verdict": str(self.verdict), "changes": [c.as_dict() for c in self.changes]}


# -- structural comparison ---------------------------------------------------------


def _ptr(base: str, token: str) -> str:
    return f"{base}/{pointers.token(token)}"


class _Walker:
    def __init__(self, root: str) -> None:
        self.root = root
        self.changes: list[Change] = []
        self._seen: set[tuple[int, int]] = set()
        self._old: list[tuple[str, str, str]] = []
        self._new: list[tuple[str, str, str]] = []

    def add(
        self,
        pointer: str,
        kind: str,
        detail: str,
        backward: str | None,
        forward: str | None,
        nodes: tuple[Schema, Schema] = (None, None),
    ) -> None:
        self.changes.append(
            Change(
                self.root,
                pointer or "/",
                kind,
                detail,
                proof_backward=backward,
                proof_forward=forward,
                route_old=tuple(self._old),
                route_new=tuple(self._new),
                old_node=nodes[0],
                new_node=nodes[1],
            )
        )

    def _via(self, old: tuple[str, str, str] | None, new: tuple[str, str, str] | None) -> _Step:
        return _Step(self, old, new)

    def compare(self, old: Node, new: Node, ptr: str) -> None:
        key = (id(old), id(new))
        if key in self._seen:
            return
        self._seen.add(key)
        if old.never != new.never:
            if new.never:
                self.add(
                    ptr,
                    "became-false",
                    "the new schema accepts nothing here",
                    None,
                    "new accepts nothing",
                    (old, new),
                )
            else:
                self.add(
                    ptr,
                    "became-satisfiable",
                    "the old schema accepted nothing here",
                    "old accepted nothing",
                    None,
                    (old, new),
                )
            return
        if old.union is not None or new.union is not None:
            self._unions(old, new, ptr)
            return
        self._scalars(old, new, ptr)
        self._arrays(old, new, ptr)
        self._objects(old, new, ptr)

    # unions -----------------------------------------------------------------------

    def _unions(self, old: Node, new: Node, ptr: str) -> None:
        ob = old.union if old.union is not None else [old]
        nb = new.union if new.union is not None else [new]
        od, nd = union_discriminator(old), union_discriminator(new)
        disjoint = (old.one_of is None or od is not None) and (new.one_of is None or nd is not None)

        def key(b: Node, i: int, disc: str | None) -> Any:
            if disc is not None:
                tag = branch_tag(b, disc)
                if tag is not None:
                    return ("tag", json.dumps(tag))
            if b.title:
                return ("title", b.title)
            return ("index", i)

        okeys = {key(b, i, od): b for i, b in enumerate(ob)}
        nkeys = {key(b, i, nd): b for i, b in enumerate(nb)}
        for k, b in okeys.items():
            if k in nkeys:
                with self._via(
                    (old.loc, "branch", b.loc) if old.union else None,
                    (new.loc, "branch", nkeys[k].loc) if new.union else None,
                ):
                    self.compare(b, nkeys[k], ptr)
            else:
                with self._via((old.loc, "branch", b.loc) if old.union else None, None):
                    self.add(
                        ptr,
                        "branch-removed",
                        f"union branch {_name(b)} removed",
                        None,
                        "every branch of the new union is a branch of the old one" if disjoint else None,
                        (b, None),
                    )
        for k, b in nkeys.items():
            if k not in okeys:
                with self._via(None, (new.loc, "branch", b.loc) if new.union else None):
                    self.add(
                        ptr,
                        "branch-added",
                        f"union branch {_name(b)} added",
                        "every branch of the old union is a branch of the new one" if disjoint else None,
                        None,
                        (None, b),
                    )

    # scalars ----------------------------------------------------------------------

    def _scalars(self, old: Node, new: Node, ptr: str) -> None:
        ot, nt = old.types, new.types
        if ot != nt:
            widened = nt is None or (ot is not None and set(ot) <= set(nt) | ({"integer"} if "number" in nt else set()))
            narrowed = ot is None or (
                nt is not None and set(nt) <= set(ot) | ({"integer"} if "number" in ot else set())
            )
            self.add(
                ptr,
                "type-widened"
                if widened and not narrowed
                else "type-narrowed"
                if narrowed and not widened
                else "type-changed",
                f"type {_types(ot)} -> {_types(nt)}",
                "new types include the old" if widened else None,
                "old types include the new" if narrowed else None,
                (old, new),
            )
        if not _enum_eq(old.enum, new.enum):
            o, n = old.enum, new.enum
            wider = n is None or (o is not None and all(any(json_equal(x, y) for y in n) for x in o))
            narrower = o is None or (n is not None and all(any(json_equal(x, y) for y in o) for x in n))
            kind = (
                "const-changed"
                if old.is_const and new.is_const
                else "enum-widened"
                if wider and not narrower
                else "enum-narrowed"
                if narrower and not wider
                else "enum-changed"
            )
            self.add(
                ptr,
                kind,
                _enum_detail(o, n, old.is_const and new.is_const),
                "every old value is still allowed" if wider else None,
                "every new value was allowed" if narrower else None,
                (old, new),
            )
        for attr, label, lower in (
            ("min_length", "minLength", True),
            ("max_length", "maxLength", False),
            ("minimum", "minimum", True),
            ("maximum", "maximum", False),
            ("exclusive_minimum", "exclusiveMinimum", True),
            ("exclusive_maximum", "exclusiveMaximum", False),
            ("min_items", "minItems", True),
            ("max_items", "maxItems", False),
            ("min_properties", "minProperties", True),
            ("max_properties", "maxProperties", False),
        ):
            a, b = getattr(old, attr), getattr(new, attr)
            if a == b:
                continue
            # a lower bound relaxes when it goes down (or away), an upper bound when it goes up
            if lower:
                relaxed = b is None or (a is not None and b <= a) or (b == 0 and a is None)
            else:
                relaxed = b is None or (a is not None and b >= a)
            kind = f"{label}-{'relaxed' if relaxed else 'tightened'}"
            default = 0 if label.startswith("min") and "imum" not in label else None  # minLength 0: no bound
            proof = _bound_proof(label, a, b, default, relaxed)
            self.add(
                ptr,
                kind,
                _bound_detail(label, a, b, default),
                proof if relaxed else None,
                None if relaxed else proof,
                (old, new),
            )
        if old.pattern != new.pattern:
            if new.pattern is None:
                self.add(
                    ptr,
                    "pattern-removed",
                    f"pattern removed (was {old.pattern})",
                    "no pattern constrains new data",
                    None,
                    (old, new),
                )
            elif old.pattern is None:
                self.add(
                    ptr,
                    "pattern-added",
                    f"pattern added: {new.pattern}",
                    None,
                    "the new pattern only adds a constraint",
                    (old, new),
                )
            else:
                self.add(ptr, "pattern-changed", f"pattern {old.pattern} -> {new.pattern}", None, None, (old, new))
        if old.multiple_of != new.multiple_of:
            self.add(
                ptr,
                "multipleOf-changed",
                _bound_detail("multipleOf", old.multiple_of, new.multiple_of, None),
                "no multipleOf constrains new data" if new.multiple_of is None else None,
                "the new multipleOf only adds a constraint" if old.multiple_of is None else None,
                (old, new),
            )

    # arrays -----------------------------------------------------------------------

    def _arrays(self, old: Node, new: Node, ptr: str) -> None:
        for i in range(max(len(old.prefix_items), len(new.prefix_items))):
            a = old.prefix_items[i] if i < len(old.prefix_items) else old.items
            b = new.prefix_items[i] if i < len(new.prefix_items) else new.items
            with self._via((old.loc, "items", ""), (new.loc, "items", "")):
                self._sub(a, b, _ptr(ptr, str(i)), "items")
        with self._via((old.loc, "items", ""), (new.loc, "items", "")):
            self._sub(old.items, new.items, _ptr(ptr, "*"), "items")
        if old.unique_items != new.unique_items:
            self.add(
                ptr,
                "uniqueItems-added" if new.unique_items else "uniqueItems-removed",
                "uniqueItems added: items must differ" if new.unique_items else "uniqueItems removed: items may repeat",
                None if new.unique_items else "duplicates are allowed again",
                "uniqueness only adds a constraint" if new.unique_items else None,
                (old, new),
            )

    # objects ----------------------------------------------------------------------

    def _objects(self, old: Node, new: Node, ptr: str) -> None:
        for name in sorted(set(old.properties) | set(new.properties)):
            with self._via((old.loc, "property", name), (new.loc, "property", name)):
                self._property(old, new, ptr, name)
        self._object_rest(old, new, ptr)

    def _property(self, old: Node, new: Node, ptr: str, name: str) -> None:
        at = _ptr(ptr, name)
        a, b = old.properties.get(name), new.properties.get(name)
        if a is not None and b is not None:
            self.compare(a, b, at)
        elif b is not None:  # added
            self.add(
                at,
                "property-added",
                f"property {name!r} added",
                f"old objects were closed, so old data never holds {name!r}" if old.additional is False else None,
                f"old objects were open, so old readers accept {name!r}" if old.additional is True else None,
                (old.additional, b),
            )
        else:  # removed
            assert a is not None
            self.add(
                at,
                "property-removed",
                f"property {name!r} removed",
                f"new objects are open, so new readers accept {name!r}" if new.additional is True else None,
                f"new objects are closed, so new data never holds {name!r}" if new.additional is False else None,
                (a, new.additional),
            )

    def _object_rest(self, old: Node, new: Node, ptr: str) -> None:
        for name in sorted(old.required ^ new.required):
            at = _ptr(ptr, name)
            if name in new.required:
                self.add(
                    at,
                    "required-added",
                    f"{name!r} became required",
                    None,
                    "requiring a field only adds a constraint",
                    (old, new),
                )
            else:
                self.add(
                    at,
                    "required-removed",
                    f"{name!r} is no longer required",
                    "dropping a requirement only relaxes",
                    None,
                    (old, new),
                )
        a, b = old.additional, new.additional
        if isinstance(a, Node) and isinstance(b, Node):
            self.compare(a, b, _ptr(ptr, "*"))
        elif a is not b and not (a is True and b is True):
            kind = "closed" if b is False else "opened" if b is True else "additional-changed"
            self.add(
                _ptr(ptr, "*"),
                kind,
                f"other properties: {_ap(a)} -> {_ap(b)}",
                "new readers accept any other field" if b is True else None,
                "new data holds no other field" if b is False else None,
                (a, b),
            )
        if (old.property_names is None) != (new.property_names is None):
            self.add(
                ptr,
                "propertyNames-changed",
                "propertyNames removed" if new.property_names is None else "propertyNames added",
                "names are no longer constrained" if new.property_names is None else None,
                "names only gained a constraint" if old.property_names is None else None,
                (old, new),
            )
        elif old.property_names is not None and new.property_names is not None:
            self.compare(old.property_names, new.property_names, _ptr(ptr, "*"))
        if old.dependent_required != new.dependent_required:
            self.add(ptr, "dependentRequired-changed", "dependentRequired changed", None, None, (old, new))

    def _sub(self, a: Node | bool, b: Node | bool, ptr: str, what: str) -> None:
        if isinstance(a, Node) and isinstance(b, Node):
            self.compare(a, b, ptr)
        elif a is not b:
            self.add(
                ptr,
                f"{what}-changed",
                f"{what}: {_ap(a)} -> {_ap(b)}",
                "new accepts anything here" if b is True else None,
                "new accepts nothing here" if b is False else None,
                (a, b),
            )


class _Step:
    """Context manager: one step down the route to the nodes being compared."""

    def __init__(self, w: _Walker, old: tuple[str, str, str] | None, new: tuple[str, str, str] | None) -> None:
        self.w, self.old, self.new = w, old, new

    def __enter__(self) -> None:
        if self.old is not None:
            self.w._old.append(self.old)
        if self.new is not None:
            self.w._new.append(self.new)

    def __exit__(self, *exc: object) -> None:
        if self.old is not None:
            self.w._old.pop()
        if self.new is not None:
            self.w._new.pop()


def _enum_eq(a: tuple[Any, ...] | None, b: tuple[Any, ...] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(any(json_equal(x, y) for y in b) for x in a)


def _types(t: frozenset[str] | None) -> str:
    return "any" if t is None else " or ".join(sorted(t))


def _bound_detail(label: str, a: Any, b: Any, default: Any) -> str:
    """A bound's change in words: `maximum added: 150`, `minLength removed (was 1)`,
    `maxItems 5 -> 3` (a lower bound of 0 is no bound)."""
    if a is None or a == default:
        return f"{label} added: {b}"
    if b is None or b == default:
        return f"{label} removed (was {a})"
    return f"{label} {a} -> {b}"


def _bound_proof(label: str, a: Any, b: Any, default: Any, relaxed: bool) -> str:
    """Why a bound's change keeps one direction (see `_bound_detail`)."""
    if relaxed and (b is None or b == default):
        return f"no {label} constrains new data"
    if not relaxed and (a is None or a == default):
        return f"{label} {b} only adds a constraint"
    return f"{label} {b} admits {'every value' if relaxed else 'only values'} {label} {a} did"


def _enum_detail(o: tuple[Any, ...] | None, n: tuple[Any, ...] | None, consts: bool) -> str:
    """An enum's change in words: the values added and removed, or the const replaced."""
    if o is None:
        return f"{'const' if n is not None and len(n) == 1 else 'enum'} added: {_vals(n)}"
    if n is None:
        return f"{'const' if len(o) == 1 else 'enum'} removed (was {_vals(o)})"
    if consts:
        return f"const {_vals(o)} -> {_vals(n)}"
    added = [v for v in n if not any(json_equal(v, x) for x in o)]
    removed = [v for v in o if not any(json_equal(v, x) for x in n)]
    said = [f"{_vals(tuple(added))} added"] if added else []
    said += [f"{_vals(tuple(removed))} removed"] if removed else []
    return "enum: " + "; ".join(said)


def _vals(v: tuple[Any, ...] | None) -> str:
    if v is None:
        return "any"
    return ", ".join(json.dumps(x, ensure_ascii=False) for x in v)


def _ap(v: Node | bool) -> str:
    return "a schema" if isinstance(v, Node) else "any" if v is True else "none allowed"


def _name(b: Node) -> str:
    return b.title or b.loc.rsplit("/", 1)[-1]


# -- evidence ----------------------------------------------------------------------


def decide(change: Change, old: Side, new: Side, examples: int) -> None:
    """Each direction's evidence: the structural proof, else a witness (`witness.find`),
    else the documents tried."""
    for direction, proof in (("backward", change.proof_backward), ("forward", change.proof_forward)):
        if proof is not None:
            setattr(change, direction, Evidence(True, "structure", proof))
            continue
        back = direction == "backward"
        accepts, rejects = (old, new) if back else (new, old)
        at = witness.Change(
            change.kind,
            change.pointer,
            change.old_node if back else change.new_node,
            change.new_node if back else change.old_node,
        )
        routes = (change.route_old, change.route_new) if back else (change.route_new, change.route_old)
        found, tried = witness.find(at, accepts, rejects, routes, examples)
        if found is None and tried == 0 and examples > 0:
            ev = Evidence(True, "fuzz", "no document could be generated within the recursion bound (not a proof)")
        elif found is None:
            ev = Evidence(True, "fuzz", f"no witness in {tried} generated documents (not a proof)")
        else:
            who = "old accepts, new rejects" if back else "new accepts, old rejects"
            also = "" if found.isolated else " (this document meets other changes too)"
            ev = Evidence(False, "witness", f"{who}: {found.describe()}{also}", found.document)
        setattr(change, direction, ev)


# -- entry points ------------------------------------------------------------------


# Work bounds: `schema diff` compares schemas people write by hand (the canonical set has
# a few hundred nodes); past these it refuses with a message instead of running for minutes.
MAX_NODES = 20_000  # JSON objects and arrays over all files of a set
MAX_ENUM = 5_000  # values of one enum
MAX_DEPTH = 64  # nesting of one schema file
MAX_EXAMPLES = 100_000


def _budget(path: Path, doc: Any) -> int:
    """Count the containers of `doc` iteratively, refusing deep nesting and huge enums."""
    count = 0
    stack: list[tuple[Any, int, str]] = [(doc, 1, "")]
    while stack:
        node, depth, ptr = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(f"{path}: {ptr or '/'}: nested deeper than {MAX_DEPTH} levels; schema diff refuses it")
        count += 1
        if count > MAX_NODES:
            raise InputError(f"{path}: more than {MAX_NODES} schema nodes; schema diff refuses a schema this large")
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if k == "enum" and isinstance(v, list) and len(v) > MAX_ENUM and isinstance(node, dict):
                raise InputError(
                    f"{path}: {ptr}/enum: {len(v)} values (more than {MAX_ENUM}); schema diff refuses an enum this large"
                )
            if isinstance(v, (dict, list)):
                stack.append((v, depth + 1, _ptr(ptr, str(k))))
    return count


def _check(folder: Path, schemas: SchemaSet) -> None:
    """Refuse what would make the comparison unbounded or meaningless, naming the file:
    too large or deep, not a 2020-12 schema (`"type": 123`, an invalid pattern), or two
    files of one set sharing an `$id` (the registry could hold only one of them)."""
    total = 0
    ids: dict[str, str] = {}
    for name, doc in schemas.documents.items():
        path = folder / name
        total += _budget(path, doc)
        if total > MAX_NODES:
            raise InputError(
                f"{folder}: more than {MAX_NODES} schema nodes in all; schema diff refuses a set this large"
            )
        _check_dialect(path, doc)
        uri = doc.get("$id", schemas.uri(name))
        if isinstance(uri, str) and uri in ids:
            raise InputError(f"{path}: has the same $id as {folder / ids[uri]} ({uri}); one set cannot hold both")
        if isinstance(uri, str):
            ids[uri] = name


def _check_dialect(path: Path, doc: Any) -> None:
    """Refuse a document that is not a JSON Schema 2020-12, naming the pointer.

    The 2020-12 meta-schema checks one format, `regex` (`pattern`, `patternProperties`
    names). jsonschema-rs answers the meta-schema and Python's `re` the patterns; only a
    document one of them refuses goes to python-jsonschema (about 100 ms to import),
    which has the final word and the message."""
    if jsonschema_rs.meta.is_valid(doc) and all(_compiles(p) for p in _patterns(doc)):
        return
    from jsonschema import Draft202012Validator  # function-level: only a doubtful schema needs it
    from jsonschema.exceptions import best_match

    checker = Draft202012Validator(Draft202012Validator.META_SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    error = best_match(checker.iter_errors(doc))
    if error is not None:
        where = "/" + "/".join(str(p) for p in error.absolute_path)
        raise InputError(f"{path}: {where}: not a valid JSON Schema 2020-12: {error.message[:200]}")


def _patterns(doc: Any) -> Iterator[str]:
    """Every string under a `pattern` key and every `patternProperties` name (data that
    merely looks like one only sends the document to the slower check)."""
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "pattern" and isinstance(v, str):
                    yield v
                elif k == "patternProperties" and isinstance(v, dict):
                    yield from (name for name in v if isinstance(name, str))
                if isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(x, list):
            stack.extend(x)


def _compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def load(path: Path, *, exclude: frozenset[str] = frozenset()) -> tuple[SchemaSet, list[str]]:
    """A schema set and its roots from a folder (every file no other file references)
    or from one file (that file, with the other files of its folder for `$ref`s, but
    those in `exclude`)."""
    check_input(path, allow_dir=True)
    if path.is_dir():
        folder, roots = path, None
    else:
        folder, roots = path.parent, [path.name]
    schemas = load_set(folder, exclude=exclude - {path.name}, root=None if roots is None else path)
    if roots is not None:  # siblings that are other copies of the root (same $id) are not its $ref targets
        root_id = schemas.documents[path.name].get("$id")
        docs = {
            n: d for n, d in schemas.documents.items() if n == path.name or root_id is None or d.get("$id") != root_id
        }
        schemas = SchemaSet(schemas.format, schemas.version, schemas.folder, docs)
    _check(folder, schemas)
    return schemas, roots if roots is not None else entry_points(schemas)


def entry_points(schemas: SchemaSet) -> list[str]:
    """Files of a set that no other file of the set references, then, for files that
    only reference each other (`a.json` -> `b.json` -> `a.json`, reached from no such
    file), the first by name of each such group: every file is compared from some root."""
    edges: dict[str, set[str]] = {}
    for name, doc in schemas.documents.items():
        edges[name] = {r for r in _file_refs(doc) if r and r != name and r in schemas.documents}
    referenced = set().union(*edges.values()) if edges else set()
    roots = [n for n in schemas.documents if n not in referenced]
    reached: set[str] = set()
    for name in [*roots, *sorted(schemas.documents)]:
        if name in reached:
            continue
        if name not in roots:
            roots.append(name)
        todo = [name]
        while todo:  # iterative: a chain of files can be longer than the recursion limit
            n = todo.pop()
            if n not in reached:
                reached.add(n)
                todo.extend(edges[n])
    return roots


def _file_refs(doc: Any) -> Iterator[str]:
    """The file names the `$ref`s of `doc` point to (`""` for a reference inside it)."""
    stack = [doc]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            for k, v in x.items():
                if k == "$ref" and isinstance(v, str):
                    yield v.split("#")[0].rsplit("/", 1)[-1]
                else:
                    stack.append(v)
        elif isinstance(x, list):
            stack.extend(x)


Files = dict[str, Path]


def _root(graph: SchemaGraph, root: str, files: Files) -> Node:
    """The root node of one side; a schema the strategies cannot honour is an error
    naming its file and the pointer in it (not its registry URI)."""
    try:
        return graph.root(root)
    except UnsupportedSchema as exc:
        raise InputError(exc.located(graph.schemas, files=files)) from None


def diff(
    old: SchemaSet,
    new: SchemaSet,
    roots: list[str],
    *,
    examples: int = 200,
    files: tuple[Files, Files] = ({}, {}),
) -> DiffResult:
    """Compare `roots` of two schema sets; see the module docstring. `files` maps each
    side's document names to the files they came from, for error messages."""
    result = DiffResult()
    graphs: tuple[SchemaGraph, SchemaGraph] | None = None  # one per side, shared by every root
    words: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    for root in roots:
        if root not in new.documents or root not in old.documents:
            result.changes.append(_root_change(root, removed=root not in new.documents))
            continue
        if graphs is None:
            graphs = SchemaGraph(old), SchemaGraph(new)
            words = dictionary_of(new), dictionary_of(old)  # each side mixes in the other's vocabulary
        walker = _Walker(root)
        walker.compare(_root(graphs[0], root, files[0]), _root(graphs[1], root, files[1]), "")
        if not walker.changes:
            continue
        try:
            o, n = Side(old, root, graphs[0], words[0]), Side(new, root, graphs[1], words[1])
            for change in walker.changes:
                decide(change, o, n, examples)
        except UnsupportedSchema as exc:  # a pattern the sampler cannot read
            raise InputError(exc.located(old, new, files={**files[1], **files[0]})) from None
        result.changes.extend(walker.changes)
    return result


def _root_change(root: str, *, removed: bool) -> Change:
    if removed:
        return Change(
            root,
            "",
            "root-removed",
            f"{root} has no counterpart",
            Evidence(False, "structure", f"new readers have no schema for {root}"),
            Evidence(True, "structure", "new data holds no such document"),
        )
    return Change(
        root,
        "",
        "root-added",
        f"{root} is new",
        Evidence(True, "structure", "old data holds no such document"),
        Evidence(False, "structure", f"old readers have no schema for {root}"),
    )


def diff_paths(old: Path, new: Path, *, examples: int = 200) -> DiffResult:
    """Compare two files (or two folders) by position, never by registry identity.

    Two revisions of one schema share its `$id` (git HEAD vs the working tree), and may
    sit in one folder (`x.json` beside `x.old.json`): each side is a set of its own,
    read from its own folder without the other side's file, and in a file diff the new
    file takes the old file's name, so the two documents meet at the same position.
    """
    if not 0 <= examples <= MAX_EXAMPLES:
        raise InputError(f"--examples {examples}: give a number from 0 to {MAX_EXAMPLES}")
    check_input(old, allow_dir=True)
    check_input(new, allow_dir=True)
    if old.is_file() != new.is_file():
        raise InputError(f"{old}, {new}: compare a file with a file, or a folder with a folder")
    if old.is_file():
        same_folder = real(old.parent) == real(new.parent)
        old_set, roots = load(old, exclude=frozenset({new.name}) if same_folder else frozenset())
        new_set, new_roots = load(new, exclude=frozenset({old.name}) if same_folder else frozenset())
        docs = {k: v for k, v in new_set.documents.items() if k != new_roots[0]}
        docs[roots[0]] = new_set.documents[new_roots[0]]
        new_set = SchemaSet(new_set.format, new_set.version, new_set.folder, docs)
        files: tuple[Files, Files] = ({roots[0]: old}, {roots[0]: new})
    else:
        old_set, old_roots = load(old)
        new_set, new_roots = load(new)
        roots = list(dict.fromkeys([*old_roots, *new_roots]))
        files = ({}, {})
    return diff(old_set, new_set, roots, examples=examples, files=files)


def render_text(result: DiffResult) -> str:
    lines = []
    for c in result.changes:
        assert c.backward is not None and c.forward is not None
        lines.append(f"{c.compat!s:9} {c.kind:22} {c.root}#{c.pointer}  {c.detail}")
        for name, ev in (("backward", c.backward), ("forward", c.forward)):
            mark = "holds" if ev.holds else "FAILS"
            lines.append(f"          {name:8} {mark:5} by {ev.by}: {ev.detail}")
            if ev.by == "witness":
                lines.append(f"                   witness: {json.dumps(ev.witness, ensure_ascii=False)[:200]}")
    lines.append(f"verdict: {result.verdict} ({len(result.changes)} change(s))")
    return "\n".join(lines) + "\n"


# -- findings for CI outputs (SARIF, GitHub annotations) ----------------------------

_RULE_OF = {Compat.BREAKING: SD_BREAKING, Compat.BACKWARD: SD_BACKWARD, Compat.FORWARD: SD_FORWARD}


def findings(result: DiffResult, new: Path, fails: Callable[[Compat], bool] | None = None) -> list[Finding]:
    """One finding per change that is not FULL, located in the new schema (file, pointer).

    `fails` says which verdicts fail the run (`--fail-on`): a change that fails it is an
    error, any other a warning. When the changes only fail the run together (one
    BACKWARD and one FORWARD make a BREAKING verdict), each of them is an error."""
    fails = fails or (lambda v: not (v.backward or v.forward))
    together = fails(result.verdict) and not any(fails(c.compat) for c in result.changes)
    out: list[Finding] = []
    for c in result.changes:
        rule = _RULE_OF.get(c.compat)
        if rule is None:
            continue
        severity = Severity.ERROR if fails(c.compat) or together else Severity.WARNING
        where = new / c.root if new.is_dir() else new
        out.append(Finding(str(where), None, c.pointer, rule.id, severity, f"{c.kind}: {c.detail} ({c.compat})"))
    return out
