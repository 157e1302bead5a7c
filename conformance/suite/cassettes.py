"""Reading recorded HTTP cassettes (vcrpy YAML v1 and its common variants) into interactions.

vcrpy's own loader does the work where it can: `vcr.serialize.deserialize` with the YAML
serializer reads plain cassettes (bodies as strings or `!!binary`), and
`vcr.filters.decode_response` undoes gzip/deflate content encoding. One variant needs a
pre-pass vcrpy cannot do: pydantic-ai's cassettes store JSON bodies as YAML mappings under
`parsed_body` (its tests/json_body_serializer.py), which `Request(**dict)` rejects; those
bodies are turned back into JSON strings first, as that serializer does on load.

Bad cassettes never raise out of here: a file that cannot be read becomes a `Cassette`
with `error` set, which the suite reports as a failed TC800 case.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from vcr import serialize
from vcr.filters import decode_response
from vcr.serializers import yamlserializer

# request URL path -> wire API (the names adapters declare as `wire_api`)
API_BY_PATH: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"/v1/messages/count_tokens"), "anthropic-count-tokens"),
    (re.compile(r"/v1/messages(\?|$)"), "anthropic-messages"),
    (re.compile(r"/chat/completions(\?|$)"), "openai-chat-completions"),
    (re.compile(r"/v1/responses(\?|$)"), "openai-responses"),
    (re.compile(r":(stream)?[gG]enerateContent"), "gemini-generate-content"),
    (re.compile(r"/api/(chat|generate)(\?|$)"), "ollama-native"),
]


def api_of(uri: str) -> str | None:
    for pattern, api in API_BY_PATH:
        if pattern.search(uri):
            return api
    return None


@dataclass
class Interaction:
    """One recorded request/response pair, bodies decoded."""

    cassette: str
    index: int
    uri: str
    api: str | None
    request_body: Any
    status: int
    content_type: str
    response_text: str
    response_json: Any = None
    headers: dict[str, Any] = field(default_factory=dict)

    @property
    def synthetic(self) -> bool:
        """Hand-written (cassettes/build.py), so its token counts are not evidence."""
        return "x-turnspec-synthetic" in self.headers

    @property
    def label(self) -> str:
        return f"{self.cassette}#{self.index}"

    @property
    def is_stream(self) -> bool:
        if "event-stream" in self.content_type:
            return True
        head = self.response_text.lstrip()[:200]
        return head.startswith(("event:", "data:"))

    @property
    def request_stream(self) -> bool:
        return isinstance(self.request_body, dict) and bool(self.request_body.get("stream"))


@dataclass
class Cassette:
    path: Path
    label: str
    interactions: list[Interaction] = field(default_factory=list)
    error: str | None = None


def _unparse_bodies(data: dict[str, Any]) -> None:
    """pydantic-ai `parsed_body` mappings -> the JSON string vcrpy expects under `body`."""
    for it in data.get("interactions") or []:
        req, resp = it.get("request", {}), it.get("response", {})
        if "parsed_body" in req:
            req["body"] = json.dumps(req.pop("parsed_body"))
        if "parsed_body" in resp:
            resp["body"] = {"string": json.dumps(resp.pop("parsed_body"))}


class _Serializer:
    """vcrpy serializer protocol over an already-loaded (and pre-passed) dict."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def deserialize(self, _: str) -> dict[str, Any]:
        return self.data


def load_cassette(path: Path, label: str | None = None) -> Cassette:
    label = label or str(path)
    cas = Cassette(path, label)
    try:
        data = yamlserializer.deserialize(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or "interactions" not in data:
            raise ValueError("not a vcrpy cassette (no `interactions`)")
        _unparse_bodies(data)
        requests, responses = serialize.deserialize("", _Serializer(data))[:2]
    except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError, yaml.YAMLError) as exc:
        cas.error = f"cannot read cassette: {exc}"
        return cas
    for i, (req, resp) in enumerate(zip(requests, responses, strict=True)):
        try:
            cas.interactions.append(_interaction(label, i, req, resp))
        except (ValueError, KeyError, TypeError) as exc:
            cas.error = f"interaction {i}: {exc}"
    return cas


def _interaction(label: str, i: int, req: Any, resp: dict[str, Any]) -> Interaction:
    resp = decode_response(resp)
    raw = req.body
    body: Any = None
    if raw:
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
    headers = {k.lower(): v for k, v in (resp.get("headers") or {}).items()}
    ctype = headers.get("content-type", [""])
    ctype = ctype[0] if isinstance(ctype, list) and ctype else str(ctype)
    string = resp["body"]["string"]
    text = string.decode("utf-8", errors="replace") if isinstance(string, bytes) else str(string)
    inter = Interaction(
        label,
        i,
        str(req.uri),
        api_of(str(req.uri)),
        body,
        int(resp["status"]["code"]),
        ctype,
        text,
        headers=headers,
    )
    if not inter.is_stream:
        try:
            inter.response_json = json.loads(text) if text.strip() else None
        except ValueError:
            inter.response_json = None
    return inter


def iter_cassettes(root: Path) -> Iterator[Cassette]:
    """Every `*.yaml`/`*.yml` under `root`, sorted, labelled relative to `root`."""
    if root.is_file():
        yield load_cassette(root, root.name)
        return
    for p in sorted([*root.rglob("*.yaml"), *root.rglob("*.yml")]):
        yield load_cassette(p, str(p.relative_to(root)))
