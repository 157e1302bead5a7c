"""Recursive schemas through every schema tool (issue 41's sweep): `schema export`, the
bundle, `turnspec models` and the strategies (compiler, sampler, mutator).

A recursive `$ref` that descends into the document (a tree's children, two files or
definitions holding each other) is followed; a cycle that never descends (`"$ref": "#"`,
definitions aliasing each other) cannot be evaluated by any validator and is refused
with one line naming the file and pointer (exit 2), never a RecursionError or a hang.
`schema diff` has its own tests in tests/test_schemadiff.py.
"""

from __future__ import annotations

import importlib
import json
import random
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

import conformance.core.schemas as core_schemas
import conformance.schema.models as schema_models
from conformance.cli import main
from conformance.core.schema_validation import SchemaValidator
from conformance.core.schemas import load_set
from conformance.schema.bundle import bundle
from conformance.strategies.ir import UnevaluableSchema

BASE = "https://turnspec.dev/schemas"
FAMILIES: dict[str, dict[str, dict[str, Any]]] = {
    # no `$id`: the bundle must give the file one, or its "#" would mean the bundle
    "tree": {
        "tree.json": {
            "title": "Tree",
            "type": "object",
            "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
            "required": ["name"],
            "additionalProperties": False,
        }
    },
    "mutual": {
        "a.json": {
            "$id": f"{BASE}/mutual/v1/a.json",
            "title": "A",
            "type": "object",
            "properties": {"b": {"$ref": "b.json"}, "n": {"type": "integer"}},
            "additionalProperties": False,
        },
        "b.json": {
            "$id": f"{BASE}/mutual/v1/b.json",
            "title": "B",
            "type": "object",
            "properties": {"a": {"$ref": "a.json"}, "s": {"type": "string"}},
            "additionalProperties": False,
        },
    },
    "chain": {
        "chain.json": {
            "$id": f"{BASE}/chain/v1/chain.json",
            "title": "Chain",
            "$ref": "#/$defs/link",
            "$defs": {
                "link": {
                    "title": "Link",
                    "type": "object",
                    "properties": {
                        "v": {"type": "integer"},
                        "next": {"anyOf": [{"$ref": "#/$defs/link"}, {"type": "null"}]},
                    },
                    "required": ["v"],
                    "additionalProperties": False,
                }
            },
        }
    },
    "alias": {
        "x.json": {
            "$id": f"{BASE}/alias/v1/x.json",
            "title": "X",
            "$ref": "#/$defs/a",
            "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
        }
    },
}
# (family, root, a nested document the schema accepts, one it rejects deep inside)
NESTED = [
    ("tree", "tree.json", {"name": "r", "children": [{"name": "a", "children": [{"name": "b"}]}]},
     {"name": "r", "children": [{"name": "a", "children": [{"name": 5}]}]}),
    ("mutual", "a.json", {"n": 1, "b": {"s": "x", "a": {"n": 2, "b": {}}}}, {"n": 1, "b": {"a": {"b": {"s": 3}}}}),
    ("chain", "chain.json", {"v": 1, "next": {"v": 2, "next": {"v": 3, "next": None}}},
     {"v": 1, "next": {"v": 2, "next": {"v": "3"}}}),
]  # fmt: skip


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A schema tree of the recursive families, as the schema tools see `schemas/`."""
    root = tmp_path / "schemas"
    for fam, files in FAMILIES.items():
        (root / fam / "v1").mkdir(parents=True)
        for name, doc in files.items():
            (root / fam / "v1" / name).write_text(json.dumps(doc))
    monkeypatch.setattr(core_schemas, "schema_root", lambda: root)
    monkeypatch.setattr(schema_models, "schema_root", lambda: root)
    core_schemas.schema_set.cache_clear()
    yield root
    core_schemas.schema_set.cache_clear()


@pytest.mark.parametrize(("fam", "root", "good", "bad"), NESTED, ids=[n[0] for n in NESTED])
def test_export_and_bundle_keep_recursion(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fam: str, root: str, good: Any, bad: Any
) -> None:
    assert main(["schema", "export", "--format", fam, str(tmp_path / "out")]) == 0
    assert main(["schema", "export", "--format", fam, "--bundle", str(tmp_path / "b.json")]) == 0
    b = json.loads((tmp_path / "b.json").read_text())
    assert b == bundle(fam, "v1")
    import jsonschema_rs

    via_bundle = jsonschema_rs.validator_for({**b, "$ref": b["$defs"][root]["$id"]})
    via_files = SchemaValidator(load_set(tmp_path / "out"), root)
    for doc, ok in ((good, True), (bad, False)):
        assert via_files.is_valid(doc) is ok
        assert via_bundle.is_valid(doc) is ok, (fam, doc)


@pytest.mark.parametrize(("fam", "root", "good", "bad"), NESTED, ids=[n[0] for n in NESTED])
def test_models_follow_recursion(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], fam: str, root: str, good: Any, bad: Any
) -> None:
    for target in ("typeddict", "dataclasses", "msgspec"):
        assert main(["models", "--target", target, "--format", fam, str(tmp_path / f"{fam}_{target}")]) == 0
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module(f"{fam}_msgspec")
    finally:
        sys.path.remove(str(tmp_path))
    tp = getattr(mod, {"tree": "Tree", "mutual": "A", "chain": "Link"}[fam])  # chain.json is an alias of Link
    msgspec.json.decode(json.dumps(good), type=tp, dec_hook=mod.dec_hook)
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(json.dumps(bad), type=tp, dec_hook=mod.dec_hook)


@pytest.mark.parametrize("target", ["typeddict", "dataclasses", "msgspec", "pydantic", "typescript"])
def test_models_refuse_a_cycle_that_never_descends(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], target: str
) -> None:
    assert main(["models", "--target", target, "--format", "alias", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "internal error" not in err and "Recursion" not in err, err
    assert f"{tree / 'alias' / 'v1' / 'x.json'}: /$defs/b: $ref cycle" in err and "never descends" in err
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(("fam", "root", "good", "bad"), NESTED, ids=[n[0] for n in NESTED])
def test_strategies_generate_valid_recursive_documents(
    fam: str, root: str, good: Any, bad: Any, tmp_path: Path
) -> None:
    from hypothesis import HealthCheck, given, settings

    from conformance.strategies.compiler import Compiler
    from conformance.strategies.mutations import Mutator
    from conformance.strategies.plain import Plain
    from conformance.strategies.sampler import Sampler

    (tmp_path / fam).mkdir()
    for name, doc in FAMILIES[fam].items():
        (tmp_path / fam / name).write_text(json.dumps(doc))
    schemas = load_set(tmp_path / fam)
    validator = SchemaValidator(schemas, root)
    r = random.Random(3)
    sampler = Sampler(Plain(schemas))
    assert all(validator.is_valid(sampler.sample(root, r)) for _ in range(50))
    compiler = Compiler(schemas, max_recursion=2)
    mutator = Mutator(compiler, root)

    @settings(max_examples=30, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(compiler.valid(root), mutator.strategy())
    def check(doc: Any, broken: Any) -> None:
        assert validator.is_valid(doc), doc
        assert not validator.is_valid(broken.document), broken

    check()


def test_strategies_refuse_a_cycle_that_never_descends(tmp_path: Path) -> None:
    from conformance.strategies.compiler import Compiler
    from conformance.strategies.plain import Plain
    from conformance.strategies.sampler import Sampler

    (tmp_path / "x.json").write_text(json.dumps(FAMILIES["alias"]["x.json"]))
    schemas = load_set(tmp_path)
    with pytest.raises(UnevaluableSchema, match=r"x\.json#/\$defs/a -> x\.json#/\$defs/b -> x\.json#/\$defs/a"):
        Compiler(schemas).valid("x.json")
    with pytest.raises(UnevaluableSchema):
        Sampler(Plain(schemas)).sample("x.json", random.Random(0))
    for form in ({"anyOf": [{"type": "string"}, {"$ref": "#"}]}, {"allOf": [{"$ref": "#"}]}, {"$ref": "#"}):
        (tmp_path / "x.json").write_text(json.dumps(form))
        with pytest.raises(UnevaluableSchema):
            Compiler(load_set(tmp_path)).valid("x.json")
