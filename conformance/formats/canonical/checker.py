"""Validation of canonical messages: schema by `schema_version`, then the rules.

One `CanonicalRun` validates every canonical file of a run, so the cross-message rules
(TS2xx) see sessions that span lines and files. State is kept per session: the last
message id and timestamp, and the open tool calls. Two rules need run-wide sets (message
id uniqueness TS202, tool id repetition TS207); they cost about 100 bytes per message
and tool call, and ignoring them (`--ignore TS202,TS207`) bounds memory by the open
sessions alone.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ...core.findings import Finding, Selection
from ...core.jsonio import Record, read_json, read_jsonl, reads_as_lines
from ...core.schema_validation import SchemaError, SchemaValidator
from ...core.schemas import schema_set, versions
from ..base import FileStats, Options, ProgressHook
from . import rules as R
from .engine import (
    Context,
    Driver,
    MessageView,
    RunState,
    Session,
    SessionFacts,
    commit_message,
    commit_tool_block,
    commit_turn,
)
from .fast import FastPath
from .invariants import parse_created_at
from .pricing import load_price_table  # importing a rule family registers its rules
from .tools import load_tools

_ERRORS_KEPT = 256  # JSON texts whose schema errors are kept (`CanonicalRun._schema_errors`)
_ERRORS_TEXT = 4096  # ... each of at most this many bytes
_NESTED = frozenset({"image", "audio", "tool_use"})  # block types whose rules also run inside a tool_result


def _pattern(defs: dict[str, Any], name: str) -> re.Pattern[str]:
    # id formats come from ids.json, so the schema stays the single source of truth; its
    # patterns end in `(?![\s\S])`, which Python and ECMA-262 both read as end of input
    return re.compile(str(defs[name]["pattern"]))


PUBLISHED: tuple[str, ...] = ("v1",)
"""The canonical schema revisions of the spec as published (metis canonical-message-format
v1.1); the default reader uses these and nothing this project drafted."""


class CanonicalRun:
    """Validates canonical messages (and tool definitions) across the files of one run.

    The run reads and schema-validates; the rules live in `invariants.py`, `tools.py`
    and `pricing.py` and are driven by one `Driver` (selection, severity, location).
    """

    def __init__(self, options: Options, revisions: Sequence[str] | None = None) -> None:
        """`revisions` are the schema revisions this reader knows. The default is the spec
        as published (`PUBLISHED`, revision 1); revisions this project drafted beyond it
        (revision 2: the `audio` block, `metadata.stop_reason`) are opt-in:
        `CanonicalRun(options, revisions=["v2"])`, `turnspec validate --revision v2`."""
        self.options = options
        self.sel: Selection = options.selection
        # schema_version is the spec's major version (§10.1); additive revisions keep it
        # (§10.2), so each major is read with the newest revision declaring it
        self.revision: dict[int, str] = {}
        for rev in revisions if revisions is not None else PUBLISHED:
            if rev not in versions("canonical"):
                raise ValueError(f"unknown canonical schema revision {rev!r}")
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
        self.known_blocks: dict[int, frozenset[str]] = {}
        self.fields: dict[int, dict[str, frozenset[str]]] = {}
        for n, rev in self.revision.items():
            s = schema_set("canonical", rev)
            mapping: dict[str, str] = s["known-content-block.json"]["discriminator"]["mapping"]
            self.known_blocks[n] = frozenset(mapping)
            props = {
                "message": "message.json",
                "metadata": "message-metadata.json",
                "usage": "usage.json",
                "routing": "routing-decision-record.json",
                "source": "image-source.json",
                **{f"block:{t}": doc for t, doc in mapping.items()},
            }
            self.fields[n] = {kind: frozenset(s[doc]["properties"]) for kind, doc in props.items()}
        self.driver = Driver(self.sel)
        self.state = RunState()
        toolset = load_tools(options.tools, self.tooldef) if options.tools else None
        self.ctx = Context(
            re_ulid=_pattern(defs, "ulid"),
            re_tool_id=_pattern(defs, "tool_use_id"),
            re_model=_pattern(defs, "model_id"),
            toolset=toolset,
            prices=load_price_table(options.pricing) if options.pricing else None,
        )
        self.track_ids = self.driver.enabled(R.MESSAGE_UNIQUE.id)  # the one run-wide set (see module doc)
        self._pending: list[Finding] = []
        self._errors: dict[tuple[int, bytes], list[SchemaError]] = {}  # `_schema_errors`
        # the fast path (fast/) serves JSON Lines when it can prove every enabled rule
        # silent; Options(exact=True) or a rule it does not know keeps the exact path only
        self.fast = (
            None if options.exact or not FastPath.covers(self.driver, self.revision[self.latest]) else FastPath(self)
        )
        if toolset is not None:
            self.state.tool_names = {n: ("--tools", 0) for n in toolset.tools}
            for rec in toolset.records:
                for _info, _, fn in self.driver.tools_file:
                    fn(rec, rec.value, self.state, self.driver.emit)
            self._pending = self.driver.drain()

    def reset(self) -> None:
        """Forget every message seen so far (sessions, ids): the next message starts a new run."""
        names = self.state.tool_names
        self.state = RunState(tool_names={k: v for k, v in names.items() if v[0] == "--tools"})

    def validate(self, path: Path, stats: FileStats, progress: ProgressHook | None = None) -> Iterator[Finding]:
        jsonl = reads_as_lines(path)  # standard input: by its --stdin-filename, else by its first byte
        if jsonl and self.fast is not None:
            if self._pending:
                yield from self._pending
                self._pending = []
            yield from self.fast.validate_jsonl(path, stats, progress)
            return
        items = read_jsonl(path, max_line_bytes=self.options.max_line_bytes) if jsonl else read_json(path)
        if self._pending:
            yield from self._pending
            self._pending = []
        for item in items:
            if isinstance(item, Finding):
                self.driver.passthrough(item, R.CATALOG[item.rule])
                yield from self.driver.drain()
                continue
            stats.records += 1
            if progress is not None and item.size:
                progress(item.size)
            v = item.value
            if isinstance(v, dict) and "input_schema" in v and "role" not in v:
                yield from self.check_tool_definition(item)
            else:
                yield from self.check_message(item)

    def take_pending(self) -> list[Finding]:
        """The findings of the `--tools` file, once: the first file of the run reports them."""
        out, self._pending = self._pending, []
        return out

    def finish(self) -> Iterator[Finding]:
        for _info, _, fn in self.driver.finish:
            fn(self.state, self.driver.emit)
        yield from self.driver.drain()

    # -- messages ---------------------------------------------------------------------

    def check_message(self, rec: Record) -> list[Finding]:
        """All findings for one message (a list, not a generator: this is the hot path):
        its local phase, then its session phase."""
        found, facts = self.local(rec)
        if facts is not None:
            found += self.session(facts)
        return found

    def local(self, rec: Record) -> tuple[list[Finding], SessionFacts | None]:
        """Schema, MESSAGE and BLOCK rules of one message: they need the whole message and
        no state, so any process may run them. Returns their findings and, for a
        schema-valid message, the facts its session phase reads (None otherwise)."""
        d = self.driver
        msg = rec.value
        version = msg.get("schema_version") if isinstance(msg, dict) else None
        if type(version) is int and version not in self.validators:
            known = ", ".join(map(str, sorted(self.validators)))
            d.emit(rec, "/schema_version", R.UNKNOWN_VERSION,
                   f"schema_version {version} is not supported (this turnspec knows: {known}); upgrade turnspec or migrate the data")  # fmt: skip
            return d.drain(), None
        n = version if type(version) is int else self.latest
        validator = self.validators[n]
        if not validator.is_valid(msg):
            if d.enabled(R.SCHEMA.id):
                for err in self._schema_errors(n, rec):
                    d.emit(rec, err.pointer, R.SCHEMA, err.message)
            return d.drain(), None
        meta = msg["metadata"]
        view = MessageView(
            rec, msg, meta, msg["role"], msg["content"], meta.get("status", "complete"),
            self.known_blocks[n], self.revision[n], self.fields[n],
        )  # fmt: skip
        ctx, emit = self.ctx, d.emit
        for _info, _, fn in d.message:
            fn(ctx, view, emit)
        if view.complete and d.block:
            self._blocks(view)
        return d.drain(), facts_of(view)

    def _schema_errors(self, n: int, rec: Record) -> list[SchemaError]:
        """The schema errors of a message that schema `n` rejects. A hostile file repeats
        the same bad line (100,000 lines of `{}`): the errors of a line's JSON text are
        the same each time, so the last texts' errors are kept (`_ERRORS_KEPT` of at most
        `_ERRORS_TEXT` bytes) and a repeated line costs a lookup, not the oracle."""
        raw = rec.raw
        if rec.pointer or not raw or len(raw) > _ERRORS_TEXT:  # an element of a .json list: its text is not `raw`
            return self.validators[n].errors(rec.value)
        key = (n, raw)
        hit = self._errors.get(key)
        if hit is None:
            if len(self._errors) >= _ERRORS_KEPT:
                self._errors.clear()
            hit = self._errors[key] = self.validators[n].errors(rec.value)
        return hit

    def _blocks(self, view: MessageView) -> None:
        by_type, ctx, emit, known = self.driver.block, self.ctx, self.driver.emit, view.known
        for i, block in enumerate(view.content):
            t = block["type"]
            if t not in known:
                continue
            for fn in by_type.get(t, ()):
                fn(ctx, view, f"/content/{i}", block, emit)
            if t == "tool_result":
                for j, inner in enumerate(block["content"]):
                    it = inner["type"]
                    if it in known and it in _NESTED:
                        for fn in by_type.get(it, ()):
                            fn(ctx, view, f"/content/{i}/content/{j}", inner, emit)

    def session(self, facts: SessionFacts) -> list[Finding]:
        """SESSION and SESSION_BLOCK rules of one message against its session, then the
        session takes the message. Must run in input order, in the process that owns
        the run's state."""
        d, ctx, state, emit = self.driver, self.ctx, self.state, self.driver.emit
        msg = facts.msg
        mid = msg["id"]
        sess = state.session(msg["session_id"])
        for _info, _, fn in d.session:
            fn(ctx, facts, sess, state, emit)
        at = parse_created_at(msg["created_at"])
        commit_message(state, sess, mid, msg["created_at"], at, self.track_ids, (facts.rec.path, facts.rec.line))
        commit_turn(state, msg["session_id"], mid, msg["role"], msg["status"])
        for i, block in facts.tools:
            if facts.complete:
                for _info, _, sfn in d.session_block:
                    sfn(ctx, facts, i, block, sess, state, emit)
            _update(facts, i, block, sess, state)
        return d.drain()

    # -- tool definitions -------------------------------------------------------------

    def check_tool_definition(self, rec: Record) -> Iterator[Finding]:
        tool = rec.value
        d = self.driver
        if not self.tooldef.is_valid(tool):
            if d.enabled(R.SCHEMA.id):
                for err in self.tooldef.errors(tool):
                    d.emit(rec, err.pointer, R.SCHEMA, err.message)
            yield from d.drain()
            return
        for _info, _, fn in d.definition:
            fn(rec, tool, self.state, d.emit)
        self.state.tool_names.setdefault(tool["name"], (rec.path, rec.line))
        yield from d.drain()


def facts_of(view: MessageView) -> SessionFacts:
    """The projection of a schema-valid message that its session phase reads."""
    msg = view.msg
    tools: list[tuple[int, dict[str, str]]] = []
    for i, block in enumerate(view.content):
        t = block.get("type")
        if t == "tool_use":
            tools.append((i, {"type": t, "id": block["id"]}))
        elif t == "tool_result":
            tools.append((i, {"type": t, "tool_use_id": block["tool_use_id"]}))
    rec = view.rec
    return SessionFacts(
        Record(rec.path, rec.line, rec.pointer, None, 0),
        {
            "id": msg["id"],
            "session_id": msg["session_id"],
            "created_at": msg["created_at"],
            "role": view.role,
            "status": view.status,
        },
        view.complete,
        tools,
    )


def _update(view: SessionFacts, i: int, block: dict[str, str], sess: Session, state: RunState) -> None:
    """The session takes one tool_use/tool_result block (after the rules have seen it)."""
    use = block["type"] == "tool_use"
    tid = block["id"] if use else block["tool_use_id"]
    where = (view.rec.path, view.rec.line, view.rec.pointer, i)
    commit_tool_block(state, sess, view.msg["session_id"], view.complete, use, tid, where)
