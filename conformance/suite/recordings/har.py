"""HAR 1.2 (HTTP Archive, http://www.softwareishard.com/blog/har-12-spec/) as browsers,
Polly.js (`recording.har`), mitmproxy and others write it: JSON `{log: {entries: [...]}}`.

An entry is `{request: {method, url, headers: [{name, value}], postData: {mimeType, text}},
response: {status, headers, content: {mimeType, text, encoding}}}`. `content.text` is the
body, base64 when `encoding` is `"base64"` (Polly.js: a JSON array of base64 chunks); HAR says the body is stored decoded ("the HTTP
response is decoded (decompressed & unchunked)"), so a `content-encoding` header is undone
only where the bytes are still compressed (Polly.js stores a gzip body base64 as received).
The media type is `content.mimeType` where no `content-type` header says it. Playwright's
`recordHar` / `routeFromHAR` with `content: 'attach'` (the default when it updates a HAR)
stores a body in a file of its own beside the HAR, named by `content._file`: read from
there, and from nowhere else (`base.body_file`). HTTP/2's
pseudo-headers a browser lists among the headers (`:authority`, `:path`) are left out: they are
the request line, which `method` and `url` already hold.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from ..interactions import CassetteError
from .base import Headers, Recorded, RecordingFormat, add_header, b64, mapping, status_code, text_bytes


def detect(doc: Any) -> bool:
    log = doc.get("log") if isinstance(doc, dict) else None
    return isinstance(log, dict) and isinstance(log.get("entries"), list)


def _headers(raw: Any, what: str) -> Headers:
    out: Headers = {}
    if raw is None:
        return out
    if not isinstance(raw, list):
        raise CassetteError(f"{what} is a {type(raw).__name__}, not a list of {{name, value}}")
    for h in raw:
        if not isinstance(h, Mapping) or not isinstance(h.get("name"), str):
            raise CassetteError(f"{what} holds {h!r}, not a {{name, value}} object")
        if not h["name"].startswith(":"):  # HTTP/2 pseudo-headers (RFC 9113 §8.3) are no header fields
            add_header(out, h["name"], [h.get("value")])
    return out


def _post_data(post: Any) -> bytes:
    """The request body: `postData.text`, or (HAR: "text and params fields are mutually
    exclusive") a form's `params` spelled as the form body they were."""
    if not post:
        return b""
    data = mapping(post, "`request.postData`")
    params = data.get("params")
    if data.get("text") is None and isinstance(params, list) and params:
        pairs = [mapping(p, "`request.postData.params[]`") for p in params]
        return urlencode([(str(p.get("name", "")), str(p.get("value") or "")) for p in pairs]).encode("ascii")
    return text_bytes(data.get("text"), "`request.postData.text`")


def read(item: Any) -> Recorded:
    entry = mapping(item, "the entry")
    req = mapping(entry.get("request"), "`request`")
    resp = mapping(entry.get("response"), "`response`")
    request_body = _post_data(req.get("postData"))
    content = mapping(resp.get("content") or {}, "`response.content`")
    text = content.get("text")
    attached = content.get("_file") if text is None else None
    if attached is not None and not isinstance(attached, str):
        raise CassetteError(f"`response.content._file` is a {type(attached).__name__}, not a file name")
    body = _base64_body(text) if content.get("encoding") == "base64" else text_bytes(text, "`response.content.text`")
    status = status_code(resp.get("status"), "`response.status`")
    return Recorded(
        uri=str(req.get("url") or ""),
        method=str(req.get("method") or "POST"),
        status=status,
        request_headers=_headers(req.get("headers"), "`request.headers`"),
        request_body=request_body,
        headers=_headers(resp.get("headers"), "`response.headers`"),
        body=body,
        content_type=str(content.get("mimeType") or ""),
        body_file=attached,
        body_folder="",
        body_file_by="HAR `_file`, Playwright's `content: 'attach'`",
        absent=_absent(status, resp, content, attached),
    )


def _base64_body(text: Any) -> bytes:
    """`content.text` under `encoding: "base64"`: one base64 string, or Polly.js's array of
    them. Polly's node-http adapter keeps a content-encoded body as the chunks it was received
    in ("If the response's body content is encoded, we store the chunks as an array of hex
    values", Netflix/pollyjs#249), base64 since v6 (Netflix/pollyjs#420, "Use base64 instead of
    hex encoding for binary data"): `content.text` is then the JSON text of that array, each
    chunk base64 of its own bytes, the body their concatenation. `[` is no base64 character,
    so the two spellings cannot be confused."""
    what = "`response.content.text`"
    if isinstance(text, str) and text.lstrip().startswith("["):
        try:
            chunks = json.loads(text)
        except ValueError as exc:
            raise CassetteError(f"{what} is neither base64 nor a JSON array of base64 chunks ({exc})") from None
        if not isinstance(chunks, list):
            raise CassetteError(f"{what} is neither base64 nor a JSON array of base64 chunks")
        return b"".join(b64(c, f"{what} chunk {i}") for i, c in enumerate(chunks))
    return b64(text or "", what)


def _absent(status: int, resp: Mapping[str, Any], content: Mapping[str, Any], attached: str | None) -> str | None:
    """Why an entry holds no response to replay: status 0, a request that never got one (a
    browser's failed, blocked or aborted request; Chrome adds `_error`), or a body HAR left out
    ("text: leave out this field if the information is not available"; browsers keep no
    event-stream body) where the response had one."""
    if status == 0:
        error = resp.get("_error")
        return f"no HTTP response was recorded (HAR status 0{f': {error}' if isinstance(error, str) else ''})"
    if content.get("text") is None and attached is None and status not in (204, 304):
        size = content.get("size")
        if not (
            isinstance(size, int)
            and size == 0
            and not str(content.get("mimeType") or "").startswith("text/event-stream")
        ):
            return "the recorder kept no response body (HAR `response.content.text` left out)"
    return None


FORMAT = RecordingFormat("har", "HAR 1.2 (browsers, Polly.js, mitmproxy)", detect, ("log", "entries"), read)
