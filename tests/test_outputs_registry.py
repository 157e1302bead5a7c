"""An output format is declared once (`reporting.FINDINGS_OUTPUTS`) and every checking
command offers it: adding one is its renderer, its line in the registry and its test."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.cli import command, main
from conformance.reporting import FINDINGS_OUTPUTS

ROOT = Path(__file__).resolve().parents[1]
CHECKING = [("validate",), ("conform",), ("cassettes", "lint"), ("replay-check",), ("schema", "diff")]


def _choices(path: tuple[str, ...]) -> list[str]:
    cmd = command()
    for name in path:
        cmd = cmd.commands[name]  # type: ignore[attr-defined]
    opt = next(p for p in cmd.params if "--output" in getattr(p, "opts", ()))
    return [str(m.value) for m in opt.type_descriptor.annotation]  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", CHECKING, ids=" ".join)
def test_every_checking_command_offers_every_findings_output(path: tuple[str, ...]) -> None:
    choices = _choices(path)
    assert choices[:2] == ["text", "json"]
    assert {o.name for o in FINDINGS_OUTPUTS} <= set(choices)


def test_junit_from_commands_that_had_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """cassettes lint: a provider key in a header is a failure of its cassette's test case."""
    cassette = tmp_path / "c.yaml"
    cassette.write_text(
        "interactions:\n- request:\n    body: ''\n    headers:\n      x-api-key:\n      - sk-ant-api03-"
        + "A" * 40
        + "\n    method: POST\n    uri: https://api.anthropic.com/v1/messages\n"
        "  response:\n    body:\n      string: ''\n    headers: {}\n    status:\n      code: 200\n      message: OK\n"
        "version: 1\n"
    )
    assert main(["cassettes", "lint", str(cassette), "-o", "junit"]) == 1
    root = ET.fromstring(capsys.readouterr().out)
    cases = root.findall(".//testcase")
    assert [c.get("name") for c in cases] == [str(cassette)]
    failure = cases[0].find("failure")
    assert failure is not None and "CL002 error: provider API key" in (failure.text or "")
