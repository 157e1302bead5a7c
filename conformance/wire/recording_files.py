"""What a recording file is on disk, declared once for the suite's readers
(`suite/cassettes.py`) and the secrets linter (`wire/cassette_lint.py`): which names are
recordings, which of them are JSON, and how a gzip-compressed file is opened.

Compressed recordings are real: LangChain's integration tests (`langchain_tests.conftest`,
`CustomSerializer` and `CustomPersister`) write every cassette as gzip-compressed YAML,
named `*.yaml.gz` by its partner packages (and `*.yaml`, by the path transformer of its
base config, in older ones). So a file is unwrapped by what its bytes are (gzip's magic
number), whatever its name says, and a name ending in `.gz` is a recording when the name
under it is one.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml

from . import content_coding

JSON_SUFFIXES = (".json", ".har")
"""Recordings written as JSON (VCR's and vcrpy's JSON serializers, HAR, nock); the rest are YAML."""
YAML_SUFFIXES = (".yaml", ".yml")
TRACE_SUFFIXES = (".httprr",)
"""Recordings of no text syntax, read as bytes by their own reader (httprr's traces: the HTTP
messages as Go writes them on the wire, `suite.recordings.httprr`)."""
COMPRESSED_SUFFIX = ".gz"
SUFFIXES = tuple(s + z for s in (*YAML_SUFFIXES, *JSON_SUFFIXES, *TRACE_SUFFIXES) for z in ("", COMPRESSED_SUFFIX))
"""What a folder walk takes as a recording (the linter's and the suite's)."""
GZIP_MAGIC = b"\x1f\x8b"


_SafeBase: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when PyYAML has it


class _RecordingLoader(_SafeBase):  # type: ignore[misc]
    """PyYAML's safe loader, plus the few data-only tags real recordings carry: Psych's
    `!binary` (Ruby VCR before 2.0 tags binary bodies so: YAML 1.1's `!!binary`, base64,
    under a local tag), and the plain-data Python tags of vcrpy cassettes written on
    Python 2 or from file-like bodies (`!!python/unicode`, `!!python/str`,
    `!!python/tuple`, `!!python/bytes`, a `BytesIO` body, an iterator body), and Betamax's
    and OkReplay's `!tape` on a tape's top mapping (SnakeYAML's class tag for `YamlTape`,
    read here as the plain mapping it tags). Every other
    tag, `!!python/object/apply` and the rest that build objects, is refused.

    Our own, not vcrpy's: vcrpy's loader refuses object-building tags only since 8.2.1
    (advisory GHSA-rpj2-4hq8-938g: before it, a cassette's `!!python/object/apply` ran on
    load), and this project accepts `vcrpy>=7`; a cassette is somebody else's file, so
    reading it must never run code, whatever vcrpy is installed."""


def _ruby_binary(loader: yaml.SafeLoader, node: yaml.Node) -> bytes:
    value = loader.construct_scalar(node)  # type: ignore[arg-type]
    return base64.b64decode(str(value).encode("ascii"))


def _python_str(loader: yaml.SafeLoader, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))  # type: ignore[arg-type]


def _python_tuple(loader: yaml.SafeLoader, node: yaml.Node) -> tuple[Any, ...]:
    return tuple(loader.construct_sequence(node))  # type: ignore[arg-type]


def _buffer_body(loader: yaml.SafeLoader, node: yaml.Node) -> bytes:
    """A body vcrpy pickled as `BytesIO` (`state: [content, ...]`) or `iter` (`args:
    [[chunks]]`): the content it held, as bytes."""
    mapping = loader.construct_mapping(node, deep=True) if isinstance(node, yaml.MappingNode) else {}
    held = mapping.get("state") or mapping.get("args") or [b""]
    first = held[0] if isinstance(held, list | tuple) and held else b""
    parts = first if isinstance(first, list | tuple) else [first]
    return b"".join(x.encode("utf-8") if isinstance(x, str) else bytes(x) for x in parts if x is not None)


def _tape(loader: yaml.SafeLoader, node: yaml.Node) -> dict[Any, Any]:
    """Betamax's `!tape`: the mapping it tags, as data (SnakeYAML builds a `YamlTape` of it)."""
    if not isinstance(node, yaml.MappingNode):
        raise yaml.constructor.ConstructorError(None, None, "`!tape` tags no mapping", node.start_mark)
    return loader.construct_mapping(node, deep=True)


_RecordingLoader.add_constructor("!binary", _ruby_binary)
_RecordingLoader.add_constructor("!tape", _tape)
_PY = "tag:yaml.org,2002:python/"
for _tag, _make in (
    ("unicode", _python_str),
    ("str", _python_str),
    ("tuple", _python_tuple),
    ("bytes", _ruby_binary),
    ("object/new:_io.BytesIO", _buffer_body),
    ("object/apply:builtins.iter", _buffer_body),
):
    _RecordingLoader.add_constructor(_PY + _tag, _make)


def load_yaml(text: str) -> Any:
    """A YAML recording as data (`_RecordingLoader`: nothing but data is ever built). The
    caller bounds nesting and aliases first (`suite.cassettes.check_yaml_bounds`)."""
    return yaml.load(text, Loader=_RecordingLoader)


def load_yaml_documents(text: str) -> list[Any]:
    """Each document of a YAML stream (`---` between them: httpmock writes one mock a
    document), as data, as `load_yaml` reads one."""
    return list(yaml.load_all(text, Loader=_RecordingLoader))


class RecordingFileError(ValueError):
    """A recording file that cannot be unwrapped (its message is one line, without the path)."""


def inner_suffix(path: Path) -> str:
    """The suffix that says how a recording is parsed: `.yaml` for `x.yaml.gz` too."""
    if path.suffix == COMPRESSED_SUFFIX:
        return Path(path.stem).suffix
    return path.suffix


def is_json(path: Path) -> bool:
    return inner_suffix(path) in JSON_SUFFIXES


def is_trace(path: Path) -> bool:
    return inner_suffix(path) in TRACE_SUFFIXES


def is_recording_name(name: str) -> bool:
    return name.endswith(SUFFIXES)


def gzipped(raw: bytes) -> bool:
    return raw[:2] == GZIP_MAGIC


def unwrap(raw: bytes, limit: int) -> bytes:
    """The bytes of a recording file: gzip undone when they are gzip (every member), bounded by
    `limit` (a small file that inflates past it is refused, never held:
    `content_coding.gunzip`, the one gzip reader); any other bytes as they are."""
    if not gzipped(raw):
        return raw
    try:
        return content_coding.gunzip(raw, "the file", limit)
    except content_coding.ContentCodingError as exc:
        raise RecordingFileError(f"gzip-compressed: {exc}") from None


def compress(data: bytes) -> bytes:
    """`data` as a gzip file (what `fix` writes back to a recording that was gzip), with a
    zero modification time: the same input gives the same bytes."""
    import gzip

    return gzip.compress(data, mtime=0)
