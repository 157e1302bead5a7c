"""The recording readers' content decoding: `decode_content` (RFC 9110 §8.4's codings,
bounded) as `conformance.wire.content_coding` declares it, below both the readers here and
the cassette linter in `wire`, which uses the same one (the layers point down only)."""

from __future__ import annotations

from ..wire.content_coding import (
    CODINGS,
    EXTRA,
    ContentCodingError,
    MissingDecoder,
    TooLarge,
    carries_signature,
    codings_of,
    decode_content,
    sniff,
)

__all__ = [
    "CODINGS",
    "EXTRA",
    "ContentCodingError",
    "MissingDecoder",
    "TooLarge",
    "carries_signature",
    "codings_of",
    "decode_content",
    "sniff",
]
