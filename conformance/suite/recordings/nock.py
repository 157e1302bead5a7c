"""nock (Node, github.com/nock/nock) recordings: what `nock.recorder.rec({output_objects:
true})` prints and `nock.back` writes, a JSON array of `{scope, method, path, body, status,
response, rawHeaders, reqheaders, responseIsBinary}`.

`scope` is the origin (`https://api.openai.com:443`), `path` the path and query. `body` (the
request) and `response` are JSON values where the body was JSON, else strings; a response
whose headers name a content coding is recorded as the list of its chunks, each hex (the
bytes as received, gzip included), and one that is no UTF-8 as one hex string with
`responseIsBinary: true`. `rawHeaders` is Node's flat `[name, value, name, value, ...]`
(older nock wrote a `headers` mapping).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from ..interactions import CassetteError
from .base import Headers, Recorded, RecordingFormat, add_header, header_map, mapping, status_code

DEFAULT_PORTS = {"https": 443, "http": 80}


def detect(doc: Any) -> bool:
    return (
        isinstance(doc, list) and bool(doc) and all(isinstance(d, dict) and "scope" in d and "method" in d for d in doc)
    )


def _origin(scope: Any) -> str:
    """The scope without its scheme's default port (`https://h:443` -> `https://h`), so the
    URL is the one the client asked for and the records' hosts match it."""
    s = str(scope or "").rstrip("/")
    parts = urlsplit(s)
    try:
        port = parts.port
    except ValueError:
        raise CassetteError(f"`scope` {s!r} is no origin") from None
    if port is not None and DEFAULT_PORTS.get(parts.scheme) == port:
        return f"{parts.scheme}://{parts.hostname}"
    return s


def _hex(value: str, what: str) -> bytes:
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise CassetteError(f"{what} is not hex") from None


def _value_bytes(value: Any) -> bytes:
    if value is None:
        return b""
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _response(d: dict[str, Any], coded: bool) -> bytes:
    value = d.get("response")
    if d.get("responseIsBinary") is True and isinstance(value, str):
        return _hex(value, "`response`")
    if coded and isinstance(value, list) and all(isinstance(x, str) for x in value):
        return b"".join(_hex(x, f"`response[{i}]`") for i, x in enumerate(value))
    return _value_bytes(value)


def _raw_headers(d: dict[str, Any]) -> Headers:
    raw = d.get("rawHeaders")
    if raw is None:
        return header_map(d.get("headers"), "`headers`")
    if isinstance(raw, dict):
        return header_map(raw, "`rawHeaders`")
    if not isinstance(raw, list) or len(raw) % 2:
        raise CassetteError("`rawHeaders` is not a flat [name, value, ...] list")
    out: Headers = {}
    for name, value in zip(raw[::2], raw[1::2], strict=True):
        add_header(out, str(name), [value])
    return out


def read(item: Any) -> Recorded:
    d = dict(mapping(item, "the recording"))
    headers = _raw_headers(d)
    coded = bool(headers.get("content-encoding"))
    return Recorded(
        uri=_origin(d.get("scope")) + str(d.get("path") or ""),
        method=str(d.get("method") or "POST"),
        status=status_code(d.get("status", 200), "`status`"),
        request_headers=header_map(d.get("reqheaders"), "`reqheaders`"),
        request_body=_value_bytes(d.get("body")),
        headers=headers,
        body=_response(d, coded),
    )


FORMAT = RecordingFormat("nock", "nock (Node) recorder objects and nock.back fixtures", detect, (), read)
