"""The §9.1 SQLite store: structure, rows through the canonical rules, tool_calls."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from conformance import validate
from conformance.convert import convert
from conformance.errors import InputError

VALID = Path(__file__).parent / "rules" / "canonical" / "valid.jsonl"
TOOL_ID = "tu_01JZ0000000000000000000T01"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    db = tmp_path / "store.db"
    assert convert("canonical", "sqlite", VALID, db) == []
    return db


def mutate(db: Path, *sql: str) -> Path:
    con = sqlite3.connect(db)
    con.execute("PRAGMA foreign_keys = OFF")
    for s in sql:
        con.execute(s)
    con.commit()
    con.close()
    return db


def found(db: Path, **kw: object) -> list[tuple[str, str]]:
    return [(f.rule, f.pointer) for f in validate([db], **kw).findings]  # type: ignore[arg-type]


def test_converted_store_is_valid_and_detected(store: Path) -> None:
    report = validate([store])
    assert report.findings == [] and report.files[0].format == "sqlite" and report.files[0].records == 5


MUTATIONS = {
    "TS501": (["DROP INDEX idx_messages_session_created"], "/messages"),
    "TS502": (["UPDATE messages SET content_json = '{}' WHERE id = '01JZ0000000000000000000002'"], "/content"),
    "TS503": (["UPDATE messages SET created_at = 'yesterday' WHERE id = '01JZ0000000000000000000002'"], "/created_at"),
    "TS504": ([f"DELETE FROM tool_calls WHERE id = '{TOOL_ID}'"], "/content"),
    "TS505": ([f"UPDATE tool_calls SET name = 'write_file' WHERE id = '{TOOL_ID}'"], "/name"),
    "TS506": (
        [f"UPDATE tool_calls SET result_message_id = '01JZ0000000000000000000005' WHERE id = '{TOOL_ID}'"],
        "/result_message_id",
    ),
    "TS507": ([f"UPDATE tool_calls SET status = 'pending' WHERE id = '{TOOL_ID}'"], "/status"),
    "TS508": (
        [
            "INSERT INTO tool_calls VALUES ('tu_01JZ0000000000000000000T09', 'sess_42', '01JZ0000000000000000000003', NULL,"
            " 'ghost', 'pending', NULL, NULL, 0, NULL)"
        ],
        "/id",
    ),
    "TS509": (["UPDATE messages SET session_id = 'sess_404' WHERE id = '01JZ0000000000000000000001'"], "/session_id"),
    "TS001": (["UPDATE messages SET metadata_json = '{\"a\": ' WHERE id = '01JZ0000000000000000000002'"], "/metadata"),
    "TS020": (
        [
            'UPDATE messages SET content_json = \'[{"type": "text", "text": 5}]\' WHERE id = \'01JZ0000000000000000000002\''
        ],
        "/content/0/text",
    ),
}


@pytest.mark.parametrize("rule", list(MUTATIONS))
def test_store_rule_fires(store: Path, rule: str) -> None:
    sql, pointer = MUTATIONS[rule]
    assert (rule, pointer) in found(mutate(store, *sql))


def test_missing_table(store: Path) -> None:
    assert ("TS501", "/tool_calls") in found(mutate(store, "DROP TABLE tool_calls"))


def test_not_a_database(tmp_path: Path) -> None:
    p = tmp_path / "x.db"
    p.write_bytes(b"SQLite format 3\x00" + b"\x00garbage" * 100)
    assert [r for r, _ in found(p)] == ["TS510"]


def test_validation_never_writes(store: Path) -> None:
    before = hashlib.sha256(store.read_bytes()).hexdigest(), store.stat().st_mtime_ns, sorted(store.parent.iterdir())
    validate([store])
    assert (
        hashlib.sha256(store.read_bytes()).hexdigest(),
        store.stat().st_mtime_ns,
        sorted(store.parent.iterdir()),
    ) == before


def test_convert_refuses_to_overwrite(store: Path) -> None:
    with pytest.raises(InputError, match="--force"):
        convert("canonical", "sqlite", VALID, store)
    convert("canonical", "sqlite", VALID, store, force=True)


def test_convert_refuses_invalid_input_and_leaves_nothing(tmp_path: Path) -> None:
    bad = Path(__file__).parent / "rules" / "canonical" / "TS020.jsonl"
    with pytest.raises(InputError):
        convert("canonical", "sqlite", bad, tmp_path / "out.db")
    assert list(tmp_path.iterdir()) == []
