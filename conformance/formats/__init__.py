"""The registry of formats. Each is a peer module with its reader, rules and tests."""

from __future__ import annotations

from pathlib import Path

from ..findings import RuleCatalog
from .base import FileStats, Format, FormatRun, Options
from .canonical import CanonicalFormat
from .chibi import chibi_formats
from .geppetto import GeppettoFormat
from .gpt2099 import Gpt2099Format
from .sqlite import SqliteFormat


def all_formats() -> list[Format]:
    """Every format, in detection order (the most specific first, canonical last)."""
    return [SqliteFormat(), *chibi_formats(), Gpt2099Format(), GeppettoFormat(), CanonicalFormat()]


def get_format(name: str) -> Format:
    for f in all_formats():
        if f.name == name:
            return f
    known = ", ".join(f.name for f in all_formats())
    raise KeyError(f"unknown format {name!r} (known: {known})")


def detect_format(path: Path) -> Format | None:
    for f in all_formats():
        if f.detect(path):
            return f
    return None


def catalog() -> RuleCatalog:
    """Every rule of every format."""
    from ..migrations.rules import CATALOG as MIGRATION_RULES

    out = RuleCatalog()
    for f in all_formats():
        for info in f.rules:
            out.add(info)
    for info in MIGRATION_RULES:
        out.add(info)
    return out


__all__ = ["FileStats", "Format", "FormatRun", "Options", "all_formats", "catalog", "detect_format", "get_format"]
