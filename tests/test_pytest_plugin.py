"""The pytest plugin (`--turnspec-adapter`) and the base test class adapter authors subclass."""

from __future__ import annotations

import pytest
import shared_paths

from conformance.suite.runner import SAMPLES_ENV

pytest_plugins = ["pytester"]


def test_plugin_is_inert_without_the_option(pytester):
    pytester.makepyfile("def test_one():\n    pass\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_plugin_runs_rules_as_items(pytester):
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--turnspec-adapter",
        "openai-chat",
        "--turnspec-samples",
        "none",
        "--turnspec-select",
        "TC2,TC30",
        "-v",
    )
    result.assert_outcomes(passed=9)  # TC201-TC203, TC301-TC306
    result.stdout.fnmatch_lines(["*openai-chat-TC201* PASSED*"])


def test_plugin_reports_a_failing_rule_with_reasons(pytester):
    pytester.syspathinsert(str(pytester.path))
    pytester.makepyfile(
        mutant="""
from conformance.adapters.openai_chat import OpenAIChatAdapter
class Silent(OpenAIChatAdapter):
    def drop(self, message, index, block_type, reason):
        return None
"""
    )
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--turnspec-adapter",
        "mutant:Silent",
        "--turnspec-samples",
        "none",
        "--turnspec-select",
        "TC201",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TC201 (§4.2.2, §7.3)*", "*no WARNING entry reports dropping the thinking block*"])


BASE = """
import pytest
from conformance.suite.testing import AdapterConformanceTests
from conformance.adapters import OpenAIChatAdapter

class TestChat(AdapterConformanceTests):
    @property
    def adapter(self):
        return OpenAIChatAdapter()

    supports_thinking = False
    {extra}
"""


def test_base_class_passes_reference_adapter_and_skips_with_reasons(pytester, monkeypatch):
    monkeypatch.delenv(SAMPLES_ENV, raising=False)
    pytester.makepyfile(BASE.format(extra=""))
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] >= 25
    result.stdout.fnmatch_lines(["*SKIPPED*supports_thinking is off for this adapter*"])


@pytest.mark.samples
def test_base_class_replays_the_recordings_the_environment_names(pytester, monkeypatch):
    """Issue 36: samples are asked for (here by `TURNSPEC_SAMPLES`, as a CI sets it), never
    found beside the install; the base class reads what `conform` and the plugin read."""
    if not shared_paths.WIRE.is_dir():
        pytest.skip(f"real samples not present at {shared_paths.WIRE}")
    extra = (
        "def test_reads_the_named_recordings(self):\n"
        "        rec = self._report().recordings\n"
        f"        assert rec['samples'] == {str(shared_paths.WIRE)!r} and rec['samples_source'] == {SAMPLES_ENV!r}\n"
        "        assert rec['samples_cassettes'] > 100\n"
    )
    monkeypatch.setenv(SAMPLES_ENV, str(shared_paths.WIRE))
    pytester.makepyfile(BASE.format(extra=extra))
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs", "-k", "reads_the_named or tc701")
    result.assert_outcomes(passed=2)
    # and without the variable, nothing beside the install is read
    monkeypatch.delenv(SAMPLES_ENV)
    extra = "def test_reads_none(self):\n        assert self._report().recordings['samples'] is None\n"
    pytester.makepyfile(BASE.format(extra=extra))
    pytester.runpytest("-p", "no:cacheprovider", "-k", "reads_none").assert_outcomes(passed=1)


def test_capability_off_skips_with_reason(pytester):
    pytester.makepyfile(BASE.format(extra="supports_streaming = False\n    supports_streaming_tool_calls = False"))
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs", "-k", "tc60 or capabilities_match")
    result.stdout.fnmatch_lines(["*SKIPPED*supports_streaming is off for this adapter*"])
    result.assert_outcomes(failed=1, skipped=9)  # the expectation contradicts the declaration


def test_silent_override_fails_and_xfail_with_reason_is_allowed(pytester):
    extra = (
        "def test_tc202_dropped_block_absent(self):\n        pass\n\n"
        "    @pytest.mark.xfail(reason='estimates are out of scope here')\n"
        "    def test_tc701_token_estimate(self):\n        assert False\n"
    )
    pytester.makepyfile(BASE.format(extra=extra))
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "tc202 or tc701")
    result.assert_outcomes(failed=1, xfailed=1)
    result.stdout.fnmatch_lines(["*overrides a turnspec standard test without @pytest.mark.xfail(reason=...)*"])


CRASHY = """
from conformance.adapters.openai_chat import OpenAIChatAdapter


class Crashy(OpenAIChatAdapter):
    cassette_folders = ("openai-chat",)  # asks for turnspec's own Chat Completions cassettes

    def from_wire_response(self, *args, **kwargs):
        return _lookup({})


def _lookup(table):
    return table["oops"]
"""


def test_plugin_failure_carries_the_adapters_traceback(pytester):
    pytester.syspathinsert(str(pytester.path))
    pytester.makepyfile(crashy=CRASHY)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--turnspec-adapter", "crashy:Crashy", "--turnspec-samples", "none",
        "--turnspec-select", "TC101",
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*crashed: KeyError: 'oops'*",
            "*Traceback (most recent call last):*",
            '*crashy.py", line 8, in from_wire_response',
            "*in _lookup*",
        ]
    )


def test_base_class_failure_carries_the_adapters_traceback(pytester):
    pytester.syspathinsert(str(pytester.path))
    pytester.makepyfile(crashy=CRASHY)
    pytester.makepyfile(
        test_mine="""
from conformance.suite.testing import AdapterConformanceTests
from crashy import Crashy

class TestMine(AdapterConformanceTests):
    @property
    def adapter(self):
        return Crashy()

    samples = None
"""
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-k", "tc101")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*TC101 failed:*", "*crashed: KeyError: 'oops'*", "*Traceback*", "*in _lookup*"])


def test_the_pytest_file_init_adapter_writes_passes(pytester):
    from conformance.cli import main

    assert main(["init", "adapter", "skeleton", "--api", "ollama", "--dir", str(pytester.path)]) == 0
    pytester.syspathinsert(str(pytester.path))
    result = pytester.runpytest("-p", "no:cacheprovider", "test_skeleton_adapter.py")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes.get("errors", 0) == 0 and outcomes["passed"] >= 25, outcomes


def test_plugin_reads_the_cassettes_of_the_working_folder(pytester):
    """`--turnspec-adapter` finds ./cassettes/<adapter>/ as `turnspec conform` does: without
    them only the scripted cases run (the recorded ones are skipped, not failed)."""
    from conformance.cli import main

    assert main(["init", "adapter", "local", "--api", "ollama", "--dir", str(pytester.path)]) == 0
    args = ["-p", "no:cacheprovider", "--ignore=test_local_adapter.py", "--turnspec-samples", "none"]
    args += ["--turnspec-adapter", "local_adapter.py:LocalAdapter"]
    result = pytester.runpytest(*args)
    assert result.parseoutcomes().get("failed", 0) == 0 and result.parseoutcomes()["passed"] >= 25
    with_cassettes = result.parseoutcomes()["passed"]
    (pytester.path / "cassettes").rename(pytester.path / "elsewhere")
    result = pytester.runpytest(*args)
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] < with_cassettes and outcomes["skipped"] > 0


def test_the_base_class_recipe_reads_the_cassettes_of_the_working_folder(pytester):
    """docs/getting-started/ci-gate.md's recipe (`adapter = MyAdapter()`, nothing else) runs
    the cases the plugin runs: ./cassettes/<adapter>/ is read by both, so the recorded checks
    pass rather than skip for want of a cassette ("any of the three runs the same cases")."""
    from conformance.cli import main

    assert main(["init", "adapter", "local", "--api", "ollama", "--dir", str(pytester.path)]) == 0
    pytester.syspathinsert(str(pytester.path))
    (pytester.path / "test_local_adapter.py").unlink()
    pytester.makepyfile(
        test_recipe="from conformance.suite.testing import AdapterConformanceTests\n"
        "from local_adapter import LocalAdapter\n\n\n"
        "class TestMine(AdapterConformanceTests):\n    adapter = LocalAdapter()\n"
    )
    common = ["-p", "no:cacheprovider", "--turnspec-samples", "none"]
    plugin = pytester.runpytest(*common, "--turnspec-adapter", "local_adapter:LocalAdapter", "--ignore=test_recipe.py")
    recipe = pytester.runpytest("-p", "no:cacheprovider", "test_recipe.py", "-rs").parseoutcomes()
    assert recipe.get("failed", 0) == 0 and recipe.get("errors", 0) == 0, recipe
    # the recipe's class adds one test of its own (test_capabilities_match_expectations)
    assert recipe["passed"] - 1 == plugin.parseoutcomes()["passed"], (recipe, plugin.parseoutcomes())
