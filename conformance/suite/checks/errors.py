"""TC801's oracle: what the adapter contract §6.2-§6.4 says a recorded error response must raise.

Read from the recording alone (never from the adapter under test):

- the class: §6.2's HTTP status table ("a starting point"), then the provider's error
  signals, which the API's wire record declares (`WireApi.errors`: `ErrorSignals`): body
  fields (Anthropic's `error.type`, OpenAI's `error.code` / `error.type`, as §6.2 lists
  them), headers (`x-amzn-ErrorType`), Google's `error.details[].reason`, the wording of a
  context-overflow message (§6.2's 413 row: "Some providers use 400 with body indicating
  overflow; remap."). Nothing here branches on an API's name: a new API declares its
  signals in its record;
- the exception: the §6.3 subclass of that class (`isinstance`, not a name or a set);
- `retryable`: true exactly for the transient classes of §6.4 (rate_limit, server_error,
  network), the signal §6.4 asks for "so the caller knows it was a transient class";
- `provider_status`: the HTTP status; `request_id`: the one the recording carries (the
  body's `request_id`, the `request-id` or `x-request-id` header), when it carries one;
- `RateLimitError.retry_after_seconds`: the recorded hint (`retry-after` seconds,
  `retry-after-ms`, Google's `RetryInfo.retryDelay`), when there is one.

Reading beyond the contract's text (upstream changed since it was written): Anthropic's
context overflow now reads "prompt is too long: N tokens > M maximum", which has neither
"context" nor "tokens exceeds", so its record counts "prompt is too long" as well.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ...adapters.errors import (
    ERROR_CLASSES,
    AdapterError,
    AuthError,
    CancelledError,
    ContextOverflowError,
    InvalidRequestError,
    NetworkError,
    RateLimitError,
    ServerError,
    WireFormatError,
)
from ...wire import registry
from ...wire.api import ErrorSignals, WireApi, status_default, value_at

SUBCLASS: dict[str, type[AdapterError]] = {
    "rate_limit": RateLimitError,
    "auth": AuthError,
    "server_error": ServerError,
    "network": NetworkError,
    "context_overflow": ContextOverflowError,
    "invalid_request": InvalidRequestError,
    "cancelled": CancelledError,
}
"""Contract §6.3: the subclass of each §6.1 class (`other` has none but the base)."""
TRANSIENT = ("rate_limit", "server_error", "network")  # contract §6.4 retryable classes


def _record(api: str | WireApi) -> WireApi | None:
    """The record an API name stands for (None for one no registry knows: §6.2's table alone)."""
    if isinstance(api, WireApi):
        return api
    try:
        return registry.get(api)
    except KeyError:
        return None


def _signals(api: str | WireApi) -> ErrorSignals:
    record = _record(api)
    return record.errors if record is not None else ErrorSignals()


def _details(err: dict[str, Any]) -> list[dict[str, Any]]:
    """Google's `error.details` objects (a recording may hold anything there)."""
    details = err.get("details")
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def _error_object(body: Any) -> dict[str, Any]:
    err = body.get("error") if isinstance(body, dict) else None
    return err if isinstance(err, dict) else {}


def _message(body: Any) -> str:
    err = _error_object(body)
    if err:
        return str(err.get("message") or "")
    if isinstance(body, dict):
        return str(body.get("error") or body.get("message") or "")
    return str(body or "")


def provider_text(body: Any) -> str:
    """The provider's message in an error body: what TC801 looks for in the exception."""
    return _message(body)


def _header_class(signals: ErrorSignals, headers: Mapping[str, Any]) -> str | None:
    for name, classes in signals.headers.items():
        raw = _header(headers, name.lower())
        if raw is not None:
            hit = classes.get(raw.split(":", 1)[0].strip())
            if hit is not None:
                return hit
    return None


def _body_class(signals: ErrorSignals, body: Any) -> str | None:
    """The class the record's body signals give (steps 2-4 of `ErrorSignals`), None for none."""
    when = signals.overflow_when
    if (
        when is not None
        and signals.overflow_message is not None
        and value_at(body, when[0]) == when[1]
        and signals.overflow_message.search(_message(body))
    ):
        return "context_overflow"
    for pointer, classes in signals.body_fields:
        value = value_at(body, pointer)
        if isinstance(value, str) and value in classes:
            return classes[value]
    reasons = {str(d.get("reason")) for d in _details(_error_object(body))}
    return next((cls for reason, cls in signals.detail_reasons.items() if reason in reasons), None)


def _signal_values(signals: ErrorSignals, body: Any, headers: Mapping[str, Any]) -> set[str]:
    """The values the record's header and body signals read in this error (before any ':')."""
    out: set[str] = set()
    for name in signals.headers:
        raw = _header(headers, name.lower())
        if raw is not None:
            out.add(raw.split(":", 1)[0].strip())
    for pointer, _ in signals.body_fields:
        value = value_at(body, pointer)
        if isinstance(value, str):
            out.add(value)
    return out


def also_accepted(api: str | WireApi, body: Any, headers: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Classes beside the expected one that the record's `AlsoAccepted` entries allow for
    this error -> the sentence that allows it (contract §6.2: "Adapters apply these
    mappings as a starting point, then adjust based on provider error bodies")."""
    signals = _signals(api)
    seen = _signal_values(signals, body, headers or {})
    out: dict[str, str] = {}
    for also in signals.also_accepted:
        if also.signal in seen:
            for cls in also.classes:
                out[cls] = f'{also.signal}: "{also.says}" ({also.source})'
    return out


def expected_class(api: str | WireApi, status: int, body: Any, headers: Mapping[str, Any] | None = None) -> str:
    """The §6.1 class the contract's table gives a recorded error of `api`: §6.2's status
    default adjusted by the error signals its record declares (`WireApi.errors`)."""
    signals = _signals(api)
    hint = _header_class(signals, headers or {}) or _body_class(signals, body)
    return hint if hint is not None else _status_class(signals, status, body)


def _status_class(signals: ErrorSignals, status: int, body: Any) -> str:
    """§6.2's default for `status`, a 400 remapped to context_overflow where the record's
    overflow wording (with no field to gate it) matches the body's message."""
    default = status_default(status)
    if (
        default == "invalid_request"
        and signals.overflow_when is None
        and signals.overflow_message is not None
        and signals.overflow_message.search(_message(body))
    ):
        return "context_overflow"  # "Some providers use 400 with body indicating overflow; remap." (§6.2)
    return default


def hinted_class(api: str | WireApi, body: Any, headers: Mapping[str, Any] | None = None) -> str | None:
    """The class the record's error signals alone give an error body, None when they give
    none. A mid-stream error has no HTTP status of its own (the stream began with a 200), so
    only the body (or a status the body carries, `ErrorSignals.status_in_body`) classifies
    it."""
    signals = _signals(api)
    hint = _header_class(signals, headers or {}) or _body_class(signals, body)
    if hint is not None:
        return hint
    code = value_at(body, signals.status_in_body) if signals.status_in_body else None
    if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
        return _status_class(signals, code, body)
    return None


def unhinted_stream_problems(exc: BaseException) -> list[str]:
    """What an exception raised after a stream's error event gets wrong when §6.2 gives the
    error body no class (Ollama's `{"error": "..."}` line): contract §6.1 "Adapters MUST
    classify all errors into one of the eight classes", the §6.3 subclass of the class it
    names, §6.4's `retryable` for it; never a `WireFormatError`, which says the provider broke
    its documented format (the error line is documented)."""
    out: list[str] = []
    cls = getattr(exc, "error_class", None)
    if isinstance(exc, WireFormatError):
        out.append(
            f"raised a wire-format error ({exc}) for the provider's documented error event; "
            "contract §6.5.3: raise the appropriate AdapterError subclass"
        )
    elif cls not in ERROR_CLASSES:
        out.append(f"error_class {cls!r} is none of §6.1's eight classes (contract §6.1)")
    else:  # any class fits; its §6.3 subclass and §6.4 retryable must agree with it
        out += stream_problems(exc, str(cls))
    return out


_WORD = re.compile(r"\w{3,}")


def carries_message(got: str, want: str) -> bool:
    """Whether `got` is `want` as contract §6.3 allows it: `provider_message: str # raw
    provider message, possibly redacted`. Redaction replaces parts (a key, an email, an
    account id) and keeps the rest, so the message passes when it holds the recorded text
    whole or at least half of the recorded message's words (3+ characters, case folded); a
    generic text of the adapter's own ("HTTP 500") or an empty one keeps neither. A message
    cut to a length (a log-friendly truncation) passes when it keeps the first 40
    characters of the recorded one verbatim."""
    if want in got:
        return True
    head = want[:40]
    if len(want) > 40 and head in got:
        return True
    words = {w.casefold() for w in _WORD.findall(want)}
    if not words:
        return False
    kept = {w.casefold() for w in _WORD.findall(got)} & words
    return 2 * len(kept) >= len(words)


def message_problems(exc: BaseException, body: Any) -> list[str]:
    """Contract §6.3: `provider_message: str # raw provider message, possibly redacted`; an
    exception that carries neither the recorded message nor a redaction of it lost it."""
    want = _message(body)
    got = getattr(exc, "provider_message", None)
    if not want or (isinstance(got, str) and carries_message(got, want)):
        return []
    return [
        f"provider_message {got!r:.80} carries neither the provider's message {want!r:.80} nor a "
        "redaction of it (contract §6.3: 'raw provider message, possibly redacted')"
    ]


def stream_problems(exc: BaseException, want: str) -> list[str]:
    """What an exception raised after a stream's error event gets wrong (contract §6.5.3:
    "the appropriate AdapterError subclass"; §6.3 subclass, §6.4 retryable)."""
    out: list[str] = []
    if getattr(exc, "error_class", None) != want:
        out.append(f"error_class {getattr(exc, 'error_class', None)!r}, want {want!r}")
    sub = SUBCLASS.get(want, AdapterError)
    if not isinstance(exc, sub):
        out.append(f"raised {type(exc).__name__}, want a {sub.__name__} (contract §6.3, §6.5.3)")
    if getattr(exc, "retryable", None) is not (want in TRANSIENT):
        out.append(
            f"retryable={getattr(exc, 'retryable', None)!r}, want {want in TRANSIENT} for {want} (contract §6.4)"
        )
    return out


def _header(headers: Mapping[str, Any], name: str) -> str | None:
    for k, v in headers.items():
        if str(k).lower() == name:
            if isinstance(v, list | tuple):
                v = v[0] if v else None
            return None if v is None else str(v)
    return None


def recorded_request_id(body: Any, headers: Mapping[str, Any]) -> str | None:
    rid = body.get("request_id") if isinstance(body, dict) else None
    if isinstance(rid, str) and rid:
        return rid
    return _header(headers, "request-id") or _header(headers, "x-request-id")


def recorded_retry_after(body: Any, headers: Mapping[str, Any]) -> float | None:
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        raw = _header(headers, name)
        if raw is not None:
            try:
                return float(raw) / scale
            except ValueError:
                return None  # an HTTP-date: the harness reads the header itself
    for d in _details(_error_object(body)):
        if str(d.get("@type", "")).endswith("google.rpc.RetryInfo"):
            m = re.fullmatch(r"(\d+(?:\.\d+)?)s", str(d.get("retryDelay", "")))
            if m:
                return float(m.group(1))
    return None


def problems(
    exc: BaseException,
    api: str | WireApi,
    status: int,
    body: Any,
    headers: Mapping[str, Any],
    request_id: str | None = None,
) -> list[str]:
    """What the raised exception gets wrong against the contract (empty when nothing).

    `request_id` is the core's id of the call (contract §3.3 `CanonicalRequest.request_id:
    ULID, generated by core`). §6.3 gives `AdapterError.request_id: str` no other meaning, so
    either that id or the provider's own request id recorded with the answer is honest."""
    want = expected_class(api, status, body, headers)
    out: list[str] = []
    cls = getattr(exc, "error_class", None)
    also = also_accepted(api, body, headers)
    if cls != want and cls in also:
        want = str(cls)  # §6.2's body adjustment the record allows: held to that class's §6.3/§6.4
    sub = SUBCLASS.get(want, AdapterError)
    if cls != want:
        alt = (
            f" (or {', '.join(sorted(also))}, contract §6.2 'adjust based on provider error bodies': "
            f"{'; '.join(also[c] for c in sorted(also))})"
            if also
            else ""
        )
        out.append(f"error_class {cls!r}, want {want!r}{alt}")
    if not isinstance(exc, sub):
        out.append(f"raised {type(exc).__name__}, want a {sub.__name__} (contract §6.3)")
    retryable = getattr(exc, "retryable", None)
    if retryable is not (want in TRANSIENT):
        out.append(f"retryable={retryable!r}, want {want in TRANSIENT} for {want} (contract §6.4)")
    if getattr(exc, "provider_status", None) != status:
        out.append(f"provider_status={getattr(exc, 'provider_status', None)!r}, want {status}")
    rid = recorded_request_id(body, headers)
    got_id = getattr(exc, "request_id", None)
    if rid is not None and got_id not in {rid, request_id or rid}:
        core = f" nor the call's {request_id!r} (contract §3.3)" if request_id else ""
        out.append(f"request_id={got_id!r} is neither the recording's {rid!r}{core} (contract §6.3)")
    if not isinstance(getattr(exc, "provider_message", None), str):
        out.append("provider_message is not a string (contract §6.3)")
    else:
        out += message_problems(exc, body)
    hint = recorded_retry_after(body, headers)
    if want == "rate_limit" and hint is not None and getattr(exc, "retry_after_seconds", None) != hint:
        out.append(f"retry_after_seconds={getattr(exc, 'retry_after_seconds', None)!r}, recorded hint {hint}")
    return out
