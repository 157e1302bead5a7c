// A Gemini generateContent adapter speaking turnspec's exec protocol (version 1), written by
// an outside author from docs/exec-protocol.md and schemas/exec/v1/ only; the standard
// library only. turnspec keeps it as test data (tests/test_exec_outside_author.py).
//
// Wire format: POST /v1beta/models/{model}:generateContent, and
// :streamGenerateContent?alt=sse for a stream (SSE, each event a GenerateContentResponse;
// without alt=sse the stream is one JSON array of them). Contents are `user` and `model`
// turns of parts: text (a thought summary when `thought` is true), inlineData, fileData,
// functionCall, functionResponse; any part may carry a thoughtSignature to send back.
package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"runtime"
	"strings"
)

const (
	name     = "outside-gemini"
	provider = "gemini"
)

var acceptedImages = []string{"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"}

func hello(p obj) (any, error) {
	ok := false
	for _, v := range list(p["protocol_versions"]) {
		if intOf(v) == 1 {
			ok = true
		}
	}
	if !ok {
		return nil, adapterError("invalid_request", "this child speaks protocol version 1 only", nil)
	}
	images := []any{}
	for _, m := range acceptedImages {
		images = append(images, m)
	}
	return obj{"protocol_version": 1, "adapter": obj{
		"name": name, "provider": provider, "wire_api": "gemini-generate-content",
		"language": "go", "language_version": runtime.Version(),
		"capabilities": obj{
			"supports_thinking": true, "supports_images": true, "supports_tools": true,
			"supports_system_prompt": true, "supports_structured_output": false, "supports_streaming": true,
			"supports_streaming_tool_calls": true, "supports_parallel_tool_calls": true,
			"supports_prompt_caching": false, "supports_system_messages_in_list": false,
			"max_context_tokens": 1048576, "max_output_tokens": 65536, "accepted_image_media_types": images,
		},
		"provider_tool_id": "^[A-Za-z0-9_.-]+$",
		"operations":       []any{"render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"},
		"cassette_folders": []any{"gemini"},
		"tool_errors_in_band": "a failed call's functionResponse.response holds only an `error` key " +
			"(Gemini's docs: use the \"error\" key to specify error details)",
		"gaps": []any{},
	}}, nil
}

// -- finish reasons (Candidate.FinishReason, names or proto numbers) ----------------------

var finishNames = map[int]string{
	0: "FINISH_REASON_UNSPECIFIED", 1: "STOP", 2: "MAX_TOKENS", 3: "SAFETY", 4: "RECITATION", 5: "OTHER",
	6: "BLOCKLIST", 7: "PROHIBITED_CONTENT", 8: "SPII", 9: "MALFORMED_FUNCTION_CALL",
}

var stopReasons = map[string]string{
	"STOP":                      "end_turn",
	"MAX_TOKENS":                "max_tokens",
	"SAFETY":                    "error",
	"RECITATION":                "error",
	"BLOCKLIST":                 "error",
	"PROHIBITED_CONTENT":        "error",
	"SPII":                      "error",
	"IMAGE_SAFETY":              "error",
	"LANGUAGE":                  "error",
	"OTHER":                     "error",
	"MALFORMED_FUNCTION_CALL":   "error",
	"UNEXPECTED_TOOL_CALL":      "error",
	"TOO_MANY_TOOL_CALLS":       "error",
	"MISSING_THOUGHT_SIGNATURE": "error",
	"FINISH_REASON_UNSPECIFIED": "end_turn",
}

func finishName(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if n, ok := number(v); ok {
		return finishNames[int(n)]
	}
	return ""
}

func stopReason(finish string, calls bool, blocked bool) string {
	if finish == "" {
		if blocked {
			return "error"
		}
		return "end_turn"
	}
	stop, ok := stopReasons[finish]
	if !ok {
		stop = "end_turn"
	}
	if finish == "STOP" && calls {
		return "tool_use"
	}
	return stop
}

func statusOf(stop string) string {
	if stop == "error" || stop == "cancelled" {
		return stop
	}
	return "complete"
}

// -- model ids -------------------------------------------------------------------------------

func wireModel(model string) string {
	if strings.HasPrefix(model, provider+":") && len(model) > len(provider)+1 {
		return model[len(provider)+1:]
	}
	return model
}

func canonicalModel(model string) string {
	if model == "" {
		return provider + ":unknown"
	}
	return provider + ":" + strings.TrimPrefix(model, "models/")
}

func assistantMeta(model string) obj {
	return obj{"model": model, "provider": provider, "status": "complete",
		"routing": obj{"mode": "default", "chosen_model": model, "reason": "no routing engine"}}
}

// -- usage (UsageMetadata: promptTokenCount includes the cached content) --------------------

func tokenUsage(u obj) obj {
	if u == nil {
		return nil
	}
	cached := intOf(get(u, "cachedContentTokenCount"))
	input := intOf(get(u, "promptTokenCount")) + intOf(get(u, "toolUsePromptTokenCount")) - cached
	if input < 0 {
		input = 0
	}
	output := intOf(get(u, "candidatesTokenCount")) + intOf(get(u, "thoughtsTokenCount"))
	return obj{"input_tokens": input, "output_tokens": output, "cached_input_tokens": cached, "cache_creation_input_tokens": 0}
}

// -- errors (google.rpc.Status in {"error": {code, message, status, details}}) ---------------

var overflow = regexp.MustCompile(`(?i)(exceeds|too (long|large)|maximum).*token|token.*(exceed|limit)`)

func googleError(status int, body obj, headers obj) error {
	e := object(body["error"])
	gstatus := str(e["status"])
	message := strings.TrimSpace(gstatus + ": " + str(e["message"]))
	if e == nil {
		message = fmt.Sprintf("HTTP %d", status)
	}
	if status < 400 {
		status = intOf(e["code"])
	}
	class := "other"
	switch {
	case gstatus == "RESOURCE_EXHAUSTED" || status == 429:
		class = "rate_limit"
	case gstatus == "UNAUTHENTICATED" || gstatus == "PERMISSION_DENIED" || status == 401 || status == 403 || keyInvalid(e):
		class = "auth"
	case gstatus == "INVALID_ARGUMENT" && overflow.MatchString(str(e["message"])), status == 413:
		class = "context_overflow"
	case status == 408:
		class = "network"
	case status >= 500 || gstatus == "INTERNAL" || gstatus == "UNAVAILABLE" || gstatus == "DEADLINE_EXCEEDED":
		class = "server_error"
	case status >= 400:
		class = "invalid_request"
	}
	extra := obj{"provider_status": nil, "retryable": class == "rate_limit" || class == "server_error" || class == "network"}
	if status > 0 {
		extra["provider_status"] = status
	}
	if class == "rate_limit" {
		extra["retry_after_seconds"] = retryDelay(e, headers)
	}
	return adapterError(class, message, extra)
}

func retryDelay(e obj, headers obj) any {
	for _, d := range list(e["details"]) {
		if delay := str(object(d)["retryDelay"]); strings.HasSuffix(delay, "s") {
			var f float64
			if _, err := fmt.Sscanf(strings.TrimSuffix(delay, "s"), "%g", &f); err == nil {
				return f
			}
		}
	}
	for k, v := range headers {
		if strings.EqualFold(k, "retry-after") {
			var f float64
			if _, err := fmt.Sscanf(str(v), "%g", &f); err == nil {
				return f
			}
		}
	}
	return nil
}

// -- estimate ----------------------------------------------------------------------------------

func estimate(p obj) (any, error) {
	b, _ := json.Marshal([]any{p["messages"], p["tools"]})
	return obj{"tokens": (len(b) + 3) / 4}, nil
}

// -- read_request's URL ------------------------------------------------------------------------

var methodRe = regexp.MustCompile(`models/([^:?]+):(generateContent|streamGenerateContent)`)

func urlModel(raw string) (model string, stream bool, sse bool) {
	u, err := url.Parse(raw)
	path := raw
	if err == nil {
		path = u.EscapedPath()
		sse = u.Query().Get("alt") == "sse"
	}
	m := methodRe.FindStringSubmatch(path)
	if m == nil {
		return "", false, false
	}
	model, err = url.PathUnescape(m[1])
	if err != nil {
		model = m[1]
	}
	return model, m[2] == "streamGenerateContent", sse
}

// keyInvalid: a 400 INVALID_ARGUMENT whose ErrorInfo reason is API_KEY_INVALID is the key's fault
func keyInvalid(e obj) bool {
	for _, d := range list(e["details"]) {
		if str(object(d)["reason"]) == "API_KEY_INVALID" {
			return true
		}
	}
	return false
}
