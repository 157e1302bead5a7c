"""An honest Anthropic Messages adapter written by a third party (issue 25) from the metis
contract (provider-adapter-contract.md §4.1, §4.2, §5.1, §6.2, §7.2), the canonical format
(§4.2, §6.2, §6.5, §7.3) and Anthropic's documentation, never from turnspec's reference
adapter. Its choices differ where the docs allow:

- `system` is always the list-of-text-blocks form (Messages API reference: "system: string
  or array of text blocks"); one canonical SYSTEM message keeps its blocks, several are
  joined with a blank line (contract §4.1.2);
- every message's `content` is a list of blocks, never the string shorthand;
- provider tool ids for canonical ids first sent here are minted as `toolu_tp_` + a
  lowercase ULID (tool_use `id` pattern `^[a-zA-Z0-9_-]+$`);
- thinking goes back only on an assistant turn this provider produced and only with its
  signature (extended-thinking docs: thinking blocks must be passed back unmodified, with
  their signature); redacted thinking only Anthropic→Anthropic (contract §4.4);
- `pause_turn` and `refusal` end the turn (`end_turn`), `model_context_window_exceeded`
  is `max_tokens`; the wire reason is kept in `provider_raw`;
- errors carry the core's request id (`RequestContext.request_id`), and Anthropic's own
  `request_id` is in the message;
- read-back tools get `side_effects: execute` (the wire does not say; the most cautious
  value, canonical §4.4);
- no structured output (contract §11.6: Anthropic has no strict schema mode); declared false.

Sources: platform.claude.com/docs — Messages API (`/en/api/messages`), Streaming messages
(`/en/build-with-claude/streaming`), Extended thinking, Tool use, Vision, Prompt caching,
Errors (`/en/api/errors`), Handling stop reasons.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from their_common import (  # a sibling module: `turnspec conform` loads this file by path
    CanonicalStream,
    finish_message,
    frame_json,
    header,
    json_object_or_none,
    mint_ulid,
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
    RateLimitError,
    ServerError,
    WireFormatError,
)
from conformance.adapters.estimate import image_block_size, json_tokens, text_tokens
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

PROVIDER = "anthropic"
IMAGE_TYPES = ("image/jpeg", "image/png", "image/gif", "image/webp")
# Messages API content blocks canonical form has no type for (documents, citable search
# results, server-tool calls and results): read into unknown blocks, sent back verbatim
NATIVE_BLOCKS = frozenset(
    {
        "document",
        "search_result",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "container_upload",
    }
)
TOOL_SYSTEM_PROMPT = 346
TOOL_SYSTEM_PROMPTS = (
    ("claude-3-opus", 530),  # the docs' table, tool_choice auto
    ("claude-3-sonnet", 159),
    ("claude-3-haiku", 264),
    # not in the docs' table: calibrated on recorded usage (a one-line question with one
    # empty-schema tool counted 543 input tokens, another with a short system prompt 423)
    ("claude-haiku-4-5", 380),
)
DEFAULT_MAX_TOKENS = 4096  # Anthropic requires max_tokens; used only when the request has none

# "Handling stop reasons": end_turn, max_tokens, stop_sequence, tool_use, pause_turn,
# refusal, model_context_window_exceeded
STOPS = {
    "end_turn": "end_turn",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "tool_use": "tool_use",
    "pause_turn": "end_turn",
    "refusal": "end_turn",
    "model_context_window_exceeded": "max_tokens",
}

# Errors page: error.type -> contract §6.2's Anthropic conventions
ERROR_TYPES: dict[str, type[AdapterError]] = {
    "overloaded_error": RateLimitError,
    "rate_limit_error": RateLimitError,
    "authentication_error": AuthError,
    "permission_error": AuthError,
    "api_error": ServerError,
    "invalid_request_error": InvalidRequestError,
    "request_too_large": ContextOverflowError,
    "not_found_error": InvalidRequestError,
    "billing_error": InvalidRequestError,
}


def _classify(status: int | None, body: Any, headers: Mapping[str, str], core_request_id: str | None) -> AdapterError:
    err = body.get("error") if isinstance(body, dict) else None
    etype = str(err.get("type", "")) if isinstance(err, dict) else ""
    text = str(err.get("message", "")) if isinstance(err, dict) else ""
    provider_id = body.get("request_id") if isinstance(body, dict) else None
    provider_id = provider_id or header(headers, "request-id")
    message = f"anthropic {etype or 'error'}: {text or f'HTTP {status}'}"
    if provider_id:
        message += f" (anthropic request {provider_id})"
    cls: type[AdapterError]
    if etype == "invalid_request_error" and re.search(r"context|tokens? exceeds|too long", text, re.I):
        cls = ContextOverflowError  # contract §6.2: message mentions context / tokens exceeds
    elif etype in ERROR_TYPES:
        cls = ERROR_TYPES[etype]
    elif status in (401, 403):
        cls = AuthError
    elif status == 413:
        cls = ContextOverflowError
    elif status == 429:
        cls = RateLimitError
    elif status is not None and status >= 500:
        cls = ServerError
    elif status == 408:
        from conformance.adapters.errors import NetworkError  # only this rare status needs it

        cls = NetworkError
    elif status is not None and 400 <= status < 500:
        cls = InvalidRequestError
    else:
        cls = AdapterError
    retryable = cls in (RateLimitError, ServerError)
    if cls is RateLimitError:
        after = header(headers, "retry-after")
        try:
            seconds = float(after) if after is not None else None
        except ValueError:
            seconds = None
        return RateLimitError(
            message,
            retry_after_seconds=seconds,
            provider_status=status,
            request_id=core_request_id,
            retryable=retryable,
        )
    return cls(message, provider_status=status, request_id=core_request_id, retryable=retryable)


class TheirAnthropicAdapter(BaseAdapter):
    """Canonical <-> Anthropic Messages (`POST /v1/messages`)."""

    name: ClassVar[str] = "their-anthropic"
    provider: ClassVar[str] = PROVIDER
    wire_api: ClassVar[str] = "anthropic-messages"
    stops: ClassVar[Mapping[str, str]] = STOPS  # the wire's stop reason -> contract §3.3 StopReason
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^[a-zA-Z0-9_-]+$")
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": True,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        "supports_structured_output": False,
        "supports_streaming": True,
        "supports_streaming_tool_calls": True,
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": True,
        "supports_system_messages_in_list": False,
        "max_context_tokens": 200000,
        "max_output_tokens": 64000,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def new_provider_tool_id(self) -> str:
        return "toolu_tp_" + mint_ulid().lower()

    # canonical -> wire ----------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        system_msgs = [m for m in messages if m.get("role") == "system"]
        system: list[dict[str, Any]] = []
        if len(system_msgs) == 1:
            system = [
                {"type": "text", "text": str(b.get("text", ""))}
                for b in system_msgs[0]["content"]
                if b.get("type") == "text"
            ]
        elif system_msgs:
            joined = "\n\n".join(
                "".join(str(b.get("text", "")) for b in m["content"] if b.get("type") == "text") for m in system_msgs
            )
            system = [{"type": "text", "text": joined}]
        for m in system_msgs:
            for k, b in enumerate(m["content"]):
                if b.get("type") != "text":
                    self.drop(m, k, str(b.get("type")), "Anthropic's system parameter holds text blocks only")

        turns: list[dict[str, Any]] = []
        for m in messages:
            role = m.get("role")
            if role == "system":
                continue
            wire_role = "assistant" if role == "assistant" else "user"
            blocks = self._blocks_to_wire(m)
            if not blocks:
                continue
            if turns and turns[-1]["role"] == wire_role:
                turns[-1]["content"].extend(blocks)  # consecutive user turns merge (API alternates roles)
            else:
                turns.append({"role": wire_role, "content": blocks})

        body: dict[str, Any] = {
            "model": options.wire_model,
            "max_tokens": options.max_output_tokens if options.max_output_tokens is not None else DEFAULT_MAX_TOKENS,
            "messages": turns,
        }
        mine = options.provider_raw.get(self.name) if isinstance(options.provider_raw, Mapping) else None
        marks = (mine or {}).get("system_cache_control") if isinstance(mine, Mapping) else None
        if isinstance(marks, Mapping):
            # prompt-caching breakpoints this adapter read from a request (contract §4.2: the
            # adapter MAY add cache_control markers; kept through options.provider_raw)
            for at, mark in marks.items():
                if str(at).isdigit() and int(at) < len(system):
                    system[int(at)]["cache_control"] = mark
        if system:
            body["system"] = system
        wire_tools: list[dict[str, Any]] = [
            {"name": t["name"], "description": t.get("description", ""), "input_schema": t["input_schema"]}
            for t in tools
        ]
        wire_tools += [dict(t) for t in options.provider_tools]
        if wire_tools:
            body["tools"] = wire_tools
        if options.stop_sequences:
            body["stop_sequences"] = list(options.stop_sequences)
        if options.temperature is not None:
            body["temperature"] = options.temperature
        if options.output_schema is not None:
            self.warn_option(
                "output_schema", "Anthropic Messages has no strict structured-output mode (contract §11.6)"
            )
        if options.stream:
            body["stream"] = True
        body.update(options.extra)
        # Versioning: "When making API requests, you must send an anthropic-version request header."
        headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
        return WireRequest("POST", "/v1/messages", headers, body)

    def _blocks_to_wire(self, m: Message) -> list[dict[str, Any]]:
        role, sid = m["role"], str(m["session_id"])
        mine = (m.get("metadata") or {}).get("provider") == PROVIDER
        out: list[dict[str, Any]] = []
        for k, b in enumerate(m.get("content") or []):
            t = b.get("type")
            if t == "text" and role in ("user", "assistant"):
                out.append({"type": "text", "text": b["text"]})
            elif t == "image" and role == "user":
                img = self._image_to_wire(m, k, b)
                if img is not None:
                    out.append(img)
            elif t == "tool_use" and role == "assistant":
                out.append(
                    {
                        "type": "tool_use",
                        "id": self.tool_id_map(sid).provider_for(b["id"]),
                        "name": b["name"],
                        "input": b.get("input", {}),
                    }
                )
            elif t == "tool_result" and role == "tool":
                out.append(self._result_to_wire(m, k, b))
            elif t == "thinking" and role == "assistant":
                if not mine:
                    self.drop(m, k, "thinking", "thinking from another provider cannot be verified by Anthropic")
                elif not b.get("signature"):
                    self.drop(m, k, "thinking", "Anthropic needs the thinking block's signature to accept it back")
                else:
                    out.append({"type": "thinking", "thinking": b["text"], "signature": b["signature"]})
            elif t == "redacted_thinking" and role == "assistant":
                if mine:
                    out.append({"type": "redacted_thinking", "data": b["data"]})
                else:
                    self.drop(
                        m, k, "redacted_thinking", "redacted thinking goes back only to the provider that issued it"
                    )
            elif t in NATIVE_BLOCKS and role in ("user", "assistant"):
                # a block of Anthropic's own that canonical form has no type for, kept as an
                # unknown block when read (canonical §10.3), goes back as it came
                out.append(dict(b))
            else:
                self.drop(m, k, str(t), f"Anthropic Messages has no {t} block in a {role} turn")
        return out

    def _image_to_wire(self, m: Message, k: int, b: Block) -> dict[str, Any] | None:
        src = b.get("source") or {}
        kind, media = src.get("kind"), b.get("media_type")
        if kind == "url":
            return {"type": "image", "source": {"type": "url", "url": src["data"]}}
        if kind == "base64" and media in IMAGE_TYPES:
            return {"type": "image", "source": {"type": "base64", "media_type": media, "data": src["data"]}}
        self.drop(m, k, "image", f"Anthropic takes URL images or base64 {'/'.join(IMAGE_TYPES)}, not {kind} {media}")
        return None

    def _result_to_wire(self, m: Message, k: int, b: Block) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        for x in b.get("content") or []:
            if x.get("type") == "text":
                parts.append({"type": "text", "text": x["text"]})
            elif x.get("type") == "image":
                img = self._image_to_wire(m, k, x)
                if img is not None:
                    parts.append(img)
            else:
                self.drop(m, k, str(x.get("type")), "Anthropic tool results hold text and image blocks")
        res: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": self.tool_id_map(str(m["session_id"])).provider_for(b["tool_use_id"]),
            "content": parts,
        }
        if b.get("is_error"):
            res["is_error"] = True
        return res

    # wire -> canonical (requests) ------------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        if not isinstance(body, dict):
            raise WireFormatError("an Anthropic request body is a JSON object")
        sid = session_id or "sess_" + mint_ulid()
        ids = self.tool_id_map(sid)
        out: list[Message] = []
        raw: dict[str, Any] = {}
        system = body.get("system")
        if isinstance(system, str):
            out.append(plain_message(sid, "system", [{"type": "text", "text": system}], {}))
        elif isinstance(system, list):
            texts = [{"type": "text", "text": str(s.get("text", ""))} for s in system if isinstance(s, dict)]
            out.append(plain_message(sid, "system", texts, {}))
            marks = {
                str(i): s["cache_control"] for i, s in enumerate(system) if isinstance(s, dict) and "cache_control" in s
            }
            if marks:
                raw["system_cache_control"] = marks
        for turn in body.get("messages") or []:
            if not isinstance(turn, dict):
                continue
            role = turn.get("role")
            content = turn.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
            plain: list[Block] = []

            def flush(role_now: str) -> None:
                nonlocal plain
                if plain:
                    meta: dict[str, Any] = {}
                    if role_now == "assistant":
                        model = f"{PROVIDER}:{body.get('model')}"
                        meta = {
                            "model": model,
                            "provider": PROVIDER,
                            "routing": {"mode": "default", "chosen_model": model, "reason": "read from a request"},
                        }
                    out.append(plain_message(sid, role_now, plain, meta))
                    plain = []

            for blk in blocks:
                if not isinstance(blk, dict):
                    continue
                t = blk.get("type")
                if t == "tool_result":
                    flush(str(role))
                    cid = ids.canonical_for(str(blk.get("tool_use_id")))
                    inner = blk.get("content")
                    items = [{"type": "text", "text": inner}] if isinstance(inner, str) else list(inner or [])
                    res: list[Block] = []
                    for x in items:
                        if isinstance(x, dict) and x.get("type") == "text":
                            res.append({"type": "text", "text": str(x.get("text", ""))})
                        elif isinstance(x, dict) and x.get("type") == "image":
                            res.append(self._image_from_wire(x))
                    tr: Block = {"type": "tool_result", "tool_use_id": cid, "content": res}
                    if blk.get("is_error"):
                        tr["is_error"] = True
                    out.append(plain_message(sid, "tool", [tr], {"parent_tool_use_id": cid}))
                elif t == "text":
                    plain.append({"type": "text", "text": str(blk.get("text", ""))})
                elif t == "image":
                    plain.append(self._image_from_wire(blk))
                elif t == "tool_use":
                    plain.append(
                        {
                            "type": "tool_use",
                            "id": ids.canonical_for(str(blk.get("id"))),
                            "name": blk.get("name"),
                            "input": blk.get("input") if isinstance(blk.get("input"), dict) else {},
                        }
                    )
                elif t == "thinking":
                    plain.append(
                        {"type": "thinking", "text": str(blk.get("thinking", "")), "signature": blk.get("signature")}
                    )
                elif t == "redacted_thinking":
                    plain.append({"type": "redacted_thinking", "data": str(blk.get("data", ""))})
                elif t in NATIVE_BLOCKS:
                    plain.append(dict(blk))  # canonical §10.3: an unknown block type is tolerated
            flush(str(role))

        tools: list[ToolDefinition] = []
        provider_tools: list[dict[str, Any]] = []
        for t in body.get("tools") or []:
            if isinstance(t, dict) and "input_schema" in t and t.get("type") in (None, "custom"):
                tools.append(
                    {
                        "name": t.get("name"),
                        "description": t.get("description", ""),
                        "input_schema": t["input_schema"],
                        "side_effects": "execute",
                    }
                )
            elif isinstance(t, dict):
                provider_tools.append(t)
        known = {"model", "max_tokens", "messages", "system", "tools", "stop_sequences", "temperature", "stream"}
        options = AdapterOptions(
            model=f"{PROVIDER}:{body.get('model')}",
            max_output_tokens=body.get("max_tokens"),
            temperature=body.get("temperature"),
            stop_sequences=tuple(body.get("stop_sequences") or ()),
            stream=bool(body.get("stream")),
            extra={k: v for k, v in body.items() if k not in known},
            provider_tools=tuple(provider_tools),
            provider_raw={self.name: raw} if raw else {},
        )
        return ParsedRequest(out, tools, options)

    def _image_from_wire(self, blk: Mapping[str, Any]) -> Block:
        src = blk.get("source") or {}
        if src.get("type") == "url":
            url = str(src.get("url", ""))
            guess = "image/png" if url.lower().endswith(".png") else "image/jpeg"
            return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": guess}
        return {
            "type": "image",
            "source": {"kind": "base64", "data": str(src.get("data", ""))},
            "media_type": str(src.get("media_type", "")),
        }

    # wire -> canonical (responses) -----------------------------------------------------

    def _content_from_wire(self, sid: str, blocks: Iterable[Any], skipped: list[Any]) -> list[Block]:
        content: list[Block] = []
        for blk in blocks:
            if not isinstance(blk, dict):
                raise WireFormatError("a content block is not an object")
            t = blk.get("type")
            if t == "text":
                content.append({"type": "text", "text": str(blk.get("text", ""))})
            elif t == "tool_use":
                inp = blk.get("input")
                if not isinstance(inp, dict):
                    raise WireFormatError(f"tool_use {blk.get('id')}: input is not an object")
                content.append(
                    {
                        "type": "tool_use",
                        "id": self.tool_id_map(sid).canonical_for(str(blk.get("id"))),
                        "name": blk.get("name"),
                        "input": inp,
                    }
                )
            elif t == "thinking":
                content.append(
                    {"type": "thinking", "text": str(blk.get("thinking", "")), "signature": blk.get("signature")}
                )
            elif t == "redacted_thinking":
                content.append({"type": "redacted_thinking", "data": str(blk.get("data", ""))})
            else:
                skipped.append(blk)  # server tool blocks etc.: no canonical form; kept for round trips
        return content

    @staticmethod
    def _tokens(u: Any) -> dict[str, int] | None:
        if not isinstance(u, dict) or "input_tokens" not in u:
            return None
        return token_usage(
            int(u.get("input_tokens") or 0),
            int(u.get("output_tokens") or 0),
            int(u.get("cache_read_input_tokens") or 0),
            int(u.get("cache_creation_input_tokens") or 0),
        )

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or (isinstance(body, dict) and body.get("type") == "error"):
            raise _classify(resp.status, body, resp.headers, request_context.request_id)
        if not isinstance(body, dict) or not isinstance(body.get("content"), list):
            raise WireFormatError("an Anthropic message has a `content` list")
        skipped: list[Any] = []
        content = self._content_from_wire(request_context.session_id, body["content"], skipped)
        raw: dict[str, Any] = {"id": body.get("id"), "stop_reason": body.get("stop_reason")}
        if skipped:
            raw["unmapped_blocks"] = skipped
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
        return _AnthropicStream(self, context).events(chunks)

    # estimates --------------------------------------------------------------------------

    def estimate_input_tokens(
        self, messages: list[Message], tools: list[ToolDefinition], model: str | None = None
    ) -> int:
        # "Tool use system prompt token count" (tool-use pricing docs): Anthropic adds a
        # system prompt whenever tools are sent, its size by model (`model` is turnspec's
        # optional estimator keyword)
        prompt = next((n for key, n in TOOL_SYSTEM_PROMPTS if key in (model or "")), TOOL_SYSTEM_PROMPT)
        total = 3 + (prompt if tools else 0)
        for m in messages:
            total += 3
            for b in m.get("content") or []:
                total += _block_tokens(b)
        for t in tools:
            total += text_tokens(str(t.get("name", "")) + " " + str(t.get("description", "")))
            total += json_tokens(t.get("input_schema", {})) + 10
        return total


def _block_tokens(b: Mapping[str, Any]) -> int:
    t = b.get("type")
    if t == "text":
        return text_tokens(str(b.get("text", "")))
    if t == "thinking":
        return text_tokens(str(b.get("text", "")))
    if t == "tool_use":
        return json_tokens(b.get("input", {})) + text_tokens(str(b.get("name", ""))) + 20
    if t == "tool_result":
        return 15 + sum(_block_tokens(x) for x in b.get("content") or [])
    if t == "image":
        # Vision docs: tokens = (width px * height px) / 750, after scaling the long edge
        # to at most 1568 px; an image of unknown size is taken as the largest
        size = image_block_size(b) if (b.get("source") or {}).get("kind") == "base64" else None
        if size is None:
            return 1600
        w, h = size
        scale = min(1.0, 1568 / max(w, h, 1))
        return max(1, int(w * scale) * int(h * scale) // 750)
    return 0


class _AnthropicStream(CanonicalStream):
    """Anthropic's SSE events -> canonical events (contract §5.1's Anthropic table)."""

    def __init__(self, adapter: TheirAnthropicAdapter, ctx: RequestContext) -> None:
        self.a, self.ctx = adapter, ctx
        super().__init__(ctx)
        self.at: dict[int, int] = {}  # wire index -> canonical index (None-mapped blocks skipped)
        self.skipped: set[int] = set()
        self.args: dict[int, str] = {}
        self.sig: dict[int, str] = {}
        self.stopped: set[int] = set()
        self.stop: str | None = None
        self.started = self.done = False
        self.served: str | None = None

    def end_open_calls(self) -> Iterator[StreamEvent]:
        """Contract §5.2.2 (exactly one tool_use_end per call) on a failed stream: each open
        call ends with what its fragments spell as an object, else {} (as §5.3 on cancel)."""
        for i in sorted(self.args, key=lambda j: self.at[j]):
            if i in self.stopped:
                continue
            k = self.at[i]
            blk = self.content[k]
            blk["input"] = json_object_or_none(self.args[i]) or {}
            self.stopped.add(i)
            yield self.ev("tool_use_end", content_block_index=k, tool_use_id=blk["id"], final_input=blk["input"])

    def _events(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        for fr in sse_frames(chunks):
            if self.done:
                raise WireFormatError("an event after message_stop", event=fr.index, line=fr.line)
            data = frame_json(fr)
            kind = data.get("type")
            if kind == "error":
                if self.started:
                    yield self.ev("message_complete", stop_reason="error", final_content=self.content, usage=self.usage)
                raise _classify(None, data, {}, self.ctx.request_id)
            try:
                yield from self.one(kind, data)
            except WireFormatError as exc:
                if exc.event is None:
                    raise WireFormatError(str(exc), event=fr.index, line=fr.line) from None
                raise
            except (KeyError, TypeError, ValueError) as exc:
                raise WireFormatError(f"malformed {kind} event: {exc!r}", event=fr.index, line=fr.line) from None
        if not self.done:
            raise WireFormatError("stream cut before its end (no message_stop)")

    def one(self, kind: Any, d: dict[str, Any]) -> Iterator[StreamEvent]:
        if kind == "ping":
            return
        if kind == "message_start":
            if self.started:
                raise WireFormatError("a second message_start")
            self.started = True
            msg = d.get("message") or {}
            served = msg.get("model")
            self.served = served if isinstance(served, str) else None
            self.usage = self.a._tokens(msg.get("usage"))
            model = f"{PROVIDER}:{served}" if self.served else (self.ctx.model or f"{PROVIDER}:unknown")
            yield self.ev("message_start", role="assistant", model=model)
            return
        if not self.started:
            raise WireFormatError(f"{kind} before message_start")
        if kind == "content_block_start":
            i = int(d["index"])
            blk = d.get("content_block") or {}
            t = blk.get("type")
            k = len(self.content)
            if t == "text":
                self.content.append({"type": "text", "text": str(blk.get("text", ""))})
            elif t == "thinking":
                self.content.append({"type": "thinking", "text": str(blk.get("thinking", "")), "signature": None})
            elif t == "redacted_thinking":
                self.content.append({"type": "redacted_thinking", "data": str(blk.get("data", ""))})
            elif t == "tool_use":
                cid = self.a.tool_id_map(self.ctx.session_id).canonical_for(str(blk.get("id")))
                self.content.append({"type": "tool_use", "id": cid, "name": blk.get("name"), "input": {}})
                self.args[i] = ""
                yield self.ev("tool_use_start", content_block_index=k, tool_use_id=cid, tool_name=str(blk.get("name")))
            else:
                self.skipped.add(i)
                return
            self.at[i] = k
        elif kind == "content_block_delta":
            i = int(d["index"])
            if i in self.skipped:
                return
            if i not in self.at:
                raise WireFormatError(f"content_block_delta for block {i}, never started")
            k = self.at[i]
            delta = d.get("delta") or {}
            dt_ = delta.get("type")
            blk = self.content[k]
            if dt_ == "text_delta" and blk["type"] == "text":
                blk["text"] += str(delta.get("text", ""))
                yield self.ev("text_delta", content_block_index=k, text=str(delta.get("text", "")))
            elif dt_ == "input_json_delta" and blk["type"] == "tool_use":
                part = str(delta.get("partial_json", ""))
                self.args[i] += part
                if part:
                    yield self.ev(
                        "tool_use_input_delta", content_block_index=k, tool_use_id=blk["id"], partial_json=part
                    )
            elif dt_ == "thinking_delta" and blk["type"] == "thinking":
                blk["text"] += str(delta.get("thinking", ""))
                yield self.ev("thinking_delta", content_block_index=k, text=str(delta.get("thinking", "")))
            elif dt_ == "signature_delta" and blk["type"] == "thinking":
                self.sig[i] = self.sig.get(i, "") + str(delta.get("signature", ""))
            elif dt_ == "citations_delta":
                return
            else:
                raise WireFormatError(f"{dt_} delta for a {blk['type']} block")
        elif kind == "content_block_stop":
            i = int(d["index"])
            if i in self.skipped:
                return
            if i not in self.at:
                raise WireFormatError(f"content_block_stop for block {i}, never started")
            k = self.at[i]
            blk = self.content[k]
            if blk["type"] == "tool_use":
                self.stopped.add(i)
                parsed = json_object_or_none(self.args[i])
                if parsed is None:
                    raise WireFormatError(f"tool_use {blk['id']}: streamed input is not a JSON object")
                blk["input"] = parsed
                yield self.ev("tool_use_end", content_block_index=k, tool_use_id=blk["id"], final_input=parsed)
            elif blk["type"] == "thinking":
                blk["signature"] = self.sig.get(i)
                # streaming §5.3: the signature rides on the block's final thinking delta
                yield self.ev("thinking_delta", content_block_index=k, text="", signature=self.sig.get(i))
        elif kind == "message_delta":
            delta = d.get("delta") or {}
            if delta.get("stop_reason") is not None:
                self.stop = str(delta["stop_reason"])
            u = d.get("usage")
            if isinstance(u, dict):
                base = self.usage or token_usage(0, 0)
                self.usage = token_usage(
                    int(u.get("input_tokens") or base["input_tokens"]),
                    int(u.get("output_tokens") or base["output_tokens"]),
                    int(u.get("cache_read_input_tokens") or base["cached_input_tokens"]),
                    int(u.get("cache_creation_input_tokens") or base["cache_creation_input_tokens"]),
                )
        elif kind == "message_stop":
            self.done = True
            stop = self.a.stops.get(self.stop or "", "end_turn")
            yield self.ev("message_complete", stop_reason=stop, final_content=self.content, usage=self.usage)
        else:
            return  # Streaming docs: "we may occasionally add new event types"; ignore them


__all__ = ["TheirAnthropicAdapter"]
