// Streams: SSE `data:` lines of chat.completion.chunk objects ending in `data: [DONE]`, fed a
// chunk of bytes at a time; `: OPENROUTER PROCESSING` comments are skipped (OpenRouter's
// streaming page); an `error` member in a data event is a mid-stream failure.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

type streamBlock struct {
	kind      string // text, thinking, redacted_thinking, tool_use
	key       string // what opened it: "text", "reasoning:<index>", "tool:<index>"
	text      strings.Builder
	signature string
	data      string
	toolID    string
	toolName  string
	partial   strings.Builder
	ended     bool
	// events returned before this block existed (a block no event carries is part of a
	// cancel's partial content once an event after it was delivered)
	before int
}

type stream struct {
	id        string
	requestID string
	session   string
	messageID string
	model     string
	pending   []byte
	started   bool
	blocks    map[int]*streamBlock
	current   int // index of the open block, -1 none
	next      int
	finish    string
	usage     obj
	completed bool
	over      bool
	returned  []obj
	line      int
}

var streams = map[string]*stream{}

func streamOpen(p obj) (obj, error) {
	ctx := asObj(p["context"])
	s := &stream{id: str(p["stream_id"]), requestID: str(ctx["request_id"]), session: str(ctx["session_id"]),
		messageID: str(ctx["message_id"]), model: str(ctx["model"]), blocks: map[int]*streamBlock{}, current: -1}
	if s.messageID == "" {
		s.messageID = newULID()
	}
	streams[s.id] = s
	return obj{"events": []any{}}, nil
}

func (s *stream) emit(out *[]obj, e obj) {
	*out = append(*out, e)
}

func (s *stream) open(out *[]obj, kind, key string) *streamBlock {
	s.closeCurrent(out)
	b := &streamBlock{kind: kind, key: key, before: len(s.returned) + len(*out)}
	s.blocks[s.next] = b
	s.current = s.next
	s.next++
	return b
}

// closeCurrent ends the open block: a thinking block's signature rides on its last
// thinking_delta (TC610), a call ends with its tool_use_end.
func (s *stream) closeCurrent(out *[]obj) {
	if s.current < 0 {
		return
	}
	b := s.blocks[s.current]
	idx := s.current
	s.current = -1
	if b.ended {
		return
	}
	b.ended = true
	switch b.kind {
	case "thinking":
		if b.signature != "" {
			s.emit(out, obj{"type": "thinking_delta", "message_id": s.messageID, "content_block_index": idx, "text": "", "signature": b.signature})
		}
	case "tool_use":
		s.emit(out, obj{"type": "tool_use_end", "message_id": s.messageID, "content_block_index": idx, "tool_use_id": b.toolID, "final_input": inputOf(b.partial.String())})
	}
}

func inputOf(partial string) obj {
	if v, err := decodeJSON([]byte(partial)); err == nil {
		if o, ok := v.(obj); ok {
			return o
		}
	}
	return obj{}
}

func (b *streamBlock) canonical() obj {
	switch b.kind {
	case "thinking":
		o := obj{"type": "thinking", "text": b.text.String()}
		if b.signature != "" {
			o["signature"] = b.signature
		}
		return o
	case "redacted_thinking":
		return obj{"type": "redacted_thinking", "data": b.data}
	case "tool_use":
		return obj{"type": "tool_use", "id": b.toolID, "name": b.toolName, "input": inputOf(b.partial.String())}
	}
	return obj{"type": "text", "text": b.text.String()}
}

func (s *stream) finalContent() []any {
	out := []any{}
	for _, k := range sortedKeys(s.blocks) {
		out = append(out, s.blocks[k].canonical())
	}
	if len(out) == 0 {
		out = append(out, obj{"type": "text", "text": ""})
	}
	return out
}

func (s *stream) usageEvent() any {
	if s.usage == nil {
		return nil
	}
	return usageOf(s.usage, nil)
}

func (s *stream) complete(out *[]obj, stop string) {
	s.closeCurrent(out)
	s.completed = true
	s.emit(out, obj{"type": "message_complete", "message_id": s.messageID, "stop_reason": stop,
		"final_content": s.finalContent(), "usage": s.usageEvent()})
}

func (s *stream) start(out *[]obj, model string) {
	if s.started {
		return
	}
	s.started = true
	m := s.model
	if model != "" {
		m = canonicalModel(model)
	}
	if m == "" {
		m = canonicalModel("")
	}
	s.emit(out, obj{"type": "message_start", "message_id": s.messageID, "role": "assistant", "model": m})
}

// event handles one SSE data payload.
func (s *stream) event(out *[]obj, data string) error {
	if strings.TrimSpace(data) == "[DONE]" {
		if !s.completed {
			s.start(out, "")
			if s.finish == "" {
				return s.fail(out, wireFormat("the stream ended ([DONE]) before a finish_reason"))
			}
			s.complete(out, stopReason(s.finish))
		}
		return nil
	}
	v, err := decodeJSON([]byte(data))
	chunk, ok := v.(obj)
	if err != nil || !ok {
		e := wireFormat(fmt.Sprintf("SSE line %d: data is not a JSON object", s.line))
		e.fields["line"] = s.line
		return s.fail(out, e)
	}
	s.start(out, str(chunk["model"]))
	if chunk["error"] != nil {
		return s.fail(out, errorOf(0, nil, chunk, nilIfEmpty(s.requestID)))
	}
	if u := asObj(chunk["usage"]); u != nil {
		s.usage = u
	}
	for _, c := range asList(chunk["choices"]) {
		choice := asObj(c)
		delta := asObj(choice["delta"])
		details := asList(delta["reasoning_details"])
		for _, d := range details {
			s.detail(out, asObj(d))
		}
		if r := str(delta["reasoning"]); r != "" && len(details) == 0 {
			b := s.currentBlock("reasoning:plain")
			if b == nil {
				b = s.open(out, "thinking", "reasoning:plain")
			}
			b.text.WriteString(r)
			s.emit(out, obj{"type": "thinking_delta", "message_id": s.messageID, "content_block_index": s.current, "text": r})
		}
		text := str(delta["content"]) + str(delta["refusal"])
		if text != "" {
			b := s.currentBlock("text")
			if b == nil {
				b = s.open(out, "text", "text")
			}
			b.text.WriteString(text)
			s.emit(out, obj{"type": "text_delta", "message_id": s.messageID, "content_block_index": s.current, "text": text})
		}
		for _, t := range asList(delta["tool_calls"]) {
			s.toolCall(out, asObj(t))
		}
		if f := str(choice["finish_reason"]); f != "" {
			s.finish = f
			if f == "error" {
				e := asObj(chunk["error"])
				return s.fail(out, adapterError("server_error", "the stream finished with finish_reason error "+str(e["message"]), nil, nilIfEmpty(s.requestID), true, nil))
			}
		}
	}
	return nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *stream) currentBlock(key string) *streamBlock {
	if s.current < 0 {
		return nil
	}
	if b := s.blocks[s.current]; b.key == key {
		return b
	}
	return nil
}

// detail handles one streamed reasoning_details fragment: fragments of one detail share its index.
func (s *stream) detail(out *[]obj, d obj) {
	idx := "0"
	if n, ok := asInt(d["index"]); ok {
		idx = strconv.FormatInt(n, 10)
	}
	kind := str(d["type"])
	key := "reasoning:" + idx + ":" + kind
	b := s.currentBlock(key)
	if kind == "reasoning.encrypted" {
		if b == nil {
			b = s.open(out, "redacted_thinking", key)
		}
		b.data += str(d["data"])
		return
	}
	if b == nil {
		b = s.open(out, "thinking", key)
	}
	text := str(d["text"])
	if kind == "reasoning.summary" {
		text = str(d["summary"])
	}
	if sig := str(d["signature"]); sig != "" {
		b.signature += sig
	}
	if text != "" {
		b.text.WriteString(text)
		s.emit(out, obj{"type": "thinking_delta", "message_id": s.messageID, "content_block_index": s.current, "text": text})
	}
}

func (s *stream) toolCall(out *[]obj, t obj) {
	idx := "0"
	if n, ok := asInt(t["index"]); ok {
		idx = strconv.FormatInt(n, 10)
	}
	key := "tool:" + idx
	fn := asObj(t["function"])
	b := s.currentBlock(key)
	if b == nil {
		for _, k := range sortedKeys(s.blocks) {
			if s.blocks[k].key == key && !s.blocks[k].ended {
				b = s.blocks[k]
			}
		}
	}
	if b == nil {
		b = s.open(out, "tool_use", key)
		b.toolName = str(fn["name"])
		b.toolID = sessionMap(s.session).canonicalFor(str(t["id"]))
		s.emit(out, obj{"type": "tool_use_start", "message_id": s.messageID, "content_block_index": s.current, "tool_use_id": b.toolID, "tool_name": b.toolName})
	}
	if a := str(fn["arguments"]); a != "" {
		b.partial.WriteString(a)
		s.emit(out, obj{"type": "tool_use_input_delta", "message_id": s.messageID, "content_block_index": s.current, "tool_use_id": b.toolID, "partial_json": a})
	}
}

// fail ends the stream with message_complete(error) and the error (contract §6.5).
func (s *stream) fail(out *[]obj, e *opError) error {
	if !s.completed {
		s.start(out, "")
		s.complete(out, "error")
	}
	s.over = true
	return e
}

// lines takes the complete lines of the buffer.
func (s *stream) lines(out *[]obj, final bool) error {
	for {
		i := bytes.IndexByte(s.pending, '\n')
		var line []byte
		if i < 0 {
			if !final || len(s.pending) == 0 {
				return nil
			}
			line, s.pending = s.pending, nil
		} else {
			line, s.pending = s.pending[:i], s.pending[i+1:]
		}
		s.line++
		text := strings.TrimSuffix(string(line), "\r")
		if strings.HasPrefix(text, "data:") {
			if err := s.event(out, strings.TrimPrefix(strings.TrimPrefix(text, "data:"), " ")); err != nil {
				return err
			}
		}
		// blank lines, `: comments`, event:/id:/retry: fields carry nothing we read
	}
}

func (s *stream) answer(events []obj, err error) (obj, error) {
	s.returned = append(s.returned, events...)
	list := []any{}
	for _, e := range events {
		list = append(list, e)
	}
	if err != nil {
		if oe, ok := err.(*opError); ok {
			oe.fields["events"] = list
		}
		return nil, err
	}
	return obj{"events": list}, nil
}

func streamFeed(p obj) (obj, error) {
	s := streams[str(p["stream_id"])]
	if s == nil || s.over {
		return nil, wireFormat("no open stream " + str(p["stream_id"]))
	}
	data, err := base64.StdEncoding.DecodeString(str(p["data"]))
	if err != nil {
		return nil, wireFormat("stream_feed data is not base64")
	}
	s.pending = append(s.pending, data...)
	events := []obj{}
	err = s.lines(&events, false)
	return s.answer(events, err)
}

func streamClose(p obj) (obj, error) {
	s := streams[str(p["stream_id"])]
	if p["abandon"] == true {
		delete(streams, str(p["stream_id"]))
		return obj{"events": []any{}}, nil
	}
	if s == nil || s.over {
		return obj{"events": []any{}}, nil
	}
	events := []obj{}
	err := s.lines(&events, true)
	if err == nil && !s.completed {
		s.start(&events, "")
		if s.finish == "" {
			err = s.fail(&events, wireFormat("the stream ended before a finish_reason"))
		} else {
			s.complete(&events, stopReason(s.finish))
		}
	}
	s.over = true
	return s.answer(events, err)
}

// cancel answers as if it landed right after the first `delivered` events.
func cancel(p obj) (obj, error) {
	var s *stream
	for _, st := range streams {
		if st.requestID == str(p["request_id"]) {
			s = st
		}
	}
	if s == nil || s.over {
		return obj{"in_flight": false, "events": []any{}}, nil
	}
	delivered, _ := asInt(p["delivered"])
	if int(delivered) > len(s.returned) {
		delivered = int64(len(s.returned))
	}
	blocks := map[int]*streamBlock{}
	for _, e := range s.returned[:delivered] {
		i, ok := asInt(e["content_block_index"])
		if !ok {
			continue
		}
		idx := int(i)
		b := blocks[idx]
		switch str(e["type"]) {
		case "text_delta":
			if b == nil {
				b = &streamBlock{kind: "text"}
				blocks[idx] = b
			}
			b.text.WriteString(str(e["text"]))
		case "thinking_delta":
			if b == nil {
				b = &streamBlock{kind: "thinking"}
				blocks[idx] = b
			}
			b.text.WriteString(str(e["text"]))
			if sig := str(e["signature"]); sig != "" {
				b.signature = sig
			}
		case "tool_use_start":
			blocks[idx] = &streamBlock{kind: "tool_use", toolID: str(e["tool_use_id"]), toolName: str(e["tool_name"])}
		case "tool_use_input_delta":
			if b != nil {
				b.partial.WriteString(str(e["partial_json"]))
			}
		case "tool_use_end":
			if b != nil {
				b.ended = true
			}
		}
	}
	for idx, b := range s.blocks {
		if b.kind == "redacted_thinking" && int(delivered) > b.before {
			blocks[idx] = &streamBlock{kind: "redacted_thinking", data: b.data}
		}
	}
	events := []any{}
	for _, idx := range sortedKeys(blocks) {
		b := blocks[idx]
		if b.kind == "tool_use" && !b.ended {
			events = append(events, obj{"type": "tool_use_end", "message_id": s.messageID, "content_block_index": idx, "tool_use_id": b.toolID, "final_input": inputOf(b.partial.String())})
		}
	}
	final := []any{}
	for _, idx := range sortedKeys(blocks) {
		final = append(final, blocks[idx].canonical())
	}
	if len(final) == 0 {
		final = append(final, obj{"type": "text", "text": ""})
	}
	events = append(events, obj{"type": "message_complete", "message_id": s.messageID, "stop_reason": "cancelled", "final_content": final, "usage": nil})
	s.over = true
	return obj{"in_flight": true, "events": events}, nil
}

var _ = json.Marshal
