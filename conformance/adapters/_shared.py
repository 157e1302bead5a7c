"""Helpers the two reference adapters share beyond `base` (kept out of `base`, which is the
contract module third-party adapters import)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..core.jsonio import parse as parse_json
from ..wire import registry as wire_registry
from ..wire import schemas as wire_schemas
from .base import AdapterError, RateLimitError
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
