"""Loading the JSON Schemas: offline, by `$id`, through a `referencing` registry.

`schemas/` is the single source of truth. In a checkout it sits next to this package; in
an installed wheel it is shipped inside the package as `_schemas/`. Every schema file of a
set is registered under its `$id`, so cross-file `$ref`s resolve from the registry and
nothing is ever fetched: a `$ref` to an unregistered URI fails with
`referencing.exceptions.Unresolvable` instead of touching the network.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referencing import Registry


from .errors import InputError
from .jsonio import parse, parse_error, read_input

BASE_URI = "https://turnspec.dev/schemas/"


def schema_root() -> Path:
    """Where the schema tree lives: the checkout's `schemas/` or the wheel's `_schemas/`."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_schemas", here.parent / "schemas"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("turnspec schemas not found (looked for conformance/_schemas and ./schemas)")


@dataclass(frozen=True)
class SchemaSet:
    """One `schemas/<format>/<version>/` folder: its documents, keyed by file name."""

    format: str
    version: str
    folder: Path
    documents: dict[str, dict[str, Any]]

    @property
    def base_uri(self) -> str:
        return f"{BASE_URI}{self.format}/{self.version}/"

    def uri(self, name: str) -> str:
        return self.base_uri + name

    def __getitem__(self, name: str) -> dict[str, Any]:
        return self.documents[name]

    def resources(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for name, doc in self.documents.items():
            yield doc.get("$id", self.uri(name)), doc


MAX_SCHEMA_BYTES = 8 * 1024 * 1024


def load_schema_file(path: Path) -> dict[str, Any]:
    """One schema file, read strictly: a regular file of at most `MAX_SCHEMA_BYTES`, valid
    JSON without duplicate keys or NaN, holding an object. Every problem is a one-line
    `InputError` naming the file (and line and column where the parser gives them)."""
    data = read_input(path, limit=MAX_SCHEMA_BYTES)
    try:
        doc = parse(data)
    except ValueError as exc:
        f = parse_error(str(path), 1, data, exc, at_eof=True)
        raise InputError(f"{path}:{f.line}: {f.message}") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: a schema file must hold a JSON object")
    return doc


def load_set(folder: Path, *, exclude: frozenset[str] = frozenset(), root: Path | None = None) -> SchemaSet:
    """Every `*.json` file of `folder` (but the names in `exclude`), by file name; `root`,
    a file of `folder`, is read first whatever its name."""
    docs: dict[str, dict[str, Any]] = {}
    if root is not None:
        docs[root.name] = load_schema_file(root)
    for p in sorted(folder.glob("*.json")):
        if p.name in docs:
            continue
        if p.name not in exclude:
            docs[p.name] = load_schema_file(p)
    if not docs:
        raise InputError(f"{folder}: no schema files (*.json) in this folder")
    return SchemaSet(folder.parent.name, folder.name, folder, docs)


@functools.cache
def schema_set(fmt: str, version: str) -> SchemaSet:
    """The schema set of `fmt` at `version` (e.g. `schema_set("canonical", "v1")`)."""
    folder = schema_root() / fmt / version
    if not folder.is_dir():
        raise KeyError(f"no schemas for {fmt} {version}")
    return load_set(folder)


def versions(fmt: str) -> list[str]:
    """Known versions of a format, oldest first (`v1`, `v2`, ...)."""
    folder = schema_root() / fmt
    found = [p.name for p in folder.iterdir() if p.is_dir() and p.name.startswith("v")]
    return sorted(found, key=lambda v: int(v[1:]) if v[1:].isdigit() else 0)


def registry_for(*sets: SchemaSet) -> Registry[Any]:
    """A `referencing` registry holding every document of `sets`, and nothing else."""
    from referencing import Registry, Resource  # function-level: ~20 ms, and `turnspec validate` never needs it
    from referencing.jsonschema import DRAFT202012

    resources = [
        (uri, Resource.from_contents(doc, default_specification=DRAFT202012))
        for s in sets
        for uri, doc in s.resources()
    ]
    return Registry().with_resources(resources).crawl()
