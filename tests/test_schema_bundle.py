"""Bundled schemas (conformance.schema_bundle): one self-contained 2020-12 document per
revision that every conforming validator reads the same as the schema files."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings

from conformance.schema_bundle import bundle, default_revision, families
from conformance.schema_validation import SchemaValidator
from conformance.schemas import schema_set, versions
from conformance.strategies import invalid_documents, sample


@pytest.mark.parametrize("fmt", ["canonical", "gpt2099", "chibi", "geppetto"])
def test_every_family_bundles_every_file_with_its_id(fmt: str) -> None:
    assert fmt in families()
    for rev in versions(fmt):
        b = bundle(fmt, rev)
        s = schema_set(fmt, rev)
        assert set(b["$defs"]) == set(s.documents)
        for name, doc in b["$defs"].items():
            assert doc["$id"] == s[name]["$id"]
        assert b["$id"].endswith(f"/{fmt}/{rev}/bundle.json")
        json.dumps(b)  # plain JSON


def test_canonical_default_is_the_published_revision() -> None:
    assert default_revision("canonical") == "v1"
    assert bundle()["$defs"]["message.json"]["$id"].endswith("/canonical/v1/message.json")


def _files_validator() -> SchemaValidator:
    return SchemaValidator(schema_set("canonical", "v1"), "message.json")


def test_the_bundle_alone_validates_like_the_files_valid_corpus() -> None:
    b = bundle("canonical", "v1")
    stock = jsonschema.Draft202012Validator(b)  # no registry: the bundle must be self-contained
    rs = jsonschema_rs.validator_for(b)
    docs = sample("message.json", 150, seed=11)
    assert docs
    for d in docs:
        assert stock.is_valid(d) and rs.is_valid(d), d


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bad=invalid_documents("message.json"))
def test_the_bundle_rejects_what_the_files_reject(bad: Any) -> None:
    b = bundle("canonical", "v1")
    doc = bad.document
    assert not jsonschema.Draft202012Validator(b).is_valid(doc)
    assert not jsonschema_rs.validator_for(b).is_valid(doc)
