"""The generated pydantic models of a schema file, and their errors as JSON pointers.

`generated/turnspec_models/<format>/<version>/<file>.py` holds the model of each schema
file, named by the schema's title (datamodel-codegen `--use-title-as-name`). A pydantic
error location mixes instance keys with union member tags (`content.0.TextBlock.text`);
`error_pointers` walks the instance along the location and drops the components that
are not keys or indexes of it, which leaves the JSON pointer a reader would report.
"""

from __future__ import annotations

import importlib
from typing import Any

from pydantic import TypeAdapter, ValidationError

from ..schemas import SchemaSet
from .ir import escape_pointer_token


def model_for(schemas: SchemaSet, root: str) -> TypeAdapter[Any]:
    """A TypeAdapter for the generated model of `root` (e.g. `message.json`)."""
    module_name = root.removesuffix(".json").replace("-", "_")
    module = importlib.import_module(f"turnspec_models.{schemas.format}.{schemas.version}.{module_name}")
    title = schemas[root].get("title")
    if not isinstance(title, str) or not hasattr(module, title):
        raise LookupError(f"no generated model {title!r} in {module.__name__}")
    return TypeAdapter(getattr(module, title))


def error_pointers(exc: ValidationError, instance: Any) -> list[str]:
    """The JSON pointers of the instance that `exc` complains about.

    A location component is either a key/index of the instance or a union member tag;
    when both readings are possible (the tag `text` of a block that has a `text` key)
    every reading is returned.
    """
    out: list[str] = []
    for err in exc.errors():
        locs = tuple(err["loc"])
        keyed = err["type"] in ("missing", "extra_forbidden")
        for parts in _readings(instance, locs, keyed):
            ptr = "/" + "/".join(parts) if parts else ""
            if ptr not in out:
                out.append(ptr)
    return out


def _readings(node: Any, locs: tuple[Any, ...], keyed: bool) -> list[list[str]]:
    if not locs:
        return [[]]
    head, rest = locs[0], locs[1:]
    found: list[list[str]] = []
    if isinstance(node, dict) and isinstance(head, str) and head in node:
        found += [[escape_pointer_token(head), *r] for r in _readings(node[head], rest, keyed)]
    elif isinstance(node, list) and isinstance(head, int) and 0 <= head < len(node):
        found += [[str(head), *r] for r in _readings(node[head], rest, keyed)]
    elif keyed and not rest and isinstance(node, dict) and isinstance(head, str):
        found.append([escape_pointer_token(head)])  # the missing (or unknown) key itself
    if isinstance(head, str):
        found += _readings(node, rest, keyed)  # `head` read as a union member tag
    return found
