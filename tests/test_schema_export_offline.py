"""`turnspec schema export OUT/` writes files that resolve offline (issue 39, item 6): with
the published `https://turnspec.dev/...` ids, check-jsonschema and others fetched every
`$ref` from the network (and printed a traceback); the exported files' ids are their own
names, so a `$ref` reads the file beside it, wherever OUT is."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit
from urllib.request import url2pathname

import jsonschema
import pytest
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource
from referencing.jsonschema import DRAFT202012

from conformance.cli import main
from conformance.schema.bundle import families

ROOT = Path(__file__).resolve().parents[1]
VALID = (ROOT / "tests/rules/canonical/valid.jsonl").read_text().splitlines()[1]  # a user message with blocks
BROKEN_BLOCK = (ROOT / "tests/rules/canonical/TS020.jsonl").read_text().splitlines()[1]  # `text` not a string


def _export(out: Path, fmt: str = "canonical") -> Path:
    assert main(["schema", "export", "--format", fmt, str(out)]) == 0
    return out


def _files_only(uri: str) -> Resource[Any]:
    """What an offline validator retrieves: `file:` URIs, read from disk; anything else fails."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        raise NoSuchResource(uri)
    return Resource.from_contents(json.loads(Path(url2pathname(parts.path)).read_text()), DRAFT202012)


def _offline(schema_file: Path) -> tuple[Registry[Any], str, dict[str, Any]]:
    """A registry that knows `schema_file` by its base URI (its `$id` read against where it
    was read from, JSON Schema 2020-12 Core §8.2.1) and reads other files on demand."""
    schema = json.loads(schema_file.read_text())
    registry: Registry[Any] = Registry(retrieve=_files_only)  # type: ignore[call-arg]
    base = urljoin(schema_file.resolve().as_uri(), str(schema.get("$id", "")))
    return registry.with_resource(base, Resource.from_contents(schema, DRAFT202012)), base, schema


def _offline_validator(schema_file: Path) -> jsonschema.protocols.Validator:
    registry, base, schema = _offline(schema_file)
    cls = jsonschema.validators.validator_for(schema)
    return cls({"$ref": base}, registry=registry)  # the file, as its retrieval URI names it


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_exported_files_validate_offline_and_still_catch_defects(tmp_path: Path) -> None:
    out = _export(tmp_path / "schemas")
    check = _offline_validator(out / "message.json")
    assert list(check.iter_errors(json.loads(VALID))) == []
    errors = list(check.iter_errors(json.loads(BROKEN_BLOCK)))
    assert errors  # the block's schema was reached: through content-block.json, known-content-block.json


@pytest.mark.parametrize("fmt", families())
def test_every_ref_of_every_family_resolves_from_the_files_beside_it(fmt: str, tmp_path: Path) -> None:
    out = _export(tmp_path / fmt, fmt)
    names = sorted(p.name for p in out.glob("*.json"))
    assert names
    for name in names:
        doc = json.loads((out / name).read_text())
        assert "$id" not in doc, name  # its base is where it was read from
        registry, base, _ = _offline(out / name)
        resolver = registry.resolver(base_uri=base)
        for ref in _refs(doc):
            assert not ref.startswith("http"), (name, ref)
            resolver.lookup(ref)  # raises when a ref would need the network or a missing file


@pytest.mark.skipif(shutil.which("check-jsonschema") is None, reason="check-jsonschema is not installed")
def test_check_jsonschema_reads_the_exported_files(tmp_path: Path) -> None:
    out = _export(tmp_path / "schemas")
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(VALID)
    bad.write_text(BROKEN_BLOCK)
    cmd = ["check-jsonschema", "--schemafile", str(out / "message.json")]
    ok = subprocess.run([*cmd, str(good)], capture_output=True, text=True, timeout=120, check=False)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    no = subprocess.run([*cmd, str(bad)], capture_output=True, text=True, timeout=120, check=False)
    assert no.returncode == 1 and "Traceback" not in no.stdout + no.stderr, no.stdout + no.stderr
