"""httprr traces (Go: rsc.io/httprr, and the copy LangChainGo keeps in internal/httprr) as
bytes on disk, for the suite's reader (`suite.recordings.httprr`) and the secrets linter
(`cassette_lint`): the records of a trace and the HTTP messages in them, each part with the
line of the file it is on.

A trace is the line `httprr trace v1`, then one record per exchange: a line `N1 N2`, then N1
bytes of the request and N2 bytes of the response, each exactly as Go writes it on the wire
(`Request.WriteProxy`: the request line with the absolute URL, headers, a blank line, the
body; `Response.Write`: the status line, headers, a blank line, the body). A CR before a
line's LF is allowed, as httprr's own reader allows it. A record's `N1 N2` line follows the
last byte of the response before it, which ends no line when its body was sized.

A message's body is read as the wire would carry it: chunks joined where it is sent
`Transfer-Encoding: chunked` (Go writes a response whose length it did not know so), trailer
fields after the last chunk kept as headers, each warned of; a `Content-Length` that
disagrees with the record's bytes (a scrubber rewrote the body, not the header) is warned of
and the record's bytes are read whole (httprr's replay would cut them short or fail:
nothing is left out here).
"""

from __future__ import annotations

from dataclasses import dataclass, field

HEADER_LINE = b"httprr trace v1"


class TraceError(ValueError):
    """A trace httprr's own reader refuses, or a message in it that is no HTTP message (one
    line, with the line of the file where the file has one)."""


@dataclass
class Message:
    """One HTTP message of a record: its start line, its header fields (name, value, line in
    the file) in order, its body (framing undone) and the line the body starts on."""

    start: str
    line: int
    fields: list[tuple[str, str, int]]
    body: bytes
    body_line: int
    warnings: list[str] = field(default_factory=list)

    def header(self, name: str) -> list[str]:
        return [v for k, v, _ in self.fields if k.lower() == name]


@dataclass
class Record:
    """One exchange: the line of its `N1 N2`, its request and response bytes and the line each starts on."""

    line: int
    request: bytes
    response: bytes
    request_line: int
    response_line: int


def records(raw: bytes) -> list[Record]:
    """The records of a trace, each with its lines; a trace httprr would refuse raises TraceError."""
    first, sep, _ = raw.partition(b"\n")
    if not sep or first.removesuffix(b"\r") != HEADER_LINE:
        raise TraceError(f"line 1: not an httprr trace (the first line is not {HEADER_LINE.decode()!r})")
    at, line = len(first) + 1, 2
    out: list[Record] = []
    while at < len(raw):
        end = raw.find(b"\n", at)
        sizes = raw[at : end if end >= 0 else len(raw)].removesuffix(b"\r").split(b" ")
        if end < 0 or len(sizes) != 2 or not all(s.isdigit() for s in sizes):
            raise TraceError(
                f"line {line}: corrupt httprr trace (a record starts with 'N1 N2', its request's and response's sizes)"
            )
        n1, n2 = int(sizes[0]), int(sizes[1])
        start = end + 1
        if start + n1 + n2 > len(raw):
            raise TraceError(
                f"line {line}: corrupt httprr trace (the record says {n1} + {n2} bytes, {len(raw) - start} follow)"
            )
        request, response = raw[start : start + n1], raw[start + n1 : start + n1 + n2]
        response_line = line + 1 + request.count(b"\n")
        out.append(Record(line, request, response, line + 1, response_line))
        at = start + n1 + n2
        line = response_line + response.count(b"\n")
    return out


def message(raw: bytes, line: int, what: str) -> Message:
    """The HTTP message `raw` (starting on `line` of the file), its body's framing undone."""
    crlf, lf = raw.find(b"\r\n\r\n"), raw.find(b"\n\n")
    if crlf < 0 and lf < 0:
        raise TraceError(f"line {line}: the {what} has no blank line after its headers")
    if crlf < 0 or 0 <= lf < crlf:
        head, rest = raw[:lf], raw[lf + 2 :]
    else:
        head, rest = raw[:crlf], raw[crlf + 4 :]
    start, *lines = [x.removesuffix(b"\r") for x in head.split(b"\n")]
    fields: list[tuple[str, str, int]] = []
    for i, text in enumerate(lines, start=line + 1):
        fields.append(_field(text, i, what))
    body_line = line + len(lines) + 2
    msg = Message(start.decode("latin-1"), line, fields, rest, body_line)
    codings = ",".join(msg.header("transfer-encoding")).lower()
    if "chunked" in codings:
        msg.body = _dechunk(rest, msg, what)
        return msg
    declared = msg.header("content-length")
    if declared and declared[0].isdigit() and int(declared[0]) != len(rest):
        msg.warnings.append(
            f"httprr: the {what}'s Content-Length says {declared[0]} bytes, the record holds {len(rest)}: all {len(rest)} are read"
        )
    return msg


def _field(text: bytes, line: int, what: str) -> tuple[str, str, int]:
    name, colon, value = text.partition(b":")
    if not colon or not name.strip():
        raise TraceError(f"line {line}: the {what} has a header line without a name: {text[:60]!r}")
    return name.strip().decode("latin-1"), value.strip().decode("utf-8", "replace"), line


def _dechunk(body: bytes, msg: Message, what: str) -> bytes:
    """The bytes a chunked body carries; trailer fields join `msg.fields`, each warned of."""
    out: list[bytes] = []
    at = 0
    while True:
        end = body.find(b"\n", at)
        line = msg.body_line + body.count(b"\n", 0, at)
        if end < 0:
            raise TraceError(f"line {line}: the {what}'s chunked body ends before its last chunk")
        size_text = body[at:end].removesuffix(b"\r").split(b";")[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise TraceError(
                f"line {line}: the {what}'s chunked body has {size_text[:20]!r} where a chunk size is"
            ) from None
        at = end + 1
        if size == 0:
            break
        if at + size > len(body):
            raise TraceError(f"line {line}: the {what}'s chunk says {size} bytes, {len(body) - at} follow")
        out.append(body[at : at + size])
        at += size
        at += 2 if body[at : at + 2] == b"\r\n" else 1 if body[at : at + 1] == b"\n" else 0
    first = msg.body_line + body.count(b"\n", 0, at)
    for k, text in enumerate(body[at:].split(b"\n")):
        text = text.removesuffix(b"\r")
        if text:
            name, value, line = _field(text, first + k, what)
            msg.fields.append((name, value, line))
            msg.warnings.append(f"httprr: the {what}'s trailer field {name!r} after its last chunk is read as a header")
    return b"".join(out)
