"""Conversion between chibi contexts and canonical messages.

chibi -> canonical: every transcript entry becomes one canonical message, in transcript
order, so the mapping is invertible entry by entry:

    message (user / agent / system)  -> user / assistant / system message, one text block
    tool_call                        -> assistant message, one tool_use block
    tool_result                      -> tool message, one tool_result block
    anchors, flow_control_call/_result, control_transfer, system_prompt_changed
                                     -> an empty system message (canonical §5.1.2's
                                        placeholder): chibi keeps these out of the
                                        messages it sends the model, and canonical has
                                        no equivalent (lossy, reported)

Messages get fresh ULIDs and tool ids `tu_<ULID>`; created_at is the entry's timestamp,
clamped so it never goes backwards (reported). chibi records no model, provider,
routing or usage, which canonical requires on complete assistant messages (§5.3.1-3):
those are written as placeholders (`unknown:unknown`, zero usage), reported, and listed
in the provenance.

Round-trip provenance lives in `metadata.provider_raw.chibi` (schema
`schemas/chibi/v1/canonical-provenance.json`): the chibi entry's fields (its id, its
tool_call_id, who it was from and to, ...), the partition file that held it, and on the
first message the directory-level data (context name, manifest, context_meta, inbox).
provider_raw is chosen over new metadata keys because the canonical spec defines it for
exactly this (an opaque round-trip aid that only its writer reads, §4.3, §5.3.5), so
canonical readers neither warn (TS010) nor act on it. What only provider_raw keeps is
reported once, where it is: the manifest's rotation policy and each archived partition
(its boundaries, counts, and which entries lived in it), an agent message's addressee
(`to`, other than v0.9's literal "user"), each `flow_control: true` marker, and a
system_prompt.md the transcript does not hold; requests.jsonl is dropped, line by line.

canonical -> chibi writes a context directory (or, when the output name ends in
`.jsonl`, a single transcript file). Messages carrying provenance are restored exactly;
other messages map the other way round (v0.10 vocabulary), and whatever chibi cannot
hold (images, thinking, routing and usage, sub-second times, errors flags) is reported.
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ulid import ULID

from ...core import ids
from ...core.convertkit import ConvertContext, IdMint, created_at_micros, validated
from ...core.convertkit import rfc3339 as kit_rfc3339
from ...core.errors import InputError
from ...core.findings import Finding
from ...core.ids import is_tool_id
from ...core.jsonio import Record, check_input, parse, read_json, read_jsonl
from ...core.schema_validation import SchemaValidator
from ...core.schemas import schema_set
from ..base import FileStats, Options
from . import rules as R
from .checker import ChibiRun, read_prompt, token_estimate, vocabulary_of
from .reader import Layout, layout_of, peek_kind, read_document, safe_join

PLACEHOLDER_MODEL = "unknown:unknown"
PLACEHOLDER_PROVIDER = "unknown"
# entries that become canonical messages; the others travel in provider_raw (docstring)
CONVERSATION = frozenset({"message", "tool_call", "tool_result"})
CONTEXT_NAME = re.compile(r"[A-Za-z0-9_-]+\Z")
# chibi-core partition.rs defaults, used when a fresh conversion rotates
DEFAULT_POLICY: dict[str, Any] = {
    "max_entries": 1000,
    "max_age_seconds": 30 * 24 * 3600,
    "max_tokens": 100_000,
}
DEFAULT_BYTES_PER_TOKEN = 3
ENTRY_ORDER = (
    "id",
    "timestamp",
    "from",
    "to",
    "content",
    "entry_type",
    "metadata",
    "tool_call_id",
    "role",
    "flow_control",
)


def _validators() -> dict[str, SchemaValidator]:
    c = schema_set("chibi", "v1")
    return {
        "entry": SchemaValidator(c, "entry.json"),
        "manifest": SchemaValidator(c, "manifest.json"),
        "inbox": SchemaValidator(c, "inbox-entry.json"),
        "meta": SchemaValidator(c, "context-meta.json"),
        "provenance": SchemaValidator(c, "canonical-provenance.json"),
        "message": SchemaValidator(schema_set("canonical", "v1"), "message.json"),
    }


def _records(items: Iterator[Record | Finding], what: str) -> list[Record]:
    out: list[Record] = []
    for item in items:
        if isinstance(item, Finding):
            if item.severity == "error":
                raise InputError(
                    f"{item.path}:{item.line}: {item.message} ({item.rule}); cannot convert {what} that does not parse"
                )
            continue
        out.append(item)
    return out


def _checked(v: SchemaValidator, rec: Record, what: str) -> dict[str, Any]:
    if not v.is_valid(rec.value):
        err = v.errors(rec.value)[0]
        raise InputError(
            f"{rec.path}:{rec.line}: {what} is invalid at {err.pointer or '/'}: "
            f"{err.message}; run `turnspec validate` first"
        )
    value: dict[str, Any] = rec.value
    return value


def _checked_entry(v: SchemaValidator, rec: Record) -> dict[str, Any]:
    """An entry as chibi reads it: an unknown type or unknown fields are tolerated (the
    checker warns, CB026/CB027); the entry then travels in provider_raw unchanged."""
    value = rec.value
    if isinstance(value, dict):
        et = value.get("entry_type")
        if isinstance(et, str) and et not in R.KNOWN_TYPES and isinstance(value.get("timestamp"), int):
            return value
        errors = [] if v.is_valid(value) else v.errors(value)
        if all(e.keyword in ("additionalProperties", "unevaluatedProperties") for e in errors):
            return value
    return _checked(v, rec, "entry")


def _dump(value: Any) -> str:
    """Compact JSON as serde_json writes it (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _write_lines(path: Path, values: list[dict[str, Any]]) -> None:
    with path.open("wb") as f:
        for v in values:
            line = _dump(v)
            try:
                data = line.encode("utf-8")
            except UnicodeEncodeError:  # lone surrogates: escape them instead of writing bad UTF-8
                data = json.dumps(v, separators=(",", ":")).encode("ascii")
            f.write(data + b"\n")


def _write_json(path: Path, value: Any) -> None:
    path.write_text(_dump(value), encoding="utf-8")


# -- chibi -> canonical ---------------------------------------------------------------------


@dataclass
class SourceEntry:
    value: dict[str, Any]
    path: str
    line: int
    partition: str | None


@dataclass
class Source:
    name: str
    entries: list[SourceEntry] = field(default_factory=list)
    context: dict[str, Any] | None = None


def load_source(src: Path, ctx: ConvertContext, v: dict[str, SchemaValidator]) -> Source:
    layout = layout_of(src) if src.is_dir() else None
    if layout is not None:
        return _load_directory(layout, ctx, v)
    if src.is_dir():
        raise InputError(f"{src}: not a chibi context directory (no transcript/ with manifest.json or active.jsonl)")
    if peek_kind(src) != "entries":
        raise InputError(f"{src}: give a chibi context directory or a file of transcript entries")
    source = Source(name="")
    source.entries = [
        SourceEntry(_checked_entry(v["entry"], rec), rec.path, rec.line, None)
        for rec in _records(read_jsonl(src), "a file")
    ]
    source.name = _guess_name(source.entries) or (src.stem if CONTEXT_NAME.match(src.stem) else "default")
    return source


def _guess_name(entries: list[SourceEntry]) -> str | None:
    for e in entries:
        if e.value["entry_type"] in R.ANCHORS:
            return str(e.value["to"])
    for e in entries:
        if e.value["entry_type"] == "tool_call":
            return str(e.value["from"])
    return None


def _load_directory(L: Layout, ctx: ConvertContext, v: dict[str, SchemaValidator]) -> Source:
    source = Source(name=L.name)
    context: dict[str, Any] = {"name": L.name}
    manifest: dict[str, Any] | None = None
    if L.has_manifest:
        manifest = _checked(v["manifest"], _records(read_document(L.manifest), "a manifest")[0], "manifest.json")
        context["manifest"] = manifest
        files = [p["file"] for p in manifest["partitions"]] + [manifest["active_partition"]]
    else:
        legacy = not (L.transcript / "active.jsonl").exists() and (L.transcript / "context.jsonl").is_file()
        files = ["context.jsonl" if legacy else "active.jsonl"]
    pre_partition = L.legacy_transcript if manifest is None else None
    for rel in files if pre_partition is None else []:
        path = L.join(rel)
        if path is None:
            where = L.manifest if manifest is not None else L.transcript / rel
            raise InputError(
                f"{where}: {rel!r} leaves transcript/ (a path or link out of the unit, CB310); not followed"
            )
        if not path.exists() and not path.is_symlink():
            continue
        check_input(path)  # a folder, FIFO or device where a partition goes: named, never opened
        for rec in _records(read_jsonl(path), "a partition"):
            source.entries.append(SourceEntry(_checked_entry(v["entry"], rec), rec.path, rec.line, rel))
    if pre_partition is not None:
        # chibi before 0.5.1: one transcript.jsonl, which chibi migrates into transcript/ on
        # load (upgrade notes, "0.5.0 -> 0.5.1"); its entries are read against today's entry
        # schema (no doc of that era describes another). The provenance names active.jsonl,
        # so converting back writes today's layout, not the old file.
        for rec in _records(read_jsonl(pre_partition), "a pre-partition transcript.jsonl"):
            source.entries.append(SourceEntry(_checked_entry(v["entry"], rec), rec.path, rec.line, "active.jsonl"))
    if manifest is not None:
        _report_manifest(L.manifest, manifest, ctx)
    for i, p in enumerate(manifest["partitions"] if manifest else []):
        if p.get("bloom_file"):
            ctx.lossy(
                str(L.manifest),
                1,
                f"/partitions/{i}/bloom_file",
                f"bloom filter {p['bloom_file']} is not carried (fastbloom's random "
                "SipHash keys cannot be rebuilt); converting back writes none",
            )
    derived = _derive(source.entries)
    ctx_path = L.context_jsonl
    if ctx_path is not None:
        records = _records(read_jsonl(ctx_path), "context.jsonl")
        values = [r.value for r in records]
        if (
            derived[0] is None
            and values
            and isinstance(values[0], dict)
            and values[0].get("entry_type") == "context_created"
        ):
            context["context_anchor"] = _checked(v["entry"], records[0], "context.jsonl anchor")
            derived[0] = values[0]
        if values != derived:
            ctx.lossy(
                str(ctx_path),
                None,
                "",
                "context.jsonl is not the derivation of the transcript (stale?); the "
                "output follows the transcript and converting back rebuilds context.jsonl from it",
            )
    inbox = L.context_file("inbox.jsonl")
    if inbox is not None:
        context["inbox"] = []
        for rec in _records(read_jsonl(inbox), "inbox.jsonl"):
            context["inbox"].append(_checked(v["inbox"], rec, "inbox entry"))
            ctx.lossy(
                rec.path,
                rec.line,
                "",
                "inbox entry (an undelivered message from another context) is not part of "
                "the conversation; kept only in provider_raw of the first message",
            )
    meta = L.context_file("context_meta.json")
    if meta is not None:
        context["context_meta"] = _checked(
            v["meta"], _records(read_json(meta), "context_meta.json")[0], "context_meta.json"
        )
        ctx.lossy(
            str(meta),
            1,
            "",
            "context_meta.json (last combined system prompt) has no canonical field; kept "
            "only in provider_raw of the first message",
        )
    prompt = L.context_file("system_prompt.md")
    if prompt is not None:
        # the transcript's system_prompt_changed entries become system messages; the file is
        # lost only when none of them holds its text (the last one is what chibi recorded)
        text, _ = read_prompt(prompt, Options().max_line_bytes)
        recorded = [e.value["content"] for e in source.entries if e.value["entry_type"] == "system_prompt_changed"]
        if text is None or not recorded or text.strip() != recorded[-1].strip():
            ctx.lossy(
                str(prompt),
                1,
                "",
                "system_prompt.md (the prompt chibi injects next) is not converted: the transcript's last "
                "system_prompt_changed does not hold it",
            )
    requests = L.context_file("requests.jsonl")
    if requests is not None:
        # each record is a whole API request body that no message keeps: reported line by line
        for rec in _records(read_jsonl(requests), "requests.jsonl"):
            ctx.lossy(
                rec.path,
                rec.line,
                "/request",
                "requests.jsonl record (debug log of one API request body) is not converted; dropped",
            )
    source.context = context
    if not source.entries and len(context) > 1:
        ctx.lossy(
            str(L.transcript),
            None,
            "",
            "the transcript is empty, so no message carries the manifest, inbox or context_meta",
        )
    return source


def _report_manifest(path: Path, manifest: dict[str, Any], ctx: ConvertContext) -> None:
    """The manifest travels in provider_raw of the first message and the partition of each
    entry in its message's provenance; canonical readers see neither, so the rotation
    policy and each archived partition's boundaries and counts are reported once each."""
    policy = manifest.get("rotation_policy")
    if isinstance(policy, dict):
        limits = ", ".join(f"{k} {policy[k]}" for k in sorted(policy))
        ctx.lossy(
            str(path),
            1,
            "/rotation_policy",
            f"rotation policy ({limits}) has no canonical field; kept only in provider_raw of the first message",
        )
    for i, p in enumerate(manifest["partitions"]):
        ctx.lossy(
            str(path),
            1,
            f"/partitions/{i}",
            f"archived partition {p.get('file')} (timestamps {p.get('start_ts')}-{p.get('end_ts')}, "
            f"{p.get('entry_count')} entries, {p.get('prompt_count')} prompts, {p.get('token_count')} tokens) "
            "and which entries lived in it have no canonical field; kept only in provider_raw "
            "(the manifest on the first message, the partition on each message)",
        )


def _derive(entries: list[SourceEntry]) -> list[dict[str, Any] | None]:
    """TF §Context Rebuilding; entry 0 is None when the transcript has no anchor."""
    start: int | None = None
    for i, e in enumerate(entries):
        if e.value["entry_type"] in R.ANCHORS:
            start = i
    head: list[dict[str, Any] | None] = [entries[start].value if start is not None else None]
    rest = entries[start + 1 :] if start is not None else entries
    return head + [e.value for e in rest if e.value["entry_type"] != "system_prompt_changed"]


class Clock:
    """Monotonic ULIDs and created_at from entry timestamps (canonical §6.1, §4.1).

    Ids derive from the entries (their UUIDs) through `convertkit.IdMint`: the same
    transcript converts to the same bytes."""

    def __init__(self) -> None:
        self.mint = IdMint("chibi")
        self.last_seconds = 0

    def seconds(self, ts: int) -> int:
        self.last_seconds = max(ts, self.last_seconds)
        return self.last_seconds

    def ulid(self, seconds: int, *parts: str | int) -> str:
        return self.mint.ulid(seconds * 1000, *parts)


def rfc3339(seconds: int) -> str:
    return kit_rfc3339(seconds * 1_000_000)


def _placeholder_metadata() -> dict[str, Any]:
    return {
        "model": PLACEHOLDER_MODEL,
        "provider": PLACEHOLDER_PROVIDER,
        "routing": {
            "mode": "default",
            "chosen_model": PLACEHOLDER_MODEL,
            "reason": "converted from chibi, which records no model or routing",
        },
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "cost_usd": "0",
            "pricing_version": "unknown",
            "latency_ms": 0,
        },
    }


def message_role(e: dict[str, Any], context_name: str) -> str:
    """Canonical role of a chibi `message` entry.

    v0.10 writes `role` (`agent` is the assistant); older entries fall back on the
    addressing chibi used: the assistant wrote `to: "user"` (v0.9), or came from the
    context itself.
    """
    role = e.get("role")
    if role is not None:
        return {"user": "user", "agent": "assistant", "system": "system"}[role]
    if e["to"] == "user" or e["from"] == context_name:
        return "assistant"
    return "user"


def chibi_to_canonical(src: Path, dst: Path, ctx: ConvertContext) -> None:
    """`turnspec convert --from chibi --to canonical SRC DST`.

    SRC is a context directory (or transcript/ directory) or a file of entries.
    """
    # a conversion refuses what `turnspec validate` rejects (missing or repeated partitions,
    # FIFOs, duplicate ids, ...): it never converts a context it would silently lose part of
    validated(src, "chibi", ChibiRun(Options()), FileStats(str(src), "chibi"))
    v = _validators()
    source = load_source(src, ctx, v)
    _write_lines(dst, ToCanonical(ctx, source).run())


def _restored_ulid(entry_id: str, seconds: int) -> str | None:
    """The canonical id a chibi entry's UUID holds, when canonical -> chibi wrote it: the
    ULID's 128 bits as the UUID, its time within the entry's second."""
    try:
        value = uuid.UUID(entry_id).int
    except ValueError:
        return None
    # a ULID's first 48 bits are its milliseconds (integer arithmetic: a float's rounding
    # could put the first millisecond of a second into the one before)
    return ids.encode(value) if (value >> 80) // 1000 == seconds else None


class ToCanonical:
    """chibi entries -> canonical messages (module docstring)."""

    def __init__(self, ctx: ConvertContext, source: Source) -> None:
        self.ctx = ctx
        self.source = source
        self.clock = Clock()
        self.open_calls: dict[str, str] = {}
        self.answered: set[str] = set()
        self.positional: list[str] = []  # tool ids of calls without tool_call_id, oldest first
        self.used_tool_ids: set[str] = set()
        self.out: list[dict[str, Any]] = []
        self.carried: list[dict[str, Any]] = []
        self.joined: dict[str, Any] | None = None  # (message, its id) a continuation may join

    def run(self) -> list[dict[str, Any]]:
        for se in self.source.entries:
            self.entry(se)
        if self.carried:
            if self.out:
                self.out[-1]["metadata"]["provider_raw"]["chibi"]["after"] = self.carried
            else:
                # nothing but carried entries: one empty system message (canonical §5.1.2's
                # placeholder) holds them all
                first, rest = self.carried[0], self.carried[1:]
                self.carried = []
                prov = {"version": 1, "entry": first["entry"]}
                if "partition" in first:
                    prov["partition"] = first["partition"]
                if rest:
                    prov["after"] = rest
                self._emit(
                    self.source.entries[0], "system", [], {}, prov, self.clock.seconds(first["entry"]["timestamp"])
                )
        return self.out

    def entry(self, se: SourceEntry) -> None:
        e, where = se.value, (se.path, se.line)
        ts = e["timestamp"]
        if type(ts) is not int or ts > R.MAX_SECONDS:
            raise InputError(
                f"{se.path}:{se.line}: timestamp {ts!r} is not integer Unix seconds (CB103); cannot map it to created_at"
            )
        et = e["entry_type"]
        fields = {k: val for k, val in e.items() if k != "content"}
        if et not in CONVERSATION and not (et == "compaction" and _summary(e)) and et != "system_prompt_changed":
            carried: dict[str, Any] = {"entry": dict(e)}
            if se.partition is not None:
                carried["partition"] = se.partition
            self.carried.append(carried)
            self.ctx.lossy(
                *where,
                "",
                f"{et} entry has no canonical equivalent (chibi keeps it out of the model's messages); "
                "kept in provider_raw of the neighbouring message, restored on the way back",
            )
            return
        seconds = self.clock.seconds(ts)
        if seconds != ts:
            self.ctx.lossy(
                *where,
                "/timestamp",
                f"timestamp {ts} is earlier than a previous entry's; created_at clamped to "
                f"{rfc3339(seconds)} (canonical §4.1 needs order)",
            )
        prov: dict[str, Any] = {"version": 1, "entry": fields}
        if se.partition is not None:
            prov["partition"] = se.partition
        meta: dict[str, Any] = {}
        for ptr in _undocumented(e):
            self.ctx.lossy(
                *where,
                ptr,
                f"{ptr[1:].replace('/', '.')} (a field chibi does not document, CB027) has no canonical field; "
                "kept only in provider_raw",
            )
        if e.get("flow_control") is True:
            self.ctx.lossy(
                *where,
                "/flow_control",
                f"flow-control marker on a {et} entry (it hands control over, TF §Flow Control Types) "
                "has no canonical field; kept only in provider_raw",
            )
        if et == "message":
            role = message_role(e, self.source.name)
            content: list[dict[str, Any]] = [{"type": "text", "text": e["content"]}]
            if role == "user" and e["from"] not in (self.source.name, "user", "system"):
                meta["user_id"] = e["from"]  # TF §Fields: `from` is the username
            if role == "assistant" and e["to"] != "user":
                # v0.9's literal "user" only marks the reply (message_role); a name is an addressee
                self.ctx.lossy(
                    *where,
                    "/to",
                    f"agent message addressed to {e['to']!r}: canonical records no addressee; "
                    "kept only in provider_raw",
                )
        elif et == "system_prompt_changed":
            role, content = "system", [{"type": "text", "text": e["content"]}]
        elif et == "compaction":
            role, content = "system", [{"type": "text", "text": _summary(e)}]
            prov["entry"]["content"] = e["content"]
        elif et == "tool_call":
            role = "assistant"
            tool_id = self._tool_id(e, seconds, se)
            tcid = e.get("tool_call_id")
            if tcid is None:
                self.positional.append(tool_id)
            else:
                self.open_calls[tcid] = tool_id
                self.answered.discard(tcid)
            args = _arguments(e["content"])
            if args is None:
                self.ctx.lossy(
                    *where,
                    "/content",
                    "tool arguments are not a JSON object; tool_use.input is {} and the text is kept in provider_raw",
                )
                args = {}
                prov["entry"]["content"] = e["content"]
            elif _dump(args) != e["content"]:
                prov["entry"]["content"] = e["content"]  # keeps the exact text (spacing, key order)
            name = e["to"]
            if not name:
                self.ctx.lossy(*where, "/to", "tool call names no tool; tool_use.name is 'unnamed_tool'")
                name = "unnamed_tool"
            content = [{"type": "tool_use", "id": tool_id, "name": name, "input": args}]
        else:  # tool_result
            role = "tool"
            tcid = e.get("tool_call_id")
            if tcid is None:
                # older chibi wrote no tool_call_id; chibi pairs such results by position
                found = self.positional.pop(0) if self.positional else None
                why = "follows no unanswered tool_call without a tool_call_id"
            else:
                found = self.open_calls.pop(tcid, None)
                why = "already answered" if tcid in self.answered else "answers no earlier tool_call"
                self.answered.add(tcid)
            if found is None:
                raise InputError(
                    f"{se.path}:{se.line}: tool_result {tcid!r} {why}; canonical requires "
                    "every result to answer one tool_use (§5.2.2)"
                )
            content = [
                {"type": "tool_result", "tool_use_id": found, "content": [{"type": "text", "text": e["content"]}]}
            ]
            meta["parent_tool_use_id"] = found
        if self._join(se, role, content, prov, seconds):
            return
        self._emit(se, role, content, meta, prov, seconds)

    def _tool_id(self, e: dict[str, Any], seconds: int, se: SourceEntry) -> str:
        """The tool_call_id itself when it is a canonical tool id (canonical -> chibi kept
        it), else one derived from the entry."""
        tcid = e.get("tool_call_id")
        if isinstance(tcid, str) and is_tool_id(tcid) and tcid not in self.used_tool_ids:
            self.used_tool_ids.add(tcid)
            return tcid
        tid = "tu_" + self.clock.ulid(seconds, "tool", e["id"], se.path, se.line)
        self.used_tool_ids.add(tid)
        return tid

    def _join(
        self, se: SourceEntry, role: str, content: list[dict[str, Any]], prov: dict[str, Any], seconds: int
    ) -> bool:
        """Join an entry that canonical -> chibi split off a message back into it: its id
        is the one that conversion derives for the message's next entry."""
        j = self.joined
        if j is None or j["seconds"] != seconds or self.carried:
            return False
        if se.value["id"] != _uuid(seconds, "entry", j["id"], j["serial"]):
            return False
        m = j["message"]
        if (m["role"], role) not in (("assistant", "assistant"), ("tool", "tool"), ("user", "tool")):
            return False
        j["serial"] += 1
        m["content"].extend(content)
        part = {k: prov[k] for k in ("entry", "partition") if k in prov}
        m["metadata"]["provider_raw"]["chibi"].setdefault("joined", []).append(part)
        return True

    def _emit(
        self,
        se: SourceEntry,
        role: str,
        content: list[dict[str, Any]],
        meta: dict[str, Any],
        prov: dict[str, Any],
        seconds: int,
    ) -> None:
        if self.carried:
            prov["before"], self.carried = self.carried, []
        if not self.out and self.source.context is not None:
            prov["context"] = self.source.context
        if role == "assistant":
            meta.update(_placeholder_metadata())
            prov["placeholders"] = ["model", "provider", "routing", "usage"]
            self.ctx.lossy(
                se.path,
                se.line,
                "",
                "chibi records no model, provider, routing or usage; placeholders written "
                "(canonical §5.3.1-3 require them)",
            )
        meta["provider_raw"] = {"chibi": prov}
        restored = _restored_ulid(se.value["id"], seconds)
        mid = (restored and self.clock.mint.keep(restored)) or self.clock.ulid(
            seconds, se.value["id"], se.path, se.line
        )
        message = {
            "id": mid,
            "session_id": self.source.name,
            "role": role,
            "content": content,
            "metadata": meta,
            "created_at": rfc3339(seconds),
            "schema_version": 1,
        }
        self.out.append(message)
        self.joined = {"message": message, "id": mid, "seconds": seconds, "serial": 1} if restored else None


# entry fields the mapping reads (TF §Fields); the rest is what an older chibi wrote
_DOCUMENTED = frozenset(ENTRY_ORDER)


def _undocumented(e: dict[str, Any]) -> list[str]:
    """Pointers of an entry's fields chibi does not document (CB027 tolerates them), and of
    its metadata keys other than a compaction's `summary` (TF §Metadata Structure)."""
    out = [f"/{k}" for k in sorted(e) if k not in _DOCUMENTED]
    meta = e.get("metadata")
    if isinstance(meta, dict):
        out += [f"/metadata/{k}" for k in sorted(meta) if not (k == "summary" and e["entry_type"] == "compaction")]
    return out


def _summary(e: dict[str, Any]) -> str | None:
    meta = e.get("metadata")
    summary = meta.get("summary") if isinstance(meta, dict) else None
    return summary if isinstance(summary, str) and summary else None


def _arguments(text: str) -> dict[str, Any] | None:
    try:
        value = parse(text.encode("utf-8", "surrogatepass"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


# -- canonical -> chibi ---------------------------------------------------------------------


@dataclass
class Built:
    entry: dict[str, Any]
    partition: str | None


def _ordered(fields: dict[str, Any], content: str) -> dict[str, Any]:
    """An entry in serde's field order (the order chibi writes)."""
    merged = dict(fields)
    merged["content"] = content
    known = [k for k in ENTRY_ORDER if k in merged]
    return {k: merged[k] for k in known + [k for k in merged if k not in ENTRY_ORDER]}


def _seconds(created_at: str, rec: Record) -> tuple[int, bool]:
    """Whole Unix seconds of a canonical created_at, and whether a fraction was dropped;
    a refusal names the record's file, line and pointer, as `validate` would."""
    where = f"{rec.path}:{rec.line}: {rec.pointer}/created_at"
    try:
        micros = created_at_micros(created_at)
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None
    seconds, fraction = divmod(micros, 1_000_000)
    if seconds < 0:
        raise InputError(f"{where}: created_at {created_at!r} is before 1970; chibi timestamps are unsigned seconds")
    return seconds, fraction != 0


def _texts(blocks: list[dict[str, Any]]) -> str:
    return "\n".join(b["text"] for b in blocks if b.get("type") == "text")


class CanonicalToChibi:
    def __init__(self, ctx: ConvertContext, v: dict[str, SchemaValidator]) -> None:
        self.ctx = ctx
        self.v = v
        self.out: list[Built] = []
        self.tool_names: dict[str, str] = {}
        self.answered: set[str] = set()
        self.context: dict[str, Any] | None = None
        self.context_at: tuple[str, int, str] = ("", 0, "")
        self.v09 = False
        self.name = "default"

    def run(self, records: list[Record]) -> None:
        msgs = [(rec, _checked(self.v["message"], rec, "canonical message")) for rec in records]
        sessions = sorted({m["session_id"] for _, m in msgs})
        if len(sessions) > 1:
            raise InputError(
                f"{records[0].path}: holds {len(sessions)} sessions "
                f"({', '.join(sessions[:5])}); a chibi context holds one"
            )
        provs = [self._provenance(rec, m) for rec, m in msgs]
        vocabularies = {
            vocabulary_of(e)
            for p in provs
            if p is not None
            for e in [
                p["entry"],
                *(c["entry"] for c in [*(p.get("before") or []), *(p.get("after") or [])]),
                *(j["entry"] for j in p.get("joined") or []),
            ]
        }
        self.v09 = "v0.9" in vocabularies and "v0.10" not in vocabularies  # new entries match
        for (rec, _), p in zip(msgs, provs, strict=True):
            if p is not None and "context" in p:
                self.context = p["context"]
                self.context_at = (rec.path, rec.line, "/metadata/provider_raw/chibi/context")
                break
        if self.context is not None:
            self.name = self.context["name"]
        elif sessions and CONTEXT_NAME.match(sessions[0]):
            self.name = sessions[0]
        elif sessions:
            self.ctx.lossy(
                records[0].path,
                records[0].line,
                "/session_id",
                f"session_id {sessions[0]!r} is not a chibi context name (letters, digits, "
                "- and _); the context is named 'default'",
            )
        for _, m in msgs:
            for b in m["content"]:
                if b["type"] == "tool_use":
                    self.tool_names[b["id"]] = b["name"]
                elif b["type"] == "tool_result":
                    self.answered.add(b["tool_use_id"])
        if msgs and all(p is None for p in provs):
            first = _seconds(msgs[0][1]["created_at"], msgs[0][0])[0]
            # chibi starts every new context with this anchor (state/mod.rs save_context)
            self.out.append(Built(_anchor(self.name, first), None))
        for (rec, m), prov in zip(msgs, provs, strict=True):
            if prov is not None:
                self.restore(rec, m, prov)
            else:
                self.fresh(rec, m)

    def _provenance(self, rec: Record, m: dict[str, Any]) -> dict[str, Any] | None:
        raw = (m["metadata"].get("provider_raw") or {}).get("chibi")
        if raw is None:
            return None
        if not self.v["provenance"].is_valid(raw):
            err = self.v["provenance"].errors(raw)[0]
            self.ctx.lossy(
                rec.path,
                rec.line,
                "/metadata/provider_raw/chibi" + err.pointer,
                f"provider_raw.chibi is not turnspec's chibi provenance ({err.message}); ignored",
            )
            return None
        prov: dict[str, Any] = raw
        return prov

    def restore(self, rec: Record, m: dict[str, Any], prov: dict[str, Any]) -> None:
        for c in prov.get("before") or []:
            self.out.append(Built(dict(c["entry"]), c.get("partition")))
        blocks = m["content"]
        i = 0
        for part in [prov, *(prov.get("joined") or [])]:
            fields: dict[str, Any] = dict(part["entry"])
            content, used = self._restore_content(fields, blocks[i:])
            i += used
            self.out.append(Built(_ordered(fields, content), part.get("partition")))
        et = prov["entry"]["entry_type"]
        for k in range(i, len(blocks)):
            self.ctx.lossy(
                rec.path,
                rec.line,
                f"/content/{k}",
                f"{blocks[k]['type']} block added after conversion from chibi is not carried back into the {et} entry",
            )
        user = prov["entry"].get("from") if m["metadata"].get("user_id") == prov["entry"].get("from") else None
        self._assistant_metadata(rec, m, placeholders=set(prov.get("placeholders", [])), user=user)
        for c in prov.get("after") or []:
            self.out.append(Built(dict(c["entry"]), c.get("partition")))

    def _restore_content(self, fields: dict[str, Any], blocks: list[dict[str, Any]]) -> tuple[str, int]:
        """The entry's content from the canonical blocks (authoritative when edited), and
        how many blocks it used; pops `content` from `fields`."""
        et = fields["entry_type"]
        first = blocks[0] if blocks else None
        kind = first["type"] if first is not None else None
        if "content" in fields:
            content: str = fields.pop("content")
            if et == "tool_call" and first is not None and kind == "tool_use":
                args = _arguments(content)
                if args is not None and args != first["input"]:
                    content = _dump(first["input"])  # the canonical input was edited
                return content, 1
            if et == "compaction" and first is not None and kind == "text":
                meta = dict(fields.get("metadata") or {})
                if meta.get("summary") != first["text"]:
                    fields["metadata"] = {**meta, "summary": first["text"]}  # the summary was edited
                return content, 1
            return content, 0
        if et == "tool_call" and kind == "tool_use" and first is not None:
            return _dump(first["input"]), 1
        if et == "tool_result" and kind == "tool_result" and first is not None:
            return _texts(first["content"]), 1
        return _texts(blocks[:1]), min(1, len(blocks))

    def _assistant_metadata(
        self, rec: Record, m: dict[str, Any], placeholders: set[str], user: str | None = None
    ) -> None:
        meta = m["metadata"]
        lost = [
            k
            for k in ("model", "provider", "routing", "usage", "user_id", "team_id")
            if meta.get(k) is not None and k not in placeholders and not (k == "user_id" and user is not None)
        ]
        status = meta.get("status", "complete")
        if status != "complete":
            lost.append(f"status {status!r}")
        # a tool message's parent is the call its result answers, which chibi's pairing keeps
        answered = {b.get("tool_use_id") for b in m["content"] if b.get("type") == "tool_result"}
        parent = meta.get("parent_tool_use_id")
        if parent is not None and parent not in answered:
            lost.append("parent_tool_use_id")
        lost += [f"provider_raw.{k}" for k in (meta.get("provider_raw") or {}) if k != "chibi"]
        if lost:
            self.ctx.lossy(
                rec.path,
                rec.line,
                "/metadata",
                f"chibi entries have no field for {', '.join(lost)}; dropped",
            )

    def fresh(self, rec: Record, m: dict[str, Any]) -> None:
        seconds, fractional = _seconds(m["created_at"], rec)
        if fractional:
            self.ctx.lossy(
                rec.path,
                rec.line,
                "/created_at",
                "chibi timestamps are whole seconds; the sub-second part of created_at is dropped",
            )
        self._assistant_metadata(rec, m, placeholders=set())
        try:
            first_id = str(ULID.from_str(m["id"]).to_uuid())
        except ValueError:
            first_id = _uuid(seconds, "entry", m["id"], rec.line)
            self.ctx.lossy(
                rec.path,
                rec.line,
                "/id",
                f"message id {m['id']!r} is not a ULID, so it cannot become the entry's UUID; a new id is used",
            )
        role = m["role"]
        first_ids = iter([first_id])
        serial = iter(range(1, 1 << 31))

        def entry(et: str, frm: str, to: str, content: str, **extra: Any) -> None:
            fields = {
                "id": next(first_ids, None) or _uuid(seconds, "entry", m["id"], next(serial)),
                "timestamp": seconds,
                "from": frm,
                "to": to,
                "entry_type": et,
                **extra,
            }
            self.out.append(Built(_ordered(fields, content), None))

        for i, b in enumerate(m["content"]):
            t, ptr = b["type"], f"/content/{i}"
            if t == "text" and role in ("user", "assistant"):
                user = role == "user"
                # v0.9 marks no role: the assistant is the entry addressed `to: "user"`
                extra = {} if self.v09 else {"role": "user" if user else "agent"}
                entry(
                    "message",
                    "user" if user else self.name,
                    self.name if user else "user",
                    b["text"],
                    **extra,
                )
            elif t == "text" and role == "system":
                entry("system_prompt_changed", "system", self.name, b["text"])
            elif t == "tool_use":
                if b["id"] not in self.answered:
                    self.ctx.lossy(
                        rec.path,
                        rec.line,
                        ptr,
                        f"tool_use {b['id']} is never answered, and chibi requires a result for every call; dropped",
                    )
                    continue
                entry("tool_call", self.name, b["name"], _dump(b["input"]), tool_call_id=b["id"])
            elif t == "tool_result":
                name = self.tool_names.get(b["tool_use_id"])
                if name is None:
                    raise InputError(
                        f"{rec.path}:{rec.line}: tool_result answers {b['tool_use_id']!r}, "
                        "which no tool_use in the file has (TS205)"
                    )
                inner = b["content"]
                if sum(1 for x in inner if x.get("type") == "text") > 1:
                    self.ctx.lossy(
                        rec.path,
                        rec.line,
                        ptr + "/content",
                        "chibi tool results are one string; the text blocks are joined with newlines",
                    )
                for j, x in enumerate(inner):
                    if x.get("type") != "text":
                        self.ctx.lossy(
                            rec.path,
                            rec.line,
                            f"{ptr}/content/{j}",
                            f"{x.get('type')} block in a tool result has no chibi equivalent; dropped",
                        )
                if b.get("is_error"):
                    self.ctx.lossy(
                        rec.path,
                        rec.line,
                        ptr + "/is_error",
                        "chibi tool results carry no error flag; is_error dropped",
                    )
                entry("tool_result", name, self.name, _texts(inner), tool_call_id=b["tool_use_id"])
            else:
                what = "thinking block and its signature" if t == "thinking" else f"{t} block"
                self.ctx.lossy(rec.path, rec.line, ptr, f"{what} has no chibi equivalent; dropped")
        if not m["content"]:
            self.ctx.lossy(rec.path, rec.line, "/content", f"empty {role} message has no chibi entry; dropped")

    # -- output ---------------------------------------------------------------------------

    def write(self, dst: Path) -> None:
        entries = [b.entry for b in self.out]
        if dst.name.endswith(".jsonl"):
            if self.context is not None and len(self.context) > 1:
                self.ctx.lossy(
                    *self.context_at,
                    "a single transcript file holds no manifest, inbox or context_meta; they are not written",
                )
            _write_lines(dst, entries)
            return
        transcript = dst / "transcript"
        transcript.mkdir(parents=True)
        manifest = self._partition(transcript)
        if manifest is not None:
            _write_json(transcript / "manifest.json", manifest)
        _write_lines(dst / "context.jsonl", self._context_window())
        ctxd = self.context or {}
        if "context_meta" in ctxd:
            _write_json(dst / "context_meta.json", ctxd["context_meta"])
        if "inbox" in ctxd:
            _write_lines(dst / "inbox.jsonl", ctxd["inbox"])

    def _partition(self, transcript: Path) -> dict[str, Any] | None:
        stashed = (self.context or {}).get("manifest")
        if stashed is None:
            return self._rotate_fresh(transcript)
        metas = {p["file"]: p for p in stashed["partitions"]}
        position = {rel: i for i, rel in enumerate(metas)}  # each partition's place in the manifest
        groups: dict[str, list[dict[str, Any]]] = {f: [] for f in metas}
        active: list[dict[str, Any]] = []
        for b in self.out:
            groups.get(b.partition or "", active).append(b.entry)
        manifest = {k: ([] if k == "partitions" else v) for k, v in stashed.items()}
        for rel, entries in groups.items():
            if not entries:
                continue
            old = metas[rel]
            start, end = entries[0]["timestamp"], entries[-1]["timestamp"]
            same = (old["entry_count"], old["start_ts"], old["end_ts"]) == (
                len(entries),
                start,
                end,
            )
            meta = (
                dict(old)
                if same
                else {
                    "file": f"partitions/{start}-{end}.jsonl",
                    "start_ts": start,
                    "end_ts": end,
                    "entry_count": len(entries),
                    "token_count": token_estimate(
                        [len(e["content"].encode("utf-8", "surrogatepass")) for e in entries],
                        DEFAULT_BYTES_PER_TOKEN,
                    ),
                }
            )
            if meta.pop("bloom_file", None) is not None:
                at_path, at_line, at_ptr = self.context_at
                self.ctx.lossy(
                    at_path,
                    at_line,
                    f"{at_ptr}/manifest/partitions/{position[rel]}/bloom_file",
                    f"no bloom filter is written for {meta['file']} (chibi's search then scans the partition)",
                )
            path = safe_join(transcript, meta["file"])
            if path is None:
                at_path, at_line, at_ptr = self.context_at
                raise InputError(
                    f"{at_path}:{at_line}: {at_ptr}/manifest/partitions/{position[rel]}/file: provenance names "
                    f"partition {meta['file']!r}, which leaves transcript/ (CB310); not written"
                )
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_lines(path, entries)
            manifest["partitions"].append(meta)
        active_path = safe_join(transcript, manifest["active_partition"])
        if active_path is None:
            at_path, at_line, at_ptr = self.context_at
            raise InputError(
                f"{at_path}:{at_line}: {at_ptr}/manifest/active_partition: provenance names active partition "
                f"{manifest['active_partition']!r}, which leaves transcript/ (CB310); not written"
            )
        if active or not manifest["partitions"]:
            _write_lines(active_path, active)
        return manifest

    def _rotate_fresh(self, transcript: Path) -> dict[str, Any] | None:
        """Partition as chibi would have with its default policy (rotate after each append)."""
        p = DEFAULT_POLICY
        partitions: list[dict[str, Any]] = []
        active: list[dict[str, Any]] = []
        tokens = 0
        for b in self.out:
            active.append(b.entry)
            tokens += token_estimate(
                [len(b.entry["content"].encode("utf-8", "surrogatepass"))], DEFAULT_BYTES_PER_TOKEN
            )
            age = active[-1]["timestamp"] - active[0]["timestamp"]
            if len(active) >= p["max_entries"] or tokens >= p["max_tokens"] or age >= p["max_age_seconds"]:
                start, end = active[0]["timestamp"], active[-1]["timestamp"]
                rel = f"partitions/{start}-{end}.jsonl"
                if any(x["file"] == rel for x in partitions):
                    raise InputError(
                        f"two partitions would both be named {rel} (chibi would overwrite "
                        "one); cannot write this transcript"
                    )
                (transcript / "partitions").mkdir(exist_ok=True)
                _write_lines(transcript / rel, active)
                partitions.append(
                    {
                        "file": rel,
                        "start_ts": start,
                        "end_ts": end,
                        "entry_count": len(active),
                        "token_count": tokens,
                    }
                )
                active, tokens = [], 0
        _write_lines(transcript / "active.jsonl", active)
        if not partitions:
            return None
        return {
            "version": 1,
            "active_partition": "active.jsonl",
            "partitions": partitions,
            "rotation_policy": dict(p),
        }

    def _context_window(self) -> list[dict[str, Any]]:
        entries = [b.entry for b in self.out]
        start = max((i for i, e in enumerate(entries) if e["entry_type"] in R.ANCHORS), default=None)
        if start is None:
            stashed = (self.context or {}).get("context_anchor")
            head = stashed or _anchor(self.name, entries[0]["timestamp"] if entries else 0)
            rest = entries
        else:
            head, rest = entries[start], entries[start + 1 :]
        return [head, *(e for e in rest if e["entry_type"] != "system_prompt_changed")]


def _uuid(seconds: int, *parts: str | int) -> str:
    """An entry UUID derived from what it is for (same input, same output): a ULID at the
    entry's time (`conformance.core.ids.derived`) as its 128 bits, like a converted message's."""
    return str(ULID.from_str(ids.derived(seconds * 1000, *parts)).to_uuid())


def _anchor(name: str, seconds: int) -> dict[str, Any]:
    return _ordered(
        {
            "id": _uuid(seconds, "anchor", name),
            "timestamp": seconds,
            "from": "system",
            "to": name,
            "entry_type": "context_created",
        },
        R.ANCHOR_CONTENT["context_created"],
    )


def canonical_to_chibi(src: Path, dst: Path, ctx: ConvertContext) -> None:
    """`turnspec convert --from canonical --to chibi SRC DST`.

    DST becomes a context directory, or a single transcript file if it ends in .jsonl.
    """
    if src.is_dir():
        raise InputError(f"{src}: give one canonical .jsonl or .json file")
    v = _validators()
    items = read_jsonl(src) if src.suffix == ".jsonl" else read_json(src)
    records = _records(items, "a canonical file")
    conv = CanonicalToChibi(ctx, v)
    conv.run(records)
    try:
        conv.write(dst)  # the engine (conformance.convert) validates the output as chibi
    except BaseException:
        # conformance.convert cleans up a failed output with Path.unlink, which cannot
        # remove a directory: remove it here so a refusal leaves nothing behind
        if dst.is_dir():
            shutil.rmtree(dst)
        raise


__all__ = ["canonical_to_chibi", "chibi_to_canonical", "message_role"]
