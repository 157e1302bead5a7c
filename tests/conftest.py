from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
SAMPLES = SHARED / "samples"
REFERENCE = SHARED / "reference"


@pytest.fixture
def samples() -> Path:
    """../shared/samples (real data no one here wrote); skips when absent."""
    if not SAMPLES.is_dir():
        pytest.skip(f"real samples not present at {SAMPLES}")
    return SAMPLES


@pytest.fixture(autouse=True, scope="session")
def _wire_records_for_tests():
    """Stand-in WireApi records and request schemas for APIs the registry does not hold yet.

    The real records (conformance/wire/<api>.py) and schemas (schemas/wire/<api>/) win
    when present: only missing names and missing schema folders are filled in.
    """
    from wirefixtures import RECORDS, SCHEMAS

    from conformance.wire import registry
    from conformance.wire import schemas as wire_schemas

    have = {a.name for a in registry.APIS}
    extra = tuple(r for r in RECORDS if r.name not in have)
    real_folder = wire_schemas.folder_for

    def folder_for(api):
        real = real_folder(api)
        stand_in = SCHEMAS / api.schema_dir
        return real if real.is_dir() or not stand_in.is_dir() else stand_in

    with pytest.MonkeyPatch.context() as mp:
        # most specific first: the registry's own order, then the stand-ins (count_tokens before messages)
        mp.setattr(registry, "APIS", tuple(registry.APIS) + tuple(sorted(extra, key=lambda r: r.chat)))
        mp.setattr(wire_schemas, "folder_for", folder_for)
        yield
