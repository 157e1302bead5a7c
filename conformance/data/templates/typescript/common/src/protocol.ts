// The exec protocol's values (turnspec docs: "The exec protocol", version 1): JSON values,
// the log records an answer carries, and the typed errors a failed answer carries.

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// -- logs ------------------------------------------------------------------------------

export type Level = "debug" | "info" | "warning" | "error";

export interface LogRecord {
  level: Level;
  message: string;
  fields: JsonObject;
}

/** The log records one call produces; they travel in its answer's `logs`. */
export class Logs {
  readonly records: LogRecord[] = [];

  warning(message: string, fields: JsonObject): void {
    this.records.push({ level: "warning", message, fields });
  }
}

// -- typed errors ----------------------------------------------------------------------

/** Adapter contract §6.1. */
export type ErrorClass =
  | "rate_limit"
  | "auth"
  | "server_error"
  | "network"
  | "context_overflow"
  | "invalid_request"
  | "cancelled"
  | "other";

/** Adapter contract §6.4: the transient classes. */
export const RETRYABLE: ReadonlySet<ErrorClass> = new Set<ErrorClass>(["rate_limit", "server_error", "network"]);

/** Errors a stream's failure carries: the events the failing chunk completed before it. */
export interface StreamFailure {
  events?: JsonObject[];
}

/** A classified failure (contract §6.1 classes with the §6.3 fields). */
export class AdapterError extends Error implements StreamFailure {
  events?: JsonObject[];
  providerStatus: number | null;
  requestId: string | null;
  retryable: boolean;
  retryAfterSeconds: number | null;

  constructor(
    readonly errorClass: ErrorClass,
    message: string,
    fields: { providerStatus?: number | null; requestId?: string | null; retryAfterSeconds?: number | null } = {},
  ) {
    super(message);
    this.providerStatus = fields.providerStatus ?? null;
    this.requestId = fields.requestId ?? null;
    this.retryable = RETRYABLE.has(errorClass);
    this.retryAfterSeconds = fields.retryAfterSeconds ?? null;
  }
}

/** The provider's body breaks its documented format; `event` and `line` locate it in a stream. */
export class WireFormatError extends Error implements StreamFailure {
  events?: JsonObject[];
  constructor(
    message: string,
    readonly event: number | null = null,
    readonly line: number | null = null,
  ) {
    super(message);
  }
}

/** A block marked critical that the wire cannot carry (canonical §4.2.2, §7.3). */
export class CriticalBlockError extends Error {
  constructor(
    readonly adapter: string,
    readonly sessionId: string,
    readonly messageId: string,
    readonly blockType: string,
    readonly reason: string,
  ) {
    super(`${adapter}: critical ${blockType} block of message ${messageId} not sendable: ${reason}`);
  }
}

/** The operation, or this form of it, is not implemented: the suite skips what needs it. */
export class NotImplementedError extends Error {}

/** The protocol's error object for anything a handler threw. */
export function errorToJson(err: unknown): JsonObject {
  const events = (err as StreamFailure | null)?.events;
  const withEvents = (e: JsonObject): JsonObject => (events !== undefined ? { ...e, events } : e);
  if (err instanceof CriticalBlockError) {
    return {
      kind: "critical_block",
      message: err.message,
      adapter: err.adapter,
      session_id: err.sessionId,
      message_id: err.messageId,
      block_type: err.blockType,
      reason: err.reason,
    };
  }
  if (err instanceof WireFormatError) {
    return withEvents({ kind: "wire_format", message: err.message, event: err.event, line: err.line, offset: null });
  }
  if (err instanceof AdapterError) {
    const out: JsonObject = {
      kind: "adapter_error",
      error_class: err.errorClass,
      message: err.message,
      provider_status: err.providerStatus,
      request_id: err.requestId,
      retryable: err.retryable,
    };
    if (err.errorClass === "rate_limit") {
      out.retry_after_seconds = err.retryAfterSeconds;
    }
    return withEvents(out);
  }
  if (err instanceof NotImplementedError) {
    return { kind: "not_implemented", message: err.message };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: "crash", message: e.message, type: e.name, traceback: e.stack ?? "" };
}
