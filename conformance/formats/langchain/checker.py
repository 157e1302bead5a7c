"""Validation of LangChain message lists: the reader's findings, then the LC rules.

Each conversation (a `.json` file, or one `.jsonl` line) is checked on its own (tool-call
pairing is scoped to it); every rule skips values of the wrong type that another rule
reports, so one file shows all its problems at once. Nothing is carried across files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...core.convertkit import Document, Item, read_documents, short
from ...core.findings import Finding
from ..base import PeerRun
from . import rules as R
from .reader import Shaped, shaped

STATUSES = ("success", "error")


def call_ids(data: dict[str, Any]) -> list[str]:
    """The ids of an AI message's tool calls: its `tool_calls`, and its content's
    `tool_call` blocks (v1 content carries them too)."""
    out = [c["id"] for c in data.get("tool_calls") or () if isinstance(c, dict) and isinstance(c.get("id"), str)]
    content = data.get("content")
    if isinstance(content, list):
        out += [
            b["id"] for b in content
            if isinstance(b, dict) and b.get("type") == "tool_call" and isinstance(b.get("id"), str)
        ]  # fmt: skip
    return out


class LangChainRun(PeerRun[Document]):
    """Validates LangChain message lists."""

    units = "conversations"

    def read(self, path: Path, data: bytes | None = None) -> Iterator[Document | Finding]:
        return read_documents(path, self.options.max_line_bytes, data)

    def size(self, unit: Document) -> int:
        return len(unit.items or ())

    # -- rules ------------------------------------------------------------------------

    def check(self, doc: Document) -> Iterator[Finding | None]:
        if not doc.items:
            what = "an empty array" if doc.items is not None else "not an array"
            yield self.finding(
                doc, doc.pointer, R.SHAPE, f"a conversation is a non-empty array of messages, not {what}"
            )
            return
        calls: set[str] = set()
        for m in doc.items:
            s = shaped(m.value)
            if s == "not an object":
                yield self.finding(m, m.pointer, R.SHAPE, f"a message is a JSON object, not {short(m.value)}")
                continue
            if s == "type":
                v = m.value
                ptr = (
                    f"{m.pointer}/type"
                    if "type" in v and "lc" not in v
                    else f"{m.pointer}/id"
                    if "id" in v
                    else m.pointer
                )
                kind = v.get("id") if "lc" in v else v.get("type")
                yield self.finding(m, ptr, R.TYPE, f"message type {short(kind)} is not a LangChain message type")
                continue
            if not isinstance(s, Shaped):
                at = "kwargs" if "lc" in m.value else "data"
                ptr = f"{m.pointer}/{at}" if at in m.value else m.pointer
                yield self.finding(m, ptr, R.SHAPE, f"a message's {at} is a JSON object, not {short(m.value.get(at))}")
                continue
            yield from self._message(m, s, f"{m.pointer}{s.at}", calls)

    def _message(self, m: Item, s: Shaped, dp: str, calls: set[str]) -> Iterator[Finding | None]:
        d = s.data
        content = d.get("content")
        if not isinstance(content, (str, list)):
            where = f"{dp}/content" if "content" in d else dp
            yield self.finding(m, where, R.CONTENT, f"content must be a string or an array, not {short(content)}")
        elif isinstance(content, list):
            for k, b in enumerate(content):
                yield from self._block(m, f"{dp}/content/{k}", b)
        if s.type == "ai":
            tc = d.get("tool_calls")
            if tc is not None and not isinstance(tc, list):
                yield self.finding(m, f"{dp}/tool_calls", R.TOOL_CALLS, f"tool_calls must be an array, not {short(tc)}")
            for k, c in enumerate(tc if isinstance(tc, list) else ()):
                bad = _tool_call_problem(c)
                if bad:
                    yield self.finding(m, f"{dp}/tool_calls/{k}", R.TOOL_CALLS, bad)
            calls.update(call_ids(d))
        elif s.type == "tool":
            tid = d.get("tool_call_id")
            status = d.get("status", "success")
            if not isinstance(tid, str):
                where = f"{dp}/tool_call_id" if "tool_call_id" in d else dp
                yield self.finding(
                    m, where, R.TOOL_MESSAGE, f"a tool message's tool_call_id is a string, not {short(tid)}"
                )
            elif tid not in calls:
                yield self.finding(
                    m, f"{dp}/tool_call_id", R.UNPAIRED,
                    f"tool_call_id {tid!r} answers no earlier tool call of this conversation",
                )  # fmt: skip
            if status not in STATUSES:
                yield self.finding(
                    m, f"{dp}/status", R.TOOL_MESSAGE, f"status {short(status)} is neither 'success' nor 'error'"
                )

    def _block(self, m: Item, ptr: str, b: Any) -> Iterator[Finding | None]:
        if isinstance(b, str):
            return
        if not isinstance(b, dict) or not isinstance(b.get("type"), str):
            where = f"{ptr}/type" if isinstance(b, dict) and "type" in b else ptr
            yield self.finding(
                m, where, R.CONTENT, f"a content item is a string or an object with a type, not {short(b)}"
            )
            return
        kind = b["type"]
        problem = None
        if kind == "text" and not isinstance(b.get("text"), str):
            problem = "a text block needs a `text` string"
        elif kind == "reasoning" and b.get("reasoning") is not None and not isinstance(b.get("reasoning"), str):
            problem = "a reasoning block's reasoning is a string"
        elif kind == "tool_call":
            problem = _tool_call_problem(b)
        elif kind == "image" and "source_type" not in b:  # v1 (a v0 block names its source_type)
            if not any(isinstance(b.get(k), str) for k in ("url", "base64", "file_id")):
                problem = "an image block needs one of url, base64 or file_id"
            elif isinstance(b.get("base64"), str) and not isinstance(b.get("mime_type"), str):
                problem = "an image block with base64 data needs its mime_type"
        if problem:
            yield self.finding(m, ptr, R.BLOCK, problem)


def _tool_call_problem(c: Any) -> str | None:
    if not isinstance(c, dict):
        return f"a tool call is an object, not {short(c)}"
    if not isinstance(c.get("name"), str):
        return f"a tool call's name is a string, not {short(c.get('name'))}"
    if not isinstance(c.get("args"), dict):
        return f"a tool call's args is an object, not {short(c.get('args'))}"
    if c.get("id") is not None and not isinstance(c.get("id"), str):
        return f"a tool call's id is a string or null, not {short(c.get('id'))}"
    return None
