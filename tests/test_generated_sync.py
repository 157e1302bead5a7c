"""generated/ is exactly what the pinned generator writes from schemas/ (CI's proof)."""

from __future__ import annotations

from conformance.schema import codegen


def test_generated_models_match_a_fresh_generation() -> None:
    assert codegen.check() == []


def test_every_schema_set_has_models() -> None:
    for folder in codegen.schema_sets():
        assert (codegen.GENERATED / codegen.PACKAGE / folder.parent.name / folder.name / "__init__.py").is_file()
