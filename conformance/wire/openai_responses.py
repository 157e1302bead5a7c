"""The OpenAI Responses API (`POST /v1/responses`) as a `WireApi` record.

Written from OpenAI's documentation, independently of any adapter:

- Create a model response (request body, input items, the Response object):
  https://platform.openai.com/docs/api-reference/responses/create
  https://developers.openai.com/api/reference/resources/responses/methods/create
- Streaming events (`response.created` ... `response.completed`, `error`):
  https://platform.openai.com/docs/api-reference/responses-streaming
  https://developers.openai.com/api/reference/resources/beta/subresources/responses/streaming-events
- Reasoning items, `include: ["reasoning.encrypted_content"]`, summaries:
  https://platform.openai.com/docs/guides/reasoning
- Function calling (`function_call` items with `call_id`, `function_call_output`):
  https://platform.openai.com/docs/guides/function-calling
- Images (`input_image` with a URL or a base64 `data:` URL, `detail`):
  https://platform.openai.com/docs/guides/images-vision
- Error bodies and codes: https://platform.openai.com/docs/guides/error-codes

Facts the record states: requests go to `/v1/responses` (also under compatible base URLs
such as Azure's `/openai/v1/responses`); a stream is asked for with the body's `stream:
true` and arrives as SSE whose `event:` names equal the JSON `type`; there is no `[DONE]`
sentinel, the stream ends with `response.completed`, `response.incomplete` or
`response.failed`. `call_id` (at most 64 characters) links a `function_call` to its
`function_call_output`; the item `id` (`fc_...`) is a different, storage-side identifier.
The system prompt is the top-level `instructions` string or a `system`/`developer`
message among the input items. Reasoning is carried as `reasoning` items: summary text
(`summary[].text`) and the opaque `encrypted_content`. Tool outputs have no error flag.
Usage reports `input_tokens` *including* `input_tokens_details.cached_tokens`, and
`output_tokens` including `output_tokens_details.reasoning_tokens`; cache writes are not
reported.

The stop reason of a Response is its `status` plus `incomplete_details.reason`; OpenAI has
no separate "tool use" stop value, so the probe reports `completed+function_call` when a
completed response's output holds a function call (a derivation from two documented
fields, named so in `stop_reasons`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from . import equivalence
from .api import (
    Carries,
    Endpoint,
    Framing,
    JsonBody,
    Located,
    ModelIn,
    Probes,
    ThinkingBack,
    ToolIdRule,
    UsageFields,
    WireApi,
    first_string_at,
    json_object,
    option_fields,
    schema_at,
    string_at,
)
from .openai_chat import ACCESS as OPENAI_ACCESS
from .openai_chat import ERRORS as OPENAI_ERRORS

DOCS = (
    "https://platform.openai.com/docs/api-reference/responses/create",
    "https://developers.openai.com/api/reference/resources/responses/methods/create",
    "https://platform.openai.com/docs/api-reference/responses-streaming",
    "https://developers.openai.com/api/reference/resources/beta/subresources/responses/streaming-events",
    "https://platform.openai.com/docs/guides/reasoning",
    "https://platform.openai.com/docs/guides/function-calling",
    "https://platform.openai.com/docs/guides/images-vision",
    "https://platform.openai.com/docs/guides/error-codes",
)

_DATA_URL = re.compile(r"data:(?P<media>[^;,]+);base64,(?P<data>.*)\Z", re.S)


def _items(body: JsonBody) -> Iterator[tuple[int, dict[str, Any]]]:
    inp = body.get("input")
    if isinstance(inp, list):
        for i, item in enumerate(inp):
            if isinstance(item, dict):
                yield i, item


def _kind(item: dict[str, Any]) -> str:
    """An input item's kind: `type`, or `message` for the easy form (role + content, no type)."""
    t = item.get("type")
    return str(t) if isinstance(t, str) else "message" if "role" in item else ""


def system(body: JsonBody) -> list[Located]:
    out: list[Located] = []
    if isinstance(body.get("instructions"), str):
        out.append(Located("/instructions", body["instructions"]))
    for i, item in _items(body):
        if _kind(item) != "message" or item.get("role") not in ("system", "developer"):
            continue
        c = item.get("content")
        if isinstance(c, str):
            out.append(Located(f"/input/{i}/content", c))
        elif isinstance(c, list):
            out.extend(
                Located(f"/input/{i}/content/{j}/text", p["text"])
                for j, p in enumerate(c)
                if isinstance(p, dict) and isinstance(p.get("text"), str)
            )
    return out


def thinking_text(body: JsonBody) -> list[Located]:
    out: list[Located] = []
    for i, item in _items(body):
        if _kind(item) != "reasoning":
            continue
        for j, part in enumerate(item.get("summary") or []):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append(Located(f"/input/{i}/summary/{j}/text", part["text"]))
    return out


def signatures(body: JsonBody) -> list[Located]:
    return [
        Located(f"/input/{i}/encrypted_content", item["encrypted_content"])
        for i, item in _items(body)
        if _kind(item) == "reasoning" and isinstance(item.get("encrypted_content"), str)
    ]


# a tool call item, and its output item: of a function tool, and of a custom tool (whose
# input is free text; "Custom tools", function-calling guide)
CALL_ITEMS = ("function_call", "custom_tool_call")
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output")


def tool_use_ids(body: JsonBody) -> list[Located]:
    return [
        Located(f"/input/{i}/call_id", item.get("call_id")) for i, item in _items(body) if _kind(item) in CALL_ITEMS
    ]


def tool_result_ids(body: JsonBody) -> list[Located]:
    return [
        Located(f"/input/{i}/call_id", item.get("call_id")) for i, item in _items(body) if _kind(item) in OUTPUT_ITEMS
    ]


def _image(pointer: str, part: dict[str, Any]) -> Located | None:
    if part.get("type") != "input_image":
        return None
    url = part.get("image_url")
    if isinstance(url, str):
        m = _DATA_URL.match(url)
        if m:
            return Located(pointer, {"kind": "base64", "media_type": m["media"], "data": m["data"]})
        return Located(pointer, {"kind": "url", "media_type": None, "url": url})
    if isinstance(part.get("file_id"), str):
        return Located(pointer, {"kind": "file_id", "media_type": None, "file_id": part["file_id"]})
    return None


def images(body: JsonBody) -> list[Located]:
    """`input_image` parts of messages and of list-form `function_call_output.output`."""
    out: list[Located] = []
    for i, item in _items(body):
        kind = _kind(item)
        key = "content" if kind == "message" else "output" if kind in OUTPUT_ITEMS else None
        parts = item.get(key) if key else None
        if not isinstance(parts, list):
            continue
        for j, part in enumerate(parts):
            if isinstance(part, dict) and (found := _image(f"/input/{i}/{key}/{j}", part)) is not None:
                out.append(found)
    return out


def _stop(response: JsonBody) -> Any:
    status = response.get("status")
    if status == "incomplete":
        return (response.get("incomplete_details") or {}).get("reason") or "incomplete"
    if status == "completed" and any(
        isinstance(o, dict) and o.get("type") in CALL_ITEMS for o in response.get("output") or []
    ):
        return "completed+function_call"
    return status


def response_tool_calls(body: JsonBody) -> list[Located]:
    """The tool call items of a response's `output` (responses/create: "output: An array of
    content items generated by the model"; a function tool call is an item of type
    `function_call` with `call_id`, `name`, `arguments`, a custom tool's `custom_tool_call`
    with `call_id`, `name`, `input`)."""
    out = body.get("output")
    return [
        Located(f"/output/{i}", item)
        for i, item in enumerate(out if isinstance(out, list) else [])
        if isinstance(item, dict) and item.get("type") in CALL_ITEMS
    ]


def response_stop_reason(body: JsonBody) -> Any:
    """`status`, refined by `incomplete_details.reason` (see the module docstring)."""
    return _stop(body) if isinstance(body, dict) else None


USAGE = UsageFields("/usage", (("input_tokens",),), (("output_tokens",),), ("input_tokens_details", "cached_tokens"))
"""Responses `usage`; reasoning tokens are part of `output_tokens`."""


def response_usage(body: JsonBody) -> Any:
    """Usage in TokenUsage's disjoint buckets (adapter contract §7.2): `input` excludes the
    cached tokens OpenAI counts inside `input_tokens`; reasoning tokens are part of `output`
    (see `response_reasoning_tokens`)."""
    u = body.get("usage") if isinstance(body, dict) else None
    return USAGE.buckets(u, cached_in_input=True)


def response_reasoning_tokens(body: JsonBody) -> list[Located]:
    """`usage.output_tokens_details.reasoning_tokens`: the part of `output` spent reasoning."""
    u = body.get("usage") if isinstance(body, dict) else None
    n = (u.get("output_tokens_details") or {}).get("reasoning_tokens") if isinstance(u, dict) else None
    return [Located("/usage/output_tokens_details/reasoning_tokens", n)] if isinstance(n, int) else []


def _terminal(events: list[Any]) -> dict[str, Any] | None:
    for ev in reversed(events):
        if isinstance(ev, dict) and ev.get("type") in ("response.completed", "response.incomplete", "response.failed"):
            resp = ev.get("response")
            return resp if isinstance(resp, dict) else None
    return None


def stream_stop_reason(events: list[Any]) -> Any:
    """The stop reason of a stream: its terminal event's `response` (decoded `data:` payloads)."""
    if any(isinstance(ev, dict) and ev.get("type") == "error" for ev in events):
        return "failed"
    resp = _terminal(events)
    return _stop(resp) if resp is not None else None


def stream_usage(events: list[Any]) -> Any:
    resp = _terminal(events)
    return response_usage(resp) if resp is not None else None


def stream_tool_fragments(events: list[Any]) -> list[list[str]] | None:
    """`response.function_call_arguments.delta` fragments, one list per `function_call`
    output item (by `item_id`, in the order the items were added). A `custom_tool_call`
    streams free text (`response.custom_tool_call_input.delta`), no JSON fragment of the
    canonical input: its list is empty (contract §5.4 asks the JSON fragments literal)."""
    calls: dict[Any, list[str]] = {}
    for ev in events:
        if not isinstance(ev, dict):
            continue
        if ev.get("type") == "response.output_item.added":
            item = ev.get("item") or {}
            if isinstance(item, dict) and item.get("type") in CALL_ITEMS:
                calls[item.get("id")] = []
        elif ev.get("type") == "response.function_call_arguments.delta" and isinstance(ev.get("delta"), str):
            calls.setdefault(ev.get("item_id"), []).append(ev["delta"])
    return list(calls.values())


def stream_error(events: list[Any]) -> Any:
    """The error a stream reports after it began, as an error body (`{"error": {...}}`): the
    `error` event (`code`, `message`, `param`), else `response.failed`'s `response.error`."""
    for ev in events:
        if isinstance(ev, dict) and ev.get("type") == "error":
            return {"error": {k: ev.get(k) for k in ("code", "message", "param")}}
    resp = _terminal(events)
    if resp is not None and resp.get("status") == "failed" and isinstance(resp.get("error"), dict):
        return {"error": resp["error"]}
    return None


def _message_parts(body: JsonBody, kind: str, member: str) -> list[Located]:
    """The `member` of each content part of type `kind` of the output `message` items
    (responses/object: an output message's content is `{"type": "output_text", "text": ...}`
    or `{"type": "refusal", "refusal": ...}`)."""
    out: list[Located] = []
    output = body.get("output") if isinstance(body, dict) else None
    for i, item in enumerate(output if isinstance(output, list) else []):
        parts = item.get("content") if isinstance(item, dict) and item.get("type") == "message" else None
        for j, part in enumerate(parts if isinstance(parts, list) else []):
            if isinstance(part, dict) and part.get("type") == kind and isinstance(part.get(member), str):
                out.append(Located(f"/output/{i}/content/{j}/{member}", part[member]))
    return out


def response_refusals(body: JsonBody) -> list[Located]:
    """The `refusal` content parts of the output `message` items."""
    return _message_parts(body, "refusal", "refusal")


def response_text(body: JsonBody) -> list[Located]:
    """The `output_text` content parts of the output `message` items."""
    return _message_parts(body, "output_text", "text")


def _parts_spelled(events: list[Any], kind: str, member: str) -> list[str]:
    """The texts a stream spells for the content parts of one kind (responses-streaming:
    `response.<kind>.delta` events' `delta` fragments, then `response.<kind>.done` with the
    whole `<member>`): the done texts, else the joined deltas, keyed by (item_id,
    content_index), in the order the parts began."""
    done: dict[Any, str] = {}
    deltas: dict[Any, list[str]] = {}
    for ev in events:
        if not isinstance(ev, dict):
            continue
        key = (ev.get("item_id"), ev.get("content_index"))
        if ev.get("type") == f"response.{kind}.delta" and isinstance(ev.get("delta"), str):
            deltas.setdefault(key, []).append(ev["delta"])
        elif ev.get("type") == f"response.{kind}.done" and isinstance(ev.get(member), str):
            done[key] = ev[member]
    keys = list(dict.fromkeys([*deltas, *done]))
    return [done[k] if k in done else "".join(deltas[k]) for k in keys]


def stream_text(events: list[Any]) -> list[str] | None:
    """The answer texts a stream spells, one per `output_text` part."""
    return _parts_spelled(events, "output_text", "text")


def call_of(item: Any) -> tuple[str, Any] | None:
    """A `function_call` item's `name` and its `arguments` ("A JSON string of the arguments to
    pass to the function") as a JSON object; a `custom_tool_call`'s `input` is free text."""
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    return item["name"], json_object(item.get("arguments")) if item.get("type") == "function_call" else None


def stream_tool_calls(events: list[Any]) -> list[tuple[str, Any]] | None:
    """Each function call a stream spells (responses-streaming: `response.output_item.added`
    opens a `function_call` item, `response.function_call_arguments.delta` events carry
    pieces of its `arguments` by `item_id`, `response.output_item.done` holds the whole
    item): the done item's arguments, else the joined deltas, in the order the items opened."""
    names: dict[Any, str] = {}
    whole: dict[Any, Any] = {}
    pieces: dict[Any, list[str]] = {}
    for ev in events:
        if not isinstance(ev, dict):
            continue
        item = ev.get("item")
        if ev.get("type") in ("response.output_item.added", "response.output_item.done") and isinstance(item, dict):
            if item.get("type") == "function_call" and isinstance(item.get("name"), str):
                names.setdefault(item.get("id"), item["name"])
                if ev["type"] == "response.output_item.done":
                    whole[item.get("id")] = item.get("arguments")
        elif ev.get("type") == "response.function_call_arguments.delta" and isinstance(ev.get("delta"), str):
            pieces.setdefault(ev.get("item_id"), []).append(ev["delta"])
    return [(name, json_object(whole[k] if k in whole else "".join(pieces.get(k, [])))) for k, name in names.items()]


def stream_refusals(events: list[Any]) -> list[str] | None:
    """The refusal texts a stream spells, one per content part (responses-streaming:
    `response.refusal.delta` fragments, then `response.refusal.done` with the whole
    `refusal`)."""
    return _parts_spelled(events, "refusal", "refusal")


def is_streaming(_url: str, body: JsonBody | None) -> bool:
    return isinstance(body, dict) and body.get("stream") is True


ENDPOINT = Endpoint(
    path="/responses",
    stream_field=("/stream", True),
    model=ModelIn(
        "body",
        "/model",
        says="Model ID used to generate the response, like gpt-4o or o3.",
        source="https://platform.openai.com/docs/api-reference/responses/create",
    ),
    examples=("ft:gpt-4o-mini-2024-07-18:my-org:custom-suffix:9ABel2dg",),
    says=(
        "POST https://api.openai.com/v1/responses; stream: If set to true, the model response data will be "
        "streamed to the client as it is generated using server-sent events."
    ),
    source="https://platform.openai.com/docs/api-reference/responses/create",
)
"""One endpoint; a stream is asked for in the body."""

OPENAI_RESPONSES = WireApi(
    name="openai-responses",
    usage_fields=USAGE,
    access=OPENAI_ACCESS,
    errors=OPENAI_ERRORS,
    out_of_band_settings=("/reasoning",),
    title="OpenAI Responses API",
    docs=DOCS,
    request_paths=(re.compile(r"(?:^|/)responses/?\Z"),),
    framing=Framing.SSE,
    is_streaming=is_streaming,
    schema_dir="openai-responses",
    hosts=("api.openai.com",),
    tool_ids=ToolIdRule(pattern=None, max_length=64, issued_by_provider=True),
    carries=Carries(
        system_prompt=True,
        thinking_text=True,  # reasoning summaries
        thinking_signature=True,  # reasoning.encrypted_content
        redacted_thinking=False,
        images_base64=True,
        images_url=True,
        tool_result_error=False,
        cache_read_tokens=True,
        cache_write_tokens=False,
        parallel_tool_calls=True,
    ),
    thinking_back=ThinkingBack(
        says=(
            "By giving the model access to previous reasoning items, we can ensure it operates at "
            "maximum intelligence and lowest cost."
        ),
        source="https://cookbook.openai.com/examples/responses_api/reasoning_items",
        because=(
            "a reasoning item goes back as an input item with its item `id`, which a canonical thinking "
            "block (§4.2: text, signature) does not carry"
        ),
    ),
    probes=Probes(
        system=system,
        thinking_text=thinking_text,
        signatures=signatures,
        tool_use_ids=tool_use_ids,
        tool_result_ids=tool_result_ids,
        images=images,
        response_stop_reason=response_stop_reason,
        response_usage=response_usage,
        stream_stop_reason=stream_stop_reason,
        stream_usage=stream_usage,
        stream_tool_fragments=stream_tool_fragments,
        stream_error=stream_error,
        response_refusals=response_refusals,
        stream_refusals=stream_refusals,
        response_text=response_text,
        stream_text=stream_text,
        call_of=call_of,
        stream_tool_calls=stream_tool_calls,
        # responses/create: `text.format` `{"type": "json_schema", "name", "schema", "strict"}`
        output_schema=schema_at("/text/format/schema"),
        response_model=string_at("/model"),
        response_tool_calls=response_tool_calls,
        stream_model=first_string_at("/response/model"),  # response.created's response
        # "max_output_tokens", "temperature" (responses/create); the API has no stop sequences
        request_options=option_fields(max_output_tokens="/max_output_tokens", temperature="/temperature"),
    ),
    stop_reasons={
        "completed": "end_turn",
        "completed+function_call": "tool_use",
        "max_output_tokens": "max_tokens",
        "content_filter": "end_turn",
        "incomplete": "max_tokens",
        "failed": "error",
        "cancelled": "cancelled",
    },
    # a reply the content filter cut (`incomplete_details.reason: "content_filter"`) may as
    # well be read as failed (StopReason ERROR), as Chat Completions' content_filter is
    stop_reasons_also={"content_filter": ("error",)},
    history_key="input",  # the conversation items (messages, function calls and outputs)
    # usage.input_tokens_details.cached_tokens is part of usage.input_tokens
    cached_in_input=True,
    # responses/create: "previous_response_id ... Use this to create multi-turn conversations";
    # "conversation ... Items from this conversation are prepended to input_items"
    state_fields=("/previous_response_id", "/conversation"),
    accepted_differences=equivalence.OPENAI_RESPONSES_DIFFERENCES,  # JSON forms and documented defaults
    normalize_request=equivalence.openai_responses,
    endpoint=ENDPOINT,
)
