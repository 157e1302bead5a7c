"""What the fast path reads of the run that builds it (`checker.CanonicalRun`)."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ....core.findings import Finding
from ....core.jsonio import Record
from ..engine import Context, Driver, RunState, SessionFacts

if TYPE_CHECKING:
    from ...base import Options


class Run(typing.Protocol):
    """What the fast path reads of its run (`checker.CanonicalRun`): its options, schema
    revisions, driver, context and state, and its exact path for what it cannot clear.
    Declared here, not imported, so the fast path sits below the run that builds it."""

    options: Options
    revision: dict[int, str]
    latest: int
    driver: Driver
    ctx: Context
    state: RunState
    track_ids: bool

    def session(self, facts: SessionFacts) -> list[Finding]: ...

    def check_message(self, rec: Record) -> list[Finding]: ...

    def check_tool_definition(self, rec: Record) -> Iterator[Finding]: ...
