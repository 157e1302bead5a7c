"""Models for other repositories: `turnspec models --target pydantic|typeddict|dataclasses|msgspec`.

Each target is a Python package (a folder) that imports, type-checks under
`mypy --strict`, and accepts exactly what the schemas accept, each through the way a
user of that library validates (tests/test_modelgen.py runs the differential per target):

- `pydantic`: datamodel-code-generator (pinned, the same options as `generated/`, see
  `conformance.schema.codegen`), one module per schema file. Validate with
  `Message.model_validate_json(data)`.
- `msgspec`: `msgspec.Struct`s with every constraint as `msgspec.Meta`, decoded with the
  package's `decode(data)` (`msgspec.json.decode(data, type=Message, dec_hook=dec_hook)`).
- `typeddict`: `TypedDict`s (only `typing`, no `typing_extensions`) plus `validate(obj)`
  / `validate_json(data)`, which run the bundled schema (`bundle.json` beside the module,
  `conformance.schema.bundle.bundle()`) through stock python-jsonschema: a TypedDict is
  a static type only and cannot check anything at run time.
- `dataclasses`: frozen `dataclass`es plus `from_dict(obj)` / `from_json(data)` (the
  bundled schema first, then construction) and `to_dict(value)`.

Why the last three are emitted here from the schema IR (`conformance.strategies.ir`) and
not by datamodel-code-generator 0.89.0 (issue 14, measured): its multi-module output
leaves the `KnownContentBlock` forward reference unresolved across modules (msgspec
raises NameError), its TypedDict output mixes `typing` and `typing_extensions`, from the
single bundle `UnknownBlock` loses its negative-lookahead pattern and becomes
`type: str` (so `{"type": "text", "text": 5}` passed as an unknown block), dataclasses
lose closed objects and every constraint, and msgspec refuses the untagged catch-all
member of the content-block union. Patching its text for each of those is more fragile
than emitting from the IR, which already resolves `$ref`s and merges siblings.

The unknown block, without loosening the schema: `ContentBlock` stays
`KnownContentBlock | UnknownBlock`, where `UnknownBlock.type` keeps its pattern (the known
tags are excluded), so a malformed known block fails both branches. msgspec cannot put
an untagged member in a union, so every union msgspec cannot express natively is a
small class that msgspec hands to `dec_hook` (a two-step decode: builtins first, then
the matching branch through `msgspec.convert`); mypy sees the plain union
(`if TYPE_CHECKING`). Narrowing on `type`: classes narrow with
`isinstance(block, UnknownBlock)` first, then on the `type` literal; TypedDicts with
the generated `is_known_content_block(block)` TypeGuard, then on `block["type"]`.

Output is deterministic byte for byte (sorted walks, no timestamps) and written
atomically by the command through `conformance.core.outputs`.
"""

from __future__ import annotations

import ast
import json
import keyword
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from ..core import pointers
from ..core.errors import InputError
from ..core.schema_validation import ecma_regex
from ..core.schemas import schema_root, schema_set, versions
from ..strategies.ir import Node, SchemaGraph, UnevaluableSchema, UnsupportedSchema, branch_tag
from .bundle import PRIMARY, bundle, default_revision, families

PYTHON_TARGETS = ("pydantic", "typeddict", "dataclasses", "msgspec")
TARGETS = (*PYTHON_TARGETS, "typescript")
# Options chosen so the models accept exactly what the schemas accept (see
# tests/test_differential.py): strict scalar types (no "5" -> 5 coercion), null only
# where the schema says so, extra keys per additionalProperties, discriminated unions.
PYDANTIC_ARGS = [
    "--input-file-type", "jsonschema",
    "--output-model-type", "pydantic_v2.BaseModel",
    "--target-python-version", "3.11",
    "--strict-nullable",
    "--strict-types", "str", "int", "float", "bool",
    "--use-annotated",
    "--field-constraints",
    "--use-standard-collections",
    "--use-union-operator",
    "--use-type-alias",
    "--use-specialized-enum",
    "--use-title-as-name",
    "--use-schema-description",
    "--use-field-description",
    "--disable-timestamp",
    "--no-allow-remote-refs",
    "--formatters", "builtin",
    # an enum field's default is the enum member, not its string: dumping a defaulted
    # `status` must not warn PydanticSerializationUnexpectedValue
    "--deserialize-default-values", "enum",
]  # fmt: skip

EXTRA = "extra_properties"  # the dataclasses field that keeps additive (unknown) keys


def resolve(fmt: str, revision: str | None) -> str:
    """The revision to generate, or a one-line InputError."""
    if fmt not in families():
        raise InputError(f"--format {fmt}: no such schema family (known: {', '.join(families())})")
    rev = revision or default_revision(fmt)
    if rev not in versions(fmt):
        raise InputError(f"--revision {rev}: {fmt} has {', '.join(versions(fmt))}")
    return rev


def source_folder(fmt: str, revision: str) -> Path:
    """The schema folder the models are generated from (an input the output must not touch)."""
    return schema_root() / fmt / revision


def generate(target: str, fmt: str = "canonical", revision: str | None = None) -> dict[str, bytes]:
    """The files of the package, by relative path (deterministic). A schema the models
    cannot follow (a `$ref` cycle that never descends into the document, a keyword the
    IR refuses) is a one-line InputError naming its file and pointer."""
    rev = resolve(fmt, revision)
    if target not in TARGETS:
        raise InputError(f"--target {target}: known targets are {', '.join(TARGETS)}")
    try:
        return _generate(target, fmt, rev)
    except UnsupportedSchema as exc:
        raise InputError(exc.located(schema_set(fmt, rev))) from None


def _generate(target: str, fmt: str, rev: str) -> dict[str, bytes]:
    if target in ("pydantic", "typescript"):
        _refuse_unevaluable(fmt, rev)  # their generators do not read the IR, which would refuse it
        return _pydantic(fmt, rev) if target == "pydantic" else _typescript(fmt, rev)
    emitter = _Emitter(target, fmt, rev)
    files = {"__init__.py": emitter.module().encode(), "py.typed": b""}
    if target in ("typeddict", "dataclasses"):
        files["bundle.json"] = _bundle_bytes(fmt, rev)
    return files


def _refuse_unevaluable(fmt: str, rev: str) -> None:
    """Raise `UnevaluableSchema` for a schema of the revision no validator can finish
    (the models of such a schema would accept whatever their generator guessed)."""
    sets = schema_set(fmt, rev)
    graph = SchemaGraph(sets)
    for fname, doc in sorted(sets.documents.items()):
        base = doc.get("$id", sets.uri(fname))
        for pointer, sub in [("", doc), *((f"/$defs/{k}", v) for k, v in sorted(doc.get("$defs", {}).items()))]:
            try:
                graph.node(sub, base, pointer)
            except UnevaluableSchema:
                raise
            except UnsupportedSchema:
                continue  # a keyword the IR does not model: that generator's own business


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    """Write `files` under `root` (a staging folder of `conformance.core.outputs.staged`)."""
    root.mkdir()
    for rel, data in sorted(files.items()):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


# -- pydantic: the pinned datamodel-code-generator ------------------------------------


def _run(cmd: list[str], what: str) -> subprocess.CompletedProcess[str]:
    """Run a generator with a time limit; a hang or a missing program is a one-line error."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    except subprocess.TimeoutExpired:
        raise InputError(f"{what} did not finish within 600 s") from None
    except OSError as exc:
        raise InputError(f"{what} could not run: {exc.strerror or exc}") from None


def python_pattern(pattern: str) -> str:
    """`pattern` as Python's `re` must read it to mean what ECMA-262 (and the project's
    oracle) means: a bare `$` becomes an end-of-input assertion, and `\\d`/`\\w`/`\\b`
    are ASCII-only (`(?a)`). The canonical schemas are already written this way; peer
    formats' schemas quote upstream patterns with `$`."""
    translated = ecma_regex(pattern).pattern
    return ("(?a)" + translated) if re.search(r"\\[dDwWbB]", translated) else translated


def neutral_patterns(doc: Any) -> Any:
    """`doc` with every `pattern` rewritten by `python_pattern` (same meaning in ECMA-262
    and Python's `re`, so stock python-jsonschema agrees with every other validator)."""
    if isinstance(doc, dict):
        return {
            k: (python_pattern(v) if k == "pattern" and isinstance(v, str) else neutral_patterns(v))
            for k, v in doc.items()
        }
    if isinstance(doc, list):
        return [neutral_patterns(v) for v in doc]
    return doc


def _pydantic(fmt: str, rev: str) -> dict[str, bytes]:
    exe = shutil.which("datamodel-codegen", path=str(Path(sys.executable).parent)) or shutil.which("datamodel-codegen")
    if exe is None:
        raise InputError(
            "--target pydantic needs datamodel-code-generator==0.89.0 (pip install 'turnspec[models]' "
            "or pip install datamodel-code-generator==0.89.0)"
        )
    # a fresh folder outside any project: the generator's formatter reads the line
    # length from a pyproject.toml above its output, which would make output depend on
    # where OUT is
    with tempfile.TemporaryDirectory(prefix="turnspec-models-") as tmp:
        # input preparation: the schema files with dialect-neutral patterns (pydantic
        # reads them with Python's `re` wherever they need a lookaround)
        src, out = Path(tmp) / "schemas", Path(tmp) / "pkg"
        src.mkdir()
        for name, doc in sorted(schema_set(fmt, rev).documents.items()):
            (src / name).write_text(json.dumps(neutral_patterns(doc), indent=2, ensure_ascii=False), encoding="utf-8")
        cmd = [exe, "--input", str(src), "--output", str(out), *PYDANTIC_ARGS]
        proc = _run(cmd, "datamodel-codegen")
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise InputError(f"datamodel-codegen failed on {fmt} {rev}: {last}")
        files = {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*.py"))}
    files["py.typed"] = b""
    return files


# -- the IR emitter (typeddict, dataclasses, msgspec) -----------------------------------


@dataclass
class _Field:
    key: str
    attr: str
    annotation: str
    required: bool
    default: Any
    has_default: bool
    conv: str  # dataclasses: the conversion spec (a Python literal)


@dataclass
class _Class:
    name: str
    doc: str
    open: bool
    fields: list[_Field] = field(default_factory=list)


@dataclass
class _Union:
    name: str
    doc: str
    branches: list[str]  # static type expressions
    runtime: list[str]  # msgspec: the run-time objects msgspec.convert gets, per branch
    checks: list[str]  # msgspec: the Python classes a decoded branch is an instance of
    one: bool
    tag: tuple[str, dict[Any, str]] | None  # discriminator property, tag -> runtime branch


class _Emitter:
    def __init__(self, target: str, fmt: str, rev: str) -> None:
        self.target, self.fmt, self.rev = target, fmt, rev
        self.sets = schema_set(fmt, rev)
        self.graph = SchemaGraph(self.sets)
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.classes: list[_Class] = []
        self.aliases: list[tuple[str, str, str]] = []  # (name, static expression, doc)
        self.unions: list[_Union] = []  # msgspec hooked unions, in dependency order
        self.guards: list[tuple[str, str, list[Any]]] = []  # typeddict TypeGuards
        self.order: list[tuple[str, int]] = []  # ("alias"|"union", index) in dependency order
        self.runtime_of: dict[str, str] = {}  # msgspec: static name -> run-time object
        self.check_of: dict[str, list[str]] = {}  # msgspec: name -> instance classes
        self.conv_of: dict[str, str] = {}  # dataclasses: name -> conversion spec
        self.union_convs: list[tuple[str, Any]] = []  # dataclasses: union -> ((location, spec), ...)
        self.hits: set[str] = set()  # names looked up again (a cycle may close on them)
        self.refined: list[tuple[str, str, str, str, bool, dict[str, Any]]] = []  # msgspec
        self.root_loc = ""
        self.titles: set[str] = set()  # titles of the files and definitions, kept for them

    # -- naming ------------------------------------------------------------------------

    def _fresh(self, want: str, titled: bool = True) -> str:
        base = _camel(want) or "Model"
        name, i = base, 2
        # a name made from a hint never takes the title of a schema file or definition
        taken = self.used | (self.titles if not titled else set())
        while name in taken or keyword.iskeyword(name) or name in _RESERVED:
            name, i = f"{base}{i}", i + 1
        self.used.add(name)
        return name

    # -- the walk ----------------------------------------------------------------------

    def roots(self) -> list[tuple[Node, str]]:
        out: list[tuple[Node, str]] = []
        for fname, doc in sorted(self.sets.documents.items()):
            base = doc.get("$id", self.sets.uri(fname))
            stem = fname.removesuffix(".json")
            root = self.graph.node(doc, base, "")
            if not root.is_trivial():
                out.append((root, stem))
            for k in sorted(doc.get("$defs", {})):
                out.append((self.graph.node(doc["$defs"][k], base, f"/$defs/{k}"), k))
        return out

    def module(self) -> str:
        roots = self.roots()
        self.titles = {_camel(n.title) for n, _ in roots if n.title}
        for node, hint in roots:
            self.expr(node, hint, top=True)
        primary = PRIMARY.get(self.fmt)
        root_name = None
        if primary in self.sets.documents:
            root = self.graph.root(primary)
            root_name, self.root_loc = self.names.get(id(root)), root.loc
        return _render(self, root_name)

    def expr(self, n: Node, hint: str, top: bool = False) -> str:
        """The static type of `n` (registering named definitions on the way)."""
        known = self.names.get(id(n))
        if known is not None:
            self.hits.add(known)
            return known
        if n.never:
            return "Never"
        if n.is_trivial():
            self.conv_of.setdefault("Any", "None")
            return "Any"
        if n.union is not None:
            return self._union(n, hint, top)
        if n.enum is not None:
            lit = "Literal[" + ", ".join(repr(v) for v in n.enum) + "]"
            return self._alias_if_titled(n, lit, ["str" if isinstance(v, str) else _pytype(v) for v in n.enum])
        types = sorted(n.types) if n.types is not None else None
        if types is None:
            # constraints without a type: they only bind values of their own type
            return "Any"
        if len(types) > 1:
            parts = [self._single(n, t, hint) for t in types if not (t == "integer" and "number" in types)]
            return " | ".join(parts)
        return self._single(n, types[0], hint, top)

    def _alias_if_titled(self, n: Node, expr: str, checks: list[str]) -> str:
        if n.title is None:
            return expr
        name = self._fresh(n.title)
        self.names[id(n)] = name
        self.aliases.append((name, expr, _doc(n)))
        self.order.append(("alias", len(self.aliases) - 1))
        self.runtime_of[name] = name
        self.check_of[name] = checks
        self.conv_of[name] = "None"
        return name

    def _single(self, n: Node, t: str, hint: str, top: bool = False) -> str:
        if self.target == "msgspec" and (
            n.prefix_items
            or n.dependent_required
            or (n.properties and (n.min_properties or n.max_properties is not None))
        ):
            raise InputError(
                f"{n.loc}: the msgspec target cannot express prefixItems, dependentRequired or min/maxProperties on a model yet"
            )
        if t == "object":
            if n.properties or (n.title is not None and n.additional is False):
                return self._class(n, hint)
            value = self.expr(n.additional, hint + "Value") if isinstance(n.additional, Node) else "Any"
            if n.additional is False:
                value = "Never"
            key = self.expr(n.property_names, hint + "Key") if n.property_names is not None else "str"
            meta = _meta(min_length=n.min_properties or None, max_length=n.max_properties)
            return self._scalar(n, f"dict[{key}, {value}]", meta, ["dict"])
        if t == "array":
            item = self.expr(n.items, hint + "Item") if isinstance(n.items, Node) else "Any"
            base = f"list[{item}]"
            meta = _meta(min_length=n.min_items or None, max_length=n.max_items)
            if n.unique_items and self.target == "msgspec":
                return self._refined(n, hint, base, meta, unique=True, bounds={})
            return self._scalar(n, base, meta, ["list"])
        if t == "string":
            pattern = python_pattern(n.pattern) if n.pattern is not None else None
            meta = _meta(min_length=n.min_length or None, max_length=n.max_length, pattern=pattern)
            return self._scalar(n, "str", meta, ["str"])
        if t in ("integer", "number"):
            bounds = {"ge": n.minimum, "le": n.maximum, "gt": n.exclusive_minimum, "lt": n.exclusive_maximum}
            base = "int" if t == "integer" else "float"
            if self.target == "msgspec":
                # msgspec refuses integer bounds outside int64: those are checked after decoding
                wide = {k: v for k, v in bounds.items() if v is not None and not -(2**63) <= v < 2**63}
                if wide:
                    narrow = {k: v for k, v in bounds.items() if k not in wide}
                    meta = _meta(**narrow, multiple_of=n.multiple_of)
                    return self._refined(n, hint, base, meta, unique=False, bounds=wide)
            meta = _meta(**bounds, multiple_of=n.multiple_of)
            return self._scalar(n, base, meta, ["int"] if t == "integer" else ["int", "float"])
        if t == "boolean":
            return "bool"
        return "None"

    def _scalar(self, n: Node, base: str, meta: str, checks: list[str]) -> str:
        if self.target != "msgspec" or not meta:
            return base
        expr = f"Annotated[{base}, msgspec.Meta({meta})]"
        return self._alias_if_titled(n, expr, checks)

    def _refined(self, n: Node, hint: str, base: str, meta: str, *, unique: bool, bounds: dict[str, Any]) -> str:
        """msgspec: a constraint msgspec.Meta cannot hold (uniqueItems, an integer bound
        beyond int64), checked by dec_hook after msgspec decoded the base type."""
        name = self._fresh(n.title or hint, n.title is not None)
        self.names[id(n)] = name
        runtime = f"Annotated[{base}, msgspec.Meta({meta})]" if meta else base
        kind = "list" if base.startswith("list[") else base
        self.refined.append((name, _doc(n), runtime, kind, unique, bounds))
        self.order.append(("refined", len(self.refined) - 1))
        self.runtime_of[name] = name
        self.check_of[name] = [name]
        return name

    def _class(self, n: Node, hint: str) -> str:
        name = self._fresh(n.title or hint, n.title is not None)
        self.names[id(n)] = name
        self.runtime_of[name] = name
        self.check_of[name] = [name]
        self.conv_of[name] = repr(("c", name))
        cls = _Class(name, _doc(n), n.additional is not False)
        self.classes.append(cls)
        props_raw = n.raw.get("properties", {}) if isinstance(n.raw, dict) else {}
        attrs: set[str] = {EXTRA} if self.target == "dataclasses" and cls.open else set()
        for key in n.properties:
            sub = n.properties[key]
            ann = self.expr(sub, name + _camel(key))
            praw = props_raw.get(key, {})
            has_default = isinstance(praw, dict) and "default" in praw
            attr = _attr(key, attrs)
            attrs.add(attr)
            cls.fields.append(
                _Field(
                    key,
                    attr,
                    ann,
                    key in n.required,
                    praw.get("default") if has_default else None,
                    has_default,
                    self._conv(sub, ann),
                )
            )
        return name

    def _conv(self, n: Node, ann: str) -> str:
        """dataclasses: how a validated JSON value becomes the field's value."""
        if ann in self.conv_of:
            return self.conv_of[ann]
        if n.union is not None:
            name = self.names.get(id(n))
            if name is not None:
                return self.conv_of.get(name, "None")
            convs = tuple((b.loc, _lit(self._conv(b, self.names.get(id(b), "")))) for b in n.union)
            return "None" if all(c is None for _, c in convs) else repr(("u", convs))
        if n.types is not None and n.types == {"array"} and isinstance(n.items, Node):
            inner = self._conv(n.items, self.names.get(id(n.items), ""))
            return "None" if inner == "None" else repr(("l", _lit(inner)))
        if n.types is not None and n.types == {"object"} and isinstance(n.additional, Node) and not n.properties:
            inner = self._conv(n.additional, self.names.get(id(n.additional), ""))
            return "None" if inner == "None" else repr(("d", _lit(inner)))
        return "None"

    def _union(self, n: Node, hint: str, top: bool) -> str:
        assert n.union is not None
        name = self._fresh(n.title or hint, n.title is not None)
        self.names[id(n)] = name
        if self.target == "dataclasses":
            self.conv_of[name] = repr(("n", name))
        branch_hints = [b.title or f"{hint}Option{i + 1}" for i, b in enumerate(n.union)]
        before = set(self.hits)
        branches = [self.expr(b, h) for b, h in zip(n.union, branch_hints, strict=True)]
        recursive = name in self.hits and name not in before
        doc = _doc(n)
        static = " | ".join(dict.fromkeys(branches))
        if self.target == "typeddict" and n.discriminator is not None:
            tags = [branch_tag(b, n.discriminator) for b in n.union]
            if all(t is not None for t in tags):
                self.guards.append((name, n.discriminator, tags))
        native = self.target != "msgspec" or (not recursive and self._native(n.union, branches))
        if native and not (n.title or top or recursive):
            # an untitled union nothing refers back to is written inline (`str | None`)
            del self.names[id(n)]
            self.used.discard(name)
            self.conv_of.pop(name, None)
            return static
        if self.target == "dataclasses":
            convs = tuple((b.loc, _lit(self._conv(b, e))) for b, e in zip(n.union, branches, strict=True))
            self.union_convs.append((name, convs))
        if native:
            self.aliases.append((name, static, doc))
            self.order.append(("alias", len(self.aliases) - 1))
            self.runtime_of[name] = name
            self.check_of[name] = [c for e, b in zip(branches, n.union, strict=True) for c in self._checks(e, b)]
            return name
        runtime = [self.runtime_of.get(e, e) for e in branches]
        checks = [c for e, b in zip(branches, n.union, strict=True) for c in self._checks(e, b)]
        tag = None
        disc = n.discriminator
        if disc is not None:
            tags = [branch_tag(b, disc) for b in n.union]
            if all(t is not None for t in tags):
                tag = (disc, {t: r for t, r in zip(tags, runtime, strict=True)})
        self.unions.append(_Union(name, doc, branches, runtime, checks, n.one_of is not None, tag))
        self.order.append(("union", len(self.unions) - 1))
        self.runtime_of[name] = name
        self.check_of[name] = [name]
        return name

    def _checks(self, expr: str, n: Node) -> list[str]:
        if expr in self.check_of:
            return self.check_of[expr]
        if expr == "Any":
            return ["object"]
        if n.enum is not None:
            return sorted({"str" if isinstance(v, str) else _pytype(v) for v in n.enum})
        kinds = {"string": ["str"], "integer": ["int"], "number": ["int", "float"], "boolean": ["bool"]}
        kinds |= {"null": ["type(None)"], "array": ["list"], "object": ["dict"]}
        out: list[str] = []
        for t in sorted(n.types or ()):
            out += kinds[t]
        return out or ["object"]

    def _native(self, branches: list[Node], exprs: list[str]) -> bool:
        """msgspec takes the union as it is: no hooked member, at most one type of each
        kind (one str-like, one array, one object-like...)."""
        seen: set[str] = set()
        for b, e in zip(branches, exprs, strict=True):
            if any(u.name == e for u in self.unions) or any(r[0] == e for r in self.refined) or e == "Any":
                return False
            if b.union is not None:
                return False
            kinds = self._kinds(b)
            if kinds & seen:
                return False
            seen |= kinds
        return True

    def _kinds(self, n: Node) -> set[str]:
        if n.enum is not None:
            return {"str" if isinstance(v, str) else _pytype(v) for v in n.enum}
        out: set[str] = set()
        for t in n.types or ():
            out.add({"integer": "int", "number": "float", "string": "str", "null": "none"}.get(t, t))
        return out


_RESERVED = frozenset(
    {
        "Any",
        "Annotated",
        "Literal",
        "Never",
        "TypeAlias",
        "TypeGuard",
        "TypedDict",
        "NotRequired",
        "Absent",
        "ABSENT",
        "UNSET",
        "UnsetType",
        "dataclass",
        "field",
        "msgspec",
        "validate",
        "decode",
        "convert",
        "dec_hook",
        "from_dict",
        "to_dict",
    }
)


def _camel(text: str) -> str:
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", text) if p]
    out = "".join(p[:1].upper() + p[1:] for p in parts)
    return ("M" + out) if out[:1].isdigit() else out


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _attr(key: str, taken: set[str]) -> str:
    attr = re.sub(r"\W", "_", key) or "field"
    if attr[0].isdigit():
        attr = "f_" + attr
    if keyword.iskeyword(attr) or attr.startswith("__") or attr in _RESERVED:
        attr += "_"  # a class body must not shadow the names its defaults use (field, UNSET)
    while attr in taken:
        attr += "_"
    return attr


def _pytype(v: Any) -> str:
    if v is None:
        return "type(None)"
    return type(v).__name__


def _lit(spec: str) -> Any:
    """A conversion spec back from its literal (specs nest)."""
    return ast.literal_eval(spec)


def _meta(**kw: Any) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kw.items() if v is not None)


def _doc(n: Node) -> str:
    d = n.raw.get("description") if isinstance(n.raw, dict) else None
    return d if isinstance(d, str) else ""


def _docstring(text: str, indent: str) -> str:
    if not text:
        return ""
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    return f'{indent}"""{body}"""\n'


# -- rendering ------------------------------------------------------------------------

_HEAD = '''"""turnspec {fmt} {rev} as {target} models. Generated by `turnspec models --target {target}`. Do not edit.

{how}
"""

from __future__ import annotations

'''

_HOW = {
    "typeddict": (
        "Static types only: a TypedDict checks nothing at run time. Validate with `validate(obj)` or\n"
        "`validate_json(data)`, which run the bundled JSON Schema (bundle.json beside this module)\n"
        "through python-jsonschema and return the document typed. Open objects (additive fields,\n"
        "spec §10.2) keep their extra keys at run time; the TypedDicts do not list them. Constraints\n"
        "(patterns, bounds) are checked by `validate`, not by the types. Narrow a content block with\n"
        '`is_known_content_block(block)`, then on `block["type"]`.'
    ),
    "dataclasses": (
        "Build with `from_dict(obj)` or `from_json(data)`: the bundled JSON Schema (bundle.json beside\n"
        "this module) validates through python-jsonschema first, then the dataclasses are built;\n"
        "`to_dict(value)` gives the JSON value back (schema defaults filled in). The constructors\n"
        "themselves do not validate. A field the document may leave out is `ABSENT` when it did.\n"
        "Additive fields of open objects are kept in `extra_properties`. Narrow a content block\n"
        "with `isinstance(block, UnknownBlock)` first, then on `block.type`."
    ),
    "msgspec": (
        "Decode with `decode(data)` (msgspec.json.decode with `dec_hook`) or `convert(obj)`; every\n"
        "constraint is a msgspec.Meta. Unions msgspec cannot express natively (the untagged\n"
        "unknown block, two constrained strings) are decoded by `dec_hook` in two steps: builtins\n"
        "first, then the one matching branch through msgspec.convert; mypy sees the plain union.\n"
        "Known differences: a float with zero fraction (5.0) is not an int to msgspec (JSON Schema\n"
        "says it is); additive fields of open objects are accepted but not kept. uniqueItems and\n"
        "integer bounds beyond int64 are checked by `dec_hook` after msgspec decoded the value.\n"
        "Narrow a content block with\n"
        "`isinstance(block, UnknownBlock)` first, then on `block.type`."
    ),
}


# python-jsonschema ships no type information: without this ignore a consumer's
# `mypy --strict` fails on the generated package unless types-jsonschema is installed, and
# `unused-ignore` keeps it quiet where the stubs are installed
_IMPORT_JSONSCHEMA = (
    "import jsonschema  # type: ignore[import-untyped, unused-ignore]\nfrom referencing import Registry, Resource\n\n"
)


def _render(e: _Emitter, root: str | None) -> str:
    out: list[str] = [_HEAD.format(fmt=e.fmt, rev=e.rev, target=e.target, how=_HOW[e.target])]
    t = e.target
    if t == "typeddict":
        out.append(
            "import json\nfrom functools import cache\nfrom pathlib import Path\n"
            "from typing import Any, Literal, Never, NotRequired, TypeAlias, TypedDict, TypeGuard, cast\n\n"
            + _IMPORT_JSONSCHEMA
        )
    elif t == "dataclasses":
        out.append(
            "import enum\nimport json\nfrom dataclasses import dataclass, field\nfrom functools import cache\n"
            "from pathlib import Path\nfrom typing import Any, Final, Literal, Never, TypeAlias\n\n"
            + _IMPORT_JSONSCHEMA
            + '\nclass Absent(enum.Enum):\n    """The type of ABSENT: a field the document left out."""\n\n'
            '    ABSENT = "absent"\n\n\nABSENT: Final = Absent.ABSENT\n\n'
        )
    else:
        out.append(
            "from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, Never, TypeAlias\n\n"
            "import msgspec\nfrom msgspec import UNSET, UnsetType\n\n" + _MSGSPEC_UNION
        )
    for c in e.classes:
        out.append(_render_class(t, c))
    # aliases and hooked unions in dependency order (children first)
    for kind, i in e.order:
        if kind == "alias":
            name, expr, doc = e.aliases[i]
            if re.search(rf"\b{name}\b", expr):
                expr = repr(expr)  # recursive: a string, which mypy reads as the same alias
            out.append(f"\n{name}: TypeAlias = {expr}\n" + _docstring(doc, ""))
        elif kind == "refined":
            out.append(_render_refined(*e.refined[i]))
        else:
            out.append(_render_union(e.unions[i]))
    out.append(_TAIL[t].format(root=root or "Any", extra=EXTRA))
    for name, disc, tags in e.guards:
        fn = "is_" + _snake(name)
        out.append(
            f"\n\n_{fn.upper()}_TAGS: frozenset[Any] = frozenset({tuple(tags)!r})\n\n\n"
            f"def {fn}(value: object) -> TypeGuard[{name}]:\n"
            f'    """True when `value` carries one of the {name} tags (on a validated document: it is one)."""\n'
            f"    tag = value.get({disc!r}) if isinstance(value, dict) else None\n"
            f"    return isinstance(tag, str | int | float | bool | None) and tag in _{fn.upper()}_TAGS\n"
        )
    if t == "dataclasses":
        out.append("\n\n_CLASSES: dict[str, tuple[type[Any], tuple[tuple[str, str, Any], ...], bool]] = {\n")
        for c in e.classes:
            fields = tuple((f.attr, f.key, _lit(f.conv)) for f in c.fields)
            out.append(f"    {c.name!r}: ({c.name}, {fields!r}, {c.open!r}),\n")
        out.append("}\n")
        out.append("_UNIONS: dict[str, tuple[tuple[str, Any], ...]] = {\n")
        for name, convs in e.union_convs:
            out.append(f"    {name!r}: {convs!r},\n")
        out.append("}\n")
        root_spec = _lit(e.conv_of.get(root or "", "None"))
        out.append(f"_ROOT = {e.root_loc!r}\n_ROOT_SPEC: Any = {root_spec!r}\n")
    text = "".join(out)
    return re.sub(r"\n{3,}(?=\S)", "\n\n\n", text).rstrip("\n") + "\n"


def _render_class(t: str, c: _Class) -> str:
    body: list[str] = []
    if t == "typeddict":
        functional = any(not f.key.isidentifier() or keyword.iskeyword(f.key) for f in c.fields)
        items = [(f.key, f.annotation if f.required else f"NotRequired[{f.annotation}]") for f in c.fields]
        if functional:
            inner = ", ".join(f"{k!r}: {a!r}" for k, a in items)
            return f"\n\n{c.name} = TypedDict({c.name!r}, {{{inner}}})\n" + _docstring(c.doc, "")
        body = [f"    {k}: {a}\n" for k, a in items]
        head = f"\n\nclass {c.name}(TypedDict):\n"
    elif t == "dataclasses":
        head = f"\n\n@dataclass(frozen=True, kw_only=True, slots=True)\nclass {c.name}:\n"
        for f in c.fields:
            if f.required:
                body.append(f"    {f.attr}: {f.annotation}\n")
            elif f.has_default:
                body.append(f"    {f.attr}: {f.annotation} = {_default(f.default, 'field')}\n")
            else:
                body.append(f"    {f.attr}: {f.annotation} | Absent = ABSENT\n")
        if c.open:
            body.append(f"    {EXTRA}: dict[str, Any] = field(default_factory=dict)\n")
    else:
        opts = "kw_only=True, omit_defaults=True" + ("" if c.open else ", forbid_unknown_fields=True")
        head = f"\n\nclass {c.name}(msgspec.Struct, {opts}):\n"
        for f in c.fields:
            rename = f.attr != f.key
            if f.required:
                tail = f" = msgspec.field(name={f.key!r})" if rename else ""
                body.append(f"    {f.attr}: {f.annotation}{tail}\n")
                continue
            ann = f.annotation if f.has_default else f"{f.annotation} | UnsetType"
            if f.annotation == "Never":
                ann = "UnsetType"  # a property the schema forbids (`false`): only absence decodes
            if f.has_default and isinstance(f.default, list | dict) and f.default:
                dflt = f"msgspec.field(default_factory=lambda: {f.default!r}" + (
                    f", name={f.key!r})" if rename else ")"
                )
            elif f.has_default:
                dflt = f"msgspec.field(default={f.default!r}, name={f.key!r})" if rename else repr(f.default)
            else:
                dflt = f"msgspec.field(default=UNSET, name={f.key!r})" if rename else "UNSET"
            body.append(f"    {f.attr}: {ann} = {dflt}\n")
    doc = _docstring(c.doc, "    ")
    if not body and not doc:
        body = ["    pass\n"]
    return head + doc + ("\n" if doc and body else "") + "".join(body)


def _default(value: Any, factory: str) -> str:
    if isinstance(value, list | dict):
        return f"{factory}(default_factory=lambda: {value!r})"
    return repr(value)


def _render_union(u: _Union) -> str:
    tag, table = (
        (None, "{}") if u.tag is None else (u.tag[0], "{" + ", ".join(f"{k!r}: {v}" for k, v in u.tag[1].items()) + "}")
    )
    return (
        f"\n\nif TYPE_CHECKING:\n    {u.name}: TypeAlias = {' | '.join(dict.fromkeys(u.branches))}\n"
        f"else:\n\n    class {u.name}(_Union):\n"
        + (_docstring(u.doc, "        ") + "\n" if u.doc else "")
        + f"        one = {u.one!r}\n"
        f"        tag = {tag!r}\n\n"
        f"        @staticmethod\n        def options() -> tuple[Any, ...]:\n"
        f"            return ({''.join(r + ', ' for r in u.runtime)})\n\n"
        f"        @staticmethod\n        def tags() -> dict[Any, Any]:\n            return {table}\n\n"
        f"        @staticmethod\n        def kinds() -> tuple[type, ...]:\n"
        f"            return ({''.join(c + ', ' for c in dict.fromkeys(u.checks))})\n"
    )


def _render_refined(name: str, doc: str, runtime: str, kind: str, unique: bool, bounds: dict[str, Any]) -> str:
    return (
        f"\n\nif TYPE_CHECKING:\n    {name}: TypeAlias = {runtime}\n"
        f"else:\n\n    class {name}(_Refined):\n"
        + (_docstring(doc, "        ") + "\n" if doc else "")
        + f"        unique = {unique!r}\n"
        f"        bounds = {bounds!r}\n\n"
        f"        @staticmethod\n        def options() -> tuple[Any, ...]:\n            return ({runtime},)\n\n"
        f"        @staticmethod\n        def kinds() -> tuple[type, ...]:\n            return ({kind},)\n"
    )


_MSGSPEC_UNION = '''
class _UnionMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        kinds: tuple[type, ...] = getattr(cls, "kinds")()
        return isinstance(obj, kinds)


class _Union(metaclass=_UnionMeta):
    """A union msgspec cannot decode by itself, decoded by `dec_hook`: the branch its
    tag names, or else the first (anyOf) or the only (oneOf) branch that converts."""

    one: ClassVar[bool] = False
    tag: ClassVar[str | None] = None

    # functions, not attributes: a branch may be defined further down (or be the union)
    @staticmethod
    def options() -> tuple[Any, ...]:
        return ()

    @staticmethod
    def tags() -> dict[Any, Any]:
        return {}

    @staticmethod
    def kinds() -> tuple[type, ...]:
        return ()

    @classmethod
    def decode(cls, obj: Any) -> Any:
        candidates = cls.options()
        key = cls.tag
        if key is not None:
            table = cls.tags()
            value = obj.get(key) if isinstance(obj, dict) else None
            branch = table.get(value) if type(value) in (str, int) else None
            if branch is None:
                raise ValueError(f"{cls.__name__}: `{key}` is none of {sorted(map(str, table))}")
            candidates = (branch,)
        found: list[Any] = []
        errors: list[str] = []
        for branch in candidates:
            try:
                value = msgspec.convert(obj, branch, dec_hook=dec_hook)
            except msgspec.ValidationError as exc:
                errors.append(str(exc))
                continue
            if not cls.one:
                return value
            found.append(value)
        if len(found) == 1:
            return found[0]
        if found:
            raise ValueError(f"{cls.__name__}: matches {len(found)} branches of a oneOf")
        raise ValueError(f"{cls.__name__}: no branch matches ({'; '.join(errors)})")


def _json_key(v: Any) -> Any:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return (type(v).__name__, v)
    if isinstance(v, int | float):
        return ("n", v)
    if isinstance(v, list | tuple):
        return ("a", tuple(_json_key(x) for x in v))
    if isinstance(v, dict):
        return ("o", tuple(sorted((k, _json_key(x)) for k, x in v.items())))
    return ("o", _json_key(msgspec.to_builtins(v)))


class _Refined(_Union):
    """A type with a constraint msgspec.Meta cannot hold (uniqueItems, an integer bound
    beyond int64): msgspec decodes the base type, then `decode` checks the rest."""

    unique: ClassVar[bool] = False
    bounds: ClassVar[dict[str, int | float]] = {}

    @classmethod
    def decode(cls, obj: Any) -> Any:
        value = msgspec.convert(obj, cls.options()[0], dec_hook=dec_hook)
        if cls.unique and len({_json_key(v) for v in value}) != len(value):
            raise ValueError("items are not unique")
        for op, bound in cls.bounds.items():
            ok = {"ge": value >= bound, "le": value <= bound, "gt": value > bound, "lt": value < bound}[op]
            if not ok:
                raise ValueError(f"expected a value {op} {bound}")
        return value

'''

_TAIL = {
    "typeddict": '''

@cache
def _validator() -> jsonschema.Draft202012Validator:
    doc = json.loads((Path(__file__).parent / "bundle.json").read_text(encoding="utf-8"))
    registry: Registry[Any] = Registry().with_resource(doc["$id"], Resource.from_contents(doc)).crawl()
    return jsonschema.Draft202012Validator(doc, registry=registry)


def validate(obj: object) -> {root}:
    """`obj` typed, when the bundled schema accepts it; jsonschema.ValidationError otherwise."""
    error = jsonschema.exceptions.best_match(_validator().iter_errors(obj))
    if error is not None:
        raise error
    return cast({root}, obj)


def validate_json(data: str | bytes) -> {root}:
    """`validate(json.loads(data))`."""
    return validate(json.loads(data))
''',
    "dataclasses": '''

@cache
def _registry() -> Registry[Any]:
    doc = json.loads((Path(__file__).parent / "bundle.json").read_text(encoding="utf-8"))
    registry: Registry[Any] = Registry().with_resource(doc["$id"], Resource.from_contents(doc)).crawl()
    return registry


@cache
def _validator(location: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({{"$ref": location}}, registry=_registry())


def _build(spec: Any, value: Any) -> Any:
    if spec is None:
        return value
    kind = spec[0]
    if kind == "n":
        return _build(("u", _UNIONS[spec[1]]), value)
    if kind == "l":
        return [_build(spec[1], v) for v in value]
    if kind == "d":
        return {{k: _build(spec[1], v) for k, v in value.items()}}
    if kind == "u":
        for location, sub in spec[1]:
            if _validator(location).is_valid(value):
                return _build(sub, value)
        raise ValueError("no branch of the union accepts the value")
    cls, fields, is_open = _CLASSES[spec[1]]
    kwargs = {{attr: _build(sub, value[key]) for attr, key, sub in fields if key in value}}
    if is_open:
        keys = {{key for _, key, _ in fields}}
        kwargs["{extra}"] = {{k: v for k, v in value.items() if k not in keys}}
    return cls(**kwargs)


def _dump(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {{k: _dump(v) for k, v in value.items()}}
    spec = _CLASSES.get(type(value).__name__)
    if spec is None or not isinstance(value, spec[0]):
        return value
    out: dict[str, Any] = {{}}
    for attr, key, _ in spec[1]:
        v = getattr(value, attr)
        if v is not ABSENT:
            out[key] = _dump(v)
    if spec[2]:
        out.update(getattr(value, "{extra}"))
    return out


def from_dict(obj: object) -> {root}:
    """The dataclasses of `obj`, when the bundled schema accepts it; jsonschema.ValidationError otherwise."""
    error = jsonschema.exceptions.best_match(_validator(_ROOT).iter_errors(obj))
    if error is not None:
        raise error
    result: {root} = _build(_ROOT_SPEC, obj)
    return result


def from_json(data: str | bytes) -> {root}:
    """`from_dict(json.loads(data))`."""
    return from_dict(json.loads(data))


def to_dict(value: object) -> Any:
    """The JSON value of a model (schema defaults filled in, ABSENT fields left out)."""
    return _dump(value)
''',
    "msgspec": '''

def dec_hook(tp: Any, obj: Any) -> Any:
    """msgspec's hook for the unions it cannot decode by itself (see the module docstring)."""
    if isinstance(tp, type) and issubclass(tp, _Union):
        return tp.decode(obj)
    raise NotImplementedError(f"turnspec models: no decoder for {{tp!r}}")


def decode(data: bytes | str) -> {root}:
    """A validated {root} from JSON; msgspec.ValidationError names the path otherwise."""
    result: {root} = msgspec.json.decode(data, type={root}, dec_hook=dec_hook)
    return result


def convert(obj: object) -> {root}:
    """A validated {root} from already parsed JSON (dicts, lists, scalars)."""
    result: {root} = msgspec.convert(obj, type={root}, dec_hook=dec_hook)
    return result
''',
}


# -- TypeScript: json-schema-to-typescript over the bundle ------------------------------

TS_GENERATOR = "json-schema-to-typescript@16"


def local_bundle(fmt: str, revision: str) -> dict[str, Any]:
    """The bundle with every `$ref` rewritten to a local `#/$defs/<file>...` pointer and
    the embedded `$id`s dropped. The validating meaning is the same (each `$ref` still
    names the same schema); the form is the one JSON Schema tools without 2020-12
    embedded-resource support read (json-schema-to-typescript's ref parser resolves a
    relative `$ref` against the file system, not against the enclosing `$id`)."""
    doc = bundle(fmt, revision)
    ids = {sub["$id"]: name for name, sub in doc["$defs"].items()}

    def fix(node: Any, base: str) -> Any:
        if isinstance(node, dict):
            out: dict[str, Any] = {}
            for k, v in node.items():
                if k == "$ref" and isinstance(v, str):
                    uri, _, frag = urljoin(base, v).partition("#")
                    name = ids.get(uri)
                    out[k] = f"#/$defs/{_escape_pointer(name)}{frag}" if name is not None else v
                elif k in ("$id", "$schema"):
                    continue
                else:
                    out[k] = fix(v, base)
            return out
        if isinstance(node, list):
            return [fix(v, base) for v in node]
        return node

    out: dict[str, Any] = {k: v for k, v in doc.items() if k not in ("$defs", "$ref")}
    if "$ref" in doc:
        out["$ref"] = f"#/$defs/{_escape_pointer(ids[doc['$ref']])}"
    out["$defs"] = {name: fix(sub, sub["$id"]) for name, sub in doc["$defs"].items()}
    return out


_escape_pointer = pointers.token


def json2ts() -> str | None:
    """The json-schema-to-typescript CLI: $TURNSPEC_JSON2TS, or `json2ts` on PATH."""
    env = os.environ.get("TURNSPEC_JSON2TS")
    if env:
        return env if Path(env).is_file() else None
    return shutil.which("json2ts")


def _typescript(fmt: str, rev: str) -> dict[str, bytes]:
    exe = json2ts()
    if exe is None or shutil.which("node") is None:
        raise InputError(
            f"--target typescript needs node and {TS_GENERATOR} (npm install -g {TS_GENERATOR}, "
            "or TURNSPEC_JSON2TS=path/to/node_modules/.bin/json2ts)"
        )
    with tempfile.TemporaryDirectory(prefix="turnspec-ts-") as tmp:
        src, dst = Path(tmp) / "bundle.json", Path(tmp) / "index.d.ts"
        src.write_text(json.dumps(local_bundle(fmt, rev), indent=2))
        cmd = [exe, "--input", str(src), "--output", str(dst), "--cwd", tmp, "--unreachableDefinitions"]
        proc = _run(cmd, "json2ts")
        if proc.returncode != 0 or not dst.is_file():
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise InputError(f"json2ts failed on {fmt} {rev}: {last}")
        types = dst.read_bytes()
    declared = set(re.findall(r"^export (?:interface|type) (\w+)\b", types.decode(), flags=re.MULTILINE))
    # the schema beside the types: TypeScript types check nothing at run time, a
    # 2020-12 validator (e.g. ajv's Ajv2020) over bundle.json does
    return {
        "index.d.ts": types,
        "guards.ts": typescript_guards(fmt, rev, declared).encode(),
        "bundle.json": _bundle_bytes(fmt, rev),
    }


@dataclass(frozen=True)
class TaggedUnion:
    """A union of the bundle whose members carry a constant tag: `members` maps each
    tagged member's title to its tag value; `open` says a member without a constant tag
    (an unknown block) is in it, so a tag outside `members` may still be valid data."""

    title: str
    tag: str
    members: dict[str, str]
    open: bool


def tagged_unions(fmt: str, rev: str) -> list[TaggedUnion]:
    """Every titled `oneOf`/`anyOf` of `$ref`s in the bundle whose members are objects with
    one property holding a `const` string in each (a member that is itself such a union is
    flattened into it), in the bundle's order."""
    doc = local_bundle(fmt, rev)

    def resolve(ref: str) -> Any:
        node: Any = doc
        for token in ref.removeprefix("#/").split("/"):
            node = node[pointers.unescape(token)]
        return node

    def titled(node: Any) -> list[Any]:
        out: list[Any] = []
        if isinstance(node, dict):
            if isinstance(node.get("title"), str) and isinstance(node.get("oneOf", node.get("anyOf")), list):
                out.append(node)
            for sub in node.get("$defs", {}).values():
                out += titled(sub)
        return out

    def consts(member: Any) -> dict[str, str]:
        props = member.get("properties", {}) if member.get("type") == "object" else {}
        return {k: v["const"] for k, v in props.items() if isinstance(v, dict) and isinstance(v.get("const"), str)}

    def expand(union: Any, tag: str | None) -> tuple[dict[str, str], bool, str | None] | None:
        members: dict[str, str] = {}
        is_open = False
        for branch in union.get("oneOf", union.get("anyOf", [])):
            if not isinstance(branch, dict) or not isinstance(branch.get("$ref"), str):
                return None
            member = resolve(branch["$ref"])
            if isinstance(member.get("oneOf", member.get("anyOf")), list):
                inner = expand(member, tag)
                if inner is None:
                    return None
                members.update(inner[0])
                is_open, tag = is_open or inner[1], inner[2]
                continue
            found = consts(member)
            keys = [tag] if tag is not None else (["type"] if "type" in found else sorted(found)[:1])
            if not keys or keys[0] not in found:
                if member.get("type") == "object" and isinstance(member.get("title"), str):
                    is_open = True  # a member with the tag unconstrained: the fallback branch
                    continue
                return None
            tag = keys[0]
            members[member["title"]] = found[tag]
        return members, is_open, tag

    out: list[TaggedUnion] = []
    for sub in doc["$defs"].values():
        for union in titled(sub):
            got = expand(union, None)
            if got is not None and got[0] and got[2] is not None and len(set(got[0].values())) == len(got[0]):
                out.append(TaggedUnion(union["title"], got[2], got[0], got[1]))
    return out


def _upper_snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def typescript_guards(fmt: str, rev: str, declared: set[str] | None = None) -> str:
    """`guards.ts`: for each tagged union, `isX(v): v is X` per member and, for a closed
    union (every member tagged), `is<Union>(v)`, so `if (isTextBlock(b)) b.text` type-checks where
    `b.type === "text"` cannot narrow (the unknown block's `type` is any string). A guard
    reads the tag only; `bundle.json` validates. Types json2ts did not declare under their
    title (`declared`, when given) get no guard."""

    def ok(name: str) -> bool:
        return declared is None or name in declared

    unions = [u for u in tagged_unions(fmt, rev) if all(ok(m) for m in u.members)]
    lines = [
        f"// Generated by `turnspec models --target typescript` from {fmt} {rev}: type guards of its",
        "// tagged unions. Each reads the tag only; validate the data with bundle.json (e.g. ajv's Ajv2020).",
        'export type * from "./index";',
    ]
    names = sorted({m for u in unions for m in u.members} | {u.title for u in unions if not u.open and ok(u.title)})
    if names:
        lines.append(f'import type {{ {", ".join(names)} }} from "./index";')
    lines += [
        "",
        "function tagOf(v: unknown, key: string): unknown {",
        '  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined;',
        "}",
    ]
    done: set[str] = set()
    for u in unions:
        if not u.open and ok(u.title) and u.title not in done:
            done.add(u.title)
            const = f"{_upper_snake(u.title)}_{_upper_snake(u.tag)}S"
            values = ", ".join(json.dumps(v) for v in u.members.values())
            lines += [
                "",
                f"/** The `{u.tag}` values of {u.title}. */",
                f"export const {const}: readonly string[] = [{values}];",
                f"export function is{u.title}(v: unknown): v is {u.title} {{",
                f"  const tag = tagOf(v, {json.dumps(u.tag)});",
                f'  return typeof tag === "string" && {const}.includes(tag);',
                "}",
            ]
        for member, value in u.members.items():
            if member in done:
                continue
            done.add(member)
            lines += [
                "",
                f"/** `{u.tag}: {json.dumps(value)}`: a {member} of {u.title}. */",
                f"export function is{member}(v: unknown): v is {member} {{",
                f"  return tagOf(v, {json.dumps(u.tag)}) === {json.dumps(value)};",
                "}",
            ]
    return "\n".join(lines) + "\n"


def _bundle_bytes(fmt: str, rev: str) -> bytes:
    """The bundle shipped beside the models: patterns dialect-neutral, so stock
    python-jsonschema (and any ECMA-262 validator) reads it as the oracle does."""
    return json.dumps(neutral_patterns(bundle(fmt, rev)), indent=2, ensure_ascii=False).encode() + b"\n"
