"""Validation of stored AI SDK conversations: the reader's findings, then the AS rules.

Each conversation is checked on its own (message ids are scoped to it); a part's fields
are held to the table of its documented type (`PART_FIELDS`, and for tool parts
`STATE_FIELDS` by state): what `validateUIMessages` requires, forbids or types. Nothing is
carried across files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...core.convertkit import short
from ...core.findings import Finding
from ..base import PeerRun
from . import rules as R
from .checker_fields import (
    ANY,
    APPROVAL_ANSWERED,
    APPROVAL_ASKED,
    APPROVED,
    BOOL,
    DENIED,
    DONE,
    ENCODING,
    FALSE,
    META,
    NEVER,
    RECORD,
    STR,
    Spec,
    wrong,
)
from .model_checks import ModelChecks, is_model_conversation
from .reader import Conversation, Message, read_conversations

PART_FIELDS: dict[str, Spec] = {
    "text": {"text": (STR, True), "state": (DONE, False), "providerMetadata": (META, False)},
    "reasoning": {"id": (STR, False), "text": (STR, True), "state": (DONE, False), "providerMetadata": (META, False)},
    "source-url": {"sourceId": (STR, True), "url": (STR, True), "title": (STR, False), "providerMetadata": (META, False)},
    "source-document": {
        "sourceId": (STR, True), "mediaType": (STR, True), "title": (STR, True), "filename": (STR, False),
        "providerMetadata": (META, False),
    },
    "file": {"mediaType": (STR, True), "filename": (STR, False), "url": (STR, True), "providerMetadata": (META, False)},
    "step-start": {},
    "data-": {"id": (STR, False), "data": (ANY, True)},
}  # fmt: skip
TOOL_FIELDS: Spec = {
    "toolCallId": (STR, True), "toolMetadata": (RECORD, False), "providerExecuted": (BOOL, False),
    "callProviderMetadata": (META, False),
}  # fmt: skip
DYNAMIC_FIELDS: Spec = {"toolName": (STR, True), "dynamic": (FALSE, False)}
_NO_RESULT: Spec = {"output": (NEVER, False), "errorText": (NEVER, False)}
STATE_FIELDS: dict[str, Spec] = {
    "input-streaming": {
        "input": (ANY, False), "rawInput": (STR, False), "inputEncoding": (ENCODING, False), **_NO_RESULT,
        "approval": (NEVER, False),
    },
    "input-available": {"input": (ANY, True), **_NO_RESULT, "approval": (NEVER, False)},
    "approval-requested": {"input": (ANY, True), **_NO_RESULT, "approval": (APPROVAL_ASKED, True)},
    "approval-responded": {"input": (ANY, True), **_NO_RESULT, "approval": (APPROVAL_ANSWERED, True)},
    "output-available": {
        "input": (ANY, True), "output": (ANY, True), "errorText": (NEVER, False),
        "resultProviderMetadata": (META, False), "preliminary": (BOOL, False), "approval": (APPROVED, False),
    },
    "output-error": {
        "input": (ANY, False), "rawInput": (ANY, False), "output": (NEVER, False), "errorText": (STR, True),
        "resultProviderMetadata": (META, False), "approval": (APPROVED, False),
    },
    "output-denied": {"input": (ANY, True), **_NO_RESULT, "approval": (DENIED, True)},
}  # fmt: skip
MESSAGE_FIELDS = frozenset({"id", "role", "metadata", "parts"})


def spec_key(kind: str) -> str:
    """The `PART_FIELDS` key of a part type ("data-" for every data part)."""
    return "data-" if kind.startswith("data-") else kind


def is_tool(kind: str) -> bool:
    return kind == "dynamic-tool" or kind.startswith("tool-")


class AISDKRun(ModelChecks, PeerRun[Conversation]):
    """Validates stored AI SDK UIMessage conversations."""

    units = "conversations"

    def read(self, path: Path, data: bytes | None = None) -> Iterator[Conversation | Finding]:
        return read_conversations(path, self.options.max_line_bytes, data)

    def size(self, unit: Conversation) -> int:
        return len(unit.messages)

    def check(self, c: Conversation) -> Iterator[Finding | None]:
        if not c.messages:
            what = "an empty array" if c.array else "a value that is not an array (one UIMessage alone is none)"
            yield self.finding(c, c.pointer, R.SHAPE, f"a conversation is a non-empty array of UIMessages, not {what}")
        if is_model_conversation([m.value for m in c.messages]):
            yield from self.check_model(c.messages)
            return
        seen: dict[str, str] = {}
        for m in c.messages:
            yield from self._message(m, seen)

    def _message(self, m: Message, seen: dict[str, str]) -> Iterator[Finding | None]:
        v = m.value
        if not isinstance(v, dict):
            yield self.finding(m, m.pointer, R.SHAPE, f"a message is a JSON object, not {short(v)}")
            return
        mid = v.get("id")
        if not isinstance(mid, str):
            yield self.finding(
                m,
                f"{m.pointer}/id" if "id" in v else m.pointer,
                R.MESSAGE,
                f"message id must be a string, not {short(mid)}",
            )
        elif mid in seen:
            yield self.finding(
                m, f"{m.pointer}/id", R.DUPLICATE_ID, f"message id {mid!r} is also message {seen[mid]}'s"
            )
        else:
            seen[mid] = m.pointer
        role = v.get("role")
        if not isinstance(role, str) or role not in R.ROLES:
            yield self.finding(
                m, f"{m.pointer}/role" if "role" in v else m.pointer, R.MESSAGE,
                f"role {short(role)} is not system, user or assistant",
            )  # fmt: skip
        for k in sorted(set(v) - MESSAGE_FIELDS):
            yield self.finding(m, f"{m.pointer}/{k}", R.EXTRA, f"message field {k!r} is not a UIMessage field")
        parts = v.get("parts")
        if not isinstance(parts, list):
            ptr = f"{m.pointer}/parts" if "parts" in v else m.pointer
            yield self.finding(m, ptr, R.SHAPE, f"a message's parts are an array, not {short(parts)}")
            return
        if not parts and role in ("system", "user"):
            yield self.finding(m, f"{m.pointer}/parts", R.EMPTY, f"a {role} message needs at least one part")
        for j, part in enumerate(parts):
            yield from self._part(m, f"{m.pointer}/parts/{j}", part)

    def _part(self, m: Message, pp: str, part: Any) -> Iterator[Finding | None]:
        if not isinstance(part, dict):
            yield self.finding(m, pp, R.SHAPE, f"a part is a JSON object, not {short(part)}")
            return
        kind = part.get("type")
        if not isinstance(kind, str):
            yield self.finding(
                m, f"{pp}/type" if "type" in part else pp, R.PART_TYPE, f"part type must be a string, not {short(kind)}"
            )
            return
        if not R.known_part(kind):
            yield self.finding(
                m, f"{pp}/type", R.UNKNOWN_PART, f"part type {kind!r} is none the AI SDK documents; read as it is"
            )
            return
        spec: Spec
        if is_tool(kind):
            state = part.get("state")
            if state not in R.TOOL_STATES:
                yield self.finding(
                    m, f"{pp}/state" if "state" in part else pp, R.TOOL_STATE,
                    f"tool part state {short(state)} is not one of {', '.join(R.TOOL_STATES)}",
                )  # fmt: skip
                return
            spec = {**TOOL_FIELDS, **(DYNAMIC_FIELDS if kind == "dynamic-tool" else {}), **STATE_FIELDS[str(state)]}
            known = {"type", "state", *spec}
        else:
            spec = PART_FIELDS[spec_key(kind)]
            known = {"type", *spec}
        tool_state = part.get("state") if is_tool(kind) else None
        for name, (fk, required) in spec.items():
            in_state = tool_state is not None and name in STATE_FIELDS[str(tool_state)]
            rule = R.TOOL_STATE if in_state else R.FIELD
            if name not in part:
                if required:
                    where = f"in state {tool_state} " if in_state else ""
                    yield self.finding(m, pp, rule, f"{kind} part {where}has no {name}")
                continue
            bad = wrong(fk, part[name])
            if bad is not None:
                where = f" in state {tool_state}" if fk == NEVER else ""
                yield self.finding(
                    m, f"{pp}/{name}", rule, f"{kind} part {name} must be {bad}{where}, not {short(part[name])}"
                )
        for k in sorted(set(part) - known):
            yield self.finding(m, f"{pp}/{k}", R.EXTRA, f"{kind} part field {k!r} is not a field of its type")
