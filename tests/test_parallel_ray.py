"""`validate --engine ray`: the local engine's report, on a local Ray instance (2 CPUs).

The oracle is the sequential path (`validate(..., jobs=1)`); Ray runs the same tasks
over the path, its `file://` URL and a folder URL. Ray starts once for the module.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from test_parallel import ALL_RULES, FIXTURES, corpus, defects

from conformance import Options, validate
from conformance.api import Report, expand
from conformance.cli import main
from conformance.core.errors import InputError
from conformance.parallel import ray_engine
from conformance.parallel.chunks import run_task

ray = pytest.importorskip("ray", reason="ray is not installed (the [ray] extra; .ci/run installs it with [test])")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[Any]:
    mod, started = ray_engine.start_ray(None, 2)  # a bounded local instance
    yield mod
    if started:
        mod.shutdown()


def _ray_report(units: list[tuple[Any, Any]], options: Options, chunk_bytes: int) -> Report:
    r = Report()
    for f in ray_engine.validate_ray(
        units, options, jobs=2, chunk_bytes=chunk_bytes, files=r.files, problems=r.problems
    ):
        r.add(f)
    return r


def test_ray_reports_what_one_process_reports(tmp_path: Path, local_ray: Any) -> None:
    data = tmp_path / "data"
    data.mkdir()
    big = data / "big.jsonl"
    big.write_bytes(b"".join(defects(corpus(300, 9), 9)))
    inputs = [*FIXTURES, big]
    want = orjson.dumps(validate(inputs, ALL_RULES, jobs=1).as_dict())
    # local paths
    got = _ray_report(list(expand(inputs)), ALL_RULES, 5000)
    assert orjson.dumps(got.as_dict()) == want
    # the same file as a file:// URL, and its folder as a folder URL
    for url in (big.as_uri(), data.as_uri()):
        units = [*expand(FIXTURES), *ray_engine.expand_urls([url], None, [], [])]
        got = _ray_report(units, ALL_RULES, 5000)
        text = orjson.dumps(got.as_dict()).replace(big.as_uri().encode(), str(big).encode())
        assert text == want


def test_cli_engine_ray_on_a_url(tmp_path: Path, local_ray: Any, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(defects(corpus(80, 3), 3)))
    assert main(["validate", "-o", "json", "-j", "1", str(f)]) == 1
    want = capsys.readouterr().out
    # Ray is already up (the fixture), so the run joins it and leaves it running
    assert main(["validate", "-o", "json", "--engine", "ray", "--chunk-bytes", "3000", f.as_uri()]) == 1
    got = capsys.readouterr().out
    assert got.replace(f.as_uri(), str(f)) == want


def test_a_url_without_its_driver_is_one_line_exit_2(tmp_path: Path) -> None:
    for url in ("nosuchscheme://bucket/t.jsonl",):
        p = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from conformance.cli import main; sys.exit(main(sys.argv[1:]))",
                "validate",
                "--engine",
                "ray",
                url,
            ],
            capture_output=True,
            text=True,
            cwd=tmp_path,
        )
        assert p.returncode == 2
        assert p.stderr.count("\n") == 1 and p.stderr.startswith("turnspec: nosuchscheme://bucket/t.jsonl:"), p.stderr


def test_a_ray_that_cannot_start_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ray, "is_initialized", lambda: False)

    def refuse(**kwargs: Any) -> None:
        raise ConnectionError("could not reach the cluster\nmore detail")

    monkeypatch.setattr(ray, "init", refuse)
    with pytest.raises(InputError, match=r"^ray: cannot start \(10\.0\.0\.1:6379\): ConnectionError: could not reach"):
        ray_engine.start_ray("10.0.0.1:6379", 2)


def test_ray_messages_never_reach_stdout(
    tmp_path: Path, local_ray: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker killed during `-o sarif` is retried, and Ray's `(raylet) A worker died`
    goes to standard error: standard output is the SARIF document alone (issue 30.4)."""
    f = tmp_path / "c.jsonl"
    f.write_bytes(b"".join(defects(corpus(40, 3), 3)))
    marker = tmp_path / "killed"

    def kill_once(task: Any, options: Options, off: frozenset[str] = frozenset()) -> bytes:  # pickled by value
        if not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        return run_task(task, options, ray_engine.open_any)

    monkeypatch.setattr(ray_engine, "_ray_task", kill_once)
    assert main(["validate", "-o", "sarif", "--engine", "ray", str(f)]) == 1
    assert marker.exists()
    out, err = "", ""
    for _ in range(600):  # the listener thread prints when the message arrives: wait for it (at most 60 s)
        got = capsys.readouterr()
        out, err = out + got.out, err + got.err
        if "A worker died" in out + err:
            break
        time.sleep(0.1)
    assert "A worker died" not in out
    assert orjson.loads(out)["runs"][0]["results"]  # standard output is the SARIF document alone
    if "A worker died" not in err:  # Ray's listener did not report this death (not a verdict on us)
        pytest.skip("Ray printed no 'A worker died' message within 60 s; nothing to route")
