"""The suite's bottom layer: what a check yields and what a run folds it into.

Checks import this module and `capture`; the runner imports the checks. Nothing here
imports a check or the runner, so the suite has no import cycle.
"""

from __future__ import annotations

import traceback as tb
from contextvars import ContextVar, Token
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from ..adapters.errors import OperationNotOffered
from ..adapters.protocol import Adapter

Status = Literal["pass", "fail", "skip"]
# a (rule, adapter) cell: an advisory rule (severity warning, `RuleInfo.strict`) whose cases
# failed is "warn", which fails the run only under --strict (then it folds to "fail")
Verdict = Literal["pass", "fail", "skip", "warn"]
SUITE_SUBJECT = "(cassettes)"


@dataclass(frozen=True)
class Outcome:
    """One case of one rule: an interaction, an adapter pair, a dropped block.

    `capability` names the declared capability (`supports_*`) the case exercises, when it
    exercises one; the report counts cases per capability from it, and a capability
    declared true that no case ran is a TC002 skip (see `runner.capability_gate`).
    """

    rule: str
    adapter: str
    status: Status
    subject: str
    message: str = ""
    capability: str | None = None
    measure: float | None = None  # a number the case measured (TC701: relative estimate error)
    traceback: str = ""  # the adapter's traceback when the case failed because the adapter crashed


@dataclass
class RuleResult:
    """One (rule, adapter) cell: failed when any case failed (warned, for an advisory rule),
    passed when any passed, skipped (with the reasons) otherwise. `passed + failed` is the
    number of cases run."""

    rule: str
    adapter: str
    status: Verdict
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    reasons: list[str] = field(default_factory=list)
    skip_reasons: list[str] = field(default_factory=list)  # why cases were skipped, even when others ran
    capabilities: dict[str, int] = field(default_factory=dict)  # capability -> cases run exercising it
    tracebacks: dict[str, str] = field(default_factory=dict)  # failing reason -> the adapter's traceback

    @property
    def cases_run(self) -> int:
        return self.passed + self.failed

    def explained(self, *, every_traceback: bool = True, limit: int | None = None) -> list[str]:
        """The reasons, each followed by its crash's traceback (indented), a traceback
        already shown once replaced by a note; `every_traceback=False` shows only the first."""
        out: list[str] = []
        shown: set[str] = set()
        for why in self.reasons[:limit]:
            out.append(why)
            trace = self.tracebacks.get(why)
            if not trace:
                continue
            if trace in shown:
                out.append("    (traceback as above)")
            elif every_traceback or not shown:
                out += ["    " + line for line in trace.rstrip("\n").splitlines()]
            shown.add(trace)
        return out


@dataclass
class AdapterUnderTest:
    ref: str
    adapter: Adapter
    cassette_dirs: list[Path] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.adapter.name)


# Crashes: `checks.common.crash(exc)` turns an exception into a one-line reason and notes
# its traceback here, keyed by that line; the runner attaches it to the failing case whose
# message quotes the line (checks build messages around it, so the Outcome is not theirs to
# carry it). An `OperationNotOffered` (an exec child that does not offer the operation) is
# noted too: the case quoting it is skipped with its reason (`not_offered`), never failed.


class CrashNotes(dict[str, str]):
    """The crashes noted during one check: line -> traceback; `not_offered`: line -> the
    reason of an operation the adapter does not offer."""

    def __init__(self) -> None:
        super().__init__()
        self.not_offered: dict[str, str] = {}

    def clear(self) -> None:
        super().clear()
        self.not_offered.clear()


_CRASHES: ContextVar[CrashNotes | None] = ContextVar("turnspec_crashes", default=None)
_SUITE_DIR = Path(__file__).resolve().parent
_EXEC_HOST_DIR = _SUITE_DIR.parent / "adapters" / "exec"


def adapter_traceback(exc: BaseException) -> str:
    """`exc`'s traceback without the suite's own frames (where the check called the
    adapter): what is left is the adapter's code, down to where it raised."""
    frames = tb.extract_tb(exc.__traceback__)
    kept = [f for f in frames if not Path(f.filename).resolve().is_relative_to(_SUITE_DIR)] or list(frames)
    own = [f for f in kept if not Path(f.filename).resolve().is_relative_to(_EXEC_HOST_DIR)]
    if kept and not own:  # an exec adapter: the host's frames are no code of the adapter's
        return "".join(tb.format_exception_only(type(exc), exc))  # the child's traceback is a note
    return (
        "Traceback (most recent call last):\n"
        + "".join(tb.format_list(kept))
        + "".join(tb.format_exception_only(type(exc), exc))
    )


def note_crash(line: str, exc: BaseException) -> None:
    """Keep `exc`'s traceback for the case whose message will quote `line`."""
    crashes = _CRASHES.get()
    if crashes is not None:
        crashes[line] = adapter_traceback(exc)
        if isinstance(exc, OperationNotOffered):
            crashes.not_offered[line] = str(exc)


def collect_crashes() -> tuple[CrashNotes, Token[CrashNotes | None]]:
    """Start noting crashes; returns the table and the token `stop_collecting` takes."""
    table = CrashNotes()
    return table, _CRASHES.set(table)


def stop_collecting(token: Token[CrashNotes | None]) -> None:
    _CRASHES.reset(token)


def not_offered(o: Outcome, crashes: CrashNotes) -> Outcome:
    """A failing case whose message quotes an operation the adapter does not offer, as a
    skip with that reason: the suite could not look, which is no verdict (an exec child's
    hello lists what it offers, docs/exec-protocol.md)."""
    if o.status != "fail" or not crashes.not_offered:
        return o
    reason = next((why for line, why in crashes.not_offered.items() if line in o.message), None)
    return o if reason is None else replace(o, status="skip", message=f"not offered: {reason}", traceback="")


def with_traceback(o: Outcome, crashes: dict[str, str]) -> Outcome:
    """`o` with the traceback of each crash its message quotes (a failing case only)."""
    if o.status != "fail" or not crashes or o.traceback:
        return o
    found = [t for line, t in crashes.items() if line in o.message]
    if not found:
        return o
    return replace(o, traceback="\n".join(dict.fromkeys(found)))
