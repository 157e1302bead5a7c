from __future__ import annotations

from pathlib import Path

import pytest
from shared_paths import ROOT, SAMPLES

from conformance.suite.runner import SAMPLES_ENV

SHARED = ROOT.parent / "shared"
REFERENCE = SHARED / "reference"


@pytest.fixture(autouse=True)
def _no_samples_from_the_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    """The tests choose their recordings themselves: a `TURNSPEC_SAMPLES` of the caller's shell
    must not change what `conform`, the plugin and the base class replay under test (a test
    that wants it sets it with `monkeypatch.setenv`)."""
    monkeypatch.delenv(SAMPLES_ENV, raising=False)


@pytest.fixture
def samples() -> Path:
    """../shared/samples (real data no one here wrote); skips when absent."""
    if not SAMPLES.is_dir():
        pytest.skip(f"real samples not present at {SAMPLES}")
    return SAMPLES
