// One stream (docs/exec-protocol.md, Streams): `doStream` on a response whose body is a
// `Feed`; each `stream_feed` chunk is pushed into it, and the parts the chunk produced are
// drained (the pipeline left to go idle: no part for a turn of the event loop and the body
// waiting for bytes again) and mapped to canonical stream events (canonical §7.4,
// streaming §5.3) before the feed is answered, so a cancel can land between chunks.

import { Feed, JsonArrayToSse, MAX_DRAIN_TURNS, turn } from "./capture.mjs";
import { Blocks, clean, stopReason, usageOf } from "./content.mjs";
import { ProtocolFailure, adapterError, streamClassOf, wireFormat, providerMessage } from "./errors.mjs";
import { ulid } from "./ids.mjs";
import { wireModel } from "./prompt.mjs";

export const PROBE = [{ role: "user", content: [{ type: "text", text: "turnspec replay" }] }];

const STREAM_TYPES = {
  "bedrock-converse": "application/vnd.amazon.eventstream",
};

function parseObject(text) {
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

/** The typed error of a stream's `error` part: a body the provider reported (classified
 * by the record's signals) or a body that broke its framing (wire_format). */
function streamFailure(config, error) {
  const name = String(error?.name ?? "");
  if (/JSONParse|TypeValidation|InvalidResponseData/.test(name)) {
    return wireFormat(`the AI SDK could not parse the stream: ${name}: ${String(error.message).slice(0, 300)}`);
  }
  if (name === "AI_APICallError") {
    // the provider's error event, which the package raised before the stream began (the
    // status is the package's guess: the stream itself began with a 200)
    const parsed = parseObject(error.responseBody ?? "");
    const body = parsed && !("error" in parsed) ? { type: "error", error: parsed } : parsed ?? { error: { message: error.message } };
    return adapterError(streamClassOf(config.signals ?? {}, body), providerMessage(body) || error.message);
  }
  const obj = error !== null && typeof error === "object" ? error : { message: String(error) };
  const body = "error" in obj ? obj : { type: "error", error: obj };
  const message = providerMessage(body) || String(error?.message ?? JSON.stringify(error));
  return adapterError(streamClassOf(config.signals ?? {}, body), message);
}

export class StreamSession {
  constructor(bridge, call, ctx) {
    this.bridge = bridge;
    this.config = bridge.config;
    this.ctx = ctx;
    this.mid = ctx.message_id || ulid();
    this.ids = bridge.ids.of(ctx.session_id);
    this.blocks = new Blocks(bridge.api.optionsKey, this.ids);
    this.byPart = new Map(); // V3 part id -> canonical block index
    this.open = null; // the canonical index of the thinking block whose signature waits
    this.events = []; // every event so far (a cancel replays the first `delivered`)
    this.out = []; // events not yet answered
    this.parts = 0;
    this.started = false;
    this.over = false;
    this.call = call; // whose log records the parts' warnings join
  }

  async start() {
    const reframe = this.bridge.api.jsonArrayStreams ? new JsonArrayToSse() : null;
    this.feed = new Feed(reframe);
    const type = STREAM_TYPES[this.config.wire_api] ?? "text/event-stream";
    const model = this.bridge.model(wireModel(this.ctx.model) || "turnspec-replay", this.feed.fetch({ "content-type": type }));
    this.abort = new AbortController();
    // not awaited: a provider may read the first parts before `doStream` resolves
    // (@ai-sdk/anthropic turns a first `error` event into a rejected APICallError)
    this.loop = this.read(model.doStream({ prompt: PROBE, abortSignal: this.abort.signal }));
    return this.drain();
  }

  async read(started) {
    try {
      const result = await started;
      this.reader = result.stream.getReader();
      for (;;) {
        const { done, value } = await this.reader.read();
        if (done) break;
        this.parts++;
        if (!this.over) this.part(value);
      }
    } catch (exc) {
      if (!this.over) this.fail(exc?.name === "AbortError" ? wireFormat("the stream was aborted") : streamFailure(this.config, exc));
    }
    if (this.pending && !this.over) this.fail(this.pending);
    this.ended = true;
  }

  async drain() {
    let seen = -1;
    for (let i = 0; i < MAX_DRAIN_TURNS; i++) {
      await turn();
      if (this.ended || this.over || (this.parts === seen && this.feed.waiting)) break;
      seen = this.parts;
    }
    const out = this.out;
    this.out = [];
    if (this.failure) {
      const failure = this.failure;
      this.failure = null;
      failure.error.events = out;
      throw failure;
    }
    return out;
  }

  async push(bytes) {
    if (this.over) return [];
    this.feed.push(bytes);
    return this.drain();
  }

  async close() {
    if (this.over) return [];
    this.feed.end();
    await this.loop;
    if (!this.over) this.complete();
    return this.drain();
  }

  abandon() {
    this.over = true;
    this.abort?.abort();
    this.feed?.end();
  }

  // -- V3 parts -> canonical events ----------------------------------------------------

  emit(event) {
    if (!this.started) {
      this.started = true;
      const first = { type: "message_start", message_id: this.mid, role: "assistant", model: this.model() };
      this.events.push(first);
      this.out.push(first);
    }
    if (event) {
      this.events.push(event);
      this.out.push(event);
    }
  }

  model() {
    return this.modelId ? `${this.config.provider}:${this.modelId}` : this.ctx.model || `${this.config.provider}:unknown`;
  }

  at(k) {
    return { message_id: this.mid, content_block_index: k };
  }

  /** The waiting signature of the open thinking block, on its final delta. */
  settle() {
    const k = this.open;
    this.open = null;
    if (k === null) return;
    const b = this.blocks.blocks[k];
    if (b.type === "thinking" && b.signature) this.emit({ type: "thinking_delta", ...this.at(k), text: "", signature: b.signature });
  }

  newBlock(block, partId) {
    this.settle();
    this.endTools();
    const k = this.blocks.blocks.length;
    this.blocks.blocks.push(block);
    if (partId !== undefined) this.byPart.set(partId, k);
    return k;
  }

  /** Tool calls whose input deltas already spell a JSON object end before the next block
   * starts: canonical indexes never go down (contract §5.2.5), while V3 lets a provider
   * (@ai-sdk/openai's chat model) send every `tool-call` at the end. */
  endTools() {
    this.blocks.blocks.forEach((b, k) => {
      if (b.type !== "tool_use" || b._ended || b._deltas === undefined) return;
      const input = parseObject(b._deltas === "" ? "{}" : b._deltas);
      if (input === null) return;
      b.input = input;
      b._ended = true;
      this.emit({ type: "tool_use_end", ...this.at(k), tool_use_id: b.id, final_input: input });
    });
  }

  signature(part, k) {
    const block = this.blocks.reasoning({ text: "", providerMetadata: part.providerMetadata });
    if (block.type === "thinking" && block.signature) this.blocks.blocks[k].signature = block.signature;
  }

  /** Gemini: a thoughtSignature on a text or call part opens a signature-only thinking block
   * before it (as the parse writes it); the part's text goes on in a new block. */
  geminiSigned(part) {
    const sig = this.bridge.api.optionsKey === "google" ? part.providerMetadata?.google?.thoughtSignature : undefined;
    if (typeof sig !== "string" || !sig) return false;
    const k = this.newBlock({ type: "thinking", text: "", signature: sig });
    this.emit({ type: "thinking_delta", ...this.at(k), text: "", signature: sig });
    return true;
  }

  part(p) {
    switch (p.type) {
      case "stream-start": // the warnings of the probe request, not of the recorded stream
        return;
      case "response-metadata":
        if (p.modelId) this.modelId = p.modelId;
        return;
      case "text-start":
        // opened on its first text (a Gemini signature rides on the part's deltas too)
        this.byPart.set(p.id, null);
        return;
      case "text-delta":
        return this.textDelta(p);
      case "text-end":
        return;
      case "reasoning-start":
        return this.reasoningStart(p);
      case "reasoning-delta":
        return this.reasoningDelta(p);
      case "reasoning-end": {
        const k = this.byPart.get(p.id);
        if (k != null && this.blocks.blocks[k].type === "thinking") this.signature(p, k);
        return;
      }
      case "tool-input-start":
        return this.toolStart(p);
      case "tool-input-delta":
        return this.toolDelta(p);
      case "tool-input-end":
        return;
      case "tool-call":
        return this.toolCall(p);
      case "finish":
        this.finish = p;
        if (this.pending) this.fail(this.pending);
        return;
      case "error":
        // the stream failed; the package still reports what it read (its `finish`, with the
        // usage so far), so the failure is answered once that arrives or the stream ends
        this.pending = this.pending ?? streamFailure(this.config, p.error);
        return;
      case "raw":
        return;
      default: {
        // a provider-executed tool result, a source, a file: a namespaced block, no delta
        const before = this.blocks.blocks.length;
        this.settle();
        this.blocks.add(p);
        if (this.blocks.blocks.length > before) this.emit(null);
      }
    }
  }

  textDelta(p) {
    const signed = this.geminiSigned(p);
    let k = this.byPart.get(p.id);
    if (!p.delta) {
      if (signed) this.byPart.set(p.id, null);
      return;
    }
    if (k == null || signed || this.blocks.blocks.length - 1 !== k) {
      k = this.newBlock({ type: "text", text: "" }, p.id);
    }
    this.blocks.blocks[k].text += p.delta;
    this.emit({ type: "text_delta", ...this.at(k), text: p.delta });
  }

  reasoningStart(p) {
    const md = p.providerMetadata?.[this.bridge.api.optionsKey] ?? {};
    if (typeof md.redactedData === "string") {
      this.newBlock({ type: "redacted_thinking", data: md.redactedData }, p.id);
      this.emit(null);
      return;
    }
    const item = this.bridge.api.optionsKey === "openai" ? md.itemId : undefined;
    const last = this.blocks.blocks.length - 1;
    if (item !== undefined && last >= 0 && this.blocks.blocks[last]._item === item) {
      this.byPart.set(p.id, last); // another summary part of the same reasoning item
      this.joinNext = last;
      this.signature(p, last);
      return;
    }
    const k = this.newBlock({ type: "thinking", text: "", signature: null, ...(item !== undefined ? { _item: item } : {}) }, p.id);
    this.open = k;
    this.signature(p, k);
    this.emit(null);
  }

  reasoningDelta(p) {
    const k = this.byPart.get(p.id);
    if (k == null) return;
    const b = this.blocks.blocks[k];
    if (b.type !== "thinking") return;
    this.signature(p, k);
    if (!p.delta) return;
    let text = p.delta;
    if (this.joinNext === k) {
      this.joinNext = undefined;
      if (b.text) text = `\n\n${text}`;
    }
    b.text += text;
    this.emit({ type: "thinking_delta", ...this.at(k), text });
  }

  toolStart(p) {
    if (p.providerExecuted) return;
    this.geminiSigned(p);
    const id = this.ids.canonicalFor(String(p.id));
    const k = this.newBlock({ type: "tool_use", id, name: String(p.toolName), input: {} }, p.id);
    this.blocks.blocks[k]._deltas = "";
    this.emit({ type: "tool_use_start", ...this.at(k), tool_use_id: id, tool_name: String(p.toolName) });
  }

  toolDelta(p) {
    const k = this.byPart.get(p.id);
    if (k == null || !p.delta) return;
    const b = this.blocks.blocks[k];
    b._deltas += p.delta;
    this.emit({ type: "tool_use_input_delta", ...this.at(k), tool_use_id: b.id, partial_json: p.delta });
  }

  toolCall(p) {
    if (p.providerExecuted) {
      this.settle();
      this.blocks.add(p);
      this.emit(null);
      return;
    }
    let k = this.byPart.get(p.toolCallId);
    if (k == null) {
      this.toolStart({ id: p.toolCallId, toolName: p.toolName, providerMetadata: p.providerMetadata });
      k = this.byPart.get(p.toolCallId);
      if (p.input) this.toolDelta({ id: p.toolCallId, delta: p.input });
    }
    const b = this.blocks.blocks[k];
    if (b._ended) return; // ended when the next block began, with the input its deltas spell
    b.input = this.blocks.toolUse(p).input;
    b._ended = true;
    this.emit({ type: "tool_use_end", ...this.at(k), tool_use_id: b.id, final_input: b.input });
  }

  content() {
    return this.blocks.blocks.map((b) => {
      const { _deltas, _ended, ...rest } = clean(b);
      return rest;
    });
  }

  complete(stop) {
    this.settle();
    const finish = this.finish;
    const reason = stop ?? (finish ? stopReason(this.config, finish.finishReason, finish.providerMetadata) : "error");
    const content = this.content();
    this.emit({
      type: "message_complete",
      message_id: this.mid,
      stop_reason: reason,
      final_content: content.length ? content : [{ type: "text", text: "" }],
      usage: finish ? usageOf(this.config, finish.usage) : null,
    });
    this.over = true;
  }

  fail(failure) {
    if (this.over) return;
    this.complete("error");
    this.failure = failure instanceof ProtocolFailure ? failure : streamFailure(this.config, failure);
    this.abort?.abort();
  }

  /** The events after a cancel landing right after the first `delivered` (contract §5.3):
   * one tool_use_end per call started and not ended, then message_complete(cancelled) with
   * the content those events built. */
  cancelAfter(delivered) {
    this.abandon();
    const seen = this.events.slice(0, delivered);
    const blocks = new Map();
    const partial = new Map();
    const openTools = new Map();
    for (const ev of seen) {
      const k = ev.content_block_index;
      if (ev.type === "text_delta") {
        const b = blocks.get(k) ?? { type: "text", text: "" };
        b.text += ev.text;
        blocks.set(k, b);
      } else if (ev.type === "thinking_delta") {
        const b = blocks.get(k) ?? { type: "thinking", text: "", signature: null };
        b.text += ev.text;
        if (ev.signature) b.signature = ev.signature;
        blocks.set(k, b);
      } else if (ev.type === "tool_use_start") {
        const b = { type: "tool_use", id: ev.tool_use_id, name: ev.tool_name, input: {} };
        blocks.set(k, b);
        openTools.set(k, b);
        partial.set(k, "");
      } else if (ev.type === "tool_use_input_delta") partial.set(k, (partial.get(k) ?? "") + ev.partial_json);
      else if (ev.type === "tool_use_end") {
        if (blocks.has(k)) blocks.get(k).input = ev.final_input;
        openTools.delete(k);
      }
    }
    const out = [];
    for (const [k, b] of [...openTools.entries()].sort((x, y) => x[0] - y[0])) {
      b.input = parseObject(partial.get(k) ?? "") ?? {};
      out.push({ type: "tool_use_end", ...this.at(k), tool_use_id: b.id, final_input: b.input });
    }
    // blocks that reached the client without a delta (redacted thinking) are this stream's own
    const known = this.content();
    const last = blocks.size ? Math.max(...blocks.keys()) : -1;
    for (let k = 0; k < last; k++) if (!blocks.has(k) && known[k] && !known[k].type.startsWith("tool_use")) blocks.set(k, known[k]);
    const content = [...blocks.entries()].sort((x, y) => x[0] - y[0]).map(([, b]) => b);
    out.push({
      type: "message_complete",
      message_id: this.mid,
      stop_reason: "cancelled",
      final_content: content.length ? content : [{ type: "text", text: "" }],
      usage: null,
    });
    return out;
  }
}
