from __future__ import annotations

import signal
from pathlib import Path

import pytest
from shared_paths import ROOT, SAMPLES

from conformance.suite.runner import SAMPLES_ENV

# A run started in the background of a non-interactive shell inherits SIGINT ignored, and so
# would every process the tests start (an ignored signal stays ignored across exec): the tests
# that send Ctrl-C need it to act as it does at a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

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
    if not SAMPLES.is_dir() or next(SAMPLES.iterdir(), None) is None:
        # an empty folder is how CI's second run hides them (TURNSPEC_TEST_SAMPLES)
        pytest.skip(f"real samples not present at {SAMPLES}")
    return SAMPLES
