"""TC501-TC502: capability honesty (declared true: carried; declared false: dropped with a WARN)."""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator
from typing import Any

from ...adapters.errors import AdapterError
from ...adapters.protocol import Adapter, Message, capabilities_of
from ...wire import equivalence
from ...wire.api import Located, WireApi
from .. import rules as R
from ..capture import capture_warnings
from ..outcome import AdapterUnderTest, Outcome
from ..scripts import IMAGES_BY_TYPE, PNG_2PX, TOOLS, Builder, conversation, mark, signature
from .common import (
    Env,
    body_text,
    check,
    crash,
    drop_problem,
    during_tool_use,
    locates,
    names_any,
    opts,
    outcome,
    render,
    shape,
    tool_use_turn,
    wire_api_of,
)

# (what to look for, the probe that locates it, whether the API can carry it at all, the
# part of thinking it is: `WireApi.thinking_back` says whether the API needs it back)
Want = tuple[str, Callable[[Any], list[Located]], bool, str | None]


def _wanted(api: WireApi, cap: str, provider: str) -> list[Want]:
    """What the script sends for `cap`, and where the record says the API carries it."""
    p, c = api.probes, api.carries
    if cap == "supports_thinking":
        return [
            (mark("thinking"), p.thinking_text, c.thinking_text, "text"),
            (signature(provider), p.signatures, c.thinking_signature, "signature"),
            (mark(f"redacted-{provider}"), p.redacted_thinking, c.redacted_thinking, "redacted"),
        ]
    if cap == "supports_images":
        return [
            (
                PNG_2PX,
                lambda b: [Located(x.pointer, str((x.value or {}).get("data"))) for x in p.images(b)],
                c.images_base64,
                None,
            )
        ]
    if cap == "supports_system_prompt":
        return [
            (mark("system-1"), p.system, c.system_prompt, None),
            (mark("system-2"), p.system, c.system_prompt, None),
        ]
    return []


def _feature(
    s: AdapterUnderTest,
    a: Adapter,
    body: Any,
    text: str,
    recs: list[logging.LogRecord],
    by_type: dict[str, list[tuple[Message, dict[str, Any]]]],
    cap: str,
    markers: list[str],
    blocks: list[str],
    msgs: list[Message],
) -> Iterator[Outcome]:
    """TC501 when `cap` is declared true (in the field the API carries it in), else TC502
    (absent from the whole body, and WARNed)."""
    if capabilities_of(a).get(cap):
        yield from _carried(s, a, body, cap, (msgs, by_type, recs))
        return
    leaked = [mk for mk in markers if mk in text]
    problems = [f"declared false but on the wire: {leaked[:3]}"] if leaked else []
    for t in blocks:
        for m, _ in by_type.get(t, []):
            p = drop_problem(recs, t, m, a)
            if p:
                problems.append(f"{t}: {p}")
    yield outcome(R.CAPS_DROPPED, s, "fail" if problems else "pass", cap, "; ".join(problems[:3]))


def _holds(api: WireApi, found: Located, value: str) -> bool:
    """`value` is in the wire value `found`: as text, or, at a field the record declares base64
    (`Equivalence.base64`: e.g. Gemini's "Either standard or URL-safe base64 encoding
    with/without paddings are accepted"), as the same bytes in either alphabet."""
    if value in str(found.value):
        return True
    pointer, text = found.pointer, found.value
    if isinstance(text, dict):  # a located part (Gemini's inlineData): its payload field
        text = text.get("data")
    if equivalence.base64_at(api, pointer) is None:
        pointer = f"{pointer}/data"  # the images probe locates the part that holds `data`
    if equivalence.base64_at(api, pointer) is None or not isinstance(text, str):
        return False
    raw = equivalence.decode_base64(text)
    return raw is not None and raw == equivalence.decode_base64(value)


Script = tuple[list[Message], dict[str, list[tuple[Message, dict[str, Any]]]], list[logging.LogRecord]]
"""The script's messages, its blocks by type (each with its message) and the WARN records."""


def _earlier_turn_dropped(api: WireApi, a: Adapter, value: str, part: str, script: Script) -> str | None:
    """The skip reason when the script's block holding `value` is of an earlier turn whose
    thinking the API's docs let be omitted (`ThinkingBack.prior_turns_optional`) and the
    adapter dropped it with its §7.3 WARN line; None otherwise."""
    msgs, by_type, recs = script
    block = "redacted_thinking" if part == "redacted" else "thinking"
    for m, b in by_type.get(block, []):
        if value not in (str(b.get("text")), str(b.get("signature")), str(b.get("data"))):
            continue
        current = tool_use_turn(msgs, m)
        if api.thinking_back.requires(part, current=current) or drop_problem(recs, block, m, a) is not None:
            return None
        cut = during_tool_use(msgs)
        if cut is not None and any(x is m for x in cut) and tool_use_turn(cut, m):
            # the same turn when the request continues it during tool use: required there
            with capture_warnings():
                body = render(a, copy.deepcopy(cut), list(TOOLS), opts(a)).body
            probe = _probe_of(api, part)
            if not [x for x in probe(body) if value in str(x.value)]:
                return None
        return api.thinking_back.skip_reason(api.name, part, current=current)
    return None


def _probe_of(api: WireApi, part: str) -> Callable[[Any], list[Located]]:
    p = api.probes
    return {"text": p.thinking_text, "signature": p.signatures, "redacted": p.redacted_thinking}[part]


def _carried(
    s: AdapterUnderTest,
    a: Adapter,
    body: Any,
    cap: str,
    script: Script | None = None,
) -> Iterator[Outcome]:
    api = wire_api_of(a)
    if cap == "supports_tools":
        yield from _tools_carried(s, a, api, body)
        return
    if api is None:
        yield outcome(R.CAPS_CARRIED, s, "skip", cap, f"no WireApi record named {a.wire_api!r} locates the fields", cap)
        return
    missing: list[str] = []
    leaked: list[str] = []
    skips: list[str] = []
    for value, probe, expressible, part in _wanted(api, cap, a.provider):
        found = [x for x in probe(body) if _holds(api, x, value)] if isinstance(body, dict) else []
        earlier = (
            _earlier_turn_dropped(api, a, value, part, script)
            if expressible and not found and part is not None and script is not None
            else None
        )
        if expressible and not found and part is not None and not api.thinking_back.requires(part):
            # thinking the API's docs do not ask back (or canonical form cannot give it
            # what it needs): not sending it is no dishonest declaration
            skips.append(api.thinking_back.skip_reason(api.name, part))
        elif earlier is not None:
            skips.append(earlier)
        elif expressible and not found:
            missing.append(value)
        elif not expressible and found:
            leaked.append(value)
    problems = []
    if missing:
        docs = f" ({api.thinking_back.cite()})" if cap == "supports_thinking" and api.thinking_back.needs else ""
        problems.append(f"declared true but not in the fields {api.name} carries it in: {missing[:3]}{docs}")
    if leaked:
        problems.append(f"{api.name} cannot carry {leaked[:3]}, yet it is on the wire")
    if problems:
        yield outcome(R.CAPS_CARRIED, s, "fail", cap, "; ".join(problems), cap)
    elif skips:
        yield outcome(R.CAPS_CARRIED, s, "skip", cap, "; ".join(skips))
    else:
        yield outcome(R.CAPS_CARRIED, s, "pass", cap, "", cap)


def _schema_carried(s: AdapterUnderTest, a: Adapter, body: Any) -> Outcome:
    """TC501 for `supports_structured_output`: the script's `output_schema` (contract §3.3:
    "output_schema: dict | None  # for structured output") sits in the field the record says
    the API takes a schema in (§4.3 shows Chat Completions' `response_format: {"type":
    "json_schema", ...}`), not merely somewhere in the body: a schema pasted into a system
    or user message is a hint the API does not enforce. An API whose record names no such
    field (its docs define none) is skipped, never failed."""
    cap = "supports_structured_output"
    api = wire_api_of(a)
    if api is None or not locates(api, "output_schema"):
        why = f"the {a.wire_api} record names no structured-output field (its docs define none, or it does not say)"
        return outcome(R.CAPS_CARRIED, s, "skip", cap, why, cap)
    found = (
        [x for x in api.probes.output_schema(body) if mark("schema") in str(x.value)] if isinstance(body, dict) else []
    )
    if found:
        return outcome(R.CAPS_CARRIED, s, "pass", cap, "", cap)
    elsewhere = " (it is elsewhere in the body)" if mark("schema") in body_text(body) else ""
    why = (
        f"declared true, but output_schema is not in {api.name}'s structured-output field{elsewhere}; "
        'canonical §7.2: "Declarations MUST be honest", contract §3.3 output_schema "for structured output"'
    )
    return outcome(R.CAPS_CARRIED, s, "fail", cap, why, cap)


def _tools_carried(s: AdapterUnderTest, a: Adapter, api: WireApi | None, body: Any) -> Iterator[Outcome]:
    """Every call and result of the script on the wire (by the record's id probes), with
    the names and inputs the adapter reads back."""
    msgs, _ = conversation(a.provider)
    uses = [b for m in msgs for b in m["content"] if b["type"] == "tool_use"]
    results = [b for m in msgs for b in m["content"] if b["type"] == "tool_result"]
    problems = []
    if api is not None and isinstance(body, dict):
        got_uses, got_results = api.probes.tool_use_ids(body), api.probes.tool_result_ids(body)
        if len(got_uses) != len(uses) or len(got_results) != len(results):
            problems.append(
                f"{len(got_uses)} tool calls and {len(got_results)} results in {api.name}'s fields, "
                f"want {len(uses)} and {len(results)}"
            )
    elif api is None:
        yield outcome(
            R.CAPS_CARRIED, s, "skip", "supports_tools", f"no WireApi record named {a.wire_api!r}", "supports_tools"
        )
        return
    yield outcome(
        R.CAPS_CARRIED, s, "fail" if problems else "pass", "supports_tools", "; ".join(problems), "supports_tools"
    )


FEATURES = (
    "supports_thinking",
    "supports_images",
    "supports_tools",
    "supports_system_prompt",
    "supports_structured_output",
)
"""The capabilities the script exercises by content (their blocks, messages or option)."""


def _script(a: Adapter, without: frozenset[str]) -> tuple[list[Message], list[dict[str, Any]], dict[str, Any] | None]:
    """The capability script, without the features of the capabilities in `without`."""
    msgs, tools = conversation(
        a.provider,
        thinking="supports_thinking" not in without,
        images="supports_images" not in without,
        tools="supports_tools" not in without,
    )
    if "supports_system_prompt" in without:
        msgs = [m for m in msgs if m["role"] != "system"]
    schema = None
    if "supports_structured_output" not in without:
        schema = {"type": "object", "description": mark("schema"), "properties": {}}
    return msgs, tools, schema


def _judge(
    s: AdapterUnderTest,
    a: Adapter,
    msgs: list[Message],
    body: Any,
    recs: list[logging.LogRecord],
    only: frozenset[str] | None = None,
) -> Iterator[Outcome]:
    """TC501/TC502 for each feature of the script (of `only` when given) on one rendered body."""
    caps = capabilities_of(a)
    text = body_text(body)
    by_type: dict[str, list[tuple[Message, dict[str, Any]]]] = {}
    for m in msgs:
        for b in m["content"]:
            by_type.setdefault(b["type"], []).append((m, b))
    features = (
        (
            "supports_thinking",
            [mark("thinking"), signature(a.provider), mark(f"redacted-{a.provider}")],
            ["thinking", "redacted_thinking"],
        ),
        ("supports_images", [PNG_2PX], ["image"]),
        ("supports_tools", [mark("path"), mark("query"), mark("result-1"), "read_file"], ["tool_use", "tool_result"]),
        ("supports_system_prompt", [mark("system-1"), mark("system-2")], ["system"]),
    )
    for cap, markers, blocks in features:
        if only is None or cap in only:
            yield from _feature(s, a, body, text, recs, by_type, cap, markers, blocks, msgs)
    if only is not None and "supports_structured_output" not in only:
        return
    if caps.get("supports_structured_output"):
        yield _schema_carried(s, a, body)
    else:
        leaked = mark("schema") in text
        warned = any(
            r.levelno == logging.WARNING and names_any(r, "output_schema", "structured output", "response schema")
            for r in recs
        )
        ok = not leaked and warned
        yield outcome(
            R.CAPS_DROPPED,
            s,
            "pass" if ok else "fail",
            "supports_structured_output",
            ""
            if ok
            else (
                "output_schema sent although declared false" if leaked else "output_schema dropped without a WARNING"
            ),
        )


def _one_at_a_time(s: AdapterUnderTest, a: Adapter) -> Iterator[Outcome]:
    """The whole script failed to render: contract §4.4 lets a declared-false
    capability "drop cleanly or fail", so each declared-false feature is rendered alone
    (with every declared-true one): the documented `AdapterError` is a clean failure
    (TC502 passes), any other exception a crash. The declared-true features are judged
    on the script without the declared-false ones (TC501)."""
    false = frozenset(c for c in FEATURES if not capabilities_of(a).get(c))
    msgs, tools, schema = _script(a, false)
    try:
        with capture_warnings() as recs:
            wire = render(a, msgs, tools, opts(a, output_schema=schema))
    except Exception as exc:
        yield outcome(R.CAPS_CARRIED, s, "fail", "script", crash(exc))
        return
    yield from shape(s, a, "script", wire.body)
    yield from _judge(s, a, msgs, wire.body, recs, frozenset(FEATURES) - false)
    for cap in sorted(false):
        msgs, tools, schema = _script(a, false - {cap})
        try:
            with capture_warnings() as recs:
                wire = render(a, msgs, tools, opts(a, output_schema=schema))
        except AdapterError as exc:
            yield outcome(R.CAPS_DROPPED, s, "pass", cap, f"failed cleanly (contract §4.4): {type(exc).__name__}")
            continue
        except Exception as exc:
            yield outcome(
                R.CAPS_DROPPED,
                s,
                "fail",
                cap,
                f"{crash(exc)} (contract §4.4: drop cleanly or fail with the documented AdapterError)",
            )
            continue
        yield from _judge(s, a, msgs, wire.body, recs, frozenset({cap}))


@check(R.CAPS_CARRIED, R.CAPS_DROPPED, R.WIRE_SHAPE)
def capability_honesty(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        caps = capabilities_of(a)
        msgs, tools, schema = _script(a, frozenset())
        try:
            with capture_warnings() as recs:
                wire = render(a, msgs, tools, opts(a, output_schema=schema))
        except Exception as exc:
            if all(caps.get(c) for c in FEATURES):
                yield outcome(R.CAPS_CARRIED, s, "fail", "script", crash(exc))
                continue
            yield from _one_at_a_time(s, a)
        else:
            yield from shape(s, a, "script", wire.body)
            yield from _judge(s, a, msgs, wire.body, recs)
        if caps.get("supports_images"):
            for media in caps.get("accepted_image_media_types") or []:
                data = IMAGES_BY_TYPE.get(media)
                if data is None:
                    why = f"the script has no real {media} image to send (scripts.IMAGES_BY_TYPE)"
                    yield outcome(R.CAPS_CARRIED, s, "skip", f"image {media}", why)
                    continue
                b = Builder(session_id=msgs[0]["session_id"] + "_img")
                b.add(
                    "user",
                    [
                        {"type": "text", "text": "look"},
                        {
                            "type": "image",
                            "source": {"kind": "base64", "data": data},
                            "media_type": media,
                        },
                    ],
                )
                try:
                    with capture_warnings():
                        w = render(a, b.messages, [], opts(a))
                except Exception as exc:
                    yield outcome(R.CAPS_CARRIED, s, "fail", f"image {media}", crash(exc))
                    continue
                api = wire_api_of(a)
                ok = data in body_text(w.body) or (
                    api is not None
                    and isinstance(w.body, dict)
                    and any(_holds(api, x, data) for x in api.probes.images(w.body))
                )
                yield outcome(
                    R.CAPS_CARRIED,
                    s,
                    "pass" if ok else "fail",
                    f"image {media}",
                    "" if ok else f"{media} is declared accepted but the image did not reach the wire",
                )
        if caps.get("supports_streaming"):
            # the script without declared-false features: one may fail cleanly (contract §4.4)
            plain = _script(a, frozenset(c for c in FEATURES if not caps.get(c)))[0][:3]
            try:
                w1 = render(a, plain, [], opts(a, stream=True))
                w0 = render(a, plain, [], opts(a, stream=False))
            except Exception as exc:
                yield outcome(R.CAPS_CARRIED, s, "fail", "supports_streaming", crash(exc))
            else:
                ok = (
                    body_text(w1.body) != body_text(w0.body)
                    or dict(w1.headers) != dict(w0.headers)
                    or w1.path != w0.path
                )
                yield outcome(
                    R.CAPS_CARRIED,
                    s,
                    "pass" if ok else "fail",
                    "supports_streaming",
                    "" if ok else "stream=True renders the same request as stream=False",
                )
