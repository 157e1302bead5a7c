"""Forms a provider treats alike, made equal: one declaration per API, read by every check
that compares wire values or what an adapter read from them (TC802, TC606, TC405, TC901).

A record declares them in `accepted_differences`: `Equivalence`s, each with the sentence
of the documentation that says so, and (the older form) sentences naming a step of its
`normalize_request`, the request rewrite of this module that makes structural forms equal
(a string is shorthand for a one-text-block list, a default value equals an absent one...).
`compare` applies both: the record's `normalize_request`, then what its `Equivalence`s say
(object members in any order, numbers as the binary64 values they spell, base64 payloads as
the bytes they decode to). A check's failing reason names what it applied (`applied`).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import copy
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core import pointers
from .api import Equivalence, JsonBody, WireApi

# -- what every JSON API shares -------------------------------------------------------------

RFC8259 = "https://www.rfc-editor.org/rfc/rfc8259"
KEY_ORDER = Equivalence(
    "object members in any order",
    "An object is an unordered collection of zero or more name/value pairs",
    RFC8259 + "#section-1",
)
NUMBERS = Equivalence(
    "a number in any spelling of the same value (`1`, `1.0`, `1e0`); true and false are not numbers",
    "good interoperability can be achieved by implementations that expect no more precision or range "
    "than these provide, in the sense that implementations will approximate JSON numbers within the "
    "expected precision",
    RFC8259 + "#section-6",
)
JSON_FORMS: tuple[Equivalence, ...] = (KEY_ORDER, NUMBERS)
"""Every record declares these (its API reads JSON, RFC 8259)."""

PROTO3_JSON = "https://protobuf.dev/programming-guides/json/"
PROTO3_BYTES = (
    "JSON value will be the data encoded as a string using standard base64 encoding with paddings. "
    "Either standard or URL-safe base64 encoding with/without paddings are accepted."
)


@dataclass(frozen=True, slots=True)
class Decoded:
    """A base64 payload made comparable: equal to another when the bytes are (`spelled` is
    the text it came as, for messages)."""

    raw: bytes
    spelled: str = ""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Decoded) and other.raw == self.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __repr__(self) -> str:
        return json.dumps(self.spelled)


def decode_base64(text: str) -> bytes | None:
    """The bytes `text` spells in the standard or the URL-safe alphabet, padded or not (the
    proto3 JSON reading); None when it is not such a spelling (a payload is only equal to
    another spelling of its own bytes: a text with stray bits or characters is none)."""
    core = text.rstrip("=")
    if len(text) - len(core) > 2 or len(core) % 4 == 1:
        return None
    std = core.replace("-", "+").replace("_", "/")
    padded = std + "=" * (-len(std) % 4)
    try:
        raw = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        return None
    # non-zero trailing bits decode too: only the canonical spelling of these bytes counts
    return raw if base64.b64encode(raw).decode("ascii") == padded else None


def declared(api: WireApi | None) -> tuple[Equivalence, ...]:
    """The record's `Equivalence`s (none without a record)."""
    return tuple(d for d in (api.accepted_differences if api is not None else ()) if isinstance(d, Equivalence))


def _segments_match(pattern: list[str], parts: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_segments_match(rest, parts[i:]) for i in range(len(parts) + 1))
    return bool(parts) and head in ("*", parts[0]) and _segments_match(rest, parts[1:])


def pointer_matches(pattern: str, pointer: str) -> bool:
    """Whether an RFC 6901 `pointer` matches `pattern` (`*` one token, `**` any number)."""
    return _segments_match(pattern.split("/")[1:], pointer.split("/")[1:])


def base64_at(api: WireApi | None, pointer: str) -> Equivalence | None:
    """The declaration that makes the wire value at `pointer` base64, if any."""
    return next((e for e in declared(api) if any(pointer_matches(p, pointer) for p in e.base64)), None)


def _as_bytes(value: Any) -> Any:
    if isinstance(value, str):
        raw = decode_base64(value)
        if raw is not None:
            return Decoded(raw, value)
    return value


def wire_key(api: WireApi | None, pointer: str, value: Any) -> Any:
    """A wire value in the form it compares in: the bytes of a declared base64 field, else the value."""
    return _as_bytes(value) if base64_at(api, pointer) is not None else value


def canonical_key(api: WireApi | None, field: str, value: Any) -> Any:
    """A canonical block field (`thinking.signature`, `image.source.data`) in the form it
    compares in: its bytes where the record says it carries the API's base64, else the value."""
    return _as_bytes(value) if any(field in e.canonical_base64 for e in declared(api)) else value


def normalize(api: WireApi | None, value: Any, pointer: str = "") -> Any:
    """A decoded JSON body in the form it compares in: declared base64 fields as their bytes
    (objects compare as mappings and numbers as numbers: `diff` does)."""
    if isinstance(value, Mapping):
        return {k: normalize(api, v, f"{pointer}/{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(api, v, f"{pointer}/{i}") for i, v in enumerate(value)]
    return wire_key(api, pointer, value)


def normalize_blocks(api: WireApi | None, blocks: Any) -> Any:
    """Canonical content blocks with the fields the record declares base64 (`canonical_base64`)
    as their bytes."""
    fields = {f for e in declared(api) for f in e.canonical_base64}
    if not fields or not isinstance(blocks, list):
        return blocks
    return [_block(b, fields) for b in blocks]


def _block(block: Any, fields: set[str]) -> Any:
    if not isinstance(block, Mapping):
        return block
    out = dict(block)
    for f in fields:
        kind, _, path = f.partition(".")
        if block.get("type") != kind:
            continue
        keys = path.split(".")
        node: Any = out
        for k in keys[:-1]:
            if not isinstance(node, dict) or not isinstance(node.get(k), Mapping):
                node = None
                break
            node[k] = dict(node[k])
            node = node[k]
        if isinstance(node, dict) and keys[-1] in node:
            node[keys[-1]] = _as_bytes(node[keys[-1]])
    if isinstance(out.get("content"), list):  # tool_result content
        out["content"] = [_block(b, fields) for b in out["content"]]
    return out


def compare(api: WireApi | None, recorded: Any, rendered: Any, *, request: bool = True) -> list[str]:
    """Paths where two wire bodies differ once the record's equivalences are applied (its
    `normalize_request` for requests, then `normalize`); first 20."""
    norm = api.normalize_request if request and api is not None and api.normalize_request else None

    def prepared(body: Any) -> Any:
        return normalize(api, norm(body) if norm is not None and isinstance(body, Mapping) else body)

    return diff(prepared(recorded), prepared(rendered))


def applied(api: WireApi | None, used: Iterable[Equivalence] | None = None) -> str:
    """The clause a failing reason names the equivalences with: `used` (default: all the
    record declares, its `normalize_request` steps included)."""
    if api is None:
        return "compared exactly (no wire record)"
    every = api.accepted_differences if used is None else tuple(used)
    names = [d.forms if isinstance(d, Equivalence) else d for d in every]
    return f"compared up to {api.name}'s declared equivalences: " + ("; ".join(names) if names else "none")


def applied_to(api: WireApi | None, blocks: Any, where: str) -> str:
    """`applied` for one difference, for a reason that must stay short (TC606): the
    equivalences that could have explained it, by name (those naming the canonical block
    field at `where`, a pointer into the content `blocks`: `/1/signature` of a thinking block
    is `thinking.signature`, with the general forms applied beside them), else that none of
    the record's covers that field."""
    if api is None:
        return "compared exactly (no wire record)"
    tokens = [pointers.unescape(t) for t in where.split("/")[1:]]
    # a pointer past the end of `blocks` (the other side has a block more) names no block of it
    at = int(tokens[0]) if tokens and tokens[0].isdigit() else -1
    block = blocks[at] if isinstance(blocks, list) and 0 <= at < len(blocks) else None
    field = f"{block.get('type')}." + ".".join(tokens[1:]) if isinstance(block, Mapping) and tokens[1:] else None
    every = declared(api)
    covering = [e for e in every if field is not None and field in e.canonical_base64]
    if not covering:
        return f"none of the {len(api.accepted_differences)} equivalence(s) {api.name}'s record declares covers {field or where or '/'}"
    general = [e for e in every if not e.base64 and not e.canonical_base64]
    return f"compared up to {api.name}'s declared equivalences: " + "; ".join(e.forms for e in [*covering, *general])


def first_difference(a: Any, b: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place two JSON values differ, as `diff` walks them (its JSON pointer and
    the two values there; a member only one side has is `MISSING` on the other; two objects
    of different `type`, such as two content blocks, differ as wholes), else None."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if a.get("type") != b.get("type"):  # blocks of two kinds: the blocks are the difference
            return path, a, b
        for k in sorted(set(a) | set(b)):
            where = f"{path}/{pointers.token(k)}"
            if k not in a or k not in b:
                return where, a.get(k, MISSING), b.get(k, MISSING)
            found = first_difference(a[k], b[k], where)
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = first_difference(x, y, f"{path}/{i}")
            if found is not None:
                return found
        if len(a) != len(b):
            i = min(len(a), len(b))
            return f"{path}/{i}", a[i] if i < len(a) else MISSING, b[i] if i < len(b) else MISSING
        return None
    if _number(a) and _number(b):
        return None if a == b else (path, a, b)
    return None if type(a) is type(b) and a == b else (path, a, b)


MISSING: Any = type("Missing", (), {"__repr__": lambda self: "(absent)"})()
"""What `first_difference` gives for the side a member or an item is absent from."""


def excerpts(a: Any, b: Any, *, width: int = 60) -> tuple[str, str]:
    """Two differing values as short, whole JSON: strings around where they first differ
    (the common start and end elided as `…` inside the quotes, never a string cut open),
    other values in full when short, else by their kind and size (`{4 members}`)."""
    if isinstance(a, str) and isinstance(b, str):
        start = 0
        while start < min(len(a), len(b)) and a[start] == b[start]:
            start += 1
        end = 0
        while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
            end += 1
        lo = max(0, start - width // 3)

        def cut(s: str) -> str:
            tail = len(s) - end
            hi = min(tail + width // 3, len(s))
            if hi - lo > width:
                hi = lo + width
            return ("…" if lo else "") + s[lo:hi] + ("…" if hi < len(s) else "")

        return json.dumps(cut(a), ensure_ascii=False), json.dumps(cut(b), ensure_ascii=False)
    return _whole(a, width), _whole(b, width)


def _whole(v: Any, width: int) -> str:
    if v is MISSING:
        return "(absent)"
    text = json.dumps(v, default=_spelled, ensure_ascii=False)
    if len(text) <= width:
        return text
    if isinstance(v, str):
        return json.dumps(v[: width - 10] + "…", ensure_ascii=False)
    if isinstance(v, Mapping):
        kind = v.get("type") if isinstance(v.get("type"), str) else None
        return f"{{{len(v)} members{f', type {json.dumps(kind)}' if kind else ''}}}"
    if isinstance(v, list):
        return f"[{len(v)} items]"
    return text


def diff(a: Any, b: Any, path: str = "") -> list[str]:
    """Paths where two JSON values differ (first 20): objects as mappings, numbers as numbers
    (never booleans), `Decoded` payloads by their bytes."""
    out: list[str] = []
    _diff(a, b, path, out)
    return out[:20]


def _spelled(v: Any) -> Any:
    if isinstance(v, Decoded):
        return v.spelled
    raise TypeError(type(v).__name__)


def _show(v: Any) -> str:
    return json.dumps(v, default=_spelled)[:60]


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    if len(out) >= 20:
        return
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for k in sorted(set(a) | set(b)):
            if k not in a:
                out.append(f"{path}/{k}: only in rendered ({_show(b[k])})")
            elif k not in b:
                out.append(f"{path}/{k}: missing from rendered (recorded {_show(a[k])})")
            else:
                _diff(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items recorded, {len(b)} rendered")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _diff(x, y, f"{path}/{i}", out)
    elif _number(a) and _number(b):
        if a != b:
            out.append(f"{path}: recorded {_show(a)}, rendered {_show(b)}")
    elif type(a) is not type(b) or a != b:
        out.append(f"{path}: recorded {_show(a)}, rendered {_show(b)}")


JSON_SCHEMA_ANNOTATIONS = "https://json-schema.org/understanding-json-schema/reference/annotations"
SCHEMA_TITLE = Equivalence(
    "a `title` annotation in a tool's JSON Schema (the schema's own or a subschema's, never a property "
    "named `title`) equals its absence",
    "JSON Schema includes a few keywords, that aren't strictly used for validation, but are used to describe "
    'parts of a schema. None of these "annotation" keywords are required',
    JSON_SCHEMA_ANNOTATIONS + " (title and description; the schema validates the same instances either way)",
)
"""Every record whose tool definitions carry a JSON Schema declares this."""

_SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties", "dependentSchemas"})
_SCHEMA_ONE = frozenset(
    {
        "items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
        "unevaluatedProperties", "unevaluatedItems", "additionalItems",
    }
)  # fmt: skip
_SCHEMA_LISTS = frozenset({"anyOf", "allOf", "oneOf", "prefixItems", "items"})


def strip_schema_titles(schema: Any) -> Any:
    """A JSON Schema without its `title` annotations (SCHEMA_TITLE): the keyword of a schema
    and of its subschemas, found by the keywords that hold subschemas; a property *named*
    `title`, `const`, `enum`, `default` and `examples` values are left as they are."""
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k == "title" and isinstance(v, str):
            continue
        if k in _SCHEMA_MAPS and isinstance(v, Mapping):
            out[k] = {name: strip_schema_titles(sub) for name, sub in v.items()}
        elif k in _SCHEMA_LISTS and isinstance(v, list):
            out[k] = [strip_schema_titles(sub) for sub in v]
        elif k in _SCHEMA_ONE:
            out[k] = strip_schema_titles(v)
        else:
            out[k] = v
    return out


def _strip_tool_schema_titles(tools: Any, *path: str) -> None:
    """`tools[i]` at `path` (e.g. `function`, `parameters`) with its schema's titles stripped."""
    for t in tools if isinstance(tools, list) else []:
        node = t
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get(path[-1]), Mapping):
            node[path[-1]] = strip_schema_titles(node[path[-1]])


ANTHROPIC_MESSAGES_DIFFERENCES: tuple[str | Equivalence, ...] = (
    *JSON_FORMS,
    SCHEMA_TITLE,
    "`content` given as a string equals a list holding one text block (the Messages API "
    "documents the string as shorthand), for messages and for tool_result content",
    "consecutive messages of the same role are merged (the API combines consecutive same-role turns)",
    "`is_error: false` equals an absent `is_error` (false is the default)",
    "`stream: false` equals an absent `stream` (false is the default)",
    'a tool `description` of "" equals an absent one (canonical ToolDefinition requires it)',
    "`system` given as a string equals a list holding one text block",
    Equivalence(
        '`tool_choice: {"type": "auto"}` equals an absent `tool_choice` when the request has tools',
        "`auto` allows Claude to decide whether to call any provided tools or not. This is the default value "
        "when tools are provided.",
        "https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use#forcing-tool-use",
    ),
    Equivalence(
        "an empty `tools` list equals an absent `tools` (neither defines a tool)",
        "tools: Definitions of tools that the model may use.",
        "https://platform.claude.com/docs/en/api/messages/create",
    ),
)
OPENAI_CHAT_DIFFERENCES: tuple[str | Equivalence, ...] = (
    *JSON_FORMS,
    SCHEMA_TITLE,
    "a `content` string equals a list holding one text part (user, system, tool messages)",
    Equivalence(
        "an assistant `content` string equals a list holding one text part",
        "The contents of the assistant message. Required unless `tool_calls` or `function_call` is "
        "specified. / An array of content parts with a defined type. Can be one or more of type "
        "`text`, or exactly one of type `refusal`.",
        "https://platform.openai.com/docs/api-reference/chat/create#chat-create-messages",
    ),
    Equivalence(
        "an assistant `refusal` (the message's field, or its one `refusal` content part) equals an "
        "assistant `content` of that text, when the message has no other content (canonical has no "
        "refusal block: a refusal is the reply's text, contract §3.3, so an adapter may send it back "
        "either way)",
        "refusal: string or null. The refusal message by the assistant. / content: The contents of the "
        "assistant message.",
        "https://platform.openai.com/docs/api-reference/chat/create#chat-create-messages",
    ),
    Equivalence(
        "`function.arguments` strings (a `tool_calls` entry's, or a deprecated `function_call`'s) "
        "are compared as the JSON objects they encode (canonical input is an object; whitespace "
        "and key order are not semantic)",
        "function_call: Deprecated and replaced by `tool_calls`. ... arguments: The arguments to call "
        "the function with, as generated by the model in JSON format.",
        "https://platform.openai.com/docs/api-reference/chat/create#chat-create-messages",
    ),
    "`stream_options.include_usage: true` is added to streaming requests (adapter contract "
    "§7.2 requires requesting usage)",
    "`stream: false` equals an absent `stream`",
    Equivalence(
        'assistant `content` of "", null or absent, when the message has tool_calls',
        "The contents of the assistant message. Required unless `tool_calls` or `function_call` is specified.",
        "https://platform.openai.com/docs/api-reference/chat/create#chat-create-messages",
    ),
    'a tool `description` of "" equals an absent one',
    Equivalence(
        "a message of role `developer` equals one of role `system` (the same instructions)",
        "Developer-provided instructions that the model should follow, regardless of messages sent by "
        "the user. With o1 models and newer, `developer` messages replace the previous `system` messages.",
        "https://platform.openai.com/docs/api-reference/chat/create#chat-create-messages",
    ),
    Equivalence(
        '`tool_choice: "auto"` equals an absent `tool_choice` when the request has tools',
        "`none` is the default when no tools are present. `auto` is the default if tools are present.",
        "https://platform.openai.com/docs/api-reference/chat/create#chat-create-tool_choice",
    ),
)
OPENAI_RESPONSES_DIFFERENCES: tuple[str | Equivalence, ...] = (
    *JSON_FORMS,
    SCHEMA_TITLE,
    Equivalence(
        "`stream: false` equals an absent `stream`",
        "stream: boolean or null, Optional, Defaults to false",
        "https://platform.openai.com/docs/api-reference/responses/create#responses-create-stream",
    ),
    Equivalence(
        '`tool_choice: "auto"` equals an absent `tool_choice` when the request has tools',
        "Auto: (Default) Call zero, one, or multiple functions.",
        "https://platform.openai.com/docs/guides/function-calling#tool-choice",
    ),
    Equivalence(
        "an `input` string equals an `input` list holding one `user` message with that content",
        "Text input: A text input to the model, equivalent to a text input with the user role.",
        "https://platform.openai.com/docs/api-reference/responses/create#responses-create-input",
    ),
    Equivalence(
        "`instructions` equals a `system` message first in `input` with that content",
        "instructions: A system (or developer) message inserted into the model's context.",
        "https://platform.openai.com/docs/api-reference/responses/create#responses-create-instructions",
    ),
    Equivalence(
        "a message `content` string equals a list holding one `input_text` part with that text",
        "content: string or array. Text, image, or audio input to the model, used to generate a response.",
        "https://platform.openai.com/docs/api-reference/responses/create#responses-create-input",
    ),
    Equivalence(
        'an input item with a `role` and `type: "message"` equals one without `type`',
        'type: "message" (optional). The type of the message input. Always `message`.',
        "https://platform.openai.com/docs/api-reference/responses/create#responses-create-input (EasyInputMessage)",
    ),
    Equivalence(
        "an input item's `status: null` equals an absent `status`",
        "The status of the item. One of `in_progress`, `completed`, or `incomplete`. Populated when items are "
        "returned via API.",
        "https://platform.openai.com/docs/api-reference/responses/create#responses-create-input "
        "(function_call and message items: status is optional; null sets none of the three)",
    ),
    Equivalence(
        "a function tool's `description: null` equals an absent `description`",
        "description: string or null. Optional. A description of the function. Used by the model to determine "
        "whether or not to call the function.",
        "https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools",
    ),
    'a function tool\'s `description` of "" equals an absent one (canonical ToolDefinition requires it)',
    Equivalence(
        "`function_call.arguments` strings are compared as the JSON values they encode",
        "arguments: string. A JSON string of the arguments to pass to the function.",
        "https://platform.openai.com/docs/api-reference/responses/object#responses/object-output",
    ),
)
GEMINI_BASE64 = Equivalence(
    "`inlineData.data` and `thoughtSignature` (bytes fields, base64 in JSON) in the standard or "
    "the URL-safe alphabet, padded or not: the same bytes are the same payload",
    "Either standard or URL-safe base64 encoding with/without paddings are accepted.",
    PROTO3_JSON + " (JSON Mapping, bytes; the generateContent reference types Blob.data and "
    "Part.thoughtSignature as 'string (bytes format) ... A base64-encoded string.')",
    base64=(
        "/**/inlineData/data",
        "/**/inline_data/data",
        "/**/thoughtSignature",
        "/**/thought_signature",
    ),
    # the canonical fields a Gemini adapter carries these payloads in, as they were on the wire
    canonical_base64=("image.source.data", "thinking.signature"),
)
GEMINI_DIFFERENCES: tuple[str | Equivalence, ...] = (
    *JSON_FORMS,
    SCHEMA_TITLE,
    GEMINI_BASE64,
    Equivalence(
        '`generationConfig.responseModalities: ["TEXT"]` equals an absent one (and an emptied '
        "`generationConfig` an absent one)",
        "An empty list is equivalent to requesting only text.",
        "https://ai.google.dev/api/generate-content#generationconfig (responseModalities; a repeated field "
        "left out is the empty list in proto3 JSON)",
    ),
    Equivalence(
        "a request field spelled with its proto name (`mime_type`, `file_uri`, `parameters_json_schema`, ...) "
        "equals its lowerCamelCase JSON name (`mimeType`, ...)",
        "Proto3 JSON parsers accept both the lowerCamelCase name (or the one specified by the json_name option) "
        "and the original proto field name.",
        PROTO3_JSON,
    ),
    Equivalence(
        'an empty `generationConfig` (`{}`) equals an absent one, a function declaration\'s `description` "" or null '
        "an absent one, a part's `thought: false` an absent `thought`, and a request field or a tool's field set to null "
        "an absent one (proto3 default values)",
        "If a value is missing in the JSON-encoded data or if its value is null, it will be interpreted as the "
        "appropriate default value when parsed into a protocol buffer. If a field has the default value in the "
        "protocol buffer, it will be omitted in the JSON-encoded data by default to save space.",
        PROTO3_JSON + " (FunctionDeclaration.description is 'Optional', a string; every GenerationConfig field "
        "is 'Optional': a config setting none of them is the default one; Part.thought is a boolean, 'Optional. "
        "Indicates if the part is thought from the model.': false is its default, a part that is no thought; every "
        "GenerateContentRequest and Tool field is a message, a list or a string, none a google.protobuf.Value, whose "
        "null would be a value)",
    ),
    Equivalence(
        "`systemInstruction.role` set equals it unset (the system instruction is no turn of a multi-turn conversation)",
        "role: Optional. The producer of the content. Must be either 'user' or 'model'. Useful to set for "
        "multi-turn conversations, otherwise can be left blank or unset.",
        "https://ai.google.dev/api/caching#Content",
    ),
)
"""A generateContent body is proto3 JSON (`GenerateContentRequest`, `Part`, `Blob`)."""

OLLAMA_OPENAPI = "https://docs.ollama.com/api/chat (docs/openapi.yaml)"
OLLAMA_TOOL_CALLING = "https://docs.ollama.com/capabilities/tool-calling"
OLLAMA_CHAT_DIFFERENCES: tuple[str | Equivalence, ...] = (
    *JSON_FORMS,
    Equivalence(
        "`stream: true` equals an absent `stream` (`stream: false` still differs from both)",
        'ChatRequest: stream: type: boolean, default: true ("Streaming can be disabled using `"stream": false`")',
        OLLAMA_OPENAPI + " (ChatRequest.stream); https://github.com/ollama/ollama/blob/main/docs/api.md"
        "#generate-a-chat-completion",
    ),
    Equivalence(
        "an empty `options` object equals an absent one",
        "This example sets every available option, but you can set any of them individually and omit the "
        "ones you do not want to override.",
        "https://github.com/ollama/ollama/blob/main/docs/api.md#generate-request-with-options",
    ),
    Equivalence(
        "an empty `tools` list equals an absent one",
        "tools: Optional list of function tools the model may call during the chat",
        OLLAMA_OPENAPI + " (ChatRequest.tools)",
    ),
    Equivalence(
        'an assistant message\'s `content` of "" equals an absent `content` when the message has `tool_calls`',
        'ChatMessage: required: [role, content]; the tool-calling guide sends that turn as {"role": "assistant", '
        '"tool_calls": [...]} and the reply it answers carries "content": "" beside its tool_calls',
        OLLAMA_OPENAPI + " (ChatMessage); " + OLLAMA_TOOL_CALLING + " (Calling a single tool)",
    ),
    Equivalence(
        '`"type": "function"` on a message\'s tool call equals its absence, and `function.index` equal to the '
        "call's position in `tool_calls` equals an absent `index` (any other index still differs)",
        "ToolCall: properties: function: name, description, arguments (no `type`, no `index`); "
        "ToolDefinition.type: Type of tool (always `function`); the parallel example numbers its calls "
        '"index": 0, 1, 2, 3 in list order',
        OLLAMA_OPENAPI + " (ToolCall, ToolDefinition); " + OLLAMA_TOOL_CALLING + " (Parallel tool calling)",
    ),
)
"""Ollama's documented defaults and the two spellings its docs show of one assistant tool-call turn."""


def anthropic_messages(body: JsonBody) -> JsonBody:
    """An Anthropic Messages request in the form TC802 compares (ANTHROPIC_MESSAGES_DIFFERENCES)."""
    return _anthropic(copy.deepcopy(dict(body)))


def openai_chat(body: JsonBody) -> JsonBody:
    """An OpenAI Chat Completions request in the form TC802 compares (OPENAI_CHAT_DIFFERENCES)."""
    return _openai(copy.deepcopy(dict(body)))


def openai_responses(body: JsonBody) -> JsonBody:
    """An OpenAI Responses request in the form TC802 compares (OPENAI_RESPONSES_DIFFERENCES)."""
    b = copy.deepcopy(dict(body))
    if b.get("stream") is False:
        del b["stream"]
    if b.get("tools") and b.get("tool_choice") == "auto":
        del b["tool_choice"]
    if isinstance(b.get("input"), str):
        b["input"] = [{"role": "user", "content": b["input"]}]
    if isinstance(b.get("instructions"), str) and isinstance(b.get("input"), list):
        b["input"] = [{"role": "system", "content": b.pop("instructions")}, *b["input"]]
    _strip_tool_schema_titles(b.get("tools"), "parameters")
    for t in b.get("tools") or []:
        if isinstance(t, dict) and t.get("type") == "function" and t.get("description", 0) in ("", None):
            del t["description"]
    items = b.get("input")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if "status" in item and item["status"] is None:
            del item["status"]  # populated by the API, null is none (OPENAI_RESPONSES_DIFFERENCES)
        if "role" in item and item.get("type") == "message":
            del item["type"]  # optional on a role-keyed input message, "Always `message`"
        if item.get("role") in ("user", "system", "developer") and isinstance(item.get("content"), str):
            item["content"] = [{"type": "input_text", "text": item["content"]}]
        if item.get("type") == "function_call" and isinstance(item.get("arguments"), str):
            # the JSON value the string encodes, still marked as a string: an object sent
            # where the API wants a JSON string stays a difference
            with contextlib.suppress(ValueError):
                item["arguments"] = {"JSON string of": json.loads(item["arguments"])}
    return b


_GEMINI_PROTO_NAMES = frozenset(
    {
        "inline_data", "file_data", "mime_type", "file_uri", "function_call", "function_response",
        "thought_signature", "system_instruction", "generation_config", "tool_config", "function_declarations",
        "parameters_json_schema", "response_json_schema", "response_modalities", "function_calling_config",
        "allowed_function_names", "max_output_tokens", "stop_sequences", "response_mime_type", "response_schema",
        "thinking_config", "include_thoughts", "thinking_budget", "cached_content", "safety_settings",
        "video_metadata", "executable_code", "code_execution_result",
    }
)  # fmt: skip
"""generateContent request fields spelled with their proto names (GEMINI_DIFFERENCES); never
a key inside a function's arguments or schema, which are the caller's."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(r[:1].upper() + r[1:] for r in rest)


def _proto_names(value: Any, *, inside_user_json: bool = False) -> Any:
    if isinstance(value, list):
        return [_proto_names(v, inside_user_json=inside_user_json) for v in value]
    if not isinstance(value, dict) or inside_user_json:
        return value
    out = {}
    for k, v in value.items():
        key = _camel(k) if k in _GEMINI_PROTO_NAMES else k
        opaque = key in (
            "args",
            "response",
            "parameters",
            "parametersJsonSchema",
            "responseSchema",
            "responseJsonSchema",
        )
        out[key] = _proto_names(v, inside_user_json=opaque)
    return out


def gemini(body: JsonBody) -> JsonBody:
    """A generateContent request in the form TC802 compares (GEMINI_DIFFERENCES)."""
    b: dict[str, Any] = _proto_names(copy.deepcopy(dict(body)))
    tools = b.get("tools")
    for fields in [b, *(t for t in (tools if isinstance(tools, list) else []) if isinstance(t, dict))]:
        for key in [k for k, v in fields.items() if v is None]:  # null: the field's default, as absent
            del fields[key]
    system = b.get("systemInstruction")
    if isinstance(system, dict):
        system.pop("role", None)
    for content in [*(b.get("contents") or []), system]:
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and part.get("thought") is False:  # the bool's default: no thought
                del part["thought"]
    config = b.get("generationConfig")
    if isinstance(config, dict) and config.get("responseModalities") == ["TEXT"]:
        del config["responseModalities"]
    if config == {}:
        del b["generationConfig"]
    tools = b.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        decls = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        for d in decls if isinstance(decls, list) else []:
            if isinstance(d, dict) and "description" in d and d["description"] in ("", None):
                del d["description"]
        for key in ("parameters", "parametersJsonSchema"):
            _strip_tool_schema_titles(decls, key)
    return b


def _text_list(content: Any) -> Any:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _strip_description(tools: Any, key: str | None = None) -> None:
    for t in tools or []:
        target = t.get(key) if key else t
        if isinstance(target, dict) and target.get("description") == "":
            del target["description"]


def _anthropic(b: dict[str, Any]) -> dict[str, Any]:
    if b.get("stream") is False:
        del b["stream"]
    if "system" in b:
        b["system"] = _text_list(b["system"])
    merged: list[dict[str, Any]] = []
    for m in b.get("messages") or []:
        content = _text_list(m.get("content"))
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                block["content"] = _text_list(block.get("content", []))
                if block.get("is_error") is False:
                    del block["is_error"]
        if merged and merged[-1].get("role") == m.get("role") and isinstance(content, list):
            merged[-1]["content"] = [*merged[-1]["content"], *content]
        else:
            merged.append({**m, "content": content})
    if "messages" in b:
        b["messages"] = merged
    if b.get("tools") == []:
        del b["tools"]  # defines no tool, as an absent list (ANTHROPIC_MESSAGES_DIFFERENCES)
    _strip_description(b.get("tools"))
    _strip_tool_schema_titles(b.get("tools"), "input_schema")
    if b.get("tools") and b.get("tool_choice") == {"type": "auto"}:
        del b["tool_choice"]  # the documented default (ANTHROPIC_MESSAGES_DIFFERENCES)
    return b


def _openai(b: dict[str, Any]) -> dict[str, Any]:
    if b.get("stream") is False:
        del b["stream"]
    opts = b.get("stream_options")
    if isinstance(opts, dict):
        opts.pop("include_usage", None)
        if not opts:
            del b["stream_options"]
    for m in b.get("messages") or []:
        if m.get("role") == "developer":
            m["role"] = "system"
        c = m.get("content")
        if m.get("role") in ("system", "tool") and isinstance(c, list):
            m["content"] = "".join(str(p.get("text", "")) for p in c if isinstance(p, dict))
        elif m.get("role") == "user":
            m["content"] = _text_list(c)
        if m.get("role") == "assistant":
            c = m.get("content")
            if isinstance(c, list):  # a `refusal` part is the message's refusal (OPENAI_CHAT_DIFFERENCES)
                m["content"] = [
                    {"type": "text", "text": p["refusal"]} if isinstance(p, dict) and p.get("type") == "refusal" else p
                    for p in c
                ]
            refusal = m.get("refusal")
            if isinstance(refusal, str) and refusal and m.get("content") in ("", None):
                del m["refusal"]  # the refusal's text as the content (OPENAI_CHAT_DIFFERENCES)
                m["content"] = refusal
            elif refusal is None:
                m.pop("refusal", None)
            if m.get("tool_calls") and m.get("content") in ("", None):
                m.pop("content", None)
            elif isinstance(m.get("content"), str):
                m["content"] = _text_list(m["content"])
            legacy = m.get("function_call")  # deprecated, its `arguments` the same JSON string
            for fn in [(call.get("function") or {}) for call in m.get("tool_calls") or []] + [legacy or {}]:
                if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                    with contextlib.suppress(ValueError):
                        fn["arguments"] = json.loads(fn["arguments"])
    _strip_description(b.get("tools"), "function")
    _strip_tool_schema_titles(b.get("tools"), "function", "parameters")
    if b.get("tools") and b.get("tool_choice") == "auto":
        del b["tool_choice"]  # the documented default (OPENAI_CHAT_DIFFERENCES)
    return b


OPENROUTER_STREAM_USAGE = Equivalence(
    "`stream_options.include_usage` set or absent (OpenRouter sends full usage in every stream)",
    "Deprecated: This field has no effect. Full usage details are always included.",
    "https://openrouter.ai/docs/client-sdks/python/components/chatstreamoptions",
)
OPENROUTER_ASSISTANT_CONTENT = Equivalence(
    "an assistant `content` of null or absent, when the message has tool_calls",
    "AssistantMessage fields: role (required); content, name, toolCalls, refusal, reasoning, "
    "reasoningDetails (not required)",
    "https://openrouter.ai/docs/agent-sdk/typescript/models/assistantmessage",
)
OPENROUTER_ARGUMENTS = Equivalence(
    "`function.arguments` strings are compared as the JSON values they encode (canonical input "
    "is an object; whitespace and key order are not semantic)",
    "OpenRouter's request and response schemas are very similar to the OpenAI Chat API / "
    "ChatToolCallFunction: arguments (string, required)",
    "https://openrouter.ai/docs/api-reference/overview",
)
OPENROUTER_STREAM_FALSE = Equivalence(
    "`stream: false` equals an absent `stream` (the request schema's `stream` is optional and "
    "turns streaming on: without it the reply is one JSON body)",
    "stream?: boolean; // Enable streaming",
    "https://openrouter.ai/docs/api-reference/overview",
)
OPENROUTER_CHAT_DIFFERENCES: tuple[Equivalence, ...] = (
    *JSON_FORMS,
    OPENROUTER_STREAM_USAGE,
    OPENROUTER_STREAM_FALSE,
    OPENROUTER_ASSISTANT_CONTENT,
    OPENROUTER_ARGUMENTS,
)
"""OpenRouter's Chat Completions: JSON's forms, the stream option it ignores, `stream: false`
as the default it spells, an assistant turn's optional content beside its calls, and call
arguments as the JSON they encode."""


def openrouter_chat(body: JsonBody) -> JsonBody:
    """An OpenRouter Chat Completions request in the form TC802 compares
    (OPENROUTER_CHAT_DIFFERENCES): `stream: false` and `stream_options.include_usage` dropped,
    the option with it when it held nothing else; an assistant turn's null `content` beside its tool_calls
    dropped; call arguments parsed to the JSON they encode."""
    b = copy.deepcopy(dict(body))
    if b.get("stream") is False:
        del b["stream"]  # the optional flag's default, spelled out (OPENROUTER_STREAM_FALSE)
    opts = b.get("stream_options")
    if isinstance(opts, dict) and "include_usage" in opts:
        opts.pop("include_usage")
        if not opts:
            del b["stream_options"]
    for m in b.get("messages") or []:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        calls = m.get("tool_calls")
        if calls and "content" in m and m["content"] is None:
            del m["content"]  # optional beside the calls (OPENROUTER_ASSISTANT_CONTENT)
        for call in calls if isinstance(calls, list) else []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("arguments"), str):
                with contextlib.suppress(ValueError):
                    fn["arguments"] = json.loads(fn["arguments"])  # OPENROUTER_ARGUMENTS
    return b


def ollama_chat(body: JsonBody) -> JsonBody:
    """An Ollama `/api/chat` request in the form TC802 compares (OLLAMA_CHAT_DIFFERENCES)."""
    b = copy.deepcopy(dict(body))
    if b.get("stream") is True:
        del b["stream"]  # the documented default
    if b.get("options") == {}:
        del b["options"]
    if b.get("tools") == []:
        del b["tools"]
    for m in b.get("messages") or []:
        if not isinstance(m, dict) or m.get("role") != "assistant":
            continue
        calls = m.get("tool_calls")
        if calls and m.get("content") == "":
            del m["content"]
        for j, call in enumerate(calls if isinstance(calls, list) else []):
            if not isinstance(call, dict):
                continue
            if call.get("type") == "function":
                del call["type"]
            fn = call.get("function")
            if isinstance(fn, dict) and _number(fn.get("index")) and fn["index"] == j:
                del fn["index"]
    return b
