"""pydantic-ai's model classes as turnspec adapters (`turnspec conform pydantic-ai:<api>`).

Each bridge runs one of pydantic-ai's own `Model` classes through `pydantic_ai.direct`
(the documented "Direct Model Requests" API: `model_request`, `model_request_stream`)
on a provider whose httpx client is the kit's `CaptureTransport` (dummy key, no network):

| bridge | pydantic-ai model | provider | turnspec wire API |
|---|---|---|---|
| `pydantic-ai:anthropic` | `AnthropicModel` | `AnthropicProvider` | anthropic-messages |
| `pydantic-ai:openai-chat` | `OpenAIChatModel` | `OpenAIProvider` | openai-chat-completions |
| `pydantic-ai:openai-responses` | `OpenAIResponsesModel` | `OpenAIProvider` | openai-responses |
| `pydantic-ai:gemini` | `GoogleModel` | `GoogleProvider` | gemini-generate-content |

Canonical messages become pydantic-ai `ModelMessage`s through the `pydantic-ai` peer
format's mapping (`formats.pydantic_ai.mapping`), plus what that file format leaves out
and a live request needs: tool ids through the session's §6.2 map, and redacted thinking
as the `ThinkingPart(id="redacted_thinking", signature=data)` pydantic-ai reads it as.

What pydantic-ai does not do at all is delegated to turnspec's reference adapter of the
same wire API, and said so (`Gap`): reading a request body back (`from_wire_request`),
the pre-flight token estimate, and classifying HTTP errors by the contract's §6.2 table
(pydantic-ai raises `ModelHTTPError` with the status and body; the class is turnspec's
reading of them).
"""

from __future__ import annotations

import base64
import importlib.metadata
import json
import re
import warnings
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx2
from pydantic_ai.direct import model_request, model_request_stream
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelResponse,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ThinkingPart,
    ThinkingPartDelta,
    ToolCallPart,
    ToolCallPartDelta,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition as PaiToolDefinition

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
from ..adapters.gemini import GeminiAdapter
from ..adapters.openai_chat import OpenAIChatAdapter
from ..adapters.openai_responses import OpenAIResponsesAdapter
from ..adapters.streams import json_array_events
from ..adapters.toolids import ToolIdMap
from ..core.convertkit import IdMint
from ..formats.canonical.status import status_of_stop
from ..formats.pydantic_ai.mapping import Session, from_pydantic_ai, to_pydantic_ai
from ..wire import registry as wire_registry
from ..wire.equivalence import decode_base64
from ..wire.gemini import PROMPT_BLOCKED
from .kit import (
    NOT_BRIDGED,
    Canned,
    Captured,
    CaptureTransport,
    Gap,
    ReferenceBridge,
    parse_failure,
    run_sync,
    wire_headers,
)

LIBRARY = "pydantic-ai-slim"
REDACTED_ID = "redacted_thinking"  # pydantic-ai's ThinkingPart.id for Anthropic's redacted thinking
_SENTINEL = "\x00turnspec-redacted:"
_BLOCK_LOSS = re.compile(r"^/content/(\d+)(?:/content/(\d+))?$")
_SETTING = re.compile(r"The `(\w+)` setting is not supported")
_SAMPLING = re.compile(r"Sampling parameters \[([^\]]*)\] are not supported")
_OPTION = {"max_tokens": "max_output_tokens"}  # pydantic-ai setting -> AdapterOptions field
# pydantic-ai FinishReason -> canonical stop_reason, when the raw provider value is not kept
_FINISH = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_call": "tool_use",
    "content_filter": "end_turn",
    "error": "error",
}


def library_version() -> str:
    """The installed pydantic-ai version the bridges run (the docs table names it)."""
    return importlib.metadata.version(LIBRARY)


# -- canonical -> pydantic-ai ---------------------------------------------------------------


def _prepare(messages: list[Message], ids: ToolIdMap) -> list[Message]:
    """Copies of `messages` with provider tool ids and redacted thinking as a sentinel
    thinking block the mapping carries (restored as pydantic-ai's redacted form after)."""
    out = []
    for m in messages:
        content: list[Block] = []
        for b in m.get("content") or []:
            t = b.get("type")
            if t == "tool_use":
                b = {**b, "id": ids.provider_for(b["id"])}
            elif t == "tool_result":
                b = {**b, "tool_use_id": ids.provider_for(b["tool_use_id"])}
            elif t == "redacted_thinking" and m.get("role") == "assistant" and _issuer(m) == "anthropic":
                # pydantic-ai's only redacted form is Anthropic's; others are dropped by the mapping (WARN)
                b = {"type": "thinking", "text": _SENTINEL + str(b.get("data", "")), "signature": b.get("data")}
            content.append(b)
        out.append({**m, "content": content})
    return out


def _issuer(message: Message) -> str | None:
    provider = (message.get("metadata") or {}).get("provider")
    return provider if isinstance(provider, str) else None


def _restore_redacted(history: list[dict[str, Any]]) -> None:
    for msg in history:
        for part in msg.get("parts", []):
            text = part.get("content")
            if part.get("part_kind") == "thinking" and isinstance(text, str) and text.startswith(_SENTINEL):
                part["content"] = ""
                part["id"] = REDACTED_ID


# -- pydantic-ai -> canonical ---------------------------------------------------------------


def _response_json(response: ModelResponse) -> dict[str, Any]:
    dumped: list[dict[str, Any]] = ModelMessagesTypeAdapter.dump_python([response], mode="json")
    return dumped[0]


NAMESPACED_BLOCK_GAP = Gap(
    ("TC802",),
    ("*document*", "*url_input*"),
    "a block canonical keeps as a namespaced block (§10.3: Anthropic's `document`, Gemini's `fileData`, its "
    "`raw` for the reference adapter only) has no form in the canonical -> ModelMessage mapping, so it is not sent",
    when=r"^/(messages|contents)/\d+/(content|parts): \d+ items recorded, \d+ rendered \(compared",
)


def _standard_base64_signatures(history: list[dict[str, Any]]) -> None:
    """Each thinking part's signature re-spelled as pydantic-ai spells the ones it reads
    (`base64.b64encode` of the bytes): a signature Gemini sent in the URL-safe alphabet or
    unpadded is the same bytes (proto3 JSON, GEMINI_BASE64), but GoogleModel decodes it with
    `base64.b64decode`, which fails on it or, dropping `-` and `_`, yields other bytes."""
    for msg in history:
        for part in msg.get("parts", []):
            sig = part.get("signature") if part.get("part_kind") == "thinking" else None
            raw = decode_base64(sig) if isinstance(sig, str) else None
            if raw is not None:
                part["signature"] = base64.b64encode(raw).decode("ascii")


@dataclass
class _Parsed:
    content: list[Block]
    kept: list[int]  # the pydantic-ai part index of each canonical block
    wire_model: str | None
    usage: dict[str, int] | None
    raw_finish: str | None
    finish: str | None


def _finish_reason(resp: dict[str, Any]) -> str | None:
    details = resp.get("provider_details")
    if not isinstance(details, dict):
        return None
    raw = details.get("finish_reason")
    if raw is None and details.get("block_reason") is not None:
        return PROMPT_BLOCKED  # Gemini: the prompt was blocked and no candidates returned
    return raw if isinstance(raw, str) else None


def _flat(headers: Mapping[str, Any]) -> dict[str, str]:
    """Headers as one string each (vcrpy keeps a list per name)."""
    out: dict[str, str] = {}
    for k, v in headers.items():
        value = v[0] if isinstance(v, list | tuple) and v else v
        if isinstance(value, str | int | float):
            out[str(k).lower()] = str(value)
    return out


class PydanticAIBridge(ReferenceBridge):
    """A pydantic-ai `Model` class as a turnspec adapter (subclasses name the class)."""

    library_provider: ClassVar[str]  # pydantic-ai's name for the provider (ModelResponse.provider_name)
    # pydantic-ai keeps a signature as the standard padded base64 of its bytes, and decodes
    # it with `base64.b64decode` (no URL-safe alphabet) before sending it (GoogleModel)
    signatures_as_standard_base64: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()
        self.transport = CaptureTransport(httpx2)
        self._models: dict[str, Model] = {}

    def classify(self, exc: ModelHTTPError, headers: Mapping[str, str]) -> AdapterError:
        return self.reference.classify_error(exc.status_code, exc.body, headers)  # type: ignore[attr-defined, no-any-return]

    # the library's model ----------------------------------------------------------------

    def make_model(self, name: str, client: Any) -> Model:
        raise NotImplementedError

    def model(self, name: str) -> Model:
        found = self._models.get(name)
        if found is None:
            found = self._models[name] = self.make_model(name, self.transport.client())
        return found

    def _history(self, messages: list[Message]) -> list[Any]:
        sid = str(messages[0].get("session_id", "")) if messages else ""
        prepared = _prepare(messages, self.tool_id_map(sid))
        history, losses = to_pydantic_ai(prepared)
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
            self.drop(m, j, str(block.get("type", "unknown")), f"pydantic-ai: {loss.text}")
        _restore_redacted(history)
        self._library_names(history)
        if self.signatures_as_standard_base64:
            _standard_base64_signatures(history)
        return list(ModelMessagesTypeAdapter.validate_python(history))

    def _library_names(self, history: list[dict[str, Any]]) -> None:
        """The provider this bridge speaks for, under the name pydantic-ai gives it (`google`
        for canonical `gemini`): pydantic-ai sends thinking signatures back only to the
        provider it recorded, by its own name."""
        mine = self.library_provider
        if mine == self.provider:
            return
        for msg in history:
            if msg.get("provider_name") == self.provider:
                msg["provider_name"] = mine
            for part in msg.get("parts", []):
                if part.get("provider_name") == self.provider:
                    part["provider_name"] = mine

    def _settings(self, options: AdapterOptions) -> ModelSettings:
        settings: ModelSettings = {"max_retries": 0}
        if options.max_output_tokens is not None:
            settings["max_tokens"] = options.max_output_tokens
        if options.temperature is not None:
            settings["temperature"] = options.temperature
        if options.stop_sequences:
            settings["stop_sequences"] = list(options.stop_sequences)
        if options.extra:
            settings["extra_body"] = dict(options.extra)
        return settings

    @staticmethod
    def _params(tools: list[ToolDefinition]) -> ModelRequestParameters:
        return ModelRequestParameters(
            function_tools=[
                PaiToolDefinition(
                    name=t["name"],
                    parameters_json_schema=t.get("input_schema") or {"type": "object", "properties": {}},
                    description=t.get("description"),
                )
                for t in tools
            ]
        )

    def _relay(self, said: list[warnings.WarningMessage]) -> None:
        """pydantic-ai reports a setting it does not send as a Python warning; the contract's
        channel is the WARN log line (canonical §7.3), so each becomes `warn_option`."""
        for w in said:
            text = str(w.message)
            names = _SETTING.findall(text) or [
                n for group in _SAMPLING.findall(text) for n in re.findall(r"'(\w+)'", group)
            ]
            for name in names:
                self.warn_option(_OPTION.get(name, name), f"pydantic-ai: {text}")

    # canonical -> wire: the library builds the request ------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        history = self._history(messages)
        if options.output_schema is not None:
            self.warn_option(
                "output_schema", "the bridge does not ask pydantic-ai for structured output (declared false)"
            )
        self.note_url_images(messages)
        model = self.model(options.wire_model)
        settings, params = self._settings(options), self._params(tools)
        self.transport.reset()

        async def call() -> None:
            if options.stream:
                async with model_request_stream(
                    model, history, model_settings=settings, model_request_parameters=params
                ) as stream:
                    async for _ in stream:
                        pass
            else:
                await model_request(model, history, model_settings=settings, model_request_parameters=params)

        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always")
                run_sync(call)
        except Captured:
            pass
        except Exception as exc:
            if not self.transport.requests:
                raise AdapterError(f"pydantic-ai built no request: {type(exc).__name__}: {exc}") from exc
        if not self.transport.requests:
            raise AdapterError("pydantic-ai sent no request")
        self._relay(said)
        sent = self.transport.requests[0]
        return WireRequest(sent.method, sent.path, wire_headers(sent, self.wire_api), sent.body)

    # wire -> canonical: the library parses the recorded body ---------------------------

    def _probe(self) -> tuple[Model, list[Any]]:
        history = ModelMessagesTypeAdapter.validate_python(
            [{"kind": "request", "parts": [{"part_kind": "user-prompt", "content": "turnspec replay"}]}]
        )
        return self.model("turnspec-replay"), list(history)

    def _parse(self, response: ModelResponse, sid: str) -> _Parsed:
        resp = _response_json(response)
        ids = self.tool_id_map(sid)
        redacted: dict[str, str] = {}
        kinds = ("text", "thinking", "tool-call")
        kept = [i for i, p in enumerate(resp["parts"]) if p.get("part_kind") in kinds]
        for p in resp["parts"]:
            if p.get("part_kind") == "tool-call":
                p["tool_call_id"] = ids.canonical_for(str(p["tool_call_id"]))
            elif p.get("part_kind") == "thinking" and p.get("id") == REDACTED_ID:
                key = _SENTINEL + new_ulid()
                redacted[key] = str(p.get("signature") or "")
                p.update({"part_kind": "text", "content": key})
        content: list[Block] = []
        if kept:
            canon, _, _ = from_pydantic_ai([resp], sid, Session(IdMint(sid), 0))
            for b in canon[0]["content"]:
                if b.get("type") == "text" and b["text"] in redacted:
                    b = {"type": "redacted_thinking", "data": redacted[b["text"]]}
                content.append(b)
        usage = None
        u = resp.get("usage")
        if isinstance(u, dict) and (u.get("input_tokens") or u.get("output_tokens")):
            cached, written = int(u.get("cache_read_tokens") or 0), int(u.get("cache_write_tokens") or 0)
            total = int(u.get("input_tokens") or 0)
            usage = {
                # pydantic-ai's input_tokens counts cache reads and writes in (RequestUsage docs);
                # the APIs whose input count does not, get it back without them
                "input_tokens": total if self.input_counts_cache else max(total - cached - written, 0),
                "output_tokens": int(u.get("output_tokens") or 0),
                "cached_input_tokens": int(u.get("cache_read_tokens") or 0),
                "cache_creation_input_tokens": int(u.get("cache_write_tokens") or 0),
            }
        name = resp.get("model_name")
        return _Parsed(
            content, kept, name if isinstance(name, str) else None, usage, _finish_reason(resp), response.finish_reason
        )

    def stop_reason(self, parsed: _Parsed) -> str:
        # the raw provider value when the record maps it to more than end_turn (stop_sequence,
        # refusal...), else pydantic-ai's own reading (a Responses turn that "completed" with
        # a function call is pydantic-ai's tool_call)
        table = wire_registry.get(self.wire_api).stop_reasons
        raw = table.get(parsed.raw_finish) if parsed.raw_finish is not None else None
        if raw is not None and raw != "end_turn":
            return raw
        return _FINISH.get(parsed.finish or "", raw or "end_turn")

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body if isinstance(resp.body, bytes) else json.dumps(resp.body).encode()
        headers = {"content-type": "application/json", **_flat(resp.headers)}
        model, history = self._probe()
        self.transport.reset([Canned(body, resp.status, headers)])
        try:
            result = run_sync(lambda: model_request(model, history, model_settings={"max_retries": 0}))
        except ModelHTTPError as exc:
            # pydantic-ai keeps part of the body (the `error` object for OpenAI): classify the recording's
            raise self.reference.classify_error(exc.status_code, resp.body, headers) from None  # type: ignore[attr-defined]
        except AdapterError:
            raise
        except Exception as exc:
            if resp.status >= 400:
                raise self.reference.classify_error(resp.status, resp.body, headers) from None  # type: ignore[attr-defined]
            raise parse_failure("pydantic-ai", "response", exc) from None
        parsed = self._parse(result, request_context.session_id)
        status = status_of_stop(self.stop_reason(parsed))
        return self.assemble(
            request_context, parsed.content, wire_model=parsed.wire_model, token_usage=parsed.usage, status=status
        )

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        data = b"".join(c.encode("utf-8", "surrogatepass") if isinstance(c, str) else bytes(c) for c in chunks)
        return self._stream(data, context)

    def sse(self, data: bytes) -> bytes:
        """The recorded stream as the SSE the library asked for (`alt=sse`): a body recorded
        in another framing (Gemini's JSON array) is re-framed event by event, each event's
        JSON unchanged; SSE and unknown bodies go through as recorded."""
        framing = wire_registry.detect_framing(data)
        if framing is not None or not data.lstrip().startswith(b"["):
            return data
        try:
            events = list(json_array_events([data]))
        except WireFormatError:
            return data  # the library reports what it makes of the bytes
        return b"".join(b"data: " + json.dumps(e.value).encode() + b"\r\n\r\n" for e in events)

    def _stream(self, data: bytes, ctx: RequestContext) -> Iterator[StreamEvent]:
        model, history = self._probe()
        self.transport.reset([Canned(self.sse(data), 200, {"content-type": "text/event-stream"})])
        events: list[Any] = []
        final: list[ModelResponse] = []

        async def collect() -> None:
            async with model_request_stream(model, history, model_settings={"max_retries": 0}) as stream:
                it: AsyncIterator[Any] = stream.__aiter__()
                try:
                    async for ev in it:
                        events.append(ev)
                finally:
                    final.append(stream.get())  # what was parsed before a failure too

        failure: Exception | None = None
        try:
            run_sync(collect)
        except ModelHTTPError as exc:
            failure = self.classify(exc, {})
        except Exception as exc:
            failure = parse_failure("pydantic-ai", "stream", exc)
        mid = ctx.message_id or new_ulid()
        parsed = self._parse(final[0], ctx.session_id) if final else None
        model_name = parsed.wire_model if parsed and parsed.wire_model else "unknown"
        yield {
            "type": "message_start",
            "message_id": mid,
            "role": "assistant",
            "model": f"{self.provider}:{model_name}",
        }
        index_of = {p: i for i, p in enumerate(parsed.kept)} if parsed else {}
        content = parsed.content if parsed else []
        if parsed is not None and not content:
            content = [{"type": "text", "text": ""}]  # as `assemble` writes an empty reply (spec §5.1.1)
        tool_ids: dict[int, str] = {}
        closed = 0  # blocks before this index are closed (signature sent, tool call ended)

        def close(upto: int) -> Iterator[StreamEvent]:
            nonlocal closed
            for ci in range(closed, upto):
                block = content[ci]
                if block.get("type") == "thinking" and block.get("signature"):
                    yield {
                        "type": "thinking_delta", "message_id": mid, "content_block_index": ci, "text": "",
                        "signature": str(block["signature"]),
                    }  # fmt: skip
                elif block.get("type") == "tool_use":
                    if ci not in tool_ids:
                        yield from start_tool(ci, block, None)
                    yield {
                        "type": "tool_use_end", "message_id": mid, "content_block_index": ci,
                        "tool_use_id": block["id"], "final_input": block["input"],
                    }  # fmt: skip
            closed = max(closed, upto)

        def start_tool(ci: int, block: Block, args: Any) -> Iterator[StreamEvent]:
            tool_ids[ci] = block["id"]
            yield {
                "type": "tool_use_start", "message_id": mid, "content_block_index": ci,
                "tool_use_id": block["id"], "tool_name": block["name"],
            }  # fmt: skip
            if args:
                yield {
                    "type": "tool_use_input_delta", "message_id": mid, "content_block_index": ci,
                    "tool_use_id": block["id"], "partial_json": args if isinstance(args, str) else json.dumps(args),
                }  # fmt: skip

        for ev in events:
            ci = index_of.get(ev.index) if isinstance(ev, PartStartEvent | PartDeltaEvent) else None
            if ci is None or ci >= len(content):
                continue
            yield from close(ci)
            block = content[ci]
            if isinstance(ev, PartStartEvent):
                part = ev.part
                if isinstance(part, TextPart) and part.content:
                    yield {"type": "text_delta", "message_id": mid, "content_block_index": ci, "text": part.content}
                elif isinstance(part, ThinkingPart) and block.get("type") == "thinking" and part.content:
                    yield {"type": "thinking_delta", "message_id": mid, "content_block_index": ci, "text": part.content}
                elif isinstance(part, ToolCallPart) and block.get("type") == "tool_use" and ci not in tool_ids:
                    yield from start_tool(ci, block, part.args)
                continue
            delta = ev.delta
            if isinstance(delta, TextPartDelta) and delta.content_delta:
                yield {"type": "text_delta", "message_id": mid, "content_block_index": ci, "text": delta.content_delta}
            elif isinstance(delta, ThinkingPartDelta) and block.get("type") == "thinking" and delta.content_delta:
                yield {
                    "type": "thinking_delta",
                    "message_id": mid,
                    "content_block_index": ci,
                    "text": delta.content_delta,
                }
            elif isinstance(delta, ToolCallPartDelta) and ci in tool_ids and delta.args_delta:
                args_delta = delta.args_delta
                yield {
                    "type": "tool_use_input_delta", "message_id": mid, "content_block_index": ci,
                    "tool_use_id": tool_ids[ci],
                    "partial_json": args_delta if isinstance(args_delta, str) else json.dumps(args_delta),
                }  # fmt: skip
        yield from close(len(content))
        yield {
            "type": "message_complete",
            "message_id": mid,
            "stop_reason": "error" if failure is not None or parsed is None else self.stop_reason(parsed),
            "final_content": content,
            "usage": parsed.usage if parsed else None,
        }
        if failure is not None:
            raise failure


# -- the four bridges -------------------------------------------------------------------------


class AnthropicBridge(PydanticAIBridge):
    """pydantic-ai's `AnthropicModel` (Messages API)."""

    name: ClassVar[str] = "pydantic-ai:anthropic"
    provider: ClassVar[str] = "anthropic"
    wire_api: ClassVar[str] = "anthropic-messages"
    reference_class = AnthropicAdapter
    library_provider = "anthropic"
    input_counts_cache = False  # Messages `usage.input_tokens` excludes cache reads and writes
    bridge_gaps = (
        Gap(
            ("TC802",),
            ("cache.yaml#*",),
            "`cache_control` on system blocks has no ModelMessage field (SystemPromptPart is text), and "
            "pydantic-ai sends the system prompts as one string",
        ),
        Gap(
            ("TC802",),
            ("stops.yaml#*",),
            "provider-native tool definitions (AdapterOptions.provider_tools, e.g. `web_search_20250305`) are "
            "not mapped to pydantic-ai native tools by this bridge",
        ),
        Gap(
            ("TC802",),
            ("image.yaml#4",),
            "an image inside a tool_result: the canonical -> ModelMessage mapping carries tool returns as text only",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "provider-native (server) tool definitions (a dated `type`, e.g. `web_search_20250305`, "
            "`code_execution_20260120`) are not mapped to pydantic-ai native tools by this bridge",
            when=r'^(/tool_choice: only in rendered \(\{"type": "auto"\}\); )?/tools: missing from rendered '
            r'\(recorded \[\{[^}]*"type": "[a-z_]+_\d{8}',
        ),
        NAMESPACED_BLOCK_GAP,
    )
    cassette_folders = ("anthropic",)
    provider_tool_id: ClassVar[re.Pattern[str]] = AnthropicAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = {
        **AnthropicAdapter.capabilities,
        **NOT_BRIDGED,
    }

    def make_model(self, name: str, client: Any) -> Model:
        from pydantic_ai.models.anthropic import AnthropicModel  # function-level: only this bridge needs it
        from pydantic_ai.providers.anthropic import AnthropicProvider  # function-level: as above

        return AnthropicModel(name, provider=AnthropicProvider(api_key="turnspec-offline", http_client=client))


class OpenAIChatBridge(PydanticAIBridge):
    """pydantic-ai's `OpenAIChatModel` (Chat Completions)."""

    name: ClassVar[str] = "pydantic-ai:openai-chat"
    provider: ClassVar[str] = "openai"
    wire_api: ClassVar[str] = "openai-chat-completions"
    reference_class = OpenAIChatAdapter
    library_provider = "openai"
    tool_errors_in_band = 'the result text as the JSON object {"error": <text>} (pydantic-ai\'s RetryPromptPart)'
    bridge_gaps = (
        Gap(
            ("TC802",),
            ("cache.yaml#*", "text.yaml#*"),
            "the `developer` role: a ModelMessage has only system prompts, and pydantic-ai picks the role "
            "from its model profile",
        ),
        Gap(
            ("TC802",),
            ("image.yaml#*",),
            "`image_url.detail`: the canonical -> ModelMessage mapping carries no image detail",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "pydantic-ai rewrites a tool's JSON schema for OpenAI models (`additionalProperties: false`) and marks "
            "a schema that strict mode takes `strict: true`, and no setting sends the schema as given",
            when=r"^((/tools/\d+/function/parameters/additionalProperties: only in rendered \(false\)"
            r"|/tools/\d+/function/strict: only in rendered \(true\))(; )?)+ \(compared",
        ),
        Gap(
            ("TC905",),
            ("stream with other stream options",),
            "AdapterOptions.extra reaches pydantic-ai only as `extra_body`, which the OpenAI SDK merges over the "
            "body, replacing the library's own `stream_options`",
        ),
    )
    cassette_folders = ("openai-chat",)
    provider_tool_id: ClassVar[re.Pattern[str]] = OpenAIChatAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = {
        **OpenAIChatAdapter.capabilities,
        **NOT_BRIDGED,
    }

    def make_model(self, name: str, client: Any) -> Model:
        from pydantic_ai.models.openai import OpenAIChatModel  # function-level: only this bridge needs it
        from pydantic_ai.providers.openai import OpenAIProvider  # function-level: as above

        return OpenAIChatModel(name, provider=OpenAIProvider(api_key="turnspec-offline", http_client=client))


class OpenAIResponsesBridge(PydanticAIBridge):
    """pydantic-ai's `OpenAIResponsesModel` (Responses API)."""

    name: ClassVar[str] = "pydantic-ai:openai-responses"
    provider: ClassVar[str] = "openai"
    wire_api: ClassVar[str] = "openai-responses"
    reference_class = OpenAIResponsesAdapter
    library_provider = "openai"
    tool_errors_in_band = 'the output text as the JSON object {"error": <text>} (pydantic-ai\'s RetryPromptPart)'
    bridge_gaps = (
        Gap(
            ("TC802",),
            ("*",),
            "pydantic-ai asks for `include: [reasoning.encrypted_content]` for every model whose profile supports "
            "encrypted reasoning, and no setting leaves it out",
            when=r'^/include: only in rendered \(\["reasoning\.encrypted_content"\]\) \(compared',
        ),
        Gap(
            ("TC802",),
            ("image.yaml#*",),
            "`detail`: the canonical -> ModelMessage mapping carries no image detail (pydantic-ai then sends `auto`)",
            when=r'^/input/\d+/content/\d+/detail: recorded "\w+", rendered "auto" \(compared',
        ),
        Gap(
            ("TC802", "TC405"),
            ("reasoning.yaml#*", "*→pydantic-ai:openai-responses"),
            "a reasoning item's `id` (rs_...) has no field in canonical thinking (only the reference adapter's "
            "provider_raw, which another adapter must not read, §6.5), and pydantic-ai sends encrypted reasoning "
            "back only under its id",
        ),
        Gap(
            ("TC802",),
            ("text.yaml#2", "text.yaml#3"),
            "the `developer` role has no ModelMessage form (system prompts only; pydantic-ai picks the role from "
            "its model profile), and pydantic-ai leaves out sampling parameters for a model its profile marks as "
            "reasoning (it warns, relayed as a WARN line)",
        ),
        Gap(
            ("TC802",),
            ("refusal.yaml#2",),
            "a replayed assistant `refusal` content part and the message item's `id` and `status`: canonical has "
            "no refusal block (a refusal is the reply's text, contract §3.3) and no message item id",
        ),
        Gap(
            ("TC802",),
            ("tools.yaml#*",),
            "a function_call item's own `id` (fc_...) and `status` have no field in canonical tool_use",
            when=r"^/input/\d+/id: missing from rendered",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "a function_call item's own `id` (fc_...) has no field in canonical tool_use",
            when=r'^(/input/\d+/id: missing from rendered \(recorded "fc_[^"]*"\)(; )?)+ \(compared',
        ),
        Gap(
            ("TC802",),
            ("*",),
            "pydantic-ai rewrites a tool's JSON schema for OpenAI models (`additionalProperties: false`) and marks "
            "a schema that strict mode takes `strict: true`, and no setting sends the schema as given",
            when=r"^((/tools/\d+/parameters/additionalProperties: only in rendered \(false\)"
            r"|/tools/\d+/strict: only in rendered \(true\))(; )?)+ \(compared",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "a reasoning item's `id` (rs_...) has no field in canonical thinking (only the reference adapter's "
            "provider_raw, which another adapter must not read, §6.5), and pydantic-ai sends encrypted reasoning "
            "back only under its id (else as `<think>` text in an assistant message)",
            when=r'^/input/\d+/(content: only in rendered \("<think>|encrypted_content: missing from rendered'
            r'|id: missing from rendered \(recorded "rs_|role: only in rendered \("assistant"\)'
            r'|summary: missing from rendered|type: recorded "reasoning", rendered)',
        ),
        Gap(
            ("TC802",),
            ("*",),
            "provider-native (hosted) tool definitions (e.g. `web_search`) are not mapped to pydantic-ai native "
            "tools by this bridge",
            when=r'^(/tool_choice: only in rendered \("auto"\); )?/tools: missing from rendered '
            r'\(recorded \[\{[^}]*"type": "(web_search|file_search|code_interpreter|image_generation)',
        ),
        Gap(
            ("TC802",),
            ("*web_search*",),
            "a hosted tool's output item (`web_search_call`) is a namespaced block in canonical (§10.3, its `raw` "
            "for the reference adapter only), which the canonical -> ModelMessage mapping does not send",
            when=r"^/input: \d+ items recorded, \d+ rendered \(compared",
        ),
    )
    cassette_folders = ("openai-responses",)
    provider_tool_id: ClassVar[re.Pattern[str]] = OpenAIResponsesAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = {
        **OpenAIResponsesAdapter.capabilities,
        **NOT_BRIDGED,
        "supports_system_messages_in_list": True,  # pydantic-ai sends `role: system` input items
    }

    def make_model(self, name: str, client: Any) -> Model:
        from pydantic_ai.models.openai import OpenAIResponsesModel  # function-level: only this bridge needs it
        from pydantic_ai.providers.openai import OpenAIProvider  # function-level: as above

        return OpenAIResponsesModel(name, provider=OpenAIProvider(api_key="turnspec-offline", http_client=client))


class GeminiBridge(PydanticAIBridge):
    """pydantic-ai's `GoogleModel` (Gemini API `generateContent`)."""

    signatures_as_standard_base64 = True

    name: ClassVar[str] = "pydantic-ai:gemini"
    provider: ClassVar[str] = "gemini"
    wire_api: ClassVar[str] = "gemini-generate-content"
    reference_class = GeminiAdapter
    bridge_gaps = (
        Gap(
            ("TC802",),
            ("cached.yaml#*",),
            "`cachedContent`: a ModelMessage has no cached-content reference (prompt caching is declared false)",
            when=r"^/cachedContent: missing from rendered",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "pydantic-ai sends `toolConfig.functionCallingConfig.mode` with every function tool (`AUTO`, or "
            "`VALIDATED` where the model's profile supports strict tool definitions: GoogleModel's "
            "`_function_calling_config`), and no setting leaves it out",
            when=r'^/toolConfig: only in rendered \(\{"functionCallingConfig": \{"mode": "(?:AUTO|VALIDATED)"\}\}\) \(compared',
        ),
        Gap(
            ("TC802",),
            ("thinking.yaml#*",),
            "AdapterOptions.extra (here `generationConfig.thinkingConfig`): GoogleModel takes no `extra_body` "
            "(pydantic-ai warns; relayed as a WARN line)",
            when=r"^/generationConfig: missing from rendered",
        ),
        Gap(
            ("TC802",),
            ("tools.yaml#*",),
            "AdapterOptions.extra (here `toolConfig`, forcing a call): GoogleModel takes no `extra_body` "
            "(pydantic-ai warns; relayed as a WARN line) and sends its own mode",
            when=r'^/toolConfig/functionCallingConfig/mode: recorded "\w+", rendered "(?:AUTO|VALIDATED)" \(compared',
        ),
        Gap(
            ("TC802",),
            ("*",),
            "AdapterOptions.extra (`generationConfig.thinkingConfig`, `safetySettings`, a `toolConfig` forcing or "
            "naming calls): GoogleModel takes no `extra_body` (pydantic-ai warns; relayed as a WARN line) and sends "
            "its own function-calling mode",
            when=r'^(/generationConfig: missing from rendered \(recorded \{"thinkingConfig": [^;]*\)'
            r"|/safetySettings: missing from rendered \(recorded [^;]*\)"
            r'|/toolConfig/functionCallingConfig/mode: recorded "\w+", rendered "(?:AUTO|VALIDATED)"'
            r"|/toolConfig/functionCallingConfig/allowedFunctionNames: missing from rendered \([^;]*\)) \(compared",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "canonical ToolDefinition has one input_schema: GoogleModel sends it as `parametersJsonSchema`, and "
            "leaves out the schema of a tool taking no arguments, where a recording had `parameters` (Gemini's "
            "OpenAPI Schema subset)",
            when=r'^(/tools/\d+/functionDeclarations/\d+/parameters: missing from rendered \(recorded \{"properties"'
            r'|/tools/\d+/functionDeclarations/\d+/parametersJsonSchema: only in rendered \(\{"properties")'
            r"[^;]* \(compared",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "provider-native tool definitions (`googleSearch`, `codeExecution`, `urlContext`) are not mapped to "
            "pydantic-ai native tools by this bridge",
            when=r'^/tools: missing from rendered \(recorded \[\{"(googleSearch|codeExecution|urlContext)"',
        ),
        NAMESPACED_BLOCK_GAP,
        Gap(
            ("TC405",),
            ("*",),
            "Gemini's thoughtSignature on a text or functionCall part: pydantic-ai keeps it in the part's "
            "provider_details, which the canonical -> ModelMessage mapping does not carry (thinking parts only)",
        ),
        Gap(
            ("TC802",),
            ("*",),
            "Gemini issued no call ids; pydantic-ai gives every functionCall and functionResponse one (the "
            "API's `id` is optional), so a recording without ids renders with them",
            when=r"^(/contents/\d+/parts/\d+/(functionCall|functionResponse)/id: only in rendered \([^)]*\)(; )?)+ "
            r"\(compared",
        ),
        Gap(
            ("TC901",),
            ("images",),
            "GoogleModel downloads an image URL to inline it; a bridge runs offline, so the URL case cannot render",
            when=r"NetworkBlockedError",
        ),
    )
    library_provider = "google"
    cassette_folders = ("gemini",)
    provider_tool_id: ClassVar[re.Pattern[str]] = GeminiAdapter.provider_tool_id
    capabilities: ClassVar[Mapping[str, Any]] = {
        **GeminiAdapter.capabilities,
        **NOT_BRIDGED,
    }

    def make_model(self, name: str, client: Any) -> Model:
        from pydantic_ai.models.google import GoogleModel  # function-level: only this bridge needs it
        from pydantic_ai.providers.google import GoogleProvider  # function-level: as above

        return GoogleModel(name, provider=GoogleProvider(api_key="turnspec-offline", http_client=client))


BRIDGES: dict[str, type[PydanticAIBridge]] = {
    "anthropic": AnthropicBridge,
    "openai-chat": OpenAIChatBridge,
    "openai-responses": OpenAIResponsesBridge,
    "gemini": GeminiBridge,
}
"""`pydantic-ai:<api>` -> its bridge class (`adapters.registry` resolves the names)."""
