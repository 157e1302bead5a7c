// A turnspec exec-protocol child for Claude on Google Vertex AI (rawPredict / streamRawPredict),
// written from docs/exec-protocol.md, `turnspec schema export --format exec`, `turnspec wire show
// vertex-anthropic-messages`, `turnspec rule` and Anthropic's and Google's own documentation:
//   https://docs.anthropic.com/en/api/claude-on-vertex-ai ("model is not passed in the request
//   body", "anthropic_version is passed in the request body ... vertex-2023-10-16")
//   https://cloud.google.com/vertex-ai/generative-ai/docs/partner-models/claude/use-claude
//   https://docs.anthropic.com/en/api/messages, .../build-with-claude/streaming, .../api/errors
// Node's standard library only. TS_VERTEX_DEFECT plants one defect (tests).

import * as readline from "node:readline";
import { randomBytes } from "node:crypto";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Obj = { [k: string]: Json };
type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const NAME = "ts-vertex";
const PROVIDER = "anthropic";
const VERSION = "vertex-2023-10-16";
const DEFECT = process.env.TS_VERTEX_DEFECT ?? "";
const PROJECT = process.env.TS_VERTEX_PROJECT ?? "my-project";
const LOCATION = process.env.TS_VERTEX_LOCATION ?? "global";
const IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];

// ---------------------------------------------------------------- errors and logs

class ProtocolError extends Error {
  constructor(public payload: Obj) {
    super(String(payload.message));
  }
}

function adapterError(cls: string, message: string, status: number | null, requestId: string | null, retryAfter: number | null): ProtocolError {
  return new ProtocolError({
    kind: "adapter_error", error_class: cls, message, provider_status: status, request_id: requestId,
    retryable: ["rate_limit", "server_error", "network"].includes(cls), retry_after_seconds: retryAfter,
  });
}

let logs: Obj[] = [];

function dropped(sessionId: string, messageId: string, blockType: string, reason: string): void {
  logs.push({
    level: "warning",
    message: `${NAME}: dropped ${blockType} block of message ${messageId} (session ${sessionId}): ${reason}`,
    fields: { event: "block_dropped", adapter: NAME, session_id: sessionId, message_id: messageId, block_type: blockType, reason },
  });
}

// ---------------------------------------------------------------- ids

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
let lastTime = 0;
let lastRand: number[] = [];

function ulid(): string {
  const now = Date.now();
  if (now <= lastTime && lastRand.length) {
    let i = lastRand.length - 1;
    while (i >= 0 && lastRand[i] === 31) lastRand[i--] = 0;
    if (i >= 0) lastRand[i]++;
  } else {
    lastTime = now;
    const bytes = randomBytes(16);
    lastRand = Array.from({ length: 16 }, (_, k) => bytes[k] % 32);
    lastRand[0] &= 7; // leave room to increment
  }
  let t = lastTime;
  let time = "";
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time + lastRand.map((d) => CROCKFORD[d]).join("");
}

function nowStamp(): string {
  const d = new Date();
  return d.toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

interface IdMap { c2p: Map<string, string>; p2c: Map<string, string> }
const maps = new Map<string, IdMap>();

function idMap(session: string): IdMap {
  let m = maps.get(session);
  if (!m) {
    m = { c2p: new Map(), p2c: new Map() };
    maps.set(session, m);
  }
  return m;
}

function bind(session: string, canonical: string, provider: string): void {
  const m = idMap(session);
  const p = m.c2p.get(canonical);
  const c = m.p2c.get(provider);
  if ((p !== undefined && p !== provider) || (c !== undefined && c !== canonical)) {
    throw new ProtocolError({ kind: "adapter_error", error_class: "invalid_request", message: `binding ${canonical} to ${provider} breaks the map`, provider_status: null, request_id: null, retryable: false, retry_after_seconds: null });
  }
  m.c2p.set(canonical, provider);
  m.p2c.set(provider, canonical);
}

function canonicalFor(session: string, provider: string): string {
  const m = idMap(session);
  const known = m.p2c.get(provider);
  if (known !== undefined) return known;
  const c = "tu_" + ulid();
  bind(session, c, provider);
  return c;
}

function providerFor(session: string, canonical: string): string {
  const m = idMap(session);
  const known = m.c2p.get(canonical);
  if (known !== undefined) return known;
  if (/^toolu_[A-Za-z0-9_]+$/.test(canonical)) return canonical;
  const p = "toolu_" + canonical.replace(/[^A-Za-z0-9_]/g, "_");
  bind(session, canonical, p);
  return p;
}

// ---------------------------------------------------------------- render

function wireModel(model: string): string {
  const prefix = PROVIDER + ":";
  return model.startsWith(prefix) ? model.slice(prefix.length) : model;
}

function isCritical(meta: Any, key: string, index: number): boolean {
  const mark = meta?.[key];
  return mark === true || (Array.isArray(mark) && mark.includes(index));
}

function dropOrFail(msg: Any, key: string, index: number, blockType: string, reason: string): void {
  if (isCritical(msg.metadata, key, index)) {
    throw new ProtocolError({ kind: "critical_block", message: `${blockType} block ${index} of message ${msg.id} is critical and ${reason}`, adapter: NAME, session_id: msg.session_id, message_id: msg.id, block_type: blockType, reason });
  }
  dropped(msg.session_id, msg.id, blockType, reason);
}

function wireImage(b: Any): Obj | null {
  if (b.source?.kind === "base64") return { type: "base64", media_type: b.media_type, data: b.source.data };
  if (b.source?.kind === "url") return { type: "url", url: b.source.data };
  return null;
}

function userBlock(b: Any, msg: Any, key: string, i: number, extras: Any): Obj | null {
  let out: Obj | null = null;
  if (b.type === "text") out = { type: "text", text: b.text };
  else if (b.type === "image") {
    const src = IMAGE_TYPES.includes(b.media_type) ? wireImage(b) : null;
    if (src === null) {
      dropOrFail(msg, key, i, "image", b.source?.kind === "file_ref" ? "no file references on this wire" : `media type ${b.media_type} not accepted`);
      return null;
    }
    out = { type: "image", source: src };
  } else {
    dropOrFail(msg, key, i, String(b.type), "no such block on this wire");
    return null;
  }
  return { ...out, ...(extras?.[i] ?? {}) };
}

function resultContent(content: Any[], msg: Any, key: string): Json[] {
  const out: Json[] = [];
  for (const [k, c] of content.entries()) {
    const w = userBlock(c, msg, key, k, null);
    if (w) out.push(w);
  }
  return out;
}

function assistantBlock(b: Any, msg: Any, key: string, i: number, extras: Any): Obj | null {
  const mine = msg.metadata?.provider === PROVIDER;
  let out: Obj | null;
  if (b.type === "text") out = { type: "text", text: b.text };
  else if (b.type === "tool_use") out = { type: "tool_use", id: providerFor(msg.session_id, b.id), name: b.name, input: b.input };
  else if (b.type === "thinking" || b.type === "redacted_thinking") {
    if (!mine) {
      dropOrFail(msg, key, i, b.type, "thinking of another provider");
      return null;
    }
    if (b.type === "redacted_thinking") out = { type: "redacted_thinking", data: b.data };
    else if (typeof b.signature === "string" && b.signature) out = { type: "thinking", thinking: b.text, signature: b.signature };
    else {
      dropOrFail(msg, key, i, b.type, "thinking without its signature cannot go back");
      return null;
    }
  } else if (b.type === "image") {
    dropOrFail(msg, key, i, "image", "no images in an assistant turn");
    return null;
  } else if (mine && !["tool_result"].includes(b.type)) out = { ...b }; // a server tool's block, kept whole
  else {
    dropOrFail(msg, key, i, String(b.type), "no such block on this wire");
    return null;
  }
  return { ...out, ...(extras?.[i] ?? {}) };
}

function renderMessages(messages: Any[], key: string): { system: Json[] | null; turns: Obj[] } {
  let system: Json[] | null = null;
  const turns: Obj[] = [];
  const push = (role: string, blocks: Json[]): void => {
    if (!blocks.length) return;
    const last = turns[turns.length - 1];
    if (last && last.role === role) (last.content as Json[]).push(...blocks);
    else turns.push({ role, content: blocks });
  };
  for (const msg of messages) {
    const extras = msg.metadata?.provider_raw?.[NAME]?.block_extras ?? null;
    const content: Any[] = msg.content ?? [];
    if (msg.role === "system") {
      system = system ?? [];
      for (const [i, b] of content.entries()) {
        if (b.type === "text") system.push({ type: "text", text: b.text, ...(extras?.[i] ?? {}) });
        else dropOrFail(msg, key, i, String(b.type), "a system prompt holds text only");
      }
    } else if (msg.role === "assistant") {
      push("assistant", content.map((b, i) => assistantBlock(b, msg, key, i, extras)).filter((x): x is Obj => x !== null));
    } else if (msg.role === "tool") {
      const blocks: Json[] = [];
      for (const [i, b] of content.entries()) {
        if (b.type !== "tool_result") {
          const w = userBlock(b, msg, key, i, extras);
          if (w) blocks.push(w);
          continue;
        }
        const r: Obj = { type: "tool_result", tool_use_id: providerFor(msg.session_id, b.tool_use_id), content: resultContent(b.content ?? [], msg, key) };
        if (b.is_error) r.is_error = true;
        blocks.push({ ...r, ...(extras?.[i] ?? {}) });
      }
      push("user", blocks);
    } else {
      push("user", content.map((b, i) => userBlock(b, msg, key, i, extras)).filter((x): x is Obj => x !== null));
    }
  }
  return { system, turns };
}

function render(p: Any): Obj {
  logs = logs ?? [];
  const o = p.options ?? {};
  const key = o.critical_key ?? "critical";
  const raw = o.provider_raw?.[NAME] ?? {};
  const { system, turns } = renderMessages(p.messages ?? [], key);
  const body: Obj = { anthropic_version: VERSION, max_tokens: o.max_output_tokens ?? 4096, messages: turns };
  if (system !== null) body.system = system;
  const tools: Json[] = (p.tools ?? []).map((t: Any, i: number) => {
    const w: Obj = { name: t.name, input_schema: t.input_schema };
    if (t.description) w.description = t.description;
    return { ...w, ...(raw.tool_extras?.[i] ?? {}) };
  });
  tools.push(...(o.provider_tools ?? []));
  if (tools.length) body.tools = tools;
  if (o.temperature !== null && o.temperature !== undefined) body.temperature = o.temperature;
  if (o.stop_sequences?.length) body.stop_sequences = o.stop_sequences;
  if (o.output_schema !== null && o.output_schema !== undefined) {
    logs.push({ level: "warning", message: `${NAME}: dropped option output_schema: no structured output on this wire`, fields: { event: "option_dropped", adapter: NAME, option: "output_schema", reason: "no structured output on this wire" } });
  }
  Object.assign(body, o.extra ?? {});
  const model = wireModel(String(o.model));
  const stream = o.stream === true;
  if (stream) body.stream = true;
  if (DEFECT === "model") body.model = model;
  const method = stream && DEFECT !== "stream" ? "streamRawPredict" : "rawPredict";
  const path = `/v1/projects/${raw.project ?? PROJECT}/locations/${raw.location ?? LOCATION}/publishers/anthropic/models/${model}:${method}`;
  return { method: "POST", path, headers: { "content-type": "application/json" }, body };
}

// ---------------------------------------------------------------- parse

const STOP: Record<string, string> = {
  end_turn: "end_turn", max_tokens: "max_tokens", stop_sequence: "stop_sequence", tool_use: "tool_use",
  pause_turn: "end_turn", refusal: "end_turn", model_context_window_exceeded: "max_tokens",
};

function stopReason(wire: string | null | undefined): string {
  if (DEFECT === "stop" && wire === "max_tokens") return "end_turn";
  return STOP[String(wire)] ?? "end_turn";
}

function usageOf(u: Any, latency: number): Obj | null {
  if (!u || typeof u !== "object") return null;
  let read = u.cache_read_input_tokens ?? 0;
  let write = u.cache_creation_input_tokens ?? 0;
  if (DEFECT === "usage") [read, write] = [write, read];
  return {
    input_tokens: u.input_tokens ?? 0, output_tokens: u.output_tokens ?? 0, cached_input_tokens: read,
    cache_creation_input_tokens: write, cost_usd: "0", pricing_version: "unpriced", latency_ms: latency,
  };
}

const ERROR_TYPES: Record<string, string> = {
  overloaded_error: "rate_limit", rate_limit_error: "rate_limit", authentication_error: "auth",
  permission_error: "auth", api_error: "server_error",
};

function statusClass(status: number | null): string {
  if (status === null) return "other";
  if (status === 401 || status === 403) return "auth";
  if (status === 408) return "network";
  if (status === 413) return "context_overflow";
  if (status === 429) return "rate_limit";
  if (status >= 500 && status < 600) return "server_error";
  if (status >= 400 && status < 500) return "invalid_request";
  return "other";
}

function errorClass(err: Any, status: number | null): string {
  const type = err?.type;
  const message = String(err?.message ?? "");
  if (type === "invalid_request_error" && /context|tokens exceeds|prompt is too long/.test(message)) return "context_overflow";
  if (typeof type === "string" && ERROR_TYPES[type]) return ERROR_TYPES[type];
  return statusClass(status);
}

function header(headers: Any, name: string): string | null {
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? String(v[0]) : String(v);
  }
  return null;
}

function retryAfter(headers: Any): number | null {
  const ms = header(headers, "retry-after-ms");
  if (ms !== null && Number.isFinite(Number(ms))) return Number(ms) / 1000;
  const s = header(headers, "retry-after");
  if (s !== null && Number.isFinite(Number(s))) return Number(s);
  return null;
}

function textOf(text: string): string {
  return DEFECT === "text" ? text.toUpperCase() : text;
}

function toolName(name: string): string {
  return DEFECT === "toolname" ? name + "_renamed" : name;
}

// `reply`: a response's or a stream's block (a planted defect alters those only, not a request read back)
function readBlock(b: Any, session: string, reply = true): { block: Obj; extras: Obj | null } {
  const { type } = b;
  let block: Obj;
  let known: string[];
  if (type === "text") [block, known] = [{ type: "text", text: reply ? textOf(b.text) : b.text }, ["type", "text"]];
  else if (type === "thinking") [block, known] = [{ type: "thinking", text: b.thinking, signature: b.signature ?? null }, ["type", "thinking", "signature"]];
  else if (type === "redacted_thinking") [block, known] = [{ type: "redacted_thinking", data: b.data }, ["type", "data"]];
  else if (type === "tool_use") [block, known] = [{ type: "tool_use", id: canonicalFor(session, b.id), name: reply ? toolName(b.name) : b.name, input: b.input ?? {} }, ["type", "id", "name", "input"]];
  else return { block: { ...b }, extras: null }; // a server tool's block (or one to come), kept whole
  const extras: Obj = {};
  for (const [k, v] of Object.entries(b)) if (!known.includes(k)) extras[k] = v as Json;
  return { block, extras: Object.keys(extras).length ? extras : null };
}

function readContent(content: Any[], session: string, reply = true): { blocks: Obj[]; extras: Obj } {
  const blocks: Obj[] = [];
  const extras: Obj = {};
  for (const b of content ?? []) {
    const r = readBlock(b, session, reply);
    if (r.extras) extras[String(blocks.length)] = r.extras;
    blocks.push(r.block);
  }
  return { blocks, extras };
}

function assistantMeta(model: string, usage: Obj | null, status: string, raw: Obj): Obj {
  return {
    model, provider: PROVIDER, routing: { mode: "default", chosen_model: model, reason: "no routing engine" },
    usage, status, provider_raw: { [NAME]: raw },
  };
}

function parse(p: Any): Obj {
  const r = p.response ?? {};
  const ctx = p.context ?? {};
  const status: number = r.status ?? 200;
  const body: Any = r.body ?? (r.body_base64 ? safeJson(Buffer.from(r.body_base64, "base64").toString("utf8")) : null);
  const requestId = header(r.headers, "request-id") ?? (typeof body?.request_id === "string" ? body.request_id : null) ?? ctx.request_id ?? null;
  if (status >= 400 || body?.type === "error" || (body && typeof body === "object" && body.error && !body.content)) {
    const err = body?.error ?? {};
    throw adapterError(errorClass(err, status >= 400 ? status : (typeof err.code === "number" ? err.code : null)), String(err.message ?? `HTTP ${status}`), status, requestId, retryAfter(r.headers));
  }
  if (!body || typeof body !== "object" || !Array.isArray(body.content)) {
    throw new ProtocolError({ kind: "wire_format", message: "the response is no Messages object", event: null, line: null, offset: null });
  }
  const session = ctx.session_id;
  const { blocks, extras } = readContent(body.content, session);
  if (!blocks.length) blocks.push({ type: "text", text: "" });
  const model = body.model ? `${PROVIDER}:${body.model}` : ctx.model ?? `${PROVIDER}:unknown`;
  const reason = stopReason(body.stop_reason);
  const raw: Obj = { stop_reason: body.stop_reason ?? null, id: body.id ?? null };
  if (Object.keys(extras).length) raw.block_extras = extras;
  const message = {
    id: ctx.message_id ?? ulid(), session_id: session, role: "assistant", content: blocks,
    metadata: assistantMeta(model, usageOf(body.usage, ctx.latency_ms ?? 0), reason === "error" ? "error" : "complete", raw),
    created_at: ctx.created_at ?? nowStamp(), schema_version: 1,
  };
  return { message };
}

function safeJson(s: string): Any {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------- streams

interface Block { wire: Any; block: Obj; open: boolean; partial: string; whole: boolean; doneAt: number }

class Stream {
  buf = Buffer.alloc(0);
  events: Obj[] = [];
  blocks = new Map<number, Block>();
  messageId: string;
  usage: Any = null;
  wireStop: string | null = null;
  over = false;
  closed = false;
  started = false;

  constructor(public ctx: Any) {
    this.messageId = ctx.message_id ?? ulid();
  }

  feed(data: Buffer): Obj[] {
    this.buf = Buffer.concat([this.buf, data]);
    const out: Obj[] = [];
    for (;;) {
      const text = this.buf.toString("latin1");
      const m = /\r?\n\r?\n/.exec(text);
      if (!m) break;
      const raw = this.buf.subarray(0, m.index).toString("utf8");
      this.buf = this.buf.subarray(m.index + m[0].length);
      this.onEvent(raw, out);
      if (this.over) break;
    }
    return out;
  }

  close(): Obj[] {
    const out: Obj[] = [];
    if (!this.over && this.buf.toString("utf8").trim()) this.onEvent(this.buf.toString("utf8"), out);
    this.buf = Buffer.alloc(0);
    if (!this.over) {
      this.over = true;
      throw new ProtocolError({ kind: "wire_format", message: "the stream ended before message_stop", event: this.events.length, line: null, offset: null, events: out });
    }
    return out;
  }

  private emit(out: Obj[], e: Obj): void {
    const ev = { message_id: this.messageId, ...e };
    out.push(ev);
    this.events.push(ev);
  }

  private onEvent(raw: string, out: Obj[]): void {
    const data = raw.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
    if (!data) return;
    const ev = safeJson(data);
    if (!ev || typeof ev !== "object") {
      this.over = true;
      throw new ProtocolError({ kind: "wire_format", message: "an SSE data line is not JSON", event: this.events.length, line: null, offset: null, events: out });
    }
    try {
      this.handle(ev, out);
    } catch (e) {
      this.over = true;
      if (e instanceof ProtocolError) e.payload.events = out;
      throw e;
    }
  }

  private handle(ev: Any, out: Obj[]): void {
    const session = this.ctx.session_id;
    switch (ev.type) {
      case "message_start": {
        this.started = true;
        this.usage = { ...(ev.message?.usage ?? {}) };
        const model = ev.message?.model ? `${PROVIDER}:${ev.message.model}` : this.ctx.model ?? `${PROVIDER}:unknown`;
        this.emit(out, { type: "message_start", role: "assistant", model });
        break;
      }
      case "content_block_start": {
        const cb = ev.content_block ?? {};
        const index: number = ev.index;
        const { block } = readBlock(cb, session);
        const whole = !["text", "thinking", "tool_use"].includes(cb.type);
        this.blocks.set(index, { wire: { ...cb }, block, open: true, partial: "", whole, doneAt: -1 });
        if (cb.type === "text") {
          block.text = "";
          if (cb.text) this.text(index, cb.text, out);
        } else if (cb.type === "thinking") {
          block.text = "";
          block.signature = null;
          if (cb.thinking) this.emit(out, { type: "thinking_delta", content_block_index: index, text: cb.thinking });
          block.text = cb.thinking ?? "";
        } else if (cb.type === "tool_use") {
          block.input = {};
          this.emit(out, { type: "tool_use_start", content_block_index: index, tool_use_id: block.id, tool_name: block.name });
        }
        break;
      }
      case "content_block_delta": this.delta(ev, out); break;
      case "content_block_stop": {
        const b = this.blocks.get(ev.index);
        if (!b) break;
        b.open = false;
        if (b.block.type === "tool_use" && !b.whole) {
          const input = b.partial.trim() ? safeJson(b.partial) : {};
          if (!input || typeof input !== "object" || Array.isArray(input)) {
            throw new ProtocolError({ kind: "wire_format", message: `tool input of block ${ev.index} is no JSON object`, event: this.events.length, line: null, offset: null });
          }
          b.block.input = input;
          this.emit(out, { type: "tool_use_end", content_block_index: ev.index, tool_use_id: b.block.id, final_input: input });
        } else if (b.whole) {
          if (b.partial.trim() && b.wire.type === "server_tool_use") b.wire.input = safeJson(b.partial) ?? b.wire.input;
          b.block = readBlock(b.wire, session).block;
        }
        b.doneAt = this.events.length;
        break;
      }
      case "message_delta":
        if (ev.delta?.stop_reason !== undefined) this.wireStop = ev.delta.stop_reason;
        Object.assign(this.usage ?? (this.usage = {}), ev.usage ?? {});
        break;
      case "message_stop":
        this.emit(out, { type: "message_complete", stop_reason: stopReason(this.wireStop), final_content: this.content(Infinity), usage: usageOf(this.usage, this.ctx.latency_ms ?? 0) });
        this.over = true;
        break;
      case "error": {
        const err = ev.error ?? {};
        this.emit(out, { type: "message_complete", stop_reason: "error", final_content: this.content(Infinity), usage: usageOf(this.usage, this.ctx.latency_ms ?? 0) });
        const status = typeof err.code === "number" ? err.code : null;
        throw adapterError(errorClass(err, status), String(err.message ?? "stream error"), status, this.ctx.request_id ?? null, null);
      }
      default: break; // ping, and events to come
    }
  }

  private text(index: number, text: string, out: Obj[]): void {
    const t = textOf(text);
    const b = this.blocks.get(index)!;
    b.block.text = String(b.block.text) + t;
    this.emit(out, { type: "text_delta", content_block_index: index, text: t });
  }

  private delta(ev: Any, out: Obj[]): void {
    const b = this.blocks.get(ev.index);
    const d = ev.delta ?? {};
    if (!b) return;
    if (d.type === "text_delta") this.text(ev.index, d.text, out);
    else if (d.type === "thinking_delta") {
      b.block.text = String(b.block.text) + d.thinking;
      this.emit(out, { type: "thinking_delta", content_block_index: ev.index, text: d.thinking });
    } else if (d.type === "signature_delta") {
      b.block.signature = d.signature;
      this.emit(out, { type: "thinking_delta", content_block_index: ev.index, text: "", signature: d.signature });
    } else if (d.type === "input_json_delta") {
      b.partial += d.partial_json;
      if (!b.whole) this.emit(out, { type: "tool_use_input_delta", content_block_index: ev.index, tool_use_id: b.block.id, partial_json: d.partial_json });
    } else if (d.type === "citations_delta") {
      const cites = Array.isArray(b.wire.citations) ? b.wire.citations : [];
      cites.push(d.citation);
      b.wire.citations = cites;
    }
  }

  // the content of the stream's first `delivered` events (Infinity: all)
  content(delivered: number): Obj[] {
    if (delivered === Infinity) {
      const all = [...this.blocks.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b.block);
      return all.length ? all : [{ type: "text", text: "" }];
    }
    const seen = this.events.slice(0, delivered);
    const out = new Map<number, Obj>();
    for (const e of seen) {
      const i = e.content_block_index as number;
      if (e.type === "text_delta") {
        const prev = out.get(i) ?? { type: "text", text: "" };
        prev.text = String(prev.text) + e.text;
        out.set(i, prev);
      } else if (e.type === "thinking_delta") {
        const prev = out.get(i) ?? { type: "thinking", text: "", signature: null };
        prev.text = String(prev.text) + e.text;
        if (e.signature) prev.signature = e.signature;
        out.set(i, prev);
      } else if (e.type === "tool_use_start") {
        out.set(i, { type: "tool_use", id: e.tool_use_id, name: e.tool_name, input: {}, partial: "" });
      } else if (e.type === "tool_use_input_delta") {
        const prev = out.get(i)!;
        prev.partial = String(prev.partial) + e.partial_json;
      } else if (e.type === "tool_use_end") {
        out.get(i)!.input = e.final_input;
        out.get(i)!.ended = true;
      }
    }
    for (const [i, b] of this.blocks) {
      if ((b.whole || b.block.type === "redacted_thinking") && b.doneAt >= 0 && delivered > b.doneAt) out.set(i, b.block);
    }
    return [...out.entries()].sort((a, b) => a[0] - b[0]).map(([, b]) => b);
  }
}

const streams = new Map<string, Stream>();

function cancel(p: Any): Obj {
  const s = [...streams.values()].find((x) => x.ctx.request_id === p.request_id);
  if (!s || s.over && s.closed) return { in_flight: false, events: [] };
  const delivered = Math.min(p.delivered ?? 0, s.events.length);
  const partial = s.content(delivered);
  const events: Obj[] = [];
  for (const [, b] of partial.entries()) {
    if (b.type === "tool_use" && !b.ended) {
      const input = String(b.partial ?? "").trim() ? safeJson(String(b.partial)) : {};
      b.input = input && typeof input === "object" && !Array.isArray(input) ? input : {};
      events.push({ type: "tool_use_end", message_id: s.messageId, content_block_index: s.events.find((e) => e.type === "tool_use_start" && e.tool_use_id === b.id)!.content_block_index, tool_use_id: b.id, final_input: b.input });
    }
  }
  const final = partial.map((b) => (b.type === "tool_use" ? { type: "tool_use", id: b.id, name: b.name, input: b.input } : b));
  events.push({ type: "message_complete", message_id: s.messageId, stop_reason: "cancelled", final_content: final.length ? final : [{ type: "text", text: "" }], usage: usageOf(s.usage, s.ctx.latency_ms ?? 0) });
  s.over = true;
  s.closed = true;
  return { in_flight: true, events };
}


// ---------------------------------------------------------------- read_request

function urlParts(url: string | null): { model: string | null; stream: boolean | null; project: string | null; location: string | null } {
  const path = (url ?? "").split("?")[0];
  const m = /\/publishers\/anthropic\/models\/([^/]+):(rawPredict|streamRawPredict)\/?$/.exec(path);
  const pl = /\/projects\/([^/]+)\/locations\/([^/]+)\//.exec(path);
  return {
    model: m ? decodeURIComponent(m[1]) : null,
    stream: m ? m[2] === "streamRawPredict" : null,
    project: pl ? decodeURIComponent(pl[1]) : null,
    location: pl ? decodeURIComponent(pl[2]) : null,
  };
}

function canonBlock(b: Any, session: string): { block: Obj | null; extras: Obj | null } {
  const known: Record<string, string[]> = { text: ["type", "text"], image: ["type", "source"] };
  if (b.type === "text") {
    const extras = pick(b, known.text);
    return { block: { type: "text", text: b.text }, extras };
  }
  if (b.type === "image") {
    const src = b.source ?? {};
    const block = src.type === "url" ? { type: "image", media_type: mediaFromUrl(src.url), source: { kind: "url", data: src.url } } : { type: "image", media_type: src.media_type, source: { kind: "base64", data: src.data } };
    return { block, extras: pick(b, known.image) };
  }
  return readBlock(b, session, false);
}

function mediaFromUrl(url: string): string {
  const ext = /\.(png|gif|webp|jpe?g)(\?|$)/i.exec(url)?.[1]?.toLowerCase() ?? "jpeg";
  return `image/${ext === "jpg" ? "jpeg" : ext}`;
}

function pick(b: Any, known: string[]): Obj | null {
  const extras: Obj = {};
  for (const [k, v] of Object.entries(b)) if (!known.includes(k)) extras[k] = v as Json;
  return Object.keys(extras).length ? extras : null;
}

function blocksOf(content: Any): Any[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content ?? [];
}

function readMessages(body: Any, session: string, model: string): Obj[] {
  const out: Obj[] = [];
  const add = (role: string, content: Obj[], extras: Obj, meta: Obj = {}): void => {
    const m: Obj = { ...meta };
    if (Object.keys(extras).length) m.provider_raw = { ...((m.provider_raw as Obj) ?? {}), [NAME]: { ...(((m.provider_raw as Any)?.[NAME]) ?? {}), block_extras: extras } };
    out.push({ id: ulid(), session_id: session, role, content, metadata: m, created_at: nowStamp(), schema_version: 1 });
  };
  if (body.system !== undefined) {
    const extras: Obj = {};
    const blocks = blocksOf(body.system).map((b: Any, i: number) => {
      const e = pick(b, ["type", "text"]);
      if (e) extras[String(i)] = e;
      return { type: "text", text: b.text };
    });
    add("system", blocks, extras);
  }
  for (const turn of body.messages ?? []) {
    const blocks = blocksOf(turn.content);
    if (turn.role === "assistant") {
      const { blocks: content, extras } = readContent(blocks, session, false);
      const meta = assistantMeta(model, null, "complete", {});
      delete meta.provider_raw;
      add("assistant", content.length ? content : [{ type: "text", text: "" }], extras, meta);
      continue;
    }
    let rest: Obj[] = [];
    let restExtras: Obj = {};
    const flush = (): void => {
      if (rest.length) add("user", rest, restExtras);
      rest = [];
      restExtras = {};
    };
    for (const b of blocks) {
      if (b.type === "tool_result") {
        flush();
        const id = canonicalFor(session, b.tool_use_id);
        const inner = blocksOf(b.content).map((c: Any) => canonBlock(c, session).block).filter((x: Obj | null): x is Obj => x !== null);
        const r: Obj = { type: "tool_result", tool_use_id: id, content: inner };
        if (b.is_error !== undefined) r.is_error = b.is_error;
        const e = pick(b, ["type", "tool_use_id", "content", "is_error"]);
        add("tool", [r], e ? { "0": e } : {}, { parent_tool_use_id: id });
      } else {
        const { block, extras } = canonBlock(b, session);
        if (extras) restExtras[String(rest.length)] = extras;
        if (block) rest.push(block);
      }
    }
    flush();
  }
  return out;
}

const BODY_KEYS = ["anthropic_version", "messages", "system", "tools", "max_tokens", "temperature", "stop_sequences", "stream"];

function readRequest(p: Any): Obj {
  const body = p.body ?? {};
  const session = p.session_id;
  const parts = urlParts(p.url);
  const name = parts.model ?? body.model ?? "unknown";
  const model = `${PROVIDER}:${name}`;
  const tools: Obj[] = [];
  const providerTools: Json[] = [];
  const toolExtras: Obj = {};
  for (const t of body.tools ?? []) {
    if (t.type && t.type !== "custom") {
      providerTools.push(t);
      continue;
    }
    const e = pick(t, ["name", "description", "input_schema"]);
    if (e) toolExtras[String(tools.length)] = e;
    tools.push({ name: t.name, description: t.description ?? "", input_schema: t.input_schema ?? { type: "object" }, side_effects: "none" });
  }
  const raw: Obj = {};
  if (parts.project) raw.project = parts.project;
  if (parts.location) raw.location = parts.location;
  if (Object.keys(toolExtras).length) raw.tool_extras = toolExtras;
  const extra: Obj = {};
  for (const [k, v] of Object.entries(body)) if (!BODY_KEYS.includes(k) && k !== "model") extra[k] = v as Json;
  const options: Obj = {
    model, max_output_tokens: body.max_tokens ?? null, temperature: body.temperature ?? null,
    stop_sequences: body.stop_sequences ?? [], stream: parts.stream ?? body.stream === true, output_schema: null,
    extra, provider_tools: providerTools, provider_raw: Object.keys(raw).length ? { [NAME]: raw } : {}, critical_key: "critical",
  };
  return { messages: readMessages(body, session, model), tools, options };
}

// ---------------------------------------------------------------- hello, estimate, tool_id_map

function hello(p: Any): Obj {
  if (!(p.protocol_versions ?? []).includes(1)) throw new ProtocolError({ kind: "not_implemented", message: "this child speaks protocol version 1 only" });
  return {
    protocol_version: 1,
    adapter: {
      name: NAME, provider: PROVIDER, wire_api: "vertex-anthropic-messages", language: "typescript",
      language_version: `node ${process.versions.node}`, library: { name: "node:stdlib", version: process.versions.node },
      capabilities: {
        supports_thinking: true, supports_images: true, supports_tools: true, supports_system_prompt: true,
        supports_structured_output: false, supports_streaming: true, supports_streaming_tool_calls: true,
        supports_parallel_tool_calls: true, supports_prompt_caching: true, supports_system_messages_in_list: false,
        max_context_tokens: 200000, max_output_tokens: 64000, accepted_image_media_types: IMAGE_TYPES,
      },
      provider_tool_id: "^toolu_[A-Za-z0-9_]+$",
      operations: ["render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"],
      cassette_folders: ["vertex-anthropic"],
      tool_errors_in_band: null,
      gaps: [],
    },
  };
}

function estimate(p: Any): Obj {
  const text = JSON.stringify(p.messages ?? []) + JSON.stringify(p.tools ?? []);
  return { tokens: Math.max(1, Math.ceil(text.length / 4)) + ((p.tools ?? []).length ? 346 : 0) };
}

function toolIdMap(p: Any): Obj {
  const m = idMap(p.session_id);
  const [a, b] = p.args ?? [];
  switch (p.call) {
    case "canonical_for": return { value: canonicalFor(p.session_id, a) };
    case "provider_for": return { value: providerFor(p.session_id, a) };
    case "get_provider": return { value: m.c2p.get(a) ?? null };
    case "get_canonical": return { value: m.p2c.get(a) ?? null };
    case "bind": bind(p.session_id, a, b); return { value: null };
    case "pairs": return { value: [...m.c2p.entries()].map(([c, pr]) => [c, pr]) };
    default: throw new ProtocolError({ kind: "not_implemented", message: `tool_id_map call ${p.call}` });
  }
}

// ---------------------------------------------------------------- the loop

function streamOp(op: string, p: Any): Obj {
  if (op === "stream_open") {
    streams.set(p.stream_id, new Stream(p.context ?? {}));
    return { events: [] };
  }
  const s = streams.get(p.stream_id);
  if (!s) throw new ProtocolError({ kind: "wire_format", message: `unknown stream ${p.stream_id}`, event: null, line: null, offset: null });
  if (p.abandon) {
    streams.delete(p.stream_id);
    return { events: [] };
  }
  if (s.closed) return { events: [] };
  try {
    if (op === "stream_feed") return { events: s.over ? [] : s.feed(Buffer.from(p.data ?? "", "base64")) };
    const events = s.over ? [] : s.close();
    s.closed = true;
    return { events };
  } catch (e) {
    s.closed = true;
    throw e;
  }
}

function dispatch(op: string, p: Any): Obj {
  switch (op) {
    case "hello": return hello(p);
    case "render": return render(p);
    case "parse": return parse(p);
    case "stream_open": case "stream_feed": case "stream_close": return streamOp(op, p);
    case "cancel": return cancel(p);
    case "read_request": return readRequest(p);
    case "estimate": return estimate(p);
    case "tool_id_map": return toolIdMap(p);
    case "shutdown": return {};
    default: throw new ProtocolError({ kind: "not_implemented", message: `unknown operation ${op}` });
  }
}

function answer(req: Any): Obj {
  logs = [];
  try {
    return { id: req.id, ok: true, result: dispatch(String(req.op), req.params ?? {}), logs };
  } catch (e) {
    if (e instanceof ProtocolError) return { id: req.id, ok: false, error: e.payload, logs };
    const err = e instanceof Error ? e : new Error(String(e));
    return { id: req.id, ok: false, error: { kind: "crash", message: err.message, type: err.name, traceback: err.stack ?? String(err) }, logs };
  }
}

function main(): void {
  const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  let lineNo = 0;
  rl.on("line", (line) => {
    lineNo++;
    let req: Any;
    try {
      req = JSON.parse(line);
    } catch {
      process.stderr.write(`standard input line ${lineNo} is not JSON\n`);
      process.exit(2);
    }
    if (!req || typeof req !== "object" || Array.isArray(req)) {
      process.stderr.write(`standard input line ${lineNo} is not a JSON object\n`);
      process.exit(2);
    }
    process.stdout.write(JSON.stringify(answer(req)) + "\n");
    if (req.op === "shutdown") {
      rl.close();
      process.stdout.end(() => process.exit(0));
    }
  });
  rl.on("close", () => process.stdout.end(() => process.exit(0)));
}

main();
