"""Authoring helper for cassettes/vertex-anthropic (imports no adapter).

Claude on Vertex AI takes the Anthropic Messages request with two documented differences and
answers with Anthropic's response and SSE stream (Anthropic, "Claude on Vertex AI":
https://docs.anthropic.com/en/api/claude-on-vertex-ai; Google, "Request predictions with
Claude models": https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude):

- "In Vertex, model is not passed in the request body. Instead, it is specified in the
  Google Cloud endpoint URL": `POST {HOST}/v1/projects/{project}/locations/{location}
  /publishers/anthropic/models/{model}:rawPredict`, `:streamRawPredict` for a stream (the
  body keeps `stream: true` as well, as Anthropic's SDKs send it);
- "anthropic_version is passed in the request body (rather than as a header), and must be
  set to the value vertex-2023-10-16".

So this script writes:

- `vertex.yaml`: the pages' own example ("Hey Claude!", max_tokens 100), one reply and the
  same streamed; the reply's id has the `msg_vrtx_` prefix Vertex AI's ids carry.
- `text.yaml`, `stops.yaml`, `tools.yaml`, `thinking.yaml`, `image.yaml` (base64 sources
  only), `cache.yaml`: the hand-written cassettes of `cassettes/anthropic/` (themselves
  transcribed from Anthropic's documented examples), each request moved to Vertex AI's URL
  and body by the two differences above; the responses are Anthropic's, unchanged.
- `errors.yaml`: the model's own errors as Anthropic's error body (invalid request, the
  prompt too long, api_error, overloaded, timeout, and the stream that fails mid-way, from
  `cassettes/anthropic/errors.yaml`), and the errors of Vertex AI's front end in Google's
  error model (`{error: {code, message, status}}`, https://cloud.google.com/apis/design/errors;
  quota: https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429) for a missing
  credential, a permission the caller lacks, a model not enabled in the project, and a quota
  exceeded. Messages are invented strings of the documented form.

Token counts are the source cassettes' (every response says `x-turnspec-synthetic: true`).
Run from the checkout root: .venv/bin/python cassettes/vertex-anthropic/_author.py
"""

import json
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).parent
SOURCE = OUT.parent / "anthropic"
HOST = "https://aiplatform.googleapis.com"
BASE = f"{HOST}/v1/projects/turnspec-docs/locations/global/publishers/anthropic/models"
# Anthropic's model alias -> the Vertex AI model name Google's page lists for it
MODELS = {"claude-sonnet-4-5": "claude-sonnet-4-5@20250929"}
VERSION = "vertex-2023-10-16"
# the Anthropic errors a Vertex AI call can get from the model (the others, a key or
# credit balance of Anthropic's, are Vertex AI's own below, in Google's error model)
MODEL_ERRORS = ("invalid_request_error", "request_too_large", "api_error", "timeout_error", "overloaded_error")


def vertex_request(request: dict[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages request (vcrpy form) as the same request to Vertex AI."""
    body = json.loads(request["body"])
    model = MODELS[body.pop("model")]
    method = "streamRawPredict" if body.get("stream") is True else "rawPredict"
    headers = {k: v for k, v in request["headers"].items() if k.lower() != "anthropic-version"}
    return {
        "body": json.dumps({"anthropic_version": VERSION, **body}),
        "headers": headers,
        "method": "POST",
        "uri": f"{BASE}/{model}:{method}",
    }


def interactions(name: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load((SOURCE / name).read_text(encoding="utf-8"))["interactions"])


def moved(its: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"request": vertex_request(it["request"]), "response": it["response"]} for it in its]


def _url_image(it: dict[str, Any]) -> bool:
    return '"type": "url"' in it["request"]["body"]


def _model_error(it: dict[str, Any]) -> bool:
    body = it["response"]["body"]["string"]
    if it["response"]["status"]["code"] == 200:
        return True  # the stream that fails after it began (an `error` event)
    return json.loads(body)["error"]["type"] in MODEL_ERRORS


class _Dumper(yaml.Dumper):
    """Multi-line strings (SSE bodies) as YAML block literals, as the other cassettes write them."""


def _str(dumper: yaml.Dumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def write(name: str, its: list[dict[str, Any]]) -> None:
    text = yaml.dump({"interactions": its, "version": 1}, Dumper=_Dumper, allow_unicode=True, width=10**6)
    (OUT / name).write_text(text, encoding="utf-8")


def response(body: str, status: int, message: str, content_type: str = "application/json") -> dict[str, Any]:
    return {
        "body": {"string": body},
        "headers": {"content-type": [content_type], "x-turnspec-synthetic": ["true"]},
        "status": {"code": status, "message": message},
    }


def google_error(status: int, reason: str, grpc: str, message: str) -> dict[str, Any]:
    return response(json.dumps({"error": {"code": status, "message": message, "status": grpc}}), status, reason)


def request(body: dict[str, Any], *, stream: bool = False) -> dict[str, Any]:
    method = "streamRawPredict" if stream else "rawPredict"
    return {
        "body": json.dumps(body),
        "headers": {"content-type": ["application/json"]},
        "method": "POST",
        "uri": f"{BASE}/claude-sonnet-4-5@20250929:{method}",
    }


# -- the pages' own example --------------------------------------------------------------------
HEY = {"anthropic_version": VERSION, "messages": [{"role": "user", "content": "Hey Claude!"}], "max_tokens": 100}
REPLY = {
    "id": "msg_vrtx_01HeyClaudeAbCdEfGhIjKl",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": "Hello! How can I help you today?"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 12},
}


def sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


STREAM = sse(
    {"type": "message_start", "message": {**REPLY, "content": [], "stop_reason": None, "usage": {**REPLY["usage"], "output_tokens": 1}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "ping"},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello! How can I"}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " help you today?"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 12}},
    {"type": "message_stop"},
)  # fmt: skip

write(
    "vertex.yaml",
    [
        {"request": request(HEY), "response": response(json.dumps(REPLY), 200, "OK")},
        {
            "request": request({**HEY, "stream": True}, stream=True),
            "response": response(STREAM, 200, "OK", "text/event-stream; charset=utf-8"),
        },
    ],
)

# -- Anthropic's documented examples, sent to Vertex AI ----------------------------------------
for name in ("text.yaml", "stops.yaml", "tools.yaml", "thinking.yaml", "cache.yaml"):
    write(name, moved(interactions(name)))
write("image.yaml", moved([it for it in interactions("image.yaml") if not _url_image(it)]))

# -- errors: the model's (Anthropic's body), then Vertex AI's (Google's error model) ------------
FRONT = [
    google_error(
        401,
        "Unauthorized",
        "UNAUTHENTICATED",
        "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other "
        "valid authentication credential.",
    ),
    google_error(
        403,
        "Forbidden",
        "PERMISSION_DENIED",
        "Permission 'aiplatform.endpoints.predict' denied on resource "
        "'//aiplatform.googleapis.com/projects/turnspec-docs/locations/global/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929' (or it may not exist).",
    ),
    google_error(
        404,
        "Not Found",
        "NOT_FOUND",
        "Publisher Model `projects/turnspec-docs/locations/global/publishers/anthropic/models/"
        "claude-sonnet-4-5@20250929` not found.",
    ),
    google_error(
        429,
        "Too Many Requests",
        "RESOURCE_EXHAUSTED",
        "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model with base model: "
        "anthropic-claude-sonnet-4-5. Please submit a quota increase request.",
    ),
]
model_errors = moved([it for it in interactions("errors.yaml") if _model_error(it)])
write("errors.yaml", [*model_errors, *({"request": request(HEY), "response": r} for r in FRONT)])
