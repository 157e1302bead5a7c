"""Finding a chibi context's files, and recognising chibi files cheaply.

A chibi context is a directory (`~/.chibi/contexts/<name>/`, TF §File Roles):

    transcript/manifest.json        written on the first rotation (absent before)
    transcript/active.jsonl         the write partition (named by the manifest)
    transcript/partitions/*.jsonl   archived partitions, each with an optional .bloom
    context.jsonl                   the LLM context window, derived from the transcript
    inbox.jsonl, context_meta.json, requests.jsonl

Paths inside manifest.json are relative to transcript/ (chibi-core partition.rs joins
them to the directory it is given, which state/mod.rs makes `transcript/`). A
transcript/ directory given on its own is also a unit (without the context files).

Detection reads at most `PEEK_BYTES` of a file: JSON keys that no canonical message has
(`entry_type` with `from`/`to`, `active_partition` with `rotation_policy`), or, when the
first line is longer than the peek, the exact prefix serde writes for a chibi entry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ...core.findings import Finding
from ...core.jsonio import Fence, Record, leaves, parse, read_json

PEEK_BYTES = 64 * 1024

Kind = Literal["entries", "inbox", "requests", "manifest", "context_meta", "bloom"]

_BOM = b"\xef\xbb\xbf"
# serde_json writes TranscriptEntry fields in struct order: id, timestamp, from, ...
_ENTRY_PREFIX = re.compile(rb'^\{\s*"id"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"timestamp"\s*:\s*[0-9]+\s*,\s*"from"\s*:')
_MANIFEST_KEYS = (
    re.compile(rb'(?<!\\)"active_partition"\s*:'),
    re.compile(rb'(?<!\\)"rotation_policy"\s*:'),
)
INBOX_KEYS = frozenset({"id", "timestamp", "from", "to", "content"})
REQUEST_KEYS = frozenset({"timestamp", "request"})
META_KEYS = frozenset({"system_prompt_md_mtime", "last_combined_prompt", "created_at"})


def _peek(path: Path) -> bytes:
    try:
        with path.open("rb") as f:
            data = f.read(PEEK_BYTES)
    except OSError:
        return b""
    return data[3:] if data.startswith(_BOM) else data


def _first_line(data: bytes) -> tuple[bytes, bool]:
    """The first non-blank line of `data`, and whether it is complete."""
    for line in data.splitlines(keepends=True):
        if line.strip():
            complete = line.endswith(b"\n") or len(data) < PEEK_BYTES
            return line.strip(), complete
    return b"", False


def _object(data: bytes) -> dict[str, Any] | None:
    try:
        value = parse(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def is_entry(value: dict[str, Any]) -> bool:
    """A chibi TranscriptEntry: `entry_type`, `from` and `to`, and no canonical keys."""
    return (
        "entry_type" in value and "from" in value and "to" in value
        and "session_id" not in value and "schema_version" not in value
    )  # fmt: skip


def peek_kind(path: Path) -> Kind | None:
    """Which chibi file `path` is, from its name and first bytes; None if not chibi."""
    name = path.name
    if path.suffix == ".bloom":
        return "bloom" if name.endswith(".bloom") and path.parent.name == "partitions" else None
    if path.suffix == ".json":
        data = _peek(path)
        obj = _object(data) if len(data) < PEEK_BYTES else None
        if obj is not None:
            if "active_partition" in obj and "rotation_policy" in obj:
                return "manifest"
            if name == "context_meta.json" and set(obj) <= META_KEYS:
                return "context_meta"
            return None
        if all(p.search(data) for p in _MANIFEST_KEYS):
            return "manifest"
        return None
    if path.suffix != ".jsonl":
        return None
    line, complete = _first_line(_peek(path))
    if not line:
        return None
    if complete:
        obj = _object(line)
        if obj is None:
            return None
        if is_entry(obj):
            return "entries"
        if name == "inbox.jsonl" and set(obj) == INBOX_KEYS:
            return "inbox"
        if name == "requests.jsonl" and set(obj) == REQUEST_KEYS:
            return "requests"
        return None
    if _ENTRY_PREFIX.match(line):
        return "inbox" if name == "inbox.jsonl" else "entries"
    return None


LEGACY_TRANSCRIPT = "transcript.jsonl"


@dataclass
class Layout:
    """The files of one chibi unit (a context directory, or a transcript/ directory)."""

    root: Path
    transcript: Path
    has_context_files: bool
    name: str
    partition_files: list[str] = field(default_factory=list)
    # one resolution of the unit's folders for the whole run (`jsonio.Fence`), and each
    # manifest path joined once (`join`): a manifest may name 100,000 partitions
    _fence: Fence | None = field(default=None, repr=False)
    _transcript_fence: Fence | None = field(default=None, repr=False)
    _joined: dict[str, Path | None] = field(default_factory=dict, repr=False)

    @property
    def manifest(self) -> Path:
        return self.transcript / "manifest.json"

    def inside(self, p: Path) -> bool:
        """False for a path of the unit that is (or goes through) a link leaving it: the
        walker reports such links (`jsonio.links_leaving`), and the unit never reads them."""
        if self._fence is None:
            self._fence = Fence(self.root)
        return not self._fence.leaves(p)

    def join(self, rel: str) -> Path | None:
        """`safe_join(self.transcript, rel)`, once per path of the manifest."""
        if rel not in self._joined:
            if self._transcript_fence is None:
                self._transcript_fence = Fence(self.transcript)
            self._joined[rel] = safe_join(self.transcript, rel, self._transcript_fence)
        return self._joined[rel]

    def context_file(self, name: str) -> Path | None:
        p = self.root / name
        return p if self.has_context_files and p.is_file() and self.inside(p) else None

    @property
    def has_manifest(self) -> bool:
        """transcript/manifest.json is a file of the unit (not a link out of it)."""
        return self.manifest.is_file() and self.inside(self.manifest)

    @property
    def context_jsonl(self) -> Path | None:
        return self.context_file("context.jsonl")

    @property
    def has_transcript(self) -> bool:
        """The unit holds a transcript (transcript/, or the pre-partition transcript.jsonl):
        what context.jsonl derives from is there to compare with (CB212)."""
        return (self.transcript.is_dir() and self.inside(self.transcript)) or self.legacy_transcript is not None

    @property
    def legacy_transcript(self) -> Path | None:
        """The pre-partition `transcript.jsonl` beside context.jsonl, when no transcript/
        exists: chibi before 0.5.1 kept the whole transcript in that one file and migrates
        it to transcript/ on load (emesal/chibi docs/upgrade-notes.md, "0.5.0 -> 0.5.1")."""
        p = self.root / LEGACY_TRANSCRIPT
        if (
            self.has_context_files and not self.transcript.exists() and p.is_file() and self.inside(p)
            and peek_kind(p) == "entries"
        ):  # fmt: skip
            return p
        return None

    def bloom_files(self) -> list[Path]:
        d = self.transcript / "partitions"
        return sorted(p for p in d.glob("*.bloom") if self.inside(p)) if d.is_dir() and self.inside(d) else []


def _is_transcript_dir(path: Path) -> bool:
    """manifest.json shaped like chibi's, or a chibi active.jsonl (a broken manifest next to
    a chibi active partition still makes the directory chibi's, to report it as such)."""
    if (path / "manifest.json").is_file() and peek_kind(path / "manifest.json") == "manifest":
        return True
    active = path / "active.jsonl"
    return active.is_file() and (active.stat().st_size == 0 or peek_kind(active) == "entries")


def layout_of(path: Path) -> Layout | None:
    """The layout of a chibi context directory or transcript/ directory, else None."""
    if not path.is_dir():
        return None
    t = path / "transcript"
    if (
        t.is_dir() and not leaves(path, t) and _is_transcript_dir(t)
    ):  # a transcript/ linked elsewhere is not this unit's
        return _layout(path, t, True)
    ctx = path / "context.jsonl"
    if ctx.is_file() and peek_kind(ctx) == "entries" and not t.exists():
        return _layout(path, t, True)  # a context that has not written its transcript yet
    legacy = path / LEGACY_TRANSCRIPT
    if legacy.is_file() and peek_kind(legacy) == "entries" and not t.exists():
        return _layout(path, t, True)  # the pre-partition layout (Layout.legacy_transcript)
    if path.name == "transcript" and _is_transcript_dir(path):
        return _layout(path.parent, path, False)
    return None


def _layout(root: Path, transcript: Path, context_files: bool) -> Layout:
    name = root.resolve().name
    parts = transcript / "partitions"
    files = sorted(f"partitions/{p.name}" for p in parts.glob("*.jsonl")) if parts.is_dir() else []
    return Layout(root, transcript, context_files, name, files)


def safe_join(base: Path, rel: str, fence: Fence | None = None) -> Path | None:
    """`base / rel` if `rel` is relative and stays inside `base` (no `..`, and no link
    that resolves outside `base`), else None.

    Manifest paths come from the data; following `../../etc/passwd`, an absolute path or
    a partition that is a link to a file elsewhere would read outside the unit, so such
    paths are reported (CB310, or the walker's link problem) and not opened. `fence`
    (over `base`) answers for many paths of one run at the cost of one.
    """
    if not rel or rel.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", rel):
        return None
    parts = rel.replace("\\", "/").split("/")
    if ".." in parts:
        return None
    path = base.joinpath(*parts)
    return None if (fence or Fence(base)).leaves(path) else path


def content_bytes(value: object) -> int:
    """Byte length of a string as Rust's `str::len` counts it (UTF-8)."""
    if not isinstance(value, str):
        return 0
    return len(value.encode("utf-8", "surrogatepass"))


_ASCII_TERM = re.compile(r"[A-Za-z0-9]{2,}")


def has_certain_term(text: str) -> bool:
    """True if chibi's bloom tokenizer surely indexes a term of `text`.

    chibi splits on non-alphanumeric characters (Rust `char::is_alphanumeric`) and keeps
    words of 2+ bytes. Unicode alphanumeric classes differ slightly between Rust and
    Python, so only ASCII runs, which both agree on, count as certain.
    """
    return _ASCII_TERM.search(text) is not None


def may_have_term(text: str) -> bool:
    """False only if chibi's bloom tokenizer surely indexes no term of `text`: no ASCII
    alphanumeric run of 2+ characters, and no non-ASCII character (one may be alphanumeric
    to Rust and is 2+ bytes long on its own)."""
    return _ASCII_TERM.search(text) is not None or not text.isascii()


def walk_ints(value: object) -> Iterator[int]:
    """Every integer leaf of a JSON value (iteratively: depth is bounded by jiter)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            yield v
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())


def read_document(path: Path) -> Iterator[Record | Finding]:
    """A `.json` file that holds one value (manifest.json, context_meta.json, a .bloom) as
    one record. `jsonio.read_json` reads a top-level array as a list of records, which
    would make a manifest of `[]` hold nothing to check; here it is one value, so the
    schema reports it (it is not an object)."""
    data = path.read_bytes()
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"[":
        try:
            value = parse(data.removeprefix(b"\xef\xbb\xbf"))
        except ValueError:
            pass
        else:
            yield Record(str(path), 1, "", value, len(data))
            return
    yield from read_json(path, data=data)
