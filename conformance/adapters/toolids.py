"""Tool-call ids across providers (spec §6.1, §6.2): the canonical `tu_<ULID>` form and the
per-session bidirectional map to each provider's own ids. ULIDs come from `conformance.core.ids`,
the project's one source."""

from __future__ import annotations

from collections.abc import Callable

from ..core import ids


def new_ulid() -> str:
    """A fresh ULID (the clock and OS randomness); see `conformance.core.ids.fresh`."""
    return ids.fresh()


def new_tool_id() -> str:
    """A canonical tool call id `tu_<ULID>` (spec §6.2)."""
    return ids.fresh_tool_id()


def is_canonical_tool_id(value: str) -> bool:
    return ids.is_tool_id(value)


class ToolIdMap:
    """The per-session bidirectional map canonical `tu_<ULID>` <-> provider tool id (spec §6.2).

    Injective both ways by construction: `bind` refuses a pair that would give a provider id
    two canonical ids or the reverse. `new_provider_id` makes ids that satisfy the provider's
    rules when a canonical id is sent to this provider for the first time.
    """

    def __init__(self, provider: str, new_provider_id: Callable[[], str]) -> None:
        self.provider = provider
        self._new_provider_id = new_provider_id
        self._to_provider: dict[str, str] = {}
        self._to_canonical: dict[str, str] = {}

    def bind(self, canonical_id: str, provider_id: str) -> None:
        have_p = self._to_provider.get(canonical_id)
        have_c = self._to_canonical.get(provider_id)
        if have_p == provider_id and have_c == canonical_id:
            return
        if have_p is not None or have_c is not None:
            raise ValueError(f"{self.provider}: cannot bind {canonical_id} <-> {provider_id}: one side is mapped")
        self._to_provider[canonical_id] = provider_id
        self._to_canonical[provider_id] = canonical_id

    def canonical_for(self, provider_id: str) -> str:
        """Parsing wire -> canonical: look up the canonical id, creating one on first sight."""
        found = self._to_canonical.get(provider_id)
        if found is None:
            found = new_tool_id()
            self.bind(found, provider_id)
        return found

    def provider_for(self, canonical_id: str) -> str:
        """Serializing canonical -> wire: look up the provider id, generating one on first use."""
        found = self._to_provider.get(canonical_id)
        if found is None:
            found = self._new_provider_id()
            while found in self._to_canonical:
                found = self._new_provider_id()
            self.bind(canonical_id, found)
        return found

    def get_provider(self, canonical_id: str) -> str | None:
        return self._to_provider.get(canonical_id)

    def get_canonical(self, provider_id: str) -> str | None:
        return self._to_canonical.get(provider_id)

    def pairs(self) -> list[tuple[str, str]]:
        """Every (canonical, provider) pair, for inspection by the suite."""
        return list(self._to_provider.items())
