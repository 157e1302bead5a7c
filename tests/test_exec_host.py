"""The exec host (conformance/adapters/exec, docs/exec-protocol.md): a reference adapter served
as a child gives the report it gives imported; a child that crashes, hangs, writes garbage or
breaks the protocol gives one located failing case and a completed run; an operation not
offered skips its cases; manifests, --validate-protocol and the process's limits."""

from __future__ import annotations

import json
import shlex
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import registry
from conformance.adapters.exec import ExecSettings, codec, process
from conformance.adapters.exec.client import MAX_RESTARTS
from conformance.adapters.exec.faults import replay
from conformance.adapters.exec.manifest import parse_ref
from conformance.core.errors import InputError
from conformance.core.findings import Selection
from conformance.suite.report import RENDERERS
from conformance.suite.runner import SuiteConfig, SuiteReport, run

ROOT = Path(__file__).resolve().parents[1]
PY = shlex.quote(sys.executable)
CHILD = shlex.quote(str(ROOT / "tests" / "exec_child.py"))
REFERENCE = ("anthropic", "openai-chat", "gemini", "ollama", "openai-responses", "bedrock")


def served(name: str) -> str:
    return f"exec:{PY} -m conformance.adapters.exec.serve {name}"


def child(tmp_path: Path, mode: str, op: str, *, always: bool = False) -> str:
    flag = shlex.quote(str(tmp_path / f"flag-{mode}-{op}"))
    return f"exec:{PY} {CHILD} {mode} {op} {flag}" + (" always" if always else "")


def conform(ref: str, select: str = "", *, timeout: float | None = None, validate: bool = False) -> SuiteReport:
    sel = Selection(select=tuple(select.split(","))) if select else Selection()
    config = SuiteConfig.for_refs(
        [ref], samples=None, peers=False, selection=sel, exec_settings=ExecSettings(timeout, validate)
    )
    return run(config)


def cases(report: SuiteReport) -> list[tuple[Any, ...]]:
    return [(o.rule, o.adapter, o.status, o.subject, o.message, o.capability, o.measure) for o in report.outcomes]


def json_report(report: SuiteReport) -> dict[str, Any]:
    doc = json.loads(RENDERERS["json"](report))
    doc["summary"].pop("elapsed_s")
    return doc


# -- the key property: the host hides no difference -----------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", REFERENCE)
def test_a_served_reference_adapter_gets_the_same_verdicts_case_by_case(name: str) -> None:
    direct = run(SuiteConfig.for_refs([name], samples=None))
    through = run(SuiteConfig.for_refs([served(name)], samples=None))
    assert len(direct.outcomes) > 300
    assert cases(through) == cases(direct)
    assert json_report(through) == json_report(direct)


def test_a_served_adapter_declares_what_the_python_one_does() -> None:
    a, b = registry.load("anthropic"), registry.load(served("anthropic"))
    try:
        assert (b.name, b.provider, b.wire_api) == (a.name, a.provider, a.wire_api)
        assert dict(b.capabilities) == dict(a.capabilities)
        assert b.provider_tool_id.pattern == a.provider_tool_id.pattern
        assert b.cassette_folders == ("anthropic",)
        assert hasattr(b, "cancel")  # CancellableAdapter: the child offers cancel
    finally:
        b.close()  # type: ignore[attr-defined]


def test_the_cassettes_read_and_the_report_label_are_the_adapters() -> None:
    report = conform(served("anthropic"), "TC101")
    assert report.adapters == ["anthropic"]
    assert report.recordings["folders"] == {"turnspec/anthropic": 7}
    assert {o.status for o in report.outcomes} == {"pass"}


# -- faults: one located failing case, a completed run -------------------------------------


def failing(report: SuiteReport) -> list[Any]:
    return [o for o in report.outcomes if o.status == "fail"]


def assert_one_fault(report: SuiteReport, *words: str) -> Any:
    bad = failing(report)
    assert len(bad) == 1, [o.message for o in bad]
    for w in words:
        assert w in bad[0].message, bad[0].message
    assert sum(o.status == "pass" for o in report.outcomes) > 5  # the run went on, restarted
    return bad[0]


def test_a_child_that_dies_fails_the_case_naming_its_exit_status_and_stderr(tmp_path: Path) -> None:
    report = conform(child(tmp_path, "crash", "parse"), "TC101")
    bad = assert_one_fault(report, "during `parse`", "exit status 3", "boom on parse")
    assert bad.subject.endswith("#0")  # the interaction it died on
    assert "boom on parse" in bad.traceback  # its stderr goes with the case


def test_a_child_that_hangs_is_stopped_after_the_timeout(tmp_path: Path) -> None:
    report = conform(child(tmp_path, "hang", "parse"), "TC101", timeout=1)
    assert_one_fault(report, "no answer to `parse` within 1 s", "restarted")


def test_a_child_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    report = conform(child(tmp_path, "hang-hard", "parse"), "TC101", timeout=0.5)
    assert_one_fault(report, "within 0.5 s")


def test_a_child_that_stops_reading_cannot_block_a_large_request() -> None:
    # a request larger than the pipe (a conversation with images) to a child that no longer
    # reads its input: a plain write would block for ever, before the answer's deadline
    code = "import time; print('up', flush=True); time.sleep(60)"
    c = process.Child([sys.executable, "-c", code], cwd=None, env=None)
    try:
        assert c.receive(10) == b"up"
        started = time.monotonic()
        with pytest.raises(process.Timeout, match=r"read no more of the request within 0\.5 s"):
            c.send(b"x" * (8 << 20), 0.5)
        assert time.monotonic() - started < 5
    finally:
        c.stop(grace=0.3)


def test_a_large_request_to_a_child_that_reads_it_is_written_whole() -> None:
    code = "import sys; line = sys.stdin.buffer.readline(); print(len(line), flush=True)"
    c = process.Child([sys.executable, "-c", code], cwd=None, env=None)
    try:
        c.send(b"y" * (8 << 20), 30)
        assert c.receive(30) == str((8 << 20) + 1).encode()
    finally:
        c.stop(grace=0.3)


def test_stop_sends_sigkill_after_the_grace() -> None:
    code = "import signal, time, sys; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    c = process.Child([sys.executable, "-c", code], cwd=None, env=None)
    assert c.receive(10) == b"up"
    started = time.monotonic()
    c.stop(grace=0.3)
    assert c.proc.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("mode", "words"),
    [
        # the stray line quoted, so the author sees what their child printed
        ("garbage", ("protocol error in the answer to `parse`", "child output line", "not JSON", "'this is not json'")),
        ("wrong-id", ("protocol error in the answer to `parse`", "at /id", "the request was")),
    ],
)
def test_a_malformed_answer_is_a_located_protocol_error(tmp_path: Path, mode: str, words: tuple[str, ...]) -> None:
    assert_one_fault(conform(child(tmp_path, mode, "parse"), "TC101"), *words)


def test_a_child_that_exits_mid_stream_is_one_failing_case(tmp_path: Path) -> None:
    # TC601's check reads past a stream it cannot read (TC601 is about the events): the
    # runner still fails one case for the fault it swallowed
    bad = assert_one_fault(conform(child(tmp_path, "die-mid-stream", "x"), "TC601"), "`stream_feed`", "exit status 4")
    assert bad.subject == "recorded_responses (exec)"


def test_a_line_past_the_limit_is_refused_not_buffered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "MAX_LINE_BYTES", 1024 * 1024)
    assert_one_fault(conform(child(tmp_path, "huge", "parse"), "TC101"), "longer than 1048576 bytes")


def test_stderr_spam_is_drained_and_only_its_end_kept(tmp_path: Path) -> None:
    assert failing(conform(child(tmp_path, "spam", "parse"), "TC101")) == []  # 6 MB of stderr: no deadlock
    bad = assert_one_fault(conform(child(tmp_path, "spam-crash", "parse"), "TC101"), "exit status 3")
    assert "the last words" in bad.message and len(bad.message) < 1000
    assert len(bad.traceback) < 6000


def test_a_child_that_keeps_dying_is_given_up_and_the_run_completes(tmp_path: Path) -> None:
    report = conform(child(tmp_path, "crash", "any", always=True), "TC101")
    gave_up = [o for o in failing(report) if f"gave up after {MAX_RESTARTS} restarts in a row" in o.message]
    died = [o for o in failing(report) if "exit status 3" in o.message and o not in gave_up]
    assert len(died) == 1 + MAX_RESTARTS  # the first child and each restart
    assert gave_up and all(o.status == "fail" for o in report.outcomes)
    # the give-up names the fault that made it, with the end of the child's stderr
    assert all("the last fault: the child ended during `" in o.message for o in gave_up), gave_up[0].message
    assert "exit status 3); stderr: exec_child: boom on" in gave_up[0].message


def test_an_adapter_that_cannot_start_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="could not start the adapter"):
        registry.load(f"exec:{tmp_path / 'no-such-program'}")
    with pytest.raises(InputError, match=r"could not start the adapter.*exit status"):
        registry.load(f"exec:{PY} -c 'import sys; sys.exit(5)'")


# -- operations not offered skip, never pass -----------------------------------------------


@pytest.mark.parametrize(
    ("op", "select", "words"),
    [
        ("stream", "TC601,TC606", "not offered: the exec adapter does not offer `stream`"),
        ("estimate", "TC503", "not offered: the exec adapter does not offer `estimate`"),
        ("tool_id_map", "TC301,TC302", "not offered: the exec adapter does not offer `tool_id_map`"),
        ("read_request", "TC102,TC802", "adapter does not read requests"),
        ("cancel", "TC611", "no cancel(request_id) hook"),
    ],
)
def test_an_operation_not_offered_skips_its_cases(tmp_path: Path, op: str, select: str, words: str) -> None:
    report = conform(child(tmp_path, "drop-op", op), select)
    mine = [o for o in report.outcomes if o.message.startswith(words) or words in o.message]
    assert mine and all(o.status == "skip" for o in mine)
    assert failing(report) == []
    full = conform(served("anthropic"), select)  # offered, the same checks pass
    assert [o for o in full.outcomes if words in o.message] == []


# -- --validate-protocol -----------------------------------------------------------------


def test_validate_protocol_fails_an_off_schema_answer(tmp_path: Path) -> None:
    ref = child(tmp_path, "off-schema", "render")
    assert failing(conform(ref, "TC104")) == []  # unchecked, the extra field is ignored
    (tmp_path / "flag-off-schema-render").unlink()
    bad = assert_one_fault(conform(ref, "TC104", validate=True), "off render-result.json", "at /result/unexpected")
    assert "child output line" in bad.message


def test_validate_protocol_passes_the_reference_child() -> None:
    report = conform(served("openai-chat"), "TC1,TC6", validate=True)
    assert failing(report) == [] and len(report.outcomes) > 50


# -- manifests and references ------------------------------------------------------------


def test_a_manifest_gives_command_cwd_env_and_timeout(tmp_path: Path) -> None:
    (tmp_path / "turnspec-exec.toml").write_text(
        f'command = [{json.dumps(sys.executable)}, "exec_child.py", "spam", "none", "flag"]\n'
        f"cwd = {json.dumps(str(ROOT / 'tests'))}\n"
        'env = {EXEC_CHILD_ADAPTER = "openai-chat"}\n'
        "timeout = 7.5\n"
    )
    ref = f"exec:{tmp_path / 'turnspec-exec.toml'}"
    cfg = parse_ref(ref)
    assert cfg.timeout == 7.5 and cfg.cwd == ROOT / "tests" and cfg.env == {"EXEC_CHILD_ADAPTER": "openai-chat"}
    assert parse_ref(ref, ExecSettings(timeout=2)).timeout == 2  # --exec-timeout wins
    a = registry.load(ref)  # exec_child.py found relative to cwd, the adapter chosen by env
    try:
        assert a.name == "openai-chat"
    finally:
        a.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('command = ["x"]\nmodel = 1\n', "unknown key 'model'"),
        ("command = []\n", "command: a non-empty list"),
        ('command = "x"\ntimeout = 0\n', "timeout must be a number of seconds > 0"),
        ('command = "x"\ncwd = "nowhere"\n', "is not a directory"),
        ("command = [\n", "not TOML"),
    ],
)
def test_a_bad_manifest_is_a_one_line_error(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "m.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=r"m\.toml") as info:
        parse_ref(f"exec:{path}")
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_manifest_that_is_no_file_is_refused_without_reading_it(tmp_path: Path) -> None:
    import os

    os.mkfifo(tmp_path / "fifo.toml")  # opening it would block
    (tmp_path / "zero.toml").symlink_to("/dev/zero")  # reading it would never end
    (tmp_path / "big.toml").write_bytes(b"# " + b"x" * (2 * 1024 * 1024))
    (tmp_path / "bytes.toml").write_bytes(b'command = "\xff"\n')
    for name, words in [("fifo", "not a regular file"), ("zero", "not a regular file"), ("big", "larger than"),
                        ("bytes", "not UTF-8"), ("gone", "no such file")]:  # fmt: skip
        with pytest.raises(InputError, match=words):
            parse_ref(f"exec:{tmp_path / name}.toml")


def test_a_command_line_is_split_as_a_shell_would() -> None:
    assert parse_ref("exec:node 'my adapter.mjs' --x").command == ("node", "my adapter.mjs", "--x")
    with pytest.raises(InputError, match="an exec reference is"):
        parse_ref("exec: ")
    with pytest.raises(InputError, match="cannot split"):
        parse_ref("exec:node 'unclosed")


# -- the protocol's values -----------------------------------------------------------------


def test_typed_errors_come_back_as_the_projects_exceptions() -> None:
    from conformance.adapters.errors import CriticalBlockError, OperationNotOffered, RateLimitError, WireFormatError

    rl = codec.error_from_json(
        {"kind": "adapter_error", "error_class": "rate_limit", "message": "slow", "provider_status": 429,
         "retryable": True, "retry_after_seconds": 20},
        lambda m: OperationNotOffered("x", m),
    )  # fmt: skip
    assert isinstance(rl, RateLimitError) and rl.retry_after_seconds == 20 and rl.provider_status == 429
    wf = codec.error_from_json({"kind": "wire_format", "message": "cut", "event": 3, "line": 12}, ValueError)
    assert isinstance(wf, WireFormatError) and wf.location == "event 3, line 12"
    cb = codec.error_to_json(
        CriticalBlockError(adapter="a", session_id="s", message_id="m", block_type="image", reason="r")
    )
    back = codec.error_from_json(cb, ValueError)
    assert isinstance(back, CriticalBlockError) and (back.block_type, back.reason) == ("image", "r")
    crash = codec.error_from_json(
        {"kind": "crash", "message": "x is undefined", "type": "TypeError", "traceback": "at f"}, ValueError
    )
    assert type(crash).__name__ == "TypeError" and str(crash) == "x is undefined"
    assert "at f" in "".join(getattr(crash, "__notes__", []))
    # a message that spells its type too (JavaScript's String(error)) reads `TypeError: x`, not twice
    spelled = codec.error_from_json(
        {"kind": "crash", "message": "TypeError: x is undefined", "type": "TypeError"}, ValueError
    )
    assert type(spelled).__name__ == "TypeError" and str(spelled) == "x is undefined"
    other = codec.error_from_json({"kind": "crash", "message": "RangeError: far", "type": "TypeError"}, ValueError)
    assert str(other) == "RangeError: far"
    assert isinstance(
        codec.error_from_json(
            {"kind": "not_implemented", "message": "no"}, lambda m: OperationNotOffered("estimate", m)
        ),
        NotImplementedError,
    )


def test_log_records_are_replayed_with_their_fields_as_attributes(caplog: pytest.LogCaptureFixture) -> None:
    fields = {"event": "block_dropped", "block_type": "thinking", "name": "a tool", "reason": "no thinking"}
    with caplog.at_level("WARNING"):
        replay(
            "acme",
            [
                {"level": "warning", "message": "dropped 100% of it", "fields": fields},
                {"level": "debug", "message": "x"},
            ],
        )
    [r] = caplog.records
    assert (r.name, r.levelname, r.getMessage()) == ("turnspec.exec.acme", "WARNING", "dropped 100% of it")
    assert (r.block_type, r.event, r.field_name) == ("thinking", "block_dropped", "a tool")  # type: ignore[attr-defined]
