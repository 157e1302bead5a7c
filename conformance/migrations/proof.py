"""The fuzz proof of a migration.

For documents generated from revision N's schema (with the string constants and field
names of revision N+1 mixed in, so content N tolerated and N+1 gives a meaning to is
generated too), every migration must:

1. leave its argument untouched (it is a pure function);
2. either refuse the document (a located `MigrationError`) or produce one that is valid
   under revision N+1's schema;
3. keep the rule engine's verdict (its errors, by rule and pointer), where the format
   has one;
4. when declared lossless, come back through `backward` to exactly the original
   (compared as canonical JSON text, so 1 and 1.0 or key sets must match).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis import strategies as st

from ..core.schema_validation import SchemaValidator
from ..core.schemas import schema_set
from .registry import Migration, MigrationError

Verdict = Callable[[int, Any], frozenset[tuple[str, str]]]


@dataclass(frozen=True)
class ProofSpec:
    """How to prove the migrations of one format: which schema file documents are
    generated from and validated against, and the rule engine's verdict, if any."""

    format: str
    root: str
    verdict: Verdict | None = None
    detect: Callable[[Any], int] | None = None
    """When given, only documents this detector reads as revision N are revision-N
    documents (a gpt2099 revision-1 frame that already says `inherited` is read as 2)."""


def canonical_verdict(revision: int, doc: Any) -> frozenset[tuple[str, str]]:
    """The errors a reader of schema revision `revision` reports for one message."""
    # function-level imports: the proof loads a format's checker only when it judges that format
    from ..core.findings import Severity
    from ..core.jsonio import Record
    from ..formats.base import Options
    from ..formats.canonical.checker import CanonicalRun

    run = _runs.get(revision)
    if run is None:
        run = _runs[revision] = CanonicalRun(Options(), revisions=[f"v{revision}"])
    run.reset()
    found = run.check_message(Record("<doc>", 1, "", doc, 0))
    return frozenset((f.rule, f.pointer) for f in found if f.severity == Severity.ERROR)


_runs: dict[int, Any] = {}


def _gpt2099_detect(doc: Any) -> int:
    from . import gpt2099  # function-level import: the gpt2099 migration loads only for its proof

    return gpt2099.detect(doc)


def gpt2099_verdict(revision: int, doc: Any) -> frozenset[tuple[str, str]]:
    """The errors a gpt2099 reader of schema revision `revision` reports for a one-turn thread."""
    # function-level imports: the proof loads a format's checker only when it judges that format
    from ..core.findings import Severity
    from ..core.jsonio import Record
    from ..formats.base import Options
    from ..formats.gpt2099.checker import Gpt2099Run

    run = Gpt2099Run(Options(), version=f"v{revision}")
    found = run.check_thread([Record("<doc>", 1, "", doc, 0)])
    return frozenset((f.rule, f.pointer) for f in found if f.severity == Severity.ERROR)


SPECS: dict[str, ProofSpec] = {
    "canonical": ProofSpec("canonical", "message.json", canonical_verdict),
    # stored turns are gpt.turn frames; thread records have their own spec below
    "gpt2099": ProofSpec("gpt2099", "turn-frame.json", gpt2099_verdict, _gpt2099_detect),
}
GPT2099_RECORDS = ProofSpec("gpt2099", "thread-record.json", gpt2099_verdict, _gpt2099_detect)


def _json(doc: Any) -> bytes:
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)


def check(m: Migration, spec: ProofSpec, doc: Any) -> str | None:
    """Why `doc` disproves `m` (None when it does not). Refusals are not disproofs."""
    before = _json(doc)
    try:
        out = m.forward(doc)
    except MigrationError:
        return None if _json(doc) == before else "forward mutated its argument before refusing"
    if _json(doc) != before:
        return "forward mutated its argument"
    target = _validator(spec.format, m.target, spec.root)
    if not target.is_valid(out):
        errors = target.errors(out)
        first = f"{errors[0].pointer} {errors[0].message}" if errors else ""
        return f"migrated document invalid under revision {m.target}: {first}"
    if spec.verdict is not None:
        old, new = spec.verdict(m.source, doc), spec.verdict(m.target, out)
        if old != new:
            gone, added = sorted(old - new), sorted(new - old)
            return f"rule verdict changed: only before {gone}, only after {added}"
    if m.lossless:
        assert m.backward is not None
        snapshot = _json(out)
        back = m.backward(out)
        if _json(out) != snapshot:
            return "backward mutated its argument"
        if _json(back) != before:
            return "backward(forward(doc)) differs from doc"
    return None


_validators: dict[tuple[str, int, str], SchemaValidator] = {}


def _validator(fmt: str, revision: int, root: str) -> SchemaValidator:
    key = (fmt, revision, root)
    if key not in _validators:
        _validators[key] = SchemaValidator(schema_set(fmt, f"v{revision}"), root)
    return _validators[key]


def source_documents(m: Migration, spec: ProofSpec) -> st.SearchStrategy[Any]:
    """Documents valid under revision N, with revision N+1's vocabulary mixed in."""
    from ..strategies.compiler import Compiler, dictionary_of  # function-level: hypothesis loads only to prove

    source = schema_set(m.format, f"v{m.source}")
    target = schema_set(m.format, f"v{m.target}")
    return Compiler(source, dictionary=dictionary_of(target)).valid(spec.root)


@dataclass
class ProofResult:
    migration: Migration
    examples: int
    refused: int
    counterexample: Any = None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None


def prove(
    m: Migration,
    spec: ProofSpec | None = None,
    *,
    max_examples: int = 200,
    shrink: bool = True,
    derandomize: bool = False,
) -> ProofResult:
    """Run the proof; a failure comes back shrunk to a small counterexample.

    `derandomize=True` draws the same documents on every run (hypothesis derives the seed
    from the test): what a test that expects the proof to *fail* needs, so that it cannot
    pass or fail by the luck of a random seed."""
    spec = spec or SPECS[m.format]
    result = ProofResult(m, 0, 0)
    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]

    @settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        derandomize=derandomize,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )
    @given(source_documents(m, spec))
    def run(doc: Any) -> None:
        if spec.detect is not None:
            assume(spec.detect(doc) == m.source)
        result.examples += 1
        try:
            m.forward(copy.deepcopy(doc))
        except MigrationError:
            result.refused += 1
        reason = check(m, spec, doc)
        if reason is not None:
            result.counterexample, result.reason = doc, reason
            raise AssertionError(reason)

    with contextlib.suppress(AssertionError):
        run()
    return result
