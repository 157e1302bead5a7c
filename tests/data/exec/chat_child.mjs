#!/usr/bin/env node
// An OpenAI Chat Completions adapter speaking turnspec's exec protocol (version 1), written by an
// outside author from docs/exec-protocol.md, schemas/exec/v1/, `turnspec wire show
// openai-chat-completions` and OpenAI's Chat Completions documentation only. Plain Node 20, no
// npm dependencies (node: built-ins only). turnspec keeps it as test data
// (tests/test_exec_outside_author.py).
//
// Wire format: POST /v1/chat/completions. A reply is a `chat.completion` object whose
// choices[0].message carries `content`, `refusal` and `tool_calls` (function.arguments is a JSON
// string); a stream is SSE `data:` lines of `chat.completion.chunk` objects ending in
// `data: [DONE]`, tool calls arriving as fragments keyed by `tool_calls[].index` and usage in a
// last chunk with empty `choices` when `stream_options.include_usage` is true.
import { createHash } from "node:crypto";
import { createInterface } from "node:readline";

const NAME = "outside-openai-chat";
const PROVIDER = "openai";
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

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

function randomCallId() {
  let out = "call_";
  for (let i = 0; i < 24; i++) out += ALNUM[Math.floor(Math.random() * ALNUM.length)];
  return out;
}

// a call the API sent without an id: derived from the reply (its id, created, model) and the
// call's position and name, so the same bytes parse to the same call and a later reply is new
function mintedCallId(reply, position, name) {
  const key = JSON.stringify([reply.id ?? null, reply.created ?? null, reply.model ?? null, position, name ?? null]);
  const digest = createHash("sha256").update(key).digest();
  let out = "call_";
  for (let i = 0; i < 24; i++) out += ALNUM[digest[i] % ALNUM.length];
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
  if (provider === undefined) { provider = randomCallId(); bind(map, canonical, provider); }
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

const CAPABILITIES = {
  supports_thinking: false, supports_images: true, supports_tools: true, supports_system_prompt: true,
  supports_structured_output: true, supports_streaming: true, supports_streaming_tool_calls: true,
  supports_parallel_tool_calls: true, supports_prompt_caching: false, supports_system_messages_in_list: true,
  max_context_tokens: 128000, max_output_tokens: 16384,
  // OpenAI's vision guide: PNG, JPEG, WEBP and non-animated GIF
  accepted_image_media_types: ["image/png", "image/jpeg", "image/webp", "image/gif"],
};

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

function dropOption(option, reason) {
  warn(`${NAME}: dropped option ${option}: ${reason}`, { event: "option_dropped", adapter: NAME, option, reason });
}

function isCritical(message, index, criticalKey) {
  const marked = message.metadata && message.metadata[criticalKey];
  return marked === true || (Array.isArray(marked) && marked.includes(index));
}

function ownRaw(message) {
  const raw = message.metadata && message.metadata.provider_raw && message.metadata.provider_raw[NAME];
  return raw || {};
}

// what read_request kept of a content part that canonical form cannot hold (`detail`, ...)
function rawPart(message, index) {
  const parts = ownRaw(message).parts;
  return (parts && parts[String(index)]) || {};
}

function renderImage(message, block, critical) {
  const source = block.source || {};
  const media = String(block.media_type || "").toLowerCase();
  if (!CAPABILITIES.accepted_image_media_types.includes(media)) {
    dropBlock(message, block, `media type ${block.media_type} is not one Chat Completions takes`, critical);
    return null;
  }
  if (source.kind === "base64") return { type: "image_url", image_url: { url: `data:${block.media_type};base64,${source.data}` } };
  if (source.kind === "url") return { type: "image_url", image_url: { url: source.data } };
  dropBlock(message, block, `an image by ${source.kind} cannot travel on Chat Completions`, critical);
  return null;
}

function withPartRaw(part, extra) {
  if (!Object.keys(extra).length) return part;
  const out = { ...part, ...extra };
  if (part.image_url && extra.image_url) out.image_url = { ...part.image_url, ...extra.image_url };
  return out;
}

// a user or system message: text and image parts (system: text only)
function renderParts(message, criticalKey, imagesAllowed) {
  const parts = [];
  for (const [index, block] of message.content.entries()) {
    const critical = isCritical(message, index, criticalKey);
    let part = null;
    if (block.type === "text") part = { type: "text", text: block.text };
    else if (block.type === "image" && imagesAllowed) part = renderImage(message, block, critical);
    else if (typeof block.type === "string" && block.type.startsWith(PROVIDER + ":") && imagesAllowed) {
      const { type, ...rest } = block;
      part = { ...rest, type: type.slice(PROVIDER.length + 1) };
    } else {
      dropBlock(message, block, `no ${block.type} part in a ${message.role} message of Chat Completions`, critical);
    }
    if (part) parts.push(withPartRaw(part, rawPart(message, index)));
  }
  return parts;
}

// one text part with nothing else is sent as a string, as OpenAI's examples do
function contentOf(parts, raw) {
  if (raw.content_as_parts) return parts;
  if (parts.length === 1 && parts[0].type === "text" && Object.keys(parts[0]).length === 2) return parts[0].text;
  if (parts.length === 0) return "";
  return parts;
}

function renderAssistant(message, criticalKey, legacy) {
  const raw = ownRaw(message);
  const parts = [];
  const toolCalls = [];
  let refusal = null;
  for (const [index, block] of message.content.entries()) {
    const critical = isCritical(message, index, criticalKey);
    if (block.type === "text") {
      if (raw.refusal_index === index) refusal = block.text;
      else parts.push(withPartRaw({ type: "text", text: block.text }, rawPart(message, index)));
    } else if (block.type === "tool_use") {
      const id = providerFor(message.session_id, block.id);
      const input = block.input ?? {};
      if ((raw.custom_calls || []).includes(id)) {
        // a custom tool's input is free text, held canonically as {input: "<text>"}
        const text = typeof input.input === "string" && Object.keys(input).length === 1 ? input.input : JSON.stringify(input);
        toolCalls.push({ id, type: "custom", custom: { name: block.name, input: text } });
      } else {
        toolCalls.push({ id, type: "function", function: { name: block.name, arguments: JSON.stringify(input) } });
      }
    } else if (block.type === "thinking" || block.type === "redacted_thinking") {
      dropBlock(message, block, "Chat Completions carries no reasoning back in a request", critical);
    } else {
      dropBlock(message, block, `no ${block.type} block in an assistant message of Chat Completions`, critical);
    }
  }
  const out = { role: "assistant" };
  // an empty reply text next to tool calls is no content at all (the docs: required unless tool_calls)
  const texts = parts.filter((part) => !(part.type === "text" && part.text === "" && Object.keys(part).length === 2));
  if (raw.content_null) out.content = null;
  else if (raw.content_as_parts) out.content = parts;
  else if (texts.length || !toolCalls.length) {
    out.content = texts.length === 1 && Object.keys(texts[0]).length === 2 ? texts[0].text
      : texts.length === 0 ? "" : texts;
  }
  if (refusal !== null) {
    if (raw.refusal_as_part) {
      out.content = [...(Array.isArray(out.content) ? out.content : []), { type: "refusal", refusal }];
    } else {
      out.refusal = refusal;
      if (out.content === "" && raw.content_null !== false) out.content = null;
    }
  }
  if (toolCalls.length && raw.function_call && toolCalls.length === 1 && toolCalls[0].type === "function") {
    // the deprecated form the history was written in (the arguments as they were written)
    const fn = toolCalls[0].function;
    const written = (raw.arguments || {})[toolCalls[0].id];
    if (typeof written === "string" && JSON.stringify(parseArguments(written)) === fn.arguments) fn.arguments = written;
    out.function_call = fn;
    const block = message.content.find((b) => b.type === "tool_use");
    legacy.set(block.id, block.name);
  } else if (toolCalls.length) {
    out.tool_calls = toolCalls;
  }
  Object.assign(out, raw.fields || {});
  return out;
}

function renderToolMessage(message, criticalKey, wire, legacy) {
  const raw = ownRaw(message);
  for (const [index, block] of message.content.entries()) {
    const critical = isCritical(message, index, criticalKey);
    if (block.type !== "tool_result") {
      dropBlock(message, block, "a tool message of Chat Completions carries tool results only", critical);
      continue;
    }
    const parts = [];
    for (const inner of block.content || []) {
      if (inner.type === "text") parts.push({ type: "text", text: inner.text });
      else dropBlock(message, inner, `no ${inner.type} part in a tool message of Chat Completions (text only)`, critical);
    }
    // no error flag on the wire: the error travels in band, as the content's first words
    if (block.is_error) {
      if (parts.length && parts[0].type === "text") parts[0] = { type: "text", text: `Error: ${parts[0].text}` };
      else parts.unshift({ type: "text", text: "Error:" });
    }
    const out = legacy.has(block.tool_use_id)
      ? { role: "function", name: legacy.get(block.tool_use_id), content: contentOf(parts, raw) }
      : { role: "tool", tool_call_id: providerFor(message.session_id, block.tool_use_id), content: contentOf(parts, raw) };
    Object.assign(out, raw.fields || {});
    wire.push(out);
  }
}

function renderMessages(messages, criticalKey) {
  const wire = [];
  const legacy = new Map(); // canonical id -> name of a call sent in the deprecated function_call form
  for (const message of messages) {
    const raw = ownRaw(message);
    if (message.role === "system") {
      const out = { role: raw.role === "developer" ? "developer" : "system", content: contentOf(renderParts(message, criticalKey, false), raw) };
      wire.push(Object.assign(out, raw.fields || {}));
    } else if (message.role === "user") {
      const out = { role: "user", content: contentOf(renderParts(message, criticalKey, true), raw) };
      wire.push(Object.assign(out, raw.fields || {}));
    } else if (message.role === "assistant") {
      wire.push(renderAssistant(message, criticalKey, legacy));
    } else if (message.role === "tool") {
      renderToolMessage(message, criticalKey, wire, legacy);
    }
  }
  return wire;
}

// canonical §6.3 ids are `<provider>:<model_name>`; the wire takes the name (our prefix only)
function wireModel(model) {
  return model.startsWith(PROVIDER + ":") && model.length > PROVIDER.length + 1 ? model.slice(PROVIDER.length + 1) : model;
}

function render({ messages, tools, options }) {
  const criticalKey = options.critical_key || "critical";
  const raw = (options.provider_raw || {})[NAME] || {};
  const body = { model: wireModel(options.model), messages: renderMessages(messages, criticalKey) };
  if (options.max_output_tokens !== null && options.max_output_tokens !== undefined) {
    body[raw.max_tokens_field || "max_completion_tokens"] = options.max_output_tokens;
  }
  const toolExtras = raw.tools || {};
  const wireTools = (tools || []).map((tool) => {
    const fn = { name: tool.name };
    if (tool.description) fn.description = tool.description;
    if (!(toolExtras[tool.name] && toolExtras[tool.name].no_parameters)) fn.parameters = tool.input_schema;
    const { no_parameters: _skip, ...fields } = toolExtras[tool.name] || {};
    return { type: "function", function: { ...fn, ...fields } };
  });
  wireTools.push(...(options.provider_tools || []));
  if (wireTools.length) body.tools = wireTools;
  if (options.temperature !== null && options.temperature !== undefined) body.temperature = options.temperature;
  if (options.stop_sequences && options.stop_sequences.length) {
    body.stop = raw.stop_as_string && options.stop_sequences.length === 1 ? options.stop_sequences[0] : options.stop_sequences;
  }
  if (options.output_schema) {
    const format = raw.json_schema || { name: "output", strict: true };
    body.response_format = { type: "json_schema", json_schema: { ...format, schema: options.output_schema } };
  }
  const { stream_options: streamOptions, ...extra } = options.extra || {};
  if (options.stream) {
    body.stream = true;
    // else the stream reports no usage; other stream options the caller asked for go along
    body.stream_options = { ...(streamOptions || {}), include_usage: true };
  } else if (streamOptions !== undefined) {
    body.stream_options = streamOptions;
  }
  Object.assign(body, extra);
  return { method: "POST", path: "/v1/chat/completions", headers: { "content-type": "application/json" }, body };
}

// ---------------------------------------------------------------- parse (wire -> canonical)

const STOP_REASONS = {
  stop: "end_turn", length: "max_tokens", tool_calls: "tool_use", function_call: "tool_use",
  // the reply's text is what the provider sent (wire show: end_turn, error also accepted)
  content_filter: "end_turn",
};

function stopReason(raw) { return STOP_REASONS[raw] ?? "end_turn"; }

// prompt_tokens includes the cached ones: the four buckets are disjoint (contract §7.2)
function usageOf(usage, context) {
  if (!usage) return null;
  const cached = (usage.prompt_tokens_details && usage.prompt_tokens_details.cached_tokens) || 0;
  return {
    input_tokens: Math.max((usage.prompt_tokens ?? 0) - cached, 0),
    output_tokens: usage.completion_tokens ?? 0,
    cached_input_tokens: cached,
    cache_creation_input_tokens: 0,
    cost_usd: "0",
    pricing_version: "unpriced",
    latency_ms: context.latency_ms ?? 0,
  };
}

function headerValue(headers, name) {
  for (const [key, value] of Object.entries(headers || {})) if (key.toLowerCase() === name) return value;
  return undefined;
}

const CODE_CLASSES = { rate_limit_exceeded: "rate_limit", context_length_exceeded: "context_overflow", invalid_api_key: "auth" };
const TYPE_CLASSES = { server_error: "server_error" };

function statusClass(status) {
  if (status === 429) return "rate_limit";
  if (status === 401 || status === 403) return "auth";
  if (status === 413) return "context_overflow";
  if (status === 408) return "network";
  if (status >= 500) return "server_error";
  if (status >= 400) return "invalid_request";
  return "other";
}

function errorClassFor(status, error) {
  return CODE_CLASSES[error.code] ?? TYPE_CLASSES[error.type] ?? (status ? statusClass(status) : "other");
}

function retryAfter(headers) {
  const ms = Number(headerValue(headers, "retry-after-ms"));
  if (headerValue(headers, "retry-after-ms") !== undefined && Number.isFinite(ms)) return ms / 1000;
  const s = Number(headerValue(headers, "retry-after"));
  if (headerValue(headers, "retry-after") !== undefined && Number.isFinite(s)) return s;
  return null;
}

function errorFrom(status, headers, body, context = {}) {
  const error = (body && typeof body === "object" && body.error && typeof body.error === "object") ? body.error : {};
  const message = error.message || (typeof body === "string" && body) || `HTTP ${status}`;
  const errorClass = errorClassFor(status, error);
  return adapterError(errorClass, message, {
    provider_status: status ?? null,
    request_id: headerValue(headers, "x-request-id") ?? context.request_id ?? null,
    retryable: ["rate_limit", "server_error", "network"].includes(errorClass),
    retry_after_seconds: retryAfter(headers),
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

function parseArguments(text) {
  if (text === undefined || text === null || text === "") return {};
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch { return {}; }
}

function parse({ response, context }) {
  const status = response.status ?? 200;
  const body = decodeBody(response);
  if (status >= 400 || (body && typeof body === "object" && body.error)) throw errorFrom(status, response.headers, body, context);
  if (!body || typeof body !== "object" || !Array.isArray(body.choices)) {
    throw new ProtocolError({ kind: "wire_format", message: "a chat.completion object has a choices array" });
  }
  const choice = body.choices[0] || {};
  const wire = choice.message || {};
  const sessionId = context.session_id;
  const content = [];
  const raw = { finish_reason: choice.finish_reason ?? null, id: body.id ?? null };
  if (typeof wire.content === "string" && wire.content !== "") content.push({ type: "text", text: wire.content });
  if (typeof wire.refusal === "string" && wire.refusal !== "") {
    raw.refusal_index = content.length;
    content.push({ type: "text", text: wire.refusal });
  }
  const calls = Array.isArray(wire.tool_calls) ? wire.tool_calls : [];
  calls.forEach((call, position) => {
    if (call.type === "custom" && call.custom) {
      const providerId = call.id || mintedCallId(body, position, call.custom.name);
      (raw.custom_calls = raw.custom_calls || []).push(providerId);
      content.push({ type: "tool_use", id: canonicalFor(sessionId, providerId), name: call.custom.name, input: { input: String(call.custom.input ?? "") } });
      return;
    }
    const fn = call.function || {};
    const providerId = call.id || mintedCallId(body, position, fn.name);
    content.push({ type: "tool_use", id: canonicalFor(sessionId, providerId), name: fn.name, input: parseArguments(fn.arguments) });
  });
  if (!calls.length && wire.function_call) { // the deprecated single function call
    raw.function_call = true;
    const providerId = mintedCallId(body, 0, wire.function_call.name);
    raw.arguments = { [providerId]: wire.function_call.arguments };
    content.push({ type: "tool_use", id: canonicalFor(sessionId, providerId), name: wire.function_call.name, input: parseArguments(wire.function_call.arguments) });
  }
  if (!content.length) content.push({ type: "text", text: "" });
  const model = body.model ? `${PROVIDER}:${body.model}` : (context.model ?? `${PROVIDER}:unknown`);
  const reason = stopReason(choice.finish_reason);
  const message = {
    id: context.message_id ?? ulid(),
    session_id: sessionId,
    role: "assistant",
    content,
    metadata: {
      ...assistantMetadata(model),
      usage: usageOf(body.usage, context),
      status: reason === "error" ? "error" : reason === "cancelled" ? "cancelled" : "complete",
      provider_raw: { [NAME]: raw },
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
    context, decoder: new TextDecoder("utf-8"), buffer: "", events: [], over: false, closed: false,
    blocks: [], text: null, refusal: null, calls: new Map(), finish: null, usage: null, done: false,
    started: false, eventIndex: 0,
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
  block.input = parseArguments(block.partial);
  block.ended = true;
  return { type: "tool_use_end", message_id: messageId(stream), content_block_index: index, tool_use_id: block.id, final_input: block.input };
}

function finalContent(blocks) {
  const out = blocks.filter(Boolean).map((block) => {
    if (block.type === "text") return { type: "text", text: block.text };
    const input = block.input !== undefined ? block.input : parseArguments(block.partial);
    return { type: "tool_use", id: block.id, name: block.name, input };
  });
  return out.length ? out : [{ type: "text", text: "" }];
}

function streamUsage(stream) {
  const usage = usageOf(stream.usage, stream.context);
  if (!usage) return null;
  const { cost_usd: _c, pricing_version: _p, latency_ms: _l, ...tokens } = usage;
  return tokens;
}

function complete(stream, reason) {
  stream.over = true;
  return {
    type: "message_complete", message_id: messageId(stream), stop_reason: reason,
    final_content: finalContent(stream.blocks), usage: streamUsage(stream),
  };
}

function wireFormat(stream, message) {
  return new ProtocolError({ kind: "wire_format", message, event: stream.eventIndex });
}

function closeCalls(stream, out) {
  for (const index of stream.calls.values()) if (!stream.blocks[index].ended) out.push(toolEnd(stream, index));
}

function textInto(stream, slot, text, out) {
  if (typeof text !== "string" || text === "") return;
  if (stream[slot] === null) {
    stream[slot] = stream.blocks.length;
    stream.blocks.push({ type: "text", text: "" });
  }
  const index = stream[slot];
  stream.blocks[index].text += text;
  out.push({ type: "text_delta", message_id: messageId(stream), content_block_index: index, text });
}

function onCallDelta(stream, chunk, delta, out) {
  const key = delta.index ?? 0;
  const fn = delta.function || {};
  let index = stream.calls.get(key);
  if (index === undefined) {
    // the next call begins: the ones before it are complete (indexes never go back, TC602)
    closeCalls(stream, out);
    const providerId = delta.id || mintedCallId(chunk, key, fn.name);
    const canonical = canonicalFor(stream.context.session_id, providerId);
    index = stream.blocks.length;
    stream.calls.set(key, index);
    stream.blocks.push({ type: "tool_use", id: canonical, name: fn.name ?? "", partial: "" });
    out.push({ type: "tool_use_start", message_id: messageId(stream), content_block_index: index, tool_use_id: canonical, tool_name: fn.name ?? "" });
  }
  const block = stream.blocks[index];
  if (block.ended && typeof fn.arguments === "string" && fn.arguments !== "") {
    throw wireFormat(stream, `tool_calls[${key}] got arguments after a later call began`);
  }
  if (typeof fn.arguments === "string" && fn.arguments !== "") {
    block.partial += fn.arguments;
    out.push({ type: "tool_use_input_delta", message_id: messageId(stream), content_block_index: index, tool_use_id: block.id, partial_json: fn.arguments });
  }
}

function onChunk(stream, chunk, out) {
  if (chunk.error) {
    if (!stream.started) {
      stream.started = true;
      out.push({ type: "message_start", message_id: messageId(stream), role: "assistant", model: stream.context.model ?? `${PROVIDER}:unknown` });
    }
    out.push(complete(stream, "error"));
    const error = typeof chunk.error === "object" ? chunk.error : { message: String(chunk.error) };
    const errorClass = errorClassFor(null, error);
    throw adapterError(errorClass, error.message || "stream error", {
      provider_status: null, request_id: stream.context.request_id ?? null,
      retryable: ["rate_limit", "server_error", "network"].includes(errorClass), retry_after_seconds: null,
    });
  }
  if (!stream.started) {
    stream.started = true;
    const model = chunk.model ? `${PROVIDER}:${chunk.model}` : (stream.context.model ?? `${PROVIDER}:unknown`);
    out.push({ type: "message_start", message_id: messageId(stream), role: "assistant", model });
  }
  if (chunk.usage) stream.usage = chunk.usage;
  const choice = (chunk.choices || []).find((c) => (c.index ?? 0) === 0);
  if (!choice) return;
  const delta = choice.delta || {};
  textInto(stream, "text", delta.content, out);
  textInto(stream, "refusal", delta.refusal, out);
  for (const call of delta.tool_calls || []) onCallDelta(stream, chunk, call, out);
  if (delta.function_call) {
    onCallDelta(stream, chunk, { index: 0, function: delta.function_call }, out);
  }
  if (choice.finish_reason) {
    stream.finish = choice.finish_reason;
    closeCalls(stream, out);
  }
}

function finish(stream, out) {
  closeCalls(stream, out);
  if (!stream.started) {
    stream.started = true;
    out.push({ type: "message_start", message_id: messageId(stream), role: "assistant", model: stream.context.model ?? `${PROVIDER}:unknown` });
  }
  out.push(complete(stream, stopReason(stream.finish)));
}

function drain(stream, out, final) {
  const text = stream.buffer.replace(/\r\n?/g, "\n");
  const frames = text.split("\n\n");
  stream.buffer = final ? "" : frames.pop();
  for (const frame of frames) {
    if (!frame.trim() || stream.over) continue;
    const data = [];
    for (const line of frame.split("\n")) {
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
    }
    if (!data.length) continue;
    const payload = data.join("\n");
    if (payload.trim() === "[DONE]") {
      stream.done = true;
      finish(stream, out);
      continue;
    }
    let parsed;
    try { parsed = JSON.parse(payload); } catch {
      throw wireFormat(stream, `event ${stream.eventIndex} is not JSON`);
    }
    onChunk(stream, parsed, out);
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
      throw new ProtocolError({ ...error.error, events: out });
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
    stream.buffer += stream.decoder.decode() + "\n\n";
    drain(stream, out, true);
    if (stream.over) return;
    // no [DONE]: a stream whose finish_reason came ends as it said; else it was cut
    if (stream.finish) finish(stream, out);
    else throw wireFormat(stream, "the stream ended before a finish_reason");
  });
  stream.over = true;
  stream.closed = true;
  return result;
}

// ---------------------------------------------------------------- cancel (contract §5.3)

function cancel({ request_id: requestId, delivered }) {
  for (const stream of streams.values()) {
    if (stream.context.request_id !== requestId) continue;
    if (stream.closed) return { in_flight: false, events: [] };
    const replay = { ...stream, blocks: [] };
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

function newMessage(sessionId, role, content, extra = {}) {
  const metadata = { status: "complete", ...extra };
  return { id: ulid(), session_id: sessionId, role, content, metadata, created_at: nowTimestamp(), schema_version: 1 };
}

function guessMedia(url) {
  const match = /\.(png|gif|webp|jpe?g)(?:$|\?)/i.exec(url || "");
  if (!match) return "image/jpeg";
  const ext = match[1].toLowerCase();
  return ext === "jpg" || ext === "jpeg" ? "image/jpeg" : `image/${ext}`;
}

function readPart(part) {
  if (part.type === "text") return [{ type: "text", text: part.text }, {}];
  if (part.type === "image_url") {
    const { url, ...imageRest } = part.image_url || {};
    const extra = Object.keys(imageRest).length ? { image_url: imageRest } : {};
    const data = /^data:([^;,]+);base64,(.*)$/s.exec(url || "");
    if (data) return [{ type: "image", source: { kind: "base64", data: data[2] }, media_type: data[1] }, extra];
    return [{ type: "image", source: { kind: "url", data: url }, media_type: guessMedia(url) }, extra];
  }
  const { type, ...rest } = part;
  return [{ ...rest, type: `${PROVIDER}:${type}` }, {}];
}

function readParts(content) {
  if (typeof content === "string") return { blocks: [{ type: "text", text: content }], parts: {}, asParts: false };
  const blocks = [];
  const parts = {};
  (content || []).forEach((part, index) => {
    const [block, extra] = readPart(part);
    blocks.push(block);
    if (Object.keys(extra).length) parts[String(index)] = extra;
  });
  return { blocks, parts, asParts: Array.isArray(content) && content.length === 1 && content[0].type === "text" ? false : Array.isArray(content) };
}

function rawMeta(raw) {
  const kept = Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined && value !== false
    && !(typeof value === "object" && value !== null && !Array.isArray(value) && !Object.keys(value).length)));
  return Object.keys(kept).length ? { provider_raw: { [NAME]: kept } } : {};
}

function otherFields(wire, known) {
  const rest = Object.fromEntries(Object.entries(wire).filter(([key]) => !known.includes(key)));
  return Object.keys(rest).length ? rest : undefined;
}

function readAssistant(sessionId, wire, model, legacy) {
  const content = [];
  const raw = { fields: otherFields(wire, ["role", "content", "refusal", "tool_calls", "function_call"]) };
  if (wire.content === null) raw.content_null = true;
  if (Array.isArray(wire.content)) {
    const parts = {};
    for (const part of wire.content) {
      if (part.type === "refusal") {
        raw.refusal_index = content.length;
        raw.refusal_as_part = true;
        content.push({ type: "text", text: part.refusal });
      } else {
        const [block, extra] = readPart(part);
        if (Object.keys(extra).length) parts[String(content.length)] = extra;
        content.push(block);
      }
    }
    raw.parts = parts;
    if (!(wire.content.length === 1 && wire.content[0].type === "text")) raw.content_as_parts = !raw.refusal_as_part;
  } else if (typeof wire.content === "string" && wire.content !== "") {
    content.push({ type: "text", text: wire.content });
  }
  if (typeof wire.refusal === "string") {
    raw.refusal_index = content.length;
    content.push({ type: "text", text: wire.refusal });
  }
  for (const call of wire.tool_calls || []) {
    if (call.type === "custom" && call.custom) {
      (raw.custom_calls = raw.custom_calls || []).push(call.id);
      content.push({ type: "tool_use", id: canonicalFor(sessionId, call.id), name: call.custom.name, input: { input: String(call.custom.input ?? "") } });
      continue;
    }
    const fn = call.function || {};
    content.push({ type: "tool_use", id: canonicalFor(sessionId, call.id), name: fn.name, input: parseArguments(fn.arguments) });
  }
  if (!(wire.tool_calls || []).length && wire.function_call) {
    // the deprecated form carries no id: a fresh pair, which the `function` message answering it names
    raw.function_call = true;
    const canonical = "tu_" + ulid();
    const providerId = randomCallId();
    bind(sessionMap(sessionId), canonical, providerId);
    raw.arguments = { [providerId]: wire.function_call.arguments };
    legacy.set(wire.function_call.name, canonical);
    content.push({ type: "tool_use", id: canonical, name: wire.function_call.name, input: parseArguments(wire.function_call.arguments) });
  }
  if (!content.length) content.push({ type: "text", text: "" });
  return newMessage(sessionId, "assistant", content, { ...assistantMetadata(model), ...rawMeta(raw) });
}

function readRequest({ body, session_id: given }) {
  const sessionId = given ?? ulid();
  const model = `${PROVIDER}:${body.model}`;
  const messages = [];
  const legacy = new Map(); // function name -> the canonical id of its latest deprecated call
  for (const wire of body.messages || []) {
    if (wire.role === "system" || wire.role === "developer" || wire.role === "user") {
      const { blocks, parts, asParts } = readParts(wire.content);
      const raw = {
        role: wire.role === "developer" ? "developer" : undefined, parts, content_as_parts: asParts,
        fields: otherFields(wire, ["role", "content"]),
      };
      messages.push(newMessage(sessionId, wire.role === "user" ? "user" : "system", blocks, rawMeta(raw)));
    } else if (wire.role === "assistant") {
      messages.push(readAssistant(sessionId, wire, model, legacy));
    } else if (wire.role === "tool") {
      const { blocks, asParts } = readParts(wire.content);
      const toolUseId = canonicalFor(sessionId, wire.tool_call_id);
      const result = { type: "tool_result", tool_use_id: toolUseId, content: blocks, is_error: false };
      const raw = { content_as_parts: asParts, fields: otherFields(wire, ["role", "content", "tool_call_id"]) };
      messages.push(newMessage(sessionId, "tool", [result], { parent_tool_use_id: toolUseId, ...rawMeta(raw) }));
    } else if (wire.role === "function" && legacy.has(wire.name)) {
      const { blocks, asParts } = readParts(wire.content);
      const toolUseId = legacy.get(wire.name);
      const result = { type: "tool_result", tool_use_id: toolUseId, content: blocks, is_error: false };
      const raw = { content_as_parts: asParts, fields: otherFields(wire, ["role", "content", "name"]) };
      messages.push(newMessage(sessionId, "tool", [result], { parent_tool_use_id: toolUseId, ...rawMeta(raw) }));
    }
  }
  const requestRaw = {};
  const tools = [];
  const providerTools = [];
  for (const tool of body.tools || []) {
    if (tool.type === "function" && tool.function && tool.function.name) {
      const { name, description, parameters, ...fields } = tool.function;
      tools.push({ name, description: description ?? "", input_schema: parameters ?? { type: "object", properties: {} }, side_effects: "none" });
      const extra = { ...fields, ...(parameters === undefined ? { no_parameters: true } : {}) };
      if (Object.keys(extra).length) (requestRaw.tools = requestRaw.tools || {})[name] = extra;
    } else {
      providerTools.push(tool);
    }
  }
  const known = new Set(["model", "messages", "tools", "temperature", "stop", "stream", "max_tokens", "max_completion_tokens"]);
  const extra = Object.fromEntries(Object.entries(body).filter(([key]) => !known.has(key)));
  let maxTokens = body.max_completion_tokens ?? null;
  if (body.max_completion_tokens === undefined && body.max_tokens !== undefined) {
    maxTokens = body.max_tokens;
    requestRaw.max_tokens_field = "max_tokens";
  } else if (body.max_tokens !== undefined) {
    extra.max_tokens = body.max_tokens;
  }
  let stops = [];
  if (typeof body.stop === "string") { stops = [body.stop]; requestRaw.stop_as_string = true; }
  else if (Array.isArray(body.stop)) stops = body.stop;
  let outputSchema = null;
  const format = body.response_format;
  if (format && format.type === "json_schema" && format.json_schema && format.json_schema.schema) {
    const { schema, ...rest } = format.json_schema;
    outputSchema = schema;
    requestRaw.json_schema = rest;
    delete extra.response_format;
  }
  const stream = body.stream === true;
  const so = body.stream_options;
  if (stream && so && typeof so === "object" && Object.keys(so).length === 1 && so.include_usage === true) delete extra.stream_options;
  const options = {
    model, max_output_tokens: maxTokens, temperature: body.temperature ?? null,
    stop_sequences: stops, stream, output_schema: outputSchema,
    extra, provider_tools: providerTools,
    provider_raw: Object.keys(requestRaw).length ? { [NAME]: requestRaw } : {},
  };
  return { messages, tools, options };
}

// ---------------------------------------------------------------- estimate

// About four characters a token for English text (OpenAI's rule of thumb, no tokenizer here),
// counted as OpenAI's cookbook counts a chat prompt ("How to count tokens with tiktoken"):
// 3 tokens of framing per message and 3 priming the reply; each tool definition as the
// cookbook weighs it (7 per function, 3 for its properties, 3 per property, 12 at the end,
// plus the text of `name:description` and of each `key:type:description`); a tool call and a
// tool result also carry the framing of the message the model sees them in; a flat cost per
// image (a low-detail image is 85 tokens, a high-detail tile 170: 255 between the two).
const tokensOf = (text) => Math.ceil(String(text ?? "").length / 4);

function toolTokens(tool) {
  let tokens = 7 + tokensOf(`${tool.name}:${String(tool.description || "").replace(/\.$/, "")}`);
  const properties = (tool.input_schema && tool.input_schema.properties) || {};
  const keys = Object.keys(properties);
  if (keys.length) tokens += 3;
  for (const key of keys) {
    const prop = properties[key] || {};
    tokens += 3;
    if (Array.isArray(prop.enum)) {
      tokens -= 3;
      for (const item of prop.enum) tokens += 3 + tokensOf(item);
    }
    tokens += tokensOf(`${key}:${prop.type ?? "object"}:${String(prop.description || "").replace(/\.$/, "")}`);
  }
  return tokens;
}

function blockTokens(block) {
  switch (block.type) {
    case "text": return tokensOf(block.text);
    case "image": return 255;
    case "tool_use": return 8 + tokensOf(block.name) + tokensOf(JSON.stringify(block.input ?? {}));
    case "tool_result": return 6 + (block.content || []).reduce((sum, inner) => sum + blockTokens(inner), 0);
    default: return tokensOf(JSON.stringify(block));
  }
}

function estimate({ messages, tools }) {
  let tokens = 3;
  for (const message of messages) {
    tokens += 3;
    for (const block of message.content || []) tokens += blockTokens(block);
  }
  if ((tools || []).length) tokens += 12;
  for (const tool of tools || []) tokens += toolTokens(tool);
  return { tokens };
}

// ---------------------------------------------------------------- hello, the loop

function hello({ protocol_versions: versions }) {
  if (!versions.includes(1)) throw adapterError("invalid_request", `this child speaks protocol 1, offered ${versions}`);
  return {
    protocol_version: 1,
    adapter: {
      name: NAME, provider: PROVIDER, wire_api: "openai-chat-completions",
      language: "javascript", language_version: `node ${process.versions.node}`,
      capabilities: CAPABILITIES, provider_tool_id: "^call_[A-Za-z0-9_-]+$",
      operations: ["render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"],
      cassette_folders: ["openai-chat", "openai-chat-issue37"],
      tool_errors_in_band: "a tool result's error goes as its content's first words, 'Error: ', in the tool message",
      gaps: [],
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
let lineNumber = 0;
lines.on("line", (line) => {
  lineNumber += 1;
  if (!line.trim()) return;
  let request;
  try { request = JSON.parse(line); } catch { request = undefined; }
  if (!request || typeof request !== "object" || Array.isArray(request)) {
    // nothing to answer: no id to echo
    const what = request === undefined ? "is not JSON" : "is not a JSON object";
    process.stderr.write(`${NAME}: standard input line ${lineNumber} ${what}\n`);
    process.exit(2);
  }
  process.stdout.write(JSON.stringify(answer(request)) + "\n");
  if (request.op === "shutdown") { lines.close(); process.exit(0); }
});
lines.on("close", () => process.exit(0));
