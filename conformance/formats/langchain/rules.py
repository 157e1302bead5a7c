"""The rule catalogue of the langchain format (issue 28).

The format is a list of LangChain messages in their JSON form: what
`langchain_core.messages.messages_to_dict` writes and `messages_from_dict` reads
(`{"type": "human", "data": {...}}`), or what `langchain_core.load.dumpd` writes
(`{"lc": 1, "type": "constructor", "id": [..., "HumanMessage"], "kwargs": {...}}`).
Sections cite langchain-core's modules (the class and field named, read from 1.x) as
`messages/<module>.py › <Class>.<field>`, and its standard content blocks
(`messages/content.py`, "Standard content blocks" in the Messages guide,
https://docs.langchain.com/oss/python/langchain/messages) as `content.py › <Block>`.

IDs are stable: LC0xx one message, LC1xx across the messages of a conversation, LC9xx
conversions.
"""

from __future__ import annotations

from ...core.findings import RuleCatalog, RuleInfo, Severity
from ...core.jsonio import IO_RULES

NAME = "langchain"
E, W = Severity.ERROR, Severity.WARNING

SHAPE = RuleInfo(
    "LC001",
    E,
    "messages/utils.py › messages_from_dict (messages: Sequence[dict]: a list of messages as dicts); "
    "messages/base.py › message_to_dict ({'type': ..., 'data': message.model_dump()}); load/dump.py › dumpd",
    "Conversation is not an array of message objects, or a message's data is not an object",
)
TYPE = RuleInfo(
    "LC002",
    E,
    "messages/utils.py › _message_from_dict (type human, ai, system, chat, function, tool or a Chunk class; "
    "'Got unexpected message type' otherwise)",
    "Message `type` missing or not a LangChain message type",
)
CONTENT = RuleInfo(
    "LC003",
    E,
    "messages/base.py › BaseMessage.content (str | list[str | dict]: the string contents of the message, or a "
    "list of strings and content blocks); content.py › ContentBlock (each a TypedDict discriminated by `type`)",
    "Message `content` is neither a string nor an array of strings and content-block objects with a `type`",
)
BLOCK = RuleInfo(
    "LC004",
    E,
    "content.py › TextContentBlock.text (Required); ReasoningContentBlock.reasoning (NotRequired[str]); ToolCall.name, "
    "args (Required); ImageContentBlock "
    "(create_image_block: 'Must provide one of: url, base64, or file_id'; 'mime_type is required when using "
    "base64 data')",
    "Standard content block lacks a field its TypedDict requires",
)
TOOL_CALLS = RuleInfo(
    "LC005",
    E,
    "messages/ai.py › AIMessage.tool_calls (list[ToolCall]); messages/tool.py › ToolCall (name: str, args: "
    "dict[str, Any], id: str | None)",
    "AI message `tool_calls` is not an array of tool calls with a string name, an object args and a string or null id",
)
TOOL_MESSAGE = RuleInfo(
    "LC006",
    E,
    "messages/tool.py › ToolMessage.tool_call_id (str, required: Tool call that this message is responding to); "
    "ToolMessage.status (Literal['success', 'error'])",
    "Tool message lacks a string `tool_call_id`, or its `status` is neither 'success' nor 'error'",
)
UNPAIRED = RuleInfo(
    "LC101",
    E,
    "messages/tool.py › ToolMessage.tool_call_id (Tool call that this message is responding to: an AIMessage's "
    "tool_calls entry)",
    "Tool message answers no earlier tool call of its conversation",
)

LOSSY = RuleInfo("LC900", W, "canonical §7.3", "Conversion dropped or changed what the target format cannot hold")
SYNTHESIZED = RuleInfo(
    "LC901",
    W,
    "canonical §4.1, §6.1",
    "Conversion wrote a value canonical requires but the LangChain messages lack (session, ids, times)",
)

CATALOG = RuleCatalog([*IO_RULES, SHAPE, TYPE, CONTENT, BLOCK, TOOL_CALLS, TOOL_MESSAGE, UNPAIRED, LOSSY, SYNTHESIZED])

# the message types messages_from_dict reads, with the Chunk classes' names it also takes
BASE_TYPES = frozenset({"human", "ai", "system", "chat", "function", "tool"})
CHUNKS = {
    "HumanMessageChunk": "human", "AIMessageChunk": "ai", "SystemMessageChunk": "system",
    "ChatMessageChunk": "chat", "FunctionMessageChunk": "function", "ToolMessageChunk": "tool",
}  # fmt: skip
# dumpd's class names (the last item of `id`)
CLASSES = {
    "HumanMessage": "human", "AIMessage": "ai", "SystemMessage": "system", "ChatMessage": "chat",
    "FunctionMessage": "function", "ToolMessage": "tool", **CHUNKS,
}  # fmt: skip
