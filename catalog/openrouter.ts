import type { ModelInfo } from "./schema.js";

/**
 * OpenRouter Chat Completions streaming (providers/openrouter/WIRE.md): one long
 * request, no job id, no resume, no server cancel; tools are managed upstream, so
 * `tools` is empty. OpenRouter reports its own charge (`usage.cost`), so these prices
 * only feed estimates. Prices were read from openrouter.ai model pages (undated
 * snapshots in the docs search index), not from the spec.
 */
/** Perplexity's Sonar models upstream of OpenRouter's Perplexity entries (the retirement: providers/perplexity/WIRE.md). */
const sonarSunset =
  "Perplexity retired Sonar chat completions on 2026-09-27; whether OpenRouter still serves this model is unconfirmed, so no shutdownAt. If OpenRouter answers that it has no endpoints, Sonde throws ModelUnavailableError naming the Agent API presets.";

export const openrouter: ModelInfo[] = [
  // $2/$8 per M and $5/K searches from openrouter.ai/perplexity/sonar-deep-research; $3/M reasoning from docs.perplexity.ai pricing (the page OpenRouter's pricing notes cite).
  {
    id: "openrouter:perplexity/sonar-deep-research",
    provider: "openrouter",
    model: "perplexity/sonar-deep-research",
    displayName: "Perplexity Sonar Deep Research (via OpenRouter)",
    capabilities: {
      streaming: true,
      background: false,
      resume: false,
      cancel: false,
      followUps: false,
      tools: [],
      pollOnly: false,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 2,
      outputPerM: 8,
      internalReasoningPerM: 3,
      perThousandSearches: 5,
      verified: true,
      source: "https://openrouter.ai/perplexity/sonar-deep-research",
      notes:
        "Input includes citation tokens (processed search results), billed at the input rate. The $3/M reasoning rate is from https://docs.perplexity.ai/getting-started/pricing. Aborting the stream does not stop Perplexity from finishing and billing (providers/openrouter/WIRE.md §5).",
    },
    lifecycle: {
      stage: "deprecated",
      replacement: "perplexity:medium",
      verified: false,
      notes: sonarSunset,
    },
  },
  // $3/$15 per M and $18 per 1,000 requests from openrouter.ai/perplexity/sonar-pro-search ("starting at" token rates).
  {
    id: "openrouter:perplexity/sonar-pro-search",
    provider: "openrouter",
    model: "perplexity/sonar-pro-search",
    displayName: "Perplexity Sonar Pro Search (via OpenRouter)",
    description: "Perplexity's multi-step Pro Search mode, available only through OpenRouter.",
    capabilities: {
      streaming: true,
      background: false,
      resume: false,
      cancel: false,
      followUps: false,
      tools: [],
      pollOnly: false,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 3,
      outputPerM: 15,
      perRequest: 0.018,
      verified: false,
      source: "https://openrouter.ai/perplexity/sonar-pro-search",
      notes:
        "OpenRouter lists the token rates as 'starting at', so they are a floor; the higher tiers are not published in what was read. The fee is per request ($18 per 1,000), not per search.",
    },
    lifecycle: {
      stage: "deprecated",
      replacement: "perplexity:medium",
      verified: false,
      notes: sonarSunset,
    },
  },
  // $10/$40 per M and $10/K web searches from openrouter.ai/openai/o3-deep-research; upstream OpenAI shut this model down 2026-07-23 (project's issue).
  {
    id: "openrouter:openai/o3-deep-research",
    provider: "openrouter",
    model: "openai/o3-deep-research",
    displayName: "OpenAI o3 Deep Research (via OpenRouter)",
    capabilities: {
      streaming: true,
      background: false,
      resume: false,
      cancel: false,
      followUps: false,
      tools: [],
      pollOnly: false,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 10,
      outputPerM: 40,
      perThousandSearches: 10,
      verified: true,
      source: "https://openrouter.ai/openai/o3-deep-research",
      notes:
        "Always uses web search, billed per search on top of tokens. Reasoning tokens are billed as output.",
    },
    // OpenAI's own endpoint for this model shut down 2026-07-23; whether OpenRouter still serves it (e.g. via Azure) is unconfirmed, so no shutdownAt.
    lifecycle: { stage: "deprecated" },
  },
  // $2/$8 per M and $10/K web searches from openrouter.ai/openai/o4-mini-deep-research; upstream OpenAI shut this model down 2026-07-23 (project's issue).
  {
    id: "openrouter:openai/o4-mini-deep-research",
    provider: "openrouter",
    model: "openai/o4-mini-deep-research",
    displayName: "OpenAI o4-mini Deep Research (via OpenRouter)",
    capabilities: {
      streaming: true,
      background: false,
      resume: false,
      cancel: false,
      followUps: false,
      tools: [],
      pollOnly: false,
    },
    limits: { maxDurationMs: 3_600_000 },
    pricing: {
      inputPerM: 2,
      outputPerM: 8,
      perThousandSearches: 10,
      verified: true,
      source: "https://openrouter.ai/openai/o4-mini-deep-research",
      notes:
        "Always uses web search, billed per search on top of tokens. Reasoning tokens are billed as output.",
    },
    // OpenAI's own endpoint for this model shut down 2026-07-23; whether OpenRouter still serves it (e.g. via Azure) is unconfirmed, so no shutdownAt.
    lifecycle: { stage: "deprecated" },
  },
];
