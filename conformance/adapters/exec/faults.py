"""What goes wrong between the host and a child, as the exceptions a failing case names
(docs/exec-protocol.md, Faults), and the replay of a child's log records as Python ones
(Logs)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from .codec import LEVELS, record_fields

LOGGER_PREFIX = "turnspec.exec"
STDERR_IN_MESSAGE = 240  # characters of the child's stderr in a case's one-line reason
STDERR_IN_NOTE = 4096  # bytes of it in the case's traceback text


class ExecFault(Exception):
    """A call that got no usable answer: the child died, timed out or broke the protocol.
    The child is stopped and restarted for the next call; the case fails with this reason."""


class ChildDied(ExecFault):
    pass


class CallTimedOut(ExecFault):
    pass


class ProtocolError(ExecFault):
    """A line that is not JSON, not an object, answers another id, or (with
    --validate-protocol) is off its schema: located by operation, output line and pointer."""


class GaveUp(ExecFault):
    """The child kept dying: no call is sent any more, every case fails with this."""


def one_line(text: str, limit: int) -> str:
    """The end of `text` as one line (lines joined with ` | `), at most `limit` characters."""
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    joined = " | ".join(lines)
    return joined if len(joined) <= limit else "..." + joined[-limit:]


def with_stderr(exc: ExecFault, stderr: str) -> ExecFault:
    """`exc` with the end of the child's standard error as a note (the case's traceback text)."""
    if stderr.strip():
        exc.add_note(f"the child's standard error (last {STDERR_IN_NOTE} bytes kept):\n" + stderr[-STDERR_IN_NOTE:])
    return exc


def stderr_clause(stderr: str) -> str:
    tail = one_line(stderr, STDERR_IN_MESSAGE)
    return f"; stderr: {tail}" if tail else "; no stderr"


def replay(name: str, records: Iterable[Any]) -> None:
    """Log each of a child's records on `turnspec.exec.<name>` at its level, its `fields` as
    record attributes (as `extra=` sets them), at the moment the call returns."""
    logger = logging.getLogger(f"{LOGGER_PREFIX}.{name}")
    for r in records:
        level = LEVELS.get(str(r.get("level")), logging.WARNING)
        if not logger.isEnabledFor(level):
            continue
        fields = r.get("fields") if isinstance(r.get("fields"), dict) else {}
        record = logger.makeRecord(
            logger.name, level, "(exec child)", 0, str(r.get("message", "")), (), None, extra=record_fields(fields)
        )
        logger.handle(record)
