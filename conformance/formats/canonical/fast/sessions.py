"""Session batching of the fast path: what the local steps make of cleared lines
(`SessionItem`, `Cleared`, `Batch` and its `Pairs`), what they check within a batch
(`order`, `pair_tools`), and the session step that meets them with the run state in input
order (`SessionStep`, a mixin of `FastPath`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import le, lt, ne
from typing import Any

from ....core.findings import Finding
from ....core.jsonio import Record
from ..engine import RunState, Session, SessionFacts, commit_message, commit_tool_block, commit_turn
from ..invariants import parse_created_at
from .compiled import function as _compiled
from .run import Run

# `pair_tools_py` compiled, or None
_PAIR_TOOLS = _compiled("pair_tools")


@dataclass(slots=True)
class SessionItem:
    """What the session phase reads of one cleared message (the per-record view)."""

    line: int
    id: str
    session_id: str
    created_at: str
    at: Any  # the parsed created_at (a datetime)
    complete: bool
    tools: list[tuple[int, bool, str]]  # (block index, is a tool_use, tool id) in block order
    role: str
    status: str  # `complete` when the message has none
    size: int = 0  # bytes of the line, newline included (the record's size)


@dataclass(slots=True)
class Cleared:
    """Consecutive lines the fast path cleared in a run with no session rule: the session
    step has nothing to check or remember of them, only to count them."""

    count: int
    size: int  # their bytes, newlines included


@dataclass(slots=True)
class Batch:
    """Consecutive cleared *complete* messages, lines `first` to `first + len(ids) - 1`,
    column by column: the session step checks and commits them together (`session_batch`)
    where one message at a time (`SessionItem`) would cost a Python object and a call each.

    What the session rules would check *within* the batch is checked by the local step
    (`order`), so `--jobs` workers do it and the parent only meets the batch with the
    run state: `cuts` are the indices where a run of messages of one session begins (a
    session may have several runs: sessions written at once interleave), and `ordered`
    says no id repeats and within each session ids increase and `created_at` does not
    go back."""

    first: int
    ids: list[str]
    sids: list[str]
    created: Sequence[str]  # a list, or strings of one width joined (`parallel.chunks.Joined`)
    ats: list[Any] | None  # the parsed created_at of each (None: parse when needed; no message is unreal)
    tools: Mapping[int, list[tuple[int, bool, str]]]  # index in the batch -> its tool blocks (those with some)
    roles: Sequence[str]  # the role of each, or its initial (`ROLES`: a worker sends initials)
    size: int  # their bytes, newlines included
    cuts: list[int]
    ordered: bool
    pairs: Pairs | None = None  # the tool blocks paired within the batch (`pair_tools`; None: irregular)

    def at(self, k: int) -> Any:
        """The parsed `created_at` of message `k`."""
        return self.ats[k] if self.ats is not None else parse_created_at(self.created[k])

    def item(self, k: int) -> SessionItem:
        """Message `k` of the batch as a `SessionItem` (its size is counted with the batch)."""
        role = self.roles[k]
        return SessionItem(
            self.first + k,
            self.ids[k],
            self.sids[k],
            self.created[k],
            self.at(k),
            True,
            self.tools.get(k, []),
            ROLES.get(role, role),
            "complete",
        )


ROLES = {"u": "user", "a": "assistant", "t": "tool", "s": "system"}
"""The roles (§4.1) by their initial, as `Batch.roles` may hold them."""


@dataclass(slots=True)
class Pairs:
    """The tool blocks of a `Batch` as the tool rules (TS205-TS207) would meet them one
    message at a time, worked out within the batch by the local step (`pair_tools`), so
    the session step only meets them with the run state (`FastPath._pairs_ok`) and
    commits them column-wise: a result answering a call of the same batch needs nothing
    of the run state but that the call's id is new."""

    uses: list[str]  # every tool_use id, in order
    use_at: list[int]  # the batch index of each one's message
    outside: list[tuple[int, str]]  # (batch index, tool id): results answering a call before the batch
    inside: dict[str, list[str]]  # session id -> tool ids of the calls answered within the batch
    still_open: list[tuple[int, int, str]]  # (batch index, block index, tool id): calls left unanswered


def pair_tools(tools: dict[int, list[tuple[int, bool, str]]], sids: list[str]) -> Pairs | None:
    """`pair_tools_py`, compiled where it was built (`compiled`, `_walk.c`)."""
    if _PAIR_TOOLS is None:
        return pair_tools_py(tools, sids)
    got = _PAIR_TOOLS(tools, sids)
    return None if got is None else Pairs(*got)


def pair_tools_py(tools: dict[int, list[tuple[int, bool, str]]], sids: list[str]) -> Pairs | None:
    """The `Pairs` of a batch's tool blocks (`Batch.tools`, in message order), or None when
    they are irregular within the batch (a call id twice, a result twice, a result for a
    call of another session): the session step then goes message by message. Results
    not answering a call of the batch are `outside`: the session step finds their calls
    open in the run state, or goes message by message."""
    uses: list[str] = []
    use_at: list[int] = []
    outside: list[tuple[int, str]] = []
    inside: dict[str, list[str]] = {}
    open_at: dict[str, tuple[int, int]] = {}  # call id -> (batch index, block index), unanswered so far
    called: set[str] = set()
    answered: set[str] = set()
    # blocks of one message meet the rules in order too (the exact session phase commits
    # each before the next): a call and its result in one message pair as in two
    for j, blocks in tools.items():
        for i, use, tid in blocks:
            if use:
                if tid in called:
                    return None
                called.add(tid)
                open_at[tid] = (j, i)
                uses.append(tid)
                use_at.append(j)
                continue
            if tid in answered:
                return None  # a second result (so no result finds its call of this batch answered)
            answered.add(tid)
            at = open_at.pop(tid, None)
            if at is None:
                outside.append((j, tid))
            elif sids[at[0]] != sids[j]:
                return None  # a call of another session: not open in this one
            else:
                got = inside.get(sids[j])
                if got is None:
                    inside[sids[j]] = [tid]
                else:
                    got.append(tid)
    still_open = [(j, i, tid) for tid, (j, i) in open_at.items()]
    return Pairs(uses, use_at, outside, inside, still_open)


def order(ids: list[str], sids: list[str], ats: list[Any]) -> tuple[list[int], bool]:
    """`Batch.cuts` and `Batch.ordered` of these columns (none of `ats` is None)."""
    n = len(ids)
    cuts = list(compress(range(1, n), map(ne, sids, sids[1:])))
    if all(map(lt, ids, ids[1:])) and all(map(le, ats, ats[1:])):
        return cuts, True  # in order over the batch (ULIDs of one clock): so within each session, and no id twice
    if len(set(ids)) != n:
        return cuts, False
    last: dict[str, int] = {}  # session id -> the batch index of its latest message so far
    for j, sid in enumerate(sids):
        k = last.get(sid)
        if k is not None and not (ids[k] < ids[j] and ats[k] <= ats[j]):
            return cuts, False
        last[sid] = j
    return cuts, True


Step = Finding | SessionItem | Cleared | Batch | tuple[int, bytes, bytes]
"""What the local steps make of lines: a framing finding (not yet through the driver),
cleared messages (a `Batch` of consecutive complete ones, a `SessionItem` for one
alone, or, with no session rule, a `Cleared` run of lines), or
`(line, raw, data)`: a framed line the fast path could not clear, for the exact path."""


def item_facts(path: str, item: SessionItem) -> SessionFacts:
    """The exact session phase's view of a cleared message (what `facts_of` makes of it)."""
    tools: list[tuple[int, dict[str, str]]] = [
        (i, {"type": "tool_use", "id": tid} if use else {"type": "tool_result", "tool_use_id": tid})
        for i, use, tid in item.tools
    ]
    msg = {
        "id": item.id,
        "session_id": item.session_id,
        "created_at": item.created_at,
        "role": item.role,
        "status": item.status,
    }
    return SessionFacts(Record(path, item.line, "", None, 0), msg, item.complete, tools)


def _firsts(heads: list[int], run_sids: list[str]) -> list[int]:
    """The batch index of each session's first message, in order, from the runs' starts
    (`heads`) and their sessions (`run_sids`): the heads themselves when each session has
    one run."""
    first = dict(zip(reversed(run_sids), reversed(heads), strict=True))  # the earliest run wins
    return heads if len(first) == len(heads) else sorted(first.values())


def _tools_ok(state: RunState, sess: Session | None, tools: list[tuple[int, bool, str]]) -> bool:
    """True when no tool rule (TS205-TS207) may report on the tool blocks of a complete
    message in session `sess` (None: a session not seen yet), in order."""
    seen: set[str] = set()
    for _i, use, tid in tools:
        if use:
            if tid in state.tool_owner or tid in seen:
                return False
        elif sess is None or tid not in sess.open_uses or tid in seen:
            return False
        seen.add(tid)
    return True


class SessionStep:
    """The session step of cleared messages (`FastPath` sets what it reads)."""

    run: Run
    cleared: int  # messages cleared so far (the rest took the exact path)
    session_rules: bool  # the run has a session rule

    def session_batch(self, path: str, batch: Batch) -> list[Finding]:
        """The session step of a `Batch`: what `session` (or, where it refuses, the exact
        session phase) does with its messages one by one, with the common case, a prefix
        that commits whole, checked and committed column-wise (`_bulk`)."""
        k = self._bulk(path, batch)
        self.cleared += k
        out: list[Finding] = []
        for j in range(k, len(batch.ids)):
            item = batch.item(j)
            if self.session(path, item):
                self.cleared += 1
            else:
                out.extend(self.run.session(item_facts(path, item)))
        return out

    def _bulk(self, path: str, batch: Batch) -> int:
        """Commit the longest prefix of `batch` that `session` would commit message by
        message, when the column checks prove it; return its length (0: none proven).

        The message rules (TS202 unique ids, TS203/TS204 order within a session) read
        and write only `message_ids` and the sessions' last id and time; the tool rules
        (TS205-TS207) only the tool ids. The batch's own order was checked by the local
        step (`order`); here its ids meet the run's, and each session's first message
        the session's last. The tool blocks, paired within the batch by the local step
        (`pair_tools`), meet the run state at once (`_pairs_ok`) and are committed in
        bulk (`_commit_pairs`); when they are irregular or do not meet it, they are
        checked message by message in order (`_tools_one_by_one`, committing as
        `session` does), and the messages before the first whose tools fail are
        committed at the end; the sessions are made in order of first appearance, as
        one by one. Sessions written at once interleave: each is checked at its first
        message of the batch and takes its last. A batch holds complete messages only,
        so it neither ends a turn nor, but in a session after a cancelled message
        (`RunState.after_cancel`, then 0), starts one (`commit_turn`)."""
        state = self.run.state
        ids, sids = batch.ids, batch.sids
        n = len(ids)
        if state.after_cancel and not state.after_cancel.keys().isdisjoint(sids):
            return 0  # a session after a cancelled message (TS209): its turns go one by one
        heads = [0, *batch.cuts]  # where each run of one session begins
        run_sids = list(map(sids.__getitem__, heads))
        firsts = _firsts(heads, run_sids)
        if self.session_rules:
            if not batch.ordered or not state.message_ids.isdisjoint(ids):
                return 0
            sessions = state.sessions
            for s in firsts:
                sess = sessions.get(sids[s])
                if sess is not None:
                    if sess.last_id is not None and ids[s] <= sess.last_id:
                        return 0
                    if sess.last_created_at is not None and batch.at(s) < sess.last_created_at:
                        return 0
        done = n
        pairs = batch.pairs
        if self.session_rules and pairs is not None and self._pairs_ok(batch, pairs):
            self._commit_pairs(path, batch, pairs, firsts)
        else:
            done = self._tools_one_by_one(path, batch, firsts)
        if done and self.run.track_ids:
            state.message_ids.update(ids if done == n else ids[:done], path, batch.first)
        # each session takes the last of its committed messages (the ids went in above),
        # in order of first appearance (so the sessions are made in that order): where its
        # last run ends (the next run's start), its last message is just before
        if done == n:
            ends = dict(zip(run_sids, [*batch.cuts, n], strict=True))
        else:
            ends = dict(zip(sids[:done], range(1, done + 1), strict=True))
        created = batch.created
        for sid, end in ends.items():
            last = end - 1
            commit_message(state, state.session(sid), ids[last], created[last], batch.at(last), False)
        return done

    def _pairs_ok(self, batch: Batch, pairs: Pairs) -> bool:
        """True when no tool rule may report on the batch's tool blocks, given that none
        may within the batch (`pair_tools`): its call ids are new to the run, and each
        result answering a call before the batch finds that call open in its session."""
        state = self.run.state
        if pairs.uses and not state.tool_owner.keys().isdisjoint(pairs.uses):
            return False
        sessions, sids = state.sessions, batch.sids
        for j, tid in pairs.outside:
            sess = sessions.get(sids[j])
            if sess is None or tid not in sess.open_uses:
                return False
        return True

    def _commit_pairs(self, path: str, batch: Batch, pairs: Pairs, starts: list[int]) -> None:
        """What `commit_tool_block` does with each tool block of the batch in order, in
        bulk: the calls take their ids, the results close their calls, and the calls
        left unanswered stay open (in call order, as one by one)."""
        state = self.run.state
        sids = batch.sids
        for s in starts:  # the sessions are made in order of first appearance
            state.session(sids[s])
        sessions = state.sessions
        if pairs.uses:
            state.tool_owner.update(zip(pairs.uses, map(sids.__getitem__, pairs.use_at), strict=True))
        for j, tid in pairs.outside:
            sess = sessions[sids[j]]
            del sess.open_uses[tid]
            sess.answered.add(tid)
        for sid, tids in pairs.inside.items():
            sessions[sid].answered.update(tids)
        for j, i, tid in pairs.still_open:
            sessions[sids[j]].open_uses[tid] = (path, batch.first + j, "", i)

    def _tools_one_by_one(self, path: str, batch: Batch, starts: list[int]) -> int:
        """The tool blocks of the batch checked and committed message by message, as
        `session` does; return the index of the first message whose tools fail (the
        batch's length when none does)."""
        state = self.run.state
        sids = batch.sids
        made = 0  # the runs whose session exists (made in order)
        for j, tools in batch.tools.items():
            while made < len(starts) and starts[made] <= j:
                state.session(sids[starts[made]])
                made += 1
            sid = sids[j]
            sess = state.sessions[sid]
            if self.session_rules and not _tools_ok(state, sess, tools):
                return j
            line = batch.first + j
            for i, use, tid in tools:
                commit_tool_block(state, sess, sid, True, use, tid, (path, line, "", i))
        return len(sids)

    def session(self, path: str, item: SessionItem) -> bool:
        """Commit `item` to the run state when no session rule can report on it; else False
        (nothing committed: the exact path takes the message whole)."""
        run = self.run
        state = run.state
        if self.session_rules:
            mid = item.id
            if mid in state.message_ids:  # the id format (TS201) was checked per batch
                return False
            sess = state.sessions.get(item.session_id)
            if sess is not None:
                if sess.last_id is not None and mid <= sess.last_id:
                    return False
                if item.at is not None and sess.last_created_at is not None and item.at < sess.last_created_at:
                    return False
            if item.complete and item.tools and not _tools_ok(state, sess, item.tools):
                return False
            if item.role == "assistant" and item.session_id in state.after_cancel:
                return False  # TS209 may report
        sess = state.session(item.session_id)
        commit_message(state, sess, item.id, item.created_at, item.at, run.track_ids, (path, item.line))
        commit_turn(state, item.session_id, item.id, item.role, item.status)
        for i, use, tid in item.tools:
            commit_tool_block(state, sess, item.session_id, item.complete, use, tid, (path, item.line, "", i))
        return True
