"""Mutant adapters: a reference adapter with one planted bug each, and the rule that must catch it.

tests/test_mutants.py runs the whole suite on every mutant and requires the expected rule
to fail (kill rate 100%), while the unmutated reference adapters pass everything.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

from third_party.cohere_adapter import CohereAdapter
from third_party.equivalent_forms import EmptyContentChatAdapter, UrlSafeGeminiAdapter
from third_party.minting_gemini import MintingGeminiAdapter
from ulid import ULID

from conformance.adapters import gemini as gemini_module
from conformance.adapters import openai_chat as openai_chat_module
from conformance.adapters import openai_responses as openai_responses_module
from conformance.adapters import openrouter as openrouter_module
from conformance.adapters import registry as adapter_registry
from conformance.adapters.anthropic import AnthropicAdapter
from conformance.adapters.base import (
    AdapterError,
    AdapterOptions,
    Block,
    Message,
    ParsedRequest,
    RateLimitError,
    RequestContext,
    ServerError,
    StreamEvent,
    ToolDefinition,
    ToolIdMap,
    WireBody,
    WireFormatError,
    WireRequest,
    WireResponse,
    new_tool_id,
    new_ulid,
)
from conformance.adapters.bedrock import BedrockAdapter
from conformance.adapters.bedrock_anthropic import BedrockAnthropicAdapter
from conformance.adapters.gemini import NO_ID, GeminiAdapter
from conformance.adapters.ollama import OllamaAdapter
from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.openai_responses import OpenAIResponsesAdapter
from conformance.adapters.openrouter import OpenRouterChatAdapter
from conformance.adapters.vertex_anthropic import VertexAnthropicAdapter


class SilentDrop(OpenAIChatAdapter):
    """Drops thinking without the WARN line (§7.3 forbids silent loss)."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        return None


class WarnMissingField(OpenAIChatAdapter):
    """The WARN line lacks message_id."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        self.log.warning(
            "dropped %s",
            block_type,
            extra={
                "event": "block_dropped",
                "session_id": message["session_id"],
                "block_type": block_type,
                "adapter": self.name,
                "reason": reason,
            },
        )


class ChatToolErrorInBandDeclaredButLost(OpenAIChatAdapter):
    """Declares `tool_errors_in_band` but renders an error result like any other and logs
    nothing: the error is silently lost (canonical spec §7.3)."""

    tool_errors_in_band = "text prefixed 'Error: '"

    def tool_to_wire_message(self, message: Message) -> list[Any]:
        plain = {**message, "content": [{**b, "is_error": False} for b in message.get("content", [])]}
        return super().tool_to_wire_message(plain)


class _SharedIdMap(ToolIdMap):
    def provider_for(self, canonical_id: str) -> str:
        self._to_provider[canonical_id] = "toolu_shared"
        self._to_canonical["toolu_shared"] = canonical_id
        return "toolu_shared"


class ReusedProviderId(AnthropicAdapter):
    """One provider id for every canonical id (the map is not injective)."""

    def tool_id_map(self, session_id: str) -> ToolIdMap:
        m = self._maps.get(session_id)
        if m is None:
            m = self._maps[session_id] = _SharedIdMap(self.provider, self.new_provider_tool_id)
        return m


class UnpairedAfterSwap(OpenAIChatAdapter):
    """Tool results get a fresh provider id instead of the one their call was sent with."""

    def tool_to_wire_message(self, message: Message) -> list[dict[str, Any]]:
        out = super().tool_to_wire_message(message)
        for m in out:
            m["tool_call_id"] = self.new_provider_tool_id()
        return out


class SystemLeftInMessages(AnthropicAdapter):
    """Leaves SYSTEM messages in `messages` instead of hoisting them."""

    def system_to_wire(self, messages: list[Message], options: Any) -> None:
        return None

    def messages_to_wire(self, messages: list[Message]) -> list[dict[str, Any]]:
        system = [
            {
                "role": "system",
                "content": [{"type": "text", "text": b["text"]} for b in m["content"]],
            }
            for m in messages
            if m["role"] == "system"
        ]
        return system + super().messages_to_wire(messages)


class ImagesDeclaredButDropped(AnthropicAdapter):
    """Declares supports_images but never sends an image."""

    def image_to_wire(self, message: Message, index: int, block: Block, extra: Mapping[str, Any]) -> None:
        return None


class StreamIndexBackwards(AnthropicAdapter):
    """Holds a thinking block's signature back and emits it at the end, at the old index."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        held: list[StreamEvent] = []
        for e in super().stream_response(chunks, context):
            if e["type"] == "thinking_delta" and e.get("signature"):
                held.append(e)
                continue
            if e["type"] == "message_complete":
                yield from held
            yield e


class ArgumentsNotStringified(OpenAIChatAdapter):
    """`function.arguments` sent as an object, not a JSON string."""

    def arguments(self, value: Mapping[str, Any]) -> Any:
        return dict(value)


class UsageMissing(AnthropicAdapter):
    """Parses responses without their token usage."""

    def usage_from_wire(self, usage: Any) -> None:
        return None


class ForeignSignatureSent(AnthropicAdapter):
    """Sends thinking signed by another provider back to Anthropic (a 400 in production)."""

    def foreign_reason(self, message: Message, what: str) -> None:
        return None


class RedactedDataAltered(AnthropicAdapter):
    """Restores redacted_thinking data with its whitespace trimmed and case changed."""

    def block_to_wire(self, message: Message, index: int, block: Block) -> Block | None:
        out = super().block_to_wire(message, index, block)
        if out is not None and out.get("type") == "redacted_thinking":
            out = {**out, "data": out["data"].strip().lower()}
        return out


class AnthropicSignatureLostOnParse(AnthropicAdapter):
    """Parses a thinking block without its `signature` (a whole response only: streams keep
    it), so the block the next turn sends back cannot be verified (a 400 in production)."""

    def block_from_wire(self, session_id: str, block: Any) -> tuple[Block | None, dict[str, Any]]:
        out, extra = super().block_from_wire(session_id, block)
        if out is not None and out.get("type") == "thinking":
            out = {**out, "signature": None}
        return out, extra


class CriticalIgnored(OpenAIChatAdapter):
    """Drops critical blocks like any other instead of failing the request."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        meta = dict(message.get("metadata") or {})
        meta.pop("critical", None)
        super().drop({**message, "metadata": meta}, index, block_type, reason)


class ProviderIdAsCanonical(OpenAIChatAdapter):
    """Keeps the provider's `call_...` id as the canonical tool id."""

    def tool_call_from_wire(self, session_id: str, call: Mapping[str, Any]) -> Block:
        block = super().tool_call_from_wire(session_id, call)
        return {**block, "id": str(call.get("id"))}


class StreamNoToolEnd(OpenAIChatAdapter):
    """Never emits tool_use_end."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return (e for e in super().stream_response(chunks, context) if e["type"] != "tool_use_end")


class FinalInputEmpty(AnthropicAdapter):
    """tool_use_end carries {} whatever the deltas spelled."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "final_input": {}} if e["type"] == "tool_use_end" else e


class ForgetsProviderIds(AnthropicAdapter):
    """Each call starts a new tool-id map, so ids parsed earlier are not restored."""

    def tool_id_map(self, session_id: str) -> ToolIdMap:
        return ToolIdMap(self.provider, self.new_provider_tool_id)


class ErrorsParsedAsMessages(OpenAIChatAdapter):
    """Treats an HTTP error body as an empty completion."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        if isinstance(response, WireResponse) and response.status >= 400:
            return self.assemble(request_context, [], wire_model=None, token_usage={})
        return super().from_wire_response(response, request_context)


class EstimateZero(OpenAIChatAdapter):
    """estimate_input_tokens always answers 0."""

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        return 0


class ThinkingLeakedAsText(OpenAIChatAdapter):
    """Logs the drop but sends the thinking text as assistant text (a partial block)."""

    def assistant_to_wire(self, message: Message) -> list[dict[str, Any]]:
        out = super().assistant_to_wire(message)
        thoughts = [b["text"] for b in message["content"] if b["type"] == "thinking"]
        if out and thoughts:
            out[0]["content"] = json.dumps(thoughts) + (out[0].get("content") or "")
        return out


class CapabilitiesIncomplete(OpenAIChatAdapter):
    """AdapterCapabilities without max_context_tokens."""

    capabilities: ClassVar[Mapping[str, Any]] = {
        k: v for k, v in OpenAIChatAdapter.capabilities.items() if k != "max_context_tokens"
    }


class RoundTripLosesOptions(AnthropicAdapter):
    """from_wire_request forgets provider-specific request fields (thinking, tool_choice...)."""

    def from_wire_request(self, body: dict[str, Any], *, session_id: str | None = None) -> Any:
        from dataclasses import replace

        parsed = super().from_wire_request(body, session_id=session_id)
        return replace(parsed, options=replace(parsed.options, extra={}))


class ChunkBoundaryBlind(OpenAIChatAdapter):
    """Parses each byte chunk as if it held whole SSE events."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        parts = [c.decode() if isinstance(c, bytes) else c for c in chunks]
        whole = [p for p in parts if p.endswith("\n\n")]
        return super().stream_response(whole, context)


class StreamUsageDropped(OpenAIChatAdapter):
    """message_complete carries no usage although the stream sent it."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "usage": None} if e["type"] == "message_complete" else e


# -- semantics the record's probes locate (TC901-TC904, TC501 by field) ------------------


class DataUrlReadBackAsUrl(OpenAIChatAdapter):
    """Reads a `data:` URL image back as a url-kind image (then sent on as a URL)."""

    def image_from_wire(self, image_url: Mapping[str, Any]) -> Block:
        url = str(image_url.get("url", ""))
        return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": "image/png"}


class ImageMediaTypeLost(AnthropicAdapter):
    """Sends every base64 image as image/jpeg, whatever its media type."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        req = super().to_wire(messages, tools, options)
        for m in req.body.get("messages", []):
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                src = b.get("source") if isinstance(b, dict) else None
                if isinstance(src, dict) and src.get("type") == "base64":
                    src["media_type"] = "image/jpeg"
        return req


class IsErrorDropped(AnthropicAdapter):
    """Forgets `is_error` when reading a tool result back."""

    def tool_result_from_wire(self, sid: str, block: Block) -> Message:
        msg = super().tool_result_from_wire(sid, block)
        msg["content"][0].pop("is_error", None)
        return msg


class IsErrorNotSent(AnthropicAdapter):
    """Never sets the wire's `is_error` flag."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        req = super().to_wire(messages, tools, options)
        for m in req.body.get("messages", []):
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if isinstance(b, dict):
                    b.pop("is_error", None)
        return req


class StopReasonAlwaysEndTurn(AnthropicAdapter):
    """Streams `end_turn` whatever the provider said (tool_use, max_tokens...)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "stop_reason": "end_turn"} if e["type"] == "message_complete" else e


class CachedTokensLost(OpenAIChatAdapter):
    """Ignores prompt_tokens_details.cached_tokens: cached tokens vanish from the usage
    (wrong under both readings TC904 accepts)."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        u = super().usage_from_wire(usage)
        if u is not None:
            u["cached_input_tokens"] = 0
        return u


class UsageReadingMixed(OpenAIResponsesAdapter):
    """Maps usage literally (input includes cached) in responses but disjointly in streams."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        m = super().from_wire_response(response, request_context)
        usage = (m.get("metadata") or {}).get("usage")
        if isinstance(usage, dict):
            usage["input_tokens"] += usage.get("cached_input_tokens", 0)
        return m


class LiteralContractUsage(OpenAIChatAdapter):
    """Not a defect: contract §7.2's literal mapping, `prompt_tokens` -> `input_tokens`
    (cached tokens stay inside it). TC904 must accept it (tests/test_mutants.py)."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        u = super().usage_from_wire(usage)
        if u is not None:
            u["input_tokens"] += u["cached_input_tokens"]
        return u


class OutputTokensOffByOne(AnthropicAdapter):
    """Reports one output token more than the provider counted."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        u = super().usage_from_wire(usage)
        if u is not None:
            u["output_tokens"] += 1
        return u


class SignatureInWrongField(AnthropicAdapter):
    """Sends the thinking signature inside a text block instead of the `signature` field
    (a marker search of the whole body passed this; the field probe does not)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        req = super().to_wire(messages, tools, options)
        for m in req.body.get("messages", []):
            content = m.get("content") if isinstance(m.get("content"), list) else []
            for b in list(content):
                if isinstance(b, dict) and b.get("type") == "thinking" and b.get("signature"):
                    content.append({"type": "text", "text": b["signature"]})
                    b["signature"] = "moved"
        return req


class StreamUsageNotRequested(OpenAIChatAdapter):
    """Streams without `stream_options.include_usage` (Chat Completions then sends no usage)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        req = super().to_wire(messages, tools, options)
        req.body.pop("stream_options", None)
        return req


class StreamErrorAsServerError(AnthropicAdapter):
    """Raises a ServerError for any mid-stream error (`overloaded_error` is a rate limit, contract §6.2)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        try:
            yield from super().stream_response(chunks, context)
        except AdapterError as exc:
            raise ServerError(str(exc), provider_status=exc.provider_status, retryable=True) from exc


class StreamErrorSwallowed(AnthropicAdapter):
    """Closes a failing stream with `message_complete(error)` and never raises (contract §6.5.3)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        try:
            yield from super().stream_response(chunks, context)
        except AdapterError:
            return


class UsageZeroWhenMissing(OpenAIChatAdapter):
    """A stream that carried no usage gets zero counts, silently (contract §7.2 allows an
    estimate with a WARN line, not invented numbers)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for ev in super().stream_response(chunks, replace(context, estimated_input_tokens=None)):
            if ev.get("type") in ("message_complete", "message.complete") and not ev.get("usage"):
                ev = {**ev, "usage": {"input_tokens": 0, "output_tokens": 0}}
            yield ev


class EstimateWithoutWarn(OllamaAdapter):
    """Estimates missing usage but logs nothing (its WARN line goes to a disabled logger)."""

    def __init__(self) -> None:
        super().__init__()
        self.log = logging.getLogger("mutant.silent")
        self.log.disabled = True


class CumulativeTextDeltas(AnthropicAdapter):
    """Each text delta carries the block's text so far, not the new chunk (streaming §5.3)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        so_far: dict[int, str] = {}
        for ev in super().stream_response(chunks, context):
            if ev.get("type") in ("text_delta", "text.delta"):
                k = int(ev["content_block_index"])
                so_far[k] = so_far.get(k, "") + str(ev["text"])
                ev = {**ev, "text": so_far[k]}
            yield ev


class RequestedModelReported(AnthropicAdapter):
    """Reports the model the request asked for, not the one the response says served it."""

    def from_wire_response(self, response: WireResponse, context: RequestContext) -> Message:
        msg = super().from_wire_response(response, context)
        if context.model:
            msg["metadata"]["model"] = context.model
        return msg


class MaxTokensIgnored(AnthropicAdapter):
    """Sends its own default `max_tokens` whatever the request asks (contract §3.3: honour it)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        return super().to_wire(messages, tools, replace(options, max_output_tokens=None))


class FirstStopSequenceOnly(OpenAIChatAdapter):
    """Keeps only the first stop sequence, as a string (`stop` accepts one; the others are lost)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        req = super().to_wire(messages, tools, options)
        if isinstance(req.body.get("stop"), list):
            req.body["stop"] = req.body["stop"][0]
        return req


class CohereTemperatureDropped(CohereAdapter):
    """Never sends `temperature`."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        req = super().to_wire(messages, tools, options)
        req.body.pop("temperature", None)
        return req


# -- a third API: the Cohere Chat v2 adapter of tests/third_party, written from Cohere's docs


class CohereStreamLosesLastDelta(CohereAdapter):
    """Forgets to emit the last text delta of a stream (final_content is still right)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        events = list(super().stream_response(chunks, context))
        last = max((i for i, e in enumerate(events) if e["type"] == "text_delta"), default=None)
        return iter([e for i, e in enumerate(events) if i != last])


class CohereStopReasonIgnored(CohereAdapter):
    """Streams end_turn whatever message-end's finish_reason says."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "stop_reason": "end_turn"} if e["type"] == "message_complete" else e


class CohereStreamUsageDropped(CohereAdapter):
    """message_complete carries no usage although message-end sent it."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "usage": None} if e["type"] == "message_complete" else e


class CohereDataUrlAsUrl(CohereAdapter):
    """Reads a base64 `data:` URL back as a url-kind image."""

    def _image_from_wire(self, image_url: Mapping[str, Any]) -> Block:
        return {
            "type": "image",
            "source": {"kind": "url", "data": str(image_url.get("url", ""))},
            "media_type": "image/png",
        }


class CohereSystemAfterUser(CohereAdapter):
    """Moves the system turn behind the first user turn (Cohere reads it as mid-conversation)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        req = super().to_wire(messages, tools, options)
        ms = req.body["messages"]
        if len(ms) > 1 and ms[0]["role"] == "system":
            ms[0], ms[1] = ms[1], ms[0]
        return req


class CohereArgumentsAsObject(CohereAdapter):
    """Sends `function.arguments` as an object; Cohere documents a JSON string."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        req = super().to_wire(messages, tools, options)
        for m in req.body["messages"]:
            for c in m.get("tool_calls", []):
                c["function"]["arguments"] = json.loads(c["function"]["arguments"])
        return req


class CohereForgetsToolIds(CohereAdapter):
    """A fresh tool-id map per call: ids Cohere issued are not restored on the way back."""

    def tool_id_map(self, session_id: str) -> ToolIdMap:
        return ToolIdMap(self.provider, self.new_provider_tool_id)


class CohereSilentDrop(CohereAdapter):
    """Drops blocks Cohere cannot carry without the WARN line."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        return None


class CohereErrorsAsMessages(CohereAdapter):
    """Parses an HTTP error body as an empty reply."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        if isinstance(response, WireResponse) and response.status >= 400:
            return self.assemble(request_context, [], wire_model=None, token_usage={})
        return super().from_wire_response(response, request_context)


class CohereChunkBoundaryBlind(CohereAdapter):
    """Parses each byte chunk as if it held whole SSE events."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        parts = [c.decode(errors="replace") if isinstance(c, bytes) else c for c in chunks]
        return super().stream_response([p for p in parts if p.endswith("\n\n")], context)


# -- streams: vocabularies, §6.5 close, literal fragments, signatures, cancellation ------


class MixedEventNames(AnthropicAdapter):
    """Spells text deltas the streaming protocol's way (`text.delta`) and the rest the
    canonical §7.4 way: two vocabularies in one stream."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "type": "text.delta"} if e["type"] == "text_delta" else e


class RaisesWithoutClosing(AnthropicAdapter):
    """On a mid-stream error, raises without the message_complete(stop_reason: error) that
    contract §6.5 puts before the raise (it still sends the `error` event)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "message_complete" and e.get("stop_reason") == "error":
                continue
            yield e


class PartialJsonReassembled(OpenAIChatAdapter):
    """Emits each tool call's input as one reassembled `partial_json` at the end instead of
    the provider's fragments (final_input stays right)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        held: dict[str, StreamEvent] = {}
        for e in super().stream_response(chunks, context):
            if e["type"] == "tool_use_input_delta":
                h = held.setdefault(e["tool_use_id"], {**e, "partial_json": ""})
                h["partial_json"] += e["partial_json"]
                continue
            if e["type"] == "tool_use_end" and e["tool_use_id"] in held:
                yield held.pop(e["tool_use_id"])
            yield e


class SignatureOnEveryDelta(AnthropicAdapter):
    """Puts the thinking signature on every thinking delta of the block, not only the last."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        events = list(super().stream_response(chunks, context))
        final = {e["content_block_index"]: e.get("signature") for e in events if e["type"] == "thinking_delta"}
        for e in events:
            if e["type"] == "thinking_delta" and final.get(e["content_block_index"]):
                e = {**e, "signature": final[e["content_block_index"]]}
            yield e


class CancelledAsEndTurn(AnthropicAdapter):
    """After cancel, closes the stream as if it had ended normally (stop_reason end_turn)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "message_complete" and e.get("stop_reason") == "cancelled":
                e = {**e, "stop_reason": "end_turn"}
            yield e


class CancelIgnored(OpenAIChatAdapter):
    """cancel() answers True but the stream runs on to its end."""

    def cancel(self, request_id: str) -> bool:
        return True


class CancelLeavesToolOpen(OpenAIChatAdapter):
    """After cancel, the in-flight tool call gets no tool_use_end (contract §5.3.3)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            token = self._streams.get(str(context.request_id))
            if e["type"] == "tool_use_end" and token is not None and token.cancelled:
                continue
            yield e


class ThinkingRejectedWithCrash(OpenAIChatAdapter):
    """Declares thinking false and, instead of dropping it or failing with the documented
    AdapterError (contract §4.4), crashes with a bare exception."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        if block_type in ("thinking", "redacted_thinking"):
            raise RuntimeError(f"cannot render {block_type}")
        super().drop(message, index, block_type, reason)


# -- issue 16 part B: error classification by subclass and fields (contract §6.2-§6.4) --


class ErrorBaseClassOnly(AnthropicAdapter):
    """Raises the AdapterError base carrying the right `error_class` string (not the subclass)."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        exc = super().classify_error(status, body, headers)
        plain = AdapterError(
            str(exc), provider_status=exc.provider_status, request_id=exc.request_id, retryable=exc.retryable
        )
        plain.error_class = exc.error_class  # type: ignore[misc]
        return plain


class ErrorRequestIdLost(OpenAIChatAdapter):
    """Forgets the request id of the response (x-request-id)."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        exc = super().classify_error(status, body, headers)
        exc.request_id = None
        return exc


class OverloadedAsServerError(AnthropicAdapter):
    """Classifies Anthropic's 529 `overloaded_error` as server_error (§6.2: RATE_LIMIT)."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        exc = super().classify_error(status, body, headers)
        if exc.error_class == "rate_limit" and status >= 500:
            return ServerError(str(exc), provider_status=status, request_id=exc.request_id, retryable=True)
        return exc


class ErrorNeverRetryable(OpenAIChatAdapter):
    """Says `retryable=False` for every class, transient ones too (§6.4)."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        exc = super().classify_error(status, body, headers)
        exc.retryable = False
        return exc


# -- canonical §6.5: provider_raw is read only by the adapter that wrote it (TC406) ------


class RawFromAnyProvider(OpenAIChatAdapter):
    """Reads the first provider_raw entry of a message, whichever adapter wrote it."""

    def own_raw(self, message: Message) -> dict[str, Any]:
        raw = (message.get("metadata") or {}).get("provider_raw") or {}
        first = next(iter(raw.values()), None) if isinstance(raw, dict) else None
        return first if isinstance(first, dict) else {}


class RawNotStorable(OpenAIChatAdapter):
    """Stashes the response's `created` time as a datetime: not JSON, so not storable (§9.1)."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        import datetime as dt  # only this mutant needs it

        msg = super().from_wire_response(response, request_context)
        body = response.body if isinstance(response, WireResponse) else response
        raw = msg["metadata"].setdefault("provider_raw", {}).setdefault(self.name, {})
        raw["created"] = dt.datetime.fromtimestamp(int(body.get("created") or 0), dt.UTC)
        return msg


# -- canonical §7.2 capability honesty, probed (TC503) --------------------------------


class StreamToolDeltasWithheld(AnthropicAdapter):
    """Declares supports_streaming_tool_calls but streams no tool_use_input_delta."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return (e for e in super().stream_response(chunks, context) if e["type"] != "tool_use_input_delta")


class ParallelReadBackFirstOnly(OpenAIChatAdapter):
    """Reads back only the first tool call of an assistant turn."""

    def from_wire_request(self, body: dict[str, Any], *, session_id: str | None = None) -> Any:
        parsed = super().from_wire_request(body, session_id=session_id)
        for m in parsed.messages:
            uses = [b for b in m["content"] if b.get("type") == "tool_use"]
            m["content"] = [b for b in m["content"] if b.get("type") != "tool_use" or b is uses[0]]
        return parsed


class OutputLimitOverContext(OpenAIChatAdapter):
    """Declares more output tokens than its context window holds."""

    capabilities: ClassVar[Mapping[str, Any]] = {**OpenAIChatAdapter.capabilities, "max_output_tokens": 200_000}


class EstimateCapped(OpenAIChatAdapter):
    """Caps its estimate at 4096 tokens, so no history ever overflows the declared window."""

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        return min(super().estimate_input_tokens(messages, tools), 4096)


# -- rules that had no failing test (issue 16): TC102, TC103, TC304, TC401, TC402, TC404, TC502


class ReadBackToolMessageUnlinked(AnthropicAdapter):
    """Reads tool results back without metadata.parent_tool_use_id (TS110 on read-back)."""

    def from_wire_request(self, body: dict[str, Any], *, session_id: str | None = None) -> Any:
        parsed = super().from_wire_request(body, session_id=session_id)
        for m in parsed.messages:
            if m["role"] == "tool":
                m["metadata"].pop("parent_tool_use_id", None)
        return parsed


class StreamIndexAsText(OpenAIChatAdapter):
    """Streams content_block_index as a string ("0"), which stream-event.json does not allow."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "content_block_index": str(e["content_block_index"])} if "content_block_index" in e else e


class ProviderIdBreaksRule(AnthropicAdapter):
    """Mints tool ids with a dot and a slash, outside Anthropic's ^[a-zA-Z0-9_-]+$."""

    def new_provider_tool_id(self) -> str:
        return "toolu.x/" + super().new_provider_tool_id()[6:]


class ReplayLosesToolInput(OpenAIChatAdapter):
    """Reads tool calls back with an empty input (a replayed call no longer says what it did)."""

    def from_wire_request(self, body: dict[str, Any], *, session_id: str | None = None) -> Any:
        parsed = super().from_wire_request(body, session_id=session_id)
        for m in parsed.messages:
            m["content"] = [{**b, "input": {}} if b.get("type") == "tool_use" else b for b in m["content"]]
        return parsed


class ReplayResultsUnpaired(OpenAIChatAdapter):
    """After a swap, sends tool results under ids no call on the wire carries."""

    def tool_to_wire_message(self, message: Message) -> list[dict[str, Any]]:
        out = super().tool_to_wire_message(message)
        for m in out:
            m["tool_call_id"] = "call_" + m["tool_call_id"][::-1]
        return out


class ForeignThinkingDroppedSilently(AnthropicAdapter):
    """Drops another provider's thinking without the WARN line (own lossy drops still warn)."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        if block_type in ("thinking", "redacted_thinking") and "issued by" in reason:
            return None
        super().drop(message, index, block_type, reason)


class ImagesDeclaredFalseButSent(OpenAIChatAdapter):
    """Declares supports_images false, yet still renders images onto the wire."""

    capabilities: ClassVar[Mapping[str, Any]] = {**OpenAIChatAdapter.capabilities, "supports_images": False}


class OwnRawIgnored(AnthropicAdapter):
    """Never consults its own provider_raw (§6.5), so cache_control and system blocks are lost."""

    def own_raw(self, message: Message) -> dict[str, Any]:
        return {}


class OptionsRawFromAnyProvider(OpenAIChatAdapter):
    """Takes the request-level provider_raw of whichever adapter is named first in the options."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        from dataclasses import replace  # only this mutant needs it

        raw = dict(options.provider_raw)
        if raw and self.name not in raw:
            options = replace(options, provider_raw={self.name: next(iter(raw.values()))})
        return super().to_wire(messages, tools, options)


class CacheWritesForgotten(AnthropicAdapter):
    """Declares prompt caching but parses cache writes as 0."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        u = super().usage_from_wire(usage)
        if u is not None:
            u["cache_creation_input_tokens"] = 0
        return u


# -- Gemini generateContent: planted defects in the gemini reference adapter ---------------


class GeminiSilentDrop(GeminiAdapter):
    """Drops blocks Gemini cannot carry (redacted thinking, foreign signatures) without WARN."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        return None


class GeminiCriticalIgnored(GeminiAdapter):
    """Drops critical blocks like any other instead of failing the request."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        meta = {k: v for k, v in (message.get("metadata") or {}).items() if k != "critical"}
        super().drop({**message, "metadata": meta}, index, block_type, reason)


class GeminiSystemDropped(GeminiAdapter):
    """Never sends `systemInstruction` (the system prompt is lost)."""

    def system_to_wire(self, messages: list[Message], raw: Mapping[str, Any]) -> dict[str, Any] | None:
        return None


class GeminiErrorsAsMessages(GeminiAdapter):
    """Treats an HTTP error body as an empty reply."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        if isinstance(response, WireResponse) and response.status >= 400:
            return self.assemble(request_context, [], wire_model=None, token_usage={})
        return super().from_wire_response(response, request_context)


class GeminiStopAlwaysEndTurn(GeminiAdapter):
    """Streams `end_turn` whatever finishReason said (MAX_TOKENS, SAFETY, function calls...)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "stop_reason": "end_turn"} if e["type"] == "message_complete" else e


class GeminiThoughtsNotBilled(GeminiAdapter):
    """Leaves thoughtsTokenCount out of output_tokens (Google bills thoughts as output)."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        u = super().usage_from_wire(usage)
        if u is not None and isinstance(usage, dict):
            u["output_tokens"] -= int(usage.get("thoughtsTokenCount") or 0)
        return u


class GeminiEstimateZero(GeminiAdapter):
    """estimate_input_tokens always answers 0."""

    def estimate_input_tokens(
        self, messages: list[Message], tools: list[ToolDefinition], model: str | None = None
    ) -> int:
        return 0


class GeminiChunkBoundaryBlind(GeminiAdapter):
    """Parses each byte chunk as if it held whole SSE events."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        parts = [c.decode(errors="replace") if isinstance(c, bytes) else c for c in chunks]
        return super().stream_response([p for p in parts if p.endswith("\n\n") or p.rstrip().endswith("]")], context)


class GeminiSignatureNotSentBack(GeminiAdapter):
    """Sends the model's own turns back without their thoughtSignature (Gemini 3 then
    rejects the turn's function calls)."""

    def blocks_to_parts(self, message: Message) -> list[Block]:
        parts = [{k: v for k, v in p.items() if k != "thoughtSignature"} for p in super().blocks_to_parts(message)]
        return [p for p in parts if p != {"text": ""}]


class _SignatureBlindParts(gemini_module._Accumulator):
    def part(self, p: Mapping[str, Any], position: int) -> Iterator[StreamEvent]:
        p = {k: v for k, v in p.items() if k not in ("thoughtSignature", "thought_signature")}
        if p.get("thought") is True and not p.get("text"):
            return iter(())
        return super().part(p, position)


class _ThoughtBlindParts(gemini_module._Accumulator):
    def part(self, p: Mapping[str, Any], position: int) -> Iterator[StreamEvent]:
        return super().part({k: v for k, v in p.items() if k != "thought"}, position)


class _JoinedParts(gemini_module._Accumulator):
    def part(self, p: Mapping[str, Any], position: int) -> Iterator[StreamEvent]:
        last = self.content[-1] if self.content else None
        if isinstance(p.get("text"), str) and p.get("thought") is not True and last and last["type"] == "text":
            p = {**p, "text": "\n" + p["text"]}
        return super().part(p, position)


class _GeminiResponseParts(GeminiAdapter):
    """Parses responses (both paths) with another part reader, as a rewritten parser would."""

    parts_reader: ClassVar[type] = gemini_module._Accumulator

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        saved, gemini_module._Accumulator = gemini_module._Accumulator, self.parts_reader
        try:
            return super().from_wire_response(response, request_context)
        finally:
            gemini_module._Accumulator = saved

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        saved, gemini_module._Accumulator = gemini_module._Accumulator, self.parts_reader
        try:
            yield from super().stream_response(chunks, context)
        finally:
            gemini_module._Accumulator = saved


class GeminiResponseSignatureLost(_GeminiResponseParts):
    """Reads responses without their thoughtSignature: the parsed turn has nothing to send back."""

    parts_reader = _SignatureBlindParts


class GeminiThoughtsReadAsText(_GeminiResponseParts):
    """Reads `thought: true` parts of a response as answer text."""

    parts_reader = _ThoughtBlindParts


class GeminiPartsJoinedWithNewline(_GeminiResponseParts):
    """Joins a response's consecutive text parts with a newline (the API cuts a part anywhere)."""

    parts_reader = _JoinedParts


class GeminiResponseNameGeneric(GeminiAdapter):
    """Sends every functionResponse named "tool" instead of the function that was called."""

    def tool_message_to_wire(self, message: Message) -> list[Block]:
        out = super().tool_message_to_wire(message)
        for p in out:
            fr = p.get("functionResponse") or p.get("function_response")
            if isinstance(fr, dict):
                fr["name"] = "tool"
        return out


class GeminiMintedIdsShared(MintingGeminiAdapter):
    """Mints fresh ids per parse (allowed) but one per function name: two id-less calls of
    one reply to the same function share an id, so no result can say which it answers."""

    def __init__(self) -> None:
        super().__init__()
        self._shared: dict[tuple[str, str], str] = {}  # (session, function name) -> this parse's id

    def call_id_from_wire(self, sid: str, wire_id: Any, *key: Any) -> str:
        if isinstance(wire_id, str) and wire_id:
            return super().call_id_from_wire(sid, wire_id, *key)
        name = str(key[-2])  # the reference adapter's key ends with the call's name and arguments
        mine = self._shared.setdefault((sid, name), new_tool_id())
        self.tool_id_map(sid).bind(mine, NO_ID + mine)
        return mine

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        self._shared = {}  # a fresh id per parse, shared by the calls of one name
        return super().from_wire_response(response, request_context)


class GeminiMintedResultsShifted(MintingGeminiAdapter):
    """Mints fresh ids per parse (allowed) but, reading a request back, pairs each id-less
    functionResponse with the newest unanswered call of its name: a result points at a
    different call than on the wire."""

    def tool_result_from_wire(
        self, sid: str, key: str, fr: Mapping[str, Any], part: Mapping[str, Any], pending: dict[str, list[str]]
    ) -> Message:
        waiting = pending.get(str(fr.get("name", "")))
        if waiting:
            waiting.insert(0, waiting.pop())
        return super().tool_result_from_wire(sid, key, fr, part, pending)


class GeminiWireIdReminted(GeminiAdapter):
    """Gives a call whose id the API issued a fresh canonical id on every parse, dropping the
    session map's entry instead of looking it up (contract §4.1.1)."""

    def call_id_from_wire(self, sid: str, wire_id: Any, *key: Any) -> str:
        if not (isinstance(wire_id, str) and wire_id):
            return super().call_id_from_wire(sid, wire_id, *key)
        m = self.tool_id_map(sid)
        old = m.get_canonical(wire_id)
        if old is not None:
            m._to_canonical.pop(wire_id)
            m._to_provider.pop(old)
        return m.canonical_for(wire_id)


class GeminiIdsIgnoreReply(GeminiAdapter):
    """Derives the ids of id-less calls from their position, name and arguments only, not
    from the reply (`responseId`): a later reply repeating a call gets the earlier call's id."""

    def call_id_from_wire(self, sid: str, wire_id: Any, *key: Any) -> str:
        if not (isinstance(wire_id, str) and wire_id) and key[:1] == ("response",):
            key = ("response", "", *key[2:])
        return super().call_id_from_wire(sid, wire_id, *key)


class GeminiWireIdAltered(GeminiAdapter):
    """Maps a call whose id the API issued to an altered provider id (`fc_x` -> `FC_X`): the
    provider never gets its own id back."""

    def call_id_from_wire(self, sid: str, wire_id: Any, *key: Any) -> str:
        if isinstance(wire_id, str) and wire_id:
            wire_id = wire_id.upper()
        return super().call_id_from_wire(sid, wire_id, *key)


class GeminiIdlessResultsNewestFirst(GeminiAdapter):
    """Pairs an id-less functionResponse with the newest unanswered call of its name (the API
    pairs by name and order: the oldest)."""

    def tool_result_from_wire(
        self, sid: str, key: str, fr: Mapping[str, Any], part: Mapping[str, Any], pending: dict[str, list[str]]
    ) -> Message:
        waiting = pending.get(str(fr.get("name", "")))
        if waiting:
            waiting.insert(0, waiting.pop())
        return super().tool_result_from_wire(sid, key, fr, part, pending)


class GeminiImageMimeHardcoded(GeminiAdapter):
    """Sends every inline image as image/jpeg whatever its media type."""

    def image_to_part(self, message: Message, index: int, block: Block) -> Block | None:
        part = super().image_to_part(message, index, block)
        if part is not None and "inlineData" in part:
            part["inlineData"] = {**part["inlineData"], "mimeType": "image/jpeg"}
        return part


class GeminiImageReadAsPng(GeminiAdapter):
    """Reads every image part of a request back as image/png."""

    def part_to_block(self, sid: str, part: Mapping[str, Any], kind: str | None, key: tuple[Any, ...]) -> Block:
        b = super().part_to_block(sid, part, kind, key)
        return {**b, "media_type": "image/png"} if b.get("type") == "image" else b


class GeminiFileDataReadAsInline(GeminiAdapter):
    """Reads a fileData part as inline bytes: the file URI becomes base64 `data`."""

    def part_to_block(self, sid: str, part: Mapping[str, Any], kind: str | None, key: tuple[Any, ...]) -> Block:
        b = super().part_to_block(sid, part, kind, key)
        if b.get("type") == "image" and b["source"]["kind"] == "url":
            return {**b, "source": {"kind": "base64", "data": b["source"]["data"]}}
        return b


class GeminiStreamDropsCalls(GeminiAdapter):
    """Streams relay text and thoughts only: functionCall parts are lost."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] in ("tool_use_start", "tool_use_end"):
                continue
            if e["type"] == "message_complete":
                e = {**e, "final_content": [b for b in e["final_content"] if b.get("type") != "tool_use"]}
            yield e


class GeminiStreamDropsThoughts(GeminiAdapter):
    """Streams lose thought parts: their deltas are relayed, the final content lacks them."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "message_complete":
                e = {**e, "final_content": [b for b in e["final_content"] if b.get("type") != "thinking"]}
            yield e


def _signature_only(value: Any) -> bool:
    return isinstance(value, dict) and not value.get("text") and bool(value.get("signature"))


class GeminiStreamSignatureLost(GeminiAdapter):
    """Streams a reply without the thoughtSignatures of its functionCall and text parts (the
    parse keeps them): a streamed turn has nothing to send back, and Gemini 3 rejects the next."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "thinking_delta" and _signature_only(e):
                continue
            if e["type"] == "message_complete":
                e = {**e, "final_content": [b for b in e["final_content"] if not _signature_only(b)]}
            yield e


class GeminiCachedTokensIgnored(GeminiAdapter):
    """Ignores cachedContentTokenCount: cache reads are billed as fresh input."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        u = super().usage_from_wire(usage)
        if u is not None:
            u["input_tokens"] += u["cached_input_tokens"]
            u["cached_input_tokens"] = 0
        return u


class GeminiRolesSwappedOnRead(GeminiAdapter):
    """Reads `model` contents as user turns and `user` contents as the model's."""

    def from_wire_request(
        self, body: dict[str, Any], *, session_id: str | None = None, url: str | None = None
    ) -> ParsedRequest:
        swap = {"model": "user", "user": "model"}
        contents = [{**c, "role": swap.get(c.get("role") or "user", "user")} for c in body.get("contents") or []]
        return super().from_wire_request({**body, "contents": contents}, session_id=session_id, url=url)


class GeminiToolErrorNotSent(GeminiAdapter):
    """Sends every tool result as `{"output": ...}`, errors included."""

    def tool_message_to_wire(self, message: Message) -> list[Block]:
        content = [{**b, "is_error": False} for b in message.get("content", [])]
        return super().tool_message_to_wire({**message, "content": content})


class GeminiToolErrorLostOnRead(GeminiAdapter):
    """Reads `{"error": ...}` functionResponses back without is_error."""

    def tool_result_from_wire(
        self, sid: str, key: str, fr: Mapping[str, Any], part: Mapping[str, Any], pending: dict[str, list[str]]
    ) -> Message:
        m = super().tool_result_from_wire(sid, key, fr, part, pending)
        return {**m, "content": [{k: v for k, v in b.items() if k != "is_error"} for b in m["content"]]}


class GeminiSignatureOnFirstPart(GeminiAdapter):
    """Puts a turn's signature on its first part, not on the part it came with."""

    def blocks_to_parts(self, message: Message) -> list[Block]:
        parts = super().blocks_to_parts(message)
        sigs = [p.pop("thoughtSignature") for p in parts if "thoughtSignature" in p and not p.get("thought")]
        parts = [p for p in parts if p != {"text": ""}]
        if sigs and parts:
            parts[0]["thoughtSignature"] = sigs[0]
        return parts


# -- Ollama /api/chat: planted defects in the ollama reference adapter ----------------------


class OllamaSilentDrop(OllamaAdapter):
    """Drops blocks Ollama cannot carry without the WARN line."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        return None


class OllamaSystemDropped(OllamaAdapter):
    """Leaves system messages out of `messages`."""

    def messages_to_wire(self, messages: list[Message], *, with_ids: bool = True) -> list[dict[str, Any]]:
        return super().messages_to_wire([m for m in messages if m.get("role") != "system"], with_ids=with_ids)


class OllamaErrorsAsMessages(OllamaAdapter):
    """Treats an HTTP error body as an empty reply."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        if isinstance(response, WireResponse) and response.status >= 400:
            return self.assemble(request_context, [], wire_model=None, token_usage={})
        return super().from_wire_response(response, request_context)


class OllamaImagesNotSent(OllamaAdapter):
    """Declares supports_images but never puts an image in `images`."""

    def image_to_wire(self, message: Message, index: int, block: Block) -> str | None:
        return None


class OllamaStopAlwaysEndTurn(OllamaAdapter):
    """Streams `end_turn` whatever done_reason said (length, tool calls)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "stop_reason": "end_turn"} if e["type"] == "message_complete" else e


class OllamaPromptCountAsOutput(OllamaAdapter):
    """Swaps prompt_eval_count and eval_count."""

    def usage_from_wire(self, body: Mapping[str, Any]) -> dict[str, int] | None:
        u = super().usage_from_wire(body)
        if u is not None:
            u["input_tokens"], u["output_tokens"] = u["output_tokens"], u["input_tokens"]
        return u


class OllamaArgumentsAsString(OllamaAdapter):
    """Sends `function.arguments` as a JSON string, as OpenAI does (Ollama documents an object)."""

    def tool_call_to_wire(self, sid: str, block: Block, extra: Mapping[str, Any], *, with_ids: bool) -> dict[str, Any]:
        wire = super().tool_call_to_wire(sid, block, extra, with_ids=with_ids)
        wire["function"]["arguments"] = json.dumps(wire["function"]["arguments"])
        return wire


class OllamaImageDataUrl(OllamaAdapter):
    """Puts a `data:<type>;base64,` prefix on each entry of `images` (Ollama takes bare base64)."""

    def image_to_wire(self, message: Message, index: int, block: Block) -> str | None:
        data = super().image_to_wire(message, index, block)
        return None if data is None else f"data:{block['media_type']};base64,{data}"


class OllamaImagesOnLastMessage(OllamaAdapter):
    """Moves every image of the conversation onto the last wire message, as if `images` were
    a request-level field (it is on /api/generate, not on /api/chat)."""

    def messages_to_wire(self, messages: list[Message], *, with_ids: bool = True) -> list[dict[str, Any]]:
        out = super().messages_to_wire(messages, with_ids=with_ids)
        images = [img for m in out for img in m.pop("images", [])]
        if images and out:
            out[-1]["images"] = images
        return out


class OllamaImagesOverwritten(OllamaAdapter):
    """Assigns `images` instead of appending to it: a message keeps only its last image."""

    def message_to_wire(self, message: Message, *, with_ids: bool) -> list[dict[str, Any]]:
        parts = super().message_to_wire(message, with_ids=with_ids)
        for p in parts:
            if p.get("images"):
                p["images"] = p["images"][-1:]
        return parts


class OllamaImageTypeNotSniffed(OllamaAdapter):
    """Reads every image of a recorded request back as image/jpeg (no magic-number sniffing)."""

    def from_wire_request(self, body: dict[str, Any], *, session_id: str | None = None) -> ParsedRequest:
        parsed = super().from_wire_request(body, session_id=session_id)
        for m in parsed.messages:
            for b in m["content"]:
                if b.get("type") == "image":
                    b["media_type"] = "image/jpeg"
        return parsed


class OllamaThinkingLostOnParse(OllamaAdapter):
    """Ignores `message.thinking` of a non-streamed reply (the stream keeps it)."""

    def content_from_wire(self, sid: str, msg: Mapping[str, Any], anchor: Any) -> list[Block]:
        return super().content_from_wire(sid, {k: v for k, v in msg.items() if k != "thinking"}, anchor)


class OllamaThinkingNotSentBack(OllamaAdapter):
    """Never sends the assistant's `thinking` back (Ollama takes it, and declares thinking)."""

    def message_to_wire(self, message: Message, *, with_ids: bool) -> list[dict[str, Any]]:
        parts = super().message_to_wire(message, with_ids=with_ids)
        for p in parts:
            p.pop("thinking", None)
        return parts


class OllamaToolResultAsUser(OllamaAdapter):
    """Sends tool results as `user` messages instead of role `tool`."""

    def tool_message_to_wire(self, message: Message, *, with_ids: bool) -> list[dict[str, Any]]:
        return [{**w, "role": "user"} for w in super().tool_message_to_wire(message, with_ids=with_ids)]


class OllamaToolNameMissing(OllamaAdapter):
    """Leaves out the `tool_name` Ollama's tool-calling docs put on tool messages."""

    def tool_message_to_wire(self, message: Message, *, with_ids: bool) -> list[dict[str, Any]]:
        out = super().tool_message_to_wire(message, with_ids=with_ids)
        for w in out:
            w.pop("tool_name", None)
        return out


class OllamaToolResultFirstTextOnly(OllamaAdapter):
    """A tool_result with several text blocks: only the first reaches the wire."""

    def tool_message_to_wire(self, message: Message, *, with_ids: bool) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for w in super().tool_message_to_wire(message, with_ids=with_ids):
            if not (out and "tool_call_id" in w and out[-1].get("tool_call_id") == w["tool_call_id"]):
                out.append(w)
        return out


class OllamaChunkBoundaryBlind(OllamaAdapter):
    """Splits each byte chunk on newlines on its own: a line cut across chunks is lost."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        whole: list[bytes] = []
        for chunk in chunks:
            for line in (chunk.encode() if isinstance(chunk, str) else chunk).split(b"\n"):
                try:
                    json.loads(line)
                except ValueError:
                    continue
                whole.append(line + b"\n")
        return super().stream_response(whole, context)


class OllamaLengthNotMapped(OllamaAdapter):
    """Maps `done_reason: length` to end_turn (only `stop` is in its table)."""

    def stop_reason(self, body: Mapping[str, Any], content: list[Block]) -> str:
        reason = super().stop_reason(body, content)
        return "end_turn" if reason == "max_tokens" else reason


class OllamaUnstableToolIds(OllamaAdapter):
    """Keys every call by a random number, ids a request carries included: parsing a reply
    twice gives other ids (allowed for id-less calls, TC306 only advises), and reading a
    request back, no result answers the call it was sent for."""

    def call_key(self, call: Mapping[str, Any], anchor: Any, position: str) -> str:
        return "call_" + ULID().hex[-16:]


class OllamaLastContentDropped(OllamaAdapter):
    """Blanks the content of the last wire message (an off-by-one over the history)."""

    def messages_to_wire(self, messages: list[Message], *, with_ids: bool = True) -> list[dict[str, Any]]:
        out = super().messages_to_wire(messages, with_ids=with_ids)
        if out:
            out[-1]["content"] = ""
        return out


class OllamaNumPredictMissing(OllamaAdapter):
    """Never puts max_output_tokens in `options.num_predict`."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        (wire.body.get("options") or {}).pop("num_predict", None)
        return wire


class OllamaStreamFalseOmitted(OllamaAdapter):
    """Leaves `stream` out of non-streamed requests (Ollama then streams: it defaults to true)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        if wire.body.get("stream") is False:
            del wire.body["stream"]
        return wire


class OllamaIdsIgnoreReply(OllamaAdapter):
    """Keys id-less calls by position and content only, not by the reply (`created_at`): a
    later reply repeating a call gets the earlier call's id."""

    def call_key(self, call: Mapping[str, Any], anchor: Any, position: str) -> str:
        return super().call_key(call, None, position)


class _RefusalBlindStream(openai_responses_module._ResponsesStream):
    def handle(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        t = data.get("type")
        if t == "response.content_part.added" and (data.get("part") or {}).get("type") == "refusal":
            data = {**data, "part": {"type": "refusal", "refusal": ""}}
        elif t == "response.refusal.delta":
            data = {**data, "delta": ""}
        elif t == "response.refusal.done":
            data = {**data, "refusal": ""}
        return super().handle(data)


class ResponsesRefusalReadAsEmpty(OpenAIResponsesAdapter):
    """Reads a `refusal` content part (and the streamed `response.refusal.*` events) as an
    empty text block: the provider's refusal text is lost, streamed and not."""

    def item_from_wire(
        self, session_id: str, item: Any, *, keep_logprobs: bool = True
    ) -> list[tuple[Block, dict[str, Any]]]:
        out = super().item_from_wire(session_id, item, keep_logprobs=keep_logprobs)
        return [({**b, "text": ""}, x) if x.get("refusal") else (b, x) for b, x in out]

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        saved, openai_responses_module._ResponsesStream = openai_responses_module._ResponsesStream, _RefusalBlindStream
        try:
            yield from super().stream_response(chunks, context)
        finally:
            openai_responses_module._ResponsesStream = saved


class _BlockBlindAccumulator(gemini_module._Accumulator):
    def stop_reason(self) -> str:
        return "end_turn" if self.finish_reason is None else super().stop_reason()


class GeminiBlockedPromptAsComplete(_GeminiResponseParts):
    """Reads a blocked prompt (`promptFeedback.blockReason`, no candidates) as a complete,
    empty reply: status complete, streamed stop_reason end_turn."""

    parts_reader = _BlockBlindAccumulator


class GeminiStreamErrorIgnored(GeminiAdapter):
    """Skips an error element in the middle of a stream as if it were an empty chunk (reads
    it without its `error` key): the stream then ends without a finishReason and raises a
    wire-format error instead of the classified one."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        text = "".join(c.decode() if isinstance(c, bytes) else c for c in chunks)
        yield from super().stream_response([re.sub(r'\{\s*"error"\s*:', '{"ignored":', text)], context)


class OllamaStreamErrorAsWireFormat(OllamaAdapter):
    """Raises a generic wire-format error for Ollama's documented mid-stream `{"error": ...}`
    line instead of a classified AdapterError carrying the provider's message."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        try:
            yield from super().stream_response(chunks, context)
        except AdapterError as exc:
            raise WireFormatError(f"unexpected NDJSON line: {type(exc).__name__}") from exc


class ChatStreamErrorAsWireFormat(OpenAIChatAdapter):
    """Raises a generic wire-format error for a Chat Completions stream's `{"error": ...}`
    event instead of the classified AdapterError."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        try:
            yield from super().stream_response(chunks, context)
        except AdapterError as exc:
            raise WireFormatError("unexpected SSE data") from exc


def _schema_in_system(messages: list[Message], options: Any) -> tuple[list[Message], Any]:
    """The schema moved out of `output_schema` into a leading system message."""
    schema = getattr(options, "output_schema", None)
    if schema is None:
        return messages, options
    first = messages[0] if messages else {"session_id": "s"}
    hint: Message = {
        **first,
        "id": new_ulid(),
        "role": "system",
        "content": [{"type": "text", "text": "Answer with JSON matching: " + json.dumps(schema)}],
    }
    return [hint, *messages], replace(options, output_schema=None)


class OllamaSchemaInSystemMessage(OllamaAdapter):
    """Sends `output_schema` as a system-message hint instead of in `format`."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        msgs, opts = _schema_in_system(messages, options)
        return super().to_wire(msgs, tools, opts)


class GeminiSchemaInSystemInstruction(GeminiAdapter):
    """Sends `output_schema` as a system-instruction hint instead of in
    `generationConfig.responseJsonSchema`."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        msgs, opts = _schema_in_system(messages, options)
        return super().to_wire(msgs, tools, opts)


class ResponsesSchemaInInstructions(OpenAIResponsesAdapter):
    """Sends `output_schema` in `instructions` instead of in `text.format`."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        msgs, opts = _schema_in_system(messages, options)
        return super().to_wire(msgs, tools, opts)


class ChatSchemaInSystemMessage(OpenAIChatAdapter):
    """Sends `output_schema` as a system message instead of in `response_format`."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        msgs, opts = _schema_in_system(messages, options)
        return super().to_wire(msgs, tools, opts)


class ResponsesStopOnWire(OpenAIResponsesAdapter):
    """Puts the stop sequences in a `stop` field the Responses API does not define (as Chat
    Completions would), after the option WARN line."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        wire = super().to_wire(messages, tools, options)
        if getattr(options, "stop_sequences", None) and isinstance(wire.body, dict):
            return replace(wire, body={**wire.body, "stop": list(options.stop_sequences)})
        return wire


class ResponsesStopDroppedSilently(OpenAIResponsesAdapter):
    """Leaves the stop sequences off the wire (the API has no field for them) without the
    option WARN line."""

    def warn_option(self, option: str, reason: str) -> None:
        if option != "stop_sequences":
            super().warn_option(option, reason)


class OllamaUrlImageAsText(OllamaAdapter):
    """Sends an image given by URL (Ollama takes base64 images only) as the URL in a text
    block instead of dropping it with the WARN line."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        def as_text(b: Block) -> Block:
            if b.get("type") == "image" and b["source"]["kind"] == "url":
                return {"type": "text", "text": str(b["source"]["data"])}
            return b

        return super().to_wire([{**m, "content": [as_text(b) for b in m["content"]]} for m in messages], tools, options)


class GeminiFileRefDroppedSilently(GeminiAdapter):
    """Leaves a `file_ref` image (a workspace path it cannot fetch) off the wire without the
    §7.3 WARN line."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        if not reason.startswith("file_ref"):
            super().drop(message, index, block_type, reason)


def _bind_foreign_call_ids(a: Any, messages: list[Message]) -> None:
    """Binds each call this adapter has no provider id for to the `call_id` another adapter
    kept for it in `provider_raw` (its `items` entry at the block's index), verbatim."""
    for m in messages:
        raw = (m.get("metadata") or {}).get("provider_raw") or {}
        m_map = a.tool_id_map(str(m.get("session_id", "")))
        for i, b in enumerate(m["content"]):
            if b.get("type") != "tool_use" or m_map.get_provider(b["id"]) is not None:
                continue
            for name, entry in raw.items():
                item = ((entry or {}).get("items") or {}).get(str(i), {}).get("item") or {}
                if name != a.name and isinstance(item.get("call_id"), str):
                    m_map.bind(b["id"], item["call_id"])
                    break


class ChatForeignCallIdsVerbatim(OpenAIChatAdapter):
    """Sends a replayed call under the id another adapter kept in `provider_raw` (a Responses
    `call_id`), verbatim, instead of generating its own: Chat takes ids of 40 characters at
    most."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        _bind_foreign_call_ids(self, messages)
        return super().to_wire(messages, tools, options)


class AnthropicForeignCallIdsVerbatim(AnthropicAdapter):
    """Sends a replayed call under another adapter's id from `provider_raw`, verbatim: Anthropic
    takes `[a-zA-Z0-9_-]+` only (no `|`, no non-ASCII)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: Any) -> Any:
        _bind_foreign_call_ids(self, messages)
        return super().to_wire(messages, tools, options)


# No OllamaEstimateZero: the three real Ollama recordings count 17-44 prompt tokens, inside
# TC701's absolute band of 60, so a zero estimate passes them (TC701 cannot kill it until a
# longer Ollama recording exists).


# mutant -> the rule that must fail
# -- equivalent forms with real content changed (issue 25 item 2): the record's declared
# equivalences (base64 alphabets, `content` beside tool_calls) must not hide these


def _other_bytes(value: Any) -> Any:
    """The URL-safe spelling of other bytes (the first byte flipped)."""
    raw = bytearray(base64.urlsafe_b64decode(str(value) + "=" * (-len(str(value)) % 4)))
    raw[0] ^= 1
    return base64.urlsafe_b64encode(bytes(raw)).decode("ascii").rstrip("=")


def _alter(value: Any, key: str) -> Any:
    if isinstance(value, dict):
        return {k: _other_bytes(v) if k == key and isinstance(v, str) else _alter(v, key) for k, v in value.items()}
    if isinstance(value, list):
        return [_alter(v, key) for v in value]
    return value


class GeminiUrlSafeOtherImageBytes(UrlSafeGeminiAdapter):
    """Writes base64 URL-safe (allowed) but with one bit of each inlineData payload flipped."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        return replace(req, body=_alter(req.body, "data"))


class GeminiUrlSafeOtherBytesRoundTrip(GeminiUrlSafeOtherImageBytes):
    """The same defect, met by the request round trip of a recorded image request."""


class GeminiUrlSafeSignatureAltered(UrlSafeGeminiAdapter):
    """Writes thoughtSignatures URL-safe (allowed) but of other bytes."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        return replace(req, body=_alter(req.body, "thoughtSignature"))


class GeminiUrlSafeParsedSignatureAltered(UrlSafeGeminiAdapter):
    """Reads a non-streamed response's thoughtSignatures URL-safe (allowed) but of other bytes:
    the streamed parse of the same reply keeps the wire's."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        msg = super().from_wire_response(response, request_context)
        for b in msg["content"]:
            if b.get("type") == "thinking" and b.get("signature"):
                b["signature"] = _other_bytes(b["signature"])
        return msg


class AnthropicSignatureDroppedOnToolUse(AnthropicAdapter):
    """Sends an assistant turn that calls tools back with its thinking blocks' signatures left
    out (Anthropic's docs: "During tool use, you must pass thinking blocks back to the API")."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        for m in req.body.get("messages", []):
            content = m.get("content") if isinstance(m.get("content"), list) else []
            if any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content):
                m["content"] = [
                    {k: v for k, v in b.items() if k != "signature"} if b.get("type") == "thinking" else b
                    for b in content
                ]
        return req


class AnthropicThinkingDroppedWithWarn(AnthropicAdapter):
    """Leaves the thinking of its own turns out of the history, each drop logged with the
    WARN line: a logged drop is no excuse where the API's docs require the block back."""

    def block_to_wire(self, message: Message, index: int, block: Block) -> Block | None:
        if block.get("type") == "thinking" and (message.get("metadata") or {}).get("provider") == self.provider:
            self.drop(message, index, "thinking", "thinking is not sent back")
            return None
        return super().block_to_wire(message, index, block)


class ChatEmptyContentTextDropped(EmptyContentChatAdapter):
    """Sends `content: ""` beside tool_calls (allowed) also when the turn had text: the text is lost."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        body = dict(req.body)
        body["messages"] = [
            {**m, "content": ""} if m.get("role") == "assistant" and m.get("tool_calls") else m
            for m in body.get("messages") or []
        ]
        return replace(req, body=body)


class ChatToolContentAbsent(EmptyContentChatAdapter):
    """Leaves `content` out of tool messages, as if absent equalled their text there too (the
    Chat docs make it optional only on an assistant turn with tool_calls)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        body = dict(req.body)
        body["messages"] = [
            {k: v for k, v in m.items() if k != "content"} if m.get("role") == "tool" else m
            for m in body.get("messages") or []
        ]
        return replace(req, body=body)


# -- issue 26 item 4: OpenAI Responses defects a developer makes reading the API reference --


class ResponsesCachedTokensIgnored(OpenAIResponsesAdapter):
    """Reads `usage.input_tokens` but not `input_tokens_details.cached_tokens`: cached
    prompt tokens are billed as fresh input (contract §7.2 maps cached tokens)."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        out = super().usage_from_wire(usage)
        if out is None:
            return None
        return {**out, "input_tokens": out["input_tokens"] + out["cached_input_tokens"], "cached_input_tokens": 0}


class ResponsesIncompleteAsEndTurn(OpenAIResponsesAdapter):
    """Reads `status: "incomplete"` (`incomplete_details.reason: "max_output_tokens"`) as a
    finished turn: the truncation is reported as end_turn."""

    def stop_reason(self, body: Mapping[str, Any], content: list[Block]) -> str:
        reason = super().stop_reason(body, content)
        return "end_turn" if reason == "max_tokens" else reason


class ResponsesReasoningIdLost(OpenAIResponsesAdapter):
    """Keeps a reasoning item's summary and encrypted_content but not its `id` (`rs_...`),
    so the item sent back is not the one the API issued."""

    def item_from_wire(
        self, session_id: str, item: Any, *, keep_logprobs: bool = True
    ) -> list[tuple[Block, dict[str, Any]]]:
        out = super().item_from_wire(session_id, item, keep_logprobs=keep_logprobs)
        if isinstance(item, dict) and item.get("type") == "reasoning":
            return [(b, {**x, "item": {k: v for k, v in (x.get("item") or {}).items() if k != "id"}}) for b, x in out]
        return out


class ResponsesEncryptedContentDropped(OpenAIResponsesAdapter):
    """Reads a reasoning item's text but not its `encrypted_content`: the thinking block has
    no signature, so the reasoning cannot go back to the API (stateless replay)."""

    def item_from_wire(
        self, session_id: str, item: Any, *, keep_logprobs: bool = True
    ) -> list[tuple[Block, dict[str, Any]]]:
        out = super().item_from_wire(session_id, item, keep_logprobs=keep_logprobs)
        return [({**b, "signature": None} if b.get("type") == "thinking" else b, x) for b, x in out]


class ResponsesCallIdMismatch(OpenAIResponsesAdapter):
    """Gives each `function_call_output` a fresh `call_id` instead of its call's: the result
    answers no call the API issued."""

    def tool_to_wire_items(self, message: Message) -> list[WireBody]:
        return [{**item, "call_id": self.new_provider_tool_id()} for item in super().tool_to_wire_items(message)]


class _DoneAsDeltaStream(openai_responses_module._ResponsesStream):
    def handle(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        if data.get("type") == "response.function_call_arguments.done":
            k = self.block(data, "tool_use")
            self.args[k] += str(data.get("arguments", ""))  # the bug: the full text appended to the deltas
            return iter(())
        return super().handle(data)

    def item_done(self, oi: int, item: Any) -> Iterator[StreamEvent]:
        if isinstance(item, dict) and item.get("type") == "function_call":
            k = self.block_of[oi]
            return self.end_call(k)  # the accumulated text, not the item's arguments
        return super().item_done(oi, item)


class ResponsesStreamedArgumentsDoubled(OpenAIResponsesAdapter):
    """Treats `response.function_call_arguments.done` as one more delta, appending the full
    `arguments` to the fragments already joined: the call's final input is not the JSON
    the API streamed."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        saved, openai_responses_module._ResponsesStream = openai_responses_module._ResponsesStream, _DoneAsDeltaStream
        try:
            yield from super().stream_response(chunks, context)
        finally:
            openai_responses_module._ResponsesStream = saved


class _FailedAsCompletedStream(openai_responses_module._ResponsesStream):
    def handle(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        if data.get("type") == "response.failed":
            data = {**data, "type": "response.completed"}
        return super().handle(data)


class ResponsesStreamFailedAsCompleted(OpenAIResponsesAdapter):
    """Handles `response.failed` like `response.completed`: the stream ends as a normal turn
    and no classified error is raised."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        saved, openai_responses_module._ResponsesStream = (
            openai_responses_module._ResponsesStream,
            _FailedAsCompletedStream,
        )
        try:
            yield from super().stream_response(chunks, context)
        finally:
            openai_responses_module._ResponsesStream = saved


class ResponsesErrorCodeIgnored(OpenAIResponsesAdapter):
    """Classifies errors by HTTP status only, never by `error.code` / `error.type` (a 400
    `context_length_exceeded` is an invalid request, not a context overflow)."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        return super().classify_error(status, {"error": {"message": "error"}}, headers)


class ResponsesInstructionsAsUserMessage(OpenAIResponsesAdapter):
    """Sends the system prompt as a user message item instead of in `instructions`."""

    def input_to_wire(self, messages: list[Message]) -> tuple[str | None, list[WireBody]]:
        instructions, items = super().input_to_wire(messages)
        if instructions is None:
            return None, items
        return None, [{"role": "user", "content": instructions}, *items]


class ResponsesSilentDrop(OpenAIResponsesAdapter):
    """Drops blocks it cannot send (redacted thinking, file_ref images) without the WARN line."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        return None


class ResponsesDataUrlMediaTypeLost(OpenAIResponsesAdapter):
    """Reads a base64 `data:` image URL back as image/png whatever media type it names."""

    def image_from_wire(self, part: Mapping[str, Any], session_id: str = "") -> Block:
        block = super().image_from_wire(part, session_id)
        return {**block, "media_type": "image/png"} if block["source"]["kind"] == "base64" else block


# -- issue 26 item 4: OpenRouter reasoning defects (its "Reasoning Tokens" guide) --------


class OpenRouterDetailsNotSentBack(OpenRouterChatAdapter):
    """Sends the assistant's text and tool calls back but leaves its `reasoning_details` off,
    logging nothing ("Preserving reasoning blocks": send them back unmodified)."""

    def assistant_to_wire(self, message: Message) -> list[WireBody]:
        out = super().assistant_to_wire(message)
        return [{k: v for k, v in m.items() if k not in ("reasoning_details", "reasoning")} for m in out]


class OpenRouterSignatureDropped(OpenRouterChatAdapter):
    """Sends `reasoning.text` details back without their `signature`."""

    def assistant_to_wire(self, message: Message) -> list[WireBody]:
        out = super().assistant_to_wire(message)
        for m in out:
            if isinstance(m.get("reasoning_details"), list):
                m["reasoning_details"] = [
                    {k: v for k, v in d.items() if k != "signature"} for d in m["reasoning_details"]
                ]
        return out


class OpenRouterDetailsReordered(OpenRouterChatAdapter):
    """Sends `reasoning_details` back newest first (the guide: unmodified, in order)."""

    def assistant_to_wire(self, message: Message) -> list[WireBody]:
        out = super().assistant_to_wire(message)
        for m in out:
            if isinstance(m.get("reasoning_details"), list):
                m["reasoning_details"] = list(reversed(m["reasoning_details"]))
        return out


class OpenRouterEncryptedReadAsText(OpenRouterChatAdapter):
    """Reads a `reasoning.encrypted` detail as readable thinking whose text is the opaque
    `data` (it is redacted thinking: canonical §4.2 redacted_thinking)."""

    def reasoning_from_wire(self, msg: Mapping[str, Any]) -> list[Block]:
        return [
            {"type": "thinking", "text": b["data"], "signature": None} if b.get("type") == "redacted_thinking" else b
            for b in super().reasoning_from_wire(msg)
        ]


class _ReasoningBlindRouterStream(openrouter_module._RouterStream):
    def reasoning(self, delta: Mapping[str, Any]) -> Iterator[StreamEvent]:
        return iter(())


class OpenRouterStreamReasoningIgnored(OpenRouterChatAdapter):
    """Streams text and tool calls but ignores `delta.reasoning_details` / `delta.reasoning`:
    the streamed answer loses the thinking the non-streamed one has."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        st = _ReasoningBlindRouterStream(self, context)
        return self.cancellable(context, st.run(chunks), lambda: st.content)


class OpenRouterErrorsAllServerErrors(OpenRouterChatAdapter):
    """Raises every HTTP error as a server error (a 402 out-of-credits or a 429 is retried)."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        err = ServerError(f"HTTP {status}")
        err.retryable = True
        return err


# -- issue 26 item 4: more Gemini defects (generateContent reference) ---------------------


class GeminiSystemLeftInContents(GeminiAdapter):
    """Sends the system prompt as the first user content instead of in `systemInstruction`."""

    def system_to_wire(self, messages: list[Message], raw: Mapping[str, Any]) -> dict[str, Any] | None:
        return None

    def contents_to_wire(self, messages: list[Message]) -> list[WireBody]:
        texts = [{"text": b["text"]} for m in messages if m.get("role") == "system" for b in m["content"]]
        out = super().contents_to_wire(messages)
        return ([{"role": "user", "parts": texts}] if texts else []) + out


class _MaxTokensBlindAccumulator(gemini_module._Accumulator):
    def stop_reason(self) -> str:
        return "end_turn" if self.finish_reason == "MAX_TOKENS" else super().stop_reason()


class GeminiMaxTokensAsEndTurn(_GeminiResponseParts):
    """Maps finishReason MAX_TOKENS to end_turn (the truncated answer looks finished)."""

    parts_reader = _MaxTokensBlindAccumulator


class _CallsAfterTextAccumulator(gemini_module._Accumulator):
    def stop_reason(self) -> str:
        return "end_turn" if self.finish_reason == "STOP" else super().stop_reason()


class GeminiFunctionCallStopAsEndTurn(_GeminiResponseParts):
    """Reads finishReason STOP as end_turn even when the turn made function calls (Gemini has
    no tool-use finish reason; the calls are the signal)."""

    parts_reader = _CallsAfterTextAccumulator


class ResponsesRefusalSentBackAsText(OpenAIResponsesAdapter):
    """Replays an assistant refusal as an `output_text` part: the turn sent back says the
    model answered what it refused."""

    def assistant_to_wire(self, message: Message) -> list[WireBody]:
        out = super().assistant_to_wire(message)
        for item in out:
            if isinstance(item.get("content"), list):
                item["content"] = [
                    {"type": "output_text", "text": p["refusal"]} if p.get("type") == "refusal" else p
                    for p in item["content"]
                ]
        return out


class _DoneAppendedStream(openai_responses_module._ResponsesStream):
    def settle_text(self, k: int, final: str) -> Iterator[StreamEvent]:
        return self.text(k, final)  # the bug: output_text.done's full text appended to the deltas


class ResponsesTextDoneAppended(OpenAIResponsesAdapter):
    """Appends `response.output_text.done`'s full `text` to the deltas already streamed (the
    event carries the whole text, not one more piece): every streamed answer doubles."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        saved, openai_responses_module._ResponsesStream = openai_responses_module._ResponsesStream, _DoneAppendedStream
        try:
            yield from super().stream_response(chunks, context)
        finally:
            openai_responses_module._ResponsesStream = saved


class ResponsesReasoningTokensAddedToOutput(OpenAIResponsesAdapter):
    """Adds `output_tokens_details.reasoning_tokens` to `output_tokens`, which already
    includes them: reasoning is billed twice."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        out = super().usage_from_wire(usage)
        if out is None or not isinstance(usage, dict):
            return out
        extra = int((usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0)
        return {**out, "output_tokens": out["output_tokens"] + extra}


class OpenRouterCachedTokensIgnored(OpenRouterChatAdapter):
    """Reads `prompt_tokens` but not `prompt_tokens_details.cached_tokens`."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        out = super().usage_from_wire(usage)
        if out is None:
            return None
        return {**out, "input_tokens": out["input_tokens"] + out["cached_input_tokens"], "cached_input_tokens": 0}


# -- the OpenRouter record's gaps an outside author found (TC105, TC609, TC907, TC801, TC903,
# TC611 had nothing to read or no case on openrouter-chat-completions) -----------------------


class OpenRouterTemperatureDropped(OpenRouterChatAdapter):
    """Sends no `temperature`, silently (OpenRouter's request takes it where OpenAI's does)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        req.body.pop("temperature", None)
        return req


class _RouterStrippedFragmentsStream(openrouter_module._RouterStream):
    def tool_call(self, call: Any) -> Iterator[StreamEvent]:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
            call = {**call, "function": {**fn, "arguments": fn["arguments"].strip()}}
        return super().tool_call(call)


class OpenRouterFragmentsStripped(OpenRouterChatAdapter):
    """Strips each streamed `tool_calls[].function.arguments` fragment (the fragments are
    pieces of one JSON text; `partial_json` is the literal fragment, contract §5.4)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        st = _RouterStrippedFragmentsStream(self, context)
        return self.cancellable(context, st.run(chunks), lambda: st.content)


class OpenRouterRequestedModelAsServed(OpenRouterChatAdapter):
    """Reports the model the request asked for as the one that served the reply (OpenRouter's
    reply names the upstream model in `model`; contract §3.3 "the actual model that served the
    call")."""

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        m = super().from_wire_response(response, request_context)
        if request_context.model:
            m.setdefault("metadata", {})["model"] = request_context.model
        return m


class OpenRouterStreamErrorAsWireFormat(OpenRouterChatAdapter):
    """Raises a generic wire-format error for OpenRouter's unified mid-stream error chunk
    (`error` beside finish_reason `error`) instead of the classified AdapterError."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        try:
            yield from super().stream_response(chunks, context)
        except AdapterError as exc:
            raise WireFormatError("unexpected chunk") from exc


class _RouterStreamErrorAsBadRequest(openrouter_module._RouterStream):
    def error_in(self, obj: Mapping[str, Any]) -> AdapterError | None:
        found = super().error_in(obj)
        return None if found is None else self.adapter.classify_error(400, obj)


class OpenRouterStreamErrorAsBadRequest(OpenRouterChatAdapter):
    """Classifies every mid-stream error as an invalid request (not retryable), whatever the
    status its `error.code` names (a 502: the provider is down)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        st = _RouterStreamErrorAsBadRequest(self, context)
        return self.cancellable(context, st.run(chunks), lambda: st.content)


class OpenRouterRetryAfterIgnored(OpenRouterChatAdapter):
    """Drops the `Retry-After` hint of a 429 ("OpenRouter may include a standard HTTP
    Retry-After response header indicating how many seconds to wait")."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        exc = super().classify_error(status, body, headers)
        if isinstance(exc, RateLimitError):
            exc.retry_after_seconds = None
        return exc


class OpenRouterErrorFinishAsEndTurn(OpenRouterChatAdapter):
    """Reads finish_reason `error` (a generation that failed) as a finished turn."""

    def stop_reason_of(self, raw: Any) -> str:
        return "end_turn" if raw == "error" else super().stop_reason_of(raw)


class OpenRouterCancelDropsRedacted(OpenRouterChatAdapter):
    """On cancel, keeps only the blocks the deltas built: a `reasoning.encrypted` block read
    before the cancel (redacted thinking, which no event carries) is lost."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        st = openrouter_module._RouterStream(self, context)
        return self.cancellable(
            context, st.run(chunks), lambda: [b for b in st.content if b.get("type") != "redacted_thinking"]
        )


def _without_redacted(snapshot: Any) -> Any:
    return None if snapshot is None else (lambda: [b for b in snapshot() if b.get("type") != "redacted_thinking"])


class AnthropicCancelDropsRedacted(AnthropicAdapter):
    """On cancel, loses a `redacted_thinking` block read before it (it has no delta event:
    only the content the deltas built is kept)."""

    def cancellable(
        self, ctx: RequestContext, events: Iterator[StreamEvent], snapshot: Any = None
    ) -> Iterator[StreamEvent]:
        return super().cancellable(ctx, events, _without_redacted(snapshot))


class BedrockCancelDropsRedacted(BedrockAdapter):
    """On cancel, loses a `redactedContent` block read before it (redacted_thinking, which no
    canonical event carries)."""

    def cancellable(
        self, ctx: RequestContext, events: Iterator[StreamEvent], snapshot: Any = None
    ) -> Iterator[StreamEvent]:
        return super().cancellable(ctx, events, _without_redacted(snapshot))


class _StrippedFragmentsStream(openai_chat_module._ChatStream):
    def tool_call(self, call: Any) -> Iterator[StreamEvent]:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
            call = {**call, "function": {**fn, "arguments": fn["arguments"].strip()}}
        return super().tool_call(call)


class ChatArgumentFragmentsStripped(OpenAIChatAdapter):
    """Strips each streamed `function.arguments` fragment before joining them (the fragments
    are pieces of one JSON text, spaces inside its strings included)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        saved, openai_chat_module._ChatStream = openai_chat_module._ChatStream, _StrippedFragmentsStream
        try:
            yield from super().stream_response(chunks, context)
        finally:
            openai_chat_module._ChatStream = saved


def _without_refusal(msg: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in msg.items() if k != "refusal"}


class _RefusalBlindChatStream(openai_chat_module._ChatStream):
    def chunk(self, obj: dict[str, Any]) -> Iterator[StreamEvent]:
        choices = obj.get("choices")
        if isinstance(choices, list):
            obj = {
                **obj,
                "choices": [
                    {**c, "delta": _without_refusal(c["delta"])}
                    if isinstance(c, dict) and isinstance(c.get("delta"), dict)
                    else c
                    for c in choices
                ],
            }
        return super().chunk(obj)


class ChatRefusalDropped(OpenAIChatAdapter):
    """Reads neither a reply's `message.refusal` nor a stream's `delta.refusal` (an adapter
    that knows only `content`): a refused reply parses as an empty message, streamed and not,
    and the provider's refusal text is lost."""

    def content_from_wire(self, session_id: str, msg: Mapping[str, Any], *, reasoning: bool = False) -> list[Block]:
        return super().content_from_wire(session_id, _without_refusal(msg), reasoning=reasoning)

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        saved, openai_chat_module._ChatStream = openai_chat_module._ChatStream, _RefusalBlindChatStream
        try:
            yield from super().stream_response(chunks, context)
        finally:
            openai_chat_module._ChatStream = saved


# -- Amazon Bedrock Converse: planted defects in the bedrock reference adapter (issue 27) --------


class BedrockSilentDrop(BedrockAdapter):
    """Drops blocks Converse cannot carry without the WARN line."""

    def drop(self, message: Message, index: int | None, block_type: str, reason: str) -> None:
        return None


class BedrockSystemDropped(BedrockAdapter):
    """Sends no top-level `system` list."""

    def system_to_wire(self, messages: list[Message]) -> list[dict[str, Any]]:
        return []


class BedrockErrorsAsMessages(BedrockAdapter):
    """Reads an HTTP error body as an empty reply."""

    def from_wire_response(self, response: WireResponse | dict[str, Any], request_context: RequestContext) -> Message:
        if isinstance(response, WireResponse) and response.status >= 400:
            return self.assemble(request_context, [], wire_model=None, token_usage={})
        return super().from_wire_response(response, request_context)


class BedrockHeaderIgnored(BedrockAdapter):
    """Classifies by the HTTP status alone, never reading `x-amzn-ErrorType` (a 424
    ModelErrorException then reads as an invalid request)."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        return super().classify_error(status, body, {})


class BedrockThrottleFrameAsServerError(BedrockAdapter):
    """Raises a server error for every exception frame of the event stream."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        try:
            yield from super().stream_response(chunks, context)
        except RateLimitError as exc:
            raise ServerError(str(exc), retryable=True) from None


class BedrockStopAlwaysEndTurn(BedrockAdapter):
    """Streams `end_turn` whatever messageStop said (tool_use, max_tokens)."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            yield {**e, "stop_reason": "end_turn"} if e["type"] == "message_complete" else e


class BedrockSignatureOnEveryDelta(BedrockAdapter):
    """Puts the block's signature on every thinking_delta, not only on its last."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        events = list(super().stream_response(chunks, context))
        sigs = {
            e["content_block_index"]: e["signature"] for e in events if e["type"] == "thinking_delta" and e["signature"]
        }
        for e in events:
            k = e.get("content_block_index")
            yield {**e, "signature": sigs[k]} if e["type"] == "thinking_delta" and k in sigs else e


class BedrockFragmentsJoined(BedrockAdapter):
    """Streams each tool call's input as one delta at its end, not the provider's fragments."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "tool_use_input_delta":
                continue
            if e["type"] == "tool_use_end":
                yield {**e, "type": "tool_use_input_delta", "partial_json": json.dumps(e["final_input"])}
                yield e
            else:
                yield e


class BedrockErrorStatusNotSent(BedrockAdapter):
    """Never sends `status: "error"` on a toolResult (and logs nothing)."""

    def tool_message_to_wire(self, message: Message) -> list[dict[str, Any]]:
        out = super().tool_message_to_wire(message)
        for w in out:
            if isinstance(w.get("toolResult"), dict):
                w["toolResult"].pop("status", None)
        return out


class BedrockContextWindowAsEndTurn(BedrockAdapter):
    """Reads stopReason `model_context_window_exceeded` as end_turn (the record maps it to
    max_tokens); no cassette records it, so only a scripted case shows it (issue 43 item 5)."""

    def stop_reason_of(self, raw: Any) -> str:
        return "end_turn" if raw == "model_context_window_exceeded" else super().stop_reason_of(raw)


class BedrockModelNotReadyAsServerError(BedrockAdapter):
    """Classes a ModelNotReadyException (the record: rate_limit) as a server error; no cassette
    records one, so only a scripted error answer shows it (issue 43 item 5)."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> Any:
        err = super().classify_error(status, body, headers)
        kind = {str(k).lower(): v for k, v in (headers or {}).items()}.get("x-amzn-errortype", "")
        if "ModelNotReadyException" in str(kind):
            mine = ServerError(err.provider_message, provider_status=status, retryable=True)
            mine.request_id = err.request_id
            return mine
        return err


class BedrockRedactedLostInStream(BedrockAdapter):
    """Leaves redacted reasoning out of a streamed reply's final content."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e["type"] == "message_complete":
                e = {**e, "final_content": [b for b in e["final_content"] if b["type"] != "redacted_thinking"]}
            yield e


class BedrockChunkBoundaryBlind(BedrockAdapter):
    """Keeps only the whole frames of each chunk: a frame cut by a chunk boundary is lost."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        kept = b""
        for c in chunks:
            data = c if isinstance(c, bytes) else c.encode()
            i = 0
            while i + 4 <= len(data):
                total = int.from_bytes(data[i : i + 4], "big")
                if total < 16 or i + total > len(data):
                    break
                kept += data[i : i + total]
                i += total
        return super().stream_response([kept], context)


class BedrockModelInBody(BedrockAdapter):
    """Puts `model` and `stream` in the body, as Chat Completions does (Converse takes them
    from the URL and refuses unknown members)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        req = super().to_wire(messages, tools, options)
        return replace(req, body={"model": options.wire_model, **req.body, "stream": options.stream})


class BedrockImageFormatAsMediaType(BedrockAdapter):
    """Sends `image.format` as the media type (`image/png`); ImageFormat is `png`."""

    def image_to_wire(self, message: Message, index: int, block: Block) -> dict[str, Any] | None:
        img = super().image_to_wire(message, index, block)
        return None if img is None else {**img, "format": block["media_type"]}


class BedrockCacheBucketsSwapped(BedrockAdapter):
    """Reads cacheReadInputTokens as cache writes and cacheWriteInputTokens as reads."""

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        u = super().usage_from_wire(usage)
        if u is not None:
            u["cached_input_tokens"], u["cache_creation_input_tokens"] = (
                u["cache_creation_input_tokens"],
                u["cached_input_tokens"],
            )
        return u


class BedrockEveryRequestToOnePath(BedrockAdapter):
    """Renders every request to `/model/x/converse`: one model, never the stream operation
    (ConverseStream is `POST /model/modelId/converse-stream`)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        return replace(super().to_wire(messages, tools, options), path="/model/x/converse")


# -- Claude on Bedrock InvokeModel: a wire API turnspec does not ship (issue 43) -----------
# The third party's adapter (tests/third_party/their_bedrock_invoke.py), loaded as `turnspec
# conform path.py:Attr` loads it (under its file's name, which registers its record once).
THIRD_PARTY = Path(__file__).resolve().parent / "third_party"
TheirBedrockInvoke: type = type(
    adapter_registry.load(f"{THIRD_PARTY / 'their_bedrock_invoke.py'}:TheirBedrockInvokeAdapter")
)


def _invoke_path(wire: WireRequest, model_segment: str) -> WireRequest:
    operation = wire.path.rsplit("/", 1)[1]
    return replace(wire, path=f"/model/{model_segment}/{operation}")


class InvokeModelIdCutAtColon(TheirBedrockInvoke):  # type: ignore[misc, valid-type]
    """Names `anthropic.claude-3-haiku-20240307-v1` for `...-v1:0`: the model id cut at its
    first `:` (canonical §6.3: the model name is what follows the provider's prefix, whole)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        return _invoke_path(wire, quote(options.model_for(self.provider).split(":")[0], safe=""))


class InvokeModelIdNotPercentEncoded(TheirBedrockInvoke):  # type: ignore[misc, valid-type]
    """Writes the model id into the path as it is (an ARN's `/` splits the path; `:` is
    left raw where Smithy's httpLabel percent-encodes it)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        return _invoke_path(super().to_wire(messages, tools, options), options.model_for(self.provider))


class InvokeModelStreamToInvoke(TheirBedrockInvoke):  # type: ignore[misc, valid-type]
    """Sends a streamed request to `/invoke`, the non-streaming operation."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        return replace(wire, path=wire.path.replace("/invoke-with-response-stream", "/invoke"))


class InvokeModelReaderIgnoresUrl(TheirBedrockInvoke):  # type: ignore[misc, valid-type]
    """Reads a recorded request from its body alone: the model and the stream choice, which
    the URL carries, are lost."""

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:  # type: ignore[override]
        return super().from_wire_request(body, session_id=session_id)


class InvokeModelIdSplitAtColon(TheirBedrockInvoke):  # type: ignore[misc, valid-type]
    """Keeps the model id it reads off a URL bare (`anthropic.claude-...-v1:0`) and sends the
    part after its first `:` (`AdapterOptions.wire_model` as earlier releases spelled it)."""

    def from_wire_request(
        self, body: WireBody, *, session_id: str | None = None, url: str | None = None
    ) -> ParsedRequest:
        parsed = super().from_wire_request(body, session_id=session_id, url=url)
        bare = parsed.options.model.removeprefix(f"{self.provider}:")
        return replace(parsed, options=replace(parsed.options, model=bare))

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        old = options.model.split(":", 1)[1] if ":" in options.model else options.model
        return _invoke_path(super().to_wire(messages, tools, options), quote(old, safe=""))


def _shouted(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**b, "text": b["text"].upper()} if b.get("type") == "text" else b for b in blocks]


class TextShouted(AnthropicAdapter):
    """Reads every reply's text upper-cased, parsed and streamed alike (deltas and final
    content), so the stream agrees with the parse (TC606) and the deltas with the final
    content (TC605): only the recording tells."""

    def from_wire_response(self, response: Any, request_context: RequestContext) -> Message:
        m = super().from_wire_response(response, request_context)
        m["content"] = _shouted(m["content"])
        return m

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e.get("type") == "text_delta":
                e = {**e, "text": e["text"].upper()}
            elif e.get("type") == "message_complete":
                e = {**e, "final_content": _shouted(list(e.get("final_content") or []))}
            yield e


# -- Claude on Vertex AI: planted defects in the opt-in vertex-anthropic adapter ------------
# (Anthropic, "Claude on Vertex AI": "In Vertex, model is not passed in the request body.
# Instead, it is specified in the Google Cloud endpoint URL."; "anthropic_version is passed
# in the request body (rather than as a header)"; Google's REST reference: rawPredict and
# streamRawPredict are two methods)


class VertexStreamInBody(VertexAnthropicAdapter):
    """Asks for a stream the way Anthropic's own API does, by `stream: true` in the body, and
    sends every request to `:rawPredict` (the URL's method is what streams on Vertex AI)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        return replace(wire, path=wire.path.replace(":streamRawPredict", ":rawPredict"))


class VertexModelNotInUrl(VertexAnthropicAdapter):
    """Keeps the model in the body, as Anthropic's own API takes it, and names none in the
    URL (`.../publishers/anthropic/models:rawPredict`)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        method = wire.path.rsplit(":", 1)[1]
        body = {"model": options.wire_model, **wire.body}
        return replace(wire, path=f"/publishers/anthropic/models:{method}", body=body)


class VertexModelAlsoInBody(VertexAnthropicAdapter):
    """Names the model in the URL and, as Anthropic's own API takes it, in the body as well."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        return replace(wire, body={"model": options.wire_model, **wire.body})


class VertexVersionAsHeader(VertexAnthropicAdapter):
    """Sends the API version as Anthropic's own API takes it, an `anthropic-version` header,
    and no `anthropic_version` in the body."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        body = {k: v for k, v in wire.body.items() if k != "anthropic_version"}
        return replace(wire, headers={**wire.headers, "anthropic-version": "2023-06-01"}, body=body)


class VertexReaderIgnoresUrl(VertexAnthropicAdapter):
    """Reads a recorded request from its body alone: the model, which only the URL names, is lost."""

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:  # type: ignore[override]
        return super().from_wire_request(body, session_id=session_id)


# -- Claude on Bedrock InvokeModel: planted defects in the opt-in bedrock-anthropic adapter --
# (AWS's InvokeModel references: two operations, the modelId a URI label; the Claude page:
# "anthropic_version – (Required) ... The value must be bedrock-2023-05-31")


class BedrockAnthropicStreamInBody(BedrockAnthropicAdapter):
    """Asks for a stream by `stream: true` in the body, as Anthropic's own API does, and
    sends every request to `/invoke` (InvokeModelWithResponseStream is its own operation)."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        body = {**wire.body, "stream": True} if options.stream else wire.body
        return replace(wire, path=wire.path.replace("/invoke-with-response-stream", "/invoke"), body=body)


class BedrockAnthropicModelRaw(BedrockAnthropicAdapter):
    """Writes the model id into the path as it is (`...-v1:0`, an ARN's `/` splitting the
    path), where the URI label is percent-encoded."""

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        wire = super().to_wire(messages, tools, options)
        operation = wire.path.rsplit("/", 1)[1]
        return replace(wire, path=f"/model/{options.wire_model}/{operation}")


class BedrockAnthropicVertexVersion(BedrockAnthropicAdapter):
    """Sends Vertex AI's `anthropic_version` (vertex-2023-10-16), not Bedrock's."""

    anthropic_version: ClassVar[str] = "vertex-2023-10-16"


class BedrockAnthropicChunksAsSse(BedrockAnthropicAdapter):
    """Reads the stream as Anthropic's SSE, not as the event stream's chunks."""

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return AnthropicAdapter.stream_response(self, chunks, context)


class BedrockAnthropicThrottleFrameAsServerError(BedrockAnthropicAdapter):
    """Classes every error the stream reports as a server error (a `throttlingException`
    frame is ThrottlingException: a rate limit)."""

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        if isinstance(body, dict) and body.get("type") == "error":
            return ServerError(str(body), retryable=True)
        return super().classify_error(status, body, headers)


def _renamed(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**b, "name": b["name"].lower() + "_tool"} if b.get("type") == "tool_use" else b for b in blocks]


class ToolRenamed(AnthropicAdapter):
    """Reads every reply's tool call under another name, parsed and streamed alike (the
    start event, the final content), so the stream agrees with the parse (TC606) and the
    events with the final content (TC605): only the recording tells."""

    def from_wire_response(self, response: Any, request_context: RequestContext) -> Message:
        m = super().from_wire_response(response, request_context)
        m["content"] = _renamed(m["content"])
        return m

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        for e in super().stream_response(chunks, context):
            if e.get("type") in ("tool_use_start", "tool.use_start") and isinstance(e.get("name"), str):
                e = {**e, "name": e["name"].lower() + "_tool"}
            elif e.get("type") == "message_complete":
                e = {**e, "final_content": _renamed(list(e.get("final_content") or []))}
            yield e


MUTANTS: dict[type, str] = {
    SilentDrop: "TC201",
    WarnMissingField: "TC201",
    ReusedProviderId: "TC303",
    UnpairedAfterSwap: "TC305",
    SystemLeftInMessages: "TC403",
    ImagesDeclaredButDropped: "TC501",
    StreamIndexBackwards: "TC602",
    ArgumentsNotStringified: "TC104",
    UsageMissing: "TC101",
    ForeignSignatureSent: "TC405",
    RedactedDataAltered: "TC405",
    AnthropicSignatureLostOnParse: "TC405",
    CriticalIgnored: "TC203",
    ProviderIdAsCanonical: "TC301",
    StreamNoToolEnd: "TC603",
    FinalInputEmpty: "TC604",
    ForgetsProviderIds: "TC302",
    ErrorsParsedAsMessages: "TC801",
    EstimateZero: "TC701",
    ThinkingLeakedAsText: "TC202",
    CapabilitiesIncomplete: "TC001",
    RoundTripLosesOptions: "TC802",
    ChunkBoundaryBlind: "TC607",
    StreamUsageDropped: "TC606",
    DataUrlReadBackAsUrl: "TC901",
    ImageMediaTypeLost: "TC901",
    IsErrorDropped: "TC902",
    IsErrorNotSent: "TC902",
    StopReasonAlwaysEndTurn: "TC903",
    CachedTokensLost: "TC904",
    UsageReadingMixed: "TC904",
    OutputTokensOffByOne: "TC904",
    SignatureInWrongField: "TC501",
    StreamUsageNotRequested: "TC905",
    MaxTokensIgnored: "TC105",
    RequestedModelReported: "TC907",
    CumulativeTextDeltas: "TC605",
    UsageZeroWhenMissing: "TC906",
    EstimateWithoutWarn: "TC906",
    StreamErrorAsServerError: "TC801",
    StreamErrorSwallowed: "TC801",
    FirstStopSequenceOnly: "TC105",
    CohereTemperatureDropped: "TC105",
    CohereStreamLosesLastDelta: "TC605",
    CohereStopReasonIgnored: "TC903",
    CohereStreamUsageDropped: "TC606",
    CohereDataUrlAsUrl: "TC901",
    CohereSystemAfterUser: "TC403",
    CohereArgumentsAsObject: "TC104",
    CohereForgetsToolIds: "TC302",
    CohereSilentDrop: "TC201",
    CohereErrorsAsMessages: "TC801",
    CohereChunkBoundaryBlind: "TC607",
    MixedEventNames: "TC608",
    RaisesWithoutClosing: "TC601",
    PartialJsonReassembled: "TC609",
    SignatureOnEveryDelta: "TC610",
    CancelledAsEndTurn: "TC611",
    CancelIgnored: "TC611",
    CancelLeavesToolOpen: "TC611",
    ThinkingRejectedWithCrash: "TC502",
    ErrorBaseClassOnly: "TC801",
    ErrorRequestIdLost: "TC801",
    OverloadedAsServerError: "TC801",
    ErrorNeverRetryable: "TC801",
    RawFromAnyProvider: "TC406",
    RawNotStorable: "TC406",
    OwnRawIgnored: "TC802",
    OptionsRawFromAnyProvider: "TC406",
    StreamToolDeltasWithheld: "TC503",
    ParallelReadBackFirstOnly: "TC503",
    OutputLimitOverContext: "TC503",
    EstimateCapped: "TC503",
    CacheWritesForgotten: "TC503",
    ReadBackToolMessageUnlinked: "TC102",
    StreamIndexAsText: "TC103",
    ProviderIdBreaksRule: "TC304",
    ReplayLosesToolInput: "TC401",
    ReplayResultsUnpaired: "TC402",
    ForeignThinkingDroppedSilently: "TC404",
    ImagesDeclaredFalseButSent: "TC502",
    GeminiSilentDrop: "TC201",
    GeminiCriticalIgnored: "TC203",
    GeminiSystemDropped: "TC403",
    GeminiErrorsAsMessages: "TC801",
    GeminiStopAlwaysEndTurn: "TC903",
    GeminiThoughtsNotBilled: "TC904",
    GeminiEstimateZero: "TC701",
    GeminiChunkBoundaryBlind: "TC607",
    GeminiSignatureNotSentBack: "TC405",
    GeminiResponseSignatureLost: "TC405",
    GeminiThoughtsReadAsText: "TC405",
    GeminiPartsJoinedWithNewline: "TC606",
    GeminiResponseNameGeneric: "TC802",
    GeminiMintedIdsShared: "TC303",
    GeminiMintedResultsShifted: "TC302",
    GeminiWireIdReminted: "TC303",
    GeminiIdsIgnoreReply: "TC303",
    GeminiWireIdAltered: "TC302",
    GeminiIdlessResultsNewestFirst: "TC305",
    GeminiImageMimeHardcoded: "TC901",
    GeminiImageReadAsPng: "TC802",
    GeminiFileDataReadAsInline: "TC901",
    GeminiStreamDropsCalls: "TC606",
    GeminiStreamDropsThoughts: "TC605",
    GeminiStreamSignatureLost: "TC405",
    GeminiCachedTokensIgnored: "TC904",
    GeminiRolesSwappedOnRead: "TC802",
    GeminiToolErrorNotSent: "TC902",
    GeminiToolErrorLostOnRead: "TC902",
    GeminiSignatureOnFirstPart: "TC802",
    OllamaSilentDrop: "TC201",
    OllamaSystemDropped: "TC403",
    OllamaErrorsAsMessages: "TC801",
    OllamaImagesNotSent: "TC501",
    OllamaStopAlwaysEndTurn: "TC903",
    OllamaPromptCountAsOutput: "TC904",
    OllamaArgumentsAsString: "TC104",
    OllamaImageDataUrl: "TC901",
    OllamaImagesOnLastMessage: "TC901",
    OllamaImagesOverwritten: "TC901",
    OllamaImageTypeNotSniffed: "TC901",
    OllamaThinkingLostOnParse: "TC606",
    OllamaThinkingNotSentBack: "TC405",
    OllamaToolResultAsUser: "TC305",
    OllamaToolNameMissing: "TC802",
    OllamaToolResultFirstTextOnly: "TC401",
    OllamaChunkBoundaryBlind: "TC607",
    OllamaLengthNotMapped: "TC903",
    OllamaUnstableToolIds: "TC305",
    OllamaLastContentDropped: "TC401",
    OllamaNumPredictMissing: "TC105",
    OllamaStreamFalseOmitted: "TC802",
    OllamaIdsIgnoreReply: "TC303",
    ResponsesRefusalReadAsEmpty: "TC903",
    GeminiBlockedPromptAsComplete: "TC903",
    GeminiStreamErrorIgnored: "TC801",
    OllamaStreamErrorAsWireFormat: "TC801",
    ChatStreamErrorAsWireFormat: "TC801",
    OllamaSchemaInSystemMessage: "TC501",
    GeminiSchemaInSystemInstruction: "TC501",
    ResponsesSchemaInInstructions: "TC501",
    ChatSchemaInSystemMessage: "TC501",
    GeminiUrlSafeOtherImageBytes: "TC901",
    GeminiUrlSafeOtherBytesRoundTrip: "TC802",
    GeminiUrlSafeSignatureAltered: "TC405",
    GeminiUrlSafeParsedSignatureAltered: "TC606",
    ChatEmptyContentTextDropped: "TC401",
    ChatToolContentAbsent: "TC802",
    ChatToolErrorInBandDeclaredButLost: "TC902",
    ResponsesStopOnWire: "TC105",
    ResponsesStopDroppedSilently: "TC105",
    OllamaUrlImageAsText: "TC202",
    GeminiFileRefDroppedSilently: "TC201",
    ChatForeignCallIdsVerbatim: "TC304",
    AnthropicForeignCallIdsVerbatim: "TC304",
    AnthropicSignatureDroppedOnToolUse: "TC405",
    AnthropicThinkingDroppedWithWarn: "TC405",
    ResponsesCachedTokensIgnored: "TC904",
    ResponsesIncompleteAsEndTurn: "TC903",
    ResponsesReasoningIdLost: "TC802",
    ResponsesEncryptedContentDropped: "TC802",
    ResponsesCallIdMismatch: "TC305",
    ResponsesStreamedArgumentsDoubled: "TC606",
    ResponsesStreamFailedAsCompleted: "TC801",
    ResponsesErrorCodeIgnored: "TC801",
    ResponsesInstructionsAsUserMessage: "TC403",
    ResponsesSilentDrop: "TC201",
    ResponsesDataUrlMediaTypeLost: "TC901",
    OpenRouterDetailsNotSentBack: "TC405",
    OpenRouterSignatureDropped: "TC405",
    OpenRouterDetailsReordered: "TC802",
    OpenRouterEncryptedReadAsText: "TC606",
    OpenRouterStreamReasoningIgnored: "TC606",
    OpenRouterErrorsAllServerErrors: "TC801",
    GeminiSystemLeftInContents: "TC403",
    GeminiMaxTokensAsEndTurn: "TC903",
    GeminiFunctionCallStopAsEndTurn: "TC903",
    ResponsesRefusalSentBackAsText: "TC802",
    ResponsesTextDoneAppended: "TC606",
    ResponsesReasoningTokensAddedToOutput: "TC904",
    OpenRouterCachedTokensIgnored: "TC904",
    OpenRouterTemperatureDropped: "TC105",
    OpenRouterFragmentsStripped: "TC609",
    OpenRouterRequestedModelAsServed: "TC907",
    OpenRouterStreamErrorAsWireFormat: "TC801",
    OpenRouterStreamErrorAsBadRequest: "TC801",
    OpenRouterRetryAfterIgnored: "TC801",
    OpenRouterErrorFinishAsEndTurn: "TC903",
    OpenRouterCancelDropsRedacted: "TC611",
    AnthropicCancelDropsRedacted: "TC611",
    BedrockCancelDropsRedacted: "TC611",
    ChatArgumentFragmentsStripped: "TC609",
    ChatRefusalDropped: "TC903",
    BedrockSilentDrop: "TC201",
    BedrockSystemDropped: "TC403",
    BedrockErrorsAsMessages: "TC801",
    BedrockHeaderIgnored: "TC801",
    BedrockThrottleFrameAsServerError: "TC801",
    BedrockStopAlwaysEndTurn: "TC903",
    BedrockSignatureOnEveryDelta: "TC610",
    BedrockFragmentsJoined: "TC609",
    BedrockErrorStatusNotSent: "TC902",
    BedrockRedactedLostInStream: "TC606",
    BedrockChunkBoundaryBlind: "TC607",
    BedrockModelInBody: "TC104",
    BedrockImageFormatAsMediaType: "TC104",
    BedrockCacheBucketsSwapped: "TC904",
    BedrockEveryRequestToOnePath: "TC109",
    InvokeModelIdCutAtColon: "TC109",
    InvokeModelIdNotPercentEncoded: "TC109",
    InvokeModelStreamToInvoke: "TC109",
    InvokeModelReaderIgnoresUrl: "TC802",
    InvokeModelIdSplitAtColon: "TC802",
    BedrockContextWindowAsEndTurn: "TC903",
    BedrockModelNotReadyAsServerError: "TC801",
    TextShouted: "TC908",
    VertexStreamInBody: "TC109",
    VertexModelNotInUrl: "TC109",
    VertexModelAlsoInBody: "TC104",
    VertexVersionAsHeader: "TC104",
    VertexReaderIgnoresUrl: "TC802",
    BedrockAnthropicStreamInBody: "TC109",
    BedrockAnthropicModelRaw: "TC109",
    BedrockAnthropicVertexVersion: "TC104",
    BedrockAnthropicChunksAsSse: "TC606",
    BedrockAnthropicThrottleFrameAsServerError: "TC801",
    ToolRenamed: "TC909",
}
# where each adapter's own cassettes live (the project's for its adapters)
CASSETTES = {
    "cohere-chat": "tests/third_party/cassettes/cohere",
    "gemini-minting": "cassettes/gemini",
    "gemini-urlsafe": "cassettes/gemini",
    "openai-chat-empty-content": "cassettes/openai-chat",
    "their-bedrock-invoke": "tests/third_party/cassettes/their-bedrock-invoke",
}
