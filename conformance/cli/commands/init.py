"""`turnspec init adapter NAME`: a working adapter skeleton to start from.

The Python skeleton subclasses the reference adapter of an existing wire API, so it passes
`turnspec conform` on its first run; the author then changes what the provider does
differently, a method and a cassette at a time. `--lang typescript|go` writes a project in
that language instead (`conformance/data/templates/<lang>/`: the files every wire API shares
under `common/`, the wire mapping and the stream assembly under `<api>/`): an adapter of one
wire API of its own, spoken through the exec protocol (docs/exec-protocol.md), with a
manifest (`turnspec-exec.toml`) and a README for its author, that passes `turnspec conform
exec:turnspec-exec.toml` once built. `TEMPLATES` says which (language, wire API) pairs have
a skeleton. Either way one cassette is copied from turnspec's own
`cassettes/<reference adapter>/` (written from the provider's docs); third-party recordings
are never copied.
"""

from __future__ import annotations

import enum
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from ...core import escaping
from ...core.errors import InputError
from ...core.outputs import check_output, write_bytes
from ...core.ruledocs import DOCS_URL

NEW_WIRE_API_PAGE = f"{DOCS_URL}new-wire-api/"
"""The docs site's guide to a wire API turnspec has no record for (docs/new-wire-api.md):
what a skeleton written into someone else's repository points to, not this repository's files."""

EXEC_PROTOCOL_PAGE = f"{DOCS_URL}exec-protocol/"
"""The docs site's page of the exec protocol (docs/exec-protocol.md), which the skeletons in
other languages speak."""

NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


class Lang(enum.StrEnum):
    """The language of the skeleton: Python (a subclass of a reference adapter, imported by
    the suite) or a program the suite starts (the exec protocol)."""

    python = "python"
    typescript = "typescript"
    go = "go"


@dataclass(frozen=True)
class Template:
    """A skeleton in another language: an adapter of `api` written in `lang`, made of the
    files of `conformance/data/templates/<lang>/common/` and `.../<lang>/<api>/` (`{{name}}`,
    `{{docs}}`, `{{wire_api}}` and `{{api_title}}` filled in; `gitignore` written as
    `.gitignore`), and the commands that build it."""

    lang: Lang
    api: str  # the wire API its code speaks (a record name of REFERENCES)
    build: tuple[str, ...]

    @property
    def parts(self) -> tuple[str, ...]:
        """Its folders under templates/<lang>/: what every API shares, then the API's own."""
        return ("common", self.api)


BUILD: dict[Lang, tuple[str, ...]] = {
    Lang.typescript: ("npm install", "npm run build"),
    Lang.go: ("go build -o bin/ .",),
}
# the wire APIs each language has a skeleton of (`--api` picks one; openai-chat-completions
# by default)
SKELETON_APIS: dict[Lang, tuple[str, ...]] = {
    Lang.typescript: ("openai-chat-completions", "anthropic-messages", "gemini-generate-content"),
    Lang.go: ("openai-chat-completions", "anthropic-messages", "gemini-generate-content"),
}
TEMPLATES: dict[tuple[Lang, str], Template] = {
    (lang, api): Template(lang, api, BUILD[lang]) for lang, apis in SKELETON_APIS.items() for api in apis
}
TEMPLATES_DIR = Path(__file__).resolve().parents[2] / "data" / "templates"
MANIFEST = "turnspec-exec.toml"


@dataclass(frozen=True)
class Reference:
    """The reference adapter of one wire API, and what its skeleton starts with."""

    adapter: str  # entry-point name, and its folder under cassettes/
    module: str
    cls: str
    cassette: str  # the one cassette copied: it exercises the most of the capabilities
    # capabilities declared off in the skeleton: no case of the one cassette exercises them
    # (TC002 fails a capability declared true that nothing exercised)
    off: tuple[str, ...] = ()


REFERENCES: dict[str, Reference] = {
    "openai-chat-completions": Reference(
        "openai-chat",
        "conformance.adapters.openai_chat",
        "OpenAIChatAdapter",
        "tools.yaml",
        ("supports_prompt_caching",),
    ),
    "anthropic-messages": Reference(
        "anthropic", "conformance.adapters.anthropic", "AnthropicAdapter", "tools.yaml", ("supports_prompt_caching",)
    ),
    "openai-responses": Reference(
        "openai-responses",
        "conformance.adapters.openai_responses",
        "OpenAIResponsesAdapter",
        "tools.yaml",
        ("supports_prompt_caching",),
    ),
    "gemini-generate-content": Reference("gemini", "conformance.adapters.gemini", "GeminiAdapter", "cached.yaml"),
    "ollama-chat": Reference("ollama", "conformance.adapters.ollama", "OllamaAdapter", "tools.yaml"),
    "bedrock-converse": Reference(
        "bedrock", "conformance.adapters.bedrock", "BedrockAdapter", "tools.yaml", ("supports_prompt_caching",)
    ),
}
DEFAULT_API = "openai-chat-completions"


def reference_for(api: str) -> tuple[str, Reference]:
    """The wire API (by its record's name, or its reference adapter's name) and its reference."""
    for name, ref in REFERENCES.items():
        if api in (name, ref.adapter):
            return name, ref
    choices = ", ".join(f"{n} ({r.adapter})" for n, r in REFERENCES.items())
    raise InputError(f"--api {api}: no reference adapter for it (one of: {choices})")


def class_name(name: str) -> str:
    return "".join(part.capitalize() for part in re.split(r"[-_]", name)) + "Adapter"


def module_name(name: str) -> str:
    return name.replace("-", "_") + "_adapter"


def entry_point(name: str) -> str:
    return f'[project.entry-points."turnspec.adapters"]\n{name} = "{module_name(name)}:{class_name(name)}"\n'


def _prose(text: str, indent: str = "") -> str:
    """`text` filled to 88 columns (generated files pass a linter's default line length)."""
    return textwrap.fill(text, 88, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False) + "\n"


def adapter_source(name: str, api: str, ref: Reference) -> str:
    cls, base, mod = class_name(name), ref.cls, module_name(name)
    off = "".join(f'        "{c}": False,\n' for c in ref.off)
    comment = "    # "
    off_note = (
        _prose(
            "A capability declared true needs a cassette whose case exercises it (TC002): "
            f"{', '.join(ref.off)} stays off until cassettes/{name}/ holds one (`turnspec wire "
            f"show {api}` names turnspec's cassettes of this API).",
            comment,
        )
        if ref.off
        else ""
    )
    snippet = "".join(f"    {line}\n" for line in entry_point(name).splitlines())
    head = _prose(f"The `{name}` turnspec adapter: canonical messages <-> the `{api}` wire API.")
    intro = _prose(
        f"Written by `turnspec init adapter {name} --api {api}`. It starts as the reference "
        f"adapter of that API (`{ref.module}:{base}`), so it passes `turnspec conform` as it is:"
    )
    then = _prose(
        "Then change what your provider does differently, one method at a time, with a "
        f"cassette in cassettes/{name}/ for each difference (transcribed from the provider's "
        "documented examples, never recorded from this adapter). Register it in your "
        "package's pyproject.toml:"
    )
    name_note = _prose(
        f"The adapter's name: reports use it, and `turnspec conform` reads cassettes/{name}/ for it.", comment
    )
    api_note = _prose(
        f'`provider` and `wire_api` ("{api}") are inherited. wire_api names the WireApi record '
        f"(`turnspec wire show {api}` prints it) the checks read bodies through; a provider with its own API gets "
        f"a record of its own, registered with conformance.wire.registry.register ({NEW_WIRE_API_PAGE}).",
        comment,
    )
    return f'''"""{head}
{intro}
    turnspec conform {mod}.py:{cls}
    pytest test_{mod}.py

{then}
{snippet}"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from {ref.module} import {base}


class {cls}({base}):
{name_note}    name: ClassVar[str] = "{name}"
{api_note}
    # Declare only what the adapter really exposes (adapter contract §3.4).
{off_note}    capabilities: ClassVar[Mapping[str, Any]] = {{
        **{base}.capabilities,
{off}    }}

    # Where to change what: override a method, call super() for what stays the same.
    #   to_wire                  canonical messages + options -> the request body
    #   from_wire_response       a response body -> the canonical assistant message
    #   stream_response          a streamed body -> StreamEvents (then the message)
    #   from_wire_request        a request body -> canonical messages (replay, TC105)
    #   estimate_input_tokens    the input token estimate (TC701)
    # Dropping a block the API cannot carry: self.drop(...) (one WARN line, or
    # CriticalBlockError for a critical block; spec §7.3).
'''


def pytest_source(name: str) -> str:
    cls, mod = class_name(name), module_name(name)
    return f'''"""turnspec's standard conformance tests for the `{name}` adapter.

One test per TC rule; overriding one needs @pytest.mark.xfail(reason=...) saying why.
"""

from __future__ import annotations

from pathlib import Path

from conformance.suite.testing import AdapterConformanceTests

from {mod} import {cls}

HERE = Path(__file__).resolve().parent


class Test{cls}(AdapterConformanceTests):
    @property
    def adapter(self) -> {cls}:
        return {cls}()

    @property
    def cassette_dirs(self) -> list[Path]:
        return [HERE / "cassettes" / "{name}"]
'''


def template_files(template: Template, name: str) -> list[tuple[str, bytes]]:
    """The files of `template` for the adapter `name`: (path relative to the skeleton's
    folder, contents), in path order. A path in two of its parts is a one-line error (each
    file is declared once)."""
    from ...wire import registry  # the wire records load when a skeleton is written

    fills = {
        "{{name}}": name,
        "{{docs}}": DOCS_URL,
        "{{wire_api}}": template.api,
        "{{api_title}}": registry.get(template.api).title,
    }
    found: dict[str, Path] = {}
    for part in template.parts:
        root = TEMPLATES_DIR / template.lang / part
        files = sorted(p for p in root.rglob("*") if p.is_file())
        if not files:
            raise InputError(f"turnspec's {template.lang} skeleton is not installed ({root})")
        for path in files:
            rel = path.relative_to(root).as_posix()
            rel = ".gitignore" if rel == "gitignore" else rel
            if rel in found:
                raise InputError(f"turnspec's {template.lang} skeleton has {rel} twice ({found[rel]}, {path})")
            found[rel] = path
    out: list[tuple[str, bytes]] = []
    for rel, path in sorted(found.items()):
        text = path.read_text(encoding="utf-8")
        for key, value in fills.items():
            text = text.replace(key, value)
        out.append((rel, text.encode("utf-8")))
    return out


def template_for(lang: Lang, api: str) -> Template:
    """The skeleton of `lang` speaking `api` (one line naming the ones there are otherwise)."""
    api_name, _ = reference_for(api)
    template = TEMPLATES.get((lang, api_name))
    if template is None:
        there = ", ".join(SKELETON_APIS[lang])
        raise InputError(
            f"--lang {lang} --api {api_name}: no {lang} skeleton speaks it (there are: {there}); start from one "
            f"and change its wire API (its README says where), or use --lang python for a subclass of "
            f"the {api_name} reference adapter"
        )
    return template


def _template_lines(template: Template, name: str, folder: Path) -> list[str]:
    """What to run next, after a skeleton in another language is written."""
    return [
        f"build and check it from {folder} (conform reads ./cassettes/{name}/ there):",
        *(f"    {c}" for c in template.build),
        f"    turnspec exec smoke {MANIFEST}",
        f"    turnspec conform exec:{MANIFEST}",
        f"the exec protocol it speaks: {EXEC_PROTOCOL_PAGE}",
    ]


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Start a project from a working skeleton.", no_args_is_help=True)
    app.add_typer(group, name="init")

    @group.command("adapter")
    def adapter_cmd(
        name: Annotated[
            str, typer.Argument(help="The adapter's name (lower case, digits, - or _)", show_default=False)
        ],
        api: Annotated[
            str,
            typer.Option(help="The existing wire API it speaks (record name, or its reference adapter's name)"),
        ] = DEFAULT_API,
        lang: Annotated[
            Lang,
            typer.Option(
                help="The skeleton's language: python (a subclass of the API's reference adapter), or "
                "typescript or go (a program speaking the exec protocol; "
                + "; ".join(f"{lg}: {', '.join(apis)}" for lg, apis in SKELETON_APIS.items())
                + ")"
            ),
        ] = Lang.python,
        folder: Annotated[
            Path | None,
            typer.Option(
                "--dir",
                help="Write the skeleton here (default: . for python; ./NAME-adapter, created, for typescript and go)",
                show_default=False,
            ),
        ] = None,
    ) -> None:
        """Write an adapter skeleton that passes `turnspec conform`: a Python module, a cassette and a
        pytest file; or, with --lang typescript|go, a project in that language (sources, a cassette,
        turnspec-exec.toml, README.md).

        Never overwrites: an existing file is a one-line error (exit 2)."""
        # imported when the command runs: the suite is not loaded for other commands
        from ...suite.runner import default_cassette_root

        if not NAME.match(name):
            raise InputError(f"{name!r}: an adapter name is lower-case letters and digits, joined by - or _")
        template = template_for(lang, api) if lang != Lang.python else None
        api_name, ref = reference_for(api)
        if folder is None:
            folder = Path() if template is None else Path(f"{name}-adapter")
            if folder.exists() and not folder.is_dir():
                raise InputError(f"{folder}: exists and is not a directory")
        elif not folder.is_dir():
            raise InputError(f"--dir {folder}: not a directory")
        root = default_cassette_root()
        source = root / ref.adapter / ref.cassette if root is not None else None
        if source is None or not source.is_file():
            raise InputError(f"turnspec's own cassette {ref.adapter}/{ref.cassette} is not installed")
        cassette = (folder / "cassettes" / name / ref.cassette, source.read_bytes())
        mod = module_name(name)
        files: list[tuple[Path, bytes]]
        if template is None:
            files = [
                (folder / f"{mod}.py", adapter_source(name, api_name, ref).encode("utf-8")),
                cassette,
                (folder / f"test_{mod}.py", pytest_source(name).encode("utf-8")),
            ]
        else:
            files = [(folder / rel, body) for rel, body in template_files(template, name)] + [cassette]
        for path, _ in files:  # all refused before any is written
            if path.exists() or path.is_symlink():
                raise InputError(f"{path}: exists; init never overwrites a file")
        for path, body in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            check_output(path, [source])
            write_bytes(path, [body])
        lines = [f"wrote {p}" for p, _ in files]
        if template is not None:
            lines += _template_lines(template, name, folder)
        else:
            lines += [
                f"check it from {folder} (conform reads ./cassettes/{name}/ there):",
                f"    turnspec conform {mod}.py:{class_name(name)}",
                f"    pytest test_{mod}.py",
                "register it in your pyproject.toml:",
                *entry_point(name).splitlines(),
            ]
        sys.stdout.write("".join(escaping.text_line(line) + "\n" for line in lines))
