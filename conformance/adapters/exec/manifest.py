"""`exec:` adapter references (docs/exec-protocol.md): a command line, split as a POSIX
shell would (`exec:node my-adapter.mjs`), or a manifest file (`exec:turnspec-exec.toml`:
command, cwd, env, timeout). Every problem is a one-line `InputError`."""

from __future__ import annotations

import math
import shlex
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...core.errors import InputError

PREFIX = "exec:"
DEFAULT_TIMEOUT_S = 30.0
MANIFEST_KEYS = ("command", "cwd", "env", "timeout")
MAX_MANIFEST_BYTES = 1024 * 1024


@dataclass(frozen=True)
class ExecSettings:
    """What the command line says about every exec adapter of a run: `--exec-timeout`
    (over a manifest's `timeout`) and `--validate-protocol`."""

    timeout: float | None = None
    validate: bool = False


@dataclass(frozen=True)
class ExecConfig:
    """How to start one child and talk to it."""

    label: str  # the reference as given (`exec:...`), for messages
    command: tuple[str, ...]
    cwd: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT_S
    validate: bool = False


def is_exec(ref: str) -> bool:
    return ref.startswith(PREFIX)


def check_timeout(value: Any, where: str) -> float:
    """A per-call timeout in seconds: a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        raise InputError(f"{where}: the timeout must be a number of seconds > 0, not {value!r}")
    return float(value)


def parse_ref(ref: str, settings: ExecSettings | None = None) -> ExecConfig:
    """The config an `exec:` reference names: a `.toml` file that exists is a manifest,
    anything else a command line."""
    settings = settings or ExecSettings()
    text = ref[len(PREFIX) :].strip() if is_exec(ref) else ref.strip()
    if not text:
        raise InputError(f"{ref!r}: an exec reference is exec:COMMAND [ARG...] or exec:MANIFEST.toml")
    path = Path(text)
    if text.endswith(".toml") and (path.exists() or path.is_symlink() or " " not in text):
        config = _manifest(ref, path)
    else:
        try:
            command = tuple(shlex.split(text))
        except ValueError as exc:
            raise InputError(f"{ref!r}: cannot split the command line: {exc}") from None
        config = ExecConfig(ref, command)
    timeout = config.timeout if settings.timeout is None else check_timeout(settings.timeout, "--exec-timeout")
    return ExecConfig(config.label, config.command, config.cwd, config.env, timeout, settings.validate)


def _manifest(ref: str, path: Path) -> ExecConfig:
    if not path.is_file():
        what = "not a regular file" if path.exists() or path.is_symlink() else "no such file"
        raise InputError(f"{ref}: {path}: {what} (an exec manifest is a TOML file)")
    try:
        with path.open("rb") as f:
            data = f.read(MAX_MANIFEST_BYTES + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise InputError(f"{path}: larger than {MAX_MANIFEST_BYTES} bytes; not an exec manifest")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not TOML: {exc}") from None
    unknown = sorted(set(doc) - set(MANIFEST_KEYS))
    if unknown:
        raise InputError(f"{path}: unknown key {unknown[0]!r} (an exec manifest has {', '.join(MANIFEST_KEYS)})")
    command = doc.get("command")
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as exc:
            raise InputError(f"{path}: command: cannot split the command line: {exc}") from None
    if not isinstance(command, list) or not command or not all(isinstance(c, str) and c for c in command):
        raise InputError(f"{path}: command: a non-empty list of strings, or a command line string")
    folder = path.resolve().parent
    cwd = doc.get("cwd", ".")
    if not isinstance(cwd, str):
        raise InputError(f"{path}: cwd: a path relative to the manifest's folder")
    where = (folder / cwd).resolve()
    if not where.is_dir():
        raise InputError(f"{path}: cwd: {where} is not a directory")
    env = doc.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise InputError(f'{path}: env: a table of strings (NAME = "value")')
    timeout = check_timeout(doc["timeout"], f"{path}: timeout") if "timeout" in doc else DEFAULT_TIMEOUT_S
    return ExecConfig(ref, tuple(command), where, dict(env), timeout)
