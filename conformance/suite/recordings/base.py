"""What every recording format's reader shares: the record a reader makes of one recorded
exchange (`Recorded`), the declaration of a format (`RecordingFormat`), and the one place a
record becomes the suite's `Interaction` (attributed by `registry.api_for_url`, bodies as
bytes, gzip/deflate undone where the content coding says, request JSON parsed).

A reader never builds an Interaction itself, so every format is attributed, decoded and
framed exactly as vcrpy cassettes are (`cassettes._interaction`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..interactions import CassetteError, Interaction, api_of, inflate, json_or_none

Headers = dict[str, list[str]]


@dataclass
class Recorded:
    """One exchange as a recorder stored it, bodies as the bytes recorded."""

    uri: str
    method: str
    status: int
    request_headers: Headers = field(default_factory=dict)
    request_body: bytes = b""
    headers: Headers = field(default_factory=dict)
    body: bytes = b""
    # the recorder stored the response body already decoded whatever its headers say (go-vcr's
    # `uncompressed`: Go's transport undid gzip and said so)
    decoded: bool = False
    content_type: str = ""  # the format's own media type for the body (HAR's `mimeType`), if any


@dataclass(frozen=True)
class RecordingFormat:
    """One recorder's format: `detect` says from the parsed document (its top-level keys)
    whether it is this format, `items_at` where its interactions are, `read` reads one
    (raising CassetteError, ValueError, KeyError or TypeError for one it cannot read).
    vcrpy's has no `read`: vcrpy's own loader reads it (`cassettes.load_cassette`)."""

    name: str
    recorder: str  # who writes it, for docs and messages
    detect: Callable[[Any], bool]
    # the object keys from the document's top to the array of its interactions (`()`: the
    # document is that array), for each interaction's line in a JSON file
    items_at: tuple[str, ...]
    read: Callable[[Any], Recorded] | None = None

    def items(self, doc: Any) -> list[Any]:
        """The interactions of a document `detect` accepted."""
        for key in self.items_at:
            doc = doc[key]
        return list(doc)


def text_bytes(value: Any, what: str) -> bytes:
    """A recorded body: text as UTF-8, YAML `!!binary` (or Ruby's `!binary`) as it is."""
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    raise CassetteError(f"{what} is a {type(value).__name__}, not text")


def b64(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise CassetteError(f"{what} is a {type(value).__name__}, not base64 text")
    try:
        # line breaks are YAML's folding of a long scalar; any other non-alphabet byte is damage
        return base64.b64decode("".join(value.split()).encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise CassetteError(f"{what} is not base64 ({exc})") from None


def header_map(raw: Any, what: str) -> Headers:
    """Headers as a name -> values mapping (go-vcr and VCR: `{Name: [v, ...]}`, R's vcr:
    `{Name: v}`; an empty list for none), names lower-cased, one name's values kept in order."""
    out: Headers = {}
    if raw is None or raw == []:
        return out
    if not isinstance(raw, Mapping):
        raise CassetteError(f"{what} is a {type(raw).__name__}, not a mapping of header names")
    for k, v in raw.items():
        values = v if isinstance(v, list) else [v]
        add_header(out, str(k), values)
    return out


def add_header(out: Headers, name: str, values: list[Any]) -> None:
    texts = [x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in values if x is not None]
    out.setdefault(name.lower(), []).extend(texts)


def _coding(headers: Headers) -> str:
    values = headers.get("content-encoding") or [""]
    return values[0].strip().lower()


def _decoded(raw: bytes, coding: str, what: str) -> tuple[bytes, bool]:
    """`raw` with its content coding undone, and whether the body handed on is identity
    coded. A body whose coding says gzip or deflate but whose bytes are not compressed
    (no gzip magic, no zlib header) was decoded by the client before the recorder saw it
    (curl under R's vcr, browsers under HAR): it is read as it is."""
    if coding not in ("gzip", "deflate") or not raw:
        return raw, False
    compressed = raw[:2] == b"\x1f\x8b" if coding == "gzip" else raw[:1] == b"\x78"
    return (inflate(raw, coding, what) if compressed else raw), True


def interaction_of(label: str, index: int, rec: Recorded) -> Interaction:
    """The suite's Interaction for one record, as `cassettes._interaction` makes a vcrpy
    one: content coding undone (the `content-encoding` header then dropped and
    `content-length` set to the decoded length, as vcrpy's `decode_response` does), the
    request body parsed as JSON where it is JSON, the response body where it is no stream."""
    request_raw, _ = _decoded(rec.request_body, _coding(rec.request_headers), "request body")
    headers = {k: list(v) for k, v in rec.headers.items()}
    body = rec.body
    if not rec.decoded:
        body, identity = _decoded(rec.body, _coding(headers), "response body")
        if identity:
            headers.pop("content-encoding", None)
            headers["content-length"] = [str(len(body))]
    ctype = (headers.get("content-type") or [rec.content_type])[0]
    inter = Interaction(
        label,
        index,
        rec.uri,
        api_of(rec.uri),
        json_or_none(request_raw) if request_raw else None,
        rec.status,
        ctype,
        body,
        headers=headers,
        request_raw=request_raw,
        method=(rec.method or "POST").upper(),
        request_headers={k: ", ".join(v) for k, v in rec.request_headers.items()},
    )
    if not inter.is_stream:
        inter.response_json = json_or_none(body)
    return inter


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise CassetteError(f"{what} is a {type(value).__name__ if value is not None else 'null'}, not a mapping")
    return value


def status_code(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise CassetteError(f"{what} is {value!r}, not an HTTP status code")
    try:
        return int(str(value).split()[0]) if isinstance(value, str) else value
    except (ValueError, IndexError):
        raise CassetteError(f"{what} is {value!r}, not an HTTP status code") from None
