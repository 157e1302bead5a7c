// The `{{name}}` adapter: canonical messages <-> the OpenAI Chat Completions wire API
// (`POST /v1/chat/completions`), written from OpenAI's API reference
// (platform.openai.com/docs/api-reference/chat) and the adapter contract (§4.1, §4.3, §6, §7).
//
// - SYSTEM messages become one first `role: system` message (texts joined by a blank line).
// - Tool calls are `tool_calls[]` on the assistant message, `function.arguments` a JSON
//   string; results are `role: tool` messages with `tool_call_id`. Canonical tool ids
//   (`tu_<ULID>`) map to the provider's (`call_...`) through one ToolIdMap per session.
// - Images are `image_url` parts (base64 as a `data:` URL). A tool message takes text only.
// - Thinking has no Chat Completions field: dropped with the §7.3 WARN record; the
//   `is_error` flag of a tool result (the wire has none) is reported by a WARN record too.
// - Usage: input_tokens = prompt_tokens - cached_tokens (disjoint buckets), output_tokens
//   = completion_tokens, cached_input_tokens = prompt_tokens_details.cached_tokens.
//
// Where to extend: a provider that differs from OpenAI changes the method named after the
// part of the wire it touches (Render.user, Render.assistant, Render.tool, parseMessage,
// classifyError; stream.ts for streams), with a cassette in cassettes/{{name}}/ for each
// difference.

import type {
  Block,
  ImageBlock,
  Message,
  Options,
  OtherBlock,
  RequestContext,
  StopReason,
  TokenUsage,
  ToolDefinition,
  ToolResultBlock,
  ToolUseBlock,
} from "./canonical.js";
import { assemble } from "./canonical.js";
import { ToolIdMap, newUlid } from "./ids.js";
import { AdapterError, WireFormatError, isObject } from "./protocol.js";
import type { ErrorClass, Json, JsonObject, Logs } from "./protocol.js";
import {
  NAME,
  classForStatus,
  dropBlock,
  errorText,
  jsonObject,
  lowerKeys,
  ownRaw,
  parseDataUrl,
  requestMessage,
  retryAfter,
  textTokens,
} from "./wire.js";
import type { ParsedRequest, WireRequest, WireResponse } from "./wire.js";

export const PROVIDER = "openai";
export const WIRE_API = "openai-chat-completions";
export const PATH = "/v1/chat/completions";
export const IMAGE_TYPES = ["image/jpeg", "image/png", "image/gif", "image/webp"];
/** Every provider tool id this adapter mints matches it (hello's `provider_tool_id`). */
export const PROVIDER_TOOL_ID = "^call_[0-9A-HJKMNP-TV-Z]{26}$";

/** Canonical §7.2: only what this adapter really does (adapter contract §3.4). */
export const CAPABILITIES: JsonObject = {
  supports_thinking: false, // Chat Completions carries no thinking: dropped with WARN
  supports_images: true,
  supports_tools: true,
  supports_system_prompt: true,
  supports_structured_output: true, // output_schema -> response_format json_schema
  supports_streaming: true,
  supports_streaming_tool_calls: true,
  supports_parallel_tool_calls: true,
  // true needs a cassette whose case exercises it (turnspec's TC002): add one, then say so
  supports_prompt_caching: false,
  supports_system_messages_in_list: true,
  max_context_tokens: 128000, // the served model's limits: set your model's
  max_output_tokens: 16384,
  accepted_image_media_types: IMAGE_TYPES,
};

/** finish_reason -> canonical StopReason (chat/object: `finish_reason`). */
export const STOP_REASONS: Record<string, StopReason> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
  function_call: "tool_use", // the deprecated functions API
  content_filter: "end_turn", // the filter omitted content; the turn still ended
};

/** The body's `error.code` / `error.type` that refine the status's class (contract §6.2). */
const ERROR_CODES: Record<string, ErrorClass> = {
  rate_limit_exceeded: "rate_limit",
  context_length_exceeded: "context_overflow",
  invalid_api_key: "auth",
};

/** A URL image's media type when this adapter did not render it (the wire carries none). */
const URL_IMAGE_MEDIA_TYPE = "image/jpeg";
const MESSAGE_KEYS = new Set(["role", "content", "tool_calls", "tool_call_id"]);

export class Adapter {
  private readonly maps = new Map<string, ToolIdMap>();
  // (session, url) -> the media type a URL image was rendered with: the wire carries none
  private readonly urlMedia = new Map<string, string>();

  toolIdMap(sessionId: string): ToolIdMap {
    let map = this.maps.get(sessionId);
    if (map === undefined) {
      map = new ToolIdMap(() => "call_" + newUlid());
      this.maps.set(sessionId, map);
    }
    return map;
  }

  // -- canonical -> wire ---------------------------------------------------------------

  render(messages: Message[], tools: ToolDefinition[], options: Options, log: Logs): WireRequest {
    const r = new Render(this, options, log);
    const body: JsonObject = { model: modelFor(options.model), messages: r.messages(messages) };
    const own = ownRaw(options.provider_raw);
    const extras = isObject(own.tool_extras) ? own.tool_extras : {};
    const wireTools: Json[] = tools.map((t) => renderTool(t, extras[t.name]));
    wireTools.push(...options.provider_tools);
    if (wireTools.length > 0) {
      body.tools = wireTools;
    }
    if (options.max_output_tokens !== null) {
      body.max_completion_tokens = options.max_output_tokens;
    }
    if (options.stop_sequences.length > 0) {
      body.stop = options.stop_sequences;
    }
    if (options.temperature !== null) {
      body.temperature = options.temperature;
    }
    if (options.stream) {
      body.stream = true;
      body.stream_options = { include_usage: true }; // contract §7.2: usage in streams
    }
    if (options.output_schema !== null) {
      const format = isObject(own.json_schema) ? own.json_schema : { name: "output", strict: true };
      body.response_format = { type: "json_schema", json_schema: { ...format, schema: options.output_schema } };
    }
    for (const [key, value] of Object.entries(options.extra)) {
      if (key === "stream_options" && options.stream && isObject(value)) {
        body[key] = { ...value, include_usage: true };
      } else if (!(key in body)) {
        body[key] = value; // provider knobs (contract §3.2) pass through verbatim
      }
    }
    return { method: "POST", path: PATH, headers: { "content-type": "application/json" }, body };
  }

  rememberUrlMedia(sessionId: string, url: string, mediaType: string): void {
    this.urlMedia.set(JSON.stringify([sessionId, url]), mediaType);
  }

  // -- wire -> canonical (replies) -----------------------------------------------------

  parse(response: WireResponse, ctx: RequestContext, log: Logs): Message {
    const body = response.body;
    if (response.status >= 400 || (isObject(body) && "error" in body && !("choices" in body))) {
      throw classifyError(response.status >= 400 ? response.status : 500, body, response.headers);
    }
    const choices = isObject(body) ? body.choices : undefined;
    if (!isObject(body) || !Array.isArray(choices) || choices.length === 0) {
      throw new WireFormatError("Chat Completions response has no choices");
    }
    if (choices.length > 1) {
      log.warning(`${NAME}: ${choices.length} choices; the canonical message keeps choice 0`, {
        event: "choices_dropped",
        adapter: NAME,
      });
    }
    const choice = choices[0];
    const msg = isObject(choice) && isObject(choice.message) ? choice.message : {};
    const content = this.parseMessage(ctx.session_id, msg);
    if (isObject(choice)) {
      stopReason(choice.finish_reason ?? null, log);
    }
    const model = typeof body.model === "string" ? body.model : null;
    return assemble(PROVIDER, ctx, content, model, usageFromWire(body.usage));
  }

  /** A reply message's blocks: its text (content, or a refusal), then its tool calls. */
  parseMessage(sessionId: string, msg: JsonObject): Block[] {
    const content: Block[] = textsOf(msg.content).map((text) => ({ type: "text", text }));
    if (typeof msg.refusal === "string" && msg.refusal !== "") {
      content.push({ type: "text", text: msg.refusal }); // no refusal block: the refusal is the reply
    }
    const calls = Array.isArray(msg.tool_calls) ? msg.tool_calls : [];
    for (const call of calls) {
      content.push(this.parseToolCall(sessionId, isObject(call) ? call : {}));
    }
    return content;
  }

  parseToolCall(sessionId: string, call: JsonObject): ToolUseBlock {
    const fn = isObject(call.function) ? call.function : {};
    const input = jsonObject(typeof fn.arguments === "string" ? fn.arguments : "");
    if (input === null || typeof call.id !== "string") {
      throw new WireFormatError(`tool call ${String(call.id)}: no id, or arguments that are not a JSON object`);
    }
    const id = this.toolIdMap(sessionId).canonicalFor(call.id);
    return { type: "tool_use", id, name: typeof fn.name === "string" ? fn.name : "", input };
  }

  // -- wire -> canonical (requests: replay, turnspec's TC802) ----------------------------

  /** `url` is the request's, when the harness knows it (the model travels in the body here). */
  readRequest(body: JsonObject, sessionId: string | null, url: string | null = null): ParsedRequest {
    const sid = sessionId ?? "sess_" + newUlid().toLowerCase();
    const model = `${PROVIDER}:${typeof body.model === "string" ? body.model : "unknown"}`;
    const messages: Message[] = [];
    for (const wm of Array.isArray(body.messages) ? body.messages : []) {
      if (isObject(wm)) {
        const m = this.readMessage(sid, wm, model);
        if (m !== null) {
          messages.push(m);
        }
      }
    }
    const { tools, native, raw } = readTools(body);
    let outputSchema: JsonObject | null = null;
    const rf = body.response_format;
    if (isObject(rf) && rf.type === "json_schema" && isObject(rf.json_schema) && isObject(rf.json_schema.schema)) {
      const { schema, ...rest } = rf.json_schema;
      outputSchema = schema as JsonObject;
      raw.json_schema = rest;
    }
    const known = new Set(["model", "messages", "tools", "max_completion_tokens", "stop", "temperature", "stream"]);
    if (outputSchema !== null) {
      known.add("response_format");
    }
    const extra: JsonObject = {};
    for (const [k, v] of Object.entries(body)) {
      if (!known.has(k)) {
        extra[k] = v;
      }
    }
    const stop = body.stop;
    return {
      messages,
      tools,
      options: {
        model,
        max_output_tokens: typeof body.max_completion_tokens === "number" ? body.max_completion_tokens : null,
        temperature: typeof body.temperature === "number" ? body.temperature : null,
        stop_sequences: typeof stop === "string" ? [stop] : Array.isArray(stop) ? stop.map(String) : [],
        stream: body.stream === true,
        output_schema: outputSchema,
        extra,
        provider_tools: native,
        provider_raw: Object.keys(raw).length > 0 ? { [NAME]: raw } : {},
        critical_key: "critical",
      },
    };
  }

  private readMessage(sid: string, wm: JsonObject, model: string): Message | null {
    const raw: JsonObject = {};
    const extra = Object.fromEntries(Object.entries(wm).filter(([k]) => !MESSAGE_KEYS.has(k)));
    if (Object.keys(extra).length > 0) {
      raw.message = extra; // members this reader does not map go back verbatim
    }
    const c = wm.content;
    const meta: JsonObject = {};
    let role: Message["role"];
    let blocks: Block[];
    switch (wm.role) {
      case "system":
      case "developer":
        role = "system";
        blocks = [{ type: "text", text: textsOf(c).join("") }];
        if (wm.role === "developer") {
          raw.role = "developer";
        }
        break;
      case "user":
        role = "user";
        blocks = this.readUserContent(sid, c, raw);
        break;
      case "assistant": {
        role = "assistant";
        blocks = this.parseMessage(sid, {
          content: c ?? null,
          tool_calls: wm.tool_calls ?? null,
          refusal: wm.refusal ?? null,
        });
        if (typeof wm.refusal === "string" && wm.refusal !== "") {
          // read as the reply's text after the content's (parseMessage): it goes back in its
          // own field (chat/create: "The refusal message by the assistant."), not verbatim
          raw.refusal_index = textsOf(c).length;
          if (isObject(raw.message)) {
            delete raw.message.refusal;
            if (Object.keys(raw.message).length === 0) {
              delete raw.message;
            }
          }
        }
        if (blocks.length === 0) {
          blocks = [{ type: "text", text: "" }];
        }
        meta.model = model;
        meta.provider = PROVIDER;
        break;
      }
      case "tool": {
        role = "tool";
        const cid = this.toolIdMap(sid).canonicalFor(String(wm.tool_call_id));
        const result: ToolResultBlock = {
          type: "tool_result",
          tool_use_id: cid,
          content: textsOf(c).map((text) => ({ type: "text", text })),
        };
        blocks = [result];
        meta.parent_tool_use_id = cid;
        break;
      }
      default:
        return null; // a role this adapter does not know (e.g. the deprecated `function`)
    }
    if (Object.keys(raw).length > 0) {
      meta.provider_raw = { [NAME]: raw };
    }
    return requestMessage(sid, role, blocks, meta);
  }

  private readUserContent(sid: string, c: Json | undefined, raw: JsonObject): Block[] {
    if (typeof c === "string") {
      return [{ type: "text", text: c }];
    }
    const blocks: Block[] = [];
    const details: JsonObject = {};
    for (const part of Array.isArray(c) ? c : []) {
      if (!isObject(part)) {
        continue;
      }
      if (part.type === "text" && typeof part.text === "string") {
        blocks.push({ type: "text", text: part.text });
      } else if (part.type === "image_url" && isObject(part.image_url)) {
        blocks.push(this.readImage(sid, part.image_url));
        if (typeof part.image_url.detail === "string") {
          details[String(blocks.length - 1)] = part.image_url.detail;
        }
      } else {
        // a part canonical has no block for (audio, files): kept whole, sent back as it was
        blocks.push({ type: `${NAME}:${String(part.type)}`, raw: part });
      }
    }
    if (Object.keys(details).length > 0) {
      raw.image_detail = details;
    }
    if (blocks.length === 1 && blocks[0]?.type === "text") {
      raw.parts = true; // one text part, not a string: rendered back as parts
    }
    return blocks;
  }

  private readImage(sid: string, imageUrl: JsonObject): ImageBlock {
    const url = typeof imageUrl.url === "string" ? imageUrl.url : "";
    const data = parseDataUrl(url);
    if (data !== null) {
      return { type: "image", source: { kind: "base64", data: data.data }, media_type: data.mediaType };
    }
    const media = this.urlMedia.get(JSON.stringify([sid, url])) ?? URL_IMAGE_MEDIA_TYPE;
    return { type: "image", source: { kind: "url", data: url }, media_type: media };
  }

  // -- estimates (contract §3.1 estimate_input_tokens) -----------------------------------

  /**
   * A heuristic, as the contract allows: about 4 characters a token, 4 tokens of framing per
   * message, 85 + 170 per 512 px tile for an image (765 when its size is unknown). A real
   * tokenizer (tiktoken's o200k_base for gpt-4o and later) does better.
   */
  estimate(messages: Message[], tools: ToolDefinition[]): number {
    let n = 3;
    for (const m of messages) {
      n += 4 + m.content.reduce((sum, b) => sum + blockTokens(b), 0);
    }
    if (tools.length > 0) {
      n += 8 + tools.reduce((sum, t) => sum + textTokens(t.name + " " + t.description + JSON.stringify(t.input_schema)), 0);
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

  messages(messages: Message[]): JsonObject[] {
    const out: JsonObject[] = [];
    const system = this.system(messages);
    if (system !== null) {
      out.push(system);
    }
    for (const m of messages) {
      if (m.role === "user") {
        out.push(...this.user(m));
      } else if (m.role === "assistant") {
        out.push(...this.assistant(m));
      } else if (m.role === "tool") {
        out.push(...this.tool(m));
      }
    }
    return out;
  }

  /** Every SYSTEM message's text, joined into the first message (contract §4.1.2, §4.3). */
  system(messages: Message[]): JsonObject | null {
    const texts: string[] = [];
    let role = "system";
    let extra: JsonObject = {};
    for (const m of messages) {
      if (m.role !== "system") {
        continue;
      }
      const raw = ownRaw(m.metadata?.provider_raw);
      if (typeof raw.role === "string") {
        role = raw.role;
      }
      extra = { ...extra, ...(isObject(raw.message) ? raw.message : {}) };
      m.content.forEach((b, i) => {
        if (b.type === "text") {
          texts.push((b as { text: string }).text);
        } else {
          this.drop(m, i, b.type, "system prompts carry text only");
        }
      });
    }
    return texts.length > 0 ? { role, content: texts.join("\n\n"), ...extra } : null;
  }

  user(m: Message): JsonObject[] {
    const raw = ownRaw(m.metadata?.provider_raw);
    const parts: JsonObject[] = [];
    m.content.forEach((b, i) => {
      if (b.type === "text") {
        parts.push({ type: "text", text: (b as { text: string }).text });
      } else if (b.type === "image") {
        const part = this.image(m, i, b as ImageBlock);
        if (part !== null) {
          parts.push(part);
        }
      } else if (b.type.startsWith(`${NAME}:`) && isObject((b as OtherBlock).raw)) {
        parts.push((b as OtherBlock).raw as JsonObject); // a part this adapter read and kept whole
      } else {
        this.drop(m, i, b.type, `no Chat Completions equivalent for a ${b.type} block in a user message`);
      }
    });
    if (parts.length === 0) {
      return [];
    }
    const only = parts.length === 1 && parts[0]?.type === "text" && raw.parts !== true;
    const content: Json = only ? (parts[0]?.text ?? "") : parts;
    return [{ role: "user", content, ...(isObject(raw.message) ? raw.message : {}) }];
  }

  image(m: Message, i: number, b: ImageBlock): JsonObject | null {
    if (!isObject(b.source) || typeof b.media_type !== "string") {
      this.drop(m, i, "image", "an image block without a source or a media type");
      return null;
    }
    const media = b.media_type.toLowerCase(); // IANA media types are case-insensitive
    let url: string;
    if (b.source.kind === "file_ref") {
      this.drop(m, i, "image", "file_ref images must be inlined by the harness (adapters do no I/O)");
      return null;
    }
    if (b.source.kind === "url") {
      url = b.source.data;
      this.a.rememberUrlMedia(m.session_id, url, media);
    } else if (IMAGE_TYPES.includes(media)) {
      url = `data:${media};base64,${b.source.data}`;
    } else {
      this.drop(m, i, "image", `media type ${media} is not accepted (accepted: ${IMAGE_TYPES.join(", ")})`);
      return null;
    }
    const details = ownRaw(m.metadata?.provider_raw).image_detail;
    const detail = isObject(details) ? details[String(i)] : undefined;
    return { type: "image_url", image_url: typeof detail === "string" ? { url, detail } : { url } };
  }

  assistant(m: Message): JsonObject[] {
    const texts: string[] = [];
    const calls: JsonObject[] = [];
    const raw = ownRaw(m.metadata?.provider_raw);
    let refusal: string | null = null; // the block read from the message's `refusal` goes back in that field
    m.content.forEach((b, i) => {
      if (b.type === "text" && i === raw.refusal_index) {
        refusal = (b as { text: string }).text;
      } else if (b.type === "text") {
        texts.push((b as { text: string }).text);
      } else if (b.type === "tool_use") {
        const use = b as ToolUseBlock;
        calls.push({
          id: this.a.toolIdMap(m.session_id).providerFor(use.id),
          type: "function",
          function: { name: use.name, arguments: JSON.stringify(use.input) },
        });
      } else if (b.type === "thinking" || b.type === "redacted_thinking") {
        this.drop(m, i, b.type, "Chat Completions has no thinking blocks (adapter contract §4.3)");
      } else {
        this.drop(m, i, b.type, `no Chat Completions equivalent for a ${b.type} block in an assistant message`);
      }
    });
    if (texts.length === 0 && calls.length === 0 && refusal === null) {
      return [];
    }
    const wire: JsonObject = { role: "assistant" };
    wire.content = texts.length > 1 ? texts.map((text) => ({ type: "text", text })) : (texts[0] ?? null);
    if (refusal !== null) {
      wire.refusal = refusal;
    }
    if (calls.length > 0) {
      wire.tool_calls = calls;
    }
    return [{ ...wire, ...(isObject(raw.message) ? raw.message : {}) }];
  }

  tool(m: Message): JsonObject[] {
    const out: JsonObject[] = [];
    m.content.forEach((b, i) => {
      if (b.type !== "tool_result") {
        this.drop(m, i, b.type, "a tool message carries tool_result blocks only");
        return;
      }
      const result = b as ToolResultBlock;
      const texts: string[] = [];
      for (const inner of result.content) {
        if (inner.type === "text") {
          texts.push((inner as { text: string }).text);
        } else {
          this.drop(m, i, inner.type, `Chat Completions tool messages take text only, not ${inner.type}`);
        }
      }
      if (result.is_error === true) {
        this.log.warning(`${NAME}: tool_result is_error of message ${m.id} has no wire field`, {
          event: "field_dropped",
          adapter: NAME,
          session_id: m.session_id,
          message_id: m.id,
          field: "is_error",
          reason: "Chat Completions tool messages have no error flag",
        });
      }
      // a string, or a non-empty list of text parts (the API refuses `[]`)
      const content: Json = texts.length === 1 ? (texts[0] ?? "") : texts.length > 1 ? texts.map((text) => ({ type: "text", text })) : "";
      out.push({ role: "tool", tool_call_id: this.a.toolIdMap(m.session_id).providerFor(result.tool_use_id), content });
    });
    return out;
  }

  /** Canonical §4.2.2, §7.3 (dropBlock in wire.ts): one WARN record, or a CriticalBlockError. */
  drop(m: Message, index: number, blockType: string, reason: string): void {
    dropBlock(this.log, this.options, m, index, blockType, reason);
  }
}

function renderTool(t: ToolDefinition, extra: Json | undefined): JsonObject {
  const fn: JsonObject = { name: t.name, description: t.description, parameters: t.input_schema };
  return { type: "function", function: isObject(extra) ? { ...fn, ...extra } : fn };
}

function readTools(body: JsonObject): { tools: ToolDefinition[]; native: JsonObject[]; raw: JsonObject } {
  const tools: ToolDefinition[] = [];
  const native: JsonObject[] = [];
  const extras: JsonObject = {};
  for (const t of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(t)) {
      continue;
    }
    const fn = t.type === "function" && isObject(t.function) ? t.function : null;
    if (fn === null || typeof fn.name !== "string") {
      native.push(t); // a tool canonical has no definition for: kept as a provider tool
      continue;
    }
    const { name, description, parameters, ...extra } = fn;
    tools.push({
      name,
      description: typeof description === "string" ? description : "",
      input_schema: isObject(parameters) ? parameters : { type: "object", properties: {} },
      side_effects: "execute", // the wire does not say: the most careful reading
    });
    if (Object.keys(extra).length > 0) {
      extras[name] = extra; // e.g. `strict`: rendered back from provider_raw
    }
  }
  return { tools, native, raw: Object.keys(extras).length > 0 ? { tool_extras: extras } : {} };
}

// -- shared helpers ------------------------------------------------------------------------

/** The model id the provider knows: the canonical id without its `openai:` prefix (§6.3). */
export function modelFor(model: string): string {
  const prefix = `${PROVIDER}:`;
  return model.startsWith(prefix) && model.length > prefix.length ? model.slice(prefix.length) : model;
}

/** The texts of a message's `content`: a string, or an array of `text` parts. */
function textsOf(content: Json | undefined): string[] {
  if (typeof content === "string") {
    return content === "" ? [] : [content];
  }
  const out: string[] = [];
  for (const part of Array.isArray(content) ? content : []) {
    if (isObject(part) && part.type === "text" && typeof part.text === "string") {
      out.push(part.text);
    }
  }
  return out;
}

export function usageFromWire(usage: Json | undefined): TokenUsage | null {
  if (!isObject(usage)) {
    return null;
  }
  const num = (v: Json | undefined): number => (typeof v === "number" ? v : 0);
  const details = isObject(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  const cached = num(details.cached_tokens);
  return {
    input_tokens: Math.max(0, num(usage.prompt_tokens) - cached),
    output_tokens: num(usage.completion_tokens),
    cached_input_tokens: cached,
    cache_creation_input_tokens: 0, // OpenAI reports no cache writes (contract §4.3)
  };
}

/** A finish_reason -> canonical; an undocumented one reads as end_turn with a WARN record. */
export function stopReason(raw: Json, log: Logs): StopReason {
  const found = typeof raw === "string" ? STOP_REASONS[raw] : undefined;
  if (found !== undefined) {
    return found;
  }
  log.warning(`${NAME}: undocumented finish_reason ${JSON.stringify(raw)} read as end_turn`, {
    event: "unknown_stop_reason",
    adapter: NAME,
    stop_reason: raw,
  });
  return "end_turn";
}

/**
 * Adapter contract §6.2, §6.3: the class of the HTTP status, refined by the body's
 * `error.code` / `error.type`; the `x-request-id` header, and a `retry-after` hint.
 */
export function classifyError(status: number, body: Json, headers: Record<string, string>): AdapterError {
  const err = isObject(body) && isObject(body.error) ? body.error : null;
  const code = err !== null && typeof err.code === "string" ? err.code : null;
  const type = err !== null && typeof err.type === "string" ? err.type : null;
  let cls: ErrorClass | undefined = code !== null ? ERROR_CODES[code] : undefined;
  if (cls === undefined && type === "server_error") {
    cls = "server_error";
  }
  cls ??= classForStatus(status);
  const h = lowerKeys(headers);
  return new AdapterError(cls, `${code ?? type ?? "error"}: ${errorText(body, err)}`, {
    providerStatus: status,
    requestId: h["x-request-id"] ?? null,
    retryAfterSeconds: retryAfter(h),
  });
}

function blockTokens(b: Block): number {
  switch (b.type) {
    case "text":
      return textTokens((b as { text: string }).text);
    case "tool_use":
      return 10 + textTokens(JSON.stringify((b as ToolUseBlock).input));
    case "tool_result":
      return 4 + (b as ToolResultBlock).content.reduce((sum, x) => sum + blockTokens(x), 0);
    case "image":
      return 765;
    default:
      return 0;
  }
}

