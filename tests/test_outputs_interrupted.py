"""`convert --force` over a folder, killed at each step of the replace (issue 30.6).

A child process runs the conversion and SIGKILLs itself at a hook (right after the old
output is moved away, or right after the new one is in place); the destination must
then hold the old output or the new one, whole, and the next run that writes beside it
removes the dead run's staging folder (restoring the old output first if the kill left
the destination missing).
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.convert import convert
from conformance.core import outputs
from conformance.core.errors import InputError

VALID = Path(__file__).parent / "rules" / "canonical" / "valid.jsonl"

# the child: `hook` is where it kills itself; `fallback` makes RENAME_EXCHANGE unsupported
CHILD = """
import os, shutil, signal, sys
from pathlib import Path
from conformance.core import outputs
from conformance.convert import convert

hook, fallback, src, dst = sys.argv[1], sys.argv[2] == "1", Path(sys.argv[3]), Path(sys.argv[4])
target = os.path.realpath(dst)
if fallback:
    outputs._renameat2 = None
rename, rmtree = Path.rename, shutil.rmtree

def killing_rename(self, to):
    out = rename(self, to)
    if hook == "moved-aside" and os.path.realpath(self) == target:
        os.kill(os.getpid(), signal.SIGKILL)
    return out

def killing_rmtree(path, *args, **kwargs):
    if hook == "installed" and str(path).endswith(".turnspec"):
        os.kill(os.getpid(), signal.SIGKILL)
    return rmtree(path, *args, **kwargs)

Path.rename = killing_rename
shutil.rmtree = killing_rmtree
convert("canonical", "chibi", src, dst, force=True)
"""


def _old(out: Path) -> None:
    convert("canonical", "chibi", VALID, out)
    (out / "old.txt").write_text("old")


def _names(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.rglob("*")}


@pytest.mark.parametrize("fallback", [False, True], ids=["exchange", "two-renames"])
@pytest.mark.parametrize("hook", ["moved-aside", "installed"])
def test_a_killed_replace_leaves_old_or_new_and_the_next_run_cleans_up(
    tmp_path: Path, hook: str, fallback: bool
) -> None:
    out = tmp_path / "ctx"
    _old(out)
    old = _names(out)
    new = old - {"old.txt"}
    p = subprocess.run(
        [sys.executable, "-c", CHILD, hook, "1" if fallback else "0", str(VALID), str(out)],
        capture_output=True,
        text=True,
    )
    assert p.returncode in (0, -signal.SIGKILL), p.stderr
    if not (fallback and hook == "moved-aside"):
        # one atomic swap, or a kill after the two renames: the destination is whole
        assert out.is_dir() and _names(out) in (old, new)
    # the next run that checks this output: stale stages gone, the old output back
    with pytest.raises(InputError, match="pass --force"):
        convert("canonical", "chibi", VALID, out)
    assert out.is_dir() and _names(out) in (old, new)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx"]


def test_a_kill_between_the_two_renames_restores_the_old_output(tmp_path: Path) -> None:
    out = tmp_path / "ctx"
    _old(out)
    old = _names(out)
    p = subprocess.run(
        [sys.executable, "-c", CHILD, "moved-aside", "1", str(VALID), str(out)], capture_output=True, text=True
    )
    assert p.returncode == -signal.SIGKILL, p.stderr
    assert not out.exists()  # what a kill there leaves: the old output only in the stage
    convert("canonical", "chibi", VALID, tmp_path / "other")  # another name: not this one's stages
    assert not out.exists()
    with pytest.raises(InputError, match="pass --force"):  # restored first, so it is not replaced
        convert("canonical", "chibi", VALID, out)
    assert _names(out) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx", "other"]


def test_stages_of_live_processes_and_other_hosts_are_kept(tmp_path: Path) -> None:
    out = tmp_path / "ctx"
    _old(out)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = outputs.host_name()
    keep = [
        f".ctx.{host}.{os.getpid()}.abcdefgh.turnspec",  # alive (this process)
        f".ctx.otherhost.{dead.stdout.strip()}.abcdefgh.turnspec",  # another host: cannot tell
        ".ctx.abcdefgh.turnspec",  # not named by this version
    ]
    gone = f".ctx.{host}.{dead.stdout.strip()}.abcdefgh.turnspec"
    for name in [*keep, gone]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "ctx").mkdir()
    convert("canonical", "chibi", VALID, out, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["ctx", *keep])


def test_without_rename_exchange_the_replace_uses_two_renames(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def unsupported(*args: object) -> int:
        calls.append(1)
        ctypes.set_errno(errno.EINVAL)  # a file system without RENAME_EXCHANGE
        return -1

    monkeypatch.setattr(outputs, "_renameat2", unsupported)
    out = tmp_path / "ctx"
    _old(out)
    convert("canonical", "chibi", VALID, out, force=True)
    assert calls and out.is_dir() and "old.txt" not in _names(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx"]


@pytest.mark.skipif(outputs._renameat2 is None, reason="renameat2 is Linux (glibc 2.28+) only")
def test_the_folder_swap_is_one_call(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "ctx"
    _old(out)

    def no_rename(self: Path, to: object) -> Path:
        raise AssertionError(f"rename {self} -> {to}: the swap should be one renameat2")

    monkeypatch.setattr(Path, "rename", no_rename)
    convert("canonical", "chibi", VALID, out, force=True)
    assert "old.txt" not in _names(out)
