"""The bridge kit: run a library's own model class as a turnspec adapter, offline.

Most adapters in use live inside libraries (pydantic-ai, LangChain): their request
building and response parsing are the code worth checking, and they speak HTTP through an
httpx client. A bridge gives the library a client whose transport never reaches the
network:

- `to_wire`: the library builds its request for the canonical history; the
  `CaptureTransport` records it and stops the call (`Captured`), and the recorded request
  is the adapter's `WireRequest`.
- `from_wire_response` / `stream_response`: the transport answers the library's request
  with the recorded body (`Canned`), and the library's own parsing turns it into its
  message type, which the bridge maps to canonical form.

What a library cannot express at all is a `Gap` the bridge declares (checks it touches,
and why); the suite reports the check skipped with that reason (`conformance.suite`
reads `bridge_gaps`), never a pass or a failure.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from ..adapters.base import BaseAdapter, Message, ParsedRequest, ToolDefinition, WireFormatError
from ..adapters.estimate import estimate_for_model
from ..adapters.protocol import read_wire_request
from ..adapters.toolids import ToolIdMap
from ..wire import registry as wire_registry

T = TypeVar("T")


class Captured(Exception):
    """Raised by the transport after it recorded a request it was told not to answer."""


@dataclass(frozen=True)
class Canned:
    """A recorded answer: status, headers, body bytes (the stream's bytes when streaming)."""

    body: bytes
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CapturedRequest:
    """What the library sent: method, URL path with its query, headers, JSON body."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


# headers a library adds that are the harness's (credentials) or the HTTP client's, never
# the adapter's: WireRequest carries no credentials (protocol.WireRequest)
_NOT_ADAPTERS = frozenset(
    {
        "authorization",
        "x-api-key",
        "x-goog-api-key",
        "api-key",
        "content-length",
        "host",
        "accept-encoding",
        "connection",
        "user-agent",
    }
)


def wire_headers(sent: CapturedRequest, wire_api: str) -> dict[str, str]:
    """The headers of the library's request a `WireRequest` carries: its content type and
    each header the API's record requires (`Endpoint.headers`: Anthropic's
    `anthropic-version`) as the library sent it; none of the HTTP client's own."""
    out = {"content-type": sent.headers.get("content-type", "application/json")}
    try:
        endpoint = wire_registry.get(wire_api).endpoint
    except KeyError:
        endpoint = None
    for h in endpoint.headers if endpoint is not None else ():
        value = sent.headers.get(h.name.lower())
        if value is not None:
            out[h.name.lower()] = value
    return out


class CaptureTransport:
    """An httpx(2) `MockTransport` handler: records each request, answers it with the next
    `Canned` of `answers`, or raises `Captured` when none is left (a request to capture).

    `client()` builds the library's async client on it (`httpx2` when the library uses it,
    else `httpx`). The handler never opens a socket, so a bridge runs with the network
    blocked and with dummy API keys.
    """

    def __init__(self, module: Any) -> None:
        self.module = module  # httpx or httpx2: the one whose AsyncClient the library accepts
        self.requests: list[CapturedRequest] = []
        self.answers: list[Canned] = []

    def handler(self, request: Any) -> Any:
        raw = bytes(request.content or b"")
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = request.url.raw_path.decode("ascii", "replace")
        headers = {k.lower(): v for k, v in request.headers.items() if k.lower() not in _NOT_ADAPTERS}
        self.requests.append(CapturedRequest(request.method, path, headers, body))
        if not self.answers:
            raise Captured(path)
        answer = self.answers.pop(0)
        return self.module.Response(answer.status, headers=dict(answer.headers), content=answer.body)

    def client(self) -> Any:
        return self.module.AsyncClient(
            transport=self.module.MockTransport(self.handler), timeout=self.module.Timeout(600.0)
        )

    def reset(self, answers: list[Canned] | None = None) -> None:
        self.requests.clear()
        self.answers = list(answers or [])


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run an async library call to completion from synchronous adapter code.

    A fresh event loop each call (`asyncio.run`); when this thread already runs one (an
    async test, a notebook), the call runs on a worker thread with its own loop instead,
    so the protocol's synchronous methods work in both.
    """

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, main()).result()


def parse_failure(library: str, what: str, exc: BaseException) -> WireFormatError:
    """The one-line error of a library that could not parse a recorded `what` (response,
    stream): its exception's text on one line (pydantic's ValidationError spans many), cut
    at 300 characters."""
    said = " ".join(str(exc).split())
    return WireFormatError(f"{library} could not parse the {what}: {type(exc).__name__}: {said[:300]}")


@dataclass(frozen=True)
class Gap:
    """Something the library cannot express, declared by the bridge: the checks (`rules`,
    TC ids) and cases (`subjects`, fnmatch patterns of the case subjects, e.g. the cassette
    interaction `cache.yaml#*`) it decides, optionally only when the failure's reason matches
    `when` (the difference the gap explains and nothing else), and why. The suite reports such a case skipped
    with the reason instead of failed (`suite.runner.declared_gaps`)."""

    rules: tuple[str, ...]
    subjects: tuple[str, ...]
    reason: str
    when: str = ""  # a regular expression the failure's reason must match (re.search); "" any


NOT_BRIDGED: Mapping[str, Any] = {
    # cache_control and response schemas have no place in the canonical -> library message
    # mappings the bridges use, so every bridge declares them false (canonical §7.2: honest)
    "supports_prompt_caching": False,
    "supports_structured_output": False,
}


class ReferenceBridge(BaseAdapter):
    """What every bridge leaves to the reference adapter of its wire API (`reference_class`):
    provider tool ids, the tool id map, reading a wire request back (with the media type
    the bridge sent for a URL image, which the wire does not carry) and the token estimate.
    Subclasses are the libraries' bridge bases (`PydanticAIBridge`, `LangChainBridge`)."""

    reference_class: ClassVar[type[BaseAdapter]]
    cassette_folders: ClassVar[tuple[str, ...]]  # the reference adapter's: recorded from the provider's docs
    bridge_gaps: ClassVar[tuple[Gap, ...]] = ()
    input_counts_cache: ClassVar[bool] = True  # the wire's input token count includes cached tokens

    def __init__(self) -> None:
        self.reference = self.reference_class()
        super().__init__()
        self._url_media: dict[tuple[str, str], str] = {}  # (session, url) -> media type this bridge sent

    def new_provider_tool_id(self) -> str:
        return self.reference.new_provider_tool_id()

    def note_url_images(self, messages: list[Message]) -> None:
        """Remember the media type of each URL image about to be rendered: the wire does not
        carry it, and `from_wire_request` reads it back as the one this bridge sent."""
        for m in messages:
            for b in m.get("content") or []:
                if b.get("type") == "image" and b["source"]["kind"] == "url":
                    self._url_media[(str(m.get("session_id", "")), str(b["source"]["data"]))] = str(b["media_type"])

    def tool_id_map(self, session_id: str) -> ToolIdMap:
        return self.reference.tool_id_map(session_id)  # one map: read-back and rendering agree

    def from_wire_request(
        self,
        body: dict[str, Any],
        *,
        session_id: str | None = None,
        url: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> ParsedRequest:
        """The reference adapter's reading, given the request's URL and headers when it takes
        them (Gemini keeps the model in the URL, not the body: without it the model, and the
        estimate that depends on it, would be unknown)."""
        parsed = read_wire_request(self.reference, body, session_id=session_id, url=url, headers=headers)
        for m in parsed.messages:  # a URL image's media type is not on the wire: the one this bridge sent
            for b in m.get("content") or []:
                blocks = [b, *(b.get("content") or [] if b.get("type") == "tool_result" else [])]
                for x in blocks:
                    if x.get("type") == "image" and x["source"]["kind"] == "url":
                        sent = self._url_media.get((str(m.get("session_id", "")), str(x["source"]["data"])))
                        if sent is not None:
                            x["media_type"] = sent
        return parsed

    def estimate_input_tokens(
        self, messages: list[Message], tools: list[ToolDefinition], *, model: str | None = None
    ) -> int:
        """The reference adapter's estimate, told the request's model when it takes one
        (`adapters.estimate.estimate_for_model`: Gemini counts thought signatures by model),
        so a bridge's estimate is the reference's on the same request."""
        return estimate_for_model(self.reference, messages, tools, model)
