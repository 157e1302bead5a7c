"""`turnspec wire`: render and parse wire bodies with an adapter (placeholder)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    pass
