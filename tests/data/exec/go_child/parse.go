// parse (a whole response), streams (SSE or a JSON array, fed in chunks) and cancel.
package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// acc accumulates one candidate's parts into canonical blocks, for parse and for streams.
type acc struct {
	sid, mid   string
	model      string
	blocks     []obj
	kinds      []string // "text", "thinking", "tool", "other": what each block is
	finish     string
	blocked    bool
	calls      bool
	usage      obj
	responseID string
	extras     obj // block index -> fields for provider_raw (parse only)
}

func newAcc(ctx obj) *acc {
	mid := str(ctx["message_id"])
	if mid == "" {
		mid = ulid()
	}
	return &acc{sid: str(ctx["session_id"]), mid: mid, model: str(ctx["model"]), extras: obj{}}
}

func (a *acc) ev(kind string, index int, fields obj) obj {
	e := obj{"type": kind, "message_id": a.mid, "content_block_index": index}
	for k, v := range fields {
		e[k] = v
	}
	return e
}

// closeThinking ends an open thinking block: its signature rides on a final thinking_delta.
func (a *acc) closeThinking() []obj {
	n := len(a.blocks) - 1
	if n < 0 || a.kinds[n] != "thinking" || a.blocks[n]["closed"] == true {
		return nil
	}
	a.blocks[n]["closed"] = true
	if sig := str(a.blocks[n]["signature"]); sig != "" {
		return []obj{a.ev("thinking_delta", n, obj{"text": "", "signature": sig})}
	}
	return nil
}

// signOnly keeps a thoughtSignature the wire put on a part that is no thought as a
// signature-only thinking block before that part: a stream has no provider_raw, so this is
// how a streamed reply carries it (docs/exec-protocol.md, Streams; TC405).
func (a *acc) signOnly(sig string) []obj {
	a.blocks = append(a.blocks, obj{"type": "thinking", "text": "", "signature": sig, "closed": true})
	a.kinds = append(a.kinds, "thinking")
	return []obj{a.ev("thinking_delta", len(a.blocks)-1, obj{"text": "", "signature": sig})}
}

// chunk reads one GenerateContentResponse; it returns the events it completes.
func (a *acc) chunk(body obj) ([]obj, error) {
	if e := object(body["error"]); e != nil && get(body, "candidates") == nil {
		return nil, googleError(0, body, nil)
	}
	if v := str(get(body, "modelVersion")); v != "" {
		a.model = canonicalModel(v)
	}
	if id := str(get(body, "responseId")); id != "" {
		a.responseID = id
	}
	if u := object(get(body, "usageMetadata")); u != nil {
		a.usage = tokenUsage(u)
	}
	if fb := object(get(body, "promptFeedback")); fb != nil && get(fb, "blockReason") != nil {
		a.blocked = true
	}
	out := []obj{}
	cands := list(get(body, "candidates"))
	if len(cands) == 0 {
		return out, nil
	}
	cand := object(cands[0])
	if f := finishName(get(cand, "finishReason")); f != "" {
		a.finish = f
	}
	for _, pv := range list(get(object(get(cand, "content")), "parts")) {
		out = append(out, a.part(object(pv))...)
	}
	return out, nil
}

func (a *acc) part(part obj) []obj {
	out := []obj{}
	n := len(a.blocks) - 1
	sig := str(get(part, "thoughtSignature"))
	text, isText := part["text"].(string)
	thought := get(part, "thought") == true
	switch {
	case isText && thought:
		if n < 0 || a.kinds[n] != "thinking" || a.blocks[n]["closed"] == true {
			out = append(out, a.closeThinking()...)
			a.blocks = append(a.blocks, obj{"type": "thinking", "text": "", "signature": nil})
			a.kinds = append(a.kinds, "thinking")
			n = len(a.blocks) - 1
		}
		a.blocks[n]["text"] = str(a.blocks[n]["text"]) + text
		if sig != "" {
			a.blocks[n]["signature"] = sig
		}
		if text != "" {
			out = append(out, a.ev("thinking_delta", n, obj{"text": text, "signature": nil}))
		}
		return out
	case isText && text == "" && n >= 0:
		// an empty text part: at most a signature (Gemini sends one so at the end of a
		// stream), kept as a signature-only thinking block
		if sig != "" {
			out = append(out, a.signOnly(sig)...)
		}
		return out
	case isText:
		out = append(out, a.closeThinking()...)
		if sig != "" {
			out = append(out, a.signOnly(sig)...)
			n = len(a.blocks) - 1
		}
		if n < 0 || a.kinds[n] != "text" {
			a.blocks = append(a.blocks, obj{"type": "text", "text": ""})
			a.kinds = append(a.kinds, "text")
			n = len(a.blocks) - 1
		}
		a.blocks[n]["text"] = str(a.blocks[n]["text"]) + text
		if text != "" {
			out = append(out, a.ev("text_delta", n, obj{"text": text}))
		}
		return out
	}
	out = append(out, a.closeThinking()...)
	if sig != "" {
		out = append(out, a.signOnly(sig)...)
	}
	n = len(a.blocks)
	extras := obj{}
	if call := object(get(part, "functionCall")); call != nil {
		a.calls = true
		args := object(call["args"])
		if args == nil {
			args = obj{}
		}
		pid := str(call["id"])
		if pid == "" {
			// the API issued no id: one derived from the reply, so a parse of the same bytes
			// (or of the same reply streamed) finds the same call again
			pid = derivedID(a.responseID, n, str(call["name"]), marshal(args))
			extras["no_id"] = true
		}
		cid := canonicalFor(a.sid, pid)
		a.blocks = append(a.blocks, obj{"type": "tool_use", "id": cid, "name": call["name"], "input": args})
		a.kinds = append(a.kinds, "tool")
		argsJSON := marshal(args)
		out = append(out,
			a.ev("tool_use_start", n, obj{"tool_use_id": cid, "tool_name": call["name"]}),
			a.ev("tool_use_input_delta", n, obj{"tool_use_id": cid, "partial_json": argsJSON}),
			a.ev("tool_use_end", n, obj{"tool_use_id": cid, "final_input": args}))
	} else if data := object(get(part, "inlineData")); data != nil {
		a.blocks = append(a.blocks, obj{"type": "image", "source": obj{"kind": "base64", "data": data["data"]}, "media_type": get(data, "mimeType")})
		a.kinds = append(a.kinds, "other")
	} else if data := object(get(part, "fileData")); data != nil {
		a.blocks = append(a.blocks, obj{"type": "image", "source": obj{"kind": "url", "data": get(data, "fileUri")}, "media_type": get(data, "mimeType")})
		a.kinds = append(a.kinds, "other")
	} else {
		a.blocks = append(a.blocks, obj{"type": "gemini:part", "part": part})
		a.kinds = append(a.kinds, "other")
	}
	if len(extras) > 0 {
		a.extras[fmt.Sprint(n)] = extras
	}
	return out
}

func (a *acc) content() []any {
	out := []any{}
	for _, b := range a.blocks {
		if b == nil {
			continue
		}
		c := obj{}
		for k, v := range b {
			if k != "closed" {
				c[k] = v
			}
		}
		out = append(out, c)
	}
	return out
}

func (a *acc) stop() string { return stopReason(a.finish, a.calls, a.blocked) }

// -- parse ---------------------------------------------------------------------------------------

func decodeBody(resp obj) any {
	if b64, ok := resp["body_base64"].(string); ok {
		raw, err := base64.StdEncoding.DecodeString(b64)
		if err == nil {
			var v any
			if json.Unmarshal(raw, &v) == nil {
				return v
			}
			return string(raw)
		}
	}
	return resp["body"]
}

func parse(p obj) (any, error) {
	resp := object(p["response"])
	ctx := object(p["context"])
	status := intOf(resp["status"])
	body := object(decodeBody(resp))
	if status >= 400 || (body != nil && body["error"] != nil && get(body, "candidates") == nil) {
		return nil, googleError(status, body, object(resp["headers"]))
	}
	if body == nil {
		return nil, wireFormat("a generateContent response is a JSON object")
	}
	a := newAcc(ctx)
	if _, err := a.chunk(body); err != nil {
		return nil, err
	}
	content := a.content()
	if len(content) == 0 {
		content = []any{obj{"type": "text", "text": ""}}
	}
	model := a.model
	if model == "" {
		model = provider + ":unknown"
	}
	meta := assistantMeta(model)
	meta["status"] = statusOf(a.stop())
	if a.usage != nil {
		u := obj{"cost_usd": "0", "pricing_version": "unpriced", "latency_ms": intOf(ctx["latency_ms"])}
		for k, v := range a.usage {
			u[k] = v
		}
		meta["usage"] = u
	} else {
		meta["usage"] = nil
	}
	raw := obj{"finishReason": a.finish, "responseId": a.responseID}
	if len(a.extras) > 0 {
		raw["blocks"] = a.extras
	}
	meta["provider_raw"] = obj{name: raw}
	created := str(ctx["created_at"])
	if created == "" {
		created = now()
	}
	return obj{"message": obj{"id": a.mid, "session_id": a.sid, "role": "assistant", "content": content,
		"metadata": meta, "created_at": created, "schema_version": 1}}, nil
}

// -- streams ---------------------------------------------------------------------------------------

type stream struct {
	ctx     obj
	acc     *acc
	buf     []byte
	array   bool // a JSON array of responses (no alt=sse), else SSE
	decided bool
	started bool
	closed  bool // answered its stream_close, or failed: a cancel finds it over
	events  []obj
	depth   int
	inStr   bool
	escape  bool
	start   int
	scanned int
	index   int
}

var streams = map[string]*stream{}

func streamOpen(p obj) (any, error) {
	ctx := object(p["context"])
	streams[str(p["stream_id"])] = &stream{ctx: ctx, acc: newAcc(ctx), start: -1}
	return obj{"events": []any{}}, nil
}

func (s *stream) deliver(frame obj, out *[]obj) error {
	if !s.started {
		s.started = true
		if v := str(get(frame, "modelVersion")); v != "" {
			s.acc.model = canonicalModel(v)
		}
		model := s.acc.model
		if model == "" {
			model = provider + ":unknown"
		}
		*out = append(*out, obj{"type": "message_start", "message_id": s.acc.mid, "role": "assistant", "model": model})
	}
	evs, err := s.acc.chunk(frame)
	*out = append(*out, evs...)
	s.index++
	return err
}

// frames takes the complete JSON objects out of the buffer (SSE events, or array elements).
func (s *stream) frames(final bool) ([]obj, error) {
	if !s.decided {
		trimmed := strings.TrimLeft(string(s.buf), " \t\r\n")
		if trimmed == "" {
			return nil, nil
		}
		s.array, s.decided = trimmed[0] == '[', true
	}
	if s.array {
		return s.arrayFrames()
	}
	text := strings.ReplaceAll(string(s.buf), "\r\n", "\n")
	parts := strings.Split(text, "\n\n")
	rest := parts[len(parts)-1]
	if final {
		rest = ""
	} else {
		parts = parts[:len(parts)-1]
	}
	s.buf = []byte(rest)
	out := []obj{}
	for _, ev := range parts {
		data := []string{}
		for _, line := range strings.Split(ev, "\n") {
			if strings.HasPrefix(line, "data:") {
				data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			}
		}
		if len(data) == 0 {
			continue
		}
		var frame obj
		if err := json.Unmarshal([]byte(strings.Join(data, "\n")), &frame); err != nil {
			e := wireFormat(fmt.Sprintf("SSE event %d is not a JSON object: %v", s.index+len(out), err))
			e.body["event"] = s.index + len(out)
			return out, e
		}
		out = append(out, frame)
	}
	return out, nil
}

func (s *stream) arrayFrames() ([]obj, error) {
	out := []obj{}
	for i := s.scanned; i < len(s.buf); i++ {
		c := s.buf[i]
		if s.inStr {
			switch {
			case s.escape:
				s.escape = false
			case c == '\\':
				s.escape = true
			case c == '"':
				s.inStr = false
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
		case '{', '[':
			s.depth++
			if c == '{' && s.depth == 2 {
				s.start = i
			}
		case '}', ']':
			s.depth--
			if c == '}' && s.depth == 1 && s.start >= 0 {
				var frame obj
				if err := json.Unmarshal(s.buf[s.start:i+1], &frame); err != nil {
					return out, wireFormat(fmt.Sprintf("array element %d is not a JSON object: %v", s.index+len(out), err))
				}
				out = append(out, frame)
				s.start = -1
			}
		}
	}
	s.scanned = len(s.buf)
	return out, nil
}

func (s *stream) complete(stop string) obj {
	content := s.acc.content()
	if len(content) == 0 {
		content = []any{obj{"type": "text", "text": ""}} // as parse answers an empty reply
	}
	return obj{"type": "message_complete", "message_id": s.acc.mid, "stop_reason": stop,
		"final_content": content, "usage": s.acc.usageOrNil()}
}

func (a *acc) usageOrNil() any {
	if a.usage == nil {
		return nil
	}
	return a.usage
}

// failed answers a stream's failure: the events before it, then message_complete(error) (§6.5).
func (s *stream) failed(out []obj, err error) error {
	s.closed = true
	out = append(out, s.complete("error"))
	s.events = append(s.events, out...)
	pe, ok := err.(*protoError)
	if !ok {
		pe = &protoError{obj{"kind": "crash", "message": err.Error(), "type": fmt.Sprintf("%T", err)}}
	}
	body := obj{}
	for k, v := range pe.body {
		body[k] = v
	}
	events := []any{}
	for _, e := range out {
		events = append(events, e)
	}
	body["events"] = events
	return &protoError{body}
}

func (s *stream) read(final bool) ([]obj, error) {
	out := []obj{}
	frames, err := s.frames(final)
	for _, f := range frames {
		if derr := s.deliver(f, &out); derr != nil {
			return out, derr
		}
	}
	return out, err
}

func asAny(evs []obj) []any {
	out := []any{}
	for _, e := range evs {
		out = append(out, e)
	}
	return out
}

func streamFeed(p obj) (any, error) {
	s := streams[str(p["stream_id"])]
	if s == nil {
		return nil, adapterError("invalid_request", "no open stream "+str(p["stream_id"]), nil)
	}
	if s.closed {
		return obj{"events": []any{}}, nil
	}
	chunk, err := base64.StdEncoding.DecodeString(str(p["data"]))
	if err != nil {
		return nil, adapterError("invalid_request", "stream_feed data is not base64", nil)
	}
	s.buf = append(s.buf, chunk...)
	out, err := s.read(false)
	if err != nil {
		return nil, s.failed(out, err)
	}
	s.events = append(s.events, out...)
	return obj{"events": asAny(out)}, nil
}

func streamClose(p obj) (any, error) {
	id := str(p["stream_id"])
	s := streams[id]
	if s == nil {
		return obj{"events": []any{}}, nil
	}
	if p["abandon"] == true {
		delete(streams, id)
		return obj{"events": []any{}}, nil
	}
	if s.closed {
		return obj{"events": []any{}}, nil
	}
	out, err := s.read(true)
	if err != nil {
		return nil, s.failed(out, err)
	}
	if s.acc.finish == "" && !s.acc.blocked {
		return nil, s.failed(out, wireFormat("the stream ended before any candidate's finishReason"))
	}
	out = append(out, s.acc.closeThinking()...)
	out = append(out, s.complete(s.acc.stop()))
	s.closed = true
	s.events = append(s.events, out...)
	return obj{"events": asAny(out)}, nil
}

// -- cancel (contract §5.3): as if it landed right after the first `delivered` events -------------

func cancel(p obj) (any, error) {
	rid := str(p["request_id"])
	delivered := intOf(p["delivered"])
	for _, s := range streams {
		if str(s.ctx["request_id"]) != rid {
			continue
		}
		if s.closed {
			return obj{"in_flight": false, "events": []any{}}, nil
		}
		if delivered > len(s.events) {
			delivered = len(s.events)
		}
		replay := &acc{sid: s.acc.sid, mid: s.acc.mid, model: s.acc.model, extras: obj{}}
		open := map[int]bool{}
		partial := map[int]string{}
		for _, e := range s.events[:delivered] {
			replay.replay(e, open, partial)
		}
		out := []obj{}
		for i := range replay.blocks {
			if open[i] {
				input := obj{}
				_ = json.Unmarshal([]byte(partial[i]), &input)
				replay.blocks[i]["input"] = input
				out = append(out, replay.ev("tool_use_end", i, obj{"tool_use_id": replay.blocks[i]["id"], "final_input": input}))
			}
		}
		s.closed = true
		done := &stream{acc: replay}
		out = append(out, done.complete("cancelled"))
		return obj{"in_flight": true, "events": asAny(out)}, nil
	}
	return obj{"in_flight": false, "events": []any{}}, nil
}

func (a *acc) grow(i int, b obj, kind string) {
	for len(a.blocks) <= i {
		a.blocks = append(a.blocks, nil)
		a.kinds = append(a.kinds, "")
	}
	if a.blocks[i] == nil {
		a.blocks[i], a.kinds[i] = b, kind
	}
}

func (a *acc) replay(e obj, open map[int]bool, partial map[int]string) {
	i := intOf(e["content_block_index"])
	switch str(e["type"]) {
	case "text_delta":
		a.grow(i, obj{"type": "text", "text": ""}, "text")
		a.blocks[i]["text"] = str(a.blocks[i]["text"]) + str(e["text"])
	case "thinking_delta":
		a.grow(i, obj{"type": "thinking", "text": "", "signature": nil}, "thinking")
		a.blocks[i]["text"] = str(a.blocks[i]["text"]) + str(e["text"])
		if sig := str(e["signature"]); sig != "" {
			a.blocks[i]["signature"] = sig
		}
	case "tool_use_start":
		a.grow(i, obj{"type": "tool_use", "id": e["tool_use_id"], "name": e["tool_name"], "input": obj{}}, "tool")
		open[i] = true
	case "tool_use_input_delta":
		partial[i] += str(e["partial_json"])
	case "tool_use_end":
		a.blocks[i]["input"] = e["final_input"]
		delete(open, i)
	}
}

func derivedID(responseID string, index int, name, args string) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s\x00%s", responseID, index, name, args)))
	return "call_" + hex.EncodeToString(sum[:8])
}
