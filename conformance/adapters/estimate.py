"""Offline input-token estimates (adapter contract §3.1 `estimate_input_tokens`).

The contract allows "local tokenizer or heuristic". Real tokenizers need vocabulary files
fetched at run time (tiktoken) or are not published (Anthropic), so this is a heuristic
calibrated on recorded `usage.input_tokens`: words of English text cost about 1.3
tokens, punctuation one each, long opaque strings (base64, ids) about one per 3 characters,
plus per-message and per-tool framing that each adapter sets. The conformance suite
states the tolerance it holds estimates to (TC701).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
from collections.abc import Mapping
from typing import Any

from .protocol import accepts_keyword

# punctuation runs merge in BPE vocabularies (`":"`, `"},{`), so up to three count as one
_PIECE = re.compile(r"[A-Za-z]+|[0-9]+|[^\sA-Za-z0-9]{1,3}")


def text_tokens(text: str) -> int:
    """Approximate BPE tokens of `text` (cl100k/Claude-like vocabularies)."""
    n = 0
    for m in _PIECE.finditer(text):
        piece = m.group()
        size = len(piece)
        if piece.isalpha():
            n += 1 if size <= 6 else (size + 5) // 6 + (1 if size > 12 else 0)
        elif piece.isdigit():
            n += (size + 2) // 3
        else:
            n += 1
    return n


def json_tokens(value: Any) -> int:
    return text_tokens(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def image_size(data_b64: str) -> tuple[int, int] | None:
    """(width, height) from a base64 PNG, GIF, WebP or JPEG header; None when unknown."""
    try:
        head = base64.b64decode(data_b64[:65536] + "=" * (-len(data_b64[:65536]) % 4), validate=False)
    except (binascii.Error, ValueError):
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) >= 24:
        w, h = struct.unpack(">II", head[16:24])
        return int(w), int(h)
    if head[:6] in (b"GIF87a", b"GIF89a") and len(head) >= 10:
        w, h = struct.unpack("<HH", head[6:10])
        return int(w), int(h)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":  # RFC 9649: the first chunk says the size
        return _webp_size(head)
    if head[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(head):
            if head[i] != 0xFF:
                i += 1
                continue
            marker = head[i + 1]
            if marker in (
                0xC0,
                0xC1,
                0xC2,
                0xC3,
                0xC5,
                0xC6,
                0xC7,
                0xC9,
                0xCA,
                0xCB,
                0xCD,
                0xCE,
                0xCF,
            ):
                h, w = struct.unpack(">HH", head[i + 5 : i + 9])
                return int(w), int(h)
            seg = struct.unpack(">H", head[i + 2 : i + 4])[0]
            i += 2 + seg
    return None


def _webp_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) of a WebP file (RFC 9649, section 2.5-2.7), from its first chunk:
    `VP8X` (extended: 24-bit width and height minus one), `VP8 ` (lossy: a VP8 key frame,
    whose start code 9D 01 2A is followed by 14-bit width and height), or `VP8L`
    (lossless: signature 2F, then 14-bit width and height minus one)."""
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        return 1 + int.from_bytes(head[24:27], "little"), 1 + int.from_bytes(head[27:30], "little")
    if chunk == b"VP8 " and len(head) >= 30 and head[23:26] == b"\x9d\x01\x2a":
        w, h = struct.unpack("<HH", head[26:30])
        return int(w) & 0x3FFF, int(h) & 0x3FFF
    if chunk == b"VP8L" and len(head) >= 25 and head[20] == 0x2F:
        bits = int.from_bytes(head[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    return None


def image_block_size(block: Mapping[str, Any]) -> tuple[int, int] | None:
    source = block.get("source") or {}
    if source.get("kind") == "base64":
        return image_size(str(source.get("data", "")))
    return None


def openai_image_tokens(block: Mapping[str, Any]) -> int:
    """OpenAI's documented image cost at detail "high": fit in 2048x2048, shortest side to
    768, then 85 + 170 per 512-pixel tile; 765 (a 1024x1024 image) when the size is unknown.
    Chat Completions and Responses price images the same way."""
    size = image_block_size(block)
    if size is None:
        return 765
    scale = min(1.0, 2048 / max(*size, 1))
    w, h = size[0] * scale, size[1] * scale
    scale = min(1.0, 768 / max(1, min(w, h)))
    tiles = (-(-int(w * scale) // 512)) * (-(-int(h * scale) // 512))
    return 85 + 170 * tiles


def estimate_for_model(
    adapter: Any, messages: list[Any], tools: list[Any], model: str | None, tool_choice: Any = None
) -> int:
    """`adapter.estimate_input_tokens(messages, tools)`, told `model` when the estimator takes
    a `model` keyword: an optional extension of the protocol, for providers whose counts
    differ by model (Gemini's thought signatures). Likewise `tool_choice` (the request's, as
    its wire gives it), for providers whose hidden tool prompt differs by it (Anthropic's
    "Tool use pricing and tokens" table: Claude 3 Opus 530 tokens for `auto`, 281 for `any`,
    `tool`). Estimators without them are called as the protocol says."""
    fn = adapter.estimate_input_tokens
    kw: dict[str, Any] = {}
    if model is not None and accepts_keyword(fn, "model"):
        kw["model"] = model
    if tool_choice is not None and accepts_keyword(fn, "tool_choice"):
        kw["tool_choice"] = tool_choice
    return int(fn(messages, tools, **kw))
