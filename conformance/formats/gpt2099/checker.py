"""Validation of gpt2099 files: shape, schema, then the rules.

A thread is one file (gpt2099 threads do not span exports), so the cross-turn rules run
when a file has been read, on the turns held in memory; threads are conversation-sized.
Context windows and responses are checked one document at a time.
"""

from __future__ import annotations

import binascii
import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...core.convertkit import short
from ...core.findings import Finding, RuleInfo, Selection
from ...core.jsonio import Record
from ...core.schema_validation import SchemaValidator
from ...core.schemas import schema_set
from ..base import FileStats, Options, ProgressHook
from . import inherited
from . import rules as R
from .reader import (
    ARTEFACTS,
    TurnItem,
    artefact_kind,
    build_thread,
    classify,
    read_items,
    response_thread,
    turn_kind,
    window_thread,
)
from .thread import ResolveError, Shape, Thread, Turn, is_scru128, pair_tool_results, scru128_value

CYCLE_SHOWN = 8  # turn ids a GP203 message names before it says how many more (a cycle may hold them all)
ROOTS = {
    Shape.FRAMES: "turn-frame.json",
    Shape.RECORDS: "thread-record.json",
    Shape.WINDOW: "context-window.json",
    Shape.RESPONSE: "response.json",
}


@functools.cache
def validators(version: str) -> dict[Shape, SchemaValidator]:
    """One compiled validator per root schema (compiling costs more than validating a file)."""
    s = schema_set("gpt2099", version)
    return {shape: SchemaValidator(s, root) for shape, root in ROOTS.items()}


@functools.cache
def artefact_validators(version: str) -> dict[str, SchemaValidator]:
    """The provider-API artefacts gpt2099's docs give a shape: tool lists, streamer views."""
    s = schema_set("gpt2099", version)
    return {root: SchemaValidator(s, root) for root in ("tool-definition.json", "streamer-event.json")}


class Gpt2099Run:
    """Validates gpt2099 files; no state crosses files."""

    def __init__(self, options: Options, version: str = "v1") -> None:
        self.options = options
        self.sel: Selection = options.selection
        self.version = version
        self.validators = validators(version)
        self.on = {info.id: self.sel.enabled(info.id) for info in R.CATALOG}

    def finding(self, path: str, line: int | None, pointer: str, info: RuleInfo, message: str) -> Finding:
        return Finding(path, line, pointer, info.id, self.sel.severity(info), message)

    def turn_finding(self, t: Turn, ptr: str, info: RuleInfo, message: str) -> Finding:
        return self.finding(t.path, t.line, t.pointer + ptr, info, message)

    def validate(self, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
        pending: list[tuple[Record, Shape | None]] = []
        for item in read_items(path, self.options.max_line_bytes):
            if isinstance(item, Finding):
                if self.on.get(item.rule, True):
                    info = R.CATALOG[item.rule]
                    yield Finding(
                        item.path,
                        item.line,
                        item.pointer,
                        item.rule,
                        self.sel.severity(info),
                        item.message,
                        item.column,
                    )
                continue
            stats.records += 1
            if progress is not None and item.size:
                progress(item.size)
            shape = classify(item.value)
            if shape is Shape.WINDOW:
                yield from self.check_window(item)
            elif shape is Shape.RESPONSE:
                yield from self.check_response(item)
            else:
                pending.append((item, shape))
        # In a file of turns, an object no shape claims is a broken turn: validate it as
        # one (GP020, GP101) rather than calling it foreign.
        is_thread = any(shape is not None for _, shape in pending)
        if not is_thread and pending and len(pending) == stats.records:
            kind = artefact_kind([rec.value for rec, _ in pending])
            if kind == "tools":
                yield from self.check_tools([rec for rec, _ in pending])
                return
            if kind == "streamer":
                yield from self.check_streamer([rec for rec, _ in pending])
                return
            if kind is not None:
                if self.on["GP014"]:
                    yield self.finding(
                        str(path), 1, "", R.NOT_A_CONVERSATION, f"{ARTEFACTS[kind]}: holds no conversation; not checked"
                    )
                return
        turns = [rec for rec, shape in pending if shape is not None or (is_thread and isinstance(rec.value, dict))]
        for rec, shape in pending:
            if shape is None and not (is_thread and isinstance(rec.value, dict)) and self.on["GP010"]:
                yield self.finding(rec.path, rec.line, rec.pointer, R.NOT_GPT2099, _not_gpt2099(rec.value))
        if turns:
            yield from self.check_thread(turns)

    def finish(self) -> Iterator[Finding]:
        return iter(())

    # -- documents ---------------------------------------------------------------------

    def _schema(self, rec: Record, shape: Shape) -> Iterator[Finding]:
        v = self.validators[shape]
        if v.is_valid(rec.value):
            return
        if self.on["GP020"]:
            for err in v.errors(rec.value):
                yield self.finding(rec.path, rec.line, rec.pointer + err.pointer, R.SCHEMA, err.message)

    def _artefact_schema(self, rec: Record, root: str) -> Iterator[Finding]:
        v = artefact_validators(self.version)[root]
        if self.on["GP020"] and not v.is_valid(rec.value):
            for err in v.errors(rec.value):
                yield self.finding(rec.path, rec.line, rec.pointer + err.pointer, R.SCHEMA, err.message)

    def check_tools(self, recs: list[Record]) -> Iterator[Finding]:
        """A tool list `prepare-request` takes (provider-api.md): each entry's shape."""
        for rec in recs:
            yield from self._artefact_schema(rec, "tool-definition.json")

    def check_streamer(self, recs: list[Record]) -> Iterator[Finding]:
        """gpt2099's streamer view (provider-api.md `response_stream_streamer`): each
        event's shape; a content that is not a string; content appended to no block."""
        started = False
        for rec in recs:
            e = rec.value
            if e is None:  # "or null for events that should be ignored"
                continue
            yield from self._artefact_schema(rec, "streamer-event.json")
            if not isinstance(e, dict):
                continue
            if isinstance(e.get("type"), str):
                started = True
            if "content" in e and not isinstance(e["content"], str) and self.on["GP015"]:
                yield self.finding(
                    rec.path,
                    rec.line,
                    rec.pointer + "/content",
                    R.STREAMER_CONTENT,
                    f"content is {_JSON_KIND.get(type(e['content']), 'not a string')}; the doc says a string "
                    "to append to the block",
                )
            if "type" not in e and "content" in e and not started and self.on["GP016"]:
                yield self.finding(
                    rec.path,
                    rec.line,
                    rec.pointer,
                    R.STREAMER_NO_BLOCK,
                    f"content {short(e['content'])} appends to the current block, but no event with a `type` "
                    "started one",
                )

    def check_window(self, rec: Record) -> Iterator[Finding]:
        if not self.validators[Shape.WINDOW].is_valid(rec.value):
            yield from self._schema(rec, Shape.WINDOW)
            return
        thread = window_thread(rec)
        for t in thread.turns:
            yield from self.block_rules(t)
        yield from self.pairing_rules(thread)
        if self.on["GP401"] and not _has_ptr(thread.options or {}):
            yield self.finding(
                rec.path,
                rec.line,
                rec.pointer + "/options",
                R.NO_PROVIDER_PTR,
                "options has no provider_ptr; gpt2099 refuses to call a provider without one",
            )

    def check_response(self, rec: Record) -> Iterator[Finding]:
        if not self.validators[Shape.RESPONSE].is_valid(rec.value):
            yield from self._schema(rec, Shape.RESPONSE)
            return
        for t in response_thread(rec).turns:
            yield from self.block_rules(t)

    # -- threads -----------------------------------------------------------------------

    def check_thread(self, recs: list[Record]) -> Iterator[Finding]:
        kind = turn_kind([r.value for r in recs])
        items: list[TurnItem] = []
        for rec in recs:
            shape = classify(rec.value)
            if shape is not None and shape is not kind and not _bare_turn(rec.value):
                if self.on["GP010"]:
                    yield self.finding(
                        rec.path,
                        rec.line,
                        rec.pointer,
                        R.NOT_GPT2099,
                        f"a {shape} turn in a file of {kind}; one thread file holds one kind of turn",
                    )
                continue
            valid = self.validators[kind].is_valid(rec.value)
            if not valid:
                yield from self._schema(rec, kind)
            items.append(TurnItem(rec, kind, valid))
        thread = build_thread(items)
        seen: dict[str, Turn] = {}
        for t in thread.turns:
            yield from self.turn_rules(t, seen)
            if t.valid:
                yield from self.block_rules(t)
        yield from self.link_rules(thread)
        yield from self.bookmark_rules(thread)
        yield from self.pairing_rules(thread)
        yield from self.provider_rules(thread)

    def turn_rules(self, t: Turn, seen: dict[str, Turn]) -> Iterator[Finding]:
        on = self.on
        if t.id is not None:
            if on["GP101"] and scru128_value(t.id) is None:
                why = "is above the largest SCRU128" if is_scru128(t.id) else "is not 25 base-36 characters"
                yield self.turn_finding(t, "/id", R.TURN_ID, f"turn id {t.id!r} {why}")
            key = t.id.lower()
            first = seen.get(key)
            if first is None:
                seen[key] = t
            elif on["GP102"]:
                yield self.turn_finding(t, "/id", R.TURN_ID_UNIQUE, f"turn id {t.id} already used on line {first.line}")
        meta = t.source.get("meta")
        if isinstance(meta, dict):
            names = inherited.present(meta)
            if len(names) == 2 and on["GP012"]:
                yield self.turn_finding(
                    t,
                    "/meta",
                    R.OPTIONS_BOTH,
                    "meta has both `options` and `inherited`; gpt2099 would read only one of them",
                )
            elif names == [inherited.CURRENT] and on["GP011"]:
                yield self.turn_finding(
                    t,
                    "/meta/options",
                    R.OPTIONS_OLD_NAME,
                    "`options` is the current name; gpt2099 plans to rename it `inherited` (both are read)",
                )
            ct = meta.get("content_type")
            if isinstance(ct, str) and not R.MIME.match(ct) and on["GP106"]:
                yield self.turn_finding(
                    t, "/meta/content_type", R.MIME_SYNTAX, f"content_type {short(ct)} is not type/subtype"
                )
            if meta.get("type") == "document" and on["GP105"]:
                # no content_type is no finding: schemas.md "Required Fields" lists `role` alone;
                # content_type is one of the optional "Document-Specific Fields", and the block's
                # `source.media_type` is what "determines provider-specific handling"
                docs = [b for b in t.content if isinstance(b, dict) and b.get("type") == "document"]
                if ("hash" not in t.source or "content" in t.source) and (len(t.content) != 1 or len(docs) != 1):
                    yield self.turn_finding(
                        t,
                        "/content",
                        R.DOCUMENT_TURN,
                        f"document turn holds {len(t.content)} block(s), {len(docs)} of them document(s); "
                        "an uploaded file is one document block",
                    )
            head = meta.get("head")
            if isinstance(head, str) and is_scru128(head) and on["GP104"]:
                yield self.turn_finding(
                    t,
                    "/meta/head",
                    R.HEAD_LOOKS_LIKE_ID,
                    f"bookmark {head!r} matches the SCRU128 pattern, so gpt2099 reads it as a turn id",
                )

    def block_rules(self, t: Turn) -> Iterator[Finding]:
        on = self.on
        for i, blk in enumerate(t.content):
            if not isinstance(blk, dict):
                continue
            kind = blk.get("type")
            if kind not in R.KNOWN_BLOCKS:
                if on["GP013"]:
                    yield self.turn_finding(
                        t,
                        f"/content/{i}",
                        R.UNKNOWN_BLOCK,
                        f"content block type {kind!r} is not one gpt2099 documents",
                    )
            elif kind == "document" and on["GP106"] and not R.MIME.match(str(blk["source"]["media_type"])):
                yield self.turn_finding(
                    t,
                    f"/content/{i}/source/media_type",
                    R.MIME_SYNTAX,
                    f"media_type {short(blk['source']['media_type'])} is not type/subtype",
                )
            if kind == "document" and on["GP103"]:
                data = blk["source"]["data"]
                try:
                    binascii.a2b_base64(data, strict_mode=True)
                except (binascii.Error, ValueError) as exc:
                    yield self.turn_finding(
                        t,
                        f"/content/{i}/source/data",
                        R.DOCUMENT_BASE64,
                        f"document data is not valid base64 ({exc})",
                    )

    def link_rules(self, thread: Thread) -> Iterator[Finding]:
        problems = thread.link()
        for p in problems:
            t = thread.turns[p.turn]
            info = R.CONTINUES_UNRESOLVED if p.kind == "unresolved" else R.CONTINUES_NOT_EARLIER
            if self.on[info.id]:
                ptr = "/meta/continues" + (
                    f"/{p.position}" if isinstance(t.source.get("meta", {}).get("continues"), list) else ""
                )
                yield self.turn_finding(t, ptr, info, p.message)
        if self.on["GP203"]:
            for cycle in thread.cycles():
                t = thread.turns[cycle[0]]
                shown = [*cycle[:CYCLE_SHOWN], cycle[0]] if len(cycle) <= CYCLE_SHOWN else cycle[:CYCLE_SHOWN]
                ids = " -> ".join(str(thread.turns[i].id) for i in shown)
                if len(cycle) > CYCLE_SHOWN:
                    ids += f" -> ... ({len(cycle)} turns) -> {thread.turns[cycle[0]].id}"
                yield self.turn_finding(t, "/meta/continues", R.CONTINUES_CYCLE, f"continues cycle: {ids}")

    def bookmark_rules(self, thread: Thread) -> Iterator[Finding]:
        """GP204: one bookmark names one thread. Turns of one thread (connected by
        `continues`, branches included, since a head is inherited down every branch) may
        share it; turns of unrelated threads may not: gpt2099 resolves a bookmark to the
        last turn carrying it, so the other thread is no longer reachable by that name."""
        if not self.on["GP204"] or not any(len(v) > 1 for v in thread.heads.values()):
            return
        comp = thread.components()
        for head, members in sorted(thread.heads.items()):
            first_of: dict[int, int] = {}
            for i in sorted(members):
                first_of.setdefault(comp[i], i)
            owner = min(first_of.values())
            for i in sorted(first_of.values()):
                if i == owner:
                    continue
                yield self.turn_finding(
                    thread.turns[i],
                    "/meta/head",
                    R.BOOKMARK_REUSED,
                    f"bookmark {head!r} already names another thread (turn {thread.turns[owner].id}); "
                    "a bookmark names one thread, and gpt2099 resolves it to the last turn carrying it",
                )

    def pairing_rules(self, thread: Thread) -> Iterator[Finding]:
        if not (self.on["GP301"] or self.on["GP302"]):
            return
        for p in pair_tool_results(thread):
            ti, bi = p.result
            t = thread.turns[ti]
            blk = t.content[bi]
            if p.use is None:
                if self.on["GP301"]:
                    what = (
                        f"tool_use_id {blk['tool_use_id']!r}"
                        if p.by == "id"
                        else f"name {blk['name']!r} (it has no tool_use_id)"
                    )
                    yield self.turn_finding(
                        t,
                        f"/content/{bi}",
                        R.RESULT_UNPAIRED,
                        f"tool_result with {what} answers no earlier tool_use in its context",
                    )
                continue
            use = thread.turns[p.use[0]].content[p.use[1]]
            if p.by == "id" and use.get("name") != blk.get("name") and self.on["GP302"]:
                yield self.turn_finding(
                    t,
                    f"/content/{bi}/name",
                    R.RESULT_NAME,
                    f"tool_result names {blk.get('name')!r} but tool_use "
                    f"{blk['tool_use_id']!r} called {use.get('name')!r}",
                )

    def provider_rules(self, thread: Thread) -> Iterator[Finding]:
        if not self.on["GP401"]:
            return
        for leaf in thread.leaves():
            t = thread.turns[leaf]
            if not t.valid:
                continue
            try:
                window = thread.resolve_indices([leaf])
            except ResolveError:
                continue  # a cycle is reported by GP203
            if not _has_ptr(window["options"] or {}):
                yield self.turn_finding(
                    t,
                    "",
                    R.NO_PROVIDER_PTR,
                    f"the thread ending at turn {t.id} resolves to options without provider_ptr; `gpt call` needs one",
                )


def _has_ptr(options: dict[str, Any]) -> bool:
    ptr = options.get("provider_ptr")
    return isinstance(ptr, str) and ptr != ""


def _bare_turn(value: Any) -> bool:
    """`{id, content}` alone is a valid frame and a valid record."""
    return isinstance(value, dict) and not value.keys() - {"id", "content"}


_JSON_KIND = {dict: "an object", list: "an array", int: "a number", float: "a number", bool: "a boolean"}


def _not_gpt2099(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(sorted(value)[:8])
        what = "a turn frame, thread record, context window or response"
        return f"object with keys [{keys}] is not {what}"
    return f"a {type(value).__name__} is not a gpt2099 document"
