"""Validating canonical messages held in memory (adapter output), not read from a file."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...core.findings import Finding, Selection
from ...core.jsonio import Record
from ..base import Options
from .checker import CanonicalRun


def validate_messages(
    messages: Iterable[Any],
    *,
    label: str = "<memory>",
    selection: Selection | None = None,
    finish: bool = True,
    revisions: Sequence[str] | None = None,
) -> list[Finding]:
    """Every finding the validator reports for `messages`, located as `label` + `/<index>`.

    The messages form one run, so the cross-message rules (pairing, monotonic ids) apply;
    `finish=False` skips end-of-input rules (an unanswered trailing tool call);
    `revisions` opts into drafted schema revisions (default: the spec as published, v1).
    """
    run = CanonicalRun(Options(selection=selection or Selection()), revisions=revisions)
    out: list[Finding] = []
    for i, m in enumerate(messages):
        rec = Record(label, i + 1, f"/{i}", m, 0)
        out.extend(
            run.check_tool_definition(rec)
            if isinstance(m, dict) and "input_schema" in m and "role" not in m
            else run.check_message(rec)
        )
    if finish:
        out.extend(run.finish())
    return out
