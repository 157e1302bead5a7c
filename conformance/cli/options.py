"""Options more than one command takes, declared once (the flag, its help, its default)."""

from __future__ import annotations

import typer

from ..core.config import Config
from ..core.jsonio import DEFAULT_LOCK_WAIT

LOCK_WAIT = typer.Option(
    "--lock-wait",
    min=0,
    metavar="SECONDS",
    help=f"Wait this long for an input another process holds locked (a SQLite store), then exit 2 "
    f"saying so (default {DEFAULT_LOCK_WAIT:g}, or lock-wait in [tool.turnspec])",
    show_default=False,
)


def resolved_lock_wait(flag: float | None, cfg: Config | None = None) -> float:
    """The lock wait a run uses: the flag, else `lock-wait` of `[tool.turnspec]`, else the default."""
    if flag is not None:
        return flag
    if cfg is not None and cfg.lock_wait is not None:
        return cfg.lock_wait
    return DEFAULT_LOCK_WAIT
