package main

// The `{{name}}` adapter: canonical messages <-> the OpenAI Chat Completions wire API
// (`POST /v1/chat/completions`), written from OpenAI's API reference
// (platform.openai.com/docs/api-reference/chat) and the adapter contract (§4.1, §4.3, §6, §7).
//
//   - SYSTEM messages become one first `role: system` message (texts joined by a blank line).
//   - Tool calls are `tool_calls[]` on the assistant message, `function.arguments` a JSON
//     string; results are `role: tool` messages with `tool_call_id`. Canonical tool ids
//     (`tu_<ULID>`) map to the provider's (`call_...`) through one ToolIDMap per session.
//   - Images are `image_url` parts (base64 as a `data:` URL). A tool message takes text only.
//   - Thinking has no Chat Completions field: dropped with the §7.3 WARN record; the
//     `is_error` flag of a tool result (the wire has none) is reported by a WARN record too.
//   - Usage: input_tokens = prompt_tokens - cached_tokens (disjoint buckets), output_tokens =
//     completion_tokens, cached_input_tokens = prompt_tokens_details.cached_tokens.
//
// Where to extend: a provider that differs from OpenAI changes the function named after the
// part of the wire it touches (render.user, render.assistant, render.tool, parseMessage,
// classifyError; stream.go for streams), with a cassette in cassettes/{{name}}/ for each
// difference.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The adapter's identity (the hello answer says it).
const (
	Provider = "openai"
	WireAPI  = "openai-chat-completions"
	Path     = "/v1/chat/completions"
	// ProviderToolID matches every provider tool id this adapter mints.
	ProviderToolID = "^call_[0-9A-HJKMNP-TV-Z]{26}$"
	// urlImageMediaType is a URL image's media type when this adapter did not render it.
	urlImageMediaType = "image/jpeg"
)

// ImageTypes are the media types Chat Completions takes as images.
var ImageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// Capabilities is canonical §7.2: only what this adapter really does (contract §3.4).
var Capabilities = Object{
	"supports_thinking":             false, // Chat Completions carries no thinking: dropped with WARN
	"supports_images":               true,
	"supports_tools":                true,
	"supports_system_prompt":        true,
	"supports_structured_output":    true, // output_schema -> response_format json_schema
	"supports_streaming":            true,
	"supports_streaming_tool_calls": true,
	"supports_parallel_tool_calls":  true,
	// true needs a cassette whose case exercises it (turnspec's TC002): add one, then say so
	"supports_prompt_caching":          false,
	"supports_system_messages_in_list": true,
	"max_context_tokens":               128000, // the served model's limits: set your model's
	"max_output_tokens":                16384,
	"accepted_image_media_types":       ImageTypes,
}

// StopReasons maps a finish_reason to the canonical StopReason (chat/object: finish_reason).
var StopReasons = map[string]string{
	"stop":           "end_turn",
	"length":         "max_tokens",
	"tool_calls":     "tool_use",
	"function_call":  "tool_use", // the deprecated functions API
	"content_filter": "end_turn", // the filter omitted content; the turn still ended
}

// errorCodes are the body's `error.code`s that refine the status's class (contract §6.2).
var errorCodes = map[string]ErrorClass{
	"rate_limit_exceeded":     RateLimit,
	"context_length_exceeded": ContextOverflow,
	"invalid_api_key":         Auth,
}

var messageKeys = map[string]bool{"role": true, "content": true, "tool_calls": true, "tool_call_id": true}

// Adapter holds what lives across calls: the tool id maps and the media types of the URL
// images it rendered.
type Adapter struct {
	maps     map[string]*ToolIDMap
	urlMedia map[[2]string]string // (session, url) -> media type: the wire carries none
}

// NewAdapter returns an adapter with no session yet.
func NewAdapter() *Adapter {
	return &Adapter{map[string]*ToolIDMap{}, map[[2]string]string{}}
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

// -- canonical -> wire ----------------------------------------------------------------------

// Render is to_wire: the HTTP request for messages, tools and options.
func (a *Adapter) Render(messages []Message, tools []ToolDefinition, options Options, log *Logs) (*WireRequest, error) {
	r := &render{a, options, log}
	wireMessages, err := r.messages(messages)
	if err != nil {
		return nil, err
	}
	body := Object{"model": ModelFor(options.Model), "messages": wireMessages}
	own := ownRaw(options.ProviderRaw)
	extras, _ := own["tool_extras"].(Object)
	var wireTools []any
	for _, t := range tools {
		wireTools = append(wireTools, renderTool(t, extras[t.Name]))
	}
	for _, t := range options.ProviderTools {
		wireTools = append(wireTools, t)
	}
	if len(wireTools) > 0 {
		body["tools"] = wireTools
	}
	if options.MaxOutputTokens != nil {
		body["max_completion_tokens"] = *options.MaxOutputTokens
	}
	if len(options.StopSequences) > 0 {
		body["stop"] = options.StopSequences
	}
	if options.Temperature != nil {
		body["temperature"] = *options.Temperature
	}
	if options.Stream {
		body["stream"] = true
		body["stream_options"] = Object{"include_usage": true} // contract §7.2: usage in streams
	}
	if options.OutputSchema != nil {
		format := Object{"name": "output", "strict": true}
		if own, ok := own["json_schema"].(Object); ok {
			format = copyObject(own)
		}
		format["schema"] = options.OutputSchema
		body["response_format"] = Object{"type": "json_schema", "json_schema": format}
	}
	for key, value := range options.Extra {
		if v, ok := value.(Object); ok && key == "stream_options" && options.Stream {
			merged := copyObject(v)
			merged["include_usage"] = true
			body[key] = merged
		} else if _, taken := body[key]; !taken {
			body[key] = value // provider knobs (contract §3.2) pass through verbatim
		}
	}
	return &WireRequest{"POST", Path, map[string]string{"content-type": "application/json"}, body}, nil
}

// render is one to_wire call.
type render struct {
	a       *Adapter
	options Options
	log     *Logs
}

func (r *render) messages(messages []Message) ([]any, error) {
	out := []any{}
	system, err := r.system(messages)
	if err != nil {
		return nil, err
	}
	if system != nil {
		out = append(out, system)
	}
	for _, m := range messages {
		var wire []Object
		switch m.Role {
		case "user":
			wire, err = r.user(m)
		case "assistant":
			wire, err = r.assistant(m)
		case "tool":
			wire, err = r.tool(m)
		}
		if err != nil {
			return nil, err
		}
		for _, w := range wire {
			out = append(out, w)
		}
	}
	return out, nil
}

// system joins every SYSTEM message's text into the first message (contract §4.1.2, §4.3).
func (r *render) system(messages []Message) (Object, error) {
	var texts []string
	role := "system"
	extra := Object{}
	for _, m := range messages {
		if m.Role != "system" {
			continue
		}
		raw := ownRaw(m.Metadata["provider_raw"])
		if s, ok := raw["role"].(string); ok {
			role = s
		}
		if more, ok := raw["message"].(Object); ok {
			for k, v := range more {
				extra[k] = v
			}
		}
		for i, b := range m.Content {
			if b.Type == "text" {
				texts = append(texts, b.Text)
			} else if err := r.drop(m, i, b.Type, "system prompts carry text only"); err != nil {
				return nil, err
			}
		}
	}
	if len(texts) == 0 {
		return nil, nil
	}
	out := Object{"role": role, "content": strings.Join(texts, "\n\n")}
	for k, v := range extra {
		out[k] = v
	}
	return out, nil
}

func (r *render) user(m Message) ([]Object, error) {
	raw := ownRaw(m.Metadata["provider_raw"])
	var parts []Object
	for i, b := range m.Content {
		switch {
		case b.Type == "text":
			parts = append(parts, Object{"type": "text", "text": b.Text})
		case b.Type == "image":
			part, err := r.image(m, i, b)
			if err != nil {
				return nil, err
			}
			if part != nil {
				parts = append(parts, part)
			}
		case strings.HasPrefix(b.Type, Name+":") && b.Other != nil && isObject(b.Other["raw"]):
			parts = append(parts, b.Other["raw"].(Object)) // a part this adapter read and kept whole
		default:
			if err := r.drop(m, i, b.Type, fmt.Sprintf("no Chat Completions equivalent for a %s block in a user message", b.Type)); err != nil {
				return nil, err
			}
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	var content any = parts
	if len(parts) == 1 && parts[0]["type"] == "text" && raw["parts"] != true {
		content = parts[0]["text"]
	}
	out := Object{"role": "user", "content": content}
	mergeInto(out, raw["message"])
	return []Object{out}, nil
}

func (r *render) image(m Message, i int, b Block) (Object, error) {
	if b.Source == nil {
		return nil, r.drop(m, i, "image", "an image block without a source")
	}
	media := strings.ToLower(b.MediaType) // IANA media types are case-insensitive
	var url string
	switch b.Source.Kind {
	case "url":
		url = b.Source.Data
		r.a.urlMedia[[2]string{m.SessionID, url}] = media
	case "base64":
		if !contains(ImageTypes, media) {
			return nil, r.drop(m, i, "image", fmt.Sprintf("media type %s is not accepted (accepted: %s)", media, strings.Join(ImageTypes, ", ")))
		}
		url = "data:" + media + ";base64," + b.Source.Data
	default:
		return nil, r.drop(m, i, "image", "file_ref images must be inlined by the harness (adapters do no I/O)")
	}
	image := Object{"url": url}
	if details, ok := ownRaw(m.Metadata["provider_raw"])["image_detail"].(Object); ok {
		if d, ok := details[strconv.Itoa(i)].(string); ok {
			image["detail"] = d
		}
	}
	return Object{"type": "image_url", "image_url": image}, nil
}

func (r *render) assistant(m Message) ([]Object, error) {
	var texts []string
	var calls []any
	var refusal *string // the block read from the message's `refusal` goes back in that field
	refusalAt := -1
	if n, ok := ownRaw(m.Metadata["provider_raw"])["refusal_index"].(json.Number); ok {
		refusalAt = int(number(n))
	}
	for i, b := range m.Content {
		switch b.Type {
		case "text":
			if i == refusalAt {
				text := b.Text
				refusal = &text
				continue
			}
			texts = append(texts, b.Text)
		case "tool_use":
			args, err := encodeJSON(orEmpty(b.Input))
			if err != nil {
				return nil, err
			}
			calls = append(calls, Object{
				"id":       r.a.ToolIDMap(m.SessionID).ProviderFor(b.ID),
				"type":     "function",
				"function": Object{"name": b.Name, "arguments": string(args)},
			})
		case "thinking", "redacted_thinking":
			if err := r.drop(m, i, b.Type, "Chat Completions has no thinking blocks (adapter contract §4.3)"); err != nil {
				return nil, err
			}
		default:
			if err := r.drop(m, i, b.Type, fmt.Sprintf("no Chat Completions equivalent for a %s block in an assistant message", b.Type)); err != nil {
				return nil, err
			}
		}
	}
	if len(texts) == 0 && len(calls) == 0 && refusal == nil {
		return nil, nil
	}
	wire := Object{"role": "assistant", "content": nil}
	if len(texts) == 1 {
		wire["content"] = texts[0]
	} else if len(texts) > 1 {
		wire["content"] = textParts(texts)
	}
	if refusal != nil {
		wire["refusal"] = *refusal
	}
	if len(calls) > 0 {
		wire["tool_calls"] = calls
	}
	mergeInto(wire, ownRaw(m.Metadata["provider_raw"])["message"])
	return []Object{wire}, nil
}

func (r *render) tool(m Message) ([]Object, error) {
	var out []Object
	for i, b := range m.Content {
		if b.Type != "tool_result" {
			if err := r.drop(m, i, b.Type, "a tool message carries tool_result blocks only"); err != nil {
				return nil, err
			}
			continue
		}
		var texts []string
		for _, inner := range b.Content {
			if inner.Type == "text" {
				texts = append(texts, inner.Text)
			} else if err := r.drop(m, i, inner.Type, "Chat Completions tool messages take text only, not "+inner.Type); err != nil {
				return nil, err
			}
		}
		if b.IsError {
			r.log.Warning(fmt.Sprintf("%s: tool_result is_error of message %s has no wire field", Name, m.ID), Object{
				"event": "field_dropped", "adapter": Name, "session_id": m.SessionID, "message_id": m.ID,
				"field": "is_error", "reason": "Chat Completions tool messages have no error flag",
			})
		}
		// a string, or a non-empty list of text parts (the API refuses `[]`)
		var content any = ""
		if len(texts) == 1 {
			content = texts[0]
		} else if len(texts) > 1 {
			content = textParts(texts)
		}
		out = append(out, Object{"role": "tool", "tool_call_id": r.a.ToolIDMap(m.SessionID).ProviderFor(b.ToolUseID), "content": content})
	}
	return out, nil
}

// drop is canonical §4.2.2, §7.3 (dropBlock in wire.go): one WARN record, or a
// CriticalBlockError when the message marks the block critical.
func (r *render) drop(m Message, index int, blockType, reason string) error {
	return dropBlock(r.log, r.options, m, index, blockType, reason)
}

func renderTool(t ToolDefinition, extra any) Object {
	schema := t.InputSchema
	if schema == nil {
		schema = Object{"type": "object", "properties": Object{}}
	}
	fn := Object{"name": t.Name, "description": t.Description, "parameters": schema}
	mergeInto(fn, extra) // e.g. `strict`, read from a recorded request
	return Object{"type": "function", "function": fn}
}

// -- wire -> canonical (replies) --------------------------------------------------------------

// Parse is from_wire_response: a whole response to the canonical assistant message.
func (a *Adapter) Parse(resp WireResponse, ctx RequestContext, log *Logs) (*Message, error) {
	body, _ := resp.Body.(Object)
	_, hasError := body["error"]
	_, hasChoices := body["choices"]
	if resp.Status >= 400 || (hasError && !hasChoices) {
		status := resp.Status
		if status < 400 {
			status = 500
		}
		return nil, classifyError(status, resp.Body, resp.Headers)
	}
	choices, _ := body["choices"].([]any)
	if len(choices) == 0 {
		return nil, &WireFormatError{Message: "Chat Completions response has no choices"}
	}
	if len(choices) > 1 {
		log.Warning(fmt.Sprintf("%s: %d choices; the canonical message keeps choice 0", Name, len(choices)),
			Object{"event": "choices_dropped", "adapter": Name})
	}
	choice, _ := choices[0].(Object)
	msg, _ := choice["message"].(Object)
	content, err := a.parseMessage(ctx.SessionID, msg)
	if err != nil {
		return nil, err
	}
	StopReason(choice["finish_reason"], log)
	model, _ := body["model"].(string)
	m := Assemble(Provider, ctx, content, model, UsageFromWire(body["usage"]), "complete")
	return &m, nil
}

// parseMessage is a reply message's blocks: its text (content, or a refusal), then its
// tool calls.
func (a *Adapter) parseMessage(sessionID string, msg Object) ([]Block, error) {
	var content []Block
	for _, t := range textsOf(msg["content"]) {
		content = append(content, TextBlock(t))
	}
	if refusal, ok := msg["refusal"].(string); ok && refusal != "" {
		content = append(content, TextBlock(refusal)) // no refusal block: the refusal is the reply
	}
	calls, _ := msg["tool_calls"].([]any)
	for _, c := range calls {
		call, _ := c.(Object)
		use, err := a.parseToolCall(sessionID, call)
		if err != nil {
			return nil, err
		}
		content = append(content, use)
	}
	return content, nil
}

func (a *Adapter) parseToolCall(sessionID string, call Object) (Block, error) {
	fn, _ := call["function"].(Object)
	args, _ := fn["arguments"].(string)
	id, ok := call["id"].(string)
	input := jsonObject(args)
	if input == nil || !ok {
		return Block{}, &WireFormatError{Message: fmt.Sprintf("tool call %v: no id, or arguments that are not a JSON object", call["id"])}
	}
	name, _ := fn["name"].(string)
	return Block{Type: "tool_use", ID: a.ToolIDMap(sessionID).CanonicalFor(id), Name: name, Input: input}, nil
}

// -- wire -> canonical (requests: replay, turnspec's TC802) ---------------------------------------

// ReadRequest is from_wire_request: a recorded request body back to canonical form (`url`,
// the request's when the harness knows it, is not read: the model travels in the body).
func (a *Adapter) ReadRequest(body Object, sessionID, url string) (*ParsedRequest, error) {
	if sessionID == "" {
		sessionID = "sess_" + strings.ToLower(NewULID())
	}
	modelName, ok := body["model"].(string)
	if !ok {
		modelName = "unknown"
	}
	model := Provider + ":" + modelName
	messages := []Message{}
	wireMessages, _ := body["messages"].([]any)
	for _, w := range wireMessages {
		if wm, ok := w.(Object); ok {
			m, err := a.readMessage(sessionID, wm, model)
			if err != nil {
				return nil, err
			}
			if m != nil {
				messages = append(messages, *m)
			}
		}
	}
	tools, native, raw := readTools(body)
	var outputSchema Object
	known := map[string]bool{"model": true, "messages": true, "tools": true, "max_completion_tokens": true,
		"stop": true, "temperature": true, "stream": true}
	if rf, ok := body["response_format"].(Object); ok && rf["type"] == "json_schema" {
		if js, ok := rf["json_schema"].(Object); ok && isObject(js["schema"]) {
			outputSchema = js["schema"].(Object)
			rest := copyObject(js)
			delete(rest, "schema")
			raw["json_schema"] = rest
			known["response_format"] = true
		}
	}
	extra := Object{}
	for k, v := range body {
		if !known[k] {
			extra[k] = v
		}
	}
	options := Options{Model: model, StopSequences: []string{}, Extra: extra, ProviderTools: native,
		ProviderRaw: Object{}, CriticalKey: "critical", OutputSchema: outputSchema}
	if n, ok := body["max_completion_tokens"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			options.MaxOutputTokens = &v
		}
	}
	if n, ok := body["temperature"].(json.Number); ok {
		if v, err := n.Float64(); err == nil {
			options.Temperature = &v
		}
	}
	switch stop := body["stop"].(type) {
	case string:
		options.StopSequences = []string{stop}
	case []any:
		for _, s := range stop {
			options.StopSequences = append(options.StopSequences, fmt.Sprint(s))
		}
	}
	options.Stream = body["stream"] == true
	if len(raw) > 0 {
		options.ProviderRaw = Object{Name: raw}
	}
	return &ParsedRequest{messages, tools, options}, nil
}

func (a *Adapter) readMessage(sid string, wm Object, model string) (*Message, error) {
	raw := Object{}
	extra := Object{}
	for k, v := range wm {
		if !messageKeys[k] {
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		raw["message"] = extra // members this reader does not map go back verbatim
	}
	meta := Object{}
	var role string
	var blocks []Block
	switch wm["role"] {
	case "system", "developer":
		role = "system"
		blocks = []Block{TextBlock(strings.Join(textsOf(wm["content"]), ""))}
		if wm["role"] == "developer" {
			raw["role"] = "developer"
		}
	case "user":
		role = "user"
		blocks = a.readUserContent(sid, wm["content"], raw)
	case "assistant":
		role = "assistant"
		var err error
		blocks, err = a.parseMessage(sid, Object{"content": wm["content"], "tool_calls": wm["tool_calls"], "refusal": wm["refusal"]})
		if err != nil {
			return nil, err
		}
		if refusal, ok := wm["refusal"].(string); ok && refusal != "" {
			// read as the reply's text after the content's (parseMessage): it goes back in its
			// own field (chat/create: "The refusal message by the assistant."), not verbatim
			raw["refusal_index"] = len(textsOf(wm["content"]))
			delete(extra, "refusal")
			if len(extra) == 0 {
				delete(raw, "message")
			}
		}
		if len(blocks) == 0 {
			blocks = []Block{TextBlock("")}
		}
		meta["model"] = model
		meta["provider"] = Provider
	case "tool":
		role = "tool"
		cid := a.ToolIDMap(sid).CanonicalFor(fmt.Sprint(wm["tool_call_id"]))
		result := Block{Type: "tool_result", ToolUseID: cid, Content: []Block{}}
		for _, t := range textsOf(wm["content"]) {
			result.Content = append(result.Content, TextBlock(t))
		}
		blocks = []Block{result}
		meta["parent_tool_use_id"] = cid
	default:
		return nil, nil // a role this adapter does not know (e.g. the deprecated `function`)
	}
	if len(raw) > 0 {
		meta["provider_raw"] = Object{Name: raw}
	}
	m := message(sid, role, blocks, meta)
	return &m, nil
}

func (a *Adapter) readUserContent(sid string, c any, raw Object) []Block {
	if s, ok := c.(string); ok {
		return []Block{TextBlock(s)}
	}
	var blocks []Block
	details := Object{}
	parts, _ := c.([]any)
	for _, p := range parts {
		part, ok := p.(Object)
		if !ok {
			continue
		}
		text, isText := part["text"].(string)
		imageURL, isImage := part["image_url"].(Object)
		switch {
		case part["type"] == "text" && isText:
			blocks = append(blocks, TextBlock(text))
		case part["type"] == "image_url" && isImage:
			blocks = append(blocks, a.readImage(sid, imageURL))
			if d, ok := imageURL["detail"].(string); ok {
				details[strconv.Itoa(len(blocks)-1)] = d
			}
		default:
			// a part canonical has no block for (audio, files): kept whole, sent back as it was
			blocks = append(blocks, Block{Type: Name + ":" + fmt.Sprint(part["type"]),
				Other: Object{"type": Name + ":" + fmt.Sprint(part["type"]), "raw": part}})
		}
	}
	if len(details) > 0 {
		raw["image_detail"] = details
	}
	if len(blocks) == 1 && blocks[0].Type == "text" {
		raw["parts"] = true // one text part, not a string: rendered back as parts
	}
	return blocks
}

func (a *Adapter) readImage(sid string, imageURL Object) Block {
	url, _ := imageURL["url"].(string)
	if media, data, ok := ParseDataURL(url); ok {
		return Block{Type: "image", Source: &ImageSource{"base64", data}, MediaType: media}
	}
	media, ok := a.urlMedia[[2]string{sid, url}]
	if !ok {
		media = urlImageMediaType
	}
	return Block{Type: "image", Source: &ImageSource{"url", url}, MediaType: media}
}

func readTools(body Object) ([]ToolDefinition, []Object, Object) {
	tools := []ToolDefinition{}
	native := []Object{}
	extras := Object{}
	list, _ := body["tools"].([]any)
	for _, item := range list {
		t, ok := item.(Object)
		if !ok {
			continue
		}
		fn, _ := t["function"].(Object)
		name, hasName := fn["name"].(string)
		if t["type"] != "function" || !hasName {
			native = append(native, t) // a tool canonical has no definition for: a provider tool
			continue
		}
		description, _ := fn["description"].(string)
		schema, ok := fn["parameters"].(Object)
		if !ok {
			schema = Object{"type": "object", "properties": Object{}}
		}
		// the wire does not say what a tool does: "execute" is the most careful reading
		tools = append(tools, ToolDefinition{Name: name, Description: description, InputSchema: schema, SideEffects: "execute"})
		extra := Object{}
		for k, v := range fn {
			if k != "name" && k != "description" && k != "parameters" {
				extra[k] = v
			}
		}
		if len(extra) > 0 {
			extras[name] = extra // e.g. `strict`: rendered back from provider_raw
		}
	}
	raw := Object{}
	if len(extras) > 0 {
		raw["tool_extras"] = extras
	}
	return tools, native, raw
}

// -- estimates (contract §3.1 estimate_input_tokens) ----------------------------------------------

// Estimate is a heuristic, as the contract allows: about 4 characters a token, 4 tokens of
// framing per message, 765 for an image (a 1024 px square at detail high). A real tokenizer
// (o200k_base for gpt-4o and later) does better.
func (a *Adapter) Estimate(messages []Message, tools []ToolDefinition) int64 {
	n := int64(3)
	for _, m := range messages {
		n += 4
		for _, b := range m.Content {
			n += blockTokens(b)
		}
	}
	if len(tools) > 0 {
		n += 8
		for _, t := range tools {
			schema, _ := encodeJSON(t.InputSchema)
			n += textTokens(t.Name + " " + t.Description + string(schema))
		}
	}
	return n
}

func blockTokens(b Block) int64 {
	switch b.Type {
	case "text":
		return textTokens(b.Text)
	case "tool_use":
		input, _ := encodeJSON(orEmpty(b.Input))
		return 10 + textTokens(string(input))
	case "tool_result":
		n := int64(4)
		for _, inner := range b.Content {
			n += blockTokens(inner)
		}
		return n
	case "image":
		return 765
	}
	return 0
}

// -- shared helpers -----------------------------------------------------------------------------------

// ModelFor is the model id the provider knows: the canonical id without its `openai:`
// prefix (canonical §6.3; the rest is opaque, `:` and all).
func ModelFor(model string) string {
	if rest := strings.TrimPrefix(model, Provider+":"); rest != model && rest != "" {
		return rest
	}
	return model
}

// textsOf is the texts of a message's `content`: a string, or an array of `text` parts.
func textsOf(content any) []string {
	switch c := content.(type) {
	case string:
		if c != "" {
			return []string{c}
		}
	case []any:
		var out []string
		for _, p := range c {
			if part, ok := p.(Object); ok && part["type"] == "text" {
				if t, ok := part["text"].(string); ok {
					out = append(out, t)
				}
			}
		}
		return out
	}
	return nil
}

func textParts(texts []string) []any {
	out := make([]any, 0, len(texts))
	for _, t := range texts {
		out = append(out, Object{"type": "text", "text": t})
	}
	return out
}

// UsageFromWire is Chat Completions `usage` as TokenUsage (contract §7.2), nil when absent.
func UsageFromWire(usage any) *TokenUsage {
	u, ok := usage.(Object)
	if !ok {
		return nil
	}
	details, _ := u["prompt_tokens_details"].(Object)
	cached := number(details["cached_tokens"])
	input := number(u["prompt_tokens"]) - cached
	if input < 0 {
		input = 0
	}
	// OpenAI reports no cache writes (contract §4.3)
	return &TokenUsage{InputTokens: input, OutputTokens: number(u["completion_tokens"]), CachedInputTokens: cached}
}

// StopReason maps a finish_reason to canonical; an undocumented one reads as end_turn with
// a WARN record.
func StopReason(raw any, log *Logs) string {
	if s, ok := raw.(string); ok {
		if found, ok := StopReasons[s]; ok {
			return found
		}
	}
	log.Warning(fmt.Sprintf("%s: undocumented finish_reason %v read as end_turn", Name, raw),
		Object{"event": "unknown_stop_reason", "adapter": Name, "stop_reason": raw})
	return "end_turn"
}

// classifyError is adapter contract §6.2, §6.3: the class of the HTTP status, refined by the
// body's `error.code` / `error.type`, with the `x-request-id` header and a `retry-after` hint.
func classifyError(status int, body any, headers map[string]string) *AdapterError {
	obj, _ := body.(Object)
	errObj, _ := obj["error"].(Object)
	code, _ := errObj["code"].(string)
	kind, _ := errObj["type"].(string)
	class, ok := errorCodes[code]
	if !ok && kind == "server_error" {
		class, ok = ServerErr, true
	}
	if !ok {
		class = classForStatus(status)
	}
	h := lowerKeys(headers)
	e := &AdapterError{Class: class, ProviderStatus: &status, RetryAfter: retryAfter(h)}
	if id, ok := h["x-request-id"]; ok {
		e.RequestID = &id
	}
	label := code
	if label == "" {
		label = kind
	}
	if label == "" {
		label = "error"
	}
	e.Message = label + ": " + errorText(body, errObj)
	return e
}
