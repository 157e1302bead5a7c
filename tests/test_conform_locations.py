"""Where CI outputs place a failing conform case that belongs to the adapter, not to a
recording (issue 39, item 3): at the adapter's source file and the line of its class when
that file is in the repository (the working folder), else at no physical location; never
at a made-up `adapter:acme` path, which code scanning cannot place."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from conformance.cli import main
from tests.test_reporting import sarif_schema

ACME = """from conformance.adapters.openai_chat import OpenAIChatAdapter


class Acme(OpenAIChatAdapter):
    name = "acme"
    capabilities = {**OpenAIChatAdapter.capabilities, "max_context_tokens": -5}
"""
CLASS_LINE = 4  # the `class Acme` statement


@pytest.fixture
def acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An adapter whose capabilities declare a negative context window (TC001 fails)."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "acme_adapter.py").write_text(ACME)
    monkeypatch.delitem(sys.modules, "acme_adapter", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return repo


def _run(capsys: pytest.CaptureFixture[str], ref: str, output: str) -> str:
    assert main(["conform", ref, "--no-samples", "--select", "TC001", "-o", output]) == 1
    return capsys.readouterr().out


def test_sarif_places_an_adapter_finding_at_its_class(
    acme: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(acme)
    (result,) = json.loads(_run(capsys, "src/acme_adapter.py:Acme", "sarif"))["runs"][0]["results"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical == {"artifactLocation": {"uri": "src/acme_adapter.py"}, "region": {"startLine": CLASS_LINE}}
    assert result["ruleId"] == "TC001" and "acme" in result["message"]["text"]


def test_github_places_an_adapter_finding_at_its_class(
    acme: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(acme)
    (line,) = _run(capsys, "src/acme_adapter.py:Acme", "github").splitlines()
    assert line.startswith(f"::error file=src/acme_adapter.py,line={CLASS_LINE},title=TC001::acme: ")


def test_an_adapter_outside_the_repository_has_no_physical_location(
    acme: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    ref = f"{acme / 'src' / 'acme_adapter.py'}:Acme"
    log = json.loads(_run(capsys, ref, "sarif"))
    jsonschema.Draft4Validator(sarif_schema()).validate(log)  # a result may carry a logical location only
    (result,) = log["runs"][0]["results"]
    assert "physicalLocation" not in result["locations"][0]
    assert result["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "/"}]
    (line,) = _run(capsys, ref, "github").splitlines()
    assert line.startswith("::error title=TC001::acme: ") and "file=" not in line
