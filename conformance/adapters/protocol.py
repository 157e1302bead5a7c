"""The adapter contract (seed 003 §7.1, adapter contract §3-§7): the types an adapter speaks
and the structural `Adapter` protocol the conformance suite checks.

An adapter is *pure translation*: canonical messages (plain dicts valid under
`schemas/canonical/v1/message.json`) to a provider's wire request, and wire responses and
stream chunks back to canonical messages and `StreamEvent` dicts. It never opens a
connection; the harness (a session manager, or the conformance suite replaying cassettes)
owns transport, retries, routing and pricing. Keeping HTTP out is what lets one suite check
every adapter offline against recorded traffic.

An adapter in another language is a process speaking the exec protocol
(docs/exec-protocol.md); the exec host (`conformance.adapters.exec`) is a proxy that
satisfies this protocol (and `CancellableAdapter` when the child offers `cancel`) by turning
each call into one request line, so the suite checks it as it checks a Python class.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..core.capabilities import declared
from ..formats.canonical.markers import DEFAULT_CRITICAL_KEY

if TYPE_CHECKING:
    from ..formats.canonical.pricing import PriceTable
    from .toolids import ToolIdMap

Message = dict[str, Any]
"""A canonical message: a dict valid under schemas/canonical/v1/message.json."""
Block = dict[str, Any]
ToolDefinition = dict[str, Any]
StreamEvent = dict[str, Any]
"""A dict valid under schemas/canonical/v1/stream-event.json."""
WireBody = dict[str, Any]

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
    adapter name, read only by the adapter that wrote it (spec §6.5). `critical_key` is the
    metadata key that marks blocks critical (spec §4.2.2 names none; see
    `formats.canonical.markers`): a block so marked that the provider cannot carry fails
    the request instead of being dropped.

    `model` is the canonical id, `<provider>:<model_name>` (canonical §6.3; contract §3.3
    "provider:name canonical id"), or the provider's own model id as is. The model name is
    opaque: it may hold `:` itself (Bedrock's `anthropic.claude-3-haiku-20240307-v1:0`,
    Ollama's `llama3.2:latest`, OpenAI's `ft:gpt-4o-mini:org::id`), so an adapter reads the
    id it sends with `model_for(self.provider)`, never by splitting at a `:`.
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
    critical_key: str = DEFAULT_CRITICAL_KEY

    def model_for(self, provider: str) -> str:
        """The model id the provider knows (contract §4.2 "wire model name, derived from
        canonical id"): `model` without its canonical `<provider>:` prefix when that prefix is
        `provider`, else `model` whole; never cut at any other `:` (canonical §6.3 gives the
        provider and the model name, and a model name may hold `:`)."""
        head, sep, rest = self.model.partition(":")
        return rest if sep and rest and head == provider else self.model

    @property
    def wire_model(self) -> str:
        """The provider's model name: `anthropic:claude-x` -> `claude-x` (the documented name
        of earlier releases; `model_for(adapter.provider)` says whose prefix it strips).

        The prefix is stripped only when it names a provider (`known_providers()`: canonical
        §6.3's, and every adapter's `provider` turnspec has loaded); any other `:` belongs to
        the model id (`anthropic.claude-3-haiku-20240307-v1:0` stays whole, where earlier
        releases cut it to `0`)."""
        head, sep, rest = self.model.partition(":")
        return rest if sep and rest and head in _PROVIDERS else self.model


# canonical §6.3's model identifiers name these providers (`anthropic:claude-sonnet-4-6`,
# `openai:gpt-5`, `ollama:llama-3.3-70b`, `openrouter:deepseek/deepseek-v3`), and the reference
# adapters' (`gemini`, `bedrock`); every adapter turnspec loads adds its own (`BaseAdapter`
# subclasses, the adapter registry)
_PROVIDERS: set[str] = {"anthropic", "openai", "ollama", "openrouter", "gemini", "bedrock"}


def known_provider(name: object) -> None:
    """Record `name` as a provider key (`AdapterOptions.wire_model` strips `name:` then)."""
    if isinstance(name, str) and name and ":" not in name:
        _PROVIDERS.add(name)


def known_providers() -> frozenset[str]:
    """The provider keys `AdapterOptions.wire_model` strips from a canonical model id."""
    return frozenset(_PROVIDERS)


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


# -- the protocol -------------------------------------------------------------------------


def accepts_keyword(fn: Any, keyword: str) -> bool:
    """Whether `fn` takes `keyword`: how a caller tells that an adapter offers one of the
    protocol's optional extensions (a reader's `url`, an estimator's `model` and
    `tool_choice`). A callable with no signature to read (a builtin) is called as the
    protocol says."""
    try:
        return keyword in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def read_wire_request(
    adapter: Any,
    body: WireBody,
    *,
    session_id: str | None,
    url: str | None,
    headers: Mapping[str, str] | None = None,
) -> ParsedRequest:
    """`adapter.from_wire_request(body, session_id=...)`, given the request's `url` (path and
    query) and `headers` too when the reader takes them: optional extensions, each passed
    only to a reader whose signature names it (`accepts_keyword`), so a reader written
    against an earlier release keeps working. The request is its method, URL and headers as
    well as its body: Gemini and Bedrock keep the model and the stream choice in the URL."""
    reader = adapter.from_wire_request
    extra: dict[str, Any] = {}
    if url is not None and accepts_keyword(reader, "url"):
        extra["url"] = url
    if headers is not None and accepts_keyword(reader, "headers"):
        extra["headers"] = dict(headers)
    return reader(body, session_id=session_id, **extra)  # type: ignore[no-any-return]


def capabilities_of(adapter: Any) -> dict[str, Any]:
    """An adapter's declared capabilities as a dict (`core.capabilities.declared`): a
    mapping, or an `AdapterCapabilities` object as the specs write it; `{}` when the adapter
    declares none or its declaration cannot be read (an untrusted adapter's property may
    raise), which TC001 fails."""
    try:
        return declared(getattr(adapter, "capabilities", None))
    except Exception:  # an untrusted object: no readable declaration
        return {}


@runtime_checkable
class Adapter(Protocol):
    """What the conformance suite checks (seed 003 §7.1 plus the §6.2 map).

    `from_wire_request` reads a recorded (or rendered) request body back into canonical
    form; the suite uses it for the request round trip (TC102, TC802), the pre-flight
    token estimate of recorded requests (TC701) and to read a replayed history back
    (TC4xx). An adapter that cannot read requests raises `NotImplementedError` from it,
    and those checks skip with that reason. Optional keyword extensions, passed only to a
    reader that names them (`read_wire_request`): `url` (the request's path and query) and
    `headers` (its headers, names lower-cased), where the API keeps part of the request
    outside the body (the model, the stream choice, a version). Any other method an adapter
    does not offer raises `errors.OperationNotOffered`: the cases that needed it skip with its
    reason (the exec host raises it for an operation its child's `hello` does not list).
    """

    name: str
    provider: str
    wire_api: str
    capabilities: Mapping[str, Any]  # or an `AdapterCapabilities` object (`capabilities_of` reads both)
    provider_tool_id: re.Pattern[str]

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest: ...

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message: ...

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]: ...

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest: ...

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int: ...

    def tool_id_map(self, session_id: str) -> ToolIdMap: ...


@runtime_checkable
class CancellableAdapter(Protocol):
    """The optional cancel hook of adapter contract §3.1, as this project's pure-translation
    adapters can offer it (the harness owns the HTTP request and aborts it itself).

    `cancel(request_id)` names a stream by the `RequestContext.request_id` it was started
    with. After it, the stream iterator, at its next step, yields `tool_use_end` for each
    tool call in flight (`final_input`: what its deltas spell as a JSON object, else `{}`)
    and one `message_complete` with `stop_reason: cancelled` and the partial content, then
    stops without raising (contract §5.3, streaming §6.2.1). It returns True when the stream
    was in flight, False when it had completed or is unknown; it is idempotent. An adapter
    without it gets TC611 skipped with that reason. `base.CancellableStreams` implements it;
    the exec host forwards it with the number of events the harness consumed (`delivered`).
    """

    def cancel(self, request_id: str) -> bool: ...
