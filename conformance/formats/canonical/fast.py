"""The fast path of `turnspec validate` on canonical JSON Lines: same findings, fewer steps.

A line the fast path *clears* is one on which the exact path (strict parse, duplicate-key
proof, jsonschema-rs, every one-message rule, every session rule) would report nothing;
for such a line the fast path only updates the session state the way the exact path
does. Any line it cannot clear goes through the exact path (`CanonicalRun.check_message`
on the record `LineFraming.parse` makes), so findings, their order and the reports are
those of the exact path, byte for byte (tests/test_fast_path.py checks this
differentially, with the python-jsonschema oracle as a third opinion).

Clearing a line takes:

1. a strict typed decode into msgspec Structs generated from the schemas
   (`fastmodel.py`: closed objects, known blocks only, plain decimal costs), which
   proves the schema (TS020) and the forward-compatibility warnings (TS010, TS011) silent;
   the strings no rule reads (`OPAQUE`: the text of text blocks, ...) decode as raw JSON
   bytes, neither decoded nor re-encoded, and `OpaqueCheck` proves per batch that they
   are strings in UTF-8 (on text-heavy lines this halves the cost of steps 1 and 2);
2. proof that the line has no duplicate key and no framing finding: the decoded batch
   re-encoded gives back the input bytes exactly (equal bytes also prove no CRLF, BOM,
   blank line or second value on a line); a line whose bytes differ falls back to the
   colon count of `jsonio.parse` (every `:` of the input is a key separator or a string
   character, both written back one for one unless keys were lost);
3. the one-message rules: per batch, one tight loop (`_columns`) clears the messages on
   which no rule can report and the tool id and name formats are checked with one
   regex each; anything out of the ordinary (a partial message, a missing field, a
   mismatch) goes to `_local`, one predicate per enabled rule, each the negation of the
   rule's condition, on the Struct;
4. the session rules' preconditions against the run state, after which the state takes
   the messages (`engine.commit_message`, `engine.commit_tool_block`): per batch, what
   the rules would check within the batch (`order`: one run per session, unique ids,
   ids and times in order; `pair_tools`: the tool results answering calls of the
   batch) and then the batch against the run state (`_bulk`: ids not seen before,
   each session's first message after its last, call ids new, the other results'
   calls open); a batch that fails goes message by message (`session`).

Blocks are 256 KiB: the per-batch work then weighs little. A block the proof fails on
is located in 64 KiB pieces, and the next blocks are read that small for a while
(`block_bytes`): each failing line located costs a decode of the lines after it.

The local steps (1-3, `order` and `pair_tools`: `local_block`, on one block of
`read_blocks`) read no run state and turn each line into a `Step`: a framing finding,
cleared messages (a `Batch`, or a `SessionItem`), or a line for the exact path. The session step (`settle`)
takes them in input order. The sequential path runs both per block; `--jobs` and Ray
workers run the local steps on their byte range (`parallel/chunks.py`) and the parent
runs the session step. When `session` refuses an item (a session rule may report; it
commits nothing then), the exact session phase `CanonicalRun.session` takes the item's
facts (`item_facts`): a cleared line's local findings are provably none, so that is all
`check_message` would add.

The fast path serves a run only when it knows every enabled rule (`FastPath.covers`); a
rule registered later without a predicate here turns it off rather than go unchecked.
"""

from __future__ import annotations

import binascii
import gc
import operator
import re
import typing
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from itertools import accumulate, chain, compress
from operator import itemgetter, le, lt, ne
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import msgspec

from ...core.findings import Finding
from ...core.jsonio import LineFraming, Record, open_input, skip_rest_of_line
from . import rules as R
from .engine import FAMILIES, Context, Driver, RunState, Session, SessionFacts, commit_message, commit_tool_block
from .fastmodel import RAW_SHAPES, RawModel, message_model, raw_model
from .invariants import CANONICAL_TIME, EMAIL, file_ref_problem, parse_created_at, url_ok
from .pricing import USAGE_BUCKETS
from .tools import SNAKE_NAME

if TYPE_CHECKING:
    from ..base import FileStats, Options, ProgressHook


class Run(typing.Protocol):
    """What the fast path reads of its run (`checker.CanonicalRun`): its options, schema
    revisions, driver, context and state, and its exact path for what it cannot clear.
    Declared here, not imported, so the fast path sits below the run that builds it."""

    options: Options
    revision: dict[int, str]
    latest: int
    driver: Driver
    ctx: Context
    state: RunState
    track_ids: bool

    def session(self, facts: SessionFacts) -> list[Finding]: ...

    def check_message(self, rec: Record) -> list[Finding]: ...

    def check_tool_definition(self, rec: Record) -> Iterator[Finding]: ...


_UNSET = msgspec.UNSET
BLOCK_BYTES = 1 << 18  # bytes read at a time: their whole lines are decoded, re-encoded and compared as one batch
SETTLE_STEPS = 512  # steps of a block settled at a time (`validate_jsonl`): bounds the findings held
PIECE_BYTES = 1 << 16  # a block the batch proof fails on is located in pieces of this size (`local_block`)

# every rule the fast path can prove silent (a predicate in `_local` or `session`)
COVERED: frozenset[str] = frozenset(
    r.id
    for r in (
        R.UNKNOWN_METADATA, R.UNKNOWN_BLOCK, R.UNKNOWN_VERSION, R.SCHEMA,
        R.EMPTY_CONTENT, R.ROLE_CONTENT, R.TOOL_ONE_BLOCK, R.ASSISTANT_MODEL, R.ASSISTANT_ROUTING,
        R.ASSISTANT_USAGE, R.ROUTING_MODEL, R.MODEL_ID, R.MODEL_PROVIDER, R.TOOL_PARENT, R.TOOL_PARENT_MATCH,
        R.TOOL_ID_FORMAT, R.IMAGE_MEDIA_TYPE, R.FILE_REF_PATH, R.CREATED_AT_REAL, R.BASE64_DATA,
        R.CREATED_AT_ENCODING, R.COST_ENCODING, R.CANCELLED_STATUS, R.URL_DATA, R.ID_EMAIL,
        R.MESSAGE_ULID, R.MESSAGE_UNIQUE, R.MESSAGE_MONOTONIC, R.CREATED_MONOTONIC, R.RESULT_UNPAIRED,
        R.RESULT_DUPLICATE, R.TOOL_ID_REPEATED, R.TOOL_UNANSWERED,
        R.TOOL_NAME, R.TOOL_NAME_UNIQUE, R.TOOL_SCHEMA_SUBSET, R.TOOL_UNKNOWN, R.TOOL_INPUT, R.TOOL_USE_NAME,
        R.COST_MISMATCH, R.PRICING_VERSION, R.PRICING_MODEL, R.PRICING_BUCKET,
    )
)  # fmt: skip


# the rules whose predicates `_local`, `_block_ok` and `_priced` evaluate (`on[...]` there);
# tests/test_fast_path.py checks the list against their source
LOCAL_RULES: tuple[str, ...] = (
    "TS101", "TS102", "TS103", "TS104", "TS105", "TS106", "TS107", "TS109", "TS110", "TS111", "TS112",
    "TS113", "TS114", "TS115", "TS116", "TS119", "TS120", "TS121", "TS304", "TS305", "TS306", "TS401", "TS402", "TS403", "TS404",
)  # fmt: skip


# the string fields no rule reads, only their type (a string): the batch proof decodes
# them as raw JSON bytes (`fastmodel.raw_model`) and `OpaqueCheck` proves the type and
# the UTF-8 per batch; a rule that comes to read one of them must leave this list
OPAQUE: frozenset[str] = frozenset({"TextBlock.text", "ThinkingBlock.text", "RedactedThinkingBlock.data"})


@dataclass(slots=True)
class SessionItem:
    """What the session phase reads of one cleared message (the per-record view)."""

    line: int
    id: str
    session_id: str
    created_at: str
    at: Any  # the parsed created_at (a datetime)
    complete: bool
    tools: list[tuple[int, bool, str]]  # (block index, is a tool_use, tool id) in block order
    size: int = 0  # bytes of the line, newline included (the record's size)


@dataclass(slots=True)
class Cleared:
    """Consecutive lines the fast path cleared in a run with no session rule: the session
    step has nothing to check or remember of them, only to count them."""

    count: int
    size: int  # their bytes, newlines included


@dataclass(slots=True)
class Batch:
    """Consecutive cleared *complete* messages, lines `first` to `first + len(ids) - 1`,
    column by column: the session step checks and commits them together (`session_batch`)
    where one message at a time (`SessionItem`) would cost a Python object and a call each.

    What the session rules would check *within* the batch is checked by the local step
    (`order`), so `--jobs` workers do it and the parent only meets the batch with the
    run state: `cuts` are the indices where a session's run of messages begins, and
    `ordered` says each session has one run, no id repeats, and within a run ids
    increase and `created_at` does not go back."""

    first: int
    ids: list[str]
    sids: list[str]
    created: Sequence[str]  # a list, or strings of one width joined (`parallel.chunks.Joined`)
    ats: list[Any] | None  # the parsed created_at of each (None: parse when needed; no message is unreal)
    tools: Mapping[int, list[tuple[int, bool, str]]]  # index in the batch -> its tool blocks (those with some)
    size: int  # their bytes, newlines included
    cuts: list[int]
    ordered: bool
    pairs: Pairs | None = None  # the tool blocks paired within the batch (`pair_tools`; None: irregular)

    def at(self, k: int) -> Any:
        """The parsed `created_at` of message `k`."""
        return self.ats[k] if self.ats is not None else parse_created_at(self.created[k])

    def item(self, k: int) -> SessionItem:
        """Message `k` of the batch as a `SessionItem` (its size is counted with the batch)."""
        return SessionItem(
            self.first + k, self.ids[k], self.sids[k], self.created[k], self.at(k), True, self.tools.get(k, [])
        )


@dataclass(slots=True)
class Pairs:
    """The tool blocks of a `Batch` as the tool rules (TS205-TS207) would meet them one
    message at a time, worked out within the batch by the local step (`pair_tools`), so
    the session step only meets them with the run state (`FastPath._pairs_ok`) and
    commits them column-wise: a result answering a call of the same batch needs nothing
    of the run state but that the call's id is new."""

    uses: list[str]  # every tool_use id, in order
    use_at: list[int]  # the batch index of each one's message
    outside: list[tuple[int, str]]  # (batch index, tool id): results answering a call before the batch
    inside: dict[str, list[str]]  # session id -> tool ids of the calls answered within the batch
    still_open: list[tuple[int, int, str]]  # (batch index, block index, tool id): calls left unanswered


def pair_tools(tools: dict[int, list[tuple[int, bool, str]]], sids: list[str]) -> Pairs | None:
    """The `Pairs` of a batch's tool blocks (`Batch.tools`, in message order), or None when
    they are irregular within the batch (a call id twice, a result twice, a result for a
    call of another session): the session step then goes message by message. Results
    not answering a call of the batch are `outside`: the session step finds their calls
    open in the run state, or goes message by message."""
    uses: list[str] = []
    use_at: list[int] = []
    outside: list[tuple[int, str]] = []
    inside: dict[str, list[str]] = {}
    open_at: dict[str, tuple[int, int]] = {}  # call id -> (batch index, block index), unanswered so far
    called: set[str] = set()
    answered: set[str] = set()
    # blocks of one message meet the rules in order too (the exact session phase commits
    # each before the next): a call and its result in one message pair as in two
    for j, blocks in tools.items():
        for i, use, tid in blocks:
            if use:
                if tid in called:
                    return None
                called.add(tid)
                open_at[tid] = (j, i)
                uses.append(tid)
                use_at.append(j)
                continue
            if tid in answered:
                return None  # a second result (so no result finds its call of this batch answered)
            answered.add(tid)
            at = open_at.pop(tid, None)
            if at is None:
                outside.append((j, tid))
            elif sids[at[0]] != sids[j]:
                return None  # a call of another session: not open in this one
            else:
                got = inside.get(sids[j])
                if got is None:
                    inside[sids[j]] = [tid]
                else:
                    got.append(tid)
    still_open = [(j, i, tid) for tid, (j, i) in open_at.items()]
    return Pairs(uses, use_at, outside, inside, still_open)


def order(ids: list[str], sids: list[str], ats: list[Any]) -> tuple[list[int], bool]:
    """`Batch.cuts` and `Batch.ordered` of these columns (none of `ats` is None)."""
    n = len(ids)
    cuts = list(compress(range(1, n), map(ne, sids, sids[1:])))
    if cuts and len(set(sids)) != len(cuts) + 1:
        return cuts, False  # a session in two runs
    if len(set(ids)) != n:
        return cuts, False
    if not all(map(lt, ids, ids[1:])) or not all(map(le, ats, ats[1:])):
        at_cut = set(cuts)  # a step back is allowed only where a session's run begins
        for j in range(1, n):
            if j not in at_cut and not (ids[j - 1] < ids[j] and ats[j - 1] <= ats[j]):
                return cuts, False
    return cuts, True


Step = Finding | SessionItem | Cleared | Batch | tuple[int, bytes, bytes]
"""What the local steps make of lines: a framing finding (not yet through the driver),
cleared messages (a `Batch` of consecutive complete ones, a `SessionItem` for one
alone, or, with no session rule, a `Cleared` run of lines), or
`(line, raw, data)`: a framed line the fast path could not clear, for the exact path."""


def item_facts(path: str, item: SessionItem) -> SessionFacts:
    """The exact session phase's view of a cleared message (what `facts_of` makes of it)."""
    tools: list[tuple[int, dict[str, str]]] = [
        (i, {"type": "tool_use", "id": tid} if use else {"type": "tool_result", "tool_use_id": tid})
        for i, use, tid in item.tools
    ]
    msg = {"id": item.id, "session_id": item.session_id, "created_at": item.created_at}
    return SessionFacts(Record(path, item.line, "", None, 0), msg, item.complete, tools)


def read_blocks(f: IO[bytes], max_line: int, block_bytes: Callable[[], int] | None = None) -> Iterator[bytes | None]:
    """The whole lines of `f` in blocks of about `BLOCK_BYTES`, or of what `block_bytes`
    says before each read (the last line of the input may lack its newline), or None for
    a line longer than `max_line`, skipped as `read_jsonl` skips it; no more than
    `max_line` plus one block is ever held. Lines are not counted here
    (`FastPath.local_block` says how many a block held: the batch proof learns it for
    free, and counting newlines costs a third of the reading)."""
    buf = b""
    while True:
        # a line inside one read is never too long
        size = max(1, min(BLOCK_BYTES if block_bytes is None else block_bytes(), max_line))
        chunk = f.read(size)
        if not chunk:
            break
        cut = chunk.rfind(b"\n")
        if cut < 0:
            buf = buf + chunk if buf else chunk
            if len(buf) > max_line:  # a line longer than the limit, not held
                skip_rest_of_line(f)
                buf = b""
                yield None
            continue
        # the block is the held start of its first line and the read up to its last
        # newline, copied once (a view of the read, joined)
        if cut + 1 == len(chunk):
            block = buf + chunk if buf else chunk
            buf = b""
        else:
            block = b"".join((buf, memoryview(chunk)[: cut + 1]))
            buf = chunk[cut + 1 :]
        head = block.find(b"\n")
        if head > max_line:  # the first line began in an earlier read and is too long
            block = block[head + 1 :]
            yield None
            if not block:
                continue
        yield block
    if buf:  # the last line, with no newline
        yield buf


def _b64_ok(data: str) -> bool:
    try:
        binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError):
        return False
    return True


class FastPath:
    """The fast path of one `CanonicalRun` (its state, context and driver are the run's)."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.cleared = 0  # messages cleared so far (the rest took the exact path)
        self._decoded: list[Any] = []  # the Structs of the batch `_first_bad` just proved (or decoded)
        self._again = b""  # their re-encoding, when it differs from the input (`_mixed`)
        self.cold = 0  # blocks in a row of this file or range in which nothing was cleared
        self.dirty = 0  # blocks still to read small (`PIECE_BYTES`) after one the proof failed on
        self._locates = _LOCATES  # bad lines still to locate in the current block
        self._providers: dict[str, str] = {}  # model id -> its provider part (`_provider_of`)
        rev = run.revision[run.latest]
        # the opaque strings decode as raw JSON where the model allows it (`OpaqueCheck`)
        raw = raw_model(rev, OPAQUE)
        self.model = message_model(rev) if raw is None else raw.model
        self.opaque = None if raw is None else OpaqueCheck(raw)
        self.decoder = msgspec.json.Decoder(self.model.message)
        self.encoder = msgspec.json.Encoder()
        d: Driver = run.driver
        on = d.enabled
        self.on = {rid: on(rid) for rid in COVERED}
        self.session_rules = bool(d.session or d.session_block or d.finish)
        # with no session rule, no one-message rule and no price table (`--select TS0`, ...)
        # a cleared line needs only its string formats and the depth of its open fields
        self.lean = not self.session_rules and run.ctx.prices is None and not any(self.on[r] for r in LOCAL_RULES)
        ctx = run.ctx
        self.re_ulid = ctx.re_ulid.match
        self.re_tool_id = ctx.re_tool_id.match
        self.re_model = ctx.re_model.match
        self.toolset = ctx.toolset
        self.prices = ctx.prices
        self.cls = _block_classes(self.model.message)
        meta_fields = typing.get_type_hints(self.model.message)["metadata"].__struct_fields__
        self._stop = operator.attrgetter("stop_reason") if "stop_reason" in meta_fields else None
        # string formats checked per batch: the schema's lifted patterns (always), and the
        # formats of the enabled rules on fields every message has
        self.checks: list[tuple[tuple[str, ...], BatchPattern]] = [
            (path, BatchPattern(regex)) for path, regex in self.model.formats
        ]
        if self.session_rules and self.on[R.MESSAGE_ULID.id]:
            self.checks.append((("id",), BatchPattern(ctx.re_ulid)))
        canonical_time = BatchPattern(CANONICAL_TIME) if self.on[R.CREATED_AT_ENCODING.id] else None
        if canonical_time is not None:
            self.checks.append((("created_at",), canonical_time))
        if self.on[R.MODEL_ID.id] or self.on[R.MODEL_PROVIDER.id]:
            self.checks.append((("metadata", "model"), BatchPattern(ctx.re_model)))
        self.always = frozenset(
            path
            for path in {p for p, _ in self.checks} | {("id",), ("session_id",), ("created_at",), ("metadata",)}
            if _always_set(self.model.message, path)
        )
        # the checks of `created_at` that its canonical shape proves, alone (`by_shape`) or
        # with every value a real date and time (`by_real_shape`: `_RFC3339_UTC`)
        rfc3339 = [p for path, p in self.checks if path == ("created_at",) and p.pattern == _RFC3339_UTC]
        self.by_shape: frozenset[BatchPattern] = frozenset(x for x in [canonical_time] if x is not None)
        self.by_real_shape = self.by_shape | frozenset(rfc3339)
        classes = _fixed_classes(_TIME_SHAPE)
        self.time_shape = FixedWidth(classes) if classes is not None and self.by_real_shape else None
        # the tool blocks' formats, checked per batch too (`_columns`)
        self.tool_id_pattern = BatchPattern(ctx.re_tool_id) if self.on["TS112"] else None
        self.tool_name_pattern = BatchPattern(SNAKE_NAME) if self.on["TS306"] else None

    @staticmethod
    def covers(driver: Driver, revision: str) -> bool:
        """True when every enabled rule of the run is one the fast path can prove silent,
        every field of arbitrary JSON is one whose depth it checks (`OPEN_FIELDS`), and
        every role is one whose blocks it knows (`rules.ALLOWED_BLOCKS`)."""
        enabled = {info.id for fam in FAMILIES for info, _, _ in fam.rules if driver.enabled(info.id)}
        model = message_model(revision)
        roles = set(typing.get_args(typing.get_type_hints(model.message)["role"]))
        return enabled <= COVERED and model.open_fields <= OPEN_FIELDS and roles <= R.ALLOWED_BLOCKS.keys()

    # -- reading ------------------------------------------------------------------------

    def validate_jsonl(self, path: Path, stats: FileStats, progress: ProgressHook | None) -> Iterator[Finding]:
        """The findings of one JSON Lines file: per block of whole lines, the local steps
        (`local_block`), then the session step in input order (`settle`)."""
        max_line = self.run.options.max_line_bytes
        framing = LineFraming(str(path))
        f = open_input(path)
        self.cold = self.dirty = 0
        try:
            line = 1
            for block in read_blocks(f, max_line, self.block_bytes):
                # a block allocates many small containers and no cycles: the collector
                # would only walk them, so it waits until the block is done
                gc_on = gc.isenabled()
                gc.disable()
                try:
                    steps, n = self.local_block(framing, line, block)
                finally:
                    if gc_on:
                        gc.enable()
                line += n
                # settled (and yielded) a few steps at a time: a block of lines that each
                # carry findings (100,000 lines of `{}` are 700,000) never holds them all
                for at in range(0, len(steps), SETTLE_STEPS):
                    gc.disable()
                    try:
                        found = self.settle(framing, steps[at : at + SETTLE_STEPS], stats, progress)
                    finally:
                        if gc_on:
                            gc.enable()
                    yield from found
        finally:
            f.close()

    def block_bytes(self) -> int:
        """The size of the next read (`read_blocks`): `BLOCK_BYTES`, or `PIECE_BYTES`
        while a recent block held a line the proof failed on."""
        return _piece_bytes() if self.dirty else BLOCK_BYTES

    def local_block(self, framing: LineFraming, first: int, block: bytes | None) -> tuple[list[Step], int]:
        """The local steps (batch proof, string formats, one-message rules) on one block of
        `read_blocks`, its first line numbered `first`, and how many lines it held: they
        read no run state, so any process may run them."""
        if block is None:
            return [framing.too_long_finding(first, self.run.options.max_line_bytes)], 1
        if not block.endswith(b"\n"):
            return self._lines(framing, first, [block]), 1
        if self.cold >= _COLD and self.cold % _PROBE:
            # the last blocks cleared nothing (every line carries a finding, say an
            # unknown field): trying to prove lines would only add work, so these go
            # to the exact path; every `_PROBE`th block tries again
            self.cold += 1
            return self._exact_lines(framing, first, block), block.count(b"\n")
        self._locates = _LOCATES
        bad = self._first_bad(block)
        if bad is None:  # the common case: the whole block proven at once
            if self.dirty:
                self.dirty -= 1
            n = len(self._decoded)  # equal bytes: one value per line
            steps = self._proven(first, block)
        elif bad == _DIFFERS:
            n = len(self._decoded)
            steps = self._mixed(framing, first, block)
        else:
            # some line breaks the proof: each one located costs a decode of the lines
            # after it, so the block is located in pieces (a large block proves fast
            # when whole, a small piece locates fast when not), and the next blocks
            # are read that small until `_DIRTY` in a row prove whole
            self.dirty = _DIRTY
            n = block.count(b"\n")
            steps = []
            at = first
            for piece in _pieces(block, _piece_bytes()):
                k = piece.count(b"\n") if len(piece) < len(block) else n
                self._locates = _LOCATES
                steps += self._block(framing, at, piece, k)
                at += k
        self.cold = 0 if any(type(x) in _CLEARED for x in steps) else self.cold + 1
        return steps, n

    def _exact_lines(self, framing: LineFraming, first: int, block: bytes) -> list[Step]:
        """The lines of `block` (each ending in a newline) framed, each for the exact path."""
        return self._lines(framing, first, _whole_lines(block), exact=True)

    def settle(
        self, framing: LineFraming, steps: list[Step], stats: FileStats, progress: ProgressHook | None
    ) -> list[Finding]:
        """The session step over the local steps of a block, in input order: a cleared
        message commits (`session`) or, when a session rule may report on it, takes the
        exact session phase (its local findings are provably none); a line not cleared
        takes the exact path whole; a framing finding goes through the driver."""
        out: list[Finding] = []
        name = framing.name
        for s in steps:
            if type(s) is SessionItem:
                stats.records += 1
                if progress is not None:
                    progress(s.size)
                if self.session(name, s):
                    self.cleared += 1
                else:
                    out.extend(self.run.session(item_facts(name, s)))
            elif type(s) is Batch:
                stats.records += len(s.ids)
                if progress is not None:
                    progress(s.size)
                out.extend(self.session_batch(name, s))
            elif type(s) is Cleared:
                stats.records += s.count
                self.cleared += s.count
                if progress is not None:
                    progress(s.size)
            elif type(s) is tuple:
                line_no, raw, data = s
                self._exact(framing, line_no, raw, data, out, stats, progress)
            else:
                assert isinstance(s, Finding)
                out.extend(self._passthrough(s))
        return out

    def _passthrough(self, finding: Finding) -> list[Finding]:
        d = self.run.driver
        d.passthrough(finding, R.CATALOG[finding.rule])
        return d.drain()

    def _block(self, framing: LineFraming, first: int, block: bytes, n: int) -> list[Step]:
        """`n` whole lines (each ending in a newline), the first of them line `first`.
        When the batch proof fails, the first line that fails it is located (msgspec names
        the line or the byte; the re-encoding differs from a byte on): the lines before it
        are a batch again, it goes alone, and the lines after it are the next block."""
        out: list[Step] = []
        while n:
            bad = self._first_bad(block) if self._locates else -1
            if bad is None:
                out.extend(self._proven(first, block))
                return out
            if bad == _DIFFERS:
                out.extend(self._mixed(framing, first, block))
                return out
            if bad < 0:  # not located (or many bad lines in this block): line by line
                out.extend(self._lines(framing, first, _whole_lines(block)))
                return out
            self._locates -= 1
            lines = block.split(b"\n")
            if bad:
                out.extend(self._block(framing, first, b"\n".join(lines[:bad]) + b"\n", bad))
            out.extend(self._lines(framing, first + bad, [lines[bad] + b"\n"]))
            first, n = first + bad + 1, n - bad - 1
            block = b"\n".join(lines[bad + 1 : -1]) + b"\n" if n else b""
        return out

    def _first_bad(self, block: bytes) -> int | None:
        """None when the batch proof holds for the lines of `block` (each ending in a
        newline), else the index of the first line that breaks it (-1 when it cannot be
        told, or when a raw value is not a string: line by line, `_decode_one`, finds it)."""
        msgs = _decode_block(self.decoder, block)
        if isinstance(msgs, int):
            return msgs
        try:
            again = self.encoder.encode_lines(msgs)
        except _UNREADABLE:
            return -1
        if self.opaque is not None and not self.opaque.ok(msgs):
            return -1
        if again == block:  # so `block` holds one line per message, each its own encoding
            self._decoded = msgs
            return None
        n = block.count(b"\n")
        if len(msgs) == n:  # every line decoded: `_mixed` proves them one by one
            self._decoded, self._again = msgs, again
            return _DIFFERS
        # the first differing byte, by halving (slice comparisons run in C)
        lo, hi = 0, min(len(again), len(block))
        while lo < hi:
            mid = (lo + hi) // 2
            if again[lo : mid + 1] == block[lo : mid + 1]:
                lo = mid + 1
            else:
                hi = mid
        return min(block.count(b"\n", 0, lo), n - 1)

    def _mixed(self, framing: LineFraming, first: int, block: bytes) -> list[Step]:
        """Lines that all decoded but whose re-encoding differs from the input somewhere
        (spaces after separators, another key order, escapes: JSON written by other
        tools). A line whose bytes are its re-encoding is proven as in a batch; any
        other is framed, and proven by the colon count of `_decode_one` on its
        Struct, unless framing reports or it may nest too deep. The proven lines go on
        together (`_proven`); the others go one at a time (`_one`) in their place."""
        msgs, again = self._decoded, self._again
        self._again = b""
        lines = block.split(b"\n")
        agains = again.split(b"\n")
        if len(agains) != len(lines):  # not one encoded line per input line: no proof here
            self._decoded = []
            return self._lines(framing, first, _whole_lines(block))
        pre: dict[int, list[Step]] = {}
        framed: dict[int, bytes] = {}  # proven lines whose framed text is not the line (a CR stripped)
        for k, (raw_line, enc) in enumerate(zip(lines, agains, strict=True)):
            if raw_line == enc or k == len(msgs):  # the same bytes, or the empty tail after the last newline
                continue
            line_no, raw = first + k, raw_line + b"\n"
            found: list[Finding] = []
            data = framing.frame(line_no, raw, found)
            if (
                not found and data is not None and not _maybe_deep(data)
                and b"\\u003" not in data and data.count(b":") == enc.count(b":")
            ):  # fmt: skip
                if data != raw_line:
                    framed[k] = data
                continue  # proven: no key was lost, and framing has nothing to say
            steps: list[Step] = list(found)
            if data is not None:
                steps.append(self._one(line_no, raw, data))
            pre[k] = steps
        return self._proven(first, block, pre, framed)

    def _proven(
        self, first: int, block: bytes, pre: dict[int, list[Step]] | None = None, framed: dict[int, bytes] | None = None
    ) -> list[Step]:
        """Lines whose batch proof held (`_first_bad` kept their Structs), but for those
        in `pre` (line index -> its steps, already decided by `_mixed`); `framed` holds
        the framed text of lines where it is not the line itself."""
        msgs, self._decoded = self._decoded, []
        framed = framed or {}
        if self.lean:
            return self._proven_lean(first, block, msgs, pre or {}, framed)
        # equal bytes: every line is one value, with no duplicate key, CR, BOM or blank line
        cols = Columns(msgs, self.always)
        created = cols.raw(("created_at",))
        ats, real = times(created)
        skip: frozenset[BatchPattern] = frozenset()
        if self.time_shape is not None and self.time_shape.all(created):
            skip = self.by_real_shape if real else self.by_shape
        bad = self._bad_formats(cols, skip)
        # the messages not batched: those whose formats fail (the exact path) and those
        # the column checks cannot clear (`_local` judges them one at a time)
        suspects: set[int] = set()
        tools = self._columns(cols, ats, suspects)
        n = len(msgs)
        ids, sids = cols.raw(("id",)), cols.raw(("session_id",))
        if not bad and not suspects and not pre:
            return [
                Batch(
                    first, ids, sids, created, ats, tools, len(block), *order(ids, sids, ats), pair_tools(tools, sids)
                )
            ]
        pre = pre or {}
        lines = block.split(b"\n")
        out: list[Step] = []
        start = 0  # the first line of the current run of batched messages
        for k in [*sorted(bad | suspects | pre.keys()), n]:
            if k > start:
                part = {j - start: t for j, t in tools.items() if start <= j < k}
                size = sum(map(len, lines[start:k])) + k - start
                part_sids = sids[start:k]
                out.append(
                    Batch(
                        first + start,
                        ids[start:k],
                        part_sids,
                        created[start:k],
                        ats[start:k],
                        part,
                        size,
                        *order(ids[start:k], part_sids, ats[start:k]),
                        pair_tools(part, part_sids),
                    )
                )
            start = k + 1
            if k == n:
                break
            if k in pre:
                out.extend(pre[k])
                continue
            item = None if k in bad else self._local(msgs[k], ats[k], first + k)
            if item is None:
                out.append(_for_exact(first, k, lines, framed))
            else:
                item.size = len(lines[k]) + 1
                out.append(item)
        return out

    def _proven_lean(
        self, first: int, block: bytes, msgs: list[Any], pre: dict[int, list[Step]], framed: dict[int, bytes]
    ) -> list[Step]:
        """`_proven` in a lean run (`self.lean`): a line is cleared when its string formats
        hold and its open fields are shallow; runs of cleared lines become one `Cleared`."""
        bad = self._bad_formats(Columns(msgs, self.always))
        ok = self._open_fields_shallow
        for k, m in enumerate(msgs):
            if not ok(m):
                bad.add(k)
        if not bad and not pre:
            return [Cleared(len(msgs), len(block))]
        lines = block.split(b"\n")
        out: list[Step] = []
        count = size = 0
        for k in range(len(msgs)):
            if k in bad or k in pre:
                if count:
                    out.append(Cleared(count, size))
                    count = size = 0
                if k in pre:
                    out.extend(pre[k])
                else:
                    out.append(_for_exact(first, k, lines, framed))
            else:
                count += 1
                size += len(lines[k]) + 1
        if count:
            out.append(Cleared(count, size))
        return out

    def _open_fields_shallow(self, m: Any) -> bool:
        """The depth check of the fields of arbitrary JSON (`OPEN_FIELDS`): `provider_raw`
        and every tool input, inside tool results too."""
        raw = m.metadata.provider_raw
        if raw is not None and raw is not _UNSET and not _shallow(raw):
            return False
        tool_use, tool_result = self.cls.tool_use, self.cls.tool_result
        for b in m.content:
            t = type(b)
            if t is tool_use:
                if not _shallow(b.input):
                    return False
            elif t is tool_result:
                for inner in b.content:
                    if type(inner) is tool_use and not _shallow(inner.input):
                        return False
        return True

    def _lines(self, framing: LineFraming, first: int, raws: list[bytes], *, exact: bool = False) -> list[Step]:
        """Line by line: framing as `read_jsonl` does it, then each line alone (`_one`),
        or straight to the exact path (`exact`)."""
        out: list[Step] = []
        for k, raw in enumerate(raws):
            line_no = first + k
            found: list[Finding] = []
            data = framing.frame(line_no, raw, found)
            out.extend(found)
            if data is not None:
                out.append((line_no, raw, data) if exact else self._one(line_no, raw, data))
        return out

    def _one(self, line_no: int, raw: bytes, data: bytes) -> Step:
        """One framed line alone: cleared (a `SessionItem`, or `Cleared` in a lean run)
        when its own proof and predicates hold, else `(line, raw, data)` for the exact
        path."""
        m = None if _maybe_deep(data) else self._decode_one(data)
        if m is not None and self.lean:
            if not self._bad_formats(Columns([m], self.always)) and self._open_fields_shallow(m):
                return Cleared(1, len(raw))
        elif m is not None:
            ats, bad = self._formats([m])
            if not bad:
                item = self._local(m, ats[0], line_no)
                if item is not None:
                    item.size = len(raw)
                    return item
        return (line_no, raw, data)

    def _decode_one(self, data: bytes) -> Any:
        """The Struct of one line, or None when the line is not proven free of duplicate
        keys (or does not decode, or a raw value is not a string): the colon count of
        `jsonio.parse`, on the Struct."""
        try:
            m = self.decoder.decode(data)
            again = self.encoder.encode(m)
        except _UNREADABLE:
            return None
        if self.opaque is not None and not self.opaque.ok([m]):
            return None
        if again == data or (b"\\u003" not in data and data.count(b":") == again.count(b":")):
            return m
        return None

    def _exact(
        self,
        framing: LineFraming,
        line_no: int,
        raw: bytes,
        data: bytes,
        out: list[Finding],
        stats: FileStats,
        progress: ProgressHook | None,
    ) -> None:
        """The exact path for one framed line: what `CanonicalRun.validate` does with it."""
        rec = framing.parse(line_no, raw, data)
        if isinstance(rec, Finding):
            out.extend(self._passthrough(rec))
            return
        stats.records += 1
        if progress is not None and rec.size:
            progress(rec.size)
        v = rec.value
        if isinstance(v, dict) and "input_schema" in v and "role" not in v:
            out.extend(self.run.check_tool_definition(rec))
        else:
            out.extend(self.run.check_message(rec))

    def _formats(self, msgs: list[Any]) -> tuple[list[Any], set[int]]:
        """Per batch: the parsed `created_at` of each message, and the indices of those
        whose string formats fail (the schema's lifted patterns, and the id, time and
        model formats of the enabled rules), each format checked with one regex."""
        bad = self._bad_formats(Columns(msgs, self.always))
        return times(list(map(_CREATED, msgs)))[0], bad

    def _bad_formats(self, cols: Columns, skip: frozenset[BatchPattern] = frozenset()) -> set[int]:
        """The indices of the messages whose string formats fail, each format checked over
        the batch with one regex (but those in `skip`, proven otherwise)."""
        bad: set[int] = set()
        for path, pattern in self.checks:
            if pattern in skip:
                continue
            idx, values = cols.present(path)
            wrong = pattern.bad(values)
            bad.update(wrong if idx is None else (idx[i] for i in wrong))
        return bad

    def _columns(self, cols: Columns, ats: list[Any], suspects: set[int]) -> dict[int, list[tuple[int, bool, str]]]:
        """The one-message rules of `_local` over a batch in one tight loop: adds to
        `suspects` every message on which `_local` might return None, and a few on which
        it would not (anything out of the ordinary: `_local` judges those one at a time
        with the run's selection), and returns the tool blocks (`SessionItem.tools`) of
        the other messages that have any. The tool id and name formats are checked per
        batch. Only complete messages are batched."""
        cls = self.cls
        tool_use, tool_result, special, nested, media = (
            cls.tool_use,
            cls.tool_result,
            cls.special,
            cls.nested,
            cls.media,
        )
        allowed = cls.allowed if self.on["TS102"] else None
        stop = self._stop if self.on["TS119"] else None
        email = EMAIL if self.on["TS121"] else None
        block_ok, toolset = self._block_ok, self.toolset
        prefix = self._provider_of
        metas = cols.raw(("metadata",))
        tools: dict[int, list[tuple[int, bool, str]]] = {}
        ids: list[str] = []  # tool ids (TS112), and the message of each
        id_owner: list[int] = []
        names: list[str] = []  # tool_use names (TS306), and the message of each
        name_owner: list[int] = []
        add = suspects.add
        for k, m in enumerate(cols.msgs):
            meta = metas[k]
            status = meta.status
            if (status is not _UNSET and status != "complete") or ats[k] is None:
                add(k)  # not complete (its own rules), or TS115
                continue
            if email is not None and ("@" in str(meta.user_id) or "@" in str(meta.team_id)):
                add(k)  # TS121: `_local` decides
                continue
            role = m.role
            model = meta.model
            if role == "assistant":  # TS104-TS107 and TS109
                provider, routing = meta.provider, meta.routing
                if (
                    model is _UNSET or model is None or provider is _UNSET or provider is None
                    or routing is _UNSET or routing is None or routing.chosen_model != model
                    or meta.usage is _UNSET or meta.usage is None or prefix(model) != provider
                ):  # fmt: skip
                    add(k)
                    continue
            elif model is not _UNSET and model is not None:  # TS109 elsewhere
                provider = meta.provider
                if provider is not _UNSET and provider is not None and prefix(model) != provider:
                    add(k)
                    continue
            if stop is not None and stop(meta) == "cancelled":
                add(k)  # TS119: a complete message with a cancelled stop
                continue
            raw = meta.provider_raw
            if raw is not _UNSET and raw is not None and not _shallow(raw):
                add(k)
                continue
            content = m.content
            if role == "tool":  # TS103, TS110, TS111
                if len(content) != 1:
                    add(k)
                    continue
                b = content[0]
                if type(b) is not tool_result or b.tool_use_id != meta.parent_tool_use_id:
                    add(k)
                    continue
            elif not content:
                if role != "system":
                    add(k)  # TS101
                continue
            ok_types = None if allowed is None else allowed[role]
            if len(content) == 1:  # one plain block (the common case): no loop
                t = type(content[0])
                if t not in special:
                    if ok_types is not None and t not in ok_types:
                        add(k)  # TS102
                    continue
            found: list[tuple[int, bool, str]] | None = None
            for i, b in enumerate(content):
                t = type(b)
                if ok_types is not None and t not in ok_types:
                    break  # TS102
                if t not in special:
                    continue
                if t is tool_use:
                    if not _shallow(b.input) or (toolset is not None and not block_ok(b)):
                        break
                    ids.append(b.id)
                    id_owner.append(k)
                    names.append(b.name)
                    name_owner.append(k)
                    entry = (i, True, b.id)
                elif t is tool_result:
                    inner = b.content
                    if inner and not all(
                        block_ok(x) and (type(x) is not tool_use or _shallow(x.input))
                        for x in inner
                        if type(x) in nested
                    ):
                        break
                    ids.append(b.tool_use_id)
                    id_owner.append(k)
                    entry = (i, False, b.tool_use_id)
                else:
                    if t in media and not block_ok(b):
                        break
                    continue
                if found is None:
                    found = [entry]
                else:
                    found.append(entry)
            else:
                if found is not None:
                    tools[k] = found
                continue
            add(k)
        for pattern, values, owner in (
            (self.tool_id_pattern, ids, id_owner),
            (self.tool_name_pattern, names, name_owner),
        ):
            if pattern is not None:
                for j in pattern.bad(values):
                    add(owner[j])
                    tools.pop(owner[j], None)
        if self.prices is not None:
            for k in range(len(metas)):
                if k not in suspects:
                    model = metas[k].model
                    if not self._priced(metas[k], None if model is _UNSET else model):
                        add(k)
        return tools

    def _provider_of(self, model: str) -> str:
        """The part of a model id before its first colon (TS109), kept per distinct id: a
        run meets a handful of models, each on many messages."""
        got = self._providers.get(model)
        if got is None:
            got = model.split(":", 1)[0]
            if len(self._providers) < 4096:
                self._providers[model] = got
        return got

    # -- one message ----------------------------------------------------------------------

    def _local(self, m: Any, at: Any, line_no: int) -> SessionItem | None:
        """The session view of `m` when no enabled one-message rule can report on it, else
        None. The string formats were checked per batch (`_formats`); `at` is the parsed
        `created_at` (None if it is not a real date and time)."""
        on = self.on
        meta = m.metadata
        status = meta.status
        complete = status is _UNSET or status == "complete"
        if at is None and on["TS115"]:
            return None
        role = m.role
        content = m.content
        model = meta.model
        model = None if model is _UNSET else model
        provider = meta.provider
        provider = None if provider is _UNSET else provider
        # the model id format (TS108) was checked per batch: a model here matches it
        if model is not None and provider is not None and on["TS109"] and self._provider_of(model) != provider:
            return None
        if on["TS119"] and getattr(meta, "stop_reason", None) == "cancelled" and status != "cancelled":
            return None
        if on["TS121"]:
            for pseudonym in (meta.user_id, meta.team_id):
                if isinstance(pseudonym, str) and "@" in pseudonym and EMAIL.search(pseudonym):
                    return None
        cls = self.cls
        if not self._open_fields_shallow(m):
            return None  # TS008 territory: the exact path decides
        tools: list[tuple[int, bool, str]] = []
        for i, b in enumerate(content):
            t = type(b)
            if t is cls.tool_use:
                tools.append((i, True, b.id))
            elif t is cls.tool_result:
                tools.append((i, False, b.tool_use_id))
        if complete:
            if not content:
                if role != "system" and on["TS101"]:
                    return None
            elif on["TS102"]:
                allowed = cls.allowed[role]
                for b in content:
                    if type(b) not in allowed:
                        return None
            if role == "assistant":
                if on["TS104"] and (model is None or provider is None):
                    return None
                routing = meta.routing
                if routing is _UNSET or routing is None:
                    if on["TS105"]:
                        return None
                elif on["TS107"] and model is not None and routing.chosen_model != model:
                    return None
                if on["TS106"] and (meta.usage is _UNSET or meta.usage is None):
                    return None
            elif role == "tool":
                if on["TS103"] and len(content) != 1:
                    return None
                parent = meta.parent_tool_use_id
                if parent is _UNSET or parent is None:
                    if on["TS110"]:
                        return None
                elif on["TS111"]:
                    for b in content:
                        if type(b) is cls.tool_result and b.tool_use_id != parent:
                            return None
            for b in content:
                if not self._block_ok(b):
                    return None
        if self.prices is not None and not self._priced(meta, model):
            return None
        return SessionItem(line_no, m.id, m.session_id, m.created_at, at, complete, tools)

    def _block_ok(self, b: Any) -> bool:
        """False when a block rule of a complete message may report on block `b`."""
        on, cls = self.on, self.cls
        t = type(b)
        if t is cls.tool_use:
            if on["TS112"] and not self.re_tool_id(b.id):
                return False
            if on["TS306"] and not SNAKE_NAME.match(b.name):
                return False
            ts = self.toolset
            if ts is not None and (on["TS304"] or on["TS305"]):
                if b.name not in ts.tools:
                    return not on["TS304"]
                if on["TS305"]:
                    fast, _oracle, problem = ts.validators(b.name)
                    if problem is not None or (fast is not None and not fast.is_valid(b.input)):
                        return False
            return True
        if t is cls.tool_result:
            if on["TS112"] and not self.re_tool_id(b.tool_use_id):
                return False
            # inside a tool_result the driver runs the rules of image, audio and tool_use
            return all(self._block_ok(inner) for inner in b.content if type(inner) in cls.nested)
        if t in cls.media:
            if on["TS113"] and t is cls.image and not b.media_type.lower().startswith("image/"):
                return False
            source = b.source
            if source.kind == "file_ref" and on["TS114"] and file_ref_problem(source.data):
                return False
            if source.kind == "url" and on["TS120"] and not url_ok(source.data):
                return False
            return not (source.kind == "base64" and on["TS116"] and not _b64_ok(source.data))
        return True

    def _priced(self, meta: Any, model: Any) -> bool:
        """False when a pricing rule (TS401-TS404) may report on this message."""
        usage = meta.usage
        if usage is _UNSET or usage is None:
            return True
        prices, on = self.prices, self.on
        assert prices is not None
        version = usage.pricing_version
        table = prices.versions.get(version)
        if table is None:
            return not on["TS402"]
        if model not in table:
            return not on["TS403"]
        rates = table[model]
        as_dict: dict[str, Any] = {"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens}
        for bucket, rate in USAGE_BUCKETS:
            n = getattr(usage, bucket)
            if n is _UNSET:
                continue
            as_dict[bucket] = n
            if n and rate not in rates:
                return not on["TS404"]
        if not on["TS401"]:
            return True
        # `cost` computes in its exact context; reading a plain decimal and comparing two
        # are exact in any context
        try:
            stored = Decimal(usage.cost_usd)
        except (InvalidOperation, TypeError, ValueError):
            return False  # not a decimal (TS020's to report): the exact path says where
        return bool(stored == prices.cost(version, model, as_dict))

    # -- the session phase (in input order) -----------------------------------------------

    def session_batch(self, path: str, batch: Batch) -> list[Finding]:
        """The session step of a `Batch`: what `session` (or, where it refuses, the exact
        session phase) does with its messages one by one, with the common case, a prefix
        that commits whole, checked and committed column-wise (`_bulk`)."""
        k = self._bulk(path, batch)
        self.cleared += k
        out: list[Finding] = []
        for j in range(k, len(batch.ids)):
            item = batch.item(j)
            if self.session(path, item):
                self.cleared += 1
            else:
                out.extend(self.run.session(item_facts(path, item)))
        return out

    def _bulk(self, path: str, batch: Batch) -> int:
        """Commit the longest prefix of `batch` that `session` would commit message by
        message, when the column checks prove it; return its length (0: none proven).

        The message rules (TS202 unique ids, TS203/TS204 order within a session) read
        and write only `message_ids` and the sessions' last id and time; the tool rules
        (TS205-TS207) only the tool ids. The batch's own order was checked by the local
        step (`order`); here its ids meet the run's, and each session's first message
        the session's last. The tool blocks, paired within the batch by the local step
        (`pair_tools`), meet the run state at once (`_pairs_ok`) and are committed in
        bulk (`_commit_pairs`); when they are irregular or do not meet it, they are
        checked message by message in order (`_tools_one_by_one`, committing as
        `session` does), and the messages before the first whose tools fail are
        committed at the end; the sessions are made in order of first appearance, as
        one by one."""
        state = self.run.state
        ids, sids = batch.ids, batch.sids
        n = len(ids)
        cuts = batch.cuts
        starts = [0, *cuts]
        if self.session_rules:
            if not batch.ordered or not state.message_ids.isdisjoint(ids):
                return 0
            sessions = state.sessions
            for s in starts:
                sess = sessions.get(sids[s])
                if sess is not None:
                    if sess.last_id is not None and ids[s] <= sess.last_id:
                        return 0
                    if sess.last_created_at is not None and batch.at(s) < sess.last_created_at:
                        return 0
        done = n
        pairs = batch.pairs
        if self.session_rules and pairs is not None and self._pairs_ok(batch, pairs):
            self._commit_pairs(path, batch, pairs, starts)
        else:
            done = self._tools_one_by_one(path, batch, starts)
        if done and self.run.track_ids:
            state.message_ids.update(ids if done == n else ids[:done], path, batch.first)
        # each session takes the last of its committed messages (the ids went in above)
        for s, e in zip(starts, [*cuts, n], strict=True):
            if s >= done:
                break
            last = min(e, done) - 1
            commit_message(state, state.session(sids[s]), ids[last], batch.created[last], batch.at(last), False)
        return done

    def _pairs_ok(self, batch: Batch, pairs: Pairs) -> bool:
        """True when no tool rule may report on the batch's tool blocks, given that none
        may within the batch (`pair_tools`): its call ids are new to the run, and each
        result answering a call before the batch finds that call open in its session."""
        state = self.run.state
        if pairs.uses and not state.tool_owner.keys().isdisjoint(pairs.uses):
            return False
        sessions, sids = state.sessions, batch.sids
        for j, tid in pairs.outside:
            sess = sessions.get(sids[j])
            if sess is None or tid not in sess.open_uses:
                return False
        return True

    def _commit_pairs(self, path: str, batch: Batch, pairs: Pairs, starts: list[int]) -> None:
        """What `commit_tool_block` does with each tool block of the batch in order, in
        bulk: the calls take their ids, the results close their calls, and the calls
        left unanswered stay open (in call order, as one by one)."""
        state = self.run.state
        sids = batch.sids
        for s in starts:  # the sessions are made in order of first appearance
            state.session(sids[s])
        sessions = state.sessions
        if pairs.uses:
            state.tool_owner.update(zip(pairs.uses, map(sids.__getitem__, pairs.use_at), strict=True))
        for j, tid in pairs.outside:
            sess = sessions[sids[j]]
            del sess.open_uses[tid]
            sess.answered.add(tid)
        for sid, tids in pairs.inside.items():
            sessions[sid].answered.update(tids)
        for j, i, tid in pairs.still_open:
            sessions[sids[j]].open_uses[tid] = (path, batch.first + j, "", i)

    def _tools_one_by_one(self, path: str, batch: Batch, starts: list[int]) -> int:
        """The tool blocks of the batch checked and committed message by message, as
        `session` does; return the index of the first message whose tools fail (the
        batch's length when none does)."""
        state = self.run.state
        sids = batch.sids
        made = 0  # the runs whose session exists (made in order)
        for j, tools in batch.tools.items():
            while made < len(starts) and starts[made] <= j:
                state.session(sids[starts[made]])
                made += 1
            sid = sids[j]
            sess = state.sessions[sid]
            if self.session_rules and not _tools_ok(state, sess, tools):
                return j
            line = batch.first + j
            for i, use, tid in tools:
                commit_tool_block(state, sess, sid, True, use, tid, (path, line, "", i))
        return len(sids)

    def session(self, path: str, item: SessionItem) -> bool:
        """Commit `item` to the run state when no session rule can report on it; else False
        (nothing committed: the exact path takes the message whole)."""
        run = self.run
        state = run.state
        if self.session_rules:
            mid = item.id
            if mid in state.message_ids:  # the id format (TS201) was checked per batch
                return False
            sess = state.sessions.get(item.session_id)
            if sess is not None:
                if sess.last_id is not None and mid <= sess.last_id:
                    return False
                if item.at is not None and sess.last_created_at is not None and item.at < sess.last_created_at:
                    return False
            if item.complete and item.tools and not _tools_ok(state, sess, item.tools):
                return False
        sess = state.session(item.session_id)
        commit_message(state, sess, item.id, item.created_at, item.at, run.track_ids, (path, item.line))
        for i, use, tid in item.tools:
            commit_tool_block(state, sess, item.session_id, item.complete, use, tid, (path, item.line, "", i))
        return True


def _decode_block(decoder: msgspec.json.Decoder[Any], block: bytes) -> list[Any] | int:
    """The Structs of the lines of `block`, or the index of the first line that does not
    decode (-1 when it cannot be told)."""
    try:
        return decoder.decode_lines(block)
    except msgspec.MsgspecError as exc:
        n = block.count(b"\n")
        text = str(exc)
        m = _AT_LINE.search(text)
        if m:
            return int(m.group(1)) if int(m.group(1)) < n else -1
        m = _AT_BYTE.search(text)
        if m and int(m.group(1)) <= len(block):
            return min(block.count(b"\n", 0, int(m.group(1))), n - 1)
        return -1
    except (UnicodeError, RecursionError):
        return -1


_CONTENT = operator.attrgetter("content")
_QUOTE = ord('"')


class OpaqueCheck:
    """What the raw model (`fastmodel.raw_model`) leaves unproven, proven per batch: every
    raw value is a string (it is valid JSON, so a string exactly when its first byte is
    a quote) and its bytes are UTF-8 (msgspec proved every other string of the line
    UTF-8, and the rest of a JSON line is ASCII). The raw values are gathered in C
    (`map`, `filter`, `chain`) from the blocks of `content` and of their own `content`,
    the places `fastmodel.RAW_SHAPES` lets them sit."""

    def __init__(self, raw: RawModel) -> None:
        union = typing.get_type_hints(raw.model.message)["content"].__args__[0]
        blocks = typing.get_args(union) or (union,)
        # the blocks with a `content` list of blocks of their own (a tool_result)
        self.holders = tuple((c, c.__instancecheck__) for c in blocks if "content" in c.__struct_fields__)
        self.nested = ("content", "[]", "content", "[]") in RAW_SHAPES and bool(self.holders)
        self.fields = tuple(
            (cls, cls.__instancecheck__, operator.attrgetter(f)) for cls, names in raw.raw for f in names
        )

    def ok(self, msgs: list[Any]) -> bool:
        """True when every raw value of these messages is a string in UTF-8."""
        blocks = list(chain.from_iterable(map(_CONTENT, msgs)))
        present = set(map(type, blocks))  # each filter below runs only if its class is here
        if self.nested:
            for cls, holder in self.holders:
                if cls in present:
                    inner = list(chain.from_iterable(map(_CONTENT, filter(holder, blocks))))
                    present.update(map(type, inner))
                    blocks += inner
        raws: list[Any] = []
        for cls, is_cls, get in self.fields:
            if cls in present:
                raws += map(get, filter(is_cls, blocks))
        if not raws:
            return True
        joined = b"".join(raws)
        starts = list(accumulate(map(len, raws), initial=0))
        starts[-1] = 0  # the first byte twice: `itemgetter` of two or more gives a tuple
        if itemgetter(*starts)(joined).count(_QUOTE) != len(starts):
            return False
        if joined.isascii():
            return True
        try:
            joined.decode()
        except UnicodeDecodeError:
            return False
        return True


def _piece_bytes() -> int:
    """The size a failing block is located in (never more than a block)."""
    return min(PIECE_BYTES, BLOCK_BYTES)


def _pieces(block: bytes, size: int) -> Iterator[bytes]:
    """`block` (whole lines, ending in a newline) in runs of whole lines of at most `size`
    bytes each, but for a line longer than that, alone."""
    start, end = 0, len(block)
    while start < end:
        cut = block.rfind(b"\n", start, start + size)
        if cut < 0:
            cut = block.find(b"\n", start + size)
        yield block[start : cut + 1]
        start = cut + 1


def _whole_lines(block: bytes) -> list[bytes]:
    """The lines of a block that ends in a newline, each with its newline."""
    return [x + b"\n" for x in block.split(b"\n")[:-1]]


def _for_exact(first: int, k: int, lines: list[bytes], framed: dict[int, bytes]) -> tuple[int, bytes, bytes]:
    """Line `k` of a block (`lines`: the block split at newlines) as a `Step` for the
    exact path: its number, its raw bytes, its framed text."""
    return (first + k, lines[k] + b"\n", framed.get(k, lines[k]))


def _tools_ok(state: RunState, sess: Session | None, tools: list[tuple[int, bool, str]]) -> bool:
    """True when no tool rule (TS205-TS207) may report on the tool blocks of a complete
    message in session `sess` (None: a session not seen yet), in order."""
    seen: set[str] = set()
    for _i, use, tid in tools:
        if use:
            if tid in state.tool_owner or tid in seen:
                return False
        elif sess is None or tid not in sess.open_uses or tid in seen:
            return False
        seen.add(tid)
    return True


_fromiso = datetime.fromisoformat
_CREATED = operator.attrgetter("created_at")


def times(created: list[str]) -> tuple[list[Any], bool]:
    """The parsed `created_at` of each value (None where it is not a real date and time),
    as `parse_created_at` parses them (Python >= 3.11 reads the `Z` itself), and whether
    every one is real."""
    try:
        return list(map(_fromiso, created)), True
    except ValueError:
        ats = [parse_created_at(c) for c in created]
        return ats, None not in ats


# The schemas' RFC 3339 pattern of `created_at` (TS020), as `ecma_regex` compiles it, and
# the shape of the canonical encoding with digits where digits go. A value of that shape
# that Python reads as a real date and time matches this pattern: a real one has month
# 01-12, day 01-31, hour 00-23, minute and second 00-59, and the shape gives the rest. It
# also matches the canonical encoding (TS117). So a batch of such values is checked with
# one pass over its shape (`FixedWidth`) instead of two regexes; a revision whose pattern
# is another checks its own.
_RFC3339_UTC = (
    "^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)"
    "(\\.[0-9]{1,6})?(Z|\\+00:00)(?![\\s\\S])"
)
_TIME_SHAPE = "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z"


_LOCATES = 8  # bad lines located per block before the rest goes line by line (bounds the work)
_DIFFERS = -2  # `_first_bad`: every line decoded, but the re-encoding differs (`_mixed`)
_DIRTY = 8  # blocks read small after one the batch proof failed on (`local_block`)
_COLD = 3  # blocks in a row that cleared nothing before blocks go to the exact path untried
_PROBE = 8  # ... but every 8th block is tried again
_CLEARED = (Batch, SessionItem, Cleared)
_AT_LINE = re.compile(r"- at `\$\[(\d+)\]")  # msgspec: a validation error of line k of a batch
_AT_BYTE = re.compile(r"\(byte (\d+)\)")  # msgspec: malformed JSON at a byte
# what msgspec raises on a line it cannot take: a decode error, invalid UTF-8, its own
# nesting limit; the exact path then says what is wrong
_UNREADABLE = (msgspec.MsgspecError, UnicodeError, RecursionError)
# A line with fewer brackets than this nests less deep than any limit of the exact path's
# parsers (jiter stops at 200 levels, orjson writes 255): msgspec reads deeper, so a line
# with more brackets (strings included: the count only errs high) takes the exact path.
_DEPTH_SAFE = 200


def _maybe_deep(line: bytes) -> bool:
    return line.count(b"{") + line.count(b"[") >= _DEPTH_SAFE


# the fields of arbitrary JSON whose depth `_local` checks (`fastmodel.Model.open_fields`);
# a schema that adds another turns the fast path off (`FastPath.covers`) until it is here
OPEN_FIELDS = frozenset({"MessageMetadata.provider_raw", "ToolUseBlock.input"})
_ENCODE = msgspec.json.Encoder().encode
_CONTAINERS = (dict, list)


def _shallow(value: dict[str, Any]) -> bool:
    """True when `value` (a decoded object of arbitrary JSON) nests fewer levels than
    `_DEPTH_SAFE` less the schema's own nesting around it; flat objects answer at once."""
    for v in value.values():
        if type(v) in _CONTAINERS:
            break
    else:
        return True
    text = _ENCODE(value)
    return text.count(b"{") + text.count(b"[") < _DEPTH_SAFE - 16


_END = "(?![\\s\\S])"  # end of input, as the schemas write it


def _batchable(body: str) -> bool:
    """True when `body` cannot match a newline (so values joined by newlines are checked
    one by one by a single regex): no `.`, no escape that matches a newline outside a
    negated class, no negated class that lets a newline through, no group but `(?:`."""
    i, in_class, negated, has_space = 0, False, False, False
    while i < len(body):
        c = body[i]
        if c == "\\":
            e = body[i + 1 : i + 2]
            if e.isdigit() or e in ("D", "W", "n", "x", "u", "U", "N", "Z", "A", "b", "B"):
                return False
            if e == "s":
                if not (in_class and negated):
                    return False
                has_space = True
            i += 2
            continue
        if in_class:
            if c == "]":
                if negated and not has_space:
                    return False
                in_class = False
        elif c == "[":
            in_class, negated, has_space = True, body[i + 1 : i + 2] == "^", False
            if negated:
                i += 1
        elif c == "." or (c == "(" and body[i + 1 : i + 2] == "?" and body[i + 2 : i + 3] != ":") or c in "^$":
            return False
        i += 1
    return not in_class


def _uncaptured(body: str) -> str:
    """`body` (a `_batchable` one: no back reference) with its capturing groups made
    non-capturing: the same language, and Python's matcher skips the group bookkeeping
    (the schema's `created_at` pattern checks 40% faster)."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(body):
        c = body[i]
        if c == "\\":
            out.append(body[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]" or body[i - 1] == "[" or body[i - 2 : i] == "[^"
        elif c == "[":
            in_class = True
        elif c == "(" and body[i + 1 : i + 2] != "?":
            c = "(?:"
        out.append(c)
        i += 1
    return "".join(out)


class BatchPattern:
    """One anchored pattern (`^...` to end of input, as the schemas write them, or `...\\Z`)
    checked over a whole batch of values with one call when it can be: a pattern of
    fixed width (`FixedWidth`) by a byte translation, another `_batchable` one by one
    regex over the values joined by newlines. A column whose values repeat (a model
    id) is checked on its distinct values."""

    def __init__(self, regex: re.Pattern[str]) -> None:
        self.pattern = regex.pattern
        self.one = regex.search
        src = regex.pattern
        body: str | None = None
        if src.startswith("^") and src.endswith(_END):
            body = src[1 : -len(_END)]
        elif src.endswith("\\Z") and not src.endswith("\\\\Z"):
            body = src[:-2]  # a `match` pattern (invariants.CANONICAL_TIME, tools.SNAKE_NAME)
            self.one = regex.match
        self.all = (
            re.compile(f"(?:(?:{_uncaptured(body)})\n)*", regex.flags).fullmatch
            if body is not None and _batchable(body)
            else None
        )
        classes = None if body is None or regex.flags & re.IGNORECASE else _fixed_classes(body)
        self.fixed = None if classes is None else FixedWidth(classes)
        self.repeats = True  # the values seen so far repeat: check the distinct ones

    def bad(self, values: list[str]) -> list[int]:
        """The indices of the values that do not match."""
        if not values:
            return []
        if self.repeats:
            distinct = list(set(values))
            if 2 * len(distinct) > len(values):
                self.repeats = False  # mostly distinct: not worth the set from now on
            if self._all(distinct):
                return []
        elif self._all(values):
            return []
        one = self.one
        return [i for i, v in enumerate(values) if not one(v)]

    def _all(self, values: list[str]) -> bool:
        """True when every value matches (False: some may not)."""
        if self.fixed is not None:
            return self.fixed.all(values)
        if self.all is not None:
            joined = "\n".join(values) + "\n"
            return joined.count("\n") == len(values) and self.all(joined) is not None
        return False


def _fixed_classes(body: str) -> list[frozenset[int]] | None:
    """The pattern `body` as the ASCII bytes allowed at each position, when it is a fixed
    sequence of literal characters and classes (`[...]` with ranges, no negation), each
    perhaps repeated `{n}` times, with at most 8 distinct classes (a bit each in
    `FixedWidth`); None for anything else (the regex checks it)."""
    out: list[frozenset[int]] = []
    i = 0
    while i < len(body):
        c = body[i]
        chars: set[str] = set()
        if c == "[":
            i += 1
            if body[i : i + 1] in ("^", "]", ""):
                return None
            while body[i : i + 1] != "]":
                lo, i = _class_char(body, i)
                if lo is None:
                    return None
                if body[i : i + 1] == "-" and body[i + 1 : i + 2] not in ("]", ""):
                    hi, i = _class_char(body, i + 1)
                    if hi is None or hi < lo:
                        return None
                    chars.update(map(chr, range(ord(lo), ord(hi) + 1)))
                else:
                    chars.add(lo)
            i += 1
        elif c == "\\":
            e = body[i + 1 : i + 2]
            if not e or e.isalnum():
                return None  # a class escape (\d, \s, ...) or an anchor
            chars.add(e)
            i += 2
        elif c in ".^$|()?*+{}":
            return None
        else:
            chars.add(c)
            i += 1
        count = 1
        m = _REPEAT.match(body, i)
        if m:
            count, i = int(m.group(1)), m.end()
        if not all(ch.isascii() and ch != "\n" for ch in chars):
            return None
        out += [frozenset(map(ord, chars))] * count
    return out if 0 < len(out) <= 256 and len(set(out)) <= 8 else None


def _class_char(body: str, i: int) -> tuple[str | None, int]:
    """The character at `body[i]` inside a class (an escaped one too), and where the
    next begins; None for a class escape or an unfinished class."""
    c = body[i : i + 1]
    if c == "\\":
        e = body[i + 1 : i + 2]
        return (None, i) if not e or e.isalnum() else (e, i + 2)
    if c in ("", "["):
        return None, i
    return c, i + 1


_REPEAT = re.compile(r"\{(\d{1,3})\}")


class FixedWidth:
    """A fixed-width pattern of ASCII classes (`_fixed_classes`) checked over a batch in
    C: the values joined by newlines, each byte translated to a bit of each class it
    belongs to, must carry at every position of a value the bit of that position's
    class (one integer AND over the whole batch). With the length of the whole equal
    to `(width + 1) * n` that proves each value matches: no class holds a newline, so
    the n newlines the join put in sit exactly at the separators' positions, and each
    value is `width` characters long. (The ULID ids and the canonical time check about
    twice as fast this way as with one regex.)"""

    def __init__(self, classes: list[frozenset[int]]) -> None:
        kinds = sorted(set(classes), key=sorted)
        bit = {k: 1 << n for n, k in enumerate(kinds)}  # one bit per class in a byte (8 at most)
        table = bytearray(256)
        for k, b in bit.items():
            for ch in k:
                table[ch] |= b
        self.table = bytes(table)
        self.width = len(classes)
        self.template = bytes(bit[k] for k in classes) + b"\0"  # a separator: any byte
        self.masks: dict[int, int] = {}

    def all(self, values: list[str]) -> bool:
        """True when every value matches (False: some may not)."""
        n = len(values)
        joined = "\n".join(values) + "\n"
        if len(joined) != (self.width + 1) * n:
            return False
        try:
            data = joined.encode("ascii")
        except UnicodeEncodeError:
            return False
        mask = self.masks.get(n)
        if mask is None:
            mask = int.from_bytes(self.template * n, "big")
            if len(self.masks) < 4096:
                self.masks[n] = mask
        return int.from_bytes(data.translate(self.table), "big") & mask == mask


def _always_set(model: Any, path: tuple[str, ...]) -> bool:
    """True when every message of the Struct class `model` has a value (not UNSET, not
    None) at `path`: each step a required field whose type does not admit None."""
    cls = model
    for name in path:
        info = {f.name: f for f in msgspec.structs.fields(cls)}.get(name)
        if info is None or not info.required:
            return False
        t = info.type
        while typing.get_origin(t) is typing.Annotated:
            t = typing.get_args(t)[0]
        if t is None or type(None) in typing.get_args(t):
            return False
        cls = t
    return True


class Columns:
    """The fields of one batch of Structs, each read once (one pass in C) and shared by
    the format checks and `_columns`."""

    __slots__ = ("_present", "_raw", "always", "msgs")

    def __init__(self, msgs: list[Any], always: frozenset[tuple[str, ...]] = frozenset()) -> None:
        self.msgs = msgs
        self.always = always  # paths every message has a value at (`_always_set`): nothing to filter
        self._raw: dict[tuple[str, ...], list[Any]] = {}
        self._present: dict[tuple[str, ...], tuple[list[int] | None, list[Any]]] = {}

    def raw(self, path: tuple[str, ...]) -> list[Any]:
        """The value at `path` of every message (UNSET or None where it has none); every
        step before the last must lead to a value on every message."""
        got = self._raw.get(path)
        if got is None:
            idx, parents = self.present(path[:-1]) if len(path) > 1 else (None, self.msgs)
            if idx is not None:
                raise ValueError(f"{'.'.join(path[:-1])} is not on every message")
            got = self._raw[path] = list(map(_attr(path[-1]), parents))
        return got

    def present(self, path: tuple[str, ...]) -> tuple[list[int] | None, list[Any]]:
        """(indices, values) of the messages on which `path` leads to a value (not UNSET
        or None); indices None: every message, in order."""
        got = self._present.get(path)
        if got is None and path in self.always:
            got = self._present[path] = (None, self.raw(path))
        if got is None:
            idx, parents = self.present(path[:-1]) if len(path) > 1 else (None, self.msgs)
            values = self.raw(path) if idx is None else list(map(_attr(path[-1]), parents))
            if _UNSET in values or None in values:
                keep = [k for k, v in enumerate(values) if v is not None and v is not _UNSET]
                idx = keep if idx is None else [idx[k] for k in keep]
                values = [values[k] for k in keep]
            got = self._present[path] = (idx, values)
        return got


_ATTRS: dict[str, Callable[[Any], Any]] = {}


def _attr(name: str) -> Callable[[Any], Any]:
    got = _ATTRS.get(name)
    if got is None:
        got = _ATTRS[name] = operator.attrgetter(name)
    return got


@dataclass(frozen=True)
class _Classes:
    # the generated Struct classes (typed Any: their fields are known only at run time)
    tool_use: Any
    tool_result: Any
    image: Any
    media: frozenset[type]  # image and audio blocks
    nested: frozenset[type]  # the block types whose rules also run inside a tool_result
    special: frozenset[type]  # the block types `_columns` looks into: tool blocks and media
    allowed: dict[str, frozenset[type]]  # role -> block classes allowed (§5.1.3)


def _block_classes(model: Any) -> _Classes:
    union = typing.get_type_hints(model)["content"].__args__[0]
    by_tag: dict[str, type] = {cls.__struct_config__.tag: cls for cls in union.__args__}
    media = frozenset(by_tag[t] for t in ("image", "audio") if t in by_tag)
    allowed = {role: frozenset(by_tag[t] for t in blocks if t in by_tag) for role, blocks in R.ALLOWED_BLOCKS.items()}
    return _Classes(
        tool_use=by_tag["tool_use"],
        tool_result=by_tag["tool_result"],
        image=by_tag.get("image"),
        media=media,
        nested=media | {by_tag["tool_use"]},
        special=media | {by_tag["tool_use"], by_tag["tool_result"]},
        allowed=allowed,
    )
