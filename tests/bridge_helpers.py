"""What the bridge tests (pydantic-ai and LangChain bridges) share: a canonical message for
a session, and the checks a `turnspec conform` JSON report failed for one adapter."""

from __future__ import annotations


def canonical_msg(
    session_id: str, i: int, role: str, content: list[dict[str, object]], meta: dict[str, object] | None = None
) -> dict[str, object]:
    return {
        "id": f"01KR3QB2D2000000000000000{i}",
        "session_id": session_id,
        "role": role,
        "content": content,
        "metadata": meta or {},
        "created_at": "2026-01-01T00:00:00.000000Z",
        "schema_version": 1,
    }


def failed_rules(report: object, adapter: str) -> set[str]:
    """The rule of every outcome in `report` (at any depth) that `adapter` failed."""
    found: set[str] = set()

    def walk(v: object) -> None:
        if isinstance(v, dict):
            if v.get("adapter") == adapter and v.get("status") == "fail" and isinstance(v.get("rule"), str):
                found.add(v["rule"])
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(report)
    return found
