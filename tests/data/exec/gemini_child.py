#!/usr/bin/env python3
"""A Gemini generateContent / streamGenerateContent adapter speaking turnspec's exec protocol
(version 1), written by an outside author from docs/exec-protocol.md, schemas/exec/v1/,
docs/adapter-guide.md, `turnspec wire show gemini-generate-content`, `turnspec rule TCxxx` and
Google's own Gemini API documentation only. Python 3 and its standard library, nothing else: it
never imports turnspec (it could be written in any language). turnspec keeps it as test data
(tests/test_exec_outside_author.py).

Wire format (ai.google.dev/api/generate-content): POST /v1beta/models/{model}:generateContent,
the model a raw path segment. The request's `contents` are turns of role `user` / `model`, each
a list of `parts` (`text`, `inlineData`, `fileData`, `functionCall`, `functionResponse`;
`thought: true` marks a thought summary; `thoughtSignature` is opaque state that goes back in the
part it came on). The response's `candidates[0].content.parts` are the reply, `finishReason` how
it ended, `promptFeedback.blockReason` a prompt blocked before any candidate, `usageMetadata` the
counts (`promptTokenCount` includes `cachedContentTokenCount`; `thoughtsTokenCount` is output
beside `candidatesTokenCount`). Streams (`:streamGenerateContent`) are server-sent events with
`?alt=sse` and one JSON array of responses without it; an element `{"error": ...}` mid-stream is
Google's error body. Function calls may come without ids: this child mints one from the reply.

How the canonical form holds a thoughtSignature: a `thinking` block of empty text whose
`signature` is the part's, placed right before the block of the part that carried it (a thought
part's own signature is its thinking block's). Rendering puts it back on the next part.
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import sys
import time
import traceback
import urllib.parse
from datetime import datetime, timezone
from typing import Any

NAME = "outside-gemini"
PROVIDER = "google"
WIRE_API = "gemini-generate-content"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
MINTED = "gcall_"  # the prefix of the ids this child mints for calls the API sent without one

Json = Any

# ---------------------------------------------------------------- ids

_last_ulid = [0, 0]


def ulid() -> str:
    """A monotonic ULID (canonical §6.1): 48 bits of milliseconds, 80 random bits."""
    now = int(time.time() * 1000)
    if now <= _last_ulid[0]:
        now = _last_ulid[0]
        rnd = _last_ulid[1] + 1
    else:
        rnd = random.getrandbits(80)
    _last_ulid[0], _last_ulid[1] = now, rnd
    value = (now << 80) | (rnd & ((1 << 80) - 1))
    out = []
    for _ in range(26):
        out.append(CROCKFORD[value & 31])
        value >>= 5
    return "".join(reversed(out))


def minted_id(*parts: Json) -> str:
    """An id for a call the API gave none, derived from what tells the reply and the call apart."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8"))
    return MINTED + digest.hexdigest()[:24]


def now_timestamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # noqa: UP017 (any Python 3)


# ---------------------------------------------------------------- typed errors and logs


class ProtocolError(Exception):
    def __init__(self, error: dict[str, Json]) -> None:
        super().__init__(error.get("message", ""))
        self.error = error


def adapter_error(error_class: str, message: str, **extra: Json) -> ProtocolError:
    return ProtocolError({"kind": "adapter_error", "error_class": error_class, "message": message, **extra})


LOGS: list[dict[str, Json]] = []


def warn(message: str, fields: dict[str, Json]) -> None:
    LOGS.append({"level": "warning", "message": message, "fields": fields})


# ---------------------------------------------------------------- the tool id map (spec §6.2)


class IdMap:
    def __init__(self) -> None:
        self.to_provider: dict[str, str] = {}
        self.to_canonical: dict[str, str] = {}

    def bind(self, canonical: str, provider: str) -> None:
        bound_p = self.to_provider.get(canonical)
        bound_c = self.to_canonical.get(provider)
        if (bound_p is not None and bound_p != provider) or (bound_c is not None and bound_c != canonical):
            raise adapter_error("invalid_request", f"cannot bind {canonical} to {provider}: already bound")
        self.to_provider[canonical] = provider
        self.to_canonical[provider] = canonical


SESSIONS: dict[str, IdMap] = {}


def session_map(session_id: str) -> IdMap:
    return SESSIONS.setdefault(session_id, IdMap())


def canonical_for(session_id: str, provider: str) -> str:
    ids = session_map(session_id)
    canonical = ids.to_canonical.get(provider)
    if canonical is None:
        canonical = "tu_" + ulid()
        ids.bind(canonical, provider)
    return canonical


def provider_for(session_id: str, canonical: str) -> str:
    ids = session_map(session_id)
    provider = ids.to_provider.get(canonical)
    if provider is None:
        provider = minted_id("unbound", canonical, random.getrandbits(64))
        ids.bind(canonical, provider)
    return provider


def tool_id_map(params: dict[str, Json]) -> dict[str, Json]:
    session_id = params["session_id"]
    call = params["call"]
    args = params.get("args") or []
    ids = session_map(session_id)
    if call == "canonical_for":
        return {"value": canonical_for(session_id, args[0])}
    if call == "provider_for":
        return {"value": provider_for(session_id, args[0])}
    if call == "get_provider":
        return {"value": ids.to_provider.get(args[0])}
    if call == "get_canonical":
        return {"value": ids.to_canonical.get(args[0])}
    if call == "bind":
        ids.bind(args[0], args[1])
        return {"value": None}
    if call == "pairs":
        return {"value": [[c, p] for c, p in ids.to_provider.items()]}
    raise adapter_error("invalid_request", f"unknown tool_id_map call {call!r}")


# ---------------------------------------------------------------- shared helpers

CAPABILITIES: dict[str, Json] = {
    "supports_thinking": True,
    "supports_images": True,
    "supports_tools": True,
    "supports_system_prompt": True,
    "supports_structured_output": True,
    "supports_streaming": True,
    "supports_streaming_tool_calls": True,
    "supports_parallel_tool_calls": True,
    "supports_prompt_caching": False,
    "supports_system_messages_in_list": False,
    "max_context_tokens": 1048576,
    "max_output_tokens": 65536,
    # ai.google.dev/gemini-api/docs/image-understanding: "Supported image formats"
    "accepted_image_media_types": ["image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"],
}


def wire_model(model: str) -> str:
    """canonical §6.3 ids are `<provider>:<model_name>`; the wire takes the name (our prefix only)."""
    prefix = PROVIDER + ":"
    name = model[len(prefix) :] if model.startswith(prefix) and len(model) > len(prefix) else model
    return name[len("models/") :] if name.startswith("models/") else name


def canonical_model(model: str) -> str:
    if model.startswith("models/"):
        model = model[len("models/") :]
    return model if model.startswith(PROVIDER + ":") else f"{PROVIDER}:{model}"


def own_raw(holder: Json) -> dict[str, Json]:
    raw = holder.get("provider_raw") if isinstance(holder, dict) else None
    entry = raw.get(NAME) if isinstance(raw, dict) else None
    return entry if isinstance(entry, dict) else {}


def block_raw(message: dict[str, Json], index: int) -> dict[str, Json]:
    blocks = own_raw(message.get("metadata") or {}).get("blocks") or {}
    entry = blocks.get(str(index)) if isinstance(blocks, dict) else None
    return entry if isinstance(entry, dict) else {}


def assistant_metadata(model: str) -> dict[str, Json]:
    return {
        "model": model,
        "provider": PROVIDER,
        "routing": {"mode": "default", "chosen_model": model, "reason": "no routing engine"},
    }


def from_this_provider(message: dict[str, Json]) -> bool:
    metadata = message.get("metadata") or {}
    model = metadata.get("model")
    return metadata.get("provider") == PROVIDER or (isinstance(model, str) and model.startswith(PROVIDER + ":"))


def listed(value: Json) -> list[Json]:
    """A repeated field as a list (a hostile body's other shapes read as none)."""
    return value if isinstance(value, list) else []


def dumps(value: Json) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------- render (canonical -> wire)


class Renderer:
    def __init__(self, critical_key: str) -> None:
        self.critical_key = critical_key

    def critical(self, message: dict[str, Json], index: int) -> bool:
        marked = (message.get("metadata") or {}).get(self.critical_key)
        return marked is True or (isinstance(marked, list) and index in marked)

    def drop(self, message: dict[str, Json], block: dict[str, Json], reason: str, critical: bool) -> None:
        block_type = str(block.get("type"))
        if critical:
            raise ProtocolError(
                {
                    "kind": "critical_block",
                    "message": f"{NAME}: critical {block_type} block cannot be sent: {reason}",
                    "adapter": NAME,
                    "session_id": message.get("session_id", ""),
                    "message_id": message.get("id", ""),
                    "block_type": block_type,
                    "reason": reason,
                }
            )
        warn(
            f"{NAME}: dropped {block_type} block of message {message.get('id')} "
            f"(session {message.get('session_id')}): {reason}",
            {
                "event": "block_dropped",
                "adapter": NAME,
                "session_id": message.get("session_id"),
                "message_id": message.get("id"),
                "block_type": block_type,
                "reason": reason,
            },
        )

    def image(self, message: dict[str, Json], block: dict[str, Json], critical: bool) -> Json:
        source = block.get("source") or {}
        media = str(block.get("media_type", "")).lower()
        if media not in CAPABILITIES["accepted_image_media_types"]:
            self.drop(message, block, f"media type {block.get('media_type')} is not one Gemini takes", critical)
            return None
        if source.get("kind") == "base64":
            return {"inlineData": {"mimeType": block.get("media_type"), "data": source.get("data")}}
        if source.get("kind") == "url":
            return {"fileData": {"mimeType": block.get("media_type"), "fileUri": source.get("data")}}
        self.drop(message, block, f"an image by {source.get('kind')} cannot travel to Gemini", critical)
        return None

    def parts(self, message: dict[str, Json], calls: dict[str, str], no_id: set[str]) -> list[Json]:
        """The parts of a user, system or model turn."""
        out: list[Json] = []
        pending: str | None = None  # a signature-only thinking block's signature, for the next part
        mine = from_this_provider(message)
        role = message.get("role")
        for index, block in enumerate(message.get("content") or []):
            raw = block_raw(message, index)
            critical = self.critical(message, index)
            kind = block.get("type")
            part: Json = None
            if kind == "text":
                part = {"text": block.get("text", "")}
            elif kind == "image":
                part = self.image(message, block, critical)
            elif kind == "tool_use" and role == "assistant":
                provider = provider_for(message["session_id"], block["id"])
                call: dict[str, Json] = {"name": block.get("name"), "args": block.get("input") or {}}
                raw = dict(raw)
                part_raw = dict(raw.get("part") or {})
                if not part_raw.pop("no_id", False):
                    call = {"id": provider, **call}  # ids this child minted travel too: the API echoes them
                else:
                    no_id.add(block["id"])
                raw["part"] = part_raw
                calls[block["id"]] = str(block.get("name"))
                part = {"functionCall": call}
            elif kind == "thinking" and role == "assistant":
                if not mine:
                    self.drop(message, block, "thinking from another provider cannot be sent to Gemini", critical)
                    continue
                text = block.get("text") or ""
                signature = block.get("signature")
                if not text and signature and not raw.get("standalone"):
                    if pending is not None:
                        out.append({"text": "", "thoughtSignature": pending})
                    pending = signature
                    continue
                part = {"text": text, "thought": True} if text or not signature else {"text": ""}
                if signature:
                    part["thoughtSignature"] = signature
            elif kind == "redacted_thinking":
                self.drop(message, block, "Gemini has no redacted thinking", critical)
                continue
            elif isinstance(kind, str) and kind.startswith(PROVIDER + ":"):
                part = {kind[len(PROVIDER) + 1 :]: {k: v for k, v in block.items() if k != "type"}}
            else:
                self.drop(message, block, f"no {kind} block in a Gemini {role} turn", critical)
                continue
            if part is None:
                continue
            part.update(raw.get("part") or {})
            if pending is not None:
                part["thoughtSignature"] = pending
                pending = None
            out.append(part)
        if pending is not None:
            out.append({"text": "", "thoughtSignature": pending})
        return out

    def function_response(self, message: dict[str, Json], calls: dict[str, str], no_id: set[str]) -> list[Json]:
        out = []
        raw = own_raw(message.get("metadata") or {})
        for index, block in enumerate(message.get("content") or []):
            critical = self.critical(message, index)
            if block.get("type") != "tool_result":
                self.drop(message, block, "a tool message carries tool results only", critical)
                continue
            texts = []
            for inner in block.get("content") or []:
                if inner.get("type") == "text":
                    texts.append(inner.get("text", ""))
                else:
                    self.drop(
                        message, inner, f"a functionResponse here carries text, not {inner.get('type')}", critical
                    )
            text = "".join(texts)
            response = raw.get("response")
            if not (isinstance(response, dict) and result_text(response)[0] == text):
                response = {"error" if block.get("is_error") else "output": text}
            provider = provider_for(message["session_id"], block["tool_use_id"])
            name = calls.get(block["tool_use_id"]) or raw.get("name") or "unknown"
            item: dict[str, Json] = {"name": name, "response": response}
            if block["tool_use_id"] not in no_id and not raw.get("no_id"):
                item = {"id": provider, **item}
            out.append({"functionResponse": item, **(raw.get("part") or {})})
        return out


def result_text(response: dict[str, Json]) -> tuple[str, bool]:
    """A functionResponse's `response` as a tool result's text and error flag (ai.google.dev: "Use
    'output' key to specify function output and 'error' key to specify error details")."""
    if set(response) == {"error"} and isinstance(response["error"], str):
        return response["error"], True
    if set(response) == {"output"} and isinstance(response["output"], str):
        return response["output"], False
    if "error" in response and "output" not in response:
        return dumps(response["error"]), True
    return dumps(response.get("output", response)), False


def render(params: dict[str, Json]) -> dict[str, Json]:
    messages = params.get("messages") or []
    tools = params.get("tools") or []
    options = params.get("options") or {}
    renderer = Renderer(options.get("critical_key") or "critical")
    request_raw = own_raw(options)
    body: dict[str, Json] = {}
    contents: list[Json] = []
    system_parts: list[Json] = []
    calls: dict[str, str] = {}
    no_id: set[str] = set()  # calls a recorded request sent without an id (read_request says so)
    for message in messages:
        role = message.get("role")
        if role == "system":
            for index, block in enumerate(message.get("content") or []):
                if block.get("type") != "text":
                    renderer.drop(
                        message, block, "a system instruction carries text only", renderer.critical(message, index)
                    )
                    continue
                system_parts.append({"text": block.get("text", ""), **(block_raw(message, index).get("part") or {})})
            continue
        if role == "tool":
            parts = renderer.function_response(message, calls, no_id)
            if contents and contents[-1].get("_tool") and not own_raw(message.get("metadata") or {}).get("new_turn"):
                contents[-1]["parts"].extend(parts)
            else:
                contents.append({"role": "user", "parts": parts, "_tool": True})
            continue
        parts = renderer.parts(message, calls, no_id)
        contents.append({"role": "model" if role == "assistant" else "user", "parts": parts})
    if system_parts:
        system: dict[str, Json] = {"parts": system_parts}
        if request_raw.get("system_role"):
            system["role"] = request_raw["system_role"]
        body["systemInstruction"] = system
    body["contents"] = [{k: v for k, v in c.items() if k != "_tool"} for c in contents]
    fields = request_raw.get("parameters_field") or {}
    declarations = []
    for tool in tools:
        declaration: dict[str, Json] = {"name": tool.get("name")}
        if tool.get("description") or tool.get("name") not in (request_raw.get("no_description") or []):
            declaration["description"] = tool.get("description", "")
        if tool.get("name") not in (request_raw.get("no_schema") or []):
            declaration[fields.get(tool.get("name"), "parametersJsonSchema")] = tool.get("input_schema") or {}
        declarations.append(declaration)
    wire_tools: list[Json] = [{"functionDeclarations": declarations}] if declarations else []
    wire_tools.extend(options.get("provider_tools") or [])
    if wire_tools:
        body["tools"] = wire_tools[0] if request_raw.get("tools_object") and len(wire_tools) == 1 else wire_tools
    config: dict[str, Json] = {}
    if options.get("max_output_tokens") is not None:
        config["maxOutputTokens"] = options["max_output_tokens"]
    if options.get("temperature") is not None:
        config["temperature"] = options["temperature"]
    if options.get("stop_sequences"):
        config["stopSequences"] = list(options["stop_sequences"])
    if options.get("output_schema") is not None:
        config["responseMimeType"] = "application/json"
        config[request_raw.get("schema_field") or "responseJsonSchema"] = options["output_schema"]
    extra = dict(options.get("extra") or {})
    if isinstance(extra.get("generationConfig"), dict):
        config = {**extra.pop("generationConfig"), **config}
    if config:
        body["generationConfig"] = config
    body.update(extra)
    model = urllib.parse.unquote(wire_model(str(options.get("model") or "")))
    if options.get("stream"):
        path = f"/v1beta/models/{model}:streamGenerateContent"
        if request_raw.get("alt", "sse") == "sse":
            path += "?alt=sse"
    else:
        path = f"/v1beta/models/{model}:generateContent"
    return {"method": "POST", "path": path, "headers": {"content-type": "application/json"}, "body": body}


# ---------------------------------------------------------------- reading replies (parse and streams)

# `turnspec wire show gemini-generate-content`, Stop reasons: the first reading of each
STOP_REASONS = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    "FINISH_REASON_UNSPECIFIED": "end_turn",
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
    "TOO_MANY_TOOL_CALLS": "error",
    "MISSING_THOUGHT_SIGNATURE": "error",
}


def stop_reason(finish: Json, saw_call: bool, blocked: bool) -> str:
    if blocked:
        return "error"  # promptFeedback.blockReason, no candidates: the prompt was refused
    if finish is None:
        return "end_turn"
    reason = STOP_REASONS.get(str(finish), "end_turn")  # the content filters: the text the provider sent
    return "tool_use" if reason == "end_turn" and finish == "STOP" and saw_call else reason


def status_for(reason: str) -> str:
    return "error" if reason == "error" else "cancelled" if reason == "cancelled" else "complete"


def token_usage(usage: Json) -> dict[str, int] | None:
    """Disjoint buckets: promptTokenCount includes the cached tokens; thoughts are output."""
    if not isinstance(usage, dict):
        return None
    # the prompt the tools added (a search's results) is input too: toolUsePromptTokenCount

    def count(field: str) -> int:
        value = usage.get(field)
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    prompt = count("promptTokenCount") + count("toolUsePromptTokenCount")
    cached = count("cachedContentTokenCount")
    output = count("candidatesTokenCount") + count("thoughtsTokenCount")
    return {
        "input_tokens": max(prompt - cached, 0),
        "output_tokens": output,
        "cached_input_tokens": cached,
        "cache_creation_input_tokens": 0,
    }


PART_KNOWN = ("text", "thought", "thoughtSignature", "functionCall", "inlineData", "fileData", "functionResponse")


class Reply:
    """The canonical blocks of a reply's parts, whole or a chunk at a time (the same reading, so a
    stream's final_content equals the parse of the same reply: consecutive text parts join)."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.blocks: list[dict[str, Json]] = []
        self.raw: dict[str, Json] = {}
        self.saw_call = False
        self.calls = 0

    def events_for(self, part: Json, reply_key: Json, message_id: str, merge: bool = True) -> list[Json]:
        """Add one part; the stream events it makes."""
        if not isinstance(part, dict):
            return []
        events: list[Json] = []
        signature = part.get("thoughtSignature")
        extras = {k: v for k, v in part.items() if k not in PART_KNOWN}
        if part.get("thought") and isinstance(part.get("text"), str):
            last = self.blocks[-1] if self.blocks else None
            if not (merge and last and last["type"] == "thinking" and last.get("text") and not last.get("signature")):
                self.blocks.append({"type": "thinking", "text": "", "signature": None})
            block = self.blocks[-1]
            block["text"] += part["text"]
            if signature:
                block["signature"] = signature
            event = {"type": "thinking_delta", "message_id": message_id, "content_block_index": len(self.blocks) - 1}
            events.append({**event, "text": part["text"], "signature": signature or None})
            return events
        if "text" in part and isinstance(part["text"], str) and part["text"] == "" and signature:
            self.blocks.append({"type": "thinking", "text": "", "signature": signature})
            self.raw[str(len(self.blocks) - 1)] = {"standalone": True}
            event = {"type": "thinking_delta", "message_id": message_id, "content_block_index": len(self.blocks) - 1}
            return [{**event, "text": "", "signature": signature}]
        if signature:
            self.blocks.append({"type": "thinking", "text": "", "signature": signature})
            event = {"type": "thinking_delta", "message_id": message_id, "content_block_index": len(self.blocks) - 1}
            events.append({**event, "text": "", "signature": signature})
        if isinstance(part.get("text"), str):
            if merge and not part["text"] and not signature and not extras:
                return events  # an empty text part adds nothing (a stream's last chunk often has one)
            last = self.blocks[-1] if self.blocks else None
            if not (merge and last and last["type"] == "text" and not signature and not extras):
                self.blocks.append({"type": "text", "text": ""})
            self.blocks[-1]["text"] += part["text"]
            if extras:
                self.raw[str(len(self.blocks) - 1)] = {"part": extras}
            index = len(self.blocks) - 1
            events.append(
                {"type": "text_delta", "message_id": message_id, "content_block_index": index, "text": part["text"]}
            )
            return events
        call = part.get("functionCall")
        if isinstance(call, dict):
            self.saw_call = True
            args = call.get("args") if isinstance(call.get("args"), dict) else {}
            provider = call.get("id")
            if not isinstance(provider, str) or not provider:
                provider = minted_id(reply_key, self.calls, call.get("name"), args)
                if not merge:  # a recorded request's call that went without an id goes back without one
                    extras = {**extras, "no_id": True}
            self.calls += 1
            canonical = canonical_for(self.session_id, provider)
            self.blocks.append({"type": "tool_use", "id": canonical, "name": call.get("name") or "", "input": args})
            index = len(self.blocks) - 1
            if extras:
                self.raw[str(index)] = {"part": extras}
            base = {"message_id": message_id, "content_block_index": index, "tool_use_id": canonical}
            events.append({"type": "tool_use_start", **base, "tool_name": call.get("name") or ""})
            events.append({"type": "tool_use_input_delta", **base, "partial_json": dumps(args)})
            events.append({"type": "tool_use_end", **base, "final_input": args})
            return events
        blob = part.get("inlineData")
        if isinstance(blob, dict) and str(blob.get("mimeType", "")).startswith("image/") and blob.get("data"):
            self.blocks.append(
                {"type": "image", "source": {"kind": "base64", "data": blob["data"]}, "media_type": blob["mimeType"]}
            )
            return events
        for key, value in part.items():  # executableCode, codeExecutionResult, ...: kept whole
            if key not in ("thoughtSignature",) and isinstance(value, dict):
                self.blocks.append({"type": f"{PROVIDER}:{key}", **value})
                break
        return events

    def content(self) -> list[dict[str, Json]]:
        out = [dict(b) for b in self.blocks]
        for block in out:
            if block["type"] == "thinking" and block.get("signature") is None:
                block.pop("signature", None)
        return out or [{"type": "text", "text": ""}]


def header(headers: Json, name: str) -> Json:
    if not isinstance(headers, dict):
        return None
    for key, value in headers.items():
        if key.lower() == name:
            return value[0] if isinstance(value, list) and value else value
    return None


TRANSIENT = ("rate_limit", "server_error", "network")


def error_class(status: int | None, error: dict[str, Json]) -> str:
    """`wire show`'s Errors: details[].reason first, else contract §6.2's HTTP status table."""
    for detail in error.get("details") or []:
        if isinstance(detail, dict) and detail.get("reason") == "API_KEY_INVALID":
            return "auth"
    message = str(error.get("message") or "").lower()
    if status == 400 and ("token count" in message and "exceeds" in message):
        return "context_overflow"
    if status == 413:
        return "context_overflow"
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "network"
    if status is not None and status >= 500:
        return "server_error"
    if status is not None and 400 <= status < 500:
        return "invalid_request"
    return "other"


def retry_after_seconds(headers: Json, error: dict[str, Json]) -> float | None:
    for detail in error.get("details") or []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and re.fullmatch(r"\d+(\.\d+)?s", delay):
            return float(delay[:-1])
    value = header(headers, "retry-after")
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None


def error_from(status: int | None, headers: Json, body: Json, context: dict[str, Json]) -> ProtocolError:
    error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
    code = error.get("code") if isinstance(error.get("code"), int) else status
    klass = error_class(code, error)
    message = str(error.get("message") or f"HTTP {status}")
    request_id = header(headers, "x-request-id") or context.get("request_id")
    return adapter_error(
        klass,
        message,
        provider_status=code,
        request_id=request_id,
        retryable=klass in TRANSIENT,
        retry_after_seconds=retry_after_seconds(headers, error),
    )


def decode_body(response: dict[str, Json]) -> Json:
    if "body_base64" in response:
        raw = base64.b64decode(response["body_base64"] or "")
        try:
            return json.loads(raw.decode("utf-8"))
        except ValueError:
            return None
    return response.get("body")


def finish(body: dict[str, Json], reply: Reply, context: dict[str, Json]) -> dict[str, Json]:
    """The parsed message of a whole reply."""
    candidates = listed(body.get("candidates"))
    candidate = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
    feedback = body.get("promptFeedback") if isinstance(body.get("promptFeedback"), dict) else {}
    blocked = not candidates and bool(feedback.get("blockReason"))
    reason = stop_reason(candidate.get("finishReason"), reply.saw_call, blocked)
    model = (
        canonical_model(body["modelVersion"])
        if body.get("modelVersion")
        else context.get("model") or f"{PROVIDER}:unknown"
    )
    usage = token_usage(body.get("usageMetadata"))
    full_usage = None
    if usage is not None:
        full_usage = {
            **usage,
            "cost_usd": "0",
            "pricing_version": "unpriced",
            "latency_ms": int(context.get("latency_ms") or 0),
        }
    raw: dict[str, Json] = {"finish_reason": candidate.get("finishReason") or feedback.get("blockReason")}
    if body.get("responseId"):
        raw["response_id"] = body["responseId"]
    if reply.raw:
        raw["blocks"] = reply.raw
    metadata = {
        **assistant_metadata(model),
        "usage": full_usage,
        "status": status_for(reason),
        "provider_raw": {NAME: raw},
    }
    return {
        "id": context.get("message_id") or ulid(),
        "session_id": context.get("session_id") or "",
        "role": "assistant",
        "content": reply.content(),
        "metadata": metadata,
        "created_at": context.get("created_at") or now_timestamp(),
        "schema_version": 1,
    }


def parse(params: dict[str, Json]) -> dict[str, Json]:
    response = params.get("response") or {}
    context = params.get("context") or {}
    status = int(response.get("status") or 200)
    body = decode_body(response)
    if status >= 400 or not isinstance(body, dict) or "error" in body:
        if not isinstance(body, dict) and status < 400:
            raise ProtocolError({"kind": "wire_format", "message": "the response body is not a JSON object"})
        raise error_from(status, response.get("headers"), body, context)
    reply = Reply(context.get("session_id") or "")
    candidates = listed(body.get("candidates"))
    content = candidates[0].get("content") if candidates and isinstance(candidates[0], dict) else None
    content = content if isinstance(content, dict) else {}
    key = body.get("responseId") or hashlib.sha256(dumps(body).encode("utf-8")).hexdigest()
    for part in listed(content.get("parts")):
        reply.events_for(part, key, "m")
    return {"message": finish(body, reply, context)}


# ---------------------------------------------------------------- streams


class Stream:
    """One streamGenerateContent reply fed in chunks: SSE (`?alt=sse`) or a JSON array, told apart
    by the first byte that is not whitespace (stream_open carries no Content-Type)."""

    def __init__(self, context: dict[str, Json]) -> None:
        self.context = context
        self.message_id = context.get("message_id") or ulid()
        self.buffer = b""
        self.framing: str | None = None
        self.scan = 0  # JSON array: bytes of buffer already scanned
        self.depth = 0
        self.in_string = False
        self.escape = False
        self.start_at = -1
        self.array_done = False
        self.reply = Reply(context.get("session_id") or "")
        self.started = False
        self.finish_reason: Json = None
        self.blocked = False
        self.usage: Json = None
        self.model: Json = None
        self.response_id: Json = None
        self.elements = 0
        self.events: list[Json] = []  # every event answered, for a cancel
        self.silent: list[tuple[int, int, dict[str, Json]]] = []  # (index, events before it, block)
        self.over = False  # a stream_close or a failed feed was answered

    def fail(self, message: str) -> ProtocolError:
        return ProtocolError({"kind": "wire_format", "message": f"{NAME}: {message}", "event": self.elements})

    def start(self, out: list[Json]) -> None:
        if not self.started:
            self.started = True
            model = canonical_model(self.model) if self.model else self.context.get("model") or f"{PROVIDER}:unknown"
            out.append({"type": "message_start", "message_id": self.message_id, "role": "assistant", "model": model})

    def complete(self, reason: str) -> dict[str, Json]:
        return {
            "type": "message_complete",
            "message_id": self.message_id,
            "stop_reason": reason,
            "final_content": self.reply.content(),
            "usage": token_usage(self.usage),
        }

    def element(self, value: Json, out: list[Json]) -> None:
        """One GenerateContentResponse of the stream (or Google's error body)."""
        self.elements += 1
        if not isinstance(value, dict):
            raise self.fail(f"stream element {self.elements} is not a JSON object")
        if isinstance(value.get("error"), dict):
            self.start(out)
            out.append(self.complete("error"))
            raise error_from(None, {}, value, self.context)
        if value.get("modelVersion") and not self.model:
            self.model = value["modelVersion"]
        if value.get("responseId"):
            self.response_id = value["responseId"]
        self.start(out)
        if value.get("usageMetadata") is not None:
            self.usage = value["usageMetadata"]
        candidates = listed(value.get("candidates"))
        feedback = value.get("promptFeedback") if isinstance(value.get("promptFeedback"), dict) else {}
        if not candidates and feedback.get("blockReason"):
            self.blocked = True
        candidate = candidates[0] if candidates and isinstance(candidates[0], dict) else {}
        key = self.response_id or hashlib.sha256(dumps(value).encode("utf-8")).hexdigest()
        content = candidate.get("content") if isinstance(candidate.get("content"), dict) else {}
        for part in listed(content.get("parts")):
            before = len(self.reply.blocks)
            made = self.reply.events_for(part, key, self.message_id)
            if not made and len(self.reply.blocks) > before:  # an image or a code part: no event carries it
                self.silent.append((before, len(self.events) + len(out), self.reply.blocks[before]))
            out.extend(made)
        if candidate.get("finishReason"):
            self.finish_reason = candidate["finishReason"]

    def drain(self, out: list[Json]) -> None:
        if self.framing is None:
            stripped = self.buffer.lstrip()
            if not stripped:
                return
            self.framing = "json-array" if stripped[:1] == b"[" else "sse"
        if self.framing == "sse":
            self.drain_sse(out)
        else:
            self.drain_array(out)

    def drain_sse(self, out: list[Json]) -> None:
        while True:
            match = re.search(rb"\r\n\r\n|\n\n|\r\r", self.buffer)
            if match is None:
                return
            event, self.buffer = self.buffer[: match.start()], self.buffer[match.end() :]
            self.sse_event(event, out)

    def sse_event(self, event: bytes, out: list[Json]) -> None:
        data = []
        for line in re.split(rb"\r\n|\n|\r", event):
            if line.startswith(b"data:"):
                value = line[5:]
                data.append(value[1:] if value.startswith(b" ") else value)
        if not data:
            return
        text = b"\n".join(data)
        try:
            value = json.loads(text.decode("utf-8"))
        except ValueError as exc:
            raise self.fail(f"server-sent event {self.elements + 1} is not JSON: {exc}") from None
        self.element(value, out)

    def drain_array(self, out: list[Json]) -> None:
        buf = self.buffer
        i = self.scan
        while i < len(buf):
            c = buf[i]
            if self.in_string:
                if self.escape:
                    self.escape = False
                elif c == 0x5C:
                    self.escape = True
                elif c == 0x22:
                    self.in_string = False
            elif c == 0x22:
                self.in_string = True
            elif c in (0x7B, 0x5B):
                if self.depth == 1 and c == 0x7B:
                    self.start_at = i
                elif self.depth == 1:
                    raise self.fail("a stream element is not a JSON object")
                elif self.depth == 0 and c != 0x5B:
                    raise self.fail("the stream is not a JSON array")
                self.depth += 1
            elif c in (0x7D, 0x5D):
                self.depth -= 1
                if self.depth == 1 and c == 0x7D:
                    piece = buf[self.start_at : i + 1]
                    try:
                        value = json.loads(piece.decode("utf-8"))
                    except ValueError as exc:
                        raise self.fail(f"stream element {self.elements + 1} is not JSON: {exc}") from None
                    self.element(value, out)
                elif self.depth == 0:
                    self.array_done = True
                elif self.depth < 0:
                    raise self.fail("the stream's JSON array closes more than it opens")
            elif self.depth <= 1 and c not in b" \t\r\n,":
                raise self.fail(f"unexpected byte {chr(c)!r} between stream elements")
            i += 1
        # keep what an unfinished element needs; drop the rest
        if self.depth >= 2:
            self.buffer = buf[self.start_at :]
            self.scan = i - self.start_at
            self.start_at = 0
        else:
            self.buffer = b""
            self.scan = 0

    def close(self, out: list[Json]) -> None:
        if self.framing == "sse" and self.buffer.strip():
            event, self.buffer = self.buffer, b""
            self.sse_event(event, out)
        if self.framing == "json-array" and not self.array_done:
            self.start(out)
            out.append(self.complete("error"))
            raise self.fail("the stream's JSON array ended before its closing ]")
        self.start(out)
        if self.finish_reason is None and not self.blocked:
            out.append(self.complete("error"))
            raise self.fail("the stream ended before a finishReason")
        out.append(self.complete(stop_reason(self.finish_reason, self.reply.saw_call, self.blocked)))


STREAMS: dict[str, Stream] = {}


def stream_for(stream_id: str) -> Stream:
    stream = STREAMS.get(stream_id)
    if stream is None:
        raise adapter_error("invalid_request", f"no open stream {stream_id}")
    return stream


def with_events(stream: Stream, out: list[Json], step: Any) -> dict[str, Json]:
    try:
        step()
    except ProtocolError as exc:
        stream.over = True
        stream.events.extend(out)
        raise ProtocolError({**exc.error, "events": out}) from None
    stream.events.extend(out)
    return {"events": out}


def stream_open(params: dict[str, Json]) -> dict[str, Json]:
    STREAMS[params["stream_id"]] = Stream(params.get("context") or {})
    return {"events": []}


def stream_feed(params: dict[str, Json]) -> dict[str, Json]:
    stream = stream_for(params["stream_id"])
    out: list[Json] = []
    if stream.over:
        return {"events": []}

    def step() -> None:
        stream.buffer += base64.b64decode(params.get("data") or "")
        stream.drain(out)

    return with_events(stream, out, step)


def stream_close(params: dict[str, Json]) -> dict[str, Json]:
    stream = stream_for(params["stream_id"])
    if params.get("abandon"):
        STREAMS.pop(params["stream_id"], None)
        return {"events": []}
    out: list[Json] = []
    if stream.over:
        return {"events": []}
    try:
        return with_events(stream, out, lambda: stream.close(out))
    finally:
        stream.over = True


# ---------------------------------------------------------------- cancel (contract §5.3)


def cancel(params: dict[str, Json]) -> dict[str, Json]:
    request_id = params.get("request_id")
    delivered = int(params.get("delivered") or 0)
    for stream in STREAMS.values():
        if stream.context.get("request_id") != request_id:
            continue
        if stream.over:
            return {"in_flight": False, "events": []}
        blocks: dict[int, dict[str, Json]] = {}
        open_calls: dict[int, str] = {}
        partial: dict[int, str] = {}
        for event in stream.events[:delivered]:
            kind = event.get("type")
            index = event.get("content_block_index")
            if kind == "text_delta":
                blocks.setdefault(index, {"type": "text", "text": ""})["text"] += event["text"]
            elif kind == "thinking_delta":
                block = blocks.setdefault(index, {"type": "thinking", "text": ""})
                block["text"] += event["text"]
                if event.get("signature"):
                    block["signature"] = event["signature"]
            elif kind == "tool_use_start":
                blocks[index] = {
                    "type": "tool_use",
                    "id": event["tool_use_id"],
                    "name": event["tool_name"],
                    "input": {},
                }
                open_calls[index] = event["tool_use_id"]
                partial[index] = ""
            elif kind == "tool_use_input_delta":
                partial[index] = partial.get(index, "") + event["partial_json"]
            elif kind == "tool_use_end":
                blocks[index]["input"] = event["final_input"]
                open_calls.pop(index, None)
        for index, at, block in stream.silent:
            if at < delivered:  # an event after it was delivered: it is part of the partial content
                blocks[index] = dict(block)
        events: list[Json] = []
        for index, call_id in open_calls.items():
            try:
                value = json.loads(partial.get(index) or "{}")
            except ValueError:
                value = {}
            final = value if isinstance(value, dict) else {}
            blocks[index]["input"] = final
            base = {"message_id": stream.message_id, "content_block_index": index, "tool_use_id": call_id}
            events.append({"type": "tool_use_end", **base, "final_input": final})
        content = [blocks[i] for i in sorted(blocks)] or [{"type": "text", "text": ""}]
        events.append(
            {
                "type": "message_complete",
                "message_id": stream.message_id,
                "stop_reason": "cancelled",
                "final_content": content,
                "usage": None,
            }
        )
        stream.over = True
        return {"in_flight": True, "events": events}
    return {"in_flight": False, "events": []}


# ---------------------------------------------------------------- read_request (wire -> canonical)


def camel(value: Json, fields: dict[str, Json]) -> Json:
    """A request's structural fields in their lowerCamelCase JSON names: proto3 JSON parsers take
    the proto name too (`system_instruction`, `parameters_json_schema`), and the API with them.
    `fields` names, for each key, how to read its value (another map; "list" of one; None: as is)."""
    if not isinstance(value, dict):
        return value
    out: dict[str, Json] = {}
    for key, inner in value.items():
        name = re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), key) if "_" in key else key
        shape = fields.get(name)
        if isinstance(shape, tuple):  # a list of such objects
            inner = [camel(x, shape[0]) for x in inner] if isinstance(inner, list) else camel(inner, shape[0])
        elif isinstance(shape, dict):
            inner = camel(inner, shape)
        out[name] = inner
    return out


BLOB_FIELDS: dict[str, Json] = {"mimeType": None, "data": None, "fileUri": None}
PART_FIELDS: dict[str, Json] = {
    "inlineData": BLOB_FIELDS,
    "fileData": BLOB_FIELDS,
    "functionCall": {},
    "functionResponse": {},
    "thoughtSignature": None,
}
CONTENT_FIELDS: dict[str, Json] = {"parts": (PART_FIELDS,)}
BODY_FIELDS: dict[str, Json] = {
    "contents": (CONTENT_FIELDS,),
    "systemInstruction": CONTENT_FIELDS,
    "tools": ({"functionDeclarations": ({},)},),
    "generationConfig": {},
    "toolConfig": {},
}


ENDPOINT = re.compile(r"/models/([^?#]+?):(generateContent|streamGenerateContent)(?:[?#]|$)")


def new_message(session_id: str, role: str, content: list[Json], metadata: dict[str, Json]) -> dict[str, Json]:
    return {
        "id": ulid(),
        "session_id": session_id,
        "role": role,
        "content": content,
        "metadata": metadata,
        "created_at": now_timestamp(),
        "schema_version": 1,
    }


def with_raw(metadata: dict[str, Json], raw: dict[str, Json]) -> dict[str, Json]:
    return {**metadata, "provider_raw": {NAME: raw}} if raw else metadata


def user_blocks(parts: list[Json]) -> tuple[list[Json], dict[str, Json]]:
    blocks: list[Json] = []
    raw: dict[str, Json] = {}
    for part in parts:
        if not isinstance(part, dict):
            continue
        extras = {k: v for k, v in part.items() if k not in ("text", "inlineData", "fileData")}
        if isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif isinstance(part.get("inlineData"), dict) and str(part["inlineData"].get("mimeType", "")).startswith(
            "image/"
        ):
            blob = part["inlineData"]
            blocks.append(
                {
                    "type": "image",
                    "source": {"kind": "base64", "data": blob.get("data")},
                    "media_type": blob["mimeType"],
                }
            )
        elif isinstance(part.get("fileData"), dict) and str(part["fileData"].get("mimeType", "")).startswith("image/"):
            ref = part["fileData"]
            blocks.append(
                {"type": "image", "source": {"kind": "url", "data": ref.get("fileUri")}, "media_type": ref["mimeType"]}
            )
        else:
            key = next((k for k, v in part.items() if isinstance(v, dict)), None)
            if key is None:
                continue
            blocks.append({"type": f"{PROVIDER}:{key}", **part[key]})
            extras = {k: v for k, v in part.items() if k != key}
        if extras:
            raw[str(len(blocks) - 1)] = {"part": extras}
    return blocks, raw


def read_request(params: dict[str, Json]) -> dict[str, Json]:
    body = camel(params.get("body"), BODY_FIELDS)
    if not isinstance(body, dict):
        raise adapter_error("invalid_request", "the request body is not a JSON object")
    session_id = params.get("session_id") or ulid()
    url = params.get("url") or ""
    match = ENDPOINT.search(urllib.parse.urlsplit(url).path + ("?" if "?" in url else "")) if url else None
    model = canonical_model(urllib.parse.unquote(match.group(1))) if match else f"{PROVIDER}:unknown"
    stream = bool(match and match.group(2) == "streamGenerateContent")
    request_raw: dict[str, Json] = {}
    if stream and "alt=sse" not in urllib.parse.urlsplit(url).query:
        request_raw["alt"] = None
    messages: list[Json] = []
    system = body.get("systemInstruction")
    if isinstance(system, dict):
        blocks, raw = user_blocks(system.get("parts") or [])
        messages.append(new_message(session_id, "system", blocks, with_raw({}, {"blocks": raw} if raw else {})))
        if system.get("role"):
            request_raw["system_role"] = system["role"]
    unanswered: list[tuple[str, str]] = []  # (name, canonical id) of calls no functionResponse answered yet
    for turn, content in enumerate(body.get("contents") or []):
        if not isinstance(content, dict):
            continue
        parts = [p for p in content.get("parts") or [] if isinstance(p, dict)]
        if content.get("role") == "model":
            reply = Reply(session_id)
            for part in parts:
                reply.events_for(part, ["request", turn], "m", merge=False)
            for block in reply.blocks:
                if block["type"] == "tool_use":
                    unanswered.append((block["name"], block["id"]))
            metadata = {**assistant_metadata(model), "status": "complete"}
            raw = {"blocks": reply.raw} if reply.raw else {}
            messages.append(new_message(session_id, "assistant", reply.content(), with_raw(metadata, raw)))
            continue
        first = True
        rest: list[Json] = []
        for part in parts:
            answer = part.get("functionResponse")
            if not isinstance(answer, dict):
                rest.append(part)
                continue
            name = str(answer.get("name") or "")
            if isinstance(answer.get("id"), str) and answer["id"]:
                call_id = canonical_for(session_id, answer["id"])
                unanswered = [c for c in unanswered if c[1] != call_id]
            else:
                found = next((c for c in unanswered if c[0] == name), None)
                if found is not None:
                    unanswered.remove(found)
                    call_id = found[1]
                else:
                    call_id = canonical_for(session_id, minted_id("orphan", turn, name, answer.get("response")))
            response = answer.get("response") if isinstance(answer.get("response"), dict) else {}
            text, is_error = result_text(response)
            block: dict[str, Json] = {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": [{"type": "text", "text": text}],
            }
            if is_error:
                block["is_error"] = True
            raw = {"response": response, "name": name}
            extras = {k: v for k, v in part.items() if k != "functionResponse"}
            if extras:
                raw["part"] = extras
            if first:
                raw["new_turn"] = True
                first = False
            metadata = with_raw({"parent_tool_use_id": call_id}, raw)
            messages.append(new_message(session_id, "tool", [block], metadata))
        if rest or first:
            blocks, raw = user_blocks(rest)
            messages.append(new_message(session_id, "user", blocks, with_raw({}, {"blocks": raw} if raw else {})))
    tools: list[Json] = []
    provider_tools: list[Json] = []
    fields: dict[str, str] = {}
    no_description: list[str] = []
    no_schema: list[str] = []
    wire_tools = body.get("tools") or []
    if isinstance(wire_tools, dict):  # one Tool where the field is repeated: the API takes it so
        wire_tools = [wire_tools]
        request_raw["tools_object"] = True
    for entry in wire_tools:
        if not isinstance(entry, dict):
            continue
        if not (isinstance(entry, dict) and isinstance(entry.get("functionDeclarations"), list) and len(entry) == 1):
            provider_tools.append(entry)
            continue
        for declaration in entry["functionDeclarations"]:
            name = str(declaration.get("name") or "")
            schema: Json = None
            for field in ("parametersJsonSchema", "parameters"):
                if field in declaration:
                    schema = declaration[field]
                    if field != "parametersJsonSchema":
                        fields[name] = field
                    break
            if schema is None:
                no_schema.append(name)
                schema = {"type": "object", "properties": {}}
            if not declaration.get("description"):
                no_description.append(name)
            tools.append(
                {
                    "name": name,
                    "description": declaration.get("description") or "",
                    "input_schema": schema,
                    "side_effects": "none",
                }
            )
    for key, value in (("parameters_field", fields), ("no_description", no_description), ("no_schema", no_schema)):
        if value:
            request_raw[key] = value
    extra = {k: v for k, v in body.items() if k not in ("contents", "systemInstruction", "tools", "generationConfig")}
    config = dict(body.get("generationConfig") or {})
    max_tokens = config.pop("maxOutputTokens", None)
    temperature = config.pop("temperature", None)
    stops = config.pop("stopSequences", None) or []
    output_schema = None
    if config.get("responseMimeType") == "application/json":
        for field in ("responseJsonSchema", "responseSchema"):
            if field in config:
                output_schema = config.pop(field)
                config.pop("responseMimeType")
                if field != "responseJsonSchema":
                    request_raw["schema_field"] = field
                break
    if config:
        extra["generationConfig"] = config
    options = {
        "model": model,
        "max_output_tokens": max_tokens,
        "temperature": temperature,
        "stop_sequences": list(stops),
        "stream": stream,
        "output_schema": output_schema,
        "extra": extra,
        "provider_tools": provider_tools,
        "provider_raw": {NAME: request_raw} if request_raw else {},
    }
    return {"messages": messages, "tools": tools, "options": options}


# ---------------------------------------------------------------- estimate

IMAGE_TOKENS = 258  # ai.google.dev/gemini-api/docs/tokens: an image up to 384 px a side is 258 tokens
MESSAGE_TOKENS = 3


def block_chars(block: Json, signed: bool = False) -> tuple[int, int]:
    """The characters a block puts before the model, and the images it holds."""
    if not isinstance(block, dict):
        return 0, 0
    kind = block.get("type")
    if kind == "thinking" and block.get("signature") and signed:
        # a Gemini 3 thoughtSignature is the model's reasoning, which the API decrypts back into
        # the context: about one token per seven base64 characters (a recorded Gemini 3 turn's
        # thoughtsTokenCount against its signature's length); Gemini 2.5's prompts do not grow so
        return len(block.get("text") or "") + len(block["signature"]) * 4 // 7, 0
    if kind in ("text", "thinking"):
        return len(block.get("text") or ""), 0
    if kind == "image":
        return 0, 1
    if kind == "tool_use":
        return len(block.get("name") or "") + len(dumps(block.get("input") or {})), 0
    if kind == "tool_result":
        chars = images = 0
        for inner in block.get("content") or []:
            c, i = block_chars(inner)
            chars, images = chars + c, images + i
        return chars, images
    if kind == "redacted_thinking":
        return 0, 0
    return len(dumps(block)), 0


def estimate(params: dict[str, Json]) -> dict[str, Json]:
    """About four characters a token (ai.google.dev/gemini-api/docs/tokens: "a token is equivalent
    to about 4 characters"), a flat count per image and per turn."""
    chars = images = messages = 0
    signed = wire_model(str(params.get("model") or "")).startswith("gemini-3")
    for message in params.get("messages") or []:
        messages += 1
        content = message.get("content") or []
        for index, block in enumerate(content):
            # the signature of a function call (the current turn's reasoning) is read back; one
            # on a finished turn's answer is not (the recorded prompts do not grow by it)
            calls_next = index + 1 < len(content) and (content[index + 1] or {}).get("type") == "tool_use"
            c, i = block_chars(block, signed and calls_next)
            chars, images = chars + c, images + i
    for tool in params.get("tools") or []:
        chars += len(tool.get("name") or "") + len(tool.get("description") or "")
        chars += len(dumps(tool.get("input_schema") or {}))
    tokens = (chars + 3) // 4 + images * IMAGE_TOKENS + messages * MESSAGE_TOKENS
    return {"tokens": max(1, tokens)}


# ---------------------------------------------------------------- hello, the loop


def hello(params: dict[str, Json]) -> dict[str, Json]:
    versions = params.get("protocol_versions") or []
    if 1 not in versions:
        raise adapter_error("invalid_request", f"this child speaks protocol 1, offered {versions}")
    return {
        "protocol_version": 1,
        "adapter": {
            "name": NAME,
            "provider": PROVIDER,
            "wire_api": WIRE_API,
            "language": "python",
            "language_version": "python " + sys.version.split()[0],
            "capabilities": CAPABILITIES,
            "provider_tool_id": "^[A-Za-z0-9_.-]+$",
            "operations": ["render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"],
            "cassette_folders": ["gemini"],
            "tool_errors_in_band": None,
            "gaps": [],
        },
    }


HANDLERS = {
    "hello": hello,
    "render": render,
    "parse": parse,
    "stream_open": stream_open,
    "stream_feed": stream_feed,
    "stream_close": stream_close,
    "cancel": cancel,
    "read_request": read_request,
    "estimate": estimate,
    "tool_id_map": tool_id_map,
    "shutdown": lambda params: {},
}


def answer(request: dict[str, Json]) -> dict[str, Json]:
    LOGS.clear()
    handler = HANDLERS.get(request.get("op", ""))
    try:
        if handler is None:
            raise ProtocolError({"kind": "not_implemented", "message": f"no operation {request.get('op')}"})
        result = handler(request.get("params") or {})
        return {"id": request.get("id"), "ok": True, "result": result, "logs": list(LOGS)}
    except ProtocolError as exc:
        return {"id": request.get("id"), "ok": False, "error": exc.error, "logs": list(LOGS)}
    except Exception as exc:  # anything else is a crash, its traceback with it
        text = traceback.format_exc()
        sys.stderr.write(text)
        error = {"kind": "crash", "message": str(exc), "type": type(exc).__name__, "traceback": text}
        return {"id": request.get("id"), "ok": False, "error": error, "logs": list(LOGS)}


def main() -> int:
    stdin = sys.stdin.buffer
    stdout = sys.__stdout__.buffer  # the protocol's; sys.stdout is standard error (see below)
    for number, line in enumerate(stdin, 1):
        if not line.strip():
            continue
        try:
            request = json.loads(line.decode("utf-8"))
        except ValueError as exc:  # not the protocol: nothing to answer (no id), so say where and stop
            sys.stderr.write(f"gemini_child: standard input line {number} is not UTF-8 JSON: {exc}\n")
            return 2
        if not isinstance(request, dict):
            sys.stderr.write(f"gemini_child: standard input line {number} is not a JSON object\n")
            return 2
        reply = json.dumps(answer(request), ensure_ascii=False, separators=(",", ":"))
        stdout.write(reply.encode("utf-8") + b"\n")
        stdout.flush()
        if request.get("op") == "shutdown":
            return 0
    return 0


if __name__ == "__main__":
    sys.stdout = sys.stderr  # a stray print goes to standard error, never into the protocol
    sys.exit(main())
