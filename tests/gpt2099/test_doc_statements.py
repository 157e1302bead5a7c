"""Statements of gpt2099's schemas.md that only the schema rule (GP020) enforces, each
with a failing case, and the allowances the doc makes, each shown to pass.

docs/traceability.md ("Peer format gpt2099") names these tests. Every case edits one
field of a valid fixture, so the failure is the statement's and nothing else's.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.api import validate

from .conftest import FIXTURES

Edit = Callable[[Any], None]


def _thread() -> list[dict[str, Any]]:
    text = (FIXTURES / "thread-valid.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _doc(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def _errors(tmp_path: Path, name: str, value: Any) -> list[tuple[str, str]]:
    path = tmp_path / name
    if name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(v) + "\n" for v in value), encoding="utf-8")
    else:
        path.write_text(json.dumps(value), encoding="utf-8")
    return [(f.rule, f.pointer) for f in validate([path], fmt="gpt2099").findings if f.severity == "error"]


def _set(path: list[Any], value: Any) -> Edit:
    def edit(doc: Any) -> None:
        for key in path[:-1]:
            doc = doc[key]
        doc[path[-1]] = value

    return edit


def _drop(path: list[Any]) -> Edit:
    def edit(doc: Any) -> None:
        for key in path[:-1]:
            doc = doc[key]
        del doc[path[-1]]

    return edit


# (statement, file, edit, pointer the GP020 error must start at)
VIOLATIONS: list[tuple[str, str, Edit, str]] = [
    ("message_record.role is user|assistant|system", "window-valid.json",
     _set(["messages", 0, "role"], "model"), "/messages/0/role"),
    ("options_record.search is a bool", "window-valid.json", _set(["options", "search"], "yes"), "/options/search"),
    ("options_record.servers is list<string>", "window-valid.json",
     _set(["options", "servers"], "fs"), "/options/servers"),
    ("tool_result.content is list<record>", "window-valid.json",
     _set(["messages", 3, "content", 0, "content"], "x"), "/messages/3/content/0"),
    ("tool_result.is_error is a bool", "window-valid.json",
     _set(["messages", 3, "content", 0, "is_error"], "no"), "/messages/3/content/0"),
    ("inherited.servers is list<string>", "thread-valid.jsonl",
     _set([0, "meta", "inherited", "servers"], "fs"), "/meta/inherited/servers"),
    ("inherited.search is a bool", "thread-valid.jsonl",
     _set([2, "meta", "inherited", "search"], "yes"), "/meta/inherited/search"),
    ("cache is a bool", "thread-valid.jsonl", _set([0, "meta", "cache"], "yes"), "/meta/cache"),
    ("file_size is an int", "thread-valid.jsonl", _set([0, "meta", "file_size"], "12"), "/meta/file_size"),
    ("document_name is a string", "thread-valid.jsonl", _set([0, "meta", "document_name"], 5), "/meta/document_name"),
    ("original_path is a string", "thread-valid.jsonl", _set([0, "meta", "original_path"], 5), "/meta/original_path"),
    ("head is a string", "thread-valid.jsonl", _set([0, "meta", "head"], ["work"]), "/meta/head"),
    ("response message.role is assistant", "response-valid.json", _set(["message", "role"], "user"), "/message/role"),
    ("response usage has output_tokens", "response-valid.json",
     _drop(["message", "usage", "output_tokens"]), "/message/usage"),
    ("response usage counts are ints", "response-valid.json",
     _set(["message", "usage", "input_tokens"], "3"), "/message/usage/input_tokens"),
]  # fmt: skip


def _value(name: str) -> Any:
    return _thread() if name.endswith(".jsonl") else _doc(name)


@pytest.mark.parametrize(("statement", "name", "edit", "pointer"), VIOLATIONS, ids=[v[0] for v in VIOLATIONS])
def test_schema_statements_fail_when_broken(
    statement: str, name: str, edit: Edit, pointer: str, tmp_path: Path
) -> None:
    value = _value(name)
    assert _errors(tmp_path, name, value) == [], "the fixture itself is valid"
    broken = copy.deepcopy(value)
    edit(broken)
    errors = _errors(tmp_path, name, broken)
    assert errors and {rule for rule, _ in errors} == {"GP020"}, (statement, errors)
    assert any(ptr.startswith(pointer) for _, ptr in errors), (statement, errors)


# (allowance, file, edit): what the doc allows, each must stay free of errors
ALLOWANCES: list[tuple[str, str, Edit]] = [
    ("tool_use.id is optional (auto-generated if missing)", "window-valid.json", lambda d: None),
    ("meta.role may be absent (default user)", "thread-valid.jsonl", _drop([2, "meta", "role"])),
    ("continues may be a string", "thread-valid.jsonl", _set([1, "meta", "continues"], "03f0aaaaaaaaaaaaaaaaaaaa1")),
    ("continues may name a bookmark", "thread-valid.jsonl", lambda d: None),
    ("provider_ptr is optional in stored turns", "thread-valid.jsonl", _drop([0, "meta", "inherited", "provider_ptr"])),
    ("usage is optional in a response", "response-valid.json", _drop(["message", "usage"])),
    ("cache_*_input_tokens are optional", "response-valid.json",
     _drop(["message", "usage", "cache_read_input_tokens"])),
]  # fmt: skip


@pytest.mark.parametrize(("allowance", "name", "edit"), ALLOWANCES, ids=[a[0] for a in ALLOWANCES])
def test_documented_allowances_pass(allowance: str, name: str, edit: Edit, tmp_path: Path) -> None:
    value = _value(name)
    edit(value)
    assert _errors(tmp_path, name, value) == [], allowance


def test_the_allowance_fixtures_hold_what_they_claim() -> None:
    window = _doc("window-valid.json")
    assert [b for m in window["messages"] for b in m["content"] if b["type"] == "tool_use" and "id" not in b]
    assert any(t["meta"].get("continues") == ["work"] for t in _thread())  # a bookmark target


RECORDS = [
    {"id": "03f0aaaaaaaaaaaaaaaaaaaa1", "role": "user", "content": [{"type": "text", "text": "hi"}],
     "options": {"provider_ptr": "m"}},
    {"id": "03f0aaaaaaaaaaaaaaaaaaab2", "role": "assistant", "content": [{"type": "text", "text": "yo"}]},
]  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "pointer"),
    [
        (_set([1, "role"], "model"), "/1/role"),
        (_set([0, "options", "search"], "yes"), "/0/options/search"),
        (_set([1, "cache"], "yes"), "/1/cache"),
        (_set([1, "content"], "yo"), "/1/content"),
    ],
)
def test_thread_records_follow_the_thread_record_schema(edit: Edit, pointer: str, tmp_path: Path) -> None:
    # schemas.md "Thread Record Schema": {id, role, content, options, cache}
    assert _errors(tmp_path, "records.json", RECORDS) == []
    broken = copy.deepcopy(RECORDS)
    edit(broken)
    errors = _errors(tmp_path, "records.json", broken)
    assert errors and {rule for rule, _ in errors} == {"GP020"}
    assert any(ptr.startswith(pointer) for _, ptr in errors), errors


def test_a_bookmark_may_span_branches_of_one_thread_but_not_two_threads(tmp_path: Path) -> None:
    # schemas.md "Bookmarks": unique within the history, and inherited down the thread,
    # so the branches of one thread share it (GP204 stays silent) ...
    frames = _thread()
    branch = copy.deepcopy(frames[1])
    branch["id"] = "03f0aaaaaaaaaaaaaaaaaaae5"
    branch["meta"]["continues"] = [frames[0]["id"]]
    path = tmp_path / "branches.jsonl"
    path.write_text("".join(json.dumps(v) + "\n" for v in [*frames, branch]), encoding="utf-8")
    assert "GP204" not in {f.rule for f in validate([path], fmt="gpt2099").findings}
    # ... while an unrelated thread under the same name is reported once, where it starts
    fixture = FIXTURES / "GP204-bookmark.jsonl"
    hits = [(f.rule, f.line, f.pointer) for f in validate([fixture], fmt="gpt2099").findings]
    assert hits == [("GP204", 3, "/meta/head")]
