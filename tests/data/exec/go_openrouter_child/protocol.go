// The exec protocol side of the child (docs/exec-protocol.md): one JSON request line on
// standard input, one answer line on standard output, diagnostics on standard error.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

type obj = map[string]any

// opError is a typed error of an answer with "ok": false (docs/exec-protocol.md, Errors).
type opError struct {
	fields obj
}

func (e *opError) Error() string { return fmt.Sprint(e.fields["message"]) }

func adapterError(class, message string, status any, requestID any, retryable bool, retryAfter any) *opError {
	return &opError{obj{
		"kind": "adapter_error", "error_class": class, "message": message, "provider_status": status,
		"request_id": requestID, "retryable": retryable, "retry_after_seconds": retryAfter,
	}}
}

func wireFormat(message string) *opError {
	return &opError{obj{"kind": "wire_format", "message": message}}
}

func notImplemented(message string) *opError {
	return &opError{obj{"kind": "not_implemented", "message": message}}
}

// call is one request being answered: its log records ride on the answer.
type call struct {
	logs []obj
}

func (c *call) warn(message string, fields obj) {
	c.logs = append(c.logs, obj{"level": "warning", "message": message, "fields": fields})
}

func (c *call) dropped(session, message, blockType, reason string) {
	c.warn(fmt.Sprintf("%s: dropped %s block of message %s (session %s): %s", adapterName, blockType, message, session, reason),
		obj{"event": "block_dropped", "adapter": adapterName, "session_id": session, "message_id": message,
			"block_type": blockType, "reason": reason})
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	for n := 1; ; n++ {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			stop := answer(out, n, line)
			out.Flush()
			if stop {
				os.Exit(0)
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "outside-openrouter: reading stdin:", err)
			os.Exit(1)
		}
	}
}

// answer answers one request line; a line that is no request has no id to answer, so the
// child says which line on standard error, in one line, and exits 2.
func answer(out io.Writer, n int, line []byte) (stop bool) {
	v, err := decodeJSON(line)
	if err != nil {
		fmt.Fprintf(os.Stderr, "outside-openrouter: standard input line %d is not JSON: %v\n", n, err)
		os.Exit(2)
	}
	request, ok := v.(obj)
	if !ok {
		fmt.Fprintf(os.Stderr, "outside-openrouter: standard input line %d is not a JSON object\n", n)
		os.Exit(2)
	}
	req := struct {
		ID     any
		Op     string
		Params obj
	}{request["id"], str(request["op"]), asObj(request["params"])}
	if req.Params == nil {
		req.Params = obj{}
	}
	c := &call{logs: []obj{}}
	result, err := dispatch(c, req.Op, req.Params)
	if err != nil {
		e, ok := err.(*opError)
		if !ok {
			e = &opError{obj{"kind": "crash", "message": err.Error(), "type": "Error"}}
		}
		write(out, obj{"id": req.ID, "ok": false, "error": e.fields, "logs": c.logs})
		return false
	}
	write(out, obj{"id": req.ID, "ok": true, "result": result, "logs": c.logs})
	return req.Op == "shutdown"
}

func write(out io.Writer, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		fmt.Fprintln(os.Stderr, "outside-openrouter: cannot encode answer:", err)
		buf.Reset()
		buf.WriteString(`{"id":null,"ok":false,"error":{"kind":"crash","message":"cannot encode answer","type":"EncodeError"}}` + "\n")
	}
	out.Write(buf.Bytes())
}

func dispatch(c *call, op string, p obj) (result obj, err error) {
	defer func() {
		if r := recover(); r != nil {
			buf := make([]byte, 8192)
			n := runtime.Stack(buf, false)
			fmt.Fprintf(os.Stderr, "outside-openrouter: panic in %s: %v\n%s", op, r, buf[:n])
			result, err = nil, &opError{obj{"kind": "crash", "message": fmt.Sprint(r), "type": "GoPanic", "traceback": string(buf[:n])}}
		}
	}()
	switch op {
	case "hello":
		return hello(p)
	case "render":
		return render(c, p)
	case "parse":
		return parse(c, p)
	case "stream_open":
		return streamOpen(p)
	case "stream_feed":
		return streamFeed(p)
	case "stream_close":
		return streamClose(p)
	case "cancel":
		return cancel(p)
	case "read_request":
		return readRequest(c, p)
	case "estimate":
		return estimate(p)
	case "tool_id_map":
		return toolIDMap(p)
	case "shutdown":
		return obj{}, nil
	}
	return nil, notImplemented("unknown operation " + op)
}

// -- ULIDs (canonical §6.1): 48 bits of milliseconds, 80 random bits, monotonic -------------

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var (
	ulidMu   sync.Mutex
	ulidLast [16]byte
	ulidMs   int64
)

func newULID() string {
	ulidMu.Lock()
	defer ulidMu.Unlock()
	ms := time.Now().UnixMilli()
	var b [16]byte
	if ms <= ulidMs {
		b = ulidLast
		for i := 15; i >= 6; i-- { // increment the random part: still increasing within the ms
			b[i]++
			if b[i] != 0 {
				break
			}
		}
	} else {
		ulidMs = ms
		for i := 0; i < 6; i++ {
			b[i] = byte(ms >> (8 * (5 - i)))
		}
		if _, err := rand.Read(b[6:]); err != nil {
			panic(err)
		}
		b[6] &= 0x7f // leave room to increment
	}
	ulidLast = b
	// 128 bits as 26 base-32 digits (the first one holds 3 bits)
	var sb strings.Builder
	for i := 0; i < 26; i++ {
		bit := 128 - 5*(26-i)
		v := 0
		for j := 0; j < 5; j++ {
			pos := bit + j
			if pos < 0 {
				continue
			}
			if b[pos/8]&(0x80>>(pos%8)) != 0 {
				v |= 1 << (4 - j)
			}
		}
		sb.WriteByte(crockford[v])
	}
	return sb.String()
}

func nowTimestamp() string {
	return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
}

// -- the per-session tool id map (canonical §6.2) --------------------------------------------

type idMap struct {
	toProvider  map[string]string
	toCanonical map[string]string
	order       []string
}

var sessions = map[string]*idMap{}

func sessionMap(session string) *idMap {
	m := sessions[session]
	if m == nil {
		m = &idMap{toProvider: map[string]string{}, toCanonical: map[string]string{}}
		sessions[session] = m
	}
	return m
}

func (m *idMap) canonicalFor(provider string) string {
	if c, ok := m.toCanonical[provider]; ok {
		return c
	}
	c := "tu_" + newULID()
	m.bind(c, provider)
	return c
}

func (m *idMap) providerFor(canonical string) string {
	if p, ok := m.toProvider[canonical]; ok {
		return p
	}
	// a call the provider never saw (another provider's history): mint one from the canonical id
	p := "call_" + strings.TrimPrefix(canonical, "tu_")
	for _, taken := m.toCanonical[p]; taken; _, taken = m.toCanonical[p] {
		p += "x"
	}
	m.bind(canonical, p)
	return p
}

func (m *idMap) bind(canonical, provider string) {
	m.toProvider[canonical] = provider
	m.toCanonical[provider] = canonical
	m.order = append(m.order, canonical)
}

func toolIDMap(p obj) (obj, error) {
	m := sessionMap(str(p["session_id"]))
	args, _ := p["args"].([]any)
	arg := func(i int) string {
		if i < len(args) {
			return str(args[i])
		}
		return ""
	}
	switch str(p["call"]) {
	case "canonical_for":
		return obj{"value": m.canonicalFor(arg(0))}, nil
	case "provider_for":
		return obj{"value": m.providerFor(arg(0))}, nil
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
		c, pr := arg(0), arg(1)
		if old, ok := m.toProvider[c]; ok && old != pr {
			return nil, adapterError("invalid_request", fmt.Sprintf("%s is already bound to %s", c, old), nil, nil, false, nil)
		}
		if old, ok := m.toCanonical[pr]; ok && old != c {
			return nil, adapterError("invalid_request", fmt.Sprintf("%s is already bound to %s", pr, old), nil, nil, false, nil)
		}
		if _, ok := m.toProvider[c]; !ok {
			m.bind(c, pr)
		}
		return obj{"value": nil}, nil
	case "pairs":
		pairs := []any{}
		for _, c := range m.order {
			pairs = append(pairs, []any{c, m.toProvider[c]})
		}
		return obj{"value": pairs}, nil
	}
	return nil, notImplemented("tool_id_map call " + str(p["call"]))
}

// -- small JSON helpers -----------------------------------------------------------------------

func str(v any) string {
	s, _ := v.(string)
	return s
}

func asObj(v any) obj {
	o, _ := v.(obj)
	return o
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
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

func decodeJSON(data []byte) (any, error) {
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

func copyObj(o obj) obj {
	out := obj{}
	for k, v := range o {
		out[k] = v
	}
	return out
}
