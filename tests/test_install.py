"""Issue 36: turnspec installs in one line, from a wheel, an sdist or a git URL, into a venv with
no checkout anywhere near it, and runs from an empty folder printing what the checkout prints.

Nothing is downloaded: the wheels are built here (hatchling, `--no-build-isolation`) and
installed with `--no-index`; the dependencies the new venv needs are the ones this test's
environment already has, reached through a folder of links that leaves out every turnspec
distribution (so nothing of the checkout, editable install included, can be imported).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

# what the new venv must not see of this environment: the turnspec distributions (an editable
# install's path file and the data folders it force-includes under `conformance/` included) and
# the installer, which the venv brings itself
_LEFT_OUT = re.compile(
    r"^(turnspec|conformance$|_editable_impl_turnspec|__editable__|pip\b|pip-|setuptools|_distutils_hack|distutils-precedence)"
)


def _run(*cmd: str | Path, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TURNSPEC_SAMPLES")}
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if check and done.returncode != 0:
        raise AssertionError(f"{cmd} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done


def _build(kind: str, project: Path, out: Path) -> Path:
    """One wheel or sdist of `project`, built offline."""
    out.mkdir(parents=True, exist_ok=True)
    if kind == "wheel":
        _run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
             "-w", out, project)  # fmt: skip
    else:
        _run(sys.executable, "-m", "hatchling", "build", "-t", "sdist", "-d", out, cwd=project)
    [built] = out.glob("*.whl" if kind == "wheel" else "*.tar.gz")
    return built


def _venv(where: Path) -> Path:
    """A fresh venv whose only other packages are this environment's dependencies."""
    deps = where / "deps"
    deps.mkdir(parents=True)
    site = Path(sysconfig.get_paths()["purelib"])
    for entry in site.iterdir():
        if not _LEFT_OUT.match(entry.name) and entry.name != "__pycache__":
            (deps / entry.name).symlink_to(entry)
    venv = where / "venv"
    _run(sys.executable, "-m", "venv", venv)
    [venv_site] = (venv / "lib").glob("python3*/site-packages")
    (venv_site / "zz_turnspec_test_deps.pth").write_text(f"{deps}\n")
    return venv


def _install(venv: Path, *args: str | Path) -> None:
    _run(venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-index", "--no-build-isolation", *args)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """turnspec installed from the wheel of this working tree, alone (no turnspec-models)."""
    where = tmp_path_factory.mktemp("wheel-install")
    wheel = _build("wheel", ROOT, where / "dist")
    venv = _venv(where)
    _install(venv, "--find-links", wheel.parent, "turnspec")
    return venv


def _normalised(text: str) -> str:
    return re.sub(r"in \d+(\.\d+)? s\b", "in N s", text)


def _pair(venv: Path, *args: str, tmp: Path) -> tuple[str, str]:
    """The output of `turnspec ARGS` from the installed venv and from the checkout, each run
    from an empty folder of its own."""
    outs = []
    for name, cmd in (
        ("installed", [venv / "bin" / "turnspec"]),
        ("checkout", [sys.executable, "-m", "conformance.cli"]),
    ):
        here = tmp / name
        here.mkdir(parents=True)
        env_cmd = [*cmd, *args]
        done = _run(*env_cmd, cwd=here, check=False) if name == "installed" else _checkout(env_cmd, here)
        assert done.returncode == 0, f"{name}: {done.stdout}\n{done.stderr}"
        outs.append(_normalised(done.stdout))
    return outs[0], outs[1]


def _checkout(cmd: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TURNSPEC_SAMPLES"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "generated")])
    return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_wheel_carries_everything_it_reads(wheel_venv: Path, tmp_path: Path) -> None:
    done = _run(wheel_venv / "bin" / "python", "-c",
                "import conformance, turnspec_models; print(conformance.__file__); print(turnspec_models.__file__)",
                cwd=tmp_path)  # fmt: skip
    files = done.stdout.split()
    assert all(str(wheel_venv) in f for f in files), files  # nothing of the checkout is imported


def test_the_wheel_carries_the_compiled_loop_where_a_compiler_is(wheel_venv: Path, tmp_path: Path) -> None:
    """hatch_build.py compiles the fast path's loop into the wheel (`fast/compiled.py`)."""
    words = (sysconfig.get_config_var("LDSHARED") or "").split()
    headers = (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file()
    if not words or not headers or shutil.which(words[0]) is None or os.environ.get("TURNSPEC_PURE_PYTHON"):
        pytest.skip(
            "no C compiler or no Python headers here: the wheel is pure Python (tests/test_fast_walk.py tests that hook)"
        )
    code = "from conformance.formats.canonical.fast import compiled, mirror; print(compiled.status(), mirror._COMPILED)"
    done = _run(wheel_venv / "bin" / "python", "-c", code, cwd=tmp_path)
    assert done.stdout.split()[0] == "compiled", done.stdout
    assert "built-in function walk" in done.stdout


def test_the_four_commands_from_an_empty_folder_print_what_the_checkout_prints(
    wheel_venv: Path, tmp_path: Path
) -> None:
    example = _run(wheel_venv / "bin" / "python", "-c",
                   "import conformance, pathlib; print(pathlib.Path(conformance.__file__).parent / 'data' / 'examples')",
                   cwd=tmp_path)  # fmt: skip
    shipped = example.stdout.strip()
    assert str(wheel_venv) in shipped
    installed = _run(wheel_venv / "bin" / "turnspec", "validate", shipped, cwd=tmp_path).stdout
    checkout = _checkout(
        [sys.executable, "-m", "conformance.cli", "validate", str(ROOT / "conformance/data/examples")], tmp_path
    )
    assert installed == checkout.stdout and installed.startswith("OK: 0 error(s)")
    for args in (["conform", "anthropic", "--no-samples"], ["rule", "TS020"]):
        got, want = _pair(wheel_venv, *args, tmp=tmp_path / args[0])
        assert got == want
        assert "turnspec/anthropic (7)" in got or args[0] == "rule"
    models = tmp_path / "models"
    _pair(wheel_venv, "models", "--target", "typeddict", "out", tmp=models)
    # each run wrote its own package (a relative OUT, in its own empty folder): byte for byte the same
    a, b = models / "installed" / "out", models / "checkout" / "out"
    names = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert names and names == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    assert all((a / n).read_bytes() == (b / n).read_bytes() for n in names)
    # the skeletons in other languages are data the wheel carries (conformance/data/templates)
    skeletons = tmp_path / "skeletons"
    for lang in ("typescript", "go"):
        got, want = _pair(wheel_venv, "init", "adapter", "acme", "--lang", lang, "--dir", ".", tmp=skeletons / lang)
        assert got == want and "wrote README.md" in got and "wrote turnspec-exec.toml" in got
        a, b = skeletons / lang / "installed", skeletons / lang / "checkout"
        names = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
        assert names == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
        assert all((a / n).read_bytes() == (b / n).read_bytes() for n in names)


# every rule's `turnspec rule ID` and every wire API's `turnspec wire show`, in one process: what
# they read at run time (rule docs of every format, fixtures, mutants, turnspec's cassettes)
_EVERY_PAGE = """
import contextlib, io, re
from conformance.cli import main

def out(*args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(list(args)) == 0, args
    return buf.getvalue()

rules = sorted(set(re.findall(r"^([A-Z]{2}[0-9]{3}) ", out("rules"), re.M)))
apis = re.findall(r"^[|] `([a-z0-9-]+)` [|]", out("wire", "list"), re.M)
assert len(rules) > 100 and len(apis) > 5, (rules, apis)
print("".join(out("rule", r) for r in rules) + "".join(out("wire", "show", a) for a in apis))
"""


def test_every_rule_and_wire_page_reads_the_same_installed(wheel_venv: Path, tmp_path: Path) -> None:
    """`turnspec rule ID` of every rule (not TS020 alone) and `turnspec wire show` of every API
    print from the wheel what they print from the checkout: nothing they read is a file only the
    checkout has."""
    installed = _run(wheel_venv / "bin" / "python", "-c", _EVERY_PAGE, cwd=tmp_path).stdout
    checkout = _checkout([sys.executable, "-c", _EVERY_PAGE], tmp_path)
    assert checkout.returncode == 0, checkout.stderr
    assert installed == checkout.stdout
    assert "docs:     https://turnspec.dev/docs/reference/rules/ts104/" in installed


def test_the_sdist_builds_the_same_wheel(tmp_path: Path) -> None:
    wheel = _build("wheel", ROOT, tmp_path / "direct")
    sdist = _build("sdist", ROOT, tmp_path / "sdist")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    [unpacked] = (tmp_path / "unpacked").iterdir()
    again = _build("wheel", unpacked, tmp_path / "from-sdist")
    listing = [sorted(zipfile.ZipFile(w).namelist()) for w in (wheel, again)]
    assert listing[0] == listing[1]
    assert "turnspec_models/canonical/v1/message.py" in listing[0]
    assert "conformance/_schemas/canonical/v1/message.json" in listing[0]
    # the AI SDK bridge's Node program and its pinned package files (`turnspec ai-sdk install`)
    for name in ("bridge.mjs", "lib/stream.mjs", "package.json", "package-lock.json"):
        assert f"conformance/bridges/ai_sdk/{name}" in listing[0]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git and a git checkout")
def test_one_line_from_a_git_url(tmp_path: Path) -> None:
    """`pip install "turnspec @ git+URL"`: what an adapter repository's CI runs (of the
    committed tree: the clone is what a git URL gives)."""
    clone = tmp_path / "clone"
    _run("git", "clone", "-q", "--no-local", ROOT, clone)
    venv = _venv(tmp_path)
    # `file://localhost/...`: pip 23's PEP 508 parser refuses an empty host (`git+file:///...`)
    _install(venv, f"turnspec @ git+file://localhost{clone}")
    done = _run(venv / "bin" / "turnspec", "rule", "TS020", cwd=tmp_path)
    assert done.stdout.startswith("TS020: ")
    _run(venv / "bin" / "python", "-c", "import conformance, turnspec_models.canonical.v1.message", cwd=tmp_path)


def test_the_models_distribution_installs_alone(tmp_path: Path) -> None:
    """`turnspec-models`, for repositories that want only the models: pydantic is all it needs."""
    wheel = _build("wheel", ROOT / "generated", tmp_path / "dist")
    venv = _venv(tmp_path)
    _install(venv, "--find-links", wheel.parent, "turnspec-models")
    _run(venv / "bin" / "python", "-c", "from turnspec_models.canonical.v1.message import Message", cwd=tmp_path)
    assert _run(venv / "bin" / "python", "-c", "import conformance", cwd=tmp_path, check=False).returncode != 0
