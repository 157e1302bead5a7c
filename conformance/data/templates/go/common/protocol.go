package main

// The exec protocol's values (turnspec docs: "The exec protocol", version 1): the log
// records an answer carries and the typed errors a failed answer carries.

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
)

// LogRecord is one log record of a call; it travels in the call's answer.
type LogRecord struct {
	Level   string `json:"level"` // debug | info | warning | error
	Message string `json:"message"`
	Fields  Object `json:"fields"`
}

// Logs collects the records one call produces.
type Logs struct{ Records []LogRecord }

// Warning adds a warning record with its structured fields.
func (l *Logs) Warning(message string, fields Object) {
	l.Records = append(l.Records, LogRecord{"warning", message, fields})
}

// ErrorClass is one of adapter contract §6.1's classes.
type ErrorClass string

// Adapter contract §6.1.
const (
	RateLimit       ErrorClass = "rate_limit"
	Auth            ErrorClass = "auth"
	ServerErr       ErrorClass = "server_error"
	Network         ErrorClass = "network"
	ContextOverflow ErrorClass = "context_overflow"
	InvalidRequest  ErrorClass = "invalid_request"
	Cancelled       ErrorClass = "cancelled"
	Other           ErrorClass = "other"
)

// Retryable is adapter contract §6.4's transient classes.
func (c ErrorClass) Retryable() bool { return c == RateLimit || c == ServerErr || c == Network }

// AdapterError is a classified failure (contract §6.1 classes with the §6.3 fields).
type AdapterError struct {
	Class          ErrorClass
	Message        string
	ProviderStatus *int
	RequestID      *string
	RetryAfter     *float64 // seconds, a rate limit's hint
}

func (e *AdapterError) Error() string { return e.Message }

// WireFormatError says the provider's body breaks its documented format; Event and Line
// locate it in a stream.
type WireFormatError struct {
	Message     string
	Event, Line *int
}

func (e *WireFormatError) Error() string { return e.Message }

// CriticalBlockError is a block marked critical that the wire cannot carry (canonical
// §4.2.2, §7.3).
type CriticalBlockError struct {
	Adapter, SessionID, MessageID, BlockType, Reason string
}

func (e *CriticalBlockError) Error() string {
	return fmt.Sprintf("%s: critical %s block of message %s not sendable: %s", e.Adapter, e.BlockType, e.MessageID, e.Reason)
}

// NotImplementedError says the operation, or this form of it, is not implemented: the
// suite skips what needs it.
type NotImplementedError struct{ Message string }

func (e *NotImplementedError) Error() string { return e.Message }

// StreamFailure is a stream's failure with the events the failing chunk completed before it.
type StreamFailure struct {
	Err    error
	Events []StreamEvent
}

func (e *StreamFailure) Error() string { return e.Err.Error() }
func (e *StreamFailure) Unwrap() error { return e.Err }

// crash is a panic in a handler, with its stack.
type crash struct {
	value any
	stack string
}

func (e *crash) Error() string { return fmt.Sprint(e.value) }

// recovered turns a handler's panic into a crash error.
func recovered(value any) error {
	return &crash{value, string(debug.Stack())}
}

// errorJSON is the protocol's error object for an error a handler returned.
func errorJSON(err error) Object {
	var out Object
	var ae *AdapterError
	var wf *WireFormatError
	var cb *CriticalBlockError
	var ni *NotImplementedError
	var cr *crash
	switch {
	case errors.As(err, &cb):
		out = Object{"kind": "critical_block", "message": cb.Error(), "adapter": cb.Adapter, "session_id": cb.SessionID,
			"message_id": cb.MessageID, "block_type": cb.BlockType, "reason": cb.Reason}
	case errors.As(err, &wf):
		out = Object{"kind": "wire_format", "message": wf.Message, "event": wf.Event, "line": wf.Line, "offset": nil}
	case errors.As(err, &ae):
		out = Object{"kind": "adapter_error", "error_class": string(ae.Class), "message": ae.Message,
			"provider_status": ae.ProviderStatus, "request_id": ae.RequestID, "retryable": ae.Class.Retryable()}
		if ae.Class == RateLimit {
			out["retry_after_seconds"] = ae.RetryAfter
		}
	case errors.As(err, &ni):
		out = Object{"kind": "not_implemented", "message": ni.Message}
	case errors.As(err, &cr):
		out = Object{"kind": "crash", "message": cr.Error(), "type": "panic", "traceback": cr.stack}
	default:
		out = Object{"kind": "crash", "message": err.Error(), "type": typeName(err), "traceback": ""}
	}
	var sf *StreamFailure
	if errors.As(err, &sf) && out["kind"] != "critical_block" && out["kind"] != "not_implemented" {
		events := sf.Events
		if events == nil {
			events = []StreamEvent{}
		}
		out["events"] = events
	}
	return out
}

// typeName is an error's type without its package and pointer (`*json.SyntaxError` ->
// `SyntaxError`), what the host names the crash after.
func typeName(err error) string {
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			break
		}
		err = inner
	}
	name := fmt.Sprintf("%T", err)
	name = name[strings.LastIndexAny(name, ".*")+1:]
	if name == "errorString" || name == "wrapError" {
		return "error" // errors.New, fmt.Errorf
	}
	return name
}
