#!/usr/bin/env node
// An Amazon Bedrock Converse adapter speaking turnspec's exec protocol (version 1), written by
// an outside author from docs/exec-protocol.md, docs/adapter-guide.md, schemas/exec/v1/ and
// AWS's own Converse / ConverseStream and event stream encoding documentation only. Plain
// Node 20, no npm dependencies. turnspec keeps it as test data (tests/test_exec_outside_author.py).
//
// Wire format: POST /model/{modelId}/converse (JSON) and /model/{modelId}/converse-stream,
// whose body is application/vnd.amazon.eventstream: binary messages of a 12-byte prelude
// (total length, headers length, prelude CRC32, big-endian), headers, payload and a message
// CRC32. Event messages (`:message-type` event) carry `:event-type` messageStart,
// contentBlockStart, contentBlockDelta, contentBlockStop, messageStop, metadata; exception
// messages (`:message-type` exception) carry `:exception-type`.
//
// Declared false, so never half done: structured output (no outputConfig is sent; the option
// is dropped with an option_dropped record) and prompt caching (a recorded cachePoint is read
// back and sent again as a `bedrock:cachePoint` block, but nothing canonical places one).
// Images travel as bytes only: one by URL or file reference is dropped (Converse takes none).
import { createInterface } from "node:readline";

const NAME = "outside-bedrock";
const PROVIDER = "bedrock";
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

// Bedrock's tool use ids look like `tooluse_` and 22 base64url characters
function providerToolId() {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  let out = "tooluse_";
  for (let i = 0; i < 22; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)];
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

// ---------------------------------------------------------------- models and paths

// canonical §6.3 ids are `<provider>:<model_name>`; the wire takes the name (our prefix only:
// a Bedrock model id holds `:` of its own, anthropic.claude-3-haiku-20240307-v1:0)
function wireModel(model) {
  const prefix = PROVIDER + ":";
  return model.startsWith(prefix) && model.length > prefix.length ? model.slice(prefix.length) : model;
}

function canonicalModel(model) {
  return model.startsWith(PROVIDER + ":") ? model : `${PROVIDER}:${model}`;
}

// RFC 3986: every byte outside the unreserved set (ALPHA DIGIT - . _ ~) is percent-encoded;
// encodeURIComponent leaves ! ' ( ) * as they are, so those are done by hand
function encodeSegment(text) {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase());
}

const PATH = /\/model\/([^/?#]+)\/(converse-stream|converse)(?:[?#]|$)/;

function readPath(url) {
  const match = PATH.exec(url || "");
  if (!match) return { model: null, stream: null };
  let model = match[1];
  try { model = decodeURIComponent(model); } catch { /* kept as sent */ }
  return { model, stream: match[2] === "converse-stream" };
}

// ---------------------------------------------------------------- render (canonical -> wire)

const IMAGE_FORMATS = { "image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif", "image/webp": "webp" };

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
  const format = IMAGE_FORMATS[String(block.media_type).toLowerCase()];
  if (!format) {
    dropBlock(message, block, `media type ${block.media_type} is not one Converse takes (png, jpeg, gif, webp)`, critical);
    return null;
  }
  if (source.kind === "base64") return { image: { format, source: { bytes: source.data } } };
  dropBlock(message, block, `an image by ${source.kind} cannot travel on Converse (bytes only)`, critical);
  return null;
}

function fromThisProvider(message) {
  const provider = message.metadata && message.metadata.provider;
  const model = message.metadata && message.metadata.model;
  return provider === PROVIDER || (typeof model === "string" && model.startsWith(PROVIDER + ":"));
}

// a `bedrock:<member>` block (spec §10.3) is a Converse union member kept whole
function namespaced(block) {
  if (typeof block.type !== "string" || !block.type.startsWith(PROVIDER + ":")) return null;
  const member = block.type.slice(PROVIDER.length + 1);
  return member && block[member] !== undefined ? { [member]: block[member] } : null;
}

function renderBlock(message, block, critical) {
  switch (block.type) {
    case "text": return { text: block.text };
    case "image": return renderImage(message, block, critical);
    case "tool_use":
      return { toolUse: { toolUseId: providerFor(message.session_id, block.id), name: block.name, input: block.input } };
    case "thinking": {
      if (!fromThisProvider(message)) {
        dropBlock(message, block, "reasoning from another provider cannot be sent back", critical);
        return null;
      }
      const reasoningText = { text: block.text };
      if (block.signature) reasoningText.signature = block.signature;
      return { reasoningContent: { reasoningText } };
    }
    case "redacted_thinking":
      if (!fromThisProvider(message)) {
        dropBlock(message, block, "redacted reasoning from another provider cannot be sent back", critical);
        return null;
      }
      return { reasoningContent: { redactedContent: block.data } };
    default: {
      const kept = namespaced(block);
      if (kept) return kept;
      dropBlock(message, block, `no ${block.type} block on Converse`, critical);
      return null;
    }
  }
}

function renderToolResult(message, block, critical) {
  const content = [];
  for (const inner of block.content || []) {
    if (inner.type === "text") content.push({ text: inner.text });
    else if (inner.type === "image") { const image = renderImage(message, inner, critical); if (image) content.push(image); }
    else {
      const kept = namespaced(inner);
      if (kept) content.push(kept);
      else dropBlock(message, inner, `no ${inner.type} block inside a Converse toolResult`, critical);
    }
  }
  const out = { toolUseId: providerFor(message.session_id, block.tool_use_id), content };
  const raw = ownRaw(message.metadata);
  if (block.is_error) out.status = "error";
  else if (raw.status === "success") out.status = "success";
  return { toolResult: out };
}

function withExtras(rendered, raw, index) {
  const extras = raw.blocks && raw.blocks[String(index)];
  if (!extras) return rendered;
  for (const [member, fields] of Object.entries(extras)) {
    if (rendered[member] && typeof rendered[member] === "object") rendered[member] = { ...rendered[member], ...fields };
  }
  return rendered;
}

function ownRaw(holder) {
  return (holder && holder.provider_raw && holder.provider_raw[NAME]) || {};
}

function isCritical(message, index, criticalKey) {
  const marked = message.metadata && message.metadata[criticalKey];
  return marked === true || (Array.isArray(marked) && marked.includes(index));
}

function renderMessages(messages, criticalKey) {
  const system = [];
  const wire = [];
  for (const message of messages) {
    if (message.role === "system") {
      for (const [index, block] of message.content.entries()) {
        const kept = block.type === "text" ? { text: block.text } : namespaced(block);
        if (kept) system.push(kept);
        else dropBlock(message, block, "a Converse system prompt carries text only", isCritical(message, index, criticalKey));
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
      if (rendered) content.push(withExtras(rendered, ownRaw(message.metadata), index));
    }
    // tool results travel in a user turn; a user turn right after them is the same turn
    // (Converse wants user and assistant turns to alternate)
    const last = wire[wire.length - 1];
    if (message.role !== "assistant" && last && last.role === "user" && last.fromTool) {
      last.content.push(...content);
      last.fromTool = message.role === "tool";
      continue;
    }
    wire.push({ role, content, fromTool: message.role === "tool" });
  }
  return { system, messages: wire.map(({ role, content }) => ({ role, content })) };
}

function render({ messages, tools, options }) {
  const criticalKey = options.critical_key || "critical";
  const raw = ownRaw(options);
  const { system, messages: wire } = renderMessages(messages, criticalKey);
  const body = { messages: wire };
  const empties = raw.empty || [];
  if (system.length || empties.includes("system")) body.system = system;
  const inference = {};
  if (options.max_output_tokens !== null && options.max_output_tokens !== undefined) inference.maxTokens = options.max_output_tokens;
  if (options.temperature !== null && options.temperature !== undefined) inference.temperature = options.temperature;
  if (options.stop_sequences && options.stop_sequences.length) inference.stopSequences = options.stop_sequences;
  Object.assign(inference, raw.inference || {});
  if (Object.keys(inference).length || empties.includes("inferenceConfig")) body.inferenceConfig = inference;
  // a toolSpec's description, when sent, is at least one character (AWS: Length Constraints)
  const wireTools = tools.map((tool) => ({
    toolSpec: { name: tool.name, ...(tool.description ? { description: tool.description } : {}), inputSchema: { json: tool.input_schema } },
  }));
  wireTools.push(...(options.provider_tools || []));
  if (wireTools.length) {
    body.toolConfig = { tools: wireTools };
    if (raw.tool_choice !== undefined) body.toolConfig.toolChoice = raw.tool_choice;
  }
  if (options.output_schema) {
    warn(`${NAME}: dropped option output_schema: this adapter sends no structured output config`, {
      event: "option_dropped", adapter: NAME, option: "output_schema",
      reason: "this adapter sends no structured output config",
    });
  }
  Object.assign(body, options.extra || {});
  const model = encodeSegment(wireModel(options.model));
  return {
    method: "POST", path: `/model/${model}/${options.stream ? "converse-stream" : "converse"}`,
    headers: { "content-type": "application/json" }, body,
  };
}

// ---------------------------------------------------------------- parse (wire -> canonical)

const STOP_REASONS = {
  end_turn: "end_turn", tool_use: "tool_use", max_tokens: "max_tokens", stop_sequence: "stop_sequence",
  model_context_window_exceeded: "max_tokens",
  // A guardrail or a content filter withheld the reply. docs/exec-protocol.md reads a
  // "failed or withheld reply" as `error`, but turnspec's bedrock-converse record maps both to
  // end_turn (the reply is the guardrail's text) and TC903 takes only that: followed here.
  guardrail_intervened: "end_turn", content_filtered: "end_turn",
};

function stopReason(raw) { return STOP_REASONS[raw] ?? "end_turn"; }

function usageOf(usage, context) {
  return {
    input_tokens: usage.inputTokens ?? 0,
    output_tokens: usage.outputTokens ?? 0,
    cached_input_tokens: usage.cacheReadInputTokens ?? 0,
    cache_creation_input_tokens: usage.cacheWriteInputTokens ?? 0,
    cost_usd: "0",
    pricing_version: "unpriced",
    latency_ms: context.latency_ms ?? 0,
  };
}

function tokenUsage(usage) {
  return {
    input_tokens: usage.inputTokens ?? 0,
    output_tokens: usage.outputTokens ?? 0,
    cached_input_tokens: usage.cacheReadInputTokens ?? 0,
    cache_creation_input_tokens: usage.cacheWriteInputTokens ?? 0,
  };
}

function keepWhole(member, value) { return { type: `${PROVIDER}:${member}`, [member]: value }; }

// one Converse ContentBlock (a union: exactly one member set) to canonical
function readBlock(sessionId, block) {
  if (block.text !== undefined) return { type: "text", text: block.text };
  if (block.toolUse && (block.toolUse.type === undefined || block.toolUse.type === "tool_use")) {
    const use = block.toolUse;
    return { type: "tool_use", id: canonicalFor(sessionId, use.toolUseId), name: use.name, input: use.input ?? {} };
  }
  if (block.reasoningContent) {
    const reasoning = block.reasoningContent;
    if (reasoning.reasoningText) {
      return { type: "thinking", text: reasoning.reasoningText.text ?? "", signature: reasoning.reasoningText.signature ?? null };
    }
    if (reasoning.redactedContent !== undefined) return { type: "redacted_thinking", data: reasoning.redactedContent };
  }
  if (block.image && block.image.source && typeof block.image.source.bytes === "string") {
    return { type: "image", source: { kind: "base64", data: block.image.source.bytes }, media_type: `image/${block.image.format}` };
  }
  const member = Object.keys(block)[0] ?? "unknown";
  return keepWhole(member, block[member]);
}

// a list of Converse blocks to canonical, and what canonical form cannot hold of them (a
// toolUse's `type: "tool_use"`), by index, for the message's provider_raw (§6.5)
function readContent(sessionId, blocks) {
  const content = [];
  const extras = {};
  blocks.forEach((block, index) => {
    content.push(readBlock(sessionId, block));
    if (block.toolUse && block.toolUse.type === "tool_use") extras[String(index)] = { toolUse: { type: "tool_use" } };
  });
  return { content, extras: Object.keys(extras).length ? extras : null };
}

function errorClassFor(status, type, message) {
  const kind = String(type || "").replace(/^./, (c) => c.toUpperCase());
  if (["ThrottlingException", "ModelNotReadyException", "ServiceQuotaExceededException", "TooManyRequestsException"].includes(kind)) {
    return "rate_limit";
  }
  if (["AccessDeniedException", "UnrecognizedClientException", "ExpiredTokenException", "InvalidSignatureException",
    "IncompleteSignatureException", "MissingAuthenticationTokenException"].includes(kind)) return "auth";
  if (kind === "ValidationException" || (!kind && status === 400) || status === 413) {
    if (/too long|too many (input )?tokens|context (window|length)|maximum context/i.test(message || "")) return "context_overflow";
    return "invalid_request";
  }
  if (kind === "ModelTimeoutException" || status === 408) return "network";
  if (["InternalServerException", "ServiceUnavailableException", "ModelErrorException", "ModelStreamErrorException"].includes(kind)) {
    return "server_error";
  }
  if (kind === "ResourceNotFoundException" || kind === "ConflictException") return "invalid_request";
  if (status === 429) return "rate_limit";
  if (status === 401 || status === 403) return "auth";
  if (status >= 500) return "server_error";
  if (status >= 400) return "invalid_request";
  return "other";
}

function headerValue(headers, name) {
  for (const [key, value] of Object.entries(headers || {})) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

function retryable(errorClass) { return ["rate_limit", "server_error", "network"].includes(errorClass); }

function raiseForError(status, headers, body, context = {}) {
  const type = String(headerValue(headers, "x-amzn-errortype") ?? "").split(":")[0]
    || (body && typeof body === "object" && (body.__type || body.code)) || "";
  const message = (body && typeof body === "object" && (body.message || body.Message)) || `HTTP ${status}${type ? ` ${type}` : ""}`;
  const errorClass = errorClassFor(status, type, message);
  const retryAfter = Number(headerValue(headers, "retry-after"));
  throw adapterError(errorClass, type ? `${type}: ${message}` : message, {
    provider_status: status,
    request_id: headerValue(headers, "x-amzn-requestid") ?? context.request_id ?? null,
    retryable: retryable(errorClass),
    retry_after_seconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null,
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

function contextModel(context) {
  return context.model ? canonicalModel(context.model) : `${PROVIDER}:unknown`;
}

function parse({ response, context }) {
  const status = response.status ?? 200;
  const body = decodeBody(response);
  if (status >= 400) raiseForError(status, response.headers, body, context);
  const message = body && typeof body === "object" && body.output && body.output.message;
  if (!message || !Array.isArray(message.content)) {
    throw new ProtocolError({ kind: "wire_format", message: "a Converse response has output.message.content (a list)" });
  }
  const { content, extras } = readContent(context.session_id, message.content);
  const raw = { stopReason: body.stopReason ?? null };
  if (extras) raw.blocks = extras;
  if (body.additionalModelResponseFields !== undefined) raw.additionalModelResponseFields = body.additionalModelResponseFields;
  if (body.trace !== undefined) raw.trace = body.trace;
  return {
    message: {
      id: context.message_id ?? ulid(),
      session_id: context.session_id,
      role: "assistant",
      content: content.length ? content : [{ type: "text", text: "" }],
      metadata: {
        ...assistantMetadata(contextModel(context)),
        usage: body.usage ? usageOf(body.usage, context) : null,
        status: stopReason(body.stopReason) === "error" ? "error" : "complete",
        provider_raw: { [NAME]: raw },
      },
      created_at: context.created_at ?? nowTimestamp(),
      schema_version: 1,
    },
  };
}

// ---------------------------------------------------------------- the event stream framing

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

// CRC-32 as gzip computes it (ISO 3309, reflected 0xEDB88320)
function crc32(bytes) {
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = CRC_TABLE[(crc ^ bytes[i]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function readHeaders(bytes) {
  const headers = {};
  let at = 0;
  while (at < bytes.length) {
    const nameLength = bytes[at];
    const name = bytes.subarray(at + 1, at + 1 + nameLength).toString("utf8");
    at += 1 + nameLength;
    const type = bytes[at];
    at += 1;
    let value;
    switch (type) {
      case 0: value = true; break;
      case 1: value = false; break;
      case 2: value = bytes.readInt8(at); at += 1; break;
      case 3: value = bytes.readInt16BE(at); at += 2; break;
      case 4: value = bytes.readInt32BE(at); at += 4; break;
      case 5: value = bytes.readBigInt64BE(at); at += 8; break;
      case 6: case 7: {
        const length = bytes.readUInt16BE(at);
        const data = bytes.subarray(at + 2, at + 2 + length);
        value = type === 7 ? data.toString("utf8") : data;
        at += 2 + length;
        break;
      }
      case 8: value = bytes.readBigInt64BE(at); at += 8; break;
      case 9: value = bytes.subarray(at, at + 16).toString("hex"); at += 16; break;
      default: throw new Error(`header ${name} has value type ${type}, none the encoding defines`);
    }
    if (at > bytes.length) throw new Error(`header ${name} runs past the headers`);
    headers[name] = value;
  }
  return headers;
}

// the complete messages at the head of `buffer`, and the bytes left over
function takeMessages(stream) {
  const messages = [];
  for (;;) {
    const buffer = stream.buffer;
    if (buffer.length < 12) break;
    const total = buffer.readUInt32BE(0);
    const headersLength = buffer.readUInt32BE(4);
    if (crc32(buffer.subarray(0, 8)) !== buffer.readUInt32BE(8)) {
      throw wireFormat(stream, `event stream message ${stream.frameIndex} (byte ${stream.offset}): its prelude CRC does not match`);
    }
    if (total < 16 || headersLength > total - 16) {
      throw wireFormat(stream, `event stream message ${stream.frameIndex} (byte ${stream.offset}): total length ${total} cannot hold headers of ${headersLength} bytes`);
    }
    if (buffer.length < total) break;
    const frame = buffer.subarray(0, total);
    if (crc32(frame.subarray(0, total - 4)) !== frame.readUInt32BE(total - 4)) {
      throw wireFormat(stream, `event stream message ${stream.frameIndex} (byte ${stream.offset}): its message CRC does not match`);
    }
    let headers;
    try { headers = readHeaders(frame.subarray(12, 12 + headersLength)); } catch (error) {
      throw wireFormat(stream, `event stream message ${stream.frameIndex} (byte ${stream.offset}): ${error.message}`);
    }
    messages.push({ headers, payload: frame.subarray(12 + headersLength, total - 4), index: stream.frameIndex, offset: stream.offset });
    stream.buffer = buffer.subarray(total);
    stream.offset += total;
    stream.frameIndex += 1;
  }
  return messages;
}

// ---------------------------------------------------------------- streams

const streams = new Map();

function openStream({ stream_id: streamId, context }) {
  streams.set(streamId, {
    context, buffer: Buffer.alloc(0), offset: 0, frameIndex: 0, events: [], over: false, closed: false,
    blocks: [], silent: [], usage: null, stopReason: null, stopped: false, started: false,
  });
  return { events: [] };
}

function streamFor(streamId) {
  const stream = streams.get(streamId);
  if (!stream) throw adapterError("invalid_request", `no open stream ${streamId}`);
  return stream;
}

function messageId(stream) { return stream.context.message_id ?? (stream.context.message_id = ulid()); }

function wireFormat(stream, message) {
  return new ProtocolError({ kind: "wire_format", message, event: stream.frameIndex, offset: stream.offset });
}

function parseInput(partial) {
  if (!partial) return {};
  try {
    const value = JSON.parse(partial);
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch { return {}; }
}

function toolEnd(stream, index) {
  const block = stream.blocks[index];
  block.input = parseInput(block.partial);
  block.ended = true;
  return { type: "tool_use_end", message_id: messageId(stream), content_block_index: index, tool_use_id: block.id, final_input: block.input };
}

function finalContent(blocks) {
  return blocks.filter(Boolean).map((block) => {
    switch (block.type) {
      case "text": return { type: "text", text: block.text };
      case "thinking": return { type: "thinking", text: block.text, signature: block.signature ?? null };
      case "redacted_thinking": return { type: "redacted_thinking", data: block.data };
      case "tool_use": return { type: "tool_use", id: block.id, name: block.name, input: block.input ?? parseInput(block.partial) };
      default: return block.raw;
    }
  });
}

function complete(stream, reason) {
  stream.over = true;
  const blocks = finalContent(stream.blocks);
  return {
    type: "message_complete", message_id: messageId(stream), stop_reason: reason,
    final_content: blocks.length ? blocks : [{ type: "text", text: "" }],
    usage: stream.usage ? tokenUsage(stream.usage) : null,
  };
}

function startMessage(stream, out) {
  if (stream.started) return;
  stream.started = true;
  out.push({ type: "message_start", message_id: messageId(stream), role: "assistant", model: contextModel(stream.context) });
}

function blockAt(stream, index, type, out) {
  startMessage(stream, out);
  let block = stream.blocks[index];
  if (!block) {
    block = type === "text" ? { type: "text", text: "" } : { type: "thinking", text: "", signature: null };
    stream.blocks[index] = block;
  }
  return block;
}

function onDelta(stream, data, out) {
  const index = data.contentBlockIndex ?? 0;
  const delta = data.delta || {};
  const id = messageId(stream);
  if (delta.text !== undefined) {
    const block = blockAt(stream, index, "text", out);
    block.text += delta.text;
    out.push({ type: "text_delta", message_id: id, content_block_index: index, text: delta.text });
  } else if (stream.blocks[index] && stream.blocks[index].type === "other" && (delta.toolUse || delta.toolResult)) {
    const block = stream.blocks[index];
    if (delta.toolUse) block.partial += delta.toolUse.input ?? "";
    if (Array.isArray(delta.toolResult)) block.content.push(...delta.toolResult);
  } else if (delta.toolUse) {
    const block = stream.blocks[index];
    if (!block || block.type !== "tool_use") throw wireFormat(stream, `a toolUse delta for block ${index}, which no contentBlockStart began`);
    const piece = delta.toolUse.input ?? "";
    block.partial += piece;
    out.push({ type: "tool_use_input_delta", message_id: id, content_block_index: index, tool_use_id: block.id, partial_json: piece });
  } else if (delta.reasoningContent) {
    const reasoning = delta.reasoningContent;
    if (reasoning.redactedContent !== undefined) {
      startMessage(stream, out);
      let block = stream.blocks[index];
      if (!block) {
        // no canonical event carries it: a cancel puts it back by where it came in the events
        block = stream.blocks[index] = { type: "redacted_thinking", data: "" };
        stream.silent.push({ index, at: stream.events.length + out.length, block });
      }
      block.data += reasoning.redactedContent;
      return;
    }
    const block = blockAt(stream, index, "thinking", out);
    if (reasoning.text !== undefined) {
      block.text += reasoning.text;
      out.push({ type: "thinking_delta", message_id: id, content_block_index: index, text: reasoning.text, signature: null });
    }
    if (reasoning.signature !== undefined) block.signature = (block.signature || "") + reasoning.signature;
  } else {
    // a delta member this adapter does not know: kept whole at its block's place
    startMessage(stream, out);
    const member = Object.keys(delta)[0] ?? "unknown";
    if (!stream.blocks[index]) {
      stream.blocks[index] = { type: "other", raw: keepWhole(member, delta[member]) };
      stream.silent.push({ index, at: stream.events.length + out.length, block: stream.blocks[index] });
    }
  }
}

function onStart(stream, data, out) {
  const index = data.contentBlockIndex ?? 0;
  const start = data.start || {};
  startMessage(stream, out);
  const server = start.toolUse && start.toolUse.type !== undefined && start.toolUse.type !== "tool_use";
  if (server || start.toolResult) {
    // a server tool's call (Nova's code interpreter) and its result, both in the reply: no
    // canonical tool call, each kept whole (spec §10.3) once its block stops
    const member = server ? "toolUse" : "toolResult";
    const block = { type: "other", member, start: start[member], partial: "", content: [], raw: keepWhole(member, start[member]) };
    stream.blocks[index] = block;
    stream.silent.push({ index, at: stream.events.length + out.length, block });
  } else if (start.toolUse) {
    const canonical = canonicalFor(stream.context.session_id, start.toolUse.toolUseId);
    stream.blocks[index] = { type: "tool_use", id: canonical, name: start.toolUse.name, partial: "" };
    out.push({ type: "tool_use_start", message_id: messageId(stream), content_block_index: index, tool_use_id: canonical, tool_name: start.toolUse.name });
  }
}

function onStop(stream, data, out) {
  const index = data.contentBlockIndex ?? 0;
  const block = stream.blocks[index];
  if (!block) return;
  if (block.type === "tool_use" && !block.ended) out.push(toolEnd(stream, index));
  else if (block.type === "other" && block.member === "toolUse") {
    block.raw = keepWhole("toolUse", { ...block.start, input: parseInput(block.partial) });
  } else if (block.type === "other" && block.member === "toolResult") {
    block.raw = keepWhole("toolResult", { ...block.start, content: block.content });
  }
  else if (block.type === "thinking") {
    out.push({ type: "thinking_delta", message_id: messageId(stream), content_block_index: index, text: "", signature: block.signature ?? null });
  }
}

const STREAM_EXCEPTION_STATUS = {
  internalServerException: 500, modelStreamErrorException: 424, serviceUnavailableException: 503,
  throttlingException: 429, validationException: 400, modelTimeoutException: 408,
};

function onMessage(stream, message, out) {
  const type = message.headers[":message-type"];
  let data = {};
  const text = message.payload.toString("utf8");
  if (text.trim()) {
    try { data = JSON.parse(text); } catch {
      throw new ProtocolError({ kind: "wire_format", message: `event stream message ${message.index}: its payload is not JSON`, event: message.index, offset: message.offset });
    }
  }
  if (type === "exception" || type === "error") {
    const name = type === "exception" ? message.headers[":exception-type"] : message.headers[":error-code"];
    const said = data.message || data.Message || message.headers[":error-message"] || "stream error";
    out.push(complete(stream, "error"));
    const errorClass = errorClassFor(STREAM_EXCEPTION_STATUS[name] ?? null, name, said);
    throw adapterError(errorClass, `${name}: ${said}`, {
      provider_status: STREAM_EXCEPTION_STATUS[name] ?? null,
      request_id: stream.context.request_id ?? null, retryable: retryable(errorClass),
    });
  }
  if (type !== "event") return;
  switch (message.headers[":event-type"]) {
    case "messageStart": startMessage(stream, out); break;
    case "contentBlockStart": onStart(stream, data, out); break;
    case "contentBlockDelta": onDelta(stream, data, out); break;
    case "contentBlockStop": onStop(stream, data, out); break;
    case "messageStop":
      startMessage(stream, out);
      stream.stopReason = data.stopReason ?? null;
      stream.stopped = true;
      break;
    case "metadata":
      stream.usage = data.usage || null;
      if (stream.stopped) out.push(complete(stream, stopReason(stream.stopReason)));
      break;
    default: break; // an event this adapter does not know
  }
}

function drain(stream, out) {
  for (const message of takeMessages(stream)) {
    if (stream.over) break;
    onMessage(stream, message, out);
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
  if (stream.over) return { events: [] };
  const out = [];
  return withEvents(stream, out, () => {
    stream.buffer = Buffer.concat([stream.buffer, Buffer.from(data, "base64")]);
    drain(stream, out);
  });
}

function closeStream({ stream_id: streamId, abandon }) {
  const stream = streamFor(streamId);
  if (abandon) { streams.delete(streamId); return { events: [] }; }
  const out = [];
  const result = withEvents(stream, out, () => {
    if (stream.over) return;
    drain(stream, out);
    if (stream.buffer.length) {
      throw wireFormat(stream, `the stream ended inside event stream message ${stream.frameIndex} (${stream.buffer.length} bytes of it came)`);
    }
    if (stream.stopped) { out.push(complete(stream, stopReason(stream.stopReason))); return; }
    throw wireFormat(stream, "the stream ended before messageStop");
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
    const replay = { ...stream, blocks: [], over: false };
    const open = new Map();
    for (const { index, at, block } of stream.silent) if (at < delivered) replay.blocks[index] = block;
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

function newMessage(sessionId, role, content, extra = {}) {
  const metadata = { status: "complete", ...extra };
  return { id: ulid(), session_id: sessionId, role, content, metadata, created_at: nowTimestamp(), schema_version: 1 };
}

function readSystem(block) {
  if (block.text !== undefined) return { type: "text", text: block.text };
  const member = Object.keys(block)[0] ?? "unknown";
  return keepWhole(member, block[member]);
}

function readRequest({ body, url, session_id: given }) {
  const sessionId = given ?? ulid();
  const { model: pathModel, stream } = readPath(url);
  const model = canonicalModel(pathModel ?? body.modelId ?? "unknown");
  const messages = [];
  if (Array.isArray(body.system) && body.system.length) {
    messages.push(newMessage(sessionId, "system", body.system.map(readSystem)));
  }
  for (const wire of body.messages || []) {
    const blocks = wire.content || [];
    if (wire.role === "assistant") {
      const { content, extras } = readContent(sessionId, blocks);
      const metadata = assistantMetadata(model);
      if (extras) metadata.provider_raw = { [NAME]: { blocks: extras } };
      messages.push(newMessage(sessionId, "assistant", content.length ? content : [{ type: "text", text: "" }], metadata));
      continue;
    }
    let others = [];
    const flush = () => {
      if (others.length) messages.push(newMessage(sessionId, "user", others.map((block) => readBlock(sessionId, block))));
      others = [];
    };
    for (const block of blocks) {
      if (!block.toolResult) { others.push(block); continue; }
      flush();
      const result = block.toolResult;
      const toolUseId = canonicalFor(sessionId, result.toolUseId);
      const content = (result.content || []).map((inner) => readBlock(sessionId, inner));
      const canonical = { type: "tool_result", tool_use_id: toolUseId, content, is_error: result.status === "error" };
      const extra = { parent_tool_use_id: toolUseId };
      if (result.status === "success") extra.provider_raw = { [NAME]: { status: "success" } };
      messages.push(newMessage(sessionId, "tool", [canonical], extra));
    }
    flush();
  }
  const inference = { ...(body.inferenceConfig || {}) };
  const maxTokens = inference.maxTokens ?? null;
  const temperature = inference.temperature ?? null;
  const stopSequences = inference.stopSequences ?? [];
  delete inference.maxTokens; delete inference.temperature; delete inference.stopSequences;
  const requestRaw = {};
  if (Object.keys(inference).length) requestRaw.inference = inference;
  // an empty system list or inferenceConfig the request sent is sent again
  const empty = [];
  if (Array.isArray(body.system) && !body.system.length) empty.push("system");
  if (body.inferenceConfig && !Object.keys(body.inferenceConfig).length) empty.push("inferenceConfig");
  if (empty.length) requestRaw.empty = empty;
  const tools = [];
  const providerTools = [];
  const toolConfig = body.toolConfig || {};
  for (const tool of toolConfig.tools || []) {
    const spec = tool.toolSpec;
    if (spec && spec.inputSchema && spec.inputSchema.json) {
      tools.push({ name: spec.name, description: spec.description ?? "", input_schema: spec.inputSchema.json, side_effects: "none" });
    } else providerTools.push(tool);
  }
  if (toolConfig.toolChoice !== undefined) requestRaw.tool_choice = toolConfig.toolChoice;
  const known = new Set(["messages", "system", "inferenceConfig", "toolConfig", "modelId"]);
  const extra = Object.fromEntries(Object.entries(body).filter(([key]) => !known.has(key)));
  const options = {
    model, max_output_tokens: maxTokens, temperature, stop_sequences: stopSequences, stream: stream === true,
    output_schema: null, extra, provider_tools: providerTools,
    provider_raw: Object.keys(requestRaw).length ? { [NAME]: requestRaw } : {},
  };
  return { messages, tools, options };
}

// ---------------------------------------------------------------- estimate

// An offline heuristic: four characters a token for what the model reads (text, tool names,
// inputs and schemas), a flat count per image, and long blobs (a document's bytes) counted
// by a flat count too, never by their base64 length.
const IMAGE_TOKENS = 1450;
const BLOB_TOKENS = 100;

function textTokens(text) { return Math.ceil(String(text ?? "").length / 4); }

function valueTokens(value) {
  let blobs = 0;
  const json = JSON.stringify(value ?? null, (key, item) => {
    if (typeof item === "string" && item.length > 256 && /^[A-Za-z0-9+/=_-]+$/.test(item)) { blobs += 1; return ""; }
    return item;
  });
  return textTokens(json) + blobs * BLOB_TOKENS;
}

function blockTokens(block) {
  switch (block.type) {
    // a `<think>` span in an earlier turn's text is reasoning too (Qwen3's, DeepSeek-R1's)
    case "text": return textTokens(String(block.text ?? "").replace(/<think>[\s\S]*?<\/think>/g, ""));
    // reasoning of earlier turns is left out of the context by the models that write it
    case "thinking": return 0;
    case "redacted_thinking": return 0;
    case "image": return IMAGE_TOKENS;
    case "tool_use": return textTokens(block.name) + valueTokens(block.input) + 5;
    case "tool_result": return 5 + (block.content || []).reduce((sum, inner) => sum + blockTokens(inner), 0);
    default: {
      if (typeof block.type === "string" && block.type.startsWith(PROVIDER + ":")) {
        const member = block[block.type.slice(PROVIDER.length + 1)];
        if (member && typeof member === "object" && (member.format !== undefined && member.source !== undefined)) {
          return String(block.type).endsWith(":image") ? IMAGE_TOKENS : BLOB_TOKENS;
        }
        return valueTokens(member);
      }
      return valueTokens(block);
    }
  }
}

// what a model's own prompt template adds: a tool use system prompt (Anthropic documents
// some 350 tokens for Claude; Nova's is as long, Llama's shorter), and gpt-oss's
// harmony system message
function templateTokens(model, tools) {
  const name = wireModel(String(model ?? "")).replace(/^(us|eu|apac|global)\./, "");
  let tokens = name.startsWith("openai.gpt-oss") ? 60 : 0;
  if (tools && tools.length) tokens += /^(anthropic|amazon)\./.test(name) ? 340 : name.startsWith("meta.") ? 100 : 0;
  return tokens;
}

function estimate({ messages, tools, model }) {
  let tokens = 3 + templateTokens(model, tools);
  for (const message of messages || []) {
    tokens += 4;
    for (const block of message.content || []) tokens += blockTokens(block);
  }
  for (const tool of tools || []) tokens += 10 + textTokens(tool.name) + textTokens(tool.description) + valueTokens(tool.input_schema);
  return { tokens };
}

// ---------------------------------------------------------------- hello, the loop

const CAPABILITIES = {
  supports_thinking: true, supports_images: true, supports_tools: true, supports_system_prompt: true,
  supports_structured_output: false, supports_streaming: true, supports_streaming_tool_calls: true,
  supports_parallel_tool_calls: true, supports_prompt_caching: false, supports_system_messages_in_list: false,
  max_context_tokens: 200000, max_output_tokens: 64000,
  accepted_image_media_types: Object.keys(IMAGE_FORMATS),
};

function hello({ protocol_versions: versions }) {
  if (!versions.includes(1)) throw adapterError("invalid_request", `this child speaks protocol 1, offered ${versions}`);
  return {
    protocol_version: 1,
    adapter: {
      name: NAME, provider: PROVIDER, wire_api: "bedrock-converse",
      language: "javascript", language_version: `node ${process.versions.node}`,
      capabilities: CAPABILITIES, provider_tool_id: "^tooluse_[A-Za-z0-9_-]+$",
      operations: ["render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"],
      cassette_folders: ["bedrock"], tool_errors_in_band: null, gaps: [],
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
