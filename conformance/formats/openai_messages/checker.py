"""Validation of openai-messages files: the reader's findings, then the OM rules.

Each conversation is checked on its own (tool-call pairing is scoped to it); every rule
skips values of the wrong type that another rule reports, so one file shows all its
problems at once. Nothing is carried across files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...core.convertkit import short
from ...core.findings import Finding
from ...core.jsonio import parse
from ..base import PeerRun
from . import rules as R
from .reader import Conversation, Message, read_conversations


def arguments_object(arguments: Any) -> dict[str, Any] | None:
    """The JSON object a `function.arguments` string holds, else None."""
    if not isinstance(arguments, str):
        return None
    try:  # jiter, as every JSON turnspec reads: big integers, duplicate keys and NaN as elsewhere
        value = parse(arguments.encode("utf-8", "surrogatepass"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class OpenAIMessagesRun(PeerRun[Conversation]):
    """Validates openai-messages files."""

    units = "conversations"

    def read(self, path: Path, data: bytes | None = None) -> Iterator[Conversation | Finding]:
        return read_conversations(path, self.options.max_line_bytes, data)

    def size(self, unit: Conversation) -> int:
        return len(unit.messages)

    # -- rules ------------------------------------------------------------------------

    def check(self, conv: Conversation) -> Iterator[Finding | None]:
        if not conv.messages and conv.pointer.endswith("/messages"):
            yield self.finding(conv, conv.pointer, R.SHAPE, "`messages` is not a non-empty array of messages")
        calls: dict[str, str] = {}  # tool call id -> pointer of the call
        answered: set[str] = set()
        for m in conv.messages:
            v = m.value
            if not isinstance(v, dict):
                yield self.finding(m, m.pointer, R.SHAPE, f"a message is a JSON object, not {short(v)}")
                continue
            role = v.get("role")
            if not isinstance(role, str) or role not in R.ROLES:
                yield self.finding(
                    m, f"{m.pointer}/role", R.ROLE,
                    f"role {short(role)} is not one of {', '.join(sorted(R.ROLES))}",
                )  # fmt: skip
                continue
            yield from self._content(m, role, v)
            if role == "assistant":
                yield from self._tool_calls(m, v.get("tool_calls"), calls)
            elif role == "tool":
                yield from self._answer(m, v, calls, answered)

    def _content(self, m: Message, role: str, v: dict[str, Any]) -> Iterator[Finding | None]:
        ptr = f"{m.pointer}/content"
        content = v.get("content")
        if content is None:
            if role == "assistant" and (v.get("tool_calls") or v.get("function_call")):
                return
            if role == "function" and "content" in v:  # the legacy function message: content "string or null"
                return
            what = "missing" if "content" not in v else "null"
            yield self.finding(
                m, ptr if "content" in v else m.pointer, R.CONTENT_MISSING, f"{role} message content is {what}"
            )
            return
        if isinstance(content, str):
            return
        if not isinstance(content, list):
            yield self.finding(m, ptr, R.PART_SHAPE, f"content is a string or an array of parts, not {short(content)}")
            return
        allowed = R.PARTS[role]
        for i, part in enumerate(content):
            pp = f"{ptr}/{i}"
            kind = part.get("type") if isinstance(part, dict) else None
            if not isinstance(part, dict) or not isinstance(kind, str):
                yield self.finding(
                    m, pp, R.PART_SHAPE, f"a content part is an object with a string `type`, not {short(part)}"
                )
                continue
            if kind not in allowed:
                yield self.finding(
                    m, f"{pp}/type", R.PART_TYPE,
                    f"{role} content part type {kind!r} is not one of {', '.join(sorted(allowed)) or '(none)'}",
                )  # fmt: skip
                continue
            yield from self._part(m, pp, kind, part)

    def _part(self, m: Message, pp: str, kind: str, part: dict[str, Any]) -> Iterator[Finding | None]:
        if kind in ("text", "refusal"):
            if not isinstance(part.get(kind), str):
                yield self.finding(m, f"{pp}/{kind}", R.PART_SHAPE, f"{kind} part has no string `{kind}`")
        elif kind == "image_url":
            img = part.get("image_url")
            if not isinstance(img, dict) or not isinstance(img.get("url"), str) or not img["url"]:
                yield self.finding(m, f"{pp}/image_url", R.PART_SHAPE, "image_url part has no `image_url.url` string")
        elif kind == "input_audio":
            audio = part.get("input_audio")
            if (
                not isinstance(audio, dict)
                or not isinstance(audio.get("data"), str)
                or audio.get("format") not in ("wav", "mp3")
            ):
                yield self.finding(
                    m, f"{pp}/input_audio", R.PART_SHAPE,
                    "input_audio part needs `input_audio.data` (base64) and `format` wav or mp3",
                )  # fmt: skip
        elif kind == "file":
            f = part.get("file")
            if not isinstance(f, dict) or not any(isinstance(f.get(k), str) for k in ("file_data", "file_id")):
                yield self.finding(m, f"{pp}/file", R.PART_SHAPE, "file part needs `file.file_data` or `file.file_id`")

    def _tool_calls(self, m: Message, tool_calls: Any, calls: dict[str, str]) -> Iterator[Finding | None]:
        if tool_calls is None:
            return
        ptr = f"{m.pointer}/tool_calls"
        if not isinstance(tool_calls, list):
            yield self.finding(m, ptr, R.TOOL_CALL_SHAPE, f"tool_calls is an array, not {short(tool_calls)}")
            return
        for i, call in enumerate(tool_calls):
            cp = f"{ptr}/{i}"
            if not isinstance(call, dict):
                yield self.finding(m, cp, R.TOOL_CALL_SHAPE, f"a tool call is an object, not {short(call)}")
                continue
            cid = call.get("id")
            if not isinstance(cid, str) or not cid:
                yield self.finding(m, f"{cp}/id", R.TOOL_CALL_SHAPE, "tool call has no id string")
            elif cid in calls:
                yield self.finding(m, f"{cp}/id", R.CALL_ID_REUSED, f"tool call id {cid!r} was used by {calls[cid]}")
            else:
                calls[cid] = cp
            if call.get("type", "function") != "function":
                yield self.finding(
                    m, f"{cp}/type", R.TOOL_CALL_SHAPE, f"tool call type {short(call.get('type'))} is not 'function'"
                )
            fn = call.get("function")
            if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
                yield self.finding(m, f"{cp}/function", R.TOOL_CALL_SHAPE, "tool call has no function.name string")
                continue
            if arguments_object(fn.get("arguments")) is None:
                yield self.finding(
                    m, f"{cp}/function/arguments", R.ARGUMENTS,
                    f"arguments {short(fn.get('arguments'))} is not a string holding a JSON object",
                )  # fmt: skip

    def _answer(
        self, m: Message, v: dict[str, Any], calls: dict[str, str], answered: set[str]
    ) -> Iterator[Finding | None]:
        cid = v.get("tool_call_id")
        ptr = f"{m.pointer}/tool_call_id"
        if not isinstance(cid, str) or not cid:
            yield self.finding(
                m, ptr if "tool_call_id" in v else m.pointer, R.TOOL_CALL_ID, "tool message has no tool_call_id"
            )
        elif cid not in calls:
            yield self.finding(
                m, ptr, R.UNPAIRED, f"tool_call_id {cid!r} answers no earlier tool call of this conversation"
            )
        elif cid in answered:
            yield self.finding(m, ptr, R.DUPLICATE_ANSWER, f"tool call {cid!r} ({calls[cid]}) was already answered")
        else:
            answered.add(cid)
