"""The registry of formats. Each is a peer package with its reader, rules and converters.

Adding a format = one package (a class satisfying `base.Format`) plus one line in
`all_formats`. This package imports no engine: the migration engine registers its
migrations per format name (`conformance.migrations`), and the rule catalogue of the
whole tool (formats + migrations + suite) is assembled above, where the CLI lists it.
"""

from __future__ import annotations

from pathlib import Path

from ..core.findings import RuleCatalog
from .ai_sdk import AISDKFormat
from .base import FileStats, Format, FormatRun, Options, read_unit
from .canonical import CanonicalFormat
from .chibi import chibi_formats
from .geppetto import GeppettoFormat
from .gpt2099 import Gpt2099Format
from .langchain import LangChainFormat
from .openai_messages import OpenAIMessagesFormat
from .otel_genai import OtelGenAIFormat
from .pydantic_ai import PydanticAIFormat
from .sqlite import SqliteFormat


def all_formats() -> list[Format]:
    """Every format, in detection order (the most specific first, canonical last)."""
    return [SqliteFormat(), *chibi_formats(), PydanticAIFormat(), AISDKFormat(), LangChainFormat(), OtelGenAIFormat(), OpenAIMessagesFormat(), Gpt2099Format(), GeppettoFormat(), CanonicalFormat()]  # fmt: skip


def get_format(name: str) -> Format:
    for f in all_formats():
        if f.name == name:
            return f
    known = ", ".join(f.name for f in all_formats())
    raise KeyError(f"unknown format {name!r} (known: {known})")


def detect_format(path: Path) -> Format | None:
    asked: set[type] = set()
    for f in all_formats():
        # detection depends on the path alone (`Format.detect`), so a class already asked
        # is not asked again: chibi's vocabulary variants answer as chibi did, and each
        # answer reads the file again (a third of the time on many small files)
        if type(f) in asked:
            continue
        asked.add(type(f))
        if f.detect(path):
            return f
    return None


def catalog() -> RuleCatalog:
    """Every rule of every format (engines add theirs above: `migrations.rules`)."""
    out = RuleCatalog()
    for f in all_formats():
        for info in f.rules:
            out.add(info)
    return out


__all__ = [
    "FileStats", "Format", "FormatRun", "Options", "all_formats", "catalog", "detect_format", "get_format", "read_unit",
]  # fmt: skip
