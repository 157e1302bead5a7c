// LanguageModelV3 results -> canonical: content parts to blocks (one mapping for the
// generate result and the stream's parts, so a stream aggregates to what the parse gives),
// usage (contract §7.2), the stop reason (contract §3.3) and the assembled assistant
// message (contract §3.3: routing and cost are the core's; this writes what a harness
// without a routing engine writes, as turnspec's BaseAdapter.assemble does).

import { ulid, nowTimestamp } from "./ids.mjs";

const UNIFIED = {
  stop: "end_turn",
  length: "max_tokens",
  "tool-calls": "tool_use",
  "content-filter": "end_turn",
  error: "error",
  other: "end_turn",
};

/** The canonical stop reason: the provider's raw value through the API record's table when
 * that says more than end_turn (a stop sequence, a refusal...), else the SDK's unified one. */
export function stopReason(config, finish, metadata) {
  const table = config.stop_reasons ?? {};
  // a prompt the provider blocked before any candidate (Gemini's promptFeedback.blockReason,
  // which @ai-sdk/google keeps in the result's providerMetadata) is the record's own row
  const blocked = metadata?.google?.promptFeedback?.blockReason;
  if (blocked != null && config.prompt_blocked && table[config.prompt_blocked] !== undefined) {
    return table[config.prompt_blocked];
  }
  const raw = finish?.raw;
  const mapped = typeof raw === "string" ? table[raw] : undefined;
  if (mapped !== undefined && mapped !== "end_turn") return mapped;
  return UNIFIED[finish?.unified] ?? mapped ?? "end_turn";
}

/** V3 usage -> canonical TokenUsage, or null when the response carried none. */
export function usageOf(config, usage) {
  const input = usage?.inputTokens ?? {};
  const output = usage?.outputTokens ?? {};
  if (input.total == null && output.total == null) return null;
  const read = input.cacheRead ?? 0;
  const write = input.cacheWrite ?? 0;
  const total = input.total ?? 0;
  return {
    // V3's `total` counts cache reads and writes in; an API whose canonical input count
    // leaves them out (Anthropic, Bedrock, Gemini's disjoint buckets) gets that count back
    input_tokens: config.input_counts_cache === false ? Math.max(input.noCache ?? total - read - write, 0) : total,
    output_tokens: output.total ?? 0,
    cached_input_tokens: read,
    cache_creation_input_tokens: write,
  };
}

function metadataOf(key, part) {
  const md = part?.providerMetadata?.[key];
  return md !== null && typeof md === "object" ? md : {};
}

/** Builds canonical blocks from V3 content parts, in order. */
export class Blocks {
  constructor(key, ids) {
    this.key = key; // the provider package's providerMetadata key
    this.ids = ids; // the session's tool id map
    this.blocks = [];
  }

  /** A thinking block holding only a Gemini thoughtSignature, before the part it signed
   * (canonical keeps a signature on a non-thought part that way). */
  signed(part) {
    const sig = this.key === "google" ? metadataOf("google", part).thoughtSignature : undefined;
    if (typeof sig === "string" && sig) this.blocks.push({ type: "thinking", text: "", signature: sig });
  }

  reasoning(part) {
    const md = metadataOf(this.key, part);
    if (typeof md.redactedData === "string") return { type: "redacted_thinking", data: md.redactedData };
    const sig = md.signature ?? md.thoughtSignature ?? md.reasoningEncryptedContent ?? null;
    return { type: "thinking", text: String(part.text ?? ""), signature: typeof sig === "string" && sig ? sig : null };
  }

  toolUse(part) {
    let input;
    try {
      input = JSON.parse(part.input === "" ? "{}" : part.input);
    } catch {
      input = undefined;
    }
    return {
      type: "tool_use",
      id: this.ids.canonicalFor(String(part.toolCallId)),
      name: String(part.toolName),
      input: input !== null && typeof input === "object" && !Array.isArray(input) ? input : {},
      _rawInput: input,
    };
  }

  /** One generate-result content part. */
  add(part) {
    switch (part.type) {
      case "text":
        this.signed(part);
        this.blocks.push({ type: "text", text: String(part.text) });
        return;
      case "reasoning": {
        const block = this.reasoning(part);
        const last = this.blocks[this.blocks.length - 1];
        const item = metadataOf("openai", part).itemId;
        if (this.key === "openai" && block.type === "thinking" && last?._item !== undefined && last._item === item) {
          // one Responses reasoning item, its summary parts as separate V3 parts: one block
          last.text = last.text && block.text ? `${last.text}\n\n${block.text}` : last.text + block.text;
          last.signature = block.signature ?? last.signature;
          return;
        }
        if (this.key === "openai" && item !== undefined) block._item = item;
        this.blocks.push(block);
        return;
      }
      case "tool-call":
        if (part.providerExecuted) break;
        this.signed(part);
        this.blocks.push(this.toolUse(part));
        return;
      default:
        break;
    }
    // what canonical has no block for (a provider-executed tool call or result, a source,
    // a generated file): kept whole as a namespaced block (§10.3), never dropped silently
    this.blocks.push({ type: `ai-sdk:${part.type}`, raw: jsonable(part) });
  }

  /** The canonical blocks, without the builder's own notes. */
  done() {
    return this.blocks.map(clean);
  }
}

export function clean(block) {
  const { _item, _rawInput, ...rest } = block;
  return rest;
}

function jsonable(value) {
  return JSON.parse(
    JSON.stringify(value, (_k, v) => (v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v)) ?? "null",
  );
}

/** The canonical assistant message (BaseAdapter.assemble's shape). */
export function assemble(config, ctx, content, { modelId, usage, status }) {
  const model = modelId ? `${config.provider}:${modelId}` : ctx.model || `${config.provider}:unknown`;
  return {
    id: ctx.message_id || ulid(),
    session_id: ctx.session_id,
    role: "assistant",
    content: content.length ? content : [{ type: "text", text: "" }],
    metadata: {
      model,
      provider: config.provider,
      routing: { mode: "default", chosen_model: model, reason: "turnspec harness: no routing engine" },
      usage: usage ? harnessUsage(usage, ctx) : null,
      status,
    },
    created_at: ctx.created_at || nowTimestamp(),
    schema_version: 1,
  };
}

/** canonical Usage from TokenUsage: no price table crosses the protocol, so an explicit 0
 * under pricing_version "unpriced" (spec §6.4), as a harness without prices writes. */
export function harnessUsage(usage, ctx) {
  return { ...usage, cost_usd: "0", pricing_version: "unpriced", latency_ms: ctx.latency_ms ?? 0 };
}

export function statusOf(stop) {
  return stop === "error" ? "error" : stop === "cancelled" ? "cancelled" : "complete";
}
