"""What the suite knows about the two wire APIs it has reference adapters for.

`normalize(api, body)` maps a request body to a form in which two bodies the provider
treats identically compare equal. Each step is a difference TC802 accepts between a
recorded request and the same request read into canonical form and rendered back, and
each is listed in ACCEPTED_DIFFERENCES with the reason. Bodies of other APIs are compared
exactly.

`inspect(api, body)` reads placement facts (where the system prompt went, which tool ids
pair) straight from a wire body, so the suite does not rely only on an adapter's own
`from_wire_request` to judge that adapter.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
from dataclasses import dataclass, field
from typing import Any

ACCEPTED_DIFFERENCES: dict[str, list[str]] = {
    "anthropic-messages": [
        "`content` given as a string equals a list holding one text block (the Messages API "
        "documents the string as shorthand), for messages and for tool_result content",
        "consecutive messages of the same role are merged (the API combines consecutive same-role turns)",
        "`is_error: false` equals an absent `is_error` (false is the default)",
        "`stream: false` equals an absent `stream` (false is the default)",
        'a tool `description` of "" equals an absent one (canonical ToolDefinition requires it)',
        "`system` given as a string equals a list holding one text block",
    ],
    "openai-chat-completions": [
        "a `content` string equals a list holding one text part (user, system, tool messages)",
        "`function.arguments` strings are compared as the JSON objects they encode (canonical "
        "input is an object; whitespace and key order are not semantic)",
        "`stream_options.include_usage: true` is added to streaming requests (adapter contract "
        "§7.2 requires requesting usage)",
        "`stream: false` equals an absent `stream`",
        'assistant `content` of "", null or absent are equal when the message has tool_calls',
        'a tool `description` of "" equals an absent one',
    ],
}


def normalize(api: str | None, body: Any) -> Any:
    if not isinstance(body, dict):
        return body
    b = copy.deepcopy(body)
    if api == "anthropic-messages":
        return _anthropic(b)
    if api == "openai-chat-completions":
        return _openai(b)
    return b


def _text_list(content: Any) -> Any:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _strip_description(tools: Any, key: str | None = None) -> None:
    for t in tools or []:
        target = t.get(key) if key else t
        if isinstance(target, dict) and target.get("description") == "":
            del target["description"]


def _anthropic(b: dict[str, Any]) -> dict[str, Any]:
    if b.get("stream") is False:
        del b["stream"]
    if "system" in b:
        b["system"] = _text_list(b["system"])
    merged: list[dict[str, Any]] = []
    for m in b.get("messages") or []:
        content = _text_list(m.get("content"))
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                block["content"] = _text_list(block.get("content", []))
                if block.get("is_error") is False:
                    del block["is_error"]
        if merged and merged[-1].get("role") == m.get("role") and isinstance(content, list):
            merged[-1]["content"] = [*merged[-1]["content"], *content]
        else:
            merged.append({**m, "content": content})
    if "messages" in b:
        b["messages"] = merged
    _strip_description(b.get("tools"))
    return b


def _openai(b: dict[str, Any]) -> dict[str, Any]:
    if b.get("stream") is False:
        del b["stream"]
    opts = b.get("stream_options")
    if isinstance(opts, dict):
        opts.pop("include_usage", None)
        if not opts:
            del b["stream_options"]
    for m in b.get("messages") or []:
        c = m.get("content")
        if m.get("role") in ("system", "developer", "tool") and isinstance(c, list):
            m["content"] = "".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
        elif m.get("role") == "user":
            m["content"] = _text_list(c)
        if m.get("role") == "assistant":
            if m.get("tool_calls") and m.get("content") in ("", None):
                m.pop("content", None)
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                if isinstance(fn.get("arguments"), str):
                    with contextlib.suppress(ValueError):
                        fn["arguments"] = json.loads(fn["arguments"])
    _strip_description(b.get("tools"), "function")
    return b


def diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Paths where two JSON values differ (first 20)."""
    out: list[str] = []
    _diff(a, b, path, out)
    return out[:20]


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if len(out) >= 20:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{path}/{k}: only in rendered ({json.dumps(b[k])[:60]})")
            elif k not in b:
                out.append(f"{path}/{k}: missing from rendered (recorded {json.dumps(a[k])[:60]})")
            else:
                _diff(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items recorded, {len(b)} rendered")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _diff(x, y, f"{path}/{i}", out)
    elif a != b or (type(a) is not type(b) and not (isinstance(a, int | float) and isinstance(b, int | float))):
        out.append(f"{path}: recorded {json.dumps(a)[:60]}, rendered {json.dumps(b)[:60]}")


@dataclass
class WireFacts:
    """Facts read from a request body of a known API."""

    system_top_level: str | None = None
    system_in_messages: list[int] = field(default_factory=list)
    tool_use_ids: list[str] = field(default_factory=list)
    tool_result_ids: list[str] = field(default_factory=list)
    unpaired_results: list[str] = field(default_factory=list)


def inspect(api: str | None, body: Any) -> WireFacts | None:
    if not isinstance(body, dict):
        return None
    facts = WireFacts()
    msgs = body.get("messages") or []
    if api == "anthropic-messages":
        s = body.get("system")
        facts.system_top_level = (
            s if isinstance(s, str) else "\n\n".join(str(x.get("text", "")) for x in s) if isinstance(s, list) else None
        )
        seen: set[str] = set()
        for i, m in enumerate(msgs):
            if m.get("role") == "system":
                facts.system_in_messages.append(i)
            for blk in m.get("content") if isinstance(m.get("content"), list) else []:
                if blk.get("type") == "tool_use":
                    facts.tool_use_ids.append(str(blk.get("id")))
                    seen.add(str(blk.get("id")))
                elif blk.get("type") == "tool_result":
                    tid = str(blk.get("tool_use_id"))
                    facts.tool_result_ids.append(tid)
                    if tid not in seen:
                        facts.unpaired_results.append(tid)
        return facts
    if api == "openai-chat-completions":
        seen = set()
        for i, m in enumerate(msgs):
            if m.get("role") in ("system", "developer"):
                facts.system_in_messages.append(i)
            for call in m.get("tool_calls") or []:
                facts.tool_use_ids.append(str(call.get("id")))
                seen.add(str(call.get("id")))
            if m.get("role") == "tool":
                tid = str(m.get("tool_call_id"))
                facts.tool_result_ids.append(tid)
                if tid not in seen:
                    facts.unpaired_results.append(tid)
        return facts
    return None


# provider tool-id rules the suite knows independently of what adapters declare (TC304)
def provider_id_problem(api: str | None, provider_id: str) -> str | None:
    import re

    if api == "anthropic-messages" and not re.fullmatch(r"[a-zA-Z0-9_-]+", provider_id):
        return f"{provider_id!r} does not match Anthropic's ^[a-zA-Z0-9_-]+$"
    if api == "openai-chat-completions" and not 0 < len(provider_id) <= 40:
        return f"{provider_id!r} is {len(provider_id)} characters; OpenAI allows at most 40"
    return None


# Minimal request shapes of the two known APIs (TC104): the structure their references
# document, enough to catch a malformed body (arguments not a string, a tool result
# without its id, a role the API does not have). Kept here rather than under schemas/:
# they describe third-party wire formats the suite checks, not a turnspec format.
_STR = {"type": "string"}
_ANTHROPIC_BLOCK = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": _STR},
    "allOf": [
        {
            "if": {"properties": {"type": {"const": "text"}}},
            "then": {"required": ["text"], "properties": {"text": _STR}},
        },
        {
            "if": {"properties": {"type": {"const": "image"}}},
            "then": {
                "required": ["source"],
                "properties": {"source": {"type": "object", "required": ["type"]}},
            },
        },
        {
            "if": {"properties": {"type": {"const": "tool_use"}}},
            "then": {
                "required": ["id", "name", "input"],
                "properties": {
                    "id": {"type": "string", "pattern": "^[a-zA-Z0-9_-]+$"},
                    "name": _STR,
                    "input": {"type": "object"},
                },
            },
        },
        {
            "if": {"properties": {"type": {"const": "tool_result"}}},
            "then": {
                "required": ["tool_use_id"],
                "properties": {
                    "tool_use_id": {"type": "string", "pattern": "^[a-zA-Z0-9_-]+$"},
                    "content": {"type": ["string", "array"]},
                    "is_error": {"type": "boolean"},
                },
            },
        },
        {
            "if": {"properties": {"type": {"const": "thinking"}}},
            "then": {
                "required": ["thinking", "signature"],
                "properties": {"thinking": _STR, "signature": _STR},
            },
        },
        {
            "if": {"properties": {"type": {"const": "redacted_thinking"}}},
            "then": {"required": ["data"], "properties": {"data": _STR}},
        },
    ],
}
REQUEST_SHAPES: dict[str, dict[str, Any]] = {
    "anthropic-messages": {
        "type": "object",
        "required": ["model", "max_tokens", "messages"],
        "properties": {
            "model": _STR,
            "max_tokens": {"type": "integer", "minimum": 1},
            "system": {
                "type": ["string", "array"],
                "items": {"type": "object", "required": ["type", "text"]},
            },
            "messages": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["role", "content"],
                    "properties": {
                        "role": {"enum": ["user", "assistant"]},
                        "content": {"type": ["string", "array"], "items": _ANTHROPIC_BLOCK},
                    },
                },
            },
            "tools": {"type": "array", "items": {"type": "object", "required": ["name"]}},
            "stream": {"type": "boolean"},
            "stop_sequences": {"type": "array", "items": _STR},
        },
    },
    "openai-chat-completions": {
        "type": "object",
        "required": ["model", "messages"],
        "properties": {
            "model": _STR,
            "messages": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["role"],
                    "properties": {
                        "role": {"enum": ["system", "developer", "user", "assistant", "tool", "function"]},
                        "content": {"type": ["string", "array", "null"]},
                        "tool_call_id": {"type": "string", "maxLength": 40},
                        "tool_calls": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["id", "type", "function"],
                                "properties": {
                                    "id": {"type": "string", "minLength": 1, "maxLength": 40},
                                    "type": {"const": "function"},
                                    "function": {
                                        "type": "object",
                                        "required": ["name", "arguments"],
                                        "properties": {"name": _STR, "arguments": _STR},
                                    },
                                },
                            },
                        },
                    },
                    "allOf": [
                        {
                            "if": {"properties": {"role": {"const": "tool"}}},
                            "then": {"required": ["tool_call_id", "content"]},
                        }
                    ],
                },
            },
            "tools": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["type", "function"],
                    "properties": {
                        "function": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"parameters": {"type": "object"}},
                        }
                    },
                },
            },
            "stream": {"type": "boolean"},
        },
    },
}


@functools.lru_cache(maxsize=8)
def _shape_validator(api: str) -> Any:
    import jsonschema

    return jsonschema.Draft202012Validator(REQUEST_SHAPES[api])


def shape_problems(api: str | None, body: Any) -> list[str]:
    """Where `body` departs from the documented request shape of `api` (known APIs only)."""
    if str(api) not in REQUEST_SHAPES:
        return []
    v = _shape_validator(str(api))
    return [f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:120]}" for e in v.iter_errors(body)][:5]
