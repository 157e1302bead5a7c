"""Generation speed: documents per second, for `nox -s bench`.

Two figures: the seeded sampler (bulk generation, the >= 1,000 messages/s target) and
the hypothesis strategy driven by hypothesis' own engine (what property tests pay per
example, shrinking machinery included). Every sampled document is also checked by the
compiled validator, so the figure is of documents known to be valid.

    python -m conformance.strategies.bench [seconds]
"""

from __future__ import annotations

import contextlib
import random
import sys
import time
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings

from ..core.schema_validation import SchemaValidator
from ..core.schemas import schema_set
from .compiler import Compiler
from .sampler import Sampler


def sampler_rate(seconds: float, root: str = "message.json", version: str = "v1") -> float:
    schemas = schema_set("canonical", version)
    sampler = Sampler(Compiler(schemas))
    validator = SchemaValidator(schemas, root)
    r = random.Random(7)
    n, t0 = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - t0) < seconds:
        for _ in range(100):
            doc = sampler.sample(root, r)
            n += 1
            if not validator.is_valid(doc):
                raise AssertionError(f"sampler produced an invalid document: {validator.errors(doc)[:3]}")
    return n / elapsed


def hypothesis_rate(seconds: float, root: str = "message.json", version: str = "v1") -> float:
    strategy = Compiler(schema_set("canonical", version)).valid(root)
    count = [0]
    t0 = time.perf_counter()

    @settings(max_examples=10**6, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def draw(doc: Any) -> None:
        count[0] += 1
        if time.perf_counter() - t0 > seconds:
            raise _Done

    with contextlib.suppress(_Done):
        draw()
    return count[0] / (time.perf_counter() - t0)


class _Done(Exception):
    pass


def run(seconds: float = 3.0, root: str = "message.json") -> dict[str, float]:
    """Documents per second for `root`, by the sampler and by hypothesis."""
    return {
        "sampler_docs_per_s": sampler_rate(seconds, root),
        "hypothesis_docs_per_s": hypothesis_rate(seconds, root),
    }


if __name__ == "__main__":
    secs = float(sys.argv[1]) if len(sys.argv) > 1 else 3.0
    for name, rate in run(secs).items():
        sys.stdout.write(f"{name}: {rate:,.0f}\n")
