"""The Ollama native chat adapter (`POST /api/chat`, NDJSON streams; seed 003 §7, §8.3).

Wire format as documented (read before this module was written):

- https://github.com/ollama/ollama/blob/main/docs/api.md#generate-a-chat-completion
- https://docs.ollama.com/api/chat (OpenAPI: `think`, `message.thinking`, `stream` default true)
- https://docs.ollama.com/capabilities/thinking
- https://docs.ollama.com/capabilities/tool-calling
- https://docs.ollama.com/capabilities/streaming
- https://docs.ollama.com/api/errors

How the canonical format maps onto it:

- Messages keep their order and role (`system`, `user`, `assistant`, `tool`); Ollama takes
  system messages anywhere in the list. A message's `content` is one string, so a canonical
  message with several text blocks becomes one wire message per text block (joining them
  would lose the block boundaries the canonical format keeps); images ride in the `images`
  list of the wire message their block follows.
- Images are base64 only: an image by URL or file reference cannot be carried and is
  dropped with the §7.3 WARN line (CriticalBlockError when critical). Ollama carries no
  media type, so reading one back sniffs it from the bytes.
- Thinking goes back as the assistant message's `thinking` text. Ollama has no thinking
  signature and no redacted thinking: a signature another provider issued is dropped with
  a WARN (the text is still sent), redacted thinking is dropped with the WARN line.
- Tool calls are `tool_calls[].function` with `arguments` a JSON object. The documented
  calls carry no id and a tool message answers the pending calls in order, optionally
  naming the tool in `tool_name`. Newer servers add `id` to calls; the adapter sends the
  session map's id as `id` and `tool_call_id` (servers that do not know the fields ignore
  them, as Go's JSON decoder does) and always keeps tool messages in call order with
  `tool_name`, so both generations pair them. A request read back that had no ids is
  rendered without ids again. Canonical ids for id-less calls are derived (conformance.core.ids)
  from the response's `created_at`, the call's position and content: parsing the same
  response twice gives the same ids, two responses never share one.
- `tool_result.is_error` has no wire field: it is reported with a WARN.
- `done_reason`: `stop` -> end_turn (tool_use when the reply has tool calls), `length` ->
  max_tokens, `load`/`unload` (empty model (un)load replies) -> end_turn.
- Usage (the contract's §7.2 names no Ollama mapping; this follows Ollama's API docs):
  `prompt_eval_count` -> input_tokens, `eval_count` -> output_tokens, on the final
  `done: true` line of a stream (always sent, nothing to request); Ollama reports no cache
  accounting (a prompt prefix reused from its KV cache is simply not counted), so both
  cache buckets are 0.
- `stream` defaults to true in Ollama, so every rendered request says `stream` explicitly.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from ..core import ids
from ..wire.ollama import OLLAMA_CHAT
from ._shared import StreamState, function_tool, function_tools_from_wire, lay_out_tools, tool_extra
from .base import (
    AdapterError,
    AdapterOptions,
    BaseAdapter,
    Block,
    CancellableStreams,
    Message,
    ParsedRequest,
    RequestContext,
    StreamCutError,
    StreamEvent,
    ToolDefinition,
    ToolIdMap,
    WireBody,
    WireFormatError,
    WireRequest,
    WireResponse,
    error_for_status,
    estimated_usage,
    new_ulid,
    request_message,
)
from .estimate import json_tokens, text_tokens

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_STOP = OLLAMA_CHAT.stop_reasons  # the record's table (docs: done_reason)
# knobs that live in `options` and have a canonical AdapterOptions field
_OPTION_FIELDS = ("num_predict", "temperature", "stop")
_KNOWN_TOP = {"model", "messages", "tools", "stream", "options", "format"}
_MESSAGE_KEYS = {"role", "content", "images", "thinking", "tool_calls", "tool_name", "tool_call_id"}
_NOT_FOUND = re.compile(r"not found|no such model|pull", re.I)
_CONTEXT = re.compile(r"context (length|window|size)|too long|exceeds", re.I)


def sniff_media_type(data_b64: str) -> str | None:
    """The image type of base64 bytes from their magic number (Ollama sends no media type)."""
    try:
        head = base64.b64decode(data_b64[:64] + "=" * (-len(data_b64[:64]) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def _ms(created_at: Any) -> int:
    """Milliseconds of an anchor: a ULID's time part, an RFC 3339 `created_at` (Ollama
    writes nanoseconds), else 0."""
    if not isinstance(created_at, str) or not created_at:
        return 0
    if ids.is_ulid(created_at):
        return ids.millis(created_at)
    text = re.sub(r"(\.\d{6})\d+", r"\1", created_at.replace("Z", "+00:00"))
    try:
        return int(dt.datetime.fromisoformat(text).timestamp() * 1000)
    except ValueError:
        return 0


class OllamaToolIdMap(ToolIdMap):
    """The §6.2 map with ids derived, not drawn at random.

    A provider id minted for a canonical id is a hash of it (`call_<16 hex>`), and a
    canonical id for a provider id is `derived_tool_id(ms, session, provider id)`: the same
    session renders and parses the same way in any process (same input, same output).
    """

    def __init__(self, provider: str, session_id: str) -> None:
        super().__init__(provider, lambda: "call_" + new_ulid().lower())
        self.session_id = session_id

    def canonical_for(self, provider_id: str, ms: int = 0) -> str:
        found = self.get_canonical(provider_id)
        if found is None:
            found = ids.derived_tool_id(ms, self.session_id, provider_id)
            serial = 0
            while self.get_provider(found) is not None:
                serial += 1
                found = ids.derived_tool_id(ms, self.session_id, provider_id, serial)
            self.bind(found, provider_id)
        return found

    def provider_for(self, canonical_id: str) -> str:
        found = self.get_provider(canonical_id)
        if found is None:
            serial = 0
            found = "call_" + hashlib.blake2b(canonical_id.encode(), digest_size=8).hexdigest()
            while self.get_canonical(found) is not None:
                serial += 1
                found = "call_" + hashlib.blake2b(f"{canonical_id}/{serial}".encode(), digest_size=8).hexdigest()
            self.bind(canonical_id, found)
        return found


class OllamaAdapter(CancellableStreams, BaseAdapter):
    """Canonical <-> Ollama native chat (`POST /api/chat`)."""

    name: ClassVar[str] = "ollama"
    provider: ClassVar[str] = "ollama"
    wire_api: ClassVar[str] = "ollama-chat"
    # newer servers issue `call_<random>` ids; minted ones are `call_<hex>`; recorded
    # requests without ids get positional keys `call_m<i>c<j>`
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": True,  # the text goes back in `thinking` (no signature exists)
        "supports_images": True,  # base64 only
        "supports_tools": True,
        "supports_system_prompt": True,
        "supports_structured_output": True,  # `format`: a JSON schema
        "supports_streaming": True,
        "supports_streaming_tool_calls": True,  # calls arrive whole in one NDJSON line
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": False,  # no cache accounting on the wire
        "supports_system_messages_in_list": True,
        # model- and `num_ctx`-dependent; this is the largest window of the common families
        "max_context_tokens": 131_072,
        "max_output_tokens": 32_768,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def __init__(self) -> None:
        super().__init__()
        self._names: dict[tuple[str, str], str] = {}  # (session, canonical tool id) -> tool name

    def new_provider_tool_id(self) -> str:
        return "call_" + new_ulid().lower()

    def tool_id_map(self, session_id: str) -> OllamaToolIdMap:
        m = self._maps.get(session_id)
        if not isinstance(m, OllamaToolIdMap):
            m = OllamaToolIdMap(self.provider, session_id)
            self._maps[session_id] = m
        return m

    # -- canonical -> wire --------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        raw = dict(options.provider_raw.get(self.name) or {})
        with_ids = raw.get("tool_ids", True)
        body: WireBody = {
            "model": options.wire_model,
            "messages": self.messages_to_wire(messages, with_ids=bool(with_ids)),
        }
        wire_tools = lay_out_tools(
            [self.tool_to_wire(t, raw) for t in tools], [dict(t) for t in options.provider_tools], raw
        )
        if wire_tools or raw.get("empty_tools"):
            body["tools"] = wire_tools
        if not raw.get("stream_absent") or options.stream is not True:
            body["stream"] = bool(options.stream)  # Ollama streams unless told otherwise
        extra = dict(options.extra)
        model_opts: dict[str, Any] = dict(extra.pop("options", None) or {})
        had_options = "options" in options.extra
        if options.max_output_tokens is not None:
            model_opts["num_predict"] = options.max_output_tokens
        if options.temperature is not None:
            model_opts["temperature"] = options.temperature
        if options.stop_sequences:
            model_opts["stop"] = list(options.stop_sequences)
        if model_opts or had_options:
            body["options"] = model_opts
        if options.output_schema is not None:
            body["format"] = dict(options.output_schema)
        for k, v in extra.items():
            body.setdefault(k, v)
        return WireRequest("POST", "/api/chat", {"content-type": "application/json"}, body)

    def messages_to_wire(self, messages: list[Message], *, with_ids: bool = True) -> list[WireBody]:
        out: list[WireBody] = []
        for m in messages:  # tool messages name the tool they answer (`tool_name`)
            for b in m.get("content", []):
                if b.get("type") == "tool_use" and m.get("role") == "assistant":
                    self._names[(str(m.get("session_id", "")), str(b.get("id")))] = str(b.get("name"))
        for m in messages:
            role = m.get("role")
            if role == "tool":
                out.extend(self.tool_message_to_wire(m, with_ids=with_ids))
            elif role in ("system", "user", "assistant"):
                out.extend(self.message_to_wire(m, with_ids=with_ids))
        return out

    def message_to_wire(self, message: Message, *, with_ids: bool) -> list[WireBody]:
        """One canonical message -> one wire message per text block (at least one)."""
        role = str(message["role"])
        sid = str(message.get("session_id", ""))
        raw = self.own_raw(message)
        parts: list[WireBody] = []
        thinking: list[str] = []
        calls: list[WireBody] = []
        pending_images: list[str] = []  # images before the first text block
        call_extras = raw.get("calls") or []
        for i, b in enumerate(message.get("content", [])):
            t = b.get("type")
            if t == "text":
                parts.append({"role": role, "content": b["text"]})
                if pending_images and len(parts) == 1:
                    parts[0]["images"] = pending_images
            elif t == "image":
                data = self.image_to_wire(message, i, b)
                if data is None:
                    continue
                if role == "system":
                    self.drop(message, i, "image", "Ollama system messages carry text only")
                    continue
                if parts:
                    parts[-1].setdefault("images", []).append(data)
                else:
                    pending_images.append(data)
            elif t == "thinking" and role == "assistant":
                thinking.append(str(b.get("text", "")))
                if b.get("signature"):
                    self.warn_field(
                        message,
                        i,
                        "thinking",
                        "signature",
                        f"Ollama has no thinking signature; the {self.issuer(message)} signature is not sent "
                        "(the thinking text is)",
                    )
            elif t == "redacted_thinking":
                self.drop(message, i, "redacted_thinking", "Ollama has no redacted thinking (only thinking text)")
            elif t == "tool_use" and role == "assistant":
                extra = call_extras[len(calls)] if len(calls) < len(call_extras) else {}
                calls.append(self.tool_call_to_wire(sid, b, extra, with_ids=with_ids))
            elif isinstance(t, str) and t.startswith(f"{self.name}:") and isinstance(b.get("raw"), dict):
                continue  # nothing native is kept on messages
            else:
                self.drop(message, i, str(t), f"no Ollama equivalent for a {t} block in a {role} message")
        if not parts:
            if not (pending_images or thinking or calls or raw.get("empty")):
                return []
            parts.append({"role": role, "content": ""})
            if pending_images:
                parts[0]["images"] = pending_images
        if thinking:
            parts[0]["thinking"] = "\n\n".join(thinking)
        if calls:
            parts[-1]["tool_calls"] = calls
        if raw.get("no_content") and len(parts) == 1 and parts[0]["content"] == "":
            del parts[0]["content"]  # the documented tool-call history message has none
        extra_keys = raw.get("message") or {}
        if extra_keys:
            parts[-1].update(extra_keys)
        return parts

    def issuer(self, message: Message) -> str:
        return str((message.get("metadata") or {}).get("provider") or "unknown provider's")

    def warn_field(self, message: Message, index: int, block_type: str, field: str, reason: str) -> None:
        """A field of a block that is sent without it (§7.3: logged, the block itself survives)."""
        self.log.warning(
            "%s: %s of %s block %d of message %s (session %s) not sent: %s",
            self.name,
            field,
            block_type,
            index,
            message.get("id"),
            message.get("session_id"),
            reason,
            extra={
                "event": "field_dropped",
                "adapter": self.name,
                "session_id": str(message.get("session_id", "")),
                "message_id": str(message.get("id", "")),
                "block_type": block_type,
                "field": field,
                "reason": reason,
            },
        )

    def image_to_wire(self, message: Message, index: int, block: Block) -> str | None:
        source, media = block["source"], block["media_type"]
        if source["kind"] != "base64":
            why = (
                "Ollama takes base64 images only; an image by URL cannot be carried (adapters do no I/O)"
                if source["kind"] == "url"
                else "file_ref images must be inlined by the harness (adapters do no I/O)"
            )
            self.drop(message, index, "image", why)
            return None
        if media not in IMAGE_TYPES:
            self.drop(message, index, "image", f"media type {media} is not accepted ({', '.join(IMAGE_TYPES)})")
            return None
        return str(source["data"])

    def tool_call_to_wire(self, sid: str, block: Block, extra: Mapping[str, Any], *, with_ids: bool) -> WireBody:
        fn: dict[str, Any] = {"name": block["name"], "arguments": block["input"]}
        fn_extra = extra.get("function") if isinstance(extra.get("function"), dict) else {}
        fn.update(fn_extra or {})
        wire: WireBody = {}
        if with_ids:
            wire["id"] = self.tool_id_map(sid).provider_for(block["id"])
        else:
            self.tool_id_map(sid).provider_for(block["id"])  # keep the map complete
        wire.update({k: v for k, v in extra.items() if k not in ("function", "id")})
        wire["function"] = fn
        return wire

    def tool_message_to_wire(self, message: Message, *, with_ids: bool) -> list[WireBody]:
        out: list[WireBody] = []
        sid = str(message.get("session_id", ""))
        raw = self.own_raw(message)
        m = self.tool_id_map(sid)
        for i, block in enumerate(message.get("content", [])):
            if block.get("type") != "tool_result":
                self.drop(message, i, str(block.get("type")), "a tool message carries tool_result blocks only")
                continue
            texts: list[str] = []
            for b in block.get("content", []):
                if b.get("type") == "text":
                    texts.append(b["text"])
                else:
                    self.drop(
                        message, i, str(b.get("type")), f"Ollama tool messages take text only, not {b.get('type')}"
                    )
            if block.get("is_error"):
                self.warn_field(
                    message, i, "tool_result", "is_error", "Ollama tool messages have no error flag (the text is sent)"
                )
            head: WireBody = {"role": "tool"}
            name = self.tool_name_for(sid, block["tool_use_id"])
            pid = m.provider_for(block["tool_use_id"])
            if not with_ids:
                texts = ["\n\n".join(texts)] if len(texts) > 1 else texts
            for k, text in enumerate(texts or [""]):
                wire: WireBody = {**head, "content": text}
                if name is not None and not raw.get("no_tool_name"):
                    wire["tool_name"] = name
                if with_ids:
                    wire["tool_call_id"] = pid
                if k == 0 and raw.get("message"):
                    wire.update(raw["message"])
                out.append(wire)
        return out

    def tool_name_for(self, sid: str, canonical_id: str) -> str | None:
        return self._names.get((sid, canonical_id))

    def tool_to_wire(self, tool: ToolDefinition, raw: Mapping[str, Any]) -> WireBody:
        return function_tool(tool, tool_extra(raw, tool["name"]))

    # -- wire -> canonical (responses) --------------------------------------------------

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or (isinstance(body, dict) and "error" in body and "message" not in body):
            raise self.classify_error(resp.status if resp.status >= 400 else 500, body)
        if not isinstance(body, dict) or not isinstance(body.get("message"), dict):
            raise WireFormatError("Ollama chat response has no `message` object", provider_status=resp.status)
        if body.get("done") is False:
            raise WireFormatError(
                "Ollama chat response has done: false (a stream line, not a response)", provider_status=resp.status
            )
        sid = request_context.session_id
        anchor = body.get("created_at") or request_context.message_id
        content = self.content_from_wire(sid, body["message"], anchor)
        raw: dict[str, Any] = {k: body[k] for k in ("created_at", "done_reason") if body.get(k) is not None}
        return self.assemble(
            request_context,
            content,
            wire_model=body.get("model"),
            token_usage=self.usage_from_wire(body) or estimated_usage(self.name, self.log, request_context, content),
            provider_raw=raw,
        )

    def content_from_wire(self, sid: str, msg: Mapping[str, Any], anchor: Any) -> list[Block]:
        """Thinking, then text, then tool calls (the order Ollama produces them in)."""
        content: list[Block] = []
        if isinstance(msg.get("thinking"), str) and msg["thinking"]:
            content.append({"type": "thinking", "text": msg["thinking"], "signature": None})
        if isinstance(msg.get("content"), str) and msg["content"]:
            content.append({"type": "text", "text": msg["content"]})
        calls = msg.get("tool_calls") or []
        if not isinstance(calls, list):
            raise WireFormatError("/message/tool_calls is not an array")
        for j, call in enumerate(calls):
            content.append(self.tool_call_from_wire(sid, call, anchor, f"r{j}"))
        return content

    def call_key(self, call: Mapping[str, Any], anchor: Any, position: str) -> str:
        """The provider id of a call: its `id`, else a hash of where and what it is.

        `anchor` names the reply the call belongs to: its `created_at` (nanoseconds), else
        the harness's message id. Parsing one reply twice, or its bytes cut differently,
        gives one id; two replies with the same call never share one.
        """
        if isinstance(call.get("id"), str) and call["id"]:
            return str(call["id"])
        fn = call.get("function") or {}
        h = hashlib.blake2b(digest_size=8)
        for part in (str(anchor or ""), position, str(fn.get("name")), json.dumps(fn.get("arguments"), sort_keys=True)):
            h.update(part.encode() + b"\x00")
        return "call_" + h.hexdigest()

    def tool_call_from_wire(self, sid: str, call: Any, anchor: Any, position: str) -> Block:
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            raise WireFormatError(f"tool call is not an object with a `function`: {call!r:.80}")
        fn = call["function"]
        args = fn.get("arguments")
        if isinstance(args, str):  # some servers send a JSON string; the docs say an object
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError as exc:
                raise WireFormatError(f"tool call arguments are not JSON: {args[:80]!r}") from exc
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise WireFormatError(f"tool call {fn.get('name')} arguments are not a JSON object: {args!r:.80}")
        key = self.call_key(call, anchor, position)
        cid = self.tool_id_map(sid).canonical_for(key, _ms(anchor))
        self._names[(sid, cid)] = str(fn.get("name", ""))
        return {"type": "tool_use", "id": cid, "name": str(fn.get("name", "")), "input": args}

    def usage_from_wire(self, body: Mapping[str, Any]) -> dict[str, int] | None:
        """`prompt_eval_count` / `eval_count` -> TokenUsage (contract §7.2); absent on load replies."""
        if "prompt_eval_count" not in body and "eval_count" not in body:
            return None
        return {
            "input_tokens": int(body.get("prompt_eval_count") or 0),
            "output_tokens": int(body.get("eval_count") or 0),
            "cached_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }

    def stop_reason(self, body: Mapping[str, Any], content: list[Block]) -> str:
        if any(b.get("type") == "tool_use" for b in content):
            return "tool_use"  # Ollama says `stop` for a turn that ends in tool calls
        return _STOP.get(str(body.get("done_reason")), "end_turn")

    def classify_error(self, status: int, body: Any) -> AdapterError:
        """Adapter contract §6.2 on Ollama's `{"error": "..."}` body (docs.ollama.com/api/errors).

        Ollama has one error field and no code, so the status decides, refined by the text:
        a context-length message is context_overflow; 404 (model not found) is an invalid
        request, as §6.2 maps 4xx; 502 (a cloud model unreachable) is a server error.
        """
        msg = body.get("error") if isinstance(body, dict) else None
        text = str(msg) if msg is not None else str(body)[:200]
        hint = None
        if _CONTEXT.search(text) and status in (400, 413, 500):
            hint = "context_overflow"
        elif status == 404 and _NOT_FOUND.search(text):
            hint = "invalid_request"
        return error_for_status(status, f"ollama {status}: {text}", hint=hint)

    # -- streaming --------------------------------------------------------------------------

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        """NDJSON lines -> canonical events (contract §5.1 table, streaming-protocol §5.3).

        Strict: a line that is not a JSON object, a stream that ends without its `done: true`
        line, and any line after it raise WireFormatError naming the line. A mid-stream
        `{"error": ...}` line (docs.ollama.com/api/errors) yields an error event and
        message_complete("error"), then raises the classified error.
        """
        st = _OllamaStream(self, context)
        return self.cancellable(context, st.run(chunks), lambda: st.content)

    # -- wire -> canonical (requests) -----------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        """A recorded `/api/chat` body -> canonical messages, tools and options.

        Tool calls without `id` get positional keys (`call_m<i>c<j>`) and canonical ids
        derived from them; a tool message answers, in order, the pending calls of the latest
        assistant message (by `tool_call_id` when present, else the first pending call with
        its `tool_name`, else the first pending call).
        """
        sid = session_id or "sess_" + new_ulid().lower()
        model = f"{self.provider}:{body.get('model', 'unknown')}"
        m = self.tool_id_map(sid)
        out: list[Message] = []
        opt_raw: dict[str, Any] = {}
        pending: list[tuple[str, str]] = []  # (canonical id, name) awaiting a result
        saw_call = False
        ids_on_wire = False
        last_tool: tuple[str, Message] | None = None  # (tool_call_id, message) for split results
        wire_messages = body.get("messages")
        if wire_messages is None:
            wire_messages = []
        if not isinstance(wire_messages, list):
            raise WireFormatError("/messages is not an array")
        for i, wm in enumerate(wire_messages):
            if not isinstance(wm, dict):
                raise WireFormatError(f"/messages/{i} is not an object")
            for key in ("images", "tool_calls"):
                if wm.get(key) is not None and not isinstance(wm[key], list):
                    raise WireFormatError(f"/messages/{i}/{key} is not an array")
            role = wm.get("role")
            extra = {k: v for k, v in wm.items() if k not in _MESSAGE_KEYS}
            raw: dict[str, Any] = {"message": extra} if extra else {}
            text = wm.get("content")
            text = text if isinstance(text, str) else ""
            if "content" not in wm and role != "tool":
                raw["no_content"] = True
            if role != "tool":
                last_tool = None
            if role in ("system", "user", "assistant"):
                blocks: list[Block] = []
                if role == "assistant" and isinstance(wm.get("thinking"), str) and wm["thinking"]:
                    blocks.append({"type": "thinking", "text": wm["thinking"], "signature": None})
                if text:
                    blocks.append({"type": "text", "text": text})
                for img in wm.get("images") or []:
                    if isinstance(img, str) and img:
                        blocks.append(
                            {
                                "type": "image",
                                "source": {"kind": "base64", "data": img},
                                "media_type": sniff_media_type(img) or "image/jpeg",
                            }
                        )
                meta: dict[str, Any] = {}
                if role == "assistant":
                    meta = {"model": model, "provider": self.provider}
                    pending = []
                    calls_extra: list[dict[str, Any]] = []
                    for j, call in enumerate(wm.get("tool_calls") or []):
                        saw_call = True
                        if isinstance(call, dict) and isinstance(call.get("id"), str):
                            ids_on_wire = True
                            key = call["id"]
                        else:
                            key = f"call_m{i}c{j}"
                        b = self.tool_call_from_wire(
                            sid, {**call, "id": key} if isinstance(call, dict) else call, None, ""
                        )
                        blocks.append(b)
                        pending.append((b["id"], b["name"]))
                        fn_extra = {
                            k: v for k, v in (call.get("function") or {}).items() if k not in ("name", "arguments")
                        }
                        ce = {k: v for k, v in call.items() if k not in ("function", "id")}
                        if fn_extra:
                            ce["function"] = fn_extra
                        calls_extra.append(ce)
                    if any(calls_extra):
                        raw["calls"] = calls_extra
                if not blocks:
                    blocks = [{"type": "text", "text": ""}]
                    raw["empty"] = True
                if raw:
                    meta["provider_raw"] = {self.name: raw}
                out.append(_message(sid, str(role), blocks, meta))
            elif role == "tool":
                tcid = wm.get("tool_call_id")
                if isinstance(tcid, str) and last_tool is not None and last_tool[0] == tcid:
                    # one tool_result with several text blocks is sent as consecutive messages
                    last_tool[1]["content"][0]["content"].append({"type": "text", "text": text})
                    continue
                cid = self.pair_result(m, pending, wm)
                result: Block = {
                    "type": "tool_result",
                    "tool_use_id": cid,
                    "content": [{"type": "text", "text": text}] if text else [],
                }
                if "tool_name" not in wm:
                    raw["no_tool_name"] = True
                if isinstance(tcid, str):
                    ids_on_wire = True
                meta = {"parent_tool_use_id": cid}
                if raw:
                    meta["provider_raw"] = {self.name: raw}
                msg = _message(sid, "tool", [result], meta)
                out.append(msg)
                last_tool = (tcid, msg) if isinstance(tcid, str) else None
        if saw_call and not ids_on_wire:
            opt_raw["tool_ids"] = False
        if "stream" not in body:
            opt_raw["stream_absent"] = True
        tools, native = _request_tools(body.get("tools"), opt_raw)
        kept = {self.name: opt_raw} if opt_raw else {}
        return ParsedRequest(out, tools, _request_options(body, model, provider_tools=tuple(native), provider_raw=kept))

    def pair_result(self, m: OllamaToolIdMap, pending: list[tuple[str, str]], wm: Mapping[str, Any]) -> str:
        tcid = wm.get("tool_call_id")
        if isinstance(tcid, str):
            cid = m.canonical_for(tcid)
            for k, (c, _) in enumerate(pending):
                if c == cid:
                    del pending[k]
                    break
            return cid
        name = wm.get("tool_name")
        for k, (c, n) in enumerate(pending):
            if name is None or n == name:
                del pending[k]
                return c
        # a result no call is waiting for: keep it, under an id its position determines
        return m.canonical_for(f"orphan_{len(m.pairs())}")

    # -- estimates ------------------------------------------------------------------------

    # Calibrated on the Ollama /api/chat recordings in ../shared/samples/wire (llama3 and
    # llama3.1 chat templates: begin-of-text, a 4-token role header per message and an
    # end-of-turn token, then the assistant header the reply starts from). See
    # tests/test_adapter_ollama.py::test_estimate_calibration for the figures.
    MESSAGE_FRAMING = 5
    REQUEST_FRAMING = 4
    IMAGE_TOKENS = 256  # a vision projector's fixed patch count (no recording to calibrate on)

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        n = self.REQUEST_FRAMING
        for m in messages:
            for b in m.get("content", []) or [{}]:
                n += self._block_tokens(b)
            n += self.MESSAGE_FRAMING * max(1, sum(1 for b in m.get("content", []) if b.get("type") == "text"))
        if tools:
            n += 10 + sum(
                json_tokens({"type": "function", "function": {k: t[k] for k in ("name", "description")}})
                + json_tokens(t["input_schema"])
                for t in tools
            )
        return n

    def _block_tokens(self, b: Block) -> int:
        t = b.get("type")
        if t == "text":
            return text_tokens(str(b.get("text", "")))
        if t == "thinking":
            return text_tokens(str(b.get("text", "")))
        if t == "tool_use":
            # chat templates render a call as {"name": ..., "parameters": {...}}; the models'
            # vocabularies merge JSON punctuation more than the generic counter assumes
            return json_tokens({"name": b.get("name"), "parameters": b.get("input", {})}) * 4 // 5
        if t == "tool_result":
            return sum(self._block_tokens(x) for x in b.get("content", []))
        if t == "image":
            return self.IMAGE_TOKENS if (b.get("source") or {}).get("kind") == "base64" else 0
        return 0


class _OllamaStream(StreamState[OllamaAdapter]):
    """State of one Ollama NDJSON stream being translated."""

    def __init__(self, adapter: OllamaAdapter, ctx: RequestContext) -> None:
        super().__init__(adapter, ctx)
        self.open: int | None = None  # index of the text/thinking block deltas extend
        self.started = False
        self.done = False
        self.calls = 0
        self.created_at: Any = None

    def lines(self, chunks: Iterable[bytes | str]) -> Iterator[tuple[int, bytes, bool]]:
        """(number, line, whether a line feed ended it): only the body's last line may lack one."""
        buf = b""
        n = 0
        for chunk in chunks:
            buf += chunk.encode() if isinstance(chunk, str) else chunk
            while True:
                cut = buf.find(b"\n")
                if cut < 0:
                    break
                line, buf = buf[:cut], buf[cut + 1 :]
                n += 1
                yield n, line, True
        if buf:
            yield n + 1, buf, False

    def run(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        last = 0
        for n, line, ended in self.lines(chunks):
            last = n
            if not line.strip():
                continue
            try:
                obj = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, ValueError) as exc:
                if not ended and self.started and not self.done:  # the body stops inside its last line
                    yield self.complete("error", None)
                    raise StreamCutError(
                        f"NDJSON stream ended inside line {n}, before a final `done: true` line: cut before its end"
                    ) from exc
                raise WireFormatError(f"NDJSON line {n} is not JSON: {line[:80]!r}") from exc
            if not isinstance(obj, dict):
                raise WireFormatError(f"NDJSON line {n} is not a JSON object: {line[:80]!r}")
            if self.done:
                raise WireFormatError(f"NDJSON line {n} follows the final `done: true` line")
            yield from self.handle(n, obj)
        if not self.done:
            yield from self.start()
            yield self.complete("error", None)
            raise StreamCutError(
                f"NDJSON stream ended at line {last} without a final `done: true` line: cut before its end"
            )

    def start(self) -> Iterator[StreamEvent]:
        if not self.started:
            self.started = True
            yield {"type": "message_start", "message_id": self.mid, "role": "assistant", "model": self.model}

    def handle(self, n: int, obj: dict[str, Any]) -> Iterator[StreamEvent]:
        if "error" in obj and "message" not in obj:
            err = self.adapter.classify_error(500, obj)
            yield from self.start()
            yield {
                "type": "error",
                "message_id": self.mid,
                "error_class": err.error_class,
                "message": str(err),
                "provider_status": None,
            }
            yield self.complete("error", None)
            self.done = True
            raise err
        if obj.get("model") and not self.started:
            self.model = f"{self.adapter.provider}:{obj['model']}"
        self.created_at = obj.get("created_at")
        yield from self.start()
        msg = obj.get("message")
        if msg is not None and not isinstance(msg, dict):
            raise WireFormatError(f"NDJSON line {n}: `message` is not an object")
        msg = msg or {}
        if isinstance(msg.get("thinking"), str) and msg["thinking"]:
            yield from self.delta("thinking", msg["thinking"])
        if isinstance(msg.get("content"), str) and msg["content"]:
            yield from self.delta("text", msg["content"])
        calls = msg.get("tool_calls") or []
        if not isinstance(calls, list):
            raise WireFormatError(f"NDJSON line {n}: `message.tool_calls` is not an array")
        for call in calls:
            yield from self.tool_call(call)
        if "done" not in obj or not isinstance(obj["done"], bool):
            raise WireFormatError(f"NDJSON line {n} has no boolean `done`")
        if obj["done"]:
            usage = self.adapter.usage_from_wire(obj)
            if usage is not None:
                yield {"type": "usage_update", "message_id": self.mid, "usage": dict(usage)}
            yield self.complete(self.adapter.stop_reason(obj, self.content), usage)
            self.done = True

    def delta(self, kind: str, text: str) -> Iterator[StreamEvent]:
        if self.open is None or self.content[self.open]["type"] != kind:
            self.open = len(self.content)
            block: Block = {"type": kind, "text": ""}
            if kind == "thinking":
                block["signature"] = None
            self.content.append(block)
        self.content[self.open]["text"] += text
        ev: StreamEvent = {
            "type": "thinking_delta" if kind == "thinking" else "text_delta",
            "message_id": self.mid,
            "content_block_index": self.open,
            "text": text,
        }
        if kind == "thinking":
            ev["signature"] = None
        yield ev

    def tool_call(self, call: Any) -> Iterator[StreamEvent]:
        """A streamed call arrives whole: start, its arguments as one delta, end."""
        anchor = self.created_at or self.ctx.message_id
        block = self.adapter.tool_call_from_wire(self.ctx.session_id, call, anchor, f"r{self.calls}")
        self.calls += 1
        self.open = None
        k = len(self.content)
        self.content.append(block)
        yield {
            "type": "tool_use_start",
            "message_id": self.mid,
            "content_block_index": k,
            "tool_use_id": block["id"],
            "tool_name": block["name"],
        }
        yield {
            "type": "tool_use_input_delta",
            "message_id": self.mid,
            "content_block_index": k,
            "tool_use_id": block["id"],
            "partial_json": json.dumps(block["input"], ensure_ascii=False),
        }
        yield {
            "type": "tool_use_end",
            "message_id": self.mid,
            "content_block_index": k,
            "tool_use_id": block["id"],
            "final_input": block["input"],
        }

    def complete(self, stop_reason: str, usage: Mapping[str, int] | None) -> StreamEvent:
        usage = usage or estimated_usage(self.adapter.name, self.adapter.log, self.ctx, self.content)
        # an empty reply (a model load) is one empty text block, as the non-streamed parse
        final = [dict(b) for b in self.content] or [{"type": "text", "text": ""}]
        return {
            "type": "message_complete",
            "message_id": self.mid,
            "stop_reason": stop_reason,
            "final_content": final,
            "usage": dict(usage) if usage else None,
        }


_message = request_message  # the shared reader-side constructor (base.request_message)


def _request_tools(wire_tools: Any, opt_raw: dict[str, Any]) -> tuple[list[ToolDefinition], list[Mapping[str, Any]]]:
    """A recorded request's `tools`: each function tool as a canonical ToolDefinition (its
    other keys kept in `opt_raw["tool_extras"]`), any other kind kept as it is (native)."""
    if isinstance(wire_tools, list) and not wire_tools:
        opt_raw["empty_tools"] = True
    tools, native, tool_extras, layout = function_tools_from_wire(wire_tools or [])
    if tool_extras:
        opt_raw["tool_extras"] = tool_extras
    if layout is not None:
        opt_raw["tool_layout"] = layout
    return tools, native


def _request_options(
    body: WireBody, model: str, *, provider_tools: tuple[Mapping[str, Any], ...], provider_raw: dict[str, Any]
) -> AdapterOptions:
    """A recorded request's options: its model options (`options.num_predict`, `temperature`,
    `stop`), `stream`, its `format` schema, and every other key kept in `extra`."""
    extra_opts = {k: v for k, v in body.items() if k not in _KNOWN_TOP}
    model_opts = body.get("options")
    max_tokens = temperature = None
    stop: tuple[str, ...] = ()
    if isinstance(model_opts, dict):
        rest = dict(model_opts)
        if isinstance(rest.get("num_predict"), int) and rest["num_predict"] > 0:
            max_tokens = rest.pop("num_predict")
        if isinstance(rest.get("temperature"), int | float) and not isinstance(rest["temperature"], bool):
            temperature = float(rest.pop("temperature"))
        if isinstance(rest.get("stop"), list) and rest["stop"] and all(isinstance(s, str) for s in rest["stop"]):
            stop = tuple(rest.pop("stop"))
        extra_opts["options"] = rest
    elif "options" in body:
        extra_opts["options"] = model_opts
    fmt = body.get("format")
    output_schema = fmt if isinstance(fmt, dict) else None
    if "format" in body and output_schema is None:
        extra_opts["format"] = fmt
    stream = body.get("stream", True)
    return AdapterOptions(
        model=model,
        max_output_tokens=max_tokens,
        temperature=temperature,
        stop_sequences=stop,
        stream=stream is not False,
        output_schema=output_schema,
        extra=extra_opts,
        provider_tools=provider_tools,
        provider_raw=provider_raw,
    )
