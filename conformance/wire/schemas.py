"""The independent oracle: JSON Schemas of each wire API, under `schemas/wire/<schema_dir>/`.

Written from the providers' documentation (each file cites its source URL), never derived
from an adapter's output. Files: `request.json`, `response.json`, `stream-event.json`,
`error.json`; an API may lack some (a check that needs a missing one skips with that
reason). They ship in the wheel with the canonical schemas (`schemas/` is force-included
as `conformance/_schemas`), are loaded offline into one `referencing` registry per API
(cross-file `$ref`s resolve by `$id`, nothing is fetched; a `$ref` may reach into another
API's folder by its `$id`, as Claude on Vertex AI's request reuses Anthropic's blocks) and validated by the core's
`SchemaValidator`, so errors carry the same JSON pointers as every other finding.

`validator` is strict: it is what the suite (TC104) judges rendered requests with.
`reader` reads recorded bodies: strict first, then tolerating the departures the schema
annotates with `x-tolerate` (`wire.tolerance`), each reported by the caller as a warning.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any

from ..core.schema_validation import SchemaValidator
from ..core.schemas import BASE_URI, SchemaSet, load_set, schema_root
from .api import WireApi
from .tolerance import TolerantReader

KINDS = ("request", "response", "stream-event", "error")


def wire_root() -> Path:
    """Where the wire schemas live: `schemas/wire/` of a checkout, `_schemas/wire/` of a wheel."""
    return schema_root() / "wire"


@functools.cache
def _set_at(folder: Path) -> SchemaSet | None:
    if not folder.is_dir() or not any(folder.glob("*.json")):
        return None
    return load_set(folder)


def folder_for(api: WireApi) -> Path:
    return Path(api.schema_path) if api.schema_path else wire_root() / api.schema_dir


def schema_set_for(api: WireApi) -> SchemaSet | None:
    """The API's schema folder as a set, or None when the record has no schemas yet."""
    return _set_at(folder_for(api))


_REF = re.compile(r'"\$ref":\s*"' + re.escape(BASE_URI) + r'wire/([^/"#]+)/')


@functools.cache
def _referenced(folder: Path) -> tuple[SchemaSet, ...]:
    """The package's wire folders other than `folder` that its documents' `$ref`s name by
    `$id` (`https://turnspec.dev/schemas/wire/<folder>/...`), and theirs in turn: the
    registry a validator of `folder` needs, so such a `$ref` resolves offline."""
    seen: dict[str, SchemaSet] = {}
    todo = [folder]
    while todo:
        s = _set_at(todo.pop())
        for doc in s.documents.values() if s is not None else ():
            for name in _REF.findall(json.dumps(doc)):
                there = wire_root() / name
                if there != folder and name not in seen and (found := _set_at(there)) is not None:
                    seen[name] = found
                    todo.append(there)
    return tuple(seen.values())


@functools.cache
def _validator(folder: Path, file: str) -> SchemaValidator:
    s = _set_at(folder)
    assert s is not None
    return SchemaValidator(s, file, *_referenced(folder))


INNER_KINDS = ("response", "stream-event")
"""The bodies an endpoint passing another API's through carries as that API's (`WireApi.inner`)."""


def owner(api: WireApi, kind: str) -> WireApi | None:
    """The record whose schema validates `kind` bodies of `api`: its own, else, for a record
    whose folder has no `response` or `stream-event` schema and that carries another API's
    bodies (`WireApi.inner`), that API's (a nested stream's events are the inner API's
    events); None without one."""
    if kind not in KINDS:
        raise ValueError(f"unknown wire schema kind {kind!r} (known: {', '.join(KINDS)})")
    s = _set_at(folder_for(api))
    if s is not None and f"{kind}.json" in s.documents:
        return api
    if api.inner is not None and api.inner is not api and kind in INNER_KINDS:
        return owner(api.inner, kind)
    return None


def validator(api: WireApi, kind: str) -> SchemaValidator | None:
    """A validator of `kind` (one of KINDS) bodies of `api` (by `owner`'s schema), or None
    without that schema."""
    found = owner(api, kind)
    return _validator(folder_for(found), f"{kind}.json") if found is not None else None


def event_problems(api: WireApi, values: list[Any]) -> list[tuple[int, str, str]]:
    """(event index, JSON pointer, message) of each decoded stream event (`values`, as the
    record's framing gives them: a nested stream's inner events) that breaks the API's
    stream-event schema (`reader`: the inner API's where the record carries another's, with
    the departures the schema tolerates in recordings), the first error of each; [] without
    a schema."""
    r = reader(api, "stream-event")
    if r is None:
        return []
    out = []
    for k, value in enumerate(values):
        e = r.read(value).error
        if e is not None:
            out.append((k, e.pointer or "/", e.message))
    return out


@functools.cache
def _reader(folder: Path, file: str) -> TolerantReader:
    s = _set_at(folder)
    assert s is not None
    return TolerantReader(s, file, *_referenced(folder))


def reader(api: WireApi, kind: str) -> TolerantReader | None:
    """A reader of recorded `kind` bodies of `api` that tolerates the schema's annotated
    departures (`x-tolerate`), or None without that schema. Never for judging what an
    adapter renders: that is `validator`'s."""
    found = owner(api, kind)  # a nested stream's events are read by the inner API's schema
    return _reader(folder_for(found), f"{kind}.json") if found is not None else None


def missing_reason(api: WireApi, kind: str) -> str:
    inner = (
        f" nor in {api.inner.name}'s, whose bodies it carries" if api.inner is not None and kind in INNER_KINDS else ""
    )
    return f"{api.name}: no {kind} schema under schemas/wire/{api.schema_dir}/{inner} yet"


def documented_fields(api: WireApi, kind: str) -> frozenset[str] | None:
    """The top-level fields the API's `kind` schema lists (its docs' fields), or None when
    the schema is missing or lists none (an open body the suite cannot judge field by field)."""
    s = _set_at(folder_for(api))
    doc = s.documents.get(f"{kind}.json") if s is not None else None
    props = doc.get("properties") if isinstance(doc, dict) else None
    return frozenset(props) if isinstance(props, dict) and props else None
