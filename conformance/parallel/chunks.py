"""The local phase of one task (a byte range of a `.jsonl` file, or a whole `.json` file).

A worker (a process of `--jobs`, or a Ray task) reads its range and, when the run has
the canonical fast path, runs its local steps per block (`FastPath.local_block`: batch
proof, string formats, one-message rules, the batch's own order): lines it clears are
sent column by column as a `Batch` (`["b", ...]`) or alone as a `SessionItem`
(`["s", ...]`), with no findings, or, in a run with no session rule, counted with the
lines cleared next to them (`["n", count, bytes]`); any other line is parsed and
schema-checked here and its MESSAGE and BLOCK rules run (`CanonicalRun.local`), sent as
its findings and the `SessionFacts` the session phase needs (`["m", ...]`). The result
is JSON (orjson): cheap to send between processes, and safe to keep in a `--resume`
store and read back (unlike a pickle, reading it cannot run code).

Byte ranges need no planning pass over the file: a task given `[start, end)` owns every
line that *begins* in that range. It seeks to `start - 1`, skips to the end of that line,
and reads lines until one begins at or after `end` (the last one may run past `end`).
The skip stops at `end`: a range that holds no newline owns no line (the line belongs to
the task that started it), so a file without newlines is read once, not once per task.
It counts the newlines it reads, so the parent turns its chunk-local line numbers into
the file's (the sum of the counts of the ranges before it). A range that starts inside
the file is read with one synthetic blank line in front, so the reader's first-line
handling (a byte order mark is only reported on line 1) never applies to a line in the
middle of the file; the blank-line finding it makes is dropped here.
"""

from __future__ import annotations

import gc
import hashlib
import json
import signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from operator import lt
from typing import IO, TYPE_CHECKING, Any, overload

import orjson

from ..core.errors import InputError
from ..core.findings import Finding, Severity, switch_off_for_mutation_testing
from ..core.jsonio import BLANK_LINE, DEFAULT_MAX_FILE_BYTES, LineFraming, Record, open_input, read_json, read_jsonl
from ..formats.base import Options
from ..formats.canonical import CanonicalFormat, CanonicalRun
from ..formats.canonical import rules as R
from ..formats.canonical.engine import SessionFacts
from ..formats.canonical.fast import ROLES, Batch, Cleared, FastPath, Pairs, SessionItem, read_blocks
from ..formats.canonical.invariants import parse_created_at

if TYPE_CHECKING:
    # annotations only: multiprocessing is loaded when workers start (`engine.Processes`)
    from multiprocessing.connection import Connection

Opener = Callable[[str], IO[bytes]]
"""Opens a task's path for binary reading (local files, or fsspec URLs on Ray)."""


@dataclass(frozen=True, slots=True)
class Task:
    """One unit of local work: `path[start:end)` of a JSON Lines file (`whole=False`),
    or the whole `.json` document (`whole=True`, `start == end == 0`). With `digest`,
    its result also says which bytes it read and their BLAKE2b digest, computed while
    reading them (a `--resume` store keeps both, and checks them before it trusts the
    result again: `store.ResumeStore`)."""

    path: str
    start: int
    end: int
    whole: bool = False
    digest: bool = False


def content_hash() -> Any:
    """The hash of the bytes a task read (a `--resume` entry's proof of what it answers for)."""
    return hashlib.blake2b(digest_size=32)


UNTIL_EOF = 1 << 62
"""The end of a file's last range: to the end of the file as it is when read, as one
process would read it (a file that grew since it was measured is read whole)."""


def plan(path: str, size: int, jsonl: bool, chunk_bytes: int) -> list[Task]:
    """The tasks of one file: ranges of about `chunk_bytes` (at least one task)."""
    if not jsonl:
        return [Task(path, 0, 0, whole=True)]
    step = max(1, chunk_bytes)
    starts = range(0, max(size, 1), step)
    return [Task(path, s, s + step if s + step < size else UNTIL_EOF) for s in starts]


def with_digest(tasks: Sequence[Task]) -> list[Task]:
    """`tasks`, each asked for the digest of what it reads (`Task.digest`)."""
    return [replace(t, digest=True) for t in tasks]


def cut_tail(tasks: list[Task], size: int, tail: int, piece: int) -> tuple[list[Task], int]:
    """`tasks` (one file's, from `plan`) with the ranges in the last `tail` bytes of the
    file cut into ranges of `piece` bytes, and how many bytes they cover. The last
    tasks of a run are the ones the others wait for at its end: small ones even it out.
    The cut is a function of the file's size alone, so a `--resume` store keeps its
    keys whatever the number of jobs."""
    out: list[Task] = []
    covered = 0
    k = len(tasks)
    while k and covered < tail:
        t = tasks[k - 1]
        if t.whole:
            break
        end = size if t.end == UNTIL_EOF else t.end
        cuts = list(range(t.start, end, max(1, piece))) or [t.start]
        out[:0] = [replace(t, start=a, end=b) for a, b in zip(cuts, [*cuts[1:], t.end], strict=True)]
        covered += end - t.start
        k -= 1
    return [*tasks[:k], *out], covered


TAIL_CHUNKS = 2
"""The last this many chunks' worth of a run's input is cut `TAIL_CUT` times finer."""

TAIL_CUT = 4


def cut_run_tail(files: Sequence[tuple[list[Task], int]], chunk_bytes: int) -> list[list[Task]]:
    """The tasks of a run's files (each `plan`'s, with the file's size), with the last
    `TAIL_CHUNKS` chunks' worth of the run cut `TAIL_CUT` times finer (`cut_tail`), across
    files when the last is small."""
    out = [tasks for tasks, _ in files]
    tail = TAIL_CHUNKS * chunk_bytes
    for k in reversed(range(len(files))):
        if tail <= 0:
            break
        out[k], covered = cut_tail(out[k], files[k][1], tail, chunk_bytes // TAIL_CUT)
        tail -= max(covered, 1)
    return out


class _Range:
    """A binary reader over the lines that begin in `[start, end)` of `f` (see module doc).

    `digest`: a hash fed every byte the range's result depends on, from `first` (where
    reading began: `start - 1`, or 0) to `pos` (the end of what was read)."""

    def __init__(
        self, f: IO[bytes], start: int, end: int, *, synthetic: bool = True, count: bool = True, digest: Any = None
    ) -> None:
        self.f = f
        self.end = end
        # newline-terminated lines of the file read (not the synthetic one); with `count`
        # False the reader's user sets it (the fast path numbers its lines itself)
        self.newlines = 0
        self.count = count
        self.digest = digest
        self.pending = b""
        self.at_line_start = True
        self.pos = start
        self.first = 0
        self.empty = False  # no line begins in the range
        if start > 0:
            f.seek(start - 1)
            self.pos = self.first = start - 1
            while True:  # skip the rest of the line that began before `start`, up to `end`
                block = f.readline(min(1 << 20, end - self.pos))
                self.pos += len(block)
                if digest is not None:
                    digest.update(block)
                if not block or block.endswith(b"\n"):
                    break
                if self.pos >= end:  # no line begins in the range: it is the earlier task's
                    self.empty = True
                    break
            if synthetic and not self.empty:
                self.pending = b"\n"
        else:
            f.seek(0)

    def read(self, size: int) -> bytes:
        """Up to `size` bytes of the range's lines (the fast path's block reader): a read
        that reaches the range's last byte stops after the newline of the line there."""
        if self.pending:
            out, self.pending = self.pending, b""
            return out
        if self.empty or (self.at_line_start and self.pos >= self.end):
            return b""
        out = self.f.read(size)
        # the newline that ends the range's last line is the first one at or after end - 1
        if self.pos + len(out) >= self.end:
            cut = out.find(b"\n", max(0, self.end - 1 - self.pos))
            if cut >= 0:  # the rest is never read (at a line start at or past the end)
                out = out[: cut + 1]
        self.pos += len(out)
        if self.digest is not None:
            self.digest.update(out)
        if out:
            self.at_line_start = out.endswith(b"\n")
            if self.count:
                self.newlines += out.count(b"\n")
        return out

    def readline(self, limit: int = -1) -> bytes:
        if self.pending:
            out, self.pending = self.pending, b""
            return out
        if self.empty or (self.at_line_start and self.pos >= self.end):
            return b""
        out = self.f.readline(limit)
        self.pos += len(out)
        if self.digest is not None:
            self.digest.update(out)
        if out:
            self.at_line_start = out.endswith(b"\n")
            if self.at_line_start:
                self.newlines += 1
        return out


def _finding(f: Finding) -> list[Any]:
    return [f.line, f.pointer, f.rule, str(f.severity), f.message, f.column]


def encode_facts(facts: SessionFacts) -> list[Any]:
    """`facts` as JSON (its `rec` is the record's, sent beside it)."""
    return [facts.msg, facts.complete, [[i, b] for i, b in facts.tools]]


def decode_facts(rec: Record, data: list[Any]) -> SessionFacts:
    msg, complete, tools = data
    return SessionFacts(rec, msg, complete, [(i, b) for i, b in tools])


FACT_FIELDS = ("rec", "msg", "complete", "tools")
"""The fields of `SessionFacts` the codec above carries (a test compares them)."""
assert tuple(f.name for f in fields(SessionFacts)) == FACT_FIELDS, "update encode_facts/decode_facts"


_RUN: tuple[Options, CanonicalRun] | None = None


def canonical_run(options: Options) -> CanonicalRun:
    """This process's run for `options` (built once per worker: compiling the schemas
    is the expensive part). Its state is never used: workers run only the local phase."""
    global _RUN
    if _RUN is None or _RUN[0] != options:
        _RUN = (options, CanonicalFormat().start(options))
    return _RUN[1]


def work(*args: Any) -> None:
    """A worker process's main: `serve`, deaf to Ctrl-C (SIGINT reaches the whole process
    group; the parent stops the run and closes the pipes, and the worker ends with them,
    instead of printing a traceback of its own)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(*args)


def serve(
    tasks: Connection,
    results: Connection,
    options: Options,
    inherited: Sequence[Connection] = (),
    off: frozenset[str] = frozenset(),
) -> None:
    """A worker process of `--jobs` (`engine.Processes`): run each task `tasks` brings
    and write its result to `results`, in order, until `None` or the end of `tasks`: the
    parent closed it, or died (so a worker never lives on as an orphan). A bug in a task
    (or in building the run, which the first task does) is sent back as `!` and its
    traceback, for the parent to raise. `inherited`: the parent's ends of pipes, which a
    forked worker holds copies of, closed first. `off`: the parent's `findings.switched_off()`
    (empty but under rule-level mutation testing), which a worker started by the fork server
    would not inherit."""
    for conn in inherited:
        conn.close()
    if off:
        switch_off_for_mutation_testing(off)
    while True:
        try:
            task = tasks.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        try:
            data = run_task(task, options)
        except Exception:  # a bug, not an input problem (run_task reports those)
            import traceback  # function-level: only on a bug

            data = b"!" + traceback.format_exc().encode("utf-8", "replace")
        try:
            results.send_bytes(data)
        except OSError:  # the parent is gone, or stopped reading
            return


def open_local(path: str) -> IO[bytes]:
    return open_input(path)


def run_task(task: Task, options: Options, opener: Opener = open_local, run: CanonicalRun | None = None) -> bytes:
    """The local phase of `task`, as JSON: `{"lines": N, "items": [...]}`, or
    `{"error": "one line"}` when the input cannot be read (the parent reports it).
    `run` is a run for `options` to use (default: this process's, built once)."""
    return orjson.dumps(task_result(task, options, opener, run, wire=True))


def task_result(
    task: Task, options: Options, opener: Opener = open_local, run: CanonicalRun | None = None, *, wire: bool = False
) -> dict[str, Any]:
    """What `run_task` encodes, as the values themselves: a task run in the process that
    consumes it needs no JSON round trip (its values are the ones JSON gives back, but
    for tuples where JSON has lists, which the consumer only unpacks)."""
    run = run if run is not None else canonical_run(options)
    # a task's values hold no reference cycles (parsed JSON, findings, lists of them), so
    # reference counting frees them all; the cyclic collector would only re-scan the
    # growing result list (about 10% of a task's time)
    was_enabled = gc.isenabled()
    gc.disable()
    digest = content_hash() if task.digest else None
    try:
        if task.whole:
            with opener(task.path) as f:
                data = f.read(DEFAULT_MAX_FILE_BYTES + 1)
            if len(data) > DEFAULT_MAX_FILE_BYTES:  # as `jsonio.read_input` says it
                raise InputError(f"{task.path}: larger than {DEFAULT_MAX_FILE_BYTES} bytes; not read")
            if digest is not None:
                digest.update(data)
            items, lines, span = list(_items(run, read_json(task.path, data=data), synthetic=False)), 0, (0, len(data))
        elif run.fast is not None:
            with opener(task.path) as f:
                reader = _Range(f, task.start, task.end, synthetic=False, count=False, digest=digest)
                items = _fast_items(run, run.fast, task.path, reader, first=2 if task.start > 0 else 1, wire=wire)
                lines, span = reader.newlines, (reader.first, reader.pos)
        else:
            with opener(task.path) as f:
                reader = _Range(f, task.start, task.end, digest=digest)
                src = read_jsonl(task.path, max_line_bytes=options.max_line_bytes, stream=reader)  # type: ignore[arg-type]
                items = list(_items(run, src, synthetic=task.start > 0))
                lines, span = reader.newlines, (reader.first, reader.pos)
    except InputError as exc:
        return {"error": str(exc)}
    except OSError as exc:
        return {"error": f"{task.path}: cannot read: {exc.strerror or exc}"}
    finally:
        if was_enabled:
            gc.enable()
    if digest is None:
        return {"lines": lines, "items": items}
    return {"lines": lines, "items": items, "read": list(span), "digest": digest.hexdigest()}


def _items(run: CanonicalRun, src: Iterator[Record | Finding], *, synthetic: bool) -> Iterator[list[Any]]:
    for item in src:
        if isinstance(item, Finding):
            if synthetic and item.line == 1 and item.rule == BLANK_LINE.id:
                synthetic = False
                continue  # the synthetic line in front of a range (module doc)
            yield from _framing(run, item)
            continue
        synthetic = False
        yield _record(run, item)


def _framing(run: CanonicalRun, finding: Finding) -> Iterator[list[Any]]:
    d = run.driver
    d.passthrough(finding, R.CATALOG[finding.rule])
    for f in d.drain():
        yield ["f", *_finding(f)]


def _record(run: CanonicalRun, item: Record) -> list[Any]:
    v = item.value
    if isinstance(v, dict) and "input_schema" in v and "role" not in v:
        # a tool definition: its rules read the run's state, so the parent runs them
        raw = item.raw.decode("utf-8")
        return ["t", item.size, item.line, item.pointer, json.dumps(v), raw]
    found, facts = run.local(item)
    return [
        "m",
        item.size,
        item.line,
        item.pointer,
        [_finding(f) for f in found],
        None if facts is None else encode_facts(facts),
    ]


ITEM_CODEC = 10
"""The version of the item encoding below (and of `["n", ...]`): part of a `--resume`
store's key, so results kept by another encoding are recomputed, never misread."""


def encode_item(s: SessionItem) -> list[Any]:
    """A cleared message as JSON: `["s", size, line, id, session_id, created_at,
    complete, tools, role, status]`, tools flattened to `[index, is_use, tool_id, ...]`."""
    tools: list[Any] = []
    for i, use, tid in s.tools:
        tools += (i, use, tid)
    return ["s", s.size, s.line, s.id, s.session_id, s.created_at, s.complete, tools, s.role, s.status]


def decode_item(data: list[Any], line: int) -> SessionItem:
    """The `SessionItem` of an encoded cleared message, at file line `line`; its parsed
    `created_at` is parsed again here (as `FastPath._formats` does)."""
    _, size, _line, mid, sid, created, complete, flat, role, status = data
    tools = list(zip(flat[::3], flat[1::3], flat[2::3], strict=True)) if flat else []
    return SessionItem(line, mid, sid, created, parse_created_at(created), complete, tools, role, status, size)


ITEM_FIELDS = ("line", "id", "session_id", "created_at", "at", "complete", "tools", "role", "status", "size")
"""The fields of `SessionItem` the codec above carries (`at` as `created_at`, parsed again)."""
assert tuple(f.name for f in fields(SessionItem)) == ITEM_FIELDS, "update encode_item/decode_item"


class Joined(Sequence[str]):
    """Strings of one width kept as their concatenation and cut out when read: the
    `created_at` of a batch travel so from a worker (`encode_batch`), where JSON would
    make a string of each, and the session step reads two per session run."""

    __slots__ = ("n", "text", "width")

    def __init__(self, text: str, n: int) -> None:
        if n <= 0 or len(text) % n:
            raise ValueError("a damaged batch")
        self.text, self.n, self.width = text, n, len(text) // n

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, k: int) -> str: ...

    @overload
    def __getitem__(self, k: slice) -> list[str]: ...

    def __getitem__(self, k: int | slice) -> str | list[str]:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(self.n))]
        if k < 0:
            k += self.n
        if not 0 <= k < self.n:
            raise IndexError(k)
        return self.text[k * self.width : (k + 1) * self.width]


class LazyTools(Mapping[int, list[Any]]):
    """A batch's tool blocks as the JSON text a worker sent, read only if asked: the
    session step reads them only when the blocks' pairs (`Pairs`) do not commit whole,
    and as JSON values they were half of what the parent decoded of a result."""

    __slots__ = ("_got", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._got: dict[int, list[Any]] | None = None

    def _load(self) -> dict[int, list[Any]]:
        if self._got is None:
            pairs = orjson.loads(self.text)
            if type(pairs) is not list or not all(type(p) is list and len(p) == 2 for p in pairs):
                raise ValueError("a damaged batch")
            self._got = dict(pairs)
        return self._got

    def __getitem__(self, k: int) -> list[Any]:
        return self._load()[k]

    def __iter__(self) -> Iterator[int]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


INITIALS = {role: initial for initial, role in ROLES.items()}
_INITIALS = "".join(ROLES)


def encode_batch(b: Batch, wire: bool = False) -> list[Any]:
    """A `Batch` as JSON: `["b", size, first, ids, session_ids, created_ats, tools,
    cuts, ordered, pairs, roles]`, where
    - session ids are given once per run of one session (a run begins at each cut);
    - `created_at` are one string when they all have one width (`Joined`), else a list;
    - tools are `[[index in the batch, [[index, is_use, tool_id], ...]], ...]`, or, for
      another process (`wire`) when there are pairs, that as JSON text (`LazyTools`);
    - pairs are `[uses, use_at, outside, inside, still_open]` or null;
    - roles are their initials, one string (`ROLES`)."""
    p = b.pairs
    pairs = None if p is None else [p.uses, p.use_at, p.outside, p.inside, p.still_open]
    sids = [b.sids[s] for s in (0, *b.cuts)] if b.sids else []
    created: Sequence[str] | str = b.created
    if b.created and len(set(map(len, b.created))) == 1:
        created = "".join(b.created)
    tools: list[Any] | str = list(b.tools.items())
    if wire and pairs is not None and tools:
        tools = orjson.dumps(tools).decode()
    # the initials by one C-level map over the column (a Python loop here costs the
    # workers a visible share of `--jobs` throughput)
    roles = b.roles if isinstance(b.roles, str) else "".join(map(INITIALS.__getitem__, b.roles))
    return ["b", b.size, b.first, b.ids, sids, created, tools, b.cuts, b.ordered, pairs, roles]


def decode_batch(data: list[Any], first: int) -> Batch:
    """The `Batch` of an encoded one, its first line at file line `first`. Its
    `created_at` are parsed only where the session step needs them (`Batch.at`), and
    its tool blocks stay the three-item lists JSON gives back (the step only unpacks
    them)."""
    _, size, _first, ids, heads, created, tools, cuts, ordered, pairs, roles = data
    n = len(ids)
    if type(roles) is not str or len(roles) != n or roles.strip(_INITIALS):  # one C-level pass
        raise ValueError("a damaged batch")
    bounds = [0, *cuts, n] if n else []
    if type(ordered) is not bool or len(heads) != max(0, len(bounds) - 1) or (cuts and not n):
        raise ValueError("a damaged batch")
    if not all(map(lt, bounds, bounds[1:])):  # one C-level pass
        raise ValueError("a damaged batch")
    if len(heads) == n:  # a run per message (sessions written at once): the heads are the column
        sids = heads
    else:
        sids = []
        for sid, s, e in zip(heads, bounds, bounds[1:], strict=False):
            sids += [sid] * (e - s)
    if type(created) is str:
        created = Joined(created, n)
    elif len(created) != n:
        raise ValueError("a damaged batch")
    got = None
    if pairs is not None:
        uses, use_at, outside, inside, still_open = pairs
        if len(uses) != len(use_at) or type(inside) is not dict:
            raise ValueError("a damaged batch")
        got = Pairs(uses, use_at, outside, inside, still_open)  # pairs stay lists: the step only unpacks them
    if type(tools) is str and got is None:
        raise ValueError("a damaged batch")
    return Batch(
        first,
        ids,
        sids,
        created,
        None,
        LazyTools(tools) if type(tools) is str else dict(tools),
        roles,
        size,
        cuts,
        ordered,
        got,
    )


BATCH_FIELDS = ("first", "ids", "sids", "created", "ats", "tools", "roles", "size", "cuts", "ordered", "pairs")
"""The fields of `Batch` the codec above carries (`ats` as `created`, parsed when needed)."""
assert tuple(f.name for f in fields(Batch)) == BATCH_FIELDS, "update encode_batch/decode_batch"


def _fast_items(
    run: CanonicalRun, fast: FastPath, path: str, reader: _Range, first: int, *, wire: bool = False
) -> list[list[Any]]:
    """The fast path's local steps over a range (`FastPath.local_block` per block):
    cleared lines are sent as `Batch`es or `SessionItem`s, a line it cannot clear takes
    the exact local phase here, a framing finding goes through the driver. A range after
    the first numbers its lines from 2 (as if behind the synthetic line of the module
    doc)."""
    framing = LineFraming(path)
    out: list[list[Any]] = []
    line = first
    fast.cold = 0
    fast.dirty = 0
    for block in read_blocks(reader, run.options.max_line_bytes, fast.block_bytes):  # type: ignore[arg-type]
        steps, n = fast.local_block(framing, line, block)
        line += n
        for s in steps:
            if type(s) is Batch:
                out.append(encode_batch(s, wire))
            elif type(s) is SessionItem:
                out.append(encode_item(s))
            elif type(s) is Cleared:
                out.append(["n", s.count, s.size])
            elif type(s) is tuple:
                line_no, raw, data = s
                rec = framing.parse(line_no, raw, data)
                if isinstance(rec, Finding):
                    out.extend(_framing(run, rec))
                else:
                    out.append(_record(run, rec))
            else:
                assert isinstance(s, Finding)
                out.extend(_framing(run, s))
    # the range's newline-terminated lines: all it read but a last one without a newline
    reader.newlines = line - first - (0 if reader.at_line_start else 1)
    return out


def shift(line: int | None, offset: int) -> int | None:
    return None if line is None else line + offset


def finding(path: str, data: list[Any], offset: int) -> Finding:
    line, pointer, rule, severity, message, column = data
    return Finding(path, shift(line, offset), pointer, rule, Severity(severity), message, column)
