"""`--resume DIR`: the local-phase result of every finished task, kept under DIR only.

An entry is the JSON a task returned (`chunks.run_task`), in `DIR/<key>.tsr`, written
atomically (`conformance.outputs`: built beside it, moved into place with one rename),
so a killed run leaves whole entries or none. The key is a SHA-256 of everything the
result depends on: the file's path, size and modification time, the byte range, the
options (selection, strictness, revisions, line limit, and the contents of the
`--tools` and `--pricing` files) and the turnspec version. The session phase is never
stored: it is cheap, and it is re-run over every result in input order, so a resumed
run's report equals an uninterrupted one. An entry that cannot be read back as a result
is ignored and recomputed.
"""

from __future__ import annotations

import hashlib
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import orjson

from ..errors import InputError
from ..formats.base import Options
from ..jsonio import read_input
from ..outputs import real, write_bytes
from .chunks import ITEM_CODEC, Task

SUFFIX = ".tsr"


def _version() -> str:
    try:
        return version("turnspec")
    except PackageNotFoundError:  # running from a checkout that was never installed
        return "unknown"


def _digest(path: Path | None) -> str | None:
    return None if path is None else hashlib.sha256(read_input(path)).hexdigest()


def options_key(options: Options) -> list[Any]:
    sel = options.selection
    return [
        list(sel.select),
        list(sel.ignore),
        sel.strict,
        _digest(options.tools),
        _digest(options.pricing),
        options.max_line_bytes,
        list(options.revisions),
    ]


class ResumeStore:
    """Results of finished tasks under one folder (created if missing, never elsewhere)."""

    def __init__(self, folder: Path, options: Options, inputs: list[str]) -> None:
        self.folder = folder
        where = real(folder)
        for src in inputs:
            if "://" in src or src == "-":
                continue
            source = real(src)
            if where == source or source in where.parents or where in source.parents:
                raise InputError(f"--resume {folder}: overlaps the input {src}; choose a folder outside the inputs")
        if os.path.lexists(folder) and not folder.is_dir():
            raise InputError(f"--resume {folder}: is not a folder")
        try:
            folder.mkdir(parents=False, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--resume {folder}: cannot create the folder: {exc.strerror or exc}") from None
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"--resume {folder}: is not writable")
        self.base = orjson.dumps([_version(), ITEM_CODEC, options_key(options)])

    def key(self, task: Task, stamp: str) -> str:
        """The entry name of `task` of a file whose size and mtime `stamp` gives."""
        data = orjson.dumps([task.path, task.start, task.end, task.whole, stamp]) + self.base
        return hashlib.sha256(data).hexdigest()

    def get(self, key: str) -> bytes | None:
        path = self.folder / (key + SUFFIX)
        try:
            data = path.read_bytes()
            doc = orjson.loads(data)
        except (OSError, orjson.JSONDecodeError):
            return None
        if not isinstance(doc, dict) or not isinstance(doc.get("items"), list) or type(doc.get("lines")) is not int:
            return None
        return data

    def put(self, key: str, data: bytes) -> None:
        write_bytes(self.folder / (key + SUFFIX), [data])
