"""`BaseAdapter`: what every reference adapter needs, on top of the contract's types.

The per-session tool-id maps (§6.2), the lossy-projection log line (§7.3) and the
critical-block error, and assembly of the final assistant message from the parts an
adapter knows (adapter contract §3.3). Third-party adapters may use it or ignore it: the
suite checks only the structural `Adapter` protocol.

The contract itself is split by concern: `protocol` (types and the `Adapter` protocol),
`errors` (§6), `toolids` (ids and the §6.2 map), `streams` (framing decoders raising
located `WireFormatError`s; the decoders live in `conformance.wire.framing`). This module
re-exports every name it held before that split, so `from conformance.adapters.base import
X` keeps working for adapters written against it.
"""

from __future__ import annotations

import abc
import contextvars
import datetime as dt
import functools
import logging
import re
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import Any, ClassVar

from ..core import ids
from ..formats.canonical.markers import DEFAULT_CRITICAL_KEY
from .errors import (
    ERROR_CLASSES,
    AdapterError,
    AuthError,
    CancelledError,
    ContextOverflowError,
    CriticalBlockError,
    InvalidRequestError,
    NetworkError,
    RateLimitError,
    ServerError,
    StreamCutError,
    WireFormatError,
    error_for_status,
)
from .estimate import json_tokens, text_tokens
from .protocol import (
    STOP_REASONS,
    Adapter,
    AdapterOptions,
    Block,
    Message,
    ParsedRequest,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireRequest,
    WireResponse,
    known_provider,
)
from .streams import (
    CancelToken,
    SseDecoder,
    SseEvent,
    cancellable_events,
    json_array_events,
    message_from_stream,
    ndjson_events,
    parse_json_object,
    sse_events,
)
from .toolids import ToolIdMap, is_canonical_tool_id, new_tool_id, new_ulid

__all__ = [
    "ERROR_CLASSES",
    "LOGGER_NAME",
    "STOP_REASONS",
    "Adapter",
    "AdapterError",
    "AdapterOptions",
    "AuthError",
    "BaseAdapter",
    "Block",
    "CancelledError",
    "ContextOverflowError",
    "CriticalBlockError",
    "InvalidRequestError",
    "Message",
    "NetworkError",
    "ParsedRequest",
    "RateLimitError",
    "RequestContext",
    "ServerError",
    "SseDecoder",
    "SseEvent",
    "StreamCutError",
    "StreamEvent",
    "ToolDefinition",
    "ToolIdMap",
    "WireBody",
    "WireFormatError",
    "WireRequest",
    "WireResponse",
    "error_for_status",
    "estimated_usage",
    "harness_usage",
    "is_canonical_tool_id",
    "json_array_events",
    "log_block_dropped",
    "message_from_stream",
    "ndjson_events",
    "new_tool_id",
    "new_ulid",
    "now_timestamp",
    "parse_json_object",
    "request_message",
    "sse_events",
]

LOGGER_NAME = "turnspec.adapters"


def now_timestamp() -> str:
    """RFC 3339 UTC with microseconds, as `created_at` requires (spec §4.1)."""
    return dt.datetime.now(dt.UTC).strftime(ids.TIME_FORMAT)


def request_message(sid: str, role: str, content: list[Block], meta: dict[str, Any]) -> Message:
    """A canonical message read back from a wire request (`from_wire_request`): the wire
    carries no message ids or times, so the harness mints them (spec §6.1), as it would
    for a message it had never seen."""
    return {
        "id": new_ulid(),
        "session_id": sid,
        "role": role,
        "content": content,
        "metadata": meta,
        "created_at": now_timestamp(),
        "schema_version": 1,
    }


# the critical-block key of the `to_wire` call in progress (AdapterOptions.critical_key);
# a context variable, so concurrent calls with different keys never see each other's
_CRITICAL_KEY: contextvars.ContextVar[str] = contextvars.ContextVar(
    "turnspec_critical_key", default=DEFAULT_CRITICAL_KEY
)


def _with_critical_key(fn: Callable[..., WireRequest]) -> Callable[..., WireRequest]:
    """Wrap a subclass's `to_wire` so `drop` reads the call's `options.critical_key`
    without every helper between them passing the options along."""

    @functools.wraps(fn)
    def to_wire(
        self: Any, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions
    ) -> WireRequest:
        token = _CRITICAL_KEY.set(str(getattr(options, "critical_key", DEFAULT_CRITICAL_KEY)))
        try:
            return fn(self, messages, tools, options)
        finally:
            _CRITICAL_KEY.reset(token)

    return to_wire


class BaseAdapter(abc.ABC):
    """Helpers the reference adapters share; third-party adapters may use or ignore it."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        known_provider(cls.__dict__.get("provider"))  # its canonical model ids' prefix (AdapterOptions.wire_model)
        if "to_wire" in cls.__dict__:
            cls.to_wire = _with_critical_key(cls.__dict__["to_wire"])  # type: ignore[attr-defined]

    name: ClassVar[str]
    provider: ClassVar[str]
    wire_api: ClassVar[str]
    capabilities: ClassVar[Mapping[str, Any]]
    provider_tool_id: ClassVar[re.Pattern[str]]
    # Where the wire API has no error flag on tool results (Chat Completions `role: tool`,
    # Ollama), how this adapter keeps `is_error` in the result's content instead of dropping
    # it (e.g. "text prefixed 'Error: '"); None: the flag is dropped with the §7.3 WARN line.
    # TC902 reads it (canonical spec §7.3 drops only what cannot be represented).
    tool_errors_in_band: ClassVar[str | None] = None

    def __init__(self) -> None:
        self._maps: dict[str, ToolIdMap] = {}
        self.log = logging.getLogger(f"{LOGGER_NAME}.{self.name}")

    # tool ids -------------------------------------------------------------------------

    @abc.abstractmethod
    def new_provider_tool_id(self) -> str:
        """A fresh provider-side tool id satisfying `provider_tool_id`."""

    def tool_id_map(self, session_id: str) -> ToolIdMap:
        m = self._maps.get(session_id)
        if m is None:
            m = self._maps[session_id] = ToolIdMap(self.provider, self.new_provider_tool_id)
        return m

    # lossy projection (§7.3) -----------------------------------------------------------

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        """Drop an unrepresentable block: one WARN line, or CriticalBlockError when critical.

        A block is critical when the message's `metadata[critical_key]` is true (every
        block) or a list holding the block's content index (spec §4.2.2: "fails the request
        if marked critical via metadata"). The key is the `to_wire` call's
        `options.critical_key` (default `critical`).
        """
        sid, mid = str(message.get("session_id", "")), str(message.get("id", ""))
        critical = (message.get("metadata") or {}).get(_CRITICAL_KEY.get())
        if critical is True or (isinstance(critical, list) and index is not None and index in critical):
            raise CriticalBlockError(
                adapter=self.name,
                session_id=sid,
                message_id=mid,
                block_type=block_type,
                reason=reason,
            )
        log_block_dropped(
            self.log,
            adapter=self.name,
            session_id=sid,
            message_id=mid,
            block_type=block_type,
            reason=reason,
        )

    def warn_option(self, option: str, reason: str) -> None:
        """A request option this provider cannot honour (not a block, so not counted as one)."""
        self.log.warning(
            "%s: request option %s not sent: %s",
            self.name,
            option,
            reason,
            extra={
                "event": "option_dropped",
                "adapter": self.name,
                "option": option,
                "reason": reason,
            },
        )

    # response assembly (adapter contract §3.3) -------------------------------------------

    def assemble(
        self,
        ctx: RequestContext,
        content: list[Block],
        *,
        wire_model: str | None,
        token_usage: Mapping[str, int] | None,
        provider_raw: Mapping[str, Any] | None = None,
        status: str = "complete",
    ) -> Message:
        """The canonical assistant message a harness builds from what the adapter parsed.

        The adapter knows content, model, provider and token counts; routing and cost are
        the core's (adapter contract §3.3). Like a harness without a routing engine, this
        records routing mode `default` and prices the call from `ctx.pricing` when given,
        else cost "0" under pricing_version "unpriced" (an explicit zero, spec §6.4).
        """
        model = f"{self.provider}:{wire_model}" if wire_model else (ctx.model or f"{self.provider}:unknown")
        meta: dict[str, Any] = {
            "model": model,
            "provider": self.provider,
            "routing": {
                "mode": "default",
                "chosen_model": model,
                "reason": "turnspec harness: no routing engine",
            },
            "usage": harness_usage(token_usage, model, ctx) if token_usage is not None else None,
            "status": status,
        }
        if provider_raw:
            meta["provider_raw"] = {self.name: dict(provider_raw)}
        if not content:
            # an empty reply is still a complete message; spec §5.1.1 needs one block
            content = [{"type": "text", "text": ""}]
        return {
            "id": ctx.message_id or new_ulid(),
            "session_id": ctx.session_id,
            "role": "assistant",
            "content": content,
            "metadata": meta,
            "created_at": ctx.created_at or now_timestamp(),
            "schema_version": 1,
        }

    def own_raw(self, message: Message) -> dict[str, Any]:
        """This adapter's `provider_raw` entry of a message ({} when another adapter wrote it)."""
        raw = (message.get("metadata") or {}).get("provider_raw") or {}
        mine = raw.get(self.name) if isinstance(raw, dict) else None
        return mine if isinstance(mine, dict) else {}


class CancellableStreams:
    """The optional `cancel(request_id)` of contract §3.1 for a `BaseAdapter` whose
    `stream_response` returns `self.cancellable(context, events)` (the five reference
    adapters). Opt-in: an adapter without `cancel` gets TC611 skipped with that reason."""

    name: ClassVar[str]
    log: logging.Logger

    @property
    def _streams(self) -> dict[str, CancelToken]:
        table: dict[str, CancelToken] | None = self.__dict__.get("_cancel_tokens")
        if table is None:
            table = self.__dict__["_cancel_tokens"] = {}
        return table

    def cancel(self, request_id: str) -> bool:
        """Abort the stream of `request_id` (its `RequestContext.request_id`): its iterator,
        at its next step, closes open tool calls and yields message_complete(cancelled),
        then stops. The harness aborts the HTTP request itself (adapters own no transport).
        True when the stream was in flight; False when it had completed or is unknown.
        Idempotent."""
        token = self._streams.get(request_id)
        if token is None or token.done:
            return False
        token.cancelled = True
        return True

    def cancellable(
        self,
        ctx: RequestContext,
        events: Iterator[StreamEvent],
        snapshot: Callable[[], list[Block]] | None = None,
    ) -> Iterator[StreamEvent]:
        """`events` made cancellable through `cancel(ctx.request_id)` (as is, without an id);
        `snapshot()` is the stream's content so far (for blocks streamed without deltas)."""
        if ctx.request_id is None:
            return events
        token = self._streams[ctx.request_id] = CancelToken()

        def run() -> Iterator[StreamEvent]:
            try:
                yield from cancellable_events(
                    events, token, ctx, lambda content: estimated_usage(self.name, self.log, ctx, content), snapshot
                )
            finally:
                token.done = True
                if self._streams.get(str(ctx.request_id)) is token:
                    del self._streams[str(ctx.request_id)]

        return run()


def log_block_dropped(
    logger: logging.Logger,
    *,
    adapter: str,
    session_id: str,
    message_id: str,
    block_type: str,
    reason: str,
) -> None:
    """The structured WARN line of a lossy projection (spec §4.2.2, §7.3): one per dropped block.

    The five fields ride on the LogRecord as attributes (`record.block_type`...), so a JSON
    log formatter or the conformance suite reads them without parsing the text.
    """
    logger.warning(
        "%s: dropped %s block of message %s (session %s): %s",
        adapter,
        block_type,
        message_id,
        session_id,
        reason,
        extra={
            "event": "block_dropped",
            "session_id": session_id,
            "message_id": message_id,
            "block_type": block_type,
            "adapter": adapter,
            "reason": reason,
        },
    )


def estimated_usage(
    adapter: str, log: logging.Logger, ctx: RequestContext, content: list[Block]
) -> dict[str, int] | None:
    """Usage for a response that carried none (contract §7.2): the pre-flight input estimate
    and the streamed output, with the WARN line the contract asks for. None without an
    input estimate: a count of 0 would look real."""
    if ctx.estimated_input_tokens is None:
        return None
    out = 0
    for b in content:
        if b.get("type") in ("text", "thinking"):
            out += text_tokens(str(b.get("text", "")))
        elif b.get("type") == "tool_use":
            out += json_tokens(b.get("input", {})) + 4
    log.warning(
        "%s: response carried no usage; estimated %d input / %d output tokens",
        adapter,
        ctx.estimated_input_tokens,
        out,
        extra={"event": "usage_estimated", "adapter": adapter, "session_id": ctx.session_id},
    )
    return {
        "input_tokens": ctx.estimated_input_tokens,
        "output_tokens": out,
        "cached_input_tokens": 0,
        "cache_creation_input_tokens": 0,
    }


def harness_usage(token_usage: Mapping[str, int], model: str, ctx: RequestContext) -> dict[str, Any]:
    """canonical Usage from TokenUsage: cost from the core's price table, or an explicit 0."""
    usage: dict[str, Any] = {
        "input_tokens": int(token_usage.get("input_tokens", 0)),
        "output_tokens": int(token_usage.get("output_tokens", 0)),
        "cached_input_tokens": int(token_usage.get("cached_input_tokens", 0)),
        "cache_creation_input_tokens": int(token_usage.get("cache_creation_input_tokens", 0)),
        "cost_usd": "0",
        "pricing_version": "unpriced",
        "latency_ms": ctx.latency_ms,
    }
    if ctx.pricing is not None and ctx.pricing_version is not None:
        try:
            cost = ctx.pricing.cost(ctx.pricing_version, model, usage)
        except KeyError:
            pass
        else:
            usage["cost_usd"] = f"{cost.quantize(Decimal('0.000001')).normalize():f}"
            usage["pricing_version"] = ctx.pricing_version
    return usage
