// A Gemini stream (`:streamGenerateContent`): a sequence of GenerateContentResponse chunks,
// each with the parts it adds and the cumulative usageMetadata, the last with a
// finishReason; framed as Server-Sent Events `data:` lines (`?alt=sse`) or, without
// `alt=sse`, as one JSON array of the chunks. The framing is told by the body's first byte
// that is not whitespace (`[` opens the array): the stream is opened without its headers.
// Translated to canonical stream events (adapter contract §5.1 table, §5.2 invariants), one
// chunk of bytes at a time, and cancelled (contract §5.3) as if the cancel landed after the
// events the harness had consumed.
//
// Strict about the documented stream: each chunk a JSON object; an `error` chunk is the
// API failing mid-stream; a body that ends before a finishReason (or a blocked prompt's
// promptFeedback) was cut. Either fails with a located error after contract §6.5's
// message_complete (stop_reason error). A chunk's parts go through the same Reply as a whole
// response's, so a stream's aggregate equals the parse of the same reply.

import type { Block, RequestContext } from "./canonical.js";
import type { Adapter } from "./adapter.js";
import { PROVIDER, Reply, classifyError } from "./adapter.js";
import { cancelEvents } from "./events.js";
import type { StreamEvent } from "./events.js";
import { Logs, WireFormatError, isObject } from "./protocol.js";
import type { Json, JsonObject, StreamFailure } from "./protocol.js";
import { SseDecoder } from "./sse.js";
import { NAME } from "./wire.js";

/** A chunk that breaks the documented stream. */
class Malformed extends Error {}

const MAX_ELEMENT_CHARS = 32 * 1024 * 1024; // one chunk of the array: bounds memory on hostile input

/**
 * The elements of a JSON array fed in arbitrary chunks of bytes, each as soon as it is
 * complete: a small scanner follows strings and bracket depth to find an element's end.
 * Anything but `[ {...} (, {...})* ]` is a Malformed naming the element.
 */
class JsonArrayDecoder {
  private readonly utf8 = new TextDecoder("utf-8", { fatal: true });
  private state: "open" | "first" | "value" | "sep" | "next" | "closed" = "open";
  private depth = 0;
  private inString = false;
  private escaped = false;
  private piece = "";
  count = 0; // elements decoded so far

  feed(chunk: Uint8Array, final = false): Json[] {
    let text: string;
    try {
      text = this.utf8.decode(chunk, { stream: !final });
    } catch {
      throw new Malformed(`JSON-array stream, element ${this.count}: not UTF-8`);
    }
    const out: Json[] = [];
    for (const ch of text) {
      if (this.state === "value") {
        this.piece += ch;
        if (this.inString) {
          if (this.escaped) {
            this.escaped = false;
          } else if (ch === "\\") {
            this.escaped = true;
          } else if (ch === '"') {
            this.inString = false;
          }
        } else if (ch === '"') {
          this.inString = true;
        } else if (ch === "{" || ch === "[") {
          this.depth += 1;
        } else if ((ch === "}" || ch === "]") && --this.depth === 0) {
          try {
            out.push(JSON.parse(this.piece) as Json);
          } catch (err) {
            throw new Malformed(`JSON-array stream, element ${this.count}: not JSON (${(err as Error).message})`);
          }
          this.count += 1;
          this.piece = "";
          this.state = "sep";
        }
        continue;
      }
      if (/\s/.test(ch)) {
        continue;
      }
      if (this.state === "open") {
        if (ch !== "[") {
          throw new Malformed("JSON-array stream: the body does not open with `[`");
        }
        this.state = "first";
      } else if (this.state === "first" || this.state === "next") {
        if (ch === "]" && this.state === "first") {
          this.state = "closed";
        } else if (ch === "{") {
          this.state = "value";
          this.piece = ch;
          this.depth = 1;
        } else {
          throw new Malformed(`JSON-array stream, element ${this.count}: expected an object, found ${JSON.stringify(ch)}`);
        }
      } else if (this.state === "sep") {
        if (ch !== "," && ch !== "]") {
          throw new Malformed(`JSON-array stream, element ${this.count}: expected \`,\` or \`]\`, found ${JSON.stringify(ch)}`);
        }
        this.state = ch === "," ? "next" : "closed";
      } else {
        throw new Malformed("JSON-array stream: data after the closing `]`");
      }
    }
    if (this.piece.length > MAX_ELEMENT_CHARS) {
      throw new Malformed(`JSON-array stream, element ${this.count}: longer than ${MAX_ELEMENT_CHARS} characters`);
    }
    return out;
  }

  /** Why the body is not a whole array yet, or null when its `]` arrived. */
  cut(): string | null {
    if (this.state === "closed") {
      return null;
    }
    return this.state === "value" ? `element ${this.count} was cut` : "the closing `]` never came";
  }
}

export class WireStream {
  /** Every event this stream produced, in order (what a cancel replays). */
  readonly events: StreamEvent[] = [];
  over = false;
  private readonly reply: Reply;
  private framing: "sse" | "json-array" | null = null;
  private head = new Uint8Array(0); // the bytes before the framing is known
  private readonly sse = new SseDecoder();
  private readonly array = new JsonArrayDecoder();
  private started = false;
  private finished = false;
  private position = 0; // the chunk (SSE event or array element) being read
  private line: number | null = null;
  private log: Logs | null = null;

  constructor(
    a: Adapter,
    readonly ctx: RequestContext,
  ) {
    this.reply = new Reply(a, ctx, new Logs()); // each step sets its call's logs
  }

  feed(data: Uint8Array, log: Logs): StreamEvent[] {
    return this.step(log, (out) => this.bytes(data, false, out));
  }

  close(log: Logs): StreamEvent[] {
    return this.step(log, (out) => {
      this.bytes(new Uint8Array(0), true, out);
      this.end(out);
    });
  }

  /** One feed or close: the events it completed, or its failure carrying them. */
  private step(log: Logs, fn: (out: StreamEvent[]) => void): StreamEvent[] {
    this.log = log;
    this.reply.setLogs(log);
    const out: StreamEvent[] = [];
    try {
      fn(out);
    } catch (err) {
      this.over = true;
      if (err instanceof Malformed || err instanceof WireFormatError) {
        this.fail(out);
        const located = new WireFormatError(`Gemini stream event ${this.position}: ${err.message}`, this.position, this.line);
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

  private bytes(data: Uint8Array, final: boolean, out: StreamEvent[]): void {
    if (this.framing === null) {
      const joined = new Uint8Array(this.head.length + data.length);
      joined.set(this.head);
      joined.set(data, this.head.length);
      const first = joined.findIndex((b) => b !== 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0d);
      if (first < 0 && !final) {
        this.head = joined; // only whitespace so far
        return;
      }
      this.framing = first >= 0 && joined[first] === 0x5b ? "json-array" : "sse";
      data = joined;
    }
    if (this.framing === "json-array") {
      for (const obj of this.array.feed(data, final)) {
        this.position = this.array.count - 1;
        this.chunk(obj, out);
      }
      return;
    }
    for (const ev of final ? this.sse.close() : this.sse.feed(data)) {
      this.position = ev.index;
      this.line = ev.line;
      const text = ev.data.trim();
      if (text === "") {
        continue;
      }
      let obj: Json;
      try {
        obj = JSON.parse(text) as Json;
      } catch {
        throw new Malformed(`SSE data is not JSON: ${JSON.stringify(text.slice(0, 80))}`);
      }
      this.chunk(obj, out);
    }
  }

  private chunk(obj: Json, out: StreamEvent[]): void {
    if (this.finished) {
      throw new Malformed("a chunk after the stream's end");
    }
    if (!isObject(obj)) {
      throw new Malformed("a chunk is not a JSON object");
    }
    this.start(obj, out);
    if ("error" in obj && !("candidates" in obj)) {
      // the API fails mid-stream (contract §6.5): an error event, the partial message, then
      // the classified error; `error.code` is the HTTP status the error stands for
      const err = isObject(obj.error) ? obj.error : {};
      const status = typeof err.code === "number" && err.code >= 400 ? err.code : 500;
      const e = classifyError(status, obj, {});
      out.push({ type: "error", message_id: this.reply.mid, error_class: e.errorClass, message: e.message, provider_status: null });
      this.fail(out);
      throw e;
    }
    out.push(...this.reply.chunk(obj, this.position, this.events.length + out.length));
  }

  private start(obj: JsonObject, out: StreamEvent[]): void {
    if (!this.started) {
      this.started = true;
      const model = typeof obj.modelVersion === "string" && obj.modelVersion !== "" ? `${PROVIDER}:${obj.modelVersion}` : (this.ctx.model ?? `${PROVIDER}:unknown`);
      out.push({ type: "message_start", message_id: this.reply.mid, role: "assistant", model });
    }
  }

  /** The body ended: with a finishReason that is the reply; without one it was cut. */
  private end(out: StreamEvent[]): void {
    this.position += 1;
    const cut = this.framing === "json-array" ? this.array.cut() : null;
    if (this.reply.finishReason === null && this.reply.blockReason === null) {
      this.start({}, out);
      throw new Malformed(cut !== null ? `JSON-array stream ended before its end: ${cut}` : "stream ended without a finishReason: cut before its end");
    }
    if (cut !== null) {
      // the finishReason arrived: nothing is lost but the array's end
      this.logs().warning(`${NAME}: JSON-array stream ended after the finishReason (${cut}); read as ended`, {
        event: "array_end_missing",
        adapter: NAME,
        session_id: this.ctx.session_id,
      });
    }
    this.finished = true;
    this.over = true;
    out.push(this.complete(this.reply.stopReason(), this.reply.content));
  }

  /** Contract §6.5: the partial message (stop_reason error) before the failure is raised. */
  private fail(out: StreamEvent[]): void {
    if (this.started && !this.finished) {
      this.finished = true;
      out.push(this.complete("error", this.reply.content));
    }
  }

  private complete(stop: string, content: Block[]): StreamEvent {
    const usage = this.reply.usage;
    return {
      type: "message_complete",
      message_id: this.reply.mid,
      stop_reason: stop,
      // an empty reply is still one block, as the parsed message has it (canonical §5.1.1)
      final_content: (content.length > 0 ? content.map((b) => ({ ...b })) : [{ type: "text", text: "" }]) as unknown as JsonObject[],
      usage: usage === null ? null : ({ ...usage } as unknown as JsonObject),
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
    return cancelEvents(this.events, delivered, this.reply.mid, this.reply.silent);
  }
}
