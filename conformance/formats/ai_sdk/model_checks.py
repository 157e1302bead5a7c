"""The AS2xx rules: a conversation of ModelMessages (`convertToModelMessages` output,
what `streamText({messages})` takes), held to `modelMessageSchema` of the AI SDK's
"ModelMessage" reference. `checker.AISDKRun` runs them on a conversation whose messages
have `content` and none `parts` (`is_model_conversation`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ...core.convertkit import short
from ...core.findings import Finding, RuleInfo
from . import rules as R
from .checker_fields import ANY, BOOL, META, STR, Spec, is_json, wrong

OUTPUT = "output"
PART_FIELDS: dict[str, Spec] = {
    "text": {"text": (STR, True), "providerOptions": (META, False)},
    "image": {"image": (STR, True), "mediaType": (STR, False), "providerOptions": (META, False)},
    "file": {"data": (STR, True), "filename": (STR, False), "mediaType": (STR, True), "providerOptions": (META, False)},
    "reasoning": {"text": (STR, True), "providerOptions": (META, False)},
    "tool-call": {
        "toolCallId": (STR, True), "toolName": (STR, True), "input": (ANY, True), "providerOptions": (META, False),
        "providerExecuted": (BOOL, False),
    },
    "tool-result": {
        "toolCallId": (STR, True), "toolName": (STR, True), "output": (OUTPUT, True), "providerOptions": (META, False),
    },
    "tool-approval-request": {
        "approvalId": (STR, True), "toolCallId": (STR, True), "signature": (STR, False), "inputSchemaInput": (ANY, False),
    },
    "tool-approval-response": {"approvalId": (STR, True), "approved": (BOOL, True), "reason": (STR, False)},
}  # fmt: skip
MESSAGE_FIELDS = frozenset({"role", "content", "providerOptions"})
# LanguageModelV3ToolResultOutput: type -> the fields of that output
_VALUE_JSON = "json value"
OUTPUT_FIELDS: dict[str, Spec] = {
    "text": {"value": (STR, True)},
    "json": {"value": (_VALUE_JSON, True)},
    "execution-denied": {"reason": (STR, False)},
    "error-text": {"value": (STR, True)},
    "error-json": {"value": (_VALUE_JSON, True)},
    "content": {"value": ("content", True)},
}
# the items of a `content` output: type -> required string fields
CONTENT_ITEMS: dict[str, tuple[str, ...]] = {
    "text": ("text",), "media": ("data", "mediaType"), "file-data": ("data", "mediaType"), "file-url": ("url",),
    "file-id": ("fileId",), "image-data": ("data", "mediaType"), "image-url": ("url",), "image-file-id": ("fileId",),
    "custom": (),
}  # fmt: skip


def is_model_conversation(values: list[Any]) -> bool:
    """ModelMessages, not UIMessages: some message has `content` and none has `parts`."""
    dicts = [v for v in values if isinstance(v, dict)]
    return any("content" in v for v in dicts) and not any("parts" in v for v in dicts)


def _content_item(item: Any) -> str | None:
    if not isinstance(item, dict) or item.get("type") not in CONTENT_ITEMS:
        return f"an item of a documented type ({', '.join(CONTENT_ITEMS)})"
    for name in CONTENT_ITEMS[str(item["type"])]:
        v = item.get(name)
        if name == "fileId" and isinstance(v, dict) and all(isinstance(x, str) for x in v.values()):
            continue
        if not isinstance(v, str):
            return f"a {item['type']} item with a string {name}"
    return None


def output_problem(out: Any) -> tuple[str, str] | None:
    """(pointer suffix, what it must be) when a tool result's `output` is not a documented
    LanguageModelV3ToolResultOutput; None when it is."""
    if not isinstance(out, dict) or out.get("type") not in OUTPUT_FIELDS:
        return "", f"an object of type {', '.join(OUTPUT_FIELDS)}"
    for name, (kind, required) in OUTPUT_FIELDS[str(out["type"])].items():
        if name not in out:
            if required:
                return "", f"a {out['type']} output with a {name}"
            continue
        v = out[name]
        if kind == _VALUE_JSON:
            bad = None if is_json(v) else "a JSON value"
        elif kind == "content":
            bad = "an array of items" if not isinstance(v, list) else next(filter(None, map(_content_item, v)), None)
        else:
            bad = wrong(kind, v)
        if bad is not None:
            return f"/{name}", bad
    return None


class ModelChecks:
    """The AS2xx checks, mixed into `checker.AISDKRun` (which gives `finding`)."""

    finding: Callable[[Any, str, RuleInfo, str], Finding | None]  # PeerRun.finding

    def check_model(self, messages: list[Any]) -> Iterator[Finding | None]:
        calls: set[str] = set()
        for m in messages:
            v = m.value
            if not isinstance(v, dict):
                yield self.finding(m, m.pointer, R.SHAPE, f"a message is a JSON object, not {short(v)}")
                continue
            role = v.get("role")
            if not isinstance(role, str) or role not in R.MODEL_ROLES:
                ptr = f"{m.pointer}/role" if "role" in v else m.pointer
                yield self.finding(m, ptr, R.MM_ROLE, f"role {short(role)} is not system, user, assistant or tool")
                continue
            for k in sorted(set(v) - MESSAGE_FIELDS):
                yield self.finding(m, f"{m.pointer}/{k}", R.EXTRA, f"message field {k!r} is not a ModelMessage field")
            if "providerOptions" in v and wrong(META, v["providerOptions"]) is not None:
                yield self.finding(
                    m, f"{m.pointer}/providerOptions", R.MM_FIELD, "providerOptions must be an object of objects"
                )
            content = v.get("content")
            as_string = role != "tool" and isinstance(content, str)
            if not as_string and not (role != "system" and isinstance(content, list)):
                form = {"system": "a string", "tool": "an array of parts"}.get(role, "a string or an array of parts")
                ptr = f"{m.pointer}/content" if "content" in v else m.pointer
                yield self.finding(m, ptr, R.MM_CONTENT, f"a {role} message's content is {form}, not {short(content)}")
                continue
            if isinstance(content, list):
                for j, part in enumerate(content):
                    yield from self._model_part(m, role, f"{m.pointer}/content/{j}", part, calls)

    def _model_part(self, m: Any, role: str, pp: str, part: Any, calls: set[str]) -> Iterator[Finding | None]:
        kind = part.get("type") if isinstance(part, dict) else None
        if not isinstance(kind, str):
            where = f"{pp}/type" if isinstance(part, dict) and "type" in part else pp
            yield self.finding(m, where, R.MM_PART, f"a part is an object with a string type, not {short(part)}")
            return
        if kind not in R.ALL_MODEL_PARTS:
            yield self.finding(
                m, f"{pp}/type", R.MM_UNKNOWN, f"part type {kind!r} is none the AI SDK documents; read as it is"
            )
            return
        if kind not in R.MODEL_PARTS[role]:
            yield self.finding(
                m, f"{pp}/type", R.MM_PART,
                f"a {role} message's content holds no {kind} part ({', '.join(sorted(R.MODEL_PARTS[role]))})",
            )  # fmt: skip
            return
        bad_field = False
        for name, (fk, required) in PART_FIELDS[kind].items():
            if name not in part:
                if required:
                    bad_field = True
                    yield self.finding(m, pp, R.MM_FIELD, f"{kind} part has no {name}")
                continue
            problem = (
                output_problem(part[name])
                if fk == OUTPUT
                else (None if wrong(fk, part[name]) is None else ("", wrong(fk, part[name])))
            )
            if problem is not None:
                bad_field = True
                yield self.finding(
                    m,
                    f"{pp}/{name}{problem[0]}",
                    R.MM_FIELD,
                    f"{kind} part {name} must be {problem[1]}, not {short(part[name])}",
                )
        for k in sorted(set(part) - {"type", *PART_FIELDS[kind]}):
            yield self.finding(m, f"{pp}/{k}", R.EXTRA, f"{kind} part field {k!r} is not a field of its type")
        if bad_field:
            return
        if kind == "tool-call":
            calls.add(part["toolCallId"])
        elif kind == "tool-result" and part["toolCallId"] not in calls:
            yield self.finding(
                m, f"{pp}/toolCallId", R.UNANSWERED,
                f"toolCallId {part['toolCallId']!r} answers no earlier tool-call part of this conversation",
            )  # fmt: skip
