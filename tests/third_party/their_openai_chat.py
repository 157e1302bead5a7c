"""An honest OpenAI Chat Completions adapter written by a third party (issue 25) from the
metis contract (provider-adapter-contract.md §4.1, §4.3, §5.1, §6.2, §7.2), the canonical
format (§4.2, §6.2, §7.3) and OpenAI's documentation, never from turnspec's reference
adapter. Its choices differ where the docs allow:

- instructions go in one `developer` message ("With o1 models and newer, developer messages
  replace the previous system messages"; the docs and OpenAI staff state system and
  developer convert into each other), several canonical SYSTEM messages joined with a
  blank line (contract §4.1.2);
- the output limit is sent as `max_tokens` (still documented and accepted by the chat
  models; deprecated in favour of `max_completion_tokens`, which is read back as well);
- every `content` is an array of content parts (text parts; `image_url` parts for users),
  never a bare string; a tool message's content is its text parts, one per canonical block;
- provider tool ids for canonical ids first sent here are `call_` + 24 random letters and
  digits;
- a tool result's `is_error` has no field on this wire: it is dropped with a WARN line of
  this adapter's own wording (canonical §7.3);
- `content_filter` ends the turn as `end_turn`; a `refusal` is kept as the reply's text;
- usage maps as contract §7.2 says (`prompt_tokens` -> input_tokens,
  `prompt_tokens_details.cached_tokens` -> cached_input_tokens, creation 0);
- errors carry the core's request id; the provider's `x-request-id` is in the message.

Sources: platform.openai.com/docs — Chat Completions API reference (create, the chat
completion object, the chunk object), Function calling guide, Images and vision guide,
Prompt caching guide, Error codes guide, Structured outputs guide.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import string
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
from conformance.adapters.estimate import text_tokens
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
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")
_DATA_URL = re.compile(r"data:(?P<media>[^;,]+);base64,(?P<data>.*)\Z", re.S)
_ALNUM = string.ascii_letters + string.digits

# the chat completion object's `finish_reason`
STOPS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "end_turn",
}


def _classify(status: int | None, body: Any, headers: Mapping[str, Any], core_request_id: str | None) -> AdapterError:
    """Contract §6.2: status first, then OpenAI's `error.code` / `error.type`."""
    err = body.get("error") if isinstance(body, dict) else None
    err = err if isinstance(err, dict) else {}
    code, etype = str(err.get("code") or ""), str(err.get("type") or "")
    text = str(err.get("message") or (f"HTTP {status}" if status else "stream error"))
    message = f"openai {code or etype or 'error'}: {text}"
    provider_id = header(headers, "x-request-id")
    if provider_id:
        message += f" (openai request {provider_id})"
    cls: type[AdapterError]
    if code == "context_length_exceeded":
        cls = ContextOverflowError
    elif code in ("rate_limit_exceeded", "insufficient_quota") or status == 429:
        cls = RateLimitError
    elif code == "invalid_api_key" or status in (401, 403):
        cls = AuthError
    elif etype == "server_error" or (status is not None and status >= 500):
        cls = ServerError
    elif status == 408:
        cls = NetworkError
    elif status == 413:
        cls = ContextOverflowError
    elif (status is not None and 400 <= status < 500) or etype == "invalid_request_error":
        cls = InvalidRequestError
    else:
        cls = AdapterError
    retryable = cls in (RateLimitError, ServerError, NetworkError)
    if cls is RateLimitError:
        after, after_ms = header(headers, "retry-after"), header(headers, "retry-after-ms")
        try:
            seconds = float(after_ms) / 1000 if after_ms is not None else float(after) if after is not None else None
        except ValueError:
            seconds = None
        return RateLimitError(
            message, retry_after_seconds=seconds, provider_status=status, request_id=core_request_id, retryable=True
        )
    return cls(message, provider_status=status, request_id=core_request_id, retryable=retryable)


class TheirOpenAIChatAdapter(BaseAdapter):
    """Canonical <-> OpenAI Chat Completions (`POST /v1/chat/completions`)."""

    name: ClassVar[str] = "their-openai-chat"
    provider: ClassVar[str] = PROVIDER
    wire_api: ClassVar[str] = "openai-chat-completions"
    stops: ClassVar[Mapping[str, str]] = STOPS  # the wire's stop reason -> contract §3.3 StopReason
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
        "max_output_tokens": 16384,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def new_provider_tool_id(self) -> str:
        return "call_" + "".join(secrets.choice(_ALNUM) for _ in range(24))

    # canonical -> wire ----------------------------------------------------------------

    def _lost_error_flag(self, m: Message, k: int) -> None:
        """Canonical §7.3: the flag cannot be carried, so it goes with one WARN entry."""
        self.log.warning(
            "[%s] tool_result #%d of message %s in session %s lost its error mark: %s",
            self.name,
            k,
            m.get("id"),
            m.get("session_id"),
            "Chat Completions tool messages have no error field",
            extra={
                "session_id": str(m.get("session_id", "")),
                "message_id": str(m.get("id", "")),
                "block_type": "tool_result",
                "adapter": self.name,
                "reason": "Chat Completions tool messages have no error field; is_error not sent",
            },
        )

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        raw_all = options.provider_raw if isinstance(options.provider_raw, Mapping) else {}
        mine: Mapping[str, Any] = raw_all.get(self.name) if isinstance(raw_all.get(self.name), Mapping) else {}
        self._details: Mapping[str, Any] = (
            mine.get("image_detail") if isinstance(mine.get("image_detail"), Mapping) else {}
        )
        systems = [m for m in messages if m.get("role") == "system"]
        out: list[dict[str, Any]] = []
        if systems:
            texts = []
            for m in systems:
                texts.append("".join(str(b.get("text", "")) for b in m["content"] if b.get("type") == "text"))
                for k, b in enumerate(m["content"]):
                    if b.get("type") != "text":
                        self.drop(m, k, str(b.get("type")), "developer messages hold text only")
            out.append({"role": "developer", "content": [{"type": "text", "text": "\n\n".join(texts)}]})
        for m in messages:
            role = m.get("role")
            if role == "system":
                continue
            if role == "tool":
                out.extend(self._tool_to_wire(m))
            elif role == "assistant":
                msg = self._assistant_to_wire(m)
                if msg is not None:
                    out.append(msg)
            else:
                parts = self._user_parts(m)
                if parts:
                    out.append({"role": "user", "content": parts})
        body: dict[str, Any] = {"model": options.wire_model, "messages": out}
        strict = mine.get("strict_tools") if isinstance(mine.get("strict_tools"), Mapping) else {}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t.get("description", ""),
                        "parameters": t["input_schema"],
                        **({"strict": strict[t["name"]]} if t["name"] in strict else {}),
                    },
                }
                for t in tools
            ] + [dict(t) for t in options.provider_tools]
        elif options.provider_tools:
            body["tools"] = [dict(t) for t in options.provider_tools]
        if options.max_output_tokens is not None:
            # the field the request was read from; else `max_tokens` (see the module doc)
            body[str(mine.get("limit_field") or "max_tokens")] = options.max_output_tokens
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.stop_sequences:
            body["stop"] = list(options.stop_sequences)
        if options.output_schema is not None:
            name = mine.get("schema_name")
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name or "output", "schema": dict(options.output_schema), "strict": True},
            }
        if options.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}  # contract §7.2: MUST request usage
        for key, value in options.extra.items():
            if key == "stream_options" and isinstance(value, Mapping) and "stream_options" in body:
                body["stream_options"] = {**dict(value), **body["stream_options"]}  # usage stays requested
            else:
                body[key] = value
        return WireRequest("POST", "/v1/chat/completions", {"content-type": "application/json"}, body)

    def _user_parts(self, m: Message) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        for k, b in enumerate(m.get("content") or []):
            t = b.get("type")
            if t == "text":
                parts.append({"type": "text", "text": b["text"]})
            elif t == "image":
                src, media = b.get("source") or {}, b.get("media_type")
                url = None
                if src.get("kind") == "url":
                    url = str(src["data"])
                elif src.get("kind") == "base64" and media in IMAGE_TYPES:
                    url = f"data:{media};base64,{src['data']}"
                if url is not None:
                    image: dict[str, Any] = {"url": url}
                    detail = getattr(self, "_details", {}).get(_digest(url))
                    if detail is not None:
                        image["detail"] = detail  # the fidelity the read request asked for
                    parts.append({"type": "image_url", "image_url": image})
                else:
                    self.drop(m, k, "image", f"OpenAI takes image URLs or base64 {', '.join(IMAGE_TYPES)}")
            else:
                self.drop(m, k, str(t), f"a user message has no {t} part on Chat Completions")
        return parts

    def _assistant_to_wire(self, m: Message) -> dict[str, Any] | None:
        sid = str(m["session_id"])
        parts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        for k, b in enumerate(m.get("content") or []):
            t = b.get("type")
            if t == "text":
                parts.append({"type": "text", "text": b["text"]})
            elif t == "tool_use":
                calls.append(
                    {
                        "id": self.tool_id_map(sid).provider_for(b["id"]),
                        "type": "function",
                        "function": {"name": b["name"], "arguments": json.dumps(b.get("input", {}))},
                    }
                )
            else:
                # contract §4.3: thinking and redacted thinking MUST be dropped with a WARN
                self.drop(m, k, str(t), f"Chat Completions carries no {t} in an assistant message")
        if not parts and not calls:
            return None
        msg: dict[str, Any] = {"role": "assistant", "content": parts or None}
        if calls:
            msg["tool_calls"] = calls
        return msg

    def _tool_to_wire(self, m: Message) -> list[dict[str, Any]]:
        out = []
        for k, b in enumerate(m.get("content") or []):
            if b.get("type") != "tool_result":
                self.drop(m, k, str(b.get("type")), "a tool message answers one tool call")
                continue
            if b.get("is_error"):
                self._lost_error_flag(m, k)
            parts = []
            for x in b.get("content") or []:
                if x.get("type") == "text":
                    parts.append({"type": "text", "text": x["text"]})
                else:
                    self.drop(m, k, str(x.get("type")), "tool message content is text parts only")
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": self.tool_id_map(str(m["session_id"])).provider_for(b["tool_use_id"]),
                    "content": parts,
                }
            )
        return out

    # wire -> canonical (requests) ------------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        if not isinstance(body, dict):
            raise WireFormatError("a Chat Completions request body is a JSON object")
        sid = session_id or "sess_" + mint_ulid()
        ids = self.tool_id_map(sid)
        out: list[Message] = []
        raw: dict[str, Any] = {}
        for wm in body.get("messages") or []:
            if not isinstance(wm, dict):
                continue
            role = wm.get("role")
            parts = _parts(wm.get("content"))
            if role in ("system", "developer"):
                text = [{"type": "text", "text": str(p.get("text", ""))} for p in parts if p.get("type") == "text"]
                out.append(plain_message(sid, "system", text, {}))
            elif role == "tool":
                cid = ids.canonical_for(str(wm.get("tool_call_id")))
                inner = [{"type": "text", "text": str(p.get("text", ""))} for p in parts if p.get("type") == "text"]
                block = {"type": "tool_result", "tool_use_id": cid, "content": inner}
                out.append(plain_message(sid, "tool", [block], {"parent_tool_use_id": cid}))
            elif role == "assistant":
                content: list[Block] = [
                    {"type": "text", "text": str(p.get("text", p.get("refusal", "")))}
                    for p in parts
                    if p.get("type") in ("text", "refusal")
                ]
                if isinstance(wm.get("refusal"), str) and wm["refusal"]:  # the message's refusal field
                    content.append({"type": "text", "text": wm["refusal"]})
                for c in wm.get("tool_calls") or []:
                    fn = c.get("function") or {}
                    content.append(
                        {
                            "type": "tool_use",
                            "id": ids.canonical_for(str(c.get("id"))),
                            "name": fn.get("name"),
                            "input": json_object_or_none(str(fn.get("arguments") or "")) or {},
                        }
                    )
                model = f"{PROVIDER}:{body.get('model')}"
                meta = {
                    "model": model,
                    "provider": PROVIDER,
                    "routing": {"mode": "default", "chosen_model": model, "reason": "read from a request"},
                }
                out.append(plain_message(sid, "assistant", content or [{"type": "text", "text": ""}], meta))
            else:
                content = []
                for p in parts:
                    if p.get("type") == "text":
                        content.append({"type": "text", "text": str(p.get("text", ""))})
                    elif p.get("type") == "image_url":
                        iu = p.get("image_url") or {}
                        content.append(_image_from_url(str(iu.get("url", ""))))
                        if "detail" in iu:
                            raw.setdefault("image_detail", {})[_digest(str(iu.get("url", "")))] = iu["detail"]
                out.append(plain_message(sid, "user", content or [{"type": "text", "text": ""}], {}))
        tools: list[ToolDefinition] = []
        provider_tools: list[dict[str, Any]] = []
        for t in body.get("tools") or []:
            fn = t.get("function") if isinstance(t, dict) else None
            if isinstance(t, dict) and t.get("type") == "function" and isinstance(fn, dict):
                tools.append(
                    {
                        "name": fn.get("name"),
                        "description": fn.get("description", ""),
                        "input_schema": fn.get("parameters") or {"type": "object", "properties": {}},
                        "side_effects": "execute",
                    }
                )
            elif isinstance(t, dict):
                provider_tools.append(t)
        rf = body.get("response_format")
        schema = None
        strict = {
            str(t["function"].get("name")): t["function"]["strict"]
            for t in body.get("tools") or []
            if isinstance(t, dict) and isinstance(t.get("function"), dict) and "strict" in t["function"]
        }
        if strict:
            raw["strict_tools"] = strict
        if "max_completion_tokens" in body:
            raw["limit_field"] = "max_completion_tokens"
        known = {
            "model",
            "messages",
            "tools",
            "max_tokens",
            "max_completion_tokens",
            "temperature",
            "stop",
            "stream",
        }
        if isinstance(rf, dict) and rf.get("type") == "json_schema" and isinstance(rf.get("json_schema"), dict):
            schema = rf["json_schema"].get("schema")
            raw["schema_name"] = rf["json_schema"].get("name")
            known.add("response_format")
        if body.get("stream_options") == {"include_usage": True}:
            known.add("stream_options")
        stop = body.get("stop")
        limit = body.get("max_completion_tokens", body.get("max_tokens"))
        options = AdapterOptions(
            model=f"{PROVIDER}:{body.get('model')}",
            max_output_tokens=limit,
            temperature=body.get("temperature"),
            stop_sequences=(stop,) if isinstance(stop, str) else tuple(stop or ()),
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
        if not isinstance(u, dict) or "prompt_tokens" not in u:
            return None
        details = u.get("prompt_tokens_details") or {}
        return token_usage(
            int(u.get("prompt_tokens") or 0),
            int(u.get("completion_tokens") or 0),
            int(details.get("cached_tokens") or 0) if isinstance(details, dict) else 0,
            0,
        )

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or (isinstance(body, dict) and "error" in body and "choices" not in body):
            raise _classify(resp.status, body, resp.headers, request_context.request_id)
        choices = body.get("choices") if isinstance(body, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise WireFormatError("a chat completion has a non-empty `choices` list")
        choice = choices[0]
        msg = choice.get("message")
        if not isinstance(msg, dict):
            raise WireFormatError("choices[0] has no `message` object")
        sid = request_context.session_id
        content: list[Block] = []
        for p in _parts(msg.get("content")):
            if p.get("type") == "text":
                content.append({"type": "text", "text": str(p.get("text", ""))})
        if isinstance(msg.get("refusal"), str) and msg["refusal"]:
            content.append({"type": "text", "text": msg["refusal"]})
        for c in msg.get("tool_calls") or []:
            fn = c.get("function") or {}
            args = json_object_or_none(str(fn.get("arguments") or ""))
            if args is None:
                raise WireFormatError(f"tool call {c.get('id')}: arguments are not a JSON object")
            content.append(
                {
                    "type": "tool_use",
                    "id": self.tool_id_map(sid).canonical_for(str(c.get("id"))),
                    "name": fn.get("name"),
                    "input": args,
                }
            )
        return finish_message(
            request_context,
            PROVIDER,
            content,
            served_by=body.get("model") if isinstance(body.get("model"), str) else None,
            tokens=self._tokens(body.get("usage")),
            raw={"id": body.get("id"), "finish_reason": choice.get("finish_reason")},
            adapter=self.name,
        )

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return _ChatStream(self, context).events(chunks)

    # estimates --------------------------------------------------------------------------

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        # OpenAI cookbook "How to count tokens with tiktoken": 3 tokens per message plus its
        # role, 3 to prime the reply; section 7 counts function definitions for gpt-4o as
        # 7 per function + "name:description", 3 if it has properties, 3 per property +
        # "key:type:description", enums -3 + 3 per item + the item, and 12 at the end
        n = 3
        for m in messages:
            n += 3 + 1
            for b in m.get("content") or []:
                n += openai_block_tokens(b)
        if tools:
            for t in tools:
                n += 7 + text_tokens(f"{t.get('name', '')}:{str(t.get('description', '')).rstrip('.')}")
                props = (t.get("input_schema") or {}).get("properties") or {}
                if props:
                    n += 3
                    for key, spec in props.items():
                        spec = spec if isinstance(spec, dict) else {}
                        n += 3
                        if isinstance(spec.get("enum"), list):
                            n += -3 + sum(3 + text_tokens(str(x)) for x in spec["enum"])
                        n += text_tokens(f"{key}:{spec.get('type', '')}:{str(spec.get('description', '')).rstrip('.')}")
            n += 12
        return n


def _digest(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:32]


def _parts(content: Any) -> list[dict[str, Any]]:
    """A `content` string is shorthand for one text part (Chat Completions reference)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [p for p in content if isinstance(p, dict)]
    return []


def _image_from_url(url: str) -> Block:
    d = _DATA_URL.match(url)
    if d:
        return {"type": "image", "source": {"kind": "base64", "data": d["data"]}, "media_type": d["media"]}
    lower = url.lower().split("?")[0]
    media = next(
        (f"image/{ext}" for ext in ("png", "gif", "webp") if lower.endswith("." + ext)),
        "image/jpeg",
    )
    return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": media}


class _ChatStream(CanonicalStream):
    """`chat.completion.chunk` events -> canonical events (contract §5.1's OpenAI table)."""

    def __init__(self, adapter: TheirOpenAIChatAdapter, ctx: RequestContext) -> None:
        self.a, self.ctx = adapter, ctx
        super().__init__(ctx)
        self.text_at: int | None = None
        self.calls: dict[int, int] = {}  # wire tool_calls[].index -> canonical block index
        self.args: dict[int, str] = {}
        self.ended: set[int] = set()
        self.finish: str | None = None
        self.started = self.finished = self.done = False

    def end_open_calls(self) -> Iterator[StreamEvent]:
        """Contract §5.2.2 (exactly one tool_use_end per call) on a failed stream: each open
        call ends with what its fragments spell as an object, else {} (as §5.3 on cancel)."""
        for i, k in sorted(self.calls.items(), key=lambda kv: kv[1]):
            if i in self.ended:
                continue
            blk = self.content[k]
            blk["input"] = json_object_or_none(self.args[i]) or {}
            self.ended.add(i)
            yield self.ev("tool_use_end", content_block_index=k, tool_use_id=blk["id"], final_input=blk["input"])

    def _events(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        for fr in sse_frames(chunks):
            if fr.data.strip() == "[DONE]":
                self.done = True
                break
            data = frame_json(fr)
            if "error" in data and "choices" not in data:
                if self.started:
                    yield from self.close_calls()
                    yield self.ev("message_complete", stop_reason="error", final_content=self.content, usage=self.usage)
                raise _classify(None, data, {}, self.ctx.request_id)
            try:
                yield from self.one(data)
            except (KeyError, TypeError, ValueError) as exc:
                raise WireFormatError(f"malformed chunk: {exc!r}", event=fr.index, line=fr.line) from None
            except WireFormatError as exc:
                if exc.event is None:
                    raise WireFormatError(str(exc), event=fr.index, line=fr.line) from None
                raise
        if not self.done:
            raise WireFormatError("stream cut before its end (no data: [DONE])")
        if not self.started:
            raise WireFormatError("stream carried no chunk")
        if self.finish is None:
            raise WireFormatError("stream ended without a finish_reason")
        stop = self.a.stops.get(self.finish, "end_turn")
        yield self.ev("message_complete", stop_reason=stop, final_content=self.content, usage=self.usage)

    def start(self, d: Mapping[str, Any]) -> Iterator[StreamEvent]:
        if not self.started:
            self.started = True
            served = d.get("model")
            model = (
                f"{PROVIDER}:{served}" if isinstance(served, str) and served else (self.ctx.model or "openai:unknown")
            )
            yield self.ev("message_start", role="assistant", model=model)

    def close_calls(self) -> Iterator[StreamEvent]:
        for i, k in sorted(self.calls.items(), key=lambda kv: kv[1]):
            if i in self.ended:
                continue
            blk = self.content[k]
            parsed = json_object_or_none(self.args[i])
            if parsed is None:
                raise WireFormatError(f"tool call {blk['id']}: streamed arguments are not a JSON object")
            blk["input"] = parsed
            yield self.ev("tool_use_end", content_block_index=k, tool_use_id=blk["id"], final_input=parsed)
            self.ended.add(i)

    def one(self, d: dict[str, Any]) -> Iterator[StreamEvent]:
        yield from self.start(d)
        u = self.a._tokens(d.get("usage"))
        if u is not None:
            self.usage = u
        for choice in d.get("choices") or []:
            if int(choice.get("index", 0)) != 0:
                continue
            delta = choice.get("delta") or {}
            text = delta.get("content")
            refusal = delta.get("refusal")
            for piece in (text, refusal):
                if isinstance(piece, str) and piece:
                    if self.finished:
                        raise WireFormatError("content after finish_reason")
                    if self.text_at is None:
                        self.text_at = len(self.content)
                        self.content.append({"type": "text", "text": ""})
                    self.content[self.text_at]["text"] += piece
                    yield self.ev("text_delta", content_block_index=self.text_at, text=piece)
            for tc in delta.get("tool_calls") or []:
                i = int(tc["index"])
                fn = tc.get("function") or {}
                if i not in self.calls:
                    # calls stream one after another: the previous one is complete (its end
                    # now keeps content_block_index non-decreasing, contract §5.2.5)
                    yield from self.close_calls()
                    if not tc.get("id"):
                        raise WireFormatError(f"tool call {i} starts without an id")
                    k = len(self.content)
                    cid = self.a.tool_id_map(self.ctx.session_id).canonical_for(str(tc["id"]))
                    self.content.append({"type": "tool_use", "id": cid, "name": fn.get("name"), "input": {}})
                    self.calls[i], self.args[i] = k, ""
                    yield self.ev(
                        "tool_use_start", content_block_index=k, tool_use_id=cid, tool_name=str(fn.get("name"))
                    )
                k = self.calls[i]
                part = fn.get("arguments")
                if isinstance(part, str) and part:
                    self.args[i] += part
                    yield self.ev(
                        "tool_use_input_delta",
                        content_block_index=k,
                        tool_use_id=self.content[k]["id"],
                        partial_json=part,
                    )
            if choice.get("finish_reason"):
                self.finish = str(choice["finish_reason"])
                self.finished = True
                yield from self.close_calls()


__all__ = ["TheirOpenAIChatAdapter"]
