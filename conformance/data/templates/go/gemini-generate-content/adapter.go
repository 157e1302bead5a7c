package main

// The `{{name}}` adapter: canonical messages <-> the Gemini API `generateContent` wire API
// (`POST /v1beta/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` for a
// stream: the model and the stream choice travel in the URL), written from Google's API
// reference (ai.google.dev/api/generate-content, ai.google.dev/api/caching#Content) and
// guides (function calling, thinking, thought signatures, image understanding, caching,
// troubleshooting), and the adapter contract (§4.1, §4.2, §6, §7).
//
//   - SYSTEM messages become `systemInstruction.parts` (one text part per text block); USER
//     is `role: user`, ASSISTANT `role: model`; TOOL messages become `functionResponse` parts
//     of one `user` content (consecutive tool messages share it, as parallel results must).
//   - A tool call is a `functionCall` part (`args` a JSON object, `id` optional); its result
//     a `functionResponse` naming the function, `response` `{"output": text}`, or
//     `{"error": text}` when `is_error`. A call the API sent without an id gets a canonical
//     id derived from the reply (its responseId, its position, name and arguments: the same
//     bytes give the same id) and goes back without one; a call first rendered here gets
//     `call_<ULID>`.
//   - Images are `inlineData` (base64) or `fileData` (a URI) parts.
//   - Thought parts (`thought: true`) are thinking blocks. A `thoughtSignature` on another
//     part becomes a thinking block of empty text holding it, just before that part's block,
//     and rides back on the part after it. Signatures are Gemini's own: thinking another
//     provider issued, and redacted thinking, are dropped with the §7.3 WARN record.
//   - Usage: input = promptTokenCount + toolUsePromptTokenCount - cachedContentTokenCount
//     (disjoint buckets), output = candidatesTokenCount + thoughtsTokenCount, cached input =
//     cachedContentTokenCount, cache writes 0 (a cache is made by a call of its own).
//
// What this skeleton does not read: request fields spelled with their proto names
// (`mime_type`), which stay whole as parts of their own, and function-call arguments
// streamed in pieces (`partialArgs`, Vertex AI's `streamFunctionCallArguments`), a located
// error: supports_streaming_tool_calls is false.
//
// Where to extend: a provider that differs from Gemini changes the function named after the
// part of the wire it touches (render.parts, render.toolResults, reply.part, ReadRequest,
// classifyError; stream.go for the two stream framings), with a cassette in
// cassettes/{{name}}/ for each difference.

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

// The adapter's identity (the hello answer says it; Name is in wire.go).
const (
	Provider = "gemini"
	WireAPI  = "gemini-generate-content"
	// PathPrefix is the path before `{model}:generateContent` (Vertex AI's differs:
	// provider_raw `path_prefix`).
	PathPrefix = "/v1beta/models/"
	// ProviderToolID matches every provider tool id this adapter mints.
	ProviderToolID = "^call_[0-9A-HJKMNP-TV-Z]{26}$"
	// noID is the provider-side key of a call the API sent without an id: never sent.
	noID = "noid:"
)

// ImageTypes are the media types Gemini takes as images (image understanding: "Supported
// image formats").
var ImageTypes = []string{"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"}

// Capabilities is canonical §7.2: only what this adapter really does (contract §3.4).
var Capabilities = Object{
	"supports_thinking":          true,
	"supports_images":            true,
	"supports_tools":             true,
	"supports_system_prompt":     true,
	"supports_structured_output": true, // output_schema -> responseMimeType application/json + responseJsonSchema
	"supports_streaming":         true,
	// a streamed functionCall arrives whole in one chunk; its arguments stream only when
	// Vertex AI is asked for streamFunctionCallArguments, which this skeleton does not read
	"supports_streaming_tool_calls":    false,
	"supports_parallel_tool_calls":     true,
	"supports_prompt_caching":          true,    // cachedContentTokenCount (cassettes/{{name}}/cached.yaml exercises it)
	"supports_system_messages_in_list": false,   // one systemInstruction: SYSTEM messages are hoisted
	"max_context_tokens":               1048576, // the served model's limits: set your model's
	"max_output_tokens":                65536,
	"accepted_image_media_types":       ImageTypes,
}

// StopReasons maps a finishReason to the canonical StopReason (generate-content:
// FinishReason).
var StopReasons = map[string]string{
	"STOP":                      "end_turn", // tool_use when the reply carries functionCall parts
	"MAX_TOKENS":                "max_tokens",
	"FINISH_REASON_UNSPECIFIED": "end_turn",
	// a filter withheld (part of) the reply: the turn ended with what was sent
	"SAFETY": "end_turn", "RECITATION": "end_turn", "LANGUAGE": "end_turn", "BLOCKLIST": "end_turn",
	"PROHIBITED_CONTENT": "end_turn", "SPII": "end_turn", "IMAGE_SAFETY": "end_turn",
	"IMAGE_PROHIBITED_CONTENT": "end_turn", "IMAGE_RECITATION": "end_turn", "IMAGE_OTHER": "end_turn",
	"NO_IMAGE": "end_turn", "MODEL_ARMOR": "end_turn", "OTHER": "end_turn",
	// the model's function call could not be used: the turn failed
	"MALFORMED_FUNCTION_CALL": "error", "UNEXPECTED_TOOL_CALL": "error", "TOO_MANY_TOOL_CALLS": "error",
	"MISSING_THOUGHT_SIGNATURE": "error",
}

// statusClasses maps a google.rpc status (the body's `error.status`) to a contract §6.1 class.
var statusClasses = map[string]ErrorClass{
	"RESOURCE_EXHAUSTED":  RateLimit,
	"UNAUTHENTICATED":     Auth,
	"PERMISSION_DENIED":   Auth,
	"INTERNAL":            ServerErr,
	"UNAVAILABLE":         ServerErr,
	"DEADLINE_EXCEEDED":   ServerErr,
	"INVALID_ARGUMENT":    InvalidRequest,
	"FAILED_PRECONDITION": InvalidRequest,
	"NOT_FOUND":           InvalidRequest,
}

// contextOverflow is what an INVALID_ARGUMENT says when the prompt is too long.
var contextOverflow = regexp.MustCompile(`(?i)token count.*exceeds|exceeds the maximum number of tokens|context (window|length)`)

var partKinds = []string{"text", "inlineData", "fileData", "functionCall", "functionResponse"}

// configKeys are the generationConfig fields options carry; the rest go back through
// options.extra.
var configKeys = []string{"maxOutputTokens", "temperature", "stopSequences", "responseMimeType", "responseJsonSchema"}

var modelPath = regexp.MustCompile(`^(.*/models/)([^/:]+):([A-Za-z]+)$`)
var retryDelay = regexp.MustCompile(`^(\d+(?:\.\d+)?)s$`)

// Adapter holds what lives across calls: the tool id maps and the function name of each
// call (a functionResponse names it).
type Adapter struct {
	maps  map[string]*ToolIDMap
	names map[string]map[string]string // session -> canonical call id -> function name
}

// NewAdapter returns an adapter with no session yet.
func NewAdapter() *Adapter {
	return &Adapter{map[string]*ToolIDMap{}, map[string]map[string]string{}}
}

// ToolIDMap is the session's map (canonical §6.2).
func (a *Adapter) ToolIDMap(sessionID string) *ToolIDMap {
	m, ok := a.maps[sessionID]
	if !ok {
		m = NewToolIDMap(func() string { return "call_" + NewULID() })
		a.maps[sessionID] = m
	}
	return m
}

// callID is the canonical id of a wire functionCall: mapped from its id, or derived from key
// when it has none.
func (a *Adapter) callID(sessionID string, wireID any, key ...string) string {
	if id, ok := wireID.(string); ok && id != "" {
		return a.ToolIDMap(sessionID).CanonicalFor(id)
	}
	cid := DerivedToolID(append([]string{sessionID}, key...)...)
	m := a.ToolIDMap(sessionID)
	if _, bound := m.GetProvider(cid); !bound {
		_ = m.Bind(cid, noID+cid) // a fresh pair: both sides are new
	}
	return cid
}

// wireCallID is the id to send for a canonical call ("" when the API issued none).
func (a *Adapter) wireCallID(sessionID, canonicalID string) string {
	pid := a.ToolIDMap(sessionID).ProviderFor(canonicalID)
	if strings.HasPrefix(pid, noID) {
		return ""
	}
	return pid
}

func (a *Adapter) rememberName(sessionID, callID, name string) {
	if a.names[sessionID] == nil {
		a.names[sessionID] = map[string]string{}
	}
	a.names[sessionID][callID] = name
}

// -- canonical -> wire ----------------------------------------------------------------------

// Render is to_wire: the HTTP request for messages, tools and options.
func (a *Adapter) Render(messages []Message, tools []ToolDefinition, options Options, log *Logs) (*WireRequest, error) {
	own := ownRaw(options.ProviderRaw)
	r := &render{a, options, log}
	contents, err := r.contents(messages)
	if err != nil {
		return nil, err
	}
	body := Object{"contents": contents}
	system, err := r.system(messages, own)
	if err != nil {
		return nil, err
	}
	if system != nil {
		body["systemInstruction"] = system
	}
	extras, _ := own["tool_extras"].(Object)
	var wireTools []any
	if len(tools) > 0 {
		decls := make([]any, 0, len(tools))
		for _, t := range tools {
			decls = append(decls, renderTool(t, extras[t.Name]))
		}
		wireTools = append(wireTools, Object{"functionDeclarations": decls})
	}
	for _, t := range options.ProviderTools {
		wireTools = append(wireTools, t)
	}
	if len(wireTools) > 0 {
		body["tools"] = wireTools
	}
	config := Object{}
	more, hasMore := options.Extra["generationConfig"]
	mergeInto(config, more) // a recorded generationConfig's other fields
	if options.MaxOutputTokens != nil {
		config["maxOutputTokens"] = *options.MaxOutputTokens
	}
	if options.Temperature != nil {
		config["temperature"] = *options.Temperature
	}
	if len(options.StopSequences) > 0 {
		config["stopSequences"] = options.StopSequences
	}
	if options.OutputSchema != nil {
		config["responseMimeType"] = "application/json"
		config["responseJsonSchema"] = options.OutputSchema
	}
	if len(config) > 0 || hasMore {
		body["generationConfig"] = config
	}
	for key, value := range options.Extra {
		if _, taken := body[key]; !taken && key != "generationConfig" {
			body[key] = value // provider knobs (contract §3.2: safetySettings, cachedContent) pass through verbatim
		}
	}
	prefix, ok := own["path_prefix"].(string)
	if !ok {
		prefix = PathPrefix
	}
	method, query := "generateContent", ""
	if options.Stream {
		method = "streamGenerateContent"
		if own["framing"] != "json-array" {
			query = "?alt=sse"
		}
	}
	path := prefix + ModelFor(options.Model) + ":" + method + query
	return &WireRequest{"POST", path, map[string]string{"content-type": "application/json"}, body}, nil
}

// render is one to_wire call.
type render struct {
	a       *Adapter
	options Options
	log     *Logs
}

// system is every SYSTEM text block, one part each (the API joins parts as paragraphs).
func (r *render) system(messages []Message, own Object) (Object, error) {
	var parts []any
	for _, m := range messages {
		if m.Role != "system" {
			continue
		}
		for i, b := range m.Content {
			if b.Type == "text" {
				parts = append(parts, Object{"text": b.Text})
			} else if err := r.drop(m, i, b.Type, "systemInstruction carries text only"); err != nil {
				return nil, err
			}
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	out := Object{"parts": parts}
	if role, ok := own["system_role"].(string); ok {
		out["role"] = role
	}
	return out, nil
}

func (r *render) contents(messages []Message) ([]any, error) {
	out := []any{}
	toolGroup := false
	for _, m := range messages {
		if m.Role == "assistant" {
			for _, b := range m.Content {
				if b.Type == "tool_use" {
					r.a.rememberName(m.SessionID, b.ID, b.Name)
				}
			}
		}
		switch m.Role {
		case "system":
			continue
		case "tool":
			parts, err := r.toolResults(m)
			if err != nil {
				return nil, err
			}
			if len(parts) == 0 {
				continue
			}
			if toolGroup {
				last := out[len(out)-1].(Object)
				last["parts"] = append(last["parts"].([]any), parts...) // parallel results share one content
			} else {
				out = append(out, Object{"role": "user", "parts": parts})
				toolGroup = true
			}
			continue
		}
		toolGroup = false
		parts, err := r.parts(m)
		if err != nil {
			return nil, err
		}
		if len(parts) == 0 {
			continue // every block dropped (and logged): no content, since the API refuses an empty one
		}
		role := "user"
		if m.Role == "assistant" {
			role = "model"
		}
		out = append(out, Object{"role": role, "parts": parts})
	}
	return out, nil
}

// parts is a user or assistant message's parts; a signature held by a thinking block of no
// text rides on the next part.
func (r *render) parts(m Message) ([]any, error) {
	var parts []any
	extras := partExtras(m)
	pendingSig := ""
	for i, b := range m.Content {
		kept, _ := extras[strconv.Itoa(i)].(Object)
		switch b.Type {
		case "thinking":
			if why := foreign(m); why != "" {
				if err := r.drop(m, i, "thinking", why); err != nil {
					return nil, err
				}
				continue
			}
			if pendingSig != "" {
				parts = append(parts, Object{"text": "", "thoughtSignature": pendingSig})
				pendingSig = ""
			}
			sig := ""
			if b.Signature != nil {
				sig = *b.Signature
			}
			if b.Text != "" || sig == "" || kept["thought"] == true {
				part := Object{"text": b.Text, "thought": true}
				if sig != "" {
					part["thoughtSignature"] = sig
				}
				parts = append(parts, part)
			} else {
				pendingSig = sig
			}
			continue
		case "redacted_thinking":
			if err := r.drop(m, i, "redacted_thinking", "Gemini has no redacted thinking"); err != nil {
				return nil, err
			}
			continue
		}
		part, err := r.part(m, i, b)
		if err != nil {
			return nil, err
		}
		if part == nil {
			continue
		}
		mergeInto(part, kept["extra"])
		if pendingSig != "" {
			part["thoughtSignature"] = pendingSig
			pendingSig = ""
		}
		parts = append(parts, part)
	}
	if pendingSig != "" {
		parts = append(parts, Object{"text": "", "thoughtSignature": pendingSig}) // as the API ends a stream
	}
	return parts, nil
}

func (r *render) part(m Message, i int, b Block) (Object, error) {
	switch {
	case b.Type == "text":
		return Object{"text": b.Text}, nil
	case b.Type == "image":
		return r.image(m, i, b)
	case b.Type == "tool_use" && m.Role == "assistant":
		call := Object{"name": b.Name, "args": orEmpty(b.Input)}
		if id := r.a.wireCallID(m.SessionID, b.ID); id != "" {
			call["id"] = id
		}
		return Object{"functionCall": call}, nil
	case strings.HasPrefix(b.Type, Name+":") && b.Other != nil && isObject(b.Other["raw"]):
		return copyObject(b.Other["raw"].(Object)), nil // a part this adapter read and kept whole
	}
	return nil, r.drop(m, i, b.Type, fmt.Sprintf("no Gemini part for a %s block in a %s message", b.Type, m.Role))
}

func (r *render) image(m Message, i int, b Block) (Object, error) {
	if b.Source == nil {
		return nil, r.drop(m, i, "image", "an image block without a source")
	}
	media := strings.ToLower(b.MediaType) // IANA media types are case-insensitive
	if b.Source.Kind == "file_ref" {
		return nil, r.drop(m, i, "image", "file_ref images must be inlined by the harness (adapters do no I/O)")
	}
	if !contains(ImageTypes, media) {
		return nil, r.drop(m, i, "image", fmt.Sprintf("media type %s is not accepted (accepted: %s)", media, strings.Join(ImageTypes, ", ")))
	}
	if b.Source.Kind == "url" {
		return Object{"fileData": Object{"mimeType": media, "fileUri": b.Source.Data}}, nil
	}
	return Object{"inlineData": Object{"mimeType": media, "data": b.Source.Data}}, nil
}

// toolResults is a tool message's results, as `functionResponse` parts.
func (r *render) toolResults(m Message) ([]any, error) {
	var out []any
	extras := partExtras(m)
	for i, b := range m.Content {
		if b.Type != "tool_result" {
			if err := r.drop(m, i, b.Type, "a tool message carries tool_result blocks only"); err != nil {
				return nil, err
			}
			continue
		}
		var texts []string
		for _, x := range b.Content {
			if x.Type == "text" {
				texts = append(texts, x.Text)
			} else if err := r.drop(m, i, x.Type, "functionResponse.response carries JSON, not images"); err != nil {
				return nil, err
			}
		}
		kept, _ := extras[strconv.Itoa(i)].(Object)
		var response Object
		if recorded, ok := kept["response"].(Object); ok && sameTexts(recorded, texts, b.IsError) {
			response = recorded // the object the recorded request carried
		} else {
			var value any = ""
			if len(texts) == 1 {
				value = texts[0]
			} else if len(texts) > 1 {
				value = texts
			}
			key := "output"
			if b.IsError {
				key = "error"
			}
			response = Object{key: value}
		}
		name, ok := r.a.names[m.SessionID][b.ToolUseID]
		if !ok {
			if name, ok = kept["name"].(string); !ok {
				name = "tool"
			}
		}
		fr := Object{"name": name, "response": response}
		if id := r.a.wireCallID(m.SessionID, b.ToolUseID); id != "" {
			fr["id"] = id
		}
		part := Object{"functionResponse": fr}
		mergeInto(part, kept["extra"])
		out = append(out, part)
	}
	return out, nil
}

// drop is canonical §4.2.2, §7.3 (dropBlock in wire.go): one WARN record, or a
// CriticalBlockError when the message marks the block critical.
func (r *render) drop(m Message, index int, blockType, reason string) error {
	return dropBlock(r.log, r.options, m, index, blockType, reason)
}

// -- wire -> canonical (replies) --------------------------------------------------------------

// Parse is from_wire_response: a whole response to the canonical assistant message (a
// JSON-array stream decoded whole is its chunks, of one reply).
func (a *Adapter) Parse(resp WireResponse, ctx RequestContext, log *Logs) (*Message, error) {
	body, _ := resp.Body.(Object)
	_, hasError := body["error"]
	_, hasCandidates := body["candidates"]
	if resp.Status >= 400 || (hasError && !hasCandidates) {
		status := resp.Status
		if status < 400 {
			status = 500
		}
		return nil, classifyError(status, resp.Body, resp.Headers)
	}
	chunks, isList := resp.Body.([]any)
	if !isList {
		chunks = []any{resp.Body}
	}
	rp := newReply(a, ctx, log)
	for n, c := range chunks {
		obj, ok := c.(Object)
		if !ok {
			return nil, &WireFormatError{Message: fmt.Sprintf("Gemini response %d is not a JSON object", n)}
		}
		if _, e := obj["error"]; e && obj["candidates"] == nil {
			return nil, classifyError(500, obj, resp.Headers)
		}
		if _, err := rp.chunk(obj, n, 0); err != nil {
			return nil, err
		}
	}
	raw := Object{}
	if rp.responseID != "" {
		raw["responseId"] = rp.responseID
	}
	if rp.wireModel != "" {
		raw["modelVersion"] = rp.wireModel
	}
	if rp.finishReason != "" {
		raw["finishReason"] = rp.finishReason
	}
	status := "complete"
	if rp.stopReason() == "error" {
		status = "error"
	}
	m := Assemble(Provider, ctx, rp.content, rp.wireModel, rp.usage, status)
	m.Metadata["provider_raw"] = Object{Name: raw}
	return &m, nil
}

// partBlock is one part of a reply or of a recorded request (not a thought, no signature)
// as a block.
func (a *Adapter) partBlock(sessionID string, part Object, key ...string) (Block, error) {
	kind := partKind(part)
	only := len(part) == 1
	switch kind {
	case "text":
		text, _ := part["text"].(string)
		return TextBlock(text), nil
	case "functionCall":
		if call, ok := part["functionCall"].(Object); ok {
			args, ok := call["args"].(Object)
			if call["args"] == nil {
				args, ok = Object{}, true
			}
			if !ok {
				return Block{}, &WireFormatError{Message: fmt.Sprintf("functionCall %v args is not a JSON object", call["name"])}
			}
			name, _ := call["name"].(string)
			argsJSON, _ := encodeJSON(args) // map keys sorted: the same arguments spell the same text
			cid := a.callID(sessionID, call["id"], append(key, name, string(argsJSON))...)
			a.rememberName(sessionID, cid, name)
			return Block{Type: "tool_use", ID: cid, Name: name, Input: args}, nil
		}
	case "inlineData":
		blob, _ := part["inlineData"].(Object)
		media, _ := blob["mimeType"].(string)
		data, _ := blob["data"].(string)
		if only && contains(ImageTypes, media) && data != "" {
			return Block{Type: "image", Source: &ImageSource{"base64", data}, MediaType: media}, nil
		}
	case "fileData":
		fd, _ := part["fileData"].(Object)
		media, _ := fd["mimeType"].(string)
		uri, _ := fd["fileUri"].(string)
		if only && contains(ImageTypes, media) && uri != "" && len(fd) == 2 {
			return Block{Type: "image", Source: &ImageSource{"url", uri}, MediaType: media}, nil
		}
	}
	// anything else (documents, audio, executable code, proto-name spellings) stays whole (§10.3)
	k := kind
	if k == "" {
		k = "part"
		for name := range part {
			k = name
			break
		}
	}
	return Block{Type: Name + ":" + k, Other: Object{"type": Name + ":" + k, "raw": part}}, nil
}

// -- wire -> canonical (requests: replay, turnspec's TC802) ---------------------------------------

// ReadRequest is from_wire_request: a recorded request body back to canonical form, the
// model and the stream choice read from `url` (`gemini:unknown` and false without one).
func (a *Adapter) ReadRequest(body Object, sessionID, rawURL string) (*ParsedRequest, error) {
	if sessionID == "" {
		sessionID = "sess_" + strings.ToLower(NewULID())
	}
	sid := sessionID
	u := urlParts(rawURL)
	model := Provider + ":unknown"
	if u.model != "" {
		model = Provider + ":" + u.model
	}
	optRaw := Object{}
	if u.model != "" && u.prefix != PathPrefix {
		optRaw["path_prefix"] = u.prefix
	}
	if u.stream && !u.sse {
		optRaw["framing"] = "json-array"
	}
	messages := []Message{}
	if si, ok := body["systemInstruction"].(Object); ok {
		list, _ := si["parts"].([]any)
		blocks := []Block{}
		for _, p := range list {
			if part, ok := p.(Object); ok {
				text, _ := part["text"].(string)
				blocks = append(blocks, TextBlock(text))
			}
		}
		messages = append(messages, message(sid, "system", blocks, Object{}))
		if role, ok := si["role"].(string); ok {
			optRaw["system_role"] = role
		}
	}
	pending := map[string][]string{} // function name -> id-less calls awaiting a result
	contents, _ := body["contents"].([]any)
	for n, v := range contents {
		c, ok := v.(Object)
		if !ok {
			return nil, &WireFormatError{Message: fmt.Sprintf("contents[%d] is not an object", n)}
		}
		var parts []Object
		list, _ := c["parts"].([]any)
		for _, p := range list {
			if part, ok := p.(Object); ok {
				parts = append(parts, part)
			}
		}
		at := []string{"request", strconv.Itoa(n)}
		if c["role"] == "model" {
			blocks, extras, err := a.readParts(sid, parts, at)
			if err != nil {
				return nil, err
			}
			for _, b := range blocks {
				if b.Type == "tool_use" {
					if pid, _ := a.ToolIDMap(sid).GetProvider(b.ID); pid == noID+b.ID {
						pending[b.Name] = append(pending[b.Name], b.ID)
					}
				}
			}
			meta := Object{"model": model, "provider": Provider}
			if len(extras) > 0 {
				meta["provider_raw"] = Object{Name: Object{"parts": extras}}
			}
			if len(blocks) == 0 {
				blocks = []Block{TextBlock("")}
			}
			messages = append(messages, message(sid, "assistant", blocks, meta))
			continue
		}
		var user []Object
		for _, p := range parts {
			if _, ok := p["functionResponse"].(Object); !ok {
				user = append(user, p)
				continue
			}
			if len(user) > 0 {
				m, err := a.readUser(sid, user, at)
				if err != nil {
					return nil, err
				}
				messages = append(messages, m)
				user = nil
			}
			messages = append(messages, a.readToolResult(sid, p, pending))
		}
		if len(user) > 0 || len(parts) == 0 {
			m, err := a.readUser(sid, user, at)
			if err != nil {
				return nil, err
			}
			messages = append(messages, m)
		}
	}
	tools, native, toolExtras := readTools(body["tools"])
	if len(toolExtras) > 0 {
		optRaw["tool_extras"] = toolExtras
	}
	extra := Object{}
	for k, v := range body {
		if k != "contents" && k != "systemInstruction" && k != "tools" && k != "generationConfig" {
			extra[k] = v
		}
	}
	options := Options{Model: model, StopSequences: []string{}, ProviderTools: native, ProviderRaw: Object{},
		CriticalKey: "critical", Stream: u.stream}
	if config, ok := body["generationConfig"].(Object); ok {
		config = copyObject(config)
		got := Object{}
		for _, k := range configKeys {
			if v, ok := config[k]; ok {
				got[k] = v
				delete(config, k)
			}
		}
		if schema, ok := got["responseJsonSchema"].(Object); ok && got["responseMimeType"] == "application/json" {
			options.OutputSchema = schema
		} else {
			// a schema without the JSON mime type (or the other way round) goes back as it came
			for _, k := range []string{"responseMimeType", "responseJsonSchema"} {
				if v, ok := got[k]; ok {
					config[k] = v
				}
			}
		}
		if n, ok := got["maxOutputTokens"].(json.Number); ok {
			if v, err := n.Int64(); err == nil {
				options.MaxOutputTokens = &v
			}
		}
		if n, ok := got["temperature"].(json.Number); ok {
			if v, err := n.Float64(); err == nil {
				options.Temperature = &v
			}
		}
		stops, _ := got["stopSequences"].([]any)
		for _, s := range stops {
			options.StopSequences = append(options.StopSequences, fmt.Sprint(s))
		}
		extra["generationConfig"] = config
	}
	options.Extra = extra
	if len(optRaw) > 0 {
		options.ProviderRaw = Object{Name: optRaw}
	}
	return &ParsedRequest{messages, tools, options}, nil
}

// readParts is request-history parts as blocks, one per part (a signature on a part that is
// no thought adds a thinking block of empty text holding it, before the part's block), and
// what canonical cannot hold of each, by block index.
func (a *Adapter) readParts(sid string, parts []Object, where []string) ([]Block, Object, error) {
	blocks := []Block{}
	extras := Object{}
	calls := 0
	for j, p := range parts {
		sig, _ := p["thoughtSignature"].(string)
		rest := Object{}
		for k, v := range p {
			if k != "thoughtSignature" && k != "thought" {
				rest[k] = v
			}
		}
		if text, isText := p["text"].(string); p["thought"] == true && isText {
			b := Block{Type: "thinking", Text: text}
			if sig != "" {
				b.Signature = &sig
				if text == "" {
					extras[strconv.Itoa(len(blocks))] = Object{"thought": true} // an empty thought part, not a bare signature
				}
			}
			blocks = append(blocks, b)
			continue
		}
		if sig != "" {
			s := sig
			blocks = append(blocks, Block{Type: "thinking", Signature: &s})
			if len(rest) == 1 && rest["text"] == "" {
				continue // a part that only carries the signature
			}
		}
		kind := partKind(p)
		block, err := a.partBlock(sid, p, append(append([]string{}, where...), strconv.Itoa(j), strconv.Itoa(calls))...)
		if err != nil {
			return nil, nil, err
		}
		if kind == "functionCall" {
			calls++
		}
		own := Object{}
		for k, v := range rest {
			if k != kind {
				own[k] = v
			}
		}
		if kind != "" && len(own) > 0 {
			extras[strconv.Itoa(len(blocks))] = Object{"extra": own} // e.g. videoMetadata beside its fileData
		}
		blocks = append(blocks, block)
	}
	return blocks, extras, nil
}

func (a *Adapter) readUser(sid string, parts []Object, where []string) (Message, error) {
	blocks, extras, err := a.readParts(sid, parts, where)
	if err != nil {
		return Message{}, err
	}
	meta := Object{}
	if len(extras) > 0 {
		meta["provider_raw"] = Object{Name: Object{"parts": extras}}
	}
	if len(blocks) == 0 {
		blocks = []Block{TextBlock("")}
	}
	return message(sid, "user", blocks, meta), nil
}

func (a *Adapter) readToolResult(sid string, part Object, pending map[string][]string) Message {
	fr := part["functionResponse"].(Object)
	name, _ := fr["name"].(string)
	var cid string
	if id, ok := fr["id"].(string); ok && id != "" {
		cid = a.ToolIDMap(sid).CanonicalFor(id)
	} else if waiting := pending[name]; len(waiting) > 0 {
		cid, pending[name] = waiting[0], waiting[1:] // id-less: the oldest unanswered call of that name
	} else {
		cid = a.callID(sid, nil, "orphan-result", name)
	}
	response, _ := fr["response"].(Object)
	texts, isError := responseTexts(response)
	result := Block{Type: "tool_result", ToolUseID: cid, Content: []Block{}, IsError: isError}
	for _, t := range texts {
		result.Content = append(result.Content, TextBlock(t))
	}
	kept := Object{"name": name}
	if !plainResponse(response) {
		kept["response"] = response // an object {output|error: text} does not rebuild: sent back as it came
	}
	own := Object{}
	for k, v := range part {
		if k != "functionResponse" {
			own[k] = v
		}
	}
	if len(own) > 0 {
		kept["extra"] = own
	}
	meta := Object{"parent_tool_use_id": cid, "provider_raw": Object{Name: Object{"parts": Object{"0": kept}}}}
	return message(sid, "tool", []Block{result}, meta)
}

// readTools is function declarations as canonical tools; any other tool (googleSearch,
// codeExecution) stays a provider tool.
func readTools(wire any) ([]ToolDefinition, []Object, Object) {
	tools := []ToolDefinition{}
	native := []Object{}
	extras := Object{}
	list, _ := wire.([]any)
	for _, item := range list {
		t, ok := item.(Object)
		if !ok {
			continue
		}
		decls, ok := t["functionDeclarations"].([]any)
		if !ok || len(t) != 1 {
			native = append(native, t)
			continue
		}
		for _, dv := range decls {
			d, ok := dv.(Object)
			if !ok {
				continue
			}
			schemaKey := ""
			for _, k := range []string{"parametersJsonSchema", "parameters"} {
				if _, ok := d[k]; ok {
					schemaKey = k
					break
				}
			}
			schema, ok := d[schemaKey].(Object)
			if !ok {
				schema = Object{"type": "object", "properties": Object{}}
			}
			name, _ := d["name"].(string)
			description, _ := d["description"].(string)
			// the wire does not say what a tool does: "execute" is the most careful reading
			tools = append(tools, ToolDefinition{Name: name, Description: description, InputSchema: schema, SideEffects: "execute"})
			extra := Object{}
			for k, v := range d {
				if k != "name" && k != "description" && k != schemaKey {
					extra[k] = v
				}
			}
			if schemaKey != "parametersJsonSchema" {
				if schemaKey == "" {
					schemaKey = "parametersJsonSchema"
				}
				extra["_schema_key"] = schemaKey // the OpenAPI-subset `parameters` goes back as it came
			}
			if v, ok := d["description"]; ok && v == nil {
				extra["description"] = nil
			}
			if len(extra) > 0 {
				extras[name] = extra
			}
		}
	}
	return tools, native, extras
}

// -- estimates (contract §3.1 estimate_input_tokens) ----------------------------------------------

// Estimate is a heuristic, as the contract allows: about 4 characters a token, one of
// framing per content, 258 tokens per 768 px image tile (image understanding; 4 tiles for an
// image of unknown size), about 6 plus 3/5 of its JSON's tokens for a function declaration.
// Gemini's countTokens method does better.
func (a *Adapter) Estimate(messages []Message, tools []ToolDefinition) int64 {
	n := int64(0)
	for _, m := range messages {
		n++
		for _, b := range m.Content {
			n += blockTokens(b)
		}
	}
	for _, t := range tools {
		n += 6 + (jsonTokens(t.InputSchema)+textTokens(t.Name+" "+t.Description))*3/5
	}
	return n
}

func blockTokens(b Block) int64 {
	switch b.Type {
	case "text":
		return textTokens(b.Text)
	case "tool_use":
		input, _ := encodeJSON(orEmpty(b.Input))
		return 2 + textTokens(b.Name) + textTokens(string(input))
	case "tool_result":
		n := int64(4)
		for _, inner := range b.Content {
			n += blockTokens(inner)
		}
		return n
	case "image":
		return 4 * 258
	}
	return 0 // thought text sent back is not counted
}

// -- a reply's chunks, one at a time (a whole response is one chunk) ------------------------

// reply is the blocks and events of a reply (one code path for a whole response and for
// each chunk of a stream, so a stream's aggregate equals the parse). Consecutive text parts
// merge into one text block and consecutive unsigned thought parts into one thinking block:
// the API cuts a streamed part anywhere, so part boundaries carry no meaning in a reply.
type reply struct {
	a            *Adapter
	ctx          RequestContext
	log          *Logs
	mid          string
	content      []Block
	silent       []SilentBlock // blocks no stream event carries (a part kept whole), for a cancel
	usage        *TokenUsage
	finishReason string
	blockReason  string
	wireModel    string
	responseID   string
	calls        int
}

func newReply(a *Adapter, ctx RequestContext, log *Logs) *reply {
	r := &reply{a: a, ctx: ctx, log: log, mid: NewULID()}
	if ctx.MessageID != nil {
		r.mid = *ctx.MessageID
	}
	return r
}

// chunk is one GenerateContentResponse: the events it adds (position locates a malformed
// one; before is how many events the stream produced before it).
func (r *reply) chunk(obj Object, position, before int) ([]StreamEvent, error) {
	out := []StreamEvent{}
	if v, ok := obj["modelVersion"].(string); ok && v != "" {
		r.wireModel = v
	}
	if v, ok := obj["responseId"].(string); ok && v != "" {
		r.responseID = v
	}
	if fb, ok := obj["promptFeedback"].(Object); ok {
		if v, ok := fb["blockReason"].(string); ok {
			r.blockReason = v
		}
	}
	cands, ok := obj["candidates"].([]any)
	if !ok && obj["candidates"] != nil {
		return nil, &WireFormatError{Message: fmt.Sprintf("event %d: `candidates` is not a list", position)}
	}
	if len(cands) > 1 && position == 0 {
		r.log.Warning(fmt.Sprintf("%s: %d candidates; the canonical message keeps candidate 0", Name, len(cands)),
			Object{"event": "candidates_dropped", "adapter": Name})
	}
	if len(cands) > 0 {
		cand, ok := cands[0].(Object)
		if !ok {
			return nil, &WireFormatError{Message: fmt.Sprintf("event %d: candidates[0] is not an object", position)}
		}
		content, _ := cand["content"].(Object)
		parts, ok := content["parts"].([]any)
		if !ok && content["parts"] != nil {
			return nil, &WireFormatError{Message: fmt.Sprintf("event %d: candidates[0].content.parts is not a list", position)}
		}
		for _, pv := range parts {
			p, ok := pv.(Object)
			if !ok {
				return nil, &WireFormatError{Message: fmt.Sprintf("event %d: a part is not an object", position)}
			}
			if err := r.part(p, position, &out, before); err != nil {
				return nil, err
			}
		}
		if v, ok := cand["finishReason"].(string); ok {
			r.finishReason = v
		}
	}
	if usage := UsageFromWire(obj["usageMetadata"]); usage != nil {
		r.usage = usage // cumulative in every chunk: the latest wins
		out = append(out, StreamEvent{"type": "usage_update", "message_id": r.mid, "usage": *usage})
	}
	return out, nil
}

func (r *reply) part(p Object, position int, out *[]StreamEvent, before int) error {
	sig, _ := p["thoughtSignature"].(string)
	last := len(r.content) - 1
	if p["thought"] == true {
		text, _ := p["text"].(string)
		k := last
		if last >= 0 && r.content[last].Type == "thinking" && r.content[last].Signature == nil {
			r.content[last].Text += text
		} else {
			k = len(r.content)
			r.content = append(r.content, Block{Type: "thinking", Text: text})
		}
		if text != "" {
			*out = append(*out, StreamEvent{"type": "thinking_delta", "message_id": r.mid, "content_block_index": k, "text": text, "signature": nil})
		}
		if sig != "" {
			s := sig
			r.content[k].Signature = &s
			*out = append(*out, StreamEvent{"type": "thinking_delta", "message_id": r.mid, "content_block_index": k, "text": "", "signature": sig})
		}
		return nil
	}
	if sig != "" {
		s := sig
		r.content = append(r.content, Block{Type: "thinking", Signature: &s})
		*out = append(*out, StreamEvent{"type": "thinking_delta", "message_id": r.mid, "content_block_index": len(r.content) - 1, "text": "", "signature": sig})
	}
	kind := partKind(p)
	if kind == "text" {
		text, _ := p["text"].(string)
		if text == "" {
			return nil
		}
		k := len(r.content) - 1
		if k >= 0 && r.content[k].Type == "text" {
			r.content[k].Text += text
		} else {
			k = len(r.content)
			r.content = append(r.content, TextBlock(text))
		}
		*out = append(*out, StreamEvent{"type": "text_delta", "message_id": r.mid, "content_block_index": k, "text": text})
		return nil
	}
	if call, ok := p["functionCall"].(Object); ok && kind == "functionCall" {
		if _, partial := call["partialArgs"]; partial || call["willContinue"] == true {
			return &WireFormatError{Message: fmt.Sprintf("event %d: functionCall arguments streamed in pieces (partialArgs), which this adapter does not read", position)}
		}
	}
	key := []string{"response", r.responseID, strconv.Itoa(r.calls)}
	if kind == "functionCall" {
		r.calls++
	}
	block, err := r.a.partBlock(r.ctx.SessionID, p, key...)
	if err != nil {
		return err
	}
	k := len(r.content)
	r.content = append(r.content, block)
	if block.Type == "tool_use" {
		*out = append(*out,
			StreamEvent{"type": "tool_use_start", "message_id": r.mid, "content_block_index": k, "tool_use_id": block.ID, "tool_name": block.Name},
			StreamEvent{"type": "tool_use_end", "message_id": r.mid, "content_block_index": k, "tool_use_id": block.ID, "final_input": block.Input})
	} else {
		r.silent = append(r.silent, SilentBlock{Index: k, At: before + len(*out), Block: block})
	}
	return nil
}

// stopReason is finishReason per StopReasons, STOP with function calls as tool_use, a
// blocked prompt as error.
func (r *reply) stopReason() string {
	if r.finishReason == "" {
		if r.blockReason != "" {
			return "error"
		}
		return "end_turn"
	}
	stop, ok := StopReasons[r.finishReason]
	if !ok {
		r.log.Warning(fmt.Sprintf("%s: undocumented finishReason %q read as end_turn", Name, r.finishReason),
			Object{"event": "unknown_stop_reason", "adapter": Name, "stop_reason": r.finishReason})
		stop = "end_turn"
	}
	if r.finishReason == "STOP" {
		for _, b := range r.content {
			if b.Type == "tool_use" {
				return "tool_use"
			}
		}
	}
	return stop
}

// -- helpers -----------------------------------------------------------------------------------

// foreign says why a thinking block of m cannot go back ("" when it can): thought parts and
// signatures are Gemini's own.
func foreign(m Message) string {
	provider, _ := m.Metadata["provider"].(string)
	if provider == Provider {
		return ""
	}
	if provider == "" {
		provider = "an unknown provider"
	}
	return "thinking issued by " + provider + "; thought parts and thoughtSignature are Gemini's own state"
}

// partExtras is what canonical cannot hold of a message's parts, by block index.
func partExtras(m Message) Object {
	parts, _ := ownRaw(m.Metadata["provider_raw"])["parts"].(Object)
	return parts
}

func partKind(part Object) string {
	for _, k := range partKinds {
		if v, ok := part[k]; ok && v != nil {
			return k
		}
	}
	return ""
}

func renderTool(t ToolDefinition, extra any) Object {
	schema := t.InputSchema
	if schema == nil {
		schema = Object{"type": "object", "properties": Object{}}
	}
	kept := Object{}
	mergeInto(kept, extra)
	key, ok := kept["_schema_key"].(string)
	if !ok {
		key = "parametersJsonSchema"
	}
	delete(kept, "_schema_key")
	decl := Object{"name": t.Name, "description": t.Description, key: schema}
	mergeInto(decl, kept)
	return decl
}

// responseTexts is the texts and error flag of a functionResponse.response, per the
// documented `output` / `error` keys.
func responseTexts(response Object) ([]string, bool) {
	if len(response) == 0 {
		return nil, false
	}
	key := ""
	if len(response) == 1 {
		for k := range response {
			if k == "output" || k == "error" {
				key = k
			}
		}
	}
	if key == "" {
		text, _ := encodeJSON(response)
		_, isError := response["error"]
		return []string{string(text)}, isError
	}
	switch v := response[key].(type) {
	case string:
		if v == "" {
			return nil, key == "error"
		}
		return []string{v}, key == "error"
	case []any:
		if texts, ok := allStrings(v); ok && len(texts) > 1 {
			return texts, key == "error"
		}
	}
	text, _ := encodeJSON(response[key])
	return []string{string(text)}, key == "error"
}

// plainResponse says whether `{output|error: text}` rebuilds this response exactly.
func plainResponse(response Object) bool {
	if len(response) == 0 {
		return true
	}
	if len(response) != 1 {
		return false
	}
	for k, v := range response {
		if k != "output" && k != "error" {
			return false
		}
		switch v := v.(type) {
		case string:
			return true
		case []any:
			_, ok := allStrings(v)
			return ok && len(v) > 1
		}
	}
	return false
}

func sameTexts(recorded Object, texts []string, isError bool) bool {
	got, gotError := responseTexts(recorded)
	if gotError != isError || len(got) != len(texts) {
		return false
	}
	for i := range got {
		if got[i] != texts[i] {
			return false
		}
	}
	return true
}

func allStrings(list []any) ([]string, bool) {
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// requestURL is what a request's URL says: `.../models/{model}:method[?alt=sse]`.
type requestURL struct {
	model, prefix string
	stream, sse   bool
}

func urlParts(rawURL string) requestURL {
	w := requestURL{prefix: PathPrefix}
	if rawURL == "" {
		return w
	}
	path, query := rawURL, ""
	if i := strings.Index(rawURL, "?"); i >= 0 {
		path, query = rawURL[:i], rawURL[i+1:]
	}
	if u, err := url.Parse(path); err == nil && u.Host != "" {
		path = u.Path
	}
	values, _ := url.ParseQuery(query)
	w.sse = values.Get("alt") == "sse"
	m := modelPath.FindStringSubmatch(path)
	if m == nil {
		return w
	}
	model, err := url.PathUnescape(m[2])
	if err != nil {
		model = m[2]
	}
	w.model, w.prefix, w.stream = model, m[1], m[3] == "streamGenerateContent"
	return w
}

// ModelFor is the model id the provider knows: the canonical id without its `gemini:`
// prefix (canonical §6.3; the rest is opaque, `:` and all).
func ModelFor(model string) string {
	if rest := strings.TrimPrefix(model, Provider+":"); rest != model && rest != "" {
		return rest
	}
	return model
}

// UsageFromWire is `usageMetadata` as TokenUsage (contract §7.2), nil when absent.
func UsageFromWire(usage any) *TokenUsage {
	u, ok := usage.(Object)
	if !ok {
		return nil
	}
	cached := number(u["cachedContentTokenCount"])
	input := number(u["promptTokenCount"]) + number(u["toolUsePromptTokenCount"]) - cached
	if input < 0 {
		input = 0
	}
	// an explicit cache is made by a cachedContents call of its own: no cache writes here
	return &TokenUsage{InputTokens: input, OutputTokens: number(u["candidatesTokenCount"]) + number(u["thoughtsTokenCount"]),
		CachedInputTokens: cached}
}

// classifyError is adapter contract §6.2, §6.3 for Google's `{"error": {code, message,
// status, details}}`: the class of the HTTP status, refined by `status` (the google.rpc
// code's name) and `details[].reason`, with the request id header and a rate limit's
// `RetryInfo.retryDelay`.
func classifyError(status int, body any, headers map[string]string) *AdapterError {
	obj, _ := body.(Object)
	errObj, hasErr := obj["error"].(Object)
	h := lowerKeys(headers)
	e := &AdapterError{ProviderStatus: &status}
	for _, k := range []string{"x-request-id", "x-goog-request-id"} {
		if id, ok := h[k]; ok {
			e.RequestID = &id
			break
		}
	}
	if !hasErr {
		e.Class = classForStatus(status)
		e.Message = fmt.Sprintf("HTTP %d: %s", status, errorText(body, nil))
		return e
	}
	gstatus, _ := errObj["status"].(string)
	msg, _ := errObj["message"].(string)
	details, _ := errObj["details"].([]any)
	class, ok := statusClasses[gstatus]
	for _, d := range details {
		if detail, _ := d.(Object); detail["reason"] == "API_KEY_INVALID" {
			class, ok = Auth, true // the docs' example: 400 INVALID_ARGUMENT "API key not valid"
		}
	}
	if class != Auth && gstatus == "INVALID_ARGUMENT" && contextOverflow.MatchString(msg) {
		class, ok = ContextOverflow, true
	}
	if !ok {
		class = classForStatus(status)
	}
	e.Class = class
	for _, d := range details {
		detail, _ := d.(Object)
		if kind, _ := detail["@type"].(string); strings.HasSuffix(kind, "RetryInfo") {
			delay, _ := detail["retryDelay"].(string)
			if m := retryDelay.FindStringSubmatch(delay); m != nil {
				if v, err := strconv.ParseFloat(m[1], 64); err == nil {
					e.RetryAfter = &v
				}
			}
		}
	}
	label := gstatus
	if label == "" {
		label = fmt.Sprint(errObj["code"])
	}
	e.Message = label + ": " + msg
	return e
}
