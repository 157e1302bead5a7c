"""Finding adapters: the `turnspec.adapters` entry-point group, or `module:attr` references.

An entry point or attribute may name an adapter instance, an adapter class (instantiated
with no arguments) or a zero-argument factory. Each load returns a fresh adapter so the
per-session tool-id maps of one run never leak into another.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import typing
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from ..core.errors import InputError
from .base import Adapter
from .protocol import known_provider

if typing.TYPE_CHECKING:
    from .exec.manifest import ExecSettings

GROUP = "turnspec.adapters"


def available() -> dict[str, str]:
    """Registered adapter names -> their `module:attr` value."""
    return {ep.name: ep.value for ep in entry_points(group=GROUP)}


PROTOCOL = (
    "name",
    "provider",
    "wire_api",
    "capabilities",
    "to_wire",
    "from_wire_response",
    "from_wire_request",
    "stream_response",
    "estimate_input_tokens",
    "tool_id_map",
)
"""What an object needs to be used as an adapter (the `Adapter` protocol's members)."""


def _missing(obj: Any) -> list[str]:
    # `name` and friends may be set in __init__, so a class is judged by its methods only
    members = PROTOCOL if not isinstance(obj, type) else PROTOCOL[4:]
    return [m for m in members if not hasattr(obj, m)]


def _adapter_class(obj: Any, ref: str) -> type | None:
    """The adapter class `obj` builds, checked without calling anything: `obj` itself when
    it is a class, else the class its return annotation names. None when neither holds."""
    if isinstance(obj, type):
        return obj
    if not (inspect.isfunction(obj) or inspect.ismethod(obj)):
        return None
    try:
        hints = typing.get_type_hints(obj)
    except Exception:  # an annotation that does not resolve says nothing usable
        return None
    ret = hints.get("return")
    return ret if isinstance(ret, type) else None


def _instantiate(obj: Any, ref: str) -> Adapter:
    """An adapter from an instance, a class or an annotated zero-argument factory.

    Nothing is called before it is known to build an adapter: a class must have the
    protocol's methods and take no required argument; a function must be annotated as
    returning such a class and take no required argument. Anything else (a CLI's `main`,
    a module) is refused with a one-line error.
    """
    if not isinstance(obj, type) and (not callable(obj) or hasattr(obj, "to_wire")):  # an instance
        missing = _missing(obj)
        if missing:
            raise InputError(f"{ref}: not a turnspec adapter (missing {', '.join(missing)})")
        known_provider(getattr(obj, "provider", None))
        return obj  # type: ignore[no-any-return]
    cls = _adapter_class(obj, ref)
    if cls is None:
        raise InputError(
            f"{ref}: not a turnspec adapter (a callable must be an adapter class, or a factory "
            "annotated as returning one)"
        )
    missing = _missing(cls)
    if missing:
        raise InputError(f"{ref}: not a turnspec adapter ({cls.__name__} lacks {', '.join(missing)})")
    if inspect.isabstract(cls):
        raise InputError(f"{ref}: {cls.__name__} is abstract")
    try:
        inspect.signature(obj).bind()
    except TypeError:
        raise InputError(
            f"{ref}: {getattr(obj, '__name__', ref)} needs arguments; pass a zero-argument factory"
        ) from None
    except ValueError:
        pass  # no signature to inspect (a builtin): the protocol check above is what we have
    try:
        made = obj()
    except Exception as exc:
        raise InputError(f"{ref}: building the adapter failed: {type(exc).__name__}: {exc}") from None
    missing = _missing(made)
    if missing:
        raise InputError(f"{ref}: not a turnspec adapter (missing {', '.join(missing)})")
    known_provider(getattr(made, "provider", None))  # its canonical model ids' prefix (AdapterOptions.wire_model)
    return made  # type: ignore[no-any-return]


def _import_file(path_text: str, ref: str) -> Any:
    """The module of a `.py` file, imported under its stem (an adapter a project has not
    installed: `turnspec conform my_adapter.py:MyAdapter`)."""
    path = Path(path_text)
    name = path.stem
    if not path.is_file():
        raise InputError(f"{ref}: no such file {path_text}")
    if not name.isidentifier():
        raise InputError(f"{ref}: {path.name} is not a module name (letters, digits, _)")
    loaded = sys.modules.get(name)
    if loaded is not None:
        if getattr(loaded, "__file__", None) and Path(loaded.__file__ or "").resolve() == path.resolve():
            return loaded
        raise InputError(f"{ref}: a module named {name} is already imported from elsewhere; rename {path.name}")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"{ref}: cannot import {path_text}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import does: dataclasses and pickling look it up there
    # as `python my_adapter.py` does, the file's folder is searched first while it imports,
    # so an adapter split over sibling modules (`from my_helpers import ...`) loads
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    # and nothing is written beside it: no __pycache__/ in the user's folder (python does not
    # cache the script it runs; conform reads the file, it was not asked to write there)
    cache_writes, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # importing runs the module's code; its failure is the reference's
        del sys.modules[name]
        raise InputError(f"{ref}: importing {path_text} failed: {type(exc).__name__}: {exc}") from None
    finally:
        sys.dont_write_bytecode = cache_writes
        if folder in sys.path:
            sys.path.remove(folder)
    return module


def _attr(obj: Any, attr: str, module: str, ref: str) -> Any:
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise InputError(f"{ref}: {module} has no attribute {attr}") from None
    return obj


BRIDGE_PREFIXES = {
    "pydantic-ai": ("conformance.bridges.pydantic_ai", "pydantic-ai"),
    "langchain": ("conformance.bridges.langchain", "langchain-bridges"),
    # the Vercel AI SDK: a Node program under the exec host (no extra; `turnspec ai-sdk install`)
    "ai-sdk": ("conformance.bridges.ai_sdk", ""),
}
"""`<library>:<api>` adapter names -> (the bridge module, the turnspec extra that installs it)."""


def _bridge(ref: str, exec_settings: ExecSettings | None = None) -> Adapter | None:
    """The bridge a `<library>:<api>` name names (`pydantic-ai:anthropic`), or None when
    `ref` names none. The module is imported by name, here only: nothing else in turnspec
    imports `conformance.bridges` (`.importlinter`), so the libraries stay optional. A
    bridge module with a `load_bridge(api, ref, exec_settings)` (one that runs a child
    process, `ai-sdk:`) builds its adapters itself."""
    library, sep, api = ref.partition(":")
    if not sep or library not in BRIDGE_PREFIXES:
        return None
    module, extra = BRIDGE_PREFIXES[library]
    try:
        loaded = importlib.import_module(module)
    except ImportError as exc:
        raise InputError(f"{ref}: {library} is not installed (pip install 'turnspec[{extra}]'): {exc}") from None
    bridges = loaded.BRIDGES
    cls = bridges.get(api)
    if cls is None:
        raise InputError(f"{ref}: no {library} bridge for {api!r} (known: {', '.join(sorted(bridges))})")
    make = getattr(loaded, "load_bridge", None)
    if callable(make):
        made = make(api, ref, exec_settings)
        known_provider(getattr(made, "provider", None))
        return made  # type: ignore[no-any-return]
    return _instantiate(cls, ref)


EXEC_PREFIX = "exec:"
"""An adapter in any language: `exec:COMMAND [ARG...]` or `exec:MANIFEST.toml` (docs/exec-protocol.md)."""


def load(ref: str, *, exec_settings: ExecSettings | None = None) -> Adapter:
    """An adapter from a registered name (`anthropic`), a bridge name (`pydantic-ai:anthropic`),
    a `module:attr` reference, a `path/to/file.py:attr` reference (a module not installed) or
    an `exec:` reference (a process speaking the exec protocol; `exec_settings` holds
    `--exec-timeout` and `--validate-protocol`)."""
    if ref.startswith(EXEC_PREFIX):
        from .exec import load_exec  # function-level: the exec host loads only for an exec: reference

        served = load_exec(ref, exec_settings)
        known_provider(getattr(served, "provider", None))  # its hello's provider: a model id prefix (wire_model)
        return served  # type: ignore[return-value]
    bridged = _bridge(ref, exec_settings)
    if bridged is not None:
        return bridged
    path_text, sep, attr = ref.rpartition(":")
    if sep and path_text.endswith(".py"):
        if not attr or any(not p.isidentifier() for p in attr.split(".")):
            raise InputError(f"{ref!r}: a file reference is path/to/module.py:attr")
        return _instantiate(_attr(_import_file(path_text, ref), attr, path_text, ref), ref)
    if ":" in ref:
        module, _, attr = ref.partition(":")
        if not module or not attr or any(not p.isidentifier() for p in (*module.split("."), *attr.split("."))):
            raise InputError(f"{ref!r}: an adapter reference is a registered name or module:attr")
        try:
            obj: Any = importlib.import_module(module)
        except ImportError as exc:
            raise InputError(f"{ref}: cannot import {module}: {exc}") from None
        except Exception as exc:  # importing runs the module's code; its failure is the reference's
            raise InputError(f"{ref}: importing {module} failed: {type(exc).__name__}: {exc}") from None
        return _instantiate(_attr(obj, attr, module, ref), ref)
    for ep in entry_points(group=GROUP):
        if ep.name == ref:
            return _instantiate(ep.load(), ref)
    known = ", ".join(sorted(available())) or "none"
    raise InputError(
        f"unknown adapter {ref!r} (registered: {known}; or pass module:attr, file.py:attr or 'exec:COMMAND ARG...')"
    )


def load_all() -> list[Adapter]:
    return [load(name) for name in sorted(available())]
