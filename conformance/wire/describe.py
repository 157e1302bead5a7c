"""A wire API's record as a page an adapter author reads: `turnspec wire show NAME` prints
it, and the docs site has it as `reference/wire/NAME.md` (`cli.docsgen`).

Every table a check judges an adapter by is in the record (`api.WireApi`): where the
request carries the model and asks for a stream (TC109), the stop reasons (TC903), the
usage buckets (TC904), the error signals (TC801), what thinking must go back (TC405).
An author writing from the protocol's docs, in another language, cannot read the Python
record; this page is that record, field by field, with the documentation sentence of
each. It reads the record only (never an adapter), so it is true of any adapter.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from ..core.escaping import md
from ..formats.canonical.status import STATUS_OF_STOP
from .api import STATUS_OTHERWISE, STATUS_TABLE, Endpoint, ErrorSignals, WireApi
from .schemas import folder_for

__all__ = ["describe", "index"]


def _code(value: object) -> str:
    """`value` as a code span (a record's own values: names, pointers, patterns)."""
    return f"`{value}`"


def _table(head: tuple[str, ...], rows: Iterable[tuple[str, ...]]) -> list[str]:
    out = [f"| {' | '.join(head)} |", f"|{'|'.join('---' for _ in head)}|"]
    # cells come formatted (`_code`, `md`); a `|` in one is escaped so that it stays one cell
    out += [f"| {' | '.join(c.replace('|', chr(92) + '|') for c in row)} |" for row in rows]
    return out


def _said(says: str, source: str) -> list[str]:
    return [f'> "{says}" ({source})'] if says else []


def _endpoint(e: Endpoint) -> list[str]:
    lines = [
        f"- method: `{e.method}`; path: `{e.path}`",
        # endpoint.differences and the TC109 path match: a template matches the path's end
        "- the path templates end the URL path: a base URL may add a prefix (a version, a project's route), "
        "which is the harness's, so a rendered path holds it or not; TC109 and TC802 read the operation and "
        "the model segment the template names",
    ]
    if e.stream_path is not None:
        lines.append(f"- a stream is asked for by its own path: `{e.stream_path}`")
    elif e.stream_field is not None:
        pointer, value = e.stream_field
        default = " (the API streams when it is absent: a request for one reply sets the opposite)"
        lines.append(
            f"- a stream is asked for in the body: `{pointer}` = `{json.dumps(value)}`"
            + (default if e.streams_by_default else "")
        )
    m = e.model
    if m.where == "body":
        lines.append(f"- the model: the body field `{m.pointer}`")
    elif m.where == "path":
        spelled = (
            "percent-encoded as one segment (every byte outside RFC 3986's unreserved set, `:` and `/` included)"
            if m.encoding == "percent"
            else "as it is (no percent-encoding)"
        )
        lines.append(f"- the model: the `{{model}}` segment of the path, {spelled}")
    else:
        lines.append("- the model: not named by the request")
    lines += _said(m.says, m.source)
    if e.examples:
        lines.append(f"- model ids the docs show (TC109 renders with them): {', '.join(map(_code, e.examples))}")
    for h in e.headers:
        value = f"`{h.value}`" if h.value is not None else "any value"
        again = "; a request rendered back from a recording carries the recorded value" if h.round_trip else ""
        lines.append(f"- header `{h.name}`: {value}{again}")
        lines += _said(h.says, h.source)
    if e.query:
        lines.append(f"- query parameters that are part of the request: {', '.join(map(_code, e.query))}")
    lines += [f"- {note}" for note in e.notes]
    return [*lines, *_said(e.says, e.source)]


def _body(api: WireApi) -> list[str]:
    """The request body's top-level demands, as the record's request schema states them (TC104
    validates every rendered body against it): the fields it requires, the values it fixes
    (`const`) and the fields it forbids (`not: {}`), each with the schema's description (the
    docs' sentence)."""
    path = folder_for(api) / "request.json"
    if not path.is_file():
        return []
    schema = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(schema, dict):
        return []
    lines = []
    if schema.get("required"):
        lines.append(f"- the body (TC104) requires: {', '.join(map(_code, schema['required']))}")
    for name, sub in schema.get("properties", {}).items():
        if not isinstance(sub, dict):
            continue
        said = f' ("{sub["description"]}")' if sub.get("description") else ""
        if "const" in sub:
            lines.append(f"- the body's `{name}` is `{json.dumps(sub['const'])}`{said}")
        elif sub.get("not") == {}:
            lines.append(f"- the body never holds `{name}`{said}")
    return lines


def _stop(api: WireApi) -> list[str]:
    if not api.stop_reasons:
        return ["The record maps no stop reason (not a chat turn, or the API reports none)."]
    rows = [
        (_code(raw), _code(canonical), ", ".join(map(_code, api.stop_reasons_also.get(raw, ()))) or "")
        for raw, canonical in api.stop_reasons.items()
    ]
    return [
        "The provider's value (as the response or the stream spells it) and the canonical `stop_reason`;",
        f"a parsed turn whose reason is {' or '.join(map(_code, STATUS_OF_STOP))} has that `metadata.status`, "
        "any other `complete`. "
        "Where a second value is as defensible (no value of contract §3.3 names the provider's), TC903 accepts it too.",
        "",
        *_table(("provider", "canonical", "also accepted"), rows),
    ]


def _usage(api: WireApi) -> list[str]:
    c = api.carries
    lines = [
        "Contract §7.2's four buckets: `input_tokens`, `output_tokens`, `cache_read_tokens`, `cache_write_tokens`.",
        f"- the API reports cache reads: {'yes' if c.cache_read_tokens else 'no'}; "
        f"cache writes: {'yes' if c.cache_write_tokens else 'no'}",
    ]
    u = api.usage_fields
    if u is not None:
        where = f"the usage object at `{u.at}` of a response" if u.at else "the response object itself"

        def paths(ps: tuple[tuple[str, ...], ...]) -> str:
            return " + ".join(_code(".".join(p)) for p in ps)

        lines.append(f"- read from {where} (a stream's usage event has the same fields):")
        lines.append(f"  - input: {paths(u.input)}")
        lines.append(f"  - output: {paths(u.output)}")
        for name, path in (("cache read", u.cache_read), ("cache write", u.cache_write)):
            lines.append(f"  - {name}: {_code('.'.join(path)) if path else 'not reported (0)'}")
    if api.cached_in_input:
        lines.append(
            "- the provider's input count includes cache reads: TC904 accepts either reading, "
            "`input_tokens` with them taken out (disjoint buckets) or the provider's count as it is, "
            "one per adapter"
        )
    else:
        lines.append("- the provider's input count excludes cache reads: `input_tokens` is it as it is")
    if api.stream_usage_request is not None:
        pointer, value = api.stream_usage_request
        lines.append(
            f"- a streaming request must set `{pointer}` = `{json.dumps(value)}`, or the stream reports no usage"
        )
    return lines


def _status_table() -> list[str]:
    """Contract §6.2's HTTP status table (`wire.api.STATUS_TABLE`), the one TC801 reads."""
    rows = [(md(r.label), _code(r.error_class), md(r.adjustment)) for r in STATUS_TABLE]
    return [
        "",
        "Contract §6.2's HTTP status table (the first row holding the status wins; any other status: "
        f"`{STATUS_OTHERWISE}`):",
        "",
        *_table(("HTTP status", "class", "provider-body adjustment"), rows),
    ]


def _errors(e: ErrorSignals) -> list[str]:
    if e == ErrorSignals(overflow_message=e.overflow_message):  # no signal of its own beyond the default wording
        return [
            "The record declares no error signal of the API's own (no header, body field or reason "
            "that classifies): contract §6.2's HTTP status table classifies its errors"
            + (
                f", a 400 whose message matches `{e.overflow_message.pattern}` being `context_overflow`"
                if e.overflow_message is not None
                else ""
            )
            + ". Values are contract §6.1's classes.",
            *_status_table(),
        ]
    lines = [
        "Read in this order, the first that answers wins; else contract §6.2's HTTP status table. "
        "Values are contract §6.1's classes."
    ]
    for header, table in e.headers.items():
        lines += ["", f"Response header `{header}` (its value before any `:`):", ""]
        lines += _table(("value", "class"), ((_code(k), _code(v)) for k, v in table.items()))
    if e.overflow_when is not None and e.overflow_message is not None:
        pointer, value = e.overflow_when
        lines.append(
            f"\nWhere `{pointer}` is `{value}` and the message matches `{e.overflow_message.pattern}`: `context_overflow`."
        )
    for pointer, table in e.body_fields:
        lines += ["", f"Body field `{pointer}`:", ""]
        lines += _table(("value", "class"), ((_code(k), _code(v)) for k, v in table.items()))
    if e.detail_reasons:
        lines += ["", "`error.details[].reason`:", ""]
        lines += _table(("reason", "class"), ((_code(k), _code(v)) for k, v in e.detail_reasons.items()))
    if e.frames:
        lines += ["", "A stream's own error frames (any case; a name not here is looked up in the tables above):", ""]
        lines += _table(("frame names", "class"), ((_code(k), _code(v)) for k, v in e.frames.items()))
    if e.overflow_when is None and e.overflow_message is not None:
        # said for a record with signals of its own too (Gemini's 400 "The input token count
        # (N) exceeds the maximum number of tokens allowed (M)."), which TC801 holds to it
        lines.append(
            "\nElse the status table, where a status it classes `invalid_request` is `context_overflow` when the "
            f"message matches `{e.overflow_message.pattern}` (contract §6.2's 413 row: \"Some providers use 400 "
            'with body indicating overflow; remap.").'
        )
    if e.status_in_body is not None:
        lines.append(f"\nAn error inside a stream carries its HTTP status at `{e.status_in_body}`.")
    else:
        lines.append(
            "\nAn error inside a stream has no HTTP status of its own (the stream began with a 200): the"
            " signals above alone classify it, and one they give no class may take any §6.1 class (TC801"
            " holds it to that class's §6.3 subclass and §6.4 `retryable`)."
        )
    for a in e.also_accepted:
        lines.append(f"\n`{a.signal}` may also be: {', '.join(map(_code, sorted(a.classes)))}")
        lines += _said(a.says, a.source)
    return lines + _status_table()


def _carries(api: WireApi) -> list[str]:
    c = api.carries
    names = {
        "system_prompt": "a system prompt",
        "thinking_text": "thinking text",
        "thinking_signature": "thinking signatures (opaque state)",
        "redacted_thinking": "redacted thinking",
        "images_base64": "images as base64",
        "images_url": "images by URL",
        "tool_result_error": "an error flag on tool results",
        "parallel_tool_calls": "parallel tool calls",
    }
    has = [text for key, text in names.items() if getattr(c, key)]
    lacks = [text for key, text in names.items() if not getattr(c, key)]
    lines = [
        f"- can carry: {', '.join(has) or 'none of these'}",
        f"- cannot carry: {', '.join(lacks) or 'nothing listed'}",
    ]
    t = api.tool_ids
    if not t.issued_by_provider:
        lines.append(
            "- tool-call ids: the API may send a call with none (its docs show none, or some servers send"
            " none): the adapter mints one for such a call, derived from the reply (a later reply repeating"
            " a call is a new call: TC303), and uses an id the API did issue as it is"
        )
    rule = [
        f"matching `{t.pattern.pattern}`" if t.pattern is not None else "",
        f"at most {t.max_length} characters" if t.max_length else "",
    ]
    if any(rule):
        lines.append(f"- tool-call ids it accepts in a request: {', '.join(r for r in rule if r)}")
    tb = api.thinking_back
    if tb.needs:
        lines.append(f"- thinking a replayed assistant turn must carry back: {', '.join(sorted(tb.needs))}")
        lines += _said(tb.says, tb.source)
        if tb.prior_turns_optional:
            lines.append("- only of the turn a request continues during tool use; earlier turns' may be left out")
            lines += _said(tb.prior_turns_optional, tb.source)
    else:
        why = f" ({tb.because})" if tb.because else ""
        lines.append(f"- thinking back on replay: not required{why}")
    return lines


def _framing(api: WireApi) -> list[str]:
    others = [f.name for f in api.other_framings]
    lines = [
        f"- streamed responses: `{api.framing.name}`" + (f" (also: {', '.join(map(_code, others))})" if others else "")
    ]
    if api.framing.media_types:
        lines.append(f"- announced by the Content-Type: {', '.join(map(_code, api.framing.media_types))}")
    return lines


def _request(api: WireApi) -> list[str]:
    lines = [
        f"- request paths it is recognised by: {', '.join(_code(p.pattern) for p in api.request_paths)}",
        f"- the conversation turns are under `{api.history_key}`",
        *_body(api),
    ]
    if api.hosts:
        lines.append(f"- the provider's own hosts: {', '.join(map(_code, api.hosts))}")
    if api.state_fields:
        lines.append(
            "- fields that make the provider read server-side state (the caller's to set, never the adapter's): "
            + ", ".join(map(_code, api.state_fields))
        )
    if api.out_of_band_settings:
        lines.append(
            "- settings that add input tokens no adapter renders: " + ", ".join(map(_code, api.out_of_band_settings))
        )
    for d in api.accepted_differences:
        lines.append(f"- treated alike by the API: {d}")
    a = api.access
    if a.base_url:
        lines.append(
            f"- base URL: `{a.base_url}`" + (f"; key from `{a.key_env}` in `{a.key_header}`" if a.key_env else "")
        )
    return lines


def _recorded(recorded: Mapping[str, int]) -> list[str]:
    if not recorded:
        return ["turnspec holds no recording of this API: an adapter's own `cassettes/<name>/` is its only replay."]
    return [
        "The folders of turnspec's cassettes holding this API's exchanges (an adapter whose name is none of them "
        "names them in `cassette_folders`):",
        "",
        *(f"- `{folder}`: {n} exchange{'s' if n != 1 else ''}" for folder, n in recorded.items()),
    ]


def describe(api: WireApi, recorded: Mapping[str, int] | None = None) -> str:
    """The page of one record (module doc), as Markdown that reads as plain text too;
    `recorded`: turnspec's cassette folders holding the API's exchanges, with their counts
    (`suite.runner.recorded_folders`: the caller's to read, a layer above this one)."""
    parts: list[tuple[str, list[str]]] = [
        ("Request", _request(api)),
        (
            "Endpoint (TC109, TC802)",
            _endpoint(api.endpoint)
            if api.endpoint is not None
            else ["The record does not say; TC109 reads the request paths only."],
        ),
        ("Streaming", _framing(api)),
        ("Stop reasons (TC903)", _stop(api)),
        ("Usage (TC904)", _usage(api)),
        ("Errors (TC801)", _errors(api.errors)),
        ("What the wire can carry", _carries(api)),
    ]
    if recorded is not None:
        parts.append(("Recordings (cassette_folders)", _recorded(recorded)))
    out = [f"# {api.name}: {md(api.title)}", "", "Written from:", *(f"- <{u}>" for u in api.docs), ""]
    if not api.chat:
        out += ["Not a chat turn: the suite's chat checks do not apply.", ""]
    for title, lines in parts:
        out += [f"## {title}", "", *lines, ""]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).rstrip("\n") + "\n"


def index(apis: Iterable[WireApi], link: Mapping[str, str] | None = None) -> str:
    """One line per record: its name and title (a link to its page where `link` has one)."""
    rows = []
    for api in apis:
        name = f"[{api.name}]({link[api.name]})" if link and api.name in link else _code(api.name)
        rows.append((name, md(api.title), _code(api.framing.name)))
    return "\n".join(_table(("wire API", "title", "stream framing"), rows)) + "\n"
