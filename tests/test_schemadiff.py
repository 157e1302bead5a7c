"""`turnspec schema diff`: a table of schema edits and the class each must get.

Every failing direction must come with a witness document that the validators confirm
(one side accepts it, the other rejects it); every holding direction with a structural
proof or an explicit "fuzz" label.
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.core.schema_validation import SchemaValidator
from conformance.core.schemas import SchemaSet, schema_root
from conformance.schema.diff import Compat, diff, diff_paths, weakest

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
    from conformance.core.schemas import schema_set

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


# -- two revisions of one schema share its $id (issue 9, held-out defect) ---------------


@pytest.mark.parametrize("layout", ["one folder", "two folders"])
@pytest.mark.parametrize(("name", "edit", "expected"), EDITS, ids=[e[0] for e in EDITS])
def test_shared_id_files_are_diffed_by_position(
    tmp_path: Path, layout: str, name: str, edit: Edit, expected: Compat
) -> None:
    new_doc = copy.deepcopy(BASE)
    edit(new_doc)
    assert new_doc["$id"] == BASE["$id"]  # git HEAD vs working tree: one $id
    if layout == "one folder":
        old, new = tmp_path / "root.old.json", tmp_path / "root.json"
    else:
        (tmp_path / "head").mkdir()
        (tmp_path / "work").mkdir()
        old, new = tmp_path / "head" / "root.json", tmp_path / "work" / "root.json"
    old.write_text(json.dumps(BASE))
    new.write_text(json.dumps(new_doc))
    result = diff_paths(old, new, examples=60)
    assert result.verdict == expected, json.dumps(result.as_dict(), indent=1, default=str)[:2000]
    assert bool(result.changes) == (name not in ("no change", "description only"))
    if layout == "one folder":  # and the other way round: the reverse edit swaps the directions
        back = diff_paths(new, old, examples=60).verdict
        assert (back.backward, back.forward) == (expected.forward, expected.backward)


def test_diff_writes_nothing_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    old = _write(tmp_path, "old", BASE)
    narrowed = copy.deepcopy(BASE)
    props(narrowed)["kind"]["enum"].remove("c")
    new = _write(tmp_path, "new", narrowed)
    monkeypatch.chdir(cwd)
    assert main(["schema", "diff", str(old), str(new), "--examples", "30"]) == 0
    assert list(cwd.iterdir()) == []


def _hostile(tmp_path: Path, name: str) -> Path:
    """A hostile schema file, or folder entry, in a folder of its own."""
    folder = tmp_path / "bad"
    folder.mkdir()
    target = folder / "root.json"
    deep: dict[str, Any] = {}
    cur = deep
    for _ in range(400):
        cur["items"] = {}
        cur = cur["items"]
    content: Any = {
        "type 123": {"type": 123},
        "invalid pattern": {"type": "string", "pattern": "([a-"},
        "deep": deep,
        "huge enum": {"enum": list(range(200_000))},
        "huge schema": {"type": "object", "properties": {f"p{i}": {"type": "string"} for i in range(30_000)}},
        "not an object": [1, 2],
        "duplicate key": None,
        "folder named x.json": None,
        "fifo": None,
    }[name]
    if name == "duplicate key":
        target.write_text('{"type": "string", "type": "integer"}')
    elif name == "folder named x.json":
        target.mkdir()
    elif name == "fifo":
        os.mkfifo(target)
    else:
        target.write_text(json.dumps(content))
    return target


HOSTILE = ["type 123", "invalid pattern", "deep", "huge enum", "huge schema", "not an object", "duplicate key",
           "folder named x.json", "fifo"]  # fmt: skip


@pytest.mark.parametrize("case", HOSTILE)
@pytest.mark.parametrize("as_folder", [False, True])
def test_hostile_schemas_are_one_line_errors_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, as_folder: bool
) -> None:
    bad = _hostile(tmp_path, case)
    good = _write(tmp_path, "good", BASE)
    if as_folder:
        (bad.parent / "other.json").write_text(json.dumps({"type": "string"}))
        argv = ["schema", "diff", str(good.parent), str(bad.parent)]
    elif case == "folder named x.json":
        argv = ["schema", "diff", str(good.parent / "root.json"), str(bad.parent / "other.json")]
        (bad.parent / "other.json").write_text(json.dumps({"type": "string"}))  # the folder is a sibling
    else:
        argv = ["schema", "diff", str(good), str(bad)]
    assert main([*argv, "--examples", "5"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "internal error" not in err
    assert str(bad) in err


def test_examples_out_of_range_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path, "good", BASE)
    assert main(["schema", "diff", str(good), str(good), "--examples", "-5"]) == 2
    assert "--examples" in capsys.readouterr().err


def _stored_data_break(tmp_path: Path) -> tuple[Path, Path]:
    """OLD an open object; NEW adds a required field and closes it: old, stored documents
    (no `b`) are rejected by NEW, while NEW's documents still pass OLD (it was open)."""
    old_doc = {"$schema": BASE["$schema"], "$id": ID, "type": "object", "properties": {"a": {"type": "string"}}}
    new_doc = copy.deepcopy(old_doc)
    new_doc["properties"]["b"] = {"type": "string"}
    new_doc["required"] = ["b"]
    new_doc["additionalProperties"] = False
    return _write(tmp_path, "old", old_doc), _write(tmp_path, "new", new_doc)


def test_required_field_on_a_closed_object_is_forward_not_backward(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = _stored_data_break(tmp_path)
    result = diff_paths(old, new, examples=30)
    # the module's terms: BACKWARD = new readers read old data; that is what stored data needs
    assert result.verdict == Compat.FORWARD and not result.verdict.backward
    assert main(["schema", "diff", str(old), str(new), "--examples", "30"]) == 0  # default: only BREAKING fails


@pytest.mark.parametrize(
    ("fail_on", "forward_rc", "backward_rc"), [("backward", 1, 0), ("forward", 0, 1), ("breaking", 0, 0)]
)
def test_fail_on_names_the_compatibility_that_must_hold(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fail_on: str, forward_rc: int, backward_rc: int
) -> None:
    old, new = _stored_data_break(tmp_path)  # FORWARD
    argv = ["schema", "diff", "--examples", "30", "--fail-on", fail_on]
    assert main([*argv, str(old), str(new)]) == forward_rc
    assert "verdict: FORWARD" in capsys.readouterr().out
    assert main([*argv, str(new), str(old)]) == backward_rc  # the reverse change is BACKWARD
    assert "verdict: BACKWARD" in capsys.readouterr().out


def test_fail_on_breaking_still_fails_a_breaking_change(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old", BASE)
    breaking = copy.deepcopy(BASE)
    _rename(breaking)
    new = _write(tmp_path, "new", breaking)
    for fail_on in ("breaking", "backward", "forward"):
        assert main(["schema", "diff", str(old), str(new), "--examples", "30", "--fail-on", fail_on]) == 1


def test_fail_on_rejects_an_unknown_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = _write(tmp_path, "old", BASE)
    assert main(["schema", "diff", str(old), str(old), "--fail-on", "sideways"]) == 2
    assert "--fail-on: 'sideways' is not one of backward, forward, breaking" in capsys.readouterr().err


# -- recursive schemas (issue 41): diffed when a cycle descends into the document, refused
# with a located one-line error when it never does -----------------------------------------

TREE: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
}
MUTUAL: dict[str, Any] = {
    "$ref": "#/$defs/a",
    "$defs": {
        "a": {"type": "object", "properties": {"b": {"$ref": "#/$defs/b"}}},
        "b": {"type": "object", "properties": {"a": {"$ref": "#/$defs/a"}, "n": {"type": "integer"}}},
    },
}


def _pair(tmp_path: Path, old: dict[str, Any], new: dict[str, Any], name: str = "s.json") -> tuple[Path, Path]:
    for side, doc in (("old", old), ("new", new)):
        (tmp_path / side).mkdir()
        (tmp_path / side / name).write_text(json.dumps(doc))
    return tmp_path / "old" / name, tmp_path / "new" / name


@pytest.mark.parametrize("as_folder", [False, True])
@pytest.mark.parametrize(
    ("schema", "edit", "pointer"),
    [
        (TREE, lambda s: s["properties"]["name"].update(maxLength=10), "/name"),
        (MUTUAL, lambda s: s["$defs"]["b"]["properties"]["n"].update(maximum=150), "/b/n"),
    ],
    ids=["self", "mutual"],
)
def test_recursive_schemas_are_diffed(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    schema: dict[str, Any],
    edit: Edit,
    pointer: str,
    as_folder: bool,
) -> None:
    new_doc = copy.deepcopy(schema)
    edit(new_doc)
    old, new = _pair(tmp_path, schema, new_doc)
    argv = [str(old.parent), str(new.parent)] if as_folder else [str(old), str(new)]
    assert main(["schema", "diff", *argv, "-o", "json", "--examples", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["verdict"] == "FORWARD"
    (change,) = out["changes"]
    assert change["pointer"] == pointer and change["evidence"]["backward"]["by"] == "witness"
    sets = [SchemaSet("t", "v1", Path(), {"s.json": d}) for d in (schema, new_doc)]
    witness = change["evidence"]["backward"]["witness"]
    assert SchemaValidator(sets[0], "s.json").is_valid(witness) and not SchemaValidator(sets[1], "s.json").is_valid(
        witness
    )
    assert main(["schema", "diff", *argv, "--examples", "20"]) == 0  # the text form too
    assert "internal error" not in capsys.readouterr().err


def test_files_referring_to_each_other_are_compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a.json -> b.json -> a.json: no file is unreferenced, and none may be left out;
    # neither has an `$id`, so "b.json" resolves against its folder
    a = {"type": "object", "properties": {"b": {"$ref": "b.json"}}}
    b = {"type": "object", "properties": {"a": {"$ref": "a.json"}, "n": {"type": "integer", "maximum": 3}}}
    for side, bound in (("old", 3), ("new", 2)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "a.json").write_text(json.dumps(a))
        (tmp_path / side / "b.json").write_text(
            json.dumps({**b, "properties": {**b["properties"], "n": {"type": "integer", "maximum": bound}}})
        )
    assert main(["schema", "diff", str(tmp_path / "old"), str(tmp_path / "new"), "-o", "json", "--examples", "30"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(c["pointer"], c["kind"]) for c in out["changes"]] == [("/b/n", "maximum-tightened")]


NEVER_DESCENDS: dict[str, dict[str, Any]] = {
    "self alias": {"$ref": "#"},
    "self alias with siblings": {"$ref": "#", "type": "object"},
    "two defs aliasing each other": {
        "$ref": "#/$defs/a",
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
    },
    "property aliasing itself": {"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}},
    "allOf of itself": {"allOf": [{"$ref": "#"}]},
    "anyOf holding itself": {"anyOf": [{"type": "string"}, {"$ref": "#"}]},
    "defs in a oneOf loop": {
        "$ref": "#/$defs/a",
        "$defs": {
            "a": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/b"}]},
            "b": {"anyOf": [{"type": "integer"}, {"$ref": "#/$defs/a"}]},
        },
    },
}


@pytest.mark.parametrize("as_folder", [False, True])
@pytest.mark.parametrize("case", sorted(NEVER_DESCENDS))
def test_a_cycle_that_never_descends_is_a_located_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, as_folder: bool
) -> None:
    old, new = _pair(tmp_path, TREE, NEVER_DESCENDS[case])
    for argv in ([str(old), str(new)], [str(new), str(old)]):
        if as_folder:
            argv = [str(Path(a).parent) for a in argv]
        assert main(["schema", "diff", *argv, "--examples", "5"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "internal error" not in err and "RecursionError" not in err, err
        assert f"{new}: /" in err and "cycle" in err and "never descends" in err, err


def test_a_cycle_of_aliases_across_files_is_a_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"$ref": "b.json"}))
    (tmp_path / "b.json").write_text(json.dumps({"$ref": "a.json"}))
    assert main(["schema", "diff", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert "b.json: /: $ref cycle a.json# -> b.json# -> a.json#" in err and "RecursionError" not in err


# -- witnesses per change, in plain words; annotations follow --fail-on (issue 39.4) -------

PERSON: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
}


def _person_v2() -> dict[str, Any]:
    new = copy.deepcopy(PERSON)
    new["properties"]["name"]["maxLength"] = 20
    new["properties"]["age"]["maximum"] = 150
    new["properties"]["tags"]["maxItems"] = 3
    new["properties"]["email"] = {"type": "string"}
    new["required"] = ["name", "email"]
    return new


def test_each_change_has_its_own_witness_showing_that_change(tmp_path: Path) -> None:
    old, new = _pair(tmp_path, PERSON, _person_v2())
    result = diff_paths(old, new, examples=100)
    by = {(c.kind, c.pointer): c for c in result.changes}
    assert set(by) == {
        ("maxLength-tightened", "/name"),
        ("maximum-tightened", "/age"),
        ("maxItems-tightened", "/tags"),
        ("property-added", "/email"),
        ("required-added", "/email"),
    }
    vo = SchemaValidator(SchemaSet("t", "v1", Path(), {"s.json": PERSON}), "s.json")
    vn = SchemaValidator(SchemaSet("t", "v1", Path(), {"s.json": _person_v2()}), "s.json")
    witnesses = []
    for (kind, pointer), c in by.items():
        assert c.backward is not None and c.backward.by == "witness", kind
        w = c.backward.witness
        assert vo.is_valid(w) and not vn.is_valid(w), (kind, w)
        # the new schema's objections are all about this very change: at its place, by its keyword
        errors = vn.errors(w)
        assert {e.pointer for e in errors} == {pointer}, (kind, w, errors)
        keyword = {"property-added": "type", "required-added": "required"}.get(kind, kind.split("-")[0])
        assert {e.keyword for e in errors} == {keyword}, (kind, errors)
        witnesses.append(json.dumps(w, sort_keys=True))
    assert len(set(witnesses)) == len(witnesses)  # five changes, five different documents


def test_changes_and_witnesses_are_described_in_plain_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _pair(tmp_path, PERSON, _person_v2())
    assert main(["schema", "diff", str(old), str(new), "--examples", "100"]) == 0
    out = capsys.readouterr().out
    assert "None" not in out, out
    assert "maximum-tightened      s.json#/age  maximum added: 150" in out
    assert "maxLength added: 20" in out and "maxItems added: 3" in out
    # what the rejecting side says about the witness, at the witness's place
    assert "old accepts, new rejects: /age: s.json: 151 violates maximum 150" in out
    assert "old accepts, new rejects: /email: s.json: missing required field `email`" in out
    narrowed = copy.deepcopy(PERSON)
    narrowed["properties"]["kind"] = {"enum": ["a", "b"]}
    wider = copy.deepcopy(narrowed)
    wider["properties"]["kind"]["enum"].append("c")
    wider["properties"]["age"].pop("minimum")
    (tmp_path / "2").mkdir()
    old2, new2 = _pair(tmp_path / "2", narrowed, wider)
    assert main(["schema", "diff", str(old2), str(new2), "--examples", "50"]) == 0
    out = capsys.readouterr().out
    assert 'enum: "c" added' in out and "minimum removed (was 0)" in out, out


@pytest.mark.parametrize(
    ("fail_on", "level", "rc"), [("backward", "error", 1), ("forward", "warning", 0), ("breaking", "warning", 0)]
)
def test_annotation_level_follows_fail_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fail_on: str, level: str, rc: int
) -> None:
    old, new = _pair(tmp_path, PERSON, _person_v2())  # every change FORWARD: fatal only for --fail-on backward
    argv = ["schema", "diff", str(old), str(new), "--examples", "40", "--fail-on", fail_on]
    assert main([*argv, "-o", "github"]) == rc
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 5 and all(line.startswith(f"::{level} ") for line in lines), lines
    assert main([*argv, "-o", "sarif"]) == rc
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert {r["level"] for r in results} == {level}


def test_changes_that_only_fail_together_are_all_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # one BACKWARD change (enum widened) and one FORWARD change (maximum added): BREAKING in all
    new_doc = copy.deepcopy(BASE)
    props(new_doc)["kind"]["enum"].append("d")
    props(new_doc)["name"]["maxLength"] = 50
    old, new = _pair(tmp_path, BASE, new_doc, "root.json")
    assert main(["schema", "diff", str(old), str(new), "--examples", "40", "-o", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all(line.startswith("::error ") for line in lines), lines


def test_a_diff_imports_neither_hypothesis_nor_python_jsonschema_for_valid_schemas(tmp_path: Path) -> None:
    import subprocess
    import sys

    same = copy.deepcopy(PERSON)
    same["properties"]["name"]["maxLength"] = 20
    old, new = _pair(tmp_path, PERSON, same)
    code = (
        "import sys\nfrom conformance.cli import main\n"
        f"rc = main(['schema', 'diff', {str(old)!r}, {str(new)!r}, '--examples', '30', '-o', 'json'])\n"
        "print(rc, sorted(m for m in ('hypothesis', 'jsonschema') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    # the witness's message is python-jsonschema's (the oracle): loaded only once a witness is found
    assert done.stdout.strip().splitlines()[-1] == "0 ['jsonschema']", done.stdout
    code = code.replace(repr(str(new)), repr(str(old)))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    assert done.stdout.strip().splitlines()[-1] == "0 []", done.stdout


def test_the_same_schemas_give_the_same_report_byte_for_byte(tmp_path: Path) -> None:
    import subprocess
    import sys

    old, new = _pair(tmp_path, PERSON, _person_v2())
    outs = set()
    for seed in ("1", "2"):  # set and dict orders that depend on string hashing differ
        done = subprocess.run(
            [sys.executable, "-m", "conformance.cli", "schema", "diff", str(old), str(new), "-o", "json"],
            capture_output=True,
            check=False,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert done.returncode == 0, done.stderr
        outs.add(done.stdout)
    assert len(outs) == 1
