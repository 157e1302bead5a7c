"""httprr traces (Go: rsc.io/httprr, and LangChainGo's copy of it), the `*.httprr` files (and
`*.httprr.gz`) its `RecordReplay` writes: one record per exchange, the request and the
response as Go writes them on the wire (`wire.httprr_trace` splits them, with their lines).

What is read so:

- header lines `Name: value`, names lower-cased, a name's lines kept in order (Go writes a
  line per value: `Vary` three times);
- a body as the wire carries it (`httprr_trace.message`: chunks joined, a disagreeing
  `Content-Length` warned of and the record's bytes read whole);
- a request line naming only a path (`Request.Write`, not `WriteProxy`) is read against its
  `Host` header over https, with a warning naming the request line;
- content codings as the headers say (`base.decoded_response`): a client that set
  `Accept-Encoding` itself kept the body gzip-coded, with its `Content-Encoding`.

The file is bytes, not text (a coded body is no UTF-8), and no JSON or YAML: it is told by
its suffix (`recording_files.is_trace`), not by `detect` over a parsed document.
"""

from __future__ import annotations

from typing import Any

from ...wire import httprr_trace
from ...wire.httprr_trace import Message, Record
from .base import Headers, Recorded, RecordingFormat, add_header


class Trace(dict[str, Any]):
    """A parsed trace: `records`, its `httprr_trace.Record`s."""


def parse(raw: bytes) -> tuple[Trace, list[int]]:
    """The records of a trace, and the 1-based line on which each starts (its `N1 N2` line)."""
    found = httprr_trace.records(raw)
    return Trace(records=found), [r.line for r in found]


def detect(doc: Any) -> bool:
    return isinstance(doc, Trace)


def _headers(msg: Message) -> Headers:
    out: Headers = {}
    for name, value, _ in msg.fields:
        add_header(out, name, [value])
    return out


def read(item: Any) -> Recorded:
    rec: Record = item
    request = httprr_trace.message(rec.request, rec.request_line, "request")
    response = httprr_trace.message(rec.response, rec.response_line, "response")
    warnings = [*request.warnings, *response.warnings]
    parts = request.start.split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise httprr_trace.TraceError(f"the request line {request.start[:80]!r} is not 'METHOD URL HTTP/x'")
    method, uri = parts[0], parts[1]
    req_headers = _headers(request)
    if uri.startswith("/"):
        host = (req_headers.get("host") or [""])[0]
        if not host:
            raise httprr_trace.TraceError(
                f"the request line names only the path {uri[:60]!r} and the request has no Host header"
            )
        uri = f"https://{host}{uri}"
        warnings.append(f"httprr: the request line names only a path; read as {uri[:80]} (its Host header, https)")
    status = response.start.split(" ")
    if len(status) < 2 or not status[0].startswith("HTTP/") or not status[1].isdigit():
        raise httprr_trace.TraceError(f"the status line {response.start[:80]!r} is not 'HTTP/x CODE REASON'")
    return Recorded(
        uri=uri,
        method=method,
        status=int(status[1]),
        request_headers=req_headers,
        request_body=request.body,
        headers=_headers(response),
        body=response.body,
        warnings=warnings,
    )


FORMAT = RecordingFormat(
    "httprr", "httprr (Go: rsc.io/httprr, LangChainGo), *.httprr traces", detect, ("records",), read
)
