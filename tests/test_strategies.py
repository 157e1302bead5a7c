"""Properties of the schema-compiled strategies (bounded: the file runs in seconds).

- every valid document passes both validators and round-trips through the generated
  models;
- every targeted invalid document is rejected, at the labelled pointer, by the
  validator and by the models;
- every generated conversation passes the whole rule engine with no finding;
- unsupported keywords fail at build time; the keywords the project's schemas do not
  use yet (prefixItems, dependentRequired, uniqueItems, multipleOf, format, ...) are
  honoured, checked against stock python-jsonschema.
"""

from __future__ import annotations

import datetime as dt
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from conformance.api import validate
from conformance.core.schema_validation import SchemaValidator, oracle_for
from conformance.core.schemas import SchemaSet, schema_set, versions
from conformance.formats.base import Options
from conformance.strategies import (
    UnsupportedSchema,
    conversations,
    documents,
    invalid_documents,
    sample,
)
from conformance.strategies.compiler import Compiler
from conformance.strategies.ir import json_equal
from conformance.strategies.models import error_pointers, model_for
from conformance.strategies.mutations import Mutator

FAST = settings(max_examples=40, deadline=None, database=None, suppress_health_check=list(HealthCheck))
ROOTS = [
    "message.json",
    "tool-definition.json",
    "stream-event.json",
    "pricing-table.json",
    "adapter-capabilities.json",
]
VERSIONS = versions("canonical")


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("root", ROOTS)
def test_valid_documents_pass_validator_and_round_trip_models(root: str, version: str) -> None:
    schemas = schema_set("canonical", version)
    validator = SchemaValidator(schemas, root)
    model = model_for(schemas, root)

    @FAST
    @given(documents(root, version=version))
    def check(doc: Any) -> None:
        assert validator.is_valid(doc), validator.errors(doc)
        assert validator.oracle_is_valid(doc)
        obj = model.validate_python(doc)
        # exclude_unset: defaults the document left out stay out. json_equal: a JSON
        # number field given an integer (confidence: 1) dumps as 1.0, the same JSON number.
        assert json_equal(model.dump_python(obj, mode="json", exclude_unset=True), doc)

    check()


def _model_pointers(model: Any, doc: Any) -> list[str] | None:
    try:
        model.validate_python(doc)
    except ValidationError as exc:
        return error_pointers(exc, doc)
    return None


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("root", ["message.json", "tool-definition.json", "stream-event.json"])
def test_invalid_documents_rejected_at_labelled_pointer(root: str, version: str) -> None:
    schemas = schema_set("canonical", version)
    validator = SchemaValidator(schemas, root)
    model = model_for(schemas, root)

    @settings(FAST, max_examples=60)
    @given(invalid_documents(root, version=version))
    def check(inv: Any) -> None:
        doc = inv.document
        assert not validator.is_valid(doc)
        assert not validator.oracle_is_valid(doc)
        where = {e.pointer for e in validator.errors(doc)}
        assert where == {inv.pointer} or where == {inv.ambiguous}, (inv, validator.errors(doc))
        pointers = _model_pointers(model, doc)
        assert pointers is not None, f"models accepted {inv}"
        if inv.keyword == "discriminator":
            # a smart (non-tagged) pydantic union reports each branch's complaint below
            # the block, never the block itself
            assert any(p == inv.pointer or p.startswith(inv.pointer + "/") for p in pointers), (
                inv,
                pointers,
            )
        else:
            assert inv.pointer in pointers, (inv, pointers)

    check()


def test_invalid_catalogue_breaks_each_kind_of_constraint() -> None:
    # each kind of break the message schema allows is actually drawn
    seen: set[str] = set()

    @settings(FAST, max_examples=300, phases=[Phase.generate], derandomize=True)
    @given(invalid_documents("message.json"))
    def check(inv: Any) -> None:
        seen.add(inv.keyword)

    check()
    assert seen >= {
        "required",
        "type",
        "enum",
        "minimum",  # schema_version is a bound (const would generate a Literal pydantic lets `true` through)
        "maximum",
        # no "additionalProperties": issue 16 opened messages, blocks and usage to
        # additive fields (§10.2/§10.3), so message.json has no closed object left
        "minLength",
        "pattern",
        "discriminator",
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_conversations_satisfy_the_rule_engine(tmp_path: Path, version: str) -> None:
    @settings(FAST, max_examples=25)
    @given(conversations(version=version))
    def check(session: list[dict[str, Any]]) -> None:
        path = tmp_path / "session.jsonl"
        path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in session))
        report = validate([path], Options(revisions=(version,)))  # v2 is opt-in (issue 9)
        assert report.findings == [], [f.format() for f in report.findings]
        roles = [m["role"] for m in session]
        assert "user" in roles and "assistant" in roles

    check()


def test_conversations_respect_block_restriction() -> None:
    @settings(FAST, max_examples=20)
    @given(conversations(blocks={"text"}))
    def check(session: list[dict[str, Any]]) -> None:
        kinds = {b["type"] for m in session for b in m["content"]}
        assert kinds <= {"text"}
        assert all(m["role"] != "tool" for m in session)

    check()


def test_conversations_pair_tool_calls() -> None:
    calls = [0]

    @settings(FAST, max_examples=30)
    @given(conversations(max_tool_calls=2))
    def check(session: list[dict[str, Any]]) -> None:
        uses = [b["id"] for m in session for b in m["content"] if b["type"] == "tool_use"]
        answers = [m["metadata"]["parent_tool_use_id"] for m in session if m["role"] == "tool"]
        assert sorted(uses) == sorted(answers)
        calls[0] += len(uses)
        ids = [m["id"] for m in session]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)

    check()
    assert calls[0] > 0


# -- keywords beyond the project's current schemas -------------------------------------

BASE = "https://turnspec.dev/schemas/test/v1/"


def _set(**docs: dict[str, Any]) -> SchemaSet:
    named = {}
    for name, doc in docs.items():
        fname = name.replace("_", "-") + ".json"
        named[fname] = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": BASE + fname,
            **doc,
        }
    return SchemaSet("test", "v1", Path(), named)


KITCHEN = _set(
    root={
        "type": "object",
        "properties": {
            "pair": {
                "type": "array",
                "prefixItems": [{"type": "integer"}, {"type": "string", "maxLength": 3}],
                "items": False,
                "minItems": 1,
            },
            "tags": {
                "type": "array",
                "items": {"enum": ["a", "b", "c", "d"]},
                "uniqueItems": True,
                "maxItems": 3,
            },
            "step": {"type": "integer", "multipleOf": 5, "exclusiveMinimum": 0, "maximum": 50},
            "ratio": {"type": "number", "exclusiveMaximum": 1, "minimum": 0},
            "when": {"type": "string", "format": "date-time"},
            "day": {"type": "string", "format": "date"},
            "uid": {"type": "string", "format": "uuid"},
            "mail": {"type": "string", "format": "email"},
            "card": {"type": "string"},
            "cvc": {"type": "string", "pattern": "^[0-9]{3}$"},
            "kind": {"$ref": "shapes.json"},
            "labels": {
                "type": "object",
                "propertyNames": {"pattern": "^[a-z]+$"},
                "additionalProperties": {"type": "boolean"},
            },
        },
        "required": ["pair", "kind", "tags"],
        "dependentRequired": {"card": ["cvc"]},
        "additionalProperties": False,
    },
    shapes={
        "oneOf": [
            {
                "type": "object",
                "properties": {"type": {"const": "circle"}, "r": {"type": "number", "minimum": 0}},
                "required": ["type", "r"],
                "additionalProperties": False,
            },
            {
                "type": "object",
                "properties": {
                    "type": {"const": "square"},
                    "side": {"type": "integer", "minimum": 1},
                },
                "required": ["type", "side"],
                "additionalProperties": False,
            },
        ],
        "discriminator": {
            "propertyName": "type",
            "mapping": {"circle": "#/oneOf/0", "square": "#/oneOf/1"},
        },
    },
)


def _stock(schemas: SchemaSet, root: str) -> Any:
    # the reference validator with ECMA patterns, and format assertions on
    return oracle_for(schemas[root], schemas, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)


def _kitchen_errors(doc: Any) -> list[str]:
    # python-jsonschema checks date-time only with an extra package: check it here
    errors = [e.message for e in _stock(KITCHEN, "root.json").iter_errors(doc)]
    if isinstance(doc, dict) and isinstance(doc.get("when"), str):
        try:
            dt.datetime.fromisoformat(doc["when"].replace("Z", "+00:00"))
        except ValueError:
            errors.append(f"when: {doc['when']!r} is not a date-time")
    return errors


def _locations(errors: Any) -> set[str]:
    out: set[str] = set()
    for e in errors:
        out.add("/" + "/".join(map(str, e.absolute_path)) if e.absolute_path else "")
        out |= _locations(e.context or ())
    return out


def test_kitchen_sink_keywords_generate_valid_data() -> None:
    @settings(FAST, max_examples=150)
    @given(Compiler(KITCHEN).valid("root.json"))
    def check(doc: Any) -> None:
        errors = _kitchen_errors(doc)
        assert not errors, (doc, errors)

    check()


def test_kitchen_sink_mutations_are_rejected_where_labelled() -> None:
    stock = _stock(KITCHEN, "root.json")
    seen: set[str] = set()
    wanted = {"items", "maxLength", "minimum", "exclusiveMinimum", "exclusiveMaximum", "uniqueItems",
              "discriminator", "minItems", "pattern", "dependentRequired"}  # fmt: skip

    def check(inv: Any) -> None:
        seen.add(inv.keyword)
        errors = list(stock.iter_errors(inv.document))
        assert errors, inv
        where = _locations(errors)  # union errors hold their branches' errors as context
        # python-jsonschema locates missing/unknown keys at their object
        parent = inv.pointer.rsplit("/", 1)[0] if inv.keyword in ("required", "additionalProperties") else inv.pointer
        assert where & {inv.pointer, parent}, (inv, [e.message for e in errors])

    # every labelled kind must be reachable: a run of 400 draws reaches them all almost
    # always, and a fixed list of seeds (each run deterministic) makes "almost" certain
    for n in range(4):
        strategy = Mutator(Compiler(KITCHEN), "root.json").strategy()
        seed(n)(settings(FAST, max_examples=400)(given(strategy)(check)))()
        if seen >= wanted:
            break
    assert seen >= wanted, wanted - seen


@pytest.mark.parametrize(
    ("keyword", "value"),
    [
        ("not", {"type": "string"}),
        ("if", {"type": "string"}),
        ("unevaluatedProperties", False),
        ("patternProperties", {"^x": {}}),
        ("contains", {"type": "string"}),
        ("dependentSchemas", {"a": {}}),
        ("$dynamicRef", "#meta"),
        ("typo_keyword", 1),
    ],
)
def test_unsupported_keywords_fail_at_build_time(keyword: str, value: Any) -> None:
    s = _set(root={"type": "object", "properties": {"a": {keyword: value}}})
    with pytest.raises(UnsupportedSchema, match=keyword.replace("$", r"\$")):
        Compiler(s).valid("root.json")


def test_unresolvable_ref_fails_at_build_time() -> None:
    s = _set(root={"$ref": "https://elsewhere.example/x.json"})
    with pytest.raises(UnsupportedSchema, match="does not resolve offline"):
        Compiler(s).valid("root.json")


def test_recursion_is_bounded() -> None:
    def depth(blocks: list[dict[str, Any]]) -> int:
        return max((1 + depth(b["content"]) for b in blocks if b.get("type") == "tool_result"), default=0)

    @settings(FAST, max_examples=60)
    @given(Compiler(schema_set("canonical", "v1"), max_recursion=1).valid("message.json"))
    def check(doc: Any) -> None:
        assert depth(doc["content"]) <= 2

    check()


def test_schema_change_changes_the_data() -> None:
    # no hand edits: tightening the schema changes what the strategy draws
    base = schema_set("canonical", "v1")
    docs = {k: json.loads(json.dumps(v)) for k, v in base.documents.items()}
    docs["text-block.json"]["properties"]["text"]["maxLength"] = 3
    tight = SchemaSet("canonical", "v1", base.folder, docs)

    @settings(FAST, max_examples=60)
    @given(Compiler(tight).valid("text-block.json"))
    def check(block: dict[str, Any]) -> None:
        assert len(block["text"]) <= 3

    check()


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("root", ROOTS)
def test_sampler_documents_are_valid(root: str, version: str) -> None:
    schemas = schema_set("canonical", version)
    validator = SchemaValidator(schemas, root)
    model = model_for(schemas, root)
    docs = list(sample(root, 300, seed=3, version=version))
    assert docs == list(sample(root, 300, seed=3, version=version))  # seeded
    for doc in docs:
        assert validator.is_valid(doc), validator.errors(doc)
        assert json_equal(model.dump_python(model.validate_python(doc), mode="json", exclude_unset=True), doc)
    for doc in docs[:30]:
        assert validator.oracle_is_valid(doc)


def test_sampler_honours_kitchen_sink_keywords() -> None:
    from conformance.strategies.sampler import Sampler

    sampler, r = Sampler(Compiler(KITCHEN)), random.Random(1)
    for _ in range(300):
        doc = sampler.sample("root.json", r)
        assert not _kitchen_errors(doc), doc


def test_strategies_draw_quickly() -> None:
    # sanity bound, not the benchmark (nox -s bench): 50 messages well under a few seconds
    @settings(max_examples=50, deadline=None, database=None, phases=[Phase.generate])
    @given(st.data())
    def check(data: st.DataObject) -> None:
        data.draw(documents("message.json"))

    check()


def test_sampling_imports_no_hypothesis_and_the_package_keeps_its_functions() -> None:
    # `schema diff` and `strategies.sample` sample without hypothesis (a few hundred ms to
    # import); the lazy package still exports the same names, functions and not modules
    code = (
        "import sys\nimport conformance.strategies.sampler, conformance.strategies.plain\n"
        "from conformance.strategies import sample\nnext(iter(sample(n=1)))\n"
        "print('hypothesis' in sys.modules)\n"
        "import conformance.strategies.compiler, conformance.strategies.conversations, conformance.strategies.bench\n"
        "from conformance.strategies import bench, compiler, conversations, Compiler, Invalid, UnsupportedSchema\n"
        "print(all(callable(f) and not isinstance(f, type(sys)) for f in (bench, compiler, conversations)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"], done.stdout + done.stderr
