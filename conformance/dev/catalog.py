"""The ids turnspec knows already (a scaffolding command refuses to declare one twice)."""

from __future__ import annotations

# the one import of the cross-domain rule catalogue: where it lives may change, this line with it
from ..catalogue import every_rule


def known_ids() -> set[str]:
    """Every rule and check id of every catalogue (`turnspec rules`)."""
    return {info.id for info in every_rule()}


def wire_names() -> set[str]:
    """Every wire record's name, and the former names `registry.RENAMED` still reads."""
    from ..wire import registry  # loaded only when new-wire-api runs

    return {api.name for api in registry.APIS} | set(registry.RENAMED)
