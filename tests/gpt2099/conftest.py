from __future__ import annotations

from pathlib import Path

import pytest

from conformance.api import validate
from conformance.core.findings import Finding

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


def findings(path: Path, fmt: str | None = "gpt2099") -> list[Finding]:
    return validate([path], fmt=fmt).findings
