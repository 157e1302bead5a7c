"""The kinds of value a UIMessage or ModelMessage field holds, and what a value that is not
of its kind must be instead (`wrong`): one table for both checkers."""

from __future__ import annotations

from typing import Any

# a field's kind: what its value must be
STR, BOOL, ANY, NEVER, META, RECORD, FALSE = "a string", "a boolean", "any", "never", "meta", "record", "false"
DONE = "state"  # 'streaming' | 'done'
ENCODING = "encoding"  # 'json' | 'text'
APPROVAL_ASKED, APPROVAL_ANSWERED, APPROVED, DENIED = "asked", "answered", "approved", "denied"

Spec = dict[str, tuple[str, bool]]  # field -> (kind, required)


def is_json(v: Any) -> bool:
    if v is None or isinstance(v, (str, bool, int, float)):
        return True
    if isinstance(v, list):
        return all(is_json(x) for x in v)
    return isinstance(v, dict) and all(is_json(x) for x in v.values())


def _approval(v: Any, kind: str) -> str | None:
    """What is wrong with an `approval` object of `kind`, or None."""
    if not isinstance(v, dict):
        return "an object"
    if not isinstance(v.get("id"), str):
        return "an object with a string id"
    if "signature" in v and not isinstance(v["signature"], str):
        return "an object whose signature is a string"
    approved = v.get("approved", None) if "approved" in v else ...
    if kind == APPROVAL_ASKED:
        return None if approved is ... and "reason" not in v else "an object with no approved or reason yet"
    if not isinstance(approved, bool):
        return "an object with a boolean approved"
    if "reason" in v and not isinstance(v["reason"], str):
        return "an object whose reason is a string"
    if kind == APPROVED and approved is not True:
        return "an object with approved: true"
    if kind == DENIED and approved is not False:
        return "an object with approved: false"
    return None


def wrong(kind: str, v: Any) -> str | None:
    """What a present value of field kind `kind` must be, when `v` is not that; else None."""
    if kind == ANY:
        return None
    if kind == STR:
        return None if isinstance(v, str) else kind
    if kind == BOOL:
        return None if isinstance(v, bool) else kind
    if kind == FALSE:
        return None if v is False else "false (a dynamic-tool part is typed by its type)"
    if kind == DONE:
        return None if v in ("streaming", "done") else "'streaming' or 'done'"
    if kind == ENCODING:
        return None if v in ("json", "text") else "'json' or 'text'"
    if kind == RECORD:
        return None if isinstance(v, dict) and is_json(v) else "an object of JSON values"
    if kind == META:
        ok = isinstance(v, dict) and all(isinstance(x, dict) and is_json(x) for x in v.values())
        return None if ok else "an object of objects (provider name -> JSON object)"
    if kind == NEVER:
        return "absent"
    return _approval(v, kind)
