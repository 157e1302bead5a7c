"""Rule catalogue of migrations (TM0xx). Sections cite canonical-message-format.md."""

from __future__ import annotations

from ..core.findings import RuleCatalog, RuleInfo, Severity

NO_PATH = RuleInfo("TM001", Severity.ERROR, "§10.2", "No migration path from the document's revision to the target")
REFUSED = RuleInfo(
    "TM002",
    Severity.ERROR,
    "§10.2",
    "Migration refused: the target revision cannot represent this content",
)
INVALID_OUTPUT = RuleInfo(
    "TM003",
    Severity.ERROR,
    "§10.2",
    "Migrated document does not validate under the target revision",
)

CATALOG = RuleCatalog([NO_PATH, REFUSED, INVALID_OUTPUT])
