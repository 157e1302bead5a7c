// The `{{name}}` adapter: canonical messages <-> the Gemini API `generateContent` wire API
// (`POST /v1beta/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` for a
// stream: the model and the stream choice travel in the URL), written from Google's API
// reference (ai.google.dev/api/generate-content, ai.google.dev/api/caching#Content) and
// guides (function calling, thinking, thought signatures, image understanding, caching,
// troubleshooting), and the adapter contract (§4.1, §4.2, §6, §7).
//
// - SYSTEM messages become `systemInstruction.parts` (one text part per text block); USER is
//   `role: user`, ASSISTANT `role: model`; TOOL messages become `functionResponse` parts of
//   one `user` content (consecutive tool messages share it, as parallel results must).
// - A tool call is a `functionCall` part (`args` a JSON object, `id` optional); its result a
//   `functionResponse` naming the function, `response` `{"output": text}`, or `{"error":
//   text}` when `is_error`. A call the API sent without an id gets a canonical id derived
//   from the reply (its responseId, its position, name and arguments: the same bytes give
//   the same id) and goes back without one; a call first rendered here gets `call_<ULID>`.
// - Images are `inlineData` (base64) or `fileData` (a URI) parts.
// - Thought parts (`thought: true`) are thinking blocks. A `thoughtSignature` on another part
//   becomes a thinking block of empty text holding it, just before that part's block, and
//   rides back on the part after it. Signatures are Gemini's own: thinking another provider
//   issued, and redacted thinking, are dropped with the §7.3 WARN record.
// - Usage: input = promptTokenCount + toolUsePromptTokenCount - cachedContentTokenCount
//   (disjoint buckets), output = candidatesTokenCount + thoughtsTokenCount, cached input =
//   cachedContentTokenCount, cache writes 0 (a cache is made by a call of its own).
//
// What this skeleton does not read: request fields spelled with their proto names
// (`mime_type`), which stay whole as parts of their own, and function-call arguments
// streamed in pieces (`partialArgs`, Vertex AI's `streamFunctionCallArguments`), a located
// error: supports_streaming_tool_calls is false.
//
// Where to extend: a provider that differs from Gemini changes the method named after the
// part of the wire it touches (Render.parts, Render.toolResults, Reply.part, readRequest,
// classifyError; stream.ts for the two stream framings), with a cassette in
// cassettes/{{name}}/ for each difference.

import type { Block, ImageBlock, Message, Options, OtherBlock, RequestContext, StopReason, TokenUsage, ToolDefinition, ToolResultBlock, ToolUseBlock } from "./canonical.js";
import { assemble } from "./canonical.js";
import type { SilentBlock, StreamEvent } from "./events.js";
import { ToolIdMap, derivedToolId, newUlid } from "./ids.js";
import { AdapterError, WireFormatError, isObject } from "./protocol.js";
import type { ErrorClass, Json, JsonObject, Logs } from "./protocol.js";
import { NAME, classForStatus, dropBlock, jsonTokens, lowerKeys, ownRaw, requestMessage, textTokens } from "./wire.js";
import type { ParsedRequest, WireRequest, WireResponse } from "./wire.js";

export const PROVIDER = "gemini";
export const WIRE_API = "gemini-generate-content";
/** The path before `{model}:generateContent` (Vertex AI's differs: provider_raw `path_prefix`). */
export const PATH_PREFIX = "/v1beta/models/";
/** image-understanding: "Supported image formats". */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"];
/** Every provider tool id this adapter mints matches it (hello's `provider_tool_id`). */
export const PROVIDER_TOOL_ID = "^call_[0-9A-HJKMNP-TV-Z]{26}$";
/** The provider-side key of a call the API sent without an id: never sent. */
const NO_ID = "noid:";

/** Canonical §7.2: only what this adapter really does (adapter contract §3.4). */
export const CAPABILITIES: JsonObject = {
  supports_thinking: true,
  supports_images: true,
  supports_tools: true,
  supports_system_prompt: true,
  supports_structured_output: true, // output_schema -> responseMimeType application/json + responseJsonSchema
  supports_streaming: true,
  // a streamed functionCall arrives whole in one chunk; its arguments stream only when Vertex
  // AI is asked for streamFunctionCallArguments, which this skeleton does not read
  supports_streaming_tool_calls: false,
  supports_parallel_tool_calls: true,
  supports_prompt_caching: true, // cachedContentTokenCount (cassettes/{{name}}/cached.yaml exercises it)
  supports_system_messages_in_list: false, // one systemInstruction: SYSTEM messages are hoisted
  max_context_tokens: 1048576, // the served model's limits: set your model's
  max_output_tokens: 65536,
  accepted_image_media_types: IMAGE_TYPES,
};

/** finishReason -> canonical StopReason (generate-content: FinishReason). */
export const STOP_REASONS: Record<string, StopReason> = {
  STOP: "end_turn", // tool_use when the reply carries functionCall parts
  MAX_TOKENS: "max_tokens",
  FINISH_REASON_UNSPECIFIED: "end_turn",
  // a filter withheld (part of) the reply: the turn ended with what was sent
  SAFETY: "end_turn",
  RECITATION: "end_turn",
  LANGUAGE: "end_turn",
  BLOCKLIST: "end_turn",
  PROHIBITED_CONTENT: "end_turn",
  SPII: "end_turn",
  IMAGE_SAFETY: "end_turn",
  IMAGE_PROHIBITED_CONTENT: "end_turn",
  IMAGE_RECITATION: "end_turn",
  IMAGE_OTHER: "end_turn",
  NO_IMAGE: "end_turn",
  MODEL_ARMOR: "end_turn",
  OTHER: "end_turn",
  // the model's function call could not be used: the turn failed
  MALFORMED_FUNCTION_CALL: "error",
  UNEXPECTED_TOOL_CALL: "error",
  TOO_MANY_TOOL_CALLS: "error",
  MISSING_THOUGHT_SIGNATURE: "error",
};

/** google.rpc status (the body's `error.status`) -> adapter contract §6.1 class. */
const STATUS_CLASSES: Record<string, ErrorClass> = {
  RESOURCE_EXHAUSTED: "rate_limit",
  UNAUTHENTICATED: "auth",
  PERMISSION_DENIED: "auth",
  INTERNAL: "server_error",
  UNAVAILABLE: "server_error",
  DEADLINE_EXCEEDED: "server_error",
  INVALID_ARGUMENT: "invalid_request",
  FAILED_PRECONDITION: "invalid_request",
  NOT_FOUND: "invalid_request",
};
/** What an INVALID_ARGUMENT says when the prompt is too long (troubleshooting). */
const CONTEXT_OVERFLOW = /token count.*exceeds|exceeds the maximum number of tokens|context (window|length)/i;
const PART_KINDS = ["text", "inlineData", "fileData", "functionCall", "functionResponse"];
/** generationConfig fields options carry; the rest go back through options.extra. */
const CONFIG_KEYS = ["maxOutputTokens", "temperature", "stopSequences", "responseMimeType", "responseJsonSchema"];

export class Adapter {
  private readonly maps = new Map<string, ToolIdMap>();
  // (session) -> canonical call id -> its function name: a functionResponse names it
  private readonly names = new Map<string, Map<string, string>>();

  toolIdMap(sessionId: string): ToolIdMap {
    let map = this.maps.get(sessionId);
    if (map === undefined) {
      map = new ToolIdMap(() => "call_" + newUlid());
      this.maps.set(sessionId, map);
    }
    return map;
  }

  /** The canonical id of a wire functionCall: mapped from its id, or derived from `key` when it has none. */
  callId(sessionId: string, wireId: Json | undefined, key: string[]): string {
    if (typeof wireId === "string" && wireId !== "") {
      return this.toolIdMap(sessionId).canonicalFor(wireId);
    }
    const cid = derivedToolId(sessionId, ...key);
    const map = this.toolIdMap(sessionId);
    if (map.getProvider(cid) === null) {
      map.bind(cid, NO_ID + cid);
    }
    return cid;
  }

  /** The id to send for a canonical call: null when the API issued none. */
  wireCallId(sessionId: string, canonicalId: string): string | null {
    const pid = this.toolIdMap(sessionId).providerFor(canonicalId);
    return pid.startsWith(NO_ID) ? null : pid;
  }

  rememberName(sessionId: string, callId: string, name: string): void {
    let names = this.names.get(sessionId);
    if (names === undefined) {
      names = new Map();
      this.names.set(sessionId, names);
    }
    names.set(callId, name);
  }

  nameOf(sessionId: string, callId: string): string | undefined {
    return this.names.get(sessionId)?.get(callId);
  }

  // -- canonical -> wire ---------------------------------------------------------------

  render(messages: Message[], tools: ToolDefinition[], options: Options, log: Logs): WireRequest {
    const own = ownRaw(options.provider_raw);
    const r = new Render(this, options, log);
    const body: JsonObject = { contents: r.contents(messages) };
    const system = r.system(messages, own);
    if (system !== null) {
      body.systemInstruction = system;
    }
    const extras = isObject(own.tool_extras) ? own.tool_extras : {};
    const wireTools: Json[] = tools.length > 0 ? [{ functionDeclarations: tools.map((t) => renderTool(t, extras[t.name])) }] : [];
    wireTools.push(...options.provider_tools);
    if (wireTools.length > 0) {
      body.tools = wireTools;
    }
    let config: JsonObject = {};
    if (options.max_output_tokens !== null) {
      config.maxOutputTokens = options.max_output_tokens;
    }
    if (options.temperature !== null) {
      config.temperature = options.temperature;
    }
    if (options.stop_sequences.length > 0) {
      config.stopSequences = options.stop_sequences;
    }
    if (options.output_schema !== null) {
      config.responseMimeType = "application/json";
      config.responseJsonSchema = options.output_schema;
    }
    const { generationConfig: more, ...extra } = options.extra;
    if (isObject(more)) {
      config = { ...more, ...config }; // a recorded generationConfig's other fields
    }
    if (Object.keys(config).length > 0 || more !== undefined) {
      body.generationConfig = config;
    }
    for (const [key, value] of Object.entries(extra)) {
      if (!(key in body)) {
        body[key] = value; // provider knobs (contract §3.2: safetySettings, cachedContent) pass through verbatim
      }
    }
    const prefix = typeof own.path_prefix === "string" ? own.path_prefix : PATH_PREFIX;
    const method = options.stream ? "streamGenerateContent" : "generateContent";
    const query = options.stream && own.framing !== "json-array" ? "?alt=sse" : "";
    return { method: "POST", path: `${prefix}${modelFor(options.model)}:${method}${query}`, headers: { "content-type": "application/json" }, body };
  }

  // -- wire -> canonical (replies) -----------------------------------------------------

  parse(response: WireResponse, ctx: RequestContext, log: Logs): Message {
    const body = response.body;
    if (response.status >= 400 || (isObject(body) && "error" in body && !("candidates" in body))) {
      throw classifyError(response.status >= 400 ? response.status : 500, body, response.headers);
    }
    // a JSON-array stream decoded whole: its elements are the chunks of one reply
    const chunks = Array.isArray(body) ? body : [body];
    const reply = new Reply(this, ctx, log);
    chunks.forEach((chunk, n) => {
      if (!isObject(chunk)) {
        throw new WireFormatError(`Gemini response ${n} is not a JSON object`);
      }
      if ("error" in chunk && !("candidates" in chunk)) {
        throw classifyError(500, chunk, response.headers);
      }
      reply.chunk(chunk, n);
    });
    const raw: JsonObject = {};
    if (reply.responseId !== "") {
      raw.responseId = reply.responseId;
    }
    if (reply.wireModel !== null) {
      raw.modelVersion = reply.wireModel;
    }
    if (reply.finishReason !== null) {
      raw.finishReason = reply.finishReason;
    }
    const status = reply.stopReason() === "error" ? "error" : "complete";
    const message = assemble(PROVIDER, ctx, reply.content, reply.wireModel, reply.usage, status);
    message.metadata.provider_raw = { [NAME]: raw };
    return message;
  }

  /** One part of a reply or of a recorded request (not a thought, no signature) as a block. */
  partBlock(sessionId: string, part: JsonObject, key: string[]): Block {
    const kind = partKind(part);
    if (kind === "text") {
      return { type: "text", text: String(part.text) };
    }
    if (kind === "functionCall" && isObject(part.functionCall)) {
      const call = part.functionCall;
      const args = call.args ?? {};
      if (!isObject(args)) {
        throw new WireFormatError(`functionCall ${JSON.stringify(call.name)} args is not a JSON object`);
      }
      const name = String(call.name ?? "");
      const cid = this.callId(sessionId, call.id, [...key, name, canonicalJson(args)]);
      this.rememberName(sessionId, cid, name);
      return { type: "tool_use", id: cid, name, input: args };
    }
    const only = Object.keys(part).length === 1;
    if (kind === "inlineData" && isObject(part.inlineData) && only) {
      const blob = part.inlineData;
      if (typeof blob.mimeType === "string" && IMAGE_TYPES.includes(blob.mimeType) && typeof blob.data === "string" && blob.data !== "") {
        return { type: "image", source: { kind: "base64", data: blob.data }, media_type: blob.mimeType };
      }
    }
    if (kind === "fileData" && isObject(part.fileData) && only) {
      const fd = part.fileData;
      if (typeof fd.mimeType === "string" && IMAGE_TYPES.includes(fd.mimeType) && typeof fd.fileUri === "string" && Object.keys(fd).length === 2) {
        return { type: "image", source: { kind: "url", data: fd.fileUri }, media_type: fd.mimeType };
      }
    }
    // anything else (documents, audio, executable code, proto-name spellings) stays whole (§10.3)
    const k = kind ?? Object.keys(part)[0] ?? "part";
    return { type: `${NAME}:${k}`, raw: part };
  }

  // -- wire -> canonical (requests: replay, turnspec's TC802) ----------------------------

  /** The model and the stream choice are read from `url` (`gemini:unknown` and false without one). */
  readRequest(body: JsonObject, sessionId: string | null, url: string | null = null): ParsedRequest {
    const sid = sessionId ?? "sess_" + newUlid().toLowerCase();
    const where = url === null ? null : urlParts(url);
    const model = `${PROVIDER}:${where?.model ?? "unknown"}`;
    const optRaw: JsonObject = {};
    if (where !== null && where.prefix !== PATH_PREFIX) {
      optRaw.path_prefix = where.prefix;
    }
    if (where?.stream === true && !where.sse) {
      optRaw.framing = "json-array";
    }
    const messages: Message[] = [];
    const si = body.systemInstruction;
    if (isObject(si)) {
      const parts = Array.isArray(si.parts) ? si.parts.filter(isObject) : [];
      messages.push(requestMessage(sid, "system", parts.map((p) => ({ type: "text", text: String(p.text ?? "") })), {}));
      if (typeof si.role === "string") {
        optRaw.system_role = si.role;
      }
    }
    const pending = new Map<string, string[]>(); // function name -> id-less calls awaiting a result
    const contents = Array.isArray(body.contents) ? body.contents : [];
    contents.forEach((c, n) => {
      if (!isObject(c)) {
        throw new WireFormatError(`contents[${n}] is not an object`);
      }
      const parts = Array.isArray(c.parts) ? c.parts.filter(isObject) : [];
      if (c.role === "model") {
        const { blocks, extras } = this.readParts(sid, parts, ["request", String(n)]);
        for (const b of blocks) {
          if (b.type === "tool_use") {
            const use = b as ToolUseBlock;
            if (this.toolIdMap(sid).getProvider(use.id) === NO_ID + use.id) {
              pending.set(use.name, [...(pending.get(use.name) ?? []), use.id]);
            }
          }
        }
        const meta: JsonObject = { model, provider: PROVIDER };
        if (Object.keys(extras).length > 0) {
          meta.provider_raw = { [NAME]: { parts: extras } };
        }
        messages.push(requestMessage(sid, "assistant", blocks.length > 0 ? blocks : [{ type: "text", text: "" }], meta));
        return;
      }
      let user: JsonObject[] = [];
      for (const p of parts) {
        if (isObject(p.functionResponse)) {
          if (user.length > 0) {
            messages.push(this.readUser(sid, user, n));
            user = [];
          }
          messages.push(this.readToolResult(sid, p, pending));
        } else {
          user.push(p);
        }
      }
      if (user.length > 0 || parts.length === 0) {
        messages.push(this.readUser(sid, user, n));
      }
    });
    const { tools, native, extras } = readTools(body.tools);
    if (Object.keys(extras).length > 0) {
      optRaw.tool_extras = extras;
    }
    const extra: JsonObject = Object.fromEntries(Object.entries(body).filter(([k]) => !["contents", "systemInstruction", "tools", "generationConfig"].includes(k)));
    const config: JsonObject | null = isObject(body.generationConfig) ? { ...body.generationConfig } : null;
    const got: JsonObject = {};
    if (config !== null) {
      for (const k of CONFIG_KEYS) {
        if (k in config) {
          got[k] = config[k] ?? null;
          delete config[k];
        }
      }
    }
    let outputSchema: JsonObject | null = null;
    if (got.responseMimeType === "application/json" && isObject(got.responseJsonSchema)) {
      outputSchema = got.responseJsonSchema;
    } else if (config !== null) {
      // a schema without the JSON mime type (or the other way round) goes back as it came
      for (const k of ["responseMimeType", "responseJsonSchema"]) {
        if (k in got) {
          config[k] = got[k] ?? null;
        }
      }
    }
    if (config !== null) {
      extra.generationConfig = config;
    }
    return {
      messages,
      tools,
      options: {
        model,
        max_output_tokens: typeof got.maxOutputTokens === "number" ? got.maxOutputTokens : null,
        temperature: typeof got.temperature === "number" ? got.temperature : null,
        stop_sequences: Array.isArray(got.stopSequences) ? got.stopSequences.map(String) : [],
        stream: where?.stream === true,
        output_schema: outputSchema,
        extra,
        provider_tools: native,
        provider_raw: Object.keys(optRaw).length > 0 ? { [NAME]: optRaw } : {},
        critical_key: "critical",
      },
    };
  }

  /**
   * Request-history parts as blocks, one per part (a signature on a part that is no thought
   * adds a thinking block of empty text holding it, before the part's block), and what
   * canonical cannot hold of each, by block index.
   */
  private readParts(sid: string, parts: JsonObject[], where: string[]): { blocks: Block[]; extras: JsonObject } {
    const blocks: Block[] = [];
    const extras: JsonObject = {};
    let calls = 0;
    for (const [j, p] of parts.entries()) {
      const sig = typeof p.thoughtSignature === "string" && p.thoughtSignature !== "" ? p.thoughtSignature : null;
      const { thoughtSignature: _sig, thought: _thought, ...rest } = p;
      if (p.thought === true && "text" in p) {
        blocks.push({ type: "thinking", text: String(p.text), signature: sig });
        if (p.text === "" && sig !== null) {
          extras[String(blocks.length - 1)] = { thought: true }; // an empty thought part, not a bare signature
        }
        continue;
      }
      if (sig !== null) {
        blocks.push({ type: "thinking", text: "", signature: sig });
        if (Object.keys(rest).length === 1 && rest.text === "") {
          continue; // a part that only carries the signature
        }
      }
      const kind = partKind(p);
      const block = this.partBlock(sid, p, [...where, String(j), String(calls)]);
      if (kind === "functionCall") {
        calls += 1;
      }
      const own = Object.fromEntries(Object.entries(rest).filter(([k]) => kind === null || k !== kind));
      if (kind !== null && Object.keys(own).length > 0) {
        extras[String(blocks.length)] = { extra: own }; // e.g. videoMetadata beside its fileData
      }
      blocks.push(block);
    }
    return { blocks, extras };
  }

  private readUser(sid: string, parts: JsonObject[], n: number): Message {
    const { blocks, extras } = this.readParts(sid, parts, ["request", String(n)]);
    const meta: JsonObject = Object.keys(extras).length > 0 ? { provider_raw: { [NAME]: { parts: extras } } } : {};
    return requestMessage(sid, "user", blocks.length > 0 ? blocks : [{ type: "text", text: "" }], meta);
  }

  private readToolResult(sid: string, part: JsonObject, pending: Map<string, string[]>): Message {
    const fr = part.functionResponse as JsonObject;
    const name = String(fr.name ?? "");
    let cid: string;
    const waiting = pending.get(name) ?? [];
    if (typeof fr.id === "string" && fr.id !== "") {
      cid = this.toolIdMap(sid).canonicalFor(fr.id);
    } else if (waiting.length > 0) {
      cid = waiting.shift() as string; // id-less: the oldest unanswered call of that name
    } else {
      cid = this.callId(sid, null, ["orphan-result", name]);
    }
    const response = isObject(fr.response) ? fr.response : {};
    const { texts, isError } = responseTexts(response);
    const result: ToolResultBlock = { type: "tool_result", tool_use_id: cid, content: texts.map((text) => ({ type: "text", text })) };
    if (isError) {
      result.is_error = true;
    }
    const kept: JsonObject = { name };
    if (!plainResponse(response)) {
      kept.response = response; // an object {output|error: text} does not rebuild: sent back as it came
    }
    const { functionResponse: _fr, ...own } = part;
    if (Object.keys(own).length > 0) {
      kept.extra = own;
    }
    return requestMessage(sid, "tool", [result], { parent_tool_use_id: cid, provider_raw: { [NAME]: { parts: { "0": kept } } } });
  }

  // -- estimates (contract §3.1 estimate_input_tokens) -----------------------------------

  /**
   * A heuristic, as the contract allows: about 4 characters a token, one of framing per
   * content, 258 tokens per 768 px image tile (image understanding; 4 tiles for an image of
   * unknown size), about 6 plus 3/5 of its JSON's tokens for a function declaration. Gemini's
   * countTokens method does better.
   */
  estimate(messages: Message[], tools: ToolDefinition[]): number {
    let n = 0;
    for (const m of messages) {
      n += 1 + m.content.reduce((sum, b) => sum + blockTokens(b), 0);
    }
    for (const t of tools) {
      n += 6 + Math.floor(((jsonTokens(t.input_schema) + textTokens(t.name + " " + t.description)) * 3) / 5);
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

  /** Every SYSTEM text block, one part each (the API joins parts as paragraphs). */
  system(messages: Message[], own: JsonObject): JsonObject | null {
    const parts: JsonObject[] = [];
    for (const m of messages) {
      if (m.role !== "system") {
        continue;
      }
      m.content.forEach((b, i) => {
        if (b.type === "text") {
          parts.push({ text: (b as { text: string }).text });
        } else {
          this.drop(m, i, b.type, "systemInstruction carries text only");
        }
      });
    }
    if (parts.length === 0) {
      return null;
    }
    return typeof own.system_role === "string" ? { parts, role: own.system_role } : { parts };
  }

  contents(messages: Message[]): JsonObject[] {
    const out: JsonObject[] = [];
    let toolGroup = false;
    for (const m of messages) {
      if (m.role === "assistant") {
        for (const b of m.content) {
          if (b.type === "tool_use") {
            this.a.rememberName(m.session_id, (b as ToolUseBlock).id, (b as ToolUseBlock).name);
          }
        }
      }
      if (m.role === "system") {
        continue;
      }
      if (m.role === "tool") {
        const parts = this.toolResults(m);
        const last = out[out.length - 1];
        if (parts.length > 0 && toolGroup && last !== undefined && Array.isArray(last.parts)) {
          last.parts.push(...parts); // parallel results share one content
        } else if (parts.length > 0) {
          out.push({ role: "user", parts });
          toolGroup = true;
        }
        continue;
      }
      toolGroup = false;
      const parts = this.parts(m);
      if (parts.length > 0) {
        // every block dropped (and logged): no content, since the API refuses an empty one
        out.push({ role: m.role === "assistant" ? "model" : "user", parts });
      }
    }
    return out;
  }

  /** A user or assistant message's parts; a signature held by a thinking block of no text rides on the next part. */
  parts(m: Message): JsonObject[] {
    const parts: JsonObject[] = [];
    const extras = partExtras(m);
    let pendingSig: string | null = null;
    m.content.forEach((b, i) => {
      if (b.type === "thinking") {
        const why = foreign(m);
        if (why !== null) {
          this.drop(m, i, "thinking", why);
          return;
        }
        if (pendingSig !== null) {
          parts.push({ text: "", thoughtSignature: pendingSig });
          pendingSig = null;
        }
        const t = b as { text: string; signature: string | null };
        const kept = extras[String(i)];
        if (t.text !== "" || t.signature === null || t.signature === "" || (isObject(kept) && kept.thought === true)) {
          const part: JsonObject = { text: t.text, thought: true };
          if (t.signature !== null && t.signature !== "") {
            part.thoughtSignature = t.signature;
          }
          parts.push(part);
        } else {
          pendingSig = t.signature;
        }
        return;
      }
      if (b.type === "redacted_thinking") {
        this.drop(m, i, "redacted_thinking", "Gemini has no redacted thinking");
        return;
      }
      const part = this.part(m, i, b);
      if (part === null) {
        return;
      }
      const kept = extras[String(i)];
      if (isObject(kept) && isObject(kept.extra)) {
        Object.assign(part, kept.extra);
      }
      if (pendingSig !== null) {
        part.thoughtSignature = pendingSig;
        pendingSig = null;
      }
      parts.push(part);
    });
    if (pendingSig !== null) {
      parts.push({ text: "", thoughtSignature: pendingSig }); // as the API ends a stream
    }
    return parts;
  }

  part(m: Message, i: number, b: Block): JsonObject | null {
    if (b.type === "text") {
      return { text: (b as { text: string }).text };
    }
    if (b.type === "image") {
      return this.image(m, i, b as ImageBlock);
    }
    if (b.type === "tool_use" && m.role === "assistant") {
      const use = b as ToolUseBlock;
      const call: JsonObject = { name: use.name, args: use.input };
      const id = this.a.wireCallId(m.session_id, use.id);
      if (id !== null) {
        call.id = id;
      }
      return { functionCall: call };
    }
    if (b.type.startsWith(`${NAME}:`) && isObject((b as OtherBlock).raw)) {
      return { ...((b as OtherBlock).raw as JsonObject) }; // a part this adapter read and kept whole
    }
    this.drop(m, i, b.type, `no Gemini part for a ${b.type} block in a ${m.role} message`);
    return null;
  }

  image(m: Message, i: number, b: ImageBlock): JsonObject | null {
    if (!isObject(b.source) || typeof b.media_type !== "string") {
      this.drop(m, i, "image", "an image block without a source or a media type");
      return null;
    }
    const media = b.media_type.toLowerCase(); // IANA media types are case-insensitive
    if (b.source.kind === "file_ref") {
      this.drop(m, i, "image", "file_ref images must be inlined by the harness (adapters do no I/O)");
      return null;
    }
    if (!IMAGE_TYPES.includes(media)) {
      this.drop(m, i, "image", `media type ${media} is not accepted (accepted: ${IMAGE_TYPES.join(", ")})`);
      return null;
    }
    if (b.source.kind === "url") {
      return { fileData: { mimeType: media, fileUri: b.source.data } };
    }
    return { inlineData: { mimeType: media, data: b.source.data } };
  }

  /** A tool message's results, as `functionResponse` parts. */
  toolResults(m: Message): JsonObject[] {
    const out: JsonObject[] = [];
    const extras = partExtras(m);
    m.content.forEach((b, i) => {
      if (b.type !== "tool_result") {
        this.drop(m, i, b.type, "a tool message carries tool_result blocks only");
        return;
      }
      const result = b as ToolResultBlock;
      const texts: string[] = [];
      for (const x of result.content) {
        if (x.type === "text") {
          texts.push((x as { text: string }).text);
        } else {
          this.drop(m, i, x.type, "functionResponse.response carries JSON, not images");
        }
      }
      const kept = isObject(extras[String(i)]) ? (extras[String(i)] as JsonObject) : {};
      const isError = result.is_error === true;
      const recorded = kept.response;
      let response: JsonObject;
      if (isObject(recorded) && sameTexts(responseTexts(recorded), texts, isError)) {
        response = recorded; // the object the recorded request carried
      } else {
        const value: Json = texts.length === 1 ? (texts[0] ?? "") : texts.length > 1 ? texts : "";
        response = { [isError ? "error" : "output"]: value };
      }
      const name = this.a.nameOf(m.session_id, result.tool_use_id) ?? (typeof kept.name === "string" ? kept.name : "tool");
      const fr: JsonObject = { name, response };
      const id = this.a.wireCallId(m.session_id, result.tool_use_id);
      if (id !== null) {
        fr.id = id;
      }
      out.push({ functionResponse: fr, ...(isObject(kept.extra) ? kept.extra : {}) });
    });
    return out;
  }

  drop(m: Message, index: number, blockType: string, reason: string): void {
    dropBlock(this.log, this.options, m, index, blockType, reason); // canonical §7.3 (wire.ts)
  }
}

// -- a reply's chunks, one at a time (a whole response is one chunk) ------------------------

/**
 * The blocks and events of a reply (one code path for a whole response and for each chunk of
 * a stream, so a stream's aggregate equals the parse). Consecutive text parts merge into one
 * text block and consecutive unsigned thought parts into one thinking block: the API cuts a
 * streamed part anywhere, so part boundaries carry no meaning in a reply.
 */
export class Reply {
  readonly content: Block[] = [];
  /** Blocks no stream event carries (a part kept whole), for a cancel (events.ts). */
  readonly silent: SilentBlock[] = [];
  readonly mid: string;
  usage: TokenUsage | null = null;
  finishReason: string | null = null;
  blockReason: string | null = null;
  wireModel: string | null = null;
  responseId = "";
  private calls = 0;

  constructor(
    private readonly a: Adapter,
    readonly ctx: RequestContext,
    private log: Logs,
  ) {
    this.mid = ctx.message_id ?? newUlid();
  }

  setLogs(log: Logs): void {
    this.log = log;
  }

  /**
   * One GenerateContentResponse: the events it adds (`position` locates a malformed one;
   * `before` is how many events the stream produced before it).
   */
  chunk(obj: JsonObject, position: number, before = 0): StreamEvent[] {
    const out: StreamEvent[] = [];
    if (typeof obj.modelVersion === "string" && obj.modelVersion !== "") {
      this.wireModel = obj.modelVersion;
    }
    if (typeof obj.responseId === "string" && obj.responseId !== "") {
      this.responseId = obj.responseId;
    }
    const feedback = obj.promptFeedback;
    if (isObject(feedback) && typeof feedback.blockReason === "string") {
      this.blockReason = feedback.blockReason;
    }
    const cands = obj.candidates;
    if (cands !== undefined && !Array.isArray(cands)) {
      throw new WireFormatError(`event ${position}: \`candidates\` is not a list`);
    }
    const cand = cands?.[0];
    if (cands !== undefined && cands.length > 1 && position === 0) {
      this.log.warning(`${NAME}: ${cands.length} candidates; the canonical message keeps candidate 0`, { event: "candidates_dropped", adapter: NAME });
    }
    if (cand !== undefined) {
      if (!isObject(cand)) {
        throw new WireFormatError(`event ${position}: candidates[0] is not an object`);
      }
      const parts = isObject(cand.content) ? (cand.content.parts ?? []) : [];
      if (!Array.isArray(parts)) {
        throw new WireFormatError(`event ${position}: candidates[0].content.parts is not a list`);
      }
      for (const p of parts) {
        if (!isObject(p)) {
          throw new WireFormatError(`event ${position}: a part is not an object`);
        }
        this.part(p, position, out, before);
      }
      if (typeof cand.finishReason === "string") {
        this.finishReason = cand.finishReason;
      }
    }
    const usage = usageFromWire(obj.usageMetadata);
    if (usage !== null) {
      this.usage = usage; // cumulative in every chunk: the latest wins
      out.push({ type: "usage_update", message_id: this.mid, usage: { ...usage } as unknown as JsonObject });
    }
    return out;
  }

  private part(p: JsonObject, position: number, out: StreamEvent[], before: number): void {
    const mid = this.mid;
    const sig = typeof p.thoughtSignature === "string" && p.thoughtSignature !== "" ? p.thoughtSignature : null;
    const last = this.content[this.content.length - 1];
    if (p.thought === true) {
      const text = String(p.text ?? "");
      let k: number;
      if (last !== undefined && last.type === "thinking" && (last as { signature: string | null }).signature === null) {
        k = this.content.length - 1;
        (last as { text: string }).text += text;
      } else {
        k = this.content.length;
        this.content.push({ type: "thinking", text, signature: null });
      }
      if (text !== "") {
        out.push({ type: "thinking_delta", message_id: mid, content_block_index: k, text, signature: null });
      }
      if (sig !== null) {
        (this.content[k] as { signature: string | null }).signature = sig;
        out.push({ type: "thinking_delta", message_id: mid, content_block_index: k, text: "", signature: sig });
      }
      return;
    }
    if (sig !== null) {
      const k = this.content.length;
      this.content.push({ type: "thinking", text: "", signature: sig });
      out.push({ type: "thinking_delta", message_id: mid, content_block_index: k, text: "", signature: sig });
    }
    const kind = partKind(p);
    if (kind === "text") {
      const text = String(p.text);
      if (text === "") {
        return;
      }
      const tail = this.content[this.content.length - 1];
      let k: number;
      if (tail !== undefined && tail.type === "text") {
        k = this.content.length - 1;
        (tail as { text: string }).text += text;
      } else {
        k = this.content.length;
        this.content.push({ type: "text", text });
      }
      out.push({ type: "text_delta", message_id: mid, content_block_index: k, text });
      return;
    }
    if (kind === "functionCall" && isObject(p.functionCall) && (p.functionCall.willContinue === true || "partialArgs" in p.functionCall)) {
      throw new WireFormatError(`event ${position}: functionCall arguments streamed in pieces (partialArgs), which this adapter does not read`);
    }
    const key = ["response", this.responseId, String(this.calls)];
    if (kind === "functionCall") {
      this.calls += 1;
    }
    const block = this.a.partBlock(this.ctx.session_id, p, key);
    const k = this.content.length;
    this.content.push(block);
    if (block.type === "tool_use") {
      const use = block as ToolUseBlock;
      out.push({ type: "tool_use_start", message_id: mid, content_block_index: k, tool_use_id: use.id, tool_name: use.name });
      out.push({ type: "tool_use_end", message_id: mid, content_block_index: k, tool_use_id: use.id, final_input: use.input });
    } else {
      this.silent.push({ index: k, at: before + out.length, block: block as unknown as JsonObject });
    }
  }

  /** finishReason per STOP_REASONS, STOP with function calls as tool_use, a blocked prompt as error. */
  stopReason(): StopReason {
    if (this.finishReason === null) {
      return this.blockReason !== null ? "error" : "end_turn";
    }
    let stop = STOP_REASONS[this.finishReason];
    if (stop === undefined) {
      this.log.warning(`${NAME}: undocumented finishReason ${JSON.stringify(this.finishReason)} read as end_turn`, {
        event: "unknown_stop_reason",
        adapter: NAME,
        stop_reason: this.finishReason,
      });
      stop = "end_turn";
    }
    if (this.finishReason === "STOP" && this.content.some((b) => b.type === "tool_use")) {
      return "tool_use";
    }
    return stop;
  }
}

// -- helpers ---------------------------------------------------------------------------------

/** Why a thinking block of `m` cannot go back, or null: thought parts and signatures are Gemini's own. */
function foreign(m: Message): string | null {
  const provider = m.metadata?.provider;
  if (provider === PROVIDER) {
    return null;
  }
  const who = typeof provider === "string" && provider !== "" ? provider : "an unknown provider";
  return `thinking issued by ${who}; thought parts and thoughtSignature are Gemini's own state`;
}

/** What canonical cannot hold of a message's parts, by block index. */
function partExtras(m: Message): JsonObject {
  const parts = ownRaw(m.metadata?.provider_raw).parts;
  return isObject(parts) ? parts : {};
}

function partKind(part: JsonObject): string | null {
  return PART_KINDS.find((k) => part[k] !== undefined && part[k] !== null) ?? null;
}

function renderTool(t: ToolDefinition, extra: Json | undefined): JsonObject {
  const decl: JsonObject = { name: t.name, description: t.description };
  const kept = isObject(extra) ? { ...extra } : {};
  const schemaKey = typeof kept._schema_key === "string" ? kept._schema_key : "parametersJsonSchema";
  delete kept._schema_key;
  decl[schemaKey] = t.input_schema;
  return { ...decl, ...kept };
}

/** Function declarations as canonical tools; any other tool (googleSearch, codeExecution) stays a provider tool. */
function readTools(wire: Json | undefined): { tools: ToolDefinition[]; native: JsonObject[]; extras: JsonObject } {
  const tools: ToolDefinition[] = [];
  const native: JsonObject[] = [];
  const extras: JsonObject = {};
  for (const t of Array.isArray(wire) ? wire : []) {
    if (!isObject(t)) {
      continue;
    }
    const decls = t.functionDeclarations;
    if (!Array.isArray(decls) || Object.keys(t).length !== 1) {
      native.push(t);
      continue;
    }
    for (const d of decls.filter(isObject)) {
      const schemaKey = "parametersJsonSchema" in d ? "parametersJsonSchema" : "parameters" in d ? "parameters" : null;
      const schema = schemaKey !== null ? d[schemaKey] : undefined;
      const name = String(d.name ?? "");
      tools.push({
        name,
        description: typeof d.description === "string" ? d.description : "",
        input_schema: isObject(schema) ? schema : { type: "object", properties: {} },
        side_effects: "execute", // the wire does not say: the most careful reading
      });
      const extra: JsonObject = Object.fromEntries(Object.entries(d).filter(([k]) => !["name", "description", schemaKey].includes(k)));
      if (schemaKey !== "parametersJsonSchema") {
        extra._schema_key = schemaKey ?? "parametersJsonSchema"; // the OpenAPI-subset `parameters` goes back as it came
      }
      if (d.description === null) {
        extra.description = null;
      }
      if (Object.keys(extra).length > 0) {
        extras[name] = extra;
      }
    }
  }
  return { tools, native, extras };
}

/** (texts, is_error) of a functionResponse.response, per the documented `output` / `error` keys. */
function responseTexts(response: JsonObject): { texts: string[]; isError: boolean } {
  const keys = Object.keys(response);
  if (keys.length === 0) {
    return { texts: [], isError: false };
  }
  const key = keys.length === 1 && (keys[0] === "error" || keys[0] === "output") ? keys[0] : null;
  if (key === null) {
    return { texts: [JSON.stringify(response)], isError: "error" in response };
  }
  const value = response[key];
  if (typeof value === "string") {
    return { texts: value === "" ? [] : [value], isError: key === "error" };
  }
  if (Array.isArray(value) && value.length > 1 && value.every((v) => typeof v === "string")) {
    return { texts: value as string[], isError: key === "error" };
  }
  return { texts: [JSON.stringify(value)], isError: key === "error" };
}

/** Whether `{output|error: text}` rebuilds this response exactly. */
function plainResponse(response: JsonObject): boolean {
  const keys = Object.keys(response);
  if (keys.length === 0) {
    return true;
  }
  if (keys.length !== 1 || (keys[0] !== "output" && keys[0] !== "error")) {
    return false;
  }
  const value = response[keys[0] as string];
  return typeof value === "string" || (Array.isArray(value) && value.length > 1 && value.every((v) => typeof v === "string"));
}

function sameTexts(got: { texts: string[]; isError: boolean }, texts: string[], isError: boolean): boolean {
  return got.isError === isError && got.texts.length === texts.length && got.texts.every((t, i) => t === texts[i]);
}

/** JSON with object members sorted: the same arguments spell the same text (a derived id's input). */
function canonicalJson(value: Json): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonicalJson).join(",")}]`;
  }
  if (isObject(value)) {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k] ?? null)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/** The `{model}`, the path before it, and the stream choice of `.../models/{model}:method[?alt=sse]`. */
function urlParts(url: string): { model: string | null; prefix: string; stream: boolean; sse: boolean } {
  const [pathAndHost = "", query = ""] = url.split("?", 2);
  const path = pathAndHost.replace(/^[a-z]+:\/\/[^/]+/i, "");
  const m = /^(.*\/models\/)([^/:]+):([A-Za-z]+)$/.exec(path);
  const sse = new URLSearchParams(query).get("alt") === "sse";
  if (m === null) {
    return { model: null, prefix: PATH_PREFIX, stream: false, sse };
  }
  return { model: decodeURIComponent(m[2] ?? ""), prefix: m[1] ?? PATH_PREFIX, stream: m[3] === "streamGenerateContent", sse };
}

/** The model id the provider knows: the canonical id without its `gemini:` prefix (§6.3). */
export function modelFor(model: string): string {
  const prefix = `${PROVIDER}:`;
  return model.startsWith(prefix) && model.length > prefix.length ? model.slice(prefix.length) : model;
}

/** `usageMetadata` as TokenUsage (contract §7.2), null when absent. */
export function usageFromWire(usage: Json | undefined): TokenUsage | null {
  if (!isObject(usage)) {
    return null;
  }
  const num = (v: Json | undefined): number => (typeof v === "number" ? v : 0);
  const cached = num(usage.cachedContentTokenCount);
  return {
    input_tokens: Math.max(0, num(usage.promptTokenCount) + num(usage.toolUsePromptTokenCount) - cached),
    output_tokens: num(usage.candidatesTokenCount) + num(usage.thoughtsTokenCount),
    cached_input_tokens: cached,
    cache_creation_input_tokens: 0, // an explicit cache is made by a cachedContents call of its own
  };
}

/**
 * Adapter contract §6.2, §6.3: Google's `{"error": {code, message, status, details}}`. The
 * class of the HTTP status, refined by `status` (the google.rpc code's name) and
 * `details[].reason`; the request id header, and a rate limit's `RetryInfo.retryDelay`.
 */
export function classifyError(status: number, body: Json, headers: Record<string, string>): AdapterError {
  const err = isObject(body) && isObject(body.error) ? body.error : null;
  const h = lowerKeys(headers);
  const requestId = h["x-request-id"] ?? h["x-goog-request-id"] ?? null;
  if (err === null) {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return new AdapterError(classForStatus(status), `HTTP ${status}: ${text.slice(0, 200)}`, { providerStatus: status, requestId });
  }
  const gstatus = typeof err.status === "string" ? err.status : "";
  const message = typeof err.message === "string" ? err.message : "";
  const details = Array.isArray(err.details) ? err.details.filter(isObject) : [];
  let cls: ErrorClass | undefined = STATUS_CLASSES[gstatus];
  if (details.some((d) => d.reason === "API_KEY_INVALID")) {
    cls = "auth"; // the docs' example: 400 INVALID_ARGUMENT "API key not valid"
  } else if (gstatus === "INVALID_ARGUMENT" && CONTEXT_OVERFLOW.test(message)) {
    cls = "context_overflow";
  }
  cls ??= classForStatus(status);
  let retryAfter: number | null = null;
  const info = details.find((d) => String(d["@type"] ?? "").endsWith("RetryInfo"));
  const delay = info !== undefined ? /^(\d+(?:\.\d+)?)s$/.exec(String(info.retryDelay ?? "")) : null;
  if (delay !== null) {
    retryAfter = Number(delay[1]);
  }
  return new AdapterError(cls, `${gstatus !== "" ? gstatus : String(err.code ?? "error")}: ${message}`, {
    providerStatus: status,
    requestId,
    retryAfterSeconds: retryAfter,
  });
}

function blockTokens(b: Block): number {
  switch (b.type) {
    case "text":
      return textTokens((b as { text: string }).text);
    case "tool_use":
      return 2 + textTokens((b as ToolUseBlock).name) + textTokens(JSON.stringify((b as ToolUseBlock).input));
    case "tool_result":
      return 4 + (b as ToolResultBlock).content.reduce((sum, x) => sum + blockTokens(x), 0);
    case "image":
      return 4 * 258;
    default:
      return 0; // thought text sent back is not counted
  }
}
