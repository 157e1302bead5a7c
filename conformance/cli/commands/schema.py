"""`turnspec schema diff|export`: shells over conformance.schema.diff and conformance.schema.bundle."""

from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import orjson
import typer

from ...core import escaping
from ...core.errors import InputError
from ...core.reporting import FindingsReport, findings_output, output_choices, write_findings

if TYPE_CHECKING:  # a type only: schemadiff (and hypothesis under it) loads when a diff runs
    from ...schema.diff import Compat


class FailOn(enum.StrEnum):
    """The compatibility a change must keep (the terms of `conformance.schema.diff`):
    `backward` (new readers read old, stored data: a FORWARD or BREAKING verdict fails),
    `forward` (old readers read new data: BACKWARD or BREAKING fails), `breaking` (only
    BREAKING fails)."""

    backward = "backward"
    forward = "forward"
    breaking = "breaking"

    def fails(self, verdict: Compat) -> bool:
        if self == FailOn.backward:
            return not verdict.backward
        if self == FailOn.forward:
            return not verdict.forward
        return not (verdict.backward or verdict.forward)


# the command's own renderings, then every findings output (`reporting.FINDINGS_OUTPUTS`)
DiffOutput = output_choices("DiffOutput", "text", "json")
TEXT = DiffOutput("text")


def register(app: typer.Typer) -> None:
    schema = typer.Typer(help="Schema maintenance: compare revisions, export schemas.", no_args_is_help=True)

    @schema.command("diff")
    def diff_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(
                help="OLD NEW (files or folders); with --against, the schema files to check", show_default=False
            ),
        ],
        against: Annotated[
            str | None,
            typer.Option(
                "--against", help="Compare each PATH with itself at this git revision (e.g. HEAD)", show_default=False
            ),
        ] = None,
        output: Annotated[DiffOutput, typer.Option("--output", "-o", help="Report format")] = TEXT,  # type: ignore[valid-type]
        examples: Annotated[
            int, typer.Option(help="Documents generated per undecided direction", min=0, max=100_000)
        ] = 200,
        fail_on: Annotated[
            FailOn,
            typer.Option(
                "--fail-on",
                help="Exit 1 when this is lost: backward (new readers read old, stored data; FORWARD and BREAKING"
                " fail), forward (old readers read new data; BACKWARD and BREAKING fail), breaking (only BREAKING)",
            ),
        ] = FailOn.breaking,
    ) -> None:
        """Classify changes as FULL, BACKWARD, FORWARD or BREAKING (exit 1 on BREAKING, or as --fail-on says)."""
        # function-level import: hypothesis (witness search) loads only when a diff runs
        from ...schema.diff import DiffResult, diff_paths, findings, render_text, weakest
        from ...schema.diff_rules import CATALOG
        from ...schema.history import at_revision

        pairs: list[tuple[str, DiffResult, Path]] = []
        if against is None:
            if len(paths) != 2:
                raise InputError("schema diff: give OLD and NEW, or --against REV with the files to check")
            pairs.append((f"{paths[0]} -> {paths[1]}", diff_paths(paths[0], paths[1], examples=examples), paths[1]))
        else:
            for p in paths:
                with at_revision(against, p) as old:
                    if old is None:
                        continue  # new at this revision: nothing it could break
                    pairs.append((f"{p} ({against} -> working tree)", diff_paths(old, p, examples=examples), p))
        verdicts = [r.verdict for _, r, _ in pairs]
        found = [f for _, r, new in pairs for f in findings(r, new)]
        if output == "json":
            body = pairs[0][1].as_dict() if against is None else {
                "verdict": str(weakest(verdicts)),
                "files": {label: r.as_dict() for label, r, _ in pairs},
            }  # fmt: skip
            sys.stdout.write(escaping.json_text(json.dumps(escaping.json_safe(body), indent=2, ensure_ascii=False)))
            sys.stdout.write("\n")
        elif findings_output(output) is not None:
            files = [str(new) for _, _, new in pairs]
            write_findings(output, FindingsReport("turnspec schema diff", found, CATALOG, files=files), sys.stdout)
        else:
            for label, r, _ in pairs:
                if against is not None:
                    sys.stdout.write(escaping.text_line(label) + "\n")
                # schema names and paths are data: each rendered line made inert (never a command)
                sys.stdout.write(escaping.lines(render_text(r)))
        raise typer.Exit(1 if any(fail_on.fails(v) for v in verdicts) else 0)

    @schema.command("export")
    def export_cmd(
        out: Annotated[Path, typer.Argument(help="A folder (files) or a .json file (--bundle)", show_default=False)],
        fmt: Annotated[
            str, typer.Option("--format", help="Schema family: canonical, gpt2099, chibi, geppetto, exec")
        ] = "canonical",
        revision: Annotated[
            str | None, typer.Option("--revision", help="e.g. v1 (default: the published revision)", show_default=False)
        ] = None,
        bundle_: Annotated[bool, typer.Option("--bundle", help="One self-contained 2020-12 document ($defs)")] = False,
        force: Annotated[bool, typer.Option("--force", help="Replace an existing output")] = False,
    ) -> None:
        """Write the JSON Schemas for another repository: the files of one revision, or one bundle."""
        # function-level imports: only this command reads the schema tree and writes
        from ...core.outputs import check_output, staged
        from ...core.schemas import versions
        from ...schema.bundle import bundle, default_revision, exported_files, families

        if fmt not in families():
            raise InputError(f"--format {fmt}: no such schema family (known: {', '.join(families())})")
        rev = revision or default_revision(fmt)
        if rev not in versions(fmt):
            raise InputError(f"--revision {rev}: {fmt} has {', '.join(versions(fmt))}")
        check_output(out, [], force=force)
        with staged(out) as tmp:
            if bundle_:
                tmp.write_bytes(orjson.dumps(bundle(fmt, rev), option=orjson.OPT_INDENT_2) + b"\n")
            else:
                tmp.mkdir()
                for name, doc in exported_files(fmt, rev).items():
                    (tmp / name).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        sys.stderr.write(f"wrote {fmt} {rev} {'bundle' if bundle_ else 'schemas'} to {out}\n")

    app.add_typer(schema, name="schema")
