"""An honest Ollama `POST /api/chat` adapter written by a third party from the metis
contract (provider-adapter-contract.md §3.3, §3.4, §4.1, §4.4, §5.2, §6.1, §6.2, §6.5,
§7.1, §7.2), the canonical format (§4.2, §5.1, §6.2, §6.5, §7.3, §7.4) and Ollama's
documentation (docs/api.md "Generate a chat completion", docs.ollama.com/capabilities/
tool-calling, /thinking, /structured-outputs, /vision; the blog posts "Streaming responses
with tool calling" and "Thinking"; the v0.12.10 release note "Ollama will now return tool
call IDs from the /api/chat API"), never from turnspec's reference adapter. Its choices,
where the docs leave room:

- every canonical SYSTEM text is joined with a blank line into one leading `system`
  message (contract §4.1.2: "Multiple SYSTEM messages ... are concatenated (with `\\n\\n`
  separator)");
- several text blocks of one user or assistant turn are joined with a blank line into the
  one `content` string a wire message has;
- `max_output_tokens` goes to `options.num_predict`, `temperature` and `stop_sequences` to
  `options.temperature` / `options.stop` (docs: "options: additional model parameters
  listed in the documentation for the Modelfile"); `think` is never sent on its own (the
  model's default stands; a caller sets it through `AdapterOptions.extra`);
- `stream` is always written out (`false` for a one-shot call: the docs' default is true);
- images go as base64 strings in the message's `images` (docs: "a list of images ...
  encoded in Base64"); a URL or file reference, or a media type outside PNG/JPEG, is
  dropped with the WARN line (canonical §7.3);
- tool calls: an `id` Ollama issued (v0.12.10 and later) is kept through the §6.2 map and
  echoed as the result's `tool_call_id`; a call without one gets a fresh `tu_<ULID>` and
  goes back without an id, its result paired by `tool_name` and order, as the tool-calling
  docs show; a call another provider made gets an `ollama-<ulid>` id of this adapter's
  minting;
- a tool result's `is_error` has no wire flag: it rides in band as the prefix
  `[tool error] ` on the content, and is read back from it;
- thinking: Ollama's `message.thinking` is a thinking block without signature, and goes
  back in the assistant message's `thinking` field; thinking carrying another provider's
  signature, and redacted thinking, are dropped with the WARN (Ollama cannot verify them);
- errors: HTTP status first (contract §6.2 table), then the `error` text (overflow,
  authentication and rate-limit wording); an `{"error": ...}` line mid-stream, which has no
  status, is a server error unless its text says otherwise.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

from their_common import (  # a sibling module: `turnspec conform` loads this file by path
    CanonicalStream,
    finish_message,
    header,
    mint_ulid,
    plain_message,
    token_usage,
)

from conformance.adapters.base import BaseAdapter, new_tool_id
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

PROVIDER = "ollama"
IMAGE_TYPES = ("image/png", "image/jpeg")
ERROR_PREFIX = "[tool error] "
NO_WIRE_ID = "no-wire-id:"  # provider-side key of a call Ollama gave no id (never sent)
# the request fields this adapter reads into canonical form; any other goes to `extra`
KNOWN_FIELDS = frozenset({"model", "messages", "tools", "options", "format", "stream"})
OPTION_FIELDS = ("num_predict", "temperature", "stop")
# base64 openings of the image formats Ollama's vision models read (file signatures)
MAGIC = (("iVBORw0KGgo", "image/png"), ("/9j/", "image/jpeg"), ("R0lGOD", "image/gif"), ("UklGR", "image/webp"))
OVERFLOW = re.compile(r"context (length|window|size)|exceeds? .*context|too (long|many tokens)", re.I)
AUTH = re.compile(r"unauthori[sz]ed|invalid api key|forbidden|permission", re.I)
RATE = re.compile(r"rate limit|too many requests|quota", re.I)


def media_of(data: str) -> str:
    for magic, media in MAGIC:
        if data.startswith(magic):
            return media
    return "image/png"


def classify(status: int | None, body: Any, headers: Mapping[str, Any], core_request_id: str | None) -> AdapterError:
    """Ollama's `{"error": "..."}` body and HTTP status -> contract §6.2 class."""
    err = body.get("error") if isinstance(body, dict) else body
    if isinstance(err, dict):
        err = err.get("message") or json.dumps(err)
    text = str(err) if err not in (None, "") else "no message"
    message = f"ollama error ({status if status is not None else 'in stream'}): {text}"
    cls: type[AdapterError]
    if status in (401, 403):
        cls = AuthError
    elif status == 408:
        cls = NetworkError
    elif status == 413:
        cls = ContextOverflowError
    elif status == 429:
        cls = RateLimitError
    elif status is not None and status >= 500:
        cls = ServerError
    elif status is not None and status >= 400:
        # "Some providers use 400 with body indicating overflow; remap."
        cls = ContextOverflowError if OVERFLOW.search(text) else AuthError if AUTH.search(text) else InvalidRequestError
    elif status is None:
        # a failure line in a stream: the server gave up mid-generation
        if OVERFLOW.search(text):
            cls = ContextOverflowError
        elif RATE.search(text):
            cls = RateLimitError
        elif AUTH.search(text):
            cls = AuthError
        else:
            cls = ServerError
    else:
        cls = AdapterError
    if cls is RateLimitError:
        after = header(headers, "retry-after")
        try:
            seconds = float(after) if after is not None else None
        except ValueError:
            seconds = None
        return RateLimitError(
            message, retry_after_seconds=seconds, provider_status=status, request_id=core_request_id, retryable=True
        )
    retryable = cls in (ServerError, NetworkError)
    return cls(message, provider_status=status, request_id=core_request_id, retryable=retryable)


def stop_of(done_reason: Any, has_calls: bool) -> str:
    """done_reason ("stop", "length", "load", "unload") -> contract §3.3 StopReason. Ollama
    reports a stop sequence as "stop" too, so it cannot be told from a natural end."""
    if done_reason == "length":
        return "max_tokens"
    return "tool_use" if has_calls else "end_turn"


def tokens_of(d: Mapping[str, Any]) -> dict[str, int] | None:
    """prompt_eval_count / eval_count -> TokenUsage (contract §7.1). The counts are omitted
    when zero (a fully cached prompt), so one present makes the other 0."""
    p, e = d.get("prompt_eval_count"), d.get("eval_count")
    if p is None and e is None:
        return None
    for v in (p, e):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise WireFormatError(f"token count {v!r} is not a non-negative integer")
    return token_usage(int(p or 0), int(e or 0))


def ndjson_lines(chunks: Iterable[bytes | str]) -> Iterator[tuple[int, Any]]:
    """The JSON values of an NDJSON body split anywhere, each with its 1-based line; a bad
    line is a located WireFormatError."""
    dec = codecs.getincrementaldecoder("utf-8")()
    buf = ""
    line_no = 0

    def take(line: str) -> Iterator[tuple[int, Any]]:
        nonlocal line_no
        line_no += 1
        if not line.strip():
            return
        try:
            yield line_no, json.loads(line)
        except ValueError as exc:
            raise WireFormatError(f"line is not JSON ({exc})", line=line_no) from None

    for chunk in chunks:
        try:
            buf += dec.decode(chunk) if isinstance(chunk, bytes) else chunk
        except UnicodeDecodeError as exc:
            raise WireFormatError(f"stream is not UTF-8: {exc.reason}", line=line_no + 1) from None
        while "\n" in buf:
            line, buf = buf.split("\n", 1)
            yield from take(line.rstrip("\r"))
    try:
        buf += dec.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise WireFormatError(f"stream ends inside a UTF-8 character: {exc.reason}", line=line_no + 1) from None
    if buf.strip():
        yield from take(buf)


class TheirOllamaAdapter(BaseAdapter):
    """Canonical <-> Ollama `POST /api/chat`."""

    name: ClassVar[str] = "their-ollama"
    provider: ClassVar[str] = PROVIDER
    wire_api: ClassVar[str] = "ollama-chat"
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^\S+$")
    tool_errors_in_band: ClassVar[str | None] = f"result content prefixed {ERROR_PREFIX!r}"
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": True,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        "supports_structured_output": True,
        "supports_streaming": True,
        "supports_streaming_tool_calls": False,  # each call arrives whole in one chunk
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": False,  # no cache counts are reported
        "supports_system_messages_in_list": True,
        "max_context_tokens": 131072,
        "max_output_tokens": 32768,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def new_provider_tool_id(self) -> str:
        return "ollama-" + mint_ulid().lower()

    def call_id(self, sid: str, wire_id: Any) -> str:
        """The canonical id of a wire call: the session map's for an id Ollama issued, a
        fresh one for an id-less call (kept under a key that is never sent)."""
        ids = self.tool_id_map(sid)
        if isinstance(wire_id, str) and wire_id:
            return ids.canonical_for(wire_id)
        cid = new_tool_id()
        ids.bind(cid, NO_WIRE_ID + cid)
        return cid

    def wire_id(self, sid: str, canonical: str) -> str | None:
        pid = self.tool_id_map(sid).provider_for(canonical)
        return None if pid.startswith(NO_WIRE_ID) else pid

    # canonical -> wire ----------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        system: list[str] = []
        wire: list[dict[str, Any]] = []
        names: dict[str, str] = {}  # canonical call id -> tool name (a result names its tool)
        for m in messages:
            for b in m.get("content") or []:
                if b.get("type") == "tool_use":
                    names[str(b.get("id"))] = str(b.get("name"))
        for m in messages:
            role = m.get("role")
            if role == "system":
                for k, b in enumerate(m.get("content") or []):
                    if b.get("type") == "text":
                        system.append(str(b["text"]))
                    else:
                        self.drop(m, k, str(b.get("type")), "an Ollama system message holds text only")
            elif role == "user":
                wire.append(self._user(m))
            elif role == "assistant":
                wire.append(self._assistant(m))
            elif role == "tool":
                wire.extend(self._tool(m, names))
        if system:
            wire.insert(0, {"role": "system", "content": "\n\n".join(system)})
        body: dict[str, Any] = {"model": options.wire_model, "messages": wire}
        wire_tools = [self._tool_def(t) for t in tools] + [dict(t) for t in options.provider_tools]
        if wire_tools:
            body["tools"] = wire_tools
        opts: dict[str, Any] = {}
        if options.max_output_tokens is not None:
            opts["num_predict"] = options.max_output_tokens
        if options.temperature is not None:
            opts["temperature"] = options.temperature
        if options.stop_sequences:
            opts["stop"] = list(options.stop_sequences)
        extra = dict(options.extra)
        more = extra.pop("options", None)
        if isinstance(more, Mapping):
            opts = {**dict(more), **opts}
        if opts:
            body["options"] = opts
        if options.output_schema is not None:
            body["format"] = dict(options.output_schema)
        body.update(extra)
        body["stream"] = bool(options.stream)
        return WireRequest("POST", "/api/chat", {"content-type": "application/json"}, body)

    @staticmethod
    def _tool_def(t: ToolDefinition) -> dict[str, Any]:
        fn: dict[str, Any] = {"name": t["name"]}
        if t.get("description"):
            fn["description"] = t["description"]
        fn["parameters"] = t.get("input_schema") or {"type": "object", "properties": {}}
        return {"type": "function", "function": fn}

    def _user(self, m: Message) -> dict[str, Any]:
        texts: list[str] = []
        images: list[str] = []
        for k, b in enumerate(m.get("content") or []):
            t = b.get("type")
            if t == "text":
                texts.append(str(b["text"]))
            elif t == "image":
                src = b.get("source") or {}
                media = b.get("media_type")
                if src.get("kind") == "base64" and media in IMAGE_TYPES:
                    images.append(str(src.get("data", "")))
                else:
                    self.drop(
                        m, k, "image", f"Ollama takes base64 PNG or JPEG images only, not {src.get('kind')} {media}"
                    )
            else:
                self.drop(m, k, str(t), f"an Ollama user message has no place for a {t} block")
        out: dict[str, Any] = {"role": "user", "content": "\n\n".join(texts)}
        if images:
            out["images"] = images
        return out

    def _assistant(self, m: Message) -> dict[str, Any]:
        sid = str(m.get("session_id", ""))
        texts: list[str] = []
        thoughts: list[str] = []
        calls: list[dict[str, Any]] = []
        for k, b in enumerate(m.get("content") or []):
            t = b.get("type")
            if t == "text":
                texts.append(str(b["text"]))
            elif t == "thinking":
                if b.get("signature"):
                    self.drop(m, k, "thinking", "signed reasoning of another provider; Ollama cannot verify it")
                elif b.get("text"):
                    thoughts.append(str(b["text"]))
            elif t == "redacted_thinking":
                self.drop(m, k, "redacted_thinking", "Ollama has no field for encrypted reasoning")
            elif t == "tool_use":
                call: dict[str, Any] = {"function": {"name": b["name"], "arguments": b.get("input") or {}}}
                pid = self.wire_id(sid, str(b["id"]))
                if pid is not None:
                    call = {"id": pid, **call}
                calls.append(call)
            else:
                self.drop(m, k, str(t), f"an Ollama assistant message has no place for a {t} block")
        out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts)}
        if thoughts:
            out["thinking"] = "\n\n".join(thoughts)
        if calls:
            out["tool_calls"] = calls
        return out

    def _tool(self, m: Message, names: Mapping[str, str]) -> list[dict[str, Any]]:
        sid = str(m.get("session_id", ""))
        out: list[dict[str, Any]] = []
        for k, b in enumerate(m.get("content") or []):
            if b.get("type") != "tool_result":
                self.drop(m, k, str(b.get("type")), "an Ollama tool message carries one tool result")
                continue
            texts: list[str] = []
            for x in b.get("content") or []:
                if x.get("type") == "text":
                    texts.append(str(x["text"]))
                else:
                    self.drop(m, k, str(x.get("type")), "an Ollama tool message carries text only")
            text = "\n\n".join(texts)
            if b.get("is_error"):
                text = ERROR_PREFIX + text
            cid = str(b["tool_use_id"])
            msg: dict[str, Any] = {"role": "tool", "content": text}
            # a result read from a request that named no tool goes back without a name: a
            # template renders `tool_name`, so adding one changes the prompt (canonical §2.1.1)
            if cid in names and not self.own_raw(m).get("no_tool_name"):
                msg["tool_name"] = names[cid]
            pid = self.wire_id(sid, cid)
            if pid is not None:
                msg["tool_call_id"] = pid
            out.append(msg)
        return out

    # wire -> canonical (requests) ------------------------------------------------------

    def from_wire_request(self, body: WireBody, *, session_id: str | None = None) -> ParsedRequest:
        try:
            return self._from_wire_request(body, session_id)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WireFormatError(f"malformed Ollama chat request: {exc!r}") from None

    def _from_wire_request(self, body: WireBody, session_id: str | None) -> ParsedRequest:
        if not isinstance(body, dict):
            raise WireFormatError("an Ollama chat request is a JSON object")
        sid = session_id or "sess_" + mint_ulid()
        model = f"{PROVIDER}:{body.get('model') or 'unknown'}"
        out: list[Message] = []
        # the latest assistant turn's id-less calls not yet answered, in call order: Ollama
        # pairs a result without `tool_call_id` by its `tool_name`, else by order
        pending: list[tuple[str, str]] = []
        wire_messages = body.get("messages")
        if wire_messages is not None and not isinstance(wire_messages, list):
            raise WireFormatError("messages is not a list")
        for i, wm in enumerate(wire_messages or []):
            if not isinstance(wm, dict):
                raise WireFormatError(f"messages[{i}] is not an object")
            role = wm.get("role")
            content = wm.get("content")
            text = content if isinstance(content, str) else "" if content is None else json.dumps(content)
            if role == "system":
                out.append(plain_message(sid, "system", [{"type": "text", "text": text}], {}))
            elif role == "user":
                blocks: list[Block] = [{"type": "text", "text": text}] if text or not wm.get("images") else []
                for img in wm.get("images") or []:
                    data = str(img)
                    blocks.append(
                        {"type": "image", "source": {"kind": "base64", "data": data}, "media_type": media_of(data)}
                    )
                out.append(plain_message(sid, "user", blocks, {}))
            elif role == "assistant":
                blocks = []
                pending = []
                thinking = wm.get("thinking")
                if isinstance(thinking, str) and thinking:
                    blocks.append({"type": "thinking", "text": thinking, "signature": None})
                if text:
                    blocks.append({"type": "text", "text": text})
                for call in wm.get("tool_calls") or []:
                    blk = self._call_block(sid, call)
                    if not (isinstance(call.get("id"), str) and call["id"]):
                        pending.append((str(blk["name"]), blk["id"]))
                    blocks.append(blk)
                if not blocks:
                    blocks = [{"type": "text", "text": ""}]
                meta = {
                    "model": model,
                    "provider": PROVIDER,
                    "routing": {"mode": "default", "chosen_model": model, "reason": "read back from a request"},
                }
                out.append(plain_message(sid, "assistant", blocks, meta))
            elif role == "tool":
                wid = wm.get("tool_call_id")
                name = str(wm.get("tool_name") or wm.get("name") or "")
                named = [p for p in pending if p[0] == name]
                if isinstance(wid, str) and wid:
                    cid = self.tool_id_map(sid).canonical_for(wid)
                elif named or (not name and pending):
                    cid = (named or pending)[0][1]
                    pending = [p for p in pending if p[1] != cid]
                else:
                    cid = self.call_id(sid, None)
                tr: Block = {"type": "tool_result", "tool_use_id": cid, "content": []}
                if text.startswith(ERROR_PREFIX):
                    tr["is_error"] = True
                    text = text[len(ERROR_PREFIX) :]
                tr["content"] = [{"type": "text", "text": text}]
                tmeta: dict[str, Any] = {"parent_tool_use_id": cid}
                if not name:
                    tmeta["provider_raw"] = {self.name: {"no_tool_name": True}}  # canonical §6.5
                out.append(plain_message(sid, "tool", [tr], tmeta))
            else:
                raise WireFormatError(f"messages[{i}]: unknown role {role!r}")
        tools: list[ToolDefinition] = []
        provider_tools: list[dict[str, Any]] = []
        for t in body.get("tools") or []:
            fn = t.get("function") if isinstance(t, dict) else None
            if not isinstance(fn, dict) or t.get("type", "function") != "function":
                provider_tools.append(t)
                continue
            params = fn.get("parameters")
            tools.append(
                {
                    "name": fn.get("name"),
                    "description": str(fn.get("description") or ""),
                    "input_schema": params if isinstance(params, dict) else {"type": "object", "properties": {}},
                    "side_effects": "execute",  # the wire does not say: the most cautious value
                }
            )
        opts = body.get("options")
        opts = dict(opts) if isinstance(opts, dict) else {}
        max_tokens = opts.pop("num_predict", None)
        temperature = opts.pop("temperature", None)
        stops = opts.pop("stop", None)
        if isinstance(stops, str):
            stops = [stops]
        fmt = body.get("format")
        extra = {k: v for k, v in body.items() if k not in KNOWN_FIELDS}
        if opts:
            extra["options"] = opts
        if fmt is not None and not isinstance(fmt, dict):
            extra["format"] = fmt  # "json" mode: no canonical schema
        options = AdapterOptions(
            model=model,
            max_output_tokens=max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else None,
            temperature=float(temperature) if isinstance(temperature, int | float) else None,
            stop_sequences=tuple(str(s) for s in stops or ()),
            stream=body.get("stream", True) is not False,
            output_schema=fmt if isinstance(fmt, dict) else None,
            extra=extra,
            provider_tools=tuple(provider_tools),
        )
        return ParsedRequest(out, tools, options)

    def _call_block(self, sid: str, call: Any) -> Block:
        if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
            raise WireFormatError("a tool call has no function object")
        fn = call["function"]
        args = fn.get("arguments")
        if isinstance(args, str):  # some servers send the OpenAI string form
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                raise WireFormatError(f"tool call {fn.get('name')}: arguments are not JSON") from None
        if args is not None and not isinstance(args, dict):
            raise WireFormatError(f"tool call {fn.get('name')}: arguments are not an object")
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise WireFormatError("a tool call has no function name")
        return {"type": "tool_use", "id": self.call_id(sid, call.get("id")), "name": name, "input": args or {}}

    # wire -> canonical (responses) -----------------------------------------------------

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        try:
            return self._from_wire_response(response, request_context)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # hostile input: one located line, never a traceback
            raise WireFormatError(f"malformed Ollama chat response: {exc!r}") from None

    def _from_wire_response(self, response: WireResponse | WireBody, ctx: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or (isinstance(body, dict) and "error" in body and "message" not in body):
            raise classify(resp.status, body, resp.headers, ctx.request_id)
        if isinstance(body, str | bytes):
            # a streamed body read whole: fold its chunks
            return self._fold_stream(body, ctx)
        if not isinstance(body, dict):
            raise WireFormatError("an Ollama chat response is a JSON object")
        msg = body.get("message")
        if not isinstance(msg, dict):
            raise WireFormatError("the response has no message object")
        sid = ctx.session_id
        content: list[Block] = []
        thinking = msg.get("thinking")
        if isinstance(thinking, str) and thinking:
            content.append({"type": "thinking", "text": thinking, "signature": None})
        text = msg.get("content")
        if text is not None and not isinstance(text, str):
            raise WireFormatError("message.content is not a string")
        if text:
            content.append({"type": "text", "text": text})
        calls = msg.get("tool_calls") or []
        if not isinstance(calls, list):
            raise WireFormatError("message.tool_calls is not a list")
        for call in calls:
            content.append(self._call_block(sid, call))
        stop = stop_of(body.get("done_reason"), bool(calls))
        tokens = tokens_of(body)
        if tokens is None:
            tokens = self._estimated(ctx, content)
        raw = {"done_reason": body.get("done_reason"), "stop_reason": stop}
        served = body.get("model")
        return finish_message(
            ctx,
            PROVIDER,
            content,
            served_by=served if isinstance(served, str) and served else None,
            tokens=tokens,
            raw=raw,
            adapter=self.name,
        )

    def _fold_stream(self, body: str | bytes, ctx: RequestContext) -> Message:
        stream = _OllamaStream(self, ctx)
        for _ in stream.events([body]):
            pass
        raw = {"done_reason": stream.done_reason, "stop_reason": stream.stop}
        return finish_message(
            ctx, PROVIDER, stream.content, served_by=stream.model, tokens=stream.usage, raw=raw, adapter=self.name
        )

    def _estimated(self, ctx: RequestContext, content: list[Block]) -> dict[str, int] | None:
        """Contract §7.2, last paragraph: usage the response lacks may be estimated, with a
        WARN saying so; without the harness's pre-flight estimate there is nothing to say."""
        if ctx.estimated_input_tokens is None:
            return None
        out = sum(
            text_tokens(str(b.get("text", ""))) if b["type"] in ("text", "thinking") else json_tokens(b.get("input"))
            for b in content
        )
        self.log.warning(
            "%s: Ollama sent no eval counts; usage estimated as %d in / %d out",
            self.name,
            ctx.estimated_input_tokens,
            out,
            extra={"event": "usage_estimated", "adapter": self.name, "session_id": ctx.session_id},
        )
        return token_usage(ctx.estimated_input_tokens, out)

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return _OllamaStream(self, context).events(chunks)

    # estimates --------------------------------------------------------------------------

    def estimate_input_tokens(self, messages: list[Message], tools: list[ToolDefinition]) -> int:
        # a chat template wraps each message in a few role/turn tokens; tools are rendered
        # into the prompt as their JSON definitions
        total = 1
        for m in messages:
            total += 5
            for b in m.get("content") or []:
                total += _block_tokens(b)
        for t in tools:
            total += json_tokens(self._tool_def(t)) + 4
        return total


def _block_tokens(b: Mapping[str, Any]) -> int:
    t = b.get("type")
    if t in ("text", "thinking"):
        return text_tokens(str(b.get("text", "")))
    if t == "tool_use":
        return json_tokens(b.get("input", {})) + text_tokens(str(b.get("name", ""))) + 6
    if t == "tool_result":
        return 2 + sum(_block_tokens(x) for x in b.get("content") or [])
    if t == "image":
        return _image_tokens(b)
    return 0


def _image_tokens(b: Mapping[str, Any]) -> int:
    """Vision models tile an image into a fixed grid; about 576 tokens for a small one."""
    src = b.get("source") or {}
    return 576 if src.get("data") else 0


class _OllamaStream(CanonicalStream):
    """NDJSON ChatResponse chunks -> canonical events (contract §5.2, canonical §7.4)."""

    def __init__(self, adapter: TheirOllamaAdapter, ctx: RequestContext) -> None:
        self.a, self.ctx = adapter, ctx
        super().__init__(ctx)
        self.open: str | None = None  # "text" / "thinking": the block the next delta extends
        self.done = False
        self.done_reason: Any = None
        self.stop = "end_turn"
        self.model: str | None = None
        self.calls = 0

    def _events(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        index = -1
        for line, d in ndjson_lines(chunks):
            index += 1
            if not isinstance(d, dict):
                raise WireFormatError("a stream line is not a JSON object", event=index, line=line)
            if "error" in d:
                raise classify(None, d, {}, self.ctx.request_id)
            if self.done:
                raise WireFormatError("a line after the one marked done", event=index, line=line)
            try:
                yield from self.one(d)
            except WireFormatError as exc:
                if exc.line is None:
                    raise WireFormatError(str(exc), event=index, line=line) from None
                raise
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise WireFormatError(f"malformed chunk: {exc!r}", event=index, line=line) from None
        if not self.started:
            raise WireFormatError("empty stream: no chat response line")
        if not self.done:
            raise WireFormatError("stream cut before its end (no line with done: true)")

    def one(self, d: dict[str, Any]) -> Iterator[StreamEvent]:
        if not self.started:
            self.started = True
            served = d.get("model")
            self.model = served if isinstance(served, str) and served else None
            model = f"{PROVIDER}:{self.model}" if self.model else (self.ctx.model or f"{PROVIDER}:unknown")
            yield self.ev("message_start", role="assistant", model=model)
        msg = d.get("message")
        if msg is not None and not isinstance(msg, dict):
            raise WireFormatError("message is not an object")
        msg = msg or {}
        thinking = msg.get("thinking")
        if thinking is not None and not isinstance(thinking, str):
            raise WireFormatError("message.thinking is not a string")
        if thinking:
            yield from self.delta("thinking", thinking)
        text = msg.get("content")
        if text is not None and not isinstance(text, str):
            raise WireFormatError("message.content is not a string")
        if text:
            yield from self.delta("text", text)
        calls = msg.get("tool_calls") or []
        if not isinstance(calls, list):
            raise WireFormatError("message.tool_calls is not a list")
        for call in calls:
            blk = self.a._call_block(self.ctx.session_id, call)
            self.open = None
            k = len(self.content)
            self.content.append(blk)
            self.calls += 1
            cid = blk["id"]
            yield self.ev("tool_use_start", content_block_index=k, tool_use_id=cid, tool_name=blk["name"])
            yield self.ev(
                "tool_use_input_delta",
                content_block_index=k,
                tool_use_id=cid,
                partial_json=json.dumps(blk["input"], ensure_ascii=False),
            )
            yield self.ev("tool_use_end", content_block_index=k, tool_use_id=cid, final_input=blk["input"])
        if d.get("done") is True:
            self.done = True
            self.done_reason = d.get("done_reason")
            self.stop = stop_of(self.done_reason, self.calls > 0)
            self.usage = tokens_of(d)
            if self.usage is None:
                self.usage = self.a._estimated(self.ctx, self.content)
            if not self.content:
                self.content.append({"type": "text", "text": ""})
                yield self.ev("text_delta", content_block_index=0, text="")
            yield self.ev("message_complete", stop_reason=self.stop, final_content=self.content, usage=self.usage)

    def delta(self, kind: str, text: str) -> Iterator[StreamEvent]:
        if self.open == kind:
            k = len(self.content) - 1
            self.content[k]["text"] += text
        else:
            k = len(self.content)
            self.content.append(
                {"type": kind, "text": text, "signature": None} if kind == "thinking" else {"type": kind, "text": text}
            )
            self.open = kind
        yield self.ev(f"{kind}_delta", content_block_index=k, text=text)


__all__ = ["TheirOllamaAdapter"]
