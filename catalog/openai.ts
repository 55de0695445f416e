import type { ModelInfo } from "./schema.js";

/**
 * OpenAI Responses API research models (wire format: providers/openai/WIRE.md).
 * No OpenAI price appears in that spec, and no OpenAI-owned pricing page was read,
 * so every pricing block here is `verified: false`.
 */
export const openai: ModelInfo[] = [
  // Capabilities, tools and prices from the project's issue; $30/$180 matches third-party listings (docs.apiyi.com, apidog.com), not an OpenAI page.
  // Not in providers/openai/WIRE.md. The notes below say what a user needs of that (they reach estimate() and the CLI); where the figures come from stays here.
  {
    id: "openai:gpt-5.5-pro",
    provider: "openai",
    model: "gpt-5.5-pro",
    displayName: "GPT-5.5 Pro",
    description:
      "Durable background research on the Responses API; progress by polling, report delivered whole.",
    capabilities: {
      streaming: false,
      background: true,
      resume: false,
      cancel: true,
      followUps: true,
      tools: ["web_search", "file_search", "mcp", "code_interpreter"],
      pollOnly: true,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 30,
      outputPerM: 180,
      perThousandSearches: 10,
      verified: false,
      notes:
        "Not confirmed on an OpenAI page. Reasoning tokens bill as output. Searches are counted from web_search_call items. A higher input rate above ~272k prompt tokens is not modelled; cached tokens are priced as input.",
    },
    lifecycle: { stage: "ga" },
  },
  // Model ids and dated snapshots from providers/openai/WIRE.md §2; lifecycle and prices from the project's issue (OpenRouter lists the same $10/$40 and $10/K web search).
  // The $2.50 cached-input rate (input_tokens_details.cached_tokens) follows OpenAI's o3 pricing; open_page billing: WIRE.md §3.
  // Shutdown 2026-07-23 for both deep-research models and their snapshots, announced 2026-04-22 on OpenAI's
  // deprecations page (read through spybara.com's history of it), whose substitute is "5.4-Pro"; the catalog
  // points to gpt-5.5-pro, the Pro model it carries, rather than list gpt-5.4-pro as well.
  {
    id: "openai:o3-deep-research",
    provider: "openai",
    model: "o3-deep-research",
    displayName: "o3 Deep Research",
    capabilities: {
      streaming: true,
      background: true,
      resume: true,
      cancel: true,
      followUps: false,
      tools: ["web_search", "file_search", "mcp", "code_interpreter"],
      pollOnly: false,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 10,
      cachedInputPerM: 2.5,
      outputPerM: 40,
      perThousandSearches: 10,
      verified: false,
      notes:
        "Not confirmed on an OpenAI page; the cached-input rate is o3's. Reasoning tokens bill as output. Whether open_page actions bill like searches is unconfirmed.",
    },
    lifecycle: { stage: "retired", shutdownAt: "2026-07-23T00:00:00Z", replacement: "openai:gpt-5.5-pro" },
    aliases: ["o3-deep-research-2025-06-26"],
  },
  // Model ids and dated snapshots from providers/openai/WIRE.md §2; lifecycle and prices from the project's issue (OpenRouter lists the same $2/$8 and $10/K web search).
  // OpenAI's model page (developers.openai.com/api/docs/models/o4-mini-deep-research) lists $2 input, $0.50 cached input and $8 output per M.
  {
    id: "openai:o4-mini-deep-research",
    provider: "openai",
    model: "o4-mini-deep-research",
    displayName: "o4-mini Deep Research",
    capabilities: {
      streaming: true,
      background: true,
      resume: true,
      cancel: true,
      followUps: false,
      tools: ["web_search", "file_search", "mcp", "code_interpreter"],
      pollOnly: false,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 2,
      cachedInputPerM: 0.5,
      outputPerM: 8,
      perThousandSearches: 10,
      verified: false,
      notes:
        "Token rates as OpenAI's model page lists them; the search price is not confirmed there. Reasoning tokens bill as output. Whether open_page actions bill like searches is unconfirmed.",
    },
    lifecycle: { stage: "retired", shutdownAt: "2026-07-23T00:00:00Z", replacement: "openai:gpt-5.5-pro" },
    aliases: ["o4-mini-deep-research-2025-06-26"],
  },
];
