// The exec protocol (docs/exec-protocol.md, version 1) as an outside author reads it: one
// JSON request per line on standard input, one answer per line on standard output, typed
// errors, log records, ids and the per-session tool id map. Standard library only.
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
	"time"
)

type obj = map[string]any

// failure is a typed protocol error; body is the answer's `error` object.
type failure struct{ body obj }

func (f *failure) Error() string { return fmt.Sprint(f.body["message"]) }

func adapterErr(class, message string, fields obj) *failure {
	body := obj{"kind": "adapter_error", "error_class": class, "message": message}
	for k, v := range fields {
		body[k] = v
	}
	return &failure{body}
}

func wireFormatErr(message string, line int) *failure {
	body := obj{"kind": "wire_format", "message": message}
	if line > 0 {
		body["line"] = line
	}
	return &failure{body}
}

func notImplemented(message string) *failure {
	return &failure{obj{"kind": "not_implemented", "message": message}}
}

// -- log records ----------------------------------------------------------------------------

var records []any

func logWarning(message string, fields obj) {
	records = append(records, obj{"level": "warning", "message": message, "fields": fields})
}

// -- JSON helpers: requests are decoded with UseNumber, so numbers keep their spelling ---------

func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func encode(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func asObj(v any) obj {
	o, _ := v.(map[string]any)
	return o
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asStr(v any) string {
	s, _ := v.(string)
	return s
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i, true
		}
		if f, err := n.Float64(); err == nil {
			return int64(f), true
		}
	case float64:
		return int64(n), true
	case int:
		return int64(n), true
	case int64:
		return n, true
	}
	return 0, false
}

func intOr(v any, fallback int64) int64 {
	if i, ok := asInt(v); ok {
		return i
	}
	return fallback
}

func anyList[T any](items []T) []any {
	out := make([]any, 0, len(items))
	for _, it := range items {
		out = append(out, it)
	}
	return out
}

// -- ids ----------------------------------------------------------------------------------------

const crockford32 = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var ulidLastMs int64
var ulidEntropy [16]byte

// newULID: 48 bits of milliseconds, 80 random bits, monotonic within one millisecond.
func newULID() string {
	ms := time.Now().UnixMilli()
	if ms <= ulidLastMs {
		ms = ulidLastMs
		for i := len(ulidEntropy) - 1; i >= 0; i-- {
			ulidEntropy[i]++
			if ulidEntropy[i] < 32 {
				break
			}
			ulidEntropy[i] = 0
		}
	} else {
		var b [16]byte
		_, _ = rand.Read(b[:])
		for i := range b {
			ulidEntropy[i] = b[i] & 31
		}
		ulidLastMs = ms
	}
	var out [26]byte
	t := ms
	for i := 9; i >= 0; i-- {
		out[i] = crockford32[t&31]
		t >>= 5
	}
	for i := 0; i < 16; i++ {
		out[10+i] = crockford32[ulidEntropy[i]]
	}
	return string(out[:])
}

func randomToolID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}

func timestamp() string {
	return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
}

// -- the per-session tool id map (canonical §6.2) -----------------------------------------------

type toolIDs struct {
	byCanonical map[string]string
	byProvider  map[string]string
	pairs       [][2]string
}

var sessionsIDs = map[string]*toolIDs{}

func idsFor(session string) *toolIDs {
	m, ok := sessionsIDs[session]
	if !ok {
		m = &toolIDs{byCanonical: map[string]string{}, byProvider: map[string]string{}}
		sessionsIDs[session] = m
	}
	return m
}

func (m *toolIDs) bind(canonical, providerID string) error {
	if have, ok := m.byCanonical[canonical]; ok {
		if have == providerID {
			return nil
		}
		return adapterErr("invalid_request", fmt.Sprintf("%s already maps to provider id %s", canonical, have), nil)
	}
	if have, ok := m.byProvider[providerID]; ok {
		return adapterErr("invalid_request", fmt.Sprintf("provider id %s already maps to %s", providerID, have), nil)
	}
	m.byCanonical[canonical] = providerID
	m.byProvider[providerID] = canonical
	m.pairs = append(m.pairs, [2]string{canonical, providerID})
	return nil
}

// canonicalFor looks the provider id up, or creates a canonical tu_<ULID> for it.
func canonicalFor(session, providerID string) string {
	m := idsFor(session)
	if c, ok := m.byProvider[providerID]; ok {
		return c
	}
	c := "tu_" + newULID()
	_ = m.bind(c, providerID)
	return c
}

// providerFor looks the canonical id up, or mints a provider id on first use.
func providerFor(session, canonical string) string {
	m := idsFor(session)
	if p, ok := m.byCanonical[canonical]; ok {
		return p
	}
	p := randomToolID()
	for m.byProvider[p] != "" {
		p = randomToolID()
	}
	_ = m.bind(canonical, p)
	return p
}

func toolIDMap(params obj) (any, error) {
	session := asStr(params["session_id"])
	args := asList(params["args"])
	arg := func(i int) string {
		if i < len(args) {
			return asStr(args[i])
		}
		return ""
	}
	m := idsFor(session)
	switch call := asStr(params["call"]); call {
	case "canonical_for":
		return obj{"value": canonicalFor(session, arg(0))}, nil
	case "provider_for":
		return obj{"value": providerFor(session, arg(0))}, nil
	case "get_provider":
		if p, ok := m.byCanonical[arg(0)]; ok {
			return obj{"value": p}, nil
		}
		return obj{"value": nil}, nil
	case "get_canonical":
		if c, ok := m.byProvider[arg(0)]; ok {
			return obj{"value": c}, nil
		}
		return obj{"value": nil}, nil
	case "bind":
		if err := m.bind(arg(0), arg(1)); err != nil {
			return nil, err
		}
		return obj{"value": nil}, nil
	case "pairs":
		out := []any{}
		for _, p := range m.pairs {
			out = append(out, []any{p[0], p[1]})
		}
		return obj{"value": out}, nil
	default:
		return nil, adapterErr("invalid_request", "unknown tool_id_map call "+call, nil)
	}
}

// -- the request loop ----------------------------------------------------------------------------

var operations = map[string]func(obj) (any, error){
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

func handle(req obj) (answer obj) {
	records = []any{}
	id := req["id"]
	defer func() {
		if r := recover(); r != nil {
			trace := string(debug.Stack())
			fmt.Fprintf(os.Stderr, "ollama-child: panic: %v\n%s", r, trace)
			answer = obj{"id": id, "ok": false, "logs": records, "error": obj{
				"kind": "crash", "message": fmt.Sprint(r), "type": "panic", "traceback": trace}}
		}
	}()
	op := asStr(req["op"])
	fn, ok := operations[op]
	if !ok {
		return obj{"id": id, "ok": false, "logs": records, "error": notImplemented("no operation " + op).body}
	}
	result, err := fn(asObj(req["params"]))
	if err != nil {
		if f, ok := err.(*failure); ok {
			return obj{"id": id, "ok": false, "logs": records, "error": f.body}
		}
		return obj{"id": id, "ok": false, "logs": records, "error": obj{
			"kind": "crash", "message": err.Error(), "type": fmt.Sprintf("%T", err)}}
	}
	return obj{"id": id, "ok": true, "result": result, "logs": records}
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, readErr := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			v, err := decode(line)
			req := asObj(v)
			if err != nil || req == nil {
				fmt.Fprintln(os.Stderr, "ollama-child: a request line that is not a JSON object:", err)
				os.Exit(2)
			}
			fmt.Fprintln(out, encode(handle(req)))
			if err := out.Flush(); err != nil {
				os.Exit(2)
			}
			if asStr(req["op"]) == "shutdown" {
				os.Exit(0)
			}
		}
		if readErr == io.EOF {
			os.Exit(0)
		}
		if readErr != nil {
			fmt.Fprintln(os.Stderr, "ollama-child:", readErr)
			os.Exit(2)
		}
	}
}
