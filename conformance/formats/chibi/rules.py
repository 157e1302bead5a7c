"""The rule catalogue of the chibi format (seed 002: emesal/chibi docs/transcript-format.md).

IDs are stable: CB0xx input, schemas and vocabulary, CB1xx one entry, CB2xx across the
entries of a transcript and context.jsonl, CB3xx the manifest, partitions, rotation and
bloom files. Sections cite transcript-format.md (`TF §...`; both published versions,
v0.9 035fdd8 and HEAD 717af12, unless one is named) or, for what the document leaves
out, the chibi-core source file the fact was read from (listed in
../shared/samples/README.md).
"""

from __future__ import annotations

from ...core.findings import RuleCatalog, RuleInfo, Severity
from ...core.jsonio import IO_RULES

E, W = Severity.ERROR, Severity.WARNING

ENTRY_SCHEMA = RuleInfo("CB020", E, "TF §Entry Format", "Entry does not match its JSON Schema")
ENTRY_UNKNOWN_TYPE = RuleInfo(
    "CB026",
    W,
    "TF §transcript/ (append-only, never modified); TF §Entry Types",
    "Entry type chibi does not document (an older or newer chibi wrote it; chibi skips it)",
)
ENTRY_UNKNOWN_FIELD = RuleInfo(
    "CB027",
    W,
    "TF §transcript/ (append-only, never modified); TF §Fields",
    "Entry field chibi does not document (an older chibi wrote it; serde ignores it)",
)
FLOW_FALSE_WRITTEN = RuleInfo(
    "CB028",
    W,
    'TF §Fields (HEAD: flow_control "Omitted when false")',
    "flow_control: false is written; chibi omits the field when false (it reads the same as absent)",
)
MANIFEST_SCHEMA = RuleInfo("CB021", E, "partition.rs Manifest", "manifest.json does not match its JSON Schema")
INBOX_SCHEMA = RuleInfo("CB022", E, "TF §Inbox Format", "Inbox entry does not match its JSON Schema")
META_SCHEMA = RuleInfo("CB023", E, "context.rs ContextMeta", "context_meta.json does not match its JSON Schema")
REQUEST_SCHEMA = RuleInfo("CB024", E, "TF §Debug Files", "requests.jsonl record does not match its JSON Schema")
BLOOM_SCHEMA = RuleInfo("CB025", E, "partition.rs bloom", "Bloom file is not a fastbloom filter (shape check)")
MIXED_VOCABULARY = RuleInfo(
    "CB030",
    W,
    "TF §Flow Control Types",
    "Transcript mixes the v0.9 and v0.10 entry vocabularies",
    strict=True,
)
PINNED_VOCABULARY = RuleInfo(
    "CB031", E, "TF §Entry Types", "Entry belongs to another vocabulary than the one --format pins"
)

ID_UUID = RuleInfo("CB101", E, "TF §Fields (id)", "Entry id is not a UUID")
ID_UNIQUE = RuleInfo("CB102", E, "TF §Fields (id)", "Entry id is not unique within the transcript")
TIMESTAMP_SECONDS = RuleInfo("CB103", E, "TF §Fields (timestamp)", "timestamp is not integer Unix seconds")
ANCHOR_FORM = RuleInfo("CB104", E, "TF §Anchor Types", "Anchor is not from `system` with its fixed content")
COMPACTION_SUMMARY = RuleInfo("CB105", E, "TF §Metadata Structure", "Compaction anchor has no metadata.summary")
TRANSFER_FORM = RuleInfo(
    "CB106",
    E,
    "TF v0.10 §Flow Control",
    "control_transfer carries content or lacks flow_control: true",
)

TOOL_ARGS_JSON = RuleInfo(
    "CB107",
    W,
    "TF §Fields (content: tool arguments); chibi writes arguments as a JSON string",
    "tool_call content is not JSON",
)
ADDRESSING = RuleInfo(
    "CB108",
    E,
    "TF §Conversation Types, §Anchor Types (from/to tables)",
    "from/to does not name the context where the docs say it must",
)
FLOW_PAIRING = RuleInfo(
    "CB109",
    E,
    "TF §Flow Control Types (Directions), §User Prompt, §Call User",
    "Flow-control message and its control_transfer do not come as a pair in the same direction",
)
ANCHOR_REF_PLACEMENT = RuleInfo(
    "CB110",
    E,
    "TF §Metadata Structure (transcript_anchor_id: context.jsonl anchors)",
    "metadata.transcript_anchor_id outside a context.jsonl anchor",
)
CALL_UNANSWERED = RuleInfo("CB201", E, "TF §Fields (tool_call_id)", "Tool or flow-control call has no result")
RESULT_UNPAIRED = RuleInfo("CB202", E, "TF §Fields (tool_call_id)", "Result answers no earlier call")
RESULT_DUPLICATE = RuleInfo("CB203", E, "TF §Fields (tool_call_id)", "Call answered more than once")
CALL_ID_REUSED = RuleInfo(
    "CB204",
    E,
    "TF §Fields (tool_call_id)",
    "tool_call_id reused while an earlier call with it is open",
)
RESULT_KIND = RuleInfo("CB205", E, "TF §Entry Types", "Result kind differs from its call's (tool vs flow-control)")
RESULT_TOOL = RuleInfo("CB206", E, "TF §Conversation Types", "Result does not come `from` the tool its call went `to`")
CONTEXT_PROMPT_CHANGE = RuleInfo("CB210", E, "TF §System Types", "system_prompt_changed entry in context.jsonl")
CONTEXT_ANCHOR = RuleInfo("CB211", E, "TF §context.jsonl", "context.jsonl entry 0 is not an anchor")
CONTEXT_DERIVATION = RuleInfo(
    "CB212",
    E,
    "TF §Context Rebuilding",
    "context.jsonl differs from its derivation from the transcript",
)
CONTEXT_SECOND_ANCHOR = RuleInfo(
    "CB214", E, "TF §context.jsonl (Structure), §Context Rebuilding", "Anchor after entry 0 of context.jsonl"
)
PROMPT_NOT_RECORDED = RuleInfo(
    "CB215",
    W,
    "TF §context.jsonl (Note), §Context Rebuilding, §System Types (system_prompt_changed)",
    "system_prompt.md (the source of truth) is not the prompt the transcript last recorded",
)
CONTEXT_STALE = RuleInfo(
    "CB213",
    W,
    "TF §context.jsonl (rebuilt automatically when stale); chibi-core state/paths.rs dirty_marker_file",
    "context.jsonl is marked stale (.dirty): chibi rebuilds it from the transcript on next load",
)

PARTITION_MISSING = RuleInfo(
    "CB301", E, "TF §File Roles", "Partition listed in the manifest does not exist or is not a regular file"
)
PARTITION_COUNT = RuleInfo("CB302", E, "partition.rs PartitionMeta", "entry_count differs from the partition's entries")
PARTITION_RANGE = RuleInfo(
    "CB303",
    E,
    "partition.rs PartitionMeta",
    "start_ts/end_ts differ from the partition's first/last entry",
)
PARTITION_ORDER = RuleInfo("CB304", E, "TF §File Roles", "Partition time ranges out of order or overlapping")
ACTIVE_MISSING = RuleInfo("CB305", W, "TF §File Roles", "Active partition named in the manifest does not exist")
ACTIVE_ARCHIVED = RuleInfo("CB306", E, "partition.rs Manifest", "Active partition is also listed as archived")
PARTITION_TOKENS = RuleInfo(
    "CB307",
    E,
    "partition.rs estimate_tokens",
    "token_count is not the estimate for any bytes_per_token",
)
PARTITION_ORPHAN = RuleInfo("CB308", W, "TF §File Roles", "Partition file on disk is not listed in the manifest")
BLOOM_MISSING = RuleInfo("CB309", W, "TF §File Roles", "bloom_file listed in the manifest does not exist")
PATH_ESCAPES = RuleInfo("CB310", E, "partition.rs Manifest", "Manifest path is absolute or escapes transcript/")
MANIFEST_VERSION = RuleInfo("CB311", E, "partition.rs Manifest", "Manifest version is not 1")
FILE_NAMES = RuleInfo("CB312", W, "partition.rs rotate", "Partition or bloom file not named after its time range")
LEGACY_LAYOUT = RuleInfo(
    "CB313",
    W,
    'emesal/chibi docs/upgrade-notes.md "0.5.0 -> 0.5.1" (transcript.jsonl migrated to partitions)',
    "Context keeps its transcript in the pre-partition transcript.jsonl; chibi migrates it on load",
)
ROTATION = RuleInfo(
    "CB320",
    W,
    "TF §transcript/",
    "Partition exceeds a rotation threshold of the manifest's policy",
    strict=True,
)
BLOOM_EMPTY = RuleInfo("CB330", E, "partition.rs bloom", "Bloom filter has no bit set although its partition has terms")
# A warning, not an error: partition.rs's module header still calls the filter one "for
# fast ID lookups", so an older chibi may have indexed more than the content's words.
BLOOM_FOREIGN = RuleInfo(
    "CB331",
    W,
    "partition.rs build_bloom_filter, tokenize (the filter holds the content's words only)",
    "Bloom filter has bits set although its partition holds no searchable term",
)

CATALOG = RuleCatalog(
    [
        *IO_RULES,
        ENTRY_SCHEMA, ENTRY_UNKNOWN_TYPE, ENTRY_UNKNOWN_FIELD, FLOW_FALSE_WRITTEN, MANIFEST_SCHEMA, INBOX_SCHEMA, META_SCHEMA, REQUEST_SCHEMA, BLOOM_SCHEMA,
        MIXED_VOCABULARY, PINNED_VOCABULARY,
        ID_UUID, ID_UNIQUE, TIMESTAMP_SECONDS, ANCHOR_FORM, COMPACTION_SUMMARY, TRANSFER_FORM,
        TOOL_ARGS_JSON, ADDRESSING, FLOW_PAIRING, ANCHOR_REF_PLACEMENT, CONTEXT_SECOND_ANCHOR,
        CALL_UNANSWERED, RESULT_UNPAIRED, RESULT_DUPLICATE, CALL_ID_REUSED, RESULT_KIND,
        RESULT_TOOL,
        CONTEXT_PROMPT_CHANGE, CONTEXT_ANCHOR, CONTEXT_DERIVATION, CONTEXT_STALE, PROMPT_NOT_RECORDED,
        PARTITION_MISSING, PARTITION_COUNT, PARTITION_RANGE, PARTITION_ORDER, ACTIVE_MISSING,
        ACTIVE_ARCHIVED, PARTITION_TOKENS, PARTITION_ORPHAN, BLOOM_MISSING, PATH_ESCAPES,
        MANIFEST_VERSION, FILE_NAMES, LEGACY_LAYOUT, ROTATION, BLOOM_EMPTY, BLOOM_FOREIGN,
    ]
)  # fmt: skip

# TF §Anchor Types; the fixed contents are those chibi-core state/entries.rs writes
ANCHOR_CONTENT: dict[str, str] = {
    "context_created": "Context created",
    "compaction": "Context compacted",
    "archival": "Context archived/cleared",
}
ANCHORS = frozenset(ANCHOR_CONTENT)

# The paired types (call type -> result type) and which vocabulary owns each type
PAIRS: dict[str, str] = {"tool_call": "tool_result", "flow_control_call": "flow_control_result"}
RESULTS: dict[str, str] = {v: k for k, v in PAIRS.items()}
V09_TYPES = frozenset({"flow_control_call", "flow_control_result"})
V010_TYPES = frozenset({"control_transfer"})
KNOWN_TYPES = frozenset(
    {"message", "tool_call", "tool_result", "system_prompt_changed"} | ANCHORS | V09_TYPES | V010_TYPES
)
V010_FIELDS = ("role", "flow_control")

# Unix seconds of 9999-12-31T23:59:59Z: a larger `timestamp` is almost surely milliseconds
MAX_SECONDS = 253_402_300_799
