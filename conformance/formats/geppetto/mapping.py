"""The mapping between a geppetto Turn and canonical messages, as pure functions.

geppetto -> canonical
    Each block becomes content of a canonical message: system, user (text, then its
    images) and tool_use (a `tool` message with one tool_result) blocks one message each;
    consecutive model-generated blocks (llm_text, reasoning, tool_call) that carry the same
    `geppetto.inference_result@v1` are one assistant message, since they came from one
    inference and its usage must be counted once. Messages get ULIDs and tool calls
    `tu_<ULID>` ids derived from the input (canonical §6.1, §6.2; see `IdSource`); a tool
    call id that already is a canonical tool id is kept.

    Everything canonical has no field for is kept for the way back in each message's
    `metadata.provider_raw.geppetto`: per block its id, role, original tool call id,
    block metadata and the payload keys canonical does not carry, plus the turn's id,
    metadata and data on the first message. `provider_raw` and not an extra metadata key,
    because canonical §6.5 defines it as exactly this (an adapter's round-trip aid that
    only its writer reads and that is not part of equality), and an unknown metadata key
    would be a TS010 warning on every converted message and an error under --strict.
    Canonical content is authoritative on the way back: provider_raw only fills what
    canonical cannot hold, so an edited text is not overwritten by a stale copy.

canonical -> geppetto
    Each message becomes the blocks above, in order; a message that came from geppetto
    (has provider_raw.geppetto aligned with its content) gets its original blocks back.
    Other messages get fresh block ids, an inference_result projected from their model,
    provider, usage and status, and their canonical metadata under the block metadata key
    `turnspec.canonical_message@v1` (geppetto's stores are open to namespaced keys).

What is reported
    GE900 (lossy) whenever conversation content leaves the target's readers' reach:
    geppetto `other` blocks, reasoning `encrypted_content`, a reasoning `summary` next to
    visible text, tool args that are not an object, unmappable images; canonical thinking
    signatures for non-Gemini providers, redacted_thinking, file_ref images, images in
    tool results, unknown block types, tool definitions, messages without content.
    Turn-level data and metadata other than the session id and the inference result
    (tool config, trace ids, runtime) are reported once per turn, kept only in the
    round-trip store. Block-level fields without a canonical field are kept there too and
    reported once each, with their location, as kept only in provider_raw: turn and block
    fields geppetto's serde ignores, payload keys
    canonical content does not carry (tool_call `correlation`, `item_id`, ...), block
    metadata keys (`middleware`, `agentmode`, `openai_responses.*@v1`, ...) and the
    inference_result fields beyond provider, model, usage, cost, duration and finish class
    (`stop_reason`, `response_id`, `extra`, ...), one line per inference result. GE901 when
    canonical requires a value geppetto does not record (routing, pricing_version, and
    model/usage when no inference_result exists); the written value is named in the
    message.
"""

from __future__ import annotations

import binascii
import datetime as dt
import hashlib
import json
import random
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any
from urllib.parse import urlsplit

from ...core import ids
from ...core.convertkit import MIMES, IdMint, created_at_micros, short
from ...core.findings import RuleInfo
from ...core.ids import is_tool_id
from ...core.schemas import schema_set
from ..canonical.invariants import url_ok
from . import rules as R
from .yamlio import Binary, escape

RESULT_KEY = "geppetto.inference_result@v1"
SESSION_KEY = "geppetto.session_id@v1"
SIGNATURE_KEY = "gemini.thought_signature@v1"
CANONICAL_KEY = "turnspec.canonical_message@v1"
# a canonical message's id and created_at, on its first block (geppetto records neither)
IDS_KEY = "turnspec.canonical_ids@v1"
RAW = "geppetto"
RAW_VERSION = 1
SYNTH_PRICING = "unknown"

_KINDS = tuple(schema_set("geppetto", "v1")["block-kind.json"]["enum"])
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_MODEL_CHARS = re.compile(r"[^a-z0-9_.-]")
_DATA_URL = re.compile(r"data:([^;,]*)((?:;[^;,]*)*?);base64,", re.IGNORECASE)
# status <-> finish_class (turns.InferenceFinishClass, canonical §4.3 MessageStatus)
_STATUS = {"interrupted": "cancelled", "error": "error"}
_FINISH = {"cancelled": "interrupted", "error": "error", "partial": "unknown"}
_IMAGE_MEDIA = re.compile(r"image/[a-z0-9][a-z0-9!#$&^_.+-]*\Z")  # canonical image-block.json
# Python's built-in extension table only, so a guess does not depend on the machine's
# /etc/mime.types.
_MAGIC = ((b"\x89PNG", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"))


@dataclass(frozen=True, slots=True)
class Loss:
    """A step a converter must report: where (JSON pointer in the source) and what."""

    pointer: str
    message: str
    rule: RuleInfo = R.LOSSY
    record: int = 0
    """Index of the source record (canonical input: which message)."""


class IdSource:
    """Strictly increasing ULIDs and timestamps (canonical §6.1), and block UUIDs.

    geppetto records no time, so created_at counts up from `now_us`, one microsecond per
    message, and ULIDs carry that time (`conformance.core.convertkit.IdMint`, so they sort in
    creation order). `IdSource.of(data)` is the conversions' source: a pure function of the
    input bytes (same input, same output) starting at the Unix epoch, which the converter
    reports as a placeholder. `IdSource(rng, now_us)` is for tests and callers that choose.
    """

    def __init__(self, rng: random.Random | None = None, now_us: int | None = None) -> None:
        self.rng = rng or random.Random(0)
        self.us = now_us if now_us is not None else 0
        self.mint = IdMint(self.rng.getrandbits(79))
        self.derived = now_us is None
        """True when times are placeholders (counting from the epoch), not given by the caller."""
        self.minted_session = False
        self.minted_time = False
        """True once a message got a time counted by this source (not one it kept)."""

    @classmethod
    def of(cls, data: bytes) -> IdSource:
        """Ids and times derived from `data` (the input), starting at the epoch."""
        seed = int.from_bytes(hashlib.blake2b(data, digest_size=16).digest(), "big")
        return cls(random.Random(seed))

    def _ulid(self) -> str:
        out = self.mint.ulid(self.us // 1000, self.us)
        self.us += 1
        return out

    def keep(self, kept: Any) -> tuple[str, str] | None:
        """A canonical message's own id and created_at (IDS_KEY) when they still sort
        after everything minted so far, else None (fresh ones are minted)."""
        if (
            not isinstance(kept, dict)
            or not isinstance(kept.get("id"), str)
            or not isinstance(kept.get("created_at"), str)
        ):
            return None
        try:
            us = created_at_micros(kept["created_at"])
        except ValueError:
            return None
        if us < self.us or self.mint.keep(kept["id"]) is None:
            return None
        self.us = us + 1
        return kept["id"], kept["created_at"]

    def message(self) -> tuple[str, str]:
        self.minted_time = True
        when = _EPOCH + dt.timedelta(microseconds=self.us)  # integer arithmetic: exact µs
        created = when.strftime(ids.TIME_FORMAT)
        return self._ulid(), created

    def tool(self) -> str:
        return "tu_" + self._ulid()

    def session(self) -> str:
        self.minted_session = True
        return "sess_" + self._ulid()

    def uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))


def read_kind(raw: object) -> str:
    """The kind geppetto reads (trimmed, lower-cased; unknown -> other)."""
    norm = raw.strip().lower() if isinstance(raw, str) else "other"
    return norm if norm in _KINDS else "other"


def _text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _object_from(args: Any) -> dict[str, Any] | None:
    """Canonical tool input for geppetto `args` (an object, or JSON text of one)."""
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        try:
            parsed = json.loads(args)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    return None


def _strict_b64(data: str) -> bytes | None:
    try:
        return binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError):
        return None


def _sniff(raw: bytes) -> str | None:
    for magic, media in _MAGIC:
        if raw.startswith(magic):
            return media
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


# -- geppetto -> canonical ----------------------------------------------------------------


@dataclass
class _Out:
    """State of one geppetto -> canonical conversion."""

    ids: IdSource
    session_id: str
    losses: list[Loss] = field(default_factory=list)
    calls: dict[str, str] = field(default_factory=dict)  # geppetto call id -> tu id
    messages: list[dict[str, Any]] = field(default_factory=list)
    carry: list[Any] = field(default_factory=list)  # raw blocks waiting for a message

    def loss(self, pointer: str, message: str, rule: RuleInfo = R.LOSSY) -> None:
        self.losses.append(Loss(pointer, message, rule))

    def emit(
        self, role: str, content: list[dict[str, Any]], meta: dict[str, Any], raw: dict[str, Any], kept: Any = None
    ) -> None:
        if self.carry:
            raw["before"] = self.carry
            self.carry = []
        raw = {"v": RAW_VERSION, **raw}
        meta = {**meta, "provider_raw": {**(meta.get("provider_raw") or {}), RAW: raw}}
        mid, created = self.ids.keep(kept) or self.ids.message()
        self.messages.append(
            {"id": mid, "session_id": self.session_id, "role": role, "content": content,
             "metadata": meta, "created_at": created, "schema_version": 1}
        )  # fmt: skip


def _residue(block: dict[str, Any], kind: str, drop: Iterable[str], flags: dict[str, Any], n: int) -> dict[str, Any]:
    """The block minus what its canonical content carries (see module docstring)."""
    r = {k: v for k, v in block.items() if k != "payload"}
    if r.get("kind") == kind:
        del r["kind"]
    if "payload" in block:
        p = block["payload"]
        r["payload"] = {k: v for k, v in p.items() if k not in set(drop)} if isinstance(p, dict) else p
    return {"block": r, "x": {"kind": kind, "n": n, **flags}}


def _image_to_canonical(img: Any, ptr: str, out: _Out) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """(canonical image block or None, residue) for one geppetto image map."""
    if not isinstance(img, dict):
        out.loss(ptr, "image entry is not a mapping; dropped")
        return None, {"image": img, "x": {"dropped": True}}
    media = img.get("media_type") if isinstance(img.get("media_type"), str) else None
    field_name = (
        "url" if isinstance(img.get("url"), str) else "content" if isinstance(img.get("content"), str) else None
    )
    if field_name is None:
        what = "a provider file_id" if "file_id" in img else "no url or content"
        out.loss(ptr, f"image has {what}; canonical images need bytes or a URL; dropped")
        return None, {"image": img, "x": {"dropped": True}}
    value: str = img[field_name]
    marker: dict[str, Any] = {"from": field_name}
    m = _DATA_URL.match(value)
    if isinstance(value, Binary):
        kind, data = "base64", str(value)
        marker["binary"] = True
    elif m is not None:
        kind, data = "base64", value[m.end() :]
        marker["prefix"] = value[: m.end()]
        media = media or (m.group(1).lower() or None)
    elif field_name == "url":
        kind, data = "url", value
        media = media or MIMES.guess_type(urlsplit(value).path)[0]
    else:
        kind, data = "base64", value
    if not data.strip():
        out.loss(f"{ptr}/{field_name}", "image has an empty url or content; dropped")
        return None, {"image": img, "x": {"dropped": True}}
    if kind == "url" and not url_ok(data):  # canonical §4.2 holds URLs only (TS120)
        out.loss(f"{ptr}/{field_name}", "image url is not an absolute URL; dropped")
        return None, {"image": img, "x": {"dropped": True}}
    if kind == "base64":
        compact = "".join(data.split())
        raw = _strict_b64(compact)
        if raw is None:
            out.loss(f"{ptr}/{field_name}", "image data is not valid base64; dropped")
            return None, {"image": img, "x": {"dropped": True}}
        media = media or _sniff(raw)
        if compact != data:
            marker["orig"] = value
        data = compact
    if media is None or not _IMAGE_MEDIA.match(media.lower()):
        out.loss(ptr, f"image media type {media!r} is not a known image/* type; dropped")
        return None, {"image": img, "x": {"dropped": True}}
    if "media_type" not in img:
        marker["media"] = media.lower()
    residue = {"image": {k: v for k, v in img.items() if k != field_name}, "x": marker}
    block = {"type": "image", "source": {"kind": kind, "data": data}, "media_type": media.lower()}
    return block, residue


def _content_of(block: dict[str, Any], kind: str, ptr: str, out: _Out) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Canonical content blocks for one geppetto block, and the block's residue."""
    p = block.get("payload")
    p = p if isinstance(p, dict) else {}
    pp = f"{ptr}/payload"
    meta = block.get("metadata") if isinstance(block.get("metadata"), dict) else None
    if kind in ("system", "llm_text"):
        return [_text(p["text"])], _residue(block, kind, ["text"], {}, 1)
    if kind == "user":
        content = [_text(p["text"])]
        flags: dict[str, Any] = {}
        residue = _residue(block, kind, ["text"], flags, 1)
        images = p.get("images")
        if isinstance(images, list):
            kept = []
            for j, img in enumerate(images):
                blk, rest = _image_to_canonical(img, f"{pp}/images/{j}", out)
                if blk is not None:
                    content.append(blk)
                kept.append(rest)
            residue["block"]["payload"]["images"] = kept
            residue["x"]["n"] = len(content)
        return content, residue
    if kind == "reasoning":
        flags = {}
        drop = []
        if isinstance(p.get("text"), str):
            text = p["text"]
            drop.append("text")
            if p.get("summary"):
                out.loss(
                    f"{pp}/summary",
                    "reasoning summary has no canonical field next to the visible text; kept only in provider_raw",
                )
        else:
            parts = [
                e["text"] for e in p.get("summary") or [] if isinstance(e, dict) and isinstance(e.get("text"), str)
            ]
            text = "\n\n".join(parts)
            flags["text"] = "summary" if parts else "absent"
        thinking: dict[str, Any] = {"type": "thinking", "text": text}
        if meta is not None and isinstance(meta.get(SIGNATURE_KEY), str):
            thinking["signature"] = meta[SIGNATURE_KEY]
            flags["sig"] = SIGNATURE_KEY
        if p.get("encrypted_content"):
            out.loss(
                f"{pp}/encrypted_content",
                "reasoning encrypted_content (opaque provider state) has no canonical field; kept only in provider_raw",
            )
        residue = _residue(block, kind, drop, flags, 1)
        if "sig" in flags:
            rb = residue["block"]
            rb["metadata"] = {k: v for k, v in rb["metadata"].items() if k != SIGNATURE_KEY}
        return [thinking], residue
    if kind == "tool_call":
        call_id = p.get("id")
        # a call id that is already a canonical tool id (it came from canonical) is kept
        tid = (
            call_id
            if isinstance(call_id, str) and is_tool_id(call_id) and call_id not in out.calls.values()
            else out.ids.tool()
        )
        out.calls[p["id"]] = tid
        args = p.get("args")
        inp = _object_from(args)
        drop = ["name"]
        flags = {}
        if isinstance(args, dict):
            drop.append("args")
        elif "args" not in p:
            flags["args"] = "absent"
        elif inp is None and args is not None:
            out.loss(
                f"{pp}/args",
                f"tool args {short(args)} is not a JSON object; canonical input is {{}} "
                "(original kept in provider_raw)",
            )
        return [{"type": "tool_use", "id": tid, "name": p["name"], "input": inp or {}}], _residue(
            block, kind, drop, flags, 1
        )
    if kind == "tool_use":
        tid = out.calls[p["id"]]
        texts: list[str] = []
        drop = []
        flags = {}
        result = p.get("result", _ABSENT)
        if isinstance(result, str):
            texts.append(result)
            drop.append("result")
            flags["result"] = "text"
        elif result is _ABSENT:
            flags["result"] = "absent"
        elif result is not None:
            texts.append(_dumps(result))
            drop.append("result")
            flags["result"] = "json"
        error = p.get("error")
        if isinstance(error, str) and error:
            texts.append(error)
            drop.append("error")
            flags["error"] = True
        tr: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": tid,
            "content": [_text(t) for t in texts],
        }
        if flags.get("error"):
            tr["is_error"] = True
        return [tr], _residue(block, kind, drop, flags, 1)
    raise AssertionError(kind)  # pragma: no cover - `other` never reaches here


_ABSENT: Any = object()


def _provider(raw: Any) -> str | None:
    if not isinstance(raw, str) or not raw.strip():
        return None
    p = _MODEL_CHARS.sub("-", raw.strip().lower()).lstrip("_.-")
    return p or None


def _decimal(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        d = Decimal(repr(value))
    except InvalidOperation:
        return None
    return f"{d:f}" if d >= 0 else None


def _assistant_meta(result: Any, stored: Any, first_ptr: str, out: _Out) -> dict[str, Any]:
    """Canonical metadata of an assistant message from its inference_result (§4.3, §5.3)."""
    if isinstance(stored, dict):
        return {k: v for k, v in stored.items() if k != "parent_tool_use_id"}
    ir = result if isinstance(result, dict) else {}
    synth: list[str] = []
    provider = _provider(ir.get("provider"))
    if provider is None:
        provider = "unknown"
        synth.append("provider 'unknown'")
    model = ir.get("model") if isinstance(ir.get("model"), str) and ir["model"].strip() else None
    if model is None:
        model_id = f"{provider}:unknown"
        synth.append(f"model {model_id!r}")
    else:
        model_id = model if model.startswith(provider + ":") else f"{provider}:{model}"
        clean = re.sub(r"\s", "_", model_id)
        if clean != model_id:
            out.loss(first_ptr, f"model {model!r} contains whitespace; canonical model id is {clean!r}")
            model_id = clean
    usage_in: dict[str, Any] = ir["usage"] if isinstance(ir.get("usage"), dict) else {}
    missing = [n for n in ("input_tokens", "output_tokens") if n not in usage_in]
    if missing:
        synth.append(" and ".join(missing) + " 0")
    usage: dict[str, Any] = {n: usage_in.get(n, 0) for n in ("input_tokens", "output_tokens")}
    cached = usage_in.get("cache_read_input_tokens") or usage_in.get("cached_tokens")
    if cached:
        usage["cached_input_tokens"] = cached
    if usage_in.get("cache_creation_input_tokens"):
        usage["cache_creation_input_tokens"] = usage_in["cache_creation_input_tokens"]
    cost = _decimal(ir.get("cost"))
    if cost is None:
        cost = "0"
        synth.append("cost_usd '0'")
    usage["cost_usd"] = cost
    usage["pricing_version"] = SYNTH_PRICING
    synth.append(f"pricing_version {SYNTH_PRICING!r}")
    latency = ir.get("duration_ms")
    if type(latency) is not int:
        latency = 0
        synth.append("latency_ms 0")
    usage["latency_ms"] = latency
    synth.append("routing mode 'default'")
    meta: dict[str, Any] = {
        "model": model_id,
        "provider": provider,
        "routing": {
            "mode": "default",
            "chosen_model": model_id,
            "reason": "imported from a geppetto turn (no routing decision recorded)",
        },
        "usage": usage,
    }
    status = _STATUS.get(str(ir.get("finish_class")))
    if status is not None:
        meta["status"] = status
    if ir.get("finish_class") == "max_tokens" or ir.get("truncated") is True:
        why = "finish_class 'max_tokens'" if ir.get("finish_class") == "max_tokens" else "truncated: true"
        out.loss(
            first_ptr,
            f"the output was cut off ({why}); canonical v1 has no status for that (complete, partial, "
            "cancelled, error), so status is complete and the inference result is kept only in provider_raw",
        )
    out.loss(
        first_ptr,
        "canonical requires what geppetto does not record; wrote " + ", ".join(synth),
        R.SYNTHESIZED,
    )
    return meta


# payload keys whose content canonical carries, or that _content_of reports itself
_MAPPED_PAYLOAD = {
    "system": frozenset({"text"}),
    "llm_text": frozenset({"text"}),
    "user": frozenset({"text", "images"}),
    "reasoning": frozenset({"text", "summary", "encrypted_content"}),
    "tool_call": frozenset({"id", "name", "args"}),
    "tool_use": frozenset({"id", "result", "error"}),
}
# a Block's fields (seed 004 "Type Definitions"); `id` and `role` are replaced by the message's
_BLOCK_FIELDS = frozenset({"id", "kind", "role", "payload", "metadata"})
# block metadata keys mapped to canonical fields, or written by turnspec itself
_MAPPED_META = frozenset({RESULT_KEY, SIGNATURE_KEY, CANONICAL_KEY, IDS_KEY})
# inference_result fields canonical metadata carries (§4.3, §5.3); `truncated` and a
# cut-off finish class are reported by _assistant_meta
_MAPPED_RESULT = frozenset({"provider", "model", "usage", "cost", "duration_ms", "finish_class", "truncated"})


def _report_kept(block: dict[str, Any], kind: str, ptr: str, out: _Out, in_group: bool) -> None:
    """Report each field of `block` that canonical has no field for and that only
    provider_raw keeps: payload keys, then block metadata keys (sorted, so the report
    is deterministic). The inference_result of a group is reported by _report_result."""
    for key in sorted(k for k in block if k not in _BLOCK_FIELDS):
        out.loss(
            f"{ptr}/{escape(key)}",
            f"block field {key!r} (geppetto's serde ignores it, GE010) has no canonical field; kept only in provider_raw",
        )
    p = block.get("payload")
    if isinstance(p, dict):
        for key in sorted(k for k in p if k not in _MAPPED_PAYLOAD[kind]):
            out.loss(
                f"{ptr}/payload/{escape(key)}",
                f"{kind} payload {key!r} has no canonical field; kept only in provider_raw",
            )
    meta = block.get("metadata")
    if isinstance(meta, dict):
        skip = _MAPPED_META if in_group else _MAPPED_META - {RESULT_KEY}
        for key in sorted(k for k in meta if k not in skip):
            out.loss(
                f"{ptr}/metadata/{escape(key)}",
                f"{kind} block metadata {key!r} has no canonical field; kept only in provider_raw",
            )


def _report_result(result: Any, pointer: str, out: _Out) -> None:
    """One line for the fields of an inference_result canonical has no field for."""
    if not isinstance(result, dict):
        return
    extra = [k for k in result if k not in _MAPPED_RESULT]  # usage is closed (GE020)
    if not extra:
        return
    shown = [f"{k} {short(result[k], 30)}" if k == "stop_reason" else k for k in sorted(extra)]
    out.loss(
        pointer,
        f"inference_result {', '.join(shown)} {'has' if len(extra) == 1 else 'have'} no canonical field; "
        "kept only in provider_raw",
    )


def _kept_ids(block: dict[str, Any]) -> Any:
    meta = block.get("metadata")
    return meta.get(IDS_KEY) if isinstance(meta, dict) else None


def _stored(block: dict[str, Any]) -> Any:
    meta = block.get("metadata")
    return meta.get(CANONICAL_KEY) if isinstance(meta, dict) else None


def turn_to_messages(turn: dict[str, Any], ids: IdSource | None = None) -> tuple[list[dict[str, Any]], list[Loss]]:
    """Canonical messages for a valid geppetto `turn`, and the steps to report."""
    ids = ids or IdSource()
    tmeta: dict[str, Any] = turn["metadata"] if isinstance(turn.get("metadata"), dict) else {}
    sid = tmeta.get(SESSION_KEY)
    out = _Out(ids, sid if isinstance(sid, str) and sid else ids.session())
    turn_raw = {k: v for k, v in turn.items() if k != "blocks"}
    blocks: list[Any] = turn["blocks"]
    assistant_groups = _assistant_groups(blocks)
    last_group = assistant_groups[-1][0] if assistant_groups else -1
    starts = {start: end for start, end in assistant_groups}
    used: list[Any] = []
    generated: dict[int, str] = {}  # index of an assistant message -> pointer of its first block
    i = 0
    while i < len(blocks):
        block = blocks[i]
        ptr = f"/blocks/{i}"
        kind = read_kind(block.get("kind"))
        raw: dict[str, Any] = {} if out.messages else {"turn": turn_raw}
        if kind == "other":
            out.loss(
                ptr,
                f"{block.get('kind')!r} block has no canonical equivalent; kept only in provider_raw",
            )
            out.carry.append(block)
            i += 1
            continue
        if i in starts:
            end = starts[i]
            content: list[dict[str, Any]] = []
            residues = []
            for j in range(i, end):
                kind_j = read_kind(blocks[j].get("kind"))
                c, r = _content_of(blocks[j], kind_j, f"/blocks/{j}", out)
                _report_kept(blocks[j], kind_j, f"/blocks/{j}", out, True)
                content += c
                residues.append(r)
            result = (blocks[i].get("metadata") or {}).get(RESULT_KEY)
            result_ptr = f"{ptr}/metadata/{escape(RESULT_KEY)}"
            if result is None and i == last_group:
                result = tmeta.get(RESULT_KEY)
                result_ptr = f"/metadata/{escape(RESULT_KEY)}"
            used.append(result)
            if not isinstance(_stored(block), dict):
                # a message that came from canonical: its inference_result is turnspec's projection
                _report_result(result, result_ptr, out)
            meta = _assistant_meta(result, _stored(block), ptr, out)
            generated[len(out.messages)] = ptr
            out.emit("assistant", content, meta, {**raw, "blocks": residues}, _kept_ids(blocks[i]))
            i = end
            continue
        content, residue = _content_of(block, kind, ptr, out)
        _report_kept(block, kind, ptr, out, False)
        stored = _stored(block)
        meta = {k: v for k, v in stored.items()} if isinstance(stored, dict) else {}
        role = {"system": "system", "user": "user", "tool_use": "tool"}[kind]
        if kind == "tool_use":
            meta["parent_tool_use_id"] = content[0]["tool_use_id"]
        out.emit(role, content, meta, {**raw, "blocks": [residue]}, _kept_ids(block))
        i += 1
    _resumed_after_interrupt(out, generated)
    for key in sorted(k for k in turn if k not in ("id", "blocks", "metadata", "data", "version")):
        out.loss(
            f"/{escape(key)}",
            f"turn field {key!r} (geppetto's serde ignores it, GE010) has no canonical field; kept only in provider_raw",
        )
    data = turn.get("data")
    config = [f"data.{k}" for k in (data if isinstance(data, dict) else {})]
    config += [f"metadata.{k}" for k in tmeta if k not in (SESSION_KEY, RESULT_KEY)]
    if config:
        # turn-level settings and annotations (tool config, trace ids, ...): canonical
        # messages have no turn record, so like gpt2099's inherited options they are
        # reported once per turn; block-level bookkeeping is not (module docstring)
        out.loss(
            "/data" if config[0].startswith("data.") else "/metadata",
            f"turn {', '.join(sorted(config))} {'has' if len(config) == 1 else 'have'} no canonical field: "
            "kept only in provider_raw, which canonical readers do not read",
        )
    outcome = tmeta.get(RESULT_KEY)
    if isinstance(outcome, dict) and outcome not in used:
        out.loss(
            f"/metadata/{escape(RESULT_KEY)}",
            f"the turn's inference outcome (finish_class {outcome.get('finish_class')!r}) "
            "belongs to no block, and canonical has no turn-level record; "
            "kept only in provider_raw",
        )
    if out.carry or not out.messages:
        if out.messages:
            raw_last = out.messages[-1]["metadata"]["provider_raw"][RAW]
            raw_last["after"] = out.carry
            out.carry = []
        else:
            after, out.carry = out.carry, []
            out.emit("system", [], {}, {"turn": turn_raw, "placeholder": True, "after": after})
    return out.messages, out.losses


def _resumed_after_interrupt(out: _Out, generated: dict[int, str]) -> None:
    """An interrupted inference (status cancelled) that the turn continues after, with more
    model output and no user block between, cannot stay cancelled: streaming §6.3 lets no
    cancelled turn resume (TS209), and geppetto's turn did. Such a message is written
    complete, as `max_tokens` is (canonical v1 has no status for it), and the step is
    reported; its inference_result, finish class included, stays in provider_raw, so the
    way back restores it."""
    msgs = out.messages
    for k, ptr in generated.items():
        meta = msgs[k]["metadata"]
        if meta.get("status") != "cancelled":
            continue
        nxt = next((m["role"] for m in msgs[k + 1 :] if m["role"] in ("user", "assistant")), None)
        if nxt == "assistant":
            del meta["status"]
            out.loss(
                ptr,
                "finish_class 'interrupted', but the turn goes on with more model output and no user block: "
                "canonical lets no cancelled turn resume (streaming §6.3: the next user message starts a fresh "
                "turn), so status is complete and the inference result is kept only in provider_raw",
            )


def _assistant_groups(blocks: list[Any]) -> list[tuple[int, int]]:
    """[start, end) ranges of consecutive generated blocks sharing one inference_result."""
    groups: list[tuple[int, int]] = []
    i = 0
    while i < len(blocks):
        if read_kind(blocks[i].get("kind")) not in ("llm_text", "reasoning", "tool_call"):
            i += 1
            continue
        result = (blocks[i].get("metadata") or {}).get(RESULT_KEY)
        j = i + 1
        while (
            j < len(blocks)
            and read_kind(blocks[j].get("kind")) in ("llm_text", "reasoning", "tool_call")
            and (blocks[j].get("metadata") or {}).get(RESULT_KEY) == result
            and _stored(blocks[j]) is None
        ):
            j += 1
        groups.append((i, j))
        i = j
    return groups


# -- canonical -> geppetto ----------------------------------------------------------------


@dataclass
class _In:
    """State of one canonical -> geppetto conversion."""

    ids: IdSource
    losses: list[Loss] = field(default_factory=list)
    calls: dict[str, str] = field(default_factory=dict)  # tu id -> geppetto call id
    record: int = 0

    def loss(self, pointer: str, message: str, rule: RuleInfo = R.LOSSY) -> None:
        self.losses.append(Loss(pointer, message, rule, self.record))


_EXPECT = {
    "system": ("text",),
    "llm_text": ("text",),
    "reasoning": ("thinking",),
    "tool_call": ("tool_use",),
    "tool_use": ("tool_result",),
}


def _ordered(block: dict[str, Any]) -> dict[str, Any]:
    """Block fields in the order geppetto's serde writes them."""
    order = ("id", "kind", "role", "payload", "metadata")
    out = {k: block[k] for k in order if k in block}
    out.update((k, v) for k, v in block.items() if k not in out)
    return out


def _aligned(residues: Any, content: list[dict[str, Any]]) -> bool:
    if not isinstance(residues, list) or not all(
        isinstance(r, dict) and isinstance(r.get("x"), dict) and isinstance(r.get("block"), dict) for r in residues
    ):
        return False
    i = 0
    for r in residues:
        kind, n = r["x"].get("kind"), r["x"].get("n")
        if not isinstance(n, int) or n < 1 or i + n > len(content):
            return False
        types = [c["type"] for c in content[i : i + n]]
        if kind == "user":
            if types[0] != "text" or any(t != "image" for t in types[1:]):
                return False
        elif kind not in _EXPECT or tuple(types) != _EXPECT[kind]:
            return False
        i += n
    return i == len(content)


def _restore_block(r: dict[str, Any], content: list[dict[str, Any]], st: _In) -> dict[str, Any]:
    """A geppetto block from its residue and its (possibly edited) canonical content."""
    flags = r["x"]
    kind = flags["kind"]
    block = dict(r["block"])
    block.setdefault("kind", kind)
    payload = block.get("payload")
    p: dict[str, Any] = dict(payload) if isinstance(payload, dict) else {}
    c0 = content[0]
    if kind in ("system", "llm_text", "user"):
        p["text"] = c0["text"]
    if kind == "user":
        p["images"] = _restore_images(p.get("images"), content[1:])
        if p["images"] is None:
            del p["images"]
    elif kind == "reasoning":
        mode = flags.get("text")
        derived = "\n\n".join(
            e["text"] for e in p.get("summary") or [] if isinstance(e, dict) and isinstance(e.get("text"), str)
        )
        if mode is None or c0["text"] != (derived if mode == "summary" else ""):
            p["text"] = c0["text"]
        sig = c0.get("signature")
        if sig is not None and flags.get("sig"):
            block["metadata"] = {**(block.get("metadata") or {}), flags["sig"]: sig}
    elif kind == "tool_call":
        st.calls[c0["id"]] = p.get("id", c0["id"])
        p["name"] = c0["name"]
        inp = c0["input"]
        kept = (flags.get("args") == "absent" and inp == {}) or ("args" in p and (_object_from(p["args"]) or {}) == inp)
        if not kept:
            p["args"] = inp
    elif kind == "tool_use":
        p["id"] = st.calls.get(c0["tool_use_id"], p.get("id", c0["tool_use_id"]))
        texts = [c["text"] for c in c0["content"] if c["type"] == "text"]
        if flags.get("error") and texts:
            p["error"] = texts.pop()
        mode = flags.get("result")
        if mode == "text" and texts:
            p["result"] = texts[0]
        elif mode == "json" and texts:
            try:
                p["result"] = json.loads(texts[0])
            except ValueError:
                p["result"] = texts[0]
        elif texts:
            p["result"] = "\n".join(texts)
    if payload is not None or p:
        block["payload"] = p
    return _ordered(block)


def _restore_images(residues: Any, images: list[dict[str, Any]]) -> list[Any] | None:
    if not isinstance(residues, list):
        return [_image_from_canonical(c) for c in images] or None
    out: list[Any] = []
    queue = list(images)
    for r in residues:
        marker = r.get("x") if isinstance(r, dict) else None
        if not isinstance(marker, dict) or "image" not in r:
            out.append(r)
            continue
        if marker.get("dropped"):
            out.append(r["image"])
            continue
        if not queue or not isinstance(r["image"], dict):
            continue
        c = queue.pop(0)
        img = dict(r["image"])
        data = c["source"]["data"]
        field_name = marker.get("from", "content")
        if marker.get("binary"):
            value: str = Binary(data)
        else:
            value = str(marker.get("prefix", "")) + data
        orig = marker.get("orig")
        if isinstance(orig, str) and "".join(orig[len(marker.get("prefix", "")) :].split()) == data:
            value = orig
        img[field_name] = value
        had = img.get("media_type")
        if isinstance(had, str) and had.lower() == c["media_type"]:
            pass  # keep the original spelling
        elif had is not None or marker.get("media") != c["media_type"]:
            img["media_type"] = c["media_type"]
        out.append(img)
    out += [_image_from_canonical(c) for c in queue]
    return out


def _image_from_canonical(c: dict[str, Any]) -> dict[str, Any]:
    src = c["source"]
    field_name = "url" if src["kind"] == "url" else "content"
    return {"media_type": c["media_type"], field_name: src["data"]}


def _result_from_meta(meta: dict[str, Any], has_tool_use: bool) -> dict[str, Any] | None:
    """geppetto's inference_result projected from canonical message metadata."""
    ir: dict[str, Any] = {}
    provider, model = meta.get("provider"), meta.get("model")
    if isinstance(provider, str):
        ir["provider"] = provider
    if isinstance(model, str):
        ir["model"] = (
            model.split(":", 1)[1] if isinstance(provider, str) and model.startswith(provider + ":") else model
        )
    status = meta.get("status", "complete")
    ir["finish_class"] = _FINISH.get(status, "tool_calls_pending" if has_tool_use else "completed")
    usage = meta.get("usage")
    if isinstance(usage, dict):
        u = {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"]}
        if usage.get("cached_input_tokens"):
            u["cached_tokens"] = usage["cached_input_tokens"]
        if usage.get("cache_creation_input_tokens"):
            u["cache_creation_input_tokens"] = usage["cache_creation_input_tokens"]
        ir["usage"] = u
        ir["duration_ms"] = usage["latency_ms"]
        ir["cost"] = float(Decimal(usage["cost_usd"]))
    return ir if len(ir) > 1 else None


_NATIVE = {
    "system": frozenset({"text"}),
    "user": frozenset({"text", "image"}),
    "assistant": frozenset({"text", "thinking", "tool_use", "redacted_thinking"}),
    "tool": frozenset({"tool_result"}),
}


def _native_blocks(msg: dict[str, Any], ptr: str, st: _In) -> list[dict[str, Any]]:
    """geppetto blocks for a canonical message that did not come from geppetto."""
    role: str = msg["role"]
    meta: dict[str, Any] = msg["metadata"]
    content: list[dict[str, Any]] = []
    where: list[int] = []  # index of each kept block in the message
    for j, c in enumerate(msg["content"]):
        if c["type"] in _NATIVE[role]:
            content.append(c)
            where.append(j)
        else:  # unknown block types are tolerated by canonical readers (§10.3)
            st.loss(f"{ptr}/content/{j}", f"{c['type']} block has no geppetto equivalent; dropped")
    if not content:
        what = "an empty system message (a placeholder)" if role == "system" else f"{role} message"
        st.loss(ptr, f"{what} without content has no geppetto block; dropped")
        return []
    out: list[dict[str, Any]] = []
    if role == "system":
        out = [
            {
                "id": st.ids.uuid(),
                "kind": "system",
                "role": "system",
                "payload": {"text": c["text"]},
            }
            for c in content
        ]
    elif role == "user":
        out = _user_blocks(content, where, ptr, st)
    elif role == "tool":
        for j, c in enumerate(content):
            texts = []
            for k, inner in enumerate(c["content"]):
                if inner["type"] == "text":
                    texts.append(inner["text"])
                else:
                    st.loss(
                        f"{ptr}/content/{where[j]}/content/{k}",
                        f"{inner['type']} block in a tool result has no geppetto field; dropped",
                    )
            joined = "\n".join(texts)
            payload: dict[str, Any] = {"id": st.calls.get(c["tool_use_id"], c["tool_use_id"])}
            if c.get("is_error"):
                payload["error"] = joined
            else:
                payload["result"] = joined
                payload["error"] = ""
            out.append({"id": st.ids.uuid(), "kind": "tool_use", "payload": payload})
    else:
        has_tool = any(c["type"] == "tool_use" for c in content)
        result = _result_from_meta(meta, has_tool)
        for j, c in enumerate(content):
            t = c["type"]
            if t == "text":
                b: dict[str, Any] = {
                    "id": st.ids.uuid(),
                    "kind": "llm_text",
                    "role": "assistant",
                    "payload": {"text": c["text"]},
                }
            elif t == "thinking":
                b = {
                    "id": st.ids.uuid(),
                    "kind": "reasoning",
                    "role": "assistant",
                    "payload": {"text": c["text"]},
                }
                sig = c.get("signature")
                if sig is not None:
                    if meta.get("provider") == "gemini":
                        b["metadata"] = {SIGNATURE_KEY: sig}
                    else:
                        st.loss(
                            f"{ptr}/content/{where[j]}/signature",
                            f"thinking signature of provider {meta.get('provider')!r} has no "
                            "geppetto field (only Gemini's has one); dropped",
                        )
            elif t == "tool_use":
                st.calls[c["id"]] = c["id"]
                b = {
                    "id": c["id"],
                    "kind": "tool_call",
                    "payload": {"id": c["id"], "name": c["name"], "args": c["input"]},
                }
            else:  # redacted_thinking
                st.loss(
                    f"{ptr}/content/{where[j]}",
                    "redacted_thinking (opaque provider data) has no geppetto block; dropped",
                )
                continue
            if result is not None:
                b["metadata"] = {**(b.get("metadata") or {}), RESULT_KEY: result}
            out.append(b)
    if out:
        stored = {k: v for k, v in meta.items() if k != "provider_raw"}
        other_raw = {k: v for k, v in (meta.get("provider_raw") or {}).items() if k != RAW}
        if other_raw:
            stored["provider_raw"] = other_raw
        ids = {"id": msg["id"], "created_at": msg["created_at"]}
        out[0]["metadata"] = {**(out[0].get("metadata") or {}), CANONICAL_KEY: stored, IDS_KEY: ids}
    return [_ordered(b) for b in out]


def _user_blocks(content: list[dict[str, Any]], where: list[int], ptr: str, st: _In) -> list[dict[str, Any]]:
    """One user block per text block, each with the images that follow it."""
    blocks: list[dict[str, Any]] = []
    leading: list[dict[str, Any]] = []
    for j, c in enumerate(content):
        if c["type"] == "text":
            blocks.append(
                {
                    "id": st.ids.uuid(),
                    "kind": "user",
                    "role": "user",
                    "payload": {"text": c["text"]},
                }
            )
            continue
        src = c["source"]
        if src["kind"] == "file_ref":
            st.loss(
                f"{ptr}/content/{where[j]}",
                "file_ref image (a workspace path) has no geppetto form; dropped",
            )
            continue
        img = _image_from_canonical(c)
        if not blocks:
            leading.append(img)
            continue
        blocks[-1]["payload"].setdefault("images", []).append(img)
    if leading:
        if blocks:
            st.loss(
                f"{ptr}/content/{where[0]}",
                "images before the first text block move after it (a geppetto user block holds text, then images)",
            )
            blocks[0]["payload"]["images"] = leading + blocks[0]["payload"].get("images", [])
        else:
            st.loss(
                ptr,
                "user message has images but no text; geppetto user blocks need text: wrote text ''",
                R.SYNTHESIZED,
            )
            blocks.append(
                {
                    "id": st.ids.uuid(),
                    "kind": "user",
                    "role": "user",
                    "payload": {"text": "", "images": leading},
                }
            )
    return blocks


def messages_to_turn(messages: list[dict[str, Any]], ids: IdSource | None = None) -> tuple[dict[str, Any], list[Loss]]:
    """A geppetto turn for valid canonical messages of one session, and the steps to report.

    Loss pointers are relative to the message; `Loss.record` is the message's index.
    """
    st = _In(ids or IdSource())
    turn: dict[str, Any] | None = None
    blocks: list[Any] = []
    ptr = ""
    for n, msg in enumerate(messages):
        st.record = n
        raw_all = msg["metadata"].get("provider_raw")
        raw = raw_all.get(RAW) if isinstance(raw_all, dict) else None
        if not isinstance(raw, dict) or raw.get("v") != RAW_VERSION:
            raw = None
        if n == 0:
            if raw is not None and isinstance(raw.get("turn"), dict):
                turn = dict(raw["turn"])
            else:
                turn = {"metadata": {SESSION_KEY: msg["session_id"]}}
        if raw is not None:
            blocks += raw.get("before") or []
        if raw is not None and raw.get("placeholder"):
            pass
        elif raw is not None and _aligned(raw.get("blocks"), msg["content"]):
            i = 0
            for r in raw["blocks"]:
                k = r["x"]["n"]
                blocks.append(_restore_block(r, msg["content"][i : i + k], st))
                i += k
        else:
            blocks += _native_blocks(msg, ptr, st)
        if raw is not None:
            blocks += raw.get("after") or []
    turn = turn if turn is not None else {}
    out: dict[str, Any] = {k: turn[k] for k in ("version", "id") if k in turn}
    out["blocks"] = blocks
    out.update((k, v) for k, v in turn.items() if k not in out)
    return out, st.losses


__all__ = ["CANONICAL_KEY", "IdSource", "Loss", "escape", "messages_to_turn", "turn_to_messages"]
