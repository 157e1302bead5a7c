"""The Gemini Interactions API (`POST /v1beta/interactions`) as a `WireApi` record.

Written from Google's documentation (URLs in `DOCS`), independently of any adapter:

- "The Interactions API is the best way to build with Gemini models and agents. As of June
  2026, it is generally available and recommended for all new projects" (the overview);
  one endpoint, `POST https://generativelanguage.googleapis.com/v1beta/interactions`, with
  the key in `x-goog-api-key` as for generateContent (the quickstart's REST example).
- A stream is asked for in the body: "you can set `stream: true` to incrementally stream the
  response using server-sent events (SSE)" (Streaming interactions). Its events are named
  by `event_type` (the SSE `event:` field carries the same name): `interaction.created`,
  `interaction.status_update`, `step.start`, `step.delta`, `step.stop`,
  `interaction.completed` and `error`. The May 2026 revision ("Breaking changes ... The legacy
  schema will be removed on June 8, 2026") replaced the response's `outputs` with `steps`
  and the stream's `interaction.start` / `content.*` / `interaction.complete` events with
  those; the schemas keep the legacy names, marked deprecated, so a recording made before
  then is judged as what it was.
- The request names a `model`, or an `agent` (mutually exclusive); `input` is a string, a
  content list or a list of steps (`user_input`, `model_output`, `thought`,
  `function_call`, `function_result`, ...); `system_instruction` is a string; generation
  settings are under `generation_config` (`temperature`, `max_output_tokens`,
  `stop_sequences`, ...). Server-side state: `previous_interaction_id` continues a stored
  interaction (`store` defaults to true); `background: true` runs it asynchronously.
- The response is the Interaction resource: `id`, `status` (`in_progress`,
  `requires_action`, `completed`, `failed`, `cancelled`, `incomplete`, `budget_exceeded`),
  `steps`, `usage` (`total_input_tokens`, `total_output_tokens`, `total_thought_tokens`,
  `total_cached_tokens`, `total_tool_use_tokens`, `total_tokens`). A function call is a step
  `{type: "function_call", id, name, arguments}` whose `id` the API issues ("Required. A
  unique ID for this specific tool call"); its answer goes back as `{type:
  "function_result", call_id, name, result, is_error}`.
- Errors are Google's error body (`{"error": {code, message, status}}`), read as the
  generateContent record reads them (`gemini.ERRORS`); a stream reports one as an `error`
  event with an `error` object.

What the docs do not say is left at the record's defaults (which claim nothing): whether
`total_output_tokens` includes thought tokens (the quickstart's example, 8 input + 12 output
of 197 total with a thought step, reads as not: they are output here, as generateContent's
thoughts are), the shape of `response_format`'s
JSON schema, and what of a thought step a stateless next turn must send back. Cached
tokens are "the cached part of the prompt", so `total_input_tokens` is read as counting
them (`cached_in_input`: TC904 then takes either reading).
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
    string_at,
)
from .gemini import ACCESS as GEMINI_ACCESS
from .gemini import ERRORS as GEMINI_ERRORS

OVERVIEW = "https://ai.google.dev/gemini-api/docs/interactions"
STREAMING = "https://ai.google.dev/gemini-api/docs/interactions/streaming"
BREAKING = "https://ai.google.dev/gemini-api/docs/interactions-breaking-changes-may-2026"
ARGUMENTS_DELTA = (
    "https://googleapis.github.io/js-genai/release_docs/interfaces/"
    "interactions_client.GeminiNextGenAPIClient.Interactions.StepDelta.ArgumentsDelta.html"
)
SDK_TYPES = "https://googleapis.github.io/js-genai/release_docs/modules/gaos_models_interactions.html"
DOCS = (
    OVERVIEW,
    "https://ai.google.dev/api/interactions-api",
    "https://ai.google.dev/gemini-api/docs/quickstart",
    STREAMING,
    BREAKING,
    # Google's generated reference of the same resources (field names and enums): the
    # Interaction, its Step and StepDelta types, Usage, the SSE events
    SDK_TYPES,
    "https://googleapis.github.io/js-genai/release_docs/types/gaos_models_interactions_interaction.Interaction.html",
    "https://googleapis.github.io/js-genai/release_docs/types/gaos_models_interactions_interaction.InteractionStatus.html",
    "https://googleapis.github.io/js-genai/release_docs/interfaces/interactions_client.GeminiNextGenAPIClient.Interactions.Usage-1.html",
    "https://googleapis.github.io/js-genai/release_docs/types/gaos_models_interactions_interaction-sse-event.InteractionSSEEvent.html",
    "https://ai.google.dev/gemini-api/docs/troubleshooting",
    ARGUMENTS_DELTA,
)

# steps of the model's that are a call the client runs, and the client's answer to one
CALL_STEP = "function_call"
RESULT_STEP = "function_result"


def _steps(body: Any, key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, step) of the step objects in `body[key]` (`input` of a request, `steps` of a
    response); a string or content-list `input` has none."""
    items = body.get(key) if isinstance(body, dict) else None
    for i, step in enumerate(items if isinstance(items, list) else []):
        if isinstance(step, dict):
            yield i, step


def system(body: JsonBody) -> list[Located]:
    """`system_instruction`: "System instruction for the interaction" (a string)."""
    si = body.get("system_instruction")
    return [Located("/system_instruction", si)] if isinstance(si, str) else []


def _field_of(kind: str, key: str, where: str) -> Any:
    def probe(body: JsonBody) -> list[Located]:
        return [
            Located(f"/{where}/{i}/{key}", step.get(key)) for i, step in _steps(body, where) if step.get("type") == kind
        ]

    return probe


def tool_result_errors(body: JsonBody) -> list[Located]:
    """One value per `function_result` step: its `is_error` ("Whether the tool call resulted
    in an error")."""
    return [
        Located(f"/input/{i}/is_error", step.get("is_error") is True)
        for i, step in _steps(body, "input")
        if step.get("type") == RESULT_STEP
    ]


def response_tool_calls(body: JsonBody) -> list[Located]:
    """The `function_call` steps of an Interaction's `steps`, one per call."""
    return [Located(f"/steps/{i}", step) for i, step in _steps(body, "steps") if step.get("type") == CALL_STEP]


COMPLETED_WITH_CALLS = "completed+function_call"
"""The raw stop value the probes report for a `completed` interaction whose steps end in
function calls for the client to run (canonical `tool_use`): a derivation from two
documented fields, as the Responses record's, named so in `STOP_REASONS`."""


def _stop(interaction: Any) -> Any:
    if not isinstance(interaction, dict):
        return None
    status = interaction.get("status")
    if status == "completed" and response_tool_calls(interaction):
        return COMPLETED_WITH_CALLS
    return status


def response_stop_reason(body: JsonBody) -> Any:
    """The Interaction's `status` (refined by its function-call steps, `COMPLETED_WITH_CALLS`)."""
    return _stop(body)


USAGE = UsageFields(
    "/usage",
    (("total_input_tokens",), ("total_tool_use_tokens",)),
    (("total_output_tokens",), ("total_thought_tokens",)),
    ("total_cached_tokens",),
)
"""Usage: "total_input_tokens: Number of tokens in the prompt (context)", "total_tool_use_tokens:
Number of tokens present in tool-use prompt(s)" are input; "total_output_tokens: Total number
of tokens across all the generated responses", "total_thought_tokens: Number of tokens of
thoughts for thinking models" output; "total_cached_tokens: Number of tokens in the cached
part of the prompt (the cached content)" the cache reads. No cache-write count."""


def usage_of(usage: Any) -> dict[str, int] | None:
    """A `usage` object as the four canonical buckets (`USAGE`)."""
    return USAGE.buckets(usage, cached_in_input=True)


def response_usage(body: JsonBody) -> Any:
    return usage_of(body.get("usage")) if isinstance(body, dict) else None


def _event_type(ev: Any) -> Any:
    return ev.get("event_type") if isinstance(ev, dict) else None


TERMINAL_EVENTS = ("interaction.completed", "interaction.complete")
"""The event carrying the finished interaction: `interaction.completed` (legacy:
`interaction.complete`)."""


def _terminal(events: list[Any]) -> dict[str, Any] | None:
    for ev in reversed(events):
        if _event_type(ev) in TERMINAL_EVENTS and isinstance(ev.get("interaction"), dict):
            return dict(ev["interaction"])
    return None


def _stream_calls(events: list[Any]) -> bool:
    """Whether a stream opened a `function_call` step (`step.start`'s `step`)."""
    return any(
        _event_type(ev) == "step.start" and isinstance(ev.get("step"), dict) and ev["step"].get("type") == CALL_STEP
        for ev in events
    )


def stream_stop_reason(events: list[Any]) -> Any:
    """The status the stream ended in: the terminal event's interaction, else the last
    `interaction.status_update` (a stream may end on one); `COMPLETED_WITH_CALLS` when it
    completed after opening function-call steps; `failed` after an `error` event."""
    if any(_event_type(ev) == "error" for ev in events):
        return "failed"
    status = None
    final = _terminal(events)
    if final is not None:
        status = final.get("status")
    for ev in events if status is None else ():
        if _event_type(ev) == "interaction.status_update" and isinstance(ev.get("status"), str):
            status = ev["status"]
    return COMPLETED_WITH_CALLS if status == "completed" and _stream_calls(events) else status


def stream_usage(events: list[Any]) -> Any:
    """The terminal event's `interaction.usage`, else the last `step.stop`'s `usage` (the
    interaction's so far; `step_usage` is the step's own)."""
    final = _terminal(events)
    if final is not None and isinstance(final.get("usage"), dict):
        return usage_of(final["usage"])
    for ev in reversed(events):
        if _event_type(ev) == "step.stop" and isinstance(ev.get("usage"), dict):
            return usage_of(ev["usage"])
    return None


def stream_error(events: list[Any]) -> Any:
    """The `error` event's `error` ("Error message from an interaction"), as Google's error
    body (`{"error": {...}}`), which `gemini.ERRORS` classifies."""
    for ev in events:
        if _event_type(ev) == "error":
            err = ev.get("error")
            return {"error": dict(err) if isinstance(err, dict) else {"message": err}}
    return None


TEXT_PART = "text"
OUTPUT_STEP = "model_output"
ARGS_DELTA = "arguments_delta"


def response_text(body: JsonBody) -> list[Located]:
    """The answer: the `text` content of the `model_output` steps ("model_output: {content:
    [{type: "text", text}]}", the quickstart's response), one value per text part."""
    out: list[Located] = []
    for i, step in _steps(body, "steps"):
        parts = step.get("content") if step.get("type") == OUTPUT_STEP else None
        for j, part in enumerate(parts if isinstance(parts, list) else []):
            if isinstance(part, dict) and part.get("type") == TEXT_PART and isinstance(part.get("text"), str):
                out.append(Located(f"/steps/{i}/content/{j}/text", part["text"]))
    return out


def _opened(events: list[Any], kind: str) -> dict[Any, dict[str, Any]]:
    """The steps of `kind` a stream opened (`step.start`'s `step`), by their `index`."""
    return {
        ev.get("index"): ev["step"]
        for ev in events
        if _event_type(ev) == "step.start" and isinstance(ev.get("step"), dict) and ev["step"].get("type") == kind
    }


def _deltas(events: list[Any], kind: str, key: str) -> dict[Any, list[str]]:
    """The `step.delta` strings of delta type `kind` (field `key`), by step `index`."""
    out: dict[Any, list[str]] = {}
    for ev in events:
        delta = ev.get("delta") if _event_type(ev) == "step.delta" else None
        if isinstance(delta, dict) and delta.get("type") == kind and isinstance(delta.get(key), str):
            out.setdefault(ev.get("index"), []).append(delta[key])
    return out


def stream_text(events: list[Any]) -> list[str] | None:
    """The answer a stream spells, one per `model_output` step (the streaming page: `step.start`
    opens the step, `step.delta` events of type `text` carry its text by `index`): the step's
    opening text, then its deltas joined."""
    opened = _opened(events, OUTPUT_STEP)
    deltas = _deltas(events, TEXT_PART, "text")
    out = []
    for index, step in opened.items():
        parts = step.get("content")
        first = "".join(
            p["text"]
            for p in (parts if isinstance(parts, list) else [])
            if isinstance(p, dict) and p.get("type") == TEXT_PART and isinstance(p.get("text"), str)
        )
        out.append(first + "".join(deltas.get(index, [])))
    return out


def call_of(step: Any) -> tuple[str, Any] | None:
    """A `function_call` step's `name` and `arguments` (FunctionCallStep: "arguments: The
    arguments to pass to the function", an object)."""
    if not isinstance(step, dict) or not isinstance(step.get("name"), str):
        return None
    return step["name"], json_object(step.get("arguments"))


def stream_tool_fragments(events: list[Any]) -> list[list[str]] | None:
    """The `arguments` strings of the `arguments_delta` deltas ("ArgumentsDelta {arguments?:
    string; type: "arguments_delta"}"), one list per `function_call` step in the order the
    steps opened (empty where the step opened with its arguments whole)."""
    deltas = _deltas(events, ARGS_DELTA, "arguments")
    return [deltas.get(index, []) for index in _opened(events, CALL_STEP)]


def stream_tool_calls(events: list[Any]) -> list[tuple[str, Any]] | None:
    """Each function call a stream spells: the `function_call` step `step.start` opens (its
    `name`, its `arguments`), the arguments being the joined `arguments_delta` strings when
    any came (a step opened with `arguments: {}` streams them), in the order the steps opened."""
    deltas = _deltas(events, ARGS_DELTA, "arguments")
    out: list[tuple[str, Any]] = []
    for index, step in _opened(events, CALL_STEP).items():
        if not isinstance(step.get("name"), str):
            continue
        pieces = deltas.get(index)
        out.append((step["name"], json_object("".join(pieces)) if pieces else json_object(step.get("arguments"))))
    return out


def is_streaming(_url: str, body: JsonBody | None) -> bool:
    """`"stream": true` in the body asks for the SSE stream."""
    return isinstance(body, dict) and body.get("stream") is True


STOP_REASONS: dict[str, str] = {
    "completed": "end_turn",  # "The interaction is completed."
    COMPLETED_WITH_CALLS: "tool_use",
    # "The interaction requires action/input from the user.": the client runs the calls
    "requires_action": "tool_use",
    # "The interaction is completed, but contains incomplete results (e.g. hitting maxTokens)."
    "incomplete": "max_tokens",
    # "The interaction was halted because the token budget was exceeded."
    "budget_exceeded": "max_tokens",
    "failed": "error",  # "The interaction failed."
    "cancelled": "cancelled",  # "The interaction was cancelled."
}
"""Interaction `status` -> canonical StopReason, as far as the status enum's descriptions
define them (Google's Interaction status reference)."""

# an incomplete result for a reason other than the token limit ("e.g." names one), and a halt
# on the budget, may as well be read as a failed turn
STOP_REASONS_ALSO: dict[str, tuple[str, ...]] = {"incomplete": ("error",), "budget_exceeded": ("error",)}


ENDPOINT = Endpoint(
    path="/interactions",
    stream_field=("/stream", True),
    model=ModelIn(
        "body",
        "/model",
        says="model: The name of the Model used for generating the interaction.",
        source=SDK_TYPES,
    ),
    examples=("gemini-3-flash-preview",),
    says=(
        'curl -X POST "https://generativelanguage.googleapis.com/v1beta/interactions"; When creating an '
        "Interaction, you can set stream: true to incrementally stream the response using server-sent events (SSE)."
    ),
    source=STREAMING,
)
"""One endpoint under `/v1beta`; a stream is asked for in the body, the model named there
(an agent interaction names `agent` instead, which no chat adapter renders)."""


GEMINI_INTERACTIONS = WireApi(
    name="gemini-interactions",
    title="Gemini Interactions API",
    docs=DOCS,
    # `/v1beta/interactions`, never generateContent's `.../models/{model}:generateContent`;
    # `/interactions/{id}` (get, cancel) is no chat turn of its own and matches nothing
    request_paths=(re.compile(r"(?:^|/)v1beta/interactions/?\Z"),),
    framing=Framing.SSE,
    is_streaming=is_streaming,
    schema_dir="gemini-interactions",
    hosts=("generativelanguage.googleapis.com",),
    access=GEMINI_ACCESS,
    errors=GEMINI_ERRORS,
    usage_fields=USAGE,
    # FunctionCallStep.id: "Required. A unique ID for this specific tool call."
    tool_ids=ToolIdRule(pattern=None, issued_by_provider=True),
    carries=Carries(
        system_prompt=True,  # system_instruction
        thinking_text=True,  # thought steps' `summary`
        thinking_signature=True,  # thought steps' `signature`
        images_base64=True,  # image content `data` + `mime_type`
        images_url=True,  # image content `uri`
        tool_result_error=True,  # function_result `is_error`
        cache_read_tokens=True,  # usage.total_cached_tokens
        # `steps` is a list, each function_call step with "A unique ID for this specific tool
        # call": one reply can hold several calls
        parallel_tool_calls=True,
    ),
    probes=Probes(
        system=system,
        tool_use_ids=_field_of(CALL_STEP, "id", "input"),
        tool_result_ids=_field_of(RESULT_STEP, "call_id", "input"),
        tool_result_errors=tool_result_errors,
        response_stop_reason=response_stop_reason,
        response_usage=response_usage,
        response_tool_ids=_field_of(CALL_STEP, "id", "steps"),
        response_tool_calls=response_tool_calls,
        response_text=response_text,
        stream_text=stream_text,
        call_of=call_of,
        stream_tool_calls=stream_tool_calls,
        stream_tool_fragments=stream_tool_fragments,
        stream_stop_reason=stream_stop_reason,
        stream_usage=stream_usage,
        stream_error=stream_error,
        response_model=string_at("/model"),
        stream_model=first_string_at("/interaction/model"),  # interaction.created's interaction
        # GenerationConfig: "max_output_tokens", "stop_sequences", "temperature"
        request_options=option_fields(
            max_output_tokens="/generation_config/max_output_tokens",
            stop_sequences="/generation_config/stop_sequences",
            temperature="/generation_config/temperature",
        ),
    ),
    # nothing required back: the docs name no thought step a next request must carry (on the
    # server-side state, the default, the server holds the history itself)
    thinking_back=ThinkingBack(
        says=(
            "Server-side history management: Simplified multi-turn flows via previous_interaction_id. The server "
            "enables state by default (store=true), but you can opt into stateless behavior by setting store=false."
        ),
        source=OVERVIEW,
        because=(
            "the history of a stored interaction is the server's (previous_interaction_id), and the docs state no "
            "requirement on the thought steps of a stateless request's input"
        ),
    ),
    stop_reasons=STOP_REASONS,
    stop_reasons_also=STOP_REASONS_ALSO,
    history_key="input",  # the steps of a stateless conversation
    # "total_cached_tokens: Number of tokens in the cached part of the prompt": a part of the
    # prompt `total_input_tokens` counts, so the literal reading of it as input_tokens is one
    # TC904 accepts beside the disjoint one
    cached_in_input=True,
    # previous_interaction_id: "The ID of the previous interaction, if any." (server-side state)
    state_fields=("/previous_interaction_id",),
    accepted_differences=equivalence.JSON_FORMS,  # object member order, number spellings
    endpoint=ENDPOINT,
)
