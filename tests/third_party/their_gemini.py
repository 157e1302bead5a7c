"""An honest Gemini API adapter (`models.generateContent` / `models.streamGenerateContent`)
written by a third party (issue 25) from the metis contract (provider-adapter-contract.md
§3.3, §4.1, §4.4, §5.2, §6.2, §6.5, §7.1, §7.2), the canonical format (§4.2, §6.2, §6.5,
§7.3) and Google's documentation, never from turnspec's reference adapter. Its choices
differ where the docs allow:

- `systemInstruction` carries one text part per canonical system block (several SYSTEM
  messages keep their blocks in order, contract §4.1.2); it has no `role`;
- tools go as one `functionDeclarations` tool with `parametersJsonSchema` (the docs: "the
  parameters of this function in JSON Schema format"), descriptions omitted when empty;
- a `functionCall` the API issued an id for keeps it, in `functionCall.id` and the matching
  `functionResponse.id`; a call the API gave no id gets none back (the docs pair id-less
  responses by name and order), and its canonical id is a fresh `tu_<ULID>`;
- a tool result goes back as `functionResponse.response = {"output": text}`, or
  `{"error": text}` when `is_error` (function-calling docs: "Use 'output' key to specify
  function output and 'error' key to specify error details");
- a `thoughtSignature` on a part that is not a thought (a signed functionCall or answer)
  becomes a thinking block with empty text carrying the signature, placed right before that
  part's block; it goes back on the part that follows it (thought-signatures docs: "pass
  it back exactly as received", on the part it came with);
- thinking from another provider is dropped with a WARN (Gemini cannot verify it);
- errors carry the core's request id; Google's `status` and `message` are in the text;
- enum fields are read by name or by their proto3 JSON number.

Sources: ai.google.dev/api/generate-content, /gemini-api/docs/text-generation,
/function-calling, /thinking, /thought-signatures, /image-understanding, /caching,
/troubleshooting; protobuf.dev/programming-guides/json.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar
from urllib.parse import urlsplit

from their_common import (  # a sibling module: `turnspec conform` loads this file by path
    CanonicalStream,
    finish_message,
    frame_json,
    mint_ulid,
    plain_message,
    sse_frames,
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

PROVIDER = "gemini"
IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/heic", "image/heif")
UNISSUED = "unissued:"  # provider-side key of a call the API gave no id (never sent)

# Candidate.FinishReason (generate-content reference); numbers from the proto (proto3 JSON
# accepts an enum's name or its integer value)
FINISH_NUMBERS = {
    0: "FINISH_REASON_UNSPECIFIED",
    1: "STOP",
    2: "MAX_TOKENS",
    3: "SAFETY",
    4: "RECITATION",
    5: "OTHER",
    6: "BLOCKLIST",
    7: "PROHIBITED_CONTENT",
    8: "SPII",
    9: "MALFORMED_FUNCTION_CALL",
}
# a reason whose candidate ended without a usable answer because of a faulty call is an
# error; content filters end the turn (the contract's StopReason has no refusal)
FAILED_CALLS = frozenset(
    {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MISSING_THOUGHT_SIGNATURE"}
)

# google.rpc status names (troubleshooting page) -> contract §6.2 classes
STATUS_CLASSES: dict[str, type[AdapterError]] = {
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
OVERFLOW = re.compile(r"token count.*exceeds|exceeds the maximum number of tokens|context", re.I)


def stop_of(reason: Any, has_calls: bool) -> str:
    name = FINISH_NUMBERS.get(reason, str(reason)) if isinstance(reason, int) else str(reason or "")
    if name == "MAX_TOKENS":
        return "max_tokens"
    if name in FAILED_CALLS:
        return "error"
    return "tool_use" if has_calls else "end_turn"


def _retry_delay(details: Any) -> float | None:
    for d in details if isinstance(details, list) else []:
        if isinstance(d, dict) and str(d.get("@type", "")).endswith("google.rpc.RetryInfo"):
            m = re.fullmatch(r"(\d+(?:\.\d+)?)s", str(d.get("retryDelay", "")))
            if m:
                return float(m.group(1))
    return None


def classify(status: int | None, body: Any, core_request_id: str | None) -> AdapterError:
    err = body.get("error") if isinstance(body, dict) else None
    err = err if isinstance(err, dict) else {}
    gstatus = str(err.get("status") or "")
    text = str(err.get("message") or "")
    code = err.get("code")
    status = status if status is not None else (code if isinstance(code, int) else None)
    reasons = {str(d.get("reason")) for d in err.get("details") or [] if isinstance(d, dict)}
    message = f"gemini {gstatus or 'error'} ({status}): {text or 'no message'}"
    cls: type[AdapterError]
    if "API_KEY_INVALID" in reasons:
        cls = AuthError  # a 400 whose body says the key is bad (contract §6.2: adjust by body)
    elif gstatus == "INVALID_ARGUMENT" and OVERFLOW.search(text):
        cls = ContextOverflowError  # "Some providers use 400 with body indicating overflow"
    elif gstatus in STATUS_CLASSES:
        cls = STATUS_CLASSES[gstatus]
    elif status in (401, 403):
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
    retryable = cls in (RateLimitError, ServerError, NetworkError)
    if cls is RateLimitError:
        return RateLimitError(
            message,
            retry_after_seconds=_retry_delay(err.get("details")),
            provider_status=status,
            request_id=core_request_id,
            retryable=True,
        )
    return cls(message, provider_status=status, request_id=core_request_id, retryable=retryable)


def tokens_of(u: Any) -> dict[str, int] | None:
    """usageMetadata -> TokenUsage (contract §7.1). promptTokenCount includes the cached
    tokens (caching docs), candidatesTokenCount excludes thoughtsTokenCount."""
    if not isinstance(u, dict):
        return None
    cached = int(u.get("cachedContentTokenCount") or 0)
    prompt = int(u.get("promptTokenCount") or 0) + int(u.get("toolUsePromptTokenCount") or 0)
    output = int(u.get("candidatesTokenCount") or 0) + int(u.get("thoughtsTokenCount") or 0)
    return token_usage(max(0, prompt - cached), output, cached, 0)


def _get(obj: Mapping[str, Any], camel: str) -> Any:
    """A proto-JSON field by its camelCase or snake_case name."""
    if camel in obj:
        return obj[camel]
    return obj.get(re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), camel))


class TheirGeminiAdapter(BaseAdapter):
    """Canonical <-> Gemini API `generateContent` / `streamGenerateContent`."""

    name: ClassVar[str] = "their-gemini"
    provider: ClassVar[str] = PROVIDER
    wire_api: ClassVar[str] = "gemini-generate-content"
    provider_tool_id: ClassVar[re.Pattern[str]] = re.compile(r"^\S+$")
    capabilities: ClassVar[Mapping[str, Any]] = {
        "supports_thinking": True,
        "supports_images": True,
        "supports_tools": True,
        "supports_system_prompt": True,
        "supports_structured_output": True,
        "supports_streaming": True,
        "supports_streaming_tool_calls": False,  # calls arrive whole, never in fragments
        "supports_parallel_tool_calls": True,
        "supports_prompt_caching": True,
        "supports_system_messages_in_list": False,
        "max_context_tokens": 1048576,
        "max_output_tokens": 65536,
        "accepted_image_media_types": list(IMAGE_TYPES),
    }

    def new_provider_tool_id(self) -> str:
        return "gx-" + mint_ulid().lower()

    def call_id(self, sid: str, wire_id: Any) -> str:
        """The canonical id of a functionCall: the session map's for an issued id, a fresh
        one for an id-less call (remembered under a key that is never sent)."""
        ids = self.tool_id_map(sid)
        if isinstance(wire_id, str) and wire_id:
            return ids.canonical_for(wire_id)
        cid = new_tool_id()
        ids.bind(cid, UNISSUED + cid)
        return cid

    def wire_id(self, sid: str, canonical: str) -> str | None:
        pid = self.tool_id_map(sid).provider_for(canonical)
        return None if pid.startswith(UNISSUED) else pid

    # canonical -> wire ----------------------------------------------------------------

    def to_wire(self, messages: list[Message], tools: list[ToolDefinition], options: AdapterOptions) -> WireRequest:
        system_parts: list[dict[str, Any]] = []
        contents: list[dict[str, Any]] = []
        names: dict[str, str] = {}  # canonical call id -> function name (functionResponse needs it)
        for m in messages:
            for b in m.get("content") or []:
                if b.get("type") == "tool_use":
                    names[str(b.get("id"))] = str(b.get("name"))
        for m in messages:
            role = m.get("role")
            if role == "system":
                for k, b in enumerate(m.get("content") or []):
                    if b.get("type") == "text":
                        system_parts.append({"text": b["text"]})
                    else:
                        self.drop(m, k, str(b.get("type")), "Gemini's systemInstruction holds text parts only")
                continue
            parts = self._parts(m, names)
            if not parts:
                continue
            wire_role = "model" if role == "assistant" else "user"
            if contents and contents[-1]["role"] == wire_role:
                contents[-1]["parts"].extend(parts)  # results of parallel calls share one user content
            else:
                contents.append({"role": wire_role, "parts": parts})
        body: dict[str, Any] = {"contents": contents}
        if system_parts:
            body["systemInstruction"] = {"parts": system_parts}
        mine = options.provider_raw.get(self.name) if isinstance(options.provider_raw, Mapping) else None
        openapi = set((mine or {}).get("openapi_parameters") or []) if isinstance(mine, Mapping) else set()
        decls = []
        for t in tools:
            d: dict[str, Any] = {"name": t["name"]}
            if t.get("description"):
                d["description"] = t["description"]
            # a schema this adapter read from `parameters` (an OpenAPI Schema object, kept in
            # provider_raw, canonical §6.5) goes back there; any other is JSON Schema
            key = "parameters" if t["name"] in openapi else "parametersJsonSchema"
            d[key] = t.get("input_schema") or {"type": "object"}
            decls.append(d)
        wire_tools: list[dict[str, Any]] = [{"functionDeclarations": decls}] if decls else []
        wire_tools += [dict(t) for t in options.provider_tools]
        if len(wire_tools) == 1 and isinstance(mine, Mapping) and mine.get("tools_object"):
            body["tools"] = wire_tools[0]  # kept in the single-object form it was read in
        elif wire_tools:
            body["tools"] = wire_tools
        gen: dict[str, Any] = {}
        if options.max_output_tokens is not None:
            gen["maxOutputTokens"] = options.max_output_tokens
        if options.temperature is not None:
            gen["temperature"] = options.temperature
        if options.stop_sequences:
            gen["stopSequences"] = list(options.stop_sequences)
        if options.output_schema is not None:
            gen["responseMimeType"] = "application/json"
            gen["responseJsonSchema"] = dict(options.output_schema)
        extra = dict(options.extra)
        more = extra.pop("generationConfig", None)
        if isinstance(more, Mapping):
            gen = {**dict(more), **gen}
        if gen:
            body["generationConfig"] = gen
        body.update(extra)
        method = "streamGenerateContent?alt=sse" if options.stream else "generateContent"
        path = f"/v1beta/models/{options.wire_model}:{method}"
        return WireRequest("POST", path, {"content-type": "application/json"}, body)

    def _parts(self, m: Message, names: Mapping[str, str]) -> list[dict[str, Any]]:
        role, sid = m["role"], str(m["session_id"])
        mine = (m.get("metadata") or {}).get("provider") == PROVIDER
        out: list[dict[str, Any]] = []
        pending_sig: str | None = None

        def add(part: dict[str, Any]) -> None:
            nonlocal pending_sig
            if pending_sig is not None:
                part["thoughtSignature"] = pending_sig
                pending_sig = None
            out.append(part)

        for k, b in enumerate(m.get("content") or []):
            t = b.get("type")
            if t == "text" and role in ("user", "assistant"):
                add({"text": b["text"]})
            elif t == "image" and role == "user":
                img = self._image(m, k, b)
                if img is not None:
                    add(img)
            elif t == "tool_use" and role == "assistant":
                call: dict[str, Any] = {"name": b["name"], "args": b.get("input") or {}}
                pid = self.wire_id(sid, str(b["id"]))
                if pid is not None:
                    call["id"] = pid
                add({"functionCall": call})
            elif t == "tool_result" and role == "tool":
                add(self._result(m, k, b, names))
            elif t == "thinking" and role == "assistant":
                if not mine:
                    self.drop(m, k, "thinking", "Gemini cannot verify another provider's reasoning")
                elif b.get("text"):
                    part: dict[str, Any] = {"text": b["text"], "thought": True}
                    if b.get("signature"):
                        part["thoughtSignature"] = b["signature"]
                    out.append(part)
                elif b.get("signature"):
                    pending_sig = str(b["signature"])  # rides on the part that follows
            else:
                self.drop(m, k, str(t), f"Gemini has no part for a {t} block in a {role} turn")
        if pending_sig is not None:
            out.append({"text": "", "thoughtSignature": pending_sig})  # a trailing signed empty part
        return out

    def _image(self, m: Message, k: int, b: Block) -> dict[str, Any] | None:
        src = b.get("source") or {}
        kind, media = src.get("kind"), b.get("media_type")
        if kind == "base64" and media in IMAGE_TYPES:
            return {"inlineData": {"mimeType": media, "data": src["data"]}}
        if kind == "url":
            fd: dict[str, Any] = {"fileUri": src["data"]}
            if media:
                fd["mimeType"] = media
            return {"fileData": fd}
        self.drop(m, k, "image", f"Gemini takes inline {', '.join(IMAGE_TYPES)} or a file URI, not {kind} {media}")
        return None

    def _result(self, m: Message, k: int, b: Block, names: Mapping[str, str]) -> dict[str, Any]:
        texts: list[str] = []
        for x in b.get("content") or []:
            if x.get("type") == "text":
                texts.append(str(x["text"]))
            else:
                self.drop(m, k, str(x.get("type")), "a Gemini functionResponse carries JSON, not images")
        cid = str(b["tool_use_id"])
        text = "\n".join(texts)
        # the docs: `response` is "the function response in JSON object format"; a result
        # whose text is a JSON object goes as that object, any other text under "output"
        # (or "error" when it failed: "Use 'output' key to specify function output and
        # 'error' key to specify error details")
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict) and (not b.get("is_error") or "error" in value):
            response: dict[str, Any] = value
        else:
            response = {"error" if b.get("is_error") else "output": text}
        fr: dict[str, Any] = {"name": names.get(cid, "unknown_function"), "response": response}
        pid = self.wire_id(str(m["session_id"]), cid)
        if pid is not None:
            fr["id"] = pid
        return {"functionResponse": fr}

    # wire -> canonical (requests) ------------------------------------------------------

    def from_wire_request(
        self, body: WireBody, *, session_id: str | None = None, url: str | None = None
    ) -> ParsedRequest:
        """`url` (turnspec's optional reader keyword) names the model: Gemini keeps it in the
        path (`/models/{model}:generateContent`), not the body."""
        try:
            return self._from_wire_request(body, session_id, url)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise WireFormatError(f"malformed GenerateContentRequest: {exc!r}") from None

    def _from_wire_request(self, body: WireBody, session_id: str | None, url: str | None) -> ParsedRequest:
        if not isinstance(body, dict):
            raise WireFormatError("a Gemini request body is a JSON object")
        sid = session_id or "sess_" + mint_ulid()
        out: list[Message] = []
        si = _get(body, "systemInstruction")
        if isinstance(si, str):
            out.append(plain_message(sid, "system", [{"type": "text", "text": si}], {}))
        elif isinstance(si, dict):
            texts = [
                {"type": "text", "text": str(p["text"])}
                for p in si.get("parts") or []
                if isinstance(p, dict) and "text" in p
            ]
            if texts:
                out.append(plain_message(sid, "system", texts, {}))
        open_calls: dict[str, list[str]] = {}  # name -> canonical ids of id-less calls not yet answered
        found = re.search(r"/models/([^/:?]+):", url or "")
        model = f"{PROVIDER}:{found.group(1) if found else 'unknown'}"
        contents = body.get("contents")
        for c in contents if isinstance(contents, list) else []:
            if not isinstance(c, dict):
                continue
            is_model = c.get("role") == "model"
            plain: list[Block] = []

            def flush(is_model: bool = is_model) -> None:
                nonlocal plain
                if plain:
                    meta: dict[str, Any] = {}
                    if is_model:
                        meta = {
                            "model": model,
                            "provider": PROVIDER,
                            "routing": {"mode": "default", "chosen_model": model, "reason": "read from a request"},
                        }
                    out.append(plain_message(sid, "assistant" if is_model else "user", plain, meta))
                    plain = []

            for p in c.get("parts") or []:
                if not isinstance(p, dict):
                    continue
                fr = _get(p, "functionResponse")
                if isinstance(fr, dict):
                    flush()
                    name = str(fr.get("name"))
                    if isinstance(fr.get("id"), str) and fr["id"]:
                        cid = self.tool_id_map(sid).canonical_for(fr["id"])
                    elif open_calls.get(name):
                        cid = open_calls[name].pop(0)
                    else:
                        cid = self.call_id(sid, None)
                    tr = self._result_block(cid, fr.get("response"))
                    out.append(plain_message(sid, "tool", [tr], {"parent_tool_use_id": cid}))
                    continue
                blocks = self._part_blocks(sid, p, keep_empty=True)
                for blk in blocks:
                    if blk["type"] == "tool_use" and not isinstance((_get(p, "functionCall") or {}).get("id"), str):
                        open_calls.setdefault(str(blk["name"]), []).append(blk["id"])
                plain.extend(blocks)
            flush()

        tools: list[ToolDefinition] = []
        provider_tools: list[dict[str, Any]] = []
        openapi: list[str] = []  # declarations whose schema came as `parameters` (OpenAPI Schema)
        wire_tools = body.get("tools")
        one_tool = isinstance(wire_tools, dict)  # a single Tool object where the API documents a list
        for t in [wire_tools] if one_tool else wire_tools if isinstance(wire_tools, list) else []:
            if not isinstance(t, dict):
                continue
            decls = _get(t, "functionDeclarations")
            if isinstance(decls, list):
                for d in decls:
                    if not isinstance(d, dict):
                        continue
                    schema = _get(d, "parametersJsonSchema")
                    if schema is None and isinstance(d.get("parameters"), dict):
                        schema = d["parameters"]
                        openapi.append(str(d.get("name")))
                    desc = d.get("description")
                    tools.append(
                        {
                            "name": d.get("name"),
                            "description": desc if isinstance(desc, str) else "",
                            "input_schema": schema if isinstance(schema, dict) else {"type": "object"},
                            "side_effects": "execute",  # the wire does not say: the most cautious value
                        }
                    )
                rest = {k: v for k, v in t.items() if k not in ("functionDeclarations", "function_declarations")}
                if rest:
                    provider_tools.append(rest)
            else:
                provider_tools.append(t)
        gen = _get(body, "generationConfig")
        gen = dict(gen) if isinstance(gen, dict) else {}
        max_tokens = _get(gen, "maxOutputTokens")
        temperature = gen.get("temperature")
        stops = _get(gen, "stopSequences")
        schema = _get(gen, "responseJsonSchema")
        if schema is None:
            schema = _get(gen, "responseSchema")
        for key in (
            "maxOutputTokens",
            "max_output_tokens",
            "temperature",
            "stopSequences",
            "stop_sequences",
            "responseJsonSchema",
            "response_json_schema",
            "responseSchema",
            "response_schema",
            "responseMimeType",
            "response_mime_type",
        ):
            gen.pop(key, None)
        known = {
            "contents",
            "systemInstruction",
            "system_instruction",
            "tools",
            "generationConfig",
            "generation_config",
        }
        extra = {k: v for k, v in body.items() if k not in known}
        if gen:
            extra["generationConfig"] = gen
        raw: dict[str, Any] = {}
        if openapi:
            raw["openapi_parameters"] = openapi
        if one_tool:
            raw["tools_object"] = True
        options = AdapterOptions(
            model=model,
            # the method in the URL asks for the stream (`:streamGenerateContent`), as it names the model
            stream=":streamGenerateContent" in urlsplit(url or "").path,
            max_output_tokens=max_tokens if isinstance(max_tokens, int) else None,
            temperature=temperature if isinstance(temperature, int | float) else None,
            stop_sequences=tuple(stops or ()),
            output_schema=schema if isinstance(schema, dict) else None,
            extra=extra,
            provider_tools=tuple(provider_tools),
            provider_raw={self.name: raw} if raw else {},
        )
        return ParsedRequest(out, tools, options)

    def _result_block(self, cid: str, response: Any) -> Block:
        is_error = isinstance(response, dict) and "error" in response
        value: Any = response
        if isinstance(response, dict) and len(response) == 1:
            (only,) = response.values()
            if isinstance(only, str) and set(response) in ({"output"}, {"error"}):
                value = only  # the documented wrapper around a plain text result
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        tr: Block = {"type": "tool_result", "tool_use_id": cid, "content": [{"type": "text", "text": text}]}
        if is_error:
            tr["is_error"] = True
        return tr

    def _part_blocks(self, sid: str, p: Mapping[str, Any], *, keep_empty: bool = False) -> list[Block]:
        """One wire part -> its canonical blocks: a thought is a thinking block (its signature
        on it); any other signed part is preceded by an empty thinking block carrying the
        signature; a signed empty text part is that carrier alone."""
        sig = _get(p, "thoughtSignature")
        sig = sig if isinstance(sig, str) and sig else None
        if p.get("thought") is True:
            return [{"type": "thinking", "text": str(p.get("text", "")), "signature": sig}]
        lead: list[Block] = [{"type": "thinking", "text": "", "signature": sig}] if sig else []
        call = _get(p, "functionCall")
        if isinstance(call, dict):
            args = call.get("args")
            if args is not None and not isinstance(args, dict):
                raise WireFormatError(f"functionCall {call.get('name')}: args is not an object")
            cid = self.call_id(sid, call.get("id"))
            return [*lead, {"type": "tool_use", "id": cid, "name": call.get("name"), "input": args or {}}]
        if "text" in p:
            text = str(p["text"])
            # an empty text part adds nothing (a stream's last chunk often has one); signed,
            # it is the signature's carrier alone
            if text == "" and (sig or not keep_empty):
                return lead
            return [*lead, {"type": "text", "text": text}]
        inline = _get(p, "inlineData")
        if isinstance(inline, dict):
            media = str(_get(inline, "mimeType") or "")
            return [
                *lead,
                {
                    "type": "image",
                    "source": {"kind": "base64", "data": str(inline.get("data", ""))},
                    "media_type": media,
                },
            ]
        fd = _get(p, "fileData")
        if isinstance(fd, dict):
            media = str(_get(fd, "mimeType") or "image/jpeg")
            return [
                *lead,
                {"type": "image", "source": {"kind": "url", "data": str(_get(fd, "fileUri"))}, "media_type": media},
            ]
        return lead  # executableCode etc.: no canonical form

    # wire -> canonical (responses) -----------------------------------------------------

    def from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        try:
            return self._from_wire_response(response, request_context)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            # hostile input: one located line, never a traceback
            raise WireFormatError(f"malformed GenerateContentResponse: {exc!r}") from None

    def _from_wire_response(self, response: WireResponse | WireBody, request_context: RequestContext) -> Message:
        resp = response if isinstance(response, WireResponse) else WireResponse(response)
        body = resp.body
        if resp.status >= 400 or (isinstance(body, dict) and "error" in body and "candidates" not in body):
            raise classify(resp.status, body, request_context.request_id)
        if not isinstance(body, dict):
            raise WireFormatError("a GenerateContentResponse is a JSON object")
        sid = request_context.session_id
        cands = body.get("candidates")
        if cands is not None and not isinstance(cands, list):
            raise WireFormatError("candidates is not a list")
        raw: dict[str, Any] = {"responseId": body.get("responseId")}
        content: list[Block] = []
        if isinstance(cands, list) and cands:
            cand = cands[0]
            if not isinstance(cand, dict):
                raise WireFormatError("candidates[0] is not an object")
            parts = (cand.get("content") or {}).get("parts") or []
            if not isinstance(parts, list):
                raise WireFormatError("candidates[0].content.parts is not a list")
            for p in parts:
                if not isinstance(p, dict):
                    raise WireFormatError("a part is not an object")
                content.extend(self._part_blocks(sid, p))
            reason = cand.get("finishReason")
            raw["finishReason"] = reason
            raw["stop_reason"] = stop_of(reason, any(b["type"] == "tool_use" for b in content))
        else:
            fb = _get(body, "promptFeedback")
            raw["blockReason"] = _get(fb, "blockReason") if isinstance(fb, dict) else None
            raw["stop_reason"] = "error"
        served = body.get("modelVersion")
        return finish_message(
            request_context,
            PROVIDER,
            content,
            served_by=served if isinstance(served, str) else None,
            tokens=tokens_of(_get(body, "usageMetadata")),
            raw=raw,
            adapter=self.name,
            # canonical §4.3 MessageStatus: ERROR "generation failed" (a blocked prompt, a
            # malformed call): the turn's stop reason is `error`
            status="error" if raw["stop_reason"] == "error" else "complete",
        )

    def stream_response(self, chunks: Iterable[bytes | str], context: RequestContext) -> Iterator[StreamEvent]:
        return _GeminiStream(self, context).events(chunks)

    # estimates --------------------------------------------------------------------------

    def estimate_input_tokens(
        self, messages: list[Message], tools: list[ToolDefinition], model: str | None = None
    ) -> int:
        # calibrated on recorded usageMetadata: Gemini counts a function declaration's
        # schema at about half its JSON text; Gemini 3 models count a thought signature
        # sent back as input (about one token per seven base64 characters), 2.x models do
        # not (`model` is turnspec's optional estimator keyword)
        signed = "gemini-3" in (model or "")
        total = 0
        for m in messages:
            total += 2
            for b in m.get("content") or []:
                total += _block_tokens(b, signed)
        for t in tools:
            total += text_tokens(str(t.get("name", "")) + " " + str(t.get("description", "")))
            total += json_tokens(t.get("input_schema", {})) // 2 + 10
        return total


def _block_tokens(b: Mapping[str, Any], signed: bool) -> int:
    t = b.get("type")
    if t == "text":
        return text_tokens(str(b.get("text", "")))
    if t == "thinking":
        # recorded promptTokenCount leaves thought-summary text sent back out
        return len(str(b.get("signature") or "")) // 7 if signed else 0
    if t == "tool_use":
        return json_tokens(b.get("input", {})) + text_tokens(str(b.get("name", ""))) + 4
    if t == "tool_result":
        return 4 + sum(_block_tokens(x, signed) for x in b.get("content") or [])
    if t == "image":
        return 258  # image-understanding docs: an image up to 384 px a side is 258 tokens
    return 0


def _json_array_items(chunks: Iterable[bytes | str], first: str) -> Iterator[tuple[int, Any]]:
    """The elements of a JSON array streamed element by element (streamGenerateContent
    without `alt=sse`), each with its 0-based position."""
    import codecs  # only the JSON-array framing decodes bytes itself

    decoder = json.JSONDecoder()
    dec = codecs.getincrementaldecoder("utf-8")()
    buf = first
    index = 0
    state = "open"  # expecting "[", then items separated by ","; "done" after "]"

    def feed() -> Iterator[tuple[int, Any]]:
        nonlocal buf, index, state
        while True:
            buf = buf.lstrip()
            if not buf:
                return
            if state == "open":
                if buf[0] != "[":
                    raise WireFormatError("a JSON-array stream starts with '['", event=0)
                buf, state = buf[1:], "item"
            elif state == "sep":
                if buf[0] == ",":
                    buf, state = buf[1:], "item"
                elif buf[0] == "]":
                    buf, state = buf[1:], "done"
                else:
                    raise WireFormatError(f"expected ',' or ']' after element {index - 1}", event=index)
            elif state == "item":
                if buf[0] == "]" and index == 0:
                    buf, state = buf[1:], "done"
                    continue
                try:
                    value, end = decoder.raw_decode(buf)
                except ValueError:
                    return  # incomplete: wait for more
                buf = buf[end:]
                yield index, value
                index += 1
                state = "sep"
            else:
                raise WireFormatError("data after the end of the JSON array", event=index)

    yield from feed()
    for chunk in chunks:
        try:
            buf += dec.decode(chunk) if isinstance(chunk, bytes) else chunk
        except UnicodeDecodeError as exc:
            raise WireFormatError(f"stream is not UTF-8: {exc.reason}", event=index) from None
        yield from feed()
    if buf.strip():
        try:
            json.loads(buf)
        except ValueError as exc:
            raise WireFormatError(f"element {index} is not JSON ({exc})", event=index) from None
    if state != "done":
        raise WireFormatError("stream cut before its end (no closing ']')", event=index)


class _GeminiStream(CanonicalStream):
    """GenerateContentResponse chunks -> canonical events (contract §5.2)."""

    def __init__(self, adapter: TheirGeminiAdapter, ctx: RequestContext) -> None:
        self.a, self.ctx = adapter, ctx
        super().__init__(ctx)
        self.done = False
        self.open_text: str | None = None  # "text" / "thinking": the block a delta may extend

    def finish(self, stop: str) -> Iterator[StreamEvent]:
        """The last event; a turn with no content stores one empty text block, as the
        non-streamed parse does (a message has at least one block)."""
        self.done = True
        if not self.content:
            self.content.append({"type": "text", "text": ""})
            yield self.ev("text_delta", content_block_index=0, text="")
        yield self.ev("message_complete", stop_reason=stop, final_content=self.content, usage=self.usage)

    def _items(self, chunks: Iterable[bytes | str]) -> Iterator[tuple[int, int | None, Any]]:
        it = iter(chunks)
        head = ""
        raw_head: list[bytes | str] = []
        for c in it:
            raw_head.append(c)
            head += c.decode("utf-8", "ignore") if isinstance(c, bytes) else c
            if head.strip():
                break
        rest = (x for part in (raw_head, it) for x in part)
        if head.lstrip().startswith("["):
            for i, v in _json_array_items(rest, ""):
                yield i, None, v
        else:
            for fr in sse_frames(rest):
                yield fr.index, fr.line, frame_json(fr)

    def _events(self, chunks: Iterable[bytes | str]) -> Iterator[StreamEvent]:
        for i, line, d in self._items(chunks):
            if not isinstance(d, dict):
                raise WireFormatError("a stream element is not a JSON object", event=i, line=line)
            if self.done:
                if "error" in d:
                    raise classify(None, d, self.ctx.request_id)
                continue  # nothing after the finishing chunk changes the message
            try:
                yield from self.one(d)
            except WireFormatError as exc:
                if exc.event is None:
                    raise WireFormatError(str(exc), event=i, line=line) from None
                raise
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise WireFormatError(f"malformed chunk: {exc!r}", event=i, line=line) from None
        if not self.started:
            raise WireFormatError("empty stream: no GenerateContentResponse")
        if not self.done:
            raise WireFormatError("stream cut before its end (no finishReason)")

    def one(self, d: dict[str, Any]) -> Iterator[StreamEvent]:
        if "error" in d and "candidates" not in d:
            raise classify(None, d, self.ctx.request_id)
        if not self.started:
            self.started = True
            served = d.get("modelVersion")
            model = f"{PROVIDER}:{served}" if isinstance(served, str) else (self.ctx.model or f"{PROVIDER}:unknown")
            yield self.ev("message_start", role="assistant", model=model)
        u = tokens_of(_get(d, "usageMetadata"))
        if u is not None:
            self.usage = u  # each chunk's usage is the running total
        cands = d.get("candidates")
        if not cands:
            fb = _get(d, "promptFeedback")
            if isinstance(fb, dict) and _get(fb, "blockReason"):
                yield from self.finish("error")
            return
        cand = cands[0]
        for p in (cand.get("content") or {}).get("parts") or []:
            if not isinstance(p, dict):
                raise WireFormatError("a part is not an object")
            yield from self.part(p)
        reason = cand.get("finishReason")
        if reason is not None:
            yield from self.finish(stop_of(reason, any(b["type"] == "tool_use" for b in self.content)))

    def part(self, p: dict[str, Any]) -> Iterator[StreamEvent]:
        for blk in self.a._part_blocks(self.ctx.session_id, p):
            t = blk["type"]
            if t in ("text", "thinking") and blk.get("text") and self.open_text == t and not blk.get("signature"):
                k = len(self.content) - 1  # a further fragment of the open block
                self.content[k]["text"] += blk["text"]
            elif t == "thinking" and blk.get("signature") and self.open_text == "thinking" and blk.get("text"):
                k = len(self.content) - 1  # the signed last fragment of the open thought
                self.content[k]["text"] += blk["text"]
                self.content[k]["signature"] = blk["signature"]
            else:
                k = len(self.content)
                self.content.append(blk)
            if t == "text":
                self.open_text = "text"
                yield self.ev("text_delta", content_block_index=k, text=blk["text"])
            elif t == "thinking":
                self.open_text = "thinking" if blk.get("text") else None
                ev = self.ev("thinking_delta", content_block_index=k, text=blk["text"])
                if blk.get("signature"):
                    ev["signature"] = blk["signature"]
                yield ev
            elif t == "tool_use":
                self.open_text = None
                cid = blk["id"]
                yield self.ev("tool_use_start", content_block_index=k, tool_use_id=cid, tool_name=str(blk["name"]))
                yield self.ev(
                    "tool_use_input_delta",
                    content_block_index=k,
                    tool_use_id=cid,
                    partial_json=json.dumps(blk["input"], ensure_ascii=False),
                )
                yield self.ev("tool_use_end", content_block_index=k, tool_use_id=cid, final_input=blk["input"])
            else:
                self.open_text = None  # an image part: no delta event exists for it


__all__ = ["TheirGeminiAdapter"]
