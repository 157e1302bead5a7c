"""The Gemini API `models.generateContent` / `models.streamGenerateContent`, as data.

Written from Google's documentation (URLs in `DOCS`), not from the reference adapter:

- The model and the streaming choice live in the URL, not the body:
  `POST /v1beta/models/{model}:generateContent` answers one `GenerateContentResponse`;
  `POST .../{model}:streamGenerateContent` answers a stream of them, as Server-Sent Events
  (`data:` lines) with the query parameter `alt=sse`, otherwise as one JSON array streamed
  element by element. Vertex AI serves the same methods under
  `/v1*/projects/{p}/locations/{l}/publishers/google/models/{model}:...`.
- Request: `contents[]` of `{role: "user"|"model", parts[]}`; `systemInstruction` is a
  Content whose parts carry text only. A Part is one of `text` (with `thought: true` for a
  thought summary), `inlineData {mimeType, data (base64)}`, `fileData {mimeType, fileUri}`,
  `functionCall {id?, name, args}`, `functionResponse {id?, name, response}`, and any part
  may carry `thoughtSignature` (opaque; "pass it back exactly as received"). The JSON
  mapping of the protos also accepts snake_case names (`function_call`, `inline_data`,
  `system_instruction`, ...), which real clients send; probes read both spellings.
- `functionCall.id` is optional: "If populated, the client to execute the functionCall and
  return the response with the matching id". Older models never populate it; a response
  without ids is paired by name and order. Clients may send their own ids.
- A failed function call is reported with an `error` key in `functionResponse.response`
  ("Use 'output' key to specify function output and 'error' key to specify error
  details"): that key is the tool-result error flag of this API.
- Response: `candidates[0].finishReason` (the `FinishReason` enum) and `usageMetadata`:
  `promptTokenCount` *includes* `cachedContentTokenCount` (docs: "When cachedContent is
  set, this is still the total effective prompt size"), `candidatesTokenCount` excludes
  `thoughtsTokenCount`, and `toolUsePromptTokenCount` counts built-in tool results fed
  back as input. Canonical buckets are disjoint, so input = prompt + toolUse - cached and
  output = candidates + thoughts. Gemini reports no cache-write count (explicit caches are
  created by a separate `cachedContents` call).
- Enums may arrive as their numbers: proto3's JSON mapping accepts "the enum value's
  name or its integer value", and Google's SDKs ask for `$alt=json;enum-encoding=int`, so
  `finishReason: 1` is STOP and `blockReason: 1` SAFETY (`FINISH_REASONS`,
  `BLOCK_REASONS`, `enum_name`); the probes and the reference adapter read names only.
- Error bodies are `{"error": {"code", "message", "status"}}` with gRPC status names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

from . import equivalence
from .api import (
    Access,
    Carries,
    Endpoint,
    ErrorSignals,
    Framing,
    JsonBody,
    Located,
    ModelIn,
    Probes,
    ThinkingBack,
    ToolIdRule,
    UsageFields,
    WireApi,
    error_event,
    first_string_at,
    json_object,
    option_fields,
    schema_at,
    string_at,
)

DOCS = (
    "https://ai.google.dev/api/generate-content",
    "https://ai.google.dev/api/caching#Content",
    "https://ai.google.dev/gemini-api/docs/text-generation",
    "https://ai.google.dev/gemini-api/docs/function-calling",
    "https://ai.google.dev/gemini-api/docs/thinking",
    "https://ai.google.dev/gemini-api/docs/thought-signatures",
    "https://ai.google.dev/gemini-api/docs/image-understanding",
    "https://ai.google.dev/gemini-api/docs/caching",
    "https://ai.google.dev/gemini-api/docs/troubleshooting",
    "https://googleapis.github.io/js-genai/release_docs/enums/types.FinishReason.html",
    "https://googleapis.github.io/js-genai/release_docs/classes/types.GenerateContentResponseUsageMetadata.html",
)

# raw `finishReason` -> canonical StopReason. Gemini reports STOP both for a natural end
# and a stop sequence, and also when the turn ends in function calls: an adapter refines
# STOP to `tool_use` when the candidate holds functionCall parts (the docs' finishMessage
# reads "Model generated function call(s).").
STOP_REASONS: dict[str, str] = {
    "STOP": "end_turn",
    "MAX_TOKENS": "max_tokens",
    # content withheld by a filter: a finished turn, as OpenAI's content_filter and
    # Anthropic's refusal are mapped by the reference adapters
    "SAFETY": "end_turn",
    "RECITATION": "end_turn",
    "LANGUAGE": "end_turn",
    "BLOCKLIST": "end_turn",
    "PROHIBITED_CONTENT": "end_turn",
    "SPII": "end_turn",
    "IMAGE_SAFETY": "end_turn",
    "IMAGE_PROHIBITED_CONTENT": "end_turn",
    "IMAGE_RECITATION": "end_turn",
    "IMAGE_OTHER": "end_turn",
    "NO_IMAGE": "end_turn",
    "MODEL_ARMOR": "end_turn",
    "OTHER": "end_turn",
    "FINISH_REASON_UNSPECIFIED": "end_turn",
    # the model produced a tool call the API could not accept: the turn failed
    "STOP (with functionCall parts)": "tool_use",  # STOP_WITH_CALLS, the stream probe's value
    "MALFORMED_FUNCTION_CALL": "error",
    "UNEXPECTED_TOOL_CALL": "error",
    "TOO_MANY_TOOL_CALLS": "error",
    "MISSING_THOUGHT_SIGNATURE": "error",
    # no candidate at all: "blockReason: If set, the prompt was blocked and no candidates
    # are returned" (PromptFeedback); nothing was generated, the call failed
    "promptFeedback.blockReason (no candidates)": "error",  # PROMPT_BLOCKED, both probes' value
}

# finish reasons no contract §3.3 StopReason names, for which `error` is as defensible as the
# `end_turn` above (TC903 accepts either): generation stopped by a filter ("SAFETY: The
# response candidate content was flagged for safety reasons", "RECITATION", "BLOCKLIST",
# "PROHIBITED_CONTENT", "SPII", the image filters, Model Armor), in an unsupported language,
# or for a reason the API leaves unnamed (OTHER): a reply withheld may as well be read as failed,
# as Anthropic's `refusal` and OpenAI's `content_filter` are in their records
STOP_REASONS_ALSO: dict[str, tuple[str, ...]] = {
    raw: ("error",)
    for raw in (
        "SAFETY",
        "RECITATION",
        "LANGUAGE",
        "BLOCKLIST",
        "PROHIBITED_CONTENT",
        "SPII",
        "IMAGE_SAFETY",
        "IMAGE_PROHIBITED_CONTENT",
        "IMAGE_RECITATION",
        "IMAGE_OTHER",
        "NO_IMAGE",
        "MODEL_ARMOR",
        "OTHER",
    )
}

# The numbers of the response enums (proto3 JSON: "Enum: the enum value's name or its
# integer value", https://protobuf.dev/programming-guides/json/; SDKs send
# `$alt=json;enum-encoding=int`). The one table of them: probes and adapters read names.
ENUM_SOURCES = (
    "https://protobuf.dev/programming-guides/json/",
    # Candidate.FinishReason (0-9) and PromptFeedback.BlockReason as numbered in Google's
    # protos of these methods (the numbers the SDKs' int enum encoding sends)
    "https://github.com/googleapis/googleapis/blob/master/google/cloud/aiplatform/v1/content.proto",
    "https://github.com/googleapis/googleapis/blob/master/google/ai/generativelanguage/v1beta/generative_service.proto",
)
FINISH_REASONS: dict[int, str] = {
    0: "FINISH_REASON_UNSPECIFIED",
    1: "STOP",
    2: "MAX_TOKENS",
    3: "SAFETY",
    4: "RECITATION",
    5: "OTHER",
    6: "BLOCKLIST",
    7: "PROHIBITED_CONTENT",
    8: "SPII",
    9: "MALFORMED_FUNCTION_CALL",
}
"""`Candidate.FinishReason` number -> name (an unlisted number stays a number: proto3
enums are open, and an unknown reason maps as the stop-reason table's default)."""
BLOCK_REASONS: dict[int, str] = {
    0: "BLOCK_REASON_UNSPECIFIED",
    1: "SAFETY",
    2: "OTHER",
    3: "BLOCKLIST",
    4: "PROHIBITED_CONTENT",
    5: "IMAGE_SAFETY",
}
"""`PromptFeedback.BlockReason` number -> name."""


def enum_name(value: Any, numbers: Mapping[int, str]) -> Any:
    """An enum field's value as its name: an integer (proto3 JSON's other spelling) is
    looked up in `numbers`; a name, an unlisted number and anything else come back as they are."""
    if isinstance(value, int) and not isinstance(value, bool):
        return numbers.get(value, value)
    return value


def finish_reason(candidate: Any) -> Any:
    """A candidate's `finishReason` by name (None when absent: the candidate is unfinished)."""
    return enum_name(candidate.get("finishReason"), FINISH_REASONS) if isinstance(candidate, dict) else None


def block_reason(body: Any) -> Any:
    """`promptFeedback.blockReason` by name (None when the prompt was not blocked)."""
    fb = field(body, "promptFeedback")[1] if isinstance(body, dict) else None
    return enum_name(field(fb, "blockReason")[1], BLOCK_REASONS) if isinstance(fb, dict) else None


_METHOD = re.compile(r":(generateContent|streamGenerateContent)$")


def field(obj: Mapping[str, Any], camel: str) -> tuple[str, Any]:
    """(key used, value) of a proto-JSON field sent as camelCase or snake_case."""
    if camel in obj:
        return camel, obj[camel]
    snake = re.sub(r"[A-Z]", lambda m: "_" + m.group().lower(), camel)
    if snake in obj:
        return snake, obj[snake]
    return camel, None


def _parts(body: JsonBody) -> Iterator[tuple[str, dict[str, Any]]]:
    """(pointer, part) for every part of every content in `contents`."""
    contents = body.get("contents")
    if not isinstance(contents, list):
        return
    for i, c in enumerate(contents):
        parts = c.get("parts") if isinstance(c, dict) else None
        if not isinstance(parts, list):
            continue
        for j, p in enumerate(parts):
            if isinstance(p, dict):
                yield f"/contents/{i}/parts/{j}", p


def _system(body: JsonBody) -> list[Located]:
    key, si = field(body, "systemInstruction")
    if isinstance(si, str):  # the REST surface also takes a bare string
        return [Located(f"/{key}", si)]
    parts = si.get("parts") if isinstance(si, dict) else None
    if not isinstance(parts, list):
        return []
    return [
        Located(f"/{key}/parts/{j}/text", p["text"])
        for j, p in enumerate(parts)
        if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]


def _response_parts(body: JsonBody) -> Iterator[tuple[str, dict[str, Any]]]:
    """(pointer, part) for every part of the first candidate of a response."""
    for j, p in enumerate(_candidate_parts(body)):
        if isinstance(p, dict):
            yield f"/candidates/0/content/parts/{j}", p


def _thinking_in(parts: Iterator[tuple[str, dict[str, Any]]]) -> list[Located]:
    return [Located(f"{at}/text", p["text"]) for at, p in parts if p.get("thought") is True and "text" in p]


def _signatures_in(parts: Iterator[tuple[str, dict[str, Any]]]) -> list[Located]:
    out: list[Located] = []
    for at, p in parts:
        key, sig = field(p, "thoughtSignature")
        if isinstance(sig, str):
            out.append(Located(f"{at}/{key}", sig))
    return out


def _thinking_text(body: JsonBody) -> list[Located]:
    return _thinking_in(_parts(body))


def _signatures(body: JsonBody) -> list[Located]:
    return _signatures_in(_parts(body))


def _ids(kind: str) -> Any:
    def probe(body: JsonBody) -> list[Located]:
        out: list[Located] = []
        for at, p in _parts(body):
            key, obj = field(p, kind)
            if isinstance(obj, dict) and isinstance(obj.get("id"), str):
                out.append(Located(f"{at}/{key}/id", obj["id"]))
        return out

    return probe


def _response_call_ids(body: JsonBody) -> list[Located]:
    """Ids the API issued on a response's functionCall parts (a streamed chunk has the same shape)."""
    out: list[Located] = []
    for at, p in _response_parts(body):
        key, call = field(p, "functionCall")
        if isinstance(call, dict) and isinstance(call.get("id"), str) and call["id"]:
            out.append(Located(f"{at}/{key}/id", call["id"]))
    return out


def _response_calls(body: JsonBody) -> list[Located]:
    """The functionCall parts of a response's first candidate (generateContent: a Part's
    `functionCall` is "A predicted FunctionCall returned from the model", one per call; ids
    optional)."""
    out: list[Located] = []
    for at, p in _response_parts(body):
        key, call = field(p, "functionCall")
        if isinstance(call, dict):
            out.append(Located(f"{at}/{key}", call))
    return out


def _tool_result_errors(body: JsonBody) -> list[Located]:
    """One value per functionResponse: whether its `response` reports an `error`."""
    out: list[Located] = []
    for at, p in _parts(body):
        key, fr = field(p, "functionResponse")
        if isinstance(fr, dict):
            resp = fr.get("response")
            out.append(Located(f"{at}/{key}/response", isinstance(resp, dict) and "error" in resp))
    return out


def _images(body: JsonBody) -> list[Located]:
    out: list[Located] = []
    for at, p in _parts(body):
        key, inline = field(p, "inlineData")
        if isinstance(inline, dict):
            media = field(inline, "mimeType")[1]
            if isinstance(media, str) and media.startswith("image/"):
                value = {"kind": "base64", "media_type": media, "data": inline.get("data")}
                out.append(Located(f"{at}/{key}", value))
            continue
        key, fd = field(p, "fileData")
        if isinstance(fd, dict):
            media = field(fd, "mimeType")[1]
            if media is None or (isinstance(media, str) and media.startswith("image/")):
                out.append(Located(f"{at}/{key}", {"kind": "url", "media_type": media, "url": field(fd, "fileUri")[1]}))
    return out


PROMPT_BLOCKED = "promptFeedback.blockReason (no candidates)"
"""The raw stop value the probes report for a blocked prompt: `promptFeedback.blockReason`
set and no candidate ("If set, the prompt was blocked and no candidates are returned")."""


def _blocked(body: Any) -> bool:
    return bool(block_reason(body)) and not body.get("candidates")


def _stop_reason(body: JsonBody) -> Any:
    cands = body.get("candidates")
    if isinstance(cands, list) and cands and isinstance(cands[0], dict):
        return finish_reason(cands[0])
    return PROMPT_BLOCKED if _blocked(body) else None


USAGE = UsageFields(
    "/usageMetadata",
    (("promptTokenCount",), ("toolUsePromptTokenCount",)),
    (("candidatesTokenCount",), ("thoughtsTokenCount",)),
    ("cachedContentTokenCount",),
)
"""`usageMetadata` (GenerateContentResponseUsageMetadata): the prompt with the tool-use
prompt is input, the candidates with the thoughts output; the prompt count includes what
the cache held."""


def usage_of(usage: Any) -> dict[str, int] | None:
    """`usageMetadata` -> the four canonical buckets (disjoint: cached is taken out of input)."""
    return USAGE.buckets(usage, cached_in_input=True)


def _usage(body: JsonBody) -> Any:
    return usage_of(body.get("usageMetadata"))


STOP_WITH_CALLS = "STOP (with functionCall parts)"
"""The raw stop value the stream probe reports for a STOP turn that carried functionCall
parts: the function-calling page has the client run the calls and answer, which is the
canonical `tool_use` (finishReason itself says STOP)."""


def _candidate_parts(event: Any) -> list[Any]:
    cands = event.get("candidates") if isinstance(event, dict) else None
    if not isinstance(cands, list) or not cands or not isinstance(cands[0], dict):
        return []
    content = cands[0].get("content")
    parts = content.get("parts") if isinstance(content, dict) else None
    return parts if isinstance(parts, list) else []


def _answer_texts(parts: list[Any]) -> list[str]:
    """The `text` of each part that is not a thought (Part: `text`, and `thought`
    "Indicates if the part is thought from the model")."""
    return [
        p["text"]
        for p in parts
        if isinstance(p, dict) and isinstance(p.get("text"), str) and p.get("thought") is not True
    ]


def _response_text(body: JsonBody) -> list[Located]:
    """The answer text of the first candidate: each part's `text` that is not a thought."""
    return [
        Located(f"{at}/text", p["text"])
        for at, p in _response_parts(body)
        if isinstance(p.get("text"), str) and p.get("thought") is not True
    ]


def _stream_text(events: list[Any]) -> list[str] | None:
    """The answer text a stream spells: each chunk is a GenerateContentResponse
    (streamGenerateContent), its first candidate's non-thought parts' texts joined over the
    chunks, in order (one text)."""
    return ["".join(t for e in events for t in _answer_texts(_candidate_parts(e)))]


def _call_of(call: Any) -> tuple[str, Any] | None:
    """A FunctionCall's `name` and `args` ("The function parameters and values in JSON object
    format"; absent: none)."""
    if not isinstance(call, dict) or not isinstance(call.get("name"), str):
        return None
    return call["name"], json_object(call["args"]) if "args" in call else {}


def _stream_tool_calls(events: list[Any]) -> list[tuple[str, Any]] | None:
    """Each functionCall part of a stream's chunks (first candidate), whole as generateContent
    sends it; None when a call streams its arguments in pieces (`partialArgs`, `willContinue`:
    the record does not join those)."""
    out: list[tuple[str, Any]] = []
    for e in events:
        for p in _candidate_parts(e):
            call = field(p, "functionCall")[1] if isinstance(p, dict) else None
            if not isinstance(call, dict):
                continue
            if any(field(call, k)[1] is not None for k in ("partialArgs", "willContinue")):
                return None
            found = _call_of(call)
            if found is not None:
                out.append(found)
    return out


def _stream_stop_reason(events: list[Any]) -> Any:
    """The last finishReason of a stream (each chunk is a GenerateContentResponse); a
    stream that ends with a blocked prompt and never finished a candidate: PROMPT_BLOCKED."""
    finish = None
    calls = False
    for ev in events:
        raw = _stop_reason(ev) if isinstance(ev, dict) else None
        if raw == PROMPT_BLOCKED and finish is not None:
            raw = None  # a finished candidate decides
        finish = raw if raw is not None else finish
        calls = calls or any(
            isinstance(p, dict) and field(p, "functionCall")[1] is not None for p in _candidate_parts(ev)
        )
    return STOP_WITH_CALLS if finish == "STOP" and calls else finish


def _stream_usage(events: list[Any]) -> Any:
    """The last chunk's usageMetadata: the counts are cumulative, the last one is final."""
    usage = None
    for ev in events:
        if isinstance(ev, dict) and isinstance(ev.get("usageMetadata"), dict):
            usage = ev["usageMetadata"]
    return usage_of(usage)


def _method(url: str) -> str | None:
    m = _METHOD.search(urlsplit(url).path or url)
    return m.group(1) if m else None


def is_streaming(url: str, _body: JsonBody | None = None) -> bool:
    """Streaming is the method in the URL; the body has no stream flag."""
    return _method(url) == "streamGenerateContent"


def framing_by_url(url: str) -> Framing:
    """SSE with `alt=sse`, otherwise the streamed JSON array."""
    alt = parse_qs(urlsplit(url).query).get("alt", [])
    return Framing.SSE if "sse" in alt else Framing.JSON_ARRAY


def model_of(url: str) -> str | None:
    """The `{model}` of `.../models/{model}:method` (None when the URL has none)."""
    m = re.search(r"/models/([^/:]+):[A-Za-z]+$", urlsplit(url).path or url)
    return m.group(1) if m else None


def request_departures(body: JsonBody) -> tuple[tuple[str, str], ...]:
    """Where a recorded generateContent request departs from the reference's form: `tools`
    as one Tool object ("tools[]: object (Tool) ... A list of Tools the Model may use",
    https://ai.google.dev/api/generate-content#request-body), which the API takes (the request
    schema accepts it: recorded clients send it and get their answer) but no sentence of the
    docs declares alike to a list holding it. TC802 skips such a request's `tools` rather
    than fail an adapter that renders the documented list back."""
    tools = body.get("tools") if isinstance(body, dict) else None
    if isinstance(tools, dict):
        return (("/tools", "`tools` is one Tool object, where the reference has a list of Tools"),)
    return ()


ERRORS = ErrorSignals(
    # Google's error model (cloud.google.com/apis/design/errors): `error.details[].reason`
    # `API_KEY_INVALID` is an invalid key (sent as 400); `error.code` is "The HTTP status
    # code that corresponds to google.rpc.Status.code", the status an error inside a
    # stream stands for
    detail_reasons={"API_KEY_INVALID": "auth"},
    status_in_body="/error/code",
)
"""Gemini's documented error signals (beside contract §6.2's status table and 400 remap)."""

# ai.google.dev "Gemini API reference": the key in `x-goog-api-key` (or the `key` query
# parameter); `x-goog-user-project` names the billed project
ACCESS = Access(
    base_url="https://generativelanguage.googleapis.com",
    key_env="GEMINI_API_KEY",
    key_header="x-goog-api-key",
    key_prefix="",
    credential_headers=("x-goog-api-key",),
    account_headers=("x-goog-user-project",),
)


ENDPOINT = Endpoint(
    # under `/v1beta` (the Gemini API) or `/v1*/projects/{p}/locations/{l}/publishers/google`
    # (Vertex AI): the base URL's
    path="/models/{model}:generateContent",
    stream_path="/models/{model}:streamGenerateContent",
    model=ModelIn(
        "path",
        encoding="raw",
        says="model: Required. The name of the Model to use for generating the completion. Format: models/{model}.",
        source="https://ai.google.dev/api/generate-content",
    ),
    says=(
        "POST https://generativelanguage.googleapis.com/v1beta/{model=models/*}:generateContent; "
        "POST https://generativelanguage.googleapis.com/v1beta/{model=models/*}:streamGenerateContent"
    ),
    source="https://ai.google.dev/api/generate-content",
)
"""Two methods: the stream is asked for by the URL, the model is its path segment."""


GEMINI = WireApi(
    name="gemini-generate-content",
    usage_fields=USAGE,
    access=ACCESS,
    errors=ERRORS,
    out_of_band_settings=("/generationConfig/thinkingConfig",),
    title="Gemini API generateContent / streamGenerateContent",
    docs=DOCS,
    request_paths=(_METHOD,),
    framing=Framing.SSE,
    is_streaming=is_streaming,
    schema_dir="gemini",
    # Vertex AI serves the methods at the global host and at each region's
    # `{LOCATION}-aiplatform.googleapis.com` (Vertex AI's REST reference, service endpoints)
    hosts=("generativelanguage.googleapis.com", "aiplatform.googleapis.com", "*-aiplatform.googleapis.com"),
    # ids are optional and, when the API issues them, opaque strings; clients may send any
    tool_ids=ToolIdRule(pattern=None, issued_by_provider=False),
    carries=Carries(
        system_prompt=True,
        thinking_text=True,
        thinking_signature=True,
        redacted_thinking=False,
        images_base64=True,
        images_url=True,
        tool_result_error=True,
        cache_read_tokens=True,
        cache_write_tokens=False,
        parallel_tool_calls=True,
    ),
    # a thoughtSignature goes back on the part it came with, that part as received (its
    # thought text included)
    thinking_back=ThinkingBack(
        needs=frozenset({"text", "signature"}),
        says="pass it back exactly as received",
        source="https://ai.google.dev/gemini-api/docs/thought-signatures",
    ),
    probes=Probes(
        system=_system,
        thinking_text=_thinking_text,
        signatures=_signatures,
        tool_use_ids=_ids("functionCall"),
        tool_result_ids=_ids("functionResponse"),
        tool_result_errors=_tool_result_errors,
        images=_images,
        response_stop_reason=_stop_reason,
        response_usage=_usage,
        response_tool_ids=_response_call_ids,
        response_tool_calls=_response_calls,
        response_text=_response_text,
        stream_text=_stream_text,
        call_of=_call_of,
        stream_tool_calls=_stream_tool_calls,
        stream_stop_reason=_stream_stop_reason,
        stream_usage=_stream_usage,
        # the candidate's own thought parts and thoughtSignatures ("pass it back exactly as received")
        response_signatures=lambda body: _signatures_in(_response_parts(body)),
        response_thinking_text=lambda body: _thinking_in(_response_parts(body)),
        response_model=string_at("/modelVersion"),  # "The model version used to generate the response"
        stream_model=first_string_at("/modelVersion"),
        # GenerationConfig: "maxOutputTokens", "stopSequences", "temperature"
        request_options=option_fields(
            max_output_tokens="/generationConfig/maxOutputTokens",
            stop_sequences="/generationConfig/stopSequences",
            temperature="/generationConfig/temperature",
        ),
        # a stream element that is Google's error body (`{"error": {code, message, status}}`)
        # instead of a GenerateContentResponse
        stream_error=error_event("candidates", "usageMetadata", "promptFeedback"),
        # GenerationConfig: "responseJsonSchema" / "responseSchema" (the OpenAPI subset), both
        # spellings of the proto JSON mapping
        output_schema=schema_at(
            "/generationConfig/responseJsonSchema",
            "/generationConfig/responseSchema",
            "/generation_config/response_json_schema",
            "/generation_config/response_schema",
        ),
    ),
    stop_reasons=STOP_REASONS,
    stop_reasons_also=STOP_REASONS_ALSO,
    framing_by_url=framing_by_url,
    other_framings=(Framing.JSON_ARRAY,),  # streamGenerateContent without `alt=sse`
    history_key="contents",  # the conversation turns (`Content` list)
    # "promptTokenCount: ... When cachedContent is set, this is still the total effective
    # prompt size meaning this includes the number of tokens in the cached content"
    cached_in_input=True,
    # proto3 JSON: bytes fields in either base64 alphabet, padded or not
    accepted_differences=equivalence.GEMINI_DIFFERENCES,
    normalize_request=equivalence.gemini,
    request_departures=request_departures,
    endpoint=ENDPOINT,
)
