// Canonical messages, tools and options -> LanguageModelV3 call options (the prompt the
// AI SDK's providers take). One mapping for every provider: the V3 prompt is the SDK's own
// provider-independent form; what is provider-specific (a thinking signature, redacted
// thinking, Gemini's thoughtSignature) rides in `providerOptions` under the key of the
// provider that issued the message (`metadata.provider`), as an AI SDK application keeps
// it. What the V3 prompt has no form for is dropped with the §7.3 WARN line (or refused
// when marked critical) by the bridge, here; what the provider package drops or keeps is
// the package's own doing and is what the suite judges.

import { ISSUER_KEY } from "./providers.mjs";

const KNOWN_PROVIDERS = new Set(["anthropic", "openai", "ollama", "openrouter", "gemini", "bedrock"]);

/** The provider's model name (AdapterOptions.wire_model): a canonical `<provider>:` prefix
 * stripped when it names a provider, any other `:` kept (the id is opaque). */
export function wireModel(model) {
  const text = String(model ?? "");
  const at = text.indexOf(":");
  if (at > 0 && at < text.length - 1 && KNOWN_PROVIDERS.has(text.slice(0, at))) return text.slice(at + 1);
  return text;
}

const SIGNATURE_FIELD = { anthropic: "signature", bedrock: "signature", google: "thoughtSignature", openai: "reasoningEncryptedContent" };

function issuerKey(message) {
  const p = message?.metadata?.provider;
  return typeof p === "string" ? ISSUER_KEY[p] ?? p : null;
}

function parseDataUrl(text) {
  const m = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/is.exec(text);
  return m ? { mediaType: m[1].toLowerCase(), data: m[2] } : null;
}

/** A canonical image -> a V3 file part (null when its source has no V3 form). */
function filePart(block) {
  const { kind, data } = block.source ?? {};
  const mediaType = String(block.media_type ?? "").toLowerCase();
  if (kind === "base64") return { type: "file", mediaType, data: String(data) };
  if (kind === "url") {
    const inline = parseDataUrl(String(data));
    if (inline) return { type: "file", mediaType: inline.mediaType, data: inline.data };
    try {
      return { type: "file", mediaType, data: new URL(String(data)) };
    } catch {
      return null;
    }
  }
  return null;
}

export class PromptBuilder {
  /** `call` collects the call's log records and knows the adapter's name and critical key;
   * `ids` is the session's tool id map. */
  constructor(call, ids) {
    this.call = call;
    this.ids = ids;
    this.origins = new Map(); // V3 part -> the canonical block it renders {message, index, type}
  }

  /** `part`, noted as the rendering of block `index` of canonical message `m`. */
  from(m, index, part) {
    this.origins.set(part, { message: m, index, type: String(m.content[index]?.type) });
    return part;
  }

  drop(message, index, blockType, reason) {
    this.call.drop(message, index, blockType, reason);
  }

  build(messages, tools, options) {
    const names = new Map(); // canonical tool_use id -> tool name (a V3 tool result names its tool)
    for (const m of messages) {
      for (const b of m.content ?? []) if (b?.type === "tool_use") names.set(b.id, b.name);
    }
    const prompt = [];
    for (const m of messages) {
      const converted = this.message(m, names);
      const last = prompt[prompt.length - 1];
      if (converted?.role === "tool" && last?.role === "tool") {
        // canonical keeps one result per tool message; V3 keeps a step's parallel results
        // in one tool message (as the SDK's own prompt conversion writes them)
        last.content.push(...converted.content);
      } else if (Array.isArray(converted)) prompt.push(...converted);
      else if (converted) prompt.push(converted);
    }
    return { prompt, ...this.settings(tools, options) };
  }

  message(m, names) {
    const blocks = Array.isArray(m.content) ? m.content : [];
    if (m.role === "system") return this.system(m, blocks);
    if (m.role === "tool") return this.toolMessage(m, blocks, names);
    const content = m.role === "assistant" ? this.assistant(m, blocks) : this.user(m, blocks);
    if (!content.length) return null; // every block dropped (and logged): no empty message
    return { role: m.role === "assistant" ? "assistant" : "user", content };
  }

  system(m, blocks) {
    const out = [];
    blocks.forEach((b, i) => {
      if (b?.type === "text") out.push({ role: "system", content: String(b.text) });
      else this.drop(m, i, String(b?.type), "a V3 system message is one string: it carries text only");
    });
    // a V3 system message is one string: each text block of a canonical system message is
    // one, so a provider whose system prompt is a list of blocks (Anthropic, Bedrock,
    // Gemini's parts) gets the blocks as they were
    return out;
  }

  user(m, blocks) {
    const out = [];
    blocks.forEach((b, i) => {
      if (b?.type === "text") out.push(this.from(m, i, { type: "text", text: String(b.text) }));
      else if (b?.type === "image") {
        const part = filePart(b);
        if (part) out.push(this.from(m, i, part));
        else this.drop(m, i, "image", `a ${b.source?.kind} image source has no V3 file data (adapters do no I/O)`);
      } else this.unknown(m, i, b);
    });
    return out;
  }

  unknown(m, i, b) {
    const t = String(b?.type);
    const why = t.includes(":")
      ? "a block canonical keeps as a namespaced block (§10.3) has no V3 prompt part (its raw is its adapter's own)"
      : `no V3 prompt part for a ${t} block in a ${m.role} message`;
    this.drop(m, i, t, why);
  }

  assistant(m, blocks) {
    const key = issuerKey(m);
    const out = [];
    let pending = null; // Gemini: a signature-only thinking block signs the part after it
    const withSignature = (part) => {
      if (pending !== null) {
        part.providerOptions = { google: { thoughtSignature: pending } };
        pending = null;
      }
      return part;
    };
    blocks.forEach((b, i) => {
      const t = b?.type;
      if (t === "text") out.push(this.from(m, i, withSignature({ type: "text", text: String(b.text) })));
      else if (t === "tool_use") {
        const id = this.ids.providerFor(String(b.id));
        const part = { type: "tool-call", toolCallId: id, toolName: String(b.name), input: b.input ?? {} };
        out.push(this.from(m, i, withSignature(part)));
      } else if (t === "thinking") {
        const sig = typeof b.signature === "string" && b.signature ? b.signature : null;
        if (key === "google" && !b.text && sig && i + 1 < blocks.length && pending === null) {
          pending = sig;
          return;
        }
        const part = { type: "reasoning", text: String(b.text ?? "") };
        if (sig && key) part.providerOptions = { [key]: { [SIGNATURE_FIELD[key] ?? "signature"]: sig } };
        out.push(this.from(m, i, part));
      } else if (t === "redacted_thinking") {
        const part = { type: "reasoning", text: "" };
        if (key) part.providerOptions = { [key]: { redactedData: String(b.data ?? "") } };
        out.push(this.from(m, i, part));
      } else this.unknown(m, i, b);
    });
    if (pending !== null) {
      out.push({ type: "reasoning", text: "", providerOptions: { google: { thoughtSignature: pending } } });
    }
    return out;
  }

  toolMessage(m, blocks, names) {
    const content = [];
    blocks.forEach((b, i) => {
      if (b?.type !== "tool_result") {
        this.drop(m, i, String(b?.type), "a tool message carries tool_result blocks only");
        return;
      }
      content.push(this.from(m, i, {
        type: "tool-result",
        toolCallId: this.ids.providerFor(String(b.tool_use_id)),
        // a V3 tool result names its tool; canonical keeps the name on the tool_use only
        toolName: names.get(b.tool_use_id) ?? "",
        output: this.output(m, i, b),
      }));
    });
    return content.length ? { role: "tool", content } : null;
  }

  output(m, i, b) {
    const inner = Array.isArray(b.content) ? b.content : [];
    const error = b.is_error === true;
    if (inner.every((x) => x?.type === "text")) {
      const text = inner.map((x) => String(x.text)).join("");
      if (inner.length <= 1) return { type: error ? "error-text" : "text", value: text };
      if (error) return { type: "error-text", value: text };
      return { type: "content", value: inner.map((x) => ({ type: "text", text: String(x.text) })) };
    }
    const value = [];
    for (const x of inner) {
      if (x?.type === "text") value.push({ type: "text", text: String(x.text) });
      else if (x?.type === "image" && x.source?.kind === "base64") {
        value.push({ type: "image-data", data: String(x.source.data), mediaType: String(x.media_type) });
      } else if (x?.type === "image" && x.source?.kind === "url") {
        value.push({ type: "image-url", url: String(x.source.data) });
      } else this.drop(m, i, String(x?.type), "no V3 tool result content part for it");
    }
    if (error) {
      this.call.warnOption(
        "tool_result.is_error",
        "a V3 tool result with images (`content` output) has no error flag: the result goes as content",
      );
    }
    return { type: "content", value };
  }

  settings(tools, options) {
    const out = {};
    const functions = (tools ?? []).map((t) => ({
      type: "function",
      name: String(t.name),
      ...(t.description != null ? { description: String(t.description) } : {}),
      inputSchema: t.input_schema ?? { type: "object", properties: {} },
    }));
    if (functions.length) out.tools = functions;
    if (options.max_output_tokens != null) out.maxOutputTokens = options.max_output_tokens;
    if (options.temperature != null) out.temperature = options.temperature;
    if (options.stop_sequences?.length) out.stopSequences = [...options.stop_sequences];
    if (options.output_schema != null) {
      this.call.warnOption("output_schema", "the bridge does not ask for structured output (declared false)");
    }
    return out;
  }
}
