"""`turnspec exec smoke CMD`: a shell over conformance.suite.smoke (docs/exec-protocol.md)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ...core import escaping
from ...core.ruledocs import DOCS_URL


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help=f"Adapters in any language: the exec protocol ({DOCS_URL}exec-protocol/).", no_args_is_help=True
    )

    @group.command("smoke")
    def smoke(
        command: Annotated[
            str,
            typer.Argument(
                help="The child: a command line ('node my-adapter.mjs', split as a POSIX shell would) or a "
                "manifest file (turnspec-exec.toml); an exec: prefix is optional",
                show_default=False,
            ),
        ],
        timeout: Annotated[
            float | None,
            typer.Option(
                "--exec-timeout", help="Seconds per call (default: the manifest's, else 30)", show_default=False
            ),
        ] = None,
    ) -> None:
        """Check a child's handshake and one call of each operation it offers, every message
        validated both ways; one line per operation; exit 0, 1 when one failed, 2 when the
        child could not be started."""
        # imported when the command runs: the suite (cassettes) loads for this command only
        from ...adapters.exec.manifest import check_timeout
        from ...suite.smoke import run_smoke

        if timeout is not None:
            check_timeout(timeout, "--exec-timeout")
        failed = False
        for line in run_smoke(command, timeout):
            failed = failed or line.status == "FAIL"
            sys.stdout.write(escaping.text_line(line.text()) + "\n")
            sys.stdout.flush()
        raise typer.Exit(1 if failed else 0)

    app.add_typer(group, name="exec")
