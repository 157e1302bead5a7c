package main

// A Chat Completions stream (`stream: true`): SSE `data:` chunks ending `data: [DONE]`,
// translated to canonical stream events (adapter contract §5.1 table, §5.2 invariants), one
// chunk of bytes at a time, and cancelled (contract §5.3) as if the cancel landed after the
// events the harness had consumed.
//
// Strict about the documented stream (chat-streaming/streaming): one choice (index 0), a
// finish_reason on the last content chunk, a usage chunk with empty `choices` (asked for with
// stream_options.include_usage), then [DONE]. A stream that breaks it fails with a located
// WireFormatError after contract §6.5's message_complete (stop_reason error).

import (
	"errors"
	"fmt"
	"strings"
)

// malformed is a chunk that breaks the documented stream.
type malformed struct{ reason string }

func (e *malformed) Error() string { return e.reason }

// WireStream is one stream being translated.
type WireStream struct {
	a        *Adapter
	ctx      RequestContext
	Events   []StreamEvent // every event produced, in order (what a cancel replays)
	Over     bool
	sse      SseDecoder
	mid      string
	model    string
	content  []Block
	args     map[int]string // block index -> the call's arguments so far
	calls    map[int64]int  // wire tool_calls index -> block index
	closed   map[int]bool   // block indexes of the calls that ended
	openCall int            // block index of the open call, -1 for none
	textAt   int            // block index of the text being streamed, -1 for none
	usage    *TokenUsage
	stop     string
	started  bool
	finished bool
	done     bool
	chunks   int
	dropped  map[string]bool // choices past 0 (n > 1)
	position int             // the SSE event being read
	line     int
	log      *Logs
}

// NewWireStream opens a stream for ctx.
func NewWireStream(a *Adapter, ctx RequestContext) *WireStream {
	s := &WireStream{a: a, ctx: ctx, args: map[int]string{}, calls: map[int64]int{}, closed: map[int]bool{},
		openCall: -1, textAt: -1, dropped: map[string]bool{}, model: Provider + ":unknown", mid: NewULID()}
	if ctx.MessageID != nil {
		s.mid = *ctx.MessageID
	}
	if ctx.Model != nil {
		s.model = *ctx.Model
	}
	return s
}

// Feed takes the next chunk of the body and returns the events it completed.
func (s *WireStream) Feed(data []byte, log *Logs) ([]StreamEvent, error) {
	return s.step(log, func(out *[]StreamEvent) error {
		events, err := s.sse.Feed(data)
		for _, ev := range events {
			if err := s.event(ev, out); err != nil {
				return err
			}
		}
		return err
	})
}

// Close ends the body.
func (s *WireStream) Close(log *Logs) ([]StreamEvent, error) {
	return s.step(log, func(out *[]StreamEvent) error {
		for _, ev := range s.sse.Close() {
			if err := s.event(ev, out); err != nil {
				return err
			}
		}
		return s.end(out)
	})
}

// step is one feed or close: the events it completed, or its failure carrying them.
func (s *WireStream) step(log *Logs, fn func(out *[]StreamEvent) error) ([]StreamEvent, error) {
	s.log = log
	out := []StreamEvent{}
	err := fn(&out)
	if err != nil {
		s.Over = true
		var m *malformed
		var wf *WireFormatError
		if errors.As(err, &m) || errors.As(err, &wf) {
			s.fail(&out)
			err = &WireFormatError{Message: fmt.Sprintf("Chat Completions stream event %d: %v", s.position, err),
				Event: intp(s.position), Line: intp(s.line)}
		}
		err = &StreamFailure{err, out}
	}
	s.Events = append(s.Events, out...)
	return out, err
}

func (s *WireStream) event(ev SseEvent, out *[]StreamEvent) error {
	s.position, s.line = ev.Index, ev.Line
	data := strings.TrimSpace(ev.Data)
	switch {
	case data == "":
		return nil
	case s.done:
		return &malformed{"data after [DONE]"}
	case data == "[DONE]":
		s.done = true
		return nil
	}
	var v any
	if err := decodeJSON([]byte(data), &v); err != nil {
		return &malformed{fmt.Sprintf("SSE data is not JSON: %.80q", data)}
	}
	obj, ok := v.(Object)
	if !ok {
		return &malformed{"SSE data is not a JSON object"}
	}
	_, hasError := obj["error"]
	_, hasChoices := obj["choices"]
	if hasError && !hasChoices {
		// the provider reports an error mid-stream (contract §6.5): an error event, the
		// partial message, then the classified error
		e := classifyError(500, obj, nil) // the body classifies it, else §6.2's 5xx default
		e.ProviderStatus = nil            // the stream began with a 200: the error has no status of its own
		s.start(out)
		*out = append(*out, StreamEvent{"type": "error", "message_id": s.mid, "error_class": string(e.Class),
			"message": e.Message, "provider_status": nil})
		s.fail(out)
		return e
	}
	return s.chunk(obj, out)
}

func (s *WireStream) chunk(obj Object, out *[]StreamEvent) error {
	s.chunks++
	if model, ok := obj["model"].(string); ok && !s.started {
		s.model = Provider + ":" + model
	}
	choices, ok := obj["choices"].([]any)
	if !ok && obj["choices"] != nil {
		return &malformed{"`choices` is not a list"}
	}
	s.start(out)
	for _, c := range choices {
		choice, ok := c.(Object)
		if !ok {
			return &malformed{"a choice is not an object"}
		}
		if index, ok := choice["index"]; ok && fmt.Sprint(index) != "0" {
			s.dropped[fmt.Sprint(index)] = true // n > 1: the message keeps choice 0, as a reply's
			continue
		}
		delta, _ := choice["delta"].(Object)
		calls, ok := delta["tool_calls"].([]any)
		if !ok && delta["tool_calls"] != nil {
			return &malformed{"delta.tool_calls is not a list"}
		}
		text, _ := delta["content"].(string)
		refusal, _ := delta["refusal"].(string)
		if s.stop != "" && (text != "" || refusal != "" || len(calls) > 0) {
			return &malformed{"content after finish_reason"}
		}
		for _, piece := range []string{text, refusal} {
			if piece != "" {
				if err := s.text(piece, out); err != nil {
					return err
				}
			}
		}
		for _, call := range calls {
			if err := s.toolCall(call, out); err != nil {
				return err
			}
		}
		if reason, ok := choice["finish_reason"].(string); ok {
			s.stop = StopReason(reason, s.log)
			if err := s.endCall(out); err != nil { // contract §5.1: tool.use_end at finish_reason
				return err
			}
		}
	}
	if usage := UsageFromWire(obj["usage"]); usage != nil {
		s.usage = usage
		*out = append(*out, StreamEvent{"type": "usage_update", "message_id": s.mid, "usage": *usage})
	}
	return nil
}

func (s *WireStream) start(out *[]StreamEvent) {
	if !s.started {
		s.started = true
		*out = append(*out, StreamEvent{"type": "message_start", "message_id": s.mid, "role": "assistant", "model": s.model})
	}
}

func (s *WireStream) text(text string, out *[]StreamEvent) error {
	if s.textAt < 0 || s.textAt != len(s.content)-1 {
		if err := s.endCall(out); err != nil {
			return err
		}
		s.textAt = len(s.content)
		s.content = append(s.content, TextBlock(""))
	}
	s.content[s.textAt].Text += text
	*out = append(*out, StreamEvent{"type": "text_delta", "message_id": s.mid, "content_block_index": s.textAt, "text": text})
	return nil
}

func (s *WireStream) toolCall(c any, out *[]StreamEvent) error {
	call, ok := c.(Object)
	if !ok {
		return &malformed{"a tool call delta is not an object"}
	}
	index, err := nonNegative(call["index"])
	if err != nil {
		return &malformed{fmt.Sprintf("tool call index %v is not a non-negative integer", call["index"])}
	}
	fn, _ := call["function"].(Object)
	k, seen := s.calls[index]
	if !seen {
		id, _ := call["id"].(string)
		if id == "" {
			return &malformed{fmt.Sprintf("tool call %d starts without an id", index)}
		}
		if err := s.endCall(out); err != nil {
			return err
		}
		k = len(s.content)
		s.calls[index] = k
		name, _ := fn["name"].(string)
		cid := s.a.ToolIDMap(s.ctx.SessionID).CanonicalFor(id)
		s.content = append(s.content, Block{Type: "tool_use", ID: cid, Name: name, Input: Object{}})
		s.args[k] = ""
		s.openCall = k
		*out = append(*out, StreamEvent{"type": "tool_use_start", "message_id": s.mid, "content_block_index": k,
			"tool_use_id": cid, "tool_name": name})
	}
	fragment, isString := fn["arguments"].(string)
	if fn["arguments"] == nil || fragment == "" && isString {
		return nil
	}
	if !isString {
		return &malformed{fmt.Sprintf("tool call %d arguments fragment is not a string", index)}
	}
	if k != s.openCall {
		return &malformed{fmt.Sprintf("tool call %d continues after the next content started", index)}
	}
	s.args[k] += fragment
	// the literal fragment, never a parse of it (contract §5.4)
	*out = append(*out, StreamEvent{"type": "tool_use_input_delta", "message_id": s.mid, "content_block_index": k,
		"tool_use_id": s.content[k].ID, "partial_json": fragment})
	return nil
}

// endCall ends the open tool call: its arguments must spell a JSON object.
func (s *WireStream) endCall(out *[]StreamEvent) error {
	k := s.openCall
	if k < 0 {
		return nil
	}
	input := jsonObject(s.args[k])
	if input == nil {
		return &malformed{fmt.Sprintf("tool call %q arguments are not a JSON object", s.content[k].Name)}
	}
	s.openCall = -1
	s.closed[k] = true
	s.content[k].Input = input
	*out = append(*out, StreamEvent{"type": "tool_use_end", "message_id": s.mid, "content_block_index": k,
		"tool_use_id": s.content[k].ID, "final_input": input})
	return nil
}

func (s *WireStream) end(out *[]StreamEvent) error {
	s.position++
	switch {
	case !s.done && (s.stop == "" || s.usage == nil):
		// cut before its end: what arrived is still a message (contract §6.5)
		if s.chunks > 0 {
			s.start(out)
		}
		lacks := "a finish_reason"
		if s.stop != "" {
			lacks = "the usage chunk"
		}
		return &malformed{"stream ended before data: [DONE], without " + lacks}
	case !s.done:
		// finish_reason and usage arrived: only [DONE] is missing, which loses nothing
		s.log.Warning(Name+": stream ended after its finish_reason without data: [DONE]",
			Object{"event": "done_missing", "adapter": Name, "session_id": s.ctx.SessionID})
	case s.chunks == 0:
		return &malformed{"data: [DONE] with no chunk before it"}
	}
	if s.stop == "" {
		s.stop = "end_turn"
		if len(s.calls) > 0 {
			s.stop = "tool_use"
		}
		s.log.Warning(fmt.Sprintf("%s: stream ended with [DONE] but no finish_reason; read as %s", Name, s.stop),
			Object{"event": "finish_reason_missing", "adapter": Name, "session_id": s.ctx.SessionID})
	}
	if err := s.endCall(out); err != nil {
		return err
	}
	if len(s.dropped) > 0 {
		s.log.Warning(fmt.Sprintf("%s: the stream carries %d choices; the message keeps choice 0", Name, len(s.dropped)+1),
			Object{"event": "choices_dropped", "adapter": Name})
	}
	s.finished, s.Over = true, true
	*out = append(*out, s.complete(s.stop, s.content))
	return nil
}

// fail is contract §6.5: the partial message (stop_reason error) before the failure.
func (s *WireStream) fail(out *[]StreamEvent) {
	if !s.started || s.finished {
		return
	}
	s.finished = true
	var kept []Block // tool calls whose arguments never completed are not invented as {}
	for k, b := range s.content {
		if b.Type != "tool_use" || s.closed[k] {
			kept = append(kept, b)
		}
	}
	*out = append(*out, s.complete("error", kept))
}

func (s *WireStream) complete(stop string, content []Block) StreamEvent {
	final := append([]Block{}, content...)
	var usage any
	if s.usage != nil {
		usage = *s.usage
	}
	return StreamEvent{"type": "message_complete", "message_id": s.mid, "stop_reason": stop, "final_content": final, "usage": usage}
}

// CancelAfter is contract §5.3 (cancelEvents in events.go): the events after a cancel that
// landed once `delivered` events had been consumed; nil when the stream had completed by then.
func (s *WireStream) CancelAfter(delivered int) []StreamEvent {
	s.Over = true
	return cancelEvents(s.Events, delivered, s.mid, nil)
}
