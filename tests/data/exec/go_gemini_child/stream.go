package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
)

type streamState struct {
	ctx        obj
	session    string
	msgID      string
	requestID  string
	buf        []byte
	mode       string // "", "sse", "array"
	started    bool
	over       bool
	events     []obj // every event returned so far
	pending    []obj // events of the call being answered, not yet returned
	index      int   // current block index, -1 none
	kind       string
	kindSigned bool
	hasCalls   bool
	finish     string
	usage      obj
	responseID string
	callCount  int
	// array framing scanner
	depth    int
	inString bool
	escaped  bool
	objStart int
	scanPos  int
}

func (s *server) streamOpen(p obj) (interface{}, *opError) {
	ctx := asObj(p["context"])
	st := &streamState{ctx: ctx, session: str(ctx["session_id"]), msgID: str(ctx["message_id"]),
		requestID: str(ctx["request_id"]), index: -1}
	if st.msgID == "" {
		st.msgID = newULID()
	}
	s.streams[str(p["stream_id"])] = st
	return obj{"events": []interface{}{}}, nil
}

func (s *server) streamFeed(p obj) (interface{}, *opError) {
	st := s.streams[str(p["stream_id"])]
	if st == nil || st.over {
		return nil, newErr("crash", "unknown or finished stream "+str(p["stream_id"]))
	}
	data, err := base64.StdEncoding.DecodeString(str(p["data"]))
	if err != nil {
		return nil, newErr("crash", "stream_feed data is not base64")
	}
	st.buf = append(st.buf, data...)
	evs, e := s.drain(st, false)
	return s.streamAnswer(st, evs, e)
}

func (s *server) streamClose(p obj) (interface{}, *opError) {
	id := str(p["stream_id"])
	st := s.streams[id]
	if truthy(p["abandon"]) {
		if st != nil {
			st.over = true
		}
		return obj{"events": []interface{}{}}, nil
	}
	if st == nil || st.over {
		return obj{"events": []interface{}{}}, nil
	}
	evs, e := s.drain(st, true)
	if e == nil {
		if !st.started {
			e = newErr("wire_format", "the stream ended before any response")
		} else {
			evs = append(evs, s.finishEvents(st)...)
		}
	}
	st.over = true
	return s.streamAnswer(st, evs, e)
}

func (s *server) streamAnswer(st *streamState, evs []obj, e *opError) (interface{}, *opError) {
	st.events = append(st.events, evs...)
	out := make([]interface{}, len(evs))
	for i, ev := range evs {
		out[i] = ev
	}
	if e != nil {
		st.over = true
		e.fields["events"] = out
		return nil, e
	}
	return obj{"events": out}, nil
}

func (st *streamState) ev(kind string, fields obj) obj {
	e := obj{"type": kind, "message_id": st.msgID}
	for k, v := range fields {
		e[k] = v
	}
	return e
}

// drain reads every complete response out of the buffer.
func (s *server) drain(st *streamState, final bool) ([]obj, *opError) {
	var out []obj
	if st.mode == "" {
		t := bytes.TrimLeft(st.buf, " \t\r\n\ufeff")
		if len(t) == 0 {
			return nil, nil
		}
		if t[0] == '[' {
			st.mode = "array"
		} else {
			st.mode = "sse"
		}
	}
	var payloads [][]byte
	if st.mode == "sse" {
		for {
			// an event ends at a blank line
			norm := st.buf
			i := bytes.Index(norm, []byte("\n\n"))
			j := bytes.Index(norm, []byte("\r\n\r\n"))
			end, skip := -1, 0
			if i >= 0 && (j < 0 || i < j) {
				end, skip = i, 2
			} else if j >= 0 {
				end, skip = j, 4
			}
			if end < 0 {
				if final && len(bytes.TrimSpace(st.buf)) > 0 {
					end, skip = len(st.buf), 0
				} else {
					break
				}
			}
			block := st.buf[:end]
			st.buf = st.buf[end+skip:]
			var data []string
			for _, line := range strings.Split(string(block), "\n") {
				line = strings.TrimRight(line, "\r")
				if strings.HasPrefix(line, "data:") {
					data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
				}
			}
			if len(data) > 0 {
				payloads = append(payloads, []byte(strings.Join(data, "\n")))
			}
		}
	} else {
		for ; st.scanPos < len(st.buf); st.scanPos++ {
			c := st.buf[st.scanPos]
			if st.inString {
				if st.escaped {
					st.escaped = false
				} else if c == '\\' {
					st.escaped = true
				} else if c == '"' {
					st.inString = false
				}
				continue
			}
			switch c {
			case '"':
				st.inString = true
			case '[', '{':
				if st.depth == 1 && c == '{' {
					st.objStart = st.scanPos
				}
				st.depth++
			case ']', '}':
				st.depth--
				if st.depth == 1 && c == '}' {
					payloads = append(payloads, append([]byte(nil), st.buf[st.objStart:st.scanPos+1]...))
				}
			}
		}
		if final && st.depth != 0 {
			return out, newErr("wire_format", "the JSON array of responses is cut short")
		}
	}
	for _, pl := range payloads {
		var resp obj
		if err := decode(pl, &resp); err != nil {
			return out, newErr("wire_format", "a streamed response is not JSON: "+err.Error())
		}
		st.pending = out
		evs, e := s.onResponse(st, resp)
		out = append(out, evs...)
		st.pending = nil
		if e != nil {
			return out, e
		}
	}
	return out, nil
}

func (st *streamState) closeCall() {}

func (s *server) onResponse(st *streamState, resp obj) ([]obj, *opError) {
	var out []obj
	if eb := asObj(resp["error"]); eb != nil {
		if !st.started {
			// nothing streamed yet: the error alone
		} else {
			out = append(out, st.complete("error", st.aggregate(st.events, st.pending, out))...)
		}
		return out, adapterError(num(eb["code"]), eb, st.requestID)
	}
	if !st.started {
		st.started = true
		model := str(st.ctx["model"])
		if mv := str(resp["modelVersion"]); mv != "" {
			model = canonicalModel(mv)
		}
		if model == "" {
			model = "gemini:unknown"
		}
		out = append(out, st.ev("message_start", obj{"role": "assistant", "model": model}))
	}
	if rid := str(resp["responseId"]); rid != "" {
		st.responseID = rid
	}
	if um := asObj(resp["usageMetadata"]); um != nil {
		st.usage = usageOf(um)
	}
	cands := list(resp["candidates"])
	if len(cands) == 0 {
		if pf := asObj(resp["promptFeedback"]); str(pf["blockReason"]) != "" {
			st.finish = "__blocked__"
		}
		return out, nil
	}
	c := asObj(cands[0])
	for _, pv := range list(asObj(c["content"])["parts"]) {
		part := asObj(pv)
		sig := str(part["thoughtSignature"])
		if sig != "" && !truthy(part["thought"]) && defect != "raw-signatures" {
			// as a parse keeps it: a signature-only thinking block before the part
			st.index++
			st.kind = "thought"
			st.kindSigned = true
			out = append(out, st.ev("thinking_delta", obj{"content_block_index": st.index, "text": "", "signature": sig}))
		}
		switch {
		case part["functionCall"] != nil:
			fc := asObj(part["functionCall"])
			args := fc["args"]
			if args == nil {
				args = obj{}
			}
			pid := str(fc["id"])
			if pid == "" {
				pid = mintCallID(st.responseID, st.callCount, str(fc["name"]), args)
			}
			st.callCount++
			cid := s.mapFor(st.session).canonicalFor(pid)
			st.index++
			st.kind = "call"
			st.hasCalls = true
			a, _ := json.Marshal(args)
			if defect == "lose-stream-args" {
				a = []byte("{}")
				args = obj{}
			}
			out = append(out,
				st.ev("tool_use_start", obj{"content_block_index": st.index, "tool_use_id": cid, "tool_name": str(fc["name"])}),
				st.ev("tool_use_input_delta", obj{"content_block_index": st.index, "tool_use_id": cid, "partial_json": string(a)}),
				st.ev("tool_use_end", obj{"content_block_index": st.index, "tool_use_id": cid, "final_input": args}))
		case truthy(part["thought"]):
			if defect == "drop-thinking" {
				continue
			}
			if st.kind != "thought" || st.kindSigned {
				st.index++
				st.kind = "thought"
			}
			f := obj{"content_block_index": st.index, "text": str(part["text"])}
			if sig != "" {
				f["signature"] = sig
			}
			st.kindSigned = sig != ""
			out = append(out, st.ev("thinking_delta", f))
		case part["text"] != nil:
			if str(part["text"]) == "" {
				// an empty part (Gemini's last chunk often carries one) adds no block
				continue
			}
			if st.kind != "text" {
				st.index++
				st.kind = "text"
			}
			out = append(out, st.ev("text_delta", obj{"content_block_index": st.index, "text": str(part["text"])}))
		}
	}
	if fr := str(c["finishReason"]); fr != "" {
		st.finish = fr
	}
	return out, nil
}

func (st *streamState) stop() string {
	if st.finish == "__blocked__" {
		return "error"
	}
	return stopReason(st.finish, st.hasCalls)
}

func (s *server) finishEvents(st *streamState) []obj {
	return st.complete(st.stop(), st.aggregate(st.events, nil))
}

func (st *streamState) complete(stop string, content []interface{}) []obj {
	var u interface{}
	if st.usage != nil {
		u = st.usage
	}
	return []obj{st.ev("message_complete", obj{"stop_reason": stop, "final_content": content, "usage": u})}
}

// aggregate builds the content the events carry, in block order.
func (st *streamState) aggregate(evs ...[]obj) []interface{} {
	var blocks []obj
	byIndex := map[int]obj{}
	partial := map[int]string{}
	for _, group := range evs {
		for _, e := range group {
			idxN, _ := e["content_block_index"].(int)
			switch str(e["type"]) {
			case "text_delta":
				b := byIndex[idxN]
				if b == nil {
					b = obj{"type": "text", "text": ""}
					byIndex[idxN] = b
					blocks = append(blocks, b)
				}
				b["text"] = str(b["text"]) + str(e["text"])
			case "thinking_delta":
				b := byIndex[idxN]
				if b == nil {
					b = obj{"type": "thinking", "text": ""}
					byIndex[idxN] = b
					blocks = append(blocks, b)
				}
				b["text"] = str(b["text"]) + str(e["text"])
				if sig := str(e["signature"]); sig != "" {
					b["signature"] = sig
				}
			case "tool_use_start":
				b := obj{"type": "tool_use", "id": e["tool_use_id"], "name": e["tool_name"], "input": obj{}}
				byIndex[idxN] = b
				blocks = append(blocks, b)
			case "tool_use_input_delta":
				partial[idxN] += str(e["partial_json"])
			case "tool_use_end":
				if b := byIndex[idxN]; b != nil {
					b["input"] = e["final_input"]
				}
			}
		}
	}
	// an open call (cancelled between start and end): its input as far as it parses
	for idx, pj := range partial {
		if b := byIndex[idx]; b != nil && len(asObj(b["input"])) == 0 {
			var v obj
			if decode([]byte(pj), &v) == nil && v != nil {
				b["input"] = v
			}
		}
	}
	out := []interface{}{}
	for _, b := range blocks {
		out = append(out, b)
	}
	if len(out) == 0 {
		out = append(out, obj{"type": "text", "text": ""})
	}
	return out
}

func (s *server) cancel(p obj) (interface{}, *opError) {
	rid := str(p["request_id"])
	delivered := int(num(p["delivered"]))
	var st *streamState
	for _, x := range s.streams {
		if x.requestID == rid && rid != "" {
			st = x
		}
	}
	if st == nil || st.over {
		return obj{"in_flight": false, "events": []interface{}{}}, nil
	}
	if delivered > len(st.events) {
		delivered = len(st.events)
	}
	kept := st.events[:delivered]
	var out []obj
	started := map[string]obj{}
	fragments := map[string]string{}
	var order []string
	for _, e := range kept {
		switch str(e["type"]) {
		case "tool_use_start":
			started[str(e["tool_use_id"])] = e
			order = append(order, str(e["tool_use_id"]))
		case "tool_use_input_delta":
			fragments[str(e["tool_use_id"])] += str(e["partial_json"])
		case "tool_use_end":
			delete(started, str(e["tool_use_id"]))
		}
	}
	if delivered == 0 {
		model := str(st.ctx["model"])
		if model == "" {
			model = "gemini:unknown"
		}
		out = append(out, st.ev("message_start", obj{"role": "assistant", "model": model}))
	}
	for _, id := range order {
		e, open := started[id]
		if !open {
			continue
		}
		input := obj{}
		var v obj
		if decode([]byte(fragments[id]), &v) == nil && v != nil {
			input = v
		}
		out = append(out, st.ev("tool_use_end", obj{"content_block_index": e["content_block_index"], "tool_use_id": id, "final_input": input}))
	}
	content := st.aggregate(kept, out)
	out = append(out, st.complete("cancelled", content)...)
	st.over = true
	evs := make([]interface{}, len(out))
	for i, e := range out {
		evs[i] = e
	}
	return obj{"in_flight": true, "events": evs}, nil
}
