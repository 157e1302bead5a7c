"""Loading the JSON Schemas: offline, by `$id`, through a `referencing` registry.

`schemas/` is the single source of truth. In a checkout it sits next to this package; in
an installed wheel it is shipped inside the package as `_schemas/`. Every schema file of a
set is registered under its `$id`, so cross-file `$ref`s resolve from the registry and
nothing is ever fetched: a `$ref` to an unregistered URI fails with
`referencing.exceptions.Unresolvable` instead of touching the network.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

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


def _load_set(folder: Path) -> SchemaSet:
    docs: dict[str, dict[str, Any]] = {}
    for p in sorted(folder.glob("*.json")):
        doc = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(doc, dict):
            raise ValueError(f"{p}: a schema file must hold a JSON object")
        docs[p.name] = doc
    if not docs:
        raise FileNotFoundError(f"no schemas in {folder}")
    return SchemaSet(folder.parent.name, folder.name, folder, docs)


@functools.cache
def schema_set(fmt: str, version: str) -> SchemaSet:
    """The schema set of `fmt` at `version` (e.g. `schema_set("canonical", "v1")`)."""
    folder = schema_root() / fmt / version
    if not folder.is_dir():
        raise KeyError(f"no schemas for {fmt} {version}")
    return _load_set(folder)


def versions(fmt: str) -> list[str]:
    """Known versions of a format, oldest first (`v1`, `v2`, ...)."""
    folder = schema_root() / fmt
    found = [p.name for p in folder.iterdir() if p.is_dir() and p.name.startswith("v")]
    return sorted(found, key=lambda v: int(v[1:]) if v[1:].isdigit() else 0)


def registry_for(*sets: SchemaSet) -> Registry[Any]:
    """A `referencing` registry holding every document of `sets`, and nothing else."""
    resources = [
        (uri, Resource.from_contents(doc, default_specification=DRAFT202012))
        for s in sets
        for uri, doc in s.resources()
    ]
    return Registry().with_resources(resources).crawl()
