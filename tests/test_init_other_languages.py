"""`turnspec init adapter NAME --lang typescript|go --api API` (issue 42 item 4): a skeleton in
another language, an adapter of its own of one wire API (each pair of `TEMPLATES`) speaking
the exec protocol, that passes `turnspec conform exec:turnspec-exec.toml` on its first run
once built.

The build tests need the toolchains and skip with the reason when one is missing: `tsc`
(TURNSPEC_TSC, which .ci/run installs under .ci/node with @types/node) and `node` for
TypeScript, `go` for Go (.ci/run installs it from the machine's package manager)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.cli.commands.init import EXEC_PROTOCOL_PAGE, REFERENCES, TEMPLATES, TEMPLATES_DIR
from tests.test_docs_commands import _blocks, _commands, _option_problems, _tokens

ROOT = Path(__file__).resolve().parents[1]
REFUSAL = ROOT / "cassettes" / "openai-chat" / "refusal.yaml"
NAME = "acme-chat"
BUILD_TIMEOUT_S = 600  # a cold Go build cache compiles the standard library first

GO = shutil.which("go")
NODE = shutil.which("node")
TSC = os.environ.get("TURNSPEC_TSC") or shutil.which("tsc")


def _node_modules() -> Path | None:
    """A node_modules holding @types/node beside the tsc used (.ci/run's .ci/node), which
    the skeleton's `npm install` would give it."""
    candidates = [ROOT / ".ci" / "node" / "node_modules"]
    if TSC is not None:
        candidates.insert(0, Path(TSC).parent.parent)  # node_modules/.bin/tsc
    return next((c for c in candidates if (c / "@types" / "node" / "package.json").is_file()), None)


NODE_MODULES = _node_modules()
needs_tsc = pytest.mark.skipif(
    TSC is None or NODE is None or NODE_MODULES is None,
    reason="the TypeScript skeleton is built with tsc against @types/node and run with node "
    "(.ci/run installs typescript@5 and @types/node@20 under .ci/node and sets TURNSPEC_TSC)",
)
needs_go = pytest.mark.skipif(GO is None, reason="the Go skeleton is built with go (.ci/run installs golang-go)")
NEEDS = {"typescript": needs_tsc, "go": needs_go}
# every (language, wire API) pair with a skeleton, built with its language's toolchain
PAIRS = [pytest.param(lang, api, marks=NEEDS[lang], id=f"{lang}-{api}") for lang, api in TEMPLATES]
CHAT_LANGS = [pytest.param(lang, marks=NEEDS[lang]) for lang, api in TEMPLATES if api == "openai-chat-completions"]
PAIRS_UNBUILT = [pytest.param(lang, api, id=f"{lang}-{api}") for lang, api in TEMPLATES]


def _cassette(api: str) -> Path:
    """turnspec's own cassette the skeleton of `api` starts with."""
    ref = REFERENCES[api]
    return ROOT / "cassettes" / ref.adapter / ref.cassette


# checks whose cases drive every operation of the protocol: each must run cases and pass
EXERCISED = (
    "TC101",  # parse
    "TC104",  # render
    "TC201",  # §7.3 drop records, replayed as log records
    "TC203",  # critical blocks, a typed error
    "TC301",  # tool ids: parse through the child's map
    "TC303",  # tool_id_map pairs
    "TC401",  # cross-provider replay
    "TC601",  # streams: stream_open, stream_feed, stream_close
    "TC607",  # a chunk ends anywhere (inside an event, inside UTF-8)
    "TC611",  # cancel with delivered
    "TC801",  # typed adapter errors
    "TC802",  # read_request
)
# the checks above whose cases come from the copied cassette's exchanges, where it holds none
# of them (REFERENCES: Gemini's skeleton starts with cached.yaml, which exercises prompt caching)
UNEXERCISED = {
    "gemini-generate-content": {"TC301": "cached.yaml holds no tool call", "TC801": "cached.yaml holds no error"},
}


def _init(lang: str, api: str, folder: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    folder.mkdir()
    assert main(["init", "adapter", NAME, "--lang", lang, "--api", api, "--dir", str(folder)]) == 0
    capsys.readouterr()
    return folder


def _run(cmd: list[str], cwd: Path) -> None:
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False)
    assert done.returncode == 0, f"{' '.join(cmd)}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"


def _build(lang: str, folder: Path) -> None:
    """The build the skeleton's README gives (`npm install` being the node_modules CI has)."""
    if lang == "typescript":
        assert TSC is not None and NODE_MODULES is not None
        (folder / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
        _run([TSC, "-p", "."], folder)
        assert (folder / "dist" / "main.js").is_file()
    else:
        assert GO is not None
        _run([GO, "vet", "./..."], folder)
        _run([GO, "build", "-o", "bin/", "."], folder)
        assert (folder / "bin" / f"{NAME}-adapter").is_file()


def _conform(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict]:
    rc = main(["conform", "exec:turnspec-exec.toml", "--no-samples", "--validate-protocol", "-o", "json", *extra])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "api"), PAIRS)
def test_the_skeleton_builds_and_passes_conform_through_the_exec_protocol(lang, api, tmp_path, monkeypatch, capsys):
    folder = _init(lang, api, tmp_path / "skeleton", capsys)
    _build(lang, folder)
    monkeypatch.chdir(folder)  # conform reads ./cassettes/acme-chat/ there
    assert main(["exec", "smoke", "turnspec-exec.toml"]) == 0, capsys.readouterr()
    smoke = capsys.readouterr().out
    assert "FAIL" not in smoke and "skip" not in smoke, smoke  # every operation is offered and answers
    rc, report = _conform(capsys)
    failed = [r for r in report["results"] if r["status"] == "fail"]
    assert rc == 0 and report["summary"]["failed"] == 0, failed
    assert report["adapters"] == [NAME] and report["summary"]["cassettes"] == 1
    results = {r["rule"]: r for r in report["results"]}
    for rule in EXERCISED:
        if rule in UNEXERCISED.get(api, {}):
            assert results[rule]["status"] in ("pass", "skip"), (rule, results[rule])
            continue
        assert results[rule]["status"] == "pass" and results[rule]["cases_run"] > 0, (rule, results[rule])
    # every capability declared true was exercised (TC002), all 13 fields of canonical §7.2 declared
    assert report["summary"]["unexercised_capabilities"] == []
    assert report["capability_declaration"] == {NAME: "canonical §7.2 (13 fields)"}
    assert set(report["capabilities"][NAME]) >= {"supports_tools", "supports_streaming", "supports_images"}
    # a finding of no recording is placed at the adapter's manifest, never inside turnspec's host
    assert main(["conform", "exec:turnspec-exec.toml", "--no-samples", "--select", "TC201", "-o", "sarif"]) == 0
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in json.loads(capsys.readouterr().out)["runs"][0]["results"]
        for loc in result.get("locations", [])
        if "physicalLocation" in loc
    }
    assert uris == {"turnspec-exec.toml"}, uris


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "api"), PAIRS)
def test_the_built_skeleton_passes_every_cassette_turnspec_has_of_its_api(lang, api, tmp_path, monkeypatch, capsys):
    """Not only the one cassette it starts with: every exchange of turnspec's own folder for
    the API (errors, stop reasons, thinking, images, the other stream framing...) replays
    through the skeleton with no check failing."""
    folder = _init(lang, api, tmp_path / "skeleton", capsys)
    source = _cassette(api).parent
    for cassette in sorted(source.glob("*.yaml")):
        shutil.copyfile(cassette, folder / "cassettes" / NAME / cassette.name)
    _build(lang, folder)
    monkeypatch.chdir(folder)
    rc, report = _conform(capsys)
    failed = [(r["rule"], r["reasons"][:3]) for r in report["results"] if r["status"] == "fail"]
    assert rc == 0 and failed == [], failed
    assert report["summary"]["cassettes"] == len(list(source.glob("*.yaml"))) > 1


def _plant(path: Path, anchor: str, old: str, new: str) -> None:
    """`old` replaced by `new` at its first place after `anchor` in `path`."""
    text = path.read_text()
    at = text.index(anchor)
    cut = text.index(old, at)
    path.write_text(text[:cut] + new + text[cut + len(old) :])


@pytest.mark.slow
@pytest.mark.parametrize(("lang", "api"), PAIRS)
def test_a_defect_planted_in_the_built_skeleton_fails_its_check(lang, api, tmp_path, monkeypatch, capsys):
    """The exec run judges the skeleton's own answers: a §7.3 drop record whose message id
    is not the dropped block's message fails TC201 (canonical §7.3 lists the five fields)."""
    folder = _init(lang, api, tmp_path / "skeleton", capsys)
    if lang == "typescript":
        _build(lang, folder)  # planted in the built JavaScript: no second compile
        _plant(folder / "dist" / "wire.js", 'event: "block_dropped"', "message_id: m.id,", 'message_id: "",')
    else:
        _plant(folder / "wire.go", '"event": "block_dropped"', '"message_id": m.ID,', '"message_id": "",')
        _build(lang, folder)
    monkeypatch.chdir(folder)
    rc, report = _conform(capsys, "--select", "TC201")
    results = {r["rule"]: r for r in report["results"]}
    assert rc == 1 and results["TC201"]["status"] == "fail", results["TC201"]
    assert any("lacks message_id" in m for m in results["TC201"]["reasons"]), results["TC201"]["reasons"]


@pytest.mark.slow
@pytest.mark.parametrize("lang", CHAT_LANGS)
def test_the_built_skeleton_reads_a_refusal_as_the_reply_and_sends_it_back_in_its_field(
    lang, tmp_path, monkeypatch, capsys
):
    """turnspec's Chat Completions refusal (cassettes/openai-chat/refusal.yaml: `message.refusal`
    with `content` null, the streamed `delta.refusal` pieces, then the refused turn sent back):
    the skeleton's reply is the refusal's text, streamed and not (TC903, TC606), and reading the
    next turn back sends the refusal in the assistant message's `refusal` field (TC802)."""
    folder = _init(lang, "openai-chat-completions", tmp_path / "skeleton", capsys)
    _build(lang, folder)
    mine = tmp_path / "refusals" / NAME
    mine.mkdir(parents=True)
    shutil.copy(REFUSAL, mine / "refusal.yaml")
    monkeypatch.chdir(folder)
    rc, report = _conform(capsys, "--cassettes", str(mine), "--select", "TC606,TC802,TC903")
    results = {r["rule"]: r for r in report["results"]}
    assert rc == 0 and {r: results[r]["status"] for r in results} == dict.fromkeys(results, "pass"), results
    ran = {(r["rule"], c["subject"].rsplit("/", 1)[-1]): c["status"] for r in report["results"] for c in r["cases"]}
    for case in [
        ("TC903", "refusal.yaml#0 (refusal)"),
        ("TC903", "refusal.yaml#1 (refusal)"),
        ("TC606", "refusal.yaml#1"),
        ("TC802", "refusal.yaml#2"),
    ]:
        assert ran.get(case) == "pass", (case, ran)


@pytest.mark.parametrize(("lang", "api"), PAIRS_UNBUILT)
def test_init_writes_the_project_its_readme_and_manifest(lang, api, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "adapter", NAME, "--lang", lang, "--api", api]) == 0
    out = capsys.readouterr().out
    folder = tmp_path / f"{NAME}-adapter"  # a project of its own, by default
    written = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    # the files every API shares, and the API's own: none of them in both
    common, own = (
        [
            ".gitignore" if p.name == "gitignore" else p.relative_to(root).as_posix()
            for p in root.rglob("*")
            if p.is_file()
        ]
        for root in (TEMPLATES_DIR / lang / "common", TEMPLATES_DIR / lang / api)
    )
    assert common and own and not set(common) & set(own)
    cassette = _cassette(api)
    assert written == sorted([*common, *own, f"cassettes/{NAME}/{cassette.name}"])
    assert all(f"wrote {NAME}-adapter/{w}" in out for w in written)
    assert (folder / "cassettes" / NAME / cassette.name).read_bytes() == cassette.read_bytes()
    for path in folder.rglob("*"):
        if path.is_file():
            assert "{{" not in path.read_text(), path  # every placeholder filled in
    readme = (folder / "README.md").read_text()
    assert f"--lang {lang} --api {api}`" in readme and f"(`{api}`)" in readme  # the API it speaks
    assert EXEC_PROTOCOL_PAGE in readme and "turnspec conform exec:turnspec-exec.toml" in readme
    assert "CONTRIBUTING" not in readme  # this project's contributor guide is not the author's
    manifest = tomllib.loads((folder / "turnspec-exec.toml").read_text())
    want = ["node", "dist/main.js"] if lang == "typescript" else [f"bin/{NAME}-adapter"]
    assert manifest["command"] == want and manifest["cwd"] == "."
    name_line = '"name": "acme-chat-adapter"' if lang == "typescript" else "module acme-chat-adapter"
    assert name_line in (folder / ("package.json" if lang == "typescript" else "go.mod")).read_text()
    if lang == "typescript":  # typescript is pinned, never a range
        dev = json.loads((folder / "package.json").read_text())["devDependencies"]
        assert dev["typescript"][0].isdigit() and dev["@types/node"][0].isdigit()
    assert "turnspec conform exec:turnspec-exec.toml" in out and EXEC_PROTOCOL_PAGE in out


def test_init_in_another_language_never_overwrites(tmp_path, capsys):
    (tmp_path / "README.md").write_text("# mine\n")
    assert main(["init", "adapter", "mine", "--lang", "go", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "README.md: exists" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md"]  # nothing else written
    assert (tmp_path / "README.md").read_text() == "# mine\n"
    assert main(["init", "adapter", "mine", "--lang", "rust", "--dir", str(tmp_path)]) == 2
    # the reference adapter's name of the API it speaks is the same API
    assert main(["init", "adapter", "mine", "--lang", "go", "--api", "openai-chat", "--dir", str(tmp_path / "x")]) == 2
    assert "not a directory" in capsys.readouterr().err
    (tmp_path / "taken").write_text("")
    assert main(["init", "adapter", "taken", "--lang", "go", "--dir", str(tmp_path / "taken")]) == 2


@pytest.mark.parametrize(("lang", "api"), PAIRS_UNBUILT)
def test_the_commands_the_readme_shows_are_turnspec_s(lang, api, tmp_path, capsys):
    """The author's README cannot drift from the CLI: every `turnspec` command it shows
    names a real sub-command and only options that command has (as the docs are tested)."""
    readme = _init(lang, api, tmp_path / "skeleton", capsys) / "README.md"
    shown = [args for block in _blocks(readme) for program, args in _commands(block) if program == "turnspec"]
    assert len(shown) >= 2, shown  # build and check: smoke, conform
    inline = re.findall(r"`turnspec ([^`]+)`", readme.read_text())  # in its prose: rule, wire, cassettes...
    assert len(inline) >= 5, inline
    shown += inline
    problems = [p for args in shown for p in _option_problems(_tokens(args))]
    assert problems == [], problems


@pytest.mark.parametrize("lang", ["typescript", "go"])
def test_an_api_without_a_skeleton_in_the_language_is_one_line_naming_those_there_are(lang, tmp_path, capsys):
    there = [api for lg, api in TEMPLATES if lg == lang]
    assert "openai-chat-completions" in there and "anthropic-messages" in there
    for api in ("ollama", "bedrock-converse"):  # by the reference adapter's name, or the record's
        assert main(["init", "adapter", "mine", "--lang", lang, "--api", api, "--dir", str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"no {lang} skeleton speaks it" in err, err
        assert f"(there are: {', '.join(there)})" in err, err
        assert "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # nothing written
    # an API turnspec has no reference for at all is refused first, naming the ones it has
    assert main(["init", "adapter", "mine", "--lang", lang, "--api", "nope", "--dir", str(tmp_path)]) == 2
    assert "no reference adapter for it" in capsys.readouterr().err


def test_a_file_in_both_parts_of_a_skeleton_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    """Each file of a skeleton is declared once: in the files every API shares or in the API's."""
    from conformance.cli.commands import init

    for part in ("common", "openai-chat-completions"):
        (tmp_path / "templates" / "go" / part).mkdir(parents=True)
        (tmp_path / "templates" / "go" / part / "README.md").write_text(f"# {part}\n")
    monkeypatch.setattr(init, "TEMPLATES_DIR", tmp_path / "templates")
    out = tmp_path / "out"
    out.mkdir()
    assert main(["init", "adapter", "mine", "--lang", "go", "--dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has README.md twice" in err, err
    assert list(out.iterdir()) == []  # nothing written
    # an API's part that is missing is named, as a skeleton that is not installed
    assert main(["init", "adapter", "mine", "--lang", "go", "--api", "anthropic", "--dir", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "skeleton is not installed" in err and "anthropic-messages" in err, err
