"""The rule catalogue of geppetto Turn YAML (seed 004, "Turns and Blocks in Geppetto").

IDs are stable: GE0xx reading and schema, GE1xx one block, GE2xx metadata and data keys,
GE3xx tool calls across the blocks of a turn, GE9xx conversion. Sections name the
heading of seed 004 they enforce (`turns "Block Kinds"`); facts the seed leaves out were
read from geppetto's code (go-go-golems/geppetto: pkg/turns, pkg/turns/serde) and are
named after it. YAML rules cite the YAML 1.2.2 specification.
"""

from __future__ import annotations

from ...core.findings import RuleCatalog, RuleInfo, Severity

E, W = Severity.ERROR, Severity.WARNING

INVALID_YAML = RuleInfo(
    "GE001",
    E,
    "YAML 1.2.2 §5-§9",
    "Input is not valid YAML (syntax, tabs, bad tagged scalar, bad alias)",
)
INVALID_UTF8 = RuleInfo("GE002", E, "YAML 1.2.2 §5.2", "Input is not valid UTF-8")
DUPLICATE_KEY = RuleInfo(
    "GE003",
    E,
    "YAML 1.2.2 §3.2.1.1",
    "Mapping has a duplicate key (geppetto's reader refuses the file)",
)
TOO_LARGE = RuleInfo("GE004", E, "YAML 1.2.2 §7.1", "Document too large, nested too deep, or aliases expand too far")
EMPTY = RuleInfo("GE005", E, 'turns "Serialization (YAML)"', "File holds no YAML document")
EXTRA_DOCUMENTS = RuleInfo("GE006", W, "YAML 1.2.2 §9.2", "More than one YAML document; geppetto reads only the first")
NOT_JSON = RuleInfo(
    "GE007",
    E,
    'turns "Typed Keys"',
    "Value geppetto cannot JSON-encode (NaN, Infinity, non-string key)",
)
UNKNOWN_FIELD = RuleInfo(
    "GE010",
    W,
    'turns "Type Definitions"',
    "Turn or block field geppetto's serde ignores (error under --strict)",
    strict=True,
)
UNKNOWN_KIND = RuleInfo(
    "GE011",
    W,
    'turns "Block Kinds"',
    "Block kind not written as geppetto writes it (unknown kinds read as `other`)",
    strict=True,
)
UNKNOWN_VERSION = RuleInfo(
    "GE012", W, 'turns "Serialization (YAML)"; geppetto serde (reads no version)', "Document `version` other than 1"
)
SCHEMA = RuleInfo("GE020", E, 'turns "Serialization (YAML)"', "Document does not match its JSON Schema")

ROLE_KIND = RuleInfo("GE101", E, 'turns "Block Kinds", "Engine Mapping"', "Block role contradicts its kind")
ROLE_MISSING = RuleInfo("GE102", W, 'turns "Serialization (YAML)"', "system or user block has no role")
UNKNOWN_PAYLOAD_KEY = RuleInfo(
    "GE103",
    W,
    'turns "Payload Key Constants"',
    "Payload key not known for the block's kind (error under --strict)",
    strict=True,
)
BLOCK_ID_REPEATED = RuleInfo("GE104", W, 'turns "Type Definitions"', "Block id used by more than one block of the turn")
OTHER_ROLE = RuleInfo(
    "GE105",
    W,
    'turns "Type Definitions" (Block.Role: "user", "assistant", "system"), "Block Kinds" (Other)',
    "`other` block with a role outside the documented user, assistant, system",
)

KEY_FORM = RuleInfo("GE201", W, 'turns "Typed Keys"', "Metadata or data key is not `namespace.name@vN`")
UNKNOWN_GEPPETTO_KEY = RuleInfo(
    "GE202",
    W,
    'turns "Typed Keys"',
    "`geppetto.` key not defined for that store (error under --strict)",
    strict=True,
)
DEPRECATED_TURN_KEY = RuleInfo(
    "GE204",
    W,
    'turns "Canonical Inference Result On Turn Metadata"',
    "Turn metadata carries a provider/model/stop_reason/usage scalar geppetto no longer mirrors (read inference_result)",
)
RESULT_ON_INPUT = RuleInfo(
    "GE203",
    W,
    'turns "Generated-block inference metadata projection"',
    "inference_result projected onto a block the model did not generate",
)

RESULT_UNPAIRED = RuleInfo("GE301", E, 'turns "Tool Workflow"', "tool_use answers no earlier tool_call of the turn")
CALL_ID_REPEATED = RuleInfo("GE302", E, 'turns "Tool Workflow"', "Tool call id used by more than one tool_call")
RESULT_DUPLICATE = RuleInfo("GE303", E, 'turns "Tool Workflow"', "tool_call answered by more than one tool_use")
CALL_PENDING = RuleInfo("GE304", W, 'turns "Tool Workflow"', "tool_call is pending: no tool_use has its id")
FINISH_CLASS = RuleInfo(
    "GE305",
    W,
    'turns "Canonical Inference Result On Turn Metadata"',
    "Turn finish_class disagrees with the pending tool calls",
)
SESSION_GROWTH = RuleInfo(
    "GE306",
    W,
    'turns "How Turns Grow Across a Conversation", "Multi-turn Sessions"',
    "Turn file of a session does not extend the session's previous turn (a turn is a clone plus new blocks)",
)

LOSSY = RuleInfo("GE900", W, "canonical §7.3", "Conversion dropped content the target format cannot hold")
SYNTHESIZED = RuleInfo(
    "GE901",
    W,
    "canonical §5.3",
    "Conversion wrote a value the target requires but the source lacks",
)

CATALOG = RuleCatalog(
    [
        INVALID_YAML,
        INVALID_UTF8,
        DUPLICATE_KEY,
        TOO_LARGE,
        EMPTY,
        EXTRA_DOCUMENTS,
        NOT_JSON,
        UNKNOWN_FIELD,
        UNKNOWN_KIND,
        UNKNOWN_VERSION,
        SCHEMA,
        ROLE_KIND,
        ROLE_MISSING,
        UNKNOWN_PAYLOAD_KEY,
        BLOCK_ID_REPEATED,
        OTHER_ROLE,
        KEY_FORM,
        UNKNOWN_GEPPETTO_KEY,
        DEPRECATED_TURN_KEY,
        RESULT_ON_INPUT,
        RESULT_UNPAIRED,
        CALL_ID_REPEATED,
        RESULT_DUPLICATE,
        CALL_PENDING,
        FINISH_CLASS,
        SESSION_GROWTH,
        LOSSY,
        SYNTHESIZED,
    ]
)

# Roles a block of each kind may carry. "" = no role. Sources: seed 004 "Block Kinds" and
# "Engine Mapping" (a tool result is a `tool` message for OpenAI and a user-role
# tool_result block for Claude), geppetto's builders (NewToolCallBlock/NewToolUseBlock set
# no role; serde synthesizes `assistant` for llm_text) and its Gemini engine (reasoning
# blocks carry role assistant). `other` varies: GE105 checks it against OTHER_ROLES.
ALLOWED_ROLES: dict[str, frozenset[str]] = {
    "system": frozenset({"system"}),
    "user": frozenset({"user"}),
    "llm_text": frozenset({"", "assistant"}),
    "tool_call": frozenset({"", "assistant"}),
    "reasoning": frozenset({"", "assistant"}),
    "tool_use": frozenset({"", "tool", "user"}),
}

# Kinds whose blocks a model generates (the inference_result projection targets).
GENERATED_KINDS = frozenset({"llm_text", "tool_call", "reasoning"})

# Roles an `other` block may carry: the Block.Role values of seed 004 "Type Definitions"
# (`Role string // Optional: "user", "assistant", "system"`), or none.
OTHER_ROLES = frozenset({"", "user", "assistant", "system"})

# Turn.Metadata keys seed 004 retired: "`InferenceResult` is the only canonical inference
# metadata contract. Provider/model/stop-reason/usage compatibility scalars are no longer
# mirrored onto turn metadata." (section "Canonical Inference Result On Turn Metadata").
# The keys stay defined (geppetto_codegen.yaml), so older turns still read; GE204 warns.
DEPRECATED_TURN_KEYS: dict[str, str] = {
    "geppetto.provider@v1": "provider",
    "geppetto.model@v1": "model",
    "geppetto.stop_reason@v1": "stop_reason",
    "geppetto.usage@v1": "usage",
}
