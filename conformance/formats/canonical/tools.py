"""Tool definitions (spec §4.4) and tool input (§5.2.4, §5.4)."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core import pointers
from ...core.errors import InputError
from ...core.findings import Finding
from ...core.jsonio import Record, read_json, read_jsonl
from ...core.schema_validation import SchemaValidator, oracle_class, pointer_of
from . import rules as R
from .engine import BLOCK, DEFINITION, TOOLS_FILE, Context, Emit, MessageView, RunState
from .files import read_regular

_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*\Z")
# a tool_use name (§4.2 "snake_case, no provider prefix"): lowercase ASCII letters, digits
# and underscores, starting with a letter. Runs of underscores are allowed here, unlike
# in a definition's name (TS301): MCP-style namespaced names (`fs___read_file`, as
# gpt2099 writes them) are snake_case words, not a provider prefix; `functions.ReadFile`,
# `mcp:read_file` and `ReadFile` are not.
SNAKE_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def canonical_tool_name(name: str) -> str:
    """`name` when it is a canonical tool name (snake_case, §4.2, as TS306 checks it), else
    its snake_case form: `getWeather` and `get-weather` -> `get_weather`, `functions.run` ->
    `functions_run` (the peers' converters name tools with it)."""
    if SNAKE_NAME.match(name):
        return name
    snake = re.sub(r"[^a-z0-9]+", "_", _CAMEL.sub("_", name).lower()).strip("_")
    return snake if SNAKE_NAME.match(snake) else f"tool_{snake}".rstrip("_")


# §5.4 as an allow-list. Allowed: basic types, enum, required, properties, items,
# description, basic format annotations, and additionalProperties as a boolean.
# Annotation keywords that never change what validates (title, default, examples,
# $comment, deprecated, readOnly, writeOnly) and `$schema` naming the dialect are also
# accepted: they do not widen or narrow the subset. Everything else is outside it,
# whether the spec names it as disallowed ($ref, oneOf, ...) or not at all (pattern,
# const, prefixItems, dependentSchemas, unevaluatedProperties, minimum, ...).
ALLOWED_KEYWORDS = frozenset({"type", "enum", "required", "properties", "items", "description", "format",
                              "additionalProperties"})  # fmt: skip
ANNOTATIONS = frozenset({"title", "default", "examples", "$comment", "deprecated", "readOnly", "writeOnly", "$schema"})
BASIC_TYPES = frozenset({"string", "number", "integer", "boolean", "null", "object", "array"})
# keywords whose values are subschemas (or lists/maps of them), walked to report what is
# inside them too, whether or not the keyword itself is allowed
_SCHEMA_MAPS = ("properties", "$defs", "definitions", "dependentSchemas", "patternProperties")
_SCHEMA_VALUES = ("items", "additionalItems", "contains", "propertyNames", "unevaluatedItems",
                  "unevaluatedProperties", "additionalProperties", "not", "if", "then", "else")  # fmt: skip
_SCHEMA_LISTS = ("prefixItems", "allOf", "anyOf", "oneOf")


def subset_violations(schema: Any, ptr: str = "") -> Iterator[tuple[str, str]]:
    """(pointer, reason) for every construct of `schema` outside the §5.4 subset.

    Walks schema positions only, so a property *named* `not` is fine while a `not`
    keyword is not. The walk is iterative (an explicit stack), so no nesting depth can
    exhaust Python's recursion limit.
    """
    stack: list[tuple[Any, str]] = [(schema, ptr)]
    while stack:
        node, at = stack.pop()
        if not isinstance(node, dict):
            continue  # `true`/`false` subschemas: nothing to check
        found: list[tuple[str, str]] = []
        for kw in node:
            if kw in ALLOWED_KEYWORDS or kw in ANNOTATIONS:
                continue
            why = "is not allowed" if kw in R.DISALLOWED_SCHEMA_KEYWORDS else "is outside the allowed subset"
            found.append((f"{at}/{_esc(kw)}", f"`{kw}` {why} in a tool input_schema (§5.4)"))
        ap = node.get("additionalProperties")
        if ap is not None and not isinstance(ap, bool):
            found.append(
                (f"{at}/additionalProperties", "`additionalProperties` must be a boolean, not a schema (§5.4)")
            )
        t = node.get("type")
        for name in t if isinstance(t, list) else [t] if t is not None else []:
            if name not in BASIC_TYPES:
                found.append((f"{at}/type", f"type {name!r} is not a basic JSON type (§5.4)"))
        items = node.get("items")
        if isinstance(items, list):
            found.append((f"{at}/items", "array-form `items` (a tuple) is outside the allowed subset (§5.4)"))
        yield from found
        children: list[tuple[Any, str]] = []
        for kw in _SCHEMA_MAPS:
            sub = node.get(kw)
            if isinstance(sub, dict):
                children.extend((s, f"{at}/{kw}/{_esc(name)}") for name, s in sub.items())
        for kw in _SCHEMA_VALUES:
            sub = node.get(kw)
            if isinstance(sub, list) and kw == "items":
                children.extend((s, f"{at}/items/{i}") for i, s in enumerate(sub))
            elif sub is not None:
                children.append((sub, f"{at}/{kw}"))
        for kw in _SCHEMA_LISTS:
            sub = node.get(kw)
            if isinstance(sub, list):
                children.extend((s, f"{at}/{kw}/{i}") for i, s in enumerate(sub))
        stack.extend(reversed(children))  # depth-first, in document order


_esc = pointers.token


@DEFINITION.register(R.TOOL_NAME, fast="exact")
def tool_name(rec: Record, tool: dict[str, Any], state: RunState, emit: Emit) -> None:
    if not _snake(tool["name"]):
        emit(rec, "/name", R.TOOL_NAME, f"tool name {tool['name']!r} is not snake_case")


@DEFINITION.register(R.TOOL_NAME_UNIQUE, fast="exact")
def tool_name_unique(rec: Record, tool: dict[str, Any], state: RunState, emit: Emit) -> None:
    first = state.tool_names.get(tool["name"])
    if first is not None and first != (rec.path, rec.line):
        where = "--tools" if first[0] == "--tools" else f"{first[0]}:{first[1]}"
        emit(rec, "/name", R.TOOL_NAME_UNIQUE, f"tool {tool['name']!r} already defined at {where}")


@DEFINITION.register(R.TOOL_SCHEMA_SUBSET, fast="exact")
@TOOLS_FILE.register(R.TOOL_SCHEMA_SUBSET, fast="exact")
def tool_schema_subset(rec: Record, tool: dict[str, Any], state: RunState, emit: Emit) -> None:
    for ptr, why in subset_violations(tool["input_schema"], "/input_schema"):
        emit(rec, ptr, R.TOOL_SCHEMA_SUBSET, why)


def _snake(name: str) -> bool:
    return bool(_SNAKE.match(name))


@BLOCK.register(R.TOOL_USE_NAME, blocks=("tool_use",), fast="local")
def tool_use_name(ctx: Context, m: MessageView, ptr: str, block: dict[str, Any], emit: Emit) -> None:
    """§4.2: `name` is the canonical tool name, "snake_case, no provider prefix"; this
    needs no --tools (a provider's `functions.ReadFile` never reaches canonical data)."""
    name = block["name"]
    if not SNAKE_NAME.match(name):
        prefix = " (a provider prefix?)" if "." in name or ":" in name or "/" in name else ""
        emit(m.rec, ptr + "/name", R.TOOL_USE_NAME, f"tool_use name {name!r} is not snake_case{prefix}")


@BLOCK.register(R.TOOL_UNKNOWN, blocks=("tool_use",), fast="local")
def tool_unknown(ctx: Context, m: MessageView, ptr: str, block: dict[str, Any], emit: Emit) -> None:
    if ctx.toolset is not None and block["name"] not in ctx.toolset.tools:
        emit(m.rec, ptr + "/name", R.TOOL_UNKNOWN, f"no tool named {block['name']!r} in --tools")


@BLOCK.register(R.TOOL_INPUT, blocks=("tool_use",), fast="local")
def tool_input(ctx: Context, m: MessageView, ptr: str, block: dict[str, Any], emit: Emit) -> None:
    if ctx.toolset is None or block["name"] not in ctx.toolset.tools:
        return
    name = block["name"]
    fast, oracle, problem = ctx.toolset.validators(name)
    if problem is not None:
        emit(m.rec, ptr + "/input", R.TOOL_INPUT, f"tool {name!r} has an unusable input_schema: {problem}")
        return
    if fast is None or fast.is_valid(block["input"]):
        return
    for err in oracle.iter_errors(block["input"]):
        emit(m.rec, ptr + "/input" + pointer_of(err.absolute_path), R.TOOL_INPUT, f"{name}: {err.message}")


@dataclass
class ToolSet:
    """Tools given with --tools: the definitions (and their records), validators built lazily.

    The validators are a cache of the definitions, not state a rule could change: the
    first use of a tool compiles its input_schema once (an unusable one is remembered
    as the problem to report at each use).
    """

    tools: dict[str, dict[str, Any]]
    records: list[Record] = field(default_factory=list)
    _compiled: dict[str, tuple[Any, Any, str | None]] = field(default_factory=dict)

    def validators(self, name: str) -> tuple[Any, Any, str | None]:
        """(fast validator, oracle, problem) for tool `name`'s input_schema."""
        hit = self._compiled.get(name)
        if hit is None:
            schema = self.tools[name]["input_schema"]
            import jsonschema_rs  # loaded only when --tools is given

            try:
                hit = (jsonschema_rs.validator_for(schema, validate_formats=False), oracle_class()(schema), None)
            except Exception as exc:  # an unusable schema is reported, never raised
                hit = (None, None, str(exc))
            self._compiled[name] = hit
        return hit


def load_tools(path: Path, validator: SchemaValidator) -> ToolSet:
    """Read a --tools file (.json list/object or .jsonl); unreadable or invalid -> InputError."""
    data = read_regular(path, "--tools")
    items = read_jsonl(path, stream=io.BytesIO(data)) if path.suffix == ".jsonl" else read_json(path, data=data)
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
        ts.records.append(item)
        import jsonschema  # function-level: python-jsonschema loads only when a --tools file is read

        try:
            jsonschema.Draft202012Validator.check_schema(tool["input_schema"])
        except jsonschema.SchemaError as exc:
            raise InputError(
                f"{item.path}:{item.line}: tool {tool['name']!r}: input_schema is not a valid JSON Schema: {exc.message}"
            ) from None
    if not tools:
        raise InputError(f"{path}: --tools file holds no tool definitions")
    return ts
