"""Authoring helper for cassettes/gemini-interactions (hand-written bodies; imports no adapter).

Every request and response below is written by hand from Google's documentation of the
Interactions API: the quickstart's call and its documented response (id, status, usage and
the step types; the thought signature and the reply's words invented), the streaming page's
call and its documented first event (`event: interaction.created`; the rest in the event
types of the API reference: `interaction.status_update`, `step.start`, `step.delta`,
`step.stop`, `interaction.completed`), a function call as the reference's FunctionCallStep
and FunctionResultStep spell them, and Google's error body. Ids, texts and token counts are
invented (every response says `x-turnspec-synthetic: true`).

Run from the checkout root: .venv/bin/python cassettes/gemini-interactions/_author.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).parent
URI = "https://generativelanguage.googleapis.com/v1beta/interactions"
FLASH = "gemini-3-flash-preview"
Item = dict[str, Any]


def _json(o: Any) -> str:
    return json.dumps(o, ensure_ascii=False)


def item(request: Item, status: int, body: str, content_type: str = "application/json; charset=UTF-8") -> Item:
    reason = {200: "OK", 400: "Bad Request", 429: "Too Many Requests", 503: "Service Unavailable"}[status]
    return {
        "request": {
            "body": _json(request),
            "headers": {"content-type": ["application/json"]},
            "method": "POST",
            "uri": URI,
        },
        "response": {
            "body": {"string": body},
            "headers": {"content-type": [content_type], "x-turnspec-synthetic": ["true"]},
            "status": {"code": status, "message": reason},
        },
    }


def sse(events: list[Item]) -> str:
    """The events as the streaming page shows them: `event:` the event_type, `data:` the JSON."""
    return "".join(f"event: {e['event_type']}\ndata: {_json(e)}\n\n" for e in events)


def write(path: Path, header: list[str], items: list[Item]) -> None:
    doc = yaml.safe_dump({"interactions": items, "version": 1}, sort_keys=False, width=100, allow_unicode=True)
    path.write_text("".join(f"# {h}\n" for h in header) + doc, encoding="utf-8")


def _created(iid: str) -> Item:
    interaction = {"id": iid, "status": "in_progress", "object": "interaction", "model": FLASH}
    return {"interaction": interaction, "event_type": "interaction.created"}


def text() -> list[Item]:
    q = {"model": "gemini-3.5-flash", "input": "Explain how AI works in a few words"}
    reply = {
        "id": "v1_ChdpQUFvYXI",
        "status": "completed",
        "usage": {"total_tokens": 197, "total_input_tokens": 8, "total_output_tokens": 12},
        "created": "2026-06-09T12:01:25Z",
        "model": "gemini-3.5-flash",
        "object": "interaction",
        "steps": [
            {"type": "thought", "signature": "EqQDCqEDAXLI2nw"},
            {
                "type": "model_output",
                "content": [{"type": "text", "text": "AI learns patterns from data to make predictions."}],
            },
        ],
    }
    s = {"model": FLASH, "input": "Count to from 1 to 10.", "stream": True}
    iid = "v1_ChdTdHJlYW0"
    usage = {"total_tokens": 40, "total_input_tokens": 11, "total_output_tokens": 29}
    events = [
        _created(iid),
        {"interaction_id": iid, "status": "in_progress", "event_type": "interaction.status_update"},
        {"index": 0, "step": {"type": "model_output", "content": []}, "event_type": "step.start"},
        {"index": 0, "delta": {"type": "text", "text": "1, 2, 3, 4, 5"}, "event_type": "step.delta"},
        {"index": 0, "delta": {"type": "text", "text": ", 6, 7, 8, 9, 10"}, "event_type": "step.delta"},
        {"index": 0, "event_type": "step.stop"},
        {
            "interaction": {"id": iid, "status": "completed", "object": "interaction", "model": FLASH, "usage": usage},
            "event_type": "interaction.completed",
        },
    ]
    return [item(q, 200, _json(reply)), item(s, 200, sse(events), "text/event-stream")]


TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Gets the weather for a given location.",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"}},
        "required": ["location"],
    },
}


def tools() -> list[Item]:
    """A function call (status requires_action), its result sent back on the server-side
    state (previous_interaction_id) and the answer, then the same call streamed (the
    function_call step opened by step.start, its arguments in arguments_delta deltas)."""
    ask = {"model": FLASH, "input": "What is the weather in Paris?", "tools": [TOOL]}
    usage = {"total_tokens": 71, "total_input_tokens": 56, "total_output_tokens": 15}
    call = {"type": "function_call", "id": "gth23981", "name": "get_weather", "arguments": {"location": "Paris"}}
    first = {"id": "v1_ChdGdW5jQ2Fs", "status": "requires_action", "object": "interaction", "model": FLASH}
    first |= {"steps": [call], "usage": usage}
    answer = {"type": "function_result", "name": "get_weather", "call_id": "gth23981"}
    answer["result"] = {"weather": "sunny", "temperature_c": 21}
    back = {"model": FLASH, "previous_interaction_id": "v1_ChdGdW5jQ2Fs", "tools": [TOOL], "input": [answer]}
    said = {"type": "model_output", "content": [{"type": "text", "text": "It is sunny in Paris, 21 °C."}]}
    second = {"id": "v1_ChdSZXN1bHQ", "status": "completed", "object": "interaction", "model": FLASH}
    second |= {"previous_interaction_id": "v1_ChdGdW5jQ2Fs", "steps": [said]}
    second["usage"] = {"total_tokens": 101, "total_input_tokens": 89, "total_output_tokens": 12}
    cid = "v1_ChdTdHJlYW1D"
    # the same reply as the non-streamed twin (its call and id: TC606 holds a stream to the
    # parse of the same request's reply); the arguments streamed as `arguments_delta` strings
    # ("ArgumentsDelta {arguments?: string; type: "arguments_delta"}"), the step opened empty
    streamed = dict(call, arguments={})
    args = [{"type": "arguments_delta", "arguments": piece} for piece in ('{"location": ', '"Paris"}')]
    done = {"id": cid, "status": "requires_action", "object": "interaction", "model": FLASH, "usage": usage}
    events = [
        _created(cid),
        {"index": 0, "step": streamed, "event_type": "step.start"},
        *({"index": 0, "delta": delta, "event_type": "step.delta"} for delta in args),
        {"index": 0, "event_type": "step.stop"},
        {"interaction_id": cid, "status": "requires_action", "event_type": "interaction.status_update"},
        {"interaction": done, "event_type": "interaction.completed"},
    ]
    return [
        item(ask, 200, _json(first)),
        item(back, 200, _json(second)),
        item(dict(ask, stream=True), 200, sse(events), "text/event-stream"),
    ]


def _error(code: int, status: str, message: str, details: list[Item] | None = None) -> str:
    body: Item = {"error": {"code": code, "message": message, "status": status}}
    if details:
        body["error"]["details"] = details
    return json.dumps(body, indent=2)


def errors() -> list[Item]:
    ask = {"model": FLASH, "input": "Hello"}
    key = {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}
    key["metadata"] = {"service": "generativelanguage.googleapis.com"}
    retry = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}
    quota = "You exceeded your current quota, please check your plan and billing details."
    return [
        item(ask, 400, _error(400, "INVALID_ARGUMENT", "Invalid value at 'input'.")),
        item(ask, 400, _error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", [key])),
        item(ask, 429, _error(429, "RESOURCE_EXHAUSTED", quota, [retry])),
        item(ask, 503, _error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")),
    ]


HEADERS = {
    "text.yaml": [
        "Hand-written from Google's documented examples (not produced by any adapter; cassettes/gemini-interactions/_author.py).",
        "A non-streamed text reply (the quickstart's call: its id, status, usage and steps as documented; the",
        "thought signature and the reply's words invented) and a stream (the streaming page's call and its",
        "documented first event; the rest in the documented event types, counts invented).",
        "source: https://ai.google.dev/gemini-api/docs/quickstart",
        "source: https://ai.google.dev/gemini-api/docs/interactions/streaming",
        "source: https://ai.google.dev/gemini-api/docs/interactions-breaking-changes-may-2026",
    ],
    "tools.yaml": [
        "Hand-written from Google's documented examples (not produced by any adapter; cassettes/gemini-interactions/_author.py).",
        'A function call (a function_call step {id, name, arguments}; status requires_action: "The interaction',
        'requires action/input from the user"), its function_result {call_id, name, result} sent back with',
        "previous_interaction_id, and the same call streamed (step.start opens the function_call step, its",
        "arguments come as arguments_delta strings). Ids, texts and counts invented.",
        "source: https://ai.google.dev/gemini-api/docs/interactions",
        "source: https://ai.google.dev/gemini-api/docs/interactions-breaking-changes-may-2026",
        "source: https://googleapis.github.io/js-genai/release_docs/types/gaos_models_interactions_function-call-step.FunctionCallStep.html",
        "source: https://googleapis.github.io/js-genai/release_docs/types/gaos_models_interactions_function-result-step.FunctionResultStep.html",
        "source: https://googleapis.github.io/js-genai/release_docs/interfaces/interactions_client.GeminiNextGenAPIClient.Interactions.StepDelta.ArgumentsDelta.html",
    ],
    "errors.yaml": [
        "Hand-written from Google's documented examples (not produced by any adapter; cassettes/gemini-interactions/_author.py).",
        "Error bodies {error: {code, message, status, details}}: 400 INVALID_ARGUMENT, 400 API_KEY_INVALID, 429, 503.",
        "source: https://ai.google.dev/gemini-api/docs/troubleshooting",
        "source: https://cloud.google.com/apis/design/errors#error_model",
    ],
}


def cassettes() -> dict[str, list[Item]]:
    return {"text.yaml": text(), "tools.yaml": tools(), "errors.yaml": errors()}


if __name__ == "__main__":
    for name, items in cassettes().items():
        write(OUT / name, HEADERS[name], items)
