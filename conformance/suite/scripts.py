"""Canonical conversations the checks send through adapters.

Every block carries a unique marker string, so a check can tell whether a block reached
the wire (its marker is in the serialized body) without knowing the provider's format.
"""

from __future__ import annotations

import base64
import datetime as dt
import itertools
from dataclasses import dataclass, field
from typing import Any

from ..adapters.base import Message, ToolDefinition
from ..core import ids

# a 2x2 PNG (real header, so image-size estimates work)
PNG_2PX = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000020000000208060000007fa87d63"
        "0000001549444154789c63f8cfc0f09f8181e1ff7f0606000b6d02fe2f07a8d40000000049454e44ae426082"
    )
).decode()
# a 1x1 JPEG (real SOI and SOF markers): a second media type, so a reader or writer that
# assumes PNG shows (TC901)
JPEG_1PX = base64.b64encode(
    bytes.fromhex(
        "ffd8ffe000104a46494600010101004800480000ffdb004300" + "ff" * 64 + "ffc2000b080001000101011100"
        "ffc40014100100000000000000000000000000000000ffda0008010100013f10ffd9"
    )
).decode()

# two more real PNGs (1x1 red, 3x1 blue): images that differ, so a check can tell which went where
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP4z8DwHwAFAAH/VscvDQAAAABJRU5ErkJggg=="
PNG_3PX = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAABCAYAAAAb4BS0AAAADklEQVR42mNgYPj/H4YBIOwF+yP2+l8AAAAASUVORK5CYII="

# a 1x1 GIF (GIF89a) and a 1x1 lossless WebP (RIFF/WEBP VP8L): real images of their types
GIF_1PX = "R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
WEBP_1PX = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="

IMAGES_BY_TYPE: dict[str, str] = {
    "image/png": PNG_2PX,
    "image/jpeg": JPEG_1PX,
    "image/gif": GIF_1PX,
    "image/webp": WEBP_1PX,
}
"""A real base64 image of each media type the scripts send (an adapter that sniffs or
decodes the bytes sees what the media type says)."""

TOOLS: list[ToolDefinition] = [
    {
        "name": "read_file",
        "description": "Read a file of the workspace",
        "side_effects": "read",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["path"],
        },
    },
    {
        "name": "search_code",
        "description": "Search the code",
        "side_effects": "none",
        "input_schema": {
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "flags": {"type": "array", "items": {"type": "string"}},
            },
        },
    },
]


_SCRIPTS = itertools.count()


@dataclass
class Builder:
    """Appends valid canonical messages with monotonic ULIDs and timestamps."""

    # a session of its own per script, numbered in the order scripts are built: the same run
    # of the same suite names the same sessions, so reports quoting one are byte-identical
    session_id: str = field(default_factory=lambda: "sess_" + ids.derived(0, "script", next(_SCRIPTS)).lower())
    messages: list[Message] = field(default_factory=list)
    _clock: int = 1_778_241_600_000_000

    def add(self, role: str, content: list[dict[str, Any]], **meta: Any) -> Message:
        self._clock += 1_000_000
        ms = self._clock // 1000
        mid = ids.of(ms, len(self.messages))
        ts = dt.datetime.fromtimestamp(self._clock / 1e6, dt.UTC).strftime(ids.TIME_FORMAT)
        m: Message = {
            "id": mid,
            "session_id": self.session_id,
            "role": role,
            "content": content,
            "metadata": dict(meta),
            "created_at": ts,
            "schema_version": 1,
        }
        self.messages.append(m)
        return m

    def tool_id(self) -> str:
        self._clock += 1000
        return "tu_" + ids.of(self._clock // 1000, int.from_bytes(b"\x07" * 10, "big"))

    def assistant(self, provider: str, model: str, content: list[dict[str, Any]]) -> Message:
        mid = f"{provider}:{model}"
        return self.add(
            "assistant",
            content,
            model=mid,
            provider=provider,
            routing={"mode": "default", "chosen_model": mid, "reason": "conformance script"},
            usage={
                "input_tokens": 10,
                "output_tokens": 5,
                "cost_usd": "0",
                "pricing_version": "unpriced",
                "latency_ms": 1,
            },
        )


def mark(tag: str) -> str:
    return f"MARK-{tag}-7f3a"


BASE64_SIGNATURES = frozenset({"gemini"})
"""Providers whose thinking signature is base64 on the wire (Gemini's `thoughtSignature` is
`bytes`, "A base64-encoded string" in the API reference): the script's signature for them is
base64, so an adapter that decodes it is not failed by a value the provider never issues."""


def signature(provider: str) -> str:
    """The scripted thinking signature `provider` issued: the marker, base64 where the
    provider's signatures are (`BASE64_SIGNATURES`)."""
    value = mark(f"signature-{provider}")
    return base64.b64encode(value.encode()).decode() if provider in BASE64_SIGNATURES else value


def answered(reply: Message, session_id: str) -> Builder:
    """A user turn, then `reply` (a parsed response, re-dated into the session) and one tool
    message per tool call of it, result k ("ok k") answering call k: the turn after a
    recorded response, as the next request would carry it."""
    b = Builder(session_id=session_id)
    b.add("user", [{"type": "text", "text": "go"}])
    reply["id"] = b.add("assistant", [])["id"]
    b.messages[-1] = reply
    # a call without a string id cannot be answered (nothing names it; TC301 fails it)
    uses = [x for x in reply["content"] if x.get("type") == "tool_use" and isinstance(x.get("id"), str)]
    for k, u in enumerate(uses):
        result = {"type": "tool_result", "tool_use_id": u["id"], "content": [{"type": "text", "text": f"ok {k}"}]}
        b.add("tool", [result], parent_tool_use_id=u["id"])
    return b


def tools_named(messages: list[Message]) -> list[ToolDefinition]:
    """A definition of each tool the history's calls name, in order of first call: what a
    request continuing a tool conversation carries. Some APIs refuse tool calls and results
    in a request that defines no tools (Bedrock Converse answers `ValidationException: The
    toolConfig field must be defined when using toolUse and toolResult content blocks.`), so
    an adapter may rightly leave them out of one; a check that renders a tool history to
    judge its ids, results or signatures renders it with its tools."""
    names = dict.fromkeys(
        str(b["name"])
        for m in messages
        for b in m.get("content") or []
        if b.get("type") == "tool_use" and isinstance(b.get("name"), str)
    )
    return [
        {
            "name": n,
            "description": f"the {n} tool of the recorded conversation",
            "input_schema": {"type": "object", "properties": {}},
            "side_effects": "none",
        }
        for n in names
    ]


def conversation(
    provider: str = "anthropic",
    model: str = "model-a",
    *,
    thinking: bool = True,
    images: bool = True,
    tools: bool = True,
) -> tuple[list[Message], list[ToolDefinition]]:
    """A session produced on `provider`: two system prompts, images, thinking with a signature
    issued by `provider`, redacted thinking, two parallel tool calls and their results."""
    b = Builder()
    b.add("system", [{"type": "text", "text": mark("system-1")}])
    b.add("system", [{"type": "text", "text": mark("system-2")}])
    user: list[dict[str, Any]] = [{"type": "text", "text": mark("user-1")}]
    if images:
        user.append(
            {
                "type": "image",
                "source": {"kind": "base64", "data": PNG_2PX},
                "media_type": "image/png",
            }
        )
    b.add("user", user)
    first: list[dict[str, Any]] = []
    if thinking:
        first.append(
            {
                "type": "thinking",
                "text": mark("thinking"),
                "signature": signature(provider),
            }
        )
    first.append({"type": "text", "text": mark("assistant-1")})
    if tools:
        t1, t2 = b.tool_id(), b.tool_id()
        first.append(
            {
                "type": "tool_use",
                "id": t1,
                "name": "read_file",
                "input": {"path": mark("path"), "limit": 3},
            }
        )
        first.append(
            {
                "type": "tool_use",
                "id": t2,
                "name": "search_code",
                "input": {"query": mark("query"), "flags": ["i", "w"]},
            }
        )
    b.assistant(provider, model, first)
    if tools:
        b.add(
            "tool",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": t1,
                    "content": [{"type": "text", "text": mark("result-1")}],
                }
            ],
            parent_tool_use_id=t1,
        )
        b.add(
            "tool",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": t2,
                    "content": [{"type": "text", "text": mark("result-2")}],
                }
            ],
            parent_tool_use_id=t2,
        )
    second: list[dict[str, Any]] = []
    if thinking:
        second.append({"type": "redacted_thinking", "data": mark(f"redacted-{provider}")})
    second.append({"type": "text", "text": mark("assistant-2")})
    b.assistant(provider, model, second)
    b.add("user", [{"type": "text", "text": mark("user-2")}])
    return b.messages, (TOOLS if tools else [])
