"""`--jobs`, `--resume` and byte-range tasks report exactly what one process reports.

The oracle is the sequential path (`validate(..., jobs=1)`, `CanonicalRun.validate`),
which shares no code with the task reader, the line-number fix-up, the per-file CRLF
rule or the result codec. Every comparison is of the whole JSON report, byte for byte.
Most cases run the tasks in this process with tiny ranges (so boundaries fall inside
sessions, inside tool pairs and inside lines); a few run real worker processes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance import Options, Selection, validate
from conformance.api import Report, expand
from conformance.benchmarks.synthetic import PRICING_YAML, messages
from conformance.core.errors import InputError
from conformance.formats.canonical.engine import SessionFacts
from conformance.parallel import chunks
from conformance.parallel import engine as parallel_engine
from conformance.parallel.engine import validate_units
from conformance.parallel.store import read_entry

HERE = Path(__file__).parent
RULES = HERE / "rules" / "canonical"
FIXTURES = sorted(p for p in RULES.iterdir() if p.suffix in (".jsonl", ".json") and p.name != "tools.json")
ALL_RULES = Options(tools=RULES / "tools.json", pricing=RULES / "pricing.yaml")


def report_bytes(r: Report) -> bytes:
    return orjson.dumps(r.as_dict())


def sequential(paths: list[Path], options: Options = ALL_RULES) -> bytes:
    return report_bytes(validate(paths, options, jobs=1))


def _through_json(task: chunks.Task, options: Options, opener: Any = chunks.open_local, run: Any = None) -> Any:
    """A task's result as a worker process sends it: its JSON, read back."""
    return orjson.loads(chunks.run_task(task, options, opener, run))


def in_process(paths: list[Path], options: Options, chunk_bytes: int, *, codec: bool = True) -> bytes:
    """The task engine in this process (one job), with ranges of `chunk_bytes`; each
    result through the codec a worker's takes (`codec`), or as the values this process
    consumes when it runs a task itself."""
    r = Report()
    skipped: list[Path] = []
    units = expand(paths, None, skipped, r.problems)
    with mock.patch.object(parallel_engine, "task_result", _through_json) if codec else contextlib.nullcontext():
        for f in validate_units(units, options, jobs=1, chunk_bytes=chunk_bytes, files=r.files, problems=r.problems):
            r.add(f)
    r.skipped = [str(p) for p in skipped]
    return report_bytes(r)


def corpus(n: int, seed: int, session_len: int = 9) -> list[bytes]:
    return [orjson.dumps(m) + b"\n" for m in messages(n, seed=seed, session_len=session_len)]


def defects(lines: list[bytes], seed: int) -> list[bytes]:
    """Every kind of defect the reader and the session rules see, at random places."""
    r = random.Random(seed)
    out = list(lines)
    for _ in range(max(1, len(out) // 6)):
        i = r.randrange(len(out))
        kind = r.randrange(12)
        line = out[i]
        if kind == 0:
            out[i] = line[: len(line) // 2] + b"\n"  # broken JSON
        elif kind == 1:
            out[i] = line.rstrip(b"\n") + b"\r\n"  # CRLF (reported once per file)
        elif kind == 2:
            out[i] = b"\xef\xbb\xbf" + line  # a BOM in the middle: not a BOM finding
        elif kind == 3:
            out.insert(i, b"\n")  # blank line
        elif kind == 4:
            out.insert(i, out[r.randrange(len(out))])  # repeated message: TS202, TS203, TS207...
        elif kind == 5:
            j = r.randrange(len(out))
            out[i], out[j] = out[j], out[i]  # out of order: TS203, TS204, TS205
        elif kind == 6:
            del out[i]  # a lost tool_result: TS208, or a lost tool_use: TS205
        elif kind == 7:
            out[i] = line.replace(b'"role"', b'"role","role"', 1)  # not JSON
        elif kind == 8:
            out[i] = line.replace(b'"schema_version":1', b'"schema_version":1,"schema_version":1')  # duplicate key
        elif kind == 9:
            out[i] = line.replace(b'"content":[', b'"content":[{"type":"text","text":"\xff"},', 1)  # bad UTF-8
        elif kind == 10:
            out[i] = line.replace(b'"role":"user"', b'"role":"tool"')  # TS1xx
        else:
            out[i] = b'{"x": NaN}\n'
    if r.random() < 0.5 and out:
        out[-1] = out[-1].rstrip(b"\n")[:-3]  # the file ends inside a value
    return out


# -- the projection the session phase reads ------------------------------------------------


def test_the_facts_codec_carries_every_field_of_session_facts() -> None:
    # a field added to SessionFacts must be sent to the parent too
    assert tuple(f.name for f in dataclasses.fields(SessionFacts)) == chunks.FACT_FIELDS


def test_a_session_rule_reading_an_unprojected_field_fails_in_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conformance.formats.canonical import engine

    def nosy(ctx: Any, m: SessionFacts, sess: Any, state: Any, emit: Any) -> None:
        m.msg["content"]  # the read is the test

    info = engine.SESSION.rules[0][0]
    monkeypatch.setattr(engine.SESSION, "rules", [*engine.SESSION.rules, (info, frozenset(), nosy)])
    f = tmp_path / "a.jsonl"
    f.write_bytes(b"".join(corpus(3, 1)))
    with pytest.raises(KeyError):
        # the sequential exact path runs the same projection (the fast path clears a clean
        # line by the rules' preconditions without calling them, hence exact=True)
        validate([f], Options(exact=True), jobs=1)


# -- differential: rule fixtures, defects, hypothesis ------------------------------------


@pytest.mark.parametrize("codec", [True, False], ids=["json", "values"])
@pytest.mark.parametrize("chunk_bytes", [1, 97, 1000])
def test_every_rule_fixture_in_ranges(chunk_bytes: int, codec: bool) -> None:
    # all fixtures in one run: sessions and the run-wide id sets also cross files
    assert in_process(FIXTURES, ALL_RULES, chunk_bytes, codec=codec) == sequential(FIXTURES)


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.name)
def test_each_rule_fixture_alone_in_one_byte_ranges(fixture: Path) -> None:
    assert in_process([fixture], ALL_RULES, 1) == sequential([fixture])


@pytest.mark.parametrize("start", ["fork", "forkserver"])
@pytest.mark.parametrize("jobs", [2, 3])
def test_worker_processes_on_fixtures_and_a_defective_corpus(
    tmp_path: Path, jobs: int, start: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if start == "fork" and sys.platform != "linux":
        pytest.skip("workers are forked only on Linux")
    monkeypatch.setattr(parallel_engine, "_start_method", lambda: start)
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"".join(defects(corpus(400, 5), 5)))
    other = tmp_path / "other.jsonl"
    other.write_bytes(b"".join(defects(corpus(60, 6), 6)))
    peers = [HERE / "gpt2099" / "fixtures" / "GP101-bad-id.jsonl", HERE / "geppetto" / "fixtures" / "GE006_bad.yaml"]
    inputs = [*FIXTURES, big, *peers, other]
    want = sequential(inputs)
    got = report_bytes(validate(inputs, ALL_RULES, jobs=jobs, chunk_bytes=4096))
    assert got == want
    assert orjson.loads(want)["summary"]["errors"] > 50  # the corpus is really defective


def _spy_processes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the worker counts of the `Processes` backends a run starts."""
    from conformance.parallel import engine

    started: list[int] = []

    class Spy(engine.Processes):
        def __init__(self, jobs: int, options: Options) -> None:
            started.append(jobs)
            super().__init__(jobs, options)

    monkeypatch.setattr(engine, "Processes", Spy)
    return started


def test_many_small_files_stay_in_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks much smaller than a chunk cost more to ship to a worker than to run here
    (`parallel.MIN_TASK_BYTES`): a folder of small session files runs in this process
    with `--jobs 2`, and its report is the one of `--jobs 1`; a large file still goes
    to workers."""
    lines = corpus(1200, 3)
    folder = tmp_path / "sessions"
    folder.mkdir()
    for k in range(0, len(lines), 30):  # 40 files of about 30 KB
        (folder / f"s{k:05d}.jsonl").write_bytes(b"".join(lines[k : k + 30]))
    started = _spy_processes(monkeypatch)
    want = sequential([folder])
    assert report_bytes(validate([folder], ALL_RULES, jobs=2)) == want
    assert started == []
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"".join(lines) * 2)
    assert report_bytes(validate([big], ALL_RULES, jobs=2, chunk_bytes=256 * 1024)) == sequential([big])
    assert started == [2]


@pytest.mark.parametrize("seed", range(6))
def test_defective_corpora_in_ranges(tmp_path: Path, seed: int) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(defects(corpus(80, seed), seed)))
    want = sequential([f])
    for chunk_bytes in (60, 300, 2500, 20000):
        assert in_process([f], ALL_RULES, chunk_bytes) == want, chunk_bytes
        assert in_process([f], ALL_RULES, chunk_bytes, codec=False) == want, chunk_bytes


def test_a_line_longer_than_the_limit_across_ranges(tmp_path: Path) -> None:
    lines = corpus(30, 3)
    lines[10] = lines[10].rstrip(b"\n") + b" " * 5000 + b"\n"
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(lines))
    opts = Options(max_line_bytes=3000)
    want = sequential([f], opts)
    assert b"TS008" in want
    for chunk_bytes in (1, 700, 4000):
        assert in_process([f], opts, chunk_bytes) == want


@pytest.mark.parametrize(
    "selection", [Selection(select=("TS0",)), Selection(ignore=("TS2",)), Selection(ignore=("TS004",), strict=True)]
)
def test_selections(tmp_path: Path, selection: Selection) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(defects(corpus(60, 11), 11)))
    opts = dataclasses.replace(ALL_RULES, selection=selection)
    assert in_process([f], opts, 500) == sequential([f], opts)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n=st.integers(1, 40),
    seed=st.integers(0, 10_000),
    session_len=st.integers(2, 12),
    chunk_bytes=st.integers(40, 5000),
    broken=st.booleans(),
)
def test_generated_corpora_any_cut(
    tmp_path_factory: pytest.TempPathFactory, n: int, seed: int, session_len: int, chunk_bytes: int, broken: bool
) -> None:
    lines = corpus(n, seed, session_len)
    if broken:
        lines = defects(lines, seed)
    f = tmp_path_factory.mktemp("h") / "c.jsonl"
    f.write_bytes(b"".join(lines))
    assert in_process([f], ALL_RULES, chunk_bytes) == sequential([f])


def test_a_task_range_owns_the_lines_that_begin_in_it(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"aa\nbbb\n\ncc")
    owned = []
    for start, end in ((0, 3), (3, 5), (5, 8), (8, chunks.UNTIL_EOF)):
        with f.open("rb") as fh:
            r = chunks._Range(fh, start, end)
            got = []
            while line := r.readline():
                got.append(line)
            owned.append((got, r.newlines))
    # after the first range, a synthetic blank line comes first (module doc)
    assert owned == [([b"aa\n"], 1), ([b"\n", b"bbb\n"], 1), ([b"\n", b"\n"], 1), ([b"\n", b"cc"], 0)]


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(0, 5000),
    chunk=st.integers(1, 700),
    tail=st.integers(0, 3000),
    piece=st.integers(1, 400),
)
def test_the_tail_cut_covers_the_same_bytes_in_order(size: int, chunk: int, tail: int, piece: int) -> None:
    tasks = chunks.plan("f.jsonl", size, True, chunk)
    cut, covered = chunks.cut_tail(tasks, size, tail, piece)
    # the same ranges, contiguous, in order, ending where the file's last range ended
    assert cut[0].start == 0 and cut[-1].end == tasks[-1].end
    assert all(a.end == b.start for a, b in itertools.pairwise(cut))
    assert all(t.path == "f.jsonl" and not t.whole for t in cut)

    # the fewest last ranges that hold `tail` bytes (or all) are cut in ranges of at
    # most `piece` bytes; the ranges before them are untouched
    def span(t: chunks.Task) -> int:
        return (size if t.end == chunks.UNTIL_EOF else t.end) - t.start

    m = 0
    while m < len(tasks) and sum(map(span, tasks[len(tasks) - m :])) < tail:
        m += 1
    k = len(tasks) - m
    assert cut[:k] == tasks[:k]
    assert covered == sum(map(span, tasks[k:]))
    assert all(span(t) <= piece for t in cut[k:])
    assert len(cut) - k == sum(max(1, -(-span(t) // piece)) for t in tasks[k:])


def test_the_run_tail_reaches_back_into_earlier_files() -> None:
    a, b = chunks.plan("a.jsonl", 10_000, True, 1000), chunks.plan("b.jsonl", 100, True, 1000)
    ta, tb = chunks.cut_run_tail([(a, 10_000), (b, 100)], 1000)
    assert tb == [chunks.Task("b.jsonl", 0, chunks.UNTIL_EOF)]  # 100 bytes: one piece of up to 250
    # the other 1,900 bytes of the two chunks' tail come from the end of a: its last two ranges
    assert ta[:8] == a[:8] and [(t.start, t.end) for t in ta[8:]] == [
        (8000, 8250), (8250, 8500), (8500, 8750), (8750, 9000),
        (9000, 9250), (9250, 9500), (9500, 9750), (9750, chunks.UNTIL_EOF),
    ]  # fmt: skip


def test_the_tail_cut_leaves_a_whole_document_alone() -> None:
    whole = chunks.plan("f.json", 9000, False, 100)
    assert chunks.cut_tail(whole, 9000, 500, 10) == (whole, 0)


@pytest.mark.parametrize("seed", range(30))
def test_this_process_runs_the_tasks_no_worker_has_taken(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """`Processes` on scripted workers that finish a task at random moments: the first
    task runs here; each task runs once, here or in a worker; a worker never holds more
    than `DEPTH`; while waiting for a worker's result this process runs unsent tasks;
    results come back in order, whoever ran them."""
    from collections import deque

    rng = random.Random(seed)
    ran_here: list[int] = []
    workers: list[Any] = []

    class Worker:
        def __init__(self, ctx: Any, options: Options, others: Any) -> None:
            self.sent: deque[Any] = deque()
            self.tasks = self
            self.ran: list[int] = []
            workers.append(self)

        def send(self, task: chunks.Task) -> None:
            assert len(self.sent) < parallel_engine.DEPTH
            self.ran.append(task.start)

        def collect(self, block: bool) -> None:
            # this process waits only when it has no unsent task to run meanwhile
            assert not block or not backend.pending
            while self.sent and (block or rng.random() < 0.3):
                slot = self.sent.popleft()
                slot.result = ("worker", slot.task.start)
                block = False

        def close(self) -> None:
            pass

    def here(task: chunks.Task, options: Options, opener: Any = None, run: Any = None) -> Any:
        ran_here.append(task.start)
        # no worker is short of tasks while some wait unsent
        assert all(len(w.sent) == parallel_engine.DEPTH for w in workers) or not backend.pending
        for w in workers:  # meanwhile, the workers may finish some
            w.collect(block=False)
        return ("here", task.start)

    monkeypatch.setattr(parallel_engine, "_Worker", Worker)
    monkeypatch.setattr(parallel_engine, "task_result", here)
    jobs = rng.choice([2, 3, 5])
    backend = parallel_engine.Processes(jobs, Options())
    assert len(workers) == jobs - 1
    n, window = rng.randrange(1, 40), rng.randrange(1, 12)
    thunks: deque[Any] = deque()
    got = []
    for k in range(n):  # as `_Pipeline` does: submit up to the window, take in order
        thunks.append(backend.submit(chunks.Task("f.jsonl", k, k + 1)))
        while len(thunks) >= window:
            got.append(thunks.popleft()())
    got += [t() for t in thunks]
    backend.close()
    assert [k for _, k in got] == list(range(n))
    assert got[0] == ("here", 0)
    by_workers = sorted(k for w in workers for k in w.ran)
    assert sorted(ran_here + by_workers) == list(range(n))  # each once
    assert [k for who, k in got if who == "here"] == sorted(ran_here)
    assert not backend.live and not backend.pending


def test_a_worker_sends_its_results_in_order_and_a_bug_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import multiprocessing
    import threading

    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(corpus(30, 2)))
    real = chunks.run_task

    def buggy(task: chunks.Task, options: Options, *args: Any) -> bytes:
        if task.start == 7:
            raise ZeroDivisionError("a bug")
        return real(task, options, *args)

    monkeypatch.setattr(chunks, "run_task", buggy)
    task_r, task_w = multiprocessing.Pipe(duplex=False)
    result_r, result_w = multiprocessing.Pipe(duplex=False)
    t = threading.Thread(target=chunks.serve, args=(task_r, result_w, ALL_RULES))
    t.start()
    size = f.stat().st_size
    for task in (chunks.Task(str(f), 0, 7), chunks.Task(str(f), 7, 100), chunks.Task(str(f), 100, size)):
        task_w.send(task)
    first, bug, last = (result_r.recv_bytes() for _ in range(3))
    assert orjson.loads(first) == orjson.loads(real(chunks.Task(str(f), 0, 7), ALL_RULES))
    assert bug.startswith(b"!Traceback") and b"ZeroDivisionError: a bug" in bug
    assert orjson.loads(last) == orjson.loads(real(chunks.Task(str(f), 100, size), ALL_RULES))
    task_w.send(None)  # the end
    t.join(timeout=30)
    assert not t.is_alive()


def test_a_worker_that_dies_is_one_line_error(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(corpus(200, 3)))
    backend = parallel_engine.Processes(2, Options())
    try:
        thunks = [backend.submit(t) for t in chunks.plan(str(f), f.stat().st_size, True, 4096)]
        backend.workers[0].proc.kill()
        thunks[0]()  # the first runs here
        with pytest.raises(InputError, match="a worker process died"):
            for t in thunks[1:]:
                t()
    finally:
        backend.close()
    # a task sent to a worker that is gone: the same error, not a broken pipe
    backend = parallel_engine.Processes(2, Options())
    try:
        backend.workers[0].proc.kill()
        backend.workers[0].proc.join()
        with pytest.raises(InputError, match="a worker process died"):
            for t in chunks.plan(str(f), f.stat().st_size, True, 4096):
                backend.submit(t)
    finally:
        backend.close()


def test_workers_are_forked_only_from_a_process_of_one_thread() -> None:
    import threading

    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert parallel_engine._start_method() == "forkserver"
    finally:
        release.set()
        other.join()

    def threads() -> int:
        return len(list(Path("/proc/self/task").iterdir())) if sys.platform == "linux" else 2

    deadline = time.monotonic() + 5
    while threads() > 1 and time.monotonic() < deadline:  # the joined thread may still be exiting
        time.sleep(0.01)
    before = threads()
    method = parallel_engine._start_method()
    if threads() == before:  # no other thread came or went meanwhile
        assert method == ("fork" if before == 1 else "forkserver")


def test_the_fork_server_builds_a_default_run_before_it_forks_workers() -> None:
    """Every module the fork server preloads imports; `preload` leaves the run for the
    default options built (a worker forked from it starts with it), and a build that
    fails there does not take the fork server down (the worker reports it)."""
    code = """if True:
        import importlib, sys
        from conformance import Options
        from conformance.parallel import chunks, engine
        names = engine._preload()
        assert "conformance.parallel.preload" in names
        for name in names:
            importlib.import_module(name)
        assert chunks._RUN is not None and chunks._RUN[0] == Options()
        assert chunks.canonical_run(Options()) is chunks._RUN[1]
    """
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    failing = """if True:
        from conformance.parallel import chunks
        def boom(options): raise RuntimeError("no schemas")
        chunks.canonical_run = boom
        import conformance.parallel.preload
        assert chunks._RUN is None
    """
    subprocess.run([sys.executable, "-c", failing], check=True, timeout=120)


def test_a_worker_ignores_ctrl_c(tmp_path: Path) -> None:
    """SIGINT reaches every process of the group: a worker leaves it to the parent."""
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(corpus(200, 3)))
    tasks = chunks.plan(str(f), f.stat().st_size, True, 4096)
    backend = parallel_engine.Processes(2, Options())
    try:
        thunks = [backend.submit(t) for t in tasks]
        got = [thunks[0](), thunks[1]()]  # the second is the worker's: it is up and serving
        assert isinstance(got[1], bytes)
        os.kill(backend.workers[0].proc.pid, signal.SIGINT)
        got += [t() for t in thunks[2:]]
        # each result is the worker's JSON, or this process's values
        assert any(isinstance(g, bytes) for g in got)
        for task, g in zip(tasks, got, strict=True):
            want = chunks.run_task(task, Options()) if isinstance(g, bytes) else chunks.task_result(task, Options())
            assert g == want
        assert backend.workers[0].proc.is_alive()
    finally:
        backend.close()


@pytest.mark.skipif(sys.platform != "linux", reason="F_GETPIPE_SZ is Linux's")
def test_worker_results_come_through_a_pipe_wider_than_one_result() -> None:
    import fcntl

    backend = parallel_engine.Processes(3, Options())
    try:
        assert len(backend.workers) == 2
        for w in backend.workers:
            assert fcntl.fcntl(w.results.fileno(), fcntl.F_GETPIPE_SZ) >= parallel_engine.RESULT_PIPE_BYTES
    finally:
        backend.close()
    assert not backend.workers


# -- resume ------------------------------------------------------------------------------


def _cli(*args: str, cwd: Path) -> subprocess.Popen[bytes]:
    code = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def test_an_interrupted_run_resumes_to_the_same_report(tmp_path: Path) -> None:
    data = tmp_path / "in"
    data.mkdir()
    for k in range(3):
        (data / f"part{k}.jsonl").write_bytes(b"".join(defects(corpus(300, 20 + k, 7), 20 + k)))
    (data / "p.yaml").write_text(PRICING_YAML)
    whole = _cli("validate", "-o", "json", "-j", "1", str(data), cwd=tmp_path).communicate()[0]
    store = tmp_path / "store"
    args = ("validate", "-o", "json", "-j", "2", "--chunk-bytes", "20000", "--resume", str(store), str(data))
    p = _cli(*args, cwd=tmp_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(store.glob("*.tsr"))) < 3:
        time.sleep(0.01)
    p.kill()  # the run dies mid-way, as under SIGKILL or a lost machine
    try:
        killed_out, _ = p.communicate(timeout=30)  # its workers exit with it (they hold its pipes)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)  # whatever is left of the group this test started
    assert killed_out == b""  # it never reached its report
    kept = {q.name for q in store.glob("*.tsr")}
    total = sum(len(chunks.plan(str(f), f.stat().st_size, True, 20000)) for f in data.glob("*.jsonl"))
    assert 0 < len(kept) < total, "the run was not interrupted mid-way"
    for q in store.glob("*.tsr"):  # entries are whole (a killed write leaves only its temporary file)
        assert {"lines", "items"} <= set(read_entry(q))
    again = _cli(*args, cwd=tmp_path)
    out, err = again.communicate()
    assert again.returncode == 1, err
    assert out == whole
    assert kept <= {q.name for q in store.glob("*.tsr")}  # old entries were reused, not rewritten away


def test_a_store_written_by_workers_and_this_process_is_read_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--jobs 2` stores the workers' results (JSON, tool blocks as text) and this
    process's (its values, as JSON): a run with one job reads every one back, computes
    none, and reports what one process reports."""
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(defects(corpus(3000, 8), 8)))
    store = tmp_path / "store"
    want = sequential([f])
    assert report_bytes(validate([f], ALL_RULES, jobs=2, resume=store, chunk_bytes=64 * 1024)) == want
    entries = [read_entry(q) for q in store.glob("*.tsr")]
    tools = [type(it[6]) for doc in entries for it in doc["items"] if it[0] == "b"]
    assert str in tools and list in tools  # both kinds of entry are there

    def computed(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("recomputed a stored task")

    monkeypatch.setattr(parallel_engine, "task_result", computed)
    assert report_bytes(validate([f], ALL_RULES, jobs=1, resume=store, chunk_bytes=64 * 1024)) == want


def test_a_resumed_run_reuses_stored_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(defects(corpus(120, 4), 4)))
    store = tmp_path / "store"
    first = report_bytes(validate([f], ALL_RULES, jobs=1, resume=store, chunk_bytes=3000))
    assert first == sequential([f])
    n = len(list(store.glob("*.tsr")))
    assert n > 5
    calls: list[int] = []
    real = chunks.task_result

    def counting(
        task: chunks.Task, options: Options, opener: Any = chunks.open_local, run: Any = None
    ) -> dict[str, Any]:
        calls.append(task.start)
        return real(task, options, opener, run)

    monkeypatch.setattr("conformance.parallel.engine.task_result", counting)
    assert report_bytes(validate([f], ALL_RULES, jobs=1, resume=store, chunk_bytes=3000)) == first
    assert calls == []  # every part came from the store
    # other options are other results
    assert report_bytes(validate([f], Options(), jobs=1, resume=store, chunk_bytes=3000)) == sequential([f], Options())
    assert len(calls) == n
    # a file that changed is read again
    f.write_bytes(f.read_bytes() + b"\n")
    calls.clear()
    assert report_bytes(validate([f], ALL_RULES, jobs=1, resume=store, chunk_bytes=3000)) == sequential([f])
    assert len(calls) == n


def test_a_damaged_store_entry_is_recomputed(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(corpus(40, 2)))
    store = tmp_path / "store"
    validate([f], ALL_RULES, jobs=1, resume=store, chunk_bytes=2000)
    for q in store.glob("*.tsr"):
        q.write_bytes(q.read_bytes()[:10])
    assert report_bytes(validate([f], ALL_RULES, jobs=1, resume=store, chunk_bytes=2000)) == sequential([f])


def test_resume_refuses_a_folder_inside_an_input(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(b"".join(corpus(3, 1)))
    with pytest.raises(InputError, match="overlaps the input"):
        validate([tmp_path], jobs=1, resume=tmp_path / "store")
    assert not (tmp_path / "store").exists()


def test_no_file_is_written_without_resume(tmp_path: Path) -> None:
    data = tmp_path / "in"
    data.mkdir()
    (data / "c.jsonl").write_bytes(b"".join(defects(corpus(200, 3), 3)))
    before = sorted(p for p in tmp_path.rglob("*"))
    p = _cli("validate", "-q", "-j", "2", "--chunk-bytes", "5000", str(data), cwd=tmp_path)
    p.communicate()
    assert p.returncode == 1
    assert sorted(p for p in tmp_path.rglob("*")) == before


# -- the command line -----------------------------------------------------------------------


def test_cli_jobs_report_equals_one_job(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(defects(corpus(300, 8), 8)))
    one = _cli("validate", "-o", "json", "-j", "1", str(f), cwd=tmp_path).communicate()
    two = _cli("validate", "-o", "json", "-j", "2", "--chunk-bytes", "7000", str(f), cwd=tmp_path).communicate()
    assert one[0] == two[0]
    text1 = _cli("validate", "-j", "1", str(f), cwd=tmp_path).communicate()
    text2 = _cli("validate", "-j", "2", "--chunk-bytes", "7000", str(f), cwd=tmp_path).communicate()
    assert text1 == text2


def test_jobs_does_not_import_ray(tmp_path: Path) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(corpus(50, 8)))
    code = (
        "import sys; from conformance.cli import main; rc = main(['validate', '-q', '-j', '2', "
        f"'--chunk-bytes', '3000', {str(f)!r}]); sys.exit(3 if 'ray' in sys.modules or 'fsspec' in sys.modules else rc)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, cwd=tmp_path).returncode == 0


def test_usage_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main

    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(corpus(3, 1)))
    not_a_folder = tmp_path / "store"
    not_a_folder.write_text("x")
    cases = [
        (["validate", "--ray-address", "127.0.0.1:1", str(f)], "--ray-address: only with --engine ray"),
        (["validate", "--resume", str(not_a_folder), str(f)], f"--resume {not_a_folder}: is not a folder"),
        (["validate", "--resume", str(tmp_path / "in" / "s"), str(tmp_path)], "overlaps the input"),
    ]
    for argv, message in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    assert not_a_folder.read_text() == "x"


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"\n",
        b"\n\n\n",
        b"\xef\xbb\xbf",
        b"{",
        b'{"a": 1}',
        b"\r\n\r\n",
        b"\xef\xbb\xbf\n\xef\xbb\xbf{}\r\n{}",
        b"[1, 2]\n\xff\n" * 3,
    ],
    ids=repr,
)
def test_edge_files_in_every_cut(tmp_path: Path, content: bytes) -> None:
    lines = corpus(4, 2)
    for where, suffix in ((0, ".jsonl"), (2, ".jsonl"), (4, ".jsonl"), (0, ".json")):  # start, middle, end
        f = tmp_path / f"e{where}{suffix}"
        f.write_bytes(b"".join(lines[:where]) + content + b"".join(lines[where:]))
        want = sequential([f])
        for chunk_bytes in (1, 2, 3, 5, 400):
            assert in_process([f], ALL_RULES, chunk_bytes) == want, (where, chunk_bytes)
