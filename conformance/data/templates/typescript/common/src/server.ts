// The exec protocol's operations (turnspec docs: "The exec protocol"), each answered by the
// adapter: one request in, one answer out. main.ts reads and writes the lines.

import type { Message, Options, RequestContext, ToolDefinition } from "./canonical.js";
import { Adapter, CAPABILITIES, PROVIDER, PROVIDER_TOOL_ID, WIRE_API } from "./adapter.js";
import { NAME } from "./wire.js";
import type { WireResponse } from "./wire.js";
import { WireStream } from "./stream.js";
import { AdapterError, Logs, NotImplementedError, errorToJson, isObject } from "./protocol.js";
import type { Json, JsonObject } from "./protocol.js";

export const PROTOCOL_VERSIONS = [1];
export const VERSION = "0.1.0";

type Handler = (params: JsonObject, log: Logs) => JsonObject;

export class Server {
  private readonly adapter = new Adapter();
  private readonly streams = new Map<string, WireStream>();
  private readonly handlers: Record<string, Handler> = {
    hello: (p) => this.hello(p),
    render: (p, log) => this.adapter.render(p.messages as unknown as Message[], tools(p), options(p.options), log) as unknown as JsonObject,
    parse: (p, log) => ({ message: this.adapter.parse(response(p.response), context(p.context), log) as unknown as JsonObject }),
    stream_open: (p) => this.streamOpen(p),
    stream_feed: (p, log) => this.streamFeed(p, log),
    stream_close: (p, log) => this.streamClose(p, log),
    cancel: (p) => this.cancel(p),
    read_request: (p) => this.adapter.readRequest(p.body as JsonObject, str(p.session_id), str(p.url)) as unknown as JsonObject,
    estimate: (p) => ({ tokens: this.adapter.estimate(p.messages as unknown as Message[], tools(p)) }),
    tool_id_map: (p) => this.toolIdMap(p),
    shutdown: () => ({}),
  };

  /** The answer to one request line (already parsed). */
  answer(request: JsonObject): JsonObject {
    const log = new Logs();
    const handler = this.handlers[String(request.op)];
    const params = isObject(request.params) ? request.params : {};
    let out: JsonObject;
    try {
      if (handler === undefined) {
        throw new NotImplementedError(`no operation ${JSON.stringify(request.op)}`);
      }
      out = { id: request.id ?? null, ok: true, result: handler(params, log) };
    } catch (err) {
      out = { id: request.id ?? null, ok: false, error: errorToJson(err) };
    }
    out.logs = log.records as unknown as Json[];
    return out;
  }

  private hello(p: JsonObject): JsonObject {
    const offered = Array.isArray(p.protocol_versions) ? p.protocol_versions : [];
    const common = PROTOCOL_VERSIONS.filter((v) => offered.includes(v));
    if (common.length === 0) {
      throw new Error(`no common protocol version (host offers ${JSON.stringify(offered)}, ${NAME} speaks ${JSON.stringify(PROTOCOL_VERSIONS)})`);
    }
    return {
      protocol_version: Math.max(...common),
      adapter: {
        name: NAME,
        provider: PROVIDER,
        wire_api: WIRE_API,
        language: "typescript",
        language_version: `node ${process.versions.node}`,
        library: { name: `${NAME}-adapter`, version: VERSION },
        capabilities: CAPABILITIES,
        provider_tool_id: PROVIDER_TOOL_ID,
        operations: ["render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"],
        cassette_folders: [NAME],
        tool_errors_in_band: null,
        gaps: [], // what the adapter declares it cannot express: {checks, cases, when, reason}
      },
    };
  }

  private streamOpen(p: JsonObject): JsonObject {
    this.streams.set(String(p.stream_id), new WireStream(this.adapter, context(p.context)));
    return { events: [] };
  }

  private streamFeed(p: JsonObject, log: Logs): JsonObject {
    const id = String(p.stream_id);
    const s = this.streams.get(id);
    if (s === undefined || s.over) {
      throw new AdapterError("invalid_request", `no open stream ${JSON.stringify(p.stream_id)}`);
    }
    try {
      return { events: s.feed(Buffer.from(String(p.data), "base64"), log) };
    } finally {
      if (s.over) {
        this.streams.delete(id); // it failed: the stream is over
      }
    }
  }

  private streamClose(p: JsonObject, log: Logs): JsonObject {
    const s = this.streams.get(String(p.stream_id));
    this.streams.delete(String(p.stream_id));
    if (s === undefined || s.over || p.abandon === true) {
      return { events: [] }; // over, or the harness stopped reading: nothing more to say
    }
    return { events: s.close(log) };
  }

  private cancel(p: JsonObject): JsonObject {
    for (const [id, s] of this.streams) {
      if (s.ctx.request_id === p.request_id && !s.over) {
        this.streams.delete(id);
        const events = s.cancelAfter(typeof p.delivered === "number" ? p.delivered : 0);
        return events === null ? { in_flight: false, events: [] } : { in_flight: true, events };
      }
    }
    return { in_flight: false, events: [] };
  }

  private toolIdMap(p: JsonObject): JsonObject {
    const map = this.adapter.toolIdMap(String(p.session_id));
    const args = (Array.isArray(p.args) ? p.args : []).map(String);
    const [first = "", second = ""] = args;
    switch (p.call) {
      case "canonical_for":
        return { value: map.canonicalFor(first) };
      case "provider_for":
        return { value: map.providerFor(first) };
      case "get_provider":
        return { value: map.getProvider(first) };
      case "get_canonical":
        return { value: map.getCanonical(first) };
      case "bind":
        try {
          map.bind(first, second);
        } catch (err) {
          throw new AdapterError("invalid_request", (err as Error).message); // the map stays injective
        }
        return { value: null };
      case "pairs":
        return { value: map.pairs() };
      default:
        throw new NotImplementedError(`no tool_id_map call ${JSON.stringify(p.call)}`);
    }
  }
}

// -- the protocol's values as the adapter's types -------------------------------------------

function str(value: Json | undefined): string | null {
  return typeof value === "string" ? value : null;
}

function tools(p: JsonObject): ToolDefinition[] {
  return (Array.isArray(p.tools) ? p.tools : []) as unknown as ToolDefinition[];
}

function options(value: Json | undefined): Options {
  const o = isObject(value) ? value : {};
  return {
    model: String(o.model ?? ""),
    max_output_tokens: typeof o.max_output_tokens === "number" ? o.max_output_tokens : null,
    temperature: typeof o.temperature === "number" ? o.temperature : null,
    stop_sequences: Array.isArray(o.stop_sequences) ? o.stop_sequences.map(String) : [],
    stream: o.stream === true,
    output_schema: isObject(o.output_schema) ? o.output_schema : null,
    extra: isObject(o.extra) ? o.extra : {},
    provider_tools: Array.isArray(o.provider_tools) ? o.provider_tools.filter(isObject) : [],
    provider_raw: isObject(o.provider_raw) ? o.provider_raw : {},
    critical_key: typeof o.critical_key === "string" ? o.critical_key : "critical",
  };
}

function context(value: Json | undefined): RequestContext {
  const c = isObject(value) ? value : {};
  return {
    session_id: String(c.session_id ?? ""),
    message_id: str(c.message_id),
    request_id: str(c.request_id),
    model: str(c.model),
    created_at: str(c.created_at),
    latency_ms: typeof c.latency_ms === "number" ? c.latency_ms : 0,
    pricing_version: str(c.pricing_version),
    estimated_input_tokens: typeof c.estimated_input_tokens === "number" ? c.estimated_input_tokens : null,
  };
}

/** parse's `response`: a JSON `body`, or `body_base64` (a body that is not JSON). */
function response(value: Json | undefined): WireResponse {
  const r = isObject(value) ? value : {};
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(isObject(r.headers) ? r.headers : {})) {
    headers[k] = Array.isArray(v) ? String(v[0] ?? "") : String(v);
  }
  let body: Json = r.body ?? null;
  if (typeof r.body_base64 === "string") {
    const text = Buffer.from(r.body_base64, "base64").toString("utf8");
    try {
      body = JSON.parse(text) as Json;
    } catch {
      body = text;
    }
  }
  return { status: typeof r.status === "number" ? r.status : 200, headers, body };
}
