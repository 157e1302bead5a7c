package main

import (
	"encoding/json"
	"strings"
	"time"
)

// readRequest reads a recorded (or rendered) generateContent request back to
// canonical form; what canonical cannot hold goes to provider_raw so that
// rendering it again gives the recorded body (TC802).
func (s *server) readRequest(p obj) (interface{}, *opError) {
	body := asObj(p["body"])
	if body == nil {
		return nil, newErr("not_implemented", "a request body that is not a JSON object")
	}
	session := str(p["session_id"])
	tm := s.mapFor(session)
	opts := obj{"stream": false, "extra": obj{}, "provider_tools": []interface{}{}, "stop_sequences": []interface{}{}}
	reqRaw := obj{}
	model, stream, ok := modelAndStreamFromURL(str(p["url"]))
	if ok {
		opts["model"] = providerKey + ":" + model
		opts["stream"] = stream
	} else {
		opts["model"] = providerKey + ":unknown"
	}
	extra := asObj(opts["extra"])
	var messages []interface{}
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	newMsg := func(role string, content []interface{}, meta obj) obj {
		return obj{"id": newULID(), "session_id": session, "role": role, "content": content,
			"metadata": meta, "created_at": now, "schema_version": 1}
	}
	for _, k := range sortedKeys(body) {
		v := body[k]
		switch k {
		case "contents":
		case "systemInstruction", "system_instruction":
			si := asObj(v)
			var texts []string
			for _, pt := range list(si["parts"]) {
				texts = append(texts, str(asObj(pt)["text"]))
			}
			if r := str(si["role"]); r != "" {
				reqRaw["system_role"] = r
			}
			messages = append(messages, newMsg("system", []interface{}{obj{"type": "text", "text": strings.Join(texts, "")}}, obj{}))
		case "tools":
			var tools []interface{}
			toolList := list(v)
			if o := asObj(v); o != nil {
				toolList = []interface{}{o} // one Tool where the docs have a list
			}
			for _, tv := range toolList {
				t := asObj(tv)
				decls := list(field(t, "functionDeclarations"))
				if decls == nil || len(t) != 1 {
					opts["provider_tools"] = append(list(opts["provider_tools"]), tv)
					continue
				}
				for _, dv := range decls {
					d := asObj(dv)
					def := obj{"name": str(d["name"]), "description": str(d["description"]), "side_effects": "none"}
					sch := obj{"type": "object", "properties": obj{}}
					for _, key := range []string{"parametersJsonSchema", "parameters", "parameters_json_schema"} {
						if x := asObj(d[key]); x != nil {
							sch = x
							reqRaw["parameters_key"] = key
						}
					}
					def["input_schema"] = sch
					tools = append(tools, def)
				}
			}
			p["_tools"] = tools
		case "generationConfig", "generation_config":
			gc := asObj(v)
			if len(gc) == 0 {
				reqRaw["empty_generation_config"] = true
			}
			rest := obj{}
			for gk, gv := range gc {
				switch gk {
				case "maxOutputTokens":
					opts["max_output_tokens"] = gv
				case "temperature":
					opts["temperature"] = gv
				case "stopSequences":
					opts["stop_sequences"] = gv
				case "responseJsonSchema", "responseSchema":
					opts["output_schema"] = gv
					reqRaw["schema_key"] = gk
				default:
					rest[gk] = gv
				}
			}
			if opts["output_schema"] == nil {
				// responseMimeType without a schema stays as it is
			} else if str(rest["responseMimeType"]) == "application/json" {
				delete(rest, "responseMimeType")
			}
			if len(rest) > 0 {
				extra["generationConfig"] = rest
			}
		default:
			extra[k] = v
		}
	}
	// the turns
	var prevCalls []obj // calls of the last model turn: canonical id, name, had id
	keepTurns := false
	lastRole := ""
	for ti, cv := range list(body["contents"]) {
		c := asObj(cv)
		role := str(c["role"])
		if role == lastRole {
			keepTurns = true
		}
		lastRole = role
		parts := list(c["parts"])
		if role == "model" {
			content := []interface{}{}
			raw := obj{}
			sigs := obj{}
			var noID []interface{}
			prevCalls = nil
			for pi, pv := range parts {
				part := asObj(pv)
				idx := intStr(len(content))
				if fc := asObj(field(part, "functionCall")); fc != nil {
					pid := str(fc["id"])
					had := pid != ""
					if !had {
						pid = mintCallID("request:"+session+":"+intStr(ti), pi, str(fc["name"]), fc["args"])
						noID = append(noID, idx)
					}
					cid := tm.canonicalFor(pid)
					args := fc["args"]
					if args == nil {
						args = obj{}
					}
					content = append(content, obj{"type": "tool_use", "id": cid, "name": str(fc["name"]), "input": args})
					prevCalls = append(prevCalls, obj{"id": cid, "name": str(fc["name"]), "pid": pid})
				} else if truthy(part["thought"]) {
					b := obj{"type": "thinking", "text": str(part["text"])}
					if sig := str(field(part, "thoughtSignature")); sig != "" {
						b["signature"] = sig
					}
					content = append(content, b)
					continue
				} else {
					content = append(content, s.plainBlock(part))
				}
				if sig := str(field(part, "thoughtSignature")); sig != "" {
					sigs[idx] = sig
				}
			}
			if len(sigs) > 0 {
				raw["signatures"] = sigs
			}
			if noID != nil {
				raw["no_id"] = noID
			}
			model := str(opts["model"])
			meta := obj{"model": model, "provider": providerKey,
				"routing": obj{"mode": "default", "chosen_model": model, "reason": "no routing engine"},
				"status":  "complete"}
			if len(raw) > 0 {
				meta["provider_raw"] = obj{adapterName: raw}
			}
			messages = append(messages, newMsg("assistant", content, meta))
			continue
		}
		// a user turn: one tool message per functionResponse, the rest one user message
		var userContent []interface{}
		userRaw := obj{}
		userSigs := obj{}
		used := map[int]bool{}
		for _, pv := range parts {
			part := asObj(pv)
			if fr := asObj(field(part, "functionResponse")); fr != nil {
				pid := str(fr["id"])
				cid := ""
				if pid != "" {
					cid = tm.canonicalFor(pid)
					for i, pc := range prevCalls {
						if str(pc["pid"]) == pid {
							used[i] = true
						}
					}
				} else {
					for i, pc := range prevCalls {
						if !used[i] && str(pc["name"]) == str(fr["name"]) {
							used[i] = true
							cid = str(pc["id"])
							break
						}
					}
					if cid == "" {
						cid = tm.canonicalFor(mintCallID("orphan:"+session, ti, str(fr["name"]), fr["response"]))
					}
				}
				resp := asObj(fr["response"])
				b := obj{"type": "tool_result", "tool_use_id": cid}
				raw := obj{}
				var text string
				if len(resp) == 1 && resp["result"] != nil {
					if s, isStr := resp["result"].(string); isStr {
						text = s
					}
				}
				if len(resp) == 1 && resp["error"] != nil {
					if s, isStr := resp["error"].(string); isStr {
						text = s
						b["is_error"] = true
					}
				}
				if text == "" && !(len(resp) == 1 && (resp["result"] == "" || resp["error"] == "")) {
					j, _ := json.Marshal(fr["response"])
					text = string(j)
					raw["raw_response"] = []interface{}{"0"}
				}
				b["content"] = []interface{}{obj{"type": "text", "text": text}}
				if pid == "" {
					raw["no_id"] = []interface{}{"0"}
				}
				raw["name"] = str(fr["name"])
				if sig := str(field(part, "thoughtSignature")); sig != "" {
					raw["signatures"] = obj{"0": sig}
				}
				meta := obj{"parent_tool_use_id": cid, "provider_raw": obj{adapterName: raw}}
				messages = append(messages, newMsg("tool", []interface{}{b}, meta))
				continue
			}
			if sig := str(field(part, "thoughtSignature")); sig != "" {
				userSigs[intStr(len(userContent))] = sig
			}
			userContent = append(userContent, s.plainBlock(part))
		}
		if len(userContent) > 0 {
			meta := obj{}
			if len(userSigs) > 0 {
				userRaw["signatures"] = userSigs
				meta["provider_raw"] = obj{adapterName: userRaw}
			}
			messages = append(messages, newMsg("user", userContent, meta))
		}
	}
	if keepTurns {
		reqRaw["keep_turns"] = true
	}
	if len(reqRaw) > 0 {
		opts["provider_raw"] = obj{adapterName: reqRaw}
	} else {
		opts["provider_raw"] = obj{}
	}
	tools := list(p["_tools"])
	if tools == nil {
		tools = []interface{}{}
	}
	if messages == nil {
		messages = []interface{}{}
	}
	return obj{"messages": messages, "tools": tools, "options": opts}, nil
}

// field reads a request member by its JSON name or its proto name
// ("Proto3 JSON parsers accept both the lowerCamelCase name ... and the
// original proto field name", protobuf.dev/programming-guides/json).
func field(o obj, camel string) interface{} {
	if v, ok := o[camel]; ok {
		return v
	}
	var b []byte
	for _, r := range camel {
		if r >= 'A' && r <= 'Z' {
			b = append(b, '_', byte(r-'A'+'a'))
		} else {
			b = append(b, byte(r))
		}
	}
	return o[string(b)]
}

func (s *server) plainBlock(part obj) obj {
	switch {
	case part["text"] != nil:
		return obj{"type": "text", "text": str(part["text"])}
	case field(part, "inlineData") != nil:
		d := asObj(field(part, "inlineData"))
		return obj{"type": "image", "media_type": str(field(d, "mimeType")), "source": obj{"kind": "base64", "data": str(d["data"])}}
	case field(part, "fileData") != nil:
		d := asObj(field(part, "fileData"))
		return obj{"type": "image", "media_type": str(field(d, "mimeType")), "source": obj{"kind": "url", "data": str(field(d, "fileUri"))}}
	}
	b := obj{"type": "gemini_part"}
	for k, v := range part {
		b[k] = v
	}
	return b
}

// estimate: about four characters a token, as Google's docs put it
// ("A token is equivalent to about 4 characters for Gemini models").
func (s *server) estimate(p obj) (interface{}, *opError) {
	n := 0
	// Gemini 3 counts a replayed thought signature as input; 2.5's recorded counts do not
	sigWeight := 0
	if strings.HasPrefix(wireModel(str(p["model"])), "gemini-3") {
		sigWeight = 1
	}
	for _, mv := range list(p["messages"]) {
		for _, bv := range list(asObj(mv)["content"]) {
			b := asObj(bv)
			switch str(b["type"]) {
			case "text":
				n += len(str(b["text"]))
			case "thinking":
				// a replayed thought's signature counts (its text is not sent back as input)
				n += sigWeight * len(str(b["signature"])) * 4 / 6
			case "tool_use":
				j, _ := json.Marshal(b["input"])
				n += len(j) + len(str(b["name"]))
				n += sigWeight * sigLen(asObj(mv), bv)
			case "tool_result":
				n += len(textOf(list(b["content"])))
			case "image":
				n += 258 * 4
			}
		}
	}
	for _, tv := range list(p["tools"]) {
		t := asObj(tv)
		// Gemini counts a declaration well above its characters (the cookbook's four
		// two-argument tools and a one-sentence prompt count 194 tokens)
		n += 88 + len(str(t["name"])) + len(str(t["description"]))
		for k, pv := range asObj(asObj(t["input_schema"])["properties"]) {
			n += len(k) + 2 + len(str(asObj(pv)["type"])) + len(str(asObj(pv)["description"]))
		}
	}
	t := n / 4
	if t < 1 {
		t = 1
	}
	return obj{"tokens": t}, nil
}

// sigLen: the signatures a message's provider_raw keeps for its parts count too.
func sigLen(msg obj, _ interface{}) int {
	n := 0
	for _, v := range asObj(ownRaw(asObj(msg["metadata"]))["signatures"]) {
		n += len(str(v)) * 4 / 6
	}
	return n
}
