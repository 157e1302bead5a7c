"""`--resume DIR`: the local-phase result of every finished task, kept under DIR only.

What a stored result is trusted for, and how that is proven (README, "--resume"):

- An entry's name is a SHA-256 of the part it answers for (the file's path and size,
  the task's byte range) and of everything else its result depends on: the options
  (selection, strictness, revisions, line limit, and the contents of the `--tools` and
  `--pricing` files), the result codec and the turnspec version. The file's modification
  time is not in it: `touch -r`, `cp -p`, `rsync -a` and tar restore mtimes, so an mtime
  proves nothing about content.
- An entry is a header line and the task's result (`chunks.run_task`'s JSON). The header
  names the part again, the bytes the task read (`[first, end)`: the range's lines and
  the byte before the range, which decides where its first line begins) with their
  BLAKE2b digest, computed by the task while it read them (no second pass), and the
  BLAKE2b digest of the result itself.
- Before a result is used, the store checks all of it: the header's part and run are
  this task's (a swapped or copied entry is not), the result's digest matches (an edited
  or truncated entry is not), and the bytes now in the file at `[first, end)` have the
  digest the task saw (an input edited in place, whatever its mtime, is not). Anything
  that does not match is recomputed, and named through `notify` (one line: the part and
  why); the report is the one a fresh run gives.
- The store reads and writes only regular files directly in its folder: an entry is
  opened with `O_NOFOLLOW` (a symbolic link is refused, never followed), written to an
  exclusively created temporary file in the folder and renamed over its name (a rename
  replaces a link, never writes through it). A temporary file left by a killed run
  (its host and process id in its name) is removed by the next run.
- The session phase is never stored: it is cheap, and it is re-run over every result in
  input order, so a resumed run's report equals an uninterrupted one.

What it does not defend against: someone who can write the store and recompute both
digests on purpose (the digests are integrity checks, not signatures: the store is
trusted as much as the account that owns it).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import orjson

from ..core.errors import InputError
from ..core.jsonio import read_input
from ..core.outputs import host_name, pid_alive, real
from ..formats.base import Options
from .chunks import ITEM_CODEC, Opener, Task, content_hash, open_local

SUFFIX = ".tsr"
STORE_FORMAT = 2
"""The entry layout below (a header line, then the result); entries of another layout are
recomputed."""

MAX_ENTRY_BYTES = 1 << 30
"""An entry larger than this is not read (a result is a few times its range at most)."""

Notify = Callable[[str], None]
"""Receives one line for each stored entry that is not used, saying which and why."""

_TEMP = re.compile(r"^\.[0-9a-f]{64}\.(?P<host>[^.]*)\.(?P<pid>[0-9]+)\.[0-9a-f]+\.tmp$")
_OLD_STAGE = re.compile(r"^\.[0-9a-f]{64}\.tsr\..*\.turnspec$")  # staging folders of turnspec before store format 2


def _version() -> str:
    try:
        return version("turnspec")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"


def _digest(path: Path | None) -> str | None:
    return None if path is None else hashlib.sha256(read_input(path)).hexdigest()


def options_key(options: Options) -> list[Any]:
    sel = options.selection
    return [
        list(sel.select),
        list(sel.ignore),
        sel.strict,
        _digest(options.tools),
        _digest(options.pricing),
        options.max_line_bytes,
        list(options.revisions),
    ]


def _part(task: Task, size: int) -> list[Any]:
    return [task.path, task.start, task.end, task.whole, size]


class ResumeStore:
    """Results of finished tasks under one folder (created if missing, never elsewhere)."""

    def __init__(
        self,
        folder: Path,
        options: Options,
        inputs: list[str],
        *,
        opener: Opener = open_local,
        notify: Notify | None = None,
    ) -> None:
        self.folder = folder
        self.opener = opener
        self.notify = notify
        where = real(folder)
        for src in inputs:
            if "://" in src or src == "-":
                continue
            source = real(src)
            if where == source or source in where.parents or where in source.parents:
                raise InputError(f"--resume {folder}: overlaps the input {src}; choose a folder outside the inputs")
        if os.path.lexists(folder) and not folder.is_dir():
            raise InputError(f"--resume {folder}: is not a folder")
        try:
            folder.mkdir(parents=False, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--resume {folder}: cannot create the folder: {exc.strerror or exc}") from None
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"--resume {folder}: is not writable")
        self.base = orjson.dumps([_version(), ITEM_CODEC, STORE_FORMAT, options_key(options)])
        self.run_digest = hashlib.sha256(self.base).hexdigest()
        self.host = host_name()
        self.reused = 0  # parts answered from the folder this run
        self.computed = 0  # parts computed (and kept) this run, those recomputed included
        self._clean()

    def summary(self) -> str:
        """One line for the end of a run: how many parts came from the folder."""
        total = self.reused + self.computed
        return (
            f"--resume {self.folder}: {self.reused} of {total} part(s) reused from the folder,"
            f" {self.computed} computed and kept"
        )

    # -- names ----------------------------------------------------------------------

    def key(self, task: Task, size: int) -> str:
        """The entry name of `task` of a file of `size` bytes."""
        return hashlib.sha256(orjson.dumps(_part(task, size)) + self.base).hexdigest()

    def _note(self, task: Task, why: str) -> None:
        if self.notify is not None:
            where = f"{task.path}" if task.whole else f"{task.path} bytes {task.start}-"
            if not task.whole:
                where += "end" if task.end >= 1 << 62 else str(task.end)
            self.notify(f"--resume {self.folder}: {where}: {why}; recomputed")

    def _clean(self) -> None:
        """Remove what killed runs left: temporary entries of dead processes on this host,
        and the staging folders of earlier turnspec versions."""
        try:
            paths = list(self.folder.iterdir())
        except OSError:
            return
        for path in paths:
            name = path.name
            m = _TEMP.match(name)
            if m is not None and m["host"] == self.host and not pid_alive(int(m["pid"])):
                with contextlib.suppress(OSError):
                    if stat.S_ISREG(os.lstat(path).st_mode):
                        path.unlink()
            elif _OLD_STAGE.match(name) is not None:
                with contextlib.suppress(OSError):
                    if stat.S_ISDIR(os.lstat(path).st_mode):
                        shutil.rmtree(path)

    # -- reading --------------------------------------------------------------------

    def get(self, task: Task, size: int) -> bytes | None:
        """The stored result of `task`, if there is one and every check holds (module doc)."""
        path = self.folder / (self.key(task, size) + SUFFIX)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                self._note(task, "its stored entry is a symbolic link, which is never followed")
            else:
                self._note(task, f"its stored entry cannot be read ({exc.strerror or exc})")
            return None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                self._note(task, "its stored entry is not a regular file")
                return None
            if st.st_size > MAX_ENTRY_BYTES:
                self._note(task, "its stored entry is too large to be one")
                return None
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read()
        except OSError as exc:
            self._note(task, f"its stored entry cannot be read ({exc.strerror or exc})")
            return None
        finally:
            os.close(fd)
        why, payload = self._check(task, size, data)
        if why is not None:
            self._note(task, why)
            return None
        self.reused += 1
        return payload

    def _check(self, task: Task, size: int, data: bytes) -> tuple[str | None, bytes]:
        head, sep, payload = data.partition(b"\n")
        try:
            header = orjson.loads(head) if sep else None
        except orjson.JSONDecodeError:
            header = None
        if not isinstance(header, dict) or header.get("format") != STORE_FORMAT:
            return "its stored entry is damaged or of another version (no header)", b""
        if header.get("run") != self.run_digest:
            return "its stored entry was written for other options or another version", b""
        if header.get("part") != _part(task, size):
            return "its stored entry answers for another part", b""
        if header.get("result") != content_hash_of(payload):
            return "its stored entry is damaged (its result does not match its digest)", b""
        span, digest = header.get("read"), header.get("digest")
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(type(x) is int and x >= 0 for x in span)
            or not isinstance(digest, str)
        ):
            return "its stored entry is damaged (no range read)", b""
        # what a task of this part reads: from the byte before its range (where its first
        # line begins) to at least its range's end or the end of the file (`chunks._Range`)
        first = 0 if task.whole or task.start == 0 else task.start - 1
        if span[0] != first or span[1] < min(size, max(task.end, first)) or (span[1] > size and not task.whole):
            return "its stored entry names bytes its part does not read", b""
        try:
            doc = orjson.loads(payload)
        except orjson.JSONDecodeError:
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("items"), list) or type(doc.get("lines")) is not int:
            return "its stored entry is damaged (not a task's result)", b""
        try:
            now = self._read_digest(task.path, span[0], span[1])
        except (OSError, InputError) as exc:
            return f"its input cannot be read again ({getattr(exc, 'strerror', None) or exc})", b""
        if now != digest:
            return "the input's bytes changed since the entry was stored", b""
        return None, payload

    def _read_digest(self, path: str, first: int, end: int) -> str | None:
        """The digest of `path[first:end)` as it is now (None: the file is shorter)."""
        h = content_hash()
        with self.opener(path) as f:
            f.seek(first)
            left = end - first
            while left > 0:
                block = f.read(min(left, 1 << 20))
                if not block:
                    return None
                h.update(block)
                left -= len(block)
        return str(h.hexdigest())

    # -- writing --------------------------------------------------------------------

    def put(self, task: Task, size: int, result: bytes, span: list[int], digest: str) -> None:
        """Keep `result` (the task read `span` of its file, whose digest is `digest`)."""
        header = {
            "format": STORE_FORMAT,
            "run": self.run_digest,
            "part": _part(task, size),
            "read": span,
            "digest": digest,
            "result": content_hash_of(result),
        }
        key = self.key(task, size)
        temp = f".{key}.{self.host}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        dir_fd = None
        try:
            dir_fd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
            fd = os.open(temp, flags, 0o666, dir_fd=dir_fd)
            try:
                with os.fdopen(fd, "wb", closefd=False) as f:
                    f.write(orjson.dumps(header) + b"\n")
                    f.write(result)
                os.fsync(fd)
            finally:
                os.close(fd)
            # a rename replaces whatever has the name (a link included), never writes through it
            os.replace(temp, key + SUFFIX, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            self.computed += 1
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise InputError(f"--resume {self.folder}: cannot write {key}{SUFFIX}: {exc.strerror or exc}") from None
        finally:
            if dir_fd is not None:
                os.close(dir_fd)


def content_hash_of(data: bytes) -> str:
    h = content_hash()
    h.update(data)
    return str(h.hexdigest())


def read_entry(path: Path) -> dict[str, Any]:
    """The result an entry file holds (its header set aside): for tests and debugging."""
    doc: dict[str, Any] = orjson.loads(path.read_bytes().partition(b"\n")[2])
    return doc
