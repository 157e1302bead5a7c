"""TC001: the declared capabilities validate and the protocol's attributes are there.

The specs list two declarations: the adapter contract §3.4 has 12 fields, canonical §7.2
has 13 (it adds `supports_system_messages_in_list`). Either is valid; the outcome (and the
JSON report's `capability_declaration`) says which one the adapter follows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...adapters.protocol import capabilities_of
from ...wire import registry
from .. import rules as R
from ..outcome import Outcome
from .common import Env, check, outcome, wire_api_of

# the protocol's methods; an object lacking one is not an adapter (seed 003 §7.1)
METHODS = (
    "to_wire",
    "from_wire_response",
    "from_wire_request",
    "stream_response",
    "estimate_input_tokens",
    "tool_id_map",
)


# the field canonical §7.2 has and contract §3.4 does not
CANONICAL_ONLY = "supports_system_messages_in_list"
CANONICAL_DECLARATION = "canonical §7.2 (13 fields)"
CONTRACT_DECLARATION = "contract §3.4 (12 fields)"


def declaration_of(caps: Mapping[str, Any]) -> str:
    """Which of the two specs' capability lists a declaration follows."""
    return CANONICAL_DECLARATION if CANONICAL_ONLY in caps else CONTRACT_DECLARATION


@check(R.CAPABILITIES)
def capabilities(env: Env) -> Iterator[Outcome]:
    v = env.validator("adapter-capabilities.json")
    for s in env.subjects:
        a = s.adapter
        caps = capabilities_of(a)  # a mapping, or an AdapterCapabilities object (canonical §7.2)
        follows = declaration_of(caps)
        # the contract's 12 fields say nothing of list placement: validate them as the 13
        # with that one field filled in, so every other field is held to the schema
        full = caps if CANONICAL_ONLY in caps else {**caps, CANONICAL_ONLY: False}
        errs = v.errors(full) if not v.is_valid(full) else []
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
        named = getattr(a, "wire_api", None)
        if isinstance(named, str) and named and wire_api_of(a) is None:
            problems.append(unknown_record(named))
        msg = "; ".join(problems) if problems else f"follows {follows}{renamed_note(named)}"
        yield outcome(R.CAPABILITIES, s, "fail" if problems else "pass", "capabilities", msg)


def unknown_record(name: str) -> str:
    """Why a `wire_api` naming no record fails TC001: every record-driven check would skip
    ("a wire record" is what the adapter's `wire_api` names, contract §3.4 / the protocol)."""
    chat = ", ".join(a.name for a in registry.APIS if a.chat)
    return (
        f"adapter.wire_api {name!r} names no registered WireApi record (registered: {chat}): every check "
        "that reads bodies through the record would skip; name one of these, or register the API's record "
        "(conformance.wire.registry.register)"
    )


def renamed_note(name: object) -> str:
    """`; wire_api 'old' is the former name of 'new'` for a renamed record's old name, else ""."""
    if not isinstance(name, str) or registry.canonical_name(name) == name:
        return ""
    return (
        f"; wire_api {name!r} is the former name of {registry.canonical_name(name)!r} (deprecated: declare the new one)"
    )
