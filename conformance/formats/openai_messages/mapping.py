"""Chat messages <-> canonical messages, as pure functions (file handling: `convert`).

What maps (Chat → canonical, and back):

| Chat                                             | canonical                                  |
|--------------------------------------------------|--------------------------------------------|
| system / developer message, text content         | system message, text blocks                |
| user text, image_url (data URL / URL)            | text, image (base64 / url)                 |
| assistant `reasoning_content` / `reasoning`      | one thinking block, first                  |
| assistant content (text parts), then tool_calls  | text blocks, then tool_use blocks          |
| tool message (tool_call_id, text content)        | tool message: one tool_result, parent id   |

A content that is exactly one text block is written as a string, anything else as an
array of parts; a string reads back as one text block, so the two directions are
inverse on what both can hold. Everything else is a loss, reported once where it
happens (`Loss`): canonical ids, session and times, metadata, thinking signatures,
redacted thinking, `is_error`, file_ref images, a URL image whose media type its URL
does not tell, assistant block order other than thinking, text, tool_use; and on the way
in, the developer role, `name`, `detail`, audio and file parts, refusals, tool names
that are not canonical (snake_case: `getWeather` is written `get_weather`). Chat call ids
that are not canonical `tu_<ULID>` ids are replaced by minted ones (not reported, as the
other peers' converters: canonical §6.2 fixes the id form).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from ...core.convertkit import IdMint, Losses, media_type_of_url, rfc3339, short
from ...core.ids import is_tool_id
from ...core.jsonio import dumps
from ..canonical.tools import canonical_tool_name
from . import rules as R
from .checker import arguments_object

_DATA_URL = re.compile(r"data:([A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*);base64,(.+)\Z", re.S)
# canonical needs an image media type (TS113) that a Chat URL does not give: written (and
# reported) when the URL's suffix names none
UNKNOWN_MEDIA = "image/jpeg"
_RANK = {"thinking": 0, "text": 1, "tool_use": 2}


def _text_content(blocks: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if len(blocks) == 1:
        return str(blocks[0]["text"])
    return [{"type": "text", "text": b["text"]} for b in blocks]


def _extra(block: dict[str, Any], known: set[str], i: int, ptr: str, out: Losses) -> None:
    extra = sorted(set(block) - known)
    if extra:
        out.add(i, ptr, f"{block.get('type')} block field(s) {', '.join(extra)} have no Chat field; dropped")


# -- canonical -> Chat ---------------------------------------------------------------------


def to_chat(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Losses]:
    """The Chat messages of one canonical session, and what they could not hold."""
    out: list[dict[str, Any]] = []
    losses = Losses(R.LOSSY)
    for i, m in enumerate(messages):
        role = m["role"]
        meta = m.get("metadata") or {}
        dropped = [
            k for k, v in meta.items()
            if v is not None and not (k == "status" and v == "complete")
            and not (k == "parent_tool_use_id" and role == "tool")
        ]  # fmt: skip
        if dropped:
            losses.add(i, "/metadata", f"metadata {', '.join(sorted(dropped))} has no Chat field; dropped")
        extra = sorted(set(m) - {"id", "session_id", "role", "content", "metadata", "created_at", "schema_version"})
        if extra:
            losses.add(i, "", f"message field(s) {', '.join(extra)} have no Chat field; dropped")
        content: list[dict[str, Any]] = m["content"]
        if role == "tool":
            out.extend(_tool_to_chat(i, m, content, losses))
        elif role == "assistant":
            out.append(_assistant_to_chat(i, content, losses))
        else:
            out.append({"role": role, "content": _user_content(i, role, content, losses)})
    return out, losses


def _user_content(i: int, role: str, content: list[dict[str, Any]], losses: Losses) -> str | list[dict[str, Any]]:
    if all(b.get("type") == "text" for b in content):
        for j, b in enumerate(content):
            _extra(b, {"type", "text"}, i, f"/content/{j}", losses)
        return _text_content(content)
    parts: list[dict[str, Any]] = []
    for j, b in enumerate(content):
        bp = f"/content/{j}"
        kind = b.get("type")
        if kind == "text":
            _extra(b, {"type", "text"}, i, bp, losses)
            parts.append({"type": "text", "text": b["text"]})
        elif kind == "image" and role == "user":
            _extra(b, {"type", "source", "media_type"}, i, bp, losses)
            src = b["source"]
            media = str(b["media_type"])
            if src["kind"] == "base64":
                parts.append({"type": "image_url", "image_url": {"url": f"data:{media};base64,{src['data']}"}})
            elif src["kind"] == "url":
                url = str(src["data"])
                guess = media_type_of_url(url) or UNKNOWN_MEDIA
                if guess.lower() != media.lower():
                    losses.add(
                        i, f"{bp}/media_type",
                        f"a Chat image URL carries no media type and {short(url)} does not say {media}; "
                        f"it reads back as {guess}",
                    )  # fmt: skip
                parts.append({"type": "image_url", "image_url": {"url": url}})
            else:
                losses.add(
                    i, bp, f"{src['kind']} image {short(src['data'])} has no Chat form (a part holds a URL); dropped"
                )
        else:
            losses.add(i, bp, f"{kind} block has no Chat {role} content part; dropped")
    return parts


def _assistant_to_chat(i: int, content: list[dict[str, Any]], losses: Losses) -> dict[str, Any]:
    thinking: list[str] = []
    texts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    kinds: list[str] = []
    for j, b in enumerate(content):
        bp = f"/content/{j}"
        kind = b.get("type")
        if kind == "thinking":
            _extra(b, {"type", "text", "signature"}, i, bp, losses)
            if b.get("signature") is not None:
                losses.add(
                    i, f"{bp}/signature", "thinking signature has no Chat field (reasoning_content is text); dropped"
                )
            thinking.append(str(b["text"]))
        elif kind == "text":
            _extra(b, {"type", "text"}, i, bp, losses)
            texts.append(b)
        elif kind == "tool_use":
            _extra(b, {"type", "id", "name", "input"}, i, bp, losses)
            args = dumps(b["input"]).decode("utf-8", "surrogatepass")
            calls.append({"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": args}})
        else:
            losses.add(i, bp, f"{kind} block has no Chat assistant field; dropped")
            continue
        kinds.append(str(kind))
    if len(thinking) > 1:
        losses.add(i, "/content", f"{len(thinking)} thinking blocks joined into one reasoning_content")
    ranks = [_RANK[k] for k in kinds]
    if ranks != sorted(ranks):
        losses.add(
            i,
            "/content",
            "Chat keeps reasoning, text and tool calls in separate fields: block order becomes thinking, text, tool_use",
        )
    msg: dict[str, Any] = {"role": "assistant"}
    msg["content"] = None if calls and not texts else _text_content(texts)
    if thinking:
        msg["reasoning_content"] = "".join(thinking)
    if calls:
        msg["tool_calls"] = calls
    return msg


def _tool_to_chat(i: int, m: dict[str, Any], content: list[dict[str, Any]], losses: Losses) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    parent = (m.get("metadata") or {}).get("parent_tool_use_id")
    for j, b in enumerate(content):
        bp = f"/content/{j}"
        if b.get("type") != "tool_result":
            losses.add(i, bp, f"{b.get('type')} block in a tool message has no Chat field; dropped")
            continue
        _extra(b, {"type", "tool_use_id", "content", "is_error"}, i, bp, losses)
        if b.get("is_error") is True:
            losses.add(
                i, f"{bp}/is_error", "is_error: true has no Chat field (a tool message carries no error flag); dropped"
            )
        if parent is not None and parent != b["tool_use_id"]:
            losses.add(
                i,
                "/metadata/parent_tool_use_id",
                f"parent_tool_use_id {short(parent)} differs from the result's; dropped",
            )
        texts: list[dict[str, Any]] = []
        for k, inner in enumerate(b["content"]):
            if inner.get("type") == "text":
                _extra(inner, {"type", "text"}, i, f"{bp}/content/{k}", losses)
                texts.append(inner)
            else:
                losses.add(
                    i,
                    f"{bp}/content/{k}",
                    f"{inner.get('type')} block in a tool result: Chat tool content is text; dropped",
                )
        out.append({"role": "tool", "tool_call_id": b["tool_use_id"], "content": _text_content(texts)})
    return out


# -- Chat -> canonical ---------------------------------------------------------------------

_KNOWN_FIELDS = {
    "system": {"role", "content"},
    "developer": {"role", "content"},
    "user": {"role", "content"},
    "assistant": {"role", "content", "tool_calls", "reasoning_content", "reasoning"},
    "tool": {"role", "content", "tool_call_id"},
}


PLACEHOLDER_MODEL = "unknown:unknown"


def placeholder_metadata() -> dict[str, Any]:
    """What canonical requires on a complete assistant message (§5.3.1-3) and Chat
    messages do not record: model, provider, routing, usage (as the chibi converter)."""
    return {
        "model": PLACEHOLDER_MODEL,
        "provider": "unknown",
        "routing": {
            "mode": "default",
            "chosen_model": PLACEHOLDER_MODEL,
            "reason": "converted from openai-messages, which records no model or routing",
        },
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "cost_usd": "0",
            "pricing_version": "unknown",
            "latency_ms": 0,
        },
    }


@dataclass
class Session:
    """Ids and times minted for one conversation (Chat messages have none)."""

    mint: IdMint
    ms: int
    calls: dict[str, str] = field(default_factory=dict)  # Chat call id -> canonical id


def _texts(content: Any, i: int, ptr: str, losses: Losses, role: str) -> list[dict[str, Any]]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks: list[dict[str, Any]] = []
    for j, p in enumerate(content):
        kind = p.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": p["text"]})
        elif kind == "refusal":
            losses.add(i, f"{ptr}/{j}", "refusal part read as text (canonical has no refusal marker)")
            blocks.append({"type": "text", "text": p["refusal"]})
        elif kind == "image_url" and role == "user":
            blocks.extend(_image(p, i, f"{ptr}/{j}", losses))
        else:
            losses.add(i, f"{ptr}/{j}", f"{kind} part has no canonical v1 block; dropped")
    return blocks


def _image(p: dict[str, Any], i: int, ptr: str, losses: Losses) -> list[dict[str, Any]]:
    img = p["image_url"]
    url = str(img["url"])
    extra = sorted(set(img) - {"url"})
    if extra:
        losses.add(i, f"{ptr}/image_url", f"image_url {', '.join(extra)} has no canonical field; dropped")
    m = _DATA_URL.match(url)
    if m is not None:
        data = m.group(2)
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            losses.add(i, f"{ptr}/image_url/url", "data URL does not hold strict base64; image dropped")
            return []
        return [{"type": "image", "source": {"kind": "base64", "data": data}, "media_type": m.group(1)}]
    if url.startswith("data:"):
        losses.add(i, f"{ptr}/image_url/url", "data URL is not `data:<type>;base64,<data>`; image dropped")
        return []
    media = media_type_of_url(url)
    if media is None:
        losses.add(
            i,
            f"{ptr}/image_url/url",
            f"the URL does not say the image's media type; {UNKNOWN_MEDIA} assumed",
            R.SYNTHESIZED,
        )
    return [{"type": "image", "source": {"kind": "url", "data": url}, "media_type": media or UNKNOWN_MEDIA}]


def from_chat(chat: list[dict[str, Any]], session_id: str, s: Session) -> tuple[list[dict[str, Any]], Losses]:
    """The canonical messages of one Chat conversation (valid per the checker), with
    ids and created_at minted from `s` (one millisecond apart)."""
    out: list[dict[str, Any]] = []
    losses = Losses(R.LOSSY)
    for i, v in enumerate(chat):
        role = v["role"]
        if role == "function":
            losses.add(i, "", "a deprecated function message has no canonical form; dropped")
            continue
        extra = sorted(set(v) - _KNOWN_FIELDS[role])
        if extra:
            losses.add(i, "", f"field(s) {', '.join(extra)} have no canonical field; dropped")
        meta: dict[str, Any] = {}
        if role in ("system", "developer"):
            if role == "developer":
                losses.add(i, "/role", "developer message read as a system message")
            content = _texts(v.get("content"), i, "/content", losses, role)
            role = "system"
        elif role == "user":
            content = _texts(v.get("content"), i, "/content", losses, role)
        elif role == "assistant":
            meta = placeholder_metadata()
            content = []
            reasoning = [k for k in ("reasoning_content", "reasoning") if isinstance(v.get(k), str)]
            if reasoning:
                content.append({"type": "thinking", "text": v[reasoning[0]]})
                if len(reasoning) > 1 and v[reasoning[1]] != v[reasoning[0]]:
                    losses.add(i, f"/{reasoning[1]}", f"both reasoning_content and reasoning; {reasoning[1]} dropped")
            content += _texts(v.get("content"), i, "/content", losses, role)
            for j, call in enumerate(v.get("tool_calls") or []):
                cid = call["id"]
                tid = cid if is_tool_id(cid) and cid not in s.calls.values() else s.mint.tool_id(s.ms, cid, j)
                s.calls[cid] = tid
                fn = call["function"]
                name = canonical_tool_name(fn["name"])
                if name != fn["name"]:
                    losses.add(
                        i, f"/tool_calls/{j}/function/name",
                        f"tool name {fn['name']!r} is not a canonical tool name (snake_case, §4.2); written as {name!r}",
                    )  # fmt: skip
                content.append(
                    {"type": "tool_use", "id": tid, "name": name, "input": arguments_object(fn["arguments"])}
                )
        else:  # tool
            tid = s.calls[v["tool_call_id"]]
            content = [
                {
                    "type": "tool_result",
                    "tool_use_id": tid,
                    "content": _texts(v.get("content"), i, "/content", losses, role),
                }
            ]
            meta["parent_tool_use_id"] = tid
        if not content and role in ("user", "assistant"):
            # canonical §5.1.1 (TS101): a user or assistant message holds a block
            content = [{"type": "text", "text": ""}]
            losses.add(
                i, "/content", "the message holds nothing canonical can; an empty text block written", R.SYNTHESIZED
            )
        s.ms += 1
        out.append(
            {
                "id": s.mint.ulid(s.ms, i),
                "session_id": session_id,
                "role": role,
                "content": content,
                "metadata": meta,
                "created_at": rfc3339(s.ms * 1000),
                "schema_version": 1,
            }
        )
    return out, losses
