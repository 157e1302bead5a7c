// The `{{name}}` adapter: canonical messages <-> the Anthropic Messages wire API
// (`POST /v1/messages`), written from Anthropic's API reference (platform.claude.com/docs:
// Messages, streaming, extended thinking, vision, tool use, errors) and the adapter contract
// (§4.1, §4.2, §6, §7).
//
// - SYSTEM messages become the top-level `system` (texts joined by a blank line; a list of
//   text blocks when a block carries more than its text, e.g. `cache_control`).
// - Tool calls are `tool_use` blocks of the assistant message, `input` a JSON object; results
//   are `tool_result` blocks of a `user` message (consecutive tool messages share one, as
//   parallel results must), with `is_error`. Canonical tool ids (`tu_<ULID>`) map to the
//   provider's (`toolu_...`) through one ToolIdMap per session.
// - Images are `image` blocks (`source` base64 with its media_type, or url).
// - Thinking goes back with its `signature`, redacted thinking with its `data`, only on
//   messages this provider issued (`metadata.provider` "anthropic"): the API refuses a
//   signature it did not issue, so another provider's thinking is dropped with the §7.3
//   WARN record.
// - Fields canonical has no home for (a block's `cache_control` or `citations`, the reply's
//   id and stop reason) ride in `metadata.provider_raw["{{name}}"]` and go back on render.
// - Usage maps directly: input_tokens, output_tokens, cache_read_input_tokens ->
//   cached_input_tokens, cache_creation_input_tokens.
//
// Where to extend: a provider that differs from Anthropic changes the method named after the
// part of the wire it touches (Render.system, Render.block, Render.toolResults, blockFromWire,
// classifyError; stream.ts for streams), with a cassette in cassettes/{{name}}/ for each
// difference.

import type { Block, ImageBlock, Message, Options, OtherBlock, RequestContext, StopReason, TokenUsage, ToolDefinition, ToolResultBlock, ToolUseBlock } from "./canonical.js";
import { assemble } from "./canonical.js";
import { ToolIdMap, newUlid } from "./ids.js";
import { AdapterError, WireFormatError, isObject } from "./protocol.js";
import type { ErrorClass, Json, JsonObject, Logs } from "./protocol.js";
import { NAME, classForStatus, dropBlock, errorText, lowerKeys, ownRaw, parseDataUrl, requestMessage, retryAfter, textTokens } from "./wire.js";
import type { ParsedRequest, WireRequest, WireResponse } from "./wire.js";

export const PROVIDER = "anthropic";
export const WIRE_API = "anthropic-messages";
export const PATH = "/v1/messages";
/** The `anthropic-version` header every request sends (docs: API versioning). */
export const ANTHROPIC_VERSION = "2023-06-01";
/** `max_tokens` is required by the API: this when the request sets no limit. */
export const DEFAULT_MAX_TOKENS = 4096;
export const IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];
/** Every provider tool id this adapter mints matches it (hello's `provider_tool_id`). */
export const PROVIDER_TOOL_ID = "^toolu_[0-9A-HJKMNP-TV-Z]{26}$";

/** Canonical §7.2: only what this adapter really does (adapter contract §3.4). */
export const CAPABILITIES: JsonObject = {
  supports_thinking: true,
  supports_images: true,
  supports_tools: true,
  supports_system_prompt: true,
  supports_structured_output: false, // no response schema here: output_schema is not sent (WARN)
  supports_streaming: true,
  supports_streaming_tool_calls: true,
  supports_parallel_tool_calls: true,
  // true needs a cassette whose case exercises it (turnspec's TC002): add one, then say so
  supports_prompt_caching: false,
  supports_system_messages_in_list: false, // one top-level `system`: SYSTEM messages are hoisted
  max_context_tokens: 200000, // the served model's limits: set your model's
  max_output_tokens: 64000,
  accepted_image_media_types: IMAGE_TYPES,
};

/** stop_reason -> canonical StopReason (docs: handling stop reasons). */
export const STOP_REASONS: Record<string, StopReason> = {
  end_turn: "end_turn",
  max_tokens: "max_tokens",
  stop_sequence: "stop_sequence",
  tool_use: "tool_use",
  pause_turn: "end_turn", // a server tool paused the turn: the reply so far is the turn
  refusal: "end_turn", // the model declined: its text is the reply
  model_context_window_exceeded: "max_tokens",
};

/** The body's `error.type` that refines the status's class (contract §6.2; docs: errors). */
const ERROR_TYPES: Record<string, ErrorClass> = {
  overloaded_error: "rate_limit",
  rate_limit_error: "rate_limit",
  authentication_error: "auth",
  permission_error: "auth",
  api_error: "server_error",
  not_found_error: "invalid_request",
  request_too_large: "context_overflow",
};
/** An invalid_request_error whose message says the prompt is too long is a context overflow. */
const CONTEXT_OVERFLOW = /context|tokens exceeds|too long/i;

/** A URL image's media type when this adapter did not render it (the wire carries none). */
const URL_IMAGE_MEDIA_TYPE = "image/jpeg";
/** The members of each wire block canonical holds; any other rides in provider_raw. */
const CANONICAL_KEYS: Record<string, string[]> = {
  text: ["type", "text"],
  thinking: ["type", "thinking", "signature"],
  redacted_thinking: ["type", "data"],
  tool_use: ["type", "id", "name", "input"],
  image: ["type", "source"],
  tool_result: ["type", "tool_use_id", "content", "is_error"],
};

export class Adapter {
  private readonly maps = new Map<string, ToolIdMap>();
  // (session, url) -> the media type a URL image was rendered with: the wire carries none
  private readonly urlMedia = new Map<string, string>();

  toolIdMap(sessionId: string): ToolIdMap {
    let map = this.maps.get(sessionId);
    if (map === undefined) {
      map = new ToolIdMap(() => "toolu_" + newUlid());
      this.maps.set(sessionId, map);
    }
    return map;
  }

  // -- canonical -> wire ---------------------------------------------------------------

  render(messages: Message[], tools: ToolDefinition[], options: Options, log: Logs): WireRequest {
    const r = new Render(this, options, log);
    const body: JsonObject = { model: modelFor(options.model), max_tokens: options.max_output_tokens ?? DEFAULT_MAX_TOKENS };
    const system = r.system(messages);
    if (system !== null) {
      body.system = system;
    }
    body.messages = r.messages(messages);
    const own = ownRaw(options.provider_raw);
    const extras = isObject(own.tool_extras) ? own.tool_extras : {};
    const wireTools: Json[] = tools.map((t) => renderTool(t, extras[t.name]));
    wireTools.push(...options.provider_tools);
    if (wireTools.length > 0) {
      body.tools = wireTools;
    }
    if (options.stop_sequences.length > 0) {
      body.stop_sequences = options.stop_sequences;
    }
    if (options.temperature !== null) {
      body.temperature = options.temperature;
    }
    if (options.stream) {
      body.stream = true;
    }
    if (options.output_schema !== null) {
      log.warning(`${NAME}: request option output_schema not sent: supports_structured_output is false`, {
        event: "option_dropped",
        adapter: NAME,
        option: "output_schema",
        reason: "supports_structured_output is false for this adapter",
      });
    }
    for (const [key, value] of Object.entries(options.extra)) {
      if (!(key in body)) {
        body[key] = value; // provider knobs (contract §3.2: `thinking`, `tool_choice`) pass through verbatim
      }
    }
    return { method: "POST", path: PATH, headers: { "anthropic-version": ANTHROPIC_VERSION, "content-type": "application/json" }, body };
  }

  rememberUrlMedia(sessionId: string, url: string, mediaType: string): void {
    this.urlMedia.set(JSON.stringify([sessionId, url]), mediaType);
  }

  // -- wire -> canonical (replies) -----------------------------------------------------

  parse(response: WireResponse, ctx: RequestContext, log: Logs): Message {
    const body = response.body;
    if (response.status >= 400 || (isObject(body) && body.type === "error")) {
      throw classifyError(response.status >= 400 ? response.status : 500, body, response.headers);
    }
    if (!isObject(body) || !Array.isArray(body.content)) {
      throw new WireFormatError("Anthropic response has no `content` list");
    }
    const content: Block[] = [];
    const extras: JsonObject = {};
    for (const wb of body.content) {
      const { block, extra } = this.blockFromWire(ctx.session_id, wb);
      if (Object.keys(extra).length > 0) {
        extras[String(content.length)] = extra;
      }
      content.push(block);
    }
    stopReason(body.stop_reason ?? null, log);
    const raw: JsonObject = {};
    for (const k of ["id", "stop_reason", "stop_sequence"]) {
      const v = body[k];
      if (v !== undefined && v !== null) {
        raw[k] = v;
      }
    }
    if (Object.keys(extras).length > 0) {
      raw.blocks = extras;
    }
    const model = typeof body.model === "string" ? body.model : null;
    const message = assemble(PROVIDER, ctx, content, model, usageFromWire(body.usage));
    message.metadata.provider_raw = { [NAME]: raw };
    return message;
  }

  /** One wire content block -> its canonical block, and the members canonical cannot hold. */
  blockFromWire(sessionId: string, wb: Json): { block: Block; extra: JsonObject } {
    if (!isObject(wb) || typeof wb.type !== "string") {
      throw new WireFormatError(`content block is not an object with a type: ${JSON.stringify(wb).slice(0, 80)}`);
    }
    const t = wb.type;
    const keys = CANONICAL_KEYS[t];
    const extra: JsonObject = keys === undefined ? {} : Object.fromEntries(Object.entries(wb).filter(([k]) => !keys.includes(k)));
    switch (t) {
      case "text":
        return { block: { type: "text", text: String(wb.text ?? "") }, extra };
      case "thinking":
        return {
          block: { type: "thinking", text: String(wb.thinking ?? ""), signature: typeof wb.signature === "string" && wb.signature !== "" ? wb.signature : null },
          extra,
        };
      case "redacted_thinking":
        return { block: { type: "redacted_thinking", data: String(wb.data ?? "") }, extra };
      case "tool_use": {
        if (typeof wb.id !== "string" || typeof wb.name !== "string") {
          throw new WireFormatError(`tool_use block without a string id and name: ${JSON.stringify(wb).slice(0, 80)}`);
        }
        if (!isObject(wb.input)) {
          // never invent {} for input the API documents as an object
          throw new WireFormatError(`tool_use ${wb.id} input is not a JSON object`);
        }
        const id = this.toolIdMap(sessionId).canonicalFor(wb.id);
        return { block: { type: "tool_use", id, name: wb.name, input: wb.input }, extra };
      }
      case "image": {
        const image = this.imageFromWire(sessionId, wb.source);
        if (image !== null) {
          return { block: image, extra };
        }
        break;
      }
    }
    // documents, server tools, search results: kept whole as a block of this adapter's (§10.3)
    return { block: { type: `${NAME}:${t}`, raw: wb }, extra: {} };
  }

  private imageFromWire(sessionId: string, source: Json | undefined): ImageBlock | null {
    if (!isObject(source)) {
      return null;
    }
    if (source.type === "base64" && typeof source.data === "string") {
      return { type: "image", source: { kind: "base64", data: source.data }, media_type: String(source.media_type ?? "").toLowerCase() };
    }
    if (source.type === "url" && typeof source.url === "string") {
      const data = parseDataUrl(source.url); // a data: URL is inline bytes, whatever field carried it
      if (data !== null) {
        return { type: "image", source: { kind: "base64", data: data.data }, media_type: data.mediaType };
      }
      const media = this.urlMedia.get(JSON.stringify([sessionId, source.url])) ?? URL_IMAGE_MEDIA_TYPE;
      return { type: "image", source: { kind: "url", data: source.url }, media_type: media };
    }
    return null;
  }

  // -- wire -> canonical (requests: replay, turnspec's TC802) ----------------------------

  /** `url` is the request's, when the harness knows it (the model travels in the body here). */
  readRequest(body: JsonObject, sessionId: string | null, url: string | null = null): ParsedRequest {
    const sid = sessionId ?? "sess_" + newUlid().toLowerCase();
    const model = `${PROVIDER}:${typeof body.model === "string" ? body.model : "unknown"}`;
    const messages: Message[] = [];
    const optRaw: JsonObject = {};
    const system = body.system;
    if (typeof system === "string") {
      messages.push(requestMessage(sid, "system", [{ type: "text", text: system }], {}));
    } else if (Array.isArray(system)) {
      const blocks: Block[] = [];
      const extras: JsonObject = {};
      system.forEach((b, i) => {
        const sb = isObject(b) ? b : {};
        blocks.push({ type: "text", text: String(sb.text ?? "") });
        const extra = Object.fromEntries(Object.entries(sb).filter(([k]) => k !== "type" && k !== "text"));
        if (Object.keys(extra).length > 0) {
          extras[String(i)] = extra; // e.g. cache_control
        }
      });
      const meta: JsonObject = Object.keys(extras).length > 0 ? { provider_raw: { [NAME]: { blocks: extras } } } : {};
      messages.push(requestMessage(sid, "system", blocks, meta));
      optRaw.system_as_blocks = true; // rendered back as a list
    }
    for (const wm of Array.isArray(body.messages) ? body.messages : []) {
      if (isObject(wm)) {
        messages.push(...this.readMessage(sid, wm, model));
      }
    }
    const { tools, native, extras } = readTools(body);
    if (Object.keys(extras).length > 0) {
      optRaw.tool_extras = extras;
    }
    const known = new Set(["model", "max_tokens", "system", "messages", "tools", "stop_sequences", "temperature", "stream"]);
    const extra: JsonObject = Object.fromEntries(Object.entries(body).filter(([k]) => !known.has(k)));
    return {
      messages,
      tools,
      options: {
        model,
        max_output_tokens: typeof body.max_tokens === "number" ? body.max_tokens : null,
        temperature: typeof body.temperature === "number" ? body.temperature : null,
        stop_sequences: Array.isArray(body.stop_sequences) ? body.stop_sequences.map(String) : [],
        stream: body.stream === true,
        output_schema: null,
        extra,
        provider_tools: native,
        provider_raw: Object.keys(optRaw).length > 0 ? { [NAME]: optRaw } : {},
        critical_key: "critical",
      },
    };
  }

  /** One wire message: an assistant message, or a user message split at its tool results. */
  private readMessage(sid: string, wm: JsonObject, model: string): Message[] {
    const c = wm.content;
    const blocks: Json[] = typeof c === "string" ? [{ type: "text", text: c }] : Array.isArray(c) ? c : [];
    if (wm.role === "assistant") {
      const { content, extras } = this.readBlocks(sid, blocks);
      const meta: JsonObject = { model, provider: PROVIDER };
      if (Object.keys(extras).length > 0) {
        meta.provider_raw = { [NAME]: { blocks: extras } };
      }
      return [requestMessage(sid, "assistant", content.length > 0 ? content : [{ type: "text", text: "" }], meta)];
    }
    const out: Message[] = [];
    let pending: Json[] = [];
    const flush = (): void => {
      if (pending.length > 0) {
        const { content, extras } = this.readBlocks(sid, pending);
        out.push(requestMessage(sid, "user", content, Object.keys(extras).length > 0 ? { provider_raw: { [NAME]: { blocks: extras } } } : {}));
        pending = [];
      }
    };
    for (const b of blocks) {
      if (isObject(b) && b.type === "tool_result") {
        flush();
        out.push(this.readToolResult(sid, b));
      } else {
        pending.push(b);
      }
    }
    flush();
    return out;
  }

  private readBlocks(sid: string, blocks: Json[]): { content: Block[]; extras: JsonObject } {
    const content: Block[] = [];
    const extras: JsonObject = {};
    for (const wb of blocks) {
      const { block, extra } = this.blockFromWire(sid, wb);
      if (Object.keys(extra).length > 0) {
        extras[String(content.length)] = extra;
      }
      content.push(block);
    }
    return { content, extras };
  }

  private readToolResult(sid: string, wb: JsonObject): Message {
    const cid = this.toolIdMap(sid).canonicalFor(String(wb.tool_use_id));
    const raw = wb.content ?? "";
    const inner = typeof raw === "string" ? [{ type: "text", text: raw }] : Array.isArray(raw) ? raw : [];
    const result: ToolResultBlock = { type: "tool_result", tool_use_id: cid, content: this.readBlocks(sid, inner).content };
    if (wb.is_error === true) {
      result.is_error = true;
    }
    const keys = CANONICAL_KEYS.tool_result ?? [];
    const extra = Object.fromEntries(Object.entries(wb).filter(([k]) => !keys.includes(k)));
    const meta: JsonObject = { parent_tool_use_id: cid };
    if (Object.keys(extra).length > 0) {
      meta.provider_raw = { [NAME]: { blocks: { "0": extra } } };
    }
    return requestMessage(sid, "tool", [result], meta);
  }

  // -- estimates (contract §3.1 estimate_input_tokens) -----------------------------------

  /**
   * A heuristic, as the contract allows: about 4 characters a token, 4 tokens of framing per
   * message, about 1600 tokens for an image of unknown size (Anthropic's vision docs: width x
   * height / 750, a 1568 px long edge at most), and the tool-use system prompt the API adds
   * when there are tools. Anthropic's token counting endpoint does better.
   */
  estimate(messages: Message[], tools: ToolDefinition[]): number {
    let n = 0;
    for (const m of messages) {
      n += 4 + m.content.reduce((sum, b) => sum + blockTokens(b), 0);
    }
    if (tools.length > 0) {
      n += 390 + tools.reduce((sum, t) => sum + textTokens(t.name + " " + t.description + JSON.stringify(t.input_schema)), 0);
    }
    return n;
  }
}

// -- rendering, one call at a time --------------------------------------------------------

class Render {
  constructor(
    private readonly a: Adapter,
    private readonly options: Options,
    private readonly log: Logs,
  ) {}

  /** Every SYSTEM message hoisted into `system` (contract §4.1.2): a string, or text blocks. */
  system(messages: Message[]): Json | null {
    const blocks: JsonObject[] = [];
    for (const m of messages) {
      if (m.role !== "system") {
        continue;
      }
      const extras = blockExtras(m);
      m.content.forEach((b, i) => {
        if (b.type === "text") {
          blocks.push({ type: "text", text: (b as { text: string }).text, ...extrasAt(extras, i) });
        } else {
          this.drop(m, i, b.type, "system prompts carry text only");
        }
      });
    }
    if (blocks.length === 0) {
      return null;
    }
    const asBlocks = ownRaw(this.options.provider_raw).system_as_blocks === true;
    if (asBlocks || blocks.some((b) => Object.keys(b).length > 2)) {
      return blocks; // cache_control or other block fields need the block form
    }
    return blocks.map((b) => String(b.text)).join("\n\n");
  }

  messages(messages: Message[]): JsonObject[] {
    const out: JsonObject[] = [];
    let lastWasResults = false;
    for (const m of messages) {
      if (m.role === "system") {
        continue;
      }
      if (m.role === "tool") {
        const results = this.toolResults(m);
        const last = out[out.length - 1];
        if (results.length > 0 && lastWasResults && last !== undefined && Array.isArray(last.content)) {
          last.content.push(...results); // parallel tool results share one user message
        } else if (results.length > 0) {
          out.push({ role: "user", content: results });
          lastWasResults = true;
        }
        continue;
      }
      const content: JsonObject[] = [];
      m.content.forEach((b, i) => {
        const wb = this.block(m, i, b);
        if (wb !== null) {
          content.push(wb);
        }
      });
      if (content.length > 0) {
        // every block dropped (and logged): no message, since the API refuses an empty one
        out.push({ role: m.role === "assistant" ? "assistant" : "user", content });
        lastWasResults = false;
      }
    }
    return out;
  }

  /** One block of a user or assistant message, with the members read back from provider_raw. */
  block(m: Message, i: number, b: Block): JsonObject | null {
    const extra = extrasAt(blockExtras(m), i);
    switch (b.type) {
      case "text":
        return { type: "text", text: (b as { text: string }).text, ...extra };
      case "image": {
        const image = this.image(m, i, b as ImageBlock);
        return image === null ? null : { ...image, ...extra };
      }
      case "tool_use": {
        const use = b as ToolUseBlock;
        return { type: "tool_use", id: this.a.toolIdMap(m.session_id).providerFor(use.id), name: use.name, input: use.input, ...extra };
      }
      case "thinking": {
        const t = b as { text: string; signature: string | null };
        let why = foreign(m, "thinking");
        if (why === null && (t.signature === null || t.signature === "")) {
          why = "unsigned thinking block (the API requires the signature it issued)";
        }
        if (why !== null) {
          this.drop(m, i, "thinking", why);
          return null;
        }
        return { type: "thinking", thinking: t.text, signature: t.signature, ...extra };
      }
      case "redacted_thinking": {
        const why = foreign(m, "redacted_thinking");
        if (why !== null) {
          this.drop(m, i, "redacted_thinking", why);
          return null;
        }
        return { type: "redacted_thinking", data: (b as { data: string }).data, ...extra };
      }
    }
    if (b.type.startsWith(`${NAME}:`) && isObject((b as OtherBlock).raw)) {
      return { ...((b as OtherBlock).raw as JsonObject) }; // a block this adapter read and kept whole
    }
    this.drop(m, i, b.type, `no Anthropic Messages equivalent for a ${b.type} block in a ${m.role} message`);
    return null;
  }

  image(m: Message, i: number, b: ImageBlock): JsonObject | null {
    if (!isObject(b.source) || typeof b.media_type !== "string") {
      this.drop(m, i, "image", "an image block without a source or a media type");
      return null;
    }
    let source: { kind: string; data: string } = b.source;
    let media = b.media_type.toLowerCase(); // IANA media types are case-insensitive
    if (source.kind === "url") {
      const data = parseDataUrl(source.data); // inline bytes go as base64 (the API fetches http(s) only)
      if (data !== null) {
        source = { kind: "base64", data: data.data };
        media = data.mediaType;
      }
    }
    if (source.kind === "url") {
      this.a.rememberUrlMedia(m.session_id, source.data, media);
      return { type: "image", source: { type: "url", url: source.data } };
    }
    if (source.kind !== "base64") {
      this.drop(m, i, "image", "file_ref images must be inlined by the harness (adapters do no I/O)");
      return null;
    }
    if (!IMAGE_TYPES.includes(media)) {
      this.drop(m, i, "image", `media type ${media} is not accepted (accepted: ${IMAGE_TYPES.join(", ")})`);
      return null;
    }
    return { type: "image", source: { type: "base64", media_type: media, data: source.data } };
  }

  /** A tool message's results, as `tool_result` blocks of a user message. */
  toolResults(m: Message): JsonObject[] {
    const out: JsonObject[] = [];
    const extras = blockExtras(m);
    m.content.forEach((b, i) => {
      if (b.type !== "tool_result") {
        this.drop(m, i, b.type, "a tool message carries tool_result blocks only");
        return;
      }
      const result = b as ToolResultBlock;
      const inner: JsonObject[] = [];
      result.content.forEach((x, j) => {
        if (x.type === "text") {
          inner.push({ type: "text", text: (x as { text: string }).text });
        } else if (x.type === "image") {
          const image = this.image(m, i, x as ImageBlock);
          if (image !== null) {
            inner.push(image);
          }
        } else if (x.type.startsWith(`${NAME}:`) && isObject((x as OtherBlock).raw)) {
          inner.push({ ...((x as OtherBlock).raw as JsonObject) });
        } else {
          this.drop(m, i, x.type, `tool_result content ${j} has no Anthropic equivalent`);
        }
      });
      const wire: JsonObject = { type: "tool_result", tool_use_id: this.a.toolIdMap(m.session_id).providerFor(result.tool_use_id), content: inner };
      if (result.is_error === true) {
        wire.is_error = true;
      }
      out.push({ ...wire, ...extrasAt(extras, i) });
    });
    return out;
  }

  drop(m: Message, index: number, blockType: string, reason: string): void {
    dropBlock(this.log, this.options, m, index, blockType, reason); // canonical §7.3 (wire.ts)
  }
}

/** Why a thinking block of `m` cannot go back, or null: only Anthropic's own signatures can. */
function foreign(m: Message, what: string): string | null {
  const provider = m.metadata?.provider;
  if (provider === PROVIDER) {
    return null;
  }
  const who = typeof provider === "string" && provider !== "" ? provider : "an unknown provider";
  return `${what} issued by ${who}; Anthropic rejects signatures it did not issue`;
}

/** The members of a message's wire blocks that canonical cannot hold, by block index. */
function blockExtras(m: Message): JsonObject {
  const blocks = ownRaw(m.metadata?.provider_raw).blocks;
  return isObject(blocks) ? blocks : {};
}

function extrasAt(extras: JsonObject, i: number): JsonObject {
  const e = extras[String(i)];
  return isObject(e) ? e : {};
}

function renderTool(t: ToolDefinition, extra: Json | undefined): JsonObject {
  const tool: JsonObject = { name: t.name, description: t.description, input_schema: t.input_schema };
  return isObject(extra) ? { ...tool, ...extra } : tool; // e.g. cache_control, read from a request
}

function readTools(body: JsonObject): { tools: ToolDefinition[]; native: JsonObject[]; extras: JsonObject } {
  const tools: ToolDefinition[] = [];
  const native: JsonObject[] = [];
  const extras: JsonObject = {};
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(t)) {
      continue;
    }
    if (typeof t.name !== "string" || !isObject(t.input_schema) || (t.type !== undefined && t.type !== "custom")) {
      native.push(t); // a server tool (web search, code execution): kept as a provider tool
      continue;
    }
    const { name, description, input_schema, ...extra } = t;
    tools.push({
      name,
      description: typeof description === "string" ? description : "",
      input_schema,
      side_effects: "execute", // the wire does not say: the most careful reading
    });
    if (Object.keys(extra).length > 0) {
      extras[name] = extra;
    }
  }
  return { tools, native, extras };
}

// -- shared helpers ------------------------------------------------------------------------

/** The model id the provider knows: the canonical id without its `anthropic:` prefix (§6.3). */
export function modelFor(model: string): string {
  const prefix = `${PROVIDER}:`;
  return model.startsWith(prefix) && model.length > prefix.length ? model.slice(prefix.length) : model;
}

/** Anthropic `usage` as TokenUsage (contract §7.2), null when absent. */
export function usageFromWire(usage: Json | undefined): TokenUsage | null {
  if (!isObject(usage)) {
    return null;
  }
  const num = (v: Json | undefined): number => (typeof v === "number" ? v : 0);
  return {
    input_tokens: num(usage.input_tokens),
    output_tokens: num(usage.output_tokens),
    cached_input_tokens: num(usage.cache_read_input_tokens),
    cache_creation_input_tokens: num(usage.cache_creation_input_tokens),
  };
}

/** A stop_reason -> canonical; an undocumented one reads as end_turn with a WARN record. */
export function stopReason(raw: Json, log: Logs): StopReason {
  const found = typeof raw === "string" ? STOP_REASONS[raw] : undefined;
  if (found !== undefined) {
    return found;
  }
  log.warning(`${NAME}: undocumented stop_reason ${JSON.stringify(raw)} read as end_turn`, {
    event: "unknown_stop_reason",
    adapter: NAME,
    stop_reason: raw,
  });
  return "end_turn";
}

/**
 * Adapter contract §6.2, §6.3: the class of the HTTP status, refined by the body's
 * `error.type`; the request id (the body's `request_id`, else the `request-id` header), and
 * a `retry-after` hint.
 */
export function classifyError(status: number, body: Json, headers: Record<string, string>): AdapterError {
  const err = isObject(body) && isObject(body.error) ? body.error : null;
  const type = err !== null && typeof err.type === "string" ? err.type : null;
  const text = errorText(body, err);
  let cls: ErrorClass | undefined = type !== null ? ERROR_TYPES[type] : undefined;
  if (type === "invalid_request_error" && CONTEXT_OVERFLOW.test(text)) {
    cls = "context_overflow";
  }
  cls ??= classForStatus(status);
  const h = lowerKeys(headers);
  const rid = isObject(body) && typeof body.request_id === "string" ? body.request_id : (h["request-id"] ?? null);
  return new AdapterError(cls, `${type ?? "error"}: ${text}`, {
    providerStatus: status,
    requestId: rid,
    retryAfterSeconds: retryAfter(h),
  });
}

function blockTokens(b: Block): number {
  switch (b.type) {
    case "text":
      return textTokens((b as { text: string }).text);
    case "tool_use":
      return 12 + textTokens(JSON.stringify((b as ToolUseBlock).input));
    case "tool_result":
      return 8 + (b as ToolResultBlock).content.reduce((sum, x) => sum + blockTokens(x), 0);
    case "image":
      return 1600;
    default:
      return 0; // earlier turns' thinking is stripped from the context window by the API
  }
}
