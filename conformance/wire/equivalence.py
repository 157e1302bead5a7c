"""Request bodies a provider treats alike, made equal: the `normalize_request` of a record.

TC802 reads a recorded request into canonical form, renders it back and compares the two.
Each step below is a difference the provider's documentation says is not one (a string
is shorthand for a one-text-block list, a default value equals an absent one...), listed
with its reason in the matching `*_DIFFERENCES` tuple, which a record carries as
`accepted_differences` and the report prints. A record without `normalize_request` is
compared exactly.
"""

from __future__ import annotations

import contextlib
import copy
import json
from typing import Any

from .api import JsonBody

ANTHROPIC_MESSAGES_DIFFERENCES: tuple[str, ...] = (
    "`content` given as a string equals a list holding one text block (the Messages API "
    "documents the string as shorthand), for messages and for tool_result content",
    "consecutive messages of the same role are merged (the API combines consecutive same-role turns)",
    "`is_error: false` equals an absent `is_error` (false is the default)",
    "`stream: false` equals an absent `stream` (false is the default)",
    'a tool `description` of "" equals an absent one (canonical ToolDefinition requires it)',
    "`system` given as a string equals a list holding one text block",
)
OPENAI_CHAT_DIFFERENCES: tuple[str, ...] = (
    "a `content` string equals a list holding one text part (user, system, tool messages)",
    "`function.arguments` strings are compared as the JSON objects they encode (canonical "
    "input is an object; whitespace and key order are not semantic)",
    "`stream_options.include_usage: true` is added to streaming requests (adapter contract "
    "§7.2 requires requesting usage)",
    "`stream: false` equals an absent `stream`",
    'assistant `content` of "", null or absent are equal when the message has tool_calls',
    'a tool `description` of "" equals an absent one',
)


def anthropic_messages(body: JsonBody) -> JsonBody:
    """An Anthropic Messages request in the form TC802 compares (ANTHROPIC_MESSAGES_DIFFERENCES)."""
    return _anthropic(copy.deepcopy(dict(body)))


def openai_chat(body: JsonBody) -> JsonBody:
    """An OpenAI Chat Completions request in the form TC802 compares (OPENAI_CHAT_DIFFERENCES)."""
    return _openai(copy.deepcopy(dict(body)))


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
