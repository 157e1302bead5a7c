"""Validation of geppetto Turn YAML: the reader's findings, the JSON Schema, then the rules.

A geppetto file holds one Turn (a complete snapshot of the context, seed 004 "How Turns
Grow Across a Conversation"), so every rule works inside one file; nothing is carried
across files of a run. Rules run even when the schema already reported a problem, and are
written to skip values of the wrong type, so one file shows all its problems at once.

The older llm-runner fixture wrapper (`version: 1`, `turn:`, `followups:`) is recognised
by its `turn` key: its turn is checked like a Turn file and each follow-up like a block.
Tool pairing covers the seed turn only, since the runner interleaves generated blocks
with the follow-ups.

A YAML file is read whole (YAML has no record boundary to stream on), so
`Options.max_line_bytes`, the bound on the largest unit read at once, bounds its size.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.convertkit import short
from ...core.findings import Finding, RuleInfo, Selection
from ...core.schema_validation import SchemaValidator
from ...core.schemas import SchemaSet, schema_set
from ..base import FileStats, Options, ProgressHook
from . import rules as R
from .yamlio import Document, escape, plain, read_yaml

VERSION = "v1"
RESULT_KEY = "geppetto.inference_result@v1"


@dataclass(frozen=True)
class Vocabulary:
    """What the schemas name: kinds, fields, payload keys, typed keys per store."""

    kinds: tuple[str, ...]
    turn_fields: frozenset[str]
    block_fields: frozenset[str]
    fixture_fields: frozenset[str]
    payload_keys: dict[str, frozenset[str]]
    store_keys: dict[str, frozenset[str]]
    key_form: re.Pattern[str]

    @classmethod
    def of(cls, s: SchemaSet) -> Vocabulary:
        kinds = tuple(s["block-kind.json"]["enum"])
        mapping: dict[str, str] = s["block.json"]["discriminator"]["mapping"]
        payload_keys: dict[str, frozenset[str]] = {}
        block_fields: set[str] = set()
        for kind, file in mapping.items():
            props = s[file]["properties"]
            block_fields |= set(props)
            schema = props["payload"]
            branches = schema.get("anyOf", [schema])
            payload_keys[kind] = frozenset(k for b in branches for k in b.get("properties", {}))
        stores = {
            "Turn.Metadata": frozenset(s["turn-metadata.json"]["properties"]),
            "Turn.Data": frozenset(s["turn-data.json"]["properties"]),
            "Block.Metadata": frozenset(s["block-metadata.json"]["properties"]),
        }
        pattern = str(s["ids.json"]["$defs"]["key_id"]["pattern"]).replace("$", r"\Z")
        return cls(
            kinds=kinds,
            turn_fields=frozenset(s["turn.json"]["properties"]),
            block_fields=frozenset(block_fields),
            fixture_fields=frozenset(s["fixture.json"]["properties"]),
            payload_keys=payload_keys,
            store_keys=stores,
            key_form=re.compile(pattern),
        )

    def read_kind(self, raw: object) -> str | None:
        """The kind geppetto reads for `raw` (trimmed, lower-cased; unknown -> other)."""
        if not isinstance(raw, str):
            return None
        norm = raw.strip().lower()
        return norm if norm in self.kinds else "other"


def is_fixture(value: object) -> bool:
    """The llm-runner fixture wrapper: a `turn` mapping and no `blocks` of its own."""
    return isinstance(value, dict) and "turn" in value and "blocks" not in value


@dataclass
class _Tools:
    calls: dict[str, str] = field(default_factory=dict)  # id -> pointer of the tool_call
    answered: set[str] = field(default_factory=set)


SESSION_KEY = "geppetto.session_id@v1"  # KeyTurnMetaSessionID (seed 004 "Turn Metadata")


class GeppettoRun:
    """Validates geppetto Turn YAML files (and llm-runner fixtures)."""

    def __init__(self, options: Options) -> None:
        self.options = options
        self.sel: Selection = options.selection
        s = schema_set("geppetto", VERSION)
        self.vocab = Vocabulary.of(s)
        self.turn_schema = SchemaValidator(s, "turn.json")
        self.fixture_schema = SchemaValidator(s, "fixture.json")
        self.on = {info.id: self.sel.enabled(info.id) for info in R.CATALOG}
        # session id -> (turn file, its block ids) of every turn file of the run, for GE306
        self.sessions: dict[str, list[tuple[Document, list[str]]]] = {}

    # -- plumbing ---------------------------------------------------------------------

    def finding(self, doc: Document, ptr: str, info: RuleInfo, message: str) -> Finding:
        return Finding(doc.path, doc.line(ptr), ptr, info.id, self.sel.severity(info), message)

    def validate(self, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
        for item in read_yaml(path, max_bytes=self.options.max_line_bytes):
            if isinstance(item, Finding):
                if self.on[item.rule]:
                    sev = self.sel.severity(R.CATALOG[item.rule])
                    yield (
                        item
                        if sev == item.severity
                        else Finding(item.path, item.line, item.pointer, item.rule, sev, item.message, item.column)
                    )
                continue
            yield from self.check_document(item, stats)
        if progress is not None:
            with contextlib.suppress(OSError):
                progress(path.stat().st_size)

    def finish(self) -> Iterator[Finding]:
        """GE306: the turn files of one session form one history, each extending the previous.

        The order comes from the data, not from file names or sizes: geppetto writes no
        timestamp on a turn and its ids are random UUIDs, but a session's next turn is a
        clone of the latest plus new blocks (seed 004 "How Turns Grow Across a
        Conversation"), so turn B follows turn A when A's block ids are a prefix of B's
        (by id: middleware may edit a block's content, not replace the history). Each turn's
        predecessor is the longest turn it extends; the session's history is the longest
        chain of such links; every turn off that chain (a fork, or a turn extending none of
        the others) is reported where it leaves the history.
        """
        if not self.on["GE306"]:
            return
        for sid, turns in self.sessions.items():
            yield from self._session_growth(sid, turns)

    def _session_growth(self, sid: str, turns: list[tuple[Document, list[str]]]) -> Iterator[Finding]:
        # (blocks, path) breaks ties only: identical snapshots, and equally long chains.
        order = sorted(range(len(turns)), key=lambda i: (len(turns[i][1]), turns[i][0].path))
        rank = {i: pos for pos, i in enumerate(order)}
        parent: dict[int, int | None] = {}
        depth: dict[int, int] = {}
        root: dict[int, int] = {}
        # (length, hash of the block ids) -> earlier turns with exactly those ids: each turn
        # finds its longest earlier prefix in time linear in its block count, not in the
        # number of turns (hash hits are compared, so a collision never links two turns)
        seen: dict[tuple[int, int], list[int]] = {}
        for i in order:
            ids = turns[i][1]
            hashes = [0]
            for bid in ids:
                hashes.append(hash((hashes[-1], bid)))
            up: int | None = None
            for k in range(len(ids), -1, -1):
                # the latest earlier turn holding exactly these k ids (ties: order)
                up = next((j for j in reversed(seen.get((k, hashes[k]), [])) if turns[j][1] == ids[:k]), None)
                if up is not None:
                    break
            parent[i] = up
            depth[i] = 1 + (depth[up] if up is not None else 0)
            root[i] = root[up] if up is not None else i
            seen.setdefault((len(ids), hashes[-1]), []).append(i)
        # the longest chain; among equally long ones, the one starting with the shortest
        # turn (the session's first prompt), then the one ending with the most blocks
        tip = max(order, key=lambda i: (depth[i], -rank[root[i]], rank[i]))
        chain: list[int] = []
        node: int | None = tip
        while node is not None:
            chain.append(node)
            node = parent[node]
        chain.reverse()
        on_chain = set(chain)
        history = " -> ".join(turns[i][0].path for i in chain)
        tip_ids = turns[tip][1]
        for i in order:
            if i in on_chain:
                continue
            doc, ids = turns[i]
            # every chain turn is a prefix of the tip, so a turn shares with chain turn j
            # min(its common prefix with the tip, len(j)) blocks: the first chain turn at
            # least that long is the one it leaves the history at
            at = next(
                (k for k, (a, b) in enumerate(zip(ids, tip_ids, strict=False)) if a != b), min(len(ids), len(tip_ids))
            )
            best = next(j for j in chain if len(turns[j][1]) >= at)
            yield self.finding(
                doc,
                f"/blocks/{at}" if at < len(ids) else "/blocks",
                R.SESSION_GROWTH,
                f"session {sid!r}: this turn is not on the session's history ({history}, ordered by which "
                f"turn extends which): it shares its first {at} block(s) with {turns[best][0].path} and "
                f"differs from block {at} on",
            )

    # -- documents --------------------------------------------------------------------

    def check_document(self, doc: Document, stats: FileStats | None = None) -> Iterator[Finding]:
        value = doc.value
        if is_fixture(value):
            if stats is not None:
                stats.extra["document"] = "llm-runner fixture"
            yield from self._schema(doc, self.fixture_schema, self._normalized_fixture(value))
            yield from self._fields(doc, value, "", self.vocab.fixture_fields, "fixture")
            yield from self._version(doc, value, "")
            turn = value["turn"]
            yield from self.check_turn(doc, turn, "/turn", stats)
            followups = value.get("followups")
            if isinstance(followups, list):
                ids: dict[str, str] = {}
                for i, block in enumerate(followups):
                    yield from self.check_block(doc, block, f"/followups/{i}", ids)
                if stats is not None:
                    stats.records += len(followups)
            return
        yield from self._schema(doc, self.turn_schema, self._normalized_turn(value))
        yield from self.check_turn(doc, value, "", stats)

    def _schema(self, doc: Document, validator: SchemaValidator, value: Any) -> Iterator[Finding]:
        value = plain(value)  # a !!binary scalar is a string to the schema
        if validator.is_valid(value) or not self.on["GE020"]:
            return
        for err in validator.errors(value):
            yield self.finding(doc, err.pointer, R.SCHEMA, err.message)

    def _normalized_blocks(self, blocks: Any) -> Any:
        """Blocks as geppetto reads them: kinds trimmed, lower-cased, unknown -> `other`.

        The schema describes what geppetto writes; the reader's tolerance of other
        spellings is reported by GE011, and the block is validated as the kind read.
        """
        if not isinstance(blocks, list):
            return blocks
        out = []
        for b in blocks:
            if isinstance(b, dict):
                kind = self.vocab.read_kind(b.get("kind"))
                if kind is not None and kind != b.get("kind"):
                    b = {**b, "kind": kind}
            out.append(b)
        return out

    def _normalized_turn(self, turn: Any) -> Any:
        if isinstance(turn, dict) and "blocks" in turn:
            return {**turn, "blocks": self._normalized_blocks(turn["blocks"])}
        return turn

    def _normalized_fixture(self, fx: dict[str, Any]) -> dict[str, Any]:
        out = {**fx, "turn": self._normalized_turn(fx["turn"])}
        if "followups" in fx:
            out["followups"] = self._normalized_blocks(fx["followups"])
        return out

    def _fields(
        self, doc: Document, obj: dict[str, Any], ptr: str, known: frozenset[str], what: str
    ) -> Iterator[Finding]:
        if not self.on["GE010"]:
            return
        for k in obj:
            if k not in known:
                yield self.finding(
                    doc,
                    f"{ptr}/{escape(k)}",
                    R.UNKNOWN_FIELD,
                    f"{what} field `{k}` is ignored by geppetto's serde (known: {', '.join(sorted(known))})",
                )

    def _version(self, doc: Document, obj: dict[str, Any], ptr: str) -> Iterator[Finding]:
        v = obj.get("version")
        if "version" in obj and not (type(v) is int and v == 1) and self.on["GE012"]:
            yield self.finding(
                doc,
                f"{ptr}/version",
                R.UNKNOWN_VERSION,
                f"version {short(v)} is not 1, the only version documented; geppetto's serde ignores the field",
            )

    # -- turns ------------------------------------------------------------------------

    def check_turn(self, doc: Document, turn: Any, ptr: str, stats: FileStats | None = None) -> Iterator[Finding]:
        if not isinstance(turn, dict):
            return
        on = self.on
        yield from self._fields(doc, turn, ptr, self.vocab.turn_fields, "turn")
        yield from self._version(doc, turn, ptr)
        yield from self._keys(doc, turn.get("metadata"), f"{ptr}/metadata", "Turn.Metadata")
        yield from self._deprecated_keys(doc, turn.get("metadata"), f"{ptr}/metadata")
        yield from self._keys(doc, turn.get("data"), f"{ptr}/data", "Turn.Data")
        blocks = turn.get("blocks")
        if not isinstance(blocks, list):
            return
        if stats is not None:
            stats.records += len(blocks)
            meta = turn.get("metadata")
            sid = meta.get(SESSION_KEY) if isinstance(meta, dict) else None
            bids = [b["id"] for b in blocks if isinstance(b, dict) and isinstance(b.get("id"), str)]
            if isinstance(sid, str) and sid and len(bids) == len(blocks):
                self.sessions.setdefault(sid, []).append((doc, bids))
        ids: dict[str, str] = {}
        tools = _Tools()
        all_calls = {
            b["payload"]["id"]
            for b in blocks
            if isinstance(b, dict) and self.vocab.read_kind(b.get("kind")) == "tool_call"
            and isinstance(b.get("payload"), dict) and isinstance(b["payload"].get("id"), str)
        }  # fmt: skip
        for i, block in enumerate(blocks):
            bptr = f"{ptr}/blocks/{i}"
            yield from self.check_block(doc, block, bptr, ids)
            yield from self._pairing(doc, block, bptr, tools, all_calls)
        if on["GE304"]:
            for tid, cptr in tools.calls.items():
                if tid not in tools.answered:
                    name = blocks[int(cptr.rsplit("/", 1)[1])]["payload"].get("name")
                    yield self.finding(
                        doc,
                        f"{cptr}/payload/id",
                        R.CALL_PENDING,
                        f"tool_call {tid!r} ({name}) is pending: no tool_use block has its id",
                    )
        if on["GE305"]:
            yield from self._finish_class(doc, turn, ptr, tools)

    def _finish_class(self, doc: Document, turn: dict[str, Any], ptr: str, tools: _Tools) -> Iterator[Finding]:
        meta = turn.get("metadata")
        result = meta.get(RESULT_KEY) if isinstance(meta, dict) else None
        fc = result.get("finish_class") if isinstance(result, dict) else None
        pending = [t for t in tools.calls if t not in tools.answered]
        where = f"{ptr}/metadata/{escape(RESULT_KEY)}/finish_class"
        if fc == "tool_calls_pending" and not pending:
            yield self.finding(
                doc,
                where,
                R.FINISH_CLASS,
                "finish_class is tool_calls_pending but no tool_call of the turn is pending",
            )
        elif fc == "completed" and pending:
            yield self.finding(
                doc,
                where,
                R.FINISH_CLASS,
                f"finish_class is completed but {len(pending)} tool_call(s) are pending: "
                + ", ".join(map(repr, pending)),
            )

    def _pairing(self, doc: Document, block: Any, ptr: str, tools: _Tools, all_calls: set[str]) -> Iterator[Finding]:
        if not isinstance(block, dict) or not isinstance(block.get("payload"), dict):
            return
        kind = self.vocab.read_kind(block.get("kind"))
        tid = block["payload"].get("id")
        if not isinstance(tid, str) or not tid or kind not in ("tool_call", "tool_use"):
            return
        on = self.on
        if kind == "tool_call":
            if tid in tools.calls:
                if on["GE302"]:
                    yield self.finding(
                        doc,
                        f"{ptr}/payload/id",
                        R.CALL_ID_REPEATED,
                        f"tool call id {tid!r} already used by the tool_call at {tools.calls[tid] or '/'}",
                    )
                return
            tools.calls[tid] = ptr
        elif tid in tools.answered:
            if on["GE303"]:
                yield self.finding(
                    doc,
                    f"{ptr}/payload/id",
                    R.RESULT_DUPLICATE,
                    f"tool_call {tid!r} already has a tool_use result",
                )
        elif tid in tools.calls:
            tools.answered.add(tid)
        elif on["GE301"]:
            why = "its tool_call comes later in the turn" if tid in all_calls else "no tool_call has that id"
            yield self.finding(doc, f"{ptr}/payload/id", R.RESULT_UNPAIRED, f"tool_use answers {tid!r} but {why}")

    # -- blocks -----------------------------------------------------------------------

    def check_block(self, doc: Document, block: Any, ptr: str, ids: dict[str, str]) -> Iterator[Finding]:
        if not isinstance(block, dict):
            return
        on = self.on
        yield from self._fields(doc, block, ptr, self.vocab.block_fields, "block")
        raw = block.get("kind")
        kind = self.vocab.read_kind(raw)
        if kind is not None and raw != kind and on["GE011"]:
            assert isinstance(raw, str)
            if raw.strip().lower() == kind:
                msg = f"kind {raw!r} is read as {kind!r}; geppetto writes {kind!r}"
            else:
                known = ", ".join(self.vocab.kinds)
                msg = f"unknown kind {raw!r}: geppetto reads it as 'other' (known: {known})"
            yield self.finding(doc, f"{ptr}/kind", R.UNKNOWN_KIND, msg)
        bid = block.get("id")
        if isinstance(bid, str) and bid:
            if bid in ids:
                if on["GE104"]:
                    yield self.finding(
                        doc,
                        f"{ptr}/id",
                        R.BLOCK_ID_REPEATED,
                        f"block id {bid!r} already used by the block at {ids[bid]}",
                    )
            else:
                ids[bid] = ptr
        role = block.get("role", "")
        if kind is not None and isinstance(role, str):
            yield from self._role(doc, ptr, kind, role)
        payload = block.get("payload")
        if kind is not None and kind != "other" and isinstance(payload, dict) and on["GE103"]:
            keys = self.vocab.payload_keys[kind]
            for k in payload:
                if k not in keys:
                    yield self.finding(
                        doc,
                        f"{ptr}/payload/{escape(k)}",
                        R.UNKNOWN_PAYLOAD_KEY,
                        f"payload key `{k}` is not known for {kind} blocks (known: {', '.join(sorted(keys))})",
                    )
        meta = block.get("metadata")
        yield from self._keys(doc, meta, f"{ptr}/metadata", "Block.Metadata")
        if isinstance(meta, dict) and RESULT_KEY in meta and on["GE203"]:
            generated = kind in R.GENERATED_KINDS or (kind == "other" and role == "assistant")
            if not generated:
                yield self.finding(
                    doc,
                    f"{ptr}/metadata/{escape(RESULT_KEY)}",
                    R.RESULT_ON_INPUT,
                    f"a {kind} block carries {RESULT_KEY}; geppetto projects it only onto blocks the model generated",
                )

    def _role(self, doc: Document, ptr: str, kind: str, role: str) -> Iterator[Finding]:
        if kind == "other":
            if role.strip() not in R.OTHER_ROLES and self.on["GE105"]:
                yield self.finding(
                    doc,
                    f"{ptr}/role",
                    R.OTHER_ROLE,
                    f"other block with role {role!r}: Block.Role is one of 'user', 'assistant', 'system' or none",
                )
            return
        allowed = R.ALLOWED_ROLES.get(kind)
        if allowed is None:
            return
        r = role.strip()
        if not r:
            if "" not in allowed and self.on["GE102"]:
                yield self.finding(
                    doc,
                    ptr,
                    R.ROLE_MISSING,
                    f"{kind} block has no role (geppetto's builders write role {next(iter(allowed))!r})",
                )
            return
        if r not in allowed and self.on["GE101"]:
            ok = " or ".join(repr(a) for a in sorted(allowed) if a) + (" or none" if "" in allowed else "")
            yield self.finding(
                doc,
                f"{ptr}/role",
                R.ROLE_KIND,
                f"role {role!r} contradicts kind {kind!r} (expected {ok})",
            )

    def _deprecated_keys(self, doc: Document, meta: Any, ptr: str) -> Iterator[Finding]:
        if not isinstance(meta, dict) or not self.on["GE204"]:
            return
        for key in meta:
            field_name = R.DEPRECATED_TURN_KEYS.get(key)
            if field_name is not None:
                yield self.finding(
                    doc,
                    f"{ptr}/{escape(key)}",
                    R.DEPRECATED_TURN_KEY,
                    f"{key!r} is a compatibility scalar geppetto no longer mirrors onto turn metadata; "
                    f"{RESULT_KEY} ({field_name}) is the only canonical inference metadata",
                )

    def _keys(self, doc: Document, store: Any, ptr: str, family: str) -> Iterator[Finding]:
        if not isinstance(store, dict):
            return
        on = self.on
        form = self.vocab.key_form
        for key in store:
            kptr = f"{ptr}/{escape(key)}"
            if not form.match(key):
                if on["GE201"]:
                    yield self.finding(
                        doc,
                        kptr,
                        R.KEY_FORM,
                        f"{family} key {key!r} is not `namespace.name@vN`; geppetto's typed keys never read it",
                    )
                continue
            if key.startswith("geppetto.") and key not in self.vocab.store_keys[family] and on["GE202"]:
                elsewhere = [f for f, keys in self.vocab.store_keys.items() if key in keys and f != family]
                hint = f" (it is a {elsewhere[0]} key)" if elsewhere else ""
                yield self.finding(
                    doc,
                    kptr,
                    R.UNKNOWN_GEPPETTO_KEY,
                    f"{key!r} is not a {family} key geppetto defines{hint}",
                )
