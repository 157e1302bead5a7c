from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SAMPLES = SHARED / "samples"
REFERENCE = SHARED / "reference"


@pytest.fixture
def samples() -> Path:
    """../shared/samples (real data no one here wrote); skips when absent."""
    if not SAMPLES.is_dir():
        pytest.skip(f"real samples not present at {SAMPLES}")
    return SAMPLES
