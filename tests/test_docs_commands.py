"""The docs are tested against the CLI, so they cannot drift from it (issue 39, item 7).

Every code block of README.md and docs/ that shows a `turnspec` (or `pytest
--turnspec-adapter`) command is one of:

- runnable: a ```` ```console ```` block of `$ turnspec ...` lines, each followed by the output
  it prints (standard output and error, in the order written; a line `...` stands for any
  number of lines); the command is run from the repository's root (`< FILE` feeds standard
  input) and its output must be that, line for line;
- not runnable, with the marker `<!-- not runnable: WHY -->` on the line before it (a
  synopsis with placeholders, a command that writes, installs or needs the network).

Whatever the block, every command it shows must name a real sub-command, only options that
command has, and only values an option of fixed choices takes (`-o text|json|sarif`).
"""

from __future__ import annotations

import contextlib
import enum
import io
import re
import shlex
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer import _click as click

from conformance.cli import command, main

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
MARKER = re.compile(r"^<!-- not runnable: .+ -->$")
COMMAND = re.compile(r"(?:^|&&|\|\||;|\|)\s*(?:\$\s+)?(?:\S*/)?(turnspec|pytest)\s+(.*)")


@dataclass
class Block:
    page: Path
    line: int  # 1-based, of the block's first line
    info: str  # a fenced block's info string ("" for an indented block)
    lines: list[str]
    marked: bool


def _blocks(page: Path) -> Iterator[Block]:
    text = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(text):
        line = text[i]
        before = next((text[j].strip() for j in range(i - 1, -1, -1) if text[j].strip()), "")
        fence = re.match(r"^(\s*)(```+|~~~+)(.*)$", line)
        if fence:
            end = next((j for j in range(i + 1, len(text)) if text[j].strip().startswith(fence.group(2))), len(text))
            yield Block(page, i + 2, fence.group(3).strip(), text[i + 1 : end], bool(MARKER.match(before)))
            i = end + 1
            continue
        if line.startswith("    ") and (i == 0 or not text[i - 1].strip()):
            end = i
            while end < len(text) and (text[end].startswith("    ") or not text[end].strip()):
                end += 1
            body = [x[4:] for x in text[i:end]]
            while body and not body[-1].strip():
                body.pop()
            yield Block(page, i + 1, "", body, bool(MARKER.match(before)))
            i = end
            continue
        i += 1


def _commands(block: Block) -> list[tuple[str, str]]:
    """(program, arguments) of each command the block shows."""
    out = []
    for line in block.lines:
        line = re.sub(r"(^|\s)#.*$", "", line)  # a shell comment
        for m in COMMAND.finditer(line):
            if m.group(1) == "pytest" and "--turnspec" not in m.group(2):
                continue
            out.append((m.group(1), m.group(2)))
    return out


BLOCKS = [b for page in PAGES for b in _blocks(page) if _commands(b) and b.info not in ("python", "toml")]


def _id(b: Block) -> str:
    return f"{b.page.relative_to(ROOT)}:{b.line}"


def test_the_docs_show_commands() -> None:
    assert len(BLOCKS) > 20
    assert any(b.info == "console" for b in BLOCKS)


@pytest.mark.parametrize("block", BLOCKS, ids=_id)
def test_each_command_block_is_runnable_or_marked(block: Block) -> None:
    runnable = block.info == "console" and all(line.startswith("$ ") for line in block.lines if COMMAND.search(line))
    assert runnable != block.marked, (
        f"{_id(block)}: a block of commands is a ```console block of `$ ` lines and their output, "
        "or carries <!-- not runnable: WHY --> on the line before it"
    )


def _tokens(args: str) -> list[str]:
    lexer = shlex.shlex(args, posix=True, punctuation_chars="<>|&;")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    out = []
    for tok in lexer:
        if tok in ("<", ">", "|", "||", "&&", ";", "&", ">>", "2>"):
            break
        out.append(tok)
    return out


def _resolve(tokens: list[str]) -> tuple[click.Command, list[str], list[str]]:
    cmd: click.Command = command()
    path: list[str] = []
    rest = list(tokens)
    while rest and rest[0] in getattr(cmd, "commands", {}):
        path.append(rest[0])
        cmd = cmd.commands[rest.pop(0)]  # type: ignore[attr-defined]
    return cmd, path, rest


def _choices(param: object) -> list[str]:
    """The values an option of fixed choices (an enum) takes; [] for any other option."""
    kind = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    for k in (kind, *typing.get_args(kind)):
        if isinstance(k, type) and issubclass(k, enum.Enum):
            return [str(m.value) for m in k]
    return []


def _option_problems(tokens: list[str]) -> list[str]:
    cmd, path, rest = _resolve(tokens)
    if hasattr(cmd, "commands") and not any(t in ("--help", "--version") for t in rest):
        return [f"`turnspec {' '.join(path)}` is a group: {rest[:1]} is none of its commands"]
    by_flag = {o: p for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}
    problems = []
    for i, raw in enumerate(rest):
        tok = raw.strip("[](){}")
        for part in tok.split("/") if tok.startswith("-") else ():
            flag = part.split("=", 1)[0]
            if not flag.startswith("-") or flag in ("-", "--help") or re.fullmatch(r"-\d+", flag):
                continue
            param = by_flag.get(flag)
            if param is None:
                problems.append(f"`turnspec {' '.join(path)}` has no option {flag}")
                continue
            choices = _choices(param)
            value = part.split("=", 1)[1] if "=" in part else rest[i + 1].strip("[](){}") if i + 1 < len(rest) else ""
            if choices and value and not value.isupper():
                wrong = [v for v in value.split("|") if v not in [str(c) for c in choices]]
                if wrong:
                    problems.append(f"`turnspec {' '.join(path)} {flag}` takes no {', '.join(wrong)}")
    return problems


def _pytest_problems(tokens: list[str]) -> list[str]:
    from conformance.suite import pytest_plugin

    parser = _Recorder()
    pytest_plugin.pytest_addoption(parser)  # type: ignore[arg-type]
    return [f"the pytest plugin has no option {t}" for t in tokens if t.startswith("--") and t not in parser.flags]


class _Recorder:
    """Enough of pytest's parser to record the options the plugin adds."""

    def __init__(self) -> None:
        self.flags: set[str] = set()

    def getgroup(self, *_: object) -> _Recorder:
        return self

    def addoption(self, *names: str, **_: object) -> None:
        self.flags.update(names)


@pytest.mark.parametrize("block", BLOCKS, ids=_id)
def test_every_command_shown_names_real_options(block: Block) -> None:
    problems = []
    for program, args in _commands(block):
        tokens = _tokens(args)
        problems += _pytest_problems(tokens) if program == "pytest" else _option_problems(tokens)
    assert problems == [], f"{_id(block)}: {problems}"


def _run(line: str) -> list[str]:
    tokens = _tokens(line[len("$ turnspec ") :])
    stdin = None
    if "<" in shlex.split(line, comments=True):
        words = shlex.split(line, comments=True)
        stdin = (ROOT / words[words.index("<") + 1]).read_bytes()
    out = io.StringIO()
    with contextlib.ExitStack() as stack:
        stack.enter_context(contextlib.chdir(ROOT))
        stack.enter_context(contextlib.redirect_stdout(out))
        stack.enter_context(contextlib.redirect_stderr(out))  # one stream: the order a terminal shows
        if stdin is not None:
            import sys

            fake = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
            stack.enter_context(pytest.MonkeyPatch.context()).setattr(sys, "stdin", fake)
        main(tokens)
    return [x.rstrip() for x in out.getvalue().splitlines()]


def _matches(want: list[str], got: list[str]) -> bool:
    if not want:
        return not got
    if want[0] == "...":
        return any(_matches(want[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and want[0] == got[0] and _matches(want[1:], got[1:])


RUNNABLE = [b for b in BLOCKS if b.info == "console"]


@pytest.mark.parametrize("block", RUNNABLE, ids=_id)
def test_runnable_examples_print_what_the_docs_show(block: Block) -> None:
    steps: list[tuple[str, list[str]]] = []
    for line in block.lines:
        if line.startswith("$ "):
            steps.append((line, []))
        elif steps:
            steps[-1][1].append(line.rstrip())
    assert steps
    for cmd, want in steps:
        got = _run(cmd)
        assert _matches(want, got), f"{_id(block)}: `{cmd[2:]}` printed:\n" + "\n".join(got)


def test_the_option_check_finds_drift() -> None:
    assert _option_problems(["validate", "--no-such-flag", "x"]) == ["`turnspec validate` has no option --no-such-flag"]
    assert _option_problems(["validate", "-o", "text|xml", "x"]) == ["`turnspec validate -o` takes no xml"]
    assert _option_problems(["schema", "nosuch"]) != []
    assert _option_problems(["validate", "PATH...", "[-j/--jobs", "N]", "[--output", "text|json]"]) == []
    assert _pytest_problems(["--turnspec-adapter", "x", "--turnspec-nope"]) == [
        "the pytest plugin has no option --turnspec-nope"
    ]


def test_the_formats_page_lists_every_format() -> None:
    from conformance.formats import all_formats

    page = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    names = {f.name for f in all_formats() if not f.name.startswith("chibi-")}  # chibi's vocabulary pins
    assert {n for n in names if f"| `{n}` |" not in page} == set()


def test_the_index_names_every_reference_adapters_provider() -> None:
    from conformance.adapters import registry

    page = (ROOT / "docs" / "index.md").read_text(encoding="utf-8").lower()
    providers = {str(registry.load(n).provider) for n in registry.available()}
    assert {p for p in providers if p not in page} == set()


def test_the_validate_page_covers_what_new_users_look_for() -> None:
    page = (ROOT / "docs" / "getting-started" / "validate.md").read_text(encoding="utf-8")
    for flag in ("--exit-zero", "--statistics", "--fail-on-skip", "--stdin-filename", "$ turnspec validate"):
        assert flag in page, flag
    assert "## Standard input" in page
