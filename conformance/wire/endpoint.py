"""A request's method, URL and headers, judged against its API's record (`WireApi.endpoint`)
and against a recorded request: the request is the method, the URL and the headers as well
as the body.

`problems` is TC109's reading: a rendered request must use the record's method, the path
its docs give for a streamed or a single reply, the model id the caller asked for, spelled
as the docs say (percent-encoded as one path segment, or a body field), the stream choice
(its own path, or a body field) and the headers the docs require. `differences` is TC802's:
a request rendered back from a recorded one has the recorded method, the operation its path
names and the model segment it holds (under a base URL that may add a prefix), the query
parameters the record names and the headers whose value is part of the request, where the
recording kept them. URLs are compared as RFC 3986 §6.2.2 normalizes them
(`URI_FORMS`); nothing here knows a provider.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from .api import Endpoint, Equivalence, WireApi, value_at

RFC3986 = "https://www.rfc-editor.org/rfc/rfc3986"
URI_FORMS = Equivalence(
    "percent-encodings in either case, and an unreserved character percent-encoded or not",
    "URIs that differ in the replacement of an unreserved character with its corresponding "
    "percent-encoded US-ASCII octet are equivalent: they identify the same resource",
    RFC3986 + "#section-6.2.2.2",
)
"""What every URL comparison here applies (RFC 3986 §6.2.2.1: the hex digits of a
percent-encoding are case-insensitive; §6.2.2.2, quoted)."""

MODEL_SEGMENT = Equivalence(
    "a model segment naming the same model id, its reserved characters percent-encoded or not",
    'pchar = unreserved / pct-encoded / sub-delims / ":" / "@"',
    RFC3986 + "#section-3.3",
)
"""What a model segment comparison applies besides `URI_FORMS`: the segment names the model
id (`ModelIn`, `where: path`), which the server reads by decoding it."""

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")


def normalized(text: str) -> str:
    """`text` (a path or a segment) as RFC 3986 §6.2.2.1-2 normalizes it: percent-encodings in
    upper case, those of unreserved characters decoded."""

    def one(m: re.Match[str]) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if ch in _UNRESERVED else f"%{m.group(1).upper()}"

    return _PERCENT.sub(one, text)


def spelled(model: str, encoding: str) -> str:
    """The model id as its path segment spells it: percent-encoded (every byte outside the
    unreserved set) or as it is."""
    return quote(model, safe="") if encoding == "percent" else model


def _pattern(template: str) -> re.Pattern[str]:
    """A path template as a regex matching a path that ends with it (a base URL may add a
    prefix); `{model}` captures one segment."""
    parts = [re.escape(p) for p in template.split("{model}")]
    return re.compile("(?:^|/)" + "(?P<model>[^/?#]*)".join(parts).lstrip("/") + "/?$")


def split_url(url: str) -> tuple[str, str]:
    """(path, query) of a URL or of a path with a query."""
    parts = urlsplit(url)
    return parts.path or "", parts.query or ""


def _template_for(ep: Endpoint, stream: bool) -> str:
    return ep.stream_path if stream and ep.stream_path is not None else ep.path


def model_of(api: WireApi, url: str, body: Any) -> str | None:
    """The model id a request carries where the record says (decoded from its path segment,
    or the body field); None when the record says none, or the request holds none."""
    ep = api.endpoint
    if ep is None:
        return None
    if ep.model.where == "body":
        value = value_at(body, ep.model.pointer) if isinstance(body, Mapping) else None
        return value if isinstance(value, str) else None
    if ep.model.where != "path":
        return None
    path = split_url(url)[0]
    for template in (ep.path, ep.stream_path):
        found = _pattern(template).search(path) if template is not None else None
        if found is not None and "model" in found.groupdict():
            return unquote(found.group("model"))
    return None


MODEL_ID = (
    'canonical §6.3: "Canonical form: `<provider>:<model_name>`"; contract §4.2: "model: <wire model name, '
    'derived from canonical id>"'
)
"""Why the model a request names is the options' model id whole: the provider's name is the
canonical id's prefix, the rest is the model's name, which may hold `:` of its own."""


def _with_sentence(problem: str, cite: str) -> str:
    return f"{problem} ({cite})" if cite else problem


def _path_problems(ep: Endpoint, method: str, path: str, *, stream: bool, model: str | None) -> list[str]:
    out: list[str] = []
    if method.upper() != ep.method.upper():
        out.append(_with_sentence(f"method {method}, the docs' {ep.method}", ep.cite()))
    template = _template_for(ep, stream)
    found = _pattern(template).search(path)
    if found is None:
        other = _template_for(ep, not stream)
        kind = "a streaming request" if stream else "a request for one reply"
        if other != template and _pattern(other).search(path) is not None:
            where = "non-streaming" if stream else "streaming"
            out.append(
                _with_sentence(
                    f"{method} {path}: {kind} sent to the {where} endpoint {other} (want {template})", ep.cite()
                )
            )
        elif ep.model.where == "path" and model is not None and _unencoded(path, model):
            out.append(
                _with_sentence(
                    f"{method} {path}: model {model!r} not percent-encoded as one segment ({quote(model, safe='')!r})",
                    ep.model.cite(),
                )
            )
        else:
            out.append(_with_sentence(f"{method} {path}: not the endpoint {template} of {kind}", ep.cite()))
        return out
    if ep.model.where == "path" and "model" in found.groupdict():
        # without a model to hold it to (a request rendered from a recording's reading: the
        # round trip is TC802's), the segment is still held to the record's spelling
        segment = found.group("model")
        out += _segment_problems(ep, segment, model if model is not None else unquote(segment))
    return out


def _unencoded(path: str, model: str) -> bool:
    """Whether the path holds the model id as it is, where its `/` (or another reserved
    character) splits or breaks the segment the template has for it."""
    return model in unquote(path) and quote(model, safe="") not in path


def _cut(model: str, got: str) -> bool:
    """Whether `got` is `model` cut at one of its `:`."""
    pieces = model.split(":")
    return bool(got) and any(got in (":".join(pieces[:i]), ":".join(pieces[i:])) for i in range(1, len(pieces)))


def _segment_problems(ep: Endpoint, segment: str, model: str) -> list[str]:
    got = unquote(segment)
    cite = ep.model.cite()
    if got != model:
        hint = " (cut at a ':')" if _cut(model, got) else ""
        return [_with_sentence(f"the path names model {got!r}{hint}, the request's model is {model!r}", MODEL_ID)]
    want = spelled(model, ep.model.encoding)
    if normalized(segment) != normalized(want):
        return [
            _with_sentence(
                f"model {model!r} spelled {segment!r} in the path, not {ep.model.encoding}-encoded as {want!r}", cite
            )
        ]
    return []


def _stream_field_problems(ep: Endpoint, body: Any, *, stream: bool) -> list[str]:
    if ep.stream_field is None:
        return []
    pointer, value = ep.stream_field
    have = value_at(body, pointer) if isinstance(body, Mapping) else None
    asks = (have == value and type(have) is type(value)) or (have is None and ep.streams_by_default)
    if stream and not asks:
        return [_with_sentence(f"a streaming request without {pointer}: {value!r} (it has {have!r})", ep.cite())]
    if not stream and ep.streams_by_default and have is None:
        return [
            _with_sentence(f"a request for one reply without {pointer}, which the API streams by default", ep.cite())
        ]
    if not stream and asks:
        return [_with_sentence(f"a request for one reply that sets {pointer}: {value!r}", ep.cite())]
    return []


def _header(headers: Mapping[str, str], name: str) -> str | None:
    want = name.lower()
    return next((str(v) for k, v in headers.items() if str(k).lower() == want), None)


def problems(
    api: WireApi,
    method: str,
    path: str,
    headers: Mapping[str, str],
    body: Any,
    *,
    stream: bool,
    model: str | None,
) -> list[str]:
    """What of a rendered request departs from the record's endpoint (`[]`: none, or the
    record states no endpoint): each problem one line naming the docs' sentence. `stream`:
    whether the request asks for a stream; `model`: the model id it must name (None: not
    judged)."""
    ep = api.endpoint
    if ep is None:
        return []
    url_path = split_url(path)[0]
    out = _path_problems(ep, method, url_path, stream=stream, model=model)
    if ep.model.where == "body" and model is not None:
        got = value_at(body, ep.model.pointer) if isinstance(body, Mapping) else None
        if got != model:
            hint = " (cut at a ':')" if isinstance(got, str) and _cut(model, got) else ""
            out.append(
                _with_sentence(f"{ep.model.pointer} is {got!r}{hint}, the request's model is {model!r}", MODEL_ID)
            )
    out += _stream_field_problems(ep, body, stream=stream)
    for h in ep.headers:
        have = _header(headers, h.name)
        if have is None:
            out.append(_with_sentence(f"no {h.name} header", h.cite()))
        elif h.value is not None and have.strip() != h.value:
            out.append(_with_sentence(f"header {h.name}: {have!r}, the docs' {h.value!r}", h.cite()))
    return out


def _operation(ep: Endpoint, path: str) -> tuple[str, str | None] | None:
    """Which of the record's paths `path` is (its template) and the model id its model
    segment names, or None when it is none of them. The segment is one segment (`_pattern`),
    decoded to the id the server reads (`MODEL_SEGMENT`): a reserved character a path
    segment may carry as it is (RFC 3986 §3.3's pchar, `:` and `@`) names the same id
    percent-encoded or not, as Bedrock's `...-v1:0` does from clients that send it raw
    (R's httr2 under ellmer) and percent-encoded (botocore)."""
    for template in dict.fromkeys(t for t in (ep.stream_path, ep.path) if t is not None):
        found = _pattern(template).search(path)
        if found is not None:
            return template, unquote(found.group("model")) if "model" in found.groupdict() else None
    return None


OUTSIDE_BODY = ("method:", "URL path:", "URL query ", "header ")
"""How each of `differences`' lines starts (a check tells them from body differences)."""


def differences(
    api: WireApi,
    recorded: tuple[str, str, Mapping[str, str]],
    rendered: tuple[str, str, Mapping[str, str]],
) -> list[str]:
    """How a request rendered back from a recorded one departs from it outside the body:
    `(method, URL or path, headers)` each. The method always; with a record that states its
    endpoint, the path's operation (which of `Endpoint.path`/`stream_path` it is) and model
    segment, the query parameters it names (`Endpoint.query`) and the headers whose value is
    part of the request (`Header.round_trip`, where the recording kept them) must be the
    recorded ones."""
    rec_method, rec_url, rec_headers = recorded
    ren_method, ren_url, ren_headers = rendered
    out: list[str] = []
    if rec_method.upper() != ren_method.upper():
        out.append(f"method: rendered {ren_method}, recorded {rec_method}")
    ep = api.endpoint
    if ep is None:
        return out
    rec_path, rec_query = split_url(rec_url)
    ren_path, ren_query = split_url(ren_url)
    recorded_op = _operation(ep, rec_path)
    # the base URL (its prefix, a version, a project's route) is the harness's: compared are
    # the operation the path names and the model segment it holds; a recorded path the
    # record does not describe (another layout of the service) is not compared
    if recorded_op is not None and _operation(ep, ren_path) != recorded_op:
        out.append(f"URL path: rendered {ren_path}, recorded {rec_path}")
    want, got = parse_qsl(rec_query, keep_blank_values=True), parse_qsl(ren_query, keep_blank_values=True)
    for name in ep.query:
        a, b = sorted(v for k, v in want if k == name), sorted(v for k, v in got if k == name)
        if a != b:
            out.append(f"URL query {name}: rendered {b or 'none'}, recorded {a or 'none'}")
    for h in ep.headers:
        have = _header(rec_headers, h.name) if h.round_trip else None
        if have is None:
            continue  # the recording did not keep it (a recorder's filter): nothing to compare
        mine = _header(ren_headers, h.name)
        if mine is None or mine.strip() != have.strip():
            out.append(f"header {h.name}: rendered {mine!r}, recorded {have!r}")
    return out
