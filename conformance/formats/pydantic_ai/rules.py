"""The rule catalogue of the pydantic-ai format (issue 28).

The format is a list of pydantic-ai `ModelMessage`s in their JSON form: what
`ModelMessagesTypeAdapter.dump_json` writes and `validate_json` reads. Sections cite
`pydantic_ai/messages.py` (pydantic-ai-slim, the classes and fields named) as
`messages.py › <Class>.<field>`, and the "Messages and chat history" guide
(https://ai.pydantic.dev/message-history/) as `MH §<heading>`.

IDs are stable: PA0xx one message, PA1xx across the messages of a history, PA9xx
conversions.
"""

from __future__ import annotations

from ...core.findings import RuleCatalog, RuleInfo, Severity
from ...core.jsonio import IO_RULES

NAME = "pydantic-ai"
E, W = Severity.ERROR, Severity.WARNING

SHAPE = RuleInfo(
    "PA001",
    E,
    "messages.py › ModelMessagesTypeAdapter (list[ModelMessage]); ModelRequest.parts, ModelResponse.parts (sequences "
    "of parts); MH §Storing and loading messages to JSON",
    "History is not an array of message objects, or a message's parts are not an array of objects",
)
KIND = RuleInfo(
    "PA002",
    E,
    "messages.py › ModelMessage (discriminator 'kind': ModelRequest.kind 'request', ModelResponse.kind 'response')",
    "Message `kind` missing or neither 'request' nor 'response'",
)
PART_KIND = RuleInfo(
    "PA003",
    E,
    "messages.py › ModelRequestPart, ModelResponsePart (discriminator 'part_kind')",
    "Part `part_kind` missing or not a part kind of its message's kind",
)
REQUIRED = RuleInfo(
    "PA004",
    E,
    "messages.py › SystemPromptPart.content, UserPromptPart.content, ToolReturnPart.tool_name/content/tool_call_id, "
    "RetryPromptPart.content, TextPart.content, ThinkingPart.content, ToolCallPart.tool_name/tool_call_id",
    "Part lacks a field its class requires, or the field has the wrong type",
)
USER_CONTENT = RuleInfo(
    "PA005",
    E,
    "messages.py › UserContent (str | TextContent | ImageUrl | AudioUrl | DocumentUrl | VideoUrl | BinaryContent | "
    "UploadedFile | CachePoint; discriminator 'kind'); ImageUrl.url, BinaryContent.data (base64) and media_type",
    "User prompt content item of an unknown kind, or lacking a field its kind requires",
)
ARGS = RuleInfo(
    "PA006",
    E,
    "messages.py › ToolCallPart.args (str | dict[str, Any] | None: a JSON object, or its JSON text); "
    "ToolCallPart.args_as_dict",
    "Tool call `args` is a non-empty string that does not hold a JSON object (or neither a string, an object nor null)",
)
UNPAIRED = RuleInfo(
    "PA101",
    E,
    "messages.py › ToolReturnPart.tool_call_id (the tool call identifier, matching the ToolCallPart it answers); "
    "MH §Storing and loading messages",
    "Tool return answers no earlier tool call of its history",
)

LOSSY = RuleInfo("PA900", W, "canonical §7.3", "Conversion dropped or changed what the target format cannot hold")
SYNTHESIZED = RuleInfo(
    "PA901",
    W,
    "canonical §4.1, §6.1",
    "Conversion wrote a value canonical requires but the pydantic-ai history lacks (session, ids, times)",
)

CATALOG = RuleCatalog([*IO_RULES, SHAPE, KIND, PART_KIND, REQUIRED, USER_CONTENT, ARGS, UNPAIRED, LOSSY, SYNTHESIZED])

KINDS = frozenset({"request", "response"})
# the part kinds pydantic-ai reads in each message kind (messages.py › ModelRequestPart, ModelResponsePart)
REQUEST_PARTS = frozenset({
    "system-prompt", "user-prompt", "tool-return", "retry-prompt", "retry-feedback", "speech", "tool-search-return",
    "capability-load-return", "tool-availability-delta", "capability-load-delta", "model-settings-delta",
    "instruction-delta", "instruction-baseline", "compaction", "builtin-tool-return",
})  # fmt: skip
RESPONSE_PARTS = frozenset({
    "text", "tool-call", "builtin-tool-call", "builtin-tool-return", "thinking", "file", "compaction", "speech",
})  # fmt: skip
PARTS = {"request": REQUEST_PARTS, "response": RESPONSE_PARTS}
# UserContent kinds (a plain string is text)
CONTENT_KINDS = frozenset({
    "text-content", "structured-content", "image-url", "audio-url", "document-url", "video-url", "binary",
    "uploaded-file", "cache-point",
})  # fmt: skip
