"""WireMock (Java, wiremock.org) stub mappings, as its recorder (`--record-mappings`, the
`/__admin/recordings` snapshot API) and its users write them: one stub per JSON file
(`mappings/*.json`: `{request, response, id, ...}`), or several under `{"mappings": [...]}`
(the admin API's export, and a file WireMock loads alike).

A stub's `request` is what it matches, not a request sent, so the recorded request is read
from its exact matchers: the URL from `url` (path and query) or `urlPath` with each
`queryParameters` `equalTo`; a header from its `equalTo`; the body from the first
`bodyPatterns` `equalToJson`, `equalToXml`, `equalTo` or `binaryEqualTo` (base64), as the
recorder writes them (`RequestBodyAutomaticPatternFactory`), a further one of those
(WireMock requires every pattern to match) a warning naming it. A URL given only as a
pattern or template (`urlPattern`, `urlPathPattern`, `urlPathTemplate` with a `{parameter}`)
names no URL, and is refused (a `urlPathTemplate` of no parameter matches one path, read as it
with a warning naming it); a header, parameter or body matched only loosely (`contains`, `matches`,
`matchesJsonPath`, ...) is left out, with a warning naming it. The URL is the path WireMock
matched (a stub names no host) unless a `host` `equalTo` names one.

A `response` is `{status, headers, body | jsonBody | base64Body | bodyFileName}`:

- `headers` map a name to a value or a list of values; the recorder drops
  `Content-Encoding`, `Content-Length` and `Transfer-Encoding` and keeps the body
  decompressed, while a hand-written stub may name a coding over a `base64Body` of the coded
  bytes (undone as every format's is);
- `jsonBody` is any JSON value, served as its JSON text; `bodyFileName` names a file in the
  `__files/` folder beside the mappings' folder (`../__files/NAME` from the stub), read from
  there and from nowhere else (`base.body_file`);
- a `fault` (a connection reset, a malformed chunk) or a `proxyBaseUrl` (the answer fetched
  at run time) holds no recorded response: the stub is set aside with the reason;
- `transformers` (response templating) make the body a template: one holding a Handlebars
  expression (`{{...}}`) under `response-template` is rendered for each request, so nothing
  was recorded and the stub is set aside with the reason; one without is read as written,
  and it and the delays (`fixedDelayMilliseconds`, `delayDistribution`, `chunkedDribbleDelay`) time the
  replay only: each is a warning naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from ..interactions import CassetteError
from .base import (
    Headers,
    Recorded,
    RecordingFormat,
    add_header,
    b64,
    header_map,
    json_bytes,
    mapping,
    rendered_template,
    status_code,
    text_bytes,
)

URL_KEYS = ("url", "urlPath", "urlPattern", "urlPathPattern", "urlPathTemplate")
BODY_KEYS = ("body", "jsonBody", "base64Body", "bodyFileName")
TIMING_KEYS = ("fixedDelayMilliseconds", "delayDistribution", "chunkedDribbleDelay")
FILES = "../__files"
# the body patterns naming the body itself: what the recorder writes (`RequestBodyAutomaticPatternFactory`:
# `equalToJson` for a JSON body, `equalToXml` for XML, `binaryEqualTo` for bytes, else `equalTo`)
EXACT_BODY_KEYS = ("equalToJson", "equalToXml", "equalTo", "binaryEqualTo")


# the fields of WireMock's request pattern and response definition (wiremock.org, "Stubbing"
# and "Request Matching"; `RequestPattern` and `ResponseDefinition` in its source): a stub
# uses no others, so an exchange of another tool's that has `request` and `response` too is
# not taken for one (it stays a recording of no format read here, a TC800 skip)
REQUEST_KEYS = frozenset(
    (*URL_KEYS, "method", "queryParameters", "formParameters", "headers", "cookies", "basicAuthCredentials",
     "bodyPatterns", "multipartPatterns", "host", "port", "scheme", "pathParameters", "customMatcher", "clientIp")
)  # fmt: skip
RESPONSE_KEYS = frozenset(
    (*BODY_KEYS, *TIMING_KEYS, "status", "statusMessage", "headers", "additionalProxyRequestHeaders",
     "removeProxyRequestHeaders", "fault", "proxyBaseUrl", "proxyUrlPrefixToRemove", "transformers",
     "transformerParameters", "fromConfiguredStub")
)  # fmt: skip


def _is_stub(d: Any) -> bool:
    if not isinstance(d, dict) or not isinstance(d.get("request"), dict) or not isinstance(d.get("response"), dict):
        return False
    req, resp = d["request"], d["response"]
    return (
        (any(k in req for k in URL_KEYS) or "method" in req)
        and req.keys() <= REQUEST_KEYS
        and resp.keys() <= RESPONSE_KEYS
    )


def detect_one(doc: Any) -> bool:
    return _is_stub(doc)


def detect_many(doc: Any) -> bool:
    items = doc.get("mappings") if isinstance(doc, dict) else None
    return isinstance(items, list) and (not items or _is_stub(items[0]))


def _exact(matcher: Any, what: str, warnings: list[str]) -> Any:
    """The value an exact matcher (`equalTo`) names, else None with a warning naming it."""
    if isinstance(matcher, Mapping) and "equalTo" in matcher:
        return matcher["equalTo"]
    kinds = ", ".join(f"`{k}`" for k in matcher) if isinstance(matcher, Mapping) else repr(matcher)
    warnings.append(f"{what} is matched by {kinds}, not a value: left out")
    return None


def _url(req: Mapping[str, Any], warnings: list[str]) -> str:
    given = [k for k in URL_KEYS if k in req]
    if not given:
        raise CassetteError("`request` names no URL (`url` or `urlPath`)")
    key = given[0]
    if key == "urlPathTemplate" and isinstance(req[key], str) and "{" not in req[key]:
        # a template of no path parameter (RFC 6570: no expression) matches that one path
        warnings.append(f"`request.urlPathTemplate` {req[key]!r} names no path parameter: read as the path it matches")
    elif key not in ("url", "urlPath"):
        raise CassetteError(f"`request.{key}` is {req[key]!r}, a pattern, not the URL that was sent; not read")
    url = str(req[key])
    params = req.get("queryParameters")
    if params is not None:
        given_params = mapping(params, "`request.queryParameters`").items()
        pairs = [(str(k), _exact(m, f"`request.queryParameters.{k}`", warnings)) for k, m in given_params]
        query = urlencode([(k, str(v)) for k, v in pairs if v is not None])
        url = f"{url}{'&' if '?' in url else '?'}{query}" if query else url
    host = req.get("host")
    if host is not None:
        name = _exact(host, "`request.host`", warnings)
        if name is not None:
            port = req.get("port")
            url = f"{req.get('scheme') or 'https'}://{name}{f':{port}' if port else ''}{url}"
    return url


def _request_headers(raw: Any, warnings: list[str]) -> Headers:
    out: Headers = {}
    for name, matcher in mapping(raw or {}, "`request.headers`").items():
        value = _exact(matcher, f"`request.headers.{name}`", warnings)
        if value is not None:
            add_header(out, str(name), [value])
    return out


def _request_body(patterns: Any, warnings: list[str]) -> bytes:
    if not patterns:
        return b""
    if not isinstance(patterns, list):
        raise CassetteError(f"`request.bodyPatterns` is a {type(patterns).__name__}, not a list")
    exact = [
        (i, k)
        for i, p in enumerate(patterns)
        for k in EXACT_BODY_KEYS
        if k in mapping(p, f"`request.bodyPatterns[{i}]`")
    ]
    if not exact:
        kinds = ", ".join(sorted({str(k) for p in patterns if isinstance(p, Mapping) for k in p}))
        warnings.append(f"`request.bodyPatterns` match the body by {kinds}, not a value: no request body read")
        return b""
    (first, kind), rest = exact[0], exact[1:]
    for i, other in rest:  # WireMock requires every pattern; only one body is read
        warnings.append(
            f"`request.bodyPatterns[{i}].{other}` is another exact body: only `request.bodyPatterns[{first}].{kind}` is read"
        )
    value = patterns[first][kind]
    if kind == "equalToJson":
        return value.encode("utf-8") if isinstance(value, str) else json_bytes(value)
    if kind in ("equalTo", "equalToXml"):
        return text_bytes(value, f"`request.bodyPatterns[{first}].{kind}`")
    return b64(value, f"`request.bodyPatterns[{first}].binaryEqualTo`")


def _absent(resp: Mapping[str, Any]) -> str | None:
    if resp.get("fault") is not None:
        return f"no HTTP response was recorded (WireMock `fault`: {resp['fault']})"
    if resp.get("proxyBaseUrl") is not None:
        return f"no response was recorded: the stub proxies to {resp['proxyBaseUrl']} (WireMock `proxyBaseUrl`)"
    return None


def read(item: Any) -> Recorded:
    stub = mapping(item, "the stub mapping")
    req = mapping(stub.get("request"), "`request`")
    resp = mapping(stub.get("response"), "`response`")
    warnings: list[str] = []
    absent = _absent(resp)
    if absent is not None:  # nothing recorded to replay: said, with what the stub matched
        where = next((str(req[k]) for k in URL_KEYS if k in req), "")
        return Recorded(uri=where, method=str(req.get("method") or "POST"), status=0, absent=absent)
    bodies = [k for k in BODY_KEYS if resp.get(k) is not None]
    if len(bodies) > 1:
        raise CassetteError(f"`response` has {' and '.join(f'`{k}`' for k in bodies)}: which one was served is unclear")
    body, body_file = b"", None
    kind = bodies[0] if bodies else None
    if kind == "body":
        body = text_bytes(resp["body"], "`response.body`")
    elif kind == "jsonBody":
        body = json_bytes(resp["jsonBody"])
    elif kind == "base64Body":
        body = b64(resp["base64Body"], "`response.base64Body`")
    elif kind == "bodyFileName":
        if not isinstance(resp["bodyFileName"], str):
            raise CassetteError(f"`response.bodyFileName` is a {type(resp['bodyFileName']).__name__}, not a file name")
        body_file = resp["bodyFileName"]
    transformers = resp.get("transformers")
    templated = isinstance(transformers, list) and "response-template" in transformers
    absent = rendered_template(body, "WireMock (`response-template`)") if templated else None
    if absent is not None:  # what WireMock served depended on each request: nothing recorded
        where = next((str(req[k]) for k in URL_KEYS if k in req), "")
        return Recorded(uri=where, method=str(req.get("method") or "POST"), status=0, absent=absent)
    if transformers:
        warnings.append(f"`response.transformers` {transformers!r}: the body is a template, read as written")
    warnings += [f"`response.{k}`: a delay, not replayed" for k in TIMING_KEYS if resp.get(k) is not None]
    method = str(req.get("method") or "ANY")
    if method.upper() == "ANY":
        warnings.append("`request.method` is ANY (the stub matches every method): read as POST")
        method = "POST"
    return Recorded(
        uri=_url(req, warnings),
        method=method,
        status=status_code(resp.get("status", 200), "`response.status`"),
        request_headers=_request_headers(req.get("headers"), warnings),
        request_body=_request_body(req.get("bodyPatterns"), warnings),
        headers=header_map(resp.get("headers"), "`response.headers`"),
        body=body,
        body_file=body_file,
        body_folder=FILES,
        body_file_by="WireMock `bodyFileName`, in `__files/` beside the mappings",
        warnings=warnings,
    )


_NAME, _SAYS = "wiremock", "WireMock stub mappings, JSON"
FORMAT = RecordingFormat(_NAME, _SAYS, detect_many, ("mappings",), read)
SINGLE = RecordingFormat(_NAME, _SAYS, detect_one, (), read, single=True)
