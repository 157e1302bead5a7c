"""The rule engine of the canonical format: rules only emit, one driver selects and locates.

A rule is a plain function registered under exactly one `RuleInfo`. It receives what it
checks (a `MessageView`, a content block, a tool definition, the public `RunState`) and
an `Emit` callback, and reports with `emit(record, pointer, RULE, message)`; it never
builds a `Finding`, never decides severity and never looks at the selection. The
`Driver` is the one place where `--select/--ignore` and `--strict` are applied: it keeps
only the rules whose id is selected, so an unselected rule is never called (its work is
skipped, not just its finding), and it turns each emission into a located `Finding`
with the severity the selection gives it. This is the shape of python-jsonschema's
keyword functions, which yield errors while the validator attaches paths.

Adding a rule = its `RuleInfo` in `rules.py` (the catalogue) + one decorated function in
the module of its family (`invariants.py`, `tools.py`, `pricing.py`), whose registration
also says how the fast path proves the rule silent (`fast=`, a `FastProof`).
"""

from __future__ import annotations

import re
import struct
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from itertools import chain
from operator import lt
from typing import Any, Generic, Literal, Protocol, TypeVar

from ...core.findings import Finding, RuleInfo, Selection, Severity
from ...core.jsonio import Record


class Tools(Protocol):
    """The `--tools` definitions as rules see them (implemented by `tools.ToolSet`)."""

    @property
    def tools(self) -> dict[str, dict[str, Any]]: ...

    def validators(self, name: str) -> tuple[Any, Any, str | None]: ...


class Prices(Protocol):
    """A price table as rules see it (implemented by `pricing.PriceTable`); the rule
    families import this module, never the reverse, so these are protocols."""

    @property
    def versions(self) -> dict[str, dict[str, dict[str, Decimal]]]: ...

    def rates(self, usage: dict[str, Any], model: Any) -> dict[str, Decimal] | None: ...

    def cost(self, version: str, model: str, usage: dict[str, Any]) -> Decimal: ...

    def scaled(self, version: str, model: str) -> Any: ...


Emit = Callable[[Record, str, RuleInfo, str], None]
"""`emit(record, pointer, RULE, message)`: `pointer` is relative to the record's own."""


@dataclass(frozen=True, slots=True)
class Context:
    """What the run was given, read-only for every rule: id formats, tools, prices."""

    re_ulid: re.Pattern[str]
    re_tool_id: re.Pattern[str]
    re_model: re.Pattern[str]
    toolset: Tools | None = None
    prices: Prices | None = None


@dataclass(slots=True)
class MessageView:
    """One schema-valid message, with the fields every rule reads already picked out.

    `complete` is §5.1.5: the message invariants (§5) are validated only at
    `status: complete`; partial, cancelled and errored messages may break them.
    `known` is the set of block types the reading revision defines (others are §10.3
    unknown blocks).
    """

    rec: Record
    msg: dict[str, Any]
    meta: dict[str, Any]
    role: str
    content: list[dict[str, Any]]
    status: str
    known: frozenset[str]
    revision: str
    # object kind -> the fields the reading revision defines ("message", "metadata",
    # "usage", "routing", "source", "block:<type>"); others are additive (§10.2)
    fields: dict[str, frozenset[str]]

    @property
    def complete(self) -> bool:
        """True when the §5 invariants apply to this message: only at `status: complete`
        (§5.1.5 "Validation runs only at status: COMPLETE"); partial, cancelled and
        errored messages may break them."""
        return self.status == "complete"


@dataclass(slots=True)
class SessionFacts:
    """What the session rules (SESSION, SESSION_BLOCK, FINISH) may read of one message.

    The run splits a message into a local phase (schema, MESSAGE and BLOCK rules, which
    need the whole message) and a session phase (these facts, in input order). The
    parallel engine sends only these facts from its workers to the one process that owns
    the sessions, so a session rule reading anything else fails in every path, not only
    in the parallel one: `msg` holds `id`, `session_id`, `created_at`, `role` and
    `status` (`complete` when the message has none); `tools` holds the tool_use
    (`type`, `id`) and tool_result (`type`, `tool_use_id`) blocks with their index in
    `content`; `rec` locates the message (its `value` is None).
    """

    rec: Record
    msg: dict[str, str]
    complete: bool
    tools: list[tuple[int, dict[str, str]]]


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_NO_TIME = -(1 << 63)  # `_LAST.pack` of a session whose messages had no real created_at
_LAST = struct.Struct(">qH")  # created_at in microseconds, the length of its text in bytes


class Calls:
    """The tool calls of one session: made only when one of its messages has a tool block."""

    __slots__ = ("answered", "open_uses", "optional_uses")

    def __init__(self) -> None:
        # tool id -> (path, line, pointer of the message, block index) of uses awaiting a result
        self.open_uses: dict[str, tuple[str, int, str, int]] = {}
        self.answered: set[str] = set()
        # uses of non-complete messages (§5.1.5): a result may answer them, none is required
        self.optional_uses: set[str] = set()


class Session:
    """What the cross-message rules need to remember of one session, kept small: a run
    holds one per session id it has seen (a store of a million short sessions, a
    million of these). The last message is one `bytes` (`last`: its created_at in
    microseconds, that text and its id, in UTF-8), read back by the properties; the
    tool calls (`Calls`) are made when a message of the session has a tool block."""

    __slots__ = ("calls", "last")

    def __init__(self) -> None:
        self.last: bytes | None = None  # `_LAST` + created_at text + id (None: no message yet)
        self.calls: Calls | None = None

    @property
    def last_id(self) -> str | None:
        last = self.last
        if last is None:
            return None
        _, n = _LAST.unpack_from(last)
        return last[_LAST.size + n :].decode("utf-8", "surrogatepass")

    @property
    def last_created(self) -> str | None:
        """The text of the last real created_at (messages without one leave it)."""
        last = self.last
        if last is None or _LAST.unpack_from(last)[0] == _NO_TIME:
            return None
        n = _LAST.unpack_from(last)[1]
        return last[_LAST.size : _LAST.size + n].decode("utf-8", "surrogatepass")

    @property
    def last_created_at(self) -> datetime | None:
        """The last real created_at, parsed (so `Z` and `+00:00` compare right)."""
        last = self.last
        if last is None:
            return None
        micros = _LAST.unpack_from(last)[0]
        return None if micros == _NO_TIME else _EPOCH + micros * _US

    def take(self, mid: str, created: str, at: datetime | None) -> None:
        """The session's last message is `mid`; its created_at counts when real (`at`)."""
        if at is None:
            last = self.last
            if last is not None and _LAST.unpack_from(last)[0] != _NO_TIME:  # the time stays
                n = _LAST.size + _LAST.unpack_from(last)[1]
                self.last = last[:n] + mid.encode("utf-8", "surrogatepass")
                return
            self.last = _LAST.pack(_NO_TIME, 0) + mid.encode("utf-8", "surrogatepass")
            return
        text = created.encode("utf-8", "surrogatepass")
        # `at` is aware (the schemas' created_at ends in Z or +00:00): microseconds are exact
        self.last = _LAST.pack((at - _EPOCH) // _US, len(text)) + text + mid.encode("utf-8", "surrogatepass")

    def tool_calls(self) -> Calls:
        calls = self.calls
        if calls is None:
            calls = self.calls = Calls()
        return calls

    @property
    def open_uses(self) -> dict[str, tuple[str, int, str, int]]:
        return self.tool_calls().open_uses

    @property
    def answered(self) -> set[str]:
        return self.tool_calls().answered

    @property
    def optional_uses(self) -> set[str]:
        return self.tool_calls().optional_uses

    def _facts(self) -> tuple[Any, ...]:
        c = self.calls
        if c is None or not (c.open_uses or c.answered or c.optional_uses):
            return (self.last, {}, set(), set())
        return (self.last, c.open_uses, c.answered, c.optional_uses)

    def __eq__(self, other: object) -> bool:  # what the rules can read (no Calls = empty Calls)
        return isinstance(other, Session) and self._facts() == other._facts()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return f"Session(last_id={self.last_id!r}, last_created={self.last_created!r}, calls={self._facts()[1:]!r})"


class IdSet:
    """The message ids of a run (TS202): a set whose common case costs no hashing. Ids
    that sort after every id so far (ULIDs grow with time, so in a store written in
    order nearly all do) are appended to a sorted list; the others go to a hash set. A
    large set of fresh strings costs a hash and a cache miss per id, on every insert
    and lookup; the list costs a comparison with the last id.

    Each id keeps where it first appeared (`where`: file and line, for TS202's message),
    as one machine integer beside it: the file's number in `paths` and the line."""

    __slots__ = ("_path_no", "at", "paths", "rest", "rest_at", "seq")

    def __init__(self) -> None:
        self.seq: list[str] = []  # strictly increasing
        self.at = array("q")  # where each id of `seq` first appeared (`_loc`)
        self.rest: set[str] = set()  # each sorts before the last of `seq` (when it came)
        self.rest_at: dict[str, int] = {}  # where each id of `rest` first appeared (`_loc`)
        self.paths: list[str] = []
        self._path_no: dict[str, int] = {}

    def _loc(self, path: str, line: int) -> int:
        """`path` and `line` as one integer; -1 when they do not fit (a SQLite rowid past
        2**40 is a "line" too): the id is kept, only where it came from is not."""
        no = self._path_no.get(path)
        if no is None:
            no = self._path_no[path] = len(self.paths)
            self.paths.append(path)
        if not 0 <= line <= _LINE_MASK or no >= _MAX_FILES:
            return -1
        return no << _LINE_BITS | line

    def where(self, mid: str) -> tuple[str, int] | None:
        """The file and line where `mid` first appeared (None when it is not here; line -1
        when where it came from did not fit, `_loc`). An id after the last one (the common
        case: ULIDs in order) costs one comparison, as in `__contains__`."""
        seq = self.seq
        if not seq or mid > seq[-1]:
            return None
        loc = self.rest_at.get(mid)
        if loc is None:
            k = bisect_left(seq, mid)
            if k == len(seq) or seq[k] != mid:
                return None
            loc = self.at[k]
        if loc < 0:
            return "", -1
        return self.paths[loc >> _LINE_BITS], loc & _LINE_MASK

    def __contains__(self, mid: object) -> bool:
        seq = self.seq
        if not isinstance(mid, str) or not seq or mid > seq[-1]:
            return False
        if mid in self.rest:
            return True
        k = bisect_left(seq, mid)
        return seq[k] == mid

    def __len__(self) -> int:
        return len(self.seq) + len(self.rest)

    def __iter__(self) -> Iterator[str]:
        return chain(self.seq, self.rest)

    def __eq__(self, other: object) -> bool:  # as sets: the same ids, wherever each is kept
        return isinstance(other, IdSet) and set(self) == set(other)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a set

    def add(self, mid: str, path: str = "", line: int = 0) -> None:
        """Add `mid`, first seen at `path`:`line` (kept only when it is new)."""
        seq = self.seq
        if not seq or mid > seq[-1]:
            seq.append(mid)
            self.at.append(self._loc(path, line))
        elif mid not in self:
            self.rest.add(mid)
            self.rest_at[mid] = self._loc(path, line)

    def isdisjoint(self, ids: list[str]) -> bool:
        """True when none of `ids` is here (one comparison when all sort after the last)."""
        seq = self.seq
        if not seq or not ids or min(ids) > seq[-1]:
            return True
        return not any(map(self.__contains__, ids))

    def update(self, ids: list[str], path: str = "", first: int = 0) -> None:
        """Add `ids` (no id twice among them), on consecutive lines of `path` from `first`."""
        seq = self.seq
        if not ids:
            return
        n = len(ids)
        base = self._loc(path, first)
        if base >= 0 and first + n > _LINE_MASK:
            base = -1
        ascending = all(map(lt, ids, ids[1:]))  # in order already (ULIDs written in order): no sort
        if not seq or (ids[0] if ascending else min(ids)) > seq[-1]:
            if ascending:
                seq.extend(ids)
                self.at.extend(range(base, base + n) if base >= 0 else [-1] * n)
                return
            order = sorted(range(n), key=ids.__getitem__)
            seq.extend([ids[k] for k in order])
            self.at.extend([base + k if base >= 0 else -1 for k in order])
        else:
            for k, mid in enumerate(ids):
                self.add(mid, path, first + k)


_LINE_BITS = 40  # lines of a file: below 2**40; files of a run: below 2**23
_LINE_MASK = (1 << _LINE_BITS) - 1
_MAX_FILES = 1 << 23


@dataclass
class RunState:
    """Cross-message state of a run. Rules read it; only the driver updates it."""

    sessions: dict[str, Session] = field(default_factory=dict)
    tool_owner: dict[str, str] = field(default_factory=dict)  # tool id -> session id
    message_ids: IdSet = field(default_factory=IdSet)
    tool_names: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> first definition
    # session id -> id of its cancelled assistant message, until a user message follows it
    # (streaming §6.3, TS209); kept here, not on `Session`, so a run with no cancelled
    # message pays nothing per session and the fast path asks one empty dict
    after_cancel: dict[str, str] = field(default_factory=dict)

    def session(self, sid: str) -> Session:
        s = self.sessions.get(sid)
        if s is None:
            s = self.sessions[sid] = Session()
        return s


def commit_message(
    state: RunState, sess: Session, mid: str, created: str, at: Any, track_ids: bool, where: tuple[str, int] = ("", 0)
) -> None:
    """The session takes one message (after the session rules have seen it), found at
    `where` (file and line)."""
    if track_ids:
        state.message_ids.add(mid, *where)
    sess.take(mid, created, at)


def commit_turn(state: RunState, sid: str, mid: str, role: str, status: str) -> None:
    """The session takes a message's place in its turns (after the session rules have
    seen it): a cancelled assistant message ends its turn, and the next user message
    starts a fresh one (streaming §6.3). The next assistant message, if it comes first,
    is reported once (TS209): the ones after it belong to its turn, not the cancelled one."""
    if role == "assistant" and status == "cancelled":
        state.after_cancel[sid] = mid
    elif role in ("user", "assistant") and state.after_cancel:
        state.after_cancel.pop(sid, None)


def commit_tool_block(
    state: RunState, sess: Session, sid: str, complete: bool, use: bool, tid: str, where: tuple[str, int, str, int]
) -> None:
    """The session takes one tool_use (`use`) or tool_result block with tool id `tid`;
    `where` locates the block (path, line, record pointer, block index)."""
    if not complete and use:
        # §5.1.5: a partial/cancelled/errored call may be answered, but need not be, and
        # its id is not taken (the complete version of the message may follow)
        sess.optional_uses.add(tid)
        return
    if use:
        if tid in state.tool_owner:
            return  # a repeated id (TS207) does not reopen the call
        state.tool_owner[tid] = sid
        sess.open_uses[tid] = where
    else:
        if tid in sess.open_uses:
            del sess.open_uses[tid]
            sess.answered.add(tid)
        elif tid in sess.optional_uses:
            sess.optional_uses.discard(tid)
            sess.answered.add(tid)


MessageRule = Callable[[Context, MessageView, Emit], None]
BlockRule = Callable[[Context, MessageView, str, dict[str, Any], Emit], None]
SessionRule = Callable[[Context, SessionFacts, Session, RunState, Emit], None]
SessionBlockRule = Callable[[Context, SessionFacts, int, dict[str, str], Session, RunState, Emit], None]
DefinitionRule = Callable[[Record, dict[str, Any], RunState, Emit], None]
FinishRule = Callable[[RunState, Emit], None]

F = TypeVar("F")

FastProof = Literal["local", "format", "decode", "session", "exact"]
"""How the fast path (`fast/`) proves a rule silent on a line it clears, declared where the
rule is registered (`fast=`): `local`, a predicate of the mirror (`fast/mirror.py`:
`_local`, `_block_ok`, `_priced`, reading `on[R.RULE.id]`); `format`, a string format
checked per batch (`FastPath.checks`); `decode`, the strict typed decode itself
(`fastmodel.py`: closed objects, known blocks, plain decimal costs); `session`, the
session step's preconditions (`fast/sessions.py`); `exact`, never read on a cleared line
(tool definitions and the `--tools` file take the exact path). A rule registered with
none turns the fast path off for the runs that enable it (`FastPath.covers`)."""


@dataclass
class Family(Generic[F]):
    """Rules of one kind, each registered under one `RuleInfo` (and block types), with how
    the fast path proves it silent (`proofs`: rule id -> its `FastProof`, or None)."""

    rules: list[tuple[RuleInfo, frozenset[str], F]] = field(default_factory=list)
    proofs: dict[str, FastProof | None] = field(default_factory=dict)

    def register(
        self, info: RuleInfo, blocks: tuple[str, ...] = (), *, fast: FastProof | None = None
    ) -> Callable[[F], F]:
        def deco(fn: F) -> F:
            self.rules.append((info, frozenset(blocks), fn))
            self.proofs[info.id] = fast
            return fn

        return deco

    def enabled(self, sel: Selection) -> list[tuple[RuleInfo, frozenset[str], F]]:
        # in id order, whatever order the modules were imported in (same input, same output)
        return sorted((r for r in self.rules if sel.enabled(r[0].id)), key=lambda r: r[0].id)


MESSAGE: Family[MessageRule] = Family()
"""Rules on one schema-valid message (any status; a rule checks `view.complete` itself)."""
BLOCK: Family[BlockRule] = Family()
"""Rules on one known content block of a complete message (and blocks inside a tool_result)."""
SESSION: Family[SessionRule] = Family()
"""Rules on a message against its session's state, before the state takes the message."""
SESSION_BLOCK: Family[SessionBlockRule] = Family()
"""Rules on the tool_use/tool_result blocks of a complete message against the session."""
DEFINITION: Family[DefinitionRule] = Family()
"""Rules on one schema-valid tool definition (a record of a tools file)."""
TOOLS_FILE: Family[DefinitionRule] = Family()
"""Rules on the definitions of the `--tools` file."""
FINISH: Family[FinishRule] = Family()
"""Rules known only at end of input."""

FAMILIES: tuple[Family[Any], ...] = (MESSAGE, BLOCK, SESSION, SESSION_BLOCK, DEFINITION, TOOLS_FILE, FINISH)


def registered_rules() -> set[str]:
    """Every rule id some registered function can emit (for the catalogue test)."""
    return {info.id for fam in FAMILIES for info, _, _ in fam.rules}


def fast_covered(proof: FastProof | None = None) -> frozenset[str]:
    """The registered rules the fast path can prove silent: those whose every registration
    declares a `FastProof` (of kind `proof`, when given), read from the registrations
    now, so a rule module imported late counts too."""
    declared: dict[str, set[FastProof | None]] = {}
    for fam in FAMILIES:
        for info, _, _ in fam.rules:
            declared.setdefault(info.id, set()).add(fam.proofs.get(info.id))
    return frozenset(rid for rid, got in declared.items() if None not in got and (proof is None or proof in got))


class Driver:
    """Selection, severity and location, in one place.

    `emit` appends to `out`, which the run drains after each record; rules never see it.
    Emission re-checks the selection (a cached dict lookup), so a helper shared by two
    rules can never leak a finding of the unselected one.
    """

    def __init__(self, selection: Selection) -> None:
        self.sel = selection
        self.out: list[Finding] = []
        self._severity: dict[str, Severity] = {}  # rule id -> severity under this selection
        self.message = MESSAGE.enabled(selection)
        self.session = SESSION.enabled(selection)
        self.session_block = SESSION_BLOCK.enabled(selection)
        self.definition = DEFINITION.enabled(selection)
        self.tools_file = TOOLS_FILE.enabled(selection)
        self.finish = FINISH.enabled(selection)
        by_type: dict[str, list[BlockRule]] = {}
        for _info, types, fn in BLOCK.enabled(selection):
            for t in types:
                by_type.setdefault(t, []).append(fn)
        self.block: dict[str, list[BlockRule]] = by_type

    def enabled(self, rule_id: str) -> bool:
        return self.sel.enabled(rule_id)

    def emit(self, rec: Record, pointer: str, info: RuleInfo, message: str) -> None:
        sev = self._severity.get(info.id)
        if sev is None:
            if not self.sel.enabled(info.id):
                return  # a shared helper may emit for a rule the user ignored
            sev = self._severity[info.id] = self.sel.severity(info)
        self.out.append(Finding(rec.path, rec.line, rec.pointer + pointer, info.id, sev, message))

    def passthrough(self, finding: Finding, info: RuleInfo) -> None:
        """A finding made by the reader (TS001-TS009): selected and re-graded here too."""
        if not self.sel.enabled(finding.rule):
            return
        sev = self.sel.severity(info)
        if sev != finding.severity:
            finding = Finding(
                finding.path, finding.line, finding.pointer, finding.rule, sev, finding.message, finding.column
            )
        self.out.append(finding)

    def drain(self) -> list[Finding]:
        out, self.out = self.out, []
        return out
