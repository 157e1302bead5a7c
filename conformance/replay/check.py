"""Would a stored session survive a swap to this adapter? (canonical spec §1, §8.3, §8.4)

For one session and one target adapter, without any network:

1. refusals a routing engine makes before dispatch, from the adapter's declared
   capabilities (§7.2: images, tools, system prompts, image media types, context length
   by the adapter's own `estimate_input_tokens`);
2. the history rendered through `to_wire`, with every §7.3 WARN the adapter writes
   captured as a lossy step (a `CriticalBlockError` is a refusal);
3. the rendered body read through the target's `WireApi` record (written from the
   provider's docs, not from the adapter): tool ids the API's id rule rejects, canonical
   ids that collide after mapping, and opaque provider state (thinking signatures,
   redacted thinking) issued by another provider that still reaches the request.

Findings are located at the stored message (file, line, JSON pointer); the verdict is
`refused` when any error stands, `lossy` when only drops do, else `ok`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..adapters.base import Adapter, AdapterOptions, CriticalBlockError
from ..adapters.estimate import estimate_for_model
from ..adapters.protocol import capabilities_of
from ..core.findings import Finding, RuleInfo, Severity, location_key, switched_off
from ..formats.canonical.markers import DEFAULT_CRITICAL_KEY
from ..wire import registry as wire_registry
from ..wire.api import WireApi
from . import rules as R
from .sessions import Located, Session

OK, LOSSY, REFUSED = "ok", "lossy", "refused"


@dataclass(frozen=True)
class Target:
    """An adapter to replay onto, and the canonical model id its requests name."""

    label: str
    adapter: Adapter
    model: str


@dataclass
class Verdict:
    session_id: str
    part: int
    target: str
    path: str
    line: int | None
    messages: int
    verdict: str = OK
    findings: list[Finding] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "part": self.part,
            "target": self.target,
            "path": self.path,
            "line": self.line,
            "messages": self.messages,
            "verdict": self.verdict,
            "findings": [f.as_dict() for f in self.findings],
        }


def wire_api_of(adapter: Adapter) -> WireApi | None:
    """The target's wire record, when the adapter names one the registry knows."""
    name = getattr(adapter, "wire_api", None)  # optional in the protocol: third-party adapters may not say
    if isinstance(name, WireApi):
        return name
    if isinstance(name, str):
        try:
            return wire_registry.get(name)
        except KeyError:
            return None
    return None


class _Capture(logging.Handler):
    """Collects the WARN records an adapter writes while rendering (§7.3 drops)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class _Emitter:
    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict

    def __call__(
        self, at: Located, pointer: str, rule: RuleInfo, message: str, severity: Severity | None = None
    ) -> None:
        if rule.id in switched_off():  # rule-level mutation testing (findings.switched_off)
            return
        if at.converted and pointer:  # the place is the source message: say where inside its canonical form
            message, pointer = f"{message} (at {pointer} of the message as canonical)", ""
        self.verdict.findings.append(
            Finding(at.path, at.line, at.pointer + pointer, rule.id, severity or rule.severity, message)
        )


def check_session(
    session: Session,
    target: Target,
    tools: list[dict[str, Any]] | None = None,
    *,
    source_provider: str | None = None,
    strict: bool = False,
    critical_key: str = DEFAULT_CRITICAL_KEY,
) -> Verdict:
    """The verdict for replaying `session` onto `target` (see module docstring).

    `critical_key` is the metadata key the stored sessions mark critical blocks with
    (§4.2.2 names none); the target's `to_wire` receives it as `AdapterOptions.critical_key`.
    """
    msgs = [m.message for m in session.messages]
    first = session.messages[0]
    v = Verdict(session.id, session.part, target.label, first.path, first.line, len(msgs))
    emit = _Emitter(v)
    caps = capabilities_of(target.adapter)
    provider = str(getattr(target.adapter, "provider", "") or target.label.split(":", 1)[0])
    by_id = {str(m.message.get("id")): m for m in session.messages}
    foreign = list(_capability_refusals(session, caps, emit, provider, source_provider))
    tools = list(tools or [])
    try:
        estimate = estimate_for_model(target.adapter, msgs, tools, target.model)
    except Exception as exc:  # a third-party estimator's failure is reported, not raised
        emit(first, "", R.RENDER_FAILED, f"{target.label}: estimate_input_tokens failed: {type(exc).__name__}: {exc}")
    else:
        limit = caps.get("max_context_tokens")
        if isinstance(limit, int) and estimate > limit:
            emit(first, "", R.CONTEXT_TOO_LONG,
                 f"{target.label} estimates {estimate} input tokens; max_context_tokens is {limit}")  # fmt: skip
    body = _render(session, target, msgs, tools, emit, by_id, critical_key)
    if body is not None:
        api = wire_api_of(target.adapter)
        if api is not None:
            _wire_checks(session, target, api, body, foreign, emit)
    v.findings.sort(key=location_key)  # by path, line, column, as every output lists them
    for f in v.findings:
        if f.severity == Severity.ERROR or (strict and f.rule == R.BLOCK_DROPPED.id):
            v.verdict = REFUSED
            break
    else:
        v.verdict = LOSSY if v.findings else OK
    return v


def _capability_refusals(
    session: Session, caps: Mapping[str, Any], emit: _Emitter, provider: str, source_provider: str | None
) -> Iterator[tuple[Located, str, str, str]]:
    """Routing refusals (one finding per kind, at its first place); yields foreign opaque state."""
    first_at: dict[str, tuple[Located, str]] = {}
    counts: dict[str, int] = {}
    accepted = {str(t).lower() for t in caps.get("accepted_image_media_types") or []}

    def note(kind: str, at: Located, ptr: str) -> None:
        counts[kind] = counts.get(kind, 0) + 1
        first_at.setdefault(kind, (at, ptr))

    for at in session.messages:
        m = at.message
        raw_meta = m.get("metadata")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        origin = meta.get("provider") if isinstance(meta.get("provider"), str) else source_provider
        if m.get("role") == "system":
            note("system", at, "/role")
        for i, b in enumerate(m.get("content") or []):
            if not isinstance(b, dict):
                continue
            t = b.get("type")
            if t == "image":
                note("image", at, f"/content/{i}")
                media = str(b.get("media_type", "")).lower()
                if accepted and media not in accepted:
                    note(f"media:{media}", at, f"/content/{i}/media_type")
            elif t in ("tool_use", "tool_result"):
                note("tool", at, f"/content/{i}")
            elif t == "thinking" and isinstance(b.get("signature"), str) and b["signature"]:
                if origin and origin != provider:
                    yield (at, f"/content/{i}/signature", "thinking", b["signature"])
            elif t == "redacted_thinking" and isinstance(b.get("data"), str) and origin and origin != provider:
                yield (at, f"/content/{i}/data", "redacted_thinking", b["data"])

    def refuse(kind: str, rule: RuleInfo, what: str) -> None:
        if kind in first_at:
            at, ptr = first_at[kind]
            n = counts[kind]
            emit(at, ptr, rule, f"{what} ({n} in this session; first here)")

    if not caps.get("supports_images", False):
        refuse("image", R.IMAGES_UNSUPPORTED, "image block, but the target declares supports_images: false")
    else:
        for kind in sorted(k for k in first_at if k.startswith("media:")):
            refuse(kind, R.IMAGE_TYPE_UNSUPPORTED,
                   f"media type {kind[6:]!r} not in accepted_image_media_types {sorted(accepted)}")  # fmt: skip
    if not caps.get("supports_tools", True):
        refuse("tool", R.TOOLS_UNSUPPORTED, "tool turn, but the target declares supports_tools: false")
    if not caps.get("supports_system_prompt", True):
        refuse("system", R.SYSTEM_UNSUPPORTED, "system message, but the target declares supports_system_prompt: false")


def _render(
    session: Session,
    target: Target,
    msgs: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    emit: _Emitter,
    by_id: Mapping[str, Located],
    critical_key: str = DEFAULT_CRITICAL_KEY,
) -> Any:
    """`to_wire` with the §7.3 WARN lines captured; the request body, or None when it failed."""
    capture = _Capture()
    root = logging.getLogger()
    # the WARN line may come from any logger a third-party adapter uses, so listen at the root
    root.addHandler(capture)
    old_level = root.level
    root.setLevel(min(old_level, logging.WARNING) if old_level else logging.WARNING)
    first = session.messages[0]
    try:
        request = target.adapter.to_wire(msgs, tools, AdapterOptions(model=target.model, critical_key=critical_key))
    except CriticalBlockError as exc:
        at = by_id.get(exc.message_id, first)
        emit(at, "", R.CRITICAL_DROP, f"{target.label}: critical {exc.block_type} block: {exc.reason}")
        return None
    except Exception as exc:  # any failure to render is this session's refusal, reported with its cause
        emit(first, "", R.RENDER_FAILED, f"{target.label}: to_wire raised {type(exc).__name__}: {exc}")
        return None
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)
    for rec in capture.records:
        if getattr(rec, "event", None) == "option_dropped":
            continue  # a request option, not history
        at = by_id.get(str(getattr(rec, "message_id", "")), first)
        block_type = getattr(rec, "block_type", None)
        if block_type is None:  # an unstructured warning: still a loss, reported as written
            emit(at, "", R.BLOCK_DROPPED, f"{target.label}: {rec.getMessage()}")
            continue
        emit(at, "", R.BLOCK_DROPPED,
             f"{target.label} drops a {block_type} block: {getattr(rec, 'reason', rec.getMessage())}")  # fmt: skip
    return getattr(request, "body", None)


def _wire_checks(
    session: Session,
    target: Target,
    api: WireApi,
    body: Any,
    foreign: list[tuple[Located, str, str, str]],
    emit: _Emitter,
) -> None:
    if not isinstance(body, Mapping):
        return
    first = session.messages[0]
    for probe in (api.probes.tool_use_ids, api.probes.tool_result_ids):
        for loc in probe(body):
            if isinstance(loc.value, str) and not api.tool_ids.accepts(loc.value):
                emit(first, "", R.TOOL_ID_REJECTED,
                     f"{api.title} rejects tool id {loc.value!r} at request {loc.pointer}")  # fmt: skip
    # two canonical calls that reach the wire under one id: the provider pairs results wrongly
    seen: dict[str, str] = {}
    for loc in api.probes.tool_use_ids(body):
        if not isinstance(loc.value, str):
            continue
        if loc.value in seen:
            emit(first, "", R.TOOL_ID_COLLISION,
                 f"tool calls at request {seen[loc.value]} and {loc.pointer} share the id {loc.value!r}")  # fmt: skip
        else:
            seen[loc.value] = loc.pointer
    if not foreign:
        return
    sent = {str(loc.value) for loc in api.probes.signatures(body)}
    sent |= {str(loc.value) for loc in api.probes.redacted_thinking(body)}
    dropped = {(f.line, f.path) for f in emit.verdict.findings if f.rule == R.BLOCK_DROPPED.id}
    for at, ptr, kind, value in foreign:
        origin = (at.message.get("metadata") or {}).get("provider", "another provider")
        if value in sent:
            emit(at, ptr, R.FOREIGN_STATE_SENT,
                 f"{kind} state issued by {origin} reaches the {target.label} request; the provider rejects it")  # fmt: skip
        elif (at.line, at.path) not in dropped:
            emit(at, ptr, R.SILENT_DROP,
                 f"{kind} state issued by {origin} is neither sent nor reported dropped by {target.label}")  # fmt: skip
