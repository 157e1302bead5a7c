"""OpenTelemetry GenAI records <-> canonical messages, as pure functions (file handling:
`convert`).

What maps (OTel → canonical, and back):

| OTel GenAI                                            | canonical                                  |
|-------------------------------------------------------|--------------------------------------------|
| gen_ai.system_instructions (text parts)               | one system message                         |
| input message role system / user (text, blob or uri  | system / user: text, image (base64 / url)  |
|   parts of modality image)                            |                                            |
| role assistant: text, reasoning, tool_call parts      | assistant: text, thinking, tool_use        |
| tool_call_response part (any role but assistant)      | tool message: one tool_result              |
| the first gen_ai.output.messages entry                | the last assistant message                 |
| gen_ai.provider.name, gen_ai.response.model (or       | that message's metadata provider, model,   |
|   request.model), gen_ai.usage.input/output_tokens    |   usage input/output tokens                |

Canonical → OTel writes one record per session: a final assistant message as
`gen_ai.output.messages` (finish_reason `tool_call` when it calls a tool, else `stop`)
with its model, provider and tokens as attributes; every other message in
`gen_ai.input.messages`. Everything else is a loss, reported once where it happens.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
from dataclasses import dataclass, field
from typing import Any

from ...core.convertkit import (
    IdMint,
    Item,
    Losses,
    block_extras,
    media_type_of_url,
    placeholder_metadata,
    provider_id,
    rfc3339,
    short,
)
from ...core.ids import is_tool_id
from ...core.jsonio import dumps, parse
from ..canonical.tools import canonical_tool_name
from . import rules as R
from .checker import response_of
from .reader import Record

UNKNOWN_MEDIA = "image/jpeg"
# finish reasons that say no more than a complete canonical message does
_PLAIN_FINISH = ("stop", "tool_call")


# -- canonical -> OTel --------------------------------------------------------------------------


def to_otel(messages: list[dict[str, Any]]) -> tuple[dict[str, Any], Losses]:
    """The record of one canonical session, and what it could not hold."""
    losses = Losses(R.LOSSY)
    final = len(messages) - 1 if messages and messages[-1]["role"] == "assistant" else None
    inputs: list[dict[str, Any]] = []
    record: dict[str, Any] = {}
    for i, m in enumerate(messages):
        role = m["role"]
        meta = m.get("metadata") or {}
        kept = {"model", "provider"} if i == final else set()
        dropped = [
            k for k, v in meta.items()
            if v is not None and not (k == "status" and v == "complete")
            and not (k == "parent_tool_use_id" and role == "tool") and k not in kept
        ]  # fmt: skip
        if dropped:
            note = " (usage keeps its input and output tokens)" if "usage" in dropped and i == final else ""
            losses.add(
                i, "/metadata", f"metadata {', '.join(sorted(dropped))} has no OTel GenAI field here; dropped{note}"
            )
        extra = sorted(set(m) - {"id", "session_id", "role", "content", "metadata", "created_at", "schema_version"})
        if extra:
            losses.add(i, "", f"message field(s) {', '.join(extra)} have no OTel GenAI field; dropped")
        parts = _parts(i, m, losses)
        if i == final:
            finish = "tool_call" if any(p["type"] == "tool_call" for p in parts) else "stop"
            record[R.OUTPUT] = [{"role": "assistant", "parts": parts, "finish_reason": finish}]
            model, provider, usage = meta.get("model"), meta.get("provider"), meta.get("usage")
            if isinstance(provider, str):
                record["gen_ai.provider.name"] = provider
            if isinstance(model, str):
                record["gen_ai.response.model"] = model.split(":", 1)[1] if ":" in model else model
            if isinstance(usage, dict):
                for k in ("input_tokens", "output_tokens"):
                    if isinstance(usage.get(k), int):
                        record[f"gen_ai.usage.{k}"] = usage[k]
        else:
            inputs.append({"role": role, "parts": parts})
    return {R.INPUT: inputs, **record}, losses


def _parts(i: int, m: dict[str, Any], losses: Losses) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for j, b in enumerate(m["content"]):
        bp = f"/content/{j}"
        kind = b.get("type")
        extra = block_extras(b)
        if extra:
            losses.add(i, bp, f"{kind} block field(s) {', '.join(extra)} have no OTel GenAI field; dropped")
        if kind == "text":
            out.append({"type": "text", "content": b["text"]})
        elif kind == "thinking":
            out.append({"type": "reasoning", "content": b["text"]})
            if b.get("signature") is not None:
                losses.add(i, f"{bp}/signature", "a thinking signature has no ReasoningPart field; dropped")
        elif kind == "tool_use":
            out.append({"type": "tool_call", "id": b["id"], "name": b["name"], "arguments": b["input"]})
        elif kind == "tool_result":
            texts = []
            for k, x in enumerate(b["content"]):
                if x.get("type") == "text":
                    texts.append(x["text"])
                else:
                    losses.add(i, f"{bp}/content/{k}", f"{x.get('type')} block in a tool result; dropped (text only)")
            if b.get("is_error") is True:
                losses.add(i, f"{bp}/is_error", "a tool result's error flag has no ToolCallResponsePart field; dropped")
            out.append(
                {
                    "type": "tool_call_response",
                    "id": b["tool_use_id"],
                    "response": texts[0] if len(texts) == 1 else texts,
                }
            )
        elif kind == "image" and b["source"]["kind"] in ("base64", "url"):
            base = {"modality": "image", "mime_type": b["media_type"]}
            if b["source"]["kind"] == "base64":
                out.append({"type": "blob", **base, "content": b["source"]["data"]})
            else:
                out.append({"type": "uri", **base, "uri": b["source"]["data"]})
        elif kind == "image":
            losses.add(i, bp, f"{b['source']['kind']} image {short(b['source']['data'])} has no part form; dropped")
        else:
            losses.add(i, bp, f"{kind} block has no OTel GenAI part; dropped")
    return out


# -- OTel -> canonical --------------------------------------------------------------------------


@dataclass
class Session:
    """Ids and times minted for one record."""

    mint: IdMint
    ms: int
    calls: dict[str, str] = field(default_factory=dict)  # OTel tool call id -> canonical id


_KNOWN_ATTRS = {
    "gen_ai.provider.name", "gen_ai.system", "gen_ai.response.model", "gen_ai.request.model",
    "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
}  # fmt: skip
_KNOWN_PART = {
    "text": {"type", "content"},
    "reasoning": {"type", "content"},
    "tool_call": {"type", "id", "name", "arguments"},
    "tool_call_response": {"type", "id", "response", "result"},
    "blob": {"type", "modality", "mime_type", "content"},
    "uri": {"type", "modality", "mime_type", "uri"},
}


def _carries(v: Any) -> bool:
    return v not in (None, {}, [], "")


@dataclass
class _Out:
    session_id: str
    s: Session
    messages: list[dict[str, Any]] = field(default_factory=list)
    origin: list[Item] = field(default_factory=list)

    def emit(self, at: Item, role: str, content: list[dict[str, Any]], meta: dict[str, Any]) -> None:
        self.s.ms += 1
        self.messages.append({
            "id": self.s.mint.ulid(self.s.ms, len(self.messages)), "session_id": self.session_id, "role": role,
            "content": content, "metadata": meta, "created_at": rfc3339(self.s.ms * 1000), "schema_version": 1,
        })  # fmt: skip
        self.origin.append(at)


def from_otel(rec: Record, session_id: str, s: Session) -> tuple[list[dict[str, Any]], list[Item], Losses, list[Item]]:
    """The canonical messages of one record (valid per the checker), with ids and
    created_at minted from `s`; for each, the item it came from; the losses, located by
    index into the last list (the items they happened in)."""
    out = _Out(session_id, s)
    losses = Losses(R.LOSSY)
    places: list[Item] = []

    def loss(at: Item, ptr: str, text: str, rule: Any = None) -> None:
        places.append(at)
        losses.add(len(places) - 1, ptr, text, rule)

    head = Item(rec.path, rec.line, rec.pointer, None)
    extra = sorted(k for k, v in rec.attrs.items() if k not in _KNOWN_ATTRS and _carries(v))
    if extra:
        loss(head, "", f"attribute(s) {', '.join(extra)} have no canonical field; dropped")
    system = rec.sections.get(R.SYSTEM, [])
    if system:
        blocks: list[dict[str, Any]] = []
        for part in system:
            blocks += _blocks(part, "", [part.value], "system", s, loss)
        out.emit(system[0], "system", blocks, {})
    outputs = rec.sections.get(R.OUTPUT, [])
    for k, extra_choice in enumerate(outputs[1:], 1):
        loss(extra_choice, "", f"output message {k} is another choice; canonical keeps one (the first); dropped")
    items = rec.sections.get(R.INPUT, []) + outputs[:1]
    for n, m in enumerate(items):
        v = m.value
        role = v["role"]
        final = bool(outputs) and n == len(items) - 1
        dropped = sorted(k for k, x in v.items() if k not in ("role", "parts", "finish_reason") and _carries(x))
        if dropped:
            loss(m, "", f"message field(s) {', '.join(dropped)} have no canonical field; dropped")
        finish = v.get("finish_reason")
        if isinstance(finish, str) and finish not in _PLAIN_FINISH:
            loss(m, "/finish_reason", f"finish_reason {finish!r} has no canonical field; dropped")
        if role == "assistant":
            content = _blocks(m, "/parts", v["parts"], "assistant", s, loss)
            meta = _assistant_meta(rec, head, final, loss)
            if not content:
                content = [{"type": "text", "text": ""}]
                loss(m, "/parts", "the message holds nothing canonical can; an empty text block written", R.SYNTHESIZED)
            out.emit(m, "assistant", content, meta)
            continue
        if role not in ("system", "user", "tool"):
            loss(m, "/role", f"role {role!r} is not a canonical role; read as user")
        kind = "system" if role == "system" else "user"
        pending: list[dict[str, Any]] = []
        for j, part in enumerate(v["parts"]):
            pp = f"/parts/{j}"
            if part["type"] != "tool_call_response":
                if role == "tool":
                    loss(m, pp, f"a {part['type']} part in a tool message has no canonical place; dropped")
                else:
                    pending += _blocks(m, pp, [part], kind, s, loss, single=True)
                continue
            if pending:
                out.emit(m, kind, pending, {})
                pending = []
            _response(m, pp, part, s, out, loss)
        if pending or (role not in ("tool",) and not any(p["type"] == "tool_call_response" for p in v["parts"])):
            if not pending and kind == "user":
                pending = [{"type": "text", "text": ""}]
                loss(m, "/parts", "the message holds nothing canonical can; an empty text block written", R.SYNTHESIZED)
            out.emit(m, kind, pending, {})
    return out.messages, out.origin, losses, places


def _response(m: Item, pp: str, part: dict[str, Any], s: Session, out: _Out, loss: Any) -> None:
    _, value = response_of(part)
    if isinstance(value, str):
        texts = [value]
    elif isinstance(value, list) and all(isinstance(x, str) for x in value):
        texts = list(value)
    else:
        loss(m, pp, f"tool response {short(value)} written as its JSON text")
        texts = [dumps(value).decode("utf-8", "surrogatepass")]
    blocks = [{"type": "text", "text": t} for t in texts]
    cid = part.get("id")
    if isinstance(cid, str) and cid in s.calls:
        tid = s.calls[cid]
        out.emit(
            m, "tool", [{"type": "tool_result", "tool_use_id": tid, "content": blocks}], {"parent_tool_use_id": tid}
        )
    else:
        loss(m, pp, "a tool call response answering no tool call read as user text")
        out.emit(m, "user", blocks or [{"type": "text", "text": ""}], {})
    extra = sorted(k for k, x in part.items() if k not in _KNOWN_PART["tool_call_response"] and _carries(x))
    if extra:
        loss(m, pp, f"tool_call_response field(s) {', '.join(extra)} have no canonical field; dropped")


def _blocks(
    m: Item, base: str, parts: list[dict[str, Any]], role: str, s: Session, loss: Any, single: bool = False
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for j, part in enumerate(parts):
        pp = base if single else f"{base}/{j}" if base else ""
        kind = part["type"]
        if kind == "text":
            out.append({"type": "text", "text": part["content"]})
        elif kind == "reasoning" and role == "assistant":
            out.append({"type": "thinking", "text": part["content"]})
        elif kind == "tool_call" and role == "assistant":
            out.append(_tool_use(m, pp, part, s, loss))
        elif kind in ("blob", "uri") and role == "user" and part["modality"] == "image":
            image = _image(m, pp, part, loss)
            if image is None:
                continue
            out.append(image)
        else:
            loss(m, pp, f"a {kind} part has no canonical block in a {role} message; dropped")
            continue
        extra = sorted(k for k, x in part.items() if k not in _KNOWN_PART[kind] and _carries(x))
        if extra:
            loss(m, pp, f"{kind} part field(s) {', '.join(extra)} have no canonical field; dropped")
    return out


def _image(m: Item, pp: str, part: dict[str, Any], loss: Any) -> dict[str, Any] | None:
    media = part.get("mime_type")
    if part["type"] == "blob":
        data = part["content"]
        try:
            base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            loss(m, pp, "blob content is not base64; image dropped")
            return None
        if not (isinstance(media, str) and media.startswith("image/")):
            loss(m, pp, f"the blob does not say the image's media type; {UNKNOWN_MEDIA} assumed", R.SYNTHESIZED)
            media = UNKNOWN_MEDIA
        return {"type": "image", "source": {"kind": "base64", "data": data}, "media_type": media}
    url = part["uri"]
    if not (isinstance(media, str) and media.startswith("image/")):
        media = media_type_of_url(url)
        if media is None:
            loss(m, pp, f"the URI does not say the image's media type; {UNKNOWN_MEDIA} assumed", R.SYNTHESIZED)
            media = UNKNOWN_MEDIA
    return {"type": "image", "source": {"kind": "url", "data": url}, "media_type": media}


def _tool_use(m: Item, pp: str, part: dict[str, Any], s: Session, loss: Any) -> dict[str, Any]:
    cid = part.get("id")
    if isinstance(cid, str) and is_tool_id(cid) and cid not in s.calls.values():
        tid = cid
    else:
        tid = s.mint.tool_id(s.ms, str(cid), pp)
        if cid is None:
            loss(m, pp, "a tool call with no id: a tool id minted", R.SYNTHESIZED)
    if isinstance(cid, str):
        s.calls[cid] = tid
    name = canonical_tool_name(part["name"])
    if name != part["name"]:
        loss(
            m,
            f"{pp}/name",
            f"tool name {part['name']!r} is not a canonical tool name (snake_case, §4.2); written as {name!r}",
        )
    args = part.get("arguments")
    if isinstance(args, str):
        with contextlib.suppress(ValueError):
            args = parse(args.encode("utf-8", "surrogatepass"))
    if args is None:
        args = {}
    if not isinstance(args, dict):
        loss(m, f"{pp}/arguments", f"arguments {short(args)} are not a JSON object; written as {{}}")
        args = {}
    return {"type": "tool_use", "id": tid, "name": name, "input": args}


def _assistant_meta(rec: Record, head: Item, final: bool, loss: Any) -> dict[str, Any]:
    a = rec.attrs
    provider = a.get("gen_ai.provider.name", a.get("gen_ai.system"))
    provider = provider if isinstance(provider, str) else None
    pid = provider_id(provider) if provider else "unknown"
    model = f"{pid}:unknown"
    tokens: dict[str, int] = {}
    if final:
        if provider and pid != provider:
            loss(head, "", f"provider {provider!r} is not a canonical provider id (§6.3); written as {pid!r}")
        name = a.get("gen_ai.response.model", a.get("gen_ai.request.model"))
        if isinstance(name, str) and name:
            part = re.sub(r"\s+", "-", name)
            model = f"{pid}:{part}"
            if part != name:
                loss(head, "", f"model {name!r} holds white space; written as {part!r}")
        for k in ("input_tokens", "output_tokens"):
            v = a.get(f"gen_ai.usage.{k}")
            if type(v) is int and v >= 0:  # a token count canonical takes (a JSON true is none)
                tokens[k] = v
            elif v is not None:
                loss(head, "", f"gen_ai.usage.{k} {short(v)} is not a token count; dropped")
    meta = placeholder_metadata(model, pid, "OpenTelemetry GenAI")
    meta["usage"].update(tokens)
    return meta
