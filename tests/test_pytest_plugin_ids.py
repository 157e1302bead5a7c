"""The pytest plugin's items are collected items with real node ids (issue 39, item 5): under
the test file that names its adapters (`turnspec_adapter = ...`), or, for
`--turnspec-adapter`, under the configuration file pytest found. So a node id selects one,
`--lf` reruns only the failed ones and `--collect-only` counts them (it said "no tests
collected" after listing them)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

FAST = ("--turnspec-samples", "none", "--turnspec-select", "TC20")  # TC201-TC203, no recordings

SILENT = """
from conformance.adapters.openai_chat import OpenAIChatAdapter
class Silent(OpenAIChatAdapter):
    def drop(self, message, index, block_type, reason):
        return None
"""  # drops every block silently: TC201 (no WARN line) and TC203 (critical ones too) fail, TC202 passes


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyprojecttoml("[tool.pytest.ini_options]\n")
    pytester.syspathinsert(str(pytester.path))
    pytester.makepyfile(silent=SILENT)
    return pytester


def test_cli_items_are_collected_under_the_configuration_file(project: pytest.Pytester) -> None:
    result = project.runpytest("--collect-only", "-q", "--turnspec-adapter", "openai-chat", *FAST)
    result.stdout.fnmatch_lines(
        [
            "pyproject.toml::turnspec[[]openai-chat-TC201[]]",
            "pyproject.toml::turnspec[[]openai-chat-TC202[]]",
            "pyproject.toml::turnspec[[]openai-chat-TC203[]]",
            "3 tests collected*",
        ]
    )
    assert "no tests collected" not in result.stdout.str()


def test_a_node_id_selects_one_item(project: pytest.Pytester) -> None:
    result = project.runpytest(
        "pyproject.toml::turnspec[openai-chat-TC202]", "--turnspec-adapter", "openai-chat", *FAST, "-v"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["pyproject.toml::turnspec[[]openai-chat-TC202[]] PASSED*"])


def test_last_failed_reruns_only_the_failed_item(project: pytest.Pytester) -> None:
    args = ("--turnspec-adapter", "silent:Silent", *FAST)
    project.runpytest(*args).assert_outcomes(failed=2, passed=1)
    again = project.runpytest("--lf", *args, "-v")
    again.assert_outcomes(failed=2)  # TC202, which passed, is not run again
    again.stdout.fnmatch_lines(["*turnspec[[]openai-chat-TC201[]] FAILED*", "*turnspec[[]openai-chat-TC203[]] FAILED*"])
    assert "TC202" not in again.stdout.str().split("short test summary")[0].split("collected")[1]


def test_a_test_file_naming_its_adapter_holds_its_items(project: pytest.Pytester) -> None:
    project.makepyfile(test_conformance='turnspec_adapter = "silent:Silent"\n\ndef test_other():\n    pass\n')
    result = project.runpytest("--collect-only", "-q", *FAST)
    result.stdout.fnmatch_lines(
        [
            "test_conformance.py::turnspec[[]openai-chat-TC201[]]",
            "test_conformance.py::turnspec[[]openai-chat-TC202[]]",
            "test_conformance.py::turnspec[[]openai-chat-TC203[]]",
            "test_conformance.py::test_other",
            "4 tests collected*",
        ]
    )
    project.runpytest(*FAST).assert_outcomes(failed=2, passed=2)
    one = project.runpytest("test_conformance.py::turnspec[openai-chat-TC202]", *FAST)
    one.assert_outcomes(passed=1)
    project.runpytest("--lf", *FAST).assert_outcomes(failed=2)


def test_without_a_configuration_file_the_items_are_still_counted(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--collect-only", "-q", "--turnspec-adapter", "openai-chat", *FAST)
    result.stdout.fnmatch_lines(["*turnspec[[]openai-chat-TC201[]]", "3 tests collected*"])


def test_a_wrong_module_attribute_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_bad="turnspec_adapter = 5\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*turnspec_adapter names adapters: a string or a list of strings*"])
