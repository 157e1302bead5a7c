"""Authoring helper for cassettes/bedrock-anthropic (imports no adapter).

Claude on Amazon Bedrock InvokeModel takes the Anthropic Messages body as AWS's "Request and
Response" page for Claude gives it and answers with Anthropic's reply
(https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html;
https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_InvokeModel.html,
API_runtime_InvokeModelWithResponseStream.html, API_runtime_ResponseStream.html,
API_runtime_PayloadPart.html):

- `POST /model/{modelId}/invoke`, `/invoke-with-response-stream` for a stream, the model id
  percent-encoded in the path; the body has "anthropic_version – (Required) ... The value must
  be bedrock-2023-05-31" and neither `model` nor `stream` (the URL carries both);
- the stream is an AWS event stream of ResponseStream's `chunk` members, each a PayloadPart
  whose `bytes` ("Base64-encoded bytes of payload data") are one Anthropic stream event, framed
  as AWS's "Event stream encoding" says (prelude, headers, payload, two CRC32s computed here
  with zlib); `message_stop` carries Bedrock's `amazon-bedrock-invocationMetrics`.

So this script writes `text.yaml`, `stops.yaml`, `tools.yaml`, `thinking.yaml`, `image.yaml`
(base64 sources only: the page documents no other) and `cache.yaml` from the hand-written
cassettes of `cassettes/anthropic/` (themselves transcribed from Anthropic's documented
examples), each request moved to InvokeModel's URL and body, each reply Anthropic's as it was
and each stream the same events re-framed as chunks; and `errors.yaml`, the exceptions the
InvokeModel reference documents with their statuses and `x-amzn-ErrorType` (the messages
invented strings of the documented form), and streams that end in an exception frame of
ResponseStream's members (`throttlingException`, `modelStreamErrorException`) and in the
model's own Anthropic `error` event. Token counts are the source cassettes' (every response
says `x-turnspec-synthetic: true`).

Run from the checkout root: .venv/bin/python cassettes/bedrock-anthropic/_author.py
"""

import base64
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import yaml

OUT = Path(__file__).parent
SOURCE = OUT.parent / "anthropic"
HOST = "https://bedrock-runtime.us-east-1.amazonaws.com"
# Anthropic's model alias -> the Bedrock model id of that model, percent-encoded as a URI label
MODELS = {"claude-sonnet-4-5": "anthropic.claude-sonnet-4-5-20250929-v1%3A0"}
VERSION = "bedrock-2023-05-31"
REQUEST_ID = ["5d2e8f4a-1b3c-4d5e-9f60-7a8b9c0d1e2f"]


# -- AWS event-stream encoding -----------------------------------------------------------------


def _str_header(name: str, value: str) -> bytes:
    n, v = name.encode(), value.encode()
    return bytes([len(n)]) + n + b"\x07" + struct.pack(">H", len(v)) + v


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    raw = b"".join(_str_header(k, v) for k, v in headers.items())
    prelude = struct.pack(">II", 12 + len(raw) + len(payload) + 4, len(raw))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    message = prelude + raw + payload
    return message + struct.pack(">I", zlib.crc32(message))


def chunk(event: dict[str, Any]) -> bytes:
    """One `chunk` of the ResponseStream: a PayloadPart whose `bytes` are one Anthropic event, base64."""
    data = base64.b64encode(json.dumps(event, separators=(",", ":")).encode()).decode()
    payload = json.dumps({"bytes": data}, separators=(",", ":")).encode()
    return frame({":event-type": "chunk", ":content-type": "application/json", ":message-type": "event"}, payload)


def exception(name: str, message: str) -> bytes:
    return frame(
        {":exception-type": name, ":content-type": "application/json", ":message-type": "exception"},
        json.dumps({"message": message}).encode(),
    )


# -- moving Anthropic's cassettes to InvokeModel -----------------------------------------------


def sse_events(body: str) -> list[dict[str, Any]]:
    """The JSON `data:` of each event of an Anthropic SSE body (the source cassettes' streams)."""
    return [json.loads(line[len("data: ") :]) for line in body.splitlines() if line.startswith("data: ")]


def with_metrics(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`message_stop` with Bedrock's `amazon-bedrock-invocationMetrics` (its counts the stream's usage)."""
    usage: dict[str, Any] = {}
    for e in events:
        if e["type"] == "message_start":
            usage.update(e["message"].get("usage") or {})
        elif e["type"] == "message_delta":
            usage.update(e.get("usage") or {})
    metrics = {
        "inputTokenCount": usage.get("input_tokens", 0),
        "outputTokenCount": usage.get("output_tokens", 0),
        "invocationLatency": 1840,
        "firstByteLatency": 420,
    }
    return [{**e, "amazon-bedrock-invocationMetrics": metrics} if e["type"] == "message_stop" else e for e in events]


def stream_body(events: list[dict[str, Any]], tail: bytes = b"") -> bytes:
    return b"".join(chunk(e) for e in with_metrics(events)) + tail


def bedrock_request(request: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """An Anthropic Messages request (vcrpy form) as the same request to InvokeModel, and whether it streams."""
    body = json.loads(request["body"])
    model = MODELS[body.pop("model")]
    stream = body.pop("stream", False) is True
    operation = "invoke-with-response-stream" if stream else "invoke"
    moved = {
        "body": json.dumps({"anthropic_version": VERSION, **body}),
        "headers": {"content-type": ["application/json"]},
        "method": "POST",
        "uri": f"{HOST}/model/{model}/{operation}",
    }
    return moved, stream


def headers(content_type: str, extra: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    return {
        "content-type": [content_type],
        "x-amzn-requestid": list(REQUEST_ID),
        "x-turnspec-synthetic": ["true"],
        **(extra or {}),
    }


def moved(it: dict[str, Any]) -> dict[str, Any]:
    req, stream = bedrock_request(it["request"])
    resp = it["response"]
    if not stream:
        body: Any = resp["body"]["string"]
        return {"request": req, "response": {**resp, "headers": headers("application/json")}}
    body = stream_body(sse_events(resp["body"]["string"]))
    response = {"body": {"string": body}, "headers": headers(EVENT_STREAM), "status": resp["status"]}
    return {"request": req, "response": response}


EVENT_STREAM = "application/vnd.amazon.eventstream"


def interactions(name: str) -> list[dict[str, Any]]:
    return list(yaml.safe_load((SOURCE / name).read_text(encoding="utf-8"))["interactions"])


class _Dumper(yaml.Dumper):
    """Multi-line strings as YAML block literals, bytes as `!!binary`, as the other cassettes write them."""


def _str(dumper: yaml.Dumper, value: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(str, _str)


def write(name: str, its: list[dict[str, Any]]) -> None:
    text = yaml.dump({"interactions": its, "version": 1}, Dumper=_Dumper, allow_unicode=True, width=10**6)
    (OUT / name).write_text(text, encoding="utf-8")


for name in ("text.yaml", "stops.yaml", "tools.yaml", "thinking.yaml", "cache.yaml"):
    write(name, [moved(it) for it in interactions(name)])
write("image.yaml", [moved(it) for it in interactions("image.yaml") if '"type": "url"' not in it["request"]["body"]])

# -- errors: the exceptions InvokeModel documents, and streams that fail after they began ------
HELLO = {
    "anthropic_version": VERSION,
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "Hello, Claude"}],
}


def request(*, stream: bool = False) -> dict[str, Any]:
    operation = "invoke-with-response-stream" if stream else "invoke"
    return {
        "body": json.dumps(HELLO),
        "headers": {"content-type": ["application/json"]},
        "method": "POST",
        "uri": f"{HOST}/model/{MODELS['claude-sonnet-4-5']}/{operation}",
    }


def aws_error(status: int, reason: str, kind: str, message: str) -> dict[str, Any]:
    extra = {"x-amzn-ErrorType": [f"{kind}:http://internal.amazon.com/coral/com.amazon.bedrock/"]}
    return {
        "request": request(),
        "response": {
            "body": {"string": json.dumps({"message": message})},
            "headers": headers("application/json", extra),
            "status": {"code": status, "message": reason},
        },
    }


def failing_stream(tail: bytes, inner: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The first text reply's stream, cut after its first delta, then `tail` (an exception
    frame), or the model's own `inner` events (an Anthropic `error` event)."""
    [_, streamed, *_] = interactions("text.yaml")
    events = sse_events(streamed["response"]["body"]["string"])
    start = [e for e in events if e["type"] in ("message_start", "content_block_start")][:2]
    first = next(e for e in events if e["type"] == "content_block_delta")
    body = b"".join(chunk(e) for e in [*start, first, *(inner or [])]) + tail
    return {
        "request": request(stream=True),
        "response": {
            "body": {"string": body},
            "headers": headers(EVENT_STREAM),
            "status": {"code": 200, "message": "OK"},
        },
    }


write(
    "errors.yaml",
    [
        aws_error(400, "Bad Request", "ValidationException", "messages: Field required"),
        aws_error(400, "Bad Request", "ValidationException", "Input is too long for requested model."),
        aws_error(403, "Forbidden", "AccessDeniedException", "You don't have access to the model with the specified model ID."),
        aws_error(404, "Not Found", "ResourceNotFoundException", "Could not resolve the foundation model from the provided model identifier."),
        aws_error(408, "Request Timeout", "ModelTimeoutException", "Model has timed out in processing the request."),
        aws_error(424, "Failed Dependency", "ModelErrorException", "The request failed due to an error while processing the model."),
        aws_error(429, "Too Many Requests", "ThrottlingException", "Too many requests, please wait before trying again."),
        aws_error(500, "Internal Server Error", "InternalServerException", "An internal server error occurred. Retry your request."),
        aws_error(503, "Service Unavailable", "ServiceUnavailableException", "The service isn't currently available. Try again later."),
        failing_stream(exception("throttlingException", "Too many requests, please wait before trying again.")),
        failing_stream(exception("modelStreamErrorException", "The model stream ended with an error.")),
        failing_stream(b"", [{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}]),
    ],
)  # fmt: skip
