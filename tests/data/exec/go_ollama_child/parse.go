// parse (one reply), NDJSON streams fed in chunks, and cancel.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// The reply object of /api/chat (ChatResponse / ChatStreamEvent); arguments kept as the
// bytes the server sent, for the stream's literal partial_json.
type wireFunction struct {
	Index     *int64          `json:"index"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type wireCall struct {
	ID       string       `json:"id"`
	Function wireFunction `json:"function"`
}

type wireMessage struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Thinking  string     `json:"thinking"`
	ToolCalls []wireCall `json:"tool_calls"`
}

type chatReply struct {
	Model           string          `json:"model"`
	CreatedAt       string          `json:"created_at"`
	Message         *wireMessage    `json:"message"`
	Done            bool            `json:"done"`
	DoneReason      string          `json:"done_reason"`
	PromptEvalCount *int64          `json:"prompt_eval_count"`
	EvalCount       *int64          `json:"eval_count"`
	Error           json.RawMessage `json:"error"`
}

func hasError(r *chatReply) bool {
	e := bytes.TrimSpace(r.Error)
	return len(e) > 0 && string(e) != "null"
}

func readReply(line []byte) (*chatReply, error) {
	var r chatReply
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// arguments: the object as sent (a JSON string holding one is read too), and its text.
func arguments(raw json.RawMessage) (obj, string) {
	text := string(bytes.TrimSpace(raw))
	if text == "" || text == "null" {
		return obj{}, "{}"
	}
	v, err := decode(raw)
	if s, ok := v.(string); ok && err == nil {
		text = s
		v, err = decode([]byte(s))
	}
	if o := asObj(v); err == nil && o != nil {
		return o, text
	}
	return obj{}, text
}

// turn accumulates one assistant message from reply objects (a whole reply, or a stream's lines).
type turn struct {
	session, messageID, model string
	blocks                    []obj
	calls                     int
	doneReason                string
	done                      bool
	usage                     obj
}

func newTurn(ctx obj) *turn {
	mid := asStr(ctx["message_id"])
	if mid == "" {
		mid = newULID()
	}
	return &turn{session: asStr(ctx["session_id"]), messageID: mid, model: asStr(ctx["model"])}
}

func (t *turn) event(kind string, index int, fields obj) obj {
	e := obj{"type": kind, "message_id": t.messageID, "content_block_index": index}
	for k, v := range fields {
		e[k] = v
	}
	return e
}

// add reads one reply object and answers the events it completes.
func (t *turn) add(r *chatReply) []obj {
	out := []obj{}
	if r.Model != "" {
		t.model = canonicalModel(r.Model)
	}
	if m := r.Message; m != nil {
		if m.Thinking != "" {
			out = append(out, t.appendText("thinking", m.Thinking))
		}
		if m.Content != "" {
			out = append(out, t.appendText("text", m.Content))
		}
		for _, c := range m.ToolCalls {
			out = append(out, t.call(r, c)...)
		}
	}
	if r.Done {
		t.done = true
		t.doneReason = r.DoneReason
		t.usage = usageOf(r.PromptEvalCount, r.EvalCount)
	}
	return out
}

func (t *turn) appendText(kind, text string) obj {
	n := len(t.blocks) - 1
	if n < 0 || asStr(t.blocks[n]["type"]) != kind {
		b := obj{"type": kind, "text": ""}
		if kind == "thinking" {
			b["signature"] = nil
		}
		t.blocks = append(t.blocks, b)
		n++
	}
	t.blocks[n]["text"] = asStr(t.blocks[n]["text"]) + text
	if kind == "thinking" {
		return t.event("thinking_delta", n, obj{"text": text, "signature": nil})
	}
	return t.event("text_delta", n, obj{"text": text})
}

func (t *turn) call(r *chatReply, c wireCall) []obj {
	position := t.calls
	t.calls++
	input, text := arguments(c.Function.Arguments)
	pid := c.ID
	if pid == "" {
		// keyed on the arguments' value, not their spelling: the same reply parsed whole or
		// streamed finds the same call
		pid = mintedID(r.Model, r.CreatedAt, position, c.Function.Name, []byte(encode(input)))
	}
	cid := canonicalFor(t.session, pid)
	n := len(t.blocks)
	t.blocks = append(t.blocks, obj{"type": "tool_use", "id": cid, "name": c.Function.Name, "input": input})
	return []obj{
		t.event("tool_use_start", n, obj{"tool_use_id": cid, "tool_name": c.Function.Name}),
		t.event("tool_use_input_delta", n, obj{"tool_use_id": cid, "partial_json": text}),
		t.event("tool_use_end", n, obj{"tool_use_id": cid, "final_input": input}),
	}
}

func (t *turn) content() []any {
	if len(t.blocks) == 0 {
		return []any{obj{"type": "text", "text": ""}} // canonical §5.1.1: one empty text block
	}
	return anyList(t.blocks)
}

func (t *turn) stop() string { return stopReason(t.doneReason, t.calls > 0) }

func (t *turn) usageValue() any {
	if t.usage == nil {
		return nil
	}
	return t.usage
}

// -- parse -------------------------------------------------------------------------------------------

func responseBytes(resp obj) ([]byte, error) {
	if b64, ok := resp["body_base64"].(string); ok {
		return base64.StdEncoding.DecodeString(b64)
	}
	return []byte(encode(resp["body"])), nil
}

func parse(params obj) (any, error) {
	resp := asObj(params["response"])
	ctx := asObj(params["context"])
	status := intOr(resp["status"], 200)
	raw, err := responseBytes(resp)
	if err != nil {
		return nil, wireFormatErr("body_base64 is not base64: "+err.Error(), 0)
	}
	reply, jerr := readReply(raw)
	if status >= 400 {
		message := ""
		if jerr == nil && hasError(reply) {
			message = errorText(reply.Error)
		} else {
			message = string(raw)
		}
		return nil, classify(status, message, asObj(resp["headers"]), ctx["request_id"])
	}
	if jerr != nil {
		return nil, wireFormatErr("an /api/chat reply is one JSON object: "+jerr.Error(), 0)
	}
	if hasError(reply) && reply.Message == nil {
		return nil, classify(0, errorText(reply.Error), asObj(resp["headers"]), ctx["request_id"])
	}
	t := newTurn(ctx)
	t.add(reply)
	model := t.model
	if model == "" {
		model = providerKey + ":unknown"
	} else {
		model = canonicalModel(model)
	}
	meta := assistantMetadata(model)
	meta["status"] = statusFor(t.stop())
	if t.usage != nil {
		u := obj{"cost_usd": "0", "pricing_version": "unpriced", "latency_ms": intOr(ctx["latency_ms"], 0)}
		for k, v := range t.usage {
			u[k] = v
		}
		meta["usage"] = u
	} else {
		meta["usage"] = nil
	}
	meta["provider_raw"] = obj{adapterName: obj{"done_reason": reply.DoneReason, "created_at": reply.CreatedAt}}
	created := asStr(ctx["created_at"])
	if created == "" {
		created = timestamp()
	}
	return obj{"message": obj{"id": t.messageID, "session_id": t.session, "role": "assistant",
		"content": t.content(), "metadata": meta, "created_at": created, "schema_version": 1}}, nil
}

// -- streams: NDJSON, one reply object a line ----------------------------------------------------------

type stream struct {
	ctx      obj
	turn     *turn
	pending  []byte
	line     int
	started  bool
	finished bool  // message_complete sent
	over     bool  // stream_close answered, or a feed failed: a cancel finds it over
	events   []obj // every event answered so far, in order
}

var streams = map[string]*stream{}

func streamOpen(params obj) (any, error) {
	ctx := asObj(params["context"])
	streams[asStr(params["stream_id"])] = &stream{ctx: ctx, turn: newTurn(ctx)}
	return obj{"events": []any{}}, nil
}

func (s *stream) complete(stop string) obj {
	return obj{"type": "message_complete", "message_id": s.turn.messageID, "stop_reason": stop,
		"final_content": s.turn.content(), "usage": s.turn.usageValue()}
}

// lineEvents reads one complete NDJSON line.
func (s *stream) lineEvents(line []byte) ([]obj, error) {
	s.line++
	line = bytes.TrimSpace(line)
	if len(line) == 0 || s.finished {
		return nil, nil
	}
	reply, err := readReply(line)
	if err != nil {
		return nil, wireFormatErr(fmt.Sprintf("NDJSON line %d is not a reply object: %v", s.line, err), s.line)
	}
	if hasError(reply) {
		return nil, classify(0, errorText(reply.Error), nil, s.ctx["request_id"])
	}
	out := []obj{}
	if !s.started {
		s.started = true
		model := s.turn.model
		if reply.Model != "" {
			model = reply.Model
		}
		out = append(out, obj{"type": "message_start", "message_id": s.turn.messageID, "role": "assistant", "model": canonicalModel(model)})
	}
	out = append(out, s.turn.add(reply)...)
	if reply.Done {
		s.finished = true
		out = append(out, s.complete(s.turn.stop()))
	}
	return out, nil
}

func (s *stream) drain(final bool) ([]obj, error) {
	out := []obj{}
	for {
		i := bytes.IndexByte(s.pending, '\n')
		if i < 0 {
			break
		}
		line := s.pending[:i]
		s.pending = s.pending[i+1:]
		evs, err := s.lineEvents(line)
		out = append(out, evs...)
		if err != nil {
			return out, err
		}
	}
	if final && len(bytes.TrimSpace(s.pending)) > 0 {
		line := s.pending
		s.pending = nil
		evs, err := s.lineEvents(line)
		out = append(out, evs...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// fail answers a failed stream: what the chunk completed, then message_complete(error) (contract §6.5).
func (s *stream) fail(out []obj, err error) error {
	s.over = true
	if !s.finished {
		if !s.started {
			s.started = true
			out = append(out, obj{"type": "message_start", "message_id": s.turn.messageID, "role": "assistant", "model": canonicalModel(s.turn.model)})
		}
		s.finished = true
		out = append(out, s.complete("error"))
	}
	s.events = append(s.events, out...)
	f, ok := err.(*failure)
	if !ok {
		f = &failure{obj{"kind": "crash", "message": err.Error(), "type": fmt.Sprintf("%T", err)}}
	}
	body := obj{}
	for k, v := range f.body {
		body[k] = v
	}
	body["events"] = anyList(out)
	return &failure{body}
}

func streamFeed(params obj) (any, error) {
	s := streams[asStr(params["stream_id"])]
	if s == nil {
		return nil, adapterErr("invalid_request", "no open stream "+asStr(params["stream_id"]), nil)
	}
	if s.over {
		return obj{"events": []any{}}, nil
	}
	chunk, err := base64.StdEncoding.DecodeString(asStr(params["data"]))
	if err != nil {
		return nil, adapterErr("invalid_request", "stream_feed data is not base64", nil)
	}
	s.pending = append(s.pending, chunk...)
	out, err := s.drain(false)
	if err != nil {
		return nil, s.fail(out, err)
	}
	s.events = append(s.events, out...)
	return obj{"events": anyList(out)}, nil
}

func streamClose(params obj) (any, error) {
	id := asStr(params["stream_id"])
	s := streams[id]
	if s == nil {
		return obj{"events": []any{}}, nil
	}
	if params["abandon"] == true {
		delete(streams, id)
		return obj{"events": []any{}}, nil
	}
	if s.over {
		return obj{"events": []any{}}, nil
	}
	out, err := s.drain(true)
	if err != nil {
		return nil, s.fail(out, err)
	}
	if !s.finished {
		return nil, s.fail(out, wireFormatErr(fmt.Sprintf("the stream ended after %d lines without its done: true line", s.line), 0))
	}
	s.over = true
	s.events = append(s.events, out...)
	return obj{"events": anyList(out)}, nil
}

// -- cancel (contract §5.3): as if it landed right after the first `delivered` events ---------------

func cancel(params obj) (any, error) {
	rid := asStr(params["request_id"])
	var s *stream
	for _, candidate := range streams {
		if asStr(candidate.ctx["request_id"]) == rid && rid != "" {
			s = candidate
		}
	}
	if s == nil || s.over {
		return obj{"in_flight": false, "events": []any{}}, nil
	}
	delivered := int(intOr(params["delivered"], 0))
	if delivered < 0 {
		delivered = 0
	}
	if delivered > len(s.events) {
		delivered = len(s.events)
	}
	// rebuild the content the first `delivered` events spell
	cut := &turn{session: s.turn.session, messageID: s.turn.messageID, model: s.turn.model}
	open := map[int]string{} // block index -> partial_json of a call not yet ended
	for _, e := range s.events[:delivered] {
		i := int(intOr(e["content_block_index"], 0))
		grow := func(b obj) {
			for len(cut.blocks) <= i {
				cut.blocks = append(cut.blocks, nil)
			}
			if cut.blocks[i] == nil {
				cut.blocks[i] = b
			}
		}
		switch asStr(e["type"]) {
		case "text_delta":
			grow(obj{"type": "text", "text": ""})
			cut.blocks[i]["text"] = asStr(cut.blocks[i]["text"]) + asStr(e["text"])
		case "thinking_delta":
			grow(obj{"type": "thinking", "text": "", "signature": nil})
			cut.blocks[i]["text"] = asStr(cut.blocks[i]["text"]) + asStr(e["text"])
		case "tool_use_start":
			grow(obj{"type": "tool_use", "id": e["tool_use_id"], "name": e["tool_name"], "input": obj{}})
			open[i] = ""
		case "tool_use_input_delta":
			open[i] += asStr(e["partial_json"])
		case "tool_use_end":
			cut.blocks[i]["input"] = e["final_input"]
			delete(open, i)
		}
	}
	kept := []obj{}
	for _, b := range cut.blocks {
		if b != nil {
			kept = append(kept, b)
		}
	}
	out := []obj{}
	for i, b := range cut.blocks {
		if partial, ok := open[i]; ok && b != nil {
			input := obj{}
			if v, err := decode([]byte(partial)); err == nil && asObj(v) != nil {
				input = asObj(v)
			}
			b["input"] = input
			out = append(out, cut.event("tool_use_end", i, obj{"tool_use_id": b["id"], "final_input": input}))
		}
	}
	cut.blocks = kept
	s.over = true
	s.finished = true
	out = append(out, obj{"type": "message_complete", "message_id": cut.messageID, "stop_reason": "cancelled",
		"final_content": cut.content(), "usage": nil})
	return obj{"in_flight": true, "events": anyList(out)}, nil
}
