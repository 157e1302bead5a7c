"""The capability declaration of an adapter (canonical §7.2, contract §3.4), in any form.

This project's adapter protocol types `capabilities` as a mapping, while canonical §7.2 and
contract §3.4 write `AdapterCapabilities` as a class: an adapter written from the spec may
declare a dataclass, a pydantic model, a named tuple or any object with the fields as
attributes. Both are the same declaration; `declared` reads either, and every reader (the
suite's checks, the replay check, the strategies' `blocks_for`) goes through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CAPABILITY_FIELDS = (
    "supports_thinking",
    "supports_images",
    "supports_tools",
    "supports_system_prompt",
    "supports_structured_output",
    "supports_streaming",
    "supports_streaming_tool_calls",
    "supports_parallel_tool_calls",
    "supports_prompt_caching",
    "supports_system_messages_in_list",
    "max_context_tokens",
    "max_output_tokens",
    "accepted_image_media_types",
)
"""The fields of `AdapterCapabilities` (canonical §7.2; contract §3.4 lists all but
`supports_system_messages_in_list`), in the spec's order."""


def declared(caps: Any) -> dict[str, Any]:
    """A capability declaration as a dict: a mapping whole; an object's `CAPABILITY_FIELDS`
    and the fields its class declares (dataclass, pydantic model, named tuple), those it
    has; `{}` for None. What the values are is TC001's to judge, not this reader's."""
    if caps is None:
        return {}
    if isinstance(caps, Mapping):
        return dict(caps)
    names = list(CAPABILITY_FIELDS)
    own = getattr(caps, "__dataclass_fields__", None) or getattr(type(caps), "model_fields", None)
    names += [n for n in (own or getattr(caps, "_fields", None) or ()) if isinstance(n, str) and n not in names]
    missing = object()
    got = {n: getattr(caps, n, missing) for n in names}
    return {n: v for n, v in got.items() if v is not missing}
