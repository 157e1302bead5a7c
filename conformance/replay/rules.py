"""The replay-check catalogue: why a stored session would not survive a swap to an adapter.

Ids are stable. Refusals (errors) are what a routing engine refuses before dispatch
(canonical spec §8.4, adapter contract §3.4 "routing validates against these before
dispatch"); lossy steps (warnings) are the §7.3 drops the adapter would make.
"""

from __future__ import annotations

from ..core.findings import RuleCatalog, RuleInfo, Severity

E, W = Severity.ERROR, Severity.WARNING

IMAGES_UNSUPPORTED = RuleInfo(
    "RC001", E, "§8.4, §7.2", "History holds images; the target declares supports_images: false"
)
IMAGE_TYPE_UNSUPPORTED = RuleInfo("RC002", E, "§7.2", "Image media type not in the target's accepted_image_media_types")
TOOLS_UNSUPPORTED = RuleInfo(
    "RC003", E, "§7.2 (v1.1)", "History holds tool turns; the target declares supports_tools: false"
)
SYSTEM_UNSUPPORTED = RuleInfo(
    "RC004", E, "§7.2 (v1.1)", "History holds a system prompt; the target declares supports_system_prompt: false"
)
CONTEXT_TOO_LONG = RuleInfo(
    "RC005", E, "§7.2, contract §3.4", "History is longer than max_context_tokens by the target's own estimate"
)
CRITICAL_DROP = RuleInfo("RC006", E, "§4.2.2, §7.3", "A block marked critical cannot be carried by the target")
RENDER_FAILED = RuleInfo("RC007", E, "§7.1", "The target adapter failed to render the history")
BLOCK_DROPPED = RuleInfo("RC101", W, "§7.3", "The target drops a block of the history (the §7.3 WARN)", strict=True)
SILENT_DROP = RuleInfo("RC102", E, "§7.3", "Foreign opaque state neither reached the wire nor was reported as dropped")
TOOL_ID_REJECTED = RuleInfo("RC201", E, "§6.2", "A tool id on the wire breaks the target API's documented id rule")
TOOL_ID_COLLISION = RuleInfo("RC202", E, "§6.2", "Two tool calls reach the target's request under one provider id")
FOREIGN_STATE_SENT = RuleInfo(
    "RC301", E, "§6.5, contract §4.4", "Opaque state issued by another provider reaches the target's request"
)
INPUT_UNREADABLE = RuleInfo("RC900", E, "§10", "A record of the input cannot be read as a canonical message")

CATALOG = RuleCatalog(
    [
        IMAGES_UNSUPPORTED,
        IMAGE_TYPE_UNSUPPORTED,
        TOOLS_UNSUPPORTED,
        SYSTEM_UNSUPPORTED,
        CONTEXT_TOO_LONG,
        CRITICAL_DROP,
        RENDER_FAILED,
        BLOCK_DROPPED,
        SILENT_DROP,
        TOOL_ID_REJECTED,
        TOOL_ID_COLLISION,
        FOREIGN_STATE_SENT,
        INPUT_UNREADABLE,
    ]
)
