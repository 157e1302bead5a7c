// A Chat Completions stream (`stream: true`): SSE `data:` chunks ending `data: [DONE]`,
// translated to canonical stream events (adapter contract §5.1 table, §5.2 invariants),
// one chunk of bytes at a time, and cancelled (contract §5.3) as if the cancel landed
// after the events the harness had consumed.
//
// Strict about the documented stream (chat-streaming/streaming): one choice (index 0), a
// finish_reason on the last content chunk, a usage chunk with empty `choices` (asked for
// with stream_options.include_usage), then [DONE]. A stream that breaks it fails with a
// located WireFormatError after contract §6.5's message_complete (stop_reason error).

import type { Block, RequestContext, StopReason, TokenUsage, ToolUseBlock } from "./canonical.js";
import { newUlid } from "./ids.js";
import type { Adapter } from "./adapter.js";
import { PROVIDER, classifyError, stopReason, usageFromWire } from "./adapter.js";
import { cancelEvents } from "./events.js";
import type { StreamEvent } from "./events.js";
import { NAME, jsonObject } from "./wire.js";
import { WireFormatError, isObject } from "./protocol.js";
import type { JsonObject, Logs, StreamFailure } from "./protocol.js";
import { SseDecoder } from "./sse.js";
import type { SseEvent } from "./sse.js";

/** A chunk that breaks the documented stream. */
class Malformed extends Error {}

export class WireStream {
  /** Every event this stream produced, in order (what a cancel replays). */
  readonly events: StreamEvent[] = [];
  over = false;
  private readonly sse = new SseDecoder();
  private readonly mid: string;
  private model: string;
  private readonly content: Block[] = [];
  private readonly args = new Map<number, string>(); // block index -> the call's arguments so far
  private readonly calls = new Map<number, number>(); // wire tool_calls index -> block index
  private openCall: number | null = null;
  private readonly closed = new Set<number>(); // block indexes of the calls that ended
  private readonly dropped = new Set<number>(); // choices past 0 (n > 1)
  private textAt: number | null = null;
  private usage: TokenUsage | null = null;
  private stop: StopReason | null = null;
  private started = false;
  private finished = false;
  private done = false;
  private chunks = 0;
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
        const located = new WireFormatError(`Chat Completions stream event ${this.position}: ${err.message}`, this.position, this.line);
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
    if (this.done) {
      throw new Malformed("data after [DONE]");
    }
    if (data === "[DONE]") {
      this.done = true;
      return;
    }
    let obj: unknown;
    try {
      obj = JSON.parse(data);
    } catch {
      throw new Malformed(`SSE data is not JSON: ${JSON.stringify(data.slice(0, 80))}`);
    }
    if (!isObject(obj)) {
      throw new Malformed("SSE data is not a JSON object");
    }
    if ("error" in obj && !("choices" in obj)) {
      // the provider reports an error mid-stream (contract §6.5): an error event, the
      // partial message, then the classified error
      const err = classifyError(500, obj, {}); // the body classifies it, else §6.2's 5xx default
      err.providerStatus = null; // the stream began with a 200: the error has no status of its own
      this.start(out);
      out.push({ type: "error", message_id: this.mid, error_class: err.errorClass, message: err.message, provider_status: null });
      this.fail(out);
      throw err;
    }
    this.chunk(obj, out);
  }

  private chunk(obj: JsonObject, out: StreamEvent[]): void {
    this.chunks += 1;
    if (typeof obj.model === "string" && !this.started) {
      this.model = `${PROVIDER}:${obj.model}`;
    }
    const choices = obj.choices ?? [];
    if (!Array.isArray(choices)) {
      throw new Malformed("`choices` is not a list");
    }
    this.start(out);
    for (const choice of choices) {
      if (!isObject(choice)) {
        throw new Malformed("a choice is not an object");
      }
      if ((choice.index ?? 0) !== 0) {
        this.dropped.add(Number(choice.index)); // n > 1: the message keeps choice 0, as a reply's
        continue;
      }
      const delta = isObject(choice.delta) ? choice.delta : {};
      const calls = delta.tool_calls ?? [];
      if (!Array.isArray(calls)) {
        throw new Malformed("delta.tool_calls is not a list");
      }
      const text = typeof delta.content === "string" ? delta.content : "";
      const refusal = typeof delta.refusal === "string" ? delta.refusal : "";
      if (this.stop !== null && (text !== "" || refusal !== "" || calls.length > 0)) {
        throw new Malformed("content after finish_reason");
      }
      for (const piece of [text, refusal]) {
        if (piece !== "") {
          this.text(piece, out);
        }
      }
      for (const call of calls) {
        this.toolCall(call, out);
      }
      if (typeof choice.finish_reason === "string") {
        this.stop = stopReason(choice.finish_reason, this.logs());
        this.endCall(out); // contract §5.1: tool.use_end at finish_reason
      }
    }
    const usage = usageFromWire(obj.usage);
    if (usage !== null) {
      this.usage = usage;
      out.push({ type: "usage_update", message_id: this.mid, usage: { ...usage } });
    }
  }

  private start(out: StreamEvent[]): void {
    if (!this.started) {
      this.started = true;
      out.push({ type: "message_start", message_id: this.mid, role: "assistant", model: this.model });
    }
  }

  private text(text: string, out: StreamEvent[]): void {
    if (this.textAt === null || this.textAt !== this.content.length - 1) {
      this.endCall(out);
      this.textAt = this.content.length;
      this.content.push({ type: "text", text: "" });
    }
    const block = this.content[this.textAt] as { text: string };
    block.text += text;
    out.push({ type: "text_delta", message_id: this.mid, content_block_index: this.textAt, text });
  }

  private toolCall(call: unknown, out: StreamEvent[]): void {
    if (!isObject(call)) {
      throw new Malformed("a tool call delta is not an object");
    }
    const wi = call.index;
    if (typeof wi !== "number" || !Number.isInteger(wi) || wi < 0) {
      throw new Malformed(`tool call index ${JSON.stringify(wi)} is not a non-negative integer`);
    }
    const fn = isObject(call.function) ? call.function : {};
    let k = this.calls.get(wi);
    if (k === undefined) {
      if (typeof call.id !== "string" || call.id === "") {
        throw new Malformed(`tool call ${wi} starts without an id`);
      }
      this.endCall(out);
      k = this.content.length;
      this.calls.set(wi, k);
      const id = this.a.toolIdMap(this.ctx.session_id).canonicalFor(call.id);
      const name = typeof fn.name === "string" ? fn.name : "";
      this.content.push({ type: "tool_use", id, name, input: {} });
      this.args.set(k, "");
      this.openCall = k;
      out.push({ type: "tool_use_start", message_id: this.mid, content_block_index: k, tool_use_id: id, tool_name: name });
    }
    const fragment = fn.arguments;
    if (fragment === undefined || fragment === null || fragment === "") {
      return;
    }
    if (typeof fragment !== "string") {
      throw new Malformed(`tool call ${wi} arguments fragment is not a string`);
    }
    if (k !== this.openCall) {
      throw new Malformed(`tool call ${wi} continues after the next content started`);
    }
    this.args.set(k, (this.args.get(k) ?? "") + fragment);
    const use = this.content[k] as ToolUseBlock;
    // the literal fragment, never a parse of it (contract §5.4)
    out.push({ type: "tool_use_input_delta", message_id: this.mid, content_block_index: k, tool_use_id: use.id, partial_json: fragment });
  }

  /** The open tool call ends: its arguments must spell a JSON object. */
  private endCall(out: StreamEvent[]): void {
    const k = this.openCall;
    if (k === null) {
      return;
    }
    const use = this.content[k] as ToolUseBlock;
    const input = jsonObject(this.args.get(k) ?? "");
    if (input === null) {
      throw new Malformed(`tool call ${JSON.stringify(use.name)} arguments are not a JSON object`);
    }
    this.openCall = null;
    this.closed.add(k);
    use.input = input;
    out.push({ type: "tool_use_end", message_id: this.mid, content_block_index: k, tool_use_id: use.id, final_input: input });
  }

  private end(out: StreamEvent[]): void {
    this.position += 1;
    if (!this.done) {
      if (this.stop === null || this.usage === null) {
        // cut before its end: what arrived is still a message (contract §6.5)
        if (this.chunks > 0) {
          this.start(out);
        }
        throw new Malformed(`stream ended before data: [DONE], without ${this.stop === null ? "a finish_reason" : "the usage chunk"}`);
      }
      // finish_reason and usage arrived: only [DONE] is missing, which loses nothing
      this.logs().warning(`${NAME}: stream ended after its finish_reason without data: [DONE]`, {
        event: "done_missing",
        adapter: NAME,
        session_id: this.ctx.session_id,
      });
    } else if (this.chunks === 0) {
      throw new Malformed("data: [DONE] with no chunk before it");
    }
    if (this.stop === null) {
      this.stop = this.calls.size > 0 ? "tool_use" : "end_turn";
      this.logs().warning(`${NAME}: stream ended with [DONE] but no finish_reason; read as ${this.stop}`, {
        event: "finish_reason_missing",
        adapter: NAME,
        session_id: this.ctx.session_id,
      });
    }
    this.endCall(out);
    if (this.dropped.size > 0) {
      this.logs().warning(`${NAME}: the stream carries ${this.dropped.size + 1} choices; the message keeps choice 0`, {
        event: "choices_dropped",
        adapter: NAME,
      });
    }
    this.finished = true;
    this.over = true;
    out.push(this.complete(this.stop, [...this.content]));
  }

  /** Contract §6.5: the partial message (stop_reason error) before the failure is raised. */
  private fail(out: StreamEvent[]): void {
    if (this.started && !this.finished) {
      this.finished = true;
      // tool calls whose arguments never completed are not invented as {}
      const closed = this.content.filter((b, k) => b.type !== "tool_use" || this.closed.has(k));
      out.push(this.complete("error", closed));
    }
  }

  private complete(stop: StopReason, content: Block[]): StreamEvent {
    return {
      type: "message_complete",
      message_id: this.mid,
      stop_reason: stop,
      final_content: content.map((b) => ({ ...b })) as unknown as JsonObject[],
      usage: this.usage === null ? null : { ...this.usage },
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
    return cancelEvents(this.events, delivered, this.mid);
  }
}
