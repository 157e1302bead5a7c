"""LangChain's chat model classes as turnspec adapters (`turnspec conform langchain:<api>`).

Each bridge runs one of LangChain's own chat models (`BaseChatModel.ainvoke` / `astream`,
the documented Runnable interface) with a dummy key and an httpx client whose transport
is the kit's `CaptureTransport` (no network):

| bridge | LangChain model | package | turnspec wire API |
|---|---|---|---|
| `langchain:anthropic` | `ChatAnthropic` | langchain-anthropic | anthropic-messages |
| `langchain:openai-chat` | `ChatOpenAI` | langchain-openai | openai-chat-completions |

`ChatOpenAI` takes the client as `http_async_client` (documented field). `ChatAnthropic`
takes none: `route_chat_anthropic_through`, the one function that reaches inside LangChain
(pinned to langchain-anthropic `LANGCHAIN_ANTHROPIC`), sets its cached async SDK client to an
`anthropic.AsyncClient` on the capture client.

Canonical messages become LangChain messages through the `langchain` peer format's mapping
(`formats.langchain.mapping.to_langchain`, then `langchain_core.messages.messages_from_dict`),
with tool ids through the session's §6.2 map; a block that mapping cannot hold is dropped
with the §7.3 WARN line. A parsed `AIMessage` comes back through its `content_blocks` (LangChain's
own standard-block translation of the provider's content) and `from_langchain`.

What LangChain does not do at all is delegated to turnspec's reference adapter of the same
wire API, as the pydantic-ai bridges do: reading a request body back (`from_wire_request`),
the pre-flight token estimate, and classifying HTTP errors by the contract's §6.2 table.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx2
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, messages_from_dict
from pydantic import SecretStr

from ..adapters.anthropic import AnthropicAdapter
from ..adapters.base import (
    AdapterError,
    AdapterOptions,
    Block,
    Message,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireFormatError,
    WireRequest,
    WireResponse,
    new_ulid,
)
from ..adapters.openai_chat import OpenAIChatAdapter
from ..core.convertkit import IdMint
from ..formats.canonical.status import status_of_stop
from ..formats.langchain.mapping import Session, from_langchain, to_langchain
from ..wire import registry as wire_registry
from .kit import (
    NOT_BRIDGED,
    Canned,
    CaptureTransport,
    Gap,
    ReferenceBridge,
    parse_failure,
    run_sync,
    wire_headers,
)

LIBRARIES = ("langchain-anthropic", "langchain-openai")
_BLOCK_LOSS = re.compile(r"^/content/(\d+)(?:/content/(\d+))?$")
OFFLINE_KEY = "turnspec-offline"


def library_versions() -> dict[str, str]:
    """The installed LangChain packages the bridges run (the docs table names them)."""
    return {name: importlib.metadata.version(name) for name in (*LIBRARIES, "langchain-core")}


LANGCHAIN_ANTHROPIC = "1.7.10"
"""The langchain-anthropic release `route_chat_anthropic_through` was written against (the
`langchain-bridges` extra of pyproject.toml pins the same)."""


def route_chat_anthropic_through(model: Any, async_client: Any, http_client: Any) -> None:
    """Make a `ChatAnthropic` send its requests through `http_client` (the capture client).

    The one place the bridges reach inside a library. Why: `ChatAnthropic` takes no http
    client (`ChatOpenAI` does: `http_async_client`); in langchain-anthropic 1.7.10 its async
    SDK client is the `functools.cached_property` `_async_client`, built from the private
    `_client_params` (key, base URL, timeouts, headers). So the bridge builds that client
    itself (`anthropic.AsyncClient(**model._client_params, http_client=...)`) and puts it
    where the cached property keeps its value, the instance `__dict__`. A release that
    renames either attribute fails here with a message naming this function, not deep in a
    request; re-check both against its source before moving `LANGCHAIN_ANTHROPIC`."""
    params = getattr(model, "_client_params", None)
    if not isinstance(params, Mapping):
        version = importlib.metadata.version("langchain-anthropic")
        raise RuntimeError(
            f"langchain-anthropic {version}: ChatAnthropic has no `_client_params` (written against "
            f"{LANGCHAIN_ANTHROPIC}); update conformance.bridges.langchain.route_chat_anthropic_through"
        )
    model.__dict__["_async_client"] = async_client(**params, http_client=http_client)


def _flat(headers: Mapping[str, Any]) -> dict[str, str]:
    """Headers as one string each (vcrpy keeps a list per name)."""
    out: dict[str, str] = {}
    for k, v in headers.items():
        value = v[0] if isinstance(v, list | tuple) and v else v
        if isinstance(value, str | int | float):
            out[str(k).lower()] = str(value)
    return out


def _fields_first(cls: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with each `model_kwargs` entry the model class declares as a field (e.g.
    ChatAnthropic's `thinking`) given as that field: LangChain warns about the others' form."""
    extra = dict(settings.pop("model_kwargs", None) or {})
    fields = getattr(cls, "model_fields", {})
    for key in [k for k in extra if k in fields and k not in settings]:
        settings[key] = extra.pop(key)
    if extra:
        settings["model_kwargs"] = extra
    return settings


@dataclass
class _Parsed:
    content: list[Block]
    wire_model: str | None
    usage: dict[str, int] | None
    raw_stop: str | None


class LangChainBridge(ReferenceBridge):
    """A LangChain chat model class as a turnspec adapter (subclasses name the class)."""

    stop_key: ClassVar[str]  # the response_metadata key holding the provider's raw stop value

    def __init__(self) -> None:
        super().__init__()
        self.transport = CaptureTransport(httpx2)

    def classify_error(self, status: int, body: Any, headers: Mapping[str, str]) -> AdapterError:
        return self.reference.classify_error(status, body, headers)  # type: ignore[attr-defined, no-any-return]

    # the library's model ----------------------------------------------------------------

    def make_model(self, name: str, settings: dict[str, Any]) -> BaseChatModel:
        raise NotImplementedError

    def _settings(self, options: AdapterOptions | None) -> dict[str, Any]:
        settings: dict[str, Any] = {"max_retries": 0}
        if options is None:
            return settings
        if options.max_output_tokens is not None:
            settings["max_tokens"] = options.max_output_tokens
        if options.temperature is not None:
            settings["temperature"] = options.temperature
        if options.extra:
            settings["model_kwargs"] = dict(options.extra)  # top-level body fields, as given
        if options.stream:
            settings["streaming"] = True
        return settings

    # canonical -> LangChain ---------------------------------------------------------------

    def _messages(self, messages: list[Message]) -> list[BaseMessage]:
        sid = str(messages[0].get("session_id", "")) if messages else ""
        ids = self.tool_id_map(sid)
        prepared: list[Message] = []
        for m in messages:
            content: list[Block] = []
            for b in m.get("content") or []:
                if b.get("type") == "tool_use":
                    b = {**b, "id": ids.provider_for(b["id"])}
                elif b.get("type") == "tool_result":
                    b = {**b, "tool_use_id": ids.provider_for(b["tool_use_id"])}
                content.append(b)
            prepared.append({**m, "content": content})
        dicts, losses = to_langchain(prepared)
        for loss in losses.items:
            hit = _BLOCK_LOSS.match(loss.pointer)
            if hit is None or "dropped" not in loss.text:
                continue  # a field, not a block: canonical §7.3 logs dropped blocks
            m = messages[loss.message]
            j = int(hit.group(1))
            block = (m.get("content") or [])[j] if j < len(m.get("content") or []) else {}
            if hit.group(2) is not None and isinstance(block.get("content"), list):
                k = int(hit.group(2))
                block = block["content"][k] if k < len(block["content"]) else {}
            self.drop(m, j, str(block.get("type", "unknown")), f"langchain: {loss.text}")
        return list(messages_from_dict(dicts))

    @staticmethod
    def _tools(tools: list[ToolDefinition]) -> list[dict[str, Any]]:
        # the OpenAI function form, which `bind_tools` of both models documents as accepted
        return [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t.get("description") or "",
                    "parameters": t.get("input_schema") or {"type": "object", "properties": {}},
                },
            }
            for t in tools
        ]

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        history = self._messages(messages)
        self.note_url_images(messages)
        if options.output_schema is not None:
            self.warn_option(
                "output_schema", "the bridge does not ask LangChain for structured output (declared false)"
            )
        if options.provider_tools:
            self.warn_option("provider_tools", "the bridge does not bind provider-native tools")
        model: Any = self.make_model(options.wire_model, self._settings(options))
        if tools:
            model = model.bind_tools(self._tools(tools))
        kwargs: dict[str, Any] = {"stop": list(options.stop_sequences)} if options.stop_sequences else {}
        self.transport.reset()

        async def call() -> None:
            if options.stream:
                async for _ in model.astream(history, **kwargs):
                    pass
            else:
                await model.ainvoke(history, **kwargs)

        try:
            run_sync(call)
        except Exception as exc:  # the capture stops the call; LangChain wraps it in its own error
            if not self.transport.requests:
                raise AdapterError(f"LangChain built no request: {type(exc).__name__}: {exc}") from None
        if not self.transport.requests:
            raise AdapterError("LangChain sent no request")
        sent = self.transport.requests[0]
        return WireRequest(sent.method, sent.path, wire_headers(sent, self.wire_api), sent.body)

    # wire -> canonical: the library parses the recorded body ---------------------------

    def _parse(self, ai: AIMessage, sid: str) -> _Parsed:
        ids = self.tool_id_map(sid)
        blocks: list[dict[str, Any]] = []
        for b in ai.content_blocks:
            d = dict(b)
            if d.get("type") == "tool_call":
                d["id"] = ids.canonical_for(str(d.get("id")))
            blocks.append(d)
        calls = [{**c, "id": ids.canonical_for(str(c.get("id")))} for c in ai.tool_calls]
        data: dict[str, Any] = {
            "type": "ai",
            "content": blocks,
            "tool_calls": calls,
            "id": None,
            "response_metadata": {},
        }
        canon, _, _ = from_langchain([{"type": "ai", "data": data}], sid, Session(IdMint(sid), 0))
        content: list[Block] = canon[0]["content"] if canon else []
        if content == [{"type": "text", "text": ""}] and not blocks:
            content = []
        rm = ai.response_metadata or {}
        name = rm.get("model_name") or rm.get("model")
        usage = None
        um = ai.usage_metadata
        if um:
            details: Mapping[str, Any] = um.get("input_token_details") or {}
            cached, written = int(details.get("cache_read") or 0), int(details.get("cache_creation") or 0)
            total = int(um.get("input_tokens") or 0)
            usage = {
                # LangChain's input_tokens counts cache reads and writes in (UsageMetadata docs);
                # the APIs whose input count does not, get it back without them
                "input_tokens": total if self.input_counts_cache else max(total - cached - written, 0),
                "output_tokens": int(um.get("output_tokens") or 0),
                "cached_input_tokens": cached,
                "cache_creation_input_tokens": written,
            }
        raw = rm.get(self.stop_key)
        return _Parsed(content, name if isinstance(name, str) else None, usage, raw if isinstance(raw, str) else None)

    def stop_reason(self, parsed: _Parsed) -> str:
        if parsed.raw_stop is None:
            return "tool_use" if any(b.get("type") == "tool_use" for b in parsed.content) else "end_turn"
        return wire_registry.get(self.wire_api).stop_reasons.get(parsed.raw_stop, "end_turn")

    def _failure(self, exc: BaseException, what: str) -> AdapterError:
        """The error a parse failure is: an SDK status error in LangChain's chain of causes
        (an error event mid-stream) classified by the contract's §6.2 table, else a
        WireFormatError naming what LangChain raised."""
        seen: BaseException | None = exc
        while seen is not None:
            status, body = getattr(seen, "status_code", None), getattr(seen, "body", None)
            if isinstance(body, dict):
                # an error event mid-stream has no status of its own: 500, as the reference adapters
                # read one; the SDKs keep the event's `error` object, the classifier reads the event
                event = body if "error" in body else {"type": "error", "error": body}
                return self.classify_error(status if isinstance(status, int) else 500, event, {})
            seen = seen.__cause__ or seen.__context__
        return parse_failure("LangChain", what, exc)

    probe_settings: ClassVar[Mapping[str, Any]] = {}  # what the replay request asks for (the answer is recorded)

    def _probe(self, stream: bool) -> BaseChatModel:
        settings = {**self._settings(None), **self.probe_settings, **({"streaming": True} if stream else {})}
        return self.make_model("turnspec-replay", settings)

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body if isinstance(resp.body, bytes) else json.dumps(resp.body).encode()
        headers = {"content-type": "application/json", **_flat(resp.headers)}
        model = self._probe(False)
        self.transport.reset([Canned(body, resp.status, headers)])
        try:
            with warnings.catch_warnings():  # the SDKs' serializer warnings on a malformed body: the error says it
                warnings.simplefilter("ignore")
                result = run_sync(lambda: model.ainvoke([HumanMessage("turnspec replay")]))
        except Exception as exc:
            if resp.status >= 400:
                raise self.classify_error(resp.status, resp.body, headers) from None
            raise self._failure(exc, "response") from None
        if not isinstance(result, AIMessage):
            raise WireFormatError(f"LangChain returned a {type(result).__name__}, not an AIMessage")
        parsed = self._parse(result, request_context.session_id)
        content = parsed.content or [{"type": "text", "text": ""}]
        status = status_of_stop(self.stop_reason(parsed))
        return self.assemble(
            request_context, content, wire_model=parsed.wire_model, token_usage=parsed.usage, status=status
        )

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        data = b"".join(c.encode("utf-8", "surrogatepass") if isinstance(c, str) else bytes(c) for c in chunks)
        return self._stream(data, context)

    def _stream(self, data: bytes, ctx: RequestContext) -> Iterator[StreamEvent]:
        model = self._probe(True)
        self.transport.reset([Canned(data, 200, {"content-type": "text/event-stream"})])
        got: list[Any] = []

        async def collect() -> None:
            async for chunk in model.astream([HumanMessage("turnspec replay")]):
                got.append(chunk)

        failure: Exception | None = None
        try:
            with warnings.catch_warnings():  # as in from_wire_response
                warnings.simplefilter("ignore")
                run_sync(collect)
        except Exception as exc:
            failure = self._failure(exc, "stream")
        # each tool call's argument fragments as LangChain's chunks carry them, by call index
        fragments: dict[Any, list[str]] = {}
        for chunk in got:
            for tc in getattr(chunk, "tool_call_chunks", None) or []:
                parts = fragments.setdefault(tc.get("index"), [])  # a call with no arguments sent none
                if tc.get("args"):
                    parts.append(str(tc["args"]))
        calls = list(fragments.values())
        final: Any = None
        for chunk in got:  # AIMessageChunk + AIMessageChunk: LangChain's own aggregation
            final = chunk if final is None else final + chunk
        parsed = self._parse(final, ctx.session_id) if isinstance(final, AIMessage) else None
        mid = ctx.message_id or new_ulid()
        model_name = parsed.wire_model if parsed and parsed.wire_model else "unknown"
        yield {
            "type": "message_start",
            "message_id": mid,
            "role": "assistant",
            "model": f"{self.provider}:{model_name}",
        }
        content = parsed.content if parsed else []
        if parsed is not None and not content:
            content = [{"type": "text", "text": ""}]  # as `assemble` writes an empty reply (spec §5.1.1)
        for ci, block in enumerate(content):
            t = block.get("type")
            if t == "text" and block["text"]:
                yield {"type": "text_delta", "message_id": mid, "content_block_index": ci, "text": block["text"]}
            elif t == "thinking":
                ev: StreamEvent = {"type": "thinking_delta", "message_id": mid, "content_block_index": ci}
                ev["text"] = block.get("text", "")
                if block.get("signature"):
                    ev["signature"] = str(block["signature"])
                yield ev
            elif t == "tool_use":
                yield {
                    "type": "tool_use_start", "message_id": mid, "content_block_index": ci,
                    "tool_use_id": block["id"], "tool_name": block["name"],
                }  # fmt: skip
                k = sum(1 for b in content[:ci] if b.get("type") == "tool_use")
                parts = calls[k] if k < len(calls) else [json.dumps(block["input"])]  # not streamed as chunks
                for part in parts:
                    yield {
                        "type": "tool_use_input_delta", "message_id": mid, "content_block_index": ci,
                        "tool_use_id": block["id"], "partial_json": part,
                    }  # fmt: skip
                yield {
                    "type": "tool_use_end", "message_id": mid, "content_block_index": ci,
                    "tool_use_id": block["id"], "final_input": block["input"],
                }  # fmt: skip
        yield {
            "type": "message_complete",
            "message_id": mid,
            "stop_reason": "error" if failure is not None or parsed is None else self.stop_reason(parsed),
            "final_content": content,
            "usage": parsed.usage if parsed else None,
        }
        if failure is not None:
            raise failure


# -- the two bridges --------------------------------------------------------------------------


class AnthropicBridge(LangChainBridge):
    """langchain-anthropic's `ChatAnthropic` (Messages API)."""

    name: ClassVar[str] = "langchain:anthropic"
    provider: ClassVar[str] = "anthropic"
    wire_api: ClassVar[str] = "anthropic-messages"
    reference_class = AnthropicAdapter
    input_counts_cache = False  # Messages `usage.input_tokens` excludes cache reads and writes
    stop_key = "stop_reason"
    # a replay asks for thinking, as the recordings that hold thinking did: without it ChatAnthropic
    # streams text as bare strings (`coerce_content_to_string`), a form meant for text-only replies
    probe_settings: ClassVar[Mapping[str, Any]] = {"thinking": {"type": "enabled", "budget_tokens": 1024}}
    bridge_gaps: ClassVar[tuple[Gap, ...]] = (
        Gap(
            ("TC802",),
            ("cache.yaml#*",),
            "`cache_control` on system blocks: the canonical -> LangChain mapping (the langchain format) writes "
            "system text only",
            when=r"^(/system/\d+/cache_control: missing from rendered \([^)]*\)(; )?)+ \(compared",
        ),
        Gap(
            ("TC802",),
            ("stops.yaml#*",),
            "provider-native tool definitions (AdapterOptions.provider_tools, e.g. `web_search_20250305`) are "
            "not bound by this bridge (a WARN line says so)",
            when=r"^/tools: missing from rendered",
        ),
        Gap(
            ("TC802",),
            ("image.yaml#4",),
            "an image inside a tool_result: the canonical -> LangChain mapping writes a ToolMessage's text only "
            "(the image is dropped with a WARN line)",
        ),
        Gap(
            ("TC802",),
            ("thinking.yaml#4",),
            "`redacted_thinking`: the canonical -> LangChain mapping has no form for it (dropped with a WARN line)",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "`redacted_thinking`: the canonical -> LangChain mapping has no form for it (dropped with a WARN line), "
            "so the turn's later blocks shift",
            when=r'/messages/\d+/content/\d+/type: recorded "redacted_thinking", rendered',
        ),
        Gap(
            ("TC802",),
            ("*",),
            "provider-native (server) tool definitions (a dated `type`, e.g. `web_search_20250305`, "
            "`code_execution_20260120`) are not bound by this bridge (a WARN line says so)",
            when=r'^(/tool_choice: only in rendered \(\{"type": "auto"\}\); )?/tools: missing from rendered '
            r'\(recorded \[\{[^}]*"type": "[a-z_]+_\d{8}',
        ),
        Gap(
            ("TC802",),
            ("*document*",),
            "a block canonical keeps as a namespaced block (§10.3: Anthropic's `document`, its `raw` for the "
            "reference adapter only) has no form in the canonical -> LangChain mapping, so it is not sent",
            when=r"^/messages/\d+/content: \d+ items recorded, \d+ rendered \(compared",
        ),
    )
    cassette_folders = ("anthropic",)
    provider_tool_id: ClassVar[re.Pattern[str]] = AnthropicAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = {**AnthropicAdapter.capabilities, **NOT_BRIDGED}

    def make_model(self, name: str, settings: dict[str, Any]) -> BaseChatModel:
        import anthropic  # function-level: the SDK of this bridge only
        from langchain_anthropic import ChatAnthropic  # function-level: only this bridge needs it

        streaming = bool(settings.pop("streaming", False))
        settings = _fields_first(ChatAnthropic, settings)
        model = ChatAnthropic(model=name, api_key=SecretStr(OFFLINE_KEY), streaming=streaming, **settings)  # type: ignore[call-arg]
        route_chat_anthropic_through(model, anthropic.AsyncClient, self.transport.client())
        return model


class OpenAIChatBridge(LangChainBridge):
    """langchain-openai's `ChatOpenAI` (Chat Completions)."""

    name: ClassVar[str] = "langchain:openai-chat"
    provider: ClassVar[str] = "openai"
    wire_api: ClassVar[str] = "openai-chat-completions"
    reference_class = OpenAIChatAdapter
    stop_key = "finish_reason"
    bridge_gaps: ClassVar[tuple[Gap, ...]] = (
        Gap(
            ("TC802",),
            ("image.yaml#*",),
            "`image_url.detail`: the canonical -> LangChain mapping carries no image detail",
            when=r"^(/messages/\d+/content/\d+/image_url/detail: missing from rendered \([^)]*\)(; )?)+ \(compared",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "`function.strict`: the recording's value lives only in the reference adapter's provider_raw "
            "(`tool_extras`), which another adapter must not read (§6.5); canonical ToolDefinition has no field",
            when=r"^(/tools/\d+/function/strict: missing from rendered \(recorded true\)(; )?)+ \(compared",
        ),
    )
    cassette_folders = ("openai-chat",)
    provider_tool_id: ClassVar[re.Pattern[str]] = OpenAIChatAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = {**OpenAIChatAdapter.capabilities, **NOT_BRIDGED}

    def make_model(self, name: str, settings: dict[str, Any]) -> BaseChatModel:
        from langchain_openai import ChatOpenAI  # function-level: only this bridge needs it

        streaming = bool(settings.pop("streaming", False))
        settings = _fields_first(ChatOpenAI, settings)
        return ChatOpenAI(
            model=name,
            api_key=SecretStr(OFFLINE_KEY),
            streaming=streaming,
            stream_usage=True,
            http_async_client=self.transport.client(),
            **settings,
        )


BRIDGES: dict[str, type[LangChainBridge]] = {
    "anthropic": AnthropicBridge,
    "openai-chat": OpenAIChatBridge,
}
"""`langchain:<api>` -> its bridge class (`adapters.registry` resolves the names)."""
