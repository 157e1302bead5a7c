"""Migrations: the registry, the two real migrations, their fuzz proofs, the atomic
writer and `turnspec migrate` (which never rewrites its input unless told to)."""

from __future__ import annotations

import contextlib
import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conformance.cli import main
from conformance.core.errors import InputError
from conformance.migrations import (
    Migration,
    MigrationError,
    MigrationRegistry,
    default_registry,
    gpt2099,
    migrate_file,
)
from conformance.migrations import canonical as canon
from conformance.migrations.atomic import atomic_write
from conformance.migrations.proof import SPECS, check, prove, source_documents

DATA = Path(__file__).parent / "data" / "migrations"
FAST = settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))


# -- registry --------------------------------------------------------------------------


def test_registry_paths_go_both_ways() -> None:
    reg = default_registry()
    assert [(s.source, s.target) for s in reg.path("canonical", 1, 2)] == [(1, 2)]
    assert [(s.source, s.target) for s in reg.path("canonical", 2, 1)] == [(2, 1)]
    assert reg.path("gpt2099", 2, 2) == []
    with pytest.raises(LookupError, match="from revision 2 to 3"):
        reg.path("canonical", 1, 3)


def test_registry_refuses_two_migrations_from_one_revision() -> None:
    reg = MigrationRegistry()
    reg.register(gpt2099.MIGRATION)
    other = Migration("gpt2099", 1, lambda d: d, (), "other")
    with pytest.raises(ValueError, match="two migrations"):
        reg.register(other)


def test_lossless_needs_a_backward_function() -> None:
    with pytest.raises(ValueError, match="lossless"):
        Migration("x", 1, lambda d: d, (), "x", lossless=True)


def test_one_way_migration_has_no_path_back() -> None:
    reg = MigrationRegistry()
    reg.register(Migration("x", 1, lambda d: d, (), "one way"))
    with pytest.raises(LookupError, match="back from revision 2"):
        reg.path("x", 2, 1)


def test_every_migration_declares_its_changes() -> None:
    for m in default_registry():
        assert m.changes and all(c.pointer.startswith("/") and c.kind and c.description for c in m.changes)


# -- gpt2099: options -> inherited (dict level; schema proof wired after the merge) ---------


def test_gpt2099_rename_on_a_frame_only() -> None:
    frame = {
        "id": "03dvnby7v8s90z5n0ku88i9wv",
        "topic": "gpt.turn",
        "meta": {
            "role": "user",
            "options": {"provider_ptr": "milli", "servers": ["fs"]},
            "head": "main",
        },
    }
    out = gpt2099.forward(frame)
    assert out == {
        "id": frame["id"],
        "topic": "gpt.turn",
        "meta": {
            "role": "user",
            "inherited": {"provider_ptr": "milli", "servers": ["fs"]},
            "head": "main",
        },
    }
    assert list(out["meta"]) == ["role", "inherited", "head"]  # key order kept
    assert "options" in frame["meta"]  # pure: the argument is untouched
    assert gpt2099.detect(frame) == 1 and gpt2099.detect(out) == 2
    # "in stored frames" (schemas.md): a thread record's `options` is its delta, not renamed
    record = {"id": "x", "role": "user", "content": [], "options": {"search": True}, "cache": False}
    assert gpt2099.forward(record) == record and gpt2099.detect(record) == 1


def test_gpt2099_turn_without_options_is_unchanged() -> None:
    turn = {"id": "x", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    assert gpt2099.forward(turn) == turn and gpt2099.backward(turn) == turn


def test_gpt2099_refuses_a_turn_with_both_names() -> None:
    with pytest.raises(MigrationError) as exc:
        gpt2099.forward({"meta": {"options": {}, "inherited": {"search": True}}})
    assert exc.value.pointer == "/meta/inherited"
    with pytest.raises(MigrationError):
        gpt2099.backward({"meta": {"options": {}, "inherited": {}}})


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=8,
)
turns = st.dictionaries(
    st.sampled_from(["id", "role", "content", "options", "head", "continues", "cache"]), json_values
).map(lambda d: d) | st.dictionaries(st.sampled_from(["id", "topic"]), json_values).flatmap(
    lambda top: st.dictionaries(st.sampled_from(["role", "options", "head", "cache"]), json_values).map(
        lambda meta: {**top, "meta": meta}
    )
)


@FAST
@given(turns)
def test_gpt2099_rename_is_pure_and_lossless(turn: dict[str, Any]) -> None:
    before = copy.deepcopy(turn)
    out = gpt2099.forward(turn)
    assert turn == before
    if isinstance(turn.get("meta"), dict):
        assert "options" not in out["meta"]
    else:
        assert out == turn  # only stored frames are renamed
    assert gpt2099.backward(out) == turn


# -- canonical 1 <-> 2 -------------------------------------------------------------------


def test_canonical_proof_holds() -> None:
    result = prove(canon.MIGRATION, max_examples=120)
    assert result.ok, (result.reason, result.counterexample)
    assert result.examples >= 120


def test_canonical_proof_would_catch_a_naive_identity() -> None:
    # the proof has teeth: plain identity, without the refusals, is disproved, because
    # generation mixes revision 2's vocabulary into revision-1 documents
    naive = Migration(
        "canonical",
        1,
        lambda d: d,
        canon.MIGRATION.changes,
        "naive",
        backward=lambda d: d,
        lossless=True,
    )
    result = prove(naive, max_examples=400, shrink=False, derandomize=True)
    assert not result.ok
    assert "invalid under revision 2" in str(result.reason) or "verdict changed" in str(result.reason)


def test_canonical_proof_would_catch_a_verdict_change() -> None:
    # an audio block that is well-formed revision-2 content, but in a system message:
    # revision 1 only warns (unknown block), revision 2 rejects it (TS102)
    audio = {
        "type": "audio",
        "source": {"kind": "url", "data": "https://example.com/a.wav"},
        "media_type": "audio/wav",
    }
    doc = {
        "id": "01KR3T6Y000000000000000001",
        "session_id": "s",
        "role": "system",
        "content": [audio],
        "metadata": {},
        "created_at": "2026-05-08T12:00:00.000000Z",
        "schema_version": 1,
    }
    lax = Migration("canonical", 1, lambda d: d, (), "lax", backward=lambda d: d, lossless=True)
    assert "verdict changed" in str(check(lax, SPECS["canonical"], doc))
    assert check(canon.MIGRATION, SPECS["canonical"], doc) is None  # refused instead
    with pytest.raises(MigrationError) as exc:
        canon.forward(doc)
    assert exc.value.pointer == "/content/0"


def test_canonical_refusals_are_located() -> None:
    base = {"role": "user", "metadata": {}}
    with pytest.raises(MigrationError) as exc:
        canon.forward(
            {
                **base,
                "content": [
                    {"type": "text", "text": "x"},
                    {"type": "tool_result", "content": [{"type": "audio"}]},
                ],
            }
        )
    assert exc.value.pointer == "/content/1/content/0"
    with pytest.raises(MigrationError) as exc:
        canon.forward({**base, "content": [], "metadata": {"stop_reason": "done"}})
    assert exc.value.pointer == "/metadata/stop_reason"
    ok = {**base, "content": [], "metadata": {"stop_reason": "max_tokens"}}
    assert canon.forward(ok) is ok and canon.backward(ok) is ok


def test_canonical_migration_is_pure() -> None:
    @settings(FAST, max_examples=40)
    @given(source_documents(canon.MIGRATION, SPECS["canonical"]))
    def check(doc: Any) -> None:
        before = json.dumps(doc, sort_keys=True)
        with contextlib.suppress(MigrationError):
            canon.forward(doc)
        assert json.dumps(doc, sort_keys=True) == before

    check()


# -- files and the CLI ---------------------------------------------------------------------


def test_migrate_file_prints_by_default_and_never_touches_input(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes((DATA / "v1-session.jsonl").read_bytes())
    before = src.read_bytes(), src.stat().st_mtime_ns
    result = migrate_file(src, 2)
    assert result.ok and result.records == 2 and result.changed == 0
    assert result.output is not None and [json.loads(x) for x in result.output.splitlines()] == [
        json.loads(x) for x in before[0].splitlines()
    ]
    assert (src.read_bytes(), src.stat().st_mtime_ns) == before


def test_migrate_file_refuses_input_as_output(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes((DATA / "v1-session.jsonl").read_bytes())
    with pytest.raises(InputError, match="--in-place"):
        migrate_file(src, 2, out=src)
    with pytest.raises(InputError, match="exists"):
        migrate_file(src, 2, out=DATA / "squatter.jsonl")


def test_refused_records_write_nothing(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes((DATA / "squatter.jsonl").read_bytes())
    before = src.read_bytes()
    out = tmp_path / "out.jsonl"
    result = migrate_file(src, 2, out=out)
    assert not result.ok
    assert [(f.rule, f.line, f.pointer) for f in result.findings] == [("TM002", 2, "/content/1")]
    assert not out.exists()
    result = migrate_file(src, 2, in_place=True)
    assert not result.ok and src.read_bytes() == before
    assert list(tmp_path.iterdir()) == [src]  # no temporary file left behind


def test_gpt2099_file_migration_in_place(tmp_path: Path) -> None:
    src = tmp_path / "turns.jsonl"
    turns = [
        {"id": "a", "topic": "gpt.turn", "meta": {"role": "user", "options": {"provider_ptr": "nano"}}, "content": []},
        {"id": "b", "topic": "gpt.turn", "meta": {"role": "assistant"}, "content": []},
    ]
    src.write_text("".join(json.dumps(t) + "\n" for t in turns))
    src.chmod(0o640)
    result = migrate_file(src, 2, fmt="gpt2099", in_place=True)
    assert result.ok and result.written == src and result.changed == 1
    assert [json.loads(x) for x in src.read_text().splitlines()] == [gpt2099.forward(t) for t in turns]
    assert src.stat().st_mode & 0o777 == 0o640
    assert migrate_file(src, 1, fmt="gpt2099", in_place=True).ok
    assert [json.loads(x) for x in src.read_text().splitlines()] == turns


def test_bad_input_is_a_located_finding(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": "03dvnby7v8s90z5n0ku88i9wv", "role": "user", "content": []}\n{"role": \n')
    result = migrate_file(src, 2, fmt="gpt2099", out=tmp_path / "out.jsonl")
    assert not result.ok and {f.rule for f in result.findings} <= {"TS001", "TS009"}
    assert not (tmp_path / "out.jsonl").exists()


def test_atomic_write_leaves_old_file_on_failure(tmp_path: Path) -> None:
    target = tmp_path / "f.jsonl"
    target.write_text("old\n")

    def chunks() -> Any:
        yield b"new\n"
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic_write(target, chunks())
    assert target.read_text() == "old\n"
    assert list(tmp_path.iterdir()) == [target]


def test_cli_migrate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes((DATA / "v1-session.jsonl").read_bytes())
    out = tmp_path / "out.jsonl"
    assert main(["migrate", str(src), "--to", "2", "-o", str(out)]) == 0
    assert out.exists() and "2 record(s) at revision 2" in capsys.readouterr().err
    assert main(["migrate", str(src), "--to", "2", "-o", str(out)]) == 2  # exists, no --force
    assert main(["migrate", str(src), "--to", "3"]) == 1
    assert "TM001" in capsys.readouterr().err
    assert main(["migrate", str(DATA / "squatter.jsonl"), "--to", "2"]) == 1
    err = capsys.readouterr().err
    assert "TM002" in err and "nothing written" in err
    assert main(["migrate"]) == 2
    assert main(["migrate", "--list"]) == 0
    assert "gpt2099 1 -> 2" in capsys.readouterr().out


def test_migration_rules_are_listed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--select", "TM"]) == 0
    out = capsys.readouterr().out
    assert all(r in out for r in ("TM001", "TM002", "TM003"))


# -- gpt2099 schema proof: revision 1 (`options`) -> revision 2 (`inherited`) ------------


def test_gpt2099_migration_fuzz_proof_on_frames_and_records() -> None:
    from conformance.migrations.proof import GPT2099_RECORDS, SPECS, prove

    for spec in (SPECS["gpt2099"], GPT2099_RECORDS):  # records: the identity must hold too
        result = prove(gpt2099.MIGRATION, spec, max_examples=60)
        assert result.ok, (spec.root, result.reason, result.counterexample)
        assert result.examples >= 30


def test_gpt2099_revision2_schema_refuses_the_old_name() -> None:
    from conformance.core.schema_validation import SchemaValidator
    from conformance.core.schemas import schema_set

    v1 = SchemaValidator(schema_set("gpt2099", "v1"), "turn-frame.json")
    v2 = SchemaValidator(schema_set("gpt2099", "v2"), "turn-frame.json")
    old = {"id": "03dvnbyn9773nub0dkxcm5k0o", "meta": {"role": "user", "options": {"search": True}}, "content": []}
    new = gpt2099.forward(old)
    assert v1.is_valid(old) and v1.is_valid(new)  # revision 1 reads both names
    assert not v2.is_valid(old) and v2.is_valid(new)
    assert [e.pointer for e in v2.errors(old)] == ["/meta"]


def test_gpt2099_proof_catches_a_broken_rename() -> None:
    from conformance.migrations.proof import SPECS, prove

    broken = Migration("gpt2099", 1, lambda d: d, (), "forgets to rename", backward=lambda d: d, lossless=True)
    result = prove(broken, SPECS["gpt2099"], max_examples=200, shrink=False, derandomize=True)
    assert not result.ok and "invalid under revision 2" in (result.reason or "")


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_migrate_output_gets_the_umask_mode_not_0600(tmp_path: Path, umask: int) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes((DATA / "v1-session.jsonl").read_bytes())
    old = os.umask(umask)
    try:
        assert migrate_file(src, 2, out=tmp_path / "out.jsonl").ok
    finally:
        os.umask(old)
    assert (tmp_path / "out.jsonl").stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl"]


def test_migrate_refuses_outputs_around_the_input(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_bytes((DATA / "v1-session.jsonl").read_bytes())
    with pytest.raises(InputError, match="contains the input"):
        migrate_file(src, 2, out=tmp_path, force=True)
    with pytest.raises(InputError, match="does not exist"):
        migrate_file(src, 2, out=tmp_path / "no" / "out.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_migrate_writes_integers_beyond_64_bits(tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    line = (DATA / "v1-session.jsonl").read_text().splitlines()[0]
    doc = json.loads(line)
    doc["metadata"]["usage"] = {"input_tokens": 10**400, "output_tokens": 1}
    src.write_text(json.dumps(doc) + "\n")
    result = migrate_file(src, 2, out=tmp_path / "out.jsonl")
    if result.ok:  # the target schema may bound token counts; either way: no crash, no partial file
        assert json.loads((tmp_path / "out.jsonl").read_text())["metadata"]["usage"]["input_tokens"] == 10**400
    else:
        assert not (tmp_path / "out.jsonl").exists()


# -- a number's spelling is kept (issue 41) ---------------------------------------------------

SPELLED = '"input": {"path": "README.md", "n": 1E2, "r": 1.50, "z": -0, "e": 2.5e-3}'


def _spelled_canonical(tmp_path: Path, suffix: str = ".jsonl") -> Path:
    text = (Path(__file__).parent / "rules" / "canonical" / "valid.jsonl").read_text()
    assert '"input": {"path": "README.md"}' in text
    text = text.replace('"input": {"path": "README.md"}', SPELLED)
    src = tmp_path / f"in{suffix}"
    if suffix == ".json":
        text = "[\n" + ",\n".join(text.splitlines()) + "\n]\n"
    src.write_text(text)
    return src


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_a_record_migration_leaves_as_it_is_keeps_its_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    """`1E2` is read as 100.0; a record no migration step changes is written as it was
    read, so `0 changed` is true of the bytes too (it was rewritten as `100.0`)."""
    src = _spelled_canonical(tmp_path, suffix)
    out = tmp_path / f"out{suffix}"
    assert main(["migrate", str(src), "--to", "2", "-o", str(out)]) == 0
    assert "5 record(s) at revision 2, 0 changed" in capsys.readouterr().err
    assert out.read_bytes() == src.read_bytes()


def test_a_changed_record_keeps_the_spelling_of_its_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A record a step changes is written anew (and counted), its numbers as they were spelled."""
    src = tmp_path / "turns.jsonl"
    src.write_text(
        '{"id": "a", "topic": "gpt.turn", "meta": {"role": "user", "options": {"temperature": 1E0, "top_p": 0.50}}, "content": []}\n'
        '{"id": "b", "topic": "gpt.turn", "meta": {"role": "assistant", "n": 1e3}, "content": []}\n'
    )
    out = tmp_path / "out.jsonl"
    assert main(["migrate", str(src), "--to", "2", "--format", "gpt2099", "-o", str(out)]) == 0
    assert "2 record(s) at revision 2, 1 changed" in capsys.readouterr().err
    first, second = out.read_text().splitlines()
    assert '"inherited":{"temperature":1E0,"top_p":0.50}' in first
    assert second == src.read_text().splitlines()[1]
