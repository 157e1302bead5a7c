// The smallest documented success body of each API, which answers a captured request so
// the provider call completes and reports its warnings (they come back with the result,
// never before the request is sent). Nothing is read from it: the request is the capture.

export const CANNED = {
  "anthropic-messages": {
    id: "msg_turnspec",
    type: "message",
    role: "assistant",
    model: "turnspec",
    content: [],
    stop_reason: "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0 },
  },
  "openai-chat-completions": {
    id: "chatcmpl-turnspec",
    object: "chat.completion",
    created: 0,
    model: "turnspec",
    choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  },
  "openai-responses": {
    id: "resp_turnspec",
    object: "response",
    created_at: 0,
    model: "turnspec",
    status: "completed",
    incomplete_details: null,
    output: [],
    usage: {
      input_tokens: 0,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 0,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    },
  },
  "gemini-generate-content": {
    candidates: [{ content: { role: "model", parts: [{ text: "" }] }, finishReason: "STOP" }],
    usageMetadata: { promptTokenCount: 0, candidatesTokenCount: 0, totalTokenCount: 0 },
  },
  "bedrock-converse": {
    output: { message: { role: "assistant", content: [{ text: "" }] } },
    stopReason: "end_turn",
    usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
  },
};
