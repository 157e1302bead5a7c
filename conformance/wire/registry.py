"""Every known wire API, most specific path first, and every known stream framing.
Adding an API: a module and a line in APIS; adding a framing: a `Framing` value and a line
in FRAMINGS (a third party: `register_framing(...)` or a `turnspec.framings` entry point)."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from importlib.metadata import entry_points
from types import MappingProxyType
from urllib.parse import urlsplit

from .anthropic_messages import ANTHROPIC_COUNT_TOKENS, ANTHROPIC_MESSAGES
from .api import WireApi
from .bedrock import BEDROCK_CONVERSE, BEDROCK_COUNT_TOKENS
from .bedrock_anthropic_messages import BEDROCK_ANTHROPIC_MESSAGES
from .eventstream import EVENT_STREAM
from .framing import Framing
from .gemini import GEMINI
from .gemini_interactions import GEMINI_INTERACTIONS
from .ollama import OLLAMA_CHAT, OLLAMA_GENERATE
from .openai_chat import OPENAI_CHAT
from .openai_responses import OPENAI_RESPONSES
from .openrouter import OPENROUTER_CHAT
from .vertex_anthropic_messages import VERTEX_ANTHROPIC_MESSAGES

APIS: tuple[WireApi, ...] = (
    ANTHROPIC_COUNT_TOKENS,  # before messages: most specific first
    ANTHROPIC_MESSAGES,
    VERTEX_ANTHROPIC_MESSAGES,  # `.../publishers/anthropic/models/{model}:rawPredict`, not Gemini's methods
    OPENROUTER_CHAT,  # before chat completions: its path is the more specific
    OPENAI_CHAT,
    OLLAMA_CHAT,
    OLLAMA_GENERATE,
    GEMINI,
    GEMINI_INTERACTIONS,  # `/v1beta/interactions`: no other record's path ends so
    OPENAI_RESPONSES,
    BEDROCK_COUNT_TOKENS,
    BEDROCK_ANTHROPIC_MESSAGES,  # `/model/{anthropic model}/invoke[-with-response-stream]`
    BEDROCK_CONVERSE,
)


def api_for_url(url: str) -> WireApi | None:
    """The record whose request paths match `url`, or None: never forced onto a near match."""
    path = urlsplit(url).path or url
    for api in APIS:
        if api.matches(path):
            return api
    return None


SHIPPED: frozenset[str] = frozenset(api.name for api in APIS)
"""The record names this project ships: versioned API (docs/public-names.md), never renamed
without an entry in `RENAMED`."""

RENAMED: Mapping[str, str] = MappingProxyType({"ollama-native": "ollama-chat"})
"""Record names an earlier release used -> the name the record has now. `get` reads an old
name as the new one, with a DeprecationWarning naming it, so an adapter written against the
earlier release keeps its record (and every record-driven check)."""


class ReplacedRecordWarning(UserWarning):
    """A third party registered a record under a name already registered: the warning says
    which record the suite uses, and how to choose the other."""


def canonical_name(name: str) -> str:
    """`name`, or the name a renamed record has now (`RENAMED`)."""
    return RENAMED.get(name, name)


def register(api: WireApi, *, replace: bool = False) -> WireApi:
    """Add a record at run time (a third-party adapter's wire API): one call beside the
    adapter, the way the built-in records are one line in APIS; returns the record the
    suite uses under that name. Registering the same record again is a no-op.

    A record under a name already registered (one this project ships, or another package's)
    is a choice, never an error at import: by default the record already there is kept and
    a `ReplacedRecordWarning` says so; `replace=True` puts this one in its place, with a
    warning naming the record it replaces."""
    global APIS
    name = canonical_name(api.name)
    have = next((a for a in APIS if a.name == name), None)
    if have is api:
        return api
    if have is not None and not replace:
        shipped = "this project ships" if name in SHIPPED else "is already registered"
        warnings.warn(
            f"a wire API named {name!r} {shipped}: the record already registered is used; to use yours, "
            f"call conformance.wire.registry.register(..., replace=True)",
            ReplacedRecordWarning,
            stacklevel=2,
        )
        return have
    if have is not None:
        warnings.warn(
            f"the wire API record {name!r} ({have.title}) is replaced by the one registered by the caller",
            ReplacedRecordWarning,
            stacklevel=2,
        )
        APIS = tuple(api if a is have else a for a in APIS)
        return api
    APIS = (api, *APIS)
    return api


def credential_headers() -> frozenset[str]:
    """Every request header a known API carries a credential in (`Access.credential_headers`)."""
    return frozenset(h.lower() for api in APIS for h in api.access.credential_headers)


def account_headers() -> frozenset[str]:
    """Every header a known API names an account in (`Access.account_headers`)."""
    return frozenset(h.lower() for api in APIS for h in api.access.account_headers)


def get(name: str) -> WireApi:
    """The record named `name`; a former name (`RENAMED`) gives the record it names now, with
    a DeprecationWarning naming the new one. KeyError (listing the names) for no record."""
    new = RENAMED.get(name)
    if new is not None:
        warnings.warn(
            f"the wire API {name!r} was renamed {new!r}: declare wire_api = {new!r}", DeprecationWarning, stacklevel=2
        )
        name = new
    for api in APIS:
        if api.name == name:
            return api
    raise KeyError(f"unknown wire API {name!r} (known: {', '.join(a.name for a in APIS)})")


# -- framings -----------------------------------------------------------------------------

FRAMING_GROUP = "turnspec.framings"
"""Entry point group: each entry point names a `Framing` value (or a function returning one)
in a third-party package, loaded the first time a framing is looked up."""

FRAMINGS: tuple[Framing, ...] = (Framing.SSE, Framing.NDJSON, Framing.JSON_ARRAY, EVENT_STREAM)
_entry_points_loaded = False


def register_framing(framing: Framing) -> Framing:
    """Add a framing at run time (a third-party package's, beside its adapter); returns it,
    so it can be written `MY_FRAMING = register_framing(Framing(...))`. Registering the same
    value again is a no-op; another framing under a known name is refused."""
    global FRAMINGS
    if not isinstance(framing, Framing):
        raise TypeError(f"not a Framing: {framing!r}")
    for have in FRAMINGS:
        if have.name == framing.name:
            if have is framing:
                return framing
            raise ValueError(f"a framing named {framing.name!r} is already registered")
    for have in FRAMINGS:
        shared = sorted(set(have.media_types) & set(framing.media_types))
        if shared:
            # which framing decodes a body of that type would be an accident of the order of
            # registration: a record that needs another one for its streams names it instead
            raise ValueError(
                f"framing {framing.name!r} claims media type {shared[0]!r}, which framing {have.name!r} "
                "already claims; a WireApi record names a framing of its own as its `framing` "
                "(wire.framing.nested for a stream inside a stream), unregistered"
            )
    FRAMINGS = (*FRAMINGS, framing)
    return framing


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for ep in entry_points(group=FRAMING_GROUP):
        found = ep.load()
        framing = found() if callable(found) and not isinstance(found, Framing) else found
        if not isinstance(framing, Framing):
            raise TypeError(f"entry point {ep.name} = {ep.value} ({FRAMING_GROUP}) is not a Framing")
        register_framing(framing)


def framings() -> tuple[Framing, ...]:
    """Every registered framing (built-in first, then those registered)."""
    _load_entry_points()
    return FRAMINGS


def get_framing(name: str) -> Framing:
    for framing in framings():
        if framing.name == name:
            return framing
    raise KeyError(f"unknown framing {name!r} (known: {', '.join(f.name for f in FRAMINGS)})")


def framing_for_content_type(content_type: str) -> Framing | None:
    """The framing a Content-Type header value announces, or None (one at most: two
    registered framings never claim one media type, `register_framing`)."""
    return next((f for f in framings() if f.announced_by(content_type)), None)


def detect_framing(body: bytes) -> Framing | None:
    """The framing a body's first bytes identify by themselves (SSE fields, an event-stream
    prelude whose CRC holds), or None: never a guess between look-alikes (NDJSON, JSON)."""
    return next((f for f in framings() if f.detect is not None and f.detect(body)), None)
