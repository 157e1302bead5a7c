"""`turnspec replay-check`: a shell over conformance.replay."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Annotated

import orjson
import typer

from ...core import escaping
from ...core.errors import InputError
from ...core.findings import location_key
from ...core.jsonio import forget_stdin
from ...core.reporting import FindingsReport, findings_output, output_choices, write_findings
from ...formats.canonical.markers import DEFAULT_CRITICAL_KEY
from ..options import LOCK_WAIT, resolved_lock_wait

# the command's own renderings, then every findings output (`reporting.FINDINGS_OUTPUTS`)
ReplayOutput = output_choices("ReplayOutput", "text", "json")
TEXT = ReplayOutput("text")


def register(app: typer.Typer) -> None:
    @app.command("replay-check")
    def replay_check_cmd(
        paths: Annotated[
            list[Path],
            typer.Argument(
                help="Transcripts: canonical .jsonl/.json, a .db store, or any format turnspec converts",
                show_default=False,
            ),
        ],
        to: Annotated[
            list[str] | None, typer.Option("--to", help="Target ADAPTER[:MODEL] (repeatable)", show_default=False)
        ] = None,
        matrix: Annotated[
            bool, typer.Option("--matrix", help="Every registered adapter as a target; print the matrix")
        ] = False,
        source: Annotated[
            str | None,
            typer.Option("--from", help="Provider of messages that name none (for provenance)", show_default=False),
        ] = None,
        fmt: Annotated[
            str | None, typer.Option("--format", help="Input format when it cannot be detected", show_default=False)
        ] = None,
        output: Annotated[ReplayOutput, typer.Option("--output", "-o", help="Report format")] = TEXT,  # type: ignore[valid-type]
        strict: Annotated[bool, typer.Option("--strict", help="A lossy session fails like a refused one")] = False,
        verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Text output lists ok sessions too")] = False,
        critical_key: Annotated[
            str, typer.Option(help="Metadata key the sessions mark critical blocks with (§4.2.2 names none)")
        ] = DEFAULT_CRITICAL_KEY,
        lock_wait: Annotated[float | None, LOCK_WAIT] = None,
    ) -> None:
        """Would each stored session survive a swap to the target adapter? No network: the history is only rendered.

        Exit 0 when every session is ok or lossy, 1 when any is refused (or lossy with --strict), 2 on usage errors.
        """
        # function-level import: loading adapters and formats is the command's work, not --help's
        from ...adapters import registry as adapter_registry
        from ...replay import LOSSY, OK, REFUSED, ReplaySummary, replay_check, target

        forget_stdin()  # each run reads standard input afresh (as `validate`)

        specs = list(to or [])
        if matrix:
            specs += [n for n in sorted(adapter_registry.available()) if n not in specs]
        if not critical_key:
            raise InputError("--critical-key: an empty key marks nothing")
        if not specs:
            raise InputError("replay-check: name a target with --to ADAPTER[:MODEL], or pass --matrix")
        targets = [target(s) for s in specs]
        summary = ReplaySummary()
        out = sys.stdout
        verdicts = replay_check(
            paths, targets, fmt=fmt, source_provider=source, strict=strict, summary=summary, critical_key=critical_key,
            lock_wait=resolved_lock_wait(lock_wait),
        )  # fmt: skip
        if findings_output(output) is not None:
            # function-level import: the replay rules' catalogue, for the findings outputs only
            from ...replay import CATALOG

            found = [f for v in verdicts for f in v.findings] + summary.problems
            report = FindingsReport(
                "turnspec replay-check", found, CATALOG, files=[str(p) for p in paths], skipped=summary.skipped
            )
            write_findings(output, report, out)
        elif output == "json":
            out.write('{"sessions": [')
            for i, v in enumerate(verdicts):
                out.write(
                    ("," if i else "")
                    + "\n  "
                    + escaping.json_text(orjson.dumps(escaping.json_safe(v.as_dict())).decode())
                )
            summary.problems.sort(key=location_key)  # by path, line, column, as every output
            body = {
                "summary": {t: {k: c.get(k, 0) for k in (OK, LOSSY, REFUSED)} for t, c in summary.counts.items()},
                "input_errors": [f.as_dict() for f in summary.problems],
                "skipped": summary.skipped,
            }
            tail = orjson.dumps(escaping.json_safe(body), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()
            tail = escaping.json_text(tail)
            out.write("\n],\n" + tail[1:].lstrip("\n") + "\n")
        else:
            for v in verdicts:
                if v.verdict == OK and not verbose:
                    continue
                where = v.path if v.line is None else f"{v.path}:{v.line}"
                part = f" (part {v.part})" if v.part > 1 else ""
                out.write(
                    escaping.text_line(f"{where}: session {v.session_id}{part} -> {v.target}: {v.verdict}") + "\n"
                )
                for f in v.findings:
                    out.write(escaping.text_line(f"  {f.format()}") + "\n")
            for f in sorted(summary.problems, key=location_key):
                out.write(escaping.text_line(f.format()) + "\n")
            for p in summary.skipped:
                out.write(escaping.text_line(f"skipped (not a transcript turnspec reads): {p}") + "\n")
            width = max([len(t.label) for t in targets] + [6])
            out.write(f"\n{'target':<{width}}  {'ok':>6}  {'lossy':>6}  {'refused':>7}\n")
            for t in [x.label for x in targets]:
                c = summary.counts.get(t) or Counter()
                row = f"{t:<{width}}  {c.get(OK, 0):>6}  {c.get(LOSSY, 0):>6}  {c.get(REFUSED, 0):>7}"
                out.write(escaping.text_line(row) + "\n")
        if summary.problems:
            raise typer.Exit(2)
        if summary.refused or (strict and summary.lossy):
            raise typer.Exit(1)
