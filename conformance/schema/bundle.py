"""Schemas for other repositories: one bundled JSON Schema 2020-12 document per revision.

A bundle follows the specification's compound-document rules (JSON Schema 2020-12
Core §9.3): every schema file of the revision is embedded under `$defs`, keyed by its file
name, with its own `$id` and `$schema`, so the relative `$ref`s between files resolve
against the embedded `$id`s exactly as they do between the files, and nothing is fetched.
The root `$ref`s the revision's primary document (a canonical `Message`), so the bundle
validates a message as it stands; `$defs/<file>` reaches every other type.

A bundle uses the 2020-12 vocabularies only, so a validator in strict mode (ajv's
`new Ajv2020()` defaults, which reject any keyword it does not know, `x-` ones too)
compiles it. The one other keyword of `schemas/`, the OpenAPI-style `discriminator` that
names a union's tag property (read by the code generator, the validator's error
messages and the strategies), is left out of the bundle: it constrains nothing, and
each branch still pins its tag with `const`.
"""

from __future__ import annotations

import copy
from typing import Any

from ..core.schemas import BASE_URI, schema_set, versions

DIALECT = "https://json-schema.org/draft/2020-12/schema"
PRIMARY = {
    "canonical": "message.json",
    "gpt2099": "turn-frame.json",
    "chibi": "entry.json",
    "geppetto": "turn.json",
    "exec": "request.json",
}


# keywords whose value is one subschema, an array of them, or an object of them by name
# (JSON Schema 2020-12 Core §10, §11; Validation §8.2.4): only these are walked, so a
# property *named* like a keyword is never mistaken for one
SUBSCHEMA = frozenset({
    "items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not",
    "unevaluatedItems", "unevaluatedProperties", "contentSchema",
})  # fmt: skip
SUBSCHEMA_ARRAYS = frozenset({"prefixItems", "allOf", "anyOf", "oneOf"})
SUBSCHEMA_MAPS = frozenset({"$defs", "properties", "patternProperties", "dependentSchemas"})
# keywords of `schemas/` outside the 2020-12 vocabularies, dropped from a bundle
NON_STANDARD = frozenset({"discriminator"})


def portable(schema: Any) -> Any:
    """`schema` without the `NON_STANDARD` keywords, at every schema position (a copy)."""
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)  # a boolean schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in NON_STANDARD:
            continue
        if key in SUBSCHEMA:
            out[key] = portable(value)
        elif key in SUBSCHEMA_ARRAYS and isinstance(value, list):
            out[key] = [portable(v) for v in value]
        elif key in SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: portable(v) for name, v in value.items()}
        else:
            out[key] = copy.deepcopy(value)  # an annotation or a constraint: data, kept as is
    return out


def _relative_refs(schema: Any, base: str) -> Any:
    """`schema` with each `$ref` under `base` (the revision's folder URI) written relative to
    it, at every schema position (a copy)."""
    if not isinstance(schema, dict):
        return copy.deepcopy(schema)
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "$ref" and isinstance(value, str) and value.startswith(base):
            out[key] = value[len(base) :]
        elif key in SUBSCHEMA:
            out[key] = _relative_refs(value, base)
        elif key in SUBSCHEMA_ARRAYS and isinstance(value, list):
            out[key] = [_relative_refs(v, base) for v in value]
        elif key in SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _relative_refs(v, base) for name, v in value.items()}
        else:
            out[key] = copy.deepcopy(value)
    return out


def exported_files(fmt: str = "canonical", revision: str | None = None) -> dict[str, dict[str, Any]]:
    """The schema files of `fmt` at `revision` as `turnspec schema export OUT/` writes them,
    by file name: without their `$id` and with every `$ref` between them relative, so each
    file's base URI is where it was read from (JSON Schema 2020-12 Core §8.2.1: the
    retrieval URI) and a validator that reads a `$ref` from the file beside it
    (check-jsonschema, ajv given each file under its name) resolves them offline, wherever
    the files were written. With the published `https://turnspec.dev/schemas/...` ids it
    would fetch them from the network; a relative `$id` is read against the working folder
    by some (check-jsonschema). Nothing else changes; the bundle is the one document for
    validators that read no other file."""
    rev = revision or default_revision(fmt)
    base = f"{BASE_URI}{fmt}/{rev}/"
    return {
        name: {k: v for k, v in _relative_refs(doc, base).items() if k != "$id"}
        for name, doc in sorted(schema_set(fmt, rev).documents.items())
    }


def families() -> list[str]:
    """Schema families shipped (canonical and the peer formats)."""
    # function-level import: schema_root is only needed to list folders
    from ..core.schemas import schema_root

    return sorted(p.name for p in schema_root().iterdir() if p.is_dir() and p.name != "wire" and versions(p.name))


def default_revision(fmt: str) -> str:
    """The revision a reader uses by default: v1 for canonical (the spec as published;
    drafted revisions are opt-in), the newest for the peer formats."""
    known = versions(fmt)
    return "v1" if fmt == "canonical" and "v1" in known else known[-1]


def bundle(fmt: str = "canonical", revision: str | None = None) -> dict[str, Any]:
    """The bundled document of `fmt` at `revision` (see module docstring)."""
    rev = revision or default_revision(fmt)
    s = schema_set(fmt, rev)
    primary = PRIMARY.get(fmt)
    defs = {name: portable(doc) for name, doc in sorted(s.documents.items())}
    out: dict[str, Any] = {
        "$schema": DIALECT,
        "$id": f"{BASE_URI}{fmt}/{rev}/bundle.json",
        "title": f"turnspec {fmt} {rev} (bundled)",
        "description": f"Every schema of turnspec's {fmt} {rev}, embedded under $defs by file name (JSON Schema 2020-12 §9.3).",
    }
    if primary in defs:
        out["$ref"] = defs[primary]["$id"]
    out["$defs"] = defs
    return out
