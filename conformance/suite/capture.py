"""What a replay run installs around the checks: the network blocked, WARNING records captured.

Adapters are pure translation, so a replay that reaches a socket is a defect; and the
lossy-projection checks judge adapters by the WARNING records they log (§7.3).
"""

from __future__ import annotations

import contextlib
import logging
import socket
from collections.abc import Iterator
from typing import Any


class NetworkBlockedError(OSError):
    pass


@contextlib.contextmanager
def network_blocked() -> Iterator[None]:
    """Any socket connect or DNS lookup during the block raises (replay is offline)."""

    def refuse(*_: Any, **__: Any) -> Any:
        raise NetworkBlockedError("turnspec conform: network access is blocked during replay")

    targets: list[tuple[Any, str]] = [
        (socket.socket, "connect"),
        (socket.socket, "connect_ex"),
        (socket, "create_connection"),
        (socket, "getaddrinfo"),
    ]
    saved = [(obj, name, getattr(obj, name)) for obj, name in targets]
    for obj, name in targets:
        setattr(obj, name, refuse)
    try:
        yield
    finally:
        for obj, name, original in saved:
            setattr(obj, name, original)


class WarningCapture(logging.Handler):
    """Collects WARNING and above from every logger while installed on the root logger."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def capture_warnings() -> Iterator[list[logging.LogRecord]]:
    root = logging.getLogger()
    handler = WarningCapture()
    old_level = root.level
    if root.level > logging.WARNING or root.level == logging.NOTSET:
        root.setLevel(logging.WARNING)
    root.addHandler(handler)
    # adapters' loggers must not swallow records before they reach the root
    blocked = [lg for lg in _adapter_loggers() if not lg.propagate]
    for lg in blocked:
        lg.propagate = True
    try:
        yield handler.records
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
        for lg in blocked:
            lg.propagate = False


def _adapter_loggers() -> list[logging.Logger]:
    return [
        lg
        for name, lg in logging.Logger.manager.loggerDict.items()
        if isinstance(lg, logging.Logger) and name.startswith("turnspec")
    ]
