// An incremental Server-Sent Events decoder (WHATWG HTML, "event stream interpretation").
// Chunks are bytes as a socket delivers them: one may end inside a line or inside a UTF-8
// sequence, so lines are cut from bytes first and decoded whole.

import { WireFormatError } from "./protocol.js";

export interface SseEvent {
  event: string;
  data: string;
  index: number; // 0-based position among the stream's events
  line: number; // 1-based line of its first field
}

const LF = 0x0a;
const CR = 0x0d;
const MAX_LINE_BYTES = 8 * 1024 * 1024;

export class SseDecoder {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lineNo = 0;
  private afterCR = false;
  private eventName = "";
  private data: string[] = [];
  private firstLine = 0;
  private count = 0;
  private readonly utf8 = new TextDecoder("utf-8", { fatal: true });

  feed(chunk: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < chunk.length; i += 1) {
      const byte = chunk[i];
      if (byte !== LF && byte !== CR) {
        continue;
      }
      if (byte === LF && this.afterCR && i === start && this.pendingBytes === 0) {
        this.afterCR = false; // the LF of a CRLF split across chunks
        start = i + 1;
        continue;
      }
      this.take(chunk.subarray(start, i));
      this.line(this.joined(), out);
      this.afterCR = byte === CR && i === chunk.length - 1; // its LF may open the next chunk
      if (byte === CR && chunk[i + 1] === LF) {
        i += 1; // CRLF ends one line
      }
      start = i + 1;
    }
    if (start < chunk.length) {
      this.afterCR = false;
      this.take(chunk.subarray(start));
    }
    return out;
  }

  private take(part: Uint8Array): void {
    this.pendingBytes += part.length;
    if (this.pendingBytes > MAX_LINE_BYTES) {
      throw new WireFormatError(`SSE line longer than ${MAX_LINE_BYTES} bytes`, this.count, this.lineNo + 1);
    }
    if (part.length > 0) {
      this.pending.push(part.slice());
    }
  }

  private joined(): Uint8Array {
    const all = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const part of this.pending) {
      all.set(part, at);
      at += part.length;
    }
    this.pending = [];
    this.pendingBytes = 0;
    return all;
  }

  /** The end of the body: an event with no blank line after it is discarded (WHATWG). */
  close(): SseEvent[] {
    return [];
  }

  private line(raw: Uint8Array, out: SseEvent[]): void {
    this.lineNo += 1;
    let text: string;
    try {
      text = this.utf8.decode(raw);
    } catch {
      throw new WireFormatError("SSE line is not UTF-8", this.count, this.lineNo);
    }
    if (this.lineNo === 1 && text.startsWith("\ufeff")) {
      text = text.slice(1);
    }
    if (text === "") {
      if (this.data.length > 0) {
        out.push({ event: this.eventName || "message", data: this.data.join("\n"), index: this.count, line: this.firstLine });
        this.count += 1;
      }
      this.eventName = "";
      this.data = [];
      this.firstLine = 0;
      return;
    }
    if (text.startsWith(":")) {
      return; // a comment
    }
    if (this.firstLine === 0) {
      this.firstLine = this.lineNo;
    }
    const colon = text.indexOf(":");
    const name = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) {
      value = value.slice(1);
    }
    if (name === "event") {
      this.eventName = value;
    } else if (name === "data") {
      this.data.push(value);
    }
  }
}
