"""`turnspec cassettes lint`: a shell over conformance.wire.cassette_lint."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import orjson
import typer

from ...core import escaping
from ...core.errors import InputError
from ...core.findings import Finding, location_key
from ...core.reporting import FindingsReport, findings_output, output_choices, write_findings

# the command's own renderings, then every findings output (`reporting.FINDINGS_OUTPUTS`)
LintOutput = output_choices("LintOutput", "text", "json")
TEXT = LintOutput("text")


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Recorded HTTP cassettes (vcrpy YAML).", no_args_is_help=True)
    app.add_typer(group, name="cassettes")

    @group.command("lint")
    def lint_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(
                help="Cassette files or folders (*.yaml, *.yml, *.json, *.har, *.httprr; each also .gz)",
                show_default=False,
            ),
        ],
        fix: Annotated[
            bool, typer.Option("--fix", help="Scrub what is found (with --in-place; alone: show what would change)")
        ] = False,
        in_place: Annotated[
            bool, typer.Option("--in-place", help="With --fix: rewrite the cassettes, atomically")
        ] = False,
        output: Annotated[LintOutput, typer.Option("--output", "-o", help="Report format")] = TEXT,  # type: ignore[valid-type]
    ) -> None:
        """Find secrets in cassettes: credentials, provider API keys, bearer tokens, account ids, cookies,
        signed URLs, unscrubbed request-body fields. Exit 0 clean, 1 found, 2 unreadable input."""
        # function-level import: the linter loads detect-secrets' plugins, which --help does not need
        from ...wire.cassette_lint import CATALOG, diff, iter_cassettes, lint
        from ...wire.cassette_lint import fix as scrub

        if in_place and not fix:
            raise InputError("--in-place goes with --fix")
        findings: list[Finding] = []
        unreadable: list[str] = []
        unfixed: list[str] = []
        would: list[str] = []  # --fix alone: the unified diff of what --in-place would write
        files = list(iter_cassettes(paths))
        if not files:
            raise InputError(
                f"no cassette (*.yaml, *.yml, *.json, *.har, *.httprr) under {', '.join(str(p) for p in paths)}"
            )
        for path in files:
            try:
                hits = lint(path)
            except InputError as exc:
                unreadable.append(str(exc))
                continue
            findings.extend(h.finding for h in hits)
            if fix and in_place and hits:
                unfixed.extend(scrub(path, hits))
            elif fix and hits:
                lines, problems = diff(path, hits)
                would.extend(lines)
                unfixed.extend(problems)
        findings.sort(key=location_key)  # by path, line, column, as every output
        out = sys.stdout
        if output == "json":
            body = {"files": len(files), "findings": [f.as_dict() for f in findings], "unreadable": unreadable,
                    "fixed": bool(fix and in_place), "not_fixed": unfixed}  # fmt: skip
            out.write(
                escaping.json_text(orjson.dumps(escaping.json_safe(body), option=orjson.OPT_INDENT_2).decode()) + "\n"
            )
        elif findings_output(output) is not None:
            files_read = [str(p) for p in files]
            write_findings(output, FindingsReport("turnspec cassettes lint", findings, CATALOG, files=files_read), out)
        else:
            verb = "scrubbed" if fix and in_place else ("would scrub" if fix else "found")
            for f in findings:
                out.write(escaping.text_line(f.format()) + "\n")
            for line in unfixed:
                out.write(escaping.text_line(f"not scrubbed: {line}") + "\n")
            for line in would:
                out.write(escaping.text_line(line) + "\n")
            out.write(f"{verb} {len(findings)} secret(s) in {len(files)} cassette(s)\n")
        for line in unreadable:
            sys.stderr.write(escaping.text_line(f"turnspec: {line}") + "\n")
        if unreadable:
            raise typer.Exit(2)
        if unfixed or (findings and not (fix and in_place)):
            raise typer.Exit(1)
