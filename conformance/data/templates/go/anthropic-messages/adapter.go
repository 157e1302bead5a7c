package main

// The `{{name}}` adapter: canonical messages <-> the Anthropic Messages wire API
// (`POST /v1/messages`), written from Anthropic's API reference (platform.claude.com/docs:
// Messages, streaming, extended thinking, vision, tool use, errors) and the adapter contract
// (§4.1, §4.2, §6, §7).
//
//   - SYSTEM messages become the top-level `system` (texts joined by a blank line; a list of
//     text blocks when a block carries more than its text, e.g. `cache_control`).
//   - Tool calls are `tool_use` blocks of the assistant message, `input` a JSON object;
//     results are `tool_result` blocks of a `user` message (consecutive tool messages share
//     one, as parallel results must), with `is_error`. Canonical tool ids (`tu_<ULID>`) map
//     to the provider's (`toolu_...`) through one ToolIDMap per session.
//   - Images are `image` blocks (`source` base64 with its media_type, or url).
//   - Thinking goes back with its `signature`, redacted thinking with its `data`, only on
//     messages this provider issued (`metadata.provider` "anthropic"): the API refuses a
//     signature it did not issue, so another provider's thinking is dropped with the §7.3
//     WARN record.
//   - Fields canonical has no home for (a block's `cache_control` or `citations`, the
//     reply's id and stop reason) ride in `metadata.provider_raw["{{name}}"]` and go back on
//     render.
//   - Usage maps directly: input_tokens, output_tokens, cache_read_input_tokens ->
//     cached_input_tokens, cache_creation_input_tokens.
//
// Where to extend: a provider that differs from Anthropic changes the function named after
// the part of the wire it touches (render.system, render.block, render.toolResults,
// blockFromWire, classifyError; stream.go for streams), with a cassette in
// cassettes/{{name}}/ for each difference.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The adapter's identity (the hello answer says it; Name is in wire.go).
const (
	Provider = "anthropic"
	WireAPI  = "anthropic-messages"
	Path     = "/v1/messages"
	// AnthropicVersion is the `anthropic-version` header every request sends (API versioning).
	AnthropicVersion = "2023-06-01"
	// DefaultMaxTokens is `max_tokens` (the API requires it) when the request sets no limit.
	DefaultMaxTokens = 4096
	// ProviderToolID matches every provider tool id this adapter mints.
	ProviderToolID = "^toolu_[0-9A-HJKMNP-TV-Z]{26}$"
	// urlImageMediaType is a URL image's media type when this adapter did not render it.
	urlImageMediaType = "image/jpeg"
)

// ImageTypes are the media types the Messages API takes as images.
var ImageTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// Capabilities is canonical §7.2: only what this adapter really does (contract §3.4).
var Capabilities = Object{
	"supports_thinking":             true,
	"supports_images":               true,
	"supports_tools":                true,
	"supports_system_prompt":        true,
	"supports_structured_output":    false, // no response schema here: output_schema is not sent (WARN)
	"supports_streaming":            true,
	"supports_streaming_tool_calls": true,
	"supports_parallel_tool_calls":  true,
	// true needs a cassette whose case exercises it (turnspec's TC002): add one, then say so
	"supports_prompt_caching":          false,
	"supports_system_messages_in_list": false,  // one top-level `system`: SYSTEM messages are hoisted
	"max_context_tokens":               200000, // the served model's limits: set your model's
	"max_output_tokens":                64000,
	"accepted_image_media_types":       ImageTypes,
}

// StopReasons maps a stop_reason to the canonical StopReason (handling stop reasons).
var StopReasons = map[string]string{
	"end_turn":                      "end_turn",
	"max_tokens":                    "max_tokens",
	"stop_sequence":                 "stop_sequence",
	"tool_use":                      "tool_use",
	"pause_turn":                    "end_turn", // a server tool paused the turn: the reply so far is the turn
	"refusal":                       "end_turn", // the model declined: its text is the reply
	"model_context_window_exceeded": "max_tokens",
}

// errorTypes are the body's `error.type`s that refine the status's class (contract §6.2).
var errorTypes = map[string]ErrorClass{
	"overloaded_error":     RateLimit,
	"rate_limit_error":     RateLimit,
	"authentication_error": Auth,
	"permission_error":     Auth,
	"api_error":            ServerErr,
	"not_found_error":      InvalidRequest,
	"request_too_large":    ContextOverflow,
}

// contextOverflow is what an invalid_request_error says when the prompt is too long.
var contextOverflow = regexp.MustCompile(`(?i)context|tokens exceeds|too long`)

// canonicalKeys are the members of each wire block canonical holds; any other rides in
// provider_raw.
var canonicalKeys = map[string][]string{
	"text":              {"type", "text"},
	"thinking":          {"type", "thinking", "signature"},
	"redacted_thinking": {"type", "data"},
	"tool_use":          {"type", "id", "name", "input"},
	"image":             {"type", "source"},
	"tool_result":       {"type", "tool_use_id", "content", "is_error"},
}

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
		m = NewToolIDMap(func() string { return "toolu_" + NewULID() })
		a.maps[sessionID] = m
	}
	return m
}

// -- canonical -> wire ----------------------------------------------------------------------

// Render is to_wire: the HTTP request for messages, tools and options.
func (a *Adapter) Render(messages []Message, tools []ToolDefinition, options Options, log *Logs) (*WireRequest, error) {
	r := &render{a, options, log}
	maxTokens := int64(DefaultMaxTokens)
	if options.MaxOutputTokens != nil {
		maxTokens = *options.MaxOutputTokens
	}
	body := Object{"model": ModelFor(options.Model), "max_tokens": maxTokens}
	system, err := r.system(messages)
	if err != nil {
		return nil, err
	}
	if system != nil {
		body["system"] = system
	}
	wireMessages, err := r.messages(messages)
	if err != nil {
		return nil, err
	}
	body["messages"] = wireMessages
	extras, _ := ownRaw(options.ProviderRaw)["tool_extras"].(Object)
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
	if len(options.StopSequences) > 0 {
		body["stop_sequences"] = options.StopSequences
	}
	if options.Temperature != nil {
		body["temperature"] = *options.Temperature
	}
	if options.Stream {
		body["stream"] = true
	}
	if options.OutputSchema != nil {
		log.Warning(Name+": request option output_schema not sent: supports_structured_output is false", Object{
			"event": "option_dropped", "adapter": Name, "option": "output_schema",
			"reason": "supports_structured_output is false for this adapter",
		})
	}
	for key, value := range options.Extra {
		if _, taken := body[key]; !taken {
			body[key] = value // provider knobs (contract §3.2: `thinking`, `tool_choice`) pass through verbatim
		}
	}
	headers := map[string]string{"anthropic-version": AnthropicVersion, "content-type": "application/json"}
	return &WireRequest{"POST", Path, headers, body}, nil
}

// render is one to_wire call.
type render struct {
	a       *Adapter
	options Options
	log     *Logs
}

// system hoists every SYSTEM message into `system` (contract §4.1.2): a string, or a list
// of text blocks.
func (r *render) system(messages []Message) (any, error) {
	var blocks []Object
	for _, m := range messages {
		if m.Role != "system" {
			continue
		}
		extras := blockExtras(m)
		for i, b := range m.Content {
			if b.Type != "text" {
				if err := r.drop(m, i, b.Type, "system prompts carry text only"); err != nil {
					return nil, err
				}
				continue
			}
			block := Object{"type": "text", "text": b.Text}
			mergeInto(block, extras[strconv.Itoa(i)])
			blocks = append(blocks, block)
		}
	}
	if len(blocks) == 0 {
		return nil, nil
	}
	asBlocks := ownRaw(r.options.ProviderRaw)["system_as_blocks"] == true
	texts := make([]string, 0, len(blocks))
	list := make([]any, 0, len(blocks))
	for _, b := range blocks {
		if len(b) > 2 {
			asBlocks = true // cache_control or other block fields need the block form
		}
		texts = append(texts, b["text"].(string))
		list = append(list, b)
	}
	if asBlocks {
		return list, nil
	}
	return strings.Join(texts, "\n\n"), nil
}

func (r *render) messages(messages []Message) ([]any, error) {
	out := []any{}
	lastWasResults := false
	for _, m := range messages {
		switch m.Role {
		case "system":
			continue
		case "tool":
			results, err := r.toolResults(m)
			if err != nil {
				return nil, err
			}
			if len(results) == 0 {
				continue
			}
			if lastWasResults {
				last := out[len(out)-1].(Object)
				last["content"] = append(last["content"].([]any), results...) // parallel results share one user message
			} else {
				out = append(out, Object{"role": "user", "content": results})
				lastWasResults = true
			}
			continue
		}
		content := []any{}
		for i, b := range m.Content {
			wb, err := r.block(m, i, b)
			if err != nil {
				return nil, err
			}
			if wb != nil {
				content = append(content, wb)
			}
		}
		if len(content) == 0 {
			continue // every block dropped (and logged): no message, since the API refuses an empty one
		}
		role := "user"
		if m.Role == "assistant" {
			role = "assistant"
		}
		out = append(out, Object{"role": role, "content": content})
		lastWasResults = false
	}
	return out, nil
}

// block is one block of a user or assistant message, with the members read back from
// provider_raw; nil when it was dropped.
func (r *render) block(m Message, i int, b Block) (Object, error) {
	var wb Object
	switch {
	case b.Type == "text":
		wb = Object{"type": "text", "text": b.Text}
	case b.Type == "image":
		image, err := r.image(m, i, b)
		if image == nil || err != nil {
			return nil, err
		}
		wb = image
	case b.Type == "tool_use":
		wb = Object{"type": "tool_use", "id": r.a.ToolIDMap(m.SessionID).ProviderFor(b.ID), "name": b.Name, "input": orEmpty(b.Input)}
	case b.Type == "thinking":
		why := foreign(m, "thinking")
		if why == "" && (b.Signature == nil || *b.Signature == "") {
			why = "unsigned thinking block (the API requires the signature it issued)"
		}
		if why != "" {
			return nil, r.drop(m, i, "thinking", why)
		}
		wb = Object{"type": "thinking", "thinking": b.Text, "signature": *b.Signature}
	case b.Type == "redacted_thinking":
		if why := foreign(m, "redacted_thinking"); why != "" {
			return nil, r.drop(m, i, "redacted_thinking", why)
		}
		wb = Object{"type": "redacted_thinking", "data": b.Data}
	case strings.HasPrefix(b.Type, Name+":") && b.Other != nil && isObject(b.Other["raw"]):
		return copyObject(b.Other["raw"].(Object)), nil // a block this adapter read and kept whole
	default:
		return nil, r.drop(m, i, b.Type, fmt.Sprintf("no Anthropic Messages equivalent for a %s block in a %s message", b.Type, m.Role))
	}
	mergeInto(wb, blockExtras(m)[strconv.Itoa(i)])
	return wb, nil
}

func (r *render) image(m Message, i int, b Block) (Object, error) {
	if b.Source == nil {
		return nil, r.drop(m, i, "image", "an image block without a source")
	}
	kind, data := b.Source.Kind, b.Source.Data
	media := strings.ToLower(b.MediaType) // IANA media types are case-insensitive
	if kind == "url" {
		if inline, payload, ok := ParseDataURL(data); ok { // inline bytes go as base64 (the API fetches http(s) only)
			kind, data, media = "base64", payload, inline
		}
	}
	switch kind {
	case "url":
		r.a.urlMedia[[2]string{m.SessionID, data}] = media
		return Object{"type": "image", "source": Object{"type": "url", "url": data}}, nil
	case "base64":
		if !contains(ImageTypes, media) {
			return nil, r.drop(m, i, "image", fmt.Sprintf("media type %s is not accepted (accepted: %s)", media, strings.Join(ImageTypes, ", ")))
		}
		return Object{"type": "image", "source": Object{"type": "base64", "media_type": media, "data": data}}, nil
	}
	return nil, r.drop(m, i, "image", "file_ref images must be inlined by the harness (adapters do no I/O)")
}

// toolResults is a tool message's results, as `tool_result` blocks of a user message.
func (r *render) toolResults(m Message) ([]any, error) {
	var out []any
	extras := blockExtras(m)
	for i, b := range m.Content {
		if b.Type != "tool_result" {
			if err := r.drop(m, i, b.Type, "a tool message carries tool_result blocks only"); err != nil {
				return nil, err
			}
			continue
		}
		inner := []any{}
		for j, x := range b.Content {
			switch {
			case x.Type == "text":
				inner = append(inner, Object{"type": "text", "text": x.Text})
			case x.Type == "image":
				image, err := r.image(m, i, x)
				if err != nil {
					return nil, err
				}
				if image != nil {
					inner = append(inner, image)
				}
			case strings.HasPrefix(x.Type, Name+":") && x.Other != nil && isObject(x.Other["raw"]):
				inner = append(inner, copyObject(x.Other["raw"].(Object)))
			default:
				if err := r.drop(m, i, x.Type, fmt.Sprintf("tool_result content %d has no Anthropic equivalent", j)); err != nil {
					return nil, err
				}
			}
		}
		wire := Object{"type": "tool_result", "tool_use_id": r.a.ToolIDMap(m.SessionID).ProviderFor(b.ToolUseID), "content": inner}
		if b.IsError {
			wire["is_error"] = true
		}
		mergeInto(wire, extras[strconv.Itoa(i)])
		out = append(out, wire)
	}
	return out, nil
}

// drop is canonical §4.2.2, §7.3 (dropBlock in wire.go): one WARN record, or a
// CriticalBlockError when the message marks the block critical.
func (r *render) drop(m Message, index int, blockType, reason string) error {
	return dropBlock(r.log, r.options, m, index, blockType, reason)
}

// foreign says why a thinking block of m cannot go back ("" when it can): only Anthropic's
// own signatures can.
func foreign(m Message, what string) string {
	provider, _ := m.Metadata["provider"].(string)
	if provider == Provider {
		return ""
	}
	if provider == "" {
		provider = "an unknown provider"
	}
	return fmt.Sprintf("%s issued by %s; Anthropic rejects signatures it did not issue", what, provider)
}

// blockExtras is the members of a message's wire blocks that canonical cannot hold, by
// block index.
func blockExtras(m Message) Object {
	blocks, _ := ownRaw(m.Metadata["provider_raw"])["blocks"].(Object)
	return blocks
}

func renderTool(t ToolDefinition, extra any) Object {
	schema := t.InputSchema
	if schema == nil {
		schema = Object{"type": "object", "properties": Object{}}
	}
	tool := Object{"name": t.Name, "description": t.Description, "input_schema": schema}
	mergeInto(tool, extra) // e.g. cache_control, read from a recorded request
	return tool
}

// -- wire -> canonical (replies) --------------------------------------------------------------

// Parse is from_wire_response: a whole response to the canonical assistant message.
func (a *Adapter) Parse(resp WireResponse, ctx RequestContext, log *Logs) (*Message, error) {
	body, _ := resp.Body.(Object)
	if resp.Status >= 400 || body["type"] == "error" {
		status := resp.Status
		if status < 400 {
			status = 500
		}
		return nil, classifyError(status, resp.Body, resp.Headers)
	}
	wireContent, ok := body["content"].([]any)
	if !ok {
		return nil, &WireFormatError{Message: "Anthropic response has no `content` list"}
	}
	content, extras, err := a.readBlocks(ctx.SessionID, wireContent)
	if err != nil {
		return nil, err
	}
	StopReason(body["stop_reason"], log)
	raw := Object{}
	for _, k := range []string{"id", "stop_reason", "stop_sequence"} {
		if v, ok := body[k]; ok && v != nil {
			raw[k] = v
		}
	}
	if len(extras) > 0 {
		raw["blocks"] = extras
	}
	model, _ := body["model"].(string)
	m := Assemble(Provider, ctx, content, model, UsageFromWire(body["usage"]), "complete")
	m.Metadata["provider_raw"] = Object{Name: raw}
	return &m, nil
}

// readBlocks is wire content blocks as canonical ones, and the members canonical cannot
// hold, by block index.
func (a *Adapter) readBlocks(sessionID string, blocks []any) ([]Block, Object, error) {
	content := []Block{}
	extras := Object{}
	for _, wb := range blocks {
		block, extra, err := a.blockFromWire(sessionID, wb)
		if err != nil {
			return nil, nil, err
		}
		if len(extra) > 0 {
			extras[strconv.Itoa(len(content))] = extra
		}
		content = append(content, block)
	}
	return content, extras, nil
}

// blockFromWire is one wire content block as its canonical block, and the members canonical
// cannot hold.
func (a *Adapter) blockFromWire(sessionID string, v any) (Block, Object, error) {
	wb, ok := v.(Object)
	t, isString := wb["type"].(string)
	if !ok || !isString {
		return Block{}, nil, &WireFormatError{Message: fmt.Sprintf("content block is not an object with a type: %.80v", v)}
	}
	extra := Object{}
	if keys, known := canonicalKeys[t]; known {
		for k, v := range wb {
			if !contains(keys, k) {
				extra[k] = v
			}
		}
	}
	switch t {
	case "text":
		text, _ := wb["text"].(string)
		return TextBlock(text), extra, nil
	case "thinking":
		text, _ := wb["thinking"].(string)
		b := Block{Type: "thinking", Text: text}
		if sig, ok := wb["signature"].(string); ok && sig != "" {
			b.Signature = &sig
		}
		return b, extra, nil
	case "redacted_thinking":
		data, _ := wb["data"].(string)
		return Block{Type: "redacted_thinking", Data: data}, extra, nil
	case "tool_use":
		id, okID := wb["id"].(string)
		name, okName := wb["name"].(string)
		if !okID || !okName {
			return Block{}, nil, &WireFormatError{Message: fmt.Sprintf("tool_use block without a string id and name: %.80v", wb)}
		}
		input, ok := wb["input"].(Object)
		if !ok { // never invent {} for input the API documents as an object
			return Block{}, nil, &WireFormatError{Message: fmt.Sprintf("tool_use %s input is not a JSON object", id)}
		}
		return Block{Type: "tool_use", ID: a.ToolIDMap(sessionID).CanonicalFor(id), Name: name, Input: input}, extra, nil
	case "image":
		if image, ok := a.imageFromWire(sessionID, wb["source"]); ok {
			return image, extra, nil
		}
	}
	// documents, server tools, search results: kept whole as a block of this adapter's (§10.3)
	return Block{Type: Name + ":" + t, Other: Object{"type": Name + ":" + t, "raw": wb}}, Object{}, nil
}

func (a *Adapter) imageFromWire(sessionID string, v any) (Block, bool) {
	source, _ := v.(Object)
	switch source["type"] {
	case "base64":
		data, ok := source["data"].(string)
		media, _ := source["media_type"].(string)
		return Block{Type: "image", Source: &ImageSource{"base64", data}, MediaType: strings.ToLower(media)}, ok
	case "url":
		url, ok := source["url"].(string)
		if !ok {
			return Block{}, false
		}
		if media, data, ok := ParseDataURL(url); ok { // a data: URL is inline bytes, whatever field carried it
			return Block{Type: "image", Source: &ImageSource{"base64", data}, MediaType: media}, true
		}
		media, ok := a.urlMedia[[2]string{sessionID, url}]
		if !ok {
			media = urlImageMediaType
		}
		return Block{Type: "image", Source: &ImageSource{"url", url}, MediaType: media}, true
	}
	return Block{}, false
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
	optRaw := Object{}
	switch system := body["system"].(type) {
	case string:
		messages = append(messages, message(sessionID, "system", []Block{TextBlock(system)}, Object{}))
	case []any:
		blocks := []Block{}
		extras := Object{}
		for i, v := range system {
			sb, _ := v.(Object)
			text, _ := sb["text"].(string)
			blocks = append(blocks, TextBlock(text))
			extra := Object{}
			for k, v := range sb {
				if k != "type" && k != "text" {
					extra[k] = v // e.g. cache_control
				}
			}
			if len(extra) > 0 {
				extras[strconv.Itoa(i)] = extra
			}
		}
		meta := Object{}
		if len(extras) > 0 {
			meta["provider_raw"] = Object{Name: Object{"blocks": extras}}
		}
		messages = append(messages, message(sessionID, "system", blocks, meta))
		optRaw["system_as_blocks"] = true // rendered back as a list
	}
	wireMessages, _ := body["messages"].([]any)
	for _, w := range wireMessages {
		if wm, ok := w.(Object); ok {
			read, err := a.readMessage(sessionID, wm, model)
			if err != nil {
				return nil, err
			}
			messages = append(messages, read...)
		}
	}
	tools, native, toolExtras := readTools(body)
	if len(toolExtras) > 0 {
		optRaw["tool_extras"] = toolExtras
	}
	known := map[string]bool{"model": true, "max_tokens": true, "system": true, "messages": true, "tools": true,
		"stop_sequences": true, "temperature": true, "stream": true}
	extra := Object{}
	for k, v := range body {
		if !known[k] {
			extra[k] = v
		}
	}
	options := Options{Model: model, StopSequences: []string{}, Extra: extra, ProviderTools: native,
		ProviderRaw: Object{}, CriticalKey: "critical", Stream: body["stream"] == true}
	if n, ok := body["max_tokens"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			options.MaxOutputTokens = &v
		}
	}
	if n, ok := body["temperature"].(json.Number); ok {
		if v, err := n.Float64(); err == nil {
			options.Temperature = &v
		}
	}
	stops, _ := body["stop_sequences"].([]any)
	for _, s := range stops {
		options.StopSequences = append(options.StopSequences, fmt.Sprint(s))
	}
	if len(optRaw) > 0 {
		options.ProviderRaw = Object{Name: optRaw}
	}
	return &ParsedRequest{messages, tools, options}, nil
}

// readMessage is one wire message: an assistant message, or a user message split at its
// tool results (each a tool message of its own).
func (a *Adapter) readMessage(sid string, wm Object, model string) ([]Message, error) {
	var blocks []any
	switch c := wm["content"].(type) {
	case string:
		blocks = []any{Object{"type": "text", "text": c}}
	case []any:
		blocks = c
	}
	withExtras := func(meta, extras Object) Object {
		if len(extras) > 0 {
			meta["provider_raw"] = Object{Name: Object{"blocks": extras}}
		}
		return meta
	}
	if wm["role"] == "assistant" {
		content, extras, err := a.readBlocks(sid, blocks)
		if err != nil {
			return nil, err
		}
		if len(content) == 0 {
			content = []Block{TextBlock("")}
		}
		meta := withExtras(Object{"model": model, "provider": Provider}, extras)
		return []Message{message(sid, "assistant", content, meta)}, nil
	}
	var out []Message
	var pending []any
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		content, extras, err := a.readBlocks(sid, pending)
		if err != nil {
			return err
		}
		out = append(out, message(sid, "user", content, withExtras(Object{}, extras)))
		pending = nil
		return nil
	}
	for _, b := range blocks {
		wb, _ := b.(Object)
		if wb["type"] != "tool_result" {
			pending = append(pending, b)
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		result, err := a.readToolResult(sid, wb)
		if err != nil {
			return nil, err
		}
		out = append(out, result)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

func (a *Adapter) readToolResult(sid string, wb Object) (Message, error) {
	cid := a.ToolIDMap(sid).CanonicalFor(fmt.Sprint(wb["tool_use_id"]))
	var inner []any
	switch c := wb["content"].(type) {
	case string:
		inner = []any{Object{"type": "text", "text": c}}
	case []any:
		inner = c
	}
	content, _, err := a.readBlocks(sid, inner)
	if err != nil {
		return Message{}, err
	}
	result := Block{Type: "tool_result", ToolUseID: cid, Content: content, IsError: wb["is_error"] == true}
	extra := Object{}
	for k, v := range wb {
		if !contains(canonicalKeys["tool_result"], k) {
			extra[k] = v
		}
	}
	meta := Object{"parent_tool_use_id": cid}
	if len(extra) > 0 {
		meta["provider_raw"] = Object{Name: Object{"blocks": Object{"0": extra}}}
	}
	return message(sid, "tool", []Block{result}, meta), nil
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
		name, hasName := t["name"].(string)
		schema, hasSchema := t["input_schema"].(Object)
		kind, hasType := t["type"]
		if !hasName || !hasSchema || (hasType && kind != "custom") {
			native = append(native, t) // a server tool (web search, code execution): a provider tool
			continue
		}
		description, _ := t["description"].(string)
		// the wire does not say what a tool does: "execute" is the most careful reading
		tools = append(tools, ToolDefinition{Name: name, Description: description, InputSchema: schema, SideEffects: "execute"})
		extra := Object{}
		for k, v := range t {
			if k != "name" && k != "description" && k != "input_schema" {
				extra[k] = v
			}
		}
		if len(extra) > 0 {
			extras[name] = extra
		}
	}
	return tools, native, extras
}

// -- estimates (contract §3.1 estimate_input_tokens) ----------------------------------------------

// Estimate is a heuristic, as the contract allows: about 4 characters a token, 4 tokens of
// framing per message, about 1600 tokens for an image of unknown size (Anthropic's vision
// docs: width x height / 750, a 1568 px long edge at most), and the tool-use system prompt
// the API adds when there are tools. Anthropic's token counting endpoint does better.
func (a *Adapter) Estimate(messages []Message, tools []ToolDefinition) int64 {
	n := int64(0)
	for _, m := range messages {
		n += 4
		for _, b := range m.Content {
			n += blockTokens(b)
		}
	}
	if len(tools) > 0 {
		n += 390
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
		return 12 + textTokens(string(input))
	case "tool_result":
		n := int64(8)
		for _, inner := range b.Content {
			n += blockTokens(inner)
		}
		return n
	case "image":
		return 1600
	}
	return 0 // earlier turns' thinking is stripped from the context window by the API
}

// -- shared helpers -----------------------------------------------------------------------------------

// ModelFor is the model id the provider knows: the canonical id without its `anthropic:`
// prefix (canonical §6.3; the rest is opaque, `:` and all).
func ModelFor(model string) string {
	if rest := strings.TrimPrefix(model, Provider+":"); rest != model && rest != "" {
		return rest
	}
	return model
}

// UsageFromWire is Anthropic `usage` as TokenUsage (contract §7.2), nil when absent.
func UsageFromWire(usage any) *TokenUsage {
	u, ok := usage.(Object)
	if !ok {
		return nil
	}
	return &TokenUsage{
		InputTokens:              number(u["input_tokens"]),
		OutputTokens:             number(u["output_tokens"]),
		CachedInputTokens:        number(u["cache_read_input_tokens"]),
		CacheCreationInputTokens: number(u["cache_creation_input_tokens"]),
	}
}

// StopReason maps a stop_reason to canonical; an undocumented one reads as end_turn with a
// WARN record.
func StopReason(raw any, log *Logs) string {
	if s, ok := raw.(string); ok {
		if found, ok := StopReasons[s]; ok {
			return found
		}
	}
	log.Warning(fmt.Sprintf("%s: undocumented stop_reason %v read as end_turn", Name, raw),
		Object{"event": "unknown_stop_reason", "adapter": Name, "stop_reason": raw})
	return "end_turn"
}

// classifyError is adapter contract §6.2, §6.3: the class of the HTTP status, refined by the
// body's `error.type`, with the request id (the body's `request_id`, else the `request-id`
// header) and a `retry-after` hint.
func classifyError(status int, body any, headers map[string]string) *AdapterError {
	obj, _ := body.(Object)
	errObj, _ := obj["error"].(Object)
	kind, _ := errObj["type"].(string)
	text := errorText(body, errObj)
	class, ok := errorTypes[kind]
	if kind == "invalid_request_error" && contextOverflow.MatchString(text) {
		class, ok = ContextOverflow, true
	}
	if !ok {
		class = classForStatus(status)
	}
	h := lowerKeys(headers)
	e := &AdapterError{Class: class, ProviderStatus: &status, RetryAfter: retryAfter(h)}
	if id, ok := obj["request_id"].(string); ok {
		e.RequestID = &id
	} else if id, ok := h["request-id"]; ok {
		e.RequestID = &id
	}
	if kind == "" {
		kind = "error"
	}
	e.Message = kind + ": " + text
	return e
}
