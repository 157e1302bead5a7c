"""The rule catalogue of the otel-genai format (issue 28).

The format is what the OpenTelemetry GenAI semantic conventions record of a model call's
content: the `gen_ai.system_instructions`, `gen_ai.input.messages` and
`gen_ai.output.messages` attributes, each following its JSON schema
(https://opentelemetry.io/docs/specs/semconv/gen-ai/, `gen-ai-input-messages.json`,
`gen-ai-output-messages.json`, `gen-ai-system-instructions.json` in
open-telemetry/semantic-conventions `docs/gen-ai/`). Sections cite the schema and the
definition named (`input-messages.json › ChatMessage.parts`), and the attribute registry
(`gen_ai.input.messages`: "Instrumentations MUST follow Input messages JSON schema") as
`registry › <attribute>`.

IDs are stable: OT0xx one message, OT1xx across the messages of a record, OT9xx
conversions.
"""

from __future__ import annotations

from ...core.findings import RuleCatalog, RuleInfo, Severity
from ...core.jsonio import IO_RULES

NAME = "otel-genai"
E, W = Severity.ERROR, Severity.WARNING

INPUT, OUTPUT, SYSTEM = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"
ATTRIBUTES = (SYSTEM, INPUT, OUTPUT)

SHAPE = RuleInfo(
    "OT001",
    E,
    "registry › gen_ai.input.messages, gen_ai.output.messages, gen_ai.system_instructions (Instrumentations MUST "
    "follow the JSON schema: an array; on spans it MAY be recorded as a JSON string); input-messages.json "
    "(type: array of ChatMessage objects)",
    "Record is not an array of messages or an object of gen_ai message attributes (arrays, or JSON text of arrays)",
)
ROLE = RuleInfo(
    "OT002",
    E,
    "input-messages.json › ChatMessage (required: role, parts); ChatMessage.role (type: string)",
    "Message lacks a string `role`",
)
PARTS = RuleInfo(
    "OT003",
    E,
    "input-messages.json › ChatMessage.parts (type: array; items discriminated by `type`, propertyName type)",
    "Message `parts` is not an array of part objects with a string `type`",
)
PART = RuleInfo(
    "OT004",
    E,
    "input-messages.json › TextPart (required: content), ToolCallRequestPart (required: name), "
    "ToolCallResponsePart (required: response), BlobPart (required: modality, content), FilePart (required: "
    "modality, file_id), UriPart (required: modality, uri), ReasoningPart (required: content)",
    "Part lacks a field its definition requires, or the field has the wrong type",
)
FINISH = RuleInfo(
    "OT005",
    E,
    "output-messages.json › OutputMessage (required: role, parts, finish_reason); FinishReason (stop, length, "
    "content_filter, tool_call, error, or a string)",
    "Output message lacks a string `finish_reason`",
)
UNPAIRED = RuleInfo(
    "OT101",
    W,
    "input-messages.json › ToolCallResponsePart.id (Unique tool call identifier) — the schema does not require "
    "that it match an earlier ToolCallRequestPart; a provider given the history does",
    "Tool call response answers no earlier tool call of its record",
)

LOSSY = RuleInfo("OT900", W, "canonical §7.3", "Conversion dropped or changed what the target format cannot hold")
SYNTHESIZED = RuleInfo(
    "OT901",
    W,
    "canonical §4.1, §6.1",
    "Conversion wrote a value canonical requires but the record lacks (session, ids, times)",
)

CATALOG = RuleCatalog([*IO_RULES, SHAPE, ROLE, PARTS, PART, FINISH, UNPAIRED, LOSSY, SYNTHESIZED])

# the part types the schemas define (GenericPart admits any other `type`)
PART_TYPES = frozenset({
    "text", "tool_call", "tool_call_response", "server_tool_call", "server_tool_call_response", "blob", "file", "uri",
    "reasoning",
})  # fmt: skip
# (field, accepted types, what) required per part type
_STR = (str,)
REQUIRED: dict[str, tuple[tuple[str, tuple[type, ...], str], ...]] = {
    "text": (("content", _STR, "a string"),),
    "tool_call": (("name", _STR, "a string"),),
    "blob": (("modality", _STR, "a string"), ("content", _STR, "a string (base64)")),
    "file": (("modality", _STR, "a string"), ("file_id", _STR, "a string")),
    "uri": (("modality", _STR, "a string"), ("uri", _STR, "a string")),
    "reasoning": (("content", _STR, "a string"),),
}
