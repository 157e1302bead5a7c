"""The `WireApi` record: one frozen value per provider wire API.

Fields are facts from the provider's documentation (cite them in `docs`), never derived
from an adapter. The suite, the cassette reader and the CLI read only these records, so
an API the project has no adapter for is still recognised, attributed and schema-checked.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core import pointers
from .framing import Framing as Framing  # a framing is a value of its own module (wire.framing)

JsonBody = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Located:
    """A value found in a wire body, with the RFC 6901 JSON pointer it sits at."""

    pointer: str
    value: Any


def _nothing(_body: JsonBody) -> list[Located]:
    return []


def _no_value(_body: JsonBody) -> Any:
    return None


def _no_stream_value(_events: list[Any]) -> Any:
    return None


def _unknown(_event: Any) -> bool | None:
    return None


def _no_fragments(_events: list[Any]) -> list[list[str]] | None:
    return None


Probe = Callable[[JsonBody], list[Located]]


def _no_refusals(_events: list[Any]) -> list[str] | None:
    return None


OptionsProbe = Callable[[JsonBody], dict[str, Located] | None]


def _no_call(_call: Any) -> tuple[str, Any] | None:
    return None


def _no_departure(_events: list[Any]) -> str | None:
    return None


def _no_calls(_events: list[Any]) -> list[tuple[str, Any]] | None:
    return None


def json_object(text: Any) -> dict[str, Any] | None:
    """The JSON object a wire's arguments string spells (None when it spells none: empty,
    not JSON, or JSON of another type): tool arguments sent as JSON text."""
    if isinstance(text, dict):
        return text
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _no_options(_body: JsonBody) -> dict[str, Located] | None:
    return None


def as_count(v: Any) -> int | None:
    """A token count as read from a recording or an adapter's usage: 0 when absent or null
    (a bucket not reported), the integer (JSON has one number type: 12.0 is 12), None when
    it is no count (a negative, a fraction, a string, a boolean)."""
    if v is None:
        return 0
    if type(v) is float and v.is_integer():
        v = int(v)
    return v if type(v) is int and v >= 0 else None


def token_count(usage: Mapping[str, Any], *path: str) -> int | None:
    """The token count at `path` in a recorded usage object (`as_count`): None makes a
    recording's usage unreadable, which a usage probe answers as no usage located, never
    as a count it made up or an exception."""
    v: Any = usage
    for key in path:
        v = v.get(key) if isinstance(v, Mapping) else None
    return as_count(v)


def token_buckets(
    usage: Any, input: tuple[tuple[str, ...], ...], output: tuple[tuple[str, ...], ...],
    cache_read: tuple[str, ...] | None = None, cache_write: tuple[str, ...] | None = None,
    cached_in_input: bool = False,
) -> dict[str, int] | None:  # fmt: skip
    """A recorded usage object as the four canonical buckets (adapter contract §7.2):
    `input` and `output` the sums of the counts at their paths, `cache_read`/`cache_write`
    the counts at theirs (0 where the API reports none); `cached_in_input`: the API counts
    cache reads inside its input count, taken out here so the buckets are disjoint. None
    when `usage` is no object or a count in it is no count (`token_count`)."""
    if not isinstance(usage, Mapping):
        return None
    counts = [token_count(usage, *p) for p in input], [token_count(usage, *p) for p in output]
    read = token_count(usage, *cache_read) if cache_read else 0
    write = token_count(usage, *cache_write) if cache_write else 0
    if read is None or write is None or None in counts[0] or None in counts[1]:
        return None
    total_in = sum(c for c in counts[0] if c is not None)
    return {
        "input": max(0, total_in - read) if cached_in_input else total_in,
        "output": sum(c for c in counts[1] if c is not None),
        "cache_read": read,
        "cache_write": write,
    }


Path = tuple[str, ...]
"""The keys leading to a token count inside a usage object (`("prompt_tokens_details", "cached_tokens")`)."""


@dataclass(frozen=True)
class UsageFields:
    """Where a response's usage object (`at`, an RFC 6901 pointer in a whole response body)
    keeps the counts of contract §7.2's four buckets: `input` and `output` each the sum of
    the counts at their paths, `cache_read` / `cache_write` the count at theirs (None: the
    API reports none). Declared once per record: its usage probes read it (`buckets`), and
    `turnspec wire show` prints it. Whether the input count includes cache reads is the
    record's `cached_in_input`."""

    at: str
    input: tuple[Path, ...]
    output: tuple[Path, ...]
    cache_read: Path | None = None
    cache_write: Path | None = None

    def buckets(self, usage: Any, *, cached_in_input: bool = False) -> dict[str, int] | None:
        """`usage` (the object at `at`) as the four buckets (`token_buckets`)."""
        return token_buckets(usage, self.input, self.output, self.cache_read, self.cache_write, cached_in_input)


def option_fields(**pointers: str) -> OptionsProbe:
    """A `request_options` probe: each option name (`max_output_tokens`, `stop_sequences`,
    `temperature`) -> the RFC 6901 pointer of the request field the API keeps it in; the
    probe answers the value there, None when the body has none."""

    def probe(body: JsonBody) -> dict[str, Located] | None:
        return {name: Located(pointer, value_at(body, pointer)) for name, pointer in pointers.items()}

    return probe


def error_event(*reply_keys: str) -> Callable[[list[Any]], Any]:
    """A `stream_error` probe for APIs that report a failure after the stream began as one
    event that is an error body of their own (`{"error": ...}`) and carries none of the
    reply's keys (Chat Completions `choices`, Gemini `candidates`, Ollama `message`): the
    first such event, None when there is none."""

    def probe(events: list[Any]) -> Any:
        for ev in events:
            if isinstance(ev, Mapping) and "error" in ev and not any(k in ev for k in reply_keys):
                return dict(ev)
        return None

    return probe


def schema_at(*pointers: str) -> Probe:
    """An `output_schema` probe: the JSON Schema objects at these pointers of a request
    (the API's own structured-output fields)."""

    def probe(body: JsonBody) -> list[Located]:
        return [Located(p, v) for p in pointers if isinstance(v := value_at(body, p), Mapping)]

    return probe


def value_at(body: Any, pointer: str) -> Any:
    """The value at an RFC 6901 pointer of object keys (None when any step is missing)."""
    value: Any = body
    for part in pointer.split("/")[1:]:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def string_at(pointer: str) -> Callable[[JsonBody], Any]:
    """A response probe: the string at `pointer`, None when there is none."""

    def probe(body: JsonBody) -> Any:
        value = value_at(body, pointer)
        return value if isinstance(value, str) and value else None

    return probe


def first_string_at(pointer: str) -> Callable[[list[Any]], Any]:
    """A stream probe: the string at `pointer` in the first event that has one."""
    one = string_at(pointer)
    return lambda events: next((v for e in events if (v := one(e)) is not None), None)


@dataclass(frozen=True)
class Probes:
    """Where the API carries things, per its docs. Each probe reads a decoded JSON body.

    Request probes take a request body; response probes take a non-streamed response body.
    A probe the API has no field for keeps the default (finds nothing). Checks use these
    to look at the field the API uses, never by searching a serialized body for a string.
    """

    # request side
    system: Probe = _nothing  # system prompt text(s)
    thinking_text: Probe = _nothing  # thinking / reasoning text sent back
    signatures: Probe = _nothing  # opaque thinking state: signature, encrypted_content, thoughtSignature
    redacted_thinking: Probe = _nothing  # redacted thinking payloads
    tool_use_ids: Probe = _nothing  # ids of tool calls in the history
    tool_result_ids: Probe = _nothing  # ids a tool result answers
    tool_result_errors: Probe = _nothing  # value: bool, whether that tool result is marked as an error
    images: Probe = _nothing  # value: {"kind": "base64"|"url", "media_type": str|None, "data"|"url": str}
    # response side
    response_stop_reason: Callable[[JsonBody], Any] = _no_value  # the raw provider value
    # the ids the API issued on the tool calls of a response (or of one decoded stream event
    # where events have the response's shape: Gemini, Ollama); nothing found where the calls
    # carry none or the record does not say. Read where `ToolIdRule.issued_by_provider` is
    # False: which calls' ids came from the wire, which ones an adapter minted
    response_tool_ids: Probe = _nothing
    response_usage: Callable[[JsonBody], Any] = (
        _no_value  # {"input": int, "output": int, "cache_read": int, "cache_write": int}
    )
    # stream side: the decoded JSON events of one streamed response, in order
    # (SSE `data:` payloads, NDJSON lines or JSON-array elements; see wire.framing.json_events)
    stream_stop_reason: Callable[[list[Any]], Any] = _no_stream_value  # the raw provider value
    stream_usage: Callable[[list[Any]], Any] = _no_stream_value  # same keys as response_usage
    # one decoded stream event -> whether it is the event that opens the stream (exactly once,
    # first: Anthropic `message_start`) / closes it (nothing may follow: `message_stop`);
    # None where the API has no such event (the default)
    stream_opens: Callable[[Any], bool | None] = _unknown
    stream_closes: Callable[[Any], bool | None] = _unknown
    # the tool-input JSON fragments the provider streamed, one list per tool call in the
    # order the calls opened (contract §5.4: `partial_json` is the literal fragment); None
    # where the API sends tool input whole (Gemini, Ollama) or the record does not say
    stream_tool_fragments: Callable[[list[Any]], list[list[str]] | None] = _no_fragments
    # the error a stream reports after it started (Anthropic's `error` event), as an error
    # body of the API's (`{"error": {...}}`); None when the stream reports none or the record
    # does not say
    stream_error: Callable[[list[Any]], Any] = _no_stream_value
    # the model that served the call, as the response (or the stream) names it (contract §3.3:
    # "the actual model that served the call")
    response_model: Callable[[JsonBody], Any] = _no_value
    stream_model: Callable[[list[Any]], Any] = _no_stream_value
    # response side again: the thinking a non-streamed response carries (opaque state: a
    # signature, Gemini's thoughtSignature; thinking text), which the next request must send
    # back to the same API (TC405); nothing found where the record does not say
    response_signatures: Probe = _nothing
    response_thinking_text: Probe = _nothing
    # request side again: where the request keeps the generation options of contract §3.3
    # (`max_output_tokens`, `stop_sequences`, `temperature`), only those the API has a field
    # for (see `option_fields`); None where the record does not say
    request_options: OptionsProbe = _no_options
    # request side: the JSON Schema of contract §3.3's `output_schema`, in the API's own
    # structured-output field (Chat `response_format.json_schema.schema`, Responses
    # `text.format.schema`, Gemini `generationConfig.responseJsonSchema`/`responseSchema`,
    # Ollama `format`); nothing found where the API documents no such field
    output_schema: Probe = _nothing
    # response side: the refusal texts a response carries apart from its answer text
    # (Responses `refusal` content parts, Chat Completions `message.refusal`); the stream
    # probe answers the refusal texts a stream spells (Responses' `.done` events, else the
    # joined deltas; Chat's joined `delta.refusal` pieces); nothing / None where the
    # API documents no refusal content or the record does not say
    response_refusals: Probe = _nothing
    stream_refusals: Callable[[list[Any]], list[str] | None] = _no_refusals
    # response side: the tool calls a non-streamed response holds, one per call (value: the
    # call as the wire spells it), whether or not the API issued ids for them; the recording's
    # count of calls, which TC503 holds a parse to. Nothing found where the record does not say
    response_tool_calls: Probe = _nothing
    # response side: the reply's answer text, one value per text block or part as the wire
    # splits it (not thinking, not a refusal: TC903 reads those), which TC908 finds, in
    # order, in the parsed reply's text; the stream probe answers the texts a stream spells
    # (its text deltas joined per block). Nothing / None where the record does not say
    response_text: Probe = _nothing
    stream_text: Callable[[list[Any]], list[str] | None] = _no_refusals
    # one value of `response_tool_calls` (a call as the wire spells it) -> its tool name and
    # its input as a JSON object (None where the wire's input is no JSON object: arguments
    # text that does not parse, a custom tool's free text), which TC909 holds a parse to;
    # the stream probe answers the (name, input) of each call a stream spells, in the order
    # the calls opened (fragments joined). None where the record does not say
    call_of: Callable[[Any], tuple[str, Any] | None] = _no_call
    stream_tool_calls: Callable[[list[Any]], list[tuple[str, Any]] | None] = _no_calls
    # stream side: the first way a recorded stream's events break the event flow the API's
    # docs lay down (an event about a part the stream never opened), described with the
    # docs' sentence; None when the events keep to it or the record does not say. A reader
    # holding to the docs reads such a stream as an error (contract §6.5), so what the
    # recording says of its end is no measure of it: the suite skips, naming the departure
    stream_departure: Callable[[list[Any]], str | None] = _no_departure


@dataclass(frozen=True)
class ToolIdRule:
    """Which tool-call ids the API accepts in a request (docs or observed error bodies)."""

    pattern: re.Pattern[str] | None = None  # None: any string
    max_length: int | None = None
    issued_by_provider: bool = True  # False: the API issues no ids (the adapter must mint them)

    def accepts(self, value: str) -> bool:
        if self.max_length is not None and len(value) > self.max_length:
            return False
        return self.pattern is None or self.pattern.fullmatch(value) is not None


@dataclass(frozen=True)
class Carries:
    """What the wire format can express at all (independent of any adapter's choices)."""

    system_prompt: bool = True
    thinking_text: bool = False
    thinking_signature: bool = False
    redacted_thinking: bool = False
    images_base64: bool = False
    images_url: bool = False
    tool_result_error: bool = False  # an explicit error flag on tool results
    cache_read_tokens: bool = False
    cache_write_tokens: bool = False
    parallel_tool_calls: bool = False


@dataclass(frozen=True)
class StatusRow:
    """A row of contract §6.2's HTTP status table: the statuses, as the table names them,
    and their default §6.1 class (before the provider-body adjustments of `ErrorSignals`)."""

    statuses: frozenset[int] | range
    label: str  # as §6.2 writes it (`401, 403`, `5xx`)
    error_class: str
    adjustment: str = ""  # §6.2's "Provider-body adjustments" cell, quoted


STATUS_TABLE: tuple[StatusRow, ...] = (
    StatusRow(frozenset({401, 403}), "401, 403", "auth"),
    StatusRow(frozenset({408}), "408", "network"),
    StatusRow(
        frozenset({413}), "413", "context_overflow", "Some providers use 400 with body indicating overflow; remap."
    ),
    StatusRow(frozenset({429}), "429", "rate_limit"),
    StatusRow(range(500, 600), "5xx", "server_error", "Some providers use 529 specifically; same class."),
    StatusRow(range(400, 500), "4xx other", "invalid_request"),
)
"""Contract §6.2's HTTP status mapping ("Adapters apply these mappings as a starting point, then
adjust based on provider error bodies"), first row that holds the status wins; any other status
is `other`. Declared once: TC801's oracle (`status_default`) and `turnspec wire show` read it (an
outside author found the page naming the table and printing none). §6.2's pre-response row
(connection refused, DNS, TLS: `network`) has no status, so no row here."""

STATUS_OTHERWISE = "other"  # a status no row holds (1xx-3xx: no error status of §6.2's)


def status_default(status: int) -> str:
    """§6.2's default class of an HTTP status (`STATUS_TABLE`)."""
    return next((row.error_class for row in STATUS_TABLE if status in row.statuses), STATUS_OTHERWISE)


CONTEXT_OVERFLOW_MESSAGE = re.compile(
    r"context (?:length|window)|maximum context|token count .{0,40}exceeds|tokens? exceeds|too many tokens", re.I
)
"""Contract §6.2's 413 row, "Some providers use 400 with body indicating overflow; remap.":
the wording of an overflow message a record keeps unless its API documents its own."""


@dataclass(frozen=True)
class AlsoAccepted:
    """Another contract §6.1 class an error may honestly take when a signal names it, beside
    the one the record's table gives: where the provider documents the error so that two
    §6.1 definitions fit it, and §6.2 lets an adapter "adjust based on provider error
    bodies" from its status default. Bedrock's ModelTimeoutException is an HTTP 408
    (§6.2's default: NETWORK), yet it is the service's answer that the model timed out
    while processing, not §6.1 NETWORK's "timeout pre-response": SERVER_ERROR fits it as
    well. TC801 accepts either, each held to its own §6.3 subclass and §6.4 `retryable`."""

    signal: str  # the value a header or body table keys (`ModelTimeoutException`)
    classes: frozenset[str]  # the other §6.1 classes allowed for it
    says: str  # the provider documentation's sentence describing the error, quoted
    source: str  # where it says so (URL)


@dataclass(frozen=True)
class ErrorSignals:
    """The API's documented error signals, which adjust contract §6.2's HTTP status default
    ("Adapters apply these mappings as a starting point, then adjust based on provider error
    bodies"). Values are §6.1 class names. TC801 reads only these (never the API's name),
    so a new API declares its signals here, in its record.

    Read in this order, the first that answers wins:
    1. `headers`: a response header -> {its value (before any ':') -> class} (Amazon's
       `x-amzn-ErrorType: ThrottlingException:...`);
    2. `overflow_when` + `overflow_message`: where the body field at the pointer has that
       value and the message matches, context overflow (Anthropic's `invalid_request_error`
       "prompt is too long");
    3. `body_fields`: (RFC 6901 pointer, {value -> class}) in order (Anthropic `/error/type`,
       OpenAI `/error/code` then `/error/type`);
    4. `detail_reasons`: Google's `error.details[].reason` -> class (`API_KEY_INVALID`);
    5. the status default, remapped to context overflow when it is `invalid_request` and
       `overflow_message` matches (without `overflow_when`: §6.2's 400 remap).

    `status_in_body`: the pointer of an integer that is the HTTP status the error stands for
    (Google's `error.code`), which classifies an error reported inside a stream; None when
    the body carries none.

    `also_accepted`: for a signal value of `headers` or `body_fields`, other classes the
    contract allows it (`AlsoAccepted`, quoting the provider's description).
    """

    headers: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    body_fields: tuple[tuple[str, Mapping[str, str]], ...] = ()
    detail_reasons: Mapping[str, str] = field(default_factory=dict)
    overflow_message: re.Pattern[str] | None = CONTEXT_OVERFLOW_MESSAGE
    overflow_when: tuple[str, str] | None = None
    status_in_body: str | None = None
    also_accepted: tuple[AlsoAccepted, ...] = ()
    # the errors a stream's own frames name (an AWS event stream's `exception` frame:
    # `:exception-type` `throttlingException`), any case -> class; where a name is not here,
    # the `headers` and `body_fields` tables are read for it (the service's own error names)
    frames: Mapping[str, str] = field(default_factory=dict)

    def frame_class(self, kind: str, message: str = "") -> str | None:
        """The §6.1 class of an error a stream frame names (`ProviderStreamError.kind`), by
        this API's tables; an invalid request whose message is the overflow wording is
        context overflow (§6.2's 400 row); None when no table names it."""
        want = kind.lower()
        tables = [self.frames, *self.headers.values(), *(t for _, t in self.body_fields)]
        found = next((cls for t in tables for name, cls in t.items() if name.lower() == want), None)
        if found == "invalid_request" and self.overflow_message is not None and self.overflow_message.search(message):
            return "context_overflow"
        return found


@dataclass(frozen=True)
class Equivalence:
    """Two or more forms the API treats alike, with the documentation sentence that says so.

    A record lists them in `accepted_differences` (beside plain strings, the older form);
    `wire.equivalence` applies them wherever the suite compares wire values or what an
    adapter read from them (TC802, TC606, TC405, TC901), and a failing case names the ones
    it applied. `base64` holds RFC 6901 pointer patterns (`*` one key or index, `**` any
    number of them); `canonical_base64` names canonical block fields
    (`<block type>.<dotted path>`) that carry the API's base64 payload as it was on the wire.
    """

    forms: str  # which forms are equal
    says: str  # the documentation's sentence, quoted
    source: str  # where it says so (URL)
    # values at these pointers are base64 in the standard or the URL-safe alphabet, padded or
    # not: compared as the bytes they decode to
    base64: tuple[str, ...] = ()
    canonical_base64: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f'{self.forms} ({self.source}: "{self.says}")'


THINKING_PARTS = ("text", "signature", "redacted")
"""What of an assistant turn's thinking a next request can carry back: the thinking text, its
signature (opaque state: Anthropic `signature`, Gemini `thoughtSignature`) and redacted
thinking's payload."""


@dataclass(frozen=True)
class ThinkingBack:
    """Whether the API's docs require an assistant turn's thinking to go back on the wire when
    the turn is replayed to the same API, and what of it (TC405 and TC501 read only this).

    `needs` names the parts (of `THINKING_PARTS`) the next request must carry; empty where
    the docs require none, or where canonical form cannot carry what the API needs (then
    the checks skip with `says`). `says` quotes the documentation's sentence, `source` is
    where it says so.
    """

    needs: frozenset[str] = frozenset()
    says: str = ""
    source: str = ""
    # where `needs` is empty: why nothing is asked (the docs make it optional, or canonical
    # form cannot carry what the API needs)
    because: str = ""
    # where the docs require `needs` only of the assistant turn a request continues during
    # tool use (its calls answered by the tool results that end the history) and let the
    # thinking of earlier turns be omitted: that sentence, quoted (same `source`)
    prior_turns_optional: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.needs) - set(THINKING_PARTS)
        if unknown:
            raise ValueError(f"ThinkingBack.needs: unknown parts {sorted(unknown)} (known: {THINKING_PARTS})")

    def requires(self, part: str, *, current: bool = True) -> bool:
        """Whether `part` must go back; `current`: it is of the turn continued during tool use."""
        return part in self.needs and (current or not self.prior_turns_optional)

    def cite(self) -> str:
        """The documentation sentence, quoted with where it says so ("" when none)."""
        return f'{self.source}: "{self.says}"' if self.says else ""

    def skip_reason(self, api: str, part: str, *, current: bool = True) -> str:
        """Why a `part` not sent back to `api` is not a failure."""
        if not current and part in self.needs and self.prior_turns_optional:
            return (
                f"{api} does not require thinking {part} of an earlier turn sent back "
                f'({self.source}: "{self.prior_turns_optional}")'
            )
        if not self.says:
            return f"{api} does not require thinking {part} sent back (its record quotes no documentation sentence)"
        because = f"{self.because}; " if self.because else ""
        return f"{api} does not require thinking {part} sent back ({because}{self.cite()})"


@dataclass(frozen=True)
class Access:
    """Where an API lives and how a request proves who sent it, from its docs' authentication
    section: `turnspec wire record` sends under `base_url` with the key from `key_env`, and
    the headers named here are never written to a cassette (`turnspec cassettes lint` flags
    them: CL001 credentials, CL004 account ids)."""

    base_url: str | None = None  # the provider's own base URL; WireRequest.path goes under it
    key_env: str | None = None  # the environment variable holding the API key
    key_header: str = "authorization"  # the request header that carries the key
    key_prefix: str = "Bearer "  # what precedes the key in that header ("" for a bare key)
    credential_headers: tuple[str, ...] = ()  # request headers holding a credential (lower case)
    account_headers: tuple[str, ...] = ()  # headers naming an account: organisation, project

    def auth(self, key: str) -> dict[str, str]:
        """The header that carries `key` on a request."""
        return {self.key_header: self.key_prefix + key}


MODEL_PLACES = ("body", "path", "none")
PATH_ENCODINGS = ("percent", "raw")


@dataclass(frozen=True)
class ModelIn:
    """Where a request carries the model id and how it is spelled there, from the API's docs
    (contract §4.2: "model: <wire model name, derived from canonical id>"). The id is
    opaque: it may hold `:`, `/` and `.` of its own (Bedrock's
    `anthropic.claude-3-haiku-20240307-v1:0`, an inference profile's ARN).

    `where`: `body` (the field at `pointer`), `path` (the `{model}` segment of the
    `Endpoint` path templates) or `none` (the endpoint names no model). `encoding`, for the
    path: `percent`, the id percent-encoded as one segment (every byte outside RFC 3986
    §2.3's unreserved set, `:` and `/` included), or `raw`, the id as it is."""

    where: str = "none"
    pointer: str = ""
    encoding: str = "percent"
    says: str = ""  # the documentation's sentence, quoted
    source: str = ""  # where it says so (URL)

    def __post_init__(self) -> None:
        if self.where not in MODEL_PLACES:
            raise ValueError(f"ModelIn.where: {self.where!r} is none of {MODEL_PLACES}")
        if self.encoding not in PATH_ENCODINGS:
            raise ValueError(f"ModelIn.encoding: {self.encoding!r} is none of {PATH_ENCODINGS}")
        if self.where == "body" and not self.pointer.startswith("/"):
            raise ValueError("ModelIn.where 'body' needs the field's RFC 6901 pointer")

    def cite(self) -> str:
        return f'{self.source}: "{self.says}"' if self.says else ""


@dataclass(frozen=True)
class Header:
    """A request header the API's docs require (never a credential: the harness adds those),
    with the value they fix (None: any value)."""

    name: str  # as the docs spell it; compared case-insensitively (RFC 9110 §5.1)
    value: str | None = None
    says: str = ""
    source: str = ""
    # its value is part of what the request asks (a beta feature, a guardrail), not a client's
    # choice among documented ones (an API version): a request rendered back from a recording
    # must carry the recorded value (TC802)
    round_trip: bool = False

    def cite(self) -> str:
        return f'{self.source}: "{self.says}"' if self.says else ""


@dataclass(frozen=True)
class Endpoint:
    """What a request's method, URL and headers must carry, as data from the API's docs: the
    request is the method, the URL and the headers as well as the body. TC109 judges every
    rendered request against it (streaming and not, with the record's `examples` as model
    ids), TC802 compares them with the recorded request's.

    `path` and `stream_path` are templates of the URL path under the provider's base URL
    (which may add a prefix); `{model}` stands for the model's segment where `model.where`
    is `path`. `stream_path` None: a stream is asked for on the same path, by
    `stream_field` (RFC 6901 pointer, value) in the body; `streams_by_default`: the API
    streams when that field is absent (Ollama), so a request for one reply must set it to
    the opposite. `query`: query parameters that are part of the request's meaning (TC802
    compares those; others, such as a credential, are the harness's)."""

    path: str
    stream_path: str | None = None
    stream_field: tuple[str, Any] | None = None
    streams_by_default: bool = False
    model: ModelIn = field(default_factory=ModelIn)
    method: str = "POST"
    headers: tuple[Header, ...] = ()
    query: tuple[str, ...] = ()
    # model ids the docs show (their own `:`, `/` and `.` included), which TC109 renders with
    examples: tuple[str, ...] = ()
    says: str = ""  # the documentation's sentence naming the endpoint(s)
    source: str = ""
    # what else an author renders to pass TC109 and TC802 that the fields above do not say
    # (`turnspec wire show` prints each as a line of the endpoint; no check reads them)
    notes: tuple[str, ...] = ()

    def cite(self) -> str:
        return f'{self.source}: "{self.says}"' if self.says else ""


@dataclass(frozen=True)
class WireApi:
    """One provider wire API. `name` is stable and used in reports and cassette folders."""

    name: str  # e.g. "anthropic-messages"
    title: str  # e.g. "Anthropic Messages API"
    docs: tuple[str, ...]  # documentation URLs the record (and its schemas) were written from
    request_paths: tuple[re.Pattern[str], ...]  # matched with .search() against the request URL path
    framing: Framing  # the framing of its streamed responses (see `framing_by_url` for APIs with two)
    is_streaming: Callable[[str, JsonBody | None], bool]  # (url, request body) -> was a stream asked for
    schema_dir: str  # folder under schemas/wire/ holding request/response/stream-event schemas
    # the provider's own hosts (empty: any host), each a name or an fnmatch pattern for the
    # provider's regional hosts (`*-aiplatform.googleapis.com`); compatible servers differ
    hosts: tuple[str, ...] = ()
    chat: bool = True  # False for endpoints that are not an LLM chat turn (count_tokens, embeddings)
    tool_ids: ToolIdRule = field(default_factory=ToolIdRule)
    carries: Carries = field(default_factory=Carries)
    probes: Probes = field(default_factory=Probes)
    stop_reasons: Mapping[str, str] = field(default_factory=dict)  # raw provider value -> canonical stop_reason
    # raw provider values no StopReason of contract §3.3 names (a refusal, a content filter),
    # for which another canonical value is as defensible as the one above: TC903 accepts
    # these too (the contract states no mapping for them, so the record's is one choice)
    stop_reasons_also: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # APIs whose framing depends on the URL (Gemini: SSE with `alt=sse`, a JSON array without)
    framing_by_url: Callable[[str], Framing] | None = None
    # the other framings its streams come in (Gemini: the JSON array without `alt=sse`), for
    # a body with no URL beside it (`wire parse`): the one whose start the body has is used
    other_framings: tuple[Framing, ...] = ()
    # Request bodies the provider treats alike, made equal (TC802 compares a recorded request
    # with the same request read into canonical form and rendered back); each step is named,
    # with its reason, in `accepted_differences`. None: bodies are compared exactly, save for
    # the `Equivalence`s of `accepted_differences` (see `wire.equivalence.compare`).
    normalize_request: Callable[[JsonBody], JsonBody] | None = None
    # the top-level request field holding the conversation turns (`messages`, Gemini's
    # `contents`, Responses' `input`): a probe pointer under it is "in the history"
    history_key: str = "messages"
    # TC701's band for a tokenizer-free estimate against this provider's counts: (relative,
    # absolute tokens), calibrated on recorded usage; None takes the suite's default band
    estimate_tolerance: tuple[float, int] | None = None
    # the provider's own input count includes cache reads (OpenAI `prompt_tokens` /
    # `input_tokens`, Gemini `promptTokenCount`), so contract §7.2's literal mapping of it to
    # `input_tokens` is a second valid reading beside the disjoint one (TC904 accepts either,
    # one per adapter); False where input already excludes them (Anthropic)
    cached_in_input: bool = False
    # (RFC 6901 pointer, value) a streaming request must carry for the stream to report usage
    # (OpenAI Chat Completions: `/stream_options/include_usage` true); None: the API reports
    # usage on every stream. Adapter contract §7.2: adapters MUST request usage when streaming.
    stream_usage_request: tuple[str, Any] | None = None
    # RFC 6901 pointers of request fields that make the provider read server-side
    # conversation state (Responses' `previous_response_id`, `conversation`): the caller's
    # to set, never the adapter's to derive from the history it renders (TC802's next turn)
    state_fields: tuple[str, ...] = ()
    # a schema folder outside the package, for a record a third party registers (None: the
    # package's schemas/wire/<schema_dir>/)
    schema_path: str | None = None
    # the forms the API treats alike: each an `Equivalence` (with the documentation sentence
    # that says so) or, the older form, a sentence naming a step of `normalize_request`
    accepted_differences: tuple[str | Equivalence, ...] = ()
    # where a recorded request departs from the API's documented form although the API took
    # it (Gemini's one Tool object where the reference has a list): (RFC 6901 pointer, the
    # departure) for each, so TC802 skips naming it rather than fail an adapter that renders
    # the documented form back (the request schema accepts the recorded form; no sentence of
    # the docs declares the two alike)
    request_departures: Callable[[JsonBody], tuple[tuple[str, str], ...]] | None = None
    # RFC 6901 pointers of request settings for which the provider adds input tokens of its
    # own that no adapter renders (reasoning settings); with the API's structured-output field
    # (`probes.output_schema`) they are TC701's out-of-band inputs: contract §3.1's
    # `estimate_input_tokens(messages, tools, system_prompt)` never sees them; `POINTER: a, b`
    # names a setting only when set to one of those values
    out_of_band_settings: tuple[str, ...] = ()
    # the documentation sentence saying whose tokenizer the API's usage counts with, when it
    # is not one the API's own models share (a gateway counting "using the model's native
    # tokenizer" for whichever upstream model it routed to): TC701 skips its recordings with
    # it, since an estimate calibrated on one tokenizer says nothing of another's; "" (the
    # default): the API's usage is its own models' count, which TC701 compares
    usage_tokenizer: str = ""
    # where a response's usage object keeps each bucket's counts (TC904 through the usage
    # probes; `turnspec wire show`); None: the record does not say (or reads them in code)
    usage_fields: UsageFields | None = None
    # the API's documented error signals beside contract §6.2's status table (TC801)
    errors: ErrorSignals = field(default_factory=ErrorSignals)
    # whether the docs require an assistant turn's thinking back on replay, and what of it
    # (TC405, TC501); the default requires nothing
    thinking_back: ThinkingBack = field(default_factory=ThinkingBack)
    # where the API lives, its key, and the headers that must never be recorded
    access: Access = field(default_factory=Access)
    # what a request's method, URL and headers carry (model, stream choice, version
    # header), from the docs; None: the record does not say (TC109 then reads
    # `request_paths` only)
    endpoint: Endpoint | None = None
    # the API whose bodies this endpoint carries in its own payloads (Anthropic models
    # through Bedrock InvokeModel: the Anthropic Messages response, and its stream events
    # inside the event stream's `chunk`s, which a nested `framing` decodes; through Vertex
    # AI's rawPredict: Anthropic's response and SSE stream as they are): its `response`
    # and `stream-event` schemas validate what this record's schema folder has none for
    inner: WireApi | None = None

    def stream_usage_requested(self, body: JsonBody) -> bool | None:
        """Whether a streaming request `body` asks for usage as `stream_usage_request` says
        (None when the API needs no such field)."""
        if self.stream_usage_request is None:
            return None
        pointer, want = self.stream_usage_request
        node: Any = body
        for token in pointer.split("/")[1:]:
            key = pointers.unescape(token)
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                return False
        return bool(node == want and type(node) is type(want))

    def own_host(self, host: str) -> bool:
        """Whether `host` (a URL's authority, a port after it or not) is one of the provider's
        own (`hosts`); True when the record names none."""
        if not self.hosts:
            return True
        name = host.rsplit("@", 1)[-1].split(":", 1)[0].lower() if not host.startswith("[") else host.lower()
        return any(name == h or host == h or fnmatch.fnmatchcase(name, h) for h in self.hosts)

    def matches(self, path: str) -> bool:
        return any(p.search(path) for p in self.request_paths)

    def framing_of(self, body: bytes) -> Framing:
        """The framing of a stream body seen without its URL: `framing`, unless the body starts
        as one of `other_framings` does and not as `framing` does."""
        if self.framing.looks(body):
            return self.framing
        return next((f for f in self.other_framings if f.looks(body)), self.framing)

    def framing_for(self, url: str) -> Framing:
        return self.framing_by_url(url) if self.framing_by_url is not None else self.framing
