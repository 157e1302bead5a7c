"""VCR cassettes: Ruby's VCR (github.com/vcr/vcr) and R's vcr (ropensci/vcr), YAML or JSON.

Both write `{http_interactions: [{request, response, recorded_at}], recorded_with}`; what
tells them from vcrpy's is the top-level `http_interactions`. A request is `{method, uri,
body, headers}`, a response `{status, headers, body, http_version}`, where:

- `body` is `{encoding, string}` (text) or `{encoding, base64_string}` (Ruby VCR's
  `preserve_exact_body_bytes`, R's for binary bodies); older Ruby VCR writes a binary string
  under Psych's `!binary` tag (`parse_yaml` reads it); R's vcr may omit the body, or write
  `file: true` with the response body in a file of its own, `string` naming it: the file
  `<cassette name>-files/NAME` beside the cassette is read, and nothing outside that folder
  (`base.body_file`);
- `status` is `{code, message}` (Ruby), `{status_code: "200", message, explanation}` (R's
  vcr before 2.0) or a bare code (R's vcr 2.0);
- `headers` maps a name to a list of values (Ruby) or to one value (R), or is `[]` for none.

`encoding` is honoured as Ruby VCR's `body_from` does: `base64_string` is the bytes as they
are, whatever it names; `string` (text, which Psych and R's yaml write as UTF-8) is encoded
into the charset it names (`ISO-8859-1`, `Windows-1252`, `Shift_JIS`, ...); `ASCII-8BIT`
(Ruby's binary) keeps the text's bytes, and so does a name Python has no codec for or text the
charset cannot hold (Ruby warns and keeps the string then); R's vcr writes `encoding: ''`.
"""

from __future__ import annotations

import codecs
from typing import Any

from .base import Recorded, RecordingFormat, b64, header_map, mapping, response_status, text_bytes

RUBY_CODECS = {"windows-31j": "cp932", "eucjp-ms": "euc_jp", "cp51932": "euc_jp", "macjapanese": "shift_jis"}
"""Ruby encoding names Python spells otherwise (the rest are looked up as they are)."""
BINARY = ("ascii-8bit", "binary", "")
"""Ruby's names of no charset: the bytes are kept as they are."""


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("http_interactions"), list)


def charset_bytes(text: str, encoding: Any) -> bytes:
    """`text` in the charset Ruby's VCR names (`try_encode_string`): UTF-8 where it names none,
    binary, a charset Python does not know, or one the text does not fit."""
    name = str(encoding or "").strip().lower()
    if name in BINARY:
        return text.encode("utf-8")
    try:
        return text.encode(codecs.lookup(RUBY_CODECS.get(name, name)).name)
    except (LookupError, UnicodeEncodeError):
        return text.encode("utf-8")


def _body(value: Any, what: str) -> bytes:
    """A body: `{string}`, `{base64_string}`, a bare string or none (`what`: its path)."""
    if value is None or isinstance(value, str | bytes):
        return text_bytes(value, f"`{what}`")
    body = mapping(value, f"`{what}`")
    if body.get("file") is True:
        raise ValueError(f"`{what}` is stored in a file of its own (`file: true`); not read")
    if body.get("base64_string") is not None:
        return b64(body["base64_string"], f"`{what}.base64_string`")
    text = body.get("string")
    if isinstance(text, str):
        return charset_bytes(text, body.get("encoding"))
    return text_bytes(text, f"`{what}.string`")


def _body_file(value: Any) -> str | None:
    """The name R's vcr gave the response body's file (`file: true`, `string: NAME`), or None."""
    if not isinstance(value, dict) or value.get("file") is not True:
        return None
    name = value.get("string")
    if not isinstance(name, str):
        raise ValueError("`response.body` is stored in a file (`file: true`) whose name `string` is not text")
    return name


def read(item: Any) -> Recorded:
    it = mapping(item, "the interaction")
    req = mapping(it.get("request"), "`request`")
    resp = mapping(it.get("response"), "`response`")
    file = _body_file(resp.get("body"))
    return Recorded(
        uri=str(req.get("uri") or ""),
        method=str(req.get("method") or "POST"),
        status=response_status(resp.get("status"), ("code", "status_code")),
        request_headers=header_map(req.get("headers"), "`request.headers`"),
        request_body=_body(req.get("body"), "request.body"),
        headers=header_map(resp.get("headers"), "`response.headers`"),
        body=b"" if file is not None else _body(resp.get("body"), "response.body"),
        body_file=file,
    )


FORMAT = RecordingFormat("vcr", "Ruby's VCR and R's vcr, YAML or JSON", detect, ("http_interactions",), read)
