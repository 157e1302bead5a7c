// Errors (adapter contract §6): the AI SDK reports an HTTP failure as an APICallError
// (status, body, headers) and classifies nothing, so the bridge classifies: contract §6.2's
// status table, adjusted by the error signals the API's turnspec wire record declares
// (`WireApi.errors`, handed over by the named bridge as `signals`), read in the record's
// order (headers, the overflow wording, body fields, Google's detail reasons, the status).
// The answers are the protocol's typed errors (docs/exec-protocol.md, Errors).

const BY_STATUS = { 401: "auth", 403: "auth", 408: "network", 413: "context_overflow", 429: "rate_limit" };
const TRANSIENT = new Set(["rate_limit", "server_error", "network"]); // contract §6.4 retryable classes

/** A failure that answers its call with the protocol's typed error `error`. */
export class ProtocolFailure extends Error {
  constructor(error) {
    super(error.message);
    this.error = error;
  }
}

export function notImplemented(message) {
  return new ProtocolFailure({ kind: "not_implemented", message });
}

export function criticalBlock(fields) {
  const message = `${fields.adapter}: critical ${fields.block_type} block of message ${fields.message_id} not sendable: ${fields.reason}`;
  return new ProtocolFailure({ kind: "critical_block", message, ...fields });
}

export function wireFormat(message) {
  return new ProtocolFailure({ kind: "wire_format", message, event: null, line: null, offset: null });
}

export function adapterError(errorClass, message, extra = {}) {
  return new ProtocolFailure({
    kind: "adapter_error",
    error_class: errorClass,
    message,
    provider_status: extra.status ?? null,
    request_id: extra.requestId ?? null,
    retryable: TRANSIENT.has(errorClass),
    ...(errorClass === "rate_limit" ? { retry_after_seconds: extra.retryAfter ?? null } : {}),
  });
}

/** The protocol's `crash` error of anything else (its stack as the traceback). */
export function crash(exc) {
  if (exc instanceof ProtocolFailure) return exc.error;
  const type = exc?.constructor?.name && /^[A-Za-z_]\w*$/.test(exc.constructor.name) ? exc.constructor.name : "Error";
  return { kind: "crash", message: String(exc?.message ?? exc), type, traceback: String(exc?.stack ?? exc) };
}

export function valueAt(body, pointer) {
  let value = body;
  for (const part of pointer.split("/").slice(1)) {
    const key = part.replace(/~1/g, "/").replace(/~0/g, "~");
    value = value !== null && typeof value === "object" && !Array.isArray(value) ? value[key] : undefined;
  }
  return value;
}

function header(headers, name) {
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (k.toLowerCase() === name) {
      const one = Array.isArray(v) ? v[0] : v;
      return one == null ? null : String(one);
    }
  }
  return null;
}

function errorObject(body) {
  const err = body !== null && typeof body === "object" ? body.error : undefined;
  return err !== null && typeof err === "object" && !Array.isArray(err) ? err : {};
}

/** The provider's own message in an error body. */
export function providerMessage(body) {
  const err = errorObject(body);
  if (Object.keys(err).length) return String(err.message ?? "");
  if (body !== null && typeof body === "object") return String(body.error ?? body.message ?? "");
  return String(body ?? "");
}

function regex(spec) {
  return spec ? new RegExp(spec.source, spec.flags) : null;
}

function headerClass(signals, headers) {
  for (const [name, classes] of Object.entries(signals.headers ?? {})) {
    const raw = header(headers, name.toLowerCase());
    if (raw !== null) {
      const hit = classes[raw.split(":", 1)[0].trim()];
      if (hit !== undefined) return hit;
    }
  }
  return null;
}

function bodyClass(signals, body) {
  const overflow = regex(signals.overflow_message);
  const when = signals.overflow_when;
  if (when && overflow && valueAt(body, when[0]) === when[1] && overflow.test(providerMessage(body))) {
    return "context_overflow";
  }
  for (const [pointer, classes] of signals.body_fields ?? []) {
    const value = valueAt(body, pointer);
    if (typeof value === "string" && value in classes) return classes[value];
  }
  const details = errorObject(body).details;
  const reasons = new Set(Array.isArray(details) ? details.map((d) => String(d?.reason)) : []);
  for (const [reason, cls] of Object.entries(signals.detail_reasons ?? {})) {
    if (reasons.has(reason)) return cls;
  }
  return null;
}

function statusClass(signals, status, body) {
  let cls = BY_STATUS[status] ?? (status >= 500 ? "server_error" : status >= 400 ? "invalid_request" : "other");
  const overflow = regex(signals.overflow_message);
  if (cls === "invalid_request" && !signals.overflow_when && overflow && overflow.test(providerMessage(body))) {
    cls = "context_overflow"; // "Some providers use 400 with body indicating overflow; remap." (§6.2)
  }
  return cls;
}

/** The §6.1 class of an HTTP error response. */
export function classOf(signals, status, body, headers) {
  return headerClass(signals, headers) ?? bodyClass(signals, body) ?? statusClass(signals, status, body);
}

/** The §6.1 class of an error reported inside a stream (no HTTP status of its own). */
export function streamClassOf(signals, body) {
  const hint = headerClass(signals, {}) ?? bodyClass(signals, body);
  if (hint !== null) return hint;
  const code = signals.status_in_body ? valueAt(body, signals.status_in_body) : undefined;
  if (Number.isInteger(code) && code >= 100 && code <= 599) return statusClass(signals, code, body);
  const kind = String(errorObject(body).type ?? body?.type ?? "").toLowerCase();
  for (const [name, cls] of Object.entries(signals.frames ?? {})) {
    if (name.toLowerCase() === kind) return cls;
  }
  return "server_error"; // a stream that began with a 200 and then failed: the provider's side
}

export function requestId(body, headers) {
  const rid = body !== null && typeof body === "object" ? body.request_id : undefined;
  if (typeof rid === "string" && rid) return rid;
  return header(headers, "request-id") ?? header(headers, "x-request-id");
}

export function retryAfter(body, headers) {
  for (const [name, scale] of [["retry-after-ms", 1000], ["retry-after", 1]]) {
    const raw = header(headers, name);
    if (raw !== null) {
      const n = Number(raw);
      return Number.isFinite(n) && raw.trim() !== "" ? n / scale : null;
    }
  }
  const details = errorObject(body).details;
  for (const d of Array.isArray(details) ? details : []) {
    if (String(d?.["@type"] ?? "").endsWith("google.rpc.RetryInfo")) {
      const m = /^(\d+(?:\.\d+)?)s$/.exec(String(d.retryDelay ?? ""));
      if (m) return Number(m[1]);
    }
  }
  return null;
}

/** The typed error of a recorded HTTP error response the AI SDK refused (its APICallError
 * message first: what the library made of the body). */
export function httpError(signals, status, body, headers, libraryMessage) {
  const cls = classOf(signals, status, body, headers);
  const said = providerMessage(body);
  const message = libraryMessage && said && !libraryMessage.includes(said) ? `${libraryMessage}: ${said}` : libraryMessage || said;
  return adapterError(cls, message || `HTTP ${status}`, {
    status,
    requestId: requestId(body, headers),
    retryAfter: retryAfter(body, headers),
  });
}
