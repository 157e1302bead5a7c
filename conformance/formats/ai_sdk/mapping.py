"""AI SDK UIMessages <-> canonical messages, as pure functions (file handling: `convert`).

What maps (ai-sdk → canonical, and back):

| ai-sdk (UIMessage parts)                                   | canonical                                   |
|------------------------------------------------------------|---------------------------------------------|
| system message: text parts                                 | system message, a text block each           |
| user message: text; file image/* (data URL or URL)         | user message: text, image (base64 / url)    |
| assistant message: text, reasoning, tool-<name> /          | assistant: text, thinking, tool_use (in     |
|   dynamic-tool (input)                                     |   order), one message per step              |
| tool part output-available / output-error / output-denied  | tool message after its step: tool_result    |
|   (output, errorText)                                      |   (is_error for error and denied)           |
| step-start                                                 | a step boundary: the next assistant message |
| message id, metadata; tool names not snake_case, tool call | metadata.provider_raw["ai-sdk"] of the      |
|   ids not canonical; source-*, data-*, other files,        |   message's first canonical message         |
|   unknown part types                                       |                                             |

A step ends where its tool results are due: at a `step-start`, or at a text or reasoning
part after a tool part with a result. Canonical → ai-sdk writes each run of assistant and
tool messages as one assistant UIMessage (a `step-start` before each step, as `streamText`
writes them), each tool_result folded into its tool part's state; what provider_raw kept
comes back (ids, metadata, names, kept parts, appended to their message). Everything else
is a loss, reported once where it happens (`Loss`).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from typing import Any

from ...core.convertkit import IdMint, Losses, rfc3339, short
from ...core.convertkit import placeholder_metadata as shared_placeholder
from ...core.ids import is_tool_id
from ...core.jsonio import dumps
from ..canonical.tools import canonical_tool_name
from . import rules as R
from .checker import is_tool

RAW = "ai-sdk"  # the provider_raw key
_DATA_URL = re.compile(r"data:([^;,]+);base64,(.*)\Z", re.S)
RESULT_STATES = ("output-available", "output-error", "output-denied")
# the fields of a part that canonical carries (the others are reported)
_READ: dict[str, set[str]] = {
    "text": {"type", "text", "state"},
    "reasoning": {"type", "text", "state", "providerMetadata"},
    "file": {"type", "mediaType", "url"},
    "step-start": {"type"},
}
_TOOL_READ = {"type", "toolCallId", "state", "input", "output", "errorText", "toolName", "approval", "dynamic"}


def _json_text(value: Any) -> str:
    return dumps(value).decode("utf-8", "surrogatepass")


def placeholder_metadata() -> dict[str, Any]:
    """What canonical requires on a complete assistant message (§5.3.1-3) that a UIMessage
    does not record: model, routing, usage cost and timing."""
    return shared_placeholder("unknown:unknown", "unknown", "ai-sdk")


# -- ai-sdk -> canonical ------------------------------------------------------------------


@dataclass
class Session:
    """Ids and times minted for one conversation."""

    mint: IdMint
    ms: int
    calls: dict[str, str] = field(default_factory=dict)  # AI SDK toolCallId -> canonical id


@dataclass
class _Out:
    session_id: str
    s: Session
    messages: list[dict[str, Any]] = field(default_factory=list)
    origin: list[int] = field(default_factory=list)

    def emit(self, i: int, role: str, content: list[dict[str, Any]], meta: dict[str, Any]) -> None:
        self.s.ms += 1
        self.messages.append({
            "id": self.s.mint.ulid(self.s.ms, len(self.messages)), "session_id": self.session_id, "role": role,
            "content": content, "metadata": meta, "created_at": rfc3339(self.s.ms * 1000), "schema_version": 1,
        })  # fmt: skip
        self.origin.append(i)


def from_ai_sdk(
    conversation: list[dict[str, Any]], session_id: str, s: Session
) -> tuple[list[dict[str, Any]], list[int], Losses]:
    """The canonical messages of one conversation (valid per the checker), with ids and
    created_at minted from `s`; and for each, the index of the UIMessage it came from."""
    out = _Out(session_id, s)
    losses = Losses(R.LOSSY)
    for i, msg in enumerate(conversation):
        first = len(out.messages)
        raw: dict[str, Any] = {"id": msg["id"]}
        if "metadata" in msg:
            raw["metadata"] = msg["metadata"]
            losses.add(i, "/metadata", "message metadata has no canonical field; kept only in provider_raw")
        extra = sorted(set(msg) - {"id", "role", "metadata", "parts"})
        if extra:
            losses.add(i, "", f"message field(s) {', '.join(extra)} have no canonical field; dropped")
        kept: list[dict[str, Any]] = []
        names: dict[str, str] = {}  # canonical tool_use id -> the part's type, when the name changed
        calls: dict[str, str] = {}  # canonical tool_use id -> the toolCallId, when it is not a canonical id
        if msg["role"] == "assistant":
            _assistant(i, msg["parts"], out, losses, kept, names, calls)
        else:
            content = _plain(i, msg["role"], msg["parts"], losses, kept)
            if not content:
                content = [{"type": "text", "text": ""}]
                losses.add(
                    i, "/parts", "the message holds nothing canonical can; an empty text block written", R.SYNTHESIZED
                )
            out.emit(i, msg["role"], content, {})
        if kept:
            raw["kept"] = kept
        if names:
            raw["names"] = names
        if calls:
            raw["calls"] = calls
        meta = out.messages[first]["metadata"]
        meta["provider_raw"] = {RAW: raw}
    return out.messages, out.origin, losses


def _keep(i: int, pp: str, part: dict[str, Any], at: int, kept: list[dict[str, Any]], losses: Losses, why: str) -> None:
    kept.append({"at": at, "part": part})
    losses.add(i, pp, f"{why}; kept only in provider_raw")


def _extras(i: int, pp: str, part: dict[str, Any], read: set[str], losses: Losses) -> None:
    extra = sorted(k for k in set(part) - read if part[k] is not None)
    if extra:
        losses.add(i, pp, f"{part['type']} part field(s) {', '.join(extra)} have no canonical field; dropped")


def _plain(
    i: int, role: str, parts: list[dict[str, Any]], losses: Losses, kept: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for j, part in enumerate(parts):
        pp = f"/parts/{j}"
        kind = part["type"]
        if kind == "text":
            _extras(i, pp, part, _READ["text"], losses)
            blocks.append({"type": "text", "text": part["text"]})
        elif kind == "file" and role == "user" and str(part["mediaType"]).startswith("image/"):
            image = _image(part)
            if image is None:
                _keep(i, pp, part, j, kept, losses, "an image file whose url is neither a base64 data URL nor a URL")
                continue
            _extras(i, pp, part, _READ["file"], losses)
            blocks.append(image)
        else:
            _keep(i, pp, part, j, kept, losses, f"{kind} part has no canonical block in a {role} message")
    return blocks


def _image(part: dict[str, Any]) -> dict[str, Any] | None:
    url = str(part["url"])
    media = str(part["mediaType"])
    m = _DATA_URL.match(url)
    if m:
        try:
            base64.b64decode(m.group(2), validate=True)
        except (binascii.Error, ValueError):
            return None
        return {"type": "image", "source": {"kind": "base64", "data": m.group(2)}, "media_type": media}
    if url.startswith(("http://", "https://")):
        return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": media}
    return None


def _assistant(
    i: int,
    parts: list[dict[str, Any]],
    out: _Out,
    losses: Losses,
    kept: list[dict[str, Any]],
    names: dict[str, str],
    calls: dict[str, str],
) -> None:
    blocks: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []

    def flush(always: bool = False) -> None:
        nonlocal blocks, results
        if not blocks and not results and not always:
            return
        if not blocks:
            blocks = [{"type": "text", "text": ""}]
            losses.add(i, "/parts", "a step holds nothing canonical can; an empty text block written", R.SYNTHESIZED)
        out.emit(i, "assistant", blocks, placeholder_metadata())
        for r in results:
            out.emit(i, "tool", [r], {"parent_tool_use_id": r["tool_use_id"]})
        blocks, results = [], []

    for j, part in enumerate(parts):
        pp = f"/parts/{j}"
        kind = part["type"]
        if kind == "step-start":
            flush()
        elif kind in ("text", "reasoning"):
            if results:
                flush()
            blocks.append(_text_or_thinking(i, pp, part, losses))
        elif is_tool(kind):
            tid, use, result = _tool(i, pp, part, out.s, losses)
            name = str(part["toolName"]) if kind == "dynamic-tool" else kind[5:]
            if use["name"] != name or kind == "dynamic-tool":
                names[tid] = kind if kind != "dynamic-tool" else f"dynamic:{name}"
            if tid != part["toolCallId"]:
                calls[tid] = str(part["toolCallId"])
            blocks.append(use)
            if result is not None:
                results.append(result)
        else:
            _keep(i, pp, part, j, kept, losses, f"{kind} part has no canonical block")
    flush(always=not out.messages or out.origin[-1] != i)


def _text_or_thinking(i: int, pp: str, part: dict[str, Any], losses: Losses) -> dict[str, Any]:
    if part.get("state") == "streaming":
        losses.add(i, f"{pp}/state", f"{part['type']} state 'streaming' (unfinished) read as finished text")
    if part["type"] == "text":
        _extras(i, pp, part, _READ["text"], losses)
        return {"type": "text", "text": part["text"]}
    _extras(i, pp, part, _READ["reasoning"], losses)
    block: dict[str, Any] = {"type": "thinking", "text": part["text"]}
    meta = part.get("providerMetadata") or {}
    sig = (meta.get("anthropic") or {}).get("signature") if isinstance(meta.get("anthropic"), dict) else None
    if isinstance(sig, str):
        block["signature"] = sig
    rest = {k: v for k, v in meta.items() if k != "anthropic"} or (
        {k: v for k, v in meta["anthropic"].items() if k != "signature"}
        if isinstance(meta.get("anthropic"), dict)
        else {}
    )
    if rest:
        losses.add(i, f"{pp}/providerMetadata", "reasoning providerMetadata beyond anthropic.signature; dropped")
    return block


def _tool(
    i: int, pp: str, part: dict[str, Any], s: Session, losses: Losses
) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    kind = part["type"]
    name = str(part["toolName"]) if kind == "dynamic-tool" else kind[5:]
    _extras(i, pp, part, _TOOL_READ, losses)
    cid = str(part["toolCallId"])
    tid = cid if is_tool_id(cid) and cid not in s.calls.values() else s.mint.tool_id(s.ms, cid, pp)
    s.calls[cid] = tid
    canon = canonical_tool_name(name) if name else "unknown_tool"
    if canon != name:
        losses.add(
            i, f"{pp}/type", f"tool name {name!r} is not a canonical tool name (snake_case, §4.2); written as {canon!r}"
        )
    raw_input = part.get("input")
    if isinstance(raw_input, dict):
        args = raw_input
    elif raw_input is None:
        args = {}
    else:
        args = {"input": raw_input}
        losses.add(i, f"{pp}/input", f"tool input {short(raw_input)} is not an object; written as {{'input': ...}}")
    use = {"type": "tool_use", "id": tid, "name": canon, "input": args}
    state = part["state"]
    if state == "output-available":
        output = part.get("output")
        if not isinstance(output, str):
            losses.add(i, f"{pp}/output", "tool output written as its JSON text")
        text = output if isinstance(output, str) else _json_text(output)
        return tid, use, {"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": text}]}
    if state == "output-error":
        error = {"type": "text", "text": str(part["errorText"])}
        return tid, use, {"type": "tool_result", "tool_use_id": tid, "content": [error], "is_error": True}
    if state == "output-denied":
        reason = (part.get("approval") or {}).get("reason")
        losses.add(i, f"{pp}/state", "a denied tool call read as an error result")
        text = f"denied: {reason}" if isinstance(reason, str) else "denied"
        return (
            tid,
            use,
            {"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": text}], "is_error": True},
        )
    if state != "input-available":
        losses.add(i, f"{pp}/state", f"tool state {state} has no canonical form; read as a call with no result yet")
    return tid, use, None


# -- canonical -> ai-sdk ------------------------------------------------------------------


def to_ai_sdk(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Losses]:
    """The UIMessages of one canonical session, and what they could not hold."""
    out: list[dict[str, Any]] = []
    losses = Losses(R.LOSSY)
    turn: dict[str, Any] | None = None  # the assistant UIMessage a run of assistant/tool messages fills
    tools: dict[str, dict[str, Any]] = {}  # canonical tool_use id -> its part
    pending: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []  # parts lists and the parts they kept
    plain: list[tuple[int, dict[str, Any]]] = []  # the system and user UIMessages, and where each came from
    for i, m in enumerate(messages):
        role = m["role"]
        meta = m.get("metadata") or {}
        raw = (meta.get("provider_raw") or {}).get(RAW)
        raw = raw if isinstance(raw, dict) else {}
        dropped = sorted(
            k for k, v in meta.items()
            if v is not None and k not in ("provider_raw", "parent_tool_use_id")
            and not (k == "status" and v == "complete")
            and not (role == "assistant" and k in ("model", "provider", "routing", "usage"))
        )  # fmt: skip
        if dropped:
            losses.add(i, "/metadata", f"metadata {', '.join(dropped)} has no UIMessage field; dropped")
        names: dict[str, Any] = raw["names"] if isinstance(raw.get("names"), dict) else {}
        calls: dict[str, Any] = raw["calls"] if isinstance(raw.get("calls"), dict) else {}
        if role == "tool":
            if turn is None:
                losses.add(i, "", "a tool message answering no assistant message has no UIMessage form; dropped")
            else:
                _results(i, m["content"], tools, losses)
            continue
        if role == "assistant" and turn is not None and not raw.get("id"):
            parts: list[dict[str, Any]] = turn["parts"]
        else:
            ui: dict[str, Any] = {"id": str(raw.get("id") or m["id"]), "role": role}
            if "metadata" in raw:
                ui["metadata"] = raw["metadata"]
            ui["parts"] = parts = []
            out.append(ui)
            turn = ui if role == "assistant" else None
            if role != "assistant":
                plain.append((i, ui))
        if role == "assistant":
            parts.append({"type": "step-start"})
        for j, b in enumerate(m["content"]):
            part = _part(i, f"/content/{j}", b, role, meta, names, losses)
            if part is not None and isinstance(calls.get(b.get("id")), str):
                part["toolCallId"] = calls[b["id"]]
            if part is not None:
                parts.append(part)
                if is_tool(part["type"]):
                    tools[b["id"]] = part
        if raw.get("model_kept"):
            losses.add(
                i, "/metadata/provider_raw", "ModelMessage parts kept in provider_raw have no UIMessage form; dropped"
            )
        kept = [k for k in raw.get("kept") or [] if isinstance(k, dict) and isinstance(k.get("part"), dict)]
        if kept:
            pending.append((parts, kept))
    for parts, kept in pending:  # once the turn is whole: each kept part back at its place
        for k in kept:
            at = k.get("at")
            parts.insert(at if isinstance(at, int) and 0 <= at <= len(parts) else len(parts), k["part"])
    for i, ui in plain:  # validateUIMessages: 'Message must contain at least one part'
        if not ui["parts"]:
            ui["parts"].append({"type": "text", "text": ""})
            losses.add(i, "/content", f"a {ui['role']} UIMessage needs a part; an empty text part written")
    return out, losses


def _part(
    i: int, bp: str, b: dict[str, Any], role: str, meta: dict[str, Any], names: dict[str, Any], losses: Losses
) -> dict[str, Any] | None:
    kind = b.get("type")
    if kind == "text":
        return {"type": "text", "text": b["text"]}
    if kind == "thinking" and role == "assistant":
        part: dict[str, Any] = {"type": "reasoning", "text": b["text"]}
        sig = b.get("signature")
        if isinstance(sig, str):
            part["providerMetadata"] = {"anthropic": {"signature": sig}}
            if meta.get("provider") not in ("anthropic", "unknown", None):
                losses.add(i, f"{bp}/signature", "thinking signature written as providerMetadata.anthropic.signature")
        return part
    if kind == "tool_use" and role == "assistant":
        named = names.get(b["id"])
        if isinstance(named, str) and named.startswith("dynamic:"):
            head = {"type": "dynamic-tool", "toolName": named[8:]}
        else:
            head = {"type": named if isinstance(named, str) else f"tool-{b['name']}"}
        return {**head, "toolCallId": b["id"], "state": "input-available", "input": b["input"]}
    if kind == "image" and role == "user":
        src = b["source"]
        if src["kind"] == "base64":
            return {"type": "file", "mediaType": b["media_type"], "url": f"data:{b['media_type']};base64,{src['data']}"}
        if src["kind"] == "url":
            return {"type": "file", "mediaType": b["media_type"], "url": src["data"]}
        losses.add(i, bp, f"{src['kind']} image {short(src['data'])} has no FileUIPart form; dropped")
        return None
    losses.add(i, bp, f"{kind} block has no UIMessage part in a {role} message; dropped")
    return None


def _results(i: int, content: list[dict[str, Any]], tools: dict[str, dict[str, Any]], losses: Losses) -> None:
    for j, b in enumerate(content):
        bp = f"/content/{j}"
        part = tools.get(b.get("tool_use_id", "")) if b.get("type") == "tool_result" else None
        if part is None:
            losses.add(i, bp, f"{b.get('type')} block answers no tool part of this turn; dropped")
            continue
        texts = [str(x["text"]) for x in b["content"] if x.get("type") == "text"]
        if len(texts) != len(b["content"]):
            losses.add(i, f"{bp}/content", "non-text blocks of a tool result; dropped (text only)")
        text = "".join(texts)
        if b.get("is_error") is True:
            part["state"], part["errorText"] = "output-error", text
        else:
            part["state"], part["output"] = "output-available", text
