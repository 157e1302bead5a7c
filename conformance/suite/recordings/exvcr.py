"""ExVCR (Elixir, github.com/parroty/exvcr) cassettes: a JSON array of `{request, response}`.

A request is `{method, url, headers, body, options, request_body}` (the body sent is
`body`; `request_body` is an older field, read when `body` is empty); a response is
`{status_code, headers, body, binary, type}`, where:

- `headers` maps a name to its value, or is a list of `[name, value]` pairs, `[]` for none
  (the HTTP client's own shape: hackney, finch, httpc, ibrowse);
- `binary: true` says `body` is base64 of the body as an Erlang term (`term_to_binary/1` of
  the bytes: version 131, then a BINARY_EXT `m` with its 4-byte length, or a
  COMPRESSED term wrapping one), which is how ExVCR keeps bytes that are no UTF-8, gzip
  bodies among them;
- `type` is `ok` for an HTTP response; `error` records a transport error (a timeout, a
  refused connection), which holds no HTTP response to read (an error naming it).
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

from ..interactions import CassetteError
from .base import Headers, Recorded, RecordingFormat, add_header, b64, header_map, mapping, status_code, text_bytes

_VERSION, _BINARY, _COMPRESSED = 131, ord("m"), ord("P")
MAX_TERM_BYTES = 256 * 1024 * 1024  # a compressed term's declared size is bounded before it is inflated


def _is_item(d: Any) -> bool:
    if not isinstance(d, dict) or not isinstance(d.get("request"), dict):
        return False
    resp = d.get("response")
    return isinstance(resp, dict) and "status_code" in resp and "url" in d["request"]


def detect(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and all(_is_item(d) for d in doc)


def erlang_binary(raw: bytes, what: str) -> bytes:
    """The bytes of an Erlang external term that is a binary (`term_to_binary(<<...>>)`)."""
    if raw[:1] != bytes([_VERSION]):
        raise CassetteError(f"{what} is no Erlang external term (version byte {raw[:1]!r}, not 131)")
    if raw[1:2] == bytes([_COMPRESSED]) and len(raw) >= 6:
        (size,) = struct.unpack(">I", raw[2:6])
        if size > MAX_TERM_BYTES:
            raise CassetteError(f"{what} is a compressed term of {size} bytes, more than {MAX_TERM_BYTES}")
        d = zlib.decompressobj()
        try:
            inner = d.decompress(raw[6:], size + 1)
        except zlib.error as exc:
            raise CassetteError(f"{what} is a compressed term that does not inflate ({exc})") from None
        if len(inner) != size:
            raise CassetteError(f"{what} is a compressed term of {len(inner)} bytes where it says {size}")
        raw = bytes([_VERSION]) + inner
    if raw[1:2] != bytes([_BINARY]) or len(raw) < 6:
        tag = raw[1] if len(raw) > 1 else None
        raise CassetteError(f"{what} is an Erlang term of tag {tag}, not a binary")
    (n,) = struct.unpack(">I", raw[2:6])
    if len(raw) != 6 + n:
        raise CassetteError(f"{what} is a binary term of {len(raw) - 6} bytes where it says {n}")
    return raw[6:]


def _headers(raw: Any, what: str) -> Headers:
    if isinstance(raw, list) and raw:
        out: Headers = {}
        for i, pair in enumerate(raw):
            if not isinstance(pair, list) or len(pair) != 2:
                raise CassetteError(f"{what}[{i}] is not a [name, value] pair")
            add_header(out, str(pair[0]), [pair[1]])
        return out
    return header_map(raw, what)


def read(item: Any) -> Recorded:
    it = mapping(item, "the interaction")
    req = mapping(it.get("request"), "`request`")
    resp = mapping(it.get("response"), "`response`")
    if resp.get("type", "ok") != "ok":
        raise CassetteError(f"`response.type` is {resp.get('type')!r}: a transport error, no HTTP response to read")
    body: Any = resp.get("body")
    if resp.get("binary") is True:
        data = erlang_binary(b64(body, "`response.body`"), "`response.body`")
    else:
        data = text_bytes(body, "`response.body`")
    sent = req.get("body") or req.get("request_body")
    return Recorded(
        uri=str(req.get("url") or ""),
        method=str(req.get("method") or "POST"),
        status=status_code(resp.get("status_code"), "`response.status_code`"),
        request_headers=_headers(req.get("headers"), "`request.headers`"),
        request_body=text_bytes(sent, "`request.body`"),
        headers=_headers(resp.get("headers"), "`response.headers`"),
        body=data,
    )


FORMAT = RecordingFormat("exvcr", "ExVCR (Elixir), JSON", detect, (), read)
