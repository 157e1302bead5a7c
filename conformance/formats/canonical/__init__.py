"""The canonical message format (seed 003): JSON / JSON Lines of Message objects."""

from __future__ import annotations

from pathlib import Path

from ..base import Options
from .checker import CanonicalRun
from .rules import CATALOG


class CanonicalFormat:
    name = "canonical"
    rules = CATALOG

    def detect(self, path: Path) -> bool:
        return path.suffix in (".json", ".jsonl")

    def start(self, options: Options) -> CanonicalRun:
        return CanonicalRun(options)


__all__ = ["CATALOG", "CanonicalFormat", "CanonicalRun"]
