"""Amazon Bedrock Runtime's Converse API (`POST /model/{modelId}/converse` and
`/converse-stream`) and, for attribution only, its token counter (`/count-tokens`), as data.

Written from AWS's documentation and botocore's `bedrock-runtime` service model (the
`Converse`, `ConverseStream` and `CountTokens` operations and their shapes), never from an
adapter:

- Request: the model is in the URL (`modelId`, percent-encoded), not the body. `messages`
  hold `role` user/assistant and `content`, a list of union blocks of exactly one member:
  `text`, `image` (`format` png/jpeg/gif/webp, `source.bytes` base64 in JSON, or
  `source.s3Location`), `document`, `video`, `audio`, `toolUse` (`toolUseId`, `name`,
  `input`), `toolResult` (`toolUseId`, `content` of `text`/`json`/`image`/`document`/...,
  `status` success/error), `reasoningContent` (`reasoningText` {`text`, `signature`} or
  `redactedContent`, base64), `cachePoint`, `guardContent`, `citationsContent`. `system` is
  a top-level list of `text`/`guardContent`/`cachePoint` blocks. `inferenceConfig` holds
  `maxTokens`, `temperature`, `topP`, `stopSequences`; `toolConfig` holds `tools` (each a
  `toolSpec` {`name`, `description`, `inputSchema.json`}, a `systemTool` or a `cachePoint`)
  and `toolChoice`; `additionalModelRequestFields` passes model-specific fields through.
- Response: `output.message`, `stopReason` (end_turn, tool_use, max_tokens, stop_sequence,
  guardrail_intervened, content_filtered, malformed_model_output, malformed_tool_use,
  model_context_window_exceeded), `usage` (`inputTokens`, `outputTokens`, `totalTokens`,
  `cacheReadInputTokens`, `cacheWriteInputTokens`), `metrics.latencyMs`. The response names
  no model.
- ConverseStream answers an AWS event stream (`application/vnd.amazon.eventstream`) of
  `messageStart`, `contentBlockStart` (tool use), `contentBlockDelta` (`text`,
  `toolUse.input` fragments, `reasoningContent` `text`/`signature`/`redactedContent`),
  `contentBlockStop`, `messageStop` (`stopReason`) and `metadata` (`usage`, `metrics`), or
  an exception frame (`internalServerException`, `modelStreamErrorException`,
  `validationException`, `throttlingException`, `serviceUnavailableException`).
- Errors: a JSON body `{"message": ...}` with the HTTP status of the modelled exception
  (400 ValidationException, 403 AccessDeniedException, 404 ResourceNotFoundException, 408
  ModelTimeoutException, 424 ModelErrorException, 429 ThrottlingException and
  ModelNotReadyException, 500 InternalServerException, 503 ServiceUnavailableException),
  named in the `x-amzn-ErrorType` header (AWS's REST-JSON protocol).
- Tool ids: `ToolUseId` is `[a-zA-Z0-9_.:-]+`, 1 to 64 characters.

Credentials ride in `authorization` (SigV4 or a Bedrock API key as a bearer token) and
`x-amz-security-token` (temporary credentials): `cassettes lint` (CL001) flags both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from . import equivalence
from .api import (
    Access,
    AlsoAccepted,
    Carries,
    Endpoint,
    Equivalence,
    ErrorSignals,
    JsonBody,
    Located,
    ModelIn,
    Probe,
    Probes,
    ThinkingBack,
    ToolIdRule,
    UsageFields,
    WireApi,
    json_object,
    option_fields,
    value_at,
)
from .eventstream import EVENT_STREAM
from .framing import loads_strict

DOCS = (
    "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html",
    "https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html",
    "https://docs.aws.amazon.com/bedrock/latest/userguide/conversation-inference.html",
    "https://docs.aws.amazon.com/bedrock/latest/userguide/tool-use.html",
    "https://docs.aws.amazon.com/bedrock/latest/userguide/claude-messages-extended-thinking.html",
    "https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html",
    "https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html",
    "https://github.com/boto/botocore/blob/develop/botocore/data/bedrock-runtime/2023-09-30/service-2.json",
)
COUNT_TOKENS_DOCS = ("https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_CountTokens.html",)

_CONVERSE = re.compile(r"/model/[^/]+/converse(?:-stream)?/?$")
_STREAM = re.compile(r"/model/[^/]+/converse-stream/?$")
_MODEL = re.compile(r"/model/([^/]+)/(?:converse|converse-stream|count-tokens)/?$")

# raw `stopReason` (the service model's StopReason enum) -> canonical StopReason
STOP_REASONS: dict[str, str] = {
    "end_turn": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    # a guardrail or a content filter withheld content: the turn still completed, as OpenAI's
    # content_filter and Anthropic's refusal are read by the reference adapters
    "guardrail_intervened": "end_turn",
    "content_filtered": "end_turn",
    # the model's output could not be parsed: the turn ended with what it produced
    "malformed_model_output": "end_turn",
    "malformed_tool_use": "end_turn",
    # the output filled the context window: truncated, like max_tokens
    "model_context_window_exceeded": "max_tokens",
}

IMAGE_FORMATS = ("png", "jpeg", "gif", "webp")  # ImageFormat


def model_of(url: str) -> str | None:
    """The `modelId` of a Converse URL, percent-decoded (`us.amazon.nova-micro-v1:0`)."""
    found = _MODEL.search(urlsplit(url).path or url)
    return unquote(found.group(1)) if found else None


def is_streaming(url: str, _body: JsonBody | None = None) -> bool:
    """ConverseStream is its own operation: the URL, not the body, asks for a stream."""
    return _STREAM.search(urlsplit(url).path or url) is not None


def _messages(body: JsonBody) -> Iterator[tuple[int, dict[str, Any]]]:
    msgs = body.get("messages")
    for i, m in enumerate(msgs if isinstance(msgs, list) else []):
        if isinstance(m, dict):
            yield i, m


def _blocks(body: JsonBody) -> Iterator[tuple[str, dict[str, Any]]]:
    """(pointer, block) for every content block of every message, toolResult contents included."""
    for i, m in _messages(body):
        content = m.get("content")
        for j, b in enumerate(content if isinstance(content, list) else []):
            if not isinstance(b, dict):
                continue
            at = f"/messages/{i}/content/{j}"
            yield at, b
            result = b.get("toolResult")
            inner = result.get("content") if isinstance(result, dict) else None
            for k, ib in enumerate(inner if isinstance(inner, list) else []):
                if isinstance(ib, dict):
                    yield f"{at}/toolResult/content/{k}", ib


def _member(*path: str) -> Probe:
    """The string at `path` under every block that has it (`toolUse`, `toolUseId`)."""

    def probe(body: JsonBody) -> list[Located]:
        out = []
        for at, b in _blocks(body):
            value: Any = b
            for p in path:
                value = value.get(p) if isinstance(value, dict) else None
            if isinstance(value, str):
                out.append(Located(at + "".join(f"/{p}" for p in path), value))
        return out

    return probe


def _response_member(*path: str) -> Probe:
    def probe(body: JsonBody) -> list[Located]:
        msg = (body.get("output") or {}).get("message") if isinstance(body.get("output"), dict) else None
        content = msg.get("content") if isinstance(msg, dict) else None
        out = []
        for j, b in enumerate(content if isinstance(content, list) else []):
            value: Any = b
            for p in path:
                value = value.get(p) if isinstance(value, dict) else None
            if isinstance(value, str):
                out.append(Located(f"/output/message/content/{j}" + "".join(f"/{p}" for p in path), value))
        return out

    return probe


def _system(body: JsonBody) -> list[Located]:
    """The top-level `system` list's text blocks (a role-system message does not exist on
    this wire; the probe looks nowhere else)."""
    system = body.get("system")
    return [
        Located(f"/system/{i}/text", b["text"])
        for i, b in enumerate(system if isinstance(system, list) else [])
        if isinstance(b, dict) and isinstance(b.get("text"), str)
    ]


def _tool_result_errors(body: JsonBody) -> list[Located]:
    """One value per toolResult: whether its `status` is `error` (absent: not an error)."""
    out: list[Located] = []
    for at, b in _blocks(body):
        r = b.get("toolResult")
        if isinstance(r, dict):
            out.append(Located(f"{at}/toolResult/status" if "status" in r else at, r.get("status") == "error"))
    return out


def _images(body: JsonBody) -> list[Located]:
    out: list[Located] = []
    for at, b in _blocks(body):
        img = b.get("image")
        if not isinstance(img, dict) or not isinstance(img.get("source"), dict):
            continue
        src, fmt = img["source"], img.get("format")
        media = f"image/{fmt}" if isinstance(fmt, str) else None
        if "bytes" in src:
            value = {"kind": "base64", "media_type": media, "data": src["bytes"]}
        else:  # s3Location: the service reads the object itself
            value = {"kind": "s3", "media_type": media}
        out.append(Located(f"{at}/image", value))
    return out


USAGE = UsageFields(
    "/usage", (("inputTokens",),), (("outputTokens",),), ("cacheReadInputTokens",), ("cacheWriteInputTokens",)
)
"""Converse's TokenUsage (a stream's in its `metadata` event)."""


def usage_of(usage: Any) -> dict[str, int] | None:
    """TokenUsage -> the four canonical buckets. `inputTokens` excludes what the cache read
    or wrote (prompt-caching user guide), so the counts are disjoint, as canonical usage is."""
    return USAGE.buckets(usage)


def _event(events: list[Any], name: str) -> Iterator[dict[str, Any]]:
    for e in events:
        if isinstance(e, dict) and isinstance(e.get(name), dict):
            yield e[name]


def _stream_stop_reason(events: list[Any]) -> Any:
    return next((e.get("stopReason") for e in _event(events, "messageStop")), None)


def _stream_usage(events: list[Any]) -> Any:
    return next((usage_of(e.get("usage")) for e in _event(events, "metadata")), None)


def _stream_tool_fragments(events: list[Any]) -> list[list[str]] | None:
    """`contentBlockDelta.delta.toolUse.input` of each client tool call, by its
    `contentBlockIndex`; a `server_tool_use` (the service runs it, ToolUseType) is not one."""
    calls: dict[Any, list[str]] = {}
    for e in events:
        if not isinstance(e, dict):
            continue
        start = e.get("contentBlockStart")
        if isinstance(start, dict):
            use = (start.get("start") or {}).get("toolUse")
            if isinstance(use, dict) and use.get("type") != "server_tool_use":
                calls[start.get("contentBlockIndex")] = []
        delta = e.get("contentBlockDelta")
        if isinstance(delta, dict) and delta.get("contentBlockIndex") in calls:
            frag = ((delta.get("delta") or {}).get("toolUse") or {}).get("input")
            if isinstance(frag, str):
                calls[delta.get("contentBlockIndex")].append(frag)
    return list(calls.values())


def _stream_text(events: list[Any]) -> list[str] | None:
    """The text each content block of a stream spells (ConverseStream: `contentBlockDelta`
    events whose `delta` is `{"text": ...}`, by `contentBlockIndex`), one per block in order."""
    texts: dict[Any, list[str]] = {}
    for e in events:
        delta = e.get("contentBlockDelta") if isinstance(e, dict) else None
        if isinstance(delta, dict) and isinstance((delta.get("delta") or {}).get("text"), str):
            texts.setdefault(delta.get("contentBlockIndex"), []).append(delta["delta"]["text"])
    return ["".join(t) for t in texts.values()]


def _call_of(use: Any) -> tuple[str, Any] | None:
    """A ToolUseBlock's `name` and `input` ("The input to pass to the tool")."""
    if not isinstance(use, dict) or not isinstance(use.get("name"), str):
        return None
    return use["name"], json_object(use.get("input"))


def _stream_tool_calls(events: list[Any]) -> list[tuple[str, Any]] | None:
    """Each client tool call of a stream: `contentBlockStart.start.toolUse` names it, the
    `contentBlockDelta.delta.toolUse.input` pieces at its `contentBlockIndex` spell its input
    (`_stream_tool_fragments`'), in the order the calls opened."""
    names: dict[Any, str] = {}
    for e in events:
        start = e.get("contentBlockStart") if isinstance(e, dict) else None
        if not isinstance(start, dict):
            continue
        use = (start.get("start") or {}).get("toolUse")
        if isinstance(use, dict) and use.get("type") != "server_tool_use" and isinstance(use.get("name"), str):
            names[start.get("contentBlockIndex")] = use["name"]
    fragments = _stream_tool_fragments(events) or []
    spelled = ["".join(f) for f in fragments]
    return [
        (name, json_object(text) if text.strip() else {}) for name, text in zip(names.values(), spelled, strict=False)
    ]


# the exception members of ConverseStreamOutput (an event stream's `exception` frames)
STREAM_EXCEPTIONS = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
    }
)


def _stream_error(events: list[Any]) -> Any:
    """An exception member of the stream, as the REST-JSON error body it stands for: its
    payload with the error's name in `__type` (Smithy restJson1: the type is the
    `X-Amzn-Errortype` header or the body's `__type`), e.g. `{"__type":
    "ThrottlingException", "message": "..."}`."""
    for e in events:
        if isinstance(e, dict) and len(e) == 1:
            ((name, payload),) = e.items()
            if name in STREAM_EXCEPTIONS:
                body = dict(payload) if isinstance(payload, dict) else {}
                return {"__type": name[:1].upper() + name[1:], **body}
    return None


_TEXT_FORMAT = "/outputConfig/textFormat"


def _output_schema(body: JsonBody) -> list[Located]:
    """Contract §3.3's `output_schema` in Converse's structured-output field: "For Converse
    APIs, use the `outputConfig.textFormat` request field"
    (https://docs.aws.amazon.com/bedrock/latest/userguide/structured-output.html), whose
    `structure.jsonSchema.schema` is the JSON Schema as a JSON text (JsonSchemaDefinition
    `schema`, "Type: String"): the schema it spells, else the `textFormat` object itself."""
    fmt = value_at(body, _TEXT_FORMAT)
    if not isinstance(fmt, Mapping):
        return []
    pointer = f"{_TEXT_FORMAT}/structure/jsonSchema/schema"
    text = value_at(body, pointer)
    try:
        schema = loads_strict(text) if isinstance(text, str) else None
    except ValueError:
        schema = None
    return [Located(pointer, schema)] if isinstance(schema, Mapping) else [Located(_TEXT_FORMAT, fmt)]


def _response_tool_ids(body: JsonBody) -> list[Located]:
    return _response_member("toolUse", "toolUseId")(body)


def _response_tool_calls(body: JsonBody) -> list[Located]:
    """The client tool calls of the reply: the `toolUse` members of `output.message.content[]`
    (ToolUseBlock, "Contains information about a tool that the model is requesting be run"),
    without those of `type` `server_tool_use` (ToolUseBlock `type`, "Valid Values:
    server_tool_use": a system tool Bedrock runs itself, its toolResult in the same reply;
    https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolUseBlock.html)."""
    msg = (body.get("output") or {}).get("message") if isinstance(body.get("output"), dict) else None
    content = msg.get("content") if isinstance(msg, dict) else None
    return [
        Located(f"/output/message/content/{j}/toolUse", b["toolUse"])
        for j, b in enumerate(content if isinstance(content, list) else [])
        if isinstance(b, dict) and isinstance(b.get("toolUse"), dict) and b["toolUse"].get("type") != "server_tool_use"
    ]


# x-amzn-ErrorType -> contract §6.1 class. ValidationException is left to the status
# default (400 -> invalid_request), so an over-long input ("Input is too long for requested
# model.") is remapped to context overflow by the record's overflow wording (§6.2's 400 row).
# Bedrock Runtime's modelled exceptions, and AWS's common errors any service may answer
# (InternalFailure, TooManyRequestsException: the AWS "Common Errors" reference).
_EXCEPTION_CLASSES = {
    "TooManyRequestsException": "rate_limit",
    "InternalFailure": "server_error",
    "ThrottlingException": "rate_limit",
    "ModelNotReadyException": "rate_limit",
    "ServiceQuotaExceededException": "rate_limit",
    "AccessDeniedException": "auth",
    "UnrecognizedClientException": "auth",
    "ExpiredTokenException": "auth",
    "ResourceNotFoundException": "invalid_request",
    "ModelTimeoutException": "network",
    "ModelErrorException": "server_error",
    "ModelStreamErrorException": "server_error",
    "InternalServerException": "server_error",
    "ServiceUnavailableException": "server_error",
}
ERRORS = ErrorSignals(
    headers={"x-amzn-ErrorType": _EXCEPTION_CLASSES},
    # a stream's exception frame has no HTTP status to default from: ValidationException,
    # which a response leaves to its 400, names its class itself there
    frames={"validationException": "invalid_request"},
    # restJson1 may name the error in the body's `__type` instead (and a stream's exception
    # frame is read as such a body: `stream_error` below)
    body_fields=(("/__type", _EXCEPTION_CLASSES),),
    # contract §6.2's 413 row: "Some providers use 400 with body indicating overflow; remap."
    # Bedrock words it "Input is too long for requested model." (the Converse ValidationException
    # the cassettes transcribe) and, on the service's token check, "Input Tokens Exceeded"
    overflow_message=re.compile(
        r"input is too long|too many input tokens|input tokens? exceed|prompt is too long|context (?:length|window)",
        re.I,
    ),
    # a 408 the service answers when the *model* ran out of time processing the request: a
    # response, so not contract §6.1 NETWORK's "timeout pre-response"; §6.2 lets an adapter
    # adjust the 408 default "based on provider error bodies", so SERVER_ERROR is honest too
    also_accepted=(
        AlsoAccepted(
            "ModelTimeoutException",
            frozenset({"server_error"}),
            says="The request took too long to process. Processing time exceeded the model timeout length.",
            source="https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html",
        ),
    ),
)
"""Bedrock's documented error signals (the `x-amzn-ErrorType` header of AWS's REST-JSON
protocol; the exceptions' HTTP statuses from the service model)."""

EXCEPTION_HINTS: dict[str, str] = {
    **{name.lower(): cls for name, cls in _EXCEPTION_CLASSES.items()},
    "validationexception": "invalid_request",
}
"""An AWS error name, lower-cased (a stream's `exception` frame spells them
`throttlingException`) -> contract §6.1 class: `ERRORS`' table, plus ValidationException,
which a frame, having no HTTP status to default from, must name itself. The one table the
adapters read for both a response's error and an `exception` frame."""

BYTES_ALIKE = Equivalence(
    forms="base64 blobs (image/document/video bytes, redactedContent) in the standard alphabet, compared as bytes",
    says="Blob: base64-encoded binary data",
    source="https://smithy.io/2.0/aws/protocols/aws-restjson1-protocol.html",
    base64=("/messages/*/content/*/image/source/bytes", "/messages/*/content/*/reasoningContent/redactedContent"),
    canonical_base64=("image.source.data", "redacted_thinking.data"),
)


SMITHY_LABEL = "https://smithy.io/2.0/spec/http-bindings.html#httplabel-trait"
MODEL_IN_PATH = ModelIn(
    "path",
    encoding="percent",
    # the modelId is an httpLabel of Bedrock Runtime's restJson1 operations (botocore's
    # `"location":"uri","locationName":"modelId"`); real recordings spell `:` as %3A and an
    # ARN's `/` as %2F
    says="Characters not defined as unreserved by RFC 3986 section 2.3 MUST be percent-encoded.",
    source=SMITHY_LABEL,
)
"""Bedrock Runtime's model id: one URL path segment, percent-encoded (its `:` and an ARN's `/`
included), never a body field."""

MODEL_EXAMPLES = (
    # the user guide's examples: a base model id, and an inference profile's ARN (the API
    # reference: "If you use an inference profile, specify the inference profile ID or its ARN.")
    "anthropic.claude-3-haiku-20240307-v1:0",
    "arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0",
)

ENDPOINT = Endpoint(
    path="/model/{model}/converse",
    stream_path="/model/{model}/converse-stream",
    model=MODEL_IN_PATH,
    examples=MODEL_EXAMPLES,
    says="POST /model/modelId/converse HTTP/1.1 (Converse); POST /model/modelId/converse-stream HTTP/1.1 (ConverseStream)",
    source="https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html",
)
"""Converse and ConverseStream are two operations: the stream is asked for by the URL."""

ACCESS = Access(
    # the runtime endpoint of a region (us-east-1 here; the harness's base URL names another)
    base_url="https://bedrock-runtime.us-east-1.amazonaws.com",
    # "Use an Amazon Bedrock API key": "Authorization: Bearer $AWS_BEARER_TOKEN_BEDROCK"
    # (docs.aws.amazon.com/bedrock/latest/userguide/api-keys-use.html)
    key_env="AWS_BEARER_TOKEN_BEDROCK",
    key_header="authorization",
    key_prefix="Bearer ",
    # SigV4's `Authorization` and the session token of temporary credentials
    credential_headers=("authorization", "x-amz-security-token"),
)
"""Where Bedrock Runtime lives and how a request proves who sent it."""


BEDROCK_CONVERSE = WireApi(
    name="bedrock-converse",
    usage_fields=USAGE,
    title="Amazon Bedrock Converse API",
    docs=DOCS,
    request_paths=(_CONVERSE,),
    framing=EVENT_STREAM,
    is_streaming=is_streaming,
    schema_dir="bedrock-converse",
    errors=ERRORS,
    hosts=(),  # bedrock-runtime.<region>.amazonaws.com, and FIPS / VPC endpoints
    tool_ids=ToolIdRule(pattern=re.compile(r"[a-zA-Z0-9_.:-]+"), max_length=64),
    carries=Carries(
        system_prompt=True,
        thinking_text=True,
        thinking_signature=True,
        redacted_thinking=True,
        images_base64=True,
        images_url=False,  # bytes or an S3 location, never an http(s) URL
        tool_result_error=True,  # toolResult.status "error"
        cache_read_tokens=True,
        cache_write_tokens=True,
        parallel_tool_calls=True,
    ),
    thinking_back=ThinkingBack(
        needs=frozenset({"text", "signature", "redacted"}),
        # Bedrock's extended-thinking guide defers to Anthropic's for Claude; Converse carries the
        # same blocks as `reasoningContent` (`reasoningText` with `signature`, `redactedContent`)
        says=(
            "During tool use, you must pass thinking and redacted_thinking blocks back to the API, "
            "and you must include the complete unmodified block back to the API."
        ),
        source="https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking",
    ),
    probes=Probes(
        system=_system,
        thinking_text=_member("reasoningContent", "reasoningText", "text"),
        signatures=_member("reasoningContent", "reasoningText", "signature"),
        redacted_thinking=_member("reasoningContent", "redactedContent"),
        tool_use_ids=_member("toolUse", "toolUseId"),
        tool_result_ids=_member("toolResult", "toolUseId"),
        tool_result_errors=_tool_result_errors,
        images=_images,
        response_stop_reason=lambda body: body.get("stopReason"),
        response_usage=lambda body: usage_of(body.get("usage")),
        response_tool_ids=_response_tool_ids,
        response_tool_calls=_response_tool_calls,
        # ContentBlock: a `text` member is "Text to include in the message"
        response_text=_response_member("text"),
        stream_text=_stream_text,
        call_of=_call_of,
        stream_tool_calls=_stream_tool_calls,
        stream_stop_reason=_stream_stop_reason,
        stream_usage=_stream_usage,
        stream_opens=lambda e: isinstance(e, dict) and "messageStart" in e,
        # `metadata` (usage and metrics) is the last event, after messageStop
        stream_closes=lambda e: isinstance(e, dict) and "metadata" in e,
        stream_tool_fragments=_stream_tool_fragments,
        stream_error=_stream_error,
        response_signatures=_response_member("reasoningContent", "reasoningText", "signature"),
        response_thinking_text=_response_member("reasoningContent", "reasoningText", "text"),
        output_schema=_output_schema,
        request_options=option_fields(
            max_output_tokens="/inferenceConfig/maxTokens",
            stop_sequences="/inferenceConfig/stopSequences",
            temperature="/inferenceConfig/temperature",
        ),
    ),
    stop_reasons=STOP_REASONS,
    # no contract §3.3 StopReason names these: the model's output could not be used, which
    # canonical §4.3 MessageStatus ERROR ("generation failed") fits as well as end_turn; a
    # guardrail or content filter that withheld the reply is read as either, as OpenAI's
    # content_filter, Gemini's SAFETY and Anthropic's refusal are
    stop_reasons_also={
        "malformed_model_output": ("error",),
        "malformed_tool_use": ("error",),
        "guardrail_intervened": ("error",),
        "content_filtered": ("error",),
    },
    accepted_differences=(*equivalence.JSON_FORMS, BYTES_ALIKE),
    # model-native settings passed through (`thinking`, `reasoning_config`,
    # `reasoning_effort`): the model adds input tokens for them that no adapter renders
    out_of_band_settings=("/additionalModelRequestFields",),
    access=ACCESS,
    endpoint=ENDPOINT,
)

# `POST /model/{modelId}/count-tokens`: a Converse (or InvokeModel) request wrapped in
# `input`, answered with `{"inputTokens": N}`; not a chat turn, so no adapter serves it.
BEDROCK_COUNT_TOKENS = WireApi(
    name="bedrock-count-tokens",
    title="Amazon Bedrock CountTokens (not a chat turn)",
    docs=COUNT_TOKENS_DOCS,
    request_paths=(re.compile(r"/model/[^/]+/count-tokens/?$"),),
    framing=EVENT_STREAM,  # never streamed
    is_streaming=lambda _url, _body: False,
    schema_dir="bedrock-count-tokens",
    errors=ERRORS,
    chat=False,
    access=ACCESS,
)
