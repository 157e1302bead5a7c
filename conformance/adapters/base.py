"""The adapter contract (seed 003 §7.1, adapter contract §3-§7) and helpers adapters share.

An adapter is *pure translation*: canonical messages (plain dicts valid under
`schemas/canonical/v1/message.json`) to a provider's wire request, and wire responses and
stream chunks back to canonical messages and `StreamEvent` dicts. It never opens a
connection; the harness (a session manager, or the conformance suite replaying cassettes)
owns transport, retries, routing and pricing. Keeping HTTP out is what lets one suite check
every adapter offline against recorded traffic.

`Adapter` is the structural protocol the suite checks; `BaseAdapter` is an optional base
class holding what every reference adapter needs: the per-session tool-id maps (§6.2), the
lossy-projection log line (§7.3) and the critical-block error, and assembly of the final
assistant message from the parts an adapter knows (adapter contract §3.3).
"""

from __future__ import annotations

import abc
import datetime as dt
import json
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from ulid import ULID

if TYPE_CHECKING:
    from ..formats.canonical.pricing import PriceTable

Message = dict[str, Any]
"""A canonical message: a dict valid under schemas/canonical/v1/message.json."""
Block = dict[str, Any]
ToolDefinition = dict[str, Any]
StreamEvent = dict[str, Any]
"""A dict valid under schemas/canonical/v1/stream-event.json."""
WireBody = dict[str, Any]

LOGGER_NAME = "turnspec.adapters"

# adapter contract §6.1
ERROR_CLASSES = (
    "rate_limit",
    "auth",
    "server_error",
    "network",
    "context_overflow",
    "invalid_request",
    "cancelled",
    "other",
)
# adapter contract §3.3 StopReason
STOP_REASONS = ("end_turn", "max_tokens", "stop_sequence", "tool_use", "cancelled", "error")


# -- requests, responses, options ------------------------------------------------------


@dataclass(frozen=True)
class AdapterOptions:
    """What a request asks for beyond the messages and tools (adapter contract §3.3).

    `extra` holds provider-specific top-level request fields sent verbatim (§3.2: adapter
    options are a permission for provider knobs such as Anthropic's `thinking` or OpenAI's
    `tool_choice`; core code never reads them). `provider_tools` are provider-native tool
    definitions that have no canonical form (Anthropic's server tools) and are appended to
    the wire `tools` verbatim. `provider_raw` is request-level round-trip data keyed by
    adapter name, read only by the adapter that wrote it (spec §6.5).
    """

    model: str
    max_output_tokens: int | None = None
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()
    stream: bool = False
    output_schema: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    provider_tools: tuple[Mapping[str, Any], ...] = ()
    provider_raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def wire_model(self) -> str:
        """The provider's model name: `anthropic:claude-x` -> `claude-x`."""
        return self.model.split(":", 1)[1] if ":" in self.model else self.model


@dataclass(frozen=True)
class RequestContext:
    """What the harness knows about a call that the wire response does not say.

    Message ids are the core's (spec §6.1), so the harness passes the id of the assistant
    message being produced; when it does not, one is generated here as a harness would.
    `pricing` is the core's price table (spec §6.4): adapters never price, the harness does.
    """

    session_id: str
    message_id: str | None = None
    request_id: str | None = None
    model: str | None = None
    created_at: str | None = None
    latency_ms: int = 0
    pricing: PriceTable | None = None
    pricing_version: str | None = None
    estimated_input_tokens: int | None = None
    """The harness's pre-flight `estimate_input_tokens` of the request; lets a stream that
    carries no usage still report estimated counts (adapter contract §7.2, last paragraph)."""


@dataclass(frozen=True)
class WireRequest:
    """An HTTP request the harness sends: method, path under the provider's base URL, headers
    (never credentials: the harness adds those), JSON body."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: WireBody


@dataclass(frozen=True)
class WireResponse:
    """A provider's answer: HTTP status, headers and the decoded JSON body."""

    body: Any
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ParsedRequest:
    """What `from_wire_request` returns: the canonical form of a recorded request."""

    messages: list[Message]
    tools: list[ToolDefinition]
    options: AdapterOptions


# -- errors (adapter contract §6.3) ----------------------------------------------------


class AdapterError(Exception):
    """Base of every adapter failure; `error_class` is one of adapter contract §6.1."""

    error_class: ClassVar[str] = "other"

    def __init__(
        self,
        message: str,
        *,
        provider_status: int | None = None,
        request_id: str | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.provider_message = message
        self.provider_status = provider_status
        self.request_id = request_id
        self.retryable = retryable


class RateLimitError(AdapterError):
    error_class = "rate_limit"

    def __init__(self, message: str, *, retry_after_seconds: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after_seconds = retry_after_seconds


class AuthError(AdapterError):
    error_class = "auth"


class ServerError(AdapterError):
    error_class = "server_error"


class NetworkError(AdapterError):
    error_class = "network"


class ContextOverflowError(AdapterError):
    error_class = "context_overflow"


class InvalidRequestError(AdapterError):
    error_class = "invalid_request"


class CancelledError(AdapterError):
    error_class = "cancelled"


class WireFormatError(AdapterError):
    """The provider's body is not what its API documents (a truncated stream, a missing field)."""

    error_class = "other"


class CriticalBlockError(InvalidRequestError):
    """A block the provider cannot carry was marked critical, so the request fails (§4.2.2, §7.3).

    Carries the same fields as the WARN line a non-critical drop writes.
    """

    def __init__(self, *, adapter: str, session_id: str, message_id: str, block_type: str, reason: str) -> None:
        super().__init__(f"{adapter}: critical {block_type} block of message {message_id} not sendable: {reason}")
        self.adapter = adapter
        self.session_id = session_id
        self.message_id = message_id
        self.block_type = block_type
        self.reason = reason


_BY_STATUS: dict[int, type[AdapterError]] = {
    401: AuthError,
    403: AuthError,
    408: NetworkError,
    413: ContextOverflowError,
    429: RateLimitError,
}


def error_for_status(status: int, message: str, *, hint: str | None = None) -> AdapterError:
    """The adapter contract §6.2 default mapping of an HTTP status, refined by a class hint."""
    by_hint = {
        c.error_class: c
        for c in (
            RateLimitError,
            AuthError,
            ServerError,
            NetworkError,
            ContextOverflowError,
            InvalidRequestError,
            CancelledError,
        )
    }
    if hint in by_hint:
        return by_hint[hint](message, provider_status=status)
    cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else InvalidRequestError if 400 <= status < 500 else AdapterError
    return cls(
        message,
        provider_status=status,
        retryable=cls in (RateLimitError, ServerError, NetworkError),
    )


# -- ids (spec §6.1, §6.2) ---------------------------------------------------------------

_TOOL_ID = re.compile(r"tu_[0-7][0-9A-HJKMNP-TV-Z]{25}\Z")


def new_ulid() -> str:
    """A ULID; python-ulid is monotonic within a process, so ids sort in creation order."""
    return str(ULID())


def new_tool_id() -> str:
    """A canonical tool call id `tu_<ULID>` (spec §6.2)."""
    return "tu_" + new_ulid()


def is_canonical_tool_id(value: str) -> bool:
    return bool(_TOOL_ID.match(value))


def now_timestamp() -> str:
    """RFC 3339 UTC with microseconds, as `created_at` requires (spec §4.1)."""
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ToolIdMap:
    """The per-session bidirectional map canonical `tu_<ULID>` <-> provider tool id (spec §6.2).

    Injective both ways by construction: `bind` refuses a pair that would give a provider id
    two canonical ids or the reverse. `new_provider_id` makes ids that satisfy the provider's
    rules when a canonical id is sent to this provider for the first time.
    """

    def __init__(self, provider: str, new_provider_id: Any) -> None:
        self.provider = provider
        self._new_provider_id = new_provider_id
        self._to_provider: dict[str, str] = {}
        self._to_canonical: dict[str, str] = {}

    def bind(self, canonical_id: str, provider_id: str) -> None:
        have_p = self._to_provider.get(canonical_id)
        have_c = self._to_canonical.get(provider_id)
        if have_p == provider_id and have_c == canonical_id:
            return
        if have_p is not None or have_c is not None:
            raise ValueError(f"{self.provider}: cannot bind {canonical_id} <-> {provider_id}: one side is mapped")
        self._to_provider[canonical_id] = provider_id
        self._to_canonical[provider_id] = canonical_id

    def canonical_for(self, provider_id: str) -> str:
        """Parsing wire -> canonical: look up the canonical id, creating one on first sight."""
        found = self._to_canonical.get(provider_id)
        if found is None:
            found = new_tool_id()
            self.bind(found, provider_id)
        return found

    def provider_for(self, canonical_id: str) -> str:
        """Serializing canonical -> wire: look up the provider id, generating one on first use."""
        found = self._to_provider.get(canonical_id)
        if found is None:
            found = self._new_provider_id()
            while found in self._to_canonical:
                found = self._new_provider_id()
            self.bind(canonical_id, found)
        return found

    def get_provider(self, canonical_id: str) -> str | None:
        return self._to_provider.get(canonical_id)

    def get_canonical(self, provider_id: str) -> str | None:
        return self._to_canonical.get(provider_id)

    def pairs(self) -> list[tuple[str, str]]:
        """Every (canonical, provider) pair, for inspection by the suite."""
        return list(self._to_provider.items())


# -- the protocol -------------------------------------------------------------------------


@runtime_checkable
class Adapter(Protocol):
    """What the conformance suite checks (seed 003 §7.1 plus the §6.2 map).

    `from_wire_request` is an optional extension: when present the suite reads recorded
    requests into canonical form and renders them back (a request round trip).
    """

    name: str
    provider: str
    wire_api: str
    capabilities: Mapping[str, Any]
    provider_tool_id: re.Pattern[str]

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest: ...

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message: ...

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]: ...

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int: ...

    def tool_id_map(self, session_id: str) -> ToolIdMap: ...


# -- shared machinery ------------------------------------------------------------------


class BaseAdapter(abc.ABC):
    """Helpers the reference adapters share; third-party adapters may use or ignore it."""

    name: ClassVar[str]
    provider: ClassVar[str]
    wire_api: ClassVar[str]
    capabilities: ClassVar[Mapping[str, Any]]
    provider_tool_id: ClassVar[re.Pattern[str]]

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

        A block is critical when the message's `metadata.critical` is true (every block) or
        a list holding the block's content index (spec §4.2.2: "fails the request if marked
        critical via metadata").
        """
        sid, mid = str(message.get("session_id", "")), str(message.get("id", ""))
        critical = (message.get("metadata") or {}).get("critical")
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
    from .estimate import json_tokens, text_tokens

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


# -- streams ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SseEvent:
    event: str
    data: str


class SseDecoder:
    """Incremental Server-Sent Events decoder (WHATWG HTML §9.2.6 "event stream interpretation").

    Written here because the maintained SSE packages (httpx-sse, sseclient) wrap an HTTP
    response object, and an adapter receives bytes from a harness that owns the transport.
    Chunks may split lines, fields and UTF-8 sequences anywhere.
    """

    def __init__(self) -> None:
        self._buf = b""
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes | str) -> list[SseEvent]:
        self._buf += chunk.encode() if isinstance(chunk, str) else chunk
        out: list[SseEvent] = []
        while True:
            cut = _line_end(self._buf)
            if cut is None:
                return out
            end, nxt = cut
            line = self._buf[:end].decode("utf-8", errors="replace")
            self._buf = self._buf[nxt:]
            self._line(line, out)

    def close(self) -> list[SseEvent]:
        out: list[SseEvent] = []
        if self._buf:
            self._line(self._buf.decode("utf-8", errors="replace"), out)
            self._buf = b""
        self._line("", out)
        return out

    def _line(self, line: str, out: list[SseEvent]) -> None:
        if not line:
            if self._data:
                out.append(SseEvent(self._event or "message", "\n".join(self._data)))
            self._event, self._data = "", []
            return
        if line.startswith(":"):
            return
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)


def _line_end(buf: bytes) -> tuple[int, int] | None:
    for i, b in enumerate(buf):
        if b == 0x0A:
            return i, i + 1
        if b == 0x0D:
            if i + 1 == len(buf):
                return None  # a CR at the end may be the first half of CRLF
            return i, i + 2 if buf[i + 1] == 0x0A else i + 1
    return None


def sse_events(chunks: Iterable[bytes | str]) -> Iterator[SseEvent]:
    dec = SseDecoder()
    for c in chunks:
        yield from dec.feed(c)
    yield from dec.close()


def parse_json_object(text: str) -> dict[str, Any] | None:
    """`text` as a JSON object, or None when it is not one (tool arguments, stream fragments)."""
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def message_from_stream(events: Iterable[StreamEvent], ctx: RequestContext, adapter: BaseAdapter) -> Message:
    """The canonical message a harness stores after a stream (message_complete is authoritative)."""
    model: str | None = None
    for ev in events:
        if ev["type"] == "message_start":
            model = ev.get("model")
            ctx = replace(ctx, message_id=ev["message_id"])
        elif ev["type"] == "message_complete":
            wire_model = model.split(":", 1)[1] if model and ":" in model else model
            status = {"cancelled": "cancelled", "error": "error"}.get(ev["stop_reason"], "complete")
            return adapter.assemble(
                ctx,
                list(ev["final_content"]),
                wire_model=wire_model,
                token_usage=ev.get("usage"),
                status=status,
            )
    raise WireFormatError("stream ended without message_complete")
