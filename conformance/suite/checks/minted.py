"""Comparing two parses up to a consistent renaming of the tool ids an adapter minted.

Canonical §6.2 and contract §4.1.1 ask for a per-session bidirectional map: "When parsing
wire → canonical, look up or create the canonical id". Where the API issued no id for a
call (Gemini, older Ollama), nothing on the wire names it, so an honest adapter may create a
fresh canonical id on every parse: two parses of the same bytes then agree up to a renaming
of those minted ids. The renaming must be a bijection applied consistently to
`tool_use.id`, `tool_result.tool_use_id` and the streamed events' `tool_use_id` (else a
result would answer another call), and an id the wire issued is looked up, never renamed.
Determinism across independent parses is a separate, advisory check (TC306).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ...adapters.protocol import Adapter
from ...wire.api import WireApi
from .. import rules as R
from ..outcome import AdapterUnderTest, Outcome
from .common import outcome

# the contract sentences the checks using this module enforce (quoted in failure reasons)
LOOK_UP = 'contract §4.1.1: "When parsing wire → canonical, look up or create the canonical id"'
BIDIRECTIONAL = (
    'canonical §6.2: "Adapters maintain a per-session bidirectional map between canonical tool ids '
    'and provider-issued tool ids"'
)
ID_KEYS = ("tool_use_id", "parent_tool_use_id")  # keys whose string value names a call


@dataclass(frozen=True)
class WireIds:
    """What recorded bytes say about their tool ids, read through the API's record."""

    mintable: bool  # the API need not issue ids (its record says so): an adapter mints the rest
    issued: frozenset[str] = frozenset()  # ids the wire carries on its calls

    @classmethod
    def of(cls, api: WireApi | None, bodies: Iterable[Any]) -> WireIds:
        """`bodies`: one decoded response, or the decoded events of a stream, read through
        `api`, the adapter's record, else the recording's (`Interaction.wire`). With one that
        says the API issues every id, nothing may be renamed. Without any record the suite
        cannot tell a wire id from a minted one, so it holds none as issued: a missing record
        never judges minted ids as provider ids (README allows minting where the API issues
        none; TC001 fails the missing record itself)."""
        if api is None:
            return cls(True)
        if api.tool_ids.issued_by_provider:
            return cls(False)
        found = {str(x.value) for b in bodies if isinstance(b, dict) for x in api.probes.response_tool_ids(b)}
        return cls(True, frozenset(found))


def fixed_ids(a: Adapter, session_id: str, wire: WireIds) -> Callable[[str], bool]:
    """Whether a canonical id of this session is wire-issued (must match exactly): always
    when no id may be minted, else when the session map ties it to an id the wire carries."""
    m = a.tool_id_map(session_id)

    def fixed(cid: str) -> bool:
        return not wire.mintable or m.get_provider(cid) in wire.issued

    return fixed


def lost_wire_ids(a: Adapter, session_id: str, wire: WireIds, canonical_ids: Iterable[str]) -> list[str]:
    """Ids the wire issued that no parsed call maps to in the session map: the adapter altered
    (or dropped) them, so the provider would not get its own id back."""
    m = a.tool_id_map(session_id)
    mapped = {m.get_provider(c) for c in canonical_ids}
    return sorted(w for w in wire.issued if w not in mapped)


@dataclass
class Renaming:
    """How the tool ids of one parse map onto another's, and what keeps it from being a
    consistent renaming of minted ids (each problem quotes the sentence it breaks)."""

    pairs: dict[str, str] = field(default_factory=dict)  # id in the first -> id in the second
    problems: list[str] = field(default_factory=list)

    @property
    def renamed(self) -> dict[str, str]:
        """The ids that differ between the two parses (minted afresh by the second)."""
        return {x: y for x, y in self.pairs.items() if x != y}

    def apply(self, value: Any) -> Any:
        """`value` with its tool ids renamed as the second parse spells them."""
        return _walk(value, lambda s: self.pairs.get(s, s))


def _is_call(d: dict[str, Any]) -> bool:
    return d.get("type") == "tool_use" and isinstance(d.get("id"), str)


def _walk(value: Any, f: Callable[[str], str]) -> Any:
    """A copy of `value` with `f` applied to every tool-id slot, visited in a fixed order
    (list order, then dict keys sorted), so two parses line up slot by slot."""
    if isinstance(value, list):
        return [_walk(v, f) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for k in sorted(value):
        v = value[k]
        if isinstance(v, str) and ((k == "id" and _is_call(value)) or k in ID_KEYS):
            out[k] = f(v)
        else:
            out[k] = _walk(v, f)
    return {k: out[k] for k in value}


def slots(value: Any) -> list[str]:
    """Every tool id `value` holds, in the order `_walk` visits them."""
    seen: list[str] = []

    def note(s: str) -> str:
        seen.append(s)
        return s

    _walk(value, note)
    return seen


def shared_call_ids(value: Any) -> list[str]:
    """Ids two calls share within one list (content blocks or stream events): two calls of
    one parse with one id means a result cannot say which call it answers."""
    out: list[str] = []
    if isinstance(value, list):
        ids = [
            str(v.get("id") if _is_call(v) else v.get("tool_use_id"))
            for v in value
            if isinstance(v, dict) and (_is_call(v) or v.get("type") == "tool_use_start")
        ]
        out += sorted({i for i in ids if ids.count(i) > 1})
        for v in value:
            out += shared_call_ids(v)
    elif isinstance(value, dict):
        for v in value.values():
            out += shared_call_ids(v)
    return out


def match_ids(first: Any, second: Any, fixed: Callable[[str], bool]) -> Renaming:
    """How `first`'s tool ids become `second`'s: a bijection, applied at every slot, that
    renames only minted ids (`fixed(id)` false for both sides). `apply(first) == second`
    then says the two parses agree up to that renaming."""
    r = Renaming()
    for name, v in (("first", first), ("second", second)):
        shared = shared_call_ids(v)
        if shared:
            r.problems.append(f"two calls of the {name} parse share id {shared[0]} ({BIDIRECTIONAL})")
    xs, ys = slots(first), slots(second)
    if len(xs) != len(ys):
        r.problems.append(f"{len(xs)} tool-id slots in one parse, {len(ys)} in the other")
        return r
    back: dict[str, str] = {}
    for x, y in zip(xs, ys, strict=True):
        if r.pairs.setdefault(x, y) != y:
            r.problems.append(
                f"{x} is {r.pairs[x]} at one place and {y} at another of the other parse: a tool_result "
                f"answers a different call than on the wire ({BIDIRECTIONAL})"
            )
            break
        if back.setdefault(y, x) != x:
            r.problems.append(f"{back[y]} and {x} both become {y}: the renaming is not a bijection ({BIDIRECTIONAL})")
            break
        if x != y and (fixed(x) or fixed(y)):
            r.problems.append(f"the wire issued this call's id, yet one parse gives {x} and the other {y} ({LOOK_UP})")
            break
    return r


def deterministic(s: AdapterUnderTest, label: str, renamed: dict[str, str], how: str) -> Outcome:
    """TC306 (advisory): the same bytes parsed again keep their canonical ids. Canonical
    §6.2 asks only for a bijective per-session map, so fresh ids for calls the API issued no
    id for are allowed; deterministic ones let a harness re-parse a stored reply and keep
    the ids its history already holds."""
    first = next(iter(renamed.items()), None)
    why = (
        ""
        if first is None
        else f"{how} minted other ids for {len(renamed)} call(s) the API issued no id for ({first[0]} -> "
        f"{first[1]}); allowed (§6.2 asks a per-session bijective map, not determinism), but a "
        "re-parsed reply no longer matches the ids its history holds"
    )
    return outcome(R.TOOL_ID_DETERMINISTIC, s, "fail" if renamed else "pass", label, why)
