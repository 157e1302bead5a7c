"""Where the tests find the real samples: `$TURNSPEC_TEST_SAMPLES` when set (CI's second run
points it at an empty folder, so a test that silently needs the samples fails there), else
`../shared/samples` beside the checkout. Every test reads the samples through these names and
skips with a reason when the folder it needs is absent."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES_ENV = "TURNSPEC_TEST_SAMPLES"
SAMPLES = Path(os.environ[SAMPLES_ENV]) if os.environ.get(SAMPLES_ENV) else ROOT.parent / "shared" / "samples"
WIRE = SAMPLES / "wire"
