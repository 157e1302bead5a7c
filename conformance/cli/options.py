"""Options more than one command takes, declared once (the flag, its help, its default),
and the reading of rule-id options (`--select`, `--ignore`) that `validate` and `rules` share."""

from __future__ import annotations

import typer

from ..core.config import Config
from ..core.errors import InputError
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


def split(values: list[str] | None) -> tuple[str, ...]:
    """The items of a repeatable, comma-separated option (`--select TS0,TS1 --select TC`),
    stripped, empty ones left out."""
    out: list[str] = []
    for v in values or []:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return tuple(out)


def check_prefixes(flag: str, prefixes: tuple[str, ...], known: list[str]) -> None:
    """A usage error (exit 2, one line) for the first id or prefix no rule id starts with."""
    for prefix in prefixes:
        if not any(k.startswith(prefix) for k in known):
            raise InputError(f"{flag}: no rule id starts with {prefix!r} (see `turnspec rules`)")
