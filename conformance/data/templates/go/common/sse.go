package main

// An incremental Server-Sent Events decoder (WHATWG HTML, "event stream interpretation").
// Chunks are bytes as a socket delivers them: one may end inside a line or inside a UTF-8
// sequence, so lines are cut from bytes first and decoded whole.

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// SseEvent is one dispatched event.
type SseEvent struct {
	Event string
	Data  string
	Index int // 0-based position among the stream's events
	Line  int // 1-based line of its first field
}

const maxLineBytes = 8 << 20

// SseDecoder decodes a byte stream fed in chunks.
type SseDecoder struct {
	pending   []byte
	lineNo    int
	afterCR   bool
	eventName string
	data      []string
	firstLine int
	count     int
}

// Feed takes the next chunk and returns the events it completed.
func (d *SseDecoder) Feed(chunk []byte) ([]SseEvent, error) {
	var out []SseEvent
	for len(chunk) > 0 {
		if d.afterCR && chunk[0] == '\n' && len(d.pending) == 0 {
			chunk = chunk[1:] // the LF of a CRLF split across chunks
		}
		d.afterCR = false
		i := bytes.IndexAny(chunk, "\r\n")
		if i < 0 {
			d.pending = append(d.pending, chunk...)
			if len(d.pending) > maxLineBytes {
				return out, &WireFormatError{Message: fmt.Sprintf("SSE line longer than %d bytes", maxLineBytes), Event: intp(d.count), Line: intp(d.lineNo + 1)}
			}
			break
		}
		d.pending = append(d.pending, chunk[:i]...)
		ev, err := d.line(d.pending)
		d.pending = d.pending[:0]
		if err != nil {
			return out, err
		}
		if ev != nil {
			out = append(out, *ev)
		}
		if chunk[i] == '\r' {
			if i+1 < len(chunk) && chunk[i+1] == '\n' {
				i++ // CRLF ends one line
			} else if i+1 == len(chunk) {
				d.afterCR = true // its LF may open the next chunk
			}
		}
		chunk = chunk[i+1:]
	}
	return out, nil
}

// Close ends the body: an event with no blank line after it is discarded (WHATWG).
func (d *SseDecoder) Close() []SseEvent { return nil }

func (d *SseDecoder) line(raw []byte) (*SseEvent, error) {
	d.lineNo++
	if !utf8.Valid(raw) {
		return nil, &WireFormatError{Message: "SSE line is not UTF-8", Event: intp(d.count), Line: intp(d.lineNo)}
	}
	text := string(raw)
	if d.lineNo == 1 {
		text = strings.TrimPrefix(text, "\ufeff")
	}
	if text == "" {
		var ev *SseEvent
		if len(d.data) > 0 {
			name := d.eventName
			if name == "" {
				name = "message"
			}
			ev = &SseEvent{name, strings.Join(d.data, "\n"), d.count, d.firstLine}
			d.count++
		}
		d.eventName, d.data, d.firstLine = "", nil, 0
		return ev, nil
	}
	if strings.HasPrefix(text, ":") {
		return nil, nil // a comment
	}
	if d.firstLine == 0 {
		d.firstLine = d.lineNo
	}
	name, value, _ := strings.Cut(text, ":")
	value = strings.TrimPrefix(value, " ")
	switch name {
	case "event":
		d.eventName = value
	case "data":
		d.data = append(d.data, value)
	}
	return nil, nil
}

func intp(n int) *int { return &n }
