"""TC401-TC405: cross-provider replay (N x N), a session produced through one adapter sent through another."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping
from typing import Any

from ...adapters.protocol import Adapter, Message, ToolDefinition, WireResponse, capabilities_of
from ...core.findings import Selection
from ...formats.canonical.memory import validate_messages
from ...wire import equivalence
from ...wire import facts as wire_facts
from ...wire.api import WireApi
from .. import rules as R
from ..capture import capture_warnings
from ..outcome import AdapterUnderTest, Outcome
from ..scripts import TOOLS, Builder, answered, conversation, mark, tools_named
from .capabilities import CANONICAL_ONLY
from .common import (
    Env,
    body_text,
    calls_of,
    check,
    compared_reason,
    crash,
    ctx_for,
    drop_problem,
    during_tool_use,
    opts,
    outcome,
    parse_response,
    parse_stream,
    read_back,
    render,
    result_blocks,
    session_for,
    shape,
    texts_of,
    tool_use_turn,
    wire_api_of,
)
from .streams import wire_values


def produced_through(a: Adapter) -> tuple[list[Message], list[ToolDefinition]]:
    """A session whose assistant turns provider `a` issued (seed 003 §8.3).

    The script is stamped with `a`'s provider and model, thinking signed by it included
    (what `a`'s provider returns, whether or not adapter `a` can send thinking back), and
    it has been serialized through `a` once, so `a`'s tool-id map holds its calls as a live
    session's would.
    """
    msgs, tools = conversation(a.provider)
    with capture_warnings():
        render(a, copy.deepcopy(msgs), tools, opts(a))
    return msgs, tools


@check(
    R.REPLAY_PRESERVED,
    R.REPLAY_PAIRED,
    R.REPLAY_SYSTEM,
    R.REPLAY_DROPPED,
    R.REPLAY_SIGNATURE,
    R.WIRE_SHAPE,
)
def cross_provider(env: Env) -> Iterator[Outcome]:
    under = {s.name: s for s in env.subjects}
    everyone: list[Adapter] = [s.adapter for s in env.subjects] + list(env.peers)
    for src in everyone:
        for dst in everyone:
            if src.name not in under and dst.name not in under:
                continue
            owner = under.get(dst.name) or under[src.name]
            pair = f"{src.name}→{dst.name}"
            results = list(_replay(src, dst, owner, pair))
            env.pairs[pair] = {}
            for out in results:
                if not env.sel.enabled(out.rule):
                    continue
                prev = env.pairs[pair].get(out.rule)
                env.pairs[pair][out.rule] = (
                    "fail" if "fail" in (prev, out.status) else out.status if prev in (None, "skip") else prev
                )
                yield out


@check(R.REPLAY_PRESERVED)
def tool_result_texts(env: Env) -> Iterator[Outcome]:
    """A tool_result with two text blocks: both texts reach the wire and read back, in order
    (contract §4.3 concatenates them where the API takes one string; none may be lost)."""
    for s in env.subjects:
        a = s.adapter
        if not capabilities_of(a).get("supports_tools"):
            yield outcome(R.REPLAY_PRESERVED, s, "skip", "tool result texts", "supports_tools is false")
            continue
        b = Builder()
        b.add("user", [{"type": "text", "text": mark("go")}])
        tid = b.tool_id()
        b.assistant(
            a.provider, "conformance-model", [{"type": "tool_use", "id": tid, "name": "read_file", "input": {}}]
        )
        parts = [mark("result-part-1"), mark("result-part-2")]
        result = {"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": t} for t in parts]}
        b.add("tool", [result], parent_tool_use_id=tid)
        b.add("user", [{"type": "text", "text": mark("go-on")}])
        try:
            with capture_warnings():
                wire = render(a, b.messages, TOOLS, opts(a))
            back = read_back(a, wire, b.session_id)
        except Exception as exc:
            yield outcome(R.REPLAY_PRESERVED, s, "fail", "tool result texts", crash(exc), "supports_tools")
            continue
        if back is None:
            yield outcome(
                R.REPLAY_PRESERVED, s, "skip", "tool result texts", "no from_wire_request to read the wire back"
            )
            continue
        got = "\n".join(x.get("text", "") for x in result_blocks(back.messages, "text"))
        at = [got.find(t) for t in parts]
        ok = -1 not in at and at == sorted(at)
        why = (
            "" if ok else f"tool_result texts {parts} read back as {got[:120]!r}: every text block must reach the wire"
        )
        yield outcome(R.REPLAY_PRESERVED, s, "pass" if ok else "fail", "tool result texts", why, "supports_tools")


def _replay(src: Adapter, dst: Adapter, owner: AdapterUnderTest, pair: str) -> Iterator[Outcome]:
    try:
        conv, tools = produced_through(src)
    except Exception as exc:
        yield outcome(
            R.REPLAY_PRESERVED,
            owner,
            "fail",
            pair,
            f"producing the conversation through {src.name} {crash(exc)}",
        )
        return
    api = wire_api_of(dst)
    try:
        with capture_warnings() as recs:
            wire = render(dst, conv, tools, opts(dst))
    except Exception as exc:
        yield outcome(R.REPLAY_PRESERVED, owner, "fail", pair, crash(exc))
        return
    text = body_text(wire.body)
    yield from shape(owner, dst, pair, wire.body)
    back: list[Message] | None = None
    try:
        read = read_back(dst, wire, conv[0]["session_id"])
        back = read.messages if read is not None else None
    except Exception as exc:
        yield outcome(R.REPLAY_PRESERVED, owner, "fail", pair, f"reading the wire back {crash(exc)}")
    caps = capabilities_of(dst)
    # TC401
    problems = []
    want_texts = texts_of(conv)
    if back is not None:
        if texts_of(back) != want_texts:
            problems.append(f"texts {texts_of(back)[:4]}... != {want_texts[:4]}...")
        if caps.get("supports_tools") and calls_of(back) != calls_of(conv):
            problems.append(f"tool calls {calls_of(back)} != {calls_of(conv)}")
    else:
        pos = [text.find(json.dumps(t)[1:-1]) for t in want_texts]
        if -1 in pos or pos != sorted(pos):
            problems.append("texts missing from the wire or out of order")
    yield outcome(R.REPLAY_PRESERVED, owner, "fail" if problems else "pass", pair, "; ".join(problems))
    # TC402
    facts = wire_facts.inspect(api, wire.body) if api is not None else None
    paired = []
    if facts is not None and (facts.unpaired_results or sorted(facts.tool_result_ids) != sorted(facts.tool_use_ids)):
        paired.append(f"wire calls {facts.tool_use_ids} vs results {facts.tool_result_ids}")
    if back is not None:
        errs = [
            f.format()
            for f in validate_messages(back, selection=Selection(select=("TS205", "TS206", "TS208", "TS111")))
        ]
        paired += errs
    if facts is None and back is None:
        yield outcome(R.REPLAY_PAIRED, owner, "skip", pair, "unknown wire API and no from_wire_request")
    else:
        yield outcome(R.REPLAY_PAIRED, owner, "fail" if paired else "pass", pair, "; ".join(paired[:3]))
    # TC403
    sp = _system_placement(conv, back, facts, caps, dst)
    sys_cap = "supports_system_messages_in_list" if caps.get("supports_system_messages_in_list") else None
    yield outcome(R.REPLAY_SYSTEM, owner, "fail" if sp else "pass", pair, "; ".join(sp[:3]), sys_cap)
    # TC404 / TC405: thinking state goes back only to the provider that issued it, in the
    # field the API carries it in (located by the record's probes); elsewhere it is dropped
    # with a WARN line. What the API cannot carry at all (a signature on Ollama) is not asked for.
    dropped, sig, skips = _thinking_and_images(src, dst, api, conv, wire.body, text, recs)
    # the same history cut after the tool results of its first assistant turn: the turn a
    # request continues during tool use, whose thinking some APIs need back even where they
    # let earlier turns' be omitted (WireApi.thinking_back.prior_turns_optional)
    cut = during_tool_use(conv)
    if cut is not None and api is not None and api.thinking_back.prior_turns_optional:
        try:
            with capture_warnings() as cut_recs:
                cut_body = render(dst, cut, tools, opts(dst)).body
        except Exception as exc:
            sig.append(f"the history cut during tool use: {crash(exc)}")
        else:
            _, cut_sig, cut_skips = _thinking_and_images(src, dst, api, cut, cut_body, body_text(cut_body), cut_recs)
            sig += [f"during tool use: {x}" for x in cut_sig if f"during tool use: {x}" not in sig]
            skips += [x for x in cut_skips if x not in skips]
    yield outcome(R.REPLAY_DROPPED, owner, "fail" if dropped else "pass", pair, "; ".join(dropped[:3]))
    think_cap = "supports_thinking" if caps.get("supports_thinking") and src.provider == dst.provider else None
    if sig:
        yield outcome(R.REPLAY_SIGNATURE, owner, "fail", pair, _signature_reason(api, sig), think_cap)
    elif skips:
        yield outcome(R.REPLAY_SIGNATURE, owner, "skip", pair, "; ".join(skips))
    else:
        yield outcome(R.REPLAY_SIGNATURE, owner, "pass", pair, "", think_cap)


def _system_placement(
    conv: list[Message],
    back: list[Message] | None,
    facts: wire_facts.WireFacts | None,
    caps: Mapping[str, Any],
    dst: Adapter,
) -> list[str]:
    """TC403's problems: the system text read back (where the adapter reads requests) and
    where the wire request placed it (where the API's record locates it), each a reason."""
    systems = [b["text"] for m in conv if m["role"] == "system" for b in m["content"] if b.get("type") == "text"]
    want_sys = "\n\n".join(systems)
    sp = []
    if back is not None and caps.get("supports_system_prompt"):
        got = [m for m in back if m["role"] == "system"]
        got_text = "\n\n".join(b["text"] for m in got for b in m["content"] if b.get("type") == "text")
        if got_text != want_sys or (got and back[0]["role"] != "system"):
            sp.append(
                f"system read back as {got_text[:60]!r} (first message "
                f"{back[0]['role'] if back else None}), want {want_sys[:60]!r} first"
            )
    # a contract §3.4 declaration has no `supports_system_messages_in_list` (only canonical
    # §7.2 lists it): its placement is then the API's own, contract §4.1.2's table ("SYSTEM
    # role messages in list" -> Anthropic "Top-level system parameter", OpenAI "First message
    # in messages with role: system"), which the in-list branch accepts either way
    in_list = caps.get(CANONICAL_ONLY, True)
    if facts is not None and caps.get("supports_system_prompt"):
        if in_list:
            # the API takes system turns in its list: they must open the conversation, in order.
            # Where its record also locates a top-level system field (Responses `instructions`,
            # "A system (or developer) message inserted into the model's context"), the joined
            # text hoisted there alone is placed too: contract §4.1.2 "The adapter hoists /
            # injects as needed. Multiple SYSTEM messages ... are concatenated (with \n\n
            # separator) before placement."
            k = len(facts.system_in_messages)
            hoisted = not k and bool(want_sys) and facts.system_top_level == want_sys
            if not hoisted and (not k or facts.system_in_messages != list(range(k))):
                sp.append(
                    f"system messages at wire positions {facts.system_in_messages}, want the first turn(s) "
                    '(contract §4.1.2: "The adapter hoists / injects as needed")'
                )
        else:
            if facts.system_in_messages:
                sp.append(
                    f"role system left in messages at {facts.system_in_messages}; {dst.name} "
                    "takes a hoisted system prompt"
                )
            if facts.system_top_level != want_sys:
                sp.append(f"top-level system is {str(facts.system_top_level)[:60]!r}, want {want_sys[:60]!r}")
    return sp


# what TC405 enforces, as its catalogue entry states it
SIGNATURE_BACK = f"{R.REPLAY_SIGNATURE.section}: {R.REPLAY_SIGNATURE.summary.lower()}"


def _values(found: list[Any], api: WireApi | None = None) -> set[Any]:
    """The located values in the form they compare in: the bytes of a field the record
    declares base64 (`wire.equivalence`), else the text."""
    return {equivalence.wire_key(api, x.pointer, str(x.value)) for x in found}


# contract §4.2, what a parse keeps of a thinking block
PASSED_THROUGH = (
    'contract §4.2: "The adapter passes them through as `ThinkingBlock` and stashes the opaque '
    '`signature` in `provider_raw` for round-trip fidelity"'
)


def parse_loss(api: WireApi, located: list[Any], msg: Message) -> str:
    """The problem when a signature the response carries is nowhere in the parsed message
    (a thinking block's `signature`, `provider_raw` or any other field: the adapter's to
    choose), compared as the record's equivalences say; "" when each one is kept."""
    strings = list(_strings(msg))
    kept = set(strings) | {equivalence.canonical_key(api, "thinking.signature", x) for x in strings}
    lost = [str(x.value) for x in located if equivalence.wire_key(api, x.pointer, str(x.value)) not in kept]
    if not lost:
        return ""
    return (
        f"{len(lost)} of {len(located)} signature(s) the response carries are not in the parsed message "
        f"(first {lost[0][:24]!r}), so none can go back ({PASSED_THROUGH})"
    )


def _streamed_signatures(s: AdapterUnderTest, a: Adapter, api: WireApi, it: Any) -> Outcome | None:
    """TC405 on a recorded stream: each signature its chunks carry (the record's
    `response_signatures` probe on each) is somewhere in the stream's events (a
    `thinking_delta`'s `signature`, a block of `message_complete.final_content`), compared as
    the record's equivalences say. A stream has no `provider_raw` of its own: a signature
    its events drop cannot go back on the next turn (Gemini 3 rejects such a turn, its
    signed `functionCall` streamed as any other). None when the stream carries no signature
    or does not parse (TC601 reports that)."""
    if not api.carries.thinking_signature:
        return None
    values = wire_values(it) or []
    located = [x for v in values if isinstance(v, dict) for x in api.probes.response_signatures(v)]
    if not located:
        return None
    try:
        events, _ = parse_stream(a, it.response_body, ctx_for(session_for("think-stream", it.label)))
    except Exception:
        return None
    strings = list(_strings(list(events)))
    kept = set(strings) | {equivalence.canonical_key(api, "thinking.signature", x) for x in strings}
    lost = [str(x.value) for x in located if equivalence.wire_key(api, x.pointer, str(x.value)) not in kept]
    if not lost:
        return outcome(R.REPLAY_SIGNATURE, s, "pass", it.label, "", "supports_thinking")
    problem = (
        f"{len(lost)} of {len(located)} signature(s) the stream carries are in none of its events "
        f"(first {lost[0][:24]!r}), so none can go back: a stream has no provider_raw, so a signature the "
        "wire puts on a part that is no thinking rides a signature-only thinking block (a thinking_delta "
        f"of empty text) ({PASSED_THROUGH})"
    )
    return outcome(R.REPLAY_SIGNATURE, s, "fail", it.label, _signature_reason(api, [problem]), "supports_thinking")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _signature_reason(api: WireApi | None, problems: list[str]) -> str:
    """A failing TC405 reason: the problems, the record's equivalences it compared up to and
    the rule it enforces."""
    docs = f"; {api.thinking_back.cite()}" if api is not None and api.thinking_back.needs else ""
    return compared_reason(api, problems, f"{SIGNATURE_BACK}{docs}")


def not_required(
    api: WireApi, part: str, recs: list[Any], m: Message, a: Adapter, *, current: bool = True
) -> tuple[str | None, str]:
    """A thinking `part` of message `m` that `a` did not send back to `api`, where the API's
    record (`WireApi.thinking_back`) does not require it: (a failure, the skip reason). Not
    sending it is the adapter's choice, but the block is then dropped from the wire, which
    §7.3 asks to be logged ("Write a structured log entry at WARN level"; "Never silently
    corrupt"): a drop without its WARN line fails."""
    block = "redacted_thinking" if part == "redacted" else "thinking"
    why = api.thinking_back.skip_reason(api.name, part, current=current)
    # the WARN lines that report this part unsent: the block's drop, or (for a signature) a
    # line naming that field; a line about another field of a block that was sent is not one
    logged = [r for r in recs if getattr(r, "field", None) in (None, part)]
    p = drop_problem(logged, block, m, a)
    if p is None:
        return None, why
    return f"thinking {part} not sent back to {api.name} and its drop not logged: {p} (§7.3: drop and WARN)", why


def unsent(
    api: WireApi, part: str, problem: str, recs: list[Any], m: Message, a: Adapter, *, current: bool = True
) -> tuple[str | None, str | None]:
    """A thinking `part` of `m` that `a` did not send back to `api`: (a failure, a skip
    reason). `problem` fails where the record requires the part back (its docs say so), for
    `m` the turn continued during tool use (`current`) or any turn."""
    if api.thinking_back.requires(part, current=current):
        return problem, None
    fail, why = not_required(api, part, recs, m, a, current=current)
    return fail, None if fail else why


def _thinking_and_images(
    src: Adapter,
    dst: Adapter,
    api: WireApi | None,
    conv: list[Message],
    body: Any,
    text: str,
    recs: list[Any],
) -> tuple[list[str], list[str], list[str]]:
    """(TC404 problems, TC405 problems, TC405 skip reasons: thinking the API's docs do not
    require back, which the adapter did not send)."""
    caps = capabilities_of(dst)
    dropped: list[str] = []
    sig: list[str] = []
    skips: list[str] = []
    same = src.provider == dst.provider
    located = isinstance(body, dict) and api is not None
    sigs_on_wire = _values(api.probes.signatures(body), api) if located and api else set()
    redacted_on_wire = _values(api.probes.redacted_thinking(body), api) if located and api else set()
    thinking_on_wire = _values(api.probes.thinking_text(body)) if located and api else set()

    def add(found: tuple[str | None, str | None]) -> None:
        fail, why = found
        if fail:
            sig.append(fail)
        elif why and why not in skips:
            skips.append(why)

    for m in conv:
        current = tool_use_turn(conv, m)
        for b in m["content"]:
            t = b.get("type")
            if t in ("thinking", "redacted_thinking"):
                # what this API can express at all: a signature / a redacted payload
                expressible = api is not None and (
                    api.carries.thinking_signature if t == "thinking" else api.carries.redacted_thinking
                )
                opaque = b.get("signature") if t == "thinking" else b.get("data")
                carried = bool(caps.get("supports_thinking")) and same and (expressible or t == "thinking")
                # a foreign or undeclared opaque value must not reach the wire anywhere (a leak
                # is a leak wherever it lands, so this side reads the whole body)
                leaked = bool(opaque) and str(opaque) in text
                if carried and t == "thinking" and api is not None:
                    sent = equivalence.canonical_key(api, "thinking.signature", str(opaque))
                    if expressible and opaque and sent not in sigs_on_wire:
                        problem = (
                            f"thinking signature issued by {src.provider} not in the field "
                            f"{api.name} carries signatures in"
                        )
                        add(unsent(api, "signature", problem, recs, m, dst, current=current))
                    if api.carries.thinking_text and b.get("text") and str(b["text"]) not in thinking_on_wire:
                        problem = f"thinking text issued by {src.provider} not sent back to {dst.name}"
                        add(unsent(api, "text", problem, recs, m, dst, current=current))
                    if not expressible and leaked:
                        sig.append(f"{api.name} carries no thinking signature, yet it reached the wire")
                elif carried and api is not None:
                    if equivalence.canonical_key(api, "redacted_thinking.data", str(opaque)) not in redacted_on_wire:
                        problem = f"redacted thinking issued by {src.provider} not sent back to {dst.name} intact"
                        add(unsent(api, "redacted", problem, recs, m, dst, current=current))
                elif carried and api is None and not leaked:
                    # no record says whether the API needs it back (`ThinkingBack`): never required
                    add((None, f"no WireApi record named {dst.wire_api!r} says whether {t} must go back"))
                if not carried:
                    if leaked:
                        sig.append(f"{t} signed by {src.provider} sent to {dst.name}")
                    p = drop_problem(recs, t, m, dst)
                    if p:
                        dropped.append(f"{t}: {p}")
            elif t == "image" and not caps.get("supports_images"):
                if b["source"]["data"] in text:
                    dropped.append("image reached a wire that declares supports_images false")
                p = drop_problem(recs, "image", m, dst)
                if p:
                    dropped.append(f"image: {p}")
    return dropped, sig, skips


@check(R.REPLAY_SIGNATURE)
def recorded_thinking_sent_back(env: Env) -> Iterator[Outcome]:
    """TC405 on recorded responses: the thinking a response carries (its signatures and
    thinking text, located by the record's `response_signatures` / `response_thinking_text`
    probes) goes back to the same API in the next request, in the fields its request probes
    locate: the recorded response is parsed, followed by a result for each of its tool
    calls, and serialized again. A thinking-state value the parse loses never reaches the
    provider that needs it back (Gemini 3 rejects such a turn). On a recorded stream, each
    signature its chunks carry is somewhere in the stream's events: a stream has no
    provider_raw, so one its events drop cannot go back either."""
    for s in env.subjects:
        a, api = s.adapter, wire_api_of(s.adapter)
        if api is None or not capabilities_of(a).get("supports_thinking"):
            why = "supports_thinking is false" if api is not None else f"no WireApi record named {a.wire_api!r}"
            yield outcome(R.REPLAY_SIGNATURE, s, "skip", "recorded thinking", why)
            continue
        judged = 0
        for it in env.recorded(s):
            body = it.response_json
            if it.status >= 400 or it.wire is None or it.wire.name != api.name:
                continue
            if it.is_stream:
                streamed = _streamed_signatures(s, a, api, it)
                if streamed is not None:
                    judged += 1
                    yield streamed
                continue
            if not isinstance(body, dict):
                continue
            located = api.probes.response_signatures(body) if api.carries.thinking_signature else []
            sigs = [str(x.value) for x in located]
            thought = "".join(str(x.value) for x in api.probes.response_thinking_text(body))
            thought = thought if api.carries.thinking_text else ""
            if not sigs and not thought:
                continue
            sid = session_for("think", it.label)
            try:
                msg = parse_response(a, WireResponse(body), ctx_for(sid))
            except Exception:
                continue  # TC101 reports it
            kept = parse_loss(api, located, msg)
            if kept:
                # lost by the parse: no later turn can send it back, whatever the docs excuse
                judged += 1
                yield outcome(
                    R.REPLAY_SIGNATURE, s, "fail", it.label, _signature_reason(api, [kept]), "supports_thinking"
                )
                continue
            b = answered(msg, sid)
            try:
                with capture_warnings() as recs:
                    wire = render(a, b.messages, tools_named(b.messages), opts(a))
            except Exception as exc:
                yield outcome(R.REPLAY_SIGNATURE, s, "fail", it.label, crash(exc), "supports_thinking")
                continue
            judged += 1
            rendered = wire.body if isinstance(wire.body, dict) else {}
            problems: list[str] = []
            skips: list[str] = []
            # the parsed turn the thinking came back in (the first assistant turn of the history)
            turn = next((m for m in b.messages if m["role"] == "assistant"), b.messages[0])
            current = tool_use_turn(b.messages, turn)

            on_wire = _values(api.probes.signatures(rendered), api)
            lost = [str(x.value) for x in located if equivalence.wire_key(api, x.pointer, str(x.value)) not in on_wire]
            found: list[tuple[str | None, str | None]] = []
            if lost:
                problem = (
                    f"{len(lost)} of {len(sigs)} signature(s) the response carries not sent back in "
                    f"{api.name}'s signature field (first {lost[0][:24]!r})"
                )
                found.append(unsent(api, "signature", problem, recs, turn, a, current=current))
            back = "".join(str(x.value) for x in api.probes.thinking_text(rendered))
            if thought and back != thought:
                if back:
                    # sent back, but not as the response had it: never "partially serialize" (§7.3)
                    problems.append(f"thinking text sent back as {back[:40]!r}, the response had {thought[:40]!r}")
                else:
                    problem = f"thinking text sent back as {back[:40]!r}, the response had {thought[:40]!r}"
                    found.append(unsent(api, "text", problem, recs, turn, a, current=current))
            problems += [fail for fail, _ in found if fail]
            skips += [why for _, why in found if why]
            if problems:
                yield outcome(
                    R.REPLAY_SIGNATURE, s, "fail", it.label, _signature_reason(api, problems), "supports_thinking"
                )
            elif skips:
                yield outcome(R.REPLAY_SIGNATURE, s, "skip", it.label, "; ".join(dict.fromkeys(skips)))
            else:
                yield outcome(R.REPLAY_SIGNATURE, s, "pass", it.label, "", "supports_thinking")
        if not judged:
            yield outcome(
                R.REPLAY_SIGNATURE,
                s,
                "skip",
                "recorded thinking",
                "no recorded response carries thinking the record locates",
            )
