package main

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

// wireModel strips our own "gemini:" prefix only (docs: render, model).
func wireModel(model string) string {
	if strings.HasPrefix(model, providerKey+":") {
		return model[len(providerKey)+1:]
	}
	return model
}

func str(v interface{}) string { s, _ := v.(string); return s }

func list(v interface{}) []interface{} { l, _ := v.([]interface{}); return l }

func asObj(v interface{}) obj { o, _ := v.(obj); return o }

func truthy(v interface{}) bool { b, _ := v.(bool); return b }

func ownRaw(meta obj) obj {
	pr := asObj(meta["provider_raw"])
	if pr == nil {
		return nil
	}
	return asObj(pr[adapterName])
}

// critical reports whether block i of a message is marked critical (§4.2.2).
func critical(meta obj, key string, i int) bool {
	v, ok := meta[key]
	if !ok {
		return false
	}
	if b, isBool := v.(bool); isBool {
		return b
	}
	for _, x := range list(v) {
		if n, isNum := x.(json.Number); isNum && n.String() == intStr(i) {
			return true
		}
	}
	return false
}

var acceptedImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/webp": true, "image/heic": true, "image/heif": true}

type renderer struct {
	s         *server
	session   string
	criticalK string
	// names of calls by canonical id, for functionResponse.name
	callNames map[string]string
}

func (r *renderer) drop(msg obj, i int, blockType, reason string) *opError {
	meta := asObj(msg["metadata"])
	if critical(meta, r.criticalK, i) {
		return &opError{fields: obj{"kind": "critical_block",
			"message": "critical " + blockType + " block cannot be carried: " + reason,
			"adapter": adapterName, "session_id": r.session, "message_id": str(msg["id"]),
			"block_type": blockType, "reason": reason}}
	}
	r.s.logDrop(r.session, str(msg["id"]), blockType, reason)
	return nil
}

func textOf(blocks []interface{}) string {
	var parts []string
	for _, b := range blocks {
		bo := asObj(b)
		if str(bo["type"]) == "text" {
			parts = append(parts, str(bo["text"]))
		}
	}
	return strings.Join(parts, "\n")
}

func (s *server) render(p obj) (interface{}, *opError) {
	opts := asObj(p["options"])
	if opts == nil {
		opts = obj{}
	}
	messages := list(p["messages"])
	tools := list(p["tools"])
	ck := str(opts["critical_key"])
	if ck == "" {
		ck = "critical"
	}
	session := ""
	for _, m := range messages {
		if sid := str(asObj(m)["session_id"]); sid != "" {
			session = sid
			break
		}
	}
	r := &renderer{s: s, session: session, criticalK: ck, callNames: map[string]string{}}
	tm := s.mapFor(session)
	reqRaw := asObj(asObj(opts["provider_raw"])[adapterName])

	body := obj{}
	var systemTexts []string
	contents := []interface{}{}
	appendContent := func(role string, parts []interface{}) {
		if len(parts) == 0 {
			return
		}
		if n := len(contents); n > 0 {
			last := asObj(contents[n-1])
			if str(last["role"]) == role && !truthy(reqRaw["keep_turns"]) {
				last["parts"] = append(list(last["parts"]), parts...)
				return
			}
		}
		contents = append(contents, obj{"role": role, "parts": parts})
	}

	for _, mv := range messages {
		msg := asObj(mv)
		role := str(msg["role"])
		meta := asObj(msg["metadata"])
		if meta == nil {
			meta = obj{}
		}
		raw := ownRaw(meta)
		sigs := asObj(raw["signatures"])
		noID := map[string]bool{}
		for _, x := range list(raw["no_id"]) {
			noID[str(x)] = true
		}
		rawResp := map[string]bool{}
		for _, x := range list(raw["raw_response"]) {
			rawResp[str(x)] = true
		}
		ownThinking := str(meta["provider"]) == providerKey
		content := list(msg["content"])
		if role == "system" {
			systemTexts = append(systemTexts, textOf(content))
			for i, b := range content {
				if t := str(asObj(b)["type"]); t != "text" {
					if e := r.drop(msg, i, t, "a system instruction holds text only"); e != nil {
						return nil, e
					}
				}
			}
			continue
		}
		var parts []interface{}
		pendingSig := ""
		for i, bv := range content {
			b := asObj(bv)
			bt := str(b["type"])
			key := intStr(i)
			var part obj
			switch bt {
			case "text":
				part = obj{"text": str(b["text"])}
			case "thinking":
				if !ownThinking || role != "assistant" {
					if e := r.drop(msg, i, bt, "thinking of another provider"); e != nil {
						return nil, e
					}
					continue
				}
				if str(b["text"]) == "" && str(b["signature"]) != "" {
					// signature-only: the signature of the part that follows it
					pendingSig = str(b["signature"])
					continue
				}
				part = obj{"text": str(b["text"]), "thought": true}
				if sig := str(b["signature"]); sig != "" {
					part["thoughtSignature"] = sig
				}
			case "redacted_thinking":
				if e := r.drop(msg, i, bt, "Gemini has no redacted thinking"); e != nil {
					return nil, e
				}
				continue
			case "image":
				src := asObj(b["source"])
				mt := strings.ToLower(str(b["media_type"]))
				if !acceptedImages[mt] {
					if e := r.drop(msg, i, bt, "media type "+mt+" is not accepted"); e != nil {
						return nil, e
					}
					continue
				}
				switch str(src["kind"]) {
				case "base64":
					part = obj{"inlineData": obj{"mimeType": str(b["media_type"]), "data": str(src["data"])}}
				case "url":
					part = obj{"fileData": obj{"mimeType": str(b["media_type"]), "fileUri": str(src["data"])}}
				default:
					if e := r.drop(msg, i, bt, "image source "+str(src["kind"])+" cannot be sent"); e != nil {
						return nil, e
					}
					continue
				}
			case "tool_use":
				cid := str(b["id"])
				r.callNames[cid] = str(b["name"])
				input := b["input"]
				if input == nil {
					input = obj{}
				}
				fc := obj{"name": str(b["name"]), "args": input}
				if !noID[key] {
					fc["id"] = tm.providerFor(cid)
				}
				part = obj{"functionCall": fc}
			case "tool_result":
				cid := str(b["tool_use_id"])
				name := r.callNames[cid]
				if name == "" {
					name = str(raw["name"])
				}
				var resp interface{}
				for _, inner := range list(b["content"]) {
					if it := str(asObj(inner)["type"]); it != "text" {
						if e := r.drop(msg, i, it, "a functionResponse carries a JSON object, no "+it); e != nil {
							return nil, e
						}
					}
				}
				text := textOf(list(b["content"]))
				if rawResp[key] {
					var v interface{}
					if decode([]byte(text), &v) == nil {
						resp = v
					}
				}
				if resp == nil {
					if truthy(b["is_error"]) {
						resp = obj{"error": text}
					} else {
						resp = obj{"result": text}
					}
				}
				fr := obj{"name": name, "response": resp}
				if !noID[key] {
					fr["id"] = tm.providerFor(cid)
				}
				part = obj{"functionResponse": fr}
			case "gemini_part":
				// a part canonical has no block for, kept whole by parse / read_request
				part = obj{}
				for k, v := range b {
					if k != "type" {
						part[k] = v
					}
				}
			default:
				if e := r.drop(msg, i, bt, "unknown block type"); e != nil {
					return nil, e
				}
				continue
			}
			if sig := str(sigs[key]); sig != "" {
				part["thoughtSignature"] = sig
			}
			if pendingSig != "" {
				part["thoughtSignature"] = pendingSig
				pendingSig = ""
			}
			parts = append(parts, part)
		}
		if pendingSig != "" {
			parts = append(parts, obj{"text": "", "thoughtSignature": pendingSig})
		}
		wr := "user"
		if role == "assistant" {
			wr = "model"
		}
		appendContent(wr, parts)
	}
	body["contents"] = contents
	if len(systemTexts) > 0 {
		si := obj{"parts": []interface{}{obj{"text": strings.Join(systemTexts, "\n\n")}}}
		if role := str(reqRaw["system_role"]); role != "" {
			si["role"] = role
		}
		body["systemInstruction"] = si
	}

	paramsKey := str(reqRaw["parameters_key"])
	if paramsKey == "" {
		paramsKey = "parametersJsonSchema"
	}
	var wireTools []interface{}
	if len(tools) > 0 {
		var decls []interface{}
		for _, tv := range tools {
			t := asObj(tv)
			d := obj{"name": str(t["name"])}
			if desc := str(t["description"]); desc != "" {
				d["description"] = desc
			}
			if sch := asObj(t["input_schema"]); sch != nil {
				d[paramsKey] = sch
			}
			decls = append(decls, d)
		}
		wireTools = append(wireTools, obj{"functionDeclarations": decls})
	}
	wireTools = append(wireTools, list(opts["provider_tools"])...)
	if len(wireTools) > 0 {
		body["tools"] = wireTools
	}

	gc := obj{}
	if v, ok := opts["max_output_tokens"].(json.Number); ok {
		gc["maxOutputTokens"] = v
	}
	if v, ok := opts["temperature"].(json.Number); ok {
		gc["temperature"] = v
	}
	if ss := list(opts["stop_sequences"]); len(ss) > 0 {
		gc["stopSequences"] = ss
	}
	if sch := asObj(opts["output_schema"]); sch != nil {
		key := str(reqRaw["schema_key"])
		if key == "" {
			key = "responseJsonSchema"
		}
		gc["responseMimeType"] = "application/json"
		gc[key] = sch
	}
	for k, v := range asObj(opts["extra"]) {
		if k == "generationConfig" {
			for gk, gv := range asObj(v) {
				gc[gk] = gv
			}
			continue
		}
		body[k] = v
	}
	if len(gc) > 0 || truthy(reqRaw["empty_generation_config"]) {
		body["generationConfig"] = gc
	}

	model := wireModel(str(opts["model"]))
	path := "/v1beta/models/" + model + ":generateContent"
	if truthy(opts["stream"]) {
		path = "/v1beta/models/" + model + ":streamGenerateContent?alt=sse"
	}
	if defect == "model-in-body" {
		body["model"] = model
		path = "/v1beta/models/gemini:generateContent"
		if truthy(opts["stream"]) {
			path = "/v1beta/models/gemini:streamGenerateContent?alt=sse"
		}
	}
	return obj{"method": "POST", "path": path, "headers": obj{"content-type": "application/json"}, "body": body}, nil
}

// modelAndStreamFromURL reads `/models/{model}:{op}` out of a full URL or a path.
func modelAndStreamFromURL(u string) (model string, stream bool, ok bool) {
	path := u
	if pu, err := url.Parse(u); err == nil {
		path = pu.EscapedPath()
	}
	i := strings.LastIndex(path, "/models/")
	if i < 0 {
		return "", false, false
	}
	seg := path[i+len("/models/"):]
	j := strings.LastIndex(seg, ":")
	if j < 0 {
		return "", false, false
	}
	m, err := url.PathUnescape(seg[:j])
	if err != nil {
		m = seg[:j]
	}
	op := seg[j+1:]
	return m, op == "streamGenerateContent", true
}

func sortedKeys(o obj) []string {
	var ks []string
	for k := range o {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
