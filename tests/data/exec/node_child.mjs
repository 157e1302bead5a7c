#!/usr/bin/env node
// An Anthropic Messages adapter speaking turnspec's exec protocol (version 1), written by an
// outside author from docs/exec-protocol.md and schemas/exec/v1/ only. Plain Node 20, no
// npm dependencies. turnspec keeps it as test data (tests/test_exec_outside_author.py).
//
// Wire format: Anthropic's Messages API (POST /v1/messages; streaming with SSE events
// message_start, content_block_start/delta/stop, message_delta, message_stop, ping, error).
import { createInterface } from "node:readline";

const NAME = "outside-anthropic";
const PROVIDER = "anthropic";
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

// ---------------------------------------------------------------- ids

let lastUlidTime = 0;
let lastUlidRandom = null;

function ulid() {
  const now = Date.now();
  let random;
  if (now === lastUlidTime && lastUlidRandom) {
    random = lastUlidRandom.slice();
    for (let i = random.length - 1; i >= 0; i--) {
      if (random[i] < 31) { random[i] += 1; break; }
      random[i] = 0;
    }
  } else {
    random = Array.from({ length: 16 }, () => Math.floor(Math.random() * 32));
  }
  lastUlidTime = now;
  lastUlidRandom = random;
  let time = "";
  let t = now;
  for (let i = 0; i < 10; i++) { time = CROCKFORD[t % 32] + time; t = Math.floor(t / 32); }
  return time + random.map((d) => CROCKFORD[d]).join("");
}

function providerToolId() {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "toolu_";
  for (let i = 0; i < 24; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)];
  return out;
}

function nowTimestamp() {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

// ---------------------------------------------------------------- typed errors and logs

class ProtocolError extends Error {
  constructor(error) { super(error.message); this.error = error; }
}

function adapterError(errorClass, message, extra = {}) {
  return new ProtocolError({ kind: "adapter_error", error_class: errorClass, message, ...extra });
}

let logs = [];

function warn(message, fields) { logs.push({ level: "warning", message, fields }); }

// ---------------------------------------------------------------- the tool id map (spec §6.2)

const sessions = new Map();

function sessionMap(sessionId) {
  let map = sessions.get(sessionId);
  if (!map) { map = { toProvider: new Map(), toCanonical: new Map() }; sessions.set(sessionId, map); }
  return map;
}

function bind(map, canonical, provider) {
  const boundProvider = map.toProvider.get(canonical);
  const boundCanonical = map.toCanonical.get(provider);
  if ((boundProvider !== undefined && boundProvider !== provider)
      || (boundCanonical !== undefined && boundCanonical !== canonical)) {
    throw adapterError("invalid_request", `cannot bind ${canonical} to ${provider}: already bound`);
  }
  map.toProvider.set(canonical, provider);
  map.toCanonical.set(provider, canonical);
}

function canonicalFor(sessionId, provider) {
  const map = sessionMap(sessionId);
  let canonical = map.toCanonical.get(provider);
  if (canonical === undefined) { canonical = "tu_" + ulid(); bind(map, canonical, provider); }
  return canonical;
}

function providerFor(sessionId, canonical) {
  const map = sessionMap(sessionId);
  let provider = map.toProvider.get(canonical);
  if (provider === undefined) { provider = providerToolId(); bind(map, canonical, provider); }
  return provider;
}

function toolIdMap({ session_id: sessionId, call, args = [] }) {
  const map = sessionMap(sessionId);
  switch (call) {
    case "canonical_for": return { value: canonicalFor(sessionId, args[0]) };
    case "provider_for": return { value: providerFor(sessionId, args[0]) };
    case "get_provider": return { value: map.toProvider.get(args[0]) ?? null };
    case "get_canonical": return { value: map.toCanonical.get(args[0]) ?? null };
    case "bind": bind(map, args[0], args[1]); return { value: null };
    case "pairs": return { value: [...map.toProvider.entries()] };
    default: throw adapterError("invalid_request", `unknown tool_id_map call ${call}`);
  }
}

// ---------------------------------------------------------------- render (canonical -> wire)

function dropBlock(message, block, reason, critical) {
  if (critical === true) {
    throw new ProtocolError({
      kind: "critical_block", message: `${NAME}: critical ${block.type} block cannot be sent: ${reason}`,
      adapter: NAME, session_id: message.session_id, message_id: message.id,
      block_type: block.type, reason,
    });
  }
  warn(`${NAME}: dropped ${block.type} block of message ${message.id} (session ${message.session_id}): ${reason}`, {
    event: "block_dropped", adapter: NAME, session_id: message.session_id, message_id: message.id,
    block_type: block.type, reason,
  });
}

function renderImage(message, block, critical) {
  const source = block.source || {};
  if (!CAPABILITIES.accepted_image_media_types.includes(String(block.media_type).toLowerCase())) {
    dropBlock(message, block, `media type ${block.media_type} is not one the Messages API takes`, critical);
    return null;
  }
  if (source.kind === "base64") {
    return { type: "image", source: { type: "base64", media_type: block.media_type, data: source.data } };
  }
  if (source.kind === "url") return { type: "image", source: { type: "url", url: source.data } };
  dropBlock(message, block, `an image by ${source.kind} cannot travel on the Messages API`, critical);
  return null;
}

function fromThisProvider(message) {
  const provider = message.metadata && message.metadata.provider;
  const model = message.metadata && message.metadata.model;
  return provider === PROVIDER || (typeof model === "string" && model.startsWith(PROVIDER + ":"));
}

function renderBlock(message, block, critical) {
  switch (block.type) {
    case "text": return { type: "text", text: block.text };
    case "image": return renderImage(message, block, critical);
    case "tool_use":
      return { type: "tool_use", id: providerFor(message.session_id, block.id), name: block.name, input: block.input };
    case "thinking":
      if (!fromThisProvider(message)) {
        dropBlock(message, block, "thinking from another provider cannot be sent back", critical);
        return null;
      }
      if (!block.signature) {
        dropBlock(message, block, "a thinking block without its signature is refused", critical);
        return null;
      }
      return { type: "thinking", thinking: block.text, signature: block.signature };
    case "redacted_thinking":
      if (!fromThisProvider(message)) {
        dropBlock(message, block, "redacted thinking from another provider cannot be sent back", critical);
        return null;
      }
      return { type: "redacted_thinking", data: block.data };
    default:
      if (typeof block.type === "string" && block.type.startsWith(PROVIDER + ":")) {
        const { type, ...rest } = block;
        return { ...rest, type: type.slice(PROVIDER.length + 1) };
      }
      dropBlock(message, block, `no ${block.type} block on the Messages API`, critical);
      return null;
  }
}

function renderToolResult(message, block, critical) {
  const content = [];
  for (const inner of block.content || []) {
    if (inner.type === "text") content.push({ type: "text", text: inner.text });
    else if (inner.type === "image") { const image = renderImage(message, inner, critical); if (image) content.push(image); }
    else dropBlock(message, inner, `no ${inner.type} block inside a tool result`, critical);
  }
  const out = { type: "tool_result", tool_use_id: providerFor(message.session_id, block.tool_use_id), content };
  if (block.is_error) out.is_error = true;
  return out;
}

function renderMessages(messages, criticalKey) {
  const system = [];
  const wire = [];
  for (const message of messages) {
    if (message.role === "system") {
      for (const [index, block] of message.content.entries()) {
        if (block.type === "text") system.push({ type: "text", text: block.text, ...rawBlock(message, index) });
        else dropBlock(message, block, "a system prompt carries text only", isCritical(message, index, criticalKey));
      }
      continue;
    }
    const role = message.role === "assistant" ? "assistant" : "user";
    const content = [];
    for (const [index, block] of message.content.entries()) {
      const critical = isCritical(message, index, criticalKey);
      const rendered = block.type === "tool_result"
        ? renderToolResult(message, block, critical)
        : renderBlock(message, block, critical);
      if (rendered) content.push({ ...rendered, ...rawBlock(message, index) });
    }
    const last = wire[wire.length - 1];
    if (message.role === "tool" && last && last.role === "user" && last.fromTool) {
      last.content.push(...content);
      continue;
    }
    wire.push({ role, content, fromTool: message.role === "tool" });
  }
  return { system, messages: wire.map(({ role, content }) => ({ role, content })) };
}

// what read_request kept of a block that canonical form cannot hold (our provider_raw only)
function rawBlock(message, index) {
  const raw = message.metadata && message.metadata.provider_raw && message.metadata.provider_raw[NAME];
  return (raw && raw.blocks && raw.blocks[String(index)]) || {};
}

// canonical §6.3 ids are `<provider>:<model_name>`; the wire takes the name (our prefix only)
function wireModel(model) {
  return model.startsWith(PROVIDER + ":") && model.length > PROVIDER.length + 1 ? model.slice(PROVIDER.length + 1) : model;
}

function isCritical(message, index, criticalKey) {
  const marked = message.metadata && message.metadata[criticalKey];
  return marked === true || (Array.isArray(marked) && marked.includes(index));
}

function render({ messages, tools, options }) {
  const criticalKey = options.critical_key || "critical";
  const { system, messages: wire } = renderMessages(messages, criticalKey);
  const body = { model: wireModel(options.model), max_tokens: options.max_output_tokens ?? 4096, messages: wire };
  const ownRaw = (options.provider_raw || {})[NAME] || {};
  if (system.length) body.system = ownRaw.system_as_blocks ? system : system.map((block) => block.text).join("\n\n");
  const wireTools = tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.input_schema }));
  wireTools.push(...(options.provider_tools || []));
  if (wireTools.length) body.tools = wireTools;
  if (options.temperature !== null && options.temperature !== undefined) body.temperature = options.temperature;
  if (options.stop_sequences && options.stop_sequences.length) body.stop_sequences = options.stop_sequences;
  if (options.stream) body.stream = true;
  if (options.output_schema) {
    warn(`${NAME}: dropped option output_schema: no structured output here`, {
      event: "option_dropped", adapter: NAME, option: "output_schema", reason: "no structured output here",
    });
  }
  Object.assign(body, options.extra || {});
  return {
    method: "POST", path: "/v1/messages",
    headers: { "anthropic-version": "2023-06-01", "content-type": "application/json" }, body,
  };
}

// ---------------------------------------------------------------- parse (wire -> canonical)

const STOP_REASONS = {
  end_turn: "end_turn", max_tokens: "max_tokens", stop_sequence: "stop_sequence", tool_use: "tool_use",
  pause_turn: "end_turn", refusal: "error", model_context_window_exceeded: "max_tokens",
};

function stopReason(raw) { return STOP_REASONS[raw] ?? "end_turn"; }

function usageOf(usage, context) {
  usage = usage || {};
  return {
    input_tokens: usage.input_tokens ?? 0,
    output_tokens: usage.output_tokens ?? 0,
    cached_input_tokens: usage.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
    cost_usd: "0",
    pricing_version: context.pricing_version ?? "unpriced",
    latency_ms: context.latency_ms ?? 0,
  };
}

function parseBlock(sessionId, block) {
  switch (block.type) {
    case "text": return { type: "text", text: block.text };
    case "thinking": return { type: "thinking", text: block.thinking, signature: block.signature ?? null };
    case "redacted_thinking": return { type: "redacted_thinking", data: block.data };
    case "tool_use":
      return { type: "tool_use", id: canonicalFor(sessionId, block.id), name: block.name, input: block.input ?? {} };
    default: {
      const { type, ...rest } = block;
      return { ...rest, type: `${PROVIDER}:${type}` };
    }
  }
}

function errorClassFor(status, type, message) {
  if (type === "overloaded_error" || type === "rate_limit_error" || status === 429) return "rate_limit";
  if (type === "authentication_error" || type === "permission_error" || status === 401 || status === 403) return "auth";
  if (/context|tokens exceeds|too long/i.test(message || "") && (type === "invalid_request_error" || status === 413)) {
    return "context_overflow";
  }
  if (status === 413) return "context_overflow";
  if (type === "api_error" || (status >= 500)) return "server_error";
  if (status === 408) return "network";
  if (type === "invalid_request_error" || type === "not_found_error" || (status >= 400 && status < 500)) {
    return "invalid_request";
  }
  return "other";
}

function headerValue(headers, name) {
  for (const [key, value] of Object.entries(headers || {})) if (key.toLowerCase() === name) return value;
  return undefined;
}

function raiseForError(status, headers, body, context = {}) {
  const error = (body && typeof body === "object" && body.error) || {};
  const message = error.message || `HTTP ${status}`;
  const errorClass = errorClassFor(status, error.type, message);
  const retryAfter = Number(headerValue(headers, "retry-after"));
  throw adapterError(errorClass, message, {
    provider_status: status,
    request_id: headerValue(headers, "request-id") ?? (body && body.request_id) ?? context.request_id ?? null,
    retryable: ["rate_limit", "server_error", "network"].includes(errorClass),
    retry_after_seconds: Number.isFinite(retryAfter) ? retryAfter : null,
  });
}

function decodeBody(response) {
  if (response.body_base64 !== undefined) {
    const text = Buffer.from(response.body_base64, "base64").toString("utf8");
    try { return JSON.parse(text); } catch { return text; }
  }
  return response.body;
}

function assistantMetadata(model) {
  return { model, provider: PROVIDER, routing: { mode: "default", chosen_model: model, reason: "no routing engine" } };
}

function parse({ response, context }) {
  const status = response.status ?? 200;
  const body = decodeBody(response);
  if (status >= 400 || (body && body.type === "error")) raiseForError(status, response.headers, body, context);
  if (!body || typeof body !== "object" || !Array.isArray(body.content)) {
    throw new ProtocolError({ kind: "wire_format", message: "a Messages response has a content array" });
  }
  const message = {
    id: context.message_id ?? ulid(),
    session_id: context.session_id,
    role: "assistant",
    content: body.content.length ? body.content.map((block) => parseBlock(context.session_id, block)) : [{ type: "text", text: "" }],
    metadata: {
      ...assistantMetadata(body.model ? `${PROVIDER}:${body.model}` : (context.model ?? `${PROVIDER}:unknown`)),
      usage: body.usage ? usageOf(body.usage, context) : null,
      status: stopReason(body.stop_reason) === "error" ? "error" : "complete",
      provider_raw: { [NAME]: { stop_reason: body.stop_reason ?? null, id: body.id ?? null } },
    },
    created_at: context.created_at ?? nowTimestamp(),
    schema_version: 1,
  };
  return { message };
}

// ---------------------------------------------------------------- streams

const streams = new Map();

function openStream({ stream_id: streamId, context }) {
  streams.set(streamId, {
    context, decoder: new TextDecoder("utf-8"), buffer: "", events: [], over: false,
    blocks: [], toolIds: new Map(), usage: {}, stopReason: null, model: context.model, eventIndex: 0,
  });
  return { events: [] };
}

function streamFor(streamId) {
  const stream = streams.get(streamId);
  if (!stream) throw adapterError("invalid_request", `no open stream ${streamId}`);
  return stream;
}

function messageId(stream) { return stream.context.message_id ?? (stream.context.message_id = ulid()); }

function toolEnd(stream, index) {
  const block = stream.blocks[index];
  let input = {};
  if (block.partial) {
    try { input = JSON.parse(block.partial); } catch { input = {}; }
  }
  block.input = input;
  return { type: "tool_use_end", message_id: messageId(stream), content_block_index: index, tool_use_id: block.id, final_input: input };
}

function finalContent(blocks) {
  return blocks.filter(Boolean).map((block) => {
    switch (block.type) {
      case "text": return { type: "text", text: block.text };
      case "thinking": return { type: "thinking", text: block.text, signature: block.signature ?? null };
      case "redacted_thinking": return { type: "redacted_thinking", data: block.data };
      case "tool_use": {
        let input = block.input;
        if (input === undefined) { try { input = JSON.parse(block.partial || "{}"); } catch { input = {}; } }
        return { type: "tool_use", id: block.id, name: block.name, input };
      }
      default: return block.raw;
    }
  });
}

function complete(stream, reason) {
  stream.over = true;
  return {
    type: "message_complete", message_id: messageId(stream), stop_reason: reason,
    final_content: finalContent(stream.blocks),
    usage: {
      input_tokens: stream.usage.input_tokens ?? 0, output_tokens: stream.usage.output_tokens ?? 0,
      cached_input_tokens: stream.usage.cache_read_input_tokens ?? 0,
      cache_creation_input_tokens: stream.usage.cache_creation_input_tokens ?? 0,
    },
  };
}

function onBlockStart(stream, data, out) {
  const index = data.index;
  const block = data.content_block || {};
  const id = messageId(stream);
  if (block.type === "text") {
    stream.blocks[index] = { type: "text", text: block.text || "" };
    if (block.text) out.push({ type: "text_delta", message_id: id, content_block_index: index, text: block.text });
  } else if (block.type === "thinking") {
    stream.blocks[index] = { type: "thinking", text: block.thinking || "", signature: block.signature || null };
    if (block.thinking) out.push({ type: "thinking_delta", message_id: id, content_block_index: index, text: block.thinking, signature: null });
  } else if (block.type === "redacted_thinking") {
    stream.blocks[index] = { type: "redacted_thinking", data: block.data };
  } else if (block.type === "tool_use") {
    const canonical = canonicalFor(stream.context.session_id, block.id);
    stream.blocks[index] = { type: "tool_use", id: canonical, name: block.name, partial: "" };
    out.push({ type: "tool_use_start", message_id: id, content_block_index: index, tool_use_id: canonical, tool_name: block.name });
  } else {
    const { type, ...rest } = block;
    stream.blocks[index] = { type: "other", raw: { ...rest, type: `${PROVIDER}:${type}` } };
  }
}

function onBlockDelta(stream, data, out) {
  const index = data.index;
  const block = stream.blocks[index];
  const delta = data.delta || {};
  const id = messageId(stream);
  if (!block) throw wireFormat(stream, `content_block_delta for block ${index} that never started`);
  if (delta.type === "text_delta") {
    block.text += delta.text;
    out.push({ type: "text_delta", message_id: id, content_block_index: index, text: delta.text });
  } else if (delta.type === "thinking_delta") {
    block.text += delta.thinking;
    out.push({ type: "thinking_delta", message_id: id, content_block_index: index, text: delta.thinking, signature: null });
  } else if (delta.type === "signature_delta") {
    block.signature = (block.signature || "") + delta.signature;
  } else if (delta.type === "input_json_delta" && block.type !== "tool_use") {
    // a server tool's input (server_tool_use): no canonical tool call, kept whole at its stop
    block.partial = (block.partial || "") + delta.partial_json;
  } else if (delta.type === "input_json_delta") {
    block.partial += delta.partial_json;
    out.push({ type: "tool_use_input_delta", message_id: id, content_block_index: index, tool_use_id: block.id, partial_json: delta.partial_json });
  }
}

function onBlockStop(stream, data, out) {
  const index = data.index;
  const block = stream.blocks[index];
  if (!block) return;
  if (block.type === "tool_use") out.push(toolEnd(stream, index));
  else if (block.type === "other" && block.partial) {
    try { block.raw.input = JSON.parse(block.partial); } catch { /* kept as it started */ }
  }
  else if (block.type === "thinking") {
    out.push({ type: "thinking_delta", message_id: messageId(stream), content_block_index: index, text: "", signature: block.signature ?? null });
  }
}

function wireFormat(stream, message) {
  return new ProtocolError({ kind: "wire_format", message, event: stream.eventIndex });
}

function onEvent(stream, name, data, out) {
  const type = data.type || name;
  switch (type) {
    case "message_start": {
      const message = data.message || {};
      Object.assign(stream.usage, message.usage || {});
      stream.model = message.model ?? stream.model;
      out.push({ type: "message_start", message_id: messageId(stream), role: "assistant", model: `${PROVIDER}:${stream.model}` });
      break;
    }
    case "content_block_start": onBlockStart(stream, data, out); break;
    case "content_block_delta": onBlockDelta(stream, data, out); break;
    case "content_block_stop": onBlockStop(stream, data, out); break;
    case "message_delta":
      if (data.delta && data.delta.stop_reason) stream.stopReason = data.delta.stop_reason;
      Object.assign(stream.usage, data.usage || {});
      break;
    case "message_stop": out.push(complete(stream, stopReason(stream.stopReason))); break;
    case "error": {
      const error = data.error || {};
      out.push(complete(stream, "error"));
      const errorClass = errorClassFor(null, error.type, error.message);
      throw adapterError(errorClass, error.message || "stream error", {
        retryable: ["rate_limit", "server_error", "network"].includes(errorClass), events: undefined,
      });
    }
    default: break; // ping and events this adapter does not know
  }
}

function drain(stream, out, final) {
  const text = stream.buffer.replace(/\r\n/g, "\n");
  const frames = text.split("\n\n");
  stream.buffer = final ? "" : frames.pop();
  for (const frame of frames) {
    if (!frame.trim()) continue;
    let name = null;
    const data = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") name = value;
      else if (field === "data") data.push(value);
    }
    if (!data.length) continue;
    let parsed;
    try { parsed = JSON.parse(data.join("\n")); } catch {
      throw wireFormat(stream, `event ${stream.eventIndex} is not JSON`);
    }
    if (!stream.over) onEvent(stream, name, parsed, out);
    stream.eventIndex += 1;
  }
}

function withEvents(stream, out, fn) {
  try {
    fn();
  } catch (error) {
    stream.over = true;
    stream.closed = true;
    if (error instanceof ProtocolError) {
      if (!out.some((event) => event.type === "message_complete")) out.push(complete(stream, "error"));
      stream.events.push(...out);
      const { events: _ignored, ...rest } = error.error;
      throw new ProtocolError({ ...rest, events: out });
    }
    throw error;
  }
  stream.events.push(...out);
  return { events: out };
}

function feedStream({ stream_id: streamId, data }) {
  const stream = streamFor(streamId);
  const out = [];
  if (stream.over) return { events: [] };
  return withEvents(stream, out, () => {
    stream.buffer += stream.decoder.decode(Buffer.from(data, "base64"), { stream: true });
    drain(stream, out, false);
  });
}

function closeStream({ stream_id: streamId, abandon }) {
  const stream = streamFor(streamId);
  if (abandon) { streams.delete(streamId); return { events: [] }; }
  const out = [];
  const result = withEvents(stream, out, () => {
    if (stream.over) return;
    stream.buffer += stream.decoder.decode();
    drain(stream, out, true);
    if (!stream.over) {
      throw wireFormat(stream, "the stream ended before message_stop");
    }
  });
  stream.over = true;
  stream.closed = true;
  return result;
}

// ---------------------------------------------------------------- cancel (contract §5.3)

function cancel({ request_id: requestId, delivered }) {
  for (const [streamId, stream] of streams) {
    if (stream.context.request_id !== requestId) continue;
    if (stream.closed) return { in_flight: false, events: [] };
    const replay = { ...stream, blocks: [], over: false };
    const open = new Map();
    for (const event of stream.events.slice(0, delivered)) replayEvent(replay, event, open);
    const events = [];
    for (const index of open.keys()) events.push(toolEnd(replay, index));
    events.push(complete(replay, "cancelled"));
    stream.over = true;
    stream.closed = true;
    return { in_flight: true, events };
  }
  return { in_flight: false, events: [] };
}

function replayEvent(replay, event, open) {
  const index = event.content_block_index;
  switch (event.type) {
    case "text_delta":
      replay.blocks[index] = replay.blocks[index] || { type: "text", text: "" };
      replay.blocks[index].text += event.text;
      break;
    case "thinking_delta":
      replay.blocks[index] = replay.blocks[index] || { type: "thinking", text: "", signature: null };
      replay.blocks[index].text += event.text;
      if (event.signature) replay.blocks[index].signature = event.signature;
      break;
    case "tool_use_start":
      replay.blocks[index] = { type: "tool_use", id: event.tool_use_id, name: event.tool_name, partial: "" };
      open.set(index, true);
      break;
    case "tool_use_input_delta": replay.blocks[index].partial += event.partial_json; break;
    case "tool_use_end": replay.blocks[index].input = event.final_input; open.delete(index); break;
    default: break;
  }
}

// ---------------------------------------------------------------- read_request (wire -> canonical)

function readBlock(sessionId, block) {
  switch (block.type) {
    case "text": return { type: "text", text: block.text };
    case "image": {
      const source = block.source || {};
      if (source.type === "url") return { type: "image", source: { kind: "url", data: source.url }, media_type: guessMedia(source.url) };
      return { type: "image", source: { kind: "base64", data: source.data }, media_type: source.media_type };
    }
    case "tool_use": return { type: "tool_use", id: canonicalFor(sessionId, block.id), name: block.name, input: block.input ?? {} };
    case "thinking": return { type: "thinking", text: block.thinking, signature: block.signature ?? null };
    case "redacted_thinking": return { type: "redacted_thinking", data: block.data };
    default: { const { type, ...rest } = block; return { ...rest, type: `${PROVIDER}:${type}` }; }
  }
}

function guessMedia(url) {
  const match = /\.(png|gif|webp|jpe?g)(?:$|\?)/i.exec(url || "");
  if (!match) return "image/jpeg";
  const ext = match[1].toLowerCase();
  return ext === "jpg" || ext === "jpeg" ? "image/jpeg" : `image/${ext}`;
}

function newMessage(sessionId, role, content, extra = {}) {
  const metadata = { status: "complete", ...extra };
  return { id: ulid(), session_id: sessionId, role, content, metadata, created_at: nowTimestamp(), schema_version: 1 };
}

function asBlocks(content) {
  return typeof content === "string" ? [{ type: "text", text: content }] : (content || []);
}

const BLOCK_FIELDS = {
  text: ["type", "text"], image: ["type", "source"], tool_use: ["type", "id", "name", "input"],
  thinking: ["type", "thinking", "signature"], redacted_thinking: ["type", "data"],
  tool_result: ["type", "tool_use_id", "content", "is_error"],
};

function knownFields(block) { return BLOCK_FIELDS[block.type] || Object.keys(block); }

function blockExtras(blocks) {
  const extras = {};
  blocks.forEach((block, index) => {
    const known = knownFields(block);
    const rest = Object.fromEntries(Object.entries(block).filter(([key]) => !known.includes(key)));
    if (Object.keys(rest).length) extras[String(index)] = rest;
  });
  return Object.keys(extras).length ? { provider_raw: { [NAME]: { blocks: extras } } } : {};
}

function readRequest({ body, session_id: given }) {
  const sessionId = given ?? ulid();
  const messages = [];
  const requestRaw = {};
  if (typeof body.system === "string") {
    messages.push(newMessage(sessionId, "system", [{ type: "text", text: body.system }]));
  } else if (Array.isArray(body.system)) {
    requestRaw.system_as_blocks = true;
    messages.push(newMessage(sessionId, "system", body.system.map((block) => ({ type: "text", text: block.text })), blockExtras(body.system)));
  }
  const model = `${PROVIDER}:${body.model}`;
  for (const wire of body.messages || []) {
    const blocks = asBlocks(wire.content);
    if (wire.role === "user") {
      const others = blocks.filter((block) => block.type !== "tool_result");
      for (const block of blocks.filter((b) => b.type === "tool_result")) {
        const content = asBlocks(block.content).map((inner) => readBlock(sessionId, inner));
        const toolUseId = canonicalFor(sessionId, block.tool_use_id);
        const result = { type: "tool_result", tool_use_id: toolUseId, content, is_error: block.is_error === true };
        const raw = blockExtras([block]);
        messages.push(newMessage(sessionId, "tool", [result], { parent_tool_use_id: toolUseId, ...raw }));
      }
      if (others.length) {
        messages.push(newMessage(sessionId, "user", others.map((block) => readBlock(sessionId, block)), blockExtras(others)));
      }
    } else {
      const content = blocks.map((block) => readBlock(sessionId, block));
      messages.push(newMessage(sessionId, "assistant", content, { ...assistantMetadata(model), ...blockExtras(blocks) }));
    }
  }
  const known = new Set(["model", "max_tokens", "messages", "system", "tools", "temperature", "stop_sequences", "stream"]);
  const extra = Object.fromEntries(Object.entries(body).filter(([key]) => !known.has(key)));
  const tools = [];
  const providerTools = [];
  for (const tool of body.tools || []) {
    if (tool.input_schema) tools.push({ name: tool.name, description: tool.description ?? "", input_schema: tool.input_schema, side_effects: "none" });
    else providerTools.push(tool);
  }
  const options = {
    model, max_output_tokens: body.max_tokens ?? null, temperature: body.temperature ?? null,
    stop_sequences: body.stop_sequences ?? [], stream: body.stream === true, output_schema: null,
    extra, provider_tools: providerTools,
    provider_raw: Object.keys(requestRaw).length ? { [NAME]: requestRaw } : {},
  };
  return { messages, tools, options };
}

// ---------------------------------------------------------------- estimate

function estimate({ messages, tools }) {
  return { tokens: Math.ceil(JSON.stringify([messages, tools]).length / 4) };
}

// ---------------------------------------------------------------- hello, the loop

const CAPABILITIES = {
  supports_thinking: true, supports_images: true, supports_tools: true, supports_system_prompt: true,
  supports_structured_output: false, supports_streaming: true, supports_streaming_tool_calls: true,
  supports_parallel_tool_calls: true, supports_prompt_caching: false, supports_system_messages_in_list: false,
  max_context_tokens: 200000, max_output_tokens: 64000,
  accepted_image_media_types: ["image/jpeg", "image/png", "image/gif", "image/webp"],
};

function hello({ protocol_versions: versions }) {
  if (!versions.includes(1)) throw adapterError("invalid_request", `this child speaks protocol 1, offered ${versions}`);
  return {
    protocol_version: 1,
    adapter: {
      name: NAME, provider: PROVIDER, wire_api: "anthropic-messages",
      language: "javascript", language_version: `node ${process.versions.node}`,
      capabilities: CAPABILITIES, provider_tool_id: "^toolu_[A-Za-z0-9_]+$",
      operations: ["render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"],
      cassette_folders: ["anthropic"], tool_errors_in_band: null, gaps: [],
    },
  };
}

const HANDLERS = {
  hello, render, parse, stream_open: openStream, stream_feed: feedStream, stream_close: closeStream,
  cancel, read_request: readRequest, estimate, tool_id_map: toolIdMap, shutdown: () => ({}),
};

function answer(request) {
  logs = [];
  const handler = HANDLERS[request.op];
  try {
    if (!handler) throw new ProtocolError({ kind: "not_implemented", message: `no operation ${request.op}` });
    const result = handler(request.params || {});
    return { id: request.id, ok: true, result, logs };
  } catch (error) {
    if (error instanceof ProtocolError) return { id: request.id, ok: false, error: error.error, logs };
    process.stderr.write(`${error.stack}\n`);
    return {
      id: request.id, ok: false, logs,
      error: { kind: "crash", message: `${error.name}: ${error.message}`, type: error.name, traceback: String(error.stack) },
    };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  if (!line.trim()) return;
  const request = JSON.parse(line);
  process.stdout.write(JSON.stringify(answer(request)) + "\n");
  if (request.op === "shutdown") { lines.close(); process.exit(0); }
});
lines.on("close", () => process.exit(0));
