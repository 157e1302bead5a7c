"""LangChain messages <-> canonical messages, as pure functions (file handling: `convert`).

What maps (LangChain → canonical, and back):

| LangChain (messages_to_dict / dumpd)                  | canonical                                  |
|-------------------------------------------------------|--------------------------------------------|
| SystemMessage, HumanMessage (str, or str / `text` /   | system, user: text, image (base64 / url)   |
|   `image` url or base64 blocks, v1 or v0 form)        |                                            |
| AIMessage content: `text`, `reasoning` (its           | assistant: text, thinking (signature)      |
|   `extras.signature`), `tool_call` blocks             |   tool_use, in order                       |
| AIMessage `refusal` block (lossy: read as text)       | assistant: text                            |
| AIMessage.tool_calls not in the content (id, name,    | tool_use blocks (after the content)        |
|   args)                                               |                                            |
| AIMessage response_metadata model_name, model_provider| metadata model (provider:model), provider  |
|   usage_metadata input/output tokens                  |   usage input/output tokens                |
| ToolMessage (tool_call_id, content, status "error")   | tool message: one tool_result (is_error)   |
| message `id`                                          | message id, when a ULID in order           |
| provider blocks LangChain passes through: `image_url` | image (url, or base64 of a `data:` URL);   |
|   (OpenAI), `thinking` with `signature` (Anthropic)   |   thinking (signature)                     |

Canonical → LangChain writes the `messages_to_dict` form: each message's id as its `id`;
an AIMessage's content as v1 standard blocks (`response_metadata.output_version` "v1"),
tool_use blocks as `tool_call` blocks in place and as its `tool_calls`; each tool_result
as one ToolMessage. Everything else is a loss, reported once where it happens (`Loss`).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from ...core.convertkit import (
    IdMint,
    Losses,
    block_extras,
    media_type_of_url,
    placeholder_metadata,
    provider_id,
    rfc3339,
    short,
)
from ...core.ids import is_tool_id
from ..canonical.tools import canonical_tool_name
from . import rules as R
from .reader import Shaped, shaped

UNKNOWN_MEDIA = "image/jpeg"


def _message(kind: str, mid: str | None, content: Any, **extra: Any) -> dict[str, Any]:
    data = {"content": content, "additional_kwargs": {}, "response_metadata": {}, "type": kind, "name": None, "id": mid}
    return {"type": kind, "data": {**data, **extra}}


# -- canonical -> LangChain -------------------------------------------------------------------


def to_langchain(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Losses]:
    """The LangChain messages (messages_to_dict form) of one canonical session, and what
    they could not hold."""
    out: list[dict[str, Any]] = []
    losses = Losses(R.LOSSY)
    for i, m in enumerate(messages):
        role = m["role"]
        meta = m.get("metadata") or {}
        dropped = [
            k for k, v in meta.items()
            if v is not None and not (k == "status" and v == "complete")
            and not (k == "parent_tool_use_id" and role == "tool")
            and not (k in ("model", "provider") and role == "assistant")
        ]  # fmt: skip
        if dropped:
            losses.add(
                i, "/metadata",
                f"metadata {', '.join(sorted(dropped))} has no LangChain field; dropped"
                + (" (usage keeps its input and output tokens)" if "usage" in dropped and role == "assistant" else ""),
            )  # fmt: skip
        extra = sorted(set(m) - {"id", "session_id", "role", "content", "metadata", "created_at", "schema_version"})
        if extra:
            losses.add(i, "", f"message field(s) {', '.join(extra)} have no LangChain field; dropped")
        if role == "tool":
            out += _tool(i, m, losses)
            continue
        blocks = _blocks(i, m["content"], role, losses)
        plain = len(blocks) == 1 and set(blocks[0]) == {"type", "text"} and role != "assistant"
        content: Any = blocks[0]["text"] if plain else blocks
        if role == "assistant":
            out.append(_ai(i, m, meta, content, losses))
        else:
            out.append(_message("system" if role == "system" else "human", m["id"], content))
    return out, losses


def _blocks(i: int, content: list[dict[str, Any]], role: str, losses: Losses) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for j, b in enumerate(content):
        kind = b.get("type")
        extra = block_extras(b)
        if extra:
            losses.add(i, f"/content/{j}", f"{kind} block field(s) {', '.join(extra)} have no LangChain field; dropped")
        if kind == "text":
            out.append({"type": "text", "text": b["text"]})
        elif kind == "thinking":
            block: dict[str, Any] = {"type": "reasoning", "reasoning": b["text"]}
            if isinstance(b.get("signature"), str):
                block["extras"] = {"signature": b["signature"]}
            out.append(block)
        elif kind == "image" and b["source"]["kind"] in ("base64", "url"):
            key = "base64" if b["source"]["kind"] == "base64" else "url"
            out.append({"type": "image", key: b["source"]["data"], "mime_type": b["media_type"]})
        elif kind == "tool_use" and role == "assistant":  # v1 content holds the calls too, in order
            out.append({"type": "tool_call", "id": b["id"], "name": b["name"], "args": b["input"]})
        elif kind == "image":
            losses.add(
                i, f"/content/{j}",
                f"{b['source']['kind']} image {short(b['source']['data'])} has no content-block form; dropped",
            )  # fmt: skip
        else:
            losses.add(i, f"/content/{j}", f"{kind} block has no LangChain standard content block; dropped")
    return out


def _ai(i: int, m: dict[str, Any], meta: dict[str, Any], content: Any, losses: Losses) -> dict[str, Any]:
    calls = [
        {"name": b["name"], "args": b["input"], "id": b["id"], "type": "tool_call"}
        for b in m["content"] if b.get("type") == "tool_use"
    ]  # fmt: skip
    # the content is v1 standard blocks (AIMessage.content_blocks reads it as it is, not
    # through the model provider's translator)
    response: dict[str, Any] = {"output_version": "v1"}
    model, provider = meta.get("model"), meta.get("provider")
    if isinstance(model, str):
        response["model_name"] = model.split(":", 1)[1] if ":" in model else model
    if isinstance(provider, str):
        response["model_provider"] = provider
    usage = meta.get("usage")
    extra: dict[str, Any] = {"tool_calls": calls, "invalid_tool_calls": []}
    if isinstance(usage, dict):
        tokens = {k: usage[k] for k in ("input_tokens", "output_tokens") if isinstance(usage.get(k), int)}
        if len(tokens) == 2:
            extra["usage_metadata"] = {**tokens, "total_tokens": tokens["input_tokens"] + tokens["output_tokens"]}
    msg = _message("ai", m["id"], content, **extra)
    msg["data"]["response_metadata"] = response
    return msg


def _tool(i: int, m: dict[str, Any], losses: Losses) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    results = [b for b in m["content"] if b.get("type") == "tool_result"]
    if len(results) > 1:
        losses.add(i, "/content", f"{len(results)} tool results written as {len(results)} ToolMessages")
    for j, b in enumerate(m["content"]):
        bp = f"/content/{j}"
        if b.get("type") != "tool_result":
            losses.add(i, bp, f"{b.get('type')} block in a tool message has no ToolMessage form; dropped")
            continue
        extra = block_extras(b)
        if extra:
            losses.add(i, bp, f"tool_result field(s) {', '.join(extra)} have no ToolMessage field; dropped")
        inner: list[dict[str, Any]] = b["content"]
        texts = []
        for k, x in enumerate(inner):
            if x.get("type") == "text":
                texts.append({"type": "text", "text": x["text"]})
            else:
                losses.add(i, f"{bp}/content/{k}", f"{x.get('type')} block in a tool result; dropped (text only)")
        content: Any = texts[0]["text"] if len(texts) == 1 else texts
        status = "error" if b.get("is_error") is True else "success"
        mid = m["id"] if not out else None
        out.append(_message("tool", mid, content, tool_call_id=b["tool_use_id"], artifact=None, status=status))
    return out


# -- LangChain -> canonical -------------------------------------------------------------------


@dataclass
class Session:
    """Ids and times minted for one conversation."""

    mint: IdMint
    ms: int
    calls: dict[str, str] = field(default_factory=dict)  # LangChain tool call id -> canonical id


# data fields read into canonical, or defaults that carry nothing
_KNOWN = {"content", "type", "id", "tool_calls", "response_metadata", "usage_metadata", "tool_call_id", "status"}
_DEFAULTS: dict[str, Any] = {"example": False, "status": "success"}


def _carries(key: str, value: Any) -> bool:
    return value not in (None, {}, [], "") and _DEFAULTS.get(key, object()) != value


def _dropped(value: dict[str, Any], known: set[str]) -> list[str]:
    return sorted(k for k, v in value.items() if k not in known and _carries(k, v))


_CHAT_ROLES = {"user": "human", "human": "human", "assistant": "ai", "ai": "ai", "system": "system"}


def from_langchain(
    conversation: list[Any], session_id: str, s: Session
) -> tuple[list[dict[str, Any]], list[int], Losses]:
    """The canonical messages of one conversation (valid per the checker), with ids and
    created_at minted from `s` (or kept: a message `id` that is a ULID in order); and for
    each, the index of the LangChain message it came from."""
    out: list[dict[str, Any]] = []
    origin: list[int] = []
    losses = Losses(R.LOSSY)

    def emit(i: int, role: str, content: list[dict[str, Any]], meta: dict[str, Any], mid: Any) -> None:
        s.ms += 1
        kept = s.mint.keep(mid) if isinstance(mid, str) else None
        out.append({
            "id": kept or s.mint.ulid(s.ms, len(out)), "session_id": session_id, "role": role, "content": content,
            "metadata": meta, "created_at": rfc3339(s.ms * 1000), "schema_version": 1,
        })  # fmt: skip
        origin.append(i)

    for i, value in enumerate(conversation):
        sh = shaped(value)
        assert isinstance(sh, Shaped)  # the checker refused anything else
        d, dp, kind = sh.data, sh.at, sh.type
        if kind == "chat":
            role = d.get("role")
            kind = _CHAT_ROLES.get(role, "human") if isinstance(role, str) else "human"
            losses.add(i, f"{dp}/role", f"ChatMessage role {short(role)} read as a {kind} message")
        dropped = _dropped(d, _KNOWN | ({"role"} if sh.type == "chat" else set()))
        if dropped:
            losses.add(i, dp, f"{kind} message field(s) {', '.join(dropped)} have no canonical field; dropped")
        if kind == "function":
            losses.add(i, "", "a FunctionMessage (legacy) has no canonical form; dropped")
            continue
        bare = kind == "ai" and d["content"] == "" and bool(d.get("tool_calls"))  # the usual form of a call
        content = [] if bare else _content(d["content"], i, f"{dp}/content", kind, s, losses)
        if kind == "tool":
            tid = s.calls[d["tool_call_id"]]
            result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid, "content": []}
            for k, b in enumerate(content):
                if b["type"] == "text":
                    result["content"].append(b)
                else:
                    losses.add(i, f"{dp}/content/{k}", f"{b['type']} in a tool result; dropped (text only)")
            if d.get("status") == "error":
                result["is_error"] = True
            emit(i, "tool", [result], {"parent_tool_use_id": tid}, d.get("id"))
            continue
        if kind == "ai":
            meta = _assistant(i, d, dp, content, s, losses)
            emit(i, "assistant", content, meta, d.get("id"))
            continue
        if not content and kind == "human":
            content = [{"type": "text", "text": ""}]
            losses.add(
                i,
                f"{dp}/content",
                "the message holds nothing canonical can; an empty text block written",
                R.SYNTHESIZED,
            )
        emit(i, "system" if kind == "system" else "user", content, {}, d.get("id"))
    return out, origin, losses


def _content(content: Any, i: int, ptr: str, kind: str, s: Session, losses: Losses) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for k, b in enumerate(content):
        bp = f"{ptr}/{k}"
        if isinstance(b, str):
            blocks.append({"type": "text", "text": b})
            continue
        bt = b["type"]
        known = {"type", "text", "reasoning", "extras", "url", "base64", "mime_type", "source_type", "data",
                 "id", "name", "args", "image_url", "thinking", "signature", "refusal"}  # fmt: skip
        if bt == "text":
            blocks.append({"type": "text", "text": b["text"]})
        elif bt == "reasoning" and kind == "ai":
            block: dict[str, Any] = {"type": "thinking", "text": b.get("reasoning") or ""}
            extras = b.get("extras")
            if isinstance(extras, dict) and isinstance(extras.get("signature"), str):
                block["signature"] = extras["signature"]
                if len(extras) > 1:
                    losses.add(
                        i, f"{bp}/extras", "reasoning extras other than signature have no canonical field; dropped"
                    )
            elif extras:
                losses.add(i, f"{bp}/extras", "reasoning extras have no canonical field; dropped")
            blocks.append(block)
        elif bt == "thinking" and kind == "ai" and isinstance(b.get("thinking"), str):
            # Anthropic's own block, as ChatAnthropic's content holds it (v0 output)
            block = {"type": "thinking", "text": b["thinking"]}
            if isinstance(b.get("signature"), str):
                block["signature"] = b["signature"]
            blocks.append(block)
        elif bt in ("image", "image_url"):
            image = _image(b, i, bp, losses) if bt == "image" else _image_url(b, i, bp, losses)
            if image is not None:
                blocks.append(image)
        elif bt == "tool_call" and kind == "ai":
            blocks.append(_tool_use(b, i, bp, s, losses))
        elif bt == "refusal" and kind == "ai" and isinstance(b.get("refusal"), str):
            # LangChain's standard refusal block (ChatOpenAI's `additional_kwargs.refusal`):
            # the reply's text, as canonical has no refusal block (contract §3.3)
            losses.add(i, bp, "refusal block read as text (canonical has no refusal marker)")
            blocks.append({"type": "text", "text": b["refusal"]})
        else:
            losses.add(i, bp, f"{bt} block has no canonical v1 block in a {kind} message; dropped")
            continue
        extra = _dropped(b, known)
        if bt == "text" and b.get("id") is not None:
            extra = sorted({*extra, "id"})
        if extra:
            losses.add(i, bp, f"{bt} block field(s) {', '.join(extra)} have no canonical field; dropped")
    return blocks


def _image(b: dict[str, Any], i: int, bp: str, losses: Losses) -> dict[str, Any] | None:
    source = b.get("source_type")
    media = b.get("mime_type")
    if source == "base64" or (source is None and isinstance(b.get("base64"), str)):
        data = b.get("data") if source == "base64" else b.get("base64")
        try:
            base64.b64decode(str(data), validate=True)
        except (binascii.Error, ValueError):
            losses.add(i, bp, "image data is not base64; image dropped")
            return None
        if not (isinstance(media, str) and media.startswith("image/")):
            losses.add(i, bp, f"image mime_type {short(media)} is not an image type; image dropped")
            return None
        return {"type": "image", "source": {"kind": "base64", "data": data}, "media_type": media}
    url = b.get("url")
    if isinstance(url, str) and source in (None, "url"):
        if not (isinstance(media, str) and media.startswith("image/")):
            media = media_type_of_url(url)
            if media is None:
                losses.add(
                    i, bp, f"the URL does not say the image's media type; {UNKNOWN_MEDIA} assumed", R.SYNTHESIZED
                )
                media = UNKNOWN_MEDIA
        return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": media}
    losses.add(i, bp, "an image by file id (or of another source) has no canonical v1 source; dropped")
    return None


_DATA_URL = re.compile(r"data:(image/[A-Za-z0-9.+-]+);base64,(.*)\Z", re.S)


def _image_url(b: dict[str, Any], i: int, bp: str, losses: Losses) -> dict[str, Any] | None:
    """An OpenAI-style `image_url` block (LangChain passes it through to Chat models): its
    URL, or the base64 image a `data:` URL holds."""
    ref = b.get("image_url")
    url = ref.get("url") if isinstance(ref, dict) else ref
    if not isinstance(url, str):
        losses.add(i, bp, "an image_url block with no URL string; dropped")
        return None
    if isinstance(ref, dict) and ref.get("detail") not in (None, "auto"):
        losses.add(i, f"{bp}/image_url/detail", "image detail has no canonical field; dropped")
    m = _DATA_URL.match(url)
    if m:
        return _image({"base64": m.group(2), "mime_type": m.group(1)}, i, bp, losses)
    if url.startswith("data:"):
        losses.add(i, bp, "a data URL that is not a base64 image; dropped")
        return None
    return _image({"url": url}, i, bp, losses)


def _tool_use(c: dict[str, Any], i: int, cp: str, s: Session, losses: Losses) -> dict[str, Any]:
    cid = c.get("id")
    if isinstance(cid, str) and is_tool_id(cid) and cid not in s.calls.values():
        tid = cid
    else:
        tid = s.mint.tool_id(s.ms, str(cid), cp)
    if isinstance(cid, str):
        s.calls[cid] = tid
    name = canonical_tool_name(c["name"])
    if name != c["name"]:
        losses.add(
            i,
            f"{cp}/name",
            f"tool name {c['name']!r} is not a canonical tool name (snake_case, §4.2); written as {name!r}",
        )
    return {"type": "tool_use", "id": tid, "name": name, "input": c["args"]}


def _count(v: Any) -> bool:
    """A token count canonical takes: a non-negative integer (a JSON true is none)."""
    return type(v) is int and v >= 0


def _assistant(
    i: int, d: dict[str, Any], dp: str, content: list[dict[str, Any]], s: Session, losses: Losses
) -> dict[str, Any]:
    seen = {b["id"] for b in content if b["type"] == "tool_use"}
    for k, c in enumerate(d.get("tool_calls") or ()):
        cid = c.get("id")
        if isinstance(cid, str) and cid in s.calls and s.calls[cid] in seen:
            continue  # the same call as a content tool_call block
        content.append(_tool_use(c, i, f"{dp}/tool_calls/{k}", s, losses))
        if c.get("id") is None:
            losses.add(i, f"{dp}/tool_calls/{k}/id", "a tool call with a null id: a tool id minted", R.SYNTHESIZED)
    rm = d.get("response_metadata")
    if not isinstance(rm, dict):
        if _carries("response_metadata", rm):
            losses.add(i, f"{dp}/response_metadata", f"response_metadata {short(rm)} is not an object; dropped")
        rm = {}
    provider = rm.get("model_provider") if isinstance(rm.get("model_provider"), str) else None
    model_name = rm.get("model_name") if isinstance(rm.get("model_name"), str) else None
    pid = provider_id(provider) if provider else "unknown"
    if provider and pid != provider:
        losses.add(
            i,
            f"{dp}/response_metadata/model_provider",
            f"model_provider {provider!r} is not a canonical provider id (§6.3); written as {pid!r}",
        )
    model = f"{pid}:unknown"
    if model_name:
        name_part = re.sub(r"\s+", "-", model_name)
        model = f"{pid}:{name_part}"
        if name_part != model_name:
            losses.add(
                i,
                f"{dp}/response_metadata/model_name",
                f"model_name {model_name!r} holds white space; written as {name_part!r}",
            )
    others = sorted(
        k for k, v in rm.items() if k not in ("model_name", "model_provider", "output_version") and _carries(k, v)
    )
    if others:
        losses.add(
            i, f"{dp}/response_metadata", f"response_metadata {', '.join(others)} have no canonical field; dropped"
        )
    meta = placeholder_metadata(model, pid, "LangChain")
    usage = d.get("usage_metadata")
    if isinstance(usage, dict):
        for key in ("input_tokens", "output_tokens"):
            if _count(usage.get(key)):
                meta["usage"][key] = usage[key]
        extra = sorted(
            k for k, v in usage.items() if k not in ("input_tokens", "output_tokens", "total_tokens") and _carries(k, v)
        )
        if extra:
            losses.add(i, f"{dp}/usage_metadata", f"usage_metadata {', '.join(extra)} have no canonical field; dropped")
    if not content:
        content.append({"type": "text", "text": ""})
        losses.add(
            i, f"{dp}/content", "the message holds nothing canonical can; an empty text block written", R.SYNTHESIZED
        )
    return meta


__all__ = ["Session", "from_langchain", "to_langchain"]
