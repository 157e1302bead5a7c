#!/usr/bin/env python3
"""An OpenAI Responses API adapter speaking turnspec's exec protocol (version 1), written by an
outside author from docs/exec-protocol.md, schemas/exec/v1/, `turnspec wire show
openai-responses` and OpenAI's own Responses documentation only. Python 3 and its standard
library, nothing else: it never imports turnspec (it could be written in any language).
turnspec keeps it as test data (tests/test_exec_outside_author.py).

Wire format: POST /v1/responses. The request's `input` is a list of items (messages with a
role, `reasoning`, `function_call`, `function_call_output`); the response's `output` is a list
of items (`message` with `output_text` / `refusal` parts, `reasoning` with `summary` and
`encrypted_content`, `function_call`); how the turn ended is `status` and
`incomplete_details.reason`. Streams are server-sent events named by their `type`
(`response.created`, `response.output_item.added`, `response.output_text.delta`,
`response.function_call_arguments.delta`, `response.completed`, `response.incomplete`,
`response.failed`, `error`, ...).
"""

from __future__ import annotations

import base64
import codecs
import json
import random
import re
import sys
import time
import traceback
from datetime import datetime, timezone
from typing import Any

NAME = "outside-openai-responses"
PROVIDER = "openai"
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ERROR_PREFIX = "Error: "

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


def mint_call_id() -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "call_" + "".join(random.choice(alphabet) for _ in range(24))


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
        provider = mint_call_id()
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
    "supports_system_messages_in_list": True,
    "max_context_tokens": 400000,
    "max_output_tokens": 128000,
    "accepted_image_media_types": ["image/png", "image/jpeg", "image/webp", "image/gif"],
}


def wire_model(model: str) -> str:
    """canonical §6.3 ids are `<provider>:<model_name>`; the wire takes the name (our prefix only)."""
    prefix = PROVIDER + ":"
    return model[len(prefix) :] if model.startswith(prefix) and len(model) > len(prefix) else model


def canonical_model(model: str) -> str:
    return model if model.startswith(PROVIDER + ":") else f"{PROVIDER}:{model}"


def own_raw(holder: Json) -> dict[str, Json]:
    raw = holder.get("provider_raw") if isinstance(holder, dict) else None
    entry = raw.get(NAME) if isinstance(raw, dict) else None
    return entry if isinstance(entry, dict) else {}


def block_raw(message: dict[str, Json], index: int) -> dict[str, Json]:
    blocks = own_raw(message.get("metadata") or {}).get("blocks") or {}
    entry = blocks.get(str(index))
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


def extras(item: dict[str, Json], known: tuple[str, ...]) -> dict[str, Json]:
    return {k: v for k, v in item.items() if k not in known}


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

    def image(self, message: dict[str, Json], block: dict[str, Json], raw: dict[str, Json], critical: bool) -> Json:
        source = block.get("source") or {}
        media = str(block.get("media_type", "")).lower()
        if media not in CAPABILITIES["accepted_image_media_types"]:
            self.drop(
                message, block, f"media type {block.get('media_type')} is not one the Responses API takes", critical
            )
            return None
        if source.get("kind") == "base64":
            url = f"data:{media};base64,{source.get('data')}"
        elif source.get("kind") == "url":
            url = source.get("data")
        else:
            self.drop(message, block, f"an image by {source.get('kind')} cannot travel on the Responses API", critical)
            return None
        return {"type": "input_image", "image_url": url, **(raw.get("part") or {})}

    def user_part(self, message: dict[str, Json], index: int, block: dict[str, Json], raw: dict[str, Json]) -> Json:
        critical = self.critical(message, index)
        kind = block.get("type")
        if kind == "text":
            return {"type": "input_text", "text": block.get("text", ""), **(raw.get("part") or {})}
        if kind == "image":
            return self.image(message, block, raw, critical)
        if isinstance(kind, str) and kind.startswith(PROVIDER + ":"):
            rest = {k: v for k, v in block.items() if k != "type"}
            return {**rest, "type": kind[len(PROVIDER) + 1 :]}
        self.drop(message, block, f"no {kind} block in a Responses {message.get('role')} message", critical)
        return None

    def role_message(self, message: dict[str, Json], role: str) -> list[Json]:
        raw = own_raw(message.get("metadata") or {})
        parts = []
        for index, block in enumerate(message.get("content") or []):
            if role == "system" and block.get("type") != "text":
                self.drop(message, block, "a system prompt carries text only", self.critical(message, index))
                continue
            part = self.user_part(message, index, block, block_raw(message, index))
            if part is not None:
                parts.append(part)
        item: dict[str, Json] = {"role": raw.get("role", role)}
        plain = len(parts) == 1 and set(parts[0]) == {"type", "text"} and parts[0]["type"] == "input_text"
        item["content"] = parts[0]["text"] if raw.get("content_string") and plain else parts
        item.update(raw.get("item") or {})
        return [item]

    def tool_message(self, message: dict[str, Json]) -> list[Json]:
        items = []
        raw = own_raw(message.get("metadata") or {})
        for index, block in enumerate(message.get("content") or []):
            if block.get("type") != "tool_result":
                self.drop(message, block, "a tool message carries tool results only", self.critical(message, index))
                continue
            parts = []
            for inner in block.get("content") or []:
                if inner.get("type") == "text":
                    parts.append({"type": "input_text", "text": inner.get("text", "")})
                elif inner.get("type") == "image":
                    image = self.image(message, inner, {}, self.critical(message, index))
                    if image is not None:
                        parts.append(image)
                else:
                    self.drop(
                        message,
                        inner,
                        f"no {inner.get('type')} block in a function_call_output",
                        self.critical(message, index),
                    )
            output: Json
            if all(p["type"] == "input_text" for p in parts) and not (raw.get("output_list") and parts):
                output = "".join(p["text"] for p in parts)
                if block.get("is_error"):
                    output = ERROR_PREFIX + output
            else:
                output = parts
                if block.get("is_error"):
                    output.insert(0, {"type": "input_text", "text": ERROR_PREFIX.rstrip()})
            call_id = provider_for(message["session_id"], block["tool_use_id"])
            item = {"type": "function_call_output", "call_id": call_id, "output": output}
            item.update((raw.get("items") or {}).get(str(index)) or raw.get("item") or {})
            items.append(item)
        return items

    def assistant_message(self, message: dict[str, Json]) -> list[Json]:
        items: list[Json] = []
        current: dict[str, Json] | None = None  # the output message item text parts go into
        current_key: Json = None
        session_id = message["session_id"]
        for index, block in enumerate(message.get("content") or []):
            raw = block_raw(message, index)
            critical = self.critical(message, index)
            kind = block.get("type")
            if kind == "text":
                key = json.dumps(raw.get("item") or {}, sort_keys=True)
                if current is None or key != current_key:
                    current = {"role": "assistant", "content": [], **(raw.get("item") or {})}
                    current_key = key
                    items.append(current)
                if raw.get("refusal"):
                    part = {"type": "refusal", "refusal": block.get("text", "")}
                else:
                    part = {"type": "output_text", "text": block.get("text", "")}
                current["content"].append({**part, **(raw.get("part") or {})})
                if raw.get("content_string"):
                    current["content_string"] = True
                continue
            current = None
            if kind == "tool_use":
                arguments = raw.get("arguments")
                if not (isinstance(arguments, str) and _json_equal(arguments, block.get("input"))):
                    arguments = json.dumps(block.get("input") or {}, separators=(",", ":"), ensure_ascii=False)
                item = {
                    "type": "function_call",
                    "call_id": provider_for(session_id, block["id"]),
                    "name": block.get("name"),
                    "arguments": arguments,
                    **(raw.get("item") or {}),
                }
                items.append(item)
            elif kind == "thinking":
                if not from_this_provider(message):
                    self.drop(message, block, "reasoning from another provider cannot be sent back", critical)
                    continue
                item_id = (raw.get("item") or {}).get("id")
                if not item_id:
                    self.drop(
                        message, block, "a reasoning item goes back with its item id, which this block lacks", critical
                    )
                    continue
                text = block.get("text") or ""
                summary = raw.get("summary")
                if not (isinstance(summary, list) and "\n\n".join(p.get("text", "") for p in summary) == text):
                    summary = [{"type": "summary_text", "text": text}] if text else []
                item = {"type": "reasoning", **(raw.get("item") or {}), "summary": summary}
                if block.get("signature"):
                    item["encrypted_content"] = block["signature"]
                items.append(item)
            elif kind == "redacted_thinking":
                self.drop(message, block, "the Responses API has no redacted thinking", critical)
            elif isinstance(kind, str) and kind.startswith(PROVIDER + ":"):
                rest = {k: v for k, v in block.items() if k != "type"}
                items.append({**rest, "type": kind[len(PROVIDER) + 1 :]})
            else:
                self.drop(message, block, f"no {kind} block in a Responses assistant turn", critical)
        out = []
        for item in items:
            if (
                item.pop("content_string", False)
                and len(item["content"]) == 1
                and set(item["content"][0]) == {"type", "text"}
            ):
                item["content"] = item["content"][0]["text"]
            out.append(item)
        return out


def _json_equal(text: str, value: Json) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def render(params: dict[str, Json]) -> dict[str, Json]:
    messages = params.get("messages") or []
    tools = params.get("tools") or []
    options = params.get("options") or {}
    renderer = Renderer(options.get("critical_key") or "critical")
    request_raw = own_raw(options)
    body: dict[str, Json] = {"model": wire_model(options["model"])}
    items: list[Json] = []
    instructions_done = False
    for message in messages:
        role = message.get("role")
        if role == "system":
            rendered = renderer.role_message(message, "system")
            if request_raw.get("instructions") and not instructions_done and not items:
                content = rendered[0]["content"]
                body["instructions"] = (
                    content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
                )
                instructions_done = True
                continue
            items.extend(rendered)
        elif role == "user":
            items.extend(renderer.role_message(message, "user"))
        elif role == "assistant":
            items.extend(renderer.assistant_message(message))
        elif role == "tool":
            items.extend(renderer.tool_message(message))
    if (
        request_raw.get("input_string")
        and len(items) == 1
        and items[0].get("role") == "user"
        and set(items[0]) == {"role", "content"}
        and isinstance(items[0]["content"], str)
    ):
        body["input"] = items[0]["content"]
    else:
        body["input"] = items
    tool_raw = request_raw.get("tools") or {}
    wire_tools = []
    for tool in tools:
        wire_tool = {"type": "function", "name": tool["name"], "description": tool.get("description", "")}
        wire_tool["parameters"] = tool.get("input_schema") or {"type": "object", "properties": {}}
        wire_tool.update(tool_raw.get(tool["name"]) or {})
        wire_tools.append(wire_tool)
    wire_tools.extend(options.get("provider_tools") or [])
    if wire_tools:
        body["tools"] = wire_tools
    if options.get("max_output_tokens") is not None:
        body["max_output_tokens"] = options["max_output_tokens"]
    if options.get("temperature") is not None:
        body["temperature"] = options["temperature"]
    if options.get("stop_sequences"):
        reason = "the Responses API has no stop sequences"
        warn(
            f"{NAME}: dropped option stop_sequences: {reason}",
            {"event": "option_dropped", "adapter": NAME, "option": "stop_sequences", "reason": reason},
        )
    if options.get("output_schema") is not None:
        text = dict(request_raw.get("text") or {})
        fmt = {"type": "json_schema", "name": "output", "strict": True, **(request_raw.get("format") or {})}
        fmt["schema"] = options["output_schema"]
        text["format"] = fmt
        body["text"] = text
    if options.get("stream"):
        body["stream"] = True
    body.update(options.get("extra") or {})
    return {"method": "POST", "path": "/v1/responses", "headers": {"content-type": "application/json"}, "body": body}


# ---------------------------------------------------------------- parse (wire -> canonical)


def stop_reason(response: dict[str, Json], saw_tool_call: bool = False) -> str:
    """The record's table: completed (with a function call: tool_use), incomplete by
    max_output_tokens or unexplained (max_tokens), by content_filter (end_turn), failed, cancelled."""
    status = response.get("status")
    if status == "completed":
        calls = any(isinstance(i, dict) and i.get("type") == "function_call" for i in response.get("output") or [])
        return "tool_use" if calls or saw_tool_call else "end_turn"
    if status == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason")
        return "end_turn" if reason == "content_filter" else "max_tokens"
    if status == "failed":
        return "error"
    if status == "cancelled":
        return "cancelled"
    return "end_turn"


def status_for(reason: str) -> str:
    return reason if reason in ("error", "cancelled") else "complete"


def token_usage(usage: Json) -> dict[str, int] | None:
    """Disjoint buckets: the API's input_tokens include the cached ones (input_tokens_details)."""
    if not isinstance(usage, dict):
        return None
    cached = int((usage.get("input_tokens_details") or {}).get("cached_tokens") or 0)
    total_in = int(usage.get("input_tokens") or 0)
    return {
        "input_tokens": max(total_in - cached, 0),
        "output_tokens": int(usage.get("output_tokens") or 0),
        "cached_input_tokens": cached,
        "cache_creation_input_tokens": 0,
    }


ITEM_KNOWN = {
    "message": ("type", "role", "content"),
    "reasoning": ("type", "summary", "encrypted_content"),
    "function_call": ("type", "call_id", "name", "arguments"),
}


class Assistant:
    """Content blocks (and their provider_raw) built from assistant-side items, as a response's
    output or a request's history holds them."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.content: list[dict[str, Json]] = []
        self.raw: dict[str, Json] = {}

    def add(self, block: dict[str, Json], raw: dict[str, Json]) -> None:
        if raw:
            self.raw[str(len(self.content))] = raw
        self.content.append(block)

    def item(self, item: dict[str, Json]) -> None:
        kind = item.get("type", "message")
        if kind == "message" or ("role" in item and "type" not in item):
            keep = extras(item, ITEM_KNOWN["message"])
            if "type" in item:
                keep["type"] = "message"
            content = item.get("content")
            if isinstance(content, str):
                self.add({"type": "text", "text": content}, {"item": keep, "content_string": True})
                return
            for part in content or []:
                if part.get("type") == "refusal":
                    raw = {"item": keep, "refusal": True, "part": extras(part, ("type", "refusal"))}
                    self.add({"type": "text", "text": part.get("refusal", "")}, _compact(raw))
                elif part.get("type") in ("output_text", "input_text"):
                    raw = {"item": keep, "part": extras(part, ("type", "text"))}
                    self.add({"type": "text", "text": part.get("text", "")}, _compact(raw))
                else:
                    rest = {k: v for k, v in part.items() if k != "type"}
                    self.add({**rest, "type": f"{PROVIDER}:{part.get('type')}"}, {})
        elif kind == "reasoning":
            summary = item.get("summary") or []
            text = "\n\n".join(p.get("text", "") for p in summary if isinstance(p, dict))
            raw = {"item": extras(item, ITEM_KNOWN["reasoning"]), "summary": summary}
            self.add({"type": "thinking", "text": text, "signature": item.get("encrypted_content")}, raw)
        elif kind == "function_call":
            arguments = item.get("arguments") or ""
            try:
                parsed = json.loads(arguments) if arguments else {}
            except ValueError:
                parsed = {}
            if not isinstance(parsed, dict):
                parsed = {}
            canonical = canonical_for(self.session_id, item.get("call_id") or item.get("id") or mint_call_id())
            raw = {"item": extras(item, ITEM_KNOWN["function_call"]), "arguments": arguments}
            self.add({"type": "tool_use", "id": canonical, "name": item.get("name", ""), "input": parsed}, raw)
        else:
            rest = {k: v for k, v in item.items() if k != "type"}
            self.add({**rest, "type": f"{PROVIDER}:{kind}"}, {})


def _compact(raw: dict[str, Json]) -> dict[str, Json]:
    return {k: v for k, v in raw.items() if v not in ({}, None)}


def header(headers: Json, name: str) -> Json:
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return value[0] if isinstance(value, list) and value else value
    return None


ERROR_CODES = {
    "rate_limit_exceeded": "rate_limit",
    "context_length_exceeded": "context_overflow",
    "invalid_api_key": "auth",
    "server_error": "server_error",  # a failed Response's error.code (the Response object's docs)
}
ERROR_TYPES = {"server_error": "server_error"}
TRANSIENT = ("rate_limit", "server_error", "network")


def error_class(status: int | None, error: dict[str, Json]) -> str:
    """The record's body fields first (error.code, then error.type), then contract §6.2's statuses."""
    if error.get("code") in ERROR_CODES:
        return ERROR_CODES[error["code"]]
    if error.get("type") in ERROR_TYPES:
        return ERROR_TYPES[error["type"]]
    if status is None:
        return "other"
    if status == 429:
        return "rate_limit"
    if status in (401, 403):
        return "auth"
    if status == 413:
        return "context_overflow"
    if status == 408:
        return "network"
    if status >= 500:
        return "server_error"
    if status >= 400:
        return "invalid_request"
    return "other"


def retry_after_seconds(headers: Json) -> float | None:
    """OpenAI's `retry-after-ms` (milliseconds, read first by OpenAI's SDKs), else `retry-after` seconds."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            value = float(header(headers, name)) / scale
        except (TypeError, ValueError):
            continue
        if value >= 0:
            return value
    return None


def raise_for_error(status: int, headers: Json, body: Json, context: dict[str, Json]) -> None:
    error = body.get("error") if isinstance(body, dict) and isinstance(body.get("error"), dict) else {}
    message = error.get("message") or f"HTTP {status}"
    klass = error_class(status, error)
    retry_after = retry_after_seconds(headers)
    raise adapter_error(
        klass,
        message,
        provider_status=status,
        request_id=header(headers, "x-request-id") or context.get("request_id"),
        retryable=klass in TRANSIENT,
        retry_after_seconds=retry_after,
    )


def decode_body(response: dict[str, Json]) -> Json:
    if "body_base64" in response:
        text = base64.b64decode(response["body_base64"]).decode("utf-8", "replace")
        try:
            return json.loads(text)
        except ValueError:
            return text
    return response.get("body")


def parse(params: dict[str, Json]) -> dict[str, Json]:
    response = params.get("response") or {}
    context = params.get("context") or {}
    status = int(response.get("status") or 200)
    body = decode_body(response)
    # an HTTP error, an error body, or a Response that says it failed (`status: failed` and
    # its `error`): the body reports an error, so the answer is an adapter_error
    failed = isinstance(body, dict) and body.get("status") == "failed"
    if status >= 400 or (isinstance(body, dict) and isinstance(body.get("error"), dict)) or failed:
        raise_for_error(status, response.get("headers"), body, context)
    if not isinstance(body, dict) or not isinstance(body.get("output"), list):
        raise ProtocolError({"kind": "wire_format", "message": "a Response object has an `output` list"})
    session_id = context["session_id"]
    built = Assistant(session_id)
    for item in body["output"]:
        if isinstance(item, dict):
            built.item(item)
    if not built.content:
        built.content.append({"type": "text", "text": ""})
    model = canonical_model(body["model"]) if body.get("model") else canonical_model(context.get("model") or "unknown")
    usage = token_usage(body.get("usage"))
    reason = stop_reason(body)
    raw: dict[str, Json] = {"id": body.get("id"), "status": body.get("status")}
    if body.get("incomplete_details"):
        raw["incomplete_details"] = body["incomplete_details"]
    if body.get("error"):
        raw["error"] = body["error"]
    if built.raw:
        raw["blocks"] = built.raw
    message = {
        "id": context.get("message_id") or ulid(),
        "session_id": session_id,
        "role": "assistant",
        "content": built.content,
        "metadata": {
            **assistant_metadata(model),
            "usage": None
            if usage is None
            else {
                **usage,
                "cost_usd": "0",
                "pricing_version": "unpriced",
                "latency_ms": int(context.get("latency_ms") or 0),
            },
            "status": status_for(reason),
            "provider_raw": {NAME: raw},
        },
        "created_at": context.get("created_at") or now_timestamp(),
        "schema_version": 1,
    }
    return {"message": message}


# ---------------------------------------------------------------- streams


class Stream:
    def __init__(self, context: dict[str, Json]) -> None:
        self.context = context
        self.message_id: str = context.get("message_id") or ulid()
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.buffer = ""
        self.events: list[dict[str, Json]] = []  # every event answered, in order (for cancel)
        self.over = False  # a message_complete was produced, or the stream failed
        self.closed = False  # stream_close answered, or a feed failed: over for a cancel too
        self.started = False
        self.blocks: list[dict[str, Json]] = []
        self.slots: dict[Json, int] = {}  # (output_index, content_index) or output_index -> block index
        self.saw_tool_call = False
        self.event_index = 0
        self.model = context.get("model") or "unknown"

    def start(self, out: list[Json], model: Json = None) -> None:
        if self.started:
            return
        self.started = True
        if model:
            self.model = model
        out.append(
            {
                "type": "message_start",
                "message_id": self.message_id,
                "role": "assistant",
                "model": canonical_model(self.model),
            }
        )

    def slot(self, key: Json, block: dict[str, Json]) -> int:
        if key not in self.slots:
            self.slots[key] = len(self.blocks)
            self.blocks.append(block)
        return self.slots[key]

    def final_content(self) -> list[Json]:
        content = []
        for block in self.blocks:
            kind = block["type"]
            if kind == "text":
                content.append({"type": "text", "text": block["text"]})
            elif kind == "thinking":
                content.append({"type": "thinking", "text": block["text"], "signature": block.get("signature")})
            elif kind == "tool_use":
                content.append(
                    {
                        "type": "tool_use",
                        "id": block["id"],
                        "name": block["name"],
                        "input": block.get("input", parse_args(block["partial"])),
                    }
                )
            else:
                content.append(block["raw"])
        return content or [{"type": "text", "text": ""}]

    def complete(self, reason: str, usage: Json) -> dict[str, Json]:
        self.over = True
        return {
            "type": "message_complete",
            "message_id": self.message_id,
            "stop_reason": reason,
            "final_content": self.final_content(),
            "usage": usage,
        }

    def text_block(self, out: list[Json], key: Json, text: str) -> None:
        index = self.slot(key, {"type": "text", "text": ""})
        if text:
            self.blocks[index]["text"] += text
            out.append(
                {"type": "text_delta", "message_id": self.message_id, "content_block_index": index, "text": text}
            )

    def text_done(self, out: list[Json], key: Json, text: Json) -> None:
        """A done event's whole text: the part of it no delta brought yet."""
        index = self.slot(key, {"type": "text", "text": ""})
        have = self.blocks[index]["text"]
        if isinstance(text, str) and text.startswith(have) and len(text) > len(have):
            self.text_block(out, key, text[len(have) :])

    def tool_end(self, index: int) -> dict[str, Json]:
        block = self.blocks[index]
        block["input"] = parse_args(block["partial"])
        block["open"] = False
        return {
            "type": "tool_use_end",
            "message_id": self.message_id,
            "content_block_index": index,
            "tool_use_id": block["id"],
            "final_input": block["input"],
        }

    def on_item_added(self, out: list[Json], data: dict[str, Json]) -> None:
        item = data.get("item") or {}
        output_index = data.get("output_index")
        kind = item.get("type")
        if kind == "function_call":
            self.saw_tool_call = True
            canonical = canonical_for(
                self.context["session_id"], item.get("call_id") or item.get("id") or mint_call_id()
            )
            index = self.slot(
                output_index,
                {"type": "tool_use", "id": canonical, "name": item.get("name", ""), "partial": "", "open": True},
            )
            out.append(
                {
                    "type": "tool_use_start",
                    "message_id": self.message_id,
                    "content_block_index": index,
                    "tool_use_id": canonical,
                    "tool_name": item.get("name", ""),
                }
            )
            if item.get("arguments"):
                self.tool_delta(out, output_index, item["arguments"])
        elif kind == "reasoning":
            self.slot(output_index, {"type": "thinking", "text": "", "signature": None, "parts": 0})
            for n, part in enumerate(item.get("summary") or []):
                self.summary_delta(out, output_index, n, part.get("text", ""))
        elif kind not in ("message", None):
            rest = {k: v for k, v in item.items() if k != "type"}
            self.slot(output_index, {"type": "other", "raw": {**rest, "type": f"{PROVIDER}:{kind}"}})

    def tool_delta(self, out: list[Json], output_index: Json, fragment: str) -> None:
        index = self.slots.get(output_index)
        if index is None or self.blocks[index]["type"] != "tool_use":
            raise self.wire_format(f"function call arguments for output item {output_index}, which is no function call")
        block = self.blocks[index]
        block["partial"] += fragment
        if fragment:
            out.append(
                {
                    "type": "tool_use_input_delta",
                    "message_id": self.message_id,
                    "content_block_index": index,
                    "tool_use_id": block["id"],
                    "partial_json": fragment,
                }
            )

    def summary_delta(self, out: list[Json], output_index: Json, summary_index: Json, text: str) -> None:
        index = self.slot(output_index, {"type": "thinking", "text": "", "signature": None, "parts": 0})
        block = self.blocks[index]
        n = summary_index if isinstance(summary_index, int) else 0
        piece = ""
        while block["parts"] <= n:  # a new summary part: parse joins the parts with a blank line
            piece += "\n\n" if block["parts"] > 0 else ""
            block["parts"] += 1
        piece += text
        if piece:
            block["text"] += piece
            out.append(
                {
                    "type": "thinking_delta",
                    "message_id": self.message_id,
                    "content_block_index": index,
                    "text": piece,
                    "signature": None,
                }
            )

    def on_item_done(self, out: list[Json], data: dict[str, Json]) -> None:
        item = data.get("item") or {}
        output_index = data.get("output_index")
        kind = item.get("type")
        if kind == "function_call":
            index = self.slots.get(output_index)
            if index is None:
                self.on_item_added(out, data)
                index = self.slots[output_index]
            block = self.blocks[index]
            if not block["partial"] and item.get("arguments"):
                self.tool_delta(out, output_index, item["arguments"])
            if block.get("open"):
                out.append(self.tool_end(index))
        elif kind == "reasoning":
            index = self.slot(output_index, {"type": "thinking", "text": "", "signature": None, "parts": 0})
            block = self.blocks[index]
            summary = item.get("summary") or []
            whole = "\n\n".join(p.get("text", "") for p in summary if isinstance(p, dict))
            if whole.startswith(block["text"]) and len(whole) > len(block["text"]):
                rest = whole[len(block["text"]) :]
                block["text"] = whole
                out.append(
                    {
                        "type": "thinking_delta",
                        "message_id": self.message_id,
                        "content_block_index": index,
                        "text": rest,
                        "signature": None,
                    }
                )
            block["signature"] = item.get("encrypted_content")
            out.append(
                {
                    "type": "thinking_delta",
                    "message_id": self.message_id,
                    "content_block_index": index,
                    "text": "",
                    "signature": block["signature"],
                }
            )
        elif kind == "message":
            for n, part in enumerate(item.get("content") or []):
                if part.get("type") == "output_text":
                    self.text_done(out, (output_index, n), part.get("text"))
                elif part.get("type") == "refusal":
                    self.text_done(out, (output_index, n), part.get("refusal"))

    def on_event(self, out: list[Json], name: Json, data: dict[str, Json]) -> None:
        kind = data.get("type") or name
        if kind in ("response.created", "response.in_progress", "response.queued"):
            self.start(out, (data.get("response") or {}).get("model"))
            return
        if kind in ("response.completed", "response.incomplete", "response.failed", "response.cancelled"):
            response = data.get("response") or {}
            self.start(out, response.get("model"))
            for index, block in enumerate(self.blocks):
                if block["type"] == "tool_use" and block.get("open"):
                    out.append(self.tool_end(index))
            reason = stop_reason(response, self.saw_tool_call)
            out.append(self.complete(reason, token_usage(response.get("usage"))))
            if kind == "response.failed":  # the provider reported an error mid-stream (contract §6.5)
                error = response.get("error") if isinstance(response.get("error"), dict) else {}
                klass = error_class(None, error)
                raise adapter_error(
                    klass, str(error.get("message") or "the response failed"), retryable=klass in TRANSIENT
                )
            return
        if kind == "error":
            self.start(out)
            error = data.get("error") if isinstance(data.get("error"), dict) else data
            klass = error_class(None, error)
            out.append(self.complete("error", None))
            raise adapter_error(klass, str(error.get("message") or "stream error"), retryable=klass in TRANSIENT)
        self.start(out)
        output_index = data.get("output_index")
        if kind == "response.output_item.added":
            self.on_item_added(out, data)
        elif kind == "response.output_item.done":
            self.on_item_done(out, data)
        elif kind == "response.content_part.added":
            self.text_block(out, (output_index, data.get("content_index")), "")
        elif kind in ("response.output_text.delta", "response.refusal.delta"):
            self.text_block(out, (output_index, data.get("content_index")), data.get("delta") or "")
        elif kind == "response.output_text.done":
            self.text_done(out, (output_index, data.get("content_index")), data.get("text"))
        elif kind == "response.refusal.done":
            self.text_done(out, (output_index, data.get("content_index")), data.get("refusal"))
        elif kind == "response.function_call_arguments.delta":
            self.tool_delta(out, output_index, data.get("delta") or "")
        elif kind == "response.reasoning_summary_part.added":
            self.summary_delta(out, output_index, data.get("summary_index"), "")
        elif kind == "response.reasoning_summary_text.delta":
            self.summary_delta(out, output_index, data.get("summary_index"), data.get("delta") or "")
        # other events (content_part.done, *.done with nothing new, tool progress) add nothing

    def wire_format(self, message: str) -> ProtocolError:
        return ProtocolError({"kind": "wire_format", "message": message, "event": self.event_index})

    def drain(self, out: list[Json], final: bool) -> None:
        text = self.buffer.replace("\r\n", "\n").replace("\r", "\n")
        frames = text.split("\n\n")
        self.buffer = "" if final else frames.pop()
        for frame in frames:
            if not frame.strip():
                continue
            name = None
            data = []
            for line in frame.split("\n"):
                if line.startswith(":"):
                    continue
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "event":
                    name = value
                elif field == "data":
                    data.append(value)
            if not data:
                continue
            joined = "\n".join(data)
            if joined.strip() == "[DONE]":
                continue
            try:
                parsed = json.loads(joined)
            except ValueError:
                raise self.wire_format(f"event {self.event_index} is not JSON") from None
            if not isinstance(parsed, dict):
                raise self.wire_format(f"event {self.event_index} is not a JSON object")
            if not self.over:
                self.on_event(out, name, parsed)
            self.event_index += 1


def parse_args(text: str) -> dict[str, Json]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


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
        if not any(e.get("type") == "message_complete" for e in out) and not stream.over:
            stream.start(out)
            out.append(stream.complete("error", None))
        stream.over = stream.closed = True
        stream.events.extend(out)
        raise ProtocolError({**{k: v for k, v in exc.error.items() if k != "events"}, "events": out}) from None
    stream.events.extend(out)
    return {"events": out}


def stream_open(params: dict[str, Json]) -> dict[str, Json]:
    STREAMS[params["stream_id"]] = Stream(params.get("context") or {})
    return {"events": []}


def stream_feed(params: dict[str, Json]) -> dict[str, Json]:
    stream = stream_for(params["stream_id"])
    out: list[Json] = []
    if stream.closed:
        return {"events": []}

    def step() -> None:
        stream.buffer += stream.decoder.decode(base64.b64decode(params.get("data") or ""))
        stream.drain(out, False)

    return with_events(stream, out, step)


def stream_close(params: dict[str, Json]) -> dict[str, Json]:
    stream = stream_for(params["stream_id"])
    if params.get("abandon"):
        STREAMS.pop(params["stream_id"], None)
        return {"events": []}
    out: list[Json] = []

    def step() -> None:
        if stream.closed:
            return
        stream.buffer += stream.decoder.decode(b"", final=True)
        stream.drain(out, True)
        if not stream.over:
            raise stream.wire_format("the stream ended before response.completed (or incomplete, failed)")

    try:
        return with_events(stream, out, step)
    finally:
        stream.over = stream.closed = True


# ---------------------------------------------------------------- cancel (contract §5.3)


def cancel(params: dict[str, Json]) -> dict[str, Json]:
    request_id = params.get("request_id")
    delivered = int(params.get("delivered") or 0)
    for stream in STREAMS.values():
        if stream.context.get("request_id") != request_id:
            continue
        if stream.closed:
            return {"in_flight": False, "events": []}
        replay = Stream(stream.context)
        replay.message_id = stream.message_id
        for event in stream.events[:delivered]:
            replay_event(replay, event)
        events = [replay.tool_end(i) for i, b in enumerate(replay.blocks) if b["type"] == "tool_use" and b.get("open")]
        events.append(replay.complete("cancelled", None))
        stream.over = stream.closed = True
        return {"in_flight": True, "events": events}
    return {"in_flight": False, "events": []}


def replay_event(replay: Stream, event: dict[str, Json]) -> None:
    index = event.get("content_block_index")
    while isinstance(index, int) and len(replay.blocks) <= index:
        replay.blocks.append({"type": "text", "text": ""})
    kind = event.get("type")
    if kind == "text_delta":
        replay.blocks[index]["text"] += event["text"]
    elif kind == "thinking_delta":
        block = replay.blocks[index]
        if block["type"] != "thinking":
            replay.blocks[index] = block = {"type": "thinking", "text": "", "signature": None}
        block["text"] += event["text"]
        if event.get("signature"):
            block["signature"] = event["signature"]
    elif kind == "tool_use_start":
        replay.blocks[index] = {
            "type": "tool_use",
            "id": event["tool_use_id"],
            "name": event["tool_name"],
            "partial": "",
            "open": True,
        }
    elif kind == "tool_use_input_delta":
        replay.blocks[index]["partial"] += event["partial_json"]
    elif kind == "tool_use_end":
        replay.blocks[index]["input"] = event["final_input"]
        replay.blocks[index]["open"] = False


# ---------------------------------------------------------------- read_request (wire -> canonical)


def guess_media(url: str) -> str:
    match = re.search(r"\.(png|gif|webp|jpe?g)(?:$|[?#])", url or "", re.IGNORECASE)
    if not match:
        return "image/jpeg"
    ext = match.group(1).lower()
    return "image/jpeg" if ext in ("jpg", "jpeg") else f"image/{ext}"


DATA_URL = re.compile(r"\Adata:([^;,]+);base64,(.*)\Z", re.DOTALL)


def read_part(part: Json) -> tuple[dict[str, Json], dict[str, Json]]:
    if isinstance(part, str):
        return {"type": "text", "text": part}, {}
    kind = part.get("type")
    if kind in ("input_text", "output_text"):
        return {"type": "text", "text": part.get("text", "")}, _compact({"part": extras(part, ("type", "text"))})
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        url = part["image_url"]
        raw = _compact({"part": extras(part, ("type", "image_url"))})
        match = DATA_URL.match(url)
        if match:
            return {
                "type": "image",
                "source": {"kind": "base64", "data": match.group(2)},
                "media_type": match.group(1),
            }, raw
        return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": guess_media(url)}, raw
    rest = {k: v for k, v in part.items() if k != "type"}
    return {**rest, "type": f"{PROVIDER}:{kind}"}, {}


def new_message(session_id: str, role: str, content: list[Json], metadata: dict[str, Json]) -> dict[str, Json]:
    return {
        "id": ulid(),
        "session_id": session_id,
        "role": role,
        "content": content,
        "metadata": {"status": "complete", **metadata},
        "created_at": now_timestamp(),
        "schema_version": 1,
    }


def with_raw(metadata: dict[str, Json], raw: dict[str, Json]) -> dict[str, Json]:
    raw = _compact(raw)
    if raw:
        metadata["provider_raw"] = {NAME: raw}
    return metadata


def read_role_message(session_id: str, item: dict[str, Json]) -> dict[str, Json]:
    role = item.get("role")
    canonical_role = "system" if role in ("system", "developer") else "user"
    content = item.get("content")
    blocks: list[Json] = []
    block_raws: dict[str, Json] = {}
    parts = [content] if isinstance(content, str) else (content or [])
    for part in parts:
        block, raw = read_part(part)
        if raw:
            block_raws[str(len(blocks))] = raw
        blocks.append(block)
    raw_msg: dict[str, Json] = {
        "item": extras(item, ("role", "content")),
        "content_string": isinstance(content, str) or None,
        "blocks": block_raws,
    }
    if role != canonical_role:
        raw_msg["role"] = role
    return new_message(session_id, canonical_role, blocks, with_raw({}, raw_msg))


def read_tool_output(session_id: str, item: dict[str, Json]) -> dict[str, Json]:
    output = item.get("output")
    content: list[Json] = []
    is_error = False
    if isinstance(output, str):
        if output.startswith(ERROR_PREFIX):
            is_error, output = True, output[len(ERROR_PREFIX) :]
        content.append({"type": "text", "text": output})
    else:
        parts = list(output or [])
        if parts and parts[0].get("type") == "input_text" and parts[0].get("text") == ERROR_PREFIX.rstrip():
            is_error, parts = True, parts[1:]
        content.extend(read_part(p)[0] for p in parts)
    tool_use_id = canonical_for(session_id, item.get("call_id", ""))
    result = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": is_error}
    raw = {"item": extras(item, ("type", "call_id", "output")), "output_list": isinstance(output, list) or None}
    return new_message(session_id, "tool", [result], with_raw({"parent_tool_use_id": tool_use_id}, raw))


def read_request(params: dict[str, Json]) -> dict[str, Json]:
    body = params.get("body")
    if not isinstance(body, dict):
        raise ProtocolError({"kind": "wire_format", "message": "a Responses request body is a JSON object"})
    session_id = params.get("session_id") or ulid()
    model = canonical_model(str(body.get("model", "unknown")))
    messages: list[Json] = []
    request_raw: dict[str, Json] = {}
    if isinstance(body.get("instructions"), str):
        request_raw["instructions"] = True
        messages.append(new_message(session_id, "system", [{"type": "text", "text": body["instructions"]}], {}))
    items = body.get("input")
    if isinstance(items, str):
        request_raw["input_string"] = True
        items = [{"role": "user", "content": items}]
    assistant: Assistant | None = None

    def flush() -> None:
        nonlocal assistant
        if assistant is not None:
            metadata = assistant_metadata(model)
            messages.append(
                new_message(session_id, "assistant", assistant.content, with_raw(metadata, {"blocks": assistant.raw}))
            )
            assistant = None

    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        assistant_side = (
            (item.get("role") == "assistant")
            or kind in ("reasoning", "function_call")
            or (kind not in (None, "message", "function_call_output") and "role" not in item)
        )
        if assistant_side:
            if assistant is None:
                assistant = Assistant(session_id)
            assistant.item(item)
            continue
        flush()
        if kind == "function_call_output":
            messages.append(read_tool_output(session_id, item))
        else:
            messages.append(read_role_message(session_id, item))
    flush()
    tools: list[Json] = []
    provider_tools: list[Json] = []
    tool_raw: dict[str, Json] = {}
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and tool.get("type") == "function":
            tools.append(
                {
                    "name": tool.get("name", ""),
                    "description": tool.get("description") or "",
                    "input_schema": tool.get("parameters") or {"type": "object", "properties": {}},
                    "side_effects": "none",
                }
            )
            keep = extras(tool, ("type", "name", "description", "parameters"))
            if keep:
                tool_raw[tool.get("name", "")] = keep
        else:
            provider_tools.append(tool)
    if tool_raw:
        request_raw["tools"] = tool_raw
    known = {"model", "input", "instructions", "tools", "max_output_tokens", "temperature", "stream"}
    extra = {k: v for k, v in body.items() if k not in known}
    output_schema = None
    text = extra.get("text")
    if isinstance(text, dict) and isinstance(text.get("format"), dict) and text["format"].get("type") == "json_schema":
        fmt = dict(text["format"])
        output_schema = fmt.pop("schema", None)
        del extra["text"]
        request_raw["format"] = {k: v for k, v in fmt.items()}
        rest = {k: v for k, v in text.items() if k != "format"}
        if rest:
            request_raw["text"] = rest
    options = {
        "model": model,
        "max_output_tokens": body.get("max_output_tokens"),
        "temperature": body.get("temperature"),
        "stop_sequences": [],
        "stream": body.get("stream") is True,
        "output_schema": output_schema,
        "extra": extra,
        "provider_tools": provider_tools,
        "provider_raw": {NAME: request_raw} if request_raw else {},
    }
    return {"messages": messages, "tools": tools, "options": options}


# ---------------------------------------------------------------- estimate


IMAGE_TOKENS = 85  # OpenAI's vision guide: a low-detail image costs 85 tokens (a floor)
MESSAGE_TOKENS = 4  # a message's role and framing


def block_chars(block: Json) -> tuple[int, int]:
    """The characters a block puts before the model (four to a token), and the images it holds."""
    if not isinstance(block, dict):
        return 0, 0
    kind = block.get("type")
    if kind == "thinking" and block.get("signature"):
        # encrypted_content is the reasoning itself, which the API decrypts into the context
        # (its summary is not what the model reads): about one token per twelve base64
        # characters, the ratio of real gpt-5 / gpt-5.5 tool-call continuations' usage
        return len(block["signature"]) * 4 // 12, 0
    if kind in ("text", "thinking"):
        return len(block.get("text") or ""), 0
    if kind == "image":
        return 0, 1
    if kind == "tool_use":
        return len(block.get("name") or "") + len(json.dumps(block.get("input") or {}, ensure_ascii=False)), 0
    if kind == "tool_result":
        chars = images = 0
        for inner in block.get("content") or []:
            c, i = block_chars(inner)
            chars, images = chars + c, images + i
        return chars, images
    if kind == "redacted_thinking":
        return 0, 0
    return len(json.dumps(block, ensure_ascii=False)), 0


def estimate(params: dict[str, Json]) -> dict[str, Json]:
    """About four characters a token (OpenAI's rule of thumb) over what the model reads: the
    text, tool calls and their results, tool definitions; a flat count per image and message."""
    chars = images = messages = 0
    for message in params.get("messages") or []:
        messages += 1
        for block in message.get("content") or []:
            c, i = block_chars(block)
            chars, images = chars + c, images + i
    for tool in params.get("tools") or []:
        chars += len(tool.get("name") or "") + len(tool.get("description") or "")
        chars += len(json.dumps(tool.get("input_schema") or {}, ensure_ascii=False))
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
            "wire_api": "openai-responses",
            "language": "python",
            "language_version": "python " + sys.version.split()[0],
            "capabilities": CAPABILITIES,
            "provider_tool_id": "^call_[A-Za-z0-9_-]+$",
            "operations": ["render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"],
            "cassette_folders": ["openai-responses"],
            "tool_errors_in_band": f"an error result's output starts with {ERROR_PREFIX!r} (read back as is_error)",
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
            sys.stderr.write(f"responses_child: standard input line {number} is not UTF-8 JSON: {exc}\n")
            return 2
        if not isinstance(request, dict):
            sys.stderr.write(f"responses_child: standard input line {number} is not a JSON object\n")
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
