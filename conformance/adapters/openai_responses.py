"""The OpenAI Responses API adapter (`POST /v1/responses`; adapter contract §3-§7, seed 003 §7).

Wire format as documented by OpenAI (read for this module):
https://platform.openai.com/docs/api-reference/responses/create (input items, the Response
object), https://platform.openai.com/docs/api-reference/responses-streaming (typed SSE
events), https://platform.openai.com/docs/guides/reasoning (reasoning items, summaries,
`encrypted_content`), https://platform.openai.com/docs/guides/function-calling (`call_id`),
https://platform.openai.com/docs/guides/images-vision (`input_image`),
https://platform.openai.com/docs/guides/error-codes (error bodies). The same facts, as data,
are `conformance.wire.openai_responses.OPENAI_RESPONSES`.

Mapping:

- SYSTEM messages go to the top-level `instructions` string (concatenated with a blank
  line). A system/developer message read from a recorded `input` list goes back there, in
  place and with its role (the adapter declares `supports_system_messages_in_list: false`:
  it does not itself place new system messages in the list).
- USER -> an input message with `input_text` / `input_image` parts (base64 images as a
  `data:` URL, `detail` "auto" unless a recorded request said otherwise).
- ASSISTANT -> the output items it came from, in block order: `reasoning` (thinking),
  `message` with `output_text` (text), `function_call` (tool_use), other item types kept
  whole as `openai-responses:<type>` blocks and sent back verbatim.
- TOOL -> `function_call_output` items; `output` is a string, or a list of `input_text` /
  `input_image` parts when the result holds images or several blocks. The API has no
  error flag on tool outputs, so `is_error` is reported with a WARN line (field_dropped).
- Tool ids: the per-session map binds canonical `tu_` ids to `call_id`s (at most 64
  characters). The item `id` (`fc_...`) is storage-side and rides in
  `metadata.provider_raw["openai-responses"]`, restored when the message is sent back.
- Thinking: a `reasoning` item becomes one thinking block whose text is its summary parts
  joined by a blank line and whose `signature` is its `encrypted_content`. It is sent
  back only on messages OpenAI issued (`metadata.provider == "openai"`), and only with
  `encrypted_content` or a stored item id (store=false needs the former); otherwise it is
  dropped with the §7.3 WARN line, like foreign (e.g. Anthropic-signed) thinking and every
  `redacted_thinking` block (the API has no redacted reasoning).
- Conversation state is the caller's: the adapter never sets `store`,
  `previous_response_id`, `conversation` or `include`. Pass them in `AdapterOptions.extra`
  (for stateless reasoning round trips: `store: false` and `include:
  ["reasoning.encrypted_content"]`). With `previous_response_id` the caller sends only the
  new messages; the adapter renders what it is given.
- The API has no stop sequences: `stop_sequences` is reported with the option WARN line.
- Stop reasons: `completed` -> end_turn (tool_use when the output holds a function call),
  `incomplete` for `max_output_tokens` -> max_tokens, for `content_filter` -> end_turn,
  `failed` -> the classified error is raised, `cancelled` -> cancelled.
- Usage (contract §7.2, which names Chat Completions' fields; the Responses API renamed
  them upstream): `input_tokens` (the contract's `prompt_tokens`) includes
  `input_tokens_details.cached_tokens`; the canonical buckets are disjoint (see the
  openai-chat adapter for why), so input = input_tokens - cached, cached_input = cached,
  output = `output_tokens` (reasoning tokens, `output_tokens_details.reasoning_tokens`, are
  part of it), cache creation 0. Every stream reports usage on `response.completed`: there
  is no `stream_options.include_usage` to ask for it with.
"""

from __future__ import annotations

import json
import mimetypes
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from . import overrides
from ._shared import CUSTOM_INPUT, URL_IMAGE_MEDIA_TYPE, StreamState, UrlMediaMemory, lay_out_tools, tool_layout
from .base import (
    AdapterError,
    AdapterOptions,
    BaseAdapter,
    Block,
    CancellableStreams,
    Message,
    ParsedRequest,
    RateLimitError,
    RequestContext,
    StreamCutError,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireFormatError,
    WireRequest,
    WireResponse,
    error_for_status,
    estimated_usage,
    new_ulid,
    parse_json_object,
    request_message,
    sse_events,
)
from .estimate import json_tokens, openai_image_tokens, text_tokens
from .streams import cut_input

PATH = "/v1/responses"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
# error.code / error.type hints (adapter contract §6.2, OpenAI error-codes guide)
_ERROR_CODE = {
    "rate_limit_exceeded": "rate_limit",
    "insufficient_quota": "rate_limit",
    "context_length_exceeded": "context_overflow",
    "string_above_max_length": "invalid_request",
    "invalid_api_key": "auth",
    "invalid_authentication": "auth",
    "unsupported_country_region_territory": "auth",
    "server_error": "server_error",
    "vector_store_timeout": "server_error",
}
_ERROR_TYPE = {
    "server_error": "server_error",
    "insufficient_quota": "rate_limit",
    "requests": "rate_limit",
    "tokens": "rate_limit",
    "authentication_error": "auth",
    "permission_error": "auth",
}
_CONTEXT = re.compile(r"context (window|length)|maximum context|too many tokens|exceeds the context", re.I)
_DATA_URL = re.compile(r"data:(?P<media>[^;,]+);base64,(?P<data>.*)\Z", re.S)
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


def _extras(item: Mapping[str, Any], *known: str) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in known}


def read_arguments(args: Any) -> tuple[dict[str, Any] | None, str | None]:
    """A `function_call` item's `arguments` as canonical tool input, and the departure read
    (None when the string is the documented one).

    The docs: `arguments` is "A JSON string of the arguments to pass to the function"
    (https://platform.openai.com/docs/api-reference/responses/create#responses-create-input).
    A string holding a JSON object is that. A string that is valid JSON but no object is still
    the call's string of arguments, kept, never refused: a JSON string whose text is itself a
    JSON object (arguments encoded twice, as a client that re-encodes the string sends them)
    reads as that object; any other JSON value reads as its text under `input` (the canonical
    input is an object, as for a custom tool's free text). None: not a string, or not JSON.
    """
    if not isinstance(args, str):
        return None, None
    parsed = parse_json_object(args)
    if parsed is not None:
        return parsed, None
    try:
        value = json.loads(args)
    except (ValueError, RecursionError):
        return None, None
    inner = parse_json_object(value) if isinstance(value, str) else None
    if inner is not None:
        return inner, "is a JSON string holding a JSON object (encoded twice); read as that object"
    text = value if isinstance(value, str) else args
    return {CUSTOM_INPUT: text}, f"is JSON but not an object; read as its text under {CUSTOM_INPUT!r}"


def _kind(item: Mapping[str, Any]) -> str:
    """An input item's kind: its `type`, or `message` for the easy form (role + content)."""
    t = item.get("type")
    return t if isinstance(t, str) else "message" if "role" in item else ""


def _summary_text(summary: Any, part: str = "summary_text") -> str:
    return "\n\n".join(str(p.get("text", "")) for p in summary or [] if isinstance(p, dict) and p.get("type") == part)


def _reasoning_text(item: Mapping[str, Any]) -> str:
    """A reasoning item's visible text: its summary, else its `reasoning_text` content (open
    models return the raw chain of thought there instead of a summary)."""
    return _summary_text(item.get("summary")) or _summary_text(item.get("content"), "reasoning_text")


class OpenAIResponsesAdapter(UrlMediaMemory, CancellableStreams, BaseAdapter):
    """Canonical <-> OpenAI Responses API (`POST /v1/responses`)."""

    name: ClassVar[str] = "openai-responses"
    provider: ClassVar[str] = "openai"
    wire_api: ClassVar[str] = "openai-responses"
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^.{1,64}$", re.S)
    capabilities: ClassVar[Mapping[str, Any]] = {
        # reasoning summaries in, encrypted_content round-tripped on OpenAI-issued messages
        "supports_thinking": True,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        "supports_structured_output": True,  # text.format json_schema
        "supports_streaming": True,
        "supports_streaming_tool_calls": True,
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": True,  # automatic; cached_tokens reported
        # system messages are hoisted into `instructions`
        "supports_system_messages_in_list": False,
        "max_context_tokens": 400_000,
        "max_output_tokens": 128_000,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def new_provider_tool_id(self) -> str:
        return "call_" + new_ulid()

    # -- canonical -> wire --------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        opt_raw = options.provider_raw.get(self.name) or {}
        body: WireBody = {"model": options.wire_model}
        instructions, items = self.input_to_wire(messages)
        if instructions is not None:
            body["instructions"] = instructions
        if (
            opt_raw.get("input_string")
            and len(items) == 1
            and items[0].get("role") == "user"
            and isinstance(items[0].get("content"), str)
            and set(items[0]) == {"role", "content"}
        ):
            body["input"] = items[0]["content"]
        else:
            body["input"] = items
        wire_tools = lay_out_tools(
            [self.tool_to_wire(t, opt_raw) for t in tools], [dict(t) for t in options.provider_tools], opt_raw
        )
        if wire_tools:
            body["tools"] = wire_tools
        if options.max_output_tokens is not None:
            body["max_output_tokens"] = options.max_output_tokens
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.stop_sequences:
            self.warn_option("stop_sequences", "the Responses API has no stop parameter")
        if options.stream:
            body["stream"] = True
        if options.output_schema is not None:
            fmt = opt_raw.get("format") or {"name": "output", "strict": True}
            body["text"] = {
                **(opt_raw.get("text") or {}),
                "format": {"type": "json_schema", **fmt, "schema": dict(options.output_schema)},
            }
        for k, v in options.extra.items():
            if k == "text" and isinstance(v, Mapping) and isinstance(body.get("text"), dict):
                body["text"] = {**v, **body["text"]}
            else:
                body.setdefault(k, v)
        return WireRequest("POST", PATH, {"content-type": "application/json"}, body)

    def input_to_wire(self, messages: list[Message]) -> tuple[str | None, list[WireBody]]:
        instructions: list[str] = []
        items: list[WireBody] = []
        for m in messages:
            role = m.get("role")
            if role == "system":
                texts = self.system_texts(m)
                raw = self.own_raw(m)
                if raw.get("role") in ("system", "developer"):
                    items.append(self.message_item(raw, str(raw["role"]), [_input_text(t) for t in texts]))
                elif texts:
                    instructions.append("\n\n".join(texts))
            elif role == "user":
                items.extend(self.user_to_wire(m))
            elif role == "assistant":
                items.extend(self.assistant_to_wire(m))
            elif role == "tool":
                items.extend(self.tool_to_wire_items(m))
        return ("\n\n".join(instructions) if instructions else None), items

    def system_texts(self, message: Message) -> list[str]:
        texts: list[str] = []
        for i, b in enumerate(message.get("content", [])):
            if b.get("type") == "text":
                texts.append(b["text"])
            else:
                self.drop(message, i, str(b.get("type")), "system prompts carry text only")
        return texts

    def message_item(self, raw: Mapping[str, Any], role: str, parts: list[Block]) -> WireBody:
        """An input message; `content` as the string form when the recorded request used it."""
        content: Any = parts
        if raw.get("string") and len(parts) == 1 and parts[0].get("type") == "input_text":
            content = parts[0]["text"]
        return {**(raw.get("item") or {}), "role": role, "content": content}

    def user_to_wire(self, message: Message) -> list[WireBody]:
        parts: list[Block] = []
        raw = self.own_raw(message)
        for i, b in enumerate(message.get("content", [])):
            t = b.get("type")
            if t == "text":
                parts.append(_input_text(b["text"]))
            elif t == "image":
                part = self.image_to_wire(message, i, b, raw.get("image_detail") or {})
                if part is not None:
                    parts.append(part)
            elif isinstance(t, str) and t.startswith(f"{self.name}:") and isinstance(b.get("raw"), dict):
                parts.append(dict(b["raw"]))
            else:
                self.drop(message, i, str(t), f"no Responses API equivalent for a {t} block in a user message")
        return [self.message_item(raw, "user", parts)] if parts else []

    def image_to_wire(
        self, message: Message, index: int, block: Block, details: Mapping[str, Any], key: str | None = None
    ) -> Block | None:
        source, media = block["source"], block["media_type"]
        if source["kind"] == "file_ref":
            self.drop(message, index, "image", "file_ref images must be inlined by the harness (adapters do no I/O)")
            return None
        if source["kind"] == "base64" and media not in IMAGE_TYPES:
            self.drop(
                message, index, "image", f"media type {media} is not accepted (accepted: {', '.join(IMAGE_TYPES)})"
            )
            return None
        url = source["data"] if source["kind"] == "url" else f"data:{media};base64,{source['data']}"
        if source["kind"] == "url":
            self._url_media[(str(message.get("session_id", "")), str(url))] = str(media)
        part: Block = {"type": "input_image", "image_url": url}
        k = key if key is not None else str(index)
        if k not in details:
            part["detail"] = "auto"
        elif details[k] is not None:
            part["detail"] = details[k]
        return part

    def assistant_to_wire(self, message: Message) -> list[WireBody]:
        out: list[WireBody] = []
        sid = str(message.get("session_id", ""))
        extras = self.own_raw(message).get("items") or {}
        open_message: WireBody | None = None  # the list-form message item text parts join
        for i, b in enumerate(message.get("content", [])):
            t = b.get("type")
            r = extras.get(str(i)) or {}
            if t == "text":
                part = (
                    {"type": "refusal", "refusal": b["text"], **(r.get("part") or {})}
                    if r.get("refusal")
                    else {"type": "output_text", "text": b["text"], **(r.get("part") or {})}
                )
                if r.get("join") and open_message is not None:
                    open_message["content"].append(part)
                    continue
                if r.get("list"):
                    open_message = {**(r.get("item") or {}), "role": "assistant", "content": [part]}
                    out.append(open_message)
                    continue
                out.append({**(r.get("item") or {}), "role": "assistant", "content": b["text"]})
            elif t == "tool_use":
                out.append(self.function_call_to_wire(sid, b, r))
            elif t == "thinking":
                item = self.reasoning_to_wire(message, i, b, r)
                if item is not None:
                    out.append(item)
            elif t == "redacted_thinking":
                self.drop(message, i, "redacted_thinking", "the Responses API has no redacted reasoning items")
            elif isinstance(t, str) and t.startswith(f"{self.name}:") and isinstance(b.get("raw"), dict):
                out.append(dict(b["raw"]))  # an output item with no canonical form (web_search_call, ...)
            else:
                self.drop(message, i, str(t), f"no Responses API equivalent for a {t} block in an assistant message")
            open_message = None
        return out

    def function_call_to_wire(self, session_id: str, block: Block, r: Mapping[str, Any]) -> WireBody:
        if r.get("custom"):
            inp = block["input"]
            text = inp[CUSTOM_INPUT] if set(inp) == {CUSTOM_INPUT} and isinstance(inp[CUSTOM_INPUT], str) else None
            return {
                "type": "custom_tool_call",
                **(r.get("item") or {}),
                "call_id": self.tool_id_map(session_id).provider_for(block["id"]),
                "name": block["name"],
                "input": text if text is not None else json.dumps(inp, ensure_ascii=False),
            }
        args = r.get("arguments")
        if not (isinstance(args, str) and read_arguments(args)[0] == block["input"]):
            args = json.dumps(block["input"], ensure_ascii=False)
        return {
            "type": "function_call",
            **(r.get("item") or {}),
            "call_id": self.tool_id_map(session_id).provider_for(block["id"]),
            "name": block["name"],
            "arguments": args,
        }

    def reasoning_to_wire(self, message: Message, index: int, block: Block, r: Mapping[str, Any]) -> WireBody | None:
        provider = (message.get("metadata") or {}).get("provider")
        if provider != self.provider:
            self.drop(
                message,
                index,
                "thinking",
                f"thinking issued by {provider or 'an unknown provider'}; OpenAI accepts only reasoning it issued",
            )
            return None
        item = dict(r.get("item") or {})
        signature = block.get("signature")
        if not signature and not item.get("id"):
            self.drop(
                message,
                index,
                "thinking",
                "reasoning without encrypted_content or a stored item id cannot be sent back",
            )
            return None
        summary = r.get("summary")
        if not (isinstance(summary, list) and _reasoning_text({**item, "summary": summary}) == block["text"]):
            summary = [{"type": "summary_text", "text": block["text"]}] if block["text"] else []
        wire: WireBody = {"type": "reasoning", **item, "summary": summary}
        if signature:
            wire["encrypted_content"] = signature
        return wire

    def tool_to_wire_items(self, message: Message) -> list[WireBody]:
        out: list[WireBody] = []
        sid = str(message.get("session_id", ""))
        extras = self.own_raw(message).get("items") or {}
        for i, block in enumerate(message.get("content", [])):
            if block.get("type") != "tool_result":
                self.drop(message, i, str(block.get("type")), "a tool message carries tool_result blocks only")
                continue
            r = extras.get(str(i)) or {}
            parts: list[Block] = []
            for j, b in enumerate(block.get("content", [])):
                t = b.get("type")
                if t == "text":
                    parts.append(_input_text(b["text"]))
                elif t == "image":
                    img = self.image_to_wire(message, i, b, r.get("image_detail") or {}, key=str(j))
                    if img is not None:
                        parts.append(img)
                elif isinstance(t, str) and t.startswith(f"{self.name}:") and isinstance(b.get("raw"), dict):
                    parts.append(dict(b["raw"]))
                else:
                    self.drop(message, i, str(t), f"tool_result content {j} has no Responses API equivalent")
            if block.get("is_error"):
                self.log.warning(
                    "%s: tool_result is_error of message %s has no wire field",
                    self.name,
                    message.get("id"),
                    extra={
                        "event": "field_dropped",
                        "adapter": self.name,
                        "session_id": sid,
                        "message_id": message.get("id"),
                        "field": "is_error",
                        "reason": "function_call_output items have no error flag",
                    },
                )
            output: Any = parts
            if not r.get("list") and len(parts) == 1 and parts[0]["type"] == "input_text":
                output = parts[0]["text"]
            elif not parts:
                output = ""
            out.append(
                {
                    "type": "custom_tool_call_output" if r.get("custom") else "function_call_output",
                    **(r.get("item") or {}),
                    "call_id": self.tool_id_map(sid).provider_for(block["tool_use_id"]),
                    "output": output,
                }
            )
        return out

    def tool_to_wire(self, tool: ToolDefinition, opt_raw: Mapping[str, Any]) -> WireBody:
        recorded = (opt_raw.get("tool_extras") or {}).get(tool["name"])
        wire: WireBody = {"type": "function", "name": tool["name"]}
        if tool.get("description"):
            wire["description"] = tool["description"]
        wire["parameters"] = tool["input_schema"]
        # function tools default to strict mode, which rejects most schemas that do not list
        # every property as required; canonical tools are sent non-strict unless recorded
        wire.update(recorded if isinstance(recorded, dict) else {"strict": False})
        return wire

    # -- wire -> canonical (responses) --------------------------------------------------

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or (isinstance(body, dict) and "error" in body and "output" not in body):
            raise self.classify_error(resp.status if resp.status >= 400 else 500, body, resp.headers)
        if not isinstance(body, dict) or not isinstance(body.get("output"), list):
            raise WireFormatError("Responses API body has no `output` list", provider_status=resp.status)
        status = body.get("status")
        if status == "failed":
            raise self.failed_error(body.get("error"), request_id=_request_id(resp.headers))
        if status in ("queued", "in_progress"):
            raise WireFormatError(
                f"response {body.get('id')} is {status}: background responses are polled by the caller",
                provider_status=resp.status,
            )
        sid = request_context.session_id
        content, items = self.output_from_wire(sid, body["output"])
        stop = self.stop_reason(body, content)
        raw: dict[str, Any] = {"id": body.get("id"), "status": status, "stop_reason": stop}
        if body.get("incomplete_details"):
            raw["incomplete_details"] = body["incomplete_details"]
        if items:
            raw["items"] = items
        return self.assemble(
            request_context,
            content,
            wire_model=body.get("model"),
            token_usage=self.usage_from_wire(body.get("usage")),
            provider_raw={k: v for k, v in raw.items() if v is not None},
            status="cancelled" if stop == "cancelled" else "complete",
        )

    def stop_reason(self, body: Mapping[str, Any], content: list[Block]) -> str:
        status = body.get("status")
        if status == "incomplete":
            reason = (body.get("incomplete_details") or {}).get("reason")
            return "end_turn" if reason == "content_filter" else "max_tokens"
        if status == "cancelled":
            return "cancelled"
        if status == "failed":
            return "error"
        return "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"

    def output_from_wire(self, session_id: str, output: list[Any]) -> tuple[list[Block], dict[str, Any]]:
        """Output items -> canonical blocks and, per block index, the wire fields to restore."""
        content: list[Block] = []
        extras: dict[str, Any] = {}
        for item in output:
            for block, extra in self.item_from_wire(session_id, item, keep_logprobs=False):
                if extra:
                    extras[str(len(content))] = extra
                content.append(block)
        return content, extras

    def _cut_call(self, call_id: Any, args: str) -> dict[str, Any]:
        """A function_call item the response left `incomplete` (the item's `status`: "One of
        in_progress, completed, or incomplete"; a response cut by `max_output_tokens` may end
        inside its arguments): `streams.cut_input`'s `{}` and WARN line; a completed item's
        arguments that are no JSON are still a `WireFormatError`."""
        return cut_input(self.log, self.name, repr(call_id), args, "item status incomplete", "arguments")

    def item_from_wire(
        self, session_id: str, item: Any, *, keep_logprobs: bool = True
    ) -> list[tuple[Block, dict[str, Any]]]:
        """One output (or assistant-side input) item -> (canonical block, provider_raw entry)."""
        if not isinstance(item, dict) or not isinstance(_kind(item), str) or not _kind(item):
            raise WireFormatError(f"output item is not an object with a type: {item!r:.80}")
        t = _kind(item)
        if t == "message":
            c = item.get("content")
            head = _extras(item, "role", "content")
            if isinstance(c, str):
                return [({"type": "text", "text": c}, {"item": head} if head else {})]
            out: list[tuple[Block, dict[str, Any]]] = []
            for j, part in enumerate(c or []):
                if not isinstance(part, dict):
                    raise WireFormatError(f"message content part is not an object: {part!r:.80}")
                extra: dict[str, Any] = {"list": True}
                if j == 0:
                    extra["item"] = head
                else:
                    extra["join"] = True
                if part.get("type") == "refusal":
                    extra["refusal"] = True
                    pex = _extras(part, "type", "refusal")
                    text = str(part.get("refusal", ""))
                else:
                    pex = _extras(part, "type", "text") if keep_logprobs else _extras(part, "type", "text", "logprobs")
                    text = str(part.get("text", ""))
                if pex:
                    extra["part"] = pex
                out.append(({"type": "text", "text": text}, extra))
            return out
        if t == "function_call":
            args = item.get("arguments")
            parsed, departure = read_arguments(args)
            if parsed is None and isinstance(args, str) and item.get("status") == "incomplete":
                parsed = self._cut_call(item.get("call_id"), args)
            if parsed is None or not isinstance(item.get("call_id"), str):
                raise WireFormatError(
                    f"function_call {item.get('call_id')!r}: arguments are not a JSON object: {str(args)[:80]!r}"
                )
            if departure is not None:
                self.log.warning(
                    "%s: function_call %r: `arguments` %s",
                    self.name,
                    item["call_id"],
                    departure,
                    extra={"event": "wire_departure", "adapter": self.name, "field": "arguments", "value": args},
                )
            cid = self.tool_id_map(session_id).canonical_for(item["call_id"])
            extra = {"item": _extras(item, "type", "call_id", "name", "arguments"), "arguments": args}
            return [({"type": "tool_use", "id": cid, "name": str(item.get("name", "")), "input": parsed}, extra)]
        if t == "custom_tool_call":
            # a custom tool's call (`custom_tool_call`: call_id, name, input, the input free
            # text the model wrote): canonical input is an object, so the text is its `input`
            free = item.get("input")
            if not isinstance(item.get("call_id"), str):
                raise WireFormatError(f"custom_tool_call {item.get('id')!r} has no call_id")
            cid = self.tool_id_map(session_id).canonical_for(item["call_id"])
            extra = {"item": _extras(item, "type", "call_id", "name", "input"), "custom": True}
            custom_input = {CUSTOM_INPUT: free if isinstance(free, str) else json.dumps(free, ensure_ascii=False)}
            return [({"type": "tool_use", "id": cid, "name": str(item.get("name", "")), "input": custom_input}, extra)]
        if t == "reasoning":
            sig = item.get("encrypted_content")
            block: Block = {
                "type": "thinking",
                "text": _reasoning_text(item),
                "signature": sig if isinstance(sig, str) and sig else None,
            }
            extra = {
                "item": _extras(item, "type", "summary", "encrypted_content"),
                "summary": item.get("summary") or [],
            }
            return [(block, extra)]
        # web_search_call, file_search_call, image_generation_call, mcp_*, item_reference ...
        return [({"type": f"{self.name}:{t}", "raw": item}, {})]

    def usage_from_wire(self, usage: Any) -> dict[str, int] | None:
        """Responses usage -> TokenUsage (contract §7.2; disjoint buckets: input = input - cached)."""
        if not isinstance(usage, dict):
            return None
        cached = int((usage.get("input_tokens_details") or {}).get("cached_tokens") or 0)
        return {
            "input_tokens": max(0, int(usage.get("input_tokens") or 0) - cached),
            "output_tokens": int(usage.get("output_tokens") or 0),
            "cached_input_tokens": cached,
            "cache_creation_input_tokens": 0,
        }

    # -- errors -----------------------------------------------------------------------------

    def classify_error(self, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> AdapterError:
        """Adapter contract §6.2: HTTP status, refined by `error.code` / `error.type`."""
        err = body.get("error") if isinstance(body, dict) else None
        if not isinstance(err, dict):
            err = {"message": str(body)[:200]}
        code, etype = err.get("code"), err.get("type")
        msg = str(err.get("message"))
        hint = _ERROR_CODE.get(str(code)) or _ERROR_TYPE.get(str(etype))
        if hint is None and 400 <= status < 500 and status not in (401, 403, 429) and _CONTEXT.search(msg):
            hint = "context_overflow"
        exc = error_for_status(status, f"{code or etype or 'error'}: {msg}", hint=hint)
        exc.request_id = _request_id(headers)
        # contract §6.4: `retryable` says the class is transient (rate_limit, server_error,
        # network), even for `insufficient_quota`: §6.2 maps every 429 to RATE_LIMIT and names
        # no adjustment for it (the error's message says the quota is spent)
        exc.retryable = exc.error_class in ("rate_limit", "server_error", "network")
        if isinstance(exc, RateLimitError):
            exc.retry_after_seconds = _retry_after(headers)
        return exc

    def failed_error(self, error: Any, *, request_id: str | None = None) -> AdapterError:
        """A `failed` Response's `error` ({code, message}): server_error and rate limits are
        transient; the documented invalid_* / image codes are the request's fault."""
        err = error if isinstance(error, dict) else {}
        code = str(err.get("code") or "")
        hint = _ERROR_CODE.get(code) or ("invalid_request" if code and code != "server_error" else "server_error")
        exc = error_for_status(500, f"{code or 'failed'}: {err.get('message', '')}", hint=hint)
        exc.provider_status = None
        exc.request_id = request_id
        exc.retryable = exc.error_class in ("rate_limit", "server_error")
        return exc

    # -- streaming --------------------------------------------------------------------------

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        """Typed SSE events -> canonical events (contract §5.1, streaming-protocol §5.3).

        Strict: every event must be JSON with a `type` equal to its SSE event name,
        `sequence_number`s must increase, deltas must name an item (and content part) that
        was added, and the stream must end with response.completed / .incomplete / .failed.
        Anything else raises WireFormatError naming the event's position.
        """
        st = _ResponsesStream(self, context)
        return self.cancellable(context, st.run(chunks), lambda: st.content)

    # -- wire -> canonical (requests) -----------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        """A recorded request body -> canonical messages, tools and options.

        Consecutive assistant-side items (reasoning, function_call, assistant messages,
        other output items) form one assistant message attributed to OpenAI; every wire
        field with no canonical home is kept in provider_raw so rendering back gives the
        recorded body.
        """
        sid = session_id or "sess_" + new_ulid().lower()
        model = f"{self.provider}:{body.get('model', 'unknown')}"
        out: list[Message] = []
        opt_raw: dict[str, Any] = {}
        if isinstance(body.get("instructions"), str):
            out.append(_message(sid, "system", [{"type": "text", "text": body["instructions"]}], {}))
        inp = body.get("input")
        if isinstance(inp, str):
            opt_raw["input_string"] = True
            inp = [{"role": "user", "content": inp}]
        pending: list[Block] = []
        pending_extra: dict[str, Any] = {}

        def flush() -> None:
            nonlocal pending, pending_extra
            if pending:
                meta: dict[str, Any] = {"model": model, "provider": self.provider}
                if pending_extra:
                    meta["provider_raw"] = {self.name: {"items": pending_extra}}
                out.append(_message(sid, "assistant", pending, meta))
            pending, pending_extra = [], {}

        for n, item in enumerate(inp if isinstance(inp, list) else []):
            if not isinstance(item, dict):
                raise WireFormatError(f"/input/{n} is not an object")
            t, role = _kind(item), item.get("role")
            if t == "message" and role in ("user", "system", "developer"):
                flush()
                out.append(self.input_message_from_wire(sid, item))
            elif t in ("function_call_output", "custom_tool_call_output"):
                flush()
                out.append(self.function_output_from_wire(sid, item))
            else:
                for block, extra in self.item_from_wire(sid, item):
                    if extra:
                        pending_extra[str(len(pending))] = extra
                    pending.append(block)
        flush()
        tools: list[ToolDefinition] = []
        native: list[Mapping[str, Any]] = []
        tool_extras: dict[str, Any] = {}
        slots: list[str] = []
        for t in body.get("tools", []) or []:
            slots.append(
                "s" if isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("name"), str) else "n"
            )
            if slots[-1] == "s":
                tools.append(
                    {
                        "name": t["name"],
                        "description": t.get("description") or "",
                        "input_schema": t.get("parameters") or {"type": "object", "properties": {}},
                        "side_effects": "execute",
                    }
                )
                extra = _extras(t, "type", "name", "description", "parameters")
                if "description" in t and not (isinstance(t["description"], str) and t["description"]):
                    extra["description"] = t["description"]  # null or "": canonical needs a string
                tool_extras[t["name"]] = extra
            else:
                native.append(t)
        if tool_extras:
            opt_raw["tool_extras"] = tool_extras
        if tool_layout(slots) is not None:
            opt_raw["tool_layout"] = slots
        known = {"model", "input", "instructions", "tools", "max_output_tokens", "temperature"}
        if body.get("stream") is True:
            known.add("stream")
        output_schema = None
        text = body.get("text")
        fmt = text.get("format") if isinstance(text, dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and isinstance(fmt.get("schema"), dict):
            output_schema = fmt["schema"]
            opt_raw["format"] = _extras(fmt, "type", "schema")
            opt_raw["text"] = _extras(text, "format") if isinstance(text, dict) else {}
            known.add("text")
        if not isinstance(body.get("instructions"), str):
            known.discard("instructions")
        return ParsedRequest(
            out,
            tools,
            AdapterOptions(
                model=model,
                max_output_tokens=body.get("max_output_tokens"),
                temperature=body.get("temperature"),
                stream=body.get("stream") is True,
                output_schema=output_schema,
                extra={k: v for k, v in body.items() if k not in known},
                provider_tools=tuple(native),
                provider_raw={self.name: opt_raw} if opt_raw else {},
            ),
        )

    def input_message_from_wire(self, sid: str, item: Mapping[str, Any]) -> Message:
        role = str(item.get("role"))
        c = item.get("content")
        raw: dict[str, Any] = {}
        head = _extras(item, "role", "content")
        if head:
            raw["item"] = head
        blocks: list[Block] = []
        if isinstance(c, str):
            raw["string"] = True
            blocks.append({"type": "text", "text": c})
        else:
            details: dict[str, Any] = {}
            for part in c or []:
                if isinstance(part, dict) and part.get("type") == "input_text":
                    blocks.append({"type": "text", "text": str(part.get("text", ""))})
                elif isinstance(part, dict) and part.get("type") == "input_image" and self._image_part(part):
                    details[str(len(blocks))] = part.get("detail")
                    blocks.append(overrides.call(self.image_from_wire, part, session_id=sid))
                else:
                    blocks.append({"type": f"{self.name}:{part.get('type')}", "raw": part})
            if details:
                raw["image_detail"] = details
        if role in ("system", "developer"):
            raw["role"] = role
            texts = [b for b in blocks if b["type"] == "text"]
            return _message(sid, "system", texts or [{"type": "text", "text": ""}], {"provider_raw": {self.name: raw}})
        if not blocks:
            blocks = [{"type": "text", "text": ""}]
        return _message(sid, "user", blocks, {"provider_raw": {self.name: raw}} if raw else {})

    def function_output_from_wire(self, sid: str, item: Mapping[str, Any]) -> Message:
        cid = self.tool_id_map(sid).canonical_for(str(item.get("call_id")))
        output = item.get("output")
        r: dict[str, Any] = {}
        head = _extras(item, "type", "call_id", "output")
        if head:
            r["item"] = head
        inner: list[Block] = []
        if isinstance(output, str):
            inner.append({"type": "text", "text": output})
        else:
            r["list"] = True
            details: dict[str, Any] = {}
            for part in output or []:
                if isinstance(part, dict) and part.get("type") == "input_text":
                    inner.append({"type": "text", "text": str(part.get("text", ""))})
                elif isinstance(part, dict) and part.get("type") == "input_image" and self._image_part(part):
                    details[str(len(inner))] = part.get("detail")
                    inner.append(overrides.call(self.image_from_wire, part, session_id=sid))
                else:
                    inner.append({"type": f"{self.name}:{part.get('type')}", "raw": part})
            if details:
                r["image_detail"] = details
        if item.get("type") == "custom_tool_call_output":
            r["custom"] = True
        result: Block = {"type": "tool_result", "tool_use_id": cid, "content": inner}
        meta: dict[str, Any] = {"parent_tool_use_id": cid}
        if r:
            meta["provider_raw"] = {self.name: {"items": {"0": r}}}
        return _message(sid, "tool", [result], meta)

    @staticmethod
    def _image_part(part: Mapping[str, Any]) -> bool:
        return isinstance(part.get("image_url"), str) and bool(part["image_url"])

    def image_from_wire(self, part: Mapping[str, Any], session_id: str = "") -> Block:
        """A base64 `data:` URL reads back as a base64 image. Any other URL is a url-kind
        image whose media type is the one this adapter rendered it with in this session,
        else the image type its file extension names, else the placeholder image/jpeg: the
        wire carries no media type, and an extension naming no image type (`.txt`) must not
        make the block invalid (TS113)."""
        url = str(part.get("image_url", ""))
        m = _DATA_URL.match(url)
        if m:
            return {"type": "image", "source": {"kind": "base64", "data": m["data"]}, "media_type": m["media"]}
        media = self._url_media.get((session_id, url))
        if media is None:
            guess = mimetypes.guess_type(url.split("?")[0])[0]
            media = guess if guess in IMAGE_TYPES else URL_IMAGE_MEDIA_TYPE
        return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": media}

    # -- estimates ------------------------------------------------------------------------

    # calibration of estimate_input_tokens on the recorded /v1/responses traffic in
    # ../shared/samples/wire (tests/test_adapter_openai_responses.py reports the error)
    EST_BASE: ClassVar[int] = 3
    EST_PER_MESSAGE: ClassVar[int] = 3
    EST_TOOLS_BASE: ClassVar[int] = 6
    EST_PER_TOOL: ClassVar[int] = 0
    EST_SCHEMA_NUM: ClassVar[int] = 3
    EST_SCHEMA_DEN: ClassVar[int] = 5
    EST_ENC_OVERHEAD: ClassVar[int] = 1000
    EST_ENC_CHARS_PER_TOKEN: ClassVar[float] = 5.5

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        """Tokenizer-free estimate (conformance.adapters.estimate), calibrated on recorded
        `/v1/responses` traffic: framing per message, images by OpenAI's 512 px tiles,
        function tools as their JSON plus framing. Reasoning sent back counts only after
        the last user message (the API drops earlier turns' reasoning from context), and
        then by the size of its `encrypted_content` (about 5.5 characters per reasoning
        token over a fixed envelope; its summary text is not counted separately).
        Output of built-in tools (web search results) is invisible here and not estimated.
        """
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
        n = self.EST_BASE
        for i, m in enumerate(messages):
            n += self.EST_PER_MESSAGE
            for b in m.get("content", []):
                if b.get("type") == "thinking" and i > last_user and b.get("signature"):
                    size = len(str(b["signature"])) - self.EST_ENC_OVERHEAD
                    n += max(0, int(size / self.EST_ENC_CHARS_PER_TOKEN))
                n += self._block_tokens(b)
        if tools:
            n += self.EST_TOOLS_BASE + sum(
                json_tokens(t["input_schema"]) * self.EST_SCHEMA_NUM // self.EST_SCHEMA_DEN
                + text_tokens(t["name"] + " " + t["description"])
                + self.EST_PER_TOOL
                for t in tools
            )
        return n

    def _block_tokens(self, b: Block) -> int:
        t = b.get("type")
        if t == "text":
            return text_tokens(b["text"])
        if t == "tool_use":
            return 10 + json_tokens(b["input"])
        if t == "tool_result":
            return 6 + sum(self._block_tokens(x) for x in b.get("content", []))
        if t == "image":
            return openai_image_tokens(b)
        return 0


def _input_text(text: str) -> Block:
    return {"type": "input_text", "text": text}


def _request_id(headers: Mapping[str, Any] | None) -> str | None:
    for k, v in (headers or {}).items():
        if k.lower() == "x-request-id":
            return str(v[0] if isinstance(v, list) and v else v)
    return None


def _retry_after(headers: Mapping[str, Any] | None) -> float | None:
    h = {k.lower(): (v[0] if isinstance(v, list) and v else v) for k, v in (headers or {}).items()}
    try:
        if h.get("retry-after-ms") is not None:
            return float(h["retry-after-ms"]) / 1000
        if h.get("retry-after") is not None:
            return float(h["retry-after"])
    except (TypeError, ValueError):
        return None
    return None


class _ResponsesStream(StreamState[OpenAIResponsesAdapter]):
    """State of one Responses API SSE stream being translated."""

    def __init__(self, adapter: OpenAIResponsesAdapter, ctx: RequestContext) -> None:
        super().__init__(adapter, ctx)
        self.kinds: dict[int, str] = {}  # output_index -> item type
        self.block_of: dict[int, int] = {}  # output_index -> block (reasoning, function_call, other)
        self.parts: dict[tuple[int, int], int] = {}  # (output_index, content_index) -> text block
        self.args: dict[int, str] = {}  # tool_use block -> argument JSON so far
        self.ended: set[int] = set()  # tool_use blocks whose tool_use_end was emitted
        self.custom: dict[int, str] = {}  # tool_use block of a custom_tool_call -> its input text
        self.summaries: dict[int, int] = {}  # thinking block -> summary parts seen
        self.high = -1  # highest content_block_index emitted (contract §5.2 invariant 5)
        self.usage: dict[str, int] | None = None
        self.started = self.done = False
        self.seq: int | None = None
        self.pos = -1

    def fail(self, message: str) -> WireFormatError:
        return WireFormatError(f"Responses stream event {self.pos}: {message}")

    def run(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        for ev in sse_events(chunks):
            text = ev.data.strip()
            if not text:
                continue
            self.pos += 1
            if text == "[DONE]":  # not documented for this API; some compatible servers send it
                break
            try:
                data = json.loads(text)
            except ValueError as exc:
                raise self.fail(f"data is not JSON: {text[:80]!r}") from exc
            if not isinstance(data, dict) or not isinstance(data.get("type"), str):
                raise self.fail(f"data is not an event object with a `type`: {text[:80]!r}")
            if ev.event != "message" and ev.event != data["type"]:
                raise self.fail(f"SSE event name {ev.event!r} differs from its data type {data['type']!r}")
            seq = data.get("sequence_number")
            if isinstance(seq, int):
                if self.seq is not None and seq <= self.seq:
                    raise self.fail(f"sequence_number {seq} after {self.seq}")
                self.seq = seq
            yield from self.handle(data)
            if self.done:
                return
        yield from self.start()
        yield from self.close_open()
        yield self.complete("error")
        raise StreamCutError(
            f"Responses stream event {self.pos}: stream ended before response.completed, response.incomplete "
            "or response.failed: cut before its end"
        )

    def start(self) -> Iterator[StreamEvent]:
        if not self.started:
            self.started = True
            yield {"type": "message_start", "message_id": self.mid, "role": "assistant", "model": self.model}

    def emit(self, k: int, event: StreamEvent) -> Iterator[StreamEvent]:
        """A block event, unless it would move content_block_index backwards."""
        if k >= self.high:
            self.high = k
            yield event

    def index(self, data: Mapping[str, Any], key: str = "output_index") -> int:
        v = data.get(key)
        if not isinstance(v, int):
            raise self.fail(f"{data.get('type')} has no integer `{key}`")
        return v

    def handle(self, data: dict[str, Any]) -> Iterator[StreamEvent]:
        t = data["type"]
        if t in ("response.created", "response.in_progress", "response.queued"):
            resp = data.get("response") or {}
            if isinstance(resp, dict) and resp.get("model"):
                self.model = f"{self.adapter.provider}:{resp['model']}"
            yield from self.start()
            return
        if t == "error":
            err = self.adapter.failed_error({"code": data.get("code"), "message": data.get("message")})
            yield from self.abort(err)
            return
        if not self.started:
            raise self.fail(f"{t} before response.created")
        if t == "response.output_item.added":
            yield from self.item_added(self.index(data), data.get("item"))
        elif t == "response.content_part.added":
            oi, ci = self.index(data), self.index(data, "content_index")
            if oi not in self.kinds:
                raise self.fail(f"content part for output {oi}, which was never added")
            if self.kinds[oi] != "message":
                return  # e.g. reasoning_text parts of a reasoning item: not canonical text
            part = data.get("part") or {}
            k = len(self.content)
            self.content.append({"type": "text", "text": ""})
            self.parts[(oi, ci)] = k
            initial = str(part.get("text") or part.get("refusal") or "")
            if initial:
                yield from self.text(k, initial)
        elif t in ("response.output_text.delta", "response.refusal.delta"):
            oi, ci = self.index(data), self.index(data, "content_index")
            at = self.parts.get((oi, ci))
            if at is None:
                raise self.fail(f"{t} for output {oi} part {ci}, which was never added")
            yield from self.text(at, str(data.get("delta", "")))
        elif t in ("response.output_text.done", "response.refusal.done"):
            oi, ci = self.index(data), self.index(data, "content_index")
            at = self.parts.get((oi, ci))
            if at is None:
                raise self.fail(f"{t} for output {oi} part {ci}, which was never added")
            yield from self.settle_text(at, str(data.get("text", data.get("refusal", ""))))
        elif t == "response.function_call_arguments.delta":
            k = self.block(data, "tool_use")
            frag = str(data.get("delta", ""))
            self.args[k] += frag
            if frag and k not in self.ended:
                yield from self.emit(
                    k,
                    {
                        "type": "tool_use_input_delta",
                        "message_id": self.mid,
                        "content_block_index": k,
                        "tool_use_id": self.content[k]["id"],
                        "partial_json": frag,
                    },
                )
        elif t == "response.custom_tool_call_input.delta":
            k = self.block(data, "tool_use")
            if k not in self.custom:
                raise self.fail(f"{t} for output {self.index(data)}, which is not a custom_tool_call")
            self.custom[k] += str(data.get("delta", ""))
        elif t == "response.custom_tool_call_input.done":
            k = self.block(data, "tool_use")
            if k in self.custom and isinstance(data.get("input"), str):
                self.custom[k] = data["input"]
        elif t == "response.function_call_arguments.done":
            k = self.block(data, "tool_use")
            if isinstance(data.get("arguments"), str):
                self.args[k] = data["arguments"]
        elif t == "response.reasoning_summary_part.added":
            k = self.block(data, "thinking")
            self.summaries[k] = self.summaries.get(k, 0) + 1
            if self.summaries[k] > 1:
                yield from self.thinking(k, "\n\n")
        elif t == "response.reasoning_summary_text.delta":
            k = self.block(data, "thinking")
            yield from self.thinking(k, str(data.get("delta", "")))
        elif t == "response.output_item.done":
            yield from self.item_done(self.index(data), data.get("item"))
        elif t in ("response.completed", "response.incomplete"):
            resp = data.get("response")
            if not isinstance(resp, dict):
                raise self.fail(f"{t} carries no `response` object")
            if resp.get("model"):
                self.model = f"{self.adapter.provider}:{resp['model']}"
            self.usage = self.adapter.usage_from_wire(resp.get("usage"))
            if self.usage is not None:
                yield {"type": "usage_update", "message_id": self.mid, "usage": dict(self.usage)}
            yield from self.close_open()
            yield self.complete(self.adapter.stop_reason(resp, self.content))
            self.done = True
        elif t == "response.failed":
            failed = data.get("response")
            yield from self.abort(self.adapter.failed_error(failed.get("error") if isinstance(failed, dict) else None))
        # other documented events (annotations, built-in tool progress, reasoning_text,
        # *.done of parts already settled) carry nothing the canonical stream has

    def block(self, data: Mapping[str, Any], kind: str) -> int:
        oi = self.index(data)
        k = self.block_of.get(oi)
        if k is None or self.content[k]["type"] != kind:
            raise self.fail(f"{data.get('type')} for output {oi}, which is not an added {kind} item")
        return k

    def item_added(self, oi: int, item: Any) -> Iterator[StreamEvent]:
        if not isinstance(item, dict) or not isinstance(item.get("type"), str):
            raise self.fail("response.output_item.added carries no typed `item`")
        if oi in self.kinds:
            raise self.fail(f"output {oi} added twice")
        t = item["type"]
        self.kinds[oi] = t
        if t == "message":
            return
        k = len(self.content)
        self.block_of[oi] = k
        if t in ("function_call", "custom_tool_call"):
            if not isinstance(item.get("call_id"), str):
                raise self.fail(f"{t} at output {oi} has no call_id")
            cid = self.adapter.tool_id_map(self.ctx.session_id).canonical_for(item["call_id"])
            self.content.append({"type": "tool_use", "id": cid, "name": str(item.get("name", "")), "input": {}})
            self.args[k] = str(item.get("arguments") or "")
            if t == "custom_tool_call":
                # its input is free text (`response.custom_tool_call_input.delta`), not JSON
                # fragments of the canonical input: no `partial_json` (contract §5.4), the
                # input whole at its end
                self.custom[k] = str(item.get("input") or "")
            yield from self.emit(
                k,
                {
                    "type": "tool_use_start",
                    "message_id": self.mid,
                    "content_block_index": k,
                    "tool_use_id": cid,
                    "tool_name": self.content[k]["name"],
                },
            )
        elif t == "reasoning":
            self.content.append({"type": "thinking", "text": "", "signature": None})
        else:
            self.content.append({"type": f"{self.adapter.name}:{t}", "raw": item})

    def item_done(self, oi: int, item: Any) -> Iterator[StreamEvent]:
        """The authoritative item: settle its blocks to it (emitting any text not yet streamed)."""
        if oi not in self.kinds:
            raise self.fail(f"response.output_item.done for output {oi}, which was never added")
        if not isinstance(item, dict) or item.get("type") != self.kinds[oi]:
            raise self.fail(f"response.output_item.done for output {oi} is not the {self.kinds[oi]} item added")
        parsed = self.adapter.item_from_wire(self.ctx.session_id, item, keep_logprobs=False)
        if self.kinds[oi] == "message":
            for ci, (block, _) in enumerate(parsed):
                k = self.parts.get((oi, ci))
                if k is None:
                    k = self.parts[(oi, ci)] = len(self.content)
                    self.content.append({"type": "text", "text": ""})
                yield from self.settle_text(k, block["text"])
            return
        k = self.block_of[oi]
        block = parsed[0][0]
        if block["type"] == "tool_use":
            if block["id"] != self.content[k]["id"]:
                raise self.fail(f"{self.kinds[oi]} at output {oi} changed its call_id")
            if k in self.custom:
                self.custom[k] = block["input"][CUSTOM_INPUT]
            else:
                self.args[k] = item["arguments"]
            yield from self.end_call(k)
        elif block["type"] == "thinking":
            have = self.content[k]["text"]
            if block["text"].startswith(have) and block["text"] != have:
                yield from self.thinking(k, block["text"][len(have) :])
            self.content[k]["text"] = block["text"]
            self.content[k]["signature"] = block["signature"]
            yield from self.emit(
                k,
                {
                    "type": "thinking_delta",
                    "message_id": self.mid,
                    "content_block_index": k,
                    "text": "",
                    "signature": block["signature"],
                },
            )
        else:
            self.content[k] = block

    def text(self, k: int, text: str) -> Iterator[StreamEvent]:
        self.content[k]["text"] += text
        if text:
            yield from self.emit(
                k, {"type": "text_delta", "message_id": self.mid, "content_block_index": k, "text": text}
            )

    def settle_text(self, k: int, final: str) -> Iterator[StreamEvent]:
        have = self.content[k]["text"]
        if final.startswith(have):
            yield from self.text(k, final[len(have) :])
        else:
            self.content[k]["text"] = final  # the provider's final text is authoritative

    def thinking(self, k: int, text: str) -> Iterator[StreamEvent]:
        self.content[k]["text"] += text
        if text:
            yield from self.emit(
                k,
                {
                    "type": "thinking_delta",
                    "message_id": self.mid,
                    "content_block_index": k,
                    "text": text,
                    "signature": None,
                },
            )

    def final_input(self, k: int) -> dict[str, Any]:
        if k in self.custom:
            return {CUSTOM_INPUT: self.custom[k]}
        parsed = parse_json_object(self.args[k])
        return parsed if parsed is not None else {}

    def end_call(self, k: int) -> Iterator[StreamEvent]:
        if k in self.ended:
            return
        self.ended.add(k)
        self.content[k]["input"] = self.final_input(k)
        yield from self.emit(
            k,
            {
                "type": "tool_use_end",
                "message_id": self.mid,
                "content_block_index": k,
                "tool_use_id": self.content[k]["id"],
                "final_input": self.content[k]["input"],
            },
        )

    def close_open(self) -> Iterator[StreamEvent]:
        for k in sorted(self.args):
            if k not in self.ended:
                # a call whose item never finished: contract §5.3, what parses or {}
                self.ended.add(k)
                self.content[k]["input"] = self.final_input(k)
                yield {
                    "type": "tool_use_end",
                    "message_id": self.mid,
                    "content_block_index": k,
                    "tool_use_id": self.content[k]["id"],
                    "final_input": self.content[k]["input"],
                }
                self.high = max(self.high, k)

    def abort(self, err: AdapterError) -> Iterator[StreamEvent]:
        """Contract §6.5: close open calls, an error event, message_complete(error), raise."""
        yield from self.start()
        yield from self.close_open()
        yield {
            "type": "error",
            "message_id": self.mid,
            "error_class": err.error_class,
            "message": str(err),
            "provider_status": None,
        }
        yield self.complete("error")
        self.done = True
        raise err

    def complete(self, stop_reason: str) -> StreamEvent:
        usage = self.usage or estimated_usage(self.adapter.name, self.adapter.log, self.ctx, self.content)
        return {
            "type": "message_complete",
            "message_id": self.mid,
            "stop_reason": stop_reason,
            "final_content": [dict(b) for b in self.content],
            "usage": dict(usage) if usage else None,
        }


_message = request_message  # the shared reader-side constructor (base.request_message)
