"""A third-party-style Gemini adapter that mints a fresh canonical id for every id-less
functionCall on every parse, as an adapter written from canonical §6.2 alone may: the spec
asks for a bijective per-session map, not for the same id across independent parses.

It overrides only the reference adapter's id minting (`call_id_from_wire`); ids the API
issued (`functionCall.id`) are still looked up in the session map. `turnspec conform`
passes it on TC302, TC303, TC606 and TC607 and warns on TC306 (advisory determinism).
"""

from __future__ import annotations

from typing import Any, ClassVar

from conformance.adapters.base import new_tool_id
from conformance.adapters.gemini import NO_ID, GeminiAdapter


class MintingGeminiAdapter(GeminiAdapter):
    """The reference Gemini adapter, minting `tu_<fresh ULID>` for each id-less call."""

    name: ClassVar[str] = "gemini-minting"

    def call_id_from_wire(self, sid: str, wire_id: Any, *key: Any) -> str:
        if isinstance(wire_id, str) and wire_id:
            return self.tool_id_map(sid).canonical_for(wire_id)
        cid = new_tool_id()
        self.tool_id_map(sid).bind(cid, NO_ID + cid)
        return cid
