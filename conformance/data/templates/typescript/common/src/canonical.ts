// The canonical format's types (canonical-message-format §4, §7; turnspec's
// schemas/canonical/v1/), as this adapter reads and writes them, and the assistant message a
// harness assembles from what the adapter parsed (adapter contract §3.3).

import { newUlid } from "./ids.js";
import type { Json, JsonObject } from "./protocol.js";

export interface TextBlock {
  type: "text";
  text: string;
}
export interface ImageBlock {
  type: "image";
  source: { kind: "base64" | "url" | "file_ref"; data: string };
  media_type: string;
}
export interface ToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: JsonObject;
}
export interface ToolResultBlock {
  type: "tool_result";
  tool_use_id: string;
  content: Block[];
  is_error?: boolean;
}
export interface ThinkingBlock {
  type: "thinking";
  text: string;
  signature: string | null;
}
export interface RedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}
/** A block of a type the canonical format does not know (canonical §10.3: tolerated). */
export interface OtherBlock {
  type: string;
  [key: string]: Json;
}
export type Block =
  | TextBlock
  | ImageBlock
  | ToolUseBlock
  | ToolResultBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | OtherBlock;

export type Role = "user" | "assistant" | "system" | "tool";

export interface Message {
  id: string;
  session_id: string;
  role: Role;
  content: Block[];
  metadata: JsonObject;
  created_at: string;
  schema_version: 1;
}

export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: JsonObject;
  side_effects: string;
  requires_workspace?: boolean;
}

/** What a request asks for beyond messages and tools (the protocol's `options`). */
export interface Options {
  model: string;
  max_output_tokens: number | null;
  temperature: number | null;
  stop_sequences: string[];
  stream: boolean;
  output_schema: JsonObject | null;
  extra: JsonObject;
  provider_tools: JsonObject[];
  provider_raw: JsonObject;
  critical_key: string;
}

/** What the harness knows about a call that the wire response does not say. */
export interface RequestContext {
  session_id: string;
  message_id?: string | null;
  request_id?: string | null;
  model?: string | null;
  created_at?: string | null;
  latency_ms?: number;
  pricing_version?: string | null;
  estimated_input_tokens?: number | null;
}

/** Adapter contract §3.3 TokenUsage. */
export interface TokenUsage {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_creation_input_tokens: number;
}

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "cancelled" | "error";

/** RFC 3339 UTC with six fraction digits, as canonical `created_at` asks (§4.1). */
export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/**
 * The canonical assistant message a harness builds from what the adapter parsed. Routing
 * and cost are the core's (contract §3.3), so, like a harness without a routing engine,
 * routing is `default` and the cost an explicit "0" under pricing_version "unpriced"
 * (canonical §6.4): the price table stays the harness's, the protocol does not send it.
 */
export function assemble(
  provider: string,
  ctx: RequestContext,
  content: Block[],
  wireModel: string | null,
  usage: TokenUsage | null,
  status: "complete" | "cancelled" | "error" = "complete",
): Message {
  const model = wireModel ? `${provider}:${wireModel}` : (ctx.model ?? `${provider}:unknown`);
  const metadata: JsonObject = {
    model,
    provider,
    routing: { mode: "default", chosen_model: model, reason: "no routing engine: the adapter's own assembly" },
    usage:
      usage === null
        ? null
        : { ...usage, cost_usd: "0", pricing_version: "unpriced", latency_ms: ctx.latency_ms ?? 0 },
    status,
  };
  return {
    id: ctx.message_id ?? newUlid(),
    session_id: ctx.session_id,
    role: "assistant",
    // an empty reply is still a message, and canonical §5.1.1 needs one block
    content: content.length > 0 ? content : [{ type: "text", text: "" }],
    metadata,
    created_at: ctx.created_at ?? nowTimestamp(),
    schema_version: 1,
  };
}
