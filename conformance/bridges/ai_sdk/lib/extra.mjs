// AdapterOptions.extra: provider-specific top-level request fields a caller asks for
// (contract §3.2), read back from a recorded request by the API's reference adapter. The
// V3 call options carry some of them in their own terms (tool choice) or as the provider
// package's documented providerOptions; each is translated here, and any other field is
// not sent, with the option's WARN line (the V3 call options take no raw body fields).

const EXTRA = {
  anthropic: {
    thinking: (v, o) => {
      if (v?.type === "enabled") {
        // the package sends max_tokens = maxOutputTokens + budgetTokens (its maxOutputTokens
        // leaves the thinking budget out); canonical max_output_tokens is the API's max_tokens
        if (o.maxOutputTokens != null && v.budget_tokens != null && o.maxOutputTokens > v.budget_tokens) {
          o.maxOutputTokens -= v.budget_tokens;
        }
        return provider(o, "anthropic", { thinking: { type: "enabled", budgetTokens: v.budget_tokens } });
      }
      if (v?.type === "disabled") return provider(o, "anthropic", { thinking: { type: "disabled" } });
      return false;
    },
    tool_choice: (v, o) => choice(o, v?.type === "any" ? { type: "required" } : v?.type === "tool" ? { type: "tool", toolName: v.name } : v?.type === "auto" || v?.type === "none" ? { type: v.type } : null),
  },
  "openai-chat": {
    tool_choice: (v, o) => choice(o, openaiChoice(v)),
    reasoning_effort: (v, o) => provider(o, "openai", { reasoningEffort: v }),
    parallel_tool_calls: (v, o) => provider(o, "openai", { parallelToolCalls: v }),
    user: (v, o) => provider(o, "openai", { user: v }),
    store: (v, o) => provider(o, "openai", { store: v }),
    prompt_cache_key: (v, o) => provider(o, "openai", { promptCacheKey: v }),
    service_tier: (v, o) => provider(o, "openai", { serviceTier: v }),
    metadata: (v, o) => provider(o, "openai", { metadata: v }),
    top_p: (v, o) => ((o.topP = v), true),
    seed: (v, o) => ((o.seed = v), true),
  },
  "openai-responses": {
    tool_choice: (v, o) => choice(o, openaiChoice(v)),
    reasoning: (v, o) => provider(o, "openai", { ...(v?.effort ? { reasoningEffort: v.effort } : {}), ...(v?.summary ? { reasoningSummary: v.summary } : {}) }),
    parallel_tool_calls: (v, o) => provider(o, "openai", { parallelToolCalls: v }),
    store: (v, o) => provider(o, "openai", { store: v }),
    include: (v, o) => provider(o, "openai", { include: v }),
    previous_response_id: (v, o) => provider(o, "openai", { previousResponseId: v }),
    instructions: (v, o) => provider(o, "openai", { instructions: v }),
    prompt_cache_key: (v, o) => provider(o, "openai", { promptCacheKey: v }),
    service_tier: (v, o) => provider(o, "openai", { serviceTier: v }),
    metadata: (v, o) => provider(o, "openai", { metadata: v }),
    truncation: (v, o) => provider(o, "openai", { truncation: v }),
    user: (v, o) => provider(o, "openai", { user: v }),
    top_p: (v, o) => ((o.topP = v), true),
  },
  gemini: {
    generationConfig: (v, o) => {
      const known = { thinkingConfig: "thinkingConfig", responseModalities: "responseModalities" };
      const rest = Object.keys(v ?? {}).filter((k) => !(k in known));
      if (rest.length) return false;
      return provider(o, "google", Object.fromEntries(Object.entries(v).map(([k, x]) => [known[k], x])));
    },
    safetySettings: (v, o) => provider(o, "google", { safetySettings: v }),
    cachedContent: (v, o) => provider(o, "google", { cachedContent: v }),
    toolConfig: (v, o) => {
      const c = v?.functionCallingConfig;
      const names = c?.allowedFunctionNames;
      if (Object.keys(v ?? {}).some((k) => k !== "functionCallingConfig")) return false;
      if (c?.mode === "ANY" && Array.isArray(names) && names.length === 1) return choice(o, { type: "tool", toolName: names[0] });
      if (Array.isArray(names)) return false;
      return choice(o, { AUTO: { type: "auto" }, ANY: { type: "required" }, NONE: { type: "none" } }[c?.mode] ?? null);
    },
  },
  bedrock: {
    toolConfig: () => false,
    inferenceConfig: (v, o) => {
      const rest = Object.keys(v ?? {}).filter((k) => k !== "topP");
      if (rest.length) return false;
      if (v.topP != null) o.topP = v.topP;
      return true;
    },
    additionalModelRequestFields: (v, o) => provider(o, "bedrock", { additionalModelRequestFields: v }),
  },
};

function openaiChoice(v) {
  if (v === "auto" || v === "none" || v === "required") return { type: v };
  const name = v?.function?.name ?? v?.name;
  return v?.type === "function" && typeof name === "string" ? { type: "tool", toolName: name } : null;
}

function provider(o, key, values) {
  o.providerOptions = { ...o.providerOptions, [key]: { ...o.providerOptions?.[key], ...values } };
  return true;
}

function choice(o, value) {
  if (value === null) return false;
  o.toolChoice = value;
  return true;
}

/** The output cap of Chat Completions: the API reference deprecates `max_tokens` in favor
 * of `max_completion_tokens`, which the package sends for V3 `maxOutputTokens` only for a
 * model it lists as a reasoning model; its `maxCompletionTokens` option sends it for any. */
function chatOutputCap(o) {
  if (o.maxOutputTokens == null) return;
  provider(o, "openai", { maxCompletionTokens: o.maxOutputTokens });
  delete o.maxOutputTokens;
}

/** `extra`'s fields into the call options `o`; a WARN line for each one not sent. */
export function applyExtra(api, o, extra, call) {
  if (api === "openai-chat") chatOutputCap(o);
  const table = EXTRA[api] ?? {};
  for (const [k, v] of Object.entries(extra)) {
    const put = table[k];
    if (!put || put(v, o) === false) {
      call.warnOption(k, "the V3 call options take no raw request fields, and the bridge has no translation for this one");
    }
  }
}

const camel = (k) => k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
const snake = (k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function camelKeys(value) {
  if (Array.isArray(value)) return value.map(camelKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [camel(k), camelKeys(v)]));
}

/** A provider-native tool as the wire has it (AdapterOptions.provider_tools) -> the V3
 * provider tool the package defines for it: its id is `<package>.<the wire's type>` and
 * its args are the wire's fields in the package's camelCase (Anthropic's and OpenAI's);
 * Gemini's `{googleSearch: {...}}` is `google.google_search` with the object as args.
 * null when the wire object has no such shape. */
const PROVIDER_TOOL = {
  anthropic: (t) => {
    const { type, name, ...args } = t;
    return typeof type === "string" ? { type: "provider", id: `anthropic.${type}`, name: String(name ?? type), args: camelKeys(args) } : null;
  },
  "openai-responses": (t) => {
    const { type, ...args } = t;
    return typeof type === "string" ? { type: "provider", id: `openai.${type}`, name: type, args: camelKeys(args) } : null;
  },
  gemini: (t) => {
    const keys = Object.keys(t);
    if (keys.length !== 1 || (t[keys[0]] !== null && typeof t[keys[0]] !== "object")) return null;
    const id = snake(keys[0]);
    return { type: "provider", id: `google.${id}`, name: id, args: t[keys[0]] ?? {} };
  },
};

/** `options.provider_tools` appended to the call's tools; a WARN line for one with no V3 form. */
export function providerTools(api, o, tools, call) {
  const map = PROVIDER_TOOL[api];
  for (const t of tools) {
    const v3 = map && t !== null && typeof t === "object" ? map(t) : null;
    if (v3) o.tools = [...(o.tools ?? []), v3];
    else call.warnOption("provider_tools", "the bridge has no AI SDK provider tool for this wire tool definition");
  }
}
