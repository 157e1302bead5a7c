package main

// An Anthropic Messages stream (`stream: true`): SSE events `message_start`, then per content
// block `content_block_start`, its `content_block_delta`s and `content_block_stop`, then
// `message_delta` (stop_reason, cumulative usage) and `message_stop`, with `ping`s anywhere
// and an `error` event when the API fails mid-stream; translated to canonical stream events
// (adapter contract §5.1 table, §5.2 invariants), one chunk of bytes at a time, and
// cancelled (contract §5.3) as if the cancel landed after the events the harness had consumed.
//
// Strict about the documented flow (build-with-claude/streaming): one message_start first;
// each block started once at a non-negative index, then deltas of its own kind, then its
// stop; message_stop last. A stream that breaks it fails with a located WireFormatError
// after contract §6.5's message_complete (stop_reason error). Unknown event types are
// skipped: the docs say new ones may be added.
//
// The canonical `content_block_index` is the block's position in `final_content`. A
// thinking block's signature arrives as `signature_delta`; it rides on a last thinking_delta
// at the block's stop (streaming-protocol §5.3: the signature is on the final delta).

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// malformed is an event that breaks the documented flow.
type malformed struct{ reason string }

func (e *malformed) Error() string { return e.reason }

// deltaFields are the delta types a block's content travels in, and the field carrying each
// payload.
var deltaFields = map[string]string{
	"text_delta":       "text",
	"thinking_delta":   "thinking",
	"signature_delta":  "signature",
	"input_json_delta": "partial_json",
	"citations_delta":  "citation",
}

// flowEvents are the documented events after message_start (ping and error aside).
var flowEvents = map[string]bool{"content_block_start": true, "content_block_delta": true,
	"content_block_stop": true, "message_delta": true, "message_stop": true}

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
	byWire   map[int64]int  // the wire's block index -> content index
	stopped  map[int]bool   // content indexes of the blocks that stopped
	partial  map[int]string // tool_use (or kept-whole) content index -> its input so far
	silent   []SilentBlock  // blocks no event carries (redacted thinking, kept whole)
	usage    *TokenUsage
	stop     string
	stopSeen bool
	started  bool
	finished bool
	position int // the SSE event being read
	line     int
	log      *Logs
}

// NewWireStream opens a stream for ctx.
func NewWireStream(a *Adapter, ctx RequestContext) *WireStream {
	s := &WireStream{a: a, ctx: ctx, byWire: map[int64]int{}, stopped: map[int]bool{}, partial: map[int]string{},
		stop: "end_turn", model: Provider + ":unknown", mid: NewULID()}
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
			err = &WireFormatError{Message: fmt.Sprintf("Anthropic stream event %d: %v", s.position, err),
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
	if data == "" {
		return nil
	}
	var v any
	if err := decodeJSON([]byte(data), &v); err != nil {
		return &malformed{fmt.Sprintf("SSE data is not JSON: %.80q", data)}
	}
	obj, _ := v.(Object)
	kind, ok := obj["type"].(string)
	if !ok {
		return &malformed{"SSE data is not an event object with a `type`"}
	}
	if kind == "ping" {
		return nil
	}
	if s.finished {
		return &malformed{kind + " after message_stop"}
	}
	return s.handle(kind, obj, out)
}

func (s *WireStream) handle(kind string, obj Object, out *[]StreamEvent) error {
	switch {
	case kind == "message_start":
		if s.started {
			return &malformed{"a second message_start"}
		}
		msg, ok := obj["message"].(Object)
		if !ok {
			return &malformed{"message_start has no `message` object"}
		}
		if model, ok := msg["model"].(string); ok && model != "" {
			s.model = Provider + ":" + model
		}
		s.usage = UsageFromWire(msg["usage"])
		s.start(out)
		return nil
	case kind == "error":
		// the API fails mid-stream (contract §6.5): an error event, the partial message, then
		// the classified error (the body classifies it, else §6.2's 5xx default)
		e := classifyError(500, obj, nil)
		e.ProviderStatus = nil // the stream began with a 200: the error has no status of its own
		s.start(out)
		*out = append(*out, StreamEvent{"type": "error", "message_id": s.mid, "error_class": string(e.Class),
			"message": e.Message, "provider_status": nil})
		s.fail(out)
		return e
	case !flowEvents[kind]:
		return nil // a newer event type: the docs ask clients to tolerate them
	case !s.started:
		return &malformed{kind + " before message_start"}
	}
	switch kind {
	case "content_block_start":
		return s.blockStart(obj, out)
	case "content_block_delta":
		k, err := s.openBlock(obj)
		if err != nil {
			return err
		}
		delta, ok := obj["delta"].(Object)
		if !ok {
			return &malformed{"content_block_delta has no `delta` object"}
		}
		return s.delta(k, delta, out)
	case "content_block_stop":
		k, err := s.openBlock(obj)
		if err != nil {
			return err
		}
		s.stopped[k] = true
		return s.blockStop(k, out)
	case "message_delta":
		delta, _ := obj["delta"].(Object)
		if reason, ok := delta["stop_reason"].(string); ok && reason != "" {
			s.stop = StopReason(reason, s.log)
			s.stopSeen = true
		}
		if u, ok := obj["usage"].(Object); ok {
			// message_delta's usage is cumulative and may repeat or leave out the input counts
			merged := rawUsage(s.usage)
			for k, v := range u {
				if v != nil {
					merged[k] = v
				}
			}
			s.usage = UsageFromWire(merged)
			*out = append(*out, StreamEvent{"type": "usage_update", "message_id": s.mid, "usage": *s.usage})
		}
	case "message_stop":
		if open := s.openIndexes(); len(open) > 0 {
			return &malformed{fmt.Sprintf("message_stop with block(s) %v never stopped", open)}
		}
		s.finish(s.stop, out)
	}
	return nil
}

func (s *WireStream) openBlock(obj Object) (int, error) {
	i, err := nonNegative(obj["index"])
	if err != nil {
		return 0, &malformed{fmt.Sprintf("%v has index %v, not a non-negative integer", obj["type"], obj["index"])}
	}
	k, ok := s.byWire[i]
	if !ok {
		return 0, &malformed{fmt.Sprintf("%v for block %d, which never started", obj["type"], i)}
	}
	if s.stopped[k] {
		return 0, &malformed{fmt.Sprintf("%v for block %d, which already stopped", obj["type"], i)}
	}
	return k, nil
}

// openIndexes is the wire indexes of the blocks started and not stopped, in order.
func (s *WireStream) openIndexes() []int64 {
	var open []int64
	for i, k := range s.byWire {
		if !s.stopped[k] {
			open = append(open, i)
		}
	}
	sort.Slice(open, func(x, y int) bool { return open[x] < open[y] })
	return open
}

func (s *WireStream) blockStart(obj Object, out *[]StreamEvent) error {
	i, err := nonNegative(obj["index"])
	if err != nil {
		return &malformed{fmt.Sprintf("content_block_start has index %v, not a non-negative integer", obj["index"])}
	}
	if _, seen := s.byWire[i]; seen {
		return &malformed{fmt.Sprintf("content_block_start for block %d, which already started", i)}
	}
	wb, ok := obj["content_block"].(Object)
	if !ok {
		return &malformed{"content_block_start has no `content_block` object"}
	}
	if wb["type"] == "tool_use" {
		wb = copyObject(wb)
		wb["input"] = Object{} // its input arrives as input_json_delta fragments
	}
	block, _, err := s.a.blockFromWire(s.ctx.SessionID, wb)
	if err != nil {
		return err
	}
	k := len(s.content)
	s.byWire[i] = k
	s.content = append(s.content, block)
	switch block.Type {
	case "tool_use":
		s.partial[k] = ""
		*out = append(*out, StreamEvent{"type": "tool_use_start", "message_id": s.mid, "content_block_index": k,
			"tool_use_id": block.ID, "tool_name": block.Name})
	case "text":
		if block.Text != "" {
			*out = append(*out, StreamEvent{"type": "text_delta", "message_id": s.mid, "content_block_index": k, "text": block.Text})
		}
	case "thinking":
		if block.Text != "" {
			*out = append(*out, StreamEvent{"type": "thinking_delta", "message_id": s.mid, "content_block_index": k,
				"text": block.Text, "signature": nil})
		}
	default:
		// redacted thinking, or a block kept whole: no event carries it (a cancel still keeps it)
		s.silent = append(s.silent, SilentBlock{Index: k, At: len(s.Events) + len(*out), Block: block})
		if strings.HasPrefix(block.Type, Name+":") {
			s.partial[k] = ""
		}
	}
	return nil
}

func (s *WireStream) delta(k int, delta Object, out *[]StreamEvent) error {
	block := &s.content[k]
	dt, _ := delta["type"].(string)
	field, known := deltaFields[dt]
	if !known {
		return &malformed{fmt.Sprintf("unknown delta type %v", delta["type"])}
	}
	value, ok := delta[field].(string)
	if dt == "citations_delta" {
		value, ok = "", true // a citation object: not streamed as text
	}
	if !ok {
		return &malformed{fmt.Sprintf("%s without a string `%s`", dt, field)}
	}
	native := strings.HasPrefix(block.Type, Name+":")
	switch {
	case dt == "text_delta" && block.Type == "text":
		block.Text += value
		*out = append(*out, StreamEvent{"type": "text_delta", "message_id": s.mid, "content_block_index": k, "text": value})
	case dt == "thinking_delta" && block.Type == "thinking":
		block.Text += value
		*out = append(*out, StreamEvent{"type": "thinking_delta", "message_id": s.mid, "content_block_index": k,
			"text": value, "signature": nil})
	case dt == "signature_delta" && block.Type == "thinking":
		sig := value
		if block.Signature != nil {
			sig = *block.Signature + value
		}
		block.Signature = &sig
	case dt == "input_json_delta" && (block.Type == "tool_use" || native):
		s.partial[k] += value
		if block.Type == "tool_use" {
			// the literal fragment, never a parse of it (contract §5.4)
			*out = append(*out, StreamEvent{"type": "tool_use_input_delta", "message_id": s.mid, "content_block_index": k,
				"tool_use_id": block.ID, "partial_json": value})
		}
	case dt == "citations_delta" && block.Type == "text":
		// no canonical field or event: a parse of the whole reply keeps them in provider_raw
	case native:
		// a server tool's or other kept-whole block's delta: the block is kept as it started
	default:
		return &malformed{fmt.Sprintf("%s for a %s block", dt, block.Type)}
	}
	return nil
}

func (s *WireStream) blockStop(k int, out *[]StreamEvent) error {
	block := &s.content[k]
	switch {
	case block.Type == "tool_use":
		text := s.partial[k]
		input := jsonObject(text)
		if input == nil {
			return &malformed{fmt.Sprintf("tool_use %s input is not a JSON object: %.80q", block.ID, text)}
		}
		delete(s.partial, k)
		block.Input = input
		*out = append(*out, StreamEvent{"type": "tool_use_end", "message_id": s.mid, "content_block_index": k,
			"tool_use_id": block.ID, "final_input": input})
	case block.Type == "thinking":
		// the signature rides only on the block's final delta
		var signature any
		if block.Signature != nil {
			signature = *block.Signature
		}
		*out = append(*out, StreamEvent{"type": "thinking_delta", "message_id": s.mid, "content_block_index": k,
			"text": "", "signature": signature})
	case strings.HasPrefix(block.Type, Name+":"):
		text := s.partial[k]
		delete(s.partial, k)
		if strings.TrimSpace(text) != "" {
			input := jsonObject(text)
			if input == nil {
				return &malformed{fmt.Sprintf("%s input is not a JSON object: %.80q", block.Type, text)}
			}
			raw := copyObject(block.Other["raw"].(Object))
			raw["input"] = input
			block.Other = Object{"type": block.Type, "raw": raw}
		}
	}
	return nil
}

// end is the body's end: after message_stop that is all; else what arrived is a message cut
// short.
func (s *WireStream) end(out *[]StreamEvent) error {
	if s.finished {
		return nil
	}
	s.position++
	open := s.openIndexes()
	if s.stopSeen && len(open) == 0 {
		// message_delta's stop_reason arrived and every block stopped: only the end marker is missing
		s.log.Warning(Name+": stream ended after message_delta's stop_reason without message_stop",
			Object{"event": "message_stop_missing", "adapter": Name, "session_id": s.ctx.SessionID})
		s.finish(s.stop, out)
		return nil
	}
	s.start(out)
	lacks := "without message_delta's stop_reason"
	if len(open) > 0 {
		lacks = fmt.Sprintf("with block(s) %v open", open)
	}
	return &malformed{"stream ended before message_stop, " + lacks + ": cut before its end"}
}

func (s *WireStream) start(out *[]StreamEvent) {
	if !s.started {
		s.started = true
		*out = append(*out, StreamEvent{"type": "message_start", "message_id": s.mid, "role": "assistant", "model": s.model})
	}
}

func (s *WireStream) finish(stop string, out *[]StreamEvent) {
	s.finished, s.Over = true, true
	*out = append(*out, s.complete(stop, s.content))
}

// fail is contract §6.5: the partial message (stop_reason error) before the failure.
func (s *WireStream) fail(out *[]StreamEvent) {
	if !s.started || s.finished {
		return
	}
	s.finished = true
	var kept []Block // tool calls whose input never completed are not invented as {}
	for k, b := range s.content {
		if _, open := s.partial[k]; b.Type != "tool_use" || !open {
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
	return cancelEvents(s.Events, delivered, s.mid, s.silent)
}

// rawUsage is TokenUsage back in Anthropic's names, so a message_delta's usage merges over it.
func rawUsage(u *TokenUsage) Object {
	if u == nil {
		return Object{}
	}
	return Object{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
		"cache_read_input_tokens": u.CachedInputTokens, "cache_creation_input_tokens": u.CacheCreationInputTokens}
}
