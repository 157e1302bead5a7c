"""Interrupts and resumes say what happened (issue 39, item 9): Ctrl-C is one line on
standard error (still exit 130, as shells expect), and a run with `--resume` ends with one
note saying how many parts the folder answered."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

import conformance.cli.commands.validate as validate_command
from conformance.benchmarks.synthetic import messages
from conformance.cli import main

RERUN = "run the same command again to go on"


def _corpus(path: Path, n: int) -> Path:
    path.write_bytes(b"".join(orjson.dumps(m) + b"\n" for m in messages(n, seed=5, session_len=7)))
    return path


def test_ctrl_c_is_one_line_and_exit_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    f = _corpus(tmp_path / "t.jsonl", 20)

    def interrupted(*_: Any, **__: Any) -> Any:
        raise KeyboardInterrupt

    monkeypatch.setattr(validate_command, "iter_validate", interrupted)
    assert main(["validate", str(f)]) == 130
    assert capsys.readouterr().err == "turnspec: interrupted\n"
    assert main(["validate", "--resume", str(tmp_path / "R"), str(f)]) == 130
    assert capsys.readouterr().err == f"turnspec: interrupted; the parts finished so far are kept: {RERUN}\n"


def test_a_resumed_run_says_how_many_parts_it_reused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = _corpus(tmp_path / "t.jsonl", 600)
    store = tmp_path / "R"
    args = ["validate", "-q", "-j", "1", "--chunk-bytes", "20000", "--resume", str(store), str(f)]
    assert main(args) == 0
    first = capsys.readouterr().err
    parts = len(list(store.glob("*.tsr")))
    assert parts > 2
    assert (
        first
        == f"turnspec: note: --resume {store}: 0 of {parts} part(s) reused from the folder, {parts} computed and kept\n"
    )
    victim = sorted(store.glob("*.tsr"))[0]
    victim.unlink()
    assert main(args) == 0
    again = capsys.readouterr().err
    assert again == (
        f"turnspec: note: --resume {store}: {parts - 1} of {parts} part(s) reused from the folder, 1 computed and kept\n"
    )


def test_a_real_sigint_mid_run_then_a_resume(tmp_path: Path) -> None:
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it, mid-way through a
    `--jobs 2 --resume` run: one line, exit 130, no traceback from this process or its
    workers; the next run says how many of the kept parts it reused."""
    f = _corpus(tmp_path / "t.jsonl", 40_000)
    store = tmp_path / "R"
    code = "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))"
    # parts of 20 kB (about 1,900 of them): the run lasts long after the first two are
    # kept, so the signal lands mid-run however fast the fast path has become (with parts
    # of 200 kB the whole run could end before a loaded machine's poll saw two)
    args = [sys.executable, "-c", code, "validate", "-q", "-j", "2", "--chunk-bytes", "20000", "--resume", str(store)]
    p = subprocess.Popen([*args, str(f)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(store.glob("*.tsr"))) < 2 and p.poll() is None:
            time.sleep(0.01)
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 130, err
    assert err.decode() == f"turnspec: interrupted; the parts finished so far are kept: {RERUN}\n"
    kept = len(list(store.glob("*.tsr")))
    again = subprocess.run([*args, str(f)], capture_output=True, check=False)
    assert again.returncode == 0, again.stderr
    note = again.stderr.decode()
    assert note.startswith(f"turnspec: note: --resume {store}: ") and note.count("\n") == 1
    reused = int(note.split(": ")[-1].split(" of ")[0])
    assert reused >= kept >= 2


def test_ctrl_c_while_the_cli_loads_is_one_line_and_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The console script imports the CLI after reading its arguments: a Ctrl-C in that
    import (a few tenths of a second at start-up) is the same one line, not a traceback."""
    import types

    from conformance import entry

    class Loading(types.ModuleType):
        def __getattr__(self, name: str) -> Any:
            if name == "main":  # `from .cli import main`, half-way through loading
                raise KeyboardInterrupt
            raise AttributeError(name)

    monkeypatch.setitem(sys.modules, "conformance.cli", Loading("conformance.cli"))
    try:
        rc = entry.main(["validate", "x.jsonl"])
    except KeyboardInterrupt:  # caught here: escaping, it would stop pytest itself
        pytest.fail("the Ctrl-C escaped the console script")
    assert rc == 130
    assert capsys.readouterr().err == "turnspec: interrupted\n"
