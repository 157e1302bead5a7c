"""Every known wire API, most specific path first. Adding one: a module and a line here."""

from __future__ import annotations

from urllib.parse import urlsplit

from .anthropic_messages import ANTHROPIC_COUNT_TOKENS, ANTHROPIC_MESSAGES
from .api import WireApi
from .gemini import GEMINI
from .ollama import OLLAMA_CHAT, OLLAMA_GENERATE
from .openai_chat import OPENAI_CHAT
from .openai_responses import OPENAI_RESPONSES
from .openrouter import OPENROUTER_CHAT

APIS: tuple[WireApi, ...] = (
    ANTHROPIC_COUNT_TOKENS,  # before messages: most specific first
    ANTHROPIC_MESSAGES,
    OPENROUTER_CHAT,  # before chat completions: its path is the more specific
    OPENAI_CHAT,
    OLLAMA_CHAT,
    OLLAMA_GENERATE,
    GEMINI,
    OPENAI_RESPONSES,
)


def api_for_url(url: str) -> WireApi | None:
    """The record whose request paths match `url`, or None: never forced onto a near match."""
    path = urlsplit(url).path or url
    for api in APIS:
        if api.matches(path):
            return api
    return None


def register(api: WireApi) -> None:
    """Add a record at run time (a third-party adapter's wire API): one call beside the
    adapter, the way the built-in records are one line in APIS. Registering the same record
    again is a no-op; another record under a known name is refused."""
    global APIS
    for have in APIS:
        if have.name == api.name:
            if have is api:
                return
            raise ValueError(f"a wire API named {api.name!r} is already registered")
    APIS = (api, *APIS)


def get(name: str) -> WireApi:
    for api in APIS:
        if api.name == name:
            return api
    raise KeyError(f"unknown wire API {name!r} (known: {', '.join(a.name for a in APIS)})")
