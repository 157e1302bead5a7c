"""Helpers the reference adapters share beyond `base` (kept out of `base`, which is the
contract module third-party adapters import)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping
from typing import Any, Generic, TypeVar

from ..core.jsonio import parse as parse_json
from ..wire import registry as wire_registry
from ..wire import schemas as wire_schemas
from .base import AdapterError, BaseAdapter, Block, RateLimitError, RequestContext, ToolDefinition, WireBody, new_ulid
from .errors import RETRYABLE as RETRYABLE  # declared once, with the contract's sentence

# Neither Anthropic nor Chat Completions carries a media type for a URL image. A URL image an
# adapter did not render itself in the session reads back with this placeholder: never a guess
# from the URL's file extension (`0.m` is not an image type).
URL_IMAGE_MEDIA_TYPE = "image/jpeg"
# OpenAI's custom tools take free text, not JSON (Chat `custom.input`, Responses
# `custom_tool_call.input`); a canonical tool_use input is an object, so the text is its member
# of this name, and renders back as the text
CUSTOM_INPUT = "input"


def header(headers: Mapping[str, Any], name: str) -> str | None:
    """One header value from a lower-cased mapping (vcrpy stores values as lists)."""
    value = headers.get(name)
    if isinstance(value, list | tuple):
        value = value[0] if value else None
    return str(value) if value is not None else None


def finish_error(exc: AdapterError, status: int, request_id: str | None, retry_after: str | None) -> None:
    """Fill the contract §6.3 fields `error_for_status` leaves unset on a hinted class."""
    exc.provider_status = status
    exc.retryable = exc.error_class in RETRYABLE
    exc.request_id = request_id
    if isinstance(exc, RateLimitError) and retry_after is not None:
        try:
            exc.retry_after_seconds = float(retry_after)
        except ValueError:
            exc.retry_after_seconds = None  # an HTTP-date: the harness reads the header itself


def json_object(text: str) -> dict[str, Any] | None:
    """`text` as a JSON object, or None: strict (no NaN, no duplicate keys) and bounded in
    depth, so hostile tool arguments or SSE data never recurse or crash (the core parser)."""
    if not text.strip():
        return {}
    try:
        value = parse_json(text.encode("utf-8", errors="surrogatepass"))
    except (ValueError, UnicodeEncodeError):
        return None
    return value if isinstance(value, dict) else None


def json_value(text: str) -> Any:
    """One JSON text, strictly; raises ValueError (never RecursionError) on bad input."""
    try:
        return parse_json(text.encode("utf-8", errors="surrogatepass"))
    except UnicodeEncodeError as exc:
        raise ValueError(str(exc)) from exc


def stop_reason(log: logging.Logger, adapter: str, table: Mapping[str, str], raw: Any, field: str) -> str:
    """A provider stop reason -> canonical by the wire record's `table`; an undocumented value
    reads as end_turn with a WARN line (the provider's enum grows)."""
    found = table.get(str(raw))
    if found is None:
        log.warning(
            "%s: undocumented %s %r read as end_turn",
            adapter,
            field,
            raw,
            extra={"event": "unknown_stop_reason", "adapter": adapter, "stop_reason": raw},
        )
        return "end_turn"
    return found


def tolerated(wire_api: str, kind: str, path: tuple[str, ...], departure: str) -> str | None:
    """The sentence with which the wire schema (`kind` of the record named `wire_api`)
    tolerates `departure` at instance `path` (`x-tolerate`, conformance.wire.tolerance), or
    None: an adapter reads a departure the schema does not tolerate as the docs say it."""
    try:
        api = wire_registry.get(str(wire_api))
    except KeyError:
        return None
    r = wire_schemas.reader(api, kind)
    return r.tolerates(path, departure) if r is not None else None


# -- tools ---------------------------------------------------------------------------------


def tool_extra(raw: Mapping[str, Any], name: str) -> Any:
    """The members a recorded request gave tool `name` beyond its definition
    (`provider_raw[adapter]["tool_extras"]`, written by `from_wire_request`), rendered back
    as they were; {} when it recorded none."""
    return (raw.get("tool_extras") or {}).get(name, {})


def tool_layout(slots: list[str]) -> list[str] | None:
    """A recorded request's tool order as slots, "s" for a tool canonical defines and "n"
    for a provider-native one (`provider_tools`), kept in `provider_raw[adapter]
    ["tool_layout"]` only when it is not the order rendering gives by default (defined tools
    first): a request may list a server tool before its own tools, and the tools array is
    the request's, in the order the caller gave it."""
    return None if slots == sorted(slots, key=lambda s: s != "s") else slots


def lay_out_tools(defined: list[WireBody], native: list[WireBody], raw: Mapping[str, Any]) -> list[WireBody]:
    """The wire tools in the recorded order (`tool_layout`), else defined tools then native
    ones; a layout that no longer fits the tools (one added or dropped) is not used."""
    layout = raw.get("tool_layout")
    if not isinstance(layout, list) or len(layout) != len(defined) + len(native):
        return defined + native
    if layout.count("s") != len(defined):
        return defined + native
    d_iter, n_iter = iter(defined), iter(native)
    return [next(d_iter) if slot == "s" else next(n_iter) for slot in layout]


def function_tool(tool: ToolDefinition, extra: Mapping[str, Any]) -> WireBody:
    """A canonical tool as a function tool of Chat Completions and Ollama (`{"type":
    "function", "function": {name, description, parameters}}`), with its recorded extras."""
    fn = {
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["input_schema"],
        **extra,
    }
    return {"type": "function", "function": fn}


def function_tool_from_wire(fn: Mapping[str, Any]) -> tuple[ToolDefinition, dict[str, Any]]:
    """A function tool's `function` object of Chat Completions or Ollama as a canonical tool
    definition, and its other members (the `tool_extras` that render it back)."""
    tool: ToolDefinition = {
        "name": fn["name"],
        "description": fn.get("description", ""),
        "input_schema": fn.get("parameters") or {"type": "object", "properties": {}},
        "side_effects": "execute",
    }
    return tool, {k: v for k, v in fn.items() if k not in ("name", "description", "parameters")}


def function_tools_from_wire(
    items: Iterable[Any],
) -> tuple[list[ToolDefinition], list[Mapping[str, Any]], dict[str, Any], list[str] | None]:
    """A request's `tools` list of Chat Completions or Ollama: each function tool as a
    canonical definition, every other kind kept as it is (a provider tool), each
    function's other members by name (the `tool_extras` that render it back), and the
    list's order when it is not functions first (`tool_layout`)."""
    tools: list[ToolDefinition] = []
    native: list[Mapping[str, Any]] = []
    tool_extras: dict[str, Any] = {}
    slots: list[str] = []
    for t in items:
        fn = t.get("function") if isinstance(t, dict) and t.get("type") == "function" else None
        if isinstance(fn, dict) and "name" in fn:
            tool, extra = function_tool_from_wire(fn)
            tools.append(tool)
            slots.append("s")
            if extra:
                tool_extras[fn["name"]] = extra
        else:
            native.append(t)
            slots.append("n")
    return tools, native, tool_extras, tool_layout(slots)


# -- URL images ----------------------------------------------------------------------------


class UrlMediaMemory:
    """What an adapter whose wire API carries no media type for a URL image (Anthropic, Chat
    Completions, Responses) remembers: the media type each URL image was rendered with, per
    session, so a request read back gives the image the type it was sent with."""

    @functools.cached_property
    def _url_media(self) -> dict[tuple[str, str], str]:  # (session, url) -> media type rendered
        return {}


# -- streams -------------------------------------------------------------------------------

A = TypeVar("A", bound=BaseAdapter)


class StreamState(Generic[A]):
    """What every reference adapter's stream translation starts with: its adapter, the
    request's context, the id of the message it builds (the context's, else a fresh ULID),
    its content blocks so far and the model the context names (else `<provider>:unknown`)."""

    def __init__(self, adapter: A, ctx: RequestContext) -> None:
        self.adapter = adapter
        self.ctx = ctx
        self.mid = ctx.message_id or new_ulid()
        self.content: list[Block] = []
        self.model = ctx.model or f"{adapter.provider}:unknown"
