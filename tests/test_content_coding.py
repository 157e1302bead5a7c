"""`content_coding.decode_content`, the one content decoder of every recording reader and the
cassette linter: each coding RFC 9110 §8.4 and the IANA registry name that recorders meet,
round-tripped with bodies made by the real compressors (Python's gzip and zlib, the brotli and
zstandard packages), never by the decoder under test; coding lists undone in reverse order;
bombs, truncated streams, trailing junk and unknown codings refused with one line."""

from __future__ import annotations

import gzip
import sys
import tracemalloc
import zlib

import pytest

from conformance.suite import content_coding as suite_coding
from conformance.wire import content_coding
from conformance.wire.content_coding import ContentCodingError, MissingDecoder, decode_content

brotli = pytest.importorskip("brotli", reason="the [recordings] extra (brotli) is not installed")
zstandard = pytest.importorskip("zstandard", reason="the [recordings] extra (zstandard) is not installed")

BODY = (b'{"id": "msg_01", "content": [{"type": "text", "text": "Hello there."}]}\n' * 200) + bytes(range(256))


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def zstd(data: bytes) -> bytes:
    return zstandard.ZstdCompressor().compress(data)


ENCODERS = {
    "gzip": gzip.compress,
    "x-gzip": gzip.compress,
    "deflate": zlib.compress,  # RFC 9110 §8.4.1.2: the zlib format
    "br": brotli.compress,
    "zstd": zstd,
    "identity": lambda data: data,
}


@pytest.mark.parametrize("coding", sorted(ENCODERS))
def test_each_coding_round_trips_a_body_its_real_compressor_made(coding):
    coded = ENCODERS[coding](BODY)
    assert coding == "identity" or coded != BODY
    assert decode_content(coded, coding, "response body") == BODY
    assert decode_content(coded, f"  {coding.upper()} ", "response body") == BODY  # case and spaces are no matter


def test_raw_deflate_is_read_as_servers_send_it_too():
    assert decode_content(raw_deflate(BODY), "deflate", "response body") == BODY
    assert decode_content(raw_deflate(b"a"), "deflate", "response body") == b"a"  # 3 bytes, no header at all


def test_several_gzip_members_and_zstd_frames_are_one_body():
    """RFC 1952 §2.2: a gzip file is "a series of members"; RFC 8878 §3.1: zstd content is a
    sequence of frames, skippable frames among them."""
    half = len(BODY) // 2
    members = gzip.compress(BODY[:half]) + gzip.compress(BODY[half:])
    assert decode_content(members, "gzip", "response body") == BODY
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"skip"
    frames = zstd(BODY[:half]) + skippable + zstd(BODY[half:])
    assert decode_content(frames, "zstd", "response body") == BODY


def test_a_coding_list_is_undone_last_applied_first():
    """RFC 9110 §8.4: the header lists the codings "in the order in which they were applied"."""
    assert decode_content(brotli.compress(gzip.compress(BODY)), "gzip, br", "response body") == BODY
    assert decode_content(gzip.compress(zstd(BODY)), "zstd,gzip", "response body") == BODY
    assert decode_content(zlib.compress(BODY), "identity, deflate", "response body") == BODY
    with pytest.raises(ContentCodingError, match=r"\(gzip\): not gzip"):  # the wrong order: gzip is undone first
        decode_content(brotli.compress(gzip.compress(BODY)), "br, gzip", "response body")


def test_an_empty_body_is_empty_whatever_its_coding():
    for coding in (*ENCODERS, "gzip, br", "compress"):
        assert decode_content(b"", coding, "response body") == b""


TRUNCATED = {
    "gzip": gzip.compress(BODY)[:-6],  # the trailer cut
    "deflate": zlib.compress(BODY)[:-10],
    "br": brotli.compress(BODY)[:-4],
    "zstd": zstd(BODY)[:-5],
}


@pytest.mark.parametrize("coding", sorted(TRUNCATED))
def test_a_truncated_stream_is_refused_with_one_line(coding):
    with pytest.raises(ContentCodingError) as exc:
        decode_content(TRUNCATED[coding], coding, "response body")
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith("response body") and coding in msg, msg
    assert "truncated" in msg or f"is not {coding}" in msg


def test_a_zstd_skippable_frame_cut_short_is_refused():
    skippable = b"\x50\x2a\x4d\x18" + (100).to_bytes(4, "little") + b"short"
    with pytest.raises(ContentCodingError, match=r"\(zstd\): the stream is truncated \(inside a skippable frame\)"):
        decode_content(zstd(BODY) + skippable, "zstd", "response body")


def test_raw_deflate_cut_short_is_refused():
    with pytest.raises(ContentCodingError, match=r"response body \(deflate\): the stream is truncated"):
        decode_content(raw_deflate(BODY)[:-10], "deflate", "response body")


JUNK = {
    "gzip": (gzip.compress(BODY) + b"junk", "bytes after the end of the gzip stream"),
    "deflate": (zlib.compress(BODY) + b"junk", "bytes after the end of the deflate stream"),
    "zstd": (zstd(BODY) + b"junk", "bytes after the end of the zstd stream"),
    "br": (brotli.compress(BODY) + b"junk", "is not br"),
}


@pytest.mark.parametrize("coding", sorted(JUNK))
def test_junk_after_the_stream_is_refused(coding):
    raw, why = JUNK[coding]
    with pytest.raises(ContentCodingError) as exc:
        decode_content(raw, coding, "response body")
    assert why in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("coding", ["compress", "x-compress", "exi", "aes128gcm", "gzip, lzma"])
def test_an_unknown_coding_is_refused_naming_it(coding):
    with pytest.raises(ContentCodingError) as exc:
        decode_content(b"\x1f\x8b\x08 something", coding, "request body")
    msg = str(exc.value)
    unknown = coding.split(",")[-1].strip()
    assert msg.startswith(f"request body: content coding {unknown!r} is not one read here") and "\n" not in msg


def test_bytes_that_are_not_the_coding_are_refused():
    for coding in ("gzip", "zstd", "br", "deflate"):
        with pytest.raises(ContentCodingError, match=coding):
            decode_content(b"\xff\xfe\x00 not compressed at all \x80", coding, "response body")


BOMB = 64 * 1024 * 1024 + 1  # one byte past the default bound


@pytest.mark.parametrize(
    "coding,make",
    [
        ("gzip", lambda n: gzip.compress(b"\0" * n, 1)),
        ("deflate", lambda n: zlib.compress(b"\0" * n, 1)),
        ("br", lambda n: brotli.compress(b"\0" * n, quality=1)),
        ("zstd", lambda n: zstandard.ZstdCompressor(level=1).compress(b"\0" * n)),
    ],
)
def test_a_decompression_bomb_is_refused_in_bounded_memory(coding, make):
    bomb = make(BOMB)
    assert len(bomb) < 1024 * 1024  # a small file...
    tracemalloc.start()
    try:
        with pytest.raises(ContentCodingError) as exc:
            decode_content(bomb, coding, "response body")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(exc.value) == f"response body ({coding}) inflates past {64 * 1024 * 1024} bytes; not read"
    assert peak < 3 * 64 * 1024 * 1024  # ...read no further than the bound (and one chunk past it)
    assert len(decode_content(make(BOMB - 1), coding, "response body")) == BOMB - 1  # the bound itself is read


def test_the_bound_is_over_the_whole_body_not_each_member(monkeypatch):
    monkeypatch.setattr(content_coding, "MAX_INFLATED", 1000)
    members = gzip.compress(b"a" * 600) + gzip.compress(b"b" * 600)
    with pytest.raises(ContentCodingError, match=r"inflates past 1000 bytes"):
        decode_content(members, "gzip", "response body")
    frames = zstd(b"a" * 600) + zstd(b"b" * 600)
    with pytest.raises(ContentCodingError, match=r"inflates past 1000 bytes"):
        decode_content(frames, "zstd", "response body")


@pytest.mark.parametrize("coding,package", [("br", "brotli"), ("zstd", "zstandard")])
def test_a_missing_decoder_says_which_package_to_install(monkeypatch, coding, package):
    monkeypatch.setitem(sys.modules, package, None)  # import then raises ImportError
    with pytest.raises(MissingDecoder) as exc:
        decode_content(ENCODERS[coding](BODY), coding, "response body")
    msg = str(exc.value)
    assert f"needs the Python package {package!r}" in msg and "pip install 'turnspec[recordings]'" in msg
    assert "\n" not in msg
    assert decode_content(gzip.compress(BODY), "gzip", "response body") == BODY  # the others need nothing


def test_the_readers_and_the_linter_share_one_definition():
    assert suite_coding.decode_content is content_coding.decode_content
    from conformance.wire import cassette_lint

    assert cassette_lint.decode_content is content_coding.decode_content
