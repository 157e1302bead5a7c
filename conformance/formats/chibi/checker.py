"""Validation of chibi contexts: a context directory is checked as one unit.

The transcript partitions are read in the order chibi reads them (the manifest's
archived partitions oldest first, then the active partition), so cross-entry rules see
one sequence: id uniqueness (CB102), call/result pairing (CB2xx), and the entries from
the last anchor on, which context.jsonl must equal (CB212). Memory holds one small
record per open tool call and per id, and the entries since the last anchor (the
context window, which chibi itself holds in memory).

Single chibi files (an entries .jsonl, inbox.jsonl, requests.jsonl, manifest.json,
context_meta.json, a .bloom) are validated on their own when named directly; checks
that need the rest of the directory (partition contents, derivation) are then skipped.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from ...core import pointers
from ...core.convertkit import short
from ...core.findings import Finding, RuleInfo, Selection
from ...core.jsonio import IO_RULES, Record, irregular, parse, read_jsonl
from ...core.schema_validation import SchemaValidator
from ...core.schemas import schema_set
from ..base import FileStats, Options, ProgressHook
from . import rules as R
from .reader import (
    Kind,
    Layout,
    content_bytes,
    has_certain_term,
    layout_of,
    may_have_term,
    peek_kind,
    read_document,
    safe_join,
    walk_ints,
)

_IO = {info.id: info for info in IO_RULES}
DEFAULT_BYTES_PER_TOKEN = 3  # chibi-core partition.rs DEFAULT_BYTES_PER_TOKEN

CheckGen = Generator[Finding, None, bool]


@dataclass
class Call:
    entry_type: str
    to: str
    path: str
    line: int


@dataclass
class Sequence:
    """State across the entries of one transcript (or one entries file)."""

    pairs: bool
    ids: dict[str, tuple[str, int]] = field(default_factory=dict)
    open: dict[str, Call] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)
    positional: list[Call] = field(default_factory=list)
    """Open calls without a tool_call_id (older chibi), which chibi pairs by position."""
    context: str | None = None
    """The context's name, for the from/to rules: the `to` of the first anchor (chibi
    starts every context with one). The directory's name is not used: copies and
    renamed contexts keep the name their entries were written with."""
    in_context: bool = False
    """The entries are context.jsonl's."""
    flow: Record | None = None
    """A v0.10 flow-control message still waiting for its control_transfer."""
    flow_seen: bool = False
    first_v09: tuple[str, int] | None = None
    first_v010: tuple[str, int] | None = None
    mixed_reported: bool = False

    @property
    def vocabulary(self) -> str:
        if self.first_v09 and self.first_v010:
            return "mixed"
        if self.first_v09:
            return "v0.9"
        if self.first_v010:
            return "v0.10"
        return "either"


@dataclass
class Part:
    """What one partition file held."""

    rel: str
    path: Path | None
    records: int = 0
    timestamps: list[int] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    has_term: bool = False
    maybe_term: bool = False  # False: surely no term (reader.may_have_term)
    unreadable: bool = False
    present: bool = False  # a regular file when it was read (read_partition looked)


def vocabulary_of(entry: dict[str, Any]) -> str | None:
    """ "v0.9", "v0.10", or None for an entry both vocabularies share."""
    et = entry.get("entry_type")
    if et in R.V09_TYPES:
        return "v0.9"
    if et in R.V010_TYPES or any(k in entry for k in R.V010_FIELDS):
        return "v0.10"
    return None


def token_estimate(lengths: list[int], bytes_per_token: int) -> int:
    """chibi's estimate: each entry's content bytes / bytes_per_token, rounded up."""
    return sum(-(-n // bytes_per_token) for n in lengths)


def bytes_per_token_range(lengths: list[int], token_count: int) -> tuple[int, int] | None:
    """The (smallest, largest) bytes_per_token giving `token_count`, or None if none does.

    The estimate never grows with bytes_per_token, so both ends are found by bisection.
    Beyond the longest content every value gives the same estimate; `largest` is then
    capped at longest + 1.
    """
    top = max(lengths, default=0) + 1

    def first(pred_le: int) -> int:
        lo, hi = 1, top
        while lo < hi:
            mid = (lo + hi) // 2
            if token_estimate(lengths, mid) <= pred_le:
                hi = mid
            else:
                lo = mid + 1
        return lo

    small = first(token_count)
    if token_estimate(lengths, small) != token_count:
        return None
    large = first(token_count - 1) - 1 if token_estimate(lengths, top) < token_count else top
    return small, max(small, large)


class ChibiRun:
    """Validates chibi units and files; one run may hold several contexts."""

    def __init__(self, options: Options, vocabulary: str | None = None) -> None:
        self.options = options
        self.sel: Selection = options.selection
        self.pinned = vocabulary
        s = schema_set("chibi", "v1")
        self.entry_schema = SchemaValidator(s, "entry.json")
        self.manifest_schema = SchemaValidator(s, "manifest.json")
        self.inbox_schema = SchemaValidator(s, "inbox-entry.json")
        self.meta_schema = SchemaValidator(s, "context-meta.json")
        self.request_schema = SchemaValidator(s, "request-log-entry.json")
        self.bloom_schema = SchemaValidator(s, "bloom-filter.json")
        self.re_uuid = re.compile(str(s["ids.json"]["$defs"]["uuid"]["pattern"]).replace("$", r"\Z"))
        self.on = {info.id: self.sel.enabled(info.id) for info in R.CATALOG}

    # -- plumbing ---------------------------------------------------------------------

    def finding(self, path: str, line: int | None, pointer: str, info: RuleInfo, message: str) -> Iterator[Finding]:
        if self.on[info.id]:
            yield Finding(path, line, pointer, info.id, self.sel.severity(info), message)

    def reader_finding(self, item: Finding) -> Iterator[Finding]:
        info = _IO.get(item.rule)
        if info is None or not self.on.get(item.rule, True):
            return
        sev = self.sel.severity(info)
        yield (
            item
            if sev == item.severity
            else Finding(item.path, item.line, item.pointer, item.rule, sev, item.message, item.column)
        )

    def records(
        self,
        items: Iterator[Record | Finding],
        stats: FileStats,
        progress: ProgressHook | None,
        bad: list[bool] | None = None,
    ) -> Generator[Finding, None, list[Record]]:
        """Collect the records of a file, passing its read errors on."""
        out: list[Record] = []
        for item in items:
            if isinstance(item, Finding):
                if bad is not None and item.severity == "error":
                    bad[0] = True
                yield from self.reader_finding(item)
                continue
            stats.records += 1
            if progress is not None and item.size:
                progress(item.size)
            out.append(item)
        return out

    def read_lines(self, path: Path) -> Iterator[Record | Finding]:
        return read_jsonl(path, max_line_bytes=self.options.max_line_bytes)

    def _schema(self, v: SchemaValidator, rec: Record, info: RuleInfo) -> Generator[Finding, None, bool]:
        if v.is_valid(rec.value):
            return True
        if self.on[info.id]:
            for err in v.errors(rec.value):
                yield Finding(
                    rec.path,
                    rec.line,
                    rec.pointer + err.pointer,
                    info.id,
                    self.sel.severity(info),
                    err.message,
                )
        return False

    # -- entry point ------------------------------------------------------------------

    def validate(self, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
        if path.is_dir():
            layout = layout_of(path)
            if layout is not None:
                yield from DirectoryCheck(self, layout, stats, progress).run()
            return
        kind = peek_kind(path) or _kind_by_name(path)
        if kind == "entries":
            yield from self.entries_file(path, stats, progress)
        elif kind == "inbox":
            yield from self.inbox_file(path, stats, progress)
        elif kind == "requests":
            yield from self.requests_file(path, stats, progress)
        elif kind == "manifest":
            records = yield from self.records(read_document(path), stats, progress)
            for rec in records:
                yield from self.manifest_rules(rec, None)
        elif kind == "context_meta":
            yield from self.meta_file(path, stats, progress)
        else:
            yield from self.bloom_file(path, stats, None)

    def finish(self) -> Iterator[Finding]:
        return iter(())

    # -- entries ----------------------------------------------------------------------

    def check_entry_schema(self, rec: Record) -> CheckGen:
        """CB020, tolerant the way chibi is: an entry type it does not know is skipped
        (CB026) and fields it does not know are ignored (CB027), since entries are
        append-only and outlive the versions that wrote them."""
        v = rec.value
        et = v.get("entry_type") if isinstance(v, dict) else None
        if isinstance(et, str) and et not in R.KNOWN_TYPES:
            yield from self.finding(
                rec.path, rec.line, "/entry_type", R.ENTRY_UNKNOWN_TYPE, f"entry type {et!r} is not one chibi documents"
            )
            return False
        if self.entry_schema.is_valid(v):
            return True
        errors = self.entry_schema.errors(v)
        if errors and all(e.keyword in ("additionalProperties", "unevaluatedProperties") for e in errors):
            for err in errors:
                yield from self.finding(
                    rec.path, rec.line, rec.pointer + err.pointer, R.ENTRY_UNKNOWN_FIELD, err.message
                )
            return True
        return (yield from self._schema(self.entry_schema, rec, R.ENTRY_SCHEMA))

    def check_entry(self, rec: Record, seq: Sequence) -> CheckGen:
        """Every rule about one entry, and its part of the sequence rules."""
        ok = yield from self.check_entry_schema(rec)
        if not ok:
            return False
        e: dict[str, Any] = rec.value
        p, ln = rec.path, rec.line
        eid, et = e["id"], e["entry_type"]
        if not self.re_uuid.match(eid):
            yield from self.finding(p, ln, "/id", R.ID_UUID, f"id {eid!r} is not a UUID")
        seen = seq.ids.get(eid)
        if seen is not None:
            yield from self.finding(p, ln, "/id", R.ID_UNIQUE, f"id {eid} already used at {seen[0]}:{seen[1]}")
        else:
            seq.ids[eid] = (p, ln)
        yield from self.timestamp_rules(rec, e["timestamp"])
        if e.get("flow_control") is False and et != "control_transfer":  # a transfer's false is CB106
            yield from self.finding(
                p,
                ln,
                "/flow_control",
                R.FLOW_FALSE_WRITTEN,
                "flow_control: false is written; chibi omits the field when false (it reads the same as absent)",
            )
        if et in R.ANCHORS:
            want = R.ANCHOR_CONTENT[et]
            if e["from"] != "system" or e["content"] != want:
                yield from self.finding(
                    p,
                    ln,
                    "",
                    R.ANCHOR_FORM,
                    f"{et} anchor must come from 'system' with content {want!r} (has from "
                    f"{e['from']!r}, content {short(e['content'])})",
                )
            if et == "compaction" and (e.get("metadata") or {}).get("summary") is None:
                yield from self.finding(
                    p,
                    ln,
                    "/metadata",
                    R.COMPACTION_SUMMARY,
                    "compaction anchor has no metadata.summary",
                )
        elif et == "control_transfer" and (e["content"] != "" or e.get("flow_control") is not True):
            yield from self.finding(
                p,
                ln,
                "",
                R.TRANSFER_FORM,
                "control_transfer must have empty content and flow_control: true (has "
                f"content {short(e['content'])}, flow_control {e.get('flow_control')!r})",
            )
        yield from self._documented(rec, e, seq)
        yield from self._vocabulary(rec, e, seq)
        if seq.pairs:
            yield from self._pairing(rec, e, seq)
        return True

    def timestamp_rules(self, rec: Record, ts: Any) -> Iterator[Finding]:
        if type(ts) is not int:
            yield from self.finding(
                rec.path,
                rec.line,
                "/timestamp",
                R.TIMESTAMP_SECONDS,
                f"timestamp {ts!r} is not an integer literal (serde reads u64)",
            )
        elif ts > R.MAX_SECONDS:
            yield from self.finding(
                rec.path,
                rec.line,
                "/timestamp",
                R.TIMESTAMP_SECONDS,
                f"timestamp {ts} is after the year 9999 as seconds; milliseconds?",
            )

    def _vocabulary(self, rec: Record, e: dict[str, Any], seq: Sequence) -> Iterator[Finding]:
        vocab = vocabulary_of(e)
        if vocab is None:
            return
        where = (rec.path, rec.line)
        if vocab == "v0.9" and seq.first_v09 is None:
            seq.first_v09 = where
        elif vocab == "v0.10" and seq.first_v010 is None:
            seq.first_v010 = where
        if self.pinned is not None:
            if vocab != self.pinned:
                yield from self.finding(
                    rec.path,
                    rec.line,
                    "",
                    R.PINNED_VOCABULARY,
                    f"{_construct(e)} (the {vocab} vocabulary), but --format pins {self.pinned}",
                )
            return
        if seq.first_v09 and seq.first_v010 and not seq.mixed_reported:
            seq.mixed_reported = True
            other = seq.first_v010 if vocab == "v0.9" else seq.first_v09
            assert other is not None
            yield from self.finding(
                rec.path,
                rec.line,
                "",
                R.MIXED_VOCABULARY,
                f"{_construct(e)} (the {vocab} vocabulary), but {other[0]}:{other[1]} uses "
                "the other "
                "vocabulary (a context that outlived an upgrade?)",
            )

    def _pairing(self, rec: Record, e: dict[str, Any], seq: Sequence) -> Iterator[Finding]:
        et = e["entry_type"]
        if (et in R.PAIRS or et in R.RESULTS) and "tool_call_id" not in e:
            yield from self._positional(rec, e, seq)
            return
        if et in R.PAIRS:
            tcid = e["tool_call_id"]
            prev = seq.open.get(tcid)
            if prev is not None:
                yield from self.finding(
                    rec.path,
                    rec.line,
                    "/tool_call_id",
                    R.CALL_ID_REUSED,
                    f"tool_call_id {tcid!r} reused while the {prev.entry_type} at "
                    f"{prev.path}:{prev.line} has no result",
                )
            seq.open[tcid] = Call(et, e["to"], rec.path, rec.line)
            seq.answered.discard(tcid)
        elif et in R.RESULTS:
            tcid = e["tool_call_id"]
            call = seq.open.pop(tcid, None)
            if call is None:
                if tcid in seq.answered:
                    yield from self.finding(
                        rec.path,
                        rec.line,
                        "/tool_call_id",
                        R.RESULT_DUPLICATE,
                        f"call {tcid!r} already has a result",
                    )
                else:
                    yield from self.finding(
                        rec.path,
                        rec.line,
                        "/tool_call_id",
                        R.RESULT_UNPAIRED,
                        f"{et} answers {tcid!r} but no earlier call has that id",
                    )
                return
            seq.answered.add(tcid)
            if R.PAIRS[call.entry_type] != et:
                yield from self.finding(
                    rec.path,
                    rec.line,
                    "/entry_type",
                    R.RESULT_KIND,
                    f"{et} answers the {call.entry_type} at {call.path}:{call.line}; "
                    f"expected {R.PAIRS[call.entry_type]}",
                )
            if e["from"] != call.to:
                yield from self.finding(
                    rec.path,
                    rec.line,
                    "/from",
                    R.RESULT_TOOL,
                    f"result comes from {e['from']!r} but its call at {call.path}:{call.line} went to {call.to!r}",
                )

    def _documented(self, rec: Record, e: dict[str, Any], seq: Sequence) -> Iterator[Finding]:
        """CB107-CB110: tool arguments, addressing, v0.10 flow-control pairs, anchor refs."""
        p, ln, et = rec.path, rec.line, e["entry_type"]
        if et == "tool_call":
            try:
                parse(e["content"].encode("utf-8", "surrogatepass"))
            except ValueError:
                yield from self.finding(
                    p, ln, "/content", R.TOOL_ARGS_JSON, f"tool arguments {short(e['content'])} are not JSON"
                )
        if seq.context is None and et in R.ANCHORS and isinstance(e["to"], str):
            seq.context = e["to"]
        ctx = seq.context
        if ctx is not None:
            wrong = None
            if et == "tool_call" and e["from"] != ctx:
                wrong = ("/from", f"tool_call comes from {e['from']!r}, not from the context {ctx!r}")
            elif et == "tool_result" and e["to"] != ctx:
                wrong = ("/to", f"tool_result goes to {e['to']!r}, not to the context {ctx!r}")
            elif et in R.ANCHORS and e["to"] != ctx:
                wrong = ("/to", f"{et} anchor goes to {e['to']!r}, not to the context {ctx!r}")
            elif et == "message" and ctx not in (e["from"], e["to"]):
                wrong = ("", f"message from {e['from']!r} to {e['to']!r}: neither is the context {ctx!r}")
            if wrong is not None:
                yield from self.finding(p, ln, wrong[0], R.ADDRESSING, wrong[1])
        # TF §Flow Control Types: a flow-control message and then its control_transfer, same direction
        waiting = seq.flow
        seq.flow = None
        if et == "control_transfer":
            w = waiting.value if waiting is not None else None
            if w is None or (w["from"], w["to"]) != (e["from"], e["to"]):
                what = (
                    f"follows the flow-control message at {waiting.path}:{waiting.line} from {w['from']!r} to {w['to']!r}"
                    if waiting is not None and w is not None
                    else "follows no flow-control message"
                )
                # a file checked alone may start after the message it pairs with
                if seq.flow_seen or not (seq.in_context or not seq.pairs):
                    yield from self.finding(
                        p, ln, "", R.FLOW_PAIRING, f"control_transfer from {e['from']!r} to {e['to']!r} {what}"
                    )
        elif waiting is not None:
            yield from self._flow_unpaired(waiting)
        if et == "message" and e.get("flow_control") is True:
            seq.flow = rec
        seq.flow_seen = True
        meta = e.get("metadata")
        if isinstance(meta, dict) and "transcript_anchor_id" in meta and not (seq.in_context and et in R.ANCHORS):
            where = "a transcript entry" if not seq.in_context else f"a {et} entry"
            yield from self.finding(
                p,
                ln,
                "/metadata/transcript_anchor_id",
                R.ANCHOR_REF_PLACEMENT,
                f"transcript_anchor_id on {where}; it belongs to context.jsonl's anchor only",
            )

    def _flow_unpaired(self, rec: Record) -> Iterator[Finding]:
        v = rec.value
        yield from self.finding(
            rec.path,
            rec.line,
            "",
            R.FLOW_PAIRING,
            f"flow-control message from {v['from']!r} to {v['to']!r} is not followed by its control_transfer",
        )

    def _positional(self, rec: Record, e: dict[str, Any], seq: Sequence) -> Iterator[Finding]:
        """TF §Fields: tool_call_id is optional; without it a result answers the oldest
        open call that has none, as chibi pairs them."""
        et = e["entry_type"]
        if et in R.PAIRS:
            seq.positional.append(Call(et, e["to"], rec.path, rec.line))
            return
        if not seq.positional:
            if seq.pairs:
                yield from self.finding(
                    rec.path,
                    rec.line,
                    "",
                    R.RESULT_UNPAIRED,
                    f"{et} has no tool_call_id and follows no open call without one (chibi pairs these by position)",
                )
            return
        call = seq.positional.pop(0)
        if R.PAIRS[call.entry_type] != et:
            yield from self.finding(
                rec.path,
                rec.line,
                "/entry_type",
                R.RESULT_KIND,
                f"{et} answers (by position) the {call.entry_type} at {call.path}:{call.line}; "
                f"expected {R.PAIRS[call.entry_type]}",
            )
        if e["from"] != call.to:
            yield from self.finding(
                rec.path,
                rec.line,
                "/from",
                R.RESULT_TOOL,
                f"result comes from {e['from']!r} but its call (by position) at {call.path}:{call.line} "
                f"went to {call.to!r}",
            )

    def finish_sequence(self, seq: Sequence) -> Iterator[Finding]:
        # a flow-control message last in the file is not reported: chibi writes the
        # control_transfer right after it, and the end of a file is where a write is cut
        if not seq.pairs:
            return
        for call in seq.positional:
            yield from self.finding(
                call.path,
                call.line,
                "",
                R.CALL_UNANSWERED,
                f"{call.entry_type} without a tool_call_id never gets a result",
            )
        for tcid, call in seq.open.items():
            yield from self.finding(
                call.path,
                call.line,
                "/tool_call_id",
                R.CALL_UNANSWERED,
                f"{call.entry_type} {tcid!r} never gets a result",
            )

    def entries_file(self, path: Path, stats: FileStats, progress: ProgressHook | None) -> Iterator[Finding]:
        # a partition checked alone may answer calls of its neighbours: pairing needs the unit
        partial = path.parent.name == "partitions" or path.name == "active.jsonl"
        is_context = path.name == "context.jsonl"
        seq = Sequence(pairs=not partial, in_context=is_context)
        first = True
        for item in self.read_lines(path):
            if isinstance(item, Finding):
                yield from self.reader_finding(item)
                continue
            stats.records += 1
            if progress is not None and item.size:
                progress(item.size)
            ok = yield from self.check_entry(item, seq)
            if is_context:
                yield from self.context_structure(item, first, ok)
            first = False
        yield from self.finish_sequence(seq)
        stats.extra["vocabulary"] = seq.vocabulary
        stats.extra["entries"] = stats.records

    def context_structure(self, rec: Record, first: bool, valid: bool, stale: bool = False) -> Iterator[Finding]:
        et = rec.value.get("entry_type") if isinstance(rec.value, dict) else None
        if first and et not in R.ANCHORS and not stale:
            yield from self.finding(
                rec.path,
                rec.line,
                "/entry_type",
                R.CONTEXT_ANCHOR,
                f"context.jsonl starts with {et!r}, not an anchor (context_created, compaction, archival)",
            )
        if not first and et in R.ANCHORS:
            yield from self.finding(
                rec.path,
                rec.line,
                "/entry_type",
                R.CONTEXT_SECOND_ANCHOR,
                f"{et} anchor after entry 0: context.jsonl holds only the last anchor and what follows it",
            )
        if et == "system_prompt_changed":
            yield from self.finding(
                rec.path,
                rec.line,
                "/entry_type",
                R.CONTEXT_PROMPT_CHANGE,
                "system_prompt_changed belongs to the transcript only",
            )

    # -- other files --------------------------------------------------------------------

    def inbox_file(self, path: Path, stats: FileStats, progress: ProgressHook | None) -> Iterator[Finding]:
        records = yield from self.records(self.read_lines(path), stats, progress)
        for rec in records:
            ok = yield from self._schema(self.inbox_schema, rec, R.INBOX_SCHEMA)
            if ok:
                if not self.re_uuid.match(rec.value["id"]):
                    yield from self.finding(
                        rec.path,
                        rec.line,
                        "/id",
                        R.ID_UUID,
                        f"id {rec.value['id']!r} is not a UUID",
                    )
                yield from self.timestamp_rules(rec, rec.value["timestamp"])

    def requests_file(self, path: Path, stats: FileStats, progress: ProgressHook | None) -> Iterator[Finding]:
        records = yield from self.records(self.read_lines(path), stats, progress)
        for rec in records:
            ok = yield from self._schema(self.request_schema, rec, R.REQUEST_SCHEMA)
            if ok:
                yield from self.timestamp_rules(rec, rec.value["timestamp"])

    def meta_file(self, path: Path, stats: FileStats, progress: ProgressHook | None) -> Iterator[Finding]:
        records = yield from self.records(read_document(path), stats, progress)
        for rec in records:
            yield from self._schema(self.meta_schema, rec, R.META_SCHEMA)

    def bloom_file(self, path: Path, stats: FileStats, part: Part | None) -> Iterator[Finding]:
        records = yield from self.records(read_document(path), stats, None)
        for rec in records:
            ok = yield from self._schema(self.bloom_schema, rec, R.BLOOM_SCHEMA)
            if ok and part is not None and part.has_term and not any(walk_ints(rec.value["bits"])):
                yield from self.finding(
                    rec.path,
                    rec.line,
                    "/bits",
                    R.BLOOM_EMPTY,
                    f"no bit is set, but {part.rel} holds searchable terms (every inserted term sets bits)",
                )
            elif ok and part is not None and not part.unreadable and not part.maybe_term:
                bits = sum(int(v).bit_count() for v in walk_ints(rec.value["bits"]))
                if bits:
                    yield from self.finding(
                        rec.path,
                        rec.line,
                        "/bits",
                        R.BLOOM_FOREIGN,
                        f"{bits} bit(s) set, but {part.rel} holds no searchable term (chibi builds the "
                        "filter from the content's words only, so an empty word list sets none)",
                    )

    # -- manifest -----------------------------------------------------------------------

    def manifest_rules(self, rec: Record, layout: Layout | None) -> Generator[Finding, None, dict[str, Any] | None]:
        """Schema and the checks that need only the manifest itself; the manifest if usable.
        Paths are joined to `layout`'s transcript/ (to none for a manifest named alone)."""
        ok = yield from self._schema(self.manifest_schema, rec, R.MANIFEST_SCHEMA)
        if not ok:
            return None
        m: dict[str, Any] = rec.value
        p, ln = rec.path, rec.line
        if m["version"] != 1:
            yield from self.finding(
                p,
                ln,
                "/version",
                R.MANIFEST_VERSION,
                f"manifest version {m['version']} is not 1, the only version chibi writes",
            )
        join = layout.join if layout is not None else functools.partial(safe_join, Path())
        active = m["active_partition"]
        if join(active) is None:
            yield from self.finding(
                p,
                ln,
                "/active_partition",
                R.PATH_ESCAPES,
                f"{active!r} is absolute or leaves transcript/; not followed",
            )
        prev_end: int | None = None
        for i, part in enumerate(m["partitions"]):
            ptr = f"/partitions/{i}"
            for key in ("file", "bloom_file"):
                rel = part.get(key)
                if rel is not None and join(rel) is None:
                    yield from self.finding(
                        p,
                        ln,
                        f"{ptr}/{key}",
                        R.PATH_ESCAPES,
                        f"{rel!r} is absolute or leaves transcript/; not followed",
                    )
            if part["file"] == active:
                yield from self.finding(
                    p,
                    ln,
                    f"{ptr}/file",
                    R.ACTIVE_ARCHIVED,
                    f"{active!r} is both the active partition and archived partition {i}",
                )
            start, end = part["start_ts"], part["end_ts"]
            if start > end:
                yield from self.finding(
                    p,
                    ln,
                    ptr,
                    R.PARTITION_ORDER,
                    f"start_ts {start} is after end_ts {end} (the clock went backwards?)",
                )
            if prev_end is not None and start < prev_end:
                yield from self.finding(
                    p,
                    ln,
                    f"{ptr}/start_ts",
                    R.PARTITION_ORDER,
                    f"starts at {start}, before the previous partition ends ({prev_end})",
                )
            prev_end = max(end, prev_end) if prev_end is not None else end
            want = f"partitions/{start}-{end}.jsonl"
            if part["file"] != want:
                yield from self.finding(
                    p,
                    ln,
                    f"{ptr}/file",
                    R.FILE_NAMES,
                    f"{part['file']!r} should be named {want!r} after its time range",
                )
            bloom, twin = part.get("bloom_file"), bloom_name(part["file"])
            if bloom is not None and bloom != twin:
                yield from self.finding(
                    p,
                    ln,
                    f"{ptr}/bloom_file",
                    R.FILE_NAMES,
                    f"{bloom!r} should be {twin!r}, the partition's file with a .bloom extension",
                )
        return m


def bloom_name(file: str) -> str:
    """The bloom file chibi writes for a partition file (Rust `Path::with_extension("bloom")`)."""
    try:
        return str(PurePosixPath(file).with_suffix(".bloom"))
    except ValueError:
        return file + ".bloom"


def _kind_by_name(path: Path) -> Kind:
    if path.suffix == ".bloom":
        return "bloom"
    if path.name == "inbox.jsonl":
        return "inbox"
    if path.name == "requests.jsonl":
        return "requests"
    if path.name == "context_meta.json":
        return "context_meta"
    return "manifest" if path.suffix == ".json" else "entries"


def _construct(e: dict[str, Any]) -> str:
    et = e.get("entry_type")
    if et in R.V09_TYPES or et in R.V010_TYPES:
        return f"entry type {et}"
    fields = [f"`{k}`" for k in R.V010_FIELDS if k in e]
    return f"{et} entry with {' and '.join(fields)}" if fields else f"entry type {et}"


class DirectoryCheck:
    """One context (or transcript/) directory, validated as a unit."""

    def __init__(self, run: ChibiRun, layout: Layout, stats: FileStats, progress: ProgressHook | None) -> None:
        self.checker = run
        self.layout = layout
        self.stats = stats
        self.progress = progress
        self.seq = Sequence(pairs=True)
        # what context.jsonl must hold after its anchor (CB212), kept as `Derived` digests
        # (not the entries: a transcript of 100,000 partitions is not held in memory), and
        # only when there is a context.jsonl to compare with
        self.derived: list[Derived] = []
        self.derives = layout.context_jsonl is not None
        self.anchor: Record | None = None
        self.derivable = True
        self.entries = 0
        self.prompt: Record | None = None  # the last system_prompt_changed entry

    def run(self) -> Iterator[Finding]:
        checker, layout = self.checker, self.layout
        manifest: dict[str, Any] | None = None
        mrec: Record | None = None
        if layout.has_manifest:
            records = yield from checker.records(read_document(layout.manifest), self.stats, None)
            for rec in records:
                mrec = rec
                manifest = yield from checker.manifest_rules(rec, layout)
            if manifest is None:
                self.derivable = False  # chibi cannot load this context at all
        parts: list[Part] = []
        if manifest is not None:
            for meta in manifest["partitions"]:
                parts.append(Part(meta["file"], layout.join(meta["file"])))
            active_rel = manifest["active_partition"]
        else:
            active_rel = (
                "context.jsonl"
                if not (layout.transcript / "active.jsonl").exists() and (layout.transcript / "context.jsonl").is_file()
                else "active.jsonl"
            )
        active = Part(active_rel, layout.join(active_rel))
        legacy = layout.legacy_transcript if manifest is None else None
        if legacy is not None:
            active = Part(f"../{legacy.name}", legacy)
            yield from checker.finding(
                str(legacy),
                None,
                "",
                R.LEGACY_LAYOUT,
                f"{legacy.name} is chibi's pre-partition transcript (before 0.5.1): read as the "
                "only partition; chibi moves it into transcript/ on next load",
            )
        archived = {p.rel for p in parts}
        for part in parts if active.rel in archived else [*parts, active]:  # CB306: read once
            yield from self.read_partition(part)
        yield from checker.finish_sequence(self.seq)
        if manifest is not None and mrec is not None:
            yield from self.manifest_vs_files(mrec, manifest, parts, active)
        listed = {p.rel for p in parts} | {active.rel}
        judged = manifest is not None or not layout.has_manifest  # else chibi cannot load it
        for rel in layout.partition_files if judged else []:
            if rel not in listed:
                why = (
                    "the manifest does not list it"
                    if manifest is not None
                    else "there is no manifest.json, so chibi reads only the active partition"
                )
                yield from checker.finding(
                    str(layout.transcript / rel),
                    None,
                    "",
                    R.PARTITION_ORPHAN,
                    f"{rel} is invisible to chibi: {why}",
                )
        yield from self.context_jsonl()
        yield from self.context_files()
        self.stats.extra.update(
            vocabulary=self.seq.vocabulary,
            context=layout.name,
            transcript_entries=self.entries,
            partitions=len(parts),
        )

    # -- transcript -------------------------------------------------------------------

    def read_partition(self, part: Part) -> Iterator[Finding]:
        if part.path is None:
            return
        checker = self.checker
        kind = irregular(part.path)
        if kind is not None:  # a folder, FIFO or device where a partition goes: named, never opened
            part.unreadable = True
            self.derivable = False  # what context.jsonl derives from is unknown: no CB2xx consequences
            yield from checker.finding(str(part.path), None, "", R.PARTITION_MISSING, f"{part.rel} is {kind}, not a regular file; not read")  # fmt: skip
            return
        if not part.path.is_file():
            return
        part.present = True
        for item in checker.read_lines(part.path):
            if isinstance(item, Finding):
                if item.severity == "error":
                    part.unreadable = True
                    self.derivable = False
                yield from checker.reader_finding(item)
                continue
            self.stats.records += 1
            if self.progress is not None and item.size:
                self.progress(item.size)
            part.records += 1
            self.entries += 1
            v = item.value
            if isinstance(v, dict):
                ts, content = v.get("timestamp"), v.get("content")
                if type(ts) is int:
                    part.timestamps.append(ts)
                part.lengths.append(content_bytes(content))
                if isinstance(content, str) and not part.has_term and has_certain_term(content):
                    part.has_term = True
                if not isinstance(content, str) or (not part.maybe_term and may_have_term(content)):
                    part.maybe_term = True
            yield from checker.check_entry(item, self.seq)
            et = v.get("entry_type") if isinstance(v, dict) else None
            if et == "system_prompt_changed":
                self.prompt = item
            if et in R.ANCHORS:
                self.anchor = item
                self.derived = []
            elif et != "system_prompt_changed" and self.derives:
                self.derived.append(Derived.of(item))

    def manifest_vs_files(self, mrec: Record, m: dict[str, Any], parts: list[Part], active: Part) -> Iterator[Finding]:
        checker = self.checker
        p, ln = mrec.path, mrec.line
        policy = m["rotation_policy"]
        bpt_seen: list[int] = []
        for i, (meta, part) in enumerate(zip(m["partitions"], parts, strict=True)):
            ptr = f"/partitions/{i}"
            if part.path is None or part.unreadable:
                continue  # CB310, a read error or a partition that is no file already reported
            if not part.present:
                yield from checker.finding(p, ln, f"{ptr}/file", R.PARTITION_MISSING, f"{part.rel} does not exist")
                continue
            if meta["entry_count"] != part.records:
                yield from checker.finding(
                    p,
                    ln,
                    f"{ptr}/entry_count",
                    R.PARTITION_COUNT,
                    f"entry_count {meta['entry_count']} but {part.rel} holds {part.records} entries",
                )
            if part.timestamps and len(part.timestamps) == part.records:
                first, last = part.timestamps[0], part.timestamps[-1]
                if (meta["start_ts"], meta["end_ts"]) != (first, last):
                    yield from checker.finding(
                        p,
                        ln,
                        ptr,
                        R.PARTITION_RANGE,
                        f"start_ts/end_ts {meta['start_ts']}-{meta['end_ts']} but {part.rel} runs {first}-{last}",
                    )
            bpt: int | None = None
            tc = meta.get("token_count")
            if tc is not None:
                found = bytes_per_token_range(part.lengths, tc)
                if found is None:
                    yield from checker.finding(
                        p,
                        ln,
                        f"{ptr}/token_count",
                        R.PARTITION_TOKENS,
                        f"token_count {tc}: no bytes_per_token turns {part.rel}'s contents "
                        "into that estimate "
                        "(default 3 gives "
                        f"{token_estimate(part.lengths, DEFAULT_BYTES_PER_TOKEN)})",
                    )
                else:
                    bpt = found[1]
                    bpt_seen.append(bpt)
            yield from self.rotation(p, ln, ptr, part, policy, bpt, archived=True)
            bloom = meta.get("bloom_file")
            if bloom is not None:
                bpath = self.layout.join(bloom)
                if bpath is None:
                    continue
                if not bpath.is_file():
                    yield from checker.finding(
                        p,
                        ln,
                        f"{ptr}/bloom_file",
                        R.BLOOM_MISSING,
                        f"{bloom} does not exist (chibi then scans the partition)",
                    )
                else:
                    yield from checker.bloom_file(bpath, self.stats, part)
        prev_end = m["partitions"][-1]["end_ts"] if m["partitions"] else None
        if active.rel in {x.rel for x in parts} or active.unreadable:
            return  # CB306 / a read error already says what is wrong
        if active.path is not None and active.path.is_file():
            if prev_end is not None and active.timestamps and active.timestamps[0] < prev_end:
                yield from checker.finding(
                    p,
                    ln,
                    "/active_partition",
                    R.PARTITION_ORDER,
                    f"{active.rel} starts at {active.timestamps[0]}, before the last "
                    f"archived partition ends ({prev_end})",
                )
            bpt = max(bpt_seen) if bpt_seen else None
            yield from self.rotation(p, ln, "/active_partition", active, policy, bpt, archived=False)
        elif active.path is not None:
            yield from checker.finding(
                p,
                ln,
                "/active_partition",
                R.ACTIVE_MISSING,
                f"{active.rel} does not exist (chibi creates it on the next append; "
                "expected only right after a rotation)",
            )

    def rotation(
        self,
        p: str,
        ln: int,
        ptr: str,
        part: Part,
        policy: dict[str, Any],
        bpt: int | None,
        *,
        archived: bool,
    ) -> Iterator[Finding]:
        """Thresholds chibi checks after every append (partition.rs needs_rotation).

        An archived partition rotated after its last append, so every prefix without
        its last entry was under every threshold; the active partition passed the check
        after its last append. Age is measured between entry timestamps (chibi uses the
        clock at append time, which an entry's own timestamp approximates from below).
        """
        n = len(part.timestamps) if len(part.timestamps) == part.records else None
        kept = part.lengths[:-1] if archived else part.lengths
        over: list[str] = []
        limit = policy["max_entries"]
        if (archived and part.records > limit) or (not archived and part.records >= limit):
            over.append(f"{part.records} entries (max_entries {limit})")
        max_tokens = policy.get("max_tokens")
        if max_tokens is not None and (bpt is not None or not archived):
            b = bpt if bpt is not None else DEFAULT_BYTES_PER_TOKEN
            est = token_estimate(kept, b)
            if est >= max_tokens:
                what = "before its last entry" if archived else "in all"
                over.append(f"~{est} tokens {what} at {b} bytes/token (max_tokens {max_tokens})")
        if n:
            ts = part.timestamps[:-1] if archived else part.timestamps
            if ts and ts[-1] - ts[0] >= policy["max_age_seconds"]:
                over.append(f"{ts[-1] - ts[0]} s between entries (max_age_seconds {policy['max_age_seconds']})")
        if over:
            when = "should have rotated before its last entry" if archived else "should have rotated already"
            yield from self.checker.finding(p, ln, ptr, R.ROTATION, f"{part.rel} {when}: {'; '.join(over)}")

    # -- context.jsonl and the other files --------------------------------------------------

    def context_jsonl(self) -> Iterator[Finding]:
        """context.jsonl, read line by line (nothing of it is held but the entry compared):
        its entries' own rules, then CB212 (the derivation of the transcript) unless chibi
        marked it stale, a partition could not be read, or the file itself has a read error."""
        path = self.layout.context_jsonl
        if path is None:
            return
        checker = self.checker
        bad = [False]
        # chibi marks a context whose context.jsonl it will rebuild (after a rolling
        # compaction it writes the anchor to the transcript only) with `<context>/.dirty`
        stale = (self.layout.root / ".dirty").exists()
        compare = Derivation(self)
        for item in checker.read_lines(path):
            if isinstance(item, Finding):
                bad[0] = bad[0] or item.severity == "error"
                yield from checker.reader_finding(item)
                continue
            rec, i = item, compare.seen
            self.stats.records += 1
            if self.progress is not None and rec.size:
                self.progress(rec.size)
            valid = yield from checker.check_entry_schema(rec)
            yield from checker.context_structure(rec, i == 0, valid, stale)
            meta = rec.value.get("metadata") if valid else None
            if isinstance(meta, dict) and "transcript_anchor_id" in meta and rec.value["entry_type"] not in R.ANCHORS:
                yield from checker.finding(
                    rec.path,
                    rec.line,
                    "/metadata/transcript_anchor_id",
                    R.ANCHOR_REF_PLACEMENT,
                    f"transcript_anchor_id on a {rec.value['entry_type']} entry; it belongs to context.jsonl's anchor only",
                )
            compare.entry(i, rec)
        if stale:
            yield from checker.finding(
                str(path),
                None,
                "",
                R.CONTEXT_STALE,
                f"{self.layout.root / '.dirty'} marks context.jsonl stale: chibi rebuilds it from the transcript "
                "on next load, so it is not compared with its derivation",
            )
            return
        if not self.derivable or bad[0] or compare.seen == 0 or not self.layout.has_transcript:
            return  # without a transcript (none written yet, or not copied) there is nothing to derive from
        found = compare.found or compare.ended()
        if found is not None:
            where, line, pointer, message = found
            yield from checker.finding(where, line, pointer, R.CONTEXT_DERIVATION, message)

    def context_files(self) -> Iterator[Finding]:
        checker, layout = self.checker, self.layout
        inbox = layout.context_file("inbox.jsonl")
        if inbox is not None:
            yield from checker.inbox_file(inbox, self.stats, self.progress)
        meta = layout.context_file("context_meta.json")
        if meta is not None:
            yield from checker.meta_file(meta, self.stats, self.progress)
        requests = layout.context_file("requests.jsonl")
        if requests is not None:
            yield from checker.requests_file(requests, self.stats, self.progress)
        prompt = layout.context_file("system_prompt.md")
        if prompt is not None and self.entries and checker.on["CB215"]:
            yield from self.system_prompt(prompt)

    def system_prompt(self, path: Path) -> Iterator[Finding]:
        """CB215: the prompt chibi injects next is system_prompt.md (TF §Context
        Rebuilding); the transcript records each prompt in a system_prompt_changed entry.
        Compared without surrounding whitespace (an editor's final newline)."""
        text, why = read_prompt(path, self.checker.options.max_line_bytes)
        last = self.prompt
        recorded = last.value.get("content") if last is not None and isinstance(last.value, dict) else None
        if text is not None and isinstance(recorded, str) and text.strip() == recorded.strip():
            return
        if text is None:
            what = f"cannot be compared: {why}"
        elif last is None:
            what = "is not recorded: the transcript has no system_prompt_changed entry"
        else:
            what = f"differs from the last system_prompt_changed ({last.path}:{last.line})"
        yield from self.checker.finding(
            str(path),
            1,
            "",
            R.PROMPT_NOT_RECORDED,
            f"system_prompt.md, the prompt chibi injects next, {what}; the transcript does not hold it",
        )


@dataclass(frozen=True)
class Derived:
    """A transcript entry context.jsonl must repeat (CB212), without the entry itself:
    where it is, its id, and a digest of its JSON value (keys sorted), so the two compare
    as JSON values (`1` and `1.0`, `true` and `1` differ, as their texts do)."""

    path: str
    line: int
    id: str
    digest: bytes

    @staticmethod
    def of(rec: Record) -> Derived:
        v = rec.value
        eid = v.get("id") if isinstance(v, dict) else None
        return Derived(rec.path, rec.line, eid if isinstance(eid, str) else "?", _digest(v))

    def value(self) -> Any:
        """The entry, read again from its file (once, for the finding that names it)."""
        for item in read_jsonl(self.path):
            if isinstance(item, Record) and item.line == self.line:
                return item.value
        return None


def _digest(value: Any) -> bytes:
    """The same for equal JSON values whatever their key order (the entries' own JSON)."""
    try:
        data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # an integer past 64 bits
        data = json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


Found = tuple[str, int | None, str, str]  # path, line, pointer, message


class Derivation:
    """CB212, one context.jsonl entry at a time: context.jsonl = [the transcript's last
    anchor] + the entries after it without system_prompt_changed (TF §Context Rebuilding).
    `found` is the first difference (the rule reports one); `ended()` what the file lacks."""

    def __init__(self, check: DirectoryCheck) -> None:
        self.anchor = check.anchor
        self.want = check.derived
        self.seen = 0
        self.last: tuple[str, int] | None = None
        self.extra: tuple[str, int] | None = None  # the first entry past the transcript's
        self.found: Found | None = None

    def entry(self, i: int, rec: Record) -> None:
        self.seen, self.last = i + 1, (rec.path, rec.line)
        if self.found is None:
            self.found = self._head(rec) if i == 0 else self._at(i, rec)

    def _head(self, rec: Record) -> Found | None:
        head = rec.value
        if self.anchor is None:
            if isinstance(head, dict) and head.get("entry_type") == "context_created":
                return None
            msg = "the transcript has no anchor, so chibi starts context.jsonl with a new context_created anchor"
            return rec.path, rec.line, "", msg
        if _same_anchor(head, self.anchor.value):
            return None
        a = self.anchor
        msg = (
            f"entry 0 is not the transcript's last anchor ({a.value.get('entry_type')} "
            f"{a.value.get('id')} at {a.path}:{a.line})"
        )
        return rec.path, rec.line, "", msg

    def _at(self, i: int, rec: Record) -> Found | None:
        if i > len(self.want):
            self.extra = self.extra or (rec.path, rec.line)
            return None  # counted by `ended`
        src = self.want[i - 1]
        if _digest(rec.value) == src.digest:
            return None
        return (
            rec.path,
            rec.line,
            _diff_pointer(rec.value, src.value()),
            f"differs from transcript entry {src.id} at {src.path}:{src.line}",
        )

    def ended(self) -> Found | None:
        """After the last entry: entries missing from context.jsonl, or more than the transcript's."""
        assert self.last is not None
        n, want = self.seen, len(self.want) + 1
        if n < want:
            src = self.want[n - 1]
            msg = (
                f"context.jsonl ends after {n} entries; the transcript continues with {src.id} at "
                f"{src.path}:{src.line} ({want - n} missing)"
            )
            return self.last[0], self.last[1], "", msg
        if self.extra is not None:
            msg = f"context.jsonl has {n - want} entries more than the transcript after its last anchor"
            return self.extra[0], self.extra[1], "", msg
        return None


def read_prompt(path: Path, limit: int) -> tuple[str | None, str]:
    """The text of a system_prompt.md, or None and why not (larger than `limit`, not UTF-8)."""
    with path.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        return None, f"larger than {limit} bytes"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as u:
        return None, f"not UTF-8 (byte {u.start})"


def _same_anchor(ctx: Any, anchor: dict[str, Any]) -> bool:
    """context.jsonl's entry 0 is the anchor itself, or a copy naming it (transcript_anchor_id)."""
    if ctx == anchor:
        return True
    if not isinstance(ctx, dict):
        return False
    ref = (ctx.get("metadata") or {}).get("transcript_anchor_id")
    same = all(ctx.get(k) == anchor.get(k) for k in ("entry_type", "from", "to", "content"))
    summary = (ctx.get("metadata") or {}).get("summary") == (anchor.get("metadata") or {}).get("summary")
    return bool(ref == anchor.get("id") and same and summary)


def _diff_pointer(a: Any, b: Any) -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(a.keys() | b.keys()):
            if a.get(k) != b.get(k) or (k in a) != (k in b):
                return "/" + pointers.token(k)
    return ""


__all__ = ["ChibiRun", "bloom_name", "bytes_per_token_range", "token_estimate", "vocabulary_of"]
