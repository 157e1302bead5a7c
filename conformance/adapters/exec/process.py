"""The child process of an exec adapter: started with pipes, written one line at a time,
read one line at a time against a deadline, its standard error kept (the last 64 KiB) by a
thread, stopped with SIGTERM then SIGKILL. Memory is bounded: an answer line longer than
`MAX_LINE_BYTES` is refused, never buffered whole (docs/exec-protocol.md, Framing, Faults)."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

MAX_LINE_BYTES = 64 * 1024 * 1024
"""The longest answer line read (a parsed message with its images fits well within it)."""
STDERR_KEEP = 64 * 1024
"""How much of the child's standard error is kept: its end."""
TERM_GRACE_S = 2.0
"""How long a child has to exit after SIGTERM before it is killed."""
_READ = 1 << 20


class ChildFault(Exception):
    """The transport failed: the child could not be started, exited, stopped answering or
    wrote a line too long. The client turns it into the failing case's reason."""


class ChildStartFailed(ChildFault):
    pass


class OutputEnded(ChildFault):
    """The child's standard output closed (it exited, or closed it)."""


class Timeout(ChildFault):
    pass


class LineTooLong(ChildFault):
    pass


class Child:
    """One running child. Not thread-safe: one request at a time (docs/exec-protocol.md)."""

    def __init__(self, command: Sequence[str], *, cwd: Path | None, env: Mapping[str, str] | None) -> None:
        try:
            self.proc = subprocess.Popen(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env={**os.environ, **env} if env else None,
                start_new_session=True,  # its own process group: a stop reaches what it started
                bufsize=0,
            )
        except OSError as exc:
            raise ChildStartFailed(f"cannot start {command[0]!r}: {exc.strerror or exc}") from None
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self._stdin, self._stdout = self.proc.stdin, self.proc.stdout
        self._buf = bytearray()
        self.lines_read = 0  # answer lines read so far: a protocol error names the line
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._stdout, selectors.EVENT_READ)
        os.set_blocking(self._stdin.fileno(), False)  # a write never blocks past the call's deadline (`send`)
        self._wsel = selectors.DefaultSelector()
        self._wsel.register(self._stdin, selectors.EVENT_WRITE)
        self._err = bytearray()
        self._err_total = 0
        self._lock = threading.Lock()
        self._err_thread = threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True)
        self._err_thread.start()

    # -- standard error ------------------------------------------------------------------

    def _drain(self, stream: object) -> None:
        fd = stream.fileno()  # type: ignore[attr-defined]
        while True:
            try:
                chunk = os.read(fd, _READ)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._err += chunk
                self._err_total += len(chunk)
                if len(self._err) > STDERR_KEEP:
                    del self._err[: len(self._err) - STDERR_KEEP]

    def stderr_tail(self, limit: int = STDERR_KEEP) -> str:
        """The end of what the child wrote to standard error (at most `limit` bytes), as text."""
        self._err_thread.join(timeout=0.5 if self.proc.poll() is not None else 0)
        with self._lock:
            data = bytes(self._err[-limit:])
        return data.decode("utf-8", "replace")

    # -- lines ---------------------------------------------------------------------------

    def send(self, line: bytes, timeout: float) -> None:
        """Write one request line within `timeout` seconds; `OutputEnded` when the child no
        longer reads, `Timeout` when it stops reading with the pipe full (a request larger
        than the pipe, to a child that hangs, would block a plain write for ever)."""
        data = memoryview(line + b"\n")
        deadline = time.monotonic() + timeout
        fd = self._stdin.fileno()
        while data:
            try:
                n = os.write(fd, data)
            except BlockingIOError:
                n = 0
            except (BrokenPipeError, ValueError, OSError):
                raise OutputEnded("its standard input is closed") from None
            data = data[n:]
            if data:
                left = deadline - time.monotonic()
                if left <= 0 or not self._wsel.select(left):
                    raise Timeout(f"it read no more of the request within {timeout:g} s")

    def receive(self, timeout: float) -> bytes:
        """The next line of standard output, without its newline, within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        fd = self._stdout.fileno()
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                self.lines_read += 1
                return line
            if len(self._buf) > MAX_LINE_BYTES:
                raise LineTooLong(
                    f"output line {self.lines_read + 1} is longer than {MAX_LINE_BYTES} bytes (the protocol's limit)"
                )
            left = deadline - time.monotonic()
            if left <= 0 or not self._sel.select(left):
                raise Timeout(f"no answer within {timeout:g} s")
            chunk = os.read(fd, _READ)
            if not chunk:
                raise OutputEnded("its standard output ended")
            self._buf += chunk

    # -- the end -------------------------------------------------------------------------

    def status(self, wait: float = 1.0) -> str:
        """How the child ended, for a failing case: `exit status 3`, `killed by SIGKILL`, or
        `still running` (it closed its output but did not exit within `wait` seconds)."""
        try:
            rc = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return "still running"
        if rc < 0:
            try:
                return f"killed by {signal.Signals(-rc).name}"
            except ValueError:
                return f"killed by signal {-rc}"
        return f"exit status {rc}"

    def stop(self, grace: float = TERM_GRACE_S) -> None:
        """SIGTERM to the child's process group, SIGKILL after `grace` seconds; then the pipes
        are closed. Idempotent."""
        if self.proc.poll() is None:
            self._signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=5)
        self.close_pipes()

    def _signal(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(sig)

    def close_pipes(self) -> None:
        with contextlib.suppress(Exception):
            self._sel.close()
        with contextlib.suppress(Exception):
            self._wsel.close()
        for f in (self._stdin, self._stdout):
            with contextlib.suppress(Exception):
                f.close()
        self._err_thread.join(timeout=1.0)
        with contextlib.suppress(Exception):
            self.proc.stderr.close()  # type: ignore[union-attr]

    def end_input(self, wait: float) -> None:
        """Close the child's standard input and give it `wait` seconds to exit (a shutdown)."""
        with contextlib.suppress(Exception):
            self._stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=wait)
        self.stop()
