"""Converting gpt2099 files to canonical messages and back.

gpt2099 -> canonical
    Every turn becomes one canonical message, or several when it holds tool results:
    canonical keeps each tool_result alone in a `tool` message (§3.2, §5.1.3), so a turn
    `[text, tool_result, tool_result]` becomes a user message and two tool messages, in
    block order. Sessions are the connected parts of the `continues` graph (a thread and
    its branches); a context window or a response is one session. Messages get fresh
    ULIDs stamped with the turn's SCRU128 time, tool calls fresh `tu_` ids (§6.1, §6.2).

    Mapped blocks: text -> text; a base64 image document in a user turn -> image; tool_use
    (assistant turns) -> tool_use; tool_result -> tool_result in a tool message (its MCP
    items: text -> text, base64 image -> image). Everything else stays in the message as a
    block canonical readers skip (§10.3): blocks of other types verbatim (documents that are
    not images, provider blocks), and blocks whose type canonical knows but cannot hold
    there (a tool_use in a user turn, a provider `thinking` block) wrapped as
    `{"type": "gpt2099_block", "block": ...}`. Each such step is reported (TS900).

    Fields only provider_raw keeps are reported once per turn, by name (a frame's `topic`
    and `hash`, `head`, the document fields, a response's `role`/`mime_type` beside its
    message, ...), and each `continues` that named a bookmark rather than a turn id.

    gpt2099 records no routing, cost or latency, and no provider beside the model name, so a
    complete assistant message gets `provider: "gpt2099"`, `model: "gpt2099:<model>"`, a
    routing record and zero-cost usage that say so; each is reported.

Round trips: `metadata.provider_raw.gpt2099`
    Whatever canonical cannot hold is kept in `metadata.provider_raw` under the key
    `gpt2099`. provider_raw is the spec's round-trip aid (canonical §6.5): opaque to core
    code, read only by the adapter that wrote it, excluded from equality, and valid in the
    schema, so it costs no TS010 warning on every message (an unknown metadata key would).
    The `gpt2099` namespace leaves room for other adapters' data. It holds:

    - `shape`, `unit`, `turn`: the source shape, which document of the file, which turn;
      the messages split from one turn share `unit` and `turn` and are joined back;
    - `envelope` (first message of a turn): the turn without its content: frame `id`,
      `topic`, `hash` and the whole `meta` (role, options, continues, head, cache, the
      response summary); a record's `id`, `role`, `options`; a window message's `role`,
      `cache`; a response's fields beside its content. Original turn ids come back from here;
    - `options` (first message of a context window): the window's options;
    - `blocks`: per canonical block (`"2"`, or `"0/1"` inside a tool_result), the fields to
      `set` and `unset` to restore the gpt2099 block: original tool ids, tool_result names,
      text `citations`, MCP `mimeType`...;
    - `empty`: the turn had no content (canonical needs a block; an empty text stands in).

canonical -> gpt2099
    Messages carrying `provider_raw.gpt2099` are rebuilt from it (content from the
    canonical blocks, so edits to the text survive); the file gets the shape it came from.
    Other messages become turn frames: `id` a fresh SCRU128 at `created_at`, `continues`
    the previous turn of the same session, consecutive tool messages joined into one user
    turn, assistant model and token counts kept in `meta.message`. Dropped and reported:
    thinking and redacted_thinking blocks (text and signature), images by URL or file_ref,
    routing, cost, latency, status, user/team ids, other adapters' provider_raw.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core import ids
from ...core.convertkit import ConvertContext, IdMint, created_at_micros, rfc3339, short, validated
from ...core.errors import InputError
from ...core.findings import Finding, Severity
from ...core.jsonio import Record, dumps, read_json, read_jsonl
from ...core.schema_validation import SchemaValidator
from ...core.schemas import schema_set
from ..base import FileStats, Options
from ..canonical import rules as CR
from ..canonical.checker import CanonicalRun
from .checker import Gpt2099Run
from .reader import (
    TurnItem,
    artefact_of_file,
    build_thread,
    classify,
    read_items,
    response_thread,
    turn_kind,
    window_thread,
)
from .thread import Shape, Thread, Turn, is_scru128, pair_tool_results, scru128_millis

RAW = "gpt2099"
_NO_COUNTERPART = "have no canonical counterpart; kept in provider_raw only"
WRAP = "gpt2099_block"
PROVIDER = "gpt2099"
CANONICAL_KNOWN = frozenset({"text", "tool_use", "tool_result", "image", "thinking", "redacted_thinking"})
_MEDIA = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*\Z")
_SPACE = re.compile(r"\s+")


# -- ids and time ---------------------------------------------------------------------


class Clock:
    """Monotonic ids derived from the input: ULIDs (canonical) and SCRU128s (gpt2099), and
    timestamps. Same input, same output (`convertkit.IdMint`, `conformance.core.ids.derived`).

    Time comes from the source when it has one (a SCRU128's milliseconds, a canonical
    `created_at`) and never goes backwards, so ids increase in output order (§6.1). Where
    the source has none, time counts up from the Unix epoch and the caller reports it.
    """

    def __init__(self, *salt: str | int) -> None:
        self.salt = salt
        self.last_us = 0
        self.mint = IdMint(*salt)
        self.last_scru = 0

    def micros(self, ms: int | None) -> int:
        us = ms * 1000 if ms is not None else self.last_us + 1
        self.last_us = max(us, self.last_us + 1)
        return self.last_us

    def ulid(self, us: int, *parts: str | int) -> str:
        return self.mint.ulid(us // 1000, *parts)

    def scru128(self, ms: int, *parts: str | int) -> str:
        # SCRU128 = 48-bit ms timestamp, 24+24-bit counters, 32-bit entropy, as 25 base-36
        # digits: counters and entropy derived from the message, at its own time (the
        # scru128 package's generator stamps the current time, which would lose the timeline).
        h = hashlib.blake2b(repr((self.salt, parts)).encode(), digest_size=10).digest()
        v = (ms << 80) | int.from_bytes(h, "big")
        self.last_scru = v = max(v, self.last_scru + 1)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"
        out = []
        for _ in range(25):
            v, r = divmod(v, 36)
            out.append(digits[r])
        return "".join(reversed(out))


def _timestamp(us: int) -> str:
    return rfc3339(us)


def _micros_of(created_at: str) -> int | None:
    try:
        return created_at_micros(created_at)
    except ValueError:
        return None


# -- gpt2099 -> canonical ----------------------------------------------------------------


@dataclass
class _Unit:
    """One source document: a thread (all turns of the file), a context window, a response."""

    shape: Shape
    thread: Thread
    doc: Any = None


@dataclass
class _ToCanonical:
    path: str
    ctx: ConvertContext
    digest: str = ""
    clock: Clock = field(default_factory=Clock)
    out: list[dict[str, Any]] = field(default_factory=list)
    canon_uses: set[tuple[int, int]] = field(default_factory=set)

    def lossy(self, t: Turn, ptr: str, message: str) -> None:
        self.ctx.lossy(t.path, t.line, t.pointer + ptr, message)

    def unit(self, n: int, u: _Unit) -> None:
        thread = u.thread
        thread.link()
        pairs = {p.result: p.use for p in pair_tool_results(thread)}
        # A tool_use lives in canonical only inside an assistant message; its results
        # become tool messages only if it does. Ids are minted when the tool_use is written,
        # which is always before its results (they pair with earlier blocks only).
        self.canon_uses = {
            (t.index, b)
            for t in thread.turns
            if t.role == "assistant"
            for b, blk in enumerate(t.content)
            if isinstance(blk, dict) and blk.get("type") == "tool_use"
        }
        tool_ids: dict[tuple[int, int], str] = {}
        sessions = _sessions(thread, self.digest, n)
        children: dict[int, list[int]] = {}
        for t in thread.turns:
            for p in t.parents:
                children.setdefault(p, []).append(t.index)
        for p, kids in sorted(children.items()):
            if len(kids) > 1:
                self.lossy(
                    thread.turns[p],
                    "",
                    f"the thread branches here ({len(kids)} turns continue this one): a canonical session is "
                    "one line, so the branches share one session in time order; each turn's `continues` is "
                    "kept only in provider_raw",
                )
        timeless = next((t for t in thread.turns if _ms(t) is None), None)
        if timeless is not None:
            self.lossy(
                timeless,
                "",
                "turns without a SCRU128 id carry no time: created_at counts up from the previous "
                "message's (from the Unix epoch when none has one), and ids carry that time",
            )
        for t in thread.turns:
            self.turn(n, u, t, sessions[t.index], pairs, tool_ids)

    def turn(
        self,
        n: int,
        u: _Unit,
        t: Turn,
        session: str,
        pairs: dict[tuple[int, int], tuple[int, int] | None],
        tool_ids: dict[tuple[int, int], str],
    ) -> None:
        parts: list[tuple[str, list[tuple[int, dict[str, Any]]]]] = []
        run: list[tuple[int, dict[str, Any]]] = []
        for i, blk in enumerate(t.content):
            use = pairs.get((t.index, i)) if blk.get("type") == "tool_result" else None
            if use is not None and use in self.canon_uses:
                if run:
                    parts.append((t.role, run))
                    run = []
                parts.append(("tool", [(i, blk)]))
            else:
                run.append((i, blk))
        if run or not parts:
            parts.append((t.role, run))
        us = self.clock.micros(_ms(t))
        where = "/meta" if u.shape is Shape.FRAMES else ""
        if t.delta:
            self.lossy(
                t,
                where,
                f"inherited options ({', '.join(sorted(t.delta))}) have no canonical field: kept only in "
                "provider_raw, which canonical readers do not read",
            )
        if t.cache:
            self.lossy(t, where + "/cache", "the cache flag has no canonical field: kept only in provider_raw")
        if u.shape is Shape.FRAMES:
            self.bookmarks(u.thread, t)
        kept = _raw_only_fields(u, t)
        # a response's own fields (`role`, `mime_type`) sit beside its `message`, the turn
        outer = [k for k in kept if "." not in k] if u.shape is Shape.RESPONSE else []
        for names, ptr in ((outer, t.pointer.removesuffix("/message")), ([k for k in kept if k not in outer], None)):
            if not names:
                continue
            message = (
                f"{', '.join(names)} {'has' if len(names) == 1 else 'have'} no canonical field: kept only in "
                "provider_raw, which canonical readers do not read"
            )
            if ptr is None:
                self.lossy(t, "", message)
            else:
                self.ctx.lossy(t.path, t.line, ptr, message)
        for k, (role, blocks) in enumerate(parts):
            raw: dict[str, Any] = {"shape": str(u.shape), "unit": n, "turn": t.index}
            if k == 0:
                raw["envelope"] = _envelope(u, t)
                if u.shape is Shape.WINDOW and t.index == 0:
                    raw["options"] = u.thread.options
            content: list[dict[str, Any]] = []
            overrides: dict[str, Any] = {}
            meta: dict[str, Any] = {}
            for i, blk in blocks:
                key = str(len(content))
                cblk, ov = self.block(t, i, blk, role, pairs, tool_ids, key, overrides)
                content.append(cblk)
                if ov:
                    overrides[key] = ov
                if role == "tool":
                    meta["parent_tool_use_id"] = cblk["tool_use_id"]
            if not content and role in ("user", "assistant"):
                content = [{"type": "text", "text": ""}]
                raw["empty"] = True
                self.lossy(
                    t,
                    "/content",
                    "turn has no content; canonical needs a block, an empty text stands in",
                )
            if overrides:
                raw["blocks"] = overrides
            if role == "assistant":
                meta.update(self.assistant_meta(t, u))
            meta["provider_raw"] = {RAW: raw}
            self.out.append(
                {
                    "id": self.clock.ulid(us, n, t.index, k),
                    "session_id": session,
                    "role": role,
                    "content": content,
                    "metadata": meta,
                    "created_at": _timestamp(us),
                    "schema_version": 1,
                }
            )
            us = self.clock.micros(us // 1000)

    def bookmarks(self, thread: Thread, t: Turn) -> None:
        """A `continues` that names a bookmark: the session and its order keep the link, but
        not that it named a bookmark (and which), so each is reported where it is."""
        meta = t.source.get("meta") if isinstance(t.source, dict) else None
        listed = isinstance(meta, dict) and isinstance(meta.get("continues"), list)
        for pos, target in enumerate(t.continues):
            if is_scru128(target):
                continue
            # resolved as Thread.link does: the last earlier turn carrying it as head
            earlier = [j for j in thread.heads.get(target, []) if j < t.index]
            to = f" (turn {thread.turns[earlier[-1]].id})" if earlier else ""
            self.lossy(
                t,
                "/meta/continues" + (f"/{pos}" if listed else ""),
                f"continues names the bookmark {target!r}{to}, not a turn id; canonical keeps the link as "
                "the session's order, the bookmark name only in provider_raw",
            )

    def block(
        self,
        t: Turn,
        i: int,
        blk: dict[str, Any],
        role: str,
        pairs: dict[tuple[int, int], tuple[int, int] | None],
        tool_ids: dict[tuple[int, int], str],
        key: str,
        overrides: dict[str, Any],
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        kind = blk.get("type")
        ptr = f"/content/{i}"
        allowed = CR.ALLOWED_BLOCKS[role]
        if kind == "text":
            extra = {k: v for k, v in blk.items() if k not in ("type", "text")}
            if extra:
                self.lossy(
                    t,
                    ptr,
                    f"text block field(s) {', '.join(sorted(extra))} {_NO_COUNTERPART}",
                )
            return {"type": "text", "text": blk["text"]}, ({"set": extra} if extra else None)
        if kind == "document":
            src = blk["source"]
            media = src["media_type"]
            if "image" in allowed and media.startswith("image/") and _MEDIA.match(media) and src["data"]:
                return {
                    "type": "image",
                    "source": {"kind": "base64", "data": src["data"]},
                    "media_type": media,
                }, None
            where = "a canonical image only in a user message" if media.startswith("image/") else "no canonical block"
            self.lossy(
                t,
                ptr,
                f"document ({media}) has {where}; kept as an unknown block canonical readers skip",
            )
            return copy.deepcopy(blk), None
        if kind == "tool_use" and (t.index, i) in self.canon_uses:
            tid = tool_ids[(t.index, i)] = "tu_" + self.clock.ulid(self.clock.last_us, "tool", t.index, i)
            restore = {"set": {"id": blk["id"]}} if "id" in blk else {"unset": ["id"]}
            return {
                "type": "tool_use",
                "id": tid,
                "name": blk["name"],
                "input": blk["input"],
            }, restore
        if kind == "tool_result" and role == "tool":
            use = pairs[(t.index, i)]
            assert use is not None
            names: dict[str, Any] = {"name": blk["name"]}
            ov: dict[str, Any] = {"set": names}
            if "tool_use_id" in blk:
                names["tool_use_id"] = blk["tool_use_id"]
            else:
                ov["unset"] = ["tool_use_id"]
            inner: list[dict[str, Any]] = []
            for j, item in enumerate(blk["content"]):
                c, iov = self.result_item(t, f"{ptr}/content/{j}", item)
                if iov:
                    overrides[f"{key}/{j}"] = iov
                inner.append(c)
            out: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": tool_ids[use],
                "content": inner,
            }
            if "is_error" in blk:
                out["is_error"] = blk["is_error"]
            return out, ov
        if kind in CANONICAL_KNOWN:
            why = {
                "tool_use": f"a tool_use in a {t.role} turn",
                "tool_result": "a tool_result whose tool_use is not in an assistant turn",
            }
            self.lossy(
                t,
                ptr,
                f"{why.get(str(kind), f'a provider {kind!r} block')} has no canonical place; "
                "wrapped as an unknown block",
            )
            return {"type": WRAP, "block": copy.deepcopy(blk)}, None
        self.lossy(
            t,
            ptr,
            f"{kind!r} block has no canonical counterpart; kept as an unknown block canonical readers skip",
        )
        return copy.deepcopy(blk), None

    def result_item(self, t: Turn, ptr: str, item: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        kind = item.get("type")
        if kind == "text" and isinstance(item.get("text"), str):
            extra = {k: v for k, v in item.items() if k not in ("type", "text")}
            if extra:
                self.lossy(
                    t,
                    ptr,
                    f"tool result text field(s) {', '.join(sorted(extra))} {_NO_COUNTERPART}",
                )
            return {"type": "text", "text": item["text"]}, ({"set": extra} if extra else None)
        data, media = item.get("data"), item.get("mimeType")
        if (
            kind == "image"
            and isinstance(data, str)
            and data
            and isinstance(media, str)
            and _MEDIA.match(media)
            and media.startswith("image/")
        ):
            extra = {k: v for k, v in item.items() if k not in ("type", "data", "mimeType")}
            if extra:
                self.lossy(
                    t,
                    ptr,
                    f"tool result image field(s) {', '.join(sorted(extra))} {_NO_COUNTERPART}",
                )
            return {
                "type": "image",
                "source": {"kind": "base64", "data": data},
                "media_type": media,
            }, ({"set": extra} if extra else None)
        if kind in CANONICAL_KNOWN:
            self.lossy(
                t,
                ptr,
                f"tool result item of type {kind!r} does not fit the canonical block; wrapped as an unknown block",
            )
            return {"type": WRAP, "block": copy.deepcopy(item)}, None
        self.lossy(
            t,
            ptr,
            f"tool result item of type {kind!r} has no canonical counterpart; kept as an unknown block",
        )
        return copy.deepcopy(item), None

    def assistant_meta(self, t: Turn, u: _Unit) -> dict[str, Any]:
        if u.shape is Shape.RESPONSE:
            summary: Any = t.source
        elif u.shape is Shape.FRAMES:
            summary = t.source.get("meta", {}).get("message")
        else:
            summary = None
        summary = summary if isinstance(summary, dict) else {}
        stop = summary.get("stop_reason")
        if stop is not None and stop not in ("end_turn", "tool_use"):
            self.lossy(
                t,
                "",
                f"stop_reason {short(stop)} has no canonical v1 status (complete, partial, cancelled, error "
                "describe generation, not why it stopped); status is complete and the reason is kept only "
                "in provider_raw",
            )
        name = summary.get("model")
        name = _SPACE.sub("-", name.strip()) if isinstance(name, str) and name.strip() else "unknown"
        model = f"{PROVIDER}:{name}"
        src = summary.get("usage") if isinstance(summary.get("usage"), dict) else {}
        usage: dict[str, Any] = {
            "input_tokens": _count(src.get("input_tokens")),
            "output_tokens": _count(src.get("output_tokens")),
        }
        for theirs, ours in (
            ("cache_read_input_tokens", "cached_input_tokens"),
            ("cache_creation_input_tokens", "cache_creation_input_tokens"),
        ):
            if _count(src.get(theirs)):
                usage[ours] = _count(src.get(theirs))
        usage.update({"cost_usd": "0", "pricing_version": "gpt2099-unpriced", "latency_ms": 0})
        missing = "model, " if name == "unknown" else ""
        self.lossy(
            t,
            "",
            f"gpt2099 records no {missing}provider, routing, cost or latency: "
            f"metadata.{missing}provider, routing, "
            "usage.cost_usd, pricing_version and latency_ms are placeholders",
        )
        return {
            "model": model,
            "provider": PROVIDER,
            "routing": {
                "mode": "default",
                "chosen_model": model,
                "reason": "imported from gpt2099, which records no routing decision",
            },
            "usage": usage,
        }


def _count(v: Any) -> int:
    return v if type(v) is int and v >= 0 else 0


def _ms(t: Turn) -> int | None:
    return scru128_millis(t.id) if t.id is not None else None


# Turn fields the conversion maps or reports elsewhere: role, the inherited options and
# cache (reported above), continues (the session and its order; branching is reported),
# the content, and of the response summary its model, usage counts and stop_reason.
_MAPPED_FRAME = frozenset({"id", "meta", "content"})  # `topic` and `hash` are reported
_MAPPED_META = frozenset({"role", "options", "inherited", "cache", "continues", "message"})
_MAPPED_MESSAGE = frozenset({"role", "content", "model", "usage", "stop_reason"})
_MAPPED_USAGE = frozenset({"input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"})


def _raw_only_fields(u: _Unit, t: Turn) -> list[str]:
    """Fields of a turn that only provider_raw keeps (`head`, the document fields, the
    response id, cross.stream's `ttl`/`context_id`, ...), named by their path, sorted."""
    src = t.source if isinstance(t.source, dict) else {}
    out: list[str] = []
    if u.shape is Shape.FRAMES:
        out += [k for k in src if k not in _MAPPED_FRAME]
        raw_meta = src.get("meta")
        meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        out += [f"meta.{k}" for k in meta if k not in _MAPPED_META]
        summary = meta.get("message")
    elif u.shape is Shape.RESPONSE:
        out += [k for k in u.doc if k != "message"]  # the top-level role and mime_type too
        summary = src
    else:
        summary = None
    if isinstance(summary, dict):
        out += [f"message.{k}" for k in summary if k not in _MAPPED_MESSAGE]
        usage = summary.get("usage")
        if isinstance(usage, dict):
            out += [f"message.usage.{k}" for k in usage if k not in _MAPPED_USAGE]
    return sorted(out)


def _envelope(u: _Unit, t: Turn) -> dict[str, Any]:
    if u.shape is Shape.RESPONSE:
        env = copy.deepcopy(u.doc)
        env["message"].pop("content", None)
        return dict(env)
    return {k: copy.deepcopy(v) for k, v in t.source.items() if k != "content"}


def _sessions(thread: Thread, digest: str, unit: int) -> dict[int, str]:
    """Session id per turn: connected parts of the continues graph, named by their first turn."""
    comp = thread.components()
    first_ms = next((ms for t in thread.turns if (ms := _ms(t)) is not None), 0)
    fresh = f"{PROVIDER}-{ids.derived(first_ms, 'session', digest, unit).lower()}"
    out: dict[int, str] = {}
    for t in thread.turns:
        root = thread.turns[comp[t.index]]
        out[t.index] = f"{PROVIDER}-{root.key}" if root.key is not None and thread.shape is not Shape.WINDOW else fresh
    return out


def _load_units(src: Path) -> list[_Unit]:
    run = Gpt2099Run(Options())
    for f in run.validate(src, FileStats(str(src), "gpt2099")):
        if f.severity == Severity.ERROR:
            raise InputError(f"input is not valid gpt2099: {f.format()}")
    units: list[_Unit] = []
    turns: list[Record] = []
    thread_at: int | None = None
    recs = [r for r in read_items(src, Options().max_line_bytes) if not isinstance(r, Finding)]
    artefact = artefact_of_file([r.value for r in recs])
    if artefact is not None:
        raise InputError(f"{src} holds {artefact}, not a conversation; nothing to convert")
    for rec in recs:
        shape = classify(rec.value)
        if shape is Shape.WINDOW:
            units.append(_Unit(shape, window_thread(rec), rec.value))
        elif shape is Shape.RESPONSE:
            units.append(_Unit(shape, response_thread(rec), rec.value))
        else:
            if thread_at is None:
                thread_at = len(units)
                units.append(_Unit(Shape.FRAMES, Thread(Shape.FRAMES, [])))
            turns.append(rec)
    if thread_at is not None:
        kind = turn_kind([r.value for r in turns])
        thread = build_thread([TurnItem(r, kind, True) for r in turns])
        units[thread_at] = _Unit(kind, thread)
    return units


def _write(dst: Path, docs: list[Any], *, as_lines: bool) -> None:
    with dst.open("wb") as f:
        if as_lines:
            for d in docs:
                f.write(dumps(d) + b"\n")
        else:
            f.write(dumps(docs[0] if len(docs) == 1 and not isinstance(docs[0], list) else docs, indent=True))
            f.write(b"\n")


def to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    """gpt2099 file -> canonical JSON Lines (`.jsonl`) or JSON array (any other suffix)."""
    units = _load_units(src)
    digest = hashlib.blake2b(src.read_bytes(), digest_size=16).hexdigest()
    conv = _ToCanonical(str(src), ctx, digest, Clock(digest))
    for n, u in enumerate(units):
        if u.shape is Shape.WINDOW and not u.thread.turns:
            ctx.lossy(
                str(src),
                None,
                "",
                "an empty context window has no canonical counterpart (its options are dropped)",
            )
        conv.unit(n, u)
    if dst.suffix == ".jsonl":
        _write(dst, conv.out, as_lines=True)
    else:
        with dst.open("wb") as f:
            f.write(dumps(conv.out, indent=True) + b"\n")


# -- canonical -> gpt2099 ------------------------------------------------------------------


@dataclass
class _Msg:
    rec: Record
    raw: dict[str, Any] | None

    @property
    def value(self) -> dict[str, Any]:
        v: dict[str, Any] = self.rec.value
        return v


@dataclass
class _Group:
    key: tuple[Any, ...]
    msgs: list[_Msg]

    @property
    def raw(self) -> dict[str, Any] | None:
        return self.msgs[0].raw

    def first_with(self, name: str) -> Any:
        for m in self.msgs:
            if m.raw is not None and name in m.raw:
                return m.raw[name]
        return None


def _read_canonical(src: Path) -> list[_Msg]:
    # what `turnspec validate` rejects is refused (one date check, TS115, for every target)
    validated(src, "canonical", CanonicalRun(Options()), FileStats(str(src), "canonical"))
    items = read_jsonl(src) if src.suffix == ".jsonl" else read_json(src)
    validator = SchemaValidator(schema_set("canonical", "v1"), "message.json")
    out: list[_Msg] = []
    for rec in items:
        if isinstance(rec, Finding):
            if rec.severity == Severity.ERROR:
                raise InputError(f"input is not valid canonical JSON: {rec.format()}")
            continue
        if not validator.is_valid(rec.value):
            err = validator.errors(rec.value)[0]
            raise InputError(
                f"{rec.path}:{rec.line}: {rec.pointer}{err.pointer} input is not a canonical message: {err.message}"
            )
        pr = rec.value["metadata"].get("provider_raw")
        raw = pr.get(RAW) if isinstance(pr, dict) else None
        out.append(_Msg(rec, raw if isinstance(raw, dict) and "turn" in raw else None))
    return out


def _groups(msgs: list[_Msg]) -> list[_Group]:
    out: list[_Group] = []
    for m in msgs:
        if m.raw is not None:
            key: tuple[Any, ...] = ("raw", m.raw.get("unit"), m.raw.get("turn"))
        elif m.value["role"] == "tool":
            key = ("tools", m.value["session_id"])
        else:
            key = ("native", id(m))
        if out and out[-1].key == key:
            out[-1].msgs.append(m)
        else:
            out.append(_Group(key, [m]))
    return out


@dataclass
class _FromCanonical:
    ctx: ConvertContext
    tool_names: dict[str, str]
    clock: Clock = field(default_factory=Clock)
    last_turn: dict[str, str] = field(default_factory=dict)

    def lossy(self, m: _Msg, ptr: str, message: str) -> None:
        self.ctx.lossy(m.rec.path, m.rec.line, m.rec.pointer + ptr, message)

    def content(self, g: _Group) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for m in g.msgs:
            if m.raw is not None and m.raw.get("empty"):
                continue
            overrides = m.raw.get("blocks", {}) if m.raw is not None else {}
            for i, blk in enumerate(m.value["content"]):
                b = self.block(m, f"/content/{i}", blk, overrides, str(i))
                if b is not None:
                    out.append(_apply(b, overrides.get(str(i))))
        return out

    def block(
        self, m: _Msg, ptr: str, blk: dict[str, Any], overrides: dict[str, Any], key: str
    ) -> dict[str, Any] | None:
        kind = blk["type"]
        if kind == "text":
            return {"type": "text", "text": blk["text"]}
        if kind == "image":
            src = blk["source"]
            if src["kind"] != "base64":
                self.lossy(
                    m,
                    ptr,
                    f"image by {src['kind']} has no gpt2099 counterpart (documents are inline base64); dropped",
                )
                return None
            return {
                "type": "document",
                "source": {"type": "base64", "media_type": blk["media_type"], "data": src["data"]},
            }
        if kind == "tool_use":
            return {"type": "tool_use", "id": blk["id"], "name": blk["name"], "input": blk["input"]}
        if kind == "tool_result":
            name = self.tool_names.get(blk["tool_use_id"])
            if name is None and key not in overrides:
                self.lossy(
                    m,
                    ptr,
                    "tool_result answers no tool_use in the input, so its tool name "
                    "(required by gpt2099) is unknown; named `unknown`",
                )
            items: list[dict[str, Any]] = []
            for j, inner in enumerate(blk["content"]):
                item = self.result_item(m, f"{ptr}/content/{j}", inner)
                if item is not None:
                    items.append(_apply(item, overrides.get(f"{key}/{j}")))
            out: dict[str, Any] = {
                "type": "tool_result",
                "name": name or "unknown",
                "content": items,
                "tool_use_id": blk["tool_use_id"],
            }
            if "is_error" in blk:
                out["is_error"] = blk["is_error"]
            return out
        if kind in ("thinking", "redacted_thinking"):
            what = "text and signature" if kind == "thinking" else "data"
            self.lossy(m, ptr, f"{kind} block has no gpt2099 counterpart; dropped (its {what} are lost)")
            return None
        if kind == WRAP and isinstance(blk.get("block"), dict):
            return _unwrap(blk)
        return copy.deepcopy(blk)

    def result_item(self, m: _Msg, ptr: str, blk: dict[str, Any]) -> dict[str, Any] | None:
        kind = blk["type"]
        if kind == "text":
            return {"type": "text", "text": blk["text"]}
        if kind == "image" and blk["source"]["kind"] == "base64":
            return {"type": "image", "data": blk["source"]["data"], "mimeType": blk["media_type"]}
        if kind == WRAP and isinstance(blk.get("block"), dict):
            return _unwrap(blk)
        if kind in CANONICAL_KNOWN:
            self.lossy(
                m,
                ptr,
                f"{kind} block inside a tool_result has no gpt2099 (MCP) counterpart; dropped",
            )
            return None
        return copy.deepcopy(blk)

    def native_turn(self, g: _Group, shape: Shape) -> dict[str, Any]:
        first = g.msgs[0]
        v = first.value
        role = "user" if v["role"] == "tool" else v["role"]
        us = _micros_of(v["created_at"])
        tid = self.clock.scru128((us if us is not None else self.clock.micros(None)) // 1000, v["id"])
        content = self.content(g)
        new_session = v["session_id"] not in self.last_turn
        for m in g.msgs:
            self.report_metadata(m, new_session and m is first)
        if shape is Shape.RECORDS:
            return {"id": tid, "role": role, "content": content}
        meta: dict[str, Any] = {"role": role, "content_type": "application/json"}
        prev = self.last_turn.get(v["session_id"])
        if prev is not None:
            meta["continues"] = [prev]
        self.last_turn[v["session_id"]] = tid
        if role == "assistant":
            summary = _summary(v["metadata"])
            if summary:
                meta["message"] = summary
        return {"id": tid, "topic": "gpt.turn", "meta": meta, "content": content}

    def report_metadata(self, m: _Msg, first_of_session: bool = False) -> None:
        v = m.value
        meta = v["metadata"]
        dropped = [f"message id {v['id']!r} (the turn gets a SCRU128 id of its time)"]
        if first_of_session:
            dropped.append(f"session_id {v['session_id']!r} (a session is a chain of `continues`)")
        # a tool message's parent is the call its result answers, which tool_use_id keeps
        answered = {b.get("tool_use_id") for b in v["content"] if b.get("type") == "tool_result"}
        if meta.get("parent_tool_use_id") is not None and meta["parent_tool_use_id"] not in answered:
            dropped.append("parent_tool_use_id")
        if _micros_of(v["created_at"]) is not None and (_micros_of(v["created_at"]) or 0) % 1000:
            dropped.append("created_at below the millisecond (the turn id keeps milliseconds)")
        model = meta.get("model")
        if isinstance(model, str) and ":" in model:
            dropped.append(f"the model's provider {model.split(':', 1)[0]!r}")
        elif meta.get("provider") is not None:
            dropped.append("provider")
        for k in ("routing", "user_id", "team_id"):
            if meta.get(k) is not None:
                dropped.append(k)
        usage = meta.get("usage") or {}
        dropped += [f"usage.{k}" for k in ("cost_usd", "pricing_version", "latency_ms") if k in usage]
        if meta.get("status", "complete") != "complete":
            dropped.append(f"status {meta['status']!r}")
        pr = meta.get("provider_raw")
        if isinstance(pr, dict) and pr.keys() - {RAW}:
            dropped.append("provider_raw of " + ", ".join(sorted(pr.keys() - {RAW})))
        known = {
            "model",
            "provider",
            "routing",
            "usage",
            "parent_tool_use_id",
            "status",
            "provider_raw",
            "user_id",
            "team_id",
        }
        dropped += [f"metadata.{k}" for k in sorted(meta.keys() - known)]
        if dropped:
            self.lossy(m, "/metadata", "no gpt2099 counterpart, dropped: " + "; ".join(dropped))


def _summary(meta: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    model = meta.get("model")
    if isinstance(model, str):
        out["model"] = model.split(":", 1)[1] if ":" in model else model
    usage = meta.get("usage")
    if isinstance(usage, dict):
        u = {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"]}
        if usage.get("cached_input_tokens"):
            u["cache_read_input_tokens"] = usage["cached_input_tokens"]
        if usage.get("cache_creation_input_tokens"):
            u["cache_creation_input_tokens"] = usage["cache_creation_input_tokens"]
        out["usage"] = u
    return out


def _unwrap(blk: dict[str, Any]) -> dict[str, Any]:
    inner: dict[str, Any] = copy.deepcopy(blk["block"])
    return inner


def _apply(block: dict[str, Any], ov: Any) -> dict[str, Any]:
    if isinstance(ov, dict):
        for k in ov.get("unset", []):
            block.pop(k, None)
        block.update(copy.deepcopy(ov.get("set", {})))
    return block


def from_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    """canonical messages -> a gpt2099 file, in the shape the messages came from.

    `.jsonl` writes one document per line; any other suffix one JSON document (an array
    of turns, a context window or a response). NUON is read, not written.
    """
    if dst.suffix == ".nuon":
        raise InputError(f"{dst}: turnspec reads NUON but does not write it; use .json or .jsonl")
    msgs = _read_canonical(src)
    names = {b["id"]: b["name"] for m in msgs for b in m.value["content"] if b["type"] == "tool_use"}
    conv = _FromCanonical(ctx, names)
    groups = _groups(msgs)
    shapes = {g.raw.get("shape") for g in groups if g.raw is not None}
    all_raw = all(g.raw is not None for g in groups)
    only = shapes.pop() if len(shapes) == 1 else None
    shape = Shape(only) if only in set(Shape) and all_raw else Shape.FRAMES
    units = sorted({g.raw.get("unit") for g in groups if g.raw is not None}, key=str)
    if shape is Shape.RESPONSE and len(groups) != len(units):
        shape = Shape.FRAMES  # a response is one message; anything more is a thread
    docs: list[Any]
    if shape is Shape.WINDOW:
        docs = []
        for u in units:
            gs = [g for g in groups if g.raw is not None and g.raw.get("unit") == u]
            options = gs[0].first_with("options")
            docs.append(
                {
                    "messages": [_rebuild(g, conv.content(g)) for g in gs],
                    "options": options if isinstance(options, dict) else {},
                }
            )
    elif shape is Shape.RESPONSE:
        docs = [_rebuild(g, conv.content(g)) for g in groups]
    else:
        docs = []
        for g in groups:
            env = g.first_with("envelope") if g.raw is not None else None
            if g.raw is not None and isinstance(env, dict) and g.raw.get("shape") in (Shape.FRAMES, Shape.RECORDS):
                turn = _rebuild(g, conv.content(g))
                tid = turn.get("id")
                sid = g.msgs[0].value["session_id"]
                if isinstance(tid, str):
                    conv.last_turn[sid] = tid
                docs.append(turn)
            else:
                docs.append(conv.native_turn(g, shape))
    if dst.suffix != ".jsonl" and shape in (Shape.WINDOW, Shape.RESPONSE) and len(docs) > 1:
        raise InputError(f"{dst}: the input holds {len(docs)} {shape} documents; write them to a .jsonl file")
    if dst.suffix == ".jsonl":
        _write(dst, docs, as_lines=True)
    elif shape in (Shape.WINDOW, Shape.RESPONSE):
        _write(dst, docs, as_lines=False)
    else:
        with dst.open("wb") as f:
            f.write(dumps(docs, indent=True) + b"\n")


def _rebuild(g: _Group, content: list[dict[str, Any]]) -> dict[str, Any]:
    env = copy.deepcopy(g.first_with("envelope"))
    if not isinstance(env, dict):
        env = {}
    if g.raw is not None and g.raw.get("shape") == Shape.RESPONSE:
        msg = env.setdefault("message", {})
        msg["content"] = content
        return env
    env["content"] = content
    return env


def iter_turns(path: Path) -> Iterator[Any]:
    """The documents of a gpt2099 file as parsed values (for tests and tools)."""
    for rec in read_items(path, Options().max_line_bytes):
        if not isinstance(rec, Finding):
            yield rec.value
