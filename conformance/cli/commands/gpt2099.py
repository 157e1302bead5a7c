"""`turnspec gpt2099 ...`: a shell over conformance.formats.gpt2099."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ...core.errors import InputError


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="gpt2099 threads: resolve a headish to its context window.", no_args_is_help=True)

    @group.command()
    def resolve(
        file: Annotated[
            Path,
            typer.Argument(help="Thread file: turn frames or thread records (.json, .jsonl, .nuon)"),
        ],
        headish: Annotated[
            list[str] | None,
            typer.Argument(help="Turn id(s) or bookmark(s); default: the last turn", show_default=False),
        ] = None,
    ) -> None:
        """Print the resolved context window {messages, options}, as `gpt ctx resolve` builds it."""
        # function-level imports: the gpt2099 format loads only when this command runs
        from ...formats.gpt2099 import ResolveError
        from ...formats.gpt2099 import resolve as do_resolve

        try:
            window = do_resolve(file, headish or None)
        except ResolveError as e:
            raise InputError(f"{file}: {e}") from None
        json.dump(window, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")

    app.add_typer(group, name="gpt2099")
