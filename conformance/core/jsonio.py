"""Reading JSON and JSON Lines defensively, one record at a time.

Bad input never raises: every problem becomes a located `Finding` and reading goes on
with the next line. Lines are parsed with jiter, which rejects NaN/Infinity
(`allow_inf_nan=False`), detects duplicate keys (`catch_duplicate_keys=True`, which
orjson and the stdlib silently resolve to the last value) and bounds nesting depth
without recursing in Python. Memory stays bounded by the longest line, and a line
longer than `max_line_bytes` is skipped in chunks without being held.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import jiter
import orjson

from .errors import InputError
from .findings import Finding, RuleInfo, Severity

SECTION_JSONL = "jsonlines.org"

INVALID_JSON = RuleInfo("TS001", Severity.ERROR, "RFC 8259 §2", "Input is not valid JSON")
INVALID_UTF8 = RuleInfo("TS002", Severity.ERROR, "RFC 8259 §8.1", "Input is not valid UTF-8")
BOM = RuleInfo("TS003", Severity.WARNING, "RFC 8259 §8.1", "File starts with a UTF-8 byte order mark")
CRLF = RuleInfo("TS004", Severity.WARNING, SECTION_JSONL, "Lines end with CRLF instead of LF")
BLANK_LINE = RuleInfo("TS005", Severity.WARNING, SECTION_JSONL, "Blank line in a JSON Lines file")
DUPLICATE_KEY = RuleInfo("TS006", Severity.ERROR, "RFC 8259 §4", "Object has a duplicate key")
NON_FINITE = RuleInfo("TS007", Severity.ERROR, "RFC 8259 §6", "NaN or Infinity is not JSON")
TOO_LARGE = RuleInfo("TS008", Severity.ERROR, SECTION_JSONL, "Value nested too deep or line too long")
TRUNCATED = RuleInfo("TS009", Severity.ERROR, SECTION_JSONL, "File ends in the middle of a value")

IO_RULES = (INVALID_JSON, INVALID_UTF8, BOM, CRLF, BLANK_LINE, DUPLICATE_KEY, NON_FINITE, TOO_LARGE, TRUNCATED)

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_FILE_BYTES = 512 * 1024 * 1024  # a whole-document read (.json, schema, options file)
# seconds an input that another process holds locked (a SQLite store under a writer's
# EXCLUSIVE lock) is waited for before the run says so (exit 2): `--lock-wait`, `lock-wait`
DEFAULT_LOCK_WAIT = 30.0
_BOM = b"\xef\xbb\xbf"
_POS = re.compile(r" at line (\d+) column (\d+)$")
_NON_FINITE = re.compile(rb"-?(?:NaN|Infinity)")
_DIGIT_MAP = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))  # digits -> "0", the rest -> " "
_NINETEEN = b"0" * 19
_LONG_DIGITS = re.compile(rb"(?:^|[-:\[,\s])[0-9]{19}")  # a number of 19+ digits (or such digits in a string)


@dataclass(slots=True)
class Record:
    """One parsed JSON value and where it came from.

    `pointer` is the JSON pointer of the value inside its file ("" for a line of a
    `.jsonl` file or a whole `.json` file, "/3" for the fourth element of a list).
    """

    path: str
    line: int
    pointer: str
    value: Any
    size: int
    # the JSON text `value` was parsed from (the line, or the whole `.json` document, in
    # which `pointer` locates it); empty for values made in memory. Rules that must read
    # a number exactly (cost_usd as a Decimal, never through a float) re-read it here.
    raw: bytes = b""


# -- opening inputs: only regular files (and folders where a unit is a folder) ---------

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def irregular(path: Path | str) -> str | None:
    """What `path` is when it exists but is not a regular file ("a folder", "a FIFO (named
    pipe)", ...), following links, for a finding that names it; None for a regular file or
    when nothing is there. Never opens it (a FIFO would block, a device never end)."""
    try:
        st = (path if isinstance(path, Path) else Path(path)).stat()
    except OSError:
        return None
    return None if stat.S_ISREG(st.st_mode) else _kind(st.st_mode)


def os_error(path: Path | str, exc: OSError) -> InputError:
    """The one-line `InputError` of an `OSError` met reading `path` (the file the error
    names, when it names one: a denied entry inside a folder being read)."""
    where = exc.filename if isinstance(exc.filename, str) and exc.filename else path
    if isinstance(exc, FileNotFoundError):
        return InputError(f"{where}: no such file or directory")
    return InputError(f"{where}: cannot read: {exc.strerror or exc}")


_os_error = os_error


def leaves(root: Path, path: Path) -> bool:
    """True when `path`, named inside the folder `root`, is (or goes through) a symbolic
    link that resolves outside `root` (or cannot be resolved): a folder read as one unit
    is read inside itself only, and such a link is reported, never followed."""
    return Fence(root).leaves(path)


class Fence:
    """`leaves(root, path)` for the many paths of one unit: the root is resolved once and
    each folder once (`Path.resolve` walks every component of every path with an `lstat`;
    a chibi manifest names 100,000 partitions in one folder), so a path costs one `lstat`
    of its last component, and a full resolution only when that is a link. A fence is for
    one run over one unit: it trusts that the unit's folders do not change meanwhile."""

    __slots__ = ("_folders", "_root", "root")

    def __init__(self, root: Path) -> None:
        self.root = root
        self._root: str | None = None
        self._folders: dict[str, str | None] = {}  # folder -> where it resolves (None: nowhere)

    def _resolve(self, path: Path | str) -> str | None:
        try:
            return str(Path(path).resolve())
        except (OSError, RuntimeError):  # a loop, a denied component
            return None

    def leaves(self, path: Path) -> bool:
        if self._root is None:
            self._root = self._resolve(self.root) or ""
        root = self._root
        if not root:
            return True
        folder, name = os.path.split(os.fspath(path))
        if name in ("", ".", ".."):
            where = self._resolve(path)
        else:
            if folder not in self._folders:
                self._folders[folder] = self._resolve(folder or ".")
            base = self._folders[folder]
            where = None if base is None else base.rstrip(os.sep) + os.sep + name
            try:
                if where is not None and stat.S_ISLNK(os.lstat(where).st_mode):
                    where = self._resolve(where)
            except OSError:
                pass  # nothing there (yet), or not to be looked at: `resolve` names it as it is
        if where is None:
            return True
        return not (where == root or where.startswith(root if root.endswith(os.sep) else root + os.sep))


def links_leaving(root: Path) -> list[tuple[Path, str]]:
    """Every symbolic link under the folder `root` (links are not walked into) that
    leaves it, with where it points: the link policy of a folder read as one unit."""
    out: list[tuple[Path, str]] = []
    for here, dirs, names in os.walk(root, onerror=lambda exc: None):
        dirs.sort()
        for name in sorted([*dirs, *names]):
            p = Path(here) / name
            if p.is_symlink() and leaves(root, p):
                try:
                    target = str(p.readlink())
                except OSError:
                    target = "?"
                out.append((p, target))
    return out


def check_input(path: Path | str, *, allow_dir: bool = False) -> os.stat_result:
    """`stat` an input (following symlinks) and refuse anything but a regular file (or a
    folder, with `allow_dir`), without opening it: opening a FIFO for reading blocks
    until a writer comes, and a device such as /dev/zero never ends."""
    try:
        st = (path if isinstance(path, Path) else Path(path)).stat()
    except OSError as exc:  # missing, symlink loop, permission on a parent, name too long
        raise _os_error(path, exc) from None
    if stat.S_ISREG(st.st_mode) or (allow_dir and stat.S_ISDIR(st.st_mode)):
        return st
    wanted = "a regular file or a folder" if allow_dir else "a regular file"
    raise InputError(f"{path}: is {_kind(st.st_mode)}, not {wanted}; not read")


class StdinPath(type(Path())):  # type: ignore[misc]  # PosixPath or WindowsPath: Path() picks the flavour
    """Standard input read under a name (`validate - --stdin-filename NAME`): findings are
    reported under the name, whose suffix says how it is read (`.json` one document,
    `.jsonl` lines); nothing is ever opened at that path."""


def is_stdin(path: Path | str) -> bool:
    """True for `-` and for a `StdinPath`."""
    return isinstance(path, StdinPath) or str(path) == "-"


_stdin_data: bytes | None = None


def stdin_bytes() -> bytes:
    """Standard input, read once (up to `DEFAULT_MAX_FILE_BYTES`): a later call (after
    `reads_as_lines` looked at it) gets the same bytes."""
    global _stdin_data
    if _stdin_data is None:
        data = sys.stdin.buffer.read(DEFAULT_MAX_FILE_BYTES + 1)
        if len(data) > DEFAULT_MAX_FILE_BYTES:
            raise InputError(f"-: standard input is larger than {DEFAULT_MAX_FILE_BYTES} bytes; not read")
        _stdin_data = data
    return _stdin_data


def forget_stdin() -> None:
    """Drop the standard input read so far (a new run, as a test's next `main()`, reads it again)."""
    global _stdin_data
    _stdin_data = None


def reads_as_lines(path: Path | str) -> bool:
    """Whether an input is read as JSON Lines: a `.jsonl` file; standard input under a
    name by that name's suffix (`.json` is one document); bare `-` as JSON Lines unless
    its first non-blank byte opens an array (`[`), a whole JSON document."""
    if isinstance(path, StdinPath):
        return Path(path).suffix != ".json"
    if str(path) == "-":
        return not stdin_bytes().lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")
    return Path(path).suffix == ".jsonl"


def open_input(path: Path | str) -> IO[bytes]:
    """Open a regular file for reading, or raise a one-line `InputError` naming it.

    The type is checked with `stat` first and again on the open descriptor (opened
    non-blocking, so a FIFO swapped in between the two cannot hang the open). `-` is
    standard input, read up to `DEFAULT_MAX_FILE_BYTES`.
    """
    if is_stdin(path):
        return io.BytesIO(stdin_bytes())
    check_input(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise _os_error(path, exc) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"{path}: is {_kind(st.st_mode)}, not a regular file; not read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_input(path: Path | str, *, limit: int = DEFAULT_MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (else a one-line `InputError`)."""
    with open_input(path) as f:
        try:
            data = f.read(limit + 1)
        except OSError as exc:
            raise _os_error(path, exc) from None
    if len(data) > limit:
        raise InputError(f"{path}: larger than {limit} bytes; not read")
    return data


def _finding(
    path: str, line: int, info: RuleInfo, message: str, pointer: str = "", column: int | None = None
) -> Finding:
    return Finding(path, line, pointer, info.id, info.severity, message, column)


def parse_error(
    path: str, line_no: int, data: bytes, exc: ValueError, *, at_eof: bool, line_offset: int = 0
) -> Finding:
    """Turn a jiter error on `data` into a located finding with the right rule."""
    text = str(exc)
    m = _POS.search(text)
    reason = text[: m.start()] if m else text
    line = line_no + (int(m.group(1)) - 1 if m else 0) + line_offset
    col = int(m.group(2)) if m else 0
    where = f"column {col}"
    at = col if m and col >= 1 else None  # the location's column (none when the parser gave no position)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as u:
        before = data[: u.start]
        bad_line = line_no + line_offset + before.count(b"\n")
        bad_col = u.start - (before.rfind(b"\n") + 1) + 1
        return _finding(
            path,
            bad_line,
            INVALID_UTF8,
            f"invalid UTF-8 byte 0x{data[u.start]:02x} at column {bad_col}",
            column=bad_col,
        )
    if reason.startswith("Detected duplicate key"):
        return _finding(
            path, line, DUPLICATE_KEY, f"{reason} ({where}); parsers disagree on which value wins", column=at
        )
    if reason.startswith("recursion limit exceeded"):
        return _finding(path, line, TOO_LARGE, f"value nested deeper than the parser's limit ({where})", column=at)
    if reason in ("expected value", "invalid number") and m:
        # jiter points at (or just past) the start of the bad token
        row = data.split(b"\n")[int(m.group(1)) - 1] if b"\n" in data else data
        for start in (col - 1, col - 2):
            if start >= 0 and _NON_FINITE.match(row, start):
                token = _NON_FINITE.match(row, start).group().decode()  # type: ignore[union-attr]
                return _finding(path, line, NON_FINITE, f"{token} at {where} is not a JSON number", column=at)
    if reason.startswith("EOF while parsing") and at_eof:
        return _finding(path, line, TRUNCATED, f"file ends inside a JSON value ({reason}, {where})", column=at)
    return _finding(path, line, INVALID_JSON, f"{reason} ({where})", column=at)


def parse(data: bytes) -> Any:
    """Parse one JSON text strictly (raises ValueError with a position on bad input).

    The common case goes through orjson, the fastest parser, which however keeps the
    last value of a duplicate key silently. Duplicates are caught without a second
    parse: every `:` of a JSON text is either a key separator or a literal character
    inside a string, and orjson writes both back one for one, so re-serialising a
    document with no duplicate key gives exactly as many colons as the input. The one
    way the input can hold a colon that does not count is a `\u003a` escape, so such
    input (and anything orjson rejects, or a count mismatch) is parsed again by jiter,
    which rejects NaN/Infinity and duplicate keys and reports the position.

    orjson also reads an integer past 64 bits as a float (`18446744073709551616` becomes
    1.8446744073709552e19, and an exact rule such as TS401 then meets a float where the
    schema promised an integer), so a text holding 19 digits where a number can start (the
    shortest such integer has 19) goes to jiter, which keeps integers exact.
    """
    if _NINETEEN in data.translate(_DIGIT_MAP) and _LONG_DIGITS.search(data):  # translate: a C pass, the regex is slow
        return jiter.from_json(data, allow_inf_nan=False, catch_duplicate_keys=True)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        try:
            again = orjson.dumps(value)
        except orjson.JSONEncodeError:  # nested deeper than orjson writes (or an int past 64 bits)
            pass
        else:
            if b"\\u003" not in data and data.count(b":") == again.count(b":"):
                return value
    return jiter.from_json(data, allow_inf_nan=False, catch_duplicate_keys=True)


def skip_rest_of_line(f: IO[bytes], chunk: int = 1 << 20) -> bool:
    """Consume up to and including the next newline; True if one was found."""
    while True:
        block = f.readline(chunk)
        if not block:
            return False
        if block.endswith(b"\n"):
            return True


class LineFraming:
    """The JSON Lines framing of one file, line by line: CRLF (reported once per file),
    a BOM on line 1, blank lines. `read_jsonl` and the canonical fast path
    (`formats/canonical/fast/`) both frame lines through it, so they report alike."""

    __slots__ = ("crlf_reported", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self.crlf_reported = False

    def too_long(self, f: IO[bytes], raw: bytes, max_line_bytes: int) -> bool:
        """True (and the rest of the line consumed) when `raw` is the first part of a line
        longer than `max_line_bytes`, as `readline(max_line_bytes + 1)` returned it."""
        if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
            skip_rest_of_line(f)
            return True
        return False

    def too_long_finding(self, line_no: int, max_line_bytes: int) -> Finding:
        return _finding(self.name, line_no, TOO_LARGE, f"line longer than {max_line_bytes} bytes; skipped")

    def frame(self, line_no: int, raw: bytes, out: list[Finding]) -> bytes | None:
        """The JSON text of one raw line (None for a blank line), its framing findings
        appended to `out`."""
        at_eof = not raw.endswith(b"\n")
        data = raw[:-1] if not at_eof else raw
        if data.endswith(b"\r"):
            data = data[:-1]
            if not self.crlf_reported:
                self.crlf_reported = True
                out.append(_finding(self.name, line_no, CRLF, "line ends with CRLF (reported once per file)"))
        if line_no == 1 and data.startswith(_BOM):
            data = data[3:]
            out.append(_finding(self.name, 1, BOM, "UTF-8 byte order mark at start of file; ignored"))
        if not data.strip():
            out.append(_finding(self.name, line_no, BLANK_LINE, "blank line skipped"))
            return None
        return data

    def parse(self, line_no: int, raw: bytes, data: bytes) -> Record | Finding:
        """A framed line parsed strictly (see `parse`): its record, or the finding why not."""
        try:
            value = parse(data)
        except ValueError as exc:
            return parse_error(self.name, line_no, data, exc, at_eof=not raw.endswith(b"\n"))
        return Record(self.name, line_no, "", value, len(raw), data)


def read_jsonl(
    path: Path | str, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, stream: IO[bytes] | None = None
) -> Iterator[Record | Finding]:
    """Yield one `Record` per line, or a `Finding` for each line that cannot be read."""
    framing = LineFraming(str(path))
    f = stream if stream is not None else open_input(path)
    try:
        line_no = 0
        found: list[Finding] = []
        while True:
            raw = f.readline(max_line_bytes + 1)
            if not raw:
                return
            line_no += 1
            if framing.too_long(f, raw, max_line_bytes):
                yield framing.too_long_finding(line_no, max_line_bytes)
                continue
            data = framing.frame(line_no, raw, found)
            if found:
                yield from found
                found.clear()
            if data is not None:
                yield framing.parse(line_no, raw, data)
    finally:
        if stream is None:
            f.close()


def dumps(value: Any, *, indent: bool = False, spellings: dict[int, str] | None = None) -> bytes:
    """Serialise `value` as compact (or 2-space indented) UTF-8 JSON, byte for byte what
    orjson writes; integers beyond 64 bits (which jiter reads and orjson cannot write)
    go through the standard library, which writes the same text for everything else.
    With `spellings` (`number_spellings`), each float named there is written as it was
    spelled in the text it was read from (`1E2`, not `100.0`)."""
    try:
        spelled = _spelled(value, spellings) if spellings else value
    except RecursionError:  # nested past Python's limit: written as orjson spells it
        spelled = value
    try:
        return orjson.dumps(spelled, option=orjson.OPT_INDENT_2 if indent else 0)
    except orjson.JSONEncodeError:
        try:
            text = json.dumps(
                value, ensure_ascii=False, allow_nan=False, indent=2 if indent else None,
                separators=(",", ": ") if indent else (",", ":"),
            )  # fmt: skip
        except ValueError as exc:  # an integer past Python's str() digit limit
            raise InputError(f"cannot write this value as JSON: {exc}") from None
        return text.encode("utf-8", "surrogatepass")


class _Number:
    """A number as `json.loads` met it: its text."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def number_spellings(value: Any, data: bytes) -> dict[int, str]:
    """How the floats of `value`, parsed from the JSON text `data`, were spelled there where
    `dumps` would spell them otherwise (`1E2`, `1.50`, `2.5e-3`), by the float object's `id`
    (each parsed float is an object of its own; one met twice with two spellings is left
    out). `dumps(value, spellings=...)` writes them so, wherever the objects moved meanwhile.
    Integers have one spelling but `-0`, which is not kept; empty when the standard library
    cannot read `data` again (nested past its recursion limit)."""
    try:
        spelled = json.loads(data, parse_float=_Number)
    except (ValueError, RecursionError):
        return {}
    out: dict[int, str] = {}
    dropped: set[int] = set()
    stack: list[tuple[Any, Any]] = [(value, spelled)]
    while stack:
        v, s = stack.pop()
        if isinstance(s, _Number):
            respelled = type(v) is float and orjson.dumps(v) != s.text.encode()
            if respelled and out.setdefault(id(v), s.text) != s.text:
                dropped.add(id(v))
        elif isinstance(s, dict) and isinstance(v, dict) and len(s) == len(v):
            stack.extend(zip(v.values(), s.values(), strict=True))
        elif isinstance(s, list) and isinstance(v, list) and len(s) == len(v):
            stack.extend(zip(v, s, strict=True))
    for k in dropped:
        del out[k]
    return out


def _spelled(value: Any, spellings: dict[int, str]) -> Any:
    """`value` with each float named in `spellings` as an `orjson.Fragment` of its text."""
    if type(value) is float:
        text = spellings.get(id(value))
        return value if text is None else orjson.Fragment(text)
    if isinstance(value, dict):
        return {k: _spelled(v, spellings) for k, v in value.items()}
    if isinstance(value, list):
        return [_spelled(v, spellings) for v in value]
    return value


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},]')
_WS = b" \t\r\n"


def _element_starts(data: bytes) -> list[int]:
    """Byte offsets where each element of a top-level JSON array starts."""
    starts: list[int] = []
    depth = 0
    for m in _TOKEN.finditer(data):
        c = m.group()[:1]
        if c in (b"[", b"{"):
            depth += 1
            opened_top = depth == 1
        elif c in (b"]", b"}"):
            depth -= 1
            continue
        elif c == b",":
            opened_top = depth == 1
        else:
            continue
        if opened_top:
            i = m.end()
            while i < len(data) and data[i] in _WS:
                i += 1
            starts.append(i)
    return starts


def read_json(path: Path | str, *, data: bytes | None = None) -> Iterator[Record | Finding]:
    """Yield the records of a `.json` file: the document, or each element of a list."""
    name = str(path)
    if data is None:
        data = read_input(path)
    if data.startswith(_BOM):
        yield _finding(name, 1, BOM, "UTF-8 byte order mark at start of file; ignored")
        data = data[3:]
    if not data.strip():
        yield _finding(name, 1, TRUNCATED, "file is empty")
        return
    try:
        value = parse(data)
    except ValueError as exc:
        yield parse_error(name, 1, data, exc, at_eof=True)
        return
    if isinstance(value, list):
        first = data.lstrip(_WS)[:1]
        starts = _element_starts(data) if first == b"[" else []
        line, pos = 1, 0
        for i, item in enumerate(value):
            if i < len(starts):
                line += data.count(b"\n", pos, starts[i])
                pos = starts[i]
            yield Record(name, line, f"/{i}", item, 0, data)
    else:
        yield Record(name, 1, "", value, len(data), data)
