"""Helpers for the chibi tests (a module name no other format's tests use)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from conformance.api import Report, validate

FIXTURES = Path(__file__).parent / "fixtures"


def read_lines(path: Path) -> list[dict[str, Any]]:
    # split on LF only: str.splitlines() would also split inside strings at U+0085, U+2028, ...
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def write_lines(path: Path, values: list[Any]) -> None:
    text = "".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) + "\n" for v in values)
    path.write_text(text, encoding="utf-8")


def edit_json(path: Path, fn: Callable[[Any], Any]) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    out = fn(value)
    path.write_text(json.dumps(value if out is None else out), encoding="utf-8")


def edit_entry(ctx: Path, rel: str, index: int, fn: Callable[[dict[str, Any]], None]) -> None:
    """Edit entry `index` of a transcript file, and the same entry in context.jsonl.

    Applying the change to both keeps context.jsonl the derivation of the transcript,
    so a test sees only the rule it is about.
    """
    path = ctx / "transcript" / rel
    lines = read_lines(path)
    old_id = lines[index]["id"]
    fn(lines[index])
    write_lines(path, lines)
    cpath = ctx / "context.jsonl"
    if cpath.exists():
        clines = read_lines(cpath)
        for i, e in enumerate(clines):
            if e["id"] == old_id:
                fn(clines[i])
        write_lines(cpath, clines)


def rules_of(report: Report) -> set[str]:
    return {f.rule for f in report.findings}


def check(path: Path, fmt: str | None = None) -> Report:
    return validate([path], fmt=fmt)
