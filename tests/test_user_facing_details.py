"""What a new user meets first and tripped on (issue 39 item 10), one test each: the extra a
model target names, findings a lone context file does not owe, what conform prints with
`-o html` and a JUnit report file, the init skeleton, the pre-commit hook's file pattern, an
empty input, a TC606 reason."""

from __future__ import annotations

import json
import re
import shutil
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from conformance.cli import main
from conformance.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
CHIBI = ROOT / "tests" / "chibi" / "fixtures" / "default"


# -- models --target pydantic asks for a runtime extra ---------------------------------------


def test_models_pydantic_names_a_runtime_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.schema import models

    monkeypatch.setattr(models.shutil, "which", lambda *_a, **_k: None)
    with pytest.raises(InputError) as err:
        models._pydantic("canonical", "v1")
    assert "pip install 'turnspec[models]'" in str(err.value) and "[test]" not in str(err.value)
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pin = next(d for d in extras["test"] if d.startswith("datamodel-code-generator"))
    assert extras["models"] == [pin]  # the version generated/ is written with


# -- the same chibi bytes, the same findings; CB212 only with a transcript ---------------------


def _chibi(tmp_path: Path, broken: bool) -> Path:
    ctx = tmp_path / "ctx"
    shutil.copytree(CHIBI, ctx)
    if broken:  # context.jsonl one entry short of its derivation: CB212
        lines = (ctx / "context.jsonl").read_text().splitlines(keepends=True)
        (ctx / "context.jsonl").write_text("".join(lines[:-1]))
    return ctx


def _findings(capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, object]]:
    main(["validate", "-o", "json", *args])
    return json.loads(capsys.readouterr().out)["violations"]  # type: ignore[no-any-return]


def test_a_context_file_without_its_transcript_has_no_derivation_finding(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(CHIBI / "context.jsonl", alone / "context.jsonl")
    assert _findings(capsys, str(alone)) == []  # the folder: was CB212 "the transcript has no anchor"
    assert _findings(capsys, str(alone / "context.jsonl")) == []  # the file: as before


def test_cb212_still_fires_where_a_transcript_is_there_to_compare(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _chibi(tmp_path, broken=True)
    monkeypatch.chdir(tmp_path)
    spelled = ["ctx", "ctx/", "./ctx", str(ctx)]
    found = [_findings(capsys, p) for p in spelled]
    rules = [[(f["rule"], f["line"], Path(str(f["path"])).resolve()) for f in fs] for fs in found]
    assert rules[0] == [("CB212", 3, (ctx / "context.jsonl").resolve())]
    assert all(r == rules[0] for r in rules), rules  # whatever spelling of the path


# -- conform: the HTML report's verdict first; --report writes the file, the terminal the text --


def test_conform_html_opens_with_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conform", "openai-chat", "--no-samples", "--select", "TC10", "-o", "html"]) == 0
    page = capsys.readouterr().out
    body = page.split("<body>", 1)[1]
    first = re.search(r"<p [^>]*>([^<]*)</p>", body)
    assert first is not None and body.index(first.group(0)) < body.index("<table")
    assert re.match(r"OK: \d+ checks: \d+ passed, 0 failed", first.group(1)), first.group(1)


def test_conform_junit_report_file_is_not_printed_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "conform.xml"
    args = ["conform", "openai-chat", "--no-samples", "--select", "TC10", "-o", "junit", "--report", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert out.read_text().startswith("<?xml")
    assert "<?xml" not in printed and printed.splitlines()[-1].startswith("OK: ")


# -- init: the skeleton points to the docs site, not to this repository's files -----------------


def test_init_skeleton_does_not_point_to_this_projects_contributing(tmp_path: Path) -> None:
    assert main(["init", "adapter", "acme", "--dir", str(tmp_path)]) == 0
    text = "".join(p.read_text() for p in tmp_path.rglob("*.py"))
    assert "CONTRIBUTING" not in text
    assert "https://turnspec.dev/docs/new-wire-api/" in text
    assert (ROOT / "docs" / "new-wire-api.md").is_file()  # the page it names is on the site


def test_init_skeleton_names_no_folder_of_this_checkout(tmp_path: Path) -> None:
    """The skeleton is read in another repository, beside an installed turnspec: it points at
    commands (`turnspec wire show API`), never at cassettes/openai-chat/ or conformance/wire/,
    which only a checkout of turnspec has (the wheel keeps them elsewhere)."""
    assert main(["init", "adapter", "acme", "--dir", str(tmp_path)]) == 0
    text = " ".join((tmp_path / "acme_adapter.py").read_text().replace("#", " ").split())
    assert "cassettes/openai-chat/" not in text and "conformance/wire/" not in text
    assert "`turnspec wire show openai-chat-completions` names turnspec's cassettes of this API" in text


# -- the pre-commit hook takes the peer formats' files, and passes over the others -----------------


def test_validate_hook_matches_every_format_and_passes_over_unrelated_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (hook,) = [
        h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text()) if h["id"] == "turnspec-validate"
    ]
    pattern = re.compile(hook["files"])
    samples = {
        "canonical": "tests/rules/canonical/valid.jsonl",
        "gpt2099 nuon": "tests/gpt2099/fixtures/thread-valid.nuon",
        "gpt2099 json": "tests/gpt2099/fixtures/window-valid.json",
        "geppetto": "tests/geppetto/fixtures/GE001_good.yaml",
        "chibi": "tests/chibi/fixtures/default/transcript/manifest.json",
        "sqlite": "store.db",
    }
    for kind, name in samples.items():
        assert pattern.search(name), kind
    unrelated = tmp_path / ".pre-commit-config.yaml"
    unrelated.write_text("repos: []\n")
    config = tmp_path / "package.json"
    config.write_text('{"name": "x"}\n')
    entry = hook["entry"].split()[1:]  # after `turnspec`
    assert entry == ["validate", "--skip-unknown"]
    assert main([*entry, str(unrelated), str(config)]) == 0  # nothing to validate: not a failure
    assert capsys.readouterr().out == "OK: no file in a known format (2 skipped)\n"
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x",\n')
    assert main([*entry, str(unrelated), str(broken), str(ROOT / samples["geppetto"])]) == 1
    out = capsys.readouterr().out
    assert "TS001" in out and "skipped 1 file(s)" in out
    lacking = tmp_path / "lacking.jsonl"  # valid JSON no format claims: a .jsonl is still a transcript
    lacking.write_text('{"role": "user"}\n')
    assert main([*entry, str(lacking)]) == 1
    assert "TS020" in capsys.readouterr().out


# -- an empty .jsonl passes with a note ------------------------------------------------------------


def test_an_empty_jsonl_passes_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert main(["validate", str(empty)]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"turnspec: note: {empty}: holds no record; nothing in it was validated\n"
    assert main(["validate", str(ROOT / "tests/rules/canonical/valid.jsonl")]) == 0
    assert capsys.readouterr().err == ""  # a file with records: no note


# -- TC606: the differing part, whole JSON, and a short reason -------------------------------------


def test_tc606_reason_shows_the_difference_in_whole_json() -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from mutants import GeminiPartsJoinedWithNewline

    from conformance.core.findings import Selection
    from conformance.suite.runner import SuiteConfig, run

    report = run(
        SuiteConfig.for_adapter(
            GeminiPartsJoinedWithNewline(),
            cassette_dirs=[ROOT / "cassettes" / "gemini"],
            samples=None,
            selection=Selection(select=("TC606",)),
        )
    )
    reasons = sorted({o.message for o in report.outcomes if o.rule == "TC606" and o.status == "fail"})
    assert reasons and all(len(r) < 400 and "object members in any order" not in r for r in reasons), reasons
    reason = next(r for r in reasons if "/0/text" in r)
    m = re.match(
        r"stream content differs from the parse at (/\S*): stream (.+), parse (.+) \((?:compared|none of)", reason
    )
    assert m is not None, reason
    assert m.group(1) == "/0/text"
    stream, parse = json.loads(m.group(2)), json.loads(m.group(3))  # whole JSON strings, never cut open
    assert "\n" in stream and "\n" not in parse  # the difference itself is shown
    assert len(reason) < 400 and "object members in any order" not in reason  # no list of equivalences
