from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from chibi_helpers import FIXTURES


@pytest.fixture
def ctx_copy(tmp_path: Path) -> Callable[[str], Path]:
    """A writable copy of a fixture context directory."""

    def make(name: str) -> Path:
        dst = tmp_path / name
        shutil.copytree(FIXTURES / name, dst)
        return dst

    return make
