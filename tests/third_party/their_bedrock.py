"""An honest Amazon Bedrock Converse adapter (`POST /model/{modelId}/converse` and
`/converse-stream`) written by a third party from the metis contract
(provider-adapter-contract.md §3.3, §4.1, §4.4, §5.2, §6.1-§6.5, §7.1, §7.2), the canonical
format (§4.2, §5.1, §6.2, §6.5, §7.3), streaming-protocol §5.3 and AWS's documentation,
never from turnspec's reference adapter. Its choices, where the docs leave room:

- every canonical SYSTEM text block is one `SystemContentBlock` `{"text"}` of the top-level
  `system` list (SYSTEM messages anywhere in the list are hoisted, in order); a `cachePoint`
  read from a request is remembered in the system message's own `provider_raw` and put back
  where it was (canonical §6.5), never invented;
- TOOL messages become `toolResult` blocks of a `user` message; consecutive same-role turns
  merge into one wire message (Converse wants user and assistant to alternate);
- a failed tool result is `toolResult.status: "error"` (ToolResultBlock: "Valid Values:
  success | error"); a `json` result part is read as its JSON text and goes back as `json`
  (the part's kind is kept in the tool message's own `provider_raw`);
- Bedrock's reasoning (`reasoningContent.reasoningText` {text, signature}, or
  `redactedContent`) maps to thinking / redacted_thinking; it goes back only to Bedrock
  ("If you pass a reasoning block back to the API in a multi-turn conversation, include the
  text and its signature unmodified"); reasoning another provider produced is dropped with
  a WARN line (canonical §7.3);
- images go as `image.format` png/jpeg/gif/webp with `source.bytes`; an `s3://` URL goes as
  `source.s3Location.uri`; any other URL or a file_ref is dropped with a WARN line;
- `inferenceConfig` carries maxTokens, temperature and stopSequences; other inference fields
  (topP) ride in `options.extra["inferenceConfig"]`; structured output is not exposed;
- stopReason `malformed_model_output` / `malformed_tool_use` end the turn as `error` (the
  model's output could not be used: canonical §4.3 ERROR "generation failed");
  `guardrail_intervened` / `content_filtered` end it (the filtered text is the reply);
  `model_context_window_exceeded` is a truncation, `max_tokens`;
- errors are classified by the AWS error name (`x-amzn-ErrorType`, the body's `__type`, or a
  stream's `:exception-type`), then by HTTP status (contract §6.2); a ModelTimeoutException
  is the model timing out while processing, not a pre-response network failure (contract
  §6.1: NETWORK is "DNS, connection refused, timeout pre-response"), so it is a server
  error; a ValidationException saying the input is too long is a context overflow.
- wire blocks with no canonical form (cachePoint, document, video, guardContent, a server
  tool's call and result, an empty `system` or `inferenceConfig`) are kept, where they were,
  in the message's own `provider_raw` (canonical §6.5) and sent back to Bedrock as read;
  a streamed server tool call is not a canonical tool call;
- `cancel(request_id)` (contract §3.1, §5.3) ends a stream at its next step;
- the input estimate is a heuristic per model family, calibrated on recorded usage.

Sources: docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
API_runtime_ConverseStream.html, API_runtime_ConverseStreamOutput.html,
API_runtime_ToolResultBlock.html, API_runtime_ReasoningContentBlockDelta.html,
API_runtime_ImageBlock.html, userguide/tool-use.html, userguide/prompt-caching.html.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar
from urllib.parse import quote, unquote

from their_common import (  # a sibling module: `turnspec conform` loads this file by path
    CanonicalStream,
    finish_message,
    header,
    mint_ulid,
    plain_message,
    token_usage,
)

from conformance.adapters.base import BaseAdapter, estimated_usage
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
from conformance.wire.eventstream import EventStreamDecoder, EventStreamMessage
from conformance.wire.framing import FramingError

PROVIDER = "bedrock"
FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp"}
MODEL_IN_PATH = re.compile(r"/model/([^/]+)/converse(-stream)?/?$")

# StopReason (Converse API reference) -> contract §3.3 StopReason
STOPS = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "guardrail_intervened": "end_turn",
    "content_filtered": "end_turn",
    "model_context_window_exceeded": "max_tokens",
    "malformed_model_output": "error",
    "malformed_tool_use": "error",
}

# AWS error names (the Converse / ConverseStream "Errors" sections, AWS common errors)
ERROR_NAMES: dict[str, type[AdapterError]] = {
    "throttlingexception": RateLimitError,
    "modelnotreadyexception": RateLimitError,  # 429: "The SDK will retry"
    "toomanyrequestsexception": RateLimitError,
    "servicequotaexceededexception": RateLimitError,
    "accessdeniedexception": AuthError,
    "unrecognizedclientexception": AuthError,
    "invalidsignatureexception": AuthError,
    "expiredtokenexception": AuthError,
    "incompletesignature": AuthError,
    "validationexception": InvalidRequestError,
    "resourcenotfoundexception": InvalidRequestError,
    "modeltimeoutexception": ServerError,
    "modelerrorexception": ServerError,
    "modelstreamerrorexception": ServerError,
    "internalserverexception": ServerError,
    "internalfailure": ServerError,
    "serviceunavailableexception": ServerError,
}
OVERFLOW = re.compile(
    r"too long|too many (?:input )?tokens|context (?:window|length)|exceeds? the (?:maximum|max)", re.I
)


def _aws_name(raw: Any) -> str:
    """`ThrottlingException:http://internal...` or `com.amazon...#ThrottlingException` ->
    `throttlingexception` (AWS REST-JSON: the error type is what precedes `:`, after `#`)."""
    text = str(raw or "")
    text = text.split(":", 1)[0] if ":" in text and not text.startswith("http") else text
    return text.rsplit("#", 1)[-1].strip().lower()


def classify(
    status: int | None, name: str, message: str, request_id: str | None, amz_id: str | None = None
) -> AdapterError:
    """An AWS error -> the contract §6.3 exception (by name, then §6.2's status table)."""
    key = _aws_name(name)
    cls: type[AdapterError] | None = ERROR_NAMES.get(key)
    if (cls is InvalidRequestError or (cls is None and status in (None, 400))) and OVERFLOW.search(message):
        cls = ContextOverflowError  # §6.2: "Some providers use 400 with body indicating overflow; remap."
    if cls is None:
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
            cls = InvalidRequestError
        else:
            cls = AdapterError
    text = f"bedrock {name.split(':', 1)[0] if name else 'error'}"
    text += f" ({status})" if status is not None else ""
    text += f": {message or 'no message'}"
    if amz_id:
        text += f" [x-amzn-requestid {amz_id}]"
    retryable = cls in (RateLimitError, ServerError, NetworkError)
    return cls(text, provider_status=status, request_id=request_id, retryable=retryable)


def tokens_of(u: Any) -> dict[str, int] | None:
    """TokenUsage -> contract §3.3 TokenUsage. The prompt-caching guide's counts are
    disjoint: inputTokens leaves out what was read from or written to the cache."""
    if not isinstance(u, dict):
        return None
    vals = {}
    for key in ("inputTokens", "outputTokens", "cacheReadInputTokens", "cacheWriteInputTokens"):
        v = u.get(key, 0)
        if v is None:
            v = 0
        if isinstance(v, bool) or not isinstance(v, int):
            raise WireFormatError(f"usage.{key} is not an integer")
        vals[key] = v
    return token_usage(
        vals["inputTokens"], vals["outputTokens"], vals["cacheReadInputTokens"], vals["cacheWriteInputTokens"]
    )


def _obj(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise WireFormatError(f"{what} is not a JSON object")
    return value


def _list(value: Any, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise WireFormatError(f"{what} is not a list")
    return value


class TheirBedrockAdapter(BaseAdapter):
    """Canonical <-> Amazon Bedrock Converse / ConverseStream."""

    name: ClassVar[str] = "their-bedrock"
    provider: ClassVar[str] = PROVIDER
    wire_api: ClassVar[str] = "bedrock-converse"
    # ToolUseBlock.toolUseId: 1 to 64 characters (the ids this adapter mints: [A-Za-z0-9_-])
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": True,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        "supports_structured_output": False,  # not exposed by this adapter
        "supports_streaming": True,
        "supports_streaming_tool_calls": True,  # toolUse.input arrives in fragments
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": True,  # cache read/write counts reported, cachePoints kept
        "supports_system_messages_in_list": False,
        "max_context_tokens": 300000,
        "max_output_tokens": 64000,
        "accepted_image_media_types": list(FORMATS),
    }

    def new_provider_tool_id(self) -> str:
        return "tooluse_" + secrets.token_urlsafe(16)  # 22 characters of [A-Za-z0-9_-]

    # canonical -> wire ----------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        system: list[dict[str, Any]] = []
        wire: list[dict[str, Any]] = []
        for m in messages:
            role = m.get("role")
            if role == "system":
                system.extend(self._system_blocks(m))
                continue
            blocks = self._blocks(m)
            if not blocks:
                continue
            wire_role = "assistant" if role == "assistant" else "user"
            if wire and wire[-1]["role"] == wire_role:
                wire[-1]["content"].extend(blocks)  # Converse alternates user and assistant
            else:
                wire.append({"role": wire_role, "content": blocks})
        body: dict[str, Any] = {"messages": wire}
        if system or any(m.get("role") == "system" for m in messages):
            body["system"] = system  # an empty SYSTEM placeholder (canonical §5.1.2) is an empty list
        extra = dict(options.extra)
        inference: dict[str, Any] = {}
        had_inference = "inferenceConfig" in extra
        more = extra.pop("inferenceConfig", None)
        if isinstance(more, Mapping):
            inference.update(more)
        if options.max_output_tokens is not None:
            inference["maxTokens"] = options.max_output_tokens
        if options.temperature is not None:
            inference["temperature"] = options.temperature
        if options.stop_sequences:
            inference["stopSequences"] = list(options.stop_sequences)
        if inference or had_inference:
            body["inferenceConfig"] = inference
        specs: list[dict[str, Any]] = []
        for t in tools:
            spec: dict[str, Any] = {"name": t["name"]}
            if t.get("description"):
                spec["description"] = t["description"]
            spec["inputSchema"] = {"json": t.get("input_schema") or {"type": "object"}}
            specs.append({"toolSpec": spec})
        specs += [dict(t) for t in options.provider_tools]
        tool_config = extra.pop("toolConfig", None)
        config: dict[str, Any] = dict(tool_config) if isinstance(tool_config, Mapping) else {}
        if specs:
            config["tools"] = specs
        if config:
            body["toolConfig"] = config
        if options.output_schema is not None:
            self.warn_option("output_schema", "this adapter does not expose Converse structured output")
        body.update(extra)
        op = "converse-stream" if options.stream else "converse"
        path = f"/model/{quote(options.wire_model, safe='')}/{op}"
        headers = {"content-type": "application/json"}
        if options.stream:
            headers["accept"] = "application/vnd.amazon.eventstream"
        return WireRequest("POST", path, headers, body)

    def _system_blocks(self, m: Message) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        content = m.get("content") or []
        kept = self._kept(m, "kept")
        out += kept.get(0, [])
        for k, b in enumerate(content):
            if b.get("type") == "text":
                out.append({"text": b["text"]})
            else:
                self.drop(m, k, str(b.get("type")), "Converse's system list holds text only")
            out += kept.get(k + 1, [])
        return out

    def _kept(self, m: Message, key: str) -> dict[int, list[dict[str, Any]]]:
        """Wire blocks with no canonical form this adapter read (cachePoint, document, a
        server tool's call and result...), kept in the message's own provider_raw
        (canonical §6.5) as [position, block]: put back after that many canonical blocks."""
        out: dict[int, list[dict[str, Any]]] = {}
        for item in self.own_raw(m).get(key) or []:
            if isinstance(item, list) and len(item) == 2 and isinstance(item[0], int) and isinstance(item[1], dict):
                out.setdefault(item[0], []).append(item[1])
        return out

    def _mine(self, m: Message) -> bool:
        return (m.get("metadata") or {}).get("provider") == PROVIDER

    def _blocks(self, m: Message) -> list[dict[str, Any]]:
        role, sid = m.get("role"), str(m.get("session_id", ""))
        kept = self._kept(m, "kept")
        placeholder = bool(self.own_raw(m).get("placeholder"))
        out: list[dict[str, Any]] = list(kept.get(0, []))
        for k, b in enumerate(m.get("content") or []):
            t = b.get("type")
            if placeholder and t == "text" and b.get("text") == "":
                pass  # the empty text standing for a turn of kept blocks alone
            elif t == "text" and role in ("user", "assistant"):
                out.append({"text": b["text"]})
            elif t == "image" and role == "user":
                img = self._image(m, k, b)
                if img is not None:
                    out.append({"image": img})
            elif t == "tool_use" and role == "assistant":
                pid = self.tool_id_map(sid).provider_for(str(b["id"]))
                out.append({"toolUse": {"toolUseId": pid, "name": b["name"], "input": b.get("input") or {}}})
            elif t == "tool_result" and role == "tool":
                out.append({"toolResult": self._result(m, k, b)})
            elif t == "thinking" and role == "assistant":
                if not self._mine(m):
                    self.drop(m, k, "thinking", "Bedrock verifies only reasoning its own models produced")
                else:
                    rt: dict[str, Any] = {"text": str(b.get("text", ""))}
                    if b.get("signature"):
                        rt["signature"] = b["signature"]
                    out.append({"reasoningContent": {"reasoningText": rt}})
            elif t == "redacted_thinking" and role == "assistant":
                if not self._mine(m):
                    self.drop(
                        m, k, "redacted_thinking", "another provider's encrypted reasoning means nothing to Bedrock"
                    )
                else:
                    out.append({"reasoningContent": {"redactedContent": b["data"]}})
            else:
                self.drop(m, k, str(t), f"Converse has no content block for a {t} block in a {role} turn")
            out += kept.get(k + 1, [])
        return out

    def _image(self, m: Message, k: int, b: Block) -> dict[str, Any] | None:
        src = b.get("source") or {}
        kind, data = src.get("kind"), str(src.get("data", ""))
        fmt = FORMATS.get(str(b.get("media_type")))
        if fmt is None:
            self.drop(m, k, "image", f"Converse images are png, jpeg, gif or webp, not {b.get('media_type')}")
            return None
        if kind == "base64":
            return {"format": fmt, "source": {"bytes": data}}
        if kind == "url" and data.startswith("s3://"):
            return {"format": fmt, "source": {"s3Location": {"uri": data}}}
        self.drop(m, k, "image", f"Converse takes image bytes or an S3 location, not a {kind} source")
        return None

    def _result(self, m: Message, k: int, b: Block) -> dict[str, Any]:
        raw = self.own_raw(m)
        json_parts = set(raw.get("json_parts") or [])
        kept = self._kept(m, "result_kept")
        parts: list[dict[str, Any]] = list(kept.get(0, []))
        for j, x in enumerate(b.get("content") or []):
            if x.get("type") == "text":
                text = str(x["text"])
                try:
                    parts.append({"json": json.loads(text)} if j in json_parts else {"text": text})
                except ValueError:
                    parts.append({"text": text})
            elif x.get("type") == "image":
                img = self._image(m, k, x)
                if img is not None:
                    parts.append({"image": img})
            else:
                self.drop(m, k, str(x.get("type")), "a Converse toolResult holds text, json, images or documents")
            parts += kept.get(j + 1, [])
        pid = self.tool_id_map(str(m.get("session_id", ""))).provider_for(str(b["tool_use_id"]))
        result: dict[str, Any] = {"toolUseId": pid, "content": parts}
        if b.get("is_error"):
            result["status"] = "error"
        elif raw.get("status") == "success":
            result["status"] = "success"
        return result

    # wire -> canonical (requests) ------------------------------------------------------

    def from_wire_request(
        self, body: WireBody, *, session_id: str | None = None, url: str | None = None
    ) -> ParsedRequest:
        """`url` (turnspec's optional reader keyword) names the model and the operation:
        Converse keeps both in the path, not the body."""
        try:
            return self._from_wire_request(body, session_id, url)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WireFormatError(f"malformed Converse request: {exc!r}") from None

    def _from_wire_request(self, body: WireBody, session_id: str | None, url: str | None) -> ParsedRequest:
        if not isinstance(body, dict):
            raise WireFormatError("a Converse request body is a JSON object")
        sid = session_id or "sess_" + mint_ulid()
        found = MODEL_IN_PATH.search((url or "").split("?", 1)[0])
        model = f"{PROVIDER}:{unquote(found.group(1)) if found else 'unknown'}"
        out: list[Message] = []
        system = body.get("system")
        if system is not None:
            texts: list[Block] = []
            kept: list[list[Any]] = []
            for s in _list(system, "system"):
                s = _obj(s, "a system block")
                if isinstance(s.get("text"), str):
                    texts.append({"type": "text", "text": s["text"]})
                else:
                    kept.append([len(texts), s])  # cachePoint, guardContent
            meta: dict[str, Any] = {"provider_raw": {self.name: {"kept": kept}}} if kept else {}
            out.append(plain_message(sid, "system", texts, meta))
        for i, wm in enumerate(_list(body.get("messages") or [], "messages")):
            wm = _obj(wm, f"messages[{i}]")
            out.extend(self._read_turn(sid, wm, model))
        tools: list[ToolDefinition] = []
        provider_tools: list[dict[str, Any]] = []
        extra: dict[str, Any] = {}
        config = body.get("toolConfig")
        if config is not None:
            config = dict(_obj(config, "toolConfig"))
            for t in _list(config.pop("tools", []), "toolConfig.tools"):
                t = _obj(t, "a tool")
                spec = t.get("toolSpec")
                if isinstance(spec, dict):
                    schema = (spec.get("inputSchema") or {}).get("json")
                    desc = spec.get("description")
                    tools.append(
                        {
                            "name": spec.get("name"),
                            "description": desc if isinstance(desc, str) else "",
                            "input_schema": schema if isinstance(schema, dict) else {"type": "object"},
                            "side_effects": "execute",  # the wire does not say: the most cautious value
                        }
                    )
                else:
                    provider_tools.append(t)  # cachePoint, systemTool: no canonical form
            if config:
                extra["toolConfig"] = config
        inference = body.get("inferenceConfig")
        inference = dict(_obj(inference, "inferenceConfig")) if inference is not None else {}
        max_tokens = inference.pop("maxTokens", None)
        temperature = inference.pop("temperature", None)
        stops = inference.pop("stopSequences", None)
        if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)):
            raise WireFormatError("inferenceConfig.maxTokens is not an integer")
        if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, int | float)):
            raise WireFormatError("inferenceConfig.temperature is not a number")
        if stops is not None and not (isinstance(stops, list) and all(isinstance(s, str) for s in stops)):
            raise WireFormatError("inferenceConfig.stopSequences is not a list of strings")
        if inference or "inferenceConfig" in body:
            extra["inferenceConfig"] = inference  # kept as read, even empty
        for key, value in body.items():
            if key not in ("messages", "system", "toolConfig", "inferenceConfig"):
                extra[key] = value
        options = AdapterOptions(
            model=model,
            max_output_tokens=max_tokens,
            temperature=temperature,
            stop_sequences=tuple(stops or ()),
            stream=bool(found and found.group(2)),
            extra=extra,
            provider_tools=tuple(provider_tools),
        )
        return ParsedRequest(out, tools, options)

    def _read_turn(self, sid: str, wm: dict[str, Any], model: str) -> list[Message]:
        """One wire message -> canonical messages: each toolResult of a user turn is a TOOL
        message; blocks with no canonical form are kept (`_kept`) where they were."""
        is_assistant = wm.get("role") == "assistant"
        out: list[Message] = []
        plain: list[Block] = []
        kept: list[list[Any]] = []

        def flush() -> None:
            nonlocal plain, kept
            if not plain and not kept:
                return
            if not plain and out:
                # kept blocks after a tool result: they follow that TOOL message's block
                prev = out[-1]["metadata"].setdefault("provider_raw", {}).setdefault(self.name, {})
                n = len(out[-1]["content"])
                prev.setdefault("kept", []).extend([n, blk] for _, blk in kept)
                kept = []
                return
            raw: dict[str, Any] = {}
            if not plain:
                plain = [{"type": "text", "text": ""}]  # a turn must hold a block (canonical §5.1.1)
                raw["placeholder"] = True
            if kept:
                raw["kept"] = kept
            meta: dict[str, Any] = {}
            if is_assistant:
                meta = {
                    "model": model,
                    "provider": PROVIDER,
                    "routing": {"mode": "default", "chosen_model": model, "reason": "read from a Converse request"},
                }
            if raw:
                meta["provider_raw"] = {self.name: raw}
            out.append(plain_message(sid, "assistant" if is_assistant else "user", plain, meta))
            plain, kept = [], []

        for j, b in enumerate(_list(wm.get("content") or [], "content")):
            b = _obj(b, f"content[{j}]")
            if "toolResult" in b and not is_assistant:
                flush()
                out.append(self._read_result(sid, _obj(b["toolResult"], "toolResult")))
                continue
            got = self._read_block(sid, b)
            if got is None:
                kept.append([len(plain), b])
            else:
                plain.extend(got)
        flush()
        return out

    def _read_result(self, sid: str, r: dict[str, Any]) -> Message:
        pid = r.get("toolUseId")
        if not isinstance(pid, str) or not pid:
            raise WireFormatError("toolResult.toolUseId is missing")
        cid = self.tool_id_map(sid).canonical_for(pid)
        content: list[Block] = []
        json_parts: list[int] = []
        kept: list[list[Any]] = []
        for part in _list(r.get("content") or [], "toolResult.content"):
            part = _obj(part, "a toolResult part")
            img = self._read_image(part["image"]) if "image" in part else None
            if isinstance(part.get("text"), str):
                content.append({"type": "text", "text": part["text"]})
            elif "json" in part:
                json_parts.append(len(content))
                content.append({"type": "text", "text": json.dumps(part["json"], ensure_ascii=False)})
            elif img is not None:
                content.append(img)
            else:
                kept.append([len(content), part])  # document, video, an S3 image: no canonical form
        block: Block = {"type": "tool_result", "tool_use_id": cid, "content": content}
        if r.get("status") == "error":
            block["is_error"] = True
        meta: dict[str, Any] = {"parent_tool_use_id": cid}
        raw: dict[str, Any] = {}
        if json_parts:
            raw["json_parts"] = json_parts
        if kept:
            raw["result_kept"] = kept
        if r.get("status") == "success":
            raw["status"] = "success"
        if raw:
            meta["provider_raw"] = {self.name: raw}
        return plain_message(sid, "tool", [block], meta)

    def _read_image(self, img: Any) -> Block | None:
        img = _obj(img, "image")
        fmt = str(img.get("format", ""))
        src = _obj(img.get("source"), "image.source")
        media = f"image/{fmt}"
        if "bytes" in src:
            return {"type": "image", "source": {"kind": "base64", "data": str(src["bytes"])}, "media_type": media}
        s3 = src.get("s3Location")
        if isinstance(s3, dict) and isinstance(s3.get("uri"), str):
            return {"type": "image", "source": {"kind": "url", "data": s3["uri"]}, "media_type": media}
        return None

    def _read_block(self, sid: str, b: dict[str, Any]) -> list[Block] | None:
        """One ContentBlock -> its canonical blocks; None for a kind with no canonical form
        (document, video, cachePoint, guardContent, citationsContent, a server tool's call
        or result, which the service ran itself)."""
        if "text" in b:
            text = b["text"]
            if not isinstance(text, str):
                raise WireFormatError("a text block's text is not a string")
            return [{"type": "text", "text": text}]
        if "toolUse" in b:
            use = _obj(b["toolUse"], "toolUse")
            if use.get("type") == "server_tool_use":
                return None
            pid, name, args = use.get("toolUseId"), use.get("name"), use.get("input", {})
            if not isinstance(pid, str) or not pid or not isinstance(name, str):
                raise WireFormatError("toolUse needs a toolUseId and a name")
            if not isinstance(args, dict):
                raise WireFormatError(f"toolUse {name}: input is not a JSON object")
            return [{"type": "tool_use", "id": self.tool_id_map(sid).canonical_for(pid), "name": name, "input": args}]
        if "reasoningContent" in b:
            rc = _obj(b["reasoningContent"], "reasoningContent")
            if "redactedContent" in rc:
                return [{"type": "redacted_thinking", "data": str(rc["redactedContent"])}]
            rt = _obj(rc.get("reasoningText"), "reasoningContent.reasoningText")
            sig = rt.get("signature")
            return [{"type": "thinking", "text": str(rt.get("text", "")), "signature": sig if sig else None}]
        if "image" in b:
            img = self._read_image(b["image"])
            return [img] if img is not None else None
        return None

    # wire -> canonical (responses) -----------------------------------------------------

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        try:
            return self._from_wire_response(response, request_context)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # hostile input: one located line, never a traceback
            raise WireFormatError(f"malformed ConverseResponse: {exc!r}") from None

    def _from_wire_response(self, response: WireResponse | WireBody, ctx: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400:
            name = header(resp.headers, "x-amzn-errortype") or ""
            message = ""
            if isinstance(body, dict):
                name = name or str(body.get("__type") or "")
                message = str(body.get("message") or body.get("Message") or "")
            elif isinstance(body, str):
                message = body
            raise classify(resp.status, name, message, ctx.request_id, header(resp.headers, "x-amzn-requestid"))
        body = _obj(body, "a ConverseResponse")
        msg = _obj(_obj(body.get("output"), "output").get("message"), "output.message")
        content: list[Block] = []
        kept: list[list[Any]] = []
        for j, b in enumerate(_list(msg.get("content") or [], "output.message.content")):
            b = _obj(b, f"content[{j}]")
            got = self._read_block(ctx.session_id, b)
            if got is None:
                kept.append([len(content), b])  # replayed to Bedrock as it came (canonical §6.5)
            else:
                content.extend(got)
        raw_stop = body.get("stopReason")
        stop = STOPS.get(str(raw_stop), "end_turn")
        raw: dict[str, Any] = {"stopReason": raw_stop, "stop_reason": stop}
        if kept:
            raw["kept"] = kept
            if not content:
                raw["placeholder"] = True  # the empty text finish_message adds stands for nothing
        return finish_message(
            ctx,
            PROVIDER,
            content,
            served_by=None,  # the response names no model: the requested one served it
            tokens=tokens_of(body.get("usage")),
            raw=raw,
            adapter=self.name,
            status="error" if stop == "error" else "complete",
        )

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        st = _ConverseStream(self, context)
        if context.request_id is not None:
            self._live()[context.request_id] = st
        return st.run(chunks)

    def _live(self) -> dict[str, _ConverseStream]:
        live: dict[str, _ConverseStream] | None = self.__dict__.get("_live_streams")
        if live is None:
            live = self.__dict__["_live_streams"] = {}
        return live

    def cancel(self, request_id: str) -> bool:
        """Contract §3.1 / §5.3: the harness aborts the HTTP request (this adapter owns no
        transport); the stream of `request_id`, at its next step, ends each open tool call
        and its message with stop_reason `cancelled`, then stops. True while it is in flight,
        False once it is over or unknown; idempotent."""
        st = self._live().get(request_id)
        if st is None or st.over or st.completed:
            return False
        st.cancelled = True
        return True

    # estimates --------------------------------------------------------------------------

    def estimate_input_tokens(
        self, messages: list[Message], tools: list[ToolDefinition], model: str | None = None
    ) -> int:
        """A heuristic (contract §3.1: "uses local tokenizer or heuristic"). Converse serves
        many model families, which count differently; `model` (turnspec's optional estimator
        keyword) names the family: Claude and Nova add a tool-use prompt of some 340 tokens
        when tools are declared, Llama about 100; gpt-oss adds a fixed preamble of about 60;
        Claude counts an image as width x height / 750, the others about 1,600 tokens; only
        Claude counts reasoning sent back, and DeepSeek and Qwen leave earlier replies out
        (calibrated on recorded usage). Kept wire blocks (documents, videos) count too."""
        fam = _family(model)
        total = 60 if fam == "openai" else 0
        for m in messages:
            total += 3
            if fam in ("deepseek", "qwen") and m.get("role") == "assistant":
                continue  # calibrated on recorded usage: their chat templates leave earlier replies out
            for b in m.get("content") or []:
                total += _block_tokens(b, fam)
            for _, blk in self._kept_items(m):
                total += _wire_tokens(blk)
        if tools:
            total += {"anthropic": 330, "amazon": 330, "meta": 100}.get(fam, 10)
        for t in tools:
            total += text_tokens(str(t.get("name", "")) + " " + str(t.get("description", "")))
            total += json_tokens(t.get("input_schema", {})) + 8
        return total

    def _kept_items(self, m: Message) -> Iterator[tuple[int, dict[str, Any]]]:
        raw = self.own_raw(m)
        for key in ("kept", "result_kept"):
            for item in raw.get(key) or []:
                if isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict):
                    yield item[0], item[1]


def _family(model: str | None) -> str:
    """`bedrock:us.anthropic.claude-...` -> `anthropic` (a Region prefix skipped)."""
    name = (model or "").split(":", 1)[-1].split("/")[-1]
    parts = name.split(".")
    if parts and parts[0] in ("us", "eu", "apac", "global", "jp", "au", "us-gov") and len(parts) > 1:
        parts = parts[1:]
    return parts[0] if parts else ""


def _wire_tokens(blk: Mapping[str, Any]) -> int:
    """A kept wire block's estimate: a document by its bytes (4 per token), a video ~1,800."""
    for kind in ("document", "video"):
        item = blk.get(kind)
        if isinstance(item, dict):
            src = item.get("source")
            data = src.get("bytes") if isinstance(src, dict) else None
            if kind == "video":
                return 1800
            if item.get("format") in ("txt", "md", "html", "csv") and isinstance(data, str):
                return 30 + (len(data) * 3 // 4) // 4  # plain text: about 4 bytes a token
            return 60  # a binary document: its extracted text, unknown here
    return 0


def _block_tokens(b: Mapping[str, Any], fam: str) -> int:
    t = b.get("type")
    if t == "text":
        return text_tokens(str(b.get("text", "")))
    if t == "thinking":
        return text_tokens(str(b.get("text", ""))) if fam == "anthropic" else 0
    if t == "tool_use":
        return json_tokens(b.get("input", {})) + text_tokens(str(b.get("name", ""))) + 6
    if t == "tool_result":
        return 6 + sum(_block_tokens(x, fam) for x in b.get("content") or [])
    if t == "image":
        size = image_block_size(b)
        if fam != "anthropic" or size is None:
            return 1600
        w, h = size
        return min(1600, max(85, (w * h) // 750))  # Claude's vision docs: tokens = width * height / 750
    return 0


class _ConverseStream(CanonicalStream):
    """ConverseStream event-stream frames -> canonical events (contract §5.2)."""

    def __init__(self, adapter: TheirBedrockAdapter, ctx: RequestContext) -> None:
        self.a, self.ctx = adapter, ctx
        super().__init__(ctx)
        self.index: dict[int, int] = {}  # wire contentBlockIndex -> canonical content index
        self.server_side: set[Any] = set()  # wire indices of a server tool's call or result
        self.open_tools: dict[int, str] = {}  # canonical index -> accumulated input JSON
        self.stop: str | None = None
        self.raw_stop: Any = None
        self.done = False
        self.cancelled = self.over = False

    def run(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        """The events, cut short by `cancel` (checked each time the consumer resumes)."""
        try:
            for e in self.events(chunks):
                yield e
                if self.cancelled and not self.completed:
                    yield from self.end_open_calls()
                    self.done = True
                    yield self.ev(
                        "message_complete", stop_reason="cancelled", final_content=self.content, usage=self.usage
                    )
                    return
        finally:
            self.over = True
            live = self.a._live()
            if self.ctx.request_id is not None and live.get(self.ctx.request_id) is self:
                del live[self.ctx.request_id]

    def _frames(self, chunks: Iterable[bytes | str]) -> Iterator[EventStreamMessage]:
        dec = EventStreamDecoder()
        try:
            for c in chunks:
                if isinstance(c, str):
                    c = c.encode("latin-1")  # a text chunk of a binary body: its code points are its bytes
                yield from dec.feed(c)
            yield from dec.close()
        except FramingError as exc:
            raise WireFormatError(f"event stream: {exc.reason}", event=exc.event, offset=exc.offset) from None
        except UnicodeEncodeError:
            raise WireFormatError("event stream: a text chunk holds characters above U+00FF") from None

    def _events(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        for fr in self._frames(chunks):
            kind = fr.message_type
            payload: Any = None
            if fr.payload:
                try:
                    payload = json.loads(fr.payload)
                except (ValueError, UnicodeDecodeError):
                    if kind == "event":
                        raise WireFormatError("frame payload is not JSON", event=fr.index, offset=fr.offset) from None
            if kind in ("exception", "error"):
                name = fr.exception_type if kind == "exception" else fr.headers.get(":error-code")
                text = ""
                if isinstance(payload, dict):
                    text = str(payload.get("message") or payload.get("Message") or "")
                if not text and isinstance(fr.headers.get(":error-message"), str):
                    text = str(fr.headers[":error-message"])
                status = payload.get("originalStatusCode") if isinstance(payload, dict) else None
                raise classify(
                    status if isinstance(status, int) else None, str(name or kind), text, self.ctx.request_id
                )
            if kind != "event":
                raise WireFormatError(f"unknown :message-type {kind!r}", event=fr.index, offset=fr.offset)
            if self.done:
                continue
            if not isinstance(payload, dict):
                raise WireFormatError("event payload is not a JSON object", event=fr.index, offset=fr.offset)
            try:
                yield from self.one(str(fr.event_type or ""), payload)
            except WireFormatError as exc:
                if exc.event is None:
                    raise WireFormatError(str(exc), event=fr.index, offset=fr.offset) from None
                raise
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise WireFormatError(
                    f"malformed {fr.event_type} event: {exc!r}", event=fr.index, offset=fr.offset
                ) from None
        if not self.started:
            raise WireFormatError("empty stream: no messageStart")
        if not self.done:
            if self.stop is None:
                raise WireFormatError("stream cut before messageStop")
            yield from self.finish()  # no metadata event: usage unknown (contract §7.2)

    def _start(self) -> Iterator[StreamEvent]:
        if not self.started:
            self.started = True
            yield self.ev("message_start", role="assistant", model=self.ctx.model or f"{PROVIDER}:unknown")

    def _slot(self, wire_index: Any, block: Block) -> int:
        if isinstance(wire_index, bool) or not isinstance(wire_index, int):
            raise WireFormatError("contentBlockIndex is not an integer")
        k = self.index.get(wire_index)
        if k is None:
            k = self.index[wire_index] = len(self.content)
            self.content.append(block)
        return k

    def one(self, name: str, d: dict[str, Any]) -> Iterator[StreamEvent]:
        if name == "messageStart":
            yield from self._start()
            return
        if not self.started:
            raise WireFormatError(f"{name} before messageStart")
        if self.stop is not None and name != "metadata":
            if name.startswith("contentBlock"):
                raise WireFormatError(f"{name} after messageStop")
            return
        if name.startswith("contentBlock") and d.get("contentBlockIndex") in self.server_side:
            return  # the service ran that tool itself: no canonical block (as in the parse)
        if name == "contentBlockStart":
            start = _obj(d.get("start"), "contentBlockStart.start")
            use = start.get("toolUse")
            if "toolResult" in start or (isinstance(use, dict) and use.get("type") == "server_tool_use"):
                self.server_side.add(d.get("contentBlockIndex"))
            elif isinstance(use, dict):
                pid, tname = use.get("toolUseId"), use.get("name")
                if not isinstance(pid, str) or not pid or not isinstance(tname, str):
                    raise WireFormatError("contentBlockStart.toolUse needs a toolUseId and a name")
                cid = self.a.tool_id_map(self.ctx.session_id).canonical_for(pid)
                k = self._slot(d.get("contentBlockIndex"), {"type": "tool_use", "id": cid, "name": tname, "input": {}})
                self.open_tools[k] = ""
                yield self.ev("tool_use_start", content_block_index=k, tool_use_id=cid, tool_name=tname)
        elif name == "contentBlockDelta":
            yield from self.delta(d.get("contentBlockIndex"), _obj(d.get("delta"), "contentBlockDelta.delta"))
        elif name == "contentBlockStop":
            stop_at = self.index.get(d.get("contentBlockIndex"))  # type: ignore[arg-type]
            if stop_at is not None and stop_at in self.open_tools:
                yield from self.end_tool(stop_at)
        elif name == "messageStop":
            yield from self.end_open_calls()
            self.raw_stop = d.get("stopReason")
            self.stop = STOPS.get(str(self.raw_stop), "end_turn")
        elif name == "metadata":
            self.usage = tokens_of(d.get("usage"))
            if self.stop is not None:
                yield from self.finish()
        # an event type this adapter does not know is skipped (forward compatibility)

    def delta(self, wire_index: Any, delta: dict[str, Any]) -> Iterator[StreamEvent]:
        if "text" in delta:
            text = delta["text"]
            if not isinstance(text, str):
                raise WireFormatError("delta.text is not a string")
            k = self._slot(wire_index, {"type": "text", "text": ""})
            blk = self.content[k]
            if blk["type"] != "text":
                raise WireFormatError(f"a text delta for a {blk['type']} block")
            blk["text"] += text
            yield self.ev("text_delta", content_block_index=k, text=text)
        elif "toolUse" in delta:
            frag = _obj(delta["toolUse"], "delta.toolUse").get("input")
            at = self.index.get(wire_index)
            if at is None or at not in self.open_tools or not isinstance(frag, str):
                raise WireFormatError("a toolUse delta for no open tool call")
            k = at
            self.open_tools[k] += frag
            blk = self.content[k]
            yield self.ev("tool_use_input_delta", content_block_index=k, tool_use_id=blk["id"], partial_json=frag)
        elif "reasoningContent" in delta:
            rc = _obj(delta["reasoningContent"], "delta.reasoningContent")
            if "redactedContent" in rc:
                k = self._slot(wire_index, {"type": "redacted_thinking", "data": ""})
                blk = self.content[k]
                if blk["type"] != "redacted_thinking":
                    raise WireFormatError("redactedContent for a block that is not redacted")
                blk["data"] += str(rc["redactedContent"])
                return  # streaming §5.3 has no delta for redacted reasoning: final_content carries it
            k = self._slot(wire_index, {"type": "thinking", "text": "", "signature": None})
            blk = self.content[k]
            if blk["type"] != "thinking":
                raise WireFormatError(f"a reasoning delta for a {blk['type']} block")
            if "text" in rc:
                blk["text"] += str(rc["text"])
                yield self.ev("thinking_delta", content_block_index=k, text=str(rc["text"]))
            if rc.get("signature"):
                blk["signature"] = str(rc["signature"])
                # streaming §5.3: the signature is "populated only on the final delta of the block"
                yield self.ev("thinking_delta", content_block_index=k, text="", signature=blk["signature"])
        # other deltas (citations, images): no canonical stream event

    def end_tool(self, k: int) -> Iterator[StreamEvent]:
        text = self.open_tools.pop(k)
        blk = self.content[k]
        if text.strip() == "":
            value: Any = {}
        else:
            try:
                value = json.loads(text)
            except ValueError:
                raise WireFormatError(f"tool call {blk['name']}: streamed input is not JSON") from None
        if not isinstance(value, dict):
            raise WireFormatError(f"tool call {blk['name']}: streamed input is not a JSON object")
        blk["input"] = value
        yield self.ev("tool_use_end", content_block_index=k, tool_use_id=blk["id"], final_input=value)

    def end_open_calls(self) -> Iterator[StreamEvent]:
        """Contract §5.2.2 / §5.3.3: each open call ends with what parses, else {}."""
        for k in sorted(self.open_tools):
            text = self.open_tools.pop(k)
            try:
                value = json.loads(text) if text.strip() else {}
            except ValueError:
                value = {}
            value = value if isinstance(value, dict) else {}
            blk = self.content[k]
            blk["input"] = value
            yield self.ev("tool_use_end", content_block_index=k, tool_use_id=blk["id"], final_input=value)

    def finish(self) -> Iterator[StreamEvent]:
        self.done = True
        if self.usage is None:
            self.usage = estimated_usage(self.a.name, self.a.log, self.ctx, self.content)
        if not self.content:
            self.content.append({"type": "text", "text": ""})
            yield self.ev("text_delta", content_block_index=0, text="")
        yield self.ev(
            "message_complete", stop_reason=self.stop or "end_turn", final_content=self.content, usage=self.usage
        )


__all__ = ["TheirBedrockAdapter"]
