"""The rule catalogue of the ai-sdk format: the Vercel AI SDK's stored `UIMessage[]`.

The format is what `useChat` holds and an app saves (`JSON.stringify(messages)`, the
"Chatbot Message Persistence" guide): an array of `UIMessage`s, `{id, role, metadata?,
parts}`. Sections cite the AI SDK's documentation (package `ai`, version 6, shipped in its
`docs/` folder and at https://ai-sdk.dev):

- `UIM` — API reference "UIMessage" (https://ai-sdk.dev/docs/reference/ai-sdk-core/ui-message);
- `VUM` — API reference "validateUIMessages"
  (https://ai-sdk.dev/docs/reference/ai-sdk-core/validate-ui-messages);
- `CMP` — guide "Chatbot Message Persistence"
  (https://ai-sdk.dev/docs/ai-sdk-ui/chatbot-message-persistence);
- `MM` — API reference "ModelMessage"
  (https://ai-sdk.dev/docs/reference/ai-sdk-core/model-message): "`ModelMessage` represents
  the fundamental message structure used with AI SDK Core functions." What
  `convertToModelMessages(uiMessages)` returns and `streamText({messages})` takes, which some
  apps store instead: `{role, content}`, "You can access the Zod schema for `ModelMessage`
  with the `modelMessageSchema` export" (the oracle of the AS2xx rules). SystemModelMessage
  `content: string`; UserModelMessage "can contain text or a combination of text, images,
  and files" (`string | Array<TextPart | ImagePart | FilePart>`); AssistantModelMessage
  "can contain text, tool calls, or a combination of both" (the schema also takes file,
  reasoning, tool-result and tool-approval-request parts); ToolModelMessage "contains the
  result of one or more tool calls" (`Array<ToolResultPart>`, and tool-approval-response);
  ToolCallPart.toolCallId "is used to match the tool call with the tool result";
  ToolResultPart `output: LanguageModelV3ToolResultOutput` (text, json, execution-denied,
  error-text, error-json, content).

The sentences the rules enforce, as the docs write them:

- UIM: "UIMessage serves as the source of truth for your application's state,
  representing the complete message history including metadata, data parts, and all
  contextual information."
- UIM › UIMessage: `id: string` ("A unique identifier for the message."), `role: 'system' |
  'user' | 'assistant'`, `metadata?: METADATA`, `parts: Array<UIMessagePart<...>>` ("The
  parts of the message. Use this for rendering the message in the UI.").
- UIM › UIMessagePart Types: TextUIPart (`text: string`, `state?: 'streaming' | 'done'`),
  ReasoningUIPart (`text: string`, `id?`, `state?`, `providerMetadata?`), ToolUIPart ("The
  type is based on the name of the tool (e.g., `tool-someTool` for a tool named
  `someTool`)": `toolCallId: string` and one of the states `input-streaming`,
  `input-available`, `approval-requested`, `approval-responded`, `output-available`
  (`output`), `output-error` (`errorText: string`), each with the fields it may and may
  not have, `output?: never`, `errorText?: never`), SourceUrlUIPart (`sourceId`, `url`),
  SourceDocumentUIPart (`sourceId`, `mediaType`, `title`), FileUIPart (`mediaType`: "IANA
  media type of the file.", `url`: "It can either be a URL to a hosted file or a Data
  URL."), DataUIPart ("The type is based on the name of the data part (e.g.,
  `data-someDataPart` ...)": `data`), StepStartUIPart ("A step boundary part of a message.").
- VUM: "`validateUIMessages` is an async function that validates UI messages against
  schemas for metadata, data parts, and tools. It ensures type safety and data integrity
  for your message arrays before processing or rendering."; its schema (`ai` 6
  `src/ui/validate-ui-messages.ts`) refuses an empty array ("Messages array must not be
  empty") and a system or user message without parts ("Message must contain at least one
  part"), and accepts `dynamic-tool` parts (`toolName`) and the `output-denied` state.
- CMP: "for persistence, you should use IDs that are stable before messages are stored to
  ensure consistency across sessions and prevent ID conflicts when messages are restored."

IDs are stable: AS0xx one UIMessage, AS1xx across the messages of a conversation, AS2xx
one ModelMessage, AS9xx conversions. An error is what `validateUIMessages` refuses (tests/ai_sdk_format runs it as
the oracle), except AS005 and AS204: a part type the SDK does not know is a warning, so a file
written by a newer SDK is still read (its part kept in provider_raw on conversion).
"""

from __future__ import annotations

from ...core.findings import RuleCatalog, RuleInfo, Severity
from ...core.jsonio import IO_RULES

NAME = "ai-sdk"
E, W = Severity.ERROR, Severity.WARNING

SHAPE = RuleInfo(
    "AS001",
    E,
    "UIM › UIMessage.parts (Array<UIMessagePart>); VUM (a non-empty array of UIMessages: 'Messages array must not "
    "be empty'); CMP (saveChat: JSON.stringify(messages))",
    "Conversation is not a non-empty array of message objects, or a message's parts are not an array of objects",
)
MESSAGE = RuleInfo(
    "AS002",
    E,
    "UIM › UIMessage.id (string: 'A unique identifier for the message.'), UIMessage.role ('system' | 'user' | "
    "'assistant')",
    "Message `id` is not a string, or `role` is not system, user or assistant",
)
EMPTY = RuleInfo(
    "AS003",
    E,
    "VUM (a system or user message: 'Message must contain at least one part')",
    "System or user message has no parts",
)
PART_TYPE = RuleInfo(
    "AS004",
    E,
    "UIM › UIMessagePart Types (each part has a string `type`)",
    "Part has no string `type`",
)
UNKNOWN_PART = RuleInfo(
    "AS005",
    W,
    "UIM › UIMessagePart Types (text, reasoning, tool-<name>, dynamic-tool, source-url, source-document, file, "
    "data-<name>, step-start)",
    "Part type is none the AI SDK documents (validateUIMessages refuses it; read as it is, kept on conversion)",
)
FIELD = RuleInfo(
    "AS006",
    E,
    "UIM › TextUIPart.text, ReasoningUIPart.text, ToolUIPart.toolCallId, SourceUrlUIPart.sourceId/url, "
    "SourceDocumentUIPart.sourceId/mediaType/title, FileUIPart.mediaType/url, DataUIPart.data (and the optional "
    "fields' types: state, id, title, filename, providerMetadata)",
    "Part lacks a field its type requires, or a field has the wrong type",
)
TOOL_STATE = RuleInfo(
    "AS007",
    E,
    "UIM › ToolUIPart (state input-streaming | input-available | approval-requested | approval-responded | "
    "output-available | output-error; output only with output-available, errorText: string only with "
    "output-error, `output?: never`); VUM (output-denied, dynamic-tool toolName)",
    "Tool part state unknown, or a field its state requires missing or one it forbids present",
)
EXTRA = RuleInfo(
    "AS010",
    W,
    "UIM › UIMessage, UIMessagePart Types (the fields each type has; validateUIMessages drops the others)",
    "Message or part field the AI SDK's type does not have (kept in the file; the SDK drops it when validating)",
)
DUPLICATE_ID = RuleInfo(
    "AS101",
    W,
    "CMP › Message IDs ('prevent ID conflicts when messages are restored'); UIM › UIMessage.id ('A unique "
    "identifier for the message.')",
    "Message id repeated in the conversation",
)
UNANSWERED = RuleInfo(
    "AS102",
    W,
    "MM › ToolCallPart.toolCallId ('This ID is used to match the tool call with the tool result.'), "
    "ToolResultPart.toolCallId ('ID of the tool call that this result is associated with.')",
    "Tool result answers no earlier tool call of its conversation (ModelMessages)",
)
MM_ROLE = RuleInfo(
    "AS201",
    E,
    "MM › ModelMessage Types (SystemModelMessage, UserModelMessage, AssistantModelMessage, ToolModelMessage: role "
    "'system' | 'user' | 'assistant' | 'tool')",
    "ModelMessage `role` is not system, user, assistant or tool",
)
MM_CONTENT = RuleInfo(
    "AS202",
    E,
    "MM › SystemModelMessage.content (string), UserContent and AssistantContent (string | Array<...>), ToolContent "
    "(Array<ToolResultPart>)",
    "ModelMessage `content` is not of its role's form (a string, or an array of part objects)",
)
MM_PART = RuleInfo(
    "AS203",
    E,
    "MM › UserContent (TextPart | ImagePart | FilePart), AssistantContent (TextPart | ToolCallPart, ...), ToolContent "
    "(ToolResultPart); modelMessageSchema",
    "ModelMessage part has no string type, or a part type its role's content does not hold",
)
MM_UNKNOWN = RuleInfo(
    "AS204",
    W,
    "MM › ModelMessage Parts (text, image, file, reasoning, tool-call, tool-result, tool-approval-request, "
    "tool-approval-response)",
    "ModelMessage part type is none the AI SDK documents (modelMessageSchema refuses it; read as it is)",
)
MM_FIELD = RuleInfo(
    "AS205",
    E,
    "MM › TextPart.text, ImagePart.image, FilePart.data/mediaType, ToolCallPart.toolCallId/toolName, "
    "ToolResultPart.toolCallId/toolName/output; LanguageModelV3ToolResultOutput (type, value)",
    "ModelMessage part lacks a field its type requires, or a field has the wrong type",
)

LOSSY = RuleInfo("AS900", W, "canonical §7.3", "Conversion dropped or changed what the target format cannot hold")
SYNTHESIZED = RuleInfo(
    "AS901",
    W,
    "canonical §4.1, §6.1",
    "Conversion wrote a value canonical requires but the AI SDK messages lack (session, ids, times)",
)

CATALOG = RuleCatalog([
    *IO_RULES, SHAPE, MESSAGE, EMPTY, PART_TYPE, UNKNOWN_PART, FIELD, TOOL_STATE, EXTRA, DUPLICATE_ID, UNANSWERED,
    MM_ROLE, MM_CONTENT, MM_PART, MM_UNKNOWN, MM_FIELD, LOSSY, SYNTHESIZED,
])  # fmt: skip

ROLES = frozenset({"system", "user", "assistant"})
# the part types with a fixed name; tool-<name> and data-<name> are prefixes (UIM › UIMessagePart Types)
FIXED_PARTS = frozenset({"text", "reasoning", "dynamic-tool", "source-url", "source-document", "file", "step-start"})
TOOL_STATES = (
    "input-streaming", "input-available", "approval-requested", "approval-responded", "output-available",
    "output-error", "output-denied",
)  # fmt: skip


def known_part(kind: str) -> bool:
    """A part type the AI SDK documents."""
    return kind in FIXED_PARTS or kind.startswith(("tool-", "data-"))


MODEL_ROLES = frozenset({"system", "user", "assistant", "tool"})
# the part types each ModelMessage role's content holds (modelMessageSchema)
MODEL_PARTS = {
    "user": frozenset({"text", "image", "file"}),
    "assistant": frozenset({"text", "file", "reasoning", "tool-call", "tool-result", "tool-approval-request"}),
    "tool": frozenset({"tool-result", "tool-approval-response"}),
}
ALL_MODEL_PARTS = frozenset().union(*MODEL_PARTS.values())
