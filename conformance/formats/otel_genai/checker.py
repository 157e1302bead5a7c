"""Validation of OpenTelemetry GenAI message records: the reader's findings, then the OT
rules.

Each record is checked on its own (tool-call pairing is scoped to it); every rule skips
values of the wrong type that another rule reports, so one file shows all its problems at
once. Nothing is carried across files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...core.convertkit import Item, short
from ...core.findings import Finding
from ..base import PeerRun
from . import rules as R
from .reader import Record, read_records


def response_of(part: dict[str, Any]) -> tuple[bool, Any]:
    """(present, value) of a ToolCallResponsePart's response (`result` in the schemas'
    earlier revisions)."""
    for key in ("response", "result"):
        if key in part:
            return True, part[key]
    return False, None


class OtelGenAIRun(PeerRun[Record]):
    """Validates OpenTelemetry GenAI message records."""

    units = "records"

    def read(self, path: Path, data: bytes | None = None) -> Iterator[Record | Finding]:
        return read_records(path, self.options.max_line_bytes, data)

    def size(self, unit: Record) -> int:
        return 1

    # -- rules ------------------------------------------------------------------------

    def check(self, rec: Record) -> Iterator[Finding | None]:
        for ptr, message in rec.problems:
            yield self.finding(rec, ptr, R.SHAPE, message)
        calls: set[str] = set()
        for part in rec.sections.get(R.SYSTEM, ()):
            yield from self._part(part, part.pointer, part.value, calls)
        for name, m in rec.messages():
            v = m.value
            if not isinstance(v, dict):
                yield self.finding(m, m.pointer, R.SHAPE, f"a message is a JSON object, not {short(v)}")
                continue
            if not isinstance(v.get("role"), str):
                where = f"{m.pointer}/role" if "role" in v else m.pointer
                yield self.finding(m, where, R.ROLE, f"a message's role is a string, not {short(v.get('role'))}")
            if name == R.OUTPUT and not isinstance(v.get("finish_reason"), str):
                where = f"{m.pointer}/finish_reason" if "finish_reason" in v else m.pointer
                yield self.finding(
                    m,
                    where,
                    R.FINISH,
                    f"an output message's finish_reason is a string, not {short(v.get('finish_reason'))}",
                )
            parts = v.get("parts")
            if not isinstance(parts, list):
                where = f"{m.pointer}/parts" if "parts" in v else m.pointer
                yield self.finding(m, where, R.PARTS, f"a message's parts are an array, not {short(parts)}")
                continue
            for j, part in enumerate(parts):
                yield from self._part(m, f"{m.pointer}/parts/{j}", part, calls)

    def _part(self, m: Item, pp: str, part: Any, calls: set[str]) -> Iterator[Finding | None]:
        if not isinstance(part, dict) or not isinstance(part.get("type"), str):
            where = f"{pp}/type" if isinstance(part, dict) and "type" in part else pp
            yield self.finding(m, where, R.PARTS, f"a part is an object with a string type, not {short(part)}")
            return
        kind = part["type"]
        for name, types, what in R.REQUIRED.get(kind, ()):
            if not isinstance(part.get(name), types):
                where = f"{pp}/{name}" if name in part else pp
                yield self.finding(m, where, R.PART, f"{kind} part {name} must be {what}, not {short(part.get(name))}")
        pid = part.get("id")
        if kind == "tool_call":
            if pid is not None and not isinstance(pid, str):
                yield self.finding(
                    m, f"{pp}/id", R.PART, f"tool_call part id must be a string or null, not {short(pid)}"
                )
            elif isinstance(pid, str):
                calls.add(pid)
        elif kind == "tool_call_response":
            if not response_of(part)[0]:
                yield self.finding(m, pp, R.PART, "tool_call_response part has no response")
            if pid is not None and not isinstance(pid, str):
                yield self.finding(
                    m, f"{pp}/id", R.PART, f"tool_call_response part id must be a string or null, not {short(pid)}"
                )
            elif pid not in calls:
                yield self.finding(
                    m, f"{pp}/id" if "id" in part else pp, R.UNPAIRED,
                    f"tool_call_response id {short(pid)} answers no earlier tool call of this record",
                )  # fmt: skip
