"""Validation of pydantic-ai histories: the reader's findings, then the PA rules.

Each history is checked on its own (tool-call pairing is scoped to it); every rule skips
values of the wrong type that another rule reports, so one file shows all its problems
at once. Nothing is carried across files.
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
from .reader import History, Message, read_histories


def args_object(args: Any) -> dict[str, Any] | None:
    """The arguments of a ToolCallPart as an object: `args` itself, the object its JSON
    text holds, `{}` for null or the empty string (no arguments: `ToolCallPart.args_as_dict`
    reads any falsy `args` as `{}`, and a streamed call with no argument fragments keeps
    `""`); None when it is none of those."""
    if args is None or args == "":
        return {}
    if isinstance(args, dict):
        return args
    if not isinstance(args, str):
        return None
    try:  # jiter, as every JSON turnspec reads
        value = parse(args.encode("utf-8", "surrogatepass"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# (field, accepted types, what) required per part kind; the other kinds pydantic-ai reads are accepted as they are
_STR = (str,)
_REQUIRED: dict[str, tuple[tuple[str, tuple[type, ...], str], ...]] = {
    "system-prompt": (("content", _STR, "a string"),),
    "user-prompt": (("content", (str, list), "a string or an array"),),
    "tool-return": (("tool_name", _STR, "a string"), ("tool_call_id", _STR, "a string")),
    "retry-prompt": (("content", (str, list), "a string or an array of error details"),),
    "retry-feedback": (("content", (str, list), "a string or an array of error details"),),
    "text": (("content", _STR, "a string"),),
    "thinking": (("content", _STR, "a string"),),
    "tool-call": (("tool_name", _STR, "a string"), ("tool_call_id", _STR, "a string")),
}


class PydanticAIRun(PeerRun[History]):
    """Validates pydantic-ai histories."""

    units = "histories"

    def read(self, path: Path, data: bytes | None = None) -> Iterator[History | Finding]:
        return read_histories(path, self.options.max_line_bytes, data)

    def size(self, unit: History) -> int:
        return len(unit.messages)

    # -- rules ------------------------------------------------------------------------

    def check(self, h: History) -> Iterator[Finding | None]:
        if not h.messages:
            what = "an empty array" if h.array else "not an array"
            yield self.finding(h, h.pointer, R.SHAPE, f"a history is a non-empty array of messages, not {what}")
        calls: set[str] = set()
        for m in h.messages:
            v = m.value
            if not isinstance(v, dict):
                yield self.finding(m, m.pointer, R.SHAPE, f"a message is a JSON object, not {short(v)}")
                continue
            kind = v.get("kind")
            if not isinstance(kind, str) or kind not in R.KINDS:
                ptr = f"{m.pointer}/kind" if "kind" in v else m.pointer
                yield self.finding(m, ptr, R.KIND, f"message kind {short(kind)} is neither 'request' nor 'response'")
                continue
            parts = v.get("parts")
            if not isinstance(parts, list):
                ptr = f"{m.pointer}/parts" if "parts" in v else m.pointer
                yield self.finding(m, ptr, R.SHAPE, f"a {kind}'s parts are an array, not {short(parts)}")
                continue
            for j, part in enumerate(parts):
                yield from self._part(m, str(kind), f"{m.pointer}/parts/{j}", part, calls)

    def _part(self, m: Message, kind: str, pp: str, part: Any, calls: set[str]) -> Iterator[Finding | None]:
        if not isinstance(part, dict):
            yield self.finding(m, pp, R.SHAPE, f"a part is a JSON object, not {short(part)}")
            return
        pk = part.get("part_kind")
        if not isinstance(pk, str) or pk not in R.PARTS[kind]:
            yield self.finding(
                m, f"{pp}/part_kind" if "part_kind" in part else pp, R.PART_KIND,
                f"part_kind {short(pk)} is not a part of a {kind} ({', '.join(sorted(R.PARTS[kind]))})",
            )  # fmt: skip
            return
        bad = False
        for name, types, what in _REQUIRED.get(str(pk), ()):
            if not isinstance(part.get(name), types):
                bad = True
                where = f"{pp}/{name}" if name in part else pp
                yield self.finding(
                    m, where, R.REQUIRED, f"{pk} part {name} must be {what}, not {short(part.get(name))}"
                )
        if pk == "tool-return" and "content" not in part:
            yield self.finding(m, pp, R.REQUIRED, "tool-return part has no content")
        if bad:
            return
        if pk == "user-prompt" and isinstance(part["content"], list):
            for k, item in enumerate(part["content"]):
                yield from self._content(m, f"{pp}/content/{k}", item)
        elif pk == "tool-call":
            calls.add(part["tool_call_id"])
            if args_object(part.get("args")) is None:
                yield self.finding(
                    m,
                    f"{pp}/args",
                    R.ARGS,
                    f'args {short(part.get("args"))} is not a JSON object, its JSON text, "" or null',
                )
        elif pk == "tool-return" and part["tool_call_id"] not in calls:
            yield self.finding(
                m, f"{pp}/tool_call_id", R.UNPAIRED,
                f"tool_call_id {part['tool_call_id']!r} answers no earlier tool call of this history",
            )  # fmt: skip

    def _content(self, m: Message, ptr: str, item: Any) -> Iterator[Finding | None]:
        if isinstance(item, str):
            return
        ck = item.get("kind") if isinstance(item, dict) else None
        if not isinstance(item, dict) or not isinstance(ck, str) or ck not in R.CONTENT_KINDS:
            yield self.finding(
                m, f"{ptr}/kind" if isinstance(item, dict) and "kind" in item else ptr, R.USER_CONTENT,
                f"user content is a string or an object of a UserContent kind, not {short(item)}",
            )  # fmt: skip
            return
        if ck.endswith("-url") and not (isinstance(item.get("url"), str) and item["url"]):
            yield self.finding(m, ptr, R.USER_CONTENT, f"{ck} content has no url string")
        elif ck == "binary" and not (isinstance(item.get("data"), str) and isinstance(item.get("media_type"), str)):
            yield self.finding(m, ptr, R.USER_CONTENT, "binary content needs `data` (base64) and `media_type` strings")
        elif ck == "text-content" and not isinstance(item.get("content"), str):
            yield self.finding(m, ptr, R.USER_CONTENT, "text-content has no content string")
