"""What every recording format's reader shares: the record a reader makes of one recorded
exchange (`Recorded`), the declaration of a format (`RecordingFormat`), and the one place a
record becomes the suite's `Interaction` (attributed by `registry.api_for_url`, bodies as
bytes, content codings undone where the headers say (`undo_coding`, over
`content_coding.decode_content`), request JSON parsed).

A reader never builds an Interaction itself, so every format is attributed, decoded and
framed exactly as vcrpy cassettes are (`cassettes._interaction`).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...wire.content_coding import (
    CODINGS,
    ContentCodingError,
    MissingDecoder,
    TooLarge,
    carries_signature,
    codings_of,
    decode_content,
)
from ..interactions import CassetteError, Interaction, api_of, json_or_none

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
    # the response body is this file (`body_file`), in the folder `body_folder` names beside the
    # cassette (`{stem}`: the cassette's name without its suffix; empty: the cassette's own
    # folder): R's vcr `file: true` (`<cassette>-files/`), a Playwright HAR's `_file` (beside it)
    body_file: str | None = None
    body_folder: str = "{stem}-files"
    body_file_by: str = "R's vcr `file: true`"  # who stored it so, for the error that it is missing
    # why the recorder kept no response to replay (a browser's failed request, a body it left
    # out): the interaction is set aside with this reason (`Cassette.set_aside`), never judged
    absent: str | None = None
    # departures from the recorder's layout that lose nothing (a field read another way, one
    # that only times the replay): each names its field, and is said on the interaction's TC800
    # case (`Cassette.warnings`), never dropped silently
    warnings: list[str] = field(default_factory=list)


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
    # the document is one interaction, not a list of them (a WireMock stub mapping file)
    single: bool = False

    def items(self, doc: Any) -> list[Any]:
        """The interactions of a document `detect` accepted."""
        if self.single:
            return [doc]
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


def _coding(headers: Mapping[str, Any]) -> str:
    """The Content-Encoding of lower-cased `headers` (a name's values joined, RFC 9110 §5.3)."""
    values = headers.get("content-encoding") or []
    values = values if isinstance(values, list) else [values]
    return ", ".join(v.decode("latin-1") if isinstance(v, bytes) else str(v) for v in values if v is not None)


def _is_text(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def undo_coding(raw: bytes, coding: str, what: str) -> tuple[bytes, bool]:
    """`raw` with the content coding(s) `coding` undone (`decode_content`), and whether a
    coding was named (the body handed on is then identity coded).

    A body whose coding says gzip or zstd but whose bytes do not open as those always do, or
    (for `br` and `deflate`, which may have no signature) one that does not decode and reads
    as UTF-8 text, was decoded by the client before the recorder saw it (curl under R's
    vcr, browsers under HAR, httpx under vcrpy): it is read as it is. Compressed bytes are
    not UTF-8 (gzip's magic, a zlib header and zstd's magic are not), so text is that case."""
    codings = codings_of(coding)
    if not raw or not codings:
        return raw, False
    signed = carries_signature(raw, codings[-1])
    if signed is False:
        return raw, True
    try:
        return decode_content(raw, coding, what), True
    except (ContentCodingError, MissingDecoder) as exc:
        if signed is None and codings[-1] in CODINGS and not isinstance(exc, TooLarge) and _is_text(raw):
            return raw, True
        raise


def decoded_response(body: bytes, headers: dict[str, list[str]], what: str = "response body") -> bytes:
    """The response `body` with its coding undone, `headers` (lower-cased names) then saying
    so: `content-encoding` dropped, `content-length` the decoded length (as vcrpy's
    `decode_response` does)."""
    out, undone = undo_coding(body, _coding(headers), what)
    if undone:
        headers.pop("content-encoding", None)
        headers["content-length"] = [str(len(out))]
    return out


def request_bytes(raw: bytes, headers: Mapping[str, Any]) -> bytes:
    """A request body with the coding its own `content-encoding` names undone."""
    return undo_coding(raw, _coding(headers), "request body")[0]


MAX_BODY_FILE = 256 * 1024 * 1024
"""The largest body file read (R's vcr `file: true`), the cassette's own bound."""


def body_file(cassette: Path, name: str, folder_name: str = "{stem}-files", by: str = "R's vcr `file: true`") -> bytes:
    """A response body its recorder stored in a file of its own: `name` in the folder
    `folder_name` names beside the cassette (R's vcr `file: true`: `<cassette name>-files`;
    a Playwright HAR's `_file`: the HAR's own folder), and nowhere else. A name that leaves
    the folder (`..`, an absolute path, a symlink pointing out) or a missing file is an error."""
    folder = cassette.parent / folder_name.format(stem=cassette.stem) if folder_name else cassette.parent
    shown = name if len(name) <= 60 else f"{name[:40]} ..."  # a text body where a name should be
    if not name or Path(name).is_absolute() or "\\" in name:
        raise CassetteError(f"body file {shown!r} is not a name inside {folder}; not read")
    target = folder / name
    if folder.is_symlink():
        raise CassetteError(f"body folder {folder} is a symlink; not read")
    try:
        root = folder.resolve(strict=True)
        real = target.resolve(strict=True)
    except (OSError, RuntimeError):
        raise CassetteError(f"body file {folder / shown} does not exist ({by}); not read") from None
    if not real.is_relative_to(root):
        raise CassetteError(f"body file {folder / shown} leads out of {folder}; not read")
    if not real.is_file():
        raise CassetteError(f"body file {target} is not a regular file; not read")
    if real.stat().st_size > MAX_BODY_FILE:
        raise CassetteError(f"body file {target} is larger than {MAX_BODY_FILE} bytes; not read")
    return real.read_bytes()


def interaction_of(label: str, index: int, rec: Recorded, cassette: Path | None = None) -> Interaction:
    """The suite's Interaction for one record (`cassette`: the file it is in, where a body
    file is looked for), as `cassettes._interaction` makes a vcrpy one: content coding undone
    (`decoded_response`), the request body parsed as JSON where it is JSON, the response body
    where it is no stream."""
    request_raw = request_bytes(rec.request_body, rec.request_headers)
    headers = {k: list(v) for k, v in rec.headers.items()}
    body = rec.body
    if rec.body_file is not None:
        if cassette is None:
            raise CassetteError("the response body is in a file of its own, and the cassette has no path")
        body = body_file(cassette, rec.body_file, rec.body_folder, rec.body_file_by)
    if not rec.decoded:
        body = decoded_response(body, headers)
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


def response_status(value: Any, keys: tuple[str, ...] = ("code",)) -> int:
    """`response.status` as VCR-like recorders keep it: the code itself, or a mapping holding it
    under the first of `keys` present (Ruby VCR's `{code, message}`, Betamax's)."""
    if isinstance(value, dict):
        code = next((value[k] for k in keys if k in value), None)
        return status_code(code, "`response.status.code`")
    return status_code(value, "`response.status`")


TEMPLATE_OPEN = b"{{"
"""Where a Handlebars expression starts (WireMock's `response-template` transformer and
Hoverfly's `templated` bodies are Handlebars templates)."""


def rendered_template(body: bytes, by: str) -> str | None:
    """Why a response kept as a template that the mock renders per request holds no recorded
    response (`Recorded.absent`), or None when the body has no expression (served as written)."""
    if TEMPLATE_OPEN not in body:
        return None
    return f"no response was recorded: the body is a template {by} renders for each request it serves"


def json_bytes(value: Any) -> bytes:
    """A body a recorder kept as a JSON value, as compact JSON text (what WireMock serves of a
    `jsonBody` and the Azure test-proxy plays back, `NormalizeJsonBody`)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
