"""Reading recorded HTTP cassettes (vcrpy YAML v1 and its common variants) into interactions.

vcrpy's own loader does the work where it can: `vcr.serialize.deserialize` with the YAML
serializer reads plain cassettes (bodies as strings or `!!binary`); content codings are
undone here, as every other format's are (`recordings.base.decoded_response`, over
`content_coding.decode_content`), not by vcrpy's `decode_response`. One variant needs a
pre-pass vcrpy cannot do: pydantic-ai's cassettes store JSON bodies as YAML mappings under
`parsed_body` (its tests/json_body_serializer.py), which `Request(**dict)` rejects; those
bodies are turned back into JSON strings first, as that serializer does on load.

Each interaction is attributed to a wire API by the `WireApi` records
(`conformance.wire.registry.api_for_url`): an endpoint no record matches stays
unattributed (`api` None) and is skipped with a reason, never forced onto a near match.
Whether a response is a stream, and how it is framed, comes from the Content-Type (the
registered framings' media types) or else from the record.

Bodies stay bytes: a response body reaches the checks and the adapters as the bytes that
were recorded (`string:` text encoded as UTF-8, `!!binary` as it is), with the content
coding undone only where the response's `content-encoding` says so (gzip, x-gzip, deflate,
br, zstd, identity, and lists of them: `content_coding`); a request body likewise, per the
request's `content-encoding`. Text is decoded only where
a framing says its frames are text, or for a JSON body.

Bad cassettes never raise out of here: a file that cannot be read becomes a `Cassette`
with `error` set (one line: the file, and the line where YAML says), which the suite
reports as a failed TC800 case. Reading is bounded: file size, YAML nesting and alias
expansion (a billion-laughs cassette is refused before PyYAML builds it).
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from ..wire import recording_files
from ..wire.content_coding import MissingDecoder
from ..wire.recording_files import JSON_SUFFIXES as JSON_SUFFIXES
from ..wire.recording_files import SUFFIXES as SUFFIXES
from .interactions import Cassette as Cassette
from .interactions import CassetteError as CassetteError
from .interactions import Interaction as Interaction
from .interactions import api_of, json_or_none

MAX_CASSETTE_BYTES = 256 * 1024 * 1024
MAX_YAML_DEPTH = 200
MAX_YAML_NODES = 5_000_000
"""Nodes a cassette may hold once its aliases are expanded (bounds billion laughs)."""
INTERACTION_KEYS = ("interactions", "http_interactions", "requests")
"""The top-level keys whose sequence items are the interactions (`check_yaml_bounds`'s lines;
`requests`: vcrpy's own cassette dict, which LangChain's serializer writes, `_paired`)."""

try:  # libyaml's parser when PyYAML was built with it
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _Loader = yaml.SafeLoader


def check_yaml_bounds(text: str) -> list[int]:
    """Refuse, before construction, YAML whose nesting or expanded aliases exceed the bounds;
    return the 1-based line on which each item of the top-level `interactions` (or
    `http_interactions`) sequence, or of a top-level sequence, or each document of a stream of
    several, starts (for CI annotations; empty when the file is not shaped that way).

    Walks PyYAML's event stream (no recursion, nothing built), counting for every anchor
    the nodes it stands for, so an alias costs what it expands to.
    """
    sizes: dict[str, int] = {}
    stack: list[list[Any]] = [[None, 0]]  # [anchor, expanded nodes so far]
    lines: list[int] = []
    roots: list[
        int
    ] = []  # where each document's top node starts: a stream of several is one interaction each (httpmock)
    top_is_map = False
    top_nodes = 0  # nodes begun directly in the top-level mapping: keys and values alternate
    interactions_next = False  # the last top-level key was `interactions`
    items_depth: int | None = None  # the stack depth inside the `interactions` sequence
    try:
        for ev in yaml.parse(text, Loader=_Loader):
            line = ev.start_mark.line + 1 if ev.start_mark is not None else 0
            if isinstance(ev, yaml.NodeEvent) and not isinstance(ev, yaml.CollectionEndEvent):
                depth = len(stack)
                if depth == 1:
                    roots.append(line)
                if depth == 1 and isinstance(ev, yaml.MappingStartEvent):
                    top_is_map = True
                elif depth == 1 and isinstance(ev, yaml.SequenceStartEvent):
                    items_depth = 2  # a list of interactions (php-vcr)
                elif depth == 2 and top_is_map:
                    is_key = top_nodes % 2 == 0
                    top_nodes += 1
                    if is_key:  # vcrpy's and go-vcr's `interactions`, Ruby and R VCR's `http_interactions`
                        interactions_next = isinstance(ev, yaml.ScalarEvent) and ev.value in INTERACTION_KEYS
                    elif interactions_next and isinstance(ev, yaml.SequenceStartEvent):
                        items_depth = 3
                elif depth == items_depth:
                    lines.append(line)
            if isinstance(ev, yaml.CollectionStartEvent):
                stack.append([ev.anchor, 1])
                if len(stack) > MAX_YAML_DEPTH:
                    raise CassetteError(f"line {line}: YAML nested deeper than {MAX_YAML_DEPTH} levels")
                continue
            if isinstance(ev, yaml.CollectionEndEvent):
                if len(stack) == items_depth:
                    items_depth = None
                anchor, n = stack.pop()
                if anchor:
                    sizes[anchor] = n
            elif isinstance(ev, yaml.ScalarEvent):
                n = 1
                if ev.anchor:
                    sizes[ev.anchor] = 1
            elif isinstance(ev, yaml.AliasEvent):
                n = sizes.get(str(ev.anchor), 1)
            else:
                continue
            stack[-1][1] += n
            if stack[-1][1] > MAX_YAML_NODES:
                raise CassetteError(
                    f"line {line}: aliases expand to more than {MAX_YAML_NODES} nodes (a billion-laughs file?)"
                )
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise CassetteError(f"{where}not YAML: {getattr(exc, 'problem', None) or exc}") from None
    return roots if len(roots) > 1 else lines


def _paired(data: Any) -> Any:
    """vcrpy's in-memory cassette, `{requests: [...], responses: [...]}`, as a cassette file
    holds it: `{interactions: [{request, response}]}`. LangChain's integration tests write
    the former (`langchain_tests.conftest.CustomSerializer`, gzip-compressed YAML); vcrpy's
    own serializers write the latter."""
    if not isinstance(data, dict) or "interactions" in data or set(data) - {"requests", "responses", "version"}:
        return data
    requests, responses = data.get("requests"), data.get("responses")
    if not isinstance(requests, list) or not isinstance(responses, list):
        return data
    if len(requests) != len(responses):
        raise CassetteError(f"{len(requests)} requests but {len(responses)} responses: they must pair one to one")
    return {
        "version": 1,
        "interactions": [{"request": q, "response": r} for q, r in zip(requests, responses, strict=True)],
    }


def _unparse_bodies(data: dict[str, Any]) -> None:
    """pydantic-ai `parsed_body` mappings -> the JSON string vcrpy expects under `body`."""
    for it in data.get("interactions") or []:
        req, resp = it.get("request", {}), it.get("response", {})
        if "parsed_body" in req:
            req["body"] = json.dumps(req.pop("parsed_body"))
        if "parsed_body" in resp:
            resp["body"] = {"string": json.dumps(resp.pop("parsed_body"))}


# vcr-but-better (a Rust-cored Python recorder) writes vcrpy's layout with typed bodies and a
# bare status: its README's "Cassette format" says "JSON bodies are stored as structured
# YAML - not escaped strings" (`body: {type: json, content: <the JSON value>}`), an SSE
# stream "is recorded as readable text" (`body: {type: text, content: <the text>}`), and
# the response's `status: 200` is the code alone
_TYPED_BODIES = ("json", "text")


def _typed_body(body: Any, where: str) -> Any:
    """A vcr-but-better `{type, content}` body as the string vcrpy keeps; any other body as it is."""
    if not isinstance(body, dict) or set(body) != {"type", "content"}:
        return body
    kind, content = body["type"], body["content"]
    if kind == "json":
        return json.dumps(content)
    if kind == "text" and isinstance(content, str | None):
        return content or ""
    raise CassetteError(
        f"{where}: a typed body of type {kind!r} (vcr-but-better's documented types are {', '.join(_TYPED_BODIES)})"
    )


def _untype_bodies(data: dict[str, Any]) -> None:
    """vcr-but-better's typed bodies and bare response status -> vcrpy's `body` string,
    `body: {string}` and `status: {code}`."""
    for i, it in enumerate(data.get("interactions") or []):
        if not isinstance(it, dict):
            continue
        req, resp = it.get("request"), it.get("response")
        if isinstance(req, dict) and "body" in req:
            req["body"] = _typed_body(req["body"], f"interaction {i} request")
        if isinstance(resp, dict):
            if "body" in resp and isinstance(resp["body"], dict) and "string" not in resp["body"]:
                resp["body"] = {"string": _typed_body(resp["body"], f"interaction {i} response")}
            status = resp.get("status")
            if isinstance(status, int) and not isinstance(status, bool):
                resp["status"] = {"code": status, "message": ""}


class _Serializer:
    """vcrpy serializer protocol over an already-loaded (and pre-passed) dict."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def deserialize(self, _: str) -> dict[str, Any]:
        return self.data


def load_cassette(path: Path, label: str | None = None) -> Cassette:
    """The recording at `path`, in whichever format `recordings.FORMATS` recognises by its
    content (vcrpy, go-vcr, Ruby or R VCR, HAR, nock; YAML or JSON by the file's suffix).
    Never raises: what cannot be read is `error`, a YAML or JSON file of no known format `skipped`."""
    from . import recordings  # function-level: the formats' readers load when a file is read

    label = label or str(path)
    cas = Cassette(path, label)
    try:
        if not path.is_file():
            raise CassetteError("not a regular file")
        if path.stat().st_size > MAX_CASSETTE_BYTES:
            raise CassetteError(f"larger than {MAX_CASSETTE_BYTES} bytes")
        raw = recording_files.unwrap(path.read_bytes(), MAX_CASSETTE_BYTES)
        if recording_files.is_trace(path):  # bytes, not text: httprr's HTTP messages as sent
            trace, lines = recordings.httprr.parse(raw)
            cas.format = recordings.httprr.FORMAT.name
            return recordings.read(recordings.httprr.FORMAT, cas, trace, lines)
        text = raw.decode("utf-8")
        as_json = recording_files.is_json(path)
        lines = [] if as_json else check_yaml_bounds(text)
        # function-level imports: vcrpy (and httpx under it) loads only when a cassette is read
        from vcr import serialize

        data = _paired(recordings.parse_json(text) if as_json else recordings.parse_yaml(text))
        fmt = recordings.detect(data)
        if fmt is None:  # YAML or JSON of no recorder's layout (a package.json, a config file)
            cas.skipped = f"not a recording of a format read here ({recordings.names()})"
            return cas
        cas.format = fmt.name
        lines = recordings.json_lines(text, fmt) if as_json else lines
        if fmt.read is not None:  # every format but vcrpy's, which vcrpy reads below
            return recordings.read(fmt, cas, data, lines)
        _unparse_bodies(data)
        _untype_bodies(data)
        requests, responses = serialize.deserialize("", _Serializer(data))[:2]
    except CassetteError as exc:
        cas.error = f"cannot read cassette {path}: {exc}"
        return cas
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        cas.error = f"cannot read cassette {where}: {getattr(exc, 'problem', None) or type(exc).__name__}"
        return cas
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, AttributeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        cas.error = f"cannot read cassette {path}: {first}"
        return cas
    return _vcrpy_interactions(cas, requests, responses, lines)


def _vcrpy_interactions(cas: Cassette, requests: list[Any], responses: list[Any], lines: list[int]) -> Cassette:
    """vcrpy's requests and responses into `cas`, located and reported as every other
    format's are (`recordings.read`)."""
    from . import recordings  # function-level: the formats' readers load when a file is read

    for i, (req, resp) in enumerate(zip(requests, responses, strict=True)):
        line = lines[i] if i < len(lines) else None
        where = recordings.where_in(cas, line)
        try:
            inter = _interaction(cas.label, i, req, resp)
        except MissingDecoder as exc:
            raise MissingDecoder(f"cannot read cassette {where}: vcrpy interaction {i}: {exc}") from None
        except (ValueError, KeyError, TypeError, OSError, zlib.error) as exc:
            if cas.error is None:
                cas.error = f"cannot read cassette {where}: vcrpy interaction {i}: {recordings.first_line(exc)}"
            continue
        inter.path, inter.line = cas.path, line
        cas.interactions.append(inter)
    return cas


def _bytes(value: Any) -> bytes:
    if value is None:
        return b""
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _request_bytes(req: Any) -> bytes:
    """The request body as recorded, with its content coding undone when its own
    `content-encoding` header says so (vcrpy undoes it for responses only)."""
    from .recordings.base import request_bytes  # function-level: the readers load when a file is read

    headers = {str(k).lower(): v for k, v in (getattr(req, "headers", None) or {}).items()}
    return request_bytes(_bytes(req.body), headers)


def _request_headers(req: Any) -> dict[str, str]:
    """The recorded request's headers, names lower-cased, several values of one name joined
    with ", " (RFC 9110 §5.3: "a recipient MAY combine multiple field lines ... into one
    field line ... separated by a comma")."""
    out: dict[str, str] = {}
    for k, v in (getattr(req, "headers", None) or {}).items():
        values = v if isinstance(v, list) else [v]
        # a client that handed its HTTP library bytes (botocore) is recorded as `!!binary`
        text = ", ".join(
            x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in values if x is not None
        )
        name = str(k).lower()
        out[name] = f"{out[name]}, {text}" if name in out else text
    return out


def _legacy_httpx(resp: dict[str, Any]) -> dict[str, Any]:
    """A response in the layout vcrpy's httpx stub wrote before vcrpy 6 (`status_code`,
    `http_version`, `headers`, `content`: httpx's own names) as every other vcrpy response
    is laid out (`status: {code}`, `body: {string}`). vcrpy still plays such cassettes back:
    `vcr.stubs.httpx_stubs._deserialize_response` says "Cassette format generated for HTTPX
    requests by older versions of vcrpy. We restructure the content to resemble what a
    regular cassette looks like" and does the same. `content` was httpx's decoded body, so a
    `content-encoding` still named in its headers is the case `undo_coding` reads as it is."""
    if "status_code" not in resp or "status" in resp or "body" in resp:
        return resp
    return {
        "headers": resp.get("headers") or {},
        "body": {"string": resp.get("content")},
        "status": {"code": resp["status_code"]},
    }


def _interaction(label: str, i: int, req: Any, resp: dict[str, Any]) -> Interaction:
    from .recordings.base import decoded_response  # function-level: the readers load when a file is read

    resp = _legacy_httpx(resp)
    raw = _request_bytes(req)
    body: Any = None
    if raw:
        body = json_or_none(raw)
    headers: dict[str, Any] = {}
    for k, v in (resp.get("headers") or {}).items():  # one name's values in order, whatever its case
        values = v if isinstance(v, list) else [v]
        headers.setdefault(str(k).lower(), []).extend(values)
    data = decoded_response(_bytes(resp["body"]["string"]), headers)
    ctype = headers.get("content-type", [""])
    ctype = str(ctype[0]) if isinstance(ctype, list) and ctype else str(ctype)
    inter = Interaction(
        label,
        i,
        str(req.uri),
        api_of(str(req.uri)),
        body,
        int(resp["status"]["code"]),
        ctype,
        data,
        headers=headers,
        request_raw=raw,
        method=str(getattr(req, "method", None) or "POST").upper(),
        request_headers=_request_headers(req),
    )
    if not inter.is_stream:
        inter.response_json = json_or_none(data)
    return inter


def iter_cassettes(root: Path) -> Iterator[Cassette]:
    """Every recording (`*.yaml`, `*.yml`, `*.json`, `*.har`, `*.httprr`, each also `.gz`) under `root`, sorted, labelled
    relative to `root`."""
    if root.is_file():
        yield load_cassette(root, root.name)
        return
    found: list[Path] = []
    unreadable: list[tuple[Path, str]] = []

    def walk_error(exc: OSError) -> None:
        where = Path(exc.filename) if exc.filename else root
        unreadable.append((where, exc.strerror or str(exc)))

    for folder, _dirs, files in os.walk(root, onerror=walk_error):  # never follows symlinked folders
        found += [Path(folder) / f for f in files if recording_files.is_recording_name(f)]
    for where, why in unreadable:
        label = str(where.relative_to(root)) if where.is_relative_to(root) else str(where)
        yield Cassette(where, label, error=f"cannot read folder: {why}")
    for p in sorted(found):
        yield load_cassette(p, str(p.relative_to(root)))
