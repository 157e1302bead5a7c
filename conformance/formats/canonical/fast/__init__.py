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

The package, by craft: `blocks` (reading whole lines in blocks, the batch decode and the
proofs it owes), `batch` (the batch-regex compiler: `BatchPattern`, `FixedWidth`,
`Columns`), `mirror` (the one-message rules' predicates, a mixin of `FastPath`),
`sessions` (the cleared messages' steps and the session step, a mixin too), `run` (what
the fast path reads of its run) and here `FastPath`, which reads, proves and settles.

The fast path serves a run only when it knows every enabled rule (`FastPath.covers`): each
rule's registration declares how the fast path proves it silent (`fast=`, an
`engine.FastProof`); a rule registered without one turns it off rather than go unchecked.
"""

from __future__ import annotations

import gc
import operator
import typing
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import msgspec

from ....core.findings import Finding
from ....core.jsonio import LineFraming, open_input
from .. import rules as R
from ..engine import FAMILIES, Driver, fast_covered
from ..fastmodel import message_model, raw_model
from ..invariants import CANONICAL_TIME
from ..tools import SNAKE_NAME
from . import batch, blocks, mirror, sessions
from .batch import _CREATED, BatchPattern, Columns, FixedWidth, _always_set, _batchable, _fixed_classes, times
from .blocks import (
    _UNREADABLE,
    OpaqueCheck,
    _decode_block,
    _for_exact,
    _maybe_deep,
    _piece_bytes,
    _pieces,
    _whole_lines,
    read_blocks,
)
from .mirror import Mirror, _block_classes
from .run import Run
from .sessions import ROLES, Batch, Cleared, Pairs, SessionItem, SessionStep, Step, item_facts, order, pair_tools

if TYPE_CHECKING:
    from ...base import FileStats, ProgressHook

# the module attributes holding the compiled loops (`compiled`, `_walk.c`): set to None,
# their Python runs, as where none was built (the bench's Python row, tests/test_fast_walk.py)
COMPILED_SWITCHES: tuple[tuple[ModuleType, str], ...] = (
    (mirror, "_COMPILED"),
    (sessions, "_PAIR_TOOLS"),
    (blocks, "_OPAQUE_OK"),
    (batch, "_COLUMN"),
    (batch, "_PRESENT"),
    (mirror, "_PRICED"),
    (mirror, "_TOOL_IDS"),
)

__all__ = [
    "COMPILED_SWITCHES",
    "OPAQUE",
    "OPEN_FIELDS",
    "ROLES",
    "Batch",
    "BatchPattern",
    "Cleared",
    "Columns",
    "FastPath",
    "FixedWidth",
    "Pairs",
    "Run",
    "SessionItem",
    "Step",
    "_batchable",
    "_fixed_classes",
    "_pieces",
    "item_facts",
    "order",
    "pair_tools",
    "read_blocks",
    "times",
]

_UNSET = msgspec.UNSET
SETTLE_STEPS = 512  # steps of a block settled at a time (`validate_jsonl`): bounds the findings held

# the string fields no rule reads, only their type (a string): the batch proof decodes
# them as raw JSON bytes (`fastmodel.raw_model`) and `OpaqueCheck` proves the type and
# the UTF-8 per batch; a rule that comes to read one of them must leave this list
OPAQUE: frozenset[str] = frozenset({"TextBlock.text", "ThinkingBlock.text", "RedactedThinkingBlock.data"})

# the fields of arbitrary JSON whose depth `_local` checks (`fastmodel.Model.open_fields`);
# a schema that adds another turns the fast path off (`FastPath.covers`) until it is here
OPEN_FIELDS = frozenset({"MessageMetadata.provider_raw", "ToolUseBlock.input"})


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


class FastPath(Mirror, SessionStep):
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
        self._price_plans = {}  # (pricing version, model) -> what `_priced` needs of them (`_price_plan`)
        rev = run.revision[run.latest]
        # the opaque strings decode as raw JSON where the model allows it (`OpaqueCheck`)
        raw = raw_model(rev, OPAQUE)
        self.model = message_model(rev) if raw is None else raw.model
        self.opaque = None if raw is None else OpaqueCheck(raw)
        self.decoder = msgspec.json.Decoder(self.model.message)
        self.encoder = msgspec.json.Encoder()
        d: Driver = run.driver
        on = d.enabled
        # the rules the fast path can prove silent, as their registrations declare them
        # (`engine.FastProof`), each enabled or not in this run
        self.on = {rid: on(rid) for rid in fast_covered()}
        self.session_rules = bool(d.session or d.session_block or d.finish)
        # with no session rule, no one-message rule and no price table (`--select TS0`, ...)
        # a cleared line needs only its string formats and the depth of its open fields
        self.lean = (
            not self.session_rules and run.ctx.prices is None and not any(self.on[r] for r in fast_covered("local"))
        )
        ctx = run.ctx
        self.re_ulid = ctx.re_ulid.match
        self.re_tool_id = ctx.re_tool_id.match
        self.re_model = ctx.re_model.match
        self.toolset = ctx.toolset
        self._tool_checks = {}
        self.prices = ctx.prices
        self.priced_compiles = mirror.priced_compiles(self.on)
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
        # new-rule: scaffolded formats go below this line (python -m conformance.dev new-rule)
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
        self.tool_id_pattern = BatchPattern(ctx.re_tool_id) if self.on[R.TOOL_ID_FORMAT.id] else None
        self.tool_name_pattern = BatchPattern(SNAKE_NAME) if self.on[R.TOOL_USE_NAME.id] else None

    @staticmethod
    def covers(driver: Driver, revision: str) -> bool:
        """True when every enabled rule of the run is one the fast path can prove silent
        (its registration declares how: `engine.fast_covered`), every field of arbitrary JSON is one whose depth it checks (`OPEN_FIELDS`), and
        every role is one whose blocks it knows (`rules.ALLOWED_BLOCKS`)."""
        enabled = {info.id for fam in FAMILIES for info, _, _ in fam.rules if driver.enabled(info.id)}
        model = message_model(revision)
        roles = set(typing.get_args(typing.get_type_hints(model.message)["role"]))
        return enabled <= fast_covered() and model.open_fields <= OPEN_FIELDS and roles <= R.ALLOWED_BLOCKS.keys()

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
        return _piece_bytes() if self.dirty else blocks.BLOCK_BYTES  # read at call time: tests set it

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
        ids, sids, roles = cols.raw(("id",)), cols.raw(("session_id",)), cols.raw(("role",))
        if not bad and not suspects and not pre:
            return [
                Batch(
                    first,
                    ids,
                    sids,
                    created,
                    ats,
                    tools,
                    roles,
                    len(block),
                    *order(ids, sids, ats),
                    pair_tools(tools, sids),
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
                        roles[start:k],
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
