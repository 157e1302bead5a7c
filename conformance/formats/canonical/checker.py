"""Validation of canonical messages: schema by `schema_version`, then the rules.

One `CanonicalRun` validates every canonical file of a run, so the cross-message rules
(TS2xx) see sessions that span lines and files. State is kept per session: the last
message id and timestamp, and the open tool calls. Two rules need run-wide sets (message
id uniqueness TS202, tool id repetition TS207); they cost about 100 bytes per message
and tool call, and ignoring them (`--ignore TS202,TS207`) bounds memory by the open
sessions alone.
"""

from __future__ import annotations

import binascii
import datetime as dt
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ...findings import Finding, RuleInfo, Selection
from ...jsonio import Record, read_json, read_jsonl
from ...schema_validation import SchemaValidator
from ...schemas import schema_set, versions
from ..base import FileStats, Options, ProgressHook
from . import rules as R
from .pricing import PriceTable, load_price_table
from .tools import ToolSet, definition_findings, load_tools

_BLOCKS_WITH_RULES = frozenset({"tool_use", "tool_result", "image", "audio"})


def _pattern(defs: dict[str, Any], name: str) -> re.Pattern[str]:
    # id formats come from ids.json, so the schema stays the single source of truth
    return re.compile(str(defs[name]["pattern"]).replace("$", r"\Z"))


@dataclass
class Session:
    last_id: str | None = None
    last_created: str | None = None
    open_uses: dict[str, tuple[str, int, str, int]] = field(default_factory=dict)
    answered: set[str] = field(default_factory=set)


class CanonicalRun:
    """Validates canonical messages (and tool definitions) across the files of one run."""

    def __init__(self, options: Options, revisions: Sequence[str] | None = None) -> None:
        """`revisions` pins the schema revisions this reader knows (default: all shipped);
        `CanonicalRun(options, revisions=["v1"])` reads as a revision-1 reader would."""
        self.options = options
        self.sel: Selection = options.selection
        # schema_version is the spec's major version (§10.1); additive revisions keep it
        # (§10.2), so each major is read with the newest revision declaring it
        self.revision: dict[int, str] = {}
        for rev in revisions if revisions is not None else versions("canonical"):
            sv = schema_set("canonical", rev)["message.json"]["properties"]["schema_version"]
            major = sv["const"] if "const" in sv else sv["minimum"]
            self.revision[int(major)] = rev
        if not self.revision:
            raise ValueError("no canonical schema revision to read with")
        self.validators: dict[int, SchemaValidator] = {
            n: SchemaValidator(schema_set("canonical", rev), "message.json") for n, rev in self.revision.items()
        }
        self.latest = max(self.validators)
        s1 = schema_set("canonical", self.revision[self.latest])
        self.tooldef = SchemaValidator(s1, "tool-definition.json")
        defs = s1["ids.json"]["$defs"]
        self.re_ulid = _pattern(defs, "ulid")
        self.re_tool_id = _pattern(defs, "tool_use_id")
        self.re_model = _pattern(defs, "model_id")
        self.known_meta: dict[int, frozenset[str]] = {}
        self.known_blocks: dict[int, frozenset[str]] = {}
        for n, rev in self.revision.items():
            s = schema_set("canonical", rev)
            self.known_meta[n] = frozenset(s["message-metadata.json"]["properties"])
            self.known_blocks[n] = frozenset(s["known-content-block.json"]["discriminator"]["mapping"])
        self.on = {info.id: self.sel.enabled(info.id) for info in R.CATALOG}
        self.sessions: dict[str, Session] = {}
        self.tool_owner: dict[str, str] = {}
        self.message_ids: set[str] = set()
        self.toolset: ToolSet | None = load_tools(options.tools, self.tooldef) if options.tools else None
        self.prices: PriceTable | None = load_price_table(options.pricing) if options.pricing else None
        self.tool_names: dict[str, tuple[str, int]] = {}
        self._pending: list[Finding] = []
        if self.toolset is not None:
            self.tool_names = {n: ("--tools", 0) for n in self.toolset.tools}
            self._pending = [f for f in self.toolset.findings if self.on[f.rule]]

    # -- plumbing ---------------------------------------------------------------------

    def _f(self, rec: Record, ptr: str, info: RuleInfo, message: str) -> Finding:
        return Finding(rec.path, rec.line, rec.pointer + ptr, info.id, self.sel.severity(info), message)

    def validate(self, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
        if path.suffix == ".jsonl" or str(path) == "-":  # standard input is JSON Lines
            items = read_jsonl(path, max_line_bytes=self.options.max_line_bytes)
        else:
            items = read_json(path)
        sel = self.sel
        if self._pending:
            yield from self._pending
            self._pending = []
        for item in items:
            if isinstance(item, Finding):
                if self.on.get(item.rule, sel.enabled(item.rule)):
                    info = R.CATALOG[item.rule]
                    if sel.severity(info) != item.severity:
                        item = Finding(
                            item.path,
                            item.line,
                            item.pointer,
                            item.rule,
                            sel.severity(info),
                            item.message,
                        )
                    yield item
                continue
            stats.records += 1
            if progress is not None and item.size:
                progress(item.size)
            v = item.value
            if isinstance(v, dict) and "input_schema" in v and "role" not in v:
                yield from self.check_tool_definition(item)
            else:
                yield from self.check_message(item)

    def finish(self) -> Iterator[Finding]:
        if not self.on["TS208"]:
            return
        for sid, sess in self.sessions.items():
            for tid, (path, line, prefix, i) in sess.open_uses.items():
                ptr = f"{prefix}/content/{i}"
                yield Finding(path, line, ptr, "TS208", self.sel.severity(R.TOOL_UNANSWERED),
                              f"tool_use {tid} in session {sid} was never answered by a tool_result")  # fmt: skip

    # -- messages ---------------------------------------------------------------------

    def check_message(self, rec: Record) -> list[Finding]:
        """All findings for one message (a list, not a generator: this is the hot path)."""
        out: list[Finding] = []
        msg = rec.value
        on = self.on
        version = msg.get("schema_version") if isinstance(msg, dict) else None
        if type(version) is int and version not in self.validators:
            if on["TS012"]:
                known = ", ".join(map(str, sorted(self.validators)))
                out.append(self._f(rec, "/schema_version", R.UNKNOWN_VERSION,
                              f"schema_version {version} is not supported (this turnspec knows: {known}); upgrade turnspec or migrate the data"))  # fmt: skip
            return out
        n = version if type(version) is int else self.latest
        validator = self.validators[n]
        if not validator.is_valid(msg):
            if on["TS020"]:
                for err in validator.errors(msg):
                    out.append(self._f(rec, err.pointer, R.SCHEMA, err.message))
            return out
        meta = msg["metadata"]
        if on["TS010"]:
            extra = meta.keys() - self.known_meta[n]
            for k in sorted(extra):
                out.append(self._f(rec, "/metadata/" + k.replace("~", "~0").replace("/", "~1"), R.UNKNOWN_METADATA,
                              f"unknown metadata field `{k}` (kept, but not part of schema {self.revision[n]})"))  # fmt: skip
        self._message_rules(rec, msg, meta, self.known_blocks[n], out)
        self._session_rules(rec, msg, meta, out)
        return out

    def _message_rules(
        self,
        rec: Record,
        msg: dict[str, Any],
        meta: dict[str, Any],
        known: frozenset[str],
        out: list[Finding],
    ) -> None:
        on = self.on
        role: str = msg["role"]
        content: list[dict[str, Any]] = msg["content"]
        status = meta.get("status", "complete")
        partial = status == "partial"  # §5.1.5: a streaming message may break the rest
        allowed = R.ALLOWED_BLOCKS[role]
        for i, block in enumerate(content):
            t = block["type"]
            if t not in known:  # reported at any status (§10.3)
                if on["TS011"]:
                    out.append(
                        self._f(
                            rec,
                            f"/content/{i}",
                            R.UNKNOWN_BLOCK,
                            f"unknown content block type {t!r} skipped (§10.3)",
                        )
                    )
                continue
            if partial:
                continue
            if t not in allowed and on["TS102"]:
                out.append(self._f(rec, f"/content/{i}", R.ROLE_CONTENT,
                              f"{t} block not allowed in a {role} message (allowed: {', '.join(sorted(allowed))})"))  # fmt: skip
            if t in _BLOCKS_WITH_RULES:
                self._block_rules(rec, f"/content/{i}", block, known, out)
        if on["TS115"]:
            try:
                dt.datetime.fromisoformat(msg["created_at"][:-1])
            except ValueError:
                out.append(
                    self._f(
                        rec,
                        "/created_at",
                        R.CREATED_AT_REAL,
                        f"{msg['created_at']!r} is not a real date and time",
                    )
                )
        if partial:
            return
        if not content and role != "system" and on["TS101"]:
            out.append(
                self._f(
                    rec,
                    "/content",
                    R.EMPTY_CONTENT,
                    f"{role} message has no content blocks (§5.1.1)",
                )
            )
        if role == "tool":
            if len(content) != 1 and on["TS103"]:
                out.append(
                    self._f(
                        rec,
                        "/content",
                        R.TOOL_ONE_BLOCK,
                        f"tool message holds {len(content)} blocks; it must hold exactly one tool_result",
                    )
                )
            parent = meta.get("parent_tool_use_id")
            if parent is None:
                if on["TS110"]:
                    out.append(
                        self._f(
                            rec,
                            "/metadata/parent_tool_use_id",
                            R.TOOL_PARENT,
                            "tool message has no parent_tool_use_id",
                        )
                    )
            elif on["TS111"]:
                for i, block in enumerate(content):
                    if block["type"] == "tool_result" and block["tool_use_id"] != parent:
                        out.append(self._f(rec, f"/content/{i}/tool_use_id", R.TOOL_PARENT_MATCH,
                                      f"tool_result answers {block['tool_use_id']!r} but parent_tool_use_id is {parent!r}"))  # fmt: skip
        elif role == "assistant" and status == "complete":
            model, provider = meta.get("model"), meta.get("provider")
            if (model is None or provider is None) and on["TS104"]:
                missing = " and ".join(k for k in ("model", "provider") if meta.get(k) is None)
                out.append(
                    self._f(
                        rec,
                        "/metadata",
                        R.ASSISTANT_MODEL,
                        f"complete assistant message has no {missing}",
                    )
                )
            routing = meta.get("routing")
            if routing is None:
                if on["TS105"]:
                    out.append(
                        self._f(
                            rec,
                            "/metadata/routing",
                            R.ASSISTANT_ROUTING,
                            "complete assistant message has no routing record",
                        )
                    )
            elif model is not None and routing["chosen_model"] != model and on["TS107"]:
                out.append(self._f(rec, "/metadata/routing/chosen_model", R.ROUTING_MODEL,
                              f"routing.chosen_model {routing['chosen_model']!r} differs from metadata.model {model!r}"))  # fmt: skip
            if meta.get("usage") is None and on["TS106"]:
                out.append(
                    self._f(
                        rec,
                        "/metadata/usage",
                        R.ASSISTANT_USAGE,
                        "complete assistant message has no usage",
                    )
                )
        if role == "assistant" or meta.get("model") is not None:
            self._model_rules(rec, meta, out)
        if self.prices is not None and meta.get("usage") is not None:
            out.extend(self.prices.check(self, rec, meta))

    def _model_rules(self, rec: Record, meta: dict[str, Any], out: list[Finding]) -> None:
        model = meta.get("model")
        if model is None:
            return
        if not self.re_model.match(model):
            if self.on["TS108"]:
                out.append(
                    self._f(
                        rec,
                        "/metadata/model",
                        R.MODEL_ID,
                        f"model id {model!r} is not `provider:model` (e.g. anthropic:claude-sonnet-4-6)",
                    )
                )
            return
        provider = meta.get("provider")
        if provider is not None and model.split(":", 1)[0] != provider and self.on["TS109"]:
            out.append(self._f(rec, "/metadata/provider", R.MODEL_PROVIDER,
                          f"model {model!r} belongs to provider {model.split(':', 1)[0]!r}, not {provider!r}"))  # fmt: skip

    def _block_rules(
        self,
        rec: Record,
        ptr: str,
        block: dict[str, Any],
        known: frozenset[str],
        out: list[Finding],
    ) -> None:
        on = self.on
        t = block["type"]
        if t == "tool_use":
            if not self.re_tool_id.match(block["id"]) and on["TS112"]:
                out.append(
                    self._f(
                        rec,
                        ptr + "/id",
                        R.TOOL_ID_FORMAT,
                        f"tool id {block['id']!r} is not tu_<ULID>",
                    )
                )
            if self.toolset is not None:
                out.extend(self.toolset.check_use(self, rec, ptr, block))
        elif t == "tool_result":
            if not self.re_tool_id.match(block["tool_use_id"]) and on["TS112"]:
                out.append(
                    self._f(
                        rec,
                        ptr + "/tool_use_id",
                        R.TOOL_ID_FORMAT,
                        f"tool id {block['tool_use_id']!r} is not tu_<ULID>",
                    )
                )
            for j, inner in enumerate(block["content"]):
                it = inner["type"]
                if it not in known:
                    if on["TS011"]:
                        out.append(
                            self._f(
                                rec,
                                f"{ptr}/content/{j}",
                                R.UNKNOWN_BLOCK,
                                f"unknown content block type {it!r} skipped (§10.3)",
                            )
                        )
                elif it in _BLOCKS_WITH_RULES and it != "tool_result":
                    self._block_rules(rec, f"{ptr}/content/{j}", inner, known, out)
        elif t in ("image", "audio"):
            media = block["media_type"]
            if t == "image" and not media.startswith("image/") and on["TS113"]:
                out.append(
                    self._f(
                        rec,
                        ptr + "/media_type",
                        R.IMAGE_MEDIA_TYPE,
                        f"media_type {media!r} is not an image type",
                    )
                )
            source = block["source"]
            kind, data = source["kind"], source["data"]
            if kind == "file_ref" and on["TS114"]:
                problem = _file_ref_problem(data)
                if problem:
                    out.append(
                        self._f(
                            rec,
                            ptr + "/source/data",
                            R.FILE_REF_PATH,
                            f"file_ref {data!r} {problem}",
                        )
                    )
            elif kind == "base64" and on["TS116"]:
                try:
                    binascii.a2b_base64(data, strict_mode=True)
                except (binascii.Error, ValueError) as exc:
                    out.append(
                        self._f(
                            rec,
                            ptr + "/source/data",
                            R.BASE64_DATA,
                            f"{t} data is not valid base64 ({exc})",
                        )
                    )

    def _session_rules(self, rec: Record, msg: dict[str, Any], meta: dict[str, Any], out: list[Finding]) -> None:
        on = self.on
        mid: str = msg["id"]
        sid: str = msg["session_id"]
        sess = self.sessions.get(sid)
        if sess is None:
            sess = self.sessions[sid] = Session()
        if on["TS201"] and not self.re_ulid.match(mid):
            out.append(self._f(rec, "/id", R.MESSAGE_ULID, f"message id {mid!r} is not a ULID"))
        if on["TS202"]:
            if mid in self.message_ids:
                out.append(self._f(rec, "/id", R.MESSAGE_UNIQUE, f"message id {mid} appears more than once"))
            else:
                self.message_ids.add(mid)
        if sess.last_id is not None and mid <= sess.last_id and on["TS203"]:
            out.append(
                self._f(
                    rec,
                    "/id",
                    R.MESSAGE_MONOTONIC,
                    f"message id {mid} does not follow {sess.last_id} in session {sid}",
                )
            )
        created: str = msg["created_at"]
        if sess.last_created is not None and created < sess.last_created and on["TS204"]:
            out.append(
                self._f(
                    rec,
                    "/created_at",
                    R.CREATED_MONOTONIC,
                    f"created_at {created} is earlier than the previous message's {sess.last_created}",
                )
            )
        sess.last_id, sess.last_created = mid, created
        if meta.get("status", "complete") == "partial":
            return
        for i, block in enumerate(msg["content"]):
            t = block.get("type")
            if t == "tool_use":
                tid = block["id"]
                owner = self.tool_owner.get(tid)
                if owner is not None:
                    if on["TS207"]:
                        where = "this session" if owner == sid else f"session {owner}"
                        out.append(
                            self._f(
                                rec,
                                f"/content/{i}/id",
                                R.TOOL_ID_REPEATED,
                                f"tool id {tid} already used in {where}",
                            )
                        )
                    continue
                self.tool_owner[tid] = sid
                sess.open_uses[tid] = (rec.path, rec.line, rec.pointer, i)
            elif t == "tool_result":
                tid = block["tool_use_id"]
                if tid in sess.open_uses:
                    del sess.open_uses[tid]
                    sess.answered.add(tid)
                elif tid in sess.answered:
                    if on["TS206"]:
                        out.append(
                            self._f(
                                rec,
                                f"/content/{i}/tool_use_id",
                                R.RESULT_DUPLICATE,
                                f"tool_use {tid} already has a result",
                            )
                        )
                elif on["TS205"]:
                    owner = self.tool_owner.get(tid)
                    why = f"it belongs to session {owner}" if owner else "no earlier tool_use has that id"
                    out.append(
                        self._f(
                            rec,
                            f"/content/{i}/tool_use_id",
                            R.RESULT_UNPAIRED,
                            f"tool_result answers {tid} but {why}",
                        )
                    )

    # -- tool definitions -------------------------------------------------------------

    def check_tool_definition(self, rec: Record) -> Iterator[Finding]:
        tool = rec.value
        if not self.tooldef.is_valid(tool):
            if self.on["TS020"]:
                for err in self.tooldef.errors(tool):
                    yield self._f(rec, err.pointer, R.SCHEMA, err.message)
            return
        yield from definition_findings(self, rec, tool, self.tool_names)


def _file_ref_problem(data: str) -> str | None:
    """Why a file_ref path is not workspace-relative (None when it is)."""
    if data.startswith(("/", "\\", "~")) or PureWindowsPath(data).drive or PureWindowsPath(data).is_absolute():
        return "is an absolute path; file_ref paths are workspace-relative"
    parts = PurePosixPath(data.replace("\\", "/")).parts
    if ".." in parts:
        return "contains a `..` segment and could escape the workspace"
    return None
