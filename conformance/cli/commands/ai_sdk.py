"""`turnspec ai-sdk install [--dir DIR]`: the Node packages of the Vercel AI SDK bridge
(`turnspec conform ai-sdk:<api>`), installed with `npm ci` from the lock turnspec ships."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ...core import escaping


def _install_module() -> Any:
    # by name, as the adapter registry loads the bridges: nothing imports conformance.bridges
    # (.importlinter), so the bridge stays a plug-in of the command line
    return importlib.import_module("conformance.bridges.ai_sdk.install")


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="The Vercel AI SDK bridge (turnspec conform ai-sdk:<api>): its Node packages.", no_args_is_help=True
    )

    @group.command("install")
    def install(
        folder: Annotated[
            Path | None,
            typer.Option(
                "--dir",
                help="Where to install (default: $TURNSPEC_AI_SDK_DIR, else ~/.cache/turnspec/ai-sdk)",
                show_default=False,
            ),
        ] = None,
    ) -> None:
        """Install the AI SDK packages the bridge pins (`npm ci` from its package-lock.json) into
        the bridge's folder: the one step that uses the network (the npm registry); conform
        never does. Exit 0, or 2 when npm is missing or `npm ci` failed."""
        where = _install_module().install(folder)
        hint = "" if folder is None else f"; conform reads it with TURNSPEC_AI_SDK_DIR={where}"
        sys.stderr.write(escaping.text_line(f"turnspec: the AI SDK packages are installed in {where}{hint}") + "\n")

    @group.command("status")
    def status(
        folder: Annotated[
            Path | None,
            typer.Option("--dir", help="The folder to look in (default: as install)", show_default=False),
        ] = None,
    ) -> None:
        """Say where the bridge reads its packages from and whether they are there (node on
        PATH, installed from the lock this turnspec ships); exit 0 when ready, 2 otherwise."""
        mod = _install_module()
        where = folder or mod.default_dir()
        why = mod.problem(where)
        sys.stdout.write(escaping.text_line(f"ai-sdk: {why or f'ready ({where})'}") + "\n")
        raise typer.Exit(0 if why is None else 2)

    app.add_typer(group, name="ai-sdk")
