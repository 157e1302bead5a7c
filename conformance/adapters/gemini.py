"""The Gemini API adapter: `models.generateContent` and `models.streamGenerateContent`.

Wire format as documented by Google (the record `conformance.wire.gemini.GEMINI` holds the
facts; its docstring says what each page says):

- https://ai.google.dev/api/generate-content (methods, GenerateContentResponse, Candidate,
  FinishReason, UsageMetadata; `alt=sse` streaming)
- https://ai.google.dev/api/caching#Content (Content, Part, Blob, FileData, FunctionCall,
  FunctionResponse)
- https://ai.google.dev/gemini-api/docs/function-calling (parallel calls, functionResponse
  `output` / `error` keys, optional call ids)
- https://ai.google.dev/gemini-api/docs/thinking and
  https://ai.google.dev/gemini-api/docs/thought-signatures (thought parts, `thoughtSignature`
  on any part, "pass it back exactly as received")
- https://ai.google.dev/gemini-api/docs/image-understanding (inlineData, fileData, image
  token costs)
- https://ai.google.dev/gemini-api/docs/caching (cachedContentTokenCount)
- https://ai.google.dev/gemini-api/docs/troubleshooting (error statuses)

Mapping (canonical <-> wire):

- SYSTEM messages -> `systemInstruction.parts` (one text part per text block); USER ->
  `role: user`; ASSISTANT -> `role: model`; TOOL -> `functionResponse` parts of one `user`
  content (consecutive tool messages share it, as parallel results must).
- The model and the stream choice are in the URL: `/v1beta/models/{model}:generateContent`,
  or `:streamGenerateContent?alt=sse` (SSE). Pass `provider_raw={"gemini": {"framing":
  "json-array"}}` for the JSON-array stream, `{"path_prefix": ...}` for Vertex AI paths.
- Thought parts (`thought: true`) <-> thinking blocks. A `thoughtSignature` on a non-thought
  part becomes a thinking block with empty text holding the signature, just before the
  block of the part that carried it; serializing re-attaches it to the next part (or sends
  an empty text part carrying it when nothing follows, as the API does at a stream's end).
  Signatures are Gemini's opaque state: thinking issued by another provider (checked on
  `metadata.provider`) is dropped with the §7.3 WARN line, as is redacted thinking.
  Gemini 3 rejects function calls of the current turn that carry no signature; for calls
  another provider issued, `provider_raw={"gemini": {"foreign_call_signature":
  "skip_thought_signature_validator"}}` sends the placeholder the thought-signatures page
  documents (opt-in: the default sends no signature Gemini did not issue).
- Function calls may carry no id (older models). Their canonical `tu_` id is derived
  deterministically (conformance.core.ids) from the session, the response id, the call's
  position, name and arguments, and bound in the tool-id map to a provider key that is
  never sent: such calls and their results go back without `id` and pair by name and
  order, as the API pairs them. Calls first serialized here get a client id (`call_...`),
  which the API accepts and echoes.
- A tool result is `functionResponse.response = {"output": text}`, or `{"error": text}`
  when `is_error` (the documented keys); any other recorded response object is kept in
  `provider_raw` and restored. Images inside tool results are dropped with WARN.
- Usage (the contract's §7.2 names no Gemini mapping; this follows `UsageMetadata` in the
  API reference): input = promptTokenCount + toolUsePromptTokenCount -
  cachedContentTokenCount (promptTokenCount includes the cached content), output =
  candidatesTokenCount + thoughtsTokenCount (thoughts are billed as output but not counted
  in candidates), cached_input = cachedContentTokenCount, cache creation 0 (explicit caches
  are created by a separate call). Disjoint buckets, as for OpenAI; every chunk of a stream
  carries cumulative usageMetadata, nothing to request.
- Stop reasons per `conformance.wire.gemini.STOP_REASONS`; STOP with functionCall parts is
  `tool_use`. Enum fields sent as numbers (`enum-encoding=int`) read as their names.
- Streamed function-call arguments (Gemini 3, `streamFunctionCallArguments`): a functionCall
  with `willContinue: true` opens a call; the nameless functionCalls that follow carry
  `partialArgs` (`{jsonPath, stringValue|numberValue|boolValue|nullValue, willContinue}`;
  strings at one jsonPath with `willContinue` concatenate) until one without
  `willContinue` closes it: one tool_use, its arguments relayed as `tool_use_input_delta`s
  whose concatenation is the final input's JSON.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from ..core import ids
from ..wire.api import Framing
from ..wire.gemini import (
    STOP_REASONS,
    block_reason,
    field,
    finish_reason,
    framing_by_url,
    is_streaming,
    model_of,
    usage_of,
)
from ._shared import StreamState, tool_extra
from .base import (
    AdapterError,
    AdapterOptions,
    AuthError,
    BaseAdapter,
    Block,
    CancellableStreams,
    ContextOverflowError,
    InvalidRequestError,
    Message,
    ParsedRequest,
    RateLimitError,
    RequestContext,
    ServerError,
    StreamCutError,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireFormatError,
    WireRequest,
    WireResponse,
    error_for_status,
    estimated_usage,
    message_from_stream,
    new_ulid,
    request_message,
    sse_events,
)
from .estimate import image_block_size, json_tokens, text_tokens

# https://ai.google.dev/gemini-api/docs/image-understanding "Supported image formats"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif")
NO_ID = "gemini-noid:"  # provider-side key of a call the API issued without an id (never sent)
DEFAULT_PREFIX = "/v1beta/models/"
MAX_ELEMENT_CHARS = 32 * 1024 * 1024  # one streamed GenerateContentResponse; bounds memory on hostile input
# google.rpc status -> adapter contract §6.1 class
_STATUS_HINT = {
    "RESOURCE_EXHAUSTED": RateLimitError,
    "UNAUTHENTICATED": AuthError,
    "PERMISSION_DENIED": AuthError,
    "INTERNAL": ServerError,
    "UNAVAILABLE": ServerError,
    "DEADLINE_EXCEEDED": ServerError,
    "INVALID_ARGUMENT": InvalidRequestError,
    "FAILED_PRECONDITION": InvalidRequestError,
    "NOT_FOUND": InvalidRequestError,
}
_OVERFLOW = re.compile(r"token count.*exceeds|exceeds the maximum number of tokens|context (window|length)", re.I)
_PART_KINDS = ("text", "inlineData", "fileData", "functionCall", "functionResponse")
_KNOWN_CONFIG = ("maxOutputTokens", "temperature", "stopSequences", "responseMimeType", "responseJsonSchema")


def _camel(key: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def _part_kind(part: Mapping[str, Any]) -> str | None:
    for k in _PART_KINDS:
        if field(part, k)[1] is not None:
            return k
    return None


SIGNATURE_NOT_COUNTED = ("gemini-2.5-pro",)
"""Models whose promptTokenCount leaves out thought signatures sent back (see
`GeminiAdapter.estimate_input_tokens`)."""
DECLARATIONS_CHEAP = ("gemini-2.0-",)
"""Models whose promptTokenCount charges function declarations about 2 tokens plus a
quarter of their JSON, not 6 plus three fifths as 2.5 and 3 do: the first turn of
pydantic-ai's test_google_tool_output (gemini-2.0-flash, two tools) counted 20 tokens for
them and test_multiple_agent_tool_calls (gemini-2.0-flash-exp, one tool) 14, where the
2.5/3 rule says 49 and 34."""


class GeminiAdapter(CancellableStreams, BaseAdapter):
    """Canonical <-> Gemini API `generateContent` / `streamGenerateContent`."""

    name: ClassVar[str] = "gemini"
    provider: ClassVar[str] = "gemini"
    wire_api: ClassVar[str] = "gemini-generate-content"
    # ids are optional and opaque on this API; any non-empty string is accepted from clients
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^\S+$")
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": True,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        # responseMimeType application/json + responseJsonSchema
        "supports_structured_output": True,
        "supports_streaming": True,
        # a streamed functionCall arrives whole in one chunk unless the request asks Gemini 3
        # (Vertex AI) for `streamFunctionCallArguments`: deltas only then, so not declared
        "supports_streaming_tool_calls": False,
        "supports_parallel_tool_calls": True,
        # implicit caching is reported (cachedContentTokenCount); explicit caches need a
        # separate cachedContents call this adapter does not make
        "supports_prompt_caching": True,
        "supports_system_messages_in_list": False,
        "max_context_tokens": 1_048_576,
        "max_output_tokens": 65_536,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def __init__(self) -> None:
        super().__init__()
        self._names: dict[str, dict[str, str]] = {}  # session -> canonical call id -> function name
        self._foreign_signature: str | None = None  # set per to_wire from provider_raw (opt-in)

    def new_provider_tool_id(self) -> str:
        return "call_" + new_ulid()

    # -- tool ids ---------------------------------------------------------------------------

    def call_id_from_wire(self, sid: str, wire_id: Any, *key: Any) -> str:
        """The canonical id of a wire functionCall: mapped from its id, or derived when it has none.

        Derived ids are a pure function of the session and `key` (where the call sits: the
        response id or request position, the call's ordinal, its name and arguments), so
        parsing the same body twice gives the same ids. Two id-less responses without a
        `responseId` holding the same call at the same position would share an id: the
        API gives nothing else to tell them apart.
        """
        if isinstance(wire_id, str) and wire_id:
            return self.tool_id_map(sid).canonical_for(wire_id)
        cid = ids.derived_tool_id(0, sid, *(str(k) for k in key))
        self.tool_id_map(sid).bind(cid, NO_ID + cid)
        return cid

    def remember_call_name(self, sid: str, cid: str, name: str) -> None:
        """The function name of a call read from the wire (its result names it back)."""
        self._names.setdefault(sid, {})[cid] = name

    def wire_call_id(self, sid: str, canonical_id: str) -> str | None:
        """The id to send for a canonical call (None: the API issued none, so none is sent)."""
        pid = self.tool_id_map(sid).provider_for(canonical_id)
        return None if pid.startswith(NO_ID) else pid

    # -- canonical -> wire --------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        raw = options.provider_raw.get(self.name) or {}
        self._foreign_signature = raw.get("foreign_call_signature")
        body: WireBody = {"contents": self.contents_to_wire(messages)}
        system = self.system_to_wire(messages, raw)
        if system is not None:
            body["systemInstruction"] = system
        decls = [self.tool_to_wire(t, raw) for t in tools]
        dkey = (raw.get("tool_extras") or {}).get("_declarations_key", "functionDeclarations")
        wire_tools = _tools_laid_out(decls, [dict(t) for t in options.provider_tools], dkey, raw)
        if len(wire_tools) == 1 and raw.get("tools_object"):
            body["tools"] = wire_tools[0]  # recorded as one object, which the API also accepts
        elif wire_tools:
            body["tools"] = wire_tools
        config: dict[str, Any] = {}
        if options.max_output_tokens is not None:
            config["maxOutputTokens"] = options.max_output_tokens
        if options.temperature is not None:
            config["temperature"] = options.temperature
        if options.stop_sequences:
            config["stopSequences"] = list(options.stop_sequences)
        if options.output_schema is not None:
            config["responseMimeType"] = "application/json"
            config["responseJsonSchema"] = dict(options.output_schema)
        extra = dict(options.extra)
        more = extra.pop("generationConfig", None)
        if isinstance(more, Mapping):
            config = {**more, **config}
        if config or more is not None:
            body["generationConfig"] = config
        for k, v in extra.items():
            body.setdefault(k, v)
        method = "streamGenerateContent" if options.stream else "generateContent"
        query = "?alt=sse" if options.stream and raw.get("framing") != "json-array" else ""
        path = f"{raw.get('path_prefix', DEFAULT_PREFIX)}{options.wire_model}:{method}{query}"
        return WireRequest("POST", path, {"content-type": "application/json"}, body)

    def system_to_wire(self, messages: list[Message], raw: Mapping[str, Any]) -> WireBody | None:
        """Every SYSTEM text block, one part each (the API joins parts as paragraphs)."""
        parts: list[Block] = []
        for m in messages:
            if m.get("role") != "system":
                continue
            for i, b in enumerate(m.get("content", [])):
                if b.get("type") == "text":
                    parts.append({"text": b["text"]})
                else:
                    self.drop(m, i, str(b.get("type")), "systemInstruction carries text only")
        if not parts:
            return None
        out: WireBody = {"parts": parts}
        if raw.get("system_role"):
            out["role"] = raw["system_role"]
        return out

    def contents_to_wire(self, messages: list[Message]) -> list[WireBody]:
        out: list[WireBody] = []
        tool_group = False
        for m in messages:
            role = m.get("role")
            sid = str(m.get("session_id", ""))
            names = self._names.setdefault(sid, {})
            if role == "assistant":
                for b in m.get("content", []):
                    if b.get("type") == "tool_use":
                        names[b["id"]] = b["name"]
            if role == "system":
                continue
            if role == "tool":
                parts = self.tool_message_to_wire(m)
                if parts and tool_group:
                    out[-1]["parts"].extend(parts)  # parallel results share one content
                elif parts:
                    out.append({"role": "user", "parts": parts})
                    tool_group = True
                continue
            tool_group = False
            parts = self.blocks_to_parts(m)
            if parts:  # every block dropped (and logged): never send an empty content
                out.append({"role": "model" if role == "assistant" else "user", "parts": parts})
        return out

    def blocks_to_parts(self, message: Message) -> list[Block]:
        parts: list[Block] = []
        pending_sig: str | None = None
        extras = self.own_raw(message).get("parts", {})
        content = message.get("content", [])
        for i, b in enumerate(content):
            t = b.get("type")
            part: Block | None
            if t == "thinking":
                why = self.foreign_reason(message)
                if why:
                    self.drop(message, i, "thinking", why)
                    continue
                if pending_sig is not None:
                    parts.append({"text": "", "thoughtSignature": pending_sig})
                    pending_sig = None
                sig = b.get("signature")
                if b.get("text") or not sig or extras.get(str(i), {}).get("thought"):
                    part = {"text": b.get("text", ""), "thought": True}
                    if sig:
                        part["thoughtSignature"] = sig
                    parts.append(part)
                else:
                    pending_sig = str(sig)  # rides on the next part (see module docstring)
                continue
            if t == "redacted_thinking":
                self.drop(message, i, "redacted_thinking", "Gemini has no redacted thinking")
                continue
            part = self.block_to_part(message, i, b)
            if part is None:
                continue
            kept = extras.get(str(i), {})
            if kept.get("key") and len(part) == 1:
                part = {kept["key"]: next(iter(part.values()))}
            part.update(kept.get("extra", {}))
            if pending_sig is not None:
                part["thoughtSignature"] = pending_sig
                pending_sig = None
            parts.append(part)
        if pending_sig is not None:
            parts.append({"text": "", "thoughtSignature": pending_sig})
        foreign = message.get("role") == "assistant" and self.foreign_reason(message) is not None
        if foreign and self._foreign_signature:
            # opt-in: Gemini 3 rejects a function call of the current turn without a signature;
            # the thought-signatures docs give placeholder values for calls it did not issue
            first = next((p for p in parts if "functionCall" in p), None)
            if first is not None and "thoughtSignature" not in first:
                first["thoughtSignature"] = self._foreign_signature
        return parts

    def foreign_reason(self, message: Message) -> str | None:
        provider = (message.get("metadata") or {}).get("provider")
        if provider != self.provider:
            who = provider or "an unknown provider"
            return f"thinking issued by {who}; thought parts and thoughtSignature are Gemini's own state"
        return None

    def block_to_part(self, message: Message, index: int, block: Block) -> Block | None:
        t = block.get("type")
        sid = str(message.get("session_id", ""))
        if t == "text":
            return {"text": block["text"]}
        if t == "image":
            return self.image_to_part(message, index, block)
        if t == "tool_use" and message.get("role") == "assistant":
            call: Block = {"name": block["name"], "args": block["input"]}
            wid = self.wire_call_id(sid, block["id"])
            if wid is not None:
                call["id"] = wid
            return {"functionCall": call}
        if isinstance(t, str) and t.startswith(f"{self.name}:") and isinstance(block.get("raw"), dict):
            return dict(block["raw"])  # a part kind with no canonical block, parsed earlier
        self.drop(message, index, str(t), f"no Gemini part for a {t} block in a {message.get('role')} message")
        return None

    def image_to_part(self, message: Message, index: int, block: Block) -> Block | None:
        source, media = block["source"], block["media_type"]
        if source["kind"] == "file_ref":
            self.drop(message, index, "image", "file_ref images must be inlined by the harness (adapters do no I/O)")
            return None
        if media not in IMAGE_TYPES:
            self.drop(
                message, index, "image", f"media type {media} is not accepted (accepted: {', '.join(IMAGE_TYPES)})"
            )
            return None
        if source["kind"] == "url":
            return {"fileData": {"mimeType": media, "fileUri": source["data"]}}
        return {"inlineData": {"mimeType": media, "data": source["data"]}}

    def tool_message_to_wire(self, message: Message) -> list[Block]:
        out: list[Block] = []
        sid = str(message.get("session_id", ""))
        extras = self.own_raw(message).get("parts", {})
        for i, block in enumerate(message.get("content", [])):
            if block.get("type") != "tool_result":
                self.drop(message, i, str(block.get("type")), "a tool message carries tool_result blocks only")
                continue
            texts: list[str] = []
            for b in block.get("content", []):
                if b.get("type") == "text":
                    texts.append(b["text"])
                else:
                    self.drop(message, i, str(b.get("type")), "functionResponse.response carries JSON, not images")
            key = "error" if block.get("is_error") else "output"
            value: Any = texts[0] if len(texts) == 1 else texts if texts else ""
            extra = extras.get(str(i), {})
            recorded = extra.get("response")
            if isinstance(recorded, dict) and _response_texts(recorded) == (texts, bool(block.get("is_error"))):
                response = recorded  # the object the request carried, byte for byte
            else:
                response = {key: value}
            cid = block["tool_use_id"]
            fr: Block = {"name": self._names.get(sid, {}).get(cid) or extra.get("name") or "tool", "response": response}
            wid = self.wire_call_id(sid, cid)
            if wid is not None:
                fr["id"] = wid
            out.append({extra.get("key", "functionResponse"): fr, **extra.get("extra", {})})
        return out

    def tool_to_wire(self, tool: ToolDefinition, raw: Mapping[str, Any]) -> WireBody:
        extra = dict(tool_extra(raw, tool["name"]))
        key = extra.pop("_schema_key", "parametersJsonSchema")
        return {"name": tool["name"], "description": tool["description"], key: tool["input_schema"], **extra}

    # -- wire -> canonical (responses) --------------------------------------------------

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or (isinstance(body, dict) and "error" in body and "candidates" not in body):
            raise self.classify_error(resp.status if resp.status >= 400 else 500, body, resp.headers)
        if isinstance(body, list):
            # a JSON-array stream already decoded by the caller: aggregate it like a stream
            return message_from_stream(self.stream_response([json.dumps(body)], request_context), request_context, self)
        if not isinstance(body, dict):
            raise WireFormatError("Gemini response is not a JSON object", provider_status=resp.status)
        acc = _Accumulator(self, request_context)
        for _ in acc.chunk(body, 0):
            pass
        if acc.open_call is not None:
            raise WireFormatError(f"functionCall {acc.open_call.name!r} has willContinue in a whole response")
        raw: dict[str, Any] = {k: body[k] for k in ("responseId", "modelVersion") if body.get(k) is not None}
        if acc.finish_reason is not None:
            raw["finishReason"] = acc.finish_reason
        if acc.block_reason is not None:
            raw["blockReason"] = acc.block_reason
        status = "error" if acc.stop_reason() == "error" else "complete"
        return self.assemble(
            request_context,
            acc.content,
            wire_model=acc.wire_model,
            token_usage=acc.usage,
            provider_raw=raw,
            status=status,
        )

    def stop_reason(self, body: Mapping[str, Any]) -> str:
        """The canonical stop reason of a non-streamed response body (a stream reports it on
        `message_complete`): finishReason per the record's map, STOP with function calls as
        tool_use, a blocked prompt (no candidates, promptFeedback.blockReason) as error."""
        acc = _Accumulator(self, RequestContext(session_id="stop-reason"))
        for _ in acc.chunk(body, 0):
            pass
        return acc.stop_reason()

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        u = usage_of(usage)
        if u is None:
            return None
        return {
            "input_tokens": u["input"],
            "output_tokens": u["output"],
            "cached_input_tokens": u["cache_read"],
            "cache_creation_input_tokens": u["cache_write"],
        }

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        """Google's `{"error": {code, message, status, details}}` -> adapter contract §6 classes."""
        err = body.get("error") if isinstance(body, dict) else None
        if not isinstance(err, dict):
            return error_for_status(status, f"HTTP {status}: {str(body)[:200]}")
        gstatus = str(err.get("status") or "")
        msg = f"{gstatus or err.get('code') or 'error'}: {err.get('message', '')}"
        details = [d for d in err.get("details") or [] if isinstance(d, dict)]
        reasons = {str(d.get("reason")) for d in details if d.get("reason")}
        cls: type[AdapterError] | None = _STATUS_HINT.get(gstatus)
        if "API_KEY_INVALID" in reasons:
            cls = AuthError  # the docs' example: 400 INVALID_ARGUMENT "API key not valid"
        elif gstatus == "INVALID_ARGUMENT" and _OVERFLOW.search(str(err.get("message", ""))):
            cls = ContextOverflowError
        if cls is None:
            base = error_for_status(status, msg)
            cls = type(base)
        retryable = cls in (RateLimitError, ServerError)
        rid = None
        for k, v in (headers or {}).items():
            if k.lower() in ("x-request-id", "x-goog-request-id"):
                rid = v[0] if isinstance(v, list) and v else str(v)
        if cls is RateLimitError:
            delay = next(
                (str(d.get("retryDelay")) for d in details if str(d.get("@type", "")).endswith("RetryInfo")), None
            )
            seconds = float(delay.rstrip("s")) if delay and re.fullmatch(r"\d+(\.\d+)?s", delay) else None
            return RateLimitError(
                msg, retry_after_seconds=seconds, provider_status=status, request_id=rid, retryable=True
            )
        return cls(msg, provider_status=status, request_id=rid, retryable=retryable)

    # -- streaming --------------------------------------------------------------------------

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        """Either framing -> canonical events. SSE (`alt=sse`) or the JSON array is told by the
        body's first byte (`[` opens the array); both are parsed incrementally and strictly:
        a malformed or cut stream raises WireFormatError naming the event position."""
        st = _GeminiStream(self, context)
        return self.cancellable(context, st.run(chunks), lambda: st.acc.content)

    # -- wire -> canonical (requests) -----------------------------------------------------

    def from_wire_request(
        self, body: WireBody, *, session_id: str | None = None, url: str | None = None
    ) -> ParsedRequest:
        """A recorded request body -> canonical messages, tools and options.

        Gemini keeps the model and the stream choice in the URL: pass `url` to recover them
        (without it the model is `gemini:unknown` and `stream` false). Calls without ids
        pair with the next functionResponse of the same name, in order.
        """
        sid = session_id or "sess_" + new_ulid().lower()
        wire_model = (model_of(url) if url else None) or "unknown"
        model = f"{self.provider}:{wire_model}"
        opt_raw: dict[str, Any] = {}
        if url:
            path = urlsplit(url).path or url
            prefix = re.match(r"(.*/models/)[^/:]+:[A-Za-z]+$", path)
            if prefix and prefix.group(1) != DEFAULT_PREFIX:
                opt_raw["path_prefix"] = prefix.group(1)
            if is_streaming(url) and framing_by_url(url) is Framing.JSON_ARRAY:
                opt_raw["framing"] = "json-array"
        out: list[Message] = []
        skey, si = field(body, "systemInstruction")
        if isinstance(si, str):
            si = {"parts": [{"text": si}]}
        if isinstance(si, dict):
            texts = [str(p.get("text", "")) for p in si.get("parts") or [] if isinstance(p, dict)]
            out.append(_message(sid, "system", [{"type": "text", "text": t} for t in texts], {}))
            if si.get("role"):
                opt_raw["system_role"] = si["role"]
        pending: dict[str, list[str]] = {}  # function name -> canonical ids of id-less calls awaiting a result
        for n, c in enumerate(body.get("contents") or []):
            if not isinstance(c, dict):
                raise WireFormatError(f"contents[{n}] is not an object")
            role = c.get("role") or "user"
            parts = [p for p in c.get("parts") or [] if isinstance(p, dict)]
            if role == "model":
                blocks, pextras = self.parts_to_blocks(sid, parts, ("request", n))
                for b in blocks:
                    if b["type"] == "tool_use" and self.tool_id_map(sid).get_provider(b["id"]) == NO_ID + b["id"]:
                        pending.setdefault(b["name"], []).append(b["id"])
                meta: dict[str, Any] = {"model": model, "provider": self.provider}
                if pextras:
                    meta["provider_raw"] = {self.name: {"parts": pextras}}
                out.append(_message(sid, "assistant", blocks or [{"type": "text", "text": ""}], meta))
                continue
            user: list[dict[str, Any]] = []
            for p in parts:
                fkey, fr = field(p, "functionResponse")
                if isinstance(fr, dict):
                    if user:
                        out.append(self._user(sid, user, n))
                        user = []
                    out.append(self.tool_result_from_wire(sid, fkey, fr, p, pending))
                else:
                    user.append(p)
            if user or not parts:
                out.append(self._user(sid, user, n))
        tools, native, tool_extras = self.tools_from_wire(body.get("tools"))
        if tool_extras:
            opt_raw["tool_extras"] = tool_extras
        if isinstance(body.get("tools"), dict):
            opt_raw["tools_object"] = True
        ckey, config = field(body, "generationConfig")
        config = dict(config) if isinstance(config, dict) else None
        got: dict[str, Any] = {}
        if config is not None:
            for k in list(config):
                if _camel(k) in _KNOWN_CONFIG:
                    got[_camel(k)] = config.pop(k)
        output_schema = None
        if got.get("responseMimeType") == "application/json" and isinstance(got.get("responseJsonSchema"), dict):
            output_schema = got["responseJsonSchema"]
        elif "responseMimeType" in got or "responseJsonSchema" in got:
            for k in ("responseMimeType", "responseJsonSchema"):
                if k in got and config is not None:
                    config[k] = got.pop(k)
        known = {"contents", skey, "tools", ckey}
        extra = {k: v for k, v in body.items() if k not in known}
        if config is not None:
            extra["generationConfig"] = config
        stop = got.get("stopSequences")
        return ParsedRequest(
            out,
            tools,
            AdapterOptions(
                model=model,
                max_output_tokens=got.get("maxOutputTokens"),
                temperature=got.get("temperature"),
                stop_sequences=tuple(stop or ()),
                stream=bool(url and is_streaming(url)),
                output_schema=output_schema,
                extra=extra,
                provider_tools=tuple(native),
                provider_raw={self.name: opt_raw} if opt_raw else {},
            ),
        )

    def _user(self, sid: str, parts: list[dict[str, Any]], n: int) -> Message:
        blocks, pextras = self.parts_to_blocks(sid, parts, ("request", n))
        meta = {"provider_raw": {self.name: {"parts": pextras}}} if pextras else {}
        return _message(sid, "user", blocks or [{"type": "text", "text": ""}], meta)

    def parts_to_blocks(
        self, sid: str, parts: list[dict[str, Any]], where: tuple[Any, ...]
    ) -> tuple[list[Block], dict[str, Any]]:
        """Request-history parts -> blocks, one per part (plus a signature-holding thinking
        block before a signed non-thought part), and per-block extras for provider_raw."""
        blocks: list[Block] = []
        extras: dict[str, Any] = {}
        calls = 0
        for j, p in enumerate(parts):
            skey, sig = field(p, "thoughtSignature")
            rest = {k: v for k, v in p.items() if k not in (skey, "thought")}
            if p.get("thought") is True and "text" in p:
                blocks.append({"type": "thinking", "text": str(p["text"]), "signature": sig})
                if not p["text"] and sig:
                    extras[str(len(blocks) - 1)] = {"thought": True}
                continue
            if isinstance(sig, str):
                if rest == {"text": ""}:
                    blocks.append({"type": "thinking", "text": "", "signature": sig})
                    continue
                blocks.append({"type": "thinking", "text": "", "signature": sig})
            kind = _part_kind(p)
            block = self.part_to_block(sid, p, kind, (*where, j, calls))
            if kind == "functionCall":
                calls += 1
            own = {k: v for k, v in rest.items() if kind is None or field(rest, kind)[0] != k}
            keep: dict[str, Any] = {"extra": own} if kind is not None and own else {}
            if kind is not None and field(p, kind)[0] != kind:
                keep["key"] = field(p, kind)[0]  # a snake_case spelling goes back as it came
            if keep:
                extras[str(len(blocks))] = keep
            blocks.append(block)
        return blocks, extras

    def part_to_block(self, sid: str, part: Mapping[str, Any], kind: str | None, key: tuple[Any, ...]) -> Block:
        if kind == "text":
            return {"type": "text", "text": str(part["text"])}
        if kind == "functionCall":
            call = field(part, "functionCall")[1]
            args = call.get("args")
            if args is not None and not isinstance(args, dict):
                raise WireFormatError(f"functionCall {call.get('name')!r} args is not a JSON object")
            args = args or {}
            name = str(call.get("name", ""))
            cid = self.call_id_from_wire(sid, call.get("id"), *key, name, json.dumps(args, sort_keys=True))
            self.remember_call_name(sid, cid, name)
            return {"type": "tool_use", "id": cid, "name": name, "input": args}
        if kind == "inlineData":
            blob = field(part, "inlineData")[1]
            media = field(blob, "mimeType")[1]
            if isinstance(media, str) and media in IMAGE_TYPES and blob.get("data") and len(part) == 1:
                return {"type": "image", "source": {"kind": "base64", "data": str(blob["data"])}, "media_type": media}
        if kind == "fileData":
            fd = field(part, "fileData")[1]
            media, uri = field(fd, "mimeType")[1], field(fd, "fileUri")[1]
            camel = "fileData" in part and "mimeType" in fd and "fileUri" in fd
            if isinstance(media, str) and media in IMAGE_TYPES and uri and camel and len(fd) == 2 and len(part) == 1:
                return {"type": "image", "source": {"kind": "url", "data": str(uri)}, "media_type": media}
        # everything else (snake_case spellings of media parts, documents, audio, executable
        # code, ...) stays whole as a namespaced unknown block (spec §10.3)
        k = next(iter(part), "part") if kind is None else kind
        return {"type": f"{self.name}:{k}", "raw": dict(part)}

    def tool_result_from_wire(
        self, sid: str, key: str, fr: Mapping[str, Any], part: Mapping[str, Any], pending: dict[str, list[str]]
    ) -> Message:
        name = str(fr.get("name", ""))
        if isinstance(fr.get("id"), str) and fr["id"]:
            cid = self.tool_id_map(sid).canonical_for(fr["id"])
        elif pending.get(name):
            cid = pending[name].pop(0)  # id-less: the oldest unanswered call of that name
        else:
            cid = self.call_id_from_wire(sid, None, "orphan-result", name)
        response = fr.get("response")
        texts, is_error = _response_texts(response if isinstance(response, dict) else {})
        result: Block = {
            "type": "tool_result",
            "tool_use_id": cid,
            "content": [{"type": "text", "text": t} for t in texts],
        }
        if is_error:
            result["is_error"] = True
        extra: dict[str, Any] = {"name": name}
        if not (isinstance(response, dict) and _plain_response(response)):
            extra["response"] = response
        own = {k: v for k, v in part.items() if k != key}
        if key != "functionResponse":
            extra["key"] = key  # a snake_case spelling goes back as it came
        if own:
            extra["extra"] = own
        meta: dict[str, Any] = {"parent_tool_use_id": cid, "provider_raw": {self.name: {"parts": {"0": extra}}}}
        return _message(sid, "tool", [result], meta)

    def tools_from_wire(self, wire: Any) -> tuple[list[ToolDefinition], list[Mapping[str, Any]], dict[str, Any]]:
        """Function declarations -> canonical tools; other tools (googleSearch, codeExecution,
        ...) stay provider tools, sent back verbatim."""
        tools: list[ToolDefinition] = []
        native: list[Mapping[str, Any]] = []
        extras: dict[str, Any] = {}
        layout: list[int | str] = []  # per Tool: its declarations' count, or "n" for a native tool
        for t in [wire] if isinstance(wire, dict) else wire or []:
            dkey, decls = field(t, "functionDeclarations") if isinstance(t, dict) else ("", None)
            if not isinstance(decls, list) or len(t) != 1:
                native.append(t)
                layout.append("n")
                continue
            layout.append(len(decls))
            if dkey != "functionDeclarations":
                extras["_declarations_key"] = dkey
            for d in decls:
                skey = next(
                    (k for k in ("parametersJsonSchema", "parameters_json_schema", "parameters") if k in d), None
                )
                schema = d.get(skey) if skey else None
                tools.append(
                    {
                        "name": d["name"],
                        "description": d.get("description") or "",
                        "input_schema": schema if isinstance(schema, dict) else {"type": "object", "properties": {}},
                        "side_effects": "execute",
                    }
                )
                extra = {k: v for k, v in d.items() if k not in ("name", "description", skey)}
                if skey != "parametersJsonSchema":
                    extra["_schema_key"] = skey or "parametersJsonSchema"
                if d.get("description") is None:
                    extra["description"] = d.get("description")
                if extra:
                    extras[d["name"]] = extra
        if layout != ([len(tools)] if tools else []) + ["n"] * len(native):
            # `tools` ("A list of Tools the Model may use") holds the declarations in as many
            # Tool objects as the request used, in its order; rendering back keeps both
            extras["_tool_layout"] = layout
        return tools, native, extras

    # -- estimates ------------------------------------------------------------------------

    def estimate_input_tokens(
        self, messages: list[Message], tools: list[ToolDefinition], model: str | None = None
    ) -> int:
        """Heuristic (conformance.adapters.estimate), calibrated on the recorded
        promptTokenCount of real Gemini traffic (tests/test_adapter_gemini.py reports the
        error distribution).

        What the recordings show: about one token of framing per content; a function
        declaration costs about 6 tokens plus 3/5 of its JSON on Gemini 2.5 and 3, and 2
        plus 1/4 on Gemini 2.0 (`DECLARATIONS_CHEAP`; without a model the 2.5/3 rule, the
        costlier). Thought-summary text sent back (a `thought: true` part) is not counted
        when its turn sends a `thoughtSignature` too, and is counted as text when the turn
        sends none: in pydantic-ai's test_google_model_thinking_part (gemini-3-pro-preview,
        a 2238-character summary beside a text part signed with 5180 characters) the count
        (1280) fits the signature and not the summary; in Mirascope's
        call_with_thinking_true/google/sync.yaml#1 (gemini-2.5-flash, a 2049-character
        summary and no signature) promptTokenCount is 935 for a request whose other parts
        are some 50 tokens, so the summary was read. (The two differ in model as well; the
        thought-signatures page says nothing on billing; this follows the recordings.) Images cost 258 tokens per 768 px tile (one tile when both
        sides are <= 384 px), per the image understanding docs; an image of unknown size
        (a URL) counts 4 tiles.

        A `thoughtSignature` sent back is counted by some models and not by others, so the
        estimate depends on `model` (the request's model, `gemini:NAME` or `NAME`; the model
        is in Gemini's URL, not its body). Gemini 3 and gemini-2.5-flash re-read it as the
        model's earlier thoughts, at about one token per 6-9 base64 characters (counted
        here as one per 8). gemini-2.5-pro does not count it: in pydantic-ai's
        test_google_model_retry recording, sending back a 716-character signature with a
        call and its error result raised promptTokenCount from 57 to 109 (+52, about what
        the call and result alone cost), and a further 1156-character signature with a
        second call and result raised it by 33. The thought-signatures page says nothing
        on billing, so this follows the recordings. With no model known, signatures count
        (the costlier reading, safe for a pre-flight context check).
        """
        wire_model = (model or "").split(":", 1)[-1]
        signature_chars_per_token = 0 if wire_model.startswith(SIGNATURE_NOT_COUNTED) else 8
        n = 0
        for m in messages:
            n += 1
            blocks = m.get("content", [])
            signed = any(b.get("type") == "thinking" and b.get("signature") for b in blocks)
            for b in blocks:
                n += self._block_tokens(b, signature_chars_per_token)
                if b.get("type") == "thinking" and not signed:
                    n += text_tokens(b.get("text") or "")  # a summary with no signature is read
        # per tool: (fixed, numerator, denominator) of its declaration's JSON tokens
        fixed, num, den = (2, 1, 4) if wire_model.startswith(DECLARATIONS_CHEAP) else (6, 3, 5)
        if tools:
            n += sum(
                fixed + (json_tokens(t["input_schema"]) + text_tokens(t["name"] + " " + t["description"])) * num // den
                for t in tools
            )
        return n

    def _block_tokens(self, b: Block, signature_chars_per_token: int) -> int:
        t = b.get("type")
        if t == "text":
            return text_tokens(b["text"])
        if t == "thinking":
            sig = len(b.get("signature") or "")
            return sig // signature_chars_per_token if signature_chars_per_token else 0
        if t == "tool_use":
            return 2 + text_tokens(b["name"]) + json_tokens(b["input"])
        if t == "tool_result":
            return 4 + sum(self._block_tokens(x, signature_chars_per_token) for x in b.get("content", []))
        if t == "image":
            size = image_block_size(b)
            if size is None:
                return 4 * 258
            w, h = size
            if w <= 384 and h <= 384:
                return 258
            return 258 * (-(-w // 768)) * (-(-h // 768))
        return 0


def _response_texts(response: Mapping[str, Any]) -> tuple[list[str], bool]:
    """(texts, is_error) of a functionResponse.response, per the documented keys."""
    if not response:
        return [], False
    if set(response) == {"error"}:
        key, is_error = "error", True
    elif set(response) == {"output"}:
        key, is_error = "output", False
    else:
        return [json.dumps(response, ensure_ascii=False)], "error" in response
    value = response[key]
    if isinstance(value, str):
        return ([value] if value else []), is_error
    if isinstance(value, list) and all(isinstance(v, str) for v in value) and len(value) > 1:
        return list(value), is_error
    return [json.dumps(value, ensure_ascii=False)], is_error


def _plain_response(response: Mapping[str, Any]) -> bool:
    """True when `{output|error: text}` rebuilds this response exactly."""
    if set(response) not in ({"output"}, {"error"}):
        return not response
    value = next(iter(response.values()))
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(v, str) for v in value) and len(value) > 1
    )


class _Accumulator(StreamState[GeminiAdapter]):
    """Gemini response chunks -> canonical blocks and events (one code path for both the
    non-streamed body and every streamed chunk, so a stream's aggregate equals the parse).

    Consecutive text parts merge into one text block and consecutive unsigned thought parts
    into one thinking block: the API cuts a streamed part anywhere, so part boundaries carry
    no meaning in a response.
    """

    def __init__(self, adapter: GeminiAdapter, ctx: RequestContext) -> None:
        super().__init__(adapter, ctx)
        self.usage: dict[str, int] | None = None
        self.finish_reason: str | None = None
        self.block_reason: str | None = None
        self.wire_model: str | None = None
        self.response_id = ""
        self.calls = 0
        self.open_call: _OpenCall | None = None  # a functionCall whose arguments still stream

    def chunk(self, obj: Mapping[str, Any], position: int) -> Iterator[StreamEvent]:
        if obj.get("modelVersion"):
            self.wire_model = str(obj["modelVersion"])
        if obj.get("responseId"):
            self.response_id = str(obj["responseId"])
        blocked = block_reason(obj)  # by name, also when sent as its number (enum-encoding=int)
        if blocked:
            self.block_reason = str(blocked)
        cands = obj.get("candidates")
        if cands is not None and not isinstance(cands, list):
            raise WireFormatError(f"event {position}: `candidates` is not a list")
        if cands:
            if len(cands) > 1 and position == 0:
                self.adapter.log.warning(
                    "%s: %d candidates; the canonical message keeps candidate 0",
                    self.adapter.name,
                    len(cands),
                    extra={"event": "candidates_dropped", "adapter": self.adapter.name},
                )
            cand = cands[0]
            if not isinstance(cand, dict):
                raise WireFormatError(f"event {position}: candidates[0] is not an object")
            parts = (cand.get("content") or {}).get("parts") or []
            if not isinstance(parts, list):
                raise WireFormatError(f"event {position}: candidates[0].content.parts is not a list")
            for p in parts:
                if not isinstance(p, dict):
                    raise WireFormatError(f"event {position}: a part is not an object")
                yield from self.part(p, position)
            finished = finish_reason(cand)  # by name, also when sent as its number
            if finished:
                self.finish_reason = str(finished)
        usage = self.adapter.usage_from_wire(obj.get("usageMetadata"))
        if usage is not None:
            self.usage = usage  # cumulative in every chunk: the latest wins
            yield {"type": "usage_update", "message_id": self.mid, "usage": dict(usage)}

    def part(self, p: Mapping[str, Any], position: int) -> Iterator[StreamEvent]:
        mid = self.mid
        _, sig = field(p, "thoughtSignature")
        sig = sig if isinstance(sig, str) and sig else None
        if p.get("thought") is True:
            text = str(p.get("text", ""))
            last = self.content[-1] if self.content else None
            if last is not None and last["type"] == "thinking" and not last.get("signature"):
                k = len(self.content) - 1
                last["text"] += text
            else:
                k = len(self.content)
                self.content.append({"type": "thinking", "text": text, "signature": None})
            if text:
                yield {"type": "thinking_delta", "message_id": mid, "content_block_index": k, "text": text}
            if sig:
                self.content[k]["signature"] = sig
                yield {
                    "type": "thinking_delta",
                    "message_id": mid,
                    "content_block_index": k,
                    "text": "",
                    "signature": sig,
                }
            return
        if sig:
            k = len(self.content)
            self.content.append({"type": "thinking", "text": "", "signature": sig})
            yield {"type": "thinking_delta", "message_id": mid, "content_block_index": k, "text": "", "signature": sig}
        kind = _part_kind(p)
        if kind == "text":
            text = str(p["text"])
            if not text:
                return
            last = self.content[-1] if self.content else None
            if last is not None and last["type"] == "text":
                k = len(self.content) - 1
                last["text"] += text
            else:
                k = len(self.content)
                self.content.append({"type": "text", "text": text})
            yield {"type": "text_delta", "message_id": mid, "content_block_index": k, "text": text}
            return
        if kind == "functionCall":
            call = field(p, "functionCall")[1]
            if self.open_call is not None or (isinstance(call, dict) and _streamed_call(call)):
                yield from self.partial_call(call, position)
                return
        key = ("response", self.response_id, self.calls)
        if kind == "functionCall":
            self.calls += 1
        block = self.adapter.part_to_block(self.ctx.session_id, p, kind, key)
        k = len(self.content)
        self.content.append(block)
        if block["type"] == "tool_use":
            yield {
                "type": "tool_use_start",
                "message_id": mid,
                "content_block_index": k,
                "tool_use_id": block["id"],
                "tool_name": block["name"],
            }
            yield {
                "type": "tool_use_end",
                "message_id": mid,
                "content_block_index": k,
                "tool_use_id": block["id"],
                "final_input": block["input"],
            }

    def partial_call(self, call: Any, position: int) -> Iterator[StreamEvent]:
        """One functionCall of a call whose arguments stream (`partialArgs`, `willContinue`)."""
        if not isinstance(call, dict):
            raise WireFormatError(f"event {position}: functionCall is not an object")
        name = call.get("name")
        oc = self.open_call
        if oc is not None and isinstance(name, str) and name and name != oc.name:
            raise WireFormatError(
                f"event {position}: functionCall {name!r} began while {oc.name!r} was still streaming (willContinue)"
            )
        if oc is None:
            if not isinstance(name, str) or not name:
                raise WireFormatError(f"event {position}: a functionCall continuation (no name) with no call open")
            key = ("response", self.response_id, self.calls, name, "streamed")
            self.calls += 1
            cid = self.adapter.call_id_from_wire(self.ctx.session_id, call.get("id"), *key)
            self.adapter.remember_call_name(self.ctx.session_id, cid, name)
            oc = self.open_call = _OpenCall(len(self.content), cid, name)
            self.content.append({"type": "tool_use", "id": cid, "name": name, "input": {}})
            yield {
                "type": "tool_use_start",
                "message_id": self.mid,
                "content_block_index": oc.k,
                "tool_use_id": cid,
                "tool_name": name,
            }
        args = call.get("args")
        if isinstance(args, dict):
            oc.args.update(args)
        elif args is not None:
            raise WireFormatError(f"event {position}: functionCall {oc.name!r} args is not a JSON object")
        partial = field(call, "partialArgs")[1]
        if partial is not None and not isinstance(partial, list):
            raise WireFormatError(f"event {position}: functionCall {oc.name!r} partialArgs is not a list")
        for arg in partial or []:
            oc.apply(arg, position)
        closing = field(call, "willContinue")[1] is not True
        text = oc.text(closing)
        if text is not None and len(text) > len(oc.sent):
            fragment, oc.sent = text[len(oc.sent) :], text
            yield {
                "type": "tool_use_input_delta",
                "message_id": self.mid,
                "content_block_index": oc.k,
                "tool_use_id": oc.cid,
                "partial_json": fragment,
            }
        if closing:
            self.open_call = None
            self.content[oc.k]["input"] = oc.args
            yield {
                "type": "tool_use_end",
                "message_id": self.mid,
                "content_block_index": oc.k,
                "tool_use_id": oc.cid,
                "final_input": oc.args,
            }

    def stop_reason(self) -> str:
        if self.finish_reason is None:
            return "error" if self.block_reason else "end_turn"
        stop = STOP_REASONS.get(self.finish_reason, "end_turn")
        if stop == "end_turn" and self.finish_reason == "STOP" and any(b["type"] == "tool_use" for b in self.content):
            return "tool_use"
        return stop

    def complete(self, stop_reason: str) -> StreamEvent:
        usage = self.usage or estimated_usage(self.adapter.name, self.adapter.log, self.ctx, self.content)
        return {
            "type": "message_complete",
            "message_id": self.mid,
            "stop_reason": stop_reason,
            # an empty reply is still one block, as the assembled message has it (spec §5.1.1)
            "final_content": [dict(b) for b in self.content] or [{"type": "text", "text": ""}],
            "usage": dict(usage) if usage else None,
        }


def _streamed_call(call: Mapping[str, Any]) -> bool:
    """Whether a functionCall streams its arguments (Gemini 3 `streamFunctionCallArguments`)."""
    return field(call, "willContinue")[1] is True or field(call, "partialArgs")[1] is not None


_PATH_STEP = re.compile(r"""\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]""")


def json_path(path: Any) -> list[str | int]:
    """The steps of a PartialArg `jsonPath` (RFC 9535's normalized subset: `$`, then
    `.name`, `['name']` or `[index]` steps); WireFormatError for anything else."""
    if not isinstance(path, str) or not path.startswith("$"):
        raise WireFormatError(f"functionCall partialArgs jsonPath {path!r} is not a JSON Path ($...)")
    steps: list[str | int] = []
    at = 1
    while at < len(path):
        m = _PATH_STEP.match(path, at)
        if m is None:
            raise WireFormatError(f"functionCall partialArgs jsonPath {path!r}: unreadable at character {at}")
        name, index, single, double = m.groups()
        if index is not None:
            steps.append(int(index))
        else:
            quoted = single if single is not None else double
            steps.append(name if quoted is None else re.sub(r"\\(.)", r"\1", quoted))
        at = m.end()
    if not steps:
        raise WireFormatError(f"functionCall partialArgs jsonPath {path!r} names no argument")
    return steps


_VALUE_KEYS = ("stringValue", "numberValue", "boolValue", "nullValue")


class _OpenCall:
    """A streamed functionCall being assembled: its arguments, and the JSON text of them
    already relayed as `tool_use_input_delta`s."""

    def __init__(self, k: int, cid: str, name: str) -> None:
        self.k, self.cid, self.name = k, cid, name
        self.args: dict[str, Any] = {}
        self.sent = ""
        self.growing: list[str | int] | None = None  # the string path whose last PartialArg said willContinue

    def apply(self, arg: Any, position: int) -> None:
        if not isinstance(arg, dict):
            raise WireFormatError(f"event {position}: functionCall {self.name!r} partialArgs item is not an object")
        steps = json_path(field(arg, "jsonPath")[1])
        present = [(k, field(arg, k)[1]) for k in _VALUE_KEYS if field(arg, k)[1] is not None]
        if len(present) > 1:
            raise WireFormatError(f"event {position}: functionCall {self.name!r} partialArg has {len(present)} values")
        kind, value = present[0] if present else ("nullValue", None)
        if kind == "nullValue":
            value = None
        elif (kind, type(value)) not in (
            ("stringValue", str),
            ("numberValue", int),
            ("numberValue", float),
            ("boolValue", bool),
        ):
            raise WireFormatError(f"event {position}: functionCall {self.name!r} partialArg {kind} is {value!r}")
        if kind == "stringValue" and steps == self.growing:
            value = str(_get(self.args, steps)) + str(value)  # the rest of a string streamed in pieces
        try:
            _put(self.args, steps, value)
        except (TypeError, IndexError, KeyError) as exc:
            raise WireFormatError(
                f"event {position}: functionCall {self.name!r} partialArg at {steps}: {exc}"
            ) from None
        more = field(arg, "willContinue")[1] is True
        self.growing = steps if kind == "stringValue" and more else None

    def text(self, closing: bool) -> str | None:
        """The arguments' JSON as far as it is settled: all of it when the call closes, else
        without the closing brackets (and the closing quote of a string still growing).
        None when that does not extend what was already relayed: an argument reopened out
        of order, which `tool_use_end.final_input` (the assembled arguments) still has whole."""
        full = json.dumps(self.args, ensure_ascii=False)
        if not closing:
            full = full.rstrip("}]")
            if self.growing is not None and full.endswith('"'):
                full = full[:-1]
        return full if full.startswith(self.sent) else None


def _get(root: Any, steps: list[str | int]) -> Any:
    for step in steps:
        root = root[step]
    return root


def _put(root: Any, steps: list[str | int], value: Any) -> None:
    """Set `value` at `steps` (objects and arrays made as the steps need them)."""
    for step, nxt in zip(steps, [*steps[1:], None], strict=True):
        if nxt is None:
            if isinstance(step, int):
                _grow(root, step)
            root[step] = value
            return
        made: Any = [] if isinstance(nxt, int) else {}
        if isinstance(step, int):
            _grow(root, step)
            if root[step] is None:
                root[step] = made
        elif not isinstance(root, dict):
            raise TypeError(f"{step!r} inside an array")
        else:
            root.setdefault(step, made)
        root = root[step]


def _grow(array: Any, index: int) -> None:
    if not isinstance(array, list):
        raise TypeError(f"index {index} inside an object")
    array.extend([None] * (index + 1 - len(array)))


class _GeminiStream:
    """One streamGenerateContent body being translated (either framing)."""

    def __init__(self, adapter: GeminiAdapter, ctx: RequestContext) -> None:
        self.adapter = adapter
        self.acc = _Accumulator(adapter, ctx)
        self.started = False
        self.events = 0

    def run(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        it = iter(chunks)
        head = b""
        for c in it:
            head += c.encode() if isinstance(c, str) else c
            if head.lstrip()[:1] == b"[" or len(head.lstrip()) >= 6:
                break  # enough to tell the framing (`[` or an SSE field name)
        rest = _chain([head], it)
        lead = head.lstrip()
        if lead.startswith(b"["):
            source = _json_array(rest)
        elif not lead or lead.startswith((b"data", b"event", b"id", b"retry", b":")):
            source = self._sse(rest)
        else:
            raise WireFormatError(f"event 0: the body is neither a JSON array nor Server-Sent Events: {lead[:40]!r}")
        try:
            yield from self.chunks(source)
        except StreamCutError as exc:
            if self.acc.finish_reason is None or self.acc.open_call is not None:
                yield from self.ended_early()
                raise
            # the finishReason arrived: nothing is lost but the array's end
            self.adapter.log.warning(
                "%s: %s, after the finishReason; read as ended",
                self.adapter.name,
                exc,
                extra={
                    "event": "array_end_missing",
                    "adapter": self.adapter.name,
                    "session_id": self.acc.ctx.session_id,
                },
            )
        if self.acc.open_call is not None:
            yield from self.start({})
            yield self.acc.complete("error")
            name = self.acc.open_call.name
            raise StreamCutError(
                f"stream ended with functionCall {name!r} still open (its last part had willContinue): "
                "cut before its end"
            )
        if self.acc.finish_reason is None and self.acc.block_reason is None:
            yield from self.start({})
            yield self.acc.complete("error")
            where = f"after event {self.events - 1}" if self.events else "with no event"
            raise StreamCutError(f"stream ended {where} without a finishReason: cut before its end")
        yield self.acc.complete(self.acc.stop_reason())

    def chunks(self, source: Iterable[tuple[int, Any]]) -> Iterator[StreamEvent]:
        """The canonical events of each decoded chunk (an error chunk raises its error)."""
        for position, obj in source:
            self.events = position + 1
            if not isinstance(obj, dict):
                raise WireFormatError(f"event {position}: not a JSON object")
            yield from self.start(obj)
            if "error" in obj and "candidates" not in obj:
                err = self.adapter.classify_error(500, obj)
                yield {
                    "type": "error",
                    "message_id": self.acc.mid,
                    "error_class": err.error_class,
                    "message": str(err),
                    "provider_status": None,
                }
                yield self.acc.complete("error")
                raise err
            yield from self.acc.chunk(obj, position)

    def ended_early(self) -> Iterator[StreamEvent]:
        """Contract §6.5 for a body that stops inside its framing (a JSON array cut inside an
        element or before its `]`): the partial message, before the StreamCutError."""
        if self.started:
            yield self.acc.complete("error")

    def start(self, obj: Mapping[str, Any]) -> Iterator[StreamEvent]:
        if not self.started:
            self.started = True
            model = obj.get("modelVersion")
            yield {
                "type": "message_start",
                "message_id": self.acc.mid,
                "role": "assistant",
                "model": f"{self.adapter.provider}:{model}"
                if model
                else self.acc.ctx.model or f"{self.adapter.provider}:unknown",
            }

    def _sse(self, chunks: Iterable[bytes]) -> Iterator[tuple[int, Any]]:
        for n, ev in enumerate(sse_events(chunks)):
            if not ev.data.strip():
                continue
            try:
                yield n, json.loads(ev.data)
            except ValueError as exc:
                raise WireFormatError(f"event {n}: SSE data is not JSON: {ev.data[:80]!r}") from exc


def _chain(first: list[bytes], rest: Iterator[bytes | str]) -> Iterator[bytes]:
    yield from first
    for c in rest:
        yield c.encode() if isinstance(c, str) else c


def _json_array(chunks: Iterable[bytes]) -> Iterator[tuple[int, Any]]:
    """Elements of a JSON array streamed in arbitrary chunks, each as soon as it is complete.

    A small scanner tracks strings and bracket depth to find each element's end, then
    `json.loads` decodes it: memory holds one element, never the whole body. Anything but
    `[ {...} (, {...})* ]` raises WireFormatError naming the element.
    """
    dec = codecs.getincrementaldecoder("utf-8")()
    state = "open"  # open -> first -> (value -> sep -> next)* -> closed
    n = depth = size = 0
    in_str = esc = False
    piece: list[str] = []

    def fail(why: str) -> WireFormatError:
        return WireFormatError(f"JSON-array stream, element {n}: {why}")

    for chunk in chunks:
        try:
            text = dec.decode(chunk)
        except UnicodeDecodeError as exc:
            raise fail("not UTF-8") from exc
        for ch in text:
            if state == "value":
                piece.append(ch)
                if in_str:
                    if esc:
                        esc = False
                    elif ch == "\\":
                        esc = True
                    elif ch == '"':
                        in_str = False
                elif ch == '"':
                    in_str = True
                elif ch in "[{":
                    depth += 1
                elif ch in "]}":
                    depth -= 1
                    if depth == 0:
                        try:
                            value = json.loads("".join(piece))
                        except ValueError as exc:
                            raise fail(f"not JSON ({exc})") from exc
                        yield n, value
                        n, piece, state = n + 1, [], "sep"
                continue
            if ch.isspace():
                continue
            if state == "open":
                if ch != "[":
                    raise fail("the body does not open with `[`")
                state = "first"
            elif state in ("first", "next"):
                if ch == "]" and state == "first":
                    state = "closed"
                elif ch == "{":
                    state, piece, depth = "value", [ch], 1
                else:
                    raise fail(f"expected an object, found {ch!r}")
            elif state == "sep":
                if ch not in ",]":
                    raise fail(f"expected `,` or `]`, found {ch!r}")
                state = "next" if ch == "," else "closed"
            else:
                raise fail("data after the closing `]`")
        size = len(piece)
        if size > MAX_ELEMENT_CHARS:
            raise fail(f"element longer than {MAX_ELEMENT_CHARS} characters")
    try:
        dec.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise fail("the body ends inside a UTF-8 sequence") from exc
    if state == "value":
        raise StreamCutError(f"JSON-array stream, element {n}: the stream was cut inside this element")
    if state != "closed":
        raise StreamCutError(f"JSON-array stream, element {n}: the stream ended without the closing `]`")


_message = request_message  # the shared reader-side constructor (base.request_message)


def _tools_laid_out(decls: list[Any], native: list[Any], dkey: str, raw: Mapping[str, Any]) -> list[Any]:
    """The request's `tools`: the declarations in the Tool objects and order the recorded
    request used (`tool_extras["_tool_layout"]`, a declaration count per Tool or "n" for a
    native one), else one Tool holding them all, then the native tools; a layout that no
    longer fits the tools is not used."""
    found = (raw.get("tool_extras") or {}).get("_tool_layout")
    layout: list[Any] = found if isinstance(found, list) else []
    fits = bool(layout) and all(isinstance(x, int) or x == "n" for x in layout)
    if not fits or sum(x for x in layout if isinstance(x, int)) != len(decls) or layout.count("n") != len(native):
        return ([{dkey: decls}] if decls else []) + native
    out: list[Any] = []
    d_at, n_iter = 0, iter(native)
    for slot in layout:
        if slot == "n":
            out.append(next(n_iter))
        else:
            out.append({dkey: decls[d_at : d_at + slot]})
            d_at += slot
    return out
