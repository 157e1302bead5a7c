"""php-vcr (PHP, github.com/php-vcr/php-vcr) cassettes: a YAML (or JSON) list of
`{request, response}`, as its `Request::toArray` and `Response::toArray` write them.

A request is `{method, url, headers, body, post_fields, post_files, curl_options}`; a
response is `{status, headers, body}`, where:

- `status` is `{http_version, code, message}`, or a bare code (`Response::fromArray` takes
  both, and 200 when it is missing);
- `headers` maps a name to one value (`null` for a header sent empty);
- `body` is base64 when the response says `Content-Type: application/x-gzip` or
  `Content-Transfer-Encoding: binary` (php-vcr encodes exactly those), else the text;
  empty fields are left out (`array_filter`);
- a form request has `post_fields` instead of `body`: they are sent form-encoded.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from .base import Headers, Recorded, RecordingFormat, b64, header_map, mapping, status_code, text_bytes


def _is_item(d: Any) -> bool:
    if not isinstance(d, dict) or not isinstance(d.get("request"), dict):
        return False
    resp = d.get("response")
    return isinstance(resp, dict) and "url" in d["request"] and "status_code" not in resp
    # ExVCR's responses have `status_code` (exvcr.py)


def detect(doc: Any) -> bool:
    return isinstance(doc, list) and bool(doc) and all(_is_item(d) for d in doc)


def _status(value: Any) -> int:
    if value is None:
        return 200  # Response::fromArray's default
    if isinstance(value, dict):
        return status_code(value.get("code"), "`response.status.code`")
    return status_code(value, "`response.status`")


def _is_base64(headers: Headers) -> bool:
    ctype = " ".join(headers.get("content-type", []))
    return "application/x-gzip" in ctype or "binary" in headers.get("content-transfer-encoding", [])


def read(item: Any) -> Recorded:
    it = mapping(item, "the interaction")
    req = mapping(it.get("request"), "`request`")
    resp = mapping(it.get("response"), "`response`")
    headers = header_map(resp.get("headers"), "`response.headers`")
    body = resp.get("body")
    data = (
        b64(body, "`response.body`")
        if body is not None and _is_base64(headers)
        else text_bytes(body, "`response.body`")
    )
    sent = req.get("body")
    if sent is None and isinstance(req.get("post_fields"), dict):
        sent = urlencode(req["post_fields"], doseq=True)
    return Recorded(
        uri=str(req.get("url") or ""),
        method=str(req.get("method") or "POST"),
        status=_status(resp.get("status")),
        request_headers=header_map(req.get("headers"), "`request.headers`"),
        request_body=text_bytes(sent, "`request.body`"),
        headers=headers,
        body=data,
    )


FORMAT = RecordingFormat("php-vcr", "php-vcr (PHP), YAML or JSON", detect, (), read)
