"""The exec protocol's values (docs/exec-protocol.md, `schemas/exec/v1/`) to and from the
adapter contract's Python types: options, request contexts, wire requests and responses,
read requests, typed errors and log records. Both sides use it: the host (`proxy`) and the
Python child (`serve`), so each value has one spelling."""

from __future__ import annotations

import base64
import binascii
import importlib.metadata
import logging
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import BY_CLASS, AdapterError, CriticalBlockError, RateLimitError, WireFormatError
from ..protocol import AdapterOptions, ParsedRequest, RequestContext, WireRequest, WireResponse

PROTOCOL_VERSIONS = (1,)
"""The versions this host and child speak (docs/exec-protocol.md, Versioning)."""

OPERATIONS = ("render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map")
"""What a child may offer beyond `hello` and `shutdown` (schemas/exec/v1/operation.json)."""
REQUIRED_OPERATIONS = ("render", "parse")

TOOL_ID_MAP_CALLS = ("canonical_for", "provider_for", "get_provider", "get_canonical", "bind", "pairs")


def turnspec_version() -> str:
    """The installed turnspec's version (hello's `turnspec`), "unknown" outside an install."""
    try:
        return importlib.metadata.version("turnspec")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unb64(text: Any) -> bytes:
    """Standard base64 to bytes; a `ValueError` for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"base64 data must be a string, not {type(text).__name__}")
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise ValueError(f"not base64: {exc}") from None


# -- options, contexts -------------------------------------------------------------------


def options_to_json(options: AdapterOptions) -> dict[str, Any]:
    return {
        "model": options.model,
        "max_output_tokens": options.max_output_tokens,
        "temperature": options.temperature,
        "stop_sequences": list(options.stop_sequences),
        "stream": options.stream,
        "output_schema": dict(options.output_schema) if options.output_schema is not None else None,
        "extra": dict(options.extra),
        "provider_tools": [dict(t) for t in options.provider_tools],
        "provider_raw": dict(options.provider_raw),
        "critical_key": options.critical_key,
    }


def options_from_json(value: Mapping[str, Any]) -> AdapterOptions:
    """AdapterOptions from its JSON; absent fields take their defaults (options.json)."""
    defaults = AdapterOptions(model="")
    return AdapterOptions(
        model=value.get("model"),  # type: ignore[arg-type]  # what the other side sent: the suite judges it
        max_output_tokens=value.get("max_output_tokens"),
        temperature=value.get("temperature"),
        stop_sequences=tuple(value.get("stop_sequences") or ()),
        stream=bool(value.get("stream", False)),
        output_schema=value.get("output_schema"),
        extra=value.get("extra") or {},
        provider_tools=tuple(value.get("provider_tools") or ()),
        provider_raw=value.get("provider_raw") or {},
        critical_key=value.get("critical_key") or defaults.critical_key,
    )


CONTEXT_FIELDS = (
    "session_id",
    "message_id",
    "request_id",
    "model",
    "created_at",
    "latency_ms",
    "pricing_version",
    "estimated_input_tokens",
)


def context_to_json(ctx: RequestContext) -> dict[str, Any]:
    """The context's JSON fields; its price table (`pricing`) stays the harness's."""
    return {k: getattr(ctx, k) for k in CONTEXT_FIELDS}


def context_from_json(value: Mapping[str, Any]) -> RequestContext:
    known = {k: value[k] for k in CONTEXT_FIELDS if k in value and k != "session_id"}
    if known.get("latency_ms") is None:
        known.pop("latency_ms", None)
    return RequestContext(session_id=value.get("session_id"), **known)  # type: ignore[arg-type]


# -- requests, responses -----------------------------------------------------------------


def wire_request_to_json(wire: WireRequest) -> dict[str, Any]:
    return {"method": wire.method, "path": wire.path, "headers": dict(wire.headers), "body": wire.body}


def wire_request_from_json(value: Mapping[str, Any]) -> WireRequest:
    headers = value.get("headers")
    return WireRequest(
        method=value.get("method"),  # type: ignore[arg-type]  # the suite judges what the adapter gave
        path=value.get("path"),  # type: ignore[arg-type]
        headers=dict(headers) if isinstance(headers, Mapping) else headers,  # type: ignore[arg-type]
        body=value.get("body"),  # type: ignore[arg-type]
    )


def response_to_json(response: WireResponse | Any) -> dict[str, Any]:
    """A `WireResponse` (or a bare body, as the protocol allows) as parse's `response`:
    bytes as `body_base64`, anything else as the JSON `body`."""
    if not isinstance(response, WireResponse):
        response = WireResponse(response)
    out: dict[str, Any] = {"status": response.status, "headers": dict(response.headers)}
    if isinstance(response.body, bytes | bytearray | memoryview):
        out["body_base64"] = _b64(bytes(response.body))
    else:
        out["body"] = response.body
    return out


def response_from_json(value: Mapping[str, Any]) -> WireResponse:
    body = unb64(value["body_base64"]) if "body_base64" in value else value.get("body")
    headers = value.get("headers")
    return WireResponse(body, int(value.get("status", 200)), dict(headers) if isinstance(headers, Mapping) else {})


def parsed_request_to_json(parsed: ParsedRequest) -> dict[str, Any]:
    return {"messages": parsed.messages, "tools": parsed.tools, "options": options_to_json(parsed.options)}


def parsed_request_from_json(value: Mapping[str, Any]) -> ParsedRequest:
    options = value.get("options")
    return ParsedRequest(
        messages=value.get("messages"),  # type: ignore[arg-type]  # UnreadableOutput judges odd ones
        tools=value.get("tools") if value.get("tools") is not None else [],  # type: ignore[arg-type]
        options=options_from_json(options if isinstance(options, Mapping) else {}),
    )


# -- typed errors (docs/exec-protocol.md, Errors) ------------------------------------------


def error_to_json(exc: BaseException, *, not_implemented: bool = False) -> dict[str, Any]:
    """The protocol's error for an exception a Python adapter raised. `not_implemented`:
    a `NotImplementedError` means "not implemented" (`from_wire_request`, where the adapter
    protocol says so); elsewhere it is a crash, as the suite judges a Python adapter's."""
    if isinstance(exc, CriticalBlockError):
        return {
            "kind": "critical_block",
            "message": str(exc),
            "adapter": exc.adapter,
            "session_id": exc.session_id,
            "message_id": exc.message_id,
            "block_type": exc.block_type,
            "reason": exc.reason,
        }
    if isinstance(exc, WireFormatError):
        return {
            "kind": "wire_format",
            "message": str(exc),
            "event": exc.event,
            "line": exc.line,
            "offset": exc.offset,
            **_adapter_fields(exc),
        }
    if isinstance(exc, AdapterError):
        out = {"kind": "adapter_error", "error_class": exc.error_class, "message": str(exc), **_adapter_fields(exc)}
        if isinstance(exc, RateLimitError):
            out["retry_after_seconds"] = exc.retry_after_seconds
        return out
    if isinstance(exc, NotImplementedError) and not_implemented:
        return {"kind": "not_implemented", "message": str(exc)}
    return {
        "kind": "crash",
        "message": str(exc),
        "type": type(exc).__name__,
        "traceback": "".join(traceback.format_exception(exc)),
    }


def _adapter_fields(exc: AdapterError) -> dict[str, Any]:
    return {"provider_status": exc.provider_status, "request_id": exc.request_id, "retryable": exc.retryable}


class ChildCrash(Exception):
    """An exception the child's adapter raised that is none of the typed errors (`crash`):
    its class is named after the child's exception type, so a case reads `crashed: TypeError:
    ...` as it does for a Python adapter; the child's traceback is a note on it."""


_CRASH_CLASSES: dict[str, type[ChildCrash]] = {}


def _crash_class(name: Any) -> type[ChildCrash]:
    label = name if isinstance(name, str) and name.isidentifier() else "ChildCrash"
    cls = _CRASH_CLASSES.get(label)
    if cls is None:
        cls = _CRASH_CLASSES[label] = type(label, (ChildCrash,), {"__module__": "turnspec.exec.child"})
    return cls


def error_from_json(error: Mapping[str, Any], not_offered: Callable[[str], Exception]) -> Exception:
    """The exception the host raises for a typed error: the project's `AdapterError`
    subclasses, `CriticalBlockError`, `WireFormatError`, `not_offered` (an
    `OperationNotOffered` factory) for not_implemented, else a `ChildCrash`."""
    kind = error.get("kind")
    message = str(error.get("message", ""))
    common: dict[str, Any] = {
        "provider_status": error.get("provider_status"),
        "request_id": error.get("request_id"),
        "retryable": bool(error.get("retryable", False)),
    }
    if kind == "critical_block":
        fields = {k: str(error.get(k, "")) for k in ("adapter", "session_id", "message_id", "block_type", "reason")}
        return CriticalBlockError(**fields)
    if kind == "wire_format":
        return WireFormatError(
            message, event=error.get("event"), line=error.get("line"), offset=error.get("offset"), **common
        )
    if kind == "adapter_error":
        cls = BY_CLASS.get(str(error.get("error_class")), AdapterError)
        if cls is RateLimitError:
            return RateLimitError(message, retry_after_seconds=error.get("retry_after_seconds"), **common)
        return cls(message, **common)
    if kind == "not_implemented":
        return not_offered(message)
    exc = _crash_class(error.get("type"))(_without_type(message, str(error.get("type") or "")))
    trace = error.get("traceback")
    if isinstance(trace, str) and trace.strip():
        exc.add_note("the child's traceback:\n" + trace.rstrip("\n"))
    return exc


def _without_type(message: str, type_name: str) -> str:
    """A crash's message without a leading `<type>: ` (a JavaScript `String(error)` or a Go
    `%T: %v` spells the type in the message too): the case reads `crashed: TypeError: x`,
    never `crashed: TypeError: TypeError: x`."""
    head = f"{type_name}: "
    return message[len(head) :] if type_name and message.startswith(head) else message


# -- log records (docs/exec-protocol.md, Logs) ---------------------------------------------

_RECORD_ATTRS = frozenset(vars(logging.LogRecord("x", 0, "", 0, "", None, None))) | {"message", "asctime"}


def record_to_json(record: logging.LogRecord) -> dict[str, Any]:
    """A Python log record as the protocol's: its level, text, and its `extra=` fields (the
    items of a mapping logged as the message, structlog-style, too)."""
    fields = {k: v for k, v in vars(record).items() if k not in _RECORD_ATTRS}
    if isinstance(record.msg, dict):
        fields.update({str(k): v for k, v in record.msg.items()})
    level = "error" if record.levelno >= logging.ERROR else logging.getLevelName(record.levelno).lower()
    return {
        "level": level if level in LEVELS else "warning",
        "message": record.getMessage(),
        "fields": jsonable(fields),
    }


def jsonable(value: Any) -> Any:
    """`value` with what JSON cannot carry (an object, bytes, a set) as its `repr`: a log
    field is information to read, so it is sent as text rather than lost."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    return repr(value)


def record_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """`fields` as LogRecord attributes: a field named like a LogRecord attribute (`name`,
    `msg`, `args`, ...) is set as `field_<name>`, so it can neither clobber the record nor be
    lost."""
    return {(f"field_{k}" if k in _RECORD_ATTRS else k): v for k, v in fields.items()}
