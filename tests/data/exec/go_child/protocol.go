// The exec protocol side (docs/exec-protocol.md, version 1): one JSON request a line on
// standard input, one answer a line on standard output, typed errors, log records, the
// per-session tool id map and ids. Written by an outside author from the published docs.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

type obj = map[string]any

// protoError is a typed error of the protocol (Errors): its JSON is the answer's `error`.
type protoError struct{ body obj }

func (e *protoError) Error() string { return fmt.Sprint(e.body["message"]) }

func adapterError(class, message string, extra obj) *protoError {
	body := obj{"kind": "adapter_error", "error_class": class, "message": message}
	for k, v := range extra {
		body[k] = v
	}
	return &protoError{body}
}

func wireFormat(message string) *protoError {
	return &protoError{obj{"kind": "wire_format", "message": message}}
}

var logs []obj

func warn(message string, fields obj) {
	logs = append(logs, obj{"level": "warning", "message": message, "fields": fields})
}

// -- ids -------------------------------------------------------------------------------

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var ulidMu sync.Mutex
var lastMs int64
var lastRand [16]byte

func ulid() string {
	ulidMu.Lock()
	defer ulidMu.Unlock()
	ms := time.Now().UnixMilli()
	if ms == lastMs {
		for i := 15; i >= 0; i-- {
			if lastRand[i] < 31 {
				lastRand[i]++
				break
			}
			lastRand[i] = 0
		}
	} else {
		var b [16]byte
		_, _ = rand.Read(b[:])
		for i := range b {
			lastRand[i] = b[i] % 32
		}
		lastMs = ms
	}
	out := make([]byte, 26)
	t := ms
	for i := 9; i >= 0; i-- {
		out[i] = crockford[t%32]
		t /= 32
	}
	for i := 0; i < 16; i++ {
		out[10+i] = crockford[lastRand[i]]
	}
	return string(out)
}

func mintProviderID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

func now() string {
	return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
}

// -- the tool id map (spec §6.2) ---------------------------------------------------------

type idMap struct {
	toProvider  map[string]string
	toCanonical map[string]string
	order       [][2]string
}

var sessions = map[string]*idMap{}

func sessionMap(sid string) *idMap {
	m := sessions[sid]
	if m == nil {
		m = &idMap{map[string]string{}, map[string]string{}, nil}
		sessions[sid] = m
	}
	return m
}

func (m *idMap) bind(canonical, provider string) error {
	if p, ok := m.toProvider[canonical]; ok && p != provider {
		return adapterError("invalid_request", fmt.Sprintf("%s is bound to %s already", canonical, p), nil)
	}
	if c, ok := m.toCanonical[provider]; ok && c != canonical {
		return adapterError("invalid_request", fmt.Sprintf("%s is bound to %s already", provider, c), nil)
	}
	if _, ok := m.toProvider[canonical]; !ok {
		m.order = append(m.order, [2]string{canonical, provider})
	}
	m.toProvider[canonical] = provider
	m.toCanonical[provider] = canonical
	return nil
}

func canonicalFor(sid, provider string) string {
	m := sessionMap(sid)
	if c, ok := m.toCanonical[provider]; ok {
		return c
	}
	c := "tu_" + ulid()
	_ = m.bind(c, provider)
	return c
}

func providerFor(sid, canonical string) string {
	m := sessionMap(sid)
	if p, ok := m.toProvider[canonical]; ok {
		return p
	}
	p := mintProviderID()
	_ = m.bind(canonical, p)
	return p
}

func toolIDMap(p obj) (any, error) {
	sid := str(p["session_id"])
	m := sessionMap(sid)
	args := []string{}
	for _, a := range list(p["args"]) {
		args = append(args, str(a))
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch str(p["call"]) {
	case "canonical_for":
		return obj{"value": canonicalFor(sid, arg(0))}, nil
	case "provider_for":
		return obj{"value": providerFor(sid, arg(0))}, nil
	case "get_provider":
		if v, ok := m.toProvider[arg(0)]; ok {
			return obj{"value": v}, nil
		}
		return obj{"value": nil}, nil
	case "get_canonical":
		if v, ok := m.toCanonical[arg(0)]; ok {
			return obj{"value": v}, nil
		}
		return obj{"value": nil}, nil
	case "bind":
		if err := m.bind(arg(0), arg(1)); err != nil {
			return nil, err
		}
		return obj{"value": nil}, nil
	case "pairs":
		pairs := []any{}
		for _, pr := range m.order {
			pairs = append(pairs, []any{pr[0], pr[1]})
		}
		return obj{"value": pairs}, nil
	}
	return nil, adapterError("invalid_request", "unknown tool_id_map call", nil)
}

// -- JSON helpers --------------------------------------------------------------------------

func str(v any) string {
	s, _ := v.(string)
	return s
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

func object(v any) obj {
	o, _ := v.(map[string]any)
	return o
}

// field reads a proto3 JSON field by its lowerCamel name or its original snake_case one
// (the JSON mapping accepts both).
func field(o obj, camel string) (any, bool) {
	if v, ok := o[camel]; ok {
		return v, true
	}
	var b strings.Builder
	for _, r := range camel {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			b.WriteRune(r + 32)
		} else {
			b.WriteRune(r)
		}
	}
	v, ok := o[b.String()]
	return v, ok
}

func get(o obj, camel string) any {
	v, _ := field(o, camel)
	return v
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		// the events a stream keeps for its cancel replay carry Go ints
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func intOf(v any) int {
	f, _ := number(v)
	return int(f)
}

func marshal(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimRight(buf.String(), "\n")
}

// -- the loop --------------------------------------------------------------------------------

var handlers = map[string]func(obj) (any, error){
	"hello":        hello,
	"render":       render,
	"parse":        parse,
	"stream_open":  streamOpen,
	"stream_feed":  streamFeed,
	"stream_close": streamClose,
	"cancel":       cancel,
	"read_request": readRequest,
	"estimate":     estimate,
	"tool_id_map":  toolIDMap,
	"shutdown":     func(obj) (any, error) { return obj{}, nil },
}

func answer(req obj) (out obj) {
	logs = []obj{}
	id := req["id"]
	defer func() {
		if r := recover(); r != nil {
			trace := string(debug.Stack())
			fmt.Fprintln(os.Stderr, r, trace)
			out = obj{"id": id, "ok": false, "logs": logs, "error": obj{
				"kind": "crash", "message": fmt.Sprint(r), "type": fmt.Sprintf("%T", r), "traceback": trace,
			}}
		}
	}()
	h := handlers[str(req["op"])]
	if h == nil {
		return obj{"id": id, "ok": false, "logs": logs, "error": obj{"kind": "not_implemented", "message": "no operation " + str(req["op"])}}
	}
	result, err := h(object(req["params"]))
	if err != nil {
		if pe, ok := err.(*protoError); ok {
			return obj{"id": id, "ok": false, "logs": logs, "error": pe.body}
		}
		return obj{"id": id, "ok": false, "logs": logs, "error": obj{"kind": "crash", "message": err.Error(), "type": fmt.Sprintf("%T", err)}}
	}
	return obj{"id": id, "ok": true, "result": result, "logs": logs}
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req obj
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				fmt.Fprintln(os.Stderr, "gemini-child: a request line that is not JSON:", jerr)
				os.Exit(2)
			}
			fmt.Fprintln(out, marshal(answer(req)))
			out.Flush()
			if str(req["op"]) == "shutdown" {
				os.Exit(0)
			}
		}
		if err == io.EOF {
			os.Exit(0)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "gemini-child:", err)
			os.Exit(2)
		}
	}
}
