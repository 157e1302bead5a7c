// The translation: canonical messages to OpenRouter's Chat Completions and back, written from
// OpenRouter's docs (reasoning tokens, reasoning_details, streaming, errors) and OpenAI's Chat
// Completions reference.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

const (
	adapterName = "outside-openrouter"
	provider    = "openrouter"
	wirePath    = "/api/v1/chat/completions"
)

func hello(p obj) (obj, error) {
	offered := false
	for _, v := range asList(p["protocol_versions"]) {
		if n, ok := asInt(v); ok && n == 1 {
			offered = true
		}
	}
	if !offered {
		return nil, adapterError("invalid_request", fmt.Sprintf("protocol version 1 not offered (%v)", p["protocol_versions"]), nil, nil, false, nil)
	}
	return obj{"protocol_version": 1, "adapter": obj{
		"name": adapterName, "provider": provider, "wire_api": "openrouter-chat-completions",
		"language": "go", "language_version": runtime.Version(),
		"library": obj{"name": "go standard library", "version": runtime.Version()},
		"capabilities": obj{
			"supports_thinking": true, "supports_images": true, "supports_tools": true,
			"supports_system_prompt": true, "supports_structured_output": true, "supports_streaming": true,
			"supports_streaming_tool_calls": true, "supports_parallel_tool_calls": true,
			"supports_prompt_caching": false, "supports_system_messages_in_list": true,
			"max_context_tokens": 200000, "max_output_tokens": 32000,
			"accepted_image_media_types": []string{"image/png", "image/jpeg", "image/gif", "image/webp"},
		},
		"provider_tool_id":    "^[A-Za-z0-9_.:-]+$",
		"operations":          []string{"render", "parse", "stream", "cancel", "read_request", "estimate", "tool_id_map"},
		"cassette_folders":    []string{"openrouter"},
		"tool_errors_in_band": "no error flag on a tool message: an error result's content starts with `Error: `",
		"gaps":                []any{},
	}}, nil
}

// wireModel strips our own `openrouter:` prefix only (canonical §6.3).
func wireModel(model string) string {
	return strings.TrimPrefix(model, provider+":")
}

func canonicalModel(name string) string {
	if name == "" {
		return provider + ":unknown"
	}
	return provider + ":" + name
}

// -- render ----------------------------------------------------------------------------------

func criticalIndexes(meta obj, key string, n int) map[int]bool {
	out := map[int]bool{}
	switch v := meta[key].(type) {
	case bool:
		if v {
			for i := 0; i < n; i++ {
				out[i] = true
			}
		}
	case []any:
		for _, x := range v {
			if i, ok := asInt(x); ok {
				out[int(i)] = true
			}
		}
	}
	return out
}

type renderer struct {
	c           *call
	session     string
	criticalKey string
	ids         *idMap
}

func (r *renderer) drop(msg obj, i int, critical map[int]bool, blockType, reason string) error {
	mid := str(msg["id"])
	if critical[i] {
		return &opError{obj{"kind": "critical_block", "message": fmt.Sprintf("%s: critical %s block of message %s cannot be carried: %s", adapterName, blockType, mid, reason),
			"adapter": adapterName, "session_id": r.session, "message_id": mid, "block_type": blockType, "reason": reason}}
	}
	r.c.dropped(r.session, mid, blockType, reason)
	return nil
}

func ownRaw(meta obj) obj {
	return asObj(asObj(meta["provider_raw"])[adapterName])
}

func isOwn(meta obj) bool {
	return str(meta["provider"]) == provider || ownRaw(meta) != nil
}

var acceptedImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

func (r *renderer) imagePart(msg obj, i int, block obj, critical map[int]bool) (obj, error) {
	src := asObj(block["source"])
	media := strings.ToLower(str(block["media_type"]))
	if !acceptedImages[media] {
		return nil, r.drop(msg, i, critical, "image", "media type "+media+" is not accepted")
	}
	switch str(src["kind"]) {
	case "base64":
		return obj{"type": "image_url", "image_url": obj{"url": "data:" + media + ";base64," + str(src["data"])}}, nil
	case "url":
		return obj{"type": "image_url", "image_url": obj{"url": str(src["data"])}}, nil
	}
	return nil, r.drop(msg, i, critical, "image", "image source kind "+str(src["kind"])+" cannot travel on this wire")
}

// content renders text and image parts: one text block as a string unless provider_raw asked for parts.
func content(parts []obj, asParts bool) any {
	if !asParts && len(parts) == 1 && parts[0]["type"] == "text" {
		return parts[0]["text"]
	}
	out := []any{}
	for _, p := range parts {
		out = append(out, p)
	}
	return out
}

func (r *renderer) message(msg obj) ([]any, error) {
	role := str(msg["role"])
	meta := asObj(msg["metadata"])
	raw := ownRaw(meta)
	blocks := asList(msg["content"])
	critical := criticalIndexes(meta, r.criticalKey, len(blocks))
	asParts := raw["content_parts"] == true
	switch role {
	case "system", "user":
		parts := []obj{}
		for i, b := range blocks {
			block := asObj(b)
			switch str(block["type"]) {
			case "text":
				parts = append(parts, obj{"type": "text", "text": block["text"]})
			case "image":
				if role == "system" {
					if err := r.drop(msg, i, critical, "image", "a system message holds text only"); err != nil {
						return nil, err
					}
					continue
				}
				part, err := r.imagePart(msg, i, block, critical)
				if err != nil {
					return nil, err
				}
				if part != nil {
					parts = append(parts, part)
				}
			default:
				if err := r.drop(msg, i, critical, str(block["type"]), "no "+str(block["type"])+" block in a "+role+" message on this wire"); err != nil {
					return nil, err
				}
			}
		}
		wireRole := role
		if w := str(raw["role"]); w != "" {
			wireRole = w // developer
		}
		out := obj{"role": wireRole, "content": content(parts, asParts)}
		if len(parts) == 0 {
			out["content"] = ""
		}
		if name := str(raw["name"]); name != "" {
			out["name"] = name
		}
		return []any{out}, nil
	case "assistant":
		own := isOwn(meta)
		details := []any{}
		extras := asObj(raw["details"])
		texts := []obj{}
		calls := []any{}
		for i, b := range blocks {
			block := asObj(b)
			extra := asObj(extras[strconv.Itoa(i)])
			switch str(block["type"]) {
			case "text":
				texts = append(texts, obj{"type": "text", "text": block["text"]})
			case "thinking", "redacted_thinking":
				if !own {
					if err := r.drop(msg, i, critical, str(block["type"]), "reasoning of another provider is not sent back"); err != nil {
						return nil, err
					}
					continue
				}
				details = append(details, reasoningDetail(block, extra))
			case "tool_use":
				args, _ := json.Marshal(block["input"])
				if s, ok := extra["arguments"].(string); ok {
					if v, err := decodeJSON([]byte(s)); err == nil && jsonEqual(v, block["input"]) {
						args = []byte(s) // the recorded spelling of the same arguments
					}
				}
				calls = append(calls, obj{"id": r.ids.providerFor(str(block["id"])), "type": "function",
					"function": obj{"name": block["name"], "arguments": string(args)}})
			default:
				if err := r.drop(msg, i, critical, str(block["type"]), "no "+str(block["type"])+" block in an assistant message on this wire"); err != nil {
					return nil, err
				}
			}
		}
		out := obj{"role": "assistant"}
		if len(texts) > 0 {
			out["content"] = content(texts, asParts)
		} else if v, ok := raw["content"]; ok {
			out["content"] = v // null or "" as it was sent
		} else if len(calls) > 0 {
			out["content"] = nil
		} else {
			out["content"] = ""
		}
		if len(calls) > 0 {
			out["tool_calls"] = calls
		}
		if len(details) > 0 {
			out["reasoning_details"] = details
		}
		if s, ok := raw["reasoning"]; ok && len(details) > 0 {
			out["reasoning"] = s
		}
		return []any{out}, nil
	case "tool":
		out := []any{}
		for i, b := range blocks {
			block := asObj(b)
			if str(block["type"]) != "tool_result" {
				if err := r.drop(msg, i, critical, str(block["type"]), "a tool message carries its tool_result only"); err != nil {
					return nil, err
				}
				continue
			}
			texts := []string{}
			for _, cb := range asList(block["content"]) {
				inner := asObj(cb)
				if str(inner["type"]) == "text" {
					texts = append(texts, str(inner["text"]))
				} else if err := r.drop(msg, i, critical, str(inner["type"]), "a tool message carries text only"); err != nil {
					return nil, err
				}
			}
			text := strings.Join(texts, "")
			if block["is_error"] == true {
				text = "Error: " + text
			}
			out = append(out, obj{"role": "tool", "tool_call_id": r.ids.providerFor(str(block["tool_use_id"])), "content": text})
		}
		return out, nil
	}
	return nil, adapterError("invalid_request", "no role "+role+" on this wire", nil, nil, false, nil)
}

// reasoningDetail is one reasoning_details entry: reasoning.text (or .summary) from a thinking
// block, reasoning.encrypted from a redacted one; the fields canonical cannot hold from extra.
func reasoningDetail(block, extra obj) obj {
	d := obj{}
	for k, v := range extra {
		if k != "arguments" {
			d[k] = v
		}
	}
	if str(block["type"]) == "redacted_thinking" {
		d["type"] = "reasoning.encrypted"
		d["data"] = block["data"]
		return d
	}
	if str(d["type"]) == "reasoning.summary" {
		d["summary"] = block["text"]
		return d
	}
	d["type"] = "reasoning.text"
	d["text"] = block["text"]
	if sig := str(block["signature"]); sig != "" {
		d["signature"] = sig
	}
	return d
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		return false
	}
	u, _ := decodeJSON(x)
	v, _ := decodeJSON(y)
	ux, _ := json.Marshal(u)
	vy, _ := json.Marshal(v)
	return string(ux) == string(vy)
}

func render(c *call, p obj) (obj, error) {
	opts := asObj(p["options"])
	criticalKey := str(opts["critical_key"])
	if criticalKey == "" {
		criticalKey = "critical"
	}
	msgs := asList(p["messages"])
	session := ""
	for _, m := range msgs {
		if s := str(asObj(m)["session_id"]); s != "" {
			session = s
			break
		}
	}
	r := &renderer{c: c, session: session, criticalKey: criticalKey, ids: sessionMap(session)}
	wire := []any{}
	for _, m := range msgs {
		out, err := r.message(asObj(m))
		if err != nil {
			return nil, err
		}
		wire = append(wire, out...)
	}
	reqRaw := asObj(asObj(opts["provider_raw"])[adapterName])
	body := obj{"model": wireModel(str(opts["model"])), "messages": wire}
	tools := []any{}
	toolRaw := asObj(reqRaw["tools"])
	for _, t := range asList(p["tools"]) {
		tool := asObj(t)
		fn := obj{"name": tool["name"], "description": tool["description"], "parameters": tool["input_schema"]}
		for k, v := range asObj(toolRaw[str(tool["name"])]) {
			fn[k] = v // strict, ...
		}
		tools = append(tools, obj{"type": "function", "function": fn})
	}
	tools = append(tools, asList(opts["provider_tools"])...)
	if len(tools) > 0 {
		body["tools"] = tools
	}
	if v := opts["max_output_tokens"]; v != nil {
		field := "max_tokens"
		if f := str(reqRaw["max_tokens_field"]); f != "" {
			field = f
		}
		body[field] = v
	}
	if v := opts["temperature"]; v != nil {
		body["temperature"] = v
	}
	if stops := asList(opts["stop_sequences"]); len(stops) > 0 {
		if len(stops) == 1 && reqRaw["stop_string"] == true {
			body["stop"] = stops[0]
		} else {
			body["stop"] = stops
		}
	}
	if s := opts["output_schema"]; s != nil {
		name := str(reqRaw["schema_name"])
		if name == "" {
			name = "output"
		}
		js := obj{"name": name, "schema": s}
		if v, ok := reqRaw["schema_strict"]; ok {
			js["strict"] = v
		} else {
			js["strict"] = true
		}
		body["response_format"] = obj{"type": "json_schema", "json_schema": js}
	}
	for k, v := range asObj(opts["extra"]) {
		body[k] = v
	}
	stream := opts["stream"] == true
	if stream {
		body["stream"] = true
		so := copyObj(asObj(body["stream_options"]))
		so["include_usage"] = true
		body["stream_options"] = so
	} else if reqRaw["stream_false"] == true {
		body["stream"] = false
	}
	return obj{"method": "POST", "path": wirePath, "headers": obj{"content-type": "application/json"}, "body": body}, nil
}

// -- parse -----------------------------------------------------------------------------------

var stopReasons = map[string]string{
	"stop":           "end_turn",
	"length":         "max_tokens",
	"tool_calls":     "tool_use",
	"function_call":  "tool_use",
	"content_filter": "end_turn",
	"error":          "error",
}

func stopReason(finish string) string {
	if s, ok := stopReasons[finish]; ok {
		return s
	}
	return "end_turn"
}

func statusOf(stop string) string {
	switch stop {
	case "error":
		return "error"
	case "cancelled":
		return "cancelled"
	}
	return "complete"
}

// usageOf reads Chat Completions' usage: prompt_tokens includes the cached ones.
func usageOf(u obj, latency any) obj {
	if u == nil {
		return nil
	}
	prompt, _ := asInt(u["prompt_tokens"])
	completion, _ := asInt(u["completion_tokens"])
	cached, _ := asInt(asObj(u["prompt_tokens_details"])["cached_tokens"])
	input := prompt - cached
	if input < 0 {
		input = 0
	}
	out := obj{"input_tokens": input, "output_tokens": completion, "cached_input_tokens": cached, "cache_creation_input_tokens": 0}
	if latency != nil {
		out["cost_usd"] = "0"
		out["pricing_version"] = "unpriced"
		out["latency_ms"] = latency
	}
	return out
}

func headerValue(headers obj, name string) string {
	for k, v := range headers {
		if strings.EqualFold(k, name) {
			if l := asList(v); l != nil && len(l) > 0 {
				return str(l[0])
			}
			return str(v)
		}
	}
	return ""
}

func classOf(status int64, code any, message string) string {
	if n, ok := asInt(code); ok && n >= 400 {
		status = n
	}
	if s := str(code); s != "" {
		switch s {
		case "context_length_exceeded":
			return "context_overflow"
		case "rate_limit_exceeded", "insufficient_quota":
			return "rate_limit"
		case "invalid_api_key":
			return "auth"
		}
	}
	low := strings.ToLower(message)
	if strings.Contains(low, "context length") || strings.Contains(low, "context window") || strings.Contains(low, "maximum context") {
		return "context_overflow"
	}
	switch {
	case status == 429:
		return "rate_limit"
	case status == 401 || status == 403:
		return "auth"
	case status == 408:
		return "network"
	case status == 413:
		return "context_overflow"
	case status >= 500:
		return "server_error"
	case status >= 400:
		return "invalid_request"
	}
	return "server_error"
}

// errorOf answers the adapter_error a response (or a stream's error event) reports.
func errorOf(status int64, headers obj, body obj, fallbackID any) *opError {
	e := asObj(body["error"])
	message := str(e["message"])
	if message == "" {
		message = fmt.Sprintf("HTTP %d", status)
	}
	class := classOf(status, e["code"], message)
	if status == 0 || status < 400 {
		if n, ok := asInt(e["code"]); ok && n >= 400 {
			status = n
		}
	}
	var requestID any = fallbackID
	if id := headerValue(headers, "x-request-id"); id != "" {
		requestID = id
	} else if id := headerValue(headers, "x-generation-id"); id != "" {
		requestID = id
	} else if id := str(body["id"]); id != "" {
		requestID = id
	}
	var retry any
	if ms, err := strconv.ParseFloat(headerValue(headers, "retry-after-ms"), 64); err == nil {
		retry = ms / 1000
	} else if s, err := strconv.ParseFloat(headerValue(headers, "retry-after"), 64); err == nil {
		retry = s
	}
	var st any
	if status > 0 {
		st = status
	}
	retryable := class == "rate_limit" || class == "server_error" || class == "network"
	return adapterError(class, message, st, requestID, retryable, retry)
}

type parsedMessage struct {
	content []any
	details obj
}

// assistantContent reads a message (or a stream's aggregate) into canonical blocks: the
// reasoning first (reasoning_details, else the plain `reasoning` text), then the text, then calls.
func assistantContent(m obj, ids *idMap) parsedMessage {
	out := parsedMessage{content: []any{}, details: obj{}}
	details := asList(m["reasoning_details"])
	for _, d := range details {
		detail := asObj(d)
		extra := obj{}
		for k, v := range detail {
			switch k {
			case "text", "signature", "data":
			case "summary":
				if detail["type"] != "reasoning.summary" {
					extra[k] = v
				}
			default:
				extra[k] = v
			}
		}
		idx := strconv.Itoa(len(out.content))
		switch str(detail["type"]) {
		case "reasoning.encrypted":
			out.content = append(out.content, obj{"type": "redacted_thinking", "data": str(detail["data"])})
		case "reasoning.summary":
			out.content = append(out.content, obj{"type": "thinking", "text": str(detail["summary"])})
		default:
			block := obj{"type": "thinking", "text": str(detail["text"])}
			if sig := str(detail["signature"]); sig != "" {
				block["signature"] = sig
			}
			out.content = append(out.content, block)
		}
		out.details[idx] = extra
	}
	if len(details) == 0 {
		if s := str(m["reasoning"]); s != "" {
			out.content = append(out.content, obj{"type": "thinking", "text": s})
		}
	}
	switch c := m["content"].(type) {
	case string:
		if c != "" {
			out.content = append(out.content, obj{"type": "text", "text": c})
		}
	case []any:
		for _, part := range c {
			if t := str(asObj(part)["text"]); t != "" {
				out.content = append(out.content, obj{"type": "text", "text": t})
			}
		}
	}
	if r := str(m["refusal"]); r != "" {
		out.content = append(out.content, obj{"type": "text", "text": r})
	}
	for _, tc := range asList(m["tool_calls"]) {
		call := asObj(tc)
		fn := asObj(call["function"])
		args := str(fn["arguments"])
		input := obj{}
		if v, err := decodeJSON([]byte(args)); err == nil {
			if o, ok := v.(obj); ok {
				input = o
			}
		}
		idx := strconv.Itoa(len(out.content))
		out.content = append(out.content, obj{"type": "tool_use", "id": ids.canonicalFor(str(call["id"])), "name": str(fn["name"]), "input": input})
		out.details[idx] = obj{"arguments": args}
	}
	if len(out.content) == 0 {
		out.content = append(out.content, obj{"type": "text", "text": ""})
	}
	return out
}

func parse(c *call, p obj) (obj, error) {
	resp := asObj(p["response"])
	ctx := asObj(p["context"])
	status, _ := asInt(resp["status"])
	headers := asObj(resp["headers"])
	body := asObj(resp["body"])
	if body == nil {
		if resp["body_base64"] != nil {
			if status >= 400 {
				return nil, errorOf(status, headers, obj{}, ctx["request_id"])
			}
			return nil, wireFormat("the response body is not JSON")
		}
		return nil, wireFormat("the response has no body")
	}
	if status >= 400 || body["error"] != nil {
		return nil, errorOf(status, headers, body, ctx["request_id"])
	}
	choices := asList(body["choices"])
	if len(choices) == 0 {
		return nil, wireFormat("the response has no choices")
	}
	choice := asObj(choices[0])
	session := str(ctx["session_id"])
	pm := assistantContent(asObj(choice["message"]), sessionMap(session))
	finish := str(choice["finish_reason"])
	stop := stopReason(finish)
	model := ""
	if m := str(body["model"]); m != "" {
		model = canonicalModel(m)
	} else if m := str(ctx["model"]); m != "" {
		model = m
	} else {
		model = canonicalModel("")
	}
	latency := ctx["latency_ms"]
	if latency == nil {
		latency = 0
	}
	var usage any
	if u := usageOf(asObj(body["usage"]), latency); u != nil {
		usage = u
	}
	raw := obj{"finish_reason": finish, "details": pm.details}
	if id := str(body["id"]); id != "" {
		raw["id"] = id
	}
	if pr := str(body["provider"]); pr != "" {
		raw["upstream_provider"] = pr
	}
	id := str(ctx["message_id"])
	if id == "" {
		id = newULID()
	}
	created := str(ctx["created_at"])
	if created == "" {
		created = nowTimestamp()
	}
	msg := obj{
		"id": id, "session_id": session, "role": "assistant", "content": pm.content,
		"metadata": obj{
			"model": model, "provider": provider,
			"routing":      obj{"mode": "default", "chosen_model": model, "reason": "no routing engine"},
			"usage":        usage,
			"status":       statusOf(stop),
			"provider_raw": obj{adapterName: raw},
		},
		"created_at": created, "schema_version": 1,
	}
	return obj{"message": msg}, nil
}

// -- read_request ----------------------------------------------------------------------------

func readRequest(c *call, p obj) (obj, error) {
	body := asObj(p["body"])
	if body == nil {
		return nil, wireFormat("the request body is not a JSON object")
	}
	session := str(p["session_id"])
	ids := sessionMap(session)
	messages := []any{}
	reqRaw := obj{}
	model := canonicalModel(str(body["model"]))
	for n, m := range asList(body["messages"]) {
		wm := asObj(m)
		role := str(wm["role"])
		raw := obj{}
		meta := obj{}
		var blocks []any
		switch role {
		case "system", "developer", "user":
			if role == "developer" {
				raw["role"] = "developer"
				role = "system"
			}
			if name := str(wm["name"]); name != "" {
				raw["name"] = name
			}
			blocks = []any{}
			switch ct := wm["content"].(type) {
			case string:
				blocks = append(blocks, obj{"type": "text", "text": ct})
			case []any:
				raw["content_parts"] = true
				for _, part := range ct {
					pt := asObj(part)
					switch str(pt["type"]) {
					case "text":
						blocks = append(blocks, obj{"type": "text", "text": str(pt["text"])})
					case "image_url":
						blocks = append(blocks, imageBlock(str(asObj(pt["image_url"])["url"])))
					default:
						return nil, wireFormat(fmt.Sprintf("messages[%d]: content part of type %q is not read", n, str(pt["type"])))
					}
				}
			}
		case "assistant":
			pm := assistantContent(wm, ids)
			blocks = pm.content
			if len(pm.details) > 0 {
				raw["details"] = pm.details
			}
			if _, ok := wm["content"]; !ok || wm["content"] == nil || wm["content"] == "" {
				raw["content"] = wm["content"]
				if len(blocks) == 1 && str(asObj(blocks[0])["type"]) == "text" && str(asObj(blocks[0])["text"]) == "" && wm["content"] == nil {
					// nothing but an empty reply: keep the block canonical wants
				}
			}
			if _, ok := wm["content"].([]any); ok {
				raw["content_parts"] = true
			}
			if s, ok := wm["reasoning"]; ok && len(asList(wm["reasoning_details"])) > 0 {
				raw["reasoning"] = s
			}
			meta["model"] = model
			meta["provider"] = provider
			meta["routing"] = obj{"mode": "default", "chosen_model": model, "reason": "no routing engine"}
			meta["usage"] = obj{"input_tokens": 0, "output_tokens": 0, "cached_input_tokens": 0, "cache_creation_input_tokens": 0,
				"cost_usd": "0", "pricing_version": "unpriced", "latency_ms": 0}
			meta["status"] = "complete"
		case "tool":
			text := ""
			switch ct := wm["content"].(type) {
			case string:
				text = ct
			case []any:
				for _, part := range ct {
					text += str(asObj(part)["text"])
				}
			}
			isError := strings.HasPrefix(text, "Error: ")
			if isError {
				text = strings.TrimPrefix(text, "Error: ")
			}
			tid := ids.canonicalFor(str(wm["tool_call_id"]))
			blocks = []any{obj{"type": "tool_result", "tool_use_id": tid, "content": []any{obj{"type": "text", "text": text}}, "is_error": isError}}
			meta["parent_tool_use_id"] = tid
		default:
			return nil, wireFormat(fmt.Sprintf("messages[%d]: role %q is not read", n, role))
		}
		if len(raw) > 0 {
			meta["provider_raw"] = obj{adapterName: raw}
		}
		messages = append(messages, obj{"id": newULID(), "session_id": session, "role": role, "content": blocks,
			"metadata": meta, "created_at": nowTimestamp(), "schema_version": 1})
	}
	tools := []any{}
	providerTools := []any{}
	toolRaw := obj{}
	for _, t := range asList(body["tools"]) {
		tool := asObj(t)
		fn := asObj(tool["function"])
		if str(tool["type"]) != "function" || fn == nil {
			providerTools = append(providerTools, tool)
			continue
		}
		params := fn["parameters"]
		if params == nil {
			params = obj{"type": "object", "properties": obj{}}
		}
		tools = append(tools, obj{"name": fn["name"], "description": str(fn["description"]), "input_schema": params, "side_effects": "none"})
		extra := obj{}
		for k, v := range fn {
			if k != "name" && k != "description" && k != "parameters" {
				extra[k] = v
			}
		}
		if len(extra) > 0 {
			toolRaw[str(fn["name"])] = extra
		}
	}
	if len(toolRaw) > 0 {
		reqRaw["tools"] = toolRaw
	}
	opts := obj{"model": model, "max_output_tokens": nil, "temperature": nil, "stop_sequences": []any{},
		"stream": body["stream"] == true, "output_schema": nil, "extra": obj{}, "provider_tools": providerTools,
		"provider_raw": obj{}, "critical_key": "critical"}
	extra := obj{}
	for k, v := range body {
		switch k {
		case "model", "messages", "tools":
		case "max_tokens", "max_completion_tokens":
			opts["max_output_tokens"] = v
			if k != "max_tokens" {
				reqRaw["max_tokens_field"] = k
			}
		case "temperature":
			opts["temperature"] = v
		case "stop":
			if s, ok := v.(string); ok {
				opts["stop_sequences"] = []any{s}
				reqRaw["stop_string"] = true
			} else {
				opts["stop_sequences"] = asList(v)
			}
		case "stream":
			if v == false {
				reqRaw["stream_false"] = true
			} else if v != true {
				extra[k] = v
			}
		case "stream_options":
			so := copyObj(asObj(v))
			if body["stream"] == true && so["include_usage"] == true {
				delete(so, "include_usage")
			}
			if len(so) > 0 || body["stream"] != true {
				extra[k] = v
			}
		case "response_format":
			rf := asObj(v)
			js := asObj(rf["json_schema"])
			if str(rf["type"]) == "json_schema" && js["schema"] != nil {
				opts["output_schema"] = js["schema"]
				reqRaw["schema_name"] = js["name"]
				if s, ok := js["strict"]; ok {
					reqRaw["schema_strict"] = s
				} else {
					reqRaw["schema_strict"] = nil
				}
			} else {
				extra[k] = v
			}
		default:
			extra[k] = v
		}
	}
	opts["extra"] = extra
	if len(reqRaw) > 0 {
		opts["provider_raw"] = obj{adapterName: reqRaw}
	}
	return obj{"messages": messages, "tools": tools, "options": opts}, nil
}

func imageBlock(url string) obj {
	if strings.HasPrefix(url, "data:") {
		head, data, _ := strings.Cut(strings.TrimPrefix(url, "data:"), ",")
		media := strings.TrimSuffix(head, ";base64")
		return obj{"type": "image", "source": obj{"kind": "base64", "data": data}, "media_type": media}
	}
	media := "image/png"
	low := strings.ToLower(url)
	switch {
	case strings.HasSuffix(low, ".jpg"), strings.HasSuffix(low, ".jpeg"):
		media = "image/jpeg"
	case strings.HasSuffix(low, ".gif"):
		media = "image/gif"
	case strings.HasSuffix(low, ".webp"):
		media = "image/webp"
	}
	return obj{"type": "image", "source": obj{"kind": "url", "data": url}, "media_type": media}
}

// -- estimate ----------------------------------------------------------------------------------

// estimate counts about four characters a token, as OpenAI's guidance has it, plus a few tokens
// a message for its role and framing.
func estimate(p obj) (obj, error) {
	chars := 0
	msgs := asList(p["messages"])
	for _, m := range msgs {
		for _, b := range asList(asObj(m)["content"]) {
			block := asObj(b)
			switch str(block["type"]) {
			case "text", "thinking":
				chars += len(str(block["text"]))
			case "tool_use":
				s, _ := json.Marshal(block["input"])
				chars += len(s) + len(str(block["name"]))
			case "tool_result":
				for _, cb := range asList(block["content"]) {
					chars += len(str(asObj(cb)["text"]))
				}
			case "image":
				chars += 85 * 4
			}
		}
	}
	for _, t := range asList(p["tools"]) {
		s, _ := json.Marshal(t)
		chars += len(s)
	}
	tokens := chars/4 + 4*len(msgs) + 3
	return obj{"tokens": tokens}, nil
}

func sortedKeys(m map[int]*streamBlock) []int {
	keys := []int{}
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

func debugf(format string, args ...any) {
	if os.Getenv("OUTSIDE_OPENROUTER_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, format+"\n", args...)
	}
}
