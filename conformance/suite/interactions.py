"""What a recording is read into, whichever recorder wrote it: `Interaction` (one recorded
request and response), `Cassette` (a file's interactions, or why it was not read) and the
helpers every format's reader shares. A module of its own below `cassettes` (which finds and
loads the files) and `recordings` (one reader per recorder's format), so the readers use
these without importing the loader that imports them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..wire import registry
from ..wire.api import Framing, WireApi
from ..wire.framing import loads_strict, looks_framed


def api_of(uri: str) -> str | None:
    """The name of the wire API whose record matches `uri`, or None."""
    api = registry.api_for_url(uri)
    return api.name if api is not None else None


class CassetteError(ValueError):
    pass


@dataclass
class Interaction:
    """One recorded request/response pair: the response body as the bytes recorded, the
    request body as JSON (and as its bytes)."""

    cassette: str
    index: int
    uri: str
    api: str | None
    request_body: Any
    status: int
    content_type: str
    response_body: bytes
    response_json: Any = None
    headers: dict[str, Any] = field(default_factory=dict)
    request_raw: bytes = b""
    path: Path | None = None  # the cassette file
    line: int | None = None  # where this interaction starts in it (1-based), for CI annotations
    # the request's method and headers as recorded (names lower-cased, a header's values
    # joined with ", " as RFC 9110 §5.3 combines field lines): the request is its method,
    # URL and headers as well as its body
    method: str = "POST"
    request_headers: dict[str, str] = field(default_factory=dict)

    @property
    def response_text(self) -> str:
        """The response body as text, for a reader that needs text (an error message, a JSON
        body); never what a stream decoder is given (`response_body` is)."""
        return self.response_body.decode("utf-8", errors="replace")

    @property
    def synthetic(self) -> bool:
        """Hand-written (cassettes/build.py), so its token counts are not evidence."""
        return "x-turnspec-synthetic" in self.headers

    @property
    def usage_source(self) -> str | None:
        """Where the provider published the token count of this exact request (a hand-written
        cassette transcribing it carries `x-turnspec-usage-source`), else None: a synthetic
        interaction's usage is then evidence TC701 may hold an estimate to."""
        value = self.headers.get("x-turnspec-usage-source")
        if isinstance(value, list):
            value = value[0] if value else None
        return str(value) if value else None

    @property
    def label(self) -> str:
        return f"{self.cassette}#{self.index}"

    @property
    def wire(self) -> WireApi | None:
        """The record of this interaction's wire API (None: no record matches the URL)."""
        return registry.get(self.api) if self.api is not None else None

    @property
    def framing(self) -> Framing | None:
        """How the response is framed when it is a stream, else None.

        The record's choice first: of the framings its record names for this URL (its
        `framing`, a nested one included, and `other_framings`), the one whose media types
        the content type names. Else a registered framing the content type names
        (`text/event-stream`, `application/x-ndjson`, `application/vnd.amazon.eventstream`;
        two never claim one type); otherwise the record's framing for this URL, when the
        recorded request asked for a stream and the body starts the way that framing does;
        with no record, a framing the body's first bytes identify by themselves.
        """
        w = self.wire
        if w is not None:
            own = (w.framing_for(self.uri), w.framing, *w.other_framings)
            chosen = next((f for f in own if f.announced_by(self.content_type)), None)
            if chosen is not None:
                return chosen
        announced = registry.framing_for_content_type(self.content_type)
        if announced is not None:
            return announced
        if w is not None:
            framing = w.framing_for(self.uri)
            body = self.request_body if isinstance(self.request_body, dict) else None
            if w.is_streaming(self.uri, body) and looks_framed(framing, self.response_body):
                return framing
            return None
        return registry.detect_framing(self.response_body)

    @property
    def is_stream(self) -> bool:
        return self.framing is not None

    @property
    def request_stream(self) -> bool:
        w = self.wire
        body = self.request_body if isinstance(self.request_body, dict) else None
        if w is not None:
            return w.is_streaming(self.uri, body)
        return bool(body and body.get("stream"))


@dataclass
class Cassette:
    path: Path
    label: str
    interactions: list[Interaction] = field(default_factory=list)
    error: str | None = None
    # a JSON file that is no recording format read here: why it was set aside (TC800's skip)
    skipped: str | None = None
    # the recorder's format it was read as (`recordings.FORMATS` names; None: not read)
    format: str | None = None
    # interactions the recorder kept no response of (`base.Recorded.absent`): (label, why),
    # each a TC800 skip with its reason, replayed to no adapter
    set_aside: list[tuple[str, str]] = field(default_factory=list)
    # what a reader read another way than its recorder's layout, losing nothing
    # (`base.Recorded.warnings`): (label, warning), said on that interaction's TC800 case
    warnings: list[tuple[str, str]] = field(default_factory=list)


def json_or_none(data: bytes) -> Any:
    """`data` read as strict JSON, or None (empty, not JSON, too deep)."""
    try:
        return loads_strict(data) if data.strip() else None
    except (ValueError, UnicodeDecodeError):
        return None
