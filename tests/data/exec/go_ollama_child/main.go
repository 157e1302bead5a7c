// An Ollama chat adapter (POST /api/chat) speaking turnspec's exec protocol, version 1.
// Written by an outside author from docs/exec-protocol.md, schemas/exec/v1/, the adapter
// guide, `turnspec wire show ollama-chat` and Ollama's own API documentation
// (docs/api.md, docs.ollama.com/api/chat, capabilities/{thinking,tool-calling,streaming},
// api/errors, api/usage). The standard library only. turnspec keeps it as test data
// (tests/test_exec_outside_author.py).
//
// The wire: a request body {model, messages, tools, format, options, stream, think,
// keep_alive}; messages {role, content, thinking, images (base64), tool_calls, tool_name,
// tool_call_id}; a reply {model, created_at, message, done, done_reason,
// prompt_eval_count, eval_count}; a stream is NDJSON, one such object a line, usage on the
// last (done: true) line; an error is {"error": "..."} (a line of its own mid-stream).
// Tool calls carry no id on older servers: the adapter mints one, derived from the reply.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
)

const (
	adapterName = "outside-ollama"
	providerKey = "ollama"
	chatPath    = "/api/chat"
)

var imageTypes = []string{"image/png", "image/jpeg"}

func hello(params obj) (any, error) {
	offered := false
	for _, v := range asList(params["protocol_versions"]) {
		if n, ok := asInt(v); ok && n == 1 {
			offered = true
		}
	}
	if !offered {
		return nil, adapterErr("invalid_request", fmt.Sprintf("this child speaks protocol version 1; the host offered %s", encode(params["protocol_versions"])), nil)
	}
	return obj{"protocol_version": 1, "adapter": obj{
		"name":             adapterName,
		"provider":         providerKey,
		"wire_api":         "ollama-chat",
		"language":         "go",
		"language_version": runtime.Version(),
		"capabilities": obj{
			"supports_thinking":                true,
			"supports_images":                  true,
			"supports_tools":                   true,
			"supports_system_prompt":           true,
			"supports_structured_output":       true,
			"supports_streaming":               true,
			"supports_streaming_tool_calls":    false, // a call arrives whole, in one line
			"supports_parallel_tool_calls":     true,
			"supports_prompt_caching":          false,
			"supports_system_messages_in_list": true,
			"max_context_tokens":               131072,
			"max_output_tokens":                32768,
			"accepted_image_media_types":       anyList(imageTypes),
		},
		"provider_tool_id":    "^call_[A-Za-z0-9]+$",
		"operations":          []any{"render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"},
		"cassette_folders":    []any{"ollama"},
		"tool_errors_in_band": "a tool message has no error flag: a failed result's content is sent as `" + errorPrefix + "<text>` and read back so",
		"gaps":                []any{},
	}}, nil
}

const errorPrefix = "Error: "

// -- how a turn ended ----------------------------------------------------------------------------

func stopReason(doneReason string, calls bool) string {
	switch doneReason {
	case "length":
		return "max_tokens"
	case "stop", "":
		if calls {
			return "tool_use"
		}
		return "end_turn"
	default: // load, unload, and anything newer: the turn ended by itself
		if calls {
			return "tool_use"
		}
		return "end_turn"
	}
}

func statusFor(stop string) string {
	if stop == "error" || stop == "cancelled" {
		return stop
	}
	return "complete"
}

// -- usage: prompt_eval_count is the prompt, eval_count the reply; no cache counts -----------------

func usageOf(prompt, eval *int64) obj {
	if prompt == nil && eval == nil {
		return nil
	}
	u := obj{"input_tokens": int64(0), "output_tokens": int64(0), "cached_input_tokens": 0, "cache_creation_input_tokens": 0}
	if prompt != nil {
		u["input_tokens"] = *prompt
	}
	if eval != nil {
		u["output_tokens"] = *eval
	}
	return u
}

// -- models ----------------------------------------------------------------------------------------

func wireModel(model string) string {
	if strings.HasPrefix(model, providerKey+":") && len(model) > len(providerKey)+1 {
		return model[len(providerKey)+1:]
	}
	return model
}

func canonicalModel(model string) string {
	if model == "" {
		return providerKey + ":unknown"
	}
	if strings.HasPrefix(model, providerKey+":") {
		return model
	}
	return providerKey + ":" + model
}

func assistantMetadata(model string) obj {
	return obj{"model": model, "provider": providerKey, "status": "complete",
		"routing": obj{"mode": "default", "chosen_model": model, "reason": "no routing engine"}}
}

// -- errors: {"error": "..."} with the HTTP status (docs.ollama.com/api/errors) ---------------------

func classify(status int64, message string, headers obj, requestID any) *failure {
	class := "other"
	switch {
	case status == 429:
		class = "rate_limit"
	case status == 401 || status == 403:
		class = "auth"
	case status == 408:
		class = "network"
	case status == 413:
		class = "context_overflow"
	case status >= 500:
		class = "server_error"
	case status >= 400:
		class = "invalid_request"
	case status == 0:
		// reported mid-stream (the status line said 200 already): the model failed to run
		class = "server_error"
	}
	fields := obj{"retryable": class == "rate_limit" || class == "server_error" || class == "network", "request_id": requestID}
	if status > 0 {
		fields["provider_status"] = status
	} else {
		fields["provider_status"] = nil
	}
	if class == "rate_limit" {
		fields["retry_after_seconds"] = retryAfter(headers)
	}
	if message == "" {
		message = fmt.Sprintf("HTTP %d", status)
	}
	return adapterErr(class, message, fields)
}

func retryAfter(headers obj) any {
	for k, v := range headers {
		if strings.EqualFold(k, "retry-after") {
			s := asStr(v)
			if l := asList(v); len(l) > 0 {
				s = asStr(l[0])
			}
			var f float64
			if _, err := fmt.Sscanf(strings.TrimSpace(s), "%g", &f); err == nil {
				return f
			}
		}
	}
	return nil
}

func errorText(raw json.RawMessage) string {
	v, err := decode(raw)
	if err != nil {
		return string(raw)
	}
	if s, ok := v.(string); ok {
		return s
	}
	if o := asObj(v); o != nil && asStr(o["message"]) != "" {
		return asStr(o["message"])
	}
	return encode(v)
}

// -- estimate: about four characters a token, plus a few per message ------------------------------

func estimate(params obj) (any, error) {
	chars := 0
	for _, mv := range asList(params["messages"]) {
		m := asObj(mv)
		chars += 16
		for _, bv := range asList(m["content"]) {
			b := asObj(bv)
			switch asStr(b["type"]) {
			case "text", "thinking":
				chars += len(asStr(b["text"]))
			case "image":
				chars += 3000 // a vision model's image embedding is a few hundred tokens whatever its bytes
			case "tool_use":
				chars += len(asStr(b["name"])) + len(encode(b["input"])) + 16
			case "tool_result":
				for _, iv := range asList(b["content"]) {
					chars += len(asStr(asObj(iv)["text"]))
				}
			default:
				chars += len(encode(b))
			}
		}
	}
	for _, t := range asList(params["tools"]) {
		chars += len(encode(t))
	}
	return obj{"tokens": (chars + 3) / 4}, nil
}

// -- minted tool ids: derived from the reply (its model and created_at), the call's position,
// name and arguments, so the same reply parsed again, whole or streamed, finds the same call,
// and a later reply repeating a call gets another id.

func mintedID(model, createdAt string, index int, name string, args []byte) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d\x00%s\x00%s", model, createdAt, index, name, args)))
	return "call_" + hex.EncodeToString(sum[:8])
}
