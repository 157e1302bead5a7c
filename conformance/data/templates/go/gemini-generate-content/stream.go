package main

// A Gemini stream (`:streamGenerateContent`): a sequence of GenerateContentResponse chunks,
// each with the parts it adds and the cumulative usageMetadata, the last with a
// finishReason; framed as Server-Sent Events `data:` lines (`?alt=sse`) or, without
// `alt=sse`, as one JSON array of the chunks. The framing is told by the body's first byte
// that is not whitespace (`[` opens the array): the stream is opened without its headers.
// Translated to canonical stream events (adapter contract §5.1 table, §5.2 invariants), one
// chunk of bytes at a time, and cancelled (contract §5.3) as if the cancel landed after the
// events the harness had consumed.
//
// Strict about the documented stream: each chunk a JSON object; an `error` chunk is the API
// failing mid-stream; a body that ends before a finishReason (or a blocked prompt's
// promptFeedback) was cut. Either fails with a located error after contract §6.5's
// message_complete (stop_reason error). A chunk's parts go through the same reply as a
// whole response's, so a stream's aggregate equals the parse of the same reply.

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// malformed is a chunk that breaks the documented stream.
type malformed struct{ reason string }

func (e *malformed) Error() string { return e.reason }

// maxElementBytes bounds one chunk of a JSON-array stream (memory on hostile input).
const maxElementBytes = 32 << 20

// jsonArrayDecoder is the elements of a JSON array fed in arbitrary chunks of bytes, each
// as soon as it is complete: a small scanner follows strings and bracket depth to find an
// element's end. Anything but `[ {...} (, {...})* ]` is malformed, naming the element.
type jsonArrayDecoder struct {
	state    string // open -> first -> (value -> sep -> next)* -> closed
	depth    int
	inString bool
	escaped  bool
	piece    []byte
	count    int // elements decoded so far
}

func (d *jsonArrayDecoder) feed(chunk []byte) ([]any, error) {
	var out []any
	for _, ch := range chunk { // JSON's structure is ASCII: a UTF-8 sequence never looks like it
		if d.state == "value" {
			d.piece = append(d.piece, ch)
			switch {
			case d.inString && d.escaped:
				d.escaped = false
			case d.inString && ch == '\\':
				d.escaped = true
			case d.inString && ch == '"':
				d.inString = false
			case d.inString:
			case ch == '"':
				d.inString = true
			case ch == '{' || ch == '[':
				d.depth++
			case ch == '}' || ch == ']':
				d.depth--
				if d.depth == 0 {
					if !utf8.Valid(d.piece) {
						return out, &malformed{fmt.Sprintf("JSON-array stream, element %d: not UTF-8", d.count)}
					}
					var v any
					if err := decodeJSON(d.piece, &v); err != nil {
						return out, &malformed{fmt.Sprintf("JSON-array stream, element %d: not JSON (%v)", d.count, err)}
					}
					out = append(out, v)
					d.count++
					d.piece, d.state = nil, "sep"
				}
			}
			continue
		}
		if ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' {
			continue
		}
		switch d.state {
		case "", "open":
			if ch != '[' {
				return out, &malformed{"JSON-array stream: the body does not open with `[`"}
			}
			d.state = "first"
		case "first", "next":
			switch {
			case ch == ']' && d.state == "first":
				d.state = "closed"
			case ch == '{':
				d.state, d.piece, d.depth = "value", []byte{ch}, 1
			default:
				return out, &malformed{fmt.Sprintf("JSON-array stream, element %d: expected an object, found %q", d.count, ch)}
			}
		case "sep":
			if ch != ',' && ch != ']' {
				return out, &malformed{fmt.Sprintf("JSON-array stream, element %d: expected `,` or `]`, found %q", d.count, ch)}
			}
			d.state = "next"
			if ch == ']' {
				d.state = "closed"
			}
		default:
			return out, &malformed{"JSON-array stream: data after the closing `]`"}
		}
	}
	if len(d.piece) > maxElementBytes {
		return out, &malformed{fmt.Sprintf("JSON-array stream, element %d: longer than %d bytes", d.count, maxElementBytes)}
	}
	return out, nil
}

// cut says why the body is not a whole array yet ("" when its `]` arrived).
func (d *jsonArrayDecoder) cut() string {
	switch d.state {
	case "closed":
		return ""
	case "value":
		return fmt.Sprintf("element %d was cut", d.count)
	}
	return "the closing `]` never came"
}

// WireStream is one stream being translated.
type WireStream struct {
	ctx      RequestContext
	Events   []StreamEvent // every event produced, in order (what a cancel replays)
	Over     bool
	reply    *reply
	framing  string // "", "sse" or "json-array"
	head     []byte // the bytes before the framing is known
	sse      SseDecoder
	array    jsonArrayDecoder
	started  bool
	finished bool
	position int // the chunk (SSE event or array element) being read
	line     *int
	log      *Logs
}

// NewWireStream opens a stream for ctx.
func NewWireStream(a *Adapter, ctx RequestContext) *WireStream {
	return &WireStream{ctx: ctx, reply: newReply(a, ctx, &Logs{})} // each step sets its call's logs
}

// Feed takes the next chunk of the body and returns the events it completed.
func (s *WireStream) Feed(data []byte, log *Logs) ([]StreamEvent, error) {
	return s.step(log, func(out *[]StreamEvent) error { return s.bytes(data, false, out) })
}

// Close ends the body.
func (s *WireStream) Close(log *Logs) ([]StreamEvent, error) {
	return s.step(log, func(out *[]StreamEvent) error {
		if err := s.bytes(nil, true, out); err != nil {
			return err
		}
		return s.end(out)
	})
}

// step is one feed or close: the events it completed, or its failure carrying them.
func (s *WireStream) step(log *Logs, fn func(out *[]StreamEvent) error) ([]StreamEvent, error) {
	s.log, s.reply.log = log, log
	out := []StreamEvent{}
	err := fn(&out)
	if err != nil {
		s.Over = true
		var m *malformed
		var wf *WireFormatError
		if errors.As(err, &m) || errors.As(err, &wf) {
			s.fail(&out)
			err = &WireFormatError{Message: fmt.Sprintf("Gemini stream event %d: %v", s.position, err),
				Event: intp(s.position), Line: s.line}
		}
		err = &StreamFailure{err, out}
	}
	s.Events = append(s.Events, out...)
	return out, err
}

func (s *WireStream) bytes(data []byte, final bool, out *[]StreamEvent) error {
	if s.framing == "" {
		joined := append(s.head, data...)
		lead := bytes.TrimLeft(joined, " \t\r\n")
		if len(lead) == 0 && !final {
			s.head = joined // only whitespace so far
			return nil
		}
		s.framing = "sse"
		if len(lead) > 0 && lead[0] == '[' {
			s.framing = "json-array"
		}
		data, s.head = joined, nil
	}
	if s.framing == "json-array" {
		objs, err := s.array.feed(data)
		first := s.array.count - len(objs)
		for i, obj := range objs {
			s.position = first + i
			if err := s.chunk(obj, out); err != nil {
				return err
			}
		}
		return err
	}
	var events []SseEvent
	var err error
	if final {
		events = s.sse.Close()
	} else {
		events, err = s.sse.Feed(data)
	}
	for _, ev := range events {
		s.position, s.line = ev.Index, intp(ev.Line)
		text := strings.TrimSpace(ev.Data)
		if text == "" {
			continue
		}
		var v any
		if err := decodeJSON([]byte(text), &v); err != nil {
			return &malformed{fmt.Sprintf("SSE data is not JSON: %.80q", text)}
		}
		if err := s.chunk(v, out); err != nil {
			return err
		}
	}
	return err
}

func (s *WireStream) chunk(v any, out *[]StreamEvent) error {
	if s.finished {
		return &malformed{"a chunk after the stream's end"}
	}
	obj, ok := v.(Object)
	if !ok {
		return &malformed{"a chunk is not a JSON object"}
	}
	s.start(obj, out)
	if _, e := obj["error"]; e && obj["candidates"] == nil {
		// the API fails mid-stream (contract §6.5): an error event, the partial message, then
		// the classified error; `error.code` is the HTTP status the error stands for
		errObj, _ := obj["error"].(Object)
		status := int(number(errObj["code"]))
		if status < 400 {
			status = 500
		}
		e := classifyError(status, obj, nil)
		*out = append(*out, StreamEvent{"type": "error", "message_id": s.reply.mid, "error_class": string(e.Class),
			"message": e.Message, "provider_status": nil})
		s.fail(out)
		return e
	}
	events, err := s.reply.chunk(obj, s.position, len(s.Events)+len(*out))
	*out = append(*out, events...)
	return err
}

func (s *WireStream) start(obj Object, out *[]StreamEvent) {
	if s.started {
		return
	}
	s.started = true
	model := Provider + ":unknown"
	if v, ok := obj["modelVersion"].(string); ok && v != "" {
		model = Provider + ":" + v
	} else if s.ctx.Model != nil {
		model = *s.ctx.Model
	}
	*out = append(*out, StreamEvent{"type": "message_start", "message_id": s.reply.mid, "role": "assistant", "model": model})
}

// end is the body's end: with a finishReason that is the reply; without one it was cut.
func (s *WireStream) end(out *[]StreamEvent) error {
	s.position++
	cut := ""
	if s.framing == "json-array" {
		cut = s.array.cut()
	}
	if s.reply.finishReason == "" && s.reply.blockReason == "" {
		s.start(Object{}, out)
		if cut != "" {
			return &malformed{"JSON-array stream ended before its end: " + cut}
		}
		return &malformed{"stream ended without a finishReason: cut before its end"}
	}
	if cut != "" {
		// the finishReason arrived: nothing is lost but the array's end
		s.log.Warning(fmt.Sprintf("%s: JSON-array stream ended after the finishReason (%s); read as ended", Name, cut),
			Object{"event": "array_end_missing", "adapter": Name, "session_id": s.ctx.SessionID})
	}
	s.finished, s.Over = true, true
	*out = append(*out, s.complete(s.reply.stopReason()))
	return nil
}

// fail is contract §6.5: the partial message (stop_reason error) before the failure.
func (s *WireStream) fail(out *[]StreamEvent) {
	if s.started && !s.finished {
		s.finished = true
		*out = append(*out, s.complete("error"))
	}
}

func (s *WireStream) complete(stop string) StreamEvent {
	final := append([]Block{}, s.reply.content...)
	if len(final) == 0 {
		final = []Block{TextBlock("")} // an empty reply is still one block, as the parsed message has it
	}
	var usage any
	if s.reply.usage != nil {
		usage = *s.reply.usage
	}
	return StreamEvent{"type": "message_complete", "message_id": s.reply.mid, "stop_reason": stop, "final_content": final, "usage": usage}
}

// CancelAfter is contract §5.3 (cancelEvents in events.go): the events after a cancel that
// landed once `delivered` events had been consumed; nil when the stream had completed by then.
func (s *WireStream) CancelAfter(delivered int) []StreamEvent {
	s.Over = true
	return cancelEvents(s.Events, delivered, s.reply.mid, s.reply.silent)
}
