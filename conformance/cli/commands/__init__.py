"""Sub-command groups. Each module exposes `register(app)`; add new ones to COMMANDS."""

from __future__ import annotations

import importlib

import typer

COMMANDS: list[str] = [
    "init",
    "convert",
    "gpt2099",
    "conform",
    "wire",
    "migrate",
    "schema",
    "replay",
    "cassettes",
    "models",
    "exec",
    "ai_sdk",
]


def register_all(app: typer.Typer) -> None:
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(app)
