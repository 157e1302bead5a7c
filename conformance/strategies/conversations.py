"""Whole conversations that satisfy the rule engine, for fuzzing adapters.

Each block, usage record and routing record is drawn from the strategy compiled from
its own schema file, so a schema change reaches these sessions with no hand edits; this
module adds only what the schemas cannot say and the rule engine checks (spec §5, §6):
message ids are ULIDs increasing within the session and created_at never goes back;
every tool_use is answered by exactly one tool message whose parent_tool_use_id names
it; each role holds only the blocks §5.1.3 allows; complete assistant messages carry a
`provider:model` id, its provider, a routing record choosing that model, and usage;
image and audio sources are well-formed (media type, workspace-relative file_ref,
strict base64).
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Collection
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from ..core import ids
from ..core.capabilities import declared
from ..core.schemas import schema_set

if TYPE_CHECKING:
    from .compiler import Compiler

# 2001-09-09 .. 2100-01-01 in microseconds: real dates (TS115) with room to advance
_START = (1_000_000_000_000_000, 4_000_000_000_000_000)
_STEP = (1_000, 120_000_000)  # >= 1 ms apart, so ULID timestamps strictly increase (TS203)


def _ts(micros: int) -> str:
    d = dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(microseconds=micros)
    return d.strftime(ids.TIME_FORMAT)


def _ulid(micros: int, rand: int) -> str:
    return ids.of(micros // 1000, rand)


_TOOL_NAMES = st.from_regex(r"\A[a-z][a-z0-9]{0,8}(?:_[a-z0-9]{1,6}){0,2}\Z")
_COSTS = st.integers(0, 10**9).map(lambda n: f"{Decimal(n).scaleb(-6):f}")
_SEGMENT = st.from_regex(r"\A[a-z0-9_][a-z0-9_.-]{0,11}\Z").filter(lambda s: s not in (".", ".."))
_SOURCES: dict[str, st.SearchStrategy[str]] = {
    "base64": st.binary(min_size=1, max_size=48).map(lambda b: base64.b64encode(b).decode()),
    "url": st.lists(_SEGMENT, min_size=1, max_size=3).map(lambda p: "https://example.com/" + "/".join(p)),
    "file_ref": st.lists(_SEGMENT, min_size=1, max_size=3).map("/".join),
}
_MEDIA = {
    "image": ("image/png", "image/jpeg", "image/gif", "image/webp"),
    "audio": ("audio/wav", "audio/mpeg", "audio/ogg", "audio/flac"),
}
_ROLE_BLOCKS = {  # spec §5.1.3, plus the v2 audio block for users and assistants
    "user": ("text", "image", "audio"),
    "assistant": ("text", "thinking", "redacted_thinking", "audio"),
    "system": ("text",),
}


@st.composite
def _media_block(draw: st.DrawFn, base: st.SearchStrategy[dict[str, Any]], kind: str) -> dict[str, Any]:
    block = draw(base)
    src_kind = draw(st.sampled_from(sorted(_SOURCES)))
    block["source"] = {"kind": src_kind, "data": draw(_SOURCES[src_kind])}
    block["media_type"] = draw(st.sampled_from(_MEDIA[kind]))
    return block


def _block_strategies(c: Compiler, known: set[str]) -> dict[str, st.SearchStrategy[dict[str, Any]]]:
    """A valid block of each type a session draws from (media with a source and media type
    of their kind); audio where the revision knows it."""
    block_st: dict[str, st.SearchStrategy[dict[str, Any]]] = {
        "text": c.valid("text-block.json"),
        "thinking": c.valid("thinking-block.json"),
        "redacted_thinking": c.valid("redacted-thinking-block.json"),
        "image": _media_block(c.valid("image-block.json"), "image"),
    }
    if "audio" in known:
        block_st["audio"] = _media_block(c.valid("audio-block.json"), "audio")
    return block_st


def conversations(
    *,
    version: str = "v1",
    min_turns: int = 1,
    max_turns: int = 4,
    blocks: Collection[str] | None = None,
    system: bool | None = None,
    max_tool_calls: int = 2,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Sessions (lists of canonical messages) the validator accepts with no findings.

    `blocks` restricts the block types used (say, to what an adapter's capabilities
    declare: leave out "thinking" for a provider without it; leave out "tool_use" for
    no tool calls); `system` forces a leading system message on or off.
    """
    # no unknown keys where the schemas are open: these sessions carry no finding, and
    # §10.2 additive fields are a warning (TS010)
    from .compiler import Compiler  # as before: the package imports this module first

    c = Compiler(schema_set("canonical", version), extras=False)
    known = set(schema_set("canonical", version)["known-content-block.json"]["discriminator"]["mapping"])
    allowed = known if blocks is None else known & set(blocks)
    if "text" not in allowed:
        raise ValueError("conversations need text blocks (system and tool messages hold text)")
    block_st = _block_strategies(c, known)
    ids = c.schemas.uri("ids.json")
    model_ids = c.for_node(c.graph.at(ids + "#/$defs/model_id"))
    names = c.for_node(c.graph.at(ids + "#/$defs/non_empty_string"))
    usage = c.valid("usage.json")
    routing = c.valid("routing-decision-record.json")
    metadata_fields = set(schema_set("canonical", version)["message-metadata.json"]["properties"])
    stop_reasons = (
        c.for_node(c.node("message-metadata.json").properties["stop_reason"])
        if "stop_reason" in metadata_fields
        else None
    )
    tool_calls = max_tool_calls if "tool_use" in allowed and "tool_result" in allowed else 0
    tool_use = c.valid("tool-use-block.json")

    def kinds(role: str) -> list[str]:
        return [k for k in _ROLE_BLOCKS[role] if k in allowed and k in block_st]

    @st.composite
    def session(draw: st.DrawFn) -> list[dict[str, Any]]:
        sid = draw(names)
        clock = draw(st.integers(*_START))
        model = draw(model_ids)
        provider = model.split(":", 1)[0]
        out: list[dict[str, Any]] = []
        serial = [0]

        def emit(role: str, content: list[dict[str, Any]], meta: dict[str, Any]) -> None:
            nonlocal clock
            clock += draw(st.integers(*_STEP))
            mid = _ulid(clock, draw(st.integers(0, 2**80 - 1)))
            out.append(
                {
                    "id": mid,
                    "session_id": sid,
                    "role": role,
                    "content": content,
                    "metadata": meta,
                    "created_at": _ts(clock),
                    "schema_version": 1,
                }
            )

        def blocks_for(role: str, lo: int, hi: int) -> list[dict[str, Any]]:
            ks = kinds(role)
            return draw(st.lists(st.sampled_from(ks).flatmap(lambda k: block_st[k]), min_size=lo, max_size=hi))

        def assistant_meta() -> dict[str, Any]:
            record = draw(routing)
            record["chosen_model"] = model  # TS107
            meta: dict[str, Any] = {
                "model": model,
                "provider": provider,
                "routing": record,
                "usage": {**draw(usage), "cost_usd": draw(_COSTS)},  # TS118: the canonical encoding
            }
            if draw(st.booleans()):
                meta["status"] = "complete"
            if stop_reasons is not None and draw(st.booleans()):
                meta["stop_reason"] = draw(stop_reasons)
                if meta["stop_reason"] == "cancelled":
                    meta["status"] = "cancelled"  # TS119 (streaming §6.2.6)
            return meta

        if system if system is not None else draw(st.booleans()):
            emit("system", blocks_for("system", 0, 2), {})
        for _ in range(draw(st.integers(min_turns, max_turns))):
            emit("user", blocks_for("user", 1, 3), {})
            n_calls = draw(st.integers(0, tool_calls))
            content = blocks_for("assistant", 0 if n_calls else 1, 3)
            calls = []
            for _ in range(n_calls):
                call = draw(tool_use)
                call["name"] = draw(_TOOL_NAMES)  # TS306: canonical names are snake_case
                serial[0] += 1  # the serial in the high bits keeps ids distinct within the session (TS207)
                call["id"] = "tu_" + _ulid(clock, (serial[0] << 48) | draw(st.integers(0, 2**48 - 1)))  # TS112
                calls.append(call)
            meta = assistant_meta()
            emit("assistant", content + calls, meta)
            for call in calls:  # each answered once, in the same session (TS205-TS208)
                result: dict[str, Any] = {
                    "type": "tool_result",
                    "tool_use_id": call["id"],
                    "content": draw(st.lists(block_st["text"], max_size=2)),
                }
                if draw(st.booleans()):
                    result["is_error"] = draw(st.booleans())
                emit("tool", [result], {"parent_tool_use_id": call["id"]})
            if calls and meta.get("status") != "cancelled":  # a cancelled turn is not resumed (TS209)
                emit("assistant", blocks_for("assistant", 1, 2), assistant_meta())
        return out

    return session()


def blocks_for(capabilities: Any) -> set[str]:
    """The block types an adapter can carry, from its AdapterCapabilities (spec §7.2;
    a mapping or an object with those attributes): pass the result as `blocks=`."""

    caps = declared(capabilities)

    def cap(name: str) -> bool:
        return bool(caps.get(name))

    out = {"text"}
    if cap("supports_thinking"):
        out |= {"thinking", "redacted_thinking"}
    if cap("supports_images"):
        out.add("image")
    if cap("supports_tools"):
        out |= {"tool_use", "tool_result"}
    return out
