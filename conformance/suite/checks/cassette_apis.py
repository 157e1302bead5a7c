"""TC800: the recordings themselves, judged before any adapter sees them. An interaction no
adapter serves is skipped with a reason, never silently; a cassette that cannot be read, and
a recorded response or stream that is damaged or off its API's wire schemas, is reported
once as a recording problem (its file, interaction and JSON pointer) and replayed to no
adapter: an adapter is never failed for the recording it was given (issue 43 item 3)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

from ...wire import registry
from ...wire import schemas as wire_schemas
from ...wire.api import WireApi
from ...wire.framing import FramingError, JsonEvent, ProviderStreamError
from .. import rules as R
from ..interactions import Cassette, Interaction
from ..outcome import SUITE_SUBJECT, Outcome
from .common import Env, check, outcome, wire_name

# what a recording problem is reported against: canonical §11.2, cassettes "committed and reviewed"
REVIEWED = "§11.2: recordings are committed and reviewed, so the suite judges them before it replays them"


@check(R.CASSETTE_API)
def cassette_apis(env: Env) -> Iterator[Outcome]:
    served = {wire_name(s.adapter) for s in env.subjects} | {wire_name(p) for p in env.peers}
    for c in env.samples:
        if c.error:
            yield outcome(R.CASSETTE_API, SUITE_SUBJECT, "fail", c.label, c.error)
        if c.skipped:  # a file of no recording format: set aside, said, never a failure
            yield outcome(R.CASSETTE_API, SUITE_SUBJECT, "skip", c.label, c.skipped)
        for label, why in c.set_aside:  # an interaction the recorder kept no response of
            yield outcome(R.CASSETTE_API, SUITE_SUBJECT, "skip", label, why)
        warned = _warnings(c)
        for it in c.interactions:
            if it.api in served:
                yield outcome(R.CASSETTE_API, SUITE_SUBJECT, "pass", it.label, warned.get(it.label, ""))
                continue
            wire = registry.get(it.api) if it.api is not None else None
            path = it.uri.split("?")[0][:80]
            if wire is None:
                why = f"unknown endpoint {path}: no WireApi record matches it"
            elif not wire.chat:
                why = f"{wire.name}: not an LLM chat turn ({path})"
            else:
                why = f"{wire.name}: no registered adapter serves it"
            note = warned.get(it.label)
            yield outcome(R.CASSETTE_API, SUITE_SUBJECT, "skip", it.label, f"{why}; {note}" if note else why)
    for cs in env.own.values():
        for c in cs:
            if c.error:
                yield outcome(R.CASSETTE_API, SUITE_SUBJECT, "fail", c.label, c.error)
            if c.skipped:
                yield outcome(R.CASSETTE_API, SUITE_SUBJECT, "skip", c.label, c.skipped)
            for label, why in c.set_aside:
                yield outcome(R.CASSETTE_API, SUITE_SUBJECT, "skip", label, why)
    for it, why in env.damaged:
        yield outcome(
            R.CASSETTE_API, SUITE_SUBJECT, "fail", it.label, f"{why}; not replayed to any adapter ({REVIEWED})"
        )
    for s in env.subjects:
        for it, why in env.unclaimed(s):
            yield outcome(R.CASSETTE_API, SUITE_SUBJECT, "skip", it.label, why)


def _warnings(c: Cassette) -> dict[str, str]:
    """What the reader read another way than its recorder's layout, per interaction label
    (`Cassette.warnings`): said on that interaction's case, which still passes."""
    out: dict[str, str] = {}
    for label, why in c.warnings:
        out[label] = f"{out[label]}; warning: {why}" if label in out else f"warning: {why}"
    return out


def set_aside_damaged(cassettes: Iterable[Cassette]) -> list[tuple[Interaction, str]]:
    """Take every damaged or off-schema recording (`recording_problem`) out of its cassette,
    before any check replays it; each one once (a folder two adapters read is loaded twice),
    with its problem, in the order read."""
    out: list[tuple[Interaction, str]] = []
    seen: set[str] = set()
    for c in cassettes:
        kept = []
        for it in c.interactions:
            why = recording_problem(it)
            if why is None:
                kept.append(it)
            elif it.label not in seen:
                seen.add(it.label)
                out.append((it, why))
        c.interactions = kept
    return out


def recording_problem(it: Interaction) -> str | None:
    """Why a recorded answer cannot be replayed as its API's (None when it can): a response
    body that is no JSON, a stream whose bytes break its framing before they end, or a
    response or stream event the API's wire schemas (response.json, stream-event.json)
    refuse, named by JSON pointer. Judged with the schemas' tolerated departures (a real
    server's form that loses nothing is no problem). Error answers (HTTP 400 and above) are
    TC801's to read as they come; a stream cut short is the adapter's to read (contract
    §6.5), not damage; an interaction of no chat record is TC800's skip."""
    api = it.wire
    if api is None or not api.chat or it.status >= 400:
        return None
    if it.is_stream:
        return _stream_problem(api, it)
    if it.response_json is None:
        what = "empty" if not it.response_body.strip() else "not JSON"
        return f"the recorded response body is {what} (HTTP {it.status}, {it.content_type or 'no content-type'})"
    return _schema_problem(api, "response", it.response_json, "the recorded response")


def _stream_problem(api: WireApi, it: Interaction) -> str | None:
    framing = it.framing
    if framing is None:
        return None
    decoder = framing.decoder()
    try:
        frames = list(decoder.feed(it.response_body))
    except FramingError as exc:
        return f"the recorded {framing.name} stream is damaged: {exc}"
    with contextlib.suppress(FramingError):  # cut short: what came is the provider's, the adapter's to read
        frames += decoder.close()
    for frame in frames:
        try:
            ev = framing.to_json(frame)
        except FramingError as exc:
            return f"the recorded {framing.name} stream is damaged: {exc}"
        except ProviderStreamError:
            break  # the provider's error frame: TC801's
        if ev is not None:
            why = _schema_problem(api, "stream-event", ev.value, _event(ev))
            if why is not None:
                return why
    return None


def _event(ev: JsonEvent) -> str:
    return f"recorded stream event {ev.index}" + (f" (line {ev.line})" if ev.line else "")


def _schema_problem(api: WireApi, kind: str, value: Any, what: str) -> str | None:
    """The first error of `value` under the API's `kind` schema (the inner API's where the
    record carries another's: `wire_schemas.owner`), read with the departures the schema
    tolerates in recordings (`x-tolerate`); None when it is valid or there is no schema."""
    tolerant = wire_schemas.reader(api, kind)
    err = tolerant.read(value).error if tolerant is not None else None
    if err is None:
        return None
    owner = wire_schemas.owner(api, kind) or api
    where = f"schemas/wire/{owner.schema_dir}/{kind}.json"
    return f"{what} is off its API's wire schema at {err.pointer or '/'}: {err.message[:160]} ({where})"
