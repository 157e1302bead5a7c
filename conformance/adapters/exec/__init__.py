"""The exec host: adapters in any language, started as a process that speaks the exec
protocol (docs/exec-protocol.md, `schemas/exec/v1/`) on its standard input and output.

    turnspec conform 'exec:node my-adapter.mjs'
    turnspec conform exec:turnspec-exec.toml

`load_exec(ref)` starts the child, makes its `hello` and returns the proxy adapter
(`proxy.ExecAdapter`, a `CancellableExecAdapter` when the child offers `cancel`); the
adapter registry calls it for every `exec:` reference. The modules: `manifest` (the
reference and the manifest file), `process` (the child and its pipes), `client` (one
request, one answer; restarts; --validate-protocol), `faults` (what goes wrong, and the
replay of the child's logs), `codec` (the protocol's values as the contract's types),
`proxy` (the adapter), `serve` (any turnspec adapter served as a child: the reference
implementation of the child side).
"""

from __future__ import annotations

import weakref

from .client import ExecClient
from .manifest import PREFIX, ExecConfig, ExecSettings, is_exec, parse_ref
from .proxy import CancellableExecAdapter, ExecAdapter

__all__ = [
    "PREFIX",
    "CancellableExecAdapter",
    "ExecAdapter",
    "ExecConfig",
    "ExecSettings",
    "is_exec",
    "load_exec",
    "parse_ref",
    "start",
]


def start(config: ExecConfig) -> ExecAdapter:
    """The proxy adapter of a started child (an `InputError` when it cannot start)."""
    client = ExecClient(config)
    cls = CancellableExecAdapter if "cancel" in (client.info.get("operations") or []) else ExecAdapter
    try:
        adapter = cls(client)
    except Exception:
        client.close()
        raise
    weakref.finalize(adapter, client.close)  # the child ends with its adapter, or at exit
    return adapter


def load_exec(ref: str, settings: ExecSettings | None = None) -> ExecAdapter:
    """The adapter an `exec:` reference names."""
    return start(parse_ref(ref, settings))
