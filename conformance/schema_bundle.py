"""Schemas for other repositories: one bundled JSON Schema 2020-12 document per revision.

A bundle follows the specification's compound-document rules (JSON Schema 2020-12
Core §9.3): every schema file of the revision is embedded under `$defs`, keyed by its file
name, with its own `$id` and `$schema`, so the relative `$ref`s between files resolve
against the embedded `$id`s exactly as they do between the files, and nothing is fetched.
The root `$ref`s the revision's primary document (a canonical `Message`), so the bundle
validates a message as it stands; `$defs/<file>` reaches every other type.
"""

from __future__ import annotations

import copy
from typing import Any

from .schemas import BASE_URI, schema_set, versions

DIALECT = "https://json-schema.org/draft/2020-12/schema"
PRIMARY = {"canonical": "message.json", "gpt2099": "turn-frame.json", "chibi": "entry.json", "geppetto": "turn.json"}


def families() -> list[str]:
    """Schema families shipped (canonical and the peer formats)."""
    # function-level import: schema_root is only needed to list folders
    from .schemas import schema_root

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
    defs = {name: copy.deepcopy(doc) for name, doc in sorted(s.documents.items())}
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
