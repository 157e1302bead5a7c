"""The rule catalogue of the canonical format (seed 003, metis canonical-message-format).

IDs are stable: TS0xx input and schema, TS1xx one message, TS2xx across the messages
of a session, TS3xx tool definitions and tool input, TS4xx costs, TS5xx the SQLite
store. Sections cite `canonical-message-format.md` (§) unless they name another spec.
"""

from __future__ import annotations

from ...core.convertkit import LOSSY  # TS900: declared with the conversion kit that reports it
from ...core.findings import RuleCatalog, RuleInfo, Severity
from ...core.jsonio import IO_RULES

E, W = Severity.ERROR, Severity.WARNING

UNKNOWN_METADATA = RuleInfo(
    "TS010",
    W,
    "§10.2, §10.3",
    "Unknown field in a message, its metadata (at any depth) or a known block (tolerated; error under --strict)",
    strict=True,
)
UNKNOWN_BLOCK = RuleInfo(
    "TS011", W, "§10.3, §4.2.2", "Unknown content block type (tolerated; error under --strict)", strict=True
)
UNKNOWN_VERSION = RuleInfo("TS012", E, "§10.1", "schema_version not supported by this turnspec")
SCHEMA = RuleInfo("TS020", E, "§4", "Document does not match its JSON Schema")

EMPTY_CONTENT = RuleInfo("TS101", E, "§5.1.1", "user/assistant/tool message has no content blocks")
ROLE_CONTENT = RuleInfo("TS102", E, "§5.1.3", "Content block not allowed for the message's role")
TOOL_ONE_BLOCK = RuleInfo(
    "TS103", E, "§5.1.3", "Tool message must hold exactly one tool_result block (unknown blocks aside)"
)
ASSISTANT_MODEL = RuleInfo("TS104", E, "§5.3.1", "Complete assistant message lacks metadata.model or metadata.provider")
ASSISTANT_ROUTING = RuleInfo("TS105", E, "§5.3.2", "Complete assistant message lacks metadata.routing")
ASSISTANT_USAGE = RuleInfo("TS106", E, "§5.3.3", "Complete assistant message lacks metadata.usage")
ROUTING_MODEL = RuleInfo("TS107", E, "§4.3", "routing.chosen_model differs from metadata.model")
MODEL_ID = RuleInfo("TS108", E, "§6.3", "Model id is not `provider:model`")
MODEL_PROVIDER = RuleInfo("TS109", E, "§6.3, §4.3", "Model id's provider differs from metadata.provider")
TOOL_PARENT = RuleInfo("TS110", E, "§5.3.4", "Tool message lacks metadata.parent_tool_use_id")
TOOL_PARENT_MATCH = RuleInfo("TS111", E, "§5.3.4", "parent_tool_use_id differs from the tool_result's tool_use_id")
TOOL_ID_FORMAT = RuleInfo("TS112", E, "§6.2, §5.2.1", "Tool id is not a canonical `tu_<ULID>`")
IMAGE_MEDIA_TYPE = RuleInfo("TS113", E, "§4.2", "Image media_type is not an image/* type (case-insensitive)")
FILE_REF_PATH = RuleInfo("TS114", E, "§4.2", "file_ref path is absolute or escapes the workspace")
CREATED_AT_REAL = RuleInfo("TS115", E, "§4.1", "created_at is not a real calendar date and time")
BASE64_DATA = RuleInfo("TS116", E, "§4.2", "base64 image (or audio) data is not valid base64")
CREATED_AT_ENCODING = RuleInfo(
    "TS117", W, "§4.1", "created_at is valid but not in the canonical encoding (6 fraction digits, Z)", strict=True
)
COST_ENCODING = RuleInfo(
    "TS118", W, "§4.3", "cost_usd is a JSON number or exponent form, not a plain decimal string", strict=True
)
CANCELLED_STATUS = RuleInfo(
    "TS119", E, "streaming §6.2.6, §4.3", "Message with stop_reason cancelled does not have status cancelled"
)
URL_DATA = RuleInfo("TS120", E, "§4.2", "url image (or audio) data is not an absolute URL (RFC 3986 scheme:...)")
ID_EMAIL = RuleInfo(
    "TS121", W, "§4.3", "user_id or team_id is shaped like an email address (ids are pseudonymous, no plaintext PII)"
)

MESSAGE_ULID = RuleInfo("TS201", E, "§6.1", "Message id is not a ULID")
MESSAGE_UNIQUE = RuleInfo("TS202", E, "§6.1", "Message id is not unique")
MESSAGE_MONOTONIC = RuleInfo("TS203", E, "§6.1", "Message ids are not increasing within the session")
CREATED_MONOTONIC = RuleInfo(
    "TS204", W, "§6.1, §4.1", "created_at goes backwards within the session (only ids must be monotonic)"
)
RESULT_UNPAIRED = RuleInfo("TS205", E, "§5.2.2", "tool_result answers no earlier tool_use of the same session")
RESULT_DUPLICATE = RuleInfo("TS206", E, "§5.2.3", "tool_use answered more than once")
TOOL_ID_REPEATED = RuleInfo("TS207", E, "§5.2.2, §6.2", "Tool id used by more than one tool_use")
TOOL_UNANSWERED = RuleInfo("TS208", W, "§5.2.2", "tool_use never answered by end of input")
RESUMED_AFTER_CANCEL = RuleInfo(
    "TS209",
    E,
    "streaming §6.3",
    "Assistant message after a cancelled one with no user message between (a cancelled turn is not resumed)",
)

TOOL_NAME = RuleInfo("TS301", E, "§4.4", "Tool name is not snake_case")
TOOL_NAME_UNIQUE = RuleInfo("TS302", E, "§4.4", "Tool name defined more than once")
TOOL_SCHEMA_SUBSET = RuleInfo("TS303", E, "§5.4", "input_schema uses a construct outside the allowed subset")
TOOL_UNKNOWN = RuleInfo("TS304", E, "§4.4, §5.2.4", "tool_use names a tool that is not defined")
TOOL_INPUT = RuleInfo("TS305", E, "§5.2.4", "tool_use input does not match the tool's input_schema")
TOOL_USE_NAME = RuleInfo(
    "TS306", E, "§4.2", "tool_use name is not a canonical tool name (snake_case, no provider prefix)"
)

COST_MISMATCH = RuleInfo("TS401", E, "§6.4", "cost_usd differs from the price table's exact recomputation")
PRICING_VERSION = RuleInfo("TS402", E, "§6.4", "pricing_version is not in the price table")
PRICING_MODEL = RuleInfo("TS403", E, "§6.4", "Model has no price in that pricing_version")
PRICING_BUCKET = RuleInfo(
    "TS404", W, "§6.4", "Cached tokens used but the table has no rate for them (cost_usd not verified)"
)


CATALOG = RuleCatalog(
    [
        *IO_RULES,
        UNKNOWN_METADATA, UNKNOWN_BLOCK, UNKNOWN_VERSION, SCHEMA,
        EMPTY_CONTENT, ROLE_CONTENT, TOOL_ONE_BLOCK, ASSISTANT_MODEL, ASSISTANT_ROUTING,
        ASSISTANT_USAGE, ROUTING_MODEL, MODEL_ID, MODEL_PROVIDER, TOOL_PARENT, TOOL_PARENT_MATCH,
        TOOL_ID_FORMAT, IMAGE_MEDIA_TYPE, FILE_REF_PATH, CREATED_AT_REAL, BASE64_DATA,
        CREATED_AT_ENCODING, COST_ENCODING, CANCELLED_STATUS, URL_DATA, ID_EMAIL,
        MESSAGE_ULID, MESSAGE_UNIQUE, MESSAGE_MONOTONIC, CREATED_MONOTONIC, RESULT_UNPAIRED,
        RESULT_DUPLICATE, TOOL_ID_REPEATED, TOOL_UNANSWERED, RESUMED_AFTER_CANCEL,
        TOOL_NAME, TOOL_NAME_UNIQUE, TOOL_SCHEMA_SUBSET, TOOL_UNKNOWN, TOOL_INPUT, TOOL_USE_NAME,
        COST_MISMATCH, PRICING_VERSION, PRICING_MODEL, PRICING_BUCKET,
        LOSSY,  # emitted by every conversion into and out of canonical; listed so `turnspec rules` shows it
    ]
)  # fmt: skip

# §5.1.3 role/content compatibility; `audio` (schema revision 2, §4.2.2) joins images for
# users and is also an assistant output (speech replies). A revision-1 reader never sees
# it here: to it, audio is an unknown block (TS011).
ALLOWED_BLOCKS: dict[str, frozenset[str]] = {
    "user": frozenset({"text", "image", "audio"}),
    "assistant": frozenset({"text", "tool_use", "thinking", "redacted_thinking", "audio"}),
    "tool": frozenset({"tool_result"}),
    "system": frozenset({"text"}),
}

# §5.4: JSON Schema keywords a tool's input_schema must not use
DISALLOWED_SCHEMA_KEYWORDS = ("$ref", "oneOf", "anyOf", "allOf", "not", "if", "then", "else", "patternProperties")
