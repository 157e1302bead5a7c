"""pydantic-ai messages <-> canonical messages, as pure functions (file handling: `convert`).

What maps (pydantic-ai → canonical, and back):

| pydantic-ai                                           | canonical                                  |
|-------------------------------------------------------|--------------------------------------------|
| request: consecutive SystemPromptParts                | one system message, a text block each      |
| request: UserPromptPart (str, or str / BinaryContent  | user message: text, image (base64 / url)   |
|   / ImageUrl items)                                   |                                            |
| request: ToolReturnPart (str or list of str content)  | tool message: one tool_result, parent id   |
| request: RetryPromptPart answering an earlier call    | tool message: tool_result, is_error: true  |
| request: ToolReturnPart with outcome other than        | tool_result, is_error: true                |
|   success (failed; others reported)                   |                                            |
| request: RetryPromptPart answering no call,           | user message, text (reported)              |
|   RetryFeedbackPart                                   |                                            |
| response: TextPart, ThinkingPart, ToolCallPart        | assistant: text, thinking (signature),     |
|   (in order)                                          |   tool_use (in order)                      |
| response model_name, provider_name, usage tokens      | metadata model (provider:model), provider, |
|                                                       |   usage input/output tokens                |

A ThinkingPart's `provider_name` is the response's provider (`metadata.provider`): written
on each thinking part that has a signature, and kept on the way in when it is the
response's. Canonical → pydantic-ai groups consecutive non-assistant messages into one
ModelRequest and writes each assistant message as one ModelResponse. Everything else is a
loss, reported once where it happens (`Loss`).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from ...core.convertkit import IdMint, Losses, media_type_of_url, provider_id, rfc3339, short
from ...core.convertkit import placeholder_metadata as shared_placeholder
from ...core.ids import is_tool_id
from ...core.jsonio import dumps
from ..canonical.tools import canonical_tool_name
from . import rules as R
from .checker import args_object

UNKNOWN_MEDIA = "image/jpeg"
_URLSAFE = str.maketrans("-_", "+/")


def _texts_of(blocks: list[dict[str, Any]]) -> list[str]:
    return [str(b["text"]) for b in blocks if b.get("type") == "text"]


# -- canonical -> pydantic-ai ---------------------------------------------------------------

_KEPT_META = {"model", "provider"}


def to_pydantic_ai(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Losses]:
    """The ModelMessages of one canonical session, and what they could not hold."""
    out: list[dict[str, Any]] = []
    losses = Losses(R.LOSSY)
    names: dict[str, str] = {}  # tool_use id -> tool name
    request: dict[str, Any] | None = None
    for i, m in enumerate(messages):
        role = m["role"]
        meta = m.get("metadata") or {}
        dropped = [
            k for k, v in meta.items()
            if v is not None and not (k == "status" and v == "complete")
            and not (k == "parent_tool_use_id" and role == "tool")
            and not (k in _KEPT_META and role == "assistant")
        ]  # fmt: skip
        if dropped:
            losses.add(
                i, "/metadata",
                f"metadata {', '.join(sorted(dropped))} has no pydantic-ai field; dropped"
                + (" (usage keeps its input and output tokens)" if "usage" in dropped and role == "assistant" else ""),
            )  # fmt: skip
        extra = sorted(set(m) - {"id", "session_id", "role", "content", "metadata", "created_at", "schema_version"})
        if extra:
            losses.add(i, "", f"message field(s) {', '.join(extra)} have no pydantic-ai field; dropped")
        stamp = m["created_at"]
        if role == "assistant":
            request = None
            out.append(_response(i, m, meta, names, losses))
            continue
        if request is None:
            request = {"kind": "request", "parts": []}
            out.append(request)
        parts: list[dict[str, Any]] = request["parts"]
        if role == "system":
            parts.extend(_system(i, m["content"], stamp, losses))
        elif role == "user":
            parts.append({"part_kind": "user-prompt", "content": _user(i, m["content"], losses), "timestamp": stamp})
        else:
            parts.extend(_tool(i, m["content"], stamp, names, losses))
    return out, losses


def _system(i: int, content: list[dict[str, Any]], stamp: str, losses: Losses) -> list[dict[str, Any]]:
    if not content:
        losses.add(i, "", "a system message with no block has no SystemPromptPart; dropped")
    parts = []
    for j, b in enumerate(content):
        if b.get("type") != "text":
            losses.add(i, f"/content/{j}", f"{b.get('type')} block has no SystemPromptPart form; dropped")
            continue
        parts.append({"part_kind": "system-prompt", "content": b["text"], "timestamp": stamp})
    return parts


def _user(i: int, content: list[dict[str, Any]], losses: Losses) -> str | list[Any]:
    if len(content) == 1 and content[0].get("type") == "text":
        return str(content[0]["text"])
    items: list[Any] = []
    for j, b in enumerate(content):
        kind = b.get("type")
        if kind == "text":
            items.append(b["text"])
        elif kind == "image" and b["source"]["kind"] == "base64":
            items.append({"data": b["source"]["data"], "media_type": b["media_type"], "kind": "binary"})
        elif kind == "image" and b["source"]["kind"] == "url":
            items.append({"url": b["source"]["data"], "media_type": b["media_type"], "kind": "image-url"})
        elif kind == "image":
            losses.add(
                i, f"/content/{j}",
                f"{b['source']['kind']} image {short(b['source']['data'])} has no UserContent form; dropped",
            )  # fmt: skip
        else:
            losses.add(i, f"/content/{j}", f"{kind} block has no UserContent form; dropped")
    return items


def _tool(
    i: int, content: list[dict[str, Any]], stamp: str, names: dict[str, str], losses: Losses
) -> list[dict[str, Any]]:
    parts = []
    for j, b in enumerate(content):
        bp = f"/content/{j}"
        if b.get("type") != "tool_result":
            losses.add(i, bp, f"{b.get('type')} block in a tool message has no pydantic-ai part; dropped")
            continue
        inner: list[dict[str, Any]] = b["content"]
        for k, x in enumerate(inner):
            if x.get("type") != "text":
                losses.add(i, f"{bp}/content/{k}", f"{x.get('type')} block in a tool result; dropped (text only)")
        texts = _texts_of(inner)
        tid = b["tool_use_id"]
        name = names.get(tid, "unknown_tool")
        if b.get("is_error") is True:
            if len(texts) != 1:
                losses.add(
                    i, f"{bp}/content",
                    f"{len(texts)} text blocks of an error result joined into one RetryPromptPart content string",
                )  # fmt: skip
            parts.append({
                "part_kind": "retry-prompt", "content": "".join(texts), "tool_name": name,
                "tool_call_id": tid, "timestamp": stamp,
            })  # fmt: skip
        else:
            parts.append({
                "part_kind": "tool-return", "tool_name": name, "content": texts[0] if len(texts) == 1 else texts,
                "tool_call_id": tid, "timestamp": stamp,
            })  # fmt: skip
    return parts


def _response(i: int, m: dict[str, Any], meta: dict[str, Any], names: dict[str, str], losses: Losses) -> dict[str, Any]:
    provider = meta.get("provider")
    parts: list[dict[str, Any]] = []
    for j, b in enumerate(m["content"]):
        bp = f"/content/{j}"
        kind = b.get("type")
        if kind == "text":
            parts.append({"part_kind": "text", "content": b["text"]})
        elif kind == "thinking":
            sig = b.get("signature")
            parts.append({
                "part_kind": "thinking", "content": b["text"], "id": None, "signature": sig,
                "provider_name": provider if sig is not None else None,
            })  # fmt: skip
        elif kind == "tool_use":
            names[b["id"]] = b["name"]
            parts.append(
                {"part_kind": "tool-call", "tool_name": b["name"], "args": b["input"], "tool_call_id": b["id"]}
            )
        else:
            losses.add(i, bp, f"{kind} block has no ModelResponse part; dropped")
            continue
        extra = sorted(set(b) - {"type", "text", "signature", "id", "name", "input"})
        if extra:
            losses.add(i, bp, f"{kind} block field(s) {', '.join(extra)} have no pydantic-ai field; dropped")
    out: dict[str, Any] = {"kind": "response", "parts": parts, "timestamp": m["created_at"]}
    model = meta.get("model")
    if isinstance(model, str):
        out["model_name"] = model.split(":", 1)[1] if ":" in model else model
    if isinstance(provider, str):
        out["provider_name"] = provider
    usage = meta.get("usage")
    if isinstance(usage, dict):
        out["usage"] = {k: usage[k] for k in ("input_tokens", "output_tokens") if isinstance(usage.get(k), int)}
    return out


# -- pydantic-ai -> canonical ---------------------------------------------------------------


def placeholder_metadata(model: str, provider: str) -> dict[str, Any]:
    """What canonical requires on a complete assistant message (§5.3.1-3) that a
    ModelResponse may not record: routing, usage cost and timing."""
    return shared_placeholder(model, provider, "pydantic-ai")


@dataclass
class Session:
    """Ids and times minted for one history."""

    mint: IdMint
    ms: int
    calls: dict[str, str] = field(default_factory=dict)  # pydantic-ai call id -> canonical id


# fields of a part (beyond part_kind) read into canonical, or defaults that carry nothing
_KNOWN_PART = {
    "system-prompt": {"content", "timestamp"},
    "user-prompt": {"content", "timestamp"},
    "tool-return": {"tool_name", "content", "tool_call_id", "timestamp", "outcome"},
    "retry-prompt": {"content", "tool_name", "tool_call_id", "timestamp"},
    "retry-feedback": {"content", "timestamp"},
    "text": {"content"},
    "thinking": {"content", "signature", "provider_name"},
    "tool-call": {"tool_name", "args", "tool_call_id"},
}
_DEFAULTS: dict[str, Any] = {
    "outcome": "success",
    "scope": "conversation",
    "state": "complete",
    "force_download": False,
}
_KNOWN_MESSAGE = {
    "request": {"kind", "parts", "timestamp"},
    "response": {"kind", "parts", "timestamp", "model_name", "provider_name", "usage"},
}


def _carries(key: str, value: Any) -> bool:
    return value not in (None, {}, [], "") and _DEFAULTS.get(key, object()) != value


def _dropped(value: dict[str, Any], known: set[str]) -> list[str]:
    return sorted(k for k, v in value.items() if k not in known and k != "part_kind" and _carries(k, v))


def from_pydantic_ai(
    history: list[dict[str, Any]], session_id: str, s: Session
) -> tuple[list[dict[str, Any]], list[int], Losses]:
    """The canonical messages of one history (valid per the checker), with ids and
    created_at minted from `s`; and for each, the index of the ModelMessage it came from."""
    out: list[dict[str, Any]] = []
    origin: list[int] = []
    losses = Losses(R.LOSSY)

    def emit(i: int, role: str, content: list[dict[str, Any]], meta: dict[str, Any]) -> None:
        s.ms += 1
        out.append({
            "id": s.mint.ulid(s.ms, len(out)), "session_id": session_id, "role": role, "content": content,
            "metadata": meta, "created_at": rfc3339(s.ms * 1000), "schema_version": 1,
        })  # fmt: skip
        origin.append(i)

    for i, msg in enumerate(history):
        dropped = _dropped(msg, _KNOWN_MESSAGE[msg["kind"]])
        if dropped:
            losses.add(i, "", f"{msg['kind']} field(s) {', '.join(dropped)} have no canonical field; dropped")
        if msg["kind"] == "response":
            emit(i, "assistant", *_assistant(i, msg, s, losses))
            continue
        system: list[dict[str, Any]] = []
        for j, part in enumerate(msg["parts"]):
            pp = f"/parts/{j}"
            pk = part["part_kind"]
            if pk != "system-prompt" and system:
                emit(i, "system", system, {})
                system = []
            if pk in _KNOWN_PART:
                extra = _dropped(part, _KNOWN_PART[pk])
                if extra:
                    losses.add(i, pp, f"{pk} field(s) {', '.join(extra)} have no canonical field; dropped")
            if pk == "system-prompt":
                system.append({"type": "text", "text": part["content"]})
            elif pk == "user-prompt":
                content = _user_content(part["content"], i, f"{pp}/content", losses)
                if not content:
                    content = [{"type": "text", "text": ""}]
                    losses.add(
                        i, pp, "the prompt holds nothing canonical can; an empty text block written", R.SYNTHESIZED
                    )
                emit(i, "user", content, {})
            elif pk == "tool-return":
                tid = s.calls[part["tool_call_id"]]
                result: dict[str, Any] = {
                    "type": "tool_result", "tool_use_id": tid, "content": _return(part, i, pp, losses),
                }  # fmt: skip
                outcome = part.get("outcome", "success")
                if outcome != "success":
                    result["is_error"] = True
                    if outcome != "failed":
                        losses.add(i, f"{pp}/outcome", f"outcome {short(outcome)} read as is_error: true")
                emit(i, "tool", [result], {"parent_tool_use_id": tid})
            elif pk in ("retry-prompt", "retry-feedback"):  # feedback: the newer form of a retry with no call
                text = _retry_text(part["content"], i, pp, losses)
                cid = part.get("tool_call_id")
                if isinstance(cid, str) and cid in s.calls:
                    tid = s.calls[cid]
                    result = {"type": "tool_result", "tool_use_id": tid, "content": [text], "is_error": True}
                    emit(i, "tool", [result], {"parent_tool_use_id": tid})
                else:
                    losses.add(i, pp, "a retry prompt answering no tool call read as user text")
                    emit(i, "user", [text], {})
            else:
                losses.add(i, pp, f"{pk} part has no canonical form; dropped")
        if system:
            emit(i, "system", system, {})
    return out, origin, losses


def _retry_text(content: Any, i: int, pp: str, losses: Losses) -> dict[str, Any]:
    if isinstance(content, str):
        return {"type": "text", "text": content}
    losses.add(i, f"{pp}/content", "validation error details written as their JSON text")
    return {"type": "text", "text": dumps(content).decode("utf-8", "surrogatepass")}


def _return(part: dict[str, Any], i: int, pp: str, losses: Losses) -> list[dict[str, Any]]:
    content = part["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list) and all(isinstance(x, str) for x in content):
        return [{"type": "text", "text": x} for x in content]
    losses.add(i, f"{pp}/content", f"tool return value {short(content)} written as its JSON text")
    return [{"type": "text", "text": dumps(content).decode("utf-8", "surrogatepass")}]


def _user_content(content: Any, i: int, ptr: str, losses: Losses) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for k, item in enumerate(content):
        ip = f"{ptr}/{k}"
        if isinstance(item, str):
            blocks.append({"type": "text", "text": item})
            continue
        ck = item["kind"]
        media = item.get("media_type")
        if ck == "text-content":
            blocks.append({"type": "text", "text": item["content"]})
        elif ck == "binary" and isinstance(media, str) and media.startswith("image/"):
            data = str(item["data"]).translate(_URLSAFE)  # pydantic writes bytes URL-safe; canonical base64 is standard
            try:
                base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                losses.add(i, f"{ip}/data", "binary data is not base64; image dropped")
                continue
            blocks.append({"type": "image", "source": {"kind": "base64", "data": data}, "media_type": media})
        elif ck == "image-url":
            url = str(item["url"])
            if not (isinstance(media, str) and media.startswith("image/")):
                media = media_type_of_url(url)
                if media is None:
                    losses.add(
                        i, ip, f"the URL does not say the image's media type; {UNKNOWN_MEDIA} assumed", R.SYNTHESIZED
                    )
                    media = UNKNOWN_MEDIA
            blocks.append({"type": "image", "source": {"kind": "url", "data": url}, "media_type": media})
        else:
            what = f"{ck} ({media})" if isinstance(media, str) else ck
            losses.add(i, ip, f"{what} content has no canonical v1 block; dropped")
            continue
        extra = _dropped(item, {"kind", "data", "media_type", "url", "content", "identifier"})
        if extra:
            losses.add(i, ip, f"{ck} field(s) {', '.join(extra)} have no canonical field; dropped")
    return blocks


def _assistant(i: int, msg: dict[str, Any], s: Session, losses: Losses) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    provider = msg.get("provider_name") if isinstance(msg.get("provider_name"), str) else None
    model_name = msg.get("model_name") if isinstance(msg.get("model_name"), str) else None
    pid = provider_id(provider) if provider else "unknown"
    if provider and pid != provider:
        losses.add(
            i, "/provider_name", f"provider_name {provider!r} is not a canonical provider id (§6.3); written as {pid!r}"
        )
    model = f"{pid}:unknown"  # the model id names its provider (TS109)
    if model_name:
        name_part = re.sub(r"\s+", "-", model_name)
        model = f"{pid}:{name_part}"
        if name_part != model_name:
            losses.add(i, "/model_name", f"model_name {model_name!r} holds white space; written as {name_part!r}")
    meta = placeholder_metadata(model, pid)
    usage = msg.get("usage")
    if isinstance(usage, dict):
        for k in ("input_tokens", "output_tokens"):
            if isinstance(usage.get(k), int):
                meta["usage"][k] = usage[k]
        extra = sorted(
            k for k, v in usage.items() if k not in ("input_tokens", "output_tokens") and _carries(k, v) and v != 0
        )
        if extra:
            losses.add(i, "/usage", f"usage {', '.join(extra)} have no canonical field; dropped")
    content: list[dict[str, Any]] = []
    for j, part in enumerate(msg["parts"]):
        pp = f"/parts/{j}"
        pk = part["part_kind"]
        if pk in _KNOWN_PART:
            extra = _dropped(part, _KNOWN_PART[pk])
            if extra:
                losses.add(i, pp, f"{pk} field(s) {', '.join(extra)} have no canonical field; dropped")
        if pk == "text":
            content.append({"type": "text", "text": part["content"]})
        elif pk == "thinking":
            block: dict[str, Any] = {"type": "thinking", "text": part["content"]}
            if isinstance(part.get("signature"), str):
                block["signature"] = part["signature"]
            pn = part.get("provider_name")
            if pn is not None and pn != provider:
                losses.add(
                    i, f"{pp}/provider_name",
                    f"thinking provider_name {short(pn)} is not the response's; canonical keeps one provider; dropped",
                )  # fmt: skip
            content.append(block)
        elif pk == "tool-call":
            cid = part["tool_call_id"]
            tid = cid if is_tool_id(cid) and cid not in s.calls.values() else s.mint.tool_id(s.ms, cid, j)
            s.calls[cid] = tid
            name = canonical_tool_name(part["tool_name"])
            if name != part["tool_name"]:
                losses.add(
                    i, f"{pp}/tool_name",
                    f"tool name {part['tool_name']!r} is not a canonical tool name (snake_case, §4.2); written as {name!r}",
                )  # fmt: skip
            content.append({"type": "tool_use", "id": tid, "name": name, "input": args_object(part.get("args"))})
        else:
            losses.add(i, pp, f"{pk} part has no canonical form; dropped")
    if not content:
        content = [{"type": "text", "text": ""}]
        losses.add(i, "/parts", "the response holds nothing canonical can; an empty text block written", R.SYNTHESIZED)
    return content, meta
