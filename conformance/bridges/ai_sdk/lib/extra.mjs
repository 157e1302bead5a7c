// AdapterOptions.extra: provider-specific top-level request fields a caller asks for
// (contract §3.2), read back from a recorded request by the API's reference adapter. The
// V3 call options carry some of them in their own terms (tool choice) or as the provider
// package's documented providerOptions; each is translated here, and any other field is
// not sent, with the option's WARN line (the V3 call options take no raw body fields).

const EXTRA = {
  anthropic: {
    thinking: (v, o) => {
      if (v?.type === "enabled") return provider(o, "anthropic", { thinking: { type: "enabled", budgetTokens: v.budget_tokens } });
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
  },
  "openai-responses": {
    tool_choice: (v, o) => choice(o, openaiChoice(v)),
    reasoning: (v, o) => provider(o, "openai", { ...(v?.effort ? { reasoningEffort: v.effort } : {}), ...(v?.summary ? { reasoningSummary: v.summary } : {}) }),
    parallel_tool_calls: (v, o) => provider(o, "openai", { parallelToolCalls: v }),
    store: (v, o) => provider(o, "openai", { store: v }),
    include: (v, o) => provider(o, "openai", { include: v }),
    previous_response_id: (v, o) => provider(o, "openai", { previousResponseId: v }),
    instructions: (v, o) => provider(o, "openai", { instructions: v }),
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

/** `extra`'s fields into the call options `o`; a WARN line for each one not sent. */
export function applyExtra(api, o, extra, call) {
  const table = EXTRA[api] ?? {};
  for (const [k, v] of Object.entries(extra)) {
    const put = table[k];
    if (!put || put(v, o) === false) {
      call.warnOption(k, "the V3 call options take no raw request fields, and the bridge has no translation for this one");
    }
  }
}
