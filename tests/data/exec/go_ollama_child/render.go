// render (canonical to an /api/chat request) and read_request (a request back to canonical).
package main

import (
	"encoding/base64"
	"fmt"
	"strings"
)

type renderer struct {
	criticalKey string
	names       map[string]string // canonical tool id -> the function it called (a tool message's tool_name)
}

func (r *renderer) isCritical(m obj, index int) bool {
	marked := asObj(m["metadata"])[r.criticalKey]
	if b, ok := marked.(bool); ok {
		return b
	}
	for _, v := range asList(marked) {
		if i, ok := asInt(v); ok && int(i) == index {
			return true
		}
	}
	return false
}

// drop is canonical §7.3: one WARN record with its five fields, or a critical_block error.
func (r *renderer) drop(m obj, index int, blockType, reason string) error {
	sid, mid := asStr(m["session_id"]), asStr(m["id"])
	if r.isCritical(m, index) {
		return &failure{obj{"kind": "critical_block", "adapter": adapterName, "session_id": sid, "message_id": mid,
			"block_type": blockType, "reason": reason,
			"message": fmt.Sprintf("%s: %s block %d of message %s is marked critical and cannot be sent: %s", adapterName, blockType, index, mid, reason)}}
	}
	logWarning(fmt.Sprintf("%s: dropped %s block of message %s (session %s): %s", adapterName, blockType, mid, sid, reason),
		obj{"event": "block_dropped", "adapter": adapterName, "session_id": sid, "message_id": mid, "block_type": blockType, "reason": reason})
	return nil
}

func ownEntry(raw any) obj { return asObj(asObj(raw)[adapterName]) }

func blockRaw(m obj, index int) obj {
	return asObj(asObj(ownEntry(asObj(m["metadata"])["provider_raw"])["blocks"])[fmt.Sprint(index)])
}

func issuedHere(m obj) bool {
	meta := asObj(m["metadata"])
	return asStr(meta["provider"]) == providerKey || strings.HasPrefix(asStr(meta["model"]), providerKey+":")
}

func acceptedImage(mediaType string) bool {
	for _, t := range imageTypes {
		if strings.EqualFold(t, mediaType) {
			return true
		}
	}
	return false
}

func (r *renderer) toolMessage(m obj, index int, block obj) (obj, error) {
	texts := []string{}
	for _, iv := range asList(block["content"]) {
		inner := asObj(iv)
		if asStr(inner["type"]) == "text" {
			texts = append(texts, asStr(inner["text"]))
			continue
		}
		if err := r.drop(m, index, asStr(inner["type"]), "a tool message carries text only"); err != nil {
			return nil, err
		}
	}
	content := strings.Join(texts, "\n")
	if block["is_error"] == true {
		content = errorPrefix + content
	}
	cid := asStr(block["tool_use_id"])
	out := obj{"role": "tool", "content": content}
	if name := r.names[cid]; name != "" {
		out["tool_name"] = name
	}
	if ownEntry(asObj(m["metadata"])["provider_raw"])["no_id"] != true {
		out["tool_call_id"] = providerFor(asStr(m["session_id"]), cid)
	}
	return out, nil
}

func (r *renderer) message(m obj) ([]any, error) {
	role := asStr(m["role"])
	sid := asStr(m["session_id"])
	texts, thinking, images, calls, tools := []string{}, []string{}, []any{}, []any{}, []any{}
	for i, bv := range asList(m["content"]) {
		b := asObj(bv)
		kind := asStr(b["type"])
		var err error
		switch kind {
		case "text":
			texts = append(texts, asStr(b["text"]))
		case "image":
			source := asObj(b["source"])
			media := asStr(b["media_type"])
			switch {
			case role != "user":
				err = r.drop(m, i, kind, "Ollama takes images in user messages")
			case asStr(source["kind"]) != "base64":
				err = r.drop(m, i, kind, "Ollama takes images as base64 only, not by "+asStr(source["kind"]))
			case !acceptedImage(media):
				err = r.drop(m, i, kind, "media type "+media+" is not one this adapter sends")
			default:
				images = append(images, source["data"])
			}
		case "thinking":
			if role == "assistant" && issuedHere(m) {
				thinking = append(thinking, asStr(b["text"]))
			} else {
				err = r.drop(m, i, kind, "thinking another provider issued does not go to Ollama")
			}
		case "tool_use":
			if role != "assistant" {
				err = r.drop(m, i, kind, "tool calls ride on assistant messages")
				break
			}
			cid := asStr(b["id"])
			r.names[cid] = asStr(b["name"])
			input := b["input"]
			if asObj(input) == nil {
				input = obj{}
			}
			call := obj{"type": "function", "function": obj{"index": len(calls), "name": b["name"], "arguments": input}}
			if blockRaw(m, i)["no_id"] != true {
				call["id"] = providerFor(sid, cid)
			}
			calls = append(calls, call)
		case "tool_result":
			var t obj
			t, err = r.toolMessage(m, i, b)
			if t != nil {
				tools = append(tools, t)
			}
		case "redacted_thinking":
			err = r.drop(m, i, kind, "Ollama has no redacted thinking")
		default:
			err = r.drop(m, i, kind, "no "+kind+" on Ollama's wire")
		}
		if err != nil {
			return nil, err
		}
	}
	out := tools
	if role == "tool" {
		return out, nil
	}
	wire := obj{"role": role, "content": strings.Join(texts, "\n\n")}
	if role != "system" && role != "user" && role != "assistant" {
		wire["role"] = "user"
	}
	if len(images) > 0 {
		wire["images"] = images
	}
	if len(thinking) > 0 {
		wire["thinking"] = strings.Join(thinking, "")
	}
	if len(calls) > 0 {
		wire["tool_calls"] = calls
	}
	if len(tools) > 0 && len(texts) == 0 && len(images) == 0 {
		return out, nil // a user turn that only answered calls
	}
	return append(out, wire), nil
}

func render(params obj) (any, error) {
	options := asObj(params["options"])
	key := asStr(options["critical_key"])
	if key == "" {
		key = "critical"
	}
	r := &renderer{criticalKey: key, names: map[string]string{}}
	messages := []any{}
	for _, mv := range asList(params["messages"]) {
		wire, err := r.message(asObj(mv))
		if err != nil {
			return nil, err
		}
		messages = append(messages, wire...)
	}
	own := ownEntry(options["provider_raw"])
	body := obj{"model": wireModel(asStr(options["model"])), "messages": messages, "stream": options["stream"] == true}
	tools := []any{}
	for _, tv := range asList(params["tools"]) {
		t := asObj(tv)
		schema := t["input_schema"]
		if schema == nil {
			schema = obj{"type": "object", "properties": obj{}}
		}
		tools = append(tools, obj{"type": "function", "function": obj{"name": t["name"], "description": t["description"], "parameters": schema}})
	}
	tools = append(tools, asList(options["provider_tools"])...)
	if len(tools) > 0 {
		body["tools"] = tools
	}
	modelOptions := obj{}
	for k, v := range asObj(own["options"]) {
		modelOptions[k] = v
	}
	if v := options["max_output_tokens"]; v != nil {
		modelOptions["num_predict"] = v
	}
	if v := options["temperature"]; v != nil {
		modelOptions["temperature"] = v
	}
	if stops := asList(options["stop_sequences"]); len(stops) > 0 {
		if len(stops) == 1 && own["stop_as_string"] == true {
			modelOptions["stop"] = stops[0]
		} else {
			modelOptions["stop"] = stops
		}
	}
	if len(modelOptions) > 0 {
		body["options"] = modelOptions
	}
	if schema := options["output_schema"]; schema != nil {
		body["format"] = schema
	}
	for k, v := range asObj(options["extra"]) {
		body[k] = v
	}
	return obj{"method": "POST", "path": chatPath, "headers": obj{"content-type": "application/json"}, "body": body}, nil
}

// -- read_request ----------------------------------------------------------------------------------

type reading struct {
	session string
	model   string
	waiting []string          // canonical ids of calls no tool message answered yet, oldest first
	names   map[string]string // canonical id -> function name
}

func (rd *reading) newMessage(role string, content []any, meta obj) obj {
	return obj{"id": newULID(), "session_id": rd.session, "role": role, "content": content, "metadata": meta,
		"created_at": timestamp(), "schema_version": 1}
}

func (rd *reading) answered(cid string) {
	for i, w := range rd.waiting {
		if w == cid {
			rd.waiting = append(rd.waiting[:i], rd.waiting[i+1:]...)
			return
		}
	}
}

// sniff names an image's media type from its first bytes (the wire carries none).
func sniff(data string) string {
	head := data
	if len(head) > 24 {
		head = head[:24]
	}
	raw, _ := base64.StdEncoding.DecodeString(head[:len(head)/4*4])
	switch {
	case strings.HasPrefix(string(raw), "\x89PNG"):
		return "image/png"
	case strings.HasPrefix(string(raw), "\xff\xd8\xff"):
		return "image/jpeg"
	case strings.HasPrefix(string(raw), "GIF8"):
		return "image/gif"
	case strings.HasPrefix(string(raw), "RIFF") && len(raw) >= 12 && string(raw[8:12]) == "WEBP":
		return "image/webp"
	}
	return "image/png"
}

func (rd *reading) message(m obj) obj {
	role := asStr(m["role"])
	content := asStr(m["content"])
	switch role {
	case "assistant":
		blocks := []any{}
		flags := obj{}
		if t, ok := m["thinking"].(string); ok && t != "" {
			blocks = append(blocks, obj{"type": "thinking", "text": t, "signature": nil})
		}
		if content != "" {
			blocks = append(blocks, obj{"type": "text", "text": content})
		}
		for _, cv := range asList(m["tool_calls"]) {
			call := asObj(cv)
			fn := asObj(call["function"])
			pid := asStr(call["id"])
			if pid == "" {
				pid = randomToolID() // the request names no id: this reading's own
				flags[fmt.Sprint(len(blocks))] = obj{"no_id": true}
			}
			cid := canonicalFor(rd.session, pid)
			input := asObj(fn["arguments"])
			if s, ok := fn["arguments"].(string); ok {
				if v, err := decode([]byte(s)); err == nil {
					input = asObj(v)
				}
			}
			if input == nil {
				input = obj{}
			}
			rd.waiting = append(rd.waiting, cid)
			rd.names[cid] = asStr(fn["name"])
			blocks = append(blocks, obj{"type": "tool_use", "id": cid, "name": fn["name"], "input": input})
		}
		if len(blocks) == 0 {
			blocks = append(blocks, obj{"type": "text", "text": ""})
		}
		meta := assistantMetadata(rd.model)
		if len(flags) > 0 {
			meta["provider_raw"] = obj{adapterName: obj{"blocks": flags}}
		}
		return rd.newMessage("assistant", blocks, meta)
	case "tool":
		meta := obj{"status": "complete"}
		var cid string
		if pid := asStr(m["tool_call_id"]); pid != "" {
			cid = canonicalFor(rd.session, pid)
		} else {
			// no id: Ollama pairs a result with the oldest unanswered call of its tool_name
			name := asStr(m["tool_name"])
			for _, w := range rd.waiting {
				if name == "" || rd.names[w] == name {
					cid = w
					break
				}
			}
			if cid == "" {
				cid = canonicalFor(rd.session, randomToolID())
			}
			meta["provider_raw"] = obj{adapterName: obj{"no_id": true}}
		}
		rd.answered(cid)
		isError := strings.HasPrefix(content, errorPrefix)
		text := content
		if isError {
			text = strings.TrimPrefix(content, errorPrefix)
		}
		meta["parent_tool_use_id"] = cid
		result := obj{"type": "tool_result", "tool_use_id": cid, "content": []any{obj{"type": "text", "text": text}}, "is_error": isError}
		return rd.newMessage("tool", []any{result}, meta)
	}
	blocks := []any{}
	images := asList(m["images"])
	if content != "" || len(images) == 0 {
		blocks = append(blocks, obj{"type": "text", "text": content})
	}
	for _, iv := range images {
		data := asStr(iv)
		blocks = append(blocks, obj{"type": "image", "source": obj{"kind": "base64", "data": data}, "media_type": sniff(data)})
	}
	if role != "system" {
		role = "user"
	}
	return rd.newMessage(role, blocks, obj{"status": "complete"})
}

func readRequest(params obj) (any, error) {
	body := asObj(params["body"])
	if body == nil {
		return nil, wireFormatErr("an /api/chat request body is a JSON object", 0)
	}
	session := asStr(params["session_id"])
	if session == "" {
		session = newULID()
	}
	model := canonicalModel(asStr(body["model"]))
	rd := &reading{session: session, model: model, names: map[string]string{}}
	messages := []any{}
	for _, mv := range asList(body["messages"]) {
		messages = append(messages, rd.message(asObj(mv)))
	}
	tools, providerTools := []any{}, []any{}
	for _, tv := range asList(body["tools"]) {
		t := asObj(tv)
		fn := asObj(t["function"])
		if fn == nil || (t["type"] != nil && asStr(t["type"]) != "function") {
			providerTools = append(providerTools, tv)
			continue
		}
		schema := fn["parameters"]
		if schema == nil {
			schema = obj{"type": "object", "properties": obj{}}
		}
		tools = append(tools, obj{"name": fn["name"], "description": asStr(fn["description"]), "input_schema": schema, "side_effects": "none"})
	}
	stream := true // the API streams unless the body says "stream": false
	if v, ok := body["stream"].(bool); ok {
		stream = v
	}
	options := obj{"model": model, "stream": stream, "max_output_tokens": nil, "temperature": nil,
		"stop_sequences": []any{}, "output_schema": nil, "provider_tools": providerTools}
	own := obj{}
	rest := obj{}
	for k, v := range asObj(body["options"]) {
		switch k {
		case "num_predict":
			options["max_output_tokens"] = v
		case "temperature":
			options["temperature"] = v
		case "stop":
			if s, ok := v.(string); ok {
				options["stop_sequences"] = []any{s}
				own["stop_as_string"] = true
			} else {
				options["stop_sequences"] = asList(v)
			}
		default:
			rest[k] = v
		}
	}
	if len(rest) > 0 {
		own["options"] = rest
	}
	extra := obj{}
	for k, v := range body {
		switch k {
		case "model", "messages", "tools", "stream", "options":
		case "format":
			if asObj(v) != nil {
				options["output_schema"] = v
			} else {
				extra[k] = v
			}
		default:
			extra[k] = v
		}
	}
	options["extra"] = extra
	options["provider_raw"] = obj{}
	if len(own) > 0 {
		options["provider_raw"] = obj{adapterName: own}
	}
	return obj{"messages": messages, "tools": tools, "options": options}, nil
}
