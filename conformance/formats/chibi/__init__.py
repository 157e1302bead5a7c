"""The chibi format (seed 002): a chibi context directory, validated as one unit.

chibi (emesal/chibi) keeps each context in a directory: a partitioned, append-only
transcript, the derived context window `context.jsonl`, and small side files (see
`reader`). Two entry vocabularies exist in the published docs: v0.9 records call_user
hand-offs as `flow_control_call`/`flow_control_result` pairs, v0.10 as `control_transfer`
entries plus `role` and `flow_control` fields. Both validate; the report's
`vocabulary` says which one a unit uses (`v0.9`, `v0.10`, `mixed`, or `either` when it
uses only entries both share). The formats `chibi-v0.9` and `chibi-v0.10` pin one
vocabulary: entries of the other are errors (CB031).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...core.convertkit import Converter
from ..base import Options, lazy_converter
from .reader import layout_of, peek_kind
from .rules import CATALOG

if TYPE_CHECKING:
    from .checker import ChibiRun

VOCABULARIES = ("v0.9", "v0.10")
# the checker and the converters load when used: `turnspec validate` detects every format
# on each run, and starts this one only on chibi units (~25 ms of imports saved)
_CONVERTERS: dict[tuple[str, str], Converter] = {
    ("chibi", "canonical"): lazy_converter(f"{__name__}.convert", "chibi_to_canonical"),
    ("canonical", "chibi"): lazy_converter(f"{__name__}.convert", "canonical_to_chibi"),
}


class ChibiFormat:
    """A chibi context directory (or transcript/ directory), or one chibi file."""

    rules = CATALOG
    schema_family = "chibi"
    migrations = False

    def __init__(self, vocabulary: str | None = None) -> None:
        if vocabulary is not None and vocabulary not in VOCABULARIES:
            raise ValueError(f"unknown chibi vocabulary {vocabulary!r} (known: {', '.join(VOCABULARIES)})")
        self.vocabulary = vocabulary
        self.name = "chibi" if vocabulary is None else f"chibi-{vocabulary}"
        self.converters: dict[tuple[str, str], Converter] = _CONVERTERS if vocabulary is None else {}

    def detect(self, path: Path) -> bool:
        """A context directory as one unit, or a file whose content is unmistakably chibi."""
        if path.is_dir():
            return layout_of(path) is not None
        return peek_kind(path) is not None

    def start(self, options: Options) -> ChibiRun:
        from .checker import ChibiRun  # function-level: loaded when a chibi unit is validated

        return ChibiRun(options, self.vocabulary)


def chibi_formats() -> list[ChibiFormat]:
    """`chibi` (either vocabulary) first, then the two vocabulary-pinning variants."""
    return [ChibiFormat(), *(ChibiFormat(v) for v in VOCABULARIES)]


__all__ = ["CATALOG", "ChibiFormat", "chibi_formats"]
