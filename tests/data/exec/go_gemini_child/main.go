// A turnspec exec-protocol child (docs/exec-protocol.md) for the Gemini API's
// generateContent / streamGenerateContent, written from the published protocol
// page, `turnspec wire show gemini-generate-content`, the exported schemas and
// Google's API reference. Standard library only.
//
// GOGEM_DEFECT plants one defect (see defects.go) for the suite's own tests.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
)

type obj = map[string]interface{}

type request struct {
	ID     json.Number     `json:"id"`
	Op     string          `json:"op"`
	Params json.RawMessage `json:"params"`
}

// opError is a typed error answer (docs: Errors).
type opError struct {
	fields obj
}

func (e *opError) Error() string { return fmt.Sprint(e.fields["message"]) }

func newErr(kind, msg string) *opError {
	return &opError{fields: obj{"kind": kind, "message": msg}}
}

type server struct {
	out     *bufio.Writer
	logs    []obj
	maps    map[string]*toolMap
	streams map[string]*streamState
	lastMsg map[string]string // session -> last message id minted
}

func decode(raw []byte, v interface{}) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	return d.Decode(v)
}

func main() {
	s := &server{
		out:     bufio.NewWriterSize(os.Stdout, 1<<16),
		maps:    map[string]*toolMap{},
		streams: map[string]*streamState{},
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	lineNo := 0
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			lineNo++
			var req request
			if e := decode(line, &req); e != nil {
				fmt.Fprintf(os.Stderr, "standard input line %d is not a JSON request: %v\n", lineNo, e)
				os.Exit(2)
			}
			if req.Op == "shutdown" {
				s.answer(req.ID, obj{}, nil)
				s.out.Flush()
				os.Exit(0)
			}
			result, opErr := s.dispatch(req)
			s.answer(req.ID, result, opErr)
			s.out.Flush()
		}
		if err == io.EOF {
			os.Exit(0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "reading standard input:", err)
			os.Exit(2)
		}
	}
}

func (s *server) answer(id json.Number, result interface{}, e *opError) {
	ans := obj{"id": id}
	if e != nil {
		ans["ok"] = false
		ans["error"] = e.fields
	} else {
		ans["ok"] = true
		ans["result"] = result
	}
	if len(s.logs) > 0 {
		ans["logs"] = s.logs
	}
	s.logs = nil
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ans); err != nil {
		fmt.Fprintln(os.Stderr, "encoding answer:", err)
		os.Exit(3)
	}
	s.out.Write(buf.Bytes()) // Encode ends the line with '\n'
}

func (s *server) dispatch(req request) (res interface{}, e *opError) {
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 8192)
			n := runtime.Stack(buf, false)
			e = &opError{fields: obj{"kind": "crash", "type": "panic", "message": fmt.Sprint(r), "traceback": string(buf[:n])}}
			res = nil
		}
	}()
	var p obj
	if len(req.Params) > 0 {
		if err := decode(req.Params, &p); err != nil {
			return nil, newErr("crash", "params: "+err.Error())
		}
	}
	if p == nil {
		p = obj{}
	}
	switch req.Op {
	case "hello":
		return s.hello(p)
	case "render":
		return s.render(p)
	case "parse":
		return s.parse(p)
	case "stream_open":
		return s.streamOpen(p)
	case "stream_feed":
		return s.streamFeed(p)
	case "stream_close":
		return s.streamClose(p)
	case "cancel":
		return s.cancel(p)
	case "read_request":
		return s.readRequest(p)
	case "estimate":
		return s.estimate(p)
	case "tool_id_map":
		return s.toolIDMap(p)
	}
	return nil, newErr("not_implemented", "operation "+req.Op+" is not implemented")
}

const adapterName = "go-gemini"
const providerKey = "gemini"

func (s *server) hello(p obj) (interface{}, *opError) {
	versions, _ := p["protocol_versions"].([]interface{})
	ok := false
	for _, v := range versions {
		if n, _ := v.(json.Number); n.String() == "1" {
			ok = true
		}
	}
	if !ok {
		return nil, newErr("crash", "this child speaks exec protocol version 1 only")
	}
	return obj{
		"protocol_version": 1,
		"adapter": obj{
			"name":             adapterName,
			"provider":         providerKey,
			"wire_api":         "gemini-generate-content",
			"language":         "go",
			"language_version": runtime.Version(),
			"capabilities": obj{
				"supports_thinking":                true,
				"supports_images":                  true,
				"supports_tools":                   true,
				"supports_system_prompt":           true,
				"supports_structured_output":       true,
				"supports_streaming":               true,
				"supports_streaming_tool_calls":    true,
				"supports_parallel_tool_calls":     true,
				"supports_prompt_caching":          false,
				"supports_system_messages_in_list": false,
				"max_context_tokens":               1048576,
				"max_output_tokens":                65536,
				"accepted_image_media_types":       []string{"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"},
			},
			"provider_tool_id":    `^[A-Za-z0-9_.:-]+$`,
			"operations":          []string{"render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"},
			"cassette_folders":    []string{"gemini"},
			"tool_errors_in_band": nil,
			"gaps":                []interface{}{},
		},
	}, nil
}

func (s *server) logDrop(sessionID, messageID, blockType, reason string) {
	s.logs = append(s.logs, obj{
		"level":   "warning",
		"message": fmt.Sprintf("%s: dropped %s block of message %s (session %s): %s", adapterName, blockType, messageID, sessionID, reason),
		"fields": obj{"event": "block_dropped", "adapter": adapterName, "session_id": sessionID,
			"message_id": messageID, "block_type": blockType, "reason": reason},
	})
}

func (s *server) logOptionDrop(option, reason string) {
	s.logs = append(s.logs, obj{
		"level":   "warning",
		"message": fmt.Sprintf("%s: dropped option %s: %s", adapterName, option, reason),
		"fields":  obj{"event": "option_dropped", "adapter": adapterName, "option": option, "reason": reason},
	})
}
