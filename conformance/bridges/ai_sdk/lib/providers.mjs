// The five named bridges: which @ai-sdk package and factory builds the LanguageModelV3,
// under which base URL, and the name the package keys its providerOptions and
// providerMetadata with. A model is built per call with that call's `fetch` (capture.mjs),
// so nothing reaches the network and two open streams never share a transport.

import { ulid } from "./ids.mjs";

const KEY = "turnspec-offline"; // a dummy credential: the fetch never sends it anywhere

export const PROVIDERS = {
  anthropic: {
    pkg: "@ai-sdk/anthropic",
    provider: "anthropic",
    wireApi: "anthropic-messages",
    optionsKey: "anthropic",
    mintToolId: () => `toolu_${ulid()}`,
    make: (m, fetch, id) =>
      m.createAnthropic({ apiKey: KEY, baseURL: "https://api.anthropic.com/v1", fetch, headers: {} })(id),
  },
  "openai-chat": {
    pkg: "@ai-sdk/openai",
    provider: "openai",
    wireApi: "openai-chat-completions",
    optionsKey: "openai",
    mintToolId: () => `call_${ulid()}`,
    make: (m, fetch, id) => m.createOpenAI({ apiKey: KEY, baseURL: "https://api.openai.com/v1", fetch }).chat(id),
  },
  "openai-responses": {
    pkg: "@ai-sdk/openai",
    provider: "openai",
    wireApi: "openai-responses",
    optionsKey: "openai",
    mintToolId: () => `call_${ulid()}`,
    make: (m, fetch, id) =>
      m.createOpenAI({ apiKey: KEY, baseURL: "https://api.openai.com/v1", fetch }).responses(id),
  },
  gemini: {
    pkg: "@ai-sdk/google",
    provider: "gemini",
    wireApi: "gemini-generate-content",
    optionsKey: "google",
    mintToolId: () => `call_${ulid()}`,
    // the Gemini API streams as SSE (`alt=sse`, which the package asks for) or as one JSON
    // array; a recording of the latter is re-framed event by event (capture.mjs)
    jsonArrayStreams: true,
    make: (m, fetch, id) =>
      m.createGoogleGenerativeAI({
        apiKey: KEY,
        baseURL: "https://generativelanguage.googleapis.com/v1beta",
        fetch,
      })(id),
  },
  bedrock: {
    pkg: "@ai-sdk/amazon-bedrock",
    provider: "bedrock",
    wireApi: "bedrock-converse",
    optionsKey: "bedrock",
    mintToolId: () => `tooluse_${ulid()}`,
    // an API key (bearer token) instead of SigV4: the request is the same, unsigned
    make: (m, fetch, id) => m.createAmazonBedrock({ region: "us-east-1", apiKey: KEY, fetch })(id),
  },
};

/** The providerOptions/providerMetadata key of each canonical provider id (who issued a
 * message: `metadata.provider`), so a signature goes back under its issuer's name, as an
 * AI SDK application stores it. */
export const ISSUER_KEY = {
  anthropic: "anthropic",
  openai: "openai",
  gemini: "google",
  bedrock: "bedrock",
};
