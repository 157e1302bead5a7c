// The canonical stream events (schemas/canonical/v1/stream-event.json) every wire API's
// stream produces, and what a cancel adds to those the harness had consumed (adapter
// contract §5.3): the same for every wire API, since it reads the events, not the wire.

import { jsonObject } from "./wire.js";
import { isObject } from "./protocol.js";
import type { JsonObject } from "./protocol.js";

export type StreamEvent = JsonObject;

/** A block no stream event carries: `index` in the content, `at` the events before it. */
export interface SilentBlock {
  index: number;
  at: number;
  block: JsonObject;
}

/**
 * Contract §5.3: the events after a cancel that landed once `delivered` of `events` had been
 * consumed: one tool_use_end per tool call still open (final_input what its deltas spell,
 * else {}), then message_complete with stop_reason cancelled and the content those events
 * built (text, thinking with the signature its last delta carried, tool calls), with each of
 * the `silent` blocks (those no event carries: a redacted thinking block, a block kept whole)
 * that an event after it was delivered, at its own index. null when the stream had already
 * completed by then.
 */
export function cancelEvents(
  events: StreamEvent[],
  delivered: number,
  mid: string,
  silent: SilentBlock[] = [],
): StreamEvent[] | null {
  const seen = events.slice(0, delivered);
  if (seen.some((e) => e.type === "message_complete")) {
    return null;
  }
  const blocks = new Map<number, JsonObject>();
  const partial = new Map<number, string>();
  const open = new Map<number, JsonObject>();
  let usage: JsonObject | null = null;
  for (const e of seen) {
    const k = typeof e.content_block_index === "number" ? e.content_block_index : -1;
    if (e.type === "usage_update" && isObject(e.usage)) {
      usage = e.usage;
    } else if (e.type === "text_delta") {
      const b = blocks.get(k) ?? { type: "text", text: "" };
      b.text = String(b.text) + String(e.text);
      blocks.set(k, b);
    } else if (e.type === "thinking_delta") {
      const b = blocks.get(k) ?? { type: "thinking", text: "", signature: null };
      b.text = String(b.text) + String(e.text);
      if (typeof e.signature === "string") {
        b.signature = e.signature;
      }
      blocks.set(k, b);
    } else if (e.type === "tool_use_start") {
      const b: JsonObject = { type: "tool_use", id: e.tool_use_id ?? "", name: e.tool_name ?? "", input: {} };
      blocks.set(k, b);
      open.set(k, b);
      partial.set(k, "");
    } else if (e.type === "tool_use_input_delta") {
      partial.set(k, (partial.get(k) ?? "") + String(e.partial_json));
    } else if (e.type === "tool_use_end") {
      const b = blocks.get(k);
      if (b !== undefined && isObject(e.final_input)) {
        b.input = e.final_input;
      }
      open.delete(k);
    }
  }
  for (const s of silent) {
    if (s.at < delivered) {
      blocks.set(s.index, { ...s.block });
    }
  }
  const after: StreamEvent[] = [];
  for (const [k, b] of [...open.entries()].sort((x, y) => x[0] - y[0])) {
    b.input = jsonObject(partial.get(k) ?? "") ?? {};
    after.push({ type: "tool_use_end", message_id: mid, content_block_index: k, tool_use_id: b.id ?? "", final_input: b.input });
  }
  const content = [...blocks.entries()].sort((x, y) => x[0] - y[0]).map(([, b]) => b);
  after.push({ type: "message_complete", message_id: mid, stop_reason: "cancelled", final_content: content, usage });
  return after;
}
