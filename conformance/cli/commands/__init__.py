"""Sub-command groups. Each module exposes `register(app)`; add new ones to COMMANDS.

The CLI's own commands (`OWN`: validate, rules and rule, version) are registered when the
CLI is imported, first in `--help`; a call that runs one builds it alone (`cli._own_command`).
The others (`COMMANDS`) are registered when the whole CLI is built (`cli.command`).
"""

from __future__ import annotations

import importlib

import typer

OWN: list[str] = ["validate", "rules", "version"]

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


def register_all(app: typer.Typer, names: list[str] = COMMANDS) -> None:
    """Register the commands of the modules `names` (default: every one but `OWN`'s) in `app`."""
    for name in names:
        importlib.import_module(f"{__name__}.{name}").register(app)
