"""The conversion kit: what every format's converters share (core; formats import it).

A converter is a function `(src, dst, ctx) -> None` that a format declares in its
`converters` mapping, keyed by `(from, to)` (see `formats.base.Format`). It writes `dst`
(a temporary path the engine in `conformance.convert` moves into place once the output
validated) and reports every lossy step through `ctx.lossy(...)`, once per occurrence,
with its location.

The kit holds the pieces converters would otherwise each write their own way:

- ids: `IdMint`, strictly increasing ULIDs (and `tu_` tool ids) derived from the input
  through `conformance.core.ids.derived`, so the same input converts to the same bytes;
- time: `created_at_micros` (the one check that a canonical `created_at` is a real date
  and time, used by every converter that reads canonical), `rfc3339`;
- refusal: `refuse_invalid`, which runs a format's own validator over a converter's
  input and refuses it on the first error (a conversion never accepts what `validate`
  rejects);
- `short` (a value shortened for a message) and `is_tool_definition`.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import io
import mimetypes
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlsplit

from . import ids
from .errors import InputError
from .findings import Finding, RuleInfo, Severity, switched_off
from .jsonio import (
    DEFAULT_LOCK_WAIT,
    Record,
    StdinPath,
    dumps,
    parse,
    read_input,
    read_json,
    read_jsonl,
    reads_as_lines,
    stdin_bytes,
)
from .schemas import schema_set

LOSSY = RuleInfo("TS900", Severity.WARNING, "§7.3", "Conversion dropped or changed information")
"""The one declaration of TS900 (every converter's lossy step unless its format names its own
rule); the canonical catalogue (`formats.canonical.rules`) lists this value, so `turnspec
rules` shows it."""


@dataclass
class ConvertContext:
    """What a converter may report, and the run's settings it reads. `lossy` is a
    warning; raising `InputError` aborts."""

    findings: list[Finding] = field(default_factory=list)
    # where each message a converter to canonical wrote was read (path, line, pointer), in
    # output order; a converter that can say it fills this, and `replay-check` then
    # locates its findings in the source file rather than in the canonical copy
    origins: list[tuple[str, int | None, str]] = field(default_factory=list)
    # seconds a converter waits for an input another process holds locked (`--lock-wait`)
    lock_wait: float = DEFAULT_LOCK_WAIT

    def lossy(self, path: str, line: int | None, pointer: str, message: str, rule: RuleInfo = LOSSY) -> None:
        if rule.id in switched_off():  # rule-level mutation testing (findings.switched_off)
            return
        self.findings.append(Finding(path, line, pointer, rule.id, rule.severity, message))


Converter = Callable[[Path, Path, ConvertContext], None]


# -- ids ---------------------------------------------------------------------------------


class IdMint:
    """Strictly increasing ULIDs derived from the input (canonical §6.1).

    `ulid(ms, *parts)` is `ids.derived(ms, *parts)` unless that would not sort after the
    previous id, in which case it is the previous id plus one: still a pure function of
    the sequence of calls, so a conversion stays byte-for-byte reproducible. `parts`
    should name what the id is for (a source id, a line, a serial).
    """

    def __init__(self, *salt: str | int) -> None:
        self.salt = salt
        self.last = -1

    def ulid(self, ms: int, *parts: str | bytes | int) -> str:
        value = ids.decode(ids.derived(ms, *self.salt, *parts))
        if value <= self.last:
            value = self.last + 1
        self.last = value
        return ids.encode(value)

    def keep(self, ulid: str) -> str | None:
        """`ulid` itself when it sorts after every id minted so far (it then becomes the
        last one), else None: lets a converter restore an id the source carried."""
        if not ids.is_ulid(ulid):
            return None
        value = ids.decode(ulid)
        if value <= self.last:
            return None
        self.last = value
        return ulid

    def tool_id(self, ms: int, *parts: str | bytes | int) -> str:
        return "tu_" + self.ulid(ms, "tool", *parts)


def ulid_millis(ulid: str) -> int:
    """The time part of a ULID, in milliseconds since the epoch (`ids.millis`)."""
    return ids.millis(ulid)


# -- time --------------------------------------------------------------------------------

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@functools.cache
def _timestamp_pattern() -> re.Pattern[str]:
    """canonical §4.1 as the schema spells it (ids.json `timestamp`): RFC 3339 UTC, `Z` or
    `+00:00`, 0 to 6 fraction digits. Read from the schema, so a converter accepts exactly
    the texts `validate` accepts."""
    return re.compile(str(schema_set("canonical", "v1")["ids.json"]["$defs"]["timestamp"]["pattern"]))


def created_at_micros(value: str) -> int:
    """Microseconds since the epoch of a canonical `created_at`; ValueError when it is not
    one the schema accepts (RFC 3339 UTC: `Z` or `+00:00`, 0 to 6 fraction digits) naming a
    real date and time (2026-02-30 is not one, TS115). The one date check every converter
    that reads canonical uses: what `validate` accepts, every converter accepts."""
    if not isinstance(value, str) or _timestamp_pattern().match(value) is None:
        raise ValueError(f"created_at {value!r} is not RFC 3339 UTC (`Z` or `+00:00`, canonical §4.1)")
    when = ids.parse_time(value)
    if when is None:
        raise ValueError(f"created_at {value!r} is not a real date and time (TS115)")
    delta = when - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def rfc3339(micros: int) -> str:
    """A canonical `created_at` (§4.1) for microseconds since the epoch."""
    return ids.canonical_time(_EPOCH + dt.timedelta(microseconds=micros))


# -- refusal -----------------------------------------------------------------------------


class _Run(Protocol):
    def validate(self, path: Path, stats: Any, progress: Any = None) -> Iterator[Finding]: ...

    def finish(self) -> Iterator[Finding]: ...


def refuse_invalid(src: Path, fmt: str, findings: Iterable[Finding]) -> None:
    """InputError naming the first error among `findings` (a converter's input that
    `turnspec validate` rejects); nothing when there is none."""
    errors = [f for f in findings if f.severity == Severity.ERROR]
    if errors:
        first = errors[0]
        where = first.path if first.line is None else f"{first.path}:{first.line}"
        at = f"{where} {first.pointer}" if first.pointer else where
        raise InputError(
            f"{src} does not validate as {fmt} ({len(errors)} error(s); first: {at} "
            f"{first.rule} {first.message}); fix it or run `turnspec validate` first"
        )


def validated(src: Path, fmt: str, run: _Run, stats: Any) -> None:
    """Run a format's validator over `src` (a converter's input) and refuse it on errors."""
    refuse_invalid(src, fmt, [*run.validate(src, stats), *run.finish()])


# -- small helpers -----------------------------------------------------------------------


def short(value: Any, limit: int = 40) -> str:
    """`repr(value)` cut to `limit` characters, for messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_tool_definition(value: Any) -> bool:
    """A canonical ToolDefinition (§5.4) rather than a message: it has an `input_schema`
    and no `role`. Files of canonical records may mix the two."""
    return isinstance(value, dict) and "input_schema" in value and "role" not in value


__all__ = [
    "LOSSY",
    "ConvertContext",
    "Converter",
    "IdMint",
    "created_at_micros",
    "is_tool_definition",
    "refuse_invalid",
    "rfc3339",
    "short",
    "ulid_millis",
    "validated",
]


# -- what a peer's message mapping reports, and how it writes (openai-messages, pydantic-ai) --


@dataclass(frozen=True)
class Loss:
    """One lossy step of a message mapping: the index of the message it happened in, the
    pointer inside that message, the text, and the format's rule."""

    message: int
    pointer: str
    text: str
    rule: RuleInfo


@dataclass
class Losses:
    """The lossy steps of one mapping; `rule` is the format's own "lossy step" rule."""

    rule: RuleInfo
    items: list[Loss] = field(default_factory=list)

    def add(self, message: int, pointer: str, text: str, rule: RuleInfo | None = None) -> None:
        self.items.append(Loss(message, pointer, text, rule or self.rule))


class Located(Protocol):
    """Where a mapped message was read: a `jsonio.Record`, or a peer reader's message."""

    @property
    def path(self) -> str: ...

    @property
    def line(self) -> int | None: ...

    @property
    def pointer(self) -> str: ...


def report_losses(ctx: ConvertContext, places: Sequence[Located], losses: Losses) -> None:
    """Each of `losses` as a lossy finding at its message's place (`places[loss.message]`)
    and the pointer inside it."""
    for loss in losses.items:
        at = places[loss.message]
        ctx.lossy(at.path, at.line, at.pointer + loss.pointer, loss.text, loss.rule)


class _Mimes:
    """Python's own suffix table, not the machine's /etc/mime.types (the same input converts
    to the same media types on every machine), built at the first guess (it costs a
    start-up that checks no media type)."""

    @functools.cached_property
    def table(self) -> mimetypes.MimeTypes:
        return mimetypes.MimeTypes(filenames=())

    def guess_type(self, url: str, strict: bool = True) -> tuple[str | None, str | None]:
        return self.table.guess_type(url, strict=strict)


MIMES = _Mimes()


def media_type_of_url(url: str) -> str | None:
    """The image media type a URL's path suffix names (`.png` -> image/png), else None."""
    guess, _ = MIMES.guess_type(urlsplit(url).path, strict=False)
    return guess if guess is not None and guess.startswith("image/") else None


def write_values(dst: Path, values: list[Any], array: bool) -> None:
    """`values` as one indented JSON array (`array`), or as JSON Lines."""
    if array:
        dst.write_bytes(dumps(values, indent=True) + b"\n")
    else:
        dst.write_bytes(b"".join(dumps(v) + b"\n" for v in values))


# -- reading a peer's documents (langchain, otel-genai): JSON or JSON Lines, stdin by --format --


@dataclass(frozen=True, slots=True)
class Item:
    """One element of a document's top-level array, and where it is."""

    path: str
    line: int
    pointer: str
    value: Any


@dataclass
class Document:
    """One JSON document (a `.json` file, or one line of JSON Lines); `items` holds its
    elements, each located, when it is an array (None when it is not)."""

    path: str
    line: int
    value: Any
    items: list[Item] | None = None
    pointer: str = ""
    raw: bytes = b""  # the JSON text of a `.json` document that is no array (`member_lines` reads it)


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},]')


def member_lines(raw: bytes, key: str) -> list[int]:
    """The line on which each element of the array that the top-level object member `key`
    holds starts, in the JSON text `raw` (empty when it holds no array there): findings
    inside an object document point at their element's own line."""
    want = dumps(key)
    depth, line, pos = 0, 1, 0
    last: bytes = b""
    inside = False
    out: list[int] = []
    for m in _TOKEN.finditer(raw):
        tok = m.group()
        c = tok[:1]
        opened = False
        if c in (b"[", b"{"):
            depth += 1
            if depth == 2 and c == b"[" and last == want:
                inside = opened = True
        elif c in (b"]", b"}"):
            if inside and depth == 2:
                return out
            depth -= 1
        elif c == b",":
            opened = inside and depth == 2
        elif depth == 1:
            last = tok  # a member's key (or a string value, never followed by `[`)
        if opened:
            i = m.end()
            while i < len(raw) and raw[i] in b" \t\r\n":
                i += 1
            if raw[i : i + 1] != b"]":
                line += raw.count(b"\n", pos, i)
                pos = i
                out.append(line)
    return out


def as_lines(path: Path) -> bool:
    """Whether a peer reader reads `path` as JSON Lines: a `.jsonl` file; standard input
    under a `--stdin-filename` by its suffix; bare standard input unless it parses as one
    JSON document (a line of these formats may itself be an array)."""
    if str(path) != "-" or isinstance(path, StdinPath):
        return reads_as_lines(path)
    try:
        parse(stdin_bytes().removeprefix(b"\xef\xbb\xbf"))
    except ValueError:
        return True
    return False


def read_documents(path: Path, max_line_bytes: int, data: bytes | None = None) -> Iterator[Document | Finding]:
    """The documents of `path` and the reader's findings (bad JSON, BOM, ...). A `.jsonl`
    file is one document per line, a `.json` file one document; standard input (`-`) is
    read as `jsonio.reads_as_lines` says under a `--stdin-filename`, and bare as one
    document when it parses as one, else as JSON Lines (each line of these formats may
    itself be an array, so its first byte says nothing). `data`: the bytes of `path`,
    already read (the convert driver reads its input once), else `path` is read."""
    if as_lines(path):
        lines = read_jsonl(path, max_line_bytes=max_line_bytes, stream=None if data is None else io.BytesIO(data))
        for rec in lines:
            if isinstance(rec, Finding):
                yield rec
            else:
                located = (
                    [Item(rec.path, rec.line, f"/{i}", v) for i, v in enumerate(rec.value)]
                    if isinstance(rec.value, list)
                    else None
                )
                yield Document(rec.path, rec.line, rec.value, located)
        return
    items: list[Item] = []
    found = False
    for rec in read_json(path, data=data):
        if isinstance(rec, Finding):
            found = True
            yield rec
        elif rec.pointer == "":
            found = True
            yield Document(rec.path, rec.line, rec.value, raw=rec.raw)  # a document that is not an array
        else:
            items.append(Item(rec.path, rec.line, rec.pointer, rec.value))
    if items or not found:  # `[]`: read_json yields no element
        yield Document(str(path), 1, [i.value for i in items], items)


_NOTHING = object()
PEEK_BYTES = 64 * 1024


def peek_value(path: Path, peek_bytes: int = PEEK_BYTES) -> Any:
    """For detection: the JSON value of a `.json` of at most `peek_bytes`, or of the first
    line of a `.jsonl` (a BOM skipped); `NOTHING` when the path is neither, is longer, or
    holds no JSON there (a longer file needs `--format`)."""
    if path.suffix not in (".json", ".jsonl") or not path.is_file():
        return NOTHING
    try:
        with path.open("rb") as f:
            head = f.read(peek_bytes)
            more = bool(f.read(1))
    except OSError:
        return NOTHING
    head = head.removeprefix(b"\xef\xbb\xbf")
    if path.suffix == ".jsonl":
        first = next((ln for ln in head.splitlines(keepends=True) if ln.strip()), b"")
        if not first or (not first.endswith(b"\n") and more):
            return NOTHING
        head = first
    elif more:
        return NOTHING
    try:
        return parse(head)
    except ValueError:
        return NOTHING


NOTHING: Any = _NOTHING


# -- what a peer's assistant message needs in canonical and its source may not record --

_PROVIDER = re.compile(r"[a-z0-9][a-z0-9_.-]*\Z")


def provider_id(name: str) -> str:
    """`name` as a canonical provider id (the part of a model id before ':', §6.3)."""
    if _PROVIDER.match(name):
        return name
    pid = re.sub(r"[^a-z0-9_.-]+", "-", name.lower()).strip("-._")
    return pid if _PROVIDER.match(pid) else "unknown"


def placeholder_metadata(model: str, provider: str, source: str) -> dict[str, Any]:
    """What canonical requires on a complete assistant message (§5.3.1-3) that `source`
    (a peer format's name) may not record: routing, usage cost and timing."""
    return {
        "model": model,
        "provider": provider,
        "routing": {
            "mode": "default",
            "chosen_model": model,
            "reason": f"converted from {source}, which records no routing",
        },
        "usage": {
            "input_tokens": 0,
            "output_tokens": 0,
            "cost_usd": "0",
            "pricing_version": "unknown",
            "latency_ms": 0,
        },
    }


# the fields of each canonical v1 block (§5.2); others are additive fields (§10.2) no peer carries
_BLOCK_FIELDS = {
    "text": {"type", "text"},
    "thinking": {"type", "text", "signature"},
    "redacted_thinking": {"type", "data"},
    "image": {"type", "source", "media_type"},
    "tool_use": {"type", "id", "name", "input"},
    "tool_result": {"type", "tool_use_id", "content", "is_error"},
}


def block_extras(block: dict[str, Any]) -> list[str]:
    """The fields of a canonical block its v1 schema does not define (additive fields,
    §10.2), sorted: what a converter to a peer format drops and reports."""
    known = _BLOCK_FIELDS.get(str(block.get("type")))
    return [] if known is None else sorted(set(block) - known)


# -- the convert driver of a peer read as units (ai-sdk, langchain, openai-messages, otel-genai, pydantic-ai) --

U = TypeVar("U", bound=Located)


class UnitRun(Protocol[U]):
    """A peer format's validator as the convert driver uses it (`formats.base.PeerRun`): its
    reader, which may be given the bytes already read, and its checks over the units read."""

    def read(self, path: Path, data: bytes | None = None) -> Iterator[U | Finding]: ...

    def check_units(self, units: Iterable[U | Finding], stats: Any) -> Iterator[Finding]: ...

    def finish(self) -> Iterator[Finding]: ...


@dataclass(frozen=True)
class Mapped:
    """One unit (a conversation, history or record) in canonical form: its `messages`, where
    each was read (`origins`, in output order), and its `losses`, whose message indexes
    refer to `places`."""

    messages: list[dict[str, Any]]
    origins: Sequence[Located]
    places: Sequence[Located]
    losses: Losses


@dataclass(frozen=True)
class ToCanonical(Generic[U]):
    """What a peer declares for `convert_units`: its name (for the refusal), `map` (a unit,
    the session id derived for it and the unit's `IdMint` -> `Mapped`), and the rule and
    message (`placeholders(session_id, first created_at)`) of what canonical requires that
    the unit does not record (session, ids, times), reported once per unit."""

    fmt: str
    map: Callable[[U, str, IdMint], Mapped]
    rule: RuleInfo
    placeholders: Callable[[str, str], str]


def convert_units(src: Path, dst: Path, ctx: ConvertContext, run: UnitRun[U], stats: Any, how: ToCanonical[U]) -> None:
    """The one driver of a peer-to-canonical conversion: `src` read once (its bytes name the
    ids, `IdMint(digest, unit number)`) and parsed once, validated by `run` and refused on
    an error (as `validated`), then each unit mapped to one session (`how.map`), its origins
    and losses reported, the placeholders once per unit (`how.rule`); written as JSON Lines,
    or one JSON array when `dst` ends in `.json`."""
    data = read_input(src)
    units: list[U] = []

    def kept() -> Iterator[U | Finding]:
        for item in run.read(src, data):
            if not isinstance(item, Finding):
                units.append(item)
            yield item

    refuse_invalid(src, how.fmt, [*run.check_units(kept(), stats), *run.finish()])
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    out: list[dict[str, Any]] = []
    for n, unit in enumerate(units):
        mint = IdMint(digest, n)
        session_id = mint.ulid(0, "session")
        mapped = how.map(unit, session_id, mint)
        ctx.origins += [(at.path, at.line, at.pointer) for at in mapped.origins]
        report_losses(ctx, mapped.places, mapped.losses)
        if mapped.messages:
            first = str(mapped.messages[0]["created_at"])
            ctx.lossy(unit.path, unit.line, unit.pointer, how.placeholders(session_id, first), how.rule)
        out += mapped.messages
    write_values(dst, out, dst.suffix == ".json")


def _as_mapped(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class FromCanonical:
    """What a peer declares for `write_sessions`: `map` (one canonical session's message
    values -> its form in the peer, and the losses), `line` (that form as one line of a
    `.jsonl`, default itself), what one `.json` file of the peer holds (`file`, e.g. "a
    .json LangChain file holds one conversation") and each `.jsonl` line (`per_line`), and
    `dropped`, the fields canonical has and the peer does not, reported once per file
    (`rule`)."""

    map: Callable[[list[dict[str, Any]]], tuple[Any, Losses]]
    file: str
    per_line: str
    dropped: str
    rule: RuleInfo
    line: Callable[[Any], Any] = _as_mapped


def write_sessions(
    src: Path, dst: Path, ctx: ConvertContext, sessions: Mapping[str, Sequence[Record]], how: FromCanonical
) -> None:
    """The one driver of a canonical-to-peer conversion, over the sessions of a valid canonical
    file (`formats.canonical.sessions_of`): a `.json` `dst` holds the one session's form (a
    file of several sessions is refused: nothing is written), a `.jsonl` one line per session;
    each session's losses reported where its messages were read, the dropped fields once."""
    array = dst.suffix == ".json"
    if array and len(sessions) > 1:
        raise InputError(
            f"{src} holds {len(sessions)} sessions; {how.file}: write .jsonl ({how.per_line}) "
            "or split the file by session_id"
        )
    if sessions:
        ctx.lossy(str(src), None, "", how.dropped, how.rule)
    out: list[Any] = []
    for records in sessions.values():
        mapped, losses = how.map([r.value for r in records])
        report_losses(ctx, records, losses)
        out.append(mapped if array else how.line(mapped))
    if array:
        dst.write_bytes(dumps(out[0] if out else [], indent=True) + b"\n")
    else:
        write_values(dst, out, False)
