"""Bundled schemas (conformance.schema.bundle): one self-contained 2020-12 document per
revision that every conforming validator reads the same as the schema files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import pytest
from hypothesis import HealthCheck, given, settings

from conformance.cli import main
from conformance.core.schema_validation import SchemaValidator
from conformance.core.schemas import schema_set, versions
from conformance.schema.bundle import bundle, default_revision, families
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


# every keyword of the JSON Schema 2020-12 vocabularies (Core §8, §10, §11; Validation
# §6-§9): core, applicator, unevaluated, validation, meta-data, format-annotation, content
VOCABULARY_2020_12 = frozenset({
    "$schema", "$id", "$ref", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment", "$defs",
    "prefixItems", "items", "contains", "additionalProperties", "properties", "patternProperties",
    "dependentSchemas", "propertyNames", "if", "then", "else", "allOf", "anyOf", "oneOf", "not",
    "unevaluatedItems", "unevaluatedProperties",
    "type", "const", "enum", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains",
    "maxProperties", "minProperties", "required", "dependentRequired",
    "title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
    "format", "contentEncoding", "contentMediaType", "contentSchema",
})  # fmt: skip
_ONE = {"items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema"}  # fmt: skip
_MANY = {"prefixItems", "allOf", "anyOf", "oneOf"}
_BY_NAME = {"$defs", "properties", "patternProperties", "dependentSchemas"}


def _keywords(schema: Any, at: str = "#") -> Iterator[tuple[str, str]]:
    """(keyword, pointer) for every keyword at every schema position of `schema`."""
    if not isinstance(schema, dict):
        return
    for key, value in schema.items():
        yield key, at
        if key in _ONE:
            yield from _keywords(value, f"{at}/{key}")
        elif key in _MANY and isinstance(value, list):
            for i, sub in enumerate(value):
                yield from _keywords(sub, f"{at}/{key}/{i}")
        elif key in _BY_NAME and isinstance(value, dict):
            for name, sub in value.items():
                yield from _keywords(sub, f"{at}/{key}/{name}")


def _revisions() -> list[tuple[str, str]]:
    return [(fmt, rev) for fmt in families() for rev in versions(fmt)]


@pytest.mark.parametrize(("fmt", "rev"), _revisions())
def test_the_bundle_uses_only_2020_12_keywords(fmt: str, rev: str) -> None:
    used = list(_keywords(bundle(fmt, rev)))
    assert len({k for k, _ in used}) > 10  # the walk reaches into the embedded files
    foreign = sorted({(k, at) for k, at in used if k not in VOCABULARY_2020_12 and not k.startswith("x-")})
    assert foreign == [], foreign[:5]


def test_the_walk_finds_a_foreign_keyword_deep_in_a_schema() -> None:
    planted = {"$defs": {"a": {"properties": {"discriminator": {"oneOf": [{"discriminator": {}}]}}}}}
    assert ("discriminator", "#/$defs/a/properties/discriminator/oneOf/0") in set(_keywords(planted))
    assert ("discriminator", "#/$defs/a/properties") not in set(_keywords(planted))  # a property's name


def test_the_source_schemas_keep_their_discriminator() -> None:
    # schemas/ stays the single source: only the bundle leaves the keyword out
    assert "discriminator" in schema_set("canonical", "v1")["known-content-block.json"]
    assert "discriminator" not in bundle("canonical", "v1")["$defs"]["known-content-block.json"]


NODE = shutil.which("node")
AJV_CHECK = """
const Ajv2020 = require("ajv/dist/2020");
const fs = require("fs");
for (const f of process.argv.slice(1)) {
  try { new Ajv2020().compile(JSON.parse(fs.readFileSync(f, "utf8"))); }
  catch (e) { console.log(f + ": " + e.message); process.exitCode = 1; }
}
"""


def _node_env() -> dict[str, str]:
    # TURNSPEC_AJV_NODE_PATH: a node_modules folder holding ajv (npm install --prefix DIR ajv@8)
    extra = os.environ.get("TURNSPEC_AJV_NODE_PATH", "")
    return {**os.environ, "NODE_PATH": os.pathsep.join(p for p in (extra, os.environ.get("NODE_PATH", "")) if p)}


def _ajv_missing() -> str | None:
    if NODE is None:
        return "node is not installed"
    found = subprocess.run(
        [NODE, "-e", 'require.resolve("ajv/dist/2020")'], env=_node_env(), capture_output=True, timeout=60
    )
    if found.returncode != 0:
        return (
            "ajv 8 is not installed for node (npm install --prefix DIR ajv@8; TURNSPEC_AJV_NODE_PATH=DIR/node_modules)"
        )
    return None


def test_the_exported_bundle_compiles_under_ajv_strict_defaults(tmp_path: Path) -> None:
    missing = _ajv_missing()
    if missing is not None:
        pytest.skip(missing)
    assert NODE is not None
    files = []
    for fmt, rev in _revisions():
        out = tmp_path / f"{fmt}-{rev}.json"
        assert main(["schema", "export", "--bundle", "--format", fmt, "--revision", rev, str(out)]) == 0
        files.append(str(out))
    done = subprocess.run([NODE, "-e", AJV_CHECK, *files], env=_node_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
