"""`turnspec schema diff`: a table of schema edits and the class each must get.

Every failing direction must come with a witness document that the validators confirm
(one side accepts it, the other rejects it); every holding direction with a structural
proof or an explicit "fuzz" label.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.schema_validation import SchemaValidator
from conformance.schemadiff import Compat, diff, weakest
from conformance.schemas import SchemaSet, schema_root

ID = "https://turnspec.dev/schemas/test/v1/root.json"
BASE: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": ID,
    "title": "Root",
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 10000},
        "kind": {"type": "string", "enum": ["a", "b", "c"]},
        "count": {"type": "integer", "minimum": 0, "maximum": 100},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
        "meta": {
            "type": "object",
            "properties": {"x": {"type": "string"}},
            "additionalProperties": True,
        },
        "code": {"type": "string", "pattern": "^[a-z]+$"},
        "block": {
            "oneOf": [
                {
                    "title": "Text",
                    "type": "object",
                    "properties": {"type": {"const": "text"}, "text": {"type": "string"}},
                    "required": ["type", "text"],
                    "additionalProperties": False,
                },
                {
                    "title": "Image",
                    "type": "object",
                    "properties": {"type": {"const": "image"}, "url": {"type": "string"}},
                    "required": ["type", "url"],
                    "additionalProperties": False,
                },
            ],
            "discriminator": {"propertyName": "type"},
        },
    },
    "required": ["name", "kind"],
    "additionalProperties": False,
}

Edit = Callable[[dict[str, Any]], None]


def props(s: dict[str, Any]) -> dict[str, Any]:
    return s["properties"]  # type: ignore[no-any-return]


def _rename(s: dict[str, Any]) -> None:
    props(s)["title"] = props(s).pop("name")
    s["required"] = ["title", "kind"]


def _no_kind(s: dict[str, Any]) -> None:
    del props(s)["kind"]
    s["required"] = ["name"]


EDITS: list[tuple[str, Edit, Compat]] = [
    ("no change", lambda s: None, Compat.FULL),
    ("description only", lambda s: s.update(description="now documented"), Compat.FULL),
    (
        "add optional field, closed object",
        lambda s: props(s).update(note={"type": "string"}),
        Compat.BACKWARD,
    ),
    (
        "add required field, closed object",
        lambda s: (props(s).update(note={"type": "string"}), s["required"].append("note")),
        Compat.BREAKING,
    ),
    (
        "add optional field, open object",
        lambda s: props(s)["meta"]["properties"].update(y={"type": "integer"}),
        Compat.FORWARD,
    ),
    (
        "add required field, open object",
        lambda s: (
            props(s)["meta"]["properties"].update(y={"type": "integer"}),
            props(s)["meta"].update(required=["y"]),
        ),
        Compat.FORWARD,
    ),
    ("remove optional field, closed object", lambda s: props(s).pop("count"), Compat.FORWARD),
    ("remove required field, closed object", _no_kind, Compat.BREAKING),
    ("rename field", _rename, Compat.BREAKING),
    ("widen enum", lambda s: props(s)["kind"]["enum"].append("d"), Compat.BACKWARD),
    ("narrow enum", lambda s: props(s)["kind"]["enum"].remove("c"), Compat.FORWARD),
    (
        "tighten maxLength 10000 -> 50",
        lambda s: props(s)["name"].update(maxLength=50),
        Compat.FORWARD,
    ),
    ("relax maximum", lambda s: props(s)["count"].update(maximum=1000), Compat.BACKWARD),
    ("add minItems", lambda s: props(s)["tags"].update(minItems=1), Compat.FORWARD),
    (
        "widen type integer -> number",
        lambda s: props(s)["count"].update(type="number"),
        Compat.BACKWARD,
    ),
    ("make optional field required", lambda s: s["required"].append("count"), Compat.FORWARD),
    ("make required field optional", lambda s: s.update(required=["name"]), Compat.BACKWARD),
    (
        "close an open object",
        lambda s: props(s)["meta"].update(additionalProperties=False),
        Compat.FORWARD,
    ),
    (
        "narrow a pattern ^[a-z]+$ -> ^[a-z]{1,5}$",
        lambda s: props(s)["code"].update(pattern="^[a-z]{1,5}$"),
        Compat.FORWARD,
    ),
    (
        "add block type",
        lambda s: props(s)["block"]["oneOf"].append(
            {
                "title": "Audio",
                "type": "object",
                "properties": {"type": {"const": "audio"}, "data": {"type": "string"}},
                "required": ["type", "data"],
                "additionalProperties": False,
            }
        ),
        Compat.BACKWARD,
    ),
    ("remove block type", lambda s: props(s)["block"]["oneOf"].pop(), Compat.FORWARD),
    (
        "rename a discriminator value",
        lambda s: props(s)["block"]["oneOf"][1]["properties"]["type"].update(const="picture"),
        Compat.BREAKING,
    ),
]


def _set(doc: dict[str, Any]) -> SchemaSet:
    return SchemaSet("test", "v1", Path(), {"root.json": doc})


@pytest.mark.parametrize(("name", "edit", "expected"), EDITS, ids=[e[0] for e in EDITS])
def test_edit_is_classified(name: str, edit: Edit, expected: Compat) -> None:
    new_doc = copy.deepcopy(BASE)
    edit(new_doc)
    old, new = _set(copy.deepcopy(BASE)), _set(new_doc)
    result = diff(old, new, ["root.json"], examples=120)
    assert result.verdict == expected, json.dumps(result.as_dict(), indent=1, default=str)[:3000]
    vo, vn = SchemaValidator(old, "root.json"), SchemaValidator(new, "root.json")
    for change in result.changes:
        for direction in ("backward", "forward"):
            ev = getattr(change, direction)
            assert ev.by in ("structure", "witness", "fuzz")
            if not ev.holds and ev.by == "witness":
                accepts, rejects = (vo, vn) if direction == "backward" else (vn, vo)
                assert accepts.is_valid(ev.witness) and not rejects.is_valid(ev.witness), (
                    change.kind,
                    ev.witness,
                )
            if ev.by == "fuzz":
                assert ev.holds and "not a proof" in ev.detail


def test_maxlength_cut_is_proved_by_a_boundary_witness() -> None:
    new_doc = copy.deepcopy(BASE)
    props(new_doc)["name"]["maxLength"] = 50
    result = diff(_set(copy.deepcopy(BASE)), _set(new_doc), ["root.json"], examples=120)
    (change,) = result.changes
    assert change.kind == "maxLength-tightened"
    assert change.forward is not None and change.forward.by == "structure"
    assert change.backward is not None and change.backward.by == "witness"
    assert 50 < len(change.backward.witness["name"]) <= 10000


def test_weakest_class() -> None:
    assert weakest([]) == Compat.FULL
    assert weakest([Compat.FULL, Compat.BACKWARD]) == Compat.BACKWARD
    assert weakest([Compat.BACKWARD, Compat.FORWARD]) == Compat.BREAKING


def test_canonical_v1_to_v2_is_forward_compatible() -> None:
    # old readers read revision-2 data (§10.3 tolerance); new readers reject revision-1
    # data that already used the names `audio` / `stop_reason` for something else
    from conformance.schemas import schema_set

    result = diff(schema_set("canonical", "v1"), schema_set("canonical", "v2"), ["message.json"], examples=100)
    assert result.verdict == Compat.FORWARD
    kinds = {(c.kind, c.pointer): c for c in result.changes}
    assert kinds[("branch-added", "/content/*")].compat == Compat.FULL
    stop = kinds[("property-added", "/metadata/stop_reason")]
    assert stop.forward is not None and stop.forward.by == "structure"
    assert stop.backward is not None and not stop.backward.holds and "stop_reason" in stop.backward.witness["metadata"]
    audio = kinds[("pattern-changed", "/content/*/type")]
    assert audio.backward is not None and any(b.get("type") == "audio" for b in audio.backward.witness["content"])


def _write(tmp_path: Path, name: str, doc: dict[str, Any]) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "root.json").write_text(json.dumps(doc))
    return folder / "root.json"


def test_cli_json_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old", BASE)
    breaking = copy.deepcopy(BASE)
    _rename(breaking)
    new = _write(tmp_path, "new", breaking)
    assert main(["schema", "diff", str(old), str(new), "--output", "json", "--examples", "60"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "BREAKING"
    assert all(set(c) == {"pointer", "kind", "class", "evidence"} for c in out["changes"])
    assert {c["pointer"] for c in out["changes"]} >= {"/name", "/title"}
    widened = copy.deepcopy(BASE)
    props(widened)["kind"]["enum"].append("d")
    fine = _write(tmp_path, "fine", widened)
    assert main(["schema", "diff", str(old), str(fine), "--examples", "60"]) == 0
    assert "verdict: BACKWARD" in capsys.readouterr().out


def test_cli_compares_shipped_folders(capsys: pytest.CaptureFixture[str]) -> None:
    root = schema_root() / "canonical"
    assert main(["schema", "diff", str(root / "v1"), str(root / "v1"), "--output", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"verdict": "FULL", "changes": []}


def test_cli_reports_missing_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "diff", str(tmp_path / "nope"), str(tmp_path / "nope2")]) == 2
    assert "no such file" in " ".join(capsys.readouterr().err.split())  # rich wraps lines
