"""`turnspec exec smoke CMD`: a new exec implementation's handshake and one call of each
operation it offers, with small canned inputs (a one-message conversation; a response and a
stream of its wire API from turnspec's cassettes), every message validated both ways against
`schemas/exec/v1/` (docs/exec-protocol.md). One line per operation; the run is the suite's
to make once this passes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from ..adapters.base import request_message
from ..adapters.errors import OperationNotOffered
from ..adapters.exec import ExecAdapter, ExecSettings, parse_ref, start
from ..adapters.protocol import AdapterOptions, RequestContext, WireRequest, WireResponse
from .cassettes import Interaction, iter_cassettes
from .checks.streams import wire_values
from .runner import default_cassette_root, local_cassette_root

SESSION = "01JSMOKE0000000000000SESS1"
# the session of the tool_id_map step: one no other step used, so its map starts empty
FRESH_SESSION = "01JSMOKE0000000000000SESS2"


class NoRecording(LookupError):
    """turnspec holds no recording of the adapter's wire API to feed this operation."""


@dataclass(frozen=True)
class Line:
    status: str  # "ok", "skip" or "FAIL"
    op: str
    detail: str

    def text(self) -> str:
        return f"{self.status:<4}  {self.op:<12}  {self.detail}"


def recorded(adapter: ExecAdapter) -> list[Interaction]:
    """The interactions of the adapter's wire API in its cassette folders (turnspec's own and
    `./cassettes/`)."""
    roots = [r for r in (default_cassette_root(), local_cassette_root()) if r is not None]
    out = []
    for root in roots:
        for folder in adapter.cassette_folders:
            if (root / folder).is_dir():
                out += [
                    it for c in iter_cassettes(root / folder) for it in c.interactions if it.api == adapter.wire_api
                ]
    return out


def _first(found: list[Interaction], stream: bool) -> Interaction | None:
    """The first recorded 2xx response (`stream`: stream) that reports no error: a stream
    that began with 200 and then reports one (Ollama's `{"error": ...}` line, Anthropic's
    `error` event) must fail to parse, so an honest child would fail smoke on it."""
    return next((it for it in found if it.is_stream == stream and 200 <= it.status < 300 and not _fails(it)), None)


def _fails(it: Interaction) -> bool:
    """Whether a recorded stream reports an error after it began (its record's `stream_error`
    probe), or cannot be decoded at all."""
    if not it.is_stream or it.wire is None:
        return False
    values = wire_values(it)
    return values is None or it.wire.probes.stream_error(values) is not None


def run_smoke(ref: str, timeout: float | None = None) -> Iterator[Line]:
    """The lines of a smoke run; an `InputError` when the child cannot be started."""
    adapter = start(parse_ref(ref if ref.startswith("exec:") else f"exec:{ref}", ExecSettings(timeout, True)))
    try:
        yield Line("ok", "hello", _hello(adapter))
        yield from _calls(adapter)
        yield _step("shutdown", lambda: _ended(adapter.client.shutdown()))
    finally:
        adapter.close()


def _hello(adapter: ExecAdapter) -> str:
    """What the child said it is: `acme (anthropic, anthropic-messages), typescript node 20;
    offers ...`, the language and its version each left out when the hello names none."""
    info = adapter.client.info
    lang = " ".join(str(info[k]).strip() for k in ("language", "language_version") if str(info.get(k) or "").strip())
    offers = ", ".join(sorted(adapter.operations)) or "nothing beyond hello and shutdown"
    return f"{adapter.name} ({adapter.provider}, {adapter.wire_api}){', ' + lang if lang else ''}; offers {offers}"


def _calls(a: ExecAdapter) -> Iterator[Line]:
    found = recorded(a)
    messages = [request_message(SESSION, "user", [{"type": "text", "text": "Say hello."}], {})]
    options = AdapterOptions(model=f"{a.provider}:conformance-model", max_output_tokens=64)
    sent: dict[str, WireRequest] = {}

    def render() -> str:
        wire = sent["wire"] = a.to_wire(messages, [], options)
        return f"{wire.method} {wire.path} ({len(wire.headers)} headers)"

    def parse() -> str:
        it = _first(found, stream=False)
        if it is None:
            raise NoRecording(
                f"no recorded {a.wire_api} response in the cassette folders {', '.join(a.cassette_folders)}"
            )
        msg = a.from_wire_response(WireResponse(it.response_json, it.status), RequestContext(SESSION))
        return f"{it.label}: {msg.get('role')} message of {len(msg.get('content') or [])} block(s)"

    def stream() -> str:
        it = _first(found, stream=True)
        if it is None:
            raise NoRecording(
                f"no recorded {a.wire_api} stream in the cassette folders {', '.join(a.cassette_folders)}"
            )
        raw = it.response_body
        events = list(a.stream_response([raw[: len(raw) // 2], raw[len(raw) // 2 :]], RequestContext(SESSION)))
        return f"{it.label}: {_events(len(events))}, the last {events[-1].get('type') if events else 'none'}"

    def cancel() -> str:
        it = _first(found, stream=True)
        rid = "req_smoke_cancel"
        if it is None:
            return f"an unknown stream: in flight {a.cancel(rid)!r}"  # type: ignore[attr-defined]
        raw = it.response_body
        chunks = [raw[i : i + 64] for i in range(0, len(raw), 64)]
        events = iter(a.stream_response(chunks, replace(RequestContext(SESSION), request_id=rid)))
        first = next(events, None)
        answered = a.cancel(rid)  # type: ignore[attr-defined]
        rest = list(events)
        return f"{it.label}: in flight {answered!r} after {_events(int(first is not None))}, then {_events(len(rest))}"

    def read_request() -> str:
        wire = sent.get("wire")
        if wire is None:
            raise NoRecording("no rendered request to read back (render did not answer)")
        # its body, path (the model and the stream choice are in Gemini's and Bedrock's URL) and headers
        headers = {str(k).lower(): str(v) for k, v in wire.headers.items()}
        parsed = a.from_wire_request(wire.body, session_id=SESSION, url=wire.path, method=wire.method, headers=headers)
        return f"{wire.path} read back: {len(parsed.messages)} message(s), model {parsed.options.model!r}"

    def estimate() -> str:
        return f"{a.estimate_input_tokens(messages, [], model=options.model)} tokens"

    def tool_id_map() -> str:
        return f"a fresh session's map holds {len(a.tool_id_map(FRESH_SESSION).pairs())} pair(s)"

    steps: list[tuple[str, str, Callable[[], str]]] = [
        ("render", "render", render),
        ("parse", "parse", parse),
        ("stream", "stream", stream),
        ("cancel", "cancel", cancel),
        ("read_request", "read_request", read_request),
        ("estimate", "estimate", estimate),
        ("tool_id_map", "tool_id_map", tool_id_map),
    ]
    for op, label, fn in steps:
        if not a.offers(op):
            yield Line("skip", label, "not offered (the hello does not list it)")
            continue
        yield _step(label, fn)


def _events(n: int) -> str:
    return f"{n} event" if n == 1 else f"{n} events"


class NotClean(Exception):
    """The child answered `shutdown` but did not exit with status 0 (the protocol asks it)."""


def _ended(status: str) -> str:
    if status != "exit status 0":
        how, sep, stderr = status.partition("; ")  # the end of its stderr follows how it ended
        raise NotClean(f"answered, then the child ended with {how}, not exit status 0{sep}{stderr}")
    return "answered; the child exited with status 0"


def _step(label: str, fn: Callable[[], str]) -> Line:
    try:
        return Line("ok", label, fn())
    except OperationNotOffered as exc:
        return Line("skip", label, f"not implemented: {exc}")
    except NoRecording as exc:
        return Line("skip", label, str(exc))
    except NotClean as exc:
        return Line("FAIL", label, str(exc))
    except Exception as exc:
        return Line("FAIL", label, f"{type(exc).__name__}: {exc}")
