// An Anthropic Messages stream (`stream: true`): SSE events `message_start`, then per content
// block `content_block_start`, its `content_block_delta`s and `content_block_stop`, then
// `message_delta` (stop_reason, cumulative usage) and `message_stop`, with `ping`s anywhere
// and an `error` event when the API fails mid-stream; translated to canonical stream events
// (adapter contract §5.1 table, §5.2 invariants), one chunk of bytes at a time, and
// cancelled (contract §5.3) as if the cancel landed after the events the harness had consumed.
//
// Strict about the documented flow (build-with-claude/streaming): one message_start first;
// each block started once at a non-negative index, then deltas of its own kind, then its
// stop; message_stop last. A stream that breaks it fails with a located WireFormatError
// after contract §6.5's message_complete (stop_reason error). Unknown event types are
// skipped: the docs say new ones may be added.
//
// The canonical `content_block_index` is the block's position in `final_content`. A
// thinking block's signature arrives as `signature_delta`; it rides on a last thinking_delta
// at the block's stop (streaming-protocol §5.3: the signature is on the final delta).

import type { Block, OtherBlock, RequestContext, StopReason, TokenUsage, ToolUseBlock } from "./canonical.js";
import { newUlid } from "./ids.js";
import type { Adapter } from "./adapter.js";
import { PROVIDER, classifyError, stopReason, usageFromWire } from "./adapter.js";
import { cancelEvents } from "./events.js";
import type { SilentBlock, StreamEvent } from "./events.js";
import { WireFormatError, isObject } from "./protocol.js";
import type { Json, JsonObject, Logs, StreamFailure } from "./protocol.js";
import { SseDecoder } from "./sse.js";
import type { SseEvent } from "./sse.js";
import { NAME, jsonObject } from "./wire.js";

/** An event that breaks the documented flow. */
class Malformed extends Error {}

/** The events a block's content travels in, and the field carrying each payload. */
const DELTA_FIELDS: Record<string, string> = {
  text_delta: "text",
  thinking_delta: "thinking",
  signature_delta: "signature",
  input_json_delta: "partial_json",
  citations_delta: "citation",
};
const FLOW = new Set(["content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"]);

export class WireStream {
  /** Every event this stream produced, in order (what a cancel replays). */
  readonly events: StreamEvent[] = [];
  over = false;
  private readonly sse = new SseDecoder();
  private readonly mid: string;
  private model: string;
  private readonly content: Block[] = [];
  private readonly byWireIndex = new Map<number, number>(); // the wire's block index -> content index
  private readonly stopped = new Set<number>(); // content indexes of the blocks that stopped
  private readonly partial = new Map<number, string>(); // tool_use content index -> its input so far
  private readonly silent: SilentBlock[] = []; // blocks no event carries (redacted thinking, kept whole)
  private usage: TokenUsage | null = null;
  private stop: StopReason = "end_turn";
  private stopSeen = false;
  private started = false;
  private finished = false;
  private position = 0; // the SSE event being read
  private line = 0;
  private log: Logs | null = null;

  constructor(
    private readonly a: Adapter,
    readonly ctx: RequestContext,
  ) {
    this.mid = ctx.message_id ?? newUlid();
    this.model = ctx.model ?? `${PROVIDER}:unknown`;
  }

  feed(data: Uint8Array, log: Logs): StreamEvent[] {
    return this.step(log, (out) => {
      for (const ev of this.sse.feed(data)) {
        this.event(ev, out);
      }
    });
  }

  close(log: Logs): StreamEvent[] {
    return this.step(log, (out) => {
      for (const ev of this.sse.close()) {
        this.event(ev, out);
      }
      this.end(out);
    });
  }

  /** One feed or close: the events it completed, or its failure carrying them. */
  private step(log: Logs, fn: (out: StreamEvent[]) => void): StreamEvent[] {
    this.log = log;
    const out: StreamEvent[] = [];
    try {
      fn(out);
    } catch (err) {
      this.over = true;
      if (err instanceof Malformed || err instanceof WireFormatError) {
        this.fail(out);
        const located = new WireFormatError(`Anthropic stream event ${this.position}: ${err.message}`, this.position, this.line);
        located.events = out;
        throw located;
      }
      (err as StreamFailure).events = out;
      throw err;
    } finally {
      this.events.push(...out);
    }
    return out;
  }

  private event(ev: SseEvent, out: StreamEvent[]): void {
    this.position = ev.index;
    this.line = ev.line;
    const data = ev.data.trim();
    if (data === "") {
      return;
    }
    let obj: unknown;
    try {
      obj = JSON.parse(data);
    } catch {
      throw new Malformed(`SSE data is not JSON: ${JSON.stringify(data.slice(0, 80))}`);
    }
    if (!isObject(obj) || typeof obj.type !== "string") {
      throw new Malformed("SSE data is not an event object with a `type`");
    }
    if (obj.type === "ping") {
      return;
    }
    if (this.finished) {
      throw new Malformed(`${obj.type} after message_stop`);
    }
    this.handle(obj.type, obj, out);
  }

  private handle(type: string, obj: JsonObject, out: StreamEvent[]): void {
    if (type === "message_start") {
      if (this.started) {
        throw new Malformed("a second message_start");
      }
      const msg = obj.message;
      if (!isObject(msg)) {
        throw new Malformed("message_start has no `message` object");
      }
      if (typeof msg.model === "string" && msg.model !== "") {
        this.model = `${PROVIDER}:${msg.model}`;
      }
      this.usage = usageFromWire(msg.usage);
      this.start(out);
      return;
    }
    if (type === "error") {
      // the API fails mid-stream (contract §6.5): an error event, the partial message, then
      // the classified error (the body classifies it, else §6.2's 5xx default)
      const err = classifyError(500, obj, {});
      err.providerStatus = null; // the stream began with a 200: the error has no status of its own
      this.start(out);
      out.push({ type: "error", message_id: this.mid, error_class: err.errorClass, message: err.message, provider_status: null });
      this.fail(out);
      throw err;
    }
    if (!FLOW.has(type)) {
      return; // a newer event type: the docs ask clients to tolerate them
    }
    if (!this.started) {
      throw new Malformed(`${type} before message_start`);
    }
    switch (type) {
      case "content_block_start":
        this.blockStart(obj, out);
        break;
      case "content_block_delta": {
        const k = this.openBlock(obj);
        if (!isObject(obj.delta)) {
          throw new Malformed("content_block_delta has no `delta` object");
        }
        this.delta(k, obj.delta, out);
        break;
      }
      case "content_block_stop": {
        const k = this.openBlock(obj);
        this.stopped.add(k);
        this.blockStop(k, out);
        break;
      }
      case "message_delta": {
        const delta = isObject(obj.delta) ? obj.delta : {};
        if (typeof delta.stop_reason === "string" && delta.stop_reason !== "") {
          this.stop = stopReason(delta.stop_reason, this.logs());
          this.stopSeen = true;
        }
        if (isObject(obj.usage)) {
          // message_delta's usage is cumulative and may repeat or leave out the input counts
          const merged: JsonObject = { ...rawUsage(this.usage) };
          for (const [k, v] of Object.entries(obj.usage)) {
            if (v !== null) {
              merged[k] = v;
            }
          }
          this.usage = usageFromWire(merged);
          out.push({ type: "usage_update", message_id: this.mid, usage: { ...(this.usage as TokenUsage) } as unknown as JsonObject });
        }
        break;
      }
      case "message_stop": {
        const open = this.openIndexes();
        if (open.length > 0) {
          throw new Malformed(`message_stop with block(s) ${open.join(", ")} never stopped`);
        }
        this.finish(this.stop, out);
        break;
      }
    }
  }

  private wireIndex(obj: JsonObject): number {
    const i = obj.index;
    if (typeof i !== "number" || !Number.isInteger(i) || i < 0) {
      throw new Malformed(`${String(obj.type)} has index ${JSON.stringify(i)}, not a non-negative integer`);
    }
    return i;
  }

  private openBlock(obj: JsonObject): number {
    const i = this.wireIndex(obj);
    const k = this.byWireIndex.get(i);
    if (k === undefined) {
      throw new Malformed(`${String(obj.type)} for block ${i}, which never started`);
    }
    if (this.stopped.has(k)) {
      throw new Malformed(`${String(obj.type)} for block ${i}, which already stopped`);
    }
    return k;
  }

  private openIndexes(): number[] {
    return [...this.byWireIndex.entries()].filter(([, k]) => !this.stopped.has(k)).map(([i]) => i);
  }

  private blockStart(obj: JsonObject, out: StreamEvent[]): void {
    const i = this.wireIndex(obj);
    if (this.byWireIndex.has(i)) {
      throw new Malformed(`content_block_start for block ${i}, which already started`);
    }
    if (!isObject(obj.content_block)) {
      throw new Malformed("content_block_start has no `content_block` object");
    }
    const wb = obj.content_block;
    // a tool_use starts with `input: {}`: its input arrives as input_json_delta fragments
    const { block } = this.a.blockFromWire(this.ctx.session_id, wb.type === "tool_use" ? { ...wb, input: {} } : wb);
    const k = this.content.length;
    this.byWireIndex.set(i, k);
    this.content.push(block);
    if (block.type === "tool_use") {
      const use = block as ToolUseBlock;
      this.partial.set(k, "");
      out.push({ type: "tool_use_start", message_id: this.mid, content_block_index: k, tool_use_id: use.id, tool_name: use.name });
    } else if (block.type === "text") {
      const text = (block as { text: string }).text;
      if (text !== "") {
        out.push({ type: "text_delta", message_id: this.mid, content_block_index: k, text });
      }
    } else if (block.type === "thinking") {
      const text = (block as { text: string }).text;
      if (text !== "") {
        out.push({ type: "thinking_delta", message_id: this.mid, content_block_index: k, text, signature: null });
      }
    } else {
      // redacted thinking, or a block kept whole: no event carries it (a cancel still keeps it)
      this.silent.push({ index: k, at: this.events.length + out.length, block: block as unknown as JsonObject });
      if (block.type.startsWith(`${NAME}:`)) {
        this.partial.set(k, "");
      }
    }
  }

  private delta(k: number, delta: JsonObject, out: StreamEvent[]): void {
    const block = this.content[k] as Block;
    const dt = typeof delta.type === "string" ? delta.type : "";
    const field = DELTA_FIELDS[dt];
    if (field === undefined) {
      throw new Malformed(`unknown delta type ${JSON.stringify(delta.type)}`);
    }
    const value: Json | undefined = dt === "citations_delta" ? "" : delta[field]; // a citation is no text
    if (typeof value !== "string") {
      throw new Malformed(`${dt} without a string \`${field}\``);
    }
    const native = block.type.startsWith(`${NAME}:`);
    if (dt === "text_delta" && block.type === "text") {
      (block as { text: string }).text += value;
      out.push({ type: "text_delta", message_id: this.mid, content_block_index: k, text: value });
    } else if (dt === "thinking_delta" && block.type === "thinking") {
      (block as { text: string }).text += value;
      out.push({ type: "thinking_delta", message_id: this.mid, content_block_index: k, text: value, signature: null });
    } else if (dt === "signature_delta" && block.type === "thinking") {
      const t = block as { signature: string | null };
      t.signature = (t.signature ?? "") + value;
    } else if (dt === "input_json_delta" && (block.type === "tool_use" || native)) {
      this.partial.set(k, (this.partial.get(k) ?? "") + value);
      if (block.type === "tool_use") {
        // the literal fragment, never a parse of it (contract §5.4)
        out.push({ type: "tool_use_input_delta", message_id: this.mid, content_block_index: k, tool_use_id: (block as ToolUseBlock).id, partial_json: value });
      }
    } else if (dt === "citations_delta" && block.type === "text") {
      // no canonical field or event: a parse of the whole reply keeps them in provider_raw
    } else if (!native) {
      throw new Malformed(`${dt} for a ${block.type} block`);
    }
  }

  private blockStop(k: number, out: StreamEvent[]): void {
    const block = this.content[k] as Block;
    if (block.type === "tool_use") {
      const use = block as ToolUseBlock;
      const text = this.partial.get(k) ?? "";
      const input = jsonObject(text);
      if (input === null) {
        throw new Malformed(`tool_use ${use.id} input is not a JSON object: ${JSON.stringify(text.slice(0, 80))}`);
      }
      this.partial.delete(k);
      use.input = input;
      out.push({ type: "tool_use_end", message_id: this.mid, content_block_index: k, tool_use_id: use.id, final_input: input });
    } else if (block.type === "thinking") {
      // the signature rides only on the block's final delta
      const signature = (block as { signature: string | null }).signature;
      out.push({ type: "thinking_delta", message_id: this.mid, content_block_index: k, text: "", signature });
    } else if (block.type.startsWith(`${NAME}:`)) {
      const text = this.partial.get(k) ?? "";
      this.partial.delete(k);
      if (text.trim() !== "") {
        const input = jsonObject(text);
        if (input === null) {
          throw new Malformed(`${block.type} input is not a JSON object: ${JSON.stringify(text.slice(0, 80))}`);
        }
        const kept = block as OtherBlock;
        kept.raw = { ...(isObject(kept.raw) ? kept.raw : {}), input };
      }
    }
  }

  /** The body ended: after message_stop that is the end; else what arrived is a message cut short. */
  private end(out: StreamEvent[]): void {
    if (this.finished) {
      return;
    }
    this.position += 1;
    const open = this.openIndexes();
    if (this.stopSeen && open.length === 0) {
      // message_delta's stop_reason arrived and every block stopped: only the end marker is missing
      this.logs().warning(`${NAME}: stream ended after message_delta's stop_reason without message_stop`, {
        event: "message_stop_missing",
        adapter: NAME,
        session_id: this.ctx.session_id,
      });
      this.finish(this.stop, out);
      return;
    }
    this.start(out);
    const lacks = open.length > 0 ? `with block(s) ${open.join(", ")} open` : "without message_delta's stop_reason";
    throw new Malformed(`stream ended before message_stop, ${lacks}: cut before its end`);
  }

  private start(out: StreamEvent[]): void {
    if (!this.started) {
      this.started = true;
      out.push({ type: "message_start", message_id: this.mid, role: "assistant", model: this.model });
    }
  }

  private finish(stop: StopReason, out: StreamEvent[]): void {
    this.finished = true;
    this.over = true;
    out.push(this.complete(stop, this.content));
  }

  /** Contract §6.5: the partial message (stop_reason error) before the failure is raised. */
  private fail(out: StreamEvent[]): void {
    if (this.started && !this.finished) {
      this.finished = true;
      // tool calls whose input never completed are not invented as {}
      out.push(this.complete("error", this.content.filter((b, k) => b.type !== "tool_use" || !this.partial.has(k))));
    }
  }

  private complete(stop: StopReason, content: Block[]): StreamEvent {
    return {
      type: "message_complete",
      message_id: this.mid,
      stop_reason: stop,
      final_content: content.map((b) => ({ ...b })) as unknown as JsonObject[],
      usage: this.usage === null ? null : ({ ...this.usage } as unknown as JsonObject),
    };
  }

  private logs(): Logs {
    if (this.log === null) {
      throw new Error("a stream step runs with its call's logs");
    }
    return this.log;
  }

  /** Contract §5.3 (cancelEvents in events.ts): what a cancel after `delivered` events adds. */
  cancelAfter(delivered: number): StreamEvent[] | null {
    this.over = true;
    return cancelEvents(this.events, delivered, this.mid, this.silent);
  }
}

/** TokenUsage back to Anthropic's names, so a message_delta's usage merges over it. */
function rawUsage(usage: TokenUsage | null): JsonObject {
  if (usage === null) {
    return {};
  }
  return {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cache_read_input_tokens: usage.cached_input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
  };
}
