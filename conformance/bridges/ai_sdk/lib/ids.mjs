// Ids (canonical spec §6.1, §6.2): ULIDs, canonical tool ids `tu_<ULID>`, and the
// per-session bidirectional map canonical id <-> provider tool id (the child's: its parses
// use it, docs/exec-protocol.md `tool_id_map`).

import { randomBytes } from "node:crypto";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
let lastMs = -1;
let lastRandom = 0n;

/** A fresh ULID: 48 bits of milliseconds, 80 random bits; monotonic within a millisecond. */
export function ulid() {
  const ms = Date.now();
  if (ms === lastMs) {
    lastRandom = (lastRandom + 1n) & ((1n << 80n) - 1n);
  } else {
    lastMs = ms;
    lastRandom = BigInt("0x" + randomBytes(10).toString("hex"));
  }
  let value = (BigInt(ms) << 80n) | lastRandom;
  let out = "";
  for (let i = 0; i < 26; i++) {
    out = CROCKFORD[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

export const newToolId = () => `tu_${ulid()}`;

/** RFC 3339 UTC with microseconds, as canonical `created_at` is written (spec §4.1). */
export function nowTimestamp() {
  return new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** The per-session map (spec §6.2), injective both ways: `bind` refuses a pair that would
 * give one id two partners. */
export class ToolIdMap {
  constructor(mint) {
    this.mint = mint;
    this.toProvider = new Map();
    this.toCanonical = new Map();
  }

  bind(canonical, provider) {
    const p = this.toProvider.get(canonical);
    const c = this.toCanonical.get(provider);
    if (p === provider && c === canonical) return;
    if (p !== undefined || c !== undefined) {
      throw new RangeError(`cannot bind ${canonical} <-> ${provider}: one side is mapped`);
    }
    this.toProvider.set(canonical, provider);
    this.toCanonical.set(provider, canonical);
  }

  canonicalFor(provider) {
    let found = this.toCanonical.get(provider);
    if (found === undefined) {
      found = newToolId();
      this.bind(found, provider);
    }
    return found;
  }

  providerFor(canonical) {
    let found = this.toProvider.get(canonical);
    if (found === undefined) {
      do found = this.mint();
      while (this.toCanonical.has(found));
      this.bind(canonical, found);
    }
    return found;
  }

  getProvider(canonical) {
    return this.toProvider.get(canonical) ?? null;
  }

  getCanonical(provider) {
    return this.toCanonical.get(provider) ?? null;
  }

  pairs() {
    return [...this.toProvider.entries()];
  }
}

/** One map per session id. */
export class ToolIdMaps {
  constructor(mint) {
    this.mint = mint;
    this.maps = new Map();
  }

  of(sessionId) {
    let m = this.maps.get(sessionId);
    if (m === undefined) {
      m = new ToolIdMap(this.mint);
      this.maps.set(sessionId, m);
    }
    return m;
  }
}
