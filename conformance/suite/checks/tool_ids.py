"""TC302-TC305: tool ids restored, injective, within the provider's rules, paired."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from typing import Any

from ...adapters.protocol import Adapter, WireRequest, WireResponse, capabilities_of
from ...wire import facts as wire_facts
from .. import rules as R
from ..capture import capture_warnings
from ..outcome import AdapterUnderTest, Outcome
from ..scripts import answered, conversation, tools_named
from .common import (
    Env,
    body_text,
    check,
    crash,
    ctx_for,
    opts,
    outcome,
    parse_response,
    read_back,
    render,
    session_for,
    wire_api_of,
    wire_name,
)
from .minted import BIDIRECTIONAL, LOOK_UP, WireIds, deterministic, fixed_ids, lost_wire_ids, match_ids

# contract §4.1.1, the sentence TC302 enforces
LOOK_UP_PROVIDER = 'contract §4.1.1: "when serializing canonical → wire, look up the provider id"'
# the sentences TC304 enforces across replay: a map per provider, ids generated for it
OWN_IDS = (
    'contract §4.1.1: "look up the provider id (or generate if first use of this canonical id with this '
    'provider)"; §6.2: "Adapters maintain a per-session bidirectional map between canonical tool ids and '
    'provider-issued tool ids"'
)
# ids other providers issued (or other adapters keep), `{j}` the call's position: very long
# (past Chat's 40 and Responses' 64 characters), a gateway's `call_id|item id` composite,
# non-ASCII. A replayed history carries them in other adapters' `provider_raw` entries and
# tool-id maps, never in the target's own
FOREIGN_IDS = (
    ("long", "call_{j}" + "Zx9" * 40),
    ("composite", "call_abc{j}|fc_123"),
    ("non-ASCII", "appel_{j}_outil_é_工具"),
)
FOREIGN_ADAPTER = "x-turnspec-foreign-adapter"  # a name no adapter has, beside the peers


@check(
    R.TOOL_ID_RESTORED,
    R.TOOL_ID_INJECTIVE,
    R.TOOL_ID_RULES,
    R.TOOL_ID_PAIRED,
    R.TOOL_ID_CANONICAL,
    R.TOOL_ID_DETERMINISTIC,
)
def tool_ids(env: Env) -> Iterator[Outcome]:
    """TC302-TC306. Troubleshooting: a TC302/TC303 failure quotes the contract sentence it
    breaks; ids the API issued must map to one canonical id per session, minted ones may
    differ between parses (TC306 only advises) but must rename consistently."""
    for s in env.subjects:
        a = s.adapter
        if not capabilities_of(a).get("supports_tools"):
            for rule in (
                R.TOOL_ID_RESTORED,
                R.TOOL_ID_INJECTIVE,
                R.TOOL_ID_RULES,
                R.TOOL_ID_PAIRED,
                R.TOOL_ID_DETERMINISTIC,
            ):
                yield outcome(rule, s, "skip", "-", "supports_tools is false")
            continue
        yield from _script_ids(s)
        yield from _foreign_ids(env, s)
        yield from _recorded_ids(env, s)
        yield from _replies_distinct(env, s)


def _script_ids(s: AdapterUnderTest) -> Iterator[Outcome]:
    a = s.adapter
    api = wire_api_of(a)
    msgs, tools = conversation(a.provider)
    sid = msgs[0]["session_id"]
    cids = [b["id"] for m in msgs for b in m["content"] if b["type"] == "tool_use"]
    try:
        with capture_warnings():
            first = render(a, msgs, tools, opts(a))
            second = render(a, copy.deepcopy(msgs), tools, opts(a))
    except Exception as exc:
        yield outcome(R.TOOL_ID_RULES, s, "fail", "script", crash(exc))
        return
    m = a.tool_id_map(sid)
    pids = [m.get_provider(c) for c in cids]
    text = body_text(first.body)
    problems = []
    for c, p in zip(cids, pids, strict=True):
        if p is None:
            problems.append(f"{c} has no provider id in the session map after to_wire")
            continue
        if not a.provider_tool_id.match(p):
            problems.append(f"{p!r} does not match the adapter's own provider_tool_id")
        if api is not None and not api.tool_ids.accepts(p):
            problems.append(f"{p!r} is not a tool id {api.title} accepts ({api.name} record)")
    if len(set(pids)) != len(pids):
        problems.append(f"two canonical ids got the same provider id: {pids}")
    yield outcome(R.TOOL_ID_RULES, s, "fail" if problems else "pass", "script", "; ".join(problems[:3]))
    # TC303: stable across calls and injective
    inj = []
    if body_text(second.body) != text:
        inj.append("serializing the same conversation twice gave different wire bodies")
    pairs = m.pairs()
    if len({c for c, _ in pairs}) != len(pairs) or len({p for _, p in pairs}) != len(pairs):
        inj.append(f"map is not injective: {pairs}")
    yield outcome(R.TOOL_ID_INJECTIVE, s, "fail" if inj else "pass", "script", "; ".join(inj))
    # TC305: use and result carry the same id
    paired = []
    for c, p in zip(cids, pids, strict=True):
        if p is not None and text.count(body_text(p)) < 2:
            paired.append(
                f"provider id {p} of {c} appears {text.count(body_text(p))} time(s) on the wire, want use + result"
            )
    facts = wire_facts.inspect(api, first.body) if api is not None else None
    if facts is not None and facts.unpaired_results:
        paired.append(f"tool results answer ids no earlier call carries: {facts.unpaired_results}")
    try:
        back = read_back(a, first, sid)
    except Exception as exc:
        paired.append(crash(exc))
    else:
        if back is not None:
            got_uses = [b.get("id") for mm in back.messages for b in mm["content"] if b.get("type") == "tool_use"]
            got_results = [
                b.get("tool_use_id") for mm in back.messages for b in mm["content"] if b.get("type") == "tool_result"
            ]
            if got_uses != cids or got_results != cids:
                paired.append(f"read back: uses {got_uses}, results {got_results}, want {cids} for both")
    yield outcome(R.TOOL_ID_PAIRED, s, "fail" if paired else "pass", "script", "; ".join(paired[:3]))


def _with_foreign_ids(msgs: list[Any], ids: dict[str, str], names: list[str]) -> list[Any]:
    """The history with `ids` (canonical -> foreign provider id) in each of `names`'s
    `provider_raw` entries of the messages that carry those calls (as the item and as a map,
    the shapes adapters keep them in)."""
    out = copy.deepcopy(msgs)
    for m in out:
        calls = {str(i): ids[b["id"]] for i, b in enumerate(m["content"]) if b.get("type") == "tool_use"}
        if not calls:
            continue
        meta = m.setdefault("metadata", {})
        raw = dict(meta.get("provider_raw") or {})
        for name in names:
            raw[name] = {
                "items": {i: {"item": {"type": "function_call", "id": f, "call_id": f}} for i, f in calls.items()},
                "tool_ids": {c: ids[c] for c in ids if c in {b.get("id") for b in m["content"]}},
            }
        meta["provider_raw"] = raw
    return out


def _foreign_ids(env: Env, s: AdapterUnderTest) -> Iterator[Outcome]:
    """TC304 across replay: a history another provider produced, whose calls carry that
    provider's ids (long, composite, non-ASCII) in other adapters' `provider_raw` entries and
    tool-id maps. What this adapter renders must still satisfy its API's tool-id rule (the
    record's `tool_ids`): ids from another provider's map are not this one's to copy."""
    a = s.adapter
    api = wire_api_of(a)
    label = "replay with foreign tool ids"
    if api is None:
        yield outcome(R.TOOL_ID_RULES, s, "skip", label, f"no WireApi record named {a.wire_api!r}")
        return
    if api.tool_ids.pattern is None and api.tool_ids.max_length is None:
        why = f"{api.title}'s docs set no rule on tool ids (its record's tool_ids): no foreign id can break one"
        yield outcome(R.TOOL_ID_RULES, s, "skip", label, why)
        return
    peers = [p for p in env.peers if p.name != a.name]
    names = [FOREIGN_ADAPTER, *(p.name for p in peers)]
    source = "anthropic" if a.provider != "anthropic" else "openai"
    for kind, template in FOREIGN_IDS:
        msgs, tools = conversation(source)
        sid = msgs[0]["session_id"]
        cids = [b["id"] for m in msgs for b in m["content"] if b.get("type") == "tool_use"]
        ids = {c: template.format(j=j) for j, c in enumerate(cids)}
        for p in peers:
            pmap = p.tool_id_map(sid)
            for c, f in ids.items():
                pmap.bind(c, f)
        try:
            with capture_warnings():
                wire = render(a, _with_foreign_ids(msgs, ids, names), tools, opts(a))
        except Exception as exc:
            yield outcome(R.TOOL_ID_RULES, s, "fail", f"{label} ({kind})", crash(exc))
            continue
        body = wire.body if isinstance(wire.body, dict) else {}
        on_wire = [x.value for x in [*api.probes.tool_use_ids(body), *api.probes.tool_result_ids(body)]]
        problems = [
            f"{v!r} on the wire is not a tool id {api.title} accepts ({api.name} record; {OWN_IDS})"
            for v in dict.fromkeys(x for x in on_wire if isinstance(x, str))
            if not api.tool_ids.accepts(v) or not a.provider_tool_id.match(v)
        ]
        yield outcome(R.TOOL_ID_RULES, s, "fail" if problems else "pass", f"{label} ({kind})", "; ".join(problems[:2]))


def _recorded_ids(env: Env, s: AdapterUnderTest) -> Iterator[Outcome]:
    """Parse recorded tool calls, serialize them back: the provider's ids must return."""
    a = s.adapter
    api = wire_api_of(a)
    for it in env.recorded(s):
        if it.status >= 400 or it.is_stream or not isinstance(it.response_json, dict):
            continue
        sid = session_for("ids", it.label)
        try:
            msg = parse_response(a, WireResponse(it.response_json), ctx_for(sid))
            again = parse_response(a, WireResponse(it.response_json), ctx_for(sid))
        except Exception:
            continue
        # a call without a string id is TC301's to fail (not tu_<ULID>); these are the calls
        # whose ids can be looked up
        uses = [b for b in msg["content"] if b.get("type") == "tool_use" and isinstance(b.get("id"), str)]
        if not uses:
            # the recording's calls are the yardstick (the record's probe), not the parse's
            wired = it.wire.probes.response_tool_calls(it.response_json) if it.wire is not None else []
            if wired:
                why = (
                    f"the recorded response holds {len(wired)} tool call(s) ({it.wire.name if it.wire else ''} "
                    f"record), the parse none: their ids cannot go back ({LOOK_UP_PROVIDER})"
                )
                yield outcome(R.TOOL_ID_RESTORED, s, "fail", it.label, why)
            continue
        m = a.tool_id_map(sid)
        b = answered(msg, sid)
        try:
            with capture_warnings():
                wire = render(a, b.messages, tools_named(b.messages), opts(a))
        except Exception as exc:
            yield outcome(R.TOOL_ID_RESTORED, s, "fail", it.label, crash(exc))
            continue
        text, raw = body_text(wire.body), body_text(it.response_json)
        ids = WireIds.of(api or it.wire, [it.response_json])
        fixed = fixed_ids(a, sid, ids)
        problems = [
            f"the response's call id {w} is the provider id of no parsed call, so it cannot go back ({LOOK_UP})"
            for w in lost_wire_ids(a, sid, ids, [u["id"] for u in uses])
        ]
        minted = 0
        for u in uses:
            p = m.get_provider(u["id"])
            if p is not None and ids.mintable and p not in ids.issued:
                # the API issued no id for this call (its record says it need not): nothing to
                # restore, and whether a minted id goes on the wire is the adapter's (TC305 pairs)
                minted += 1
            elif p is None or body_text(p) not in raw:
                problems.append(
                    f"{u['id']} maps to {p!r}, which is not the id in the recorded response ({LOOK_UP_PROVIDER})"
                )
            elif text.count(body_text(p)) < 2:
                problems.append(f"provider id {p} not restored on both the call and its result ({LOOK_UP_PROVIDER})")
        problems += _read_back_in_session(a, wire, b.messages, sid, fixed)
        if minted == len(uses) and not problems:
            rec = api or it.wire
            why = f"{rec.name if rec else a.wire_api} issued no tool ids in this response (its record says it need not)"
            yield outcome(R.TOOL_ID_RESTORED, s, "skip", it.label, why)
        else:
            yield outcome(R.TOOL_ID_RESTORED, s, "fail" if problems else "pass", it.label, "; ".join(problems[:3]))
        yield from _read_back_pairing(s, it.label, wire, sid, len(uses))
        # TC303: parsing the same bytes again in the session gives the same calls, up to a
        # consistent renaming of the ids the adapter minted (none the wire issued)
        ren = match_ids(
            uses, [x for x in again["content"] if x.get("type") == "tool_use" and isinstance(x.get("id"), str)], fixed
        )
        inj = list(ren.problems)
        pairs = m.pairs()
        if not len({c for c, _ in pairs}) == len(pairs) == len({p for _, p in pairs}):
            inj.append(f"map not injective: {pairs} ({BIDIRECTIONAL})")
        yield outcome(R.TOOL_ID_INJECTIVE, s, "fail" if inj else "pass", it.label, "; ".join(inj[:3]))
        if not ren.problems:
            yield deterministic(s, it.label, ren.renamed, "parsing the response again")


def _calls_and_results(messages: list[Any]) -> list[dict[str, Any]]:
    """The tool_use and tool_result blocks of a conversation, reduced to what pairs them."""
    out: list[dict[str, Any]] = []
    for m in messages:
        for b in m["content"]:
            if b.get("type") == "tool_use":
                out.append({"type": "tool_use", "id": b.get("id"), "name": b.get("name")})
            elif b.get("type") == "tool_result":
                out.append({"type": "tool_result", "tool_use_id": b.get("tool_use_id")})
    return out


def _read_back_in_session(
    a: Adapter, wire: WireRequest, sent: list[Any], sid: str, fixed: Callable[[str], bool]
) -> list[str]:
    """TC302 on the rendered request read back in the same session: the provider ids on the
    wire lead back to the calls and results sent, ids the wire issued exactly, ids the adapter
    minted up to a consistent renaming (the API gives id-less calls positions only)."""
    body: Any = wire.body  # an untrusted adapter's
    if not isinstance(body, dict):
        return []
    try:
        back = read_back(a, wire, sid)
    except Exception as exc:
        return [f"reading the request back {crash(exc)}"]
    if back is None:
        return []
    want, got = _calls_and_results(sent), _calls_and_results(back.messages)
    ren = match_ids(want, got, fixed)
    if ren.problems:
        return [f"read back in the session: {p}" for p in ren.problems]
    if ren.apply(want) != got:
        return [
            f"read back in the session, the calls and results are {json.dumps(got)[:160]}, sent "
            f"{json.dumps(want)[:160]} ({LOOK_UP_PROVIDER})"
        ]
    return []


def _read_back_pairing(s: AdapterUnderTest, label: str, wire: WireRequest, sid: str, n: int) -> Iterator[Outcome]:
    """TC305 on a recorded response's calls: the request rendered with one result per call
    (result k answers call k), read back, pairs result k with call k again. The canonical
    ids may differ from the first parse (an API without ids gives the reader positions only);
    which call each result answers may not."""
    body: Any = wire.body  # an untrusted adapter's
    if not isinstance(body, dict):
        return
    try:
        back = read_back(s.adapter, wire, sid + "_back")
    except Exception as exc:
        yield outcome(R.TOOL_ID_PAIRED, s, "fail", label, f"reading back {crash(exc)}")
        return
    if back is None:
        return
    uses = [b.get("id") for m in back.messages for b in m["content"] if b.get("type") == "tool_use"]
    answered = [
        uses.index(b["tool_use_id"]) if b.get("tool_use_id") in uses else None
        for m in back.messages
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]
    ok = len(uses) == n and answered == list(range(n))
    why = "" if ok else f"read back, the results answer calls {answered} of {len(uses)}; sent: result k answers call k"
    cap = "supports_parallel_tool_calls" if n > 1 else "supports_tools"
    yield outcome(R.TOOL_ID_PAIRED, s, "pass" if ok else "fail", label, why, cap)


def _replies_distinct(env: Env, s: AdapterUnderTest) -> Iterator[Outcome]:
    """Different recorded replies parsed into one session never share a tool id (§6.2).

    Where the API issues no ids (its record says so) the adapter mints them, and a call of
    a later reply that repeats an earlier one (same tool, same input, same position) is
    still a new call: its id must differ, or its result would answer the earlier call.
    """
    a = s.adapter
    api = wire_api_of(a)
    if api is None or api.tool_ids.issued_by_provider:
        return
    sid = session_for("replies", s.name)
    seen: dict[str, str] = {}  # canonical id -> label of the reply it was minted for
    bodies: dict[str, str] = {}  # label -> the reply's body
    shared: list[str] = []
    for it in env.recorded(s):
        if it.status >= 400 or it.is_stream or not isinstance(it.response_json, dict) or it.api != wire_name(a):
            continue
        raw = json.dumps(it.response_json, sort_keys=True)
        try:
            msg = parse_response(a, WireResponse(it.response_json), ctx_for(sid))
        except Exception:
            continue  # TC101 reports it
        m = a.tool_id_map(sid)
        for u in (b for b in msg["content"] if b.get("type") == "tool_use" and isinstance(b.get("id"), str)):
            p = m.get_provider(u["id"])
            if p is not None and json.dumps(p) in raw:
                continue  # the reply carries this id itself: the provider's to reuse
            first = seen.setdefault(u["id"], it.label)
            if first != it.label and bodies.get(first) != raw:
                shared.append(f"{u['id']} ({u.get('name')}) minted for {first} and again for {it.label}")
        bodies.setdefault(it.label, raw)
    if len(bodies) < 2:
        return
    why = "; ".join(shared[:3]) + " (a repeated call of a later reply is a new call, §6.2)" if shared else ""
    yield outcome(R.TOOL_ID_INJECTIVE, s, "fail" if shared else "pass", "replies in one session", why)
