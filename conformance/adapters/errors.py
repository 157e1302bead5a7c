"""Adapter failures (adapter contract §6): one class per error class of §6.1, the default
HTTP status mapping of §6.2, and the two errors the contract adds: a critical block that
cannot be sent (§4.2.2, §7.3) and a provider body that breaks its documented format."""

from __future__ import annotations

from typing import Any, ClassVar

from ..wire.api import status_default

# adapter contract §6.1
ERROR_CLASSES = (
    "rate_limit",
    "auth",
    "server_error",
    "network",
    "context_overflow",
    "invalid_request",
    "cancelled",
    "other",
)
# adapter contract §6.4: "Retryable classes: `RATE_LIMIT`, `SERVER_ERROR`, `NETWORK`."
RETRYABLE = ("rate_limit", "server_error", "network")


class AdapterError(Exception):
    """Base of every adapter failure; `error_class` is one of adapter contract §6.1."""

    error_class: ClassVar[str] = "other"

    def __init__(
        self,
        message: str,
        *,
        provider_status: int | None = None,
        request_id: str | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.provider_message = message
        self.provider_status = provider_status
        self.request_id = request_id
        self.retryable = retryable


class RateLimitError(AdapterError):
    error_class = "rate_limit"

    def __init__(self, message: str, *, retry_after_seconds: float | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.retry_after_seconds = retry_after_seconds


class AuthError(AdapterError):
    error_class = "auth"


class ServerError(AdapterError):
    error_class = "server_error"


class NetworkError(AdapterError):
    error_class = "network"


class ContextOverflowError(AdapterError):
    error_class = "context_overflow"


class InvalidRequestError(AdapterError):
    error_class = "invalid_request"


class CancelledError(AdapterError):
    error_class = "cancelled"


class WireFormatError(AdapterError):
    """The provider's body is not what its API documents (a truncated stream, a missing field).

    `event` (0-based) and `line` (1-based) locate the offending stream event when the body
    was a stream, so a command can print `file: event 3, line 12: ...`.
    """

    error_class = "other"

    def __init__(
        self,
        message: str,
        *,
        event: int | None = None,
        line: int | None = None,
        offset: int | None = None,
        **kw: Any,
    ) -> None:
        super().__init__(message, **kw)
        self.event = event
        self.line = line
        self.offset = offset  # byte offset in the body (binary framings have no lines)

    @property
    def location(self) -> str:
        """`event N, line L` or `event N, byte B` (what is known of it), or ""."""
        parts = [
            f"event {self.event}" if self.event is not None else "",
            f"line {self.line}" if self.line else "",
            f"byte {self.offset}" if self.offset is not None else "",
        ]
        return ", ".join(p for p in parts if p)


class StreamCutError(WireFormatError):
    """A stream that ended before its end: no stop reason (and no closing event) arrived.

    Raised after contract §6.5's `message_complete` (stop_reason `error`, the partial
    content): what arrived is read, and the message says what is missing, so `wire parse`
    prints a `partial` message (canonical §4.3: its streaming never completed) with a
    warning instead of refusing the bytes.
    """


class CriticalBlockError(InvalidRequestError):
    """A block the provider cannot carry was marked critical, so the request fails (§4.2.2, §7.3).

    Carries the same fields as the WARN line a non-critical drop writes.
    """

    def __init__(self, *, adapter: str, session_id: str, message_id: str, block_type: str, reason: str) -> None:
        super().__init__(f"{adapter}: critical {block_type} block of message {message_id} not sendable: {reason}")
        self.adapter = adapter
        self.session_id = session_id
        self.message_id = message_id
        self.block_type = block_type
        self.reason = reason


BY_CLASS: dict[str, type[AdapterError]] = {
    c.error_class: c
    for c in (
        RateLimitError,
        AuthError,
        ServerError,
        NetworkError,
        ContextOverflowError,
        InvalidRequestError,
        CancelledError,
    )
}
"""The exception of each adapter contract §6.1 class (`other` is `AdapterError` itself)."""


def error_for_status(status: int, message: str, *, hint: str | None = None) -> AdapterError:
    """The adapter contract §6.2 default mapping of an HTTP status, refined by a class hint;
    `retryable` is the class's (§6.4's transient classes), whichever way the class was found."""
    cls = BY_CLASS.get(hint) if hint is not None else None
    if cls is None:
        cls = BY_CLASS.get(status_default(status), AdapterError)  # `other` is the base itself
    return cls(message, provider_status=status, retryable=cls.error_class in RETRYABLE)


class OperationNotOffered(NotImplementedError):
    """The adapter does not offer `operation` (an exec child whose `hello` does not list it,
    docs/exec-protocol.md; or any adapter that says so): the suite reports the cases that
    needed it skipped with this reason, never passed or failed (`suite.outcome.note_crash`).
    A `NotImplementedError`, so `from_wire_request` raising it takes the protocol's existing
    "does not read requests" path."""

    def __init__(self, operation: str, message: str) -> None:
        super().__init__(message)
        self.operation = operation
