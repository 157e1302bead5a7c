"""Replay safety: will a stored session survive a swap to another adapter?

`replay_check(paths, targets)` reads canonical JSONL/JSON, a §9.1 SQLite store, or any
format turnspec converts to canonical, and yields one `Verdict` per session and target
(`check.check_session`). Nothing is sent anywhere: the history is only rendered. The
CLI (`turnspec replay-check`) is a thin shell over this.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..adapters import registry as adapter_registry
from ..core.convertkit import ConvertContext, as_lines
from ..core.errors import InputError
from ..core.findings import Finding
from ..core.jsonio import DEFAULT_LOCK_WAIT, is_stdin, stdin_bytes
from ..formats import Format, detect_format, get_format
from ..formats.canonical.markers import DEFAULT_CRITICAL_KEY
from .check import LOSSY, OK, REFUSED, Target, Verdict, check_session
from .rules import CATALOG, INPUT_UNREADABLE
from .sessions import Located, Session, SessionReader

__all__ = ["CATALOG", "LOSSY", "OK", "REFUSED", "ReplaySummary", "Target", "Verdict", "replay_check", "target"]

# Adapters keep each session's tool-id map for their lifetime (§6.2); a long run takes a
# fresh instance every so many sessions so its memory stays bounded.
_FRESH_ADAPTER_EVERY = 512


def target(spec: str) -> Target:
    """`NAME`, `NAME:MODEL` (a registered adapter) or `module:attr[:MODEL]`.

    Without a model, the request names `<provider>:replay-check` (a placeholder: the
    rendering does not depend on the model for any reference adapter)."""
    names = adapter_registry.available()
    ref, model = spec, None
    if spec not in names:
        head, sep, rest = spec.partition(":")
        if sep and head in names:
            ref, model = head, rest
        elif (sep and "." in head) or (sep and ":" in rest):
            attr, sep2, maybe_model = rest.partition(":")
            ref, model = f"{head}:{attr}", (maybe_model if sep2 else None)
    adapter = adapter_registry.load(ref)
    provider = str(getattr(adapter, "provider", "") or getattr(adapter, "name", ref))
    if model and not model.startswith(f"{provider}:"):
        # the provider's own id, opaque: `llama3.2:latest` and `anthropic.claude-...-v1:0`
        # hold a `:` of their own, so the canonical id is the provider's prefix on it whole
        model = f"{provider}:{model}"
    return Target(
        spec if model is None else f"{ref}:{model.removeprefix(f'{provider}:')}",
        adapter,
        model or f"{provider}:replay-check",
    )


@dataclass
class ReplaySummary:
    """Counts per target, and the input records that could not be read."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def add(self, v: Verdict) -> None:
        self.counts.setdefault(v.target, Counter())[v.verdict] += 1

    @property
    def refused(self) -> int:
        return sum(c[REFUSED] for c in self.counts.values())

    @property
    def lossy(self) -> int:
        return sum(c[LOSSY] for c in self.counts.values())


def _inputs(paths: Iterable[str | Path], fmt: str | None, summary: ReplaySummary) -> Iterator[tuple[Path, str]]:
    for top in map(Path, paths):
        if str(top) == "-":  # standard input: canonical unless --format says otherwise (as `validate`)
            yield top, (get_format(fmt).name if fmt else "canonical")
            continue
        if not top.exists():
            raise InputError(f"{top}: no such file or directory")
        if top.is_dir():
            yield from _walk(top, summary, get_format(fmt) if fmt else None)
            continue
        if not top.is_file():
            raise InputError(f"{top}: not a regular file or directory")
        unit = get_format(fmt) if fmt else detect_format(top)
        name = unit.name if unit is not None else ("canonical" if top.suffix in (".json", ".jsonl") else "")
        if not name:
            raise InputError(f"{top}: cannot tell which format this is; pass --format")
        yield top, ("canonical" if name == "sqlite" else name)


def _walk(top: Path, summary: ReplaySummary, forced: Format | None = None) -> Iterator[tuple[Path, str]]:
    """Every transcript below `top`, sorted; a directory a format claims whole (a chibi
    context) is one unit; files no format claims are listed as skipped. With `forced`
    (--format), only what that format claims is read (as `validate` walks)."""

    def detect(p: Path) -> Format | None:
        if forced is not None:
            return forced if forced.detect(p) else None
        return detect_format(p)

    try:
        # detection looks inside (a chibi context's transcript/): a denied part is a problem
        unit = detect(top)
        entries = [] if unit is not None and unit.name not in ("canonical", "sqlite") else sorted(top.iterdir())
    except OSError as exc:
        summary.problems.append(_unreadable(Path(exc.filename) if isinstance(exc.filename, str) else top, exc))
        return
    if unit is not None and unit.name not in ("canonical", "sqlite"):
        yield top, unit.name
        return
    for p in entries:
        if p.is_symlink():
            summary.skipped.append(str(p))
        elif p.is_dir():
            yield from _walk(p, summary, forced)
        elif p.is_file():
            try:
                f = detect(p)
            except OSError as exc:
                summary.problems.append(_unreadable(p, exc))
                continue
            if f is None:
                summary.skipped.append(str(p))
            else:
                yield p, ("canonical" if f.name in ("canonical", "sqlite") else f.name)
        else:
            summary.skipped.append(str(p))


def _unreadable(path: Path, exc: Exception | str) -> Finding:
    return Finding(str(path), None, "", INPUT_UNREADABLE.id, INPUT_UNREADABLE.severity, f"cannot read: {exc}")


def _sessions(path: Path, fmt: str, reader: SessionReader, summary: ReplaySummary) -> Iterator[Session]:
    if fmt == "canonical":
        yield from reader.read(path)
        return
    # function-level import: the conversion engine loads every format's converters
    from ..convert import convert

    # other formats are converted to canonical first, into a private temporary folder
    # that is always removed (the input is never written)
    with tempfile.TemporaryDirectory(prefix="turnspec-replay-") as tmp:
        src = _stdin_copy(Path(tmp)) if is_stdin(path) else path
        out = Path(tmp) / "canonical.jsonl"
        ctx = ConvertContext()
        try:
            convert(fmt, "canonical", src, out, context=ctx)
        except InputError as exc:
            summary.problems.append(_unreadable(path, str(exc).replace(str(src), str(path))))
            return
        for session in reader.read(out):
            session.messages = [_source(m, ctx.origins, src, path) for m in session.messages]
            yield session


def _stdin_copy(tmp: Path) -> Path:
    """Standard input in a file a converter can read: `.json` when it parses as one
    document, else `.jsonl` (what the peer readers decide for `-`)."""
    name = "stdin.jsonl" if as_lines(Path("-")) else "stdin.json"
    (tmp / name).write_bytes(stdin_bytes())
    return tmp / name


def _source(m: Located, origins: list[tuple[str, int | None, str]], src: Path, shown: Path) -> Located:
    """`m` (a message of the canonical copy, one per line) located at the message of the
    input it was converted from: the input's own line and pointer. A converter that says
    nothing of its origins leaves the place in the canonical copy, named as such."""
    k = (m.line or 0) - 1
    if 0 <= k < len(origins):
        path, line, pointer = origins[k]
        return Located(m.message, str(shown) if path == str(src) else path, line, pointer, converted=True)
    return Located(m.message, f"{shown} (as canonical)", m.line, m.pointer)


def replay_check(
    paths: Iterable[str | Path],
    targets: list[Target],
    *,
    fmt: str | None = None,
    source_provider: str | None = None,
    strict: bool = False,
    summary: ReplaySummary | None = None,
    critical_key: str = DEFAULT_CRITICAL_KEY,
    lock_wait: float = DEFAULT_LOCK_WAIT,
) -> Iterator[Verdict]:
    """One verdict per (session, target), in input order; `summary` collects the counts.
    A store another process holds locked is waited for `lock_wait` seconds."""
    summary = summary if summary is not None else ReplaySummary()
    reader = SessionReader(lock_wait)
    checked = 0
    for path, name in _inputs(paths, fmt, summary):
        for session in _sessions(path, name, reader, summary):
            checked += 1
            if checked % _FRESH_ADAPTER_EVERY == 0:
                targets = [_fresh(t) for t in targets]
            for t in targets:
                v = check_session(
                    session,
                    t,
                    reader.tools,
                    source_provider=source_provider,
                    strict=strict,
                    critical_key=critical_key,
                )
                summary.add(v)
                yield v
        summary.problems.extend(reader.problems)
        reader.problems.clear()


def _fresh(t: Target) -> Target:
    try:
        return Target(t.label, type(t.adapter)(), t.model)
    except TypeError:  # an instance whose class needs arguments: keep it
        return t
