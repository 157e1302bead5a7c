package main

// The canonical stream events (schemas/canonical/v1/stream-event.json) every wire API's
// stream produces, and what a cancel adds to those the harness had consumed (adapter
// contract §5.3): the same for every wire API, since it reads the events, not the wire.

// StreamEvent is one canonical stream event.
type StreamEvent = Object

// SilentBlock is a block no stream event carries: Index in the content, At the events
// produced before it.
type SilentBlock struct {
	Index int
	At    int
	Block Block
}

// cancelEvents is contract §5.3: the events after a cancel that landed once `delivered` of
// `events` had been consumed: one tool_use_end per tool call still open (final_input what its
// deltas spell, else {}), then message_complete with stop_reason cancelled and the content
// those events built (text, thinking with the signature its last delta carried, tool calls),
// with each of the `silent` blocks (those no event carries: a redacted thinking block, a
// block kept whole) that an event after it was delivered, at its own index. nil when the
// stream had already completed by then.
func cancelEvents(events []StreamEvent, delivered int, mid string, silent []SilentBlock) []StreamEvent {
	if delivered > len(events) {
		delivered = len(events)
	}
	blocks := map[int]Block{}
	partial := map[int]string{}
	open := map[int]bool{}
	var usage any
	for _, e := range events[:delivered] {
		k, _ := e["content_block_index"].(int)
		switch e["type"] {
		case "message_complete":
			return nil
		case "usage_update":
			usage = e["usage"]
		case "text_delta":
			b, ok := blocks[k]
			if !ok {
				b = TextBlock("")
			}
			b.Text += e["text"].(string)
			blocks[k] = b
		case "thinking_delta":
			b, ok := blocks[k]
			if !ok {
				b = Block{Type: "thinking"}
			}
			b.Text += e["text"].(string)
			if sig, ok := e["signature"].(string); ok {
				b.Signature = &sig
			}
			blocks[k] = b
		case "tool_use_start":
			blocks[k] = Block{Type: "tool_use", ID: e["tool_use_id"].(string), Name: e["tool_name"].(string), Input: Object{}}
			open[k] = true
		case "tool_use_input_delta":
			partial[k] += e["partial_json"].(string)
		case "tool_use_end":
			b := blocks[k]
			b.Input = e["final_input"].(Object)
			blocks[k] = b
			delete(open, k)
		}
	}
	for _, s := range silent {
		if s.At < delivered {
			blocks[s.Index] = s.Block
		}
	}
	var after []StreamEvent
	for _, k := range sortedKeys(open) {
		b := blocks[k]
		b.Input = jsonObject(partial[k])
		if b.Input == nil {
			b.Input = Object{}
		}
		blocks[k] = b
		after = append(after, StreamEvent{"type": "tool_use_end", "message_id": mid, "content_block_index": k,
			"tool_use_id": b.ID, "final_input": b.Input})
	}
	content := []Block{}
	for _, k := range sortedKeys(blocks) {
		content = append(content, blocks[k])
	}
	return append(after, StreamEvent{"type": "message_complete", "message_id": mid, "stop_reason": "cancelled",
		"final_content": content, "usage": usage})
}
