"""HTTP content codings (RFC 9110 §8.4), undone the one way every recording reader and the
cassette linter undo them: `decode_content`.

Read: `gzip` and `x-gzip` (RFC 1952; several members, as `cat a.gz b.gz` makes, are one
body, as RFC 1952 §2.2 says a file is "a series of members"), `deflate` (RFC 9110 §8.4.1.2
names the zlib format of RFC 1950, yet servers also send raw RFC 1951 deflate: both are
read), `br` (RFC 7932, with the `brotli` package), `zstd` (RFC 8878, with the `zstandard`
package; several frames are one body, skippable frames skipped) and `identity`. A list such
as `gzip, br` is undone last coding first: RFC 9110 §8.4, "If one or more encodings have
been applied to a representation, the sender that applied the encodings MUST generate a
Content-Encoding header field that lists the content codings in the order in which they
were applied."

Every decoder is bounded: at most `MAX_INFLATED` bytes come out of one body (a few kilobytes
of gzip or zstd may stand for gigabytes), and a body past it is refused, not read. A
truncated stream, bytes after the stream's end and a coding not read here are refused too,
each with one line naming the body (`what`) and the coding. The errors are
`ContentCodingError` (a ValueError: the readers report it as the cassette's error) and,
where the package a coding needs is not installed, `MissingDecoder` (an InputError: the
run stops, exit 2, with the package to install).

It lives in `wire` (HTTP's own vocabulary) so that both the suite's readers and the cassette
linter, which sits below them, use this one definition; `suite.content_coding` is the
readers' name for it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from types import ModuleType

from ..core.errors import InputError

MAX_INFLATED = 64 * 1024 * 1024
"""The most bytes one decoded body may hold (64 MiB); past it the body is refused."""

CODINGS = ("gzip", "x-gzip", "deflate", "br", "zstd", "identity")
"""The content codings read here (RFC 9110 §8.4.1 and the IANA registry's `br`, `zstd`)."""

EXTRA = "turnspec[recordings]"
"""The optional extra that installs the decoders of `br` and `zstd`."""

_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_ZSTD_CHUNK = 256  # input bytes fed per call: a zstd RLE block turns 4 bytes into 128 KiB
_ZSTD_MAX_WINDOW = (
    1 << 27
)  # zstd's own default limit (128 MiB of window memory); RFC 9659 §3 keeps HTTP encoders within 8 MB


class ContentCodingError(ValueError):
    """A body that is not what its content coding says, inflates past the bound, or names a
    coding not read here. One line."""


class TooLarge(ContentCodingError):
    """A body that decodes past `MAX_INFLATED` bytes (a decompression bomb, or just too big)."""


class MissingDecoder(InputError):
    """The package that decodes a coding (`br`: brotli, `zstd`: zstandard) is not installed."""


def codings_of(header: str) -> list[str]:
    """The codings a Content-Encoding value lists, lower-cased, in the order applied."""
    return [c.strip().lower() for c in header.split(",") if c.strip()]


def decode_content(raw: bytes, coding: str, what: str) -> bytes:
    """`raw` with the content coding(s) `coding` (a Content-Encoding value) undone, last
    applied first. An empty body is empty whatever its coding. Raises ContentCodingError
    (one line naming `what` and the coding) or MissingDecoder."""
    out = raw
    for c in reversed(codings_of(coding)):
        if not out:
            return out
        out = _decoder(c, what)(out, what)
    return out


def carries_signature(raw: bytes, coding: str) -> bool | None:
    """Whether `raw` starts the way `coding` always starts (gzip: its magic number, zstd: its
    frame magic, deflate: a zlib header), False when it cannot be so coded, None where the
    coding has no signature (`br`, raw deflate) or is not one of those."""
    c = coding.strip().lower()
    if c in ("gzip", "x-gzip"):
        return raw[:2] == _GZIP_MAGIC
    if c == "zstd":
        return raw[:4] == _ZSTD_MAGIC or _skippable(raw)
    if c == "deflate" and _zlib_header(raw):
        return True
    return None


def sniff(raw: bytes) -> str | None:
    """The coding `raw`'s first bytes name by themselves (gzip, zstd, zlib deflate), or None."""
    return next((c for c in ("gzip", "zstd", "deflate") if carries_signature(raw, c)), None)


def _decoder(coding: str, what: str) -> Callable[[bytes, str], bytes]:
    decoders: dict[str, Callable[[bytes, str], bytes]] = {
        "gzip": _gunzip,
        "x-gzip": _gunzip,
        "deflate": _inflate,
        "br": _unbrotli,
        "zstd": _unzstd,
        "identity": lambda raw, _what: raw,
    }
    if coding not in decoders:
        raise ContentCodingError(
            f"{what}: content coding {coding!r} is not one read here ({', '.join(CODINGS)}); not read"
        )
    return decoders[coding]


def _too_big(what: str, coding: str, limit: int | None = None) -> TooLarge:
    return TooLarge(f"{what} ({coding}) inflates past {MAX_INFLATED if limit is None else limit} bytes; not read")


def _gunzip(raw: bytes, what: str) -> bytes:
    return gunzip(raw, what)


def gunzip(raw: bytes, what: str, limit: int | None = None) -> bytes:
    """Every gzip member of `raw`, one after another (RFC 1952 §2.2), at most `limit` bytes in
    all (default `MAX_INFLATED`: a body's coding; a gzip-compressed recording file,
    `recording_files.unwrap`, has its own)."""
    limit = MAX_INFLATED if limit is None else limit
    out: list[bytes] = []
    size, rest = 0, raw
    while rest:
        if rest[:2] != _GZIP_MAGIC:
            raise ContentCodingError(
                f"{what} (gzip): {'bytes after the end of the gzip stream' if out else 'not gzip (no gzip header)'}"
            )
        chunk, rest = _zlib_stream(rest, 16 + zlib.MAX_WBITS, limit - size, what, "gzip", limit)
        out.append(chunk)
        size += len(chunk)
    return b"".join(out)


def _zlib_header(raw: bytes) -> bool:
    """RFC 1950 §2.2: CM 8 (deflate), CINFO at most 7, and CMF*256 + FLG a multiple of 31."""
    return len(raw) >= 2 and raw[0] & 0x0F == 8 and raw[0] >> 4 <= 7 and ((raw[0] << 8) | raw[1]) % 31 == 0


def _inflate(raw: bytes, what: str) -> bytes:
    """zlib-wrapped deflate where the bytes open with a zlib header, else raw deflate (a zlib
    header that does not decode is tried as raw deflate too, since raw deflate has none; the
    zlib reading's error is the one reported when neither reads)."""
    tries = (zlib.MAX_WBITS, -zlib.MAX_WBITS) if _zlib_header(raw) else (-zlib.MAX_WBITS,)
    first: ContentCodingError | None = None
    for wbits in tries:
        try:
            out, rest = _zlib_stream(raw, wbits, MAX_INFLATED, what, "deflate")
        except TooLarge:
            raise
        except ContentCodingError as exc:
            first = first or exc
            continue
        if not rest:
            return out
        first = first or ContentCodingError(f"{what} (deflate): bytes after the end of the deflate stream")
    assert first is not None
    raise first


def _zlib_stream(
    raw: bytes, wbits: int, room: int, what: str, coding: str, limit: int | None = None
) -> tuple[bytes, bytes]:
    """One zlib/gzip/raw-deflate stream from the start of `raw`, at most `room` bytes of it
    (of `limit` in all): its bytes and what follows it."""
    d = zlib.decompressobj(wbits)
    try:
        out = d.decompress(raw, room + 1)
    except zlib.error as exc:
        raise ContentCodingError(f"{what} is not {coding} ({exc})") from None
    if len(out) > room or d.unconsumed_tail:
        raise _too_big(what, coding, limit)
    if not d.eof:
        raise ContentCodingError(f"{what} ({coding}): the stream is truncated (it ends before its end marker)")
    return out, d.unused_data


def _package(name: str, coding: str, what: str) -> ModuleType:
    """The decoder package `name`, or MissingDecoder saying what to install."""
    import importlib  # loaded only when a br or zstd body is read

    try:
        return importlib.import_module(name)
    except ImportError:
        raise MissingDecoder(
            f"{what} is {coding}-coded, which needs the Python package {name!r}: "
            f"pip install '{EXTRA}' (or pip install {name})"
        ) from None


def _unbrotli(raw: bytes, what: str) -> bytes:
    brotli = _package("brotli", "br", what)
    d = brotli.Decompressor()
    try:
        out = d.process(raw, output_buffer_limit=MAX_INFLATED + 1)
    except TypeError:  # brotli before 1.2 cannot bound its output
        raise MissingDecoder(f"{what} is br-coded, which needs brotli>=1.2: pip install '{EXTRA}'") from None
    except brotli.error as exc:
        raise ContentCodingError(f"{what} is not br ({exc}; or bytes after the end of the br stream)") from None
    if len(out) > MAX_INFLATED or not d.can_accept_more_data():
        raise _too_big(what, "br")
    if not d.is_finished():
        raise ContentCodingError(f"{what} (br): the stream is truncated (it ends before its last meta-block)")
    return bytes(out)


def _skippable(raw: bytes) -> bool:
    """RFC 8878 §3.1.2: a skippable frame's magic is 0x184D2A50 to 0x184D2A5F, little-endian."""
    return len(raw) >= 8 and raw[1:4] == b"\x2a\x4d\x18" and raw[0] & 0xF0 == 0x50


def _unzstd(raw: bytes, what: str) -> bytes:
    """Every zstd frame of `raw` (RFC 8878 §3.1: "a sequence of one or more frames")."""
    zstandard = _package("zstandard", "zstd", what)
    d = zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW)
    out: list[bytes] = []
    size, rest = 0, raw
    while rest:
        if _skippable(rest):
            end = 8 + int.from_bytes(rest[4:8], "little")
            if end > len(rest):
                raise ContentCodingError(f"{what} (zstd): the stream is truncated (inside a skippable frame)")
            rest = rest[end:]
            continue
        if rest[:4] != _ZSTD_MAGIC:
            raise ContentCodingError(
                f"{what} (zstd): {'bytes after the end of the zstd stream' if out else 'not zstd (no frame magic)'}"
            )
        chunk, rest = _zstd_frame(d, rest, MAX_INFLATED - size, what, zstandard.ZstdError)
        out.append(chunk)
        size += len(chunk)
    return b"".join(out)


def _zstd_frame(d: object, raw: bytes, room: int, what: str, error: type[Exception]) -> tuple[bytes, bytes]:
    """One zstd frame from the start of `raw`, fed a little at a time so that no call makes
    more than a few MiB past `room`: its bytes and what follows it."""
    o = d.decompressobj()  # type: ignore[attr-defined]
    parts: list[bytes] = []
    size = 0
    for i in range(0, len(raw), _ZSTD_CHUNK):
        try:
            part = o.decompress(raw[i : i + _ZSTD_CHUNK])
        except error as exc:
            raise ContentCodingError(f"{what} is not zstd ({exc})") from None
        parts.append(part)
        size += len(part)
        if size > room:
            raise _too_big(what, "zstd")
        if o.eof:
            return b"".join(parts), o.unused_data + raw[i + _ZSTD_CHUNK :]
    raise ContentCodingError(f"{what} (zstd): the stream is truncated (it ends before its last block)")
