"""Commands import only what they need (issue 38: start-up is a ratio `nox -s bench`
reports, never a timed test; these tests hold the imports that make it).

- `turnspec --version` is answered by the console script (`conformance.entry`) before
  the command line interface is imported;
- `import conformance` loads no engine: the library API is loaded at first use;
- a command that runs one of the CLI's own commands (`validate`, `rule`) builds that
  command alone, and converts its plain values without typer's pydantic adapters, the
  same values typer gives (`cli.coerce`); validating a clean file that the fast path
  clears never loads jsonschema-rs.
"""

from __future__ import annotations

import enum
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

import conformance
from conformance.cli import _OWN_NAMES, _command_for, _own_command, command, main
from conformance.cli.coerce import PASS, plain

ROOT = Path(__file__).resolve().parents[1]
LINE = (
    b'{"id":"01KR3QB1CHV3NC7DSVSQM8931C","session_id":"s","role":"user","content":[{"type":"text","text":"hi"}],'
    b'"metadata":{},"created_at":"2026-05-08T12:00:02.961534Z","schema_version":1}\n'
)


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (which prints nothing)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "generated")])}
    probe = f"{code}\nimport sys, json\nsys.stdout.write(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_the_console_script_is_the_entry_module() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["turnspec"] == "conformance.entry:main"


def test_version_imports_nothing_of_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.entry import main as entry

    assert entry(["--version"]) == 0
    assert capsys.readouterr().out == f"turnspec {conformance.__version__}\n"
    loaded = _modules_after(
        "import io, contextlib\n"
        "from conformance.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--version'])"
    )
    assert "conformance.cli" not in loaded and "typer" not in loaded and "conformance.api" not in loaded


def test_the_package_loads_its_api_at_first_use() -> None:
    assert "conformance.api" not in _modules_after("import conformance")
    assert "conformance.api" in _modules_after("import conformance\nconformance.validate")
    assert conformance.validate is conformance.api.validate  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        conformance.no_such_name  # noqa: B018


def test_validating_a_clean_line_loads_neither_pydantic_nor_jsonschema_rs(tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_bytes(LINE)
    loaded = _modules_after(
        "import io, contextlib\n"
        "from conformance.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['validate', {str(one)!r}]) == 0"
    )
    assert "pydantic" not in loaded and "jsonschema_rs" not in loaded
    assert "conformance.cli.commands.conform" not in loaded  # no other command was built
    loaded = _modules_after(
        "import io, contextlib\n"
        "from conformance.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['rule', 'TS202']) == 0"
    )
    assert "pydantic" not in loaded


@pytest.mark.parametrize(("rule", "absent"), [("TS202", "conformance.suite.checks"), ("TC405", "vcr")])
def test_rule_loads_only_the_catalogue_and_checks_it_explains(rule: str, absent: str) -> None:
    """`turnspec rule ID` reads the catalogues in turn and stops at the rule's: a format
    rule loads no suite check, a suite check no cassette reader (vcrpy, httpx)."""
    loaded = _modules_after(
        "import io, contextlib\n"
        "from conformance.entry import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['rule', {rule!r}]) == 0"
    )
    assert absent not in loaded and "conformance.replay" not in loaded


@pytest.mark.parametrize("name", sorted(_OWN_NAMES))
def test_an_own_command_alone_has_the_help_of_the_whole_cli(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    alone = _own_command(name)
    whole = command()
    assert _command_for([name, "x"]) is alone and _command_for(["conform"]) is whole
    outputs = []
    for cmd in (alone, whole):
        with pytest.raises(SystemExit):
            cmd.main(args=[name, "--help"], prog_name="turnspec")
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1] and "Usage: turnspec " + name in outputs[0]


def _samples(param: Any) -> list[Any]:
    """Values a parameter may get: nothing, its default, strings typed on a command line."""
    kind = param.type_descriptor.annotation
    here = str(Path(__file__))
    out: list[Any] = [None, param.default, "", "x", "12", "0", "-3", "1e3", "٣", ("a", "b"), (), here, "/no/such/file"]
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        out += [m.value for m in kind] + [m.value.upper() for m in kind] + list(kind)
    return out


def _params(cmd: Any) -> list[Any]:
    found = list(cmd.params)
    for sub in getattr(cmd, "commands", {}).values():
        found += _params(sub)
    return found


def test_plain_values_are_what_typer_makes_of_them() -> None:
    """Every parameter of every command, on values of every kind: where `coerce.plain`
    converts a value itself, typer's own conversion (its pydantic adapter) gives the
    same value, of the same type; every value it leaves is typer's to convert."""
    checked = 0
    for param in _params(command()):
        if not hasattr(param, "type_descriptor") or param.type_descriptor.annotation is bool:
            continue
        for value in _samples(param):
            got = plain(param, value)
            if got is PASS:
                continue
            want = param.get_runtime_param().coerce(value, param=param, ctx=None)
            assert (type(got), got) == (type(want), want), (param.name, value)
            checked += 1
    assert checked > 100  # the check met many parameters and values


def test_usage_errors_are_still_typers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    one = tmp_path / "one.jsonl"
    one.write_bytes(LINE)
    assert main(["validate", str(one), "-j", "0"]) == 2
    assert "Invalid value for '--jobs'" in capsys.readouterr().err
    assert main(["validate", str(one), "-o", "xml"]) == 2
    assert "--output: 'xml' is not one of text, json" in capsys.readouterr().err
    assert main(["rule"]) == 2
    assert "Missing argument 'ID'" in capsys.readouterr().err
