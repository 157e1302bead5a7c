"""What every check family shares: the environment a check reads, the `check` decorator,
and helpers to call an adapter and judge what comes back.

Checks judge adapters from the outside: what reached the wire (located through the wire
API's `WireApi` record and validated against its independent schemas), what the
validator says about parsed messages, the WARNING records logged, the events streamed.
"""

from __future__ import annotations

import json
import logging
import re
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, is_dataclass, replace
from itertools import pairwise
from typing import Any
from urllib.parse import urlsplit

from ...adapters.base import AdapterError, harness_usage
from ...adapters.estimate import estimate_for_model
from ...adapters.protocol import (
    Adapter,
    AdapterOptions,
    Message,
    ParsedRequest,
    RequestContext,
    StreamEvent,
    WireBody,
    WireRequest,
    WireResponse,
    read_wire_request,
)
from ...adapters.streams import to_canonical_names
from ...core import pointers
from ...core.findings import RuleInfo, Selection
from ...core.schema_validation import SchemaValidator
from ...core.schemas import schema_set
from ...formats.canonical.markers import DEFAULT_CRITICAL_KEY
from ...formats.canonical.memory import validate_messages
from ...wire import equivalence, registry
from ...wire import schemas as wire_schemas
from ...wire.api import Probes, WireApi, as_count, value_at
from .. import rules as R
from ..interactions import Cassette, Interaction
from ..outcome import AdapterUnderTest, Outcome, Status, note_crash

CheckFn = Callable[["Env"], Iterator[Outcome]]
DROP_FIELDS = ("session_id", "message_id", "block_type", "adapter", "reason")  # the reference spelling
# what a request read back from the wire cannot have: routing and usage of past turns
HISTORY_IGNORE = Selection(ignore=("TS105", "TS106"))
# Canonical §4.2 ("`name`: canonical tool name (snake_case, no provider prefix)", TS306)
# binds the names a canonical producer chooses. In recorded traffic the application that
# recorded it chose them (`OpenMeteoTool`), and an adapter must keep them verbatim so the
# next request calls the tool that application defined (TC802): not the adapter's fault.
# The project's own hand-written cassettes (`Interaction.synthetic`) chose theirs: bound.
RECORDED_TRAFFIC_IGNORE = ("TS306",)
# §5.2.2's pairing (TS205: a tool_result answers an earlier tool_use) within what the
# request holds: with a conversation-state field (`WireApi.state_fields`: Responses'
# `previous_response_id`) the call a result answers lives in the provider's stored turns
SERVER_SIDE_IGNORE = ("TS205",)


def recorded_selection(it: Interaction, base: Selection | None = None, api: WireApi | None = None) -> Selection:
    """`base` (default: every rule) without what a recording's application chose
    (`RECORDED_TRAFFIC_IGNORE`, unless the cassette is hand-written) and, for a request
    carrying one of `api.state_fields`, the pairing its server-side turns complete."""
    base = base or Selection()
    ignore = list(base.ignore)
    if not it.synthetic:
        ignore += RECORDED_TRAFFIC_IGNORE
    body = it.request_body
    if api is not None and isinstance(body, dict) and any(value_at(body, p) is not None for p in api.state_fields):
        ignore += SERVER_SIDE_IGNORE
    return Selection(select=base.select, ignore=tuple(ignore), strict=base.strict)


@dataclass(frozen=True)
class Check:
    """One check function and the rules it yields outcomes for (a family module exports it)."""

    name: str
    rules: tuple[str, ...]
    fn: CheckFn


def check(*rules: RuleInfo) -> Callable[[CheckFn], Check]:
    def deco(fn: CheckFn) -> Check:
        return Check(fn.__name__, tuple(r.id for r in rules), fn)

    return deco


def _claims(api: WireApi, it: Interaction) -> bool:
    """Whether `api`'s record claims the endpoint `it` was recorded at, whichever record
    `registry.api_for_url` found for it first."""
    return it.api is not None and api.matches(urlsplit(it.uri).path or it.uri)


@dataclass
class Env:
    subjects: list[AdapterUnderTest]
    peers: list[Adapter]
    own: dict[str, list[Cassette]]
    samples: list[Cassette]
    sel: Selection
    pairs: dict[str, dict[str, Status]] = field(default_factory=dict)
    critical_key: str = DEFAULT_CRITICAL_KEY  # the metadata key TC203 marks a block critical with
    # recordings set aside before any check replays them, with why (TC800 reports each once)
    damaged: list[tuple[Interaction, str]] = field(default_factory=list)
    # this project's own recordings, every API's: templates of the scripted cases (found by
    # the record that claims each, never replayed as cases of an adapter that did not ask)
    project: list[Cassette] = field(default_factory=list)
    _validators: dict[str, SchemaValidator] = field(default_factory=dict)

    def recorded(self, s: AdapterUnderTest) -> Iterator[Interaction]:
        """Own cassettes then samples, the interactions of the adapter's wire API only: one
        at an endpoint its record does not claim is skipped (TC800 says why, `unclaimed`)."""
        for c in self.own.get(s.name, []):
            yield from self.claimed(s, c.interactions)
        for c in self.samples:
            for it in c.interactions:
                if it.api == wire_name(s.adapter):
                    yield it

    def claimed(self, s: AdapterUnderTest, interactions: Sequence[Interaction]) -> Iterator[Interaction]:
        """The interactions of `s`'s own cassettes its wire API's record claims; all of them
        when no record has that name (the suite cannot tell the API's endpoints then). One
        that another record claims first (a third party's, registered before the records this
        project ships: `registry.register`) while the adapter's own claims it too is read as
        the adapter's: the adapter named its record."""
        api = wire_api_of(s.adapter)
        for it in interactions:
            if api is None or it.api == api.name:
                yield it
            elif _claims(api, it):
                yield replace(it, api=api.name)

    def unclaimed(self, s: AdapterUnderTest) -> Iterator[tuple[Interaction, str]]:
        """The interactions of `s`'s own cassettes its record does not claim, with the reason
        each is skipped (issue 27 item 3): read as the adapter's API they would be judged by a
        shape they never had."""
        api = wire_api_of(s.adapter)
        if api is None:
            return
        for c in self.own.get(s.name, []):
            for it in c.interactions:
                if it.api == api.name or _claims(api, it):
                    continue
                path = it.uri.split("?")[0][:80]
                other = registry.get(it.api) if it.api is not None else None
                if other is None:
                    why = f"unknown endpoint {path}: no WireApi record matches it"
                elif not other.chat:
                    why = f"{other.name}: not an LLM chat turn ({path})"
                else:
                    why = f"{other.name}: not {s.name}'s wire API {api.name} ({path})"
                yield it, why

    def validator(self, name: str) -> SchemaValidator:
        v = self._validators.get(name)
        if v is None:
            v = self._validators[name] = SchemaValidator(schema_set("canonical", "v1"), name)
        return v


def wire_api_of(a: Adapter) -> WireApi | None:
    """The record of the wire API the adapter declares (a former name read as the record's
    name now, `registry.RENAMED`), or None when no record has that name."""
    try:
        return registry.get(str(a.wire_api))
    except KeyError:
        return None


def wire_name(a: Adapter) -> str:
    """The name of the record the adapter's `wire_api` names (a former name read as the
    current one), else the string it declares: what recordings' `Interaction.api` is
    compared with."""
    return registry.canonical_name(str(a.wire_api))


_PROBE_DEFAULTS = {f.name: f.default for f in fields(Probes)}


def tool_use_turn(messages: list[Message], m: Message) -> bool:
    """Whether `m` is the assistant turn a request continues during tool use: it calls tools
    and only the tool results answering it follow it (Anthropic's "During tool use, you must
    pass thinking ... back"); any other assistant turn is a prior turn."""
    at = next((i for i, x in enumerate(messages) if x is m), None)
    if at is None or m.get("role") != "assistant":
        return False
    if not any(isinstance(b, dict) and b.get("type") == "tool_use" for b in m.get("content") or []):
        return False
    rest = messages[at + 1 :]
    return bool(rest) and all(x.get("role") == "tool" for x in rest)


def during_tool_use(conv: list[Message]) -> list[Message] | None:
    """`conv` up to the tool results answering its first assistant turn that calls tools: the
    history as a request continuing that turn during tool use carries it (None: no such turn)."""
    for i, m in enumerate(conv):
        if m["role"] == "assistant" and any(b.get("type") == "tool_use" for b in m["content"]):
            end = i + 1
            while end < len(conv) and conv[end]["role"] == "tool":
                end += 1
            return conv[:end] if end > i + 1 else None
    return None


def locates(api: WireApi | None, probe: str) -> bool:
    """Whether the record has a probe of its own for this (else "none found" means nothing)."""
    return api is not None and getattr(api.probes, probe) is not _PROBE_DEFAULTS[probe]


def outcome(
    rule: RuleInfo,
    s: AdapterUnderTest | str,
    status: Status,
    subject: str,
    message: str = "",
    capability: str | None = None,
) -> Outcome:
    """One case's verdict: `rule`'s outcome for the adapter `s` (or the suite subject) on
    `subject` (a cassette case), with its reason and the capability the case exercised."""
    return Outcome(rule.id, s if isinstance(s, str) else s.name, status, subject, message, capability)


def opts(a: Adapter, **kw: Any) -> AdapterOptions:
    return AdapterOptions(model=f"{a.provider}:conformance-model", max_output_tokens=256, **kw)


def body_text(body: Any) -> str:
    return json.dumps(body, ensure_ascii=False)


def crash(exc: BaseException) -> str:
    """The one-line reason of a case the adapter crashed in; its traceback is noted for the
    report (`outcome.note_crash`), which shows it with the case."""
    line = f"crashed: {type(exc).__name__}: {exc}"
    note_crash(line, exc)
    return line


NO_REQUEST_READER = "adapter does not read requests (from_wire_request raised NotImplementedError)"


class UnreadableOutput(ValueError):
    """What an adapter returned is no canonical message (or read request) a check can read:
    the checks that only use a parse skip or fail the case with this reason; TC101 / TC102
    judge the output itself with the validator (located findings)."""


def message_shape(msg: Any) -> str | None:
    """Why `msg` is no message the checks can walk (None when it is one): an object whose
    `content` is a list of block objects and whose `metadata`, when present, is an object
    (what a block holds is the validator's to judge: a check reading a field reads it with
    `.get`)."""
    if not isinstance(msg, Mapping):
        return f"a {type(msg).__name__}, not a message object"
    content = msg.get("content")
    if not isinstance(content, list):
        return f"content is {type(content).__name__}, not a list of blocks"
    for i, b in enumerate(content):
        if not isinstance(b, Mapping):
            return f"content/{i} is a {type(b).__name__}, not a block object"
    if not isinstance(msg.get("metadata", {}), Mapping):
        return "metadata is not an object"
    return None


def parse_response(a: Adapter, response: WireResponse, ctx: RequestContext) -> Message:
    """`a.from_wire_response(response, ctx)`, raising `UnreadableOutput` when it is no
    message a check can walk (`message_shape`): the call sites treat it as a parse that
    failed, which TC101 reports."""
    msg = a.from_wire_response(response, ctx)
    problem = message_shape(msg)
    if problem is not None:
        raise UnreadableOutput(f"from_wire_response gave {problem}")
    return msg


def read_request(
    a: Adapter,
    body: WireBody,
    session_id: str,
    url: str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
    checked: bool = True,
) -> ParsedRequest | None:
    """`a.from_wire_request(body)`, or None when the adapter says it cannot read requests.

    `url` (path and query) and `headers` go along when the adapter's reader takes them
    (optional extensions: Gemini and Bedrock keep the model and the stream choice in the
    URL, not the body); every call site passes the request's own (`read_recorded`,
    `read_back`). `checked`: raise `UnreadableOutput` when a message read is none a check
    can walk (`message_shape`); TC102, which judges the messages themselves, reads
    unchecked."""
    try:
        parsed = read_wire_request(a, body, session_id=session_id, url=url, headers=headers)
    except NotImplementedError:
        return None
    if checked:
        messages: Any = getattr(parsed, "messages", None)
        if not isinstance(messages, list):
            raise UnreadableOutput(f"from_wire_request gave messages of type {type(messages).__name__}, not a list")
        for i, m in enumerate(messages):
            problem = message_shape(m)
            if problem is not None:
                raise UnreadableOutput(f"from_wire_request gave message {i}: {problem}")
    return parsed


def read_recorded(a: Adapter, it: Interaction, session_id: str, *, checked: bool = True) -> ParsedRequest | None:
    """`read_request` of a recorded request: its body, URL and headers as recorded."""
    return read_request(a, it.request_body, session_id, it.uri, headers=it.request_headers, checked=checked)


def read_back(a: Adapter, wire: WireRequest, session_id: str, *, checked: bool = True) -> ParsedRequest | None:
    """`read_request` of a request the adapter rendered: its body, path and headers."""
    body: Any = getattr(wire, "body", None)
    path, headers = getattr(wire, "path", None), getattr(wire, "headers", None)
    return read_request(
        a,
        body,
        session_id,
        path if isinstance(path, str) else None,
        headers={str(k).lower(): str(v) for k, v in headers.items()} if isinstance(headers, Mapping) else None,
        checked=checked,
    )


def as_sent(value: Any) -> Any:
    """`value` as the JSON it is sent as: a tuple is the JSON array a list is (json.dumps
    writes both alike), so an adapter that puts `AdapterOptions.stop_sequences` (a tuple) in
    its body as it is renders the same request as one that copies it into a list."""
    if isinstance(value, dict):
        return {k: as_sent(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_sent(v) for v in value]
    return value


def render(a: Adapter, messages: list[Message], tools: Sequence[Any], options: AdapterOptions) -> WireRequest:
    """`a.to_wire(messages, tools, options)`, its body as it is sent (`as_sent`): the checks
    compare and probe the request the provider receives, never a Python container choice."""
    wire = a.to_wire(messages, list(tools), options)
    body: Any = getattr(wire, "body", None)  # an untrusted adapter: TC104 and the rest judge what it gave
    return replace(wire, body=as_sent(body)) if isinstance(body, dict) and is_dataclass(wire) else wire


def estimate_of(a: Adapter, parsed: ParsedRequest) -> int:
    """`a.estimate_input_tokens` of a read request, told the request's model and tool_choice
    when the adapter's estimator takes those keywords (`adapters.estimate.estimate_for_model`)."""
    choice = parsed.options.extra.get("tool_choice")
    return estimate_for_model(a, parsed.messages, parsed.tools, parsed.options.model, choice)


def errors_of(messages: list[Message], sel: Selection | None = None, finish: bool = False) -> list[str]:
    """The validator's errors on messages an adapter produced; a value that is no JSON data
    (an object where the schema wants an object of JSON values) is one located error, never
    an exception out of the check (the schema validators refuse such values by raising)."""
    where = non_json(messages)
    if where is not None:
        return [f"<memory>:{where}: not JSON data (canonical messages are JSON, §5)"]
    return [f.format() for f in validate_messages(messages, selection=sel, finish=finish) if f.severity == "error"]


def non_json(value: Any, at: str = "") -> str | None:
    """The JSON pointer of the first value in `value` that is no JSON data (a str, int,
    float, bool, None, or a dict with str keys / list / tuple of JSON data), with its type;
    None when it is all JSON data."""
    if value is None or isinstance(value, str | int | float | bool):
        return None
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                return f"{at or '/'} (key {k!r} is a {type(k).__name__})"
            found = non_json(v, f"{at}/{pointers.token(k)}")
            if found is not None:
                return found
        return None
    if isinstance(value, list | tuple):
        return next((f for i, v in enumerate(value) if (f := non_json(v, f"{at}/{i}")) is not None), None)
    return f"{at or '/'} (a {type(value).__name__})"


USAGE_FIELDS = ("input_tokens", "output_tokens", "cached_input_tokens", "cache_creation_input_tokens")


def token_counts(usage: Any) -> dict[str, int] | None:
    """Contract §3.3/§7.1 `TokenUsage` as the four counts, from a mapping or an object with
    those attributes (the contract writes TokenUsage as a class): a count absent or null is
    the class's default 0 (`cached_input_tokens: int = 0`); None when `usage` is None or a
    count is no count (a string, a negative, a boolean). The checks compare counts read
    here, so usage of an unusual shape is TC103's or TC101's to judge, never a crash."""
    if usage is None:
        return None
    out: dict[str, int] = {}
    for k in USAGE_FIELDS:
        v = as_count(usage.get(k) if isinstance(usage, Mapping) else getattr(usage, k, None))
        if v is None:
            return None
        out[k] = v
    return out


# the attributes every LogRecord has; what else a record carries is what the adapter put
# on it (`extra=`), the fields of its structured entry
_RECORD_ATTRS = frozenset(vars(logging.LogRecord("x", 0, "", 0, "", None, None))) | {"message", "asctime"}


def log_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields of a log entry: its `extra=` attributes, and the items of a
    mapping logged as the message itself (structlog-style `log.warning({"event": ...})`)."""
    out = {k: v for k, v in vars(record).items() if k not in _RECORD_ATTRS}
    if isinstance(record.msg, dict):
        out.update({str(k): v for k, v in record.msg.items()})
    return out


def _reports_block(record: logging.LogRecord, block_type: str) -> bool:
    f = log_fields(record)
    return f.get("block_type") == block_type or block_type in f.values()


def drop_records(
    records: list[logging.LogRecord], block_type: str, message_id: str | None = None
) -> list[logging.LogRecord]:
    """The WARN entries that report a `block_type` block (in a field of any name: §7.3 names
    the fields, "session_id, message_id, block type, adapter, reason", not their keys),
    those of message `message_id` when given."""
    return [
        r
        for r in records
        if r.levelno == logging.WARNING
        and _reports_block(r, block_type)
        and (message_id is None or message_id in log_fields(r).values())
    ]


def names_any(record: logging.LogRecord, *words: str) -> bool:
    """Whether a log entry names one of `words` in its text or a field's value, spelled with
    underscores, dashes or spaces, singular or plural: the contract fixes what a WARN entry
    reports (canonical §7.3, contract §7.2), never its wording."""

    def norm(x: str) -> str:
        return x.lower().replace("_", " ").replace("-", " ")

    text = " ".join([record.getMessage(), *(str(v) for v in log_fields(record).values())])
    text = norm(text)
    return any(re.search(rf"\b{re.escape(norm(w))}s?\b", text) for w in words)


# canonical §7.3 (contract §4.4 repeats it), the sentence a dropped block's log entry follows
DROP_ENTRY = (
    'canonical §7.3: "Write a structured log entry at WARN level with: session_id, message_id, '
    'block type, adapter, reason"'
)


_REASON_KEY = re.compile(r"reason|why|detail|cause", re.IGNORECASE)


def _gives_reason(record: logging.LogRecord, f: dict[str, Any], ids: Sequence[str]) -> bool:
    """A reason field (its key says so: `reason`, `why`, `detail`, `cause`), or an entry
    whose text says more than the ids it names (three words or more once they are removed)."""
    if any(_REASON_KEY.search(k) and str(v).strip() for k, v in f.items()):
        return True
    text = record.getMessage()
    for x in ids:
        text = text.replace(x, " ")
    return len(re.findall(r"[^\W\d_]{2,}", text)) >= 3


def drop_problem(records: list[logging.LogRecord], block_type: str, msg: Message, adapter: Adapter) -> str | None:
    """None when a WARN entry reports dropping this block with every field §7.3 lists.

    The fields are found by value, whatever the adapter named them: the session and message
    ids, the block type and the adapter's name must each be a field's value, and some other
    field must give a reason. More than one entry for one drop is noise, not a breach."""
    mid, sid = msg["id"], msg["session_id"]
    found = drop_records(records, block_type)
    if not found:
        return f"no WARNING entry reports dropping the {block_type} block of message {mid} ({DROP_ENTRY})"
    best = ""
    for r in found:
        f = log_fields(r)
        values = [v for v in f.values() if isinstance(v, str)]
        # the adapter by its `name`, or by its class's name (what a logger names it by)
        names = {adapter.name, type(adapter).__name__}
        lacking = [k for k, v in (("session_id", sid), ("message_id", mid)) if v not in values]
        if not names & set(values):
            lacking.append("adapter")
        if not _gives_reason(r, f, (sid, mid, *names, block_type)):
            lacking.append("reason")
        if not lacking:
            return None
        best = best or f"the WARNING entry for the dropped {block_type} block lacks {', '.join(lacking)} ({DROP_ENTRY})"
    return best


def compared_reason(api: WireApi | None, problems: list[str], cites: str) -> str:
    """A failing reason of a check that compares up to the record's declared equivalences:
    the first problems, the equivalences it compared up to and what it `cites`; "" when
    there is no problem."""
    if not problems:
        return ""
    return f"{'; '.join(problems[:3])} ({equivalence.applied(api, equivalence.declared(api))}; {cites})"


def result_blocks(messages: list[Message], block_type: str) -> list[dict[str, Any]]:
    """The `block_type` blocks inside every tool_result of `messages`, in order."""
    return [
        x
        for m in messages
        for r in m["content"]
        if r.get("type") == "tool_result"
        for x in r.get("content", [])
        if x.get("type") == block_type
    ]


def session_for(prefix: str, label: str) -> str:
    """A session id of its own for what a check does with one recording (`label`): the same
    on every run (a crc32, not the process-salted `hash`), so reports stay byte-identical."""
    return f"sess_{prefix}_{zlib.crc32(label.encode('utf-8'))}"


def ctx_for(session_id: str, model: str | None = None) -> RequestContext:
    return RequestContext(session_id=session_id, model=model)


def parse_stream(
    a: Adapter,
    text: str | bytes,
    ctx: RequestContext,
    chunk: int | None = None,
    *,
    raw_names: bool = False,
    cuts: Sequence[int] = (),
) -> tuple[list[StreamEvent], AdapterError | None]:
    """The events the adapter makes of a recorded stream (the recorded bytes, in one chunk,
    in `chunk`-byte chunks, or cut at the byte offsets `cuts`) and the AdapterError it raised.

    Event names are respelled in the canonical §7.4 (underscore) vocabulary unless
    `raw_names`: an adapter may follow the streaming protocol's dotted names (TC608 judges
    that it follows one of them consistently; the other checks read one spelling)."""
    raw = text.encode() if isinstance(text, str) else text
    if chunk is not None:
        pieces = [raw[i : i + chunk] for i in range(0, len(raw), chunk)]
    elif cuts:
        edges = [0, *sorted(c for c in set(cuts) if 0 < c < len(raw)), len(raw)]
        pieces = [raw[x:y] for x, y in pairwise(edges)]
    else:
        pieces = [raw]
    events: list[StreamEvent] = []
    err: AdapterError | None = None
    try:
        for ev in a.stream_response(pieces, ctx):
            if not isinstance(ev, dict):
                raise UnreadableOutput(f"stream_response gave event {len(events)}: a {type(ev).__name__}, not an event")
            events.append(ev)
    except AdapterError as exc:
        err = exc
    return (events if raw_names else to_canonical_names(events)), err


def message_from_events(a: Adapter, events: list[StreamEvent], ctx: RequestContext) -> Message | None:
    """The message a harness stores after a stream (generic: uses no adapter internals).

    Canonical §7.4 has no start event: without one, the id is message_complete's and the
    model the request's."""
    events = to_canonical_names(events)
    start = next((e for e in events if e.get("type") == "message_start"), None)
    done = next((e for e in events if e.get("type") == "message_complete"), None)
    if done is None:
        return None
    if start is None:
        start = {"message_id": done.get("message_id") or ctx.message_id, "model": ctx.model}
    if not start.get("message_id"):
        return None
    model = str(start.get("model") or f"{a.provider}:unknown")
    content = list(done.get("final_content") or []) or [{"type": "text", "text": ""}]
    counts = token_counts(done.get("usage"))
    meta: dict[str, Any] = {
        "model": model,
        "provider": a.provider,
        "routing": {"mode": "default", "chosen_model": model, "reason": "turnspec conform"},
        # usage of another shape (null counts, an object) is TC103's to report, never a
        # crash of the suite here
        "usage": harness_usage(counts, model, ctx) if counts is not None else None,
    }
    if done.get("stop_reason") in ("cancelled", "error"):
        meta["status"] = done["stop_reason"]
    return {
        "id": str(start["message_id"]),
        "session_id": ctx.session_id,
        "role": "assistant",
        "content": content,
        "metadata": meta,
        "created_at": "2026-05-08T12:00:00.000000Z",
        "schema_version": 1,
    }


def shape(s: AdapterUnderTest, a: Adapter, label: str, body: Any, recorded: Any = None) -> Iterator[Outcome]:
    """TC104 on one rendered body: valid under the wire API's independent request schema.
    Rendered back from a `recorded` request, a departure the recording itself makes at the
    same place (a field its API's docs do not define, sent by the recording's client) is the
    recording's, not the adapter's: a skip naming it when nothing else departs."""
    api = wire_api_of(a)
    if api is None:
        yield outcome(R.WIRE_SHAPE, s, "skip", label, f"no WireApi record named {a.wire_api!r}")
        return
    v = wire_schemas.validator(api, "request")
    if v is None:
        yield outcome(R.WIRE_SHAPE, s, "skip", label, wire_schemas.missing_reason(api, "request"))
        return

    def problems_of(x: Any) -> list[str]:
        return [f"{e.pointer or '/'}: {e.message[:120]}" for e in v.errors(x)] if not v.is_valid(x) else []

    problems = problems_of(body)
    theirs = set(problems_of(recorded)) if problems and isinstance(recorded, dict) else set()
    if problems and all(p in theirs for p in problems):
        why = "; ".join(problems[:3])
        said = f"the rendered request departs from the documented shape only where the recorded one does: {why}"
        yield outcome(R.WIRE_SHAPE, s, "skip", f"{label} ({a.name})", said)
        return
    mine = [p for p in problems if p not in theirs]
    yield outcome(R.WIRE_SHAPE, s, "fail" if mine else "pass", f"{label} ({a.name})", "; ".join(mine[:3]))


def texts_of(messages: list[Message]) -> list[str]:
    out = []
    for m in messages:
        if m["role"] == "system":
            continue
        for b in m["content"]:
            if b.get("type") == "text":
                out.append(b["text"])
            elif b.get("type") == "tool_result":
                out.extend(x.get("text", "") for x in b.get("content", []) if x.get("type") == "text")
    return [t for t in out if t]


def calls_of(messages: list[Message]) -> list[tuple[str, str, str]]:
    return [
        (str(b.get("id")), str(b.get("name")), json.dumps(b.get("input"), sort_keys=True, default=repr))
        for m in messages
        for b in m["content"]
        if b.get("type") == "tool_use"
    ]
