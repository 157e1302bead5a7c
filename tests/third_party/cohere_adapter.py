"""A third-party adapter for the Cohere Chat API v2, written only from Cohere's public docs,
to show that turnspec judges an API it does not ship (issue: "the suite understands any
wire API"). It uses turnspec's optional `BaseAdapter` helpers and registers its own
`WireApi` record; nothing in turnspec knows Cohere.

Sources (read with the search tool):
- https://docs.cohere.com/reference/chat (POST /v2/chat: messages with roles system, user,
  assistant, tool; `tool_calls[].function.arguments` a JSON string; tool messages carry
  `tool_call_id`; `response_format`; response `finish_reason` COMPLETE, STOP_SEQUENCE,
  MAX_TOKENS, TOOL_CALL, ERROR; `usage.tokens` and `usage.billed_units`)
- https://docs.cohere.com/reference/chat-stream , https://docs.cohere.com/v2/docs/streaming
  and https://docs.cohere.com/docs/tool-use-streaming (SSE events message-start,
  content-start, content-delta, content-end, tool-plan-delta, tool-call-start,
  tool-call-delta, tool-call-end, message-end carrying finish_reason and usage)
- https://docs.cohere.com/docs/image-inputs (user content parts `image_url` with a URL or
  a base64 data URL)

Not carried by this API (declared false, dropped with the §7.3 WARN): thinking and redacted
thinking blocks, a tool result's `is_error` flag (reported like any lossy field).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from conformance.adapters.base import (
    AdapterOptions,
    BaseAdapter,
    Block,
    Message,
    ParsedRequest,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireBody,
    WireFormatError,
    WireRequest,
    WireResponse,
    error_for_status,
    estimated_usage,
    new_ulid,
    now_timestamp,
    parse_json_object,
    sse_events,
)
from conformance.adapters.estimate import json_tokens, text_tokens
from conformance.wire import registry
from conformance.wire.api import Carries, Framing, JsonBody, Located, Probes, WireApi, option_fields, schema_at

IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
_DATA_URL = re.compile(r"data:(?P<media>[^;,]+);base64,(?P<data>.*)\Z", re.S)
_STOP = {
    "COMPLETE": "end_turn",
    "STOP_SEQUENCE": "stop_sequence",
    "MAX_TOKENS": "max_tokens",
    "TOOL_CALL": "tool_use",
    "ERROR": "error",
}


# -- the wire API record (from the docs above, independent of the adapter below) ----------


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _msgs(body: JsonBody) -> list[tuple[int, dict[str, Any]]]:
    return [(i, m) for i, m in enumerate(_list(body.get("messages"))) if isinstance(m, dict)]


def _system(body: JsonBody) -> list[Located]:
    out = []
    for i, m in _msgs(body):
        if m.get("role") != "system":
            continue
        c = m.get("content")
        if isinstance(c, str):
            out.append(Located(f"/messages/{i}/content", c))
        out += [
            Located(f"/messages/{i}/content/{j}/text", p.get("text"))
            for j, p in enumerate(_list(c))
            if isinstance(p, dict)
        ]
    return out


def _calls(body: JsonBody) -> list[Located]:
    return [
        Located(f"/messages/{i}/tool_calls/{k}/id", c.get("id"))
        for i, m in _msgs(body)
        for k, c in enumerate(_list(m.get("tool_calls")))
        if isinstance(c, dict)
    ]


def _results(body: JsonBody) -> list[Located]:
    return [
        Located(f"/messages/{i}/tool_call_id", m.get("tool_call_id")) for i, m in _msgs(body) if m.get("role") == "tool"
    ]


def _images(body: JsonBody) -> list[Located]:
    out = []
    for i, m in _msgs(body):
        for j, p in enumerate(_list(m.get("content"))):
            if isinstance(p, dict) and p.get("type") == "image_url":
                url = str((p.get("image_url") or {}).get("url", ""))
                d = _DATA_URL.match(url)
                value = (
                    {"kind": "base64", "media_type": d["media"], "data": d["data"]}
                    if d
                    else {"kind": "url", "media_type": None, "url": url}
                )
                out.append(Located(f"/messages/{i}/content/{j}/image_url/url", value))
    return out


def _usage(u: Any) -> Any:
    tokens = u.get("tokens") if isinstance(u, dict) else None
    if not isinstance(tokens, dict):
        return None
    return {
        "input": int(tokens.get("input_tokens") or 0),
        "output": int(tokens.get("output_tokens") or 0),
        "cache_read": 0,
        "cache_write": 0,
    }


def _end(events: list[Any]) -> dict[str, Any]:
    for e in events:
        if isinstance(e, dict) and e.get("type") == "message-end":
            return e.get("delta") or {}
    return {}


def _text_list(c: Any) -> Any:
    return [{"type": "text", "text": c}] if isinstance(c, str) else c


def _normalize(body: JsonBody) -> JsonBody:
    """Cohere documents a string `content` as shorthand for one text part; tool arguments
    are compared as the JSON they encode; `stream: false` is the default."""
    b = json.loads(json.dumps(body))
    if b.get("stream") is False:
        del b["stream"]
    for m in _list(b.get("messages")):
        if isinstance(m, dict) and "content" in m:
            m["content"] = _text_list(m["content"])
        for c in _list(m.get("tool_calls") if isinstance(m, dict) else None):
            fn = c.get("function") or {}
            if isinstance(fn.get("arguments"), str):
                fn["arguments"] = parse_json_object(fn["arguments"])
    return b


COHERE_CHAT = WireApi(
    name="cohere-chat-v2",
    title="Cohere Chat API v2",
    docs=("https://docs.cohere.com/reference/chat", "https://docs.cohere.com/reference/chat-stream"),
    request_paths=(re.compile(r"/v2/chat/?$"),),
    framing=Framing.SSE,
    is_streaming=lambda _url, body: bool(body and body.get("stream")),
    schema_dir="cohere-chat-v2",
    schema_path=str(Path(__file__).resolve().parent / "schemas" / "cohere-chat-v2"),
    hosts=("api.cohere.com",),
    carries=Carries(images_base64=True, images_url=True, parallel_tool_calls=True),
    probes=Probes(
        system=_system,
        tool_use_ids=_calls,
        tool_result_ids=_results,
        images=_images,
        response_stop_reason=lambda b: b.get("finish_reason"),
        response_usage=lambda b: _usage(b.get("usage")),
        stream_stop_reason=lambda evs: _end(evs).get("finish_reason"),
        stream_usage=lambda evs: _usage(_end(evs).get("usage")),
        stream_opens=lambda e: isinstance(e, dict) and e.get("type") == "message-start",
        stream_closes=lambda e: isinstance(e, dict) and e.get("type") == "message-end",
        # v2 chat body parameters "max_tokens", "stop_sequences", "temperature"
        request_options=option_fields(
            max_output_tokens="/max_tokens", stop_sequences="/stop_sequences", temperature="/temperature"
        ),
        # chat (v2): `response_format: {"type": "json_object", "json_schema": {...}}`
        output_schema=schema_at("/response_format/json_schema"),
    ),
    stop_reasons=dict(_STOP),
    normalize_request=_normalize,
    accepted_differences=(
        "a `content` string equals a list holding one text part",
        "`tool_calls[].function.arguments` compared as the JSON objects they encode",
        "`stream: false` equals an absent `stream`",
    ),
)
registry.register(COHERE_CHAT)


# -- the adapter ----------------------------------------------------------------------------


class CohereAdapter(BaseAdapter):
    """Canonical <-> Cohere Chat v2 (`POST /v2/chat`)."""

    name: ClassVar[str] = "cohere-chat"
    provider: ClassVar[str] = "cohere"
    wire_api: ClassVar[str] = "cohere-chat-v2"
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r".+")
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": False,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        "supports_structured_output": True,
        "supports_streaming": True,
        "supports_streaming_tool_calls": True,
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": False,
        "supports_system_messages_in_list": True,
        "max_context_tokens": 256000,
        "max_output_tokens": 8000,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def new_provider_tool_id(self) -> str:
        return "call_" + new_ulid().lower()

    # canonical -> wire ------------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        out: list[dict[str, Any]] = []
        for m in messages:
            for w in self._message_to_wire(m):
                if w["role"] == "system" and out and out[-1]["role"] == "system":
                    out[-1]["content"] = [*out[-1]["content"], *w["content"]]  # one system turn, first
                else:
                    out.append(w)
        body: dict[str, Any] = {"model": options.wire_model, "messages": out}
        if tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t["name"],
                        "description": t.get("description", ""),
                        "parameters": t["input_schema"],
                    },
                }
                for t in tools
            ]
        if options.max_output_tokens is not None:
            body["max_tokens"] = options.max_output_tokens
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.stop_sequences:
            body["stop_sequences"] = list(options.stop_sequences)
        if options.output_schema is not None:
            body["response_format"] = {"type": "json_object", "json_schema": dict(options.output_schema)}
        if options.stream:
            body["stream"] = True
        body.update(options.extra)
        return WireRequest("POST", "/v2/chat", {"content-type": "application/json"}, body)

    def _message_to_wire(self, m: Message) -> list[dict[str, Any]]:
        role, sid = m["role"], str(m["session_id"])
        if role == "tool":
            out = []
            for k, b in enumerate(m["content"]):
                if b.get("type") != "tool_result":
                    self.drop(m, k, str(b.get("type")), "Cohere tool messages hold one tool result")
                    continue
                if b.get("is_error"):
                    self.warn_option("tool_result.is_error", "Cohere tool messages have no error flag")
                for x in b.get("content", []):
                    if x.get("type") != "text":
                        self.drop(m, k, str(x.get("type")), "Cohere tool messages carry text only")
                text = "".join(str(x.get("text", "")) for x in b.get("content", []) if x.get("type") == "text")
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": self.tool_id_map(sid).provider_for(b["tool_use_id"]),
                        "content": text,
                    }
                )
            return out
        parts: list[dict[str, Any]] = []
        calls: list[dict[str, Any]] = []
        for k, b in enumerate(m["content"]):
            t = b.get("type")
            if t == "text":
                parts.append({"type": "text", "text": b["text"]})
            elif t == "image" and role == "user":
                part = self._image_to_wire(m, k, b)
                if part is not None:
                    parts.append(part)
            elif t == "tool_use" and role == "assistant":
                calls.append(
                    {
                        "id": self.tool_id_map(sid).provider_for(b["id"]),
                        "type": "function",
                        "function": {"name": b["name"], "arguments": json.dumps(b["input"], separators=(",", ":"))},
                    }
                )
            else:
                self.drop(m, k, str(t), f"no Cohere Chat v2 equivalent for a {t} block in a {role} message")
        msg: dict[str, Any] = {"role": role}
        if parts or not calls:
            msg["content"] = parts
        if calls:
            msg["tool_calls"] = calls
        return [msg]

    def _image_to_wire(self, m: Message, k: int, b: Block) -> dict[str, Any] | None:
        src, media = b["source"], b.get("media_type", "")
        if src["kind"] == "file_ref" or (src["kind"] == "base64" and media not in IMAGE_TYPES):
            self.drop(m, k, "image", f"Cohere takes URL or base64 images of {', '.join(IMAGE_TYPES)}")
            return None
        url = src["data"] if src["kind"] == "url" else f"data:{media};base64,{src['data']}"
        return {"type": "image_url", "image_url": {"url": url}}

    # wire -> canonical ------------------------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        sid = session_id or "sess_" + new_ulid().lower()
        msgs: list[Message] = []
        for m in _list(body.get("messages")):
            role = m.get("role")
            if role == "tool":
                cid = self.tool_id_map(sid).canonical_for(str(m.get("tool_call_id")))
                text = "".join(p.get("text", "") for p in _text_list(m.get("content")) or [] if isinstance(p, dict))
                block = {"type": "tool_result", "tool_use_id": cid, "content": [{"type": "text", "text": text}]}
                msgs.append(self._canonical(sid, "tool", [block], {"parent_tool_use_id": cid}))
                continue
            content: list[Block] = []
            for p in _text_list(m.get("content")) or []:
                if p.get("type") == "text":
                    content.append({"type": "text", "text": p["text"]})
                elif p.get("type") == "image_url":
                    content.append(self._image_from_wire(p.get("image_url") or {}))
            for c in _list(m.get("tool_calls")):
                fn = c.get("function") or {}
                content.append(
                    {
                        "type": "tool_use",
                        "id": self.tool_id_map(sid).canonical_for(str(c.get("id"))),
                        "name": fn.get("name"),
                        "input": parse_json_object(str(fn.get("arguments") or "")) or {},
                    }
                )
            meta: dict[str, Any] = {}
            if role == "assistant":
                model = f"cohere:{body.get('model')}"
                meta = {
                    "model": model,
                    "provider": "cohere",
                    "routing": {"mode": "default", "chosen_model": model, "reason": "read back"},
                }
            msgs.append(self._canonical(sid, str(role), content or [{"type": "text", "text": ""}], meta))
        tools = [
            {
                "name": t["function"]["name"],
                "description": t["function"].get("description", ""),
                "input_schema": t["function"].get("parameters", {"type": "object"}),
            }
            for t in _list(body.get("tools"))
        ]
        rf = body.get("response_format") or {}
        options = AdapterOptions(
            model=f"cohere:{body.get('model')}",
            max_output_tokens=body.get("max_tokens"),
            temperature=body.get("temperature"),
            stop_sequences=tuple(body.get("stop_sequences") or ()),
            stream=bool(body.get("stream")),
            output_schema=rf.get("json_schema") if isinstance(rf, dict) else None,
        )
        return ParsedRequest(msgs, tools, options)

    def _canonical(self, sid: str, role: str, content: list[Block], meta: dict[str, Any]) -> Message:
        return {
            "id": new_ulid(),
            "session_id": sid,
            "role": role,
            "content": content,
            "metadata": meta,
            "created_at": now_timestamp(),
            "schema_version": 1,
        }

    def _image_from_wire(self, image_url: Mapping[str, Any]) -> Block:
        url = str(image_url.get("url", ""))
        d = _DATA_URL.match(url)
        if d:
            return {"type": "image", "source": {"kind": "base64", "data": d["data"]}, "media_type": d["media"]}
        return {
            "type": "image",
            "source": {"kind": "url", "data": url},
            "media_type": "image/png" if url.endswith(".png") else "image/jpeg",
        }

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400:
            msg = body.get("message") if isinstance(body, dict) else None
            raise error_for_status(resp.status, str(msg or f"HTTP {resp.status}"))
        if not isinstance(body, dict) or not isinstance(body.get("message"), dict):
            raise WireFormatError("Cohere chat response has no `message` object")
        sid = request_context.session_id
        m = body["message"]
        content: list[Block] = [
            {"type": "text", "text": p["text"]}
            for p in _list(m.get("content"))
            if isinstance(p, dict) and p.get("type") == "text"
        ]
        for c in _list(m.get("tool_calls")):
            fn = c.get("function") or {}
            args = parse_json_object(str(fn.get("arguments") or ""))
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
        usage = self._usage(body.get("usage"))
        if usage is None:
            usage = estimated_usage(self.name, self.log, request_context, content)
        return self.assemble(
            request_context,
            content,
            wire_model=None,
            token_usage=usage,
            provider_raw={"id": body.get("id"), "finish_reason": body.get("finish_reason")},
            # canonical §4.3 MessageStatus ERROR "generation failed": finish_reason ERROR
            status="error" if _STOP.get(str(body.get("finish_reason"))) == "error" else "complete",
        )

    def _usage(self, u: Any) -> dict[str, int] | None:
        t = u.get("tokens") if isinstance(u, dict) else None
        if not isinstance(t, dict):
            return None
        return {
            "input_tokens": int(t.get("input_tokens") or 0),
            "output_tokens": int(t.get("output_tokens") or 0),
            "cached_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return _Stream(self, context).run(chunks)

    # estimates ----------------------------------------------------------------------------

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        n = 8
        for m in messages:
            n += 4
            for b in m["content"]:
                if b.get("type") == "text":
                    n += text_tokens(str(b["text"]))
                elif b.get("type") == "tool_use":
                    n += json_tokens(b.get("input", {})) + text_tokens(str(b.get("name", ""))) + 4
                elif b.get("type") == "tool_result":
                    n += (
                        sum(
                            text_tokens(str(x.get("text", ""))) for x in b.get("content", []) if x.get("type") == "text"
                        )
                        + 4
                    )
                elif b.get("type") == "image":
                    n += 1000
        return n + sum(
            json_tokens(t.get("input_schema", {})) + text_tokens(t["name"] + t.get("description", "")) for t in tools
        )


class _Stream:
    """Cohere's typed SSE events -> canonical stream events (streaming protocol §5)."""

    def __init__(self, adapter: CohereAdapter, ctx: RequestContext) -> None:
        self.a, self.ctx = adapter, ctx
        self.mid = ctx.message_id or new_ulid()
        self.content: list[Block] = []
        self.text_at: dict[int, int] = {}  # Cohere content index -> canonical block index
        self.tool_at: dict[int, int] = {}  # Cohere tool-call index -> canonical block index
        self.args: dict[int, str] = {}
        self.started = self.ended = False

    def run(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        for ev in sse_events(chunks):
            try:
                data = json.loads(ev.data)
            except ValueError:
                raise WireFormatError("event data is not JSON", event=ev.index, line=ev.line) from None
            if self.ended:
                raise WireFormatError("an event after message-end", event=ev.index, line=ev.line)
            yield from self.one(data, ev.index, ev.line)
        if not self.ended:
            raise WireFormatError("stream ended without message-end")

    def _ev(self, t: str, **kw: Any) -> StreamEvent:
        return {"type": t, "message_id": self.mid, **kw}

    def one(self, d: dict[str, Any], at: int, line: int) -> Iterator[StreamEvent]:
        t = d.get("type")
        msg = ((d.get("delta") or {}).get("message") or {}) if isinstance(d.get("delta"), dict) else {}
        if t == "message-start":
            if self.started:
                raise WireFormatError("a second message-start", event=at, line=line)
            self.started = True
            yield self._ev("message_start", role="assistant", model=self.ctx.model or "cohere:unknown")
            return
        if not self.started:
            raise WireFormatError(f"{t} before message-start", event=at, line=line)
        idx = d.get("index")
        if t in (
            "content-start",
            "content-delta",
            "content-end",
            "tool-call-start",
            "tool-call-delta",
            "tool-call-end",
        ) and not (isinstance(idx, int) and idx >= 0):
            raise WireFormatError(f"{t} without a valid index", event=at, line=line)
        if t == "content-start":
            self.text_at[idx] = len(self.content)
            self.content.append({"type": "text", "text": ""})
        elif t == "content-delta":
            k = self.text_at.get(idx)
            if k is None:
                raise WireFormatError("content-delta for a content block never started", event=at, line=line)
            text = str(((msg.get("content") or {}).get("text")) or "")
            self.content[k]["text"] += text
            yield self._ev("text_delta", content_block_index=k, text=text)
        elif t == "tool-call-start":
            call = msg.get("tool_calls") or {}
            fn = call.get("function") or {}
            k = self.tool_at[idx] = len(self.content)
            cid = self.a.tool_id_map(self.ctx.session_id).canonical_for(str(call.get("id")))
            self.content.append({"type": "tool_use", "id": cid, "name": fn.get("name"), "input": {}})
            self.args[idx] = str(fn.get("arguments") or "")
            yield self._ev("tool_use_start", content_block_index=k, tool_use_id=cid, tool_name=fn.get("name"))
        elif t == "tool-call-delta":
            k = self.tool_at.get(idx)
            if k is None:
                raise WireFormatError("tool-call-delta for a call never started", event=at, line=line)
            part = str((((msg.get("tool_calls") or {}).get("function") or {}).get("arguments")) or "")
            self.args[idx] += part
            yield self._ev(
                "tool_use_input_delta", content_block_index=k, tool_use_id=self.content[k]["id"], partial_json=part
            )
        elif t == "tool-call-end":
            k = self.tool_at.get(idx)
            if k is None:
                raise WireFormatError("tool-call-end for a call never started", event=at, line=line)
            args = parse_json_object(self.args[idx])
            if args is None:
                raise WireFormatError("tool call arguments are not a JSON object", event=at, line=line)
            self.content[k]["input"] = args
            yield self._ev("tool_use_end", content_block_index=k, tool_use_id=self.content[k]["id"], final_input=args)
        elif t == "message-end":
            self.ended = True
            delta = d.get("delta") or {}
            stop = _STOP.get(str(delta.get("finish_reason")), "end_turn")
            usage = self.a._usage(delta.get("usage"))
            if usage is None:
                usage = estimated_usage(self.a.name, self.a.log, self.ctx, self.content)
            yield self._ev("message_complete", stop_reason=stop, final_content=self.content, usage=usage)
        elif t in ("content-end", "tool-plan-delta", "citation-start", "citation-end"):
            return
        else:
            raise WireFormatError(f"unknown Cohere stream event type {t!r}", event=at, line=line)
