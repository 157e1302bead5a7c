"""Every command of the CLI over every class of hostile input (issue 9: nothing lost,
nothing crashes).

The cases are generated: `CLASSES` (how an input is hostile) x `COMMANDS` (every
command that reads a file, with the hostile path in each place a path goes). Each case
asserts that the command

- exits 0, 1 or 2 (never 3, "internal error"), and prints no traceback;
- leaves the input tree exactly as it was (paths, types, modes, bytes, mtimes) and
  writes nothing in the working directory (outputs go only where the case asked);
- names the file when it fails;
- finishes under a time bound (an interval timer, `TIME_LIMIT`) and a memory bound
  (`RLIMIT_AS` raised by `MEMORY_LIMIT` over what the process already maps).

Cases run in-process through `conformance.cli.main` for speed. The classes that could
hang or balloon (FIFO, /dev/zero, YAML alias bomb, huge line, deep nesting) also run
through the real console entry point in a subprocess under a hard timeout and
`RLIMIT_AS` (`test_bounded_in_a_subprocess`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.core import escaping

VALID = Path(__file__).parent / "rules" / "canonical" / "valid.jsonl"
TIME_LIMIT = 15  # seconds per in-process case (the slowest passing case takes ~5 s on a loaded machine)
MEMORY_LIMIT = 2 << 30  # bytes of address space a case may add
HUGE_LINE = 2 << 20

# -- the classes of hostile input -----------------------------------------------------

Builder = Callable[[Path], Path]


def _valid_line(**usage: Any) -> bytes:
    """The valid assistant message of the fixture, with `usage` values spliced in raw."""
    line = VALID.read_text().splitlines()[2]
    doc = json.loads(line)
    text = json.dumps(doc)
    for key, raw in usage.items():
        text = text.replace(f'"{key}": {doc["metadata"]["usage"][key]}', f'"{key}": {raw}')
    return text.encode() + b"\n"


def _file(name: str, data: bytes) -> Builder:
    def build(d: Path) -> Path:
        p = d / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        return p

    return build


def _symlink(target: str) -> Builder:
    def build(d: Path) -> Path:
        p = d / "t.jsonl"
        p.symlink_to(target)
        return p

    return build


def _fifo(d: Path) -> Path:
    p = d / "t.jsonl"
    os.mkfifo(p)  # no writer ever comes: opening it for reading would block forever
    return p


def _unreadable(d: Path) -> Path:
    p = _file("t.jsonl", VALID.read_bytes())(d)
    p.chmod(0)
    return p


def _folder_named_like_a_file(d: Path) -> Path:
    p = d / "t.jsonl"
    p.mkdir()
    (p / "inner.txt").write_text("x")
    return p


def _deep(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth + b"\n"


_BOMB = b"a: &a [x, x, x, x, x, x, x, x, x, x]\n" + b"".join(
    f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n".encode() for p, c in zip("abcdefgh", "bcdefghi", strict=True)
)

CHIBI = Path(__file__).parent / "chibi" / "fixtures" / "default"
SECRET = "SECRET-OUTSIDE-THE-UNIT"  # held by a file outside the input: never echoed


def _chibi(d: Path) -> Path:
    p = d / "ctx"
    shutil.copytree(CHIBI, p)
    return p


def _chibi_link_out(d: Path) -> Path:
    """A chibi context whose active partition is a link to a file outside the context."""
    p = _chibi(d)
    outside = d.parent / "aux" / "outside.jsonl"
    outside.parent.mkdir(exist_ok=True)
    entry = {"id": "x", "timestamp": 1767225700, "from": SECRET, "to": "b", "content": SECRET, "entry_type": "message"}
    outside.write_text(json.dumps(entry) + "\n")
    active = p / "transcript" / "active.jsonl"
    active.unlink()
    active.symlink_to(outside)
    return p


def _chibi_active(kind: str) -> Builder:
    """A chibi context whose active partition (transcript/active.jsonl) is a folder or a FIFO."""

    def build(d: Path) -> Path:
        p = _chibi(d)
        active = p / "transcript" / "active.jsonl"
        active.unlink()
        if kind == "folder":
            active.mkdir()
        else:
            os.mkfifo(active)  # no writer ever comes: opening it would block forever
        return p

    return build


def _store_named(name: bytes) -> Builder:
    """A valid §9.1 store (the fixture converted) under a file name given as bytes."""

    def build(d: Path) -> Path:
        p = Path(os.fsdecode(os.fsencode(d) + b"/" + name))
        assert main(["convert", "--to", "sqlite", str(VALID), str(p)]) == 0
        return p

    return build


def _named(name: bytes) -> Builder:
    """The valid fixture under a file name given as bytes (not UTF-8, a newline)."""
    return lambda d: _file(os.fsdecode(name), VALID.read_bytes())(d)


# paths (relative to the tree) that the case denies: a folder without read or search
# permission (simulated by `deny`, since root reads everything)
DENIED: dict[str, list[str]] = {"chibi-denied-transcript": ["ctx/transcript"], "denied-folder": ["sub"]}


def _denied_folder(d: Path) -> Path:
    _file("sub/t.jsonl", VALID.read_bytes())(d)
    return _file("good.jsonl", VALID.read_bytes())(d)


CLASSES: dict[str, Builder] = {
    "malformed-json": _file("t.jsonl", b'{"role": \n{"x" 1}\n'),
    "truncated": _file("t.jsonl", VALID.read_bytes()[:300]),
    "invalid-utf8": _file("t.jsonl", b'{"id": "\xff\xfe"}\n'),
    "huge-line": _file("t.jsonl", b'{"a": "' + b"x" * HUGE_LINE + b'"}\n'),
    "deep-300": _file("t.jsonl", _deep(300)),
    "deep-1000": _file("t.jsonl", b"[" * 1000 + b"]" * 1000 + b"\n"),
    "fifo": _fifo,
    "dev-zero": _symlink("/dev/zero"),
    "char-device": _symlink("/dev/null"),
    "symlink-loop": _symlink("t.jsonl"),
    "unreadable": _unreadable,
    "odd-name-[/x]": _file("[/x].jsonl", VALID.read_bytes()),
    "odd-name-[red]": _file("[red]r.jsonl", VALID.read_bytes()),
    "odd-name-colons": _file("a:b:c.jsonl", VALID.read_bytes()),
    "odd-name-not-utf8": _named(b"t\xff\xfe.jsonl"),
    "odd-name-newline": _named(b"a\nb.jsonl"),
    "store-named-not-utf8": _store_named(b"s\xff.db"),
    "yaml-alias-bomb": _file("t.yaml", _BOMB),
    "number-1e999999999": _file("t.jsonl", _valid_line(input_tokens="1e999999999")),
    "number-10**400": _file("t.jsonl", _valid_line(input_tokens=str(10**400))),
    "number-NaN": _file("t.jsonl", _valid_line(input_tokens="NaN")),
    "empty": _file("t.jsonl", b""),
    "folder-named-like-a-file": _folder_named_like_a_file,
    "chibi-link-out": _chibi_link_out,
    "chibi-denied-transcript": _chibi,
    "denied-folder": _denied_folder,
    "chibi-active-folder": _chibi_active("folder"),
    "chibi-active-fifo": _chibi_active("fifo"),
}
BOUNDED = ["fifo", "dev-zero", "yaml-alias-bomb", "huge-line", "deep-1000"]

# -- the commands ---------------------------------------------------------------------


@dataclass(frozen=True)
class Ctx:
    path: Path  # the hostile input
    tree: Path  # the folder holding it (its fingerprint must not change)
    out: Path  # where outputs may go
    good: Path  # a valid canonical transcript outside the tree


Argv = Callable[[Ctx], list[str]]


def _argv(*template: str) -> Argv:
    """An argv with `{path}`, `{tree}`, `{out}`, `{good}` filled in from the case."""
    return lambda c: [t.format(path=c.path, tree=c.tree, out=c.out, good=c.good) for t in template]


TARGETS = ["sqlite", "chibi", "gpt2099", "geppetto"]

COMMANDS: dict[str, Argv] = {
    "validate": lambda c: ["validate", str(c.path)],
    "validate-walk": lambda c: ["validate", str(c.tree)],
    "validate-json": lambda c: ["validate", "-o", "json", str(c.path)],
    **{f"validate-format-{f}": _argv("validate", "--format", f, "{path}") for f in ["canonical", *TARGETS]},
    "validate-tools": lambda c: ["validate", "--tools", str(c.path), str(c.good)],
    "validate-pricing": lambda c: ["validate", "--pricing", str(c.path), str(c.good)],
    **{f"convert-to-{f}": _argv("convert", "--to", f, "{path}", "{out}/result") for f in TARGETS},
    **{
        f"convert-from-{f}": _argv("convert", "--from", f, "--to", "canonical", "{path}", "{out}/r.jsonl")
        for f in TARGETS
    },
    # outputs aimed at the input's own folder, with --force: refused, nothing touched
    "convert-into-input-folder": _argv("convert", "--to", "sqlite", "--force", "{path}", "{tree}"),
    "convert-over-input": _argv("convert", "--to", "chibi", "--force", "{path}", "{path}"),
    "migrate-into-input-folder": _argv("migrate", "{path}", "--to", "2", "--force", "-o", "{tree}"),
    "migrate": lambda c: ["migrate", str(c.path), "--to", "2"],
    "migrate-output": lambda c: ["migrate", str(c.path), "--to", "2", "-o", str(c.out / "m.jsonl")],
    "migrate-gpt2099": lambda c: ["migrate", "--format", "gpt2099", str(c.path), "--to", "2"],
    "schema-diff": lambda c: ["schema", "diff", str(c.path), str(c.path), "--examples", "5"],
    "schema-diff-folders": lambda c: ["schema", "diff", str(c.tree), str(c.tree), "--examples", "5"],
    "gpt2099-resolve": lambda c: ["gpt2099", "resolve", str(c.path)],
    "wire-parse-anthropic": lambda c: ["wire", "parse", str(c.path), "--adapter", "anthropic"],
    "wire-parse-openai-chat": lambda c: ["wire", "parse", str(c.path), "--adapter", "openai-chat"],
    "wire-render": lambda c: ["wire", "render", str(c.path), "--adapter", "anthropic"],
    "conform-cassettes": lambda c: ["conform", "anthropic", "--cassettes", str(c.tree), "--no-samples"],
    "rules": _argv("rules", "--select", "TS0"),
    "replay-check": _argv("replay-check", "{path}", "--to", "anthropic"),
    "cassettes-lint": _argv("cassettes", "lint", "{path}"),
    # an output path that exists (whatever it is): refused without --force, nothing touched
    "conform-report-over-input": _argv("conform", "anthropic", "--no-samples", "--report", "{path}"),
}

# Cases known to fail, as rules over the matrix (strict: an xfail that starts passing
# fails, so the rules stay true and are removed as the code is fixed).


def known_failure(klass: str, command: str) -> str | None:
    """Why a case is expected to fail today (None: it must pass)."""
    return None


# -- fingerprints and bounds ----------------------------------------------------------


def fingerprint(root: Path) -> list[tuple[Any, ...]]:
    """Every entry under `root` (symlinks not followed, FIFOs never opened): its path,
    type, mode, size, mtime, and the hash of a regular file's bytes."""
    out: list[tuple[Any, ...]] = []
    for here, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted([*dirs, *names]):
            p = Path(here) / name
            st = p.lstat()
            digest = None
            if stat.S_ISREG(st.st_mode):
                try:
                    digest = hashlib.sha256(p.read_bytes()).hexdigest()
                except PermissionError:
                    digest = "unreadable"
            link = str(p.readlink()) if stat.S_ISLNK(st.st_mode) else None
            out.append((str(p.relative_to(root)), st.st_mode, st.st_size, st.st_mtime_ns, digest, link))
    return out


class _Timeout(BaseException):  # not an Exception: nothing in the CLI may swallow it
    pass


def _vm_size() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


@contextlib.contextmanager
def bounded(seconds: int, extra_bytes: int) -> Iterator[None]:
    """Fail (rather than hang or swap) when the block runs too long or maps too much."""

    def alarm(signum: int, frame: object) -> None:
        raise _Timeout(f"took longer than {seconds} s")

    old_handler = signal.signal(signal.SIGALRM, alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _vm_size() + extra_bytes
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGALRM, old_handler)


@contextlib.contextmanager
def deny(folders: list[Path]) -> Iterator[None]:
    """Act as if each folder had mode 0 for this process: it cannot be listed or opened,
    and nothing below it can be looked up (EACCES), as for a user other than root."""
    roots = [str(f) for f in folders]

    def absolute(path: Any) -> str | None:  # None: a descriptor, not a path
        # abspath, not resolve: it touches no file (resolve would stat through the patches)
        return None if isinstance(path, int) else os.path.abspath(os.fsdecode(os.fspath(path)))  # noqa: PTH100

    def below(path: Any) -> bool:
        text = absolute(path)
        return text is not None and any(text.startswith(r + os.sep) for r in roots)

    def at_or_below(path: Any) -> bool:
        return below(path) or absolute(path) in roots

    def refuse(path: Any) -> OSError:
        return PermissionError(errno.EACCES, "Permission denied", os.fsdecode(os.fspath(path)))

    def wrap(fn: Callable[..., Any], test: Callable[[Any], bool]) -> Callable[..., Any]:
        def guarded(path: Any = ".", *args: Any, **kw: Any) -> Any:
            if test(path):
                raise refuse(path)
            return fn(path, *args, **kw)

        return guarded

    with pytest.MonkeyPatch.context() as mp:
        for name in ("stat", "lstat"):
            mp.setattr(os, name, wrap(getattr(os, name), below))
        for name in ("scandir", "listdir", "open"):
            mp.setattr(os, name, wrap(getattr(os, name), at_or_below))
        mp.setattr(io, "open", wrap(io.open, at_or_below))
        mp.setattr("builtins.open", wrap(open, at_or_below))
        yield


@pytest.fixture
def ctx(tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Ctx]:
    klass = request.node.callspec.params["klass"]
    tree, out, aux, cwd = (tmp_path / n for n in ("in", "out", "aux", "cwd"))
    for d in (tree, out, aux, cwd):
        d.mkdir()
    good = aux / "good.jsonl"
    good.write_bytes(VALID.read_bytes())
    path = CLASSES[klass](tree)
    monkeypatch.chdir(cwd)
    yield Ctx(path, tree, out, good)
    with contextlib.suppress(OSError):
        path.chmod(0o644)


def _params() -> Iterator[Any]:
    for klass in CLASSES:
        for command in COMMANDS:
            reason = known_failure(klass, command)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(klass, command, marks=marks, id=f"{klass}-{command}")


def _names_file(text: str, c: Ctx, argv: list[str]) -> bool:
    """The output names the hostile file (or, for a walk, a path inside the tree)."""
    if str(c.path) in text or escaping.text(str(c.path)) in text:  # a newline, a non-UTF-8 byte: escaped
        return True
    return str(c.tree) in argv and str(c.tree) in text


@pytest.mark.parametrize(("klass", "command"), list(_params()))
def test_hostile_input(klass: str, command: str, ctx: Ctx, capsys: pytest.CaptureFixture[str]) -> None:
    argv = COMMANDS[command](ctx)
    before = fingerprint(ctx.tree)
    with bounded(TIME_LIMIT, MEMORY_LIMIT), deny([ctx.tree / d for d in DENIED.get(klass, [])]):
        code = main(argv)
    cap = capsys.readouterr()
    text = cap.out + cap.err
    assert code in (0, 1, 2), (code, text[-2000:])
    assert "Traceback" not in text and "internal error" not in text, text[-2000:]
    assert SECRET not in text, "read a file outside the input through a link"
    assert fingerprint(ctx.tree) == before, "the input tree changed"
    assert list(Path.cwd().iterdir()) == [], "wrote into the working directory"
    if code != 0:
        assert _names_file(text, ctx, argv), text[-2000:]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


@pytest.mark.parametrize("klass", BOUNDED)
def test_bounded_in_a_subprocess(klass: str, tmp_path: Path) -> None:
    tree, cwd = tmp_path / "in", tmp_path / "cwd"
    tree.mkdir()
    cwd.mkdir()
    path = CLASSES[klass](tree)
    before = fingerprint(tree)
    r = subprocess.run(
        [sys.executable, "-m", "conformance.cli", "validate", str(path), str(tree)],
        capture_output=True,
        text=True,
        timeout=120,  # interpreter start-up included, on a loaded machine
        preexec_fn=_limit_memory,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert r.returncode in (0, 1, 2), r.stderr[-2000:]
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    assert str(path) in r.stdout + r.stderr
    assert fingerprint(tree) == before and list(cwd.iterdir()) == []


def test_case_count() -> None:
    """The matrix is what the module docstring says (a guard against a silently empty one)."""
    assert len(CLASSES) >= 20 and len(COMMANDS) >= 25
    assert len(list(_params())) == len(CLASSES) * len(COMMANDS)


# -- many findings: streamed, not kept (issue 31) -------------------------------------

FINDINGS_RSS_BOUND_MB = 300  # a run keeping its 700,000 findings peaks near 800 MB; streaming, near 70


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak RSS from /proc (Linux)")
def test_many_findings_stream_in_bounded_memory(tmp_path: Path) -> None:
    """`validate -q` over 100,000 lines of `{}` (7 findings each) keeps only counts: the
    peak RSS of the child that runs it stays far below what holding the findings takes."""
    data = tmp_path / "empty.jsonl"
    data.write_bytes(b"{}\n" * 100_000)
    # the peak is read from /proc/self/status (VmHWM: this process image's own), not
    # ru_maxrss, which Linux carries over exec from the forking process (pytest's, here)
    code = (
        "import sys\n"
        "from conformance.cli import main\n"
        "rc = main(['validate', '-q', sys.argv[1]])\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
        "sys.stderr.write(f'maxrss_kb={hwm}\\n')\n"
        "sys.exit(rc)\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(data)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert r.returncode == 1, r.stderr[-2000:]
    assert "700000 error(s)" in r.stdout and "100000 record(s)" in r.stdout, r.stdout
    rss_kb = int(r.stderr.rsplit("maxrss_kb=", 1)[1].split()[0])
    assert rss_kb < FINDINGS_RSS_BOUND_MB * 1024, f"peak RSS {rss_kb // 1024} MB"


# -- a walk that meets a denied folder or a link out of a unit (issue 31) --------------


def test_denied_folders_are_reported_and_the_rest_of_the_walk_validated(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder the walk cannot look into, and a chibi context whose transcript/ is
    denied: one located line each, exit 2, and the other inputs still validated."""
    _denied_folder(tmp_path)
    _chibi(tmp_path)
    with deny([tmp_path / "sub", tmp_path / "ctx" / "transcript"]):
        code = main(["validate", str(tmp_path)])
    cap = capsys.readouterr()
    assert code == 2, cap.err
    assert "internal error" not in cap.err
    assert f"turnspec: {tmp_path / 'sub'}" in cap.err
    assert f"{tmp_path / 'ctx' / 'transcript'}" in cap.err and "Permission denied" in cap.err
    assert f"{tmp_path / 'good.jsonl'}" not in cap.err
    assert cap.err.count("turnspec: ") == 2, cap.err  # one line per denied folder
    # good.jsonl and the context's own files are still validated
    assert "0 error(s)" in cap.out and "2 unreadable" in cap.out and " 0 file(s)" not in cap.out, cap.out


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a folder whatever its mode: `deny` simulates it above")
def test_denied_folder_for_real(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _denied_folder(tmp_path)
    ctx = _chibi(tmp_path)
    (tmp_path / "sub").chmod(0)
    (ctx / "transcript").chmod(0o600)  # readable names, no search permission
    try:
        code = main(["validate", str(tmp_path)])
    finally:
        (tmp_path / "sub").chmod(0o755)
        (ctx / "transcript").chmod(0o755)
    cap = capsys.readouterr()
    assert code == 2 and "internal error" not in cap.err, cap.err
    assert str(tmp_path / "sub") in cap.err and str(ctx / "transcript") in cap.err


def test_link_out_of_a_unit_is_reported_not_followed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = tmp_path / "in"
    tree.mkdir()
    ctx = _chibi_link_out(tree)
    for argv in (["validate", str(ctx)], ["validate", str(tree)], ["convert", "--from", "chibi", "--to", "canonical",
                 str(ctx), str(tmp_path / "r.jsonl")]):  # fmt: skip
        code = main(argv)
        cap = capsys.readouterr()
        assert code == 2, (argv, cap.err)
        assert SECRET not in cap.out + cap.err
        assert f"{ctx / 'transcript' / 'active.jsonl'}" in cap.err or "CB310" in cap.err, cap.err


# -- arguments and values the schemas refuse (issue 31) --------------------------------

ADAPTERS = [
    "anthropic",
    "bedrock",
    "gemini",
    "openai-chat",
    "openai-responses",
]  # those whose request schema bounds max tokens


def _tool_input_list(d: Path) -> Path:
    """The fixture with its tool_use `input` a list (the schema says an object)."""
    text = VALID.read_text().replace('"input": {"path": "README.md"}', '"input": ["README.md"]')
    assert '"input": ["README.md"]' in text
    return _file("t.jsonl", text.encode())(d)


def _index_far(d: Path) -> Path:
    """An Anthropic stream whose content block index jumps to 10**18."""
    start = {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [],
             "model": "claude-x", "stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 1}}}  # fmt: skip
    events = [
        start,
        {"type": "content_block_start", "index": 10**18, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 10**18, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 10**18},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]
    return _file("s.sse", "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode())(d)


GPT2099_THREAD = Path(__file__).parent / "gpt2099" / "fixtures" / "GP011-options.jsonl"

# name -> (input builder or None, argv with {path}, what the refusal must say)
REFUSED: dict[str, tuple[Builder | None, list[str], str]] = {
    **{
        f"wire-render-{a}-negative-max-tokens": (
            None,
            ["wire", "render", str(VALID), "-a", a, "--max-tokens", "-5"],
            "-5 violates minimum",
        )
        for a in ADAPTERS
    },
    **{
        f"wire-render-{a}-tool-input-list": (
            _tool_input_list,
            ["wire", "render", "{path}", "-a", a],
            ":3: /content/2/input: ToolUseBlock: expected object",
        )
        for a in [*ADAPTERS, "ollama"]
    },
    "wire-parse-anthropic-index-1e18": (_index_far, ["wire", "parse", "{path}", "-a", "anthropic"], "/index: 10000"),
    "gpt2099-resolve-empty-headish": (None, ["gpt2099", "resolve", str(GPT2099_THREAD), ""], "empty headish"),
    "gpt2099-resolve-blank-headish": (None, ["gpt2099", "resolve", str(GPT2099_THREAD), " "], "empty headish"),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_refused_with_a_located_line(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build, template, says = REFUSED[case]
    path = build(tmp_path) if build is not None else tmp_path
    code = main([t.format(path=path) for t in template])
    cap = capsys.readouterr()
    assert code in (1, 2), (code, cap.out[-500:])
    assert says in cap.err and "internal error" not in cap.err, cap.err


# -- refusals name the file, line and pointer that block them (issue 31) ---------------


def _second_60(d: Path) -> Path:
    text = VALID.read_text().replace('"2026-05-08T12:00:01.000000Z"', '"2026-05-08T12:00:60.000000Z"')
    return _file("t.jsonl", text.encode())(d)


def _year_one_third(d: Path) -> Path:
    """The fixture with its third message in year 1: before the two it follows (a TS204 warning)."""
    text = VALID.read_text().replace('"2026-05-08T12:00:03.000000Z"', '"0001-01-01T00:00:00.000000Z"')
    assert "0001-01-01" in text
    return _file("t.jsonl", text.encode())(d)


LOCATED: dict[str, tuple[Builder, list[str], Callable[[Path], str]]] = {
    "convert-to-chibi-second-60": (
        _second_60, ["convert", "--to", "chibi", "{path}", "{out}"], lambda p: f"{p}:1: /created_at: created_at"
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(LOCATED))
def test_refusal_names_where(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build, template, says = LOCATED[case]
    (tmp_path / "in").mkdir()
    path = build(tmp_path / "in")
    with bounded(TIME_LIMIT, MEMORY_LIMIT):
        code = main([t.format(path=path, out=tmp_path / "out") for t in template])
    cap = capsys.readouterr()
    assert code == 2, (code, cap.err)
    assert says(path) in cap.err and "internal error" not in cap.err, cap.err


def test_convert_to_sqlite_year_1_out_of_order_round_trips(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session going back to year 1 (a TS204 warning) is spec-valid: the store orders a
    session by id (§6.1), so `convert --to sqlite` writes it (it was refused while the
    store was read by created_at) and `convert --to canonical` gives the same bytes back."""
    (tmp_path / "in").mkdir()
    path = _year_one_third(tmp_path / "in")
    with bounded(TIME_LIMIT, MEMORY_LIMIT):
        code = main(["convert", "--to", "sqlite", str(path), str(tmp_path / "out.db")])
        assert code == 0, capsys.readouterr().err
        code = main(
            ["convert", "--from", "sqlite", "--to", "canonical", str(tmp_path / "out.db"), str(tmp_path / "b.jsonl")]
        )
    assert code == 0, capsys.readouterr().err
    assert (tmp_path / "b.jsonl").read_bytes() == path.read_bytes()


@pytest.mark.parametrize("kind", ["folder", "fifo"])
@pytest.mark.parametrize("command", ["validate", "convert"])
def test_chibi_active_partition_that_is_no_file_is_named(
    kind: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The active partition a folder or a FIFO: one line naming it and what it is (never
    opened), not CB305's "does not exist" nor CB212's consequence in context.jsonl."""
    (tmp_path / "in").mkdir()
    ctx = _chibi_active(kind)(tmp_path / "in")
    active = ctx / "transcript" / "active.jsonl"
    argv = {"validate": ["validate", str(ctx)],
            "convert": ["convert", "--from", "chibi", "--to", "canonical", str(ctx), str(tmp_path / "r.jsonl")]}  # fmt: skip
    with bounded(TIME_LIMIT, MEMORY_LIMIT):
        code = main(argv[command])
    cap = capsys.readouterr()
    what = "a folder" if kind == "folder" else "a FIFO (named pipe)"
    assert code == (1 if command == "validate" else 2), (code, cap.out, cap.err)
    text = cap.out + cap.err
    assert f"{active}" in text and "CB301" in text and f"active.jsonl is {what}, not a regular file" in text, text
    assert "CB212" not in text and "CB305" not in text and "internal error" not in text, text
    assert not (tmp_path / "r.jsonl").exists()
