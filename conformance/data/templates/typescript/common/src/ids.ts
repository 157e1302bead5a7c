// Ids (canonical §6.1, §6.2): ULIDs, canonical tool ids `tu_<ULID>`, and the per-session
// bidirectional map between canonical tool ids and the provider's.

import { createHash, randomBytes } from "node:crypto";

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastTime = -1;
let lastRandom = new Uint8Array(10);

/** A ULID (48 bits of milliseconds, 80 random bits), monotonic within this process. */
export function newUlid(): string {
  return encodeUlid(nextTime(), lastRandom);
}

function nextTime(): number {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    lastRandom = new Uint8Array(randomBytes(10));
  } else {
    // same millisecond (or a clock step back): the previous random part plus one
    let i = lastRandom.length - 1;
    while (i >= 0 && lastRandom[i] === 0xff) {
      lastRandom[i] = 0;
      i -= 1;
    }
    if (i < 0) {
      lastTime += 1; // 2^80 ids in one millisecond: borrow the next one
    } else {
      lastRandom[i] = (lastRandom[i] ?? 0) + 1;
    }
  }
  return lastTime;
}

/**
 * A canonical tool id derived from `parts` (a call the API gave no id: canonical §6.2 wants
 * one). Same parts, same id: its time part is 0 and its 80 other bits a SHA-256 of the parts,
 * each prefixed by its length so that no two lists of parts spell the same bytes.
 */
export function derivedToolId(...parts: string[]): string {
  const h = createHash("sha256");
  for (const p of parts) {
    const b = Buffer.from(p, "utf8");
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(b.length));
    h.update(len);
    h.update(b);
  }
  return "tu_" + encodeUlid(0, new Uint8Array(h.digest().subarray(0, 10)));
}

/** 48 bits of milliseconds and 80 bits as 26 Crockford base32 digits. */
function encodeUlid(time: number, random: Uint8Array): string {
  let value = BigInt(time);
  for (const byte of random) {
    value = (value << 8n) | BigInt(byte);
  }
  let out = "";
  for (let k = 0; k < 26; k += 1) {
    out = CROCKFORD[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/** A canonical tool call id (canonical §6.2). */
export function newToolId(): string {
  return "tu_" + newUlid();
}

/**
 * canonical `tu_<ULID>` <-> provider tool id, for one session (canonical §6.2). Injective
 * both ways: `bind` refuses a pair when either side is already mapped to something else.
 */
export class ToolIdMap {
  private readonly toProvider = new Map<string, string>();
  private readonly toCanonical = new Map<string, string>();

  constructor(private readonly newProviderId: () => string) {}

  bind(canonicalId: string, providerId: string): void {
    const p = this.toProvider.get(canonicalId);
    const c = this.toCanonical.get(providerId);
    if (p === providerId && c === canonicalId) {
      return;
    }
    if (p !== undefined || c !== undefined) {
      throw new RangeError(`cannot bind ${canonicalId} <-> ${providerId}: one side is mapped`);
    }
    this.toProvider.set(canonicalId, providerId);
    this.toCanonical.set(providerId, canonicalId);
  }

  /** Parsing wire -> canonical: the canonical id of a provider id, minted on first sight. */
  canonicalFor(providerId: string): string {
    let found = this.toCanonical.get(providerId);
    if (found === undefined) {
      found = newToolId();
      this.bind(found, providerId);
    }
    return found;
  }

  /** Rendering canonical -> wire: the provider id of a canonical id, minted on first use. */
  providerFor(canonicalId: string): string {
    let found = this.toProvider.get(canonicalId);
    if (found === undefined) {
      do {
        found = this.newProviderId();
      } while (this.toCanonical.has(found));
      this.bind(canonicalId, found);
    }
    return found;
  }

  getProvider(canonicalId: string): string | null {
    return this.toProvider.get(canonicalId) ?? null;
  }

  getCanonical(providerId: string): string | null {
    return this.toCanonical.get(providerId) ?? null;
  }

  pairs(): [string, string][] {
    return [...this.toProvider.entries()];
  }
}
