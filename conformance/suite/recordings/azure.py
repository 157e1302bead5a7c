"""Azure SDK test-proxy recordings (github.com/Azure/azure-sdk-tools, `tools/test-proxy`),
which azure-sdk-for-python, -js, -net, -java and -go record their tests through (the Azure
OpenAI tests among them): JSON `{Entries: [...], Variables: {...}}`, each entry as the
proxy's `RecordEntry.Serialize` writes it and `RecordEntry.Deserialize` reads it back.

An entry is `{RequestUri, RequestMethod, RequestHeaders, RequestBody, StatusCode,
ResponseHeaders, ResponseBody}`, where:

- headers map a name (any case) to its value, or to a list of values when it has several;
- a body is `null` (none) or `[]` (empty); otherwise its message's one `Content-Type` says
  how it is kept: a text type (`text/*`, a type ending `json`, `xml` or `-urlencoded`, or
  `; charset=utf-8`: `ContentTypeUtilities.TryGetTextEncoding`) keeps a JSON object (or a
  number or boolean) as that JSON value, other text as one string, or, when it has line
  breaks, as the list of its lines, each with its break (an event stream is kept so); any
  other type keeps the bytes as one base64 string;
- the proxy stores a gzip or br response body decompressed and keeps its `Content-Encoding`
  header (it compresses again on playback), so such a body is read as the text it is
  (`base.undo_coding`);
- `Variables` are the test's recorded random values and names, no exchange.

A body the proxy itself would not read (a JSON value or a list of lines under a type that is
no text) is read as the text or JSON it plainly is, with a warning naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..interactions import CassetteError
from .base import Headers, Recorded, RecordingFormat, b64, header_map, json_bytes, mapping, status_code

_TEXT_SUFFIXES = ("json", "xml", "-urlencoded")


def detect(doc: Any) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("Entries"), list):
        return False
    entries = doc["Entries"]
    return not entries or (isinstance(entries[0], dict) and "RequestUri" in entries[0])


def is_text_type(headers: Headers) -> bool:
    """Whether the proxy keeps a body of these headers as text (one `Content-Type` value)."""
    values = headers.get("content-type", [])
    if len(values) != 1:
        return False
    ctype = values[0].lower()
    if "; charset=utf-8" in ctype:
        return True
    return ctype.startswith(("text/", "application/json", "application/x-www-form-urlencoded")) or ctype.endswith(
        _TEXT_SUFFIXES
    )


def _lines(value: list[Any], what: str) -> str:
    for i, line in enumerate(value):
        if not isinstance(line, str):
            raise CassetteError(f"{what}[{i}] is a {type(line).__name__}, not a line of text")
    return "".join(value)


def body_bytes(value: Any, headers: Headers, what: str, warnings: list[str]) -> bytes:
    """A recorded body as the bytes the proxy plays back (`RecordEntry.DeserializeBody`)."""
    if value is None or value == []:
        return b""
    text = is_text_type(headers)
    if isinstance(value, str):
        return value.encode("utf-8") if text else b64(value, what)
    if isinstance(value, list):
        if not text:
            warnings.append(f"{what} is a list of lines under a Content-Type that is no text; read as that text")
        return _lines(value, what).encode("utf-8")
    if isinstance(value, Mapping | int | float | bool):
        if not text:
            warnings.append(f"{what} is a JSON value under a Content-Type that is no text; read as that JSON")
        return json_bytes(value)  # the proxy writes the value back as compact JSON
    raise CassetteError(f"{what} is a {type(value).__name__}, not a body")


def read(item: Any) -> Recorded:
    entry = mapping(item, "the entry")
    request_headers = header_map(entry.get("RequestHeaders"), "`RequestHeaders`")
    headers = header_map(entry.get("ResponseHeaders"), "`ResponseHeaders`")
    warnings: list[str] = []
    uri = entry.get("RequestUri")
    if not isinstance(uri, str) or not uri:
        raise CassetteError(f"`RequestUri` is {uri!r}, not the URL the request was sent to")
    return Recorded(
        uri=uri,
        method=str(entry.get("RequestMethod") or "POST"),
        status=status_code(entry.get("StatusCode"), "`StatusCode`"),
        request_headers=request_headers,
        request_body=body_bytes(entry.get("RequestBody"), request_headers, "`RequestBody`", warnings),
        headers=headers,
        body=body_bytes(entry.get("ResponseBody"), headers, "`ResponseBody`", warnings),
        warnings=warnings,
    )


FORMAT = RecordingFormat("azure", "Azure SDK test-proxy recordings, JSON", detect, ("Entries",), read)
