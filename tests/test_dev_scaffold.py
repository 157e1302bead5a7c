"""`python -m conformance.dev new-rule` and `new-check` (issue 40 item 1): one command writes
every piece a canonical rule or a suite check needs, so that the guard tests (each rule has a
fixture, a CASES row, a fix line, a traceability row, docs; each check a troubleshooting line,
a standard test, README's row, a mutant; the fast path's proofs match its predicates; lint)
pass at once, while the rule's and the check's own tests fail until their logic is written.

The commands run in a scratch copy of the checkout (they edit the tree they live in), and
the tests run there; the refusals run on this checkout and must leave it untouched.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.dev.cli import main

ROOT = Path(__file__).resolve().parent.parent
COPIED = (
    "conformance", "generated", "schemas", "tests", "docs", "cassettes",
    "README.md", "CONTRIBUTING.md", "pyproject.toml", "mkdocs.yml", ".importlinter",
)  # fmt: skip
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
RULE = ["new-rule", "TS122", "--family", "message", "--proof", "local", "--name", "SHOUTED_TEXT",
        "--section", "§4.2", "--summary", "Text block written in capitals only"]  # fmt: skip
WIRE = ["new-wire-api", "acme-chat", "--docs", "https://docs.acme.example/api/chat", "--base-url",
        "https://api.acme.example", "--path", "/v1/chat", "--title", "Acme Chat API"]  # fmt: skip
CHECK = ["new-check", "TC911", "--family", "semantics", "--name", "EFFORT_SENT", "--section", "contract §4.2",
         "--summary", "Reasoning effort reaches the request", "--mutant", "EffortNotSent"]  # fmt: skip
WHERE = ["--base-url", "https://a.example", "--path", "/v1"]
RULE_OWN = "tests/test_rules_canonical.py::test_rule_fires_at_the_defect[TS122]"
HELP_OWN = "tests/test_rule_help.py::test_each_canonical_rule_shows_the_smallest_fragments_around_its_defect[TS122]"
CHECK_OWN = "tests/test_mutants.py::test_mutant_is_killed_by_expected_rule[EffortNotSent]"
WIRE_OWN = "tests/test_wire_acme_chat.py::test_the_request_schema_refuses_a_body_the_docs_refuse"
GUARDS = [
    "tests/test_rules_canonical.py",
    "tests/test_rule_help.py",
    "tests/test_traceability.py",
    "tests/test_docs_site.py::test_readme_check_table_is_the_generated_one",
    "tests/test_docs_site.py::test_readme_table_has_every_check_and_marks_the_advisory_ones",
    "tests/test_docs_site.py::test_reference_pages_have_a_page_for_every_rule_and_check",
    "tests/test_fast_path.py::test_fast_proofs_declared_are_the_predicates_of_the_mirror",
    "tests/test_fast_path.py::test_fast_path_covers_every_registered_rule",
    "tests/test_fast_path.py::test_every_rule_fixture_same",
    "tests/test_conform.py::test_base_class_capabilities_and_tests_come_from_the_catalogue",
    "tests/test_wire_schemas_reference.py",
    "tests/test_wire_access.py",
    "tests/test_wire_records_reference.py",
    "tests/test_thinking_back.py::test_records_declare_what_thinking_goes_back_with_the_doc_sentence",
]


def _env(root: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{root}{os.pathsep}{root / 'generated'}"}


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=root, env=_env(root), capture_output=True, text=True, timeout=600, check=False
    )


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return _run(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *args)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str, str]:
    """A copy of the checkout in which the three commands ran; their outputs."""
    root = tmp_path_factory.mktemp("checkout")
    for name in COPIED:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, root / name, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        else:
            shutil.copy2(src, root / name)
    done = [_run(root, "-m", "conformance.dev", *args) for args in (RULE, CHECK, WIRE)]
    for run in done:
        assert run.returncode == 0 and run.stderr == "", run.stderr
    return root, done[0].stdout, done[1].stdout, done[2].stdout


def _files(out: str) -> list[str]:
    return [line.split()[1] for line in out.splitlines() if line.startswith(("wrote ", "edited "))]


@pytest.mark.slow
def test_the_pieces_pass_the_guards_and_the_stubs_fail_their_own_tests(scratch: tuple[Path, str, str, str]) -> None:
    root, rule_out, check_out, wire_out = scratch
    assert _files(rule_out) == [
        "tests/rules/canonical/TS122.jsonl",
        "conformance/formats/canonical/rules.py",
        "conformance/formats/canonical/invariants.py",
        "conformance/formats/canonical/fast/mirror.py",
        "tests/test_rules_canonical.py",
        "conformance/core/rulefixes.py",
        "docs/traceability.md",
    ]
    assert _files(check_out) == [
        "conformance/suite/rules.py",
        "conformance/suite/checks/semantics.py",
        "conformance/suite/checks/__init__.py",
        "tests/mutants.py",
        "docs/traceability.md",
        "README.md",
    ]
    assert _files(wire_out) == [
        "conformance/wire/acme_chat.py",
        *(f"schemas/wire/acme-chat/{kind}.json" for kind in ("request", "response", "stream-event", "error")),
        "tests/test_wire_acme_chat.py",
        "conformance/wire/registry.py",
        "docs/public-names.md",
        "tests/data/public-names.json",
    ]
    assert all(any(x.startswith("next:  ") for x in out.splitlines()) for out in (rule_out, check_out, wire_out))
    # the public name is pinned and documented (tests/test_public_names.py reads both)
    assert '"acme-chat"' in (root / "tests/data/public-names.json").read_text(encoding="utf-8")
    assert "`acme-chat`" in (root / "docs/public-names.md").read_text(encoding="utf-8")
    guards = _pytest(root, *GUARDS, "--deselect", RULE_OWN, "--deselect", HELP_OWN)
    assert guards.returncode == 0, guards.stdout[-4000:] + guards.stderr[-2000:]
    own = _pytest(root, RULE_OWN, HELP_OWN, CHECK_OWN, WIRE_OWN)
    failed = set(re.findall(r"^FAILED (\S+)", own.stdout, re.M))
    assert failed == {RULE_OWN, HELP_OWN, CHECK_OWN, WIRE_OWN}, own.stdout[-4000:]
    assert "assert ('TS122', 2, '/TODO') in []" in own.stdout  # the rule reports nothing yet
    assert "EffortNotSent survived TC911" in own.stdout  # the check has no case yet
    assert "request.json accepts an empty body" in own.stdout  # the schemas are not written yet
    counts = _run(root, "-m", "conformance.cli.docsgen", "--check", "README.md", "--check-counts")
    assert counts.returncode == 0, counts.stderr
    if RUFF is not None:
        edited = sorted({*_files(rule_out), *_files(check_out), *_files(wire_out)})
        py = [f for f in edited if f.endswith(".py")]
        for args in (["check", *py], ["format", "--check", *py]):
            lint = subprocess.run([RUFF, *args], cwd=root, capture_output=True, text=True, check=False)
            assert lint.returncode == 0, lint.stdout + lint.stderr


@pytest.mark.slow
def test_contributing_lists_the_files_the_commands_write(scratch: tuple[Path, str, str, str]) -> None:
    """CONTRIBUTING's recipes name exactly the files the commands write and edit."""
    _, rule_out, check_out, wire_out = scratch
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for heading, out in (
        ("## Adding a canonical rule", rule_out),
        ("## Adding a conformance check", check_out),
        ("## Adding an adapter", wire_out),
    ):
        section = text[text.index(heading) :]
        section = section[: section.index("\n## ", 1)]
        for path in _files(out):
            generic = path.replace("TS122", "TSnnn").replace("invariants", "<family module>")
            generic = (
                generic.replace("semantics", "<family>").replace("acme_chat", "<api>").replace("acme-chat", "<api>")
            )
            assert f"`{generic}`" in section, (heading, generic)


def _snapshot() -> dict[str, bytes]:
    paths = [p for p in (ROOT / "conformance").rglob("*.py") if "__pycache__" not in p.parts]
    paths += [ROOT / "tests" / "test_rules_canonical.py", ROOT / "tests" / "mutants.py", ROOT / "README.md"]
    paths += [ROOT / "docs" / "traceability.md", *sorted((ROOT / "tests" / "rules" / "canonical").iterdir())]
    paths += [ROOT / "docs" / "public-names.md", ROOT / "tests" / "data" / "public-names.json"]
    paths += sorted((ROOT / "schemas" / "wire").rglob("*.json")) + sorted((ROOT / "tests").glob("test_wire_*.py"))
    return {str(p): p.read_bytes() for p in paths}


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["new-rule", "TS12", "--family", "message", "--proof", "local"], "'TS12' is not a canonical rule id"),
        (["new-rule", "TC122", "--family", "message", "--proof", "local"], "'TC122' is not a canonical rule id"),
        (["new-rule", "TS101", "--family", "message", "--proof", "local"], "TS101 exists already"),
        (["new-rule", "TS122", "--family", "messages", "--proof", "local"], "unknown family 'messages'"),
        (["new-rule", "TS122", "--family", "message", "--proof", "exact"], "proof is one of local, format, decode"),
        (["new-rule", "TS522", "--family", "message", "--proof", "local"], "only TS1xx-TS4xx rules are scaffolded"),
        (["new-rule", "TS122", "--family", "message", "--proof", "local", "--name", "ID_EMAIL"], "defines ID_EMAIL"),
        (["new-rule", "TS122", "--proof", "local"], "the following arguments are required: --family"),
        (["new-check", "TC9111", "--family", "semantics"], "'TC9111' is not a suite check id"),
        (["new-check", "TC101", "--family", "semantics"], "TC101 exists already"),
        (["new-check", "TC911", "--family", "common"], "unknown family 'common'"),
        (["new-check", "TC911", "--family", "semantics", "--slug", "served_model"], "has the slug 'served_model'"),
        (["new-check", "TC911", "--family", "semantics", "--mutant-of", "Nope"], "imports no such adapter class"),
        (["new-kind", "TS122"], "invalid choice: 'new-kind'"),
        (["new-wire-api", "Acme", *WHERE], "'Acme' is not a wire API name"),
        (["new-wire-api", "ollama-chat", *WHERE], "named ollama-chat"),
        (["new-wire-api", "ollama-native", *WHERE], "named ollama-native"),
        (
            ["new-wire-api", "acme-chat", *WHERE],
            "--docs: the documentation",
        ),
        (["new-wire-api", "acme-chat", *WHERE, "--docs", "https://d.example", "--framing", "xml"], "--framing 'xml'"),
    ],
)
def test_refusals_are_one_line_exit_2_and_write_nothing(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _snapshot()
    with pytest.raises(SystemExit) as stopped:
        raise SystemExit(main(args))
    assert stopped.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("python -m conformance.dev: "), err
    assert said in err, err
    assert _snapshot() == before
