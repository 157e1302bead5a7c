"""TC001: the declared capabilities validate and the protocol's attributes are there."""

from __future__ import annotations

from collections.abc import Iterator

from .. import rules as R
from ..outcome import Outcome
from .common import Env, check, o

# the protocol's methods; an object lacking one is not an adapter (seed 003 §7.1)
METHODS = (
    "to_wire",
    "from_wire_response",
    "from_wire_request",
    "stream_response",
    "estimate_input_tokens",
    "tool_id_map",
)


@check(R.CAPABILITIES)
def capabilities(env: Env) -> Iterator[Outcome]:
    v = env.validator("adapter-capabilities.json")
    for s in env.subjects:
        a = s.adapter
        caps = dict(getattr(a, "capabilities", {}) or {})
        errs = v.errors(caps) if not v.is_valid(caps) else []
        problems = [f"capabilities{e.pointer}: {e.message}" for e in errs]
        for attr in ("name", "provider", "wire_api"):
            if not isinstance(getattr(a, attr, None), str) or not getattr(a, attr):
                problems.append(f"adapter.{attr} is not a non-empty string")
        if not hasattr(getattr(a, "provider_tool_id", None), "match"):
            problems.append("adapter.provider_tool_id is not a compiled regex")
        # TC001 inspects an object it does not trust, so it looks before calling
        missing = [m for m in METHODS if not callable(getattr(a, m, None))]
        if missing:
            problems.append(f"adapter lacks the protocol's {', '.join(missing)}")
        yield o(R.CAPABILITIES, s, "fail" if problems else "pass", "capabilities", "; ".join(problems))
