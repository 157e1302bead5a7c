"""A record's `hosts` are the provider's own (`WireApi.own_host`): names, or patterns for a
provider's regional hosts. A recording made against one of them is judged as the provider's
(TC104's shape, TC802's URL, TC701's estimate); any other host is a compatible server's."""

from __future__ import annotations

import shutil
from pathlib import Path

from conformance.adapters.vertex_anthropic import VertexAnthropicAdapter
from conformance.core.findings import Selection
from conformance.suite.runner import SuiteConfig, run
from conformance.wire.gemini import GEMINI
from conformance.wire.ollama import OLLAMA_CHAT
from conformance.wire.vertex_anthropic_messages import VERTEX_ANTHROPIC_MESSAGES

ROOT = Path(__file__).resolve().parents[1]


def test_vertex_ais_regional_hosts_are_the_providers_own() -> None:
    """Vertex AI serves at the global host and at `{LOCATION}-aiplatform.googleapis.com`."""
    for api in (GEMINI, VERTEX_ANTHROPIC_MESSAGES):
        assert api.own_host("aiplatform.googleapis.com")
        assert api.own_host("us-east5-aiplatform.googleapis.com")
        assert api.own_host("europe-west1-aiplatform.googleapis.com:443")
        assert not api.own_host("us-east5-aiplatform.googleapis.com.example.net")
        assert not api.own_host("localhost:8000")


def test_a_host_with_its_port_is_matched_whole() -> None:
    assert OLLAMA_CHAT.own_host("localhost:11434")
    assert not OLLAMA_CHAT.own_host("localhost:8080")


def test_a_regional_vertex_recording_is_judged_as_the_providers(tmp_path: Path) -> None:
    """turnspec's Vertex cassettes moved to a region's host: TC104 judges their rendered
    requests by the provider's schema instead of skipping them as a compatible server's."""
    folder = tmp_path / "vertex-anthropic"
    shutil.copytree(ROOT / "cassettes" / "vertex-anthropic", folder)
    for f in folder.glob("*.yaml"):
        text = f.read_text(encoding="utf-8")
        f.write_text(text.replace("https://aiplatform.googleapis.com/", "https://us-east5-aiplatform.googleapis.com/"))
    a = VertexAnthropicAdapter()
    report = run(
        SuiteConfig.for_adapter(a, cassette_dirs=[folder], samples=None, selection=Selection(select=("TC104",)))
    )
    result = report.result("TC104", a.name)
    assert result is not None and result.status == "pass" and result.passed > 5, result.skip_reasons
    assert not [r for r in result.skip_reasons if "not " in r and "own hosts" in r], result.skip_reasons
