"""Hoverfly (Go, hoverfly.io) simulations, as `hoverctl export` and the admin API
(`GET /api/v2/simulation`) write them and Hoverfly's capture mode fills them: JSON
`{data: {pairs: [{request, response}], globalActions}, meta: {schemaVersion, ...}}`
(docs.hoverfly.io, "Simulation schema"; `SimulationViewV5` in its source).

A pair's `request` is what Hoverfly matches, not a request sent, so the recorded request is
read from its matchers, in every schema version Hoverfly still imports:

- v5 (`schemaVersion` "v5", "v5.1", ...): each field a list of matchers
  `[{matcher, value, config?, doMatch?}]`; `headers` and `query` map a name to such a list
  (`deprecatedQuery`: a list matching the whole query string);
- v2 to v4: each field one object naming its matcher (`{exactMatch: ...}`, `{globMatch:
  ...}`), `headers` a name -> values mapping (v4 adds `headersWithMatchers` and
  `queriesWithMatchers`, names to such objects);
- v1: each field its plain value, as recorded (`requestType: recording`) or a glob pattern
  (`requestType: template`, which Hoverfly upgrades to `glob` matchers).

A field's value is its `exact` matcher's (`exactMatch` before v5; a matcher of no name is
`exact` too); the body's is also its `json` or `xml` matcher's, which capture writes for a
JSON or XML body (the body as sent). Hoverfly requires every matcher of a field to hold: a
further one naming a value is a warning naming it (the first is read). A field matched only
otherwise (`glob`, `regex`, `jsonpath`, `jsonpartial`, `negate`, a `doMatch` chain, ...)
names no value: a header, parameter, host or body so matched is left out with a warning
naming it, and a path so matched (or none) is refused. The URL is `scheme://destination`
and the path and query.

A `response` is `{status, body, encodedBody, headers, ...}`:

- `encodedBody: true` says the body is base64 (capture's way with bytes that are no text,
  and with a gzip-coded body, kept coded with its `Content-Encoding`: undone as every
  format's is);
- `bodyFile` names a file Hoverfly reads from its `-response-body-files-path` (by default
  its working folder), read here from beside the simulation, with a warning; one beside a
  `body` is left out, as Hoverfly does (with a warning); one that is a URL (fetched when the
  simulation is imported) holds no recorded body: the pair is set aside with the reason;
- `templated`: a body holding a Handlebars expression (`{{...}}`) is rendered for each
  request, so nothing was recorded and the pair is set aside with the reason; one without is
  read as written, and it, the delays (`fixedDelay`,
  `logNormalDelay`), the state a pair needs or sets (`requiresState`, `transitionsState`,
  `removesState`) and what runs after serving (`postServeAction`, `postActionHooks`) are
  each a warning naming it.

`globalActions` time every pair's replay, and `labels`, `literals` and `variables` name
things for templates: none holds an exchange.
"""

from __future__ import annotations

import re
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

# the fields of a pair's request and response in every schema version (v1 to v5:
# `RequestDetailsViewV1`, `RequestMatcherViewV4`, `RequestMatcherViewV5`, `ResponseDetailsViewV5`):
# a pair uses no others, so another tool's `{data: {pairs: [...]}}` is not taken for a simulation
REQUEST_KEYS = frozenset(
    ("path", "method", "destination", "scheme", "query", "body", "headers", "requestType", "requiresState",
     "headersWithMatchers", "queriesWithMatchers", "deprecatedQuery")
)  # fmt: skip
RESPONSE_KEYS = frozenset(
    ("status", "body", "bodyFile", "encodedBody", "headers", "templated", "transitionsState", "removesState",
     "fixedDelay", "logNormalDelay", "postServeAction", "postActionHooks")
)  # fmt: skip
PAIR_KEYS = frozenset(("request", "response", "labels"))
SCHEMA_VERSION = re.compile(r"v\d+(\.\d+)*")
# the matchers whose value is the field's value: `exact` (also a matcher of no name, Hoverfly's
# default) for every field; for the body also `json` and `xml`, which capture writes for such a body
EXACT = frozenset(("", "exact", "exactmatch"))
BODY_EXACT = EXACT | {"json", "jsonmatch", "xml", "xmlmatch"}
DELAY_KEYS = ("fixedDelay", "logNormalDelay")
STATE_KEYS = ("transitionsState", "removesState")
HOOK_KEYS = ("postServeAction", "postActionHooks")
V1_FIELDS = ("path", "method", "destination", "scheme", "query", "body")


def _is_pair(p: Any) -> bool:
    if not isinstance(p, dict) or not {"request", "response"} <= p.keys() <= PAIR_KEYS:
        return False
    req, resp = p["request"], p["response"]
    return (
        isinstance(req, dict) and isinstance(resp, dict) and req.keys() <= REQUEST_KEYS and resp.keys() <= RESPONSE_KEYS
    )


def detect(doc: Any) -> bool:
    """A simulation: `data.pairs` of Hoverfly's request/response shape and the
    `meta.schemaVersion` Hoverfly needs to import it."""
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict) or not isinstance(doc.get("meta"), dict):
        return False
    version, pairs = doc["meta"].get("schemaVersion"), doc["data"].get("pairs")
    if not isinstance(version, str) or not SCHEMA_VERSION.fullmatch(version) or not isinstance(pairs, list):
        return False
    return not pairs or _is_pair(pairs[0])


def _kinds(matchers: Any) -> str:
    """The matcher kinds of a field, for a warning."""
    if isinstance(matchers, list):
        names = [str(m.get("matcher")) if isinstance(m, Mapping) else repr(m) for m in matchers]
        chained = any(isinstance(m, Mapping) and m.get("doMatch") for m in matchers)
        return ", ".join(f"`{n}`" for n in names) + (" with `doMatch`" if chained else "")
    if isinstance(matchers, Mapping):
        return ", ".join(f"`{k}`" for k in matchers)
    return repr(matchers)


def matched_value(matchers: Any, what: str, warnings: list[str], exact: frozenset[str] = EXACT) -> Any:
    """The value a field's matchers name (v5's list, v2-v4's object, v1's plain value), or
    None: a field not given is None silently, one matched only loosely with a warning."""
    if matchers is None or matchers == []:
        return None
    if isinstance(matchers, str):
        return matchers  # v1: the value itself
    field = what.strip("`")
    named: list[tuple[str, Any]] = []  # (where, value) of each matcher naming the value
    if isinstance(matchers, list):  # v5: every matcher must hold; an exact one names the value
        for i, m in enumerate(matchers):
            m = mapping(m, f"`{field}[{i}]`")
            if str(m.get("matcher") or "").lower() in exact and not m.get("doMatch"):
                if m.get("value") is None:
                    raise CassetteError(f"`{field}[{i}]` is an `{m.get('matcher') or 'exact'}` matcher with no value")
                named.append((f"`{field}[{i}]`", m["value"]))
    elif isinstance(matchers, Mapping):  # v2 to v4: `{exactMatch: value}`
        named = [(f"`{field}.{k}`", v) for k, v in matchers.items() if str(k).lower() in exact and v is not None]
    else:
        raise CassetteError(f"{what} is a {type(matchers).__name__}, not a list of matchers")
    if named:  # Hoverfly requires every matcher to hold; one value is read
        warnings += [f"{at} is another exact value: only {named[0][0]} is read" for at, _ in named[1:]]
        return named[0][1]
    warnings.append(f"{what} is matched by {_kinds(matchers)}, not a value: left out")
    return None


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise CassetteError(f"{what} is {value!r}, not text")
    return str(value)


def _query(req: Mapping[str, Any], warnings: list[str]) -> str:
    """The query string: v5's name -> matchers (or `deprecatedQuery`), v4's
    `queriesWithMatchers`, v1-v4's whole string."""
    query = req.get("query")
    if isinstance(query, Mapping) and all(isinstance(m, list) for m in query.values()):
        pairs = [(str(k), matched_value(m, f"`request.query.{k}`", warnings)) for k, m in query.items()]
        return urlencode([(k, _text(v, f"`request.query.{k}`")) for k, v in pairs if v is not None])
    by_name = req.get("queriesWithMatchers")
    if by_name is not None:
        given = mapping(by_name, "`request.queriesWithMatchers`").items()
        pairs = [(str(k), matched_value(m, f"`request.queriesWithMatchers.{k}`", warnings)) for k, m in given]
        return urlencode([(k, str(v)) for k, v in pairs if v is not None])
    key = "query" if query is not None else "deprecatedQuery"
    whole = matched_value(req.get(key), f"`request.{key}`", warnings)
    return "" if whole is None else _text(whole, f"`request.{key}`").lstrip("?")


def _url(req: Mapping[str, Any], warnings: list[str]) -> str:
    path = matched_value(req.get("path"), "`request.path`", warnings)
    if path is None:
        kinds = _kinds(req["path"]) if req.get("path") else "nothing"
        raise CassetteError(f"`request.path` is matched by {kinds}, not the path that was sent; not read")
    url = _text(path, "`request.path`")
    query = _query(req, warnings)
    url = f"{url}?{query}" if query else url
    host = matched_value(req.get("destination"), "`request.destination`", warnings)
    if host is not None:
        scheme = matched_value(req.get("scheme"), "`request.scheme`", warnings)
        if scheme is None:
            warnings.append("`request.scheme` names no scheme: read as https")
        url = f"{_text(scheme or 'https', '`request.scheme`')}://{_text(host, '`request.destination`')}{url}"
    return url


def _request_headers(req: Mapping[str, Any], warnings: list[str]) -> Headers:
    out: Headers = {}
    for key in ("headers", "headersWithMatchers"):
        for name, matchers in mapping(req.get(key) or {}, f"`request.{key}`").items():
            if isinstance(matchers, list) and all(isinstance(v, str) for v in matchers):
                if matchers:
                    add_header(out, str(name), matchers)  # v1 to v4: the values themselves
                continue
            value = matched_value(matchers, f"`request.{key}.{name}`", warnings)
            if value is not None:
                add_header(out, str(name), [value])
    return out


def _request_body(req: Mapping[str, Any], warnings: list[str]) -> bytes:
    value = matched_value(req.get("body"), "`request.body`", warnings, BODY_EXACT)
    return json_bytes(value) if isinstance(value, Mapping | list) else text_bytes(value, "`request.body`")


def read(item: Any) -> Recorded:
    pair = mapping(item, "the pair")
    req = mapping(pair.get("request"), "`request`")
    resp = mapping(pair.get("response"), "`response`")
    warnings: list[str] = []
    if req.get("requestType") == "template":  # v1: a template's values are globs (Hoverfly's `upgradeV1`)
        req = {k: [{"matcher": "glob", "value": v}] if k in V1_FIELDS and isinstance(v, str) else v for k, v in req.items()}  # fmt: skip
    body_file = None
    if resp.get("encodedBody"):
        body = b64(resp.get("body") or "", "`response.body`")
    else:
        body = text_bytes(resp.get("body"), "`response.body`")
    if resp.get("bodyFile") and body:  # Hoverfly serves `body` (`readResponseBodyFiles`, with a warning)
        warnings.append("`response.bodyFile` beside `response.body`: left out, as Hoverfly does")
    elif resp.get("bodyFile"):
        if not isinstance(resp["bodyFile"], str):
            raise CassetteError(f"`response.bodyFile` is a {type(resp['bodyFile']).__name__}, not a file name")
        if re.match(r"[a-zA-Z][a-zA-Z0-9+.-]*://", resp["bodyFile"]):  # fetched when imported: nothing recorded
            where = str(matched_value(req.get("path"), "`request.path`", []) or "")
            reason = f"no response body was recorded: Hoverfly fetches it from {resp['bodyFile']} (`bodyFile`)"
            return Recorded(uri=where, method="POST", status=0, absent=reason)
        body_file = resp["bodyFile"]
        warnings.append("`response.bodyFile`: read from beside the simulation (Hoverfly reads it from its `-response-body-files-path`)")  # fmt: skip
    if resp.get("templated"):
        absent = rendered_template(body, "Hoverfly (`templated`)")
        if absent is not None:  # what Hoverfly served depended on each request: nothing recorded
            where = str(matched_value(req.get("path"), "`request.path`", []) or "")
            return Recorded(uri=where, method="POST", status=0, absent=absent)
        warnings.append("`response.templated`: the body is a template, read as written")
    warnings += [f"`response.{k}`: a delay, not replayed" for k in DELAY_KEYS if resp.get(k)]
    if req.get("requiresState"):
        warnings.append(f"`request.requiresState` {req['requiresState']!r}: served only in that state, read as any other")  # fmt: skip
    warnings += [f"`response.{k}`: a change of state, not replayed" for k in STATE_KEYS if resp.get(k)]
    warnings += [f"`response.{k}` {resp[k]!r}: run after serving, not replayed" for k in HOOK_KEYS if resp.get(k)]
    method = matched_value(req.get("method"), "`request.method`", warnings)
    if method is None:
        warnings.append("`request.method` names no method (the pair matches every method): read as POST")
    return Recorded(
        uri=_url(req, warnings),
        method=_text(method or "POST", "`request.method`"),
        status=status_code(resp.get("status"), "`response.status`"),
        request_headers=_request_headers(req, warnings),
        request_body=_request_body(req, warnings),
        headers=header_map(resp.get("headers"), "`response.headers`"),
        body=body,
        body_file=body_file,
        body_folder="",
        body_file_by="Hoverfly `bodyFile`, read beside the simulation",
        warnings=warnings,
    )


FORMAT = RecordingFormat("hoverfly", "Hoverfly simulations, JSON", detect, ("data", "pairs"), read)
