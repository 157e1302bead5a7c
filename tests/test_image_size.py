"""Image dimensions for token estimates (contract §6.5 estimates; issue 29: WebP VP8/VP8L
fell back to a flat 765 tokens). The oracle is Pillow, which writes real files of each
format: what the estimator reads from the header must be the size Pillow encoded."""

from __future__ import annotations

import base64
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.adapters.estimate import image_size, openai_image_tokens

Image = pytest.importorskip("PIL.Image", reason="Pillow (the [test] extra) writes the reference images")


def encoded(fmt: str, w: int, h: int, **save: object) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (200, 30, 30)).save(buf, format=fmt, **save)
    return base64.b64encode(buf.getvalue()).decode()


@settings(max_examples=30, deadline=None)
@given(w=st.integers(1, 3000), h=st.integers(1, 3000), fmt=st.sampled_from(["PNG", "GIF", "JPEG"]))
def test_png_gif_jpeg(w: int, h: int, fmt: str) -> None:
    assert image_size(encoded(fmt, w, h)) == (w, h)


@settings(max_examples=30, deadline=None)
@given(w=st.integers(1, 3000), h=st.integers(1, 3000), lossless=st.booleans())
def test_webp_lossy_and_lossless(w: int, h: int, lossless: bool) -> None:
    """Pillow writes a simple WebP (`VP8 ` or `VP8L` first chunk) unless asked for more."""
    data = encoded("WEBP", w, h, lossless=lossless)
    chunk = base64.b64decode(data)[12:16]
    assert chunk == (b"VP8L" if lossless else b"VP8 ")
    assert image_size(data) == (w, h)


def test_webp_extended() -> None:
    data = encoded("WEBP", 640, 480, exif=b"Exif\x00\x00MM\x00*\x00\x00\x00\x08\x00\x00")
    assert base64.b64decode(data)[12:16] == b"VP8X"
    assert image_size(data) == (640, 480)


def test_a_webp_estimate_uses_its_size() -> None:
    """A 64x64 WebP is one 512-pixel tile (85 + 170), not the unknown size's 765."""
    small = {"type": "image", "source": {"kind": "base64", "media_type": "image/webp", "data": encoded("WEBP", 64, 64)}}
    assert openai_image_tokens(small) == 85 + 170
