"""VCR cassettes: Ruby's VCR (github.com/vcr/vcr) and R's vcr (ropensci/vcr), YAML or JSON.

Both write `{http_interactions: [{request, response, recorded_at}], recorded_with}`; what
tells them from vcrpy's is the top-level `http_interactions`. A request is `{method, uri,
body, headers}`, a response `{status, headers, body, http_version}`, where:

- `body` is `{encoding, string}` (text) or `{encoding, base64_string}` (Ruby VCR's
  `preserve_exact_body_bytes`, R's for binary bodies); older Ruby VCR writes a binary string
  under Psych's `!binary` tag (`parse_yaml` reads it); R's vcr may omit the body, or write
  `file: true` with the body in a file of its own, which is not read here (an error naming it);
- `status` is `{code, message}` (Ruby), `{status_code: "200", message, explanation}` (R's
  vcr before 2.0) or a bare code (R's vcr 2.0);
- `headers` maps a name to a list of values (Ruby) or to one value (R), or is `[]` for none.

Text in `string` is read as UTF-8 whatever `encoding` names (Psych and R's yaml write UTF-8).
"""

from __future__ import annotations

from typing import Any

from .base import Recorded, RecordingFormat, b64, header_map, mapping, status_code, text_bytes


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("http_interactions"), list)


def _body(value: Any, what: str) -> bytes:
    """A body: `{string}`, `{base64_string}`, a bare string or none (`what`: its path)."""
    if value is None or isinstance(value, str | bytes):
        return text_bytes(value, f"`{what}`")
    body = mapping(value, f"`{what}`")
    if body.get("file") is True:
        raise ValueError(f"`{what}` is stored in a file of its own (`file: true`); not read")
    if body.get("base64_string") is not None:
        return b64(body["base64_string"], f"`{what}.base64_string`")
    return text_bytes(body.get("string"), f"`{what}.string`")


def _status(value: Any) -> int:
    if isinstance(value, dict):
        code = value.get("code", value.get("status_code"))
        return status_code(code, "`response.status.code`")
    return status_code(value, "`response.status`")


def read(item: Any) -> Recorded:
    it = mapping(item, "the interaction")
    req = mapping(it.get("request"), "`request`")
    resp = mapping(it.get("response"), "`response`")
    return Recorded(
        uri=str(req.get("uri") or ""),
        method=str(req.get("method") or "POST"),
        status=_status(resp.get("status")),
        request_headers=header_map(req.get("headers"), "`request.headers`"),
        request_body=_body(req.get("body"), "request.body"),
        headers=header_map(resp.get("headers"), "`response.headers`"),
        body=_body(resp.get("body"), "response.body"),
    )


FORMAT = RecordingFormat("vcr", "Ruby's VCR and R's vcr, YAML or JSON", detect, ("http_interactions",), read)
