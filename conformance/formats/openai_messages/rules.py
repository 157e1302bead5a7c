"""The rule catalogue of the openai-messages format (issue 28).

The format is the `messages` array of the OpenAI Chat Completions API, as LiteLLM and
other gateways store it. Sections cite the API reference, "Create chat completion",
request body `messages` (https://platform.openai.com/docs/api-reference/chat/create),
as `Chat §messages › <message type> › <field>`, and the function-calling guide
(https://platform.openai.com/docs/guides/function-calling) as `FC §<heading>`.

IDs are stable: OM0xx one message, OM1xx across the messages of a conversation, OM9xx
conversions.
"""

from __future__ import annotations

from ...core.findings import RuleCatalog, RuleInfo, Severity
from ...core.jsonio import IO_RULES

NAME = "openai-messages"
E, W = Severity.ERROR, Severity.WARNING

SHAPE = RuleInfo(
    "OM001",
    E,
    'Chat §messages (array of message objects); §messages › conversation (`{"messages": [...]}` lines)',
    "Record is not a message object (or a conversation's `messages` is not an array)",
)
ROLE = RuleInfo(
    "OM002",
    E,
    "Chat §messages (developer, system, user, assistant, tool, function message)",
    "Message role is not one of the Chat roles",
)
CONTENT_MISSING = RuleInfo(
    "OM003",
    E,
    "Chat §messages › <role> message › content (Required; assistant: required unless tool_calls is specified)",
    "Message content missing or null where the role requires it",
)
PART_TYPE = RuleInfo(
    "OM004",
    E,
    "Chat §messages › <role> message › content › Array of content parts (text, image_url, input_audio, file; "
    "assistant: text, refusal; system, developer, tool: text)",
    "Content part of a type the role does not accept",
)
PART_SHAPE = RuleInfo(
    "OM005",
    E,
    "Chat §messages › content parts (text.text, image_url.url, input_audio.data and format)",
    "Content part lacks a field its type requires, or content is neither a string nor an array",
)
ARGUMENTS = RuleInfo(
    "OM006",
    E,
    "Chat §messages › assistant message › tool_calls › function › arguments "
    "(the arguments, as a JSON string); FC §Handling function calls",
    "tool_calls[].function.arguments is not a string holding a JSON object",
)
TOOL_CALL_SHAPE = RuleInfo(
    "OM007",
    E,
    'Chat §messages › assistant message › tool_calls (id, type "function", function.name)',
    "Tool call lacks its id, type or function name",
)
TOOL_CALL_ID = RuleInfo(
    "OM008",
    E,
    "Chat §messages › tool message › tool_call_id (Required)",
    "Tool message has no tool_call_id string",
)
UNPAIRED = RuleInfo(
    "OM101",
    E,
    "Chat §messages › tool message › tool_call_id (Tool call that this message is responding to); "
    "FC §Handling function calls",
    "Tool message answers no earlier tool call of its conversation",
)
DUPLICATE_ANSWER = RuleInfo(
    "OM102",
    E,
    "FC §Handling function calls (one function_call_output per call)",
    "Tool call answered more than once",
)
CALL_ID_REUSED = RuleInfo(
    "OM103",
    E,
    "Chat §messages › assistant message › tool_calls › id (The ID of the tool call)",
    "Tool call id used by an earlier call of the conversation",
)

LOSSY = RuleInfo("OM900", W, "canonical §7.3", "Conversion dropped or changed what the target format cannot hold")
SYNTHESIZED = RuleInfo(
    "OM901",
    W,
    "canonical §4.1, §6.1",
    "Conversion wrote a value canonical requires but Chat messages lack (session, ids, times)",
)

CATALOG = RuleCatalog(
    [
        *IO_RULES,
        SHAPE, ROLE, CONTENT_MISSING, PART_TYPE, PART_SHAPE, ARGUMENTS, TOOL_CALL_SHAPE, TOOL_CALL_ID,
        UNPAIRED, DUPLICATE_ANSWER, CALL_ID_REUSED, LOSSY, SYNTHESIZED,
    ]
)  # fmt: skip

ROLES = frozenset({"developer", "system", "user", "assistant", "tool", "function"})
# the part types each role accepts (Chat §messages › <role> message › content)
PARTS: dict[str, frozenset[str]] = {
    "developer": frozenset({"text"}),
    "system": frozenset({"text"}),
    "user": frozenset({"text", "image_url", "input_audio", "file"}),
    "assistant": frozenset({"text", "refusal"}),
    "tool": frozenset({"text"}),
    "function": frozenset(),
}
