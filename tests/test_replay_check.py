"""`turnspec replay-check`: verdicts per session and target (issue 15).

The refusal and loss kinds are each planted in a hand-built session and replayed onto a
small fake adapter whose capabilities and wire record the test sets, so each expectation
follows from the spec text (§7.2, §7.3, §8.4, §6.2, §6.5), not from an adapter's output.
The reference adapters are then held to what the contract says of every adapter.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
import shared_paths

from conformance.adapters import registry as adapter_registry
from conformance.adapters.base import AdapterOptions, CriticalBlockError, ToolIdMap, WireRequest, log_block_dropped
from conformance.cli import main
from conformance.replay import REFUSED, Target, replay_check, target
from conformance.replay.check import LOSSY, OK
from conformance.wire.api import Framing, Located, Probes, ToolIdRule, WireApi

SAMPLES = shared_paths.SAMPLES
ULIDS = iter(f"01KR3QB{n:019d}" for n in range(1, 10_000))
CAPS = {
    "supports_thinking": True,
    "supports_images": True,
    "supports_tools": True,
    "supports_system_prompt": True,
    "supports_structured_output": False,
    "supports_streaming": True,
    "supports_streaming_tool_calls": True,
    "supports_parallel_tool_calls": True,
    "supports_prompt_caching": False,
    "supports_system_messages_in_list": False,
    "max_context_tokens": 1000,
    "max_output_tokens": 100,
    "accepted_image_media_types": ["image/png", "image/jpeg"],
}


def _sig_probe(body: Any) -> list[Located]:
    return [
        Located(f"/messages/{i}/signature", m["signature"]) for i, m in enumerate(body["messages"]) if "signature" in m
    ]


def _id_probe(body: Any) -> list[Located]:
    return [Located(f"/messages/{i}/call_id", m["call_id"]) for i, m in enumerate(body["messages"]) if "call_id" in m]


FAKE_API = WireApi(
    name="fake-chat",
    title="Fake Chat API",
    docs=(),
    request_paths=(re.compile(r"/fake$"),),
    framing=Framing.SSE,
    is_streaming=lambda url, body: False,
    schema_dir="fake",
    tool_ids=ToolIdRule(pattern=re.compile(r"call_[a-z0-9]+"), max_length=12),
    probes=Probes(signatures=_sig_probe, tool_use_ids=_id_probe),
)


class FakeAdapter:
    """An adapter whose behaviour each test sets: capabilities, drops, ids, signatures."""

    name = "fake"
    provider = "fake"
    wire_api = FAKE_API

    def __init__(self, **caps: Any) -> None:
        self.capabilities = {**CAPS, **caps}
        self.estimate = 10
        self.drop_thinking = False
        self.critical = False
        self.explode = False
        self.send_signatures = False
        self.ids: dict[str, str] = {}
        self._maps: dict[str, ToolIdMap] = {}
        self.log = logging.getLogger("fake.adapter")

    def from_wire_response(self, *a: Any) -> Any:
        raise NotImplementedError("replay-check never parses responses")

    def stream_response(self, *a: Any) -> Any:
        raise NotImplementedError("replay-check never parses streams")

    def from_wire_request(self, *a: Any) -> Any:
        raise NotImplementedError("replay-check never reads requests back")

    def tool_id_map(self, session_id: str) -> ToolIdMap:
        return self._maps.setdefault(session_id, ToolIdMap("fake", lambda: "call_new"))

    def estimate_input_tokens(self, messages: list[Any], tools: list[Any]) -> int:
        return self.estimate

    def to_wire(self, messages: list[Any], tools: list[Any], options: AdapterOptions) -> WireRequest:
        if self.explode:
            raise ValueError("cannot render")
        out: list[dict[str, Any]] = []
        for m in messages:
            for b in m["content"]:
                if b["type"] == "thinking":
                    if self.critical:
                        raise CriticalBlockError(adapter="fake", session_id=m["session_id"], message_id=m["id"],
                                                 block_type="thinking", reason="no thinking here")  # fmt: skip
                    if self.drop_thinking:
                        log_block_dropped(self.log, adapter="fake", session_id=m["session_id"], message_id=m["id"],
                                          block_type="thinking", reason="no thinking here")  # fmt: skip
                    elif self.send_signatures and b.get("signature"):
                        out.append({"signature": b["signature"]})
                elif b["type"] == "tool_use":
                    wire_id = self.ids.get(b["id"], "call_ok")  # a planted id bypasses the (refusing) map
                    out.append({"call_id": wire_id})
        return WireRequest("POST", "/fake", {}, {"messages": out})


def msg(role: str, *blocks: dict[str, Any], session: str = "s1", provider: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if provider:
        meta = {"provider": provider, "model": f"{provider}:m"}
    return {"id": next(ULIDS), "session_id": session, "role": role, "content": list(blocks), "metadata": meta,
            "created_at": "2026-05-08T12:00:00.000000Z", "schema_version": 1}  # fmt: skip


def text(t: str = "hi") -> dict[str, Any]:
    return {"type": "text", "text": t}


def write(tmp_path: Path, *messages: dict[str, Any], name: str = "t.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return p


def run_one(path: Path, adapter: Any, **kw: Any) -> Any:
    [v] = list(replay_check([path], [Target("fake", adapter, "fake:m")], **kw))
    return v


def rules_of(v: Any) -> list[str]:
    return [f.rule for f in v.findings]


IMAGE = {"type": "image", "source": {"kind": "base64", "data": "iVBORw0KGgo="}, "media_type": "image/png"}


def test_plain_text_session_is_ok(tmp_path: Path) -> None:
    v = run_one(write(tmp_path, msg("user", text()), msg("assistant", text())), FakeAdapter())
    assert (v.verdict, v.findings, v.messages) == (OK, [], 2)


def test_images_refused_without_supports_images_located_at_the_block(tmp_path: Path) -> None:
    p = write(tmp_path, msg("user", text()), msg("user", text(), IMAGE), msg("user", IMAGE))
    v = run_one(p, FakeAdapter(supports_images=False))
    assert v.verdict == REFUSED
    [f] = v.findings
    assert (f.rule, f.line, f.pointer) == ("RC001", 2, "/content/1")
    assert "2 in this session" in f.message


def test_image_media_type_outside_the_accepted_list_is_refused(tmp_path: Path) -> None:
    gif = {**IMAGE, "media_type": "image/GIF"}
    png_upper = {**IMAGE, "media_type": "image/PNG"}  # IANA types are case-insensitive
    v = run_one(write(tmp_path, msg("user", png_upper, gif)), FakeAdapter())
    assert [(f.rule, f.pointer) for f in v.findings] == [("RC002", "/content/1/media_type")]


def test_tool_turns_refused_without_supports_tools(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "tu_01KR3QAYG2TA8P4VHWVDGA4SNR", "name": "f", "input": {}}
    v = run_one(write(tmp_path, msg("user", text()), msg("assistant", use)), FakeAdapter(supports_tools=False))
    assert v.verdict == REFUSED and rules_of(v) == ["RC003"]


def test_system_prompt_refused_without_supports_system_prompt(tmp_path: Path) -> None:
    v = run_one(write(tmp_path, msg("system", text()), msg("user", text())), FakeAdapter(supports_system_prompt=False))
    assert v.verdict == REFUSED and rules_of(v) == ["RC004"] and v.findings[0].line == 1


def test_history_longer_than_the_context_by_the_adapters_estimate_is_refused(tmp_path: Path) -> None:
    a = FakeAdapter()
    a.estimate = 1001
    v = run_one(write(tmp_path, msg("user", text())), a)
    assert rules_of(v) == ["RC005"] and "1001" in v.findings[0].message
    a.estimate = 1000  # at the limit is fine
    assert run_one(write(tmp_path, msg("user", text())), a).verdict == OK


THINK = {"type": "thinking", "text": "hmm", "signature": "sig-from-elsewhere"}


def test_a_dropped_block_is_lossy_and_strict_makes_it_fail(tmp_path: Path) -> None:
    a = FakeAdapter()
    a.drop_thinking = True
    p = write(tmp_path, msg("user", text()), msg("assistant", {"type": "thinking", "text": "t"}, text()))
    v = run_one(p, a)
    assert v.verdict == LOSSY
    [f] = v.findings
    assert (f.rule, f.line, f.severity) == ("RC101", 2, "warning")
    assert run_one(p, a, strict=True).verdict == REFUSED


def test_a_critical_block_the_target_cannot_carry_is_a_refusal(tmp_path: Path) -> None:
    a = FakeAdapter()
    a.critical = True
    v = run_one(write(tmp_path, msg("user", text()), msg("assistant", {"type": "thinking", "text": "t"})), a)
    assert rules_of(v) == ["RC006"] and v.findings[0].line == 2


def test_an_adapter_that_fails_to_render_refuses_with_the_cause(tmp_path: Path) -> None:
    a = FakeAdapter()
    a.explode = True
    v = run_one(write(tmp_path, msg("user", text())), a)
    assert rules_of(v) == ["RC007"] and "cannot render" in v.findings[0].message


def test_foreign_signature_sent_is_refused_dropped_is_lossy_silent_is_an_error(tmp_path: Path) -> None:
    p = write(tmp_path, msg("user", text()), msg("assistant", THINK, text(), provider="other"))
    a = FakeAdapter()
    a.send_signatures = True
    v = run_one(p, a)
    assert [(f.rule, f.line, f.pointer) for f in v.findings] == [("RC301", 2, "/content/0/signature")]
    a.send_signatures, a.drop_thinking = False, True
    assert (run_one(p, a).verdict, rules_of(run_one(p, a))) == (LOSSY, ["RC101"])
    a.drop_thinking = False  # the signature vanished without the §7.3 WARN
    assert rules_of(run_one(p, a)) == ["RC102"]


def test_own_signature_is_not_foreign(tmp_path: Path) -> None:
    a = FakeAdapter()
    a.send_signatures = True
    p = write(tmp_path, msg("user", text()), msg("assistant", THINK, provider="fake"))
    assert run_one(p, a).verdict == OK
    # with no provenance on the message, --from names the source provider
    p2 = write(tmp_path, msg("user", text()), msg("assistant", THINK), name="b.jsonl")
    assert run_one(p2, a).verdict == OK
    assert rules_of(run_one(p2, a, source_provider="other")) == ["RC301"]


def test_tool_ids_the_target_api_rejects_and_collisions(tmp_path: Path) -> None:
    u1 = {"type": "tool_use", "id": "tu_01KR3QAYG2TA8P4VHWVDGA4SNR", "name": "f", "input": {}}
    u2 = {**u1, "id": "tu_01KR3QAYG2TA8P4VHWVDGA4SNS"}
    a = FakeAdapter()
    a.ids = {u1["id"]: "call_much_too_long_for_the_api", u2["id"]: "call_ok"}
    v = run_one(write(tmp_path, msg("user", text()), msg("assistant", u1, u2)), a)
    assert rules_of(v) == ["RC201"] and "/messages/0/call_id" in v.findings[0].message
    b = FakeAdapter()
    b.ids = {u1["id"]: "call_same", u2["id"]: "call_same"}
    v = run_one(write(tmp_path, msg("user", text()), msg("assistant", u1, u2), name="c.jsonl"), b)
    assert rules_of(v) == ["RC202"] and "/messages/1/call_id" in v.findings[0].message


def test_interleaved_sessions_are_checked_in_parts_and_said_so(tmp_path: Path) -> None:
    p = write(tmp_path, msg("user", text()), msg("user", text(), session="s2"), msg("user", text()))
    vs = list(replay_check([p], [Target("fake", FakeAdapter(), "fake:m")]))
    assert [(v.session_id, v.part) for v in vs] == [("s1", 1), ("s2", 1), ("s1", 2)]


# -- the reference adapters, held to what the contract says of every adapter ----------


def reference_adapters() -> list[str]:
    return sorted(adapter_registry.available())


@pytest.mark.parametrize("name", reference_adapters())
def test_every_reference_adapter_carries_a_plain_text_session(tmp_path: Path, name: str) -> None:
    p = write(tmp_path, msg("user", text("What is in README?")), msg("assistant", text("A readme."), provider="x"))
    [v] = list(replay_check([p], [target(name)]))
    assert v.verdict == OK, v.findings


@pytest.mark.parametrize("name", reference_adapters())
def test_no_reference_adapter_sends_foreign_opaque_state(tmp_path: Path, name: str) -> None:
    """Contract §4.4: redacted thinking cross-provider is dropped and logged; §6.5: only the
    adapter that wrote provider state reads it. A foreign signature never reaches the wire."""
    redacted = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw"}
    p = write(
        tmp_path,
        msg("user", text()),
        msg(
            "assistant",
            {**THINK, "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
            redacted,
            text("ok"),
            provider="some-other-provider",
        ),
        msg("user", text("and?")),
    )
    [v] = list(replay_check([p], [target(name)]))
    assert not {"RC301", "RC102"} & set(rules_of(v)), v.findings
    assert v.verdict in (OK, LOSSY)


# -- the command ----------------------------------------------------------------------


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(["replay-check", *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_exit_codes_outputs_and_no_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok = write(tmp_path, msg("user", text()), msg("assistant", text()))
    before = _tree(tmp_path)
    rc, out, _ = cli(capsys, str(ok), "--to", "anthropic", "-o", "json")
    assert rc == 0, out
    data = json.loads(out)
    assert [s["verdict"] for s in data["sessions"]] == ["ok"]
    assert data["summary"] == {"anthropic": {"ok": 1, "lossy": 0, "refused": 0}}
    assert _tree(tmp_path) == before
    rc, out, err = cli(capsys, str(ok))
    assert rc == 2 and "--to" in err
    rc, out, err = cli(capsys, str(tmp_path / "missing.jsonl"), "--to", "anthropic")
    assert rc == 2 and "missing.jsonl" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1\n')
    rc, out, err = cli(capsys, str(bad), "--to", "anthropic")
    assert rc == 2 and "bad.jsonl:1" in out + err


def test_cli_refused_session_exits_1_and_matrix_lists_every_adapter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = "tests.test_replay_check:no_images_adapter"
    p = write(tmp_path, msg("user", text(), IMAGE))
    rc, out, err = cli(capsys, str(p), "--to", fake)
    assert rc == 1, out + err
    assert "RC001" in out and "refused" in out
    rc, out, err = cli(capsys, str(p), "--matrix")
    assert rc in (0, 1), out + err
    for name in reference_adapters():
        assert re.search(rf"^{re.escape(name)}\s+\d+\s+\d+\s+\d+$", out, re.M), out


def no_images_adapter() -> FakeAdapter:
    return FakeAdapter(supports_images=False)


def test_sqlite_store_gives_the_same_verdicts_as_its_jsonl(tmp_path: Path) -> None:
    from conformance.convert import convert

    example = Path(__file__).resolve().parent.parent / "conformance" / "data" / "examples" / "session.jsonl"
    db = tmp_path / "store.db"
    convert("canonical", "sqlite", example, db)
    targets = [target(n) for n in reference_adapters()]
    a = [(v.session_id, v.target, v.verdict, sorted(rules_of(v))) for v in replay_check([example], targets)]
    b = [(v.session_id, v.target, v.verdict, sorted(rules_of(v))) for v in replay_check([db], targets)]
    assert sorted(a) == sorted(b) and len(a) == 3 * len(targets)
    assert [p.name for p in tmp_path.iterdir()] == ["store.db"]  # no -wal/-shm left


KNOWN_BLOCKS = {"text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking"}


@pytest.mark.samples
@pytest.mark.parametrize("fmt", ["gpt2099", "geppetto"])
def test_converted_real_samples_get_the_expected_verdicts(fmt: str) -> None:
    """Every session gets a verdict for every adapter; none is refused (every reference
    adapter carries text, tools, images and system prompts), and a session holding a block
    type the canonical format does not define (tolerated by §10.3) is lossy everywhere,
    since no adapter can put an unknown block on the wire."""
    root = SAMPLES / fmt
    if not root.is_dir():
        pytest.skip(f"{root} is absent (real samples live in ../shared)")
    targets = [target(n) for n in reference_adapters()]
    from conformance.replay import ReplaySummary

    summary = ReplaySummary()
    verdicts = list(replay_check([root], targets, summary=summary))
    assert verdicts, "no session read from the samples"
    assert {v.target for v in verdicts} == set(reference_adapters())
    for v in verdicts:
        assert v.verdict != REFUSED, (v.session_id, v.target, v.findings)
    # every input the converter refused is named, with a reason
    for f in summary.problems:
        assert f.rule == "RC900" and f.path.startswith(str(root)), f


def test_sessions_with_unknown_blocks_are_lossy_for_every_adapter(tmp_path: Path) -> None:
    p = write(tmp_path, msg("user", text(), {"type": "document", "source": {"kind": "url", "data": "https://x"}}))
    for name in reference_adapters():
        [v] = list(replay_check([p], [target(name)]))
        assert v.verdict == LOSSY and rules_of(v) == ["RC101"], (name, v.findings)


def test_chibi_context_is_converted_and_checked(capsys: pytest.CaptureFixture[str]) -> None:
    ctx = Path(__file__).resolve().parent / "chibi" / "fixtures" / "default"
    rc, out, err = cli(capsys, str(ctx), "--matrix", "-o", "json")
    assert rc in (0, 1), out + err
    data = json.loads(out)
    assert data["sessions"] and not data["input_errors"]
    assert {s["target"] for s in data["sessions"]} == set(reference_adapters())


def test_cli_sarif_and_github_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    p = write(tmp_path, msg("user", text(), IMAGE))
    fake = "tests.test_replay_check:no_images_adapter"
    rc, out, _ = cli(capsys, str(p), "--to", fake, "-o", "sarif")
    assert rc == 1
    [result] = json.loads(out)["runs"][0]["results"]
    assert result["ruleId"] == "RC001" and result["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    summary = tmp_path.parent / f"{tmp_path.name}-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    rc, out, _ = cli(capsys, str(p), "--to", fake, "-o", "github")
    assert rc == 1 and out.startswith("::error file=") and "RC001" in out
    assert "| RC001 | error | 1 |" in summary.read_text()


@pytest.mark.parametrize("name", reference_adapters())
def test_every_reference_adapter_refuses_what_it_declares_it_cannot_take(tmp_path: Path, name: str) -> None:
    """Refusals follow each adapter's own declarations (§7.2), whatever they are: a media
    type outside `accepted_image_media_types`, a history past `max_context_tokens` by the
    adapter's own estimate, and a critical block it cannot carry (§4.2.2)."""
    t = target(name)
    caps = t.adapter.capabilities
    caps = caps.model_dump() if hasattr(caps, "model_dump") else dict(caps)
    odd = {**IMAGE, "media_type": "image/x-turnspec-unknown"}
    [v] = list(replay_check([write(tmp_path, msg("user", text(), odd), name="img.jsonl")], [t]))
    assert ("RC002" if caps["supports_images"] else "RC001") in rules_of(v)
    assert v.verdict == REFUSED

    words = " ".join(["lorem"] * 2000)
    need = caps["max_context_tokens"] // t.adapter.estimate_input_tokens([msg("user", text(words))], []) + 2
    long = [msg("user" if i % 2 == 0 else "assistant", text(words)) for i in range(min(need, 20_000))]
    [v] = list(replay_check([write(tmp_path, *long, name="long.jsonl")], [t]))
    assert "RC005" in rules_of(v) and v.verdict == REFUSED

    unknown = {"type": "hologram", "data": "..."}
    critical = msg("user", text(), unknown)
    critical["metadata"]["critical"] = True
    [v] = list(replay_check([write(tmp_path, critical, name="crit.jsonl")], [t]))
    assert rules_of(v) == ["RC006"] and v.verdict == REFUSED
    del critical["metadata"]["critical"]
    [v] = list(replay_check([write(tmp_path, critical, name="lossy.jsonl")], [t]))
    assert rules_of(v) == ["RC101"] and v.verdict == LOSSY
