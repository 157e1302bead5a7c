"""TC901-TC904: semantics the invariant checks do not compare, read through the wire API's
record (its probes locate the field the API uses; its `carries` says what it can express).

- TC901 image blocks: source kind, media type and bytes on the wire and after read-back
  (a `data:` URL must come back as base64, never as a url-kind image).
- TC902 tool-result errors: `is_error` reaches the API's error flag and survives read-back
  (where the API has no flag: it is reported with one WARN line, never lost silently).
- TC903 how the turn ended: what the adapter streams equals the recorded stop reason, mapped
  by the record; a parsed message's `metadata.status` is the one that stop reason implies
  (canonical §4.3 MessageStatus: `error` "generation failed", `cancelled`, else `complete`):
  a blocked Gemini prompt is a failed call, not a complete empty reply; a refusal the record
  locates (Responses `refusal` parts, Chat Completions `message.refusal` and `delta.refusal`,
  streamed or not) is the text of one of the reply's text blocks (contract §3.3: `content`
  is "the assistant's reply blocks"; the canonical format has no refusal block, so the
  refusal is the reply's text).
- TC904 usage: input, output, cache read and cache write equal the recorded body.
- TC905 usage requested: a streaming request carries the field the record says makes the
  API report usage (adapter contract §7.2: "Adapters MUST request usage in streaming mode").
- TC907 model: the message's model is the one the response names as having served the call
  (contract §3.3), not the one requested.
- TC906 usage the recording lacks: reported as none, or estimated as §7.2's last paragraph
  allows (input = the harness's pre-flight `estimate_input_tokens`, handed over in
  `RequestContext.estimated_input_tokens`) with a WARN line noting the estimate.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from ...adapters.protocol import Adapter, Message, WireResponse, capabilities_of
from ...core.findings import RuleInfo
from ...formats.canonical.status import status_of_stop
from ...wire import equivalence
from ...wire import schemas as wire_schemas
from ...wire.api import Framing, Located, WireApi
from ...wire.facts import history_index
from ...wire.framing import FramingError, SseDecoder
from .. import rules as R
from ..capture import capture_warnings
from ..interactions import Interaction
from ..outcome import AdapterUnderTest, Outcome
from ..scripts import JPEG_1PX, PNG_1PX, PNG_2PX, PNG_3PX, Builder, mark, tools_named
from .common import (
    Check,
    Env,
    check,
    compared_reason,
    crash,
    ctx_for,
    drop_problem,
    locates,
    names_any,
    opts,
    outcome,
    parse_response,
    parse_stream,
    read_back,
    render,
    result_blocks,
    session_for,
    token_counts,
    wire_api_of,
    wire_name,
)
from .streams import wire_values

IMAGE_URL = "https://example.com/turnspec/cat.png"
USAGE_KEYS = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_read", "cached_input_tokens"),
    ("cache_write", "cache_creation_input_tokens"),
)


def _images_script(a: Adapter, api: WireApi) -> tuple[Builder, list[dict[str, Any]], list[int]]:
    """Two user turns with a reply between: the first has two base64 PNGs, a base64 JPEG
    when the adapter accepts JPEG (a second media type: a writer or reader that assumes one
    type shows; `data:<media type>;base64,` on OpenAI's wires) and a url image where the API
    carries urls; the second one more PNG; all the images differ. Returns the builder, the
    image blocks in order and the user turn (0 or 1) each block belongs to."""

    def b64(data: str, media: str = "image/png") -> dict[str, Any]:
        return {"type": "image", "source": {"kind": "base64", "data": data}, "media_type": media}

    b = Builder()
    first: list[dict[str, Any]] = [b64(PNG_2PX), b64(PNG_1PX)]
    if "image/jpeg" in (capabilities_of(a).get("accepted_image_media_types") or ()):
        first.append(b64(JPEG_1PX, "image/jpeg"))
    if api.carries.images_url:
        first.append({"type": "image", "source": {"kind": "url", "data": IMAGE_URL}, "media_type": "image/png"})
    second = [b64(PNG_3PX)]
    b.add("user", [{"type": "text", "text": mark("look")}, *first])
    b.assistant(a.provider, "conformance-model", [{"type": "text", "text": mark("seen")}])
    b.add("user", [{"type": "text", "text": mark("look-again")}, *second])
    return b, first + second, [0] * len(first) + [1] * len(second)


# what TC901 enforces, as its catalogue entry states it
IMAGES_SURVIVE = f"{R.IMAGES_KEPT.section}: {R.IMAGES_KEPT.summary.lower()}"


def _same_image(want: dict[str, Any], got: dict[str, Any], api: WireApi | None = None) -> str | None:
    """None when `got` (an image located on the wire or read back) is `want`: base64 data
    compared up to the record's declared equivalences (the bytes, where it declares
    `image.source.data` base64 in either alphabet)."""
    src = want["source"]
    if got.get("kind") != src["kind"]:
        return f"{src['kind']} image became {got.get('kind')}"
    if src["kind"] == "base64":
        field = "image.source.data"
        if equivalence.canonical_key(api, field, got.get("data")) != equivalence.canonical_key(api, field, src["data"]):
            return "base64 bytes differ"
        if got.get("media_type") not in (None, want["media_type"]):
            return f"media type {want['media_type']} became {got.get('media_type')}"
    elif got.get("url", got.get("data")) != src["data"]:
        return f"url {src['data']} became {got.get('url', got.get('data'))}"
    return None


def _image_turns(api: WireApi, pointers: list[str], turns: list[int]) -> list[str]:
    """Images of the first user turn sit in history entries before those of the second."""
    first: list[int] = []
    second: list[int] = []
    for p, t in zip(pointers, turns, strict=True):
        k = history_index(api, p)
        if k is None:
            return [f"image at {p} is outside the /{api.history_key} history"]
        (first if t == 0 else second).append(k)
    if first and second and max(first) >= min(second):
        return [
            f"images of user turn 1 at /{api.history_key} entries {first}, of turn 2 at {second}: "
            "an image must ride with the message that carries it"
        ]
    return []


@check(R.IMAGES_KEPT)
def images(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a, api = s.adapter, wire_api_of(s.adapter)
        cap = "supports_images"
        if not capabilities_of(a).get(cap):
            yield outcome(R.IMAGES_KEPT, s, "skip", "images", "supports_images is false")
            continue
        if api is None:
            yield outcome(R.IMAGES_KEPT, s, "skip", "images", f"no WireApi record named {a.wire_api!r}")
            continue
        b, blocks, turns = _images_script(a, api)
        try:
            with capture_warnings():
                wire = render(a, b.messages, [], opts(a))
        except Exception as exc:
            yield outcome(R.IMAGES_KEPT, s, "fail", "images", crash(exc), cap)
            continue
        located = api.probes.images(wire.body) if isinstance(wire.body, dict) else []
        on_wire = [x.value for x in located]
        problems = []
        if len(on_wire) != len(blocks):
            problems.append(f"{len(on_wire)} images in {api.name}'s fields, want {len(blocks)}")
        else:
            problems += [p for w, g in zip(blocks, on_wire, strict=True) if (p := _same_image(w, g or {}, api))]
            problems += _image_turns(api, [x.pointer for x in located], turns)
        yield outcome(
            R.IMAGES_KEPT, s, "fail" if problems else "pass", "images on the wire", _image_reason(api, problems), cap
        )
        try:
            back = read_back(a, wire, b.session_id)
        except Exception as exc:
            yield outcome(R.IMAGES_KEPT, s, "fail", "images read back", crash(exc), cap)
            continue
        if back is None:
            continue
        got = [x for m in back.messages for x in m["content"] if x.get("type") == "image"]
        rb = []
        if len(got) != len(blocks):
            rb.append(f"{len(got)} images read back, want {len(blocks)}")
        # the user turn each image is read back in: the one whose text is the turn's marker
        marks = [mark("look"), mark("look-again")]
        read_turns = [
            next((k for k, t in enumerate(marks) if t in texts), None)
            for m in back.messages
            for texts in [[x.get("text") for x in m["content"] if x.get("type") == "text"]]
            for x in m["content"]
            if x.get("type") == "image"
        ]
        if len(got) == len(blocks) and read_turns != turns:
            rb.append(f"images read back in user turns {read_turns}, sent in {turns} (an image stays with its message)")
        for w, g in zip(blocks, got, strict=False):
            p = _same_image(w, {**g.get("source", {}), "media_type": g.get("media_type")}, api)
            if p:
                rb.append(p)
            elif g.get("media_type") != w["media_type"]:
                rb.append(f"media type {w['media_type']} read back as {g.get('media_type')}")
        yield outcome(R.IMAGES_KEPT, s, "fail" if rb else "pass", "images read back", _image_reason(api, rb), cap)
        if capabilities_of(a).get("supports_tools"):
            yield _tool_result_image(s, a, api)


def _tool_result_image(s: AdapterUnderTest, a: Adapter, api: WireApi) -> Outcome:
    """An image in a tool result is in the record's image fields and read back inside the
    result, or dropped with the §7.3 WARN line (APIs whose tool results are text only). If
    it fails: the result's non-text blocks are flattened or skipped without `drop`."""
    b = Builder()
    b.add("user", [{"type": "text", "text": mark("look")}])
    tid = b.tool_id()
    b.assistant(a.provider, "conformance-model", [{"type": "tool_use", "id": tid, "name": "read_file", "input": {}}])
    image = {"type": "image", "source": {"kind": "base64", "data": PNG_2PX}, "media_type": "image/png"}
    result = {"type": "tool_result", "tool_use_id": tid, "content": [{"type": "text", "text": "see"}, image]}
    msg = b.add("tool", [result], parent_tool_use_id=tid)
    label, cap = "image in a tool result", "supports_images"
    try:
        with capture_warnings() as recs:
            wire = render(a, b.messages, tools_named(b.messages), opts(a))
        on_wire = [x.value for x in api.probes.images(wire.body)] if isinstance(wire.body, dict) else []
        if not on_wire:
            p = drop_problem(recs, "image", msg, a)
            return outcome(
                R.IMAGES_KEPT, s, "fail" if p else "pass", label, f"not on the wire and {p}" if p else "", cap
            )
        back = read_back(a, wire, b.session_id)
    except Exception as exc:
        return outcome(R.IMAGES_KEPT, s, "fail", label, crash(exc), cap)
    problem = _same_image(image, on_wire[0] or {}, api) if len(on_wire) == 1 else f"{len(on_wire)} images on the wire"
    if problem is None and back is not None:
        got = result_blocks(back.messages, "image")
        problem = None if len(got) == 1 else f"{len(got)} images read back inside tool results, want 1"
    return outcome(
        R.IMAGES_KEPT, s, "fail" if problem else "pass", label, _image_reason(api, [problem] if problem else []), cap
    )


def _image_reason(api: WireApi | None, problems: list[str]) -> str:
    """A failing TC901 reason: the problems, the record's equivalences it compared up to and
    the rule it enforces."""
    return compared_reason(api, problems, IMAGES_SURVIVE)


@check(R.TOOL_ERROR_KEPT)
def tool_errors(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a, api = s.adapter, wire_api_of(s.adapter)
        if not capabilities_of(a).get("supports_tools"):
            yield outcome(R.TOOL_ERROR_KEPT, s, "skip", "tool errors", "supports_tools is false")
            continue
        if api is None:
            yield outcome(R.TOOL_ERROR_KEPT, s, "skip", "tool errors", f"no WireApi record named {a.wire_api!r}")
            continue
        b = Builder()
        b.add("user", [{"type": "text", "text": mark("go")}])
        ids = [b.tool_id(), b.tool_id()]
        uses = [
            {"type": "tool_use", "id": i, "name": "read_file", "input": {"path": mark(str(k))}}
            for k, i in enumerate(ids)
        ]
        b.assistant(a.provider, "conformance-model", uses)
        for i, err in zip(ids, (True, False), strict=True):
            b.add(
                "tool",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": i,
                        "content": [{"type": "text", "text": "out"}],
                        "is_error": err,
                    }
                ],
                parent_tool_use_id=i,
            )
        try:
            with capture_warnings() as records:
                wire = render(a, b.messages, tools_named(b.messages), opts(a))
        except Exception as exc:
            yield outcome(R.TOOL_ERROR_KEPT, s, "fail", "tool errors", crash(exc), "supports_tools")
            continue
        if not api.carries.tool_result_error:
            in_band = getattr(a, "tool_errors_in_band", None)
            if isinstance(in_band, str) and in_band:
                yield _error_kept_in_band(s, api, a, b, wire.body, records, in_band)
            elif _carries_error(a, b, wire.body) is True:
                # undeclared, yet the error reaches the request (pydantic-ai's documented
                # `{"error": ...}` wrapping for a provider without an error channel): represented,
                # so nothing is dropped and §7.3 owes no WARN line
                yield _error_kept_in_band(s, api, a, b, wire.body, records, "in the result content")
            else:
                yield _error_flag_warned(s, api, records)
            continue
        flags = [bool(x.value) for x in api.probes.tool_result_errors(wire.body)] if isinstance(wire.body, dict) else []
        problems = [] if flags == [True, False] else [f"{api.name} error flags {flags}, want [True, False]"]
        try:
            back = read_back(a, wire, b.session_id)
        except Exception as exc:
            problems.append(f"reading back {crash(exc)}")
            back = None
        if back is not None:
            got = [
                bool(x.get("is_error")) for m in back.messages for x in m["content"] if x.get("type") == "tool_result"
            ]
            if got != [True, False]:
                problems.append(f"is_error read back as {got}, want [True, False]")
        yield outcome(
            R.TOOL_ERROR_KEPT, s, "fail" if problems else "pass", "tool errors", "; ".join(problems), "supports_tools"
        )


def _unmarked(b: Builder) -> list[Message]:
    """`b`'s history with no tool result marked an error."""
    return [
        {**m, "content": [{**x, "is_error": False} if x.get("type") == "tool_result" else x for x in m["content"]]}
        for m in b.messages
    ]


def _carries_error(a: Any, b: Builder, body: Any) -> bool | None:
    """Whether the request `body` rendered from `b` carries its `is_error` marks: the same
    history with none marked renders another request, and rendering it again gives `body`
    (None when rendering raises or is not repeatable: the question cannot be answered)."""
    try:
        with capture_warnings():
            unmarked = render(a, _unmarked(b), tools_named(_unmarked(b)), opts(a)).body
            again = render(a, b.messages, tools_named(b.messages), opts(a)).body
    except Exception:
        return None
    return None if again != body else unmarked != body


def _error_kept_in_band(
    s: AdapterUnderTest,
    api: WireApi,
    a: Any,
    b: Builder,
    body: Any,
    records: list[logging.LogRecord],
    how: str,
) -> Outcome:
    """TC902 where the wire has no tool-result error flag and the adapter declares
    (`tool_errors_in_band`) that it keeps `is_error` in the result's content. Canonical spec
    §7.3: "When canonical content cannot be represented in a provider's wire format, the
    adapter MUST: 1. Drop the unrepresentable content (default). 2. Write a structured log
    entry at WARN level": an error carried in band is represented, so nothing is dropped and
    no WARN line is owed. What is checked is that it is there: the same history with neither
    result marked an error renders a different request ("3. Never silently corrupt"). If it
    fails: render the error into the result content as declared, or declare nothing and log
    the drop."""
    label = "tool errors in band"
    plain = _unmarked(b)
    try:
        with capture_warnings():
            unmarked = render(a, plain, tools_named(plain), opts(a)).body
            again = render(a, b.messages, tools_named(b.messages), opts(a)).body
    except Exception as exc:
        return outcome(R.TOOL_ERROR_KEPT, s, "fail", label, crash(exc), "supports_tools")
    if again != body:
        why = "the same history renders different requests, so where the error went cannot be told"
        return outcome(R.TOOL_ERROR_KEPT, s, "skip", label, why)
    if unmarked == body:
        why = (
            f"declares tool_errors_in_band ({how}) but the request is the same with is_error false: the error "
            f"is lost ({api.name} has no flag; canonical spec §7.3: drop with a WARN line or represent it)"
        )
        return outcome(R.TOOL_ERROR_KEPT, s, "fail", label, why, "supports_tools")
    warned = _flag_warnings(records)
    note = f"; {len(warned)} WARNING lines name is_error though nothing was dropped" if warned else ""
    return outcome(
        R.TOOL_ERROR_KEPT,
        s,
        "pass",
        label,
        f"is_error kept in the result content ({how}); canonical spec §7.3 asks a WARN only for a drop{note}",
        "supports_tools",
    )


# how a WARN entry may name the tool-result error flag it could not send
_ERROR_FLAG = ("is_error", "error flag", "error status", "is error")


def _flag_warnings(records: list[logging.LogRecord]) -> list[logging.LogRecord]:
    """The WARNING (or worse) records that name the tool-result error flag (`_ERROR_FLAG`)."""
    return [r for r in records if r.levelno >= logging.WARNING and names_any(r, *_ERROR_FLAG)]


def _error_flag_warned(s: AdapterUnderTest, api: WireApi, records: list[logging.LogRecord]) -> Outcome:
    """TC902 where the wire has no tool-result error flag (its record says so): §7.3 forbids
    silent loss, so the result sent with `is_error` true logs a WARNING naming the flag
    (`is_error`, "error flag", "error status"; any wording). If it fails: log the field as dropped where the tool
    result is rendered (the `field_dropped` line of the reference adapters)."""
    warned = _flag_warnings(records)
    msg = (
        ""
        if warned
        else f"the tool result sent with is_error true was sent without its error flag ({api.name} has none) "
        "and no WARNING entry names the loss (canonical §7.3: drop with a structured WARN entry)"
    )
    return outcome(R.TOOL_ERROR_KEPT, s, "fail" if msg else "pass", "tool errors warned", msg, "supports_tools")


DISJOINT = "disjoint (input excludes cache reads)"
INCLUSIVE = "the contract's literal mapping (input includes cache reads)"


def _usage_problems(
    recorded: Any, parsed: Any, api: WireApi | None = None, readings: set[str] | None = None
) -> list[str]:
    """What differs between the parsed usage and the recorded one; empty when they agree.

    The record's usage is disjoint (cache reads taken out of input, as §7.1's cost formula
    prices them apart). Where the provider's own input count includes cache reads
    (`WireApi.cached_in_input`: OpenAI's `prompt_tokens`, Gemini's `promptTokenCount`),
    contract §7.2's literal mapping (`prompt_tokens` -> `input_tokens`) is accepted too; the
    reading a case matched is added to `readings` (an adapter must keep to one).
    """
    if not isinstance(recorded, dict):
        return []
    if parsed is None:
        return ["the recording has usage, the parsed message none"]
    usage = token_counts(parsed)  # a mapping or a TokenUsage object, absent counts 0
    if usage is None:
        return [f"the parsed usage {parsed!r:.80} holds no token counts (contract §7.1 TokenUsage: int counts)"]

    def problems(want: dict[str, Any]) -> list[str]:
        return [
            f"{mine}: parsed {usage.get(mine, 0)}, recorded {want.get(theirs, 0)}"
            for theirs, mine in USAGE_KEYS
            if usage.get(mine, 0) != int(want.get(theirs, 0) or 0)
        ]

    disjoint = problems(recorded)
    cached = int(recorded.get("cache_read", 0) or 0)
    if api is None or not api.cached_in_input or not cached:
        return disjoint
    inclusive = problems({**recorded, "input": int(recorded.get("input", 0) or 0) + cached})
    if readings is not None:
        readings.update(r for r, p in ((DISJOINT, disjoint), (INCLUSIVE, inclusive)) if not p)
    if disjoint and inclusive:
        return [f"{'; '.join(disjoint)} (nor {INCLUSIVE}: {'; '.join(inclusive)})"]
    return []


def _cache_cap(recorded: Any) -> str | None:
    if isinstance(recorded, dict) and (recorded.get("cache_read") or recorded.get("cache_write")):
        return "supports_prompt_caching"
    return None


@check(R.STOP_REASON, R.USAGE_RECORDED)
def recorded_semantics(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        readings: set[str] = set()
        yield from _recorded_semantics(env, s, a, readings)
        if len(readings) > 1:
            why = f"some cases follow {DISJOINT}, others {INCLUSIVE}: an adapter keeps to one reading"
            yield outcome(R.USAGE_RECORDED, s, "fail", "usage reading", why, "supports_prompt_caching")


def _recorded_semantics(env: Env, s: AdapterUnderTest, a: Adapter, readings: set[str]) -> Iterator[Outcome]:
    for it in env.recorded(s):
        api = it.wire
        if it.status >= 400 or api is None or api.name != wire_name(a):
            continue
        sid = session_for("sem", it.label)
        if it.is_stream:
            yield from _stream_semantics(s, a, api, it, sid, readings)
            continue
        if not isinstance(it.response_json, dict):
            continue
        try:
            msg: Message = parse_response(a, WireResponse(it.response_json), ctx_for(sid))
        except Exception:
            continue  # TC101 reports it
        yield from _status(s, api, it, msg)
        yield from _refusals(s, api, it, api.probes.response_refusals(it.response_json), msg.get("content"))
        recorded = api.probes.response_usage(it.response_json)
        if recorded is None:
            yield outcome(R.USAGE_RECORDED, s, "skip", it.label, f"no usage located in the recorded {api.name} body")
        elif it.synthetic and not _cache_cap(recorded):
            yield outcome(R.USAGE_RECORDED, s, "skip", it.label, "hand-written cassette without cache accounting")
        else:
            p = _usage_problems(recorded, (msg.get("metadata") or {}).get("usage"), api, readings)
            yield outcome(R.USAGE_RECORDED, s, "fail" if p else "pass", it.label, "; ".join(p), _cache_cap(recorded))
    if not locates(wire_api_of(a), "response_refusals"):
        why = f"the {a.wire_api} record locates no refusal content (its docs define none, or it does not say)"
        yield outcome(R.STOP_REASON, s, "skip", "refusals", why)


def _status(s: AdapterUnderTest, api: WireApi, it: Interaction, msg: Message) -> Iterator[Outcome]:
    """TC903 on a non-streamed response: the status its recorded stop reason implies."""
    raw = api.probes.response_stop_reason(it.response_json) if isinstance(it.response_json, dict) else None
    want = api.stop_reasons.get(str(raw)) if raw is not None else None
    if want is None:
        why = f"no stop reason with a canonical mapping located in the recorded {api.name} body"
        yield outcome(R.STOP_REASON, s, "skip", f"{it.label} (status)", why)
        return
    status = status_of_stop(want)
    also = {status_of_stop(x) for x in api.stop_reasons_also.get(str(raw), ())}
    got = (msg.get("metadata") or {}).get("status", "complete") if isinstance(msg, dict) else None
    why = (
        ""
        if got == status or got in also
        else f"metadata.status {got!r}, but the recording's {raw!r} is stop reason {want!r}: status {status!r} "
        f'(canonical §4.3 MessageStatus: ERROR "generation failed"; contract §3.3 StopReason)'
    )
    yield outcome(R.STOP_REASON, s, "fail" if why else "pass", f"{it.label} (status)", why)


def _refusals(
    s: AdapterUnderTest, api: WireApi, it: Interaction, recorded: list[Any] | None, content: Any
) -> Iterator[Outcome]:
    """TC903: each refusal text the record locates is in the reply's text (a refusal read as
    empty text, or dropped, loses what the provider said). How it is carried is the adapter's
    choice: a text block of its own, joined to other text, or marked ("Refusal: ...")."""
    texts = [x.value if isinstance(x, Located) else x for x in recorded or []]
    if not texts:
        return
    got = (
        [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        if isinstance(content, list)
        else []
    )
    whole = "".join(str(g) for g in got)
    lost = [t for t in texts if not any(str(t) in str(g) for g in got) and str(t) not in whole]
    why = (
        f"the recorded refusal {lost[0]!r:.80} is in no text block of the reply (parsed texts "
        f'{[str(g)[:40] for g in got]}); contract §3.3: content is "the assistant\'s reply blocks", and the '
        "canonical format has no refusal block, so the refusal is the reply's text"
        if lost
        else ""
    )
    yield outcome(R.STOP_REASON, s, "fail" if why else "pass", f"{it.label} (refusal)", why)


def _stream_semantics(
    s: AdapterUnderTest, a: Adapter, api: WireApi, it: Interaction, sid: str, readings: set[str]
) -> Iterator[Outcome]:
    values = wire_values(it)
    if values is None:
        return  # the stream checks report undecodable streams
    try:
        events, _ = parse_stream(a, it.response_body, ctx_for(sid))
    except Exception:
        return
    done = next((e for e in events if e.get("type") == "message_complete"), None)
    if done is None:
        return  # TC601 reports it
    yield from _refusals(s, api, it, api.probes.stream_refusals(values), done.get("final_content"))
    raw = api.probes.stream_stop_reason(values)
    want = api.stop_reasons.get(str(raw)) if raw is not None else None
    if raw is None:
        yield outcome(R.STOP_REASON, s, "skip", it.label, f"no stop reason located in the recorded {api.name} stream")
    elif want is None:
        yield outcome(
            R.STOP_REASON, s, "skip", it.label, f"{api.name} stop reason {raw!r} has no canonical mapping in the record"
        )
    else:
        also = api.stop_reasons_also.get(str(raw), ())
        ok = done.get("stop_reason") == want or done.get("stop_reason") in also
        either = " or ".join(repr(x) for x in (want, *also))
        msg = (
            ""
            if ok
            else f"streamed stop_reason {done.get('stop_reason')!r}, recorded {raw!r} = {either} "
            "(contract §3.3: stop_reason is the StopReason mapped from the provider's)"
        )
        yield _held_stream(R.STOP_REASON, s, api, it, values, msg, "supports_streaming")
    recorded = api.probes.stream_usage(values)
    if recorded is None:
        yield outcome(R.USAGE_RECORDED, s, "skip", it.label, f"no usage located in the recorded {api.name} stream")
        return
    p = _usage_problems(recorded, done.get("usage"), api, readings)
    yield _held_stream(R.USAGE_RECORDED, s, api, it, values, "; ".join(p), _cache_cap(recorded))


def _held_stream(
    rule: RuleInfo, s: AdapterUnderTest, api: WireApi, it: Interaction, values: list[Any], why: str, cap: str | None
) -> Outcome:
    """A streamed case's outcome: pass, fail with `why`, or, where the recorded events break
    the event flow the API's docs lay down (`stream_departure`), a skip with both reasons: a
    reader holding to the docs ends such a stream in error (contract §6.5), so the end the
    recording states is no measure of it."""
    departs = (_unterminated_last_event(it) or api.probes.stream_departure(values)) if why else None
    if departs is not None:
        return outcome(
            rule, s, "skip", it.label, f"{why}; but the recording departs from its API's docs ({departs})", cap
        )
    return outcome(rule, s, "fail" if why else "pass", it.label, why, cap)


def _unterminated_last_event(it: Interaction) -> str | None:
    """The departure of a recorded SSE stream whose last event has no blank line after it
    (Azure OpenAI's chat streams in the Azure SDK's session records end `data: [DONE]\\n`),
    described; None for any other stream. WHATWG HTML §9.2.6 dispatches an event only at a
    blank line, and at the end of the stream "any pending data must be discarded": a reader
    holding to it never sees that event, and ends the stream as cut (contract §6.5)."""
    if it.framing is not Framing.SSE:
        return None
    decoder = SseDecoder()
    try:
        decoder.feed(it.response_body)
        pending = decoder.feed(b"\n\n")  # what a blank line at the end would have dispatched
    except FramingError:
        return None
    if not pending:
        return None
    return (
        f"its last event, `data: {pending[-1].data[:40]}`, has no blank line after it, and an SSE "
        "event is dispatched only at a blank line (WHATWG HTML §9.2.6)"
    )


@check(R.STREAM_USAGE_REQUESTED)
def stream_usage_requested(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        api = wire_api_of(a)
        cap = "supports_streaming"
        if api is None:
            yield outcome(R.STREAM_USAGE_REQUESTED, s, "skip", "stream", f"no WireApi record named {a.wire_api!r}", cap)
            continue
        if api.stream_usage_request is None:
            why = f"{api.name} reports usage on every stream (its record names no field to ask for it)"
            yield outcome(R.STREAM_USAGE_REQUESTED, s, "skip", "stream", why, cap)
            continue
        b = Builder()
        b.add("user", [{"type": "text", "text": mark("count me")}])
        cases: tuple[tuple[str, dict[str, Any]], ...] = (
            ("stream", {}),
            ("stream with other stream options", {"stream_options": {}}),
        )
        for label, extra in cases:
            try:
                with capture_warnings():
                    body = render(a, b.messages, [], opts(a, stream=True, extra=extra)).body
            except Exception as exc:
                yield outcome(R.STREAM_USAGE_REQUESTED, s, "fail", label, crash(exc), cap)
                continue
            asked = api.stream_usage_requested(body) if isinstance(body, dict) else False
            pointer, want = api.stream_usage_request
            msg = "" if asked else f"streaming request lacks {pointer} = {want!r}: {api.name} then reports no usage"
            yield outcome(R.STREAM_USAGE_REQUESTED, s, "pass" if asked else "fail", label, msg, cap)


PREFLIGHT_ESTIMATE = 4321  # what the harness says estimate_input_tokens gave (TC906)


def _noted(records: list[logging.LogRecord]) -> bool:
    return any(
        r.levelno >= logging.WARNING and "estimat" in f"{r.getMessage()} {getattr(r, 'event', '')}".lower()
        for r in records
    )


@check(R.USAGE_ESTIMATED)
def missing_usage(env: Env) -> Iterator[Outcome]:
    """TC906 (contract §7.2): "If usage is unavailable ... the adapter MAY set input_tokens and
    output_tokens to estimate_input_tokens()'s output and the streamed-token count
    respectively, with a WARN log noting the estimation." On each recording whose usage the
    record's probe does not find, parsed with a pre-flight estimate at hand: no usage passes
    (the estimate is a MAY); usage passes only with the harness's estimate as input_tokens
    and a WARNING record that notes the estimate (its message or `event` says "estimat")."""
    for s in env.subjects:
        a = s.adapter
        judged = 0
        for it in env.recorded(s):
            api = it.wire
            if it.status >= 400 or api is None or api.name != wire_name(a):
                continue
            ctx = replace(ctx_for(session_for("nousage", it.label)), estimated_input_tokens=PREFLIGHT_ESTIMATE)
            usage: Any = None
            try:
                if it.is_stream:
                    values = wire_values(it)
                    if (
                        values is None
                        or not locates(api, "stream_usage")
                        or api.probes.stream_usage(values) is not None
                    ):
                        continue
                    with capture_warnings() as records:
                        events, _ = parse_stream(a, it.response_body, ctx)
                    done = next((e for e in events if e.get("type") == "message_complete"), None)
                    if done is None:
                        continue  # TC601 reports it
                    usage = done.get("usage")
                else:
                    body = it.response_json
                    if not isinstance(body, dict) or not locates(api, "response_usage"):
                        continue
                    if api.probes.response_usage(body) is not None:
                        continue
                    with capture_warnings() as records:
                        msg = parse_response(a, WireResponse(body), ctx)
                    usage = (msg.get("metadata") or {}).get("usage")
            except Exception:
                continue  # TC101 / TC601 report it
            problems = []
            if usage:
                counts = token_counts(usage)  # a mapping or a TokenUsage object
                if counts is None or counts["input_tokens"] != PREFLIGHT_ESTIMATE:
                    got = counts["input_tokens"] if counts is not None else usage
                    problems.append(
                        f"input_tokens {got!r} reported for a response without usage; the estimate handed over was "
                        f"{PREFLIGHT_ESTIMATE} (contract §7.2: estimate_input_tokens()'s output)"
                    )
                if not _noted(records):
                    problems.append("usage estimated without a WARN line noting the estimation (contract §7.2)")
            judged += 1
            yield outcome(R.USAGE_ESTIMATED, s, "fail" if problems else "pass", it.label, "; ".join(problems))
        if not judged:
            yield outcome(
                R.USAGE_ESTIMATED, s, "skip", "-", "every recording carries usage (or the record locates none)"
            )


REQUESTED_MODEL = "conformance-requested-model"  # what the harness says was asked for (TC907)


def _served(provider: str, got: Any, named: str) -> bool:
    return got in (f"{provider}:{named}", f"{provider}:{named.removeprefix('models/')}")


@check(R.SERVED_MODEL)
def served_model(env: Env) -> Iterator[Outcome]:
    """TC907 (contract §3.3, CanonicalResponse.model: "the actual model that served the
    call"): on each recording whose response (or stream) names a model, located by the
    record's `response_model` / `stream_model` probe, the parsed message's
    `metadata.model` (a stream's start event `model`) is `<provider>:<that name>` while the
    request context names another. A stream with no start event (canonical §7.4 defines
    none) leaves the model to the harness and is not judged."""
    for s in env.subjects:
        a = s.adapter
        judged = 0
        for it in env.recorded(s):
            api = it.wire
            if it.status >= 400 or api is None or api.name != wire_name(a):
                continue
            ctx = ctx_for(session_for("model", it.label), model=f"{a.provider}:{REQUESTED_MODEL}")
            try:
                if it.is_stream:
                    values = wire_values(it)
                    named = api.probes.stream_model(values) if values is not None else None
                    if named is None:
                        continue
                    events, _ = parse_stream(a, it.response_body, ctx)
                    start = next((e for e in events if e.get("type") == "message_start"), None)
                    if start is None:
                        continue
                    got, where = start.get("model"), "message_start.model"
                else:
                    body = it.response_json
                    named = api.probes.response_model(body) if isinstance(body, dict) else None
                    if named is None:
                        continue
                    msg = parse_response(a, WireResponse(body), ctx)
                    got, where = (msg.get("metadata") or {}).get("model"), "metadata.model"
            except Exception:
                continue  # TC101 / TC601 report it
            judged += 1
            ok = _served(a.provider, got, str(named))
            why = "" if ok else f"{where} is {got!r}; the response names {named!r} as the model that served the call"
            yield outcome(
                R.SERVED_MODEL, s, "pass" if ok else "fail", it.label, why + (" (contract §3.3)" if why else "")
            )
        if not judged:
            yield outcome(
                R.SERVED_MODEL,
                s,
                "skip",
                "-",
                "no recording names the model that served it (or the record locates none)",
            )


CHECKS: tuple[Check, ...] = (
    images,
    tool_errors,
    recorded_semantics,
    stream_usage_requested,
    missing_usage,
    served_model,
)


def _squeezed(text: str) -> str:
    return "".join(text.split())


def _text_lost(recorded: list[str], content: Any, kind: str = "text") -> str:
    """Why the reply's `kind` blocks (`content`; text, or thinking for the thinking text) do
    not hold the recorded texts, in order, or "". Compared with whitespace left out: an
    adapter may join the wire's pieces into one block, put a line between them, mark a
    refusal, or trim a reply's ends, and a reader loses nothing by it; a piece changed, cut,
    dropped or moved before another is lost."""
    got = (
        [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == kind]
        if isinstance(content, list)
        else []
    )
    hay = _squeezed("".join(str(g) for g in got))
    at = 0
    for piece in recorded:
        want = _squeezed(piece)
        if not want:
            continue
        k = hay.find(want, at)
        if k < 0:
            near = " (it is there, but before the text that precedes it on the wire)" if want in hay else ""
            return (
                f"the recorded {'text' if kind == 'text' else 'thinking text'} {piece!r:.60} is not in the "
                f"reply's {kind} blocks{near} (parsed texts "
                f'{[str(g)[:40] for g in got]}); contract §3.3: content is "the assistant\'s reply blocks, in order"'
            )
        at = k + len(want)
    return ""


@check(R.REPLY_TEXT)
def reply_text(env: Env) -> Iterator[Outcome]:
    """TC908 (contract §3.3, CanonicalResponse.content: "the assistant's reply blocks, in
    order"): on each recorded reply of the adapter's API, the answer texts the record locates
    (`response_text` in a body, `stream_text` in a stream, an oracle read from the wire, not
    from the adapter) are in the parsed message's text blocks (a stream's
    `message_complete.final_content`), in order. TC606 holds a stream to its parse and TC605
    the deltas to the final content; this holds both to the recording, so a reading that
    alters the text the same way in both (a case changed, a piece cut or dropped) fails.
    Where the record locates the reply's thinking text (`response_thinking_text`) and its
    API carries thinking text, that text is in the thinking blocks the same way: thought
    parts dropped by the parse and the stream alike fail here, where TC606 sees no
    difference."""
    said = "locates no reply text (it does not say where the answer is)"
    yield from _recorded_replies(env, R.REPLY_TEXT, ("response_text", "stream_text"), ("reply text", said), _text_case)


def _recorded_replies(
    env: Env,
    rule: RuleInfo,
    probes: tuple[str, ...],
    missing: tuple[str, str],
    case: Callable[[AdapterUnderTest, Adapter, WireApi, Interaction], Iterator[Outcome]],
) -> Iterator[Outcome]:
    """`case` on each recorded 2xx reply of each subject's API (TC908, TC909); one skip
    (`missing`: its subject and what the record does not say) where the record has none of
    `probes`."""
    for s in env.subjects:
        a = s.adapter
        api = wire_api_of(a)
        if not any(locates(api, p) for p in probes):
            yield outcome(rule, s, "skip", missing[0], f"the {a.wire_api} record {missing[1]}")
            continue
        for it in env.recorded(s):
            if it.status < 400 and it.wire is not None and it.wire.name == wire_name(a):
                yield from case(s, a, it.wire, it)


_UNREAD = object()  # the adapter read no reply (TC101 / TC601 report why)


def _reply_content(a: Adapter, it: Interaction, session: str) -> Any:
    """The blocks the adapter reads from a recorded reply: its parse, or its stream's
    `message_complete.final_content`; `_UNREAD` when it raised or the stream never completed."""
    ctx = ctx_for(session_for(session, it.label))
    try:
        if it.is_stream:
            events, _ = parse_stream(a, it.response_body, ctx)
            done = next((e for e in events if e.get("type") == "message_complete"), None)
            return _UNREAD if done is None else done.get("final_content")
        return parse_response(a, WireResponse(it.response_json), ctx).get("content")
    except Exception:
        return _UNREAD


def _held(rule: RuleInfo, s: AdapterUnderTest, api: WireApi, it: Interaction, why: str) -> Outcome:
    """The case's outcome: pass, fail with `why`, or, where the recording departs from its
    API's docs, a skip with both reasons (the docs do not say how to read what the server
    sent instead)."""
    departs = _departure(api, it) if why else None
    if departs is not None:
        return outcome(rule, s, "skip", it.label, f"{why}; but the recording departs from its API's docs ({departs})")
    return outcome(rule, s, "fail" if why else "pass", it.label, why)


def _text_case(s: AdapterUnderTest, a: Adapter, api: WireApi, it: Interaction) -> Iterator[Outcome]:
    if it.is_stream:
        values = wire_values(it)
        recorded = api.probes.stream_text(values) if values is not None else None
    elif isinstance(it.response_json, dict):
        recorded = [x.value for x in api.probes.response_text(it.response_json) if isinstance(x.value, str)]
    else:
        recorded = None
    thought = _recorded_thinking(api, it)
    has_text = bool(recorded) and any(_squeezed(t) for t in recorded or [])
    if not has_text and not thought:
        return  # a reply with no answer text nor thinking (a call alone): nothing to find
    content = _reply_content(a, it, "text")
    if content is not _UNREAD:
        lost = _text_lost(recorded or [], content) if has_text else ""
        if not lost and thought:
            lost = _text_lost(thought, content, "thinking")
        yield _held(R.REPLY_TEXT, s, api, it, lost)


def _recorded_thinking(api: WireApi, it: Interaction) -> list[str]:
    """The thinking text a recorded reply carries, where the record locates it
    (`response_thinking_text`; a stream's chunks when each is a response, as Gemini's are)
    and its API carries thinking text; [] else."""
    if not api.carries.thinking_text:
        return []
    values = (wire_values(it) or []) if it.is_stream else [it.response_json]
    found = [
        str(x.value)
        for v in values
        if isinstance(v, dict)
        for x in api.probes.response_thinking_text(v)
        if isinstance(x.value, str)
    ]
    return found if any(_squeezed(t) for t in found) else []


def _departure(api: WireApi, it: Interaction) -> str | None:
    """The first departure from the API's docs the recorded reply (or a stream event of it)
    makes that its wire schema tolerates (`x-tolerate`), described; None when it makes none."""
    kind = "stream-event" if it.is_stream else "response"
    reader = wire_schemas.reader(api, kind)
    if reader is None:
        return None
    values = (wire_values(it) or []) if it.is_stream else [it.response_json]
    for value in values:
        found = reader.read(value).departures
        if found:
            return found[0].describe()
    return api.probes.stream_departure(values) if it.is_stream else None


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _calls_lost(recorded: list[tuple[str, Any]], content: Any) -> str:
    """Why the reply's tool_use blocks (`content`) are not the recorded calls, in order, or
    "": each call's name, and its input where the wire's is a JSON object."""
    got = (
        [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"] if isinstance(content, list) else []
    )
    said = 'contract §3.3: content is "the assistant\'s reply blocks, in order"'
    if len(got) != len(recorded):
        names = [n for n, _ in recorded]
        return f"the recording carries {len(recorded)} tool call(s) {names}, the reply {len(got)}; {said}"
    for k, ((name, given), block) in enumerate(zip(recorded, got, strict=True)):
        if block.get("name") != name:
            return f"tool call {k} is named {block.get('name')!r}, the recording's {name!r}; {said}"
        if given is not None and block.get("input") != given:
            return (
                f"tool call {k} ({name!r}) has input {_json(block.get('input'))[:80]}, the recording's "
                f"{_json(given)[:80]}; {said}"
            )
    return ""


@check(R.REPLY_TOOL_CALLS)
def reply_tool_calls(env: Env) -> Iterator[Outcome]:
    """TC909 (contract §3.3, CanonicalResponse.content: "the assistant's reply blocks, in
    order"): on each recorded reply of the adapter's API that calls tools, the calls the
    record reads from the wire (`response_tool_calls` through `call_of` in a body,
    `stream_tool_calls` in a stream) are the parsed message's tool_use blocks (a stream's
    final content), in order: the same name, and the same input where the wire's is a JSON
    object. TC609 holds streamed fragments to the wire and TC606 a stream to its parse;
    this holds the names, and inputs read whole (Gemini, Ollama), to the recording."""
    said = "does not say how a reply's tool calls read (name and input)"
    yield from _recorded_replies(
        env, R.REPLY_TOOL_CALLS, ("call_of", "stream_tool_calls"), ("tool calls", said), _calls_case
    )


def _recorded_calls(api: WireApi, it: Interaction) -> list[tuple[str, Any]] | None:
    if it.is_stream:
        values = wire_values(it)
        return api.probes.stream_tool_calls(values) if values is not None else None
    if not isinstance(it.response_json, dict):
        return None
    calls = [api.probes.call_of(x.value) for x in api.probes.response_tool_calls(it.response_json)]
    return None if any(c is None for c in calls) else [c for c in calls if c is not None]


def _calls_case(s: AdapterUnderTest, a: Adapter, api: WireApi, it: Interaction) -> Iterator[Outcome]:
    recorded = _recorded_calls(api, it)
    if not recorded:
        return  # no call in the reply (or none the record reads): nothing to hold it to
    content = _reply_content(a, it, "calls")
    if content is not _UNREAD:
        yield _held(R.REPLY_TOOL_CALLS, s, api, it, _calls_lost(recorded, content))
