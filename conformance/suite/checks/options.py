"""TC105: the generation options of the contract's CanonicalRequest reach the wire.

Contract §3.3: `max_output_tokens` is "required; adapter must honor", and §4.2/§4.3 place it
with `stop_sequences` and `temperature` in the provider's request (`max_tokens`,
`stop_sequences`, `temperature` on Anthropic; `max_completion_tokens`, `stop`, `temperature`
on OpenAI). A one-message script is rendered with chosen values, streamed and not (and once with
temperature 0, a value a truthiness test loses); the
API's record locates each option's field (`Probes.request_options`, written from the
provider's docs), and the value there must be the one asked for. Only the options the API
has a field for are judged (the Responses API has no stop sequences); an API whose record
locates none is skipped with that reason. A string `stop` is one stop sequence (OpenAI
accepts both forms).

An option the API has no field for (the record's probe locates none: the Responses API's
stop sequences) is judged as a §7.3 drop: one option WARN line naming it, and no field on
the wire that the API's request schema (its docs) does not define, so neither `stop` nor
another API's `max_tokens`/`max_completion_tokens` stands in for it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from ...adapters.protocol import AdapterOptions, capabilities_of
from ...wire import schemas as wire_schemas
from ...wire.api import WireApi
from .. import rules as R
from ..capture import capture_warnings
from ..outcome import Outcome
from ..scripts import Builder
from .common import Env, check, crash, names_any, outcome, render, wire_api_of

WANT: dict[str, Any] = {
    "max_output_tokens": 321,
    "stop_sequences": ["zq-stop-one", "zq-stop-two"],
    "temperature": 0.25,
}
# (label, options asked, stream). Temperature 0 (greedy decoding) is asked too: if only it
# fails, the adapter tests the option's truthiness (`if options.temperature:`) instead of
# `is not None`, and 0 never reaches the wire
CASES: tuple[tuple[str, dict[str, Any], bool], ...] = (
    ("options", WANT, False),
    ("options (stream)", WANT, True),
    ("options (temperature 0)", {**WANT, "temperature": 0.0}, False),
)
# canonical §7.3 and contract §4.4, the sentences an option the API has no field for follows
DROP_OPTION = (
    'canonical §7.3: "Drop the unrepresentable content (default)" and "Write a structured log entry at '
    'WARN level"; contract §4.4: "Drop the unrepresentable content silently from the wire request"'
)


# how an adapter's WARN line may name each option: its canonical name, spelled with spaces
# or dashes, or the provider-side field most docs call it by
_OPTION_WORDS: dict[str, tuple[str, ...]] = {
    "stop_sequences": ("stop sequence", "stop"),
    "max_output_tokens": ("max output tokens", "max tokens", "max_tokens"),
    "temperature": ("temperature",),
}


def _dropped(name: str, warnings: list[logging.LogRecord]) -> int:
    """How many WARN lines report the option `name` as not sent."""
    return sum(1 for r in warnings if names_any(r, name, *_OPTION_WORDS.get(name, ())))


def _drop_problems(
    api: WireApi, body: dict[str, Any], absent: list[str], warnings: list[logging.LogRecord]
) -> list[str]:
    """Options the API has no field for: one WARN line each, and no undocumented field."""
    problems = [
        f"{name} asked but {api.title} has no field for it, and no WARN line names it ({DROP_OPTION})"
        for name in absent
        if _dropped(name, warnings) == 0
    ]
    documented = wire_schemas.documented_fields(api, "request")
    if documented is not None:
        extra = sorted(k for k in body if k not in documented)
        if extra:
            problems.append(
                f"the body carries {', '.join(extra)}, which {api.title}'s request docs do not define "
                f"(schemas/wire/{api.schema_dir}/request.json; {DROP_OPTION})"
            )
    return problems


def _as_asked(name: str, value: Any) -> Any:
    if name == "stop_sequences" and isinstance(value, str):
        return [value]
    return value


@check(R.REQUEST_OPTIONS)
def request_options(env: Env) -> Iterator[Outcome]:
    for s in env.subjects:
        a = s.adapter
        api = wire_api_of(a)
        b = Builder(session_id="sess_options")
        b.add("user", [{"type": "text", "text": "Say hi."}])
        for label, want, stream in CASES:
            if stream and not capabilities_of(a).get("supports_streaming"):
                continue
            options = AdapterOptions(
                model=f"{a.provider}:conformance-model",
                max_output_tokens=want["max_output_tokens"],
                stop_sequences=tuple(want["stop_sequences"]),
                temperature=want["temperature"],
                stream=stream,
            )
            try:
                with capture_warnings() as warnings:
                    body = render(a, b.messages, [], options).body
            except Exception as exc:
                yield outcome(R.REQUEST_OPTIONS, s, "fail", label, crash(exc))
                continue
            found = api.probes.request_options(body) if api is not None and isinstance(body, dict) else None
            if not found:
                why = (
                    f"no WireApi record named {a.wire_api!r}"
                    if api is None
                    else f"{api.name}'s record locates no option fields"
                )
                yield outcome(R.REQUEST_OPTIONS, s, "skip", label, why)
                continue
            problems = [
                f"{name} {want[name]!r} asked, wire {at.pointer} carries {at.value!r} (contract §3.3, §4.2-§4.3)"
                for name, at in found.items()
                if _as_asked(name, at.value) != want[name]
            ]
            if api is not None and isinstance(body, dict):
                problems += _drop_problems(api, body, [n for n in want if n not in found], warnings)
            yield outcome(R.REQUEST_OPTIONS, s, "fail" if problems else "pass", label, "; ".join(problems))
