"""Block I/O of the fast path: whole lines read in blocks (`read_blocks`), a block decoded
as one batch (`_decode_block`), the proofs a decoded batch still owes (`OpaqueCheck`: raw
strings are strings in UTF-8; `_maybe_deep`, `_shallow`: depth), and a failing block cut
into pieces and lines."""

from __future__ import annotations

import operator
import re
import typing
from collections.abc import Callable, Iterator
from itertools import accumulate, chain
from operator import itemgetter
from typing import IO, Any

import msgspec

from ....core.jsonio import skip_rest_of_line
from ..fastmodel import RAW_SHAPES, RawModel
from .compiled import function as _compiled

# `OpaqueCheck.ok_py` compiled, or None
_OPAQUE_OK = _compiled("opaque_ok")

BLOCK_BYTES = 1 << 18  # bytes read at a time: their whole lines are decoded, re-encoded and compared as one batch
PIECE_BYTES = 1 << 16  # a block the batch proof fails on is located in pieces of this size (`local_block`)


def read_blocks(f: IO[bytes], max_line: int, block_bytes: Callable[[], int] | None = None) -> Iterator[bytes | None]:
    """The whole lines of `f` in blocks of about `BLOCK_BYTES`, or of what `block_bytes`
    says before each read (the last line of the input may lack its newline), or None for
    a line longer than `max_line`, skipped as `read_jsonl` skips it; no more than
    `max_line` plus one block is ever held. Lines are not counted here
    (`FastPath.local_block` says how many a block held: the batch proof learns it for
    free, and counting newlines costs a third of the reading)."""
    buf = b""
    while True:
        # a line inside one read is never too long
        size = max(1, min(BLOCK_BYTES if block_bytes is None else block_bytes(), max_line))
        chunk = f.read(size)
        if not chunk:
            break
        cut = chunk.rfind(b"\n")
        if cut < 0:
            buf = buf + chunk if buf else chunk
            if len(buf) > max_line:  # a line longer than the limit, not held
                skip_rest_of_line(f)
                buf = b""
                yield None
            continue
        # the block is the held start of its first line and the read up to its last
        # newline, copied once (a view of the read, joined)
        if cut + 1 == len(chunk):
            block = buf + chunk if buf else chunk
            buf = b""
        else:
            block = b"".join((buf, memoryview(chunk)[: cut + 1]))
            buf = chunk[cut + 1 :]
        head = block.find(b"\n")
        if head > max_line:  # the first line began in an earlier read and is too long
            block = block[head + 1 :]
            yield None
            if not block:
                continue
        yield block
    if buf:  # the last line, with no newline
        yield buf


def _decode_block(decoder: msgspec.json.Decoder[Any], block: bytes) -> list[Any] | int:
    """The Structs of the lines of `block`, or the index of the first line that does not
    decode (-1 when it cannot be told)."""
    try:
        return decoder.decode_lines(block)
    except msgspec.MsgspecError as exc:
        n = block.count(b"\n")
        text = str(exc)
        m = _AT_LINE.search(text)
        if m:
            return int(m.group(1)) if int(m.group(1)) < n else -1
        m = _AT_BYTE.search(text)
        if m and int(m.group(1)) <= len(block):
            return min(block.count(b"\n", 0, int(m.group(1))), n - 1)
        return -1
    except (UnicodeError, RecursionError):
        return -1


_CONTENT = operator.attrgetter("content")
_OPAQUE = operator.attrgetter("opaque")
_QUOTE = ord('"')


class OpaqueCheck:
    """What the raw model (`fastmodel.raw_model`) leaves unproven, proven per batch: every
    raw value is a string (it is valid JSON, so a string exactly when its first byte is
    a quote) and its bytes are UTF-8 (msgspec proved every other string of the line
    UTF-8, and the rest of a JSON line is ASCII). The raw values are gathered in C
    (`map`, `filter`, `chain`) from the blocks of `content` and of their own `content`,
    the places `fastmodel.RAW_SHAPES` lets them sit, through the class attributes every
    struct of the raw model has (`fastmodel._Builder.namespace`): `opaque`, its raw
    value or None, and `content`, empty where it holds no blocks."""

    def __init__(self, raw: RawModel) -> None:
        union = typing.get_type_hints(raw.model.message)["content"].__args__[0]
        blocks = typing.get_args(union) or (union,)
        # some block has a `content` list of blocks of its own (a tool_result)
        self.nested = ("content", "[]", "content", "[]") in RAW_SHAPES and any(
            "content" in c.__struct_fields__ for c in blocks
        )
        # what the compiled check reads instead of the class attributes: each raw struct's
        # raw field (`opaque`), and the blocks that hold blocks (`content`)
        self.fields = {cls: names[0] for cls, names in raw.raw}
        self.containers = frozenset(c for c in blocks if "content" in c.__struct_fields__)

    def ok(self, msgs: list[Any]) -> bool:
        """True when every raw value of these messages is a string in UTF-8 (`ok_py`,
        compiled where it was built: `compiled`, `_walk.c`)."""
        if _OPAQUE_OK is not None:
            return bool(_OPAQUE_OK(msgs, self.nested, self.fields, self.containers))
        return self.ok_py(msgs)

    def ok_py(self, msgs: list[Any]) -> bool:
        """`ok`, in Python: the raw values gathered in C (`map`, `filter`, `chain`)."""
        blocks = list(chain.from_iterable(map(_CONTENT, msgs)))
        raws = list(filter(None, map(_OPAQUE, blocks)))
        if self.nested:
            inner = list(chain.from_iterable(map(_CONTENT, blocks)))
            if inner:
                raws += filter(None, map(_OPAQUE, inner))
        if not raws:
            return True
        joined = b"".join(raws)
        starts = list(accumulate(map(len, raws), initial=0))
        starts[-1] = 0  # the first byte twice: `itemgetter` of two or more gives a tuple
        if itemgetter(*starts)(joined).count(_QUOTE) != len(starts):
            return False
        if joined.isascii():
            return True
        try:
            joined.decode()
        except UnicodeDecodeError:
            return False
        return True


def _piece_bytes() -> int:
    """The size a failing block is located in (never more than a block)."""
    return min(PIECE_BYTES, BLOCK_BYTES)


def _pieces(block: bytes, size: int) -> Iterator[bytes]:
    """`block` (whole lines, ending in a newline) in runs of whole lines of at most `size`
    bytes each, but for a line longer than that, alone."""
    start, end = 0, len(block)
    while start < end:
        cut = block.rfind(b"\n", start, start + size)
        if cut < 0:
            cut = block.find(b"\n", start + size)
        yield block[start : cut + 1]
        start = cut + 1


def _whole_lines(block: bytes) -> list[bytes]:
    """The lines of a block that ends in a newline, each with its newline."""
    return [x + b"\n" for x in block.split(b"\n")[:-1]]


def _for_exact(first: int, k: int, lines: list[bytes], framed: dict[int, bytes]) -> tuple[int, bytes, bytes]:
    """Line `k` of a block (`lines`: the block split at newlines) as a `Step` for the
    exact path: its number, its raw bytes, its framed text."""
    return (first + k, lines[k] + b"\n", framed.get(k, lines[k]))


_AT_LINE = re.compile(r"- at `\$\[(\d+)\]")  # msgspec: a validation error of line k of a batch
_AT_BYTE = re.compile(r"\(byte (\d+)\)")  # msgspec: malformed JSON at a byte
# what msgspec raises on a line it cannot take: a decode error, invalid UTF-8, its own
# nesting limit; the exact path then says what is wrong
_UNREADABLE = (msgspec.MsgspecError, UnicodeError, RecursionError)
# A line with fewer brackets than this nests less deep than any limit of the exact path's
# parsers (jiter stops at 200 levels, orjson writes 255): msgspec reads deeper, so a line
# with more brackets (strings included: the count only errs high) takes the exact path.
_DEPTH_SAFE = 200


def _maybe_deep(line: bytes) -> bool:
    return line.count(b"{") + line.count(b"[") >= _DEPTH_SAFE


_ENCODE = msgspec.json.Encoder().encode
_CONTAINERS = (dict, list)


def _shallow(value: dict[str, Any]) -> bool:
    """True when `value` (a decoded object of arbitrary JSON) nests fewer levels than
    `_DEPTH_SAFE` less the schema's own nesting around it; flat objects answer at once."""
    for v in value.values():
        if type(v) in _CONTAINERS:
            break
    else:
        return True
    text = _ENCODE(value)
    return text.count(b"{") + text.count(b"[") < _DEPTH_SAFE - 16
