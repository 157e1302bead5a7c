// The transport the AI SDK's providers are given (`fetch` in every provider's settings):
// it never reaches the network. `capturing` records the request a provider built and
// stops the call; `answering` replies with a recorded response; `Feed` is a stream's
// response body, into which the protocol's `stream_feed` chunks are pushed.

export class Captured extends Error {}

/** Headers a provider adds that are the harness's (credentials) or the HTTP client's,
 * never the adapter's: the protocol's render result carries no credentials. */
const NOT_ADAPTERS = new Set([
  "authorization",
  "x-api-key",
  "x-goog-api-key",
  "api-key",
  "content-length",
  "host",
  "accept-encoding",
  "connection",
  "user-agent",
  "x-amz-date",
  "x-amz-security-token",
  "x-amz-content-sha256",
]);

function bodyOf(init) {
  const raw = init?.body;
  if (raw == null) return null;
  const text = typeof raw === "string" ? raw : Buffer.from(raw).toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A fetch that records `{method, url, headers, body}` into `sink` and answers with the
 * `canned` JSON body (an empty stream when null), so the call completes and reports its
 * warnings; a second request (none is expected) is refused with `Captured`. */
export function capturing(sink, canned) {
  return async (url, init = {}) => {
    const target = new URL(String(url instanceof Request ? url.url : url));
    const headers = {};
    for (const [k, v] of new Headers(init.headers ?? {}).entries()) {
      if (!NOT_ADAPTERS.has(k.toLowerCase())) headers[k.toLowerCase()] = v;
    }
    if (sink.length) throw new Captured(target.pathname);
    sink.push({ method: init.method ?? "GET", url: target, headers, body: bodyOf(init) });
    if (canned === null) return new Response(new ReadableStream({ start: (c) => c.close() }), { status: 200 });
    return new Response(JSON.stringify(canned), { status: 200, headers: { "content-type": "application/json" } });
  };
}

function flatHeaders(headers) {
  const out = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    const one = Array.isArray(v) ? v[0] : v;
    if (one != null) out[k.toLowerCase()] = String(one);
  }
  return out;
}

/** A fetch that answers with the recorded `status`, `headers` and body bytes. */
export function answering(status, headers, bytes) {
  return async () =>
    new Response(status === 204 || status === 304 ? null : bytes, {
      status,
      headers: { "content-type": "application/json", ...flatHeaders(headers) },
    });
}

/** A streamed response body fed one chunk at a time. The provider's parsers read it; a
 * feed is drained once the chain goes idle (`settled`): no part arrives for a turn of the
 * event loop and the body is waiting for bytes again. */
export class Feed {
  constructor(reframe) {
    this.waiting = false; // the body's reader asked for bytes nobody has given yet
    this.pending = [];
    this.closed = false;
    this.reframe = reframe; // a JsonArrayToSse when the recording may be a JSON array
    this.body = new ReadableStream(
      {
        pull: (controller) => this.pull(controller),
        cancel: () => {
          this.closed = true;
        },
      },
      { highWaterMark: 0 },
    );
  }

  pull(controller) {
    this.controller = controller;
    if (this.pending.length) {
      controller.enqueue(this.pending.shift());
      this.waiting = false;
    } else if (this.closed) {
      this.closeNow();
    } else {
      this.waiting = true;
    }
  }

  closeNow() {
    if (this.controller && !this.finished) {
      this.finished = true;
      this.controller.close();
    }
  }

  push(bytes) {
    const out = this.reframe ? this.reframe.push(bytes) : bytes;
    if (!out.length) return;
    if (this.waiting && this.controller) {
      this.waiting = false;
      this.controller.enqueue(out);
    } else this.pending.push(out);
  }

  end() {
    if (this.reframe) {
      const rest = this.reframe.end();
      if (rest.length) this.push(rest);
      this.reframe = null;
    }
    this.closed = true;
    if (this.waiting && !this.pending.length) this.closeNow();
  }

  fetch(headers) {
    return async () => new Response(this.body, { status: 200, headers });
  }
}

/** Gemini's other stream framing: one JSON array whose elements are the responses. Each
 * element, once complete, becomes one SSE event (`data: <element>`); a body that does not
 * start with `[` goes through as recorded (SSE already). */
export class JsonArrayToSse {
  constructor() {
    this.mode = null; // null (undecided), "sse", "array"
    this.buf = [];
    this.depth = 0;
    this.inString = false;
    this.escape = false;
  }

  push(bytes) {
    const b = Buffer.from(bytes);
    if (this.mode === null) {
      const first = b.findIndex((c) => c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09);
      if (first < 0) {
        this.buf.push(...b);
        return new Uint8Array();
      }
      this.mode = b[first] === 0x5b ? "array" : "sse";
      if (this.mode === "sse") {
        const held = Buffer.from(this.buf);
        this.buf = [];
        return new Uint8Array(Buffer.concat([held, b]));
      }
      this.buf = [];
    }
    if (this.mode === "sse") return new Uint8Array(b);
    const out = [];
    for (const c of b) this.byte(c, out);
    return new Uint8Array(Buffer.concat(out));
  }

  byte(c, out) {
    if (this.depth === 0) {
      if (c === 0x7b || c === 0x5b) {
        if (this.opened) {
          this.depth = 1;
          this.buf = [c];
        } else if (c === 0x5b) this.opened = true;
      }
      return;
    }
    this.buf.push(c);
    if (this.inString) {
      if (this.escape) this.escape = false;
      else if (c === 0x5c) this.escape = true;
      else if (c === 0x22) this.inString = false;
      return;
    }
    if (c === 0x22) this.inString = true;
    else if (c === 0x7b || c === 0x5b) this.depth++;
    else if (c === 0x7d || c === 0x5d) {
      this.depth--;
      if (this.depth === 0) {
        // one SSE event; an element spread over lines is one `data:` line per line, which
        // SSE joins back with "\n" (the element's bytes unchanged)
        const lines = Buffer.from(this.buf).toString("utf8").split("\n");
        out.push(Buffer.from(lines.map((l) => `data: ${l.replace(/\r$/, "")}\n`).join("") + "\n"));
        this.buf = [];
      }
    }
  }

  end() {
    if (this.mode !== "array" && this.buf.length) {
      const held = Buffer.from(this.buf);
      this.buf = [];
      return new Uint8Array(held);
    }
    return new Uint8Array();
  }
}

/** The event loop turns a drain waits at most (a parser that never settles is a bug). */
export const MAX_DRAIN_TURNS = 1000;

export const turn = () => new Promise((resolve) => setImmediate(resolve));
