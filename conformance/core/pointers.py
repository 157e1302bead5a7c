"""JSON Pointer (RFC 6901) reference tokens and pointers, declared once: every finding,
diff and schema error in turnspec locates its value with these."""

from __future__ import annotations

from collections.abc import Iterable


def token(key: object) -> str:
    """One reference token (RFC 6901 §3): `~` as `~0`, then `/` as `~1` (in that order, so
    a key holding `~1` does not decode as `/`)."""
    return str(key).replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    """A reference token decoded (RFC 6901 §4): `~1` as `/`, then `~0` as `~`."""
    return token.replace("~1", "/").replace("~0", "~")


def pointer(path: Iterable[object]) -> str:
    """The pointer of a path of keys and indices (`""` for the whole document)."""
    parts = [token(p) for p in path]
    return "/" + "/".join(parts) if parts else ""
