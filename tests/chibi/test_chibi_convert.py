"""chibi <-> canonical conversion: round trips, lossy reports, and refusals."""

from __future__ import annotations

import itertools
import json
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from chibi_helpers import FIXTURES, check, read_lines, write_lines
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ulid import ULID

from conformance.cli import main
from conformance.convert import convert
from conformance.core.errors import InputError
from conformance.core.findings import Finding
from conformance.core.schema_validation import SchemaValidator
from conformance.core.schemas import schema_set

EXAMPLE = Path(__file__).parents[2] / "conformance" / "data" / "examples" / "session.jsonl"
PROVENANCE = SchemaValidator(schema_set("chibi", "v1"), "canonical-provenance.json")


def snapshot(ctx: Path) -> dict[str, Any]:
    """Everything the mapping covers, file by file (bloom filters are not carried)."""
    out: dict[str, Any] = {}
    for p in sorted(ctx.rglob("*")):
        rel = p.relative_to(ctx).as_posix()
        if not p.is_file() or p.suffix == ".bloom" or p.name == "requests.jsonl":
            continue
        if p.suffix == ".jsonl":
            out[rel] = read_lines(p)
        else:
            out[rel] = json.loads(p.read_text(encoding="utf-8"))
    for m in [v for k, v in out.items() if k.endswith("manifest.json")]:
        for part in m["partitions"]:
            part.pop("bloom_file", None)
    return out


def round_trip(src: Path, tmp: Path) -> tuple[Path, Path, list[Finding], list[Finding]]:
    canon, back = tmp / "canonical.jsonl", tmp / "back"
    there = convert("chibi", "canonical", src, canon)
    again = convert("canonical", "chibi", canon, back)
    return canon, back, there, again


@pytest.mark.parametrize("name", ["default", "legacy09"])
def test_fixture_round_trip(name: str, tmp_path: Path) -> None:
    src = FIXTURES / name
    canon, back, _, _ = round_trip(src, tmp_path)
    assert snapshot(back) == snapshot(src)
    # byte for byte: the same serialization as chibi's serde_json
    for p in (src / "transcript").rglob("*.jsonl"):
        assert (back / p.relative_to(src)).read_bytes() == p.read_bytes()
    assert check(back).findings == []
    messages = read_lines(canon)
    assert all(PROVENANCE.is_valid(m["metadata"]["provider_raw"]["chibi"]) for m in messages)


def test_canonical_output_shape(tmp_path: Path) -> None:
    canon, _, there, _ = round_trip(FIXTURES / "default", tmp_path)
    messages = read_lines(canon)
    entries = read_lines(FIXTURES / "default" / "transcript" / "partitions" / "1767225600-1767225666.jsonl")
    entries += read_lines(FIXTURES / "default" / "transcript" / "active.jsonl")
    # issue 9/17 (reverses the old one-message-per-entry shape): only conversation entries,
    # the system prompt and the compaction summary are messages, with their text; anchors and
    # control transfers travel in provider_raw of the neighbouring message
    assert len(messages) == 9
    assert [m["id"] for m in messages] == sorted(m["id"] for m in messages)  # monotonic ULIDs
    roles = [m["role"] for m in messages]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "system", "user", "assistant", "system"]
    texts = [m["content"][0].get("text") for m in messages if m["role"] == "system"]
    assert texts == [entries[1]["content"], entries[8]["metadata"]["summary"], entries[12]["content"]]
    assert all(m["metadata"].get("user_id") == "alice" for m in messages if m["role"] == "user")
    assert "before" not in messages[1]["metadata"]["provider_raw"]["chibi"]  # the anchor precedes the prompt
    assert [c["entry"]["entry_type"] for c in messages[0]["metadata"]["provider_raw"]["chibi"]["before"]] == [
        "context_created"
    ]
    use = messages[2]["content"][0]
    assert (
        use["type"] == "tool_use" and use["id"].startswith("tu_") and use["input"] == {"path": "Cargo.toml", "lines": 5}
    )
    assert messages[3]["content"][0]["tool_use_id"] == use["id"] == messages[3]["metadata"]["parent_tool_use_id"]
    original = messages[2]["metadata"]["provider_raw"]["chibi"]["entry"]
    assert original["tool_call_id"] == entries[4]["tool_call_id"] and original["id"] == entries[4]["id"]
    assert messages[0]["created_at"] == "2026-01-01T00:00:05.000000Z"  # the system prompt's (the anchor is carried)
    assert entries[1]["timestamp"] == 1767225605
    # the canonical validator accepts it without any finding (provider_raw is not TS010)
    assert check(canon).findings == []
    kinds = Counter(
        f.message.split(" entry")[0] if "no canonical equivalent" in f.message else f.message[:25] for f in there
    )
    assert kinds["control_transfer"] == 3 and kinds["context_created"] == 1
    assert kinds["compaction"] == 0 and kinds["system_prompt_changed"] == 0  # they are messages now
    assert kinds["chibi records no model, p"] == 3  # the assistant messages and the tool call


def test_lossy_steps_are_located_once_each(tmp_path: Path) -> None:
    _, _, there, again = round_trip(FIXTURES / "default", tmp_path)
    assert all(f.rule == "TS900" and f.severity == "warning" for f in there + again)
    located = [(Path(f.path).name, f.line, f.message) for f in there]
    assert len(located) == len(set(located))
    names = Counter(Path(f.path).name for f in there)
    assert names == {
        # issue 17: the prompt and the summary are messages now; each flow_control marker and
        # each agent message's addressee (`to`) is reported where it is
        "1767225600-1767225666.jsonl": 5 + 2 + 1,
        "active.jsonl": 2 + 1 + 1,
        "manifest.json": 3,  # bloom filter, rotation policy, the archived partition
        "inbox.jsonl": 1,
        "context_meta.json": 1,
        "requests.jsonl": 1,
    }
    # converting back loses only the bloom filter, pointed at where the manifest was carried
    assert [(Path(f.path).name, f.line, f.pointer) for f in again] == [
        (
            "canonical.jsonl",
            1,
            "/metadata/provider_raw/chibi/context/manifest/partitions/0/bloom_file",
        )
    ]


@pytest.mark.samples
def test_samples_round_trip(samples: Path, tmp_path: Path) -> None:
    for name in ("doc-examples.v0.9.jsonl", "doc-examples.v0.10.jsonl"):
        values = read_lines(samples / "chibi" / name)
        # the docs list an inbox entry among the entries, and v0.10 elides four ids as "..."
        entries = [dict(v, id=str(uuid.uuid4())) if v["id"] == "..." else v for v in values if "entry_type" in v]
        src = tmp_path / name
        write_lines(src, entries)
        canon, back = tmp_path / f"{name}.canonical.jsonl", tmp_path / f"{name}.back.jsonl"
        there = convert("chibi", "canonical", src, canon)
        convert("canonical", "chibi", canon, back)
        assert read_lines(back) == entries
        # the doc's entries are not in time order: created_at is clamped, and that is reported
        # (v0.9's out-of-order entries are anchors, which are carried, not messages)
        assert any("clamped" in f.message for f in there) == name.endswith("v0.10.jsonl")


def test_single_file_round_trip_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = FIXTURES / "legacy09" / "transcript" / "active.jsonl"
    canon, back = tmp_path / "c.jsonl", tmp_path / "b.jsonl"
    assert main(["convert", "--from", "chibi", "--to", "canonical", str(src), str(canon)]) == 0
    assert main(["convert", "--from", "canonical", "--to", "chibi", str(canon), str(back)]) == 0
    assert back.read_bytes() == src.read_bytes()
    err = capsys.readouterr().err
    assert "flow_control_call entry has no canonical equivalent" in err
    assert main(["convert", "--from", "chibi", "--to", "canonical", str(src), str(canon)]) == 2  # exists


def test_canonical_to_chibi_fresh(tmp_path: Path) -> None:
    messages = read_lines(EXAMPLE)
    sid = next(m["session_id"] for m in messages if any(b["type"] == "thinking" for b in m["content"]))
    session = [m for m in messages if m["session_id"] == sid]
    src = tmp_path / "session.jsonl"
    write_lines(src, session)
    out = tmp_path / "ctx"
    lossy = convert("canonical", "chibi", src, out)
    report = check(out)
    assert report.findings == [] and report.files[0].extra["vocabulary"] == "v0.10"
    entries = read_lines(out / "transcript" / "active.jsonl")
    assert entries[0]["entry_type"] == "context_created"  # chibi starts every context so
    # a message's first entry keeps its ULID's 128 bits as the UUID
    assert str(ULID.from_uuid(uuid.UUID(entries[1]["id"]))) == session[0]["id"]
    thinking = [(i, j) for i, m in enumerate(session) for j, b in enumerate(m["content"]) if b["type"] == "thinking"]
    dropped = {(f.line, f.pointer) for f in lossy if f.message.startswith("thinking block")}
    assert dropped == {(i + 1, f"/content/{j}") for i, j in thinking}
    assert thinking
    images = [f for f in lossy if f.message.startswith("image block")]
    assert len(images) == sum(b["type"] == "image" for m in session for b in m["content"]) == 1
    assert check(out / "context.jsonl").findings == []


def test_canonical_to_chibi_refusals(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="sessions"):
        convert("canonical", "chibi", EXAMPLE, tmp_path / "x")
    assert not (tmp_path / "x").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n')
    with pytest.raises(InputError, match="canonical message is invalid"):
        convert("canonical", "chibi", bad, tmp_path / "y")


def test_chibi_to_canonical_refuses_unpaired_result(tmp_path: Path) -> None:
    values = read_lines(FIXTURES / "legacy09" / "transcript" / "active.jsonl")
    values[5]["tool_call_id"] = "nobody"
    src = tmp_path / "t.jsonl"
    write_lines(src, values)
    with pytest.raises(InputError, match=r"CB202 tool_result answers .nobody. but no earlier call"):
        convert("chibi", "canonical", src, tmp_path / "c.jsonl")
    assert not (tmp_path / "c.jsonl").exists()


def test_unanswered_tool_use_is_dropped(tmp_path: Path) -> None:
    canon = tmp_path / "c.jsonl"
    convert("chibi", "canonical", FIXTURES / "legacy09" / "transcript" / "active.jsonl", canon)
    messages = [m for m in read_lines(canon) if m["role"] != "tool"]
    for m in messages:
        m["metadata"].pop("provider_raw", None)
    write_lines(canon, messages)
    lossy = convert("canonical", "chibi", canon, tmp_path / "t.jsonl")
    assert any("never answered" in f.message and f.pointer == "/content/0" for f in lossy)
    assert not any(e["entry_type"] == "tool_call" for e in read_lines(tmp_path / "t.jsonl"))


def test_tampered_provenance_is_ignored(tmp_path: Path) -> None:
    canon = tmp_path / "c.jsonl"
    convert("chibi", "canonical", FIXTURES / "legacy09", canon)
    messages = read_lines(canon)
    messages[1]["metadata"]["provider_raw"]["chibi"]["entry"]["timestamp"] = "yesterday"
    write_lines(canon, messages)
    lossy = convert("canonical", "chibi", canon, tmp_path / "back")
    hit = [f for f in lossy if "provider_raw.chibi is not" in f.message]
    assert len(hit) == 1 and hit[0].line == 2 and hit[0].pointer.startswith("/metadata/provider_raw/chibi")
    assert check(tmp_path / "back").findings == []


def test_non_object_arguments_survive(tmp_path: Path) -> None:
    values = read_lines(FIXTURES / "legacy09" / "transcript" / "active.jsonl")
    values[4]["content"] = "not json at all"
    values[6]["content"] = '{ "message" :  "spaced" }'
    src = tmp_path / "t.jsonl"
    write_lines(src, values)
    canon, back = tmp_path / "c.jsonl", tmp_path / "b.jsonl"
    lossy = convert("chibi", "canonical", src, canon)
    assert [f.line for f in lossy if "not a JSON object" in f.message] == [5]
    convert("canonical", "chibi", canon, back)
    assert read_lines(back) == values


# -- property: chibi -> canonical -> chibi is the identity on what the mapping covers ----------

WORDS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
NAME = st.from_regex(r"[a-z][a-z0-9_]{0,11}", fullmatch=True)


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A valid transcript: anchors, turns, tool call pairs, flow control, in one vocabulary."""
    v010 = draw(st.booleans())
    ctx = "ctx"
    clock = [draw(st.integers(1_600_000_000, 1_900_000_000))]
    out: list[dict[str, Any]] = []

    def add(frm: str, to: str, content: str, et: str, **extra: Any) -> None:
        clock[0] += draw(st.integers(1, 400))
        out.append(
            {
                "id": str(uuid.UUID(int=draw(st.integers(0, 2**100)) << 20 | len(out))),
                "timestamp": clock[0],
                "from": frm,
                "to": to,
                "content": content,
                "entry_type": et,
                **extra,
            }
        )

    if draw(st.booleans()):
        add("system", ctx, "Context created", "context_created")
    for step in draw(
        st.lists(
            st.sampled_from(["user", "agent", "tool", "flow", "compact", "archive", "prompt"]),
            max_size=14,
        )
    ):
        if step == "user":
            add(
                "alice",
                ctx,
                draw(WORDS),
                "message",
                **({"role": "user", "flow_control": True} if v010 else {}),
            )
            if v010:
                add("alice", ctx, "", "control_transfer", flow_control=True)
        elif step == "agent":
            add(
                ctx,
                "alice" if v010 else "user",
                draw(WORDS),
                "message",
                **({"role": "agent"} if v010 else {}),
            )
        elif step == "tool":
            tool, tcid = draw(NAME), draw(st.from_regex(r"call_[A-Za-z0-9]{1,8}", fullmatch=True))
            args = draw(
                st.one_of(
                    st.dictionaries(NAME, st.one_of(st.integers(), WORDS), max_size=3).map(
                        lambda d: json.dumps(d, separators=(",", ":"), ensure_ascii=False)
                    ),
                    WORDS,
                )
            )
            add(ctx, tool, args, "tool_call", tool_call_id=tcid)
            add(tool, ctx, draw(WORDS), "tool_result", tool_call_id=tcid)
        elif step == "flow":
            if v010:
                add(ctx, "alice", draw(WORDS), "message", role="agent", flow_control=True)
                add(ctx, "alice", "", "control_transfer", flow_control=True)
            else:
                add(
                    ctx,
                    "call_user",
                    json.dumps({"message": draw(WORDS)}),
                    "flow_control_call",
                    tool_call_id="fc_1",
                )
                add(
                    "call_user",
                    ctx,
                    "Returning to user",
                    "flow_control_result",
                    tool_call_id="fc_1",
                )
        elif step == "compact":
            add("system", ctx, "Context compacted", "compaction", metadata={"summary": draw(WORDS)})
        elif step == "archive":
            add("system", ctx, "Context archived/cleared", "archival")
        else:
            add("system", ctx, draw(WORDS), "system_prompt_changed")
    return out


def write_context(root: Path, entries: list[dict[str, Any]], cuts: list[int], extras: dict[str, Any]) -> Path:
    """A chibi context directory holding `entries`, rotated after the indexes in `cuts`."""
    ctx = root / "ctx"
    t = ctx / "transcript"
    (t / "partitions").mkdir(parents=True)
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(entries))), len(entries)]
    chunks = [entries[a:b] for a, b in itertools.pairwise(bounds)]
    archived, active = chunks[:-1], chunks[-1]
    metas = []
    for chunk in archived:
        rel = f"partitions/{chunk[0]['timestamp']}-{chunk[-1]['timestamp']}.jsonl"
        write_lines(t / rel, chunk)
        tokens = sum(-(-len(e["content"].encode()) // 3) for e in chunk)
        metas.append(
            {
                "file": rel,
                "start_ts": chunk[0]["timestamp"],
                "end_ts": chunk[-1]["timestamp"],
                "entry_count": len(chunk),
                "token_count": tokens,
            }
        )
    write_lines(t / "active.jsonl", active)
    if metas:
        biggest = max([len(c) for c in archived] + [len(active) + 1])
        policy = {"max_entries": biggest, "max_age_seconds": 10**9, "max_tokens": 10**9}
        (t / "manifest.json").write_text(
            json.dumps(
                {
                    "version": 1,
                    "active_partition": "active.jsonl",
                    "partitions": metas,
                    "rotation_policy": policy,
                }
            )
        )
    start = max(
        (i for i, e in enumerate(entries) if e["entry_type"] in ("context_created", "compaction", "archival")),
        default=None,
    )
    head = (
        entries[start]
        if start is not None
        else {
            "id": str(uuid.uuid4()),
            "timestamp": 1,
            "from": "system",
            "to": "ctx",
            "content": "Context created",
            "entry_type": "context_created",
        }
    )
    rest = entries[start + 1 :] if start is not None else entries
    write_lines(
        ctx / "context.jsonl",
        [head, *(e for e in rest if e["entry_type"] != "system_prompt_changed")],
    )
    if "inbox" in extras:
        write_lines(ctx / "inbox.jsonl", extras["inbox"])
    if "meta" in extras:
        (ctx / "context_meta.json").write_text(json.dumps(extras["meta"]))
    return ctx


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    entries=transcripts().filter(bool),  # an empty transcript has no message to carry the rest
    cuts=st.lists(st.integers(1, 40), max_size=3),
    extras=st.fixed_dictionaries(
        {},
        optional={
            "inbox": st.lists(
                st.builds(
                    lambda c, ts: {
                        "id": str(uuid.uuid4()),
                        "timestamp": ts,
                        "from": "other",
                        "to": "ctx",
                        "content": c,
                    },
                    WORDS,
                    st.integers(0, 2**32),
                ),
                max_size=2,
            ),
            "meta": st.fixed_dictionaries(
                {},
                optional={
                    "last_combined_prompt": WORDS,
                    "system_prompt_md_mtime": st.integers(0, 2**32),
                },
            ),
        },
    ),
)
def test_round_trip_property(
    entries: list[dict[str, Any]],
    cuts: list[int],
    extras: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("prop")
    ctx = write_context(root, entries, cuts, extras)
    assert [f.format() for f in check(ctx).findings if f.severity == "error"] == []
    _, back, _, _ = round_trip(ctx, root)
    assert snapshot(back) == snapshot(ctx)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_synthetic_canonical_sessions_convert(seed: int, tmp_path: Path) -> None:
    from conformance.benchmarks.synthetic import messages

    msgs = list(messages(60, seed=seed))
    session = [m for m in msgs if m["session_id"] == msgs[0]["session_id"]]
    src = tmp_path / "s.jsonl"
    write_lines(src, session)
    convert("canonical", "chibi", src, tmp_path / "ctx")
    assert [f for f in check(tmp_path / "ctx").findings if f.severity == "error"] == []
    # and back (issue 9): no message is added and every message keeps its id, role and
    # content types; a message chibi cannot hold any block of (thinking only) is dropped and
    # was reported on the way there
    lossy = convert("chibi", "canonical", tmp_path / "ctx", tmp_path / "again.jsonl")
    again = read_lines(tmp_path / "again.jsonl")
    assert len(again) <= len(session)
    original = {m["id"]: m for m in session}
    for m in again:
        o = original[m["id"]]
        assert m["role"] == o["role"]
        kept = [b["type"] for b in o["content"] if b["type"] in ("text", "tool_use", "tool_result")]
        assert [b["type"] for b in m["content"]] == kept, m["id"]
        uses = [b["id"] for b in m["content"] if b["type"] == "tool_use"]
        assert uses == [b["id"] for b in o["content"] if b["type"] == "tool_use"]
    assert lossy is not None


def test_invalid_directory_output_is_refused_and_removed(tmp_path: Path) -> None:
    canon = tmp_path / "c.jsonl"
    convert("chibi", "canonical", FIXTURES / "legacy09", canon)
    messages = read_lines(canon)
    messages[1]["metadata"]["provider_raw"]["chibi"]["entry"]["id"] = "not-a-uuid"
    write_lines(canon, messages)
    with pytest.raises(InputError, match="CB101"):
        convert("canonical", "chibi", canon, tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def test_a_pre_partition_context_converts_and_comes_back_in_the_layout_chibi_migrates_it_to(
    tmp_path: Path,
) -> None:
    # chibi before 0.5.1 kept one transcript.jsonl beside context.jsonl (upgrade notes,
    # "0.5.0 -> 0.5.1"); it was ignored, so converting produced nothing from it
    old = tmp_path / "default"
    old.mkdir()
    entries = FIXTURES / "legacy09" / "transcript" / "active.jsonl"
    (old / "transcript.jsonl").write_bytes(entries.read_bytes())
    (old / "context.jsonl").write_bytes((FIXTURES / "legacy09" / "context.jsonl").read_bytes())
    canon, back = tmp_path / "c.jsonl", tmp_path / "back"
    convert("chibi", "canonical", old, canon)
    (tmp_path / "ref").mkdir()
    round_trip(FIXTURES / "legacy09", tmp_path / "ref")
    assert len(read_lines(canon)) == len(read_lines(tmp_path / "ref" / "canonical.jsonl")) > 0
    convert("canonical", "chibi", canon, back)
    assert (back / "transcript" / "active.jsonl").read_bytes() == entries.read_bytes()


def test_canonical_metadata_chibi_cannot_hold_is_named_field_by_field(tmp_path: Path) -> None:
    # issue 17: every metadata value chibi has no field for is named in the message's one
    # lossy line, including another provider's provider_raw and a parent_tool_use_id that
    # chibi's tool pairing does not imply; a tool message's parent (its own call) is kept
    user = {
        "id": str(ULID()),
        "session_id": "default",
        "role": "user",
        "content": [{"type": "text", "text": "hi"}],
        "metadata": {"parent_tool_use_id": "tu_outer", "provider_raw": {"anthropic": {"x": 1}}},
        "created_at": "2026-01-01T00:00:00.000000Z",
        "schema_version": 1,
    }
    src = tmp_path / "in.jsonl"
    write_lines(src, [user])
    lost = [f for f in convert("canonical", "chibi", src, tmp_path / "out") if "no field for" in f.message]
    assert [(f.line, f.pointer) for f in lost] == [(1, "/metadata")]
    assert "parent_tool_use_id" in lost[0].message and "provider_raw.anthropic" in lost[0].message
    # the fixture's tool messages carry parent_tool_use_id = the call they answer: not a loss
    (tmp_path / "rt").mkdir()
    canon, _, _, again = round_trip(FIXTURES / "default", tmp_path / "rt")
    tool_parents = [m for m in read_lines(canon) if m["metadata"].get("parent_tool_use_id")]
    assert tool_parents and not [f for f in again if "parent_tool_use_id" in f.message]
