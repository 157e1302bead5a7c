package main

// The exec protocol's operations (turnspec docs: "The exec protocol"), each answered by the
// adapter: one request in, one answer out. main.go reads and writes the lines.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"runtime"
)

// ProtocolVersions are the exec protocol versions this child speaks.
var ProtocolVersions = []int{1}

// Version is this adapter's version (hello's `library`).
const Version = "0.1.0"

// Request is one request line.
type Request struct {
	ID     json.RawMessage `json:"id"`
	Op     string          `json:"op"`
	Params json.RawMessage `json:"params"`
}

// Server answers one request at a time.
type Server struct {
	adapter *Adapter
	streams map[string]*WireStream
	order   []string // stream ids in the order they were opened
}

// NewServer returns a server with no stream open.
func NewServer() *Server {
	return &Server{adapter: NewAdapter(), streams: map[string]*WireStream{}}
}

// Answer is the answer to one request: its result, or its typed error, and its logs.
func (s *Server) Answer(req Request) (answer Object) {
	log := &Logs{Records: []LogRecord{}}
	id := any(nil)
	if len(req.ID) > 0 {
		id = req.ID
	}
	defer func() {
		if v := recover(); v != nil {
			answer = Object{"id": id, "ok": false, "error": errorJSON(recovered(v)), "logs": log.Records}
		}
	}()
	params := req.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	result, err := s.handle(req.Op, params, log)
	if err != nil {
		return Object{"id": id, "ok": false, "error": errorJSON(err), "logs": log.Records}
	}
	return Object{"id": id, "ok": true, "result": result, "logs": log.Records}
}

func (s *Server) handle(op string, params json.RawMessage, log *Logs) (any, error) {
	switch op {
	case "hello":
		var p struct {
			ProtocolVersions []int `json:"protocol_versions"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		return s.hello(p.ProtocolVersions)
	case "render":
		var p struct {
			Messages []Message        `json:"messages"`
			Tools    []ToolDefinition `json:"tools"`
			Options  Options          `json:"options"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		return s.adapter.Render(p.Messages, p.Tools, p.Options, log)
	case "parse":
		var p struct {
			Response struct {
				Status     *int           `json:"status"`
				Headers    map[string]any `json:"headers"`
				Body       any            `json:"body"`
				BodyBase64 *string        `json:"body_base64"`
			} `json:"response"`
			Context RequestContext `json:"context"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		resp := WireResponse{Status: 200, Headers: map[string]string{}, Body: p.Response.Body}
		if p.Response.Status != nil {
			resp.Status = *p.Response.Status
		}
		for k, v := range p.Response.Headers {
			if list, ok := v.([]any); ok && len(list) > 0 {
				v = list[0]
			}
			resp.Headers[k] = fmt.Sprint(v)
		}
		if p.Response.BodyBase64 != nil { // a body that is not JSON
			raw, err := base64.StdEncoding.DecodeString(*p.Response.BodyBase64)
			if err != nil {
				return nil, err
			}
			var body any
			if decodeJSON(raw, &body) == nil {
				resp.Body = body
			} else {
				resp.Body = string(raw)
			}
		}
		m, err := s.adapter.Parse(resp, p.Context, log)
		if err != nil {
			return nil, err
		}
		return Object{"message": m}, nil
	case "stream_open":
		var p struct {
			StreamID string         `json:"stream_id"`
			Context  RequestContext `json:"context"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		s.streams[p.StreamID] = NewWireStream(s.adapter, p.Context)
		s.order = append(s.order, p.StreamID)
		return Object{"events": []StreamEvent{}}, nil
	case "stream_feed":
		var p struct {
			StreamID string `json:"stream_id"`
			Data     string `json:"data"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		stream, ok := s.streams[p.StreamID]
		if !ok || stream.Over {
			return nil, &AdapterError{Class: InvalidRequest, Message: fmt.Sprintf("no open stream %q", p.StreamID)}
		}
		data, err := base64.StdEncoding.DecodeString(p.Data)
		if err != nil {
			return nil, err
		}
		events, err := stream.Feed(data, log)
		if stream.Over {
			s.forget(p.StreamID) // it failed: the stream is over
		}
		if err != nil {
			return nil, err
		}
		return Object{"events": events}, nil
	case "stream_close":
		var p struct {
			StreamID string `json:"stream_id"`
			Abandon  bool   `json:"abandon"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		stream, ok := s.streams[p.StreamID]
		s.forget(p.StreamID)
		if !ok || stream.Over || p.Abandon {
			return Object{"events": []StreamEvent{}}, nil // over, or the harness stopped reading
		}
		events, err := stream.Close(log)
		if err != nil {
			return nil, err
		}
		return Object{"events": events}, nil
	case "cancel":
		var p struct {
			RequestID string `json:"request_id"`
			Delivered int    `json:"delivered"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		return s.cancel(p.RequestID, p.Delivered), nil
	case "read_request":
		var p struct {
			Body      Object  `json:"body"`
			SessionID *string `json:"session_id"`
			URL       *string `json:"url"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		sid := ""
		if p.SessionID != nil {
			sid = *p.SessionID
		}
		url := ""
		if p.URL != nil {
			url = *p.URL
		}
		return s.adapter.ReadRequest(p.Body, sid, url)
	case "estimate":
		var p struct {
			Messages []Message        `json:"messages"`
			Tools    []ToolDefinition `json:"tools"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		return Object{"tokens": s.adapter.Estimate(p.Messages, p.Tools)}, nil
	case "tool_id_map":
		var p struct {
			SessionID string   `json:"session_id"`
			Call      string   `json:"call"`
			Args      []string `json:"args"`
		}
		if err := decodeJSON(params, &p); err != nil {
			return nil, err
		}
		return s.toolIDMap(p.SessionID, p.Call, p.Args)
	case "shutdown":
		return Object{}, nil
	}
	return nil, &NotImplementedError{fmt.Sprintf("no operation %q", op)}
}

func (s *Server) hello(offered []int) (any, error) {
	chosen := 0
	for _, v := range ProtocolVersions {
		for _, o := range offered {
			if v == o && v > chosen {
				chosen = v
			}
		}
	}
	if chosen == 0 {
		return nil, fmt.Errorf("no common protocol version (host offers %v, %s speaks %v)", offered, Name, ProtocolVersions)
	}
	return Object{
		"protocol_version": chosen,
		"adapter": Object{
			"name":                Name,
			"provider":            Provider,
			"wire_api":            WireAPI,
			"language":            "go",
			"language_version":    runtime.Version(),
			"library":             Object{"name": Name + "-adapter", "version": Version},
			"capabilities":        Capabilities,
			"provider_tool_id":    ProviderToolID,
			"operations":          []string{"render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"},
			"cassette_folders":    []string{Name},
			"tool_errors_in_band": nil,
			"gaps":                []any{}, // what the adapter declares it cannot express: {checks, cases, when, reason}
		},
	}, nil
}

func (s *Server) cancel(requestID string, delivered int) Object {
	for _, id := range s.order {
		stream := s.streams[id]
		if stream == nil || stream.Over || stream.ctx.RequestID == nil || *stream.ctx.RequestID != requestID {
			continue
		}
		s.forget(id)
		if events := stream.CancelAfter(delivered); events != nil {
			return Object{"in_flight": true, "events": events}
		}
		break
	}
	return Object{"in_flight": false, "events": []StreamEvent{}}
}

func (s *Server) forget(streamID string) {
	delete(s.streams, streamID)
	for i, id := range s.order {
		if id == streamID {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

func (s *Server) toolIDMap(sessionID, call string, args []string) (any, error) {
	m := s.adapter.ToolIDMap(sessionID)
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch call {
	case "canonical_for":
		return Object{"value": m.CanonicalFor(arg(0))}, nil
	case "provider_for":
		return Object{"value": m.ProviderFor(arg(0))}, nil
	case "get_provider":
		if p, ok := m.GetProvider(arg(0)); ok {
			return Object{"value": p}, nil
		}
		return Object{"value": nil}, nil
	case "get_canonical":
		if c, ok := m.GetCanonical(arg(0)); ok {
			return Object{"value": c}, nil
		}
		return Object{"value": nil}, nil
	case "bind":
		if err := m.Bind(arg(0), arg(1)); err != nil {
			return nil, &AdapterError{Class: InvalidRequest, Message: err.Error()} // the map stays injective
		}
		return Object{"value": nil}, nil
	case "pairs":
		return Object{"value": m.Pairs()}, nil
	}
	return nil, &NotImplementedError{fmt.Sprintf("no tool_id_map call %q", call)}
}
