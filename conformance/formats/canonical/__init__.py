"""The canonical message format (seed 003): JSON / JSON Lines of Message objects."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from ...core.convertkit import LOSSY, ConvertContext, Converter, is_tool_definition, validated
from ...core.findings import RuleInfo
from ...core.jsonio import Record, parse, read_json, read_jsonl
from ..base import FileStats, Options
from .checker import CanonicalRun
from .rules import CATALOG

_PEEK = 64 * 1024


class CanonicalFormat:
    name = "canonical"
    rules = CATALOG
    schema_family = "canonical"
    migrations = True  # conformance/migrations/canonical.py: revision 1 <-> 2
    converters: ClassVar[
        dict[tuple[str, str], Converter]
    ] = {}  # the other formats declare theirs to and from canonical

    def detect(self, path: Path) -> bool:
        """A `.json`/`.jsonl` whose start mentions canonical keys, or is not JSON at all.

        In a directory walk this keeps unrelated JSON (configs, provider requests and
        stream recordings) out of the run, while a broken file is still claimed and
        reported. A file named on the command line is validated as canonical whatever it
        holds (see `api.expand`).
        """
        if path.suffix not in (".json", ".jsonl") or not path.is_file():
            return False
        try:
            with path.open("rb") as f:
                head = f.read(_PEEK)
                more = bool(f.read(1))
        except OSError:
            return True  # let validation report the I/O problem
        if path.suffix == ".jsonl":
            first = next((line for line in head.splitlines() if line.strip()), b"")
            if not first:
                return True
            head, more = first, len(first) == len(head.rstrip()) and more
        if any(k in head for k in (b'"schema_version"', b'"session_id"', b'"side_effects"')):
            return True
        if more:
            return False
        try:
            parse(head.lstrip(b"\xef\xbb\xbf"))
        except ValueError:
            return True
        return False

    def start(self, options: Options) -> CanonicalRun:
        return CanonicalRun(options, revisions=options.revisions or None)


def validated_records(src: Path) -> list[Record]:
    """The records of a canonical file that validates (`convertkit.validated` refuses one
    that does not, naming its first error): the input of every `--from canonical` converter."""
    validated(src, "canonical", CanonicalRun(Options()), FileStats(str(src), "canonical"))
    items = read_jsonl(src) if src.suffix == ".jsonl" else read_json(src)
    return [r for r in items if isinstance(r, Record)]


def sessions_of(src: Path, ctx: ConvertContext, target: str, rule: RuleInfo = LOSSY) -> dict[str, list[Record]]:
    """The messages of a valid canonical file grouped by session, in input order; a tool
    definition, which no peer's message list carries, is reported dropped (`rule`)."""
    sessions: dict[str, list[Record]] = {}
    for rec in validated_records(src):
        v = rec.value
        if is_tool_definition(v):
            ctx.lossy(
                rec.path, rec.line, rec.pointer, f"tool definition {v.get('name')!r} is not a {target}; dropped", rule
            )
            continue
        sessions.setdefault(v["session_id"], []).append(rec)
    return sessions


__all__ = ["CATALOG", "CanonicalFormat", "CanonicalRun", "sessions_of", "validated_records"]
