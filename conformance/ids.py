"""The one source of ULIDs (spec §6.1) and canonical tool ids (`tu_<ULID>`, §4.1).

Two modes: `fresh()` (the clock and the OS's randomness, for adapters minting ids at run time)
and `derived(...)` (a pure function of its inputs, so a conversion of the same input gives the
same output byte for byte). Every module that mints an id calls this one; none writes its own.
"""

from __future__ import annotations

import hashlib
import re

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ULID_RE = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}\Z")
TOOL_ID_RE = re.compile(r"tu_[0-7][0-9A-HJKMNP-TV-Z]{25}\Z")
MAX_MS = (1 << 48) - 1


def encode(value: int) -> str:
    """A 128-bit integer as a 26-character Crockford base32 ULID."""
    if not 0 <= value < 1 << 128:
        raise ValueError("a ULID is 128 bits")
    return "".join(_CROCKFORD[(value >> (5 * i)) & 31] for i in range(25, -1, -1))


def fresh() -> str:
    """A new ULID from the clock and OS randomness (never reproducible)."""
    from ulid import ULID  # function-level: python-ulid costs ~25 ms to import and only conversions mint ids

    return str(ULID())


def derived(ms: int, *parts: str | bytes | int) -> str:
    """A ULID whose time part is `ms` (clamped to 48 bits) and whose 80 random bits are a hash
    of `parts`. Same inputs, same ULID; ids derived at increasing `ms` sort in that order, and
    ids at the same `ms` need a serial among `parts` to stay distinct."""
    h = hashlib.blake2b(digest_size=10)
    for p in parts:
        b = p if isinstance(p, bytes) else str(p).encode()
        h.update(len(b).to_bytes(8, "big"))
        h.update(b)
    ms = min(max(ms, 0), MAX_MS)
    return encode((ms << 80) | int.from_bytes(h.digest(), "big"))


def fresh_tool_id() -> str:
    return "tu_" + fresh()


def derived_tool_id(ms: int, *parts: str | bytes | int) -> str:
    return "tu_" + derived(ms, *parts)


def is_ulid(value: str) -> bool:
    return ULID_RE.match(value) is not None


def is_tool_id(value: str) -> bool:
    return TOOL_ID_RE.match(value) is not None
