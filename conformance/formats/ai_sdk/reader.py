"""Reading stored AI SDK `UIMessage[]` conversations, and recognising them cheaply.

Accepted files: a `.json` array of UIMessages (or of ModelMessages, `model_checks`) (what the "Chatbot Message Persistence"
guide's `saveChat` writes, `JSON.stringify(messages)`: one conversation), or a `.jsonl` of
one such array per line (one conversation per line, as a table of chats exports them). A
`.jsonl` line holding one UIMessage object is not a conversation (AS001): a message alone
is not what `validateUIMessages` reads, and lines of messages do not say where one chat
ends. Every message keeps its location: the file, the line it starts on (its record's line
in a `.jsonl`), and its JSON pointer (`/3`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.convertkit import peek_value, read_documents
from ...core.findings import Finding
from .rules import ALL_MODEL_PARTS, MODEL_ROLES, ROLES, known_part

PEEK_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Message:
    """One UIMessage and where it is."""

    path: str
    line: int
    pointer: str
    value: Any


@dataclass
class Conversation:
    """The messages of one conversation; `array` is False when the record is not an array."""

    path: str
    line: int
    pointer: str
    array: bool = True
    messages: list[Message] = field(default_factory=list)


def read_conversations(path: Path, max_line_bytes: int, data: bytes | None = None) -> Iterator[Conversation | Finding]:
    """The file's conversations, and the reader's findings (bad JSON, BOM, ...): the
    documents `convertkit.read_documents` reads (`.jsonl` and standard input as it says;
    `data`, the bytes already read, as there)."""
    for doc in read_documents(path, max_line_bytes, data):
        if isinstance(doc, Finding):
            yield doc
        else:
            items = doc.items or []
            msgs = [Message(i.path, i.line, i.pointer, i.value) for i in items]
            yield Conversation(items[0].path if items else doc.path, doc.line, "", doc.items is not None, msgs)


def _ui_part(p: Any) -> bool:
    if not isinstance(p, dict) or not isinstance(p.get("type"), str) or not known_part(p["type"]):
        return False
    # OpenTelemetry GenAI parts are also typed `text`/`reasoning`, with `content`, never `text`
    return p["type"] not in ("text", "reasoning") or isinstance(p.get("text"), str)


def looks_like_conversation(value: Any) -> bool:
    """Unambiguous: a non-empty array whose every element has a string `id`, `role` system,
    user or assistant, and a `parts` array whose every part has an AI SDK part type (text
    and reasoning parts with their `text`). No canonical, Chat, OpenTelemetry or other
    peer record has all of these."""
    return (
        isinstance(value, list) and bool(value)
        and all(
            isinstance(m, dict) and isinstance(m.get("id"), str) and isinstance(m.get("role"), str) and m["role"] in ROLES
            and isinstance(m.get("parts"), list) and all(_ui_part(p) for p in m["parts"])
            for m in value
        )
    )  # fmt: skip


# ModelMessage parts no other peer's messages have: Chat's are text, image_url, input_audio,
# file {file}, refusal; OpenTelemetry's tool_call, tool_call_response, blob, uri
_MODEL_ONLY = frozenset({"tool-call", "tool-result", "tool-approval-request", "tool-approval-response"})


def _model_part(p: Any) -> bool:
    if not isinstance(p, dict) or p.get("type") not in ALL_MODEL_PARTS:
        return False
    kind = p["type"]
    return (
        (kind not in ("text", "reasoning") or isinstance(p.get("text"), str))
        and (kind != "image" or "image" in p)
        and (kind != "file" or ("data" in p and isinstance(p.get("mediaType"), str)))
    )


def looks_like_model_messages(value: Any) -> bool:
    """Unambiguous ModelMessages (`convertToModelMessages` output): a non-empty array of
    `{role, content}` (role system, user, assistant or tool; no `parts`, no Chat
    `tool_calls`/`tool_call_id`), every array content of ModelMessage parts, every tool
    message's content an array, and some part a tool call, tool result, approval, image
    `image` or file `data` (a conversation of strings and text parts alone is also Chat:
    it needs `--format ai-sdk`)."""
    if not (isinstance(value, list) and value):
        return False
    specific = False
    for m in value:
        if not isinstance(m, dict) or set(m) - {"role", "content", "providerOptions"}:
            return False
        role, content = m.get("role"), m.get("content")
        if not isinstance(role, str) or role not in MODEL_ROLES:
            return False
        if isinstance(content, str) and role != "tool":
            continue
        if not isinstance(content, list) or not all(_model_part(p) for p in content):
            return False
        specific = specific or any(p["type"] in _MODEL_ONLY or p["type"] in ("image", "file") for p in content)
    return specific


def looks_like(path: Path) -> bool:
    """Detection: a `.json` (at most `PEEK_BYTES`) or the first line of a `.jsonl` is an
    array of UIMessages (`looks_like_conversation`) or of ModelMessages
    (`looks_like_model_messages`). A longer `.json`, or a conversation
    holding a part type the SDK does not document, needs `--format ai-sdk`."""
    value = peek_value(path, PEEK_BYTES)
    return looks_like_conversation(value) or looks_like_model_messages(value)
