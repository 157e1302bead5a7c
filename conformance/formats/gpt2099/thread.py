"""Threads as gpt2099 sees them: turns linked by `continues`, headish lookup, resolution.

This is a library (the validator's rules, `turnspec gpt2099 resolve` and the converters all
use it). Semantics follow gpt2099's gpt/ctx.nu:

- a headish matching `(?i)^[0-9a-z]{25}$` is a SCRU128 turn id; anything else is a bookmark,
  resolved to the *last* turn whose `meta.head` equals it (`headish-to-id`);
- `continues` is a string or a list; gpt2099's add-turn resolves bookmarks to ids before
  storing, so a bookmark stored in `continues` is resolved the way it was meant when the
  turn was written: the last turn *before* this one with that head;
- resolving walks `continues` breadth-first from the head, prepending each turn it visits
  (`id-to-turns`), so a turn reachable twice (a diamond) appears twice, exactly as in
  gpt2099; the options of the visited frames are deep-merged oldest to newest with
  Nushell's `merge deep` (records recurse, lists of records merge element-wise, anything
  else is replaced by the newer value, null included).

Where gpt2099 would loop forever (a `continues` cycle) or never end, `resolve` raises
`ResolveError` instead.
"""

from __future__ import annotations

import enum
import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import Any

from . import inherited

SCRU128 = re.compile(r"[0-9A-Za-z]{25}\Z")
SCRU128_MAX = int("f5lxx1zz5pnorynqglhzmsp33", 36)
MAX_VISITS = 100_000
"""Turns one resolution may visit (diamonds repeat turns, as in gpt2099); beyond, refuse."""


class Shape(enum.StrEnum):
    """The on-disk shapes of the gpt2099 format (see the package docstring)."""

    FRAMES = "frames"
    RECORDS = "records"
    WINDOW = "context-window"
    RESPONSE = "response"


class ResolveError(Exception):
    """A headish or thread that cannot be resolved (message says why)."""


def is_scru128(s: str) -> bool:
    """gpt2099's test (ctx.nu `is-scru128`): 25 base-36 characters, any case."""
    return bool(SCRU128.match(s))


def scru128_value(s: str) -> int | None:
    """The 128-bit value of a SCRU128 id, or None when it is not one (too large included)."""
    if not is_scru128(s):
        return None
    v = int(s, 36)  # base 36 is case-insensitive, as SCRU128 text is
    return v if v <= SCRU128_MAX else None


def scru128_millis(s: str) -> int | None:
    """Unix milliseconds encoded in a SCRU128 id (its top 48 bits)."""
    v = scru128_value(s)
    return None if v is None else v >> 80


@dataclass
class Turn:
    """One turn of a thread, from any shape. `index` is its position in the file."""

    index: int
    id: str | None
    role: str
    content: list[Any]
    delta: dict[str, Any]
    cache: bool
    head: str | None = None
    continues: list[str] = field(default_factory=list)
    parents: list[int] = field(default_factory=list)
    path: str = ""
    line: int | None = None
    pointer: str = ""
    valid: bool = True
    source: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str | None:
        return self.id.lower() if self.id is not None else None

    def message(self) -> dict[str, Any]:
        """The normalized message record (ctx.nu `frame-to-turn`): cache only when true."""
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.cache:
            out["cache"] = True
        return out


@dataclass(frozen=True)
class LinkProblem:
    turn: int
    position: int
    target: str
    kind: str  # "unresolved" or "not_earlier"
    message: str


@dataclass
class Thread:
    """Turns in file order, indexed by id (case-insensitive) and bookmark."""

    shape: Shape
    turns: list[Turn]
    options: dict[str, Any] | None = None
    by_id: dict[str, int] = field(default_factory=dict)
    heads: dict[str, list[int]] = field(default_factory=dict)
    linked: bool = False
    _cycles: list[list[int]] | None = None

    def __post_init__(self) -> None:
        for t in self.turns:
            if t.key is not None:
                self.by_id.setdefault(t.key, t.index)
            if t.head is not None:
                self.heads.setdefault(t.head, []).append(t.index)

    @property
    def linear(self) -> bool:
        """Shapes whose turns form one chain in file order (records, a context window)."""
        return self.shape is not Shape.FRAMES

    def link(self) -> list[LinkProblem]:
        """Resolve every `continues` target into `parents`; report what does not resolve."""
        problems: list[LinkProblem] = []
        for t in self.turns:
            if self.linear:
                t.parents = [t.index - 1] if t.index > 0 else []
                continue
            t.parents = []
            for pos, target in enumerate(t.continues):
                j, problem = self._target(t, pos, target)
                if problem is not None:
                    problems.append(problem)
                if j is not None:
                    t.parents.append(j)
        self._cycles = None
        self.linked = True
        return problems

    def _target(self, t: Turn, pos: int, target: str) -> tuple[int | None, LinkProblem | None]:
        if is_scru128(target):
            j = self.by_id.get(target.lower())
            if j is None:
                return None, LinkProblem(
                    t.index, pos, target, "unresolved", f"continues {target!r}: no turn has this id"
                )
            if j >= t.index:
                what = "this turn itself" if j == t.index else "a later turn"
                return j, LinkProblem(t.index, pos, target, "not_earlier", f"continues {target!r}, which is {what}")
            return j, None
        marks = self.heads.get(target, [])
        earlier = [j for j in marks if j < t.index]
        if earlier:
            return earlier[-1], None
        if marks:
            return marks[-1], LinkProblem(
                t.index,
                pos,
                target,
                "not_earlier",
                f"continues bookmark {target!r}, which only later turns carry as head",
            )
        return None, LinkProblem(
            t.index,
            pos,
            target,
            "unresolved",
            f"continues {target!r}: neither a SCRU128 turn id nor a bookmark (head) of any turn",
        )

    def components(self) -> list[int]:
        """Per turn, the lowest turn index of its connected part of the `continues` graph
        (branches included): turns with the same value belong to one conversation."""
        root = list(range(len(self.turns)))

        def find(i: int) -> int:
            while root[i] != i:
                root[i] = root[root[i]]
                i = root[i]
            return i

        for t in self.turns:
            for p in t.parents:
                a, b = find(t.index), find(p)
                if a != b:
                    root[max(a, b)] = min(a, b)
        return [find(i) for i in range(len(self.turns))]

    def cycles(self) -> list[list[int]]:
        """Each `continues` cycle once, as the list of turn indices on it."""
        if not self.linked:
            self.link()
        if self._cycles is None:
            self._cycles = self._find_cycles()
        return self._cycles

    def _find_cycles(self) -> list[list[int]]:
        """One cycle per strongly connected component that has one (a group of turns each
        reachable from every other through `continues`, or a turn continuing itself): from
        its earliest turn back to it. Linear in turns and links: every back link of a depth
        -first walk would be a cycle of its own, as long as the walk is deep (quadratic in
        time, memory and report for a thread whose every turn also continues the last one)."""
        out: list[list[int]] = []
        for comp in self._components_strong():
            members = set(comp)
            start = min(comp)
            if len(comp) > 1 or start in self.turns[start].parents:
                out.append(self._cycle_from(start, members))
        return sorted(out, key=lambda c: c[0])

    def _components_strong(self) -> list[list[int]]:
        """Tarjan's strongly connected components over `parents` links, without recursion."""
        n = len(self.turns)
        index, low, on = [-1] * n, [0] * n, [False] * n
        stack: list[int] = []
        out: list[list[int]] = []
        counter = 0
        for root in range(n):
            if index[root] != -1:
                continue
            index[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on[root] = True
            work: list[tuple[int, Iterator[int]]] = [(root, iter(self.turns[root].parents))]
            while work:
                v, it = work[-1]
                w = next(it, None)
                if w is None:
                    work.pop()
                    if work:
                        u = work[-1][0]
                        low[u] = min(low[u], low[v])
                    if low[v] == index[v]:
                        comp: list[int] = []
                        while True:
                            x = stack.pop()
                            on[x] = False
                            comp.append(x)
                            if x == v:
                                break
                        out.append(comp)
                elif index[w] == -1:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on[w] = True
                    work.append((w, iter(self.turns[w].parents)))
                elif on[w]:
                    low[v] = min(low[v], index[w])
        return out

    def _cycle_from(self, start: int, members: set[int]) -> list[int]:
        """A shortest cycle from `start` back to it through `continues`, inside `members`."""
        prev: dict[int, int] = {start: start}
        todo: deque[int] = deque([start])
        while todo:
            cur = todo.popleft()
            for nxt in self.turns[cur].parents:
                if nxt == start:
                    path = [cur]
                    while path[-1] != start:
                        path.append(prev[path[-1]])
                    return path[::-1]
                if nxt in members and nxt not in prev:
                    prev[nxt] = cur
                    todo.append(nxt)
        return [start]  # not reached: `members` is strongly connected

    # -- headish and resolution -------------------------------------------------------

    def headish_to_index(self, headish: str) -> int:
        """ctx.nu `headish-to-id`, against this file instead of the store."""
        if not headish.strip():
            raise ResolveError(f"an empty headish ({headish!r}) names no turn and no bookmark")
        if is_scru128(headish):
            j = self.by_id.get(headish.lower())
            if j is None:
                raise ResolveError(f"no turn with id {headish!r} in this thread")
            return j
        marks = self.heads.get(headish)
        if not marks:
            raise ResolveError(f"Headish {headish!r} isn't an SCRU128 or valid bookmark")
        return marks[-1]

    def chain(self, starts: list[int]) -> list[int]:
        """Turn indices of a context window, oldest first, as ctx.nu `id-to-turns` walks them."""
        if not self.linked:
            self.link()
        cycles = [] if self.linear else self.cycles()
        if cycles and any(set(c) & self._reachable(starts) for c in cycles):
            raise ResolveError("the continues links from this head form a cycle; gpt2099 would never finish")
        out: deque[int] = deque()
        stack: deque[int] = deque(starts)
        while stack:
            cur = stack.popleft()
            out.appendleft(cur)
            if len(out) > MAX_VISITS:
                raise ResolveError(f"resolution visits more than {MAX_VISITS} turns (repeated diamonds); refusing")
            stack.extend(self.turns[cur].parents)
        return list(out)

    def _reachable(self, starts: list[int]) -> set[int]:
        seen: set[int] = set()
        todo = list(starts)
        while todo:
            cur = todo.pop()
            if cur in seen:
                continue
            seen.add(cur)
            todo.extend(self.turns[cur].parents)
        return seen

    def resolve_indices(self, starts: list[int]) -> dict[str, Any]:
        order = self.chain(starts)
        options: dict[str, Any] | None = None
        for i in order:
            d = self.turns[i].delta
            options = d if options is None else deep_merge(options, d)
        return {"messages": [self.turns[i].message() for i in order], "options": options}

    def resolve(self, headishes: list[str] | None = None) -> dict[str, Any]:
        """The context window `{messages, options}` for the headish(es) (default: last turn)."""
        if self.shape in (Shape.WINDOW, Shape.RESPONSE):
            raise ResolveError(f"a {self.shape} holds no thread to resolve")
        if not self.turns:
            raise ResolveError("the thread has no turns")
        starts = [self.headish_to_index(h) for h in headishes] if headishes else [len(self.turns) - 1]
        return self.resolve_indices(starts)

    def leaves(self) -> list[int]:
        """Turns no other turn continues: the heads a user could call."""
        if not self.linked:
            self.link()
        continued = {p for t in self.turns for p in t.parents}
        return [t.index for t in self.turns if t.index not in continued]

    def is_ancestor(self, j: int, i: int) -> bool:
        """Is turn `j` in turn `i`'s context? Walks only turns from `j` up to `i`."""
        if not self.linked:
            self.link()
        if self.linear:
            return j < i
        seen: set[int] = set()
        todo = [p for p in self.turns[i].parents if p >= j]
        while todo:
            cur = todo.pop()
            if cur == j:
                return True
            if cur in seen:
                continue
            seen.add(cur)
            todo.extend(p for p in self.turns[cur].parents if p >= j)
        return False


def deep_merge(old: Any, new: Any) -> Any:
    """Nushell `merge deep` with its default `table` list strategy.

    Records merge key by key, recursing; two lists of records merge element-wise (the
    longer list's tail is kept); any other value, null included, is replaced by `new`.
    """
    if isinstance(old, dict) and isinstance(new, dict):
        out = dict(old)
        for k, v in new.items():
            out[k] = deep_merge(out[k], v) if k in out else v
        return out
    if isinstance(old, list) and isinstance(new, list) and _records(old) and _records(new):
        return [b if a is None else a if b is None else deep_merge(a, b) for a, b in zip_longest(old, new)]
    return new


def _records(items: list[Any]) -> bool:
    return all(isinstance(x, dict) for x in items)


# -- tool pairing ---------------------------------------------------------------------


@dataclass(frozen=True)
class Pairing:
    """Where a tool_result's tool_use is: (turn, block) or None when it has none."""

    result: tuple[int, int]
    use: tuple[int, int] | None
    by: str  # "id" or "name"


def pair_tool_results(thread: Thread) -> list[Pairing]:
    """Pair each tool_result with its tool_use in the result's context.

    With `tool_use_id`, the nearest earlier tool_use with that id; without one (older
    gpt2099 threads store no ids), the nearest earlier tool_use of the same `name` not
    already answered by name. "Nearest" is the latest in the file among the result's own
    earlier blocks and its ancestors. Candidates are found through an index, and the
    ancestor test only walks the turns between the tool_use and the result, so a long
    thread costs about what its tool calls span.
    """
    by_id: dict[Any, list[tuple[int, int]]] = {}
    by_name: dict[Any, list[tuple[int, int]]] = {}
    for t in thread.turns:
        if not t.valid:
            continue
        for b, blk in enumerate(t.content):
            if isinstance(blk, dict) and blk.get("type") == "tool_use":
                if isinstance(blk.get("id"), str):
                    by_id.setdefault(blk["id"], []).append((t.index, b))
                by_name.setdefault(blk.get("name"), []).append((t.index, b))
    out: list[Pairing] = []
    claimed: set[tuple[int, int]] = set()
    for t in thread.turns:
        if not t.valid:
            continue
        for b, blk in enumerate(t.content):
            if not isinstance(blk, dict) or blk.get("type") != "tool_result":
                continue
            want_id = blk.get("tool_use_id")
            by = "id" if want_id is not None else "name"
            pool = by_id.get(want_id, []) if by == "id" else by_name.get(blk.get("name"), [])
            found: tuple[int, int] | None = None
            for cand in reversed(pool):
                ti, bi = cand
                if (ti, bi) >= (t.index, b) or (by == "name" and cand in claimed):
                    continue
                if ti == t.index or thread.is_ancestor(ti, t.index):
                    found = cand
                    break
            if found is not None and by == "name":
                claimed.add(found)
            out.append(Pairing((t.index, b), found, by))
    return out


def options_of(meta: dict[str, Any]) -> dict[str, Any]:
    """A frame meta's options delta (see `inherited`)."""
    return inherited.delta(meta)
