"""The rule ids of `turnspec schema diff` findings (SARIF, GitHub annotations, `turnspec rules`).

Kept apart from conformance.schema.diff, which loads the schema graph, validators and sampler,
so listing rules stays cheap.
"""

from __future__ import annotations

from ..core.findings import RuleCatalog, RuleInfo, Severity

SD_BREAKING = RuleInfo(
    "SD001", Severity.ERROR, "§10.2", "Schema change is BREAKING: old and new readers each reject the other's data"
)
SD_BACKWARD = RuleInfo(
    "SD002", Severity.WARNING, "§10.2", "Schema change is BACKWARD only: old readers may reject new data"
)
SD_FORWARD = RuleInfo(
    "SD003", Severity.WARNING, "§10.2", "Schema change is FORWARD only: new readers may reject old data"
)

CATALOG = RuleCatalog([SD_BREAKING, SD_BACKWARD, SD_FORWARD])
