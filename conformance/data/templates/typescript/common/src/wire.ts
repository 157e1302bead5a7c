// What every wire API's mapping (adapter.ts, stream.ts) shares: the adapter's name, the HTTP
// request and response it renders and parses, the §7.3 drop record, adapter contract §6.2's
// default class of an HTTP status, and small JSON helpers.

import type { Block, Message, Options, Role, ToolDefinition } from "./canonical.js";
import { nowTimestamp } from "./canonical.js";
import { newUlid } from "./ids.js";
import { CriticalBlockError, isObject } from "./protocol.js";
import type { ErrorClass, Json, JsonObject, Logs } from "./protocol.js";

/** The adapter's name: reports use it, and `turnspec conform` reads cassettes/{{name}}/. */
export const NAME = "{{name}}";

export interface WireRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: JsonObject;
}

export interface WireResponse {
  status: number;
  headers: Record<string, string>;
  body: Json;
}

export interface ParsedRequest {
  messages: Message[];
  tools: ToolDefinition[];
  options: Options;
}

/**
 * Canonical §4.2.2, §7.3: a block the wire cannot carry is dropped with one WARN record
 * holding the five fields, or fails the request when the message marks it critical
 * (`metadata[critical_key]` true, or a list holding the block's index).
 */
export function dropBlock(log: Logs, options: Options, m: Message, index: number, blockType: string, reason: string): void {
  const critical = m.metadata?.[options.critical_key];
  if (critical === true || (Array.isArray(critical) && critical.includes(index))) {
    throw new CriticalBlockError(NAME, m.session_id, m.id, blockType, reason);
  }
  log.warning(`${NAME}: dropped ${blockType} block of message ${m.id} (session ${m.session_id}): ${reason}`, {
    event: "block_dropped",
    adapter: NAME,
    session_id: m.session_id,
    message_id: m.id,
    block_type: blockType,
    reason,
  });
}

/** A message read from a recorded request: the wire carries no message ids or times, so they are minted. */
export function requestMessage(sid: string, role: Role, content: Block[], metadata: JsonObject): Message {
  return { id: newUlid(), session_id: sid, role, content, metadata, created_at: nowTimestamp(), schema_version: 1 };
}

/** This adapter's entry of a `provider_raw` (only the adapter that wrote it reads it, §6.5). */
export function ownRaw(providerRaw: Json | undefined): JsonObject {
  const mine = isObject(providerRaw) ? providerRaw[NAME] : undefined;
  return isObject(mine) ? mine : {};
}

/** `text` as a JSON object ({} when blank), or null when it is not one. */
export function jsonObject(text: string): JsonObject | null {
  if (text.trim() === "") {
    return {};
  }
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** The media type and base64 payload of a base64 `data:` URL (RFC 2397). */
export function parseDataUrl(url: string): { mediaType: string; data: string } | null {
  const m = /^data:([^;,]*)((?:;[^;,]*)*);base64,([\s\S]*)$/.exec(url);
  return m === null ? null : { mediaType: (m[1] ?? "").toLowerCase(), data: m[3] ?? "" };
}

/** Headers with their names lower-cased (RFC 9110 §5.1: case-insensitive). */
export function lowerKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/** A `retry-after` header's hint in seconds (names lower-cased), else `retry-after-ms`'s. */
export function retryAfter(h: Record<string, string>): number | null {
  let seconds: number | null = null;
  if (h["retry-after"] !== undefined && h["retry-after"].trim() !== "" && Number.isFinite(Number(h["retry-after"]))) {
    seconds = Number(h["retry-after"]);
  } else if (h["retry-after-ms"] !== undefined && h["retry-after-ms"].trim() !== "" && Number.isFinite(Number(h["retry-after-ms"]))) {
    seconds = Number(h["retry-after-ms"]) / 1000;
  }
  return seconds !== null && seconds >= 0 ? seconds : null;
}

/** Adapter contract §6.2's default mapping of an HTTP status. */
export function classForStatus(status: number): ErrorClass {
  if (status === 401 || status === 403) return "auth";
  if (status === 408) return "network";
  if (status === 413) return "context_overflow";
  if (status === 429) return "rate_limit";
  if (status >= 500) return "server_error";
  if (status >= 400) return "invalid_request";
  return "other";
}

/** An error body's message, else the body itself (its first 200 characters). */
export function errorText(body: Json, err: JsonObject | null): string {
  if (err !== null && typeof err.message === "string") {
    return err.message;
  }
  const text = typeof body === "string" ? body : JSON.stringify(body);
  return text.trim() === "" ? "(empty body)" : text.slice(0, 200);
}

/** About 4 characters a token: the heuristic estimates use (contract §3.1). */
export function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The tokens of a value's compact JSON, as a BPE vocabulary cuts it: a word of up to 6
 * letters is one token (longer ones one per 6), digits one per 3, every other character one.
 * JSON is mostly punctuation, which textTokens' 4 characters a token undercounts.
 */
export function jsonTokens(value: Json): number {
  let n = 0;
  for (const piece of JSON.stringify(value).match(/[A-Za-z]+|[0-9]+|\S/g) ?? []) {
    n += /^[A-Za-z]/.test(piece) ? Math.ceil(piece.length / 6) : /^[0-9]/.test(piece) ? Math.ceil(piece.length / 3) : 1;
  }
  return n;
}
