"""AI SDK ModelMessages -> canonical messages (converting back writes UIMessages, `mapping`).

| ai-sdk (ModelMessage)                                   | canonical                                     |
|---------------------------------------------------------|-----------------------------------------------|
| system `content` string                                 | system message, one text block                |
| user: string, text, image / file image/* (data URL,     | user message: text, image (base64 / url)      |
|   URL or base64 with its mediaType)                     |                                               |
| assistant: string, text, reasoning, tool-call           | assistant: text, thinking (signature from     |
|                                                         |   providerOptions.anthropic), tool_use        |
| tool-result (tool message, or provider-executed in the  | tool message: tool_result (text; json as its  |
|   assistant message) answering an earlier tool-call     |   JSON text; error-* and execution-denied:    |
|                                                         |   is_error)                                   |
| tool-result answering no call                           | user text (reported)                          |
| approvals, other files, unknown part types              | provider_raw["ai-sdk"].model_kept of the      |
|                                                         |   message's first canonical message (else     |
|                                                         |   reported)                                   |
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from ...core.convertkit import Losses, media_type_of_url, short
from ...core.ids import is_tool_id
from ...core.jsonio import dumps
from ..canonical.tools import canonical_tool_name
from . import rules as R
from .mapping import _DATA_URL, RAW, Session, _Out, placeholder_metadata

UNKNOWN_MEDIA = "image/jpeg"


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else dumps(value).decode("utf-8", "surrogatepass")


def from_model_messages(
    conversation: list[dict[str, Any]], session_id: str, s: Session
) -> tuple[list[dict[str, Any]], list[int], Losses]:
    """The canonical messages of one conversation of ModelMessages (valid per the checker),
    with ids and created_at minted from `s`; and for each, the ModelMessage it came from."""
    out = _Out(session_id, s)
    losses = Losses(R.LOSSY)
    for i, msg in enumerate(conversation):
        first = len(out.messages)
        kept: list[dict[str, Any]] = []
        if "providerOptions" in msg:
            losses.add(i, "/providerOptions", "message providerOptions have no canonical field; dropped")
        content = msg["content"]
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        role = msg["role"]
        if role in ("system", "user"):
            blocks = [b for j, p in enumerate(parts) if (b := _user_block(i, f"/content/{j}", p, j, kept, losses))]
            if not blocks:
                blocks = [{"type": "text", "text": ""}]
                losses.add(
                    i, "/content", "the message holds nothing canonical can; an empty text block written", R.SYNTHESIZED
                )
            out.emit(i, role, blocks, {})
        elif role == "assistant":
            _assistant(i, parts, out, losses, kept)
        else:
            for j, p in enumerate(parts):
                if p["type"] == "tool-result":
                    _result(i, f"/content/{j}", p, out, losses)
                else:
                    kept.append({"at": j, "part": p})
        if len(out.messages) > first:
            if kept:  # ModelMessage parts: `mapping.to_ai_sdk` writes UIMessages and reports them
                out.messages[first]["metadata"]["provider_raw"] = {RAW: {"model_kept": kept}}
            for k in kept:
                losses.add(
                    i,
                    f"/content/{k['at']}",
                    f"{k['part']['type']} part has no canonical block; kept only in provider_raw",
                )
        else:
            for k in kept:
                losses.add(i, f"/content/{k['at']}", f"{k['part']['type']} part has no canonical block; dropped")
    return out.messages, out.origin, losses


def _extras(i: int, pp: str, part: dict[str, Any], read: set[str], losses: Losses) -> None:
    extra = sorted(k for k in set(part) - read if part[k] is not None)
    if extra:
        losses.add(i, pp, f"{part['type']} part field(s) {', '.join(extra)} have no canonical field; dropped")


def _image(i: int, pp: str, data: str, media: Any, losses: Losses) -> dict[str, Any] | None:
    m = _DATA_URL.match(data)
    if m:
        media, data = (media if isinstance(media, str) else m.group(1)), m.group(2)
    elif data.startswith(("http://", "https://")):
        if not isinstance(media, str):
            media = media_type_of_url(data)
            if media is None:
                losses.add(
                    i, pp, f"the URL does not say the image's media type; {UNKNOWN_MEDIA} assumed", R.SYNTHESIZED
                )
                media = UNKNOWN_MEDIA
        return {"type": "image", "source": {"kind": "url", "data": data}, "media_type": media}
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not isinstance(media, str):
        losses.add(i, pp, f"the image's media type is not given; {UNKNOWN_MEDIA} assumed", R.SYNTHESIZED)
        media = UNKNOWN_MEDIA
    return {"type": "image", "source": {"kind": "base64", "data": data}, "media_type": media} if data else None


def _user_block(
    i: int, pp: str, p: dict[str, Any], j: int, kept: list[dict[str, Any]], losses: Losses
) -> dict[str, Any] | None:
    kind = p["type"]
    if kind == "text":
        _extras(i, pp, p, {"type", "text"}, losses)
        return {"type": "text", "text": p["text"]}
    if kind == "image" or (kind == "file" and str(p["mediaType"]).startswith("image/")):
        block = _image(i, pp, str(p["image" if kind == "image" else "data"]), p.get("mediaType"), losses)
        if block is not None:
            _extras(i, pp, p, {"type", "image", "data", "mediaType"}, losses)
            return block
    kept.append({"at": j, "part": p})
    return None


def _tool_id(s: Session, cid: str, pp: str) -> str:
    tid = cid if is_tool_id(cid) and cid not in s.calls.values() else s.mint.tool_id(s.ms, cid, pp)
    s.calls[cid] = tid
    return tid


def _assistant(i: int, parts: list[dict[str, Any]], out: _Out, losses: Losses, kept: list[dict[str, Any]]) -> None:
    blocks: list[dict[str, Any]] = []
    results: list[tuple[str, dict[str, Any]]] = []
    for j, p in enumerate(parts):
        pp = f"/content/{j}"
        kind = p["type"]
        if kind == "text":
            _extras(i, pp, p, {"type", "text"}, losses)
            blocks.append({"type": "text", "text": p["text"]})
        elif kind == "reasoning":
            block: dict[str, Any] = {"type": "thinking", "text": p["text"]}
            opts = p.get("providerOptions") or {}
            sig = opts.get("anthropic", {}).get("signature") if isinstance(opts.get("anthropic"), dict) else None
            if isinstance(sig, str):
                block["signature"] = sig
            elif opts:
                losses.add(i, f"{pp}/providerOptions", "reasoning providerOptions have no canonical field; dropped")
            blocks.append(block)
        elif kind == "tool-call":
            _extras(i, pp, p, {"type", "toolCallId", "toolName", "input", "providerExecuted"}, losses)
            tid = _tool_id(out.s, str(p["toolCallId"]), pp)
            name = canonical_tool_name(str(p["toolName"])) if p["toolName"] else "unknown_tool"
            if name != p["toolName"]:
                losses.add(
                    i,
                    f"{pp}/toolName",
                    f"tool name {p['toolName']!r} is not a canonical tool name (snake_case, §4.2); written as {name!r}",
                )
            args = p["input"] if isinstance(p["input"], dict) else {} if p["input"] is None else {"input": p["input"]}
            if not isinstance(p["input"], (dict, type(None))):
                losses.add(
                    i, f"{pp}/input", f"tool input {short(p['input'])} is not an object; written as {{'input': ...}}"
                )
            blocks.append({"type": "tool_use", "id": tid, "name": name, "input": args})
        elif kind == "tool-result":
            results.append((pp, p))
        else:
            kept.append({"at": j, "part": p})
    if not blocks:
        blocks = [{"type": "text", "text": ""}]
        losses.add(i, "/content", "the message holds nothing canonical can; an empty text block written", R.SYNTHESIZED)
    out.emit(i, "assistant", blocks, placeholder_metadata())
    for pp, p in results:
        _result(i, pp, p, out, losses)


def _result(i: int, pp: str, p: dict[str, Any], out: _Out, losses: Losses) -> None:
    _extras(i, pp, p, {"type", "toolCallId", "toolName", "output"}, losses)
    o = p["output"]
    kind = o["type"]
    texts: list[dict[str, Any]]
    if kind in ("text", "error-text"):
        texts = [{"type": "text", "text": o["value"]}]
    elif kind in ("json", "error-json"):
        losses.add(i, f"{pp}/output", f"a {kind} output written as its JSON text")
        texts = [{"type": "text", "text": _text_of(o["value"])}]
    elif kind == "execution-denied":
        losses.add(i, f"{pp}/output", "a denied tool call read as an error result")
        texts = [{"type": "text", "text": f"denied: {o['reason']}" if isinstance(o.get("reason"), str) else "denied"}]
    else:
        texts = [{"type": "text", "text": x["text"]} for x in o["value"] if x["type"] == "text"]
        if len(texts) != len(o["value"]):
            losses.add(
                i, f"{pp}/output/value", "content output items other than text have no tool_result form; dropped"
            )
        texts = texts or [{"type": "text", "text": ""}]
    cid = str(p["toolCallId"])
    if cid not in out.s.calls:
        losses.add(i, pp, "a tool result answering no tool call read as user text")
        out.emit(i, "user", texts, {})
        return
    tid = out.s.calls[cid]
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid, "content": texts}
    if kind.startswith("error-") or kind == "execution-denied":
        result["is_error"] = True
    out.emit(i, "tool", [result], {"parent_tool_use_id": tid})
