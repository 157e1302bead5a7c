"""A turnspec exec-protocol child for Google's Gemini Interactions API (POST /v1beta/interactions).

Written by an outside author from docs/exec-protocol.md, `turnspec schema export --format exec`,
`turnspec wire show gemini-interactions` and Google's documentation only:

- https://ai.google.dev/gemini-api/docs/interactions (steps, previous_interaction_id, store)
- https://ai.google.dev/gemini-api/docs/interactions/quickstart (the request and response)
- https://ai.google.dev/gemini-api/docs/interactions/streaming (stream: true, SSE)
- https://ai.google.dev/gemini-api/docs/interactions-breaking-changes-may-2026 (steps, events)
- https://googleapis.github.io/js-genai/release_docs/ (Interaction, Step*, StepDelta, Usage)

Standard library only; run as `python -I -S interactions_child.py`. INTERACTIONS_CHILD_DEFECT
plants one defect (status, usage, model, served, text, call, fragments, error) for the tests that prove the
checks catch it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import secrets
import sys
import time
import traceback
from typing import Any

NAME = "interactions-child"
PROVIDER = "gemini"
DEFECT = os.environ.get("INTERACTIONS_CHILD_DEFECT", "")
Obj = dict[str, Any]

CAPABILITIES: Obj = {
    "supports_thinking": False,
    "supports_images": False,
    "supports_tools": True,
    "supports_system_prompt": True,
    "supports_structured_output": False,
    "supports_streaming": True,
    "supports_streaming_tool_calls": True,
    "supports_parallel_tool_calls": True,
    "supports_prompt_caching": False,
    "supports_system_messages_in_list": False,
    "max_context_tokens": 1048576,
    "max_output_tokens": 65536,
    "accepted_image_media_types": [],
}

# The Interaction's status (InteractionStatus) to the canonical stop reason, as `wire show` prints it.
STOP = {
    "completed": "end_turn",
    "requires_action": "tool_use",
    "incomplete": "max_tokens",
    "budget_exceeded": "max_tokens",
    "failed": "error",
    "cancelled": "cancelled",
}


class ChildError(Exception):
    def __init__(self, error: Obj) -> None:
        super().__init__(error.get("message", ""))
        self.error = error


# --- ids ------------------------------------------------------------------------------------

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_last_ulid = [0, 0]


def ulid() -> str:
    """A monotonic ULID (48-bit milliseconds, 80 random bits; same millisecond: +1)."""
    ms = int(time.time() * 1000)
    if ms <= _last_ulid[0]:
        ms, rnd = _last_ulid[0], _last_ulid[1] + 1
    else:
        rnd = secrets.randbits(79)
    _last_ulid[0], _last_ulid[1] = ms, rnd
    n = (ms << 80) | rnd
    return "".join(_CROCKFORD[(n >> (5 * i)) & 31] for i in reversed(range(26)))


MAPS: dict[str, dict[str, str]] = {}  # session -> canonical -> provider


def _map(session: str) -> dict[str, str]:
    return MAPS.setdefault(session or "", {})


def canonical_for(session: str, provider_id: str) -> str:
    m = _map(session)
    for canonical, provider in m.items():
        if provider == provider_id:
            return canonical
    canonical = "tu_" + ulid()
    m[canonical] = provider_id
    return canonical


def provider_for(session: str, canonical: str) -> str:
    m = _map(session)
    if canonical not in m:
        m[canonical] = canonical  # a canonical id is a valid provider id of this API
    return m[canonical]


def tool_id_map(params: Obj) -> Obj:
    session, call, args = params.get("session_id", ""), params["call"], params.get("args", [])
    m = _map(session)
    if call == "canonical_for":
        return {"value": canonical_for(session, args[0])}
    if call == "provider_for":
        return {"value": provider_for(session, args[0])}
    if call == "get_provider":
        return {"value": m.get(args[0])}
    if call == "get_canonical":
        return {"value": next((c for c, p in m.items() if p == args[0]), None)}
    if call == "bind":
        canonical, provider = args
        owner = next((c for c, p in m.items() if p == provider), None)
        if (canonical in m and m[canonical] != provider) or (owner is not None and owner != canonical):
            raise ChildError(
                {"kind": "adapter_error", "error_class": "invalid_request", "message": "bind breaks injectivity"}
            )
        m[canonical] = provider
        return {"value": None}
    if call == "pairs":
        return {"value": [[c, p] for c, p in m.items()]}
    raise ChildError({"kind": "not_implemented", "message": f"tool_id_map call {call}"})


# --- render ---------------------------------------------------------------------------------


def wire_model(model: str) -> str:
    prefix = PROVIDER + ":"
    return model[len(prefix) :] if model.startswith(prefix) else model


def drop_log(msg: Obj, block_type: str, reason: str, logs: list[Obj], session: str) -> None:
    fields = {"event": "block_dropped", "adapter": NAME, "session_id": session}
    fields |= {"message_id": msg.get("id", ""), "block_type": block_type, "reason": reason}
    text = f"{NAME}: dropped {block_type} block of message {msg.get('id')} (session {session}): {reason}"
    logs.append({"level": "warning", "message": text, "fields": fields})


def is_critical(msg: Obj, index: int, key: str) -> bool:
    mark = (msg.get("metadata") or {}).get(key)
    return mark is True or (isinstance(mark, list) and index in mark)


def result_value(block: Obj) -> Any:
    texts = [b.get("text", "") for b in block.get("content", []) if b.get("type") == "text"]
    return "".join(texts)


def render_message(msg: Obj, options: Obj, logs: list[Obj], steps: list[Obj], system: list[str]) -> None:
    """One canonical message as Interactions input steps (user_input, model_output, function_call,
    function_result)."""
    session, role, key = msg.get("session_id", ""), msg.get("role"), options.get("critical_key") or "critical"
    raw = ((msg.get("metadata") or {}).get("provider_raw") or {}).get(NAME) or {}
    content: list[Obj] = []

    def flush() -> None:
        if content:
            kind = "user_input" if role == "user" else "model_output"
            steps.append({"type": kind, "content": list(content)})
            content.clear()

    for i, block in enumerate(msg.get("content", [])):
        kind = block.get("type")
        if kind == "text" and role == "system":
            system.append(block["text"])
        elif kind == "text":
            content.append({"type": "text", "text": block["text"]})
        elif kind == "tool_use" and role == "assistant":
            flush()
            call = {"type": "function_call", "id": provider_for(session, block["id"]), "name": block["name"]}
            steps.append(call | {"arguments": block.get("input", {})})
        elif kind == "tool_result":
            flush()
            result = {"type": "function_result", "call_id": provider_for(session, block["tool_use_id"])}
            name = raw.get("names", {}).get(block["tool_use_id"]) if isinstance(raw.get("names"), dict) else None
            if name:
                result["name"] = name
            kept = raw.get("results", {}).get(block["tool_use_id"]) if isinstance(raw.get("results"), dict) else None
            result["result"] = kept if kept is not None else result_value(block)
            if block.get("is_error"):
                result["is_error"] = True
            steps.append(result)
        else:
            if is_critical(msg, i, key):
                error = {"kind": "critical_block", "message": f"{kind} block cannot be carried", "adapter": NAME}
                error |= {"session_id": session, "message_id": msg.get("id", ""), "block_type": kind or "unknown"}
                raise ChildError(error | {"reason": "not carried by this adapter"})
            drop_log(msg, kind or "unknown", "not carried by this adapter", logs, session)
    flush()


def render(params: Obj, logs: list[Obj]) -> Obj:
    options = params.get("options") or {}
    steps: list[Obj] = []
    system: list[str] = []
    for msg in params.get("messages", []):
        render_message(msg, options, logs, steps, system)
    body: Obj = {"model": wire_model(options.get("model", ""))}
    if DEFECT == "model":
        del body["model"]
    body["input"] = steps
    own = (options.get("provider_raw") or {}).get(NAME) or {}
    if own.get("input") == "string" and len(steps) == 1 and len(steps[0].get("content", [])) == 1:
        body["input"] = steps[0]["content"][0].get("text", "")
    if system:
        body["system_instruction"] = "\n\n".join(system)
    if options.get("output_schema") is not None:
        fields = {"event": "option_dropped", "adapter": NAME, "option": "output_schema"}
        fields["reason"] = "this adapter does not render response_format"
        logs.append({"level": "warning", "message": f"{NAME}: dropped option output_schema", "fields": fields})
    tools = [
        {
            "type": "function",
            "name": t["name"],
            "description": t.get("description", ""),
            "parameters": t.get("input_schema", {}),
        }
        for t in params.get("tools", [])
    ]
    tools += list(options.get("provider_tools") or [])
    if tools:
        body["tools"] = tools
    config: Obj = {}
    if options.get("max_output_tokens") is not None:
        config["max_output_tokens"] = options["max_output_tokens"]
    if options.get("temperature") is not None:
        config["temperature"] = options["temperature"]
    if options.get("stop_sequences"):
        config["stop_sequences"] = options["stop_sequences"]
    if config:
        body["generation_config"] = config
    if options.get("stream"):
        body["stream"] = True
    body |= dict(options.get("extra") or {})
    return {
        "method": "POST",
        "path": "/v1beta/interactions",
        "headers": {"content-type": "application/json"},
        "body": body,
    }


# --- parse ----------------------------------------------------------------------------------


def usage_of(usage: Obj | None, latency: int | None = None) -> Obj | None:
    if not isinstance(usage, dict):
        return None
    cached = int(usage.get("total_cached_tokens") or 0)
    prompt = int(usage.get("total_input_tokens") or 0) + int(usage.get("total_tool_use_tokens") or 0)
    out = int(usage.get("total_output_tokens") or 0) + int(usage.get("total_thought_tokens") or 0)
    if DEFECT == "usage":
        out = int(usage.get("total_output_tokens") or 0) + 1
    counts = {"input_tokens": max(prompt - cached, 0), "output_tokens": out}
    counts |= {"cached_input_tokens": cached, "cache_creation_input_tokens": 0}
    if latency is not None:
        counts |= {"cost_usd": "0", "pricing_version": "unpriced", "latency_ms": latency}
    return counts


def stop_of(status: str, called: bool) -> str:
    stop = STOP.get(status, "end_turn")
    if stop == "end_turn" and called:
        stop = "tool_use"
    if DEFECT == "status" and stop in ("tool_use", "max_tokens"):
        stop = "end_turn"
    return stop


def alter(text: str) -> str:
    return text.upper() + " [altered]" if DEFECT == "text" and text else text


def call_block(session: str, step: Obj, reply: bool = False) -> Obj:
    args = step.get("arguments")
    if isinstance(args, str):
        args = json.loads(args or "{}")
    name = step.get("name", "") + ("_renamed" if DEFECT == "call" and reply else "")
    return {
        "type": "tool_use",
        "id": canonical_for(session, step.get("id") or ulid()),
        "name": name,
        "input": args or {},
    }


def content_of(session: str, steps: list[Obj]) -> list[Obj]:
    blocks: list[Obj] = []
    for step in steps:
        if step.get("type") == "model_output":
            for part in step.get("content") or []:
                if part.get("type") == "text":
                    blocks.append({"type": "text", "text": alter(part.get("text", ""))})
        elif step.get("type") == "function_call":
            blocks.append(call_block(session, step, reply=True))
    return blocks or [{"type": "text", "text": ""}]


def retry_after(body: Obj, headers: Obj) -> float | None:
    for detail in (body.get("error") or {}).get("details") or []:
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            return float(delay[:-1])
    value = headers.get("retry-after")
    return float(value) if isinstance(value, str) and value.isdigit() else None


def error_class(status: int, body: Obj) -> str:
    for detail in (body.get("error") or {}).get("details") or []:
        if isinstance(detail, dict) and detail.get("reason") == "API_KEY_INVALID":
            return "auth"
    if DEFECT == "error" and status == 429:
        return "server_error"
    table = {401: "auth", 403: "auth", 408: "network", 413: "context_overflow", 429: "rate_limit"}
    if status in table:
        return table[status]
    if 500 <= status < 600:
        return "server_error"
    return "invalid_request" if 400 <= status < 500 else "other"


def adapter_error(status: int, body: Obj, headers: Obj, request_id: str | None) -> ChildError:
    klass = error_class(status, body)
    error: Obj = {"kind": "adapter_error", "error_class": klass}
    error |= {"message": str((body.get("error") or {}).get("message") or f"HTTP {status}"), "provider_status": status}
    error |= {"request_id": request_id, "retryable": klass in ("rate_limit", "server_error", "network")}
    error["retry_after_seconds"] = retry_after(body, headers)
    return ChildError(error)


def lower_headers(headers: Obj | None) -> Obj:
    out: Obj = {}
    for k, v in (headers or {}).items():
        out[k.lower()] = v[0] if isinstance(v, list) and v else v
    return out


def decode_body(response: Obj) -> Any:
    if "body_base64" in response:
        raw = base64.b64decode(response["body_base64"])
        try:
            return json.loads(raw)
        except ValueError:
            return {}
    return response.get("body")


def message(ctx: Obj, content: list[Obj], model: str | None, status: str, usage: Obj | None, raw: Obj) -> Obj:
    canonical = f"{PROVIDER}:{model}" if model else (ctx.get("model") or f"{PROVIDER}:unknown")
    routing = {"mode": "default", "chosen_model": canonical, "reason": "no routing engine"}
    meta = {"model": canonical, "provider": PROVIDER, "routing": routing, "usage": usage, "status": status}
    meta["provider_raw"] = {NAME: raw}
    created = ctx.get("created_at") or time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    return {
        "id": ctx.get("message_id") or ulid(),
        "session_id": ctx.get("session_id") or "",
        "role": "assistant",
        "content": content,
        "metadata": meta,
        "created_at": created,
        "schema_version": 1,
    }


def parse(params: Obj) -> Obj:
    response, ctx = params["response"], params.get("context") or {}
    body, headers = decode_body(response), lower_headers(response.get("headers"))
    status = int(response.get("status") or 200)
    request_id = headers.get("x-request-id") or ctx.get("request_id")
    if status >= 400 or (isinstance(body, dict) and "error" in body and "status" not in body):
        raise adapter_error(status, body if isinstance(body, dict) else {}, headers, request_id)
    session = ctx.get("session_id") or ""
    steps = body.get("steps") or []
    content = content_of(session, steps)
    called = any(b["type"] == "tool_use" for b in content)
    stop = stop_of(str(body.get("status", "completed")), called)
    state = {"error": "error", "cancelled": "cancelled"}.get(stop, "complete")
    usage = usage_of(body.get("usage"), int(ctx.get("latency_ms") or 0))
    raw = {"id": body.get("id"), "status": body.get("status")}
    model = None if DEFECT == "served" else body.get("model")
    return {"message": message(ctx, content, model, state, usage, raw)}


# --- stream ---------------------------------------------------------------------------------


class Stream:
    """The SSE stream of one interaction: `event:` / `data:` lines, events interaction.created,
    interaction.status_update, step.start, step.delta, step.stop, interaction.completed, error."""

    def __init__(self, ctx: Obj) -> None:
        self.ctx, self.buf, self.events = ctx, b"", []
        self.mid = ctx.get("message_id") or ulid()
        self.session = ctx.get("session_id") or ""
        self.started, self.over, self.status = False, False, "completed"
        self.blocks: list[Obj] = []  # final content, in order
        self.open: dict[int, Obj] = {}  # wire step index -> {"kind", "block", "index", "args"}
        self.usage: Obj | None = None

    def emit(self, event: Obj) -> None:
        self.events.append(event | {"message_id": self.mid} if "message_id" not in event else event)

    def start(self, model: str | None) -> None:
        if not self.started:
            self.started = True
            name = model if model and DEFECT != "served" else None
            canonical = f"{PROVIDER}:{name}" if name else (self.ctx.get("model") or f"{PROVIDER}:unknown")
            self.emit({"type": "message_start", "message_id": self.mid, "role": "assistant", "model": canonical})

    def feed(self, data: bytes) -> list[Obj]:
        self.buf += data
        while True:
            m = re.search(rb"\r?\n\r?\n", self.buf)
            if not m:
                break
            frame, self.buf = self.buf[: m.start()], self.buf[m.end() :]
            self.frame(frame.decode("utf-8"))
        out, self.events = self.events, []
        return out

    def frame(self, frame: str) -> None:
        data = "\n".join(line[5:].lstrip(" ") for line in frame.splitlines() if line.startswith("data:"))
        if not data.strip():
            return
        try:
            event = json.loads(data)
        except ValueError as exc:
            raise self.fail(
                {"kind": "wire_format", "message": f"event data is not JSON: {exc}", "event": None}
            ) from exc
        self.handle(event)

    def fail(self, error: Obj) -> ChildError:
        self.over = True
        if self.started:
            self.finish("error")
        error["events"], self.events = self.events, []
        return ChildError(error)

    def handle(self, event: Obj) -> None:
        kind = event.get("event_type")
        if kind in ("interaction.created", "interaction.completed"):
            interaction = event.get("interaction") or {}
            self.start(interaction.get("model"))
            self.status = interaction.get("status") or self.status
            if interaction.get("usage") is not None:
                self.usage = interaction["usage"]
            if kind == "interaction.completed":
                self.finish(None)
        elif kind == "interaction.status_update":
            self.start(None)
            self.status = event.get("status") or self.status
        elif kind == "step.start":
            self.start(None)
            self.step_start(int(event.get("index", 0)), event.get("step") or {})
        elif kind == "step.delta":
            self.step_delta(int(event.get("index", 0)), event.get("delta") or {})
        elif kind == "step.stop":
            self.step_stop(int(event.get("index", 0)))
        elif kind == "error":
            self.start(None)
            err = event.get("error") or {}
            code = err.get("code")
            status = code if isinstance(code, int) else 500
            raise self.fail(adapter_error(status, {"error": err}, {}, self.ctx.get("request_id")).error)

    def step_start(self, index: int, step: Obj) -> None:
        if step.get("type") == "model_output":
            block = {"type": "text", "text": ""}
            self.blocks.append(block)
            self.open[index] = {"kind": "text", "block": block, "index": len(self.blocks) - 1}
            for part in step.get("content") or []:
                if part.get("type") == "text" and part.get("text"):
                    self.text(index, part["text"])
        elif step.get("type") == "function_call":
            block = call_block(self.session, step | {"arguments": {}}, reply=True)
            self.blocks.append(block)
            at = len(self.blocks) - 1
            self.open[index] = {"kind": "call", "block": block, "index": at, "args": ""}
            self.emit(
                {
                    "type": "tool_use_start",
                    "content_block_index": at,
                    "tool_use_id": block["id"],
                    "tool_name": block["name"],
                }
            )
            args = step.get("arguments")
            if isinstance(args, dict) and args:
                self.args(index, json.dumps(args, ensure_ascii=False))
            elif isinstance(args, str) and args:
                self.args(index, args)

    def text(self, index: int, text: str) -> None:
        slot = self.open[index]
        text = alter(text)
        slot["block"]["text"] += text
        self.emit({"type": "text_delta", "content_block_index": slot["index"], "text": text})

    def args(self, index: int, fragment: str) -> None:
        slot = self.open[index]
        slot["args"] += fragment
        if DEFECT == "fragments":  # the fragments held back, sent joined at step.stop
            return
        event = {"type": "tool_use_input_delta", "content_block_index": slot["index"]}
        self.emit(event | {"tool_use_id": slot["block"]["id"], "partial_json": fragment})

    def step_delta(self, index: int, delta: Obj) -> None:
        if index not in self.open:
            return
        kind = delta.get("type")
        if kind == "text" and self.open[index]["kind"] == "text":
            self.text(index, delta.get("text", ""))
        elif kind == "arguments_delta" and self.open[index]["kind"] == "call":
            fragment = delta.get("arguments", "")
            self.args(index, fragment if isinstance(fragment, str) else json.dumps(fragment))

    def step_stop(self, index: int) -> None:
        slot = self.open.pop(index, None)
        if slot and slot["kind"] == "call":
            slot["block"]["input"] = json.loads(slot["args"] or "{}")
            if DEFECT == "fragments" and slot["args"]:
                event = {"type": "tool_use_input_delta", "content_block_index": slot["index"]}
                self.emit(event | {"tool_use_id": slot["block"]["id"], "partial_json": slot["args"]})
            event = {"type": "tool_use_end", "content_block_index": slot["index"]}
            self.emit(event | {"tool_use_id": slot["block"]["id"], "final_input": slot["block"]["input"]})

    def finish(self, stop: str | None) -> None:
        for index in list(self.open):
            self.step_stop(index)
        called = any(b["type"] == "tool_use" for b in self.blocks)
        reason = stop or stop_of(self.status, called)
        final = [dict(b) for b in self.blocks] or [{"type": "text", "text": ""}]
        self.emit(
            {"type": "message_complete", "stop_reason": reason, "final_content": final, "usage": usage_of(self.usage)}
        )
        self.over = True


STREAMS: dict[str, Stream] = {}
HISTORY: dict[str, tuple[Obj, list[bytes], list[Obj]]] = {}  # request_id -> (ctx, chunks, events)


def stream_open(params: Obj) -> Obj:
    ctx = params.get("context") or {}
    STREAMS[params["stream_id"]] = Stream(ctx)
    if ctx.get("request_id"):
        HISTORY[ctx["request_id"]] = (ctx, [], [])
    return {"events": []}


def _record(stream: Stream, events: list[Obj]) -> None:
    rid = stream.ctx.get("request_id")
    if rid in HISTORY:
        HISTORY[rid][2].extend(events)


def stream_feed(params: Obj) -> Obj:
    stream = STREAMS[params["stream_id"]]
    data = base64.b64decode(params.get("data", ""))
    rid = stream.ctx.get("request_id")
    if rid in HISTORY:
        HISTORY[rid][1].append(data)
    if stream.over:
        return {"events": []}
    try:
        events = stream.feed(data)
    except ChildError as exc:
        STREAMS.pop(params["stream_id"], None)
        _record(stream, exc.error.get("events", []))
        if rid in HISTORY:
            HISTORY.pop(rid)
        raise
    _record(stream, events)
    return {"events": events}


def stream_close(params: Obj) -> Obj:
    stream = STREAMS.pop(params["stream_id"], None)
    rid = stream.ctx.get("request_id") if stream else None
    HISTORY.pop(rid, None)
    if stream is None or params.get("abandon"):
        return {"events": []}
    if stream.buf.strip():
        try:
            stream.frame(stream.buf.decode("utf-8"))
        except ChildError:
            raise
        stream.buf = b""
    events = stream.events
    stream.events = []
    if not stream.over:
        if not stream.started:
            stream.start(None)
        raise stream.fail(
            {"kind": "wire_format", "message": "stream ended before interaction.completed", "event": None}
        )
    return {"events": events}


def cancel(params: Obj) -> Obj:
    rid, delivered = params.get("request_id"), int(params.get("delivered") or 0)
    if rid not in HISTORY:
        return {"in_flight": False, "events": []}
    ctx, _chunks, events = HISTORY.pop(rid)
    for sid, s in list(STREAMS.items()):
        if s.ctx.get("request_id") == rid:
            STREAMS.pop(sid)
    kept = events[:delivered]
    mid = ctx.get("message_id") or (kept[0]["message_id"] if kept else ulid())
    blocks: dict[int, Obj] = {}
    open_calls: dict[int, Obj] = {}
    for e in kept:
        i = e.get("content_block_index")
        if e["type"] == "text_delta":
            blocks.setdefault(i, {"type": "text", "text": ""})["text"] += e["text"]
        elif e["type"] == "tool_use_start":
            blocks[i] = {"type": "tool_use", "id": e["tool_use_id"], "name": e["tool_name"], "input": {}}
            open_calls[i] = {"id": e["tool_use_id"], "args": ""}
        elif e["type"] == "tool_use_input_delta" and i in open_calls:
            open_calls[i]["args"] += e["partial_json"]
        elif e["type"] == "tool_use_end":
            blocks[i]["input"] = e["final_input"]
            open_calls.pop(i, None)
    out: list[Obj] = []
    for i, call in open_calls.items():
        try:
            partial = json.loads(call["args"]) if call["args"] else {}
        except ValueError:
            partial = {}
        blocks[i]["input"] = partial if isinstance(partial, dict) else {}
        out.append(
            {
                "type": "tool_use_end",
                "message_id": mid,
                "content_block_index": i,
                "tool_use_id": call["id"],
                "final_input": blocks[i]["input"],
            }
        )
    final = [blocks[i] for i in sorted(blocks)] or [{"type": "text", "text": ""}]
    out.append(
        {
            "type": "message_complete",
            "message_id": mid,
            "stop_reason": "cancelled",
            "final_content": final,
            "usage": None,
        }
    )
    return {"in_flight": True, "events": out}


# --- read_request, estimate -----------------------------------------------------------------


def _new_message(session: str, role: str, content: list[Obj], meta: Obj) -> Obj:
    msg: Obj = {"id": ulid(), "session_id": session, "role": role, "content": content, "metadata": meta}
    return msg | {"created_at": time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime()), "schema_version": 1}


def _assistant_meta(model: str) -> Obj:
    canonical = f"{PROVIDER}:{model}"
    routing = {"mode": "default", "chosen_model": canonical, "reason": "no routing engine"}
    return {"model": canonical, "provider": PROVIDER, "routing": routing, "status": "complete"}


def _result_message(session: str, step: Obj) -> Obj:
    canonical = canonical_for(session, step.get("call_id", ""))
    result = step.get("result")
    text = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    block: Obj = {"type": "tool_result", "tool_use_id": canonical, "content": [{"type": "text", "text": text}]}
    if step.get("is_error"):
        block["is_error"] = True
    own: Obj = {}
    if step.get("name"):
        own["names"] = {canonical: step["name"]}
    if not isinstance(result, str):
        own["results"] = {canonical: result}
    meta: Obj = {"parent_tool_use_id": canonical}
    if own:
        meta["provider_raw"] = {NAME: own}
    return _new_message(session, "tool", [block], meta)


def read_request(params: Obj) -> Obj:
    """A recorded Interactions request back to canonical: consecutive model_output and
    function_call steps are one assistant turn (parallel calls)."""
    body = dict(params.get("body") or {})
    session = params.get("session_id") or ""
    model = str(body.pop("model", ""))
    messages: list[Obj] = []
    own: Obj = {}
    system = body.pop("system_instruction", None)
    if isinstance(system, str):
        messages.append(_new_message(session, "system", [{"type": "text", "text": system}], {}))
    steps = body.pop("input", [])
    if isinstance(steps, str):
        own["input"] = "string"
        steps = [{"type": "user_input", "content": [{"type": "text", "text": steps}]}]
    for step in steps:
        kind = step.get("type")
        texts = [
            {"type": "text", "text": p.get("text", "")} for p in step.get("content") or [] if p.get("type") == "text"
        ]
        if kind == "user_input":
            messages.append(_new_message(session, "user", texts, {}))
        elif kind in ("model_output", "function_call"):
            blocks = texts if kind == "model_output" else [call_block(session, step)]
            if messages and messages[-1]["role"] == "assistant":
                messages[-1]["content"].extend(blocks)
            else:
                messages.append(_new_message(session, "assistant", blocks, _assistant_meta(model)))
        elif kind == "function_result":
            messages.append(_result_message(session, step))
    tools = [
        {"name": t["name"], "description": t.get("description", ""), "input_schema": t.get("parameters", {})}
        for t in body.pop("tools", [])
        if t.get("type") == "function"
    ]
    config = body.pop("generation_config", {}) or {}
    options: Obj = {"model": f"{PROVIDER}:{model}", "stream": bool(body.pop("stream", False))}
    options |= {"max_output_tokens": config.get("max_output_tokens"), "temperature": config.get("temperature")}
    options |= {"stop_sequences": config.get("stop_sequences", []), "extra": body}
    if own:
        options["provider_raw"] = {NAME: own}
    return {"messages": messages, "tools": tools, "options": options}


def estimate(params: Obj) -> Obj:
    text = json.dumps(params.get("messages", [])) + json.dumps(params.get("tools", []))
    return {"tokens": max(1, len(text) // 4)}


# --- the loop -------------------------------------------------------------------------------


def hello(params: Obj) -> Obj:
    if 1 not in params.get("protocol_versions", []):
        raise ChildError({"kind": "not_implemented", "message": "this child speaks protocol version 1 only"})
    adapter = {"name": NAME, "provider": PROVIDER, "wire_api": "gemini-interactions", "language": "python"}
    adapter |= {"language_version": sys.version.split()[0], "capabilities": CAPABILITIES}
    adapter |= {"provider_tool_id": "^[A-Za-z0-9_-]+$", "cassette_folders": ["gemini-interactions"]}
    adapter["operations"] = ["render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"]
    adapter |= {"tool_errors_in_band": None, "gaps": []}
    return {"protocol_version": 1, "adapter": adapter}


def dispatch(op: str, params: Obj, logs: list[Obj]) -> Obj:
    handlers = {
        "hello": hello,
        "parse": parse,
        "stream_open": stream_open,
        "stream_feed": stream_feed,
        "stream_close": stream_close,
        "cancel": cancel,
        "read_request": read_request,
        "estimate": estimate,
        "tool_id_map": tool_id_map,
        "shutdown": lambda p: {},
    }
    if op == "render":
        return render(params, logs)
    if op not in handlers:
        raise ChildError({"kind": "not_implemented", "message": f"operation {op}"})
    return handlers[op](params)


def main() -> int:
    for number, line in enumerate(sys.stdin, start=1):
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError
        except ValueError:
            print(f"standard input line {number} is not JSON", file=sys.stderr)
            return 2
        logs: list[Obj] = []
        try:
            answer = {
                "id": request.get("id"),
                "ok": True,
                "result": dispatch(request.get("op", ""), request.get("params") or {}, logs),
            }
        except ChildError as exc:
            answer = {"id": request.get("id"), "ok": False, "error": exc.error}
        except Exception as exc:  # every other failure is a crash answer
            error = {
                "kind": "crash",
                "message": str(exc),
                "type": type(exc).__name__,
                "traceback": traceback.format_exc(),
            }
            answer = {"id": request.get("id"), "ok": False, "error": error}
        answer["logs"] = logs
        sys.stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
        sys.stdout.flush()
        if request.get("op") == "shutdown":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
