"""The proxy adapter: an `Adapter` (and, when the child offers `cancel`, a
`CancellableAdapter`) whose every call is one exec protocol request (docs/exec-protocol.md).
What the child said in its `hello` is what the adapter declares: name, provider, wire API,
capabilities, provider tool id pattern, cassette folders, gaps."""

from __future__ import annotations

import contextlib
import itertools
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import AdapterError, OperationNotOffered
from ..protocol import (
    AdapterOptions,
    Message,
    ParsedRequest,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireRequest,
    WireResponse,
)
from . import codec
from .client import ExecClient


@dataclass(frozen=True)
class ExecGap:
    """A gap the child declares (`gaps` of its hello), read as the runner reads a bridge's
    `bridge_gaps` (`suite.runner.declared_gaps`)."""

    rules: tuple[str, ...]
    subjects: tuple[str, ...]
    reason: str
    when: str = ""


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(x) for x in value) if isinstance(value, list) else ()


def gaps_of(value: Any) -> tuple[ExecGap, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(
        ExecGap(_strings(g.get("checks")), _strings(g.get("cases")), str(g.get("reason", "")), str(g.get("when") or ""))
        for g in value
        if isinstance(g, dict)
    )


def tool_id_pattern(value: Any) -> re.Pattern[str] | None:
    """The hello's `provider_tool_id` compiled; None when it is none (TC001 reports it)."""
    if not isinstance(value, str):
        return None
    try:
        return re.compile(value)
    except re.error:
        return None


class ExecAdapter:
    """A child process as an adapter. `close()` ends the child (also done when the adapter
    is collected, or at exit)."""

    def __init__(self, client: ExecClient) -> None:
        info = client.info
        self.client = client
        self.name: str = client.name
        self.provider: str = info.get("provider")  # type: ignore[assignment]  # TC001 judges what it is
        self.wire_api: str = info.get("wire_api")  # type: ignore[assignment]
        self.capabilities: Any = info.get("capabilities")
        self.provider_tool_id: re.Pattern[str] = tool_id_pattern(info.get("provider_tool_id"))  # type: ignore[assignment]
        self.operations = frozenset(_strings(info.get("operations")))
        self.cassette_folders: tuple[str, ...] = _strings(info.get("cassette_folders")) or (self.name,)
        self.tool_errors_in_band: str | None = info.get("tool_errors_in_band")
        self.bridge_gaps: tuple[ExecGap, ...] = gaps_of(info.get("gaps"))
        self.language = info.get("language")
        self.library = info.get("library")
        self._streams = itertools.count(1)
        self._live: dict[str, _ProxyStream] = {}

    def __repr__(self) -> str:
        return f"<ExecAdapter {self.name} ({self.client.config.label})>"

    def offers(self, op: str) -> bool:
        return op in self.operations

    def _need(self, op: str, method: str) -> None:
        if op not in self.operations:
            raise OperationNotOffered(
                op,
                f"the exec adapter does not offer `{op}` (its hello lists {', '.join(sorted(self.operations))}), "
                f"so {method} cannot be observed",
            )

    def close(self) -> None:
        self.client.close()

    def take_faults(self) -> list[str]:
        """The exec faults (crash, timeout, protocol error) since the last call: the runner
        fails a case for each one no case reported (a check that swallowed the exception)."""
        return self.client.take_faults()

    # -- the protocol --------------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        params = {"messages": messages, "tools": tools, "options": codec.options_to_json(options)}
        return codec.wire_request_from_json(self.client.call("render", params))

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        params = {"response": codec.response_to_json(response), "context": codec.context_to_json(request_context)}
        return self.client.call("parse", params).get("message")  # type: ignore[return-value]  # checks judge it

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        self._need("stream", "stream_response")
        stream = _ProxyStream(self, f"s{next(self._streams)}", chunks, context)
        if context.request_id is not None:
            self._live[context.request_id] = stream
        return stream

    def from_wire_request(
        self,
        body: WireBody,
        *,
        session_id: str | None = None,
        url: str | None = None,
        method: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> ParsedRequest:
        self._need("read_request", "from_wire_request")
        params = {
            "body": body,
            "url": url,
            "method": method,
            "headers": dict(headers) if headers is not None else None,
            "session_id": session_id,
        }
        return codec.parsed_request_from_json(self.client.call("read_request", params))

    def estimate_input_tokens(
        self, messages: list[Message], tools: list[ToolDefinition], model: str | None = None
    ) -> int:
        self._need("estimate", "estimate_input_tokens")
        tokens = self.client.call("estimate", {"messages": messages, "tools": tools, "model": model}).get("tokens")
        if isinstance(tokens, bool) or not isinstance(tokens, int):
            raise TypeError(f"exec: estimate answered tokens={tokens!r}, not an integer")
        return tokens

    def tool_id_map(self, session_id: str) -> ExecToolIdMap:
        self._need("tool_id_map", "the tool id map")
        return ExecToolIdMap(self.client, str(self.provider), session_id)


class CancellableExecAdapter(ExecAdapter):
    """An exec adapter whose child offers `cancel` (contract §3.1)."""

    def cancel(self, request_id: str) -> bool:
        stream = self._live.get(request_id)
        delivered = stream.delivered if stream is not None else 0
        result = self.client.call("cancel", {"request_id": request_id, "delivered": delivered})
        in_flight = result.get("in_flight")
        if stream is not None and in_flight is True:
            events = result.get("events")
            stream.cancelled(events if isinstance(events, list) else [])
        return in_flight  # type: ignore[return-value]  # TC611 judges anything but True/False


class _ProxyStream:
    """One `stream_response`: chunks fed one request at a time as the harness pulls events,
    the stream closed when the chunks end (docs/exec-protocol.md, Streams). Counts the
    events handed over (`delivered`, for cancel)."""

    def __init__(
        self, adapter: ExecAdapter, stream_id: str, chunks: Iterable[bytes | str], ctx: RequestContext
    ) -> None:
        self._adapter = adapter
        self._client = adapter.client
        self.stream_id = stream_id
        self._request_id = ctx.request_id
        self._chunks = iter(chunks)
        self._pending: deque[Any] = deque()
        self._error: BaseException | None = None
        self._after: deque[Any] | None = None
        self._open = True  # the child holds the stream's state
        self._done = False
        self.delivered = 0
        try:
            result = self._client.call("stream_open", {"stream_id": stream_id, "context": codec.context_to_json(ctx)})
        except BaseException:
            self._open = False  # refused or failed: the child holds no such stream
            raise
        self._take(result)

    def __iter__(self) -> _ProxyStream:
        return self

    def __next__(self) -> StreamEvent:
        while True:
            queue = self._after if self._after is not None else self._pending
            if queue:
                self.delivered += 1
                return queue.popleft()  # type: ignore[no-any-return]
            if self._error is not None:
                err, self._error = self._error, None
                self._finish()
                raise err
            if self._done or self._after is not None or not self._open:
                self._finish()
                raise StopIteration
            self._step()

    def _step(self) -> None:
        """Feed the next chunk, or close the stream when there is none."""
        try:
            chunk = next(self._chunks)
        except StopIteration:
            self._call("stream_close", {"stream_id": self.stream_id})
            self._open = False
            return
        data = chunk.encode("utf-8") if isinstance(chunk, str) else bytes(chunk)
        self._call("stream_feed", {"stream_id": self.stream_id, "data": codec._b64(data)})

    def _call(self, op: str, params: dict[str, Any]) -> None:
        try:
            result = self._client.call(op, params)
        except AdapterError as exc:  # the stream failed: its events first, then the error
            self._fail(exc)
        except NotImplementedError as exc:
            self._fail(exc)
        except Exception:
            self._open = False  # a fault: the child (and the stream's state) is gone
            self._finish()
            raise
        else:
            self._take(result)

    def _fail(self, exc: BaseException) -> None:
        events = getattr(exc, "exec_events", None)
        self._pending.extend(events if isinstance(events, list) else [])
        self._error = exc
        self._open = False

    def _take(self, result: dict[str, Any]) -> None:
        events = result.get("events")
        if not isinstance(events, list):
            raise TypeError(f"exec: the stream answer's events are a {type(events).__name__}, not a list")
        self._pending.extend(events)

    def cancelled(self, events: list[Any]) -> None:
        """The cancel's answer: what the stream yields from here on; the rest is discarded."""
        self._pending.clear()
        self._error = None
        self._after = deque(events)
        self._open = False  # the stream is over for the child

    def _finish(self) -> None:
        self._done = True
        if self._request_id is not None and self._adapter._live.get(self._request_id) is self:
            del self._adapter._live[self._request_id]

    def close(self) -> None:
        """The harness stopped reading (as a generator's close): the child drops the stream."""
        if self._open:
            self._open = False
            self._client.abandon(self.stream_id)
        self._finish()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter exit the client may be gone
            if self._open:
                self._open = False
                self._client.abandon(self.stream_id)


class ExecToolIdMap:
    """The child's per-session tool id map (spec §6.2), asked one call at a time: the map
    is the child's, since its parses use it (docs/exec-protocol.md, tool_id_map)."""

    def __init__(self, client: ExecClient, provider: str, session_id: str) -> None:
        self._client = client
        self.provider = provider
        self.session_id = session_id

    def _ask(self, call: str, *args: str) -> Any:
        params = {"session_id": self.session_id, "call": call, "args": list(args)}
        return self._client.call("tool_id_map", params).get("value")

    def canonical_for(self, provider_id: str) -> str:
        return self._ask("canonical_for", provider_id)  # type: ignore[no-any-return]

    def provider_for(self, canonical_id: str) -> str:
        return self._ask("provider_for", canonical_id)  # type: ignore[no-any-return]

    def get_provider(self, canonical_id: str) -> str | None:
        return self._ask("get_provider", canonical_id)  # type: ignore[no-any-return]

    def get_canonical(self, provider_id: str) -> str | None:
        return self._ask("get_canonical", provider_id)  # type: ignore[no-any-return]

    def bind(self, canonical_id: str, provider_id: str) -> None:
        self._ask("bind", canonical_id, provider_id)

    def pairs(self) -> list[tuple[str, str]]:
        value = self._ask("pairs")
        if not isinstance(value, list):
            raise TypeError(f"exec: tool_id_map pairs answered a {type(value).__name__}, not a list")
        return [tuple(p) if isinstance(p, list) else p for p in value]
