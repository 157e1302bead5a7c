"""Schema validation: a compiled fast path, python-jsonschema as the oracle.

`jsonschema_rs` answers "valid?" for the common case at native speed; any document it
rejects is validated again by python-jsonschema, the reference implementation, whose
errors are turned into findings. tests/test_differential.py proves both engines return the
same verdict on a corpus of valid and targeted invalid documents.

Union errors are resolved the way a reader thinks about them: for a `oneOf`/`anyOf`
whose branches are tagged by a discriminator (`type`), the branch the tag selects is the
one reported, so `{"type": "text", "text": 5}` reads "TextBlock: /content/0/text:
expected string, got integer" and not "is not valid under any of the given schemas".
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin

from . import pointers
from .schemas import SchemaSet

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from referencing import Registry

# python-jsonschema and referencing (~50 ms to import) are imported where the oracle is
# first needed: a run over valid data never builds it (jsonschema-rs answers first)

_JSON_TYPES = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


def json_type(value: object) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


PATTERN_DESCRIPTIONS: dict[str, str] = {
    "Timestamp": "an RFC 3339 UTC time like 2026-05-08T12:00:00.000000Z",
}
"""What a string of a titled schema type looks like, said in a TS020 message instead of
its pattern (a regex a reader has to decode)."""


@functools.lru_cache(maxsize=512)
def ecma_regex(pattern: str) -> re.Pattern[str]:
    """Compile an ECMA-262 `pattern` with Python's `re`, fixing two dialect gaps.

    python-jsonschema hands patterns to `re.search` unchanged, so `$` also matches before
    a final newline and `\\d`/`\\w` match non-ASCII digits and letters; ECMA-262 (which
    JSON Schema names) and the Rust engines used by jsonschema-rs and pydantic do not.
    A bare `$` becomes an end-of-input assertion and the pattern is compiled ASCII-only.
    """
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
        elif c == "$":
            c = r"(?![\s\S])"
        out.append(c)
        i += 1
    return re.compile("".join(out), re.ASCII)


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterator[ValidationError]:
    from jsonschema.exceptions import ValidationError  # function-level: see the imports

    if isinstance(instance, str) and not ecma_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def oracle_class() -> Any:
    """python-jsonschema's 2020-12 validator with the ECMA-262 reading of `pattern`."""
    import jsonschema  # function-level: see the imports

    return jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        jsonschema.Draft202012Validator, {"pattern": _ecma_pattern}
    )


def __getattr__(name: str) -> Any:
    if name == "OracleValidator":  # the class, built at first use (PEP 562)
        return oracle_class()
    raise AttributeError(name)


def _undialected(doc: Any) -> Any:
    return {k: v for k, v in doc.items() if k != "$schema"} if isinstance(doc, dict) else doc


def oracle_registry(*sets: SchemaSet) -> Registry[Any]:
    """The registry the oracle resolves `$ref`s through: every document minus `$schema`.

    python-jsonschema re-picks the validator class from `$schema` each time it enters
    a resource (`evolve` calls `validator_for`), which would swap `OracleValidator` for
    the stock class, and its `re.search` reading of `pattern`, below the first
    cross-file `$ref` (`"0.1\n"` would pass as a decimal_usd). Without `$schema` the
    current class is kept; every project schema is 2020-12 (the default) anyway.
    """
    from referencing import Registry, Resource  # function-level: see the imports
    from referencing.jsonschema import DRAFT202012

    resources = [
        (uri, Resource.from_contents(_undialected(doc), default_specification=DRAFT202012))
        for s in sets
        for uri, doc in s.resources()
    ]
    return Registry().with_resources(resources).crawl()


def oracle_for(schema: Any, *sets: SchemaSet, registry: Registry[Any] | None = None, **kw: Any) -> Any:
    """A reference validator for `schema` (e.g. `{"$ref": uri}`) over `sets`."""
    return oracle_class()(_undialected(schema), registry=registry or oracle_registry(*sets), **kw)


_REQUIRED = re.compile(r"^('.*'|\".*\") is a required property$")


@dataclass(frozen=True, slots=True)
class SchemaError:
    """One schema violation: where in the instance, and what is wrong."""

    pointer: str
    message: str
    keyword: str


pointer_of = pointers.pointer


class SchemaValidator:
    """Validates instances against one root schema of a `SchemaSet`."""

    def __init__(self, schemas: SchemaSet, root: str, *extra: SchemaSet) -> None:
        self.schemas = schemas
        self.root_name = root
        self.schema = schemas[root]
        self._extra = extra
        # a root without `$id` sits at its registry URI, so its relative `$ref`s ("b.json")
        # resolve against the set's folder as they do between the files
        self._rooted = self.schema if "$id" in self.schema else {"$id": schemas.uri(root), **self.schema}
        self.title = str(self.schema.get("title", root))

    @functools.cached_property
    def _fast(self) -> Any:
        """The compiled validator, built at first use (a run whose lines all take the
        canonical fast path never needs it, nor the ~100 ms of loading jsonschema-rs)."""
        import jsonschema_rs  # loaded only when a document is validated against the schema

        resources = [(uri, doc) for s in (self.schemas, *self._extra) for uri, doc in s.resources()]
        return jsonschema_rs.validator_for(
            self._rooted,
            registry=jsonschema_rs.Registry(resources),
            validate_formats=False,
        )

    @functools.cached_property
    def registry(self) -> Registry[Any]:
        """The oracle's registry, built at first use; it also serves `_title_of`
        (stripping `$schema` keeps titles)."""
        return oracle_registry(self.schemas, *self._extra)

    @functools.cached_property
    def _oracle(self) -> Any:
        return oracle_for(self._rooted, registry=self.registry)

    def is_valid(self, instance: Any) -> bool:
        """Fast verdict (compiled validator)."""
        return bool(self._fast.is_valid(instance))

    def oracle_is_valid(self, instance: Any) -> bool:
        """Reference verdict (python-jsonschema)."""
        return bool(self._oracle.is_valid(instance))

    def errors(self, instance: Any) -> list[SchemaError]:
        """Located, readable errors from the oracle (empty when valid)."""
        out: list[SchemaError] = []
        for err in self._oracle.iter_errors(instance):
            for leaf, title in self._leaves(err, self.title):
                out.append(self._describe(leaf, title))
        out.sort(key=lambda e: e.pointer)
        return out

    # -- union resolution -------------------------------------------------------------

    def _title_of(self, subschema: Any) -> str | None:
        if not isinstance(subschema, dict):
            return None
        if "title" in subschema:
            return str(subschema["title"])
        ref = subschema.get("$ref")
        if isinstance(ref, str) and not ref.startswith("#"):
            try:
                target = self.registry.contents(urljoin(self.schemas.base_uri, ref.split("#")[0]))
            except Exception:  # an unresolvable ref only costs us the title
                return None
            if isinstance(target, dict) and "title" in target:
                return str(target["title"])
        return None

    def _leaves(self, err: ValidationError, title: str) -> Iterator[tuple[ValidationError, str]]:
        if err.validator not in ("oneOf", "anyOf") or not err.context:
            yield err, title
            return
        by_branch: dict[int, list[ValidationError]] = {}
        for sub in err.context:
            by_branch.setdefault(int(sub.relative_schema_path[0]), []).append(sub)
        branches = err.schema[err.validator] if isinstance(err.schema, dict) else []
        disc = "type"
        if isinstance(err.schema, dict) and isinstance(err.schema.get("discriminator"), dict):
            disc = str(err.schema["discriminator"].get("propertyName", "type"))

        def rejects_outright(errors: list[ValidationError]) -> bool:
            for e in errors:
                rel = list(e.relative_path)
                if not rel and e.validator == "type":
                    return True  # wrong JSON type for the whole branch (e.g. the null branch)
                if rel == [disc] and e.validator in ("const", "enum", "pattern", "type"):
                    return True  # the discriminator selects another branch
            return False

        chosen = [b for b, errs in by_branch.items() if not rejects_outright(errs)]
        if len(chosen) == 1:
            b = chosen[0]
            branch_title = self._title_of(branches[b]) if b < len(branches) else None
            for sub in by_branch[b]:
                yield from self._leaves(sub, branch_title or title)
            return
        if isinstance(err.instance, dict) and disc not in err.instance:
            shapes = [self._branch(branches[b]) if b < len(branches) else None for b in chosen]
            if shapes and all(s is not None for s in shapes) and not any(disc in _properties(s) for s in shapes):
                # a union no `disc` tags (e.g. an OpenAI chunk or an error body): the branch
                # naming most of the instance's members is the one meant, and its errors
                # name the member at fault
                fit = [len(set(err.instance) & _properties(s)) for s in shapes]
                best = max(fit)
                if best and fit.count(best) == 1:
                    b = chosen[fit.index(best)]
                    branch_title = self._title_of(branches[b])
                    for sub in by_branch[b]:
                        yield from self._leaves(sub, branch_title or title)
                    return
                yield err, title
                return
            yield _synthetic(err, f"missing `{disc}`: cannot tell which kind of {title} this is", "required"), title
            return
        yield err, title

    def _branch(self, subschema: Any) -> dict[str, Any] | None:
        """A union branch with its `$ref` followed (relative to the root schema), or None
        when it cannot be resolved."""
        if not isinstance(subschema, dict):
            return None
        ref = subschema.get("$ref")
        if not isinstance(ref, str):
            return subschema
        base = str(self.schema.get("$id") or urljoin(self.schemas.base_uri, self.root_name))
        try:
            target = self.registry.resolver(base_uri=base).lookup(ref).contents
        except Exception:  # an unresolvable ref: the union is read as before
            return None
        return target if isinstance(target, dict) else None

    def _describe(self, err: ValidationError, title: str) -> SchemaError:
        path = list(err.absolute_path)
        v, inst = err.validator, err.instance
        schema: dict[str, Any] = err.schema if isinstance(err.schema, dict) else {}
        value: Any = err.validator_value
        where = f"{title}: "
        if v == "required":
            m = _REQUIRED.match(err.message)
            name = _quoted(m.group(1)) if m else "?"
            return SchemaError(pointer_of([*path, name]), f"{where}missing required field `{name}`", v)
        if v == "additionalProperties" and isinstance(inst, dict):
            known = set(schema.get("properties", {}))
            extra = sorted(k for k in inst if k not in known)
            name = extra[0] if extra else "?"
            allowed = ", ".join(sorted(known))
            more = f" (and {len(extra) - 1} more)" if len(extra) > 1 else ""
            return SchemaError(pointer_of([*path, name]), f"{where}unknown field `{name}`{more}; allowed: {allowed}", v)
        if v == "type":
            expected = err.validator_value
            exp = " or ".join(expected) if isinstance(expected, list) else str(expected)
            msg = f"expected {exp}, got {json_type(inst)}"
        elif v == "const":
            msg = f"expected {err.validator_value!r}, got {_short(inst)}"
        elif v == "enum":
            msg = f"{_short(inst)} is not one of: {', '.join(map(str, value))}"
        elif v == "pattern":
            what = schema.get("title") or "the required format"
            described = PATTERN_DESCRIPTIONS.get(what)
            if described is not None:
                msg = f"{_short(inst)} does not match {what}: expected {described}"
            else:
                msg = f"{_short(inst)} does not match {what} (pattern {err.validator_value})"
        elif v == "minLength" and err.validator_value == 1:
            msg = "must not be empty"
        elif v in (
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
        ):
            msg = f"{_short(inst)} violates {v} {err.validator_value}"
        else:
            msg = err.message
        return SchemaError(pointer_of(path), where + msg, str(v))


def _properties(schema: dict[str, Any] | None) -> set[str]:
    props = schema.get("properties") if schema is not None else None
    return set(props) if isinstance(props, dict) else set()


@functools.lru_cache(maxsize=1024)
def _quoted(text: str) -> Any:
    """The field name python-jsonschema quoted (`repr`) in a `required` message; field
    names repeat from message to message, and parsing one is the costliest step of a
    finding, so each is parsed once."""
    return ast.literal_eval(text)


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _synthetic(err: ValidationError, message: str, keyword: str) -> ValidationError:
    from jsonschema.exceptions import ValidationError  # function-level: see the imports

    new = ValidationError(message, validator=keyword, path=err.absolute_path, instance=err.instance, schema=err.schema)
    new.validator = "synthetic"
    return new
