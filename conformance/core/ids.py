"""The one source of ULIDs (spec §6.1), canonical tool ids (`tu_<ULID>`, §4.1) and the
canonical time format (§4.1).

Two modes: `fresh()` (the clock and the OS's randomness, for adapters minting ids at run time)
and `derived(...)` (a pure function of its inputs, so a conversion of the same input gives the
same output byte for byte). Every module that mints an id calls this one; none writes its own.
"""

from __future__ import annotations

import datetime as dt
import re

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_CROCKFORD_VALUE = {c: i for i, c in enumerate(_CROCKFORD)}
ULID_RE = re.compile(r"[0-7][0-9A-HJKMNP-TV-Z]{25}\Z")
TOOL_ID_RE = re.compile(r"tu_[0-7][0-9A-HJKMNP-TV-Z]{25}\Z")
MAX_MS = (1 << 48) - 1


def encode(value: int) -> str:
    """A 128-bit integer as a 26-character Crockford base32 ULID."""
    if not 0 <= value < 1 << 128:
        raise ValueError("a ULID is 128 bits")
    return "".join(_CROCKFORD[(value >> (5 * i)) & 31] for i in range(25, -1, -1))


def decode(ulid: str) -> int:
    """The 128-bit integer of a canonical (upper-case Crockford) ULID; KeyError otherwise."""
    value = 0
    for c in ulid:
        value = value * 32 + _CROCKFORD_VALUE[c]
    return value


def millis(ulid: str) -> int:
    """The time part of a ULID, in milliseconds since the epoch."""
    return decode(ulid) >> 80


def of(ms: int, rand: int) -> str:
    """The ULID of time part `ms` (48 bits) and 80 random bits `rand`, as given (generators
    that choose both: strategies, scripted cases)."""
    if not (0 <= ms <= MAX_MS and 0 <= rand < 1 << 80):
        raise ValueError("a ULID is 48 bits of time and 80 random bits")
    return encode((ms << 80) | rand)


def fresh() -> str:
    """A new ULID from the clock and OS randomness (never reproducible)."""
    from ulid import ULID  # function-level: python-ulid costs ~25 ms to import and only conversions mint ids

    return str(ULID())


def derived(ms: int, *parts: str | bytes | int) -> str:
    """A ULID whose time part is `ms` (clamped to 48 bits) and whose 80 random bits are a hash
    of `parts`. Same inputs, same ULID; ids derived at increasing `ms` sort in that order, and
    ids at the same `ms` need a serial among `parts` to stay distinct."""
    import hashlib  # loaded only when an id is derived (a conversion)

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


TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"
"""A canonical `created_at` (§4.1: RFC 3339, UTC, microseconds), for `strftime`/`strptime`."""


def parse_time(text: str) -> dt.datetime | None:
    """The instant of a schema-valid `created_at` (`Z` or `+00:00`, 0 to 6 fraction
    digits), None if it names no real date and time (TS115). The one reading of a
    timestamp's text: the rules and every converter read it here."""
    try:
        return dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        return None


def canonical_time(when: dt.datetime) -> str:
    """`when` (aware, in UTC) as a canonical `created_at`; years before 1000 keep 4 digits."""
    return when.strftime(TIME_FORMAT).rjust(27, "0")
