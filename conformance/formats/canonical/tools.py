"""Tool definitions (spec §4.4) and tool input (§5.2.4, §5.4)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import jsonschema_rs

from ...errors import InputError
from ...findings import Finding
from ...jsonio import Record, read_json, read_jsonl
from ...schema_validation import OracleValidator, SchemaValidator, pointer_of
from . import rules as R

if TYPE_CHECKING:
    from .checker import CanonicalRun

_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*\Z")
# keywords whose values are subschemas (or lists/maps of them) in the §5.4 subset
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_VALUES = ("items", "additionalItems", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties")


def subset_violations(schema: Any, ptr: str = "") -> Iterator[tuple[str, str]]:
    """(pointer, reason) for every construct of `schema` outside the §5.4 subset.

    Walks schema positions only, so a property *named* `not` is fine while a `not`
    keyword is not.
    """
    if not isinstance(schema, dict):
        return
    for kw in R.DISALLOWED_SCHEMA_KEYWORDS:
        if kw in schema:
            yield (
                f"{ptr}/{kw.replace('~', '~0').replace('/', '~1')}",
                f"`{kw}` is not allowed in a tool input_schema (§5.4)",
            )
    ap = schema.get("additionalProperties")
    if ap is not None and not isinstance(ap, bool):
        yield f"{ptr}/additionalProperties", "`additionalProperties` must be a boolean, not a schema (§5.4)"
    for kw in _SCHEMA_MAPS:
        sub = schema.get(kw)
        if isinstance(sub, dict):
            for name, s in sub.items():
                yield from subset_violations(s, f"{ptr}/{kw}/{name.replace('~', '~0').replace('/', '~1')}")
    for kw in _SCHEMA_VALUES:
        if kw in schema:
            yield from subset_violations(schema[kw], f"{ptr}/{kw}")
    items = schema.get("prefixItems")
    if isinstance(items, list):
        for i, s in enumerate(items):
            yield from subset_violations(s, f"{ptr}/prefixItems/{i}")


def definition_findings(
    run: CanonicalRun, rec: Record, tool: dict[str, Any], names: dict[str, tuple[str, int]]
) -> Iterator[Finding]:
    name = tool["name"]
    if run.on["TS301"] and not _snake(name):
        yield run._f(rec, "/name", R.TOOL_NAME, f"tool name {name!r} is not snake_case")
    if run.on["TS302"]:
        first = names.get(name)
        if first is not None and first != (rec.path, rec.line):
            where = "--tools" if first[0] == "--tools" else f"{first[0]}:{first[1]}"
            yield run._f(rec, "/name", R.TOOL_NAME_UNIQUE, f"tool {name!r} already defined at {where}")
        else:
            names[name] = (rec.path, rec.line)
    if run.on["TS303"]:
        for ptr, why in subset_violations(tool["input_schema"], "/input_schema"):
            yield run._f(rec, ptr, R.TOOL_SCHEMA_SUBSET, why)


def _snake(name: str) -> bool:
    return bool(_SNAKE.match(name))


@dataclass
class ToolSet:
    """Tools given with --tools: their input validators and the findings of the file."""

    tools: dict[str, dict[str, Any]]
    findings: list[Finding] = field(default_factory=list)
    _fast: dict[str, Any] = field(default_factory=dict)
    _oracle: dict[str, Any] = field(default_factory=dict)

    def check_use(self, run: CanonicalRun, rec: Record, ptr: str, block: dict[str, Any]) -> Iterator[Finding]:
        name = block["name"]
        tool = self.tools.get(name)
        if tool is None:
            if run.on["TS304"]:
                yield run._f(rec, ptr + "/name", R.TOOL_UNKNOWN, f"no tool named {name!r} in --tools")
            return
        if not run.on["TS305"]:
            return
        fast = self._fast.get(name)
        if fast is None:
            try:
                fast = self._fast[name] = jsonschema_rs.validator_for(tool["input_schema"], validate_formats=False)
                self._oracle[name] = OracleValidator(tool["input_schema"])
            except Exception as exc:  # an unusable schema is reported, never raised
                yield run._f(rec, ptr + "/input", R.TOOL_INPUT, f"tool {name!r} has an unusable input_schema: {exc}")
                self._fast[name] = False
                return
        if fast is False or fast.is_valid(block["input"]):
            return
        for err in self._oracle[name].iter_errors(block["input"]):
            yield run._f(rec, ptr + "/input" + pointer_of(err.absolute_path), R.TOOL_INPUT, f"{name}: {err.message}")


def load_tools(path: Path, validator: SchemaValidator) -> ToolSet:
    """Read a --tools file (.json list/object or .jsonl); unreadable or invalid -> InputError."""
    if not path.is_file():
        raise InputError(f"{path}: --tools file not found")
    items = read_jsonl(path) if path.suffix == ".jsonl" else read_json(path)
    tools: dict[str, dict[str, Any]] = {}
    ts = ToolSet(tools)
    for item in items:
        if isinstance(item, Finding):
            if item.severity == "error":
                raise InputError(f"{item.path}:{item.line}: {item.message}")
            continue
        tool = item.value
        errs = validator.errors(tool) if not validator.is_valid(tool) else []
        if errs:
            e = errs[0]
            raise InputError(f"{item.path}:{item.line}: {item.pointer}{e.pointer}: not a ToolDefinition: {e.message}")
        if tool["name"] in tools:
            raise InputError(f"{item.path}:{item.line}: tool {tool['name']!r} defined twice in --tools")
        tools[tool["name"]] = tool
        for ptr, why in subset_violations(tool["input_schema"], "/input_schema"):
            ts.findings.append(
                Finding(
                    item.path,
                    item.line,
                    item.pointer + ptr,
                    R.TOOL_SCHEMA_SUBSET.id,
                    R.TOOL_SCHEMA_SUBSET.severity,
                    why,
                )
            )
        try:
            jsonschema.Draft202012Validator.check_schema(tool["input_schema"])
        except jsonschema.SchemaError as exc:
            raise InputError(
                f"{item.path}:{item.line}: tool {tool['name']!r}: input_schema is not a valid JSON Schema: {exc.message}"
            ) from None
    return ts
