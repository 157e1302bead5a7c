"""What a provider's reply carries, read straight from its bytes: the oracle of the samples
measurement (tests/test_samples_wire.py) and of the dialect corpus.

Written from each API's documented reply shapes, never through an adapter, a wire record's
probes or a framing decoder of the package, so a mapping bug in those cannot hide here:

- Anthropic Messages (https://docs.anthropic.com/en/api/messages and /en/docs/build-with-claude/streaming):
  `content[]` blocks `text`, `thinking` (`thinking`), `redacted_thinking`, `tool_use`
  (`name`); streamed as `content_block_start` and `content_block_delta` (`text_delta`,
  `thinking_delta`).
- OpenAI Chat Completions and compatible servers
  (https://platform.openai.com/docs/api-reference/chat/object): `choices[].message` /
  `choices[].delta`: `content` (a string, or Mistral's list of typed parts with `thinking`
  parts, https://docs.mistral.ai/capabilities/reasoning/), `reasoning_content` (DeepSeek,
  https://api-docs.deepseek.com/guides/reasoning_model), `reasoning` (Ollama /v1, vLLM,
  Groq, OpenRouter, xAI), `tool_calls[].function.name`.
- OpenAI Responses (https://platform.openai.com/docs/api-reference/responses/object):
  `output[]` items `message` (`output_text`, `refusal`), `reasoning` (`summary[]`,
  `content[]` `reasoning_text`), `function_call` and `custom_tool_call` (`name`); streamed as
  `response.output_item.done` items.
- Gemini generateContent (https://ai.google.dev/api/generate-content): `candidates[0]
  .content.parts[]`: `text` (`thought: true` is a thought summary), `functionCall.name`;
  streamed as chunks of the same shape (SSE, or one JSON array without `alt=sse`).
- Ollama /api/chat (https://github.com/ollama/ollama/blob/main/docs/api.md): `message`
  `content`, `thinking`, `tool_calls[].function.name`; streamed as NDJSON lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


@dataclass
class Content:
    """Text, reasoning and tool calls of one reply (or one canonical message)."""

    text: str = ""
    thinking: str = ""
    redacted: int = 0
    tools: list[str] = field(default_factory=list)
    usage: bool = False  # some token count was reported
    error: bool = False  # the provider reported an error in the reply
    # each text and thinking piece apart (a request's messages: compared one by one)
    texts: list[str] = field(default_factory=list)
    thoughts: list[str] = field(default_factory=list)

    def add(self, kind: str, value: Any) -> None:
        if kind == "text" and isinstance(value, str):
            self.text += value
            self.texts.append(value)
        elif kind == "thinking" and isinstance(value, str):
            self.thinking += value
            self.thoughts.append(value)
        elif kind == "redacted":
            self.redacted += 1
        elif kind == "tool" and isinstance(value, str) and value:
            self.tools.append(value)


def _squash(s: str) -> str:
    return "".join(s.split())


def lost(wire: Content, canonical: Content) -> list[str]:
    """What `wire` carries that `canonical` does not (whitespace aside: an adapter may trim)."""
    out: list[str] = []
    if _squash(wire.text) and _squash(wire.text) not in _squash(canonical.text):
        out.append(f"text {wire.text[:60]!r}")
    if _squash(wire.thinking) and _squash(wire.thinking) not in _squash(canonical.thinking):
        out.append(f"reasoning {wire.thinking[:60]!r}")
    if wire.redacted > canonical.redacted:
        out.append(f"{wire.redacted - canonical.redacted} redacted thinking block(s)")
    if sorted(wire.tools) != sorted(canonical.tools):
        out.append(f"tool calls {wire.tools} read as {canonical.tools}")
    return out


def lost_pieces(wire: Content, canonical: Content) -> list[str]:
    """What a request's messages carry that the canonical history does not: each text and
    reasoning piece must be found (whitespace aside), each tool call's name counted."""
    out: list[str] = []
    for kind, pieces, whole in (("text", wire.texts, canonical.text), ("reasoning", wire.thoughts, canonical.thinking)):
        out += [f"{kind} {p[:60]!r}" for p in pieces if _squash(p) and _squash(p) not in _squash(whole)]
    if wire.redacted > canonical.redacted:
        out.append(f"{wire.redacted - canonical.redacted} redacted thinking block(s)")
    if sorted(wire.tools) != sorted(canonical.tools):
        out.append(f"tool calls {wire.tools} read as {canonical.tools}")
    return out


def of_canonical(message: dict[str, Any]) -> Content:
    c = Content()
    for b in message.get("content") or []:
        t = b.get("type")
        if t == "text":
            c.add("text", b.get("text"))
        elif t == "tool_result":
            for x in b.get("content") or []:
                if x.get("type") == "text":
                    c.add("text", x.get("text"))
        elif t == "thinking":
            c.add("thinking", b.get("text"))
        elif t == "redacted_thinking":
            c.add("redacted", None)
        elif t == "tool_use":
            c.add("tool", b.get("name"))
    return c


# -- decoding stream bodies (by hand: the package's decoders are under test) -----------------------


def sse_data(body: bytes) -> list[Any]:
    """The JSON `data:` payloads of an SSE body (`[DONE]` and comments left out)."""
    out: list[Any] = []
    text = body.decode("utf-8").replace("\r\n", "\n")
    for event in text.split("\n\n"):
        data = "\n".join(line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")).strip()
        if data and data != "[DONE]":
            out.append(json.loads(data))
    return out


def stream_values(body: bytes) -> list[Any]:
    """The JSON values of a stream body: SSE, a JSON array (Gemini without `alt=sse`) or NDJSON."""
    head = body.lstrip()[:1]
    if head == b"[":
        value = json.loads(body)
        return value if isinstance(value, list) else [value]
    if head == b"{":
        return [json.loads(line) for line in body.splitlines() if line.strip()]
    return sse_data(body)


# -- per API -------------------------------------------------------------------------------------


def _anthropic(values: list[Any], c: Content) -> None:
    for v in values:
        if not isinstance(v, dict):
            continue
        blocks = v.get("content") if v.get("type") == "message" else None
        if v.get("type") == "content_block_start":
            blocks = [v.get("content_block") or {}]
        for b in blocks or []:
            t = b.get("type")
            if t == "text":
                c.add("text", b.get("text"))
            elif t == "thinking":
                c.add("thinking", b.get("thinking"))
            elif t == "redacted_thinking":
                c.add("redacted", None)
            elif t == "tool_use":
                c.add("tool", b.get("name"))
        if v.get("type") == "content_block_delta":
            d = v.get("delta") or {}
            if d.get("type") == "text_delta":
                c.add("text", d.get("text"))
            elif d.get("type") == "thinking_delta":
                c.add("thinking", d.get("thinking"))


def _chat_content(content: Any, c: Content) -> None:
    if isinstance(content, dict):  # a compatible server's one part object (issue 37)
        content = [content]
    if isinstance(content, str):
        c.add("text", content)
    elif isinstance(content, list):  # Mistral's typed parts
        for p in content:
            if not isinstance(p, dict):
                continue
            if p.get("type") == "text":
                c.add("text", p.get("text"))
            elif p.get("type") == "thinking":
                inner = p.get("thinking")
                for q in inner if isinstance(inner, list) else [{"text": inner}]:
                    if isinstance(q, dict):
                        c.add("thinking", q.get("text"))


def _openai_chat(values: list[Any], c: Content) -> None:
    # a streamed call is one `index` (or, from servers that send none, one `id`; the
    # fragments after it carry neither); its name may come again in a later fragment
    streamed: dict[Any, str] = {}
    last: Any = None
    for v in values:
        if not isinstance(v, dict) or v.get("object") == "chat.completion.done":
            continue  # Perplexity's last chunk repeats the whole message
        for choice in v.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = "delta" in choice
            m = choice.get("delta") if delta else choice.get("message")
            if not isinstance(m, dict):
                continue
            _chat_content(m.get("content"), c)
            # aliases: vLLM sends both while renaming `reasoning_content` to `reasoning`
            # ("reasoning used to be called reasoning_content"), OpenRouter both as well
            c.add("thinking", m.get("reasoning_content") or m.get("reasoning"))
            fc = m.get("function_call")  # the deprecated single call: no index, no id
            calls = [*(m.get("tool_calls") or []), *([{"index": "fc", "function": fc}] if isinstance(fc, dict) else [])]
            for call in calls:
                call = call or {}
                name = (call.get("function") or call.get("custom") or {}).get("name")
                if not delta:
                    c.add("tool", name)
                    continue
                key = ("index", call["index"]) if "index" in call else ("id", call["id"]) if call.get("id") else last
                last = key
                if name and not streamed.get(key):
                    streamed[key] = name
    for name in streamed.values():
        c.add("tool", name)


def _responses_item(item: dict[str, Any], c: Content) -> None:
    t = item.get("type")
    if t == "message":
        for p in item.get("content") or []:
            if p.get("type") == "output_text":
                c.add("text", p.get("text"))
            elif p.get("type") == "refusal":
                c.add("text", p.get("refusal"))
    elif t == "reasoning":
        for p in [*(item.get("summary") or []), *(item.get("content") or [])]:
            c.add("thinking", p.get("text"))
    elif t in ("function_call", "custom_tool_call"):
        c.add("tool", item.get("name"))


def _openai_responses(values: list[Any], c: Content) -> None:
    for v in values:
        if not isinstance(v, dict):
            continue
        if v.get("object") == "response":
            for item in v.get("output") or []:
                _responses_item(item, c)
        elif v.get("type") == "response.output_item.done":
            _responses_item(v.get("item") or {}, c)


def _gemini(values: list[Any], c: Content) -> None:
    for v in values:
        cands = v.get("candidates") if isinstance(v, dict) else None
        for part in ((cands or [{}])[0].get("content") or {}).get("parts") or []:
            if "text" in part:
                c.add("thinking" if part.get("thought") else "text", part["text"])
            call = part.get("functionCall") or part.get("function_call")
            if isinstance(call, dict):
                c.add("tool", call.get("name"))


def _ollama(values: list[Any], c: Content) -> None:
    for v in values:
        m = v.get("message") if isinstance(v, dict) else None
        if not isinstance(m, dict):
            continue
        c.add("text", m.get("content"))
        c.add("thinking", m.get("thinking"))
        for call in m.get("tool_calls") or []:
            c.add("tool", ((call or {}).get("function") or {}).get("name"))


# -- requests: the conversation a recorded request sends ------------------------------------------


def _anthropic_request(body: dict[str, Any], c: Content) -> None:
    # https://docs.anthropic.com/en/api/messages: `system` (string or text blocks), messages
    # whose content is a string or blocks; a tool_result's content a string or blocks
    system = body.get("system")
    for b in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        c.add("text", b.get("text"))
    for m in body.get("messages") or []:
        content = m.get("content")
        for b in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            t = b.get("type")
            if t == "tool_result":
                inner = b.get("content")
                for x in [{"type": "text", "text": inner}] if isinstance(inner, str) else inner or []:
                    if x.get("type") == "text":
                        c.add("text", x.get("text"))
            else:
                _anthropic([{"type": "content_block_start", "content_block": b}], c)


def _chat_request(body: dict[str, Any], c: Content) -> None:
    # https://platform.openai.com/docs/api-reference/chat/create: `messages[].content` a
    # string or parts (`text`), `tool_calls[].function.name`; the reasoning fields a server
    # refuses back (DeepSeek) are not compared
    for m in body.get("messages") or []:
        content = m.get("content")
        if isinstance(content, list):
            for p in content:
                if isinstance(p, dict) and p.get("type") == "text":
                    c.add("text", p.get("text"))
        else:
            c.add("text", content)
        for call in m.get("tool_calls") or []:
            c.add("tool", (((call or {}).get("function") or (call or {}).get("custom")) or {}).get("name"))
        if isinstance(m.get("function_call"), dict):  # the deprecated single call
            c.add("tool", m["function_call"].get("name"))


def _responses_request(body: dict[str, Any], c: Content) -> None:
    # https://platform.openai.com/docs/api-reference/responses/create: `instructions`, `input`
    # (a string, or items: messages with `input_text`/`output_text` parts, `function_call`,
    # `function_call_output` with a string `output`, `reasoning` with its summary)
    c.add("text", body.get("instructions"))
    items = body.get("input")
    for item in [{"type": "message", "content": items}] if isinstance(items, str) else items or []:
        t = item.get("type", "message")
        if t == "message":
            content = item.get("content")
            for p in [{"type": "input_text", "text": content}] if isinstance(content, str) else content or []:
                if p.get("type") in ("input_text", "output_text", "text"):
                    c.add("text", p.get("text"))
        elif t in ("function_call_output", "custom_tool_call_output") and isinstance(item.get("output"), str):
            c.add("text", item["output"])
        elif t in ("function_call", "custom_tool_call", "reasoning"):
            _responses_item(item, c)


def _gemini_request(body: dict[str, Any], c: Content) -> None:
    # https://ai.google.dev/api/generate-content: `systemInstruction.parts`, `contents[].parts`
    system = body.get("systemInstruction") or body.get("system_instruction") or {}
    for part in system.get("parts") or []:
        c.add("text", part.get("text"))
    for content in body.get("contents") or []:
        _gemini([{"candidates": [{"content": content}]}], c)


def _ollama_request(body: dict[str, Any], c: Content) -> None:
    # https://github.com/ollama/ollama/blob/main/docs/api.md#chat-request-with-history
    _ollama([{"message": m} for m in body.get("messages") or []], c)


REQUEST_READERS = {
    "anthropic-messages": _anthropic_request,
    "openai-chat-completions": _chat_request,
    "openrouter-chat-completions": _chat_request,
    "openai-responses": _responses_request,
    "gemini-generate-content": _gemini_request,
    "ollama-chat": _ollama_request,
}


def of_request(api: str, body: dict[str, Any]) -> Content:
    """The conversation a request `body` of wire API `api` sends (KeyError: not read here)."""
    c = Content()
    REQUEST_READERS[api](body, c)
    return c


READERS = {
    "anthropic-messages": _anthropic,
    "openai-chat-completions": _openai_chat,
    "openrouter-chat-completions": _openai_chat,
    "openai-responses": _openai_responses,
    "gemini-generate-content": _gemini,
    "ollama-chat": _ollama,
}


# where each API reports token counts: Anthropic `usage` (also in `message_start.message`
# and `message_delta`), Chat and Responses `usage` (Responses streams: `response.usage`),
# Gemini `usageMetadata`, Ollama `prompt_eval_count`/`eval_count`
_USAGE_KEYS = ("usage", "usageMetadata", "eval_count", "prompt_eval_count")


def _has_usage(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    if any(value.get(k) for k in _USAGE_KEYS):
        return True
    return any(_has_usage(value.get(k)) for k in ("message", "response"))


def _has_error(value: Any) -> bool:
    """The provider's own error in a reply: an `error` member (Anthropic's `error` event,
    Chat, Gemini and Ollama error chunks), a Responses `error` event or `response.failed`."""
    if not isinstance(value, dict):
        return False
    if value.get("error") or value.get("type") in ("error", "response.failed"):
        return True
    return isinstance(value.get("response"), dict) and value["response"].get("status") == "failed"


def of_wire(api: str, body: bytes, stream: bool) -> Content:
    """What the reply `body` of wire API `api` carries (KeyError: an API this oracle does not read)."""
    reader = READERS[api]
    values = stream_values(body) if stream else [json.loads(body)]
    c = Content()
    reader(values, c)
    c.usage = any(_has_usage(v) for v in values)
    c.error = any(_has_error(v) for v in values)
    return c


# -- hand-written recordings ---------------------------------------------------------------------


def write_cassette(
    folder: Path,
    name: str,
    uri: str,
    request: dict[str, Any],
    response: dict[str, Any] | str,
    *,
    synthetic: bool = False,
    status: int = 200,
    content_type: str = "application/json",
) -> Path:
    """`folder/name.yaml`: one hand-written vcrpy interaction (a `str` response is the body as
    sent, a stream's text); recorded traffic unless `synthetic` (the project's own header)."""
    headers: dict[str, list[str]] = {"content-type": [content_type]}
    if synthetic:
        headers["x-turnspec-synthetic"] = ["written from the docs"]
    data = {
        "interactions": [
            {
                "request": {
                    "body": json.dumps(request),
                    "headers": {"content-type": ["application/json"]},
                    "method": "POST",
                    "uri": uri,
                },
                "response": {
                    "body": {"string": response if isinstance(response, str) else json.dumps(response)},
                    "headers": headers,
                    "status": {"code": status, "message": "OK" if status < 400 else "Error"},
                },
            }
        ],
        "version": 1,
    }
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return folder
