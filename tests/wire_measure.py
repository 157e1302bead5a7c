"""Issue 25 item 10's measurement: every chat recording under ../shared/samples/wire, read as
a third party's recordings would be, with no false rejection and no silently lost content.

For each recorded interaction whose URL a registered adapter's wire API serves:

- the reply goes through `turnspec wire parse` (`adapters.debug.parse`, what the command
  runs: framing and wire-schema strictness, then the adapter). A 2xx reply refused, or an
  error reply not classified, is a *false rejection* (the provider sent it; it is valid).
  A parsed reply whose canonical message breaks the canonical schema or rules is one too.
- the text, reasoning and tool calls the reply carries (read by hand from the bytes,
  tests/wire_content.py, never through the adapter) must be in the canonical message, or
  the adapter must have logged canonical §7.3's WARN line for a dropped block: else it is
  *lost content*.
- the request (of a 2xx exchange) goes through the adapter's `from_wire_request` and must
  read as valid canonical history (TC102's reading: history rules TS105/TS106 aside), and,
  sent to the API's own hosts, must pass the API's request schema: the provider accepted it.

`python tests/wire_measure.py [DIR]` prints the figures (default: ../shared/samples/wire and
gpt2099's recorded stream events, `measure_streams`);
tests/test_samples_wire.py asserts they are zero, and that the measurement finds what it counts.
"""

from __future__ import annotations

import json
import logging
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import shared_paths
from wire_content import READERS, REQUEST_READERS, Content, lost, lost_pieces, of_canonical, of_request, of_wire

from conformance.adapters import debug, registry
from conformance.adapters.base import AdapterError, WireFormatError
from conformance.adapters.openrouter import OpenRouterChatAdapter
from conformance.adapters.protocol import Adapter
from conformance.formats.canonical.memory import validate_messages
from conformance.suite.capture import capture_warnings
from conformance.suite.cassettes import Interaction, iter_cassettes
from conformance.suite.checks import HISTORY_IGNORE, RECORDED_TRAFFIC_IGNORE
from conformance.suite.checks.common import recorded_selection
from conformance.wire import registry as wire_registry
from conformance.wire import schemas as wire_schemas

ROOT = Path(__file__).resolve().parents[1]
WIRE = shared_paths.WIRE
PROBLEMS = ("rejected", "lost", "request-rejected", "request-lost")


@dataclass(frozen=True)
class Case:
    label: str
    outcome: str  # ok | classified | unchecked | skipped, or one of PROBLEMS
    detail: str = ""


def adapters() -> dict[str, Any]:
    """Wire API name -> the adapter that reads it: every registered adapter, and the
    package's OpenRouter subclass (shipped, not registered: its record serves openrouter.ai)."""
    out: dict[str, Any] = {}  # an Adapter each (the reference classes' ClassVars are not
    # the Protocol's instance variables to mypy)
    for name in sorted(registry.available()):
        a = registry.load(name)
        out.setdefault(str(a.wire_api), a)
    out.setdefault(OpenRouterChatAdapter.wire_api, OpenRouterChatAdapter())
    return out


def _dropped(records: list[logging.LogRecord]) -> bool:
    """Canonical §7.3's WARN line for a dropped block (or field) was logged."""
    return any(r.levelno >= logging.WARNING and getattr(r, "block_type", None) for r in records)


def _provider_error(a: Adapter, it: Interaction) -> bool | None:
    """The reply carries the provider's own error (read by tests/wire_content.py); None for
    an API it has no reader of (Bedrock's event stream): that cannot be judged here."""
    if str(a.wire_api) not in READERS:
        return None
    try:
        return of_wire(str(a.wire_api), it.response_body, it.framing is not None).error
    except (KeyError, ValueError):  # a body that is not JSON
        return False


def _reply(a: Adapter, it: Interaction) -> Case:
    framing = it.framing
    with capture_warnings() as records:
        try:
            parsed = debug.parse(a, it.response_body, stream=framing is not None, status=it.status, framing=framing)
        except AdapterError as exc:
            # a WireFormatError is the reader refusing the bytes, never the provider's error
            if not isinstance(exc, WireFormatError) and (it.status >= 400 or _provider_error(a, it)):
                return Case(it.label, "classified", exc.error_class)
            if not isinstance(exc, WireFormatError) and _provider_error(a, it) is None:
                return Case(it.label, "unchecked", f"{exc.error_class} raised; no reader of {a.wire_api} replies")
            return Case(it.label, "rejected", f"HTTP {it.status}: {type(exc).__name__}: {exc}")
        except Exception as exc:
            where = getattr(exc, "location", "") or ""
            return Case(it.label, "rejected", f"{type(exc).__name__}: {where} {exc}")
    if it.status >= 400:
        return Case(it.label, "rejected", f"HTTP {it.status} read as a reply, not an error")
    message = parsed.message or {}
    if parsed.error is not None and _provider_error(a, it) is None:
        return Case(it.label, "unchecked", f"{parsed.error.error_class} in the stream; no reader of {a.wire_api}")
    if parsed.error is not None and not _provider_error(a, it):
        return Case(it.label, "rejected", f"HTTP {it.status}: {type(parsed.error).__name__}: {parsed.error}")
    if str(a.wire_api) not in READERS:
        return Case(it.label, "unchecked", f"read; tests/wire_content.py has no reader of {a.wire_api} replies")
    wire = of_wire(str(a.wire_api), it.response_body, framing is not None)
    errors = [f for f in validate_messages([message], finish=False) if f.severity == "error"]
    if not wire.usage and any(getattr(r, "event", None) == "usage_missing" for r in records):
        errors = [f for f in errors if f.rule != "TS106"]  # none on the wire, and wire parse said so
    # the recording's application chose its tool names: kept verbatim (lost() compares them
    # with the wire's), they are not the adapter's to make snake_case (as TC101 reads them)
    errors = [f for f in errors if f.rule not in RECORDED_TRAFFIC_IGNORE]
    if errors:
        return Case(it.label, "rejected", f"invalid canonical message: {errors[0].format()}")
    missing = lost(wire, of_canonical(message))
    if missing and not _dropped(records):
        return Case(it.label, "lost", "; ".join(missing))
    if parsed.error is not None:  # the provider's own error, after the partial content
        return Case(it.label, "classified", f"{parsed.error.error_class} in the stream")
    carried = [k for k, v in (("text", wire.text), ("reasoning", wire.thinking), ("tool calls", wire.tools)) if v]
    return Case(it.label, "ok", ", ".join(carried))


def _request(a: Adapter, it: Interaction) -> Case | None:
    if it.status >= 400 or not isinstance(it.request_body, dict):
        return None
    api = wire_registry.get(str(a.wire_api))
    host = it.uri.split("/")[2] if it.uri.count("/") >= 2 else ""
    if not api.hosts or host in api.hosts:  # a compatible server's extensions are its own
        v = wire_schemas.validator(api, "request")
        if v is not None and not v.is_valid(it.request_body):
            e = v.errors(it.request_body)[0]
            return Case(f"{it.label} request", "request-rejected", f"{e.pointer or '/'}: {e.message[:160]}")
    try:
        kwargs: dict[str, Any] = {"session_id": "sess_samples"}
        if "url" in a.from_wire_request.__code__.co_varnames:  # Gemini keeps the model in the URL
            kwargs["url"] = it.uri
        with capture_warnings() as records:
            parsed = a.from_wire_request(it.request_body, **kwargs)
    except NotImplementedError:
        return None
    except Exception as exc:
        return Case(f"{it.label} request", "request-rejected", f"{type(exc).__name__}: {exc}")
    # TC102's reading of a recorded history: past turns carry no routing or usage; the
    # application's tool names, and calls kept server-side, are not the adapter's doing
    selection = recorded_selection(it, HISTORY_IGNORE, api)
    bad = [f for f in validate_messages(parsed.messages, selection=selection, finish=False) if f.severity == "error"]
    if bad:
        return Case(f"{it.label} request", "request-rejected", bad[0].format())
    if str(a.wire_api) in REQUEST_READERS:
        history = Content()
        for m in parsed.messages:
            part = of_canonical(m)
            for t in part.texts:
                history.add("text", t)
            for t in part.thoughts:
                history.add("thinking", t)
            history.redacted += part.redacted
            history.tools += part.tools
        missing = lost_pieces(of_request(str(a.wire_api), it.request_body), history)
        if missing and not _dropped(records):
            return Case(f"{it.label} request", "request-lost", "; ".join(missing[:3]))
    return None


def measure(root: Path = WIRE, readers: dict[str, Any] | None = None) -> list[Case]:
    """One case per recorded reply (and per refused request) under `root`; `readers`
    (wire API name -> adapter; default: `adapters()`) read them."""
    readers = adapters() if readers is None else readers
    cases: list[Case] = []
    for cassette in iter_cassettes(root):
        rel = cassette.path.relative_to(root).as_posix()
        if cassette.error:
            cases.append(Case(rel, "rejected", f"cassette unreadable: {cassette.error}"))
            continue
        for it in cassette.interactions:
            a = readers.get(it.api or "")
            if a is None:
                # Bedrock (while no adapter serves it), Ollama /api/generate (not a chat
                # turn), downloads of the images a prompt links to
                cases.append(Case(it.label, "skipped", f"no registered adapter serves {it.api or it.uri}"))
                continue
            cases.append(_reply(a, it))
            req = _request(a, it)
            if req is not None:
                cases.append(req)
    return cases


def figures(cases: list[Case]) -> str:
    counts = Counter(c.outcome for c in cases)
    replies = sum(counts[k] for k in ("ok", "classified", "rejected", "lost", "unchecked"))
    carried = Counter(k for c in cases if c.outcome == "ok" for k in c.detail.split(", ") if k)
    lines = [
        f"{replies} replies read ({counts['classified']} errors classified, HTTP or in the stream; of the others "
        f"{carried['text']} carry text, {carried['reasoning']} reasoning, {carried['tool calls']} tool calls; "
        f"{counts['unchecked']} not compared), {counts['skipped']} interactions served by no adapter: "
        f"{counts['rejected']} falsely rejected, {counts['lost']} with content silently lost, "
        f"{counts['request-rejected']} recorded requests refused, "
        f"{counts['request-lost']} with history content silently lost"
    ]
    lines += [f"  {c.outcome}: {c.label}: {c.detail}" for c in cases if c.outcome in PROBLEMS]
    return "\n".join(lines)


# gpt2099's recorded provider stream events (../shared/samples/gpt2099/providers/
# response-stream/<provider>/<case>/events.jsonl: one JSON event a line, as the provider sent
# them), framed again as the SSE each API streams (Anthropic's `event:` names its `type`;
# Chat Completions ends with `data: [DONE]`), at each provider's documented endpoint
GPT2099_STREAMS = shared_paths.SAMPLES / "gpt2099" / "providers" / "response-stream"
_GPT2099_URLS = {
    "anthropic": "https://api.anthropic.com/v1/messages",
    "openai": "https://api.openai.com/v1/chat/completions",
    "cerebras": "https://api.cerebras.ai/v1/chat/completions",  # inference-docs.cerebras.ai: OpenAI-compatible
    "gemini": "https://generativelanguage.googleapis.com/v1beta/models/m:streamGenerateContent?alt=sse",
}


def measure_streams(root: Path = GPT2099_STREAMS, readers: dict[str, Any] | None = None) -> list[Case]:
    """`measure` over recorded stream events (providers without a reader skipped, named)."""
    readers = adapters() if readers is None else readers
    cases: list[Case] = []
    for events in sorted(root.glob("*/*/events.jsonl")):
        provider, label = events.parent.parent.name, f"gpt2099:{events.parent.parent.name}/{events.parent.name}"
        url = _GPT2099_URLS.get(provider)
        api = wire_registry.api_for_url(url) if url else None
        if url is None or api is None or api.name not in readers:
            cases.append(Case(label, "skipped", f"no registered adapter serves {provider}'s API"))
            continue
        lines = [line for line in events.read_text(encoding="utf-8").splitlines() if line.strip()]
        if api.name == "anthropic-messages":
            body = "".join(f"event: {json.loads(line)['type']}\ndata: {line}\n\n" for line in lines)
        else:
            body = "".join(f"data: {line}\n\n" for line in lines)
            body += "data: [DONE]\n\n" if api.name == "openai-chat-completions" else ""
        it = Interaction(label, 0, url, api.name, None, 200, "text/event-stream", body.encode())
        cases.append(_reply(readers[api.name], it))
    return cases


if __name__ == "__main__":
    if len(sys.argv) > 1:
        print(figures(measure(Path(sys.argv[1]))))
    else:
        print(figures([*measure(), *measure_streams()]))
