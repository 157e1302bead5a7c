package main

// What every wire API's mapping (adapter.go, stream.go) shares: the adapter's name, the HTTP
// request and response it renders and parses, the §7.3 drop record, adapter contract §6.2's
// default class of an HTTP status, and small JSON helpers.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Name is the adapter's name: reports use it, and `turnspec conform` reads cassettes/{{name}}/.
const Name = "{{name}}"

// ownRaw is this adapter's entry of a provider_raw (only the adapter that wrote it reads it).
func ownRaw(providerRaw any) Object {
	raw, _ := providerRaw.(Object)
	mine, _ := raw[Name].(Object)
	if mine == nil {
		return Object{}
	}
	return mine
}

// jsonObject is text as a JSON object ({} when blank), or nil when it is not one.
func jsonObject(text string) Object {
	if strings.TrimSpace(text) == "" {
		return Object{}
	}
	var v any
	if err := decodeJSON([]byte(text), &v); err != nil {
		return nil
	}
	obj, _ := v.(Object)
	return obj
}

var dataURL = regexp.MustCompile(`^data:([^;,]*)((?:;[^;,]*)*);base64,([\s\S]*)$`)

// ParseDataURL is the media type and base64 payload of a base64 `data:` URL (RFC 2397).
func ParseDataURL(url string) (string, string, bool) {
	m := dataURL.FindStringSubmatch(url)
	if m == nil {
		return "", "", false
	}
	return strings.ToLower(m[1]), m[3], true
}

// classForStatus is adapter contract §6.2's default mapping of an HTTP status.
func classForStatus(status int) ErrorClass {
	switch {
	case status == 401 || status == 403:
		return Auth
	case status == 408:
		return Network
	case status == 413:
		return ContextOverflow
	case status == 429:
		return RateLimit
	case status >= 500:
		return ServerErr
	case status >= 400:
		return InvalidRequest
	}
	return Other
}

func errorText(body any, errObj Object) string {
	if msg, ok := errObj["message"].(string); ok {
		return msg
	}
	text, ok := body.(string)
	if !ok {
		b, _ := encodeJSON(body)
		text = string(b)
	}
	if strings.TrimSpace(text) == "" {
		return "(empty body)"
	}
	if r := []rune(text); len(r) > 200 {
		return string(r[:200])
	}
	return text
}

// number is a JSON number (decoded as json.Number, or a count this adapter wrote) as an
// integer; 0 for anything else.
func number(v any) int64 {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
		if f, err := n.Float64(); err == nil {
			return int64(f)
		}
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}

func isObject(v any) bool {
	_, ok := v.(Object)
	return ok
}

func copyObject(o Object) Object {
	out := make(Object, len(o))
	for k, v := range o {
		out[k] = v
	}
	return out
}

func mergeInto(dst Object, src any) {
	if more, ok := src.(Object); ok {
		for k, v := range more {
			dst[k] = v
		}
	}
}

func orEmpty(o Object) Object {
	if o == nil {
		return Object{}
	}
	return o
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func textTokens(text string) int64 {
	return int64(math.Ceil(float64(len([]rune(text))) / 4))
}

var jsonPieces = regexp.MustCompile(`[A-Za-z]+|[0-9]+|\S`)

// jsonTokens is the tokens of a value's compact JSON, as a BPE vocabulary cuts it: a word of
// up to 6 letters is one token (longer ones one per 6), digits one per 3, every other
// character one. JSON is mostly punctuation, which textTokens' 4 characters a token
// undercounts.
func jsonTokens(value any) int64 {
	text, _ := encodeJSON(value)
	n := int64(0)
	for _, piece := range jsonPieces.FindAllString(string(text), -1) {
		switch c := piece[0]; {
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z':
			n += int64((len(piece) + 5) / 6)
		case c >= '0' && c <= '9':
			n += int64((len(piece) + 2) / 3)
		default:
			n++
		}
	}
	return n
}

// WireRequest is the HTTP request the harness would send (never credentials).
type WireRequest struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    Object            `json:"body"`
}

// WireResponse is a provider's answer.
type WireResponse struct {
	Status  int
	Headers map[string]string
	Body    any
}

// ParsedRequest is a recorded request read back to canonical form.
type ParsedRequest struct {
	Messages []Message        `json:"messages"`
	Tools    []ToolDefinition `json:"tools"`
	Options  Options          `json:"options"`
}

// dropBlock is canonical §4.2.2, §7.3: a block the wire cannot carry is dropped with one WARN
// record holding the five fields, or fails the request when its message marks it critical
// (`metadata[critical_key]` true, or a list holding the block's index).
func dropBlock(log *Logs, options Options, m Message, index int, blockType, reason string) error {
	key := options.CriticalKey
	if key == "" {
		key = "critical"
	}
	critical := m.Metadata[key]
	marked := critical == true
	if list, ok := critical.([]any); ok {
		for _, v := range list {
			if n, ok := v.(json.Number); ok && n.String() == strconv.Itoa(index) {
				marked = true
			}
		}
	}
	if marked {
		return &CriticalBlockError{Name, m.SessionID, m.ID, blockType, reason}
	}
	log.Warning(fmt.Sprintf("%s: dropped %s block of message %s (session %s): %s", Name, blockType, m.ID, m.SessionID, reason), Object{
		"event": "block_dropped", "adapter": Name, "session_id": m.SessionID, "message_id": m.ID,
		"block_type": blockType, "reason": reason,
	})
	return nil
}

// retryAfter is a `retry-after` header's hint in seconds (headers' names lower-cased), else
// `retry-after-ms`'s; nil when there is none.
func retryAfter(h map[string]string) *float64 {
	if v, err := strconv.ParseFloat(h["retry-after"], 64); err == nil && v >= 0 {
		return &v
	}
	if v, err := strconv.ParseFloat(h["retry-after-ms"], 64); err == nil && v >= 0 {
		v /= 1000
		return &v
	}
	return nil
}

// lowerKeys is headers with their names lower-cased (RFC 9110 §5.1: case-insensitive).
func lowerKeys(headers map[string]string) map[string]string {
	h := map[string]string{}
	for k, v := range headers {
		h[strings.ToLower(k)] = v
	}
	return h
}

// message is a message read from a recorded request: the wire carries no message ids or
// times, so they are minted, as for a message never seen.
func message(sid, role string, blocks []Block, meta Object) Message {
	return Message{NewULID(), sid, role, blocks, meta, NowTimestamp(), 1}
}

func sortedKeys[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

func nonNegative(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, errors.New("not a number")
	}
	i, err := n.Int64()
	if err != nil || i < 0 {
		return 0, errors.New("not a non-negative integer")
	}
	return i, nil
}
