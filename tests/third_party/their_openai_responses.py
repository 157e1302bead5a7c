"""An honest OpenAI Responses API adapter written by a third party (issue 25) from the metis
contract (provider-adapter-contract.md §3.3, §4.3, §5.2, §6.2, §6.5, §7.2), the canonical
format (§6.5, §7.3) and OpenAI's documentation, never from turnspec's reference adapter.
Its choices differ where the docs allow:

- canonical SYSTEM messages become the request's top-level `instructions` ("A system (or
  developer) message inserted into the model's context"), joined with a blank line; a
  system message read from an `input` item goes back as that item (its role is kept in this
  adapter's `provider_raw`, canonical §6.5);
- user and tool content is always a list of `input_text` / `input_image` parts, an
  assistant's text a `message` item of `output_text` parts (with empty `annotations`);
- a function tool is sent with `"strict": false` unless the request it was read from said
  otherwise (the Function calling guide: strict mode needs every property required);
- `stop_sequences` has no Responses field: the option is not sent, with a WARN line;
- thinking is dropped on the way out with a WARN line and reasoning items are not mapped to
  thinking on the way in (contract §4.3); a reply's reasoning items are kept verbatim in
  `provider_raw` and replayed before that turn's output when it is sent back (the reasoning
  guide: pass reasoning items back "in your input ... if you are manually managing
  context");
- a tool result's `is_error` has no field on `function_call_output`: dropped with a WARN;
- provider tool ids for canonical ids first sent here are `call_` + 24 hex digits;
- errors carry the core's request id; OpenAI's `x-request-id` is named in the message.

Sources: platform.openai.com/docs — Responses API reference (create, the response object,
streaming events), Function calling guide, Reasoning guide, Images and vision guide,
Structured outputs guide, Error codes guide, Streaming responses guide ("The Responses API
uses semantic events for streaming"; the stream ends with `response.completed`,
`response.incomplete` or `response.failed`, with no `[DONE]` sentinel).
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from their_common import (  # a sibling module: `turnspec conform` loads this file by path
    CanonicalStream,
    finish_message,
    frame_json,
    header,
    json_object_or_none,
    mint_ulid,
    openai_block_tokens,
    plain_message,
    sse_frames,
    token_usage,
)

from conformance.adapters.base import BaseAdapter
from conformance.adapters.errors import (
    AdapterError,
    AuthError,
    ContextOverflowError,
    InvalidRequestError,
    NetworkError,
    RateLimitError,
    ServerError,
    WireFormatError,
)
from conformance.adapters.estimate import json_tokens, text_tokens
from conformance.adapters.protocol import (
    AdapterOptions,
    Block,
    Message,
    ParsedRequest,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireRequest,
    WireResponse,
)

PROVIDER = "openai"
NAME = "their-openai-responses"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
_DATA_URL = re.compile(r"data:(?P<media>[^;,]+);base64,(?P<data>.*)\Z", re.S)

# the response object's `status` / `incomplete_details.reason` -> contract §3.3 StopReason
# (a completed response with a function call ends in `tool_use`, decided from its output)
STOPS = {
    "completed": "end_turn",
    "max_output_tokens": "max_tokens",
    "content_filter": "end_turn",
    "failed": "error",
    "cancelled": "cancelled",
}


def _classify(status: int | None, err: Any, headers: Mapping[str, Any], core_request_id: str | None) -> AdapterError:
    """Contract §6.2: the HTTP status first, then the error object's `code` / `type`."""
    err = err if isinstance(err, dict) else {}
    code, etype = str(err.get("code") or ""), str(err.get("type") or "")
    text = str(err.get("message") or (f"HTTP {status}" if status else "the response failed"))
    message = f"OpenAI Responses [{code or etype or status or 'error'}] {text}"
    provider_id = header(headers, "x-request-id")
    if provider_id:
        message += f" -- x-request-id {provider_id}"
    cls: type[AdapterError]
    if code == "context_length_exceeded" or status == 413:
        cls = ContextOverflowError
    elif code in ("rate_limit_exceeded", "insufficient_quota") or etype == "insufficient_quota" or status == 429:
        cls = RateLimitError
    elif code == "invalid_api_key" or status in (401, 403):
        cls = AuthError
    elif code == "server_error" or etype == "server_error" or (status is not None and status >= 500):
        cls = ServerError
    elif status == 408:
        cls = NetworkError
    elif (status is not None and 400 <= status < 500) or etype == "invalid_request_error":
        cls = InvalidRequestError
    else:
        cls = AdapterError
    if cls is RateLimitError:
        # OpenAI sends `retry-after-ms` beside (or instead of) the standard `retry-after`
        after, after_ms = header(headers, "retry-after"), header(headers, "retry-after-ms")
        try:
            seconds = float(after_ms) / 1000 if after_ms is not None else float(after) if after is not None else None
        except ValueError:
            seconds = None
        return RateLimitError(
            message, retry_after_seconds=seconds, provider_status=status, request_id=core_request_id, retryable=True
        )
    retryable = cls in (ServerError, NetworkError)
    return cls(message, provider_status=status, request_id=core_request_id, retryable=retryable)


def _image_url(block: Mapping[str, Any]) -> str | None:
    src, media = block.get("source") or {}, block.get("media_type")
    if src.get("kind") == "url":
        return str(src["data"])
    if src.get("kind") == "base64" and media in IMAGE_TYPES:
        return f"data:{media};base64,{src['data']}"
    return None


def _image_from_url(url: str) -> Block:
    d = _DATA_URL.match(url)
    if d:
        return {"type": "image", "source": {"kind": "base64", "data": d["data"]}, "media_type": d["media"]}
    path = url.lower().split("?")[0]
    media = next((f"image/{e}" for e in ("png", "gif", "webp") if path.endswith("." + e)), "image/jpeg")
    return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": media}


def _parts(content: Any) -> list[dict[str, Any]]:
    """A `content` string is shorthand for one text part (Responses reference, input message)."""
    if isinstance(content, str):
        return [{"type": "input_text", "text": content}]
    if isinstance(content, list):
        return [p for p in content if isinstance(p, dict)]
    return []


class TheirResponsesAdapter(BaseAdapter):
    """Canonical <-> OpenAI Responses API (`POST /v1/responses`)."""

    name: ClassVar[str] = NAME
    provider: ClassVar[str] = PROVIDER
    wire_api: ClassVar[str] = "openai-responses"
    stops: ClassVar[Mapping[str, str]] = STOPS
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": False,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        "supports_structured_output": True,
        "supports_streaming": True,
        "supports_streaming_tool_calls": True,
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": True,
        "supports_system_messages_in_list": True,
        "max_context_tokens": 128000,
        "max_output_tokens": 32768,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def new_provider_tool_id(self) -> str:
        return "call_" + secrets.token_hex(12)

    # canonical -> wire ----------------------------------------------------------------

    def _error_flag_lost(self, m: Message, k: int) -> None:
        """Canonical §7.3: the flag cannot be carried, so it goes with one WARN entry."""
        reason = "function_call_output has no error field on the Responses API; is_error not sent"
        self.log.warning(
            "%s: session %s message %s block %d (tool_result): %s",
            self.name,
            m.get("session_id"),
            m.get("id"),
            k,
            reason,
            extra={
                "session_id": str(m.get("session_id", "")),
                "message_id": str(m.get("id", "")),
                "block_type": "tool_result",
                "adapter": self.name,
                "reason": reason,
            },
        )

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        raw_all = options.provider_raw if isinstance(options.provider_raw, Mapping) else {}
        mine: Mapping[str, Any] = raw_all.get(self.name) if isinstance(raw_all.get(self.name), Mapping) else {}
        details = mine.get("image_detail") if isinstance(mine.get("image_detail"), Mapping) else {}
        instructions: list[str] = []
        items: list[dict[str, Any]] = []
        for m in messages:
            role = m.get("role")
            if role == "system":
                texts = []
                for k, b in enumerate(m.get("content") or []):
                    if b.get("type") == "text":
                        texts.append(str(b["text"]))
                    else:
                        self.drop(m, k, str(b.get("type")), "instructions hold text only")
                placed = self.own_raw(m).get("input_role")
                if placed in ("system", "developer"):
                    items.append(
                        {
                            "type": "message",
                            "role": placed,
                            "content": [{"type": "input_text", "text": t} for t in texts],
                        }
                    )
                else:
                    instructions.append("".join(texts))
            elif role == "tool":
                items.extend(self._tool_items(m))
            elif role == "assistant":
                items.extend(self._assistant_items(m))
            else:
                parts = self._user_parts(m, details)
                if parts:
                    items.append({"type": "message", "role": "user", "content": parts})
        body: dict[str, Any] = {"model": options.wire_model}
        if instructions:
            body["instructions"] = "\n\n".join(instructions)
        body["input"] = items
        strict = mine.get("strict_tools") if isinstance(mine.get("strict_tools"), Mapping) else {}
        wire_tools: list[dict[str, Any]] = []
        for t in tools:
            tool = {
                "type": "function",
                "name": t["name"],
                "description": t.get("description", ""),
                "parameters": t["input_schema"],
                "strict": strict.get(str(t["name"]), False),
            }
            if tool["strict"] == "unset":
                del tool["strict"]  # read without one: the API's own default applies again
            wire_tools.append(tool)
        wire_tools += [dict(t) for t in options.provider_tools]
        if wire_tools:
            body["tools"] = wire_tools
        if options.max_output_tokens is not None:
            body["max_output_tokens"] = options.max_output_tokens
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.stop_sequences:
            self.warn_option("stop_sequences", "the Responses API has no stop-sequence parameter")
        if options.output_schema is not None:
            body["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": str(mine.get("schema_name") or "reply"),
                    "schema": dict(options.output_schema),
                    "strict": bool(mine.get("schema_strict", True)),
                }
            }
        if options.stream:
            body["stream"] = True  # usage comes with response.completed (contract §7.2)
        for key, value in options.extra.items():
            body[key] = value
        return WireRequest("POST", "/v1/responses", {"content-type": "application/json"}, body)

    def _user_parts(self, m: Message, details: Mapping[str, Any]) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for k, b in enumerate(m.get("content") or []):
            t = b.get("type")
            if t == "text":
                parts.append({"type": "input_text", "text": b["text"]})
            elif t == "image":
                url = _image_url(b)
                if url is None:
                    self.drop(m, k, "image", f"input_image takes URLs or base64 {', '.join(IMAGE_TYPES)}")
                    continue
                part: dict[str, Any] = {"type": "input_image", "image_url": url}
                if url in details:
                    part["detail"] = details[url]
                parts.append(part)
            else:
                self.drop(m, k, str(t), f"a user message has no {t} part on the Responses API")
        return parts

    def _assistant_items(self, m: Message) -> list[dict[str, Any]]:
        sid = str(m["session_id"])
        raw = self.own_raw(m)
        items: list[dict[str, Any]] = []
        calls = raw.get("calls") if isinstance(raw.get("calls"), dict) else {}
        refusals = raw.get("refusals") if isinstance(raw.get("refusals"), list) else []
        said = raw.get("messages") if isinstance(raw.get("messages"), dict) else {}
        text: list[dict[str, Any]] | None = None
        for k, b in enumerate(m.get("content") or []):
            t = b.get("type")
            if raw.get("placeholder") and k == 0:
                continue  # the empty text standing for a turn of provider items only
            if t == "text":
                if text is None:
                    text = []
                    seen = said.get(str(k))  # the message item's own id and status, as read
                    items.append(
                        {
                            **(seen if isinstance(seen, dict) else {}),
                            "type": "message",
                            "role": "assistant",
                            "content": text,
                        }
                    )
                if k in refusals:
                    text.append({"type": "refusal", "refusal": b["text"]})
                else:
                    text.append({"type": "output_text", "text": b["text"], "annotations": []})
                continue
            text = None
            if t == "tool_use":
                seen = calls.get(b["id"])  # the item's own id and status, as read (canonical §6.5)
                items.append(
                    {
                        **(seen if isinstance(seen, dict) else {}),
                        "type": "function_call",
                        "call_id": self.tool_id_map(sid).provider_for(b["id"]),
                        "name": b["name"],
                        "arguments": json.dumps(b.get("input", {}), ensure_ascii=False),
                    }
                )
            else:
                # contract §4.3: thinking and redacted thinking MUST be dropped with a WARN
                self.drop(m, k, str(t), f"the Responses API takes no canonical {t} block back")
        # the turn's items with no canonical block (reasoning, built-in tool calls), replayed
        # verbatim where they stood (the reasoning guide: pass them back in `input`)
        for at, item in raw.get("extras") or []:
            if isinstance(item, dict) and isinstance(at, int):
                items.insert(min(at, len(items)), dict(item))
        return items

    def _tool_items(self, m: Message) -> list[dict[str, Any]]:
        out = []
        for k, b in enumerate(m.get("content") or []):
            if b.get("type") != "tool_result":
                self.drop(m, k, str(b.get("type")), "a tool message carries function_call_output items only")
                continue
            if b.get("is_error"):
                self._error_flag_lost(m, k)
            inner = b.get("content") or []
            texts = [str(x.get("text", "")) for x in inner if x.get("type") == "text"]
            for x in inner:
                if x.get("type") != "text":
                    self.drop(m, k, str(x.get("type")), "function_call_output is sent as text here")
            out.append(
                {
                    "type": "function_call_output",
                    "call_id": self.tool_id_map(str(m["session_id"])).provider_for(b["tool_use_id"]),
                    "output": "".join(texts),
                }
            )
        return out

    # wire -> canonical (requests) ------------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        try:
            return self._read_request(body, session_id)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WireFormatError(f"malformed Responses request: {exc!r}") from None

    def _read_request(self, body: WireBody, session_id: str | None) -> ParsedRequest:
        if not isinstance(body, dict):
            raise WireFormatError("a Responses API request body is a JSON object")
        sid = session_id or "sess_" + mint_ulid()
        ids = self.tool_id_map(sid)
        model = f"{PROVIDER}:{body.get('model')}"
        assistant_meta = {
            "model": model,
            "provider": PROVIDER,
            "routing": {"mode": "default", "chosen_model": model, "reason": "read from a Responses request"},
        }
        out: list[Message] = []
        raw: dict[str, Any] = {}
        if isinstance(body.get("instructions"), str):
            out.append(plain_message(sid, "system", [{"type": "text", "text": body["instructions"]}], {}))
        turn: _Turn | None = None  # the assistant turn being read

        def close_turn() -> None:
            nonlocal turn
            if turn is not None:
                meta = dict(assistant_meta)
                kept = turn.raw()
                if kept:
                    meta["provider_raw"] = {self.name: kept}
                out.append(plain_message(sid, "assistant", turn.blocks(), meta))
            turn = None

        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            kind = item.get("type", "message")
            user_side = kind in ("function_call_output", "item_reference") or (
                kind == "message" and item.get("role") != "assistant"
            )
            if not user_side:
                if turn is None:
                    turn = _Turn(ids)
                turn.read(item, lenient=True)
                continue
            close_turn()
            if kind == "function_call_output":
                cid = ids.canonical_for(str(item.get("call_id")))
                inner: list[Block] = []
                for p in _parts(item.get("output")):
                    if p.get("type") in ("input_text", "output_text", "text"):
                        inner.append({"type": "text", "text": str(p.get("text", ""))})
                    elif p.get("type") == "input_image" and isinstance(p.get("image_url"), str):
                        inner.append(_image_from_url(p["image_url"]))
                block = {"type": "tool_result", "tool_use_id": cid, "content": inner}
                out.append(plain_message(sid, "tool", [block], {"parent_tool_use_id": cid}))
            elif kind == "message" and item.get("role") in ("system", "developer"):
                text = [
                    {"type": "text", "text": str(p.get("text", ""))}
                    for p in _parts(item.get("content"))
                    if p.get("type") in ("input_text", "text")
                ]
                meta = {"provider_raw": {self.name: {"input_role": item["role"]}}}
                out.append(plain_message(sid, "system", text or [{"type": "text", "text": ""}], meta))
            elif kind == "message":
                content: list[Block] = []
                for p in _parts(item.get("content")):
                    if p.get("type") in ("input_text", "text"):
                        content.append({"type": "text", "text": str(p.get("text", ""))})
                    elif p.get("type") == "input_image" and isinstance(p.get("image_url"), str):
                        content.append(_image_from_url(p["image_url"]))
                        if "detail" in p:
                            raw.setdefault("image_detail", {})[p["image_url"]] = p["detail"]
                out.append(plain_message(sid, "user", content or [{"type": "text", "text": ""}], {}))
        close_turn()
        tools: list[ToolDefinition] = []
        provider_tools: list[dict[str, Any]] = []
        strict: dict[str, Any] = {}
        for i, t in enumerate(body.get("tools") or []):
            if isinstance(t, dict) and t.get("type") == "function":
                if not isinstance(t.get("name"), str):
                    raise WireFormatError(f"tools[{i}]: a function tool has a string `name`")
                tools.append(
                    {
                        "name": t.get("name"),
                        "description": t.get("description", ""),
                        "input_schema": t.get("parameters") or {"type": "object", "properties": {}},
                        "side_effects": "execute",
                    }
                )
                strict[str(t.get("name"))] = t.get("strict", "unset")
            elif isinstance(t, dict):
                provider_tools.append(t)
        if strict:
            raw["strict_tools"] = strict
        known = {"model", "input", "instructions", "tools", "max_output_tokens", "temperature", "stream"}
        schema = None
        fmt = body.get("text", {}).get("format") if isinstance(body.get("text"), dict) else None
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema" and len(body["text"]) == 1:
            schema = fmt.get("schema")
            raw["schema_name"] = fmt.get("name")
            raw["schema_strict"] = bool(fmt.get("strict", False))
            known.add("text")
        options = AdapterOptions(
            model=model,
            max_output_tokens=body.get("max_output_tokens"),
            temperature=body.get("temperature"),
            stream=bool(body.get("stream")),
            output_schema=schema,
            extra={k: v for k, v in body.items() if k not in known},
            provider_tools=tuple(provider_tools),
            provider_raw={self.name: raw} if raw else {},
        )
        return ParsedRequest(out, tools, options)

    # wire -> canonical (responses) -----------------------------------------------------

    @staticmethod
    def _tokens(u: Any) -> dict[str, int] | None:
        if not isinstance(u, dict) or "input_tokens" not in u:
            return None
        details = u.get("input_tokens_details")
        cached = int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0
        return token_usage(int(u.get("input_tokens") or 0), int(u.get("output_tokens") or 0), cached, 0)

    def read_output(self, output: Any, sid: str) -> tuple[list[Block], dict[str, Any]]:
        """A response's `output` items as canonical blocks, and what this adapter keeps of
        them to send the turn back (reasoning items, item ids) in its `provider_raw`."""
        turn = _Turn(self.tool_id_map(sid))
        for item in output if isinstance(output, list) else []:
            if isinstance(item, dict):
                turn.read(item, lenient=False)
        return turn.content, turn.raw()

    @staticmethod
    def stop_of(response: Mapping[str, Any], content: list[Block]) -> str:
        status = str(response.get("status") or "completed")
        if status == "incomplete":
            details = response.get("incomplete_details")
            reason = details.get("reason") if isinstance(details, dict) else None
            return STOPS.get(str(reason), "end_turn")
        if status == "completed" and any(b.get("type") == "tool_use" for b in content):
            return "tool_use"
        return STOPS.get(status, "end_turn")

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        try:
            return self._read_response(response, request_context)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WireFormatError(f"malformed Responses reply: {exc!r}") from None

    def _read_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or not isinstance(body, dict):
            err = body.get("error") if isinstance(body, dict) else None
            raise _classify(resp.status, err, resp.headers, request_context.request_id)
        if body.get("status") == "failed" or (isinstance(body.get("error"), dict) and "output" not in body):
            raise _classify(None, body.get("error"), resp.headers, request_context.request_id)
        if not isinstance(body.get("output"), list):
            raise WireFormatError("a response object has an `output` list")
        content, kept = self.read_output(body["output"], request_context.session_id)
        details = body["usage"].get("output_tokens_details") if isinstance(body.get("usage"), dict) else None
        if kept.get("extras") and isinstance(details, dict) and isinstance(details.get("reasoning_tokens"), int):
            kept["reasoning_tokens"] = details["reasoning_tokens"]
        raw: dict[str, Any] = {"id": body.get("id"), "status": body.get("status"), **kept}
        if body.get("incomplete_details"):
            raw["incomplete_details"] = body["incomplete_details"]
        return finish_message(
            request_context,
            PROVIDER,
            content,
            served_by=body.get("model") if isinstance(body.get("model"), str) else None,
            tokens=self._tokens(body.get("usage")),
            raw=raw,
            adapter=self.name,
        )

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return _ResponsesStream(self, context).events(chunks)

    # estimates --------------------------------------------------------------------------

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        # OpenAI cookbook "How to count tokens with tiktoken": 3 tokens per message plus its
        # role and 3 to prime the reply; a function definition about its JSON's token count
        n = 3
        for m in messages:
            n += 4 + sum(openai_block_tokens(b) for b in m.get("content") or [])
            raw = self.own_raw(m)
            if isinstance(raw.get("reasoning_tokens"), int):
                n += raw["reasoning_tokens"]  # what the reply that produced them reported
            else:
                n += sum(_extra_tokens(x[1]) for x in raw.get("extras") or [] if isinstance(x, list) and len(x) == 2)
        for t in tools:
            n += 8 + text_tokens(f"{t.get('name', '')}:{t.get('description', '')}")
            n += json_tokens(t.get("input_schema") or {})
        return n


class _Turn:
    """One assistant turn's wire items (request `input` or response `output`) read into
    canonical blocks, with what this adapter keeps to render them back (canonical §6.5)."""

    def __init__(self, ids: Any) -> None:
        self.ids = ids
        self.content: list[Block] = []
        self.items = 0  # wire items of the turn so far
        self.extras: list[list[Any]] = []  # [position, item] of items with no canonical block
        self.calls: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, dict[str, Any]] = {}
        self.refusals: list[int] = []

    def read(self, item: dict[str, Any], *, lenient: bool) -> None:
        kind = item.get("type", "message")
        seen = {k: item[k] for k in ("id", "status") if k in item}
        if kind == "function_call":
            args = json_object_or_none(str(item.get("arguments") or ""))
            if args is None and not lenient:
                raise WireFormatError(f"function_call {item.get('call_id')}: arguments are not a JSON object")
            if not isinstance(item.get("name"), str):
                raise WireFormatError(f"function_call {item.get('call_id')!r} has no string `name`")
            cid = self.ids.canonical_for(str(item.get("call_id")))
            if seen:
                self.calls[cid] = seen
            self.content.append({"type": "tool_use", "id": cid, "name": item.get("name"), "input": args or {}})
        elif kind == "message":
            parts = _parts(item.get("content"))
            texts = [p for p in parts if p.get("type") in ("output_text", "input_text", "text", "refusal")]
            if not texts:
                self.extras.append([self.items, item])
            else:
                if seen:
                    self.messages[str(len(self.content))] = seen
                for p in texts:
                    if p.get("type") == "refusal":
                        self.refusals.append(len(self.content))
                        self.content.append({"type": "text", "text": str(p.get("refusal", ""))})
                    else:
                        self.content.append({"type": "text", "text": str(p.get("text", ""))})
        else:
            # reasoning is not mapped to thinking (contract §4.3); it and built-in tool
            # items are kept verbatim, minus the output-only `status` of a reasoning item
            kept = {k: v for k, v in item.items() if not (kind == "reasoning" and k == "status" and lenient is False)}
            self.extras.append([self.items, kept])
        self.items += 1

    def blocks(self) -> list[Block]:
        return self.content or [{"type": "text", "text": ""}]

    def raw(self) -> dict[str, Any]:
        kept: dict[str, Any] = {
            "extras": self.extras,
            "calls": self.calls,
            "messages": self.messages,
            "refusals": self.refusals,
            "placeholder": not self.content,
        }
        return {k: v for k, v in kept.items() if v}


def _extra_tokens(item: Any) -> int:
    """A replayed provider item's share of the input: the reasoning it carries counts again
    (the reasoning guide: reasoning items passed back take context). An encrypted blob is
    read as about 1,500 characters of envelope plus 4.5 characters per reasoning token, a
    line through four recorded gpt-5 replays (blobs of 1,228 to 9,572 characters; their
    summaries, not the model's input, added nothing); an item without a blob counts as its
    JSON text."""
    if not isinstance(item, dict):
        return 0
    blob = item.get("encrypted_content")
    rest = {k: v for k, v in item.items() if k not in ("encrypted_content", "id")}
    if isinstance(blob, str):
        return max(0, len(blob) - 1500) * 2 // 9
    return json_tokens(rest)


class _ResponsesStream(CanonicalStream):
    """Responses API semantic events -> canonical stream events (contract §5.2)."""

    def __init__(self, adapter: TheirResponsesAdapter, ctx: RequestContext) -> None:
        self.a, self.ctx = adapter, ctx
        super().__init__(ctx)
        self.text_at: dict[tuple[int, int], int] = {}  # (output_index, content_index) -> block
        self.calls: dict[int, int] = {}  # output_index of a function_call -> block
        self.args: dict[int, str] = {}
        self.ended: set[int] = set()

    def _events(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        for fr in sse_frames(chunks):
            data = frame_json(fr)
            try:
                yield from self.one(data)
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise WireFormatError(f"malformed event: {exc!r}", event=fr.index, line=fr.line) from None
            except WireFormatError as exc:
                if exc.event is None:
                    raise WireFormatError(str(exc), event=fr.index, line=fr.line) from None
                raise
            if self.completed:
                return
        if not self.started:
            raise WireFormatError("the stream carried no response.created event")
        raise WireFormatError("stream cut before response.completed / response.incomplete / response.failed")

    def start(self, response: Any) -> Iterator[StreamEvent]:
        if not self.started:
            self.started = True
            served = response.get("model") if isinstance(response, dict) else None
            model = (
                f"{PROVIDER}:{served}" if isinstance(served, str) and served else (self.ctx.model or "openai:unknown")
            )
            yield self.ev("message_start", role="assistant", model=model)

    def end_open_calls(self) -> Iterator[StreamEvent]:
        return self.end_calls(lenient=True)

    def end_calls(self, *, lenient: bool = False) -> Iterator[StreamEvent]:
        for i, _ in sorted(self.calls.items(), key=lambda kv: kv[1]):
            if i not in self.ended:
                yield from self.end_call(i, None, lenient=lenient)

    def end_call(self, i: int, arguments: str | None, *, lenient: bool = False) -> Iterator[StreamEvent]:
        if i in self.ended or i not in self.calls:
            return
        k = self.calls[i]
        blk = self.content[k]
        text = arguments if arguments is not None else self.args[i]
        parsed = json_object_or_none(text)
        if parsed is None:
            if not lenient:
                raise WireFormatError(f"function_call {blk['id']}: streamed arguments are not a JSON object")
            parsed = {}
        blk["input"] = parsed
        self.ended.add(i)
        yield self.ev("tool_use_end", content_block_index=k, tool_use_id=blk["id"], final_input=parsed)

    def text(self, key: tuple[int, int], piece: Any) -> Iterator[StreamEvent]:
        if not isinstance(piece, str) or not piece:
            return
        if key not in self.text_at:
            self.text_at[key] = len(self.content)
            self.content.append({"type": "text", "text": ""})
        k = self.text_at[key]
        self.content[k]["text"] += piece
        yield self.ev("text_delta", content_block_index=k, text=piece)

    def one(self, d: dict[str, Any]) -> Iterator[StreamEvent]:
        kind = d.get("type")
        if kind in ("response.created", "response.in_progress"):
            yield from self.start(d.get("response"))
            return
        if kind == "error":
            raise _classify(None, d.get("error") if isinstance(d.get("error"), dict) else d, {}, self.ctx.request_id)
        if not self.started:
            raise WireFormatError(f"{kind} before response.created")
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            yield from self.text((int(d["output_index"]), int(d.get("content_index", 0))), d.get("delta"))
        elif kind == "response.output_item.added":
            item = d["item"]
            if item.get("type") == "function_call":
                i = int(d["output_index"])
                k = len(self.content)
                cid = self.a.tool_id_map(self.ctx.session_id).canonical_for(str(item["call_id"]))
                self.content.append({"type": "tool_use", "id": cid, "name": item.get("name"), "input": {}})
                self.calls[i], self.args[i] = k, ""
                yield self.ev("tool_use_start", content_block_index=k, tool_use_id=cid, tool_name=str(item.get("name")))
        elif kind == "response.function_call_arguments.delta":
            i = int(d["output_index"])
            if i not in self.calls:
                raise WireFormatError(f"arguments for output {i}, which is no function_call")
            part = d.get("delta")
            if isinstance(part, str) and part:
                self.args[i] += part
                k = self.calls[i]
                yield self.ev(
                    "tool_use_input_delta", content_block_index=k, tool_use_id=self.content[k]["id"], partial_json=part
                )
        elif kind == "response.function_call_arguments.done":
            args = d.get("arguments")
            yield from self.end_call(int(d["output_index"]), args if isinstance(args, str) else None)
        elif kind == "response.output_item.done":
            item = d["item"]
            if item.get("type") == "function_call":
                args = item.get("arguments")
                yield from self.end_call(int(d["output_index"]), args if isinstance(args, str) else None)
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = d.get("response") if isinstance(d.get("response"), dict) else {}
            self.usage = self.a._tokens(response.get("usage")) or self.usage
            if kind == "response.failed":
                raise _classify(None, response.get("error"), {}, self.ctx.request_id)
            yield from self.end_calls()
            stop = self.a.stop_of(response, self.content)
            yield self.ev("message_complete", stop_reason=stop, final_content=self.content, usage=self.usage)


__all__ = ["TheirResponsesAdapter"]
