"""`validate --engine ray`: the local phase as Ray tasks, over local paths and fsspec URLs.

The tasks are the ones `--jobs` runs (`chunks.run_task`: byte ranges of raw lines, never
Arrow's JSON reader, which fails on `content` holding a string in one message and a list
in the next); this process consumes their results in input order and runs the session
phase (`engine.run_units`), so the report is the local engine's, byte for byte. URLs
(`file://`, `s3://`, `gs://`, ...) are read through fsspec and the driver the user
installed for the scheme (s3fs, gcsfs); a folder URL is walked for `.json`/`.jsonl`.

Ray is started locally (`ray.init`, `num_cpus=jobs`) unless `address` names a cluster,
and stopped at the end when this run started it. Every failure to import, start or
reach Ray or a storage driver is one line (`InputError`, exit 2).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from ..core.errors import InputError
from ..core.findings import Finding, switch_off_for_mutation_testing, switched_off
from ..formats.base import FileStats, Format, Options, ProgressHook
from ..formats.canonical import CanonicalFormat
from .chunks import Task, run_task
from .engine import DEFAULT_CHUNK_BYTES, Backend, Thunk, default_jobs, local_stat, run_units
from .store import Notify, ResumeStore


def is_url(path: str) -> bool:
    return "://" in path


def _fsspec() -> Any:
    try:
        # function-level import: fsspec is the [ray] extra, loaded only for --engine ray
        import fsspec
    except ImportError:
        raise InputError("--engine ray needs the [ray] extra: pip install 'turnspec[ray]'") from None
    return fsspec


def _fs(url: str) -> tuple[Any, str]:
    """The fsspec file system of `url` and the path inside it (one-line errors)."""
    fsspec = _fsspec()
    try:
        fs, inner = fsspec.core.url_to_fs(url)
        return fs, str(inner)
    except ImportError as exc:  # the scheme's driver (s3fs, gcsfs, ...) is not installed
        raise InputError(f"{url}: no file system driver for this URL: {exc}".splitlines()[0]) from None
    except (ValueError, OSError) as exc:
        raise InputError(f"{url}: cannot open this URL: {exc}".splitlines()[0]) from None


def expand_urls(
    urls: Sequence[str], fmt: str | None, skipped: list[Path] | None, problems: list[str] | None
) -> list[tuple[str, Format]]:
    """The canonical files a URL names: the file, or the `.json`/`.jsonl` files under a
    folder URL in sorted order (others go to `skipped`). URLs are read as canonical."""
    if fmt not in (None, "canonical"):
        raise InputError(f"--format {fmt}: URLs are read as canonical only")
    canonical = CanonicalFormat()
    out: list[tuple[str, Format]] = []
    for url in urls:
        fs, root = _fs(url)
        try:
            if fs.isdir(root):
                names = sorted(fs.find(root))
            elif fs.exists(root):
                names = [root]
            else:
                _problem(problems, f"{url}: does not exist")
                continue
        except OSError as exc:
            _problem(problems, f"{url}: cannot list: {exc}".splitlines()[0])
            continue
        for name in names:
            full = fs.unstrip_protocol(name)
            if name == root or name.endswith((".json", ".jsonl")):
                out.append((full, canonical))
            elif skipped is not None:
                skipped.append(Path(full))
    return out


def _problem(problems: list[str] | None, message: str) -> None:
    if problems is None:
        raise InputError(message)
    problems.append(message)


def url_stat(path: str) -> int | None:
    """The size of a path or URL (None: read it in this process)."""
    if not is_url(path):
        return local_stat(path)
    fs, inner = _fs(path)
    try:
        info = fs.info(inner)
    except OSError:
        return 0  # the task's read reports it, in its place
    return int(info.get("size") or 0)


class _Lines(io.RawIOBase):
    """`readline(limit)` over a file object that only has `read` (fsspec's buffered
    files take no limit, and the reader bounds every line it holds)."""

    def __init__(self, f: Any) -> None:
        self.f = f
        self.buf = b""

    def seek(self, pos: int, whence: int = 0) -> int:
        self.buf = b""
        return int(self.f.seek(pos, whence))

    def readline(self, limit: int | None = -1) -> bytes:
        lim = -1 if limit is None else limit
        while True:
            i = self.buf.find(b"\n", 0, lim if lim >= 0 else None)
            if i >= 0 or (0 <= lim <= len(self.buf)):
                end = i + 1 if i >= 0 else lim
                out, self.buf = self.buf[:end], self.buf[end:]
                return out
            more = self.f.read(1 << 20)
            if not more:
                out, self.buf = self.buf, b""
                return out
            self.buf += more

    def read(self, n: int | None = -1) -> bytes:
        if n is None or n < 0:
            out, self.buf = self.buf + bytes(self.f.read()), b""
            return out
        while len(self.buf) < n:
            more = self.f.read(max(n - len(self.buf), 1 << 20))
            if not more:
                break
            self.buf += more
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def close(self) -> None:
        self.f.close()
        super().close()


def open_any(path: str) -> IO[bytes]:
    """A local regular file (`jsonio.open_input`), or a URL through fsspec."""
    if not is_url(path):
        # function-level import: the local opener lives with the chunk reader
        from .chunks import open_local

        return open_local(path)
    fs, inner = _fs(path)
    try:
        return _Lines(fs.open(inner, "rb"))  # type: ignore[return-value]
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc}".splitlines()[0]) from None


def _ray_task(task: Task, options: Options, off: frozenset[str] = frozenset()) -> bytes:
    """One task on a Ray worker (a plain function, imported there by name); `off`: the
    driver's `findings.switched_off()` (empty but under rule-level mutation testing)."""
    switch_off_for_mutation_testing(off)
    return run_task(task, options, open_any)


def _ray() -> Any:
    try:
        # function-level import: Ray is the [ray] extra, loaded only for --engine ray
        import ray
    except ImportError:
        raise InputError("--engine ray needs the [ray] extra: pip install 'turnspec[ray]'") from None
    return ray


class RayTasks:
    """The local phase as Ray tasks (one CPU each)."""

    def __init__(self, ray: Any, options: Options, started: bool) -> None:
        self.ray = ray
        self.options = options
        self.started = started
        self.remote = ray.remote(num_cpus=1, max_retries=1)(_ray_task)

    def submit(self, task: Task) -> Thunk:
        ref = self.remote.remote(task, self.options, switched_off())

        def wait() -> bytes:
            try:
                return bytes(self.ray.get(ref))
            except Exception as exc:
                raise InputError(f"ray: a task failed: {type(exc).__name__}: {exc}".splitlines()[0]) from None

        return wait

    def close(self) -> None:
        if self.started:
            with contextlib.suppress(Exception):
                self.ray.shutdown()


def _driver_prints_to_stderr(ray: Any) -> None:
    """Send what Ray prints in this process to standard error, never to standard output.

    `log_to_driver=False` stops the workers' logs, but the driver still runs Ray's
    error listener, which prints the cluster's messages (`(raylet) A worker died ...`,
    in colour) through `ray._private.worker.print_to_stdstream`, to `sys.stdout` unless
    the message is marked as an error: the report (`-o sarif`, `-o json`) would no
    longer parse. Ray has no option for this, so the function (looked up by name on
    every message, also by the listener thread already running) is wrapped to mark
    every message as an error. Hand-written over a private name: if a Ray version has
    no such function, nothing is changed (tests/test_parallel_ray.py then fails).
    """
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    original = getattr(worker, "print_to_stdstream", None)
    if not callable(original) or getattr(original, "turnspec_stderr", False):
        return

    def to_stderr(data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        return original({**data, "is_err": True}, *args, **kwargs)

    to_stderr.turnspec_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr  # type: ignore[union-attr]


def start_ray(address: str | None, jobs: int) -> tuple[Any, bool]:
    """Ray, initialised: locally with `jobs` CPUs, or joined to `address`. Returns the
    module and whether this call started it (then the run stops it). What Ray prints
    here goes to standard error (`_driver_prints_to_stderr`)."""
    ray = _ray()
    _driver_prints_to_stderr(ray)
    if ray.is_initialized():
        return ray, False
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    try:
        if address is None:
            ray.init(num_cpus=jobs, **kwargs)
        else:
            ray.init(address=address, **kwargs)
    except Exception as exc:
        where = address or "locally"
        raise InputError(f"ray: cannot start ({where}): {type(exc).__name__}: {exc}".splitlines()[0]) from None
    return ray, True


def validate_ray(
    units: Sequence[tuple[str | Path, Format]],
    options: Options,
    *,
    address: str | None = None,
    jobs: int | None = None,
    resume: Path | None = None,
    chunk_bytes: int | None = None,
    files: list[FileStats] | None = None,
    progress: ProgressHook | None = None,
    problems: list[str] | None = None,
    inputs: Sequence[str] = (),
    notify: Notify | None = None,
    summary: Notify | None = None,
) -> Iterator[Finding]:
    """The findings of `units` (local paths and URLs), the local engine's report.
    `notify` receives a line for each stored result that is not used (`store` module doc),
    `summary` one line once the run is done (`ResumeStore.summary`)."""
    n = jobs or default_jobs()
    named = [*inputs, *(str(p) for p, _ in units)]
    store = ResumeStore(resume, options, named, opener=open_any, notify=notify) if resume is not None else None

    def backend(n_tasks: int, n_bytes: int) -> Backend:
        ray, started = start_ray(address, n)
        return RayTasks(ray, options, started)

    yield from run_units(
        units,
        options,
        backend,
        chunk_bytes=chunk_bytes or DEFAULT_CHUNK_BYTES,
        store=store,
        stat=url_stat,
        window=2 * n,
        files=files,
        progress=progress,
        problems=problems,
    )
    if store is not None and summary is not None:
        summary(store.summary())
