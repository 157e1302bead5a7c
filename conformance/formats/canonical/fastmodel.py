"""msgspec Structs generated from the canonical schemas: the typed decode of the fast path.

The fast model is built at first use from the schema files (`conformance.schemas`), never
written by hand, so it cannot drift from them silently: a keyword this generator does not
know raises when the model is built (tests/test_fast_path.py builds every revision).

The model may be *narrower* than the schema, never wider: a line it accepts must be one
on which no schema check and no one-message rule can report anything, because such a
line skips them (`fast.py`). Narrowing, each one a place where the exact path takes over:

- every object is closed (`forbid_unknown_fields`): an additive field is TS010's warning;
- a union of several non-null branches keeps its first (`content-block` keeps the known
  blocks, since an unknown block is TS011's warning; `cost_usd` keeps the plain decimal
  string, since the other forms are TS118's);
- a `$ref` back into a definition being built (a tool_result inside a tool_result) is
  cut, and so is its branch of the union;
- integers are 64-bit JSON integers (`1.0` and ints past 64 bits go the exact way).

Field order follows the schema's `properties` order, which is the order the canonical
writers use, so re-encoding a decoded line gives back its exact bytes (the duplicate-key
proof of `fast.py`). Optional fields default to `UNSET`, so an absent field stays absent
when re-encoded and a field written with its default value stays written.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Literal, Union

import msgspec

from ...schema_validation import ecma_regex
from ...schemas import SchemaSet, schema_set

# keywords that only document (or that the generator reads elsewhere): no constraint
_ANNOTATIONS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "examples", "default", "discriminator", "deprecated"}
)
_CONSTRAINTS = {"minLength": "min_length", "maxLength": "max_length", "minimum": "ge", "maximum": "le"}


class _Cut(Exception):
    """A `$ref` back into a definition being built (a recursive schema): cut here."""


class _Builder:
    def __init__(self, schemas: SchemaSet) -> None:
        self.s = schemas
        self.building: list[str] = []
        self.structs: dict[str, Any] = {}
        self.count = 0

    def _resolve(self, ref: str, doc: str) -> tuple[str, dict[str, Any]]:
        file, _, frag = ref.partition("#")
        name = file or doc
        node: Any = self.s[name]
        for part in [p for p in frag.split("/") if p]:
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return f"{name}#{frag}", node

    def unknown(self, schema: dict[str, Any], allowed: set[str], where: str) -> None:
        extra = set(schema) - allowed - _ANNOTATIONS - {k for k in schema if k.startswith("x-")}
        if extra:
            raise ValueError(f"fast model: {where} uses {sorted(extra)}, which the generator does not translate")

    def type_of(self, schema: Any, doc: str, where: str) -> Any:
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
                return self.type_of(target, file, key)
            finally:
                self.building.pop()
        if "anyOf" in schema or "oneOf" in schema:
            return self.union(schema, doc, where)
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
            return self.struct(schema, doc, where)
        if t == "array":
            self.unknown(schema, {"type", "items"}, where)
            return list[self.type_of(schema.get("items", True), doc, where + "/items")]  # type: ignore[misc]
        if t in ("string", "integer", "number"):
            self.unknown(schema, {"type", "pattern", *_CONSTRAINTS}, where)
            meta = {_CONSTRAINTS[k]: v for k, v in schema.items() if k in _CONSTRAINTS}
            if "pattern" in schema:
                # the schema's ECMA-262 pattern read the way the exact path reads it
                meta["pattern"] = "(?a)" + ecma_regex(schema["pattern"]).pattern
            base = {"string": str, "integer": int, "number": float}[t]
            return Annotated[base, msgspec.Meta(**meta)] if meta else base
        if t == "boolean":
            self.unknown(schema, {"type"}, where)
            return bool
        if t == "null":
            self.unknown(schema, {"type"}, where)
            return None
        raise ValueError(f"fast model: {where}: unsupported type {t!r}")

    def union(self, schema: dict[str, Any], doc: str, where: str) -> Any:
        kw = "anyOf" if "anyOf" in schema else "oneOf"
        self.unknown(schema, {kw}, where)
        branches: list[Any] = []
        nullable = False
        for i, branch in enumerate(schema[kw]):
            if isinstance(branch, dict) and branch.get("type") == "null":
                nullable = True
                continue
            try:
                branches.append(self.type_of(branch, doc, f"{where}/{kw}/{i}"))
            except _Cut:
                continue  # the recursive branch is left to the exact path
        if not branches:
            raise _Cut(where)
        disc = schema.get("discriminator")
        if disc is None:
            branches = branches[:1]  # narrowing: the first branch (see module doc)
        elif disc.get("propertyName") != "type":
            raise ValueError(f"fast model: {where}: only a `type` discriminator is translated")
        t: Any = branches[0] if len(branches) == 1 else Union[tuple(branches)]  # noqa: UP007
        return t | None if nullable else t

    def struct(self, schema: dict[str, Any], doc: str, where: str) -> Any:
        self.unknown(schema, {"type", "properties", "required", "additionalProperties"}, where)
        props: dict[str, Any] = schema.get("properties", {})
        if not props:
            if schema.get("additionalProperties", True) is not True:
                raise ValueError(f"fast model: {where}: a closed object without properties")
            return dict[str, Any]
        if where in self.structs:
            return self.structs[where]
        required = set(schema.get("required", ()))
        tag: str | None = None
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        for name, sub in props.items():
            if name == "type" and isinstance(sub, dict) and "const" in sub and name in required:
                tag = sub["const"]  # a tagged-union member: msgspec writes the tag first
                continue
            t = self.type_of(sub, doc, f"{where}/properties/{name}")
            fields.append((name, t) if name in required else (name, t | msgspec.UnsetType, msgspec.UNSET))
        self.count += 1
        title = str(schema.get("title", "Object")).replace(" ", "")
        options: dict[str, Any] = {"tag_field": "type", "tag": tag} if tag is not None else {}
        cls = msgspec.defstruct(
            f"Fast{title}",
            fields,
            kw_only=True,
            forbid_unknown_fields=True,
            omit_defaults=True,
            gc=False,  # no cycles: decoded structs never need the cycle collector
            **options,
        )
        self.structs[where] = cls
        return cls


@functools.lru_cache(maxsize=8)
def message_model(revision: str) -> Any:
    """The Message Struct of canonical `revision`, generated from its schema files."""
    b = _Builder(schema_set("canonical", revision))
    b.building.append("message.json#")
    return b.type_of(schema_set("canonical", revision)["message.json"], "message.json", "message.json#")
