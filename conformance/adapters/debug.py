"""What `turnspec wire` does, as functions: render a canonical conversation to a provider's
request, and parse a provider's response body or SSE text into canonical form.

Adapter authors use these to see what their adapter sends and reads; the tests use them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..findings import Finding, Severity
from ..jsonio import read_json, read_jsonl
from .base import (
    Adapter,
    AdapterOptions,
    Message,
    RequestContext,
    StreamEvent,
    ToolDefinition,
    WireResponse,
    harness_usage,
    now_timestamp,
)


def read_conversation(path: Path) -> tuple[list[Message], list[ToolDefinition]]:
    """Messages and tool definitions of a canonical .jsonl/.json file; bad input -> InputError."""
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    items = read_jsonl(path) if path.suffix == ".jsonl" else read_json(path)
    messages: list[Message] = []
    tools: list[ToolDefinition] = []
    for item in items:
        if isinstance(item, Finding):
            if item.severity == Severity.ERROR:
                raise InputError(item.format())
            continue
        v = item.value
        if not isinstance(v, dict):
            raise InputError(f"{path}:{item.line}: {item.pointer or '/'}: not a message object")
        (tools if "input_schema" in v and "role" not in v else messages).append(v)
    return messages, tools


def default_model(adapter: Adapter, messages: list[Message]) -> str:
    """The model of the latest assistant turn of this provider, else `<provider>:default`."""
    for m in reversed(messages):
        meta = m.get("metadata") or {}
        if m.get("role") == "assistant" and meta.get("provider") == adapter.provider and meta.get("model"):
            return str(meta["model"])
    return f"{adapter.provider}:default"


def render(
    adapter: Adapter,
    messages: list[Message],
    tools: list[ToolDefinition],
    *,
    model: str | None = None,
    stream: bool = False,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    options = AdapterOptions(
        model=model or default_model(adapter, messages), stream=stream, max_output_tokens=max_tokens
    )
    req = adapter.to_wire(messages, tools, options)
    return {"method": req.method, "path": req.path, "headers": dict(req.headers), "body": req.body}


@dataclass
class Parsed:
    message: Message | None
    events: list[StreamEvent]


def looks_like_sse(text: str) -> bool:
    return text.lstrip().startswith(("event:", "data:", ":"))


def parse(
    adapter: Adapter,
    text: str,
    *,
    stream: bool = False,
    status: int = 200,
    session_id: str = "sess_wire_parse",
) -> Parsed:
    """A response body (JSON) or an SSE stream -> canonical message (and events)."""
    ctx = RequestContext(session_id=session_id)
    if stream or looks_like_sse(text):
        events = list(adapter.stream_response([text.encode()], ctx))
        start = next((e for e in events if e["type"] == "message_start"), None)
        done = next((e for e in events if e["type"] == "message_complete"), None)
        message = None
        if start is not None and done is not None:
            model = str(start["model"])
            usage = done.get("usage")
            message = {
                "id": start["message_id"],
                "session_id": session_id,
                "role": "assistant",
                "content": done["final_content"] or [{"type": "text", "text": ""}],
                "metadata": {
                    "model": model,
                    "provider": adapter.provider,
                    "routing": {
                        "mode": "default",
                        "chosen_model": model,
                        "reason": "turnspec wire parse",
                    },
                    "usage": harness_usage(usage, model, ctx) if usage else None,
                },
                "created_at": now_timestamp(),
                "schema_version": 1,
            }
        return Parsed(message, events)
    try:
        body = json.loads(text)
    except ValueError as exc:
        raise InputError(f"response is neither JSON nor SSE: {exc}") from None
    return Parsed(adapter.from_wire_response(WireResponse(body, status), ctx), [])


__all__ = ["Parsed", "default_model", "looks_like_sse", "parse", "read_conversation", "render"]
