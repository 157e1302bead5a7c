"""httpmock (Rust, httpmock.rs) recordings, as its recorder writes them (`Recording::save`,
"Record and Playback") and its playback (`MockServer::playback`) and static mocks read them:
YAML, one mock a document, `{when, then}` (`StaticMockDefinition` in its source), several
mocks one file as a stream of documents separated by `---` (the loader reads each document
of the stream, `serde_yaml::Deserializer::from_str`). The recorder writes `when.path`,
`when.method`, `when.query_param` and `when.header` (lists of `{name, value}`) and
`when.body`, and `then.status`, `then.header` and `then.body`; 0xPlaygrounds/rig's
`rig-cassette` recordings are such files.

A mock's `when` is what it matches, not a request sent, so the recorded request is read from
its exact fields (`StaticRequestRequirements`): `path`, `method`, `query_param`, `header`,
`cookie` (sent as one `Cookie` header), and the body from `body`, `body_base64` or
`json_body`, the first given (httpmock requires every field to match: a further one is a
warning naming it). The URL is the path httpmock matched (a recording names no host) unless
`host` names one (`scheme` and `port` beside it). A field matched only loosely (`path_prefix`,
`header_contains`, `body_matches`, ...) names no value: it is left out with a warning naming
it, and a mock of no `path` is refused. A mock of no `method` matches every method: read as
POST, with a warning.

A mock's `then` (`StaticHTTPResponse`) is `{status, header, body | body_base64 | json_body,
delay}`: `body_base64` is the body's bytes in base64, `json_body` a JSON value served as its
JSON text; `delay` times the replay only (a warning naming it). A `body_from_file` names a
file httpmock reads only from a static mock directory it was given, so no recorded body is
here: the mock is set aside with the reason. A `then` of no `status` is refused (the
recorder always writes it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from ..interactions import CassetteError
from .base import Headers, Recorded, RecordingFormat, add_header, b64, json_bytes, mapping, status_code, text_bytes

EXACT_WHEN = frozenset(
    ("scheme", "host", "port", "path", "method", "query_param", "header", "cookie", "body", "body_base64", "json_body")
)
BODY_WHEN = ("body", "body_base64", "json_body")
# each loose matcher's name is one of these families and a suffix (`path_prefix`, `header_exists`,
# `body_contains_base64`, `json_body_includes`, `form_urlencoded_tuple`, ...: `StaticRequestRequirements`)
LOOSE_FAMILIES = ("scheme_", "host_", "port_", "path_", "method_", "query_param_", "header_", "cookie_",
                  "body_", "json_body_", "form_urlencoded_")  # fmt: skip
THEN_KEYS = frozenset(("status", "header", "body", "body_base64", "json_body", "body_from_file", "delay"))
BODY_THEN = ("body", "body_base64", "json_body")


def _known_when(key: Any) -> bool:
    return isinstance(key, str) and (key in EXACT_WHEN or key.startswith(LOOSE_FAMILIES))


def _is_mock(d: Any) -> bool:
    """A `{when, then}` mapping whose fields are httpmock's (a document of another tool's that
    has `when` and `then` too is not taken for one)."""
    if not isinstance(d, dict) or set(d) != {"when", "then"}:
        return False
    when, then = d["when"], d["then"]
    return (
        isinstance(when, dict)
        and isinstance(then, dict)
        and all(_known_when(k) for k in when)
        and then.keys() <= THEN_KEYS
    )


def detect_one(doc: Any) -> bool:
    return _is_mock(doc)


def detect_many(doc: Any) -> bool:
    """A stream of mock documents (`recordings.parse_yaml` gives a stream of several as their list)."""
    return isinstance(doc, list) and bool(doc) and all(_is_mock(d) for d in doc)


def _pairs(raw: Any, what: str) -> list[tuple[str, str]]:
    """A list of `{name, value}` (`NameValueStringPair`) as (name, value) pairs."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise CassetteError(f"{what} is a {type(raw).__name__}, not a list of {{name, value}}")
    out = []
    for i, p in enumerate(raw):
        pair = mapping(p, f"{what}[{i}]")
        if "name" not in pair or "value" not in pair:
            raise CassetteError(f"{what}[{i}] is not a {{name, value}} pair")
        out.append((str(pair["name"]), str(pair["value"])))
    return out


def _url(when: Mapping[str, Any]) -> str:
    path = when.get("path")
    if not isinstance(path, str) or not path:
        loose = ", ".join(f"`when.{k}`" for k in when if str(k).startswith("path_"))
        by = f" (matched only by {loose})" if loose else ""
        raise CassetteError(f"`when.path` names no path{by}: not the URL that was sent; not read")
    query = urlencode(_pairs(when.get("query_param"), "`when.query_param`"))
    url = f"{path}{'&' if '?' in path else '?'}{query}" if query else path
    host = when.get("host")
    if isinstance(host, str) and host:
        port = when.get("port")
        url = f"{when.get('scheme') or 'http'}://{host}{f':{port}' if port else ''}{url}"
    return url


def _headers(raw: Any, what: str) -> Headers:
    out: Headers = {}
    for name, value in _pairs(raw, what):
        add_header(out, name, [value])
    return out


def _request_headers(when: Mapping[str, Any]) -> Headers:
    out = _headers(when.get("header"), "`when.header`")
    cookies = _pairs(when.get("cookie"), "`when.cookie`")
    if cookies:
        add_header(out, "cookie", ["; ".join(f"{k}={v}" for k, v in cookies)])
    return out


def _body(d: Mapping[str, Any], keys: tuple[str, ...], where: str, warnings: list[str]) -> bytes:
    given = [k for k in keys if d.get(k) is not None]
    if not given:
        return b""
    first, rest = given[0], given[1:]
    warnings += [f"`{where}.{k}` is another body: only `{where}.{first}` is read" for k in rest]
    value = d[first]
    if first == "body_base64":
        return b64(value, f"`{where}.body_base64`")
    if first == "json_body":
        return json_bytes(value)
    return text_bytes(value, f"`{where}.body`")


def read(item: Any) -> Recorded:
    mock = mapping(item, "the mock")
    when = mapping(mock.get("when"), "`when`")
    then = mapping(mock.get("then"), "`then`")
    warnings = [f"`when.{k}` matches loosely, not a value: left out" for k in when if k not in EXACT_WHEN]
    method = when.get("method")
    if method is None:
        warnings.append("`when.method` is absent (the mock matches every method): read as POST")
    if then.get("body_from_file") is not None:  # read by httpmock from its static mock directory only
        return Recorded(
            uri=str(when.get("path") or ""),
            method=str(method or "POST"),
            status=0,
            absent=f"no response body was recorded: `then.body_from_file` names {then['body_from_file']!r}, "
            "a file httpmock reads from its static mock directory",
        )
    if then.get("status") is None:
        raise CassetteError("`then` names no `status`")
    if then.get("delay") is not None:
        warnings.append("`then.delay`: a delay, not replayed")
    request_body = _body(when, BODY_WHEN, "when", warnings)
    return Recorded(
        uri=_url(when),
        method=str(method or "POST"),
        status=status_code(then["status"], "`then.status`"),
        request_headers=_request_headers(when),
        request_body=request_body,
        headers=_headers(then.get("header"), "`then.header`"),
        body=_body(then, BODY_THEN, "then", warnings),
        warnings=warnings,
    )


_NAME, _SAYS = "httpmock", "httpmock (Rust) recordings and static mocks, YAML"
FORMAT = RecordingFormat(_NAME, _SAYS, detect_many, (), read)
SINGLE = RecordingFormat(_NAME, _SAYS, detect_one, (), read, single=True)
