"""Issue 43 item 8: the names and signatures third parties rely on are versioned API
(docs/public-names.md). `tests/data/public-names.json` pins this release's: a record name,
entry point, framing, bridge prefix, protocol member or reference-adapter override point that
disappears or changes signature fails here, so it never changes unnoticed. Keep the old one
working first (a record rename: `wire.registry.RENAMED`; a parameter added to an override
point: optional, passed through `adapters.overrides.call`), then update the pin (run this
file with TURNSPEC_UPDATE_PUBLIC_NAMES=1) and docs/public-names.md."""

from __future__ import annotations

import inspect
import json
import os
import tomllib
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from conformance.adapters import overrides
from conformance.adapters.openai_chat import OpenAIChatAdapter
from conformance.adapters.protocol import Adapter, AdapterOptions, RequestContext, StreamEvent
from conformance.adapters.registry import BRIDGE_PREFIXES
from conformance.wire import registry as wire_registry

ROOT = Path(__file__).resolve().parents[1]
PIN = ROOT / "tests" / "data" / "public-names.json"
DOC = ROOT / "docs" / "public-names.md"


def protocol_members() -> dict[str, str]:
    """The `Adapter` protocol's members: a method's signature, an attribute's annotation."""
    out = {n: str(t) for n, t in Adapter.__annotations__.items()}
    for n, v in vars(Adapter).items():
        if callable(v) and not n.startswith("_"):
            out[n] = str(inspect.signature(v))
    return out


def current() -> dict[str, Any]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {
        "records": sorted(wire_registry.SHIPPED),
        "renamed": dict(wire_registry.RENAMED),
        "entry_points": {g: dict(eps) for g, eps in project["entry-points"].items()},
        "framings": [f.name for f in wire_registry.FRAMINGS],
        "bridge_prefixes": sorted(BRIDGE_PREFIXES),
        "protocol": protocol_members(),
        "override_points": overrides.override_points(),
    }


def changes(pinned: Any, now: Any, where: str = "") -> Iterator[str]:
    if isinstance(pinned, Mapping) and isinstance(now, Mapping):
        for k in pinned:
            if k not in now:
                yield f"{where}{k}: removed (was {pinned[k]!r})"
            else:
                yield from changes(pinned[k], now[k], f"{where}{k}: ")
        for k in now:
            if k not in pinned:
                yield f"{where}{k}: added ({now[k]!r}), not pinned"
    elif isinstance(pinned, list) and isinstance(now, list):
        yield from (f"{where}{x}: removed" for x in pinned if x not in now)
        yield from (f"{where}{x}: added, not pinned" for x in now if x not in pinned)
    elif pinned != now:
        yield f"{where}changed from {pinned!r} to {now!r}"


def test_public_names_and_signatures_are_the_pinned_ones() -> None:
    now = current()
    if os.environ.get("TURNSPEC_UPDATE_PUBLIC_NAMES"):
        PIN.write_text(json.dumps(now, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    pinned = json.loads(PIN.read_text(encoding="utf-8"))
    diff = list(changes(pinned, now))
    assert not diff, (
        "public names changed (keep the old name or signature working, then update the pin):\n" + "\n".join(diff)
    )


def _mentioned(names: Iterable[str]) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return [n for n in names if f"`{n}`" not in text]


def test_the_docs_say_which_names_third_parties_may_rely_on() -> None:
    now = current()
    names = [
        *now["records"],
        *now["renamed"],
        *now["framings"],
        *now["bridge_prefixes"],
        *now["entry_points"]["turnspec.adapters"],
        *now["protocol"],
        *{k.split(":")[1].split(".")[0] for k in now["override_points"]},
    ]
    assert not _mentioned(names), _mentioned(names)


# -- an override with an earlier release's signature keeps working -------------------------


class EarlierImageReader(OpenAIChatAdapter):
    """Overrides `image_from_wire` as it was before it took `session_id`."""

    name = "earlier-image-reader"

    def image_from_wire(self, image_url: Mapping[str, Any]) -> Any:  # type: ignore[override]
        block = super().image_from_wire(image_url)
        block.setdefault("metadata", {})["seen_by_override"] = True
        return block


def test_an_override_with_the_earlier_signature_is_called_as_that_release_called_it() -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {
                "role": "user",
                "content": [{"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}],
            }
        ],
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parsed = EarlierImageReader().from_wire_request(body, session_id="sess_1")
    image = parsed.messages[0]["content"][0]
    assert image["type"] == "image" and image["metadata"] == {"seen_by_override": True}
    assert any(
        w.category is DeprecationWarning
        and "image_from_wire takes no 'session_id'" in str(w.message)
        # read by a third party's adapter author: the page on the site, not a checkout's file
        and "(https://turnspec.dev/docs/public-names/)" in str(w.message)
        for w in caught
    )


def test_a_stream_complete_with_the_earlier_signature_still_ends_a_failed_stream() -> None:
    """A stream class overriding `complete(stop_reason)` (before `final`): a failing stream
    still ends with message_complete(error) before it raises (contract §6.5)."""
    from conformance.adapters import openai_chat
    from conformance.adapters.errors import AdapterError

    class EarlierStream(openai_chat._ChatStream):
        def complete(self, stop_reason: str) -> StreamEvent:  # type: ignore[override]
            return super().complete(stop_reason)

    class Adapter(OpenAIChatAdapter):
        def stream_response(self, chunks: Any, context: RequestContext) -> Iterator[StreamEvent]:
            st = EarlierStream(self, context)
            return iter(st.run(chunks))

    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "gpt-4o",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hi"}, "finish_reason": None}],
    }
    body = f'data: {json.dumps(chunk)}\n\ndata: {{"error": {{"message": "boom", "type": "server_error"}}}}\n\n'
    events: list[StreamEvent] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(AdapterError):
            for ev in Adapter().stream_response([body.encode()], RequestContext(session_id="sess_1", model="gpt-4o")):
                events.append(ev)
    assert events[-1]["type"] == "message_complete" and events[-1]["stop_reason"] == "error"


def test_options_keep_their_names() -> None:
    """`AdapterOptions` fields are what every adapter reads: a rename breaks them all."""
    assert list(AdapterOptions.__dataclass_fields__)[:6] == [
        "model",
        "max_output_tokens",
        "temperature",
        "stop_sequences",
        "stream",
        "output_schema",
    ]
