"""Rules on messages (TS010-TS116) and sessions (TS201-TS208): one function per rule.

Each function receives what it checks and an `emit` callback (see `engine.py`); it
never looks at the selection, builds a `Finding` or changes the run's state.
"""

from __future__ import annotations

import binascii
import re
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from ...core import ids, pointers
from ...core.jsonio import Record
from . import rules as R
from .engine import (
    BLOCK,
    FINISH,
    MESSAGE,
    SESSION,
    SESSION_BLOCK,
    Context,
    Emit,
    MessageView,
    RunState,
    Session,
    SessionFacts,
)
from .markers import DEFAULT_CRITICAL_KEY

_esc = pointers.token


# -- forward compatibility (§10.3) ----------------------------------------------------


@MESSAGE.register(R.UNKNOWN_METADATA, fast="decode")
def unknown_fields(ctx: Context, m: MessageView, emit: Emit) -> None:
    """Fields the revision does not define, wherever the message's own objects are open:
    the message, its metadata (and usage, routing beneath it), known blocks and their
    sources. Additive changes need no version bump (§10.2) and readers tolerate them
    (§10.3). `provider_raw` is opaque (§6.5) and unknown blocks are TS011's. The default
    critical-block marker (`markers.DEFAULT_CRITICAL_KEY`, §4.2.2 "marked critical via
    metadata") is a key this project documents, so it is not reported."""
    f, rec = m.fields, m.rec
    for k in sorted(m.msg.keys() - f["message"]):
        emit(
            rec,
            "/" + _esc(k),
            R.UNKNOWN_METADATA,
            f"unknown message field `{k}` (kept, but not part of schema {m.revision})",
        )
    for k in sorted(m.meta.keys() - f["metadata"] - {DEFAULT_CRITICAL_KEY}):
        emit(rec, "/metadata/" + _esc(k), R.UNKNOWN_METADATA,
             f"unknown metadata field `{k}` (kept, but not part of schema {m.revision})")  # fmt: skip
    for key, kind in (("usage", "usage"), ("routing", "routing")):
        sub = m.meta.get(key)
        if isinstance(sub, dict):
            for k in sorted(sub.keys() - f[kind]):
                emit(rec, f"/metadata/{key}/{_esc(k)}", R.UNKNOWN_METADATA,
                     f"unknown {key} field `{k}` (kept, but not part of schema {m.revision})")  # fmt: skip
    stack = [(f"/content/{i}", b) for i, b in enumerate(m.content)]
    while stack:
        ptr, block = stack.pop(0)
        known = f.get("block:" + block["type"])
        if known is None:
            continue  # an unknown block (TS011)
        for k in sorted(block.keys() - known):
            emit(rec, f"{ptr}/{_esc(k)}", R.UNKNOWN_METADATA,
                 f"unknown field `{k}` in a {block['type']} block (kept, but not part of schema {m.revision})")  # fmt: skip
        source = block.get("source")
        if isinstance(source, dict):
            for k in sorted(source.keys() - f["source"]):
                emit(rec, f"{ptr}/source/{_esc(k)}", R.UNKNOWN_METADATA,
                     f"unknown source field `{k}` (kept, but not part of schema {m.revision})")  # fmt: skip
        if block["type"] == "tool_result":
            stack.extend((f"{ptr}/content/{j}", b) for j, b in enumerate(block["content"]))


@MESSAGE.register(R.UNKNOWN_BLOCK, fast="decode")
def unknown_block(ctx: Context, m: MessageView, emit: Emit) -> None:
    """Reported at any status (§10.3), at the top level and inside tool_result content."""
    for i, block in enumerate(m.content):
        t = block["type"]
        if t not in m.known:
            emit(m.rec, f"/content/{i}", R.UNKNOWN_BLOCK, f"unknown content block type {t!r} skipped (§10.3)")
        elif t == "tool_result" and m.complete:
            for j, inner in enumerate(block["content"]):
                it = inner["type"]
                if it not in m.known:
                    emit(m.rec, f"/content/{i}/content/{j}", R.UNKNOWN_BLOCK,
                         f"unknown content block type {it!r} skipped (§10.3)")  # fmt: skip


# -- one message (§4, §5.1, §5.3, §6.3) -----------------------------------------------


@MESSAGE.register(R.ROLE_CONTENT, fast="local")
def role_content(ctx: Context, m: MessageView, emit: Emit) -> None:
    if not m.complete:
        return
    allowed = R.ALLOWED_BLOCKS[m.role]
    for i, block in enumerate(m.content):
        t = block["type"]
        if t in m.known and t not in allowed:
            emit(m.rec, f"/content/{i}", R.ROLE_CONTENT,
                 f"{t} block not allowed in a {m.role} message (allowed: {', '.join(sorted(allowed))})")  # fmt: skip


parse_created_at = ids.parse_time  # the instant of a schema-valid created_at, None if not a real one


@MESSAGE.register(R.CREATED_AT_REAL, fast="local")
def created_at_real(ctx: Context, m: MessageView, emit: Emit) -> None:
    created = m.msg["created_at"]
    if parse_created_at(created) is None:
        emit(m.rec, "/created_at", R.CREATED_AT_REAL, f"{created!r} is not a real date and time")


@MESSAGE.register(R.CREATED_AT_ENCODING, fast="format")
def created_at_encoding(ctx: Context, m: MessageView, emit: Emit) -> None:
    created = m.msg["created_at"]
    if not CANONICAL_TIME.match(created):
        emit(m.rec, "/created_at", R.CREATED_AT_ENCODING,
             f"{created!r} is valid RFC 3339 UTC; the canonical encoding has six fraction digits and `Z`")  # fmt: skip


CANONICAL_TIME = re.compile(r"[0-9T:-]{19}\.[0-9]{6}Z\Z")


@MESSAGE.register(R.COST_ENCODING, fast="decode")
def cost_encoding(ctx: Context, m: MessageView, emit: Emit) -> None:
    usage = m.meta.get("usage")
    if not isinstance(usage, dict) or "cost_usd" not in usage:
        return
    cost = usage["cost_usd"]
    if not isinstance(cost, str) or "e" in cost or "E" in cost:
        emit(m.rec, "/metadata/usage/cost_usd", R.COST_ENCODING,
             f"cost_usd {cost!r} is read exactly, but a plain decimal string (e.g. \"0.000654\") is the canonical encoding")  # fmt: skip


@MESSAGE.register(R.CANCELLED_STATUS, fast="local")
def cancelled_status(ctx: Context, m: MessageView, emit: Emit) -> None:
    if m.meta.get("stop_reason") == "cancelled" and m.status != "cancelled":
        emit(m.rec, "/metadata/status", R.CANCELLED_STATUS,
             f"stop_reason is cancelled but status is {m.status!r}; a cancelled message has status cancelled")  # fmt: skip


@MESSAGE.register(R.EMPTY_CONTENT, fast="local")
def empty_content(ctx: Context, m: MessageView, emit: Emit) -> None:
    if m.complete and not m.content and m.role != "system":
        emit(m.rec, "/content", R.EMPTY_CONTENT, f"{m.role} message has no content blocks (§5.1.1)")


@MESSAGE.register(R.TOOL_ONE_BLOCK, fast="local")
def tool_one_block(ctx: Context, m: MessageView, emit: Emit) -> None:
    if not m.complete or m.role != "tool":
        return
    n = sum(1 for b in m.content if b["type"] in m.known)  # unknown blocks are skipped (§10.3)
    if n != 1:
        emit(
            m.rec, "/content", R.TOOL_ONE_BLOCK, f"tool message holds {n} blocks; it must hold exactly one tool_result"
        )


@MESSAGE.register(R.TOOL_PARENT, fast="local")
def tool_parent(ctx: Context, m: MessageView, emit: Emit) -> None:
    if m.complete and m.role == "tool" and m.meta.get("parent_tool_use_id") is None:
        emit(m.rec, "/metadata/parent_tool_use_id", R.TOOL_PARENT, "tool message has no parent_tool_use_id")


@MESSAGE.register(R.TOOL_PARENT_MATCH, fast="local")
def tool_parent_match(ctx: Context, m: MessageView, emit: Emit) -> None:
    parent = m.meta.get("parent_tool_use_id")
    if not m.complete or m.role != "tool" or parent is None:
        return
    for i, block in enumerate(m.content):
        if block["type"] == "tool_result" and block["tool_use_id"] != parent:
            emit(m.rec, f"/content/{i}/tool_use_id", R.TOOL_PARENT_MATCH,
                 f"tool_result answers {block['tool_use_id']!r} but parent_tool_use_id is {parent!r}")  # fmt: skip


def _complete_assistant(m: MessageView) -> bool:
    return m.role == "assistant" and m.status == "complete"


@MESSAGE.register(R.ASSISTANT_MODEL, fast="local")
def assistant_model(ctx: Context, m: MessageView, emit: Emit) -> None:
    if _complete_assistant(m) and (m.meta.get("model") is None or m.meta.get("provider") is None):
        missing = " and ".join(k for k in ("model", "provider") if m.meta.get(k) is None)
        emit(m.rec, "/metadata", R.ASSISTANT_MODEL, f"complete assistant message has no {missing}")


@MESSAGE.register(R.ASSISTANT_ROUTING, fast="local")
def assistant_routing(ctx: Context, m: MessageView, emit: Emit) -> None:
    if _complete_assistant(m) and m.meta.get("routing") is None:
        emit(m.rec, "/metadata/routing", R.ASSISTANT_ROUTING, "complete assistant message has no routing record")


@MESSAGE.register(R.ROUTING_MODEL, fast="local")
def routing_model(ctx: Context, m: MessageView, emit: Emit) -> None:
    routing, model = m.meta.get("routing"), m.meta.get("model")
    if _complete_assistant(m) and routing is not None and model is not None and routing["chosen_model"] != model:
        emit(m.rec, "/metadata/routing/chosen_model", R.ROUTING_MODEL,
             f"routing.chosen_model {routing['chosen_model']!r} differs from metadata.model {model!r}")  # fmt: skip


# an address as RFC 5322 writes one in practice: local part, @, a dotted domain; a warning
# only (§4.3 says what the id must not hold, not how an id looks)
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")


@MESSAGE.register(R.ID_EMAIL, fast="local")
def id_email(ctx: Context, m: MessageView, emit: Emit) -> None:
    """§4.3 ("Pseudonymous — no plaintext PII; emails live in `users.json` only"): an id
    that is an email address stores the PII the spec keeps out of messages."""
    for key in ("user_id", "team_id"):
        value = m.meta.get(key)
        if isinstance(value, str) and EMAIL.search(value):
            emit(m.rec, f"/metadata/{key}", R.ID_EMAIL,
                 f"{key} looks like an email address; §4.3: \"Pseudonymous — no plaintext PII; emails live in `users.json` only\"")  # fmt: skip


@MESSAGE.register(R.ASSISTANT_USAGE, fast="local")
def assistant_usage(ctx: Context, m: MessageView, emit: Emit) -> None:
    if _complete_assistant(m) and m.meta.get("usage") is None:
        emit(m.rec, "/metadata/usage", R.ASSISTANT_USAGE, "complete assistant message has no usage")


@MESSAGE.register(R.MODEL_ID, fast="format")
def model_id(ctx: Context, m: MessageView, emit: Emit) -> None:
    model = m.meta.get("model")
    if model is not None and not ctx.re_model.match(model):
        emit(m.rec, "/metadata/model", R.MODEL_ID,
             f"model id {model!r} is not `provider:model` (e.g. anthropic:claude-sonnet-4-6)")  # fmt: skip


@MESSAGE.register(R.MODEL_PROVIDER, fast="local")
def model_provider(ctx: Context, m: MessageView, emit: Emit) -> None:
    model, provider = m.meta.get("model"), m.meta.get("provider")
    if model is None or provider is None or not ctx.re_model.match(model):
        return
    owner = model.split(":", 1)[0]
    if owner != provider:
        emit(m.rec, "/metadata/provider", R.MODEL_PROVIDER,
             f"model {model!r} belongs to provider {owner!r}, not {provider!r}")  # fmt: skip


# -- content blocks (run by the driver on each known block of a complete message) -----


@BLOCK.register(R.TOOL_ID_FORMAT, blocks=("tool_use", "tool_result"), fast="local")
def tool_id_format(ctx: Context, m: MessageView, ptr: str, block: dict[str, Any], emit: Emit) -> None:
    key = "id" if block["type"] == "tool_use" else "tool_use_id"
    if not ctx.re_tool_id.match(block[key]):
        emit(m.rec, f"{ptr}/{key}", R.TOOL_ID_FORMAT, f"tool id {block[key]!r} is not tu_<ULID>")


@BLOCK.register(R.IMAGE_MEDIA_TYPE, blocks=("image",), fast="local")
def image_media_type(ctx: Context, m: MessageView, ptr: str, block: dict[str, Any], emit: Emit) -> None:
    media = block["media_type"]
    if not media.lower().startswith("image/"):  # media types are case-insensitive (RFC 6838 §4.2)
        emit(m.rec, ptr + "/media_type", R.IMAGE_MEDIA_TYPE, f"media_type {media!r} is not an image type")


@BLOCK.register(R.FILE_REF_PATH, blocks=("image", "audio"), fast="local")
def file_ref_path(ctx: Context, m: MessageView, ptr: str, block: dict[str, Any], emit: Emit) -> None:
    source = block["source"]
    if source["kind"] == "file_ref":
        problem = file_ref_problem(source["data"])
        if problem:
            emit(m.rec, ptr + "/source/data", R.FILE_REF_PATH, f"file_ref {source['data']!r} {problem}")


@BLOCK.register(R.BASE64_DATA, blocks=("image", "audio"), fast="local")
def base64_data(ctx: Context, m: MessageView, ptr: str, block: dict[str, Any], emit: Emit) -> None:
    source = block["source"]
    if source["kind"] == "base64":
        try:
            binascii.a2b_base64(source["data"], strict_mode=True)
        except (binascii.Error, ValueError) as exc:
            emit(m.rec, ptr + "/source/data", R.BASE64_DATA, f"{block['type']} data is not valid base64 ({exc})")


@BLOCK.register(R.URL_DATA, blocks=("image", "audio"), fast="local")
def url_data(ctx: Context, m: MessageView, ptr: str, block: dict[str, Any], emit: Emit) -> None:
    source = block["source"]
    if source["kind"] == "url" and not url_ok(source["data"]):
        emit(m.rec, ptr + "/source/data", R.URL_DATA, f"url {source['data'][:200]!r} is not an absolute URL")


# §4.2 gives `data` of kind url as "URL": an absolute URI of RFC 3986 §4.3 (a scheme, then
# `:`), with no whitespace or control character, which no URI holds unescaped (§2). Any
# scheme passes (https, gs, s3, data, ...): the spec names none.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20\x7f]+\Z")


def url_ok(data: str) -> bool:
    """True when `data` is an absolute URL (`_URL`)."""
    return _URL.match(data) is not None


def file_ref_problem(data: str) -> str | None:
    """Why a file_ref path is not workspace-relative (None when it is)."""
    if data.startswith(("/", "\\", "~")) or PureWindowsPath(data).drive or PureWindowsPath(data).is_absolute():
        return "is an absolute path; file_ref paths are workspace-relative"
    parts = PurePosixPath(data.replace("\\", "/")).parts
    if ".." in parts:
        return "contains a `..` segment and could escape the workspace"
    return None


# -- sessions (§6.1, §5.2) ------------------------------------------------------------


@SESSION.register(R.MESSAGE_ULID, fast="format")
def message_ulid(ctx: Context, m: SessionFacts, sess: Session, state: RunState, emit: Emit) -> None:
    if not ctx.re_ulid.match(m.msg["id"]):
        emit(m.rec, "/id", R.MESSAGE_ULID, f"message id {m.msg['id']!r} is not a ULID")


@SESSION.register(R.MESSAGE_UNIQUE, fast="session")
def message_unique(ctx: Context, m: SessionFacts, sess: Session, state: RunState, emit: Emit) -> None:
    first = state.message_ids.where(m.msg["id"])
    if first is not None:
        path, line = first
        at = "" if line < 0 else f" (first at line {line})" if path == m.rec.path else f" (first at {path}:{line})"
        emit(m.rec, "/id", R.MESSAGE_UNIQUE, f"message id {m.msg['id']} appears more than once{at}")


@SESSION.register(R.MESSAGE_MONOTONIC, fast="session")
def message_monotonic(ctx: Context, m: SessionFacts, sess: Session, state: RunState, emit: Emit) -> None:
    mid = m.msg["id"]
    if sess.last_id is not None and mid <= sess.last_id:
        emit(m.rec, "/id", R.MESSAGE_MONOTONIC,
             f"message id {mid} does not follow {sess.last_id} in session {m.msg['session_id']}")  # fmt: skip


@SESSION.register(R.CREATED_MONOTONIC, fast="session")
def created_monotonic(ctx: Context, m: SessionFacts, sess: Session, state: RunState, emit: Emit) -> None:
    created = m.msg["created_at"]
    at = parse_created_at(created)
    if at is not None and sess.last_created_at is not None and at < sess.last_created_at:
        emit(m.rec, "/created_at", R.CREATED_MONOTONIC,
             f"created_at {created} is earlier than the previous message's {sess.last_created}")  # fmt: skip


@SESSION.register(R.RESUMED_AFTER_CANCEL, fast="session")
def resumed_after_cancel(ctx: Context, m: SessionFacts, sess: Session, state: RunState, emit: Emit) -> None:
    # streaming-protocol §6.3: "A cancelled turn cannot be resumed. The next user message
    # starts a fresh turn." An assistant message before that user message continues the
    # cancelled turn. §6.3 speaks of cancelled turns only: a partial message is one still
    # streaming, and nothing forbids an assistant message after an errored one.
    if m.msg["role"] != "assistant" or not state.after_cancel:
        return
    cancelled = state.after_cancel.get(m.msg["session_id"])
    if cancelled is not None:
        emit(m.rec, "/role", R.RESUMED_AFTER_CANCEL,
             f"assistant message follows cancelled message {cancelled} with no user message between; "
             "streaming §6.3: a cancelled turn cannot be resumed, the next user message starts a fresh turn")  # fmt: skip


@SESSION_BLOCK.register(R.TOOL_ID_REPEATED, fast="session")
def tool_id_repeated(
    ctx: Context, m: SessionFacts, i: int, block: dict[str, str], sess: Session, state: RunState, emit: Emit
) -> None:
    if block["type"] != "tool_use":
        return
    owner = state.tool_owner.get(block["id"])
    if owner is not None:
        where = "this session" if owner == m.msg["session_id"] else f"session {owner}"
        emit(m.rec, f"/content/{i}/id", R.TOOL_ID_REPEATED, f"tool id {block['id']} already used in {where}")


@SESSION_BLOCK.register(R.RESULT_DUPLICATE, fast="session")
def result_duplicate(
    ctx: Context, m: SessionFacts, i: int, block: dict[str, str], sess: Session, state: RunState, emit: Emit
) -> None:
    tid = block.get("tool_use_id")
    if block["type"] == "tool_result" and tid not in sess.open_uses and tid in sess.answered:
        emit(m.rec, f"/content/{i}/tool_use_id", R.RESULT_DUPLICATE, f"tool_use {tid} already has a result")


@SESSION_BLOCK.register(R.RESULT_UNPAIRED, fast="session")
def result_unpaired(
    ctx: Context, m: SessionFacts, i: int, block: dict[str, str], sess: Session, state: RunState, emit: Emit
) -> None:
    if block["type"] != "tool_result":
        return
    tid = block["tool_use_id"]
    if tid in sess.open_uses or tid in sess.answered or tid in sess.optional_uses:
        return
    owner = state.tool_owner.get(tid)
    why = f"it belongs to session {owner}" if owner else "no earlier tool_use has that id"
    emit(m.rec, f"/content/{i}/tool_use_id", R.RESULT_UNPAIRED, f"tool_result answers {tid} but {why}")


@FINISH.register(R.TOOL_UNANSWERED, fast="session")
def tool_unanswered(state: RunState, emit: Emit) -> None:
    for sid, sess in state.sessions.items():
        if sess.calls is None:  # no tool block (reading `open_uses` would make its calls)
            continue
        for tid, (path, line, prefix, i) in sess.calls.open_uses.items():
            emit(Record(path, line, prefix, None, 0), f"/content/{i}", R.TOOL_UNANSWERED,
                 f"tool_use {tid} in session {sid} was never answered by a tool_result")  # fmt: skip
