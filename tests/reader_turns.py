"""Generated provider replies and streams, and what they carry, for the readers' properties
(tests/test_reader_properties.py, issue 37 item 2).

A `Turn` is what a reply carries: thinking texts, answer texts, tool calls (a name and its
arguments; a custom tool's free text). `reply(api, turn, form)` and `stream(api, turn, cut)`
write it in the API's documented shapes, by hand from each API's reference (the sources of
tests/wire_content.py) and never through an adapter, a wire record or a framing of the
package; `form` picks among the shapes an API documents for the same content (Chat: a
string, typed parts or a compatible server's object; a function, custom or deprecated call).
`missing(turn, message, records)` says what of the turn is neither in the canonical message
nor named by a WARN line.
"""

from __future__ import annotations

import json
import logging
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

# text a provider may send: any characters but lone surrogates (not encodable as UTF-8)
_TEXT = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40).filter(lambda s: s.strip())
_NAME = st.from_regex(r"[a-z][a-z0-9_]{0,20}", fullmatch=True)
_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), _TEXT)
_ARGS = st.dictionaries(_NAME, st.one_of(_LEAF, st.lists(_LEAF, max_size=3)), max_size=4)


@dataclass
class Turn:
    thinking: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    # (name, arguments object) or, for a custom tool, (name, free text)
    tools: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)


@st.composite
def turns(draw: Any, *, custom: bool = False, many_texts: bool = True) -> Turn:
    """A turn with at least one piece of content; `custom` allows free-text tool inputs."""
    inputs = st.one_of(_ARGS, _TEXT) if custom else _ARGS
    t = Turn(
        thinking=draw(st.lists(_TEXT, max_size=1)),
        texts=draw(st.lists(_TEXT, max_size=3 if many_texts else 1)),
        tools=draw(st.lists(st.tuples(_NAME, inputs), max_size=3)),
    )
    if not (t.thinking or t.texts or t.tools):
        t.texts = [draw(_TEXT)]
    return t


def pieces(text: str, cut: int) -> list[str]:
    """`text` in pieces of `cut` characters (at least one)."""
    n = max(1, cut)
    return [text[i : i + n] for i in range(0, len(text), n)] or [""]


def _sse(events: list[dict[str, Any]], *, named: bool = False, done: bool = False) -> bytes:
    out = ""
    for e in events:
        out += (f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e, ensure_ascii=False)}\n\n"
    return (out + ("data: [DONE]\n\n" if done else "")).encode()


def _args_text(args: dict[str, Any] | str) -> str:
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


# -- Anthropic Messages (docs.anthropic.com: Messages API, "Streaming messages") -------------------


def _anthropic_blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "thinking", "thinking": t, "signature": "c2ln"} for t in turn.thinking]
    blocks += [{"type": "text", "text": t} for t in turn.texts]
    blocks += [
        {"type": "tool_use", "id": f"toolu_{k:02d}", "name": n, "input": a}
        for k, (n, a) in enumerate(turn.tools)
        if isinstance(a, dict)
    ]
    return blocks


def _anthropic_message(turn: Turn, content: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "msg_01",
        "type": "message",
        "role": "assistant",
        "model": "claude-x",
        "content": content,
        "stop_reason": "tool_use" if turn.tools else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 5},
    }


def _anthropic_stream(turn: Turn, cut: int) -> bytes:
    start = _anthropic_message(turn, [])
    start["stop_reason"] = None
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for i, b in enumerate(_anthropic_blocks(turn)):
        head = {**b, "text": ""} if b["type"] == "text" else b
        if b["type"] == "thinking":
            head = {"type": "thinking", "thinking": "", "signature": ""}
        elif b["type"] == "tool_use":
            head = {**b, "input": {}}
        events.append({"type": "content_block_start", "index": i, "content_block": head})
        if b["type"] == "text":
            deltas = [{"type": "text_delta", "text": p} for p in pieces(b["text"], cut)]
        elif b["type"] == "thinking":
            deltas = [{"type": "thinking_delta", "thinking": p} for p in pieces(b["thinking"], cut)]
            deltas.append({"type": "signature_delta", "signature": b["signature"]})
        else:
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in pieces(json.dumps(b["input"]), cut)]
        events += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": i})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use" if turn.tools else "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 5},
        }
    )
    events.append({"type": "message_stop"})
    return _sse(events, named=True)


# -- OpenAI Chat Completions (chat/object, chat-streaming; compatible servers' reasoning) ----------


def _chat_call(k: int, name: str, args: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(args, str):
        return {"id": f"call_{k}", "type": "custom", "custom": {"name": name, "input": args}}
    return {"id": f"call_{k}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _chat_reply(turn: Turn, form: int) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": None}
    text = "".join(turn.texts)
    if turn.thinking and form % 3 == 2:
        # Mistral: `content` as typed parts, the reasoning in a `thinking` part
        parts: list[dict[str, Any]] = [{"type": "thinking", "thinking": [{"type": "text", "text": turn.thinking[0]}]}]
        parts += [{"type": "text", "text": t} for t in turn.texts]
        msg["content"] = parts
    else:
        if turn.thinking:
            msg["reasoning_content" if form % 2 else "reasoning"] = turn.thinking[0]
        if text:
            msg["content"] = {"type": "text", "text": text} if form % 3 == 1 else text
    legacy = form % 4 == 3 and len(turn.tools) == 1 and isinstance(turn.tools[0][1], dict)
    if legacy:  # the deprecated `function_call`
        name, args = turn.tools[0]
        msg["function_call"] = {"name": name, "arguments": json.dumps(args)}
    elif turn.tools:
        msg["tool_calls"] = [_chat_call(k, n, a) for k, (n, a) in enumerate(turn.tools)]
    finish = "function_call" if legacy else "tool_calls" if turn.tools else "stop"
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
    }


def _chunk(delta: dict[str, Any] | None, finish: str | None = None, **top: Any) -> dict[str, Any]:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": choices,
        **top,
    }


def _chat_stream(turn: Turn, cut: int) -> bytes:
    events = [_chunk({"role": "assistant", "content": None})]
    for t in turn.thinking:
        events += [_chunk({"reasoning_content": p}) for p in pieces(t, cut)]
    events += [_chunk({"content": p}) for t in turn.texts for p in pieces(t, cut)]
    calls = [(n, a) for n, a in turn.tools if isinstance(a, dict)]  # streamed custom calls: undocumented
    for k, (name, args) in enumerate(calls):
        frags = pieces(json.dumps(args), cut)
        first = {"index": k, "id": f"call_{k}", "type": "function", "function": {"name": name, "arguments": frags[0]}}
        events.append(_chunk({"tool_calls": [first]}))
        events += [_chunk({"tool_calls": [{"index": k, "function": {"arguments": f}}]}) for f in frags[1:]]
    events.append(_chunk({}, "tool_calls" if calls else "stop"))
    events.append(_chunk(None, usage={"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}))
    return _sse(events, done=True)


# -- OpenAI Responses (responses/object, responses-streaming, custom tools) -------------------------


def _responses_items(turn: Turn) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = [
        {"type": "reasoning", "id": f"rs_{k}", "summary": [{"type": "summary_text", "text": t}]}
        for k, t in enumerate(turn.thinking)
    ]
    if turn.texts:
        content = [{"type": "output_text", "text": t, "annotations": []} for t in turn.texts]
        items.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": content})
    for k, (name, args) in enumerate(turn.tools):
        if isinstance(args, str):
            items.append(
                {"type": "custom_tool_call", "id": f"ctc_{k}", "call_id": f"call_{k}", "name": name, "input": args}
            )
        else:
            items.append(
                {
                    "type": "function_call",
                    "id": f"fc_{k}",
                    "call_id": f"call_{k}",
                    "name": name,
                    "arguments": json.dumps(args),
                    "status": "completed",
                }
            )
    return items


def _response(status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "status": status,
        "model": "gpt-x",
        "output": output,
        "usage": {"input_tokens": 3, "output_tokens": 5, "total_tokens": 8},
    }


def _responses_stream(turn: Turn, cut: int) -> bytes:
    items = _responses_items(turn)
    events: list[dict[str, Any]] = [{"type": "response.created", "response": _response("in_progress", [])}]
    for oi, item in enumerate(items):
        t = item["type"]
        empty = {**item, "content": []} if t == "message" else {**item, "summary": []} if t == "reasoning" else item
        if t == "function_call":
            empty = {**item, "arguments": ""}
        elif t == "custom_tool_call":
            empty = {**item, "input": ""}
        events.append({"type": "response.output_item.added", "output_index": oi, "item": empty})
        where = {"output_index": oi, "item_id": item["id"]}
        if t == "message":
            for ci, part in enumerate(item["content"]):
                at = {**where, "content_index": ci}
                events.append({"type": "response.content_part.added", **at, "part": {**part, "text": ""}})
                events += [{"type": "response.output_text.delta", **at, "delta": p} for p in pieces(part["text"], cut)]
                events.append({"type": "response.output_text.done", **at, "text": part["text"]})
                events.append({"type": "response.content_part.done", **at, "part": part})
        elif t == "reasoning":
            text = item["summary"][0]["text"]
            at = {**where, "summary_index": 0}
            events.append(
                {"type": "response.reasoning_summary_part.added", **at, "part": {"type": "summary_text", "text": ""}}
            )
            events += [{"type": "response.reasoning_summary_text.delta", **at, "delta": p} for p in pieces(text, cut)]
            events.append({"type": "response.reasoning_summary_text.done", **at, "text": text})
        elif t == "function_call":
            events += [
                {"type": "response.function_call_arguments.delta", **where, "delta": p}
                for p in pieces(item["arguments"], cut)
            ]
            events.append({"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"]})
        else:
            events += [
                {"type": "response.custom_tool_call_input.delta", **where, "delta": p}
                for p in pieces(item["input"], cut)
            ]
            events.append({"type": "response.custom_tool_call_input.done", **where, "input": item["input"]})
        events.append({"type": "response.output_item.done", "output_index": oi, "item": item})
    events.append({"type": "response.completed", "response": _response("completed", items)})
    return _sse([{**e, "sequence_number": n} for n, e in enumerate(events)], named=True)


# -- Gemini generateContent (ai.google.dev/api/generate-content) -----------------------------------


def _gemini_parts(turn: Turn) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"text": t, "thought": True} for t in turn.thinking]
    parts += [{"text": t} for t in turn.texts]
    parts += [{"functionCall": {"name": n, "args": a}} for n, a in turn.tools if isinstance(a, dict)]
    return parts


def _gemini_chunk(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [cand], "modelVersion": "gemini-x"}
    if finish:
        out["usageMetadata"] = {"promptTokenCount": 3, "candidatesTokenCount": 5, "totalTokenCount": 8}
    return out


def _gemini_stream(turn: Turn, cut: int) -> bytes:
    chunks: list[dict[str, Any]] = []
    for p in _gemini_parts(turn):
        if "text" in p:
            chunks += [_gemini_chunk([{**p, "text": q}]) for q in pieces(p["text"], cut)]
        else:
            chunks.append(_gemini_chunk([p]))
    chunks.append(_gemini_chunk([{"text": ""}], "STOP"))
    return _sse(chunks)


# -- Ollama /api/chat (github.com/ollama/ollama docs/api.md) ----------------------------------------


def _ollama_line(message: dict[str, Any], done: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "llama-x", "created_at": "2026-01-01T00:00:00Z", "message": message, "done": done}
    if done:
        out |= {"done_reason": "stop", "prompt_eval_count": 3, "eval_count": 5}
    return out


def _ollama_message(turn: Turn) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": "".join(turn.texts)}
    if turn.thinking:
        msg["thinking"] = turn.thinking[0]
    calls = [{"function": {"name": n, "arguments": a}} for n, a in turn.tools if isinstance(a, dict)]
    if calls:
        msg["tool_calls"] = calls
    return msg


def _ollama_stream(turn: Turn, cut: int) -> bytes:
    lines = [
        _ollama_line({"role": "assistant", "content": "", "thinking": p}) for t in turn.thinking for p in pieces(t, cut)
    ]
    lines += [_ollama_line({"role": "assistant", "content": p}) for t in turn.texts for p in pieces(t, cut)]
    calls = _ollama_message(turn).get("tool_calls")
    if calls:
        lines.append(_ollama_line({"role": "assistant", "content": "", "tool_calls": calls}))
    lines.append(_ollama_line({"role": "assistant", "content": ""}, done=True))
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines).encode()


# -- Bedrock Converse (Converse / ConverseStream API references; AWS event-stream encoding) ---------


def _bedrock_blocks(turn: Turn) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [
        {"reasoningContent": {"reasoningText": {"text": t, "signature": "c2ln"}}} for t in turn.thinking
    ]
    blocks += [{"text": t} for t in turn.texts]
    blocks += [
        {"toolUse": {"toolUseId": f"tooluse_{k}", "name": n, "input": a}}
        for k, (n, a) in enumerate(turn.tools)
        if isinstance(a, dict)
    ]
    return blocks


def _frame(name: str, payload: Any) -> bytes:
    headers = b""
    for k, v in ((":event-type", name), (":content-type", "application/json"), (":message-type", "event")):
        headers += bytes([len(k)]) + k.encode() + b"\x07" + struct.pack(">H", len(v)) + v.encode()
    data = json.dumps(payload, ensure_ascii=False).encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(data), len(headers))
    msg = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + data
    return msg + struct.pack(">I", zlib.crc32(msg))


def _bedrock_stream(turn: Turn, cut: int) -> bytes:
    out = _frame("messageStart", {"role": "assistant"})
    for i, b in enumerate(_bedrock_blocks(turn)):
        if "text" in b:
            out += b"".join(
                _frame("contentBlockDelta", {"contentBlockIndex": i, "delta": {"text": p}})
                for p in pieces(b["text"], cut)
            )
        elif "reasoningContent" in b:
            r = b["reasoningContent"]["reasoningText"]
            out += b"".join(
                _frame("contentBlockDelta", {"contentBlockIndex": i, "delta": {"reasoningContent": {"text": p}}})
                for p in pieces(r["text"], cut)
            )
            out += _frame(
                "contentBlockDelta",
                {"contentBlockIndex": i, "delta": {"reasoningContent": {"signature": r["signature"]}}},
            )
        else:
            use = b["toolUse"]
            start = {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}}
            out += _frame("contentBlockStart", {"contentBlockIndex": i, "start": start})
            out += b"".join(
                _frame("contentBlockDelta", {"contentBlockIndex": i, "delta": {"toolUse": {"input": p}}})
                for p in pieces(json.dumps(use["input"]), cut)
            )
        out += _frame("contentBlockStop", {"contentBlockIndex": i})
    out += _frame("messageStop", {"stopReason": "tool_use" if turn.tools else "end_turn"})
    usage = {"inputTokens": 3, "outputTokens": 5, "totalTokens": 8}
    return out + _frame("metadata", {"usage": usage, "metrics": {"latencyMs": 1}})


# -- per API ----------------------------------------------------------------------------------------


def reply(api: str, turn: Turn, form: int = 0) -> dict[str, Any]:
    if api == "anthropic":
        return _anthropic_message(turn, _anthropic_blocks(turn))
    if api == "openai-chat":
        return _chat_reply(turn, form)
    if api == "openai-responses":
        return _response("completed", _responses_items(turn))
    if api == "gemini":
        return _gemini_chunk(_gemini_parts(turn), "STOP")
    if api == "ollama":
        return _ollama_line(_ollama_message(turn), done=True)
    if api == "bedrock":
        return {
            "output": {"message": {"role": "assistant", "content": _bedrock_blocks(turn)}},
            "stopReason": "tool_use" if turn.tools else "end_turn",
            "usage": {"inputTokens": 3, "outputTokens": 5, "totalTokens": 8},
            "metrics": {"latencyMs": 1},
        }
    raise KeyError(api)


STREAMS = {
    "anthropic": _anthropic_stream,
    "openai-chat": _chat_stream,
    "openai-responses": _responses_stream,
    "gemini": _gemini_stream,
    "ollama": _ollama_stream,
    "bedrock": _bedrock_stream,
}
# what each API carries of a turn (a custom tool's free text: OpenAI's only; streamed: Responses')
CUSTOM_REPLY = {"openai-chat", "openai-responses"}
CUSTOM_STREAM = {"openai-responses"}


def stream(api: str, turn: Turn, cut: int) -> bytes:
    return STREAMS[api](turn, cut)


def carried(api: str, turn: Turn, *, streamed: bool) -> Turn:
    """The part of `turn` the API's body carries (custom calls only where documented)."""
    keep = CUSTOM_STREAM if streamed else CUSTOM_REPLY
    tools = [(n, a) for n, a in turn.tools if isinstance(a, dict) or api in keep]
    return Turn(list(turn.thinking), list(turn.texts), tools)


def _warned(records: list[logging.LogRecord], piece: str, kind: str) -> bool:
    """A WARN line naming the piece, or canonical §7.3's WARN line for a dropped block of
    its kind (`block_type`)."""
    return any(
        r.levelno >= logging.WARNING and (piece in r.getMessage() or getattr(r, "block_type", None) == kind)
        for r in records
    )


def missing(turn: Turn, message: dict[str, Any], records: list[logging.LogRecord]) -> list[str]:
    """What of `turn` is neither in `message` nor named by a WARN line in `records`."""
    blocks = message.get("content") or []
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    thinking = "".join(b.get("text", "") for b in blocks if b.get("type") == "thinking")
    calls = [(b.get("name"), b.get("input")) for b in blocks if b.get("type") == "tool_use"]
    out: list[str] = []
    for t in turn.texts:
        if t not in text and not _warned(records, t, "text"):
            out.append(f"text {t!r}")
    for t in turn.thinking:
        if t not in thinking and not _warned(records, t, "thinking"):
            out.append(f"thinking {t!r}")
    for name, args in turn.tools:
        want = args if isinstance(args, dict) else {"input": args}
        if (name, want) not in calls and not _warned(records, name, "tool_use"):
            out.append(f"tool call {name}({_args_text(args)[:40]})")
    return out
