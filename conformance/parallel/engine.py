"""`validate --jobs N` and `--resume DIR`: the local phase on every core, the session
phase in this process, in input order.

Canonical files are cut into tasks (`chunks.plan`: byte ranges of `.jsonl`, whole
`.json`), run by a backend (worker processes, this process, or Ray tasks) at most
`window` ahead of the reader, and consumed in input order: each record's local findings
are yielded, then the run's session phase over its `SessionFacts`, which is exactly what
`CanonicalRun.check_message` does in one process. So the findings, their order and the
report are those of `--jobs 1`, byte for byte, whatever the cut; sessions and the
run-wide id sets live only here. Other formats, and standard input, are validated here
in their place in the input order.
"""

from __future__ import annotations

import contextlib
import gc
import json
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from ..core.errors import InputError
from ..core.findings import Finding, switched_off
from ..core.jsonio import CRLF, Record, is_stdin
from ..formats.base import FileStats, Format, FormatRun, Options, ProgressHook, read_unit
from ..formats.canonical import CanonicalRun
from ..formats.canonical.fast import item_facts
from . import DEFAULT_CHUNK_BYTES, MIN_SHARED_BYTES, default_jobs, worth_sharing
from .chunks import (
    Task,
    cut_run_tail,
    decode_batch,
    decode_facts,
    decode_item,
    finding,
    plan,
    task_result,
    with_digest,
    work,
)

if TYPE_CHECKING:
    from .store import ResumeStore

__all__ = ["DEFAULT_CHUNK_BYTES", "MIN_SHARED_BYTES", "default_jobs", "run_units", "validate_units"]

Result = bytes | dict[str, Any]
"""A task's result: its JSON (from another process, or a store), or its values (`chunks.task_result`, run here)."""

Thunk = Callable[[], Result]


class Backend(Protocol):
    """Runs tasks' local phase somewhere; `submit` returns a thunk that waits for it."""

    def submit(self, task: Task) -> Thunk: ...

    def close(self) -> None: ...


class InProcess:
    """The local phase in this process (one job, or too little input to share)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.run: CanonicalRun | None = None  # the parent's run, once it exists (no second build)

    def submit(self, task: Task) -> Thunk:
        # lazy: the thunk runs when the parent asks for the result, between two records'
        # session phases, so sharing the parent's run (and its driver) is safe
        return lambda: task_result(task, self.options, run=self.run)

    def close(self) -> None:
        pass


RESULT_PIPE_BYTES = 1 << 20
"""The capacity asked for each worker's result pipe (Linux's default limit for an
unprivileged process); the default, 64 KiB, is less than one task's result."""

DEPTH = 2
"""Tasks sent to a worker at a time: the one it runs and one queued behind it."""

WORKER_DIED = "a worker process died (out of memory or killed); run again"


def _widen(fd: int) -> None:
    """Ask for a pipe of `RESULT_PIPE_BYTES`, where the system lets us. A worker writes
    a result (about 0.5 MB for a 4 MiB range) whole before it takes its next task: with
    64 KiB it would wait until this process, busy with a task of its own, read it."""
    try:
        import fcntl  # function-level: POSIX only, and only for worker processes
    except ImportError:
        return
    setsize = getattr(fcntl, "F_SETPIPE_SZ", None)  # Linux only
    if setsize is not None:
        with contextlib.suppress(OSError):  # over the system's limit for this user: the default size
            fcntl.fcntl(fd, setsize, RESULT_PIPE_BYTES)


def _start_method() -> str:
    """How worker processes start: `fork` when this process has one thread (Linux, where
    /proc tells), so a worker starts at once with everything imported; else `forkserver`,
    whose server is a fresh interpreter (0.2-0.3 s to start in a fresh run, before the
    first worker), because forking a process with threads copies the locks they hold."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError):
            if len(list(Path("/proc/self/task").iterdir())) == 1:
                return "fork"
    return "forkserver"


def _preload() -> list[str]:
    """What the fork server imports once, before it forks workers (a worker inherits it
    all): the task code, and a run built for the default options (`preload`). Not the
    other modules this process has imported: in a fresh `turnspec validate` the fork
    server would take longer to fork the first worker than the worker takes to import
    what it needs (measured: 0.05 s later in all)."""
    return ["conformance.parallel.chunks", "conformance.parallel.preload"]


class _Slot:
    """A task handed to `Processes`: the worker it was sent to (None: not sent), and its
    result once there is one."""

    __slots__ = ("here", "result", "task", "worker")

    def __init__(self, task: Task, here: bool) -> None:
        self.task = task
        self.here = here  # run in this process, never sent
        self.worker: _Worker | None = None
        self.result: Result | None = None


class _Worker:
    """One worker process (`chunks.serve`): tasks go in through one pipe, results come
    back through another, in the order sent."""

    def __init__(self, ctx: Any, options: Options, others: Sequence[_Worker] = ()) -> None:
        task_r, self.tasks = ctx.Pipe(duplex=False)
        self.results, result_w = ctx.Pipe(duplex=False)
        _widen(self.results.fileno())
        # a forked worker holds copies of this process's ends of its pipes and of the
        # workers' before it: it closes them, so that each pipe ends when this process
        # closes it (or dies)
        mine = [self.tasks, self.results, *(c for w in others for c in (w.tasks, w.results))]
        inherited = mine if ctx.get_start_method() == "fork" else []
        off = switched_off()  # rule-level mutation testing's switch, for a worker the fork server starts
        self.proc = ctx.Process(target=work, args=(task_r, result_w, options, inherited, off), daemon=True)
        self.proc.start()
        task_r.close()  # the worker's ends: the worker holds the only copies now
        result_w.close()
        self.sent: deque[_Slot] = deque()

    def collect(self, block: bool) -> None:
        """Take the results that are ready (`block`: wait for one)."""
        # function-level import: multiprocessing is loaded only when workers run
        from multiprocessing.connection import wait

        while self.sent and (block or self.results.poll()):
            if block and not self.results.poll():
                wait([self.results, self.proc.sentinel])
            try:
                data = self.results.recv_bytes()
            except (EOFError, OSError):
                raise InputError(WORKER_DIED) from None
            if data[:1] == b"!":
                raise RuntimeError(f"a worker process failed:\n{data[1:].decode('utf-8', 'replace')}")
            self.sent.popleft().result = data
            block = False

    def close(self) -> None:
        # the worker reads the end of its task pipe (or fails to write its next result)
        # and returns; one that does not is stopped
        for conn in (self.tasks, self.results):
            conn.close()
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.terminate()
            self.proc.join()


def _ready(slot: _Slot) -> bool:
    return slot.result is not None


class Processes:
    """`jobs - 1` worker processes, and this process as the last job.

    This process runs the session phase, which is serial and light, so it would be idle
    most of the time it waits for the next result in order; it runs a task no worker has
    yet instead. Each worker holds `DEPTH` tasks at a time (the one it runs and one
    queued), so none waits while this process runs one of its own. One worker process
    more would only take turns with this one on the same cores, and send each of its
    results through a pipe and the codec (`--jobs 2` on 2 cores, `nox -s bench`: 1.45x
    the speed of one process with two workers, 1.7x like this). The tasks this process
    runs skip the codec (`chunks.task_result`).

    Why not `concurrent.futures.ProcessPoolExecutor` (used here before): a task it has
    queued for a worker cannot be taken back (`Future.cancel` fails once the task is on
    its call queue), its result pipe cannot be widened without private attributes, and
    its two threads here take the GIL from this process's own work at every result.

    The workers are forked from this process when it has one thread (`_start_method`),
    else started by `forkserver`, which builds a run for the default options once
    (`preload`)."""

    def __init__(self, jobs: int, options: Options) -> None:
        # function-level import: only a run with --jobs > 1 starts processes
        import multiprocessing

        ctx = multiprocessing.get_context(_start_method())
        if ctx.get_start_method() == "forkserver":
            ctx.set_forkserver_preload(_preload())
        self.options = options
        self.run: CanonicalRun | None = None  # the parent's run, once it exists
        self.live: deque[_Slot] = deque()  # submitted and not yet taken, in order
        self.pending: deque[_Slot] = deque()  # submitted, neither sent nor run yet, in order
        self.workers: list[_Worker] = []
        try:
            for _ in range(max(1, jobs - 1)):
                self.workers.append(_Worker(ctx, options, self.workers))
        except BaseException:
            self.close()
            raise

    def _here(self, task: Task) -> Result:
        """`task` run in this process, with its run (no second build, no JSON)."""
        return task_result(task, self.options, run=self.run)

    def submit(self, task: Task) -> Thunk:
        # the first task runs here, lazily, while the workers start (a few ms forked;
        # 0.2-0.3 s through a fresh fork server), so no one waits idle
        slot = _Slot(task, here=not self.live and not self.pending and not any(w.sent for w in self.workers))
        self.live.append(slot)
        if not slot.here:
            self.pending.append(slot)
        self._send()
        return lambda: self._take(slot)

    def _send(self) -> None:
        """Give each worker tasks, in order, up to `DEPTH`."""
        for w in self.workers:
            while len(w.sent) < DEPTH and self.pending:
                slot = self.pending[0]
                try:
                    w.tasks.send(slot.task)
                except OSError:  # the worker's end of the pipe is closed: it is gone
                    raise InputError(WORKER_DIED) from None
                self.pending.popleft()
                slot.worker = w
                w.sent.append(slot)

    def _collect(self) -> None:
        for w in self.workers:
            w.collect(block=False)
        self._send()

    def _take(self, slot: _Slot) -> Result:
        try:
            while not _ready(slot):
                worker = slot.worker
                if worker is None:  # not sent: run it here
                    if not slot.here:
                        self.pending.remove(slot)
                    return self._here(slot.task)
                self._collect()
                if _ready(slot):
                    break
                if self.pending:  # a worker runs it: meanwhile, the next unsent task here
                    other = self.pending.popleft()
                    other.result = self._here(other.task)
                    self._collect()
                else:
                    worker.collect(block=True)
                    self._send()
            assert slot.result is not None
            return slot.result
        finally:
            self.live.remove(slot)  # the oldest: results are taken in order

    def close(self) -> None:
        # every task pipe first: a worker forked after another holds copies of that one's
        # ends, so it must be gone before that one can read the end of its pipe
        for w in self.workers:
            w.tasks.close()
        for w in self.workers:
            w.close()
        self.workers = []


@dataclass
class Planned:
    """A canonical unit cut into tasks, with its size (the cut and the stored results'
    keys are functions of it)."""

    tasks: list[Task]
    size: int


Stat = Callable[[str], int | None]
"""The size of a path (None: validate it in this process)."""


def local_stat(path: str) -> int | None:
    try:
        return Path(path).stat().st_size
    except OSError:
        return None


def _problem(problems: list[str] | None, message: str) -> None:
    if problems is None:
        raise InputError(message)
    problems.append(message)


def run_units(
    units: Sequence[tuple[str | Path, Format]],
    options: Options,
    backend: Callable[[int, int], Backend],
    *,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    store: ResumeStore | None = None,
    stat: Stat = local_stat,
    window: int = 4,
    files: list[FileStats] | None = None,
    progress: ProgressHook | None = None,
    problems: list[str] | None = None,
) -> Iterator[Finding]:
    """The findings of `units`, identical to `api.iter_validate` over them.

    `backend(n_tasks, n_bytes)` makes the backend once the tasks are known (so a small
    run can stay in this process); `window` tasks per backend slot run ahead.
    """
    plans: list[Planned | None] = []
    for path, f in units:
        name = str(path)
        size = stat(name) if f.name == "canonical" and not is_stdin(path) else None
        if size is None:
            plans.append(None)
            continue
        plans.append(Planned(plan(name, size, name.endswith(".jsonl"), chunk_bytes), size))
    n_tasks = sum(len(p.tasks) for p in plans if p is not None)  # before the tail cut: it decides the backend
    n_bytes = sum(p.size for p in plans if p is not None)
    cut = [p for p in plans if p is not None]  # the run's last ranges, cut small (`cut_run_tail`)
    for p, tasks in zip(cut, cut_run_tail([(p.tasks, p.size) for p in cut], chunk_bytes), strict=True):
        p.tasks = tasks
    if store is not None:  # each task proves what it read (`store` module doc)
        for p in cut:
            p.tasks = with_digest(p.tasks)
    queue = [(t, p.size) for p in plans if p is not None for t in p.tasks]
    pipe = _Pipeline(queue, backend(n_tasks, n_bytes), store, window)
    try:
        pipe.fill()  # the workers get their first tasks now, while this process builds its run
        runs: dict[str, FormatRun] = {}
        for (path, f), planned in zip(units, plans, strict=True):
            run = runs.get(f.name)
            if run is None:
                run = runs[f.name] = f.start(options)
                if isinstance(run, CanonicalRun) and isinstance(pipe.backend, InProcess | Processes):
                    pipe.backend.run = run
            stats = FileStats(str(path), f.name)
            if files is not None:
                files.append(stats)
            if planned is None or not isinstance(run, CanonicalRun):
                try:
                    yield from read_unit(run, Path(path), stats, progress)
                except InputError as exc:
                    _problem(problems, str(exc))
                continue
            yield from run.take_pending()
            yield from _file(run, str(path), len(planned.tasks), pipe, stats, progress, problems)
        for run in runs.values():
            yield from run.finish()
    finally:
        pipe.close()


def _file(
    run: CanonicalRun,
    path: str,
    n: int,
    pipe: _Pipeline,
    stats: FileStats,
    progress: ProgressHook | None,
    problems: list[str] | None,
) -> Iterator[Finding]:
    """The session phase of one file's tasks, in order, with the file's line numbers."""
    line0 = 0  # newlines before the current task's range
    fast = run.fast
    crlf_seen = False
    failed = False

    def task_findings(doc: dict[str, Any], off: int) -> Iterator[Finding]:
        nonlocal crlf_seen
        try:
            for item in doc["items"]:
                kind = item[0]
                if kind == "s":  # a message the worker's fast path cleared
                    stats.records += 1
                    it = decode_item(item, item[2] + off)
                    if progress is not None:
                        progress(it.size)
                    if fast is not None and fast.session(path, it):
                        fast.cleared += 1
                    else:  # a session rule may report: the exact session phase (no local findings)
                        yield from run.session(item_facts(path, it))
                    continue
                if kind == "b":  # consecutive messages the worker's fast path cleared
                    b = decode_batch(item, item[2] + off)
                    stats.records += len(b.ids)
                    if progress is not None:
                        progress(b.size)
                    if fast is not None:
                        yield from fast.session_batch(path, b)
                    else:
                        for j in range(len(b.ids)):
                            yield from run.session(item_facts(path, b.item(j)))
                    continue
                if kind == "n":  # lines cleared in a run with no session rule: counted only
                    stats.records += item[1]
                    if fast is not None:
                        fast.cleared += item[1]
                    if progress is not None:
                        progress(item[2])
                    continue
                if kind == "f":
                    if item[3] == CRLF.id:
                        if crlf_seen:
                            continue  # reported once per file, by the first range that met it
                        crlf_seen = True
                    yield finding(path, item[1:], off)
                    continue
                _, size, line, pointer = item[:4]
                stats.records += 1
                if progress is not None and size:
                    progress(size)
                rec = Record(path, line + off, pointer, None, size)
                if kind == "t":
                    rec.value, rec.raw = json.loads(item[4]), item[5].encode("utf-8")
                    yield from run.check_tool_definition(rec)
                    continue
                for f in item[4]:
                    yield finding(path, f, off)
                if item[5] is not None:
                    yield from run.session(decode_facts(rec, item[5]))
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise InputError(
                f"{path}: a stored result is damaged ({type(exc).__name__}); remove the --resume folder"
            ) from None

    # Task results are many small lists and no reference cycles (reference counting frees
    # them all), and the run state only grows: the cyclic collector would walk them
    # again and again (about a tenth of this phase). So it is paused here and runs only
    # while the caller holds a finding (or when this generator ends).
    gc_on = gc.isenabled()
    try:
        for k in range(n):
            gc.disable()
            doc = pipe.next()
            if failed:
                continue
            if "error" in doc:
                failed = True
                _problem(problems, str(doc["error"]))
                continue
            # a range after the first numbers its lines from 2, as if behind one synthetic
            # line (the exact reader reads one there; chunks module doc)
            found = list(task_findings(doc, line0 - 1 if k > 0 else 0))
            line0 += doc["lines"]
            if found:
                if gc_on:
                    gc.enable()
                yield from found
    finally:
        if gc_on:
            gc.enable()


class _Pipeline:
    """Tasks submitted in order, at most `window` ahead of the one being consumed;
    results come back in order, from the store when it has them."""

    def __init__(self, queue: list[tuple[Task, int]], backend: Backend, store: ResumeStore | None, window: int) -> None:
        self.queue = deque(queue)
        self.backend = backend
        self.store = store
        self.window = max(1, window)
        self.running: deque[tuple[Task, int, Thunk | bytes]] = deque()

    def fill(self) -> None:
        """Submit tasks up to the window."""
        while self.queue and len(self.running) < self.window:
            task, size = self.queue.popleft()
            cached = self.store.get(task, size) if self.store is not None else None
            self.running.append((task, size, cached if cached is not None else self.backend.submit(task)))

    def next(self) -> dict[str, Any]:
        self.fill()
        task, size, got = self.running.popleft()
        fresh = not isinstance(got, bytes)
        data = got() if callable(got) else got
        self.fill()
        doc: dict[str, Any] = orjson.loads(data) if isinstance(data, bytes) else data
        if fresh and self.store is not None and "error" not in doc:
            self.store.put(
                task, size, data if isinstance(data, bytes) else orjson.dumps(doc), doc["read"], doc["digest"]
            )
        return doc

    def close(self) -> None:
        self.backend.close()


def processes(jobs: int, options: Options, chunk_bytes: int) -> Callable[[int, int], Backend]:
    """The backend of `--jobs`: worker processes when there is enough work to share."""

    def make(n_tasks: int, n_bytes: int) -> Backend:
        if jobs <= 1 or n_tasks <= 1 or not worth_sharing(n_bytes, chunk_bytes, n_tasks):
            return InProcess(options)
        return Processes(min(jobs, n_tasks), options)

    return make


def validate_units(
    units: Sequence[tuple[str | Path, Format]],
    options: Options,
    *,
    jobs: int,
    resume: Path | None = None,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    files: list[FileStats] | None = None,
    progress: ProgressHook | None = None,
    problems: list[str] | None = None,
    inputs: Sequence[str] = (),
    notify: Callable[[str], None] | None = None,
    summary: Callable[[str], None] | None = None,
) -> Iterator[Finding]:
    """`run_units` on local worker processes (`--jobs`), with an optional `--resume` store
    (which may not overlap `inputs`, the paths the user named, nor any unit); `notify`
    receives a line for each stored result that is not used (`store` module doc), `summary`
    one line once the run is done: how many parts the store answered (`ResumeStore.summary`)."""
    store = None
    if resume is not None:
        # function-level import: the store (and importlib.metadata, for the version in
        # its keys) is loaded only when --resume is asked
        from .store import ResumeStore

        store = ResumeStore(resume, options, [*inputs, *(str(p) for p, _ in units)], notify=notify)
    yield from run_units(
        units,
        options,
        processes(jobs, options, chunk_bytes),
        chunk_bytes=chunk_bytes,
        store=store,
        window=4 * max(1, jobs) + 8,  # room for this process to run tasks (`Processes`) while each worker keeps two
        files=files,
        progress=progress,
        problems=problems,
    )
    if store is not None and summary is not None:
        summary(store.summary())
