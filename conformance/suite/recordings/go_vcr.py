"""go-vcr (Go, github.com/dnaeon/go-vcr) cassettes, format versions 1 and 2.

Both versions are YAML `{version, interactions: [{request, response}]}`; what tells them
from vcrpy's is the request's `url` (vcrpy writes `uri`). Version 1 (go-vcr v1, v2) records
`request{body, form, headers, url, method}` and `response{body, headers, status: "200 OK",
code}`; version 2 (go-vcr v3, v4) adds `id`, `proto`, `proto_major`, `proto_minor`,
`content_length`, `host`, ... to both, `duration` and `uncompressed` to the response. Headers
are Go's `http.Header` (`{Name: [v, ...]}`); a body is a Go string, which YAML writes as text
or, when it is no UTF-8, as `!!binary`. `uncompressed: true` says Go's transport undid gzip
before go-vcr saw the body (it then drops `Content-Encoding` itself). `form` is what Go's
`ParseForm` made of the query and a form body, both of which `url` and `body` hold already.
"""

from __future__ import annotations

from typing import Any

from .base import Recorded, RecordingFormat, header_map, mapping, status_code, text_bytes


def _first_request(doc: Any) -> Any:
    items = doc.get("interactions") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        return None
    return items[0].get("request")


def detect(doc: Any) -> bool:
    req = _first_request(doc)
    return isinstance(req, dict) and "url" in req and "uri" not in req


def read(item: Any) -> Recorded:
    it = mapping(item, "the interaction")
    req = mapping(it.get("request"), "`request`")
    resp = mapping(it.get("response"), "`response`")
    code = resp.get("code")
    return Recorded(
        uri=str(req.get("url") or ""),
        method=str(req.get("method") or "POST"),
        status=status_code(code if code is not None else resp.get("status"), "`response.code`"),
        request_headers=header_map(req.get("headers"), "`request.headers`"),
        request_body=text_bytes(req.get("body"), "`request.body`"),
        headers=header_map(resp.get("headers"), "`response.headers`"),
        body=text_bytes(resp.get("body"), "`response.body`"),
        decoded=resp.get("uncompressed") is True,
    )


FORMAT = RecordingFormat("go-vcr", "go-vcr (Go), cassette versions 1 and 2", detect, ("interactions",), read)
