#!/usr/bin/env node
// turnspec's Vercel AI SDK bridge: any LanguageModelV3 provider of the AI SDK served over
// turnspec's exec protocol (docs/exec-protocol.md) on standard input and output.
//
//     node bridge.mjs anthropic|openai-chat|openai-responses|gemini|bedrock
//
// The packages are read from TURNSPEC_AI_SDK_DIR (where `turnspec ai-sdk install` ran
// `npm ci`; default: this folder). TURNSPEC_AI_SDK_CONFIG (JSON) is what the named bridge
// (`turnspec conform ai-sdk:anthropic`) declares: name, capabilities, gaps, the API
// record's stop reasons and error signals. Nothing here touches the network: every
// provider is given a `fetch` that captures or answers (lib/capture.mjs), and the global
// one refuses.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

import { answering, capturing } from "./lib/capture.mjs";
import { CANNED } from "./lib/canned.mjs";
import { assemble, Blocks, statusOf, stopReason, usageOf } from "./lib/content.mjs";
import { adapterError, criticalBlock, crash, httpError, ProtocolFailure, wireFormat } from "./lib/errors.mjs";
import { ToolIdMaps } from "./lib/ids.mjs";
import { applyExtra, providerTools } from "./lib/extra.mjs";
import { PromptBuilder, wireModel } from "./lib/prompt.mjs";
import { PROVIDERS } from "./lib/providers.mjs";
import { PROBE, StreamSession } from "./lib/stream.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const PROTOCOL_VERSIONS = [1];
const OPERATIONS = ["render", "parse", "stream", "cancel", "tool_id_map"];

globalThis.fetch = async (url) => {
  throw new Error(`turnspec ai-sdk bridge: network blocked (${url})`);
};

/** One call's log records (docs/exec-protocol.md, Logs) and its lossy-projection helpers. */
class Call {
  constructor(bridge, criticalKey = "critical") {
    this.name = bridge.config.name;
    this.criticalKey = criticalKey;
    this.logs = [];
  }

  warn(message, fields) {
    this.logs.push({ level: "warning", message, fields });
  }

  /** Canonical §7.3: one WARN line with the five fields, or the critical-block error. */
  drop(message, index, blockType, reason) {
    const sid = String(message.session_id ?? "");
    const mid = String(message.id ?? "");
    const critical = message.metadata?.[this.criticalKey];
    if (critical === true || (Array.isArray(critical) && index != null && critical.includes(index))) {
      throw criticalBlock({ adapter: this.name, session_id: sid, message_id: mid, block_type: blockType, reason });
    }
    this.warn(`${this.name}: dropped ${blockType} block of message ${mid} (session ${sid}): ${reason}`, {
      event: "block_dropped",
      adapter: this.name,
      session_id: sid,
      message_id: mid,
      block_type: blockType,
      reason,
    });
  }

  warnOption(option, reason) {
    this.warn(`${this.name}: request option ${option} not sent: ${reason}`, {
      event: "option_dropped",
      adapter: this.name,
      option,
      reason,
    });
  }
}

function warningText(w) {
  return w.message ?? [w.feature ?? w.setting, w.details].filter(Boolean).join(": ");
}

const SETTING = { maxOutputTokens: "max_output_tokens", stopSequences: "stop_sequences", temperature: "temperature" };

class Bridge {
  constructor(apiName, config) {
    const api = PROVIDERS[apiName];
    if (!api) throw new Error(`unknown API ${apiName}: one of ${Object.keys(PROVIDERS).join(", ")}`);
    this.apiName = apiName;
    this.api = api;
    this.config = {
      name: `ai-sdk:${apiName}`,
      provider: api.provider,
      wire_api: api.wireApi,
      cassette_folders: [apiName],
      signals: {},
      stop_reasons: {},
      ...config,
    };
    this.dir = process.env.TURNSPEC_AI_SDK_DIR || HERE;
    const require = createRequire(join(this.dir, "package.json"));
    this.module = require(api.pkg);
    this.ids = new ToolIdMaps(api.mintToolId);
    this.streams = new Map();
  }

  version(pkg) {
    try {
      return JSON.parse(readFileSync(join(this.dir, "node_modules", pkg, "package.json"), "utf8")).version;
    } catch {
      return "";
    }
  }

  model(id, fetch) {
    return this.api.make(this.module, fetch, id);
  }

  /** The SDK's call warnings (SharedV3Warning): a setting it did not send is an
   * `option_dropped` line; anything else a WARN line quoting it. Neither names a block:
   * the V3 warning type has no session, message or block field (canonical §7.3's five). */
  relayWarnings(call, warnings) {
    for (const w of warnings ?? []) {
      const option = w.type === "unsupported" || w.type === "unsupported-setting" ? SETTING[w.feature ?? w.setting] : undefined;
      const text = warningText(w);
      if (option) call.warnOption(option, `the AI SDK: ${text}`);
      else call.warn(`${this.config.name}: the AI SDK warned (${w.type}): ${text}`, { event: "library_warning", adapter: this.config.name, warning: w });
    }
  }

  hello(p) {
    const common = (p.protocol_versions ?? []).filter((v) => PROTOCOL_VERSIONS.includes(v));
    if (!common.length) throw new Error(`no common protocol version (host offers ${JSON.stringify(p.protocol_versions)})`);
    const c = this.config;
    return {
      protocol_version: Math.max(...common),
      adapter: {
        name: c.name,
        provider: c.provider,
        wire_api: c.wire_api,
        language: "javascript",
        language_version: `node ${process.versions.node}`,
        library: { name: this.api.pkg, version: this.version(this.api.pkg) },
        capabilities: c.capabilities ?? {},
        provider_tool_id: c.provider_tool_id ?? "^\\S+$",
        operations: OPERATIONS,
        cassette_folders: c.cassette_folders,
        tool_errors_in_band: c.tool_errors_in_band ?? null,
        gaps: c.gaps ?? [],
      },
    };
  }

  async render(p, call) {
    call.criticalKey = p.options?.critical_key || "critical";
    const sid = String(p.messages?.[0]?.session_id ?? "");
    const options = p.options ?? {};
    const builder = new PromptBuilder(call, this.ids.of(sid));
    const built = builder.build(p.messages ?? [], p.tools ?? [], options);
    providerTools(this.apiName, built, options.provider_tools ?? [], call);
    applyExtra(this.apiName, built, options.extra ?? {}, call);
    const model = wireModel(options.model);
    const { sent, warnings } = await this.capture(model, built, options.stream, call);
    const left = warnings.length ? await this.attribute(model, built, options.stream, call, builder, sent, warnings) : [];
    this.relayWarnings(call, left);
    return { method: sent.method, path: sent.url.pathname + sent.url.search, headers: this.wireHeaders(sent.headers), body: sent.body };
  }

  /** The request the provider builds for call options `built`, and its warnings. */
  async capture(modelId, built, stream, call) {
    const sink = [];
    const model = this.model(modelId, capturing(sink, stream ? null : CANNED[this.config.wire_api]));
    let warnings = [];
    try {
      if (stream) {
        const { stream: parts } = await model.doStream(built);
        const reader = parts.getReader();
        const first = await reader.read();
        if (!first.done && first.value.type === "stream-start") warnings = first.value.warnings ?? [];
        await reader.cancel().catch(() => {});
      } else {
        warnings = (await model.doGenerate(built)).warnings ?? [];
      }
    } catch (exc) {
      if (exc instanceof ProtocolFailure) throw exc;
      if (!sink.length) throw adapterError("invalid_request", `the AI SDK built no request: ${exc?.name}: ${exc?.message}`);
      call.warn(`${this.config.name}: the answer to the captured request did not parse (${exc?.message}); its warnings are unknown`, {
        event: "library_warning",
        adapter: this.config.name,
      });
    }
    return { sent: sink[0], warnings };
  }

  /** Canonical §7.3's five fields for the blocks the package dropped with a warning (a V3
   * warning names no session, message or block): a part whose removal leaves the request
   * as it was, and takes a warning with it, was dropped with that warning. Each such block
   * gets the §7.3 line (the warning its reason), or fails the request when marked critical;
   * the warnings left over are returned. A part the package drops without a warning stays
   * unreported: that is the package's own silence. */
  async attribute(modelId, built, stream, call, builder, sent, warnings) {
    const base = JSON.stringify(sent.body);
    const all = warnings.map((w) => JSON.stringify(w));
    const left = [...all];
    for (const [mi, message] of built.prompt.entries()) {
      if (!Array.isArray(message.content)) continue;
      for (const [pi, part] of message.content.entries()) {
        const origin = builder.origins.get(part);
        if (!origin || !left.length) continue;
        const content = message.content.filter((_, j) => j !== pi);
        const prompt = built.prompt.flatMap((m, j) => (j !== mi ? [m] : content.length ? [{ ...m, content }] : []));
        const other = await this.capture(modelId, { ...built, prompt }, stream, { warn() {} });
        if (JSON.stringify(other.sent?.body) !== base) continue;
        const remaining = other.warnings.map((w) => JSON.stringify(w));
        const gone = all.filter((w) => {
          const at = remaining.indexOf(w);
          if (at >= 0) remaining.splice(at, 1);
          return at < 0;
        });
        const hit = gone.find((w) => left.includes(w));
        if (hit === undefined) continue;
        left.splice(left.indexOf(hit), 1);
        call.drop(origin.message, origin.index, origin.type, `the AI SDK dropped it: ${warningText(JSON.parse(hit))}`);
      }
    }
    return left.map((w) => JSON.parse(w));
  }

  /** The request's content type and each header the API's record requires, as sent. */
  wireHeaders(headers) {
    const out = { "content-type": headers["content-type"] ?? "application/json" };
    for (const name of this.config.headers ?? []) {
      const v = headers[name.toLowerCase()];
      if (v !== undefined) out[name.toLowerCase()] = v;
    }
    return out;
  }

  async parse(p, call) {
    const response = p.response ?? {};
    const ctx = p.context ?? {};
    const status = Number(response.status ?? 200);
    const bytes = "body_base64" in response ? Buffer.from(response.body_base64, "base64") : Buffer.from(JSON.stringify(response.body ?? null));
    const model = this.model(wireModel(ctx.model) || "turnspec-replay", answering(status, response.headers, bytes));
    let result;
    try {
      result = await model.doGenerate({ prompt: PROBE });
    } catch (exc) {
      const body = "body" in response ? response.body : bytes.toString("utf8");
      if (exc?.name === "AI_APICallError" || status >= 400) {
        throw httpError(this.config.signals, exc?.statusCode ?? status, body, response.headers ?? {}, exc?.message);
      }
      throw wireFormat(`the AI SDK could not parse the response: ${exc?.name}: ${String(exc?.message).replace(/\s+/g, " ").slice(0, 300)}`);
    }
    const blocks = new Blocks(this.api.optionsKey, this.ids.of(String(ctx.session_id ?? "")));
    for (const part of result.content ?? []) blocks.add(part);
    const stop = stopReason(this.config, result.finishReason, result.providerMetadata);
    const message = assemble(this.config, ctx, blocks.done(), {
      modelId: result.response?.modelId,
      usage: usageOf(this.config, result.usage),
      status: statusOf(stop),
    });
    return { message };
  }

  async streamOpen(p, call) {
    const session = new StreamSession(this, call, p.context ?? {});
    this.streams.set(p.stream_id, session);
    return this.step(p.stream_id, session, () => session.start());
  }

  async streamFeed(p, call) {
    const session = this.streams.get(p.stream_id);
    if (!session) throw adapterError("invalid_request", `no open stream ${p.stream_id}`);
    session.call = call;
    return this.step(p.stream_id, session, () => session.push(Buffer.from(String(p.data), "base64")));
  }

  async streamClose(p, call) {
    const session = this.streams.get(p.stream_id);
    this.streams.delete(p.stream_id);
    if (!session) return { events: [] };
    if (p.abandon) {
      session.abandon();
      return { events: [] };
    }
    session.call = call;
    return { events: await session.close() };
  }

  async step(id, session, fn) {
    try {
      return { events: await fn() };
    } finally {
      if (session.over) this.streams.delete(id);
    }
  }

  cancel(p) {
    for (const [id, s] of this.streams) {
      if (s.ctx.request_id === p.request_id && !s.over) {
        this.streams.delete(id);
        return { in_flight: true, events: s.cancelAfter(Number(p.delivered ?? 0)) };
      }
    }
    return { in_flight: false, events: [] };
  }

  toolIdMap(p) {
    const m = this.ids.of(String(p.session_id));
    const args = p.args ?? [];
    switch (p.call) {
      case "canonical_for":
        return { value: m.canonicalFor(String(args[0])) };
      case "provider_for":
        return { value: m.providerFor(String(args[0])) };
      case "get_provider":
        return { value: m.getProvider(String(args[0])) };
      case "get_canonical":
        return { value: m.getCanonical(String(args[0])) };
      case "pairs":
        return { value: m.pairs() };
      case "bind":
        try {
          m.bind(String(args[0]), String(args[1]));
        } catch (exc) {
          throw adapterError("invalid_request", exc.message);
        }
        return { value: null };
      default:
        throw new ProtocolFailure({ kind: "not_implemented", message: `no tool id map call ${p.call}` });
    }
  }

  async answer(request) {
    const call = new Call(this);
    const p = request.params ?? {};
    const ops = {
      hello: () => this.hello(p),
      render: () => this.render(p, call),
      parse: () => this.parse(p, call),
      stream_open: () => this.streamOpen(p, call),
      stream_feed: () => this.streamFeed(p, call),
      stream_close: () => this.streamClose(p, call),
      cancel: () => this.cancel(p),
      tool_id_map: () => this.toolIdMap(p),
      shutdown: () => ({}),
    };
    const op = ops[request.op];
    try {
      if (!op) throw new ProtocolFailure({ kind: "not_implemented", message: `${this.config.name}: no operation ${request.op}` });
      return { id: request.id, ok: true, result: await op(), logs: call.logs };
    } catch (exc) {
      return { id: request.id, ok: false, error: crash(exc), logs: call.logs };
    }
  }
}

async function main() {
  const apiName = process.argv[2];
  let bridge;
  try {
    bridge = new Bridge(apiName, JSON.parse(process.env.TURNSPEC_AI_SDK_CONFIG || "{}"));
  } catch (exc) {
    process.stderr.write(`turnspec ai-sdk bridge: ${exc.message}\n`);
    process.exit(2);
  }
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    let request;
    try {
      request = JSON.parse(line);
    } catch (exc) {
      process.stderr.write(`turnspec ai-sdk bridge: a request line is not JSON: ${exc.message}\n`);
      process.exit(2);
    }
    const answer = await bridge.answer(request);
    process.stdout.write(`${JSON.stringify(answer)}\n`);
    if (request.op === "shutdown") break;
  }
  process.exit(0);
}

main();
