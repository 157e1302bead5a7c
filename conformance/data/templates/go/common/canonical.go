package main

// The canonical format's types (canonical-message-format §4, §7; turnspec's
// schemas/canonical/v1/), as this adapter reads and writes them, and the assistant message a
// harness assembles from what the adapter parsed (adapter contract §3.3).

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"
)

// Object is a JSON object as decoded with numbers kept as written (json.Number).
type Object = map[string]any

// Message is a canonical message (canonical §4.1).
type Message struct {
	ID            string  `json:"id"`
	SessionID     string  `json:"session_id"`
	Role          string  `json:"role"`
	Content       []Block `json:"content"`
	Metadata      Object  `json:"metadata"`
	CreatedAt     string  `json:"created_at"`
	SchemaVersion int     `json:"schema_version"`
}

// ImageSource is where an image block's bytes are (canonical §4.2).
type ImageSource struct {
	Kind string `json:"kind"` // base64 | url | file_ref
	Data string `json:"data"`
}

// Block is one content block, a tagged union on Type (canonical §4.2). A block of a type
// the canonical format does not know (canonical §10.3: tolerated) keeps all its members in
// Other.
type Block struct {
	Type      string
	Text      string       // text, thinking
	ID        string       // tool_use
	Name      string       // tool_use
	Input     Object       // tool_use
	ToolUseID string       // tool_result
	Content   []Block      // tool_result
	IsError   bool         // tool_result
	Source    *ImageSource // image
	MediaType string       // image
	Signature *string      // thinking
	Data      string       // redacted_thinking
	Other     Object       // any other type: the whole block
}

type blockJSON struct {
	Type      string       `json:"type"`
	Text      string       `json:"text"`
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	Input     Object       `json:"input"`
	ToolUseID string       `json:"tool_use_id"`
	Content   []Block      `json:"content"`
	IsError   bool         `json:"is_error"`
	Source    *ImageSource `json:"source"`
	MediaType string       `json:"media_type"`
	Signature *string      `json:"signature"`
	Data      string       `json:"data"`
}

// UnmarshalJSON reads a block of any type, numbers kept as written.
func (b *Block) UnmarshalJSON(data []byte) error {
	var v blockJSON
	if err := decodeJSON(data, &v); err != nil {
		return err
	}
	*b = Block{v.Type, v.Text, v.ID, v.Name, v.Input, v.ToolUseID, v.Content, v.IsError, v.Source, v.MediaType, v.Signature, v.Data, nil}
	switch v.Type {
	case "text", "tool_use", "tool_result", "image", "thinking", "redacted_thinking":
	default:
		return decodeJSON(data, &b.Other)
	}
	return nil
}

// MarshalJSON writes the members of the block's type only.
func (b Block) MarshalJSON() ([]byte, error) {
	var v any
	switch b.Type {
	case "text":
		v = Object{"type": "text", "text": b.Text}
	case "tool_use":
		input := b.Input
		if input == nil {
			input = Object{}
		}
		v = Object{"type": "tool_use", "id": b.ID, "name": b.Name, "input": input}
	case "tool_result":
		content := b.Content
		if content == nil {
			content = []Block{}
		}
		out := Object{"type": "tool_result", "tool_use_id": b.ToolUseID, "content": content}
		if b.IsError {
			out["is_error"] = true // false is the default, left out
		}
		v = out
	case "image":
		v = Object{"type": "image", "source": b.Source, "media_type": b.MediaType}
	case "thinking":
		v = Object{"type": "thinking", "text": b.Text, "signature": b.Signature}
	case "redacted_thinking":
		v = Object{"type": "redacted_thinking", "data": b.Data}
	default:
		v = b.Other
	}
	return encodeJSON(v)
}

// TextBlock is a text block.
func TextBlock(text string) Block { return Block{Type: "text", Text: text} }

// ToolDefinition is a canonical tool definition (canonical §4.4).
type ToolDefinition struct {
	Name              string `json:"name"`
	Description       string `json:"description"`
	InputSchema       Object `json:"input_schema"`
	SideEffects       string `json:"side_effects"`
	RequiresWorkspace *bool  `json:"requires_workspace,omitempty"`
}

// Options is what a request asks for beyond messages and tools (the protocol's `options`).
type Options struct {
	Model           string   `json:"model"`
	MaxOutputTokens *int64   `json:"max_output_tokens"`
	Temperature     *float64 `json:"temperature"`
	StopSequences   []string `json:"stop_sequences"`
	Stream          bool     `json:"stream"`
	OutputSchema    Object   `json:"output_schema"`
	Extra           Object   `json:"extra"`
	ProviderTools   []Object `json:"provider_tools"`
	ProviderRaw     Object   `json:"provider_raw"`
	CriticalKey     string   `json:"critical_key"`
}

// RequestContext is what the harness knows about a call that the wire response does not say.
type RequestContext struct {
	SessionID            string  `json:"session_id"`
	MessageID            *string `json:"message_id"`
	RequestID            *string `json:"request_id"`
	Model                *string `json:"model"`
	CreatedAt            *string `json:"created_at"`
	LatencyMS            int64   `json:"latency_ms"`
	PricingVersion       *string `json:"pricing_version"`
	EstimatedInputTokens *int64  `json:"estimated_input_tokens"`
}

// TokenUsage is adapter contract §3.3's TokenUsage.
type TokenUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CachedInputTokens        int64 `json:"cached_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
}

// NowTimestamp is RFC 3339 UTC with six fraction digits, as canonical created_at asks (§4.1).
func NowTimestamp() string {
	return time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
}

// Assemble builds the canonical assistant message a harness stores from what the adapter
// parsed. Routing and cost are the core's (contract §3.3), so, like a harness without a
// routing engine, routing is `default` and the cost an explicit "0" under pricing_version
// "unpriced" (canonical §6.4): the price table stays the harness's, the protocol sends none.
func Assemble(provider string, ctx RequestContext, content []Block, wireModel string, usage *TokenUsage, status string) Message {
	model := provider + ":unknown"
	if wireModel != "" {
		model = provider + ":" + wireModel
	} else if ctx.Model != nil {
		model = *ctx.Model
	}
	var usageJSON any
	if usage != nil {
		usageJSON = Object{
			"input_tokens":                usage.InputTokens,
			"output_tokens":               usage.OutputTokens,
			"cached_input_tokens":         usage.CachedInputTokens,
			"cache_creation_input_tokens": usage.CacheCreationInputTokens,
			"cost_usd":                    "0",
			"pricing_version":             "unpriced",
			"latency_ms":                  ctx.LatencyMS,
		}
	}
	if len(content) == 0 {
		content = []Block{TextBlock("")} // an empty reply is still a message; §5.1.1 needs one block
	}
	id := NewULID()
	if ctx.MessageID != nil {
		id = *ctx.MessageID
	}
	created := NowTimestamp()
	if ctx.CreatedAt != nil {
		created = *ctx.CreatedAt
	}
	return Message{
		ID:        id,
		SessionID: ctx.SessionID,
		Role:      "assistant",
		Content:   content,
		Metadata: Object{
			"model":    model,
			"provider": provider,
			"routing":  Object{"mode": "default", "chosen_model": model, "reason": "no routing engine: the adapter's own assembly"},
			"usage":    usageJSON,
			"status":   status,
		},
		CreatedAt:     created,
		SchemaVersion: 1,
	}
}

// decodeJSON decodes one JSON value, numbers kept as written (json.Number), so a tool's
// input goes back to the wire as it came.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// encodeJSON encodes one JSON value without HTML escaping and without a newline.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
