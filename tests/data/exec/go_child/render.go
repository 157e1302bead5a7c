// render (canonical to wire) and read_request (a recorded request back to canonical).
package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

type renderer struct {
	criticalKey string
	names       map[string]string // canonical tool id -> function name, for functionResponse
	noID        map[string]bool   // canonical tool ids whose call carried no id on the wire
	pendingSig  string            // a signature-only thinking block's, for the next part
}

func (r *renderer) critical(m obj, index int) bool {
	marked := object(m["metadata"])[r.criticalKey]
	if b, ok := marked.(bool); ok {
		return b
	}
	for _, v := range list(marked) {
		if intOf(v) == index {
			return true
		}
	}
	return false
}

// drop is canonical §7.3's drop: one WARN record with the five fields, or a critical_block error.
func (r *renderer) drop(m obj, index int, block obj, reason string) error {
	btype := str(block["type"])
	if r.critical(m, index) {
		return &protoError{obj{"kind": "critical_block", "message": fmt.Sprintf("%s: critical %s block cannot be sent: %s", name, btype, reason),
			"adapter": name, "session_id": str(m["session_id"]), "message_id": str(m["id"]), "block_type": btype, "reason": reason}}
	}
	warn(fmt.Sprintf("%s: dropped %s block of message %s (session %s): %s", name, btype, str(m["id"]), str(m["session_id"]), reason),
		obj{"event": "block_dropped", "adapter": name, "session_id": str(m["session_id"]), "message_id": str(m["id"]),
			"block_type": btype, "reason": reason})
	return nil
}

func ownRaw(meta obj) obj {
	return object(object(meta["provider_raw"])[name])
}

func rawBlock(m obj, index int) obj {
	return object(object(ownRaw(object(m["metadata"]))["blocks"])[fmt.Sprint(index)])
}

func fromThisProvider(m obj) bool {
	meta := object(m["metadata"])
	return str(meta["provider"]) == provider || strings.HasPrefix(str(meta["model"]), provider+":")
}

func accepted(media string) bool {
	for _, m := range acceptedImages {
		if strings.EqualFold(m, media) {
			return true
		}
	}
	return false
}

func (r *renderer) image(m obj, index int, block obj) (obj, error) {
	source := object(block["source"])
	media := str(block["media_type"])
	if !accepted(media) {
		return nil, r.drop(m, index, block, "media type "+media+" is not one Gemini takes")
	}
	switch str(source["kind"]) {
	case "base64":
		return obj{"inlineData": obj{"mimeType": media, "data": source["data"]}}, nil
	case "url":
		return obj{"fileData": obj{"mimeType": media, "fileUri": source["data"]}}, nil
	}
	return nil, r.drop(m, index, block, "an image by "+str(source["kind"])+" cannot travel to Gemini")
}

func (r *renderer) part(m obj, index int, block obj) (obj, error) {
	sid := str(m["session_id"])
	switch str(block["type"]) {
	case "text":
		return obj{"text": block["text"]}, nil
	case "image":
		return r.image(m, index, block)
	case "tool_use":
		call := obj{"name": block["name"], "args": block["input"]}
		if rawBlock(m, index)["no_id"] == true {
			r.noID[str(block["id"])] = true
		} else {
			call["id"] = providerFor(sid, str(block["id"]))
		}
		r.names[str(block["id"])] = str(block["name"])
		return obj{"functionCall": call}, nil
	case "thinking":
		if !fromThisProvider(m) {
			return nil, r.drop(m, index, block, "thinking issued by another provider cannot go to Gemini")
		}
		if str(block["text"]) == "" && str(block["signature"]) != "" {
			// signature-only: the signature of the part that follows (parse's signOnly)
			r.pendingSig = str(block["signature"])
			return nil, nil
		}
		out := obj{"text": block["text"], "thought": true}
		if sig := str(block["signature"]); sig != "" {
			out["thoughtSignature"] = sig
		}
		return out, nil
	case "redacted_thinking":
		return nil, r.drop(m, index, block, "Gemini has no redacted thinking")
	case "tool_result":
		return r.functionResponse(m, index, block)
	case "gemini:part":
		return object(block["part"]), nil
	}
	return nil, r.drop(m, index, block, "no "+str(block["type"])+" part on Gemini's wire")
}

func (r *renderer) functionResponse(m obj, index int, block obj) (obj, error) {
	texts := []string{}
	for _, inner := range list(block["content"]) {
		b := object(inner)
		if str(b["type"]) == "text" {
			texts = append(texts, str(b["text"]))
		} else if err := r.drop(m, index, b, "a functionResponse carries JSON only"); err != nil {
			return nil, err
		}
	}
	text := strings.Join(texts, "\n")
	var value any = text
	var parsed any
	if json.Unmarshal([]byte(text), &parsed) == nil {
		if o, ok := parsed.(map[string]any); ok {
			value = o
		}
	}
	var response obj
	if block["is_error"] == true {
		response = obj{"error": value}
	} else if o, ok := value.(map[string]any); ok && rawBlock(m, index)["response_key"] == nil {
		response = o
	} else {
		key := str(rawBlock(m, index)["response_key"])
		if key == "" {
			key = "result"
		}
		response = obj{key: text}
	}
	id := str(block["tool_use_id"])
	fr := obj{"name": r.names[id], "response": response}
	if fr["name"] == "" {
		fr["name"] = "unknown"
	}
	if !r.noID[id] && rawBlock(m, index)["no_id"] != true {
		fr["id"] = providerFor(str(m["session_id"]), id)
	}
	return obj{"functionResponse": fr}, nil
}

func (r *renderer) parts(m obj) ([]any, error) {
	out := []any{}
	for i, b := range list(m["content"]) {
		p, err := r.part(m, i, object(b))
		if err != nil {
			return nil, err
		}
		if p != nil {
			for k, v := range rawBlock(m, i) {
				if k != "no_id" && k != "response_key" {
					p[k] = v
				}
			}
			if r.pendingSig != "" {
				p["thoughtSignature"] = r.pendingSig
				r.pendingSig = ""
			}
			out = append(out, p)
		}
	}
	if r.pendingSig != "" {
		out = append(out, obj{"text": "", "thoughtSignature": r.pendingSig})
		r.pendingSig = ""
	}
	return out, nil
}

func render(p obj) (any, error) {
	options := object(p["options"])
	key := str(options["critical_key"])
	if key == "" {
		key = "critical"
	}
	r := &renderer{criticalKey: key, names: map[string]string{}, noID: map[string]bool{}}
	body := obj{}
	system := []any{}
	contents := []any{}
	lastTool := false
	for _, mv := range list(p["messages"]) {
		m := object(mv)
		parts, err := r.parts(m)
		if err != nil {
			return nil, err
		}
		switch str(m["role"]) {
		case "system":
			system = append(system, parts...)
			continue
		case "tool":
			if lastTool {
				last := object(contents[len(contents)-1])
				last["parts"] = append(list(last["parts"]), parts...)
				continue
			}
			contents = append(contents, obj{"role": "user", "parts": parts})
			lastTool = true
			continue
		case "assistant":
			contents = append(contents, obj{"role": "model", "parts": parts})
		default:
			contents = append(contents, obj{"role": "user", "parts": parts})
		}
		lastTool = false
	}
	body["contents"] = contents
	if len(system) > 0 {
		body["systemInstruction"] = obj{"parts": system}
	}
	raw := object(object(options["provider_raw"])[name])
	r.tools(body, p, options, raw)
	r.config(body, options, raw)
	for k, v := range object(options["extra"]) {
		body[k] = v
	}
	model := url.PathEscape(wireModel(str(options["model"])))
	path := "/v1beta/models/" + model + ":generateContent"
	if options["stream"] == true {
		path = "/v1beta/models/" + model + ":streamGenerateContent"
		if raw["no_sse"] != true {
			path += "?alt=sse"
		}
	}
	return obj{"method": "POST", "path": path, "headers": obj{"content-type": "application/json"}, "body": body}, nil
}

func (r *renderer) tools(body obj, p obj, options obj, raw obj) {
	fields := object(raw["schema_fields"])
	decls := []any{}
	for _, tv := range list(p["tools"]) {
		t := object(tv)
		d := obj{"name": t["name"], "description": t["description"]}
		schemaField := str(fields[str(t["name"])])
		if schemaField == "" {
			schemaField = "parameters"
		}
		d[schemaField] = t["input_schema"]
		decls = append(decls, d)
	}
	tools := []any{}
	if len(decls) > 0 {
		tools = append(tools, obj{"functionDeclarations": decls})
	}
	tools = append(tools, list(options["provider_tools"])...)
	if len(tools) > 0 {
		body["tools"] = tools
	}
}

func (r *renderer) config(body obj, options obj, raw obj) {
	cfg := obj{}
	for k, v := range object(raw["generationConfig"]) {
		cfg[k] = v
	}
	if v, ok := options["max_output_tokens"]; ok && v != nil {
		cfg["maxOutputTokens"] = v
	}
	if v, ok := options["temperature"]; ok && v != nil {
		cfg["temperature"] = v
	}
	if stops := list(options["stop_sequences"]); len(stops) > 0 {
		cfg["stopSequences"] = stops
	}
	if options["output_schema"] != nil {
		warn(name+": dropped option output_schema: this adapter renders no structured output",
			obj{"event": "option_dropped", "adapter": name, "option": "output_schema", "reason": "no structured output here"})
	}
	if len(cfg) > 0 {
		body["generationConfig"] = cfg
	}
}

// -- read_request --------------------------------------------------------------------------------

type reader struct {
	sid     string
	model   string
	pending map[string][]string // function name -> canonical ids of calls not answered yet
}

func newMessage(sid, role string, content []any, meta obj) obj {
	if meta == nil {
		meta = obj{"status": "complete"}
	}
	return obj{"id": ulid(), "session_id": sid, "role": role, "content": content, "metadata": meta,
		"created_at": now(), "schema_version": 1}
}

func withBlocks(meta obj, extras obj) obj {
	if len(extras) > 0 {
		meta["provider_raw"] = obj{name: obj{"blocks": extras}}
	}
	return meta
}

// block reads one part; extras are the fields canonical form cannot hold (thoughtSignature, no_id).
func (rd *reader) block(part obj) (obj, obj) {
	extras := obj{}
	if sig := get(part, "thoughtSignature"); sig != nil && get(part, "thought") != true {
		extras["thoughtSignature"] = sig
	}
	if call := object(get(part, "functionCall")); call != nil {
		pid := str(call["id"])
		if pid == "" {
			pid = mintProviderID()
			extras["no_id"] = true
		}
		cid := canonicalFor(rd.sid, pid)
		rd.pending[str(call["name"])] = append(rd.pending[str(call["name"])], cid)
		args := object(call["args"])
		if args == nil {
			args = obj{}
		}
		return obj{"type": "tool_use", "id": cid, "name": call["name"], "input": args}, extras
	}
	if data := object(get(part, "inlineData")); data != nil {
		return obj{"type": "image", "source": obj{"kind": "base64", "data": data["data"]}, "media_type": get(data, "mimeType")}, extras
	}
	if data := object(get(part, "fileData")); data != nil {
		return obj{"type": "image", "source": obj{"kind": "url", "data": get(data, "fileUri")}, "media_type": get(data, "mimeType")}, extras
	}
	if text, ok := part["text"].(string); ok {
		if get(part, "thought") == true {
			out := obj{"type": "thinking", "text": text, "signature": nil}
			if sig := str(get(part, "thoughtSignature")); sig != "" {
				out["signature"] = sig
			}
			return out, extras
		}
		return obj{"type": "text", "text": text}, extras
	}
	return obj{"type": "gemini:part", "part": part}, obj{}
}

func (rd *reader) toolResult(part obj) (obj, obj) {
	fr := object(get(part, "functionResponse"))
	extras := obj{}
	var cid string
	if pid := str(fr["id"]); pid != "" {
		cid = canonicalFor(rd.sid, pid)
	} else if queue := rd.pending[str(fr["name"])]; len(queue) > 0 {
		cid, rd.pending[str(fr["name"])] = queue[0], queue[1:]
		extras["no_id"] = true
	} else {
		cid = canonicalFor(rd.sid, mintProviderID())
		extras["no_id"] = true
	}
	response := object(fr["response"])
	isError := false
	var text string
	if inner, ok := response["error"]; ok && len(response) == 1 {
		isError = true
		if s, ok := inner.(string); ok {
			text = s
		} else {
			text = marshal(inner)
		}
	} else if key, inner := onlyString(response); key != "" {
		// {"result": "..."} (or "output"): the text itself, the key kept to render it back
		text = inner
		extras["response_key"] = key
	} else {
		text = marshal(response)
	}
	result := obj{"type": "tool_result", "tool_use_id": cid, "content": []any{obj{"type": "text", "text": text}}, "is_error": isError}
	meta := withBlocks(obj{"status": "complete", "parent_tool_use_id": cid}, nonEmpty("0", extras))
	return newMessage(rd.sid, "tool", []any{result}, meta), nil
}

func nonEmpty(key string, extras obj) obj {
	if len(extras) == 0 {
		return obj{}
	}
	return obj{key: extras}
}

func (rd *reader) content(c obj, out []any) []any {
	if str(c["role"]) == "model" {
		blocks, extras := []any{}, obj{}
		for i, pv := range list(c["parts"]) {
			b, x := rd.block(object(pv))
			blocks = append(blocks, b)
			if len(x) > 0 {
				extras[fmt.Sprint(i)] = x
			}
		}
		return append(out, newMessage(rd.sid, "assistant", blocks, withBlocks(assistantMeta(rd.model), extras)))
	}
	blocks, extras := []any{}, obj{}
	for _, pv := range list(c["parts"]) {
		part := object(pv)
		if get(part, "functionResponse") != nil {
			msg, _ := rd.toolResult(part)
			out = append(out, msg)
			continue
		}
		b, x := rd.block(part)
		if len(x) > 0 {
			extras[fmt.Sprint(len(blocks))] = x
		}
		blocks = append(blocks, b)
	}
	if len(blocks) > 0 {
		out = append(out, newMessage(rd.sid, "user", blocks, withBlocks(obj{"status": "complete"}, extras)))
	}
	return out
}

func readRequest(p obj) (any, error) {
	body := object(p["body"])
	sid := str(p["session_id"])
	if sid == "" {
		sid = ulid()
	}
	model, stream, sse := urlModel(str(p["url"]))
	rd := &reader{sid: sid, model: canonicalModel(model), pending: map[string][]string{}}
	raw := obj{}
	if stream && !sse {
		raw["no_sse"] = true
	}
	messages := []any{}
	if si := object(get(body, "systemInstruction")); si != nil {
		blocks, extras := []any{}, obj{}
		for i, pv := range list(si["parts"]) {
			b, x := rd.block(object(pv))
			blocks = append(blocks, b)
			if len(x) > 0 {
				extras[fmt.Sprint(i)] = x
			}
		}
		messages = append(messages, newMessage(sid, "system", blocks, withBlocks(obj{"status": "complete"}, extras)))
	}
	for _, cv := range list(body["contents"]) {
		messages = rd.content(object(cv), messages)
	}
	tools, providerTools, fields := readTools(body)
	if len(fields) > 0 {
		raw["schema_fields"] = fields
	}
	options := obj{"model": canonicalModel(model), "stream": stream, "max_output_tokens": nil, "temperature": nil,
		"stop_sequences": []any{}, "output_schema": nil, "provider_tools": providerTools}
	if cfg := object(get(body, "generationConfig")); cfg != nil {
		rest := obj{}
		for k, v := range cfg {
			switch k {
			case "maxOutputTokens", "max_output_tokens":
				options["max_output_tokens"] = intOf(v)
			case "temperature":
				options["temperature"] = v
			case "stopSequences", "stop_sequences":
				options["stop_sequences"] = v
			default:
				rest[k] = v
			}
		}
		if len(rest) > 0 {
			raw["generationConfig"] = rest
		}
	}
	extra := obj{}
	known := map[string]bool{"contents": true, "systemInstruction": true, "system_instruction": true, "tools": true,
		"generationConfig": true, "generation_config": true}
	for k, v := range body {
		if !known[k] {
			extra[k] = v
		}
	}
	options["extra"] = extra
	options["provider_raw"] = obj{}
	if len(raw) > 0 {
		options["provider_raw"] = obj{name: raw}
	}
	return obj{"messages": messages, "tools": tools, "options": options}, nil
}

func readTools(body obj) ([]any, []any, obj) {
	tools, providerTools, fields := []any{}, []any{}, obj{}
	for _, tv := range list(body["tools"]) {
		t := object(tv)
		decls, ok := field(t, "functionDeclarations")
		if !ok {
			providerTools = append(providerTools, t)
			continue
		}
		for _, dv := range list(decls) {
			d := object(dv)
			schema, schemaField := d["parameters"], "parameters"
			for _, k := range []string{"parametersJsonSchema", "parameters_json_schema"} {
				if s, ok := d[k]; ok {
					schema, schemaField = s, k
				}
			}
			if schema == nil {
				schema = obj{"type": "object", "properties": obj{}}
			}
			if schemaField != "parameters" {
				fields[str(d["name"])] = schemaField
			}
			description := str(d["description"])
			tools = append(tools, obj{"name": d["name"], "description": description, "input_schema": schema, "side_effects": "none"})
		}
	}
	return tools, providerTools, fields
}

func onlyString(response obj) (string, string) {
	if len(response) != 1 {
		return "", ""
	}
	for k, v := range response {
		if s, ok := v.(string); ok && (k == "result" || k == "output") {
			return k, s
		}
	}
	return "", ""
}
