"""The Format protocol and the peer-format layering (issue 10, format part).

Every format declares its converters, schema family and migrations; no format imports
another peer format or anything above the formats (engines, API, CLI); function-level
imports say why; one ULID source (`conformance.core.ids`) and one conversion kit.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conformance.convert import converters
from conformance.core import convertkit
from conformance.formats import all_formats
from conformance.migrations import PER_FORMAT, default_registry

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "conformance"
PEERS = ("gpt2099", "chibi", "geppetto", "sqlite")
# the layers above the formats: engines, wire records, adapters, suite, API, CLI
ABOVE = ("convert", "migrations", "wire", "adapters", "suite", "api", "cli", "commands", "cassettes", "bench")
MINE = [PKG / "formats" / n for n in ("gpt2099", "chibi", "geppetto")]


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(absolute module, line, at function level) for every import in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    package = parts if path.name == "__init__.py" else parts[:-1]
    top = {id(n) for n in tree.body} | {id(n) for s in tree.body if isinstance(s, ast.If) for n in s.body}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            mod = ".".join([*base, node.module] if node.module else base)
            names = [mod] + [f"{mod}.{a.name}" for a in node.names]
            for n in names:
                out.append((n, node.lineno, id(node) not in top))
        elif isinstance(node, ast.Import):
            for a in node.names:
                out.append((a.name, node.lineno, id(node) not in top))
    return out


def _files(dirs: list[Path]) -> list[Path]:
    return [p for d in dirs for p in sorted(d.rglob("*.py"))]


@pytest.mark.parametrize("path", _files(MINE), ids=lambda p: str(p.relative_to(PKG)))
def test_a_format_imports_no_peer_and_nothing_above(path: Path) -> None:
    own = path.relative_to(PKG / "formats").parts[0]
    bad = []
    for mod, line, _ in _imports(path):
        parts = mod.split(".")
        if parts[0] != "conformance" or len(parts) < 2:
            continue
        if parts[1] in ABOVE or (parts[1] == "formats" and len(parts) > 2 and parts[2] in PEERS and parts[2] != own):
            bad.append(f"{path.name}:{line} imports {mod}")
    assert bad == []


@pytest.mark.parametrize(
    "path",
    [*_files(MINE), PKG / "formats" / "__init__.py", PKG / "formats" / "base.py", PKG / "core" / "convertkit.py"],
)
def test_function_level_imports_state_their_reason(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    silent = [f"{path.name}:{line}" for mod, line, nested in _imports(path) if nested and "#" not in lines[line - 1]]
    assert sorted(set(silent)) == []


def test_formats_package_does_not_import_the_migration_engine() -> None:
    for path in (PKG / "formats" / "__init__.py", PKG / "formats" / "base.py"):
        assert not [m for m, _, _ in _imports(path) if m.startswith("conformance.migrations")]


def test_every_format_declares_the_protocol() -> None:
    table = converters()
    for f in all_formats():
        assert isinstance(f.name, str) and len(f.rules) > 0
        assert isinstance(dict(f.converters), dict)
        for (a, b), fn in f.converters.items():
            assert f.name in (a, b) and table[(a, b)] is fn
        if f.schema_family is not None:
            assert (ROOT / "schemas" / f.schema_family).is_dir(), f.name
        assert f.migrations == (f.name in PER_FORMAT), f.name
    # every migration registers under a format's name
    names = {f.name for f in all_formats()}
    assert set(default_registry().formats()) <= names and set(PER_FORMAT) <= names


def test_one_ulid_source() -> None:
    """No module of the formats or the synthetic generator mints ULIDs itself."""
    minting = ("ULID()", "ULID.from_int", "ULID.from_bytes", "uuid4(", "os.urandom", "time.time")
    for path in [*_files(MINE), PKG / "benchmarks" / "synthetic.py"]:
        text = path.read_text(encoding="utf-8")
        assert [m for m in minting if m in text] == [], path


def test_id_mint_is_monotonic_and_deterministic() -> None:
    a, b = convertkit.IdMint("x"), convertkit.IdMint("x")
    first = [a.ulid(1000, i) for i in range(50)] + [a.ulid(5, "older")]
    assert first == [b.ulid(1000, i) for i in range(50)] + [b.ulid(5, "older")]
    assert first == sorted(first) and len(set(first)) == len(first)
    assert convertkit.ulid_millis(first[0]) == 1000
    assert a.keep(first[0]) is None  # not after the last one
    later = convertkit.IdMint("x").ulid(9_999_999, "later")
    assert a.keep(later) == later


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        ("2026-02-28T23:59:59.999999Z", True),
        ("2024-02-29T00:00:00.000000Z", True),
        ("2026-02-30T00:00:00.000000Z", False),
        ("2026-13-01T00:00:00.000000Z", False),
        ("2026-01-01T24:00:00.000000Z", False),
        ("2026-01-01T00:00:60.000000Z", False),
        ("2026-01-01T00:00:00.0000000Z", False),
        ("2026-01-01T00:00:00.000000+01:00", False),
        ("2026-01-01 00:00:00.000000Z", False),
        ("2026-01-01T00:00:00.000000z", False),
        # what the schema accepts (`Z` or `+00:00`, 0 to 6 fraction digits, TS117 warns) every converter reads
        ("2026-01-01T00:00:00Z", True),
        ("2026-01-01T00:00:00.000000+00:00", True),
        ("2026-01-01T00:00:00.5+00:00", True),
    ],
)
def test_one_date_check(value: str, ok: bool) -> None:
    if ok:
        canonical = value.replace("+00:00", "Z")
        if "." not in canonical:
            canonical = canonical.replace("Z", ".Z")
        whole, fraction = canonical[:-1].split(".")
        canonical = f"{whole}.{fraction.ljust(6, '0')}Z"
        assert convertkit.rfc3339(convertkit.created_at_micros(value)) == canonical
    else:
        with pytest.raises(ValueError):
            convertkit.created_at_micros(value)


def test_tool_definition_predicate() -> None:
    assert convertkit.is_tool_definition({"name": "t", "input_schema": {}})
    assert not convertkit.is_tool_definition({"role": "user", "input_schema": {}})
    assert not convertkit.is_tool_definition([])


# -- same input, same output (issue 9) --------------------------------------------------

FIX = ROOT / "tests"


def _tree(path: Path) -> dict[str, bytes]:
    if path.is_file():
        return {"": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _canonical_session(tmp: Path) -> Path:
    import orjson  # test data only

    from conformance.benchmarks.synthetic import messages

    msgs = list(messages(40, seed=5))
    session = [m for m in msgs if m["session_id"] == msgs[0]["session_id"]]
    src = tmp / "session.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
    return src


@pytest.mark.parametrize(
    ("src_fmt", "dst_fmt", "source", "suffix"),
    [
        ("chibi", "canonical", FIX / "chibi" / "fixtures" / "default", ".jsonl"),
        ("chibi", "canonical", FIX / "chibi" / "fixtures" / "legacy09", ".jsonl"),
        ("geppetto", "canonical", FIX / "geppetto" / "fixtures" / "GE202_store.yaml", ".jsonl"),
        ("canonical", "chibi", None, ""),
        ("canonical", "gpt2099", None, ".jsonl"),
        ("canonical", "geppetto", None, ".yaml"),
    ],
)
def test_conversion_is_deterministic(
    src_fmt: str, dst_fmt: str, source: Path | None, suffix: str, tmp_path: Path
) -> None:
    from conformance.convert import convert

    src = source if source is not None else _canonical_session(tmp_path)
    outs = []
    for n in (1, 2):
        dst = tmp_path / f"out{n}{suffix}"
        findings = convert(src_fmt, dst_fmt, src, dst)
        outs.append((_tree(dst), [(f.path, f.line, f.pointer, f.message) for f in findings]))
    assert outs[0] == outs[1]


def test_a_run_loads_the_checker_and_converters_only_of_the_formats_it_meets(tmp_path: Path) -> None:
    """`base.PeerFormat`: a peer's `checker` and `convert` modules load when a file of it is
    validated or converted, never because detection asked it. Failed before for gpt2099,
    whose package imported its checker (through `loading`) on every run."""
    import subprocess
    import sys

    from conformance.formats.base import PeerFormat

    peers = sorted(type(f).__module__ for f in all_formats() if isinstance(f, PeerFormat))
    assert len(peers) >= 7  # ai-sdk, langchain, openai-messages, otel-genai, pydantic-ai, gpt2099, geppetto
    chat = tmp_path / "chat.json"
    chat.write_text('[{"role": "user", "content": "hi"}]\n', encoding="utf-8")
    code = (
        "import sys; from conformance import validate; validate([sys.argv[1], sys.argv[2]]); "
        "print(' '.join(sorted(m for m in sys.modules if m.rsplit('.', 1)[-1] in ('checker', 'convert'))))"
    )
    canonical = ROOT / "tests" / "rules" / "canonical" / "valid.jsonl"
    out = subprocess.run(
        [sys.executable, "-c", code, str(canonical), str(chat)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    loaded = set(out.stdout.split())
    assert {f"{p}.checker" for p in peers} & loaded == {"conformance.formats.openai_messages.checker"}
    assert not {f"{p}.convert" for p in peers} & loaded


@pytest.mark.parametrize(
    ("fmt", "source"),
    [
        ("langchain", "langchain_format/fixtures/valid_conversation.json"),
        ("langchain", "langchain_format/fixtures/valid_dumpd.jsonl"),
        ("openai-messages", "openai_messages/fixtures/valid_tools.json"),
        ("openai-messages", "openai_messages/fixtures/valid_conversations.jsonl"),
        ("otel-genai", "otel_genai_format/fixtures/valid_span.json"),
        ("otel-genai", "otel_genai_format/fixtures/valid_records.jsonl"),
        ("pydantic-ai", "pydantic_ai_format/fixtures/valid_history.json"),
        ("pydantic-ai", "pydantic_ai_format/fixtures/valid_retry.jsonl"),
        ("ai-sdk", "ai_sdk_format/fixtures/valid_chat.json"),
        ("ai-sdk", "ai_sdk_format/fixtures/valid_chats.jsonl"),
    ],
)
def test_a_peer_conversion_reads_and_parses_its_input_once(
    fmt: str, source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`convertkit.convert_units`, the one driver of the peers read as units: the input is
    opened once and each of its documents parsed once, by the validation whose units the
    mapping then reads. Failed before: each converter validated the file (a read and a
    parse), read it again for the ids' digest, then read and parsed it a third time."""
    import os

    from conformance.core import jsonio
    from conformance.formats import get_format
    from conformance.formats.base import FileStats, Options

    src = FIX / source
    text = src.read_bytes()
    opened: list[str] = []
    parsed = [0]
    real_open, real_parse = os.open, jsonio.parse

    def counting_open(path: object, *args: object, **kw: object) -> int:
        opened.append(str(path))
        return real_open(path, *args, **kw)  # type: ignore[arg-type]

    def counting_parse(data: bytes) -> object:
        parsed[0] += data in text  # a document of the file (a JSON text inside a string is escaped there)
        return real_parse(data)

    monkeypatch.setattr(jsonio, "parse", counting_parse)
    list(get_format(fmt).start(Options()).validate(src, FileStats(str(src), fmt)))
    once, parsed[0] = parsed[0], 0
    assert once > 0
    monkeypatch.setattr(os, "open", counting_open)
    converters()[(fmt, "canonical")](src, tmp_path / "out.jsonl", convertkit.ConvertContext())
    monkeypatch.undo()
    assert opened.count(str(src)) == 1
    assert parsed[0] == once
    assert (tmp_path / "out.jsonl").read_bytes()


@pytest.mark.parametrize("fmt", ["ai-sdk", "langchain", "openai-messages", "otel-genai", "pydantic-ai"])
def test_a_json_peer_file_of_several_sessions_is_refused_and_nothing_written(fmt: str, tmp_path: Path) -> None:
    """`convertkit.write_sessions`: a `.json` file of these peers holds one conversation, so
    a canonical file of several sessions is refused naming how many and the `.jsonl` way
    out, and nothing is written; the same input to `.jsonl` is one line per session."""
    import orjson  # test data only

    from conformance.benchmarks.synthetic import messages
    from conformance.convert import convert
    from conformance.core.errors import InputError

    msgs = list(messages(30, seed=5, session_len=10))
    sessions = {m["session_id"] for m in msgs}
    assert len(sessions) > 1
    src = tmp_path / "sessions.jsonl"
    src.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in msgs))
    with pytest.raises(InputError, match=rf"holds {len(sessions)} sessions; a \.json .* write \.jsonl"):
        convert("canonical", fmt, src, tmp_path / "out.json")
    assert not (tmp_path / "out.json").exists()
    convert("canonical", fmt, src, tmp_path / "out.jsonl")
    assert len((tmp_path / "out.jsonl").read_bytes().splitlines()) == len(sessions)
