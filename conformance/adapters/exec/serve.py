"""`python -m conformance.adapters.exec.serve REF`: any turnspec adapter (`anthropic`,
`module:attr`, `file.py:attr`, a bridge) served over the exec protocol on standard input and
output (docs/exec-protocol.md). It is the host's test child and the simplest reference for
implementers in other languages: read a line, answer a line.

Python's stream parsers pull their chunks, so each stream runs in a thread of its own that
the feeds hand chunks to (`_Stream`); a cancel replays the chunks fed so far into a fresh
stream, reads the `delivered` events, cancels and reads the rest, so the answer is the
stream's as if the cancel had landed right after those events.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import logging
import platform
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any

from ...core import jsonio
from ...core.errors import InputError
from .. import registry
from ..errors import InvalidRequestError, OperationNotOffered
from ..estimate import estimate_for_model
from ..protocol import Adapter, CancellableAdapter, accepts_keyword, capabilities_of
from . import codec

# -- log capture -------------------------------------------------------------------------


class _Capture(logging.Handler):
    """WARNING records of the call in progress (a stream's thread logs into it too)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _install_capture() -> _Capture:
    root = logging.getLogger()
    handler = _Capture()
    root.addHandler(handler)
    if root.level > logging.WARNING or root.level == logging.NOTSET:
        root.setLevel(logging.WARNING)
    return handler


# -- streams -----------------------------------------------------------------------------

_NEED, _END, _ABORT = "need", "end", "abort"


class _Abandoned(BaseException):
    """Raised into an abandoned stream's parser through its chunk iterator (a BaseException,
    so an adapter's `except Exception` does not swallow it)."""


class _Stream:
    """One stream: its parser runs in a thread, pulling chunks the feeds hand it."""

    def __init__(self, adapter: Adapter, ctx: Any) -> None:
        self.adapter, self.ctx = adapter, ctx
        self.fed: list[bytes] = []  # every chunk so far, for a cancel's replay
        self._in: queue.Queue[Any] = queue.Queue()
        self._out: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.over = False
        threading.Thread(target=self._run, daemon=True).start()

    def _chunks(self) -> Iterator[bytes]:
        while True:
            self._out.put((_NEED, None))
            item = self._in.get()
            if item is _END:
                return
            if item is _ABORT:
                raise _Abandoned
            yield item

    def _run(self) -> None:
        try:
            for ev in self.adapter.stream_response(self._chunks(), self.ctx):
                self._out.put(("event", ev))
        except _Abandoned:
            pass
        except BaseException as exc:  # the stream's failure, for the feed that caused it
            self._out.put(("error", exc))
            return
        self._out.put((_END, None))

    def collect(self) -> list[Any]:
        """The events until the parser wants the next chunk; the stream's error raised (with
        the events before it) when it failed."""
        events: list[Any] = []
        while True:
            kind, value = self._out.get()
            if kind == "event":
                events.append(value)
                continue
            if kind != _NEED:
                self.over = True
            if kind == "error":
                value.exec_events = events
                raise value
            return events

    def feed(self, data: bytes) -> list[Any]:
        self.fed.append(data)
        self._in.put(data)
        return self.collect()

    def close(self) -> list[Any]:
        self._in.put(_END)
        return self.collect()

    def abandon(self) -> None:
        if not self.over:
            self._in.put(_ABORT)
            with contextlib.suppress(BaseException):
                self.collect()
            self.over = True


# -- the server --------------------------------------------------------------------------


class Server:
    """Answers one request line at a time for one adapter."""

    def __init__(self, adapter: Adapter, ref: str) -> None:
        self.adapter, self.ref = adapter, ref
        self.capture = _install_capture()
        self.streams: dict[str, _Stream] = {}
        self.ops: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "hello": self.hello,
            "render": self.render,
            "parse": self.parse,
            "stream_open": self.stream_open,
            "stream_feed": self.stream_feed,
            "stream_close": self.stream_close,
            "cancel": self.cancel,
            "read_request": self.read_request,
            "estimate": self.estimate,
            "tool_id_map": self.tool_id_map,
            "shutdown": lambda _: {},
        }

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        op, params = request.get("op"), request.get("params") or {}
        self.capture.records = []
        handler = self.ops.get(str(op))
        try:
            if handler is None:
                raise OperationNotOffered(str(op), f"{self.ref}: no operation {op!r}")
            out: dict[str, Any] = {"id": request.get("id"), "ok": True, "result": handler(params)}
        except Exception as exc:
            error = codec.error_to_json(
                exc, not_implemented=op == "read_request" or isinstance(exc, OperationNotOffered)
            )
            events = getattr(exc, "exec_events", None)
            if isinstance(events, list):
                error["events"] = events
            out = {"id": request.get("id"), "ok": False, "error": error}
        out["logs"] = [codec.record_to_json(r) for r in self.capture.records]
        return out

    # -- operations ----------------------------------------------------------------------

    def hello(self, params: dict[str, Any]) -> dict[str, Any]:
        a = self.adapter
        versions = [v for v in params.get("protocol_versions", []) if v in codec.PROTOCOL_VERSIONS]
        if not versions:
            raise ValueError(f"no common protocol version (host offers {params.get('protocol_versions')})")
        ops = ["render", "parse", "stream", "read_request", "estimate", "tool_id_map"]
        if isinstance(a, CancellableAdapter):
            ops.insert(3, "cancel")
        folders = getattr(a, "cassette_folders", None)
        pattern = getattr(a, "provider_tool_id", None)
        info: dict[str, Any] = {
            "name": str(a.name),
            "provider": str(a.provider),
            "wire_api": str(a.wire_api),
            "language": "python",
            "language_version": f"{platform.python_implementation()} {platform.python_version()}",
            "library": _library(a),
            "capabilities": capabilities_of(a),
            "provider_tool_id": getattr(pattern, "pattern", str(pattern)),
            "operations": ops,
            "cassette_folders": list(folders) if isinstance(folders, tuple) and folders else [str(a.name)],
            "tool_errors_in_band": getattr(a, "tool_errors_in_band", None),
            "gaps": [
                {
                    "checks": list(g.rules),
                    "cases": list(g.subjects),
                    "when": str(getattr(g, "when", "") or ""),
                    "reason": g.reason,
                }
                for g in getattr(a, "bridge_gaps", ()) or ()
            ],
        }
        return {"protocol_version": max(versions), "adapter": info}

    def render(self, p: dict[str, Any]) -> dict[str, Any]:
        wire = self.adapter.to_wire(p["messages"], p["tools"], codec.options_from_json(p["options"]))
        return codec.wire_request_to_json(wire)

    def parse(self, p: dict[str, Any]) -> dict[str, Any]:
        response = codec.response_from_json(p["response"])
        return {"message": self.adapter.from_wire_response(response, codec.context_from_json(p["context"]))}

    def stream_open(self, p: dict[str, Any]) -> dict[str, Any]:
        stream = self.streams[p["stream_id"]] = _Stream(self.adapter, codec.context_from_json(p["context"]))
        return self._events(p["stream_id"], stream.collect)

    def stream_feed(self, p: dict[str, Any]) -> dict[str, Any]:
        stream = self.streams[p["stream_id"]]
        data = codec.unb64(p["data"])
        return self._events(p["stream_id"], lambda: stream.feed(data))

    def stream_close(self, p: dict[str, Any]) -> dict[str, Any]:
        stream = self.streams.pop(p["stream_id"], None)
        if stream is None:
            return {"events": []}
        if p.get("abandon"):
            stream.abandon()
            return {"events": []}
        return {"events": stream.close()}

    def _events(self, sid: str, step: Callable[[], list[Any]]) -> dict[str, Any]:
        try:
            events = step()
        finally:
            if self.streams.get(sid) is not None and self.streams[sid].over:
                del self.streams[sid]
        return {"events": events}

    def cancel(self, p: dict[str, Any]) -> dict[str, Any]:
        rid, delivered = p["request_id"], int(p["delivered"])
        sid = next((k for k, s in self.streams.items() if s.ctx.request_id == rid and not s.over), None)
        if sid is None or not isinstance(self.adapter, CancellableAdapter):
            return {"in_flight": False, "events": []}
        stream = self.streams.pop(sid)
        stream.abandon()
        mark = len(self.capture.records)
        replayed = iter(self.adapter.stream_response(iter(stream.fed), stream.ctx))
        for _ in range(delivered):  # the events the harness consumed, again: their logs went out then
            if next(replayed, None) is None:
                break
        del self.capture.records[mark:]
        answered = self.adapter.cancel(rid)
        return {"in_flight": answered, "events": list(replayed)}

    def read_request(self, p: dict[str, Any]) -> dict[str, Any]:
        reader = self.adapter.from_wire_request
        extra = {k: p[k] for k in ("url", "method", "headers") if p.get(k) is not None and accepts_keyword(reader, k)}
        parsed = reader(p["body"], session_id=p.get("session_id"), **extra)
        return codec.parsed_request_to_json(parsed)

    def estimate(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"tokens": estimate_for_model(self.adapter, p["messages"], p["tools"], p.get("model"))}

    def tool_id_map(self, p: dict[str, Any]) -> dict[str, Any]:
        m = self.adapter.tool_id_map(p["session_id"])
        call, args = p["call"], list(p.get("args") or [])
        if call not in codec.TOOL_ID_MAP_CALLS:
            raise OperationNotOffered("tool_id_map", f"no tool id map call {call!r}")
        if call == "pairs":
            return {"value": [list(x) for x in m.pairs()]}
        if call == "bind":
            try:
                m.bind(*args)
            except ValueError as exc:  # the pair would break the map's injectivity
                raise InvalidRequestError(str(exc)) from None
            return {"value": None}
        return {"value": getattr(m, call)(*args)}


def _library(a: Adapter) -> dict[str, str]:
    top = type(a).__module__.split(".")[0]
    if top == "conformance":
        return {"name": "turnspec", "version": codec.turnspec_version()}
    try:
        return {"name": top, "version": importlib.metadata.version(top)}
    except importlib.metadata.PackageNotFoundError:
        return {"name": top, "version": ""}


def serve(adapter: Adapter, ref: str, stdin: IO[bytes], stdout: IO[bytes]) -> int:
    """Answer requests until `shutdown` or the end of input; 0, or 2 on a line that is no
    request (said on standard error)."""
    server = Server(adapter, ref)
    for n, line in enumerate(stdin, 1):
        try:
            request = jsonio.parse(line)
        except ValueError as exc:
            sys.stderr.write(f"{ref}: request line {n} is not JSON: {exc}\n")
            return 2
        if not isinstance(request, dict):
            sys.stderr.write(f"{ref}: request line {n} is not an object\n")
            return 2
        answer = server.answer(request)
        try:
            data = jsonio.dumps(answer)
        except (TypeError, InputError) as exc:  # the adapter gave a value JSON cannot carry
            error = {"kind": "crash", "message": f"the adapter's answer is not JSON: {exc}", "type": "TypeError"}
            data = jsonio.dumps({"id": request.get("id"), "ok": False, "error": error, "logs": []})
        stdout.write(data + b"\n")
        stdout.flush()
        if request.get("op") == "shutdown":
            return 0
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        sys.stderr.write("usage: python -m conformance.adapters.exec.serve REF (a turnspec adapter reference)\n")
        return 2
    out = sys.stdout.buffer
    sys.stdout = sys.stderr  # standard output carries the protocol only: an adapter's print goes to stderr
    try:
        adapter = registry.load(args[0])
    except InputError as exc:
        sys.stderr.write(f"turnspec exec serve: {exc}\n")
        return 2
    return serve(adapter, args[0], sys.stdin.buffer, out)


if __name__ == "__main__":
    sys.exit(main())
