package main

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
)

func num(v interface{}) int64 {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			f, _ := n.Float64()
			return int64(f)
		}
		return i
	case float64:
		return int64(n)
	}
	return 0
}

// usageOf reads turnspec's four disjoint buckets out of usageMetadata
// (wire show, Usage): input = prompt + toolUsePrompt - cached.
func usageOf(um obj) obj {
	if um == nil {
		return nil
	}
	cached := num(um["cachedContentTokenCount"])
	in := num(um["promptTokenCount"]) + num(um["toolUsePromptTokenCount"]) - cached
	if in < 0 {
		in = 0
	}
	out := num(um["candidatesTokenCount"]) + num(um["thoughtsTokenCount"])
	return obj{"input_tokens": in, "output_tokens": out, "cached_input_tokens": cached, "cache_creation_input_tokens": 0}
}

// contract §6.2's 400 row ("Some providers use 400 with body indicating
// overflow; remap."): Gemini's "The input token count (N) exceeds the maximum
// number of tokens allowed (M)."
var overflow = regexp.MustCompile(`(?i)context (length|window)|maximum context|token count .{0,40}exceeds|tokens? exceeds|too many tokens`)

var stopMap = map[string]string{
	"STOP": "end_turn", "MAX_TOKENS": "max_tokens", "FINISH_REASON_UNSPECIFIED": "end_turn",
	"MALFORMED_FUNCTION_CALL": "error", "UNEXPECTED_TOOL_CALL": "error",
	"TOO_MANY_TOOL_CALLS": "error", "MISSING_THOUGHT_SIGNATURE": "error",
}

func stopReason(finish string, hasCalls bool) string {
	if defect == "ignore-finish" {
		if hasCalls {
			return "tool_use"
		}
		return "end_turn"
	}
	if finish == "STOP" && hasCalls {
		return "tool_use"
	}
	if r, ok := stopMap[finish]; ok {
		return r
	}
	if finish == "" && hasCalls {
		return "tool_use"
	}
	return "end_turn" // SAFETY, RECITATION, ... : the reply's text is what was sent
}

func statusFor(stop string) string {
	switch stop {
	case "error":
		return "error"
	case "cancelled":
		return "cancelled"
	}
	return "complete"
}

// classify maps an error body / status to contract §6.1 (wire show, Errors).
func classify(status int64, errBody obj) string {
	for _, d := range list(errBody["details"]) {
		if str(asObj(d)["reason"]) == "API_KEY_INVALID" {
			return "auth"
		}
	}
	switch {
	case status == 401 || status == 403:
		return "auth"
	case status == 408:
		return "network"
	case status == 413:
		return "context_overflow"
	case status == 429:
		return "rate_limit"
	case status >= 500 && status < 600:
		return "server_error"
	case status >= 400 && status < 500:
		if overflow.MatchString(str(errBody["message"])) {
			return "context_overflow"
		}
		return "invalid_request"
	}
	return "other"
}

func retryDelay(errBody obj) interface{} {
	for _, d := range list(errBody["details"]) {
		if rd := str(asObj(d)["retryDelay"]); rd != "" {
			if dur, err := time.ParseDuration(rd); err == nil {
				return dur.Seconds()
			}
		}
	}
	return nil
}

func adapterError(status int64, errBody obj, requestID interface{}) *opError {
	class := classify(status, errBody)
	msg := str(errBody["message"])
	if msg == "" {
		msg = "Gemini API error (HTTP " + strconv.FormatInt(status, 10) + ")"
	}
	f := obj{"kind": "adapter_error", "error_class": class, "message": msg,
		"retryable": class == "rate_limit" || class == "server_error" || class == "network"}
	if status > 0 {
		f["provider_status"] = status
	}
	if rid := str(requestID); rid != "" {
		f["request_id"] = rid
	}
	if ra := retryDelay(errBody); ra != nil {
		f["retry_after_seconds"] = ra
	}
	return &opError{fields: f}
}

type parsed struct {
	blocks   []interface{}
	sigs     obj // the raw-signatures defect's: signatures by block index
	hasCalls bool
}

// partsToBlocks turns one candidate's parts into canonical blocks. merge joins
// consecutive text parts (and thought parts) into one block, as a stream does.
func (s *server) partsToBlocks(session, responseID string, parts []interface{}, merge bool, callBase int) parsed {
	tm := s.mapFor(session)
	pr := parsed{sigs: obj{}}
	lastKind := ""
	lastSigned := false
	for pi, pv := range parts {
		part := asObj(pv)
		sig := str(part["thoughtSignature"])
		switch {
		case part["functionCall"] != nil:
			fc := asObj(part["functionCall"])
			args := fc["args"]
			if args == nil {
				args = obj{}
			}
			if defect == "lose-stream-args" && false {
				args = obj{}
			}
			pid := str(fc["id"])
			if pid == "" {
				pid = mintCallID(responseID, callBase+pi, str(fc["name"]), args)
			}
			pr.blocks = append(pr.blocks, obj{"type": "tool_use", "id": tm.canonicalFor(pid), "name": str(fc["name"]), "input": args})
			pr.hasCalls = true
			lastKind = "call"
		case truthy(part["thought"]):
			if defect == "drop-thinking" {
				continue
			}
			if merge && lastKind == "thought" && !lastSigned {
				b := asObj(pr.blocks[len(pr.blocks)-1])
				b["text"] = str(b["text"]) + str(part["text"])
				if sig != "" {
					b["signature"] = sig
				}
			} else {
				b := obj{"type": "thinking", "text": str(part["text"])}
				if sig != "" {
					b["signature"] = sig
				}
				pr.blocks = append(pr.blocks, b)
			}
			lastKind = "thought"
			lastSigned = sig != ""
			continue
		case part["text"] != nil:
			if merge && str(part["text"]) == "" {
				// an empty part adds no block; its signature, if any, a signature-only one
				if sig != "" && defect == "raw-signatures" && len(pr.blocks) > 0 {
					pr.sigs[intStr(len(pr.blocks)-1)] = sig
				} else if sig != "" {
					pr.blocks = append(pr.blocks, obj{"type": "thinking", "text": "", "signature": sig})
					lastKind, lastSigned = "thought", true
				}
				continue
			}
			if merge && lastKind == "text" {
				b := asObj(pr.blocks[len(pr.blocks)-1])
				b["text"] = str(b["text"]) + str(part["text"])
			} else {
				pr.blocks = append(pr.blocks, obj{"type": "text", "text": str(part["text"])})
			}
			lastKind = "text"
		case part["inlineData"] != nil:
			d := asObj(part["inlineData"])
			pr.blocks = append(pr.blocks, obj{"type": "image", "media_type": str(d["mimeType"]), "source": obj{"kind": "base64", "data": str(d["data"])}})
			lastKind = "image"
		default:
			// executableCode, codeExecutionResult, ...: kept as an unknown block
			b := obj{"type": "gemini_part"}
			for k, v := range part {
				b[k] = v
			}
			pr.blocks = append(pr.blocks, b)
			lastKind = "other"
		}
		lastSigned = false
		if sig != "" {
			// a signature on a part that is no thought (Gemini 3 signs its first
			// functionCall): a signature-only thinking block just before that part, so
			// a stream carries it as a parse does (provider_raw cannot ride a stream)
			n := len(pr.blocks)
			if defect == "raw-signatures" {
				pr.sigs[intStr(n-1)] = sig // kept where a stream cannot carry it
				continue
			}
			signed := obj{"type": "thinking", "text": "", "signature": sig}
			pr.blocks = append(pr.blocks[:n-1], signed, pr.blocks[n-1])
			lastKind = "other"
		}
	}
	return pr
}

func (s *server) parse(p obj) (interface{}, *opError) {
	resp := asObj(p["response"])
	ctx := asObj(p["context"])
	body := asObj(resp["body"])
	status := num(resp["status"])
	if body == nil && resp["body_base64"] != nil {
		raw, _ := base64.StdEncoding.DecodeString(str(resp["body_base64"]))
		var v interface{}
		if decode(raw, &v) == nil {
			body = asObj(v)
		}
		if body == nil {
			if status >= 400 {
				return nil, adapterError(status, obj{"message": strings.TrimSpace(string(raw))}, ctx["request_id"])
			}
			return nil, newErr("wire_format", "the response body is not a JSON object")
		}
	}
	if body == nil {
		if list(resp["body"]) != nil {
			// a streamGenerateContent JSON array handed over whole
			return nil, newErr("wire_format", "a JSON array of responses is a stream, not a generateContent response")
		}
		body = obj{}
	}
	if eb := asObj(body["error"]); eb != nil || status >= 400 {
		if eb == nil {
			eb = obj{}
		}
		if status == 0 {
			status = num(eb["code"])
		}
		return nil, adapterError(status, eb, ctx["request_id"])
	}
	return obj{"message": s.messageFrom(body, ctx)}, nil
}

func canonicalModel(wire string) string {
	wire = strings.TrimPrefix(wire, "models/")
	return providerKey + ":" + wire
}

func (s *server) messageFrom(body obj, ctx obj) obj {
	session := str(ctx["session_id"])
	msgID := str(ctx["message_id"])
	if msgID == "" {
		msgID = newULID()
	}
	created := str(ctx["created_at"])
	if created == "" {
		created = time.Now().UTC().Format("2006-01-02T15:04:05.000000Z")
	}
	model := "gemini:unknown"
	if mv := str(body["modelVersion"]); mv != "" {
		model = canonicalModel(mv)
	} else if cm := str(ctx["model"]); cm != "" {
		model = cm
	}
	cands := list(body["candidates"])
	var content []interface{}
	stop := "end_turn"
	raw := obj{}
	if len(cands) == 0 {
		if pf := asObj(body["promptFeedback"]); str(pf["blockReason"]) != "" {
			stop = "error"
			raw["block_reason"] = pf["blockReason"]
		}
	} else {
		c := asObj(cands[0])
		pr := s.partsToBlocks(session, str(body["responseId"]), list(asObj(c["content"])["parts"]), true, 0)
		content = pr.blocks
		if len(pr.sigs) > 0 {
			raw["signatures"] = pr.sigs
		}
		stop = stopReason(str(c["finishReason"]), pr.hasCalls)
		if fr := str(c["finishReason"]); fr != "" {
			raw["finish_reason"] = fr
		}
	}
	if len(content) == 0 {
		content = []interface{}{obj{"type": "text", "text": ""}}
	}
	var usage interface{}
	if u := usageOf(asObj(body["usageMetadata"])); u != nil {
		u["cost_usd"] = "0"
		u["pricing_version"] = "unpriced"
		u["latency_ms"] = num(ctx["latency_ms"])
		usage = u
	}
	if rid := str(body["responseId"]); rid != "" {
		raw["response_id"] = rid
	}
	meta := obj{
		"model": model, "provider": providerKey,
		"routing": obj{"mode": "default", "chosen_model": model, "reason": "no routing engine"},
		"usage":   usage, "status": statusFor(stop),
	}
	if len(raw) > 0 {
		meta["provider_raw"] = obj{adapterName: raw}
	}
	return obj{"id": msgID, "session_id": session, "role": "assistant", "content": content,
		"metadata": meta, "created_at": created, "schema_version": 1}
}
